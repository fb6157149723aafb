// quota/capacity_queues_json.hpp — Volcano Queue objects for the capacity
// plugin from `kubectl get queues -o json` (opt-in JSON): spec.deserved,
// spec.capability, spec.guarantee.resource, spec.parent, spec.priority,
// spec.reclaimable, status.state.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <quota/capacity_queues.hpp>
#include <quota/json.hpp>

namespace quota {

/// Parses Queue objects (single, List or array). Every problem of the
/// document is reported at once in a validation_error naming the item.
[[nodiscard]] inline std::vector<capacity_queue_spec> parse_capacity_queues(const json& doc, resource_registry& reg) {
  std::vector<capacity_queue_spec> out;
  diagnostics diag;
  for_each_object(doc, [&](const json& obj, const std::string& path) {
    capacity_queue_spec q;
    try {
      q.name = object_name(obj, path);
      const json empty = json::object();
      const json& spec = obj.contains("spec") && obj["spec"].is_object() ? obj["spec"] : empty;
      const std::string sp = detail::join_path(path, "spec");
      q.reclaimable = field_or<bool>(spec, "reclaimable", true, sp);
      q.priority = field_or<std::int32_t>(spec, "priority", 0, sp);
      q.parent = field_or<std::string>(spec, "parent", std::string{}, sp);
      if (spec.contains("deserved"))
        q.deserved = parse_resource_list(spec["deserved"], reg, detail::join_path(sp, "deserved"), &diag);
      if (spec.contains("capability"))
        q.capability = parse_resource_list(spec["capability"], reg, detail::join_path(sp, "capability"), &diag);
      if (spec.contains("guarantee") && spec["guarantee"].is_object() && spec["guarantee"].contains("resource"))
        q.guarantee =
            parse_resource_list(spec["guarantee"]["resource"], reg, detail::join_path(sp, "guarantee.resource"), &diag);
      std::string state = "Open";
      if (obj.contains("status") && obj["status"].is_object())
        state = field_or<std::string>(obj["status"], "state", state, detail::join_path(path, "status"));
      if (state != "Open" && state != "Closed" && state != "Closing" && state != "Unknown")
        diag.add(detail::join_path(path, "status.state"), "expected Open, Closed or Closing, got '" + state + "'");
      q.open = state == "Open";
    } catch (const error& e) {
      diag.add(path, e.what());
      return;
    }
    out.push_back(std::move(q));
  });
  if (!diag.empty()) throw validation_error(diag.items());
  return out;
}

/// Builds capacity queues from Queue objects. The tracked dimensions are the
/// total's plus every resource a queue lists.
[[nodiscard]] inline capacity_queues load_capacity_queues(const json& doc, resource_registry& reg,
                                                          const resource_vector& total, capacity_options opts = {}) {
  auto specs = parse_capacity_queues(doc, reg);
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
  return capacity_queues(std::move(dims), total, std::move(specs), opts);
}

}  // namespace quota
