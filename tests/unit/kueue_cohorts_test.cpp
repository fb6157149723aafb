// SPDX-License-Identifier: Apache-2.0
// Tests of the Kueue model: quotas per (flavor, resource), cohorts, borrowing
// and lending limits, validation, usage, loading upstream objects.
#include <quota/big_int.hpp>
#include <quota/kueue_cohorts.hpp>
#include <quota/kueue_json.hpp>
#include <quota/engine.hpp>
#include <quota/kueue_flavor_assignment.hpp>
#include <quota/kueue.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "kueue_fixtures.hpp"
#include "quota_catch.hpp"

using namespace quota;
using namespace quota::test;

namespace {

kueue_resource_quota_spec rq(resource_id r, amount nominal, std::optional<amount> bl = {}, std::optional<amount> ll = {}) {
  return kueue_resource_quota_spec{r, nominal, bl, ll};
}
kueue_objects load_file(const std::string& rel, resource_registry& reg) {
  return load_kueue_objects(load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/kueue/" + rel), reg);
}
}  // namespace

TEST_CASE("kueue: borrowing example of the ClusterQueue concept page (9+12 CPUs)") {
  resource_registry reg;
  auto objs = load_file("borrowing.json", reg);
  kueue_model m(objs.config, reg);
  const auto& f = m.forest();
  const auto a = f.cluster_queue_at("team-a-cq");
  const auto b = f.cluster_queue_at("team-b-cq");
  const auto s_cpu = f.slot(*f.find_flavor("default-flavor"), resources::cpu);
  const auto s_mem = f.slot(*f.find_flavor("default-flavor"), resources::memory);
  // team-b idle: team-a can admit up to 12+9 = 21 CPUs and 48+36 = 84Gi
  CHECK(f.available(a, s_cpu) == cpu(21));
  CHECK(f.available(a, s_mem) == gib(84));
  CHECK(f.potential_available(b, s_cpu) == cpu(21));

  // the workload of the file: 3 pods x (5+2 cpu, 10+2 Gi) = 21 cpu, 36Gi, via LocalQueue team-a/user-queue
  REQUIRE(objs.workloads.size() == 1);
  const auto& w = objs.workloads[0];
  CHECK(w.name == "team-a/job-1");
  CHECK(w.priority == 100);
  CHECK(w.created == 1714557600);
  CHECK(w.pod_sets[0].per_pod.get(resources::cpu) == cpu(7));
  CHECK(w.pod_sets[0].per_pod.get(resources::memory) == gib(12));
  kueue_flavor_assignment fa;
  REQUIRE(m.check(w, fa).allowed());
  CHECK(fa.mode == kueue_fit_mode::fit);
  CHECK(fa.borrowing);
  REQUIRE(fa.pod_sets[0].resources.size() == 2);
  CHECK(fa.pod_sets[0].resources[0].borrow == cpu(12));  // 21 - 9
  CHECK(fa.pod_sets[0].resources[1].borrow == 0);        // 36Gi is within nominal
  m.admit(w, fa);
  CHECK(f.usage(a, s_cpu) == cpu(21));
  // the cohort holds what team-a uses above nothing guaranteed: all of it
  CHECK(f.usage(*f.find_cohort("team-ab"), s_cpu) == cpu(21));
  CHECK(f.available(b, s_cpu) == 0);
  // one more CPU for team-b does not fit now; it needs preemption (within its nominal 12)
  kueue_flavor_assignment fb;
  auto d = m.check(wl("b1", "team-b-cq", cpu(1)), fb);
  CHECK(d.denied());
  CHECK(fb.mode == kueue_fit_mode::preempt);
  CHECK(d.has_rule("needs_preemption", "kueue"));
  m.finish("team-a/job-1");
  CHECK(f.usage(a, s_cpu) == 0);
  CHECK(f.usage(*f.find_cohort("team-ab"), s_cpu) == 0);
}

TEST_CASE("kueue: borrowingLimit example (team-a 9+1, team-b may borrow 12+9)") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"default-flavor"};
  cfg.cluster_queues.push_back(
      cq_cpu("team-a-cq", "team-ab", {{"default-flavor", rq(resources::cpu, cpu(9), cpu(1))}}));
  cfg.cluster_queues.push_back(cq_cpu("team-b-cq", "team-ab", {{"default-flavor", rq(resources::cpu, cpu(12))}}));
  kueue_model m(cfg, reg);
  const auto& f = m.forest();
  const auto s = f.slot(0, resources::cpu);
  CHECK(f.potential_available(f.cluster_queue_at("team-a-cq"), s) == cpu(10));
  CHECK(f.potential_available(f.cluster_queue_at("team-b-cq"), s) == cpu(21));
  CHECK(m.check(wl("a10", "team-a-cq", cpu(10))).allowed());
  auto d = m.check(wl("a11", "team-a-cq", cpu(11)));
  REQUIRE(d.denied());
  CHECK(d.has_rule("no_fit"));
  CHECK(d.reasons()[0].limit == cpu(10));  // the maximum capacity is named
  CHECK(d.reasons()[0].resource_name == "cpu");
  // after team-a borrows 1, team-b can still get 20 (21 - 1 in use by team-a beyond its nominal)
  REQUIRE(m.admit(wl("a10", "team-a-cq", cpu(10))).allowed());
  CHECK(f.available(f.cluster_queue_at("team-b-cq"), s) == cpu(11));
  CHECK(f.borrowed(f.cluster_queue_at("team-a-cq"), s) == cpu(1));
}

TEST_CASE("kueue: lendingLimit keeps the unlent part guaranteed") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(9), std::nullopt, cpu(3))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(12))}}));
  kueue_model m(cfg, reg);
  const auto& f = m.forest();
  const auto s = f.slot(0, resources::cpu);
  const auto a = f.cluster_queue_at("a"), b = f.cluster_queue_at("b");
  CHECK(f.guaranteed(a, s) == cpu(6));
  CHECK(f.subtree_quota(*f.find_cohort("co"), s) == cpu(15));  // 3 lent by a + 12 of b
  CHECK(f.potential_available(b, s) == cpu(15));
  CHECK(f.potential_available(a, s) == cpu(21));
  REQUIRE(m.admit(wl("b15", "b", cpu(15))).allowed());
  CHECK(m.check(wl("b1", "b", cpu(1))).denied());
  // a's 6 unlent CPUs are still there
  CHECK(f.available(a, s) == cpu(6));
  REQUIRE(m.admit(wl("a6", "a", cpu(6))).allowed());
  CHECK(f.usage(*f.find_cohort("co"), s) == cpu(15));  // a's 6 stay local
  m.finish("b15");
  // a uses 8: 6 local, 2 drawn from the cohort; b can get 13
  REQUIRE(m.admit(wl("a2", "a", cpu(2))).allowed());
  CHECK(f.usage(*f.find_cohort("co"), s) == cpu(2));
  CHECK(f.available(b, s) == cpu(13));
}

TEST_CASE("kueue: hierarchical cohorts with their own quota and lending limit") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec org;
  org.name = "org";
  org.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(10))}}}});
  kueue_cohort_spec eng;
  eng.name = "eng";
  eng.parent = "org";
  eng.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(2), std::nullopt, cpu(1))}}}});
  cfg.cohorts = {org, eng};
  cfg.cluster_queues.push_back(cq_cpu("a", "eng", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "eng", {{"f", rq(resources::cpu, cpu(6))}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "org", {{"f", rq(resources::cpu, cpu(5))}}));
  kueue_model m(cfg, reg);
  const auto& f = m.forest();
  const auto s = f.slot(0, resources::cpu);
  const auto a = f.cluster_queue_at("a"), c = f.cluster_queue_at("c");
  const auto e = *f.find_cohort("eng"), o = *f.find_cohort("org");
  CHECK(f.subtree_quota(e, s) == cpu(12));  // 2 + 4 + 6
  CHECK(f.guaranteed(e, s) == cpu(11));     // lends only 1 upward
  CHECK(f.subtree_quota(o, s) == cpu(16));  // 10 + 1 + 5
  CHECK(f.potential_available(c, s) == cpu(16));
  CHECK(f.potential_available(a, s) == cpu(27));  // everything in the tree
  // a takes 20: a lends all of its quota (no lending limit), so all 20 count in eng;
  // eng keeps 11 unlent, the other 9 are drawn from org
  REQUIRE(m.admit(wl("a20", "a", cpu(20))).allowed());
  CHECK(f.usage(e, s) == cpu(20));
  CHECK(f.usage(o, s) == cpu(9));
  CHECK(f.available(c, s) == cpu(7));
  CHECK(f.available(f.cluster_queue_at("b"), s) == cpu(7));
  CHECK(f.available(a, s) == cpu(7));
  m.finish("a20");
  CHECK(f.usage(e, s) == 0);
  CHECK(f.usage(o, s) == 0);
}

TEST_CASE("kueue: a flavor needs preemption when the request fits without borrowing in a sub-cohort") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec root, eng;
  root.name = "root";
  eng.name = "eng";
  eng.parent = "root";
  eng.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(10))}}}});
  cfg.cohorts = {root, eng};
  cfg.cluster_queues.push_back(cq_cpu("a", "eng", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "eng", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "root", {{"f", rq(resources::cpu, cpu(5))}}));
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("b6", "b", cpu(6))).allowed());
  REQUIRE(m.admit(wl("c9", "c", cpu(9))).allowed());  // c borrows 4 of eng's quota
  const auto s = m.forest().slot(0, resources::cpu);
  kueue_flavor_assignment fa;
  // 4 more for a fits eng's own 10 without borrowing: needs preemption (a's nominal is 0)
  m.assign(wl("a4", "a", cpu(4)), fa);
  CHECK(m.forest().may_reclaim_in_hierarchy(0, s, cpu(4)));
  CHECK(fa.mode == kueue_fit_mode::preempt);
  // 5 would make eng borrow too: no subtree below the root holds it -> no fit
  m.assign(wl("a5", "a", cpu(5)), fa);
  CHECK_FALSE(m.forest().may_reclaim_in_hierarchy(0, s, cpu(5)));
  CHECK(fa.mode == kueue_fit_mode::no_fit);
}

TEST_CASE("kueue: validation reports every problem at once, naming each") {
  resource_registry reg;
  auto objs = load_file("invalid.json", reg);
  try {
    kueue_model m(objs.config, reg);
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    auto has = [&](std::string_view path, std::string_view msg) {
      return std::any_of(p.begin(), p.end(), [&](const diagnostic& d) {
        return d.path.find(path) != std::string::npos && d.message.find(msg) != std::string::npos;
      });
    };
    CHECK(has("ClusterQueue/lonely.spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", "cohort"));
    CHECK(has("ClusterQueue/lonely.spec.resourceGroups[1].coveredResources", "more than one resource group"));
    CHECK(has("ClusterQueue/lonely.spec.resourceGroups[1].flavors[0].name", "unknown ResourceFlavor 'ghost'"));
    CHECK(has("ClusterQueue/member.spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "nominalQuota"));
    CHECK(has("Cohort/loop-a.spec.parentName", "cycle"));
    CHECK(has("Cohort/loop-b.spec.parentName", "cycle"));
    CHECK(p.size() == 6);
  }
  // loader: unknown enum value and bad quantity, both reported, nothing appended
  kueue_objects out;
  const auto bad = json::parse(R"([
    {"kind": "ClusterQueue", "metadata": {"name": "x"}, "spec": {"queueingStrategy": "Sometimes",
      "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "-1"}]}]}]}}])");
  try {
    load_kueue_objects(bad, reg, out);
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(e.problems().size() == 2);
    CHECK(std::string(e.what()).find("ClusterQueue/x.spec.queueingStrategy") != std::string::npos);
    CHECK(std::string(e.what()).find("nominalQuota") != std::string::npos);
  }
  CHECK(out.config.cluster_queues.empty());
}

TEST_CASE("kueue: quota arithmetic is exact past int64 and overflow-checked at its bounds") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  const amount big = std::numeric_limits<amount>::max() - 5;
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, big)}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, big)}}));
  {
    // the cohort's quota is the exact sum, past int64
    const kueue_model two(cfg, reg);
    const auto co = *two.forest().find_cohort("co");
    CHECK(two.forest().subtree_quota(co, 0) == 2 * kueue_amount{big});
    CHECK(two.forest().potential_available(0, 0) == 2 * kueue_amount{big});
  }
  cfg.cluster_queues.pop_back();
  kueue_model m(cfg, reg);
  // a node's usage stops at kueue_usage_max: checked before anything changes
  kueue_cohort_forest f = m.forest();
  f.add_usage(0, 0, kueue_usage_max - 1);
  CHECK(f.can_add_usage(0, 0, 1));
  CHECK_FALSE(f.can_add_usage(0, 0, 2));
  REQUIRE_THROWS_AS(f.add_usage(0, 0, 2), overflow_error);
  // a request whose total does not fit int64
  auto w = wl("huge", "a", std::numeric_limits<amount>::max() / 2, 3);
  kueue_flavor_assignment fa;
  REQUIRE_THROWS_AS(m.assign(w, fa), overflow_error);
  CHECK(m.admitted_count() == 0);
}

TEST_CASE("kueue: Cohort objects with parentName, weights and limits load from JSON") {
  resource_registry reg;
  const auto doc = json::parse(R"({"kind": "List", "items": [
    {"kind": "ResourceFlavor", "metadata": {"name": "gpu-a"}},
    {"kind": "Cohort", "metadata": {"name": "root"}},
    {"kind": "Cohort", "metadata": {"name": "research"}, "spec": {"parentName": "root", "fairSharing": {"weight": "500m"},
      "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "gpu-a",
        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8, "lendingLimit": 2, "borrowingLimit": 0}]}]}]}},
    {"kind": "ClusterQueue", "metadata": {"name": "ml"}, "spec": {"cohortName": "research", "stopPolicy": "Hold",
      "queueingStrategy": "StrictFIFO", "fairSharing": {"weight": 2},
      "preemption": {"borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 7}, "reclaimWithinCohort": "LowerPriority"},
      "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "Preempt"},
      "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "gpu-a",
        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 4}]}]}]}},
    {"kind": "ClusterQueue", "metadata": {"name": "web"}, "spec": {"cohortName": "root",
      "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "gpu-a",
        "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 1}]}]}]}}]})");
  auto objs = load_kueue_objects(doc, reg);
  REQUIRE(objs.config.cohorts.size() == 2);
  CHECK(objs.config.cohorts[1].parent == "root");
  CHECK(objs.config.cohorts[1].fair_weight_milli == 500);
  const auto& ml = objs.config.cluster_queues[0];
  CHECK(ml.fair_weight_milli == 2000);
  CHECK(ml.stop == kueue_stop_policy::hold);
  CHECK(ml.queueing == kueue_queueing_strategy::strict_fifo);
  CHECK(ml.preemption.borrow_within_cohort == kueue_borrow_within_cohort_policy::lower_priority);
  CHECK(ml.preemption.max_priority_threshold == 7);
  CHECK(ml.fungibility.when_can_preempt == kueue_fungibility_action::may_stop_search);
  kueue_model m(objs.config, reg);
  const auto& f = m.forest();
  const auto s = f.slot(0, resources::nvidia_gpu);
  const auto research = *f.find_cohort("research");
  CHECK(f.subtree_quota(research, s) == 12);
  CHECK(f.guaranteed(research, s) == 10);
  CHECK(f.subtree_quota(*f.find_cohort("root"), s) == 3);  // 2 lent by research + 1 of web
  // research may not borrow (borrowingLimit 0): ml reaches 12, web 3
  CHECK(f.potential_available(f.cluster_queue_at("ml"), s) == 12);
  CHECK(f.potential_available(f.cluster_queue_at("web"), s) == 3);
}

TEST_CASE("kueue: flavorFungibility whenCanBorrow") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"on-demand", "spot"};
  cfg.cluster_queues.push_back(
      cq_cpu("a", "co", {{"on-demand", rq(resources::cpu, cpu(2))}, {"spot", rq(resources::cpu, cpu(8))}}));
  cfg.cluster_queues.push_back(
      cq_cpu("b", "co", {{"on-demand", rq(resources::cpu, cpu(10))}, {"spot", rq(resources::cpu, 0)}}));
  const auto od = kueue_flavor_index{0}, spot = kueue_flavor_index{1};
  SECTION("default Borrow: stop at the first flavor that fits by borrowing") {
    kueue_model m(cfg, reg);
    kueue_flavor_assignment fa;
    m.assign(wl("w", "a", cpu(4)), fa);
    CHECK(fa.mode == kueue_fit_mode::fit);
    CHECK(fa.borrowing);
    CHECK(fa.pod_sets[0].resources[0].flavor == od);
    CHECK(fa.pod_sets[0].resources[0].borrow == cpu(2));
  }
  SECTION("TryNextFlavor: a later flavor that fits without borrowing wins") {
    cfg.cluster_queues[0].fungibility.when_can_borrow = kueue_fungibility_action::try_next_flavor;
    kueue_model m(cfg, reg);
    kueue_flavor_assignment fa;
    m.assign(wl("w", "a", cpu(4)), fa);
    CHECK(fa.mode == kueue_fit_mode::fit);
    CHECK_FALSE(fa.borrowing);
    CHECK(fa.pod_sets[0].resources[0].flavor == spot);
    // 9 CPUs: spot cannot (8 + 0 lent), on-demand by borrowing is the best found
    m.assign(wl("w9", "a", cpu(9)), fa);
    CHECK(fa.pod_sets[0].resources[0].flavor == od);
    CHECK(fa.borrowing);
  }
}

TEST_CASE("kueue: flavorFungibility whenCanPreempt") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f1", "f2"};
  cfg.cluster_queues.push_back(
      cq_cpu("a", "", {{"f1", rq(resources::cpu, cpu(4))}, {"f2", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  auto run = [&](kueue_fungibility_action p) {
    cfg.cluster_queues[0].fungibility.when_can_preempt = p;
    auto m = std::make_unique<kueue_model>(cfg, reg);
    kueue_flavor_assignment fa;
    m->assign(wl("low", "a", cpu(3), 1, 0), fa);
    m->admit(wl("low", "a", cpu(3), 1, 0), fa);  // lands in f1
    m->assign(wl("hi", "a", cpu(2), 1, 10), fa);
    return std::make_pair(std::move(m), fa);
  };
  {
    auto [m, fa] = run(kueue_fungibility_action::try_next_flavor);  // default
    CHECK(fa.mode == kueue_fit_mode::fit);
    CHECK(fa.pod_sets[0].resources[0].flavor == 1);
  }
  {
    auto [m, fa] = run(kueue_fungibility_action::may_stop_search);  // v1beta1 "Preempt"
    CHECK(fa.mode == kueue_fit_mode::preempt);
    CHECK(fa.pod_sets[0].resources[0].flavor == 0);
    auto t = m->preemption_targets(wl("hi", "a", cpu(2), 1, 10), fa);
    REQUIRE(t.size() == 1);
    CHECK(t[0].name == "low");
    CHECK(t[0].rule == "withinClusterQueue");
  }
}

TEST_CASE("kueue: pod sets add up per flavor; resource groups pick flavors independently") {
  resource_registry reg;
  const auto gpu = resources::nvidia_gpu;
  kueue_config cfg;
  cfg.resource_flavors = {"x86", "arm", "a100", "t4"};
  kueue_cluster_queue_spec c;
  c.name = "cq";
  c.resource_groups.push_back(
      {{resources::cpu}, {{"x86", {rq(resources::cpu, cpu(10))}}, {"arm", {rq(resources::cpu, cpu(10))}}}});
  c.resource_groups.push_back({{gpu}, {{"a100", {rq(gpu, 2)}}, {"t4", {rq(gpu, 8)}}}});
  cfg.cluster_queues.push_back(c);
  kueue_model m(cfg, reg);
  kueue_workload w;
  w.name = "w";
  w.queue = "cq";
  kueue_pod_set p1, p2;
  p1.count = 2;
  p1.per_pod.set(resources::cpu, cpu(3));
  p1.per_pod.set(gpu, 1);
  p2.count = 1;
  p2.per_pod.set(resources::cpu, cpu(5));
  p2.per_pod.set(gpu, 1);
  w.pod_sets = {p1, p2};
  kueue_flavor_assignment fa;
  m.assign(w, fa);
  REQUIRE(fa.mode == kueue_fit_mode::fit);
  // pod set 1: 6 cpu on x86, 2 gpu on a100; pod set 2: 5 more cpu do not fit x86 (11 > 10) -> arm; gpu a100 full -> t4
  CHECK(fa.pod_sets[0].resources[0].flavor == 0);
  CHECK(fa.pod_sets[0].resources[1].flavor == 2);
  CHECK(fa.pod_sets[1].resources[0].flavor == 1);
  CHECK(fa.pod_sets[1].resources[1].flavor == 3);
  CHECK(fa.usage_of(m.forest().slot(0, resources::cpu)) == cpu(6));
  CHECK(fa.usage_of(m.forest().slot(1, resources::cpu)) == cpu(5));
  // an uncovered resource is a no-fit with a reason naming it
  w.pod_sets[0].per_pod.set(resources::memory, 1);
  auto d = m.check(w);
  CHECK(d.has_rule("resource_not_covered"));
}

TEST_CASE("kueue: withinClusterQueue policies and the minimal target set") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f", rq(resources::cpu, cpu(10))}}));
  SECTION("LowerPriority: lowest priority first, then newest; fill-back drops needless targets") {
    cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("p1-big", "a", cpu(5), 1, 1)).allowed());
    REQUIRE(m.admit(wl("p0-old", "a", cpu(1), 1, 0)).allowed());
    REQUIRE(m.admit(wl("p0-new", "a", cpu(2), 1, 0)).allowed());
    REQUIRE(m.admit(wl("p5", "a", cpu(2), 1, 5)).allowed());
    auto in = wl("in", "a", cpu(5), 1, 3);
    kueue_flavor_assignment fa;
    m.assign(in, fa);
    REQUIRE(fa.mode == kueue_fit_mode::preempt);
    auto t = m.preemption_targets(in, fa);
    // order tried: p0-new, p0-old, p1-big; 5 needed: all three removed, then fill-back keeps p0-new and p0-old
    REQUIRE(t.size() == 1);
    CHECK(t[0].name == "p1-big");
    // the same priority is never a target under LowerPriority
    auto eq = wl("eq", "a", cpu(3), 1, 5);
    m.assign(eq, fa);
    for (const auto& x : m.preemption_targets(eq, fa)) CHECK(x.name != "p5");
  }
  SECTION("LowerOrNewerEqualPriority: equal priority only when newer") {
    cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_or_newer_equal_priority;
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("older", "a", cpu(5), 1, 1, 10)).allowed());
    REQUIRE(m.admit(wl("newer", "a", cpu(5), 1, 1, 30)).allowed());
    auto in = wl("in", "a", cpu(5), 1, 1, 20);
    kueue_flavor_assignment fa;
    m.assign(in, fa);
    auto t = m.preemption_targets(in, fa);
    REQUIRE(t.size() == 1);
    CHECK(t[0].name == "newer");
  }
  SECTION("Never: no targets") {
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("x", "a", cpu(10), 1, 0)).allowed());
    auto in = wl("in", "a", cpu(1), 1, 100);
    kueue_flavor_assignment fa;
    m.assign(in, fa);
    CHECK(fa.mode == kueue_fit_mode::preempt);
    CHECK(m.preemption_targets(in, fa).empty());
  }
}

TEST_CASE("kueue: reclaimWithinCohort takes back lent quota from borrowing queues only") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(6))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(6))}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "co", {{"f", rq(resources::cpu, cpu(6))}}));
  auto setup = [&](kueue_reclaim_within_cohort_policy p) {
    cfg.cluster_queues[0].preemption.reclaim_within_cohort = p;
    auto m = std::make_unique<kueue_model>(cfg, reg);
    // b borrows: 10 on nominal 6; c stays within nominal (6)
    REQUIRE(m->admit(wl("b-lo", "b", cpu(4), 1, 0)).allowed());
    REQUIRE(m->admit(wl("b-hi", "b", cpu(6), 1, 9)).allowed());
    REQUIRE(m->admit(wl("c-lo", "c", cpu(6), 1, 0)).allowed());
    return m;
  };
  auto in = wl("in", "a", cpu(4), 1, 5);
  kueue_flavor_assignment fa;
  SECTION("Any: the borrowing queue's workloads, any priority, lowest first") {
    auto m = setup(kueue_reclaim_within_cohort_policy::any);
    m->assign(in, fa);
    REQUIRE(fa.mode == kueue_fit_mode::preempt);
    auto t = m->preemption_targets(in, fa);
    REQUIRE(t.size() == 1);
    CHECK(t[0].name == "b-lo");
    CHECK(t[0].rule == "reclaimWithinCohort");
    // 6 needed (2 free): b-lo frees exactly 4; c never borrowed and is never a candidate
    auto in6 = wl("in6", "a", cpu(6), 1, 5);
    m->assign(in6, fa);
    auto t6 = m->preemption_targets(in6, fa);
    REQUIRE(t6.size() == 1);
    CHECK(t6[0].name == "b-lo");
  }
  SECTION("LowerPriority: only lower priority than the incoming workload") {
    cfg.cluster_queues[1].resource_groups[0].flavors[0].resources[0].nominal = cpu(6);
    auto m = setup(kueue_reclaim_within_cohort_policy::lower_priority);
    auto in_lo = wl("in", "a", cpu(4), 1, 0);  // priority 0: b-lo (0) is not lower
    m->assign(in_lo, fa);
    CHECK(m->preemption_targets(in_lo, fa).empty());
    m->assign(in, fa);
    auto t = m->preemption_targets(in, fa);
    REQUIRE(t.size() == 1);
    CHECK(t[0].name == "b-lo");
  }
  SECTION("Never: nothing is reclaimed") {
    auto m = setup(kueue_reclaim_within_cohort_policy::never);
    m->assign(in, fa);
    CHECK(m->preemption_targets(in, fa).empty());
  }
}

// A preemption search reads only the admitted workloads of the ClusterQueues
// it searches, through lists kept on admission, finish and reload: after
// random admissions, finishes (whose entries later admissions reuse) and a
// reload, the targets equal those of a copy, whose lists are built anew.
TEST_CASE("kueue: preemption targets after admissions, finishes and a reload equal those of a copy") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  for (const char* n : {"a", "b", "c"}) {
    cfg.cluster_queues.push_back(cq_cpu(n, "co", {{"f", rq(resources::cpu, cpu(6))}}));
    cfg.cluster_queues.back().preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
    cfg.cluster_queues.back().preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  }
  kueue_model m(cfg, reg);
  std::mt19937_64 rng(20261128);
  std::vector<std::string> live;
  std::size_t compared = 0, named = 0;
  for (int step = 0; step < 400; ++step) {
    if (step == 200) {  // a reload: b's quota grows, admitted workloads stay
      cfg.cluster_queues[1].resource_groups[0].flavors[0].resources[0].nominal = cpu(8);
      m.update_config(cfg);
    }
    if (!live.empty() && rng() % 3 == 0) {
      const auto k = static_cast<std::size_t>(rng() % live.size());
      m.finish(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      const std::string q(1, static_cast<char>('a' + rng() % 3));
      const auto w = wl("w" + std::to_string(step), q, cpu(1 + static_cast<amount>(rng() % 3)), 1,
                        static_cast<std::int32_t>(rng() % 4), step);
      if (m.admit(w).allowed()) live.push_back(w.name);
    }
    const kueue_model copy(m);
    for (const char* q : {"a", "b", "c"}) {
      const auto in = wl("probe", q, cpu(1 + static_cast<amount>(rng() % 5)), 1, 3, 1000);
      kueue_flavor_assignment fa;
      m.assign(in, fa);
      if (fa.mode != kueue_fit_mode::preempt) continue;
      const auto got = m.preemption_targets(in, fa), want = copy.preemption_targets(in, fa);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].name == want[i].name);
      ++compared;
      named += got.size();
    }
  }
  CHECK(compared > 100);
  CHECK(named > 50);
}

TEST_CASE("kueue: borrowWithinCohort preempts while borrowing up to maxPriorityThreshold") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(2))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(2))}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "co", {{"f", rq(resources::cpu, cpu(6))}}));
  auto& p = cfg.cluster_queues[0].preemption;
  p.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  p.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
  p.max_priority_threshold = 3;
  kueue_model m(cfg, reg);
  // b borrows 4 with two workloads: priority 2 (under the threshold) and priority 4 (above)
  REQUIRE(m.admit(wl("b-p2", "b", cpu(3), 1, 2)).allowed());
  REQUIRE(m.admit(wl("b-p4", "b", cpu(3), 1, 4)).allowed());
  REQUIRE(m.admit(wl("c-p0", "c", cpu(4), 1, 0)).allowed());
  // a wants 3 (above its nominal 2): needs to borrow, so only b-p2 may go
  auto in = wl("in", "a", cpu(3), 1, 10);
  kueue_flavor_assignment fa;
  m.assign(in, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  auto t = m.preemption_targets(in, fa);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "b-p2");
  // without borrowWithinCohort the workload would have to fit within a's nominal: no targets
  cfg.cluster_queues[0].preemption.borrow_within_cohort = kueue_borrow_within_cohort_policy::never;
  kueue_model m2(cfg, reg);
  REQUIRE(m2.admit(wl("b-p2", "b", cpu(3), 1, 2)).allowed());
  REQUIRE(m2.admit(wl("b-p4", "b", cpu(3), 1, 4)).allowed());
  REQUIRE(m2.admit(wl("c-p0", "c", cpu(4), 1, 0)).allowed());
  m2.assign(in, fa);
  CHECK(fa.mode == kueue_fit_mode::no_fit);  // 3 > nominal 2 and no borrowing preemption allowed
  CHECK(m2.preemption_targets(in, fa).empty());
}

TEST_CASE("kueue: borrowWithinCohort needs reclaimWithinCohort (validation)") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(2))}}));
  cfg.cluster_queues[0].preemption.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
  REQUIRE_THROWS_AS(kueue_model(cfg, reg), validation_error);
}

TEST_CASE("kueue: partial admission reduces counts down to minCount") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f", rq(resources::cpu, cpu(10))}}));
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("x", "a", cpu(3))).allowed());  // 7 left
  auto w = wl("p", "a", cpu(1), 10);
  w.pod_sets[0].min_count = 4;
  kueue_flavor_assignment fa;
  std::vector<std::int32_t> counts;
  REQUIRE(m.assigner().assign_partial(m.forest().cluster_queue_at("a"), w, fa, counts));
  CHECK(counts == std::vector<std::int32_t>{7});
  CHECK(fa.mode == kueue_fit_mode::fit);
  CHECK(fa.pod_sets[0].count == 7);
  m.admit(w, fa);
  CHECK(m.forest().usage(0, 0) == cpu(10));
  // minCount that does not fit
  auto w2 = wl("q", "a", cpu(1), 5);
  w2.pod_sets[0].min_count = 1;
  CHECK_FALSE(m.assigner().assign_partial(0, w2, fa, counts));
  // without minCount no reduction is tried
  m.finish("x");
  auto w3 = wl("r", "a", cpu(1), 5);
  CHECK_FALSE(m.assigner().assign_partial(0, w3, fa, counts));
}

TEST_CASE("kueue: StrictFIFO blocks behind the head, BestEffortFIFO does not") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("strict", "", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues.push_back(cq_cpu("best", "", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues[0].queueing = kueue_queueing_strategy::strict_fifo;
  kueue_model m(cfg, reg);
  std::vector<kueue_workload> pending = {wl("s-big", "strict", cpu(5), 1, 0, 1), wl("s-small", "strict", cpu(1), 1, 0, 2),
                                   wl("b-big", "best", cpu(5), 1, 0, 1), wl("b-small", "best", cpu(1), 1, 0, 2),
                                   wl("b-hi", "best", cpu(2), 1, 7, 3)};
  auto admitted = m.schedule(pending);
  // priority first (b-hi), then creation order; s-small waits behind s-big
  CHECK(admitted == std::vector<std::string>{"b-hi", "b-small"});
  CHECK(m.find_admitted("s-small") == nullptr);
}

TEST_CASE("kueue: with fair sharing, admission alternates by dominant resource share") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec co;
  co.name = "co";
  co.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(10))}}}});
  cfg.cohorts = {co};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, 0)}}));
  std::vector<kueue_workload> pending;
  for (int i = 0; i < 10; ++i) pending.push_back(wl("a" + std::to_string(i), "a", cpu(1), 1, 0, i));
  for (int i = 0; i < 10; ++i) pending.push_back(wl("b" + std::to_string(i), "b", cpu(1), 1, 0, 100 + i));
  {
    kueue_model m(cfg, reg);  // without fair sharing: creation order, a takes everything
    const auto got = m.schedule(pending);
    CHECK(got.size() == 10);
    CHECK(std::all_of(got.begin(), got.end(), [](const std::string& n) { return n[0] == 'a'; }));
  }
  cfg.fair_sharing = true;
  kueue_model m(cfg, reg);
  const auto got = m.schedule(pending);
  REQUIRE(got.size() == 10);
  CHECK(std::count_if(got.begin(), got.end(), [](const std::string& n) { return n[0] == 'a'; }) == 5);
  CHECK(got[0] == "a0");  // equal shares: queue order decides
  CHECK(got[1] == "b0");
  CHECK(m.forest().share(0) == m.forest().share(1));
}

TEST_CASE("kueue: a stopped ClusterQueue admits nothing; admitted work stays") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f", rq(resources::cpu, cpu(4))}}));
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("x", "a", cpu(1))).allowed());
  cfg.cluster_queues[0].stop = kueue_stop_policy::hold;
  m.update_config(cfg);
  auto d = m.check(wl("y", "a", cpu(1)));
  CHECK(d.has_rule("cluster_queue_stopped"));
  CHECK(m.find_admitted("x") != nullptr);
  CHECK(m.drain_candidates().empty());  // Hold keeps admitted work running
  cfg.cluster_queues[0].stop = kueue_stop_policy::hold_and_drain;
  m.update_config(cfg);
  CHECK(m.drain_candidates() == std::vector<std::string>{"x"});
}

TEST_CASE("kueue: lowering a quota below usage keeps admitted work; eviction after grace is a policy") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f", rq(resources::cpu, cpu(10))}}));
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("old-hi", "a", cpu(4), 1, 5)).allowed());
  REQUIRE(m.admit(wl("mid-lo", "a", cpu(3), 1, 0)).allowed());
  REQUIRE(m.admit(wl("new-lo", "a", cpu(3), 1, 0)).allowed());
  cfg.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal = cpu(6);
  m.update_config(cfg);
  CHECK(m.admitted_count() == 3);
  CHECK(m.forest().usage(0, 0) == cpu(10));
  CHECK(m.forest().available(0, 0) == cpu(-4));
  CHECK(m.over_capacity_cluster_queues() == std::vector<kueue_node_index>{0});
  CHECK(m.check(wl("z", "a", 1)).denied());
  CHECK(m.shrink_evictions(kueue_shrink_policy::keep, 0, 1000, 10).empty());
  CHECK(m.shrink_evictions(kueue_shrink_policy::evict_after_grace, 0, 5, 10).empty());  // grace not over
  // lowest priority, newest first, until back within quota: new-lo then mid-lo (4 over)
  CHECK(m.shrink_evictions(kueue_shrink_policy::evict_after_grace, 0, 10, 10) ==
        std::vector<std::string>{"new-lo", "mid-lo"});
  // removing the ClusterQueue of an admitted workload is refused, state unchanged
  kueue_config gone;
  gone.resource_flavors = {"f"};
  REQUIRE_THROWS_AS(m.update_config(gone), validation_error);
  CHECK(m.forest().cluster_queue_count() == 1);
  CHECK(m.forest().usage(0, 0) == cpu(10));
}

TEST_CASE("kueue: dominant resource share, weights and the hierarchical comparison") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cluster_queue_spec a, b;
  a.name = "a";
  a.cohort = "co";
  a.resource_groups.push_back(
      {{resources::cpu, resources::memory}, {{"f", {rq(resources::cpu, cpu(10)), rq(resources::memory, gib(40))}}}});
  b = a;
  b.name = "b";
  cfg.cluster_queues = {a, b};
  kueue_model m(cfg, reg);
  const auto& f = m.forest();
  CHECK(f.dominant_resource_share(0) == 0);
  // a uses 15 cpu (5 borrowed of 20 lendable = 250 per mille) and 50Gi (10 of 80 = 125)
  kueue_workload w = wl("w", "a", cpu(15));
  w.pod_sets[0].per_pod.set(resources::memory, gib(50));
  REQUIRE(m.admit(w).allowed());
  resource_id dom = no_resource;
  CHECK(f.dominant_resource_share(0, nullptr, &dom) == 250);
  CHECK(dom == resources::cpu);
  CHECK(f.dominant_resource_share(1) == 0);
  CHECK(f.dominant_resource_share(*f.find_cohort("co")) == 0);  // a root
  CHECK(m.fair_less(1, 0));
  CHECK_FALSE(m.fair_less(0, 1));
  // weight 2 halves the share; weight 0 ranks last whenever borrowing
  cfg.cluster_queues[0].fair_weight_milli = 2000;
  m.update_config(cfg);
  CHECK(m.forest().dominant_resource_share(0) == 125);
  cfg.cluster_queues[0].fair_weight_milli = 0;
  m.update_config(cfg);
  CHECK(m.forest().dominant_resource_share(0) == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("kueue: fair-sharing preemption strategies") {
  resource_registry reg;
  kueue_config cfg;
  cfg.fair_sharing = true;
  cfg.resource_flavors = {"f"};
  for (const char* n : {"a", "b", "c"})
    cfg.cluster_queues.push_back(cq_cpu(n, "co", {{"f", rq(resources::cpu, cpu(10))}}));
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  kueue_model m(cfg, reg);
  // b uses 16 (borrows 6: share 6/30 = 200), c uses 14 (borrows 4: 133), a nothing
  for (int i = 1; i <= 4; ++i) REQUIRE(m.admit(wl("b" + std::to_string(i), "b", cpu(4))).allowed());
  REQUIRE(m.admit(wl("c1", "c", cpu(4))).allowed());
  REQUIRE(m.admit(wl("c2", "c", cpu(10))).allowed());
  CHECK(m.forest().dominant_resource_share(1) == 200);
  CHECK(m.forest().dominant_resource_share(2) == 134);  // 133.3 rounded up, as Kueue reports it
  CHECK(m.forest().share(2) < m.forest().share(1));
  kueue_flavor_assignment fa;
  // within a's nominal: the queue with the highest share gives up its newest
  // workload, reclaimed without a strategy check (Kueue's
  // FairSharingPreemptWithinNominal, on by default)
  auto small = wl("in4", "a", cpu(4));
  m.assign(small, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  auto t = m.fair_preemption_targets(small, fa);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "b4");
  CHECK(t[0].rule == "reclaimWithinCohort");
  CHECK(t[0].reason == "InCohortReclamation");
  // 12 (a would borrow 2, share 66): final-share rule stops after b4 (c would fall to 0 < 66)
  auto big = wl("in12", "a", cpu(12));
  m.assign(big, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);  // fair sharing lets the preemptor borrow
  CHECK(m.fair_preemption_targets(big, fa, {kueue_fair_preemption_strategy::less_than_or_equal_to_final_share}).empty());
  // initial-share rule: 66 < 200 (b) and 66 < 133 (c): b4 and c2 go, and both are needed
  t = m.fair_preemption_targets(big, fa);
  REQUIRE(t.size() == 2);
  CHECK(t[0].name == "b4");
  CHECK(t[1].name == "c2");
  CHECK(t[1].rule == "LessThanInitialShare");
  CHECK(t[0].reason == "InCohortFairSharing");
  CHECK(t[1].reason == "InCohortFairSharing");
}

TEST_CASE("kueue: typed errors leave the state unchanged") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.local_queues.push_back({"ns", "lq", "a"});
  kueue_model m(cfg, reg);
  auto w = wl("x", "lq", cpu(2));
  w.ns = "ns";
  kueue_flavor_assignment fa;
  REQUIRE(m.check(w, fa).allowed());
  m.admit(w, fa);
  REQUIRE_THROWS_AS(m.admit(w, fa), state_error);
  CHECK(m.forest().usage(0, 0) == cpu(2));
  REQUIRE_THROWS_AS(m.finish("nope"), unknown_entity_error);
  REQUIRE_THROWS_AS(m.check(wl("y", "missing", 1)), unknown_entity_error);
  auto big = wl("big", "a", cpu(3));
  m.assign(big, fa);
  REQUIRE_THROWS_AS(m.admit(big, fa), state_error);  // not a fit
  CHECK(m.admitted_count() == 1);
  // an assignment computed before another admission is stale
  kueue_flavor_assignment f1, f2;
  REQUIRE(m.check(wl("s1", "a", cpu(2)), f1).allowed());
  REQUIRE(m.check(wl("s2", "a", cpu(2)), f2).allowed());
  m.admit(wl("s1", "a", cpu(2)), f1);
  REQUIRE_THROWS_AS(m.admit(wl("s2", "a", cpu(2)), f2), state_error);
  CHECK(m.find_admitted("s2") == nullptr);
  m.finish("s1");
  CHECK(m.forest().usage(0, 0) == cpu(2));
  // a LocalQueue pointing at an unknown ClusterQueue
  cfg.local_queues.push_back({"ns", "bad", "nowhere"});
  REQUIRE_THROWS_AS(m.update_config(cfg), validation_error);
  CHECK(m.forest().find_local_queue("ns", "bad") == std::nullopt);
}

TEST_CASE("kueue: policy adapter maps jobs onto LocalQueues and preemption targets") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("cq", "", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  cfg.local_queues.push_back({"team", "main", "cq"});
  kueue_policy p(kueue_model(cfg, reg));
  const kueue_model& m = p.model();
  job j;
  j.id = "team/j1";
  j.ns = "team";
  j.queue = "main";
  j.pods = 2;
  j.request.set(resources::cpu, cpu(4));
  REQUIRE(p.check(j).allowed());
  p.commit(j);
  CHECK(m.forest().usage(0, 0) == cpu(4));
  job k = j;
  k.id = "team/k";
  k.priority = 5;
  k.request.set(resources::cpu, cpu(1));
  k.pods = 1;
  CHECK(p.check(k).denied());
  std::vector<victim> v;
  p.victims(k, v);
  REQUIRE(v.size() == 1);
  CHECK(v[0] == victim{"team/j1", "kueue", "withinClusterQueue", "cq", "InClusterQueue"});
  p.release("team/j1");
  CHECK(m.forest().usage(0, 0) == 0);
  REQUIRE_THROWS_AS(p.release("team/j1"), unknown_entity_error);
}

TEST_CASE("kueue: randomized invariants of borrowing and lending") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 40; ++round) {
    resource_registry reg;
    kueue_config cfg;
    cfg.resource_flavors = {"f0", "f1"};
    const int ncq = 2 + static_cast<int>(rng() % 5);
    kueue_cohort_spec root;
    root.name = "root";
    if (rng() % 2)
      root.resource_groups.push_back(
          {{resources::cpu}, {{"f0", {rq(resources::cpu, cpu(static_cast<std::int64_t>(rng() % 5)))}}}});
    kueue_cohort_spec mid;
    mid.name = "mid";
    mid.parent = "root";
    cfg.cohorts = {root, mid};
    for (int i = 0; i < ncq; ++i) {
      std::vector<std::pair<std::string, kueue_resource_quota_spec>> fl;
      for (const char* f : {"f0", "f1"}) {
        const amount nom = cpu(static_cast<std::int64_t>(rng() % 8));
        std::optional<amount> bl, ll;
        if (rng() % 3 == 0) bl = cpu(static_cast<std::int64_t>(rng() % 4));
        if (rng() % 3 == 0) ll = static_cast<amount>(rng() % static_cast<std::uint64_t>(nom + 1));
        fl.emplace_back(f, rq(resources::cpu, nom, bl, ll));
      }
      cfg.cluster_queues.push_back(cq_cpu("q" + std::to_string(i), i % 2 ? "mid" : "root", fl));
    }
    kueue_model m(cfg, reg);
    const auto& f = m.forest();
    std::vector<std::string> live;
    for (int step = 0; step < 200; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const auto k = rng() % live.size();
        m.finish(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        const auto q = "q" + std::to_string(rng() % static_cast<std::uint64_t>(ncq));
        auto w =
            wl("w" + std::to_string(round) + "-" + std::to_string(step), q, 500 * static_cast<amount>(1 + rng() % 6));
        if (m.admit(w).allowed()) live.push_back(w.name);
      }
      for (kueue_node_index n = 0; n < f.node_count(); ++n)
        for (kueue_fr_slot s = 0; s < f.slot_count(); ++s) {
          // nothing is over-committed anywhere
          REQUIRE(f.available(n, s) >= 0);
          // no ClusterQueue above nominal + borrowing limit
          if (auto bl = f.borrowing_limit(n, s)) REQUIRE(f.usage(n, s) <= f.subtree_quota(n, s) + *bl);
          // the unlent part is always there for its owner: others never take it
          REQUIRE(f.available(n, s) >= std::max<kueue_amount>(0, f.guaranteed(n, s) - f.usage(n, s)));
          // a cohort's usage is what its children draw beyond their guaranteed part
          if (f.at(n).is_cohort) {
            kueue_amount sum = 0;
            for (auto c : f.at(n).children) sum += std::max<kueue_amount>(0, f.usage(c, s) - f.guaranteed(c, s));
            REQUIRE(f.usage(n, s) == sum);
          }
        }
    }
    for (const auto& n : live) m.finish(n);
    for (auto u : f.usage_table()) REQUIRE(u == 0);
  }
}

TEST_CASE("kueue: admission that fits jointly does not depend on input order") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(5), std::nullopt, cpu(2))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(5))}}));
  std::vector<kueue_workload> ws = {wl("1", "a", cpu(6)), wl("2", "b", cpu(3)), wl("3", "b", cpu(1))};
  std::vector<kueue_amount> first;
  std::sort(ws.begin(), ws.end(), [](auto& x, auto& y) { return x.name < y.name; });
  do {
    kueue_model m(cfg, reg);
    for (const auto& w : ws) REQUIRE(m.admit(w).allowed());
    if (first.empty()) first = m.forest().usage_table();
    CHECK(m.forest().usage_table() == first);
  } while (std::next_permutation(ws.begin(), ws.end(), [](auto& x, auto& y) { return x.name < y.name; }));
}

namespace {
// one ClusterQueue "cq" (cpu nominal `nominal` in flavor f) with LocalQueues ns-a/qa and ns-b/qb
kueue_config afs_config(amount nominal, bool opt_in, std::int64_t weight_a_milli = 1000) {
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("cq", "", {{"f", rq(resources::cpu, nominal)}}));
  cfg.cluster_queues[0].admission_fair_sharing = opt_in;
  cfg.local_queues.push_back({"ns-a", "qa", "cq", weight_a_milli});
  cfg.local_queues.push_back({"ns-b", "qb", "cq", 1000});
  kueue_admission_fair_sharing_config afs;
  afs.half_life_ms = 600000;          // 10m
  afs.sampling_interval_ms = 600000;  // one half-life: the entry penalty is half the request
  cfg.admission_fair_sharing = afs;
  return cfg;
}
kueue_workload lq_wl(std::string name, std::string ns, std::string q, amount cpu_total, std::int32_t prio,
               std::int64_t created) {
  auto w = wl(std::move(name), std::move(q), cpu_total, 1, prio, created);
  w.ns = std::move(ns);
  return w;
}
}  // namespace

TEST_CASE("kueue: admission fair sharing decays LocalQueue usage by half-life and adds entry penalties") {
  resource_registry reg;
  kueue_model m(afs_config(cpu(10), true), reg);
  CHECK(*m.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(0));
  REQUIRE(m.admit(lq_wl("a1", "ns-a", "qa", cpu(4), 0, 0)).allowed());
  // entry penalty: 4 cpu x (1 - 2^-1) = 2 cpu until the next sample
  CHECK(m.find_local_queue_usage("ns-a/qa")->penalty.get(resources::cpu) == cpu(2));
  CHECK(*m.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(2));
  CHECK(*m.local_queue_fs_usage("ns-b/qb") == kueue_afs_usage::of(0));
  // one half-life later, a1 still running: 0 * 1/2 + 4 * 1/2 + penalty 2 = 4 cores
  m.sample_usage(600000);
  CHECK(m.find_local_queue_usage("ns-a/qa")->consumed.get(resources::cpu) == cpu(4));
  CHECK(m.find_local_queue_usage("ns-a/qa")->penalty.get(resources::cpu) == 0);
  CHECK(*m.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(4));
  // a1 finishes; two half-lives later (a = 3/4): 4 * 1/4 + 0 = 1 core
  m.finish("a1");
  m.sample_usage(1800000);
  CHECK(m.find_local_queue_usage("ns-a/qa")->consumed.get(resources::cpu) == cpu(1));
  CHECK(*m.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(1));
  SECTION("a sample before the last one is a state_error and changes nothing") {
    REQUIRE_THROWS_AS(m.sample_usage(1200000), state_error);
    CHECK(m.find_local_queue_usage("ns-a/qa")->consumed.get(resources::cpu) == cpu(1));
    CHECK(m.find_local_queue_usage("ns-a/qa")->last_update_ms == 1800000);
  }
  SECTION("resource weights scale each resource's contribution") {
    auto cfg = afs_config(cpu(10), true);
    cfg.admission_fair_sharing->resource_weights_milli = {{resources::cpu, 2500}};
    kueue_model w(cfg, reg);
    REQUIRE(w.admit(lq_wl("a1", "ns-a", "qa", cpu(4), 0, 0)).allowed());
    CHECK(*w.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(5));  // 2.5 x 2 cores of penalty
  }
  SECTION("a half-life of 0 keeps no history (Kueue's decay rate is 0 then)") {
    auto cfg = afs_config(cpu(10), true);
    cfg.admission_fair_sharing->half_life_ms = 0;
    kueue_model z(cfg, reg);
    REQUIRE(z.admit(lq_wl("a1", "ns-a", "qa", cpu(4), 0, 0)).allowed());
    z.sample_usage(600000);
    CHECK(*z.local_queue_fs_usage("ns-a/qa") == kueue_afs_usage::of(0));
  }
  CHECK_THROWS_AS(m.local_queue_fs_usage("ns-x/none"), unknown_entity_error);
}

TEST_CASE("kueue: admission fair sharing admits the LocalQueue with less usage first, before priority") {
  resource_registry reg;
  std::vector<kueue_workload> pending = {lq_wl("a-hi", "ns-a", "qa", cpu(6), 10, 0),
                                   lq_wl("b-lo", "ns-b", "qb", cpu(6), 0, 1)};
  SECTION("qa has history: qb's lower-priority workload goes first and takes the quota") {
    kueue_model m(afs_config(cpu(10), true), reg);
    REQUIRE(m.admit(lq_wl("old", "ns-a", "qa", cpu(2), 0, 0)).allowed());
    m.finish("old");
    const auto got = m.schedule(pending);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == "b-lo");
  }
  SECTION("without the ClusterQueue's opt-in, priority decides") {
    kueue_model m(afs_config(cpu(10), false), reg);
    REQUIRE(m.admit(lq_wl("old", "ns-a", "qa", cpu(2), 0, 0)).allowed());
    m.finish("old");
    const auto got = m.schedule(pending);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == "a-hi");
    CHECK(m.find_local_queue_usage("ns-a/qa")->penalty.empty());  // no history kept either
  }
}

TEST_CASE("kueue: admission fair sharing alternates LocalQueues through entry penalties, weighted") {
  resource_registry reg;
  std::vector<kueue_workload> pending;
  for (int i = 0; i < 3; ++i) pending.push_back(lq_wl("a" + std::to_string(i), "ns-a", "qa", cpu(1), 0, i));
  for (int i = 0; i < 3; ++i) pending.push_back(lq_wl("b" + std::to_string(i), "ns-b", "qb", cpu(1), 0, 10 + i));
  SECTION("equal weights: a0, b0, a1, b1") {
    kueue_model m(afs_config(cpu(4), true), reg);
    CHECK(m.schedule(pending) == std::vector<std::string>{"a0", "b0", "a1", "b1"});
  }
  SECTION("qa weight 2 counts its usage half: a0, b0, a1, a2") {
    kueue_model m(afs_config(cpu(4), true, 2000), reg);
    CHECK(m.schedule(pending) == std::vector<std::string>{"a0", "b0", "a1", "a2"});
    const auto u = *m.local_queue_fs_usage("ns-a/qa");  // 3 x 0.5 core / 2 = 3/4
    CHECK(u == kueue_afs_usage{quota::detail::wide_uint::from(750'000'000'000), {}, 1000});
    CHECK(u.to_double() == 0.75);
  }
  SECTION("without admission fair sharing: creation order") {
    kueue_model m(afs_config(cpu(4), false), reg);
    CHECK(m.schedule(pending) == std::vector<std::string>{"a0", "a1", "a2", "b0"});
  }
}

TEST_CASE("kueue: admission fair sharing configuration is validated and loaded from JSON") {
  resource_registry reg;
  auto cfg = afs_config(cpu(4), true, -1000);
  cfg.admission_fair_sharing->half_life_ms = -1;
  cfg.admission_fair_sharing->sampling_interval_ms = 0;
  try {
    kueue_model m(cfg, reg);
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    std::vector<std::string> paths;
    for (const auto& p : e.problems()) paths.push_back(p.path);
    CHECK(std::count(paths.begin(), paths.end(), "LocalQueue/ns-a/qa.spec.fairSharing.weight") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "admissionFairSharing.usageHalfLifeTime") == 1);
    CHECK(std::count(paths.begin(), paths.end(), "admissionFairSharing.usageSamplingInterval") == 1);
  }
  const json doc = json::parse(R"([
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
     "spec": {"admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
              "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "qa", "namespace": "ns-a"},
     "spec": {"clusterQueue": "cq", "fairSharing": {"weight": "2"}}}
  ])");
  auto objs = load_kueue_objects(doc, reg);
  REQUIRE(objs.config.cluster_queues.size() == 1);
  CHECK(objs.config.cluster_queues[0].admission_fair_sharing);
  CHECK(objs.config.local_queues[0].fair_weight_milli == 2000);
  diagnostics d;
  const auto afs = parse_admission_fair_sharing(
      json::parse(
          R"({"usageHalfLifeTime": "168h", "usageSamplingInterval": "5m", "resourceWeights": {"cpu": 2.5, "memory": "1"}})"),
      reg, "admissionFairSharing", d);
  CHECK(d.empty());
  CHECK(afs.half_life_ms == 168LL * 3600 * 1000);
  CHECK(afs.sampling_interval_ms == 300000);
  CHECK(afs.weight_of(resources::cpu) == 2500);
  CHECK(afs.weight_of(resources::memory) == 1000);
  CHECK(afs.weight_of(resources::nvidia_gpu) == 1000);
  diagnostics bad;
  (void)parse_admission_fair_sharing(
      json::parse(R"({"usageHalfLifeTime": "7 days", "resourceWeights": {"cpu": -1}, "decay": 1})"), reg,
      "admissionFairSharing", bad);
  std::vector<std::string> paths;
  for (const auto& p : bad.items()) paths.push_back(p.path);
  CHECK(paths == std::vector<std::string>{"admissionFairSharing.usageHalfLifeTime",
                                          "admissionFairSharing.resourceWeights.cpu", "admissionFairSharing.decay"});
}

TEST_CASE("kueue: hierarchical reclaim lets a queue preempt when its sub-cohort holds the request") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec root, eng, ops;
  root.name = "root";
  eng.name = "eng";
  eng.parent = "root";
  eng.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(4))}}}});
  ops.name = "ops";
  ops.parent = "root";
  ops.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(20))}}}});
  cfg.cohorts = {root, eng, ops};
  cfg.cluster_queues.push_back(cq_cpu("a", "eng", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "ops", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("d", "root", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  kueue_model m(cfg, reg);
  // root holds 24; d borrows 2 directly from root, then c fills ops' own 20
  REQUIRE(m.admit(wl("d2", "d", cpu(2))).allowed());
  REQUIRE(m.admit(wl("c20", "c", cpu(20))).allowed());
  kueue_flavor_assignment fa;
  const auto in = wl("a4", "a", cpu(4), 1, 0);
  REQUIRE(m.check(in, fa).denied());
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  // a's nominal is 0, but eng (4) holds the request: a may reclaim although it
  // then borrows. c borrows too (20 over its 0) but ops is within its quota, so
  // ops' subtree is not searched; d, borrowing straight from root, is the target.
  const auto t = m.preemption_targets(in, fa);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "d2");
  CHECK(t[0].rule == "reclaimWithinCohort");
  SECTION("once ops exceeds its quota, its borrowing queues are searched too (newest first)") {
    m.finish("d2");
    REQUIRE(m.admit(wl("c2", "c", cpu(2))).allowed());  // ops at 22 > 20
    m.assign(in, fa);
    const auto t2 = m.preemption_targets(in, fa);
    REQUIRE(t2.size() == 1);
    CHECK(t2[0].name == "c2");
  }
  SECTION("without the advantage (request beyond eng's quota) nothing is reclaimed by borrowing") {
    const auto big = wl("a5", "a", cpu(5), 1, 0);
    m.assign(big, fa);
    CHECK(fa.mode == kueue_fit_mode::no_fit);
    CHECK(m.preemption_targets(big, fa).empty());
  }
}

TEST_CASE("kueue: hierarchical reclaim takes a borrowing queue in the parent cohort (sub-cohort example)") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec root, eng;
  root.name = "root";
  eng.name = "eng";
  eng.parent = "root";
  eng.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(10))}}}});
  cfg.cohorts = {root, eng};
  cfg.cluster_queues.push_back(cq_cpu("a", "eng", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "eng", {{"f", rq(resources::cpu, 0)}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "root", {{"f", rq(resources::cpu, cpu(5))}}));
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::lower_priority;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("b6", "b", cpu(6), 1, 0)).allowed());
  REQUIRE(m.admit(wl("c9", "c", cpu(9), 1, 0)).allowed());  // c borrows 4 of eng's quota
  kueue_flavor_assignment fa;
  const auto in = wl("a4", "a", cpu(4), 1, 5);
  m.assign(in, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  const auto t = m.preemption_targets(in, fa);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "c9");
  // b6 (borrowing inside eng) is a candidate too, but only without borrowing:
  // below eng, a has no advantage over b (a's nominal is 0), so it cannot help
  SECTION("LowerPriority still applies") {
    const auto same = wl("a4", "a", cpu(4), 1, 0);
    m.assign(same, fa);
    CHECK(m.preemption_targets(same, fa).empty());
  }
}

TEST_CASE("kueue: an owning policy adapter copies its model deeply and reports its state as JSON") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(4))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(2))}}));
  cfg.local_queues.push_back({"team-a", "q", "a", 1000});
  kueue_policy p(cfg, reg);
  job j;
  j.id = "j1";
  j.ns = "team-a";
  j.queue = "q";
  j.pods = 2;
  j.request.set(resources::cpu, cpu(5));
  REQUIRE(p.check(j).allowed());
  p.commit(j);
  kueue_policy copy = p;
  copy.release("j1");
  CHECK(copy.model().admitted_count() == 0);
  CHECK(p.model().admitted_count() == 1);
  json s;
  to_json(s, p);
  CHECK(s["clusterQueues"]["a"]["usage"]["f"]["cpu"] == cpu(5));
  CHECK(s["clusterQueues"]["a"]["borrowed"]["f"]["cpu"] == cpu(1));
  CHECK(s["clusterQueues"]["a"]["admitted"] == 1);
  CHECK(s["clusterQueues"]["a"]["cohort"] == "co");
  CHECK(s["cohorts"]["co"]["usage"]["f"]["cpu"] == cpu(5));
  CHECK(s["cohorts"]["co"]["quota"]["f"]["cpu"] == cpu(6));
  // borrowed 1 of the 6 the cohort could lend: ceil(1000 * 1/6) = 167
  CHECK(s["clusterQueues"]["a"]["dominantShare"] == 167);
  CHECK(s["clusterQueues"]["a"]["dominantResource"] == "cpu");
  CHECK_FALSE(s.contains("localQueues"));
}

TEST_CASE(
    "kueue: with fair sharing, a head whose side would not borrow on what it requests goes before a lower share") {
  // FairSharingPrioritizeNonBorrowing (on by default in Kueue): b borrows
  // memory but asks only for CPU within its nominal quota; a would borrow CPU.
  // By dominant share alone a goes first (1 of 8 CPUs < 40 of 110Gi).
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  auto two = [](std::string name, amount c, amount mem) {
    kueue_cluster_queue_spec q;
    q.name = std::move(name);
    q.cohort = "co";
    kueue_resource_group_spec g;
    g.covered_resources = {resources::cpu, resources::memory};
    g.flavors.push_back({"f", {rq(resources::cpu, c), rq(resources::memory, mem)}});
    q.resource_groups.push_back(std::move(g));
    return q;
  };
  cfg.cluster_queues = {two("a", cpu(4), gib(100)), two("b", cpu(4), gib(10))};
  cfg.fair_sharing = true;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("a-run", "a", cpu(4))).allowed());
  auto mem_only = wl("b-run", "b", 0);
  mem_only.pod_sets[0].per_pod.set(resources::memory, gib(50));
  REQUIRE(m.admit(mem_only).allowed());
  const auto a = m.forest().cluster_queue_at("a");
  const auto b = m.forest().cluster_queue_at("b");
  CHECK(m.forest().share(a, nullptr) < m.forest().share(b, nullptr));  // b borrows, a does not (yet)

  const std::vector<kueue_workload> pending = {wl("a-next", "a", cpu(1), 1, 0, 0), wl("b-next", "b", cpu(1), 1, 0, 1)};
  kueue_flavor_assignment fa, fb;
  m.assign(pending[0], fa);
  m.assign(pending[1], fb);
  REQUIRE(fa.borrowing);
  REQUIRE_FALSE(fb.borrowing);
  const std::vector<kueue_model::fair_head> ab = {{&pending[0], &fa}, {&pending[1], &fb}};
  const std::vector<kueue_model::fair_head> ba = {{&pending[1], &fb}, {&pending[0], &fa}};
  CHECK(m.fair_tournament(ab) == 1);
  CHECK(m.fair_tournament(ba) == 0);
  CHECK(m.schedule(pending) == std::vector<std::string>{"b-next", "a-next"});
}

TEST_CASE("kueue: the fair-sharing tournament is decided cohort by cohort, not by comparing heads two at a time") {
  // root cohort r (20 CPUs of its own) holds cohort x {a, b} and ClusterQueue c (2 CPUs).
  // In x, b's head wins (b would borrow 2 CPUs, a 6). At r, x with b's head borrows 7 CPUs
  // and c with its head 6.5: c wins. Comparing two heads at a time from c would let a beat
  // c at r (x with a's head borrows 6) and then b beat a in x.
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec r;
  r.name = "r";
  r.resource_groups.push_back({{resources::cpu}, {{"f", {rq(resources::cpu, cpu(20))}}}});
  kueue_cohort_spec x;
  x.name = "x";
  x.parent = "r";
  cfg.cohorts = {r, x};
  cfg.cluster_queues = {cq_cpu("a", "x", rq(resources::cpu, 0)), cq_cpu("b", "x", rq(resources::cpu, 0)),
                        cq_cpu("c", "r", rq(resources::cpu, cpu(2)))};
  cfg.fair_sharing = true;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("a-run", "a", cpu(5))).allowed());
  REQUIRE(m.admit(wl("c-run", "c", 7500)).allowed());
  const std::vector<kueue_workload> heads = {wl("c-next", "c", cpu(1), 1, 0, 0), wl("a-next", "a", cpu(1), 1, 0, 1),
                                       wl("b-next", "b", cpu(2), 1, 0, 2)};
  std::vector<kueue_flavor_assignment> fas(3);
  std::vector<kueue_model::fair_head> fh;
  for (std::size_t i = 0; i < 3; ++i) {
    m.assign(heads[i], fas[i]);
    REQUIRE(fas[i].mode == kueue_fit_mode::fit);
    fh.push_back({&heads[i], &fas[i]});
  }
  CHECK(m.fair_tournament(fh) == 0);  // c
  // the same through the policy's select_head, whatever the listing order
  kueue_policy p(m);
  auto as_job = [](const kueue_workload& w) {
    job j;
    j.id = w.name;
    j.queue = w.queue;
    j.pods = 1;
    j.created_ms = w.created;
    j.request = w.pod_sets[0].per_pod;
    return j;
  };
  const job jc = as_job(heads[0]), ja = as_job(heads[1]), jb = as_job(heads[2]);
  const std::vector<const job*> cab = {&jc, &ja, &jb}, bac = {&jb, &ja, &jc};
  CHECK(p.select_head(cab) == 0);
  CHECK(p.select_head(bac) == 2);
  // without c, b wins inside x
  const std::vector<const job*> only_x = {&ja, &jb};
  CHECK(p.select_head(only_x) == 1);
  // an engine composed with it offers the same head (its ordering model's select_head)
  basic_engine<kueue_policy> e(std::move(p));
  CHECK(e.select_head(cab) == 0);
}

TEST_CASE("kueue: upstream a zero-weight LocalQueue goes last under admission fair sharing, also without usage") {
  // Kueue: CalculateUsage is +Inf for a weight <= 0, so the queue's older
  // workload pops after the other queue's newer one (its manager test
  // TestHeadsRespectLocalQueueWeightForPreexistingWorkloads).
  resource_registry reg;
  kueue_model m(afs_config(cpu(10), true, 0), reg);
  CHECK_FALSE(m.local_queue_fs_usage("ns-a/qa").has_value());
  CHECK(*m.local_queue_fs_usage("ns-b/qb") == kueue_afs_usage::of(0));
  const std::vector<kueue_workload> pending = {lq_wl("wl-zero", "ns-a", "qa", cpu(6), 0, 0),
                                         lq_wl("wl-normal", "ns-b", "qb", cpu(6), 0, 1)};
  CHECK(m.schedule(pending) == std::vector<std::string>{"wl-normal"});
}

TEST_CASE("kueue: upstream fair-sharing preemption tries a ClusterQueue's next candidate when one fails the strategy") {
  // a lends its 10 CPUs; b and c (5 each) borrow 5 each. a's 12-CPU workload
  // borrows 2. Kueue's first strategy (final share) skips each queue's big
  // newest workload, takes a small one per queue while the queue keeps
  // borrowing at least 2, and asks the target order again after each; the
  // second strategy (initial share) continues with what the first skipped:
  // c-big, then b-big, and the preemptor fits. Filling back (in reverse,
  // replacing a target given back by the last one) keeps c-big and b-big.
  resource_registry reg;
  kueue_config cfg;
  cfg.fair_sharing = true;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f", rq(resources::cpu, cpu(10))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f", rq(resources::cpu, cpu(5))}}));
  cfg.cluster_queues.push_back(cq_cpu("c", "co", {{"f", rq(resources::cpu, cpu(5))}}));
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  kueue_model m(cfg, reg);
  int t = 0;
  for (const char* q : {"b", "c"}) {
    const std::string p(q);
    REQUIRE(m.admit(wl(p + "-s1", q, cpu(2), 1, 0, ++t)).allowed());
    REQUIRE(m.admit(wl(p + "-s2", q, cpu(2), 1, 0, ++t)).allowed());
    REQUIRE(m.admit(wl(p + "-big", q, cpu(6), 1, 0, ++t)).allowed());
  }
  const auto w = wl("a-new", "a", cpu(12), 1, 0, ++t);
  kueue_flavor_assignment fa;
  m.assign(w, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  const auto targets = m.fair_preemption_targets(w, fa);
  REQUIRE(targets.size() == 2);
  CHECK(targets[0].name == "c-big");
  CHECK(targets[1].name == "b-big");
  for (const auto& x : targets) {
    CHECK(x.rule == "LessThanInitialShare");
    CHECK(x.reason == "InCohortFairSharing");
  }
  // with the final-share strategy alone, the small ones it takes never make room
  CHECK(m.fair_preemption_targets(w, fa, {kueue_fair_preemption_strategy::less_than_or_equal_to_final_share}).empty());
}

TEST_CASE("kueue: dominant shares and admission fair-sharing usages compare exactly past 128 bits") {
  using quota::detail::int128;
  using quota::detail::wide_uint;
  // borrowed and lendable are sums over flavors (up to 2^81); with a weight a
  // comparison multiplies three terms, beyond what 128 bits hold
  const int128 big = static_cast<int128>(1) << 80;
  auto drs = [](int128 borrowed, int128 lendable, std::int64_t w) {
    quota::kueue_dominant_share d;
    d.borrowed = borrowed;
    d.lendable = lendable;
    d.weight_milli = w;
    d.dominant = resources::cpu;
    return d;
  };
  auto exact = [](const quota::kueue_dominant_share& d) {
    return rational(to_big_int(d.borrowed)) / (to_big_int(d.lendable) * d.weight_milli);
  };
  const std::vector<quota::kueue_dominant_share> shares = {
      drs(big - 1, big, INT64_MAX),     drs(big - 2, big - 1, INT64_MAX),
      drs(big, big - 1, INT64_MAX - 1), drs(1, big, 1),
      drs(big - 1, big, INT64_MAX - 1), drs(2 * (big - 1), 2 * big, INT64_MAX)};
  for (const auto& x : shares)
    for (const auto& y : shares) {
      CHECK(std::is_lt(x <=> y) == (exact(x) < exact(y)));
      CHECK((x == y) == (exact(x) == exact(y)));
    }
  // the rounded per-mille share: lendable x weight beyond 128 bits leaves a ceiling of 1
  CHECK(drs(1, big, INT64_MAX).rounded() == 1);
  CHECK(drs(big, big, 1000).rounded() == 1000);
  CHECK(drs(big, 1, 1).rounded() == std::numeric_limits<std::int64_t>::max());

  // usages: (positive - negative) / (10^9 x weight); sums of 156-bit terms
  const wide_uint t =
      quota::detail::wide_product(static_cast<quota::detail::uint128>(INT64_MAX) * INT64_MAX, 1, 1'000'000'000);
  const kueue_afs_usage u1{t.plus(t), {}, INT64_MAX}, u2{t.plus(t).plus(wide_uint::from(1)), {}, INT64_MAX};
  const kueue_afs_usage u3{t, {}, INT64_MAX / 2};  // t / (w/2) vs 2t / w: w is odd, so u3 is a little larger
  CHECK(u1 < u2);
  CHECK(u1 < u3);
  CHECK(u2 < u3);
  CHECK(kueue_afs_usage{t.plus(t), t, 1000} == kueue_afs_usage{t, {}, 1000});
  CHECK(kueue_afs_usage{t, t.plus(t), 1000} < kueue_afs_usage{});
  CHECK(kueue_afs_usage{{}, {}, 1} == kueue_afs_usage{});
}

TEST_CASE("kueue: a configuration's size is bounded: flavors, and quota cells") {
  resource_registry reg;
  kueue_config cfg;
  for (int i = 0; i < 65535; ++i) cfg.resource_flavors.push_back("f" + std::to_string(i));
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f0", rq(resources::cpu, cpu(1))}}));
  try {
    kueue_model m(cfg, reg);
    FAIL("65,535 flavors accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "ResourceFlavor");
    CHECK(e.problems()[0].message == "65535 ResourceFlavors, more than the 65534 a configuration may hold");
  }
  cfg.resource_flavors.resize(65534);
  CHECK_NOTHROW(kueue_model(cfg, reg));  // the most flavors: 65,534 cells

  // 2^24 + 1 cells: (ClusterQueues and cohorts) x flavors x resources
  cfg.resource_flavors.resize(257);
  for (int i = 1; i < 65281; ++i) {
    kueue_cluster_queue_spec q;
    q.name = "q" + std::to_string(i);
    cfg.cluster_queues.push_back(std::move(q));
  }
  try {
    kueue_model m(cfg, reg);
    FAIL("too many cells accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].message.find("16777217 quota cells") == 0);
  }
  // the bound is checked before any table is built (2^24 cells would take about 1.6 GB)
}

TEST_CASE("kueue: a chain of 100,000 cohorts validates in linear time and answers without deep recursion") {
  resource_registry reg;
  constexpr int depth = 100000;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  // c0 is the root; c(i) has parent c(i-1); each lends nothing (lendingLimit 0) and keeps 1 cpu
  for (int i = 0; i < depth; ++i) {
    kueue_cohort_spec c{"c" + std::to_string(i), i == 0 ? "" : "c" + std::to_string(i - 1), {}, 1000};
    c.resource_groups = {{{resources::cpu}, {{"f", {rq(resources::cpu, cpu(1))}}}}};
    if (i > 0) c.resource_groups[0].flavors[0].resources[0].borrowing_limit = cpu(2);
    cfg.cohorts.push_back(std::move(c));
  }
  cfg.cluster_queues.push_back(cq_cpu("leaf", "c" + std::to_string(depth - 1), rq(resources::cpu, 0)));
  kueue_model m(cfg, reg);
  const auto& f = m.forest();
  const auto s = f.slot(0, resources::cpu);
  // everything is lent up to c0: 100,000 cpu there; every cohort below may borrow at most 2 more
  // than it stores in its parent, so the leaf sees 0 + min(..., 1 + 2) = 3
  CHECK(f.subtree_quota(*f.find_cohort("c0"), s) == cpu(depth));
  CHECK(f.available(0, s) == cpu(3));
  CHECK(f.height(*f.find_cohort("c0")) == depth);
  REQUIRE(m.admit(wl("w", "leaf", cpu(3))).allowed());
  CHECK(f.available(0, s) == 0);
  CHECK_FALSE(m.admit(wl("x", "leaf", cpu(1))).allowed());

  // a cycle at the top of the chain: every cohort leads into it and is named
  cfg.cohorts[0].parent = "c" + std::to_string(depth - 1);
  try {
    kueue_model bad(cfg, reg);
    FAIL("a cycle accepted");
  } catch (const validation_error& e) {
    CHECK(e.problems().size() == static_cast<std::size_t>(depth));
    CHECK(e.problems().back().path == "Cohort/c" + std::to_string(depth - 1) + ".spec.parentName");
  }
}
