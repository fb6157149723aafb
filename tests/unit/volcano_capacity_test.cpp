// SPDX-License-Identifier: Apache-2.0
// Tests of the Volcano capacity plugin model (flat and hierarchical queues).
#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/volcano_capacity.hpp>
#include <quota/volcano_capacity_json.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;
constexpr resource_id cpu = resources::cpu;

volcano_capacity_queue_spec cq(std::string name, resource_vector deserved = {}, resource_vector capability = {},
                       resource_vector guarantee = {}, std::string parent = {}) {
  volcano_capacity_queue_spec q;
  q.name = std::move(name);
  q.deserved = std::move(deserved);
  q.capability = std::move(capability);
  q.guarantee = std::move(guarantee);
  q.parent = std::move(parent);
  return q;
}

// total 30 GPUs; q1 deserved 10 guarantee 5; q2 deserved 20; q3 deserved 8
// capability 9; q4 deserved 10 guarantee 10. Sum of guarantees 15, free 15.
volcano_capacity_model flat_four() {
  return volcano_capacity_model({gpu, cpu}, resource_vector{{gpu, 30}, {cpu, 100'000}},
                         {cq("q1", {{gpu, 10}}, {}, {{gpu, 5}}), cq("q2", {{gpu, 20}}),
                          cq("q3", {{gpu, 8}}, {{gpu, 9}}), cq("q4", {{gpu, 10}}, {}, {{gpu, 10}})});
}

std::int64_t real(const volcano_capacity_model& c, std::string_view q, resource_id r = gpu) {
  return c.real_capability(c.index(q), c.dim_index(r));
}
std::int64_t des(const volcano_capacity_model& c, std::string_view q, resource_id r = gpu) {
  return c.deserved(c.index(q), c.dim_index(r));
}
std::int64_t alloc(const volcano_capacity_model& c, std::string_view q, resource_id r = gpu) {
  return c.allocated(c.index(q), c.dim_index(r));
}

// root -> eng (deserved 20, capability 24, guarantee 8) -> eng-a (12, -, 6), eng-b (8, 10, 2);
// root -> ops (10, -, 2).
volcano_capacity_model eng_ops(volcano_capacity_options o = {volcano_capacity_mode::hierarchical}) {
  return volcano_capacity_model(
      {gpu}, resource_vector{{gpu, 30}},
      {cq("eng", {{gpu, 20}}, {{gpu, 24}}, {{gpu, 8}}), cq("eng-a", {{gpu, 12}}, {}, {{gpu, 6}}, "eng"),
       cq("eng-b", {{gpu, 8}}, {{gpu, 10}}, {{gpu, 2}}, "eng"), cq("ops", {{gpu, 10}}, {}, {{gpu, 2}})},
      o);
}

bool mentions(const validation_error& e, const std::string& path_part, const std::string& msg_part) {
  for (const auto& p : e.problems())
    if (p.path.find(path_part) != std::string::npos && p.message.find(msg_part) != std::string::npos) return true;
  return false;
}

std::vector<std::string> ids(const std::vector<victim>& v) {
  std::vector<std::string> r;
  for (const auto& x : v) r.push_back(x.job_id);
  return r;
}

}  // namespace

TEST_CASE("volcano_capacity: flat realCapability and deserved clamped to it, lifted to guarantee") {
  const auto c = flat_four();
  CHECK(real(c, "q1") == 20);  // 30 - 15 + 5
  CHECK(real(c, "q2") == 15);
  CHECK(real(c, "q3") == 9);  // capability
  CHECK(real(c, "q4") == 25);
  CHECK(des(c, "q1") == 10);
  CHECK(des(c, "q2") == 15);  // min(20, realCapability 15)
  CHECK(des(c, "q3") == 8);
  CHECK(des(c, "q4") == 10);
  // no cpu anywhere: realCapability is the cluster's cpu, deserved 0
  CHECK(real(c, "q2", cpu) == 100'000);
  CHECK(des(c, "q2", cpu) == 0);
  // a queue that lists a guarantee but no deserved gets deserved = guarantee
  const volcano_capacity_model g({gpu}, resource_vector{{gpu, 10}}, {cq("g", {}, {}, {{gpu, 4}})});
  CHECK(g.deserved(0, 0) == 4);
  CHECK(g.real_capability(0, 0) == 10);
}

TEST_CASE("volcano_capacity: flat capability semantics cpu 0 unlimited, listed gpu 0 is zero") {
  volcano_capacity_model c({cpu, gpu}, resource_vector{{cpu, 8000}, {gpu, 8}}, {cq("z", {}, {{cpu, 0}, {gpu, 0}})});
  CHECK(c.real_capability(0, 0) == 8000);
  CHECK(c.real_capability(0, 1) == 0);
  CHECK(c.allocatable(0, {{cpu, 8000}}).allowed());
  const auto d = c.allocatable(0, {{gpu, 1}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].resource == gpu);
  CHECK(d.reasons()[0].limit == 0);
}

TEST_CASE("volcano_capacity: flat allocatable up to realCapability (borrowing past deserved)") {
  auto c = flat_four();
  const auto q3 = c.index("q3");
  c.allocate("t1", "q3", {{gpu, 8}});
  CHECK(c.allocatable(q3, {{gpu, 1}}).allowed());  // 9 <= realCapability 9, past deserved 8
  const auto d = c.allocatable(q3, {{gpu, 2}});
  REQUIRE(d.denied());
  const auto& r = d.reasons().at(0);
  CHECK(r.rule == "over_real_capability");
  CHECK(r.entity == "q3");
  CHECK(r.requested == 2);
  CHECK(r.used == 8);
  CHECK(r.limit == 9);
  // a dimension the task does not ask for is not checked
  CHECK(c.allocatable(q3, {{cpu, 100'000}, {gpu, 0}}).allowed());
}

TEST_CASE("volcano_capacity: closed queue rejects allocate, enqueue and preempt") {
  auto specs = std::vector<volcano_capacity_queue_spec>{cq("a", {{gpu, 4}})};
  specs[0].open = false;
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 8}}, specs);
  CHECK(c.allocatable(0, {{gpu, 1}}).has_rule("queue_not_open"));
  CHECK(c.job_enqueueable(0, {{gpu, 1}}).has_rule("queue_not_open"));
  CHECK(c.preemptive(0, {{gpu, 1}}).has_rule("queue_not_open"));
}

TEST_CASE("volcano_capacity: overused when allocated passes deserved somewhere, best effort never") {
  volcano_capacity_model c({gpu, cpu}, resource_vector{{gpu, 30}, {cpu, 10'000}},
                    {cq("d", {{gpu, 10}, {cpu, 2000}}), cq("be")});
  const auto d = c.index("d"), be = c.index("be");
  c.allocate("a", "d", {{gpu, 10}, {cpu, 1000}});
  CHECK_FALSE(c.overused(d));  // share exactly 1
  CHECK(c.share(d) == fraction(1));
  c.allocate("b", "d", {{cpu, 1500}});
  CHECK(c.overused(d));  // cpu 2500 > 2000
  CHECK(c.share(d) == fraction(5, 4));
  c.allocate("c", "be", {{gpu, 20}});
  CHECK_FALSE(c.overused(be));
  CHECK(c.share(be) == fraction(1));
}

TEST_CASE("volcano_capacity: queue order by priority, share, then deserved before best effort") {
  auto specs =
      std::vector<volcano_capacity_queue_spec>{cq("x", {{gpu, 10}}), cq("y", {{gpu, 10}}), cq("be"), cq("vip", {{gpu, 1}})};
  specs[3].priority = 5;
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 40}}, specs);
  c.allocate("x1", "x", {{gpu, 5}});
  c.allocate("y1", "y", {{gpu, 2}});
  c.allocate("v1", "vip", {{gpu, 1}});
  const auto x = c.index("x"), y = c.index("y"), be = c.index("be"), vip = c.index("vip");
  CHECK(c.compare_queues(y, x) < 0);    // 0.2 before 0.5
  CHECK(c.compare_queues(vip, y) < 0);  // priority first
  c.allocate("x2", "x", {{gpu, 5}});    // x share 1 == best effort share 1
  CHECK(c.compare_queues(x, be) < 0);
  CHECK(c.compare_queues(be, x) > 0);
  CHECK(c.compare_queues(x, x) == 0);
}

TEST_CASE("volcano_capacity: preemptive needs room under realCapability and deserved in one dimension") {
  auto c = flat_four();
  const auto q1 = c.index("q1");  // deserved 10, realCapability 20
  c.allocate("t", "q1", {{gpu, 8}});
  CHECK(c.preemptive(q1, {{gpu, 2}}).allowed());
  const auto over = c.preemptive(q1, {{gpu, 3}});
  REQUIRE(over.denied());
  CHECK(over.has_rule("preemptive_over_deserved"));
  CHECK(over.reasons()[0].used == 8);
  CHECK(over.reasons()[0].limit == 10);
  const auto past = c.preemptive(q1, {{gpu, 13}});
  CHECK(past.has_rule("over_real_capability"));
  CHECK(past.reasons()[0].limit == 20);
}

TEST_CASE("volcano_capacity: job enqueueable against realCapability with inqueue and elastic") {
  auto c = flat_four();
  const auto q3 = c.index("q3");  // realCapability 9
  c.allocate("t", "q3", {{gpu, 4}});
  c.enqueue("q3", {{gpu, 3}});
  CHECK(c.job_enqueueable(q3, {{gpu, 2}}).allowed());  // 2 + 4 + 3 = 9
  const auto d = c.job_enqueueable(q3, {{gpu, 3}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].used == 7);
  CHECK(d.reasons()[0].limit == 9);
  c.set_elastic("q3", {{gpu, 1}});
  CHECK(c.job_enqueueable(q3, {{gpu, 3}}).allowed());         // 3 + 7 - 1 = 9
  CHECK(c.job_enqueueable(q3, resource_vector{}).allowed());  // no minResources permits
  c.dequeue("q3", {{gpu, 3}});
  CHECK(c.inqueue(q3, 0) == 0);
  CHECK_THROWS_AS(c.dequeue("q3", {{gpu, 1}}), state_error);
}

TEST_CASE("volcano_capacity: multi-dimension queue short in cpu but satisfied in gpu") {
  volcano_capacity_model c({cpu, gpu}, resource_vector{{cpu, 8000}, {gpu, 8}},
                    {cq("m", {{cpu, 4000}, {gpu, 4}}, {{cpu, 4000}, {gpu, 8}}), cq("n", {{cpu, 4000}, {gpu, 4}})});
  const auto m = c.index("m");
  c.allocate("m1", "m", {{cpu, 4000}, {gpu, 2}});
  const auto d = c.allocatable(m, {{cpu, 1000}, {gpu, 1}});
  REQUIRE(d.reasons().size() == 1);
  CHECK(d.reasons()[0].resource == cpu);
  CHECK(c.allocatable(m, {{gpu, 1}}).allowed());
  CHECK(c.preemptive(m, {{gpu, 2}}).allowed());  // 4 <= deserved 4 in gpu
  CHECK_FALSE(c.overused(m));

  // reclaim only looks at dimensions the victim uses and the queue's deserved lists
  c.allocate("n1", "n", {{cpu, 2000}});
  c.allocate("n2", "n", {{gpu, 6}});
  std::vector<victim> v;
  c.reclaimable("m", {{cpu, 1000}, {gpu, 1}}, {"n1", "n2"}, v);
  CHECK(ids(v) == std::vector<std::string>{"n2"});
}

TEST_CASE("volcano_capacity: flat reclaim keeps guarantee, skips unrelated tasks, takes best effort first") {
  volcano_capacity_model c(
      {gpu, cpu}, resource_vector{{gpu, 30}, {cpu, 10'000}},
      {cq("qa", {{gpu, 10}}), cq("qb", {{gpu, 10}}, {}, {{gpu, 10}}), cq("qc", {{gpu, 10}}), cq("qd"), cq("qe")});
  for (int i = 1; i <= 6; ++i) c.allocate("b" + std::to_string(i), "qb", {{gpu, 3}});
  c.allocate("b7", "qb", {{cpu, 1000}});
  c.allocate("c1", "qc", {{gpu, 3}});
  c.allocate("c2", "qc", {{gpu, 3}});
  c.allocate("d1", "qd", {{gpu, 2}});
  c.allocate("a1", "qa", {{gpu, 1}});
  std::vector<victim> v;
  c.reclaimable("qa", {{gpu, 3}}, {"a1", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "c1", "c2", "d1"}, v);
  // qb: 18 > 10 -> b1 (15), b2 (12); b3 would leave 9 < guarantee 10
  CHECK(ids(v) == std::vector<std::string>{"b1", "b2", "d1"});
  CHECK(v[0].rule == "reclaim_over_deserved");
  CHECK(v[2].rule == "reclaim_no_deserved");
  CHECK(v[2].entity == "qd");

  auto specs = std::vector<volcano_capacity_queue_spec>{cq("qa", {{gpu, 1}}), cq("qe")};
  specs[1].reclaimable = false;
  volcano_capacity_model e({gpu}, resource_vector{{gpu, 4}}, specs);
  e.allocate("e1", "qe", {{gpu, 4}});
  std::vector<victim> none;
  e.reclaimable("qa", {{gpu, 1}}, {"e1"}, none);
  CHECK(none.empty());
}

TEST_CASE("volcano_capacity: flat validation names every queue and problem") {
  try {
    volcano_capacity_model({gpu, cpu}, resource_vector{{gpu, 10}, {cpu, 1000}},
                    {cq("a", {{gpu, 4}}, {{gpu, 3}}, {{gpu, 2}}), cq("b", {{gpu, 2}}, {}, {{gpu, 3}}),
                     cq("c", {}, {{gpu, 1}}, {{gpu, 2}}), cq("d", {}, {}, {{gpu, 8}}), cq("e", {{cpu, -1}}), cq("a")});
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(mentions(e, "queue/a/spec/deserved", "exceeds capability"));
    CHECK(mentions(e, "queue/b/spec/deserved", "below guarantee"));
    CHECK(mentions(e, "queue/c/spec/guarantee", "exceeds capability"));
    CHECK(mentions(e, "total/", "sum of guarantees"));
    CHECK(mentions(e, "queue/e/spec/deserved", "negative"));
    CHECK(mentions(e, "queue/a", "duplicate"));
  }
}

TEST_CASE("volcano_capacity: typed errors for bad calls leave the state unchanged") {
  auto c = flat_four();
  c.allocate("t1", "q1", {{gpu, 2}});
  CHECK_THROWS_AS(c.allocate("t1", "q1", {{gpu, 1}}), state_error);
  CHECK_THROWS_AS(c.allocate("t2", "nope", {{gpu, 1}}), unknown_entity_error);
  CHECK_THROWS_AS(c.allocate("t2", "q1", {{gpu, -1}}), validation_error);
  CHECK_THROWS_AS(c.allocate("t2", "q1", {{resources::memory, 5}}), unknown_entity_error);
  CHECK_THROWS_AS(c.deallocate("zz"), unknown_entity_error);
  CHECK_THROWS_AS(c.enqueue("q1", {{gpu, -3}}), validation_error);
  // a sum past int64 is an overflow_error, and the task is not half recorded
  CHECK_THROWS_AS(c.allocate("big", "q1", {{gpu, std::numeric_limits<amount>::max()}}), overflow_error);
  CHECK_FALSE(c.has_task("big"));
  CHECK(c.running_tasks() == std::vector<std::string>{"t1"});
  CHECK(alloc(c, "q1") == 2);
  CHECK_FALSE(c.has_task("t2"));
  CHECK(c.inqueue(c.index("q1"), 0) == 0);
  c.deallocate("t1");
  CHECK(alloc(c, "q1") == 0);
  CHECK_THROWS_AS(c.deallocate("t1"), unknown_entity_error);
}

TEST_CASE("volcano_capacity: set_total recomputes realCapability and deserved, rejects a total below the guarantees") {
  auto c = flat_four();
  c.set_total({{gpu, 40}, {cpu, 100'000}});  // sum of guarantees 15, free 25
  CHECK(real(c, "q1") == 30);
  CHECK(real(c, "q2") == 25);
  CHECK(real(c, "q3") == 9);
  CHECK(des(c, "q2") == 20);  // no longer clamped
  CHECK_THROWS_AS(c.set_total({{gpu, 10}, {cpu, 100'000}}), validation_error);
  CHECK(real(c, "q2") == 25);  // unchanged
  CHECK(c.total(c.dim_index(gpu)) == 40);
  CHECK_THROWS_AS(c.set_total({{gpu, 40}, {resources::memory, 1}}), unknown_entity_error);

  auto h = eng_ops({volcano_capacity_mode::hierarchical, 0, true});
  h.set_total({{gpu, 40}});
  CHECK(real(h, "ops") == 32);  // min(40, 40 - 10 + 2)
  try {
    h.set_total({{gpu, 20}});  // eng's own capability 24 above the root's 20
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(mentions(e, "queue/eng/spec/capability", "exceeds parent 'root'"));
  }
  CHECK(real(h, "ops") == 32);
}

TEST_CASE("volcano_capacity: hierarchical realCapability bounded by the parent, root sums its children") {
  const auto c = eng_ops();
  const auto root = c.index("root");
  CHECK(root == 0);
  CHECK(c.guarantee(root, 0) == 10);
  CHECK(c.deserved(root, 0) == 30);
  CHECK(c.real_capability(root, 0) == quota::detail::cap_unlimited);
  CHECK(real(c, "eng") == 24);
  CHECK(real(c, "ops") == quota::detail::cap_unlimited);
  CHECK(real(c, "eng-a") == 22);  // min(inherited 24, 24 - 8 + 6)
  CHECK(real(c, "eng-b") == 10);  // own capability
  CHECK(c.capability(c.index("eng-a"), 0) == 24);
  CHECK(c.is_leaf(c.index("eng-a")));
  CHECK_FALSE(c.is_leaf(c.index("eng")));
  CHECK(c.depth(c.index("eng-b")) == 2);

  const auto b = eng_ops({volcano_capacity_mode::hierarchical, 0, true});
  CHECK(b.real_capability(0, 0) == 30);
  CHECK(real(b, "ops") == 22);  // min(inherited 30, 30 - 10 + 2)
}

TEST_CASE("volcano_capacity: hierarchical checks from the leaf up to the root") {
  auto c = eng_ops();
  const auto a = c.index("eng-a");
  c.allocate("a1", "eng-a", {{gpu, 14}});
  c.allocate("b1", "eng-b", {{gpu, 8}});
  CHECK(alloc(c, "eng") == 22);
  CHECK(alloc(c, "root") == 22);
  CHECK(c.allocatable(a, {{gpu, 2}}).allowed());
  const auto d = c.allocatable(a, {{gpu, 3}});  // leaf 17 <= 22, eng 25 > 24
  REQUIRE(d.reasons().size() == 1);
  CHECK(d.reasons()[0].entity == "eng");
  CHECK(d.reasons()[0].used == 22);
  CHECK(d.reasons()[0].limit == 24);

  c.enqueue("eng-b", {{gpu, 1}});
  CHECK(c.inqueue(c.index("eng"), 0) == 1);
  CHECK(c.job_enqueueable(a, {{gpu, 1}}).allowed());
  const auto e = c.job_enqueueable(a, {{gpu, 2}});  // eng: 2 + 22 + 1 = 25 > 24
  REQUIRE(e.denied());
  CHECK(e.reasons()[0].entity == "eng");

  // only leaves hold jobs
  CHECK(c.allocatable(c.index("eng"), {{gpu, 1}}).has_rule("not_leaf"));
  CHECK(c.job_enqueueable(c.index("root"), {{gpu, 1}}).has_rule("not_leaf"));
  CHECK_THROWS_AS(c.allocate("x", "eng", {{gpu, 1}}), state_error);
  CHECK(alloc(c, "eng") == 22);
  c.deallocate("a1");
  CHECK(alloc(c, "eng") == 8);
  CHECK(alloc(c, "root") == 8);
}

TEST_CASE("volcano_capacity: hierarchical validation: parent bounds, unknown parents, cycles") {
  try {
    volcano_capacity_model({gpu}, resource_vector{{gpu, 30}},
                    {cq("p", {{gpu, 10}}, {{gpu, 12}}, {{gpu, 4}}), cq("c1", {{gpu, 8}}, {{gpu, 20}}, {{gpu, 3}}, "p"),
                     cq("c2", {{gpu, 4}}, {}, {{gpu, 2}}, "p")},
                    {volcano_capacity_mode::hierarchical});
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(mentions(e, "queue/c1/spec/capability", "exceeds parent 'p'"));
    CHECK(mentions(e, "queue/p/spec/deserved", "children's deserved 12"));
    CHECK(mentions(e, "queue/p/spec/guarantee", "children's guarantee 5"));
  }
  try {
    volcano_capacity_model(
        {gpu}, resource_vector{{gpu, 30}},
        {cq("x", {}, {}, {}, "y"), cq("y", {}, {}, {}, "x"), cq("z", {}, {}, {}, "ghost"), cq("s", {}, {}, {}, "s")},
        {volcano_capacity_mode::hierarchical});
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(mentions(e, "queue/x/spec/parent", "cycle"));
    CHECK(mentions(e, "queue/y/spec/parent", "cycle"));
    CHECK(mentions(e, "queue/z/spec/parent", "unknown parent 'ghost'"));
    CHECK(mentions(e, "queue/s/spec/parent", "own parent"));
  }
  // the same queues are fine in flat mode: spec.parent is ignored there
  CHECK_NOTHROW(
      volcano_capacity_model({gpu}, resource_vector{{gpu, 30}}, {cq("x", {}, {}, {}, "y"), cq("y", {}, {}, {}, "x")}));
}

namespace {
// root -> A (deserved 10) -> a1 (5), a2 (5); root -> B (deserved 20) -> b1 (10).
volcano_capacity_model siblings(int level) {
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 40}},
                    {cq("A", {{gpu, 10}}), cq("a1", {{gpu, 5}}, {}, {}, "A"), cq("a2", {{gpu, 5}}, {}, {}, "A"),
                     cq("B", {{gpu, 20}}), cq("b1", {{gpu, 10}}, {}, {}, "B")},
                    {volcano_capacity_mode::hierarchical, level});
  for (int i = 1; i <= 7; ++i) c.allocate("b1-" + std::to_string(i), "b1", {{gpu, 2}});
  for (int i = 1; i <= 4; ++i) c.allocate("a2-" + std::to_string(i), "a2", {{gpu, 2}});
  return c;
}
}  // namespace

TEST_CASE("volcano_capacity: hierarchical reclaim: siblings first, then other subtrees") {
  const auto c = siblings(0);
  const auto order = c.victim_order("a1", c.running_tasks());
  REQUIRE(order.size() == 11);
  CHECK(order.front() == "a2-1");  // same parent A: level 1
  CHECK(order[4] == "b1-1");       // other subtree: level 0
  std::vector<victim> v;
  c.reclaimable("a1", {{gpu, 2}}, order, v);
  CHECK(ids(v) == std::vector<std::string>{"a2-1", "a2-2", "b1-1", "b1-2"});

  // ancestorReclaimLevel 1: b1 is over its deserved but B (14 <= 20) is not -> protected
  const auto l1 = siblings(1);
  std::vector<victim> w;
  l1.reclaimable("a1", {{gpu, 2}}, l1.victim_order("a1", l1.running_tasks()), w);
  CHECK(ids(w) == std::vector<std::string>{"a2-1", "a2-2"});

  // policy adapter gives the same victims
  volcano_capacity_policy pol(siblings(0));
  job j;
  j.id = "new";
  j.queue = "a1";
  j.request = {{gpu, 2}};
  std::vector<victim> pv;
  pol.victims(j, pv);
  CHECK(ids(pv) == ids(v));
}

TEST_CASE("volcano_capacity: hierarchical preemptive looks at ancestors with ancestorReclaimLevel") {
  for (int level : {0, 1}) {
    volcano_capacity_model c({gpu}, resource_vector{{gpu, 40}},
                      {cq("A", {{gpu, 10}}), cq("a1", {{gpu, 5}}, {}, {}, "A"), cq("a2", {{gpu, 5}}, {}, {}, "A")},
                      {volcano_capacity_mode::hierarchical, level});
    c.allocate("t", "a1", {{gpu, 6}});
    const auto d = c.preemptive(c.index("a1"), {{gpu, 1}});  // a1: 7 > 5; A: 7 <= 10
    CHECK(d.allowed() == (level == 1));
  }
}

TEST_CASE("volcano_capacity: hierarchical queue order compares the subtrees below the common ancestor") {
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 40}},
                    {cq("A", {{gpu, 10}}), cq("a1", {{gpu, 5}}, {}, {}, "A"), cq("a2", {{gpu, 5}}, {}, {}, "A"),
                     cq("B", {{gpu, 10}}), cq("b1", {{gpu, 10}}, {}, {}, "B")},
                    {volcano_capacity_mode::hierarchical});
  c.allocate("x", "a1", {{gpu, 1}});  // a1 share 0.2
  c.allocate("y", "a2", {{gpu, 9}});  // a2 1.8, A 1.0
  c.allocate("z", "b1", {{gpu, 5}});  // b1 0.5, B 0.5
  const auto a1 = c.index("a1"), a2 = c.index("a2"), b1 = c.index("b1"), A = c.index("A");
  CHECK(c.compare_queues(a1, b1) > 0);  // A (1.0) after B (0.5) although a1 < b1
  CHECK(c.compare_queues(a1, a2) < 0);  // siblings: own shares
  CHECK(c.compare_queues(A, b1) > 0);   // leaves first
}

TEST_CASE("volcano_capacity: Volcano Queue JSON with deserved, capability, guarantee and parent") {
  resource_registry reg;
  const auto doc = load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/volcano/capacity_hierarchy.json");
  const resource_vector total{{gpu, 30}, {cpu, 64'000}};
  auto c = load_volcano_capacity(doc, reg, total, {volcano_capacity_mode::hierarchical});
  CHECK(c.size() == 5);
  CHECK(real(c, "eng-a") == 22);
  CHECK(real(c, "eng-b") == 10);
  CHECK(real(c, "eng-a", cpu) == 48'000);  // inherited
  CHECK(des(c, "root", cpu) == 64'000);
  CHECK(c.spec(c.index("ops")).priority == 1);
  const auto bounded = load_volcano_capacity(doc, reg, total, {volcano_capacity_mode::hierarchical, 0, true});
  CHECK(real(bounded, "ops") == 22);
  // flat mode reads the same objects; the root Queue is then an ordinary queue
  const auto flat = load_volcano_capacity(doc, reg, total);
  CHECK(flat.size() == 5);
  CHECK(real(flat, "ops") == 30 - 18 + 2);
  REQUIRE_THROWS_AS(
      parse_volcano_capacity(
          json::parse(R"([{"metadata":{"name":"q"},"spec":{"deserved":{"cpu":"lots"}},"status":{"state":"Odd"}}])"),
          reg),
      validation_error);
}

TEST_CASE("volcano_capacity: policy adapter checks, commits and releases") {
  volcano_capacity_policy p(eng_ops());
  const volcano_capacity_model& c = p.model();
  static_assert(policy<volcano_capacity_policy>);
  job j;
  j.id = "j1";
  j.queue = "eng-b";
  j.request = {{gpu, 10}};
  CHECK(p.check(j).allowed());
  p.commit(j);
  CHECK(alloc(c, "eng") == 10);
  j.id = "j2";
  j.request = {{gpu, 1}};
  CHECK(p.check(j).has_rule("over_real_capability"));
  p.release("j1");
  CHECK(alloc(c, "root") == 0);
  CHECK(p.policy_name() == "volcano_capacity");
}

TEST_CASE("volcano_capacity: randomized invariants (flat and hierarchical, order independent)") {
  std::mt19937_64 rng(7);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  const std::vector<resource_id> dims{cpu, gpu};
  for (int round = 0; round < 60; ++round) {
    const bool hier = round % 2 == 1;
    const resource_vector total{{cpu, pick(1000, 100'000)}, {gpu, pick(1, 64)}};
    std::vector<volcano_capacity_queue_spec> specs;
    // top level: guarantees within the total; children split their parent's deserved and guarantee
    const int top = static_cast<int>(pick(1, 5));
    std::map<std::string, resource_vector> tdes, tgua;
    for (int i = 0; i < top; ++i) {
      auto q = cq("t" + std::to_string(i));
      for (auto r : dims) {
        const auto g = pick(0, total.get(r) / top);
        const auto d = g + pick(0, total.get(r));
        q.guarantee.set(r, g);
        q.deserved.set(r, d);
        if (rng() % 2) q.capability.set(r, d + pick(1, total.get(r)));
      }
      specs.push_back(q);
      if (!hier) continue;
      const int kids = static_cast<int>(pick(0, 3));
      for (int k = 0; k < kids; ++k) {
        auto c = cq(q.name + "-" + std::to_string(k));
        c.parent = q.name;
        for (auto r : dims) {
          const auto g = pick(0, q.guarantee.get(r) / kids);
          const auto d = g + pick(0, (q.deserved.get(r) - q.guarantee.get(r)) / kids);
          c.guarantee.set(r, g);
          c.deserved.set(r, d);
          if (const auto* pc = q.capability.find(r); pc && rng() % 2)
            c.capability.set(r, pick(std::max<std::int64_t>(d, 1), *pc));
        }
        specs.push_back(c);
      }
    }
    const volcano_capacity_options opts{hier ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat};
    volcano_capacity_model c(dims, total, specs, opts);
    auto shuffled = specs;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    const volcano_capacity_model s(dims, total, shuffled, opts);
    for (std::size_t q = 0; q < c.size(); ++q) {
      const auto& n = c.name(q);
      const auto o = s.index(n);
      for (std::size_t d = 0; d < dims.size(); ++d) {
        CHECK(c.real_capability(q, d) == s.real_capability(o, d));
        CHECK(c.deserved(q, d) == s.deserved(o, d));
        CHECK(c.guarantee(q, d) <= c.deserved(q, d));
        CHECK(c.guarantee(q, d) <= c.real_capability(q, d));
        if (!hier) {
          CHECK(c.deserved(q, d) <= c.real_capability(q, d));
          CHECK(c.real_capability(q, d) <= total.get(dims[d]));
        } else if (c.parent(q) != volcano_capacity_model::npos) {
          CHECK(c.real_capability(q, d) <= c.real_capability(c.parent(q), d));
        }
      }
    }
    // random allocations through the predicate keep every queue on the path within realCapability
    std::vector<std::size_t> leaves;
    for (std::size_t q = 0; q < c.size(); ++q)
      if (c.is_leaf(q) && (!hier || q != 0)) leaves.push_back(q);
    std::vector<std::string> live;
    for (int step = 0; step < 80; ++step) {
      if (!live.empty() && rng() % 4 == 0) {
        const auto k = static_cast<std::size_t>(rng() % live.size());
        c.deallocate(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      const auto q = leaves[static_cast<std::size_t>(rng() % leaves.size())];
      const resource_vector task{{cpu, pick(0, total.get(cpu) / 4)}, {gpu, pick(0, 4)}};
      if (c.allocatable(q, task).allowed()) {
        const auto id = "t" + std::to_string(step);
        c.allocate(id, c.name(q), task);
        live.push_back(id);
        for (std::size_t n = q; n != volcano_capacity_model::npos; n = c.parent(n))
          for (std::size_t d = 0; d < dims.size(); ++d)
            if (task.get(dims[d]) > 0) CHECK(c.allocated(n, d) <= c.real_capability(n, d));
      }
    }
    // a parent holds exactly what its children hold
    if (hier)
      for (std::size_t p = 0; p < c.size(); ++p) {
        if (c.is_leaf(p)) continue;
        for (std::size_t d = 0; d < dims.size(); ++d) {
          std::int64_t sum = 0;
          for (std::size_t q = 0; q < c.size(); ++q)
            if (c.parent(q) == p) sum += c.allocated(q, d);
          CHECK(c.allocated(p, d) == sum);
        }
      }
    // reclaim never takes a queue below its guarantee
    if (!leaves.empty()) {
      std::vector<victim> v;
      const auto reclaimer = c.name(leaves[0]);
      c.reclaimable(reclaimer, {{cpu, 1}, {gpu, 1}}, c.victim_order(reclaimer, c.running_tasks()), v);
      std::map<std::size_t, std::vector<std::int64_t>> left;
      for (const auto& x : v) {
        const auto q = c.task_queue(x.job_id);
        CHECK(q != leaves[0]);
        auto& l = left[q];
        if (l.empty())
          for (std::size_t d = 0; d < dims.size(); ++d) l.push_back(c.allocated(q, d));
      }
      for (const auto& x : v) c.deallocate(x.job_id);
      for (const auto& [q, before] : left)
        for (std::size_t d = 0; d < dims.size(); ++d) CHECK(c.allocated(q, d) >= c.guarantee(q, d));
    }
  }
}

TEST_CASE("volcano_capacity: running tasks stay in allocation order through many releases") {
  // released tasks are compacted out of the allocation order; the survivors
  // keep their order and later releases still find them
  auto c = flat_four();
  std::vector<std::string> want;
  std::mt19937 rng(11);
  int next = 0;
  for (int round = 0; round < 2'000; ++round) {
    if (want.empty() || rng() % 3 != 0) {
      const std::string id = "t" + std::to_string(next++);
      c.allocate(id, "q2", resource_vector{{cpu, 1}});
      want.push_back(id);
    } else {
      const auto k = rng() % want.size();
      c.deallocate(want[k]);
      want.erase(want.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (round % 97 == 0) REQUIRE(c.running_tasks() == want);
  }
  CHECK(c.running_tasks() == want);
  for (const auto& id : want) c.deallocate(id);
  CHECK(c.running_tasks().empty());
  CHECK(c.allocated(c.index("q2"), c.dim_index(cpu)) == 0);
}

// reclaimable_running (the policy's path: no list of ids, queues that cannot
// give skipped) names the same victims in the same order as reclaimable over
// victim_order(running_tasks()), flat and hierarchical, on random states with
// releases (holes and their compaction) and non-reclaimable queues.
TEST_CASE("volcano_capacity: reclaimable_running equals reclaimable over the running tasks in victim order") {
  std::mt19937_64 rng(20261126);
  for (const bool hier : {false, true}) {
    for (int level = 0; level <= (hier ? 1 : 0); ++level) {
      std::vector<volcano_capacity_queue_spec> specs{cq("p", {{gpu, 16}, {cpu, 40'000}}, {}, {{gpu, 4}}),
                                             cq("a", {{gpu, 6}}, {}, {{gpu, 2}}), cq("b", {{gpu, 4}, {cpu, 8'000}}),
                                             cq("c"), cq("d", {{gpu, 3}})};
      if (hier) {
        specs[1].parent = "p";
        specs[2].parent = "p";
      }
      specs[4].reclaimable = false;
      const volcano_capacity_options opts{hier ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat, level};
      volcano_capacity_model c({gpu, cpu}, resource_vector{{gpu, 40}, {cpu, 100'000}}, specs, opts);
      const std::vector<std::string> leaves =
          hier ? std::vector<std::string>{"a", "b", "c", "d"} : std::vector<std::string>{"p", "a", "b", "c", "d"};
      std::vector<std::string> live;
      std::size_t compared = 0, named = 0;
      for (int step = 0; step < 250; ++step) {
        if (!live.empty() && rng() % 3 == 0) {
          const auto k = static_cast<std::size_t>(rng() % live.size());
          c.deallocate(live[k]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          const auto& q = leaves[rng() % leaves.size()];
          const std::string id = "t" + std::to_string(step);
          c.allocate(id, q, {{gpu, static_cast<amount>(rng() % 3)}, {cpu, static_cast<amount>(rng() % 3) * 1000}});
          live.push_back(id);
        }
        for (const auto& q : leaves) {
          const resource_vector req{{gpu, 1 + static_cast<amount>(rng() % 2)}, {cpu, 1000}};
          std::vector<victim> want, got;
          c.reclaimable(q, req, c.victim_order(q, c.running_tasks()), want);
          c.reclaimable_running(q, req, got);
          REQUIRE(ids(got) == ids(want));
          for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].rule == want[i].rule);
          ++compared;
          named += got.size();
        }
      }
      CHECK(compared >= 1000);
      CHECK(named > 0);  // the states did offer victims
    }
  }
}

TEST_CASE("volcano_capacity: leaves non-preemptible tasks out of reclaim and preempt") {
  // q2 deserves 20 and holds 25: a non-preemptible 5 first, then preemptible ones
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 40}}, {cq("q1", {{gpu, 20}}), cq("q2", {{gpu, 20}})});
  c.allocate("pinned", "q2", {{gpu, 5}}, volcano_capacity_task_meta{0, false});
  c.allocate("free-1", "q2", {{gpu, 10}}, volcano_capacity_task_meta{0, true});
  c.allocate("free-2", "q2", {{gpu, 10}}, volcano_capacity_task_meta{2, true});
  std::vector<victim> v;
  c.reclaimable_running("q1", {{gpu, 5}}, v);
  REQUIRE_FALSE(v.empty());
  for (const auto& x : v) CHECK(x.job_id != "pinned");
  std::vector<victim> p;
  c.preemptable_in_queue("q2", 3, p);
  std::vector<std::string> ids;
  for (const auto& x : p) ids.push_back(x.job_id);
  CHECK(ids == std::vector<std::string>{"free-1", "free-2"});  // lower priority first; pinned never
  std::vector<victim> none;
  c.preemptable_in_queue("q2", 0, none);
  CHECK(none.empty());
}

// ---- upstream fidelity (Volcano's capacity plugin) ----

TEST_CASE("volcano: upstream capacity pods take no part in allocatable, preemptive, enqueue and reclaim") {
  // Volcano adds one `pods` to every task and leaves it out of the
  // dimension-wise comparisons (IsIgnoredScalarResource) and of the
  // reclaimer/reclaimee intersection (IntersectionWithIgnoredScalarResources).
  constexpr resource_id pods = resources::pods;
  for (const bool upstream : {false, true}) {
    volcano_capacity_options o;
    o.upstream = upstream;
    volcano_capacity_model c({gpu, cpu, pods}, resource_vector{{gpu, 12}, {cpu, 10}, {pods, 3}},
                      {cq("q1", {{gpu, 4}}), cq("q2", {{gpu, 4}}), cq("q3", {{gpu, 4}, {pods, 1}})}, o);
    c.allocate("t1", "q1", {{gpu, 1}, {pods, 2}});
    const resource_vector task{{gpu, 1}, {pods, 2}};  // pods 4 > realCapability 3
    CHECK(c.allocatable(0, task).allowed());
    CHECK(c.job_enqueueable(0, task).allowed());
    CHECK(c.preemptive(0, task).allowed());
    CHECK(c.allocatable(0, {{gpu, 12}, {pods, 1}}).has_rule("over_real_capability"));  // gpu still counts
    // q2 over its deserved in gpu; a reclaimer sharing only `pods` with it takes nothing
    c.allocate("t2", "q2", {{gpu, 6}, {pods, 1}});
    // q3 over its deserved only in pods: not a victim
    c.allocate("t3", "q3", {{gpu, 1}, {pods, 2}});
    std::vector<victim> v;
    c.reclaimable("q1", {{cpu, 1}, {pods, 1}}, {"t2", "t3"}, v);
    CHECK(v.empty());
    c.reclaimable("q1", {{gpu, 1}, {pods, 1}}, {"t2", "t3"}, v);
    REQUIRE(v.size() == 1);
    CHECK(v[0].job_id == "t2");
  }
}

TEST_CASE("volcano: upstream capacity flat accepts a sum of guarantees above the total and deserved below guarantee") {
  auto specs = [] {
    return std::vector<volcano_capacity_queue_spec>{cq("a", {{gpu, 4}}, {}, {{gpu, 8}}), cq("b", {{gpu, 6}}, {}, {{gpu, 6}}),
                                            cq("c", {{gpu, 5}})};
  };
  try {
    volcano_capacity_model({gpu}, resource_vector{{gpu, 10}}, specs());
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(mentions(e, "total/", "sum of guarantees 14"));
    CHECK(mentions(e, "queue/a/spec/deserved", "below guarantee 8"));
  }
  volcano_capacity_options o;
  o.upstream = true;
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 10}}, specs(), o);
  REQUIRE(c.warnings().size() == 2);
  CHECK(c.warnings()[0].path == "queue/a/spec/deserved/" + std::to_string(gpu));
  CHECK(c.warnings()[1].path == std::string("total/nvidia.com/gpu"));
  // ExceededPart(total, guarantees) = 0: realCapability = own guarantee;
  // deserved = max(min(deserved, realCapability), guarantee)
  CHECK(real(c, "a") == 8);
  CHECK(des(c, "a") == 8);  // raised to the guarantee
  CHECK(real(c, "b") == 6);
  CHECK(real(c, "c") == 0);
  CHECK(des(c, "c") == 0);
  CHECK(c.allocatable(c.index("c"), {{gpu, 1}}).has_rule("over_real_capability"));
  // a bigger total clears the total's warning, keeps the spec's
  c.set_total({{gpu, 20}});
  REQUIRE(c.warnings().size() == 1);
  CHECK(c.warnings()[0].path == "queue/a/spec/deserved/" + std::to_string(gpu));
  CHECK(real(c, "c") == 6);
}

TEST_CASE("volcano: upstream capacity hierarchical children above their parent are warnings, with Volcano's numbers") {
  auto specs = [] {
    return std::vector<volcano_capacity_queue_spec>{cq("p", {{gpu, 10}}, {{gpu, 12}}, {{gpu, 4}}),
                                            cq("c1", {{gpu, 8}}, {{gpu, 20}}, {{gpu, 3}}, "p"),
                                            cq("c2", {{gpu, 4}}, {}, {{gpu, 2}}, "p")};
  };
  CHECK_THROWS_AS(volcano_capacity_model({gpu}, resource_vector{{gpu, 30}}, specs(), {volcano_capacity_mode::hierarchical}),
                  validation_error);
  volcano_capacity_options o{volcano_capacity_mode::hierarchical};
  o.upstream = true;
  volcano_capacity_model c({gpu}, resource_vector{{gpu, 30}}, specs(), o);
  auto warned = [&](const std::string& path, const std::string& msg) {
    for (const auto& w : c.warnings())
      if (w.path.find(path) != std::string::npos && w.message.find(msg) != std::string::npos) return true;
    return false;
  };
  CHECK(c.warnings().size() == 3);
  CHECK(warned("queue/c1/spec/capability", "exceeds parent 'p'"));
  CHECK(warned("queue/p/spec/deserved", "children's deserved 12"));
  CHECK(warned("queue/p/spec/guarantee", "children's guarantee 5"));
  // checkHierarchicalQueue: realCapability = min(capability, parent's
  // realCapability - children's guarantees + own guarantee)
  CHECK(real(c, "p") == 12);
  CHECK(real(c, "c1") == 10);  // min(20, 12 - 5 + 3)
  CHECK(real(c, "c2") == 9);   // min(12 inherited, 12 - 5 + 2)
  CHECK(des(c, "c1") == 8);
  CHECK(des(c, "p") == 10);
}

TEST_CASE("volcano: upstream capacity a job waiting in a queue with children stops all scheduling while it waits") {
  job inner;
  inner.id = "stray";
  inner.queue = "eng";  // has children eng-a, eng-b
  inner.request = {{gpu, 1}};
  job leaf;
  leaf.id = "j1";
  leaf.queue = "ops";
  leaf.request = {{gpu, 1}};
  // default: the model is unchanged by such a job (hosts reject it at load;
  // allocatable on the inner queue says not_leaf)
  volcano_capacity_policy def(eng_ops());
  def.pending_added(inner);
  CHECK(def.check(leaf).allowed());
  CHECK(def.check(inner).has_rule("not_leaf"));
  // upstream: Volcano's capacity plugin fails its session set-up, and its
  // allocatable, enqueueable, preemptive and reclaimable all refuse
  volcano_capacity_options o{volcano_capacity_mode::hierarchical};
  o.upstream = true;
  volcano_capacity_policy up(eng_ops(o));
  up.pending_added(inner);
  CHECK(up.jobs_in_inner_queues() == 1);
  const auto d = up.check(leaf);
  REQUIRE(d.has_rule("job_in_inner_queue"));
  CHECK(d.reasons()[0].entity == "eng");
  CHECK(up.check(inner).has_rule("job_in_inner_queue"));
  std::vector<victim> v;
  up.model().allocate("x1", "eng-a", {{gpu, 10}});  // eng-a over its deserved 12
  up.model().allocate("x2", "eng-a", {{gpu, 10}});
  up.victims(leaf, v);
  CHECK(v.empty());
  up.pending_withdrawn("stray");
  CHECK(up.jobs_in_inner_queues() == 0);
  CHECK(up.check(leaf).allowed());
  up.victims(leaf, v);
  CHECK(!v.empty());
}

namespace {

job gpu_task(std::string id, std::string queue, amount gpus) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.request.set(gpu, gpus);
  j.preemptible = true;
  return j;
}

// reclaimable() over every running task in victim_order(): what the policy's
// own list of running tasks (kept in allocation order) must give.
std::vector<std::string> reclaimable_over_running(const volcano_capacity_policy& p, const job& j) {
  std::vector<victim> out;
  const auto& q = p.model();
  if (q.preemptive(q.index(j.queue), j.request).allowed())
    q.reclaimable(j.queue, j.request, q.victim_order(j.queue, q.running_tasks()), out);
  return ids(out);
}

std::vector<std::string> policy_victims(const volcano_capacity_policy& p, const job& j) {
  std::vector<victim> out;
  p.victims(j, out);
  return ids(out);
}

}  // namespace

TEST_CASE("volcano_capacity: policy victims follow allocation order across releases and re-commits") {
  // a (deserved 4) and c (4) run over their share of 16 GPUs; b (8) reclaims
  auto queue = [](const std::string& name, int deserved) {
    return json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "Queue"},
                {"metadata", {{"name", name}}},
                {"spec", {{"reclaimable", true}, {"deserved", {{"nvidia.com/gpu", deserved}}}}}};
  };
  resource_registry reg;
  volcano_capacity_policy p(load_volcano_capacity(json::array({queue("a", 4), queue("b", 8), queue("c", 4)}), reg,
                                               resource_vector{{gpu, 16}}));
  for (int i = 0; i < 6; ++i) p.commit(gpu_task("a-" + std::to_string(i), "a", 1));
  for (int i = 0; i < 5; ++i) p.commit(gpu_task("c-" + std::to_string(i), "c", 1));
  const job reclaimer = gpu_task("b-0", "b", 3);

  const auto first = policy_victims(p, reclaimer);
  REQUIRE_FALSE(first.empty());
  CHECK(first == reclaimable_over_running(p, reclaimer));

  // a failed trial: the first victims are released and committed again (they move to the end)
  p.release(first[0]);
  p.release(first[1]);
  CHECK(policy_victims(p, reclaimer) == reclaimable_over_running(p, reclaimer));
  p.commit(gpu_task(first[1], first[1].substr(0, 1), 1));
  p.commit(gpu_task(first[0], first[0].substr(0, 1), 1));
  const auto after = policy_victims(p, reclaimer);
  CHECK(after == reclaimable_over_running(p, reclaimer));
  CHECK(after != first);  // the order moved with the re-commits

  // finished tasks leave; new ones join at the end
  p.release("a-3");
  p.release("c-4");
  p.commit(gpu_task("a-9", "a", 2));
  CHECK(policy_victims(p, reclaimer) == reclaimable_over_running(p, reclaimer));

  // an unknown task is an error and changes nothing
  CHECK_THROWS_AS(p.release("nope"), unknown_entity_error);
  CHECK(policy_victims(p, reclaimer) == reclaimable_over_running(p, reclaimer));
}

TEST_CASE("volcano_capacity: a task allocated after releasing the last one is the newest, in every order") {
  auto c = flat_four();
  const std::string long_id(40, 'y');
  c.allocate("first", "q2", {{gpu, 1}}, volcano_capacity_task_meta{1, true});
  for (int round = 0; round < 3; ++round) {
    c.allocate(long_id, "q2", {{gpu, 2}}, volcano_capacity_task_meta{1, true});
    c.deallocate(long_id);
  }
  c.allocate("second", "q2", {{gpu, 3}}, volcano_capacity_task_meta{1, true});
  c.allocate(long_id, "q1", {{gpu, 2}}, volcano_capacity_task_meta{1, true});
  CHECK(c.running_tasks() == std::vector<std::string>{"first", "second", long_id});
  CHECK(c.task_queue(long_id) == c.index("q1"));
  CHECK(alloc(c, "q2") == 4);
  std::vector<victim> v;
  c.preemptable_in_queue("q2", 5, v);
  REQUIRE(v.size() == 2);
  CHECK(v[0].job_id == "second");  // the newest first
  CHECK(v[1].job_id == "first");
}

TEST_CASE("volcano_capacity: more tracked resources than fit inline are counted and checked alike") {
  std::vector<resource_id> dims;
  resource_vector total;
  for (resource_id r = 100; r < 112; ++r) {
    dims.push_back(r);
    total.set(r, 10);
  }
  volcano_capacity_model c(dims, total, {cq("q", {{111, 4}})});
  c.allocate("a", "q", {{111, 3}, {100, 2}});
  CHECK(c.allocated(0, c.dim_index(111)) == 3);
  CHECK(c.allocated(0, c.dim_index(100)) == 2);
  REQUIRE_THROWS_AS(c.allocate("b", "q", {{105, -1}}), validation_error);
  REQUIRE_THROWS_AS(c.allocate("b", "q", {{7, 1}}), unknown_entity_error);
  CHECK(c.running_tasks().size() == 1);
  c.deallocate("a");
  CHECK(c.allocated(0, c.dim_index(111)) == 0);
}
