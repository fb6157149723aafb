// SPDX-License-Identifier: Apache-2.0
// Property test: nos elastic quotas (quota/elastic_quota.hpp) against a plain
// reference that keeps only the list of running pods and recomputes, on
// demand, each quota's usage, the cluster totals, the admission decision
// (max per quota, sum of mins over the cluster) and the in-quota/over-quota
// labels (sort the quota's pods, walk them with a running sum against min).
// Random admit (check, then commit when allowed; sometimes regardless),
// release, nominated-request changes and bad input (negative amounts, unknown
// pods, duplicate pods, unknown quota indexes) are applied to both. After every
// step: the decision and its reasons, every quota's usage, nominated requests,
// running pods in label order with their labels, the totals and the
// guaranteed over-quota are compared; a failed or denied call must leave the
// library's full state byte-identical; committed work stays within max and the
// sum of mins; victims, when offered, make the pod fit. On a divergence the
// sequence is shrunk and written as two artifacts: the operations (JSON) and a
// quota-sim scenario (path printed).
#include <quota/elastic_quota.hpp>
#include <quota/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

#ifndef QUOTA_PROPERTY_ARTIFACT_DIR
#define QUOTA_PROPERTY_ARTIFACT_DIR "property-artifacts"
#endif

using namespace quota;

namespace {

constexpr resource_id rids[] = {resources::cpu, resources::memory, resources::nvidia_gpu};
const std::vector<std::string> namespaces{"a", "b", "c", "d", "e", "f"};  // "f" is never governed
constexpr std::size_t n_pods = 24;

// ---- the setup: quotas drawn from a seed --------------------------------------------------------

struct setup {
  std::vector<elastic_quota_spec> specs;
  elastic_options opt;
};

setup make_setup(std::uint64_t seed) {
  prop::rng r(seed * 7919 + 1);
  setup s;
  s.opt.missing = r.chance(50) ? elastic_missing_policy::unlimited : elastic_missing_policy::upstream;
  s.opt.label_order = r.chance(50) ? elastic_label_order::nos : elastic_label_order::creation_then_size;
  const std::size_t n_eq = 2 + r.below(3);  // 2..4 ElasticQuotas over a..d
  for (std::size_t i = 0; i < n_eq; ++i) {
    elastic_quota_spec q;
    q.name = "eq" + std::to_string(i);
    q.object_namespace = namespaces[i];
    q.namespaces = {namespaces[i]};
    const std::int64_t scale[] = {1, 10, 1};
    limit_vector max;
    for (std::size_t k = 0; k < 3; ++k) {
      if (r.chance(70)) q.min.set(rids[k], scale[k] * r.range(0, 6));
      if (r.chance(60)) max.set(rids[k], q.min.get(rids[k]) + scale[k] * r.range(0, 6));
    }
    if (!max.empty() || r.chance(30)) q.max = max;  // sometimes no spec.max at all
    s.specs.push_back(q);
  }
  if (r.chance(60)) {  // a composite quota over one governed namespace and "e" (it takes precedence)
    elastic_quota_spec c;
    c.name = "ceq";
    c.object_namespace = "e";
    c.composite = true;
    c.namespaces = {namespaces[r.below(n_eq)], "e"};
    if (r.chance(80)) c.min.set(resources::cpu, r.range(1, 8));
    if (r.chance(50)) c.max.emplace().set(resources::cpu, c.min.get(resources::cpu) + r.range(0, 4));
    if (r.chance(50)) c.min.set(resources::memory, 10 * r.range(0, 6));
    s.specs.push_back(c);
  }
  return s;
}

// ---- operations -----------------------------------------------------------------------------------

enum class kind { admit, release, nominate };
struct op {
  kind k = kind::admit;
  std::size_t pod = 0, ns = 0, quota = 0;
  std::int64_t amounts[3] = {0, 0, 0};
  bool present[3] = {false, false, false};
  std::int32_t priority = 0;
  std::int64_t created = 0;
  bool force = false;  // commit even when denied (the host decides)
};

resource_vector vec(const op& o) {
  resource_vector v;
  for (std::size_t k = 0; k < 3; ++k)
    if (o.present[k]) v.set(rids[k], o.amounts[k]);
  return v;
}
std::string pod_name(std::size_t i) {
  return "p" + std::to_string(i);
}

std::string describe(const op& o) {
  std::ostringstream s;
  s << (o.k == kind::admit ? "admit" : o.k == kind::release ? "release" : "nominate");
  if (o.k == kind::release) return s.str() + " " + pod_name(o.pod);
  if (o.k == kind::admit)
    s << " " << pod_name(o.pod) << " ns " << namespaces[o.ns] << " priority " << o.priority << " created " << o.created
      << (o.force ? " (forced)" : "");
  else
    s << " quota#" << o.quota;
  for (std::size_t k = 0; k < 3; ++k)
    if (o.present[k]) s << " " << resources::well_known_name(rids[k]) << "=" << o.amounts[k];
  return s.str();
}

json op_to_json(const op& o) {
  json a = json::object();
  for (std::size_t k = 0; k < 3; ++k)
    if (o.present[k]) a[std::string(resources::well_known_name(rids[k]))] = o.amounts[k];
  return json{{"kind", o.k == kind::admit     ? "admit"
                       : o.k == kind::release ? "release"
                                              : "nominate"},
              {"pod", pod_name(o.pod)},
              {"namespace", namespaces[o.ns]},
              {"quota", o.quota},
              {"request", a},
              {"priority", o.priority},
              {"created_ms", o.created},
              {"force", o.force}};
}

std::vector<op> random_ops(std::uint64_t seed, std::size_t n, std::size_t n_quotas) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = p < 55 ? kind::admit : p < 92 ? kind::release : kind::nominate;
    o.pod = r.below(n_pods);
    o.ns = r.below(namespaces.size());
    o.quota = r.chance(8) ? n_quotas : r.below(n_quotas);  // n_quotas: unknown
    const std::int64_t hi[] = {4, 40, 2};
    for (std::size_t k = 0; k < 3; ++k) {
      o.present[k] = r.chance(o.k == kind::nominate ? 30 : 70);
      o.amounts[k] = r.range(0, hi[k]);
    }
    if (r.chance(4)) {  // bad input: a negative amount
      o.present[0] = true;
      o.amounts[0] = -r.range(1, 3);
    }
    if (o.k == kind::nominate && !r.chance(20)) o.present[0] = o.present[1] = o.present[2] = false;  // mostly clear
    o.priority = static_cast<std::int32_t>(r.range(0, 2));
    o.created = r.range(0, 6);  // ties on purpose
    o.force = r.chance(8);
    ops.push_back(o);
  }
  return ops;
}

// ---- the reference ----------------------------------------------------------------------------------

using prop::outcome;

struct ref_pod {
  std::string name, ns;
  std::map<resource_id, std::int64_t> req;  // present dimensions
  std::int32_t priority = 0;
  std::int64_t created = 0;
};

struct ref_reason {
  std::string rule;
  resource_id resource;
  std::int64_t requested, used, limit;
  auto operator<=>(const ref_reason&) const = default;
};

class reference {
 public:
  explicit reference(const setup& s, bool f = false) : fault(f), s_(s) { nominated.resize(s.specs.size()); }

  std::map<std::string, ref_pod> pods;
  std::vector<std::map<resource_id, std::int64_t>> nominated;  // present dimensions
  bool fault = false;                                          // a planted bug, to test the shrinker

  // a composite quota governs its namespaces before an ElasticQuota does
  std::optional<std::size_t> quota_of(const std::string& ns) const {
    for (std::size_t i = 0; i < s_.specs.size(); ++i)
      if (s_.specs[i].composite && has(s_.specs[i].namespaces, ns)) return i;
    for (std::size_t i = 0; i < s_.specs.size(); ++i)
      if (!s_.specs[i].composite && has(s_.specs[i].namespaces, ns)) return i;
    return std::nullopt;
  }
  std::int64_t used(std::size_t q, resource_id r) const {
    std::int64_t u = 0;
    for (const auto& [n, p] : pods)
      if (quota_of(p.ns) == q && p.req.count(r)) u += p.req.at(r);
    return u;
  }
  std::int64_t total_used(resource_id r) const {
    std::int64_t u = 0;
    for (std::size_t q = 0; q < s_.specs.size(); ++q) u += used(q, r);
    return u;
  }
  std::int64_t nominated_of(std::size_t q, resource_id r) const {
    return nominated[q].count(r) ? nominated[q].at(r) : 0;
  }
  std::int64_t total_nominated(resource_id r) const {
    std::int64_t t = 0;
    for (std::size_t q = 0; q < s_.specs.size(); ++q) t += nominated_of(q, r);
    return t;
  }
  bool upstream_zero(resource_id r) const {
    return s_.opt.missing == elastic_missing_policy::upstream && (r == resources::cpu || r == resources::memory);
  }
  std::optional<std::int64_t> max_of(std::size_t q, resource_id r) const {
    if (!s_.specs[q].max) return std::nullopt;  // no spec.max: no limit at all
    if (const amount* m = s_.specs[q].max->find(r)) return *m;
    if (upstream_zero(r)) return 0;
    return std::nullopt;
  }
  // an ElasticQuota whose namespace a CompositeElasticQuota governs counts nowhere
  bool superseded(std::size_t q) const {
    if (s_.specs[q].composite) return false;
    for (const auto& c : s_.specs)
      if (c.composite &&
          std::find(c.namespaces.begin(), c.namespaces.end(), s_.specs[q].namespaces[0]) != c.namespaces.end())
        return true;
    return false;
  }
  // the sum of all mins bounds the cluster, over the resources some min lists
  std::optional<std::int64_t> listed_total_min(resource_id r) const {
    std::optional<std::int64_t> t;
    for (std::size_t i = 0; i < s_.specs.size(); ++i)
      if (!superseded(i) && s_.specs[i].min.has(r)) t = t.value_or(0) + s_.specs[i].min.get(r);
    return t;
  }
  std::optional<std::int64_t> total_min(resource_id r) const {
    if (const auto t = listed_total_min(r)) return t;
    if (upstream_zero(r)) return 0;
    return std::nullopt;
  }

  std::vector<ref_reason> check(const std::string& ns, const std::map<resource_id, std::int64_t>& req) const {
    std::vector<ref_reason> out;
    const auto q = quota_of(ns);
    if (!q) return out;
    for (const auto& [r, v] : req) {
      if (v <= 0) continue;
      const std::int64_t u = used(*q, r) + nominated_of(*q, r);
      if (const auto lim = max_of(*q, r); lim && u + v > *lim + (fault ? 1 : 0))
        out.push_back({"over_max", r, v, u, *lim});
    }
    for (const auto& [r, v] : req) {
      if (v <= 0) continue;
      const std::int64_t u = total_used(r) + total_nominated(r);
      if (const auto lim = total_min(r); lim && u + v > *lim)
        out.push_back({"total_guaranteed_exhausted", r, v, u, *lim});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // running pods of q in label order, with their labels
  std::vector<std::pair<std::string, elastic_capacity>> labels(std::size_t q) const {
    std::vector<const ref_pod*> list;
    for (const auto& [n, p] : pods)
      if (quota_of(p.ns) == q) list.push_back(&p);
    auto size_less = [](const ref_pod& x, const ref_pod& y) {  // lexicographic over resource ids, absent = 0
      for (const auto r : rids) {
        const std::int64_t a = x.req.count(r) ? x.req.at(r) : 0, b = y.req.count(r) ? y.req.at(r) : 0;
        if (a != b) return a < b ? -1 : 1;
      }
      return 0;
    };
    std::sort(list.begin(), list.end(), [&](const ref_pod* x, const ref_pod* y) {
      if (x->created != y->created) return x->created < y->created;
      if (s_.opt.label_order == elastic_label_order::nos && x->priority != y->priority)
        return x->priority < y->priority;
      if (const int c = size_less(*x, *y); c != 0) return c < 0;
      return x->name < y->name;
    });
    std::vector<std::pair<std::string, elastic_capacity>> out;
    std::map<resource_id, std::int64_t> sum;
    bool over = false;
    for (const auto* p : list) {
      for (const auto& e : s_.specs[q].min) {
        sum[e.id] += p->req.count(e.id) ? p->req.at(e.id) : 0;
        if (sum[e.id] > e.value) over = true;
      }
      out.emplace_back(p->name, over ? elastic_capacity::over_quota : elastic_capacity::in_quota);
    }
    return out;
  }

  std::int64_t guaranteed_over_quota(std::size_t q, resource_id r) const {
    const std::int64_t mq = s_.specs[q].min.get(r);
    std::int64_t total = 0, free = 0;
    if (superseded(q)) return 0;
    for (std::size_t i = 0; i < s_.specs.size(); ++i) {
      if (superseded(i)) continue;
      total += s_.specs[i].min.get(r);
      free += std::max<std::int64_t>(0, s_.specs[i].min.get(r) - used(i, r));
    }
    return mq <= 0 || total <= 0 ? 0 : mq * free / total;
  }

 private:
  static bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }
  const setup& s_;
};

std::map<resource_id, std::int64_t> req_map(const op& o) {
  std::map<resource_id, std::int64_t> m;
  for (std::size_t k = 0; k < 3; ++k)
    if (o.present[k]) m[rids[k]] = o.amounts[k];
  return m;
}
bool negative(const op& o) {
  for (std::size_t k = 0; k < 3; ++k)
    if (o.present[k] && o.amounts[k] < 0) return true;
  return false;
}

// ---- the library's full state -------------------------------------------------------------------------

json vec_json(const resource_vector& v) {  // every present entry, explicit zeros included
  json j = json::array();
  for (const auto& e : v) j.push_back({e.id, e.value});
  return j;
}

json state_of(const elastic_quota_model& s) {
  json j{{"total_used", vec_json(s.total_used())}, {"total_min", vec_json(s.total_min())}, {"quotas", json::array()}};
  for (std::uint32_t q = 0; q < s.size(); ++q) {
    json pods = json::array();
    for (const auto* p : s.running_pods(q)) pods.push_back({p->name, std::string(to_string(s.label(p->name)))});
    j["quotas"].push_back({{"used", vec_json(s.used(q))}, {"nominated", vec_json(s.nominated(q))}, {"pods", pods}});
  }
  return j;
}

bool lib_state_changed(const elastic_quota_model& s, const json& before) {
  return state_of(s) != before;
}

std::vector<ref_reason> reasons_of(const decision& d) {
  std::vector<ref_reason> out;
  for (const auto& r : d.reasons()) out.push_back({std::string(r.rule), r.resource, r.requested, r.used, r.limit});
  std::sort(out.begin(), out.end());
  return out;
}

std::string compare(const elastic_quota_model& s, const reference& ref) {
  for (std::uint32_t q = 0; q < s.size(); ++q)
    for (const auto r : rids) {
      if (s.used(q).get(r) != ref.used(q, r)) return "used of quota#" + std::to_string(q) + " differs";
      if (s.nominated(q).get(r) != ref.nominated_of(q, r))
        return "nominated of quota#" + std::to_string(q) + " differs";
      if (s.guaranteed_over_quota(q, r) != ref.guaranteed_over_quota(q, r))
        return "guaranteed over-quota of quota#" + std::to_string(q) + " differs";
    }
  for (const auto r : rids) {
    if (s.total_used().get(r) != ref.total_used(r)) return "total used differs";
    const amount* lib_min = s.total_min().find(r);
    if ((lib_min ? std::optional<std::int64_t>(*lib_min) : std::nullopt) != ref.listed_total_min(r))
      return "total min differs";
  }
  for (std::uint32_t q = 0; q < s.size(); ++q) {
    std::vector<std::pair<std::string, elastic_capacity>> lib;
    for (const auto* p : s.running_pods(q)) lib.emplace_back(p->name, s.label(p->name));
    if (lib != ref.labels(q)) return "running pods or labels of quota#" + std::to_string(q) + " differ";
  }
  for (std::size_t i = 0; i < n_pods; ++i)
    if (s.running(pod_name(i)) != (ref.pods.count(pod_name(i)) == 1)) return pod_name(i) + " running state differs";
  return "";
}

// ---- the driver -----------------------------------------------------------------------------------------

json scenario_of(std::uint64_t seed, const setup& su, const std::vector<op>& ops, bool fault);

/// The elastic quota model in prop::drive: the library, the reference, and one operation applied to both.
struct harness {
  using op = ::op;
  setup su;
  std::uint64_t seed = 0;
  bool fault = false;
  struct state {
    elastic_quota_model lib;
    reference ref;
  };
  state start() const { return state{elastic_quota_model(su.specs, su.opt), reference(su, fault)}; }
  std::string describe(const op& o) const { return ::describe(o); }
  json to_json(const op& o) const { return op_to_json(o); }
  json scenario(const std::vector<op>& ops) const { return scenario_of(seed, su, ops, fault); }
  std::string snapshot(const state& s) const { return state_of(s.lib).dump(); }
  std::string compare(const state& s) const { return ::compare(s.lib, s.ref); }
  std::string invariants(const state&) const { return ""; }  // (checked in apply, right after each commit)

  prop::step apply(state& s, const op& o, prop::tally& t) const {
    prop::step st;
    auto& lib = s.lib;
    auto& ref = s.ref;
    outcome got = outcome::allowed, want = outcome::allowed;
    const std::string name = pod_name(o.pod);
    if (o.k == kind::admit) {
      const json before = state_of(lib);  // check and victims change nothing
      const decision d = lib.check(namespaces[o.ns], vec(o));
      const auto want_reasons = ref.check(namespaces[o.ns], req_map(o));
      if (reasons_of(d) != want_reasons) {
        st.divergence = "library " + std::string(d.allowed() ? "allows" : "denies (" + to_string(d) + ")") +
                        ", reference " + (want_reasons.empty() ? "allows" : "denies");
        return st;
      }
      if (lib_state_changed(lib, before)) {
        st.divergence = "check changed the state";
        return st;
      }
      if (!d.allowed()) {
        // victims offered must make the pod fit once they are gone
        std::vector<victim> vs;
        lib.victims(elastic_pod{name, namespaces[o.ns], vec(o), o.priority, o.created}, vs);
        if (lib_state_changed(lib, before)) {
          st.divergence = "victims changed the state";
          return st;
        }
        if (!vs.empty()) {
          ++t.extra["victim sets"];
          // (rebuilt, not copied: a copied elastic_quota_model shares its pod pointers with the original)
          const auto qa = lib.quota_of(namespaces[o.ns]);
          std::set<std::string> gone;
          for (const auto& v : vs) {
            if (lib.label(v.job_id) != elastic_capacity::over_quota) {
              st.divergence = "victim " + v.job_id + " is in quota";
              return st;
            }
            if (lib.quota_of(lib.pod(v.job_id).ns) == qa) {
              st.divergence = "victim " + v.job_id + " is in the same quota";
              return st;
            }
            gone.insert(v.job_id);
          }
          elastic_quota_model after(su.specs, su.opt);
          for (const auto& [n, p] : ref.pods) {
            if (gone.count(n)) continue;
            resource_vector rv;
            for (const auto& [r, v] : p.req) rv.set(r, v);
            after.add_pod(elastic_pod{n, p.ns, rv, p.priority, p.created});
          }
          for (std::uint32_t q = 0; q < lib.size(); ++q) after.set_nominated(q, lib.nominated(q));
          if (!after.check(namespaces[o.ns], vec(o)).allowed()) {
            st.divergence = "the pod does not fit after its victims";
            return st;
          }
        }
      }
      got = want = d.allowed() ? outcome::allowed : outcome::denied;
      if (d.allowed() || o.force) {
        std::vector<elastic_label_change> changes;
        try {
          lib.add_pod(elastic_pod{name, namespaces[o.ns], vec(o), o.priority, o.created}, &changes);
          got = outcome::allowed;
        } catch (const state_error&) {
          got = outcome::error;
        } catch (const validation_error&) {
          got = outcome::error;
        }
        if (ref.pods.count(name) || negative(o)) {
          want = outcome::error;
        } else {
          ref.pods[name] = ref_pod{name, namespaces[o.ns], req_map(o), o.priority, o.created};
          want = outcome::allowed;
        }
        if (got == outcome::error && !changes.empty()) {
          st.divergence = "a failed commit reported label changes";
          return st;
        }
        if (d.allowed() && got == outcome::allowed) {  // committed work within what it was checked against
          const auto q = lib.quota_of(namespaces[o.ns]);
          for (std::size_t k = 0; k < 3 && q != elastic_quota_model::npos; ++k) {
            if (!o.present[k] || o.amounts[k] <= 0) continue;
            if (const auto lim = ref.max_of(q, rids[k]);
                lim && lib.used(q).get(rids[k]) + lib.nominated(q).get(rids[k]) > *lim) {
              st.divergence = "committed usage above max";
              return st;
            }
            if (const auto lim = ref.total_min(rids[k]); lim && !ref.fault && lib.total_used().get(rids[k]) > *lim) {
              st.divergence = "committed usage above the sum of mins";
              return st;
            }
          }
        }
      }
    } else if (o.k == kind::release) {
      try {
        lib.remove_pod(name);
      } catch (const unknown_entity_error&) {
        got = outcome::error;
      }
      want = ref.pods.erase(name) ? outcome::allowed : outcome::error;
    } else {
      try {
        lib.set_nominated(static_cast<std::uint32_t>(o.quota), vec(o));
      } catch (const unknown_entity_error&) {
        got = outcome::error;
      } catch (const validation_error&) {
        got = outcome::error;
      }
      if (o.quota >= ref.nominated.size() || negative(o))
        want = outcome::error;
      else
        ref.nominated[o.quota] = req_map(o);
    }
    st.lib = got;
    st.ref = want;
    return st;
  }
};

prop::run_result run(const setup& su, const std::vector<op>& ops, bool fault = false) {
  harness h;
  h.su = su;
  h.fault = fault;
  return prop::drive(h, ops);
}

// ---- artifacts ------------------------------------------------------------------------------------------

json quantity_list(const resource_vector& v) {
  json j = json::object();
  for (const auto& e : v)
    j[std::string(resources::well_known_name(e.id))] =
        e.id == resources::cpu ? std::to_string(e.value) + "m" : std::to_string(e.value);
  return j;
}
json quantity_list(const limit_vector& v) {
  json j = json::object();
  for (const auto& e : v)
    j[std::string(resources::well_known_name(e.id))] =
        e.id == resources::cpu ? std::to_string(e.value) + "m" : std::to_string(e.value);
  return j;
}

/// A quota-sim scenario with the setup's quota objects; each pod the
/// reference admits becomes a job submitted at its step (ms), each release
/// of a running pod a delete event; expectations: the reference's non-zero
/// usage per quota at the end. Forced commits and nominated requests have no
/// scenario form and creation times become submit times, so the scenario is
/// an approximation; the operations file is the exact reproducer.
json scenario_of(std::uint64_t seed, const setup& su, const std::vector<op>& ops, bool fault) {
  json objects = json::array();
  for (const auto& s : su.specs) {
    json spec{{"min", quantity_list(s.min)}};
    if (s.max) spec["max"] = quantity_list(*s.max);
    if (s.composite) spec["namespaces"] = s.namespaces;
    objects.push_back({{"apiVersion", "nos.nebuly.com/v1alpha1"},
                       {"kind", s.composite ? "CompositeElasticQuota" : "ElasticQuota"},
                       {"metadata", {{"name", s.name}, {"namespace", s.object_namespace}}},
                       {"spec", spec}});
  }
  json jobs = json::array(), events = json::array(), expect = json::array();
  reference ref(su);
  ref.fault = fault;
  std::map<std::string, std::string> job_of;  // running pod -> job id
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op& o = ops[i];
    const std::string name = pod_name(o.pod);
    if (o.k == kind::admit && !negative(o) && !ref.pods.count(name) &&
        ref.check(namespaces[o.ns], req_map(o)).empty()) {
      const std::string id = name + "-step" + std::to_string(i);
      jobs.push_back({{"id", id},
                      {"submit", static_cast<std::int64_t>(i)},
                      {"namespace", namespaces[o.ns]},
                      {"priority", o.priority},
                      {"request", quantity_list(vec(o))}});
      ref.pods[name] = ref_pod{name, namespaces[o.ns], req_map(o), o.priority, o.created};
      job_of[name] = id;
    } else if (o.k == kind::nominate && o.quota < su.specs.size() && !negative(o)) {
      ref.nominated[o.quota] = req_map(o);  // (the scenario form has no nominated pods)
    } else if (o.k == kind::release && ref.pods.erase(name)) {
      events.push_back({{"at", static_cast<std::int64_t>(i)}, {"type", "delete"}, {"job", job_of[name]}});
    }
  }
  for (std::size_t q = 0; q < su.specs.size(); ++q)
    for (const auto r : rids)
      if (ref.used(q, r) != 0)  // (zero usage is absent from the introspection)
        expect.push_back(
            {{"at", "end"},
             {"model", "elastic_quota"},
             {"pointer", "/quotas/" + su.specs[q].name + "/used/" + std::string(resources::well_known_name(r))},
             {"equals", ref.used(q, r)}});
  return json{
      {"name", "elastic quota property seed " + std::to_string(seed) + " (shrunk)"},
      {"description", "written by elastic_quota_property_test from a shrunk divergence"},
      {"cluster",
       {{"nodes",
         json::array({{{"name", "big"},
                       {"allocatable", {{"cpu", "1000000"}, {"memory", "1000000"}, {"nvidia.com/gpu", 100000}}}}})}}},
      {"scheduler", {{"preemption", false}}},
      {"tenant_by", "namespace"},
      {"policies",
       json::array(
           {{{"model", "elastic_quota"},
             {"objects", objects},
             {"options",
              {{"missing", su.opt.missing == elastic_missing_policy::upstream ? "upstream" : "unlimited"},
               {"labelOrder", su.opt.label_order == elastic_label_order::nos ? "nos" : "creation_then_size"}}}}})},
      {"jobs", jobs},
      {"events", events},
      {"expect", expect}};
}

struct artifacts {
  std::string ops_path, scenario_path;
};

artifacts write_artifacts(const std::string& tag, std::uint64_t seed, const setup& su, const std::vector<op>& ops,
                          const std::string& divergence, bool fault = false) {
  namespace fs = std::filesystem;
  const fs::path dir = QUOTA_PROPERTY_ARTIFACT_DIR;
  fs::create_directories(dir);
  json list = json::array();
  for (const auto& o : ops) list.push_back(op_to_json(o));
  artifacts a{(dir / ("elastic_quota_" + tag + "_seed" + std::to_string(seed) + ".ops.json")).string(),
              (dir / ("elastic_quota_" + tag + "_seed" + std::to_string(seed) + ".scenario.json")).string()};
  std::ofstream(a.ops_path)
      << json{{"model", "elastic_quota"}, {"seed", seed}, {"divergence", divergence}, {"operations", list}}.dump(2)
      << "\n";
  std::ofstream(a.scenario_path) << scenario_of(seed, su, ops, fault).dump(2) << "\n";
  return a;
}

}  // namespace

TEST_CASE("property: elastic quotas match the reference model over random operation sequences") {
  constexpr std::uint64_t seeds = 16;
  constexpr std::size_t length = 300;
  const auto t0 = std::chrono::steady_clock::now();
  // a divergence is shrunk and written as elastic_quota_seed<N>.ops.json and .scenario.json
  const auto t = prop::check_model(
      "elastic_quota", 1, seeds, length,
      [](std::uint64_t seed) {
        harness h;
        h.su = make_setup(seed);
        h.seed = seed;
        return h;
      },
      [](const harness& h, std::uint64_t seed, std::size_t n) { return random_ops(seed, n, h.su.specs.size()); },
      0);  // (replays: the test case below)
  if (!t.failure.empty()) FAIL(t.failure);
  const std::size_t victim_sets = t.counts.extra.count("victim sets") ? t.counts.extra.at("victim sets") : 0;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "elastic quota property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu victim sets checked), 0 "
      "divergences, %.2f s\n",
      t.ops, t.counts.allowed, t.counts.denied, t.counts.errors, victim_sets, secs);
  const std::size_t total = t.ops;
  CHECK(total == seeds * length);
  CHECK(t.counts.allowed > total / 5);
  CHECK(t.counts.denied > total / 50);
  CHECK(t.counts.errors > total / 50);
  CHECK(victim_sets > 0);
}

TEST_CASE("property: elastic quotas replay deterministically") {
  for (std::uint64_t seed = 200; seed < 204; ++seed) {
    const setup su = make_setup(seed);
    const auto ops = random_ops(seed, 300, su.specs.size());
    const prop::run_result a = run(su, ops), b = run(su, ops);
    REQUIRE(a.divergence.empty());
    CHECK(a.final_state == b.final_state);
  }
}

TEST_CASE("property: a planted fault in the elastic quota reference is found and shrunk to a minimal sequence") {
  // The faulty reference lets a pod pass max by one unit. The smallest
  // sequence that shows it: one admission that lands exactly one above max
  // (if some quota allows it from empty), else two.
  std::uint64_t found_seed = 0;
  std::vector<op> small;
  setup su;
  std::size_t original = 0;
  for (std::uint64_t seed = 1; seed <= 60 && !found_seed; ++seed) {
    su = make_setup(seed);
    const auto ops = random_ops(seed, 300, su.specs.size());
    const prop::run_result res = run(su, ops, true);
    if (res.divergence.empty()) continue;
    found_seed = seed;
    std::vector<op> prefix(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(res.step) + 1);
    original = prefix.size();
    small = prop::shrink<op>(prefix, [&](const std::vector<op>& c) { return !run(su, c, true).divergence.empty(); });
  }
  REQUIRE(found_seed != 0);
  const prop::run_result shrunk = run(su, small, true);
  REQUIRE_FALSE(shrunk.divergence.empty());
  INFO("seed " << found_seed << ": " << shrunk.divergence);
  // 1-minimal: removing any single operation makes the divergence disappear
  for (std::size_t i = 0; i < small.size(); ++i) {
    auto c = small;
    c.erase(c.begin() + static_cast<std::ptrdiff_t>(i));
    CHECK(run(su, c, true).divergence.empty());
  }
  // the last operation is the admission the faulty reference allows
  CHECK(small.back().k == kind::admit);
  CHECK(small.size() <= 3);
  CHECK(small.size() < original);
  // the correct reference agrees with the library on the shrunk sequence
  CHECK(run(su, small, false).divergence.empty());
  // the reproducer is written: the operations and a quota-sim scenario
  const auto a = write_artifacts("planted_fault", found_seed, su, small, shrunk.divergence, true);
  std::ifstream ops_in(a.ops_path), sc_in(a.scenario_path);
  REQUIRE(ops_in.good());
  REQUIRE(sc_in.good());
  const json ops_doc = json::parse(ops_in), sc = json::parse(sc_in);
  CHECK(ops_doc["operations"].size() == small.size());
  CHECK(sc["policies"][0]["objects"].size() == su.specs.size());
  CHECK(!sc["jobs"].empty());
  std::printf("planted fault (seed %llu): %zu operations shrunk to %zu; artifacts %s, %s\n",
              static_cast<unsigned long long>(found_seed), original, small.size(), a.ops_path.c_str(),
              a.scenario_path.c_str());
}
