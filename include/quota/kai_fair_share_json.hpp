// SPDX-License-Identifier: Apache-2.0
// quota/kai_fair_share_json.hpp — KAI Queue objects (scheduling.run.ai/v2) to
// kai_fair_share_queue_spec, from `kubectl get queues.scheduling.run.ai -o json`
// (a List, an array or one object).
//
// Units as KAI: cpu in millicores, memory in MB (10^6 bytes), gpu in devices
// (fractions allowed when the registry's gpu scale can hold them). Any other
// key under spec.resources is a resource name with amounts in its base unit.
// quota/overQuotaWeight/limit omitted = 0; -1 = unlimited (quota, limit).
// to_json is the model's introspection.
// Docs: docs/kai-fair-share.md
#pragma once

#include <string>
#include <vector>

#include <quota/big_int.hpp>
#include <quota/detail/rfc3339.hpp>
#include <quota/json.hpp>
#include <quota/kai_fair_share.hpp>
#include <quota/quantity.hpp>

namespace quota {

struct kai_fair_share_json_options {
  /// Resource the KAI "gpu" key maps to.
  std::string gpu_resource = "nvidia.com/gpu";
};

namespace detail {
// Exact conversion of a JSON number in KAI units to base units: amount =
// number * 10^(scale) * factor. -1 stays -1. Problems go to diag.
inline amount kai_fair_share_json_amount(const json& v, int scale, std::int64_t factor, const std::string& path,
                                     diagnostics& diag) {
  if (!v.is_number()) {
    diag.add(path, "expected a number");
    return 0;
  }
  if (v.is_number_integer() && v.get<std::int64_t>() == -1) return -1;
  if (v.is_number_float() && v.get<double>() == -1.0) return -1;
  const std::string text = v.dump();
  if (!text.empty() && text[0] == '-') {
    diag.add(path, "negative value other than -1");
    return 0;
  }
  quantity qn;
  if (!quantity::try_parse(text, qn)) {
    diag.add(path, "malformed number '" + text + "'");
    return 0;
  }
  std::int64_t base = 0;
  if (qn.to_base_into(scale, base) != quantity_status::ok) {
    diag.add(path, "'" + text + "' is not a whole number of base units or out of range");
    return 0;
  }
  std::int64_t out = 0;
  if (__builtin_mul_overflow(base, factor, &out)) {
    diag.add(path, "'" + text + "' out of range");
    return 0;
  }
  return out;
}
}  // namespace detail

/// Loads KAI Queues. Throws parse_error for a malformed document and
/// validation_error with every problem (paths name the queue and field).
[[nodiscard]] inline std::vector<kai_fair_share_queue_spec> load_kai_fair_share_queues(
    const json& doc, resource_registry& reg, const kai_fair_share_json_options& opts = {}) {
  std::vector<kai_fair_share_queue_spec> out;
  diagnostics diag;
  resource_registry scratch = reg;  // strong guarantee for the registry
  for_each_object(doc, [&](const json& obj, const std::string& path) {
    kai_fair_share_queue_spec s;
    s.name = object_name(obj, path);
    const std::string base = s.name;
    const json empty = json::object();
    const json& spec = obj.contains("spec") && obj["spec"].is_object() ? obj["spec"] : empty;
    s.parent = field_or<std::string>(spec, "parentQueue", "", base + ".spec");
    s.priority = field_or<std::int32_t>(spec, "priority", 100, base + ".spec");
    // metadata.creationTimestamp: the last tie-break of KAI's queue order
    if (obj.contains("metadata") && obj["metadata"].is_object() && obj["metadata"].contains("creationTimestamp")) {
      const json& ts = obj["metadata"]["creationTimestamp"];
      if (!ts.is_string() || !detail::parse_rfc3339_utc_ms(ts.get<std::string>(), s.created_ms))
        diag.add(base + ".metadata.creationTimestamp", "expected an RFC 3339 UTC time");
    }
    if (spec.contains("resources") && spec["resources"].is_object()) {
      for (const auto& [key, val] : spec["resources"].items()) {
        std::string rname = key == "gpu" ? opts.gpu_resource : key;
        const resource_id id = scratch.intern(rname);
        const int sc = scratch.scale(id);
        const std::int64_t factor = key == "memory" ? 1000000 : 1;
        const int use_scale = key == "cpu" ? sc - 3 : sc;  // KAI cpu is already millicores
        if (use_scale < 0) {
          diag.add(base + ".spec.resources." + key, "resource scale too coarse for KAI units");
          continue;
        }
        if (!val.is_object()) {
          diag.add(base + ".spec.resources." + key, "expected an object");
          continue;
        }
        kai_fair_share_resource r;
        r.quota = val.contains("quota")
                      ? detail::kai_fair_share_json_amount(val["quota"], use_scale, factor,
                                                       base + ".spec.resources." + key + ".quota", diag)
                      : 0;
        r.over_quota_weight =
            val.contains("overQuotaWeight")
                ? detail::kai_fair_share_json_amount(val["overQuotaWeight"], 0, 1,
                                                 base + ".spec.resources." + key + ".overQuotaWeight", diag)
                : 0;
        if (r.over_quota_weight < 0) {
          diag.add(base + ".spec.resources." + key + ".overQuotaWeight", "negative weight");
          r.over_quota_weight = 0;
        }
        r.limit = val.contains("limit")
                      ? detail::kai_fair_share_json_amount(val["limit"], use_scale, factor,
                                                       base + ".spec.resources." + key + ".limit", diag)
                      : 0;
        s.resources[id] = r;
      }
    }
    out.push_back(std::move(s));
  });
  diag.throw_if_any();
  reg = std::move(scratch);
  return out;
}

/// KAI's whole unit of the resources its Queue names, in base units, for
/// kai_fair_share_options::whole_units in upstream mode: a GPU (the resource
/// `gpu` maps to) is one device, cpu one millicore, memory one byte. Resources
/// the registry does not know are left out (their unit is 1).
[[nodiscard]] inline std::vector<std::pair<resource_id, amount>> kai_fair_share_whole_units(
    const resource_registry& reg, const kai_fair_share_json_options& opts = {}) {
  std::vector<std::pair<resource_id, amount>> out;
  const auto add = [&](std::string_view name, int kai_scale) {
    const auto id = reg.find(name);
    if (!id) return;
    amount u = 1;
    for (int i = kai_scale; i < reg.scale(*id); ++i) u *= 10;
    out.emplace_back(*id, u);
  };
  add(opts.gpu_resource, 0);
  add("cpu", 3);
  add("memory", 0);
  return out;
}

/// Fair share of every queue as JSON: {name: {resource: amount}}.
[[nodiscard]] inline json kai_fair_share_to_json(const kai_fair_share_model& t, const resource_registry& reg) {
  json j = json::object();
  for (std::size_t q = 0; q < t.size(); ++q) {
    json r = json::object();
    for (auto id : t.resources()) r[std::string(reg.name(id))] = t.fair_share(q, id);
    j[t.spec(q).name] = r;
  }
  return j;
}

/// A queue's dominant share (kai_fair_share_model::dominant_share), the ratio
/// KAI's queue order compares, exactly.
[[nodiscard]] inline rational kai_fair_share_dominant_exact(const kai_fair_share_model& t,
                                                            kai_fair_share_model::queue_index q) {
  const auto [n, d] = t.dominant_share(q);
  auto wide = [](detail::uint128 v) {
    big_int r = static_cast<std::uint64_t>(v >> 64);
    r <<= 64;
    r += static_cast<std::uint64_t>(v);
    return r;
  };
  return rational(wide(n), wide(d));
}

/// The model's state, resources named by the model's registry
/// (kai_fair_share_model::rebind_registry), amounts in base units (cpu
/// millicores, memory bytes, GPUs in the registry's unit):
///
///   {"queues": {"team-a": {"parent": "root",
///      "deserved": {"nvidia.com/gpu": 4} (the quota; "unlimited" for -1),
///      "fair_share": {...}, "allocated": {...},
///      "limit": {"nvidia.com/gpu": "unlimited"}, "request": {...}, "usage": {...},
///      "share": "0.750000", "share_exact": "3/4"}},
///    "historical_usage": {"k": "0", "total": {"nvidia.com/gpu": 0}}}
///
/// Every resource the model divides is listed. "request" is the demand the
/// division follows (allocated + pending); "usage" the historical usage given
/// with set_usage and "historical_usage" its factor k and normaliser
/// (set_usage_total): with k 0 or no total, usage takes no part. "share" is
/// the dominant share KAI's queue order compares (6 decimals, rounded half up,
/// and exact); "parent" is absent for a top-level queue.
inline void to_json(json& j, const kai_fair_share_model& t) {
  const resource_registry* reg = t.registry();
  auto bound = [](amount v) { return v == kai_fair_share_unlimited ? json(unlimited_text) : json(v); };
  j = json{{"queues", json::object()}};
  for (kai_fair_share_model::queue_index q = 0; q < t.size(); ++q) {
    json e{{"deserved", json::object()}, {"fair_share", json::object()}, {"allocated", json::object()},
           {"limit", json::object()},    {"request", json::object()},    {"usage", json::object()}};
    if (t.parent(q) != kai_fair_share_model::npos) e["parent"] = t.spec(t.parent(q)).name;
    for (auto id : t.resources()) {
      const std::string n = introspection_name(reg, id);
      e["deserved"][n] = bound(t.quota(q, id));
      e["fair_share"][n] = t.fair_share(q, id);
      e["allocated"][n] = t.allocated(q, id);
      e["limit"][n] = bound(t.limit(q, id));
      e["request"][n] = t.request(q, id);
      e["usage"][n] = t.usage(q, id);
    }
    const rational share = kai_fair_share_dominant_exact(t, q);
    e["share"] = decimal_string(share, 6);
    e["share_exact"] = fraction_string(share);
    j["queues"][t.spec(q).name] = std::move(e);
  }
  const auto& o = t.options();
  const rational k = o.usage_k_num <= 0 ? rational(0) : rational(big_int(o.usage_k_num), big_int(o.usage_k_den));
  json total = json::object();
  for (auto id : t.resources()) total[introspection_name(reg, id)] = t.usage_total(id);
  j["historical_usage"] = json{{"k", fraction_string(k)}, {"total", std::move(total)}};
}

/// The state of the model behind a policy adapter (see to_json(json&, const kai_fair_share_model&)).
inline void to_json(json& j, const kai_fair_share_policy& p) {
  to_json(j, p.tree());
}

}  // namespace quota
