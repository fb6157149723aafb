// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the claims model (shared DRA ResourceClaims, one
// owning queue per claim): registers it in model_kinds() as "kai_claims".
//
// Policy entry:
//   {"model": "kai_claims",
//    "objects": [ResourceClaim, DeviceClass ... as kubectl prints them (an array or a List)],
//    "pods": [Pod ...]   (optional: pods already holding claims at the start, restored as a
//                         snapshot; they never leave — this is how orphans are expressed),
//    "options": {"mode": "design" | "kai_strict", "locking": "deny_foreign" | "pin" | "transfer",
//                "min_runtime_locks": true, "owner_evicts": false, "orphans": "deduct" | "attribute",
//                "owner_deleted": "deduct" | "transfer", "queue_label_key": "kai.scheduler/queue",
//                "max_consumers": 256, "opt_out": ["team-a"], "accounted_classes": ["gpu.nvidia.com"],
//                "class_flag_key": "quota.dev/accounted",
//                "charge_as": {"gpu.nvidia.com": "nvidia.com/gpu"}}}
// Charges flow (quota/capabilities.hpp): a claim's devices are charged once, to
// the owning queue, in the models composed with it that account charges
// (kai_fair_share, volcano, volcano_capacity), as charge_as names them (GPU
// classes count as nvidia.com/gpu by default).
// A job is a pod (or a gang of `pods` pods) of queue `queue` in `namespace`;
// its `claims` name shared claims ("name" in the job's namespace, or
// "namespace/name"); `preemptible: false` makes it non-preemptible (locking).
// The model's introspection (`"model": "claims"`) is to_json(claims_policy).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <quota/claims_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance claims_make(const policy_spec& ps, scenario& sc) {
  diagnostics diag;
  const std::string& base = ps.path;
  for (auto it = ps.body.begin(); it != ps.body.end(); ++it)
    if (it.key() != "model" && it.key() != "objects" && it.key() != "options" && it.key() != "pods")
      diag.add(base + "." + it.key(), "unknown key (expected objects, pods, options)");
  if (!ps.body.contains("objects")) diag.add(base + ".objects", "missing: the ResourceClaims and DeviceClasses");

  claim_config cfg;
  std::vector<std::string> opt_out;
  std::optional<std::set<std::string, std::less<>>> accounted_classes;
  std::string flag_key = "quota.dev/accounted";
  if (ps.body.contains("options")) {
    const auto& o = ps.body["options"];
    if (!o.is_object()) {
      diag.add(base + ".options", "expected an object");
    } else {
      for (auto it = o.begin(); it != o.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        const std::string p = base + ".options." + k;
        auto one_of = [&](std::initializer_list<const char*> names) -> int {
          int i = 0;
          if (v.is_string())
            for (const char* n : names) {
              if (v.get<std::string>() == n) return i;
              ++i;
            }
          std::string list;
          for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
          diag.add(p, "expected one of " + list);
          return -1;
        };
        auto strings = [&](std::vector<std::string>& out) {
          if (!v.is_array()) {
            diag.add(p, "expected an array of names");
            return;
          }
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string() || v[i].get<std::string>().empty())
              diag.add(p + "[" + std::to_string(i) + "]", "expected a non-empty string");
            else
              out.push_back(v[i].get<std::string>());
          }
        };
        if (k == "mode") {
          if (const int i = one_of({"design", "kai_strict"}); i >= 0)
            cfg.mode = i == 0 ? claim_mode::design : claim_mode::kai_strict;
        } else if (k == "locking") {
          if (const int i = one_of({"deny_foreign", "pin", "transfer"}); i >= 0)
            cfg.locking = i == 0 ? claim_locking::deny_foreign : i == 1 ? claim_locking::pin : claim_locking::transfer;
        } else if (k == "orphans") {
          if (const int i = one_of({"deduct", "attribute"}); i >= 0)
            cfg.orphans = i == 0 ? claim_orphans::deduct : claim_orphans::attribute;
        } else if (k == "owner_deleted") {
          if (const int i = one_of({"deduct", "transfer"}); i >= 0)
            cfg.owner_deleted = i == 0 ? claim_owner_deleted::deduct : claim_owner_deleted::transfer;
        } else if (k == "min_runtime_locks" || k == "owner_evicts") {
          if (!v.is_boolean())
            diag.add(p, "expected true or false");
          else
            (k == "min_runtime_locks" ? cfg.min_runtime_locks : cfg.owner_evicts) = v.get<bool>();
        } else if (k == "queue_label_key" || k == "class_flag_key") {
          if (!v.is_string() || v.get<std::string>().empty())
            diag.add(p, "expected a non-empty string");
          else
            (k == "queue_label_key" ? cfg.queue_label_key : flag_key) = v.get<std::string>();
        } else if (k == "max_consumers") {
          if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 0xFFFFFFFELL)
            diag.add(p, "expected a positive integer");
          else
            cfg.max_consumers = static_cast<std::uint32_t>(v.get<std::int64_t>());
        } else if (k == "opt_out") {
          strings(opt_out);
        } else if (k == "charge_as") {
          if (!v.is_object()) {
            diag.add(p, "expected an object of device class: resource name");
          } else {
            for (auto c = v.begin(); c != v.end(); ++c)
              if (!c.value().is_string() || c.value().get<std::string>().empty())
                diag.add(p + "." + c.key(), "expected a resource name");
              else
                cfg.charge_as[c.key()] = c.value().get<std::string>();
          }
        } else if (k == "accounted_classes") {
          std::vector<std::string> names;
          strings(names);
          accounted_classes.emplace(names.begin(), names.end());
        } else {
          diag.add(p,
                   "unknown option (expected mode, locking, min_runtime_locks, owner_evicts, orphans, owner_deleted, "
                   "queue_label_key, max_consumers, opt_out, accounted_classes, class_flag_key, charge_as)");
        }
      }
    }
  }
  // option problems are reported together with the objects' problems below
  if (accounted_classes)
    cfg.accounted_class = [set = *accounted_classes](std::string_view c) { return set.find(c) != set.end(); };

  // the model's registry starts as the scenario's, so its charges are in the
  // scenario's resource ids (the scenario takes the registry back below)
  for (const auto& [cls, res] : cfg.charge_as) (void)sc.registry.intern(res);
  claims_policy pol(std::move(cfg), sc.registry);
  claim_model& m = pol.model();
  const json& objects = ps.body["objects"];
  const std::string obase = base + ".objects";
  // DeviceClass flags first (they must precede the claims), then the claims.
  auto kind_of = [](const json& o) -> std::string {
    return o.is_object() && o.contains("kind") && o["kind"].is_string() ? o["kind"].get<std::string>() : std::string();
  };
  try {
    for_each_object(
        objects,
        [&](const json& o, const std::string& p) {
          const std::string kind = kind_of(o);
          if (kind == "ResourceClaim") return;
          if (kind != "DeviceClass") {
            diag.add(p + ".kind", "expected ResourceClaim or DeviceClass, got '" + kind + "'");
            return;
          }
          std::string name;
          try {
            name = object_name(o, p);
          } catch (const parse_error& e) {
            diag.add(p, e.what());
            return;
          }
          std::string v = quota::detail::claims_map_value(o, "annotations", flag_key);
          if (v.empty()) v = quota::detail::claims_map_value(o, "labels", flag_key);
          if (v.empty()) return;
          if (v != "true" && v != "false")
            diag.add(p + ".metadata." + flag_key, "expected \"true\" or \"false\", got '" + v + "'");
          else
            m.set_class_accounted(name, v == "true");
        },
        obase);
    for_each_object(
        objects,
        [&](const json& o, const std::string& p) {
          if (kind_of(o) != "ResourceClaim") return;
          try {
            const claim_object c = parse_resource_claim(o, p, m.config().queue_label_key, m.config().mode);
            (void)m.add_claim(c.spec);
          } catch (const validation_error& e) {
            for (const auto& pr : e.problems())
              diag.add(pr.path.rfind(base, 0) == 0 ? pr.path : p + ": " + pr.path, pr.message);
          } catch (const error& e) {
            diag.add(p, e.what());
          }
        },
        obase);
  } catch (const parse_error& e) {
    diag.add(obase, e.what());
  }
  diag.throw_if_any();

  // pods already holding claims: a snapshot, then the orphan rule
  if (ps.body.contains("pods")) {
    try {
      const auto pods = load_claim_pods(m, ps.body["pods"]);
      for (const auto& pod : pods) {
        std::vector<claim_id> ids;
        for (const auto& key : pod.claims) ids.push_back(m.claim_at(key));
        (void)m.restore(pod.as_pod(m.queue(pod.queue)), ids);
      }
    } catch (const validation_error& e) {
      for (const auto& pr : e.problems()) diag.add(base + ".pods" + pr.path, pr.message);
    } catch (const error& e) {
      diag.add(base + ".pods", e.what());
    }
  }
  m.finish_snapshot();
  for (const auto& q : opt_out) m.set_sharing(q, false);

  // every job needs a queue (the pod's queue) and claims the model knows
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    const std::string jp = "$.jobs[" + std::to_string(i) + "]";
    if (js.queue.empty()) diag.add(jp + ".queue", "job '" + js.id + "': the claims model needs the pod's queue");
    for (std::size_t k = 0; k < js.claims.size(); ++k) {
      const std::string& n = js.claims[k];
      const std::string ns = js.ns.empty() ? "default" : js.ns;
      const std::string key = n.find('/') == std::string::npos ? ns + "/" + n : n;
      const std::string cp = jp + ".claims[" + std::to_string(k) + "]";
      if (n.empty() || m.find_claim(key) == claim_none)
        diag.add(cp, "job '" + js.id + "': no ResourceClaim '" + key + "' in the claims model");
      else if (m.claim_namespace(m.find_claim(key)) != ns)
        diag.add(cp, "job '" + js.id + "' in namespace '" + ns + "' names claim '" + key + "' of another namespace");
    }
  }
  diag.throw_if_any();
  sc.registry = m.registry();  // the scenario's names and ids, plus the device classes
  return instance_of(std::move(pol));
}

}  // namespace detail

inline void register_claims_model(std::map<std::string, model_kind>& kinds) {
  kinds["kai_claims"] = model_kind{
      "shared DRA ResourceClaims with one owning queue per claim (KAI's claim-sharing design, or KAI today with "
      "mode kai_strict): {\"objects\": [ResourceClaim, DeviceClass ...], \"pods\": [Pod ...], \"options\": "
      "{\"locking\": \"deny_foreign\", \"orphans\": \"deduct\", \"opt_out\": [...]}}; jobs name claims in `claims`",
      detail::claims_make,
      // claims cannot be synthesized: an entry with no claims (every job without claims is allowed)
      [](const std::vector<std::string>&, const resource_vector&, const resource_registry&) {
        return json{{"model", "kai_claims"}, {"objects", json::array()}};
      }};
}

}  // namespace quota::sim
