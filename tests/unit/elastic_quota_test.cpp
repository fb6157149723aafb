// SPDX-License-Identifier: Apache-2.0
// Tests of the elastic quota model (nos ElasticQuota / CompositeElasticQuota).
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/elastic_quota.hpp>
#include <quota/gpu_memory.hpp>
#include <quota/pod_request.hpp>

using namespace quota;

namespace {

constexpr resource_id gm = resources::gpu_memory;

// an ElasticQuota without spec.max
elastic_quota_spec eq(std::string name, std::string ns, resource_vector min) {
  elastic_quota_spec s;
  s.name = std::move(name);
  s.object_namespace = ns;
  s.namespaces = {std::move(ns)};
  s.min = std::move(min);
  return s;
}
elastic_quota_spec eq(std::string name, std::string ns, resource_vector min, limit_vector max) {
  auto s = eq(std::move(name), std::move(ns), std::move(min));
  s.max = std::move(max);
  return s;
}

// a CompositeElasticQuota without spec.max
elastic_quota_spec ceq(std::string name, std::vector<std::string> nss, resource_vector min) {
  elastic_quota_spec s;
  s.name = std::move(name);
  s.namespaces = std::move(nss);
  s.composite = true;
  s.min = std::move(min);
  return s;
}
elastic_quota_spec ceq(std::string name, std::vector<std::string> nss, resource_vector min, limit_vector max) {
  auto s = ceq(std::move(name), std::move(nss), std::move(min));
  s.max = std::move(max);
  return s;
}

elastic_pod pod(std::string name, std::string ns, resource_vector req, std::int64_t t, std::int32_t prio = 0) {
  return elastic_pod{std::move(name), std::move(ns), std::move(req), prio, t};
}

// The fair-share table of nos' Key concepts (docs/elastic-quota.md#references):
// A min 40, B min 10, C min 30 (gpu-memory GB).
elastic_quota_model seed_cluster() {
  return elastic_quota_model({eq("A", "a", {{gm, 40}}), eq("B", "b", {{gm, 10}}), eq("C", "c", {{gm, 30}})});
}

}  // namespace

TEST_CASE("elastic_quota: seed gpu-memory example mig-1g.10gb + gpu = 42") {
  resource_registry reg;
  const auto mig = reg.intern("nvidia.com/mig-1g.10gb");
  resource_vector req{{mig, 1}, {resources::nvidia_gpu, 1}};
  REQUIRE(gpu_memory_of(req, reg) == 42);
  REQUIRE(gpu_memory_of(req, reg, 40) == 50);  // GB per GPU is configurable
  add_gpu_memory(req, reg);
  REQUIRE(req.get(gm) == 42);
}

TEST_CASE("elastic_quota: MIG resource name parsing edge cases") {
  CHECK(mig_memory_gb("nvidia.com/mig-1g.10gb") == 10);
  CHECK(mig_memory_gb("nvidia.com/mig-3g.20gb") == 20);
  CHECK(mig_memory_gb("nvidia.com/mig-7g.80gb") == 80);
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.10gbx"));
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-g.10gb"));
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.gb"));
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g10gb"));
  CHECK_FALSE(mig_memory_gb("example.com/mig-1g.10gb"));
  CHECK_FALSE(mig_memory_gb("nvidia.com/gpu"));
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-99999999999999999999g.10gb"));
  resource_registry reg;
  const auto a = reg.intern("nvidia.com/mig-2g.20gb");
  const auto fake = reg.intern("nvidia.com/mig-2g.20gib");
  resource_vector req{{a, 3}, {fake, 5}, {resources::cpu, 1000}};
  CHECK(gpu_memory_of(req, reg) == 60);
  resource_vector none{{resources::cpu, 1000}};
  add_gpu_memory(none, reg);
  CHECK_FALSE(none.has(gm));
  resource_vector huge{{resources::nvidia_gpu, std::int64_t{1} << 60}};
  CHECK_THROWS_AS((void)gpu_memory_of(huge, reg), overflow_error);
}

TEST_CASE("elastic_quota: pod request is max(sum containers, max init) + overhead") {
  using resources::cpu;
  using resources::memory;
  std::vector<resource_vector> containers{{{cpu, 100}, {memory, 1024}}, {{cpu, 200}, {memory, 1024}}};
  std::vector<resource_vector> init{{{cpu, 500}, {memory, 512}}, {{cpu, 50}}};
  const resource_vector overhead{{cpu, 10}};
  const auto r = pod_request(containers, init, overhead);
  CHECK(r.get(cpu) == 510);      // init 500 > 300, + 10
  CHECK(r.get(memory) == 2048);  // containers 2048 > 512
}

TEST_CASE("elastic_quota: seed fair-share table gives A 15 and B 3") {
  auto s = seed_cluster();
  const auto A = s.quota_of("a"), B = s.quota_of("b"), C = s.quota_of("c");
  // t1: A uses 40 (4 pods of 10 GB), B uses 40, C uses 0
  for (int i = 0; i < 4; ++i) s.add_pod(pod("a/p" + std::to_string(i), "a", {{gm, 10}}, i));
  for (int i = 0; i < 4; ++i) s.add_pod(pod("b/p" + std::to_string(i), "b", {{gm, 10}}, i));
  CHECK(s.guaranteed_over_quota(A, gm) == 15);  // 40/80 * 30
  CHECK(s.guaranteed_over_quota(B, gm) == 3);   // 10/80 * 30 = 3.75 -> 3
  CHECK(s.guaranteed_over_quota(C, gm) == 11);  // 30/80 * 30 = 11.25 -> 11
  CHECK(s.over_quota_used(B, gm) == 30);
}

TEST_CASE("elastic_quota: labels kept up to date pod by pod equal a walk over every pod") {
  // Pods of random sizes, ages and priorities come and go in two quotas (one
  // with a min in two resources, one without min); after every change the
  // labels equal those a full walk gives, and the changes reported move each
  // pod from its previous label to its current one.
  std::vector<elastic_quota_spec> specs{eq("a", "a", {{resources::cpu, 9000}, {gm, 40}}), eq("b", "b", {})};
  elastic_quota_model s(specs, {});
  std::mt19937 rng(7);
  std::vector<std::string> running;
  std::map<std::string, elastic_capacity> seen;
  for (int step = 0; step < 3000; ++step) {
    std::vector<elastic_label_change> changes;
    if (running.empty() || rng() % 5 < 3) {
      const std::string ns = rng() % 4 == 0 ? "b" : "a";
      const std::string name = ns + "/p" + std::to_string(step);
      s.add_pod(
          elastic_pod{name,
                      ns,
                      {{resources::cpu, static_cast<amount>(rng() % 3000)}, {gm, static_cast<amount>(rng() % 15)}},
                      static_cast<std::int32_t>(rng() % 3),
                      static_cast<std::int64_t>(rng() % 50)},
          &changes);
      running.push_back(name);
      seen[name] = elastic_capacity::none;
    } else {
      const auto i = rng() % running.size();
      s.remove_pod(running[i], &changes);
      seen.erase(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (const auto& c : changes) {
      REQUIRE(seen.count(c.pod) == 1);
      CHECK(seen[c.pod] == c.from);
      seen[c.pod] = c.to;
    }
    auto walked = s;
    std::vector<elastic_label_change> again;
    walked.relabel_all(&again);
    REQUIRE(again.empty());
    for (const auto& name : running) REQUIRE(s.label(name) == seen[name]);
  }
  // the test went through both labels in quota a
  CHECK(std::count_if(seen.begin(), seen.end(),
                      [](const auto& e) { return e.second == elastic_capacity::over_quota; }) > 0);
  CHECK(std::count_if(seen.begin(), seen.end(), [](const auto& e) { return e.second == elastic_capacity::in_quota; }) >
        0);
}

TEST_CASE("elastic_quota: seed t1/t2 preemption example") {
  auto s = seed_cluster();
  const auto A = s.quota_of("a");
  for (int i = 0; i < 4; ++i) s.add_pod(pod("a/p" + std::to_string(i), "a", {{gm, 10}}, i));
  for (int i = 0; i < 4; ++i) s.add_pod(pod("b/p" + std::to_string(i), "b", {{gm, 10}}, i));
  // B: first pod fills min 10, the other three borrow
  CHECK(s.label("b/p0") == elastic_capacity::in_quota);
  CHECK(s.label("b/p3") == elastic_capacity::over_quota);
  const auto newA = pod("a/new", "a", {{gm, 10}}, 100);
  const auto d = s.check("a", newA.request);
  REQUIRE(d.denied());
  REQUIRE(d.has_rule("total_guaranteed_exhausted"));
  CHECK(d.reasons()[0].used == 80);
  CHECK(d.reasons()[0].limit == 80);
  // 40 + 10 <= 40 + 15 and 30 > 3
  CHECK(s.nos_can_preempt(A, newA.request, "b/p3"));
  CHECK_FALSE(s.nos_can_preempt(A, newA.request, "b/p0"));  // in-quota pods are safe
  std::vector<victim> v;
  s.victims(newA, v);
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "b/p3");  // newest over-quota pod of equal priority
  CHECK(v[0].rule == "over_quota_fair_share");
  CHECK(v[0].entity == "B");
  s.remove_pod("b/p3");
  REQUIRE(s.check("a", newA.request).allowed());
  s.add_pod(newA);
  // t2: A 50/40, B 30/10. Another A pod: 50 + 10 > 40 + 15 -> no preemption
  CHECK(s.used(A).get(gm) == 50);
  const auto next = pod("a/next", "a", {{gm, 10}}, 200);
  CHECK_FALSE(s.nos_can_preempt(A, next.request, "b/p2"));
  v.clear();
  s.victims(next, v);
  CHECK(v.empty());
}

TEST_CASE("elastic_quota: admission over max, no quota, omitted max unlimited") {
  elastic_quota_model s({eq("A", "a", {{gm, 10}}, {{gm, 20}}), eq("B", "b", {{gm, 100}})});
  CHECK(s.check("nowhere", {{gm, 1000}}).allowed());
  CHECK(s.check("a", {{gm, 20}}).allowed());
  const auto d = s.check("a", {{gm, 21}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "over_max");
  CHECK(d.reasons()[0].entity == "A");
  CHECK(d.reasons()[0].resource == gm);
  CHECK(d.reasons()[0].limit == 20);
  CHECK(d.reasons()[0].requested == 21);
  // B has no max: only the total guaranteed (110) bounds it
  CHECK(s.check("b", {{gm, 110}}).allowed());
  CHECK(s.check("b", {{gm, 111}}).has_rule("total_guaranteed_exhausted"));
  CHECK_FALSE(s.check("b", {{gm, 111}}).has_rule("over_max"));
  // resources no quota lists are not limited by default
  CHECK(s.check("a", {{resources::cpu, 64000}}).allowed());
}

TEST_CASE("elastic_quota: upstream policy counts missing cpu and memory as 0") {
  elastic_options up;
  up.missing = elastic_missing_policy::upstream;
  elastic_quota_model s({eq("A", "a", {{gm, 10}}, {{gm, 20}})}, up);
  const auto d = s.check("a", {{resources::cpu, 100}});
  REQUIRE(d.denied());
  CHECK(d.has_rule("over_max"));
  CHECK(d.has_rule("total_guaranteed_exhausted"));
  CHECK(s.check("a", {{resources::nvidia_gpu, 1}}).allowed());  // other resources stay unlimited
  elastic_quota_model def({eq("A", "a", {{gm, 10}})});
  CHECK(def.check("a", {{resources::cpu, 100}}).allowed());
}

TEST_CASE("elastic_quota: nominated pods count at admission") {
  elastic_quota_model s({eq("A", "a", {{gm, 10}}, {{gm, 20}}), eq("B", "b", {{gm, 10}})});
  s.set_nominated(s.quota_of("a"), {{gm, 15}});
  CHECK(s.check("a", {{gm, 5}}).allowed());
  CHECK(s.check("a", {{gm, 6}}).has_rule("over_max"));
  CHECK(s.check("b", {{gm, 6}}).has_rule("total_guaranteed_exhausted"));
  CHECK(s.check("b", {{gm, 5}}).allowed());
}

TEST_CASE("elastic_quota: composite quota takes precedence over elastic quota") {
  elastic_quota_model s({eq("eq-a", "a", {{gm, 5}}, {{gm, 5}}), ceq("team", {"a", "b"}, {{gm, 50}}, {{gm, 50}})});
  CHECK(s.spec(s.quota_of("a")).name == "team");
  CHECK(s.spec(s.quota_of("b")).name == "team");
  CHECK(s.check("a", {{gm, 30}}).allowed());  // the EQ's max 5 does not apply
  s.add_pod(pod("a/x", "a", {{gm, 20}}, 1));
  s.add_pod(pod("b/y", "b", {{gm, 20}}, 2));
  CHECK(s.used(s.quota_of("b")).get(gm) == 40);  // one usage for both namespaces
  CHECK(s.check("b", {{gm, 11}}).has_rule("over_max"));
}

TEST_CASE("elastic_quota: validation reports every problem with object and field") {
  try {
    elastic_quota_model s(
        {ceq("one", {"a", "b"}, {{gm, 5}}), ceq("two", {"b"}, {{gm, -1}}), eq("three", "c", {{gm, 10}}, {{gm, 5}})});
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 3);
    CHECK(p[0].path == "CompositeElasticQuota two.spec.min.nos.nebuly.com/gpu-memory");
    CHECK(p[1].path == "CompositeElasticQuota two.spec.namespaces[0]");
    CHECK(p[2].path == "ElasticQuota c/three.spec.min.nos.nebuly.com/gpu-memory");
  }
}

TEST_CASE("elastic_quota: labels flip when the oldest pod ends") {
  elastic_quota_model s({eq("A", "a", {{gm, 20}}), eq("B", "b", {{gm, 100}})});
  std::vector<elastic_label_change> ch;
  s.add_pod(pod("a/1", "a", {{gm, 10}}, 1), &ch);
  s.add_pod(pod("a/2", "a", {{gm, 10}}, 2), &ch);
  REQUIRE(ch.size() == 2);
  ch.clear();
  s.add_pod(pod("a/3", "a", {{gm, 10}}, 3), &ch);
  REQUIRE(ch.size() == 1);
  CHECK(ch[0] == elastic_label_change{"a/3", elastic_capacity::none, elastic_capacity::over_quota});
  ch.clear();
  s.remove_pod("a/1", &ch);
  REQUIRE(ch.size() == 1);  // only the pods whose label changes
  CHECK(ch[0] == elastic_label_change{"a/3", elastic_capacity::over_quota, elastic_capacity::in_quota});
}

TEST_CASE("elastic_quota: label order: creation, priority, size, name; no skipping") {
  SECTION("nos order: lower priority first at equal creation time (nos controller)") {
    elastic_quota_model s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/high", "a", {{gm, 5}}, 1, 9));
    s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 0));
    CHECK(s.label("a/low") == elastic_capacity::in_quota);
    CHECK(s.label("a/high") == elastic_capacity::over_quota);
  }
  SECTION("seed order: smaller request first at equal creation time") {
    elastic_options o;
    o.label_order = elastic_label_order::creation_then_size;
    elastic_quota_model s({eq("A", "a", {{gm, 10}})}, o);
    s.add_pod(pod("a/high", "a", {{gm, 5}}, 1, 9));
    s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 0));
    CHECK(s.label("a/high") == elastic_capacity::in_quota);
    CHECK(s.label("a/low") == elastic_capacity::over_quota);
  }
  SECTION("equal creation and priority: smaller request first, then name") {
    elastic_quota_model s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/x-big", "a", {{gm, 10}}, 1));
    s.add_pod(pod("a/y-small", "a", {{gm, 4}}, 1));
    s.add_pod(pod("a/b-small", "a", {{gm, 4}}, 1));
    CHECK(s.label("a/b-small") == elastic_capacity::in_quota);
    CHECK(s.label("a/y-small") == elastic_capacity::in_quota);
    CHECK(s.label("a/x-big") == elastic_capacity::over_quota);
  }
  SECTION("a small pod after the first over-quota pod stays over-quota") {
    elastic_quota_model s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/1", "a", {{gm, 8}}, 1));
    s.add_pod(pod("a/2", "a", {{gm, 8}}, 2));
    s.add_pod(pod("a/3", "a", {{gm, 1}}, 3));
    CHECK(s.label("a/1") == elastic_capacity::in_quota);
    CHECK(s.label("a/2") == elastic_capacity::over_quota);
    CHECK(s.label("a/3") == elastic_capacity::over_quota);
  }
  SECTION("resources min does not list do not count") {
    elastic_quota_model s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/1", "a", {{gm, 10}, {resources::cpu, 99000}}, 1));
    CHECK(s.label("a/1") == elastic_capacity::in_quota);
  }
}

TEST_CASE("elastic_quota: typed errors leave the state unchanged") {
  elastic_quota_model s({eq("A", "a", {{gm, 10}})});
  s.add_pod(pod("a/1", "a", {{gm, 4}}, 1));
  const auto used = s.used(0);
  CHECK_THROWS_AS(s.add_pod(pod("a/1", "a", {{gm, 4}}, 2)), state_error);
  CHECK_THROWS_AS(s.add_pod(pod("a/neg", "a", {{gm, -4}}, 2)), validation_error);
  CHECK_THROWS_AS(s.add_pod(pod("a/big", "a", {{gm, std::numeric_limits<amount>::max()}}, 2)), overflow_error);
  CHECK_THROWS_AS(s.remove_pod("a/unknown"), unknown_entity_error);
  CHECK(s.used(0) == used);
  CHECK(s.total_used() == used);
  CHECK_FALSE(s.running("a/big"));
  CHECK(s.running_pods(0).size() == 1);
  s.remove_pod("a/1");
  try {
    s.remove_pod("a/1");  // double release
    FAIL("expected unknown_entity_error");
  } catch (const unknown_entity_error& e) {
    CHECK(e.id() == error_id::unknown_job);
    CHECK(std::string(e.what()).find("a/1") != std::string::npos);
  }
  CHECK(s.used(0).get(gm) == 0);
  CHECK_THROWS_AS((void)s.used(7), unknown_entity_error);

  // an overflow of the cluster's usage leaves the quota's usage as it was, not
  // even an explicit zero for a resource it did not use
  elastic_quota_model two({eq("A", "a", {{gm, 10}}), eq("B", "b", {{gm, 10}})});
  two.add_pod(pod("b/huge", "b", {{resources::cpu, std::numeric_limits<amount>::max()}}, 1));
  CHECK_THROWS_AS(two.add_pod(pod("a/1", "a", {{resources::cpu, 1}}, 1)), overflow_error);
  CHECK_FALSE(two.used(0).has(resources::cpu));
  CHECK_FALSE(two.running("a/1"));
}

TEST_CASE("elastic_quota: capacity-scheduling victim policy") {
  elastic_options o;
  o.preemption = elastic_preemption_policy::capacity_scheduling;
  elastic_quota_model s({eq("A", "a", {{gm, 20}}, {{gm, 30}}), eq("B", "b", {{gm, 20}})}, o);
  s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 1));
  s.add_pod(pod("a/high", "a", {{gm, 10}}, 2, 5));
  s.add_pod(pod("b/1", "b", {{gm, 10}}, 1));
  s.add_pod(pod("b/2", "b", {{gm, 10}}, 2));
  SECTION("above its min: lower-priority pods of the same quota") {
    // A uses 20 = min; used + 10 > min. Cluster 40/40.
    std::vector<victim> v;
    s.victims(pod("a/new", "a", {{gm, 10}}, 3, 3), v);
    REQUIRE(v.size() == 1);
    CHECK(v[0].job_id == "a/low");
    CHECK(v[0].rule == "same_quota_lower_priority");
  }
  SECTION("within its min: pods of borrowing quotas") {
    s.remove_pod("a/high");
    s.add_pod(pod("b/3", "b", {{gm, 10}}, 3));  // B borrows 10
    std::vector<victim> v;
    s.victims(pod("a/new", "a", {{gm, 10}}, 4, 0), v);
    REQUIRE(v.size() == 1);
    CHECK(v[0].job_id == "b/3");  // newest of equal priority
    CHECK(v[0].rule == "borrowed_from_guaranteed");
  }
}

TEST_CASE("elastic_quota: policy adapter maps job.ns and job.request") {
  elastic_quota_model s({eq("A", "a", {{gm, 10}}, {{gm, 10}}), eq("B", "b", {{gm, 30}})});
  elastic_quota_policy p(s);
  CHECK(p.policy_name() == "elastic_quota");
  const elastic_quota_model& m = p.model();  // the adapter owns a copy of s
  job j;
  j.id = "a/1";
  j.ns = "a";
  j.request = {{gm, 10}};
  REQUIRE(p.check(j).allowed());
  p.commit(j);
  CHECK(m.used(m.quota_of("a")).get(gm) == 10);
  CHECK(s.used(s.quota_of("a")).get(gm) == 0);  // the original is untouched
  job k = j;
  k.id = "a/2";
  CHECK(p.check(k).has_rule("over_max"));
  CHECK_THROWS_AS(p.commit(j), state_error);
  p.release("a/1");
  CHECK(m.used(m.quota_of("a")).get(gm) == 0);
  CHECK_THROWS_AS(p.release("a/1"), unknown_entity_error);
  std::vector<victim> v;
  p.victims(k, v);
  CHECK(v.empty());
}

namespace {
// Independent recomputation of the rules from the list of running pods.
struct model_pod {
  elastic_pod p;
};
bool ref_before(const elastic_pod& x, const elastic_pod& y) {
  if (x.created_ms != y.created_ms) return x.created_ms < y.created_ms;
  if (x.priority != y.priority) return x.priority < y.priority;
  for (resource_id r : {resources::cpu, gm})
    if (x.request.get(r) != y.request.get(r)) return x.request.get(r) < y.request.get(r);
  return x.name < y.name;
}
}  // namespace

TEST_CASE("elastic_quota: randomized invariants after every operation") {
  const std::vector<std::string> nss{"a", "b", "c", "free"};
  elastic_quota_model s({eq("A", "a", {{gm, 40}, {resources::cpu, 4000}}, {{gm, 80}}), eq("B", "b", {{gm, 10}}),
                         ceq("C", {"c"}, {{gm, 30}}, {{gm, 60}, {resources::cpu, 8000}})});
  std::map<std::string, elastic_pod> running;
  std::mt19937 rng(12345);
  int next = 0, allowed = 0, denied = 0, over_labels = 0;
  for (int step = 0; step < 1500; ++step) {
    if (running.empty() || rng() % 3 != 0) {
      auto ns = nss[rng() % nss.size()];
      resource_vector req{{gm, static_cast<amount>(rng() % 4) * 5},
                          {resources::cpu, static_cast<amount>(rng() % 3) * 500}};
      auto p = pod(ns + "/p" + std::to_string(next++), ns, req, static_cast<std::int64_t>(rng() % 50),
                   static_cast<std::int32_t>(rng() % 3));
      // admission recomputed from scratch
      bool expect = true;
      const auto q = s.quota_of(ns);
      if (q != elastic_quota_model::npos) {
        for (resource_id r : {resources::cpu, gm}) {
          if (req.get(r) <= 0) continue;
          amount used_q = 0, used_all = 0, min_all = 0;
          bool any_min = false;
          for (auto& [n, rp] : running) {
            if (s.quota_of(rp.ns) == q) used_q += rp.request.get(r);
            if (s.quota_of(rp.ns) != elastic_quota_model::npos) used_all += rp.request.get(r);
          }
          for (std::uint32_t i = 0; i < s.size(); ++i)
            if (s.weight(i) > 0 && s.spec(i).min.has(r)) {
              any_min = true;
              min_all += s.spec(i).min.get(r);
            }
          if (const auto& mx = s.spec(q).max; mx && mx->find(r) && used_q + req.get(r) > *mx->find(r)) expect = false;
          if (any_min && used_all + req.get(r) > min_all) expect = false;
        }
      }
      REQUIRE(s.check(ns, req).allowed() == expect);
      (expect ? allowed : denied)++;
      if (expect || rng() % 4 == 0) {  // sometimes run pods the check refused (the host forced them)
        s.add_pod(p);
        running.emplace(p.name, p);
      }
    } else {
      auto it = running.begin();
      std::advance(it, static_cast<long>(rng() % running.size()));
      s.remove_pod(it->first);
      running.erase(it);
    }
    // usage = sum of running requests; labels = the rule from scratch
    resource_vector total;
    for (std::uint32_t q = 0; q < s.size(); ++q) {
      std::vector<elastic_pod> mine;
      resource_vector used;
      for (auto& [n, rp] : running)
        if (s.quota_of(rp.ns) == q) {
          mine.push_back(rp);
          used += rp.request;
        }
      total += used;
      for (resource_id r : {resources::cpu, gm}) REQUIRE(s.used(q).get(r) == used.get(r));
      std::sort(mine.begin(), mine.end(), ref_before);
      resource_vector sum;
      bool over = false;
      for (const auto& mp : mine) {
        sum += mp.request;
        for (const auto& e : s.spec(q).min)
          if (sum.get(e.id) > e.value) over = true;
        REQUIRE(s.label(mp.name) == (over ? elastic_capacity::over_quota : elastic_capacity::in_quota));
        over_labels += over ? 1 : 0;
      }
    }
    for (resource_id r : {resources::cpu, gm}) REQUIRE(s.total_used().get(r) == total.get(r));
  }
  // the random walk must exercise both outcomes and both labels
  CHECK(allowed > 0);
  CHECK(denied > 0);
  CHECK(over_labels > 0);
}

#include <quota/elastic_quota_json.hpp>

namespace {
/// The shared RFC 3339 parser: ms since the epoch, or nothing when malformed.
std::optional<std::int64_t> rfc3339(const char* t) {
  std::int64_t ms = 0;
  if (!detail::parse_rfc3339_utc_ms(t, ms)) return std::nullopt;
  return ms;
}
std::string data(const char* f) {
  return std::string(QUOTA_SOURCE_DIR) + "/tests/data/elastic_quota/" + f;
}
}  // namespace

TEST_CASE("elastic_quota: loads EQ, CEQ and pods from kubectl JSON") {
  resource_registry reg;
  auto specs = load_elastic_quotas(load_json_file(data("quotas.json")), reg);
  REQUIRE(specs.size() == 4);
  CHECK(specs[0].name == "quota-a");
  CHECK(specs[0].namespaces == std::vector<std::string>{"team-a"});
  CHECK_FALSE(specs[0].max);  // omitted max: none
  CHECK(specs[1].max->bound(resources::cpu) == 8000);
  CHECK(specs[3].composite);
  CHECK(specs[3].namespaces == std::vector<std::string>{"team-c", "team-d"});
  elastic_quota_model s(std::move(specs), {}, &reg);
  CHECK(s.spec(s.quota_of("team-c")).name == "quota-c");  // CEQ wins over EQ "shadowed"

  auto pods = load_elastic_pods(load_json_file(data("pods.json")), reg);
  REQUIRE(pods.size() == 3);
  CHECK(pods[0].pod.name == "team-b/train-1");
  CHECK(pods[0].pod.request.get(gm) == 42);  // limits stand for requests; seed rule
  CHECK(pods[0].running());
  CHECK(pods[1].pod.request.get(resources::cpu) == 1100);  // max(750, 1000) + 100
  CHECK(pods[1].pod.request.get(gm) == 10);
  CHECK(pods[1].pod.created_ms - pods[0].pod.created_ms == 1500);
  CHECK(pods[0].pod.created_ms == 1714557600000);
  CHECK_FALSE(pods[2].running());
  CHECK(pods[2].pod.request.get(gm) == 20);

  std::vector<elastic_label_change> ch;
  for (auto& p : pods)
    if (p.running()) s.add_pod(p.pod, &ch);
  CHECK(s.label("team-b/train-1") == elastic_capacity::over_quota);  // 42 > min 10 at once
  CHECK(s.label("team-b/train-2") == elastic_capacity::over_quota);
  const auto d = s.check("team-a", pods[2].pod.request);
  CHECK(d.allowed());  // 52 + 20 <= 80
  const auto d2 = s.check("team-b", {{gm, 9}});
  REQUIRE(d2.has_rule("over_max"));
  CHECK(d2.reasons()[0].resource_name == "nos.nebuly.com/gpu-memory");
}

TEST_CASE("elastic_quota: JSON errors name every offending object and field") {
  resource_registry reg;
  try {
    (void)load_elastic_quotas(load_json_file(data("bad_quotas.json")), reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    // (the CompositeElasticQuota without namespaces is the quota set's to judge)
    REQUIRE(p.size() == 2);
    CHECK(p[0].path == "ElasticQuota x/neg.spec.min.cpu");
    CHECK(p[1].path == "ElasticQuota x/neg.spec.max.memory");
  }
  CHECK(rfc3339("1970-01-01T00:00:01Z") == 1000);
  CHECK(rfc3339("2024-13-01T00:00:00Z") == std::nullopt);
  CHECK(rfc3339("yesterday") == std::nullopt);
}

TEST_CASE("elastic_quota: a copied set is independent of the original (its own pods, labels and lists)") {
  auto original = seed_cluster();
  const auto a = original.quota_index("A");
  original.add_pod(pod("p1", "a", {{gm, 30}}, 1));
  original.add_pod(pod("p2", "a", {{gm, 20}}, 2));  // 50 > min 40: p2 over quota
  REQUIRE(original.label("p2") == elastic_capacity::over_quota);

  elastic_quota_model copy(original);
  // removing from the copy must not touch the original's pods
  copy.remove_pod("p1");
  CHECK_FALSE(copy.running("p1"));
  CHECK(copy.used(a).get(gm) == 20);
  CHECK(copy.label("p2") == elastic_capacity::in_quota);
  REQUIRE(copy.running_pods(a).size() == 1);
  CHECK(copy.running_pods(a)[0]->name == "p2");
  CHECK(original.running("p1"));
  CHECK(original.used(a).get(gm) == 50);
  CHECK(original.label("p2") == elastic_capacity::over_quota);
  REQUIRE(original.running_pods(a).size() == 2);

  // assignment, then destroy the source: the target's lists stay valid
  elastic_quota_model assigned = seed_cluster();
  {
    auto source = original;
    assigned = source;
  }
  assigned.add_pod(pod("p3", "a", {{gm, 1}}, 3));
  assigned.remove_pod("p2");
  assigned.remove_pod("p1");
  CHECK(assigned.used(a).get(gm) == 1);
  CHECK(assigned.label("p3") == elastic_capacity::in_quota);
  CHECK(original.used(a).get(gm) == 50);

  // a moved set keeps working
  elastic_quota_model moved(std::move(assigned));
  moved.remove_pod("p3");
  CHECK(moved.used(a).get(gm) == 0);
}

TEST_CASE("elastic_quota: creationTimestamp parsing accepts RFC 3339 UTC forms and rejects each malformed field") {
  const auto ms_of = [](const char* t) { return rfc3339(t).value_or(-1); };
  // accepted forms: lower-case separators, fractions truncated to milliseconds, a leap second
  CHECK(ms_of("1970-01-01t00:00:01z") == 1000);
  CHECK(ms_of("1970-01-01T00:00:00.5Z") == 500);
  CHECK(ms_of("1970-01-01T00:00:00.123456Z") == 123);
  CHECK(ms_of("1970-01-01T00:00:60Z") == 60000);
  CHECK(ms_of("2024-02-29T12:00:00Z") - ms_of("2024-02-28T12:00:00Z") == 86400000);
  CHECK(ms_of("2024-03-01T00:00:00Z") - ms_of("2024-02-29T00:00:00Z") == 86400000);
  // year 0 of the proleptic Gregorian calendar (January: counted in the previous era)
  CHECK(ms_of("0000-01-01T00:00:00Z") == -62167219200000);
  CHECK(ms_of("0000-03-01T00:00:00Z") - ms_of("0000-02-28T00:00:00Z") == 2 * 86400000);  // year 0 is a leap year

  // every field, separator and range rejected on its own
  for (const char* bad : {
           "2024-05-01T10:00:00",        // too short (no zone)
           "2O24-05-01T10:00:00Z",       // letter in the year
           "2024/05-01T10:00:00Z",       // year separator
           "2024-0a-01T10:00:00Z",       // month not a number
           "2024-05/01T10:00:00Z",       // month separator
           "2024-05-0 T10:00:00Z",       // day not a number
           "2024-05-01 10:00:00Z",       // date/time separator
           "2024-05-01T1x:00:00Z",       // hour not a number
           "2024-05-01T10-00:00Z",       // hour separator
           "2024-05-01T10:0.:00Z",       // minute not a number
           "2024-05-01T10:00-00Z",       // minute separator
           "2024-05-01T10:00:0xZ",       // second not a number
           "2024-05-01T10:00:00+02:00",  // offsets are not UTC
           "2024-05-01T10:00:00ZZ",      // trailing text
           "2024-05-01T10:00:00.Z1",     // fraction then junk
           "2024-05-01T10:00:00.-Z",     // fraction without digits
           "2024-05-01T10:00:00.123",    // fraction without zone
           "2024-05-01T10:00:00X",       // unknown zone letter
           "2024-00-01T10:00:00Z",       // month 0
           "2024-05-00T10:00:00Z",       // day 0
           "2024-05-32T10:00:00Z",       // day 32
           "2024-05-01T24:00:00Z",       // hour 24
           "2024-05-01T10:60:00Z",       // minute 60
           "2024-05-01T10:00:61Z",       // second 61
       }) {
    INFO(bad);
    CHECK(rfc3339(bad) == std::nullopt);
  }
}

TEST_CASE("elastic_quota: pod JSON - limits stand for missing requests only; odd containers and specs count nothing") {
  resource_registry reg;
  const auto pods = load_elastic_pods(parse_json_text(R"([
    {"metadata": {"name": "both", "namespace": "t"},
     "spec": {"containers": [
       {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "1Gi"}}},
       {"name": "no-resources"},
       {"resources": "none"},
       7]}},
    {"kind": "Pod", "metadata": {"name": "no-spec"}},
    {"kind": "Pod", "metadata": {"name": "spec-not-object"}, "spec": [1, 2], "status": {"phase": 3}},
    {"kind": "Pod", "metadata": {"name": "status-not-object"}, "status": "Running"},
    {"kind": "Pod", "metadata": {"name": "no-phase"}, "status": {"conditions": []}},
    {"kind": "Pod", "metadata": {"name": "ts-number", "creationTimestamp": 12}},
    {"kind": "Service", "metadata": {"name": "skipped"}}
  ])"),
                                      reg);
  REQUIRE(pods.size() == 6);
  CHECK(pods[0].pod.name == "t/both");
  CHECK(pods[0].pod.request.get(resources::cpu) == 1000);                     // the request wins over the limit of 4
  CHECK(pods[0].pod.request.get(resources::memory) == 1024LL * 1024 * 1024);  // limit only: stands for the request
  for (std::size_t i = 1; i < pods.size(); ++i) {
    INFO(pods[i].pod.name);
    CHECK(pods[i].pod.request.empty());
    CHECK(pods[i].phase.empty());  // no status, a non-object status, no phase, a non-string phase
    CHECK_FALSE(pods[i].running());
    CHECK(pods[i].pod.ns == "default");
  }
  CHECK(pods[5].pod.created_ms == 0);  // a non-string timestamp is ignored, not an error
}

TEST_CASE(
    "elastic_quota: pod JSON priority must be a 32-bit integer; every bad pod is named and the registry is kept") {
  resource_registry reg;
  const auto before = reg.size();
  const auto good = load_elastic_pods(parse_json_text(R"([
    {"metadata": {"name": "lo"}, "spec": {"priority": -2147483648}},
    {"metadata": {"name": "hi", "creationTimestamp": "1969-12-31T23:59:59.999Z"}, "spec": {"priority": 2147483647}}
  ])"),
                                      reg);
  REQUIRE(good.size() == 2);
  CHECK(good[1].pod.created_ms == -1);  // before 1970: a valid time, not a parse failure
  CHECK(good[0].pod.priority == INT32_MIN);
  CHECK(good[1].pod.priority == INT32_MAX);

  try {
    (void)load_elastic_pods(parse_json_text(R"([
      {"metadata": {"name": "big"}, "spec": {"priority": 2147483648,
        "containers": [{"resources": {"requests": {"example.com/new-thing": "1"}}}]}},
      {"metadata": {"name": "small"}, "spec": {"priority": -2147483649}},
      {"metadata": {"name": "huge"}, "spec": {"priority": 18446744073709551615}},
      {"metadata": {"name": "frac"}, "spec": {"priority": 1.5}},
      {"metadata": {"name": "old", "creationTimestamp": "2024-05-01 10:00:00"}},
      {"metadata": {"name": "lists"}, "spec": {"containers": {"a": 1}, "initContainers": "x"}},
      "not-an-object"
    ])"),
                            reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 8);
    CHECK(p[0].path == "Pod default/big.spec.priority");
    CHECK(p[1].path == "Pod default/small.spec.priority");
    CHECK(p[2].path == "Pod default/huge.spec.priority");
    CHECK(p[3].path == "Pod default/frac.spec.priority");
    CHECK(p[4].path == "Pod default/old.metadata.creationTimestamp");
    CHECK(p[5].path == "Pod default/lists.spec.containers");
    CHECK(p[6].path == "Pod default/lists.spec.initContainers");
    CHECK(p[7].path == "[6].metadata.name");
  }
  // the rejected document interned nothing
  CHECK(reg.size() == before);
  CHECK_FALSE(reg.find("example.com/new-thing"));

  // a document built in code may hold a signed 64-bit priority (the parser makes positives unsigned)
  json built = {{"kind", "Pod"}, {"metadata", {{"name", "built"}}}};
  built["spec"]["priority"] = std::int64_t{1} << 40;
  REQUIRE_FALSE(built["spec"]["priority"].is_number_unsigned());
  try {
    (void)load_elastic_pods(built, reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "Pod default/built.spec.priority");
  }
}

TEST_CASE("elastic_quota: quota JSON - missing spec, bad namespaces and nameless objects are named; state kept") {
  resource_registry reg;
  const auto specs = load_elastic_quotas(parse_json_text(R"({"kind": "List", "items": [
    {"kind": "ElasticQuota", "metadata": {"name": "bare", "namespace": "n1"}},
    {"kind": "ElasticQuota", "metadata": {"name": "flat", "namespace": "n2"}, "spec": "min=1"},
    {"metadata": {"name": "kindless"}},
    {"kind": 3, "metadata": {"name": "kind-number"}},
    "text"
  ]})"),
                                         reg);
  REQUIRE(specs.size() == 2);  // objects of no (string) kind are skipped
  CHECK(specs[0].name == "bare");
  CHECK(specs[0].namespaces == std::vector<std::string>{"n1"});
  CHECK(specs[0].min.empty());
  CHECK_FALSE(specs[0].max);  // no spec: no guarantee, no limit
  CHECK(specs[1].min.empty());
  CHECK_FALSE(specs[1].composite);

  const auto before = reg.size();
  try {
    (void)load_elastic_quotas(parse_json_text(R"([
      {"kind": "CompositeElasticQuota", "metadata": {"name": "c1"},
       "spec": {"namespaces": "team-a", "min": {"example.com/widget": "2"}}},
      {"kind": "CompositeElasticQuota", "metadata": {"name": "c2", "namespace": "q"},
       "spec": {"namespaces": ["team-b", 5, null]}},
      {"kind": "ElasticQuota", "metadata": {"namespace": "x"}}
    ])"),
                              reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 4);
    CHECK(p[0].path == "CompositeElasticQuota default/c1.spec.namespaces");
    CHECK(p[0].message == "not a list");
    CHECK(p[1].path == "CompositeElasticQuota q/c2.spec.namespaces[1]");
    CHECK(p[2].path == "CompositeElasticQuota q/c2.spec.namespaces[2]");
    CHECK(p[3].path == "[2].metadata.name");
  }
  CHECK(reg.size() == before);
  CHECK_FALSE(reg.find("example.com/widget"));
}

TEST_CASE("elastic_quota: MIG names cut short or overflowing count nothing; profiles and whole GPUs add up") {
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-"));                           // no digits at all
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig--1g.5gb"));                    // a sign is not a digit
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1"));                          // ends after the slice count
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g"));                         // ends at the 'g'
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1x.10gb"));                    // 'g' expected
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.10"));                      // no "gb" suffix
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-9223372036854775808g.10gb"));  // INT64_MAX + 1 slices
  CHECK(mig_memory_gb("nvidia.com/mig-1g.9223372036854775807gb") == INT64_MAX);
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.9223372036854775808gb"));

  resource_registry reg;
  const auto small = reg.intern("nvidia.com/mig-1g.5gb");
  const auto big = reg.intern("nvidia.com/mig-3g.40gb");
  const resource_vector req{{small, 2}, {big, 1}, {resources::nvidia_gpu, 2}};
  CHECK(gpu_memory_of(req, reg) == 2 * 5 + 40 + 2 * 32);
  CHECK(gpu_memory_of(req, reg, 80) == 2 * 5 + 40 + 2 * 80);  // e.g. H100 80GB nodes

  // an id this registry has never interned (from a larger registry) contributes nothing
  resource_registry other = reg;
  const auto foreign = other.intern("nvidia.com/mig-7g.80gb");
  REQUIRE(foreign >= reg.size());
  const resource_vector mixed{{small, 1}, {foreign, 4}};
  CHECK(gpu_memory_of(mixed, reg) == 5);
  CHECK(gpu_memory_of(mixed, other) == 5 + 4 * 80);

  // the sum of profiles overflowing is an overflow_error, and add_gpu_memory leaves the request alone
  const auto huge = reg.intern("nvidia.com/mig-1g.9223372036854775807gb");
  resource_vector over{{huge, 1}, {small, 1}};
  CHECK_THROWS_AS(add_gpu_memory(over, reg), overflow_error);
  CHECK_FALSE(over.has(gm));
}

TEST_CASE("elastic_quota: validation names nameless quotas, empty namespace lists and negative max, by resource name") {
  resource_registry reg;
  const auto widget = reg.intern("example.com/widget");
  resource_registry bigger = reg;
  const auto unknown = bigger.intern("example.com/gadget");  // an id this registry does not know
  try {
    elastic_quota_model s(
        {eq("", "a", {{gm, 1}}), ceq("empty", {}, {{gm, 1}}), eq("neg-max", "c", {}, {{widget, -1}, {unknown, -2}})},
        {}, &reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 4);
    CHECK(p[0].path == "ElasticQuota a/.metadata.name");
    CHECK(p[1].path == "CompositeElasticQuota empty.spec.namespaces");
    CHECK(p[2].path == "ElasticQuota c/neg-max.spec.max.example.com/widget");
    CHECK(p[3].path == "ElasticQuota c/neg-max.spec.max.resource#" + std::to_string(unknown));
    CHECK(p[3].message == "negative amount");
  }
  // without a registry, a custom resource is named by its id
  try {
    elastic_quota_model s({eq("neg-min", "a", {{widget, -3}})});
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "ElasticQuota a/neg-min.spec.min.resource#" + std::to_string(widget));
  }
}

TEST_CASE("elastic_quota: over_max reasons name custom resources through the registry, when it knows them") {
  resource_registry reg;
  const auto widget = reg.intern("example.com/widget");
  resource_registry bigger = reg;
  const auto gadget = bigger.intern("example.com/gadget");
  elastic_quota_model named({eq("A", "a", {}, {{widget, 1}, {gadget, 1}})}, {}, &reg);
  const auto d = named.check("a", {{widget, 2}, {gadget, 2}});
  REQUIRE(d.reasons().size() == 2);
  CHECK(d.reasons()[0].rule == "over_max");
  CHECK(d.reasons()[0].resource_name == "example.com/widget");
  CHECK(d.reasons()[1].resource == gadget);
  CHECK(d.reasons()[1].resource_name.empty());  // not in this registry: no name, the id stays
  elastic_quota_model anonymous({eq("A", "a", {}, {{widget, 1}})});
  const auto d2 = anonymous.check("a", {{widget, 2}});
  REQUIRE(d2.denied());
  CHECK(d2.reasons()[0].resource == widget);
  CHECK(d2.reasons()[0].resource_name.empty());
  CHECK(anonymous.check("a", {{widget, 1}}).allowed());
}

TEST_CASE("elastic_quota: lookups of unknown quotas and pods are unknown_entity_errors naming them") {
  auto s = seed_cluster();
  CHECK(s.quota_index("C") == 2);
  try {
    (void)s.quota_index("Z");
    FAIL("expected unknown_entity_error");
  } catch (const unknown_entity_error& e) {
    CHECK(std::string(e.what()).find("Z") != std::string::npos);
  }
  s.add_pod(pod("a/1", "a", {{gm, 5}}, 1, 7));
  CHECK(s.pod("a/1").priority == 7);
  CHECK_THROWS_AS((void)s.pod("a/2"), unknown_entity_error);
  CHECK_THROWS_AS((void)s.label("a/2"), unknown_entity_error);
  CHECK_THROWS_AS((void)s.nos_can_preempt(0, {{gm, 1}}, "b/none"), unknown_entity_error);
  CHECK(to_string(elastic_capacity::in_quota) == "in-quota");
  CHECK(to_string(elastic_capacity::over_quota) == "over-quota");
  CHECK(to_string(elastic_capacity::none).empty());  // no label yet
}

TEST_CASE("elastic_quota: nos preemption spares unquoted pods, the preemptor's own quota and fair-share borrowers") {
  auto s = seed_cluster();  // A 40, B 10, C 30: total 80
  const auto A = s.quota_of("a");
  for (int i = 0; i < 4; ++i) s.add_pod(pod("a/p" + std::to_string(i), "a", {{gm, 10}}, i));
  s.add_pod(pod("a/extra", "a", {{gm, 2}}, 10));  // A 42 > 40: over quota
  s.add_pod(pod("b/p0", "b", {{gm, 10}}, 1));
  s.add_pod(pod("b/p1", "b", {{gm, 2}}, 2));  // B borrows 2
  s.add_pod(pod("free/x", "free", {{gm, 5}}, 1));
  REQUIRE(s.label("a/extra") == elastic_capacity::over_quota);
  REQUIRE(s.label("b/p1") == elastic_capacity::over_quota);
  CHECK(s.label("free/x") == elastic_capacity::none);  // no quota: never labelled
  const resource_vector req{{gm, 10}};
  CHECK(s.within_guaranteed(A, {{gm, 1}}));
  CHECK_FALSE(s.nos_can_preempt(A, req, "free/x"));   // not accounted by any quota
  CHECK_FALSE(s.nos_can_preempt(A, req, "a/extra"));  // its own quota
  // B's 2 GB over quota is within its guaranteed over-quota share floor(10/80 x 28) = 3
  CHECK(s.guaranteed_over_quota(s.quota_of("b"), gm) == 3);
  CHECK(s.over_quota_used(s.quota_of("b"), gm) == 2);
  CHECK_FALSE(s.nos_can_preempt(s.quota_of("c"), req, "b/p1"));
  // a preemptor from a namespace without a quota never preempts
  std::vector<victim> v;
  s.victims(pod("free/y", "free", {{gm, 1000}}, 20), v);
  CHECK(v.empty());
}

TEST_CASE("elastic_quota: capacity scheduling - a preemptor within min takes only from quotas that borrow") {
  elastic_options o;
  o.preemption = elastic_preemption_policy::capacity_scheduling;
  resource_registry reg;
  elastic_quota_model s(
      {eq("A", "a", {{gm, 20}}), eq("B", "b", {{gm, 20}}), eq("C", "c", {{gm, 20}}), eq("D", "d", {{gm, 20}})}, o,
      &reg);
  s.add_pod(pod("b/1", "b", {{gm, 20}}, 1));  // B exactly at its min: not borrowing
  s.add_pod(pod("c/1", "c", {{gm, 20}}, 1));
  s.add_pod(pod("c/2", "c", {{gm, 20}}, 2, 3));  // C borrows 20
  // D runs nothing. Cluster: 60 of 80 used.
  std::vector<victim> v;
  // A asks 20 (+ cpu, which no min lists): 80 of 80 would fit, so nobody goes
  s.victims(pod("a/new", "a", {{gm, 20}, {resources::cpu, 500}}, 5, 9), v);
  CHECK(v.empty());
  s.add_pod(pod("d/1", "d", {{gm, 10}}, 3));  // 70 of 80
  s.victims(pod("a/new", "a", {{gm, 20}, {resources::cpu, 500}}, 5, 0), v);
  // C is the only quota above its min; B and D are spared. Any pod of a borrowing quota may go
  // (upstream capacity scheduling), lowest priority first: c/1 (0) before c/2 (3).
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "c/1");
  CHECK(v[0].rule == "borrowed_from_guaranteed");
  CHECK(v[0].entity == "C");
}

TEST_CASE("elastic_quota: self-assignment keeps the set and its label lists intact") {
  auto s = seed_cluster();
  s.add_pod(pod("a/1", "a", {{gm, 30}}, 1));
  s.add_pod(pod("a/2", "a", {{gm, 20}}, 2));
  const auto& same = s;
  s = same;
  CHECK(s.used(0).get(gm) == 50);
  REQUIRE(s.running_pods(0).size() == 2);
  CHECK(s.running_pods(0)[1]->name == "a/2");
  std::vector<elastic_label_change> ch;
  s.remove_pod("a/1", &ch);
  REQUIRE(ch.size() == 1);
  CHECK(ch[0] == elastic_label_change{"a/2", elastic_capacity::over_quota, elastic_capacity::in_quota});
  CHECK_FALSE(ch[0] == elastic_label_change{"a/1", elastic_capacity::over_quota, elastic_capacity::in_quota});
  CHECK_FALSE(ch[0] == elastic_label_change{"a/2", elastic_capacity::none, elastic_capacity::in_quota});
  CHECK_FALSE(ch[0] == elastic_label_change{"a/2", elastic_capacity::over_quota, elastic_capacity::over_quota});
}

TEST_CASE("elastic_quota: node-level candidates follow SelectVictimsOnNode (quota allows, the node is full)") {
  // a: min 2 max 8; b: min 8 max 8; c: min 1 max 8 (GPUs)
  auto make = [](elastic_preemption_policy mode) {
    elastic_options o;
    o.preemption = mode;
    return elastic_quota_model(
        {eq("A", "a", {{gm, 2}}, {{gm, 8}}), eq("B", "b", {{gm, 8}}, {{gm, 8}}), eq("C", "c", {{gm, 1}}, {{gm, 8}})},
        o);
  };
  auto ids = [](const std::vector<victim>& v) {
    std::vector<std::string> out;
    for (const auto& x : v) out.push_back(x.job_id);
    return out;
  };
  for (auto mode : {elastic_preemption_policy::capacity_scheduling, elastic_preemption_policy::nos}) {
    CAPTURE(static_cast<int>(mode));
    auto s = make(mode);
    s.add_pod(pod("a/low", "a", {{gm, 2}}, 0, 1));
    s.add_pod(pod("a/lower-newer", "a", {{gm, 1}}, 5, 0));
    s.add_pod(pod("b/1", "b", {{gm, 2}}, 1, 0));
    s.add_pod(pod("c/over", "c", {{gm, 3}}, 2, 0));  // c uses 3 > its min 1
    // a's usage 3 + 2 > min 2: only a's own lower-priority pods, least important first
    std::vector<victim> v;
    s.node_candidates(pod("a/high", "a", {{gm, 2}}, 9, 10), v);
    CHECK(ids(v) == std::vector<std::string>{"a/lower-newer", "a/low"});
    CHECK(v[0].rule == "same_quota_lower_priority");
    // b's usage 2 + 2 <= min 8: pods of quotas over their min, at any priority; never b's own or a quota within min
    std::vector<victim> w;
    s.node_candidates(pod("b/new", "b", {{gm, 2}}, 9, 0), w);
    if (mode == elastic_preemption_policy::capacity_scheduling) {
      CHECK(ids(w) == std::vector<std::string>{"a/lower-newer", "c/over", "a/low"});
      CHECK(w[0].rule == "borrowed_from_guaranteed");
    } else {
      // nos: only pods labelled over-quota
      for (const auto& x : w) CHECK(s.label(x.job_id) == elastic_capacity::over_quota);
    }
    // a namespace without a quota: no candidates
    std::vector<victim> none;
    s.node_candidates(pod("z/1", "z", {{gm, 1}}, 0, 100), none);
    CHECK(none.empty());
  }
}

// node_candidates skips a quota's own pods when none has a lower priority
// than the preemptor (counts kept on every add and removal) and reads only
// the over-quota tail of other quotas: after random adds and removals, a
// model's candidates equal those of a model given only the live pods.
TEST_CASE("elastic_quota: node candidates after adds and removals equal those of a fresh model") {
  {
    // a lower-priority pod is found beside higher ones, and not once it is gone
    elastic_quota_model m({eq("A", "a", {{gm, 1}}, {{gm, 12}})});
    const auto ask = [&](std::int32_t prio) {
      std::vector<victim> v;
      m.node_candidates(pod("a/new", "a", {{gm, 1}}, 100, prio), v);
      std::vector<std::string> ids;
      for (const auto& x : v) ids.push_back(x.job_id);
      return ids;
    };
    m.add_pod(pod("a/p3", "a", {{gm, 1}}, 1, 3));
    m.add_pod(pod("a/p0", "a", {{gm, 1}}, 2, 0));
    CHECK(ask(2) == std::vector<std::string>{"a/p0"});
    CHECK(ask(4) == std::vector<std::string>{"a/p0", "a/p3"});
    m.remove_pod("a/p0");
    CHECK(ask(2).empty());
    m.add_pod(pod("a/p1", "a", {{gm, 1}}, 3, 1));
    m.remove_pod("a/p3");
    CHECK(ask(2) == std::vector<std::string>{"a/p1"});
    CHECK(ask(1).empty());
  }
  std::mt19937_64 rng(20261128);
  for (auto mode : {elastic_preemption_policy::capacity_scheduling, elastic_preemption_policy::nos}) {
    CAPTURE(static_cast<int>(mode));
    elastic_options o;
    o.preemption = mode;
    const std::vector<elastic_quota_spec> specs{
        eq("A", "a", {{gm, 4}}, {{gm, 12}}), eq("B", "b", {{gm, 6}}, {{gm, 12}}), eq("C", "c", {{gm, 2}}, {{gm, 12}})};
    elastic_quota_model m(specs, o);
    std::vector<elastic_pod> live;
    const std::vector<std::string> nss{"a", "b", "c"};
    std::size_t compared = 0, named = 0;
    for (int step = 0; step < 300; ++step) {
      if (!live.empty() && rng() % 3 == 0) {
        const auto k = static_cast<std::size_t>(rng() % live.size());
        m.remove_pod(live[k].name);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        const auto& ns = nss[rng() % nss.size()];
        live.push_back(pod(ns + "/" + std::to_string(step), ns, {{gm, 1 + static_cast<amount>(rng() % 2)}}, step,
                           static_cast<std::int32_t>(rng() % 4)));
        m.add_pod(live.back());
      }
      elastic_quota_model fresh(specs, o);
      for (auto it = live.rbegin(); it != live.rend(); ++it) fresh.add_pod(*it);
      for (const auto& ns : nss) {
        const auto preemptor = pod(ns + "/new", ns, {{gm, 2}}, 1000, static_cast<std::int32_t>(rng() % 5));
        std::vector<victim> got, want;
        m.node_candidates(preemptor, got);
        fresh.node_candidates(preemptor, want);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].job_id == want[i].job_id);
          CHECK(got[i].rule == want[i].rule);
        }
        ++compared;
        named += got.size();
      }
    }
    CHECK(compared == 900);
    CHECK(named > 100);
  }
}

// ---- upstream mode: every decision as nos's scheduler makes it ---------------------------------

namespace {
elastic_options upstream_options() {
  elastic_options o;
  o.upstream = true;
  return o;
}
}  // namespace

TEST_CASE("elastic_quota: upstream a quota without max enforces no max; an empty max is enforced") {
  // nos: MaxEnforced is spec.max != nil; a present max compares cpu and memory even when it omits them
  elastic_quota_model s({eq("A", "a", {{gm, 10}, {resources::cpu, 4000}}), eq("B", "b", {{gm, 10}}, limit_vector{})},
                        upstream_options());
  CHECK(s.check("a", {{resources::cpu, 4000}, {gm, 10}}).allowed());
  CHECK_FALSE(s.check("a", {{resources::cpu, 4001}}).has_rule("over_max"));  // only the sum of mins bounds it
  const auto d = s.check("b", {{resources::cpu, 1}});
  CHECK(d.has_rule("over_max"));  // max {} lists nothing: cpu counts as 0
  CHECK(d.reasons()[0].limit == 0);

  // the loader tells the two apart
  resource_registry reg;
  const auto specs = load_elastic_quotas(parse_json_text(R"([
    {"kind": "ElasticQuota", "metadata": {"name": "none", "namespace": "a"}, "spec": {"min": {"cpu": "1"}}},
    {"kind": "ElasticQuota", "metadata": {"name": "empty", "namespace": "b"}, "spec": {"max": {}}}
  ])"),
                                         reg);
  CHECK_FALSE(specs[0].max);
  REQUIRE(specs[1].max);
  CHECK(specs[1].max->empty());
}

TEST_CASE(
    "elastic_quota: upstream a composite quota counts once per namespace; a superseded ElasticQuota counts nowhere") {
  // "old" governs a, until the CompositeElasticQuota "team" over a and b supersedes it
  auto specs = [] {
    return std::vector<elastic_quota_spec>{eq("old", "a", {{gm, 100}}), ceq("team", {"a", "b"}, {{gm, 10}}),
                                           eq("other", "c", {{gm, 10}})};
  };
  SECTION("default: the composite quota counts once, the superseded one not at all") {
    elastic_quota_model s(specs());
    CHECK(s.weight(s.quota_index("old")) == 0);
    CHECK(s.weight(s.quota_index("team")) == 1);
    CHECK(s.total_min().get(gm) == 20);  // not 120
    s.add_pod(pod("b/x", "b", {{gm, 5}}, 1));
    CHECK(s.total_used().get(gm) == 5);
    CHECK(s.check("c", {{gm, 15}}).allowed());
    CHECK(s.check("c", {{gm, 16}}).has_rule("total_guaranteed_exhausted"));
    // over-quota pool: (10 - 5) + 10 = 15; other's share 10/20
    CHECK(s.guaranteed_over_quota(s.quota_index("other"), gm) == 7);
    CHECK(s.guaranteed_over_quota(s.quota_index("old"), gm) == 0);
  }
  SECTION("upstream: nos sums its per-namespace map, so team's min, usage and unused min count twice") {
    elastic_quota_model s(specs(), upstream_options());
    CHECK(s.weight(s.quota_index("old")) == 0);
    CHECK(s.weight(s.quota_index("team")) == 2);
    CHECK(s.total_min().get(gm) == 30);
    s.add_pod(pod("b/x", "b", {{gm, 5}}, 1));
    CHECK(s.total_used().get(gm) == 10);
    CHECK(s.used(s.quota_index("team")).get(gm) == 5);
    CHECK(s.check("c", {{gm, 20}}).allowed());
    CHECK(s.check("c", {{gm, 21}}).has_rule("total_guaranteed_exhausted"));
    // pool: 2 x (10 - 5) + 10 = 20; other's share 10/30 -> floor(6.67)
    CHECK(s.guaranteed_over_quota(s.quota_index("other"), gm) == 6);
    CHECK(s.guaranteed_over_quota(s.quota_index("team"), gm) == 6);
    s.remove_pod("b/x");
    CHECK(s.total_used().is_zero());
  }
}

TEST_CASE("elastic_quota: upstream a namespace repeated in one composite quota is one namespace") {
  elastic_quota_model def({ceq("team", {"a", "b", "a"}, {{gm, 10}})});
  CHECK(def.total_min().get(gm) == 10);
  elastic_quota_model up({ceq("team", {"a", "b", "a"}, {{gm, 10}})}, upstream_options());
  CHECK(up.weight(0) == 2);
  CHECK(up.total_min().get(gm) == 20);
}

TEST_CASE("elastic_quota: upstream ephemeral-storage and pods are never compared") {
  const resource_vector req{{resources::ephemeral_storage, 100}, {resources::pods, 5}};
  auto specs = [] {
    return std::vector<elastic_quota_spec>{eq("A", "a", {{resources::ephemeral_storage, 10}, {resources::pods, 2}},
                                              {{resources::ephemeral_storage, 10}, {resources::pods, 2}})};
  };
  elastic_quota_model def(specs());
  const auto d = def.check("a", req);
  CHECK(d.has_rule("over_max"));
  CHECK(d.has_rule("total_guaranteed_exhausted"));
  elastic_quota_model up(specs(), upstream_options());
  CHECK(up.check("a", req).allowed());
  // in-quota labels still compare every resource min lists (nos's operator does)
  std::vector<elastic_label_change> ch;
  up.add_pod(pod("a/1", "a", req, 1), &ch);
  REQUIRE(ch.size() == 1);
  CHECK(ch[0].to == elastic_capacity::over_quota);
}

TEST_CASE("elastic_quota: upstream pod overhead is ignored") {
  const auto doc = parse_json_text(R"([{"kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
    "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}], "overhead": {"cpu": "250m"}}}])");
  resource_registry reg;
  CHECK(load_elastic_pods(doc, reg)[0].pod.request.get(resources::cpu) == 1250);
  CHECK(load_elastic_pods(doc, reg, default_gb_per_gpu, true)[0].pod.request.get(resources::cpu) == 1000);
  // a malformed overhead is still an error
  CHECK_THROWS_AS(load_elastic_pods(parse_json_text(R"([{"kind": "Pod", "metadata": {"name": "p"},
    "spec": {"overhead": {"cpu": "lots"}}}])"),
                                    reg, default_gb_per_gpu, true),
                  validation_error);
}

TEST_CASE("elastic_quota: upstream MIG resource names are matched as nos matches them") {
  constexpr auto up = mig_name_match::nos;
  // nos looks for the pattern anywhere in the name
  CHECK(mig_memory_gb("nvidia.com/mig-1g.10gb-shared", up) == 10);
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.10gb-shared"));
  CHECK(mig_memory_gb("example.nvidia.com/mig-2g.20gb", up) == 20);
  CHECK_FALSE(mig_memory_gb("example.nvidia.com/mig-2g.20gb"));
  // ... and reads the GB only when the name holds exactly one "<digits>gb"
  CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.10gb.5gb", up));
  CHECK(mig_memory_gb("nvidia.com/mig-3g.40gb", up) == 40);
  // both modes: the pattern itself must be there
  for (const auto m : {mig_name_match::exact, mig_name_match::nos}) {
    CHECK_FALSE(mig_memory_gb("nvidia.com/mig-2g.20gib", m));
    CHECK_FALSE(mig_memory_gb("example.com/mig-1g.10gb", m));
    CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g10gb", m));
    CHECK_FALSE(mig_memory_gb("nvidia.com/mig-1g.9223372036854775808gb", m));  // does not fit: nothing
  }
  resource_registry reg;
  const auto odd = reg.intern("nvidia.com/mig-1g.10gb-shared");
  resource_vector req{{odd, 2}, {resources::nvidia_gpu, 1}, {gm, 1000}};
  CHECK(gpu_memory_of(req, reg) == 32);
  CHECK(gpu_memory_of(req, reg, 32, up) == 52);
  add_gpu_memory(req, reg, 32, up);
  CHECK(req.get(gm) == 52);  // the computed amount replaces the pod's own

  // the pod loader in upstream mode matches as nos does
  const auto pods = load_elastic_pods(parse_json_text(R"([{"kind": "Pod", "metadata": {"name": "p"},
    "spec": {"containers": [{"resources": {"requests": {"nvidia.com/mig-1g.10gb-shared": 1}}}]}}])"),
                                      reg, default_gb_per_gpu, true);
  CHECK(pods[0].pod.request.get(gm) == 10);
}

TEST_CASE("elastic_quota: upstream a quota without namespaces is skipped") {
  resource_registry reg;
  // the CRD requires one namespace when the list is given: an empty list never exists
  CHECK_THROWS_AS(load_elastic_quotas(parse_json_text(R"([{"kind": "CompositeElasticQuota",
    "metadata": {"name": "c", "namespace": "q"}, "spec": {"namespaces": []}}])"),
                                      reg),
                  validation_error);
  auto specs = load_elastic_quotas(parse_json_text(R"([
    {"kind": "CompositeElasticQuota", "metadata": {"name": "c", "namespace": "q"}, "spec": {"min": {"cpu": "100"}}},
    {"kind": "ElasticQuota", "metadata": {"name": "a", "namespace": "a"}, "spec": {"min": {"cpu": "1"}}}
  ])"),
                                   reg);
  REQUIRE(specs[0].namespaces.empty());
  try {
    elastic_quota_model s(specs);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "CompositeElasticQuota q/c.spec.namespaces");
  }
  elastic_quota_model s(specs, upstream_options());
  CHECK(s.weight(s.quota_index("c")) == 0);
  CHECK(s.total_min().get(resources::cpu) == 1000);  // c's min counts nowhere
  CHECK(s.check("a", {{resources::cpu, 1000}}).allowed());
  CHECK(s.check("a", {{resources::cpu, 1001}}).has_rule("total_guaranteed_exhausted"));
}

TEST_CASE("elastic_quota: upstream min above max is accepted") {
  auto specs = [] { return std::vector<elastic_quota_spec>{eq("A", "a", {{gm, 10}}, {{gm, 5}})}; };
  CHECK_THROWS_AS(elastic_quota_model(specs()), validation_error);
  elastic_quota_model s(specs(), upstream_options());
  CHECK(s.check("a", {{gm, 5}}).allowed());
  CHECK(s.check("a", {{gm, 6}}).has_rule("over_max"));
}

TEST_CASE("elastic_quota: upstream fair share and borrowing compare resources as nos does") {
  // B borrows cpu only; the preemptor asks for gpu-memory only
  auto specs = [] {
    return std::vector<elastic_quota_spec>{eq("A", "a", {{gm, 40}, {resources::cpu, 4000}}),
                                           eq("B", "b", {{gm, 40}, {resources::cpu, 1000}})};
  };
  const resource_vector req{{gm, 10}};
  auto fill = [](elastic_quota_model& s) { s.add_pod(pod("b/1", "b", {{resources::cpu, 3000}, {gm, 10}}, 1)); };
  elastic_quota_model def(specs());
  fill(def);
  const auto a = def.quota_index("A"), b = def.quota_index("B");
  CHECK_FALSE(def.over_guaranteed(b, req));  // default: only in a resource the preemptor asks for
  elastic_quota_model up(specs(), upstream_options());
  fill(up);
  CHECK(up.over_guaranteed(b, req));  // nos: B uses more cpu than min + guaranteed, whatever A asks for
  // condition 2 compares cpu and memory always: a request for cpu in a quota whose min omits it
  elastic_quota_model def2({eq("A", "a", {{gm, 40}}), eq("B", "b", {{gm, 40}})});
  elastic_quota_model up2({eq("A", "a", {{gm, 40}}), eq("B", "b", {{gm, 40}})}, upstream_options());
  const resource_vector with_cpu{{gm, 10}, {resources::cpu, 500}};
  CHECK(def2.within_guaranteed(a, with_cpu));
  CHECK_FALSE(up2.within_guaranteed(a, with_cpu));
  // borrowing (capacity scheduling victims): nos compares scalars only where min lists them
  elastic_options cs = upstream_options();
  cs.preemption = elastic_preemption_policy::capacity_scheduling;
  elastic_options cs_def;
  cs_def.preemption = elastic_preemption_policy::capacity_scheduling;
  auto gpu_specs = [] { return std::vector<elastic_quota_spec>{eq("A", "a", {{gm, 40}}), eq("B", "b", {{gm, 40}})}; };
  elastic_quota_model bd(gpu_specs(), cs_def), bu(gpu_specs(), cs);
  for (auto* s : {&bd, &bu}) s->add_pod(pod("b/1", "b", {{resources::nvidia_gpu, 1}, {gm, 50}}, 1));
  std::vector<victim> vd, vu;
  // A asks for 40: the total (90) passes the sum of mins (80) unless B's pod goes
  bd.victims(pod("a/1", "a", {{gm, 40}}, 2), vd);
  bu.victims(pod("a/1", "a", {{gm, 40}}, 2), vu);
  CHECK(vd.size() == 1);
  CHECK(vu.size() == 1);  // B is over its min in gpu-memory, which min lists: borrowing in both
  // node level, A within its min: candidates are the pods of quotas over their min
  elastic_quota_model bd2(gpu_specs(), cs_def), bu2(gpu_specs(), cs);
  for (auto* s : {&bd2, &bu2}) s->add_pod(pod("b/1", "b", {{resources::nvidia_gpu, 1}, {gm, 40}}, 1));
  vd.clear();
  vu.clear();
  bd2.node_candidates(pod("a/1", "a", {{gm, 10}}, 2), vd);
  bu2.node_candidates(pod("a/1", "a", {{gm, 10}}, 2), vu);
  CHECK(vd.size() == 1);  // default: B's unguaranteed GPU is borrowed
  CHECK(vu.empty());      // nos: min does not list nvidia.com/gpu, so B is not over its min
}

TEST_CASE("elastic_quota: upstream a preemptor takes lower-priority pods of its own namespace only") {
  // nos (and capacity scheduling) compare namespaces: a composite quota's other namespaces are out of reach
  auto specs = [] { return std::vector<elastic_quota_spec>{ceq("team", {"a", "b"}, {{gm, 20}})}; };
  elastic_options cs;
  cs.preemption = elastic_preemption_policy::capacity_scheduling;
  elastic_options cs_up = cs;
  cs_up.upstream = true;
  for (const auto& opt : {elastic_options{}, upstream_options(), cs, cs_up}) {
    elastic_quota_model s(specs(), opt);
    s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 0));
    s.add_pod(pod("b/low", "b", {{gm, 10}}, 2, 0));
    const auto preemptor = pod("a/high", "a", {{gm, 10}}, 3, 5);
    std::vector<victim> node;
    s.node_candidates(preemptor, node);
    std::vector<std::string> names;
    for (const auto& v : node) names.push_back(v.job_id);
    std::sort(names.begin(), names.end());
    if (opt.upstream)
      CHECK(names == std::vector<std::string>{"a/low"});
    else
      CHECK(names == std::vector<std::string>{"a/low", "b/low"});
    if (opt.preemption == elastic_preemption_policy::capacity_scheduling) {
      std::vector<victim> v;
      s.victims(preemptor, v);  // the sum of mins (20) is used up: one pod must go
      REQUIRE(v.size() == 1);
      CHECK(v[0].job_id == (opt.upstream ? "a/low" : "b/low"));  // default: the newer of the two
    }
  }
}
