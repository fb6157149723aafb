// SPDX-License-Identifier: Apache-2.0
// Pairing tests: each extra policy in one engine with each model it makes
// sense to pair it with, in both engines, outcomes read back from each side.
// Docs: docs/extra-policies.md ("Pairings")
#include <quota/budget.hpp>
#include <quota/budget_json.hpp>
#include <quota/volcano_capacity.hpp>
#include <quota/kai_claims.hpp>
#include <quota/kai_claims_json.hpp>
#include <quota/kueue_json.hpp>
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>
#include <quota/kai_fair_share.hpp>
#include <quota/json.hpp>
#include <quota/kueue.hpp>
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/priority_class_quota_json.hpp>
#include <quota/volcano.hpp>
#include <quota/running_limits.hpp>
#include <quota/running_limits_json.hpp>
#include <quota/sharing_pools.hpp>
#include <quota/sharing_pools_json.hpp>
#include <quota/shrink.hpp>

#include <string>
#include <utility>
#include <vector>

#include "kueue_fixtures.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;
constexpr resource_id cpu = resources::cpu;
constexpr std::int64_t hour = 3'600'000;

// Each model fixture owns the model's state (adapters may refer to it; a
// fixture is not moved), and has two tenants, "ann" and "bob", as two
// entities of the model (queues, namespaces or users) that each hold 2 units:
//   res, unit        the resource the jobs request and one unit of it
//   make()           the policy placed in the engine
//   make_job(id, who, units)
//   model_denied(id) a job of bob the model denies (the extra policies allow bob)
//   deny_rule        the model's rule for it
//   state(p)         the model's introspection (JSON), compared before/after
//   usage(p, who)    the tenant's usage in units (or jobs) by the model's own account

job base_job(std::string id, const std::string& who, resource_id res, amount amt) {
  job j;
  j.id = std::move(id);
  j.user = who;
  j.ns = "ns-" + who;
  j.queue = "q-" + who;
  j.request.set(res, amt);
  return j;
}

json vec_json(const resource_vector& v) {
  json o = json::object();
  for (const auto& e : v)
    if (e.value != 0) o[std::to_string(e.id)] = e.value;
  return o;
}

// ---- nos elastic quotas: one ElasticQuota per tenant namespace, max 2 GPUs ----
struct elastic_fx {
  static constexpr const char* deny_rule = "over_max";
  static constexpr resource_id res = gpu;
  static constexpr amount unit = 1;
  using policy_t = elastic_quota_policy;
  elastic_quota_model set{specs()};

  static std::vector<elastic_quota_spec> specs() {
    std::vector<elastic_quota_spec> s;
    for (const char* who : {"ann", "bob"}) {
      elastic_quota_spec q;
      q.name = who;
      q.object_namespace = std::string("ns-") + who;
      q.namespaces = {q.object_namespace};
      q.max.emplace().set(gpu, 2);
      s.push_back(std::move(q));
    }
    return s;
  }
  policy_t make() { return policy_t(set); }
  static job make_job(std::string id, const std::string& who, amount units) {
    return base_job(std::move(id), who, res, units * unit);
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) {
    const elastic_quota_model& m = p.model();
    json j{{"total", vec_json(m.total_used())}, {"quotas", json::object()}};
    for (std::uint32_t q = 0; q < m.size(); ++q) {
      json pods = json::array();
      for (const auto* pod : m.running_pods(q))
        pods.push_back(json::array({pod->name, std::string(to_string(m.label(pod->name)))}));
      j["quotas"][m.spec(q).name] = json{{"used", vec_json(m.used(q))}, {"pods", pods}};
    }
    return j;
  }
  static amount usage(const policy_t& p, const std::string& who) {
    return p.model().used(p.model().quota_of("ns-" + who)).get(res) / unit;
  }
};

// ---- Volcano proportion queues: q-ann and q-bob, each deserving 2 GPUs ----
struct volcano_fx {
  static constexpr const char* deny_rule = "over_deserved";
  static constexpr resource_id res = gpu;
  static constexpr amount unit = 1;
  using policy_t = volcano_policy;
  volcano_model tree = build();

  static volcano_model build() {
    std::vector<volcano_queue_spec> qs;
    for (const char* who : {"ann", "bob"}) {
      volcano_queue_spec q;
      q.name = std::string("q-") + who;
      q.capability = {{gpu, 2}};
      qs.push_back(std::move(q));
    }
    volcano_model t({gpu}, resource_vector{{gpu, 4}}, std::move(qs));
    for (const char* q : {"q-ann", "q-bob"}) t.set_pending(q, {{gpu, 2}});
    t.compute_deserved();
    return t;
  }
  policy_t make() { return policy_t(tree); }
  static job make_job(std::string id, const std::string& who, amount units) {
    return base_job(std::move(id), who, res, units * unit);
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) {
    const volcano_model& t = p.tree();
    json j{{"tasks", t.running_tasks()}};
    for (std::size_t q = 0; q < t.size(); ++q) j[t.spec(q).name] = t.allocated(q, 0);
    return j;
  }
  static amount usage(const policy_t& p, const std::string& who) {
    return p.tree().allocated(p.tree().index("q-" + who), 0) / unit;
  }
};

// ---- Volcano capacity plugin: q-ann and q-bob, capability 2 GPUs each ----
struct capacity_fx {
  static constexpr const char* deny_rule = "over_real_capability";
  static constexpr resource_id res = gpu;
  static constexpr amount unit = 1;
  using policy_t = volcano_capacity_policy;
  volcano_capacity_model queues = build(2, 4);

  static volcano_capacity_model build(amount cap, amount total) {
    std::vector<volcano_capacity_queue_spec> qs;
    for (const char* who : {"ann", "bob"}) {
      volcano_capacity_queue_spec q;
      q.name = std::string("q-") + who;
      q.capability = {{gpu, cap}};
      qs.push_back(std::move(q));
    }
    return volcano_capacity_model({gpu}, resource_vector{{gpu, total}}, std::move(qs));
  }
  policy_t make() { return policy_t(queues); }
  static job make_job(std::string id, const std::string& who, amount units) {
    return base_job(std::move(id), who, res, units * unit);
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) {
    const volcano_capacity_model& m = p.model();
    json j{{"tasks", m.running_tasks()}};
    for (std::size_t q = 0; q < m.size(); ++q) j[m.name(q)] = m.allocated(q, 0);
    return j;
  }
  static amount usage(const policy_t& p, const std::string& who) {
    return p.model().allocated(p.model().index("q-" + who), 0) / unit;
  }
};

// ---- YuniKorn user limits: every user at most 2 vcores in root.q ----
struct limits_fx {
  static constexpr const char* deny_rule = "max_resources";
  static constexpr resource_id res = cpu;
  static constexpr amount unit = 1000;
  using policy_t = yunikorn_limits_policy;
  resource_registry reg;
  int vcores = 2;

  void load(yunikorn_limits_model& m, int v) {
    m.reload(load_yunikorn_limits_config(json::parse(R"({"name": "root", "queues": [{"name": "q", "limits": [
        {"limit": "per-user", "users": ["*"], "maxresources": {"vcore": ")" +
                                            std::to_string(v) + R"("}}]}]})"),
                                reg));
  }
  policy_t make() {
    policy_t p(reg);
    load(p.manager(), vcores);
    return p;
  }
  static job make_job(std::string id, const std::string& who, amount units) {
    job j = base_job(std::move(id), who, res, units * unit);
    j.queue = "q";
    return j;
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) { return json(p); }
  static amount usage(const policy_t& p, const std::string& who) {
    return p.manager().user_usage(who, "root.q").get(res) / unit;
  }
};

// ---- KAI claims: q-ann owns the shared claim and opts out of sharing ----
// Claims decide who may use a claim, not room: usage = reservations of the claim.
struct claims_fx {
  static constexpr const char* deny_rule = "sharing_opted_out";
  static constexpr resource_id res = gpu;
  static constexpr amount unit = 1;
  using policy_t = kai_claims_policy;
  kai_claims_policy pol = build();

  static kai_claims_policy build() {
    kai_claims_policy p;
    claim_spec s;
    s.name = "shared";
    s.queue_label = "q-ann";
    s.allocated = true;
    s.requests.push_back(claim_device{"gpu.nvidia.com", 1, false, false, {}});
    s.allocation.push_back(claim_device{"gpu.nvidia.com", 1, false, false, {}});
    (void)p.model().add_claim(s);
    p.model().set_sharing("q-ann", false);
    (void)p.model().queue("q-bob");
    return p;
  }
  policy_t make() { return pol; }
  static job make_job(std::string id, const std::string& who, amount units) {
    job j = base_job(std::move(id), who, res, units * unit);
    j.ns = "default";  // a pod uses the claims of its own namespace
    j.claims = {"shared"};
    return j;
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 1); }
  static json state(const policy_t& p) { return json(p.model()); }
  static amount usage(const policy_t& p, const std::string& who) {
    const auto& m = p.model();
    return who == "ann" ? m.consumers(m.claim_at("default/shared")) : 0;
  }
};

// ---- KAI fair share: q-ann and q-bob, quota and limit 2 GPUs each ----
struct fair_share_fx {
  static constexpr const char* deny_rule = "over_limit";
  static constexpr resource_id res = gpu;
  static constexpr amount unit = 1;
  using policy_t = kai_fair_share_policy;

  static kai_fair_share_model tree(amount ann_limit) {
    std::vector<kai_fair_share_queue_spec> qs;
    for (const char* who : {"ann", "bob"}) {
      kai_fair_share_queue_spec q;
      q.name = std::string("q-") + who;
      q.resources[gpu] = kai_fair_share_resource{2, 1, std::string(who) == "ann" ? ann_limit : 2};
      qs.push_back(std::move(q));
    }
    kai_fair_share_model t(std::move(qs));
    t.set_capacity(resource_vector{{gpu, 8}});
    t.compute();
    return t;
  }
  policy_t make() { return policy_t(tree(2)); }
  static job make_job(std::string id, const std::string& who, amount units) {
    return base_job(std::move(id), who, res, units * unit);
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) {
    json j = json::object();
    for (std::size_t q = 0; q < p.tree().size(); ++q)
      j[p.tree().spec(static_cast<kai_fair_share_model::queue_index>(q)).name] =
          p.tree().allocated(static_cast<kai_fair_share_model::queue_index>(q), res);
    return j;
  }
  static amount usage(const policy_t& p, const std::string& who) {
    return p.tree().allocated(p.tree().at("q-" + who), res) / unit;
  }
};

// ---- Kueue: LocalQueue lq in ns-ann / ns-bob -> ClusterQueue cq-ann / cq-bob, 2 CPUs each ----
struct kueue_fx {
  static constexpr const char* deny_rule = "no_fit";
  static constexpr resource_id res = cpu;
  static constexpr amount unit = 1000;
  using policy_t = kueue_policy;

  static kueue_config config(amount ann_cores) {
    kueue_config cfg;
    cfg.resource_flavors = {"f"};
    for (const char* who : {"ann", "bob"}) {
      auto cq = test::cq_cpu(
          std::string("cq-") + who, "",
          kueue_resource_quota_spec{cpu, test::cpu(std::string(who) == "ann" ? ann_cores : 2), std::nullopt,
                                     std::nullopt});
      cq.preemption.within_cluster_queue = kueue_within_cluster_queue_policy::lower_priority;
      cfg.cluster_queues.push_back(std::move(cq));
      cfg.local_queues.push_back({std::string("ns-") + who, "lq", std::string("cq-") + who});
    }
    return cfg;
  }
  policy_t make() { return policy_t(config(2), resource_registry{}); }
  static job make_job(std::string id, const std::string& who, amount units) {
    job j = base_job(std::move(id), who, res, units * unit);
    j.queue = "lq";
    return j;
  }
  static job model_denied(std::string id) { return make_job(std::move(id), "bob", 3); }
  static json state(const policy_t& p) { return json(p); }
  static amount usage(const policy_t& p, const std::string& who) {
    const json j = state(p).at("clusterQueues").at("cq-" + who).at("usage");
    return j.contains("f") ? j.at("f").at("cpu").get<amount>() / unit : 0;
  }
};

// ---- the extra policies: ann may have 1 unit (or 1 job), bob 10 ----
// policy_t make(res, unit) / prepare(job&) / deny_rule / state / usage(p, "ann")
// bad_config(p): a bad setting, which must throw a typed error naming `bad_item`.

struct budget_x {
  using policy_t = budget_policy;
  static constexpr const char* deny_rule = "budget_exhausted";
  static constexpr const char* bad_item = "'ann'";
  resource_id res;
  amount unit;
  policy_t make() const {
    budget_config cfg;
    cfg.resource = res;
    cfg.resource_name = std::string(resources::well_known_name(res));
    cfg.tenant = budget_tenant::user;
    policy_t b(cfg);
    b.set_budget("ann", unit * hour);  // one unit for one hour
    b.set_budget("bob", 10 * unit * hour);
    return b;
  }
  static void prepare(job& j) { j.duration_ms = hour; }
  static json state(const policy_t& p) { return json(p); }
  amount usage(const policy_t& p) const {
    amount rate = 0;
    p.for_each_tenant([&](const budget_policy::tenant_status& s) {
      if (s.name == "ann") rate = s.rate;
    });
    return rate / unit;
  }
  static void bad_config(policy_t& p) { p.set_budget("ann", -1); }
  using error_t = config_error;
};

struct pcq_x {
  using policy_t = priority_class_quota_policy;
  static constexpr const char* deny_rule = "priority_class_over_max";
  static constexpr const char* bad_item = "ann/high";
  resource_id res;
  amount unit;
  policy_t make() const {
    policy_t pq(priority_class_quota_policy::tenant_key::user);
    limit_vector one, ten;
    one.set(res, unit);
    ten.set(res, 10 * unit);
    pq.set("ann", "high", {}, one);
    pq.set("bob", "high", {}, ten);
    return pq;
  }
  static void prepare(job& j) { j.priority_class = "high"; }
  static json state(const policy_t& p) { return json(p); }
  amount usage(const policy_t& p) const { return p.used("ann", "high").get(res) / unit; }
  void bad_config(policy_t& p) const {
    limit_vector one;
    one.set(res, unit);
    p.set("ann", "high", resource_vector{{res, 5 * unit}}, one);  // min above max
  }
  using error_t = config_error;
};

struct running_x {
  using policy_t = running_limits_policy;
  static constexpr const char* deny_rule = "max_running_jobs";
  static constexpr const char* bad_item = "user:ann";
  resource_id res;
  amount unit;
  policy_t make() const {
    policy_t rl;
    rl.set_limit(running_limits_policy::scope::user, "ann", 1);
    rl.set_limit(running_limits_policy::scope::user, "bob", 10);
    return rl;
  }
  static void prepare(job&) {}
  static json state(const policy_t& p) { return json(p); }
  amount usage(const policy_t& p) const { return p.running(running_limits_policy::scope::user, "ann"); }
  static void bad_config(policy_t& p) { p.set_limit(running_limits_policy::scope::user, "ann", -1); }
  using error_t = validation_error;
};

// one pool "research" with quotas ann (ns-ann, 1 unit) and bob (ns-bob, 3 units, max 10)
struct pools_x {
  using policy_t = sharing_pools_policy;
  static constexpr const char* deny_rule = "over_max";
  static constexpr const char* bad_item = "quota bob";
  resource_id res;
  amount unit;
  std::vector<sharing_pool_spec> specs() const {
    pool_quota_spec ann{"ann", {"ns-ann"}, {{res, unit}}, {}};
    ann.max.set(res, unit);
    pool_quota_spec bob{"bob", {"ns-bob"}, {{res, 3 * unit}}, {}};
    bob.max.set(res, 10 * unit);
    return {sharing_pool_spec{"research", {ann, bob}, false, false}};
  }
  policy_t make() const { return policy_t(specs()); }
  static void prepare(job&) {}
  static json state(const policy_t& p) { return json(p); }
  amount usage(const policy_t& p) const { return p.quota_used(p.quota_of("ns-ann")).get(res) / unit; }
  // sharing pools are configured once: a bad spec (bob's namespace taken twice) is refused whole
  void bad_config(policy_t&) const {
    auto s = specs();
    s[0].quotas[1].namespaces.push_back("ns-ann");
    (void)policy_t(s);
  }
  using error_t = config_error;
};

// Introspection with zero amounts dropped: a released usage may print as an
// explicit 0 where there was no entry before; both mean "nothing used".
json norm(json j) {
  if (j.is_object()) {
    json out = json::object();
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!(it.value().is_number() && it.value() == 0)) out[it.key()] = norm(it.value());
    return out;
  }
  if (j.is_array())
    for (auto& e : j) e = norm(e);
  return j;
}

bool only_from(const decision& d, std::string_view model) {
  if (d.reasons().empty()) return false;
  for (const auto& r : d.reasons())
    if (r.model != model) return false;
  return true;
}

// The scenario of the file comment. x/m: accessors of the two policies in the engine.
template <class X, class M, class E, class GetX, class GetM>
void scenario(E& e, const X& xf, M& mf, GetX x_of, GetM m_of) {
  auto& x = x_of(e);
  auto& m = m_of(e);
  const json x0 = xf.state(x), m0 = mf.state(m);
  CHECK(xf.usage(x) == 0);
  CHECK(mf.usage(m, "ann") == 0);

  // the model denies, the extra policy allows: the model's reasons only, nothing changes
  job big = mf.model_denied("big");
  xf.prepare(big);
  REQUIRE(x.check(big).allowed());
  decision d = e.admit(big);
  REQUIRE(d.denied());
  CHECK(d.has_rule(M::deny_rule, m.policy_name()));
  CHECK(only_from(d, m.policy_name()));
  CHECK_FALSE(e.is_admitted("big"));
  CHECK(norm(xf.state(x)) == norm(x0));
  CHECK(norm(mf.state(m)) == norm(m0));

  // both allow: admitted and counted in both
  job a = mf.make_job("a", "ann", 1);
  xf.prepare(a);
  REQUIRE(e.admit(a).allowed());
  CHECK(e.is_admitted("a"));
  CHECK(xf.usage(x) == 1);
  CHECK(mf.usage(m, "ann") == 1);
  const json x1 = xf.state(x), m1 = mf.state(m);
  CHECK(norm(x1) != norm(x0));
  CHECK(norm(m1) != norm(m0));

  // the extra policy denies, the model allows: the extra policy's reason only, nothing changes
  job b = mf.make_job("b", "ann", 1);
  xf.prepare(b);
  REQUIRE(m.check(b).allowed());
  d = e.admit(b);
  REQUIRE(d.denied());
  CHECK(d.has_rule(X::deny_rule, x.policy_name()));
  CHECK(only_from(d, x.policy_name()));
  CHECK_FALSE(e.is_admitted("b"));
  CHECK(norm(xf.state(x)) == norm(x1));
  CHECK(norm(mf.state(m)) == norm(m1));

  // bad configuration: a typed error naming the item, nothing changes
  try {
    xf.bad_config(x);
    FAIL("no error for a bad configuration");
  } catch (const typename X::error_t& err) {
    CHECK(std::string(err.what()).find(X::bad_item) != std::string::npos);
  }
  CHECK(norm(xf.state(x)) == norm(x1));
  CHECK(norm(mf.state(m)) == norm(m1));
  CHECK(e.check(b).has_rule(X::deny_rule, x.policy_name()));  // the old limit still holds

  // release frees both; b fits again
  e.release("a");
  CHECK(xf.usage(x) == 0);
  CHECK(mf.usage(m, "ann") == 0);
  CHECK(norm(xf.state(x)) == norm(x0));
  CHECK(norm(mf.state(m)) == norm(m0));
  CHECK(e.check(b).allowed());
  // a second release is a typed error and changes nothing (engine.hpp)
  REQUIRE_THROWS_AS(e.release("a"), unknown_entity_error);
  CHECK(norm(xf.state(x)) == norm(x0));
  CHECK(norm(mf.state(m)) == norm(m0));
  REQUIRE(e.admit(b).allowed());
  CHECK(xf.usage(x) == 1);
  CHECK(mf.usage(m, "ann") == 1);
}

template <class X, class M>
void run_pairing() {
  static_assert(policy<typename X::policy_t>);
  static_assert(policy<typename M::policy_t>);
  static_assert(policy<basic_engine<typename X::policy_t, typename M::policy_t>>);
  SECTION("basic_engine") {
    M mf;
    const X xf{M::res, M::unit};
    basic_engine<typename X::policy_t, typename M::policy_t> e(xf.make(), mf.make());
    scenario(
        e, xf, mf, [](auto& en) -> auto& { return en.template model<0>(); },
        [](auto& en) -> auto& { return en.template model<1>(); });
  }
  SECTION("type-erased engine") {
    M mf;
    const X xf{M::res, M::unit};
    engine e;
    e.add(any_policy(mf.make()));
    e.add(any_policy(xf.make()));
    scenario(
        e, xf, mf, [](engine & en) -> auto& { return *en.model(1).target<typename X::policy_t>(); },
        [](engine & en) -> auto& { return *en.model(0).target<typename M::policy_t>(); });
  }
}

// ---- the shrink tracker with each model whose limit the host can lower ----
// Shrink fixtures: ann's entity holds 4 units (bob's 2); lower(p, running)
// lowers ann's limit in the model to 2 units the way a host does it (a
// reload, a new cluster total, or a rebuild that replays the running jobs).
// `order`: the model and rule the plan must name (the model's own victim order,
// or the tracker's fallback when the model offers none of the entity's jobs).

constexpr std::int64_t minute = 60'000;

struct elastic_shrink : elastic_fx {
  static constexpr shrink_key key = shrink_key::ns;
  static constexpr const char* entity = "ns-ann";
  static constexpr const char* order_model = "elastic_quota";
  static constexpr const char* order_rule = "same_quota_lower_priority";
  // capacity-scheduling preemption: lower-priority pods of the same quota (nos
  // preemption only takes other quotas' pods, which the tracker ignores)
  static std::vector<elastic_quota_spec> shrink_specs(amount ann_max) {
    auto s = specs();
    s[0].min.set(gpu, 2);
    s[0].max.emplace().set(gpu, ann_max);
    s[1].min.set(gpu, 4);
    s[1].max.emplace().set(gpu, 4);
    return s;
  }
  static elastic_options opts() {
    elastic_options o;
    o.preemption = elastic_preemption_policy::capacity_scheduling;
    return o;
  }
  elastic_shrink() { set = elastic_quota_model(shrink_specs(4), opts()); }
  void lower(policy_t& p, const std::vector<job>&) {
    elastic_quota_model& m = p.model();
    std::vector<elastic_pod> pods;
    for (std::uint32_t q = 0; q < m.size(); ++q)
      for (const auto* pod : m.running_pods(q)) pods.push_back(*pod);
    m = elastic_quota_model(shrink_specs(2), opts());    // the host reloads the quotas ...
    for (auto& pod : pods) m.add_pod(std::move(pod));  // ... and replays the running pods
  }
};

struct capacity_shrink : capacity_fx {
  static constexpr shrink_key key = shrink_key::queue;
  static constexpr const char* entity = "q-ann";
  static constexpr const char* order_model = "shrink";  // reclaim takes other queues' tasks only
  static constexpr const char* order_rule = "lowest_priority_newest";
  capacity_shrink() { queues = build(4, 8); }
  void lower(policy_t& p, const std::vector<job>&) { p.model().set_total(resource_vector{{gpu, 2}}); }
};

struct limits_shrink : limits_fx {
  static constexpr shrink_key key = shrink_key::user;
  static constexpr const char* entity = "ann";
  static constexpr const char* order_model = "shrink";  // limits never preempt
  static constexpr const char* order_rule = "lowest_priority_newest";
  limits_shrink() { vcores = 4; }
  void lower(policy_t& p, const std::vector<job>&) { load(p.manager(), 2); }
};

struct fair_share_shrink : fair_share_fx {
  static constexpr shrink_key key = shrink_key::queue;
  static constexpr const char* entity = "q-ann";
  static constexpr const char* order_model = "kai_fair_share";
  static constexpr const char* order_rule = "preempt";
  policy_t make() { return policy_t(tree(4)); }
  void lower(policy_t& p, const std::vector<job>& running) {
    p.tree() = tree(2);  // the host rebuilds the tree with the lower limit ...
    for (const auto& j : running) p.tree().allocate(p.tree().at(j.queue), j.request, j.preemptible);  // ... and replays
    p.tree().compute();
    p.set_now_ms(hour);
  }
};

struct kueue_shrink : kueue_fx {
  static constexpr shrink_key key = shrink_key::ns;
  static constexpr const char* entity = "ns-ann";
  static constexpr const char* order_model = "kueue";  // within-ClusterQueue preemption: lower priority
  static constexpr const char* order_rule = "withinClusterQueue";
  policy_t make() { return policy_t(config(4), resource_registry{}); }
  void lower(policy_t& p, const std::vector<job>&) { p.model().update_config(config(2)); }
};

template <class S>
void run_shrink() {
  S s;
  basic_engine<typename S::policy_t, shrink_tracker> e(
      s.make(), shrink_tracker(S::key, S::res, shrink_behaviour::evict_after_grace(10 * minute)));
  auto& m = e.template model<0>();
  auto& t = e.template model<1>();
  const std::string ent = S::entity;
  REQUIRE(t.on_limit_change(ent, 4 * S::unit, 0) == std::nullopt);
  // ann runs a (priority 5), b (1), c (1), d (3), created in that order; bob runs o
  std::vector<job> running;
  std::int64_t created = 0;
  for (auto [id, prio] : std::vector<std::pair<const char*, std::int32_t>>{{"a", 5}, {"b", 1}, {"c", 1}, {"d", 3}}) {
    job j = s.make_job(id, "ann", 1);
    j.priority = prio;
    j.created_ms = ++created;
    REQUIRE(e.admit(j).allowed());
    running.push_back(j);
  }
  job o = s.make_job("o", "bob", 1);
  REQUIRE(e.admit(o).allowed());
  running.push_back(o);
  CHECK(s.usage(m, "ann") == 4);
  CHECK(t.usage(ent) == 4 * S::unit);
  CHECK(t.plan(m).empty());

  // the host lowers ann's limit to 2 units in the model and tells the tracker
  s.lower(m, running);
  CHECK(s.usage(m, "ann") == 4);  // running work is kept by the model
  job more = s.make_job("more", "ann", 1);
  CHECK(e.check(more).denied());  // the model now denies new work of ann
  const auto st = t.on_limit_change(ent, 2 * S::unit, 5 * minute);
  REQUIRE(st);
  CHECK(st->usage == 4 * S::unit);
  CHECK(st->limit == 2 * S::unit);
  CHECK(st->evict_at_ms == 15 * minute);

  // the plan: lowest priority first, newest first, named by the model's own order
  const auto plan = t.plan(m);
  const std::vector<shrink_eviction> want{{"c", ent, 15 * minute, S::order_model, S::order_rule},
                                          {"b", ent, 15 * minute, S::order_model, S::order_rule}};
  CHECK(plan == want);
  CHECK(t.due_evictions(m, 15 * minute - 1).empty());
  const auto due = t.due_evictions(m, 15 * minute);
  CHECK(due == plan);
  for (const auto& ev : due) e.release(ev.job_id);
  CHECK(s.usage(m, "ann") == 2);
  CHECK(t.usage(ent) == 2 * S::unit);
  CHECK(t.over().empty());
  CHECK(e.is_admitted("a"));
  CHECK(e.is_admitted("d"));
  CHECK(e.is_admitted("o"));  // bob's entity is untouched
  CHECK(s.usage(m, "bob") == 1);
  CHECK(e.check(more).denied());  // at the new limit exactly
  e.release("d");
  CHECK(e.check(more).allowed());
}

}  // namespace

// budgets over time
TEST_CASE("pairing: budget + nos elastic quota") {
  run_pairing<budget_x, elastic_fx>();
}
TEST_CASE("pairing: budget + volcano proportion queues") {
  run_pairing<budget_x, volcano_fx>();
}
TEST_CASE("pairing: budget + volcano capacity queues") {
  run_pairing<budget_x, capacity_fx>();
}
TEST_CASE("pairing: budget + yunikorn user limits") {
  run_pairing<budget_x, limits_fx>();
}
TEST_CASE("pairing: budget + kai claims") {
  run_pairing<budget_x, claims_fx>();
}
TEST_CASE("pairing: budget + kai fair share") {
  run_pairing<budget_x, fair_share_fx>();
}
TEST_CASE("pairing: budget + kueue cluster queues") {
  run_pairing<budget_x, kueue_fx>();
}
// per-priority-class quota
TEST_CASE("pairing: priority_class_quota + nos elastic quota") {
  run_pairing<pcq_x, elastic_fx>();
}
TEST_CASE("pairing: priority_class_quota + volcano proportion queues") {
  run_pairing<pcq_x, volcano_fx>();
}
TEST_CASE("pairing: priority_class_quota + volcano capacity queues") {
  run_pairing<pcq_x, capacity_fx>();
}
TEST_CASE("pairing: priority_class_quota + yunikorn user limits") {
  run_pairing<pcq_x, limits_fx>();
}
TEST_CASE("pairing: priority_class_quota + kai claims") {
  run_pairing<pcq_x, claims_fx>();
}
TEST_CASE("pairing: priority_class_quota + kai fair share") {
  run_pairing<pcq_x, fair_share_fx>();
}
TEST_CASE("pairing: priority_class_quota + kueue cluster queues") {
  run_pairing<pcq_x, kueue_fx>();
}
// running-job limits
TEST_CASE("pairing: running_limits + nos elastic quota") {
  run_pairing<running_x, elastic_fx>();
}
TEST_CASE("pairing: running_limits + volcano proportion queues") {
  run_pairing<running_x, volcano_fx>();
}
TEST_CASE("pairing: running_limits + volcano capacity queues") {
  run_pairing<running_x, capacity_fx>();
}
TEST_CASE("pairing: running_limits + yunikorn user limits") {
  run_pairing<running_x, limits_fx>();
}
TEST_CASE("pairing: running_limits + kai claims") {
  run_pairing<running_x, claims_fx>();
}
TEST_CASE("pairing: running_limits + kai fair share") {
  run_pairing<running_x, fair_share_fx>();
}
TEST_CASE("pairing: running_limits + kueue cluster queues") {
  run_pairing<running_x, kueue_fx>();
}
// sharing pools: namespace quotas, paired with the namespace-keyed models
TEST_CASE("pairing: sharing_pools + nos elastic quota") {
  run_pairing<pools_x, elastic_fx>();
}
TEST_CASE("pairing: sharing_pools + kueue cluster queues") {
  run_pairing<pools_x, kueue_fx>();
}
// the shrink tracker. Skipped: Volcano proportion queues (no configured limit to
// lower: deserved follows demand), KAI claims (no limit at all). Kueue also has
// its own kueue_model::shrink_evictions; the tracker's probe carries the
// namespace and LocalQueue of the entity's first job, so Kueue resolves it.
TEST_CASE("pairing: shrink + nos elastic quota") {
  run_shrink<elastic_shrink>();
}
TEST_CASE("pairing: shrink + volcano capacity queues") {
  run_shrink<capacity_shrink>();
}
TEST_CASE("pairing: shrink + yunikorn user limits") {
  run_shrink<limits_shrink>();
}
TEST_CASE("pairing: shrink + kai fair share") {
  run_shrink<fair_share_shrink>();
}
TEST_CASE("pairing: shrink + kueue cluster queues") {
  run_shrink<kueue_shrink>();
}
