// SPDX-License-Identifier: Apache-2.0
// quota/sharing_pools_json.hpp — sharing pools from JSON, and introspection.
//
//   {"pools": [{"name": "research", "lendAcross": true, "borrowAcross": true,
//               "quotas": [{"name": "nlp", "namespaces": ["nlp"],
//                           "min": {"nvidia.com/gpu": 4}, "max": {"nvidia.com/gpu": 8}}]}]}
//
// "namespaces" defaults to [name]. Every problem is listed in one
// config_error (validation 201) naming the offending item; nothing is built then.
// Docs: docs/extra-policies.md
#pragma once

#include <string>

#include <quota/detail/config_document.hpp>
#include <quota/json.hpp>
#include <quota/sharing_pools.hpp>

namespace quota {

/// Reads the pools (see the file comment); `reg` must outlive the result.
[[nodiscard]] inline sharing_pools_policy load_sharing_pools(const json& j, resource_registry& reg,
                                                             const std::string& path = "") {
  detail::config_document doc(j, reg, path);
  doc.unknown_top_keys({"pools"});
  std::vector<sharing_pool_spec> pools;
  const std::string pp = detail::join_path(path, "pools");
  if (!j.contains("pools") || !j["pools"].is_array()) {
    doc.bad(pp, "expected an array of pools");
  } else {
    for (std::size_t i = 0; i < j["pools"].size(); ++i) {
      const auto& pj = j["pools"][i];
      const std::string ip = detail::index_path(pp, i);
      if (!pj.is_object()) {
        doc.bad(ip, "expected an object");
        continue;
      }
      sharing_pool_spec ps;
      for (auto it = pj.begin(); it != pj.end(); ++it) {
        const std::string k = it.key();
        const auto& v = it.value();
        if (k == "name" && v.is_string())
          ps.name = v.get<std::string>();
        else if (k == "lendAcross" && v.is_boolean())
          ps.lend_across = v.get<bool>();
        else if (k == "borrowAcross" && v.is_boolean())
          ps.borrow_across = v.get<bool>();
        else if (k != "quotas")
          doc.bad(detail::join_path(ip, k),
                  "unknown field or wrong type (name: string, lendAcross, borrowAcross: bool, "
                  "quotas: array)");
      }
      if (!pj.contains("quotas") || !pj["quotas"].is_array()) {
        doc.bad(detail::join_path(ip, "quotas"), "expected an array of quotas");
        continue;
      }
      for (std::size_t k = 0; k < pj["quotas"].size(); ++k) {
        const auto& qj = pj["quotas"][k];
        const std::string qp = detail::index_path(detail::join_path(ip, "quotas"), k);
        if (!qj.is_object() || !qj.contains("name") || !qj["name"].is_string()) {
          doc.bad(qp, "expected an object with a name");
          continue;
        }
        pool_quota_spec q;
        q.name = qj["name"].get<std::string>();
        doc.unknown_keys(qj, qp, {"name", "namespaces", "min", "max"});
        if (qj.contains("namespaces")) {
          if (!qj["namespaces"].is_array())
            doc.bad(detail::join_path(qp, "namespaces"), "expected an array of names");
          else
            for (const auto& n : qj["namespaces"]) {
              if (n.is_string())
                q.namespaces.push_back(n.get<std::string>());
              else
                doc.bad(detail::join_path(qp, "namespaces"), "expected strings");
            }
        } else {
          q.namespaces.push_back(q.name);
        }
        diagnostics diag;
        if (qj.contains("min")) q.min = parse_resource_list(qj["min"], reg, detail::join_path(qp, "min"), &diag);
        if (qj.contains("max"))
          q.max = parse_resource_list<limit_vector>(qj["max"], reg, detail::join_path(qp, "max"), &diag);
        doc.bad(diag);
        ps.quotas.push_back(std::move(q));
      }
      pools.push_back(std::move(ps));
    }
  }
  doc.throw_if_any();
  try {
    return sharing_pools_policy(std::move(pools), &reg);
  } catch (const config_error& e) {  // the pools' rules: their paths, under this document's
    for (const auto& d : e.problems()) doc.bad(detail::join_path(path, d.path), d.message);
    doc.reject();
  }
}

/// {"pools": {name: {"capacity", "used"}}, "quotas": {name: {"used"}},
///  "jobs": {id: {"quota", "pool", "in_quota", "in_pool", "across": {pool: {...}}}}} in base units,
/// resources named by the policy's registry (rebind_registry).
inline void to_json(json& j, const sharing_pools_policy& sp) {
  auto vec = [reg = sp.registry()](const resource_vector& v) {
    json o = json::object();
    for (const auto& e : v) o[introspection_name(reg, e.id)] = e.value;
    return o;
  };
  j = json{{"pools", json::object()}, {"quotas", json::object()}, {"jobs", json::object()}};
  for (std::size_t p = 0; p < sp.pool_count(); ++p)
    j["pools"][std::string(sp.pool_name(p))] =
        json{{"capacity", vec(sp.pool_capacity(p))}, {"used", vec(sp.pool_used(p))}};
  for (std::size_t q = 0; q < sp.quota_count(); ++q)
    j["quotas"][sp.quota_spec(q).name] = json{{"used", vec(sp.quota_used(q))}};
  sp.for_each_job([&](std::string_view id, const borrow_plan& p) {
    json a = json::object();
    for (const auto& [pool, v] : p.across) a[pool] = vec(v);
    j["jobs"][std::string(id)] = json{{"quota", p.quota},
                                      {"pool", p.pool},
                                      {"in_quota", vec(p.in_quota)},
                                      {"in_pool", vec(p.in_pool)},
                                      {"across", a}};
  });
}

}  // namespace quota
