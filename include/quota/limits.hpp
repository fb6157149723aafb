// quota/limits.hpp — user and group limit enforcement (YuniKorn model).
//
// Trackers of resource usage and running applications per user and per group
// at every queue of a hierarchy, checked against the limits of a
// limits_config (quota/limits_config.hpp):
//
//   limits_manager m(registry);
//   m.reload(cfg);                                         // validate aside, swap in one step
//   decision d = m.increase("root.a", "app-1", usage, {"sue", {"dev"}});
//   m.decrease("root.a", "app-1", usage, /*remove_app=*/true, {"sue", {"dev"}});
//
// Rules (see docs/user-group-limits.md for the seed sentence behind each):
// * user limit at a queue: the named entry, else the wildcard entry; checked at
//   every level from the leaf to the root. A wildcard entry gives every user
//   their own copy of the limit.
// * group of an application (a user with no groups has none): from the leaf to the root, the first level whose
//   group limits name one of the user's groups (in config order), else that
//   level's wildcard group, decides. It is fixed for the application. Only that
//   group's entries are checked, at every level. The wildcard group is one
//   cumulative pool ("*") shared by every user that falls into it.
// * increase is all-or-nothing over user and group and every level; a denial
//   changes nothing. maxapplications only denies a new application.
// * decrease is never denied; below zero / unknown application / wrong queue
//   is a typed error and changes nothing. Empty trackers are removed.
// * reload validates and compiles the new config without the lock, then swaps
//   it in one step; usage above a lowered limit is kept.
//
// Thread safety: every member may be called from any thread; one mutex guards
// the trackers (held for a few hundred nanoseconds per call); reload holds it
// only for the pointer swap. Hot path: the handle API allocates nothing once
// the user's queue trackers exist and usage vectors have at most 8 resources.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/error.hpp>
#include <quota/limits_config.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// Interned ids for the hot path. Obtain them from limits_manager::user_id etc.
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

namespace detail {

struct limits_interner {
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> ids;
  std::deque<std::string> names;
  [[nodiscard]] std::optional<std::uint32_t> find(std::string_view n) const {
    auto it = ids.find(n);
    if (it == ids.end()) return std::nullopt;
    return it->second;
  }
  std::uint32_t intern(std::string_view n) {
    if (auto id = find(n)) return *id;
    if (names.size() >= 0xFFFFFFF0U) throw overflow_error("too many interned names");
    const auto id = static_cast<std::uint32_t>(names.size());
    names.emplace_back(n);
    try {
      ids.emplace(names.back(), id);
    } catch (...) {
      names.pop_back();
      throw;
    }
    return id;
  }
};

/// A limit as enforced: the entry's amounts plus where it came from.
struct limits_value {
  std::string entry;       // limit entry description
  std::string where;       // "root.a.limits[1]"
  limit_vector max;        // absent = unlimited
  std::uint64_t max_apps;  // 0 = unlimited
};

/// One queue of a compiled config, keyed by names (compiled without the lock).
struct limits_compiled_queue {
  std::unordered_map<std::string, const limits_value*, string_hash, std::equal_to<>> users;
  const limits_value* user_wild = nullptr;
  std::vector<std::pair<std::string, const limits_value*>> groups;  // named, config order
  std::unordered_map<std::string, const limits_value*, string_hash, std::equal_to<>> group_map;
  const limits_value* group_wild = nullptr;
};

struct limits_compiled {
  std::deque<limits_value> values;
  std::unordered_map<std::string, limits_compiled_queue, string_hash, std::equal_to<>> queues;  // by path
};

inline void limits_compile_queue(const limits_queue& q, const std::string& path, limits_compiled& out) {
  auto& cq = out.queues[path];
  for (std::size_t i = 0; i < q.limits.size(); ++i) {
    const auto& e = q.limits[i];
    out.values.push_back({e.name, path + ".limits[" + std::to_string(i) + "]", e.max_resources, e.max_applications});
    const limits_value* v = &out.values.back();
    for (const auto& u : e.users) {
      if (u == limits_wildcard)
        cq.user_wild = v;
      else
        cq.users.emplace(u, v);
    }
    for (const auto& g : e.groups) {
      if (g == limits_wildcard) {
        cq.group_wild = v;
      } else {
        cq.groups.emplace_back(g, v);
        cq.group_map.emplace(g, v);
      }
    }
  }
  for (const auto& c : q.queues) limits_compile_queue(c, path + "." + c.name, out);
}

inline constexpr std::uint32_t limits_none = 0xFFFFFFFFU;
inline constexpr std::uint32_t limits_wild_group = 0;  // group id 0 is the "*" pool

/// Tracker usage: sorted (id, amount) pairs with in-place merge walks (the hot
/// path adds and subtracts the same few resources over and over).
class limits_usage {
 public:
  using entry = resource_entry<amount>;
  [[nodiscard]] amount get(resource_id id) const noexcept {
    for (const auto& e : v_)
      if (e.id == id) return e.value;
    return 0;
  }
  /// Would adding `r` overflow any dimension?
  [[nodiscard]] bool can_add(const resource_vector& r) const noexcept {
    auto it = v_.begin();
    for (const auto& e : r) {
      while (it != v_.end() && it->id < e.id) ++it;
      amount t{};
      if (it != v_.end() && it->id == e.id && !try_add(it->value, e.value, t)) return false;
    }
    return true;
  }
  /// Adds `sign * r`; the caller checked overflow (add) or below-zero (sub).
  void add(const resource_vector& r, bool negate = false) {
    std::size_t i = 0;
    for (const auto& e : r) {
      while (i < v_.size() && v_[i].id < e.id) ++i;
      if (i < v_.size() && v_[i].id == e.id)
        v_[i].value = negate ? v_[i].value - e.value : v_[i].value + e.value;
      else
        v_.insert(v_.begin() + static_cast<std::ptrdiff_t>(i), entry{e.id, negate ? -e.value : e.value});
    }
  }
  /// fits_with(usage, request, limit) for this usage: only requested (> 0) resources count.
  [[nodiscard]] bool fits_with(const resource_vector& req, const limit_vector& lim) const noexcept {
    auto ui = v_.begin();
    auto li = lim.begin();
    const auto le = lim.end();
    for (const auto& e : req) {
      if (e.value <= 0) continue;
      while (li != le && (*li).id < e.id) ++li;
      if (li == le || (*li).id != e.id) continue;  // not limited
      while (ui != v_.end() && ui->id < e.id) ++ui;
      amount total = e.value;
      if (ui != v_.end() && ui->id == e.id && !try_add(ui->value, e.value, total)) return false;
      if ((*li).value < total) return false;
    }
    return true;
  }
  [[nodiscard]] bool is_zero() const noexcept {
    for (const auto& e : v_)
      if (e.value != 0) return false;
    return true;
  }
  void clear() noexcept { v_.clear(); }
  [[nodiscard]] resource_vector to_vector() const {
    resource_vector r;
    for (const auto& e : v_)
      if (e.value != 0) r.set(e.id, e.value);
    return r;
  }
  [[nodiscard]] auto begin() const noexcept { return v_.begin(); }
  [[nodiscard]] auto end() const noexcept { return v_.end(); }

 private:
  boost::container::small_vector<entry, 8> v_;
};

struct limits_node {
  limits_usage usage;
  std::uint64_t running = 0;
  std::uint64_t gen = 0;  // config generation `lim` was resolved for
  const limits_value* lim = nullptr;
};

struct limits_entity {
  std::unordered_map<std::uint32_t, limits_node> nodes;  // by queue id; node addresses are stable
};

struct limits_queue_node {
  std::string path;
  std::uint32_t parent = limits_none;
  std::vector<std::uint32_t> chain;  // leaf .. root
  // cache of the compiled queue for the current config generation
  std::uint64_t gen = 0;
  const limits_compiled_queue* cq = nullptr;
};

struct limits_app {
  bool live = false;
  std::uint32_t user = limits_none;
  std::uint32_t group = limits_none;
  std::uint32_t queue = limits_none;
  limits_usage usage;
  boost::container::small_vector<limits_node*, 8> unodes, gnodes;  // along the chain
};

}  // namespace detail

class limits_manager {
 public:
  static constexpr std::string_view model_name = "yunikorn_limits";

  explicit limits_manager(const resource_registry& reg) : reg_(&reg) {
    groups_.intern(limits_wildcard);  // id 0: the cumulative wildcard pool
    cfg_ = std::make_shared<const detail::limits_compiled>();
  }
  limits_manager(const limits_manager&) = delete;
  limits_manager& operator=(const limits_manager&) = delete;

  // ---- configuration ------------------------------------------------------------------------

  /// Validates `cfg` (validation_error with every problem, nothing changed),
  /// compiles it without holding the lock, then swaps it in one step. Usage is
  /// kept; limits (named and wildcard) apply to existing trackers from now on.
  void reload(const limits_config& cfg) {
    validate_limits_config(cfg, *reg_);
    auto next = std::make_shared<detail::limits_compiled>();
    detail::limits_compile_queue(cfg.root, "root", *next);
    std::shared_ptr<const detail::limits_compiled> old;
    {
      std::lock_guard lk(mu_);
      old = std::exchange(cfg_, std::move(next));
      ++gen_;
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
  [[nodiscard]] app_handle app_id(std::string_view app) {
    std::lock_guard lk(mu_);
    return app_handle{app_locked(app)};
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
  /// after a reload lowered a limit below usage.
  [[nodiscard]] limit_vector headroom(queue_handle q, app_handle a, user_handle u,
                                      std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    limit_vector out;
    headroom_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(u), groups,
                    out);
    return out;
  }
  /// Would application `a` be allowed to run (maxapplications at every level)?
  /// A running application can always continue.
  [[nodiscard]] bool can_run_app(queue_handle q, app_handle a, user_handle u, std::span<const group_handle> groups) {
    std::lock_guard lk(mu_);
    return can_run_locked(static_cast<std::uint32_t>(q), static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(u),
                          groups);
  }

  // ---- convenience API by strings -------------------------------------------------------------

  [[nodiscard]] decision increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                  std::string_view user, std::span<const std::string> groups) {
    return by_names(queue_path, app, user, groups,
                    [&](auto q, auto a, auto u, auto gs) { return increase_locked(q, a, usage, u, gs, true); });
  }
  [[nodiscard]] decision increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                  const limits_identity& id) {
    return increase(queue_path, app, usage, id.user, id.groups);
  }
  [[nodiscard]] decision check_increase(std::string_view queue_path, std::string_view app, const resource_vector& usage,
                                        const limits_identity& id) {
    return by_names(queue_path, app, id.user, id.groups,
                    [&](auto q, auto a, auto u, auto gs) { return increase_locked(q, a, usage, u, gs, false); });
  }
  /// Decrease by names. The identity's user must be the application's user.
  void decrease(std::string_view queue_path, std::string_view app, const resource_vector& usage, bool remove_app,
                const limits_identity& id) {
    std::lock_guard lk(mu_);
    const auto a = apps_.find(app);
    if (!a || *a >= app_states_.size() || !app_states_[*a].live)
      throw unknown_entity_error(error_id::unknown_job, "application", app);
    const auto q = queues_.find(queue_path);
    const std::uint32_t qi = q ? *q : queue_locked(queue_path);
    const auto u = users_.find(id.user);
    decrease_locked(qi, *a, usage, remove_app, u ? *u : limits_none - 1);
  }
  [[nodiscard]] limit_vector headroom(std::string_view queue_path, std::string_view app, const limits_identity& id) {
    limit_vector out;
    by_names(queue_path, app, id.user, id.groups, [&](auto q, auto a, auto u, auto gs) {
      headroom_locked(q, a, u, gs, out);
      return 0;
    });
    return out;
  }
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
    return n ? n->usage.to_vector() : resource_vector{};
  }
  [[nodiscard]] resource_vector group_usage(std::string_view group, std::string_view queue_path) const {
    std::lock_guard lk(mu_);
    const auto* n = find_node(group_states_, groups_.find(group), queues_.find(queue_path));
    return n ? n->usage.to_vector() : resource_vector{};
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
    if (!a || *a >= app_states_.size() || !app_states_[*a].live) return std::nullopt;
    const auto g = app_states_[*a].group;
    return g == detail::limits_none ? std::string() : groups_.names[g];
  }
  /// Number of queue trackers (user + group) that exist; empty ones are removed.
  [[nodiscard]] std::size_t tracker_count() const {
    std::lock_guard lk(mu_);
    std::size_t n = 0;
    for (const auto& s : user_states_) n += s.nodes.size();
    for (const auto& s : group_states_) n += s.nodes.size();
    return n;
  }
  /// Snapshots in the shape of YuniKorn's /usage/users and /usage/groups.
  [[nodiscard]] std::vector<limits_user_usage> users_usage() const {
    std::lock_guard lk(mu_);
    std::vector<limits_user_usage> out;
    for (std::uint32_t u = 0; u < user_states_.size(); ++u) {
      if (user_states_[u].nodes.empty()) continue;
      limits_user_usage uu;
      uu.user = users_.names[u];
      for (std::uint32_t a = 0; a < app_states_.size(); ++a)
        if (app_states_[a].live && app_states_[a].user == u)
          uu.app_groups.emplace_back(apps_.names[a], app_states_[a].group == detail::limits_none
                                                         ? std::string()
                                                         : groups_.names[app_states_[a].group]);
      std::sort(uu.app_groups.begin(), uu.app_groups.end());
      uu.queues = snapshot_tree(user_states_[u], u, false);
      out.push_back(std::move(uu));
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.user < y.user; });
    return out;
  }
  [[nodiscard]] std::vector<limits_group_usage> groups_usage() const {
    std::lock_guard lk(mu_);
    std::vector<limits_group_usage> out;
    for (std::uint32_t g = 0; g < group_states_.size(); ++g) {
      if (group_states_[g].nodes.empty()) continue;
      limits_group_usage gu;
      gu.group = groups_.names[g];
      for (std::uint32_t a = 0; a < app_states_.size(); ++a)
        if (app_states_[a].live && app_states_[a].group == g) gu.applications.push_back(apps_.names[a]);
      std::sort(gu.applications.begin(), gu.applications.end());
      gu.queues = snapshot_tree(group_states_[g], g, true);
      out.push_back(std::move(gu));
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.group < y.group; });
    return out;
  }

  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 private:
  using node = detail::limits_node;

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
    const auto id = queues_.intern(path);
    if (queue_nodes_.size() <= id) queue_nodes_.resize(id + 1);
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
    const auto id = users_.intern(user);
    if (user_states_.size() <= id) user_states_.resize(id + 1);
    return id;
  }
  std::uint32_t app_locked(std::string_view app) {
    if (app.empty()) throw unknown_entity_error(error_id::unknown_job, "application", app);
    const auto id = apps_.intern(app);
    if (app_states_.size() <= id) app_states_.resize(id + 1);
    return id;
  }
  std::uint32_t group_state_locked(std::uint32_t g) {
    if (group_states_.size() <= g) group_states_.resize(g + 1);
    return g;
  }

  template <class F>
  std::invoke_result_t<F&, std::uint32_t, std::uint32_t, std::uint32_t, std::span<const group_handle>> by_names(
      std::string_view queue_path, std::string_view app, std::string_view user, std::span<const std::string> groups,
      F&& f) {
    std::lock_guard lk(mu_);
    const auto q = queue_locked(queue_path);
    const auto u = user_locked(user);
    const auto a = app.empty() ? detail::limits_none : app_locked(app);
    boost::container::small_vector<group_handle, 8> gs;
    for (const auto& g : groups)
      if (!g.empty() && g != limits_wildcard && gs.size() < 64) gs.push_back(group_handle{groups_.intern(g)});
    return f(q, a, u, std::span<const group_handle>(gs.data(), gs.size()));
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
      auto it = cq->users.find(users_.names[u]);
      if (it != cq->users.end()) return it->second;
    }
    return cq->user_wild;
  }
  const detail::limits_value* group_limit(std::uint32_t q, std::uint32_t g) {
    const auto* cq = cq_of(q);
    if (!cq) return nullptr;
    if (g == detail::limits_wild_group) return cq->group_wild;
    auto it = cq->group_map.find(groups_.names[g]);
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
          if (gi < groups_.names.size() && groups_.names[gi] == name) return gi;
        }
      if (cq->group_wild) return detail::limits_wild_group;
    }
    return detail::limits_none;
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
    if (a >= app_states_.size()) throw unknown_entity_error(error_id::unknown_job, "application id", std::to_string(a));
  }
  void check_queue_handle(std::uint32_t q) const {
    if (q >= queue_nodes_.size()) throw unknown_entity_error(error_id::unknown_queue, "queue id", std::to_string(q));
  }
  void check_user_handle(std::uint32_t u) const {
    if (u >= users_.names.size()) throw unknown_entity_error(error_id::unknown_user, "user id", std::to_string(u));
    if (user_states_.size() <= u) throw unknown_entity_error(error_id::unknown_user, "user id", std::to_string(u));
  }
  void check_request(const resource_vector& usage, std::uint32_t a) const {
    for (const auto& e : usage)
      if (e.value < 0)
        throw validation_error("application " + apps_.names[a] + ".usage." + std::string(reg_->name(e.id)),
                               "negative amount " + std::to_string(e.value));
  }

  // one level of the check; appends a reason when it fails
  void check_level(const detail::limits_value* lim, const node* n, const resource_vector& usage, bool new_app,
                   bool group, std::uint32_t id, std::uint32_t q, decision& d) const {
    if (!lim) return;
    static const detail::limits_usage zero{};
    const detail::limits_usage& used = n ? n->usage : zero;
    const std::uint64_t running = n ? n->running : 0;
    if (new_app && lim->max_apps != 0 && running + 1 > lim->max_apps) {
      reason r;
      r.model = model_name;
      r.rule = "max_applications";
      r.entity = entity_text(group, id, q);
      r.requested = 1;
      r.used = static_cast<std::int64_t>(running);
      r.limit = static_cast<std::int64_t>(lim->max_apps);
      r.message = lim->where + " '" + lim->entry + "'";
      d.add(std::move(r));
    }
    if (!used.fits_with(usage, lim->max)) {
      for (const auto& e : usage) {
        if (e.value <= 0) continue;
        const amount* l = lim->max.find(e.id);
        if (!l) continue;
        amount total{};
        const amount u = used.get(e.id);
        if (detail::try_add(u, e.value, total) && total <= *l) continue;
        reason r;
        r.model = model_name;
        r.rule = "max_resources";
        r.entity = entity_text(group, id, q);
        r.resource = e.id;
        r.resource_name = reg_->name(e.id);
        r.requested = e.value;
        r.used = u;
        r.limit = *l;
        r.message = lim->where + " '" + lim->entry + "'";
        d.add(std::move(r));
        break;
      }
    }
  }
  std::string entity_text(bool group, std::uint32_t id, std::uint32_t q) const {
    std::string s(group ? "group" : "user");
    s.push_back(':');
    s.append(group ? groups_.names[id] : users_.names[id]);
    s.push_back('@');
    s.append(queue_nodes_[q].path);
    return s;
  }

  decision increase_locked(std::uint32_t q, std::uint32_t a, const resource_vector& usage, std::uint32_t u,
                           std::span<const group_handle> groups, bool commit) {
    check_queue_handle(q);
    check_app_handle(a);
    check_user_handle(u);
    if (!cq_of(q)) throw unknown_entity_error(error_id::unknown_queue, "queue", queue_nodes_[q].path);
    check_request(usage, a);
    auto& app = app_states_[a];
    const bool new_app = !app.live;
    if (!new_app && (app.user != u || app.queue != q))
      throw state_error(error_id::state_conflict, "application '" + apps_.names[a] + "' runs in queue " +
                                                      queue_nodes_[app.queue].path + " for user '" +
                                                      users_.names[app.user] + "', not in " + queue_nodes_[q].path +
                                                      " for '" + users_.names[u] + "'");
    const std::uint32_t g = new_app ? resolve_group(q, groups) : app.group;
    const auto& chain = queue_nodes_[q].chain;
    decision d;
    // 1. check the whole path for the user and the group, changing nothing
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const auto level = chain[i];
      node* un = new_app ? find_node_mut(user_states_, u, level) : app.unodes[i];
      check_level(un ? cached(*un, level, u, false) : user_limit(level, u), un, usage, new_app, false, u, level, d);
      if (g != detail::limits_none) {
        node* gn = new_app ? find_node_mut(group_states_, g, level) : app.gnodes[i];
        check_level(gn ? cached(*gn, level, g, true) : group_limit(level, g), gn, usage, new_app, true, g, level, d);
      }
    }
    if (d.denied() || !commit) return d;
    // 2. overflow pre-check (unlimited levels can still overflow int64)
    auto overflow_check = [&](const node* n) {
      if (n && !n->usage.can_add(usage)) detail::throw_overflow("user/group usage");
    };
    if (!new_app) {
      for (auto* n : app.unodes) overflow_check(n);
      for (auto* n : app.gnodes) overflow_check(n);
    } else {
      for (auto level : chain) {
        overflow_check(find_node_mut(user_states_, u, level));
        if (g != detail::limits_none) overflow_check(find_node_mut(group_states_, g, level));
      }
    }
    // 3. commit (node creation may allocate; empty nodes left by a failure are harmless)
    if (new_app) {
      boost::container::small_vector<node*, 8> un, gn;
      auto& ust = user_states_[u];
      for (auto level : chain) un.push_back(&ust.nodes[level]);
      if (g != detail::limits_none) {
        auto& gst = group_states_[group_state_locked(g)];
        for (auto level : chain) gn.push_back(&gst.nodes[level]);
      }
      app.unodes = un;
      app.gnodes = gn;
      app.usage.clear();
      for (auto* n : app.unodes) ++n->running;
      for (auto* n : app.gnodes) ++n->running;
      app.user = u;
      app.group = g;
      app.queue = q;
      app.live = true;
    }
    for (auto* n : app.unodes) n->usage.add(usage);
    for (auto* n : app.gnodes) n->usage.add(usage);
    app.usage.add(usage);
    return d;
  }

  void decrease_locked(std::uint32_t q, std::uint32_t a, const resource_vector& usage, bool remove_app,
                       std::uint32_t user_check) {
    check_queue_handle(q);
    if (a >= app_states_.size() || !app_states_[a].live)
      throw unknown_entity_error(error_id::unknown_job, "application",
                                 a < apps_.names.size() ? apps_.names[a] : std::to_string(a));
    auto& app = app_states_[a];
    check_request(usage, a);
    if (app.queue != q)
      throw state_error(error_id::state_conflict, "application '" + apps_.names[a] + "' runs in queue " +
                                                      queue_nodes_[app.queue].path + ", not in " +
                                                      queue_nodes_[q].path);
    if (user_check != limits_none && user_check != app.user)
      throw state_error(error_id::state_conflict,
                        "application '" + apps_.names[a] + "' belongs to user '" + users_.names[app.user] + "'");
    bool rest = false;
    for (const auto& e : app.usage) {
      const amount take = usage.get(e.id);
      if (e.value - take != 0) rest = true;
    }
    for (const auto& e : usage)
      if (e.value > app.usage.get(e.id))
        throw state_error(error_id::state_negative_usage,
                          "decrease of application '" + apps_.names[a] + "' in queue " + queue_nodes_[q].path + " by " +
                              std::string(reg_->name(e.id)) + "=" + std::to_string(e.value) +
                              " would take its usage below zero (usage " + std::to_string(app.usage.get(e.id)) + ")");
    if (remove_app && rest)
      throw state_error(error_id::state_conflict, "application '" + apps_.names[a] +
                                                      "' cannot be removed while it still has usage; decrease "
                                                      "all of it with remove_app");
    for (auto* n : app.unodes) n->usage.add(usage, true);
    for (auto* n : app.gnodes) n->usage.add(usage, true);
    app.usage.add(usage, true);
    if (!remove_app) return;
    for (auto* n : app.unodes) --n->running;
    for (auto* n : app.gnodes) --n->running;
    // cleanup: trackers without usage and without running applications go away
    const auto& chain = queue_nodes_[q].chain;
    auto cleanup = [&](detail::limits_entity& st) {
      for (auto level : chain) {
        auto it = st.nodes.find(level);
        if (it != st.nodes.end() && it->second.running == 0 && it->second.usage.is_zero()) st.nodes.erase(it);
      }
    };
    cleanup(user_states_[app.user]);
    if (app.group != detail::limits_none) cleanup(group_states_[app.group]);
    app.live = false;
    app.unodes.clear();
    app.gnodes.clear();
    app.usage.clear();
    app.group = detail::limits_none;
  }

  void headroom_locked(std::uint32_t q, std::uint32_t a, std::uint32_t u, std::span<const group_handle> groups,
                       limit_vector& out) {
    check_queue_handle(q);
    check_user_handle(u);
    out.clear();
    const bool running =
        a != detail::limits_none && a < app_states_.size() && app_states_[a].live && app_states_[a].user == u;
    const std::uint32_t g = running ? app_states_[a].group : resolve_group(q, groups);
    const bool live = running && app_states_[a].queue == q;  // its cached trackers are the ones to read
    auto fold = [&](const detail::limits_value* lim, const node* n) {
      if (!lim) return;
      for (const auto& e : lim->max) {
        const amount v = detail::checked_sub(e.value, n ? n->usage.get(e.id) : amount{0});
        const amount* cur = out.find(e.id);
        if (!cur || v < *cur) out.set(e.id, v);
      }
    };
    const auto& chain = queue_nodes_[q].chain;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const auto level = chain[i];
      node* un = live ? app_states_[a].unodes[i] : find_node_mut(user_states_, u, level);
      fold(un ? cached(*un, level, u, false) : user_limit(level, u), un);
      if (g != detail::limits_none) {
        node* gn = live ? app_states_[a].gnodes[i] : find_node_mut(group_states_, g, level);
        fold(gn ? cached(*gn, level, g, true) : group_limit(level, g), gn);
      }
    }
  }

  bool can_run_locked(std::uint32_t q, std::uint32_t a, std::uint32_t u, std::span<const group_handle> groups) {
    check_queue_handle(q);
    check_user_handle(u);
    if (a != detail::limits_none && a < app_states_.size() && app_states_[a].live) return true;
    const std::uint32_t g = resolve_group(q, groups);
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

  limits_usage_node snapshot_tree(const detail::limits_entity& st, std::uint32_t id, bool group) const {
    // build nodes for every tracked queue, then link children to parents
    std::unordered_map<std::uint32_t, limits_usage_node> built;
    for (const auto& [q, n] : st.nodes) {
      limits_usage_node out;
      out.queue_path = queue_nodes_[q].path;
      out.usage = n.usage.to_vector();
      const detail::limits_value* lim = nullptr;
      if (auto it = cfg_->queues.find(queue_nodes_[q].path); it != cfg_->queues.end()) {
        const auto& cq = it->second;
        if (group) {
          if (id == detail::limits_wild_group)
            lim = cq.group_wild;
          else if (auto g = cq.group_map.find(groups_.names[id]); g != cq.group_map.end())
            lim = g->second;
        } else if (auto uu = cq.users.find(users_.names[id]); uu != cq.users.end()) {
          lim = uu->second;
        } else {
          lim = cq.user_wild;
        }
      }
      if (lim) {
        out.max_resources = lim->max;
        out.max_applications = lim->max_apps;
      }
      for (std::uint32_t a = 0; a < app_states_.size(); ++a) {
        const auto& app = app_states_[a];
        if (!app.live || (group ? app.group : app.user) != id) continue;
        const auto& ch = queue_nodes_[app.queue].chain;
        if (std::find(ch.begin(), ch.end(), q) != ch.end()) out.running_applications.push_back(apps_.names[a]);
      }
      std::sort(out.running_applications.begin(), out.running_applications.end());
      built.emplace(q, std::move(out));
    }
    // attach deepest first
    std::vector<std::uint32_t> order;
    for (const auto& [q, n] : built) order.push_back(q);
    std::sort(order.begin(), order.end(), [&](auto x, auto y) {
      const auto dx = queue_nodes_[x].chain.size(), dy = queue_nodes_[y].chain.size();
      return dx != dy ? dx > dy : queue_nodes_[x].path > queue_nodes_[y].path;
    });
    limits_usage_node root;
    for (auto q : order) {
      auto& n = built.at(q);
      std::sort(n.children.begin(), n.children.end(),
                [](const auto& x, const auto& y) { return x.queue_path < y.queue_path; });
      const auto parent = queue_nodes_[q].parent;
      if (parent == detail::limits_none || built.find(parent) == built.end())
        root = std::move(n);
      else
        built.at(parent).children.push_back(std::move(n));
    }
    return root;
  }

  const resource_registry* reg_;
  mutable std::mutex mu_;
  std::shared_ptr<const detail::limits_compiled> cfg_;
  std::uint64_t gen_ = 1;  // cached entries start at 0: always resolved once
  detail::limits_interner users_, groups_, apps_, queues_;
  // vectors: entities move their unordered_map on growth, which keeps node
  // addresses (the map's nodes are not relocated by a noexcept move)
  std::vector<detail::limits_queue_node> queue_nodes_;
  std::vector<detail::limits_entity> user_states_, group_states_;
  std::vector<detail::limits_app> app_states_;
  static_assert(std::is_nothrow_move_constructible_v<detail::limits_entity>);
  static constexpr std::uint32_t limits_none = detail::limits_none;
};

// ---- policy adapter --------------------------------------------------------------------------

/// quota::policy over a limits_manager: job.queue = queue path, job.user /
/// job.groups = identity, job.id = application, job.request = usage. One job
/// is one application: commit increases (a second commit of the same id is a
/// state_error), release decreases all of it and removes the application.
///
/// A queue name that is not qualified ("team-a" rather than "root.team-a") is
/// qualified with "root." as YuniKorn's placement does for a provided queue.
/// The adapter either refers to a manager the host keeps alive, or shares
/// ownership of one (copies of the adapter then share the same trackers).
class limits_policy {
 public:
  explicit limits_policy(limits_manager& m) : m_(&m) {}
  explicit limits_policy(std::shared_ptr<limits_manager> m) : owned_(std::move(m)), m_(owned_.get()) {
    if (!m_) throw state_error(error_id::state_conflict, "limits_policy: no limits_manager");
  }

  [[nodiscard]] std::string_view policy_name() const noexcept { return limits_manager::model_name; }
  [[nodiscard]] const limits_manager& manager() const noexcept { return *m_; }

  /// "root.<q>" unless `q` is "root" or starts with "root.".
  [[nodiscard]] static std::string qualify(std::string_view q) {
    if (q == "root" || q.starts_with("root.")) return std::string(q);
    std::string s("root.");
    s.append(q);
    return s;
  }

  [[nodiscard]] decision check(const job& j) const {
    return m_->check_increase(qualify(j.queue), j.id, j.request, limits_identity{j.user, j.groups});
  }
  void commit(const job& j) {
    if (requests_.count(j.id)) throw state_error(error_id::state_duplicate, "job '" + j.id + "' is already committed");
    requests_.emplace(j.id, entry{qualify(j.queue), j.user, j.request});  // first: a failing increase is undone below
    try {
      const decision d = m_->increase(requests_.at(j.id).queue, j.id, j.request, j.user, j.groups);
      if (d.denied()) throw state_error(error_id::state_not_admitted, "job '" + j.id + "': " + to_string(d));
    } catch (...) {
      requests_.erase(j.id);
      throw;
    }
  }
  void release(std::string_view id) {
    auto it = requests_.find(std::string(id));
    if (it == requests_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    m_->decrease(it->second.queue, id, it->second.request, true, limits_identity{it->second.user, {}});
    requests_.erase(it);
  }
  /// Limits never preempt: running work is never evicted.
  void victims(const job&, std::vector<victim>&) const {}

 private:
  struct entry {
    std::string queue;
    std::string user;
    resource_vector request;
  };
  std::shared_ptr<limits_manager> owned_;
  limits_manager* m_;
  std::unordered_map<std::string, entry> requests_;
};

static_assert(policy<limits_policy>);

}  // namespace quota
