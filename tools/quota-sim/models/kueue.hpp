// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the kueue model: builds "kueue" entries (listed in
// models.cpp); every scheduling pass is one Kueue scheduling cycle.
// Docs: docs/kueue.md ("quota-sim")
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <quota/kueue_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance kueue_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry(ps, {"objects", "options"});
  entry.require("objects", "the Kueue objects of the model");
  bool fair = false;
  entry.options({flag_option("fairSharing", fair)});
  refuse_finer_scales(
      entry, sc, "kueue", [](std::string_view r) { return r == "cpu" ? 3 : 0; },
      "Kueue's ResourceValue: cpu in thousandths, every other resource in whole units");
  entry.throw_if_any();

  kueue_objects objs;
  resource_registry reg = sc.registry;
  entry.load("objects", [&] { load_kueue_objects(entry["objects"], reg, objs); });
  entry.throw_if_any();
  if (!objs.workloads.empty())
    entry.add("objects", "Workload objects are not accepted here: workloads are the scenario's jobs");
  entry.throw_if_any();
  objs.config.fair_sharing = fair;
  std::optional<kueue_policy> pol;
  entry.load("objects", [&] { pol.emplace(objs.config, reg); });
  entry.throw_if_any();
  // every job must name a queue of this model
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!job_checked_now(sc, js)) continue;  // submitted under another configuration
    if (!pol->model().forest().find_local_queue(js.ns, js.queue) && !pol->model().forest().find_cluster_queue(js.queue))
      entry.add("$.jobs[" + std::to_string(i) + "].queue", "job '" + js.id + "': no LocalQueue '" + js.queue +
                                                               "' in namespace '" + js.ns +
                                                               "' and no ClusterQueue of that name in the kueue model");
  }
  entry.throw_if_any();
  sc.registry = std::move(reg);
  model_instance mi = instance_of(std::move(*pol));
  // a reload event: kueue_model::update_config keeps the admitted workloads
  // and their usage (Kueue keeps admitted work when a quota is lowered)
  mi.reload_into = [cfg = objs.config](any_policy& current) {
    auto* p = current.target<kueue_policy>();
    if (!p) throw state_error(error_id::state_conflict, "kueue reload: not a kueue model");
    p->model().update_config(cfg);
  };
  // a job running at the start with "evicted": true holds its quota with
  // Kueue's Evicted condition: preemption tries it first
  mi.mark_evicted = [](any_policy& current, const job& j) {
    auto* p = current.target<kueue_policy>();
    if (!p) throw state_error(error_id::state_conflict, "kueue: not a kueue model");
    p->model().mark_evicted(j.id);
  };
  return mi;
}

/// One ClusterQueue per tenant (LocalQueue of the same name in namespace =
/// tenant) in cohort "all", nominal quota = capacity / tenants (rounded down)
/// of every resource of the cluster in one flavor "default", no borrowing
/// limit; reclaimWithinCohort Any and withinClusterQueue LowerPriority so that
/// lent quota comes back.
inline json kueue_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                             const resource_registry& reg) {
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  resource_vector share;
  json covered = json::array();
  json quotas = json::array();
  for (const auto& e : capacity) {
    share.set(e.id, e.value / n);
    covered.push_back(std::string(reg.name(e.id)));
  }
  const json amounts = resource_list_to_json(share, reg);
  for (const auto& e : capacity) {
    const std::string name(reg.name(e.id));
    quotas.push_back(json{{"name", name}, {"nominalQuota", amounts.contains(name) ? amounts[name] : json("0")}});
  }
  json objects = json::array();
  objects.push_back(
      json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "default"}}}});
  for (const auto& t : tenants) {
    objects.push_back(
        json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "ClusterQueue"},
             {"metadata", {{"name", t}}},
             {"spec",
              {{"cohort", "all"},
               {"namespaceSelector", json::object()},
               {"preemption", {{"reclaimWithinCohort", "Any"}, {"withinClusterQueue", "LowerPriority"}}},
               {"resourceGroups",
                json::array({json{{"coveredResources", covered},
                                  {"flavors", json::array({json{{"name", "default"}, {"resources", quotas}}})}}})}}}});
    objects.push_back(json{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                           {"kind", "LocalQueue"},
                           {"metadata", {{"name", t}, {"namespace", t}}},
                           {"spec", {{"clusterQueue", t}}}});
  }
  return json{{"model", "kueue"}, {"objects", std::move(objects)}};
}

}  // namespace detail

}  // namespace quota::sim
