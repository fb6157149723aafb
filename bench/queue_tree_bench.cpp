// Volcano queue model: exact deserved water-filling for 1,000 and 10,000
// queues over 4 resources, and the hot predicates (allocatable, overused,
// enqueueable) with allocations per iteration.
#include <quota/queue_tree.hpp>

#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;

namespace {

const std::vector<resource_id> dims4{resources::cpu, resources::memory, resources::nvidia_gpu, resources::pods};

queue_tree make_tree(int n) {
  std::mt19937_64 rng(42);
  resource_vector total;
  for (auto r : dims4) total.set(r, 1'000'000'000);
  std::vector<queue_spec> specs;
  for (int i = 0; i < n; ++i) {
    queue_spec q;
    q.name = "q" + std::to_string(i);
    q.weight = 1 + static_cast<std::int64_t>(rng() % 10);
    for (auto r : dims4) {
      const auto g = static_cast<std::int64_t>(rng() % (500'000'000 / n));
      q.guarantee.set(r, g);
      if (rng() % 2) q.capability.set(r, g + 1 + static_cast<std::int64_t>(rng() % 10'000'000));
    }
    specs.push_back(std::move(q));
  }
  queue_tree t(dims4, total, std::move(specs));
  for (int i = 0; i < n; ++i) {
    resource_vector p;
    for (auto r : dims4) p.set(r, static_cast<std::int64_t>(rng() % 5'000'000));
    t.set_pending("q" + std::to_string(i), p);
  }
  return t;
}

void bm_deserved(benchmark::State& state) {
  auto t = make_tree(static_cast<int>(state.range(0)));
  t.compute_deserved();
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    t.compute_deserved();
    benchmark::DoNotOptimize(t.deserved_floor(0, 0));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(bm_deserved)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void bm_predicates(benchmark::State& state) {
  auto t = make_tree(1000);
  t.compute_deserved();
  const resource_vector task{{resources::cpu, 1000}, {resources::nvidia_gpu, 1}};
  const std::size_t q = 17;
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    switch (state.range(0)) {
      case 0:
        benchmark::DoNotOptimize(t.allocatable(q, task).allowed());
        break;
      case 1:
        benchmark::DoNotOptimize(t.overused(q));
        break;
      default:
        benchmark::DoNotOptimize(t.job_enqueueable(q, task).allowed());
        break;
    }
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.SetLabel(state.range(0) == 0 ? "allocatable" : state.range(0) == 1 ? "overused" : "enqueueable");
}
BENCHMARK(bm_predicates)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
BENCHMARK_MAIN();
