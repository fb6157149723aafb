// SPDX-License-Identifier: Apache-2.0
// quota/volcano_json.hpp — Volcano Queue and PodGroup objects from
// `kubectl get queues -o json` / `kubectl get podgroups -o json` (opt-in JSON).
// Docs: docs/volcano.md
#pragma once

#include <string>
#include <vector>

#include <quota/detail/volcano_queue_json.hpp>
#include <quota/json.hpp>
#include <quota/volcano.hpp>

namespace quota {

/// One Volcano PodGroup: the fields the queue predicates read.
struct volcano_podgroup {
  std::string name;
  std::string ns;
  std::string queue;
  std::int64_t min_member = 0;
  resource_vector min_resources;
  std::string phase;
};

/// Parses Queue objects (single, List or array). Every problem of the
/// document is reported at once in a validation_error naming the item.
[[nodiscard]] inline std::vector<volcano_queue_spec> parse_volcano_queues(const json& doc, resource_registry& reg) {
  std::vector<volcano_queue_spec> out;
  detail::for_each_volcano_queue(doc, reg, [&](detail::volcano_queue_object&& o) {
    volcano_queue_spec q;
    q.name = std::move(o.name);
    q.parent = std::move(o.parent);
    q.weight = o.weight;
    q.priority = o.priority;
    q.created_ms = o.created_ms;
    q.reclaimable = o.reclaimable;
    q.capability = std::move(o.capability);
    q.guarantee = std::move(o.guarantee);
    // Unknown is the state of a queue Volcano lost track of: it schedules nothing new
    q.state = o.state == "Open" ? volcano_queue_state::open : o.state == "Closing" ? volcano_queue_state::closing : volcano_queue_state::closed;
    out.push_back(std::move(q));
  });
  return out;
}

/// Parses PodGroup objects (single, List or array).
[[nodiscard]] inline std::vector<volcano_podgroup> parse_volcano_podgroups(const json& doc, resource_registry& reg) {
  std::vector<volcano_podgroup> out;
  diagnostics diag;
  for_each_object(doc, [&](const json& obj, const std::string& path) {
    volcano_podgroup pg;
    try {
      pg.name = object_name(obj, path);
      pg.ns = object_namespace(obj);
      const json empty = json::object();
      const json* spec_p = object_section(obj, "spec", path, diag);
      const json& spec = spec_p ? *spec_p : empty;
      const std::string sp = detail::join_path(path, "spec");
      pg.queue = field_or<std::string>(spec, "queue", std::string("default"), sp);
      pg.min_member = field_or<std::int64_t>(spec, "minMember", 0, sp);
      if (spec.contains("minResources"))
        pg.min_resources = parse_resource_list(spec["minResources"], reg, detail::join_path(sp, "minResources"), &diag);
      if (const json* st = object_section(obj, "status", path, diag))
        pg.phase = field_or<std::string>(*st, "phase", std::string{}, detail::join_path(path, "status"));
    } catch (const error& e) {
      diag.add(path, e.what());
      return;
    }
    out.push_back(std::move(pg));
  });
  if (!diag.empty()) throw validation_error(diag.items());
  return out;
}

}  // namespace quota
