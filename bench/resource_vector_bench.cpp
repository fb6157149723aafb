// SPDX-License-Identifier: Apache-2.0
// Core figures: vector fits/add/compare for 4 and 32 dimensions, quantity parse.
#include <benchmark/benchmark.h>

#include <quota/quantity.hpp>
#include <quota/resource_vector.hpp>

#include "alloc_counter.hpp"

namespace {
using namespace quota;

template <class V>
V make(int dims, std::int64_t base) {
  V v;
  for (int i = 0; i < dims; ++i) v.set(static_cast<resource_id>(i * 2), base + i);
  return v;
}

void bm_fits_dynamic(benchmark::State& state) {
  const int dims = static_cast<int>(state.range(0));
  const auto req = make<resource_vector>(dims, 10);
  const auto lim = make<limit_vector>(dims, 1000);
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    benchmark::DoNotOptimize(fits(req, lim));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_fits_dynamic)->Arg(4)->Arg(32);

void bm_fits_with_dynamic(benchmark::State& state) {
  const int dims = static_cast<int>(state.range(0));
  const auto used = make<resource_vector>(dims, 100);
  const auto req = make<resource_vector>(dims, 10);
  const auto lim = make<limit_vector>(dims, 1000);
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(fits_with(used, req, lim));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_fits_with_dynamic)->Arg(4)->Arg(32);

void bm_fits_fixed4(benchmark::State& state) {
  using vec = fixed_resource_vector<"cpu", "memory", "nvidia.com/gpu", "pods">;
  using lim = fixed_limit_vector<"cpu", "memory", "nvidia.com/gpu", "pods">;
  const vec req{{0, 1000}, {1, 1 << 20}, {2, 1}, {3, 1}};
  const lim l{{0, 4000}, {1, 1 << 30}, {2, 8}, {3, 110}};
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(fits(req, l));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_fits_fixed4);

void bm_add_sub_in_place(benchmark::State& state) {
  const int dims = static_cast<int>(state.range(0));
  auto acc = make<resource_vector>(dims, 1'000'000);
  const auto d = make<resource_vector>(dims, 7);
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    acc.add_in_place(d);
    acc.sub_in_place(d);
    benchmark::DoNotOptimize(acc);
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_add_sub_in_place)->Arg(4)->Arg(32);

void bm_less_equal(benchmark::State& state) {
  const int dims = static_cast<int>(state.range(0));
  const auto a = make<resource_vector>(dims, 10);
  const auto b = make<resource_vector>(dims, 20);
  for (auto _ : state) benchmark::DoNotOptimize(less_equal(a, b));
}
BENCHMARK(bm_less_equal)->Arg(4)->Arg(32);

void bm_quantity_parse(benchmark::State& state) {
  static const char* inputs[] = {"100m", "1.5Gi", "500M", "2", "1e3", "0.25"};
  std::size_t i = 0;
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    quantity q;
    benchmark::DoNotOptimize(quantity::try_parse(inputs[i++ % 6], q));
    std::int64_t out = 0;
    benchmark::DoNotOptimize(q.to_base_into(3, out));
    benchmark::DoNotOptimize(out);
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_quantity_parse);

void bm_parse_amount(benchmark::State& state) {
  const auto before = quota_bench::allocation_count();
  std::string_view text = "1536Mi";
  for (auto _ : state) {
    benchmark::DoNotOptimize(text);
    benchmark::DoNotOptimize(parse_amount(text, 0));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_parse_amount);
}  // namespace

BENCHMARK_MAIN();
