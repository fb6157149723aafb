// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the sharing-pools model (docs/extra-policies.md):
// builds "sharing_pools" entries ({"model": "sharing_pools", ...},
// quota/sharing_pools_json.hpp; listed in models.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <quota/sharing_pools.hpp>
#include <quota/sharing_pools_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance sharing_pools_make(const policy_spec& ps, scenario& sc) {
  return registry_bound_instance<sharing_pools_policy>(load_sharing_pools(ps.body, sc.registry), sc.registry);
}

inline json sharing_pools_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                     const resource_registry& reg) {
  // two pools of half the tenants each; they lend to and borrow from each other
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  (void)unit;
  const amount share = capacity.get(gpu) / static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  json pools =
      json::array({json{{"name", "pool-1"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}},
                   json{{"name", "pool-2"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}}});
  for (std::size_t i = 0; i < tenants.size(); ++i)
    pools[i < (tenants.size() + 1) / 2 ? 0 : 1]["quotas"].push_back(
        json{{"name", tenants[i]}, {"min", {{std::string(reg.name(gpu)), share}}}});
  if (pools[1]["quotas"].empty()) pools.erase(1);
  return json{{"model", "sharing_pools"}, {"pools", pools}};
}

}  // namespace detail

}  // namespace quota::sim
