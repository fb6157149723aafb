// Tests of the elastic quota model (nos ElasticQuota / CompositeElasticQuota).
#include <algorithm>
#include <map>
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

elastic_quota_spec eq(std::string name, std::string ns, resource_vector min, limit_vector max = {}) {
  elastic_quota_spec s;
  s.name = std::move(name);
  s.object_namespace = ns;
  s.namespaces = {std::move(ns)};
  s.min = std::move(min);
  s.max = std::move(max);
  return s;
}

elastic_quota_spec ceq(std::string name, std::vector<std::string> nss, resource_vector min, limit_vector max = {}) {
  elastic_quota_spec s;
  s.name = std::move(name);
  s.namespaces = std::move(nss);
  s.composite = true;
  s.min = std::move(min);
  s.max = std::move(max);
  return s;
}

elastic_pod pod(std::string name, std::string ns, resource_vector req, std::int64_t t, std::int32_t prio = 0) {
  return elastic_pod{std::move(name), std::move(ns), std::move(req), prio, t};
}

// The seed's fair-share table: A min 40, B min 10, C min 30 (gpu-memory GB).
elastic_quota_set seed_cluster() {
  return elastic_quota_set({eq("A", "a", {{gm, 40}}), eq("B", "b", {{gm, 10}}), eq("C", "c", {{gm, 30}})});
}

}  // namespace

TEST_CASE("elastic: seed gpu-memory example mig-1g.10gb + gpu = 42") {
  resource_registry reg;
  const auto mig = reg.intern("nvidia.com/mig-1g.10gb");
  resource_vector req{{mig, 1}, {resources::nvidia_gpu, 1}};
  REQUIRE(gpu_memory_of(req, reg) == 42);
  REQUIRE(gpu_memory_of(req, reg, 40) == 50);  // GB per GPU is configurable
  add_gpu_memory(req, reg);
  REQUIRE(req.get(gm) == 42);
}

TEST_CASE("elastic: MIG resource name parsing edge cases") {
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

TEST_CASE("elastic: pod request is max(sum containers, max init) + overhead") {
  using resources::cpu;
  using resources::memory;
  std::vector<resource_vector> containers{{{cpu, 100}, {memory, 1024}}, {{cpu, 200}, {memory, 1024}}};
  std::vector<resource_vector> init{{{cpu, 500}, {memory, 512}}, {{cpu, 50}}};
  const resource_vector overhead{{cpu, 10}};
  const auto r = pod_request(containers, init, overhead);
  CHECK(r.get(cpu) == 510);      // init 500 > 300, + 10
  CHECK(r.get(memory) == 2048);  // containers 2048 > 512
}

TEST_CASE("elastic: seed fair-share table gives A 15 and B 3") {
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

TEST_CASE("elastic: seed t1/t2 preemption example") {
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

TEST_CASE("elastic: admission over max, no quota, omitted max unlimited") {
  elastic_quota_set s({eq("A", "a", {{gm, 10}}, {{gm, 20}}), eq("B", "b", {{gm, 100}})});
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

TEST_CASE("elastic: upstream policy counts missing cpu and memory as 0") {
  elastic_options up;
  up.missing = elastic_missing_policy::upstream;
  elastic_quota_set s({eq("A", "a", {{gm, 10}})}, up);
  const auto d = s.check("a", {{resources::cpu, 100}});
  REQUIRE(d.denied());
  CHECK(d.has_rule("over_max"));
  CHECK(d.has_rule("total_guaranteed_exhausted"));
  CHECK(s.check("a", {{resources::nvidia_gpu, 1}}).allowed());  // other resources stay unlimited
  elastic_quota_set def({eq("A", "a", {{gm, 10}})});
  CHECK(def.check("a", {{resources::cpu, 100}}).allowed());
}

TEST_CASE("elastic: nominated pods count at admission") {
  elastic_quota_set s({eq("A", "a", {{gm, 10}}, {{gm, 20}}), eq("B", "b", {{gm, 10}})});
  s.set_nominated(s.quota_of("a"), {{gm, 15}});
  CHECK(s.check("a", {{gm, 5}}).allowed());
  CHECK(s.check("a", {{gm, 6}}).has_rule("over_max"));
  CHECK(s.check("b", {{gm, 6}}).has_rule("total_guaranteed_exhausted"));
  CHECK(s.check("b", {{gm, 5}}).allowed());
}

TEST_CASE("elastic: composite quota takes precedence over elastic quota") {
  elastic_quota_set s({eq("eq-a", "a", {{gm, 5}}, {{gm, 5}}), ceq("team", {"a", "b"}, {{gm, 50}}, {{gm, 50}})});
  CHECK(s.spec(s.quota_of("a")).name == "team");
  CHECK(s.spec(s.quota_of("b")).name == "team");
  CHECK(s.check("a", {{gm, 30}}).allowed());  // the EQ's max 5 does not apply
  s.add_pod(pod("a/x", "a", {{gm, 20}}, 1));
  s.add_pod(pod("b/y", "b", {{gm, 20}}, 2));
  CHECK(s.used(s.quota_of("b")).get(gm) == 40);  // one usage for both namespaces
  CHECK(s.check("b", {{gm, 11}}).has_rule("over_max"));
}

TEST_CASE("elastic: validation reports every problem with object and field") {
  try {
    elastic_quota_set s(
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

TEST_CASE("elastic: labels flip when the oldest pod ends") {
  elastic_quota_set s({eq("A", "a", {{gm, 20}}), eq("B", "b", {{gm, 100}})});
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

TEST_CASE("elastic: label order: creation, priority, size, name; no skipping") {
  SECTION("nos order: lower priority first at equal creation time (nos controller)") {
    elastic_quota_set s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/high", "a", {{gm, 5}}, 1, 9));
    s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 0));
    CHECK(s.label("a/low") == elastic_capacity::in_quota);
    CHECK(s.label("a/high") == elastic_capacity::over_quota);
  }
  SECTION("seed order: smaller request first at equal creation time") {
    elastic_options o;
    o.label_order = elastic_label_order::creation_then_size;
    elastic_quota_set s({eq("A", "a", {{gm, 10}})}, o);
    s.add_pod(pod("a/high", "a", {{gm, 5}}, 1, 9));
    s.add_pod(pod("a/low", "a", {{gm, 10}}, 1, 0));
    CHECK(s.label("a/high") == elastic_capacity::in_quota);
    CHECK(s.label("a/low") == elastic_capacity::over_quota);
  }
  SECTION("equal creation and priority: smaller request first, then name") {
    elastic_quota_set s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/x-big", "a", {{gm, 10}}, 1));
    s.add_pod(pod("a/y-small", "a", {{gm, 4}}, 1));
    s.add_pod(pod("a/b-small", "a", {{gm, 4}}, 1));
    CHECK(s.label("a/b-small") == elastic_capacity::in_quota);
    CHECK(s.label("a/y-small") == elastic_capacity::in_quota);
    CHECK(s.label("a/x-big") == elastic_capacity::over_quota);
  }
  SECTION("a small pod after the first over-quota pod stays over-quota") {
    elastic_quota_set s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/1", "a", {{gm, 8}}, 1));
    s.add_pod(pod("a/2", "a", {{gm, 8}}, 2));
    s.add_pod(pod("a/3", "a", {{gm, 1}}, 3));
    CHECK(s.label("a/1") == elastic_capacity::in_quota);
    CHECK(s.label("a/2") == elastic_capacity::over_quota);
    CHECK(s.label("a/3") == elastic_capacity::over_quota);
  }
  SECTION("resources min does not list do not count") {
    elastic_quota_set s({eq("A", "a", {{gm, 10}})});
    s.add_pod(pod("a/1", "a", {{gm, 10}, {resources::cpu, 99000}}, 1));
    CHECK(s.label("a/1") == elastic_capacity::in_quota);
  }
}

TEST_CASE("elastic: typed errors leave the state unchanged") {
  elastic_quota_set s({eq("A", "a", {{gm, 10}})});
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
}

TEST_CASE("elastic: capacity-scheduling victim policy") {
  elastic_options o;
  o.preemption = elastic_preemption_policy::capacity_scheduling;
  elastic_quota_set s({eq("A", "a", {{gm, 20}}, {{gm, 30}}), eq("B", "b", {{gm, 20}})}, o);
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

TEST_CASE("elastic: policy adapter maps job.ns and job.request") {
  elastic_quota_set s({eq("A", "a", {{gm, 10}}, {{gm, 10}}), eq("B", "b", {{gm, 30}})});
  elastic_quota_policy p(s);
  CHECK(p.policy_name() == "elastic_quota");
  job j;
  j.id = "a/1";
  j.ns = "a";
  j.request = {{gm, 10}};
  REQUIRE(p.check(j).allowed());
  p.commit(j);
  CHECK(s.used(s.quota_of("a")).get(gm) == 10);
  job k = j;
  k.id = "a/2";
  CHECK(p.check(k).has_rule("over_max"));
  CHECK_THROWS_AS(p.commit(j), state_error);
  p.release("a/1");
  CHECK(s.used(s.quota_of("a")).get(gm) == 0);
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

TEST_CASE("elastic: randomized invariants after every operation") {
  const std::vector<std::string> nss{"a", "b", "c", "free"};
  elastic_quota_set s({eq("A", "a", {{gm, 40}, {resources::cpu, 4000}}, {{gm, 80}}), eq("B", "b", {{gm, 10}}),
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
      if (q != elastic_quota_set::npos) {
        for (resource_id r : {resources::cpu, gm}) {
          if (req.get(r) <= 0) continue;
          amount used_q = 0, used_all = 0, min_all = 0;
          bool any_min = false;
          for (auto& [n, rp] : running) {
            if (s.quota_of(rp.ns) == q) used_q += rp.request.get(r);
            if (s.quota_of(rp.ns) != elastic_quota_set::npos) used_all += rp.request.get(r);
          }
          for (std::uint32_t i = 0; i < s.size(); ++i)
            if (s.spec(i).min.has(r)) {
              any_min = true;
              min_all += s.spec(i).min.get(r);
            }
          if (auto* m = s.spec(q).max.find(r); m && used_q + req.get(r) > *m) expect = false;
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
std::string data(const char* f) {
  return std::string(QUOTA_SOURCE_DIR) + "/tests/data/elastic/" + f;
}
}  // namespace

TEST_CASE("elastic: loads EQ, CEQ and pods from kubectl JSON") {
  resource_registry reg;
  auto specs = load_elastic_quotas(load_json_file(data("quotas.json")), reg);
  REQUIRE(specs.size() == 4);
  CHECK(specs[0].name == "quota-a");
  CHECK(specs[0].namespaces == std::vector<std::string>{"team-a"});
  CHECK(specs[0].max.empty());  // omitted max: unlimited
  CHECK(specs[1].max.bound(resources::cpu) == 8000);
  CHECK(specs[3].composite);
  CHECK(specs[3].namespaces == std::vector<std::string>{"team-c", "team-d"});
  elastic_quota_set s(std::move(specs), {}, &reg);
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

TEST_CASE("elastic: JSON errors name every offending object and field") {
  resource_registry reg;
  try {
    (void)load_elastic_quotas(load_json_file(data("bad_quotas.json")), reg);
    FAIL("expected validation_error");
  } catch (const validation_error& e) {
    const auto& p = e.problems();
    REQUIRE(p.size() == 3);
    CHECK(p[0].path == "ElasticQuota x/neg.spec.min.cpu");
    CHECK(p[1].path == "ElasticQuota x/neg.spec.max.memory");
    CHECK(p[2].path == "CompositeElasticQuota default/no-ns.spec.namespaces");
  }
  CHECK(detail::elastic_parse_time("1970-01-01T00:00:01Z") == 1000);
  CHECK(detail::elastic_parse_time("2024-13-01T00:00:00Z") == -1);
  CHECK(detail::elastic_parse_time("yesterday") == -1);
}

TEST_CASE("elastic: a copied set is independent of the original (its own pods, labels and lists)") {
  auto original = seed_cluster();
  const auto a = original.quota_index("A");
  original.add_pod(pod("p1", "a", {{gm, 30}}, 1));
  original.add_pod(pod("p2", "a", {{gm, 20}}, 2));  // 50 > min 40: p2 over quota
  REQUIRE(original.label("p2") == elastic_capacity::over_quota);

  elastic_quota_set copy(original);
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
  elastic_quota_set assigned = seed_cluster();
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
  elastic_quota_set moved(std::move(assigned));
  moved.remove_pod("p3");
  CHECK(moved.used(a).get(gm) == 0);
}
