// SPDX-License-Identifier: Apache-2.0
// Property test: min/max per (tenant, PriorityClass)
// (quota/priority_class_quota.hpp) against a plain reference that keeps the
// configured entries and the list of running jobs and recomputes, on demand,
// the limits of a pair (own entry, else the "*" entry), its usage (the jobs
// counted at commit), the decision with its reasons and the victims (over-min
// jobs of the tenant's other limited classes with a lower priority, newest
// first). Random set (valid and invalid: empty names, negative amounts, min
// above max), admit (check, then commit when allowed; sometimes regardless),
// release and bad input (unknown and duplicate ids) are applied to both;
// after every step the decisions and every pair's usage and limits are
// compared and a failed call must leave the state unchanged.
//
// Negative requests are generated: check and commit must both throw
// validation_error and change nothing.
#include <quota/json.hpp>
#include <quota/priority_class_quota.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

const std::vector<std::string> tenants{"t0", "t1", "t2", "*", ""};  // "*" and "" only in set (bad/wildcard)
const std::vector<std::string> classes{"high", "mid", "low", ""};
constexpr resource_id rids[] = {resources::cpu, resources::nvidia_gpu};
constexpr std::size_t n_jobs = 16;

enum class kind { set, admit, release };
struct op {
  kind k = kind::admit;
  std::size_t tenant = 0, cls = 0, job = 0;
  std::int64_t a[2] = {0, 0};         // request, or max
  std::optional<std::int64_t> mx[2];  // max (set)
  std::int64_t mn[2] = {0, 0};        // min (set)
  std::int32_t priority = 0;
  bool force = false, check_only = false;
};

std::string describe(const op& o) {
  std::ostringstream s;
  if (o.k == kind::set) {
    s << "set '" << tenants[o.tenant] << "'/'" << classes[o.cls] << "' min [" << o.mn[0] << "," << o.mn[1] << "] max [";
    for (const auto& m : o.mx) s << (m ? std::to_string(*m) : "-") << ",";
    s << "]";
  } else if (o.k == kind::admit) {
    s << (o.check_only ? "check" : "admit") << " j" << o.job << " '" << tenants[o.tenant] << "'/'" << classes[o.cls]
      << "' priority " << o.priority << " [" << o.a[0] << "," << o.a[1] << "]" << (o.force ? " (forced)" : "");
  } else {
    s << "release j" << o.job;
  }
  return s.str();
}

std::vector<op> random_ops(std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = i < 3 || p < 8 ? kind::set : p < 72 ? kind::admit : kind::release;
    if (o.k == kind::set) {
      o.tenant = r.chance(25) ? 3 : r.chance(4) ? 4 : r.below(3);
      o.cls = r.chance(4) ? 3 : r.below(3);
      for (std::size_t d = 0; d < 2; ++d) {
        o.mn[d] = r.chance(60) ? r.range(0, 4) : 0;
        if (r.chance(75)) o.mx[d] = o.mn[d] + r.range(0, 6);
        if (r.chance(4)) o.mn[d] = -1;                                // bad
        if (o.mx[d] && r.chance(4)) o.mx[d] = r.chance(50) ? -1 : 0;  // bad, or min above max
      }
    } else {
      o.tenant = r.chance(5) ? 4 : r.below(3);
      o.cls = r.chance(5) ? 3 : r.below(3);
      o.job = r.below(n_jobs);
      o.a[0] = r.range(0, 3);
      o.a[1] = r.chance(50) ? r.range(0, 2) : 0;
      o.priority = static_cast<std::int32_t>(r.range(0, 3));
      o.force = r.chance(8);
      o.check_only = r.chance(10);
      if (r.chance(o.check_only ? 30 : 4)) o.a[0] = -r.range(1, 3);
    }
    ops.push_back(o);
  }
  return ops;
}

job job_of(const op& o) {
  job j;
  j.id = "j" + std::to_string(o.job);
  j.queue = tenants[o.tenant];
  j.priority_class = classes[o.cls];
  j.priority = o.priority;
  for (std::size_t d = 0; d < 2; ++d)
    if (o.a[d] != 0) j.request.set(rids[d], o.a[d]);
  return j;
}

// ---- the reference -------------------------------------------------------------------------------------

struct ref_limits {
  std::int64_t mn[2];
  std::optional<std::int64_t> mx[2];
};
struct ref_job {
  std::string tenant, cls;
  std::int64_t a[2];
  std::int32_t priority;
  std::uint64_t seq;
  bool counted;
};

class reference {
 public:
  std::map<std::pair<std::string, std::string>, ref_limits> entries;
  std::map<std::string, ref_job> jobs;
  std::uint64_t seq = 0;

  const ref_limits* limits_of(const std::string& t, const std::string& c) const {
    if (auto it = entries.find({t, c}); it != entries.end()) return &it->second;
    if (auto it = entries.find({"*", c}); it != entries.end()) return &it->second;
    return nullptr;
  }
  std::int64_t used(const std::string& t, const std::string& c, std::size_t d) const {
    std::int64_t u = 0;
    for (const auto& [id, j] : jobs)
      if (j.counted && j.tenant == t && j.cls == c) u += j.a[d];
    return u;
  }
  bool set(const op& o) {
    if (o.tenant == 4 || o.cls == 3) return false;
    for (std::size_t d = 0; d < 2; ++d) {
      if (o.mn[d] < 0 || (o.mx[d] && *o.mx[d] < 0)) return false;
      if (o.mx[d] && *o.mx[d] < o.mn[d] && o.mn[d] != 0) return false;  // a min of 0 is not listed
    }
    entries[{tenants[o.tenant], classes[o.cls]}] = ref_limits{{o.mn[0], o.mn[1]}, {o.mx[0], o.mx[1]}};
    return true;
  }
  std::vector<std::string> check(const op& o) const {
    std::vector<std::string> out;
    const auto& t = tenants[o.tenant];
    const auto& c = classes[o.cls];
    if (t.empty() || c.empty()) return out;
    const auto* lim = limits_of(t, c);
    if (!lim) return out;
    for (std::size_t d = 0; d < 2; ++d)
      if (o.a[d] > 0 && lim->mx[d] && used(t, c, d) + o.a[d] > *lim->mx[d])
        out.push_back(t + "/" + c + " " + std::to_string(rids[d]) + " " + std::to_string(used(t, c, d)) + " " +
                      std::to_string(*lim->mx[d]));
    return out;
  }
  void commit(const op& o) {
    const auto& t = tenants[o.tenant];
    const auto& c = classes[o.cls];
    const bool counted = !t.empty() && !c.empty() && limits_of(t, c);
    jobs["j" + std::to_string(o.job)] = ref_job{t, c, {o.a[0], o.a[1]}, o.priority, ++seq, counted};
  }
  /// Victims as (pair, job) in the library's order within a pair: newest first.
  std::vector<std::string> victims(const op& o) const {
    std::vector<std::string> out;
    const auto& t = tenants[o.tenant];
    if (t.empty()) return out;
    for (const auto& c : classes) {
      if (c.empty() || c == classes[o.cls]) continue;
      const auto* lim = limits_of(t, c);
      if (!lim) continue;
      std::vector<std::pair<std::uint64_t, std::string>> members;
      for (const auto& [id, j] : jobs)
        if (j.counted && j.tenant == t && j.cls == c) members.emplace_back(j.seq, id);
      std::sort(members.begin(), members.end());
      std::int64_t cum[2] = {0, 0};
      std::vector<std::string> over;
      for (const auto& [s, id] : members) {
        const auto& j = jobs.at(id);
        bool above = false;
        for (std::size_t d = 0; d < 2; ++d) {
          cum[d] += j.a[d];
          if (o.a[d] > 0 && cum[d] > lim->mn[d]) above = true;
        }
        if (above && j.priority < o.priority) over.push_back(id);
      }
      for (auto it = over.rbegin(); it != over.rend(); ++it) out.push_back(t + "/" + c + " " + *it);
    }
    std::stable_sort(out.begin(), out.end(), [](const std::string& x, const std::string& y) {
      return x.substr(0, x.find(' ')) < y.substr(0, y.find(' '));
    });
    return out;
  }
};

json state_of(const priority_class_quota_policy& q) {
  json j = json::array();
  q.for_each_pair(
      [&](std::string_view t, std::string_view c, const resource_vector& used, const priority_class_limits* lim) {
        json e{{"pair", std::string(t) + "/" + std::string(c)}, {"used", json::array()}};
        for (const auto& x : used) e["used"].push_back({x.id, x.value});
        if (lim) {
          e["min"] = json::array();
          e["max"] = json::array();
          for (const auto& x : lim->min) e["min"].push_back({x.id, x.value});
          for (const auto& x : lim->max) e["max"].push_back({x.id, x.value});
        }
        j.push_back(e);
      });
  std::sort(j.begin(), j.end(), [](const json& a, const json& b) { return a["pair"] < b["pair"]; });
  return j;
}

std::string compare(const priority_class_quota_policy& q, const reference& ref) {
  for (const auto& t : tenants)
    for (const auto& c : classes) {
      if (t.empty() || c.empty()) continue;
      const auto* lib = q.limits_of(t, c);
      const auto* want = ref.limits_of(t, c);
      if ((lib == nullptr) != (want == nullptr)) return "limits of " + t + "/" + c + " differ";
      for (std::size_t d = 0; d < 2 && lib; ++d) {
        if (lib->min.get(rids[d]) != want->mn[d]) return "min of " + t + "/" + c + " differs";
        const amount* m = lib->max.find(rids[d]);
        if ((m ? std::optional<std::int64_t>(*m) : std::nullopt) != want->mx[d])
          return "max of " + t + "/" + c + " differs";
      }
      for (std::size_t d = 0; d < 2; ++d)
        if (q.used(t, c).get(rids[d]) != ref.used(t, c, d)) return "usage of " + t + "/" + c + " differs";
    }
  return "";
}

struct harness {
  using op = ::op;
  struct state {
    priority_class_quota_policy q;
    reference ref;
  };
  state start() const { return state{priority_class_quota_policy(), reference()}; }
  std::string describe(const op& o) const { return ::describe(o); }
  std::string snapshot(const state& s) const { return state_of(s.q).dump(); }
  std::string compare(const state& s) const { return ::compare(s.q, s.ref); }
  // committed work within the limits: a pair's usage above its max only
  // after a forced commit (the host decided) or a lowered max
  std::string invariants(const state&) const { return ""; }

  prop::step apply(state& s, const op& o, prop::tally& t) const {
    prop::step st;
    auto& q = s.q;
    auto& ref = s.ref;
    bool lib_failed = false, ref_failed = false, denied = false;
    if (o.k == kind::set) {
      resource_vector mn;
      limit_vector mx;
      for (std::size_t d = 0; d < 2; ++d) {
        if (o.mn[d] != 0) mn.set(rids[d], o.mn[d]);
        if (o.mx[d]) mx.set(rids[d], *o.mx[d]);
      }
      try {
        q.set(tenants[o.tenant], classes[o.cls], mn, mx);
      } catch (const config_error&) {
        lib_failed = true;
      }
      ref_failed = !ref.set(o);
    } else if (o.k == kind::admit && (o.a[0] < 0 || o.a[1] < 0)) {
      // a negative request is bad input: check and commit both throw validation_error
      // (commit of a running id may report the duplicate first)
      const job j = job_of(o);
      bool check_threw = false, commit_threw = false;
      try {
        (void)q.check(j);
      } catch (const validation_error&) {
        check_threw = true;
      }
      try {
        q.commit(j);
      } catch (const validation_error&) {
        commit_threw = true;
      } catch (const state_error&) {
        commit_threw = ref.jobs.count(j.id) != 0;
      }
      if (!check_threw || !commit_threw) st.divergence = "a negative request was accepted";
      lib_failed = ref_failed = true;
    } else if (o.k == kind::admit) {
      const job j = job_of(o);
      const decision d = q.check(j);
      std::vector<std::string> got;
      for (const auto& r : d.reasons())
        got.push_back(r.entity + " " + std::to_string(r.resource) + " " + std::to_string(r.used) + " " +
                      std::to_string(r.limit));
      if (got != ref.check(o)) {
        st.divergence = "decision: library " + to_string(d);
        return st;
      }
      std::vector<victim> vs;
      q.victims(j, vs);
      std::vector<std::string> vgot;
      for (const auto& v : vs) vgot.push_back(v.entity + " " + v.job_id);
      std::stable_sort(vgot.begin(), vgot.end(), [](const std::string& x, const std::string& y) {
        return x.substr(0, x.find(' ')) < y.substr(0, y.find(' '));
      });
      if (vgot != ref.victims(o)) {
        st.divergence = "victims differ";
        return st;
      }
      t.extra["victim sets"] += !vs.empty();
      denied = !d.allowed();
      if (!o.check_only && (d.allowed() || o.force)) {
        denied = false;
        try {
          q.commit(j);
        } catch (const state_error&) {
          lib_failed = true;
        }
        if (ref.jobs.count(j.id))
          ref_failed = true;
        else
          ref.commit(o);
      }
    } else {
      const std::string id = "j" + std::to_string(o.job);
      try {
        q.release(id);
      } catch (const unknown_entity_error&) {
        lib_failed = true;
      }
      ref_failed = ref.jobs.erase(id) == 0;
    }
    st.lib = lib_failed ? prop::outcome::error : denied ? prop::outcome::denied : prop::outcome::allowed;
    st.ref = ref_failed ? prop::outcome::error : denied ? prop::outcome::denied : prop::outcome::allowed;
    return st;
  }
};

}  // namespace

TEST_CASE("property: priority class quotas match the reference model over random operation sequences") {
  constexpr std::uint64_t seeds = 20;
  constexpr std::size_t length = 300;
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = prop::check_model(
      "priority_class_quota", 1, seeds, length, [](std::uint64_t) { return harness{}; },
      [](const harness&, std::uint64_t seed, std::size_t n) { return random_ops(seed, n); },
      0);  // (replays: the test case below)
  if (!t.failure.empty()) FAIL(t.failure);
  const std::size_t victims = t.counts.extra.count("victim sets") ? t.counts.extra.at("victim sets") : 0;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "priority class quota property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu victim sets), 0 "
      "divergences, %.2f s\n",
      t.ops, t.counts.allowed, t.counts.denied, t.counts.errors, victims, secs);
  CHECK(t.ops == seeds * length);
  CHECK(t.counts.allowed > t.ops / 4);
  CHECK(t.counts.denied > t.ops / 100);
  CHECK(t.counts.errors > t.ops / 50);
  CHECK(victims > 0);
}

TEST_CASE("property: priority class quotas replay deterministically") {
  for (std::uint64_t seed = 500; seed < 503; ++seed) {
    const auto ops = random_ops(seed, 300);
    const prop::run_result a = prop::drive(harness{}, ops), b = prop::drive(harness{}, ops);
    REQUIRE(a.divergence.empty());
    CHECK(a.final_state == b.final_state);
  }
}
