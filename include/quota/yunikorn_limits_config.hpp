// SPDX-License-Identifier: Apache-2.0
// quota/yunikorn_limits_config.hpp — the configuration of user and group limits (YuniKorn
// model): a queue hierarchy whose queues carry limit entries, and its validation.
// Docs: docs/yunikorn-limits.md
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <quota/error.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// The wildcard that matches every user or every group.
inline constexpr std::string_view limits_wildcard = "*";

/// One entry of a queue's `limits` list.
struct limit_entry {
  /// The `limit` field: a free-text description used in messages.
  std::string name;
  std::vector<std::string> users;
  std::vector<std::string> groups;
  /// Per-user / per-group maximum usage (absent resource = not limited).
  limit_vector max_resources;
  /// Per-user / per-group maximum running applications (0 = not limited).
  std::uint64_t max_applications = 0;
  /// The document gave maxresources (a loader sets it even when an amount of
  /// it was rejected, so that the entry is not also reported as setting nothing).
  bool max_resources_given = false;
};

/// One queue of the hierarchy with its limits and children.
struct limits_queue {
  std::string name;
  /// The queue's own maximum (`resources.max`); limits must stay within it.
  limit_vector max;
  /// The queue's own maxapplications (0 = not limited).
  std::uint64_t max_applications = 0;
  std::vector<limit_entry> limits;
  std::vector<limits_queue> queues;
};

/// A whole limits configuration: the root queue of one partition.
struct yunikorn_limits_config {
  yunikorn_limits_config() { root.name = "root"; }
  limits_queue root;
  /// YuniKorn's rules exactly (docs/yunikorn-limits.md, "Differences from
  /// upstream"): for validation, and for a yunikorn_limits_model while this config
  /// is in effect (reload, queries, ignored calls).
  bool upstream = false;
  /// Problems that do not reject the config (e.g. a `cpu` limit, which never
  /// binds pod cpu), filled by the loaders.
  std::vector<diagnostic> warnings;
};

namespace detail {

[[nodiscard]] constexpr bool limits_alpha(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
[[nodiscard]] constexpr bool limits_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

/// YuniKorn's user name pattern: a letter or '_', then letters, digits and
/// : # / _ . @ -, optionally ending in '$'.
[[nodiscard]] constexpr bool limits_valid_user(std::string_view n) noexcept {
  if (n.empty() || !(limits_alpha(n[0]) || n[0] == '_')) return false;
  if (n.size() > 1 && n.back() == '$') n.remove_suffix(1);
  for (std::size_t i = 1; i < n.size(); ++i) {
    const char c = n[i];
    if (!limits_alpha(c) && !limits_digit(c) && c != ':' && c != '#' && c != '/' && c != '_' && c != '.' && c != '@' &&
        c != '-')
      return false;
  }
  return true;
}
/// YuniKorn's group name pattern: a letter or '_', then letters, digits and : _ . -
[[nodiscard]] constexpr bool limits_valid_group(std::string_view n) noexcept {
  if (n.empty() || !(limits_alpha(n[0]) || n[0] == '_')) return false;
  for (char c : n.substr(1))
    if (!limits_alpha(c) && !limits_digit(c) && c != ':' && c != '_' && c != '.' && c != '-') return false;
  return true;
}
/// YuniKorn's queue name pattern: 1 to 64 of letters, digits and _ : # / @ -
[[nodiscard]] constexpr bool limits_valid_queue(std::string_view n) noexcept {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!limits_alpha(c) && !limits_digit(c) && c != '_' && c != ':' && c != '#' && c != '/' && c != '@' && c != '-')
      return false;
  return true;
}
[[nodiscard]] inline std::string limits_lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

[[nodiscard]] inline std::string limits_label(const limit_entry& e) {
  return e.name.empty() ? std::string("limit (unnamed)") : "limit '" + e.name + "'";
}

/// The bound an ancestor put on a user or group name, carried down the tree.
struct limits_carried {
  limit_vector max;
  std::uint64_t max_applications = 0;
  std::string where;  // "root.a.limits[0]"
};
using limits_carried_map = std::unordered_map<std::string, limits_carried>;

/// child <= parent: every resource the child limits and the parent limits is
/// not larger; a parent maxapplications binds the child (0 = unlimited).
inline void limits_check_against(const limit_entry& e, std::string_view kind, const std::string& who,
                                 const limits_carried& parent, bool via_wildcard, const std::string& path,
                                 const resource_registry& reg, diagnostics& d) {
  for (const auto& pe : parent.max) {
    const amount* c = e.max_resources.find(pe.id);
    if (c && *c > pe.value)
      d.add(path, limits_label(e) + ": " + std::string(kind) + " '" + who + "' maxresources " +
                      std::string(reg.name(pe.id)) + "=" + std::to_string(*c) + " exceeds " +
                      (via_wildcard ? "the wildcard entry " : "the entry ") + "of ancestor " + parent.where + " (" +
                      std::to_string(pe.value) + ")");
  }
  if (parent.max_applications != 0 && (e.max_applications == 0 || e.max_applications > parent.max_applications))
    d.add(path, limits_label(e) + ": " + std::string(kind) + " '" + who + "' maxapplications " +
                    (e.max_applications == 0 ? std::string("unlimited") : std::to_string(e.max_applications)) +
                    " exceeds " + (via_wildcard ? "the wildcard entry " : "the entry ") + "of ancestor " +
                    parent.where + " (" + std::to_string(parent.max_applications) + ")");
}

[[nodiscard]] inline limits_carried limits_merge(const limits_carried* parent, const limit_entry& e,
                                                 const std::string& where) {
  limits_carried c;
  c.where = where;
  c.max = parent ? elementwise_min(parent->max, e.max_resources) : e.max_resources;
  c.max_applications = e.max_applications;
  if (parent && parent->max_applications != 0 &&
      (c.max_applications == 0 || parent->max_applications < c.max_applications))
    c.max_applications = parent->max_applications;
  return c;
}

inline void limits_validate_queue(const limits_queue& q, const std::string& path, const limits_carried_map& up_users,
                                  const limits_carried_map& up_groups, const resource_registry& reg, bool upstream,
                                  diagnostics& d) {
  for (const auto& e : q.max)
    if (e.value < 0)
      d.add(path + ".resources.max." + std::string(reg.name(e.id)), "queue maximum must not be negative");

  std::unordered_set<std::string> seen_users, seen_groups;
  bool user_wild = false, group_wild = false;
  std::size_t named_groups = 0;
  std::string group_wild_path;
  limits_carried_map users = up_users, groups = up_groups;

  for (std::size_t i = 0; i < q.limits.size(); ++i) {
    const limit_entry& e = q.limits[i];
    const std::string lp = path + ".limits[" + std::to_string(i) + "]";
    const std::string label = limits_label(e);
    if (e.users.empty() && e.groups.empty()) d.add(lp, label + ": names no user and no group");

    auto check_list = [&](const std::vector<std::string>& names, std::string_view kind,
                          std::unordered_set<std::string>& seen, bool& wild, const limits_carried_map& up,
                          limits_carried_map& next) {
      const bool users_list = kind == "user";
      for (const auto& n : names) {
        const bool is_wild = n == limits_wildcard;
        if (!is_wild && !(users_list ? limits_valid_user(n) : limits_valid_group(n))) {
          d.add(lp + (users_list ? ".users" : ".groups"),
                label + ": invalid " + std::string(kind) + " name '" + n + "' (" +
                    (users_list ? "a letter or '_' first, then letters, digits and : # / _ . @ -, optionally a "
                                  "final '$'"
                                : "a letter or '_' first, then letters, digits and : _ . -") +
                    ")");
          continue;
        }
        // upstream (YuniKorn): only a named entry after the wildcard is refused
        if (is_wild && names.size() > 1 && !upstream)
          d.add(lp, label + ": the wildcard " + std::string(kind) + " must be the only entry of its list");
        if (is_wild && upstream) wild = true;  // YuniKorn: a name later in the same list follows the wildcard
        if (!seen.insert(n).second) {
          d.add(lp, label + ": " + std::string(kind) + " '" + n + "' appears more than once in the limits of queue " +
                        path);
          continue;
        }
        if (!is_wild && wild)
          d.add(lp, label + ": named " + std::string(kind) + " '" + n + "' after the wildcard " + std::string(kind) +
                        " limit (the wildcard must be the last " + std::string(kind) + " limit)");
        // hierarchy: nearest ancestor entry for the same name, else the ancestor wildcard
        const limits_carried* parent = nullptr;
        bool via_wild = false;
        if (auto it = up.find(n); it != up.end()) {
          parent = &it->second;
        } else if (!is_wild) {
          if (auto w = up.find(std::string(limits_wildcard)); w != up.end()) {
            parent = &w->second;
            via_wild = true;
          }
        }
        if (parent) limits_check_against(e, kind, n, *parent, via_wild, lp, reg, d);
        next.insert_or_assign(n, limits_merge(via_wild ? nullptr : parent, e, lp));
      }
      for (const auto& n : names)
        if (n == limits_wildcard) wild = true;
    };
    check_list(e.users, "user", seen_users, user_wild, up_users, users);
    const bool had_group_wild = group_wild;
    check_list(e.groups, "group", seen_groups, group_wild, up_groups, groups);
    for (const auto& g : e.groups)
      if (g != limits_wildcard) ++named_groups;
    if (group_wild && !had_group_wild) group_wild_path = lp;

    // YuniKorn's StrictlyGreaterThanZero: no negative amount, at least one positive
    bool positive = false, negative = false;
    for (const auto& r : e.max_resources) {
      if (r.value < 0) {
        negative = true;
        d.add(
            lp + ".maxresources." + std::string(reg.name(r.id)),
            label + ": maxresources " + std::string(reg.name(r.id)) + " is negative (" + std::to_string(r.value) + ")");
      }
      positive = positive || r.value > 0;
    }
    if (!e.max_resources.empty() && !positive && !negative)
      d.add(lp + ".maxresources", label + ": maxresources must have at least one amount greater than zero");
    if (e.max_applications == 0 && e.max_resources.empty() && !e.max_resources_given)
      d.add(lp, label + ": sets neither maxresources nor maxapplications");
    if (q.max_applications != 0 && e.max_applications > q.max_applications)
      d.add(lp, label + ": maxapplications " + std::to_string(e.max_applications) +
                    " exceeds the queue's maxapplications " + std::to_string(q.max_applications));
    for (const auto& qm : q.max) {
      const amount* c = e.max_resources.find(qm.id);
      if (c && *c > qm.value)
        d.add(lp, label + ": maxresources " + std::string(reg.name(qm.id)) + "=" + std::to_string(*c) +
                      " exceeds the queue's resources.max (" + std::to_string(qm.value) + ")");
    }
  }
  if (group_wild && named_groups == 0)
    d.add(group_wild_path,  // set by the entry that named the wildcard group
          "the wildcard group limit is the only group limit of queue " + path +
              " (it would equal the queue limit; name at least one group)");

  std::unordered_set<std::string> child_names;  // lower case: YuniKorn compares sibling names ignoring case
  for (std::size_t i = 0; i < q.queues.size(); ++i) {
    const limits_queue& c = q.queues[i];
    if (!limits_valid_queue(c.name)) {
      d.add(path + ".queues[" + std::to_string(i) + "]",
            "invalid queue name '" + c.name + "' (1 to 64 of letters, digits and _ : # / @ -)");
      continue;
    }
    if (!child_names.insert(limits_lower(c.name)).second) {
      d.add(path + "." + c.name,
            "duplicate queue name '" + c.name + "' under " + path + " (names are compared ignoring case)");
      continue;
    }
    limits_validate_queue(c, path + "." + c.name, users, groups, reg, upstream, d);
  }
}

}  // namespace detail

/// Adds every problem of `cfg` to `d` (see the file comment for the rules).
inline void collect_limits_problems(const yunikorn_limits_config& cfg, const resource_registry& reg, diagnostics& d) {
  if (cfg.root.name != "root")
    d.add(cfg.root.name.empty() ? "root" : cfg.root.name, "the root queue must be named 'root'");
  // YuniKorn (checkQueuesStructure): the root queue has no resources of its own
  if (cfg.upstream && !cfg.root.max.empty())
    d.add("root.resources.max", "the root queue may not set resources (upstream mode, as YuniKorn)");
  detail::limits_validate_queue(cfg.root, "root", {}, {}, reg, cfg.upstream, d);
}

/// Throws validation_error listing every problem of `cfg`; returns normally when valid.
inline void validate_yunikorn_limits_config(const yunikorn_limits_config& cfg, const resource_registry& reg) {
  diagnostics d;
  collect_limits_problems(cfg, reg, d);
  d.throw_if_any();
}

}  // namespace quota
