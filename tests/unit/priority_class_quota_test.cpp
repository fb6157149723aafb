// SPDX-License-Identifier: Apache-2.0
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/priority_class_quota_json.hpp>

#include "quota_catch.hpp"

using namespace quota;

namespace {
job pc_job(std::string id, std::string tenant, std::string cls, std::int64_t gpus, std::int32_t prio = 0) {
  job j;
  j.id = std::move(id);
  j.queue = tenant;
  j.ns = tenant;
  j.priority_class = std::move(cls);
  j.priority = prio;
  j.request.set(resources::nvidia_gpu, gpus);
  return j;
}
limit_vector gpus_max(amount n) {
  limit_vector v;
  v.set(resources::nvidia_gpu, n);
  return v;
}
resource_vector gpus(amount n) {
  resource_vector v;
  v.set(resources::nvidia_gpu, n);
  return v;
}
}  // namespace

TEST_CASE("priority_class_quota: at most 8 GPUs of high for team A whatever its total") {
  priority_class_quota_policy pq;
  pq.set("team-a", "high", {}, gpus_max(8));
  pq.commit(pc_job("h1", "team-a", "high", 6));
  const decision d = pq.check(pc_job("h2", "team-a", "high", 3));
  REQUIRE(d.denied());
  const reason& r = d.reasons()[0];
  CHECK(r.model == "priority_class_quota");
  CHECK(r.rule == "priority_class_over_max");
  CHECK(r.entity == "team-a/high");
  CHECK(r.resource_name == "nvidia.com/gpu");
  CHECK(r.requested == 3);
  CHECK(r.used == 6);
  CHECK(r.limit == 8);
  CHECK(pq.used("team-a", "high").get(resources::nvidia_gpu) == 6);  // the denial changed nothing
  CHECK(pq.check(pc_job("h3", "team-a", "high", 2)).allowed());
  CHECK(pq.check(pc_job("l1", "team-a", "low", 100)).allowed());   // another class: not capped
  CHECK(pq.check(pc_job("b1", "team-b", "high", 100)).allowed());  // another tenant: no entry
  pq.commit(pc_job("l1", "team-a", "low", 100));
  pq.release("l1");  // a job no pair counts is still known
  pq.release("h1");
  CHECK(pq.check(pc_job("h2", "team-a", "high", 8)).allowed());
}

TEST_CASE("priority_class_quota: a \"*\" entry applies to each tenant separately, bad config is config_error (validation 201)") {
  priority_class_quota_policy pq;
  pq.set("*", "high", {}, gpus_max(4));
  pq.set("team-a", "high", {}, gpus_max(1));  // its own entry wins
  pq.commit(pc_job("b1", "team-b", "high", 4));
  CHECK(pq.check(pc_job("b2", "team-b", "high", 1)).denied());
  CHECK(pq.check(pc_job("c1", "team-c", "high", 4)).allowed());  // team-c has its own usage
  CHECK(pq.check(pc_job("a1", "team-a", "high", 2)).denied());
  try {
    pq.set("team-a", "high", gpus(5), gpus_max(4));
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(e.number() == 201);
    CHECK(std::string(e.what()).find("team-a/high") != std::string::npos);
  }
  CHECK(*pq.limits_of("team-a", "high")->max.find(resources::nvidia_gpu) == 1);  // unchanged
  CHECK_THROWS_AS(pq.set("team-a", "", {}, {}), config_error);
  resource_registry reg;
  try {
    (void)load_priority_class_quota(
        json{{"tenant", "team"}, {"quotas", {{"a", {{"high", {{"max", {{"nvidia.com/gpu", -1}}}}}}}}}}, reg, "p");
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    const std::string w = e.what();
    CHECK(e.number() == 201);
    CHECK(w.find("p.tenant") != std::string::npos);
    CHECK(w.find("p.quotas.a.high.max.nvidia.com/gpu") != std::string::npos);
  }
}

TEST_CASE("priority_class_quota: usage above min is preemptible, victims newest first from lower-priority classes") {
  priority_class_quota_policy pq;
  pq.set("team-a", "low", gpus(2), {});
  pq.set("team-a", "high", gpus(4), gpus_max(8));
  pq.commit(pc_job("l1", "team-a", "low", 2, 10));  // fills min
  pq.commit(pc_job("l2", "team-a", "low", 1, 10));  // over min
  pq.commit(pc_job("l3", "team-a", "low", 1, 10));  // over min
  pq.commit(pc_job("h1", "team-a", "high", 2, 100));
  std::vector<victim> v;
  pq.victims(pc_job("h2", "team-a", "high", 2, 100), v);
  REQUIRE(v.size() == 2);
  CHECK(v[0].job_id == "l3");
  CHECK(v[1].job_id == "l2");
  CHECK(v[0].rule == "over_priority_class_min");
  CHECK(v[0].entity == "team-a/low");
  v.clear();
  pq.victims(pc_job("l4", "team-a", "low", 1, 10), v);  // high is within its min, and has higher priority
  CHECK(v.empty());
  v.clear();
  pq.victims(pc_job("x", "team-b", "high", 1, 100), v);  // another tenant: nothing
  CHECK(v.empty());
}

TEST_CASE("priority_class_quota: composes with the tenant's overall elastic quota through the engine") {
  elastic_quota_spec q;
  q.name = "team-a";
  q.namespaces = {"team-a"};
  q.max.emplace().set(resources::nvidia_gpu, 10);  // the tenant's total
  elastic_quota_model set({q});
  priority_class_quota_policy pq(priority_class_quota_policy::tenant_key::ns);
  pq.set("team-a", "high", {}, gpus_max(8));
  basic_engine<elastic_quota_policy, priority_class_quota_policy> e(elastic_quota_policy(std::move(set)), pq);
  const elastic_quota_model& used_set = e.model<elastic_quota_policy>().model();
  CHECK(e.admit(pc_job("h1", "team-a", "high", 8)).allowed());
  const decision d = e.admit(pc_job("h2", "team-a", "high", 1));  // class cap, total has room
  REQUIRE(d.denied());
  CHECK(d.has_rule("priority_class_over_max", "priority_class_quota"));
  CHECK_FALSE(d.has_rule("over_max", "elastic_quota"));
  CHECK(used_set.used(0).get(resources::nvidia_gpu) == 8);  // nothing committed
  CHECK(e.admit(pc_job("l1", "team-a", "low", 2)).allowed());
  const decision t = e.admit(pc_job("l2", "team-a", "low", 1));  // total cap now
  CHECK(t.has_rule("over_max", "elastic_quota"));
  e.release("h1");
  CHECK(e.admit(pc_job("h2", "team-a", "high", 1)).allowed());
  json j;
  to_json(j, e.model<1>());
  CHECK(j["team-a/high"]["used"]["nvidia.com/gpu"] == 1);
  CHECK(j["team-a/high"]["max"]["nvidia.com/gpu"] == 8);
}

TEST_CASE("priority_class_quota: a negative request is a validation_error in check and commit, nothing changes") {
  priority_class_quota_policy pq;
  pq.set("team-a", "high", {}, gpus_max(8));
  pq.commit(pc_job("h1", "team-a", "high", 8));
  // a job of -8 would bring usage to 0 and let 8 more GPUs past the max
  CHECK_THROWS_AS(pq.check(pc_job("neg", "team-a", "high", -8)), validation_error);
  CHECK_THROWS_AS(pq.commit(pc_job("neg", "team-a", "high", -8)), validation_error);
  CHECK(pq.used("team-a", "high").get(resources::nvidia_gpu) == 8);
  CHECK(pq.check(pc_job("h2", "team-a", "high", 1)).denied());
  CHECK_THROWS_AS(pq.release("neg"), unknown_entity_error);
}

TEST_CASE(
    "priority_class_quota: introspection names a custom resource by the registry, what max leaves out is unlimited") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  priority_class_quota_policy pq(priority_class_quota_policy::tenant_key::queue, &reg);
  limit_vector max;
  max.set(resources::nvidia_gpu, 8);
  resource_vector min;
  min.set(resources::cpu, 1000);
  pq.set("team-a", "high", min, max);
  job j = pc_job("h1", "team-a", "high", 2);
  j.request.set(foo, 3);
  pq.commit(j);
  json out;
  to_json(out, pq);
  const json& e = out["team-a/high"];
  CHECK(e["used"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 2}});
  CHECK(e["max"] == json{{"cpu", "unlimited"}, {"example.com/foo", "unlimited"}, {"nvidia.com/gpu", 8}});
  CHECK(out.dump().find('#') == std::string::npos);
  // without a registry an id it does not know has no name to show
  priority_class_quota_policy anonymous;
  anonymous.set("team-a", "high", {}, max);
  anonymous.commit(j);
  CHECK_THROWS_AS(to_json(out, anonymous), unknown_entity_error);
}
