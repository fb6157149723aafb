// quota/kueue_preemption.hpp — the Kueue model with state: admitted
// workloads and their usage per (flavor, resource), admission and finish,
// classical preemption (withinClusterQueue, reclaimWithinCohort,
// borrowWithinCohort) with Kueue's candidate order and minimal target set,
// queueing (StrictFIFO / BestEffortFIFO), stopped ClusterQueues, quota
// changes that keep admitted work, and the quota::policy adapter.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
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
};

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
      : reg_(std::move(reg)), forest_(cfg, reg_), assigner_(forest_, reg_) {}
  kueue_model(const kueue_model&) = delete;
  kueue_model& operator=(const kueue_model&) = delete;

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
    admitted_workload aw{wl.name, a.cluster_queue, wl.priority, wl.created, ++seq_, a.usage};
    auto [it, ok] = admitted_.emplace(wl.name, std::move(aw));
    (void)ok;
    for (const auto& [s, v] : it->second.usage) forest_.add_usage(it->second.cluster_queue, s, v);
  }
  /// Assigns and admits if it fits; returns the decision (no change when denied).
  decision admit(const workload& wl) {
    flavor_assignment a;
    auto d = check(wl, a);
    if (d.allowed()) admit(wl, a);
    return d;
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
      if (!is_borrowing(forest_.usage_table().data(), w.cluster_queue, frs)) continue;
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
    forest_ = std::move(next);
    admitted_ = std::move(adm);
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
    std::vector<std::string> admitted;
    flavor_assignment a;
    for (const auto& [cq, w] : order) {
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
  [[nodiscard]] node_index root_of(node_index n) const {
    if (forest_.at(n).parent == no_node) return no_node;  // no cohort
    while (forest_.at(n).parent != no_node) n = forest_.at(n).parent;
    return n;
  }
  /// The ancestors (or selves) of a and b that are children of their lowest common ancestor.
  [[nodiscard]] std::pair<node_index, node_index> below_common_ancestor(node_index a, node_index b) const {
    std::vector<node_index> pa, pb;
    forest_.path_from_root(a, pa);
    forest_.path_from_root(b, pb);
    std::size_t i = 0;
    while (i < pa.size() && i < pb.size() && pa[i] == pb[i]) ++i;
    return {pa[std::min(i, pa.size() - 1)], pb[std::min(i, pb.size() - 1)]};
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
    for (const auto* w : cands) {
      bool allow = allow_borrowing;
      if (w->cluster_queue != cq) {
        if (!is_borrowing(u.data(), w->cluster_queue, frs)) continue;
        // above the threshold only reclaiming (no borrowing) is allowed
        if (threshold && w->priority > *threshold) allow = false;
      }
      for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
      targets.push_back(w);
      if (fits(u.data(), cq, a, allow)) {
        ok = true;
        break;
      }
    }
    if (!ok) return {};
    // fill back: try to keep every target but the last one removed
    for (std::size_t k = targets.size() - 1; k-- > 0;) {
      const auto* w = targets[k];
      for (const auto& [s, v] : w->usage) forest_.add_usage_in(u.data(), w->cluster_queue, s, v);
      if (fits(u.data(), cq, a, allow_borrowing)) {
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
};

/// quota::policy adapter. job.queue is a LocalQueue name in job.ns (or a
/// ClusterQueue name); job.request is the total of job.pods identical pods
/// (one pod set; minCount = job.min_pods when smaller); job.priority and
/// job.created_ms order preemption.
class kueue_policy {
 public:
  explicit kueue_policy(kueue_model& m) : m_(&m) {}
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
    for (const auto& t : m_->preemption_targets(w, a))
      out.push_back(victim{t.name, kueue_model_name, t.rule, m_->forest().at(t.cluster_queue).name});
  }

 private:
  kueue_model* m_;
};

static_assert(quota::policy<kueue_policy>);

}  // namespace quota::kueue
