// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the extra policies (docs/extra-policies.md):
// registers "budget", "priority_class_quota" and "sharing_pools".
//
//   {"model": "budget", ...}                — quota/budget_json.hpp
//   {"model": "priority_class_quota", ...}  — quota/priority_class_quota_json.hpp
//   {"model": "sharing_pools", ...}         — quota/sharing_pools_json.hpp
//
// Time for budgets. The simulator moves the budget's clock at the start of
// every instant (model_instance::on_time, before that instant's finishes),
// and wakes up while jobs are pending (model_instance::next_wake): at each
// calendar window boundary, or, for rolling windows, at the first time
// enough released spending has left the window for a job the budget denied
// (the smallest one of each tenant), so such a job starts then even if
// nothing else happens. A host does the same with budget_policy::advance_to
// on its own tick.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <quota/budget.hpp>
#include <quota/budget_json.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/priority_class_quota_json.hpp>
#include <quota/sharing_pools.hpp>
#include <quota/sharing_pools_json.hpp>

#include "../simulator.hpp"

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

/// A policy plus the registry it names resources with (shared, read-only).
template <class P>
class sim_named {
 public:
  sim_named(std::shared_ptr<const resource_registry> reg, P p) : reg_(std::move(reg)), p_(std::move(p)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return p_.policy_name(); }
  [[nodiscard]] decision check(const job& j) const { return p_.check(j); }
  void commit(const job& j) { p_.commit(j); }
  void release(std::string_view id) { p_.release(id); }
  void victims(const job& j, std::vector<victim>& out) const { p_.victims(j, out); }
  [[nodiscard]] const P& policy() const noexcept { return p_; }

 private:
  std::shared_ptr<const resource_registry> reg_;
  P p_;
};
template <class P>
inline void to_json(json& j, const sim_named<P>& m) {
  to_json(j, m.policy());
}

inline void register_extra_models(std::map<std::string, model_kind>& kinds) {
  kinds["budget"] = model_kind{
      "budget over time per tenant: {\"resource\", \"tenant\": queue|namespace|user|group, \"window\": "
      "calendar|rolling, \"windowStart\", \"windowLength\", \"defaultDuration\", \"onExhausted\": "
      "deny|admit_preemptible, \"budgets\": {\"team-a\": \"500h\", \"*\": ...}}",
      [](const policy_spec& ps, scenario& sc) {
        auto mi = instance_of(sim_budget(load_budget(ps.body, sc.registry, ps.path)));
        mi.on_time = [](any_policy& p, std::int64_t now) { p.target<sim_budget>()->advance_to(now); };
        mi.next_wake = [](const any_policy& p, std::int64_t) { return p.target<sim_budget>()->next_reset(); };
        return mi;
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // each tenant: its even GPU share for a whole week
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        const auto share = std::max<amount>(
            1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
        json p{{"model", "budget"}, {"resource", std::string(reg.name(gpu))}, {"budgets", json::object()}};
        for (const auto& t : tenants) p["budgets"][t] = std::to_string(share * 168 * unit) + "h";
        return p;
      }};
  kinds["priority_class_quota"] = model_kind{
      "min/max per (tenant, PriorityClass): {\"tenant\": queue|namespace|user, \"quotas\": {\"team-a\": {\"high\": "
      "{\"min\": {...}, \"max\": {...}}}, \"*\": {...}}}",
      [](const policy_spec& ps, scenario& sc) {
        auto pq = load_priority_class_quota(ps.body, sc.registry, ps.path);
        auto reg = std::make_shared<const resource_registry>(sc.registry);
        pq.rebind_registry(reg.get());
        return instance_of(sim_named<priority_class_quota>(std::move(reg), std::move(pq)));
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // at most half the cluster's GPUs at class "high" per tenant
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        (void)unit;
        json p{{"model", "priority_class_quota"}, {"quotas", json::object()}};
        for (const auto& t : tenants)
          p["quotas"][t] = json{{"high", {{"max", {{std::string(reg.name(gpu)), capacity.get(gpu) / 2}}}}}};
        return p;
      }};
  kinds["sharing_pools"] = model_kind{
      "elastic quotas grouped in sharing pools: {\"pools\": [{\"name\", \"lendAcross\", \"borrowAcross\", "
      "\"quotas\": [{\"name\", \"namespaces\", \"min\", \"max\"}]}]}; job.namespace selects the quota",
      [](const policy_spec& ps, scenario& sc) {
        auto sp = load_sharing_pools(ps.body, sc.registry, ps.path);
        auto reg = std::make_shared<const resource_registry>(sc.registry);
        sp.rebind_registry(reg.get());
        return instance_of(sim_named<sharing_pools>(std::move(reg), std::move(sp)));
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // two pools of half the tenants each; they lend to and borrow from each other
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        (void)unit;
        const amount share = capacity.get(gpu) / static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
        json pools = json::array(
            {json{{"name", "pool-1"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}},
             json{{"name", "pool-2"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}}});
        for (std::size_t i = 0; i < tenants.size(); ++i)
          pools[i < (tenants.size() + 1) / 2 ? 0 : 1]["quotas"].push_back(
              json{{"name", tenants[i]}, {"min", {{std::string(reg.name(gpu)), share}}}});
        if (pools[1]["quotas"].empty()) pools.erase(1);
        return json{{"model", "sharing_pools"}, {"pools", pools}};
      }};
}

}  // namespace quota::sim
