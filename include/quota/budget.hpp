// SPDX-License-Identifier: Apache-2.0
// quota/budget.hpp — budgets over time ("500 GPU-hours per team per week"): a tenant's
// consumption of one resource x time per calendar or rolling window.
// Docs: docs/extra-policies.md
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/duration.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>

namespace quota {

enum class budget_tenant : std::uint8_t { queue, ns, user, group };
enum class budget_window : std::uint8_t { calendar, rolling };
enum class budget_on_exhausted : std::uint8_t { deny, admit_preemptible };

struct budget_config {
  /// The resource whose use over time is budgeted, and its name for reasons.
  resource_id resource = resources::nvidia_gpu;
  std::string resource_name = "nvidia.com/gpu";
  budget_tenant tenant = budget_tenant::queue;
  budget_window window = budget_window::calendar;
  /// Calendar windows start at window_start_ms + k·window_ms.
  std::int64_t window_start_ms = 0;
  std::int64_t window_ms = 7 * 24 * 3'600'000LL;
  /// Duration assumed for a job without one (job.duration_ms == -1).
  std::int64_t default_duration_ms = 3'600'000;
  budget_on_exhausted on_exhausted = budget_on_exhausted::deny;
  /// The clock starts here.
  std::int64_t start_ms = 0;
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view budget_model_name = "budget";

/// Where a job stands against its tenant's budget (what check decides, and why).
struct budget_verdict {
  bool limited = false;   // the job has a tenant with a budget
  bool fits = true;       // committed + need <= budget
  std::int64_t need = 0;  // resource-ms the job would take in the window
  std::int64_t committed = 0;
  std::int64_t budget = 0;
};

class budget_policy {
 public:
  static constexpr std::int64_t hour_ms = 3'600'000;

  explicit budget_policy(budget_config cfg = {}) : cfg_(std::move(cfg)), now_(cfg_.start_ms) {
    if (cfg_.resource == no_resource) throw config_error("budget: resource: not set");
    if (cfg_.window_ms <= 0)
      throw config_error("budget: window length must be > 0 ms, got " + std::to_string(cfg_.window_ms));
    if (cfg_.default_duration_ms <= 0)
      throw config_error("budget: default duration must be > 0 ms, got " + std::to_string(cfg_.default_duration_ms));
    window_ = window_index(now_);
  }

  [[nodiscard]] std::string_view policy_name() const noexcept { return budget_model_name; }
  [[nodiscard]] const budget_config& config() const noexcept { return cfg_; }
  [[nodiscard]] std::int64_t now_ms() const noexcept { return now_; }

  /// Budget of one tenant ("*": every tenant without its own), in resource-ms.
  void set_budget(std::string_view tenant, std::int64_t resource_ms) {
    if (tenant.empty()) throw config_error("budget: tenant name is empty");
    if (resource_ms < 0)
      throw config_error("budget: tenant '" + std::string(tenant) +
                                                      "': budget must be >= 0, got " + std::to_string(resource_ms));
    if (tenant == "*") {
      default_ = resource_ms;
      for (auto& t : tenants_)  // tenants known only through their work follow the "*" budget
        if (!t.own) t.budget = resource_ms;
      return;
    }
    if (auto it = index_.find(tenant); it != index_.end()) {
      tenants_[it->second].budget = resource_ms;
      tenants_[it->second].own = true;
      return;
    }
    add_tenant(tenant, resource_ms, true);
  }

  /// Why `next`'s configuration cannot replace this one in place (reload),
  /// or an empty string when it can. The budgeted resource, the tenant kind
  /// and the window (kind, start, length) define what was spent, so they
  /// stay; budgets, the default duration and the rule when exhausted change.
  [[nodiscard]] std::string reload_conflict(const budget_policy& next) const {
    const budget_config& a = cfg_;
    const budget_config& b = next.cfg_;
    const auto differs = [](std::string_view what, const std::string& from, const std::string& to) {
      return std::string(what) + " changes from " + from + " to " + to +
             ": the spent budget is counted by it, so a reload keeps it (a new policy starts a new history)";
    };
    static constexpr std::string_view tenant_names[] = {"queue", "namespace", "user", "group"};
    if (a.resource != b.resource) return differs("resource", a.resource_name, b.resource_name);
    if (a.tenant != b.tenant)
      return differs("tenant", std::string(tenant_names[static_cast<std::size_t>(a.tenant)]),
                     std::string(tenant_names[static_cast<std::size_t>(b.tenant)]));
    if (a.window != b.window)
      return differs("window", a.window == budget_window::calendar ? "calendar" : "rolling",
                     b.window == budget_window::calendar ? "calendar" : "rolling");
    if (a.window_ms != b.window_ms)
      return differs("window length", format_duration(a.window_ms), format_duration(b.window_ms));
    if (a.window == budget_window::calendar && a.window_start_ms != b.window_start_ms)
      return differs("window start", format_duration(a.window_start_ms), format_duration(b.window_start_ms));
    return {};
  }
  /// Takes the budgets (every tenant's own and "*"), the default duration
  /// and the rule when exhausted of `next` (a policy built from the new
  /// configuration), keeping the clock, the running jobs and what each
  /// tenant spent and committed. A tenant `next` gives no budget of its own
  /// follows its "*" budget, or has none (is not limited) when `next` has no
  /// "*"; its spending is still counted, for a later budget. Running jobs
  /// keep their declared ends and their over-budget marks. Throws
  /// config_error when reload_conflict(next) is not empty; nothing changes
  /// then (strong guarantee).
  void reload(const budget_policy& next) {
    if (const std::string why = reload_conflict(next); !why.empty()) throw config_error("budget reload: " + why);
    const std::size_t before = tenants_.size();
    try {
      for (const auto& ts : next.tenants_)
        if (ts.own && index_.find(ts.name) == index_.end()) add_tenant(ts.name, ts.budget, true);
    } catch (...) {
      while (tenants_.size() > before) drop_last_tenant();
      throw;
    }
    default_ = next.default_;
    for (std::size_t t = 0; t < before; ++t) {
      auto& ts = tenants_[t];
      const auto it = next.index_.find(ts.name);
      ts.own = it != next.index_.end() && next.tenants_[it->second].own;
      ts.budget = ts.own ? next.tenants_[it->second].budget : default_.value_or(0);
    }
    cfg_.default_duration_ms = next.cfg_.default_duration_ms;
    cfg_.on_exhausted = next.cfg_.on_exhausted;
  }

  /// Moves the clock to now_ms (window resets, rolling forgetting, overruns).
  /// Earlier than the clock: state_error (504), nothing changes. Incremental:
  /// each tenant's committed amount is a continuous piecewise-linear function
  /// of time, kept as its value at the clock, its slope and the future slope
  /// changes of its running jobs and released segments; moving the clock
  /// walks only the slope changes it passes (a calendar window change
  /// recomputes every tenant from its running jobs, once per window).
  void advance_to(std::int64_t now_ms) {
    if (now_ms < now_)
      throw state_error(error_id::state_out_of_order,
                        "budget: time " + std::to_string(now_ms) + " is before the clock " + std::to_string(now_));
    if (now_ms == now_) return;
    const std::int64_t w = window_index(now_ms);
    if (cfg_.window == budget_window::calendar && w != window_) {
      rebuild_at(now_ms, w);
      return;
    }
    // compute everything first (may throw overflow), then assign
    moved_.resize(tenants_.size());
    for (std::size_t t = 0; t < tenants_.size(); ++t) moved_[t] = walk(tenants_[t], now_ms);
    for (std::size_t t = 0; t < tenants_.size(); ++t) {
      auto& ts = tenants_[t];
      ts.committed = moved_[t].committed;
      ts.slope = moved_[t].slope;
      while (!ts.kinks.empty() && ts.kinks.begin()->first <= now_ms) kink_pool_.erase(ts.kinks, ts.kinks.begin());
      if (cfg_.window == budget_window::rolling)
        while (!ts.segments.empty() && ts.segments.front().to <= now_ms - cfg_.window_ms) ts.segments.pop_front();
    }
    now_ = now_ms;
  }

  /// Where the job stands against its tenant's budget at the clock. No allocation.
  [[nodiscard]] budget_verdict classify(const job& j) const {
    budget_verdict v;
    const std::int64_t rate = j.request.get(cfg_.resource);
    if (rate <= 0) return v;
    std::int64_t budget = 0, committed = 0;
    if (!lookup(j, budget, committed)) return v;
    v.limited = true;
    v.budget = budget;
    v.committed = committed;
    v.need = need_of(rate, duration_of(j));
    v.fits = detail::int128{committed} + v.need <= budget;
    return v;
  }

  [[nodiscard]] decision check(const job& j) const {
    const budget_verdict v = classify(j);
    if (v.fits) return decision::allow();
    if (cfg_.on_exhausted == budget_on_exhausted::admit_preemptible && j.preemptible) return decision::allow();
    const bool np = cfg_.on_exhausted == budget_on_exhausted::admit_preemptible;
    return decision::deny(reason{budget_model_name, np ? "budget_exhausted_not_preemptible" : "budget_exhausted",
                                 entity_of(j), cfg_.resource, resource_view(), v.need, v.committed, v.budget,
                                 reason_note("remaining #0 resource-ms cannot cover the job's #1 ms", {},
                                             {v.budget - std::min(v.budget, v.committed), duration_of(j)})});
  }

  /// The job starts consuming at the clock. Duplicate id: state_error.
  void commit(const job& j) {
    // first (one lookup, the duplicate test too): a later failure erases the entry
    const auto [at, inserted] = runs_pool_.emplace(runs_, j.id, run{});
    if (!inserted) throw state_error(error_id::state_duplicate, "budget: job '" + j.id + "' is already running");
    run& r = at->second;
    std::uint32_t t = 0;
    std::int64_t new_committed = 0, new_rate = 0;
    detail::int128 new_slope = 0;
    try {
      const std::int64_t rate = j.request.get(cfg_.resource);
      if (rate < 0)
        throw state_error(error_id::state_negative_usage, "budget: job '" + j.id + "' requests a negative amount");
      const std::string* key = rate == 0 ? nullptr : tenant_key(j);
      auto it = key ? index_.find(*key) : index_.end();
      const bool fresh = it == index_.end();
      if (!key || (fresh && !default_)) {  // not limited: only remembered, so release knows it
        r.tenant = untracked;
        r.seq = ++seq_;
        return;
      }
      r.rate = rate;
      r.start = now_;
      r.end = detail::checked_add(now_, duration_of(j));
      r.seq = ++seq_;
      r.over_budget = !classify(j).fits;
      t = fresh ? static_cast<std::uint32_t>(tenants_.size()) : it->second;
      r.tenant = t;
      const std::int64_t add = contribution(r, now_);
      new_committed = detail::checked_add(fresh ? std::int64_t{0} : tenants_[t].committed, add);
      new_rate = detail::checked_add(fresh ? std::int64_t{0} : tenants_[t].rate, rate);
      new_slope = tenants_.size() > t ? tenants_[t].slope + run_slope(r, now_) : run_slope(r, now_);
      if (fresh) add_tenant(*key, *default_, false);
      try {
        add_kinks(tenants_[t], run_kinks(r));
      } catch (...) {
        if (fresh) drop_last_tenant();
        throw;
      }
    } catch (...) {
      runs_pool_.erase(runs_, at);
      throw;
    }
    tenants_[t].committed = new_committed;
    tenants_[t].rate = new_rate;
    tenants_[t].slope = new_slope;
  }

  /// The job stopped at the clock: its declared rest is no longer committed,
  /// its consumption stays in the window. Unknown id: unknown_entity_error.
  void release(std::string_view id) {
    auto it = runs_.find(id);
    if (it == runs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    const run& r = it->second;
    if (r.tenant == untracked) {
      runs_pool_.erase(runs_, it);
      return;
    }
    auto& ts = tenants_[r.tenant];
    ts.committed -= contribution(r, now_) - consumed(r, now_);
    ts.rate -= r.rate;
    ts.slope -= run_slope(r, now_);
    remove_kinks(ts, run_kinks(r));
    if (cfg_.window == budget_window::calendar) {
      ts.closed += consumed(r, now_);
    } else if (now_ > r.start) {
      // the consumption stays in the window until it slides out
      const segment g{r.start, now_, r.rate};
      ts.segments.push_back(g);
      ts.slope += segment_slope(g, now_);
      add_kinks(ts, segment_kinks(g));
    }
    runs_pool_.erase(runs_, it);
  }

  /// When the job is denied for its budget: the tenant's over-budget running
  /// jobs, newest first (rule over_budget).
  void victims(const job& j, std::vector<victim>& out) const {
    if (classify(j).fits) return;
    const std::string* key = tenant_key(j);
    auto it = key ? index_.find(*key) : index_.end();
    if (it == index_.end()) return;
    std::vector<std::pair<std::uint64_t, const std::string*>> c;
    for (const auto& [id, r] : runs_)
      if (r.tenant == it->second && r.over_budget) c.emplace_back(r.seq, &id);
    std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [seq, id] : c) out.push_back(victim{*id, budget_model_name, "over_budget", entity_of(j)});
  }

  /// When the job would be admitted with nothing changing but time.
  /// Calendar windows: the next window start, when the job's need fits a
  /// whole budget (the running jobs' declared work in the next window may
  /// still deny it then). Rolling windows: the first millisecond after the
  /// clock at which it fits as spending leaves the window (the running jobs
  /// go on as declared; time passing only lowers what is committed, so the
  /// answer is found by doubling steps from one second, then a binary search
  /// to the millisecond); nullopt when it does not fit within two window
  /// lengths. Fits now: the clock. Copies the policy per probe (not a hot path).
  [[nodiscard]] std::optional<std::int64_t> earliest_admission_ms(const job& j) const {
    const budget_verdict v = classify(j);
    if (v.fits) return now_;
    if (cfg_.window == budget_window::rolling) return first_fit_rolling(j);
    const std::int64_t rate = j.request.get(cfg_.resource);
    if (detail::int128{rate} * std::min(duration_of(j), cfg_.window_ms) > v.budget) return std::nullopt;
    return window_end();
  }

  // ---- introspection ---------------------------------------------------------

  struct tenant_status {
    std::string_view name;
    bool limited = true;  // false: no budget of its own and no "*" (after a reload); budget and remaining are 0
    std::int64_t budget = 0;
    std::int64_t spent = 0;                     // consumed in the window at the clock
    std::int64_t remaining = 0;                 // budget - spent (>= 0)
    std::int64_t committed = 0;                 // spent + declared rest of the running jobs
    std::int64_t rate = 0;                      // running usage of the resource
    std::optional<std::int64_t> exhaustion_ms;  // when spent reaches the budget at the current rate
  };
  /// Calls fn(tenant_status) for every tenant known (own budget or running work).
  template <class F>
  void for_each_tenant(F&& fn) const {
    std::vector<std::int64_t> spent(tenants_.size(), 0);
    for (std::size_t t = 0; t < tenants_.size(); ++t) spent[t] = past(tenants_[t], now_);
    for (const auto& [id, r] : runs_)
      if (r.tenant != untracked) spent[r.tenant] = detail::checked_add(spent[r.tenant], consumed(r, now_));
    for (std::size_t t = 0; t < tenants_.size(); ++t) {
      const auto& ts = tenants_[t];
      tenant_status s;
      s.name = ts.name;
      s.limited = limited(ts);
      s.budget = s.limited ? ts.budget : 0;
      s.spent = spent[t];
      s.remaining = std::max<std::int64_t>(0, s.budget - spent[t]);
      s.committed = ts.committed;
      s.rate = ts.rate;
      if (!s.limited)
        s.exhaustion_ms = std::nullopt;
      else if (s.remaining == 0)
        s.exhaustion_ms = now_;
      else if (ts.rate > 0) {
        const std::int64_t at = detail::checked_add(now_, (s.remaining + ts.rate - 1) / ts.rate);
        if (cfg_.window == budget_window::rolling || at < window_end()) s.exhaustion_ms = at;
      }
      fn(s);
    }
  }
  [[nodiscard]] std::vector<std::string_view> over_budget_jobs() const {
    std::vector<std::pair<std::uint64_t, std::string_view>> c;
    for (const auto& [id, r] : runs_)
      if (r.over_budget) c.emplace_back(r.seq, id);
    std::sort(c.begin(), c.end());
    std::vector<std::string_view> out;
    for (const auto& e : c) out.push_back(e.second);
    return out;
  }
  [[nodiscard]] bool over_budget(std::string_view id) const {
    auto it = runs_.find(id);
    return it != runs_.end() && it->second.over_budget;
  }
  [[nodiscard]] std::int64_t window_start() const noexcept {
    return cfg_.window == budget_window::calendar ? cfg_.window_start_ms + window_ * cfg_.window_ms
                                                  : now_ - cfg_.window_ms;
  }
  [[nodiscard]] std::int64_t window_end() const noexcept {
    return cfg_.window == budget_window::calendar ? window_start() + cfg_.window_ms : now_;
  }
  [[nodiscard]] std::size_t running_jobs() const noexcept { return runs_.size(); }

 private:
  [[nodiscard]] std::optional<std::int64_t> first_fit_rolling(const job& j) const {
    const std::int64_t limit = detail::checked_add(now_, detail::checked_mul(std::int64_t{2}, cfg_.window_ms));
    auto fits_at = [&](const budget_policy& from, std::int64_t t) {
      budget_policy probe = from;
      probe.advance_to(t);
      return std::pair{probe.classify(j).fits, std::move(probe)};
    };
    budget_policy lo = *this;  // denied at t_lo
    std::int64_t t_lo = now_, step = 1000, t_hi = -1;
    while (t_lo < limit) {
      const std::int64_t t = std::min(limit, t_lo + step);
      auto [ok, probe] = fits_at(lo, t);
      if (ok) {
        t_hi = t;
        break;
      }
      lo = std::move(probe);
      t_lo = t;
      step *= 2;
    }
    if (t_hi < 0) return std::nullopt;
    while (t_hi - t_lo > 1) {  // denied at t_lo, admitted at t_hi
      const std::int64_t mid = t_lo + (t_hi - t_lo) / 2;
      auto [ok, probe] = fits_at(lo, mid);
      if (ok) {
        t_hi = mid;
      } else {
        lo = std::move(probe);
        t_lo = mid;
      }
    }
    return t_hi;
  }

  struct segment {
    std::int64_t from, to, rate;
  };
  struct tenant_state {
    std::string name;
    std::int64_t budget = 0;
    bool own = false;
    std::int64_t committed = 0;  // at the clock
    std::int64_t rate = 0;
    std::int64_t closed = 0;       // calendar: released consumption in this window
    std::deque<segment> segments;  // rolling: released consumption
    // committed over time: slope at the clock, and later slope changes (time -> change)
    detail::int128 slope = 0;
    std::map<std::int64_t, detail::int128> kinks;
  };
  using kink_map = std::map<std::int64_t, detail::int128>;
  struct walked {
    std::int64_t committed = 0;
    detail::int128 slope = 0;
  };
  static constexpr std::uint32_t untracked = 0xFFFFFFFFu;
  struct run {
    std::uint32_t tenant = 0;
    std::int64_t rate = 0, start = 0, end = 0;
    std::uint64_t seq = 0;
    bool over_budget = false;
  };

  // a static name when the resource is well known (reasons may outlive a copy of the policy)
  [[nodiscard]] std::string_view resource_view() const noexcept {
    const auto n = resources::well_known_name(cfg_.resource);
    return !n.empty() && n == cfg_.resource_name ? n : std::string_view(cfg_.resource_name);
  }
  [[nodiscard]] std::int64_t window_index(std::int64_t t) const noexcept {
    const std::int64_t d = t - cfg_.window_start_ms;
    return d >= 0 ? d / cfg_.window_ms : -((-d + cfg_.window_ms - 1) / cfg_.window_ms);
  }
  [[nodiscard]] std::int64_t duration_of(const job& j) const noexcept {
    return j.duration_ms >= 0 ? j.duration_ms : cfg_.default_duration_ms;
  }
  [[nodiscard]] std::int64_t need_of(std::int64_t rate, std::int64_t d) const {
    const std::int64_t span =
        cfg_.window == budget_window::calendar ? std::min(d, window_end() - now_) : std::min(d, cfg_.window_ms);
    return detail::checked_mul(rate, span);
  }
  // consumption of a running job inside the window at t
  [[nodiscard]] std::int64_t consumed(const run& r, std::int64_t t) const {
    const std::int64_t from = cfg_.window == budget_window::calendar
                                  ? std::max(r.start, cfg_.window_start_ms + window_index(t) * cfg_.window_ms)
                                  : std::max(r.start, t - cfg_.window_ms);
    return detail::checked_mul(r.rate, std::max<std::int64_t>(0, t - from));
  }
  // consumed + declared rest
  [[nodiscard]] std::int64_t contribution(const run& r, std::int64_t t) const {
    std::int64_t rest;
    if (cfg_.window == budget_window::calendar) {
      const std::int64_t we = cfg_.window_start_ms + (window_index(t) + 1) * cfg_.window_ms;
      rest = std::max<std::int64_t>(0, std::min(r.end, we) - t);
    } else {
      rest = std::clamp<std::int64_t>(r.end - t, 0, cfg_.window_ms);
    }
    return detail::checked_add(consumed(r, t), detail::checked_mul(r.rate, rest));
  }
  // released consumption in the window at t
  [[nodiscard]] std::int64_t past(const tenant_state& ts, std::int64_t t) const {
    if (cfg_.window == budget_window::calendar) return window_index(t) == window_ ? ts.closed : 0;
    std::int64_t s = 0;
    for (const auto& g : ts.segments) {
      const std::int64_t from = std::max(g.from, t - cfg_.window_ms);
      if (g.to > from) s = detail::checked_add(s, detail::checked_mul(g.rate, g.to - from));
    }
    return s;
  }

  // slope of contribution(r, .) on [t, t + 1): calendar, within t's window
  [[nodiscard]] detail::int128 run_slope(const run& r, std::int64_t t) const noexcept {
    if (cfg_.window == budget_window::calendar) return t >= r.end ? r.rate : 0;
    const std::int64_t len = cfg_.window_ms;
    detail::int128 s = detail::int128{r.start} + len > t ? r.rate : 0;  // consumption still grows
    if (detail::int128{r.end} - len <= t && t < r.end) s -= r.rate;     // the declared rest shrinks
    return s;
  }
  // slope of a released segment's part in the rolling window on [t, t + 1)
  [[nodiscard]] detail::int128 segment_slope(const segment& g, std::int64_t t) const noexcept {
    const detail::int128 from_l = detail::int128{g.from} + cfg_.window_ms, to_l = detail::int128{g.to} + cfg_.window_ms;
    return (from_l <= t && t < to_l) ? -detail::int128{g.rate} : 0;
  }
  // A run's or a segment's slope changes after the clock: (time, change), at most 3.
  struct kink_list {
    std::array<std::pair<std::int64_t, detail::int128>, 3> at{};
    std::size_t n = 0;
  };
  template <class Slope>
  [[nodiscard]] kink_list kinks_at(std::array<std::int64_t, 3> pts, std::size_t count, Slope&& slope) const {
    kink_list out;
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t p = pts[i];
      bool seen = false;
      for (std::size_t k = 0; k < i; ++k) seen = seen || pts[k] == p;
      if (p <= now_ || seen) continue;
      const detail::int128 d = slope(p) - slope(p - 1);
      if (d != 0) out.at[out.n++] = {p, d};
    }
    return out;
  }
  [[nodiscard]] kink_list run_kinks(const run& r) const {
    constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
    if (cfg_.window == budget_window::calendar)
      return kinks_at({r.end, 0, 0}, 1, [&](std::int64_t x) { return run_slope(r, x); });
    const std::int64_t len = cfg_.window_ms;
    // a point that does not fit in 64 bits is never reached (times stay below 2^62)
    const std::int64_t a = r.start <= big - len ? r.start + len : big;
    const std::int64_t b = r.end - len;  // end >= start >= 0 > min + len
    return kinks_at({a, b, r.end}, 3, [&](std::int64_t x) { return run_slope(r, x); });
  }
  [[nodiscard]] kink_list segment_kinks(const segment& g) const {
    constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
    const std::int64_t len = cfg_.window_ms;
    return kinks_at({g.from <= big - len ? g.from + len : big, g.to <= big - len ? g.to + len : big, 0}, 2,
                    [&](std::int64_t x) { return segment_slope(g, x); });
  }
  // Adds slope changes; a change that cancels an entry keeps it (at 0), so
  // that removing the same changes later only finds and subtracts.
  void add_kinks(tenant_state& ts, const kink_list& k) {
    std::size_t done = 0;
    try {
      for (; done < k.n; ++done) {
        const auto& [p, d] = k.at[done];
        if (auto it = ts.kinks.find(p); it != ts.kinks.end())
          it->second += d;
        else
          kink_pool_.emplace(ts.kinks, p, d);
      }
    } catch (...) {
      for (std::size_t i = 0; i < done; ++i) ts.kinks.find(k.at[i].first)->second -= k.at[i].second;
      throw;
    }
  }
  // Removes slope changes added before (finding and subtracting only: never throws).
  void remove_kinks(tenant_state& ts, const kink_list& k) noexcept {
    for (std::size_t i = 0; i < k.n; ++i)
      if (auto it = ts.kinks.find(k.at[i].first); it != ts.kinks.end()) it->second -= k.at[i].second;
  }
  // a tenant's committed amount and slope at t (no window change), without changing it
  [[nodiscard]] walked walk(const tenant_state& ts, std::int64_t t) const {
    detail::int128 v = ts.committed, slope = ts.slope;
    std::int64_t at = now_;
    for (auto it = ts.kinks.begin(); it != ts.kinks.end() && it->first <= t; ++it) {
      v += slope * (it->first - at);
      slope += it->second;
      at = it->first;
    }
    v += slope * (t - at);
    if (v < std::numeric_limits<std::int64_t>::min() || v > std::numeric_limits<std::int64_t>::max())
      detail::throw_overflow("committed resource-ms of a budget tenant");
    return walked{static_cast<std::int64_t>(v), slope};
  }
  // a new calendar window at t: every tenant from its running jobs again
  void rebuild_at(std::int64_t t, std::int64_t w) {
    std::vector<std::int64_t> committed(tenants_.size(), 0);
    std::vector<detail::int128> slope(tenants_.size(), 0);
    for (const auto& [id, r] : runs_)
      if (r.tenant != untracked) {
        committed[r.tenant] = detail::checked_add(committed[r.tenant], contribution(r, t));
        slope[r.tenant] += run_slope(r, t);
      }
    for (auto& ts : tenants_)  // no slope change is left in the old window
      while (!ts.kinks.empty()) kink_pool_.erase(ts.kinks, ts.kinks.begin());
    now_ = t;
    window_ = w;
    for (std::size_t i = 0; i < tenants_.size(); ++i) {
      tenants_[i].committed = committed[i];
      tenants_[i].slope = slope[i];
      tenants_[i].closed = 0;
    }
    for (const auto& [id, r] : runs_)
      if (r.tenant != untracked) add_kinks(tenants_[r.tenant], run_kinks(r));
  }

  const std::string* tenant_key(const job& j) const noexcept {
    const std::string* k = nullptr;
    switch (cfg_.tenant) {
      case budget_tenant::queue:
        k = &j.queue;
        break;
      case budget_tenant::ns:
        k = &j.ns;
        break;
      case budget_tenant::user:
        k = &j.user;
        break;
      case budget_tenant::group: {
        // the first group with a budget; else, with "*", the first group; else
        // the first group counted without a budget (a reload took it away)
        const std::string* counted = nullptr;
        for (const auto& g : j.groups)
          if (const auto it = index_.find(g); it != index_.end()) {
            if (limited(tenants_[it->second])) return &g;
            if (!counted) counted = &g;
          }
        return default_ && !j.groups.empty() ? &j.groups.front() : counted;
      }
    }
    return k->empty() ? nullptr : k;
  }
  bool lookup(const job& j, std::int64_t& budget, std::int64_t& committed) const noexcept {
    const std::string* k = tenant_key(j);
    if (!k) return false;
    if (auto it = index_.find(*k); it != index_.end()) {
      if (!limited(tenants_[it->second])) return false;
      budget = tenants_[it->second].budget;
      committed = tenants_[it->second].committed;
      return true;
    }
    if (!default_) return false;
    budget = *default_;
    committed = 0;
    return true;
  }
  // a budget of its own or the "*" one (a reload may leave a tenant neither)
  [[nodiscard]] bool limited(const tenant_state& ts) const noexcept { return ts.own || default_.has_value(); }
  std::string entity_of(const job& j) const {
    static constexpr std::string_view names[] = {"queue:", "namespace:", "user:", "group:"};
    const std::string* k = tenant_key(j);
    return std::string(names[static_cast<std::size_t>(cfg_.tenant)]) + (k ? *k : std::string());
  }
  void add_tenant(std::string_view name, std::int64_t budget, bool own) {
    tenant_state ts;
    ts.name = std::string(name);
    ts.budget = budget;
    ts.own = own;
    tenants_.push_back(std::move(ts));
    try {
      index_.emplace(tenants_.back().name, static_cast<std::uint32_t>(tenants_.size() - 1));
    } catch (...) {
      tenants_.pop_back();
      throw;
    }
  }
  void drop_last_tenant() noexcept {
    index_.erase(tenants_.back().name);
    tenants_.pop_back();
  }

  budget_config cfg_;
  std::int64_t now_ = 0;
  std::int64_t window_ = 0;
  std::optional<std::int64_t> default_;
  std::vector<tenant_state> tenants_;
  std::unordered_map<std::string, std::uint32_t, detail::string_hash, std::equal_to<>> index_;
  using run_map = std::unordered_map<std::string, run, detail::string_hash, std::equal_to<>>;
  run_map runs_;
  detail::node_pool<run_map> runs_pool_;  // an admission after a release allocates no node
  std::uint64_t seq_ = 0;
  std::vector<walked> moved_;                   // advance_to's scratch
  detail::node_pool<kink_map, 256> kink_pool_;  // spare slope-change nodes
};

static_assert(policy<budget_policy>);

}  // namespace quota
