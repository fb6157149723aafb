// SPDX-License-Identifier: Apache-2.0
// quota/volcano_capacity_json.hpp — Volcano Queue objects for the capacity
// plugin from `kubectl get queues -o json` (opt-in JSON): spec.deserved,
// spec.capability, spec.guarantee.resource, spec.parent, spec.priority,
// spec.reclaimable, status.state.
// Docs: docs/volcano.md
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <quota/volcano_capacity.hpp>
#include <quota/detail/volcano_queue_json.hpp>
#include <quota/json.hpp>

namespace quota {

/// Parses Queue objects (single, List or array). Every problem of the
/// document is reported at once in a validation_error naming the item.
[[nodiscard]] inline std::vector<volcano_capacity_queue_spec> parse_volcano_capacity(const json& doc, resource_registry& reg) {
  std::vector<volcano_capacity_queue_spec> out;
  detail::for_each_volcano_queue(doc, reg, [&](detail::volcano_queue_object&& o) {
    volcano_capacity_queue_spec q;
    q.name = std::move(o.name);
    q.parent = std::move(o.parent);
    q.priority = o.priority;
    q.created_ms = o.created_ms;
    q.reclaimable = o.reclaimable;
    q.open = o.state == "Open";
    q.deserved = std::move(o.deserved);
    q.capability = std::move(o.capability);
    q.guarantee = std::move(o.guarantee);
    out.push_back(std::move(q));
  });
  return out;
}

/// Builds capacity queues from Queue objects. The tracked dimensions are the
/// total's plus every resource a queue lists.
[[nodiscard]] inline volcano_capacity_model load_volcano_capacity(const json& doc, resource_registry& reg,
                                                          const resource_vector& total, volcano_capacity_options opts = {}) {
  auto specs = parse_volcano_capacity(doc, reg);
  std::vector<resource_id> dims;
  auto note = [&](const resource_vector& v) {
    for (const auto& e : v)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end()) dims.push_back(e.id);
  };
  note(total);
  for (const auto& s : specs) {
    note(s.deserved);
    note(s.capability);
    note(s.guarantee);
  }
  return volcano_capacity_model(std::move(dims), total, std::move(specs), opts);
}

}  // namespace quota
