// SPDX-License-Identifier: Apache-2.0
// Tests of the Volcano queue model (proportion plugin + the guarantee of Volcano's
// queue resource reservation design, docs/volcano.md#references).
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/big_int.hpp>
#include <quota/detail/volcano_elastic.hpp>
#include <quota/volcano.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;
constexpr resource_id cpu = resources::cpu;

volcano_queue_spec qs(std::string name, std::int64_t weight, resource_vector guarantee = {},
                      resource_vector capability = {}) {
  volcano_queue_spec q;
  q.name = std::move(name);
  q.weight = weight;
  q.guarantee = std::move(guarantee);
  q.capability = std::move(capability);
  return q;
}

volcano_model seed_three() {
  return volcano_model({gpu}, resource_vector{{gpu, 30}},
                       {qs("queue1", 1, {{gpu, 5}}), qs("queue2", 1), qs("queue3", 1, {}, {{gpu, 10}})});
}

std::int64_t rc(const volcano_model& t, std::string_view q) {
  return t.real_capability(t.index(q), 0);
}

}  // namespace

TEST_CASE("volcano: seed table 1 realCapability 30/25/10") {
  auto t = seed_three();
  CHECK(rc(t, "queue1") == 30);
  CHECK(rc(t, "queue2") == 25);
  CHECK(rc(t, "queue3") == 10);
}

TEST_CASE("volcano: seed table 2 after queue4 realCapability 20/15/10/25 and deserved 6/6/6/12") {
  auto t = seed_three();
  for (auto n : {"queue1", "queue2", "queue3"}) t.set_pending(n, {{gpu, 100}});
  t.compute_deserved();
  // Before queue4: 10 / 10 / 10 (queue3 capped at 10, the rest split evenly).
  for (auto n : {"queue1", "queue2", "queue3"}) CHECK(t.deserved_floor(t.index(n), 0) == 10);
  t.add_queue(qs("queue4", 2, {{gpu, 10}}));
  CHECK(rc(t, "queue1") == 20);
  CHECK(rc(t, "queue2") == 15);
  CHECK(rc(t, "queue3") == 10);
  CHECK(rc(t, "queue4") == 25);
  t.set_pending("queue4", {{gpu, 100}});
  t.compute_deserved();
  const std::int64_t want[] = {6, 6, 6, 12};
  for (std::size_t q = 0; q < 4; ++q) {
    CHECK(t.deserved_floor(q, 0) == want[q]);
    CHECK(t.deserved_ceil(q, 0) == want[q]);
  }
}

TEST_CASE("volcano: seed variant queue4 asks for only 2 GPUs gets its guarantee 10, others 20/3") {
  auto t = seed_three();
  for (auto n : {"queue1", "queue2", "queue3"}) t.set_pending(n, {{gpu, 100}});
  t.add_queue(qs("queue4", 2, {{gpu, 10}}));
  t.set_pending("queue4", {{gpu, 2}});
  t.compute_deserved();
  CHECK(t.deserved_floor(3, 0) == 10);
  for (std::size_t q = 0; q < 3; ++q) {
    CHECK(t.deserved_floor(q, 0) == 6);  // exactly 20/3
    CHECK(t.deserved_ceil(q, 0) == 7);
  }
}

TEST_CASE("volcano: capability semantics cpu 0 unlimited, listed gpu 0 is zero") {
  volcano_model t({cpu, gpu}, resource_vector{{cpu, 8000}, {gpu, 4}},
                  {qs("a", 1, {}, {{cpu, 0}, {gpu, 0}}), qs("b", 1)});
  CHECK(t.real_capability(0, 0) == 8000);
  CHECK(t.real_capability(0, 1) == 0);
  CHECK(t.real_capability(1, 1) == 4);
}

TEST_CASE("volcano: validation names the queue and lists all problems") {
  try {
    volcano_model t({gpu}, resource_vector{{gpu, 10}},
                    {qs("g_over_cap", 1, {{gpu, 6}}, {{gpu, 5}}), qs("neg", -1, {{gpu, 6}}), qs("orphan", 1)});
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const std::string w = e.what();
    CHECK(w.find("g_over_cap") != std::string::npos);
    CHECK(w.find("neg/spec/weight") != std::string::npos);
    CHECK(w.find("sum of guarantees") != std::string::npos);
    CHECK(e.problems().size() == 3);
  }
  auto p = qs("x", 1);
  p.parent = "nope";
  REQUIRE_THROWS_AS(volcano_model({gpu}, resource_vector{{gpu, 10}}, {p}), validation_error);
  auto a = qs("a", 1), b = qs("b", 1);
  a.parent = "b";
  b.parent = "a";
  REQUIRE_THROWS_AS(volcano_model({gpu}, resource_vector{{gpu, 10}}, {a, b}), validation_error);
}

TEST_CASE("volcano: add_queue over the total is rejected and state unchanged") {
  auto t = seed_three();
  REQUIRE_THROWS_AS(t.add_queue(qs("big", 1, {{gpu, 26}})), validation_error);
  CHECK(t.size() == 3);
  CHECK(rc(t, "queue2") == 25);
}

TEST_CASE("volcano: allocatable allows within deserved and denies beyond it") {
  auto t = seed_three();
  for (auto n : {"queue1", "queue2", "queue3"}) t.set_pending(n, {{gpu, 100}});
  t.compute_deserved();
  t.allocate("t1", "queue2", {{gpu, 8}});
  CHECK(t.allocatable(1, {{gpu, 2}}).allowed());
  auto d = t.allocatable(1, {{gpu, 3}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "queue2");
  CHECK(d.reasons()[0].limit == 10);
  CHECK(d.reasons()[0].used == 8);
  CHECK(t.preemptive(1, {{gpu, 3}}).denied());
  CHECK(t.preemptive(1, {{gpu, 2}}).allowed());
}

TEST_CASE("volcano: guarantees that fill the cluster leave every queue its guarantee, whatever it asks") {
  for (const bool upstream : {false, true}) {
    INFO("upstream " << upstream);
    volcano_options opts;
    opts.upstream = upstream;
    // the levels where the queues start to grow: a at 6/1, b at 4/3, c at 0/2
    volcano_model t({cpu}, resource_vector{{cpu, 10}}, {qs("a", 1, {{cpu, 6}}), qs("b", 3, {{cpu, 4}}), qs("c", 2)},
                    opts);
    t.set_pending("a", {{cpu, 20}});
    t.set_pending("b", {{cpu, 20}});
    t.set_pending("c", {{cpu, 5}});
    t.compute_deserved();
    for (const auto& [q, want] : {std::pair{"a", 6}, {"b", 4}, {"c", 0}}) {
      INFO(q);
      CHECK(t.deserved_floor(t.index(q), 0) == want);
      CHECK(t.deserved_ceil(t.index(q), 0) == want);
    }
  }
}

TEST_CASE("volcano: the water level falls between breakpoints of many queues as a sort would place it") {
  // 200 queues, weights 1..4, guarantees and demands at random: the deserved
  // sum equals the total, and each queue's deserved is max(g, min(b, w L)) for
  // one level L, found here by bisection over exact fractions
  std::mt19937_64 rng(7);
  std::vector<volcano_queue_spec> specs;
  std::vector<std::int64_t> g(200), b(200), w(200);
  std::int64_t gsum = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    w[i] = 1 + static_cast<std::int64_t>(rng() % 4);
    g[i] = static_cast<std::int64_t>(rng() % 3 == 0 ? rng() % 50 : 0);
    b[i] = static_cast<std::int64_t>(rng() % 400);
    gsum += g[i];
    specs.push_back(qs("q" + std::to_string(i), w[i], g[i] ? resource_vector{{cpu, g[i]}} : resource_vector{}));
  }
  const std::int64_t total = gsum + 20'000;
  volcano_model t({cpu}, resource_vector{{cpu, total}}, specs);
  for (std::size_t i = 0; i < 200; ++i) t.set_pending("q" + std::to_string(i), {{cpu, b[i]}});
  t.compute_deserved();
  std::int64_t floors = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    const auto lo = t.deserved_floor(i, 0), hi = t.deserved_ceil(i, 0);
    CHECK(lo >= std::min(g[i], std::max(g[i], b[i])));
    CHECK(hi <= std::max(g[i], b[i]));
    floors += lo;
  }
  // the exact deserved values sum to the total; their floors fall short by less than one per queue
  CHECK(floors <= total);
  CHECK(floors > total - 200);
  // one level for all: a queue strictly between its bounds has deserved w L,
  // so deserved / w is the same fraction for every such queue
  std::optional<wide_fraction> level;
  for (std::size_t i = 0; i < 200; ++i) {
    const auto exact = t.deserved_exact(i, 0);
    if (exact <= wide_fraction(g[i]) || exact >= wide_fraction(b[i])) continue;
    const wide_fraction l(exact.num(), exact.den() * w[i]);
    if (level)
      CHECK(l == *level);
    else
      level = l;
  }
  CHECK(level.has_value());
}

TEST_CASE("volcano: multi-dimension queue short in cpu but satisfied in gpu") {
  volcano_model t({cpu, gpu}, resource_vector{{cpu, 10000}, {gpu, 4}}, {qs("a", 1), qs("b", 1)});
  t.set_pending("a", {{cpu, 10000}});
  t.set_pending("b", {{cpu, 10000}, {gpu, 4}});
  t.compute_deserved();
  CHECK(t.deserved_floor(0, 0) == 5000);
  CHECK(t.deserved_floor(0, 1) == 0);
  CHECK(t.deserved_floor(1, 1) == 4);  // a asks no GPU, b gets all
  t.allocate("b1", "b", {{cpu, 5000}, {gpu, 1}});
  auto d = t.allocatable(1, {{cpu, 1}, {gpu, 1}});
  REQUIRE(d.denied());
  CHECK(d.reasons().size() == 1);
  CHECK(d.reasons()[0].resource == cpu);
  CHECK(t.allocatable(1, {{gpu, 3}}).allowed());
}

TEST_CASE("volcano: overused when deserved <= allocated in every dimension") {
  auto t = seed_three();
  t.set_pending("queue2", {{gpu, 100}});
  t.set_pending("queue1", {{gpu, 100}});
  t.compute_deserved();  // 15 / 15 / 0
  CHECK_FALSE(t.overused(0));
  t.allocate("a", "queue1", {{gpu, 14}});
  CHECK_FALSE(t.overused(0));
  t.allocate("b", "queue1", {{gpu, 1}});
  CHECK(t.overused(0));
}

TEST_CASE("volcano: fractional deserved compared exactly") {
  volcano_model t({gpu}, resource_vector{{gpu, 10}}, {qs("a", 1), qs("b", 1), qs("c", 1)});
  for (auto n : {"a", "b", "c"}) t.set_pending(n, {{gpu, 10}});
  t.compute_deserved();  // 10/3 each
  t.allocate("x", "a", {{gpu, 3}});
  CHECK(t.allocatable(0, {{gpu, 1}}).denied());  // 4 > 10/3
  CHECK_FALSE(t.overused(0));                    // 10/3 > 3
  t.allocate("y", "a", {{gpu, 1}});
  CHECK(t.overused(0));
}

TEST_CASE("volcano: weight zero gets only its guarantee") {
  volcano_model t({gpu}, resource_vector{{gpu, 10}}, {qs("z", 0, {{gpu, 2}}), qs("w", 1)});
  t.set_pending("z", {{gpu, 10}});
  t.set_pending("w", {{gpu, 10}});
  t.compute_deserved();
  CHECK(t.deserved_floor(0, 0) == 2);
  CHECK(t.deserved_floor(1, 0) == 8);
}

TEST_CASE("volcano: job enqueueable against realCapability, closed queue, no minResources") {
  auto t = seed_three();
  const auto q3 = t.index("queue3");
  t.allocate("r", "queue3", {{gpu, 6}});
  CHECK(t.job_enqueueable(q3, {{gpu, 4}}).allowed());
  auto d = t.job_enqueueable(q3, {{gpu, 5}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "over_real_capability");
  CHECK(t.job_enqueueable(q3, {{gpu, 5}}, {{gpu, 1}}).allowed());  // elastic part
  t.enqueue("queue3", {{gpu, 4}});
  CHECK(t.inqueue(q3, 0) == 4);
  CHECK(t.job_enqueueable(q3, {{gpu, 1}}).denied());
  CHECK(t.job_enqueueable(q3, {}).allowed());
  auto closed = qs("c", 1);
  closed.state = volcano_queue_state::closed;
  t.add_queue(closed);
  CHECK(t.job_enqueueable(t.index("c"), {{gpu, 1}}).has_rule("queue_not_open"));
}

TEST_CASE("volcano: overcommit gate and the seed's guarantee exception") {
  auto t = seed_three();
  t.add_queue(qs("queue4", 2, {{gpu, 10}}));
  t.allocate("a", "queue1", {{gpu, 12}});
  t.allocate("b", "queue2", {{gpu, 12}});
  t.allocate("c", "queue3", {{gpu, 12}});  // 36 = 30 * 1.2: nothing idle
  CHECK(t.overcommit_gate(t.index("queue2"), {{gpu, 1}}).has_rule("overcommit"));
  CHECK(t.overcommit_gate(t.index("queue4"), {{gpu, 2}}).allowed());  // fits unused guarantee
  CHECK(t.overcommit_gate(t.index("queue4"), {{gpu, 11}}).denied());
  t.deallocate("c");
  CHECK(t.overcommit_gate(t.index("queue2"), {{gpu, 12}}).allowed());  // 36 - 24
  CHECK(t.overcommit_gate(t.index("queue2"), {{gpu, 13}}).denied());
}

TEST_CASE("volcano: reclaim victims with a running copy of allocation") {
  auto t = seed_three();
  t.add_queue(qs("queue4", 2, {{gpu, 10}}));
  for (auto n : {"queue1", "queue2", "queue3", "queue4"}) t.set_pending(n, {{gpu, 100}});
  t.allocate("q1a", "queue1", {{gpu, 5}});
  t.allocate("q1b", "queue1", {{gpu, 5}});
  t.allocate("q2a", "queue2", {{gpu, 10}});
  t.allocate("q3a", "queue3", {{gpu, 6}});
  t.compute_deserved();
  std::vector<victim> v;
  t.reclaimable("queue4", t.running_tasks(), v);
  // queue1 10 > 6: q1a victim, then 5 <= 6 stops; queue2 10 > 6 victim; queue3 6 <= 6 no.
  REQUIRE(v.size() == 2);
  CHECK(v[0].job_id == "q1a");
  CHECK(v[1].job_id == "q2a");
  auto nr = qs("keep", 1);
  nr.reclaimable = false;
  t.add_queue(nr);
  t.allocate("k", "keep", {{gpu, 1}});
  t.compute_deserved();
  v.clear();
  t.reclaimable("queue4", {"k"}, v);
  CHECK(v.empty());
}

TEST_CASE("volcano: non-preemptible tasks are left out before the reclaim walk counts a queue's share") {
  auto t = seed_three();
  t.add_queue(qs("queue4", 2, {{gpu, 10}}));
  for (auto n : {"queue1", "queue2", "queue3", "queue4"}) t.set_pending(n, {{gpu, 100}});
  // queue1 holds 10 > its deserved 6: a non-preemptible task started first, then a preemptible one
  t.allocate("q1-pinned", "queue1", {{gpu, 5}}, volcano_task_meta{0, false});
  t.allocate("q1-free", "queue1", {{gpu, 5}});
  t.compute_deserved();
  std::vector<victim> v;
  t.reclaimable_running("queue4", v);
  // the pinned task cannot go: the walk takes the preemptible one (counting it would
  // have stopped the walk at 5 <= 6 and left no usable victim)
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "q1-free");
  std::vector<victim> w;
  t.reclaimable("queue4", t.running_tasks(), w);
  CHECK(w == v);
}

TEST_CASE(
    "volcano: Volcano's preempt candidates are the queue's lower-priority preemptible tasks, least important first") {
  auto t = seed_three();
  t.allocate("a-old-low", "queue1", {{gpu, 1}}, volcano_task_meta{1, true});
  t.allocate("a-new-low", "queue1", {{gpu, 1}}, volcano_task_meta{1, true});
  t.allocate("a-mid", "queue1", {{gpu, 1}}, volcano_task_meta{5, true});
  t.allocate("a-pinned", "queue1", {{gpu, 1}}, volcano_task_meta{0, false});
  t.allocate("a-high", "queue1", {{gpu, 1}}, volcano_task_meta{9, true});
  t.allocate("b-low", "queue2", {{gpu, 1}}, volcano_task_meta{0, true});
  std::vector<victim> v;
  t.preemptable_in_queue("queue1", 9, v);
  std::vector<std::string> ids;
  for (const auto& x : v) ids.push_back(x.job_id);
  CHECK(ids == std::vector<std::string>{"a-new-low", "a-old-low", "a-mid"});
  CHECK(v[0].rule == "preempt_lower_priority");
  // through the adapter's node-level rule
  volcano_policy p(seed_three());
  job j;
  j.queue = "queue2";
  j.request = {{gpu, 1}};
  for (auto [id, prio] : {std::pair{"x", 1}, std::pair{"y", 3}}) {
    j.id = id;
    j.priority = prio;
    p.commit(j);
  }
  j.id = "z";
  j.priority = 3;
  std::vector<victim> n;
  p.node_candidates(j, n);
  REQUIRE(n.size() == 1);
  CHECK(n[0].job_id == "x");
}

TEST_CASE("volcano: typed errors for double allocation, unknown task/queue, negative amount; state unchanged") {
  auto t = seed_three();
  t.allocate("a", "queue1", {{gpu, 2}});
  REQUIRE_THROWS_AS(t.allocate("a", "queue1", {{gpu, 2}}), state_error);
  REQUIRE_THROWS_AS(t.allocate("b", "nope", {{gpu, 2}}), unknown_entity_error);
  REQUIRE_THROWS_AS(t.allocate("c", "queue1", {{gpu, -1}}), validation_error);
  REQUIRE_THROWS_AS(t.deallocate("zz"), unknown_entity_error);
  REQUIRE_THROWS_AS(t.dequeue("queue1", {{gpu, 1}}), state_error);
  CHECK(t.allocated(0, 0) == 2);
  CHECK(t.running_tasks().size() == 1);
  t.deallocate("a");
  CHECK(t.allocated(0, 0) == 0);
}

TEST_CASE("volcano: policy adapter") {
  auto t = seed_three();
  for (auto n : {"queue1", "queue2", "queue3"}) t.set_pending(n, {{gpu, 100}});
  t.compute_deserved();
  volcano_policy p(t);
  job j;
  j.id = "j1";
  j.queue = "queue3";
  j.request = {{gpu, 10}};
  CHECK(p.check(j).allowed());
  p.commit(j);
  j.id = "j2";
  j.request = {{gpu, 1}};
  CHECK(p.check(j).denied());
  j.queue = "queue1";
  std::vector<victim> v;
  p.victims(j, v);
  CHECK(v.empty());  // queue3 is at, not over, its deserved
  p.release("j1");
  REQUIRE_THROWS_AS(p.release("j1"), unknown_entity_error);
}

TEST_CASE("volcano: randomized invariants against a bisection oracle, order independent") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + static_cast<int>(rng() % 8);
    const std::int64_t total = 1 + static_cast<std::int64_t>(rng() % 100);
    std::vector<volcano_queue_spec> specs;
    std::vector<std::int64_t> req;
    std::int64_t gsum = 0;
    for (int i = 0; i < n; ++i) {
      std::int64_t g = static_cast<std::int64_t>(rng() % 10);
      if (gsum + g > total) g = 0;
      gsum += g;
      resource_vector cap;
      if (rng() % 2) cap.set(gpu, g + static_cast<std::int64_t>(rng() % 50));
      resource_vector gv;
      if (g) gv.set(gpu, g);
      specs.push_back(qs("q" + std::to_string(i), static_cast<std::int64_t>(rng() % 4), gv, cap));
      req.push_back(static_cast<std::int64_t>(rng() % 60));
    }
    auto build = [&](bool reversed) {
      auto s = specs;
      if (reversed) std::reverse(s.begin(), s.end());
      volcano_model t({gpu}, resource_vector{{gpu, total}}, s);
      for (int i = 0; i < n; ++i)
        t.set_pending(specs[static_cast<std::size_t>(i)].name, {{gpu, req[static_cast<std::size_t>(i)]}});
      t.compute_deserved();
      return t;
    };
    const auto a = build(false), b = build(true);
    // Oracle: f(L) = sum max(g, min(bound, w L)) solved by bisection in doubles.
    auto f = [&](double L) {
      double s = 0;
      for (int i = 0; i < n; ++i) {
        const auto q = a.index(specs[static_cast<std::size_t>(i)].name);
        const double g = static_cast<double>(a.guarantee(q, 0));
        const double bd = static_cast<double>(std::min(a.real_capability(q, 0), req[static_cast<std::size_t>(i)]));
        s += std::max(g, std::min(bd, static_cast<double>(specs[static_cast<std::size_t>(i)].weight) * L));
      }
      return s;
    };
    double lo = 0, hi = 1e4;
    for (int it = 0; it < 200; ++it) {
      const double mid = (lo + hi) / 2;
      (f(mid) < static_cast<double>(total) ? lo : hi) = mid;
    }
    std::int64_t sum_lo = 0;
    bool forced = false;
    for (int i = 0; i < n; ++i) {
      const auto& nm = specs[static_cast<std::size_t>(i)].name;
      const auto qa = a.index(nm), qb = b.index(nm);
      CHECK(a.deserved_floor(qa, 0) == b.deserved_floor(qb, 0));
      CHECK(a.deserved_ceil(qa, 0) == b.deserved_ceil(qb, 0));
      const auto g = a.guarantee(qa, 0);
      CHECK(a.deserved_floor(qa, 0) >= g);
      if (g > a.real_capability(qa, 0)) forced = true;
      if (g <= a.real_capability(qa, 0)) CHECK(a.deserved_ceil(qa, 0) <= a.real_capability(qa, 0));
      const double bd = static_cast<double>(std::min(a.real_capability(qa, 0), req[static_cast<std::size_t>(i)]));
      const double want = std::max(static_cast<double>(g),
                                   std::min(bd, static_cast<double>(specs[static_cast<std::size_t>(i)].weight) * hi));
      CHECK(std::fabs(want - static_cast<double>(a.deserved_floor(qa, 0))) <= 1.0 + 1e-6);
      sum_lo += a.deserved_floor(qa, 0);
    }
    if (!forced) CHECK(sum_lo <= total);
  }
}

#include <quota/volcano_json.hpp>

TEST_CASE("volcano: Volcano Queue and PodGroup JSON reproduce the seed table") {
  resource_registry reg;
  const auto doc = load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/volcano/seed_queues.json");
  auto specs = parse_volcano_queues(doc, reg);
  REQUIRE(specs.size() == 4);
  CHECK(specs[3].state == volcano_queue_state::closed);
  volcano_model t({gpu}, resource_vector{{gpu, 30}}, specs);
  CHECK(t.real_capability(0, 0) == 20);
  CHECK(t.real_capability(1, 0) == 15);
  CHECK(t.real_capability(2, 0) == 10);
  CHECK(t.real_capability(3, 0) == 25);
  const auto pgs = parse_volcano_podgroups(
      load_json_file(std::string(QUOTA_SOURCE_DIR) + "/tests/data/volcano/podgroups.json"), reg);
  REQUIRE(pgs.size() == 1);
  CHECK(pgs[0].queue == "queue4");
  CHECK(pgs[0].min_resources.get(gpu) == 2);
  CHECK(t.job_enqueueable(t.index(pgs[0].queue), pgs[0].min_resources).has_rule("queue_not_open"));
  REQUIRE_THROWS_AS(
      parse_volcano_queues(
          json::parse(R"({"items":[{"metadata":{}},{"metadata":{"name":"x"},"spec":{"weight":"heavy"}}]})"), reg),
      validation_error);
}

TEST_CASE("volcano: Queue status.state is one of Volcano's four values; only Open schedules") {
  resource_registry reg;
  auto one = [&](const std::string& state) {
    const std::string doc = R"({"metadata":{"name":"q"},"status":{"state":")" + state + R"("}})";
    return parse_volcano_queues(json::parse(doc), reg).at(0).state;
  };
  CHECK(one("Open") == volcano_queue_state::open);
  CHECK(one("Closing") == volcano_queue_state::closing);
  CHECK(one("Closed") == volcano_queue_state::closed);
  CHECK(one("Unknown") == volcano_queue_state::closed);
  try {
    (void)one("Paused");
    FAIL("an unknown state was accepted");
  } catch (const validation_error& e) {
    CHECK_THAT(e.what(), Catch::Matchers::Contains("status.state") && Catch::Matchers::Contains("Paused"));
  }
  // spec.parent "root" and absent mean the same: a child of the root
  const auto specs = parse_volcano_queues(
      json::parse(R"([{"metadata":{"name":"a"},"spec":{"parent":"root"}},{"metadata":{"name":"b"}}])"), reg);
  CHECK(specs.at(0).parent.empty());
  CHECK(specs.at(1).parent.empty());
}

TEST_CASE("volcano: Queue spec.priority and creationTimestamp are read for queue order; a bad time names the field") {
  resource_registry reg;
  const json doc = json::parse(R"([
    {"kind": "Queue", "metadata": {"name": "late", "creationTimestamp": "2026-02-01T00:00:00Z"},
     "spec": {"weight": 1, "priority": 5}},
    {"kind": "Queue", "metadata": {"name": "early", "creationTimestamp": "2026-01-01T00:00:00Z"},
     "spec": {"weight": 1}}
  ])");
  auto specs = parse_volcano_queues(doc, reg);
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].priority == 5);
  CHECK(specs[1].created_ms < specs[0].created_ms);
  volcano_model t({gpu}, resource_vector{{gpu, 8}}, specs);
  t.compute_deserved();
  CHECK(t.compare_queues(t.index("late"), t.index("early")) < 0);  // priority first
  specs[0].priority = 0;
  volcano_model u({gpu}, resource_vector{{gpu, 8}}, specs);
  u.compute_deserved();
  CHECK(u.compare_queues(u.index("early"), u.index("late")) < 0);  // then (equal share) creation
  const json bad = json::parse(R"([{"kind": "Queue", "metadata": {"name": "q", "creationTimestamp": 7}}])");
  try {
    (void)parse_volcano_queues(bad, reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE_FALSE(e.problems().empty());
    CHECK(e.problems()[0].path.find("metadata.creationTimestamp") != std::string::npos);
  }
}

// ---- upstream fidelity (Volcano's proportion plugin) ----

TEST_CASE("volcano: upstream pods take no part in allocatable, preemptive, enqueue and the overcommit gate") {
  // Volcano adds one `pods` to every task and leaves it out of
  // LessEqualWithDimensionAndResourcesName (IsIgnoredScalarResource).
  constexpr resource_id pods = resources::pods;
  for (const bool upstream : {false, true}) {
    volcano_model t({gpu, pods}, resource_vector{{gpu, 8}, {pods, 4}}, {qs("q1", 1), qs("q2", 1)},
                    volcano_options{upstream});
    t.set_pending("q1", {{gpu, 4}, {pods, 2}});
    t.set_pending("q2", {{gpu, 4}, {pods, 2}});
    t.compute_deserved();
    REQUIRE(t.deserved_floor(0, 1) == 2);  // pods still get a deserved
    t.allocate("t1", "q1", {{gpu, 2}, {pods, 2}});
    const resource_vector task{{gpu, 2}, {pods, 1}};  // pods 3 > deserved 2, gpu 4 <= 4
    CHECK(t.allocatable(0, task).allowed());
    CHECK(t.preemptive(0, task).allowed());
    CHECK(t.allocatable(0, {{gpu, 3}, {pods, 1}}).has_rule("over_deserved"));  // gpu still counts
    // realCapability pods 4: 2 + 3 > 4 does not matter, gpu 2 + 2 <= 8 does
    CHECK(t.job_enqueueable(0, {{gpu, 2}, {pods, 3}}).allowed());
    // total pods 4 x 1.2 = 4, 2 used: 3 more would not fit; gpu 9 - 2 fits 2
    CHECK(t.overcommit_gate(0, {{gpu, 2}, {pods, 3}}).allowed());
    // reclaim keeps counting pods (ReclaimableFn uses LessEqual over every
    // dimension): q2 over its deserved only in pods gives its task
    t.allocate("t2", "q2", {{gpu, 1}, {pods, 3}});
    std::vector<victim> v;
    t.reclaimable("q1", {"t2"}, v);
    REQUIRE(v.size() == 1);
    CHECK(v[0].job_id == "t2");
  }
}

TEST_CASE("volcano: upstream all queue weights 0 give every queue deserved 0; the default keeps guarantees") {
  auto make = [](bool upstream) {
    volcano_model t({gpu}, resource_vector{{gpu, 10}}, {qs("z1", 0, {{gpu, 4}}), qs("z2", 0), qs("idle", 1)},
                    volcano_options{upstream});
    t.set_pending("z1", {{gpu, 6}});
    t.set_pending("z2", {{gpu, 6}});
    t.compute_deserved();
    return t;
  };
  const auto def = make(false);
  CHECK(def.deserved_floor(0, 0) == 4);  // default: the guarantee
  CHECK(def.deserved_floor(1, 0) == 0);
  CHECK(def.allocatable(0, {{gpu, 4}}).allowed());
  // upstream: the queues with jobs weigh 0 together (`idle` has none), so
  // Volcano's loop stops before its first round: nothing is deserved
  auto up = make(true);
  for (std::size_t q = 0; q < up.size(); ++q) {
    CHECK(up.deserved_floor(q, 0) == 0);
    CHECK(up.deserved_exact(q, 0) == 0);
  }
  CHECK(up.allocatable(0, {{gpu, 1}}).has_rule("over_deserved"));
  // once a queue of positive weight has jobs, water-filling runs as usual
  up.set_pending("idle", {{gpu, 3}});
  up.compute_deserved();
  CHECK(up.deserved_floor(0, 0) == 4);
  CHECK(up.deserved_floor(2, 0) == 3);
}

TEST_CASE("volcano: upstream sum of guarantees above the cluster total is a warning, with Volcano's realCapability") {
  auto specs = [] {
    return std::vector<volcano_queue_spec>{qs("a", 1, {{gpu, 8}}), qs("b", 1, {{gpu, 6}}), qs("c", 1)};
  };
  CHECK_THROWS_AS(volcano_model({gpu}, resource_vector{{gpu, 10}}, specs()), validation_error);
  volcano_model t({gpu}, resource_vector{{gpu, 10}}, specs(), volcano_options{true});
  REQUIRE(t.warnings().size() == 1);
  CHECK(t.warnings()[0].path == std::string("total/nvidia.com/gpu"));
  // ExceededPart(total, guarantees) is 0: each queue keeps its own guarantee
  CHECK(rc(t, "a") == 8);
  CHECK(rc(t, "b") == 6);
  CHECK(rc(t, "c") == 0);
  volcano_model fine({gpu}, resource_vector{{gpu, 20}}, specs(), volcano_options{true});
  CHECK(fine.warnings().empty());
  fine.add_queue(qs("d", 1, {{gpu, 7}}));  // 21 > 20: accepted, warned
  CHECK(fine.warnings().size() == 1);
  CHECK(rc(fine, "d") == 7);
  // the proportion plugin never reads spec.parent: a bad one is a warning too
  auto orphan = qs("e", 1);
  orphan.parent = "ghost";
  CHECK_THROWS_AS(volcano_model({gpu}, resource_vector{{gpu, 20}}, {orphan}), validation_error);
  volcano_model o({gpu}, resource_vector{{gpu, 20}}, {orphan}, volcano_options{true});
  REQUIRE(o.warnings().size() == 1);
  CHECK(o.warnings()[0].path == "queue/e/spec/parent");
}

TEST_CASE("volcano: upstream overcommit gate has no guarantee exception") {
  for (const bool upstream : {false, true}) {
    volcano_model t({gpu}, resource_vector{{gpu, 30}}, {qs("queue1", 1), qs("queue4", 2, {{gpu, 10}})},
                    volcano_options{upstream});
    t.allocate("a", "queue1", {{gpu, 36}});  // 30 x 1.2: nothing idle
    // the reservation design admits a job that fits queue4's unused guarantee; Volcano's
    // overcommit plugin compares with the idle cluster only
    CHECK(t.overcommit_gate(1, {{gpu, 2}}).allowed() == !upstream);
  }
}

TEST_CASE("volcano: upstream enqueue reads minResources, inqueue and the queue's elastic resources") {
  volcano_model t({gpu}, resource_vector{{gpu, 10}}, {qs("q", 1, {}, {{gpu, 8}})}, volcano_options{true});
  t.allocate("r", "q", {{gpu, 6}});  // a job of minResources 2 holding 6: elastic 4
  t.set_elastic("q", {{gpu, 4}});
  CHECK(t.elastic(0, 0) == 4);
  // minResources + allocated + inqueue - elastic <= realCapability: 6 + 6 - 4 <= 8
  CHECK(t.job_enqueueable(0, {{gpu, 6}}).allowed());
  CHECK(t.job_enqueueable(0, {{gpu, 7}}).has_rule("over_real_capability"));
  t.enqueue("q", {{gpu, 6}});  // JobEnqueuedFn: inqueue grows by minResources
  CHECK(t.inqueue(0, 0) == 6);
  CHECK(t.job_enqueueable(0, {{gpu, 1}}).denied());
  t.set_elastic("q", {});
  CHECK(t.elastic(0, 0) == 0);
}

TEST_CASE("volcano: upstream deserved is exact as a fraction, not only floor and ceiling") {
  volcano_model t({gpu}, resource_vector{{gpu, 20}}, {qs("a", 1), qs("b", 1), qs("c", 1)}, volcano_options{true});
  for (auto n : {"a", "b", "c"}) t.set_pending(n, {{gpu, 100}});
  t.compute_deserved();
  CHECK(t.deserved_exact(0, 0) == wide_fraction(20, 3));
  CHECK(to_rational(t.deserved_exact(0, 0)) == rational(20, 3));  // the explicit widening
  CHECK(t.deserved_floor(0, 0) == 6);
  CHECK(t.deserved_ceil(0, 0) == 7);
}

TEST_CASE("volcano: upstream a queue without jobs sets no guarantee aside in deserved") {
  // Volcano's proportion builds its queues from the session's jobs: an idle
  // queue's guarantee lowers the others' realCapability (totalGuarantee
  // counts every Queue) but is not taken out of what the loop hands out.
  auto make = [](bool upstream) {
    volcano_model t({gpu}, resource_vector{{gpu, 10}}, {qs("idle", 1, {{gpu, 5}}), qs("a", 1), qs("b", 1)},
                    volcano_options{upstream});
    t.set_pending("a", {{gpu, 10}});
    t.set_pending("b", {{gpu, 10}});
    t.compute_deserved();
    return t;
  };
  const auto def = make(false);
  CHECK(def.deserved_exact(1, 0) == wide_fraction(5, 2));  // the idle guarantee is kept free
  CHECK(def.deserved_floor(0, 0) == 5);
  const auto up = make(true);
  CHECK(rc(up, "a") == 5);
  CHECK(up.deserved_floor(1, 0) == 5);  // 10 / 2, bounded by realCapability 5
  CHECK(up.deserved_floor(2, 0) == 5);
  CHECK(up.deserved_floor(0, 0) == 0);
}

TEST_CASE("volcano: upstream share leaves out dimensions with deserved 0") {
  // updateQueueAttrShare walks deserved.ResourceNames(): a dimension with
  // deserved 0 takes no part in the share, whatever is allocated in it.
  volcano_model t({gpu, cpu}, resource_vector{{gpu, 10}, {cpu, 10}}, {qs("a", 1, {}, {{gpu, 0}}), qs("b", 1)},
                  volcano_options{true});
  t.set_pending("a", {{cpu, 9}});
  t.set_pending("b", {{cpu, 8}});
  t.allocate("ta", "a", {{gpu, 2}, {cpu, 1}});  // capability gpu 0: deserved gpu 0
  t.allocate("tb", "b", {{cpu, 2}});
  t.compute_deserved();
  REQUIRE(t.deserved_floor(0, 0) == 0);
  REQUIRE(t.deserved_floor(0, 1) == 5);
  CHECK(t.exact_share(0) == volcano_queue_share{1, wide_fraction(5)});  // cpu 1/5; gpu does not count
  CHECK(t.exact_share(1) == volcano_queue_share{2, wide_fraction(5)});
  CHECK(t.compare_queues(0, 1) < 0);
}

TEST_CASE("volcano: when every queue's demand fits, deserved is the demand and the share orders the queues") {
  // updateShare divides allocated by deserved whether or not the cluster is
  // contended: with room for every request, deserved = request, and the queue
  // that holds more of its deserved goes later.
  volcano_model t({gpu}, resource_vector{{gpu, 100}}, {qs("a", 1), qs("b", 1)});
  t.set_pending("a", {{gpu, 2}});
  t.set_pending("b", {{gpu, 6}});
  t.allocate("ta", "a", {{gpu, 2}});  // a holds 2 of its 4
  t.allocate("tb", "b", {{gpu, 2}});  // b holds 2 of its 8
  t.compute_deserved();
  REQUIRE(t.deserved_floor(0, 0) == 4);
  REQUIRE(t.deserved_floor(1, 0) == 8);
  CHECK(t.deserved_exact(0, 0) == wide_fraction(4));
  CHECK(t.exact_share(0) == volcano_queue_share{2, wide_fraction(4)});
  CHECK(t.exact_share(1) == volcano_queue_share{2, wide_fraction(8)});
  CHECK(t.compare_queues(1, 0) < 0);  // b's share 1/4 is below a's 1/2
}

TEST_CASE("volcano: a job's elastic resources are what it holds beyond its minResources, summed per queue") {
  quota::job j;
  j.id = "a-1";
  j.queue = "a";
  j.pods = 4;
  j.min_pods = 3;
  j.request.set(quota::resources::nvidia_gpu, 10);
  // minResources: 3 of 4 pods of 10 GPUs, rounded up
  CHECK(quota::detail::volcano_min_resources(j).get(quota::resources::nvidia_gpu) == 8);
  quota::job whole = j;
  whole.id = "a-2";
  whole.min_pods = 4;
  CHECK(quota::detail::volcano_min_resources(whole).get(quota::resources::nvidia_gpu) == 10);

  quota::detail::volcano_elastic_book book;
  CHECK(book.add(j).get(quota::resources::nvidia_gpu) == 2);
  CHECK(book.add(whole).get(quota::resources::nvidia_gpu) == 2);  // a gang at its minimum adds nothing
  const std::string* q = book.remove("a-1");
  REQUIRE(q != nullptr);
  CHECK(*q == "a");
  CHECK(book.sum("a").get(quota::resources::nvidia_gpu) == 0);
  CHECK(book.remove("a-1") == nullptr);  // already out
}

TEST_CASE("volcano: shares compare exactly where allocated x deserved passes 128 bits") {
  // deserved = w L with 128-bit terms (weights add up beyond 64 bits); a share
  // is allocated / deserved, and comparing two multiplies three terms
  using quota::detail::int128;
  const int128 big = static_cast<int128>(INT64_MAX) * INT64_MAX;  // ~2^126
  const volcano_queue_share a{INT64_MAX, wide_fraction(big, big - 1)};
  const volcano_queue_share b{INT64_MAX - 1, wide_fraction(big - 2, big - 1)};
  const volcano_queue_share c{INT64_MAX, wide_fraction(big - 1, big - 2)};
  auto exact = [](const volcano_queue_share& s) { return rational(s.allocated) / to_rational(s.deserved); };
  for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}, std::pair{a, c}, std::pair{c, b}, std::pair{a, a}}) {
    CHECK(std::is_lt(x <=> y) == (exact(x) < exact(y)));
    CHECK((x == y) == (exact(x) == exact(y)));
  }
  CHECK(volcano_queue_share{} < volcano_queue_share{1, wide_fraction(big)});  // the share 0 is below any positive one
  CHECK(volcano_queue_share{2, wide_fraction(4)} == volcano_queue_share{1, wide_fraction(2)});
  CHECK(volcano_queue_share{-1, wide_fraction(2)} < volcano_queue_share{});
  CHECK(volcano_queue_share{3, wide_fraction(2)}.to_double() == 1.5);
}

// The policy skips the water-filling when every queue's request is what the
// last one read; deserved must then be what a full recompute gives, through
// admissions of pending and of unseen jobs, releases, withdrawals and a queue
// added in place.
TEST_CASE("volcano: deserved read through the policy equals a full recompute after every change") {
  std::mt19937_64 rng(19);
  volcano_model t({gpu, cpu}, resource_vector{{gpu, 40}, {cpu, 64'000}},
                  {qs("queue1", 1, {{gpu, 4}}), qs("queue2", 2), qs("queue3", 1, {}, {{gpu, 12}})});
  volcano_policy p(t);
  const std::vector<std::string> queues{"queue1", "queue2", "queue3"};
  std::vector<job> pending, running;
  auto same_as_recomputed = [&] {
    const volcano_model& now = p.tree();
    volcano_model fresh = now;
    fresh.compute_deserved();
    for (std::size_t q = 0; q < now.size(); ++q)
      for (std::size_t d = 0; d < now.dims().size(); ++d) {
        REQUIRE(now.deserved_exact(q, d) == fresh.deserved_exact(q, d));
        REQUIRE(now.deserved_floor(q, d) == fresh.deserved_floor(q, d));
        REQUIRE(now.deserved_ceil(q, d) == fresh.deserved_ceil(q, d));
      }
  };
  int next = 0;
  for (int step = 0; step < 600; ++step) {
    const auto pick = rng() % 5;
    if (pick == 0 || (pending.empty() && running.empty())) {
      job j;
      j.id = "job-with-an-id-longer-than-short-strings-" + std::to_string(next++);
      j.queue = queues[rng() % queues.size()];
      j.request = {{gpu, 1 + static_cast<std::int64_t>(rng() % 6)}, {cpu, 1'000}};
      if (rng() % 2) {
        p.pending_added(j);
        pending.push_back(j);
      } else {
        p.commit(j);  // a job the policy did not see waiting
        running.push_back(j);
      }
    } else if (pick == 1 && !pending.empty()) {
      const auto k = rng() % pending.size();
      p.commit(pending[k]);
      running.push_back(pending[k]);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (pick == 2 && !pending.empty()) {
      const auto k = rng() % pending.size();
      p.pending_withdrawn(pending[k].id);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (!running.empty()) {
      // the last one most often: an admission and release of the same job
      const auto k = rng() % 3 == 0 ? rng() % running.size() : running.size() - 1;
      (void)p.check(running[k]);
      p.release(running[k].id);
      if (rng() % 2) {
        p.commit(running[k]);  // admitted again: the request is as before the release
      } else {
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    same_as_recomputed();
    if (step == 300) {
      p.tree().add_queue(qs("queue4", 3, {{gpu, 2}}));
      same_as_recomputed();
    }
  }
}

// A task allocated after the release of the last one takes the place the
// release left at the end of the allocation order (the index keeps its node).
TEST_CASE("volcano: a task allocated after releasing the last one is the newest, in every order") {
  auto t = seed_three();
  const std::string long_id(40, 'x');
  t.allocate("first", "queue1", {{gpu, 1}}, volcano_task_meta{1, true});
  for (int round = 0; round < 3; ++round) {
    t.allocate(long_id, "queue1", {{gpu, 2}}, volcano_task_meta{1, true});
    t.deallocate(long_id);
  }
  t.allocate("second", "queue1", {{gpu, 3}}, volcano_task_meta{1, true});
  t.allocate(long_id, "queue2", {{gpu, 2}}, volcano_task_meta{1, true});
  CHECK(t.running_tasks() == std::vector<std::string>{"first", "second", long_id});
  CHECK(t.allocated(t.index("queue1"), 0) == 4);
  CHECK(t.allocated(t.index("queue2"), 0) == 2);
  std::vector<victim> v;
  t.preemptable_in_queue("queue1", 5, v);
  REQUIRE(v.size() == 2);
  CHECK(v[0].job_id == "second");  // the newest first
  CHECK(v[1].job_id == "first");
  t.deallocate(long_id);
  CHECK(t.allocated(t.index("queue2"), 0) == 0);
  REQUIRE_THROWS_AS(t.deallocate(long_id), unknown_entity_error);
}

TEST_CASE("volcano: the elastic book passes a queue's new elastic sum to the model, and nothing for a whole gang") {
  struct recorder {
    std::vector<std::pair<std::string, quota::amount>> calls;
    void set_elastic(std::string_view queue, const resource_vector& sum) {
      calls.emplace_back(std::string(queue), sum.get(gpu));
    }
  } m;
  quota::job part;
  part.id = "a-1";
  part.queue = "a";
  part.pods = 4;
  part.min_pods = 3;
  part.request.set(gpu, 10);
  quota::job whole = part;
  whole.id = "a-2";
  whole.min_pods = 4;
  quota::detail::volcano_elastic_book book;
  book.committed(part, m);
  book.committed(whole, m);  // holds nothing beyond its minResources: no sum changes
  book.released("a-2", m);
  REQUIRE(m.calls.size() == 1);
  CHECK(m.calls[0] == std::pair<std::string, quota::amount>{"a", 2});
  book.released("a-1", m);
  REQUIRE(m.calls.size() == 2);
  CHECK(m.calls[1] == std::pair<std::string, quota::amount>{"a", 0});
  book.released("a-1", m);  // already out
  CHECK(m.calls.size() == 2);
}
