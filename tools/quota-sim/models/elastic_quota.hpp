// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the nos elastic-quota model: builds
// "elastic_quota" entries (listed in models.cpp). A policy entry holds the ElasticQuota and
// CompositeElasticQuota objects as kubectl prints them (List or array) and
// options: {"upstream": bool (decide as nos does, elastic_options::upstream),
// "missing": "unlimited" | "upstream" (only cpu/memory missing from a limit
// count as 0), "preemption": "nos" | "capacity_scheduling", "labelOrder":
// "nos" | "creation_then_size", "gpuMemoryPerGPU": GB}. job.namespace selects
// the quota.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include <quota/elastic_quota.hpp>
#include <quota/elastic_quota_json.hpp>
#include <quota/gpu_memory.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim {

/// The policy adapter (which owns its quota set) plus the GPU-memory option;
/// copies are deep. It orders pending pods as the adapter does. The model
/// names resources (reasons, introspection) by the scenario's registry.
class sim_elastic_quota {
 public:
  sim_elastic_quota(elastic_quota_model s, std::shared_ptr<const resource_registry> reg, std::int64_t gb_per_gpu = 0,
                    mig_name_match match = mig_name_match::exact)
      : reg_(std::move(reg)), p_(bound(std::move(s), reg_.get())), gb_(gb_per_gpu), match_(match) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return p_.policy_name(); }
  [[nodiscard]] decision check(const job& j) const { return gb_ ? p_.check(with_gpu_memory(j)) : p_.check(j); }
  void commit(const job& j) { gb_ ? p_.commit(with_gpu_memory(j)) : p_.commit(j); }
  void release(std::string_view id) { p_.release(id); }
  void victims(const job& j, std::vector<victim>& out) const {
    gb_ ? p_.victims(with_gpu_memory(j), out) : p_.victims(j, out);
  }
  void node_candidates(const job& j, std::vector<victim>& out) const {
    gb_ ? p_.node_candidates(with_gpu_memory(j), out) : p_.node_candidates(j, out);
  }
  [[nodiscard]] std::string_view pending_queue(const job& j) const { return p_.pending_queue(j); }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    return p_.compare_pending(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const { return p_.compare_heads(a, b); }
  [[nodiscard]] const elastic_quota_model& set() const noexcept { return p_.model(); }

 private:
  static elastic_quota_model bound(elastic_quota_model s, const resource_registry* reg) {
    s.rebind_registry(reg);
    return s;
  }
  // option gpuMemoryPerGPU: nos counts a pod's GPUs as GPU memory,
  // nvidia.com/gpu x GB per GPU + the GB of each MIG profile, which replaces
  // any gpu-memory the job asks for itself (quota/gpu_memory.hpp add_gpu_memory)
  [[nodiscard]] job with_gpu_memory(const job& j) const {
    job c = j;
    add_gpu_memory(c.request, *reg_, gb_, match_);
    return c;
  }
  std::shared_ptr<const resource_registry> reg_;  // a copy: the scenario's registry moves
  elastic_quota_policy p_;
  std::int64_t gb_ = 0;  // 0: no GPU memory counted
  mig_name_match match_ = mig_name_match::exact;
};
static_assert(policy<sim_elastic_quota>);
static_assert(order_aware<sim_elastic_quota>);
static_assert(node_preemption_aware<sim_elastic_quota>);

/// The model's introspection (quota/elastic_quota_json.hpp), resources named by the scenario's registry.
inline void to_json(json& j, const sim_elastic_quota& m) {
  quota::to_json(j, m.set());
}

/// A quota's over-quota standing, per resource of its min, named as in to_json:
/// {"over_quota_used": max(0, used - min), "guaranteed_over_quota": its share
/// of the pool, "over_quota_pool": sum over quotas of weight x max(0, min - used),
/// the unused guaranteed quota nos shares out in proportion to min}.
inline json elastic_quota_answer(const any_policy& current, const query_spec& q) {
  const auto* m = current.target<sim_elastic_quota>();
  if (!m) throw state_error(error_id::state_conflict, "elastic_quota query: not an elastic_quota model");
  const auto& s = m->set();
  for (std::uint32_t i = 0; i < s.size(); ++i) {
    if (s.spec(i).name != q.queue) continue;
    json out{{"over_quota_used", json::object()},
             {"guaranteed_over_quota", json::object()},
             {"over_quota_pool", json::object()}};
    for (const auto& r : s.spec(i).min) {
      const std::string n = introspection_name(s.registry(), r.id);
      out["over_quota_used"][n] = s.over_quota_used(i, r.id);
      out["guaranteed_over_quota"][n] = s.guaranteed_over_quota(i, r.id);
      out["over_quota_pool"][n] = elastic_over_quota_pool(s, r.id);
    }
    return out;
  }
  throw state_error(error_id::state_conflict, "elastic_quota query: no quota " + q.queue);
}

namespace detail {

inline model_instance elastic_quota_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry(ps, {"objects", "options"});
  elastic_options opt;
  std::int64_t gb_per_gpu = 0;
  entry.options({flag_option("upstream", opt.upstream),
                 choice_option<elastic_missing_policy>(
                     "missing",
                     {{"unlimited", elastic_missing_policy::unlimited}, {"upstream", elastic_missing_policy::upstream}},
                     opt.missing),
                 choice_option<elastic_preemption_policy>(
                     "preemption",
                     {{"nos", elastic_preemption_policy::nos},
                      {"capacity_scheduling", elastic_preemption_policy::capacity_scheduling}},
                     opt.preemption),
                 choice_option<elastic_label_order>("labelOrder",
                                                    {{"nos", elastic_label_order::nos},
                                                     {"creation_then_size", elastic_label_order::creation_then_size}},
                                                    opt.label_order),
                 integer_option("gpuMemoryPerGPU", 1, INT64_MAX, gb_per_gpu)});
  std::vector<elastic_quota_spec> specs;
  entry.load("objects", [&] { specs = load_elastic_quotas(ps.body.value("objects", json::array()), sc.registry); });
  entry.throw_if_any();
  if (opt.upstream) opt.missing = elastic_missing_policy::upstream;
  // nos always computes a pod's GPU memory (the chart's GB per GPU by default)
  if (opt.upstream && gb_per_gpu == 0) gb_per_gpu = default_gb_per_gpu;
  if (gb_per_gpu != 0)
    refuse_finer_scales(
        entry, sc, "elastic_quota",
        [](std::string_view r) { return r == "nvidia.com/gpu" || r.starts_with("nvidia.com/mig-") ? 0 : -1; },
        "a pod's GPU memory is counted per whole GPU and MIG slice");
  check_query_names(
      entry, sc, "elastic_quota", ".quota.name",
      [&](const std::string& q) {
        return std::any_of(specs.begin(), specs.end(), [&](const elastic_quota_spec& sp) { return sp.name == q; });
      },
      [](const std::string& q) { return "no ElasticQuota '" + q + "' in the model"; });
  entry.throw_if_any();
  auto reg = std::make_shared<const resource_registry>(sc.registry);
  elastic_quota_model set(std::move(specs), opt, reg.get());
  model_instance mi = instance_of(sim_elastic_quota(std::move(set), std::move(reg), gb_per_gpu,
                                                    opt.upstream ? mig_name_match::nos : mig_name_match::exact));
  mi.query = [](const any_policy& current, const query_spec& q) { return elastic_quota_answer(current, q); };
  return mi;
}

inline json elastic_quota_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                     const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  (void)unit;
  const amount share = capacity.get(gpu) / static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  json items = json::array();
  for (const auto& t : tenants)
    items.push_back({{"apiVersion", "nos.nebuly.com/v1alpha1"},
                     {"kind", "ElasticQuota"},
                     {"metadata", {{"name", t}, {"namespace", t}}},
                     {"spec", {{"min", {{std::string(reg.name(gpu)), share}}}}}});
  return json{{"model", "elastic_quota"}, {"objects", {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}}};
}

}  // namespace detail

}  // namespace quota::sim
