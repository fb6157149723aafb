// SPDX-License-Identifier: Apache-2.0
// quota/volcano_json.hpp — Volcano Queue and PodGroup objects from
// `kubectl get queues -o json` / `kubectl get podgroups -o json` (opt-in JSON),
// and the model's introspection (to_json).
// Docs: docs/volcano.md
#pragma once

#include <string>
#include <vector>

#include <quota/big_int.hpp>
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
    detail::move_common_queue_fields(o, q);
    q.weight = o.weight;
    // Unknown is the state of a queue Volcano lost track of: it schedules nothing new
    q.state = o.state == "Open"      ? volcano_queue_state::open
              : o.state == "Closing" ? volcano_queue_state::closing
                                     : volcano_queue_state::closed;
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

/// A queue's share in the proportion plugin, exactly: the largest allocated /
/// deserved over the resources with a positive deserved (Volcano's
/// updateQueueAttrShare; 0 when none), as volcano_model::exact_share orders queues.
[[nodiscard]] inline rational volcano_share_exact(const volcano_model& t, std::size_t q) {
  const volcano_queue_share s = t.exact_share(q);
  return rational(big_int(s.allocated)) * rational(to_big_int(s.deserved.den()), to_big_int(s.deserved.num()));
}

/// The model's state, per queue, resources named by the model's registry
/// (volcano_model::rebind_registry), amounts in base units:
///
///   {"queues": {"q1": {"weight": 1,
///      "guarantee": {"nvidia.com/gpu": 0}, "capability": {"nvidia.com/gpu": "unlimited"},
///      "realCapability": {...}, "deserved": {...} (floor), "deservedCeil": {...} (only where
///      deserved is fractional), "deservedExact": {"nvidia.com/gpu": "20/3"}, "deservedDecimal":
///      {"nvidia.com/gpu": "6.666667"}, "allocated": {...}, "inqueue": {...}, "elastic": {...},
///      "share": "0.900000", "shareExact": "9/10", "overused": false}}}
///
/// Every tracked resource is listed; an absent capability is "unlimited".
/// share is the queue's share in Volcano's queue order (6 decimals, rounded
/// half up, and exact); overused is deserved <= allocated in every resource.
inline void to_json(json& j, const volcano_model& t) {
  const resource_registry* reg = t.registry();
  auto bound = [](std::int64_t v) { return v == detail::queue_unlimited ? json(unlimited_text) : json(v); };
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < t.size(); ++q) {
    json e{{"weight", t.spec(q).weight}};
    const char* names[] = {"guarantee",       "capability", "realCapability", "deserved", "deservedExact",
                           "deservedDecimal", "allocated",  "inqueue",        "elastic"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < t.dims().size(); ++d) {
      const std::string r = introspection_name(reg, t.dims()[d]);
      e["guarantee"][r] = t.guarantee(q, d);
      e["capability"][r] = bound(t.capability(q, d));
      e["realCapability"][r] = bound(t.real_capability(q, d));
      e["deserved"][r] = t.deserved_floor(q, d);
      if (t.deserved_ceil(q, d) != t.deserved_floor(q, d)) e["deservedCeil"][r] = t.deserved_ceil(q, d);
      const rational exact = to_rational(t.deserved_exact(q, d));
      if (denominator(exact) == 1)
        e["deservedExact"][r] = t.deserved_floor(q, d);
      else
        e["deservedExact"][r] = fraction_string(exact);
      e["deservedDecimal"][r] = decimal_string(exact, 6);
      e["allocated"][r] = t.allocated(q, d);
      e["inqueue"][r] = t.inqueue(q, d);
      e["elastic"][r] = t.elastic(q, d);
    }
    const rational share = volcano_share_exact(t, q);
    e["share"] = decimal_string(share, 6);
    e["shareExact"] = fraction_string(share);
    e["overused"] = t.overused(q);
    j["queues"][t.spec(q).name] = std::move(e);
  }
}

/// The state of the model behind a policy adapter (see to_json(json&, const volcano_model&)).
inline void to_json(json& j, const volcano_policy& p) {
  to_json(j, p.tree());
}

}  // namespace quota
