// SPDX-License-Identifier: Apache-2.0
// quota/kueue_json.hpp — Kueue objects from `kubectl get -o json`:
// ResourceFlavor, ClusterQueue, Cohort, LocalQueue and Workload (kueue.x-k8s.io
// v1beta1 and v1beta2 spellings). A document may be one object, a List or an
// array, with kinds mixed. Every problem of the document is reported at once
// (validation_error with object name and field path); on error nothing is
// added to the outputs.
// Docs: docs/kueue.md
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <quota/detail/rfc3339.hpp>
#include <quota/json.hpp>
#include <quota/kueue.hpp>
#include <quota/kueue_cohorts.hpp>
#include <quota/kueue_flavor_assignment.hpp>

namespace quota {

struct kueue_objects {
  kueue_config config;
  std::vector<kueue_workload> workloads;
};

namespace detail {

inline std::string kueue_str(const json& o, const char* key, const std::string& path, diagnostics& d,
                             const std::string& def = {}) {
  if (!o.is_object() || !o.contains(key) || o[key].is_null()) return def;
  if (!o[key].is_string()) {
    d.add(quota::detail::join_path(path, key), "expected a string");
    return def;
  }
  return o[key].get<std::string>();
}

/// A quota quantity (nominalQuota, borrowingLimit, lendingLimit) in base
/// units, exactly, up to kueue_amount_max; problems go to `d` (returning 0).
inline kueue_amount kueue_quota_amount(const json& v, resource_id id, const resource_registry& reg,
                                       const std::string& path, diagnostics& d) {
  try {
    const quantity q = parse_quantity_value(v);
    kueue_amount out = 0;
    const int scale = reg.scale(id);
    switch (q.to_base_into(scale, out, kueue_amount_max)) {
      case quota::detail::quantity_status::ok:
        return out;
      case quota::detail::quantity_status::out_of_range:
        d.add(path, "quantity '" + q.to_string() + "' is more than the largest quota kept exactly, " +
                        kueue_bound_text(reg.name(id)));
        return 0;
      default:
        (void)q.to_base(scale);  // throws the precise error (a value finer than the base unit)
        return 0;
    }
  } catch (const error& e) {
    d.add(path, e.what());
    return 0;
  }
}

/// A Kueue amount in JSON: a number when it fits in int64, else its exact
/// decimal text (JSON readers keep 64-bit integers exactly, not wider ones).
[[nodiscard]] inline json kueue_amount_json(kueue_amount v) {
  const auto n = kueue_reason_amount(v);
  if (v == static_cast<kueue_amount>(n)) return json(n);
  return json(quota::detail::int128_to_string(v));
}

inline std::int64_t kueue_weight(const json& spec, const resource_registry&, const std::string& path, diagnostics& d) {
  const json* fs = object_section(spec, "fairSharing", path + ".spec", d);
  if (!fs || !fs->contains("weight")) return 1000;
  const auto& w = (*fs)["weight"];
  try {
    quantity q;
    from_json(w, q);
    if (q.is_negative()) throw parse_error(error_id::parse_negative_quantity, "negative weight");
    return q.to_base(3);
  } catch (const error& e) {
    d.add(path + ".spec.fairSharing.weight", e.what());
    return 1000;
  }
}

inline std::vector<kueue_resource_group_spec> kueue_groups(const json& spec, resource_registry& reg,
                                                           const std::string& path, diagnostics& d) {
  std::vector<kueue_resource_group_spec> out;
  if (!spec.contains("resourceGroups")) return out;
  const auto& gs = spec["resourceGroups"];
  const std::string gp = path + ".spec.resourceGroups";
  if (!gs.is_array()) {
    d.add(gp, "expected an array");
    return out;
  }
  for (std::size_t g = 0; g < gs.size(); ++g) {
    const std::string p = quota::detail::index_path(gp, g);
    kueue_resource_group_spec grp;
    const auto& cov = gs[g].is_object() && gs[g].contains("coveredResources") ? gs[g]["coveredResources"] : json();
    if (!cov.is_array())
      d.add(p + ".coveredResources", "expected an array of resource names");
    else
      for (std::size_t i = 0; i < cov.size(); ++i) {
        try {
          grp.covered_resources.push_back(reg.intern(cov[i].get<std::string>()));
        } catch (const std::exception& e) {
          d.add(quota::detail::index_path(p + ".coveredResources", i), e.what());
        }
      }
    const auto& fl = gs[g].is_object() && gs[g].contains("flavors") ? gs[g]["flavors"] : json();
    if (!fl.is_array())
      d.add(p + ".flavors", "expected an array");
    else
      for (std::size_t f = 0; f < fl.size(); ++f) {
        const std::string fp = quota::detail::index_path(p + ".flavors", f);
        kueue_flavor_quotas_spec fq;
        fq.flavor = kueue_str(fl[f], "name", fp, d);
        if (fq.flavor.empty()) d.add(fp + ".name", "missing flavor name");
        const auto& rs = fl[f].is_object() && fl[f].contains("resources") ? fl[f]["resources"] : json();
        if (!rs.is_array()) {
          d.add(fp + ".resources", "expected an array");
          continue;
        }
        for (std::size_t r = 0; r < rs.size(); ++r) {
          const std::string rp = quota::detail::index_path(fp + ".resources", r);
          kueue_resource_quota_spec q;
          const std::string name = kueue_str(rs[r], "name", rp, d);
          try {
            q.resource = reg.intern(name);
          } catch (const std::exception& e) {
            d.add(rp + ".name", e.what());
            continue;
          }
          if (!rs[r].contains("nominalQuota"))
            d.add(rp + ".nominalQuota", "missing");
          else
            q.nominal = kueue_quota_amount(rs[r]["nominalQuota"], q.resource, reg, rp + ".nominalQuota", d);
          if (rs[r].contains("borrowingLimit") && !rs[r]["borrowingLimit"].is_null())
            q.borrowing_limit = kueue_quota_amount(rs[r]["borrowingLimit"], q.resource, reg, rp + ".borrowingLimit", d);
          if (rs[r].contains("lendingLimit") && !rs[r]["lendingLimit"].is_null())
            q.lending_limit = kueue_quota_amount(rs[r]["lendingLimit"], q.resource, reg, rp + ".lendingLimit", d);
          fq.resources.push_back(q);
        }
        grp.flavors.push_back(std::move(fq));
      }
    out.push_back(std::move(grp));
  }
  return out;
}

template <class E>
E kueue_enum(const json& o, const char* key, std::initializer_list<std::pair<const char*, E>> values, E def,
             const std::string& path, diagnostics& d) {
  const std::string s = kueue_str(o, key, path, d);
  if (s.empty()) return def;
  for (const auto& [n, v] : values)
    if (s == n) return v;
  std::string allowed;
  for (const auto& [n, v] : values) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  d.add(quota::detail::join_path(path, key), "unknown value '" + s + "' (expected one of " + allowed + ")");
  return def;
}

/// An integer within [lo, hi] (lo <= 0 <= hi; by default all of int32, as
/// Kueue's priorities) into `out`, an int32 or an optional one; false for
/// anything else (no silent wrap), `out` then unchanged.
template <class Out>
inline bool kueue_int32(const json& v, Out& out, std::int64_t lo = INT32_MIN, std::int64_t hi = INT32_MAX) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                             : (v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi))
    return false;
  out = v.get<std::int32_t>();
  return true;
}

/// What a ClusterQueue and a Cohort share: the name, the parent (spec.<key>,
/// else its older spelling spec.<old_key>), the resource groups and the
/// fair-sharing weight.
template <class Spec>
Spec kueue_quota_node(const std::string& name, const json& spec, const char* key, const char* old_key,
                      std::string Spec::*parent, resource_registry& reg, const std::string& obj, diagnostics& d) {
  Spec s;
  s.name = name;
  s.*parent = kueue_str(spec, key, obj + ".spec", d, kueue_str(spec, old_key, obj + ".spec", d));
  s.resource_groups = kueue_groups(spec, reg, obj, d);
  s.fair_weight_milli = kueue_weight(spec, reg, obj, d);
  return s;
}

/// Seconds since the epoch (rounded down) of an RFC 3339 UTC time.
inline bool kueue_parse_time(const std::string& s, std::int64_t& out) {
  std::int64_t ms = 0;
  if (!quota::detail::parse_rfc3339_utc_ms(s, ms)) return false;
  out = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
  return true;
}

}  // namespace detail

namespace detail {
/// A metav1.LabelSelector. Absent or null -> nullopt (Kueue: matches nothing).
inline std::optional<kueue_label_selector> kueue_selector(const json& spec, const char* key, const std::string& path,
                                                          diagnostics& d) {
  if (!spec.contains(key) || spec[key].is_null()) return std::nullopt;
  const auto& j = spec[key];
  const std::string p = quota::detail::join_path(path, key);
  kueue_label_selector sel;
  if (!j.is_object()) {
    d.add(p, "expected an object (a label selector)");
    return sel;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "matchLabels" && it.key() != "matchExpressions")
      d.add(p + "." + it.key(), "unknown field (expected matchLabels, matchExpressions)");
  if (j.contains("matchLabels") && !j["matchLabels"].is_null()) {
    const auto& ml = j["matchLabels"];
    if (!ml.is_object())
      d.add(p + ".matchLabels", "expected an object of strings");
    else
      for (auto it = ml.begin(); it != ml.end(); ++it) {
        if (!it.value().is_string())
          d.add(p + ".matchLabels." + it.key(), "expected a string");
        else
          sel.match_labels.emplace_back(it.key(), it.value().get<std::string>());
      }
  }
  if (j.contains("matchExpressions") && !j["matchExpressions"].is_null()) {
    const auto& me = j["matchExpressions"];
    if (!me.is_array()) {
      d.add(p + ".matchExpressions", "expected an array");
    } else {
      for (std::size_t i = 0; i < me.size(); ++i) {
        const std::string rp = quota::detail::index_path(p + ".matchExpressions", i);
        kueue_label_selector::requirement r;
        r.key = kueue_str(me[i], "key", rp, d);
        const std::string op = kueue_str(me[i], "operator", rp, d);
        if (op == "In")
          r.oper = kueue_label_selector::op::in;
        else if (op == "NotIn")
          r.oper = kueue_label_selector::op::not_in;
        else if (op == "Exists")
          r.oper = kueue_label_selector::op::exists;
        else if (op == "DoesNotExist")
          r.oper = kueue_label_selector::op::does_not_exist;
        else
          d.add(rp + ".operator", "unknown operator '" + op + "' (expected In, NotIn, Exists, DoesNotExist)");
        if (me[i].is_object() && me[i].contains("values") && !me[i]["values"].is_null()) {
          const auto& vs = me[i]["values"];
          if (!vs.is_array())
            d.add(rp + ".values", "expected an array of strings");
          else
            for (std::size_t k = 0; k < vs.size(); ++k) {
              if (vs[k].is_string())
                r.values.push_back(vs[k].get<std::string>());
              else
                d.add(quota::detail::index_path(rp + ".values", k), "expected a string");
            }
        }
        sel.match_expressions.push_back(std::move(r));
      }
    }
  }
  return sel;
}
}  // namespace detail

/// Reads every Kueue object of `doc` and appends it to `out`. Namespace
/// objects (metadata.name and metadata.labels) turn on namespaceSelector
/// checks; a ClusterQueue without namespaceSelector then admits nothing, as
/// in Kueue (write `"namespaceSelector": {}` to admit every namespace).
inline void load_kueue_objects(const json& doc, resource_registry& reg, kueue_objects& out) {
  diagnostics d;
  kueue_objects add;
  resource_registry reg_copy = reg;
  for_each_object(doc, [&](const json& o, const std::string& base) {
    const std::string kind =
        o.is_object() && o.contains("kind") && o["kind"].is_string() ? o["kind"].get<std::string>() : "";
    std::string name;
    try {
      name = object_name(o, base);
    } catch (const error& e) {
      d.add(base.empty() ? "$" : base, e.what());
      return;
    }
    const std::string obj = kind + "/" + name;
    const json* spec_p = object_section(o, "spec", obj, d);
    const json spec = spec_p ? *spec_p : json::object();
    if (kind == "ResourceFlavor") {
      add.config.resource_flavors.push_back(name);
    } else if (kind == "Namespace") {
      kueue_namespace_spec ns;
      ns.name = name;
      if (o.contains("metadata") && o["metadata"].is_object() && o["metadata"].contains("labels") &&
          !o["metadata"]["labels"].is_null()) {
        const auto& ls = o["metadata"]["labels"];
        if (!ls.is_object())
          d.add(obj + ".metadata.labels", "expected an object of strings");
        else
          for (auto it = ls.begin(); it != ls.end(); ++it) {
            if (it.value().is_string())
              ns.labels.emplace_back(it.key(), it.value().get<std::string>());
            else
              d.add(obj + ".metadata.labels." + it.key(), "expected a string");
          }
      }
      if (!add.config.namespaces) add.config.namespaces.emplace();
      add.config.namespaces->push_back(std::move(ns));
    } else if (kind == "ClusterQueue") {
      auto cq = detail::kueue_quota_node(name, spec, "cohortName", "cohort", &kueue_cluster_queue_spec::cohort,
                                         reg_copy, obj, d);
      cq.namespace_selector = detail::kueue_selector(spec, "namespaceSelector", obj + ".spec", d);
      if (const json* pre = object_section(spec, "preemption", obj + ".spec", d)) {
        const auto& p = *pre;
        const std::string pp = obj + ".spec.preemption";
        cq.preemption.reclaim_within_cohort = detail::kueue_enum<kueue_reclaim_within_cohort_policy>(
            p, "reclaimWithinCohort",
            {{"Never", kueue_reclaim_within_cohort_policy::never},
             {"LowerPriority", kueue_reclaim_within_cohort_policy::lower_priority},
             {"Any", kueue_reclaim_within_cohort_policy::any}},
            kueue_reclaim_within_cohort_policy::never, pp, d);
        cq.preemption.within_cluster_queue = detail::kueue_enum<kueue_within_cluster_queue_policy>(
            p, "withinClusterQueue",
            {{"Never", kueue_within_cluster_queue_policy::never},
             {"LowerPriority", kueue_within_cluster_queue_policy::lower_priority},
             {"LowerOrNewerEqualPriority", kueue_within_cluster_queue_policy::lower_or_newer_equal_priority}},
            kueue_within_cluster_queue_policy::never, pp, d);
        if (const json* bwc = object_section(p, "borrowWithinCohort", pp, d)) {
          const auto& b = *bwc;
          cq.preemption.borrow_within_cohort = detail::kueue_enum<kueue_borrow_within_cohort_policy>(
              b, "policy",
              {{"Never", kueue_borrow_within_cohort_policy::never},
               {"LowerPriority", kueue_borrow_within_cohort_policy::lower_priority}},
              kueue_borrow_within_cohort_policy::never, pp + ".borrowWithinCohort", d);
          if (b.contains("maxPriorityThreshold") &&
              !detail::kueue_int32(b["maxPriorityThreshold"], cq.preemption.max_priority_threshold))
            d.add(pp + ".borrowWithinCohort.maxPriorityThreshold", "expected a 32-bit integer");
        }
      }
      if (const json* ff = object_section(spec, "flavorFungibility", obj + ".spec", d)) {
        const auto& f = *ff;
        const std::string fp = obj + ".spec.flavorFungibility";
        cq.fungibility.when_can_borrow =
            detail::kueue_enum<kueue_fungibility_action>(f, "whenCanBorrow",
                                                         {{"Borrow", kueue_fungibility_action::may_stop_search},
                                                          {"MayStopSearch", kueue_fungibility_action::may_stop_search},
                                                          {"TryNextFlavor", kueue_fungibility_action::try_next_flavor}},
                                                         kueue_fungibility_action::may_stop_search, fp, d);
        cq.fungibility.when_can_preempt =
            detail::kueue_enum<kueue_fungibility_action>(f, "whenCanPreempt",
                                                         {{"Preempt", kueue_fungibility_action::may_stop_search},
                                                          {"MayStopSearch", kueue_fungibility_action::may_stop_search},
                                                          {"TryNextFlavor", kueue_fungibility_action::try_next_flavor}},
                                                         kueue_fungibility_action::try_next_flavor, fp, d);
        if (f.contains("preference")) {
          const auto pref = detail::kueue_enum<std::optional<kueue_fungibility_preference>>(
              f, "preference",
              {{"BorrowingOverPreemption", kueue_fungibility_preference::borrowing_over_preemption},
               {"PreemptionOverBorrowing", kueue_fungibility_preference::preemption_over_borrowing}},
              std::nullopt, fp, d);
          cq.fungibility.preference = pref;
        }
      }
      if (const json* scope = object_section(spec, "admissionScope", obj + ".spec", d))
        cq.admission_fair_sharing = detail::kueue_enum<bool>(*scope, "admissionMode",
                                                             {{"UsageBasedAdmissionFairSharing", true},
                                                              {"UsageBasedFairSharing", true},
                                                              {"NoAdmissionFairSharing", false}},
                                                             false, obj + ".spec.admissionScope", d);
      cq.queueing =
          detail::kueue_enum<kueue_queueing_strategy>(spec, "queueingStrategy",
                                                      {{"BestEffortFIFO", kueue_queueing_strategy::best_effort_fifo},
                                                       {"StrictFIFO", kueue_queueing_strategy::strict_fifo}},
                                                      kueue_queueing_strategy::best_effort_fifo, obj + ".spec", d);
      cq.stop = detail::kueue_enum<kueue_stop_policy>(spec, "stopPolicy",
                                                      {{"None", kueue_stop_policy::none},
                                                       {"Hold", kueue_stop_policy::hold},
                                                       {"HoldAndDrain", kueue_stop_policy::hold_and_drain}},
                                                      kueue_stop_policy::none, obj + ".spec", d);
      add.config.cluster_queues.push_back(std::move(cq));
    } else if (kind == "Cohort") {
      add.config.cohorts.push_back(
          detail::kueue_quota_node(name, spec, "parentName", "parent", &kueue_cohort_spec::parent, reg_copy, obj, d));
    } else if (kind == "LocalQueue") {
      kueue_local_queue_spec lq;
      lq.ns = object_namespace(o);
      lq.name = name;
      lq.cluster_queue = detail::kueue_str(spec, "clusterQueue", obj + ".spec", d);
      lq.fair_weight_milli = detail::kueue_weight(spec, reg_copy, obj, d);
      if (lq.cluster_queue.empty()) d.add(obj + ".spec.clusterQueue", "missing");
      add.config.local_queues.push_back(std::move(lq));
    } else if (kind == "Workload") {
      kueue_workload w;
      w.ns = object_namespace(o);
      w.name = w.ns + "/" + name;
      w.queue = detail::kueue_str(spec, "queueName", obj + ".spec", d);
      if (spec.contains("priority") && !detail::kueue_int32(spec["priority"], w.priority))
        d.add(obj + ".spec.priority", "expected a 32-bit integer");
      if (o.contains("metadata") && o["metadata"].contains("creationTimestamp") &&
          o["metadata"]["creationTimestamp"].is_string()) {
        if (!detail::kueue_parse_time(o["metadata"]["creationTimestamp"].get<std::string>(), w.created))
          d.add(obj + ".metadata.creationTimestamp", "expected an RFC 3339 time");
      }
      const auto& ps = spec.contains("podSets") ? spec["podSets"] : json();
      if (!ps.is_array() || ps.empty())
        d.add(obj + ".spec.podSets", "expected a non-empty array");
      else
        for (std::size_t i = 0; i < ps.size(); ++i) {
          const std::string pp = quota::detail::index_path(obj + ".spec.podSets", i);
          kueue_pod_set p;
          p.name = detail::kueue_str(ps[i], "name", pp, d, "main");
          if (ps[i].contains("count") && !detail::kueue_int32(ps[i]["count"], p.count, 0))
            d.add(pp + ".count", "expected a non-negative integer");
          if (ps[i].contains("minCount") && !ps[i]["minCount"].is_null() &&
              !detail::kueue_int32(ps[i]["minCount"], p.min_count, 0, p.count))
            d.add(pp + ".minCount", "expected an integer within 0..count");
          // per-pod requests: the containers' requests summed; a plain "requests" object is accepted too
          if (ps[i].contains("requests"))
            p.per_pod = parse_resource_list(ps[i]["requests"], reg_copy, pp + ".requests", &d);
          const json* podspec = nullptr;
          if (ps[i].contains("template") && ps[i]["template"].contains("spec")) podspec = &ps[i]["template"]["spec"];
          if (podspec && podspec->contains("containers") && (*podspec)["containers"].is_array()) {
            const auto& cs = (*podspec)["containers"];
            for (std::size_t c = 0; c < cs.size(); ++c)
              if (cs[c].contains("resources") && cs[c]["resources"].contains("requests")) {
                const std::string cp =
                    quota::detail::index_path(pp + ".template.spec.containers", c) + ".resources.requests";
                const auto v = parse_resource_list(cs[c]["resources"]["requests"], reg_copy, cp, &d);
                for (const auto& e : v) p.per_pod.set(e.id, quota::detail::checked_add(p.per_pod.get(e.id), e.value));
              }
          }
          w.pod_sets.push_back(std::move(p));
        }
      add.workloads.push_back(std::move(w));
    } else {
      d.add(obj, "unsupported kind '" + kind + "'");
    }
  });
  d.throw_if_any();
  for (auto& f : add.config.resource_flavors) out.config.resource_flavors.push_back(std::move(f));
  for (auto& c : add.config.cluster_queues) out.config.cluster_queues.push_back(std::move(c));
  for (auto& c : add.config.cohorts) out.config.cohorts.push_back(std::move(c));
  for (auto& l : add.config.local_queues) out.config.local_queues.push_back(std::move(l));
  if (add.config.namespaces) {
    if (!out.config.namespaces) out.config.namespaces.emplace();
    for (auto& n : *add.config.namespaces) out.config.namespaces->push_back(std::move(n));
  }
  for (auto& w : add.workloads) out.workloads.push_back(std::move(w));
  reg = std::move(reg_copy);
}

/// Convenience: parse a document into a fresh kueue_objects.
[[nodiscard]] inline kueue_objects load_kueue_objects(const json& doc, resource_registry& reg) {
  kueue_objects out;
  load_kueue_objects(doc, reg, out);
  return out;
}

namespace detail {
/// A Go duration ("168h", "5m", "1h30m", "90s", "250ms") in milliseconds; false when malformed.
inline bool kueue_parse_duration(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  if (s == "0") {
    out = 0;
    return true;
  }
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::int64_t n = 0;
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      n = n * 10 + (s[i++] - '0');
      if (n > 1000000000000) return false;  // keeps n * unit within int64
    }
    if (i == start) return false;
    std::int64_t unit = 0;
    if (s.compare(i, 2, "ms") == 0) {
      unit = 1;
      i += 2;
    } else if (i < s.size() && s[i] == 's') {
      unit = 1000;
      ++i;
    } else if (i < s.size() && s[i] == 'm') {
      unit = 60000;
      ++i;
    } else if (i < s.size() && s[i] == 'h') {
      unit = 3600000;
      ++i;
    } else {
      return false;
    }
    if (!quota::detail::try_add(total, n * unit, total)) return false;
  }
  out = total;
  return true;
}
}  // namespace detail

/// Kueue's configuration section `admissionFairSharing`:
/// {"usageHalfLifeTime": "168h", "usageSamplingInterval": "5m", "resourceWeights": {"cpu": 2}}.
/// Problems go to `d` with paths under `path`.
[[nodiscard]] inline kueue_admission_fair_sharing_config parse_admission_fair_sharing(const json& j,
                                                                                      resource_registry& reg,
                                                                                      const std::string& path,
                                                                                      diagnostics& d) {
  kueue_admission_fair_sharing_config c;
  if (!j.is_object()) {
    d.add(path, "expected an object");
    return c;
  }
  auto dur = [&](const char* key, std::int64_t& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_string() || !detail::kueue_parse_duration(j[key].get<std::string>(), out))
      d.add(quota::detail::join_path(path, key), "expected a duration such as \"168h\" or \"5m\"");
  };
  dur("usageHalfLifeTime", c.half_life_ms);
  dur("usageSamplingInterval", c.sampling_interval_ms);
  if (j.contains("resourceWeights")) {
    const auto& w = j["resourceWeights"];
    if (!w.is_object()) {
      d.add(path + ".resourceWeights", "expected an object of resource: weight");
    } else {
      for (auto it = w.begin(); it != w.end(); ++it) {
        const std::string wp = path + ".resourceWeights." + it.key();
        try {
          const resource_id r = reg.intern(it.key());
          quantity q;
          if (it.value().is_number_float())  // Kueue's configuration gives weights as floats (cpu: 2.0)
            q = quantity::parse(it.value().dump());
          else
            from_json(it.value(), q);
          if (q.is_negative()) throw parse_error(error_id::parse_negative_quantity, "negative weight");
          c.resource_weights_milli.emplace_back(r, q.to_base(3));
        } catch (const std::exception& e) {
          d.add(wp, e.what());
        }
      }
    }
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "usageHalfLifeTime" && it.key() != "usageSamplingInterval" && it.key() != "resourceWeights")
      d.add(path + "." + it.key(), "unknown field");
  return c;
}

/// A flavor assignment as JSON: {"clusterQueue", "mode", "borrowing",
/// "podSets": [{"count", "flavors": {"cpu": "spot"}, "borrow": {...}}], "reasons"}.
inline json assignment_to_json(const kueue_flavor_assignment& a, const kueue_cohort_forest& f,
                               const resource_registry& reg) {
  json j{{"clusterQueue", a.cluster_queue == kueue_no_node ? std::string() : f.at(a.cluster_queue).name},
         {"mode", std::string(to_string(a.mode))},
         {"borrowing", a.borrowing},
         {"podSets", json::array()}};
  for (const auto& p : a.pod_sets) {
    json pj{{"count", p.count},
            {"mode", std::string(to_string(p.mode))},
            {"flavors", json::object()},
            {"borrow", json::object()}};
    for (const auto& r : p.resources) {
      const std::string rn(reg.name(r.resource));
      pj["flavors"][rn] = r.flavor == kueue_no_flavor ? std::string() : f.flavor_name(r.flavor);
      if (r.borrow > 0) pj["borrow"][rn] = detail::kueue_amount_json(r.borrow);
    }
    j["podSets"].push_back(std::move(pj));
  }
  j["reasons"] = a.reasons;
  return j;
}

namespace detail {
/// {flavor: {resource: base units}} of the slots where `value` is non-zero or
/// where the node defines quota.
template <class F>
json kueue_slot_table(const kueue_cohort_forest& f, const resource_registry& reg, kueue_node_index n, F value) {
  json j = json::object();
  for (kueue_fr_slot s = 0; s < f.slot_count(); ++s) {
    const kueue_amount v = value(s);
    if (v == 0 && !f.has_quota(n, s) && f.subtree_quota(n, s) == 0) continue;
    j[f.flavor_name(f.slot_flavor(s))][std::string(reg.name(f.slot_resource(s)))] = kueue_amount_json(v);
  }
  return j;
}
}  // namespace detail

/// The model's state: per ClusterQueue and per cohort, usage, subtree quota
/// and borrowed amount per flavor and resource (base units: millicores,
/// bytes, devices), the weighted dominant resource share as Kueue reports it
/// (rounded up, per mille of what the parent could lend, divided by the
/// weight) and its resource; per ClusterQueue also the cohort and the number
/// of admitted workloads.
///
///   {"fairSharing": false,
///    "clusterQueues": {"team-a": {"cohort": "all", "admitted": 2,
///       "usage": {"default": {"cpu": 12000}}, "quota": {...}, "borrowed": {...},
///       "dominantShare": 200, "dominantResource": "cpu"}},
///    "cohorts": {"all": {"parent": "", "usage": {...}, "quota": {...}, "borrowed": {...},
///       "dominantShare": 0, "dominantResource": ""}}}
inline void to_json(json& j, const kueue_model& m) {
  const auto& f = m.forest();
  const auto& reg = m.registry();
  j = json{{"fairSharing", f.config().fair_sharing}, {"clusterQueues", json::object()}, {"cohorts", json::object()}};
  std::vector<std::size_t> admitted(f.cluster_queue_count(), 0);
  for (const auto& [name, w] : m.admitted())
    if (w.cluster_queue < admitted.size()) ++admitted[w.cluster_queue];
  for (kueue_node_index n = 0; n < f.node_count(); ++n) {
    const auto& nd = f.at(n);
    resource_id dom = no_resource;
    const std::int64_t share = f.dominant_resource_share(n, nullptr, &dom);
    json e{{"usage", detail::kueue_slot_table(f, reg, n, [&](kueue_fr_slot s) { return f.usage(n, s); })},
           {"quota", detail::kueue_slot_table(f, reg, n, [&](kueue_fr_slot s) { return f.subtree_quota(n, s); })},
           {"borrowed", detail::kueue_slot_table(f, reg, n, [&](kueue_fr_slot s) { return f.borrowed(n, s); })},
           {"dominantShare", share},
           {"dominantResource", dom == no_resource ? std::string() : std::string(reg.name(dom))}};
    const std::string parent = nd.parent == kueue_no_node ? std::string() : f.at(nd.parent).name;
    if (nd.is_cohort) {
      e["parent"] = parent;
      j["cohorts"][nd.name] = std::move(e);
    } else {
      e["cohort"] = parent;
      e["admitted"] = admitted[n];
      j["clusterQueues"][nd.name] = std::move(e);
    }
  }
  if (f.config().admission_fair_sharing) {
    // admission fair sharing: per LocalQueue, consumed and pending penalty per
    // resource (base units) and the usage that orders admission (a double, for reading)
    j["localQueues"] = json::object();
    for (const auto& [key, st] : m.local_queue_usages()) {
      json e{{"clusterQueue", f.at(st.cluster_queue).name},
             {"consumed", json::object()},
             {"penalty", json::object()},
             {"lastUpdate", st.last_update_ms}};
      for (const auto& x : st.consumed) e["consumed"][std::string(reg.name(x.id))] = x.value;
      for (const auto& x : st.penalty) e["penalty"][std::string(reg.name(x.id))] = x.value;
      const auto u = m.local_queue_fs_usage(key);
      e["usage"] = u ? u->to_double() : std::numeric_limits<double>::infinity();
      j["localQueues"][key] = std::move(e);
    }
  }
}

/// The state of the model behind a policy adapter (see to_json(json&, const kueue_model&)).
inline void to_json(json& j, const kueue_policy& p) {
  to_json(j, p.model());
}

}  // namespace quota
