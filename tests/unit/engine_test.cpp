// SPDX-License-Identifier: Apache-2.0
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>
#include <quota/kai_claims.hpp>
#include <quota/kai_fair_share.hpp>
#include <quota/kueue.hpp>
#include <quota/volcano.hpp>
#include <quota/volcano_capacity.hpp>
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>

#include <algorithm>
#include <compare>
#include <map>

#include "kueue_fixtures.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {
// A tiny test model: a per-queue cap on one resource.
class cap_policy {
 public:
  cap_policy(std::string_view name, resource_id res, std::int64_t cap) : name_(name), res_(res), cap_(cap) {}
  [[nodiscard]] std::string_view policy_name() const { return name_; }
  [[nodiscard]] decision check(const job& j) const {
    const auto used = used_of(j.queue);
    const auto req = j.request.get(res_);
    if (used + req > cap_) return decision::deny(reason{name_, "over_cap", j.queue, res_, "", req, used, cap_, ""});
    return decision::allow();
  }
  void commit(const job& j) {
    if (fail_next_commit) {
      fail_next_commit = false;
      throw overflow_error("injected failure");
    }
    if (deny_next_commit) {  // as if a concurrent reload had lowered the cap
      deny_next_commit = false;
      throw commit_denied_error(
          "cap lowered", decision::deny(reason{name_, "over_cap", j.queue, res_, "", j.request.get(res_), 0, 0, ""}));
    }
    if (jobs_.count(j.id)) throw state_error(error_id::state_duplicate, j.id);
    jobs_[j.id] = {j.queue, j.request.get(res_)};
    used_[j.queue] += j.request.get(res_);
  }
  void release(std::string_view id) {
    auto it = jobs_.find(std::string(id));
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    used_[it->second.first] -= it->second.second;
    jobs_.erase(it);
  }
  void victims(const job& j, std::vector<victim>& out) const {
    for (const auto& [id, qa] : jobs_)
      if (qa.first == j.queue) out.push_back(victim{id, name_, "same_queue", qa.first});
  }
  [[nodiscard]] std::int64_t used_of(const std::string& q) const {
    auto it = used_.find(q);
    return it == used_.end() ? 0 : it->second;
  }
  bool fail_next_commit = false;
  bool deny_next_commit = false;

 private:
  std::string_view name_;
  resource_id res_;
  std::int64_t cap_;
  std::map<std::string, std::pair<std::string, std::int64_t>> jobs_;
  std::map<std::string, std::int64_t> used_;
};
static_assert(policy<cap_policy>);

job gpu_job(std::string id, std::string queue, std::int64_t gpus, std::int64_t cpu = 0) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.request.set(resources::nvidia_gpu, gpus);
  j.request.set(resources::cpu, cpu);
  return j;
}
}  // namespace

TEST_CASE("engine: admission is all-or-nothing across models, reasons of every model listed") {
  basic_engine<cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                         cap_policy("cpus", resources::cpu, 8000));
  CHECK(e.admit(gpu_job("a", "q", 3, 4000)).allowed());
  // gpus would allow 1 more, cpus would not: nothing committed anywhere
  const decision d = e.admit(gpu_job("b", "q", 1, 5000));
  CHECK(d.denied());
  CHECK(d.has_rule("over_cap", "cpus"));
  CHECK(e.model<0>().used_of("q") == 3);
  CHECK(e.model<1>().used_of("q") == 4000);
  // both deny: both reasons
  const decision both = e.check(gpu_job("c", "q", 2, 5000));
  REQUIRE(both.reasons().size() == 2);
  CHECK(both.reasons()[0].model == "gpus");
  CHECK(both.reasons()[1].model == "cpus");
}

TEST_CASE("engine: a failing commit is rolled back in the models already committed") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  e.model(1).target<cap_policy>()->fail_next_commit = true;
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 2, 1000)), overflow_error);
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 0);
  CHECK_FALSE(e.is_admitted("a"));
  CHECK(e.admit(gpu_job("a", "q", 2, 1000)).allowed());
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 2);
}

TEST_CASE("engine: restore commits running work without a check, over quota included; errors undo everything") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  // 6 GPUs in a queue capped at 4: admit denies, restore accounts it as it runs
  CHECK(e.admit(gpu_job("big", "q", 6, 1000)).denied());
  REQUIRE_NOTHROW(e.restore(gpu_job("big", "q", 6, 1000)));
  CHECK(e.is_admitted("big"));
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 6);
  CHECK(e.check(gpu_job("small", "q", 1)).denied());                  // the quota sees the restored usage
  REQUIRE_THROWS_AS(e.restore(gpu_job("big", "q", 1)), state_error);  // a duplicate stays an error
  // a model that refuses the job at commit: an error (not a denial), nothing kept anywhere
  e.model(1).target<cap_policy>()->deny_next_commit = true;
  REQUIRE_THROWS_AS(e.restore(gpu_job("other", "r", 1, 1000)), commit_denied_error);
  CHECK(e.model(0).target<cap_policy>()->used_of("r") == 0);
  CHECK_FALSE(e.is_admitted("other"));
  e.model(1).target<cap_policy>()->fail_next_commit = true;
  REQUIRE_THROWS_AS(e.restore(gpu_job("other", "r", 1, 1000)), overflow_error);
  CHECK(e.model(0).target<cap_policy>()->used_of("r") == 0);
  e.release("big");
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 0);
}

TEST_CASE("engine: a commit denied by a concurrent change is undone everywhere and returned as a denial") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  e.model(1).target<cap_policy>()->deny_next_commit = true;
  decision d;
  REQUIRE_NOTHROW(d = e.admit(gpu_job("a", "q", 2, 1000)));
  REQUIRE(d.denied());
  CHECK(d.reasons().at(0).model == "cpus");
  CHECK(d.reasons().at(0).rule == "over_cap");
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 0);  // the first model's commit was undone
  CHECK_FALSE(e.is_admitted("a"));
  // the same in the compile-time engine; a model used directly sees a state_error (505)
  basic_engine<cap_policy, cap_policy> be(cap_policy("gpus", resources::nvidia_gpu, 4),
                                          cap_policy("cpus", resources::cpu, 8000));
  be.model<1>().deny_next_commit = true;
  CHECK(be.admit(gpu_job("b", "q", 1, 1000)).denied());
  CHECK(be.model<0>().used_of("q") == 0);
  CHECK(be.admit(gpu_job("b", "q", 1, 1000)).allowed());
  cap_policy direct("cpus", resources::cpu, 8000);
  direct.deny_next_commit = true;
  try {
    direct.commit(gpu_job("c", "q", 0, 1000));
    FAIL("no error");
  } catch (const state_error& err) {
    CHECK(err.id() == error_id::state_not_admitted);
  }
}

TEST_CASE("engine: release always succeeds for admitted jobs; unknown and duplicate ids are typed errors") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  CHECK(e.admit(gpu_job("a", "q", 4)).allowed());
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 0)), state_error);
  CHECK(e.check(gpu_job("b", "q", 1)).denied());
  e.release("a");
  CHECK(e.check(gpu_job("b", "q", 1)).allowed());
  REQUIRE_THROWS_AS(e.release("a"), unknown_entity_error);
  REQUIRE_THROWS_AS(e.release("never"), unknown_entity_error);
  CHECK(e.admitted_count() == 0);
}

TEST_CASE("engine: victims come from every model, and the engine is itself a policy") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  CHECK(e.admit(gpu_job("a", "q", 1, 1)).allowed());
  std::vector<victim> out;
  e.victims(gpu_job("x", "q", 1), out);
  REQUIRE(out.size() == 2);
  CHECK(out[0] == victim{"a", "gpus", "same_queue", "q"});
  // engines nest: an engine inside an engine
  engine outer;
  outer.add(any_policy(std::move(e)));
  CHECK(outer.check(gpu_job("y", "q", 4)).denied());
  CHECK(outer.check(gpu_job("y", "other", 4)).allowed());
}

TEST_CASE("engine: both engines share one protocol: rollback, duplicate and unknown ids behave the same") {
  basic_engine<cap_policy, cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                                     cap_policy("cpus", resources::cpu, 8000),
                                                     cap_policy("more", resources::cpu, 8000));
  // the third model fails: the first two release the job again
  e.model<2>().fail_next_commit = true;
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 2, 1000)), overflow_error);
  CHECK(e.model<0>().used_of("q") == 0);
  CHECK(e.model<1>().used_of("q") == 0);
  CHECK_FALSE(e.is_admitted("a"));
  CHECK(e.admitted_count() == 0);
  CHECK(e.admit(gpu_job("a", "q", 2, 1000)).allowed());
  CHECK(e.model<2>().used_of("q") == 1000);
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 0)), state_error);
  REQUIRE_THROWS_AS(e.commit(gpu_job("big", "q", 9)), state_error);  // commit of a denied job
  CHECK_FALSE(e.is_admitted("big"));
  REQUIRE_THROWS_AS(e.release("never"), unknown_entity_error);
  e.release("a");
  CHECK(e.model<0>().used_of("q") == 0);
  CHECK(e.model<2>().used_of("q") == 0);
  CHECK(e.admitted_count() == 0);
  static_assert(policy<decltype(e)>);
}

// ---- composition: the optional capabilities (quota/capabilities.hpp) -----------------------

namespace {
job queue_job(std::string id, std::string queue, std::int64_t gpus, std::int32_t priority = 0,
              std::int64_t created = 0) {
  job j = gpu_job(std::move(id), std::move(queue), gpus);
  j.request = resource_vector{{resources::nvidia_gpu, gpus}};
  j.priority = priority;
  j.created_ms = created;
  return j;
}
// Volcano proportion: queues "low" and "high" (weights 1, 8 GPUs in all)
volcano_policy volcano(std::int32_t high_priority, std::int64_t high_created = 0) {
  volcano_queue_spec low{"low", 1, {}, {}, true, volcano_queue_state::open, "", 0, 0};
  volcano_queue_spec high{"high", 1, {}, {}, true, volcano_queue_state::open, "", high_priority, high_created};
  return volcano_policy(
      volcano_model({resources::nvidia_gpu}, resource_vector{{resources::nvidia_gpu, 8}}, {low, high}));
}
// KAI: queues "a" and "b" under "root", quota 2 GPUs each, 8 GPUs in all
kai_fair_share_policy kai(std::int32_t b_priority = 100) {
  std::vector<kai_fair_share_queue_spec> specs(3);
  specs[0].name = "root";
  specs[0].resources[resources::nvidia_gpu] = kai_fair_share_resource{-1, 1, -1};
  for (std::size_t i = 1; i < 3; ++i) {
    specs[i].name = i == 1 ? "a" : "b";
    specs[i].parent = "root";
    specs[i].resources[resources::nvidia_gpu] = kai_fair_share_resource{2, 1, -1};
  }
  specs[2].priority = b_priority;
  kai_fair_share_model t(std::move(specs));
  t.set_capacity(resource_vector{{resources::nvidia_gpu, 8}});
  t.compute();
  return kai_fair_share_policy(std::move(t));
}
amount fair_gpu(const kai_fair_share_policy& p, std::string_view q) {
  return p.tree().fair_share(p.tree().at(q), resources::nvidia_gpu);
}
}  // namespace

static_assert(capacity_aware<volcano_policy> && capacity_aware<volcano_capacity_policy> &&
              capacity_aware<kai_fair_share_policy>);
static_assert(!capacity_aware<kueue_policy> && !capacity_aware<elastic_quota_policy> && !capacity_aware<cap_policy>);
static_assert(capacity_aware<basic_engine<cap_policy, volcano_policy>> && capacity_aware<engine>);

TEST_CASE("composition: nodes that come or go change the total the dividing models share") {
  // Volcano's proportion plugin and KAI's fair share divide the cluster as it is now
  basic_engine<cap_policy, volcano_policy> b(cap_policy("cap", resources::nvidia_gpu, 100), volcano(0));
  CHECK(b.divides_capacity());
  b.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 8}});
  const job wide = queue_job("wide", "low", 12);
  b.pending_added(wide);
  CHECK(b.check(wide).has_rule("over_deserved", "volcano"));             // 12 of a cluster of 8
  b.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 16}});  // a node of 8 GPUs joined
  CHECK(b.check(wide).allowed());

  basic_engine<kai_fair_share_policy> k(kai());
  k.pending_added(queue_job("a-1", "a", 8));
  k.pending_added(queue_job("b-1", "b", 8));
  CHECK(fair_gpu(k.model<0>(), "a") == 4);  // 8 GPUs: a quota of 2 each, the rest shared evenly
  k.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 16}});
  CHECK(fair_gpu(k.model<0>(), "a") == 8);
  CHECK(fair_gpu(k.model<0>(), "b") == 8);
  // a negative total is refused, naming the resource, and changes nothing
  try {
    k.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, -1}});
    FAIL("expected a validation_error");
  } catch (const validation_error& e) {
    CHECK(std::string(e.what()).find("capacity/nvidia.com/gpu") != std::string::npos);
  }
  CHECK(fair_gpu(k.model<0>(), "a") == 8);
  CHECK_THROWS_AS(b.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, -8}}), validation_error);
  CHECK(b.check(wide).allowed());  // Volcano still divides 16

  // a total one model refuses changes no model: Volcano's capacity plugin keeps
  // guarantees within the total (6 here), so 4 GPUs are refused
  volcano_capacity_queue_spec g;
  g.name = "low";
  g.guarantee = resource_vector{{resources::nvidia_gpu, 6}};
  engine e;
  e.add(any_policy(volcano(0)));
  e.add(any_policy(volcano_capacity_policy(
      volcano_capacity_model({resources::nvidia_gpu}, resource_vector{{resources::nvidia_gpu, 8}}, {g}))));
  e.add(any_policy(cap_policy("cap", resources::nvidia_gpu, 100)));
  CHECK(e.model(0).divides_capacity());
  CHECK(e.model(1).divides_capacity());
  CHECK_FALSE(e.model(2).divides_capacity());
  e.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 8}});
  const job six = queue_job("six", "low", 6);
  e.pending_added(six);
  REQUIRE(e.check(six).allowed());
  CHECK_THROWS_AS(e.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 4}}), validation_error);
  CHECK(e.check(six).allowed());  // Volcano's proportion plugin, told 4 first, divides 8 again
  e.set_cluster_capacity(resource_vector{{resources::nvidia_gpu, 7}});
  CHECK(e.check(six).allowed());
}

TEST_CASE("composition: the first composed model that orders decides; another is chosen by index") {
  engine e;
  e.add(any_policy(cap_policy("cap", resources::nvidia_gpu, 100)));
  CHECK_FALSE(e.offers_order());
  CHECK(e.order_model() == std::nullopt);
  // no ordering model: one queue, higher priority first, then earlier creation
  CHECK(e.pending_queue(queue_job("x", "low", 1)).empty());
  CHECK(std::is_lt(e.compare_heads(queue_job("x", "low", 1, 5), queue_job("y", "high", 1, 1))));
  CHECK(std::is_lt(e.compare_pending(queue_job("x", "low", 1, 1, 10), queue_job("y", "low", 1, 1, 20))));
  e.add(any_policy(volcano(10)));
  e.add(any_policy(kai()));
  REQUIRE(e.order_model() == std::optional<std::size_t>(1));
  CHECK(e.pending_queue(queue_job("x", "low", 1)) == "low");
  // Volcano: the queue with the higher Queue priority goes first, whatever the job's priority
  CHECK(std::is_lt(e.compare_heads(queue_job("x", "high", 1, 0), queue_job("y", "low", 1, 100))));
  e.set_order_model(2);  // KAI: b and a have the same priority and no allocation: creation, then name
  CHECK(e.order_model() == std::optional<std::size_t>(2));
  CHECK(std::is_lt(e.compare_heads(queue_job("x", "a", 1), queue_job("y", "b", 1))));
  REQUIRE_THROWS_AS(e.set_order_model(0), validation_error);  // cap_policy does not order
  REQUIRE_THROWS_AS(e.set_order_model(3), unknown_entity_error);
  CHECK(e.order_model() == std::optional<std::size_t>(2));  // unchanged by the refusals

  basic_engine<cap_policy, volcano_policy> b(cap_policy("cap", resources::nvidia_gpu, 100), volcano(10));
  CHECK(b.order_model() == std::optional<std::size_t>(1));
  CHECK(std::is_lt(b.compare_heads(queue_job("x", "high", 1), queue_job("y", "low", 1, 100))));
}

TEST_CASE("composition: Volcano proportion orders heads by Queue priority, then share, then creation") {
  auto same = volcano(0, 0);
  // equal priority, share and creation: the name decides ("high" < "low")
  CHECK(std::is_lt(same.compare_heads(queue_job("x", "high", 1), queue_job("y", "low", 1))));
  auto later = volcano(0, 5);  // high created after low
  CHECK(std::is_lt(later.compare_heads(queue_job("x", "low", 1), queue_job("y", "high", 1))));
  // a smaller share goes first: low holds 1 of its deserved, high nothing
  auto v = volcano(0, 0);
  v.pending_added(queue_job("l1", "low", 4));
  v.pending_added(queue_job("h1", "high", 4));
  REQUIRE(v.check(queue_job("l1", "low", 4)).allowed());
  v.commit(queue_job("l1", "low", 4));
  CHECK(std::is_lt(v.compare_heads(queue_job("x", "high", 1), queue_job("y", "low", 1))));
  CHECK(std::is_gt(v.compare_heads(queue_job("y", "low", 1), queue_job("x", "high", 1))));
  // but Queue priority comes before share
  auto p = volcano(-1, 0);
  p.pending_added(queue_job("l1", "low", 4));
  p.commit(queue_job("l1", "low", 4));
  CHECK(std::is_lt(p.compare_heads(queue_job("y", "low", 1), queue_job("x", "high", 1))));
  // inside a queue: higher job priority, then earlier creation
  CHECK(std::is_lt(v.compare_pending(queue_job("x", "low", 1, 1, 50), queue_job("y", "low", 1, 0, 10))));
  CHECK(std::is_gt(v.compare_pending(queue_job("x", "low", 1, 0, 50), queue_job("y", "low", 1, 0, 10))));
}

TEST_CASE("composition: KAI fair share orders heads by its queue order chain") {
  auto p = kai(100);
  p.pending_added(queue_job("a1", "a", 6));
  p.pending_added(queue_job("b1", "b", 2));
  REQUIRE(p.check(queue_job("a1", "a", 6)).allowed());
  p.commit(queue_job("a1", "a", 6));
  // a is over its quota, b is starved (allocated + job <= quota): b first
  CHECK(std::is_lt(p.compare_heads(queue_job("b1", "b", 2), queue_job("a2", "a", 1))));
  // a starved queue beats a higher-priority queue that is not
  auto q = kai(200);
  q.pending_added(queue_job("b1", "b", 6));
  q.commit(queue_job("b1", "b", 6));
  CHECK(std::is_lt(q.compare_heads(queue_job("a1", "a", 1), queue_job("b2", "b", 1))));
  // when neither is starved, the higher priority goes first
  CHECK(std::is_lt(q.compare_heads(queue_job("b2", "b", 1), queue_job("a1", "a", 3))));
}

TEST_CASE("composition: Kueue offers the head that does not borrow first, then priority, then creation") {
  using quota::test::cpu;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(test::cq_cpu("cq-a", "co", kueue_resource_quota_spec{resources::cpu, cpu(4), {}, {}}));
  cfg.cluster_queues.push_back(test::cq_cpu("cq-b", "co", kueue_resource_quota_spec{resources::cpu, cpu(4), {}, {}}));
  cfg.local_queues.push_back({"team-a", "main", "cq-a"});
  cfg.local_queues.push_back({"team-b", "main", "cq-b"});
  kueue_policy k(cfg, resource_registry{});
  auto wl_job = [](std::string id, std::string ns, amount cores, std::int32_t prio, std::int64_t created) {
    job j;
    j.id = std::move(id);
    j.ns = std::move(ns);
    j.queue = "main";
    j.request.set(resources::cpu, cpu(cores));
    j.priority = prio;
    j.created_ms = created;
    return j;
  };
  CHECK(k.pending_queue(wl_job("x", "team-a", 1, 0, 0)) == "cq-a");  // the LocalQueue's ClusterQueue
  CHECK(k.pending_queue(wl_job("x", "nowhere", 1, 0, 0)).empty());
  k.commit(wl_job("a0", "team-a", 4, 0, 0));             // cq-a at its nominal quota
  const job a_head = wl_job("a1", "team-a", 2, 100, 0);  // would borrow from the cohort
  const job b_head = wl_job("b1", "team-b", 2, 1, 5);    // within cq-b's nominal quota
  CHECK(std::is_lt(k.compare_heads(b_head, a_head)));
  CHECK(std::is_gt(k.compare_heads(a_head, b_head)));
  // neither borrows: priority, then creation
  const job b_low = wl_job("b2", "team-b", 1, 1, 1), b_older = wl_job("b3", "team-b", 1, 1, 0);
  CHECK(std::is_lt(k.compare_heads(wl_job("b4", "team-b", 1, 5, 9), b_low)));
  CHECK(std::is_lt(k.compare_heads(b_older, b_low)));
}

TEST_CASE("composition: demand is live, from submission until the job ends") {
  auto p = kai();
  CHECK(fair_gpu(p, "a") == 0);  // no demand yet: no fair share
  p.pending_added(queue_job("a1", "a", 8));
  CHECK(p.live_demand());
  CHECK(fair_gpu(p, "a") == 8);  // only a asks: it gets the whole cluster
  CHECK(fair_gpu(p, "b") == 0);
  p.pending_added(queue_job("b1", "b", 8));
  CHECK(fair_gpu(p, "a") == 4);
  CHECK(fair_gpu(p, "b") == 4);
  p.pending_added(queue_job("b1", "b", 8));  // twice: no change
  CHECK(fair_gpu(p, "b") == 4);
  p.commit(queue_job("b1", "b", 8));  // its demand becomes allocation: shares unchanged
  CHECK(fair_gpu(p, "b") == 4);
  p.pending_withdrawn("a1");  // deleted while pending
  CHECK(fair_gpu(p, "a") == 0);
  CHECK(fair_gpu(p, "b") == 8);
  p.pending_withdrawn("a1");  // not waiting: no change
  p.release("b1");            // ended
  CHECK(fair_gpu(p, "b") == 0);

  auto v = volcano(0);
  v.pending_added(queue_job("l1", "low", 6));
  CHECK(v.tree().deserved_floor(v.tree().index("low"), 0) == 6);
  v.pending_added(queue_job("h1", "high", 6));
  CHECK(v.tree().deserved_floor(v.tree().index("low"), 0) == 4);
  v.pending_withdrawn("h1");
  CHECK(v.tree().deserved_floor(v.tree().index("low"), 0) == 6);

  // the engine tells every model that follows demand
  engine e;
  e.add(any_policy(cap_policy("cap", resources::nvidia_gpu, 100)));
  e.add(any_policy(kai()));
  CHECK(e.follows_demand());
  e.pending_added(queue_job("a1", "a", 8));
  CHECK(fair_gpu(*e.model(1).target<kai_fair_share_policy>(), "a") == 8);
  e.pending_withdrawn("a1");
  CHECK(fair_gpu(*e.model(1).target<kai_fair_share_policy>(), "a") == 0);
}

TEST_CASE("composition: explain counts the job as demand, as a submission at the same instant would") {
  engine e;
  e.add(any_policy(volcano(0)));
  e.pending_added(queue_job("l1", "low", 8));
  REQUIRE(e.admit(queue_job("l1", "low", 8)).allowed());
  // a job of "high" now: high has no demand, so deserved 0 and check denies ...
  const job h = queue_job("h1", "high", 4);
  CHECK(e.check(h).denied());
  // ... but once submitted it counts, and high deserves 4 of 8: explain answers as a run would
  const explanation x = e.explain(h);
  CHECK(x.allowed());
  auto run = e;  // the run: submitted, then checked
  run.pending_added(h);
  CHECK(run.check(h).allowed());
  CHECK(e.check(h).denied());  // explain changed nothing
}

TEST_CASE("composition: a copied engine is independent of the original") {
  // every adapter owns its model: a copy of an adapter, or of an engine, is a model of its own
  using quota::test::cpu;
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(test::cq_cpu("cq", "", kueue_resource_quota_spec{resources::cpu, cpu(4), {}, {}}));
  cfg.local_queues.push_back({"team", "main", "cq"});
  yunikorn_limits_policy lim(reg);
  lim.manager().reload(
      load_yunikorn_limits_config(json::parse(R"({"name": "root", "queues": [{"name": "main", "limits": [
        {"limit": "u", "users": ["*"], "maxresources": {"vcore": "4"}}]}]})"),
                                  reg));
  elastic_quota_spec eq;
  eq.name = "team";
  eq.namespaces = {"team"};
  eq.max.emplace().set(resources::cpu, cpu(4));
  auto cpu_job = [](std::string id, amount cores) {
    job j;
    j.id = std::move(id);
    j.ns = "team";
    j.queue = "main";
    j.user = "sue";
    j.request.set(resources::cpu, cpu(cores));
    return j;
  };
  const job x = cpu_job("x", 4), y = cpu_job("y", 1);

  engine e;
  e.add(any_policy(kueue_policy(cfg, reg)));
  e.add(any_policy(lim));
  e.add(any_policy(elastic_quota_policy(elastic_quota_model({eq}))));
  engine e2 = e;
  REQUIRE(e2.admit(x).allowed());
  CHECK(e.check(x).allowed());    // the original has not seen x ...
  REQUIRE(e.admit(x).allowed());  // ... and admits it (a half-shared model would throw here)
  e.release("x");
  CHECK(e2.is_admitted("x"));
  CHECK(e.check(y).allowed());
  const decision full = e2.check(y);  // every model of the copy still holds x
  CHECK(full.has_rule("max_resources", "yunikorn_limits"));
  CHECK(full.has_rule("over_max", "elastic_quota"));
  CHECK(std::any_of(full.reasons().begin(), full.reasons().end(), [](const reason& r) { return r.model == "kueue"; }));

  basic_engine<yunikorn_limits_policy, elastic_quota_policy> b(lim, elastic_quota_policy(elastic_quota_model({eq})));
  auto b2 = b;
  REQUIRE(b2.admit(x).allowed());
  CHECK(b.admit(x).allowed());
  b.release("x");
  CHECK(b.model<0>().manager().user_usage("sue", "root.main").is_zero());
  CHECK(b2.model<0>().manager().user_usage("sue", "root.main").get(resources::cpu) == cpu(4));
  CHECK(b2.model<1>().model().used(0).get(resources::cpu) == cpu(4));
  CHECK(b.model<1>().model().used(0).is_zero());
}

namespace {
// a model whose node-level rule names a fixed list
struct named_node_rule {
  std::string_view name;
  std::vector<std::string> ids;
  [[nodiscard]] std::string_view policy_name() const { return name; }
  [[nodiscard]] decision check(const job&) const { return decision::allow(); }
  void commit(const job&) {}
  void release(std::string_view) {}
  void victims(const job&, std::vector<victim>&) const {}
  void node_candidates(const job&, std::vector<victim>& out) const {
    for (const auto& id : ids) out.push_back(victim{id, name, "node", ""});
  }
};
static_assert(node_preemption_aware<named_node_rule>);
}  // namespace

TEST_CASE("composition: node-level candidates are those every model with a node rule names") {
  engine none;
  none.add(any_policy(cap_policy("cap", resources::nvidia_gpu, 10)));
  CHECK_FALSE(none.has_node_rule());
  std::vector<victim> v;
  none.node_candidates(gpu_job("j", "q", 1), v);
  CHECK(v.empty());

  engine e;
  e.add(any_policy(cap_policy("cap", resources::nvidia_gpu, 10)));  // no rule: does not restrict
  e.add(any_policy(named_node_rule{"first", {"c", "a", "b", "a"}}));
  e.add(any_policy(named_node_rule{"second", {"b", "c", "x"}}));
  CHECK(e.has_node_rule());
  e.node_candidates(gpu_job("j", "q", 1), v);
  std::vector<std::string> ids;
  for (const auto& x : v) ids.push_back(x.job_id);
  CHECK(ids == std::vector<std::string>{"c", "b"});  // the first rule's order, each once, named by both
  CHECK(v[0].model == "first");

  basic_engine<named_node_rule, cap_policy> b(named_node_rule{"only", {"a", "a", "b"}},
                                              cap_policy("cap", resources::nvidia_gpu, 10));
  std::vector<victim> w{victim{"kept", "", "", ""}};
  b.node_candidates(gpu_job("j", "q", 1), w);
  REQUIRE(w.size() == 3);  // appended after what was there
  CHECK(w[0].job_id == "kept");
  CHECK(w[1].job_id == "a");
  CHECK(w[2].job_id == "b");
}

namespace {
// the claims model with one allocated claim ml/shared of `gpus` GPU devices, sharing the host's registry
kai_claims_policy shared_claim(const resource_registry& reg, std::int64_t gpus, std::string label = {}) {
  kai_claims_policy p(kai_claims_config{}, reg);
  claim_spec s;
  s.ns = "ml";
  s.name = "shared";
  s.queue_label = std::move(label);
  s.allocated = true;
  s.requests.push_back(claim_device{"gpu.nvidia.com", gpus, false, false, {}});
  for (std::int64_t i = 0; i < gpus; ++i) s.allocation.push_back(claim_device{"gpu.nvidia.com", 1, false, false, {}});
  (void)p.model().add_claim(s);
  return p;
}
job claim_job(std::string id, std::string queue, std::int64_t gpus = 0) {
  job j = queue_job(std::move(id), std::move(queue), gpus);
  j.ns = "ml";
  j.claims = {"shared"};
  return j;
}
amount alloc_gpu(const kai_fair_share_policy& p, std::string_view q) {
  return p.tree().allocated(p.tree().at(q), resources::nvidia_gpu);
}
}  // namespace

TEST_CASE("composition: a shared claim's devices are charged once, to the owning queue, in the other models") {
  resource_registry reg;
  basic_engine<kai_claims_policy, kai_fair_share_policy> e(shared_claim(reg, 4), kai());
  const auto& fs = e.model<1>();
  CHECK(e.check(claim_job("a1", "a", 1)).allowed());
  REQUIRE(e.admit(claim_job("a1", "a", 1)).allowed());  // a binds the claim first: a owns it
  CHECK(alloc_gpu(fs, "a") == 5);                       // its pod's GPU and the claim's 4
  REQUIRE(e.admit(claim_job("b1", "b")).allowed());     // another consumer: pays nothing for it
  CHECK(alloc_gpu(fs, "b") == 0);
  CHECK(alloc_gpu(fs, "a") == 5);
  e.release("a1");  // b1 still holds the claim: it stays charged to a
  CHECK(alloc_gpu(fs, "a") == 4);
  e.release("b1");  // the last consumer left: no charge
  CHECK(alloc_gpu(fs, "a") == 0);
  CHECK(fs.tree().allocated(fs.tree().at("root"), resources::nvidia_gpu) == 0);
}

TEST_CASE("composition: an admission that charges the queue is checked with the charge") {
  resource_registry reg;
  auto limited = [] {
    std::vector<kai_fair_share_queue_spec> specs(2);
    specs[0].name = "root";
    specs[0].resources[resources::nvidia_gpu] = kai_fair_share_resource{-1, 1, -1};
    specs[1].name = "a";
    specs[1].parent = "root";
    specs[1].resources[resources::nvidia_gpu] = kai_fair_share_resource{2, 1, 3};  // limit 3 GPUs
    kai_fair_share_model t(std::move(specs));
    t.set_capacity(resource_vector{{resources::nvidia_gpu, 8}});
    t.compute();
    return kai_fair_share_policy(std::move(t));
  };
  engine e;
  e.add(any_policy(shared_claim(reg, 4)));
  e.add(any_policy(limited()));
  const job j = claim_job("a1", "a");
  const decision d = e.check(j);  // the pod asks nothing, the claim 4 > limit 3
  REQUIRE(d.denied());
  CHECK(d.has_rule("over_limit", "kai_fair_share"));
  CHECK(e.admit(j).denied());
  CHECK(e.admitted_count() == 0);
  const explanation x = e.explain(j);  // explain agrees with check
  CHECK_FALSE(x.allowed());
  CHECK(x.verdict().has_rule("over_limit", "kai_fair_share"));
  CHECK(e.explain(queue_job("plain", "a", 3)).allowed());  // no claim: nothing charged
}

TEST_CASE("composition: a charge to a queue a receiving model does not know is refused, naming it") {
  resource_registry reg;
  engine e;
  e.add(any_policy(shared_claim(reg, 2, "team-x")));  // the claim's label names team-x: team-x pays
  e.add(any_policy(kai()));
  const job j = claim_job("a1", "a");
  const decision d = e.admit(j);  // the fair-share tree has no team-x
  REQUIRE(d.denied());
  REQUIRE(d.has_rule("unknown_queue", "kai_fair_share"));
  CHECK(d.reasons().front().entity == "team-x");
  CHECK(e.admitted_count() == 0);
  CHECK_FALSE(e.is_admitted("a1"));
  const auto* fs = e.model(1).target<kai_fair_share_policy>();
  CHECK(alloc_gpu(*fs, "a") == 0);
  const auto* cl = e.model(0).target<kai_claims_policy>();
  CHECK(cl->model().consumers(cl->model().claim_at("ml/shared")) == 0);
}

TEST_CASE("composition: charges of a model's initial state reach the other models once") {
  resource_registry reg;
  kai_claims_policy cl = shared_claim(reg, 3);
  // a running pod of queue b restored with the claims: b owns the claim already
  claim_pod pod;
  pod.id = "restored";
  pod.ns = "ml";
  pod.queue = cl.model().queue("b");
  pod.queue_name = "b";
  const std::vector<claim_id> ids{cl.model().claim_at("ml/shared")};
  (void)cl.model().restore(pod, ids);
  cl.model().finish_snapshot();
  engine e;
  e.add(any_policy(std::move(cl)));
  e.add(any_policy(kai()));
  e.sync_charges();
  CHECK(alloc_gpu(*e.model(1).target<kai_fair_share_policy>(), "b") == 3);
  CHECK(e.deducted_charge().empty());
}

TEST_CASE("composition: an orphan claim's devices shrink the capacity KAI fair share divides") {
  resource_registry reg;
  kai_claims_policy cl = shared_claim(reg, 3);
  // held at the start by pods of two queues, no label: an orphan, deducted
  for (const char* q : {"a", "b"}) {
    claim_pod pod;
    pod.id = q;
    pod.ns = "ml";
    pod.queue = cl.model().queue(q);
    pod.queue_name = q;
    const std::vector<claim_id> ids{cl.model().claim_at("ml/shared")};
    (void)cl.model().restore(pod, ids);
  }
  cl.model().finish_snapshot();
  REQUIRE(cl.model().orphan(cl.model().claim_at("ml/shared")));
  engine e;
  e.add(any_policy(std::move(cl)));
  e.add(any_policy(kai()));
  const auto* fs = e.model(1).target<kai_fair_share_policy>();
  const auto cap = [&] { return fs->tree().capacity(resources::nvidia_gpu); };
  REQUIRE(cap() == 8);
  e.sync_charges();
  CHECK(cap() == 5);  // 8 GPUs less the orphan's 3
  CHECK(fs->capacity_deduction().get(resources::nvidia_gpu) == 3);
  CHECK(e.deducted_charge().get(resources::nvidia_gpu) == 3);
  CHECK(alloc_gpu(*fs, "a") == 0);  // charged to no queue
  // the holders the host does not run: the claim on no known node
  std::vector<shared_allocation> held;
  e.held_allocations(held);
  REQUIRE(held.size() == 1);
  CHECK(held[0].key == "ml/shared");
  CHECK(held[0].amount.get(resources::nvidia_gpu) == 3);
  CHECK(held[0].node.empty());
  // a new consumer shares it: it is not held by it, and the deduction stays
  REQUIRE(e.admit(claim_job("c1", "a")).allowed());
  held.clear();
  e.held_allocations(held);
  CHECK(held.empty());
  CHECK(cap() == 5);
}

TEST_CASE("composition: a job's shared allocations are its claims' devices in node terms, each once") {
  resource_registry reg;
  kai_claims_policy p = shared_claim(reg, 2);
  claim_spec nic;
  nic.ns = "ml";
  nic.name = "nic";
  nic.requests.push_back(claim_device{"nic.example.com", 2, false, false, {}});
  nic.requests.push_back(claim_device{"gpu.nvidia.com", 1, false, false, {}});
  nic.requests.push_back(claim_device{"gpu.nvidia.com", 0, true, false, {}});  // All: unknown before allocation
  (void)p.model().add_claim(nic);
  job j = claim_job("j", "a");
  j.claims = {"shared", "ml/shared", "nic", "missing"};
  std::vector<shared_allocation> out;
  engine e;
  CHECK_FALSE(e.shares_allocations());
  e.add(any_policy(std::move(p)));
  CHECK(e.shares_allocations());
  e.shared_allocations(j, out);
  REQUIRE(out.size() == 2);  // "shared" and "ml/shared" are one claim; "missing" is not known
  CHECK(out[0].key == "ml/shared");
  CHECK(out[0].amount == resource_vector{{resources::nvidia_gpu, 2}});
  CHECK(out[1].key == "ml/nic");
  CHECK(out[1].amount == resource_vector{{resources::nvidia_gpu, 1}});  // the NIC is not a node resource here
  CHECK_FALSE(reg.find("nic.example.com").has_value());
}

namespace {
// a model that accounts charges and can be told to fail the next one
struct charge_book {
  std::map<std::string, resource_vector> held;
  bool fail_next = false;
  [[nodiscard]] std::string_view policy_name() const { return "book"; }
  [[nodiscard]] decision check(const job&) const { return decision::allow(); }
  void commit(const job&) {}
  void release(std::string_view) {}
  void victims(const job&, std::vector<victim>&) const {}
  void charge_added(const job& c) {
    if (fail_next) {
      fail_next = false;
      throw overflow_error("injected");
    }
    if (!held.emplace(c.id, c.request).second) throw state_error(error_id::state_duplicate, c.id);
  }
  void charge_removed(std::string_view id) { held.erase(std::string(id)); }
};
static_assert(charge_receiver<charge_book>);
}  // namespace

TEST_CASE("composition: a receiver failing to take a charge leaves every model as before") {
  resource_registry reg;
  basic_engine<kai_claims_policy, charge_book, charge_book> e(shared_claim(reg, 2), charge_book{}, charge_book{});
  e.model<2>().fail_next = true;  // the second receiver fails: the first one's charge is taken back
  CHECK_THROWS_AS(e.admit(claim_job("a1", "a")), overflow_error);
  CHECK(e.admitted_count() == 0);
  CHECK(e.model<1>().held.empty());
  CHECK(e.model<2>().held.empty());
  CHECK(e.model<0>().model().consumers(e.model<0>().model().claim_at("ml/shared")) == 0);
  REQUIRE(e.admit(claim_job("a1", "a")).allowed());  // and it can be admitted afterwards
  REQUIRE(e.model<1>().held.count("charge:a") == 1);
  CHECK(e.model<1>().held.at("charge:a").get(resources::nvidia_gpu) == 2);
  CHECK(e.model<2>().held.at("charge:a").get(resources::nvidia_gpu) == 2);
}

TEST_CASE("composition: scheduling cycles reach the models that know them, through any_policy and nested engines") {
  // cohort co: a (6 CPUs, reclaimWithinCohort Never) runs 1, b (0) borrows 3.
  // a's head (4) must preempt and has no candidates: Kueue holds a's quota
  // for the cycle, so b's next job cannot borrow the 2 free CPUs until it ends.
  using quota::test::cpu;
  resource_registry reg;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(test::cq_cpu("a", "co", kueue_resource_quota_spec{resources::cpu, cpu(6), {}, {}}));
  cfg.cluster_queues.push_back(test::cq_cpu("b", "co", kueue_resource_quota_spec{resources::cpu, 0, {}, {}}));
  auto cpu_job = [](std::string id, std::string queue, amount cores) {
    job j;
    j.id = std::move(id);
    j.queue = std::move(queue);
    j.pods = 1;
    j.request.set(resources::cpu, cpu(cores));
    return j;
  };
  const job head = cpu_job("a-head", "a", 4), later = cpu_job("b-next", "b", 1);
  struct open_door {  // admits everything, knows no cycles: composed as if it held nothing
    [[nodiscard]] std::string_view policy_name() const noexcept { return "open_door"; }
    [[nodiscard]] decision check(const job&) const { return decision::allow(); }
    void commit(const job&) {}
    void release(std::string_view) {}
    void victims(const job&, std::vector<victim>&) const {}
  };
  static_assert(!cycle_aware<open_door>);

  engine inner;
  inner.add(any_policy(kueue_policy(cfg, reg)));
  engine e;
  e.add(any_policy(std::move(inner)));
  e.add(any_policy(open_door{}));
  CHECK(e.keeps_cycles());
  REQUIRE(e.admit(cpu_job("a-run", "a", 1)).allowed());
  REQUIRE(e.admit(cpu_job("b-borrow", "b", 3)).allowed());
  REQUIRE(e.check(head).denied());
  e.head_denied(head);  // outside a cycle: nothing
  CHECK(e.check(later).allowed());
  e.begin_cycle();
  e.head_denied(head);
  CHECK(e.check(later).denied());
  e.end_cycle();
  CHECK(e.check(later).allowed());

  engine plain;
  plain.add(any_policy(open_door{}));
  CHECK_FALSE(plain.keeps_cycles());
  plain.begin_cycle();  // changes nothing
  plain.head_denied(later);
  plain.end_cycle();
  CHECK(plain.check(later).allowed());
}

// ---- partial admission ------------------------------------------------------------------

namespace {
kueue_config partial_cq(amount nominal_cpu) {
  using quota::test::cpu;
  kueue_config cfg;
  cfg.resource_flavors = {"f"};
  cfg.cluster_queues.push_back(
      test::cq_cpu("cq", "", kueue_resource_quota_spec{resources::cpu, cpu(nominal_cpu), {}, {}}));
  cfg.local_queues.push_back({"team", "main", "cq"});
  return cfg;
}
job wide_job(std::string id, std::int32_t pods, std::int32_t min_pods) {
  job j;
  j.id = std::move(id);
  j.ns = "team";
  j.queue = "main";
  j.pods = pods;
  j.min_pods = min_pods;
  j.request.set(resources::cpu, quota::test::cpu(pods));
  return j;
}
}  // namespace

TEST_CASE("composition: pod sets total their pods, minimums and requests; bad sets are refused unchanged") {
  job j;
  j.id = "w";
  j.pod_sets = {{"driver", 1, 1, {}}, {"workers", 8, 2, {}}};
  j.pod_sets[0].per_pod.set(resources::cpu, 2000);
  j.pod_sets[1].per_pod.set(resources::nvidia_gpu, 1);
  j.pod_sets[1].per_pod.set(resources::cpu, 500);
  total_pod_sets(j);
  CHECK(j.pods == 9);
  CHECK(j.min_pods == 3);
  CHECK(j.request.get(resources::cpu) == 2000 + 8 * 500);
  CHECK(j.request.get(resources::nvidia_gpu) == 8);
  CHECK(may_run_partially(j));

  job bad = j;
  bad.pod_sets[1].min_count = 9;
  CHECK_THROWS_AS(total_pod_sets(bad), validation_error);
  CHECK(bad.pods == 9);  // unchanged
  bad.pod_sets[1].min_count = 2;
  bad.pod_sets[1].count = 0;
  CHECK_THROWS_AS(total_pod_sets(bad), validation_error);
  bad.pod_sets[1].count = 2;
  bad.pod_sets[1].per_pod.set(resources::cpu, std::numeric_limits<amount>::max());
  CHECK_THROWS_AS(total_pod_sets(bad), overflow_error);
  CHECK(bad.request == j.request);

  job r;
  const std::vector<std::int32_t> c{1, 3};
  reduced_job(j, c, r);
  CHECK(r.pods == 4);
  CHECK(r.request.get(resources::nvidia_gpu) == 3);
  CHECK(r.request.get(resources::cpu) == 2000 + 3 * 500);
  CHECK(may_run_partially(r));  // workers may still shrink to 2
  const std::vector<std::int32_t> too_few{1, 1};
  CHECK_THROWS_AS(reduced_job(j, too_few, r), validation_error);
  const std::vector<std::int32_t> wrong_size{1};
  CHECK_THROWS_AS(reduced_job(j, wrong_size, r), validation_error);

  job single = wide_job("s", 8, 2);
  const std::vector<std::int32_t> six{6};
  reduced_job(single, six, r);
  CHECK(r.pods == 6);
  CHECK(r.request.get(resources::cpu) == quota::test::cpu(6));
}

TEST_CASE("composition: a partial admission charges every model the admitted pods only") {
  resource_registry reg;
  // Kueue has room for 6 of 8 pods; the cap model would refuse the whole job
  engine e;
  e.add(any_policy(kueue_policy(partial_cq(6), reg)));
  e.add(any_policy(cap_policy("cap", resources::cpu, quota::test::cpu(7))));
  const job w = wide_job("w", 8, 2);
  std::vector<std::int32_t> counts;
  REQUIRE(e.check(w, counts).allowed());
  CHECK(counts == std::vector<std::int32_t>{6});
  const explanation x = e.explain(w);  // explain agrees with check and admit
  CHECK(x.allowed());
  CHECK(x.partial_counts == std::vector<std::int32_t>{6});
  REQUIRE(e.admit(w, counts).allowed());
  CHECK(counts == std::vector<std::int32_t>{6});
  CHECK(e.model(1).target<cap_policy>()->used_of("main") == quota::test::cpu(6));
  CHECK(e.model(0).target<kueue_policy>()->model().find_admitted("w")->usage[0].second == quota::test::cpu(6));
  e.release("w");
  CHECK(e.model(1).target<cap_policy>()->used_of("main") == 0);

  // a job that must run whole is checked whole: Kueue denies it, nothing is offered
  job whole = wide_job("whole", 8, 8);
  CHECK(e.check(whole, counts).denied());
  CHECK(counts.empty());
}

TEST_CASE("composition: a partial admission another model refuses is a denial of the whole job") {
  resource_registry reg;
  basic_engine<kueue_policy, cap_policy> e(kueue_policy(partial_cq(6), reg),
                                           cap_policy("cap", resources::cpu, quota::test::cpu(5)));
  const job w = wide_job("w", 8, 2);
  std::vector<std::int32_t> counts;
  const decision d = e.admit(w, counts);
  CHECK(d.denied());
  CHECK(d.has_rule("over_cap", "cap"));
  CHECK(counts.empty());
  CHECK_FALSE(e.is_admitted("w"));
  CHECK(e.model<1>().used_of("main") == 0);
  CHECK(e.model<0>().model().find_admitted("w") == nullptr);
}

TEST_CASE("composition: Kueue reduces each pod set of a job down to its minimum") {
  resource_registry reg;
  basic_engine<kueue_policy, cap_policy> e(kueue_policy(partial_cq(5), reg),
                                           cap_policy("cap", resources::cpu, quota::test::cpu(100)));
  job j;
  j.id = "spark";
  j.ns = "team";
  j.queue = "main";
  j.pod_sets = {{"driver", 1, 1, {}}, {"workers", 8, 2, {}}};
  j.pod_sets[0].per_pod.set(resources::cpu, quota::test::cpu(1));
  j.pod_sets[1].per_pod.set(resources::cpu, quota::test::cpu(1));
  total_pod_sets(j);
  std::vector<std::int32_t> counts;
  REQUIRE(e.admit(j, counts).allowed());
  CHECK(counts == std::vector<std::int32_t>{1, 4});  // the driver whole, 4 of 8 workers
  CHECK(e.model<1>().used_of("main") == quota::test::cpu(5));
}

TEST_CASE("composition: a model the host replaces gets the charges held now, and no other model is charged twice") {
  resource_registry reg;
  engine e;
  e.add(any_policy(shared_claim(reg, 4)));
  e.add(any_policy(kai()));
  e.add(any_policy(kai()));
  const job a1 = claim_job("a1", "a", 1);
  REQUIRE(e.admit(a1).allowed());  // a owns the claim: 1 + 4 GPUs in both fair-share models
  // a reload rebuilds model 1 from its configuration and commits the running jobs into it
  kai_fair_share_policy fresh = kai();
  fresh.commit(a1);
  e.model(1) = any_policy(std::move(fresh));
  CHECK(alloc_gpu(*e.model(1).target<kai_fair_share_policy>(), "a") == 1);  // the claim's devices are missing
  e.charges_into(1);
  CHECK(alloc_gpu(*e.model(1).target<kai_fair_share_policy>(), "a") == 5);
  CHECK(alloc_gpu(*e.model(2).target<kai_fair_share_policy>(), "a") == 5);  // untouched
  e.release("a1");                                                          // the charge leaves both as it came
  CHECK(alloc_gpu(*e.model(1).target<kai_fair_share_policy>(), "a") == 0);
  CHECK(alloc_gpu(*e.model(2).target<kai_fair_share_policy>(), "a") == 0);
  CHECK_THROWS_AS(e.charges_into(3), unknown_entity_error);
}
