// SPDX-License-Identifier: Apache-2.0
// quota/volcano_capacity_json.hpp — Volcano Queue objects for the capacity
// plugin from `kubectl get queues -o json` (opt-in JSON): spec.deserved,
// spec.capability, spec.guarantee.resource, spec.parent, spec.priority,
// spec.reclaimable, status.state; and the model's introspection (to_json).
// Docs: docs/volcano-capacity.md
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <quota/big_int.hpp>
#include <quota/detail/volcano_queue_json.hpp>
#include <quota/json.hpp>
#include <quota/volcano_capacity.hpp>

namespace quota {

/// Parses Queue objects (single, List or array). Every problem of the
/// document is reported at once in a validation_error naming the item.
[[nodiscard]] inline std::vector<volcano_capacity_queue_spec> parse_volcano_capacity(const json& doc,
                                                                                     resource_registry& reg) {
  std::vector<volcano_capacity_queue_spec> out;
  detail::for_each_volcano_queue(doc, reg, [&](detail::volcano_queue_object&& o) {
    volcano_capacity_queue_spec q;
    detail::move_common_queue_fields(o, q);
    q.open = o.state == "Open";
    q.deserved = std::move(o.deserved);
    out.push_back(std::move(q));
  });
  return out;
}

/// Builds capacity queues from Queue objects. The tracked dimensions are the
/// total's plus every resource a queue lists.
[[nodiscard]] inline volcano_capacity_model load_volcano_capacity(const json& doc, resource_registry& reg,
                                                                  const resource_vector& total,
                                                                  volcano_capacity_options opts = {}) {
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

/// The model's state, per queue, resources named by the model's registry
/// (volcano_capacity_model::rebind_registry), amounts in base units:
///
///   {"queues": {"eng-a": {"parent": "eng",
///      "deserved": {"nvidia.com/gpu": 2}, "guarantee": {...},
///      "capability": {"nvidia.com/gpu": "unlimited"}, "realCapability": {...},
///      "allocated": {...}, "inqueue": {...}, "elastic": {...},
///      "share": "0.500000", "shareExact": "1/2", "overused": false}}}
///
/// Every tracked resource is listed; an absent capability is "unlimited";
/// "parent" is absent for a queue without one. share is the queue's share in
/// the capacity plugin's queue order (volcano_capacity_model::share: 6
/// decimals, rounded half up, and exact); overused is share > 1.
inline void to_json(json& j, const volcano_capacity_model& c) {
  const resource_registry* reg = c.registry();
  auto bound = [](std::int64_t v) { return v == detail::cap_unlimited ? json(unlimited_text) : json(v); };
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < c.size(); ++q) {
    json e = json::object();
    if (c.parent(q) != volcano_capacity_model::npos) e["parent"] = c.name(c.parent(q));
    const char* names[] = {"deserved", "guarantee", "capability", "realCapability", "allocated", "inqueue", "elastic"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < c.dims().size(); ++d) {
      const std::string r = introspection_name(reg, c.dims()[d]);
      e["deserved"][r] = c.deserved(q, d);
      e["guarantee"][r] = c.guarantee(q, d);
      e["capability"][r] = bound(c.capability(q, d));
      e["realCapability"][r] = bound(c.real_capability(q, d));
      e["allocated"][r] = c.allocated(q, d);
      e["inqueue"][r] = c.inqueue(q, d);
      e["elastic"][r] = c.elastic(q, d);
    }
    const rational share = to_rational(c.share(q));
    e["share"] = decimal_string(share, 6);
    e["shareExact"] = fraction_string(share);
    e["overused"] = c.overused(q);
    j["queues"][c.name(q)] = std::move(e);
  }
}

/// The state of the model behind a policy adapter (see to_json(json&, const volcano_capacity_model&)).
inline void to_json(json& j, const volcano_capacity_policy& p) {
  to_json(j, p.model());
}

}  // namespace quota
