// SPDX-License-Identifier: Apache-2.0
// quota/detail/volcano_queue_json.hpp — the fields of a Volcano Queue object
// (`kubectl get queues -o json`) that our two Volcano models read: the
// proportion plugin's view (volcano_json.hpp: weight, capability,
// guarantee) and the capacity plugin's (volcano_capacity_json.hpp: deserved,
// capability, guarantee, priority). One reader, so both agree on defaults,
// paths in errors and which status.state values exist.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <quota/detail/rfc3339.hpp>
#include <quota/json.hpp>

namespace quota::detail {

struct volcano_queue_object {
  std::string name;
  std::string parent;  // "" for spec.parent absent or "root"
  std::int64_t weight = 1;
  std::int32_t priority = 0;
  std::int64_t created_ms = 0;  // metadata.creationTimestamp (0: absent)
  bool reclaimable = true;
  std::string state = "Open";  // Open, Closed, Closing or Unknown (Volcano's QueueState values)
  resource_vector deserved;
  resource_vector capability;
  resource_vector guarantee;
};

/// Moves the fields both Volcano models' queue specs have (name, parent,
/// priority, creation time, reclaimable, capability, guarantee) from `o` into `q`.
template <class Spec>
void move_common_queue_fields(volcano_queue_object& o, Spec& q) {
  q.name = std::move(o.name);
  q.parent = std::move(o.parent);
  q.priority = o.priority;
  q.created_ms = o.created_ms;
  q.reclaimable = o.reclaimable;
  q.capability = std::move(o.capability);
  q.guarantee = std::move(o.guarantee);
}

/// Calls f(queue) for every Queue of `doc` (a single object, a List or an
/// array). Every problem of the document is collected and thrown at once as
/// one validation_error naming the item; f is then never called.
template <class F>
void for_each_volcano_queue(const json& doc, resource_registry& reg, F&& f) {
  std::vector<volcano_queue_object> out;
  diagnostics diag;
  for_each_object(doc, [&](const json& obj, const std::string& path) {
    volcano_queue_object q;
    try {
      q.name = object_name(obj, path);
      if (const json* md = object_section(obj, "metadata", path, diag); md && md->contains("creationTimestamp")) {
        const json& ts = (*md)["creationTimestamp"];
        if (!ts.is_string() || !parse_rfc3339_utc_ms(ts.get<std::string>(), q.created_ms))
          diag.add(join_path(path, "metadata.creationTimestamp"), "expected an RFC 3339 UTC time");
      }
      const json empty = json::object();
      const json* spec_p = object_section(obj, "spec", path, diag);
      const json& spec = spec_p ? *spec_p : empty;
      const std::string sp = join_path(path, "spec");
      q.weight = field_or<std::int64_t>(spec, "weight", 1, sp);
      q.priority = field_or<std::int32_t>(spec, "priority", 0, sp);
      q.reclaimable = field_or<bool>(spec, "reclaimable", true, sp);
      q.parent = field_or<std::string>(spec, "parent", std::string{}, sp);
      if (q.parent == "root") q.parent.clear();
      if (spec.contains("deserved"))
        q.deserved = parse_resource_list(spec["deserved"], reg, join_path(sp, "deserved"), &diag);
      if (spec.contains("capability"))
        q.capability = parse_resource_list(spec["capability"], reg, join_path(sp, "capability"), &diag);
      if (const json* g = object_section(spec, "guarantee", sp, diag); g && g->contains("resource"))
        q.guarantee = parse_resource_list((*g)["resource"], reg, join_path(sp, "guarantee.resource"), &diag);
      if (const json* st = object_section(obj, "status", path, diag))
        q.state = field_or<std::string>(*st, "state", q.state, join_path(path, "status"));
      if (q.state != "Open" && q.state != "Closed" && q.state != "Closing" && q.state != "Unknown")
        diag.add(join_path(path, "status.state"), "expected Open, Closed, Closing or Unknown, got '" + q.state + "'");
    } catch (const error& e) {
      diag.add(path, e.what());
      return;
    }
    out.push_back(std::move(q));
  });
  if (!diag.empty()) throw validation_error(diag.items());
  for (auto& q : out) f(std::move(q));
}

}  // namespace quota::detail
