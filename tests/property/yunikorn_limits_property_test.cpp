// SPDX-License-Identifier: Apache-2.0
// Property test: the YuniKorn user/group limit trackers (quota/yunikorn_limits.hpp)
// against a plain reference that keeps only the list of running applications
// and recomputes every tracker from it. Random sequences of admit (increase),
// release (decrease), reload and bad input; after every step the decision
// class and the whole state are compared. Invariants: a failed or denied call
// leaves the state byte-identical (JSON), usage is conserved, committed work
// never exceeds the limits it was checked against, replay is deterministic.
// Config validation is the library's (the reference adopts what reload accepts).
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>

#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

const std::vector<std::string> queues{"root", "root.a", "root.a.x", "root.a.y", "root.b", "root.zzz"};
const std::vector<std::string> users{"u0", "u1", "u2", "u3", ""};
const std::vector<std::string> group_names{"g0", "g1", "g2", "*", ""};
constexpr std::size_t n_apps = 8;
constexpr resource_id rids[] = {resources::cpu, resources::memory, resources::nvidia_gpu};

enum class kind { increase, decrease, reload };
struct op {
  kind k = kind::increase;
  std::size_t queue = 0, app = 0, user = 0;
  unsigned groups = 0;  // bit mask over group_names
  std::int64_t cpu = 0, mem = 0, gpu = 0;
  bool remove = false;
  std::uint64_t cfg_seed = 0;
};

std::string describe(const op& o) {
  std::ostringstream s;
  switch (o.k) {
    case kind::increase:
      s << "increase";
      break;
    case kind::decrease:
      s << "decrease" << (o.remove ? "(remove)" : "");
      break;
    case kind::reload:
      s << "reload(seed " << o.cfg_seed << ")";
      return s.str();
  }
  s << " " << queues[o.queue] << " app" << o.app << " user '" << users[o.user] << "' groups";
  for (std::size_t g = 0; g < group_names.size(); ++g)
    if (o.groups >> g & 1U) s << " '" << group_names[g] << "'";
  s << " cpu=" << o.cpu << " memory=" << o.mem << " gpu=" << o.gpu;
  return s.str();
}

// ---- configurations ----------------------------------------------------------------------------

limit_entry entry(const char* name, std::vector<std::string> us, std::vector<std::string> gs, prop::rng& r, int level,
                  bool bad) {
  limit_entry e;
  e.name = name;
  e.users = std::move(us);
  e.groups = std::move(gs);
  // deeper levels get smaller limits, so an ancestor always bounds its children
  const std::int64_t lo[] = {30, 15, 4}, hi[] = {40, 25, 12};
  // every entry sets maxapplications (an unlimited child under a limited ancestor is invalid)
  if (r.chance(80)) e.max_resources.set(resources::cpu, bad ? 100 : r.range(lo[level], hi[level]));
  if (r.chance(60)) e.max_resources.set(resources::memory, 10 * r.range(lo[level], hi[level]));
  const std::uint64_t apps_lo[] = {6, 3, 1}, apps_hi[] = {9, 5, 2};
  e.max_applications = static_cast<std::uint64_t>(
      r.range(static_cast<std::int64_t>(apps_lo[level]), static_cast<std::int64_t>(apps_hi[level])));
  return e;
}

limits_queue make_queue(const std::string& name, int level, prop::rng& r, bool bad) {
  limits_queue q;
  q.name = name;
  std::vector<std::string> us, gs;
  for (int i = 0; i < 4; ++i)
    if (r.chance(30)) us.push_back("u" + std::to_string(i));
  for (int i = 0; i < 3; ++i)
    if (r.chance(35)) gs.push_back("g" + std::to_string(i));
  if (gs.size() > 1 && r.chance(50)) std::swap(gs.front(), gs.back());  // config order matters
  const bool corrupt = bad && r.chance(40);
  if (!us.empty()) q.limits.push_back(entry("named users", us, {}, r, level, corrupt && level > 0));
  if (!gs.empty()) q.limits.push_back(entry("named groups", {}, gs, r, level, false));
  if (r.chance(50)) q.limits.push_back(entry("every user", {"*"}, {}, r, level, false));
  if (!gs.empty() && r.chance(50)) q.limits.push_back(entry("group pool", {}, {"*"}, r, level, false));
  if (bad && r.chance(20) && !q.limits.empty()) q.limits.push_back(q.limits.front());  // duplicate names
  return q;
}

yunikorn_limits_config make_config(std::uint64_t seed) {
  prop::rng r(seed);
  const bool bad = r.chance(15);
  yunikorn_limits_config cfg;
  cfg.root = make_queue("root", 0, r, bad);
  limits_queue a = make_queue("a", 1, r, bad);
  a.queues.push_back(make_queue("x", 2, r, bad));
  if (r.chance(80)) a.queues.push_back(make_queue("y", 2, r, bad));
  cfg.root.queues.push_back(std::move(a));
  if (r.chance(80)) cfg.root.queues.push_back(make_queue("b", 1, r, bad));
  return cfg;
}

// ---- the reference ---------------------------------------------------------------------------------

enum class outcome { allowed, denied, error };
const char* name_of(outcome o) {
  return o == outcome::allowed ? "allowed" : o == outcome::denied ? "denied" : "error";
}

__extension__ using wide = __int128;
constexpr wide i64_max = std::numeric_limits<std::int64_t>::max();

struct ref_app {
  std::string queue, user;
  std::optional<std::string> group;  // nullopt: none
  std::map<resource_id, wide> use;
};

class reference {
 public:
  std::optional<yunikorn_limits_config> cfg;  // none before the first accepted reload
  std::map<std::string, ref_app> apps;

  const limits_queue* find_queue(const std::string& path) const {
    if (!cfg) return nullptr;
    if (path == "root") return &cfg->root;
    if (path.rfind("root.", 0) != 0) return nullptr;
    const limits_queue* q = &cfg->root;
    std::string rest = path.substr(5);
    while (!rest.empty()) {
      const auto dot = rest.find('.');
      const std::string part = rest.substr(0, dot);
      const limits_queue* next = nullptr;
      for (const auto& c : q->queues)
        if (c.name == part) next = &c;
      if (!next) return nullptr;
      q = next;
      rest = dot == std::string::npos ? "" : rest.substr(dot + 1);
    }
    return q;
  }
  static std::vector<std::string> chain(const std::string& path) {
    std::vector<std::string> out{path};
    std::string p = path;
    for (auto dot = p.rfind('.'); dot != std::string::npos; dot = p.rfind('.')) out.push_back(p = p.substr(0, dot));
    return out;
  }
  static bool lists(const std::vector<std::string>& v, const std::string& n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  }
  const limit_entry* user_limit(const std::string& path, const std::string& user) const {
    const auto* q = find_queue(path);
    if (!q) return nullptr;
    for (const auto& e : q->limits)
      if (lists(e.users, user)) return &e;
    for (const auto& e : q->limits)
      if (lists(e.users, "*")) return &e;
    return nullptr;
  }
  const limit_entry* group_limit(const std::string& path, const std::string& group) const {
    const auto* q = find_queue(path);
    if (!q) return nullptr;
    for (const auto& e : q->limits)
      if (lists(e.groups, group)) return &e;
    return nullptr;
  }
  std::optional<std::string> resolve_group(const std::string& path, const std::vector<std::string>& groups) const {
    std::vector<std::string> gs;
    for (const auto& g : groups)
      if (!g.empty() && g != "*") gs.push_back(g);
    if (gs.empty()) return std::nullopt;
    for (const auto& level : chain(path)) {
      const auto* q = find_queue(level);
      if (!q) continue;
      for (const auto& e : q->limits)
        for (const auto& g : e.groups)
          if (g != "*" && lists(gs, g)) return g;
      for (const auto& e : q->limits)
        if (lists(e.groups, "*")) return std::string("*");
    }
    return std::nullopt;
  }
  // usage and running applications of a user (or group) at a queue, from the application list
  std::pair<std::map<resource_id, wide>, std::uint64_t> tracked(bool group, const std::string& who,
                                                                const std::string& path) const {
    std::map<resource_id, wide> use;
    std::uint64_t running = 0;
    for (const auto& [id, a] : apps) {
      if (group ? a.group != who : a.user != who) continue;
      const auto c = chain(a.queue);
      if (std::find(c.begin(), c.end(), path) == c.end()) continue;
      ++running;
      for (const auto& [r, v] : a.use) use[r] += v;
    }
    return {use, running};
  }
  bool level_ok(const limit_entry* lim, bool group, const std::string& who, const std::string& level,
                const std::map<resource_id, wide>& req, bool new_app, bool& overflow) const {
    const auto [use, running] = tracked(group, who, level);
    if (lim && new_app && lim->max_applications != 0 && running + 1 > lim->max_applications) return false;
    for (const auto& [r, v] : req) {
      const wide total = (use.count(r) ? use.at(r) : 0) + v;
      const amount* l = lim ? lim->max_resources.find(r) : nullptr;
      if (l && total > *l) return false;
      if (!l && total > i64_max) overflow = true;
    }
    return true;
  }

  outcome increase(const op& o, const std::vector<std::string>& groups) {
    const std::string& q = queues[o.queue];
    const std::string& u = users[o.user];
    const std::string app = "app" + std::to_string(o.app);
    if (u.empty()) return outcome::error;
    const auto req = request(o);
    if (!req) return outcome::error;
    if (!find_queue(q)) return outcome::error;
    auto it = apps.find(app);
    const bool new_app = it == apps.end();
    if (!new_app && (it->second.queue != q || it->second.user != u)) return outcome::error;
    const auto g = new_app ? resolve_group(q, groups) : it->second.group;
    bool overflow = false, ok = true;
    for (const auto& level : chain(q)) {
      ok = level_ok(user_limit(level, u), false, u, level, *req, new_app, overflow) && ok;
      if (g) ok = level_ok(group_limit(level, *g), true, *g, level, *req, new_app, overflow) && ok;
    }
    if (!ok) return outcome::denied;
    if (overflow) return outcome::error;
    ref_app& a = apps[app];
    if (new_app) a = ref_app{q, u, g, {}};
    for (const auto& [r, v] : *req) a.use[r] += v;
    return outcome::allowed;
  }
  outcome decrease(const op& o) {
    const std::string app = "app" + std::to_string(o.app);
    auto it = apps.find(app);
    if (it == apps.end()) return outcome::error;
    const auto req = request(o);
    if (!req) return outcome::error;
    auto& a = it->second;
    if (a.queue != queues[o.queue] || a.user != users[o.user]) return outcome::error;
    for (const auto& [r, v] : *req)
      if (v > (a.use.count(r) ? a.use.at(r) : 0)) return outcome::error;
    if (o.remove)
      for (const auto& [r, v] : a.use)
        if (v != (req->count(r) ? req->at(r) : 0)) return outcome::error;
    for (const auto& [r, v] : *req) a.use[r] -= v;
    if (o.remove) apps.erase(it);
    return outcome::allowed;
  }
  static std::optional<std::map<resource_id, wide>> request(const op& o) {
    std::map<resource_id, wide> m;
    const std::int64_t vals[] = {o.cpu, o.mem, o.gpu};
    for (std::size_t i = 0; i < 3; ++i) {
      if (vals[i] < 0) return std::nullopt;
      if (vals[i] > 0) m[rids[i]] = vals[i];
    }
    return m;
  }
};

// ---- the driver ------------------------------------------------------------------------------------

std::vector<std::string> groups_of(const op& o) {
  std::vector<std::string> gs;
  for (std::size_t g = 0; g < group_names.size(); ++g)
    if (o.groups >> g & 1U) gs.push_back(group_names[g]);
  return gs;
}

resource_vector vec(const op& o) {
  resource_vector v;
  if (o.cpu) v.set(resources::cpu, o.cpu);
  if (o.mem) v.set(resources::memory, o.mem);
  if (o.gpu) v.set(resources::nvidia_gpu, o.gpu);
  return v;
}

json state_of(const yunikorn_limits_model& m) {
  return json{{"users", users_usage_to_json(m)}, {"groups", groups_usage_to_json(m)}};
}

struct run_result {
  std::string divergence;  // empty: none
  std::size_t step = 0;
  json final_state;
  std::size_t allowed = 0, denied = 0, errors = 0, reloads_rejected = 0;
};

/// Compares the library's trackers with the reference's; returns a message or "".
std::string compare(const yunikorn_limits_model& m, const reference& ref) {
  std::set<std::string> groups_seen{"*"};
  for (const auto& g : group_names)
    if (!g.empty()) groups_seen.insert(g);
  for (const auto& q : queues) {
    for (const auto& u : users) {
      if (u.empty()) continue;
      const auto [use, running] = ref.tracked(false, u, q);
      const resource_vector lib = m.user_usage(u, q);
      for (const auto r : rids)
        if (lib.get(r) != (use.count(r) ? static_cast<std::int64_t>(use.at(r)) : 0))
          return "user " + u + " usage at " + q + " differs";
      if (m.user_running(u, q) != running) return "user " + u + " running at " + q + " differs";
    }
    for (const auto& g : groups_seen) {
      const auto [use, running] = ref.tracked(true, g, q);
      const resource_vector lib = m.group_usage(g, q);
      for (const auto r : rids)
        if (lib.get(r) != (use.count(r) ? static_cast<std::int64_t>(use.at(r)) : 0))
          return "group " + g + " usage at " + q + " differs";
      if (m.group_running(g, q) != running) return "group " + g + " running at " + q + " differs";
    }
  }
  for (std::size_t a = 0; a < n_apps; ++a) {
    const std::string app = "app" + std::to_string(a);
    const auto lib = m.group_of(app);
    const auto it = ref.apps.find(app);
    if (lib.has_value() != (it != ref.apps.end())) return app + " running state differs";
    if (lib && *lib != it->second.group.value_or("")) return app + " group differs";
  }
  if (m.application_count() != ref.apps.size()) return "application count differs";
  return "";
}

run_result run(const std::vector<op>& ops, bool check_every_step = true) {
  run_result res;
  resource_registry reg;
  yunikorn_limits_model m(reg);
  reference ref;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op& o = ops[i];
    const json before = state_of(m);
    outcome lib = outcome::allowed, want = outcome::allowed;
    if (o.k == kind::reload) {
      const yunikorn_limits_config cfg = make_config(o.cfg_seed);
      try {
        m.reload(cfg);
        ref.cfg = cfg;
      } catch (const quota::error& e) {
        lib = outcome::error;
        if (std::getenv("QUOTA_PROP_VERBOSE")) std::printf("rejected reload: %s\n", e.what());
        ++res.reloads_rejected;
      }
      want = lib;  // validation is the library's
    } else if (o.k == kind::increase) {
      const auto gs = groups_of(o);
      try {
        lib = m.increase(queues[o.queue], "app" + std::to_string(o.app), vec(o), users[o.user], gs).allowed()
                  ? outcome::allowed
                  : outcome::denied;
      } catch (const quota::error&) {
        lib = outcome::error;
      }
      want = ref.increase(o, gs);
    } else {
      try {
        m.decrease(queues[o.queue], "app" + std::to_string(o.app), vec(o), o.remove,
                   limits_identity{users[o.user], groups_of(o)});
      } catch (const quota::error&) {
        lib = outcome::error;
      }
      want = ref.decrease(o);
    }
    (lib == outcome::allowed ? res.allowed : lib == outcome::denied ? res.denied : res.errors)++;
    auto diverge = [&](std::string msg) {
      res.divergence = "step " + std::to_string(i) + " (" + describe(o) + "): " + msg;
      res.step = i;
      return res;
    };
    if (lib != want) return diverge(std::string("library ") + name_of(lib) + ", reference " + name_of(want));
    if (lib != outcome::allowed && state_of(m) != before) return diverge("a failed or denied call changed the state");
    if (check_every_step || i + 1 == ops.size()) {
      if (auto msg = compare(m, ref); !msg.empty()) return diverge(msg);
    }
    if (o.k == kind::increase && lib == outcome::allowed) {
      // committed work within the limits it was checked against, at every level
      const std::string& u = users[o.user];
      for (const auto& level : reference::chain(queues[o.queue]))
        if (const auto* lim = ref.user_limit(level, u))
          for (const auto& e : lim->max_resources)
            if (reference::request(o)->count(e.id) && m.user_usage(u, level).get(e.id) > e.value &&
                ref.tracked(false, u, level).first[e.id] > e.value)
              return diverge("committed usage above the limit at " + level);
    }
  }
  res.final_state = state_of(m);
  return res;
}

std::vector<op> random_ops(std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  ops.push_back(op{kind::reload, 0, 0, 0, 0, 0, 0, 0, false, seed * 1000});
  for (std::size_t i = 1; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = p < 4 ? kind::reload : p < 55 ? kind::increase : kind::decrease;
    o.cfg_seed = seed * 1000 + i;
    o.queue = r.chance(5) ? queues.size() - 1 : r.below(queues.size() - 1);
    o.app = r.below(n_apps);
    o.user = r.chance(3) ? users.size() - 1 : r.below(users.size() - 1);
    o.groups = static_cast<unsigned>(r.below(32));
    o.cpu = r.range(0, 6);
    o.mem = r.chance(50) ? 10 * r.range(0, 6) : 0;
    if (r.chance(3)) o.cpu = -1;                                                // bad input
    if (r.chance(2)) o.gpu = std::numeric_limits<std::int64_t>::max() / 2 + 1;  // overflows when doubled
    o.remove = r.chance(50);
    ops.push_back(o);
  }
  return ops;
}

/// Makes most calls fit the running applications (their own queue and user),
/// so that admissions and releases succeed often and limits are reached;
/// the rest stay random (errors). Deterministic from the seed.
void make_releases_plausible(std::vector<op>& ops, std::uint64_t seed) {
  prop::rng r(seed ^ 0xABCDEF);
  std::map<std::size_t, op> live;  // app -> its first increase (approximately what runs)
  for (auto& o : ops) {
    if (o.k == kind::increase) {
      if (auto it = live.find(o.app); it != live.end() && r.chance(85)) {
        o.queue = it->second.queue;  // grow a running application in place
        o.user = it->second.user;
      } else if (it == live.end()) {
        live[o.app] = o;
      }
      continue;
    }
    if (o.k != kind::decrease || !live.count(o.app) || !r.chance(80)) continue;
    const op& inc = live[o.app];
    o.queue = inc.queue;
    o.user = inc.user;
    o.cpu = r.range(0, 2);
    o.mem = 0;
    o.gpu = 0;
    if (o.remove) live.erase(o.app);
  }
}

}  // namespace

TEST_CASE("property: limits trackers match the reference model over random operation sequences") {
  constexpr std::uint64_t seeds = 12;
  constexpr std::size_t length = 400;
  std::size_t total = 0, allowed = 0, denied = 0, errors = 0, rejected = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    auto ops = random_ops(seed, length);
    make_releases_plausible(ops, seed);
    const run_result res = run(ops);
    total += ops.size();
    allowed += res.allowed;
    denied += res.denied;
    errors += res.errors;
    rejected += res.reloads_rejected;
    if (!res.divergence.empty()) {
      std::vector<op> prefix(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(res.step) + 1);
      const auto small = prop::shrink<op>(prefix, [](const std::vector<op>& c) { return !run(c).divergence.empty(); });
      std::ostringstream s;
      s << "seed " << seed << ": " << res.divergence << "\nshrunk to " << small.size() << " operations:\n";
      for (const auto& o : small) s << "  " << describe(o) << "\n";
      s << "  -> " << run(small).divergence;
      FAIL(s.str());
    }
  }
  INFO("operations " << total << ", allowed " << allowed << ", denied " << denied << ", errors " << errors
                     << ", rejected reloads " << rejected);
  std::printf(
      "limits property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu rejected reloads), 0 divergences\n",
      total, allowed, denied, errors, rejected);
  CHECK(total == seeds * length);
  CHECK(allowed > total / 10);
  CHECK(denied > 0);
  CHECK(errors > 0);
}

TEST_CASE("property: limits trackers replay deterministically") {
  for (std::uint64_t seed = 100; seed < 103; ++seed) {
    auto ops = random_ops(seed, 300);
    make_releases_plausible(ops, seed);
    const run_result a = run(ops, false), b = run(ops, false);
    REQUIRE(a.divergence.empty());
    CHECK(a.final_state == b.final_state);
    CHECK(a.final_state.dump() == b.final_state.dump());
  }
}

TEST_CASE("property: the shrinker finds a minimal failing subsequence") {
  // a planted failure: any sequence holding both a 3 and a 7 fails
  std::vector<int> v;
  for (int i = 0; i < 50; ++i) v.push_back(i % 10);
  const auto small = prop::shrink<int>(v, [](const std::vector<int>& c) {
    return std::find(c.begin(), c.end(), 3) != c.end() && std::find(c.begin(), c.end(), 7) != c.end();
  });
  CHECK(small == std::vector<int>{3, 7});
}
