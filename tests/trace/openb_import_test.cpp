// SPDX-License-Identifier: Apache-2.0
// trace: `quota-sim import openb` on small hand-written CSV files (the real
// trace is tested by trace_replay_test.cpp when QUOTA_TRACE_DIR holds it).
#include <quota_catch.hpp>

#include <string>
#include <vector>

#include "compare.hpp"
#include "openb.hpp"
#include "simulator.hpp"

namespace {

using quota::json;

const std::string dir = std::string(QUOTA_SOURCE_DIR) + "/tests/data/openb";

quota::sim::openb_options options(const std::string& pods) {
  quota::sim::openb_options o;
  o.nodes_file = dir + "/nodes.csv";
  o.pods_file = dir + "/" + pods;
  return o;
}

const json& job(const json& doc, const std::string& id) {
  for (const auto& j : doc.at("jobs"))
    if (j.at("id") == id) return j;
  FAIL("no job " << id);
  throw;
}

/// The report of import-then-run: the scenario written as `import openb`
/// writes it, parsed back and replayed.
std::string report_via_json(const quota::sim::openb_options& o) {
  const json doc = json::parse(quota::sim::import_openb(o).dump(1));
  auto sc = quota::sim::load_scenario(doc);
  auto models = quota::sim::build_models(sc);
  quota::sim::simulator sim(std::move(sc), std::move(models));
  return sim.run().report.dump(2) + sim.svg();
}

/// The report of `replay openb`: the scenario built in the same process.
std::string report_direct(const quota::sim::openb_options& o) {
  auto sc = quota::sim::openb_scenario(quota::sim::read_openb(o));
  auto models = quota::sim::build_models(sc);
  quota::sim::simulator sim(std::move(sc), std::move(models));
  return sim.run().report.dump(2) + sim.svg();
}

}  // namespace

TEST_CASE("trace: import maps nodes, devices, shares, types, QoS and times", "[trace]") {
  auto o = options("pods.csv");
  o.time_scale = 10;
  const json doc = quota::sim::import_openb(o);
  const auto& nodes = doc.at("cluster").at("nodes");
  REQUIRE(nodes.size() == 3);
  CHECK(nodes[0]["allocatable"]["alibaba.com/gpu-milli"] == 4000);
  CHECK(nodes[0]["gpu"]["model"] == "V100M16");
  CHECK(nodes[1]["allocatable"]["cpu"] == "32000m");
  CHECK_FALSE(nodes[2].contains("gpu"));  // a CPU-only node has no devices

  const auto& p0 = job(doc, "pod-0");  // half of one GPU, LS: priority 300, not preemptible
  CHECK(p0["request"]["alibaba.com/gpu-milli"] == 500);
  CHECK(p0["gpu"]["count"] == 1);
  CHECK(p0["gpu"]["milli"] == 500);
  CHECK(p0["priority"] == 300);
  CHECK(p0["preemptible"] == false);
  CHECK(p0["duration"] == 100 * 1000);

  const auto& p1 = job(doc, "pod-1");  // two whole T4s, BE, ran 20 s..50 s, arrives at 10 s / 10
  CHECK(p1["request"]["alibaba.com/gpu-milli"] == 2000);
  CHECK(p1["gpu"]["models"] == json::array({"T4"}));
  CHECK(p1["priority"] == 0);
  CHECK(p1["submit"] == 1000);
  CHECK(p1["duration"] == 30 * 1000);

  const auto& p2 = job(doc, "pod-2");  // never scheduled: asks for deletion - creation
  CHECK(p2["duration"] == 10 * 1000);
  CHECK_FALSE(p2.contains("gpu"));

  const auto& p3 = job(doc, "pod-3");
  CHECK(p3["gpu"]["models"] == json::array({"V100M16", "T4"}));
  CHECK(p3["priority"] == 200);
}

TEST_CASE("trace: import tenants by stable hash or by QoS class", "[trace]") {
  auto o = options("pods.csv");
  o.tenants = 3;
  const json a = quota::sim::import_openb(o);
  const json b = quota::sim::import_openb(o);
  CHECK(a == b);  // deterministic
  for (const auto& j : a["jobs"]) {
    const auto q = j["queue"].get<std::string>();
    CHECK((q == "tenant-00" || q == "tenant-01" || q == "tenant-02"));
    const auto h = quota::sim::fnv1a(j["id"].get<std::string>(), 0) % 3;
    CHECK(q == "tenant-0" + std::to_string(h));
  }
  o.tenant_rule = "qos";
  const json q = quota::sim::import_openb(o);
  CHECK(job(q, "pod-0")["queue"] == "ls");
  CHECK(job(q, "pod-1")["queue"] == "be");
  CHECK(job(q, "pod-2")["queue"] == "burstable");
  CHECK(job(q, "pod-3")["queue"] == "guaranteed");
}

TEST_CASE("trace: --hold and pod lists without times keep every pod to the end", "[trace]") {
  auto o = options("pods.csv");
  o.hold = true;
  const json held = quota::sim::import_openb(o);  // named: a range-for over a temporary's member dangles
  for (const auto& j : held.at("jobs")) CHECK_FALSE(j.contains("duration"));
  const json nt = quota::sim::import_openb(options("no_times.csv"));
  REQUIRE(nt["jobs"].size() == 2);
  CHECK(nt["jobs"][0]["submit"] == 0);
  CHECK(nt["jobs"][1]["submit"] == 1000);  // pod i arrives at i seconds, in file order
  CHECK_FALSE(nt["jobs"][1].contains("duration"));
  CHECK(nt["jobs"][1]["priority"] == 100);
  auto q = options("no_times.csv");
  q.tenant_rule = "qos";
  CHECK_THROWS_AS(quota::sim::import_openb(q), quota::parse_error);
}

TEST_CASE("trace: malformed pod lists are rejected naming file, line and column", "[trace]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"missing_column.csv", ":1: missing column 'gpu_milli'"},
      {"bad_number.csv", ":3: column 2 (cpu_milli) not a number"},
      {"negative.csv", ":2: column 3 (memory_mib) negative amount"},
      {"deleted_before_created.csv", ":2: column 10 (deletion_time) is before creation_time"},
      {"partial_times.csv", ":1: missing column 'scheduled_time'"},
      {"unknown_qos.csv", ":2: column 7 (qos) unknown QoS class 'Gold'"},
      {"duplicate_name.csv", ":3: column 1 (name) repeats pod 'pod-0' of line 2"},
  };
  for (const auto& [file, what] : cases) {
    INFO(file);
    try {
      (void)quota::sim::import_openb(options(file));
      FAIL("accepted " << file);
    } catch (const quota::error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find(file + what) != std::string::npos);
    }
  }
  auto bad = options("pods.csv");
  bad.tenants = 0;
  CHECK_THROWS_AS(quota::sim::import_openb(bad), quota::validation_error);
}

TEST_CASE("trace: replay openb in one process gives the report of import then run", "[trace]") {
  const std::vector<std::vector<std::string>> sets = {
      {}, {"elastic_quota"}, {"volcano"}, {"kai_fair_share"}, {"kueue"}, {"yunikorn_limits", "running_limits"}};
  for (const auto& set : sets)
    for (const char* rule : {"hash", "qos"})
      for (const char* pods : {"pods.csv", "no_times.csv"}) {
        if (std::string(rule) == "qos" && std::string(pods) == "no_times.csv") continue;  // no qos column
        auto o = options(pods);
        o.policies = set;
        o.tenant_rule = rule;
        o.time_scale = 10;
        o.tenants = 2;
        INFO(pods << ", tenants by " << rule << ", " << set.size() << " models");
        const std::string direct = report_direct(o);
        CHECK(direct.find("\"jobs\"") != std::string::npos);
        CHECK(direct == report_via_json(o));
        o.hold = true;
        CHECK(report_direct(o) == report_via_json(o));
      }
}

TEST_CASE("trace: compare openb in one process gives the report of import then compare", "[trace]") {
  auto o = options("pods.csv");
  o.tenant_rule = "qos";
  const std::vector<std::string> sets = {"none",           "elastic_quota", "volcano",
                                         "kai_fair_share", "kueue",         "yunikorn_limits+running_limits"};
  const auto tr = quota::sim::read_openb(o);
  const auto direct = quota::sim::compare_policies(quota::sim::openb_scenario(tr, json::array()), sets);
  const auto via_json = quota::sim::compare_policies(json::parse(quota::sim::import_openb(o).dump(1)), sets);
  REQUIRE(direct.size() == sets.size());
  CHECK(quota::sim::compare_report(tr.name, direct).dump(2) == quota::sim::compare_report(tr.name, via_json).dump(2));
  CHECK(quota::sim::compare_svg(tr.name, "alibaba.com/gpu-milli", direct) ==
        quota::sim::compare_svg(tr.name, "alibaba.com/gpu-milli", via_json));
}

TEST_CASE("trace: a trace whose nodes have neither GPU nor CPU names no chart resource, and the loader accepts it",
          "[trace]") {
  quota::sim::openb_options o;
  o.nodes_file = dir + "/nodes_no_cpu_no_gpu.csv";
  o.pods_file = dir + "/pods_memory.csv";
  const json doc = quota::sim::import_openb(o);
  CHECK_FALSE(doc.contains("chart"));
  CHECK_NOTHROW((void)quota::sim::load_scenario(json::parse(doc.dump())));
  CHECK(report_via_json(o) == report_direct(o));
}

TEST_CASE("trace: a trace without GPU nodes imports to a scenario charting CPU, which the loader accepts", "[trace]") {
  quota::sim::openb_options o;
  o.nodes_file = dir + "/nodes_no_gpu.csv";
  o.pods_file = dir + "/pods_cpu.csv";
  const json doc = quota::sim::import_openb(o);
  CHECK(doc.at("chart").at("resource") == "cpu");
  CHECK_NOTHROW((void)quota::sim::load_scenario(json::parse(doc.dump())));
  CHECK(report_via_json(o) == report_direct(o));
}
