// SPDX-License-Identifier: Apache-2.0
// quota-sim import cluster on a generated kubectl dump of 5,000 nodes and
// 100,000 pods (range 0: import; 1: import and check; 2: PodGroup gangs).
//   import_bench --benchmark_filter=bm_import_cluster
// Docs: docs/performance.md ("Cluster import")
#include <benchmark/benchmark.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "../tools/quota-sim/import_cluster.hpp"

namespace {

std::string make_dump(int nodes, int pods, bool groups = false) {
  using quota::json;
  json items = json::array();
  for (int i = 0; i < nodes; ++i)
    items.push_back(
        json{{"apiVersion", "v1"},
             {"kind", "Node"},
             {"metadata",
              {{"name", "node-" + std::to_string(i)},
               {"labels", {{"kubernetes.io/hostname", "node-" + std::to_string(i)}, {"pool", i % 2 ? "gpu" : "cpu"}}},
               {"creationTimestamp", "2026-01-10T09:00:00Z"}}},
             {"spec", json::object()},
             {"status",
              {{"allocatable", {{"cpu", "96"}, {"memory", "768Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}},
               {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  for (int q = 0; q < 50; ++q)
    items.push_back(json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                         {"kind", "Queue"},
                         {"metadata", {{"name", "team-" + std::to_string(q)}}},
                         {"spec", {{"weight", 1 + q % 4}, {"reclaimable", true}}}});
  for (int i = 0; i < pods; ++i) {
    const std::string ns = "team-" + std::to_string(i % 50);
    const bool running = i % 5 < 3;
    char created[32];
    std::snprintf(created, sizeof created, "2026-03-02T%02d:%02d:%02dZ", 8 + i / 36000 % 10, i / 60 % 60, i % 60);
    json p{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", "pod-" + std::to_string(i)},
             {"namespace", ns},
             {"creationTimestamp", created},
             {"labels", {{"app", "job-" + std::to_string(i / 8)}, {"kueue.x-k8s.io/queue-name", ns}}},
             {"annotations", {{"scheduling.volcano.sh/queue-name", ns}}}}},
           {"spec",
            {{"schedulerName", "volcano"},
             {"priority", 100},
             {"containers",
              json::array(
                  {{{"name", "main"},
                    {"image", "registry.example/ml:1.4"},
                    {"resources", {{"requests", {{"cpu", "1500m"}, {"memory", "12Gi"}, {"nvidia.com/gpu", "0"}}}}}},
                   {{"name", "sidecar"}, {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}}})}}},
           {"status", {{"phase", running ? "Running" : "Pending"}}}};
    if (running) p["spec"]["nodeName"] = "node-" + std::to_string(i % nodes);
    if (groups) {
      // pods i, i+50, ..., i+350 of one namespace: one group of 8, all running or all waiting
      const std::string pg = "pg-" + std::to_string(i / 400);
      p["metadata"]["annotations"] = {{"scheduling.k8s.io/group-name", pg}};
      if (i % 400 < 50)
        items.push_back(json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                             {"kind", "PodGroup"},
                             {"metadata", {{"name", pg}, {"namespace", ns}}},
                             {"spec", {{"minMember", 8}, {"queue", ns}, {"priorityClassName", "batch"}}},
                             {"status", {{"phase", running ? "Running" : "Inqueue"}}}});
    }
    items.push_back(std::move(p));
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}.dump();
}

void bm_import_cluster(benchmark::State& state) {
  const std::string text = make_dump(5'000, 100'000, state.range(0) == 2);
  const std::string file = "/tmp/quota-import-bench-" + std::to_string(::getpid()) + ".json";
  std::ofstream(file, std::ios::binary) << text;
  quota::sim::cluster_import_options o;
  o.dump_file = file;
  o.from_objects = true;
  o.duration = "uniform:30m-3h";
  const bool check = state.range(0) == 1;
#ifdef __GLIBC__
  mallopt(M_MXFAST, 0);  // as quota-sim import cluster sets it
#endif
  for (auto _ : state) {
    const auto r = quota::sim::import_cluster(o, check);
    const std::string out = r.scenario.dump(1);
    benchmark::DoNotOptimize(out.data());
    state.counters["pods"] = static_cast<double>(r.summary.running + r.summary.pending);
    state.counters["gangs"] = static_cast<double>(r.summary.gangs);
  }
  state.counters["dump_MB"] = static_cast<double>(text.size()) / 1e6;
  std::remove(file.c_str());
}
BENCHMARK(bm_import_cluster)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

// --write-dump=FILE writes the dump and exits (to time the whole command:
// quota-sim import cluster FILE); --write-group-dump=FILE writes the dump of
// range 2 (pods in PodGroups of 8) and exits.
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--write-dump=", 13) == 0) {
      std::ofstream(argv[i] + 13, std::ios::binary) << make_dump(5'000, 100'000);
      return 0;
    } else if (std::strncmp(argv[i], "--write-group-dump=", 19) == 0) {
      std::ofstream(argv[i] + 19, std::ios::binary) << make_dump(5'000, 100'000, true);
      return 0;
    }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
