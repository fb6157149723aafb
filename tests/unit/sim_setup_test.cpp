// SPDX-License-Identifier: Apache-2.0
// quota-sim's set-up of a scenario (docs/scenario-format.md "Initial state",
// "Expected errors", reload options): jobs running at time 0 are committed
// without an admission check, Kueue's Evicted mark orders its victims, a file
// or a reload event may expect to be refused, a reload that omits
// options keeps those in force, and an expectation's query (a model's
// question with arguments, or a what-if job) is checked at load time and
// answered at its instant.
#include <quota_catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <quota/json.hpp>

#include "models.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

run_result replay(const json& doc) {
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  return sim.run(-1, {}, run_options{true});
}

json example(const std::string& name) {
  return quota::load_json_file(std::string(QUOTA_SOURCE_DIR) + "/examples/scenarios/" + name);
}

// Two running jobs of queue q at the start where running_limits allows one.
json two_running() {
  return json{
      {"name", "running at the start"},
      {"cluster", {{"nodes", json::array({json{{"name", "n"}, {"count", 2}, {"allocatable", {{"cpu", "8"}}}}})}}},
      {"policies", json::array({json{{"model", "running_limits"}, {"queues", {{"q", 1}}}}})},
      {"jobs",
       json::array(
           {json{{"id", "r1"},
                 {"running", true},
                 {"node", "n-1"},
                 {"queue", "q"},
                 {"duration", "1h"},
                 {"request", {{"cpu", "6"}}}},
            json{{"id", "r2"}, {"running", true}, {"queue", "q"}, {"duration", "30m"}, {"request", {{"cpu", "6"}}}},
            json{{"id", "later"}, {"submit", "1m"}, {"queue", "q"}, {"request", {{"cpu", "1"}}}}})}};
}

std::vector<std::string> paths_of(const quota::validation_error& e) {
  std::vector<std::string> out;
  for (const auto& p : e.problems()) out.push_back(p.path);
  return out;
}

}  // namespace

TEST_CASE("scenario: jobs running at the start are placed and committed without an admission check",
          "[quota-sim][setup]") {
  const run_result r = replay(two_running());
  CHECK(r.failures.empty());
  const json& jobs = r.report["jobs"];
  auto job = [&](const std::string& id) {
    for (const auto& j : jobs)
      if (j["id"] == id) return j;
    return json();
  };
  // both run from 0, although the limit is 1: restored, not admitted through check
  CHECK(job("r1")["started_ms"] == 0);
  CHECK(job("r2")["started_ms"] == 0);
  // r1 on its node n-1, so first-fit puts r2 on n-0 (6 + 6 cpu fit on no single node)
  // the limit (1) sees both: the later job waits until both ended (r2 at 30m, r1 at 1h)
  CHECK(job("later")["started_ms"] == 3'600'000);
  CHECK(r.report["totals"]["admitted"] == 3);
}

TEST_CASE("scenario: a running job that fits no node, or names a wrong node, is an error with its JSON path",
          "[quota-sim][setup]") {
  json doc = two_running();
  doc["jobs"][1]["node"] = "n-1";  // r1 holds 6 of n-1's 8 cpu
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  try {
    simulator sim(std::move(sc), std::move(models));
    FAIL("a running job that does not fit its node was accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.jobs[1].node"});
    CHECK(std::string(e.what()).find("fit not on node 'n-1'") != std::string::npos);
  }
  json bad = two_running();
  bad["jobs"][0]["node"] = "nowhere";
  bad["jobs"][1]["submit"] = "1m";
  bad["jobs"][2]["node"] = "n-0";    // not running
  bad["jobs"][2]["evicted"] = true;  // not running, and no kueue policy
  try {
    (void)load_scenario(bad);
    FAIL("bad initial state accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) ==
          std::vector<std::string>{"$.jobs[0].node", "$.jobs[1].submit", "$.jobs[2].node", "$.jobs[2].evicted"});
  }
  json fat = two_running();
  fat["jobs"][1]["request"]["cpu"] = "9";  // no node has 9 cpu
  scenario sc2 = load_scenario(fat);
  auto models2 = build_models(sc2);
  REQUIRE_THROWS_AS(simulator(std::move(sc2), std::move(models2)), quota::validation_error);
}

TEST_CASE("scenario: Kueue takes a running workload marked Evicted before any other candidate", "[quota-sim][setup]") {
  const json doc = example("kueue_initial_state.json");
  const run_result with = replay(doc);
  CHECK(with.failures.empty());
  // the same state without the mark: the lower-priority workload is the victim
  json plain = doc;
  plain["jobs"][1].erase("evicted");
  plain["expect"] = json::array({json{{"at", "30s"}, {"job", "a-1"}, {"victims", json::array({"b-old"})}},
                                 json{{"at", "1m"}, {"job", "b-old"}, {"state", "preempted"}},
                                 json{{"at", "1m"}, {"job", "b-evicted"}, {"state", "running"}}});
  const run_result without = replay(plain);
  CHECK(without.failures.empty());
}

TEST_CASE("scenario: expect_error matches problems by id, path and message, and every problem must be expected",
          "[quota-sim][setup]") {
  const std::vector<quota::diagnostic> got{{"$.jobs[0].request.cpu", "[quota.parse_error.101] malformed quantity 'x'"},
                                           {"$.jobs[1].queue", "no queue 'z'"}};
  auto x = [](std::string id, std::string path, std::string msg) {
    return error_expectation{std::move(id), std::move(path), std::move(msg), "$.expect_error"};
  };
  std::vector<std::string> miss;
  CHECK(settle_expected_errors({x("quota.parse_error.101", "$.jobs[0].request.cpu", ""), x("", "", "no queue")}, got,
                               miss));
  CHECK(miss.empty());
  // the second problem is not expected
  CHECK_FALSE(settle_expected_errors({x("quota.parse_error.101", "", "")}, got, miss));
  REQUIRE(miss.size() == 1);
  CHECK(miss[0].find("unexpected problem $.jobs[1].queue") != std::string::npos);
  // a problem without a bracketed id is a validation error (201)
  miss.clear();
  CHECK_FALSE(
      settle_expected_errors({x("quota.parse_error.101", "$.jobs[1].queue", ""), x("", "", "malformed")}, got, miss));
  CHECK(error_id_of("no queue 'z'") == "quota.validation_error.201");
  CHECK(error_id_of("$.x: [quota.state_error.501] busy") == "quota.state_error.501");
  // the loader checks expect_error itself
  json doc = two_running();
  doc["expect_error"] = json::array({json{{"id", "validation_error.201"}}, json::object()});
  try {
    (void)load_scenario(doc);
    FAIL("bad expect_error accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect_error[0].id", "$.expect_error[1]"});
  }
}

TEST_CASE("scenario: a reload event's expected errors refuse it, at load time or when it is applied",
          "[quota-sim][setup]") {
  const json doc = example("kueue_reload_refused.json");
  // load time: the malformed reload's problem (found when its body is built
  // as a model) is taken by its expect_error, and the event is skipped
  scenario sc = load_scenario(doc);
  REQUIRE(sc.events.size() == 3);
  (void)build_models(sc);
  CHECK_FALSE(sc.events[0].refused);
  CHECK(sc.events[1].refused);
  CHECK_FALSE(sc.events[2].refused);
  const run_result r = replay(doc);
  CHECK(r.failures.empty());
  // the same reload expected with another id: the problem stays, with what did not match
  json other = doc;
  other["events"][1]["expect_error"]["id"] = "quota.validation_error.201";
  scenario sc_other = load_scenario(other);
  try {
    (void)build_models(sc_other);
    FAIL("a reload refused with another error was accepted");
  } catch (const quota::validation_error& e) {
    const auto ps = paths_of(e);
    CHECK(std::count(ps.begin(), ps.end(), "$.events[1].expect_error") == 2);  // not found; unexpected
  }
  // a malformed expect_error is never taken by itself
  json malformed = doc;
  malformed["events"][1]["expect_error"] = json{{"message", "unknown field"}, {"bogus", 1}};
  try {
    (void)load_scenario(malformed);
    FAIL("a malformed expect_error was accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.events[1].expect_error.bogus"});
  }
  // run time: a reload that applies fails its expectation, and the replay goes on
  json applies = doc;
  applies["events"][0]["objects"][0]["metadata"]["name"] = "f";
  applies["events"][0]["objects"][1]["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "f";
  const run_result a = replay(applies);
  REQUIRE(a.failures.size() == 1);
  CHECK(a.failures[0].path == "$.events[0].expect_error");
  CHECK(a.failures[0].actual == "it was applied");
  // without expect_error, the same refusal stops the run (as before)
  json stops = doc;
  stops["events"][0].erase("expect_error");
  REQUIRE_THROWS_AS(replay(stops), quota::error);
}

TEST_CASE("scenario: a reload without options keeps the options in force, and options {} returns to the defaults",
          "[quota-sim][setup]") {
  json doc = example("kueue_reload_refused.json");
  scenario sc = load_scenario(doc);
  REQUIRE(sc.events[2].policy_body.contains("options"));
  CHECK(sc.events[2].policy_body["options"] == json{{"fairSharing", true}});
  // a reload that writes options {} is in force for the next ones
  doc["events"][2]["options"] = json::object();
  doc["events"].push_back(
      json{{"at", "40m"}, {"type", "reload"}, {"policy", 0}, {"objects", doc["events"][2]["objects"]}});
  doc["expect"] =
      json::array({json{{"at", "30m"}, {"model", "kueue"}, {"pointer", "/fairSharing"}, {"equals", false}},
                   json{{"at", "40m"}, {"model", "kueue"}, {"pointer", "/fairSharing"}, {"equals", false}}});
  scenario sc2 = load_scenario(doc);
  CHECK(sc2.events[3].policy_body["options"] == json::object());
  CHECK(replay(doc).failures.empty());
}

TEST_CASE("scenario: every model's entry reports unknown keys, unknown options and bad values alike, under its path",
          "[quota-sim][setup]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"volcano_reclaim.json", "volcano"},
      {"volcano_capacity_hierarchy.json", "volcano_capacity"},
      {"kai_fair_share_reclaim.json", "kai_fair_share"},
      {"kueue_borrowing.json", "kueue"},
      {"nos_fair_share.json", "elastic_quota"},
      {"yunikorn_sue_bob.json", "yunikorn_limits"},
      {"kai_claims_opt_out.json", "kai_claims"}};
  for (const auto& [file, model] : cases) {
    CAPTURE(model);
    json doc = example(file);
    std::size_t at = doc["policies"].size();
    for (std::size_t i = 0; i < doc["policies"].size(); ++i)
      if (doc["policies"][i]["model"] == model) at = i;
    REQUIRE(at < doc["policies"].size());
    const std::string base = "$.policies[" + std::to_string(at) + "]";
    json& entry = doc["policies"][at];
    entry["zzz"] = 1;
    if (!entry.contains("options") || !entry["options"].is_object()) entry["options"] = json::object();
    entry["options"]["bogus"] = 1;
    entry["options"][model == "kueue" ? "fairSharing" : model == "kai_claims" ? "owner_evicts" : "upstream"] = "yes";
    scenario sc = load_scenario(doc);
    try {
      (void)build_models(sc);
      FAIL("the entry was accepted");
    } catch (const quota::validation_error& e) {
      std::vector<std::string> got;
      for (const auto& p : e.problems()) got.push_back(p.path + ": " + p.message);
      auto has = [&](const std::string& prefix) {
        return std::any_of(got.begin(), got.end(), [&](const std::string& g) { return g.rfind(prefix, 0) == 0; });
      };
      CAPTURE(got);
      CHECK(has(base + ": zzz: unknown key (expected "));
      CHECK(has(base + ": options.bogus: unknown option (expected "));
      CHECK(has(base + ": options." +
                (model == "kueue"        ? "fairSharing"
                 : model == "kai_claims" ? "owner_evicts"
                                         : "upstream") +
                ": expected true or false"));
    }
  }
}

TEST_CASE("scenario: a model's problems with a job keep the job's own path", "[quota-sim][setup]") {
  json doc = example("volcano_reclaim.json");
  doc["jobs"][0]["queue"] = "no-such-queue";
  scenario sc = load_scenario(doc);
  try {
    (void)build_models(sc);
    FAIL("the job's queue was accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.jobs[0].queue"});
  }
}

TEST_CASE(
    "scenario: queries answer yunikorn headroom and can_run_app, a volcano queue's share, a nos quota's "
    "over-quota standing and a what-if",
    "[quota-sim][setup][query]") {
  for (const char* name :
       {"yunikorn_queries.json", "volcano_queries.json", "nos_queries.json", "what_if_allows.json"}) {
    INFO(name);
    const run_result r = replay(example(name));
    CHECK(r.failures.empty());
  }
  // a wrong answer is a failure naming the expectation, the question and both values
  json doc = example("yunikorn_queries.json");
  doc["expect"][0]["equals"]["cpu"] = 5000;  // sue's headroom is 6 vcore
  doc["expect"][5]["equals"] = true;         // sue runs 2 of her 2 applications
  doc["expect"][2]["equals"] = 30000;        // carl's 8 vcore count against dev's 30
  const run_result r = replay(doc);
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].path == "$.expect[0]");
  CHECK(r.failures[0].at_ms == 600'000);
  CHECK(r.failures[0].expected == R"(yunikorn_limits headroom == {"cpu":5000,"memory":150000000000})");
  CHECK(r.failures[0].actual == R"({"cpu":6000,"memory":150000000000})");
  CHECK(r.failures[1].path == "$.expect[2]");
  CHECK(r.failures[1].actual == "22000");
  CHECK(r.failures[2].path == "$.expect[5]");
  CHECK(r.failures[2].actual == "false");
  // the what-if job is not committed: asking twice gives the same answer, and the replay is unchanged
  json w = example("what_if_allows.json");
  w["expect"].push_back(w["expect"][1]);
  const run_result again = replay(w);
  CHECK(again.failures.empty());
  CHECK(again.report["jobs"] == replay(example("what_if_allows.json")).report["jobs"]);
}

TEST_CASE("scenario: a query's unknown model, question or argument is an error with its JSON path",
          "[quota-sim][setup][query]") {
  json doc = example("yunikorn_queries.json");
  doc["expect"] = json::parse(R"([
    {"query": {"model": "kueue", "headroom": {"user": "sue", "queue": "root.team-a"}}, "equals": 1},
    {"query": {"model": "volcano", "queue": {"name": "x"}}, "equals": 1},
    {"query": {"model": "yunikorn_limits", "room": {}}, "equals": 1},
    {"query": {"model": "yunikorn_limits", "headroom": {"user": "sue", "queues": "a"}}, "equals": 1},
    {"query": {"model": "yunikorn_limits", "headroom": {"user": "sue", "queue": "root.team-a"}}},
    {"query": {"allows": {"request": {"cpu": "1"}, "colour": "red"}}, "equals": 1},
    {"query": {"allows": {"id": "s1", "request": {"cpu": "1"}}}, "equals": 1},
    {"query": {"allows": {"request": {"cpu": "1"}}}, "job": "s1", "equals": 1},
    {"query": {"allows": {"request": {"cpu": "1"}}}, "pointer": "allowed"}
  ])");
  try {
    (void)load_scenario(doc);
    FAIL("bad queries accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) ==
          std::vector<std::string>{
              "$.expect[0].query.model", "$.expect[1].query.model", "$.expect[2].query.room", "$.expect[2].query",
              "$.expect[3].query.headroom.queues", "$.expect[3].query.headroom.queue", "$.expect[4].equals",
              "$.expect[5].query.allows.colour", "$.expect[7]", "$.expect[8].pointer", "$.expect[6].query.allows.id"});
  }
  // a queue the model does not have is found with the model's configuration, before the replay
  json q = example("yunikorn_queries.json");
  q["expect"][0]["query"]["headroom"]["queue"] = "root.team-b";
  scenario sc = load_scenario(q);
  try {
    (void)build_models(sc);
    FAIL("a query at an unknown queue accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect[0].query.headroom.queue"});
  }
  json v = example("volcano_queries.json");
  v["expect"][0]["query"]["queue"]["name"] = "medium";
  scenario sv = load_scenario(v);
  try {
    (void)build_models(sv);
    FAIL("a query about an unknown Volcano queue accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect[0].query.queue.name"});
  }
  json n = example("nos_queries.json");
  n["expect"][1]["query"]["quota"]["name"] = "d";
  scenario sn = load_scenario(n);
  try {
    (void)build_models(sn);
    FAIL("a query about an unknown ElasticQuota accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect[1].query.quota.name"});
  }
}

TEST_CASE("scenario: a partially admitted job runs exactly its admitted pods, and every model is charged those only",
          "[quota-sim][setup]") {
  const run_result r = replay(example("kueue_pod_sets.json"));
  for (const auto& f : r.failures) UNSCOPED_INFO(f.expected + ": " + f.actual);
  CHECK(r.failures.empty());
  const json* spark = nullptr;
  for (const auto& j : r.report["jobs"])
    if (j["id"] == "spark") spark = &j;
  REQUIRE(spark);
  CHECK((*spark)["admitted_pods"] == json::array({1, 4}));

  // the same job with a second model that cannot take 9 pods' worth: with the
  // partial admission it runs (5 CPUs); asked whole, it would be refused
  json doc = example("kueue_pod_sets.json");
  doc["expect"] = json::array({json{{"at", "10m"}, {"job", "spark"}, {"pods", 9}}});
  const run_result wrong = replay(doc);
  REQUIRE(wrong.failures.size() == 1);
  CHECK(wrong.failures[0].actual == "5");
}

TEST_CASE("scenario: pod sets are checked with their JSON paths", "[quota-sim][setup]") {
  json doc = example("kueue_pod_sets.json");
  auto& spark = doc["jobs"][1];
  spark["pods"] = 3;                                                                            // not with pod sets
  spark["pod_sets"][1]["min_count"] = 9;                                                        // above count
  spark["pod_sets"][0]["name"] = "workers";                                                     // named twice
  spark["pod_sets"].push_back(json{{"name", "x"}, {"count", 0}, {"request", {{"cpu", "1"}}}});  // count 0
  const std::string bad_expect = "$.expect[" + std::to_string(doc["expect"].size()) + "].pods";
  doc["expect"].push_back(json{{"at", "1m"}, {"job", "spark"}, {"pods", "five"}});
  try {
    (void)load_scenario(doc);
    FAIL("bad pod sets accepted");
  } catch (const quota::validation_error& e) {
    const auto p = paths_of(e);
    for (const std::string& want :
         {std::string("$.jobs[1].pods"), std::string("$.jobs[1].pod_sets[1].name"),
          std::string("$.jobs[1].pod_sets[1].min_count"), std::string("$.jobs[1].pod_sets[2].count"), bad_expect}) {
      INFO(want);
      CHECK(std::find(p.begin(), p.end(), want) != p.end());
    }
  }
}

namespace {

// One node with one GPU and two one-GPU jobs of queue q, equal in priority
// and submission: "late" (listed first, created at 5m) and "early" (listed
// second, created at 1m); only one fits.
json created_pair(const json& policy, const std::string& ns = "default") {
  return json{{"name", "creation order"},
              {"cluster",
               {{"nodes", json::array({json{{"name", "n"}, {"allocatable", {{"cpu", "8"}, {"nvidia.com/gpu", 1}}}}})}}},
              {"scheduler", {{"preemption", false}}},
              {"policies", json::array({policy})},
              {"jobs", json::array({json{{"id", "late"},
                                         {"submit", "10m"},
                                         {"created", "5m"},
                                         {"namespace", ns},
                                         {"queue", "q"},
                                         {"request", {{"nvidia.com/gpu", 1}}}},
                                    json{{"id", "early"},
                                         {"submit", "10m"},
                                         {"created", "1m"},
                                         {"namespace", ns},
                                         {"queue", "q"},
                                         {"request", {{"nvidia.com/gpu", 1}}}}})}};
}

std::string state_of(const run_result& r, const std::string& id) {
  for (const auto& j : r.report["jobs"])
    if (j["id"] == id) return j["state"].get<std::string>();
  return "(absent)";
}

std::vector<std::string> messages_of(const quota::validation_error& e) {
  std::vector<std::string> out;
  for (const auto& p : e.problems()) out.push_back(p.path + ": " + p.message);
  return out;
}

}  // namespace

TEST_CASE("scenario: resources declares a scale, amounts are read at it, and one finer says which scale would fit",
          "[quota-sim][setup][resources]") {
  json doc = example("kai_fair_share_fractions.json");
  scenario sc = load_scenario(doc);
  CHECK(sc.registry.scale(quota::resources::nvidia_gpu) == 3);
  REQUIRE(sc.declared_resources.size() == 1);
  CHECK(sc.declared_resources[0].name == "nvidia.com/gpu");
  CHECK(sc.jobs[0].per_pod.get(quota::resources::nvidia_gpu) == 500);  // 0.5
  CHECK(sc.nodes[0].allocatable.get(quota::resources::nvidia_gpu) == 2000);
  CHECK(sc.chart_lines["team-b"] == std::vector<std::pair<std::string, std::int64_t>>{{"quota", 500}});
  // the report says the scale; its amounts are thousandths of a GPU
  const run_result r = replay(doc);
  CHECK(r.failures.empty());
  CHECK(r.report["resources"] == json{{"nvidia.com/gpu", {{"scale", 1000}}}});
  CHECK(r.report["tenants"]["team-a"]["usage"][0] == json::array({0, 2000}));
  // without the declaration, half a GPU is an error that names the scale that would hold it
  json whole = doc;
  whole.erase("resources");
  whole["jobs"][0]["request"]["nvidia.com/gpu"] = 0.0005;
  try {
    (void)load_scenario(whole);
    FAIL("half a GPU accepted in whole GPUs");
  } catch (const quota::validation_error& e) {
    const auto m = messages_of(e);
    REQUIRE(!m.empty());
    CHECK(m[0].starts_with("$.jobs[0].request.nvidia.com/gpu: [quota.parse_error.103]"));
    CHECK(m[0].find("0.0005 needs a scale of at least 10000: declare {\"name\": \"nvidia.com/gpu\", \"scale\": "
                    "10000} in resources") != std::string::npos);
  }
  // a declared scale that is still too coarse says the same
  json coarse = doc;
  coarse["jobs"][1]["request"]["nvidia.com/gpu"] = "5u";
  try {
    (void)load_scenario(coarse);
    FAIL("5u of a GPU accepted in thousandths");
  } catch (const quota::validation_error& e) {
    CHECK(messages_of(e).at(0).find("5u needs a scale of at least 1000000") != std::string::npos);
  }
  // bad declarations, each at its path
  json bad = doc;
  bad["resources"] = json::parse(R"([
    {"name": "nvidia.com/gpu", "scale": 1000}, {"name": "x y", "scale": 10}, {"name": "cpu", "scale": 10},
    {"name": "nvidia.com/gpu", "scale": 100}, {"name": "example.com/a", "scale": 7}, {"name": "example.com/b"},
    {"name": "example.com/c", "scale": 10000000000}, {"name": "example.com/d", "scale": 10, "unit": "m"}, 3])");
  try {
    (void)load_scenario(bad);
    FAIL("bad resource declarations accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.resources[1].name", "$.resources[2].scale", "$.resources[3].name",
                                                  "$.resources[4].scale", "$.resources[5].scale",
                                                  "$.resources[6].scale", "$.resources[7].unit", "$.resources[8]"});
  }
  bad["resources"] = json::object();
  REQUIRE_THROWS_AS(load_scenario(bad), quota::validation_error);
}

TEST_CASE("scenario: a model that counts a resource in coarser units refuses a finer declared scale",
          "[quota-sim][setup][resources]") {
  const auto refused = [](const json& doc) {
    scenario sc = load_scenario(doc);
    try {
      (void)build_models(sc);
    } catch (const quota::validation_error& e) {
      return messages_of(e);
    }
    return std::vector<std::string>{};
  };
  // Kueue counts every resource but cpu in whole units
  json k = example("kueue_reload_refused.json");
  k.erase("events");
  k.erase("expect");
  k["resources"] = json::parse(R"([{"name": "cpu", "scale": 1000}, {"name": "nvidia.com/gpu", "scale": 1000}])");
  CHECK(refused(k) == std::vector<std::string>{
                          "$.policies[0]: kueue counts nvidia.com/gpu in whole units (Kueue's ResourceValue: cpu "
                          "in thousandths, every other resource in whole units): the scale 1000 declared at "
                          "$.resources[1].scale is finer"});
  // Volcano counts scalar resources in thousandths: 1000 is upstream's own unit, 10000 is finer
  json v = example("volcano_queue_priority.json");
  v["resources"] = json::parse(R"([{"name": "nvidia.com/gpu", "scale": 1000}])");
  CHECK(refused(v).empty());
  CHECK(replay(v).failures.empty());
  v["resources"][0]["scale"] = 10000;
  CHECK(refused(v).empty());  // the default counts in any unit
  v["policies"][0]["options"] = json{{"upstream", true}};
  REQUIRE(refused(v).size() == 1);
  CHECK(refused(v)[0].find("volcano_capacity counts nvidia.com/gpu in units of 1/1000") != std::string::npos);
  // nos' GPU memory is per whole GPU
  json n = example("nos_gpu_memory.json");
  n["resources"] = json::parse(R"([{"name": "nvidia.com/gpu", "scale": 10}])");
  REQUIRE(refused(n).size() == 1);
  CHECK(refused(n)[0].find("elastic_quota counts nvidia.com/gpu in whole units") != std::string::npos);
  // KAI claims count devices
  json c = example("kai_claims_fair_share.json");
  c["resources"] = json::parse(R"([{"name": "nvidia.com/gpu", "scale": 1000}])");
  bool claims_refused = false;
  for (const auto& m : refused(c))
    claims_refused = claims_refused || m.find("kai_claims counts nvidia.com/gpu") != std::string::npos;
  CHECK(claims_refused);
}

TEST_CASE("scenario: jobs[].created breaks equal priorities in the job order of Volcano, KAI and Kueue",
          "[quota-sim][setup][created]") {
  const json volcano{{"model", "volcano"},
                     {"objects", json::parse(R"([{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                       "metadata": {"name": "q"}, "spec": {"weight": 1}}])")}};
  const json kai{{"model", "kai_fair_share"}, {"objects", json::parse(R"([
      {"metadata": {"name": "root"}, "spec": {"resources": {"gpu": {"quota": -1, "overQuotaWeight": 1, "limit": -1}}}},
      {"metadata": {"name": "q"}, "spec": {"parentQueue": "root",
       "resources": {"gpu": {"quota": 1, "overQuotaWeight": 1, "limit": -1}}}}])")}};
  const json kueue{{"model", "kueue"}, {"objects", json::parse(R"([
      {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
      {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
       "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": "f", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}]}]}]}},
      {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "default"},
       "spec": {"clusterQueue": "cq"}}])")}};
  for (const json& policy : {volcano, kai, kueue}) {
    INFO(policy["model"]);
    json doc = created_pair(policy);
    scenario sc = load_scenario(doc);
    CHECK(sc.jobs[1].created_ms == 60'000);
    const run_result r = replay(doc);
    CHECK(state_of(r, "early") == "running");
    CHECK(state_of(r, "late") == "pending");
    // without created, both are created when submitted and file order decides
    doc["jobs"][0].erase("created");
    doc["jobs"][1].erase("created");
    CHECK(load_scenario(doc).jobs[1].created_ms == 600'000);
    const run_result f = replay(doc);
    CHECK(state_of(f, "late") == "running");
    CHECK(state_of(f, "early") == "pending");
  }
  json bad = created_pair(volcano);
  bad["jobs"][0]["created"] = "soon";
  try {
    (void)load_scenario(bad);
    FAIL("a malformed creation time accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.jobs[0].created"});
  }
}

TEST_CASE("scenario: Volcano and KAI queues equal in every other key go in metadata.creationTimestamp order",
          "[quota-sim][setup][created]") {
  // queue "newer" is listed first; each queue has one job that its quota
  // allows (the cluster holds 2 GPUs and 4 cpu), but only one fits a node
  const auto pair = [](json objects, const std::string& model) {
    const json request{{"nvidia.com/gpu", 1}, {"cpu", 1}};
    return json{{"name", "queue creation order"},
                {"cluster",
                 {{"nodes", json::array({json{{"name", "a"}, {"allocatable", {{"nvidia.com/gpu", 2}, {"cpu", 1}}}},
                                         json{{"name", "b"}, {"allocatable", {{"cpu", 3}}}}})}}},
                {"scheduler", {{"preemption", false}}},
                {"policies", json::array({json{{"model", model}, {"objects", std::move(objects)}}})},
                {"jobs", json::array({json{{"id", "in-newer"}, {"queue", "newer"}, {"request", request}},
                                      json{{"id", "in-older"}, {"queue", "older"}, {"request", request}}})}};
  };
  const json volcano_queues = json::parse(R"([
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
     "metadata": {"name": "newer", "creationTimestamp": "2026-03-01T00:00:00Z"}, "spec": {"weight": 1}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
     "metadata": {"name": "older", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"weight": 1}}])");
  const json kai_queues = json::parse(R"([
    {"metadata": {"name": "root"}, "spec": {"resources": {"gpu": {"quota": -1, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "newer", "creationTimestamp": "2026-03-01T00:00:00Z"},
     "spec": {"parentQueue": "root", "resources": {"gpu": {"quota": 0, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "older", "creationTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"parentQueue": "root", "resources": {"gpu": {"quota": 0, "overQuotaWeight": 1, "limit": -1}}}}])");
  for (const auto& [objects, model] : std::vector<std::pair<json, std::string>>{
           {volcano_queues, "volcano"}, {volcano_queues, "volcano_capacity"}, {kai_queues, "kai_fair_share"}}) {
    INFO(model);
    const run_result r = replay(pair(objects, model));
    CHECK(state_of(r, "in-older") == "running");
    CHECK(state_of(r, "in-newer") == "pending");
  }
}

TEST_CASE("scenario: a reload of options only keeps the entry's objects and changes its options",
          "[quota-sim][setup]") {
  json doc = example("kueue_reload_refused.json");
  doc["events"] = json::parse(R"([{"at": "30m", "type": "reload", "policy": "kueue", "options": {"fairSharing": false}},
                                  {"at": "40m", "type": "reload", "policy": 0, "options": {"fairSharing": true}}])");
  doc["expect"] = json::parse(R"([{"at": "10m", "model": "kueue", "pointer": "/fairSharing", "equals": true},
                                  {"at": "30m", "model": "kueue", "pointer": "/fairSharing", "equals": false},
                                  {"at": "40m", "model": "kueue", "pointer": "/fairSharing", "equals": true}])");
  scenario sc = load_scenario(doc);
  CHECK(sc.events[0].policy_body["objects"] == doc["policies"][0]["objects"]);
  CHECK(sc.events[1].policy_body["objects"] == doc["policies"][0]["objects"]);
  const run_result r = replay(doc);
  CHECK(r.failures.empty());
  CHECK(r.report["totals"]["reloads"] == 2);
  // the objects in force are those of the last reload that wrote them
  doc["events"][0]["objects"] = doc["policies"][0]["objects"];
  doc["events"][0]["objects"][1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 6;
  scenario sc2 = load_scenario(doc);
  CHECK(sc2.events[1].policy_body["objects"] == doc["events"][0]["objects"]);
  CHECK(sc2.events[1].policy_body["options"] == json{{"fairSharing", true}});
}

TEST_CASE("scenario: a kai_fair_share query answers a queue's fair share, allocated and dominant share",
          "[quota-sim][setup][query]") {
  const run_result r = replay(example("kai_fair_share_queries.json"));
  CHECK(r.failures.empty());
  // a wrong answer names the question and shows the model's answer
  json doc = example("kai_fair_share_queries.json");
  doc["expect"][1]["equals"]["share_exact"] = "1/2";
  const run_result wrong = replay(doc);
  REQUIRE(wrong.failures.size() == 1);
  CHECK(wrong.failures[0].path == "$.expect[1]");
  CHECK(
      wrong.failures[0].actual ==
      R"({"allocated":{"nvidia.com/gpu":1},"fair_share":{"nvidia.com/gpu":1},"share":"0.250000","share_exact":"1/4"})");
  // an unknown argument, a missing name and an unknown queue are errors with their JSON paths
  json bad = example("kai_fair_share_queries.json");
  bad["expect"] = json::parse(R"([
    {"query": {"model": "kai_fair_share", "queue": {"name": "team-a", "size": 1}}, "equals": 1},
    {"query": {"model": "kai_fair_share", "queue": {}}, "equals": 1},
    {"query": {"model": "kai_fair_share", "share": {"name": "team-a"}}, "equals": 1}
  ])");
  try {
    (void)load_scenario(bad);
    FAIL("bad kai_fair_share queries accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect[0].query.queue.size", "$.expect[1].query.queue.name",
                                                  "$.expect[2].query.share", "$.expect[2].query"});
  }
  json unknown = example("kai_fair_share_queries.json");
  unknown["expect"][0]["query"]["queue"]["name"] = "team-z";
  scenario sc = load_scenario(unknown);
  try {
    (void)build_models(sc);
    FAIL("a query about an unknown KAI queue accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{"$.expect[0].query.queue.name"});
  }
}

namespace {

// The report's evictions as (job, preemptor, model.rule [entity], upstream reason) lines.
std::vector<std::string> evictions_of(const json& report) {
  std::vector<std::string> out;
  for (const auto& e : report["evictions"]) {
    std::string s = e["at"].get<std::string>() + " " + e["job"].get<std::string>();
    if (e.contains("preemptor")) s += " by " + e["preemptor"].get<std::string>();
    s += ": " + e["model"].get<std::string>() + "." + e["rule"].get<std::string>();
    if (e.contains("entity")) s += " [" + e["entity"].get<std::string>() + "]";
    if (e.contains("upstream_reason")) s += " " + e["upstream_reason"].get<std::string>();
    out.push_back(s);
  }
  return out;
}

const json* job_in(const json& report, const std::string& id) {
  for (const auto& j : report["jobs"])
    if (j["id"] == id) return &j;
  return nullptr;
}

}  // namespace

TEST_CASE("scenario: the report lists each eviction with the rule that took it, and evicted/evicted_by check them",
          "[quota-sim][setup][evictions]") {
  json doc = example("kueue_reclaim_within_cohort.json");
  doc["expect"] = json::parse(R"([
    {"at": "1m", "job": "in", "evicted": [{"job": "b-lo", "model": "kueue", "rule": "reclaimWithinCohort",
                                           "entity": "b", "upstream_reason": "InCohortReclamation"}]},
    {"at": "1m", "job": "b-lo", "evicted_by": "in"},
    {"at": "1m", "job": "b-lo", "evicted_by": {"job": "in", "upstream_reason": "InCohortReclamation"}},
    {"at": "30s", "job": "in", "evicted": []},
    {"at": "end", "job": "b-hi", "evicted": []},
    {"at": "1m", "job": "in", "evicted": ["b-hi"]},
    {"at": "1m", "job": "b-lo", "evicted_by": {"job": "in", "rule": "withinClusterQueue"}},
    {"at": "1m", "job": "c-lo", "evicted_by": "in"},
    {"at": "30s", "job": "b-lo", "evicted_by": "in"}
  ])");
  const run_result r = replay(doc);
  CHECK(evictions_of(r.report) ==
        std::vector<std::string>{"1m b-lo by in: kueue.reclaimWithinCohort [b] InCohortReclamation"});
  CHECK(r.report["evictions"][0]["at_ms"] == 60'000);
  // failures come in the order they are checked: by time
  REQUIRE(r.failures.size() == 4);
  // before it happened, it had not
  CHECK(r.failures[0].path == "$.expect[8]");
  CHECK(r.failures[0].at_ms == 30'000);
  CHECK(r.failures[0].actual == "no evictions");
  CHECK(r.failures[1].path == "$.expect[5]");
  CHECK(r.failures[1].expected == R"(evictions by in: ["b-hi"])");
  CHECK(r.failures[1].actual == "[b-lo at 1m by in (kueue.reclaimWithinCohort [b], InCohortReclamation)]");
  CHECK(r.failures[2].path == "$.expect[6]");
  CHECK(r.failures[2].expected == R"(job b-lo evicted by {"job":"in","rule":"withinClusterQueue"})");
  CHECK(r.failures[2].actual == "[b-lo at 1m by in (kueue.reclaimWithinCohort [b], InCohortReclamation)]");
  CHECK(r.failures[3].path == "$.expect[7]");
  CHECK(r.failures[3].actual == "no evictions");
  // the same file gives the same report, byte for byte
  CHECK(replay(doc).report.dump() == r.report.dump());
}

TEST_CASE("scenario: KAI's reclaims are evictions of rule reclaim from the reclaimed queue",
          "[quota-sim][setup][evictions]") {
  json doc = example("kai_fair_share_reclaim.json");
  const run_result r = replay(doc);
  CHECK(r.failures.empty());
  // five of team-a's jobs reclaimed by team-b's five, newest first; one instant, so in file order: the
  // copies of a share their entry and keep the order they were taken in
  CHECK(evictions_of(r.report) == std::vector<std::string>{"10m a-7 by b-0: kai_fair_share.reclaim [team-a]",
                                                           "10m a-6 by b-1: kai_fair_share.reclaim [team-a]",
                                                           "10m a-5 by b-2: kai_fair_share.reclaim [team-a]",
                                                           "10m a-4 by b-3: kai_fair_share.reclaim [team-a]",
                                                           "10m a-3 by b-4: kai_fair_share.reclaim [team-a]"});
  doc["expect"] = json::parse(R"([
    {"at": "11m", "job": "b-0", "evicted": [{"job": "a-7", "model": "kai_fair_share", "rule": "reclaim", "entity": "team-a"}]},
    {"at": "11m", "job": "a-3", "evicted_by": {"job": "b-4", "rule": "reclaim"}},
    {"at": "11m", "job": "a-3", "evicted_by": {"rule": "preempt"}}
  ])");
  const run_result x = replay(doc);
  REQUIRE(x.failures.size() == 1);
  CHECK(x.failures[0].path == "$.expect[2]");
  CHECK(x.failures[0].expected == R"(job a-3 evicted by {"rule":"preempt"})");
  CHECK(x.failures[0].actual == "[a-3 at 10m by b-4 (kai_fair_share.reclaim [team-a])]");
}

TEST_CASE("scenario: node removals, quota shrinks and kube-scheduler's victims are evictions with the host's rules",
          "[quota-sim][setup][evictions]") {
  // no quota model: urgent takes fill by kube-scheduler's rule; then node a goes with what runs there
  json doc = example("placement_and_priority.json");
  doc["events"] = json::array({json{{"at", "20m"}, {"type", "node_remove"}, {"name", "a"}}});
  doc["expect"] = json::parse(R"([
    {"at": "10m", "job": "fill", "evicted_by": {"job": "urgent", "model": "host", "rule": "lower_priority"}},
    {"at": "20m", "job": "small-1", "evicted_by": {"model": "host", "rule": "node_removed", "entity": "a"}},
    {"at": "20m", "job": "urgent", "evicted_by": {"rule": "node_removed"}},
    {"at": "20m", "job": "urgent", "evicted": ["fill", {"job": "big", "rule": "lower_priority"}]}
  ])");
  const run_result r = replay(doc);
  CHECK(r.failures.empty());
  // node a held small-1, small-2 and urgent; urgent, placed again, takes big from node b. One instant:
  // in file order, not in the order they happened
  CHECK(evictions_of(r.report) ==
        std::vector<std::string>{"10m fill by urgent: host.lower_priority", "20m small-1: host.node_removed [a]",
                                 "20m small-2: host.node_removed [a]", "20m big by urgent: host.lower_priority",
                                 "20m urgent: host.node_removed [a]", "2h1m fill by big: host.lower_priority"});
  CHECK(r.report["totals"]["preemptions"] == 3);  // a node removal is not a preemption
  for (const auto& j : r.report["jobs"])           // nor in the job's own count
    if (j["id"] == "small-1" || j["id"] == "small-2") CHECK_FALSE(j.contains("preempted"));
  // a quota shrink: the policy's model, rule shrink, no preemptor; one instant, so in file order
  const run_result s = replay(example("quota_shrink.json"));
  CHECK(s.failures.empty());
  CHECK(evictions_of(s.report) ==
        std::vector<std::string>{"40m r-low-old: kueue.shrink", "40m r-low-new: kueue.shrink"});
}

TEST_CASE("scenario: a reason object matches one refusal's model, rule, entity and full message exactly",
          "[quota-sim][setup][reasons]") {
  json doc = example("kueue_borrowing_limit.json");
  const std::string full =
      "kueue.needs_preemption [team-b-cq] cpu: requested 1000, used 11000, limit 0 - needs preemption in flavor "
      "default-flavor for cpu: 1 more than is unused is needed (1 requested, 0 unused), and no workload can be "
      "preempted for it";
  doc["expect"] = json::array(
      {json{{"job", "b-1"}, {"reason", {{"model", "kueue"}, {"rule", "needs_preemption"}, {"entity", "team-b-cq"}}}},
       json{{"job", "b-1"}, {"reason", {{"message", full}}}}, json{{"job", "b-1"}, {"reason", "needs_preemption"}},
       json{{"job", "b-1"}, {"reason", {{"rule", "needs_preemption"}, {"entity", "team-a-cq"}}}},
       json{{"job", "b-1"}, {"reason", {{"rule", "needs"}}}},
       json{{"job", "b-1"}, {"reason", {{"message", "kueue"}}}}});
  const run_result r = replay(doc);
  // the report prints each refusal's full text
  REQUIRE(job_in(r.report, "b-1") != nullptr);
  CHECK((*job_in(r.report, "b-1"))["reasons"] == json::array({full}));
  // exact, not contains: a wrong entity, a part of the rule, a part of the message
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].path == "$.expect[3]");
  CHECK(r.failures[0].expected == R"(job b-1 reason {"entity":"team-a-cq","rule":"needs_preemption"})");
  CHECK(
      r.failures[0].actual ==
      json::array({json{{"entity", "team-b-cq"}, {"message", full}, {"model", "kueue"}, {"rule", "needs_preemption"}}})
          .dump());
  CHECK(r.failures[1].path == "$.expect[4]");
  CHECK(r.failures[2].path == "$.expect[5]");
  // a host reason is one refusal of model host: preempted for J
  json host = example("placement_and_priority.json");
  host["expect"] = json::parse(R"([
    {"at": "10m", "job": "fill", "reason": {"model": "host", "rule": "preempted", "entity": "urgent",
                                           "message": "preempted for urgent"}},
    {"at": "10m", "job": "urgent", "reason": {"model": "host"}}
  ])");
  const run_result h = replay(host);
  REQUIRE(h.failures.size() == 1);  // urgent runs: it has no reason
  CHECK(h.failures[0].path == "$.expect[1]");
  CHECK(h.failures[0].actual == "no reason");
}

TEST_CASE("scenario: evicted, evicted_by, victims and reason objects are checked at load with their JSON paths",
          "[quota-sim][setup][evictions]") {
  json doc = example("kueue_reclaim_within_cohort.json");
  doc["expect"] = json::parse(R"([
    {"job": "in", "evicted": "b-lo"},
    {"job": "in", "evicted": [{"rule": "x"}]},
    {"job": "in", "evicted": [{"job": "zz"}]},
    {"job": "in", "evicted": [{"job": "b-lo", "colour": "red"}]},
    {"job": "b-lo", "evicted_by": 5},
    {"job": "b-lo", "evicted_by": {"job": "nobody"}},
    {"job": "b-lo", "reason": {"rule": 1}},
    {"job": "b-lo", "reason": {"rule_name": "x"}},
    {"job": "b-lo", "reason": {}},
    {"admitted": 1, "evicted_by": "in"},
    {"job": "in", "victims": ["b-lo", 3]},
    {"job": 7, "state": "running"},
    {"job": "in", "victims": ["ghost"]},
    {"job": "in", "evicted": [3, {"job": "b-lo", "upstream_reason": false}]}
  ])");
  try {
    (void)load_scenario(doc);
    FAIL("bad expectations accepted");
  } catch (const quota::validation_error& e) {
    CHECK(paths_of(e) == std::vector<std::string>{
                             "$.expect[0].evicted", "$.expect[1].evicted[0].job", "$.expect[3].evicted[0].colour",
                             "$.expect[4].evicted_by", "$.expect[6].reason.rule", "$.expect[7].reason.rule_name",
                             "$.expect[8].reason", "$.expect[9].evicted_by", "$.expect[10].victims[1]",
                             "$.expect[11].job", "$.expect[13].evicted[0]", "$.expect[13].evicted[1].upstream_reason",
                             "$.expect[2].evicted[0].job", "$.expect[5].evicted_by.job", "$.expect[12].victims[0]"});
    for (const auto& p : e.problems())
      if (p.path == "$.expect[2].evicted[0].job") CHECK(p.message == "unknown job 'zz'");
  }
}
