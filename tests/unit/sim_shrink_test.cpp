// SPDX-License-Identifier: Apache-2.0
// quota-sim reload events, quota shrink and rolling-budget wake-ups
// (docs/scenario-format.md "Reload events and quota shrink"): the simulator's
// evictions agree with the library's own shrink answers (quota::shrink_tracker
// for running-job limits, kueue_model::shrink_evictions for Kueue), a raise
// before the deadline cancels, and a rolling budget wakes the replay up at the
// first millisecond a denied job fits.
#include <quota_catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <quota/kueue.hpp>
#include <quota/running_limits.hpp>
#include <quota/shrink.hpp>

#include "models.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

constexpr std::int64_t minute = 60'000;

run_result replay(const json& doc, std::int64_t until = -1, std::vector<std::string>* out_ids = nullptr,
                  const std::function<void(const simulator&)>& inspect = {}) {
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  run_result r = sim.run(until, {}, run_options{true});
  if (inspect) inspect(sim);
  if (out_ids)
    for (const auto& e : r.report["totals"].value("shrink_evictions", json::array()))
      out_ids->push_back(e["job"].get<std::string>());
  return r;
}

// Four 2-GPU jobs in queue research, a minute apart, priorities 10, 0, 10, 0.
json four_jobs() {
  json jobs = json::array();
  for (int i = 0; i < 4; ++i)
    jobs.push_back(json{{"id", "j" + std::to_string(i)},
                        {"submit", std::to_string(i) + "m"},
                        {"duration", "3h"},
                        {"queue", "research"},
                        {"namespace", "research"},
                        {"user", "sue"},
                        {"priority", i % 2 == 0 ? 10 : 0},
                        {"request", {{"nvidia.com/gpu", 2}}}});
  return jobs;
}

json cluster() {
  return json{{"nodes", json::array({json{{"name", "n"}, {"count", 2}, {"allocatable", {{"nvidia.com/gpu", 8}}}}})}};
}

json running_limits_scenario(const std::string& behaviour, json events) {
  json pol{{"model", "running_limits"}, {"queues", {{"research", 4}}}, {"shrink", {{"behaviour", behaviour}}}};
  if (behaviour == "evict_after_grace") pol["shrink"]["grace"] = "5m";
  return json{{"name", "rl shrink"},
              {"cluster", cluster()},
              {"policies", json::array({pol})},
              {"jobs", four_jobs()},
              {"events", std::move(events)}};
}

}  // namespace

TEST_CASE("quota-sim shrink: running_limits evictions match shrink_tracker's plan, at reload + grace",
          "[quota-sim][shrink]") {
  const json events =
      json::array({json{{"at", "10m"}, {"type", "reload"}, {"policy", 0}, {"queues", {{"research", 2}}}}});
  std::vector<std::string> sim_ids;
  const auto r = replay(running_limits_scenario("evict_after_grace", events), -1, &sim_ids);
  REQUIRE(r.failures.empty());
  for (const auto& e : r.report["totals"]["shrink_evictions"]) {
    CHECK(e["at_ms"] == 15 * minute);
    CHECK(e["reason"] == "shrink");
  }
  CHECK(r.report["totals"]["reloads"] == 1);

  // the library's answer for the same state
  quota::basic_engine<quota::running_limits_policy, quota::shrink_tracker> e(
      quota::running_limits_policy{}, quota::shrink_tracker(quota::shrink_key::queue, quota::no_resource,
                                                            quota::shrink_behaviour::evict_after_grace(5 * minute)));
  e.model<0>().set_limit(quota::running_limits_policy::scope::queue, "research", 4);
  for (int i = 0; i < 4; ++i) {
    quota::job j;
    j.id = "j" + std::to_string(i);
    j.queue = j.ns = "research";
    j.user = "sue";
    j.priority = i % 2 == 0 ? 10 : 0;
    j.request.set(quota::resources::nvidia_gpu, 2);
    REQUIRE(e.admit(j).allowed());
  }
  e.model<0>().set_limit(quota::running_limits_policy::scope::queue, "research", 2);
  REQUIRE(e.model<1>().on_limit_change("research", 2, 10 * minute));
  std::vector<std::string> lib_ids;
  for (const auto& ev : e.model<1>().plan(e.model<0>())) {
    lib_ids.push_back(ev.job_id);
    CHECK(ev.at_ms == 15 * minute);
  }
  CHECK(sim_ids == lib_ids);
  CHECK(sim_ids == std::vector<std::string>{"j3", "j1"});  // priority 0, newest first
}

TEST_CASE("quota-sim shrink: keep evicts nothing, and a raise before the deadline cancels the evictions",
          "[quota-sim][shrink]") {
  const json lower =
      json{{"at", "10m"}, {"type", "reload"}, {"policy", "running_limits"}, {"queues", {{"research", 2}}}};
  std::vector<std::string> ids;
  auto r = replay(running_limits_scenario("keep", json::array({lower})), -1, &ids);
  CHECK(ids.empty());
  CHECK(r.report["totals"]["preemptions"] == 0);

  const json raise = json{{"at", "14m"}, {"type", "reload"}, {"policy", 0}, {"queues", {{"research", 4}}}};
  ids.clear();
  r = replay(running_limits_scenario("evict_after_grace", json::array({lower, raise})), -1, &ids);
  CHECK(ids.empty());
  CHECK(r.report["totals"]["preemptions"] == 0);

  // a job ending before the deadline brings usage within the limit: only one eviction
  json sc = running_limits_scenario("evict_after_grace", json::array({lower}));
  sc["jobs"][0]["duration"] = "12m";
  ids.clear();
  r = replay(sc, -1, &ids);
  CHECK(ids == std::vector<std::string>{"j3"});
}

TEST_CASE("quota-sim shrink: kueue evictions are kueue_model::shrink_evictions at the deadline",
          "[quota-sim][shrink]") {
  const json doc = quota::load_json_file(std::string(QUOTA_SOURCE_DIR) + "/examples/scenarios/quota_shrink.json");
  std::vector<std::string> lib;
  (void)replay(doc, 39 * minute + 59'000, nullptr, [&](const simulator& sim) {
    const auto* p = sim.quota_engine().model(0).target<quota::kueue_policy>();
    REQUIRE(p);
    CHECK(p->model()
              .shrink_evictions(quota::kueue_shrink_policy::evict_after_grace, 30 * minute, 39 * minute + 59'000,
                                10 * minute)
              .empty());
    lib = p->model().shrink_evictions(quota::kueue_shrink_policy::evict_after_grace, 30 * minute, 40 * minute,
                                      10 * minute);
  });
  std::vector<std::string> sim_ids;
  const auto r = replay(doc, -1, &sim_ids);
  CHECK(r.failures.empty());
  CHECK(std::set<std::string>(sim_ids.begin(), sim_ids.end()) == std::set<std::string>(lib.begin(), lib.end()));
  CHECK(sim_ids == std::vector<std::string>{"r-low-new", "r-low-old"});
}

TEST_CASE("quota-sim shrink: reload bodies are checked at load time with the event's path", "[quota-sim][shrink]") {
  // the problems building the models of `doc` finds (none: empty)
  const auto problems = [](const json& doc) {
    scenario sc = load_scenario(doc);
    try {
      (void)build_models(sc);
    } catch (const quota::validation_error& e) {
      return e.problems();
    }
    return std::vector<quota::diagnostic>{};
  };
  json doc = running_limits_scenario(
      "keep", json::array({json{{"at", "10m"}, {"type", "reload"}, {"policy", 0}, {"queues", {{"research", -1}}}}}));
  auto p = problems(doc);
  REQUIRE(!p.empty());
  CHECK(p.front().path.rfind("$.events[0]", 0) == 0);
  // a budget reload changes budgets only: a new window would recount what was spent
  doc["policies"][0] = json{{"model", "budget"}, {"resource", "nvidia.com/gpu"}, {"budgets", {{"*", "10h"}}}};
  doc["events"][0] = json{{"at", "10m"},         {"type", "reload"},     {"policy", "budget"},
                          {"window", "rolling"}, {"windowLength", "1d"}, {"budgets", {{"*", "1h"}}}};
  p = problems(doc);
  REQUIRE(p.size() == 1);
  CHECK(p.front().path == "$.events[0]");
  CHECK(p.front().message.find("window changes from calendar to rolling") != std::string::npos);
  doc["events"][0].erase("window");
  doc["events"][0].erase("windowLength");
  CHECK(problems(doc).empty());
  // and a lower budget evicts nothing: evict_after_grace is refused for it
  doc["policies"][0]["shrink"] = json{{"behaviour", "evict_after_grace"}, {"grace", "1h"}};
  p = problems(doc);
  REQUIRE(p.size() == 1);
  CHECK(p.front().path == "$.policies[0].shrink.behaviour");
}

TEST_CASE("quota-sim budget: a rolling window wakes the replay at the first millisecond a denied job fits",
          "[quota-sim][budget]") {
  const json doc = quota::load_json_file(std::string(QUOTA_SOURCE_DIR) + "/examples/scenarios/budget_rolling.json");
  const auto r = replay(doc);
  REQUIRE(r.failures.empty());
  for (const auto& j : r.report["jobs"])
    if (j["id"] == "a2") CHECK(j["started_ms"] == 26 * 60 * minute + 30 * minute);
}

TEST_CASE("quota-sim reload: a rebuilt model keeps the charges a claim model holds, and the admitted pods of each job",
          "[quota-sim][shrink]") {
  // KAI claims charge the shared claim's 4 GPUs to team-a (its first holder); Volcano accounts them.
  json doc = quota::load_json_file(std::string(QUOTA_SOURCE_DIR) + "/examples/scenarios/kai_claims_fair_share.json");
  auto queue = [](const std::string& name, int weight) {
    return json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "Queue"},
                {"metadata", {{"name", name}}},
                {"spec", {{"weight", weight}, {"reclaimable", true}}},
                {"status", {{"state", "Open"}}}};
  };
  doc["policies"][0] = json{{"model", "volcano"}, {"objects", json::array({queue("team-a", 1), queue("team-b", 1)})}};
  doc.erase("expect");
  doc["jobs"] = json::array({doc["jobs"][1]});  // a-train alone, from 10m to 1h10m
  doc["events"] = json::array({json{{"at", "30m"},
                                    {"type", "reload"},
                                    {"policy", "volcano"},
                                    {"objects", json::array({queue("team-a", 1), queue("team-b", 3)})}}});
  const std::string ptr = "/queues/team-a/allocated/nvidia.com~1gpu";
  doc["expect"] = json::array({json{{"at", "25m"}, {"model", "volcano"}, {"pointer", ptr}, {"equals", 4}},
                               json{{"at", "35m"}, {"model", "volcano"}, {"pointer", ptr}, {"equals", 4}}});
  const run_result r = replay(doc);
  for (const auto& f : r.failures) UNSCOPED_INFO(f.path + ": expected " + f.expected + ", got " + f.actual);
  CHECK(r.failures.empty());
}

TEST_CASE(
    "quota-sim reload: a body's job checks cover the jobs submitted while it is in force; a waiting job it "
    "cannot hold refuses it at run time",
    "[quota-sim][shrink]") {
  auto queue = [](const std::string& name) {
    return json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "Queue"},
                {"metadata", {{"name", name}}},
                {"spec", {{"weight", 1}}},
                {"status", {{"state", "Open"}}}};
  };
  auto gpu_job = [](const std::string& id, const std::string& q, const std::string& submit) {
    return json{{"id", id}, {"submit", submit}, {"duration", "5m"}, {"queue", q}, {"request", {{"nvidia.com/gpu", 1}}}};
  };
  json doc{{"name", "reload drops and adds queues"},
           {"cluster", {{"nodes", json::array({json{{"name", "gpu"}, {"allocatable", {{"nvidia.com/gpu", 8}}}}})}}},
           {"policies", json::array({json{{"model", "volcano"}, {"objects", json::array({queue("a"), queue("b")})}}})},
           {"jobs", json::array({gpu_job("b-1", "b", "0"), gpu_job("c-1", "c", "20m")})},
           {"events", json::array({json{{"at", "10m"},
                                        {"type", "reload"},
                                        {"policy", "volcano"},
                                        {"objects", json::array({queue("a"), queue("c")})}}})},
           {"expect", json::array({json{{"at", "end"}, {"job", "b-1"}, {"state", "finished"}},
                                   json{{"at", "end"}, {"job", "c-1"}, {"state", "finished"}}})}};
  // b-1 ended before the reload drops b; c-1 comes after it adds c: both are fine
  run_result r = replay(doc);
  CHECK(r.failures.empty());

  // c-1 before the reload: no queue c then
  json early = doc;
  early["jobs"][1]["submit"] = "5m";
  try {
    scenario sc = load_scenario(early);
    (void)build_models(sc);
    FAIL("a job naming a queue its configuration does not have was accepted");
  } catch (const quota::validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "$.jobs[1].queue");
  }

  // b-2 still waits in b when the reload drops b: the reload is refused at run time
  json waiting = doc;
  waiting["jobs"].push_back(gpu_job("b-2", "b", "9m"));
  waiting["jobs"][2]["request"]["nvidia.com/gpu"] = 9;  // never fits
  waiting["events"][0]["expect_error"] = json{{"message", "waiting job 'b-2' cannot be held"}};
  waiting["jobs"][1]["submit"] = "20m";
  waiting["jobs"][1]["queue"] = "a";  // c is never added: the reload is refused
  r = replay(waiting);
  for (const auto& f : r.failures) UNSCOPED_INFO(f.path + ": expected " + f.expected + ", got " + f.actual);
  CHECK(r.failures.empty());
}
