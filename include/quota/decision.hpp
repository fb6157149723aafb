// SPDX-License-Identifier: Apache-2.0
// quota/decision.hpp — answers to admission-style questions.
//
// A denial is a normal result, not an exception: a decision is allowed, or
// denied with one or more machine-readable reasons (which model, which rule,
// which entity, which resource, the amounts involved). An allowed decision
// carries no reasons and never allocates.
// Docs: docs/architecture.md
#pragma once

#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <quota/resource.hpp>

namespace quota {

/// Why a model said no (or, for explain, what it noticed).
struct reason {
  /// The model that decided, e.g. "elastic_quota" (static string).
  std::string_view model;
  /// A stable rule identifier, e.g. "over_max" (static string).
  std::string_view rule;
  /// The entity the rule was checked for: a queue path, quota name, user...
  std::string entity;
  /// The resource involved, or no_resource when the rule is not about one.
  resource_id resource = no_resource;
  /// Name of the resource (a view into the registry or a static string).
  std::string_view resource_name;
  /// Amounts involved, in the resource's base unit: what the request asks,
  /// what is in use already, and the limit it would pass.
  std::int64_t requested = 0;
  std::int64_t used = 0;
  std::int64_t limit = 0;
  /// Free text for people; may be empty.
  std::string message;

  friend bool operator==(const reason&, const reason&) = default;
};

class decision {
 public:
  decision() = default;  // allowed

  [[nodiscard]] static decision allow() noexcept { return decision{}; }
  [[nodiscard]] static decision deny(reason r) {
    decision d;
    d.add(std::move(r));
    return d;
  }

  [[nodiscard]] bool allowed() const noexcept { return reasons_.empty(); }
  [[nodiscard]] bool denied() const noexcept { return !reasons_.empty(); }
  explicit operator bool() const noexcept { return allowed(); }

  [[nodiscard]] const std::vector<reason>& reasons() const noexcept { return reasons_; }
  /// Adds a reason; the decision is denied from then on.
  void add(reason r) { reasons_.push_back(std::move(r)); }
  /// Folds another decision's reasons into this one (used by the engine).
  void merge(const decision& other) { reasons_.insert(reasons_.end(), other.reasons_.begin(), other.reasons_.end()); }
  /// merge() that moves the reasons (their strings) instead of copying them.
  void merge(decision&& other) {
    if (reasons_.empty()) {
      reasons_.swap(other.reasons_);
      return;
    }
    reasons_.insert(reasons_.end(), std::make_move_iterator(other.reasons_.begin()),
                    std::make_move_iterator(other.reasons_.end()));
  }
  /// Is there a reason with this rule (and, if given, this model)?
  [[nodiscard]] bool has_rule(std::string_view rule, std::string_view model = {}) const noexcept {
    for (const auto& r : reasons_)
      if (r.rule == rule && (model.empty() || r.model == model)) return true;
    return false;
  }

  friend bool operator==(const decision&, const decision&) = default;

 private:
  std::vector<reason> reasons_;
};

/// Appends the one-line text of a reason to `s` (no allocation when `s` has
/// room): `model.rule [entity] resource: requested R, used U, limit L - message`,
/// each part only when the reason has it. A reason about a resource it does
/// not name is printed with `resource_name` (a registry's name for it) when
/// given, else as `resource#<id>`.
inline void append_text(std::string& s, const reason& r, std::string_view resource_name = {}) {
  const auto number = [&s](std::int64_t v) {
    char buf[24];
    s.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  };
  s.append(r.model);
  s.push_back('.');
  s.append(r.rule);
  if (!r.entity.empty()) {
    s.append(" [");
    s.append(r.entity);
    s.push_back(']');
  }
  if (r.resource != no_resource) {
    s.append(" ");
    if (!r.resource_name.empty()) {
      s.append(r.resource_name);
    } else if (!resource_name.empty()) {
      s.append(resource_name);
    } else {
      s.append("resource#");
      number(static_cast<std::int64_t>(r.resource));
    }
    s.append(": requested ");
    number(r.requested);
    s.append(", used ");
    number(r.used);
    s.append(", limit ");
    number(r.limit);
  }
  if (!r.message.empty()) {
    s.append(" - ");
    s.append(r.message);
  }
}

/// One-line text of a reason, without fmt (fmt users: quota/fmt.hpp).
[[nodiscard]] inline std::string to_string(const reason& r) {
  std::string s;
  append_text(s, r);
  return s;
}

[[nodiscard]] inline std::string to_string(const decision& d) {
  if (d.allowed()) return "allowed";
  std::string s = "denied: ";
  bool first = true;
  for (const auto& r : d.reasons()) {
    if (!first) s.append("; ");
    first = false;
    s.append(to_string(r));
  }
  return s;
}

}  // namespace quota
