// SPDX-License-Identifier: Apache-2.0
// quota-sim: the reader every model adapter reads its policies[] entry (or a
// reload event's body) with: keys, typed options and the library's loaders,
// problems reported relative to the entry in one wording for every model.
// Docs: docs/scenario-format.md ("Validation and limits")
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <quota/error.hpp>
#include <quota/json.hpp>

#include "model_registry.hpp"
#include "scenario.hpp"

namespace quota::sim {

/// One option of a policy entry: its name and how its value is read. `read`
/// gets the value and its path (relative to the entry) and reports problems
/// through the entry.
struct entry_option {
  std::string_view name;
  std::function<void(const json& value, const std::string& path, diagnostics& diag)> read;
};

/// A policies[] entry being read; problems gather until throw_if_any().
/// build_models and validate_reloads put the entry's own path in front of each
/// problem; paths that start with "$" (a job of the scenario) are kept as they
/// are. One wording for every model:
///   unknown key (expected objects, options)
///   missing: <what the key holds>
///   expected an object
///   unknown option (expected a, b, c)
///   expected true or false | expected one of a, b | expected an integer from
///   lo to hi | expected a non-empty string | ...
class policy_entry {
 public:
  /// `keys`: the keys the entry may hold besides "model" (in the order the
  /// message lists them).
  policy_entry(const policy_spec& ps, std::initializer_list<std::string_view> keys) : ps_(ps) {
    for (auto it = ps.body.begin(); it != ps.body.end(); ++it) {
      if (it.key() == "model") continue;
      bool known = false;
      for (const auto k : keys) known = known || it.key() == k;
      if (!known) diag_.add(it.key(), "unknown key (expected " + list(keys) + ")");
    }
  }

  [[nodiscard]] const json& body() const noexcept { return ps_.body; }
  [[nodiscard]] bool has(std::string_view key) const { return ps_.body.contains(key); }
  /// The value of `key` (null when absent).
  [[nodiscard]] const json& operator[](std::string_view key) const {
    static const json null;
    const auto it = ps_.body.find(key);
    return it == ps_.body.end() ? null : *it;
  }

  /// A key the entry must hold: `what` says what it holds.
  void require(std::string_view key, std::string_view what) {
    if (!has(key)) diag_.add(std::string(key), "missing: " + std::string(what));
  }

  /// Reads the entry's "options" object (absent: nothing), each option
  /// with its reader; an option not in `table` is reported with the list.
  void options(std::initializer_list<entry_option> table) {
    if (!has("options")) return;
    const json& o = (*this)["options"];
    if (!o.is_object()) {
      diag_.add("options", "expected an object");
      return;
    }
    for (auto it = o.begin(); it != o.end(); ++it) {
      const std::string path = "options." + it.key();
      const entry_option* found = nullptr;
      for (const auto& op : table)
        if (op.name == it.key()) found = &op;
      if (found) {
        found->read(it.value(), path, diag_);
        continue;
      }
      std::string names;
      for (const auto& op : table) names += (names.empty() ? "" : ", ") + std::string(op.name);
      diag_.add(path, "unknown option (expected " + names + ")");
    }
  }

  /// Runs a library loader on the value of `key`: its problems are reported
  /// under the key ("objects: ClusterQueue/a.spec", or "pods[0].spec" for a
  /// loader whose paths continue the JSON path). Returns whether it succeeded.
  template <class F>
  bool load(std::string_view key, F&& f) {
    try {
      std::forward<F>(f)();
      return true;
    } catch (const validation_error& e) {
      for (const auto& p : e.problems()) diag_.add(under(key, p.path), p.message);
    } catch (const error& e) {
      diag_.add(std::string(key), e.what());
    }
    return false;
  }

  /// `path` (a loader's, or a problem's below `key`) under `key`.
  [[nodiscard]] static std::string under(std::string_view key, const std::string& path) {
    if (path.empty()) return std::string(key);
    if (path.front() == '[' || path.front() == '.') return std::string(key) + path;
    return std::string(key) + ": " + path;
  }

  /// A problem at `path` (relative to the entry, or a "$." path).
  void add(std::string path, std::string message) { diag_.add(std::move(path), std::move(message)); }
  [[nodiscard]] bool ok() const noexcept { return diag_.items().empty(); }
  void throw_if_any() const { diag_.throw_if_any(); }
  [[nodiscard]] diagnostics& problems() noexcept { return diag_; }

 private:
  static std::string list(std::initializer_list<std::string_view> keys) {
    std::string s;
    for (const auto k : keys) s += (s.empty() ? "" : ", ") + std::string(k);
    return s;
  }

  const policy_spec& ps_;
  diagnostics diag_;
};

// ---- typed options -------------------------------------------------------------------------

/// true or false.
[[nodiscard]] inline entry_option flag_option(std::string_view name, bool& out) {
  return {name, [&out](const json& v, const std::string& path, diagnostics& diag) {
            if (!v.is_boolean())
              diag.add(path, "expected true or false");
            else
              out = v.get<bool>();
          }};
}

/// One of a fixed set of strings, each with its value.
template <class E>
[[nodiscard]] entry_option choice_option(std::string_view name, std::vector<std::pair<std::string_view, E>> choices,
                                         E& out) {
  return {name, [&out, choices = std::move(choices)](const json& v, const std::string& path, diagnostics& diag) {
            if (v.is_string())
              for (const auto& [text, value] : choices)
                if (v.get_ref<const std::string&>() == text) {
                  out = value;
                  return;
                }
            std::string names;
            for (const auto& c : choices) names += (names.empty() ? "" : ", ") + std::string(c.first);
            diag.add(path, "expected one of " + names);
          }};
}

/// An integer from lo to hi (hi: INT64_MAX for no upper bound).
template <class I>
[[nodiscard]] entry_option integer_option(std::string_view name, std::int64_t lo, std::int64_t hi, I& out) {
  return {name, [&out, lo, hi](const json& v, const std::string& path, diagnostics& diag) {
            if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
              diag.add(path, hi == INT64_MAX
                                 ? "expected an integer of " + std::to_string(lo) + " or more"
                                 : "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
            else
              out = static_cast<I>(v.get<std::int64_t>());
          }};
}

/// A number (not only an integer) from lo to hi.
[[nodiscard]] inline entry_option number_option(std::string_view name, std::int64_t lo, std::int64_t hi, double& out) {
  return {
      name, [&out, lo, hi](const json& v, const std::string& path, diagnostics& diag) {
        if (!v.is_number() || v.get<double>() < static_cast<double>(lo) || v.get<double>() > static_cast<double>(hi))
          diag.add(path, "expected a number from " + std::to_string(lo) + " to " + std::to_string(hi));
        else
          out = v.get<double>();
      }};
}

/// A string; `non_empty`: the empty string is a problem too.
[[nodiscard]] inline entry_option string_option(std::string_view name, std::string& out, bool non_empty = true) {
  return {name, [&out, non_empty](const json& v, const std::string& path, diagnostics& diag) {
            if (!v.is_string() || (non_empty && v.get_ref<const std::string&>().empty()))
              diag.add(path, non_empty ? "expected a non-empty string" : "expected a string");
            else
              out = v.get<std::string>();
          }};
}

/// An array of non-empty strings.
[[nodiscard]] inline entry_option names_option(std::string_view name, std::vector<std::string>& out) {
  return {name, [&out](const json& v, const std::string& path, diagnostics& diag) {
            if (!v.is_array()) {
              diag.add(path, "expected an array of names");
              return;
            }
            for (std::size_t i = 0; i < v.size(); ++i) {
              if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty())
                diag.add(path + "[" + std::to_string(i) + "]", "expected a non-empty string");
              else
                out.push_back(v[i].get<std::string>());
            }
          }};
}

// ---- declared resource scales --------------------------------------------------------------

/// Each resource the scenario declares (resources[]) finer than the model
/// counts it (`finest(name)`: the finest registry scale the model holds
/// exactly, or -1 for any) is a problem of the entry: amounts would be
/// counted in units the model, or upstream, does not have. `how` says how
/// the model counts.
inline void refuse_finer_scales(policy_entry& entry, const scenario& sc, std::string_view model,
                                const std::function<int(std::string_view)>& finest, std::string_view how) {
  for (const auto& d : sc.declared_resources) {
    const int f = finest(d.name);
    if (f < 0 || d.scale <= f) continue;
    entry.add("", std::string(model) + " counts " + d.name +
                      (f == 0 ? std::string(" in whole units")
                              : " in units of 1/" + std::to_string(quota::detail::pow10_u64[f])) +
                      " (" + std::string(how) + "): the scale " + std::to_string(quota::detail::pow10_u64[d.scale]) +
                      " declared at $.resources[" + std::to_string(d.entry) + "].scale is finer");
  }
}

// ---- building a model from its entry ----------------------------------------------------

/// A problem's path as quota-sim reports it: a path relative to the entry
/// goes under the entry's own ("$.policies[0]: options.enqueue"); a path
/// that starts with "$" (a job, or a library loader given the entry's path)
/// stays as it is.
[[nodiscard]] inline std::string entry_problem_path(const std::string& entry_path, const std::string& path) {
  if (path.empty()) return entry_path;
  return path.front() == '$' ? path : entry_path + ": " + path;
}

/// Builds the model of `ps` with `kind`; its problems go to `diag` (nothing
/// is returned then).
[[nodiscard]] inline std::optional<model_instance> build_entry(const model_kind& kind, const policy_spec& ps,
                                                               scenario& sc, diagnostics& diag) {
  try {
    return kind.make(ps, sc);
  } catch (const validation_error& e) {
    for (const auto& p : e.problems()) diag.add(entry_problem_path(ps.path, p.path), p.message);
  } catch (const error& e) {
    diag.add(ps.path, e.what());
  } catch (const json::exception& e) {
    // a model read a field of the wrong type or range without checking it first
    diag.add(ps.path, std::string("unexpected value: ") + e.what());
  }
  return std::nullopt;
}

/// Every query expectation to `model` names one of its objects: one whose
/// name is not `known` is a problem of the entry at the expectation's path
/// plus `field` (".queue.name"), saying `missing(name)`.
template <class Known, class Missing>
void check_query_names(policy_entry& entry, const scenario& sc, std::string_view model, std::string_view field,
                       const Known& known, const Missing& missing) {
  for (const auto& x : sc.expectations)
    if (x.query && x.query->model == model && !known(x.query->queue))
      entry.add(x.query->path + std::string(field), missing(x.query->queue));
}

}  // namespace quota::sim
