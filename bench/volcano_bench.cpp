// SPDX-License-Identifier: Apache-2.0
// Volcano queue model: exact deserved water-filling for 1,000 and 10,000
// queues over 4 resources, and the hot predicates (allocatable, overused,
// enqueueable) with allocations per iteration. Capacity plugin: building the
// queues (validation, realCapability, deserved) for 1,000 and 10,000 queues,
// flat and hierarchical, and the same predicates.
#include <quota/volcano.hpp>
#include <quota/volcano_capacity.hpp>

#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;

namespace {

const std::vector<resource_id> dims4{resources::cpu, resources::memory, resources::nvidia_gpu, resources::pods};

volcano_model make_tree(int n) {
  std::mt19937_64 rng(42);
  resource_vector total;
  for (auto r : dims4) total.set(r, 1'000'000'000);
  std::vector<volcano_queue_spec> specs;
  for (int i = 0; i < n; ++i) {
    volcano_queue_spec q;
    q.name = "q" + std::to_string(i);
    q.weight = 1 + static_cast<std::int64_t>(rng() % 10);
    for (auto r : dims4) {
      const auto g = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(500'000'000 / n));
      q.guarantee.set(r, g);
      if (rng() % 2) q.capability.set(r, g + 1 + static_cast<std::int64_t>(rng() % 10'000'000));
    }
    specs.push_back(std::move(q));
  }
  volcano_model t(dims4, total, std::move(specs));
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

// ---- capacity plugin ----

// Flat: n queues with random deserved, guarantees (sum within the total) and
// capabilities. Hierarchical: 10 top queues, 10 inner queues under each, the
// rest leaves spread over the inner queues; parents hold the sums.
std::vector<volcano_capacity_queue_spec> capacity_specs(int n, bool hier) {
  std::mt19937_64 rng(43);
  std::vector<volcano_capacity_queue_spec> specs(static_cast<std::size_t>(n));
  const int top = hier ? 10 : 0, inner = hier ? 100 : 0;
  for (int i = 0; i < n; ++i) {
    auto& q = specs[static_cast<std::size_t>(i)];
    q.name = "c" + std::to_string(i);
    if (i < top + inner && hier) continue;
    for (auto r : dims4) {
      const auto g = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(500'000'000 / n));
      const auto d = g + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(500'000'000 / n));
      q.guarantee.set(r, g);
      q.deserved.set(r, d);
      if (!hier && rng() % 2) q.capability.set(r, d + 1 + static_cast<std::int64_t>(rng() % 10'000'000));
    }
  }
  if (hier) {
    for (int i = 0; i < top + inner; ++i)
      for (auto r : dims4) {
        specs[static_cast<std::size_t>(i)].guarantee.set(r, 0);
        specs[static_cast<std::size_t>(i)].deserved.set(r, 0);
      }
    for (int i = top; i < top + inner; ++i) specs[static_cast<std::size_t>(i)].parent = "c" + std::to_string(i % top);
    for (int i = top + inner; i < n; ++i)
      specs[static_cast<std::size_t>(i)].parent = "c" + std::to_string(top + i % inner);
    for (int i = n - 1; i >= top; --i) {  // children first: sums flow up
      auto& c = specs[static_cast<std::size_t>(i)];
      auto& p = specs[static_cast<std::size_t>(std::stoi(c.parent.substr(1)))];
      for (auto r : dims4) {
        p.guarantee.set(r, p.guarantee.get(r) + c.guarantee.get(r));
        p.deserved.set(r, p.deserved.get(r) + c.deserved.get(r));
      }
    }
  }
  return specs;
}

resource_vector capacity_total() {
  resource_vector total;
  for (auto r : dims4) total.set(r, 1'000'000'000);
  return total;
}

void bm_capacity_build(benchmark::State& state) {
  const bool hier = state.range(1) != 0;
  const auto specs = capacity_specs(static_cast<int>(state.range(0)), hier);
  const auto total = capacity_total();
  const volcano_capacity_options opts{hier ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat};
  for (auto _ : state) {
    state.PauseTiming();
    auto copy = specs;
    state.ResumeTiming();
    volcano_capacity_model c(dims4, total, std::move(copy), opts);
    benchmark::DoNotOptimize(c.deserved(0, 0));
  }
  state.SetLabel(hier ? "hierarchical" : "flat");
}
BENCHMARK(bm_capacity_build)
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({1000, 1})
    ->Args({10000, 1})
    ->Unit(benchmark::kMicrosecond);

// Per-session recomputation (realCapability and deserved from a new total).
void bm_capacity_set_total(benchmark::State& state) {
  const bool hier = state.range(1) != 0;
  volcano_capacity_model c(dims4, capacity_total(), capacity_specs(static_cast<int>(state.range(0)), hier),
                           {hier ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat});
  auto a = capacity_total(), b = a;
  for (auto r : dims4) b.set(r, a.get(r) + 1);
  c.set_total(b);
  const auto before = quota_bench::allocation_count();
  bool flip = false;
  for (auto _ : state) {
    c.set_total(flip ? a : b);
    flip = !flip;
    benchmark::DoNotOptimize(c.deserved(0, 0));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.SetLabel(hier ? "hierarchical" : "flat");
}
BENCHMARK(bm_capacity_set_total)
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({1000, 1})
    ->Args({10000, 1})
    ->Unit(benchmark::kMicrosecond);

void bm_capacity_predicates(benchmark::State& state) {
  const bool hier = state.range(1) != 0;
  volcano_capacity_model c(dims4, capacity_total(), capacity_specs(1000, hier),
                           {hier ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat});
  const std::size_t q = c.index("c517");  // a leaf (depth 3 when hierarchical)
  c.allocate("t", "c517", {{resources::cpu, 1000}, {resources::nvidia_gpu, 1}});
  const resource_vector task{{resources::cpu, 1000}, {resources::nvidia_gpu, 1}};
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    switch (state.range(0)) {
      case 0:
        benchmark::DoNotOptimize(c.allocatable(q, task).allowed());
        break;
      case 1:
        benchmark::DoNotOptimize(c.overused(q));
        break;
      default:
        benchmark::DoNotOptimize(c.job_enqueueable(q, task).allowed());
        break;
    }
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.SetLabel(std::string(state.range(0) == 0   ? "allocatable"
                             : state.range(0) == 1 ? "overused"
                                                   : "enqueueable") +
                 (hier ? " hierarchical" : " flat"));
}
BENCHMARK(bm_capacity_predicates)->Args({0, 0})->Args({1, 0})->Args({2, 0})->Args({0, 1})->Args({1, 1})->Args({2, 1});

}  // namespace
// Victim searches over ~5,000 running tasks in 16 queues, asked for one job:
// Volcano's preempt (lower-priority tasks of the job's queue) and reclaim
// (tasks of queues over deserved), proportion and capacity (flat) plugins.
// Args: (0 = proportion preempt, 1 = proportion reclaim, 2 = capacity preempt,
// 3 = capacity reclaim; 0 = the other queues hold about twice what they
// deserve, most of their tasks are reclaim victims, 1 = about half of them
// hold a little more than they deserve, a few tasks are).
constexpr int victim_queues = 16;
constexpr int victim_tasks = 5000;

job victim_job(int queue, std::int32_t priority) {
  job j;
  j.id = "asker";
  j.queue = "q" + std::to_string(queue);
  j.priority = priority;
  j.request.set(resources::cpu, 1000);
  j.request.set(resources::memory, 1000);
  return j;
}

template <class Policy>
void fill_running(Policy& p, std::mt19937_64& rng) {
  for (int i = 0; i < victim_tasks; ++i) {
    job j;
    j.id = "t" + std::to_string(i);
    // queue 0 holds little, the others are over what they deserve
    j.queue = "q" + std::to_string(1 + static_cast<int>(rng() % (victim_queues - 1)));
    j.priority = static_cast<std::int32_t>(rng() % 10);
    j.preemptible = rng() % 8 != 0;
    j.request.set(resources::cpu, 1000 + static_cast<std::int64_t>(rng() % 1000));
    j.request.set(resources::memory, 1000 + static_cast<std::int64_t>(rng() % 1000));
    p.commit(j);
  }
}

void bm_victims(benchmark::State& state) {
  const auto which = state.range(0);
  const bool light = state.range(1) != 0;
  std::mt19937_64 rng(7);
  resource_vector total;
  const std::int64_t cluster = light ? 7'400'000 : 4'000'000;
  total.set(resources::cpu, cluster);
  total.set(resources::memory, cluster);
  std::vector<victim> out;
  auto run = [&](auto& p, const job& asker, bool preempt) {
    out.reserve(victim_tasks);
    const auto before = quota_bench::allocation_count();
    for (auto _ : state) {
      out.clear();
      if (preempt)
        p.node_candidates(asker, out);
      else
        p.victims(asker, out);
      benchmark::DoNotOptimize(out.data());
    }
    state.counters["victims"] = static_cast<double>(out.size());
    state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  };
  if (which < 2) {
    std::vector<volcano_queue_spec> specs;
    for (int i = 0; i < victim_queues; ++i) {
      volcano_queue_spec q;
      q.name = "q" + std::to_string(i);
      specs.push_back(std::move(q));
    }
    volcano_policy p(volcano_model({resources::cpu, resources::memory}, total, std::move(specs)));
    fill_running(p, rng);
    if (which == 0)
      run(p, victim_job(3, 5), true);
    else
      run(p, victim_job(0, 5), false);
  } else {
    std::vector<volcano_capacity_queue_spec> specs;
    for (int i = 0; i < victim_queues; ++i) {
      volcano_capacity_queue_spec q;
      q.name = "q" + std::to_string(i);
      const std::int64_t deserved = light ? 490'000 : 250'000;
      q.deserved.set(resources::cpu, deserved);
      q.deserved.set(resources::memory, deserved);
      specs.push_back(std::move(q));
    }
    volcano_capacity_policy p(volcano_capacity_model({resources::cpu, resources::memory}, total, std::move(specs)));
    fill_running(p, rng);
    if (which == 2)
      run(p, victim_job(3, 5), true);
    else
      run(p, victim_job(0, 5), false);
  }
}
BENCHMARK(bm_victims)->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
