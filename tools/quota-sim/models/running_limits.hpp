// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the running-job limits model: registers
// "running_limits" ({"model": "running_limits", "queues": {...}, "users":
// {...}, "namespaces": {...}}, quota/running_limits_json.hpp).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <quota/running_limits_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

inline void register_running_limits_model(std::map<std::string, model_kind>& kinds) {
  kinds["running_limits"] = model_kind{
      "running-job limits per queue, user and namespace: {\"queues\": {\"team-a\": 3, \"*\": 10}, \"users\": {...}, "
      "\"namespaces\": {...}}",
      [](const policy_spec& ps, scenario&) { return instance_of(load_running_limits(ps.body)); },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // each tenant may run as many jobs as it has GPUs in an even split
        json p{{"model", "running_limits"}, {"queues", json::object()}};
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        const auto per = std::max<amount>(
            1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
        for (const auto& t : tenants) p["queues"][t] = per;
        return p;
      }};
}

}  // namespace quota::sim
