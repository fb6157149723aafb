// SPDX-License-Identifier: Apache-2.0
// quota/error.hpp — the one error hierarchy of the library: typed errors with stable
// ids and messages that name the offending item.
// Docs: docs/architecture.md
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quota {

/// Numbered error ids. The number is part of the public contract.
enum class error_id : std::uint16_t {
  // parse errors (1xx): malformed input text or documents
  parse_malformed_quantity = 101,
  parse_negative_quantity = 102,
  parse_too_precise = 103,
  parse_quantity_out_of_range = 104,
  parse_malformed_document = 105,
  parse_wrong_type = 106,
  parse_missing_field = 107,
  parse_invalid_name = 108,
  // validation errors (2xx): well-formed input that breaks a rule
  validation_failed = 201,
  // unknown entities (3xx)
  unknown_resource = 301,
  unknown_queue = 302,
  unknown_user = 303,
  unknown_job = 304,
  unknown_entity = 305,
  // arithmetic overflow (4xx)
  overflow = 401,
  // state errors (5xx): the call does not fit the current state
  state_conflict = 501,
  state_duplicate = 502,
  state_negative_usage = 503,
  state_out_of_order = 504,
  state_not_admitted = 505,
};

/// One problem found in a document, with the path of the offending item
/// (a JSON-pointer-like path or a queue path) and what was expected.
struct diagnostic {
  std::string path;
  std::string message;

  friend bool operator==(const diagnostic&, const diagnostic&) = default;
};

/// Base class of every exception thrown by the library.
class error : public std::runtime_error {
 public:
  [[nodiscard]] error_id id() const noexcept { return id_; }
  [[nodiscard]] int number() const noexcept { return static_cast<int>(id_); }

 protected:
  error(std::string_view kind, error_id id, std::string_view what)
      : std::runtime_error(compose(kind, id, what)), id_(id) {}

 private:
  static std::string compose(std::string_view kind, error_id id, std::string_view what) {
    std::string s = "[quota.";
    s.append(kind);
    s.push_back('.');
    s.append(std::to_string(static_cast<int>(id)));
    s.append("] ");
    s.append(what);
    return s;
  }
  error_id id_;
};

/// Malformed text or document (quantities, JSON objects, CSV).
class parse_error : public error {
 public:
  parse_error(error_id id, std::string_view what) : error("parse_error", id, what) {}
};

/// A well-formed configuration that breaks a rule. Holds every problem of
/// the document at once; what() lists them all.
class validation_error : public error {
 public:
  explicit validation_error(std::vector<diagnostic> problems)
      : error("validation_error", error_id::validation_failed, render(problems)), problems_(std::move(problems)) {}
  validation_error(std::string path, std::string message)
      : validation_error(std::vector<diagnostic>{{std::move(path), std::move(message)}}) {}

  [[nodiscard]] const std::vector<diagnostic>& problems() const noexcept { return problems_; }

 private:
  static std::string render(const std::vector<diagnostic>& problems) {
    std::string s = std::to_string(problems.size());
    s.append(problems.size() == 1 ? " problem: " : " problems: ");
    bool first = true;
    for (const auto& p : problems) {
      if (!first) s.append("; ");
      first = false;
      s.append(p.path);
      s.append(": ");
      s.append(p.message);
    }
    return s;
  }
  std::vector<diagnostic> problems_;
};

/// A name or id that the library does not know (resource, queue, user, job).
class unknown_entity_error : public error {
 public:
  unknown_entity_error(error_id id, std::string_view kind, std::string_view name)
      : error("unknown_entity", id, compose(kind, name)), name_(name) {}
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  static std::string compose(std::string_view kind, std::string_view name) {
    std::string s = "unknown ";
    s.append(kind);
    s.append(" '");
    s.append(name);
    s.push_back('\'');
    return s;
  }
  std::string name_;
};

/// An amount that does not fit its representation. Never wraps, never saturates.
class overflow_error : public error {
 public:
  explicit overflow_error(std::string_view what) : error("overflow_error", error_id::overflow, what) {}
};

/// A call that does not fit the current state (double release, usage that
/// would go negative, events out of order, duplicate ids).
class state_error : public error {
 public:
  state_error(error_id id, std::string_view what) : error("state_error", id, what) {}
};

/// A bad setting of a model built in code (budget, priority-class quota, sharing pools): a
/// validation_error (201) whose problems name the item (its path in the
/// configuration, or the model) and what is wrong.
class config_error : public validation_error {
 public:
  /// `what` is "<model>: <item>: <problem>"; the model is the problem's path.
  explicit config_error(std::string_view what) : validation_error(split(what).first, split(what).second) {}
  /// Several problems, each at the path of its item in the configuration.
  explicit config_error(std::vector<diagnostic> problems) : validation_error(std::move(problems)) {}

 private:
  static std::pair<std::string, std::string> split(std::string_view what) {
    const auto colon = what.find(": ");
    if (colon == std::string_view::npos) return {std::string(), std::string(what)};
    return {std::string(what.substr(0, colon)), std::string(what.substr(colon + 2))};
  }
};

/// Collects diagnostics while a document is checked, then throws them all at once.
class diagnostics {
 public:
  void add(std::string path, std::string message) { items_.push_back({std::move(path), std::move(message)}); }
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] const std::vector<diagnostic>& items() const noexcept { return items_; }
  /// Throws validation_error with every collected problem, if there is any.
  void throw_if_any() const {
    if (!items_.empty()) throw validation_error(items_);
  }

 private:
  std::vector<diagnostic> items_;
};

}  // namespace quota
