// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the volcano_capacity model (Volcano's capacity
// plugin): builds "volcano_capacity" entries (listed in models.cpp).
// Docs: docs/volcano-capacity.md ("In quota-sim")
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <quota/volcano_capacity_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"
#include "volcano_adapter.hpp"

namespace quota::sim {

namespace detail {

/// The capacity plugin: owns its queues (any_policy copies the model).
class volcano_capacity_sim_policy
    : public volcano_adapter<volcano_capacity_sim_policy, volcano_capacity_policy, volcano_capacity_model> {
 public:
  volcano_capacity_sim_policy(volcano_capacity_model q, const resource_registry& reg, bool enqueue_gate = false)
      : volcano_adapter(std::move(q), reg, enqueue_gate) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano_capacity"; }
  /// With "enqueue": the capacity plugin's own enqueue step (its
  /// JobEnqueueableFn with the job's minResources, leaf to root) first.
  [[nodiscard]] decision check(const job& j) const {
    if (enqueue_gate() && plugin().jobs_in_inner_queues() == 0) {
      const auto& m = plugin().model();
      auto d = m.job_enqueueable(m.index(j.queue), volcano_min_resources(j));
      if (d.denied()) return d;
    }
    return plugin().check(j);
  }
  /// Only a job that passes the enqueue step (Volcano: an Inqueue job) reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (enqueue_gate()) {
      const auto& m = plugin().model();
      if (m.job_enqueueable(m.index(j.queue), volcano_min_resources(j)).denied()) return;
    }
    plugin().victims(j, out);
  }
  [[nodiscard]] const volcano_capacity_model& queues() const noexcept { return plugin().model(); }
  /// The queues' elastic sums go to the capacity model itself.
  static volcano_capacity_model& elastic_target(volcano_capacity_policy& p) noexcept { return p.model(); }
};
static_assert(volcano_adapter_capabilities<volcano_capacity_sim_policy>);

/// The model's introspection (quota/volcano_capacity_json.hpp), resources named by the scenario's registry.
inline void to_json(json& j, const volcano_capacity_sim_policy& p) {
  quota::to_json(j, p.queues());
}

inline model_instance volcano_capacity_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry = volcano_entry(ps);
  volcano_capacity_options opts;
  bool enqueue_gate = false;
  entry.options({{"hierarchy",
                  [&opts](const json& v, const std::string& path, diagnostics& diag) {
                    if (!v.is_boolean())
                      diag.add(path, "expected true or false");
                    else
                      opts.mode = v.get<bool>() ? volcano_capacity_mode::hierarchical : volcano_capacity_mode::flat;
                  }},
                 integer_option("ancestorReclaimLevel", 0, 64, opts.ancestor_reclaim_level),
                 flag_option("rootBoundedByTotal", opts.root_bounded_by_total),
                 flag_option("enqueue", enqueue_gate),
                 flag_option("upstream", opts.upstream)});
  if (opts.upstream) refuse_finer_than_volcano(entry, sc, "volcano_capacity");
  entry.throw_if_any();
  const resource_vector total = volcano_cluster_total(sc);
  std::optional<volcano_capacity_model> queues;
  entry.load("objects", [&] { queues.emplace(load_volcano_capacity(entry["objects"], sc.registry, total, opts)); });
  entry.throw_if_any();
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!job_checked_now(sc, js)) continue;  // submitted under another configuration
    if (!queues->contains(js.queue)) {
      entry.add("$.jobs[" + std::to_string(i) + "].queue",
                "job '" + js.id + "': no Volcano Queue '" + js.queue + "' in the volcano_capacity model");
      continue;
    }
    // upstream: Volcano's outcome (nothing is scheduled while the job waits)
    if (!queues->is_leaf(queues->index(js.queue)) && !opts.upstream)
      entry.add("$.jobs[" + std::to_string(i) + "].queue",
                "job '" + js.id + "': queue '" + js.queue + "' has child queues (only leaf queues hold jobs)");
    for (const auto& e : js.per_pod)
      if (std::find(queues->dims().begin(), queues->dims().end(), e.id) == queues->dims().end())
        entry.add("$.jobs[" + std::to_string(i) + "].request",
                  "job '" + js.id + "': resource '" + std::string(sc.registry.name(e.id)) + "' is not on any node");
  }
  entry.throw_if_any();
  take_volcano_warnings(sc, ps, queues->warnings());
  return instance_of(volcano_capacity_sim_policy(std::move(*queues), sc.registry, enqueue_gate));
}

/// One leaf Queue per tenant with an even deserved share of the GPUs, flat.
inline json volcano_capacity_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                        const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  (void)unit;
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  resource_vector des;
  des.set(gpu, capacity.get(gpu) / n);
  json objects = json::array();
  for (const auto& t : tenants)
    objects.push_back(json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                           {"kind", "Queue"},
                           {"metadata", {{"name", t}}},
                           {"spec", {{"reclaimable", true}, {"deserved", resource_list_to_json(des, reg)}}}});
  return json{{"model", "volcano_capacity"}, {"objects", objects}, {"options", {{"hierarchy", false}}}};
}

}  // namespace detail

}  // namespace quota::sim
