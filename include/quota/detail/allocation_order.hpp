// Allocation order of running tasks, shared by the Volcano queue models.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace quota::detail {

/// `order` lists task ids in allocation order; a released task's entry is
/// cleared to "" (a hole) and `index` (id -> record with a `seq` position)
/// has already forgotten it. Counts the hole, and once holes are half of the
/// order drops them all and renumbers the survivors' `seq`, so walking the
/// running tasks stays proportional to them. Never throws.
template <class Index>
void count_released(std::vector<std::string>& order, std::size_t& holes, Index& index) noexcept {
  ++holes;
  if (holes <= 32 || holes * 2 <= order.size()) return;
  std::size_t w = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    if (order[r].empty()) continue;
    if (w != r) order[w] = std::move(order[r]);
    index.find(order[w])->second.seq = w;
    ++w;
  }
  order.resize(w);
  holes = 0;
}

}  // namespace quota::detail
