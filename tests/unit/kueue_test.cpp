// SPDX-License-Identifier: Apache-2.0
// Tests of the Kueue model, second part: the exact candidate order of
// classical preemption (Kueue's CandidatesOrdering and candidate lists),
// partial admission together with preemption (Kueue's scheduler attempt and
// pod-set reducer), namespaceSelector, and randomized invariants computed
// from the specification alone.
#include <quota/kueue.hpp>
#include <quota/kueue_cohorts.hpp>
#include <quota/kueue_flavor_assignment.hpp>
#include <quota/kueue_json.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "kueue_fixtures.hpp"
#include "quota_catch.hpp"

using namespace quota;
using namespace quota::test;

namespace {
kueue_resource_quota_spec rq(amount nominal, std::optional<amount> bl = {}, std::optional<amount> ll = {}) {
  return kueue_resource_quota_spec{resources::cpu, nominal, bl, ll};
}
std::vector<std::string> names(const std::vector<kueue_preemption_target>& t) {
  std::vector<std::string> out;
  for (const auto& x : t) out.push_back(x.name);
  return out;
}
std::vector<kueue_preemption_target> targets(const kueue_model& m, const kueue_workload& w) {
  kueue_flavor_assignment fa;
  m.assign(w, fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  return m.preemption_targets(w, fa);
}
// one ClusterQueue "a" (cpu 10) with withinClusterQueue LowerPriority
kueue_config single_queue() {
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", rq(cpu(10))));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  return cfg;
}
// Root cohort R (no quota) with sub-cohort S (own quota 4) holding a (2) and
// b (2), and c (4) directly in R. b borrows 1 (uses 3), c borrows 5 (uses 9):
// everything (12) is in use. reclaimWithinCohort Any, borrowWithinCohort
// LowerPriority for a.
kueue_config tree() {
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec r{"R", "", {}, 1000};
  kueue_cohort_spec s{"S", "R", {{{resources::cpu}, {{"f", {rq(cpu(4))}}}}}, 1000};
  cfg.cohorts = {r, s};
  cfg.cluster_queues.push_back(cq_cpu("a", "S", rq(cpu(2))));
  cfg.cluster_queues.push_back(cq_cpu("b", "S", rq(cpu(2))));
  cfg.cluster_queues.push_back(cq_cpu("c", "R", rq(cpu(4))));
  auto& p = cfg.cluster_queues[0].preemption;
  p.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  p.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
  return cfg;
}
}  // namespace

// ---- candidate order ----------------------------------------------------------------

TEST_CASE("kueue: preemption tries Evicted workloads first, whatever their priority") {
  resource_registry reg;
  kueue_model m(single_queue(), reg);
  REQUIRE(m.admit(wl("lo", "a", cpu(4), 1, 0)).allowed());
  REQUIRE(m.admit(wl("mid", "a", cpu(4), 1, 3)).allowed());
  const auto in = wl("in", "a", cpu(5), 1, 9);  // 2 free, 3 more needed: one workload is enough
  CHECK(names(targets(m, in)) == std::vector<std::string>{"lo"});
  m.mark_evicted("mid");
  CHECK(m.find_admitted("mid")->evicted);
  CHECK(names(targets(m, in)) == std::vector<std::string>{"mid"});
  CHECK(m.candidate_order(*m.find_admitted("mid"), *m.find_admitted("lo"), 0) < 0);
  m.mark_evicted("mid", false);
  CHECK(names(targets(m, in)) == std::vector<std::string>{"lo"});
  // an Evicted workload still needs the policy: higher priority is never a candidate
  REQUIRE(m.admit(wl("hi", "a", cpu(1), 1, 20)).allowed());
  m.mark_evicted("hi");
  for (const auto& t : targets(m, wl("in2", "a", cpu(3), 1, 9))) CHECK(t.name != "hi");
  CHECK_THROWS_AS(m.mark_evicted("nope"), unknown_entity_error);
}

TEST_CASE("kueue: preemption candidates: lower priority, then later quota reservation, then name") {
  resource_registry reg;
  kueue_model m(single_queue(), reg);
  m.set_clock(100);
  REQUIRE(m.admit(wl("old", "a", cpu(3), 1, 1)).allowed());
  m.set_clock(200);
  REQUIRE(m.admit(wl("new-b", "a", cpu(3), 1, 1)).allowed());
  REQUIRE(m.admit(wl("new-a", "a", cpu(3), 1, 1)).allowed());
  REQUIRE(m.admit(wl("p2", "a", cpu(1), 1, 2)).allowed());
  const auto& o = *m.find_admitted("old");
  const auto& na = *m.find_admitted("new-a");
  const auto& nb = *m.find_admitted("new-b");
  const auto& p2 = *m.find_admitted("p2");
  CHECK(o.reserved_at == 100);
  CHECK(na.reserved_at == 200);
  // priority before time; newer reservation first; same time: by name
  CHECK(m.candidate_order(o, p2, 0) < 0);
  CHECK(m.candidate_order(na, o, 0) < 0);
  CHECK(m.candidate_order(na, nb, 0) < 0);
  CHECK(m.candidate_order(nb, na, 0) > 0);
  CHECK(m.candidate_order(na, na, 0) == 0);
  // full (10 used): 3 needed -> the first candidate, new-a
  CHECK(names(targets(m, wl("in", "a", cpu(3), 1, 5))) == std::vector<std::string>{"new-a"});
  // without a clock the admission order is the time: the later admitted goes first
  kueue_model m2(single_queue(), reg);
  REQUIRE(m2.admit(wl("z-first", "a", cpu(5), 1, 0)).allowed());
  REQUIRE(m2.admit(wl("a-second", "a", cpu(5), 1, 0)).allowed());
  CHECK(names(targets(m2, wl("in", "a", cpu(5), 1, 5))) == std::vector<std::string>{"a-second"});
}

TEST_CASE("kueue: preemption candidates in other ClusterQueues come before the preemptor's own") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", rq(cpu(6))));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", rq(cpu(2))));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("a-lo", "a", cpu(2), 1, 0)).allowed());
  REQUIRE(m.admit(wl("b-hi", "b", cpu(4), 1, 8)).allowed());  // b borrows 2
  // 2 free of 8; 4 needed; either a-lo (own queue, priority 0) or b-hi (priority 8) would do
  const auto t = targets(m, wl("in", "a", cpu(4), 1, 9));
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "b-hi");
  CHECK(t[0].rule == "reclaimWithinCohort");
  CHECK(t[0].reason == "InCohortReclamation");
  CHECK(m.candidate_order(*m.find_admitted("b-hi"), *m.find_admitted("a-lo"), 0) < 0);
  // seen from b's side, a-lo is the other queue's
  CHECK(m.candidate_order(*m.find_admitted("a-lo"), *m.find_admitted("b-hi"), 1) < 0);
}

TEST_CASE("kueue: hierarchical-reclaim candidates come before priority candidates, Evicted ones before both") {
  resource_registry reg;
  kueue_model m(tree(), reg);
  REQUIRE(m.admit(wl("b-lo", "b", cpu(3), 1, 0)).allowed());
  REQUIRE(m.admit(wl("c-hi", "c", cpu(9), 1, 9)).allowed());
  const auto in = wl("in", "a", cpu(3), 1, 5);
  // S holds the 3 (its usage 3 + 3 <= 8): c-hi, outside S, is a hierarchical
  // candidate; b-lo, inside S, a priority candidate. Either alone frees enough.
  auto t = targets(m, in);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "c-hi");
  CHECK(t[0].reason == "InCohortReclamation");
  // an Evicted priority candidate goes before the hierarchical one
  m.mark_evicted("b-lo");
  t = targets(m, in);
  REQUIRE(t.size() == 1);
  CHECK(t[0].name == "b-lo");
  CHECK(t[0].rule == "borrowWithinCohort");
  CHECK(t[0].reason == "InCohortReclaimWhileBorrowing");
}

TEST_CASE("kueue: preemption runs with and without borrowing as Kueue chooses") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", rq(cpu(4))));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", rq(cpu(4))));
  auto& p = cfg.cluster_queues[0].preemption;
  p.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  p.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  SECTION("within its own nominal quota: lent quota is reclaimed, the later admitted first") {
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("a-lo", "a", cpu(1), 1, 0)).allowed());
    REQUIRE(m.admit(wl("b1", "b", cpu(3), 1, 7)).allowed());
    REQUIRE(m.admit(wl("b2", "b", cpu(4), 1, 7)).allowed());  // b borrows 3
    // 3 needed within a's nominal (1 used): reclaiming b2 (4) is enough
    const auto t = targets(m, wl("in", "a", cpu(3), 1, 5));
    CHECK(names(t) == std::vector<std::string>{"b2"});
  }
  SECTION("borrowWithinCohort Never and the preemptor at nominal: only the own queue can help") {
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("a-lo", "a", cpu(4), 1, 0)).allowed());
    REQUIRE(m.admit(wl("b1", "b", cpu(4), 1, 7)).allowed());
    const auto t = targets(m, wl("in", "a", cpu(4), 1, 5));
    CHECK(names(t) == std::vector<std::string>{"a-lo"});
    CHECK(t[0].reason == "InClusterQueue");
  }
}

// ---- partial admission and preemption ----------------------------------------------

TEST_CASE("kueue: pod-set reducer steps by floor(delta * k / total) and binary-searches like Kueue") {
  kueue_workload w;
  kueue_pod_set a, b;
  a.count = 4;
  a.min_count = 3;  // delta 1
  b.count = 8;
  b.min_count = 5;  // delta 3
  w.pod_sets = {a, b};
  std::vector<std::vector<std::int32_t>> calls;
  std::vector<std::int32_t> found;
  REQUIRE(kueue_flavor_assigner::pod_set_search(w, found, [&](const std::vector<std::int32_t>& c) {
    calls.push_back(c);
    return c[0] + c[1] <= 10;
  }));
  // k in [0, 4]: k=2 -> (4, 7) no; k=4 -> (3, 5) yes; k=3 -> (4, 6) yes
  const std::vector<std::vector<std::int32_t>> expect{{4, 7}, {3, 5}, {4, 6}};
  CHECK(calls == expect);
  CHECK(found == std::vector<std::int32_t>{4, 6});
  // nothing fits: false; no minCount: no search at all
  CHECK_FALSE(kueue_flavor_assigner::pod_set_search(w, found, [](const auto&) { return false; }));
  kueue_workload plain = wl("p", "a", cpu(1), 5);
  calls.clear();
  CHECK_FALSE(kueue_flavor_assigner::pod_set_search(plain, found, [&](const auto& c) {
    calls.push_back(c);
    return true;
  }));
  CHECK(calls.empty());
}

TEST_CASE("kueue: partial admission is tried only when the full size cannot preempt") {
  resource_registry reg;
  kueue_model m(single_queue(), reg);
  REQUIRE(m.admit(wl("lo", "a", cpu(4), 1, 0)).allowed());
  REQUIRE(m.admit(wl("top", "a", cpu(3), 1, 10)).allowed());  // 3 free
  kueue_admission_attempt at;
  SECTION("full size with preemption wins over a smaller size that fits as is") {
    auto in = wl("in", "a", cpu(1), 6, 5);
    in.pod_sets[0].min_count = 2;
    const auto d = m.attempt(in, at);
    CHECK_FALSE(d.allowed());
    CHECK(at.preempts());
    CHECK_FALSE(at.reduced);
    CHECK(at.counts == std::vector<std::int32_t>{6});
    CHECK(names(at.targets) == std::vector<std::string>{"lo"});
  }
  SECTION("full size cannot preempt enough: the largest reduced size that preemption makes room for") {
    auto in = wl("in", "a", cpu(1), 10, 5);
    in.pod_sets[0].min_count = 2;
    (void)m.attempt(in, at);
    CHECK(at.reduced);
    CHECK(at.counts == std::vector<std::int32_t>{7});  // 3 free + lo's 4
    CHECK(at.assignment.mode == kueue_fit_mode::preempt);
    CHECK(names(at.targets) == std::vector<std::string>{"lo"});
  }
  SECTION("no preemption possible: the largest size that fits as is") {
    auto in = wl("in", "a", cpu(1), 10, 0);  // priority 0: lo is not lower
    in.pod_sets[0].min_count = 2;
    const auto d = m.attempt(in, at);
    CHECK(d.allowed());
    CHECK(at.reduced);
    CHECK(at.counts == std::vector<std::int32_t>{3});
    CHECK(at.targets.empty());
    m.admit(in, at.assignment);
    CHECK(m.forest().usage(0, 0) == cpu(10));
  }
  SECTION("minCount too large: the full assignment without targets") {
    auto in = wl("in", "a", cpu(1), 10, 0);
    in.pod_sets[0].min_count = 5;
    const auto d = m.attempt(in, at);
    CHECK_FALSE(d.allowed());
    CHECK_FALSE(at.reduced);
    CHECK(at.counts == std::vector<std::int32_t>{10});
    CHECK(at.targets.empty());
  }
}

TEST_CASE("kueue: a scheduling pass admits at reduced counts, but not instead of a possible preemption") {
  resource_registry reg;
  kueue_model m(single_queue(), reg);
  REQUIRE(m.admit(wl("lo", "a", cpu(4), 1, 0)).allowed());  // 6 free
  auto wide = wl("wide", "a", cpu(1), 9, 0, 1);             // lo is not lower: no preemption
  wide.pod_sets[0].min_count = 3;
  auto eager = wl("eager", "a", cpu(1), 6, 5, 2);  // priority 5: its full 6 could be had by preempting lo
  eager.pod_sets[0].min_count = 1;
  auto admitted = m.schedule({wide});
  CHECK(admitted == std::vector<std::string>{"wide"});
  CHECK(m.find_admitted("wide")->usage[0].second == cpu(6));
  m.finish("wide");
  REQUIRE(m.admit(wl("lo2", "a", cpu(3), 1, 0)).allowed());  // 3 free
  admitted = m.schedule({eager});
  CHECK(admitted.empty());  // Kueue preempts for the full size rather than admit 3 pods
  kueue_admission_attempt at;
  (void)m.attempt(eager, at);
  CHECK(at.preempts());
  CHECK_FALSE(at.reduced);
}

TEST_CASE("kueue: the policy adapter admits partially and reports the attempt's victims") {
  resource_registry reg;
  kueue_policy pol(single_queue(), reg);
  job j1;
  j1.id = "lo";
  j1.queue = "a";
  j1.pods = 4;
  j1.request.set(resources::cpu, cpu(4));
  REQUIRE(pol.check(j1).allowed());
  pol.commit(j1);
  job j2 = j1;
  j2.id = "wide";
  j2.pods = 8;
  j2.min_pods = 2;
  j2.priority = 0;
  j2.request.set(resources::cpu, cpu(8));
  REQUIRE(pol.check(j2).allowed());  // 6 of 8 pods fit
  pol.commit(j2);
  CHECK(pol.model().find_admitted("wide")->usage[0].second == cpu(6));
  job j3 = j1;
  j3.id = "urgent";
  j3.priority = 9;
  j3.pods = 4;
  j3.min_pods = 1;
  j3.request.set(resources::cpu, cpu(4));
  CHECK_FALSE(pol.check(j3).allowed());
  std::vector<victim> v;
  pol.victims(j3, v);
  // full size 4 needs one workload out: the lower-priority, later admitted one first
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "wide");
}

TEST_CASE("kueue: the policy adapter commits a job changed since its check at its new size") {
  resource_registry reg;
  kueue_policy pol(single_queue(), reg);
  job j;
  j.id = "grows";
  j.queue = "a";
  j.request.set(resources::cpu, cpu(2));
  REQUIRE(pol.check(j).allowed());
  j.request.set(resources::cpu, cpu(6));  // the same id, a larger request: the check's attempt is not reused
  pol.commit(j);
  REQUIRE(pol.model().find_admitted("grows") != nullptr);
  CHECK(pol.model().find_admitted("grows")->usage.front().second == cpu(6));
  CHECK(pol.model().forest().usage(0, pol.model().find_admitted("grows")->usage.front().first) == cpu(6));
}

TEST_CASE("kueue: the policy adapter commits with a new attempt when the model changed since the check") {
  // a: f1 (2) then f2 (2), whenCanBorrow TryNextFlavor; b lends 10 of f1 in cohort co
  kueue_config cfg;
  cfg.resource_flavors = {"f1", "f2"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f1", rq(cpu(2))}, {"f2", rq(cpu(2))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f1", rq(cpu(10))}, {"f2", rq(0)}}));
  cfg.cluster_queues[0].fungibility.when_can_borrow = kueue_fungibility_action::try_next_flavor;
  resource_registry reg;
  kueue_policy pol(cfg, reg);
  job j;
  j.id = "late";
  j.queue = "a";
  j.request.set(resources::cpu, cpu(2));
  REQUIRE(pol.check(j).allowed());  // f1, within its nominal quota
  // then 1 cpu of f1 is taken: on f1 the job would borrow, so Kueue goes on to f2
  REQUIRE(pol.model().admit(wl("first", "a", cpu(1))).allowed());
  pol.commit(j);
  const auto& f = pol.model().forest();
  REQUIRE(pol.model().find_admitted("late") != nullptr);
  CHECK(pol.model().find_admitted("late")->usage.front().first == f.slot(*f.find_flavor("f2"), resources::cpu));
  CHECK(f.usage(0, f.slot(*f.find_flavor("f1"), resources::cpu)) == cpu(1));
}

// ---- namespaceSelector ------------------------------------------------------------------

TEST_CASE("kueue: label selectors: matchLabels and In / NotIn / Exists / DoesNotExist") {
  using op = kueue_label_selector::op;
  const kueue_label_selector::labels team_a{{"team", "a"}, {"tier", "gold"}};
  const kueue_label_selector::labels bare{};
  kueue_label_selector all;
  CHECK(all.matches(team_a));
  CHECK(all.matches(bare));
  kueue_label_selector ml;
  ml.match_labels = {{"team", "a"}};
  CHECK(ml.matches(team_a));
  CHECK_FALSE(ml.matches(bare));
  CHECK_FALSE(ml.matches({{"team", "b"}}));
  kueue_label_selector in{{}, {{"team", op::in, {"a", "b"}}}};
  CHECK(in.matches(team_a));
  CHECK_FALSE(in.matches({{"team", "c"}}));
  CHECK_FALSE(in.matches(bare));
  kueue_label_selector not_in{{}, {{"team", op::not_in, {"a"}}}};
  CHECK_FALSE(not_in.matches(team_a));
  CHECK(not_in.matches({{"team", "b"}}));
  CHECK(not_in.matches(bare));  // Kubernetes: NotIn holds when the key is absent
  kueue_label_selector exists{{}, {{"tier", op::exists, {}}}};
  CHECK(exists.matches(team_a));
  CHECK_FALSE(exists.matches(bare));
  kueue_label_selector dne{{}, {{"tier", op::does_not_exist, {}}}};
  CHECK_FALSE(dne.matches(team_a));
  CHECK(dne.matches(bare));
  // everything must hold together
  kueue_label_selector both{{{"team", "a"}}, {{"tier", op::in, {"silver"}}}};
  CHECK_FALSE(both.matches(team_a));
}

TEST_CASE("kueue: namespaceSelector makes a workload from a non-matching namespace inadmissible") {
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("sel", "", rq(cpu(10))));
  cfg.cluster_queues.push_back(cq_cpu("all", "", rq(cpu(10))));
  cfg.cluster_queues.push_back(cq_cpu("none", "", rq(cpu(10))));
  cfg.cluster_queues[0].namespace_selector =
      kueue_label_selector{{{"team", "a"}}, {{"env", kueue_label_selector::op::not_in, {"prod"}}}};
  cfg.cluster_queues[2].namespace_selector = std::nullopt;  // Kueue's null: no namespace
  auto in_ns = [](std::string name, std::string ns, std::string q) {
    auto w = wl(std::move(name), std::move(q), cpu(1));
    w.ns = std::move(ns);
    return w;
  };
  SECTION("namespaces unknown to the model: no selector is checked") {
    kueue_model m(cfg, reg);
    CHECK_FALSE(m.knows_namespaces());
    CHECK(m.check(in_ns("w", "anything", "sel")).allowed());
    CHECK(m.check(in_ns("w", "anything", "none")).allowed());
  }
  SECTION("namespaces known: matchLabels, NotIn, empty and null selectors") {
    cfg.namespaces = std::vector<kueue_namespace_spec>{
        {"team-a", {{"team", "a"}}}, {"team-a-prod", {{"team", "a"}, {"env", "prod"}}}, {"team-b", {{"team", "b"}}}};
    kueue_model m(cfg, reg);
    CHECK(m.check(in_ns("w1", "team-a", "sel")).allowed());
    auto d = m.check(in_ns("w2", "team-b", "sel"));
    REQUIRE_FALSE(d.allowed());
    CHECK(d.reasons()[0].rule == "namespace_mismatch");
    CHECK(d.reasons()[0].message == "workload namespace \"team-b\" doesn't match ClusterQueue selector");
    CHECK_FALSE(m.check(in_ns("w3", "team-a-prod", "sel")).allowed());
    CHECK(m.check(in_ns("w4", "team-b", "all")).allowed());
    CHECK_FALSE(m.check(in_ns("w5", "team-a", "none")).allowed());
    d = m.check(in_ns("w6", "ghost", "all"));
    REQUIRE_FALSE(d.allowed());
    CHECK(d.reasons()[0].rule == "namespace_not_found");
    CHECK_FALSE(m.admit(in_ns("w2", "team-b", "sel")).allowed());
    CHECK(m.admitted_count() == 0);
    kueue_admission_attempt at;
    CHECK_FALSE(m.attempt(in_ns("w2", "team-b", "sel"), at).allowed());
    // a namespace registered later (labels from the host)
    m.set_namespace("team-c", {{"team", "a"}, {"env", "dev"}});
    CHECK(m.check(in_ns("w7", "team-c", "sel")).allowed());
    CHECK(m.namespace_matches(0, "team-c"));
    CHECK_FALSE(m.namespace_matches(0, "team-b"));
  }
  SECTION("invalid selectors are reported, all at once") {
    cfg.cluster_queues[0].namespace_selector = kueue_label_selector{
        {}, {{"env", kueue_label_selector::op::in, {}}, {"x", kueue_label_selector::op::exists, {"v"}}}};
    try {
      kueue_model m(cfg, reg);
      FAIL("expected a validation error");
    } catch (const validation_error& e) {
      CHECK(e.problems().size() == 2);
      CHECK(e.problems()[0].path == "ClusterQueue/sel.spec.namespaceSelector.matchExpressions[0].values");
    }
  }
}

TEST_CASE("kueue: Namespace objects and namespaceSelector load from JSON") {
  resource_registry reg;
  const auto doc = json::parse(R"([
    {"kind": "ResourceFlavor", "metadata": {"name": "f"}},
    {"kind": "Namespace", "metadata": {"name": "ml", "labels": {"team": "ml", "kueue": "on"}}},
    {"kind": "Namespace", "metadata": {"name": "web"}},
    {"kind": "ClusterQueue", "metadata": {"name": "ml-cq"},
     "spec": {"namespaceSelector": {"matchLabels": {"kueue": "on"},
                                    "matchExpressions": [{"key": "team", "operator": "In", "values": ["ml", "ai"]}]},
              "resourceGroups": [{"coveredResources": ["cpu"],
                                  "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}},
    {"kind": "ClusterQueue", "metadata": {"name": "open"},
     "spec": {"namespaceSelector": {},
              "resourceGroups": [{"coveredResources": ["cpu"],
                                  "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}},
    {"kind": "ClusterQueue", "metadata": {"name": "closed"},
     "spec": {"resourceGroups": [{"coveredResources": ["cpu"],
                                  "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}},
    {"kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ml"}, "spec": {"clusterQueue": "ml-cq"}},
    {"kind": "LocalQueue", "metadata": {"name": "q", "namespace": "web"}, "spec": {"clusterQueue": "ml-cq"}}
  ])");
  auto objs = load_kueue_objects(doc, reg);
  REQUIRE(objs.config.namespaces);
  CHECK(objs.config.namespaces->size() == 2);
  CHECK_FALSE(objs.config.cluster_queues[2].namespace_selector.has_value());
  CHECK(objs.config.cluster_queues[1].namespace_selector.has_value());
  kueue_model m(objs.config, reg);
  auto w = wl("w", "q", cpu(1));
  w.ns = "ml";
  CHECK(m.check(w).allowed());
  w.ns = "web";
  CHECK(m.check(w).reasons()[0].rule == "namespace_mismatch");
  w.queue = "open";
  CHECK(m.check(w).allowed());
  w.queue = "closed";
  CHECK_FALSE(m.check(w).allowed());
  // bad selectors: every problem named
  const auto bad = json::parse(R"([
    {"kind": "ClusterQueue", "metadata": {"name": "x"},
     "spec": {"namespaceSelector": {"matchLabels": {"a": 1}, "bogus": 1,
                                    "matchExpressions": [{"key": "k", "operator": "Near"}]}}}
  ])");
  try {
    (void)load_kueue_objects(bad, reg);
    FAIL("expected a validation error");
  } catch (const validation_error& e) {
    CHECK(e.problems().size() == 3);
  }
}

// ---- randomized invariants from the specification ---------------------------------

namespace {
// what a node can lend upward, from the spec alone: min(lendingLimit, subtree)
// where subtree = nominal + what its children lend
amount spec_lendable(const kueue_config& cfg, const std::string& name, bool is_cq, std::size_t flavor) {
  auto nominal_ll = [&](const std::vector<kueue_resource_group_spec>& gs) -> std::pair<amount, std::optional<amount>> {
    for (const auto& g : gs)
      for (const auto& f : g.flavors)
        if (f.flavor == cfg.resource_flavors[flavor]) return {f.resources[0].nominal, f.resources[0].lending_limit};
    return {0, std::nullopt};
  };
  amount subtree = 0;
  std::optional<amount> ll;
  if (is_cq) {
    for (const auto& c : cfg.cluster_queues)
      if (c.name == name) std::tie(subtree, ll) = nominal_ll(c.resource_groups);
  } else {
    for (const auto& c : cfg.cohorts)
      if (c.name == name) std::tie(subtree, ll) = nominal_ll(c.resource_groups);
    for (const auto& c : cfg.cluster_queues)
      if (c.cohort == name) subtree += spec_lendable(cfg, c.name, true, flavor);
    for (const auto& c : cfg.cohorts)
      if (c.parent == name) subtree += spec_lendable(cfg, c.name, false, flavor);
  }
  return ll ? std::min(*ll, subtree) : subtree;
}
}  // namespace

TEST_CASE("kueue: randomized: limits hold against the spec, and jointly fitting admission is order-free") {
  std::mt19937_64 rng(20261123);
  for (int round = 0; round < 30; ++round) {
    resource_registry reg;
    kueue_config cfg;
    cfg.resource_flavors = {"f0", "f1"};
    kueue_cohort_spec root{"root", "", {}, 1000};
    if (rng() % 2) root.resource_groups.push_back({{resources::cpu}, {{"f0", {rq(cpu(1 + (rng() % 4 > 0)))}}}});
    kueue_cohort_spec mid{"mid", "root", {}, 1000};
    if (rng() % 2) mid.resource_groups.push_back({{resources::cpu}, {{"f1", {rq(cpu(2), std::nullopt, cpu(1))}}}});
    cfg.cohorts = {root, mid};
    const int ncq = 2 + static_cast<int>(rng() % 5);
    for (int i = 0; i < ncq; ++i) {
      kueue_cluster_queue_spec c;
      c.name = "q" + std::to_string(i);
      c.cohort = i % 2 ? "mid" : "root";
      kueue_resource_group_spec g;
      g.covered_resources = {resources::cpu};
      for (const char* f : {"f0", "f1"}) {
        const amount nom = cpu(static_cast<std::int64_t>(rng() % 6));
        std::optional<amount> bl, ll;
        if (rng() % 3 == 0) bl = cpu(static_cast<std::int64_t>(rng() % 3));
        if (rng() % 3 == 0) ll = static_cast<amount>(rng() % static_cast<std::uint64_t>(nom + 1));
        g.flavors.push_back({f, {rq(nom, bl, ll)}});
      }
      c.resource_groups.push_back(std::move(g));
      cfg.cluster_queues.push_back(std::move(c));
    }
    kueue_model m(cfg, reg);
    const auto& fo = m.forest();
    std::vector<std::string> live;
    for (int step = 0; step < 150; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const auto k = rng() % live.size();
        m.finish(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        auto w = wl("w" + std::to_string(step), "q" + std::to_string(rng() % static_cast<std::uint64_t>(ncq)),
                    500 * static_cast<amount>(1 + rng() % 6));
        if (m.admit(w).allowed()) live.push_back(w.name);
      }
      for (std::size_t f = 0; f < 2; ++f) {
        const kueue_fr_slot s = fo.slot(static_cast<kueue_flavor_index>(f), resources::cpu);
        // per ClusterQueue: usage <= nominal + borrowingLimit, from the spec
        for (int i = 0; i < ncq; ++i) {
          const auto& q = cfg.cluster_queues[static_cast<std::size_t>(i)].resource_groups[0].flavors[f].resources[0];
          if (q.borrowing_limit)
            REQUIRE(fo.usage(static_cast<kueue_node_index>(i), s) <= q.nominal + *q.borrowing_limit);
        }
        // the root never hands out more than its own quota plus what its members may lend
        const kueue_node_index r = *fo.find_cohort("root");
        REQUIRE(fo.usage(r, s) <= spec_lendable(cfg, "root", false, f));
        REQUIRE(fo.usage(r, s) >= 0);
        // a member with a lending limit keeps (nominal - lendingLimit) for itself: the
        // others in the tree use at most lendingLimit of its quota
        for (int i = 0; i < ncq; ++i) {
          const auto& q = cfg.cluster_queues[static_cast<std::size_t>(i)].resource_groups[0].flavors[f].resources[0];
          const auto n = static_cast<kueue_node_index>(i);
          if (q.lending_limit)
            REQUIRE(fo.available(n, s) >= std::max<kueue_amount>(0, q.nominal - *q.lending_limit - fo.usage(n, s)));
        }
      }
    }
    // order independence: workloads that fit within each queue's own guaranteed quota
    std::vector<kueue_workload> ws;
    for (int i = 0; i < ncq; ++i) {
      const auto& q = cfg.cluster_queues[static_cast<std::size_t>(i)].resource_groups[0].flavors[0].resources[0];
      const kueue_amount keep = q.lending_limit ? q.nominal - *q.lending_limit : 0;
      if (keep >= 2) {
        ws.push_back(wl("o" + std::to_string(i) + "a", "q" + std::to_string(i), static_cast<amount>(keep / 2)));
        ws.push_back(wl("o" + std::to_string(i) + "b", "q" + std::to_string(i), static_cast<amount>(keep - keep / 2)));
      }
    }
    std::vector<kueue_amount> first;
    for (int perm = 0; perm < 6; ++perm) {
      std::shuffle(ws.begin(), ws.end(), rng);
      kueue_model fresh(cfg, reg);
      for (const auto& w : ws) REQUIRE(fresh.admit(w).allowed());
      if (perm == 0) first = fresh.forest().usage_table();
      CHECK(fresh.forest().usage_table() == first);
    }
  }
}

TEST_CASE("kueue: upstream a flavor whose preemption finds no candidates does not stop the flavor search") {
  // f1 is full of a workload the newcomer may not preempt (higher priority);
  // f2 is free. Kueue's oracle finds no candidates on f1, so even with
  // whenCanPreempt MayStopSearch the search goes on and f2 fits.
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f1", "f2"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", {{"f1", rq(cpu(4))}, {"f2", rq(cpu(4))}}));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  cfg.cluster_queues[0].fungibility.when_can_preempt = kueue_fungibility_action::may_stop_search;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("vip", "a", cpu(4), 1, 100, 0)).allowed());
  const auto f1 = m.forest().find_flavor("f1"), f2 = m.forest().find_flavor("f2");
  CHECK(m.simulate_preemption(0, wl("low", "a", cpu(2), 1, 0, 1), m.forest().slot(*f1, resources::cpu), cpu(2))
            .possibility == kueue_preemption_possibility::no_candidates);
  kueue_flavor_assignment fa;
  m.assign(wl("low", "a", cpu(2), 1, 0, 1), fa);
  CHECK(fa.mode == kueue_fit_mode::fit);
  CHECK(fa.pod_sets[0].resources[0].flavor == *f2);
  CHECK(m.admit(wl("low", "a", cpu(2), 1, 0, 1)).allowed());

  // a workload that may preempt vip (higher priority) stops at f1 under MayStopSearch
  kueue_flavor_assignment fb;
  const auto boss = wl("boss", "a", cpu(4), 1, 1000, 2);
  CHECK(m.simulate_preemption(0, boss, m.forest().slot(*f1, resources::cpu), cpu(4)).possibility ==
        kueue_preemption_possibility::preempt);
  m.assign(boss, fb);
  CHECK(fb.mode == kueue_fit_mode::preempt);
  CHECK(fb.pod_sets[0].resources[0].flavor == *f1);

  // the assigner alone (no oracle) still takes f1 as preemptible and stops there
  kueue_flavor_assigner bare(m.forest(), reg);
  kueue_flavor_assignment fc;
  bare.assign(0, wl("low2", "a", cpu(4), 1, 0, 3), fc);
  CHECK(fc.mode == kueue_fit_mode::preempt);
  CHECK(fc.pod_sets[0].resources[0].flavor == *f1);
}

TEST_CASE(
    "kueue: upstream a flavor where preemption reclaims from the cohort ranks above one that preempts in the queue") {
  // flavor p: a's own lower-priority workload holds it (preempt in a);
  // flavor r: b borrows a's nominal quota there (reclaim). Kueue prefers reclaim.
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"p", "r"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"p", rq(cpu(2))}, {"r", rq(cpu(2))}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"p", rq(0)}, {"r", rq(0)}}));
  cfg.cluster_queues[0].preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::any;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("a-low", "a", cpu(2), 1, 0, 0)).allowed());     // takes p
  REQUIRE(m.admit(wl("b-borrow", "b", cpu(2), 1, 0, 1)).allowed());  // borrows a's r
  const auto p = m.forest().find_flavor("p"), r = m.forest().find_flavor("r");
  REQUIRE(m.find_admitted("a-low")->usage.front().first == m.forest().slot(*p, resources::cpu));
  const auto w = wl("a-hi", "a", cpu(2), 1, 10, 2);
  CHECK(m.simulate_preemption(0, w, m.forest().slot(*p, resources::cpu), cpu(2)).possibility ==
        kueue_preemption_possibility::preempt);
  CHECK(m.simulate_preemption(0, w, m.forest().slot(*r, resources::cpu), cpu(2)).possibility ==
        kueue_preemption_possibility::reclaim);
  kueue_flavor_assignment fa;
  m.assign(w, fa);
  CHECK(fa.mode == kueue_fit_mode::preempt);
  CHECK(fa.pod_sets[0].resources[0].flavor == *r);
}

TEST_CASE(
    "kueue: upstream heads go by borrowing level: borrowing inside a lower cohort goes before borrowing at the root") {
  // root r (10 CPUs of its own) holds cohort x {a: 2, a2: 4} and b (2).
  // a's head borrows within x (level 1, x's height); b's head borrows at r
  // (level 2, r's height). Kueue's classical order puts a first, whatever
  // the priorities (scheduler.go: Borrows() before priority).
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  kueue_cohort_spec r;
  r.name = "r";
  r.resource_groups.push_back({{resources::cpu}, {{"f", {rq(cpu(10))}}}});
  kueue_cohort_spec x;
  x.name = "x";
  x.parent = "r";
  cfg.cohorts = {r, x};
  cfg.cluster_queues = {cq_cpu("a", "x", rq(cpu(2))), cq_cpu("a2", "x", rq(cpu(4))), cq_cpu("b", "r", rq(cpu(2)))};
  kueue_policy p(cfg, reg);
  const auto& f = p.model().forest();
  CHECK(f.height(*f.find_cohort("x")) == 1);
  CHECK(f.height(*f.find_cohort("r")) == 2);
  CHECK(f.height(f.cluster_queue_at("a")) == 0);
  job ja, jb, jc;
  ja.id = "a-head";
  ja.queue = "a";
  ja.request.set(resources::cpu, cpu(4));
  jb = ja;
  jb.id = "b-head";
  jb.queue = "b";
  jb.priority = 100;
  jc = ja;
  jc.id = "a-small";
  jc.request.set(resources::cpu, cpu(2));
  kueue_flavor_assignment fa;
  p.model().assign(p.to_workload(ja), fa);
  CHECK(fa.borrow_level == 1);
  p.model().assign(p.to_workload(jb), fa);
  CHECK(fa.borrow_level == 2);
  p.model().assign(p.to_workload(jc), fa);
  CHECK(fa.borrow_level == 0);
  CHECK(std::is_lt(p.compare_heads(ja, jb)));  // level 1 before level 2, despite b's priority
  CHECK(std::is_lt(p.compare_heads(jc, ja)));  // within nominal first
  const std::vector<const job*> heads = {&jb, &ja};
  CHECK(p.select_head(heads) == 1);
}

// ---- scheduling cycles: capacity held for a head that must preempt ------------------

namespace {
// cohort co: a (6 CPUs) runs 1, b (0) borrows 3 of a's; 2 are free.
kueue_config held_cycle(kueue_reclaim_within_cohort_policy reclaim) {
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues = {cq_cpu("a", "co", rq(cpu(6))), cq_cpu("b", "co", rq(0))};
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = reclaim;
  return cfg;
}
job cpu_job(std::string id, std::string queue, amount cpus, std::int32_t prio = 0) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.priority = prio;
  j.pods = 1;
  j.request.set(resources::cpu, cpus);
  return j;
}
}  // namespace

TEST_CASE("kueue: upstream a head that must preempt without candidates holds its nominal quota for the cycle") {
  // a's head (4) finds 2 free and may not reclaim (reclaimWithinCohort Never):
  // preemption without candidates. Kueue's scheduler then counts what a's
  // nominal quota still holds of the request (6 - 1 = 5, capped by 4) as used
  // for the rest of the cycle, so b's later head cannot borrow the 2 free.
  resource_registry reg;
  kueue_policy p(held_cycle(kueue_reclaim_within_cohort_policy::never), reg);
  p.commit(cpu_job("a-run", "a", cpu(1)));
  p.commit(cpu_job("b-borrow", "b", cpu(3)));
  const job head = cpu_job("a-head", "a", cpu(4), 10), later = cpu_job("b-next", "b", cpu(1));
  REQUIRE_FALSE(p.check(head).allowed());
  std::vector<victim> v;
  p.victims(head, v);
  REQUIRE(v.empty());
  REQUIRE(p.check(later).allowed());

  p.head_denied(head);  // outside a cycle: nothing held
  CHECK(p.model().cycle_holds().empty());
  CHECK(p.check(later).allowed());

  p.begin_cycle();
  p.head_denied(head);
  const auto& f = p.model().forest();
  const auto s = f.slot(*f.find_flavor("f"), resources::cpu);
  REQUIRE(p.model().cycle_holds().size() == 1);
  CHECK(p.model().cycle_holds()[0].held == cpu(4));
  CHECK(p.model().cycle_usage(f.cluster_queue_at("a"), s) == cpu(5));
  CHECK(f.usage(f.cluster_queue_at("a"), s) == cpu(1));  // the admitted usage is unchanged
  CHECK_FALSE(p.check(later).allowed());
  // a's next workload is Kueue's next cycle (one head per ClusterQueue): no hold for it
  CHECK(p.check(cpu_job("a-small", "a", cpu(1))).allowed());
  p.end_cycle();
  CHECK(p.model().cycle_holds().empty());
  CHECK(f.usage(f.cluster_queue_at("a"), s) == cpu(1));
  CHECK(f.usage(*f.find_cohort("co"), s) == cpu(4));
  CHECK(p.check(later).allowed());

  // one head per ClusterQueue and cycle: a's next workload, offered after a
  // head of a was seen (denied or admitted), holds nothing
  p.begin_cycle();
  p.commit(cpu_job("a-small", "a", cpu(1)));
  p.head_denied(head);
  CHECK(p.model().cycle_holds().empty());
  p.release("a-small");
  p.end_cycle();

  // while the cycle holds capacity in the cohort, a later head gets no
  // victims (Kueue skips it: its targets were found without the hold)
  // (b: 2 CPUs, may preempt its own lower priority while borrowing; it borrows 3)
  kueue_config cfg = held_cycle(kueue_reclaim_within_cohort_policy::never);
  cfg.cluster_queues[1] = cq_cpu("b", "co", rq(cpu(2)));
  auto& bp = cfg.cluster_queues[1].preemption;
  bp.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  bp.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::lower_priority;
  bp.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
  kueue_policy q(cfg, reg);
  q.commit(cpu_job("a-run", "a", cpu(1)));
  q.commit(cpu_job("b-borrow", "b", cpu(5)));
  const job b_urgent = cpu_job("b-urgent", "b", cpu(3), 50);
  std::vector<victim> bv;
  q.victims(b_urgent, bv);
  REQUIRE(bv.size() == 1);  // b's own lower-priority workload, as long as nothing is held
  q.begin_cycle();
  q.head_denied(head);
  REQUIRE(q.model().cycle_holds().size() == 1);
  bv.clear();
  q.victims(b_urgent, bv);
  CHECK(bv.empty());
  // a release in the cycle (a preemption, or a trial the host undoes) ends the holds
  q.release("b-borrow");
  CHECK(q.model().cycle_holds().empty());
  CHECK(q.model().forest().usage(q.model().forest().cluster_queue_at("a"), s) == cpu(1));
  q.commit(cpu_job("b-borrow", "b", cpu(5)));  // put back as it was
  q.end_cycle();
}

TEST_CASE("kueue: upstream a ClusterQueue that can always reclaim holds nothing for a denied head") {
  // a (6) is full of its own higher-priority work (withinClusterQueue Never),
  // b (2) uses its 2 without borrowing: a's head (2) must preempt while
  // borrowing and finds no candidates. With reclaimWithinCohort
  // LowerPriority (and borrowWithinCohort) a holds the whole request (it
  // borrows, no borrowing limit); with Any (Kueue's CanAlwaysReclaim) nothing.
  resource_registry reg;
  const job head = cpu_job("a-head", "a", cpu(2), 10);
  for (const auto reclaim :
       {kueue_reclaim_within_cohort_policy::lower_priority, kueue_reclaim_within_cohort_policy::any}) {
    kueue_config cfg;
    cfg.resource_flavors = {"f"};
    cfg.cluster_queues = {cq_cpu("a", "co", rq(cpu(6))), cq_cpu("b", "co", rq(cpu(2)))};
    cfg.cluster_queues[0].preemption.reclaim_within_cohort = reclaim;
    cfg.cluster_queues[0].preemption.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
    kueue_policy p(cfg, reg);
    p.commit(cpu_job("a-big", "a", cpu(6), 100));
    p.commit(cpu_job("b-run", "b", cpu(2), 100));
    kueue_flavor_assignment fa;
    p.model().assign(p.to_workload(head), fa);
    REQUIRE(fa.mode == kueue_fit_mode::preempt);
    std::vector<victim> v;
    p.victims(head, v);
    REQUIRE(v.empty());
    p.begin_cycle();
    p.head_denied(head);
    if (reclaim == kueue_reclaim_within_cohort_policy::any) {
      CHECK(p.model().cycle_holds().empty());
    } else {
      REQUIRE(p.model().cycle_holds().size() == 1);
      CHECK(p.model().cycle_holds()[0].held == cpu(2));
    }
    p.end_cycle();
    CHECK(p.model().cycle_holds().empty());
  }
}

TEST_CASE("kueue: upstream a borrowing head holds at most nominal + borrowingLimit less its queue's usage") {
  // a (2, borrowingLimit 1) runs 2, b (4) runs 4: all 6 in use. a's head (2)
  // needs preemption while borrowing (borrowWithinCohort) and finds no
  // candidate (b is within its quota): it holds min(2, 2 + 1 - 2) = 1.
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues = {cq_cpu("a", "co", rq(cpu(2), cpu(1))), cq_cpu("b", "co", rq(cpu(4)))};
  cfg.cluster_queues[0].preemption.reclaim_within_cohort = kueue_reclaim_within_cohort_policy::lower_priority;
  cfg.cluster_queues[0].preemption.borrow_within_cohort = kueue_borrow_within_cohort_policy::lower_priority;
  kueue_policy p(cfg, reg);
  p.commit(cpu_job("a-run", "a", cpu(2), 100));
  p.commit(cpu_job("b-run", "b", cpu(4)));
  const job head = cpu_job("a-head", "a", cpu(2), 10);
  kueue_flavor_assignment fa;
  p.model().assign(p.to_workload(head), fa);
  REQUIRE(fa.mode == kueue_fit_mode::preempt);
  CHECK(fa.borrow_level == 1);
  p.begin_cycle();
  p.head_denied(head);
  REQUIRE(p.model().cycle_holds().size() == 1);
  CHECK(p.model().cycle_holds()[0].held == cpu(1));
  const auto& f = p.model().forest();
  CHECK(p.model().cycle_usage(f.cluster_queue_at("a"), f.slot(*f.find_flavor("f"), resources::cpu)) == cpu(3));
  // a new cycle starts from nothing held
  p.begin_cycle();
  CHECK(p.model().cycle_holds().empty());
  CHECK(p.model().cycle_usage(f.cluster_queue_at("a"), f.slot(*f.find_flavor("f"), resources::cpu)) == cpu(2));
  p.end_cycle();
}

// ---- flavorFungibility.preference ---------------------------------------------------

namespace {
// a (f1: 4, f2: 0) and b (f1: 0, f2: 4) in cohort co; a's low-priority
// workload fills f1, so a new a workload needs preemption in f1 (level 0)
// and fits in f2 by borrowing b's quota (level 1).
kueue_config preference_cfg(std::optional<kueue_fungibility_preference> pref, kueue_fungibility_action borrow,
                            kueue_fungibility_action preempt) {
  kueue_config cfg;
  cfg.resource_flavors = {"f1", "f2"};
  cfg.cluster_queues.push_back(cq_cpu("a", "co", {{"f1", rq(cpu(4))}, {"f2", rq(0)}}));
  cfg.cluster_queues.push_back(cq_cpu("b", "co", {{"f1", rq(0)}, {"f2", rq(cpu(4))}}));
  auto& a = cfg.cluster_queues[0];
  a.preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
  a.fungibility.when_can_borrow = borrow;
  a.fungibility.when_can_preempt = preempt;
  a.fungibility.preference = pref;
  return cfg;
}
kueue_flavor_index chosen_flavor(const kueue_config& cfg, kueue_fit_mode& mode) {
  resource_registry reg;
  kueue_model m(cfg, reg);
  REQUIRE(m.admit(wl("a-low", "a", cpu(4), 1, 0, 0)).allowed());
  REQUIRE(m.find_admitted("a-low")->usage.front().first ==
          m.forest().slot(*m.forest().find_flavor("f1"), resources::cpu));
  kueue_flavor_assignment fa;
  m.assign(wl("a-new", "a", cpu(2), 1, 10, 1), fa);
  mode = fa.mode;
  return fa.pod_sets[0].resources[0].flavor;
}
}  // namespace

TEST_CASE("kueue: upstream preference PreemptionOverBorrowing takes preemption in nominal quota over borrowing") {
  constexpr auto tnf = kueue_fungibility_action::try_next_flavor;
  kueue_fit_mode mode{};
  // unset and BorrowingOverPreemption: Kueue compares the mode first, so the
  // flavor that fits (by borrowing) wins
  CHECK(chosen_flavor(preference_cfg(std::nullopt, tnf, tnf), mode) == 1);
  CHECK(mode == kueue_fit_mode::fit);
  CHECK(chosen_flavor(preference_cfg(kueue_fungibility_preference::borrowing_over_preemption, tnf, tnf), mode) == 1);
  CHECK(mode == kueue_fit_mode::fit);
  // PreemptionOverBorrowing: the lower borrowing level first
  CHECK(chosen_flavor(preference_cfg(kueue_fungibility_preference::preemption_over_borrowing, tnf, tnf), mode) == 0);
  CHECK(mode == kueue_fit_mode::preempt);
}

TEST_CASE("kueue: upstream a flavor where the search may stop is taken even after a better flavor") {
  // f2 first (fits by borrowing: whenCanBorrow TryNextFlavor goes on), then
  // f1 (preemption in nominal quota: whenCanPreempt MayStopSearch stops
  // there). Kueue's shouldTryNextFlavor stops and takes f1.
  resource_registry reg;
  kueue_config cfg = preference_cfg(std::nullopt, kueue_fungibility_action::try_next_flavor,
                                    kueue_fungibility_action::may_stop_search);
  auto& g = cfg.cluster_queues[0].resource_groups[0].flavors;
  std::swap(g[0], g[1]);
  kueue_model m(cfg, reg);
  // a-low lands on f1 while f2 (first) would borrow: f2 is tried first and
  // the search goes on to f1, which fits without borrowing
  REQUIRE(m.admit(wl("a-low", "a", cpu(4), 1, 0, 0)).allowed());
  const auto f1 = *m.forest().find_flavor("f1");
  REQUIRE(m.find_admitted("a-low")->usage.front().first == m.forest().slot(f1, resources::cpu));
  kueue_flavor_assignment fa;
  m.assign(wl("a-new", "a", cpu(2), 1, 10, 1), fa);
  CHECK(fa.mode == kueue_fit_mode::preempt);
  CHECK(fa.pod_sets[0].resources[0].flavor == f1);
}

TEST_CASE("kueue: upstream preference is accepted only with both fungibility actions TryNextFlavor") {
  resource_registry reg;
  constexpr auto tnf = kueue_fungibility_action::try_next_flavor, stop = kueue_fungibility_action::may_stop_search;
  CHECK_NOTHROW(kueue_model(preference_cfg(kueue_fungibility_preference::preemption_over_borrowing, tnf, tnf), reg));
  for (const auto& [b, p] : {std::pair{stop, tnf}, std::pair{tnf, stop}}) {
    try {
      kueue_model m(preference_cfg(kueue_fungibility_preference::borrowing_over_preemption, b, p), reg);
      FAIL("expected a validation error");
    } catch (const validation_error& e) {
      REQUIRE(e.problems().size() == 1);
      CHECK(e.problems()[0].path == "ClusterQueue/a.spec.flavorFungibility.preference");
    }
  }
  // JSON: read, defaults applied before the check (whenCanBorrow defaults to MayStopSearch)
  const auto objs = [&](const char* ff) {
    return json::parse(std::string(R"([{"kind": "ResourceFlavor", "metadata": {"name": "f"}},
      {"kind": "ClusterQueue", "metadata": {"name": "x"},
       "spec": {"flavorFungibility": )") +
                       ff + R"(,
                "resourceGroups": [{"coveredResources": ["cpu"],
                                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}}])");
  };
  auto ok = load_kueue_objects(
      objs(
          R"({"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor", "preference": "PreemptionOverBorrowing"})"),
      reg);
  REQUIRE(ok.config.cluster_queues[0].fungibility.preference);
  CHECK(*ok.config.cluster_queues[0].fungibility.preference == kueue_fungibility_preference::preemption_over_borrowing);
  CHECK_NOTHROW(kueue_model(ok.config, reg));
  auto defaulted =
      load_kueue_objects(objs(R"({"whenCanPreempt": "TryNextFlavor", "preference": "BorrowingOverPreemption"})"), reg);
  try {
    kueue_model m(defaulted.config, reg);
    FAIL("expected a validation error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "ClusterQueue/x.spec.flavorFungibility.preference");
  }
  try {
    (void)load_kueue_objects(objs(R"({"preference": "Cheapest"})"), reg);
    FAIL("expected a validation error");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "ClusterQueue/x.spec.flavorFungibility.preference");
  }
}

// ---- denial messages ----------------------------------------------------------------

TEST_CASE("kueue: upstream a denial names the flavor, the resource, how much more is needed and the maximum capacity") {
  resource_registry reg;
  kueue_model m(single_queue(), reg);
  REQUIRE(m.admit(wl("lo", "a", cpu(4), 1, 0)).allowed());
  REQUIRE(m.admit(wl("mid", "a", cpu(4), 1, 3)).allowed());
  // 2 unused, 5 asked: 3 more needed (Kueue: "insufficient unused quota ... 3 more needed")
  auto d = m.check(wl("in", "a", cpu(5), 1, 9));
  REQUIRE(d.reasons().size() == 1);
  const auto& r = d.reasons()[0];
  CHECK(r.rule == "needs_preemption");
  CHECK(r.resource_name == "cpu");
  CHECK(r.requested == cpu(5));
  CHECK(r.used == cpu(8));
  CHECK(r.limit == cpu(2));
  CHECK(r.requested - r.limit == cpu(3));
  CHECK(r.message == "needs preemption in flavor f for cpu: 3 more than is unused is needed (5 requested, 2 unused)");
  // above the maximum capacity (Kueue: "... > maximum capacity (10)")
  auto n = m.check(wl("huge", "a", cpu(11)));
  REQUIRE(n.reasons().size() == 1);
  CHECK(n.reasons()[0].rule == "no_fit");
  CHECK(n.reasons()[0].limit == cpu(10));
  CHECK(n.reasons()[0].message ==
        "no fit in flavor f for cpu: 11 requested, more than the most this ClusterQueue can ever get, 10");
  // two pod sets in one flavor: the earlier pod set's share is named
  kueue_workload two = wl("two", "a", cpu(6));
  two.pod_sets.push_back(two.pod_sets[0]);
  two.pod_sets[0].name = "main";
  two.pod_sets[1].name = "side";
  auto t = m.check(two);
  REQUIRE_FALSE(t.allowed());
  REQUIRE(t.reasons().size() == 2);  // the first pod set needs preemption, the second exceeds the maximum
  CHECK(t.reasons()[1].requested == cpu(12));
  CHECK(t.reasons()[1].message ==
        "no fit in flavor f for cpu: 12 requested (6 by earlier pod sets), more than the most this ClusterQueue can "
        "ever get, 10");
}

TEST_CASE("kueue: upstream with fair sharing, preemption while borrowing needs reclaimWithinCohort other than Never") {
  // a (2) asks 3 while b (4) leaves 1 of the cohort free: above a's nominal
  // quota, so only preemption while borrowing could help. Kueue's
  // canPreemptWhileBorrowing: fair sharing counts only when a may reclaim.
  resource_registry reg;
  for (const auto reclaim : {kueue_reclaim_within_cohort_policy::never, kueue_reclaim_within_cohort_policy::any}) {
    kueue_config cfg;
    cfg.resource_flavors = {"f"};
    cfg.fair_sharing = true;
    cfg.cluster_queues = {cq_cpu("a", "co", rq(cpu(2))), cq_cpu("b", "co", rq(cpu(4)))};
    cfg.cluster_queues[0].preemption.reclaim_within_cohort = reclaim;
    kueue_model m(cfg, reg);
    REQUIRE(m.admit(wl("b-run", "b", cpu(5))).allowed());
    kueue_flavor_assignment fa;
    m.assign(wl("a-big", "a", cpu(3)), fa);
    CHECK(fa.mode ==
          (reclaim == kueue_reclaim_within_cohort_policy::never ? kueue_fit_mode::no_fit : kueue_fit_mode::preempt));
  }
}

// ---- quantities beyond 64-bit base units ----------------------------------------------
namespace {
// one flavor "f"; ClusterQueues in cohort "co" with the given cpu resource entries (JSON)
json cohort_of(const std::vector<std::pair<std::string, std::string>>& cqs) {
  json doc = json::array({json::parse(R"({"kind": "ResourceFlavor", "metadata": {"name": "f"}})")});
  for (const auto& [name, res] : cqs)
    doc.push_back(json::parse(R"({"kind": "ClusterQueue", "metadata": {"name": ")" + name +
                              R"("}, "spec": {"cohort": "co", "resourceGroups": [{"coveredResources": ["cpu"],
                                  "flavors": [{"name": "f", "resources": [)" +
                              res + "]}]}]}}"));
  return doc;
}
std::vector<diagnostic> problems_of(const json& doc) {
  resource_registry reg;
  try {
    const auto objs = load_kueue_objects(doc, reg);
    kueue_model m(objs.config, reg);
  } catch (const validation_error& e) {
    return e.problems();
  }
  return {};
}
constexpr kueue_amount e18 = 1'000'000'000'000'000'000;
}  // namespace

TEST_CASE("kueue: upstream quotas beyond 64-bit base units (nominalQuota: 1E cpu) are accepted and exact") {
  resource_registry reg;
  // big: 1E cores (10^21 millicores), lending all but one core; small: 10^19 cores as a JSON integer
  const auto objs = load_kueue_objects(
      cohort_of({{"big", R"({"name": "cpu", "nominalQuota": "1E", "lendingLimit": "999999999999999999"})"},
                 {"small", R"({"name": "cpu", "nominalQuota": 10000000000000000000})"}}),
      reg);
  kueue_model m(objs.config, reg);
  const auto& f = m.forest();
  const auto big = *f.find_cluster_queue("big"), small = *f.find_cluster_queue("small");
  const auto co = *f.find_cohort("co");
  const auto s = f.slot(0, resources::cpu);
  CHECK(f.nominal(big, s) == 1000 * e18);
  CHECK(f.nominal(small, s) == 10000 * e18);
  CHECK(f.guaranteed(big, s) == 1000);  // 10^21 - (10^21 - 1000): the core big never lends
  CHECK(f.subtree_quota(co, s) == 11000 * e18 - 1000);
  CHECK(f.potential_available(small, s) == 11000 * e18 - 1000);
  CHECK(f.potential_available(big, s) == 11000 * e18);

  // three workloads of 9 * 10^18 millicores each: usage past int64, exact
  const amount nine = 9'000'000'000'000'000'000;
  for (const char* n : {"w1", "w2", "w3"}) REQUIRE(m.admit(wl(n, "small", nine)).allowed());
  CHECK(f.usage(small, s) == 3 * kueue_amount{nine});
  CHECK(f.usage(co, s) == 3 * kueue_amount{nine});
  CHECK(f.available(big, s) == 11000 * e18 - 3 * kueue_amount{nine});
  CHECK(f.borrowed(small, s) == 0);
  const json j = m;
  // beyond int64 in JSON: the exact decimal text; within: a number
  CHECK(j["clusterQueues"]["small"]["usage"]["f"]["cpu"] == "27000000000000000000");
  CHECK(j["cohorts"]["co"]["quota"]["f"]["cpu"] == "10999999999999999999000");
  CHECK(j["clusterQueues"]["big"]["usage"]["f"]["cpu"] == 0);
  m.finish("w2");
  CHECK(f.usage(co, s) == 2 * kueue_amount{nine});
}

TEST_CASE("kueue: upstream a denial's int64 numbers take the nearest value for a usage beyond int64") {
  resource_registry reg;
  // small's quota ends just above what three 9 * 10^18 workloads use: a fourth is denied
  const auto objs =
      load_kueue_objects(cohort_of({{"small", R"({"name": "cpu", "nominalQuota": "28000000000000000"})"}}), reg);
  kueue_model m(objs.config, reg);
  const amount nine = 9'000'000'000'000'000'000;
  for (const char* n : {"w1", "w2", "w3"}) REQUIRE(m.admit(wl(n, "small", nine)).allowed());
  const auto d = m.admit(wl("w4", "small", nine));
  REQUIRE(d.denied());
  const auto& r = d.reasons().front();
  CHECK(r.rule == "needs_preemption");  // within nominal quota, but nothing to preempt
  CHECK(r.requested == nine);
  // the usage, 2.7 * 10^19 millicores, is beyond a reason's int64 numbers: the nearest one there, exact in the text
  CHECK(r.used == std::numeric_limits<std::int64_t>::max());
  CHECK(r.limit == 1'000'000'000'000'000'000);  // unused: 2.8 * 10^19 - 2.7 * 10^19
  CHECK(r.message.str().find(format_amount(8'000'000'000'000'000'000, 3) + " more than is unused is needed") !=
        std::string::npos);
}

TEST_CASE("kueue: upstream quotas beyond 2^88 base units are rejected, naming the field") {
  // one value past the bound (10^30 cores = 10^33 millicores)
  auto p = problems_of(cohort_of({{"a", R"({"name": "cpu", "nominalQuota": "1e30", "borrowingLimit": "1e31"})"}}));
  REQUIRE(p.size() == 2);
  CHECK(p[0].path == "ClusterQueue/a.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota");
  CHECK(p[0].message.find("more than the largest quota kept exactly, 2^88 - 1 base units") != std::string::npos);
  CHECK(p[1].path == "ClusterQueue/a.spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit");
  // values within the bound whose sum over the configuration is not
  p = problems_of(cohort_of(
      {{"a", R"({"name": "cpu", "nominalQuota": "2e23"})"}, {"b", R"({"name": "cpu", "nominalQuota": "2e23"})"}}));
  REQUIRE(p.size() == 1);
  CHECK(p[0].path == "ResourceFlavor/f[cpu]");
  CHECK(p[0].message.find("sum to 400000000000000000000000000 base units") != std::string::npos);
  CHECK(problems_of(cohort_of({{"a", R"({"name": "cpu", "nominalQuota": "2e23"})"},
                               {"b", R"({"name": "cpu", "nominalQuota": "1e23"})"}}))
            .empty());

  // the same bound for configurations built in C++: the largest value passes, one more does not
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(cq_cpu("a", "", rq(0)));
  cfg.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal = kueue_amount_max;
  kueue_model ok(cfg, reg);
  CHECK(ok.forest().potential_available(0, 0) == kueue_amount_max);
  cfg.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal = kueue_amount_max + 1;
  CHECK_THROWS_AS(kueue_model(cfg, reg), validation_error);
}
