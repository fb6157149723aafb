// SPDX-License-Identifier: Apache-2.0
// quota/fmt.hpp — opt-in {fmt} integration.
//
//   fmt::format("{}", decision)               "allowed" / "denied: model.rule [entity] ..."
//   fmt::format("{}", quantity)               canonical Kubernetes text
//   fmt::format("{}", quota::named(v, reg))   "{cpu: 2, memory: 4Gi}"
// Docs: docs/architecture.md
#pragma once

#include <string>

#include <fmt/format.h>

#include <quota/decision.hpp>
#include <quota/quantity.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// A vector paired with the registry that names its resources, for printing.
template <class Vector>
struct named_vector {
  const Vector& vector;
  const resource_registry& registry;
};
template <class Vector>
[[nodiscard]] named_vector<Vector> named(const Vector& v, const resource_registry& reg) {
  return {v, reg};
}

}  // namespace quota

template <>
struct fmt::formatter<quota::quantity> : fmt::formatter<std::string> {
  template <class Ctx>
  auto format(const quota::quantity& q, Ctx& ctx) const {
    return fmt::formatter<std::string>::format(q.to_string(), ctx);
  }
};

template <>
struct fmt::formatter<quota::reason> : fmt::formatter<std::string> {
  template <class Ctx>
  auto format(const quota::reason& r, Ctx& ctx) const {
    return fmt::formatter<std::string>::format(quota::to_string(r), ctx);
  }
};

template <>
struct fmt::formatter<quota::decision> : fmt::formatter<std::string> {
  template <class Ctx>
  auto format(const quota::decision& d, Ctx& ctx) const {
    return fmt::formatter<std::string>::format(quota::to_string(d), ctx);
  }
};

template <class Vector>
struct fmt::formatter<quota::named_vector<Vector>> : fmt::formatter<std::string> {
  template <class Ctx>
  auto format(const quota::named_vector<Vector>& nv, Ctx& ctx) const {
    std::string s = "{";
    bool first = true;
    for (const auto& e : nv.vector) {
      if (!first) s += ", ";
      first = false;
      const auto& info = nv.registry.info(e.id);
      const bool bytes = info.name == "memory" || info.name == "ephemeral-storage";
      s += info.name;
      s += ": ";
      s += quota::format_amount(static_cast<std::int64_t>(e.value), info.scale,
                                bytes ? quota::quantity_format::binary_si : quota::quantity_format::decimal_si);
    }
    if constexpr (Vector::absent == quota::absent_means::unlimited) s += first ? "unlimited" : ", others unlimited";
    s += "}";
    return fmt::formatter<std::string>::format(s, ctx);
  }
};
