// SPDX-License-Identifier: Apache-2.0
// quota/detail/stale_mark.hpp — derived state recomputed before its next
// read instead of at every change (docs/performance.md).
#pragma once

#include <atomic>
#include <mutex>

namespace quota::detail {

/// A "recompute before the next read" mark: copyable, and safe for const
/// readers on several threads (the first one to read after a change
/// recomputes, under a mutex; the others wait for it).
class stale_mark {
 public:
  stale_mark() = default;
  stale_mark(const stale_mark& o) noexcept : stale_(o.stale_.load(std::memory_order_acquire)) {}
  stale_mark& operator=(const stale_mark& o) noexcept {
    stale_.store(o.stale_.load(std::memory_order_acquire), std::memory_order_release);
    return *this;
  }
  ~stale_mark() = default;
  void set() noexcept { stale_.store(true, std::memory_order_release); }
  /// Runs f once if marked, then clears the mark (kept when f throws).
  template <class F>
  void refresh(F&& f) const {
    if (!stale_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(m_);
    if (!stale_.load(std::memory_order_relaxed)) return;
    f();
    stale_.store(false, std::memory_order_release);
  }

 private:
  mutable std::atomic<bool> stale_{false};
  mutable std::mutex m_;
};

}  // namespace quota::detail
