// SPDX-License-Identifier: Apache-2.0
// Extra policies (docs/extra-policies.md): one admission check of each with
// 10,000 tenants, each tenant already running a few jobs. Checks rotate over
// the tenants so the hash lookups are not all cache-hot; the counter
// allocs/iter must be 0 (a check that allows allocates nothing).
#include <quota/budget.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/running_limits.hpp>
#include <quota/sharing_pools.hpp>

#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;

namespace {

constexpr int tenants = 10'000;
constexpr std::int64_t H = budget_policy::hour_ms;

std::string name(int i) {
  return "team-" + std::to_string(i);
}

std::vector<job> probe_jobs(const char* cls) {
  std::vector<job> v;
  for (int t = 0; t < tenants; t += 7) {  // a spread of tenants
    job j;
    j.id = "probe-" + std::to_string(t);
    j.queue = j.ns = j.user = name(t);
    j.priority_class = cls;
    j.duration_ms = 2 * H;
    j.request.set(resources::nvidia_gpu, 1);
    v.push_back(std::move(j));
  }
  return v;
}

template <class P>
void run_checks(benchmark::State& state, const P& p, const std::vector<job>& probes) {
  std::size_t k = 0;
  for (const auto& j : probes) benchmark::DoNotOptimize(p.check(j));  // warm-up
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.check(probes[k]));
    if (++k == probes.size()) k = 0;
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}

void fill(auto& p, const char* cls) {
  for (int t = 0; t < tenants; ++t)
    for (int i = 0; i < 3; ++i) {
      job j;
      j.id = name(t) + "/" + std::to_string(i);
      j.queue = j.ns = j.user = name(t);
      j.priority_class = cls;
      j.duration_ms = 4 * H;
      j.request.set(resources::nvidia_gpu, 1);
      p.commit(j);
    }
}

void BM_budget_check_10000_tenants(benchmark::State& state) {
  budget_policy b;
  for (int t = 0; t < tenants; ++t) b.set_budget(name(t), 500 * H);
  fill(b, "");
  b.advance_to(H);
  run_checks(state, b, probe_jobs(""));
}
BENCHMARK(BM_budget_check_10000_tenants);

void BM_priority_class_check_10000_tenants(benchmark::State& state) {
  priority_class_quota_policy pq;
  limit_vector max;
  max.set(resources::nvidia_gpu, 8);
  resource_vector min;
  min.set(resources::nvidia_gpu, 2);
  for (int t = 0; t < tenants; ++t) {
    pq.set(name(t), "high", min, max);
    pq.set(name(t), "low", {}, max);
  }
  fill(pq, "high");
  run_checks(state, pq, probe_jobs("high"));
}
BENCHMARK(BM_priority_class_check_10000_tenants);

void BM_sharing_pools_check_10000_tenants(benchmark::State& state) {
  // 100 pools of 100 quotas; probes borrow inside their pool
  std::vector<sharing_pool_spec> pools;
  for (int p = 0; p < 100; ++p) {
    sharing_pool_spec s{"pool-" + std::to_string(p), {}, true, true};
    for (int q = 0; q < 100; ++q) {
      pool_quota_spec qs;
      qs.name = name(p * 100 + q);
      qs.namespaces = {qs.name};
      qs.min.set(resources::nvidia_gpu, 4);
      qs.max.set(resources::nvidia_gpu, 16);
      s.quotas.push_back(std::move(qs));
    }
    pools.push_back(std::move(s));
  }
  sharing_pools_policy sp(std::move(pools));
  fill(sp, "");
  run_checks(state, sp, probe_jobs(""));
}
BENCHMARK(BM_sharing_pools_check_10000_tenants);

void BM_running_limits_check_10000_tenants(benchmark::State& state) {
  running_limits_policy rl;
  for (int t = 0; t < tenants; ++t) rl.set_limit(running_limits_policy::scope::queue, name(t), 10);
  rl.set_default(running_limits_policy::scope::user, 10);
  fill(rl, "");
  run_checks(state, rl, probe_jobs(""));
}
BENCHMARK(BM_running_limits_check_10000_tenants);

}  // namespace
BENCHMARK_MAIN();
