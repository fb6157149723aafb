// SPDX-License-Identifier: Apache-2.0
// Property test: tenant sharing pools (quota/sharing_pools.hpp) against a
// plain reference written from docs/extra-policies.md ("Tenant sharing
// pools"). The reference keeps the running jobs with the charges the rule
// gave them at commit (own pool first: min(x, free); the rest from the
// lending pools in declaration order when the pool may borrow across) and
// recomputes every quota's and pool's usage from that list. Random admit
// (check, plan and victims, then commit when allowed; sometimes regardless),
// release and bad input (negative requests, duplicate ids, releases of
// unknown ids, namespaces no quota governs) are applied to both; after every
// step the decision with its reasons, the plan, the victims, every quota's
// and pool's usage and every running job's plan are compared (prop::drive).
#include <quota/json.hpp>
#include <quota/sharing_pools.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

constexpr resource_id rids[] = {resources::cpu, resources::memory, resources::nvidia_gpu};
constexpr std::size_t n_jobs = 20;
std::string ns_name(std::size_t i) {
  return "n" + std::to_string(i);
}

struct op {
  bool release = false;
  std::size_t job = 0, ns = 0;
  std::int64_t a[3] = {0, 0, 0};
  bool force = false;
};

struct setup {
  std::vector<sharing_pool_spec> pools;
  std::size_t n_ns = 0;  // namespaces n0..n{n_ns-1} are governed; n{n_ns} is not
};

setup make_setup(std::uint64_t seed) {
  prop::rng r(seed * 104729 + 3);
  setup s;
  const std::size_t np = 2 + r.below(2);
  for (std::size_t p = 0; p < np; ++p) {
    sharing_pool_spec ps;
    ps.name = "pool" + std::to_string(p);
    ps.lend_across = r.chance(65);
    ps.borrow_across = r.chance(65);
    const std::size_t nq = 1 + r.below(3);
    for (std::size_t q = 0; q < nq; ++q) {
      pool_quota_spec qs;
      qs.name = ps.name + "-q" + std::to_string(q);
      qs.namespaces = {ns_name(s.n_ns++)};
      if (r.chance(20)) qs.namespaces.push_back(ns_name(100 + s.n_ns));  // a second namespace (unused)
      for (std::size_t k = 0; k < 3; ++k) {
        if (k != 1 && r.chance(75)) qs.min.set(rids[k], r.range(1, 6));  // memory is never governed
        if (r.chance(50)) qs.max.set(rids[k], qs.min.get(rids[k]) + r.range(0, 6));
      }
      ps.quotas.push_back(qs);
    }
    s.pools.push_back(ps);
  }
  return s;
}

// ---- the reference ------------------------------------------------------------------------------------

struct ref_job {
  std::optional<std::size_t> quota;
  std::int64_t req[3] = {0, 0, 0};
  std::map<std::size_t, std::map<resource_id, std::int64_t>> charges;  // pool -> resource -> amount
  std::map<resource_id, std::int64_t> in_quota, in_pool;
  std::uint64_t seq = 0;
};

struct ref_quota {
  std::string name;
  std::size_t pool;
  std::vector<std::string> namespaces;
  std::map<resource_id, std::int64_t> min;
  std::map<resource_id, std::int64_t> max;
};

struct ref_reason {
  std::string rule, entity;
  resource_id resource;
  std::int64_t requested, used, limit;
  auto operator<=>(const ref_reason&) const = default;
};

struct plan_view {  // a comparable borrow plan
  std::map<resource_id, std::int64_t> in_quota, in_pool;
  std::map<std::string, std::map<resource_id, std::int64_t>> across;
  auto operator<=>(const plan_view&) const = default;
};

class reference {
 public:
  explicit reference(const setup& s) : su(s) {
    for (std::size_t p = 0; p < s.pools.size(); ++p)
      for (const auto& q : s.pools[p].quotas) {
        ref_quota rq{q.name, p, q.namespaces, {}, {}};
        for (const auto& e : q.min) rq.min[e.id] = e.value;
        for (const auto& e : q.max) rq.max[e.id] = e.value;
        quotas.push_back(rq);
      }
  }
  const setup& su;
  std::vector<ref_quota> quotas;
  std::map<std::string, ref_job> jobs;
  std::uint64_t seq = 0;

  std::optional<std::size_t> quota_of(const std::string& ns) const {
    for (std::size_t q = 0; q < quotas.size(); ++q)
      for (const auto& n : quotas[q].namespaces)
        if (n == ns) return q;
    return std::nullopt;
  }
  bool governed(resource_id r) const {
    for (const auto& q : quotas)
      if (q.min.count(r)) return true;
    return false;
  }
  std::int64_t capacity(std::size_t p, resource_id r) const {
    std::int64_t c = 0;
    for (const auto& q : quotas)
      if (q.pool == p && q.min.count(r)) c += q.min.at(r);
    return c;
  }
  std::int64_t pool_used(std::size_t p, resource_id r) const {
    std::int64_t u = 0;
    for (const auto& [id, j] : jobs)
      if (j.charges.count(p) && j.charges.at(p).count(r)) u += j.charges.at(p).at(r);
    return u;
  }
  std::int64_t free(std::size_t p, resource_id r) const { return capacity(p, r) - pool_used(p, r); }
  std::int64_t quota_used(std::size_t q, std::size_t k) const {
    std::int64_t u = 0;
    for (const auto& [id, j] : jobs)
      if (j.quota == q) u += j.req[k];
    return u;
  }
  std::int64_t min_of(std::size_t q, resource_id r) const { return quotas[q].min.count(r) ? quotas[q].min.at(r) : 0; }

  std::vector<ref_reason> check(const op& o) const {
    std::vector<ref_reason> out;
    const auto q = quota_of(ns_name(o.ns));
    if (!q) return out;
    const std::size_t p = quotas[*q].pool;
    const auto& ps = su.pools[p];
    for (std::size_t k = 0; k < 3; ++k) {
      const std::int64_t x = o.a[k];
      const resource_id r = rids[k];
      if (x <= 0) continue;
      const std::int64_t u = quota_used(*q, k);
      if (quotas[*q].max.count(r) && u + x > quotas[*q].max.at(r))
        out.push_back({"over_max", quotas[*q].name, r, x, u, quotas[*q].max.at(r)});
      if (!governed(r)) continue;
      const std::int64_t f = free(p, r);
      if (x <= f) continue;
      const std::string entity = ps.name + "/" + quotas[*q].name;
      if (!ps.borrow_across) {
        out.push_back({"pool_exhausted", entity, r, x, pool_used(p, r), capacity(p, r)});
        continue;
      }
      std::int64_t others = 0;
      for (std::size_t o2 = 0; o2 < su.pools.size(); ++o2)
        if (o2 != p && su.pools[o2].lend_across) others += free(o2, r);
      if (x - f > others) out.push_back({"pools_exhausted", entity, r, x, pool_used(p, r), capacity(p, r) + others});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  /// The charges of a request, as the rule gives them now (a job's are fixed at commit).
  ref_job charge(const op& o) const {
    ref_job j;
    j.quota = quota_of(ns_name(o.ns));
    for (std::size_t k = 0; k < 3; ++k) j.req[k] = o.a[k];
    if (!j.quota) return j;
    const std::size_t q = *j.quota, p = quotas[q].pool;
    for (std::size_t k = 0; k < 3; ++k) {
      const resource_id r = rids[k];
      const std::int64_t x = o.a[k];
      if (x <= 0 || !governed(r)) continue;
      const std::int64_t here = std::min(x, std::max<std::int64_t>(0, free(p, r)));
      if (here > 0) {
        j.charges[p][r] = here;
        const std::int64_t own_free = std::max<std::int64_t>(0, min_of(q, r) - quota_used(q, k));
        const std::int64_t mine = std::min(here, own_free);
        if (mine > 0) j.in_quota[r] = mine;
        if (here - mine > 0) j.in_pool[r] = here - mine;
      }
      std::int64_t rest = x - here;
      if (!su.pools[p].borrow_across) continue;
      for (std::size_t p2 = 0; p2 < su.pools.size() && rest > 0; ++p2) {
        if (p2 == p || !su.pools[p2].lend_across) continue;
        const std::int64_t take = std::min(rest, std::max<std::int64_t>(0, free(p2, r)));
        if (take <= 0) continue;
        j.charges[p2][r] = take;
        rest -= take;
      }
    }
    return j;
  }
  plan_view plan_of(const ref_job& j) const {
    plan_view v{j.in_quota, j.in_pool, {}};
    for (const auto& [p, m] : j.charges)
      if (p != quotas[*j.quota].pool) v.across[su.pools[p].name] = m;
    return v;
  }

  std::vector<std::string> victims(const op& o) const {
    const auto q = quota_of(ns_name(o.ns));
    if (!q) return {};
    bool below = false;
    for (std::size_t k = 0; k < 3; ++k)
      if (o.a[k] > 0 && quota_used(*q, k) < min_of(*q, rids[k])) below = true;
    if (!below) return {};
    const std::size_t p = quotas[*q].pool;
    std::vector<std::pair<std::uint64_t, std::string>> across, inside;
    for (const auto& [id, j] : jobs) {
      if (!j.quota || j.quota == q) continue;
      if (quotas[*j.quota].pool != p) {
        if (j.charges.count(p)) across.emplace_back(j.seq, id);
      } else if (!j.in_pool.empty()) {
        inside.emplace_back(j.seq, id);
      }
    }
    std::sort(across.rbegin(), across.rend());
    std::sort(inside.rbegin(), inside.rend());
    std::vector<std::string> out;
    for (const auto& e : across) out.push_back("borrowed_across_pools " + e.second);
    for (const auto& e : inside) out.push_back("borrowed_in_pool " + e.second);
    return out;
  }
};

std::map<resource_id, std::int64_t> map_of(const resource_vector& v) {
  std::map<resource_id, std::int64_t> m;
  for (const auto& e : v)
    if (e.value != 0) m[e.id] = e.value;
  return m;
}
plan_view view_of(const borrow_plan& b) {
  plan_view v{map_of(b.in_quota), map_of(b.in_pool), {}};
  for (const auto& [p, x] : b.across)
    if (!x.is_zero()) v.across[p] = map_of(x);
  return v;
}

job job_of(const op& o) {
  job j;
  j.id = "j" + std::to_string(o.job);
  j.ns = ns_name(o.ns);
  for (std::size_t k = 0; k < 3; ++k)
    if (o.a[k] != 0) j.request.set(rids[k], o.a[k]);
  return j;
}

struct harness {
  using op = ::op;
  setup su;
  struct state {
    sharing_pools_policy lib;
    reference ref;
  };
  state start() const { return state{sharing_pools_policy(su.pools), reference(su)}; }

  std::string describe(const op& o) const {
    std::ostringstream s;
    if (o.release) return "release j" + std::to_string(o.job);
    s << "admit j" << o.job << " ns " << ns_name(o.ns) << " cpu " << o.a[0] << " memory " << o.a[1] << " gpu " << o.a[2]
      << (o.force ? " (forced)" : "");
    return s.str();
  }
  json to_json(const op& o) const {
    return json{{"release", o.release},
                {"job", "j" + std::to_string(o.job)},
                {"namespace", ns_name(o.ns)},
                {"cpu", o.a[0]},
                {"memory", o.a[1]},
                {"gpu", o.a[2]},
                {"force", o.force}};
  }

  std::string snapshot(const state& s) const {
    std::ostringstream out;
    for (std::size_t q = 0; q < s.lib.quota_count(); ++q) {
      out << "quota " << q;
      for (const auto& e : s.lib.quota_used(q)) out << " " << e.id << "=" << e.value;
      out << "\n";
    }
    for (std::size_t p = 0; p < s.lib.pool_count(); ++p) {
      out << "pool " << p;
      for (const auto& e : s.lib.pool_used(p)) out << " " << e.id << "=" << e.value;
      out << "\n";
    }
    std::vector<std::string> jobs;
    s.lib.for_each_job([&](std::string_view id, const borrow_plan& b) {
      const auto v = view_of(b);
      std::ostringstream l;
      l << id << " " << b.quota;
      for (const auto& [r, x] : v.in_quota) l << " q" << r << "=" << x;
      for (const auto& [r, x] : v.in_pool) l << " p" << r << "=" << x;
      for (const auto& [p, m] : v.across)
        for (const auto& [r, x] : m) l << " " << p << ":" << r << "=" << x;
      jobs.push_back(l.str());
    });
    std::sort(jobs.begin(), jobs.end());
    for (const auto& j : jobs) out << j << "\n";
    return out.str();
  }

  std::string compare(const state& s) const {
    const auto& ref = s.ref;
    for (std::size_t q = 0; q < ref.quotas.size(); ++q)
      for (std::size_t k = 0; k < 3; ++k)
        if (s.lib.quota_used(q).get(rids[k]) != ref.quota_used(q, k))
          return "usage of quota " + ref.quotas[q].name + " differs in resource " + std::to_string(rids[k]);
    for (std::size_t p = 0; p < su.pools.size(); ++p)
      for (const auto r : rids) {
        if (s.lib.pool_used(p).get(r) != ref.pool_used(p, r))
          return "usage of pool " + su.pools[p].name + " differs in resource " + std::to_string(r) + ": library " +
                 std::to_string(s.lib.pool_used(p).get(r)) + ", reference " + std::to_string(ref.pool_used(p, r));
        if (s.lib.pool_capacity(p).get(r) != ref.capacity(p, r)) return "capacity of pool " + su.pools[p].name;
      }
    std::map<std::string, plan_view> lib_plans, ref_plans;
    s.lib.for_each_job([&](std::string_view id, const borrow_plan& b) { lib_plans[std::string(id)] = view_of(b); });
    for (const auto& [id, j] : ref.jobs)
      if (j.quota) ref_plans[id] = ref.plan_of(j);
    if (lib_plans != ref_plans) return "the plans of the running jobs differ";
    return "";
  }

  // pools are never charged above their capacity; conservation: what the
  // pools hold is what the running jobs were charged
  std::string invariants(const state& s) const {
    for (std::size_t p = 0; p < su.pools.size(); ++p)
      for (const auto r : rids) {
        if (s.lib.pool_used(p).get(r) > s.lib.pool_capacity(p).get(r))
          return "pool " + su.pools[p].name + " charged above its capacity";
        std::int64_t charged = 0;
        s.lib.for_each_job([&](std::string_view, const borrow_plan& b) {
          if (b.pool == su.pools[p].name) charged += b.in_quota.get(r) + b.in_pool.get(r);
          for (const auto& [name, x] : b.across)
            if (name == su.pools[p].name) charged += x.get(r);
        });
        if (charged != s.lib.pool_used(p).get(r)) return "pool " + su.pools[p].name + " holds what no job was charged";
      }
    return "";
  }

  prop::step apply(state& s, const op& o, prop::tally& t) const {
    prop::step st;
    auto& ref = s.ref;
    const std::string id = "j" + std::to_string(o.job);
    if (o.release) {
      try {
        s.lib.release(id);
      } catch (const unknown_entity_error&) {
        st.lib = prop::outcome::error;
      }
      if (!ref.jobs.erase(id)) st.ref = prop::outcome::error;
      return st;
    }
    const job j = job_of(o);
    if (o.a[0] < 0 || o.a[1] < 0 || o.a[2] < 0) {
      // bad input: check and commit are both typed errors (the state check after the step sees no change)
      st.ref = prop::outcome::error;
      st.lib = prop::outcome::error;
      try {
        (void)s.lib.check(j);
        st.lib = prop::outcome::allowed;
      } catch (const validation_error&) {
      }
      try {
        s.lib.commit(j);
        st.lib = prop::outcome::allowed;
      } catch (const validation_error&) {
      } catch (const state_error&) {  // the id already runs: that error comes first
      }
      return st;
    }
    const decision d = s.lib.check(j);
    std::vector<ref_reason> got;
    for (const auto& r : d.reasons())
      got.push_back({std::string(r.rule), r.entity, r.resource, r.requested, r.used, r.limit});
    std::sort(got.begin(), got.end());
    const auto want = ref.check(o);
    if (got != want) {
      st.divergence = std::string("decision: library ") + (d.allowed() ? "allows" : to_string(d)) + ", reference " +
                      (want.empty() ? "allows" : want.front().rule + " " + want.front().entity);
      return st;
    }
    const borrow_plan bp = s.lib.plan(j);
    if (bp.allowed != d.allowed()) {
      st.divergence = "plan().allowed differs from check()";
      return st;
    }
    const ref_job charged = ref.charge(o);
    if (charged.quota && view_of(bp) != ref.plan_of(charged)) {
      st.divergence = "plan differs";
      return st;
    }
    std::vector<victim> vs;
    s.lib.victims(j, vs);
    std::vector<std::string> vgot;
    for (const auto& v : vs) vgot.push_back(std::string(v.rule) + " " + v.job_id);
    if (vgot != ref.victims(o)) {
      st.divergence = "victims differ";
      return st;
    }
    if (!vs.empty()) ++t.extra["victim sets"];
    st.lib = st.ref = d.allowed() ? prop::outcome::allowed : prop::outcome::denied;
    if (!d.allowed() && !o.force) return st;
    st.lib = st.ref = prop::outcome::allowed;
    try {
      s.lib.commit(j);
    } catch (const state_error&) {
      st.lib = prop::outcome::error;
    } catch (const validation_error&) {
      st.lib = prop::outcome::error;
    }
    if (ref.jobs.count(id) || o.a[0] < 0 || o.a[1] < 0 || o.a[2] < 0) {
      st.ref = prop::outcome::error;
      return st;
    }
    ref_job rj = charged;
    rj.seq = ++ref.seq;
    ref.jobs[id] = rj;
    if (d.allowed() && rj.quota)  // committed work within max
      for (std::size_t k = 0; k < 3; ++k)
        if (const auto& mx = ref.quotas[*rj.quota].max;
            mx.count(rids[k]) && o.a[k] > 0 && s.lib.quota_used(*rj.quota).get(rids[k]) > mx.at(rids[k]))
          st.divergence = "admitted work takes quota " + ref.quotas[*rj.quota].name + " above its max";
    return st;
  }
};

std::vector<op> random_ops(const harness& h, std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    o.release = r.chance(35);
    o.job = r.below(n_jobs);
    o.ns = r.chance(6) ? h.su.n_ns : r.below(h.su.n_ns);  // n_ns: no quota governs it
    for (std::size_t k = 0; k < 3; ++k) o.a[k] = r.chance(70) ? r.range(0, 4) : 0;
    if (r.chance(4)) o.a[r.below(3)] = -r.range(1, 3);  // bad
    o.force = r.chance(8);
    ops.push_back(o);
  }
  return ops;
}

}  // namespace

TEST_CASE("property: sharing pools match the reference model over random operation sequences") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = prop::check_model(
      "sharing_pools", 1, 24, 250,
      [](std::uint64_t seed) {
        harness h;
        h.su = make_setup(seed);
        return h;
      },
      [](const harness& h, std::uint64_t seed, std::size_t n) { return random_ops(h, seed, n); });
  if (!t.failure.empty()) FAIL(t.failure);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t victim_sets = t.counts.extra.count("victim sets") ? t.counts.extra.at("victim sets") : 0;
  std::printf(
      "sharing pools property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu victim sets), 0 divergences, "
      "replayed twice, %.2f s\n",
      t.ops, t.counts.allowed, t.counts.denied, t.counts.errors, victim_sets, secs);
  CHECK(t.ops == 24 * 250);
  CHECK(t.counts.allowed > t.ops / 4);
  CHECK(t.counts.denied > t.ops / 50);
  CHECK(t.counts.errors > t.ops / 50);
  CHECK(victim_sets > 0);
}
