// SPDX-License-Identifier: Apache-2.0
// quota/yunikorn_limits.hpp — user and group limits in the YuniKorn model: usage trackers per
// user and group at every queue, checked against a yunikorn_limits_config, with live reload.
// Docs: docs/yunikorn-limits.md
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/yunikorn_limits_compiled.hpp>
#include <quota/detail/yunikorn_limits_interner.hpp>
#include <quota/detail/yunikorn_limits_mutex.hpp>
#include <quota/detail/yunikorn_limits_plan.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>
#include <quota/yunikorn_limits_config.hpp>

namespace quota {

/// Interned ids for the hot path. Obtain them from yunikorn_limits_model::user_id etc.
enum class user_handle : std::uint32_t {};
enum class group_handle : std::uint32_t {};
enum class queue_handle : std::uint32_t {};
enum class app_handle : std::uint32_t {};

/// The identity a host resolved for a request: the user and their groups.
struct limits_identity {
  std::string user;
  std::vector<std::string> groups;
};

/// One queue level of a usage snapshot (the shape of YuniKorn's ResourceUsageDAOInfo).
struct limits_usage_node {
  std::string queue_path;
  resource_vector usage;
  std::vector<std::string> running_applications;  // sorted
  limit_vector max_resources;                     // the limit enforced here (empty: none)
  std::uint64_t max_applications = 0;             // 0: none
  std::vector<limits_usage_node> children;        // sorted by queue path
};
struct limits_user_usage {
  std::string user;
  std::vector<std::pair<std::string, std::string>> app_groups;  // application -> group ("" none)
  limits_usage_node queues;
};
struct limits_group_usage {
  std::string group;
  std::vector<std::string> applications;  // sorted
  limits_usage_node queues;
};

/// Who serialises the calls of a yunikorn_limits_model.
enum class yunikorn_limits_locking {
  internal,  ///< the default: any member from any thread, at any time; the manager locks per call
  host,      ///< the host never calls the manager from two threads at once; no lock is taken
};

template <class Tag = void>
class basic_yunikorn_limits_model;

/// A usage prepared once by yunikorn_limits_model::prepare for the fused calls:
/// dense by the manager's resource slots, reusable for any application and
/// any number of calls. A request of another manager (or one with more than
/// dense_width resources) still works, through the general path.
class limits_request {
 public:
  static constexpr std::size_t dense_width = 16;
  limits_request() = default;
  [[nodiscard]] const resource_vector& usage() const noexcept { return usage_; }

 private:
  template <class>
  friend class basic_yunikorn_limits_model;
  resource_vector usage_;
  std::array<amount, dense_width> dense_{};  // by slot; 0 past the request's resources
  std::uint64_t owner_ = 0;                  // the preparing manager's id (0: none)
  bool fast_ = false;                        // every resource has a slot below dense_width
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view yunikorn_limits_model_name = "yunikorn_limits";

/// `Tag` has no meaning: the bodies of a class template compile only where
/// they are used, which keeps this header cheap to include
/// (docs/performance.md#include-cost).
template <class Tag>
class basic_yunikorn_limits_model {
 public:
  explicit basic_yunikorn_limits_model(const resource_registry& reg,
                                       yunikorn_limits_locking locking = yunikorn_limits_locking::internal)
      : reg_(&reg), mu_(locking == yunikorn_limits_locking::internal), id_(next_id()) {
    groups_.intern(limits_wildcard);  // id 0: the cumulative wildcard pool
    cfg_ = std::make_shared<const detail::limits_compiled>();
  }
  /// A copy is an independent manager with the same configuration, trackers
  /// and usage (taken under the source's lock); what the source caches for its
  /// hot path is resolved again in the copy on first use.
  basic_yunikorn_limits_model(const basic_yunikorn_limits_model& o)
      : reg_(o.reg_), mu_(o.mu_.enabled()), id_(next_id()) {
    std::lock_guard lk(o.mu_);
    cfg_ = o.cfg_;
    gen_ = o.gen_ + 1;  // every cached plan and limit of the copy is stale
    users_ = detail::limits_interner(o.users_);
    groups_ = detail::limits_interner(o.groups_);
    apps_ = detail::limits_interner(o.apps_);
    queues_ = detail::limits_interner(o.queues_);
    slot_of_ = o.slot_of_;
    res_of_slot_ = o.res_of_slot_;
    queue_nodes_ = o.queue_nodes_;
    user_states_ = o.user_states_;
    group_states_ = o.group_states_;
    app_states_ = o.app_states_;
    // an application points at its trackers along its queue's chain: at the copy's own
    for (auto& a : app_states_) {
      a.plan_gen = 0;  // its plan pointed into the source's trackers
      if (!a.live) continue;
      const auto& chain = queue_nodes_[a.queue].chain;
      for (std::size_t i = 0; i < a.unodes.size(); ++i) a.unodes[i] = &user_states_[a.user].nodes.at(chain[i]);
      for (std::size_t i = 0; i < a.gnodes.size(); ++i) a.gnodes[i] = &group_states_[a.group].nodes.at(chain[i]);
    }
    last_app_ = o.last_app_;
  }
  basic_yunikorn_limits_model& operator=(const basic_yunikorn_limits_model&) = delete;

  // ---- configuration ------------------------------------------------------------------------

  /// Validates `cfg` (validation_error with every problem, nothing changed),
  /// compiles it without holding the lock, then swaps it in one step. Usage is
  /// kept; limits (named and wildcard) apply to existing trackers from now on.
  void reload(const yunikorn_limits_config& cfg) {
    validate_yunikorn_limits_config(cfg, *reg_);
    auto next = std::make_shared<detail::limits_compiled>();
    next->upstream = cfg.upstream;
    detail::limits_compile_queue(cfg.root, "root", *next);
    std::shared_ptr<const detail::limits_compiled> old;
    {
      std::lock_guard lk(mu_);
      old = std::exchange(cfg_, std::move(next));
      ++gen_;
      if (cfg_->upstream) drop_removed_group_limits(*old);
    }
    // `old` is destroyed here, outside the lock
  }

  // ---- handles --------------------------------------------------------------------------------

  /// Handle of a queue path of the current config; unknown_entity_error (302) otherwise.
  [[nodiscard]] queue_handle queue_id(std::string_view path) {
    std::lock_guard lk(mu_);
    return queue_handle{queue_locked(path)};
  }
  [[nodiscard]] user_handle user_id(std::string_view user) {
    std::lock_guard lk(mu_);
    return user_handle{user_locked(user)};
  }
  [[nodiscard]] group_handle group_id(std::string_view group) {
    std::lock_guard lk(mu_);
    return group_handle{groups_.intern(group)};
  }
  /// Handle of an application. The manager remembers the application until
  /// release_app, even when it is removed (so the handle stays valid).
  [[nodiscard]] app_handle app_id(std::string_view app) {
    std::lock_guard lk(mu_);
    const auto a = app_locked(app);
    app_states_[a].pinned = true;
    return app_handle{a};
  }
  /// The host drops its handle: the application is forgotten as soon as it
  /// does not run (now, or when it is removed). The handle must not be used
  /// afterwards (its id may be given to another application).
  void release_app(app_handle h) {
    std::lock_guard lk(mu_);
    const auto a = static_cast<std::uint32_t>(h);
    check_app_handle(a);
    app_states_[a].pinned = false;
    if (!app_states_[a].live) forget_app(a);
  }

  // ---- hot path by handles ------------------------------------------------------------------

  /// Adds `usage` for application `a` of user `u` in queue `q`. Allowed only if
  /// the user and the application's group stay within maxresources and
  /// maxapplications at every level; a denial changes nothing.
  [[nodiscard]] decision increase(queue_handle q, app_handle a, const resource_vector& usage, user_handle u,
                                  std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    return increase_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), usage,
                           static_cast<std::uint32_t>(u), groups, true);
  }
  /// The same check as increase, without any change.
  [[nodiscard]] decision check_increase(queue_handle q, app_handle a, const resource_vector& usage, user_handle u,
                                        std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    return increase_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), usage,
                           static_cast<std::uint32_t>(u), groups, false);
  }
  /// Gives back `usage` of application `a`; with remove_app the application
  /// stops running (its usage must then be zero). Never denied; a decrease
  /// below zero, of an unknown application or in another queue throws and
  /// changes nothing.
  void decrease(queue_handle q, app_handle a, const resource_vector& usage, bool remove_app) {
    std::lock_guard lk(mu_);
    decrease_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), usage, remove_app, limits_none);
  }
  /// Per resource the minimum over the path of limit - usage, for the user and
  /// the group (the application's group when it runs, else the one it would
  /// get). Resources no limit mentions are absent (unlimited). May be negative
  /// after a reload lowered a limit below usage. A handle that names nothing
  /// (not issued, or released) is unknown_entity_error; a held one of an
  /// application that does not run asks for a new application.
  [[nodiscard]] limit_vector headroom(queue_handle q, app_handle a, user_handle u,
                                      std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    limit_vector out;
    headroom_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(u), groups,
                    out);
    return out;
  }
  /// Would application `a` be allowed to run (maxapplications at every level)?
  /// A running application can always continue. Handles as for headroom.
  [[nodiscard]] bool can_run_app(queue_handle q, app_handle a, user_handle u, std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    return can_run_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(u),
                          groups);
  }

  // ---- fused calls on a prepared request ------------------------------------------------------
  //
  // One locked call checks the headroom and commits the increase (the same
  // decision as increase), one gives it back; the request is dense already,
  // so a running application's plan answers without converting its usage.

  /// `usage` prepared for increase / decrease below (its resources get their
  /// slots now, so the calls allocate nothing). A negative amount is a validation_error.
  [[nodiscard]] limits_request prepare(const resource_vector& usage) {
    limits_request r;
    r.usage_ = usage;
    std::lock_guard lk(mu_);
    r.fast_ = true;
    for (const auto& e : usage) {
      if (e.value < 0)
        throw validation_error("request.usage." + std::string(reg_->name(e.id)),
                               "negative amount " + std::to_string(e.value));
      if (e.value == 0) continue;
      const std::uint32_t sl = slot_intern(e.id);
      if (sl < limits_request::dense_width)
        r.dense_[sl] = e.value;
      else
        r.fast_ = false;
    }
    r.owner_ = id_;
    return r;
  }
  /// increase(q, a, r.usage(), u, groups) in one locked call: checks every
  /// level for user and group and commits, or changes nothing.
  [[nodiscard]] decision increase(queue_handle q, app_handle a, const limits_request& r, user_handle u,
                                  std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    const auto qi = static_cast<std::uint32_t>(q), ai = static_cast<std::uint32_t>(a);
    const auto ui = static_cast<std::uint32_t>(u);
    if (ai < app_states_.size() && r.owner_ == id_ && r.fast_) {
      auto& app = app_states_[ai];
      if (app.live && app.user == ui && app.queue == qi && increase_fast(app, r.dense_.data(), true)) return decision{};
    }
    return increase_general(qi, ai, r.usage_, ui, groups, true);
  }
  /// decrease(q, a, r.usage(), false): gives back what increase took.
  void decrease(queue_handle q, app_handle a, const limits_request& r) {
    std::lock_guard lk(mu_);
    const auto qi = static_cast<std::uint32_t>(q), ai = static_cast<std::uint32_t>(a);
    if (ai < app_states_.size() && r.owner_ == id_ && r.fast_) {
      auto& app = app_states_[ai];
      if (app.live && app.queue == qi && decrease_fast(app, r.dense_.data())) return;
    }
    decrease_general(qi, ai, r.usage_, false, limits_none);
  }
  /// The fused increase by names (as increase by names).
  [[nodiscard]] decision increase(std::string_view queue_path, std::string_view app, const limits_request& r,
                                  const limits_identity& id) {
    if ((queue_path.empty() || app.empty() || id.user.empty()) && upstream()) return decision{};
    return by_names(queue_path, app, id.user, id.groups, [&](auto q, auto a, auto u, auto gs) {
      if (r.owner_ == id_ && r.fast_ && a < app_states_.size()) {
        auto& st = app_states_[a];
        if (st.live && st.user == u && st.queue == q && increase_fast(st, r.dense_.data(), true)) return decision{};
      }
      return increase_general(q, a, r.usage_, u, gs, true);
    });
  }
  /// The fused decrease by names (as decrease by names, without remove_app).
  void decrease(std::string_view queue_path, std::string_view app, const limits_request& r, const limits_identity& id) {
    std::lock_guard lk(mu_);
    if ((queue_path.empty() || app.empty() || id.user.empty()) && cfg_->upstream) return;
    const std::uint32_t a = app_find(app);
    if (a == limits_none || !app_states_[a].live) throw unknown_entity_error(error_id::unknown_job, "application", app);
    auto& st = app_states_[a];
    if (r.owner_ == id_ && r.fast_ && detail::limits_eq(queue_nodes_[st.queue].path, queue_path) &&
        detail::limits_eq(users_.name(st.user), id.user) && decrease_fast(st, r.dense_.data()))
      return;
    decrease_names_general(queue_path, a, r.usage_, false, id);
  }

  // ---- convenience API by strings -------------------------------------------------------------
  //
  // For a running application of the same user in the same queue, one table
  // lookup (the application) and two string compares replace the rest of the
  // name resolution: its queue, user and group are known.

  [[nodiscard]] decision increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                  std::string_view user, std::span<const std::string> groups) {
    if ((queue_path.empty() || app.empty() || user.empty()) && upstream()) return decision{};  // YuniKorn ignores it
    return by_names(queue_path, app, user, groups,
                    [&](auto q, auto a, auto u, auto gs) { return increase_locked(q, a, usage, u, gs, true); });
  }
  [[nodiscard]] decision increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                  const limits_identity& id) {
    return increase(queue_path, app, usage, id.user, id.groups);
  }
  [[nodiscard]] decision check_increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                        std::string_view user, std::span<const std::string> groups) {
    if ((queue_path.empty() || app.empty() || user.empty()) && upstream()) return decision{};
    return by_names(
        queue_path, app, user, groups,
        [&](auto q, auto a, auto u, auto gs) { return increase_locked(q, a, usage, u, gs, false); }, true);
  }
  [[nodiscard]] decision check_increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                        const limits_identity& id) {
    return check_increase(queue_path, app, usage, id.user, id.groups);
  }
  /// Decrease by names. The identity's user must be the application's user.
  void decrease(std::string_view queue_path, std::string_view app, const resource_vector& usage, bool remove_app,
                const limits_identity& id) {
    std::lock_guard lk(mu_);
    if ((queue_path.empty() || app.empty() || id.user.empty()) && cfg_->upstream) return;  // YuniKorn ignores it
    const std::uint32_t a = app_find(app);
    if (a == limits_none || !app_states_[a].live) throw unknown_entity_error(error_id::unknown_job, "application", app);
    decrease_names_general(queue_path, a, usage, remove_app, id);
  }
  [[nodiscard]] limit_vector headroom(std::string_view queue_path, std::string_view app, const limits_identity& id) {
    limit_vector out;
    by_names(queue_path, app, id.user, id.groups, [&](auto q, auto a, auto u, auto gs) {
      headroom_locked(q, a, u, gs, out);
      return 0;
    });
    return out;
  }

 private:
  /// decrease by names of running application `a` (under mu_).
  void decrease_names_general(std::string_view queue_path, std::uint32_t a, const resource_vector& usage,
                              bool remove_app, const limits_identity& id) {
    const auto& st = app_states_[a];
    std::uint32_t qi = st.queue;
    if (!detail::limits_eq(queue_nodes_[qi].path, queue_path)) {
      const auto q = queues_.find(queue_path);
      qi = q ? *q : queue_locked(queue_path);
    }
    std::uint32_t ui = st.user;
    if (!detail::limits_eq(users_.name(ui), id.user)) {
      const auto u = users_.find(id.user);
      ui = u ? *u : limits_none - 1;
    }
    decrease_locked(qi, a, usage, remove_app, ui);
  }

 public:
  /// headroom(user, queue path) for a request that is not yet an application.
  [[nodiscard]] limit_vector headroom(std::string_view queue_path, const limits_identity& id) {
    return headroom(queue_path, std::string_view{}, id);
  }
  [[nodiscard]] bool can_run_app(std::string_view queue_path, std::string_view app, const limits_identity& id) {
    return by_names(queue_path, app, id.user, id.groups,
                    [&](auto q, auto a, auto u, auto gs) { return can_run_locked(q, a, u, gs); });
  }

  // ---- introspection --------------------------------------------------------------------------

  /// Usage of a user (or group, "*" = the wildcard pool) at a queue path; zero when not tracked.
  [[nodiscard]] resource_vector user_usage(std::string_view user, std::string_view queue_path) const {
    std::lock_guard lk(mu_);
    const auto* n = find_node(user_states_, users_.find(user), queues_.find(queue_path));
    return n ? to_vector(n->use) : resource_vector{};
  }
  [[nodiscard]] resource_vector group_usage(std::string_view group, std::string_view queue_path) const {
    std::lock_guard lk(mu_);
    const auto* n = find_node(group_states_, groups_.find(group), queues_.find(queue_path));
    return n ? to_vector(n->use) : resource_vector{};
  }
  [[nodiscard]] std::uint64_t user_running(std::string_view user, std::string_view queue_path) const {
    std::lock_guard lk(mu_);
    const auto* n = find_node(user_states_, users_.find(user), queues_.find(queue_path));
    return n ? n->running : 0;
  }
  [[nodiscard]] std::uint64_t group_running(std::string_view group, std::string_view queue_path) const {
    std::lock_guard lk(mu_);
    const auto* n = find_node(group_states_, groups_.find(group), queues_.find(queue_path));
    return n ? n->running : 0;
  }
  /// The group an application is tracked against ("" = none, "*" = wildcard pool);
  /// nullopt for an application that is not running.
  [[nodiscard]] std::optional<std::string> group_of(std::string_view app) const {
    std::lock_guard lk(mu_);
    const auto a = apps_.find(app);
    if (!a || !app_states_[*a].live) return std::nullopt;
    const auto g = app_states_[*a].group;
    return g == detail::limits_none ? std::string() : groups_.name(g);
  }
  /// Number of queue trackers (user + group) that exist; empty ones are removed.
  [[nodiscard]] std::size_t tracker_count() const {
    std::lock_guard lk(mu_);
    std::size_t n = 0;
    for (const auto& s : user_states_) n += s.nodes.size();
    for (const auto& s : group_states_) n += s.nodes.size();
    return n;
  }
  /// Number of application ids the manager remembers: the running ones plus
  /// those whose handle the host holds (app_id without release_app).
  [[nodiscard]] std::size_t application_count() const {
    std::lock_guard lk(mu_);
    return apps_.live();
  }
  /// Snapshots in the shape of YuniKorn's /usage/users and /usage/groups.
  /// In upstream mode also the users and groups the config names, from the
  /// config on, with their limits where they have one (as YuniKorn creates
  /// their trackers when it applies the config), and every shown user's
  /// wildcard-limited queues.
  [[nodiscard]] std::vector<limits_user_usage> users_usage() const {
    std::lock_guard lk(mu_);
    // the queues each user is shown at beyond its trackers (upstream mode)
    std::unordered_map<std::string, std::vector<std::string>> extra;
    std::vector<std::string> wild_paths;
    if (cfg_->upstream) {
      for (const auto& [path, cq] : cfg_->queues) {
        for (const auto& [name, lim] : cq.users) extra[name].push_back(path);
        if (cq.user_wild) wild_paths.push_back(path);
      }
      for (std::uint32_t u = 0; u < user_states_.size(); ++u)
        if (!user_states_[u].nodes.empty()) (void)extra[users_.name(u)];
      for (auto& [name, paths] : extra)
        for (const auto& w : wild_paths)
          if (!cfg_->queues.at(w).users.contains(name)) paths.push_back(w);
    }
    std::vector<limits_user_usage> out;
    for (std::uint32_t u = 0; u < user_states_.size(); ++u) {
      if (user_states_[u].nodes.empty()) continue;
      limits_user_usage uu;
      uu.user = users_.name(u);
      for (std::uint32_t a = 0; a < app_states_.size(); ++a)
        if (app_states_[a].live && app_states_[a].user == u)
          uu.app_groups.emplace_back(apps_.name(a), app_states_[a].group == detail::limits_none
                                                        ? std::string()
                                                        : groups_.name(app_states_[a].group));
      std::sort(uu.app_groups.begin(), uu.app_groups.end());
      const auto ex = extra.find(uu.user);
      uu.queues = snapshot_tree(&user_states_[u], u, uu.user, false, ex == extra.end() ? no_paths() : ex->second);
      if (ex != extra.end()) extra.erase(ex);
      out.push_back(std::move(uu));
    }
    for (const auto& [name, paths] : extra) {  // configured, nothing tracked
      limits_user_usage uu;
      uu.user = name;
      uu.queues = snapshot_tree(nullptr, detail::limits_none, name, false, paths);
      out.push_back(std::move(uu));
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.user < y.user; });
    return out;
  }
  [[nodiscard]] std::vector<limits_group_usage> groups_usage() const {
    std::lock_guard lk(mu_);
    std::unordered_map<std::string, std::vector<std::string>> extra;
    if (cfg_->upstream) {
      for (const auto& [path, cq] : cfg_->queues) {
        for (const auto& [name, lim] : cq.group_map) extra[name].push_back(path);
        if (cq.group_wild) extra[std::string(limits_wildcard)].push_back(path);
      }
    }
    std::vector<limits_group_usage> out;
    for (std::uint32_t g = 0; g < group_states_.size(); ++g) {
      if (group_states_[g].nodes.empty()) continue;
      limits_group_usage gu;
      gu.group = groups_.name(g);
      for (std::uint32_t a = 0; a < app_states_.size(); ++a)
        if (app_states_[a].live && !app_states_[a].relink && app_states_[a].group == g)
          gu.applications.push_back(apps_.name(a));
      std::sort(gu.applications.begin(), gu.applications.end());
      const auto ex = extra.find(gu.group);
      gu.queues = snapshot_tree(&group_states_[g], g, gu.group, true, ex == extra.end() ? no_paths() : ex->second);
      if (ex != extra.end()) extra.erase(ex);
      out.push_back(std::move(gu));
    }
    for (const auto& [name, paths] : extra) {
      limits_group_usage gu;
      gu.group = name;
      gu.queues = snapshot_tree(nullptr, detail::limits_none, name, true, paths);
      out.push_back(std::move(gu));
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.group < y.group; });
    return out;
  }

  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }
  /// Whether the config in effect asks for YuniKorn's rules (yunikorn_limits_config::upstream).
  [[nodiscard]] bool upstream() const {
    std::lock_guard lk(mu_);
    return cfg_->upstream;
  }

 private:
  using node = detail::limits_node;
  static constexpr std::uint32_t no_slot = 0xFFFFU;
  /// Widest plan the hot paths take (more resource slots: the general path).
  static constexpr std::uint32_t fast_slots = 16;

  // ---- interning (under mu_) ----
  std::uint32_t queue_locked(std::string_view path) {
    if (auto id = queues_.find(path)) return *id;
    if (cfg_->queues.find(path) == cfg_->queues.end())
      throw unknown_entity_error(error_id::unknown_queue, "queue", path);
    return intern_queue(path);
  }
  std::uint32_t intern_queue(std::string_view path) {
    if (auto id = queues_.find(path)) return *id;
    const auto dot = path.rfind('.');
    const std::uint32_t parent =
        dot == std::string_view::npos ? detail::limits_none : intern_queue(path.substr(0, dot));
    if (queue_nodes_.size() <= queues_.size()) queue_nodes_.resize(queues_.size() + 1);  // before interning
    const auto id = queues_.intern(path);
    auto& qn = queue_nodes_[id];
    qn.path = std::string(path);
    qn.parent = parent;
    std::vector<std::uint32_t> chain{id};
    if (parent != detail::limits_none)
      chain.insert(chain.end(), queue_nodes_[parent].chain.begin(), queue_nodes_[parent].chain.end());
    qn.chain = std::move(chain);
    return id;
  }
  std::uint32_t user_locked(std::string_view user) {
    if (user.empty()) throw unknown_entity_error(error_id::unknown_user, "user", user);
    if (user_states_.size() <= users_.size()) user_states_.resize(users_.size() + 1);  // before interning
    return users_.intern(user);
  }
  std::uint32_t app_locked(std::string_view app) {
    if (app.empty()) throw unknown_entity_error(error_id::unknown_job, "application", app);
    if (app_states_.size() <= apps_.size()) app_states_.resize(apps_.size() + 1);  // before interning
    return apps_.intern(app);
  }
  std::uint32_t group_state_locked(std::uint32_t g) {
    if (group_states_.size() <= g) group_states_.resize(g + 1);
    return g;
  }
  /// The tracker of an entity at queue level `q`, created (from a spare node
  /// when there is one) if it does not exist.
  node& tracker(detail::limits_entity& st, std::uint32_t q) {
    static const node fresh{};
    return tracker_pool_.emplace(st.nodes, q, fresh).first->second;
  }
  /// An application that neither runs nor is held by a handle is forgotten.
  void forget_app(std::uint32_t a) noexcept {
    auto& st = app_states_[a];
    st.live = false;
    st.pinned = false;
    st.linked = false;
    st.relink = false;
    st.user = st.group = st.queue = detail::limits_none;
    st.plan_gen = 0;
    st.use.clear();
    st.unodes.clear();
    st.gnodes.clear();
    apps_.forget(a);
  }

  // ---- resource slots (under mu_) ----
  [[nodiscard]] std::uint32_t slot_find(resource_id id) const noexcept {
    return id < slot_of_.size() ? slot_of_[id] : no_slot;
  }
  std::uint32_t slot_intern(resource_id id) {
    if (id < slot_of_.size() && slot_of_[id] != no_slot) return slot_of_[id];
    if (res_of_slot_.size() >= no_slot - 1) throw overflow_error("too many resources in user/group limits");
    detail::reserve_at_least(res_of_slot_, res_of_slot_.size() + 1);
    if (slot_of_.size() <= id) slot_of_.resize(static_cast<std::size_t>(id) + 1, static_cast<std::uint16_t>(no_slot));
    const auto s = static_cast<std::uint16_t>(res_of_slot_.size());
    slot_of_[id] = s;
    res_of_slot_.push_back(id);
    return s;
  }
  /// The positive entries of `usage` with their slots (assigned when `assign`);
  /// a negative amount is a validation_error naming application `a`.
  void prepare(const resource_vector& usage, detail::limits_req& req, bool assign, std::uint32_t a) {
    req.reset(usage.size());
    for (const auto& e : usage) {
      if (e.value > 0)
        req.push({assign ? slot_intern(e.id) : slot_find(e.id), e.id, e.value});
      else if (e.value < 0)
        throw validation_error("application " + (a == detail::limits_none ? std::string(unseen_app_) : apps_.name(a)) +
                                   ".usage." + std::string(reg_->name(e.id)),
                               "negative amount " + std::to_string(e.value));
    }
  }
  [[nodiscard]] resource_vector to_vector(const detail::limits_slots& v) const {
    resource_vector r;
    for (std::size_t s = 0; s < v.size(); ++s)
      if (v[s] != 0) r.set(res_of_slot_[s], v[s]);
    return r;
  }

  template <class F>
  std::invoke_result_t<F&, std::uint32_t, std::uint32_t, std::uint32_t, std::span<const group_handle>> by_names(
      std::string_view queue_path, std::string_view app, std::string_view user, std::span<const std::string> groups,
      F&& f, bool check_only = false) {
    std::lock_guard lk(mu_);
    std::uint32_t a = detail::limits_none;
    if (!app.empty()) {
      if (const auto found = app_find(app); found != limits_none) {
        a = found;
        // fast path: a running application of this user in this queue; its group is fixed
        const auto& st = app_states_[a];
        if (st.live && !st.relink && detail::limits_eq(queue_nodes_[st.queue].path, queue_path) &&
            detail::limits_eq(users_.name(st.user), user))
          return f(st.queue, a, st.user, std::span<const group_handle>{});
      }
    }
    const auto q = queue_locked(queue_path);
    const auto u = user_locked(user);
    // an application first seen here is forgotten again unless the call left it running
    struct forget_guard {
      basic_yunikorn_limits_model* m;
      std::uint32_t a;
      ~forget_guard() {
        if (a != detail::limits_none && !m->app_states_[a].live && !m->app_states_[a].pinned &&
            !m->app_states_[a].linked)
          m->forget_app(a);
      }
    } guard{this, detail::limits_none};
    // a check of an application the manager does not track leaves nothing
    // behind: it is checked as a new one under its name, without an id
    struct unseen_guard {
      std::string_view& name;
      ~unseen_guard() { name = {}; }
    } unseen{unseen_app_};
    if (!app.empty() && a == detail::limits_none) {
      if (check_only)
        unseen_app_ = app;
      else
        a = guard.a = app_locked(app);
    }
    boost::container::small_vector<group_handle, 8> gs;
    for (const auto& g : groups)
      if (!g.empty() && g != limits_wildcard) gs.push_back(group_handle{groups_.intern(g)});
    return f(q, a, u, std::span<const group_handle>(gs.data(), gs.size()));
  }

  /// The id of application `app` (limits_none: unknown). The last one found
  /// is remembered: a scheduler asks about one application several times in a
  /// row (headroom, increase), and a compare of names is cheaper than a hash
  /// lookup. Interned names are unique, so an equal name is the same
  /// application (a forgotten id's name is empty, and `app` is not).
  std::uint32_t app_find(std::string_view app) noexcept {
    if (app.empty()) return limits_none;
    const std::uint32_t last = last_app_;
    if (last < apps_.size() && detail::limits_eq(apps_.name(last), app)) return last;
    const auto found = apps_.find(app);
    if (!found) return limits_none;
    last_app_ = *found;
    return *found;
  }

  // ---- config resolution (under mu_) ----
  const detail::limits_compiled_queue* cq_of(std::uint32_t q) {
    auto& qn = queue_nodes_[q];
    if (qn.gen != gen_) {
      auto it = cfg_->queues.find(qn.path);
      qn.cq = it == cfg_->queues.end() ? nullptr : &it->second;
      qn.gen = gen_;
    }
    return qn.cq;
  }
  const detail::limits_value* user_limit(std::uint32_t q, std::uint32_t u) {
    const auto* cq = cq_of(q);
    if (!cq) return nullptr;
    if (!cq->users.empty()) {
      auto it = cq->users.find(users_.name(u));
      if (it != cq->users.end()) return it->second;
    }
    return cq->user_wild;
  }
  const detail::limits_value* group_limit(std::uint32_t q, std::uint32_t g) {
    const auto* cq = cq_of(q);
    if (!cq) return nullptr;
    if (g == detail::limits_wild_group) return cq->group_wild;
    auto it = cq->group_map.find(groups_.name(g));
    return it == cq->group_map.end() ? nullptr : it->second;
  }
  const detail::limits_value* cached(node& n, std::uint32_t q, std::uint32_t id, bool group) {
    if (n.gen != gen_) {
      n.lim = group ? group_limit(q, id) : user_limit(q, id);
      n.gen = gen_;
    }
    return n.lim;
  }
  /// The group walk: leaf to root, named group limits in config order, else the
  /// level's wildcard group; the first level that yields a group decides.
  std::uint32_t resolve_group(std::uint32_t q, std::span<const group_handle> groups) {
    if (groups.empty()) return detail::limits_none;  // as YuniKorn: a user without groups has no group tracking
    for (auto level : queue_nodes_[q].chain) {
      const auto* cq = cq_of(level);
      if (!cq) continue;
      for (const auto& [name, lim] : cq->groups)
        for (auto g : groups) {
          const auto gi = static_cast<std::uint32_t>(g);
          if (gi < groups_.size() && groups_.name(gi) == name) return gi;
        }
      if (cq->group_wild) return detail::limits_wild_group;
    }
    return detail::limits_none;
  }

  /// Upstream mode, at a reload (under mu_): for every group limit of `old`
  /// that the config in effect no longer has at that queue, what YuniKorn's
  /// resetGroupEarlierUsage does when the group is tracked down to the queue:
  /// the group's trackers at the queue, below it and at its ancestors that
  /// hold running applications and usage are emptied (usage 0, no running
  /// application), and the group's applications in that queue or below are
  /// unlinked from it (their group is resolved again at the next call, and
  /// only later usage is counted for it).
  void drop_removed_group_limits(const detail::limits_compiled& old) {
    for (const auto& [path, ocq] : old.queues) {
      const auto nit = cfg_->queues.find(path);
      auto still = [&](std::string_view g) {
        if (nit == cfg_->queues.end()) return false;
        if (g == limits_wildcard) return nit->second.group_wild != nullptr;
        return nit->second.group_map.find(g) != nit->second.group_map.end();
      };
      for (const auto& [g, lim] : ocq.group_map)
        if (!still(g)) drop_group_usage(path, g);
      if (ocq.group_wild && !still(limits_wildcard)) drop_group_usage(path, limits_wildcard);
    }
  }
  void drop_group_usage(const std::string& path, std::string_view group) {
    const auto gid = groups_.find(group);
    const auto qid = queues_.find(path);
    if (!gid || !qid || *gid >= group_states_.size()) return;
    auto& st = group_states_[*gid];
    if (st.nodes.find(*qid) == st.nodes.end()) return;  // not tracked down to the queue
    const auto& pchain = queue_nodes_[*qid].chain;
    auto affected = [&](std::uint32_t q) {  // the queue, an ancestor, or below it
      const auto& ch = queue_nodes_[q].chain;
      return std::find(pchain.begin(), pchain.end(), q) != pchain.end() ||
             std::find(ch.begin(), ch.end(), *qid) != ch.end();
    };
    std::vector<std::uint32_t> reset;
    for (auto& [q, n] : st.nodes)
      if (affected(q) && n.running > 0 && !detail::limits_is_zero(n.use)) reset.push_back(q);
    for (std::uint32_t a = 0; a < app_states_.size(); ++a) {
      auto& app = app_states_[a];
      if (!app.live || app.relink || app.group != *gid) continue;
      const auto& ch = queue_nodes_[app.queue].chain;
      for (std::size_t i = 0; i < ch.size() && i < 64; ++i)
        if (std::find(reset.begin(), reset.end(), ch[i]) != reset.end()) app.gcounted &= ~(std::uint64_t{1} << i);
      if (std::find(ch.begin(), ch.end(), *qid) != ch.end()) {
        app.relink = true;  // unlinked: no group trackers until its group is resolved again
        app.group = detail::limits_none;
        app.gnodes.clear();
        app.gcounted = 0;
        app.plan_gen = 0;
      }
    }
    for (auto q : reset) {
      auto& n = st.nodes.at(q);
      std::fill(n.use.begin(), n.use.end(), amount{0});
      n.running = 0;
    }
  }

  /// The group a question about application `a` (not running) is answered
  /// for: the one a query linked it to; else the walk's, which in upstream mode
  /// links it (YuniKorn's headroom and canRunApp fix the application's group).
  std::uint32_t query_group(std::uint32_t q, std::uint32_t a, std::span<const group_handle> groups) {
    if (a == detail::limits_none) return resolve_group(q, groups);
    auto& st = app_states_[a];
    if (st.live && !st.relink) return resolve_group(q, groups);  // another user's application: asked as a new one
    if (st.linked) return st.group;
    const std::uint32_t g = resolve_group(q, groups);
    if (cfg_->upstream) {
      st.group = g;
      st.linked = true;
    }
    return g;
  }

  template <class States>
  static node* find_node_mut(States& st, std::uint32_t id, std::uint32_t q) {
    if (id >= st.size()) return nullptr;
    auto it = st[id].nodes.find(q);
    return it == st[id].nodes.end() ? nullptr : &it->second;
  }
  template <class States>
  static const node* find_node(const States& st, std::optional<std::uint32_t> id, std::optional<std::uint32_t> q) {
    if (!id || !q || *id >= st.size()) return nullptr;
    auto it = st[*id].nodes.find(*q);
    return it == st[*id].nodes.end() ? nullptr : &it->second;
  }

  void check_app_handle(std::uint32_t a) const {
    if (a >= app_states_.size() || !apps_.alive(a))
      throw unknown_entity_error(error_id::unknown_job, "application id", std::to_string(a));
  }
  void check_queue_handle(std::uint32_t q) const {
    if (q >= queues_.size()) throw unknown_entity_error(error_id::unknown_queue, "queue id", std::to_string(q));
  }
  void check_user_handle(std::uint32_t u) const {
    if (u >= users_.size()) throw unknown_entity_error(error_id::unknown_user, "user id", std::to_string(u));
    if (user_states_.size() <= u) throw unknown_entity_error(error_id::unknown_user, "user id", std::to_string(u));
  }

  /// One level of the check: does the request stay within `lim` given the
  /// tracker `n` (null: nothing tracked yet)? A sum that overflows a limited
  /// resource does not fit; one that overflows an unlimited resource sets
  /// `overflow` (a typed error when nothing denies).
  static bool level_ok(const detail::limits_value* lim, const node* n, const detail::limits_req& req, bool new_app,
                       bool& overflow) noexcept {
    if (lim && new_app && lim->max_apps != 0 && (n ? n->running : 0) + 1 > lim->max_apps) return false;
    const amount* use = n ? n->use.data() : nullptr;
    const std::size_t nuse = n ? n->use.size() : 0;
    const amount* lp = lim ? lim->by_id.data() : nullptr;
    const std::size_t nl = lim ? lim->by_id.size() : 0;
    for (const auto& e : req) {
      const amount used = e.slot < nuse ? use[e.slot] : amount{0};
      const amount l = e.id < nl ? lp[e.id] : amount{-1};
      amount total{};
      if (__builtin_add_overflow(used, e.value, &total)) {
        if (l >= 0) return false;
        overflow = true;
        continue;
      }
      if (l >= 0 && total > l) return false;
    }
    return true;
  }
  // the reasons of a level that failed level_ok: maxapplications, then the first resource over its limit
  void add_reasons(const detail::limits_value* lim, const node* n, const detail::limits_req& req, bool new_app,
                   bool group, std::uint32_t id, std::uint32_t q, decision& d) const {
    if (!lim) return;
    const std::uint64_t running = n ? n->running : 0;
    if (new_app && lim->max_apps != 0 && running + 1 > lim->max_apps) {
      reason r;
      r.model = yunikorn_limits_model_name;
      r.rule = "max_applications";
      r.entity = entity_text(group, id, q);
      r.requested = 1;
      r.used = static_cast<std::int64_t>(running);
      r.limit = static_cast<std::int64_t>(lim->max_apps);
      r.message = reason_note("$0 '$1'", {lim->where, lim->entry});
      d.add(std::move(r));
    }
    for (const auto& e : req) {
      const amount l = lim->limit_of(e.id);
      if (l < 0) continue;
      const amount u = n ? detail::limits_at(n->use, e.slot) : amount{0};
      amount total{};
      if (detail::try_add(u, e.value, total) && total <= l) continue;
      reason r;
      r.model = yunikorn_limits_model_name;
      r.rule = "max_resources";
      r.entity = entity_text(group, id, q);
      r.resource = e.id;
      r.resource_name = reg_->name(e.id);
      r.requested = e.value;
      r.used = u;
      r.limit = l;
      r.message = reason_note("$0 '$1'", {lim->where, lim->entry});
      d.add(std::move(r));
      break;
    }
  }
  std::string entity_text(bool group, std::uint32_t id, std::uint32_t q) const {
    const std::string_view kind = group ? "group" : "user";
    const std::string_view name = group ? groups_.name(id) : users_.name(id);
    const std::string_view path = queue_nodes_[q].path;
    std::string s;
    s.reserve(kind.size() + name.size() + path.size() + 2);  // one allocation at most
    s.append(kind).append(1, ':').append(name).append(1, '@').append(path);
    return s;
  }

  /// Resolves the plan of running application `app` for the current config
  /// generation and resource slots (allocates only when either changed).
  bool ensure_plan(detail::limits_app& app) {
    if (app.plan_gen != gen_ || app.plan_slots != res_of_slot_.size()) [[unlikely]]
      build_plan(app);
    return app.plan_width != 0;
  }
  [[gnu::noinline]] void build_plan(detail::limits_app& app) {
    const auto ns = static_cast<std::uint32_t>(res_of_slot_.size());
    app.plan_gen = 0;  // a throw below leaves the plan invalid; nothing else changes in meaning
    const auto& chain = queue_nodes_[app.queue].chain;
    const std::size_t nu = app.unodes.size(), ng = app.gnodes.size();
    // usage arrays padded with zero slots to a fixed width, so that the hot loops have constant bounds
    const std::uint32_t w = ns <= 4 ? 4 : ns <= 8 ? 8 : ns <= fast_slots ? fast_slots : ns;
    auto widen = [w](detail::limits_slots& v) {
      if (v.size() < w) v.resize(w, amount{0});
    };
    for (auto* n : app.unodes) widen(n->use);
    for (auto* n : app.gnodes) widen(n->use);
    widen(app.use);
    app.plan_use.clear();
    app.plan_lim.clear();
    app.plan_all.clear();
    app.plan_cols.clear();
    for (auto* n : app.unodes) app.plan_all.push_back(n->use.data());
    for (auto* n : app.gnodes) app.plan_all.push_back(n->use.data());
    struct term {
      resource_id id;
      std::uint32_t slot;  // >= ns: no slot, usage 0
      std::size_t row;
      amount lim;
    };
    boost::container::small_vector<term, 16> terms;
    for (std::size_t k = 0; k < nu + ng; ++k) {
      const bool group = k >= nu;
      const std::size_t level = group ? k - nu : k;
      node& n = group ? *app.gnodes[level] : *app.unodes[level];
      const auto* lim = cached(n, chain[level], group ? app.group : app.user, group);
      const bool top = level + 1 == chain.size();
      if (!lim && !top) continue;
      const std::size_t row = app.plan_use.size();
      app.plan_use.push_back(n.use.data());
      app.plan_lim.resize((row + 1) * w, std::numeric_limits<amount>::max());
      if (!lim) continue;
      for (const auto& e : lim->max) {
        const std::uint32_t sl = slot_find(e.id);
        if (sl < ns) app.plan_lim[row * w + sl] = e.value;
        terms.push_back({e.id, sl, row, e.value});
      }
    }
    // more rows than a column's row mask holds: the general path answers
    const bool narrow = app.plan_use.size() <= 64;
    std::stable_sort(terms.begin(), terms.end(), [](const term& x, const term& y) { return x.id < y.id; });
    for (const auto& t : terms) {
      if (app.plan_cols.empty() || app.plan_cols.back().id != t.id)
        app.plan_cols.push_back(
            {t.id, static_cast<std::uint16_t>(t.slot < ns ? t.slot : 0), 0, std::numeric_limits<amount>::max()});
      auto& c = app.plan_cols.back();
      if (t.slot < ns) {
        if (narrow) c.rows |= std::uint64_t{1} << t.row;
      } else {
        c.fixed = std::min(c.fixed, t.lim);
      }
    }
    app.plan_queue = cq_of(app.queue) != nullptr;
    app.plan_gen = gen_;
    app.plan_slots = ns;
    // wider than the hot loops, or more rows than a column's mask: the general path
    app.plan_width = w <= fast_slots && narrow ? w : 0;
  }

  /// `usage` as a dense array over `W` slots. False when the general path
  /// must handle it: a negative amount (an error it reports) or a positive
  /// amount of a resource without a slot in the plan (`ns` slots).
  template <std::uint32_t W>
  bool dense(const resource_vector& usage, std::array<amount, W>& d, std::uint32_t ns) const noexcept {
    d.fill(0);
    const std::size_t nslot = slot_of_.size();
    const std::uint16_t* slot_of = slot_of_.data();
    amount sign = 0;
    for (const auto& e : usage) {
      const std::uint32_t sl = e.id < nslot ? slot_of[e.id] : no_slot;
      if (sl < ns)
        d[sl] = e.value;
      else if (e.value != 0)
        return false;
      sign |= e.value;
    }
    return sign >= 0;
  }

  /// Calls f.template operator()<W>() for the plan's width (4, 8 or 16).
  template <class F>
  static bool by_width(std::uint32_t w, F&& f) {
    switch (w) {
      case 4:
        return f.template operator()<4>();
      case 8:
        return f.template operator()<8>();
      default:
        return f.template operator()<fast_slots>();
    }
  }

  /// The hot path of increase: a running application (of user `u` in queue
  /// `q`, checked by the caller) whose request fits at every level. Returns
  /// false (nothing changed) when the general path must decide: a denial
  /// (which it explains), a sum that could overflow, a resource without a
  /// slot, a tracker already over a lowered limit, a queue no longer in the
  /// config.
  bool increase_fast(detail::limits_app& app, const resource_vector& usage, bool commit) {
    if (app.relink || !ensure_plan(app) || !app.plan_queue) return false;
    return by_width(app.plan_width, [&]<std::uint32_t W>() {
      std::array<amount, W> d;
      if (!dense<W>(usage, d, app.plan_slots)) return false;
      return fit_and_add<W>(app, d.data(), commit);
    });
  }
  /// increase_fast of a prepared request (dense by slot, limits_request::dense_width wide).
  bool increase_fast(detail::limits_app& app, const amount* d, bool commit) {
    if (app.relink || !ensure_plan(app) || !app.plan_queue) return false;
    return by_width(app.plan_width, [&]<std::uint32_t W>() { return fit_and_add<W>(app, d, commit); });
  }
  /// The check and change of increase_fast for a dense request `d` of W slots.
  template <std::uint32_t W>
  [[gnu::always_inline]] bool fit_and_add(detail::limits_app& app, const amount* d, bool commit) noexcept {
    // every row and slot: x = limit - usage >= 0 and x - request >= 0 (an
    // unlimited row: max - usage, so usage + request cannot overflow). In
    // unsigned arithmetic (wraps, no UB); the sign bit of the OR of all of
    // them says whether any failed. x cannot overflow (limit >= 0, usage >= 0)
    // and x - request cannot either once x >= 0 (request >= 0).
    // Two slots at a time (detail::limits_u64x2: one SSE2 / NEON register).
    using v2 = detail::limits_u64x2;
    constexpr std::uint32_t P = W / 2;
    std::array<v2, P> req;
    std::memcpy(req.data(), d, sizeof req);
    std::array<v2, P> bad{};
    const amount* lim = app.plan_lim.data();
    for (const amount* use : app.plan_use) {
      for (std::uint32_t k = 0; k < P; ++k) {
        v2 l, u;
        std::memcpy(&l, lim + 2 * k, sizeof l);
        std::memcpy(&u, use + 2 * k, sizeof u);
        const v2 x = l - u;
        bad[k] |= x | (x - req[k]);
      }
      lim += W;
    }
    for (std::uint32_t k = 1; k < P; ++k) bad[0] |= bad[k];
    if ((bad[0][0] | bad[0][1]) >> 63) return false;
    if (!commit) return true;
    // every array is bounded by its entity's top tracker, checked above
    auto add = [d](amount* p) {
      for (std::uint32_t sl = 0; sl < W; ++sl) p[sl] += d[sl];
    };
    add(app.use.data());
    for (amount* p : app.plan_all) add(p);
    return true;
  }

  /// The hot path of decrease: a running application in its own queue that
  /// keeps running and has the usage it gives back. False: nothing changed,
  /// the general path decides (and reports any error).
  bool decrease_fast(detail::limits_app& app, const resource_vector& usage) {
    if (!ensure_plan(app)) return false;
    return by_width(app.plan_width, [&]<std::uint32_t W>() {
      std::array<amount, W> d;
      if (!dense<W>(usage, d, app.plan_slots)) return false;
      return take<W>(app, d.data());
    });
  }
  bool decrease_fast(detail::limits_app& app, const amount* d) {
    if (!ensure_plan(app)) return false;
    return by_width(app.plan_width, [&]<std::uint32_t W>() { return take<W>(app, d); });
  }
  template <std::uint32_t W>
  [[gnu::always_inline]] static bool take(detail::limits_app& app, const amount* d) noexcept {
    // have - request >= 0 everywhere (have, request >= 0: no overflow)
    amount* have = app.use.data();
    amount under = 0;
    for (std::uint32_t sl = 0; sl < W; ++sl) under |= have[sl] - d[sl];
    if (under < 0) return false;
    // every tracker's usage includes the application's
    auto sub = [d](amount* p) {
      for (std::uint32_t sl = 0; sl < W; ++sl) p[sl] -= d[sl];
    };
    sub(have);
    for (amount* p : app.plan_all) sub(p);
    return true;
  }

  // The entry points under mu_: a running application of this user in this
  // queue has valid handles (it holds them), so its plan answers first unless
  // the general path (out of line, with the checks of every handle) must decide.

  decision increase_locked(std::uint32_t q, std::uint32_t a, const resource_vector& usage, std::uint32_t u,
                           std::span<const group_handle> groups, bool commit) {
    if (a < app_states_.size()) {
      auto& app = app_states_[a];
      if (app.live && app.user == u && app.queue == q && increase_fast(app, usage, commit)) return decision{};
    }
    return increase_general(q, a, usage, u, groups, commit);
  }
  void decrease_locked(std::uint32_t q, std::uint32_t a, const resource_vector& usage, bool remove_app,
                       std::uint32_t user_check) {
    if (!remove_app && a < app_states_.size()) {
      auto& app = app_states_[a];
      if (app.live && app.queue == q && (user_check == limits_none || user_check == app.user) &&
          decrease_fast(app, usage))
        return;
    }
    decrease_general(q, a, usage, remove_app, user_check);
  }
  void headroom_locked(std::uint32_t q, std::uint32_t a, std::uint32_t u, std::span<const group_handle> groups,
                       limit_vector& out) {
    if (a < app_states_.size()) {
      auto& app = app_states_[a];
      if (app.live && app.user == u && app.queue == q && headroom_fast(app, out)) return;
    }
    headroom_general(q, a, u, groups, out);
  }

  [[gnu::noinline]] decision increase_general(std::uint32_t q, std::uint32_t a, const resource_vector& usage,
                                              std::uint32_t u, std::span<const group_handle> groups, bool commit) {
    check_queue_handle(q);
    // limits_none: a check (never a commit) of an application by_names did not intern (unseen_app_)
    const bool unseen = a == detail::limits_none && !commit && !unseen_app_.empty();
    if (!unseen) check_app_handle(a);
    check_user_handle(u);
    if (!cq_of(q)) throw unknown_entity_error(error_id::unknown_queue, "queue", queue_nodes_[q].path);
    auto& app = unseen ? unseen_state_ : app_states_[a];
    detail::limits_req req;
    prepare(usage, req, commit, a);  // slots are only assigned by a change
    const bool new_app = !app.live;
    if (!new_app && (app.user != u || app.queue != q))
      throw state_error(error_id::state_conflict, "application '" + apps_.name(a) + "' runs in queue " +
                                                      queue_nodes_[app.queue].path + " for user '" +
                                                      users_.name(app.user) + "', not in " + queue_nodes_[q].path +
                                                      " for '" + users_.name(u) + "'");
    // a relinked application (upstream reload) resolves its group again, and
    // its group side is new: no trackers of it yet
    const bool relink = !new_app && app.relink;
    const bool group_new = new_app || relink;
    const std::uint32_t g = (!new_app && !relink) || app.linked ? app.group : resolve_group(q, groups);
    const auto& chain = queue_nodes_[q].chain;
    decision d;
    bool overflow = false;
    // 1. check the whole path for the user and the group, changing nothing
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const auto level = chain[i];
      node* un = new_app ? find_node_mut(user_states_, u, level) : app.unodes[i];
      const auto* ul = un ? cached(*un, level, u, false) : user_limit(level, u);
      if (!level_ok(ul, un, req, new_app, overflow)) add_reasons(ul, un, req, new_app, false, u, level, d);
      if (g != detail::limits_none) {
        node* gn = group_new ? find_node_mut(group_states_, g, level) : app.gnodes[i];
        const auto* gl = gn ? cached(*gn, level, g, true) : group_limit(level, g);
        if (!level_ok(gl, gn, req, group_new, overflow)) add_reasons(gl, gn, req, group_new, true, g, level, d);
      }
    }
    if (d.denied() || !commit) return d;
    // 2. unlimited levels can still overflow int64
    if (overflow) detail::throw_overflow("user/group usage");
    // 3. commit (node creation and slot growth may allocate; all before any amount changes)
    if (new_app) {
      boost::container::small_vector<node*, 8> un, gn;
      auto& ust = user_states_[u];
      for (auto level : chain) un.push_back(&tracker(ust, level));
      if (g != detail::limits_none) {
        auto& gst = group_states_[group_state_locked(g)];
        for (auto level : chain) gn.push_back(&tracker(gst, level));
      }
      app.unodes = un;
      app.gnodes = gn;
      app.use.clear();
      for (auto* n : app.unodes) ++n->running;
      for (auto* n : app.gnodes) ++n->running;
      app.gcounted = ~std::uint64_t{0};
      app.user = u;
      app.group = g;
      app.queue = q;
      app.plan_gen = 0;
      app.live = true;
      app.relink = false;
    } else if (relink) {
      // joins the group it resolved to now (YuniKorn: the group tracker gets
      // this increase, not the usage the application had before)
      boost::container::small_vector<node*, 8> gn;
      if (g != detail::limits_none) {
        auto& gst = group_states_[group_state_locked(g)];
        for (auto level : chain) gn.push_back(&tracker(gst, level));
      }
      auto widen0 = [&](detail::limits_slots& v) {
        if (v.size() < app.use.size()) v.resize(app.use.size(), amount{0});  // as wide as the application's
      };
      for (auto* n : gn) widen0(n->use);
      app.gnodes = gn;
      for (auto* n : app.gnodes) ++n->running;
      app.gcounted = ~std::uint64_t{0};
      app.group = g;
      app.linked = false;
      app.relink = false;
      app.plan_gen = 0;
    }
    std::size_t width = 0;
    for (const auto& e : req) width = std::max(width, static_cast<std::size_t>(e.slot) + 1);
    node* const* un = app.unodes.data();
    node* const* gn = app.gnodes.data();
    const std::size_t nu = app.unodes.size(), ng = app.gnodes.size();
    auto widen = [width](detail::limits_slots& v) {
      if (v.size() < width) v.resize(width, amount{0});
    };
    for (std::size_t i = 0; i < nu; ++i) widen(un[i]->use);
    for (std::size_t i = 0; i < ng; ++i) widen(gn[i]->use);
    widen(app.use);
    const detail::limits_req_entry* rb = req.begin();
    const std::size_t rn = req.size();
    auto add = [rb, rn](detail::limits_slots& v) {
      amount* p = v.data();
      for (std::size_t k = 0; k < rn; ++k) p[rb[k].slot] += rb[k].value;
    };
    for (std::size_t i = 0; i < nu; ++i) add(un[i]->use);
    for (std::size_t i = 0; i < ng; ++i) add(gn[i]->use);
    add(app.use);
    return d;
  }

  [[gnu::noinline]] void decrease_general(std::uint32_t q, std::uint32_t a, const resource_vector& usage,
                                          bool remove_app, std::uint32_t user_check) {
    check_queue_handle(q);
    if (a >= app_states_.size() || !app_states_[a].live)
      throw unknown_entity_error(error_id::unknown_job, "application",
                                 apps_.alive(a) ? apps_.name(a) : std::to_string(a));
    auto& app = app_states_[a];
    detail::limits_req req;
    prepare(usage, req, false, a);
    if (app.queue != q)
      throw state_error(error_id::state_conflict, "application '" + apps_.name(a) + "' runs in queue " +
                                                      queue_nodes_[app.queue].path + ", not in " +
                                                      queue_nodes_[q].path);
    if (user_check != limits_none && user_check != app.user)
      throw state_error(error_id::state_conflict,
                        "application '" + apps_.name(a) + "' belongs to user '" + users_.name(app.user) + "'");
    for (const auto& e : req) {
      const amount have = detail::limits_at(app.use, e.slot);
      if (e.value > have)
        throw state_error(error_id::state_negative_usage,
                          "decrease of application '" + apps_.name(a) + "' in queue " + queue_nodes_[q].path + " by " +
                              std::string(reg_->name(e.id)) + "=" + std::to_string(e.value) +
                              " would take its usage below zero (usage " + std::to_string(have) + ")");
    }
    if (remove_app) {
      for (std::size_t s = 0; s < std::min(app.use.size(), res_of_slot_.size()); ++s)  // the rest: padding, 0
        if (app.use[s] - usage.get(res_of_slot_[s]) != 0)
          throw state_error(error_id::state_conflict, "application '" + apps_.name(a) +
                                                          "' cannot be removed while it still has usage; decrease "
                                                          "all of it with remove_app");
    }
    // every positive entry has a slot within the application's (and so its trackers') arrays
    const detail::limits_req_entry* rb = req.begin();
    const std::size_t rn = req.size();
    auto take = [rb, rn](detail::limits_slots& v) {
      amount* p = v.data();
      for (std::size_t k = 0; k < rn; ++k) p[rb[k].slot] -= rb[k].value;
    };
    for (auto* n : app.unodes) take(n->use);
    for (auto* n : app.gnodes) take(n->use);
    take(app.use);
    if (!remove_app) return;
    for (auto* n : app.unodes) --n->running;
    for (std::size_t i = 0; i < app.gnodes.size(); ++i)  // an upstream reload may have reset a level
      if (i >= 64 || (app.gcounted >> i) & 1U) --app.gnodes[i]->running;
    // cleanup: trackers without usage and without running applications go away
    const auto& chain = queue_nodes_[q].chain;
    auto cleanup = [&](detail::limits_entity& st) {
      for (auto level : chain) {
        auto it = st.nodes.find(level);
        if (it != st.nodes.end() && it->second.running == 0 && detail::limits_is_zero(it->second.use))
          tracker_pool_.erase(st.nodes, it);
      }
    };
    cleanup(user_states_[app.user]);
    if (app.group != detail::limits_none && !app.relink) cleanup(group_states_[app.group]);
    app.live = false;
    app.plan_gen = 0;
    app.unodes.clear();
    app.gnodes.clear();
    app.use.clear();
    app.group = detail::limits_none;
    app.linked = false;
    app.relink = false;
    if (!app.pinned) forget_app(a);
  }

  [[gnu::noinline]] void headroom_general(std::uint32_t q, std::uint32_t a, std::uint32_t u,
                                          std::span<const group_handle> groups, limit_vector& out) {
    check_queue_handle(q);
    check_user_handle(u);
    if (a != detail::limits_none) check_app_handle(a);
    const bool relink = a != detail::limits_none && app_states_[a].live && app_states_[a].relink;
    const bool running = a != detail::limits_none && app_states_[a].live && app_states_[a].user == u && !relink;
    const bool live = running && app_states_[a].queue == q;  // its cached trackers are the ones to read
    out.clear();
    const std::uint32_t g = running ? app_states_[a].group : query_group(q, a, groups);
    // the minimum per resource id, dense for ids below 16
    std::array<amount, 16> best{};
    std::uint64_t mask = 0;
    auto fold = [&](const detail::limits_value* lim, const node* n) {
      if (!lim) return;
      for (const auto& e : lim->max) {
        const amount used = n ? detail::limits_at(n->use, slot_find(e.id)) : amount{0};
        const amount v = detail::checked_sub(e.value, used);
        if (e.id < best.size()) {
          const std::uint64_t bit = std::uint64_t{1} << e.id;
          if (!(mask & bit) || v < best[e.id]) best[e.id] = v;
          mask |= bit;
        } else {
          const amount* cur = out.find(e.id);
          if (!cur || v < *cur) out.set(e.id, v);
        }
      }
    };
    const auto& chain = queue_nodes_[q].chain;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const auto level = chain[i];
      node* un = live ? app_states_[a].unodes[i] : find_node_mut(user_states_, u, level);
      if (relink && app_states_[a].user == u && app_states_[a].queue == q) un = app_states_[a].unodes[i];
      fold(un ? cached(*un, level, u, false) : user_limit(level, u), un);
      if (g != detail::limits_none) {
        node* gn = live ? app_states_[a].gnodes[i] : find_node_mut(group_states_, g, level);
        fold(gn ? cached(*gn, level, g, true) : group_limit(level, g), gn);
      }
    }
    for (std::uint64_t m = mask; m != 0; m &= m - 1) {
      const auto id = static_cast<resource_id>(std::countr_zero(m));
      out.set(id, best[id]);
    }
  }

  /// headroom of a running application in its own queue, from its plan:
  /// per column (ascending id) the smallest limit - usage. No overflow: every
  /// term's limit is > 0 and its usage >= 0.
  bool headroom_fast(detail::limits_app& app, limit_vector& out) {
    if (app.relink || !ensure_plan(app)) return false;
    out.clear();
    const std::size_t w = app.plan_width;
    const amount* lim = app.plan_lim.data();
    amount* const* use = app.plan_use.data();
    for (const auto& c : app.plan_cols) {
      amount best = c.fixed;
      for (std::uint64_t m = c.rows; m != 0; m &= m - 1) {
        const auto r = static_cast<std::size_t>(std::countr_zero(m));
        best = std::min(best, lim[r * w + c.slot] - use[r][c.slot]);
      }
      out.push_back(c.id, best);
    }
    return true;
  }

  bool can_run_locked(std::uint32_t q, std::uint32_t a, std::uint32_t u, std::span<const group_handle> groups) {
    check_queue_handle(q);
    check_user_handle(u);
    if (a != detail::limits_none) check_app_handle(a);
    if (a != detail::limits_none && app_states_[a].live && !app_states_[a].relink) return true;
    const std::uint32_t g = query_group(q, a, groups);
    if (a != detail::limits_none && app_states_[a].live) {
      // relinked (upstream): the user side has it; the new group's trackers do not, so it counts there
      if (g == detail::limits_none) return true;
      for (auto level : queue_nodes_[q].chain) {
        node* gn = find_node_mut(group_states_, g, level);
        const auto* lim = gn ? cached(*gn, level, g, true) : group_limit(level, g);
        if (lim && lim->max_apps != 0 && (gn ? gn->running : 0) + 1 > lim->max_apps) return false;
      }
      return true;
    }
    auto ok = [&](const detail::limits_value* lim, const node* n) {
      return !lim || lim->max_apps == 0 || (n ? n->running : 0) + 1 <= lim->max_apps;
    };
    for (auto level : queue_nodes_[q].chain) {
      node* un = find_node_mut(user_states_, u, level);
      if (!ok(un ? cached(*un, level, u, false) : user_limit(level, u), un)) return false;
      if (g != detail::limits_none) {
        node* gn = find_node_mut(group_states_, g, level);
        if (!ok(gn ? cached(*gn, level, g, true) : group_limit(level, g), gn)) return false;
      }
    }
    return true;
  }

  /// The limit enforced for user (group) `name` at queue `path` of the config in effect.
  const detail::limits_value* limit_at(const std::string& path, std::string_view name, bool group) const {
    auto it = cfg_->queues.find(path);
    if (it == cfg_->queues.end()) return nullptr;
    const auto& cq = it->second;
    if (group) {
      if (name == limits_wildcard) return cq.group_wild;
      auto g = cq.group_map.find(name);
      return g == cq.group_map.end() ? nullptr : g->second;
    }
    if (auto uu = cq.users.find(name); uu != cq.users.end()) return uu->second;
    return cq.user_wild;
  }

  /// The queue tree of one user or group: its tracked queues (`st`, may be
  /// null; `id` its interned id or limits_none) plus the queues of `extra`
  /// (upstream mode: where the config gives it a limit), each with its ancestors.
  limits_usage_node snapshot_tree(const detail::limits_entity* st, std::uint32_t id, const std::string& name,
                                  bool group, const std::vector<std::string>& extra) const {
    std::unordered_map<std::string, limits_usage_node> built;
    auto make = [&](const std::string& path) -> limits_usage_node& {
      auto [it, fresh] = built.try_emplace(path);
      if (fresh) {
        it->second.queue_path = path;
        if (const auto* lim = limit_at(path, name, group)) {
          it->second.max_resources = lim->max;
          it->second.max_applications = lim->max_apps;
        }
      }
      return it->second;
    };
    if (st) {
      for (const auto& [q, n] : st->nodes) {
        limits_usage_node& out = make(queue_nodes_[q].path);
        out.usage = to_vector(n.use);
        for (std::uint32_t a = 0; a < app_states_.size(); ++a) {
          const auto& app = app_states_[a];
          if (!app.live || (group && app.relink) || (group ? app.group : app.user) != id) continue;
          const auto& ch = queue_nodes_[app.queue].chain;
          if (std::find(ch.begin(), ch.end(), q) != ch.end()) out.running_applications.push_back(apps_.name(a));
        }
        std::sort(out.running_applications.begin(), out.running_applications.end());
      }
    }
    for (std::string path : extra) {
      for (;;) {
        (void)make(path);
        const auto dot = path.rfind('.');
        if (dot == std::string::npos) break;
        path.resize(dot);
      }
    }
    // attach deepest first
    auto depth = [](const std::string& p) { return std::count(p.begin(), p.end(), '.'); };
    std::vector<std::string> order;
    for (const auto& [path, n] : built) order.push_back(path);
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
      const auto dx = depth(x), dy = depth(y);
      return dx != dy ? dx > dy : x > y;
    });
    limits_usage_node root;
    for (const auto& path : order) {
      auto& n = built.at(path);
      std::sort(n.children.begin(), n.children.end(),
                [](const auto& x, const auto& y) { return x.queue_path < y.queue_path; });
      const auto dot = path.rfind('.');
      const auto parent = dot == std::string::npos ? built.end() : built.find(path.substr(0, dot));
      if (parent == built.end())
        root = std::move(n);
      else
        parent->second.children.push_back(std::move(n));
    }
    return root;
  }

  static const std::vector<std::string>& no_paths() noexcept {
    static const std::vector<std::string> none;
    return none;
  }
  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> n{0};
    return n.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  const resource_registry* reg_;
  mutable detail::limits_mutex mu_;
  std::uint64_t id_;  // matches the requests this manager prepared
  std::shared_ptr<const detail::limits_compiled> cfg_;
  std::uint64_t gen_ = 1;  // cached entries start at 0: always resolved once
  detail::limits_interner users_, groups_, apps_, queues_;
  // resource slots: the usage arrays' index of a resource id, assigned on first request
  std::vector<std::uint16_t> slot_of_;
  std::vector<resource_id> res_of_slot_;
  // vectors: entities move their unordered_map on growth, which keeps node
  // addresses (the map's nodes are not relocated by a noexcept move)
  std::vector<detail::limits_queue_node> queue_nodes_;
  std::vector<detail::limits_entity> user_states_, group_states_;
  std::vector<detail::limits_app> app_states_;
  std::uint32_t last_app_ = limits_none;  // app_find's last answer (a hint; checked by name)
  // A check of an application the manager does not track (by_names): its
  // name for messages during that one locked call, and the state of an
  // application that does not run, which the check reads (never written)
  std::string_view unseen_app_;
  detail::limits_app unseen_state_;
  // trackers removed by a release, kept for the next ones: an admission and a
  // release of a user's only application allocate nothing once warm (a copy
  // of the manager starts without spares)
  detail::node_pool<std::unordered_map<std::uint32_t, detail::limits_node>> tracker_pool_;
  static_assert(std::is_nothrow_move_constructible_v<detail::limits_entity>);
  static constexpr std::uint32_t limits_none = detail::limits_none;
};

/// The model with its default parameters.
using yunikorn_limits_model = basic_yunikorn_limits_model<>;

// ---- policy adapter --------------------------------------------------------------------------

/// quota::policy over a yunikorn_limits_model: job.queue = queue path, job.user /
/// job.groups = identity, job.id = application, job.request = usage. One job
/// is one application: commit increases (a second commit of the same id is a
/// state_error), release decreases all of it and removes the application.
///
/// A queue name that is not qualified ("team-a" rather than "root.team-a") is
/// qualified with "root." as YuniKorn's placement does for a provided queue.
/// The adapter owns its manager, at a fixed address: other threads reload and
/// read it through manager() while the host schedules (the adapter, or the
/// engine holding it, must outlive them). A copy of the adapter is an
/// independent model: a copy of the manager with the same configuration and
/// usage.
/// `Tag` has no meaning: the bodies of a class template compile only where
/// they are used, which keeps this header cheap to include
/// (docs/performance.md#include-cost).
template <class Tag = void>
class basic_yunikorn_limits_policy {
 public:
  explicit basic_yunikorn_limits_policy(const resource_registry& reg,
                                        yunikorn_limits_locking locking = yunikorn_limits_locking::internal)
      : m_(std::make_unique<yunikorn_limits_model>(reg, locking)) {}
  /// Takes over a manager (its configuration and usage).
  explicit basic_yunikorn_limits_policy(std::unique_ptr<yunikorn_limits_model> m) : m_(std::move(m)) {
    if (!m_) throw state_error(error_id::state_conflict, "basic_yunikorn_limits_policy: no yunikorn_limits_model");
  }
  basic_yunikorn_limits_policy(const basic_yunikorn_limits_policy& o)
      : m_(std::make_unique<yunikorn_limits_model>(*o.m_)), requests_(o.requests_) {}
  basic_yunikorn_limits_policy& operator=(const basic_yunikorn_limits_policy& o) {
    if (this != &o) *this = basic_yunikorn_limits_policy(o);
    return *this;
  }
  basic_yunikorn_limits_policy(basic_yunikorn_limits_policy&&) noexcept = default;
  basic_yunikorn_limits_policy& operator=(basic_yunikorn_limits_policy&&) noexcept = default;
  ~basic_yunikorn_limits_policy() = default;

  [[nodiscard]] std::string_view policy_name() const noexcept { return yunikorn_limits_model_name; }
  [[nodiscard]] const yunikorn_limits_model& manager() const noexcept { return *m_; }
  /// The manager, for a reload through the policy (its usage stays).
  [[nodiscard]] yunikorn_limits_model& manager() noexcept { return *m_; }

  /// "root.<q>" unless `q` is "root" or starts with "root.".
  [[nodiscard]] static std::string qualify(std::string_view q) {
    if (q == "root" || q.starts_with("root.")) return std::string(q);
    std::string s("root.");
    s.append(q);
    return s;
  }

  [[nodiscard]] decision check(const job& j) const {
    const qualified q(j.queue);
    return m_->check_increase(q.path(), j.id, j.request, j.user, j.groups);
  }
  /// Allocates nothing once warm: the job's entry reuses a released job's
  /// node and its strings.
  void commit(const job& j) {
    // first (one lookup, the duplicate test too): a failing increase is undone below
    const auto [it, inserted] = pool_.emplace_key(requests_, j.id);  // every field is assigned below
    if (!inserted) throw state_error(error_id::state_duplicate, "job '" + j.id + "' is already committed");
    try {
      entry& e = it->second;
      e.queue.assign(qualified(j.queue).path());
      e.who.user.assign(j.user);
      e.who.groups.clear();
      e.request = j.request;
      const decision d = m_->increase(e.queue, j.id, j.request, j.user, j.groups);
      if (d.denied()) throw commit_denied_error("job '" + j.id + "': " + to_string(d), d);
    } catch (...) {
      pool_.erase(requests_, it);
      throw;
    }
  }
  void release(std::string_view id) {
    auto it = requests_.find(id);
    if (it == requests_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    m_->decrease(it->second.queue, id, it->second.request, true, it->second.who);
    pool_.erase(requests_, it);
  }
  /// Limits never preempt: running work is never evicted.
  void victims(const job&, std::vector<victim>&) const {}

 private:
  struct entry {
    std::string queue;
    limits_identity who;  // the user (no groups: a release names only the user)
    resource_vector request;
  };
  /// qualify(q) without a std::string for a name of up to 120 characters.
  class qualified {
   public:
    explicit qualified(std::string_view q) {
      if (q == "root" || q.starts_with("root.")) {
        path_ = q;
      } else if (q.size() + 5 <= sizeof(buf_)) {
        std::memcpy(buf_, "root.", 5);
        if (!q.empty()) std::memcpy(buf_ + 5, q.data(), q.size());
        path_ = std::string_view(buf_, q.size() + 5);
      } else {
        long_ = qualify(q);
        path_ = long_;
      }
    }
    qualified(const qualified&) = delete;
    qualified& operator=(const qualified&) = delete;
    ~qualified() = default;
    [[nodiscard]] std::string_view path() const noexcept { return path_; }

   private:
    char buf_[128];
    std::string long_;
    std::string_view path_;
  };
  using request_map = std::unordered_map<std::string, entry, detail::string_hash, std::equal_to<>>;
  std::unique_ptr<yunikorn_limits_model> m_;
  request_map requests_;
  detail::node_pool<request_map> pool_;  // spare nodes: an admission and a release allocate nothing once warm
};

/// The adapter with its default parameters.
using yunikorn_limits_policy = basic_yunikorn_limits_policy<>;

static_assert(policy<yunikorn_limits_policy>);

}  // namespace quota
