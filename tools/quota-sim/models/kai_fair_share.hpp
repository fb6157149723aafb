// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of KAI's hierarchical fair share: builds
// "kai_fair_share" entries (listed in models.cpp).
// Docs: docs/kai-fair-share.md ("In quota-sim")
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <quota/kai_fair_share.hpp>
#include <quota/kai_fair_share_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim {

namespace detail {

/// A queue's fair share and allocated per resource, and its dominant share
/// as KAI's queue order compares it (6 decimals and exact), read from the
/// introspection (quota/kai_fair_share_json.hpp).
inline json kai_fair_share_answer(const any_policy& current, const query_spec& q) {
  const auto* p = current.target<kai_fair_share_policy>();
  if (!p) throw state_error(error_id::state_conflict, "kai_fair_share query: not a kai_fair_share model");
  const auto& t = p->tree();
  const auto i = t.at(q.queue);
  json fair = json::object(), alloc = json::object();
  for (auto id : t.resources()) {
    const std::string n = introspection_name(t.registry(), id);
    fair[n] = t.fair_share(i, id);
    alloc[n] = t.allocated(i, id);
  }
  const rational share = kai_fair_share_dominant_exact(t, i);
  return json{{"fair_share", std::move(fair)},
              {"allocated", std::move(alloc)},
              {"share", decimal_string(share, 6)},
              {"share_exact", fraction_string(share)}};
}

inline model_instance kai_fair_share_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry(ps, {"objects", "options"});
  entry.require("objects", "the KAI Queue objects");
  kai_fair_share_json_options opt;
  kai_fair_share_options fopt;
  entry.options({string_option("gpuResource", opt.gpu_resource, false),
                 flag_option("upstream", fopt.upstream),
                 flag_option("remainderAfterAllBuckets", fopt.remainder_after_all_buckets),
                 choice_option<kai_fair_share_saturation_placement>(
                     "saturationPlacement",
                     {{"sibling_ratio", kai_fair_share_saturation_placement::sibling_ratio},
                      {"can_reclaim_bound", kai_fair_share_saturation_placement::can_reclaim_bound}},
                     fopt.saturation_placement),
                 {"saturationMultiplier", [&fopt](const json& v, const std::string& path, diagnostics& diag) {
                    if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer() &&
                        v[1].get<std::int64_t>() > 0) {
                      fopt.saturation_num = v[0].get<std::int64_t>();
                      fopt.saturation_den = v[1].get<std::int64_t>();
                    } else {
                      diag.add(path, "expected [numerator, denominator]: two integers, the denominator above 0");
                    }
                  }}});
  entry.throw_if_any();
  std::vector<kai_fair_share_queue_spec> specs;
  entry.load("objects", [&] { specs = load_kai_fair_share_queues(entry["objects"], sc.registry, opt); });
  entry.throw_if_any();
  check_query_names(
      entry, sc, "kai_fair_share", ".queue.name",
      [&](const std::string& q) {
        return std::any_of(specs.begin(), specs.end(),
                           [&](const kai_fair_share_queue_spec& sp) { return sp.name == q; });
      },
      [](const std::string& q) { return "no KAI Queue '" + q + "' in the kai_fair_share model"; });
  entry.throw_if_any();
  if (fopt.upstream) fopt.whole_units = kai_fair_share_whole_units(sc.registry, opt);
  std::unique_ptr<kai_fair_share_model> tree;
  entry.load("objects", [&] { tree = std::make_unique<kai_fair_share_model>(std::move(specs), fopt); });
  entry.throw_if_any();
  resource_vector capacity;
  for (const auto& n : sc.nodes) capacity.add_in_place(n.allocatable);
  tree->set_capacity(capacity);
  tree->compute();
  // the model names resources (reasons, introspection) by a copy of the
  // scenario's registry, which the instance's functions keep alive
  auto reg = std::make_shared<const resource_registry>(sc.registry);
  tree->rebind_registry(reg.get());
  kai_fair_share_policy pol(std::move(*tree));
  pol.set_deny_beyond_capacity(true);  // the sim's placement does not run KAI's reclaim by itself
  model_instance mi{any_policy(std::move(pol)), {}, {}, {}, {}, {}, {}, {}};
  mi.introspect = [reg](const any_policy& p) {
    (void)reg;
    json j;
    if (const auto* m = p.target<kai_fair_share_policy>()) to_json(j, *m);  // quota/kai_fair_share_json.hpp
    return j;
  };
  mi.query = [reg](const any_policy& current, const query_spec& q) {
    (void)reg;
    return kai_fair_share_answer(current, q);
  };
  return mi;
}

inline json kai_fair_share_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                      const resource_registry& reg) {
  // one queue per tenant under a root; quota = even share of the GPUs, weight 1, no limit
  // the `gpu` amounts are read in the units of gpuResource (devices for
  // nvidia.com/gpu, thousandths for alibaba.com/gpu-milli), so the even
  // share is written in those units
  const auto gpu = gpu_dimension(capacity, reg).first;
  const std::string gname(reg.name(gpu));
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  json objs = json::array();
  const json unlimited{{"quota", -1}, {"overQuotaWeight", 1}, {"limit", -1}};
  json root;
  root["metadata"]["name"] = "root";
  root["spec"]["resources"]["gpu"] = unlimited;
  root["spec"]["resources"]["cpu"] = unlimited;
  root["spec"]["resources"]["memory"] = unlimited;
  objs.push_back(root);
  for (const auto& t : tenants) {
    json q;
    q["metadata"]["name"] = t;
    q["spec"]["parentQueue"] = "root";
    q["spec"]["resources"]["gpu"] = json{{"quota", capacity.get(gpu) / n}, {"overQuotaWeight", 1}, {"limit", -1}};
    // cpu and memory get an even share too: an omitted quota is 0, and
    // non-preemptible jobs must fit within quota in every resource
    // (KAI units: cpu millicores, memory MB of 10^6 bytes)
    q["spec"]["resources"]["cpu"] =
        json{{"quota", capacity.get(resources::cpu) / n}, {"overQuotaWeight", 1}, {"limit", -1}};
    q["spec"]["resources"]["memory"] =
        json{{"quota", capacity.get(resources::memory) / 1'000'000 / n}, {"overQuotaWeight", 1}, {"limit", -1}};
    objs.push_back(q);
  }
  json out;
  out["model"] = "kai_fair_share";
  out["objects"] = objs;
  out["options"]["gpuResource"] = gname;
  return out;
}

}  // namespace detail

}  // namespace quota::sim
