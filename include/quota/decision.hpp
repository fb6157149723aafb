// SPDX-License-Identifier: Apache-2.0
// quota/decision.hpp — answers to admission-style questions.
//
// A denial is a normal result, not an exception: a decision is allowed, or
// denied with one or more machine-readable reasons (which model, which rule,
// which entity, which resource, the amounts involved). An allowed decision
// carries no reasons and never allocates. A reason's text is made only when
// asked: the model leaves the names and numbers it needs (reason_note).
// Docs: docs/architecture.md
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <quota/resource.hpp>

namespace quota {

/// The free text of a reason, made only when someone reads it. A note is one
/// of: empty; a fixed text (a string literal: only constant text converts
/// implicitly, so no note points into a string that dies); a text made by the
/// caller (`reason_note(std::string)`, for rare paths); or a formatter with
/// the names and numbers it reads. The names are copied into the note (into
/// its own buffer while they fit, so a denial allocates nothing for them), so
/// a note outlives the model that made it. Notes compare by their text.
class reason_note {
 public:
  /// Appends the text of `note` to `out`, reading note.name(i) and note.number(i).
  using format_fn = void (*)(std::string& out, const reason_note& note);
  static constexpr std::size_t max_names = 3;
  static constexpr std::size_t max_numbers = 8;

  reason_note() = default;
  /// A fixed text; consteval: only constant text (string literals) converts.
  template <std::size_t N>
  consteval reason_note(const char (&text)[N]) noexcept  // NOLINT(google-explicit-constructor)
      : fixed_(text, N - 1) {}
  /// A text the caller made.
  explicit reason_note(std::string text) : owned_(std::make_shared<const std::string>(std::move(text))) {}
  /// A constant text with places for names ($0, $1, $2) and numbers (#0 to #7).
  struct pattern {
    std::string_view text;
    template <std::size_t N>
    consteval pattern(const char (&t)[N]) noexcept  // NOLINT(google-explicit-constructor)
        : text(t, N - 1) {}
  };
  /// Text made when asked from `p`, the names (copied) and the numbers.
  reason_note(pattern p, std::initializer_list<std::string_view> names,
              std::initializer_list<std::int64_t> numbers = {})
      : reason_note(&fill_pattern, names, numbers) {
    fixed_ = p.text;
  }
  /// Text made when asked: `format` reads the names (copied) and numbers.
  reason_note(format_fn format, std::initializer_list<std::string_view> names,
              std::initializer_list<std::int64_t> numbers)
      : format_(format) {
    std::size_t total = 0;
    for (auto n : names) total += n.size();
    const bool inline_names = total <= inline_capacity;
    std::string spilled;
    std::size_t at = 0, i = 0;
    for (auto n : names) {
      if (i == max_names) break;
      if (inline_names) {
        std::copy(n.begin(), n.end(), inline_ + at);
      } else {
        spilled.append(n);
      }
      at += n.size();
      ends_[i++] = static_cast<std::uint32_t>(at);
    }
    names_ = static_cast<std::uint8_t>(i);
    if (!inline_names) {
      owned_ = std::make_shared<const std::string>(std::move(spilled));
      heap_names_ = true;
    }
    i = 0;
    for (auto v : numbers) {
      if (i == max_numbers) break;
      numbers_[i++] = v;
    }
  }

  /// Whether the note says anything (a formatter counts as saying something).
  [[nodiscard]] bool empty() const noexcept {
    return format_ == nullptr && fixed_.empty() && (owned_ == nullptr || owned_->empty());
  }
  /// The i-th name given to the formatter (empty past the last).
  [[nodiscard]] std::string_view name(std::size_t i) const noexcept {
    if (i >= names_) return {};
    const std::size_t from = i == 0 ? 0 : ends_[i - 1];
    const char* base = heap_names_ ? owned_->data() : inline_;
    return {base + from, static_cast<std::size_t>(ends_[i] - from)};
  }
  /// The i-th number given to the formatter (0 past the last).
  [[nodiscard]] std::int64_t number(std::size_t i) const noexcept { return i < max_numbers ? numbers_[i] : 0; }
  /// The pattern of a note made from one (empty otherwise).
  [[nodiscard]] std::string_view pattern_text() const noexcept {
    return format_ == &fill_pattern ? fixed_ : std::string_view();
  }

  /// Appends the text (no allocation when `out` has room).
  void append_to(std::string& out) const {
    if (format_ != nullptr) {
      format_(out, *this);
    } else if (!fixed_.empty()) {
      out.append(fixed_);  // a fixed text (a pattern has format_ set)
    } else if (owned_ != nullptr) {
      out.append(*owned_);
    }
  }
  /// The text.
  [[nodiscard]] std::string str() const {
    std::string s;
    append_to(s);
    return s;
  }

  /// Appends a number in decimal (for formatters).
  static void append_number(std::string& out, std::int64_t v) {
    char buf[24];
    out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }

  friend bool operator==(const reason_note& a, const reason_note& b) { return a.str() == b.str(); }
  template <class S>
  requires(!std::is_same_v<std::remove_cvref_t<S>, reason_note> &&
           std::is_convertible_v<const S&, std::string_view>) friend bool
  operator==(const reason_note& a, const S& b) {
    return a.str() == std::string_view(b);
  }

 private:
  static constexpr std::size_t inline_capacity = 48;
  static void fill_pattern(std::string& out, const reason_note& n) {
    const std::string_view p = n.fixed_;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const char c = p[i];
      const bool place = (c == '$' || c == '#') && i + 1 < p.size() && p[i + 1] >= '0' && p[i + 1] <= '9';
      if (!place) {
        out.push_back(c);
        continue;
      }
      const auto k = static_cast<std::size_t>(p[++i] - '0');
      if (c == '$') {
        out.append(n.name(k));
      } else {
        append_number(out, n.number(k));
      }
    }
  }
  format_fn format_ = nullptr;
  std::string_view fixed_;
  // the caller's text, or the names when they do not fit inline_ (shared:
  // a copied note copies no text)
  std::shared_ptr<const std::string> owned_;
  std::array<std::int64_t, max_numbers> numbers_{};
  std::array<std::uint32_t, max_names> ends_{};
  std::uint8_t names_ = 0;
  bool heap_names_ = false;
  char inline_[inline_capacity] = {};
};

/// The text of a note.
[[nodiscard]] inline std::string to_string(const reason_note& n) {
  return n.str();
}

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
  /// Free text for people, made when read (message.str()); may be empty.
  reason_note message;

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
  /// Adds a reason; the decision is denied from then on. The first reason
  /// makes room for a few (one allocation where most denials need up to 4).
  void add(reason r) {
    if (reasons_.capacity() == 0) reasons_.reserve(4);
    reasons_.push_back(std::move(r));
  }
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
  const auto number = [&s](std::int64_t v) { reason_note::append_number(s, v); };
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
    r.message.append_to(s);
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
