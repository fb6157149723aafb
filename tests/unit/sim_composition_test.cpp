// SPDX-License-Identifier: Apache-2.0
// quota-sim as a host of the optional capabilities (docs/architecture.md
// "Optional capabilities", docs/scenario-format.md "Order and cycles"): the
// order of a pass is the ordering model's, demand is live, a what-if agrees
// with a run at the same instant for every model, cycles defer the pass to
// the next boundary, and bad scheduler settings name the field.
#include <quota_catch.hpp>

#include <string>
#include <vector>

#include "explain.hpp"
#include "generate.hpp"
#include "models.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

constexpr std::int64_t minute = 60'000;

json job_json(const std::string& id, const std::string& tenant, std::int64_t submit, int gpus,
              std::int64_t duration = 10 * 60 * minute, int priority = 100) {
  return json{
      {"id", id},
      {"submit", submit},
      {"duration", duration},
      {"namespace", tenant},
      {"queue", tenant},
      {"user", "user-" + tenant},
      {"groups", json::array({tenant})},
      {"priority", priority},
      {"request",
       {{"cpu", std::to_string(8 * gpus)}, {"memory", std::to_string(64 * gpus) + "Gi"}, {"nvidia.com/gpu", gpus}}}};
}

// A generated cluster (4 nodes of 8 GPUs, tenants team-00..team-03) under one
// model, no preemption: team-00 fills 24 GPUs at time 0.
json base_scenario(const std::string& model) {
  generate_options o;
  o.nodes = 4;
  o.tenants = 4;
  o.jobs = 1;
  o.policies = {model};
  json doc = generate_scenario(o);
  doc["scheduler"] = json{{"preemption", false}};
  doc["jobs"] = json::array();
  for (int i = 0; i < 3; ++i) doc["jobs"].push_back(job_json("fill-" + std::to_string(i), "team-00", 0, 8));
  return doc;
}

// Replays the scenario; every failed expectation is reported as a failed check.
run_result replay_checked(const json& doc) {
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  run_result r = sim.run();
  for (const auto& f : r.failures) FAIL_CHECK(f.path << ": expected " << f.expected << ", got " << f.actual);
  return r;
}

std::string state_of(const json& report, const std::string& id) {
  for (const auto& j : report["jobs"])
    if (j["id"] == id) return j["state"].get<std::string>();
  return "?";
}

}  // namespace

TEST_CASE("composition: quota-sim explain agrees with a run for a job submitted at the same instant, every model") {
  register_models();
  const std::int64_t at = 10 * minute;
  std::size_t asked = 0;
  for (const auto& [name, kind] : model_kinds()) {
    if (!kind.synthesize) continue;
    CAPTURE(name);
    ++asked;
    for (int gpus : {2, 8}) {
      CAPTURE(gpus);
      // the what-if: replayed to `at`, the job explained as if submitted then
      json doc = base_scenario(name);
      doc["jobs"].push_back(job_json("probe", "team-01", at + 1, gpus));
      scenario sc = load_scenario(doc);
      auto models = build_models(sc);
      simulator sim(std::move(sc), std::move(models));
      (void)sim.run(at);
      const job_spec* spec = nullptr;
      for (const auto& js : sim.spec().jobs)
        if (js.id == "probe") spec = &js;
      REQUIRE(spec != nullptr);
      const quota::explanation x = sim.quota_engine().explain(job_of(*spec, at));
      // the run: the same job submitted at that instant (nodes have room: only quota decides)
      json doc2 = base_scenario(name);
      doc2["jobs"].push_back(job_json("probe", "team-01", at, gpus));
      scenario sc2 = load_scenario(doc2);
      auto models2 = build_models(sc2);
      simulator run(std::move(sc2), std::move(models2));
      const run_result r = run.run(at);
      CHECK(x.allowed() == (state_of(r.report, "probe") == "running"));
    }
  }
  CHECK(asked >= 10);
}

TEST_CASE("composition: a Volcano queue without demand is explained as a run admits it, not as deserved 0") {
  register_models();
  // before its job arrives, team-01 has no demand: deserved 0; once submitted it deserves a share
  json doc = base_scenario("volcano");
  doc["jobs"].push_back(job_json("probe", "team-01", 10 * minute + 1, 4));
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  (void)sim.run(10 * minute);
  quota::job probe;
  for (const auto& js : sim.spec().jobs)
    if (js.id == "probe") probe = job_of(js, 10 * minute);
  CHECK(sim.quota_engine().check(probe).denied());  // no demand counted: nothing deserved
  CHECK(sim.quota_engine().explain(probe).allowed());
}

TEST_CASE("composition: KAI fair shares follow jobs as they arrive, finish and are deleted") {
  register_models();
  json doc = base_scenario("kai_fair_share");
  doc["jobs"] =
      json::array({job_json("a", "team-00", 0, 8, 60 * minute), job_json("b", "team-01", 10 * minute, 8, 20 * minute),
                   job_json("c", "team-02", 5 * minute, 8, 60 * minute)});
  doc["events"] = json::array({json{{"at", "15m"}, {"type", "delete"}, {"job", "c"}}});
  const auto share = [](const std::string& q) { return "/queues/" + q + "/fair_share/nvidia.com~1gpu"; };
  doc["expect"] = json::array({
      // only team-00 asks: all 8 of its request (the others: nothing)
      json{{"at", "1m"}, {"model", "kai_fair_share"}, {"pointer", share("team-00")}, {"equals", 8}},
      json{{"at", "1m"}, {"model", "kai_fair_share"}, {"pointer", share("team-01")}, {"equals", 0}},
      // team-02 and team-01 arrive: each gets its request (32 GPUs cover 24)
      json{{"at", "11m"}, {"model", "kai_fair_share"}, {"pointer", share("team-01")}, {"equals", 8}},
      json{{"at", "11m"}, {"model", "kai_fair_share"}, {"pointer", share("team-02")}, {"equals", 8}},
      // c deleted at 15m, b finished at 30m: their queues ask nothing any more
      json{{"at", "16m"}, {"model", "kai_fair_share"}, {"pointer", share("team-02")}, {"equals", 0}},
      json{{"at", "31m"}, {"model", "kai_fair_share"}, {"pointer", share("team-01")}, {"equals", 0}},
      json{{"at", "31m"}, {"model", "kai_fair_share"}, {"pointer", share("team-00")}, {"equals", 8}},
  });
  const run_result r = replay_checked(doc);
  CHECK(r.failures.empty());
}

TEST_CASE("composition: in cycle mode the pass waits for the next cycle boundary") {
  register_models();
  json doc = base_scenario("kueue");
  doc["scheduler"]["cycle"] = "10m";
  doc["jobs"].push_back(job_json("late", "team-01", 12 * minute, 2));
  doc["expect"] = json::array({
      json{{"at", "0"}, {"job", "fill-0"}, {"state", "running"}},  // 0 is a boundary
      json{{"at", "12m"}, {"job", "late"}, {"state", "pending"}},  // submitted between boundaries
      json{{"at", "19m"}, {"job", "late"}, {"state", "pending"}},
      json{{"at", "20m"}, {"job", "late"}, {"state", "running"}},  // the next boundary's pass
  });
  const run_result r = replay_checked(doc);
  CHECK(r.report["scheduler"]["cycle_ms"] == 10 * minute);
  CHECK(r.report["scheduler"]["order"] == "kueue");
  // the same scenario with a pass per instant admits the job when it arrives
  doc["scheduler"].erase("cycle");
  doc["expect"] = json::array({json{{"at", "12m"}, {"job", "late"}, {"state", "running"}}});
  CHECK(replay_checked(doc).failures.empty());
}

TEST_CASE("composition: scheduler.order and scheduler.cycle are checked, naming the field") {
  register_models();
  const auto problem_of = [](const json& doc) -> std::string {
    try {
      scenario sc = load_scenario(doc);
      auto models = build_models(sc);
      simulator sim(std::move(sc), std::move(models));
    } catch (const quota::validation_error& e) {
      return e.problems().empty() ? std::string() : e.problems().front().path + ": " + e.problems().front().message;
    }
    return {};
  };
  json doc = base_scenario("kueue");
  doc["scheduler"]["order"] = "volcano";  // not composed
  CHECK_THAT(problem_of(doc), Catch::Contains("scheduler.order") && Catch::Contains("not composed"));
  json lim = base_scenario("yunikorn_limits");
  lim["scheduler"]["order"] = "yunikorn_limits";  // composed, but it does not order
  CHECK_THAT(problem_of(lim), Catch::Contains("scheduler.order") && Catch::Contains("does not order"));
  for (const json& bad : {json(0), json(-5), json("0s"), json("soon"), json(true)}) {
    json c = base_scenario("kueue");
    c["scheduler"]["cycle"] = bad;
    CAPTURE(bad.dump());
    CHECK_THAT(problem_of(c), Catch::Contains("scheduler.cycle"));
  }
  json ok = base_scenario("kueue");
  ok["scheduler"]["order"] = "priority";  // the host's own order
  ok["scheduler"]["cycle"] = "1s";
  CHECK(problem_of(ok).empty());
}

TEST_CASE("composition: Volcano's Queue priority decides who gets a freed GPU, not the jobs' priorities") {
  register_models();
  json doc = base_scenario("volcano_capacity");
  doc["cluster"]["nodes"][0]["count"] = 1;                    // one node, 8 GPUs
  doc["policies"][0]["objects"][1]["spec"]["priority"] = 10;  // team-01
  doc["jobs"] = json::array({job_json("hold", "team-00", 0, 4, 60 * minute), job_json("keep", "team-01", 0, 4),
                             job_json("t0-wait", "team-00", 5 * minute, 4, 60 * minute, 1000),
                             job_json("t1-wait", "team-01", 6 * minute, 4, 60 * minute, 0)});
  doc["expect"] = json::array({json{{"at", "1h"}, {"job", "t1-wait"}, {"state", "running"}},
                               json{{"at", "1h"}, {"job", "t0-wait"}, {"state", "pending"}}});
  const run_result r = replay_checked(doc);
  // with the host's own order, the higher job priority wins instead
  doc["scheduler"]["order"] = "priority";
  doc["expect"] = json::array({json{{"at", "1h"}, {"job", "t0-wait"}, {"state", "running"}}});
  CHECK(replay_checked(doc).failures.empty());
}

TEST_CASE("composition: when only the node is full, the host preempts the minimal set on one node") {
  register_models();
  // running_limits has no node-level rule: kube-scheduler's (lower priority), with its reprieve
  json doc = base_scenario("running_limits");
  doc["scheduler"]["preemption"] = true;
  doc["cluster"]["nodes"][0]["count"] = 1;  // one node, 8 GPUs
  doc["jobs"] = json::array({job_json("older", "team-00", 0, 3, 600 * minute, 1),
                             job_json("big-newer", "team-01", 1 * minute, 4, 600 * minute, 1),
                             job_json("tiny", "team-02", 2 * minute, 1, 600 * minute, 0),
                             job_json("urgent", "team-03", 10 * minute, 4, 60 * minute, 10)});
  // removing the least important first would take tiny, then big-newer; the reprieve keeps
  // older (3 GPUs) and then tiny (1 GPU): big-newer alone makes room for 4
  doc["expect"] = json::array({json{{"at", "10m"}, {"job", "urgent"}, {"state", "running"}},
                               json{{"at", "10m"}, {"preemptions", 1}},
                               json{{"at", "10m"}, {"job", "big-newer"}, {"state", "preempted"}},
                               json{{"at", "10m"}, {"job", "tiny"}, {"state", "running"}},
                               json{{"at", "10m"}, {"job", "older"}, {"state", "running"}}});
  const run_result r = replay_checked(doc);
  CHECK(r.failures.empty());
}

TEST_CASE("composition: a model's node-level rule decides who goes when only the node is full") {
  register_models();
  // KAI's preempt predicate: the same queue's lower-priority jobs only, never another queue's
  json doc = base_scenario("kai_fair_share");
  doc["scheduler"]["preemption"] = true;
  doc["cluster"]["nodes"][0]["count"] = 1;
  doc["jobs"] = json::array({job_json("own-low", "team-00", 0, 4, 600 * minute, 1),
                             job_json("other-lower", "team-01", 1 * minute, 4, 600 * minute, 0),
                             job_json("urgent", "team-00", 10 * minute, 4, 60 * minute, 10)});
  doc["expect"] = json::array({json{{"at", "10m"}, {"job", "urgent"}, {"state", "running"}},
                               json{{"at", "10m"}, {"job", "own-low"}, {"state", "preempted"}},
                               json{{"at", "10m"}, {"job", "other-lower"}, {"state", "running"}}});
  const run_result r = replay_checked(doc);
  CHECK(r.failures.empty());
}

TEST_CASE("composition: a denied head of a StrictFIFO ClusterQueue holds back the rest of it") {
  register_models();
  for (const char* strategy : {"StrictFIFO", "BestEffortFIFO"}) {
    CAPTURE(strategy);
    json doc = base_scenario("kueue");
    doc["scheduler"]["preemption"] = false;
    for (auto& o : doc["policies"][0]["objects"])
      if (o["kind"] == "ClusterQueue" && o["metadata"]["name"] == "team-01") o["spec"]["queueingStrategy"] = strategy;
    // team-01's head asks more than the cohort has left; a smaller job of the same queue would fit
    doc["jobs"].push_back(job_json("t1-big", "team-01", 5 * minute, 16, 60 * minute, 100));
    doc["jobs"].push_back(job_json("t1-small", "team-01", 6 * minute, 2, 60 * minute, 0));
    const bool strict = std::string(strategy) == "StrictFIFO";
    doc["expect"] = json::array({json{{"at", "10m"}, {"job", "t1-big"}, {"state", "pending"}},
                                 json{{"at", "10m"}, {"job", "t1-small"}, {"state", strict ? "pending" : "running"}}});
    CHECK(replay_checked(doc).failures.empty());
  }
}

TEST_CASE("composition: a reload that moves a LocalQueue moves its pending jobs to the new ClusterQueue's line") {
  register_models();
  json doc = base_scenario("kueue");
  doc["scheduler"]["preemption"] = false;
  auto& objects = doc["policies"][0]["objects"];
  for (auto& o : objects)
    if (o["kind"] == "ClusterQueue" && o["metadata"]["name"] == "team-01") o["spec"]["queueingStrategy"] = "StrictFIFO";
  const auto mover = [](const char* cq) {
    return json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "LocalQueue"},
                {"metadata", {{"name", "mover"}, {"namespace", "team-01"}}},
                {"spec", {{"clusterQueue", cq}}}};
  };
  json after = objects;
  objects.push_back(mover("team-01"));
  after.push_back(mover("team-02"));
  // team-01's head never fits and, StrictFIFO, holds back the rest of team-01
  doc["jobs"].push_back(job_json("t1-big", "team-01", 5 * minute, 16, 60 * minute, 100));
  json moved = job_json("moved", "team-01", 8 * minute, 2, 60 * minute, 0);
  moved["queue"] = "mover";
  doc["jobs"].push_back(moved);
  json early = job_json("moved-early", "team-01", 6 * minute, 2, 60 * minute, 0);
  early["queue"] = "mover";
  doc["jobs"].push_back(early);
  json stays = job_json("stays", "team-01", 8 * minute, 2, 60 * minute, 0);
  doc["jobs"].push_back(stays);
  // from 7m, the LocalQueue feeds team-02's ClusterQueue: its job no longer waits behind team-01's head
  doc["events"] = json::array({json{{"at", "7m"}, {"type", "reload"}, {"policy", "kueue"}, {"objects", after}}});
  doc["expect"] = json::array({json{{"at", "10m"}, {"job", "t1-big"}, {"state", "pending"}},
                               json{{"at", "10m"}, {"job", "stays"}, {"state", "pending"}},
                               json{{"at", "6m30s"}, {"job", "moved-early"}, {"state", "pending"}},
                               json{{"at", "7m30s"}, {"job", "moved-early"}, {"state", "running"}},
                               json{{"at", "10m"}, {"job", "moved"}, {"state", "running"}}});
  CHECK(replay_checked(doc).failures.empty());
}

TEST_CASE("composition: a reload that raises a limit a request alone exceeded lets its jobs run") {
  register_models();
  json doc = base_scenario("yunikorn_limits");
  doc["jobs"] = json::array();
  // each user of team-01 may use 2 GPUs: a 4-GPU job is refused by its request alone
  doc["jobs"].push_back(job_json("wide", "team-01", minute, 4, 60 * minute));
  json config = doc["policies"][0]["config"];
  for (auto& q : config["partitions"][0]["queues"][0]["queues"])
    if (q["name"] == "team-01") q["limits"][0]["maxresources"]["nvidia.com/gpu"] = 8;
  doc["events"] =
      json::array({json{{"at", "5m"}, {"type", "reload"}, {"policy", "yunikorn_limits"}, {"config", config}}});
  doc["expect"] = json::array({json{{"at", "4m"}, {"job", "wide"}, {"state", "pending"}},
                               json{{"at", "6m"}, {"job", "wide"}, {"state", "running"}}});
  CHECK(replay_checked(doc).failures.empty());
}

TEST_CASE("composition: a node that joins or leaves changes the total Volcano and KAI divide") {
  register_models();
  const auto node = [](const char* name) {
    return json{{"name", name}, {"allocatable", {{"cpu", "128"}, {"memory", "1Ti"}, {"nvidia.com/gpu", 8}}}};
  };
  const json volcano = {{"model", "volcano"},
                        {"options", {{"plugin", "proportion"}}},
                        {"objects", json::array({json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                                                      {"kind", "Queue"},
                                                      {"metadata", {{"name", "team-a"}}},
                                                      {"spec", {{"weight", 1}}}}})}};
  json doc = {{"name", "a node joins"},
              {"cluster", {{"nodes", json::array({node("node-1")})}}},
              {"scheduler", {{"preemption", false}}},
              {"policies", json::array({volcano})},
              {"jobs", json::array({job_json("a", "team-a", 0, 8), job_json("b", "team-a", minute, 8)})},
              {"events", json::array({json{{"at", "5m"}, {"type", "node_add"}, {"node", node("node-2")}}})},
              // the queue deserves the whole cluster: 8 GPUs, then 16
              {"expect", json::array({json{{"at", "4m"}, {"job", "b"}, {"state", "pending"}},
                                      json{{"at", "4m"}, {"job", "b"}, {"reason", "volcano.over_deserved"}},
                                      json{{"at", "6m"}, {"job", "b"}, {"state", "running"}}})}};
  CHECK(replay_checked(doc).failures.empty());

  // KAI divides the cluster too; a reload after the node joined divides the cluster as it is
  json kai = base_scenario("kai_fair_share");
  kai["cluster"]["nodes"] = json::array({node("node-1")});
  kai["jobs"] = json::array({job_json("a", "team-00", 0, 8), job_json("b", "team-00", minute, 8, minute)});
  kai["events"] = json::array({json{{"at", "5m"}, {"type", "node_add"}, {"node", node("node-2")}}});
  kai["expect"] = json::array({json{{"at", "4m"}, {"job", "b"}, {"state", "pending"}},
                               json{{"at", "5m30s"}, {"job", "b"}, {"state", "running"}}});
  CHECK(replay_checked(kai).failures.empty());
  // b ran from 5m to 6m; the model reloaded at 6m30s divides 16 GPUs, not the 8 the file's nodes have
  json reload = kai["policies"][0];
  reload.erase("model");
  reload["at"] = "6m30s";
  reload["type"] = "reload";
  reload["policy"] = "kai_fair_share";
  kai["events"].push_back(reload);
  kai["jobs"].push_back(job_json("c", "team-00", 7 * minute, 8));
  kai["expect"] = json::array({json{{"at", "5m30s"}, {"job", "b"}, {"state", "running"}},
                               json{{"at", "6m10s"}, {"job", "b"}, {"state", "finished"}},
                               json{{"at", "7m30s"}, {"job", "c"}, {"state", "running"}}});
  CHECK(replay_checked(kai).failures.empty());
}

TEST_CASE("composition: a node removal a model cannot take stops the replay, naming the event") {
  register_models();
  // Volcano's capacity plugin keeps guarantees within the cluster: 12 GPUs are
  // guaranteed, and removing one of two 8-GPU nodes would leave 8
  const json queue = {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                      {"kind", "Queue"},
                      {"metadata", {{"name", "team-a"}}},
                      {"spec", {{"guarantee", {{"resource", {{"nvidia.com/gpu", "12"}}}}}}}};
  json doc = {
      {"name", "a node leaves"},
      {"cluster",
       {{"nodes", json::array({json{{"name", "gpu"},
                                    {"count", 2},
                                    {"allocatable", {{"cpu", "128"}, {"memory", "1Ti"}, {"nvidia.com/gpu", 8}}}}})}}},
      {"scheduler", {{"preemption", false}}},
      {"policies", json::array({json{{"model", "volcano_capacity"}, {"objects", json::array({queue})}}})},
      {"jobs", json::array({job_json("a", "team-a", 0, 8)})},
      {"events", json::array({json{{"at", "5m"}, {"type", "node_remove"}, {"name", "gpu-1"}}})}};
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  try {
    (void)sim.run();
    FAIL("expected a state_error");
  } catch (const quota::state_error& e) {
    const std::string what = e.what();
    CHECK_THAT(what,
               Catch::Contains(
                   "$.events[0]: node_remove at 5m: policies[0] (volcano_capacity) cannot take the new cluster total"));
    CHECK_THAT(what, Catch::Contains("total/nvidia.com/gpu: sum of guarantees 12 exceeds the cluster total 8"));
  }
}

TEST_CASE("composition: a job on a shared claim preempts on the claim's node, not on the first node with room") {
  // node-1 is full of low-big, node-2 holds low-one and the claim (bound there by h1).
  // h2 names the claim: it must run on node-2, so its victim is low-one, not low-big.
  const json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "c"}, {"namespace", "ml"}}},
      {"spec",
       {{"devices",
         {{"requests",
           json::array(
               {{{"name", "g"},
                 {"exactly",
                  {{"deviceClassName", "gpu.nvidia.com"}, {"allocationMode", "ExactCount"}, {"count", 1}}}}})}}}}}};
  const auto node = [](const char* name) {
    return json{{"name", name}, {"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"nvidia.com/gpu", 2}}}};
  };
  const auto pod = [](const char* id, std::int64_t submit, int gpus, int priority, bool with_claim) {
    json j = {{"id", id},          {"submit", submit},     {"namespace", "ml"},
              {"queue", "team-a"}, {"priority", priority}, {"request", {{"cpu", "1"}, {"nvidia.com/gpu", gpus}}}};
    if (with_claim) j["claims"] = json::array({"c"});
    return j;
  };
  json doc = {{"name", "claim node victims"},
              {"cluster", {{"nodes", json::array({node("node-1"), node("node-2")})}}},
              {"scheduler", {{"placement", "first-fit"}, {"preemption", true}}},
              {"policies", json::array({{{"model", "kai_claims"}, {"objects", json::array({claim})}}})},
              {"jobs", json::array({pod("low-big", 0, 2, 0, false), pod("low-one", minute, 1, 0, false),
                                    pod("h1", 2 * minute, 0, 10, true), pod("h2", 3 * minute, 1, 10, true)})},
              {"expect", json::array({{{"at", 2 * minute + 1}, {"job", "h1"}, {"node", "node-2"}},
                                      {{"at", 3 * minute + 1}, {"job", "h2"}, {"node", "node-2"}},
                                      {{"at", 3 * minute + 1}, {"job", "low-one"}, {"state", "preempted"}},
                                      {{"at", 3 * minute + 1}, {"job", "low-big"}, {"state", "running"}},
                                      {{"at", "end"}, {"preemptions", 1}}})}};
  const run_result r = replay_checked(doc);
  CHECK(r.failures.empty());
}
