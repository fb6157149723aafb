// quota/queue_tree_json.hpp — Volcano Queue and PodGroup objects from
// `kubectl get queues -o json` / `kubectl get podgroups -o json` (opt-in JSON).
#pragma once

#include <string>
#include <vector>

#include <quota/json.hpp>
#include <quota/queue_tree.hpp>

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
[[nodiscard]] inline std::vector<queue_spec> parse_volcano_queues(const json& doc, resource_registry& reg) {
  std::vector<queue_spec> out;
  diagnostics diag;
  for_each_object(doc, [&](const json& obj, const std::string& path) {
    queue_spec q;
    try {
      q.name = object_name(obj, path);
      const json empty = json::object();
      const json& spec = obj.contains("spec") && obj["spec"].is_object() ? obj["spec"] : empty;
      const std::string sp = detail::join_path(path, "spec");
      q.weight = field_or<std::int64_t>(spec, "weight", 1, sp);
      q.reclaimable = field_or<bool>(spec, "reclaimable", true, sp);
      q.parent = field_or<std::string>(spec, "parent", std::string{}, sp);
      if (q.parent == "root") q.parent.clear();
      if (spec.contains("capability"))
        q.capability = parse_resource_list(spec["capability"], reg, detail::join_path(sp, "capability"), &diag);
      if (spec.contains("guarantee") && spec["guarantee"].is_object() && spec["guarantee"].contains("resource"))
        q.guarantee =
            parse_resource_list(spec["guarantee"]["resource"], reg, detail::join_path(sp, "guarantee.resource"), &diag);
      std::string state = "Open";
      if (obj.contains("status") && obj["status"].is_object())
        state = field_or<std::string>(obj["status"], "state", state, detail::join_path(path, "status"));
      q.state = state == "Closed" ? queue_state::closed : state == "Closing" ? queue_state::closing : queue_state::open;
    } catch (const error& e) {
      diag.add(path, e.what());
      return;
    }
    out.push_back(std::move(q));
  });
  if (!diag.empty()) throw validation_error(diag.items());
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
      const json& spec = obj.contains("spec") && obj["spec"].is_object() ? obj["spec"] : empty;
      const std::string sp = detail::join_path(path, "spec");
      pg.queue = field_or<std::string>(spec, "queue", std::string("default"), sp);
      pg.min_member = field_or<std::int64_t>(spec, "minMember", 0, sp);
      if (spec.contains("minResources"))
        pg.min_resources = parse_resource_list(spec["minResources"], reg, detail::join_path(sp, "minResources"), &diag);
      if (obj.contains("status") && obj["status"].is_object())
        pg.phase = field_or<std::string>(obj["status"], "phase", std::string{}, detail::join_path(path, "status"));
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
