// SPDX-License-Identifier: Apache-2.0
// Claim accounting with 100,000 live claims: bind + unbind of a pod that
// uses one claim (first reservation: charge moves to the owner; shared: a
// further consumer of an owned claim), and a check alone. One iteration of
// the bind benches is two operations (bind and unbind).
#include <benchmark/benchmark.h>

#include <quota/kai_claims.hpp>

#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"

namespace {
using namespace quota;

constexpr std::uint32_t n_claims = 100'000;
constexpr std::uint32_t n_queues = 64;

struct fixture {
  kai_claims_model m;
  std::vector<claim_queue_id> queues;
  std::vector<std::pair<claim_id, claim_queue_id>> order;  // random (claim, queue) pairs

  explicit fixture(bool pre_bound) {
    for (std::uint32_t q = 0; q < n_queues; ++q) queues.push_back(m.queue("queue-" + std::to_string(q)));
    for (std::uint32_t i = 0; i < n_claims; ++i) {
      claim_spec s;
      s.ns = "ns-" + std::to_string(i % 100);
      s.name = "claim-" + std::to_string(i);
      if (i % 2 == 0) s.queue_label = "queue-" + std::to_string(i % n_queues);
      s.allocated = true;
      s.requests.push_back(claim_device{"gpu.nvidia.com", 1 + i % 4, false, false, {}});
      s.allocation.push_back(claim_device{"gpu.nvidia.com", 1 + i % 4, false, false, {}});
      (void)m.add_claim(s);
    }
    std::mt19937 rng(7);
    for (std::uint32_t i = 0; i < 4096; ++i) {
      const claim_id c = static_cast<claim_id>(rng() % n_claims);
      order.emplace_back(c, queues[rng() % n_queues]);
    }
    if (pre_bound)
      for (claim_id c = 0; c < n_claims; ++c) {
        const claim_id ids[] = {c};
        claim_pod p;
        p.id = "owner";
        p.ns = m.claim_namespace(c);
        p.queue = m.owner(c) != claim_none ? m.owner(c) : queues[c % n_queues];
        (void)m.bind(p, ids);
      }
  }
};

void run_bind_unbind(benchmark::State& state, fixture& f) {
  std::vector<claim_action> actions;
  actions.reserve(64);
  std::size_t k = 0;
  auto step = [&] {
    const auto [c, q] = f.order[k++ & 4095];
    const claim_id ids[] = {c};
    claim_pod p;
    p.id = "pod";
    p.ns = f.m.claim_namespace(c);
    p.queue = q;
    actions.clear();
    auto r = f.m.bind(p, ids, &actions);
    if (r.binding != claim_none) f.m.unbind(r.binding, &actions);
    benchmark::DoNotOptimize(r);
  };
  for (int i = 0; i < 8192; ++i) step();  // warm-up: binding slots, use lists
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) step();
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2);
}

void bm_bind_unbind_first_reservation(benchmark::State& state) {
  static fixture f(false);
  run_bind_unbind(state, f);
}
BENCHMARK(bm_bind_unbind_first_reservation);

void bm_bind_unbind_shared(benchmark::State& state) {
  static fixture f(true);
  run_bind_unbind(state, f);
}
BENCHMARK(bm_bind_unbind_shared);

void bm_check(benchmark::State& state) {
  static fixture f(true);
  std::size_t k = 0;
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    const auto [c, q] = f.order[k++ & 4095];
    const claim_id ids[] = {c};
    claim_pod p;
    p.id = "pod";
    p.ns = f.m.claim_namespace(c);
    p.queue = q;
    benchmark::DoNotOptimize(f.m.check(p, ids));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_check);

}  // namespace

BENCHMARK_MAIN();
