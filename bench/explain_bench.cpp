// SPDX-License-Identifier: Apache-2.0
// engine.explain(job) on the composed engine of the realistic scenario
// (examples/scenarios/gpu_cluster.json: Kueue ClusterQueues in a cohort +
// running-job limits), replayed by quota-sim up to the moment asked about.
// Target: <= 10 us per explain. Allocations per explain are reported (explain
// builds a value with strings and vectors; it is not an admission hot path).
//   explain_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>

#include "../tools/quota-sim/explain.hpp"
#include "../tools/quota-sim/models.hpp"
#include "../tools/quota-sim/simulator.hpp"
#include "alloc_counter.hpp"

namespace {

// The scenario replayed to `at`, plus the job asked about.
struct fixture {
  std::unique_ptr<quota::sim::simulator> sim;
  quota::job j;
};

// the source tree, from this file's path (the build passes absolute paths)
std::string source_dir() {
  const std::string here = __FILE__;
  return here.substr(0, here.rfind("/bench/"));
}

fixture make(std::int64_t at, const char* job_text) {
  quota::json doc = quota::load_json_file(source_dir() + "/examples/scenarios/gpu_cluster.json");
  quota::json jj = quota::json::parse(job_text);
  jj["submit"] = at + 1;
  doc["jobs"].push_back(jj);
  auto sc = quota::sim::load_scenario(doc);
  auto models = quota::sim::build_models(sc);
  fixture f{std::make_unique<quota::sim::simulator>(std::move(sc), std::move(models)), {}};
  (void)f.sim->run(at);
  for (const auto& js : f.sim->spec().jobs)
    if (js.id == jj["id"].get<std::string>()) f.j = quota::sim::job_of(js, at);
  return f;
}

constexpr const char* research_sweep =
    R"({"id": "extra-sweep", "namespace": "research", "queue": "research", "user": "ann", "priority": 50,
        "request": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 1}})";
constexpr const char* prod_burst =
    R"({"id": "extra-burst", "namespace": "prod", "queue": "prod", "user": "svc", "priority": 1000,
        "request": {"cpu": "16", "memory": "128Gi", "nvidia.com/gpu": 4}})";

void run(benchmark::State& state, const fixture& f, bool expect_allowed) {
  const auto& e = f.sim->quota_engine();
  if (e.explain(f.j).allowed() != expect_allowed) {
    state.SkipWithError("unexpected verdict");
    return;
  }
  const auto before = quota_bench::allocation_count();
  for (auto _ : state) {
    auto x = e.explain(f.j);
    benchmark::DoNotOptimize(x);
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
  state.counters["models"] = static_cast<double>(e.model_count());
}

// 35m: running_limits denies (queue and user limits), Kueue allows
void bm_explain_denied_by_limits(benchmark::State& state) {
  static const fixture f = make(35 * 60'000, research_sweep);
  run(state, f, false);
}
BENCHMARK(bm_explain_denied_by_limits);

// 3h: Kueue denies and names the reclaim victim (preemption search), limits allow
void bm_explain_kueue_reclaim(benchmark::State& state) {
  static const fixture f = make(3 * 3'600'000, prod_burst);
  run(state, f, false);
}
BENCHMARK(bm_explain_kueue_reclaim);

// 1h: both allow
void bm_explain_allowed(benchmark::State& state) {
  static const fixture f = make(60 * 60'000, prod_burst);
  run(state, f, true);
}
BENCHMARK(bm_explain_allowed);

// for comparison: the plain check of the same job
void bm_check_kueue_reclaim(benchmark::State& state) {
  static const fixture f = make(3 * 3'600'000, prod_burst);
  const auto& e = f.sim->quota_engine();
  for (auto _ : state) {
    auto d = e.check(f.j);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(bm_check_kueue_reclaim);

}  // namespace

BENCHMARK_MAIN();
