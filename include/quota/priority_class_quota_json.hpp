// SPDX-License-Identifier: Apache-2.0
// quota/priority_class_quota_json.hpp — per-priority-class quota from JSON.
//
//   {"tenant": "queue",                                     // queue | namespace | user
//    "quotas": {"team-a": {"high": {"max": {"nvidia.com/gpu": 8}, "min": {"nvidia.com/gpu": 2}}},
//               "*":      {"low":  {"max": {"nvidia.com/gpu": 4}}}}}
//
// Every problem is listed in one config_error (validation 201), each at the
// path of its item (`quotas.team-a.high.max`, under `path`); nothing is built then.
// Docs: docs/extra-policies.md
#pragma once

#include <string>

#include <quota/detail/config_document.hpp>
#include <quota/json.hpp>
#include <quota/priority_class_quota.hpp>

namespace quota {

/// Reads the quota (see the file comment); `reg` must outlive the result.
[[nodiscard]] inline priority_class_quota_policy load_priority_class_quota(const json& j, resource_registry& reg,
                                                                           const std::string& path = "") {
  detail::config_document doc(j, reg, path);
  doc.unknown_top_keys({"tenant", "quotas"});
  auto key = priority_class_quota_policy::tenant_key::queue;
  if (j.contains("tenant")) {
    const auto& t = j["tenant"];
    if (t == "queue")
      key = priority_class_quota_policy::tenant_key::queue;
    else if (t == "namespace")
      key = priority_class_quota_policy::tenant_key::ns;
    else if (t == "user")
      key = priority_class_quota_policy::tenant_key::user;
    else
      doc.bad(detail::join_path(path, "tenant"), "expected queue | namespace | user, got " + t.dump());
  }
  struct item {
    std::string tenant, cls;
    resource_vector min;
    limit_vector max;
    std::string path;
  };
  std::vector<item> items;
  const std::string qp = detail::join_path(path, "quotas");
  if (!j.contains("quotas") || !j["quotas"].is_object()) {
    doc.bad(qp, "expected an object of tenant: {class: {min, max}}");
  } else {
    for (auto t = j["quotas"].begin(); t != j["quotas"].end(); ++t) {
      const std::string tp = detail::join_path(qp, t.key());
      if (!t.value().is_object()) {
        doc.bad(tp, "expected an object of class: {min, max}");
        continue;
      }
      for (auto c = t.value().begin(); c != t.value().end(); ++c) {
        const std::string cp = detail::join_path(tp, c.key());
        if (!c.value().is_object()) {
          doc.bad(cp, "expected {min, max}");
          continue;
        }
        doc.unknown_keys(c.value(), cp, {"min", "max"});
        diagnostics diag;
        item it{t.key(), c.key(), {}, {}, cp};
        if (c.value().contains("min"))
          it.min = parse_resource_list(c.value()["min"], reg, detail::join_path(cp, "min"), &diag);
        if (c.value().contains("max"))
          it.max = parse_resource_list<limit_vector>(c.value()["max"], reg, detail::join_path(cp, "max"), &diag);
        doc.bad(diag);
        if (diag.empty()) items.push_back(std::move(it));
      }
    }
  }
  priority_class_quota_policy pq(key, &reg);
  for (auto& it : items) {
    try {
      pq.set(it.tenant, it.cls, std::move(it.min), std::move(it.max));
    } catch (const config_error& e) {
      for (const auto& d : e.problems()) doc.bad(it.path, d.message);
    }
  }
  doc.throw_if_any();
  return pq;
}

/// {"team-a/high": {"used": {...}, "min": {...}, "max": {...}}} in base units,
/// resources named by the policy's registry (rebind_registry). "max" shows
/// each resource of used, min and max: its cap, or "unlimited" where the quota
/// caps nothing.
inline void to_json(json& j, const priority_class_quota_policy& pq) {
  j = json::object();
  const resource_registry* reg = pq.registry();
  pq.for_each_pair(
      [&](std::string_view t, std::string_view c, const resource_vector& used, const priority_class_limits* lim) {
        json e{{"used", json::object()}, {"min", json::object()}, {"max", json::object()}};
        for (const auto& r : used) {
          e["used"][introspection_name(reg, r.id)] = r.value;
          e["max"][introspection_name(reg, r.id)] = unlimited_text;
        }
        if (lim) {
          for (const auto& r : lim->min) {
            e["min"][introspection_name(reg, r.id)] = r.value;
            e["max"][introspection_name(reg, r.id)] = unlimited_text;
          }
          for (const auto& r : lim->max) e["max"][introspection_name(reg, r.id)] = r.value;
        }
        j[std::string(t) + "/" + std::string(c)] = std::move(e);
      });
}

}  // namespace quota
