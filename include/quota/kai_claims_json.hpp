// SPDX-License-Identifier: Apache-2.0
// quota/kai_claims_json.hpp — loaders of DRA objects (ResourceClaims, DeviceClasses, Pods)
// for quota/kai_claims.hpp.
// Docs: docs/kai-claims.md
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <quota/detail/rfc3339.hpp>
#include <quota/json.hpp>
#include <quota/kai_claims.hpp>

namespace quota {

/// A claim object as read, with the pods named in status.reservedFor.
struct claim_object {
  claim_spec spec;
  std::vector<std::string> reserved_for;
};

/// A pod that uses claims.
struct claim_pod_object {
  std::string ns = "default";
  std::string name;
  std::string queue;
  /// Claim keys "namespace/name", in spec.resourceClaims order.
  std::vector<std::string> claims;
  bool preemptible = true;
  bool min_runtime_protected = false;
  std::int64_t created_ms = 0;

  /// The claim_pod view (valid while this object lives).
  [[nodiscard]] claim_pod as_pod(claim_queue_id q) const {
    return {.id = name,
            .ns = ns,
            .queue = q,
            .queue_name = queue,
            .preemptible = preemptible,
            .min_runtime_protected = min_runtime_protected,
            .created_ms = created_ms};
  }
};

namespace detail {

[[nodiscard]] inline const json* claims_field(const json& o, const char* key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}
/// The one node an allocation's nodeSelector names (a term matching field
/// metadata.name or label kubernetes.io/hostname In exactly one value), else
/// "" (no selector, several nodes, or another shape). Never throws.
[[nodiscard]] inline std::string claims_allocation_node(const json& alloc) {
  const json* sel = claims_field(alloc, "nodeSelector");
  const json* terms = sel ? claims_field(*sel, "nodeSelectorTerms") : nullptr;
  if (!terms || !terms->is_array() || terms->size() != 1) return {};
  const json& term = (*terms)[0];
  for (const auto& [list, key] : {std::pair<const char*, const char*>{"matchFields", "metadata.name"},
                                  std::pair<const char*, const char*>{"matchExpressions", "kubernetes.io/hostname"}}) {
    const json* reqs = claims_field(term, list);
    if (!reqs || !reqs->is_array()) continue;
    for (const json& r : *reqs) {
      if (!r.is_object()) continue;
      const json* k = claims_field(r, "key");
      const json* op = claims_field(r, "operator");
      const json* vals = claims_field(r, "values");
      if (k && k->is_string() && *k == key && op && op->is_string() && *op == "In" && vals && vals->is_array() &&
          vals->size() == 1 && (*vals)[0].is_string())
        return (*vals)[0].get<std::string>();
    }
  }
  return {};
}
/// A string field, or `def` when absent, null or not a string (never throws json::type_error).
[[nodiscard]] inline std::string claims_str(const json& o, const char* key, const char* def = "") {
  const json* v = claims_field(o, key);
  return v && v->is_string() ? v->get<std::string>() : std::string(def);
}
[[nodiscard]] inline std::string claims_map_value(const json& obj, const char* map, std::string_view key) {
  const json* md = claims_field(obj, "metadata");
  const json* m = md ? claims_field(*md, map) : nullptr;
  if (!m || !m->is_object()) return {};
  auto it = m->find(std::string(key));
  return it != m->end() && it->is_string() ? it->get<std::string>() : std::string{};
}
// One request (or firstAvailable alternative) into a spec line.
inline void claims_request_line(const json& r, const std::string& path, claim_spec& s, bool alternative,
                                std::vector<std::pair<std::string, std::string>>& classes, const std::string& name,
                                diagnostics& diag, kai_claims_mode model_mode) {
  const bool kai = model_mode == kai_claims_mode::upstream;
  claim_device dev;
  dev.alternative = alternative;
  const json* cls = claims_field(r, "deviceClassName");
  if (!cls || !cls->is_string() || cls->get_ref<const std::string&>().empty()) {
    diag.add(path + ".deviceClassName", "missing or not a string");
    return;
  }
  dev.device_class = cls->get<std::string>();
  std::string mode = "ExactCount";
  if (const json* m = claims_field(r, "allocationMode")) {
    if (!m->is_string())
      diag.add(path + ".allocationMode", "not a string");
    else
      mode = m->get<std::string>();
  }
  if (mode == "All") {
    dev.all = true;
    dev.count = 0;
  } else if (mode == "ExactCount") {
    dev.count = 1;
    if (const json* c = claims_field(r, "count")) {
      // upstream reads any integer: KAI counts 1 for a count not above 0
      if (!c->is_number_integer() || (!kai && c->get<std::int64_t>() < 1))
        diag.add(path + ".count", kai ? "must be an integer" : "must be an integer >= 1");
      else
        dev.count = kai ? std::max<std::int64_t>(0, c->get<std::int64_t>()) : c->get<std::int64_t>();
    }
  } else if (kai) {
    dev.unknown_mode = true;  // KAI skips the request: it counts 0
    dev.count = 0;
  } else {
    diag.add(path + ".allocationMode", "unknown allocation mode '" + mode + "' (ExactCount or All)");
  }
  classes.emplace_back(name, dev.device_class);
  s.requests.push_back(std::move(dev));
}

}  // namespace detail

/// One ResourceClaim. Throws validation_error listing every problem (paths
/// start with `path`), parse_error for a missing metadata.name.
/// `mode`: upstream reads requests as KAI does (an unknown allocationMode is
/// skipped, a count not above 0 counts 1) instead of rejecting them.
[[nodiscard]] inline claim_object parse_resource_claim(const json& obj, const std::string& path,
                                                       std::string_view queue_label_key = "kai.scheduler/queue",
                                                       kai_claims_mode mode = kai_claims_mode::owning_queue) {
  using detail::claims_field;
  claim_object out;
  claim_spec& s = out.spec;
  s.name = object_name(obj, path);
  s.ns = object_namespace(obj);
  const std::string p = path.empty() ? "ResourceClaim " + s.ns + "/" + s.name : path;
  diagnostics diag;
  if (const json* kind = claims_field(obj, "kind"); kind && (!kind->is_string() || *kind != "ResourceClaim"))
    diag.add(p + ".kind", "expected ResourceClaim");
  s.queue_label = detail::claims_map_value(obj, "labels", queue_label_key);
  s.per_pod = !detail::claims_map_value(obj, "annotations", "resource.kubernetes.io/pod-claim-name").empty();
  if (const json* md = claims_field(obj, "metadata"))
    if (const json* owners = claims_field(*md, "ownerReferences"); owners && owners->is_array())
      for (const auto& o : *owners)
        if (detail::claims_str(o, "kind") == "Pod" && o.is_object() && o.contains("controller") &&
            o["controller"].is_boolean() && o["controller"].get<bool>())
          s.per_pod = true;

  const resource_registry scratch;         // capacities are counted in their base unit (scale 0)
  const resource_id id = resources::pods;  // any scale-0 resource
  // request name -> device class (firstAvailable: "request/subrequest")
  std::vector<std::pair<std::string, std::string>> classes;
  const json* spec = claims_field(obj, "spec");
  const json* devices = spec ? claims_field(*spec, "devices") : nullptr;
  const json* requests = devices ? claims_field(*devices, "requests") : nullptr;
  if (!requests || !requests->is_array()) {
    diag.add(p + ".spec.devices.requests", "missing or not an array");
  } else {
    for (std::size_t i = 0; i < requests->size(); ++i) {
      const json& r = (*requests)[i];
      const std::string rp = detail::index_path(p + ".spec.devices.requests", i);
      const std::string rname = detail::claims_str(r, "name");
      if (rname.empty()) diag.add(rp + ".name", "missing request name (or not a string)");
      const json* exactly = claims_field(r, "exactly");
      const json* first = claims_field(r, "firstAvailable");
      if (exactly && first) {
        diag.add(rp, "both exactly and firstAvailable are set");
      } else if (exactly) {
        detail::claims_request_line(*exactly, rp + ".exactly", s, false, classes, rname, diag, mode);
      } else if (first && first->is_array() && !first->empty()) {
        for (std::size_t k = 0; k < first->size(); ++k) {
          const json& sub = (*first)[k];
          const std::string sp = detail::index_path(rp + ".firstAvailable", k);
          const std::string sname = detail::claims_str(sub, "name");
          if (sname.empty()) diag.add(sp + ".name", "missing subrequest name (or not a string)");
          detail::claims_request_line(sub, sp, s, true, classes, rname + "/" + sname, diag, mode);
        }
      } else {
        diag.add(rp, "needs exactly or a non-empty firstAvailable");
      }
    }
  }

  const json* status = claims_field(obj, "status");
  const json* alloc = status ? claims_field(*status, "allocation") : nullptr;
  if (alloc) {
    s.allocated = true;
    s.node = detail::claims_allocation_node(*alloc);
    const json* adev = claims_field(*alloc, "devices");
    const json* results = adev ? claims_field(*adev, "results") : nullptr;
    if (results && !results->is_array()) diag.add(p + ".status.allocation.devices.results", "not an array");
    if (results && results->is_array())
      for (std::size_t i = 0; i < results->size(); ++i) {
        const json& r = (*results)[i];
        const std::string rp = detail::index_path(p + ".status.allocation.devices.results", i);
        if (!r.is_object()) {
          diag.add(rp, "not an object");
          continue;
        }
        for (const char* f : {"request", "driver", "pool", "device"})
          if (!r.contains(f) || !r[f].is_string()) diag.add(rp + "." + f, "missing or not a string");
        if (!r.contains("request") || !r["request"].is_string()) continue;
        const std::string req = r["request"].get<std::string>();
        std::string cls;
        for (const auto& [n, c] : classes)
          if (n == req) cls = c;
        if (cls.empty()) {
          diag.add(rp + ".request", "names no request of spec.devices.requests ('" + req + "')");
          continue;
        }
        claim_device dev{cls, 1, false, false, {}};
        if (const json* cc = claims_field(r, "consumedCapacity")) {
          if (!cc->is_object()) {
            diag.add(rp + ".consumedCapacity", "not an object");
          } else {
            for (auto it = cc->begin(); it != cc->end(); ++it) {
              const amount v =
                  parse_resource_amount(it.value(), id, scratch, rp + ".consumedCapacity." + it.key(), &diag);
              dev.capacity.emplace_back(it.key(), v);
            }
          }
        }
        s.allocation.push_back(std::move(dev));
      }
  }
  if (status)
    if (const json* rf = claims_field(*status, "reservedFor")) {
      if (!rf->is_array()) {
        diag.add(p + ".status.reservedFor", "not an array");
      } else {
        for (std::size_t i = 0; i < rf->size(); ++i) {
          const json& r = (*rf)[i];
          if (!r.is_object() || !r.contains("name") || !r["name"].is_string())
            diag.add(detail::index_path(p + ".status.reservedFor", i) + ".name", "missing or not a string");
          else if (detail::claims_str(r, "resource", "pods") == "pods")
            out.reserved_for.push_back(r["name"].get<std::string>());
        }
        // every entry counts toward the consumer limit, a pod or not
        s.reserved_entries =
            static_cast<std::uint32_t>(std::min<std::size_t>(rf->size(), std::numeric_limits<std::uint32_t>::max()));
      }
    }
  diag.throw_if_any();
  return out;
}

/// Loads every ResourceClaim of a document (object, List or array) into the
/// model, all or nothing. Returns the objects (with their reservedFor).
inline std::vector<claim_object> load_resource_claims(kai_claims_model& m, const json& doc) {
  std::vector<claim_object> objs;
  diagnostics diag;
  std::unordered_set<std::string> seen;
  for_each_object(doc, [&](const json& o, const std::string& path) {
    try {
      auto c =
          parse_resource_claim(o, path.empty() ? std::string() : path, m.config().queue_label_key, m.config().mode);
      const std::string key = c.spec.ns + "/" + c.spec.name;
      if (!seen.insert(key).second || m.find_claim(key) != claim_none)
        diag.add(path.empty() ? "ResourceClaim " + key : path, "claim '" + key + "' appears twice");
      objs.push_back(std::move(c));
    } catch (const validation_error& e) {
      for (const auto& pr : e.problems()) diag.add(pr.path, pr.message);
    } catch (const parse_error& e) {
      diag.add(path, e.what());
    }
  });
  diag.throw_if_any();
  // add_claim validates the rest (it cannot fail for duplicates now); a later
  // failure cannot happen for well-formed specs except from memory exhaustion.
  kai_claims_model copy = m;
  for (const auto& o : objs) (void)copy.add_claim(o.spec);
  m = std::move(copy);
  return objs;
}

/// DeviceClasses: the accounting flag of each class that carries `flag_key`
/// as an annotation or a label ("true"/"false"). Returns the flagged count.
inline std::size_t load_device_classes(kai_claims_model& m, const json& doc,
                                       std::string_view flag_key = "quota.dev/accounted") {
  std::vector<std::pair<std::string, bool>> flags;
  diagnostics diag;
  for_each_object(doc, [&](const json& o, const std::string& path) {
    std::string name;
    try {
      name = object_name(o, path);
    } catch (const parse_error& e) {
      diag.add(path, e.what());
      return;
    }
    const std::string p = path.empty() ? "DeviceClass " + name : path;
    if (const json* kind = detail::claims_field(o, "kind"); kind && (!kind->is_string() || *kind != "DeviceClass"))
      diag.add(p + ".kind", "expected DeviceClass");
    std::string v = detail::claims_map_value(o, "annotations", flag_key);
    if (v.empty()) v = detail::claims_map_value(o, "labels", flag_key);
    if (v.empty()) return;
    if (v != "true" && v != "false")
      diag.add(p + ".metadata." + std::string(flag_key), "expected \"true\" or \"false\", got '" + v + "'");
    else
      flags.emplace_back(name, v == "true");
  });
  diag.throw_if_any();
  kai_claims_model copy = m;
  for (const auto& [n, f] : flags) copy.set_class_accounted(n, f);
  m = std::move(copy);
  return flags.size();
}

/// Pods that use claims. Every named claim must be loaded in `m`: a missing
/// claim is a problem of the validation_error naming the pod and the claim
/// (a pod names claims of its own namespace only, like Kubernetes).
[[nodiscard]] inline std::vector<claim_pod_object> load_claim_pods(const kai_claims_model& m, const json& doc) {
  using detail::claims_field;
  std::vector<claim_pod_object> out;
  diagnostics diag;
  const std::string& qkey = m.config().queue_label_key;
  for_each_object(doc, [&](const json& o, const std::string& path) {
    claim_pod_object pod;
    try {
      pod.name = object_name(o, path);
    } catch (const parse_error& e) {
      diag.add(path, e.what());
      return;
    }
    pod.ns = object_namespace(o);
    const std::string p = path.empty() ? "Pod " + pod.ns + "/" + pod.name : path;
    pod.queue = detail::claims_map_value(o, "labels", qkey);
    if (pod.queue.empty()) diag.add(p + ".metadata.labels." + qkey, "the pod has no queue label");
    const std::string pre = detail::claims_map_value(o, "labels", "kai.scheduler/preemptibility");
    if (pre == "non-preemptible")
      pod.preemptible = false;
    else if (!pre.empty() && pre != "preemptible")
      diag.add(p + ".metadata.labels.kai.scheduler/preemptibility", "unknown value '" + pre + "'");
    pod.min_runtime_protected = detail::claims_map_value(o, "annotations", "quota.dev/min-runtime-protected") == "true";
    if (const json* md = claims_field(o, "metadata"))
      if (const json* ts = claims_field(*md, "creationTimestamp")) {
        if (!ts->is_string() || !detail::parse_rfc3339_utc_ms(ts->get<std::string>(), pod.created_ms))
          diag.add(p + ".metadata.creationTimestamp", "expected an RFC 3339 UTC time");
      }
    const json* spec = claims_field(o, "spec");
    const json* rcs = spec ? claims_field(*spec, "resourceClaims") : nullptr;
    const json* status = claims_field(o, "status");
    const json* statuses = status ? claims_field(*status, "resourceClaimStatuses") : nullptr;
    if (rcs && !rcs->is_array()) diag.add(p + ".spec.resourceClaims", "not an array");
    if (rcs && rcs->is_array())
      for (std::size_t i = 0; i < rcs->size(); ++i) {
        const json& rc = (*rcs)[i];
        const std::string rp = detail::index_path(p + ".spec.resourceClaims", i);
        const std::string entry = detail::claims_str(rc, "name");
        std::string claim;
        if (const json* n = claims_field(rc, "resourceClaimName"); n && n->is_string()) {
          claim = n->get<std::string>();
        } else if (const json* t = claims_field(rc, "resourceClaimTemplateName"); t && t->is_string()) {
          if (statuses && statuses->is_array() && !entry.empty())  // the entry's name is required
            for (const auto& st : *statuses)
              if (st.is_object() && detail::claims_str(st, "name") == entry && st.contains("resourceClaimName") &&
                  st["resourceClaimName"].is_string())
                claim = st["resourceClaimName"].get<std::string>();
          if (claim.empty()) {
            diag.add(rp, "template claim '" + entry + "' has no generated claim in status.resourceClaimStatuses");
            continue;
          }
        } else {
          diag.add(rp, "needs resourceClaimName or resourceClaimTemplateName");
          continue;
        }
        const std::string key = pod.ns + "/" + claim;
        if (m.find_claim(key) == claim_none) {
          diag.add(rp, "pod " + pod.ns + "/" + pod.name + " names claim '" + key + "', which is not loaded");
          continue;
        }
        pod.claims.push_back(key);
      }
    out.push_back(std::move(pod));
  });
  diag.throw_if_any();
  return out;
}

// ---- introspection ------------------------------------------------------------------

namespace detail {
/// A charge as {"<resource>": base units} (integers, so JSON pointers compare exactly).
[[nodiscard]] inline json claims_charge_json(const resource_vector& v, const resource_registry& reg) {
  json j = json::object();
  for (const auto& e : v)
    if (e.value != 0) j[std::string(reg.name(e.id))] = e.value;
  return j;
}
[[nodiscard]] inline const char* claims_source_name(claim_owner_source s) noexcept {
  switch (s) {
    case claim_owner_source::none:
      return "none";
    case claim_owner_source::label:
      return "label";
    case claim_owner_source::first_bind:
      return "first_bind";
    case claim_owner_source::attributed:
      return "attributed";
    case claim_owner_source::transferred:
      return "transferred";
    case claim_owner_source::per_pod:
      return "per_pod";
  }
  return "?";
}
[[nodiscard]] inline const char* claims_action_name(claim_action_kind k) noexcept {
  switch (k) {
    case claim_action_kind::upsert_label:
      return "upsert_label";
    case claim_action_kind::pinned:
      return "pinned";
    case claim_action_kind::unpinned:
      return "unpinned";
  }
  return "?";
}
}  // namespace detail

/// The model's state: per claim ("namespace/name") its owner (null when none),
/// how the owner was chosen, its charge and consumers; per queue the charged
/// resources; the deducted orphan charges. Amounts are integers in base units.
inline void to_json(json& j, const kai_claims_model& m) {
  j = json::object();
  j["mode"] = m.config().mode == kai_claims_mode::owning_queue ? "owning_queue" : "upstream";
  json claims = json::object();
  for (claim_id c = 0; c < m.claim_count(); ++c) {
    json e = json::object();
    const claim_queue_id o = m.owner(c);
    e["owner"] = o == claim_none ? json(nullptr) : json(std::string(m.queue_name(o)));
    e["owner_source"] = detail::claims_source_name(m.owner_source(c));
    e["accounted"] = m.accounted(c);
    e["orphan"] = m.orphan(c);
    e["pinned"] = m.pinned(c);
    e["consumers"] = m.consumers(c);
    e["charge"] = detail::claims_charge_json(m.claim_charge(c), m.registry());
    claims[std::string(m.claim_key(c))] = std::move(e);
  }
  j["claims"] = std::move(claims);
  json queues = json::object();
  for (claim_queue_id q = 0; q < m.queue_count(); ++q)
    queues[std::string(m.queue_name(q))] = json{{"charge", detail::claims_charge_json(m.charge_of(q), m.registry())},
                                                {"shares", m.shares(q)},
                                                {"live", m.queue_live(q)}};
  j["queues"] = std::move(queues);
  j["deducted"] = detail::claims_charge_json(m.deducted(), m.registry());
}

/// The model's state (see above) plus the binder actions collected so far:
/// [{"action": "upsert_label", "claim": "ns/name", "queue": "team-a"}, ...].
inline void to_json(json& j, const kai_claims_policy& p) {
  to_json(j, p.model());
  json acts = json::array();
  for (const auto& a : p.actions())
    acts.push_back(json{{"action", detail::claims_action_name(a.kind)},
                        {"claim", std::string(p.model().claim_key(a.claim))},
                        {"queue", a.queue == claim_none ? std::string() : std::string(p.model().queue_name(a.queue))}});
  j["actions"] = std::move(acts);
}

}  // namespace quota
