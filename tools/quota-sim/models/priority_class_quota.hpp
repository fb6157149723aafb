// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the priority-class quota model
// (docs/extra-policies.md): builds "priority_class_quota" entries
// ({"model": "priority_class_quota", ...}, quota/priority_class_quota_json.hpp;
// listed in models.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <quota/priority_class_quota.hpp>
#include <quota/priority_class_quota_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance priority_class_quota_make(const policy_spec& ps, scenario& sc) {
  return registry_bound_instance<priority_class_quota_policy>(load_priority_class_quota(ps.body, sc.registry),
                                                              sc.registry);
}

inline json priority_class_quota_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                            const resource_registry& reg) {
  // at most half the cluster's GPUs at class "high" per tenant
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  (void)unit;
  json p{{"model", "priority_class_quota"}, {"quotas", json::object()}};
  for (const auto& t : tenants)
    p["quotas"][t] = json{{"high", {{"max", {{std::string(reg.name(gpu)), capacity.get(gpu) / 2}}}}}};
  return p;
}

}  // namespace detail

}  // namespace quota::sim
