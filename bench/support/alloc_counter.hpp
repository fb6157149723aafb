// SPDX-License-Identifier: Apache-2.0
// Counts heap allocations in a benchmark program: include in exactly one
// translation unit (each bench is one). Report with
//   state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

#include <benchmark/benchmark.h>

namespace quota_bench {
inline std::atomic<long long> allocations{0};
inline long long allocation_count() noexcept { return allocations.load(std::memory_order_relaxed); }
/// Allocations per iteration since `before` (call after the timed loop).
inline double allocs_per_iteration(const benchmark::State& state, long long before) {
  const auto n = static_cast<double>(allocation_count() - before);
  return state.iterations() ? n / static_cast<double>(state.iterations()) : 0.0;
}
}  // namespace quota_bench

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // replacement pair: malloc/free on purpose
#endif

void* operator new(std::size_t n) {
  quota_bench::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  quota_bench::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
