// SPDX-License-Identifier: Apache-2.0
// quota/detail/config_document.hpp — the shared reading of a small JSON config document.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <quota/json.hpp>

namespace quota::detail {

/// A config document (an object at `path`) read into a model: every problem
/// is collected at the path of its item and thrown at once as one
/// config_error; the registry is then as it was before the document
/// (strong guarantee).
class config_document {
 public:
  /// Throws config_error at `path` ("$" at the root) unless `j` is an object.
  config_document(const json& j, resource_registry& reg, const std::string& path)
      : reg_(reg), saved_(checked_object(j, path, reg)), path_(path), doc_(j) {}

  void bad(std::string path, std::string message) { problems_.push_back({std::move(path), std::move(message)}); }
  /// Every problem of `diag`, in its order.
  void bad(const diagnostics& diag) {
    for (const auto& d : diag.items()) bad(d.path, d.message);
  }
  /// Each key of the object `o` (at `at`) that is not one of `known`: "unknown field (known, ...)".
  void unknown_keys(const json& o, const std::string& at, std::initializer_list<std::string_view> known) {
    scan_keys(o, at, known, false);
  }
  /// unknown_keys of the document itself, where "model" (which names the model) is known too.
  void unknown_top_keys(std::initializer_list<std::string_view> known) { scan_keys(doc_, path_, known, true); }

  [[nodiscard]] bool empty() const noexcept { return problems_.empty(); }
  /// Throws every problem, the registry restored, when there is any.
  void throw_if_any() {
    if (!problems_.empty()) reject();
  }
  /// Throws every problem (there must be one), the registry restored.
  [[noreturn]] void reject() {
    reg_ = std::move(saved_);
    throw config_error(std::move(problems_));
  }

 private:
  static resource_registry checked_object(const json& j, const std::string& path, const resource_registry& reg) {
    if (!j.is_object()) throw config_error(std::vector<diagnostic>{{path.empty() ? "$" : path, "expected an object"}});
    return reg;
  }
  void scan_keys(const json& o, const std::string& at, std::initializer_list<std::string_view> known, bool top) {
    for (auto it = o.begin(); it != o.end(); ++it) {
      bool listed = top && it.key() == "model";
      for (const auto k : known) listed = listed || it.key() == k;
      if (listed) continue;
      std::string message = "unknown field (";
      for (const auto k : known) {
        if (message.back() != '(') message += ", ";
        message += k;
      }
      bad(join_path(at, it.key()), message + ")");
    }
  }

  resource_registry& reg_;
  resource_registry saved_;
  std::string path_;
  const json& doc_;
  std::vector<diagnostic> problems_;
};

}  // namespace quota::detail
