// SPDX-License-Identifier: Apache-2.0
#include <quota/kai_fair_share.hpp>
#include <quota/kai_fair_share_json.hpp>

#include <algorithm>
#include <random>

#include "quota_catch.hpp"

using namespace quota;
namespace R = quota::resources;

namespace {
kai_fair_share_queue_spec q(std::string name, std::string parent, amount quota, amount weight, amount limit = -1,
                            std::int32_t prio = 100, std::int64_t created = 0) {
  kai_fair_share_queue_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.priority = prio;
  s.created_ms = created;
  s.resources[R::nvidia_gpu] = kai_fair_share_resource{quota, weight, limit};
  return s;
}
resource_vector gpu(amount n) {
  return resource_vector{{R::nvidia_gpu, n}};
}
job mk(std::string id, std::string queue, std::int32_t prio, resource_vector req) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.priority = prio;
  j.request = std::move(req);
  return j;
}
amount fs(const kai_fair_share_model& t, std::string_view name) {
  return t.fair_share(t.at(name), R::nvidia_gpu);
}
}  // namespace

TEST_CASE("kai_fair_share: deserved first then over-quota by weight") {
  // 10 GPUs; a quota 2 weight 1, b quota 3 weight 3, both want everything.
  kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 3, 3)});
  t.set_capacity(gpu(13));
  t.set_request(t.at("a"), gpu(100));
  t.set_request(t.at("b"), gpu(100));
  t.compute();
  // over quota pool 8 split 1:3 -> 2 and 6
  CHECK(fs(t, "a") == 4);
  CHECK(fs(t, "b") == 9);
}

TEST_CASE("kai_fair_share: deserved capped by demand, leftover goes over quota") {
  kai_fair_share_model t({q("a", "", 6, 1), q("b", "", 4, 1)});
  t.set_capacity(gpu(10));
  t.set_request(t.at("a"), gpu(2));
  t.set_request(t.at("b"), gpu(20));
  t.compute();
  CHECK(fs(t, "a") == 2);
  CHECK(fs(t, "b") == 8);
}

TEST_CASE("kai_fair_share: oversubscription gives deserved regardless of priority") {
  kai_fair_share_model t({q("a", "", 8, 1, -1, 50), q("b", "", 8, 1, -1, 200)});
  t.set_capacity(gpu(10));
  t.set_request(t.at("a"), gpu(8));
  t.set_request(t.at("b"), gpu(8));
  t.compute();
  CHECK(fs(t, "a") == 8);
  CHECK(fs(t, "b") == 8);
}

TEST_CASE("kai_fair_share: unlimited quota deserves the demand, never more than the parent share") {
  kai_fair_share_model t({q("p", "", 4, 1), q("c", "p", -1, 1), q("d", "p", 1, 1)});
  t.set_capacity(gpu(6));
  t.set_request(t.at("c"), gpu(9));
  t.set_request(t.at("d"), gpu(1));
  t.compute();
  CHECK(fs(t, "p") == 6);
  CHECK(fs(t, "c") == 6);  // unlimited deserved, capped by the parent's 6
  CHECK(fs(t, "d") == 1);  // oversubscribed: deserved regardless
}

TEST_CASE("kai_fair_share: priority buckets, highest first") {
  kai_fair_share_model t({q("low", "", 0, 1, -1, 50), q("high", "", 0, 1, -1, 200), q("high2", "", 0, 1, -1, 200)});
  t.set_capacity(gpu(10));
  t.set_request(t.at("low"), gpu(10));
  t.set_request(t.at("high"), gpu(3));
  t.set_request(t.at("high2"), gpu(4));
  t.compute();
  CHECK(fs(t, "high") == 3);
  CHECK(fs(t, "high2") == 4);
  CHECK(fs(t, "low") == 3);
}

TEST_CASE("kai_fair_share: weight 0 never gets over quota") {
  kai_fair_share_model t({q("a", "", 1, 0), q("b", "", 1, 1)});
  t.set_capacity(gpu(10));
  t.set_request(t.at("a"), gpu(10));
  t.set_request(t.at("b"), gpu(3));
  t.compute();
  CHECK(fs(t, "a") == 1);  // only its quota; the rest stays unassigned
  CHECK(fs(t, "b") == 3);
}

TEST_CASE("kai_fair_share: remainder pass by fractional leftover, creation time, name") {
  SECTION("largest fraction first") {
    // 2 units, weights 1 and 2 -> 2/3 and 4/3: floors 0 and 1, leftovers 2/3 and 1/3 -> a gets the unit
    kai_fair_share_model t({q("a", "", 0, 1), q("b", "", 0, 2)});
    t.set_capacity(gpu(2));
    t.set_request(t.at("a"), gpu(5));
    t.set_request(t.at("b"), gpu(5));
    t.compute();
    CHECK(fs(t, "a") == 1);
    CHECK(fs(t, "b") == 1);
  }
  SECTION("equal fractions: earlier creation") {
    kai_fair_share_model t({q("a", "", 0, 1, -1, 100, 20), q("b", "", 0, 1, -1, 100, 10)});
    t.set_capacity(gpu(1));
    t.set_request(t.at("a"), gpu(5));
    t.set_request(t.at("b"), gpu(5));
    t.compute();
    CHECK(fs(t, "a") == 0);
    CHECK(fs(t, "b") == 1);
  }
  SECTION("equal fractions and creation: name") {
    kai_fair_share_model t({q("z", "", 0, 1), q("m", "", 0, 1), q("c", "", 0, 1)});
    t.set_capacity(gpu(2));
    for (auto n : {"z", "m", "c"}) t.set_request(t.at(n), gpu(5));
    t.compute();
    CHECK(fs(t, "c") == 1);
    CHECK(fs(t, "m") == 1);
    CHECK(fs(t, "z") == 0);
  }
}

TEST_CASE("kai_fair_share: limits -1 and 0 cap the requestable demand") {
  kai_fair_share_model t({q("none", "", 0, 1, 0), q("capped", "", 0, 1, 2), q("free", "", 0, 1, -1)});
  t.set_capacity(gpu(10));
  for (auto n : {"none", "capped", "free"}) t.set_request(t.at(n), gpu(10));
  t.compute();
  CHECK(fs(t, "none") == 0);
  CHECK(fs(t, "capped") == 2);
  CHECK(fs(t, "free") == 8);
  CHECK_FALSE(t.check_allocation(t.at("none"), gpu(1), true).allowed());
  CHECK(t.check_allocation(t.at("free"), gpu(10), true).allowed());
}

TEST_CASE("kai_fair_share: hierarchy divides the parent's fair share") {
  kai_fair_share_model t({q("dept", "", 4, 1), q("other", "", 4, 1), q("t1", "dept", 1, 1), q("t2", "dept", 1, 3)});
  t.set_capacity(gpu(12));
  t.set_request(t.at("t1"), gpu(20));
  t.set_request(t.at("t2"), gpu(20));
  t.set_request(t.at("other"), gpu(4));
  t.compute();
  CHECK(t.request(t.at("dept"), R::nvidia_gpu) == 40);
  CHECK(fs(t, "dept") == 8);
  CHECK(fs(t, "other") == 4);
  // 8 = 1 + 1 deserved, 6 over quota 1:3 -> 1.5 / 4.5 -> floors 1,4, fractions equal -> name t1
  CHECK(fs(t, "t1") == 3);
  CHECK(fs(t, "t2") == 5);
}

TEST_CASE("kai_fair_share: validation names the queue and lists every problem") {
  try {
    kai_fair_share_model t({q("a", "ghost", 1, 1), q("b", "c", 1, 1), q("c", "b", 1, 1), q("d", "", -5, 1, -2)});
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    std::string all;
    for (const auto& p : e.problems()) all += p.path + ": " + p.message + "\n";
    CHECK(all.find("a.spec.parentQueue: unknown parent queue 'ghost'") != std::string::npos);
    CHECK(all.find("b.spec.parentQueue: cycle") != std::string::npos);
    CHECK(all.find("c.spec.parentQueue: cycle") != std::string::npos);
    CHECK(all.find("d.spec.resources[3].quota") != std::string::npos);
    CHECK(all.find("d.spec.resources[3].limit") != std::string::npos);
  }
  SECTION("children exceeding parent: warning by default, error by policy") {
    std::vector<kai_fair_share_queue_spec> specs{q("p", "", 2, 1), q("c1", "p", 2, 1), q("c2", "p", 1, 1)};
    kai_fair_share_model t(specs);
    REQUIRE(t.warnings().size() == 1);
    CHECK(t.warnings()[0].path == "p.spec.resources");
    kai_fair_share_options o;
    o.children_exceeding_parent = kai_fair_share_oversubscription::error;
    REQUIRE_THROWS_AS(kai_fair_share_model(specs, o), validation_error);
  }
}

TEST_CASE("kai_fair_share: allocation checks walk from the leaf up, strong guarantee") {
  kai_fair_share_model t({q("p", "", 4, 1, 6), q("c", "p", 4, 1, 10)});
  const auto c = t.at("c");
  t.allocate(c, gpu(5), true);
  auto d = t.check_allocation(c, gpu(2), true);
  REQUIRE_FALSE(d.allowed());
  CHECK(d.reasons()[0].rule == "over_limit");
  CHECK(d.reasons()[0].entity == "p");
  CHECK(t.check_allocation(c, gpu(1), true).allowed());
  // non-preemptible: over quota gate on non-preemptible usage only
  t.allocate(c, gpu(1), false);
  auto n = t.check_allocation(c, gpu(1), true);
  REQUIRE_FALSE(n.allowed());  // limit 6 reached at p
  t.deallocate(c, gpu(5), true);
  CHECK(t.check_allocation(c, gpu(3), false).allowed());
  auto o = t.check_allocation(c, gpu(4), false);
  REQUIRE_FALSE(o.allowed());
  CHECK(o.reasons()[0].rule == "over_quota");
  // usage would go negative: throws, nothing changes
  REQUIRE_THROWS_AS(t.deallocate(c, gpu(2), false), state_error);
  CHECK(t.allocated(c, R::nvidia_gpu) == 1);
  CHECK(t.allocated(t.at("p"), R::nvidia_gpu) == 1);
  REQUIRE_THROWS_AS(t.at("nope"), unknown_entity_error);
}

namespace {
// a and b: quota 2, weight 1, both want 8 of 8 GPUs -> fair share 4 each;
// allocatable share max(quota, fair) = 4.
kai_fair_share_model two(amount a_alloc, amount b_alloc, kai_fair_share_options o = {}) {
  kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 1)}, o);
  t.set_capacity(gpu(8));
  t.set_request(t.at("a"), gpu(8));
  t.set_request(t.at("b"), gpu(8));
  t.compute();
  if (a_alloc) t.allocate(t.at("a"), gpu(a_alloc), true);
  if (b_alloc) t.allocate(t.at("b"), gpu(b_alloc), true);
  return t;
}
}  // namespace

TEST_CASE("kai_fair_share: maintain fair share needs the victim strictly above its allocatable share") {
  auto allow = two(0, 5);  // b 5 > 4
  REQUIRE(allow.allocatable(1, R::nvidia_gpu) == 4);
  CHECK(allow.reclaim_strategy(0, gpu(3), 1, gpu(1)) == kai_fair_share_strategy::maintain_fair_share);
  // the chunk's size does not enter the test (checked before it is subtracted)
  CHECK(allow.reclaim_strategy(0, gpu(3), 1, gpu(5)) == kai_fair_share_strategy::maintain_fair_share);
  auto deny = two(1, 4);  // b 4 == 4, and a 1 + 3 > quota 2 rules out the other strategy
  CHECK(deny.reclaim_strategy(0, gpu(3), 1, gpu(1)) == kai_fair_share_strategy::none);
}

TEST_CASE("kai_fair_share: guarantee deserved, reclaimer within quota (<=) and victim strictly above quota") {
  // b at 4 == allocatable: maintain does not apply
  SECTION("reclaimer at its quota with the job: allowed") {
    CHECK(two(0, 4).reclaim_strategy(0, gpu(2), 1, gpu(1)) == kai_fair_share_strategy::guarantee_deserved);
  }
  SECTION("reclaimer one over its quota with the job: denied") {
    CHECK(two(1, 4).reclaim_strategy(0, gpu(2), 1, gpu(1)) == kai_fair_share_strategy::none);
  }
  SECTION("victim one above its quota: allowed") {
    CHECK(two(0, 3).reclaim_strategy(0, gpu(1), 1, gpu(1)) == kai_fair_share_strategy::guarantee_deserved);
  }
  SECTION("victim at its quota: denied") {
    CHECK(two(0, 2).reclaim_strategy(0, gpu(1), 1, gpu(1)) == kai_fair_share_strategy::none);
  }
}

TEST_CASE("kai_fair_share: can_reclaim is allocated + request <= fair share, every resource") {
  CHECK(two(1, 0).can_reclaim(0, gpu(3), true));        // 4 <= 4
  CHECK_FALSE(two(1, 0).can_reclaim(0, gpu(4), true));  // 5 > 4
  // non-preemptible: non-preemptible allocated (0 here) + request <= quota
  CHECK_FALSE(two(1, 0).can_reclaim(0, gpu(3), false));  // 3 > quota 2
  CHECK(two(1, 0).can_reclaim(0, gpu(2), false));        // 2 <= quota 2
  // a resource the job does not ask for still counts (KAI compares all resources)
  kai_fair_share_queue_spec a = q("a", "", 2, 1), b = q("b", "", 2, 1);
  a.resources[R::cpu] = kai_fair_share_resource{1000, 1, -1};
  b.resources[R::cpu] = kai_fair_share_resource{1000, 1, -1};
  kai_fair_share_model t({a, b});
  t.set_capacity(resource_vector{{R::cpu, 2000}, {R::nvidia_gpu, 8}});
  t.set_request(0, resource_vector{{R::cpu, 4000}, {R::nvidia_gpu, 8}});
  t.set_request(1, resource_vector{{R::cpu, 4000}, {R::nvidia_gpu, 8}});
  t.compute();
  t.allocate(0, resource_vector{{R::cpu, 1000}}, true);
  CHECK(t.can_reclaim(0, gpu(1), true));
  t.allocate(0, resource_vector{{R::cpu, 1}}, true);  // cpu 1001 > fair share 1000
  CHECK_FALSE(t.can_reclaim(0, gpu(1), true));
  CHECK_FALSE(t.can_reclaim(0, resource_vector{{R::memory, 1}}, true));  // a resource no queue has
}

TEST_CASE("kai_fair_share: victim pre-filter as KAI") {
  // reclaimer within quota with the job: the victim must be above quota, or at quota in every asked resource
  CHECK(two(0, 3).victim_prefilter(0, 1, gpu(1)));
  CHECK(two(0, 2).victim_prefilter(0, 1, gpu(1)));  // at quota: kept (KAI)
  CHECK_FALSE(two(0, 1).victim_prefilter(0, 1, gpu(1)));
  // reclaimer beyond quota with the job: the victim must be above its allocatable share
  CHECK(two(2, 5).victim_prefilter(0, 1, gpu(1)));
  CHECK_FALSE(two(2, 4).victim_prefilter(0, 1, gpu(1)));
}

TEST_CASE("kai_fair_share: scenario validator checks each chunk before subtracting it") {
  auto t = two(1, 7);
  const auto a = t.at("a"), b = t.at("b");
  resource_vector one = gpu(1), two_ = gpu(2);
  std::vector<kai_fair_share_victim_chunk> ok{{b, &two_}, {b, &two_}};  // 7 > 4, then 5 > 4
  CHECK(t.validate_reclaim(a, gpu(2), true, ok));
  std::vector<kai_fair_share_victim_chunk> bad{{b, &two_}, {b, &two_}, {b, &one}};  // third: 3, not above 4; a 1+2 > 2
  CHECK_FALSE(t.validate_reclaim(a, gpu(2), true, bad));
  std::vector<kai_fair_share_victim_chunk> guar{{b, &two_}, {b, &two_}, {b, &one}};  // job of 1: a within quota, 3 > 2
  CHECK(t.validate_reclaim(a, gpu(1), true, guar));
  CHECK(t.allocated(b, R::nvidia_gpu) == 7);  // validator changes nothing
}

TEST_CASE("kai_fair_share: reclaim compares at the level where paths diverge") {
  kai_fair_share_model t(
      {q("x", "", 0, 1), q("y", "", 0, 1), q("x1", "x", 0, 1), q("x2", "x", 0, 1), q("y1", "y", 0, 1)});
  t.set_capacity(gpu(8));
  for (auto n : {"x1", "x2", "y1"}) t.set_request(t.at(n), gpu(8));
  t.compute();
  REQUIRE(fs(t, "x") == 4);
  REQUIRE(fs(t, "y") == 4);
  t.allocate(t.at("y1"), gpu(5), true);
  t.allocate(t.at("x2"), gpu(2), true);
  const auto d = t.diverge(t.at("x1"), t.at("y1"));
  CHECK(d.first == t.at("x"));
  CHECK(d.second == t.at("y"));
  // y as a whole holds 5 > its allocatable 4: maintain fair share
  CHECK(t.reclaim_strategy(t.at("x1"), gpu(2), t.at("y1"), gpu(1)) == kai_fair_share_strategy::maintain_fair_share);
  // a sibling in the same subtree is compared with its sibling, not with y
  CHECK(t.diverge(t.at("x1"), t.at("x2")).second == t.at("x2"));
  // x as a whole (2) is below its fair share: no cross-tree victim in x2 for a y1 job
  CHECK_FALSE(t.victim_prefilter(t.at("y1"), t.at("x2"), gpu(1)));
}

TEST_CASE("kai_fair_share: saturation multiplier at KAI's place, the sibling check") {
  // a at 4 of fair share 4 asks 2 more: saturation 6/4 = 1.5 > 1. The victim b
  // (fair share 4) must keep a saturation strictly above 1.5 x multiplier.
  auto run = [](std::int64_t num, std::int64_t den, amount b_alloc, amount chunk) {
    kai_fair_share_options o;
    o.saturation_num = num;
    o.saturation_den = den;
    auto t = two(4, b_alloc, o);
    resource_vector c = gpu(chunk);
    std::vector<kai_fair_share_victim_chunk> v{{1, &c}};
    return t.validate_reclaim(0, gpu(2), true, v);
  };
  CHECK_FALSE(run(1, 1, 8, 2));   // b left with 6: 6/4 = 1.5, not strictly lower -> denied
  CHECK(run(1, 1, 8, 1));         // b left with 7: 1.5 < 1.75
  CHECK_FALSE(run(3, 2, 11, 2));  // 1.5 x 1.5 = 2.25 >= 9/4 -> denied at the boundary
  CHECK(run(3, 2, 11, 1));        // 2.25 < 10/4
  CHECK(run(1, 2, 8, 1));         // values < 1 mean 1
  CHECK_FALSE(run(1, 2, 8, 2));
  // a reclaimer not above its fair share is never stopped by the check
  kai_fair_share_options o;
  o.saturation_num = 100;
  auto t = two(0, 8, o);
  resource_vector c = gpu(4);
  std::vector<kai_fair_share_victim_chunk> v{{1, &c}};
  CHECK(t.validate_reclaim(0, gpu(4), true, v));
  CHECK_FALSE(two(4, 8, o).can_reclaim(0, gpu(2), true));  // KAI's can_reclaim ignores the multiplier
}

TEST_CASE("kai_fair_share: saturation multiplier in can_reclaim is an option") {
  auto make = [](std::int64_t num, std::int64_t den) {
    kai_fair_share_options o;
    o.saturation_num = num;
    o.saturation_den = den;
    o.saturation_placement = kai_fair_share_saturation_placement::can_reclaim_bound;
    return two(4, 8, o);
  };
  CHECK_FALSE(make(1, 1).can_reclaim(0, gpu(2), true));
  CHECK(make(3, 2).can_reclaim(0, gpu(2), true));        // 6 <= 4 x 1.5
  CHECK_FALSE(make(3, 2).can_reclaim(0, gpu(3), true));  // 7 > 6
  CHECK_FALSE(make(1, 2).can_reclaim(0, gpu(1), true));  // 0.5 -> 1
  // the sibling check then runs with multiplier 1: b left with 7 is allowed
  auto t = make(3, 2);
  resource_vector c = gpu(1);
  std::vector<kai_fair_share_victim_chunk> v{{1, &c}};
  CHECK(t.validate_reclaim(0, gpu(2), true, v));
}

TEST_CASE("kai_fair_share: preempt needs lower priority, preemptible, past min runtime") {
  auto p = q("p", "", 4, 1);
  p.preempt_min_runtime_ms = 1000;
  auto c = q("c", "p", 4, 1);
  auto other = q("o", "", 4, 1);
  kai_fair_share_options opt;
  opt.default_min_runtime_ms = 50;
  kai_fair_share_model t({p, c, other}, opt);
  CHECK(t.min_runtime_ms(t.at("c")) == 1000);  // inherited from the parent
  CHECK(t.min_runtime_ms(t.at("o")) == 50);    // default
  const auto ci = t.at("c");
  CHECK(t.can_preempt(10, ci, 5, true, 0, 1000));
  CHECK_FALSE(t.can_preempt(10, ci, 5, true, 1, 1000));   // protected
  CHECK_FALSE(t.can_preempt(10, ci, 10, true, 0, 5000));  // equal priority
  CHECK_FALSE(t.can_preempt(10, ci, 5, false, 0, 5000));  // non-preemptible
}

TEST_CASE("kai_fair_share: queue order chain") {
  kai_fair_share_model t({q("a", "", 2, 1, -1, 100, 1), q("b", "", 2, 1, -1, 100, 2), q("c", "", 2, 1, -1, 200, 3)});
  t.set_capacity(gpu(12));
  for (auto n : {"a", "b", "c"}) t.set_request(t.at(n), gpu(4));
  t.compute();
  const auto a = t.at("a"), b = t.at("b"), c = t.at("c");
  REQUIRE(fs(t, "a") == 4);
  // nothing allocated, all starved: priority decides
  CHECK(t.queue_before(c, gpu(1), a, gpu(1)));
  // over-utilised (fair share < allocated in every resource) goes last, even with a higher priority
  t.allocate(c, gpu(5), true);
  CHECK(t.queue_before(a, gpu(1), c, gpu(1)));
  t.deallocate(c, gpu(5), true);
  // dominant share with the job, then without, then creation time
  t.allocate(a, gpu(1), true);
  t.allocate(b, gpu(1), true);
  CHECK(t.queue_before(b, gpu(1), a, gpu(2)));             // b: 1 + 1 <= quota 2 starved; a: 1 + 2 > 2 not
  CHECK(t.queue_before(b, resource_vector{}, a, gpu(1)));  // both starved: 1/4 < 2/4 with the job
  CHECK_FALSE(t.queue_before(b, gpu(1), a, gpu(1)));       // all equal: a was created first
  CHECK(t.queue_before(a, gpu(1), b, gpu(1)));
}

TEST_CASE("kai_fair_share: queue order puts starved queues first (allocated + job <= quota)") {
  // same priority; a would stay within its quota with the job, b would not
  kai_fair_share_model t({q("a", "", 2, 1, -1, 100, 5), q("b", "", 2, 1, -1, 100, 1)});
  t.set_capacity(gpu(8));
  t.set_request(0, gpu(8));
  t.set_request(1, gpu(8));
  t.compute();
  t.allocate(0, gpu(1), true);
  // a: 1 + 1 <= 2 starved; b: 0 + 3 > 2 not starved, though its dominant share is smaller
  CHECK(t.queue_before(0, gpu(1), 1, gpu(3)));
  CHECK_FALSE(t.queue_before(1, gpu(3), 0, gpu(1)));
  // boundary: a at 1 + 2 = 3 > 2 is no longer starved; both not starved -> b (smaller share with its job... 3/4 vs 3/4
  // equal; without the job 0 < 1/4) first
  CHECK(t.queue_before(1, gpu(3), 0, gpu(2)));
  // a starved lower-priority queue still goes before a non-starved higher-priority one
  kai_fair_share_model u({q("lo", "", 2, 1, -1, 50), q("hi", "", 2, 1, -1, 200)});
  u.set_capacity(gpu(8));
  u.set_request(0, gpu(8));
  u.set_request(1, gpu(8));
  u.compute();
  u.allocate(1, gpu(2), true);
  CHECK(u.queue_before(0, gpu(1), 1, gpu(1)));
}

TEST_CASE("kai_fair_share: policy adapter commits, releases and proposes victims") {
  kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 1)});
  t.set_capacity(gpu(8));
  t.set_request(t.at("a"), gpu(8));
  t.set_request(t.at("b"), gpu(8));
  t.compute();
  kai_fair_share_policy p(std::move(t));
  job b1 = mk("b1", "b", 1, gpu(4));
  job b2 = mk("b2", "b", 1, gpu(3));
  REQUIRE(p.check(b1).allowed());
  p.commit(b1);
  p.commit(b2);
  REQUIRE_THROWS_AS(p.commit(b1), state_error);
  CHECK(p.tree().allocated(p.tree().at("b"), R::nvidia_gpu) == 7);
  job a1 = mk("a1", "a", 1, gpu(2));
  std::vector<victim> out;
  p.victims(a1, out);
  // b at 7 with fair 4: taking b2 (3) leaves 4 -> maintain fair share; taking b1 (4) leaves 3 -> 2 > quota? a1 is
  // within quota 2 and b above quota -> guarantee deserved
  REQUIRE(out.size() == 2);
  CHECK(out[0].rule == "reclaim");
  job a_big = mk("a2", "a", 0, gpu(6));
  out.clear();
  p.victims(a_big, out);
  CHECK(out.empty());
  job b_hi = mk("b3", "b", 5, gpu(1));
  out.clear();
  p.victims(b_hi, out);
  CHECK(out.size() == 2);
  CHECK(out[0].rule == "preempt");
  p.release("b1");
  CHECK(p.tree().allocated(p.tree().at("b"), R::nvidia_gpu) == 3);
  REQUIRE_THROWS_AS(p.release("b1"), unknown_entity_error);
  CHECK_FALSE(p.check(mk("x", "ghost", 0, gpu(1))).allowed());
  // a commit that fails (an unknown queue) leaves no entry: the id commits afterwards
  REQUIRE_THROWS_AS(p.commit(mk("x", "ghost", 0, gpu(1))), unknown_entity_error);
  REQUIRE_THROWS_AS(p.release("x"), unknown_entity_error);
  p.commit(mk("x", "a", 0, gpu(1)));
  CHECK(p.tree().allocated(p.tree().at("a"), R::nvidia_gpu) == 1);
  p.release("x");
  CHECK(p.tree().allocated(p.tree().at("a"), R::nvidia_gpu) == 0);
}

// The policy keeps its running jobs per queue in no particular order and
// moves the last one into a released one's place: victims must not depend on
// that order, on the order of commits, or on which copy answers.
TEST_CASE("kai_fair_share: victims do not depend on commit or release order, and copies keep their own jobs") {
  auto fresh = [] {
    kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 1), q("c", "", 2, 1)});
    t.set_capacity(gpu(12));
    for (const char* n : {"a", "b", "c"}) t.set_request(t.at(n), gpu(12));
    t.compute();
    return kai_fair_share_policy(std::move(t));
  };
  std::vector<job> all;
  for (int i = 0; i < 9; ++i) all.push_back(mk("j" + std::to_string(i), i < 6 ? "b" : "c", i % 3, gpu(1)));
  const std::vector<std::string> gone{"j1", "j4", "j7"};  // the first, a middle and a last of their queues
  auto victims_of = [](const kai_fair_share_policy& p, const job& j) {
    std::vector<victim> out;
    p.victims(j, out);
    std::vector<std::string> ids;
    for (const auto& v : out) ids.push_back(v.job_id + "/" + std::string(v.rule));
    return ids;
  };
  const job asks_a = mk("new-a", "a", 0, gpu(2));
  const job asks_b = mk("new-b", "b", 9, gpu(1));  // preempts in its own queue
  auto p = fresh();
  for (const auto& j : all) p.commit(j);
  const auto before_a = victims_of(p, asks_a), before_b = victims_of(p, asks_b);
  CHECK_FALSE(before_a.empty());
  CHECK(before_b.size() == 6);
  const kai_fair_share_policy copy = p;  // keeps all nine
  for (const auto& id : gone) p.release(id);
  auto r = fresh();  // the same six jobs, committed in reverse
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (std::find(gone.begin(), gone.end(), it->id) == gone.end()) r.commit(*it);
  CHECK(victims_of(p, asks_a) == victims_of(r, asks_a));
  CHECK(victims_of(p, asks_b) == victims_of(r, asks_b));
  CHECK(victims_of(p, asks_b).size() == 4);
  CHECK(victims_of(copy, asks_a) == before_a);
  CHECK(victims_of(copy, asks_b) == before_b);
  // released jobs are gone for good; the moved ones can still be released
  for (const auto& id : gone) CHECK_THROWS_AS(p.release(id), unknown_entity_error);
  for (const auto& j : all)
    if (std::find(gone.begin(), gone.end(), j.id) == gone.end()) p.release(j.id);
  CHECK(p.tree().allocated(p.tree().at("b"), R::nvidia_gpu) == 0);
  CHECK(victims_of(p, asks_b).empty());
}

// preempt candidates are looked for only in a queue holding a preemptible
// job of lower priority than the preemptor (counts kept on every commit and
// release): after random commits and releases, the candidates equal those of
// a policy given only the running jobs.
TEST_CASE("kai_fair_share: preempt candidates after commits and releases equal those of a fresh policy") {
  auto fresh = [] {
    kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 1)});
    t.set_capacity(gpu(64));
    for (const char* n : {"a", "b"}) t.set_request(t.at(n), gpu(64));
    t.compute();
    return kai_fair_share_policy(std::move(t));
  };
  {
    // a lower-priority preemptible job is found beside higher ones, and not once it is gone
    auto p = fresh();
    const auto ask = [&](std::int32_t prio) {
      std::vector<victim> v;
      p.node_candidates(mk("new", "a", prio, gpu(1)), v);
      std::vector<std::string> ids;
      for (const auto& x : v) ids.push_back(x.job_id);
      return ids;
    };
    p.commit(mk("p3", "a", 3, gpu(1)));
    p.commit(mk("p0", "a", 0, gpu(1)));
    job pinned = mk("pinned", "a", 0, gpu(1));
    pinned.preemptible = false;
    p.commit(pinned);
    CHECK(ask(2) == std::vector<std::string>{"p0"});
    p.release("p0");
    CHECK(ask(2).empty());
    p.commit(mk("p1", "a", 1, gpu(1)));
    p.release("p3");
    CHECK(ask(2) == std::vector<std::string>{"p1"});
    CHECK(ask(1).empty());
  }
  std::mt19937_64 rng(20261128);
  auto p = fresh();
  std::vector<job> live;
  std::size_t compared = 0, named = 0;
  for (int step = 0; step < 300; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      const auto k = static_cast<std::size_t>(rng() % live.size());
      p.release(live[k].id);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      job j = mk("j" + std::to_string(step), rng() % 2 == 0 ? "a" : "b", static_cast<std::int32_t>(rng() % 4), gpu(1));
      j.preemptible = rng() % 4 != 0;
      p.commit(j);
      live.push_back(j);
    }
    auto r = fresh();
    for (auto it = live.rbegin(); it != live.rend(); ++it) r.commit(*it);
    for (const char* queue : {"a", "b"}) {
      const job asks = mk("new", queue, static_cast<std::int32_t>(rng() % 5), gpu(1));
      std::vector<victim> got, want;
      p.node_candidates(asks, got);
      r.node_candidates(asks, want);
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].job_id == want[i].job_id);
      ++compared;
      named += got.size();
    }
  }
  CHECK(compared == 600);
  CHECK(named > 100);
}

TEST_CASE("kai_fair_share: a copy's running jobs are its own after the original reuses its entries") {
  kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 1)});
  t.set_capacity(gpu(12));
  for (const char* n : {"a", "b"}) t.set_request(t.at(n), gpu(12));
  t.compute();
  kai_fair_share_policy p(std::move(t));
  auto ids_of = [](const kai_fair_share_policy& x, const job& j) {
    std::vector<victim> out;
    x.node_candidates(j, out);
    std::vector<std::string> ids;
    for (const auto& v : out) ids.push_back(v.job_id);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  // long ids: the original's spare entries keep them until new jobs overwrite them
  const std::string pre = "a-job-id-longer-than-any-short-string-";
  for (int i = 0; i < 4; ++i) p.commit(mk(pre + std::to_string(i), "b", 0, gpu(1)));
  const kai_fair_share_policy copy = p;
  kai_fair_share_policy assigned(kai_fair_share_model({q("b", "", 1, 1)}));
  assigned = p;
  for (int i = 0; i < 4; ++i) p.release(pre + std::to_string(i));
  for (int i = 0; i < 4; ++i) p.commit(mk("other-" + pre + std::to_string(i), "b", 0, gpu(1)));
  const job asks = mk("new", "b", 9, gpu(1));
  const std::vector<std::string> mine{pre + "0", pre + "1", pre + "2", pre + "3"};
  CHECK(ids_of(copy, asks) == mine);
  CHECK(ids_of(assigned, asks) == mine);
  // the first job's release moves the last one into its place: both stay releasable
  kai_fair_share_policy c = copy;
  c.release(pre + "0");
  c.release(pre + "3");
  CHECK(ids_of(c, asks) == std::vector<std::string>{pre + "1", pre + "2"});
  CHECK(ids_of(p, asks).size() == 4);
}

TEST_CASE("kai_fair_share: randomized invariants") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<kai_fair_share_queue_spec> specs;
    const int tops = 2 + static_cast<int>(rng() % 3);
    for (int i = 0; i < tops; ++i) {
      specs.push_back(q("t" + std::to_string(i), "", static_cast<amount>(rng() % 5) - (rng() % 7 == 0 ? 1 : 0),
                        static_cast<amount>(rng() % 4), rng() % 3 == 0 ? static_cast<amount>(rng() % 20) : -1,
                        static_cast<std::int32_t>(rng() % 3) * 50, static_cast<std::int64_t>(rng() % 5)));
      if (specs.back().resources[R::nvidia_gpu].limit >= 0 && specs.back().resources[R::nvidia_gpu].quota >= 0)
        specs.back().resources[R::nvidia_gpu].quota =
            std::min(specs.back().resources[R::nvidia_gpu].quota, specs.back().resources[R::nvidia_gpu].limit);
      const int kids = static_cast<int>(rng() % 4);
      for (int k = 0; k < kids; ++k)
        specs.push_back(q("t" + std::to_string(i) + "-" + std::to_string(k), "t" + std::to_string(i),
                          static_cast<amount>(rng() % 3), static_cast<amount>(rng() % 4), -1,
                          static_cast<std::int32_t>(rng() % 3) * 50, static_cast<std::int64_t>(rng() % 5)));
    }
    const amount cap = static_cast<amount>(rng() % 40);
    std::vector<amount> req(specs.size());
    for (auto& r : req) r = static_cast<amount>(rng() % 15);
    auto run = [&](std::vector<std::size_t> perm) {
      std::vector<kai_fair_share_queue_spec> s;
      for (auto i : perm) s.push_back(specs[i]);
      kai_fair_share_model t(s);
      t.set_capacity(gpu(cap));
      for (auto i : perm)
        if (t.is_leaf(t.at(specs[i].name))) t.set_request(t.at(specs[i].name), gpu(req[i]));
      t.compute();
      return t;
    };
    std::vector<std::size_t> perm(specs.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    const auto t = run(perm);
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto u = run(perm);
    for (const auto& s : specs) REQUIRE(fs(t, s.name) == fs(u, s.name));  // input order does not matter
    // per sibling set: over quota sums within what the parent had; priority rule; demand cap
    auto check_set = [&](const std::vector<std::size_t>& sibs, amount total) {
      amount deserved = 0, sum = 0;
      for (auto c : sibs) {
        const auto& spec = t.spec(c);
        const auto& r = spec.resources.at(R::nvidia_gpu);
        const amount want = std::min(r.limit < 0 ? amount{1} << 60 : r.limit, t.request(c, R::nvidia_gpu));
        const amount f = t.fair_share(c, R::nvidia_gpu);
        const amount d = std::min({r.quota < 0 ? amount{1} << 60 : r.quota, want, total});
        REQUIRE(f >= d);
        REQUIRE(f <= std::max(want, d));
        if (r.over_quota_weight == 0) REQUIRE(f == d);
        deserved += d, sum += f;
      }
      REQUIRE(sum - deserved <= std::max<amount>(0, total - deserved));
      for (auto c : sibs)
        for (auto h : sibs) {
          if (t.spec(h).priority <= t.spec(c).priority) continue;
          const auto& rh = t.spec(h).resources.at(R::nvidia_gpu);
          const amount wanth = std::min(rh.limit < 0 ? amount{1} << 60 : rh.limit, t.request(h, R::nvidia_gpu));
          const auto& rc = t.spec(c).resources.at(R::nvidia_gpu);
          const amount dc = std::min({rc.quota < 0 ? amount{1} << 60 : rc.quota,
                                      rc.limit < 0 ? amount{1} << 60 : rc.limit, t.request(c, R::nvidia_gpu), total});
          if (t.fair_share(c, R::nvidia_gpu) > dc && rh.over_quota_weight > 0)
            REQUIRE(t.fair_share(h, R::nvidia_gpu) >= wanth);
        }
    };
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.parent(i) == kai_fair_share_model::npos) roots.push_back(i);
    check_set(roots, cap);
    for (std::size_t p = 0; p < t.size(); ++p) {
      std::vector<std::size_t> kids;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.parent(i) == p) kids.push_back(i);
      if (!kids.empty()) check_set(kids, t.fair_share(p, R::nvidia_gpu));
    }
  }
}

TEST_CASE("kai_fair_share: KAI Queue JSON loader with units and hierarchy") {
  resource_registry reg;
  reg.intern("run.ai/gpu-milli", 3);  // milli-GPUs so that 1.5 devices is exact
  kai_fair_share_json_options o;
  o.gpu_resource = "run.ai/gpu-milli";
  const auto doc = load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/kai_fair_share/queues.json");
  kai_fair_share_model t(load_kai_fair_share_queues(doc, reg, o));
  const auto g = reg.at("run.ai/gpu-milli");
  const auto b = t.at("team-b");
  CHECK(t.spec(b).parent == "research");
  CHECK(t.spec(b).priority == 100);
  CHECK(t.spec(t.at("team-a")).priority == 200);
  CHECK(t.quota(b, g) == 1500);
  CHECK(t.quota(b, R::cpu) == -1);
  CHECK(t.quota(b, R::memory) == 1024LL * 1000000);
  CHECK(t.limit(t.at("team-a"), g) == 6000);
  CHECK(t.quota(t.at("prod"), R::cpu) == 8000);
  resource_vector cap{{R::cpu, 16000}, {R::memory, 8192LL * 1000000}, {g, 12000}};
  t.set_capacity(cap);
  t.set_request(t.at("team-a"), resource_vector{{g, 10000}});
  t.set_request(t.at("team-b"), resource_vector{{g, 10000}});
  t.set_request(t.at("prod"), resource_vector{{g, 5000}});
  t.compute();
  // prod deserved 4, research deserved 4; 4 left: research weight 2 wants more, prod wants 1 (weight 1)
  // -> pool 4 split 2:1 = 2666.67 / 1333.33: prod capped at 1000, research gets 3000
  CHECK(t.fair_share(t.at("prod"), g) == 5000);
  CHECK(t.fair_share(t.at("research"), g) == 7000);
  // team-a priority 200 takes over-quota first, but its limit is 6 GPUs
  CHECK(t.fair_share(t.at("team-a"), g) == 5500);
  CHECK(t.fair_share(b, g) == 1500);
}

TEST_CASE("kai_fair_share: JSON loader errors name the queue and field, registry unchanged") {
  resource_registry reg;
  const auto before = reg.size();
  const auto doc = parse_json_text(R"({"kind":"QueueList","items":[
    {"metadata":{"name":"q1"},"spec":{"resources":{"gpu":{"quota":-2},"example.com/fpga":{"quota":1}}}},
    {"metadata":{"name":"q2"},"spec":{"resources":{"gpu":{"quota":0.5}}}}]})");
  try {
    (void)load_kai_fair_share_queues(doc, reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].path == "q1.spec.resources.gpu.quota");
    CHECK(e.problems()[1].path == "q2.spec.resources.gpu.quota");
  }
  CHECK(reg.size() == before);
  CHECK_FALSE(reg.find("example.com/fpga").has_value());
  REQUIRE_THROWS_AS(load_kai_fair_share_queues(parse_json_text(R"({"kind":"Queue","spec":{}})"), reg), parse_error);
}

TEST_CASE("kai_fair_share: creationTimestamp is read and breaks queue-order ties; a bad one names the queue") {
  resource_registry reg;
  const json doc = json::parse(R"([
    {"metadata": {"name": "root"}, "spec": {"resources": {"gpu": {"quota": -1, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "b-old", "creationTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"parentQueue": "root", "resources": {"gpu": {"quota": 2, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "a-new", "creationTimestamp": "2026-03-01T00:00:00Z"},
     "spec": {"parentQueue": "root", "resources": {"gpu": {"quota": 2, "overQuotaWeight": 1, "limit": -1}}}}
  ])");
  kai_fair_share_model t(load_kai_fair_share_queues(doc, reg));
  CHECK(t.spec(t.at("b-old")).created_ms == 1767225600000);
  t.set_capacity(resource_vector{{R::nvidia_gpu, 8}});
  t.compute();
  // everything else equal: the older queue first, although its name sorts last
  CHECK(t.queue_before(t.at("b-old"), resource_vector{{R::nvidia_gpu, 1}}, t.at("a-new"),
                       resource_vector{{R::nvidia_gpu, 1}}));
  const json bad = json::parse(R"([{"metadata": {"name": "q", "creationTimestamp": "yesterday"}, "spec": {}}])");
  try {
    (void)load_kai_fair_share_queues(bad, reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "q.metadata.creationTimestamp");
  }
}

// Verified against KAI: pkg/apis/scheduling/v2/resources.go (plain float64 fields,
// no kubebuilder default, so an omitted field is 0), docs/queues/README.md
// ("limit 0 or unset: no additional resources allowed", "-1: no limit") and
// capacity_policy/max_allowed_check.go (only -1 skips the limit check; a zero
// request on a resource is never over the limit).
TEST_CASE("kai_fair_share: KAI Queue without limit is capped at zero, -1 is unlimited") {
  resource_registry reg;
  const json doc = json::parse(R"([
    {"metadata": {"name": "unset"}, "spec": {"resources": {"gpu": {"quota": 2, "overQuotaWeight": 1}}}},
    {"metadata": {"name": "open"},
     "spec": {"resources": {"gpu": {"quota": 2, "overQuotaWeight": 1, "limit": -1}}}}
  ])");
  kai_fair_share_model t(load_kai_fair_share_queues(doc, reg));
  // quota 2 over limit 0 is accepted (as KAI does) with a warning naming the queue
  REQUIRE(t.warnings().size() == 1);
  CHECK(t.warnings()[0].path.rfind("unset.spec.resources", 0) == 0);
  CHECK(t.limit(t.at("unset"), R::nvidia_gpu) == 0);
  CHECK(t.limit(t.at("open"), R::nvidia_gpu) == -1);
  t.set_capacity(gpu(8));
  t.set_request(t.at("unset"), gpu(4));
  t.set_request(t.at("open"), gpu(4));
  t.compute();
  CHECK(fs(t, "unset") == 0);  // limit 0 caps even the deserved quota
  CHECK(fs(t, "open") == 4);
  CHECK_FALSE(t.check_allocation(t.at("unset"), gpu(1), true).allowed());
  CHECK(t.check_allocation(t.at("open"), gpu(4), true).allowed());
  // a request that does not touch the capped resource is not over the limit
  CHECK(t.check_allocation(t.at("unset"), resource_vector{}, true).allowed());
}

TEST_CASE("kai_fair_share: deny beyond capacity is opt-in and leads to reclaim victims") {
  kai_fair_share_model t({q("a", "", 2, 1), q("b", "", 2, 3)});
  t.set_capacity(gpu(8));
  t.set_request(t.at("a"), gpu(8));
  t.set_request(t.at("b"), gpu(5));
  t.compute();
  CHECK(fs(t, "a") == 3);  // 2 deserved + 4 spare split 1:3
  CHECK(fs(t, "b") == 5);
  CHECK(t.capacity(R::nvidia_gpu) == 8);
  kai_fair_share_policy p(std::move(t));
  for (int i = 0; i < 8; ++i) p.commit(mk("a" + std::to_string(i), "a", 0, gpu(1)));
  const job b = mk("b0", "b", 0, gpu(1));
  CHECK(p.check(b).allowed());  // default: the cluster is the host's business
  p.set_deny_beyond_capacity(true);
  const auto d = p.check(b);
  REQUIRE_FALSE(d.allowed());
  CHECK(d.reasons()[0].rule == "cluster_full");
  CHECK(d.reasons()[0].used == 8);
  CHECK(d.reasons()[0].limit == 8);
  std::vector<victim> out;
  p.victims(b, out);
  // a is 5 over its fair share of 3: five jobs keep a above its allocatable
  // share (maintain fair share), a sixth leaves a at 3 > quota 2 (guarantee
  // deserved); a seventh would leave a at its quota
  CHECK(out.size() == 6);
  for (const auto& v : out) CHECK(v.rule == "reclaim");
  p.release("a0");
  CHECK(p.check(b).allowed());
}

// KAI reclaimable.go CanReclaimResources compares the reclaimer's own queue
// only; a parent that holds the whole cluster does not block reclaim.
TEST_CASE("kai_fair_share: can_reclaim looks at the reclaimer's leaf queue only") {
  kai_fair_share_model t({q("root", "", -1, 1), q("a", "root", 2, 1), q("b", "root", 2, 3)});
  t.set_capacity(gpu(8));
  t.set_request(t.at("a"), gpu(8));
  t.set_request(t.at("b"), gpu(5));
  t.compute();
  CHECK(fs(t, "root") == 8);
  t.allocate(t.at("a"), gpu(8), true);  // root now at its fair share
  CHECK(t.can_reclaim(t.at("b"), gpu(1), true));
  CHECK(t.can_reclaim(t.at("b"), gpu(5), true));
  CHECK_FALSE(t.can_reclaim(t.at("b"), gpu(6), true));  // b's fair share is 5
  CHECK_FALSE(t.can_reclaim(t.at("a"), gpu(1), true));
}

TEST_CASE("kai_fair_share: reclaim victims in KAI's victim-queue order") {
  // r deserves 4; x and y deserve 1 and get 1 over quota each: fair share 2
  kai_fair_share_model t({q("r", "", 4, 1), q("x", "", 1, 1), q("y", "", 1, 1)});
  t.set_capacity(gpu(8));
  for (auto n : {"r", "x", "y"}) t.set_request(t.at(n), gpu(4));
  t.compute();
  REQUIRE(fs(t, "x") == 2);
  REQUIRE(fs(t, "y") == 2);
  kai_fair_share_policy p(std::move(t));
  auto at = [](job j, std::int64_t created) {
    j.created_ms = created;
    j.preemptible = true;
    return j;
  };
  p.commit(at(mk("x1", "x", 1, gpu(1)), 0));
  p.commit(at(mk("x2", "x", 1, gpu(1)), 5));
  p.commit(at(mk("x3", "x", 0, gpu(1)), 1));
  p.commit(at(mk("y1", "y", 0, gpu(2)), 0));
  p.commit(at(mk("y2", "y", 0, gpu(2)), 3));
  std::vector<victim> out;
  p.victims(at(mk("r1", "r", 0, gpu(1)), 9), out);
  // 1. y (4/2) goes after x (3/2) in queue order: y's newest job y2 first
  // 2. with y2 taken, x's share with its next victim is 1, y's 0: x3 (lowest priority)
  // 3. x again: of x1 and x2 (same priority) the later created x2
  // 4. equal shares with the next victims, x smaller without: y1
  // x1 would leave x at its quota 1: no strategy, not proposed
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  CHECK(ids == std::vector<std::string>{"y2", "x3", "x2", "y1"});
  for (const auto& v : out) CHECK(v.rule == "reclaim");
}

TEST_CASE("kai_fair_share: preempt victims lowest priority first, then newest") {
  kai_fair_share_model t({q("a", "", 8, 1)});
  t.set_capacity(gpu(8));
  t.set_request(0, gpu(8));
  t.compute();
  kai_fair_share_policy p(std::move(t));
  auto at = [](job j, std::int64_t created, bool pre = true) {
    j.created_ms = created;
    j.preemptible = pre;
    return j;
  };
  p.commit(at(mk("p3-old", "a", 3, gpu(1)), 0));
  p.commit(at(mk("p3-new", "a", 3, gpu(1)), 7));
  p.commit(at(mk("p1", "a", 1, gpu(1)), 2));
  p.commit(at(mk("p5", "a", 5, gpu(1)), 1));         // equal priority: not a victim
  p.commit(at(mk("np", "a", 0, gpu(1)), 1, false));  // not preemptible
  p.set_now_ms(100);
  std::vector<victim> out;
  p.victims(at(mk("hi", "a", 5, gpu(1)), 50), out);
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  CHECK(ids == std::vector<std::string>{"p1", "p3-new", "p3-old"});
}

TEST_CASE("kai_fair_share: historical usage, off by default and with k = 0") {
  auto run = [](std::int64_t k) {
    kai_fair_share_options o;
    o.usage_k_num = k;
    kai_fair_share_model t({q("a", "", 0, 1), q("b", "", 0, 1)}, o);
    t.set_capacity(gpu(10));
    t.set_request(0, gpu(10));
    t.set_request(1, gpu(10));
    t.set_usage(0, gpu(6));
    t.set_usage_total(gpu(10));
    t.compute();
    return std::pair{fs(t, "a"), fs(t, "b")};
  };
  CHECK(run(0) == std::pair<amount, amount>{5, 5});
  CHECK(run(-3) == std::pair<amount, amount>{5, 5});  // k <= 0 means 0 (KAI)
  // k = 1 with no usage at all: the weights scale together, nothing changes
  kai_fair_share_options o;
  o.usage_k_num = 1;
  kai_fair_share_model t({q("a", "", 0, 1), q("b", "", 0, 1)}, o);
  t.set_capacity(gpu(10));
  t.set_request(0, gpu(10));
  t.set_request(1, gpu(10));
  t.set_usage_total(gpu(10));
  t.compute();
  CHECK(fs(t, "a") == 5);
  CHECK(fs(t, "b") == 5);
}

TEST_CASE("kai_fair_share: historical usage lowers the over-quota share of a heavy past user") {
  auto make = [](std::int64_t kn, std::int64_t kd, amount used_a) {
    kai_fair_share_options o;
    o.usage_k_num = kn;
    o.usage_k_den = kd;
    kai_fair_share_model t({q("a", "", 1, 1), q("b", "", 1, 1)}, o);
    t.set_capacity(gpu(12));
    t.set_request(0, gpu(12));
    t.set_request(1, gpu(12));
    t.set_usage(0, gpu(used_a));
    t.set_usage_total(gpu(10));
    t.compute();
    return t;
  };
  // k = 1, a used 6/10 of the window, b nothing: weights 1/2 + (1/2 - 6/10) = 2/5
  // and 1/2 + 1/2 = 1; 10 over quota -> 10 x 2/7 = 2.86 and 7.14: floors 2 and 7,
  // the unit left goes to the larger fraction (a): a 1 + 3, b 1 + 7
  auto t = make(1, 1, 6);
  CHECK(fs(t, "a") == 4);
  CHECK(fs(t, "b") == 8);
  // the deserved part is not touched: a used the whole window, weight max(0, 1/2 - 1/2) = 0
  auto u = make(1, 1, 10);
  CHECK(fs(u, "a") == 1);
  CHECK(fs(u, "b") == 11);
  // k = 1/2: weights 1/2 + (1/2)(1/2 - 3/5) = 9/20 and 3/4 -> 10 x 9/24 = 3.75, 6.25 -> 3 + 1 and 6
  auto w = make(1, 2, 6);
  CHECK(fs(w, "a") == 5);
  CHECK(fs(w, "b") == 7);
  // parents sum their children's usage
  kai_fair_share_model p({q("p", "", 0, 1), q("c1", "p", 0, 1), q("c2", "p", 0, 1)});
  p.set_usage(1, gpu(3));
  p.set_usage(2, gpu(4));
  CHECK(p.usage(0, R::nvidia_gpu) == 7);
}

TEST_CASE("kai_fair_share: historical usage weights are recomputed every round") {
  // 9 over quota; a wants 1, b and c want 100; b used 3/9 of the window, k = 1.
  // Round 1 (W = 3): weights 2/3, 1/3, 2/3 -> a is satisfied with 1 (share 3.6),
  // b gets floor(1.8) = 1, c floor(3.6) = 3. Round 2 (W = 2, 4 left): weights
  // 1/2 + (1/2 - 1/3) = 2/3 and 1 -> 1.6 and 2.4: b 1, c 2; the last unit goes
  // to b's larger leftover (0.6 > 0.4): a 1, b 3, c 5.
  kai_fair_share_options o;
  o.usage_k_num = 1;
  kai_fair_share_model t({q("a", "", 0, 1), q("b", "", 0, 1), q("c", "", 0, 1)}, o);
  t.set_capacity(gpu(9));
  t.set_request(0, gpu(1));
  t.set_request(1, gpu(100));
  t.set_request(2, gpu(100));
  t.set_usage(1, gpu(3));
  t.set_usage_total(gpu(9));
  t.compute();
  CHECK(fs(t, "a") == 1);
  CHECK(fs(t, "b") == 3);
  CHECK(fs(t, "c") == 5);
}

TEST_CASE("kai_fair_share: historical usage overflow is an error and changes nothing") {
  kai_fair_share_options o;
  o.usage_k_num = 1;
  kai_fair_share_model t({q("a", "", 0, 1000), q("b", "", 0, 1)}, o);
  t.set_usage_total(gpu(10));
  REQUIRE_THROWS_AS(t.set_usage_total(gpu(amount{1} << 60)), overflow_error);
  t.set_capacity(gpu(11));
  t.set_request(0, gpu(100));
  t.set_request(1, gpu(100));
  t.compute();
  CHECK(fs(t, "a") + fs(t, "b") == 11);  // the earlier total (10) still applies, no usage -> by weight
  CHECK(fs(t, "a") == 11);
}

TEST_CASE("kai_fair_share: randomized invariants with historical usage") {
  // With usage, KAI's share weights can all drop to 0 in a bucket, so the
  // priority rule does not hold; the others do.
  std::mt19937_64 rng(777);
  for (int round = 0; round < 200; ++round) {
    std::vector<kai_fair_share_queue_spec> specs;
    const int tops = 2 + static_cast<int>(rng() % 3);
    for (int i = 0; i < tops; ++i) {
      specs.push_back(q("t" + std::to_string(i), "", static_cast<amount>(rng() % 5), static_cast<amount>(rng() % 4), -1,
                        static_cast<std::int32_t>(rng() % 2) * 50, static_cast<std::int64_t>(rng() % 5)));
      const int kids = static_cast<int>(rng() % 4);
      for (int k = 0; k < kids; ++k)
        specs.push_back(q("t" + std::to_string(i) + "-" + std::to_string(k), "t" + std::to_string(i),
                          static_cast<amount>(rng() % 3), static_cast<amount>(rng() % 4),
                          rng() % 4 == 0 ? static_cast<amount>(rng() % 10) : -1,
                          static_cast<std::int32_t>(rng() % 2) * 50, static_cast<std::int64_t>(rng() % 5)));
    }
    const amount cap = static_cast<amount>(rng() % 40), window = 1 + static_cast<amount>(rng() % 100);
    std::vector<amount> req(specs.size()), used(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i)
      req[i] = static_cast<amount>(rng() % 15),
      used[i] = static_cast<amount>(rng() % static_cast<std::uint64_t>(window));
    kai_fair_share_options o;
    o.usage_k_num = 1 + static_cast<std::int64_t>(rng() % 3);
    o.usage_k_den = 1 + static_cast<std::int64_t>(rng() % 2);
    auto run = [&](std::vector<std::size_t> perm) {
      std::vector<kai_fair_share_queue_spec> s;
      for (auto i : perm) s.push_back(specs[i]);
      kai_fair_share_model t(s, o);
      t.set_capacity(gpu(cap));
      t.set_usage_total(gpu(window * 3));
      for (auto i : perm)
        if (t.is_leaf(t.at(specs[i].name))) {
          t.set_request(t.at(specs[i].name), gpu(req[i]));
          t.set_usage(t.at(specs[i].name), gpu(used[i]));
        }
      t.compute();
      return t;
    };
    std::vector<std::size_t> perm(specs.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    const auto t = run(perm);
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto u = run(perm);
    for (const auto& s : specs) REQUIRE(fs(t, s.name) == fs(u, s.name));
    auto check_set = [&](const std::vector<std::size_t>& sibs, amount total) {
      amount sum = 0;
      for (auto c : sibs) {
        const auto& r = t.spec(c).resources.at(R::nvidia_gpu);
        const amount want = std::min(r.limit < 0 ? amount{1} << 60 : r.limit, t.request(c, R::nvidia_gpu));
        const amount d = std::min({r.quota, want, total});
        const amount f = t.fair_share(c, R::nvidia_gpu);
        REQUIRE(f >= d);
        REQUIRE(f <= std::max(want, d));
        if (r.over_quota_weight == 0) REQUIRE(f == d);
        sum += f;
      }
      amount deserved = 0;
      for (auto c : sibs) {
        const auto& r = t.spec(c).resources.at(R::nvidia_gpu);
        deserved +=
            std::min({r.quota, std::min(r.limit < 0 ? amount{1} << 60 : r.limit, t.request(c, R::nvidia_gpu)), total});
      }
      REQUIRE(sum - deserved <= std::max<amount>(0, total - deserved));
    };
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.parent(i) == kai_fair_share_model::npos) roots.push_back(i);
    check_set(roots, cap);
    for (std::size_t p = 0; p < t.size(); ++p) {
      std::vector<std::size_t> kids;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.parent(i) == p) kids.push_back(i);
      if (!kids.empty()) check_set(kids, t.fair_share(p, R::nvidia_gpu));
    }
  }
}

TEST_CASE("kai_fair_share: remainder pass per bucket (default) or after all buckets (KAI compatibility)") {
  // 5 units over quota; three high-priority queues of weight 1 get floor(5/3) = 1
  // each in their round, 2 units are left as fractions
  auto run = [](bool kai) {
    kai_fair_share_options o;
    o.remainder_after_all_buckets = kai;
    kai_fair_share_model t({q("h1", "", 0, 1, -1, 200, 1), q("h2", "", 0, 1, -1, 200, 2), q("h3", "", 0, 1, -1, 200, 3),
                            q("low", "", 0, 1, -1, 100, 0)},
                           o);
    t.set_capacity(gpu(5));
    for (std::size_t i = 0; i < 4; ++i) t.set_request(i, gpu(100));
    t.compute();
    return std::vector<amount>{fs(t, "h1"), fs(t, "h2"), fs(t, "h3"), fs(t, "low")};
  };
  // default: the high bucket's remainder pass, equal fractions -> earlier creation
  CHECK(run(false) == std::vector<amount>{2, 2, 1, 0});
  // KAI: the 2 units go to the low bucket's round first
  CHECK(run(true) == std::vector<amount>{1, 1, 1, 2});
}

TEST_CASE("kai_fair_share: no preempt victims for a non-preemptible job over quota") {
  kai_fair_share_model t({q("a", "", 2, 1)});
  t.set_capacity(gpu(8));
  t.set_request(0, gpu(8));
  t.compute();
  kai_fair_share_policy p(std::move(t));
  job low = mk("low", "a", 1, gpu(4));
  low.preemptible = true;
  p.commit(low);
  job hi = mk("hi", "a", 5, gpu(2));
  hi.preemptible = false;
  std::vector<victim> out;
  p.victims(hi, out);  // 0 + 2 <= quota 2
  CHECK(out.size() == 1);
  hi.request = gpu(3);  // 0 + 3 > quota 2: preempting cannot help
  out.clear();
  p.victims(hi, out);
  CHECK(out.empty());
}

TEST_CASE("kai_fair_share: queues that name no resource divide nothing, and every share is 0") {
  // found by kai_fair_share_json_fuzz: Queues whose spec.resources key is misspelt
  kai_fair_share_queue_spec parent, child;
  parent.name = "research";
  child.name = "team-a";
  child.parent = "research";
  kai_fair_share_model t({parent, child});
  CHECK(t.resources().empty());
  t.set_capacity(gpu(8));
  t.set_request(t.at("team-a"), gpu(4));
  t.compute();
  CHECK(fs(t, "research") == 0);
  CHECK(fs(t, "team-a") == 0);
}

// KAI (actions/utils/job_order_by_queue.go, framework/session_plugins.go
// JobOrderFn): inside a victim queue the job order is reversed, and the last
// tie-break of the job order is the UID ascending, so among jobs of equal
// priority and creation the larger UID is evicted first.
TEST_CASE("kai_fair_share: upstream victims break equal priority and creation by the larger id first") {
  kai_fair_share_model t({q("a", "", 4, 1), q("b", "", 4, 1)});
  t.set_capacity(gpu(8));
  t.set_request(t.at("a"), gpu(1));
  t.set_request(t.at("b"), gpu(8));
  t.compute();
  REQUIRE(fs(t, "a") == 1);
  REQUIRE(fs(t, "b") == 7);
  kai_fair_share_policy p(std::move(t));
  p.commit(mk("b-big", "b", 0, gpu(4)));
  p.commit(mk("b-other", "b", 0, gpu(3)));
  p.commit(mk("b-small", "b", 0, gpu(1)));
  std::vector<victim> out;
  p.victims(mk("a1", "a", 0, gpu(1)), out);
  // b holds 8 > 7: the first chunk is allowed whichever it is; KAI's order
  // puts b-small (largest UID) first, so a host that evicts in order until the
  // job fits takes the 1-GPU job, not the 4-GPU one
  REQUIRE_FALSE(out.empty());
  CHECK(out[0].job_id == "b-small");
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  // b-small leaves 7 (not above 7, but above quota 4: guarantee deserved),
  // b-other leaves 4, b-big would take b from 4, at its quota: no strategy
  CHECK(ids == std::vector<std::string>{"b-small", "b-other"});
}

// KAI accumulates victims (actions/common/solvers/pod_scenario_builder.go):
// every scenario holds all the victims popped so far, so once a scenario
// fails the reclaim check (reclaimable.go), every larger one fails too and
// no victim after it can be taken.
TEST_CASE("kai_fair_share: upstream victims stop at the first victim the reclaim check refuses") {
  // 9 GPUs; a deserves 2 and asks 2; c deserves 2, asks 3; d deserves 1, asks 4:
  // deserved 2 + 2 + 1, the 4 spare to c (1, satisfied) and d (3): c 3, d 4
  kai_fair_share_model t({q("a", "", 2, 1), q("c", "", 2, 1), q("d", "", 1, 1)});
  t.set_capacity(gpu(9));
  t.set_request(t.at("a"), gpu(2));
  t.set_request(t.at("c"), gpu(3));
  t.set_request(t.at("d"), gpu(4));
  t.compute();
  REQUIRE(fs(t, "c") == 3);
  REQUIRE(fs(t, "d") == 4);
  kai_fair_share_policy p(std::move(t));
  for (auto id : {"c1", "c2", "c3"}) p.commit(mk(id, "c", 0, gpu(1)));
  for (auto id : {"d1", "d2"}) p.commit(mk(id, "d", 0, gpu(1)));
  std::vector<victim> out;
  p.victims(mk("a1", "a", 0, gpu(1)), out);
  std::vector<std::string> ids;
  for (const auto& v : out) ids.push_back(v.job_id);
  // c with its next victim out has the larger share (2/3 against d's 1/4):
  // c3 first (c at 3, above its quota 2: guarantee deserved). c is still
  // ahead (1/3 against 1/4): c2, but c is now at its quota and at its
  // allocatable share: refused. KAI keeps c2 in every later scenario, so d1,
  // which alone would be allowed (d 2 > quota 1), is never taken.
  CHECK(ids == std::vector<std::string>{"c3"});
}

namespace {
// upstream mode with the GPU counted in thousandths (KAI's whole unit = 1000)
kai_fair_share_options kai_milli() {
  kai_fair_share_options o;
  o.upstream = true;
  o.whole_units = {{R::nvidia_gpu, 1000}};
  return o;
}
}  // namespace

// KAI (resource_division.go, getResourceToGiveInCurrentRound and
// divideRemainingResource): a queue whose share does not cover its want gets
// math.Floor of the share in the resource's own unit (whole GPUs); the
// remainder passes run after every bucket and give min(1, left) per queue.
TEST_CASE("kai_fair_share: upstream rounds to whole units with fractional totals") {
  // 3.5 GPUs over quota; two priority-200 queues and one priority-100 queue, all want 5
  auto make = [](kai_fair_share_options o) {
    kai_fair_share_model t(
        {q("high1", "", 0, 1, -1, 200, 1), q("high2", "", 0, 1, -1, 200, 2), q("low", "", 0, 1, -1, 100)}, o);
    t.set_capacity(gpu(3500));
    for (auto n : {"high1", "high2", "low"}) t.set_request(t.at(n), gpu(5000));
    t.compute();
    return t;
  };
  SECTION("upstream: 1.75 each floors to 1, the 1.5 left gives low a whole GPU") {
    const auto t = make(kai_milli());
    // low's round: 1.5 -> 1, fraction 0.5; remainders, bucket 200 first: both
    // have 0.75, high1 was created first and gets the 0.5 left
    CHECK(fs(t, "high1") == 1500);
    CHECK(fs(t, "high2") == 1000);
    CHECK(fs(t, "low") == 1000);
  }
  SECTION("default: the high bucket is divided at the registry's scale") {
    const auto t = make({});
    CHECK(fs(t, "high1") == 1750);
    CHECK(fs(t, "high2") == 1750);
    CHECK(fs(t, "low") == 0);
  }
}

// KAI's resource_division_test.go "gives remainder fraction" and "gives with
// fraction if requested", and the remainder pass giving a whole unit to a
// queue that wanted less (divideRemainingResource does not look at the request).
TEST_CASE("kai_fair_share: upstream remainder gives min(unit, left), beyond a fractional request") {
  SECTION("0.5 GPU left over quota goes to the one queue that wants more") {
    kai_fair_share_model t({q("a", "", 3000, 1)}, kai_milli());
    t.set_capacity(gpu(3500));
    t.set_request(t.at("a"), gpu(5000));
    t.compute();
    CHECK(fs(t, "a") == 3500);
  }
  SECTION("a request of 4.5 with 2 spare is met exactly") {
    kai_fair_share_model t({q("a", "", 3000, 1)}, kai_milli());
    t.set_capacity(gpu(5000));
    t.set_request(t.at("a"), gpu(4500));
    t.compute();
    CHECK(fs(t, "a") == 4500);
  }
  SECTION("two queues wanting 1.5 share 2.6: 1.3 each floors to 1, the 0.6 left goes whole to the first") {
    auto make = [](kai_fair_share_options o) {
      kai_fair_share_model t({q("a", "", 0, 1, -1, 100, 1), q("b", "", 0, 1, -1, 100, 2)}, o);
      t.set_capacity(gpu(2600));
      t.set_request(t.at("a"), gpu(1500));
      t.set_request(t.at("b"), gpu(1500));
      t.compute();
      return t;
    };
    const auto up = make(kai_milli());
    CHECK(fs(up, "a") == 1600);  // beyond its request of 1.5, as KAI grants it
    CHECK(fs(up, "b") == 1000);
    const auto def = make({});
    CHECK(fs(def, "a") == 1300);
    CHECK(fs(def, "b") == 1300);
  }
}

// KAI (resource_division.go, setDeservedResource): deserved = min(quota,
// requestable); only an unlimited quota (-1) is replaced by the amount being
// divided, the parent's share. Ported from resource_division_test.go "gives
// up to deserved when over subscribed".
TEST_CASE("kai_fair_share: upstream grants a finite quota beyond the capacity and the parent's share") {
  SECTION("one queue, quota 3, request 2, capacity 1") {
    kai_fair_share_options o;
    o.upstream = true;
    kai_fair_share_model up({q("a", "", 3, 0)}, o);
    kai_fair_share_model def({q("a", "", 3, 0)});
    for (auto* t : {&up, &def}) {
      t->set_capacity(gpu(1));
      t->set_request(t->at("a"), gpu(2));
      t->compute();
    }
    CHECK(fs(up, "a") == 2);
    CHECK(fs(def, "a") == 1);  // default: never more than the whole share divided
  }
  SECTION("a child's finite quota is not capped by its parent; an unlimited one is") {
    auto make = [](kai_fair_share_options o) {
      kai_fair_share_model t({q("p", "", 4, 0), q("c", "p", 6, 0), q("u", "p", -1, 0), q("v", "", 0, 0, -1)}, o);
      t.set_capacity(gpu(8));
      t.set_request(t.at("c"), gpu(10));
      t.set_request(t.at("u"), gpu(10));
      t.compute();
      return t;
    };
    kai_fair_share_options o;
    o.upstream = true;
    const auto up = make(o);
    REQUIRE(fs(up, "p") == 4);
    CHECK(fs(up, "c") == 6);  // its quota, beyond the parent's 4
    CHECK(fs(up, "u") == 4);  // unlimited: the parent's share
    const auto def = make({});
    CHECK(fs(def, "c") == 4);
    CHECK(fs(def, "u") == 4);
  }
}

TEST_CASE("kai_fair_share: upstream whole units must be positive, named in the error") {
  kai_fair_share_options o = kai_milli();
  o.whole_units.push_back({R::cpu, 0});
  try {
    kai_fair_share_model t({q("a", "", 1, 1)}, o);
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    REQUIRE_FALSE(e.problems().empty());
    CHECK(e.problems()[0].path == "options.whole_units[1]");
  }
}

TEST_CASE("kai_fair_share: upstream whole units from KAI Queue JSON - a GPU at milli scale, cpu in millicores") {
  resource_registry reg;
  reg.intern("run.ai/gpu-milli", 3);
  kai_fair_share_json_options o;
  o.gpu_resource = "run.ai/gpu-milli";
  const json doc = json::parse(R"([
    {"metadata": {"name": "high1", "creationTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"priority": 200, "resources": {"gpu": {"quota": 0, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "high2", "creationTimestamp": "2026-01-02T00:00:00Z"},
     "spec": {"priority": 200, "resources": {"gpu": {"quota": 0, "overQuotaWeight": 1, "limit": -1}}}},
    {"metadata": {"name": "low"},
     "spec": {"priority": 100, "resources": {"gpu": {"quota": 0, "overQuotaWeight": 1, "limit": -1}}}}])");
  auto specs = load_kai_fair_share_queues(doc, reg, o);
  const auto units = kai_fair_share_whole_units(reg, o);
  const auto g = reg.at("run.ai/gpu-milli");
  CHECK(std::find(units.begin(), units.end(), std::pair<resource_id, amount>{g, 1000}) != units.end());
  CHECK(std::find(units.begin(), units.end(), std::pair<resource_id, amount>{R::cpu, 1}) != units.end());
  kai_fair_share_options fo;
  fo.upstream = true;
  fo.whole_units = units;
  kai_fair_share_model t(std::move(specs), fo);
  t.set_capacity(resource_vector{{g, 3500}});
  for (auto n : {"high1", "high2", "low"}) t.set_request(t.at(n), resource_vector{{g, 5000}});
  t.compute();
  CHECK(t.fair_share(t.at("high1"), g) == 1500);
  CHECK(t.fair_share(t.at("high2"), g) == 1000);
  CHECK(t.fair_share(t.at("low"), g) == 1000);
}

// KAI (actions/utils/job_order_by_queue.go, buildNodeOrderFn and
// getBestJobFromNode): a parent queue is compared with the victims of its best
// leaf only (that leaf's popped victims and its next one), not with all the
// victims taken in its subtree.
TEST_CASE("kai_fair_share: upstream victim order compares a parent with its best leaf's victims") {
  auto make = [](bool upstream) {
    kai_fair_share_options o;
    o.upstream = upstream;
    kai_fair_share_model t({q("r", "", 4, 1), q("P", "", 2, 1, -1, 100, 2), q("p1", "P", 1, 1, -1, 100, 2),
                            q("p2", "P", 1, 1, -1, 100, 1), q("Q", "", 2, 1, -1, 100, 1)},
                           o);
    t.set_capacity(gpu(12));
    t.set_request(t.at("r"), gpu(4));
    for (auto n : {"p1", "p2"}) t.set_request(t.at(n), gpu(2));
    t.set_request(t.at("Q"), gpu(4));
    t.compute();
    REQUIRE(fs(t, "P") == 4);
    REQUIRE(fs(t, "Q") == 4);
    REQUIRE(fs(t, "p1") == 2);
    kai_fair_share_policy p(std::move(t));
    for (auto id : {"p1a", "p1b"}) p.commit(mk(id, "p1", 0, gpu(1)));
    for (auto id : {"p2a", "p2b"}) p.commit(mk(id, "p2", 0, gpu(1)));
    for (auto id : {"qa", "qb", "qc", "qd"}) p.commit(mk(id, "Q", 0, gpu(1)));
    std::vector<victim> out;
    p.victims(mk("r1", "r", 0, gpu(1)), out);
    std::vector<std::string> ids;
    for (const auto& v : out) ids.push_back(v.job_id);
    return ids;
  };
  // 1. P and Q both at 3/4 with their next victim; Q was created first, so P
  //    goes last in queue order: p1 (created after p2) gives p1b.
  // 2. P's best leaf is now p2: KAI subtracts p2's next victim only, P at 3/4
  //    ties with Q again and gives p2b; with everything taken in P subtracted
  //    P is at 2/4 and Q (3/4) gives qd.
  const auto up = make(true);
  REQUIRE(up.size() >= 2);
  CHECK(up[0] == "p1b");
  CHECK(up[1] == "p2b");
  const auto def = make(false);
  REQUIRE(def.size() >= 2);
  CHECK(def[0] == "p1b");
  CHECK(def[1] == "qd");
}

// Upstream mode on random trees with fractional amounts (units of 1, 10 and
// 1000 base units): the result does not depend on input order; a finite
// quota is granted up to the demand whatever the parent has; nothing is
// handed out over quota beyond what was left; a queue ends below its
// demand plus one unit (the remainder pass may give a whole unit to a
// fractional want); weight 0 gets its deserved share only.
TEST_CASE("kai_fair_share: upstream randomized invariants with whole units") {
  std::mt19937_64 rng(2718);
  for (int round = 0; round < 300; ++round) {
    const amount unit = round % 3 == 0 ? 1 : (round % 3 == 1 ? 10 : 1000);
    const auto frac = [&] { return static_cast<amount>(rng() % static_cast<std::uint64_t>(unit)); };
    std::vector<kai_fair_share_queue_spec> specs;
    const int tops = 2 + static_cast<int>(rng() % 3);
    for (int i = 0; i < tops; ++i) {
      const amount qt = rng() % 7 == 0 ? -1 : static_cast<amount>(rng() % 5) * unit + (rng() % 2 ? frac() : 0);
      specs.push_back(q("t" + std::to_string(i), "", qt, static_cast<amount>(rng() % 4),
                        rng() % 3 == 0 ? static_cast<amount>(rng() % 20) * unit : -1,
                        static_cast<std::int32_t>(rng() % 3) * 50, static_cast<std::int64_t>(rng() % 5)));
      const int kids = static_cast<int>(rng() % 4);
      for (int k = 0; k < kids; ++k)
        specs.push_back(q("t" + std::to_string(i) + "-" + std::to_string(k), "t" + std::to_string(i),
                          static_cast<amount>(rng() % 3) * unit, static_cast<amount>(rng() % 4), -1,
                          static_cast<std::int32_t>(rng() % 3) * 50, static_cast<std::int64_t>(rng() % 5)));
    }
    const amount cap = static_cast<amount>(rng() % 40) * unit + frac();
    std::vector<amount> req(specs.size());
    for (auto& r : req) r = static_cast<amount>(rng() % 15) * unit + frac();
    kai_fair_share_options o;
    o.upstream = true;
    o.whole_units = {{R::nvidia_gpu, unit}};
    auto run = [&](std::vector<std::size_t> perm) {
      std::vector<kai_fair_share_queue_spec> s;
      for (auto i : perm) s.push_back(specs[i]);
      kai_fair_share_model t(s, o);
      t.set_capacity(gpu(cap));
      for (auto i : perm)
        if (t.is_leaf(t.at(specs[i].name))) t.set_request(t.at(specs[i].name), gpu(req[i]));
      t.compute();
      return t;
    };
    std::vector<std::size_t> perm(specs.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    const auto t = run(perm);
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto u = run(perm);
    for (const auto& s : specs) REQUIRE(fs(t, s.name) == fs(u, s.name));
    auto check_set = [&](const std::vector<std::size_t>& sibs, amount total) {
      amount deserved = 0, sum = 0;
      for (auto c : sibs) {
        const auto& r = t.spec(c).resources.at(R::nvidia_gpu);
        const amount want = std::min(r.limit < 0 ? amount{1} << 60 : r.limit, t.request(c, R::nvidia_gpu));
        const amount f = t.fair_share(c, R::nvidia_gpu);
        const amount d = std::min(r.quota < 0 ? total : r.quota, want);  // KAI: no other cap
        REQUIRE(f >= d);
        REQUIRE(f < std::max(want, d) + unit);
        if (r.over_quota_weight == 0) REQUIRE(f == d);
        deserved += d, sum += f;
      }
      REQUIRE(sum - deserved <= std::max<amount>(0, total - deserved));
    };
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t.parent(i) == kai_fair_share_model::npos) roots.push_back(i);
    check_set(roots, cap);
    for (std::size_t p = 0; p < t.size(); ++p) {
      std::vector<std::size_t> kids;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.parent(i) == p) kids.push_back(i);
      if (!kids.empty()) check_set(kids, t.fair_share(p, R::nvidia_gpu));
    }
  }
}

TEST_CASE("kai_fair_share: a deduction larger than the cluster leaves 0, and the next one starts from the cluster") {
  kai_fair_share_model t({q("a", "", 2, 1)});
  t.set_capacity(gpu(8));
  kai_fair_share_policy p(std::move(t));
  p.capacity_deducted(gpu(3));
  CHECK(p.tree().capacity(R::nvidia_gpu) == 5);
  p.set_cluster_capacity(gpu(4));  // a node left: 4 GPUs less 3
  CHECK(p.tree().capacity(R::nvidia_gpu) == 1);
  p.capacity_deducted(gpu(6));  // more than the cluster has
  CHECK(p.tree().capacity(R::nvidia_gpu) == 0);
  CHECK(p.capacity_deduction().get(R::nvidia_gpu) == 6);
  p.capacity_deducted(gpu(0));  // the cluster is 4 GPUs again, not 6
  CHECK(p.tree().capacity(R::nvidia_gpu) == 4);
  p.capacity_deducted(gpu(1));
  CHECK(p.tree().capacity(R::nvidia_gpu) == 3);
  p.set_cluster_capacity(gpu(16));
  CHECK(p.tree().capacity(R::nvidia_gpu) == 15);
}
