// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the budget model: builds "budget" entries
// (quota/budget_json.hpp; listed in models.cpp); the simulator moves the
// budget's clock and wakes up for it.
// Docs: docs/budget.md
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <quota/budget.hpp>
#include <quota/budget_json.hpp>

#include "../model_registry.hpp"

namespace quota::sim {

/// budget_policy driven by the simulator's clock (see the file comment).
class sim_budget {
 public:
  explicit sim_budget(budget_policy p) : p_(std::move(p)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return p_.policy_name(); }
  [[nodiscard]] decision check(const job& j) const {
    decision d = p_.check(j);
    if (d.denied() && p_.config().window == budget_window::rolling) note_denied(j, d);
    return d;
  }
  void commit(const job& j) {
    p_.commit(j);
    for (auto it = denied_.begin(); it != denied_.end();)
      it = it->second.id == j.id ? denied_.erase(it) : std::next(it);
    wake_.reset();
  }
  void release(std::string_view id) {
    p_.release(id);
    wake_.reset();
  }
  void victims(const job& j, std::vector<victim>& out) const { p_.victims(j, out); }
  [[nodiscard]] std::optional<std::int64_t> earliest_admission_ms(const job& j) const {
    return p_.earliest_admission_ms(j);
  }
  [[nodiscard]] const budget_policy& policy() const noexcept { return p_; }
  /// A reload event: the budgets of `next` in place, what was spent kept
  /// (budget_policy::reload). The denied jobs it remembers are asked again.
  void reload(const budget_policy& next) {
    p_.reload(next);
    denied_.clear();
    wake_.reset();
  }
  /// The simulated time moved on: window resets, rolling forgetting.
  void advance_to(std::int64_t now_ms) {
    if (now_ms > p_.now_ms()) p_.advance_to(now_ms);
  }
  /// Calendar windows: the next window boundary, when every tenant's budget
  /// resets. Rolling windows: the earliest time after the clock at which a
  /// denied job (the smallest of its tenant) fits, as released spending leaves
  /// the window with nothing else changing; end_of_time when none fits within
  /// one window length (then only a release can help, and the simulator is
  /// awake at every release anyway).
  [[nodiscard]] std::int64_t next_reset() const {
    if (p_.config().window == budget_window::calendar) return p_.window_end();
    // with no commit, release or new denial since, the clock moving on does
    // not change the answer (time only forgets): reuse it until it is reached
    if (wake_ && *wake_ > p_.now_ms()) return *wake_;
    std::int64_t best = end_of_time;
    for (const auto& [entity, j] : denied_) best = std::min(best, first_fit(j));
    wake_ = best;
    return best;
  }

 private:
  // Remembers the smallest denied job of each tenant (by its need).
  void note_denied(const job& j, const decision& d) const {
    if (d.reasons().empty()) return;
    const std::string& entity = d.reasons().front().entity;
    auto it = denied_.find(entity);
    if (it == denied_.end()) {
      denied_.emplace(entity, j);
      wake_.reset();
    } else if (it->second.id != j.id && p_.classify(j).need < p_.classify(it->second).need) {
      it->second = j;
      wake_.reset();
    }
  }
  // The first time t > clock at which `j` fits with the budget advanced to t
  // (budget_policy::earliest_admission_ms of a rolling window).
  [[nodiscard]] std::int64_t first_fit(const job& j) const {
    if (p_.check(j).allowed()) return end_of_time;  // fits now: the pass at hand takes it
    const std::optional<std::int64_t> t = p_.earliest_admission_ms(j);
    return t ? *t : end_of_time;
  }

  budget_policy p_;
  mutable std::map<std::string, job, std::less<>> denied_;  // tenant entity -> smallest denied job
  mutable std::optional<std::int64_t> wake_;                // rolling: the last next_reset() answer
};
static_assert(policy<sim_budget>);

inline void to_json(json& j, const sim_budget& b) {
  to_json(j, b.policy());
}

namespace detail {

inline model_instance budget_make(const policy_spec& ps, scenario& sc) {
  auto mi = instance_of(sim_budget(load_budget(ps.body, sc.registry, ps.path)));
  // The budget's clock moves at the start of every instant, before that
  // instant's finishes; while jobs wait, the replay wakes up at next_reset (a
  // calendar window boundary, or when a rolling window has let enough spending
  // go for the smallest denied job of a tenant). A host calls advance_to on its
  // own tick the same way.
  mi.on_time = [](any_policy& p, std::int64_t now) { p.target<sim_budget>()->advance_to(now); };
  mi.next_wake = [](const any_policy& p, std::int64_t) { return p.target<sim_budget>()->next_reset(); };
  // a reload changes the budgets in place: the spent history stays
  const auto next = std::make_shared<const budget_policy>(mi.policy.target<sim_budget>()->policy());
  mi.reload_into = [next](any_policy& current) {
    auto* b = current.target<sim_budget>();
    if (!b) throw state_error(error_id::state_conflict, "budget reload: not a budget model");
    b->reload(*next);
  };
  mi.reload_conflict = [next](const any_policy& in_force) -> std::string {
    const auto* b = in_force.target<sim_budget>();
    return b ? b->policy().reload_conflict(*next) : std::string("not a budget model");
  };
  return mi;
}

inline json budget_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                              const resource_registry& reg) {
  // each tenant: its even GPU share for a whole week
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  const auto share =
      std::max<amount>(1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
  json p{{"model", "budget"}, {"resource", std::string(reg.name(gpu))}, {"budgets", json::object()}};
  for (const auto& t : tenants) p["budgets"][t] = std::to_string(share * 168 * unit) + "h";
  return p;
}

}  // namespace detail

}  // namespace quota::sim
