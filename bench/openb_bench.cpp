// SPDX-License-Identifier: Apache-2.0
// quota-sim on the Alibaba openb GPU trace: import and replay, through the
// scenario JSON, and compare of six policy sets (trace read from QUOTA_TRACE_DIR).
//   openb_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Docs: docs/performance.md ("Trace replay")
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../tools/quota-sim/compare.hpp"
#include "../tools/quota-sim/models.hpp"
#include "../tools/quota-sim/openb.hpp"
#include "../tools/quota-sim/simulator.hpp"

namespace {

const std::string trace_dir = QUOTA_TRACE_DIR;

/// The default pod list, tenants by hash (4), arrivals compressed `time_scale` times.
bool trace_options(benchmark::State& state, quota::sim::openb_options& o, std::int64_t time_scale) {
  o.nodes_file = trace_dir + "/openb_node_list_all_node.csv";
  o.pods_file = trace_dir + "/openb_pod_list_default.csv";
  o.tenants = 4;
  o.time_scale = time_scale;
  if (!std::filesystem::exists(o.pods_file) || !std::filesystem::exists(o.nodes_file)) {
    state.SkipWithError(("the openb trace is absent: " + trace_dir).c_str());
    return false;
  }
  quota::sim::register_models();
  return true;
}

std::size_t replay(quota::sim::scenario sc) {
  auto models = quota::sim::build_models(sc);
  quota::sim::simulator sim(std::move(sc), std::move(models));
  const auto res = sim.run();
  std::string out = res.report.dump(2) + "\n";
  out += sim.svg();
  benchmark::DoNotOptimize(out.data());
  return out.size();
}

/// Import + replay in one process, policy set elastic_quota; arg: time scale.
void bm_openb_replay(benchmark::State& state) {
  quota::sim::openb_options o;
  if (!trace_options(state, o, state.range(0))) return;
  o.policies = {"elastic_quota"};
  std::size_t bytes = 0;
  for (auto _ : state) bytes = replay(quota::sim::openb_scenario(quota::sim::read_openb(o)));
  state.counters["report+svg bytes"] = static_cast<double>(bytes);
}
BENCHMARK(bm_openb_replay)->Arg(1)->Arg(10000)->Unit(benchmark::kMillisecond);

/// The same through the scenario JSON: import writes it, run parses it.
void bm_openb_import_then_run(benchmark::State& state) {
  quota::sim::openb_options o;
  if (!trace_options(state, o, state.range(0))) return;
  o.policies = {"elastic_quota"};
  for (auto _ : state) {
    const std::string text = quota::sim::import_openb(o).dump(1) + "\n";
    benchmark::DoNotOptimize(replay(quota::sim::load_scenario(quota::json::parse(text))));
  }
}
BENCHMARK(bm_openb_import_then_run)->Arg(1)->Arg(10000)->Unit(benchmark::kMillisecond);

/// compare of the six policy sets on the trace imported in the same process
/// (the sets run on up to two threads: wall time, and CPU of the process).
void bm_openb_compare(benchmark::State& state) {
  quota::sim::openb_options o;
  if (!trace_options(state, o, state.range(0))) return;
  const std::vector<std::string> sets = {"none",           "elastic_quota", "volcano",
                                         "kai_fair_share", "kueue",         "yunikorn_limits+running_limits"};
  for (auto _ : state) {
    const auto tr = quota::sim::read_openb(o);
    const auto runs = quota::sim::compare_policies(quota::sim::openb_scenario(tr, quota::json::array()), sets);
    std::string out = quota::sim::compare_report(tr.name, runs).dump(2) + "\n";
    out += quota::sim::compare_svg(tr.name, quota::sim::gpu_milli_resource, runs);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(bm_openb_compare)->Arg(1)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
