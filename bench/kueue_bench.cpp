// SPDX-License-Identifier: Apache-2.0
// Kueue model figures:
// * one flavor-assignment attempt for a 3-pod-set workload, 1,000 ClusterQueues
//   in 50 cohorts, 3 flavors, 4 resources (target <= 1 us, 0 allocations);
// * preemption target selection among 10,000 admitted workloads (<= 1 ms):
//   withinClusterQueue in a full queue, and reclaimWithinCohort from 19
//   borrowing queues (every admitted workload a candidate);
// * one scheduling pass admitting 15,000 workloads into 30 ClusterQueues (< 100 ms).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include <quota/kueue_cohorts.hpp>
#include <quota/kueue_flavor_assignment.hpp>
#include <quota/kueue.hpp>

#include "alloc_counter.hpp"

namespace {
using namespace quota;

// names built with append (GCC 12 warns falsely about "x" + std::to_string(i) under -O2)
std::string nm(const char* prefix, int i, const char* mid = nullptr, int j = -1) {
  std::string s(prefix);
  s.append(std::to_string(i));
  if (mid) {
    s.append(mid);
    s.append(std::to_string(j));
  }
  return s;
}

constexpr resource_id kres[4] = {resources::cpu, resources::memory, resources::nvidia_gpu, resources::pods};

kueue_config make_config(int cqs, int cohorts, amount cpu_nominal, int flavors = 3, amount others = 0) {
  kueue_config cfg;
  const char* names[3] = {"f0", "f1", "f2"};
  cfg.resource_flavors.assign(names, names + flavors);
  for (int i = 0; i < cqs; ++i) {
    kueue_cluster_queue_spec c;
    c.name = nm("cq", i);
    c.cohort = nm("co", i % cohorts);
    c.preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
    c.preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
    kueue_resource_group_spec g;
    g.covered_resources.assign(std::begin(kres), std::end(kres));
    for (int fi = 0; fi < flavors; ++fi) {
      kueue_flavor_quotas_spec fq{names[fi], {}};
      fq.resources = {{resources::cpu, cpu_nominal, std::nullopt, std::nullopt},
                      {resources::memory, others ? others : amount{1} << 40, std::nullopt, std::nullopt},
                      {resources::nvidia_gpu, others ? others : 64, std::nullopt, std::nullopt},
                      {resources::pods, others ? others : 1000, std::nullopt, std::nullopt}};
      g.flavors.push_back(fq);
    }
    c.resource_groups.push_back(g);
    cfg.cluster_queues.push_back(c);
  }
  return cfg;
}

kueue_workload make_workload(std::string name, std::string queue, amount cpu_per_pod, std::int32_t prio) {
  kueue_workload w;
  w.name = std::move(name);
  w.queue = std::move(queue);
  w.priority = prio;
  for (int p = 0; p < 3; ++p) {
    kueue_pod_set ps;
    ps.count = 2;
    ps.per_pod.set(resources::cpu, cpu_per_pod);
    ps.per_pod.set(resources::memory, amount{1} << 30);
    ps.per_pod.set(resources::nvidia_gpu, 1);
    ps.per_pod.set(resources::pods, 1);
    w.pod_sets.push_back(ps);
  }
  return w;
}

void bm_flavor_assignment(benchmark::State& state) {
  resource_registry reg;
  kueue_model m(make_config(1000, 50, 100'000), reg);
  // fill f0 of the target queue's cohort so the attempt walks to a later flavor and borrows
  for (int i = 0; i < 20; ++i) (void)m.admit(make_workload(nm("fill", i), nm("cq", i < 3 ? 7 : i * 50 + 7), 8'000, 0));
  const auto w = make_workload("w", "cq7", 4'000, 0);
  const auto cq = m.forest().cluster_queue_at("cq7");
  kueue_flavor_assignment out;
  m.assigner().assign(cq, w, out);  // warm-up
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    m.assigner().assign(cq, w, out);
    benchmark::DoNotOptimize(out.mode);
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.counters["borrowing"] = out.borrowing ? 1 : 0;
}
BENCHMARK(bm_flavor_assignment);

void bm_preemption_targets(benchmark::State& state) {
  resource_registry reg;
  // 20 queues in one cohort, 500 workloads each (10,000), all of it in flavor f0
  auto cfg = make_config(20, 1, 500 * 6 * 1000, 1, amount{1} << 50);
  kueue_model m(cfg, reg);
  for (int q = 0; q < 20; ++q)
    for (int i = 0; i < 500; ++i) (void)m.admit(make_workload(nm("q", q, "-", i), nm("cq", q), 1000, i % 10));
  // every queue is full to its nominal quota: the incoming workload needs preemption
  auto in = make_workload("in", "cq3", 1000, 100);
  kueue_flavor_assignment a;
  m.assign(in, a);
  std::size_t n = 0;
  for (auto _ : state) {
    auto t = m.preemption_targets(in, a);
    n = t.size();
    benchmark::DoNotOptimize(t.data());
  }
  state.counters["admitted"] = static_cast<double>(m.admitted_count());
  state.counters["targets"] = static_cast<double>(n);
  state.counters["mode"] = static_cast<double>(a.mode);
}
BENCHMARK(bm_preemption_targets)->Unit(benchmark::kMicrosecond);

void bm_preemption_targets_reclaim(benchmark::State& state) {
  resource_registry reg;
  // 20 queues in one cohort (3,000 cores each); cq3 is empty, the 19 others
  // hold 526 workloads of 6 cores each (9,994 in all) and each borrows 156
  // cores: every one of them is a reclaimWithinCohort candidate.
  auto cfg = make_config(20, 1, 3'000'000, 1, amount{1} << 50);
  kueue_model m(cfg, reg);
  for (int q = 0; q < 20; ++q) {
    if (q == 3) continue;
    for (int i = 0; i < 526; ++i) (void)m.admit(make_workload(nm("q", q, "-", i), nm("cq", q), 1000, i % 10));
  }
  // 60 cores asked, 36 free: 24 cores (4 workloads) must be reclaimed
  auto in = make_workload("in", "cq3", 10'000, 100);
  kueue_flavor_assignment a;
  m.assign(in, a);
  std::size_t n = 0;
  for (auto _ : state) {
    auto t = m.preemption_targets(in, a);
    n = t.size();
    benchmark::DoNotOptimize(t.data());
  }
  state.counters["admitted"] = static_cast<double>(m.admitted_count());
  state.counters["targets"] = static_cast<double>(n);
  state.counters["mode"] = static_cast<double>(a.mode);
}
BENCHMARK(bm_preemption_targets_reclaim)->Unit(benchmark::kMicrosecond);

void bm_schedule_15000_into_30(benchmark::State& state) {
  std::vector<kueue_workload> pending;
  for (int i = 0; i < 15000; ++i) {
    kueue_workload w;
    w.name = nm("w", i);
    w.queue = nm("cq", i % 30);
    w.created = i;
    kueue_pod_set ps;
    ps.per_pod.set(resources::cpu, 1000);
    ps.per_pod.set(resources::pods, 1);
    w.pod_sets.push_back(ps);
    pending.push_back(std::move(w));
  }
  std::size_t admitted = 0;
  for (auto _ : state) {
    state.PauseTiming();
    resource_registry reg;
    auto m = std::make_unique<kueue_model>(make_config(30, 3, 1'000'000, 1, amount{1} << 50), reg);
    state.ResumeTiming();
    admitted = m->schedule(pending).size();
    benchmark::DoNotOptimize(admitted);
    state.PauseTiming();
    m.reset();
    state.ResumeTiming();
  }
  state.counters["admitted"] = static_cast<double>(admitted);
}
BENCHMARK(bm_schedule_15000_into_30)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
