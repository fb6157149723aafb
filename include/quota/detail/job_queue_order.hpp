// SPDX-License-Identifier: Apache-2.0
// quota/detail/job_queue_order.hpp — the pending order of a model with one queue per job.queue.
#pragma once

#include <compare>
#include <string_view>

#include <quota/capabilities.hpp>

namespace quota::detail {

/// The order_aware half a model with a queue per job.queue shares: a job waits
/// in its own queue, where default_pending_order ranks it. The model adds
/// compare_heads (its queue order).
struct job_queue_order {
  [[nodiscard]] std::string_view pending_queue(const job& j) const noexcept { return j.queue; }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const noexcept {
    return default_pending_order(a, b);
  }
};

}  // namespace quota::detail
