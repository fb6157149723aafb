// SPDX-License-Identifier: Apache-2.0
// quota/pod_request.hpp — the Kubernetes effective request of a pod.
//
// Per resource: max(sum over containers, max over init containers) + overhead.
// Docs: docs/elastic-quota.md
#pragma once

#include <algorithm>
#include <span>

#include <quota/resource_vector.hpp>

namespace quota {

/// Effective request of a pod from its containers, init containers and
/// overhead. Throws overflow_error when a sum does not fit.
[[nodiscard]] inline resource_vector pod_request(std::span<const resource_vector> containers,
                                                 std::span<const resource_vector> init_containers,
                                                 const resource_vector& overhead = {}) {
  resource_vector sum;
  for (const auto& c : containers)
    for (const auto& e : c) sum.add(e.id, e.value);
  for (const auto& c : init_containers)
    for (const auto& e : c)
      if (sum.get(e.id) < e.value) sum.set(e.id, e.value);
  for (const auto& e : overhead) sum.add(e.id, e.value);
  return sum;
}

}  // namespace quota
