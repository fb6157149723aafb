// SPDX-License-Identifier: Apache-2.0
// Elastic quota workloads: admission with 1,000 quotas, relabel after one pod
// start/stop in a quota of 10,000 running pods, full relabel of 100,000 pods
// over 1,000 quotas, victim selection among 10,000 running pods.
#include <quota/elastic_quota.hpp>

#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;

namespace {

constexpr resource_id gm = resources::gpu_memory;

std::string ns_name(int i) {
  std::string s("ns-");
  s.append(std::to_string(i));
  return s;
}
std::string pod_name(int q, int i) {
  std::string s = ns_name(q);
  s.append("/p");
  s.append(std::to_string(i));
  return s;
}

std::vector<elastic_quota_spec> specs(int n, amount min) {
  std::vector<elastic_quota_spec> v;
  for (int i = 0; i < n; ++i) {
    elastic_quota_spec s;
    s.name = ns_name(i);
    s.namespaces = {ns_name(i)};
    s.min = {{gm, min}, {resources::cpu, 64000000}};
    s.max.emplace().set(gm, 4 * min);
    v.push_back(std::move(s));
  }
  return v;
}

elastic_pod mk(int q, int i, amount g) {
  return elastic_pod{pod_name(q, i), ns_name(q), resource_vector{{gm, g}, {resources::cpu, 1000}}, i % 3, i};
}

void BM_elastic_admission_1000_quotas(benchmark::State& state) {
  elastic_quota_model s(specs(1000, 40));
  for (int q = 0; q < 1000; ++q)
    for (int i = 0; i < 3; ++i) s.add_pod(mk(q, i, 10));
  const resource_vector req{{gm, 10}, {resources::cpu, 1000}};
  const std::string ns = ns_name(517);
  benchmark::DoNotOptimize(s.check(ns, req));
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(s.check(ns, req));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_elastic_admission_1000_quotas);

void BM_elastic_relabel_start_stop_10000(benchmark::State& state) {
  elastic_quota_model s(specs(1, 50000));
  for (int i = 0; i < 10000; ++i) s.add_pod(mk(0, i, 10));  // 5,000 in-quota, 5,000 over
  std::vector<elastic_label_change> ch;
  ch.reserve(16);
  const auto p = elastic_pod{"ns-0/early", "ns-0", resource_vector{{gm, 10}}, 0, -1};
  for (auto _ : state) {
    ch.clear();
    s.add_pod(p, &ch);  // oldest pod: flips the last in-quota pod
    s.remove_pod("ns-0/early", &ch);
    benchmark::DoNotOptimize(ch.data());
  }
  state.counters["changes"] = static_cast<double>(ch.size());
}
BENCHMARK(BM_elastic_relabel_start_stop_10000)->Unit(benchmark::kMicrosecond);

void BM_elastic_full_relabel_100000(benchmark::State& state) {
  elastic_quota_model s(specs(1000, 500));
  for (int q = 0; q < 1000; ++q)
    for (int i = 0; i < 100; ++i) s.add_pod(mk(q, i, 10));
  std::vector<elastic_label_change> ch;
  for (auto _ : state) {
    ch.clear();
    s.relabel_all(&ch);
    benchmark::DoNotOptimize(ch.data());
  }
}
BENCHMARK(BM_elastic_full_relabel_100000)->Unit(benchmark::kMillisecond);

void BM_elastic_victims_10000(benchmark::State& state) {
  // 10 quotas of min 1,000 GB; quota 0 idle, the others borrow heavily.
  elastic_quota_model s(specs(10, 1000));
  for (int q = 1; q < 10; ++q)
    for (int i = 0; i < 1111; ++i) s.add_pod(mk(q, i, 1));
  const auto pre = mk(0, 0, 10);
  std::vector<victim> out;
  s.victims(pre, out);
  for (auto _ : state) {
    out.clear();
    s.victims(pre, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["victims"] = static_cast<double>(out.size());
}
BENCHMARK(BM_elastic_victims_10000)->Unit(benchmark::kMicrosecond);

}  // namespace
BENCHMARK_MAIN();
