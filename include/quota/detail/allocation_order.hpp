// SPDX-License-Identifier: Apache-2.0
// Allocation order of running tasks, shared by the Volcano queue models.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace quota::detail {

/// The id of an entry of an allocation order that is the id itself.
struct order_id {
  const std::string& operator()(const std::string& s) const noexcept { return s; }
};

/// `order` lists running tasks in allocation order (`id(entry)` is the task
/// id); a released task's id is cleared to "" (a hole) and `index` (id ->
/// record with a `seq` position) has already forgotten it. Counts the hole,
/// and once holes are half of the order drops them all and renumbers the
/// survivors' `seq`, so walking the running tasks stays proportional to them.
/// Never throws.
template <class Entry, class Index, class Id = order_id>
void count_released(std::vector<Entry>& order, std::size_t& holes, Index& index, Id id = {}) noexcept {
  ++holes;
  if (holes <= 32 || holes * 2 <= order.size()) return;
  std::size_t w = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    if (id(order[r]).empty()) continue;
    if (w != r) order[w] = std::move(order[r]);
    index.find(id(order[w]))->second.seq = w;
    ++w;
  }
  order.resize(w);
  holes = 0;
}

}  // namespace quota::detail
