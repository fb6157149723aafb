// SPDX-License-Identifier: Apache-2.0
// quota/detail/yunikorn_limits_mutex.hpp — the lock of a yunikorn_limits_model (quota/yunikorn_limits.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace quota::detail {

/// The manager's mutex: one atomic word, taken with one compare-exchange and
/// released with one plain store (no read-modify-write), which is what the hot
/// path pays per call. A waiter never sleeps on the word (a plain-store unlock
/// could not know it has to wake it): it spins briefly, then yields, then
/// sleeps in short rounds that grow to at most a millisecond. Every critical
/// section of the manager is short (the hot path is tens of nanoseconds; a
/// reload compiles its configuration before it takes the lock), so waiters
/// rarely get past the spin.
class limits_mutex {
 public:
  explicit limits_mutex(bool on = true) noexcept : on_(on) {}
  [[nodiscard]] bool enabled() const noexcept { return on_; }
  void lock() noexcept {
    if (!try_lock()) lock_slow();
  }
  bool try_lock() noexcept {
    if (!on_) return true;
    std::uint32_t c = 0;
    return s_.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    if (on_) s_.store(0, std::memory_order_release);
  }

 private:
  [[gnu::noinline]] void lock_slow() noexcept {
    for (std::uint32_t round = 0;; ++round) {
      if (s_.load(std::memory_order_relaxed) == 0 && try_lock()) return;
      if (round < 64) {
        pause();
      } else if (round < 96) {
        std::this_thread::yield();
      } else {
        const std::uint32_t shift = std::min<std::uint32_t>(round - 96, 10);  // 1 µs .. ~1 ms
        std::this_thread::sleep_for(std::chrono::microseconds(1u << shift));
      }
    }
  }
  static void pause() noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<std::uint32_t> s_{0};  // 0 free, 1 locked
  bool on_;                          // false: the host serialises every call (yunikorn_limits_locking::host)
};

}  // namespace quota::detail
