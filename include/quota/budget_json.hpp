// SPDX-License-Identifier: Apache-2.0
// quota/budget_json.hpp — budgets over time from JSON, and their introspection.
// Docs: docs/extra-policies.md
#pragma once

#include <string>

#include <quota/budget.hpp>
#include <quota/duration.hpp>
#include <quota/json.hpp>

namespace quota {

namespace detail {
/// A duration (quota/duration.hpp: "90s", "1h30m", "7d", ...) or an integer of ms; false when malformed.
inline bool budget_duration(const json& v, std::int64_t& out) {
  if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
    return true;
  }
  if (!v.is_string()) return false;
  const auto ms = parse_duration_ms(v.get_ref<const std::string&>());
  if (!ms) return false;
  out = *ms;
  return true;
}
}  // namespace detail

/// Reads a budget policy (see the file comment); `path` prefixes error paths.
[[nodiscard]] inline budget_policy load_budget(const json& j, resource_registry& reg, const std::string& path = "") {
  std::vector<std::string> problems;
  auto bad = [&](const std::string& key, const std::string& msg) {
    problems.push_back(detail::join_path(path, key) + ": " + msg);
  };
  if (!j.is_object()) throw config_error((path.empty() ? "$" : path) + ": expected an object");
  resource_registry saved = reg;  // restored when the document is rejected (strong guarantee)
  for (auto it = j.begin(); it != j.end(); ++it) {
    static constexpr const char* known[] = {"model",        "resource",        "tenant",      "window", "windowStart",
                                            "windowLength", "defaultDuration", "onExhausted", "budgets"};
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok)
      bad(it.key(),
          "unknown field (resource, tenant, window, windowStart, windowLength, defaultDuration, "
          "onExhausted, budgets)");
  }
  budget_config cfg;
  if (j.contains("resource")) {
    if (!j["resource"].is_string() || j["resource"].get<std::string>().empty())
      bad("resource", "expected a resource name");
    else {
      cfg.resource_name = j["resource"].get<std::string>();
      try {
        cfg.resource = reg.intern(cfg.resource_name);
        cfg.resource_name = std::string(reg.name(cfg.resource));
      } catch (const error& e) {
        bad("resource", e.what());
      }
    }
  }
  auto pick = [&](const char* key, std::initializer_list<std::string_view> names, auto& out, auto... vals) {
    if (!j.contains(key)) return;
    const auto& v = j[key];
    std::size_t i = 0;
    bool found = false;
    using T = std::remove_reference_t<decltype(out)>;
    const T values[] = {vals...};
    for (auto n : names) {
      if (v.is_string() && v.get<std::string>() == n) {
        out = values[i];
        found = true;
      }
      ++i;
    }
    if (!found) {
      std::string list;
      for (auto n : names) list += (list.empty() ? "" : " | ") + std::string(n);
      bad(key, "expected " + list + ", got " + v.dump());
    }
  };
  pick("tenant", {"queue", "namespace", "user", "group"}, cfg.tenant, budget_tenant::queue, budget_tenant::ns,
       budget_tenant::user, budget_tenant::group);
  pick("window", {"calendar", "rolling"}, cfg.window, budget_window::calendar, budget_window::rolling);
  pick("onExhausted", {"deny", "admit_preemptible"}, cfg.on_exhausted, budget_on_exhausted::deny,
       budget_on_exhausted::admit_preemptible);
  auto dur = [&](const char* key, std::int64_t& out, bool positive) {
    if (!j.contains(key)) return;
    if (!detail::budget_duration(j[key], out))
      bad(key, "expected a duration (ms, or \"90s\", \"5m\", \"2h\", \"7d\", \"1w\"), got " + j[key].dump());
    else if (positive && out <= 0)
      bad(key, "must be > 0, got " + std::to_string(out));
  };
  dur("windowStart", cfg.window_start_ms, false);
  dur("windowLength", cfg.window_ms, true);
  dur("defaultDuration", cfg.default_duration_ms, true);
  cfg.start_ms = 0;
  std::vector<std::pair<std::string, std::int64_t>> budgets;
  if (j.contains("budgets")) {
    const auto& b = j["budgets"];
    if (!b.is_object())
      bad("budgets", "expected an object of tenant: budget");
    else
      for (auto it = b.begin(); it != b.end(); ++it) {
        const std::string key = "budgets." + it.key();
        std::int64_t v = 0;
        if (it.key().empty()) {
          bad(key, "empty tenant name");
        } else if (it.value().is_number_integer()) {
          v = it.value().get<std::int64_t>();
          if (v < 0) bad(key, "budget must be >= 0, got " + std::to_string(v));
          budgets.emplace_back(it.key(), v);
        } else if (it.value().is_string() && detail::budget_duration(it.value(), v) &&
                   !it.value().get<std::string>().ends_with("ms")) {
          budgets.emplace_back(it.key(), v);  // n units × duration = n × ms
        } else {
          bad(key, "expected resource-ms (integer) or \"<count><unit>\" like \"500h\", got " + it.value().dump());
        }
      }
  } else {
    bad("budgets", "missing (tenant: budget)");
  }
  if (!problems.empty()) {
    reg = std::move(saved);
    std::string msg = "budget: ";
    for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw config_error(msg);
  }
  budget_policy p(cfg);
  for (const auto& [name, v] : budgets) p.set_budget(name, v);
  return p;
}

/// {"now", "window": {"kind", "start", "end"}, "tenants": {name: {"budget", "spent", "remaining",
/// "committed", "rate", "exhaustion" (ms or null)}}, "over_budget": [job ids]} — resource-ms. A
/// tenant a reload left without a budget (none of its own, no "*") has "budget" and
/// "remaining" null: it is not limited, and its spending is still counted.
inline void to_json(json& j, const budget_policy& b) {
  j = json{{"now", b.now_ms()},
           {"window",
            {{"kind", b.config().window == budget_window::calendar ? "calendar" : "rolling"},
             {"start", b.window_start()},
             {"end", b.window_end()}}},
           {"tenants", json::object()},
           {"over_budget", json::array()}};
  b.for_each_tenant([&](const budget_policy::tenant_status& s) {
    j["tenants"][std::string(s.name)] = json{{"budget", s.limited ? json(s.budget) : json()},
                                             {"spent", s.spent},
                                             {"remaining", s.limited ? json(s.remaining) : json()},
                                             {"committed", s.committed},
                                             {"rate", s.rate},
                                             {"exhaustion", s.exhaustion_ms ? json(*s.exhaustion_ms) : json()}};
  });
  for (auto id : b.over_budget_jobs()) j["over_budget"].push_back(std::string(id));
}

}  // namespace quota
