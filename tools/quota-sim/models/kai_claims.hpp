// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the claims model (shared DRA ResourceClaims, one
// owning queue per claim): builds "kai_claims" entries (listed in models.cpp).
// Docs: docs/kai-claims.md ("In quota-sim")
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <quota/kai_claims_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance claims_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry(ps, {"objects", "pods", "options"});
  entry.require("objects", "the ResourceClaims and DeviceClasses");

  kai_claims_config cfg;
  std::vector<std::string> opt_out;
  std::optional<std::set<std::string, std::less<>>> accounted_classes;
  std::vector<std::string> accounted_names;
  std::string flag_key = "quota.dev/accounted";
  const entry_option accounted = names_option("accounted_classes", accounted_names);
  entry.options(
      {choice_option<kai_claims_mode>(
           "mode", {{"owning_queue", kai_claims_mode::owning_queue}, {"upstream", kai_claims_mode::upstream}}, cfg.mode),
       choice_option<claim_locking>("locking",
                                    {{"deny_foreign", claim_locking::deny_foreign},
                                     {"pin", claim_locking::pin},
                                     {"transfer", claim_locking::transfer}},
                                    cfg.locking),
       flag_option("min_runtime_locks", cfg.min_runtime_locks),
       flag_option("owner_evicts", cfg.owner_evicts),
       choice_option<claim_orphans>(
           "orphans", {{"deduct", claim_orphans::deduct}, {"attribute", claim_orphans::attribute}}, cfg.orphans),
       choice_option<claim_owner_deleted>(
           "owner_deleted", {{"deduct", claim_owner_deleted::deduct}, {"transfer", claim_owner_deleted::transfer}},
           cfg.owner_deleted),
       string_option("queue_label_key", cfg.queue_label_key),
       integer_option("max_consumers", 1, 0xFFFFFFFELL, cfg.max_consumers),
       names_option("opt_out", opt_out),
       {"accounted_classes",
        [&](const json& v, const std::string& path, diagnostics& diag) {
          accounted.read(v, path, diag);
          accounted_classes.emplace(accounted_names.begin(), accounted_names.end());
        }},
       string_option("class_flag_key", flag_key),
       {"charge_as", [&cfg](const json& v, const std::string& path, diagnostics& diag) {
          if (!v.is_object()) {
            diag.add(path, "expected an object of device class: resource name");
            return;
          }
          for (auto c = v.begin(); c != v.end(); ++c)
            if (!c.value().is_string() || c.value().get<std::string>().empty())
              diag.add(path + "." + c.key(), "expected a resource name");
            else
              cfg.charge_as[c.key()] = c.value().get<std::string>();
        }}});
  // option problems are reported together with the objects' problems below
  if (accounted_classes)
    cfg.accounted_class = [set = *accounted_classes](std::string_view c) { return set.find(c) != set.end(); };

  // the model's registry starts as the scenario's, so its charges are in the
  // scenario's resource ids (the scenario takes the registry back below)
  for (const auto& [cls, res] : cfg.charge_as) (void)sc.registry.intern(res);
  // a claim's devices are whole units of nvidia.com/gpu or of their charge_as resource
  refuse_finer_scales(
      entry, sc, "kai_claims",
      [&cfg](std::string_view r) {
        if (r == "nvidia.com/gpu") return 0;
        for (const auto& [cls, res] : cfg.charge_as)
          if (res == r) return 0;
        return -1;
      },
      "a claim's devices are whole devices");
  kai_claims_policy pol(std::move(cfg), sc.registry);
  kai_claims_model& m = pol.model();
  const json& objects = entry["objects"];
  const std::string obase = "objects";
  // DeviceClass flags first (they must precede the claims), then the claims.
  auto kind_of = [](const json& o) -> std::string {
    return o.is_object() && o.contains("kind") && o["kind"].is_string() ? o["kind"].get<std::string>() : std::string();
  };
  if (!entry.has("objects")) entry.throw_if_any();  // no claims to read (reported above)
  try {
    for_each_object(
        objects,
        [&](const json& o, const std::string& p) {
          const std::string kind = kind_of(o);
          if (kind == "ResourceClaim") return;
          if (kind != "DeviceClass") {
            entry.add(p + ".kind", "expected ResourceClaim or DeviceClass, got '" + kind + "'");
            return;
          }
          std::string name;
          try {
            name = object_name(o, p);
          } catch (const parse_error& e) {
            entry.add(p, e.what());
            return;
          }
          std::string v = quota::detail::claims_map_value(o, "annotations", flag_key);
          if (v.empty()) v = quota::detail::claims_map_value(o, "labels", flag_key);
          if (v.empty()) return;
          if (v != "true" && v != "false")
            entry.add(p + ".metadata." + flag_key, "expected \"true\" or \"false\", got '" + v + "'");
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
              entry.add(pr.path.rfind(p, 0) == 0 ? pr.path : p + ": " + pr.path, pr.message);
          } catch (const error& e) {
            entry.add(p, e.what());
          }
        },
        obase);
  } catch (const parse_error& e) {
    entry.add(obase, e.what());
  }
  entry.throw_if_any();

  // pods already holding claims: a snapshot, then the orphan rule
  if (entry.has("pods")) {
    entry.load("pods", [&] {
      const auto pods = load_claim_pods(m, entry["pods"]);
      for (const auto& pod : pods) {
        std::vector<claim_id> ids;
        for (const auto& key : pod.claims) ids.push_back(m.claim_at(key));
        (void)m.restore(pod.as_pod(m.queue(pod.queue)), ids);
      }
    });
  }
  m.finish_snapshot();
  for (const auto& q : opt_out) m.set_sharing(q, false);

  // every job needs a queue (the pod's queue) and claims the model knows
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!job_checked_now(sc, js)) continue;  // submitted under another configuration
    const std::string jp = "$.jobs[" + std::to_string(i) + "]";
    if (js.queue.empty()) entry.add(jp + ".queue", "job '" + js.id + "': the claims model needs the pod's queue");
    for (std::size_t k = 0; k < js.claims.size(); ++k) {
      const std::string& n = js.claims[k];
      const std::string ns = js.ns.empty() ? "default" : js.ns;
      const std::string key = n.find('/') == std::string::npos ? ns + "/" + n : n;
      const std::string cp = jp + ".claims[" + std::to_string(k) + "]";
      if (n.empty() || m.find_claim(key) == claim_none)
        entry.add(cp, "job '" + js.id + "': no ResourceClaim '" + key + "' in the claims model");
      else if (m.claim_namespace(m.find_claim(key)) != ns)
        entry.add(cp, "job '" + js.id + "' in namespace '" + ns + "' names claim '" + key + "' of another namespace");
    }
  }
  entry.throw_if_any();
  sc.registry = m.registry();  // the scenario's names and ids, plus the device classes
  return instance_of(std::move(pol));
}

// claims cannot be synthesized: an entry with no claims (every job without claims is allowed)
inline json claims_synthesize(const std::vector<std::string>&, const resource_vector&, const resource_registry&) {
  return json{{"model", "kai_claims"}, {"objects", json::array()}};
}

}  // namespace detail

}  // namespace quota::sim
