// SPDX-License-Identifier: Apache-2.0
// quota/detail/reserve.hpp — room for more elements in a vector, growing
// geometrically, so that the changes after it cannot throw
// (docs/architecture.md, errors).
#pragma once

#include <algorithm>
#include <cstddef>

namespace quota::detail {

/// Makes room for `extra` more elements in `v` (a std::vector or alike). A
/// plain reserve(size() + extra) allocates exactly that much each time, which
/// makes one-at-a-time growth quadratic; this at least doubles the capacity.
template <class V>
void reserve_more(V& v, std::size_t extra) {
  const std::size_t need = v.size() + extra;
  if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
}

}  // namespace quota::detail
