// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the running-job limits model: builds
// "running_limits" entries ({"model": "running_limits", "queues": {...},
// "users": {...}, "namespaces": {...}}, quota/running_limits_json.hpp; listed
// in models.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <quota/running_limits_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

namespace detail {

inline model_instance running_limits_make(const policy_spec& ps, scenario&) {
  return instance_of(load_running_limits(ps.body));
}

inline json running_limits_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                      const resource_registry& reg) {
  // each tenant may run as many jobs as it has GPUs in an even split
  json p{{"model", "running_limits"}, {"queues", json::object()}};
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  const auto per =
      std::max<amount>(1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
  for (const auto& t : tenants) p["queues"][t] = per;
  return p;
}

}  // namespace detail

}  // namespace quota::sim
