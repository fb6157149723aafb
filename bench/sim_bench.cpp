// SPDX-License-Identifier: Apache-2.0
// quota-sim throughput: simulated events per second on a generated scenario
// (8-GPU nodes, tenants with composed models), reported as events/s.
// Arguments: jobs, nodes, and the scheduling cycle in ms (0: a pass per
// instant; 1000: a pass per 1 s cycle boundary, scheduler.cycle "1s").
//   sim_bench --benchmark_filter=bm_sim/100000/500/1000
#include <benchmark/benchmark.h>

#include "../tools/quota-sim/generate.hpp"
#include "../tools/quota-sim/models.hpp"
#include "../tools/quota-sim/simulator.hpp"

namespace {

void bm_sim(benchmark::State& state) {
  quota::sim::generate_options o;
  o.jobs = state.range(0);
  o.nodes = state.range(1);
  o.tenants = 8;
  o.users = 32;
  o.load = 0.9;
  quota::sim::register_models();
  for (const auto& [name, kind] : quota::sim::model_kinds())
    if (kind.synthesize) o.policies.push_back(name);
  quota::json doc = quota::sim::generate_scenario(o);
  if (state.range(2) > 0) doc["scheduler"]["cycle"] = state.range(2);
  std::size_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto sc = quota::sim::load_scenario(doc);
    auto models = quota::sim::build_models(sc);
    quota::sim::simulator sim(std::move(sc), std::move(models));
    state.ResumeTiming();
    const auto res = sim.run();
    events += res.events;
    benchmark::DoNotOptimize(res.report);
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["models"] = static_cast<double>(o.policies.size());
}
BENCHMARK(bm_sim)
    ->Args({10'000, 100, 0})
    ->Args({100'000, 500, 0})
    ->Args({10'000, 100, 1000})
    ->Args({100'000, 500, 1000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
