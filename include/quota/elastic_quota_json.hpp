// SPDX-License-Identifier: Apache-2.0
// quota/elastic_quota_json.hpp — loads ElasticQuota, CompositeElasticQuota
// and Pod objects as `kubectl get -o json` prints them (a single object, a
// List or an array). Every problem of a document is collected and thrown
// together as one validation_error naming the object and field. to_json is
// the model's introspection.
// Docs: docs/elastic-quota.md
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <quota/detail/rfc3339.hpp>
#include <quota/elastic_quota.hpp>
#include <quota/gpu_memory.hpp>
#include <quota/json.hpp>
#include <quota/pod_request.hpp>

namespace quota {

namespace detail {

/// Milliseconds since the epoch of an RFC 3339 UTC time "YYYY-MM-DDThh:mm:ssZ"
/// (optional fraction), or -1 when malformed.
inline resource_vector elastic_container_requests(const json& c, resource_registry& reg, const std::string& path,
                                                  diagnostics& diag) {
  if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) return {};
  const auto& r = c["resources"];
  resource_vector req;
  if (r.contains("requests")) req = parse_resource_list(r["requests"], reg, path + ".resources.requests", &diag);
  // Kubernetes defaults a missing request to its limit.
  if (r.contains("limits")) {
    const auto lim = parse_resource_list(r["limits"], reg, path + ".resources.limits", &diag);
    for (const auto& e : lim)
      if (!req.has(e.id)) req.set(e.id, e.value);
  }
  return req;
}

}  // namespace detail

/// ElasticQuota and CompositeElasticQuota objects of a document; other kinds
/// are skipped. Omitted max = no max (nullopt). A CompositeElasticQuota
/// without `spec.namespaces` gets no namespace (elastic_quota_model rejects it
/// by default and skips it in upstream mode); an empty list is rejected, as
/// the CRD requires at least one namespace.
[[nodiscard]] inline std::vector<elastic_quota_spec> load_elastic_quotas(const json& doc, resource_registry& reg) {
  diagnostics diag;
  std::vector<elastic_quota_spec> out;
  resource_registry saved = reg;  // restored when the document is rejected (strong guarantee)
  for_each_object(doc, [&](const json& o, const std::string& path) {
    const std::string kind =
        o.is_object() && o.contains("kind") && o["kind"].is_string() ? o["kind"].get<std::string>() : "";
    if (kind != "ElasticQuota" && kind != "CompositeElasticQuota") return;
    elastic_quota_spec s;
    s.composite = kind == "CompositeElasticQuota";
    try {
      s.name = object_name(o, path);
    } catch (const error& e) {
      diag.add(path + ".metadata.name", e.what());
      return;
    }
    s.object_namespace = object_namespace(o);
    const std::string base = kind + " " + s.object_namespace + "/" + s.name;
    const json spec = o.contains("spec") && o["spec"].is_object() ? o["spec"] : json::object();
    if (spec.contains("min")) s.min = parse_resource_list(spec["min"], reg, base + ".spec.min", &diag);
    if (spec.contains("max")) s.max = parse_resource_list<limit_vector>(spec["max"], reg, base + ".spec.max", &diag);
    if (s.composite) {
      if (!spec.contains("namespaces")) {
        // no namespace: the quota set decides
      } else if (!spec["namespaces"].is_array()) {
        diag.add(base + ".spec.namespaces", "not a list");
      } else if (spec["namespaces"].empty()) {
        diag.add(base + ".spec.namespaces", "empty list (the CRD requires at least one namespace)");
      } else {
        for (std::size_t i = 0; i < spec["namespaces"].size(); ++i) {
          const auto& n = spec["namespaces"][i];
          if (n.is_string())
            s.namespaces.push_back(n.get<std::string>());
          else
            diag.add(base + ".spec.namespaces[" + std::to_string(i) + "]", "not a string");
        }
      }
    } else {
      s.namespaces = {s.object_namespace};
    }
    out.push_back(std::move(s));
  });
  if (!diag.empty()) reg = std::move(saved);
  diag.throw_if_any();
  return out;
}

/// A pod read from JSON: the model's view plus its phase.
struct elastic_loaded_pod {
  elastic_pod pod;
  std::string phase;
  [[nodiscard]] bool running() const noexcept { return phase == "Running"; }
};

/// Pods of a document with their effective request (containers, init
/// containers, overhead; requests default to limits) and nos's gpu-memory.
/// `upstream`: as nos computes a pod's request, without `spec.overhead` (nos
/// drops it) and with nos's matching of MIG resource names.
[[nodiscard]] inline std::vector<elastic_loaded_pod> load_elastic_pods(const json& doc, resource_registry& reg,
                                                                       std::int64_t gb_per_gpu = default_gb_per_gpu,
                                                                       bool upstream = false) {
  diagnostics diag;
  std::vector<elastic_loaded_pod> out;
  resource_registry saved = reg;  // restored when the document is rejected (strong guarantee)
  for_each_object(doc, [&](const json& o, const std::string& path) {
    if (o.is_object() && o.contains("kind") && o["kind"] != "Pod") return;
    elastic_loaded_pod lp;
    std::string name;
    try {
      name = object_name(o, path);
    } catch (const error& e) {
      diag.add(path + ".metadata.name", e.what());
      return;
    }
    lp.pod.ns = object_namespace(o);
    lp.pod.name = lp.pod.ns + "/" + name;
    const std::string base = "Pod " + lp.pod.name;
    const json& md = o["metadata"];
    if (md.contains("creationTimestamp") && md["creationTimestamp"].is_string()) {
      if (!detail::parse_rfc3339_utc_ms(md["creationTimestamp"].get<std::string>(), lp.pod.created_ms))
        diag.add(base + ".metadata.creationTimestamp", "not an RFC 3339 UTC time");
    }
    const json spec = o.contains("spec") && o["spec"].is_object() ? o["spec"] : json::object();
    std::vector<resource_vector> cs, ics;
    auto read = [&](const char* key, std::vector<resource_vector>& v) {
      if (!spec.contains(key)) return;
      if (!spec[key].is_array()) {
        diag.add(base + ".spec." + key, "not a list");
        return;
      }
      for (std::size_t i = 0; i < spec[key].size(); ++i)
        v.push_back(detail::elastic_container_requests(spec[key][i], reg,
                                                       base + ".spec." + key + "[" + std::to_string(i) + "]", diag));
    };
    read("containers", cs);
    read("initContainers", ics);
    resource_vector overhead;
    if (spec.contains("overhead"))
      overhead = parse_resource_list(spec["overhead"], reg, base + ".spec.overhead", &diag);
    if (spec.contains("priority")) {
      const auto& pr = spec["priority"];
      if (pr.is_number_integer() &&
          !(pr.is_number_unsigned() && pr.get<std::uint64_t>() > static_cast<std::uint64_t>(INT32_MAX)) &&
          pr.get<std::int64_t>() >= INT32_MIN && pr.get<std::int64_t>() <= INT32_MAX)
        lp.pod.priority = pr.get<std::int32_t>();
      else
        diag.add(base + ".spec.priority", "not a 32-bit integer");
    }
    try {
      lp.pod.request = pod_request(cs, ics, upstream ? resource_vector{} : overhead);
      add_gpu_memory(lp.pod.request, reg, gb_per_gpu, upstream ? mig_name_match::nos : mig_name_match::exact);
    } catch (const error& e) {
      diag.add(base + ".spec", e.what());
    }
    if (o.contains("status") && o["status"].is_object() && o["status"].contains("phase") &&
        o["status"]["phase"].is_string())
      lp.phase = o["status"]["phase"].get<std::string>();
    out.push_back(std::move(lp));
  });
  if (!diag.empty()) reg = std::move(saved);
  diag.throw_if_any();
  return out;
}

/// The over-quota pool of resource `r`: the sum over quotas of weight x
/// max(0, min - used), the unused guaranteed quota nos shares out among the
/// quotas in proportion to their min.
[[nodiscard]] inline amount elastic_over_quota_pool(const elastic_quota_model& s, resource_id r) {
  amount pool = 0;
  for (std::uint32_t k = 0; k < s.size(); ++k) {
    const amount mk = s.spec(k).min.get(r), uk = s.used(k).get(r);
    if (mk > uk) pool = detail::checked_add(pool, detail::checked_mul(mk - uk, amount{s.weight(k)}));
  }
  return pool;
}

/// The model's state, resources named by the model's registry
/// (elastic_quota_model::rebind_registry), amounts in base units:
///
///   {"quotas": {"team-a": {"min": {"nvidia.com/gpu": 2}, "max": {"nvidia.com/gpu": 4, "cpu": "unlimited"},
///      "used": {...}, "status": {"used": {"nvidia.com/gpu": 0}},
///      "over_quota_used": {...}, "guaranteed_over_quota": {...}, "weight": 1}},
///    "over_quota_pool": {"nvidia.com/gpu": 2},
///    "labels": {"pod-1": "in-quota" | "over-quota"}}
///
/// "used" is everything the quota's running pods use; "status.used" is what
/// nos writes to the ElasticQuota's status.used: the resources of min only,
/// zeros kept. "max" shows each resource of min, used and spec.max: the max,
/// or "unlimited" where there is none (no spec.max, or one that does not list
/// the resource; with a spec.max and the option missing = upstream, cpu and
/// memory it does not list are 0, as nos compares them). over_quota_used
/// (used above min) and guaranteed_over_quota (the quota's share of the pool)
/// are per resource of min; over_quota_pool is per resource some quota's min
/// lists (elastic_over_quota_pool). "weight": how often the quota counts in the
/// cluster sums.
inline void to_json(json& j, const elastic_quota_model& s) {
  const resource_registry* reg = s.registry();
  j = json{{"quotas", json::object()}, {"over_quota_pool", json::object()}, {"labels", json::object()}};
  for (std::uint32_t q = 0; q < s.size(); ++q) {
    const auto& spec = s.spec(q);
    json e{{"min", json::object()},
           {"used", json::object()},
           {"status", {{"used", json::object()}}},
           {"over_quota_used", json::object()},
           {"guaranteed_over_quota", json::object()},
           {"weight", s.weight(q)}};
    for (const auto& r : spec.min) {
      const std::string n = introspection_name(reg, r.id);
      e["min"][n] = r.value;
      e["status"]["used"][n] = s.used(q).get(r.id);
      e["over_quota_used"][n] = s.over_quota_used(q, r.id);
      e["guaranteed_over_quota"][n] = s.guaranteed_over_quota(q, r.id);
      j["over_quota_pool"][n] = elastic_over_quota_pool(s, r.id);
    }
    // max: each resource of min, used and max; what a present max does not
    // list is unlimited, or 0 for cpu and memory with missing = upstream
    json mx = json::object();
    auto unlisted = [&](resource_id id) {
      return spec.max && s.missing_max_is_zero(id) ? json(0) : json(unlimited_text);
    };
    for (const auto& r : spec.min) mx[introspection_name(reg, r.id)] = unlisted(r.id);
    for (const auto& r : s.used(q)) {
      e["used"][introspection_name(reg, r.id)] = r.value;
      mx[introspection_name(reg, r.id)] = unlisted(r.id);
    }
    if (spec.max)
      for (const auto& r : *spec.max) mx[introspection_name(reg, r.id)] = r.value;
    e["max"] = std::move(mx);
    j["quotas"][spec.name] = std::move(e);
    for (const auto* p : s.running_pods(q)) j["labels"][p->name] = std::string(to_string(s.label(p->name)));
  }
}

/// The state of the model behind a policy adapter (see to_json(json&, const elastic_quota_model&)).
inline void to_json(json& j, const elastic_quota_policy& p) {
  to_json(j, p.model());
}

}  // namespace quota
