// trace: `quota-sim import openb` on small hand-written CSV files (the real
// trace is tested by trace_replay_test.cpp when ../shared is present).
#include <quota_catch.hpp>

#include <string>
#include <vector>

#include "openb.hpp"

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
