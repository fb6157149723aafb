// SPDX-License-Identifier: Apache-2.0
// quota/detail/priority_counts.hpp — the priorities of a set of running jobs
// with their counts, so a victim search skips a queue with nothing below the
// preemptor (docs/performance.md#quota-sim-throughput).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <boost/container/small_vector.hpp>

#include <quota/detail/reserve.hpp>

namespace quota::detail {

/// Distinct priorities ascending, each with how many jobs have it. A set of
/// jobs has few distinct priorities (priority classes): add and remove walk
/// a short vector and allocate nothing once it has held as many.
class priority_counts {
 public:
  /// Room for one more priority: call before the change that add() completes.
  void reserve_one() { reserve_more(counts_, 1); }
  /// Counts one more job of priority p (needs reserve_one() for a new p).
  void add(std::int32_t p) noexcept {
    const auto it = find(p);
    if (it != counts_.end() && it->first == p)
      ++it->second;
    else
      counts_.insert(it, {p, 1});  // within the reserved capacity
  }
  /// Counts one job of priority p less (nothing when none has p).
  void remove(std::int32_t p) noexcept {
    const auto it = find(p);
    if (it == counts_.end() || it->first != p) return;
    if (--it->second == 0) counts_.erase(it);
  }
  /// Whether some job counted has a priority below p.
  [[nodiscard]] bool any_below(std::int32_t p) const noexcept { return !counts_.empty() && counts_.front().first < p; }

 private:
  using list = boost::container::small_vector<std::pair<std::int32_t, std::size_t>, 4>;
  list::iterator find(std::int32_t p) noexcept {
    return std::lower_bound(counts_.begin(), counts_.end(), p,
                            [](const auto& e, std::int32_t v) { return e.first < v; });
  }
  list counts_;
};

}  // namespace quota::detail
