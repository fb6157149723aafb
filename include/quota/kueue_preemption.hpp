// quota/kueue_preemption.hpp — the Kueue model with state: admitted
// workloads and their usage per (flavor, resource), admission and finish,
// classical preemption (withinClusterQueue, reclaimWithinCohort,
// borrowWithinCohort) with Kueue's candidate order and minimal target set,
// queueing (StrictFIFO / BestEffortFIFO), stopped ClusterQueues, quota
// changes that keep admitted work, and the quota::policy adapter.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/cluster_queue.hpp>
#include <quota/decision.hpp>
#include <quota/error.hpp>
#include <quota/flavor_assignment.hpp>
#include <quota/policy.hpp>

namespace quota::kueue {

/// A workload holding quota in a ClusterQueue.
struct admitted_workload {
  std::string name;
  node_index cluster_queue = no_node;
  std::int32_t priority = 0;
  std::int64_t created = 0;
  std::uint64_t admitted_seq = 0;  // admission order (newer = larger)
  std::vector<std::pair<fr_slot, amount>> usage;
  /// "ns/name" of the LocalQueue it came through (empty: addressed to the ClusterQueue).
  std::string local_queue;
};

/// Admission fair sharing: the usage history of one LocalQueue.
struct local_queue_usage {
  node_index cluster_queue = no_node;
  std::int64_t weight_milli = 1000;
  /// Decayed consumption per resource (base units), as of last_update_ms.
  resource_vector consumed;
  /// Entry penalties of admissions since the last sample (base units).
  resource_vector penalty;
  std::int64_t last_update_ms = 0;
};

namespace detail {
/// Kueue's decay rate for `elapsed` with half-life `half`: 1 - 2^(-elapsed/half); 0 when half is 0.
[[nodiscard]] inline double kueue_alpha(std::int64_t elapsed, std::int64_t half) noexcept {
  if (half <= 0 || elapsed <= 0) return 0.0;
  return 1.0 - std::exp2(-static_cast<double>(elapsed) / static_cast<double>(half));
}
/// v * f rounded to the nearest base unit (the one place where amounts pass
/// through floating point: the decay factors are irrational).
[[nodiscard]] inline amount kueue_scale_round(amount v, double f) {
  const long double x = static_cast<long double>(v) * static_cast<long double>(f);
  if (!(x < 9.2e18L && x > -9.2e18L)) throw overflow_error("admission fair sharing usage does not fit in int64");
  return static_cast<amount>(std::llround(x));
}
}  // namespace detail

/// One workload to preempt and the policy that picked it.
struct preemption_target {
  std::string name;
  node_index cluster_queue = no_node;
  /// "withinClusterQueue", "reclaimWithinCohort" or "borrowWithinCohort".
  std::string_view rule;
  friend bool operator==(const preemption_target&, const preemption_target&) = default;
};

/// Fair-sharing preemption strategies (Kueue's fairSharing.preemptionStrategies).
enum class fair_preemption_strategy {
  /// the preemptor's share after admission <= the target's share after preemption
  less_than_or_equal_to_final_share,
  /// the preemptor's share after admission < the target's share before preemption
  less_than_initial_share
};

/// What happens to admitted work when a quota is lowered below usage.
enum class shrink_policy {
  keep,              // Kueue: admitted workloads keep running (default)
  evict_after_grace  // ours: workloads above the new quota become eviction candidates after a grace period
};

class kueue_model {
 public:
  kueue_model(const kueue_config& cfg, resource_registry reg)
      : reg_(std::move(reg)), forest_(cfg, reg_), assigner_(forest_, reg_) {
    afs_ = afs_states(forest_, {});
  }
  /// A deep copy (the flavor assigner is re-bound to the copy's own forest).
  kueue_model(const kueue_model& o)
      : reg_(o.reg_),
        forest_(o.forest_),
        assigner_(forest_, reg_),
        admitted_(o.admitted_),
        seq_(o.seq_),
        afs_(o.afs_) {}
  kueue_model& operator=(const kueue_model&) = delete;
  /// Every admitted workload, by name.
  [[nodiscard]] const std::unordered_map<std::string, admitted_workload>& admitted() const noexcept {
    return admitted_;
  }

  [[nodiscard]] const cohort_forest& forest() const noexcept { return forest_; }
  [[nodiscard]] const resource_registry& registry() const noexcept { return reg_; }
  [[nodiscard]] const flavor_assigner& assigner() const noexcept { return assigner_; }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_.size(); }
  [[nodiscard]] const admitted_workload* find_admitted(std::string_view name) const {
    auto it = admitted_.find(std::string(name));
    return it == admitted_.end() ? nullptr : &it->second;
  }

  /// The ClusterQueue of a workload: LocalQueue (ns, queue) first, then a
  /// ClusterQueue of that name. Unknown -> unknown_entity_error (302).
  [[nodiscard]] node_index resolve_queue(std::string_view ns, std::string_view queue) const {
    if (auto cq = forest_.find_local_queue(ns, queue)) return *cq;
    if (auto cq = forest_.find_cluster_queue(queue)) return *cq;
    throw unknown_entity_error(error_id::unknown_queue, "LocalQueue", std::string(ns) + "/" + std::string(queue));
  }

  /// Flavor assignment of `wl` against the current usage (no state change).
  void assign(const workload& wl, flavor_assignment& out) const {
    assigner_.assign(resolve_queue(wl.ns, wl.queue), wl, out);
  }

  /// Would `wl` be admitted now without preemption?
  [[nodiscard]] decision check(const workload& wl) const {
    flavor_assignment a;
    return check(wl, a);
  }
  [[nodiscard]] decision check(const workload& wl, flavor_assignment& a) const {
    const node_index cq = resolve_queue(wl.ns, wl.queue);
    const auto& spec = forest_.cluster_queue(cq);
    if (spec.stop != stop_policy::none)
      return decision::deny(reason{kueue_model_name,
                                   "cluster_queue_stopped",
                                   spec.name,
                                   no_resource,
                                   {},
                                   0,
                                   0,
                                   0,
                                   "stopPolicy forbids new admissions"});
    if (admitted_.count(wl.name))
      return decision::deny(reason{kueue_model_name, "already_admitted", wl.name, no_resource, {}, 0, 0, 0, {}});
    assigner_.assign(cq, wl, a);
    if (a.mode == fit_mode::fit) return decision::allow();
    decision d;
    for (const auto& r : a.reasons) d.add(r);
    if (d.allowed()) d.add(reason{kueue_model_name, "no_fit", spec.name, no_resource, {}, 0, 0, 0, {}});
    return d;
  }

  /// Admits `wl` with assignment `a` (which must be a fit, computed on the
  /// current state). Duplicate -> state_error 502; not a fit -> state_error
  /// 501; overflow -> overflow_error. Strong guarantee.
  void admit(const workload& wl, const flavor_assignment& a) {
    if (admitted_.count(wl.name))
      throw state_error(error_id::state_duplicate, "workload '" + wl.name + "' is already admitted");
    if (a.mode != fit_mode::fit || a.cluster_queue == no_node)
      throw state_error(error_id::state_conflict,
                        "workload '" + wl.name + "' does not fit (mode " + std::string(to_string(a.mode)) + ")");
    if (a.cluster_queue >= forest_.cluster_queue_count())
      throw unknown_entity_error(error_id::unknown_queue, "ClusterQueue index", std::to_string(a.cluster_queue));
    for (const auto& [s, v] : a.usage)
      if (s >= forest_.slot_count() || v > forest_.available(a.cluster_queue, s))
        throw state_error(error_id::state_conflict,
                          "assignment of workload '" + wl.name + "' is stale: it no longer fits the current usage");
    for (const auto& [s, v] : a.usage)
      if (!forest_.can_add_usage(a.cluster_queue, s, v))
        throw overflow_error("usage of workload '" + wl.name + "' does not fit in int64");
    std::string lq_key;
    if (forest_.find_local_queue(wl.ns, wl.queue)) lq_key = wl.ns + "/" + wl.queue;
    // admission fair sharing: the entry penalty (request x decay rate of one sampling interval)
    local_queue_usage* lq_state = nullptr;
    resource_vector penalty;
    if (auto it = afs_.find(lq_key); it != afs_.end() && afs_enabled(a.cluster_queue)) {
      lq_state = &it->second;
      const auto& c = *forest_.config().admission_fair_sharing;
      const double alpha = detail::kueue_alpha(c.sampling_interval_ms, c.half_life_ms);
      penalty = lq_state->penalty;
      for (const auto& [s, v] : a.usage) {
        const resource_id r = forest_.slot_resource(s);
        penalty.set(r, quota::detail::checked_add(penalty.get(r), detail::kueue_scale_round(v, alpha)));
      }
    }
    admitted_workload aw{wl.name, a.cluster_queue, wl.priority, wl.created, seq_ + 1, a.usage, lq_key};
    auto [it, ok] = admitted_.emplace(wl.name, std::move(aw));
    (void)ok;
    ++seq_;
    if (lq_state) lq_state->penalty = std::move(penalty);
    for (const auto& [s, v] : it->second.usage) forest_.add_usage(it->second.cluster_queue, s, v);
  }
  /// Assigns and admits if it fits; returns the decision (no change when denied).
  decision admit(const workload& wl) {
    flavor_assignment a;
    auto d = check(wl, a);
    if (d.allowed()) admit(wl, a);
    return d;
  }

  // ---- admission fair sharing (usage history of LocalQueues) -------------------

  /// Is admission fair sharing on for this ClusterQueue (configured globally
  /// and opted in by its admissionScope)?
  [[nodiscard]] bool afs_enabled(node_index cq) const {
    return forest_.config().admission_fair_sharing.has_value() && forest_.cluster_queue(cq).admission_fair_sharing;
  }
  /// The usage history of a LocalQueue ("ns/name"), or null when unknown.
  [[nodiscard]] const local_queue_usage* find_local_queue_usage(std::string_view key) const {
    auto it = afs_.find(std::string(key));
    return it == afs_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const std::unordered_map<std::string, local_queue_usage>& local_queue_usages() const noexcept {
    return afs_;
  }

  /// Samples the usage of every LocalQueue of a ClusterQueue with admission
  /// fair sharing at time `now_ms` (the host's clock, the same origin as 0 at
  /// construction): consumed = consumed * (1 - a) + admitted usage now * a,
  /// a = 1 - 2^(-elapsed / half-life), plus the entry penalties since the last
  /// sample, which are then cleared. A time before a LocalQueue's last sample
  /// -> state_error (out-of-order), nothing changed.
  void sample_usage(std::int64_t now_ms) {
    if (!forest_.config().admission_fair_sharing) return;
    const auto half = forest_.config().admission_fair_sharing->half_life_ms;
    for (const auto& [key, st] : afs_)
      if (now_ms < st.last_update_ms)
        throw state_error(error_id::state_conflict, "admission fair sharing sample at " + std::to_string(now_ms) +
                                                        " ms is before the last one of LocalQueue '" + key + "' (" +
                                                        std::to_string(st.last_update_ms) + " ms)");
    // current usage per LocalQueue
    std::unordered_map<std::string, resource_vector> current;
    for (const auto& [name, w] : admitted_) {
      if (w.local_queue.empty()) continue;
      auto& v = current[w.local_queue];
      for (const auto& [s, x] : w.usage) {
        const resource_id r = forest_.slot_resource(s);
        v.set(r, quota::detail::checked_add(v.get(r), x));
      }
    }
    // compute everything first (strong guarantee), then commit
    std::vector<std::pair<local_queue_usage*, resource_vector>> next;
    for (auto& [key, st] : afs_) {
      if (!afs_enabled(st.cluster_queue)) continue;
      const double alpha = detail::kueue_alpha(now_ms - st.last_update_ms, half);
      const auto cur_it = current.find(key);
      resource_vector c;
      std::vector<resource_id> rs;
      for (const auto& e : st.consumed) rs.push_back(e.id);
      for (const auto& e : st.penalty) rs.push_back(e.id);
      if (cur_it != current.end())
        for (const auto& e : cur_it->second) rs.push_back(e.id);
      for (const auto r : rs) {
        if (c.get(r) != 0) continue;
        const amount now_v = cur_it == current.end() ? 0 : cur_it->second.get(r);
        amount v = quota::detail::checked_add(detail::kueue_scale_round(st.consumed.get(r), 1.0 - alpha),
                                              detail::kueue_scale_round(now_v, alpha));
        v = quota::detail::checked_add(v, st.penalty.get(r));
        if (v != 0) c.set(r, v);
      }
      next.emplace_back(&st, std::move(c));
    }
    for (auto& [st, c] : next) {
      st->consumed = std::move(c);
      st->penalty = resource_vector{};
      st->last_update_ms = now_ms;
    }
  }

  /// A LocalQueue's admission fair-sharing usage, exact: the sum over
  /// resources of weight x (consumed + penalty) in units of the Kubernetes
  /// quantity (cores, bytes, devices), divided by the LocalQueue's weight.
  /// A zero-weight LocalQueue with usage has no finite value: nullopt.
  [[nodiscard]] std::optional<rational> local_queue_fs_usage(std::string_view key) const {
    const auto* st = find_local_queue_usage(key);
    if (!st) throw unknown_entity_error(error_id::unknown_queue, "LocalQueue", key);
    const auto& c = *forest_.config().admission_fair_sharing;
    rational u = 0;
    auto add = [&](const resource_vector& v) {
      for (const auto& e : v) {
        big_int den = 1000;
        for (int k = 0; k < reg_.scale(e.id); ++k) den *= 10;
        u += rational(big_int(c.weight_of(e.id)) * e.value, den);
      }
    };
    add(st->consumed);
    add(st->penalty);
    if (st->weight_milli == 0) {
      if (u == 0) return rational(0);
      return std::nullopt;
    }
    return u * 1000 / st->weight_milli;
  }

  /// The workload finished or was evicted: gives its usage back.
  void finish(std::string_view name) {
    auto it = admitted_.find(std::string(name));
    if (it == admitted_.end()) throw unknown_entity_error(error_id::unknown_job, "workload", name);
    for (const auto& [s, v] : it->second.usage) forest_.remove_usage(it->second.cluster_queue, s, v);
    admitted_.erase(it);
  }

  /// Kueue's classical preemption for `wl`, whose assignment `a` needs
  /// preemption: candidates by policy, ordered (other ClusterQueues first,
  /// lower priority first, newer admission first), then the minimal set that
  /// makes the workload fit. Empty when preemption cannot help.
  [[nodiscard]] std::vector<preemption_target> preemption_targets(const workload& wl,
                                                                  const flavor_assignment& a) const {
    std::vector<preemption_target> out;
    if (a.mode != fit_mode::preempt) return out;
    const node_index cq = a.cluster_queue;
    const auto& spec = forest_.cluster_queue(cq);
    // slots needing preemption: requested slots whose total does not fit what is available
    std::vector<fr_slot> frs;
    for (const auto& [s, v] : a.usage)
      if (v > forest_.available(cq, s)) frs.push_back(s);
    if (frs.empty()) return out;

    struct cand {
      const admitted_workload* w;
      std::string_view rule;
    };
    std::vector<cand> cands;
    const auto& pol = spec.preemption;
    auto uses_frs = [&](const admitted_workload& w) {
      for (const auto& [s, v] : w.usage)
        if (v > 0 && std::find(frs.begin(), frs.end(), s) != frs.end()) return true;
      return false;
    };
    const node_index root = root_of(cq);
    const bool borrow_ok = pol.borrow_within_cohort != borrow_within_cohort_policy::never;
    for (const auto& [name, w] : admitted_) {
      if (!uses_frs(w)) continue;
      if (w.cluster_queue == cq) {
        bool ok = false;
        switch (pol.within_cluster_queue) {
          case within_cluster_queue_policy::never:
            break;
          case within_cluster_queue_policy::lower_priority:
            ok = w.priority < wl.priority;
            break;
          case within_cluster_queue_policy::lower_or_newer_equal_priority:
            ok = w.priority < wl.priority || (w.priority == wl.priority && w.created > wl.created);
            break;
        }
        if (ok) cands.push_back({&w, "withinClusterQueue"});
        continue;
      }
      if (root == no_node || root_of(w.cluster_queue) != root) continue;
      if (pol.reclaim_within_cohort == reclaim_within_cohort_policy::never) continue;
      if (!reclaimable(forest_.usage_table().data(), cq, w.cluster_queue, frs)) continue;
      bool ok = pol.reclaim_within_cohort == reclaim_within_cohort_policy::any || w.priority < wl.priority;
      std::string_view rule = "reclaimWithinCohort";
      if (!ok && borrow_ok && w.priority < wl.priority) {
        ok = true;
        rule = "borrowWithinCohort";
      }
      if (ok) cands.push_back({&w, rule});
    }
    if (cands.empty()) return out;
    std::sort(cands.begin(), cands.end(), [&](const cand& x, const cand& y) {
      const bool xo = x.w->cluster_queue != cq, yo = y.w->cluster_queue != cq;
      if (xo != yo) return xo;  // other ClusterQueues (borrowing) first
      if (x.w->priority != y.w->priority) return x.w->priority < y.w->priority;
      if (x.w->admitted_seq != y.w->admitted_seq) return x.w->admitted_seq > y.w->admitted_seq;
      return x.w->name < y.w->name;
    });
    std::vector<const admitted_workload*> same;
    for (const auto& c : cands)
      if (c.w->cluster_queue == cq) same.push_back(c.w);

    std::vector<const admitted_workload*> all;
    for (const auto& c : cands) all.push_back(c.w);
    std::vector<const admitted_workload*> targets;
    if (same.size() == all.size()) {
      targets = minimal(cq, a, frs, all, true, std::nullopt);
    } else if (borrow_ok) {
      std::vector<const admitted_workload*> filtered;
      const bool under_nominal = !is_borrowing(forest_.usage_table().data(), cq, frs);
      for (const auto* w : all)
        if (w->cluster_queue == cq || under_nominal || !pol.max_priority_threshold ||
            w->priority <= *pol.max_priority_threshold)
          filtered.push_back(w);
      targets = minimal(cq, a, frs, filtered, true, pol.max_priority_threshold);
    } else {
      targets = minimal(cq, a, frs, all, false, std::nullopt);
      if (targets.empty()) targets = minimal(cq, a, frs, same, true, std::nullopt);
    }
    for (const auto* t : targets) {
      std::string_view rule;
      for (const auto& c : cands)
        if (c.w == t) rule = c.rule;
      out.push_back({t->name, t->cluster_queue, rule});
    }
    return out;
  }

  /// Fair-sharing preemption (Kueue with fair sharing enabled): candidates as
  /// in classical preemption; the ClusterQueue with the highest dominant
  /// resource share gives up its next candidate (lowest priority, newest
  /// first) while the strategy allows it, comparing shares of the two sides'
  /// ancestors just below their lowest common cohort. Strategies are tried in
  /// order (Kueue's default: both, final share first). Own-queue candidates
  /// are not subject to the strategy.
  [[nodiscard]] std::vector<preemption_target> fair_preemption_targets(
      const workload& wl, const flavor_assignment& a,
      const std::vector<fair_preemption_strategy>& strategies = {
          fair_preemption_strategy::less_than_or_equal_to_final_share,
          fair_preemption_strategy::less_than_initial_share}) const {
    std::vector<preemption_target> out;
    if (a.mode != fit_mode::preempt) return out;
    const node_index cq = a.cluster_queue;
    const auto& pol = forest_.cluster_queue(cq).preemption;
    std::vector<fr_slot> frs;
    for (const auto& [s, v] : a.usage)
      if (v > forest_.available(cq, s)) frs.push_back(s);
    if (frs.empty()) return out;
    const node_index root = root_of(cq);
    // candidates per ClusterQueue, each list in preemption order
    std::map<node_index, std::vector<const admitted_workload*>> per_cq;
    for (const auto& [name, w] : admitted_) {
      bool uses = false;
      for (const auto& [s, v] : w.usage) uses = uses || (v > 0 && std::find(frs.begin(), frs.end(), s) != frs.end());
      if (!uses) continue;
      bool ok = false;
      if (w.cluster_queue == cq) {
        ok = (pol.within_cluster_queue == within_cluster_queue_policy::lower_priority && w.priority < wl.priority) ||
             (pol.within_cluster_queue == within_cluster_queue_policy::lower_or_newer_equal_priority &&
              (w.priority < wl.priority || (w.priority == wl.priority && w.created > wl.created)));
      } else if (root != no_node && root_of(w.cluster_queue) == root) {
        ok = pol.reclaim_within_cohort == reclaim_within_cohort_policy::any ||
             (pol.reclaim_within_cohort == reclaim_within_cohort_policy::lower_priority && w.priority < wl.priority);
      }
      if (ok) per_cq[w.cluster_queue].push_back(&w);
    }
    for (auto& [q, v] : per_cq)
      std::sort(v.begin(), v.end(), [](auto* x, auto* y) {
        if (x->priority != y->priority) return x->priority < y->priority;
        if (x->admitted_seq != y->admitted_seq) return x->admitted_seq > y->admitted_seq;
        return x->name < y->name;
      });
    for (const auto strategy : strategies) {
      std::vector<amount> u = forest_.usage_table();
      std::map<node_index, std::size_t> next;
      std::vector<node_index> exhausted;
      std::vector<const admitted_workload*> targets;
      bool ok = false;
      while (!ok) {
        // the ClusterQueue with the highest share that still has candidates
        node_index pick = no_node;
        dominant_share pick_share;
        for (const auto& [q, v] : per_cq) {
          if (next[q] >= v.size() || std::find(exhausted.begin(), exhausted.end(), q) != exhausted.end()) continue;
          const auto sh = forest_.share_in(u.data(), q);
          if (pick == no_node || sh > pick_share) {
            pick = q;
            pick_share = sh;
          }
        }
        if (pick == no_node) break;
        const admitted_workload* w = per_cq[pick][next[pick]];
        if (pick != cq) {
          if (!is_borrowing(u.data(), pick, frs)) {
            exhausted.push_back(pick);
            continue;
          }
          auto [pa, pb] = below_common_ancestor(cq, pick);
          std::vector<amount> after = u;
          for (const auto& [s, v] : w->usage) forest_.remove_usage_in(after.data(), pick, s, v);
          std::vector<amount> with_wl = after;
          for (const auto& [s, v] : a.usage) forest_.add_usage_in(with_wl.data(), cq, s, v);
          const auto preemptor_new = forest_.share_in(with_wl.data(), pa);
          const auto target_old = forest_.share_in(u.data(), pb);
          const auto target_new = forest_.share_in(after.data(), pb);
          const bool allowed = strategy == fair_preemption_strategy::less_than_or_equal_to_final_share
                                   ? preemptor_new <= target_new
                                   : preemptor_new < target_old;
          if (!allowed) {
            exhausted.push_back(pick);
            continue;
          }
        }
        ++next[pick];
        for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
        targets.push_back(w);
        ok = fits(u.data(), cq, a, true);
      }
      if (!ok) continue;
      for (std::size_t k = targets.size() - 1; k-- > 0;) {
        const auto* w = targets[k];
        for (const auto& [s, v] : w->usage) forest_.add_usage_in(u.data(), w->cluster_queue, s, v);
        if (fits(u.data(), cq, a, true))
          targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(k));
        else
          for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
      }
      for (const auto* t : targets)
        out.push_back({t->name, t->cluster_queue,
                       t->cluster_queue == cq ? std::string_view("withinClusterQueue")
                       : strategy == fair_preemption_strategy::less_than_or_equal_to_final_share
                           ? std::string_view("LessThanOrEqualToFinalShare")
                           : std::string_view("LessThanInitialShare")});
      return out;
    }
    return out;
  }

  /// Changes quotas/structure while keeping admitted workloads and their usage
  /// (Kueue keeps admitted work when a quota is lowered). A workload whose
  /// ClusterQueue or flavor/resource disappears -> validation_error, no change.
  void update_config(const kueue_config& cfg) {
    cohort_forest next(cfg, reg_);
    diagnostics diag;
    std::vector<std::pair<std::string, node_index>> moved;
    for (const auto& [name, w] : admitted_) {
      const auto& old_cq = forest_.at(w.cluster_queue).name;
      auto n = next.find_cluster_queue(old_cq);
      if (!n) {
        diag.add("Workload/" + name, "its ClusterQueue '" + old_cq + "' is removed");
        continue;
      }
      for (const auto& [s, v] : w.usage) {
        auto fl = next.find_flavor(forest_.flavor_name(forest_.slot_flavor(s)));
        if (!fl || next.slot(*fl, forest_.slot_resource(s)) == no_slot)
          diag.add("Workload/" + name, "its flavor or resource is no longer defined");
      }
      moved.emplace_back(name, *n);
    }
    diag.throw_if_any();
    std::unordered_map<std::string, admitted_workload> adm = admitted_;
    for (const auto& [name, n] : moved) {
      auto& w = adm.at(name);
      w.cluster_queue = n;
      for (auto& [s, v] : w.usage) {
        s = next.slot(*next.find_flavor(forest_.flavor_name(forest_.slot_flavor(s))), forest_.slot_resource(s));
        next.add_usage(n, s, v);
      }
    }
    auto afs = afs_states(next, afs_);
    forest_ = std::move(next);
    admitted_ = std::move(adm);
    afs_ = std::move(afs);
  }

  /// ClusterQueues whose usage is above what they could hold now (after a
  /// quota shrink): usage > nominal + borrowing limit, or the root above its quota.
  [[nodiscard]] std::vector<node_index> over_capacity_cluster_queues() const {
    std::vector<node_index> out;
    for (node_index cq = 0; cq < forest_.cluster_queue_count(); ++cq)
      for (fr_slot s = 0; s < forest_.slot_count(); ++s)
        if (forest_.usage(cq, s) > 0 && forest_.available(cq, s) < 0) {
          out.push_back(cq);
          break;
        }
    return out;
  }

  /// Policy shrink_policy::evict_after_grace: workloads to evict (lowest
  /// priority, newest first) so that no ClusterQueue stays above capacity,
  /// returned only once `now - shrink_time >= grace`. Nothing under keep.
  [[nodiscard]] std::vector<std::string> shrink_evictions(shrink_policy p, std::int64_t shrink_time, std::int64_t now,
                                                          std::int64_t grace) const {
    std::vector<std::string> out;
    if (p == shrink_policy::keep || now - shrink_time < grace) return out;
    std::vector<amount> u = forest_.usage_table();
    std::vector<const admitted_workload*> ws;
    for (const auto& [n, w] : admitted_) ws.push_back(&w);
    std::sort(ws.begin(), ws.end(), [](auto* x, auto* y) {
      if (x->priority != y->priority) return x->priority < y->priority;
      return x->admitted_seq > y->admitted_seq;
    });
    auto over = [&](node_index cq) {
      for (fr_slot s = 0; s < forest_.slot_count(); ++s)
        if (forest_.available_in(u.data(), cq, s) < 0) return true;
      return false;
    };
    for (const auto* w : ws) {
      if (!over(w->cluster_queue)) continue;
      for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
      out.push_back(w->name);
    }
    return out;
  }

  /// stopPolicy HoldAndDrain: the admitted workloads to evict (every admitted
  /// workload of such a queue), sorted by name.
  [[nodiscard]] std::vector<std::string> drain_candidates() const {
    std::vector<std::string> out;
    for (const auto& [name, w] : admitted_)
      if (forest_.cluster_queue(w.cluster_queue).stop == stop_policy::hold_and_drain) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
  }

  /// One scheduling pass over pending workloads (Kueue's queueing): per
  /// ClusterQueue, by priority (higher first) then creation (older first);
  /// StrictFIFO: the head that does not fit blocks the rest of its queue;
  /// BestEffortFIFO: it is skipped. Returns the names admitted, in order.
  std::vector<std::string> schedule(const std::vector<workload>& pending) {
    std::vector<std::pair<node_index, const workload*>> order;
    order.reserve(pending.size());
    for (const auto& w : pending) order.emplace_back(resolve_queue(w.ns, w.queue), &w);
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
      if (x.second->priority != y.second->priority) return x.second->priority > y.second->priority;
      return x.second->created < y.second->created;
    });
    if (forest_.cluster_queue_count() > 0 && forest_.cluster_queue(0).fair_sharing) return schedule_fair(order);
    std::vector<std::uint8_t> blocked(forest_.cluster_queue_count(), 0);
    std::vector<std::uint8_t> done(order.size(), 0);
    std::vector<std::string> admitted;
    flavor_assignment a;
    for (std::size_t i = 0; i < order.size();) {
      if (done[i]) {
        ++i;
        continue;
      }
      const node_index cq = order[i].first;
      // admission fair sharing: within the ClusterQueue, the LocalQueue with the
      // lowest usage (penalties of this pass included) goes first; then priority
      // and creation as without it
      std::size_t pick = i;
      if (afs_enabled(cq))
        for (std::size_t j = i + 1; j < order.size(); ++j)
          if (!done[j] && order[j].first == cq && afs_before(*order[j].second, *order[pick].second)) pick = j;
      done[pick] = 1;
      const workload* w = order[pick].second;
      if (blocked[cq]) continue;
      if (check(*w, a).allowed()) {
        admit(*w, a);
        admitted.push_back(w->name);
      } else if (forest_.cluster_queue(cq).queueing == queueing_strategy::strict_fifo) {
        blocked[cq] = 1;
      }
    }
    return admitted;
  }

  /// With fair sharing: at each step the head of every ClusterQueue that fits
  /// competes; the one whose side of the tree would have the lowest share
  /// after admitting it (compared below the lowest common cohort, as Kueue's
  /// fair-sharing iterator does) goes first; ties keep queue order.
  std::vector<std::string> schedule_fair(const std::vector<std::pair<node_index, const workload*>>& order) {
    const std::size_t ncq = forest_.cluster_queue_count();
    std::vector<std::vector<const workload*>> queues(ncq);
    for (const auto& [cq, w] : order) queues[cq].push_back(w);
    std::vector<std::size_t> head(ncq, 0);
    std::vector<std::string> admitted;
    std::vector<flavor_assignment> fas(ncq);
    std::vector<std::vector<amount>> after(ncq);
    while (true) {
      node_index best = no_node;
      for (node_index cq = 0; cq < ncq; ++cq) {
        // advance to the first head that fits (BestEffortFIFO) or stop at it (StrictFIFO)
        while (head[cq] < queues[cq].size()) {
          if (check(*queues[cq][head[cq]], fas[cq]).allowed()) break;
          if (forest_.cluster_queue(cq).queueing == queueing_strategy::strict_fifo)
            head[cq] = queues[cq].size();
          else
            ++head[cq];
        }
        if (head[cq] >= queues[cq].size()) continue;
        after[cq] = forest_.usage_table();
        for (const auto& [sl, v] : fas[cq].usage) forest_.add_usage_in(after[cq].data(), cq, sl, v);
        if (best == no_node) {
          best = cq;
          continue;
        }
        auto [pa, pb] = below_common_ancestor(cq, best);
        const auto sa = forest_.share_in(after[cq].data(), pa), sb = forest_.share_in(after[best].data(), pb);
        const workload* wa = queues[cq][head[cq]];
        const workload* wb = queues[best][head[best]];
        if (sa < sb ||
            (sa == sb && (wa->priority > wb->priority || (wa->priority == wb->priority && wa->created < wb->created))))
          best = cq;
      }
      if (best == no_node) break;
      const workload* w = queues[best][head[best]++];
      admit(*w, fas[best]);
      admitted.push_back(w->name);
    }
    return admitted;
  }

  /// Kueue's hierarchical fair-sharing comparison: is `a` (with request
  /// extra_a) to be preferred over `b`? Walks both paths from the root and
  /// compares the dominant resource shares of the first differing ancestors
  /// (lower share first).
  [[nodiscard]] bool fair_less(node_index a, node_index b) const {
    std::vector<node_index> pa, pb;
    forest_.path_from_root(a, pa);
    forest_.path_from_root(b, pb);
    std::size_t i = 0;
    while (i < pa.size() && i < pb.size() && pa[i] == pb[i]) ++i;
    if (i >= pa.size() || i >= pb.size()) return false;
    return forest_.share(pa[i]) < forest_.share(pb[i]);
  }

 private:
  /// Admission fair-sharing order of two workloads of one ClusterQueue: lower
  /// LocalQueue usage first (a workload sent to the ClusterQueue directly
  /// counts as usage 0; a zero-weight LocalQueue with usage last), then
  /// higher priority, then older.
  [[nodiscard]] bool afs_before(const workload& x, const workload& y) const {
    auto usage = [&](const workload& w) -> std::optional<rational> {
      if (!forest_.find_local_queue(w.ns, w.queue)) return rational(0);
      return local_queue_fs_usage(w.ns + "/" + w.queue);
    };
    const auto ux = usage(x), uy = usage(y);
    if (ux.has_value() != uy.has_value()) return ux.has_value();
    if (ux && *ux != *uy) return *ux < *uy;
    if (x.priority != y.priority) return x.priority > y.priority;
    return x.created < y.created;
  }
  /// Usage-history states for every LocalQueue of `f`, keeping those of `old` by key.
  static std::unordered_map<std::string, local_queue_usage> afs_states(
      const cohort_forest& f, const std::unordered_map<std::string, local_queue_usage>& old) {
    std::unordered_map<std::string, local_queue_usage> out;
    for (const auto& l : f.config().local_queues) {
      const std::string key = l.ns + "/" + l.name;
      local_queue_usage st;
      if (auto it = old.find(key); it != old.end()) st = it->second;
      st.cluster_queue = *f.find_cluster_queue(l.cluster_queue);
      st.weight_milli = l.fair_weight_milli;
      out.emplace(key, std::move(st));
    }
    return out;
  }
  [[nodiscard]] node_index root_of(node_index n) const {
    if (forest_.at(n).parent == no_node) return no_node;  // no cohort
    while (forest_.at(n).parent != no_node) n = forest_.at(n).parent;
    return n;
  }
  /// The ancestors (or selves) of a and b that are children of their lowest common ancestor.
  [[nodiscard]] std::pair<node_index, node_index> below_common_ancestor(node_index a, node_index b) const {
    // no allocation: lift the deeper node to the other's depth, then both together
    auto depth = [&](node_index n) {
      std::size_t d = 0;
      for (node_index cur = forest_.at(n).parent; cur != no_node; cur = forest_.at(cur).parent) ++d;
      return d;
    };
    std::size_t da = depth(a), db = depth(b);
    node_index x = a, y = b;
    node_index below_x = a, below_y = b;  // the last node before x/y on the way up
    while (da > db) {
      below_x = x;
      x = forest_.at(x).parent;
      --da;
    }
    while (db > da) {
      below_y = y;
      y = forest_.at(y).parent;
      --db;
    }
    if (x == y) {
      // one is an ancestor of the other: the node itself on the shorter side
      return {x == a ? a : below_x, y == b ? b : below_y};
    }
    while (forest_.at(x).parent != forest_.at(y).parent) {
      x = forest_.at(x).parent;
      y = forest_.at(y).parent;
    }
    return {x, y};
  }

  /// Kueue's candidates in other ClusterQueues: `t` uses more than its quota
  /// in a needed slot, and so does every cohort between t and the lowest
  /// cohort it shares with the preemptor's queue `cq` (subtrees within their
  /// quota are not searched).
  [[nodiscard]] bool reclaimable(const amount* u, node_index cq, node_index t, const std::vector<fr_slot>& frs) const {
    if (!is_borrowing(u, t, frs)) return false;
    const node_index lca = forest_.at(below_common_ancestor(cq, t).second).parent;
    for (node_index cur = forest_.at(t).parent; cur != no_node && cur != lca; cur = forest_.at(cur).parent)
      if (!is_borrowing(u, cur, frs)) return false;
    return true;
  }
  /// Kueue's hierarchical advantage over a candidate of ClusterQueue `t`: the
  /// whole request fits within the quota of cq itself or of a cohort holding
  /// cq below the lowest cohort shared with t. Such a candidate may be
  /// preempted even if the preemptor then borrows beyond its own nominal quota.
  [[nodiscard]] bool hierarchical_advantage(const amount* u, node_index cq, const flavor_assignment& a,
                                            node_index t) const {
    const node_index top = below_common_ancestor(cq, t).first;
    for (node_index x = cq; x != no_node; x = forest_.at(x).parent) {
      bool all = true;
      for (const auto& [s, v] : a.usage) all = all && forest_.within_quota_at_in(u, cq, x, s, v);
      if (all) return true;
      if (x == top) break;
    }
    return false;
  }
  [[nodiscard]] bool is_borrowing(const amount* u, node_index cq, const std::vector<fr_slot>& frs) const {
    const std::size_t ns = forest_.slot_count();
    for (auto s : frs)
      if (u[cq * ns + s] > forest_.subtree_quota(cq, s)) return true;
    return false;
  }
  [[nodiscard]] bool fits(const amount* u, node_index cq, const flavor_assignment& a, bool allow_borrowing) const {
    const std::size_t ns = forest_.slot_count();
    for (const auto& [s, v] : a.usage) {
      if (!allow_borrowing && u[cq * ns + s] + v > forest_.subtree_quota(cq, s)) return false;
      if (v > forest_.available_in(u, cq, s)) return false;
    }
    return true;
  }
  [[nodiscard]] std::vector<const admitted_workload*> minimal(node_index cq, const flavor_assignment& a,
                                                              const std::vector<fr_slot>& frs,
                                                              const std::vector<const admitted_workload*>& cands,
                                                              bool allow_borrowing,
                                                              std::optional<std::int32_t> threshold) const {
    std::vector<amount> u = forest_.usage_table();
    std::vector<const admitted_workload*> targets;
    bool ok = false;
    bool fit_allow = allow_borrowing;
    for (const auto* w : cands) {
      bool allow = allow_borrowing;
      if (w->cluster_queue != cq) {
        if (!reclaimable(u.data(), cq, w->cluster_queue, frs)) continue;
        // above the threshold only reclaiming (no borrowing) is allowed
        if (threshold && w->priority > *threshold) allow = false;
        // hierarchical reclaim: the preemptor's subtree holds the request
        if (hierarchical_advantage(forest_.usage_table().data(), cq, a, w->cluster_queue)) allow = true;
      }
      for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
      targets.push_back(w);
      if (fits(u.data(), cq, a, allow)) {
        ok = true;
        fit_allow = allow;
        break;
      }
    }
    if (!ok) return {};
    // fill back: try to keep every target but the last one removed
    for (std::size_t k = targets.size() - 1; k-- > 0;) {
      const auto* w = targets[k];
      for (const auto& [s, v] : w->usage) forest_.add_usage_in(u.data(), w->cluster_queue, s, v);
      if (fits(u.data(), cq, a, fit_allow)) {
        targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
      }
    }
    return targets;
  }

  resource_registry reg_;
  cohort_forest forest_;
  flavor_assigner assigner_;
  std::unordered_map<std::string, admitted_workload> admitted_;
  std::uint64_t seq_ = 0;
  std::unordered_map<std::string, local_queue_usage> afs_;
};

/// quota::policy adapter. job.queue is a LocalQueue name in job.ns (or a
/// ClusterQueue name); job.request is the total of job.pods identical pods
/// (one pod set; minCount = job.min_pods when smaller); job.priority and
/// job.created_ms order preemption. Victims come from classical preemption,
/// or from fair-sharing preemption when the configuration enables fair sharing.
///
/// Two forms: a view of a model the host owns (`kueue_policy(model)`, copies
/// share that model), or an owning value (`kueue_policy(cfg, registry)`,
/// copies are deep, as any_policy expects of a value).
class kueue_policy {
 public:
  explicit kueue_policy(kueue_model& m) : m_(&m) {}
  kueue_policy(const kueue_config& cfg, resource_registry reg)
      : own_(std::make_unique<kueue_model>(cfg, std::move(reg))), m_(own_.get()) {}
  kueue_policy(const kueue_policy& o) : own_(o.own_ ? std::make_unique<kueue_model>(*o.own_) : nullptr) {
    m_ = own_ ? own_.get() : o.m_;
  }
  kueue_policy(kueue_policy&&) noexcept = default;
  kueue_policy& operator=(kueue_policy o) noexcept {
    own_ = std::move(o.own_);
    m_ = o.m_;
    return *this;
  }
  ~kueue_policy() = default;

  [[nodiscard]] kueue_model& model() noexcept { return *m_; }
  [[nodiscard]] const kueue_model& model() const noexcept { return *m_; }
  [[nodiscard]] std::string_view policy_name() const noexcept { return kueue_model_name; }

  [[nodiscard]] workload to_workload(const job& j) const {
    workload w;
    w.name = j.id;
    w.ns = j.ns;
    w.queue = j.queue;
    w.priority = j.priority;
    w.created = j.created_ms;
    pod_set ps;
    bool divisible = j.pods > 0;
    for (const auto& e : j.request)
      if (divisible && e.value % j.pods != 0) divisible = false;
    if (divisible) {
      ps.count = j.pods;
      for (const auto& e : j.request) ps.per_pod.set(e.id, e.value / j.pods);
      if (j.min_pods > 0 && j.min_pods < j.pods) ps.min_count = j.min_pods;
    } else {
      ps.count = 1;
      ps.per_pod = j.request;
    }
    w.pod_sets.push_back(std::move(ps));
    return w;
  }
  [[nodiscard]] decision check(const job& j) const { return m_->check(to_workload(j)); }
  void commit(const job& j) {
    const auto w = to_workload(j);
    flavor_assignment a;
    m_->assign(w, a);
    m_->admit(w, a);
  }
  void release(std::string_view id) { m_->finish(id); }
  void victims(const job& j, std::vector<victim>& out) const {
    const auto w = to_workload(j);
    flavor_assignment a;
    m_->assign(w, a);
    const bool fair = m_->forest().config().fair_sharing;
    for (const auto& t : fair ? m_->fair_preemption_targets(w, a) : m_->preemption_targets(w, a))
      out.push_back(victim{t.name, kueue_model_name, t.rule, m_->forest().at(t.cluster_queue).name});
  }

 private:
  std::unique_ptr<kueue_model> own_;
  kueue_model* m_;
};

static_assert(quota::policy<kueue_policy>);

}  // namespace quota::kueue
