// SPDX-License-Identifier: Apache-2.0
// quota/running_limits_json.hpp — running-job limits from JSON.
//
//   {"queues": {"team-a": 3, "*": 10}, "users": {"*": 5}, "namespaces": {"batch": 20}}
//
// "*" is the limit of every entity of that scope without an entry of its own.
// Every problem of the document is reported at once (validation_error), and a
// rejected document changes nothing.
// Docs: docs/extra-policies.md
#pragma once

#include <string>

#include <quota/json.hpp>
#include <quota/running_limits.hpp>

namespace quota {

/// Reads limits from `j` (see the file comment); `path` prefixes error paths.
[[nodiscard]] inline running_limits_policy load_running_limits(const json& j, const std::string& path = "") {
  diagnostics diag;
  running_limits_policy rl;
  if (!j.is_object()) throw validation_error(path.empty() ? "$" : path, "expected an object");
  static constexpr std::pair<const char*, running_limits_policy::scope> keys[] = {{"queues", running_limits_policy::scope::queue},
                                                                           {"users", running_limits_policy::scope::user},
                                                                           {"namespaces", running_limits_policy::scope::ns}};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = it.key() == "model";
    for (const auto& k : keys) known = known || it.key() == k.first;
    if (!known) diag.add(detail::join_path(path, it.key()), "unknown field (queues, users, namespaces)");
  }
  for (const auto& [key, sc] : keys) {
    if (!j.contains(key)) continue;
    const auto& m = j[key];
    const std::string p = detail::join_path(path, key);
    if (!m.is_object()) {
      diag.add(p, "expected an object of name: max running jobs");
      continue;
    }
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string ip = detail::join_path(p, it.key());
      if (!it.value().is_number_integer()) {
        diag.add(ip, "expected an integer, got " + std::string(it.value().type_name()));
        continue;
      }
      const auto v = it.value().get<std::int64_t>();
      if (v < 0) {
        diag.add(ip, "max running jobs must be >= 0, got " + std::to_string(v));
        continue;
      }
      if (it.key().empty()) {
        diag.add(ip, "empty name");
        continue;
      }
      if (it.key() == "*")
        rl.set_default(sc, v);
      else
        rl.set_limit(sc, it.key(), v);
    }
  }
  diag.throw_if_any();
  return rl;
}

/// Introspection: {"queues": {"team-a": {"running": 2, "limit": 3}}, "users": {...}, "namespaces": {...}};
/// an entity without a limit shows "limit": "unlimited".
inline void to_json(json& j, const running_limits_policy& rl) {
  j = json::object();
  for (std::size_t s = 0; s < 3; ++s) {
    json scope = json::object();
    rl.for_each_entity(static_cast<running_limits_policy::scope>(s),
                       [&](std::string_view name, std::int64_t running, std::optional<std::int64_t> limit) {
                         json e{{"running", running}, {"limit", limit ? json(*limit) : json(unlimited_text)}};
                         scope[std::string(name)] = std::move(e);
                       });
    static constexpr const char* names[] = {"queues", "users", "namespaces"};
    j[names[s]] = std::move(scope);
  }
}

}  // namespace quota
