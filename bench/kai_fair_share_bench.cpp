// SPDX-License-Identifier: Apache-2.0
// Fair share division for a 3-level KAI-style tree (root-level departments,
// projects, leaf queues) with 3 resources, 3 priority buckets and about half
// of the queues capped by demand or limit; plus the predicates.
#include <quota/kai_fair_share.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;
namespace R = quota::resources;

namespace {

std::string name_of(char c, long long i) {
  std::string s(1, c);
  s.append(std::to_string(i));
  return s;
}

kai_fair_share_model make_tree(long long leaves, kai_fair_share_options opts = {}) {
  std::vector<kai_fair_share_queue_spec> specs;
  const long long depts = 10, projects_per = leaves / 100;  // 10 x (leaves/100) x 10
  const resource_id rs[3] = {R::cpu, R::memory, R::nvidia_gpu};
  auto add = [&](std::string n, std::string parent, long long i) {
    kai_fair_share_queue_spec s;
    s.name = std::move(n);
    s.parent = std::move(parent);
    s.priority = static_cast<std::int32_t>(50 + 50 * (i % 3));
    s.created_ms = i;
    for (auto r : rs) {
      kai_fair_share_resource x;
      x.quota = (i % 4) * 1000 + 500;
      x.over_quota_weight = 1 + i % 5;
      x.limit = i % 4 == 0 ? 4000 : -1;
      s.resources[r] = x;
    }
    specs.push_back(std::move(s));
  };
  long long k = 0;
  for (long long d = 0; d < depts; ++d) {
    add(name_of('d', d), "", k++);
    for (long long p = 0; p < projects_per; ++p) {
      const auto pn = name_of('p', d * projects_per + p);
      add(pn, name_of('d', d), k++);
      for (long long l = 0; l < 10; ++l) add(name_of('l', (d * projects_per + p) * 10 + l), pn, k++);
    }
  }
  kai_fair_share_model t(std::move(specs), opts);
  t.set_capacity(resource_vector{{R::cpu, leaves * 2000}, {R::memory, leaves * 2000}, {R::nvidia_gpu, leaves * 2000}});
  for (std::size_t q = 0; q < t.size(); ++q)
    if (t.is_leaf(q)) {
      const amount want = q % 2 == 0 ? 1000 : 9000;  // half capped by demand
      t.set_request(q, resource_vector{{R::cpu, want}, {R::memory, want}, {R::nvidia_gpu, want}});
      t.allocate(q, resource_vector{{R::cpu, want / 2}, {R::memory, want / 2}, {R::nvidia_gpu, want / 2}}, true);
      const amount used = static_cast<amount>(q % 7) * 100;  // past usage, in the same units
      t.set_usage(q, resource_vector{{R::cpu, used}, {R::memory, used}, {R::nvidia_gpu, used}});
    }
  t.set_usage_total(
      resource_vector{{R::cpu, leaves * 2000}, {R::memory, leaves * 2000}, {R::nvidia_gpu, leaves * 2000}});
  return t;
}

void BM_fair_share_compute(benchmark::State& state) {
  auto t = make_tree(state.range(0));
  t.compute();  // warm-up
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    t.compute();
    benchmark::DoNotOptimize(t.fair_share(0, R::cpu));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_compute)->ArgName("leaves")->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The same with the historical-usage adjustment on (k = 1, every leaf with usage).
void BM_fair_share_compute_usage(benchmark::State& state) {
  kai_fair_share_options o;
  o.usage_k_num = 1;
  auto t = make_tree(state.range(0), o);
  t.compute();
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    t.compute();
    benchmark::DoNotOptimize(t.fair_share(0, R::cpu));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_compute_usage)->ArgName("leaves")->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

struct fixture {
  kai_fair_share_model t = make_tree(1000);
  std::size_t a, b;
  resource_vector req{{R::cpu, 500}, {R::memory, 500}, {R::nvidia_gpu, 500}};
  fixture() {
    t.compute();
    a = b = kai_fair_share_model::npos;
    for (std::size_t q = 0; q < t.size(); ++q)
      if (t.is_leaf(q) && t.check_allocation(q, req, false).allowed()) (a == kai_fair_share_model::npos ? a : b) = q;
    if (a == kai_fair_share_model::npos || b == kai_fair_share_model::npos)
      throw std::logic_error("bench fixture: expected allowed checks");
  }
};

void BM_fair_share_check_allocation(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.check_allocation(f.a, f.req, false));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_check_allocation);

void BM_fair_share_can_reclaim(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.can_reclaim(f.a, f.req, true));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_can_reclaim);

void BM_fair_share_reclaim_strategy(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.reclaim_strategy(f.a, f.req, f.b, f.req));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_reclaim_strategy);

void BM_fair_share_queue_order(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.queue_before(f.a, f.req, f.b, f.req));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_queue_order);

void BM_fair_share_victim_prefilter(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.victim_prefilter(f.a, f.b, f.req));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_victim_prefilter);

void BM_fair_share_validate_reclaim(benchmark::State& state) {
  fixture f;
  const resource_vector chunk{{R::cpu, 100}, {R::memory, 100}, {R::nvidia_gpu, 100}};
  const kai_fair_share_victim_chunk chunks[2] = {{f.b, &chunk}, {f.b, &chunk}};
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.validate_reclaim(f.a, f.req, true, chunks));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_validate_reclaim);

void BM_fair_share_can_preempt(benchmark::State& state) {
  fixture f;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) benchmark::DoNotOptimize(f.t.can_preempt(10, f.a, 5, true, 0, 100));
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_fair_share_can_preempt);

}  // namespace

BENCHMARK_MAIN();
