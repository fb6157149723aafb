// SPDX-License-Identifier: Apache-2.0
// quota/kueue_flavor_assignment.hpp — Kueue flavor assignment: the flavor, mode and
// borrowing chosen for each pod set and resource of a workload, with partial
// admission.
// Docs: docs/kueue.md
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/kueue_cohorts.hpp>
#include <quota/quantity.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// One pod set of a Workload: `count` pods each requesting `per_pod`.
struct kueue_pod_set {
  std::string name = "main";
  std::int32_t count = 1;
  /// Partial admission: the fewest pods the workload accepts (unset: all).
  std::optional<std::int32_t> min_count;
  resource_vector per_pod;
};

/// A Kueue Workload as the model sees it.
struct kueue_workload {
  std::string name;  // unique id (e.g. "ns/name")
  std::string ns;
  std::string queue;  // LocalQueue name (or a ClusterQueue name, see docs)
  std::int32_t priority = 0;
  std::int64_t created = 0;  // creation time, any monotonic unit
  std::vector<kueue_pod_set> pod_sets;
};

enum class kueue_fit_mode : std::uint8_t { no_fit = 0, preempt = 1, fit = 2 };

[[nodiscard]] constexpr std::string_view to_string(kueue_fit_mode m) noexcept {
  switch (m) {
    case kueue_fit_mode::no_fit:
      return "NoFit";
    case kueue_fit_mode::preempt:
      return "Preempt";
    default:
      return "Fit";
  }
}

struct kueue_resource_assignment {
  resource_id resource = no_resource;
  kueue_flavor_index flavor = kueue_no_flavor;
  kueue_fr_slot slot = kueue_no_slot;
  amount request = 0;  // for this pod set
  kueue_amount borrow = 0;  // how much of the ClusterQueue total would be above its quota
  kueue_fit_mode mode = kueue_fit_mode::no_fit;
};

struct kueue_pod_set_assignment {
  std::int32_t count = 0;
  kueue_fit_mode mode = kueue_fit_mode::fit;
  std::vector<kueue_resource_assignment> resources;
};

/// What the flavor assigner found for one workload.
struct kueue_flavor_assignment {
  kueue_node_index cluster_queue = kueue_no_node;
  kueue_fit_mode mode = kueue_fit_mode::fit;  // the worst over pod sets (Kueue's representative mode)
  bool borrowing = false;
  /// Kueue's borrowing level (Assignment.Borrowing): the highest, over the
  /// chosen flavors' resources, of cohort_forest::borrow_height_in; 0 when
  /// nothing borrows.
  std::int32_t borrow_level = 0;
  std::vector<kueue_pod_set_assignment> pod_sets;
  /// Total the workload adds per slot (one entry per slot, no duplicates).
  std::vector<std::pair<kueue_fr_slot, amount>> usage;
  /// Why it is not a fit (empty when mode == fit).
  std::vector<reason> reasons;

  void clear() noexcept {
    cluster_queue = kueue_no_node;
    mode = kueue_fit_mode::fit;
    borrowing = false;
    borrow_level = 0;
    for (auto& p : pod_sets) p.resources.clear();  // pod_sets is resized by assign(), keeping capacity
    usage.clear();
    reasons.clear();
  }
  [[nodiscard]] amount usage_of(kueue_fr_slot s) const noexcept {
    for (const auto& [k, v] : usage)
      if (k == s) return v;
    return 0;
  }
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view kueue_model_name = "kueue";

/// What preemption could do for one (flavor, resource) that needs it
/// (Kueue's preemption oracle): nothing (no candidates), make room inside
/// the workload's own ClusterQueue, or reclaim from other ClusterQueues.
enum class kueue_preemption_possibility : std::uint8_t { no_candidates, preempt, reclaim };
/// The oracle's answer: what preemption could do, and the borrowing level
/// after it (cohort_forest::borrow_height_in once the targets are gone; on
/// the current usage when there are none).
struct kueue_preemption_outlook {
  kueue_preemption_possibility possibility = kueue_preemption_possibility::no_candidates;
  std::int32_t borrow_level = 0;
};

/// Asked by the flavor assigner for every (flavor, resource) that needs
/// preemption: what preemption of `val` of slot `s` for `wl` in `cq` could do
/// now (kueue_model answers with its preemption targets).
class kueue_preemption_oracle {
 public:
  virtual ~kueue_preemption_oracle() = default;
  [[nodiscard]] virtual kueue_preemption_outlook simulate(kueue_node_index cq, const kueue_workload& wl,
                                                          kueue_fr_slot s, amount val) const = 0;

 protected:
  kueue_preemption_oracle() = default;
  kueue_preemption_oracle(const kueue_preemption_oracle&) = default;
  kueue_preemption_oracle& operator=(const kueue_preemption_oracle&) = default;
};

namespace detail {
struct kueue_flavor_note {
  kueue_flavor_index flavor;
  resource_id resource;
  amount request;
  kueue_amount available, potential;
  kueue_fit_mode mode;
  bool no_candidates = false;
  amount earlier = 0;  // what earlier pod sets of the workload put in the same (flavor, resource)
};

/// A reason's numbers are int64: a Kueue amount beyond that range (a usage
/// above 2^63 base units, possible only under quotas beyond int64) is given
/// there as the nearest int64, and exactly in the reason's message.
[[nodiscard]] inline std::int64_t kueue_reason_amount(kueue_amount v) noexcept {
  constexpr auto hi = static_cast<kueue_amount>(std::numeric_limits<std::int64_t>::max());
  constexpr auto lo = static_cast<kueue_amount>(std::numeric_limits<std::int64_t>::min());
  return static_cast<std::int64_t>(v > hi ? hi : v < lo ? lo : v);
}
/// format_amount for Kueue amounts; one beyond int64 is written in base units.
[[nodiscard]] inline std::string kueue_format_amount(kueue_amount v, int scale) {
  if (v == static_cast<kueue_amount>(kueue_reason_amount(v))) return format_amount(static_cast<std::int64_t>(v), scale);
  return quota::detail::int128_to_string(v) + " base units";
}

/// Kueue's finer modes of a flavor, worst to best: no fit, preemption without
/// candidates, preemption inside the ClusterQueue, reclaim, fit.
enum class kueue_rank : std::uint8_t { no_fit, no_candidates, preempt, reclaim, fit };
[[nodiscard]] inline kueue_fit_mode kueue_mode_of(kueue_rank r) noexcept {
  return r == kueue_rank::fit      ? kueue_fit_mode::fit
         : r == kueue_rank::no_fit ? kueue_fit_mode::no_fit
                                   : kueue_fit_mode::preempt;
}

/// Kueue's granular mode of a resource or flavor: the mode and the
/// borrowing level it comes with.
struct kueue_granular {
  kueue_rank rank = kueue_rank::fit;
  std::int32_t level = 0;
};
/// Kueue's isPreferred: is `a` better than `b` under `pref`? No fit is worst;
/// no candidates is below every other mode; then BorrowingOverPreemption
/// (also when unset) compares the mode first and the lower borrowing level
/// second, PreemptionOverBorrowing the level first and the mode second.
[[nodiscard]] inline bool kueue_preferred(kueue_granular a, kueue_granular b,
                                          std::optional<kueue_fungibility_preference> pref) noexcept {
  if (a.rank == kueue_rank::no_fit) return false;
  if (b.rank == kueue_rank::no_fit) return true;
  const bool an = a.rank == kueue_rank::no_candidates, bn = b.rank == kueue_rank::no_candidates;
  if (an != bn) return !an;
  if (pref == kueue_fungibility_preference::preemption_over_borrowing) {
    if (a.level != b.level) return a.level < b.level;
    return a.rank > b.rank;
  }
  if (a.rank != b.rank) return a.rank > b.rank;
  return a.level < b.level;
}
/// Kueue's shouldTryNextFlavor for a flavor's representative mode.
[[nodiscard]] inline bool kueue_should_try_next(kueue_granular g, const kueue_flavor_fungibility& ff) noexcept {
  if (g.rank == kueue_rank::no_fit || g.rank == kueue_rank::no_candidates) return true;
  if (g.rank != kueue_rank::fit && ff.when_can_preempt == kueue_fungibility_action::try_next_flavor) return true;
  if (g.level > 0 && ff.when_can_borrow == kueue_fungibility_action::try_next_flavor) return true;
  return false;
}
}  // namespace detail

/// Assigns flavors to every pod set of `wl` in ClusterQueue `cq`.
/// `counts` (optional, one per pod set) overrides the pod-set counts.
/// `reg` names resources in reasons. Throws overflow_error only for request
/// totals beyond int64.
class kueue_flavor_assigner {
 public:
  explicit kueue_flavor_assigner(const kueue_cohort_forest& f, const resource_registry& reg) : f_(&f), reg_(&reg) {}
  /// With an oracle, a flavor that needs preemption where preemption finds no
  /// candidates ranks below one where it finds some, and the search goes on
  /// to the next flavor whatever whenCanPreempt says; reclaim ranks above
  /// preemption inside the ClusterQueue (Kueue's flavor assigner). Without
  /// one, every flavor that needs preemption is taken as preemptible.
  void set_oracle(const kueue_preemption_oracle* o) noexcept { oracle_ = o; }

  /// `usage`: the usage table to assign against (the layout of
  /// cohort_forest::usage_table()); default: the forest's own.
  void assign(kueue_node_index cq, const kueue_workload& wl, kueue_flavor_assignment& out,
              const std::int32_t* counts = nullptr, const kueue_amount* usage = nullptr) const {
    out.clear();
    out.cluster_queue = cq;
    // the kept notes serve one call at a time; a concurrent call (checks may
    // run concurrently) notes into its own vector
    std::vector<detail::kueue_flavor_note> own;
    const scratch_use use(scratch_);
    auto& notes = use.owned ? scratch_.notes : own;
    notes.clear();
    const auto& spec = f_->cluster_queue(cq);
    const kueue_amount* live = usage ? usage : f_->usage_table().data();
    out.pod_sets.resize(wl.pod_sets.size());
    for (std::size_t p = 0; p < wl.pod_sets.size(); ++p) {
      const auto& ps = wl.pod_sets[p];
      const std::int32_t count = counts ? counts[p] : ps.count;
      auto& pa = out.pod_sets[p];
      pa.resources.clear();
      pa.count = count;
      pa.mode = kueue_fit_mode::fit;
      // each requested resource must be covered by a group
      for (const auto& e : ps.per_pod) {
        if (e.value == 0) continue;
        if (!f_->group_of(cq, e.id)) {
          pa.mode = kueue_fit_mode::no_fit;
          add_reason(out, reason{kueue_model_name, "resource_not_covered", spec.name, e.id, rn(e.id),
                                 quota::detail::checked_mul<amount>(e.value, count), 0, 0,
                                 "resource is not covered by any resource group of the ClusterQueue"});
        }
      }
      for (std::size_t g = 0; g < spec.resource_groups.size(); ++g) {
        const auto& grp = spec.resource_groups[g];
        bool any = false;
        for (auto r : grp.covered_resources) any = any || ps.per_pod.get(r) != 0;
        if (!any) continue;
        assign_group(cq, spec, g, wl, ps, count, pa, out, live, notes);
      }
      if (static_cast<int>(pa.mode) < static_cast<int>(out.mode)) out.mode = pa.mode;
    }
    if (out.mode != kueue_fit_mode::fit) render_notes(out, spec.name, live, notes);
  }

  /// Partial admission with Kueue's pod-set reducer: when the workload does
  /// not fit and some pod set has minCount < count, find the largest counts
  /// that fit (see pod_set_search); `counts_out` receives them. Returns false
  /// when no reduction fits (out then holds the full-count attempt).
  bool assign_partial(kueue_node_index cq, const kueue_workload& wl, kueue_flavor_assignment& out,
                      std::vector<std::int32_t>& counts_out) const {
    counts_out.clear();
    for (const auto& ps : wl.pod_sets) counts_out.push_back(ps.count);
    assign(cq, wl, out);
    if (out.mode == kueue_fit_mode::fit) return true;
    kueue_flavor_assignment tmp;
    std::vector<std::int32_t> found;
    if (!pod_set_search(wl, found, [&](const std::vector<std::int32_t>& c) {
          assign(cq, wl, tmp, c.data());
          return tmp.mode == kueue_fit_mode::fit;
        }))
      return false;
    counts_out = found;
    assign(cq, wl, out, counts_out.data());
    return true;
  }

  /// Kueue's PodSetReducer. delta_i = count_i - minCount_i (0 without
  /// minCount), total = sum of deltas; step k in [0, total] gives counts
  /// count_i - floor(delta_i * k / total). A binary search (Go's sort.Search
  /// over [0, total]) finds the smallest step for which `fits(counts)` holds,
  /// i.e. the largest counts; `counts_out` gets that step's counts. False when
  /// total is 0 or no step tried fits. Like Kueue it assumes that fitting is
  /// monotone in the step.
  template <class Fits>
  static bool pod_set_search(const kueue_workload& wl, std::vector<std::int32_t>& counts_out, Fits&& fits) {
    std::int64_t total = 0;
    for (const auto& ps : wl.pod_sets) total += ps.count - ps.min_count.value_or(ps.count);
    if (total <= 0) return false;
    std::vector<std::int32_t> c(wl.pod_sets.size());
    auto counts_for = [&](std::int64_t k) {
      for (std::size_t i = 0; i < wl.pod_sets.size(); ++i) {
        const auto& ps = wl.pod_sets[i];
        const std::int64_t delta = ps.count - ps.min_count.value_or(ps.count);
        c[i] = static_cast<std::int32_t>(ps.count - delta * k / total);
      }
    };
    std::int64_t lo = 0, hi = total + 1, good = -1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      counts_for(mid);
      if (fits(static_cast<const std::vector<std::int32_t>&>(c))) {
        hi = mid;
        good = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (good < 0 || good != lo) return false;
    counts_for(good);
    counts_out = c;
    return true;
  }

 private:
  [[nodiscard]] std::string_view rn(resource_id r) const {
    try {
      return reg_->name(r);
    } catch (const error&) {
      return {};
    }
  }
  static void add_reason(kueue_flavor_assignment& out, reason r) { out.reasons.push_back(std::move(r)); }

  void assign_group(kueue_node_index cq, const kueue_cluster_queue_spec& spec, std::size_t g, const kueue_workload& wl,
                    const kueue_pod_set& ps, std::int32_t count, kueue_pod_set_assignment& pa,
                    kueue_flavor_assignment& out, const kueue_amount* live,
                    std::vector<detail::kueue_flavor_note>& notes) const {
    using detail::kueue_granular;
    using detail::kueue_rank;
    const auto& grp = spec.resource_groups[g];
    const auto& flavors = f_->group_flavors(cq, g);
    const auto pref = spec.fungibility.preference;
    kueue_granular best_mode_g{kueue_rank::no_fit, std::numeric_limits<std::int32_t>::max()};
    bool best_borrow = false;
    std::int32_t best_level = 0;
    kueue_flavor_index best = kueue_no_flavor;
    for (const auto fl : flavors) {
      kueue_granular rep{};  // the flavor's representative (worst) mode
      bool borrow = false;
      std::int32_t level = 0;  // the highest borrowing level of its resources
      for (auto r : grp.covered_resources) {
        std::int32_t lv = 0;
        const amount per = ps.per_pod.get(r);
        if (per == 0) continue;
        const amount req = quota::detail::checked_mul<amount>(per, count);
        const kueue_fr_slot s = f_->slot(fl, r);
        const amount val = quota::detail::checked_add(req, out.usage_of(s));
        const kueue_amount pot = f_->potential_available(cq, s);
        const kueue_amount avail = f_->available_in(live, cq, s);
        kueue_rank rm;
        if (val > pot) {
          rm = kueue_rank::no_fit;
        } else if (val <= avail) {
          rm = kueue_rank::fit;
        } else if (val <= f_->nominal(cq, s) || f_->may_reclaim_in_hierarchy_in(live, cq, s, val) ||
                   spec.preemption.borrow_within_cohort != kueue_borrow_within_cohort_policy::never ||
                   (spec.fair_sharing &&
                    spec.preemption.reclaim_within_cohort != kueue_reclaim_within_cohort_policy::never)) {
          rm = kueue_rank::preempt;
          if (oracle_) {
            const kueue_preemption_outlook o = oracle_->simulate(cq, wl, s, val);
            switch (o.possibility) {
              case kueue_preemption_possibility::no_candidates:
                rm = kueue_rank::no_candidates;
                break;
              case kueue_preemption_possibility::preempt:
                rm = kueue_rank::preempt;
                break;
              case kueue_preemption_possibility::reclaim:
                rm = kueue_rank::reclaim;
                break;
            }
            lv = o.borrow_level;
          }
        } else {
          rm = kueue_rank::no_fit;
        }
        if (f_->usage_in(live, cq, s) + val > f_->subtree_quota(cq, s)) borrow = true;
        if (rm == kueue_rank::fit) lv = f_->borrow_height_in(live, cq, s, val);
        if (rm != kueue_rank::fit)
          notes.push_back(
              {fl, r, val, avail, pot, detail::kueue_mode_of(rm), rm == kueue_rank::no_candidates, out.usage_of(s)});
        level = std::max(level, lv);
        // Kueue: the representative mode is the worst by the preference's order
        if (detail::kueue_preferred(rep, {rm, lv}, pref)) rep = {rm, lv};
      }
      // Kueue: a flavor where the search may stop is taken even when an
      // earlier one was better; otherwise the better one (kueue_preferred) is
      // kept, the earlier at a tie. No fit and no candidates never stop it.
      const bool stop = !detail::kueue_should_try_next(rep, spec.fungibility);
      if (stop || best == kueue_no_flavor || detail::kueue_preferred(rep, best_mode_g, pref)) {
        best = fl;
        best_mode_g = rep;
        best_borrow = borrow;
        best_level = level;
      }
      if (stop) break;
    }
    const kueue_fit_mode best_mode = detail::kueue_mode_of(best_mode_g.rank);
    // record the chosen flavor for every requested resource of the group
    for (auto r : grp.covered_resources) {
      const amount per = ps.per_pod.get(r);
      if (per == 0) continue;
      const amount req = quota::detail::checked_mul<amount>(per, count);
      const kueue_fr_slot s = f_->slot(best, r);
      kueue_resource_assignment ra;
      ra.resource = r;
      ra.flavor = best;
      ra.slot = s;
      ra.request = req;
      ra.mode = best_mode;
      bool merged = false;
      for (auto& [k, v] : out.usage)
        if (k == s) {
          v = quota::detail::checked_add(v, req);
          merged = true;
        }
      if (!merged) out.usage.emplace_back(s, req);
      const amount total = out.usage_of(s);
      ra.borrow = std::max<kueue_amount>(0, f_->usage_in(live, cq, s) + total - f_->subtree_quota(cq, s));
      pa.resources.push_back(ra);
    }
    if (best_borrow) out.borrowing = true;
    out.borrow_level = std::max(out.borrow_level, best_level);
    if (static_cast<int>(best_mode) < static_cast<int>(pa.mode)) pa.mode = best_mode;
  }

  // One reason per (flavor, resource) that did not fit, with what Kueue's
  // condition says. Above the maximum capacity: limit = that capacity;
  // otherwise: limit = what is unused, so requested - limit is how much more
  // is needed. requested: the total the workload needs in that flavor
  // (earlier pod sets included); used: the ClusterQueue's usage there.
  void render_notes(kueue_flavor_assignment& out, const std::string& cq, const kueue_amount* live,
                    const std::vector<detail::kueue_flavor_note>& notes) const {
    for (const auto& n : notes) {
      const bool above_max = n.request > n.potential;
      const auto word = [](kueue_amount v, int half) {
        const auto u = static_cast<quota::detail::uint128>(v);
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(half == 0 ? u : u >> 64));
      };
      const std::int64_t flags = (n.mode == kueue_fit_mode::no_fit ? 1 : 0) | (n.no_candidates ? 2 : 0);
      add_reason(
          out,
          reason{kueue_model_name, n.mode == kueue_fit_mode::no_fit ? "no_fit" : "needs_preemption", cq, n.resource,
                 rn(n.resource), n.request,
                 detail::kueue_reason_amount(f_->usage_in(live, out.cluster_queue, f_->slot(n.flavor, n.resource))),
                 detail::kueue_reason_amount(above_max ? n.potential : n.available),
                 reason_note(&note_text, {f_->flavor_name(n.flavor), rn(n.resource)},
                             {n.request, n.earlier, word(n.potential, 0), word(n.potential, 1), word(n.available, 0),
                              word(n.available, 1), n.resource < reg_->size() ? reg_->scale(n.resource) : 0, flags})});
    }
  }
  // The text of a reason render_notes made, as Kueue's condition says it;
  // numbers: request, earlier, potential and available (two words each),
  // the resource's scale, flags (1: no fit, 2: no candidates).
  static void note_text(std::string& msg, const reason_note& note) {
    const auto wide = [&](std::size_t i) {
      const auto u = (static_cast<quota::detail::uint128>(static_cast<std::uint64_t>(note.number(i + 1))) << 64) |
                     static_cast<std::uint64_t>(note.number(i));
      return static_cast<kueue_amount>(u);
    };
    const auto scale = static_cast<int>(note.number(6));
    const auto q = [&](kueue_amount v) { return detail::kueue_format_amount(v, scale); };
    const kueue_amount request = note.number(0), earlier = note.number(1), potential = wide(2), available = wide(4);
    msg += (note.number(7) & 1) != 0 ? "no fit" : "needs preemption";
    msg.append(" in flavor ").append(note.name(0)).append(" for ").append(note.name(1)).append(": ");
    if (request > potential) {
      msg += q(request) + " requested";
      if (earlier != 0) msg += " (" + q(earlier) + " by earlier pod sets)";
      msg += ", more than the most this ClusterQueue can ever get, " + q(potential);
    } else {
      msg += q(request - available) + " more than is unused is needed (" + q(request) + " requested, " +
             q(std::max<kueue_amount>(0, available)) + " unused)";
    }
    if ((note.number(7) & 2) != 0) msg += ", and no workload can be preempted for it";
  }

  const kueue_cohort_forest* f_;
  const resource_registry* reg_;
  const kueue_preemption_oracle* oracle_ = nullptr;
  // The notes of the flavors that did not fit, kept between calls (their
  // capacity) and used by one call at a time. A copy starts empty.
  struct note_scratch {
    std::vector<detail::kueue_flavor_note> notes;
    std::atomic_flag busy;
    note_scratch() = default;
    note_scratch(const note_scratch&) noexcept {}
    note_scratch& operator=(const note_scratch&) noexcept { return *this; }
    ~note_scratch() = default;
  };
  struct scratch_use {
    explicit scratch_use(note_scratch& s) noexcept
        : scratch(s), owned(!s.busy.test_and_set(std::memory_order_acquire)) {}
    scratch_use(const scratch_use&) = delete;
    scratch_use& operator=(const scratch_use&) = delete;
    ~scratch_use() {
      if (owned) scratch.busy.clear(std::memory_order_release);
    }
    note_scratch& scratch;
    const bool owned;
  };
  mutable note_scratch scratch_;
};

}  // namespace quota
