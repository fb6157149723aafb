// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the volcano model (Volcano's proportion plugin):
// builds "volcano" entries (listed in models.cpp); the capacity plugin is
// models/volcano_capacity.hpp.
// Docs: docs/volcano.md ("In quota-sim")
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <quota/big_int.hpp>
#include <quota/volcano_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"
#include "volcano_adapter.hpp"

namespace quota::sim {

namespace detail {

/// The proportion adapter (which owns its queue tree and follows pending
/// demand) plus the enqueue gates; copies are deep. Order and demand are the
/// adapter's.
class volcano_sim_policy : public volcano_adapter<volcano_sim_policy, volcano_policy, volcano_model> {
 public:
  volcano_sim_policy(volcano_model t, const resource_registry& reg, bool enqueue_gate = false,
                     std::int64_t factor_num = 6, std::int64_t factor_den = 5)
      : volcano_adapter(std::move(t), reg, enqueue_gate), factor_num_(factor_num), factor_den_(factor_den) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano"; }
  [[nodiscard]] decision check(const job& j) const {
    if (!enqueue_gate()) return plugin().check(j);
    // Volcano's enqueue action before allocate: the job (its whole request as
    // minResources) must be enqueueable and pass the overcommit gate.
    const auto& tree = plugin().tree();
    const auto q = tree.index(j.queue);
    const auto min = volcano_min_resources(j);
    auto d = tree.job_enqueueable(q, min);
    if (d.allowed()) d = tree.overcommit_gate(q, min, factor_num_, factor_den_);
    if (d.allowed()) d = plugin().check(j);
    return d;
  }
  /// With the enqueue gates on, only a job that passes them (Volcano: an
  /// Inqueue job) reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (enqueue_gate()) {
      const auto& tree = plugin().tree();
      const auto q = tree.index(j.queue);
      const auto min = volcano_min_resources(j);
      if (tree.job_enqueueable(q, min).denied() || tree.overcommit_gate(q, min, factor_num_, factor_den_).denied())
        return;
    }
    plugin().victims(j, out);
  }
  [[nodiscard]] const volcano_model& tree() const noexcept { return plugin().tree(); }
  /// The queues' elastic sums go through the proportion adapter, which keeps its tree's.
  static volcano_policy& elastic_target(volcano_policy& p) noexcept { return p; }

 private:
  std::int64_t factor_num_ = 6, factor_den_ = 5;
};
static_assert(volcano_adapter_capabilities<volcano_sim_policy>);

/// The model's introspection (quota/volcano_json.hpp), resources named by the scenario's registry.
inline void to_json(json& j, const volcano_sim_policy& p) {
  quota::to_json(j, p.tree());
}

inline model_instance volcano_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry = volcano_entry(ps);
  bool enqueue_gate = false;
  volcano_options topts;
  double factor = 1.2;
  entry.options({{"plugin",
                  [](const json& v, const std::string& path, diagnostics& diag) {
                    if (!v.is_string() || v.get_ref<const std::string&>() != "proportion")
                      diag.add(path, "expected \"proportion\" (the capacity plugin is the model \"volcano_capacity\")");
                  }},
                 flag_option("enqueue", enqueue_gate),
                 number_option("overcommitFactor", 1, 1000, factor),
                 flag_option("upstream", topts.upstream)});
  if (topts.upstream) refuse_finer_than_volcano(entry, sc, "volcano");
  entry.throw_if_any();
  const auto factor_milli = static_cast<std::int64_t>(std::llround(factor * 1000.0));
  std::vector<volcano_queue_spec> specs;
  entry.load("objects", [&] { specs = parse_volcano_queues(entry["objects"], sc.registry); });
  entry.throw_if_any();
  const resource_vector total = volcano_cluster_total(sc);
  std::vector<resource_id> dims;
  for (const auto& e : total) dims.push_back(e.id);
  for (const auto& s : specs) {
    for (const auto& e : s.guarantee)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end()) dims.push_back(e.id);
    for (const auto& e : s.capability)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end()) dims.push_back(e.id);
  }
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  std::optional<volcano_model> tree;
  entry.load("objects", [&] { tree.emplace(dims, total, std::move(specs), topts); });
  entry.throw_if_any();
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!job_checked_now(sc, js)) continue;  // submitted under another configuration
    for (const auto& e : js.per_pod)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end())
        entry.add("$.jobs[" + std::to_string(i) + "].request",
                  "job '" + js.id + "': resource '" + std::string(sc.registry.name(e.id)) + "' is not on any node");
    if (std::find(names.begin(), names.end(), js.queue) == names.end())
      entry.add("$.jobs[" + std::to_string(i) + "].queue",
                "job '" + js.id + "': no Volcano Queue '" + js.queue + "' in the volcano model");
  }
  check_query_names(
      entry, sc, "volcano", ".queue.name",
      [&](const std::string& q) { return std::find(names.begin(), names.end(), q) != names.end(); },
      [](const std::string& q) { return "no Volcano Queue '" + q + "' in the volcano model"; });
  entry.throw_if_any();
  take_volcano_warnings(sc, ps, tree->warnings());
  volcano_sim_policy pol(std::move(*tree), sc.registry, enqueue_gate, factor_milli, 1000);
  model_instance mi = instance_of(std::move(pol));
  // a queue's share (Volcano's updateQueueAttrShare: the largest allocated /
  // deserved; exact, and as 6 decimals) and overused (deserved <= allocated)
  mi.query = [](const any_policy& current, const query_spec& q) -> json {
    const auto* p = current.target<volcano_sim_policy>();
    if (!p) throw state_error(error_id::state_conflict, "volcano query: not a volcano model");
    const auto& t = p->tree();
    const auto i = t.index(q.queue);
    const rational share = volcano_share_exact(t, i);
    return json{
        {"share", decimal_string(share, 6)}, {"shareExact", fraction_string(share)}, {"overused", t.overused(i)}};
  };
  return mi;
}

/// One Queue per tenant, weight 1, guarantee = half an even share of the GPU dimension.
inline json volcano_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                               const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  const auto half = capacity.get(gpu) / n / 2;
  resource_vector g;
  g.set(gpu, half);
  (void)unit;
  json objects = json::array();
  for (const auto& t : tenants)
    objects.push_back(
        json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
             {"kind", "Queue"},
             {"metadata", {{"name", t}}},
             {"spec",
              {{"weight", 1}, {"reclaimable", true}, {"guarantee", {{"resource", resource_list_to_json(g, reg)}}}}}});
  return json{{"model", "volcano"}, {"objects", objects}, {"options", {{"plugin", "proportion"}}}};
}

}  // namespace detail

}  // namespace quota::sim
