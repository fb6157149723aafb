// SPDX-License-Identifier: Apache-2.0
// Property test: budgets over time (quota/budget.hpp) against a plain
// reference written from docs/extra-policies.md ("Budgets over time"). The
// reference keeps the whole history: every job ever committed with its
// tenant, rate, start, declared end and stop time. Spending is recomputed at
// every step by intersecting each job's run [start, stop) with the window at
// the clock (calendar: [start + k·length, start + (k+1)·length); rolling: the
// last `length` ms), in exact resource-milliseconds; committed adds the
// declared rest of the running jobs. Random admit (check, then commit when
// allowed; sometimes regardless), release, advance-time, budget changes
// ("*" included), reloads (new budgets, default duration and rule when
// exhausted; a window change refused) and bad input (unknown tenant budgets, negative requests and
// budgets, duplicate ids, releases of unknown ids, time going backwards) are
// applied to both; after every step the decision, the victims and every
// tenant's budget / spent / remaining / committed / rate / exhaustion time and
// the over-budget list are compared (prop::drive).
#include <quota/budget.hpp>
#include <quota/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
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

const std::vector<std::string> tenants{"t0", "t1", "t2", "t3", ""};  // "" only in bad set_budget
constexpr std::size_t n_jobs = 12;

enum class kind { admit, release, advance, set_budget, reload };
struct op {
  kind k = kind::admit;
  std::size_t tenant = 0, job = 0;
  bool star = false;                     // set_budget: the "*" budget
  std::int64_t rate = 0, duration = -1;  // admit
  std::int64_t amount = 0;               // advance: ms (negative: backwards); set_budget: resource-ms
  bool preemptible = false, force = false;
  // reload: the new own budgets (tenant, resource-ms), "*", default duration and
  // rule when exhausted; `conflict`: the new configuration also changes the window
  std::vector<std::pair<std::size_t, std::int64_t>> budgets;
  std::optional<std::int64_t> star_budget;
  std::int64_t default_duration = 0;
  bool admit_preemptible = false, conflict = false;
};

struct ref_run {
  std::string tenant;
  std::int64_t rate = 0, start = 0, end = 0;
  std::optional<std::int64_t> stop;  // released at
  bool tracked = false, over = false;
  std::uint64_t seq = 0;
};

/// The whole history, recomputed on demand.
class reference {
 public:
  explicit reference(const budget_config& c, bool f = false) : cfg(c), now(c.start_ms), fault(f) {}
  budget_config cfg;
  std::int64_t now;
  std::map<std::string, std::int64_t> own;  // own budgets
  std::optional<std::int64_t> star;
  std::map<std::string, ref_run> running;  // by job id
  std::vector<ref_run> history;            // released runs
  std::set<std::string> known;             // tenants with an own budget or tracked work ever
  std::uint64_t seq = 0;
  bool fault = false;  // a planted bug (one resource-ms of slack), to test the driver

  std::int64_t floor_div(std::int64_t a, std::int64_t b) const { return a >= 0 ? a / b : -((-a + b - 1) / b); }
  // the window at the clock, as [from, to) of the time consumed so far
  std::int64_t window_from() const {
    return cfg.window == budget_window::calendar
               ? cfg.window_start_ms + floor_div(now - cfg.window_start_ms, cfg.window_ms) * cfg.window_ms
               : now - cfg.window_ms;
  }
  std::int64_t window_end() const {
    return cfg.window == budget_window::calendar ? window_from() + cfg.window_ms : now;
  }
  static std::int64_t overlap(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    return std::max<std::int64_t>(0, std::min(b, d) - std::max(a, c));
  }
  std::optional<std::int64_t> budget_of(const std::string& t) const {
    if (auto it = own.find(t); it != own.end()) return it->second;
    return star;
  }
  std::int64_t spent(const std::string& t) const {
    std::int64_t s = 0;
    const std::int64_t from = window_from();
    for (const auto& r : history)
      if (r.tracked && r.tenant == t) s += r.rate * overlap(r.start, *r.stop, from, now);
    for (const auto& [id, r] : running)
      if (r.tracked && r.tenant == t) s += r.rate * overlap(r.start, now, from, now);
    return s;
  }
  std::int64_t rest(const ref_run& r) const {
    if (cfg.window == budget_window::calendar) return std::max<std::int64_t>(0, std::min(r.end, window_end()) - now);
    return std::clamp<std::int64_t>(r.end - now, 0, cfg.window_ms);
  }
  std::int64_t committed(const std::string& t) const {
    std::int64_t c = spent(t);
    for (const auto& [id, r] : running)
      if (r.tracked && r.tenant == t) c += r.rate * rest(r);
    return c;
  }
  std::int64_t rate(const std::string& t) const {
    std::int64_t x = 0;
    for (const auto& [id, r] : running)
      if (r.tracked && r.tenant == t) x += r.rate;
    return x;
  }
  std::int64_t duration(const op& o) const { return o.duration >= 0 ? o.duration : cfg.default_duration_ms; }
  std::int64_t need(const op& o) const {
    const std::int64_t span = cfg.window == budget_window::calendar ? std::min(duration(o), window_end() - now)
                                                                    : std::min(duration(o), cfg.window_ms);
    return o.rate * span;
  }
  /// limited and fits, as the docs' admission rule says
  bool fits(const op& o) const {
    if (o.rate <= 0) return true;
    const auto b = budget_of(tenants[o.tenant]);
    return !b || committed(tenants[o.tenant]) + need(o) <= *b + (fault ? 1 : 0);
  }
  bool allows(const op& o) const {
    return fits(o) || (cfg.on_exhausted == budget_on_exhausted::admit_preemptible && o.preemptible);
  }
  std::vector<std::string> victims(const op& o) const {
    std::vector<std::pair<std::uint64_t, std::string>> c;
    if (fits(o)) return {};
    for (const auto& [id, r] : running)
      if (r.tracked && r.over && r.tenant == tenants[o.tenant]) c.emplace_back(r.seq, id);
    std::sort(c.rbegin(), c.rend());
    std::vector<std::string> out;
    for (const auto& e : c) out.push_back(e.second);
    return out;
  }
};

std::string job_id(std::size_t i) {
  return "j" + std::to_string(i);
}

job job_of(const op& o) {
  job j;
  j.id = job_id(o.job);
  j.queue = tenants[o.tenant];
  if (o.rate != 0) j.request.set(resources::nvidia_gpu, o.rate);
  j.request.set(resources::cpu, 1000);  // not budgeted
  j.duration_ms = o.duration;
  j.preemptible = o.preemptible;
  return j;
}

struct harness {
  using op = ::op;
  budget_config cfg;
  bool fault = false;
  struct state {
    budget_policy lib;
    reference ref;
  };

  state start() const { return state{budget_policy(cfg), reference(cfg, fault)}; }

  std::string describe(const op& o) const {
    std::ostringstream s;
    switch (o.k) {
      case kind::admit:
        s << "admit " << job_id(o.job) << " queue " << tenants[o.tenant] << " gpu " << o.rate << " duration "
          << o.duration << (o.preemptible ? " preemptible" : "") << (o.force ? " (forced)" : "");
        break;
      case kind::release:
        s << "release " << job_id(o.job);
        break;
      case kind::advance:
        s << "advance by " << o.amount << " ms";
        break;
      case kind::set_budget:
        s << "set budget '" << (o.star ? "*" : tenants[o.tenant]) << "' " << o.amount;
        break;
      case kind::reload:
        s << "reload budgets";
        for (const auto& [t, a] : o.budgets) s << " " << tenants[t] << "=" << a;
        if (o.star_budget) s << " *=" << *o.star_budget;
        s << " default duration " << o.default_duration << (o.admit_preemptible ? " admit_preemptible" : " deny")
          << (o.conflict ? " (window changed)" : "");
        break;
    }
    return s.str();
  }
  json to_json(const op& o) const {
    json j{{"kind", static_cast<int>(o.k)}, {"tenant", o.star ? "*" : tenants[o.tenant]},
           {"job", job_id(o.job)},          {"rate", o.rate},
           {"duration_ms", o.duration},     {"amount", o.amount},
           {"preemptible", o.preemptible},  {"force", o.force}};
    if (o.k == kind::reload) {
      j["budgets"] = json::object();
      for (const auto& [t, a] : o.budgets) j["budgets"][tenants[t]] = a;
      if (o.star_budget) j["budgets"]["*"] = *o.star_budget;
      j["default_duration_ms"] = o.default_duration;
      j["admit_preemptible"] = o.admit_preemptible;
      j["conflict"] = o.conflict;
    }
    return j;
  }

  std::string snapshot(const state& s) const {
    std::ostringstream out;
    out << "now " << s.lib.now_ms() << " running " << s.lib.running_jobs() << "\n";
    std::vector<std::string> lines;
    s.lib.for_each_tenant([&](const budget_policy::tenant_status& t) {
      std::ostringstream l;
      l << t.name << " budget " << t.budget << " spent " << t.spent << " remaining " << t.remaining << " committed "
        << t.committed << " rate " << t.rate << " exhaustion "
        << (t.exhaustion_ms ? std::to_string(*t.exhaustion_ms) : "-");
      lines.push_back(l.str());
    });
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) out << l << "\n";
    out << "over budget:";
    for (const auto id : s.lib.over_budget_jobs()) out << " " << id;
    return out.str();
  }

  std::string compare(const state& s) const {
    const auto& ref = s.ref;
    if (s.lib.now_ms() != ref.now) return "clock differs";
    if (s.lib.running_jobs() != ref.running.size()) return "running job count differs";
    std::set<std::string> listed;
    std::string msg;
    s.lib.for_each_tenant([&](const budget_policy::tenant_status& t) {
      const std::string n(t.name);
      listed.insert(n);
      if (!msg.empty()) return;
      const auto b = ref.budget_of(n);
      if (!b) {  // known, without a budget since a reload: counted, not limited
        if (t.limited || t.budget != 0 || t.remaining != 0 || t.exhaustion_ms)
          msg = "tenant " + n + " has no budget in the reference but the library limits it";
        else if (t.spent != ref.spent(n) || t.committed != ref.committed(n) || t.rate != ref.rate(n))
          msg = "tenant " + n + " without a budget: spent, committed or rate differ";
        return;
      }
      if (!t.limited) {
        msg = "tenant " + n + " is not limited in the library, the reference has budget " + std::to_string(*b);
        return;
      }
      const std::int64_t spent = ref.spent(n), remaining = std::max<std::int64_t>(0, *b - spent);
      const std::int64_t rate = ref.rate(n);
      std::optional<std::int64_t> exhaustion;
      if (remaining == 0)
        exhaustion = ref.now;
      else if (rate > 0) {
        const std::int64_t at = ref.now + (remaining + rate - 1) / rate;
        if (cfg.window == budget_window::rolling || at < ref.window_end()) exhaustion = at;
      }
      auto field = [&](const char* what, std::int64_t got, std::int64_t want) {
        if (msg.empty() && got != want)
          msg = "tenant " + n + " " + what + ": library " + std::to_string(got) + ", reference " + std::to_string(want);
      };
      field("budget", t.budget, *b);
      field("spent", t.spent, spent);
      field("remaining", t.remaining, remaining);
      field("committed", t.committed, ref.committed(n));
      field("rate", t.rate, rate);
      if (msg.empty() && t.exhaustion_ms != exhaustion) msg = "tenant " + n + " exhaustion time differs";
    });
    if (!msg.empty()) return msg;
    if (listed != ref.known) return "the set of tenants listed differs";
    std::vector<std::pair<std::uint64_t, std::string>> over;
    for (const auto& [id, r] : ref.running)
      if (r.over) over.emplace_back(r.seq, id);
    std::sort(over.begin(), over.end());
    std::vector<std::string> want, got;
    for (const auto& e : over) want.push_back(e.second);
    for (const auto id : s.lib.over_budget_jobs()) got.emplace_back(id);
    if (got != want) return "over-budget jobs differ";
    return "";
  }

  // the library's own figures agree with each other (admission-time limits are checked in apply)
  std::string invariants(const state& s) const {
    std::string msg;
    std::int64_t rates = 0;
    s.lib.for_each_tenant([&](const budget_policy::tenant_status& t) {
      rates += t.rate;
      if (t.remaining != std::max<std::int64_t>(0, t.budget - t.spent) || t.committed < t.spent || t.rate < 0)
        msg = "tenant " + std::string(t.name) + ": remaining, spent and committed disagree";
    });
    std::int64_t want = 0;  // conservation: the tenants' rates are the running jobs' rates
    for (const auto& [id, r] : s.ref.running)
      if (r.tracked) want += r.rate;
    if (msg.empty() && rates != want) msg = "tenant rates do not sum to the running jobs' rates";
    return msg;
  }

  prop::step apply(state& s, const op& o, prop::tally& t) const {
    prop::step st;
    auto& lib = s.lib;
    auto& ref = s.ref;
    switch (o.k) {
      case kind::set_budget: {
        const std::string name = o.star ? "*" : tenants[o.tenant];
        try {
          lib.set_budget(name, o.amount);
        } catch (const config_error&) {
          st.lib = prop::outcome::error;
        }
        if (name.empty() || o.amount < 0) {
          st.ref = prop::outcome::error;
        } else if (o.star) {
          ref.star = o.amount;
        } else {
          ref.own[name] = o.amount;
          ref.known.insert(name);
        }
        ++t.extra["budget changes"];
        break;
      }
      case kind::reload: {
        budget_config c = cfg;
        c.default_duration_ms = o.default_duration;
        c.on_exhausted = o.admit_preemptible ? budget_on_exhausted::admit_preemptible : budget_on_exhausted::deny;
        if (o.conflict) c.window_ms = cfg.window_ms + 1;
        budget_policy next(c);
        for (const auto& [tn, a] : o.budgets) next.set_budget(tenants[tn], a);
        if (o.star_budget) next.set_budget("*", *o.star_budget);
        try {
          lib.reload(next);
        } catch (const config_error&) {
          st.lib = prop::outcome::error;
        }
        if (o.conflict) {
          st.ref = prop::outcome::error;
        } else {
          ref.own.clear();
          for (const auto& [tn, a] : o.budgets) {
            ref.own[tenants[tn]] = a;
            ref.known.insert(tenants[tn]);
          }
          ref.star = o.star_budget;
          ref.cfg.default_duration_ms = c.default_duration_ms;
          ref.cfg.on_exhausted = c.on_exhausted;
        }
        ++t.extra["reloads"];
        break;
      }
      case kind::advance: {
        const std::int64_t to = ref.now + o.amount;
        try {
          lib.advance_to(to);
        } catch (const state_error&) {
          st.lib = prop::outcome::error;
        }
        if (to < ref.now)
          st.ref = prop::outcome::error;
        else
          ref.now = to;
        ++t.extra["advances"];
        break;
      }
      case kind::release: {
        try {
          lib.release(job_id(o.job));
        } catch (const unknown_entity_error&) {
          st.lib = prop::outcome::error;
        }
        auto it = ref.running.find(job_id(o.job));
        if (it == ref.running.end()) {
          st.ref = prop::outcome::error;
        } else {
          it->second.stop = ref.now;
          ref.history.push_back(it->second);
          ref.running.erase(it);
        }
        break;
      }
      case kind::admit: {
        const job j = job_of(o);
        const decision d = lib.check(j);
        const budget_verdict v = lib.classify(j);
        if (d.allowed() != ref.allows(o)) {
          st.divergence =
              std::string("decision: library ") + (d.allowed() ? "allows" : "denies (" + to_string(d) + ")") +
              ", reference " + (ref.allows(o) ? "allows" : "denies") + " (committed " +
              std::to_string(ref.committed(tenants[o.tenant])) + ", need " + std::to_string(ref.need(o)) + ")";
          return st;
        }
        if (v.limited && (v.need != ref.need(o) || v.committed != ref.committed(tenants[o.tenant]))) {
          st.divergence = "verdict: library need " + std::to_string(v.need) + " committed " +
                          std::to_string(v.committed) + ", reference need " + std::to_string(ref.need(o)) +
                          " committed " + std::to_string(ref.committed(tenants[o.tenant]));
          return st;
        }
        std::vector<victim> vs;
        lib.victims(j, vs);
        std::vector<std::string> vgot;
        for (const auto& x : vs) vgot.push_back(x.job_id);
        if (vgot != ref.victims(o)) {
          st.divergence = "victims differ";
          return st;
        }
        if (!vs.empty()) ++t.extra["victim sets"];
        st.lib = st.ref = d.allowed() ? prop::outcome::allowed : prop::outcome::denied;
        if (!d.allowed() && !o.force) break;
        st.lib = st.ref = prop::outcome::allowed;
        try {
          lib.commit(j);
        } catch (const state_error&) {
          st.lib = prop::outcome::error;
        }
        if (ref.running.count(j.id) || o.rate < 0) {
          st.ref = prop::outcome::error;
          break;
        }
        ref_run r;
        r.tenant = tenants[o.tenant];
        r.rate = o.rate;
        r.start = ref.now;
        r.end = ref.now + ref.duration(o);
        // work of a tenant without a budget is not charged, unless the tenant
        // is known (a reload took its budget away: its spending still counts)
        r.tracked = o.rate > 0 && (ref.budget_of(r.tenant).has_value() || ref.known.count(r.tenant) != 0);
        r.over = r.tracked && !ref.fits(o);
        r.seq = ++ref.seq;
        if (r.tracked) ref.known.insert(r.tenant);
        ref.running[j.id] = r;
        if (d.allowed() && v.fits && v.limited && st.lib == prop::outcome::allowed) {  // committed within the budget
          std::int64_t committed = -1, budget = 0;
          lib.for_each_tenant([&](const budget_policy::tenant_status& x) {
            if (x.name == r.tenant) committed = x.committed, budget = x.budget;
          });
          if (committed < 0 || committed > budget)
            st.divergence = "admitted work takes tenant " + r.tenant + " to " + std::to_string(committed) +
                            " committed, above its budget " + std::to_string(budget);
        }
        break;
      }
    }
    return st;
  }
};

budget_config make_config(std::uint64_t seed) {
  prop::rng r(seed * 31 + 7);
  budget_config c;
  c.window = r.chance(50) ? budget_window::calendar : budget_window::rolling;
  c.window_ms = r.range(20, 120);
  c.window_start_ms = r.range(-50, 50);
  c.start_ms = r.range(0, 200);
  c.default_duration_ms = r.range(5, 60);
  c.on_exhausted = r.chance(40) ? budget_on_exhausted::admit_preemptible : budget_on_exhausted::deny;
  return c;
}

std::vector<op> random_ops(const harness& h, std::uint64_t seed, std::size_t n) {
  prop::rng r(seed);
  std::vector<op> ops;
  for (std::size_t i = 0; i < n; ++i) {
    op o;
    const auto p = r.below(100);
    o.k = i < 2 || p < 8 ? kind::set_budget
          : p < 11       ? kind::reload
          : p < 55       ? kind::admit
          : p < 75       ? kind::release
                         : kind::advance;
    o.tenant = r.below(4);
    o.job = r.below(n_jobs);
    if (o.k == kind::set_budget) {
      o.star = r.chance(20);
      o.amount = r.range(0, 12) * h.cfg.window_ms / 2;
      if (r.chance(5)) o.amount = -r.range(1, 5);  // bad
      if (!o.star && r.chance(4)) o.tenant = 4;    // bad: empty name
    } else if (o.k == kind::admit) {
      o.rate = r.chance(10) ? 0 : r.range(1, 4);
      if (r.chance(4)) o.rate = -r.range(1, 2);  // bad
      o.duration = r.chance(25) ? -1 : r.range(0, h.cfg.window_ms * 3 / 2);
      o.preemptible = r.chance(50);
      o.force = r.chance(8);
    } else if (o.k == kind::reload) {
      for (std::size_t tn = 0; tn < 4; ++tn)
        if (r.chance(60)) o.budgets.emplace_back(tn, r.range(0, 12) * h.cfg.window_ms / 2);
      if (r.chance(40)) o.star_budget = r.range(0, 12) * h.cfg.window_ms / 2;
      o.default_duration = r.range(5, 60);
      o.admit_preemptible = r.chance(40);
      o.conflict = r.chance(10);
    } else if (o.k == kind::advance) {
      o.amount = r.chance(60) ? r.range(0, 10) : r.range(10, h.cfg.window_ms);
      if (r.chance(4)) o.amount = -r.range(1, 5);  // bad: backwards
    }
    ops.push_back(o);
  }
  return ops;
}

}  // namespace

TEST_CASE("property: budget matches the reference model over random operation sequences") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = prop::check_model(
      "budget", 1, 24, 250,
      [](std::uint64_t seed) {
        harness h;
        h.cfg = make_config(seed);
        return h;
      },
      [](const harness& h, std::uint64_t seed, std::size_t n) { return random_ops(h, seed, n); });
  if (!t.failure.empty()) FAIL(t.failure);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "budget property: %zu operations (%zu allowed, %zu denied, %zu errors, %zu advances, %zu reloads, %zu victim "
      "sets), 0 divergences, replayed twice, %.2f s\n",
      t.ops, t.counts.allowed, t.counts.denied, t.counts.errors,
      t.counts.extra.count("advances") ? t.counts.extra.at("advances") : 0,
      t.counts.extra.count("reloads") ? t.counts.extra.at("reloads") : 0,
      t.counts.extra.count("victim sets") ? t.counts.extra.at("victim sets") : 0, secs);
  CHECK(t.ops == 24 * 250);
  CHECK(t.counts.allowed > t.ops / 4);
  CHECK(t.counts.denied > t.ops / 50);
  CHECK(t.counts.errors > t.ops / 50);
}

TEST_CASE("property: budget driver finds, shrinks and writes a planted fault") {
  // The faulty reference lets a job pass its budget by one resource-ms; the
  // driver must report it with a short sequence and write the reproduction.
  const auto t = prop::check_model(
      "budget_planted_fault", 1, 40, 250,
      [](std::uint64_t seed) {
        harness h;
        h.cfg = make_config(seed);
        h.fault = true;
        return h;
      },
      [](const harness& h, std::uint64_t seed, std::size_t n) { return random_ops(h, seed, n); });
  REQUIRE_FALSE(t.failure.empty());
  INFO(t.failure);
  const auto at = t.failure.find("shrunk to ");
  REQUIRE(at != std::string::npos);
  const std::size_t shrunk = std::stoul(t.failure.substr(at + 10));
  CHECK(shrunk >= 2);  // a budget, then the admission the faulty reference allows
  CHECK(shrunk <= 4);
  const auto path = t.failure.substr(t.failure.find("reproduction: ") + 14,
                                     t.failure.find(".ops.json") + 9 - (t.failure.find("reproduction: ") + 14));
  std::ifstream in(path);
  REQUIRE(in.good());
  const json doc = json::parse(in);
  CHECK(doc["model"] == "budget_planted_fault");
  CHECK(doc["operations"].size() == shrunk);
  CHECK_FALSE(doc["divergence"].get<std::string>().empty());
  std::printf("budget planted fault: shrunk to %zu operations, %s\n", shrunk, path.c_str());
}
