// SPDX-License-Identifier: Apache-2.0
// quota-sim's model registry: what a model adapter (models/*.hpp) builds from
// a scenario's policies[] entry (model_instance), how it is registered by its
// quota-sim kind (model_kind, model_kinds()) and the helpers adapters share.
// Adapters include this header, not the simulator.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <quota/engine.hpp>
#include <quota/json.hpp>

#include "scenario.hpp"

namespace quota::sim {

/// A model built from a scenario's `policies[]` entry.
struct model_instance {
  any_policy policy;
  /// The model's state as JSON (for expectations with `model` and `pointer`),
  /// read from the engine's copy of the policy.
  std::function<json(const any_policy&)> introspect;
  /// For models whose answer changes with time alone (budgets): called at
  /// the start of every instant, before its finishes, with the simulated time.
  std::function<void(any_policy&, std::int64_t now_ms)> on_time;
  /// The next time after `now_ms` at which the model's answer may change by
  /// itself (a budget window resets), or end_of_time. While jobs are pending,
  /// the simulator makes that time an instant and runs a scheduling pass.
  std::function<std::int64_t(const any_policy&, std::int64_t now_ms)> next_wake;
  /// Set on a model built from a reload event's body when the model changes
  /// its configuration in place, keeping its usage (yunikorn_limits): applies
  /// this model's configuration to `current`. Unset: the simulator rebuilds
  /// the model and commits the running jobs into it (tools/quota-sim/reload.hpp).
  std::function<void(any_policy& current)> reload_into;
  /// Set with reload_into when some fields of the configuration cannot change
  /// in place (a budget's resource and window): why this model, built from a
  /// reload event's body, cannot replace `in_force` (the policy entry's
  /// model), or an empty string. Asked when the file is loaded.
  std::function<std::string(const any_policy& in_force)> reload_conflict;
  /// Kueue: marks a running job's workload Evicted (a job running at the
  /// start with "evicted": true); unset for models without that mark.
  std::function<void(any_policy&, const job&)> mark_evicted;
  /// The answer to a query expectation's question to this model
  /// (query_questions() lists them), read on the engine's copy of the policy
  /// at the expectation's instant without changing it; unset for models
  /// without questions.
  std::function<json(const any_policy&, const query_spec&)> query;
};

using model_factory = std::function<model_instance(const policy_spec&, scenario&)>;

/// What quota-sim knows about one model: how to build it from a scenario's
/// `policies[]` entry, and how to derive a policy entry for synthetic tenants
/// (quota-sim generate) from the cluster capacity.
struct model_kind {
  std::string summary;
  model_factory make;
  std::function<json(const std::vector<std::string>& tenants, const resource_vector& capacity,
                     const resource_registry& reg)>
      synthesize;
};

/// The models quota-sim knows, by the name used in `policies[].model`.
inline std::map<std::string, model_kind>& model_kinds() {
  static std::map<std::string, model_kind> k;
  return k;
}

/// A model instance whose introspection is the model's to_json.
template <class M>
model_instance instance_of(M model) {
  model_instance mi{any_policy(std::move(model)), {}, {}, {}, {}, {}, {}, {}};
  mi.introspect = [](const any_policy& p) {
    json j;
    if (const M* m = p.target<M>()) to_json(j, *m);  // found by ADL in the model's *_json.hpp
    return j;
  };
  return mi;
}

/// A policy plus the registry it names resources with (shared, read-only).
template <class P>
class registry_bound {
 public:
  registry_bound(std::shared_ptr<const resource_registry> reg, P p) : reg_(std::move(reg)), p_(std::move(p)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return p_.policy_name(); }
  [[nodiscard]] decision check(const job& j) const { return p_.check(j); }
  void commit(const job& j) { p_.commit(j); }
  void release(std::string_view id) { p_.release(id); }
  void victims(const job& j, std::vector<victim>& out) const { p_.victims(j, out); }
  [[nodiscard]] const P& policy() const noexcept { return p_; }

 private:
  std::shared_ptr<const resource_registry> reg_;
  P p_;
};
template <class P>
inline void to_json(json& j, const registry_bound<P>& m) {
  to_json(j, m.policy());
}

/// A model instance of policy P built from `model`, which names resources by
/// a shared copy of the scenario's registry (the scenario's own moves).
template <class P, class M>
model_instance registry_bound_instance(M model, const resource_registry& scenario_registry) {
  auto reg = std::make_shared<const resource_registry>(scenario_registry);
  model.rebind_registry(reg.get());
  return instance_of(registry_bound<P>(std::move(reg), std::move(model)));
}

/// The GPU dimension of a capacity vector for synthesized quotas: whole
/// nvidia.com/gpu devices, else alibaba.com/gpu-milli (thousandths, as the
/// openb import counts them). Returns the id and how many units make one GPU.
[[nodiscard]] inline std::pair<resource_id, amount> gpu_dimension(const resource_vector& capacity,
                                                                  const resource_registry& reg) {
  if (capacity.get(resources::nvidia_gpu) > 0) return {resources::nvidia_gpu, 1};
  if (auto id = reg.find("alibaba.com/gpu-milli"); id && capacity.get(*id) > 0) return {*id, 1000};
  return {resources::nvidia_gpu, 1};
}

}  // namespace quota::sim
