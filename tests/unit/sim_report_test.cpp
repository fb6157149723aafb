// SPDX-License-Identifier: Apache-2.0
// quota-sim's report (docs/scenario-format.md "Report"): wait percentiles
// count the jobs that never ran, every job that waited says why, tenant
// admissions add up to totals.admitted with re-admissions apart, every
// preemption names its victim, preemptor and reason, and the models are
// shown at the instant of peak contention.
#include <quota_catch.hpp>

#include <string>

#include "models.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

constexpr std::int64_t minute = 60'000;
constexpr std::int64_t hour = 60 * minute;

json job_json(const std::string& id, const std::string& tenant, std::int64_t submit, int gpus, std::int64_t duration,
              int priority = 100) {
  return json{{"id", id},
              {"submit", submit},
              {"duration", duration},
              {"namespace", tenant},
              {"queue", tenant},
              {"user", "user-" + tenant},
              {"priority", priority},
              {"request", {{"cpu", "1"}, {"nvidia.com/gpu", gpus}}}};
}

// One node of `gpus` GPUs, no policies.
json one_node(const std::string& name, int gpus = 8) {
  return json{{"name", name},
              {"cluster",
               {{"nodes", json::array({{{"name", "n"}, {"allocatable", {{"cpu", "64"}, {"nvidia.com/gpu", gpus}}}}})}}},
              {"jobs", json::array()}};
}

json replay(const json& doc, bool peak = false) {
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  run_options opt;
  opt.check_invariants = true;
  opt.peak_snapshot = peak;
  const run_result r = sim.run(-1, {}, opt);
  for (const auto& f : r.failures) FAIL_CHECK(f.path << ": expected " << f.expected << ", got " << f.actual);
  return r.report;
}

const json& job_of(const json& report, const std::string& id) {
  for (const auto& j : report["jobs"])
    if (j["id"] == id) return j;
  static const json none;
  return none;
}

// A Kueue ClusterQueue per namespace, nominal `gpus` each, in one cohort.
json kueue_policy(const std::vector<std::pair<std::string, int>>& queues, const std::string& strategy) {
  json items = json::array(
      {{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "default"}}}}});
  for (const auto& [ns, gpus] : queues) {
    items.push_back(
        {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
         {"kind", "ClusterQueue"},
         {"metadata", {{"name", ns + "-cq"}}},
         {"spec",
          {{"namespaceSelector", json::object()},
           {"cohort", "all"},
           {"queueingStrategy", strategy},
           {"resourceGroups",
            json::array(
                {{{"coveredResources", json::array({"cpu", "nvidia.com/gpu"})},
                  {"flavors", json::array({{{"name", "default"},
                                            {"resources", json::array({{{"name", "cpu"}, {"nominalQuota", "64"}},
                                                                       {{"name", "nvidia.com/gpu"},
                                                                        {"nominalQuota", gpus}}})}}})}}})}}}});
    items.push_back({{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                     {"kind", "LocalQueue"},
                     {"metadata", {{"namespace", ns}, {"name", ns}}},
                     {"spec", {{"clusterQueue", ns + "-cq"}}}});
  }
  return json{{"model", "kueue"}, {"objects", {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}}};
}

}  // namespace

TEST_CASE("report: a job still pending at the end counts in the wait percentiles, censored at the end") {
  json doc = one_node("censored");
  doc["jobs"].push_back(job_json("runs", "a", 0, 8, 10 * hour));
  doc["jobs"].push_back(job_json("too-big", "a", 0, 16, hour));  // no node has 16 GPUs: pending for good
  const json r = replay(doc);
  const auto& w = r["totals"]["wait_ms"];
  CHECK(r["end_ms"] == 10 * hour);
  CHECK(w["jobs"] == 2);
  CHECK(w["censored"] == 1);
  CHECK(w["p50"] == 0);
  CHECK(w["p99"] == 10 * hour);  // the pending job's wait so far, not 0
  CHECK(r["totals"]["wait"]["p99"] == "10h");
  CHECK(r["totals"]["wait_ms_started"]["p99"] == 0);  // the jobs that started, apart
  CHECK(job_of(r, "too-big")["wait_ms"] == 10 * hour);
  CHECK(job_of(r, "too-big")["wait_censored"] == true);
  CHECK(job_of(r, "too-big")["reason"] == "host.no_node_fits");
  CHECK(r["end"] == "10h");
}

TEST_CASE("report: a job that waited and then ran says why it waited") {
  json doc = one_node("waited");
  doc["jobs"].push_back(job_json("first", "a", 0, 8, hour));
  doc["jobs"].push_back(job_json("second", "a", 0, 8, hour));
  const json r = replay(doc);
  const auto& j = job_of(r, "second");
  CHECK(j["state"] == "finished");
  CHECK(j["wait_ms"] == hour);
  CHECK(j["wait_reason"] == "host.no_node_fits");
  CHECK(j["reason"] == "host.no_node_fits");
  CHECK_FALSE(job_of(r, "first").contains("wait_reason"));  // it did not wait
}

TEST_CASE("report: tenant admissions add up to totals.admitted, re-admissions after preemption apart") {
  json doc = one_node("readmitted");
  doc["jobs"].push_back(job_json("low", "batch", 0, 8, 2 * hour, 10));
  doc["jobs"].push_back(job_json("high", "serve", hour, 8, hour, 1000));
  const json r = replay(doc);
  CHECK(r["totals"]["preemptions"] == 1);
  CHECK(r["totals"]["admitted"] == 2);
  CHECK(r["totals"]["readmissions"] == 1);
  std::int64_t sum = 0, re = 0;
  for (const auto& [name, t] : r["tenants"].items()) {
    sum += t["admissions"].get<std::int64_t>();
    re += t["readmissions"].get<std::int64_t>();
  }
  CHECK(sum == 2);
  CHECK(re == 1);
  CHECK(r["tenants"]["batch"]["admissions"] == 1);
  CHECK(r["tenants"]["batch"]["readmissions"] == 1);
  // the victim started at once (no wait_reason), then waited again: preempted
  const auto& low = job_of(r, "low");
  CHECK_FALSE(low.contains("wait_reason"));
  CHECK(low["reason"] == "preempted for high");
  // the preemption names both jobs, their tenants and what the preemptor was refused
  REQUIRE(r["preemptions"].size() == 1);
  const auto& p = r["preemptions"][0];
  CHECK(p["at_ms"] == hour);
  CHECK(p["at"] == "1h");
  CHECK(p["victim"] == "low");
  CHECK(p["victim_tenant"] == "batch");
  CHECK(p["preemptor"] == "high");
  CHECK(p["preemptor_tenant"] == "serve");
  CHECK(p["reason"] == "host.no_node_fits");
}

TEST_CASE("report: pending demand per tenant over time, and the models at the instant of peak contention") {
  json doc = one_node("peak");
  doc["policies"] = json::array({{{"model", "running_limits"}, {"queues", {{"a", 1}}}}});
  doc["jobs"].push_back(job_json("a-0", "a", 0, 2, hour));
  doc["jobs"].push_back(job_json("a-1", "a", 10 * minute, 2, hour));
  doc["jobs"].push_back(job_json("a-2", "a", 20 * minute, 2, hour));
  // pending: 2 GPUs from 10m, 4 from 20m (the peak), 2 from 1h, 0 from 2h
  const json r = replay(doc, true);
  CHECK(r["tenants"]["a"]["pending"] ==
        json::array({{0, 0}, {10 * minute, 2}, {20 * minute, 4}, {hour, 2}, {2 * hour, 0}}));
  const auto& p = r["peak_contention"];
  CHECK(p["at_ms"] == 20 * minute);
  CHECK(p["at"] == "20m");
  CHECK(p["pending_jobs"] == 2);
  CHECK(p["pending_demand"] == 4);
  // at the peak, a-0 runs; at the end nothing does
  CHECK(p["models"]["running_limits"]["queues"]["a"]["running"] == 1);
  CHECK(r["models"]["running_limits"]["queues"]["a"]["running"] == 0);
  CHECK(job_of(r, "a-2")["wait_reason"] == "running_limits.max_running_jobs [queue:a]");
  // without the option, the instant and figures only
  const json r2 = replay(doc, false);
  CHECK(r2["peak_contention"]["at_ms"] == 20 * minute);
  CHECK_FALSE(r2["peak_contention"].contains("models"));
}

TEST_CASE("report: a job that waited only for the next cycle says so") {
  json doc = one_node("cycle");
  doc["scheduler"] = json{{"cycle", "1m"}};
  doc["jobs"].push_back(job_json("j", "a", 30'000, 1, hour));
  const json r = replay(doc);
  const auto& j = job_of(r, "j");
  CHECK(j["wait_ms"] == 30'000);
  CHECK(j["wait_reason"] == "host.next_cycle");
}

TEST_CASE(
    "report: a job admitted at its first cycle boundary waited for the cycle, not for an identical job's denial") {
  json doc = one_node("cycle-identical");
  doc["scheduler"] = json{{"cycle", "1m"}};
  doc["jobs"].push_back(job_json("x", "a", 0, 8, 90'000));         // fills the node until 90 s
  doc["jobs"].push_back(job_json("early", "a", 0, 8, hour));       // denied at 0 and at 1m (no node fits)
  doc["jobs"].push_back(job_json("late", "a", 100'000, 8, hour));  // the same shape, submitted after both passes
  doc["events"] = json::array({json{{"at", "95s"}, {"type", "delete"}, {"job", "early"}}});
  const json r = replay(doc);
  const auto& late = job_of(r, "late");
  CHECK(late["started_ms"] == 120'000);
  CHECK(late["wait_ms"] == 20'000);
  CHECK(late["wait_reason"] == "host.next_cycle");
}

TEST_CASE("report: a job held back behind a StrictFIFO head names the head") {
  json doc = one_node("strict", 16);
  doc["scheduler"] = json{{"preemption", false}};
  doc["tenant_by"] = "namespace";
  doc["policies"] = json::array({kueue_policy({{"t", 9}}, "StrictFIFO")});
  doc["jobs"].push_back(job_json("holder", "t", 0, 8, hour, 100));
  doc["jobs"].push_back(job_json("head", "t", minute, 8, hour, 100));      // 8 + 8 > 9: waits for holder
  doc["jobs"].push_back(job_json("small", "t", 2 * minute, 1, hour, 10));  // 8 + 1 fits, but behind head
  const json r = replay(doc);
  CHECK(job_of(r, "head")["wait_ms"] == hour - minute);
  const auto& small = job_of(r, "small");
  CHECK(small["started_ms"] == hour);
  CHECK(small["wait_reason"] == "host.behind_queue_head [head]");
}

namespace {
std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}
}  // namespace

TEST_CASE(
    "report: the chart marks every preemption with its victim, preemptor and reason, stacks usage, shows "
    "pending demand and labelled reference lines") {
  json doc = one_node("chart");
  doc["chart"] =
      json{{"lines", {{"batch", {{"nominalQuota", 4}, {"nominalQuota + borrowingLimit", 6}}}, {"serve", 8}}}};
  // two victims at one instant: two marks, not one
  doc["jobs"].push_back(job_json("low-0", "batch", 0, 4, 2 * hour, 10));
  doc["jobs"].push_back(job_json("low-1", "batch", 0, 4, 2 * hour, 10));
  doc["jobs"].push_back(job_json("high", "serve", 90 * minute, 8, hour, 1000));
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  const json r = sim.run().report;
  CHECK(r["tenants"]["batch"]["reference"] == json{{"nominalQuota", 4}, {"nominalQuota + borrowingLimit", 6}});
  CHECK(r["tenants"]["serve"]["reference"] == json{{"reference", 8}});
  const std::string svg = sim.svg();
  CHECK(r["totals"]["preemptions"] == 2);
  CHECK(count_of(svg, "class=\"preemption\"") == 2);
  CHECK(count_of(svg,
                 "<title>at 1h30m: low-1 (batch) preempted for high (serve), which was refused: "
                 "host.no_node_fits</title>") == 1);
  CHECK(count_of(svg, "<title>at 1h30m: low-0 (batch) preempted for high (serve)") == 1);
  CHECK(count_of(svg, "class=\"stack\"") == 2);
  CHECK(count_of(svg, "class=\"pending\"") == 2);
  CHECK(count_of(svg, "class=\"capacity\"") == 1);
  CHECK(count_of(svg, ">nominalQuota + borrowingLimit 6</text>") == 1);
  CHECK(count_of(svg, ">nominalQuota 4</text>") == 1);
  CHECK(count_of(svg, ">reference 8</text>") == 1);
  CHECK(count_of(svg, "nvidia.com/gpu (GPUs)") == 1);
  // 3h long (the victims resume at 2h30m): ticks every 15 minutes, in readable units
  CHECK(r["end"] == "3h");
  CHECK(count_of(svg, "class=\"time-tick\">1h15m</text>") == 3);  // the usage panel and two lanes
  CHECK(count_of(svg, "class=\"time-tick\">3h</text>") == 3);
}

TEST_CASE("report: a labelled chart line is checked like a plain one, its label in the path") {
  json doc = one_node("bad line");
  doc["jobs"].push_back(job_json("j", "a", 0, 1, hour));
  doc["chart"] = json{{"lines", {{"a", {{"nominalQuota", "-4"}}}}}};
  try {
    (void)load_scenario(doc);
    FAIL("a negative labelled line was accepted");
  } catch (const quota::error& e) {
    CHECK(std::string(e.what()).find("$.chart.lines.a.nominalQuota") != std::string::npos);
  }
}

TEST_CASE("report: time ticks are round steps, labelled in readable units") {
  CHECK(time_tick_ms(13 * hour) == 2 * hour);
  CHECK(time_tick_ms(12 * hour) == hour);
  CHECK(time_tick_ms(45'000) == 5'000);
  CHECK(time_tick_ms(0) == 1'000);
  CHECK(time_tick_label(5400'000) == "1h30m");
  CHECK(time_tick_label(0) == "0");
  CHECK(chart_unit("nvidia.com/gpu") == "GPUs");
  CHECK(chart_unit("alibaba.com/gpu-milli") == "thousandths of a GPU");
  CHECK(chart_unit("cpu") == "cores");
}

TEST_CASE("report: jobs that differ only in user keep the refusals of the pass that last denied their own shape") {
  // Kueue does not read users: once one job is refused in a pass, the others
  // differing only in user share its refusal without a check of their own.
  // A later pass that refuses a new user's job at other amounts leaves the
  // earlier jobs' refusals as they were.
  json doc = one_node("coarse", 16);
  doc["scheduler"] = json{{"preemption", false}};
  doc["tenant_by"] = "namespace";
  doc["until"] = 30 * minute;
  doc["policies"] = json::array({kueue_policy({{"t", 4}}, "BestEffortFIFO")});
  const auto user_job = [](const std::string& id, const std::string& user, std::int64_t submit, int gpus) {
    json j = job_json(id, "t", submit, gpus, hour);
    j["user"] = user;
    return j;
  };
  doc["jobs"].push_back(user_job("holder", "u0", 0, 3));
  doc["jobs"].push_back(user_job("w1", "u1", minute, 2));          // 3 + 2 > 4
  doc["jobs"].push_back(user_job("w2", "u2", minute, 2));          // the same answer as w1's, shared
  doc["jobs"].push_back(user_job("filler", "u0", 2 * minute, 1));  // 3 + 1 fits: 4 in use
  doc["jobs"].push_back(user_job("w3", "u3", 3 * minute, 2));      // refused at 4 in use
  const json r = replay(doc);
  const auto& w1 = job_of(r, "w1");
  const auto& w2 = job_of(r, "w2");
  const auto& w3 = job_of(r, "w3");
  REQUIRE(w1["state"] == "pending");
  REQUIRE(w3["state"] == "pending");
  REQUIRE(w1.contains("reasons"));
  REQUIRE(w3.contains("reasons"));
  CHECK(w1["reason"].get<std::string>().rfind("kueue.", 0) == 0);
  CHECK(w2["reason"] == w1["reason"]);
  CHECK(w2["reasons"] == w1["reasons"]);
  CHECK(w3["reason"] == w1["reason"]);
  CHECK(w3["reasons"] != w1["reasons"]);  // other amounts in use
  CHECK(job_of(r, "filler")["state"] == "running");
}
