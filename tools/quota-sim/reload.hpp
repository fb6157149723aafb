// SPDX-License-Identifier: Apache-2.0
// quota-sim reload events: which models accept a new configuration at a
// given time, and the load-time check of every reload body.
// Docs: docs/scenario-format.md ("Reload events and quota shrink")
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "model_registry.hpp"
#include "policy_entry.hpp"

namespace quota::sim {

/// The models a reload event may name.
[[nodiscard]] inline const std::set<std::string, std::less<>>& reloadable_models() {
  static const std::set<std::string, std::less<>> m{
      "budget",        "elastic_quota", "kai_fair_share",   "kueue",          "running_limits", "priority_class_quota",
      "sharing_pools", "volcano",       "volcano_capacity", "yunikorn_limits"};
  return m;
}

/// The time of the first reload of policy `i` after `after_ms` that is to
/// apply (one that expects no error), or the end of time: until then the
/// configuration in force at `after_ms` stays.
[[nodiscard]] inline std::int64_t next_reload_ms(const scenario& sc, std::size_t i, std::int64_t after_ms) {
  std::int64_t out = std::numeric_limits<std::int64_t>::max();
  for (const auto& ev : sc.events)
    if (ev.type == "reload" && ev.policy == i && ev.expect_error.empty() && ev.at_ms > after_ms)
      out = std::min(out, ev.at_ms);
  return out;
}

/// Checks every reload event's body against its model (after the scenario
/// loaded). Problems go to `diag` with the event's path. A body's checks of
/// the jobs cover those submitted while it is in force: from its time to the
/// next reload of that policy (a job that ended before it may name a queue it
/// drops; one that still waits then makes the reload refused at run time).
inline void validate_reloads(scenario& sc, diagnostics& diag) {
  std::map<std::size_t, std::optional<model_instance>> entries;  // a policy's own entry, built once
  for (const auto& ev : sc.events) {
    if (ev.type != "reload" || ev.refused || ev.policy >= sc.policies.size()) continue;
    sc.check_jobs_from_ms = ev.at_ms;
    sc.check_jobs_until_ms = next_reload_ms(sc, ev.policy, ev.at_ms);
    const auto& target = sc.policies[ev.policy];
    if (!reloadable_models().count(target.model)) {
      std::string known;
      for (const auto& m : reloadable_models()) known += (known.empty() ? "" : ", ") + m;
      diag.add(ev.path + ".policy", "reload not supported for model " + target.model + " (supported: " + known + ")");
      continue;
    }
    auto it = model_kinds().find(target.model);
    if (it == model_kinds().end()) continue;  // reported with the policy itself
    const policy_spec ps{target.model, ev.policy_body, ev.path};
    const auto next = build_entry(it->second, ps, sc, diag);
    if (!next || !next->reload_conflict) continue;
    // what cannot change in place is the same in every configuration of the
    // policy, so the policy's own entry stands for the one in force
    auto in_force = entries.find(ev.policy);
    if (in_force == entries.end()) {
      diagnostics ignored;  // its problems are reported with the policy itself
      sc.check_jobs_from_ms = 0;
      sc.check_jobs_until_ms = std::numeric_limits<std::int64_t>::max();
      in_force = entries.emplace(ev.policy, build_entry(it->second, target, sc, ignored)).first;
    }
    if (!in_force->second) continue;
    if (std::string why = next->reload_conflict(in_force->second->policy); !why.empty())
      diag.add(ev.path, std::move(why));
  }
}

/// The models whose quota shrink may evict (`shrink.behaviour`
/// "evict_after_grace"): all that are reloadable but budget, whose running
/// jobs a lower budget does not evict (its admissions stop; what was spent
/// stays spent).
inline void validate_shrink(const scenario& sc, diagnostics& diag) {
  for (std::size_t i = 0; i < sc.policies.size() && i < sc.shrink.size(); ++i)
    if (sc.shrink[i].evict && sc.policies[i].model == "budget")
      diag.add(sc.policies[i].path + ".shrink.behaviour",
               "a lower budget evicts nothing (its admissions stop; what was spent stays spent): use keep");
}

}  // namespace quota::sim
