// SPDX-License-Identifier: Apache-2.0
// quota/kueue.hpp — the Kueue model with state: admitted
// workloads and their usage per (flavor, resource), admission and finish,
// classical preemption (withinClusterQueue, reclaimWithinCohort,
// borrowWithinCohort) with Kueue's candidate order and minimal target set,
// queueing (StrictFIFO / BestEffortFIFO), stopped ClusterQueues, quota
// changes that keep admitted work, and the quota::policy adapter.
// Docs: docs/kueue.md
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/reserve.hpp>
#include <quota/error.hpp>
#include <quota/kueue_cohorts.hpp>
#include <quota/kueue_flavor_assignment.hpp>
#include <quota/policy.hpp>

namespace quota {

/// A workload holding quota in a ClusterQueue.
struct kueue_admitted_workload {
  std::string name;
  kueue_node_index cluster_queue = kueue_no_node;
  std::int32_t priority = 0;
  std::int64_t created = 0;
  std::uint64_t admitted_seq = 0;  // admission order (newer = larger)
  /// Quota reservation time (Kueue's QuotaReserved transition): the model
  /// clock at admission when the host sets one (set_clock), else admitted_seq.
  std::int64_t reserved_at = 0;
  /// Marked Evicted (e.g. already chosen as a preemption target) but still
  /// holding its quota: Kueue tries such workloads first.
  bool evicted = false;
  std::vector<std::pair<kueue_fr_slot, amount>> usage;
  /// "ns/name" of the LocalQueue it came through (empty: addressed to the ClusterQueue).
  std::string local_queue;
};

/// A LocalQueue's admission fair-sharing usage, exact:
///   (positive - negative) / (10^9 x weight_milli)
/// where positive and negative gather the terms weight_milli(r) x amount(r) x
/// 10^(9 - scale(r)) of each sign (a term is below 2^63 x 2^63 x 2^30 = 2^156,
/// a sum of fewer than 2^34 of them below 2^190, so 320 bits hold the sums and
/// the comparison's products with a 64-bit weight). Ordered by value, exactly.
struct kueue_afs_usage {
  quota::detail::wide_uint positive, negative;
  std::int64_t weight_milli = 1000;  // > 0

  /// The usage v, a whole number (for comparisons with a known value).
  [[nodiscard]] static kueue_afs_usage of(std::int64_t v) noexcept {
    kueue_afs_usage u;  // v x 10^9 x 1000 / (10^9 x 1000); |v| x 10^12 < 2^103
    (v < 0 ? u.negative : u.positive) =
        quota::detail::wide_uint::from(quota::detail::magnitude(v) * 1'000'000'000'000ULL);
    return u;
  }

  /// The value as a double (rounded; for display).
  [[nodiscard]] double to_double() const noexcept {
    return (positive.to_double() - negative.to_double()) / 1e9 / static_cast<double>(weight_milli);
  }
  friend bool operator==(const kueue_afs_usage& a, const kueue_afs_usage& b) { return (a <=> b) == 0; }
  /// (pa - na) / wa <=> (pb - nb) / wb, with wa, wb > 0: pa wb + nb wa <=> pb wa + na wb.
  friend std::strong_ordering operator<=>(const kueue_afs_usage& a, const kueue_afs_usage& b) {
    const auto wa = static_cast<std::uint64_t>(a.weight_milli), wb = static_cast<std::uint64_t>(b.weight_milli);
    return a.positive.times(wb).plus(b.negative.times(wa)) <=> b.positive.times(wa).plus(a.negative.times(wb));
  }
};

/// Admission fair sharing: the usage history of one LocalQueue.
struct kueue_local_queue_usage {
  kueue_node_index cluster_queue = kueue_no_node;
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
struct kueue_preemption_target {
  std::string name;
  kueue_node_index cluster_queue = kueue_no_node;
  /// "withinClusterQueue", "reclaimWithinCohort" or "borrowWithinCohort"
  /// (classical), or the fair-sharing strategy.
  std::string_view rule;
  /// Kueue's preemption reason: "InClusterQueue", "InCohortReclamation",
  /// "InCohortReclaimWhileBorrowing" or "InCohortFairSharing".
  std::string_view reason;
  friend bool operator==(const kueue_preemption_target&, const kueue_preemption_target&) = default;
};

/// Fair-sharing preemption strategies (Kueue's fairSharing.preemptionStrategies).
enum class kueue_fair_preemption_strategy {
  /// the preemptor's share after admission <= the target's share after preemption
  less_than_or_equal_to_final_share,
  /// the preemptor's share after admission < the target's share before preemption
  less_than_initial_share
};

/// What happens to admitted work when a quota is lowered below usage.
enum class kueue_shrink_policy {
  keep,              // Kueue: admitted workloads keep running (default)
  evict_after_grace  // ours: workloads above the new quota become eviction candidates after a grace period
};

/// One admission attempt as Kueue's scheduler makes it (see kueue_model::attempt).
struct kueue_admission_attempt {
  /// The assignment chosen: full counts, or reduced counts (partial admission).
  kueue_flavor_assignment assignment;
  /// Preemption targets that make room for `assignment` (mode Preempt).
  std::vector<kueue_preemption_target> targets;
  /// Pod-set counts of `assignment`.
  std::vector<std::int32_t> counts;
  /// The counts are below the full counts.
  bool reduced = false;
  [[nodiscard]] bool fits() const noexcept { return assignment.mode == kueue_fit_mode::fit; }
  [[nodiscard]] bool preempts() const noexcept {
    return assignment.mode == kueue_fit_mode::preempt && !targets.empty();
  }
};

/// `Tag` has no meaning: the bodies of a class template compile only where
/// they are used, which keeps this header cheap to include
/// (docs/performance.md#include-cost).
template <class Tag = void>
class basic_kueue_model {
 public:
  /// The admitted workloads by name (looked up by string_view).
  using admitted_map =
      std::unordered_map<std::string, kueue_admitted_workload, quota::detail::string_hash, std::equal_to<>>;
  /// The usage histories of LocalQueues by "ns/name" (looked up by string_view).
  using local_queue_usage_map =
      std::unordered_map<std::string, kueue_local_queue_usage, quota::detail::string_hash, std::equal_to<>>;

  basic_kueue_model(const kueue_config& cfg, resource_registry reg)
      : reg_(std::move(reg)), forest_(cfg, reg_), assigner_(forest_, reg_), oracle_(*this) {
    assigner_.set_oracle(&oracle_);
    afs_ = afs_states(forest_, {});
    if (cfg.namespaces) {
      ns_.emplace();
      for (const auto& n : *cfg.namespaces) (*ns_)[n.name] = n.labels;
    }
  }
  /// A deep copy (the flavor assigner is re-bound to the copy's own forest).
  basic_kueue_model(const basic_kueue_model& o)
      : reg_(o.reg_),
        forest_(o.forest_),
        assigner_(forest_, reg_),
        oracle_(*this),
        admitted_(o.admitted_),
        version_(o.version_),
        seq_(o.seq_),
        afs_(o.afs_),
        ns_(o.ns_),
        clock_(o.clock_),
        in_cycle_(o.in_cycle_),
        holds_(o.holds_),
        cycle_seen_(o.cycle_seen_),
        held_usage_(o.held_usage_) {
    assigner_.set_oracle(&oracle_);
    admitted_by_cq_ = index_by_cluster_queue(admitted_, forest_.cluster_queue_count());
  }
  basic_kueue_model& operator=(const basic_kueue_model&) = delete;
  /// Every admitted workload, by name.
  [[nodiscard]] const admitted_map& admitted() const noexcept { return admitted_; }
  /// Changes whenever the state changes (an admission, a finish, a quota
  /// change, a namespace, the clock, an eviction mark, a usage sample, a
  /// scheduling cycle's start, end or hold): a result computed from the state
  /// (e.g. an attempt) is still the answer while this stays the same.
  [[nodiscard]] std::uint64_t state_version() const noexcept { return version_; }

  [[nodiscard]] const kueue_cohort_forest& forest() const noexcept { return forest_; }
  [[nodiscard]] const resource_registry& registry() const noexcept { return reg_; }
  [[nodiscard]] const kueue_flavor_assigner& assigner() const noexcept { return assigner_; }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_.size(); }
  [[nodiscard]] const kueue_admitted_workload* find_admitted(std::string_view name) const {
    auto it = admitted_.find(name);
    return it == admitted_.end() ? nullptr : &it->second;
  }

  /// The ClusterQueue of a workload: LocalQueue (ns, queue) first, then a
  /// ClusterQueue of that name. Unknown -> unknown_entity_error (302).
  [[nodiscard]] kueue_node_index resolve_queue(std::string_view ns, std::string_view queue) const {
    if (auto cq = forest_.find_local_queue(ns, queue)) return *cq;
    if (auto cq = forest_.find_cluster_queue(queue)) return *cq;
    throw unknown_entity_error(error_id::unknown_queue, "LocalQueue", std::string(ns) + "/" + std::string(queue));
  }

  /// Bad input: a negative pod count or per-pod amount -> validation_error
  /// naming the workload (check, attempt, admit and schedule call it first).
  static void validate(const kueue_workload& wl) {
    for (const auto& ps : wl.pod_sets) {
      if (ps.count < 0 || (ps.min_count && *ps.min_count < 0))
        throw validation_error("Workload/" + wl.name + ".podSets[" + ps.name + "].count", "must not be negative");
      if (ps.per_pod.any_negative())
        throw validation_error("Workload/" + wl.name + ".podSets[" + ps.name + "].requests", "must not be negative");
    }
  }

  /// Flavor assignment of `wl` against the current usage (no state change).
  void assign(const kueue_workload& wl, kueue_flavor_assignment& out) const {
    assigner_.assign(resolve_queue(wl.ns, wl.queue), wl, out);
  }

  /// Would `wl` be admitted now without preemption?
  [[nodiscard]] decision check(const kueue_workload& wl) const {
    kueue_flavor_assignment a;
    return check(wl, a);
  }
  [[nodiscard]] decision check(const kueue_workload& wl, kueue_flavor_assignment& a) const {
    validate(wl);
    const kueue_node_index cq = resolve_queue(wl.ns, wl.queue);
    const auto& spec = forest_.cluster_queue(cq);
    if (auto d = gate(wl, cq)) return *d;
    assigner_.assign(cq, wl, a, nullptr, cycle_table(cq));
    if (a.mode == kueue_fit_mode::fit) return decision::allow();
    decision d;
    for (const auto& r : a.reasons) d.add(r);
    if (d.allowed()) d.add(reason{kueue_model_name, "no_fit", spec.name, no_resource, {}, 0, 0, 0, {}});
    return d;
  }

 private:
  /// The checks before flavor assignment (Kueue's order): a stopped
  /// ClusterQueue, the namespace (unknown / not matching namespaceSelector),
  /// a workload admitted already. nullopt: none denies.
  [[nodiscard]] std::optional<decision> gate(const kueue_workload& wl, kueue_node_index cq) const {
    const auto& spec = forest_.cluster_queue(cq);
    if (spec.stop != kueue_stop_policy::none)
      return decision::deny(reason{kueue_model_name,
                                   "cluster_queue_stopped",
                                   spec.name,
                                   no_resource,
                                   {},
                                   0,
                                   0,
                                   0,
                                   "stopPolicy forbids new admissions"});
    if (ns_) {
      auto it = ns_->find(wl.ns);
      if (it == ns_->end())
        return decision::deny(reason{kueue_model_name,
                                     "namespace_not_found",
                                     spec.name,
                                     no_resource,
                                     {},
                                     0,
                                     0,
                                     0,
                                     reason_note("workload namespace \"$0\" does not exist", {wl.ns})});
      if (!spec.namespace_selector || !spec.namespace_selector->matches(it->second))
        return decision::deny(
            reason{kueue_model_name,
                   "namespace_mismatch",
                   spec.name,
                   no_resource,
                   {},
                   0,
                   0,
                   0,
                   reason_note("workload namespace \"$0\" doesn't match ClusterQueue selector", {wl.ns})});
    }
    if (admitted_.count(wl.name))
      return decision::deny(reason{kueue_model_name, "already_admitted", wl.name, no_resource, {}, 0, 0, 0, {}});
    return std::nullopt;
  }
  [[nodiscard]] decision attempt_decision(const kueue_admission_attempt& at) const {
    if (at.fits()) return decision::allow();
    decision d;
    for (const auto& r : at.assignment.reasons) d.add(r);
    if (d.allowed())
      d.add(reason{kueue_model_name,
                   "no_fit",
                   forest_.cluster_queue(at.assignment.cluster_queue).name,
                   no_resource,
                   {},
                   0,
                   0,
                   0,
                   {}});
    return d;
  }

 public:
  /// Admits `wl` with assignment `a` (which must be a fit, computed on the
  /// current state). Duplicate -> state_error 502; not a fit -> state_error
  /// 501; overflow -> overflow_error. Strong guarantee.
  void admit(const kueue_workload& wl, const kueue_flavor_assignment& a) {
    validate(wl);
    if (admitted_.count(wl.name))
      throw state_error(error_id::state_duplicate, "workload '" + wl.name + "' is already admitted");
    if (a.mode != kueue_fit_mode::fit || a.cluster_queue == kueue_no_node)
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
    ++version_;
    // through a LocalQueue: its "ns/name" is recorded (and its usage history charged)
    const bool via_local_queue = forest_.find_local_queue(wl.ns, wl.queue).has_value();
    const auto local_queue_key = [&](std::string& k) {
      k.clear();
      if (!via_local_queue) return;
      k.append(wl.ns).push_back('/');
      k.append(wl.queue);
    };
    // admission fair sharing: the entry penalty (request x decay rate of one sampling interval)
    kueue_local_queue_usage* lq_state = nullptr;
    resource_vector penalty;
    if (via_local_queue && afs_enabled(a.cluster_queue)) {
      local_queue_key(lq_key_);
      if (auto it = afs_.find(std::string_view(lq_key_)); it != afs_.end()) {
        lq_state = &it->second;
        const auto& c = *forest_.config().admission_fair_sharing;
        const double alpha = detail::kueue_alpha(c.sampling_interval_ms, c.half_life_ms);
        penalty = lq_state->penalty;
        for (const auto& [s, v] : a.usage) {
          const resource_id r = forest_.slot_resource(s);
          penalty.set(r, quota::detail::checked_add(penalty.get(r), detail::kueue_scale_round(v, alpha)));
        }
      }
    }
    const auto fill = [&](kueue_admitted_workload& w) {
      w.name = wl.name;
      w.cluster_queue = a.cluster_queue;
      w.priority = wl.priority;
      w.created = wl.created;
      w.admitted_seq = seq_ + 1;
      w.reserved_at = clock_ ? *clock_ : static_cast<std::int64_t>(seq_ + 1);
      w.evicted = false;
      w.usage.assign(a.usage.begin(), a.usage.end());
      local_queue_key(w.local_queue);
    };
    // room in the ClusterQueue's list first: the push below cannot throw
    if (admitted_by_cq_.size() < forest_.cluster_queue_count()) admitted_by_cq_.resize(forest_.cluster_queue_count());
    auto& listed = admitted_by_cq_[a.cluster_queue];
    detail::reserve_more(listed, 1);
    admitted_map::iterator it;
    if (spare_.empty()) {
      it = admitted_.try_emplace(wl.name).first;
      try {
        fill(it->second);
      } catch (...) {
        admitted_.erase(it);
        throw;
      }
    } else {  // a node a finished workload left: its strings and usage keep their capacity
      auto& n = spare_.back();
      n.key() = wl.name;
      fill(n.mapped());
      it = admitted_.insert(std::move(n)).position;
      spare_.pop_back();
    }
    ++seq_;
    listed.push_back(&it->second);
    if (in_cycle_ && a.cluster_queue < cycle_seen_.size()) cycle_seen_[a.cluster_queue] = 1;
    if (lq_state) lq_state->penalty = std::move(penalty);
    for (const auto& [s, v] : it->second.usage) forest_.add_usage(it->second.cluster_queue, s, v);
    if (!holds_.empty()) {
      try {
        for (const auto& [s, v] : it->second.usage)
          forest_.add_usage_in(held_usage_.data(), it->second.cluster_queue, s, v);
      } catch (const overflow_error&) {
        drop_holds();  // the holds are a view of this cycle: without them the state is exact
      }
    }
  }
  /// Assigns and admits if it fits; returns the decision (no change when denied).
  decision admit(const kueue_workload& wl) {
    kueue_flavor_assignment a;
    auto d = check(wl, a);
    if (d.allowed()) admit(wl, a);
    return d;
  }

  // ---- namespaces, clock, eviction marks ---------------------------------------

  /// Registers (or replaces) a namespace and its labels. From the first call
  /// on (or when the configuration lists namespaces) namespaceSelector is
  /// checked and a workload from an unknown namespace is inadmissible.
  void set_namespace(std::string name, kueue_label_selector::labels labels) {
    ++version_;
    if (!ns_) ns_.emplace();
    (*ns_)[std::move(name)] = std::move(labels);
  }
  /// Are namespaces (and so namespaceSelector) checked?
  [[nodiscard]] bool knows_namespaces() const noexcept { return ns_.has_value(); }
  /// Does the ClusterQueue's namespaceSelector admit namespace `ns`? (False
  /// for an unknown namespace; true for all when namespaces are not known.)
  [[nodiscard]] bool namespace_matches(kueue_node_index cq, std::string_view ns) const {
    if (!ns_) return true;
    auto it = ns_->find(std::string(ns));
    const auto& sel = forest_.cluster_queue(cq).namespace_selector;
    return it != ns_->end() && sel && sel->matches(it->second);
  }
  /// The model clock (host time, e.g. ms): admissions after this record it
  /// as their quota reservation time. Without a clock the admission order is
  /// the time.
  void set_clock(std::int64_t now) noexcept {
    ++version_;
    clock_ = now;
  }
  /// Marks an admitted workload Evicted (true) or not: it keeps its quota
  /// until it finishes, and preemption tries it before the others.
  void mark_evicted(std::string_view name, bool evicted = true) {
    auto it = admitted_.find(name);
    if (it == admitted_.end()) throw unknown_entity_error(error_id::unknown_job, "workload", name);
    ++version_;
    it->second.evicted = evicted;
  }

  /// Kueue's CandidatesOrdering of two preemption candidates for a preemptor
  /// in ClusterQueue `cq`; negative when x goes first. In order: Evicted
  /// first; other ClusterQueues before the preemptor's own; (admission fair
  /// sharing, same ClusterQueue, different LocalQueues) higher LocalQueue
  /// usage first; lower priority first; later quota reservation first; then
  /// by name (Kueue: by UID), so the order is total.
  [[nodiscard]] int candidate_order(const kueue_admitted_workload& x, const kueue_admitted_workload& y,
                                    kueue_node_index cq) const {
    if (x.evicted != y.evicted) return x.evicted ? -1 : 1;
    const bool xin = x.cluster_queue == cq, yin = y.cluster_queue == cq;
    if (xin != yin) return xin ? 1 : -1;
    if (x.cluster_queue == y.cluster_queue && x.local_queue != y.local_queue && afs_enabled(x.cluster_queue) &&
        find_local_queue_usage(x.local_queue) && find_local_queue_usage(y.local_queue)) {
      const auto ux = local_queue_fs_usage(x.local_queue), uy = local_queue_fs_usage(y.local_queue);
      // nullopt: a zero-weight LocalQueue, an infinite usage
      if (ux.has_value() != uy.has_value()) return ux.has_value() ? 1 : -1;
      if (ux && *ux != *uy) return *ux > *uy ? -1 : 1;
    }
    if (x.priority != y.priority) return x.priority < y.priority ? -1 : 1;
    if (x.reserved_at != y.reserved_at) return x.reserved_at > y.reserved_at ? -1 : 1;
    const int c = x.name.compare(y.name);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }

  // ---- admission fair sharing (usage history of LocalQueues) -------------------

  /// Is admission fair sharing on for this ClusterQueue (configured globally
  /// and opted in by its admissionScope)?
  [[nodiscard]] bool afs_enabled(kueue_node_index cq) const {
    return forest_.config().admission_fair_sharing.has_value() && forest_.cluster_queue(cq).admission_fair_sharing;
  }
  /// The usage history of a LocalQueue ("ns/name"), or null when unknown.
  [[nodiscard]] const kueue_local_queue_usage* find_local_queue_usage(std::string_view key) const {
    auto it = afs_.find(key);
    return it == afs_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const local_queue_usage_map& local_queue_usages() const noexcept { return afs_; }

  /// Samples the usage of every LocalQueue of a ClusterQueue with admission
  /// fair sharing at time `now_ms` (the host's clock, the same origin as 0 at
  /// construction): consumed = consumed * (1 - a) + admitted usage now * a,
  /// a = 1 - 2^(-elapsed / half-life), plus the entry penalties since the last
  /// sample, which are then cleared. A time before a LocalQueue's last sample
  /// -> state_error (out-of-order), nothing changed.
  void sample_usage(std::int64_t now_ms) {
    if (!forest_.config().admission_fair_sharing) return;
    ++version_;
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
    std::vector<std::pair<kueue_local_queue_usage*, resource_vector>> next;
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
  /// A zero-weight LocalQueue has no finite value, with usage or without
  /// (Kueue counts it as +Inf, so it goes last): nullopt.
  [[nodiscard]] std::optional<kueue_afs_usage> local_queue_fs_usage(std::string_view key) const {
    const auto* st = find_local_queue_usage(key);
    if (!st) throw unknown_entity_error(error_id::unknown_queue, "LocalQueue", key);
    const auto& c = *forest_.config().admission_fair_sharing;
    kueue_afs_usage u;
    u.weight_milli = st->weight_milli;
    // weight x amount / (1000 x 10^scale) x 1000 / weight_milli, over the common
    // denominator 10^9 x weight_milli (scales are 0..9)
    auto add = [&](const resource_vector& v) {
      for (const auto& e : v) {
        const std::int64_t w = c.weight_of(e.id);
        const quota::detail::uint128 p = quota::detail::magnitude(w) * quota::detail::magnitude(e.value);
        const auto term = quota::detail::wide_product(p, 1, quota::detail::pow10_u64[9 - reg_.scale(e.id)]);
        const bool neg = (w < 0) != (e.value < 0);
        (neg ? u.negative : u.positive) = (neg ? u.negative : u.positive).plus(term);
      }
    };
    add(st->consumed);
    add(st->penalty);
    if (st->weight_milli <= 0) return std::nullopt;
    return u;
  }

  /// Kueue's scheduler attempt (getInitialAssignments): the full counts
  /// first: a fit is taken; needing preemption, the targets are taken when
  /// there are any. Only then, when some pod set has minCount < count, the
  /// pod-set reducer (flavor_assigner::pod_set_search) searches the largest
  /// counts that fit or that preemption can make room for (targets found).
  /// So a workload that can preempt at full size is not reduced instead, and
  /// a reduced size that fits without preemption is preferred to a larger
  /// size that needs it only when the full size cannot preempt. Nothing
  /// found: the full-count assignment with no targets. The decision carries
  /// the gates of check() (stopped queue, namespaceSelector); when they deny,
  /// `out` is left empty.
  decision attempt(const kueue_workload& wl, kueue_admission_attempt& out) const {
    validate(wl);
    const kueue_node_index cq = resolve_queue(wl.ns, wl.queue);
    out.targets.clear();
    out.counts.clear();
    out.reduced = false;
    out.assignment.clear();
    if (auto d = gate(wl, cq)) return *d;
    for (const auto& ps : wl.pod_sets) out.counts.push_back(ps.count);
    const kueue_amount* table = cycle_table(cq);
    assigner_.assign(cq, wl, out.assignment, nullptr, table);
    if (out.assignment.mode == kueue_fit_mode::fit) return decision::allow();
    if (out.assignment.mode == kueue_fit_mode::preempt) {
      out.targets = targets_for(wl, out.assignment);
      if (!out.targets.empty()) return attempt_decision(out);
    }
    kueue_flavor_assignment tmp;
    std::vector<std::int32_t> found;
    const bool ok = kueue_flavor_assigner::pod_set_search(wl, found, [&](const std::vector<std::int32_t>& c) {
      assigner_.assign(cq, wl, tmp, c.data(), table);
      if (tmp.mode == kueue_fit_mode::fit) return true;
      return tmp.mode == kueue_fit_mode::preempt && !targets_for(wl, tmp).empty();
    });
    if (ok) {
      assigner_.assign(cq, wl, out.assignment, found.data(), table);
      out.counts = found;
      out.reduced = true;
      if (out.assignment.mode == kueue_fit_mode::preempt) out.targets = targets_for(wl, out.assignment);
    }
    return attempt_decision(out);
  }
  /// Kueue's preemption oracle for one (flavor, resource): the targets of
  /// preemption for `val` of slot `s` alone; none: no candidates; some in
  /// `cq` itself: preempt; all in other ClusterQueues: reclaim.
  [[nodiscard]] kueue_preemption_outlook simulate_preemption(kueue_node_index cq, const kueue_workload& wl,
                                                             kueue_fr_slot s, amount val) const {
    kueue_flavor_assignment probe;
    probe.cluster_queue = cq;
    probe.mode = kueue_fit_mode::preempt;
    probe.usage.emplace_back(s, val);
    const auto targets = targets_for(wl, probe);
    if (targets.empty())
      return {kueue_preemption_possibility::no_candidates,
              forest_.borrow_height_in(forest_.usage_table().data(), cq, s, val)};
    std::vector<kueue_amount> u = forest_.usage_table();
    bool own = false;
    for (const auto& t : targets) {
      own = own || t.cluster_queue == cq;
      for (const auto& [ts, v] : admitted_.at(t.name).usage) forest_.remove_usage_in(u.data(), t.cluster_queue, ts, v);
    }
    return {own ? kueue_preemption_possibility::preempt : kueue_preemption_possibility::reclaim,
            forest_.borrow_height_in(u.data(), cq, s, val)};
  }
  /// Preemption targets for an assignment: fair-sharing preemption when the
  /// configuration enables fair sharing, else classical.
  [[nodiscard]] std::vector<kueue_preemption_target> targets_for(const kueue_workload& wl,
                                                                 const kueue_flavor_assignment& a) const {
    return forest_.config().fair_sharing ? fair_preemption_targets(wl, a) : preemption_targets(wl, a);
  }

  // ---- scheduling cycles -------------------------------------------------------

  /// Capacity held for a denied head until its cycle ends: `amount` of slot
  /// `slot` counted as used by ClusterQueue `cluster_queue`.
  struct cycle_hold {
    kueue_node_index cluster_queue = kueue_no_node;
    kueue_fr_slot slot = kueue_no_slot;
    amount held = 0;
  };
  /// A scheduling cycle starts (what an earlier cycle held is given back).
  void begin_cycle() {
    end_cycle();
    ++version_;
    cycle_seen_.assign(forest_.cluster_queue_count(), 0);
    in_cycle_ = true;
  }
  /// The cycle is over: what it held is given back.
  void end_cycle() noexcept {
    ++version_;
    drop_holds();
    in_cycle_ = false;
  }
  /// Usage of node n in slot s as a workload of a ClusterQueue whose head the
  /// cycle has not seen is checked: with what the cycle holds.
  [[nodiscard]] kueue_amount cycle_usage(kueue_node_index n, kueue_fr_slot s) const {
    return holds_.empty() ? forest_.usage(n, s) : forest_.usage_in(held_usage_.data(), n, s);
  }
  /// Whether a workload of ClusterQueue `cq` is checked now with capacity the
  /// cycle holds in its cohort tree (its ClusterQueue's head is still to come).
  [[nodiscard]] bool checked_with_holds(kueue_node_index cq) const { return cycle_table(cq) && holds_in_tree_of(cq); }
  /// Whether the cycle holds capacity in the cohort tree of ClusterQueue `cq`.
  [[nodiscard]] bool holds_in_tree_of(kueue_node_index cq) const {
    if (holds_.empty()) return false;
    const auto top = [&](kueue_node_index n) {
      while (forest_.at(n).parent != kueue_no_node) n = forest_.at(n).parent;
      return n;
    };
    const kueue_node_index root = top(cq);
    for (const auto& h : holds_)
      if (top(h.cluster_queue) == root) return true;
    return false;
  }
  [[nodiscard]] bool in_cycle() const noexcept { return in_cycle_; }
  /// What the current cycle holds, in the order it was held.
  [[nodiscard]] const std::vector<cycle_hold>& cycle_holds() const noexcept { return holds_; }

  /// `wl`, a head of the current cycle, was not admitted. Kueue's scheduler
  /// (reserveCapacityForUnreclaimablePreempt): when its attempt needs
  /// preemption but finds no targets and its ClusterQueue cannot always
  /// reclaim (reclaimWithinCohort is not Any), the cycle counts as used by
  /// that ClusterQueue, per (flavor, resource) of the assignment: within
  /// nominal, what of the request the nominal quota still holds; when the
  /// assignment borrows, the request, capped by nominal + borrowingLimit
  /// less the queue's usage when a limit is set (never below 0). Later
  /// heads of the cycle (any ClusterQueue of the cohort) then cannot take
  /// it. Kueue's cycle has one head per ClusterQueue: only the first
  /// workload of a ClusterQueue admitted or denied in the cycle is its head
  /// (a host may offer a queue's next workload in the same pass; it holds
  /// nothing). Nothing outside a cycle, for an unknown queue, or for any
  /// other denial. Bad input -> validation_error; a hold that would
  /// overflow -> overflow_error; no change then.
  void hold_for_denied(const kueue_workload& wl) {
    if (!in_cycle_) return;
    ++version_;
    std::optional<kueue_node_index> cq = forest_.find_local_queue(wl.ns, wl.queue);
    if (!cq) cq = forest_.find_cluster_queue(wl.queue);
    if (!cq || *cq >= cycle_seen_.size() || cycle_seen_[*cq]) return;
    cycle_seen_[*cq] = 1;
    if (forest_.cluster_queue(*cq).preemption.reclaim_within_cohort == kueue_reclaim_within_cohort_policy::any) return;
    kueue_admission_attempt at;
    (void)attempt(wl, at);
    if (at.assignment.mode != kueue_fit_mode::preempt || !at.targets.empty()) return;
    const std::size_t first = holds_.size();
    for (const auto& [sl, v] : at.assignment.usage) {
      const kueue_amount used = forest_.usage(*cq, sl), nominal = forest_.nominal(*cq, sl);
      kueue_amount keep = 0;  // at most v: an int64
      if (at.assignment.borrow_level > 0) {
        keep = v;
        // each below 2^89: no overflow
        if (const auto bl = forest_.borrowing_limit(*cq, sl)) keep = std::min<kueue_amount>(v, nominal + *bl - used);
      } else {
        keep = std::min<kueue_amount>(v, nominal - used);
      }
      if (keep > 0) holds_.push_back({*cq, sl, static_cast<amount>(keep)});
    }
    if (holds_.size() == first) return;
    std::vector<kueue_amount>& u = scratch_usage_;
    if (first == 0)
      u.assign(forest_.usage_table().begin(), forest_.usage_table().end());
    else
      u.assign(held_usage_.begin(), held_usage_.end());
    try {
      for (std::size_t i = first; i < holds_.size(); ++i)
        forest_.add_usage_in(u.data(), *cq, holds_[i].slot, holds_[i].held);
    } catch (const overflow_error&) {
      holds_.resize(first);
      throw overflow_error("capacity held for workload '" + wl.name + "' does not fit in int64");
    }
    held_usage_.swap(u);
  }

  /// The workload finished or was evicted: gives its usage back. In a cycle
  /// that holds capacity, the holds end with it (the host preempts at once:
  /// putting a trial victim back must find the state it left).
  void finish(std::string_view name) {
    auto it = admitted_.find(name);
    if (it == admitted_.end()) throw unknown_entity_error(error_id::unknown_job, "workload", name);
    ++version_;
    drop_holds();
    for (const auto& [s, v] : it->second.usage) forest_.remove_usage(it->second.cluster_queue, s, v);
    unindex(it->second);
    // the node is kept for a later admission (up to spare_kept of them)
    if (spare_.size() < spare_kept && (spare_.capacity() > 0 || try_reserve_spare()))
      spare_.push_back(admitted_.extract(it));  // within the reserved capacity: no throw
    else
      admitted_.erase(it);
  }

  /// How a classical-preemption candidate may be preempted (Kueue's
  /// preemptionVariant).
  enum class preemption_variant : std::uint8_t {
    never,
    within_cluster_queue,       // same ClusterQueue as the preemptor
    hierarchical_reclaim,       // the preemptor's side of the tree holds the request
    reclaim_without_borrowing,  // only if the preemptor then does not borrow
    reclaim_while_borrowing     // borrowWithinCohort: even if the preemptor borrows
  };

  /// Kueue's classical preemption for `wl`, whose assignment `a` needs
  /// preemption. Candidates: the preemptor's own ClusterQueue (by
  /// withinClusterQueue) and, walking from its parent cohort to the root,
  /// the ClusterQueues above their quota in a needed (flavor, resource) in
  /// subtrees above their quota (by reclaimWithinCohort); a candidate is a
  /// hierarchical-reclaim candidate once the request fits in the quota of the
  /// preemptor or of a cohort below the candidate's lowest common ancestor.
  /// Each of the three lists (hierarchical, priority, own queue) is sorted by
  /// candidate_order; the Evicted ones of all three come first (in that list
  /// order), then the others. One or two runs (with / without borrowing, as
  /// Kueue chooses) remove candidates in order until the workload fits; the
  /// targets are then filled back in reverse. Empty when preemption cannot help.
  [[nodiscard]] std::vector<kueue_preemption_target> preemption_targets(const kueue_workload& wl,
                                                                        const kueue_flavor_assignment& a) const {
    std::vector<kueue_preemption_target> out;
    if (a.mode != kueue_fit_mode::preempt) return out;
    const kueue_node_index cq = a.cluster_queue;
    const auto& spec = forest_.cluster_queue(cq);
    const auto& pol = spec.preemption;
    // (flavor, resource)s needing preemption: requested where the total does not fit what is available
    std::vector<kueue_fr_slot> frs;
    for (const auto& [s, v] : a.usage)
      if (v > std::max<kueue_amount>(0, forest_.available(cq, s))) frs.push_back(s);
    if (frs.empty()) return out;
    const kueue_amount* live = forest_.usage_table().data();

    // which ClusterQueues are searched, with their lowest common ancestor and advantage
    struct visit {
      kueue_node_index lca = kueue_no_node;
      bool searched = false;
      bool advantage = false;
    };
    std::vector<visit> visits(forest_.cluster_queue_count());
    if (pol.within_cluster_queue != kueue_within_cluster_queue_policy::never) visits[cq].searched = true;
    if (forest_.at(cq).parent != kueue_no_node &&
        pol.reclaim_within_cohort != kueue_reclaim_within_cohort_policy::never) {
      std::vector<std::pair<kueue_fr_slot, amount>> remaining = a.usage;
      bool adv = quantities_fit(live, cq, remaining);
      kueue_node_index prev = kueue_no_node;
      std::vector<kueue_node_index> stack;
      for (kueue_node_index cur = forest_.at(cq).parent; cur != kueue_no_node; cur = forest_.at(cur).parent) {
        // the subtree of cur, skipping prev and subtrees within their quota
        stack.assign(1, cur);
        while (!stack.empty()) {
          const kueue_node_index n = stack.back();
          stack.pop_back();
          for (const kueue_node_index c : forest_.at(n).children) {
            if (forest_.at(c).is_cohort) {
              if (c == prev || within_nominal(live, c, frs)) continue;
              stack.push_back(c);
            } else if (c != cq && !within_nominal(live, c, frs)) {
              visits[c] = visit{cur, true, adv};
            }
          }
        }
        const bool fits_here = quantities_fit(live, cur, remaining);
        adv = adv || fits_here;
        prev = cur;
      }
    }

    struct cand {
      const kueue_admitted_workload* w;
      kueue_node_index lca;
      preemption_variant v;
      bool own;
      std::int32_t priority;
      std::int64_t reserved_at;
    };
    // six lists in Kueue's order: Evicted (hierarchical, priority, own queue), then the others
    std::array<std::vector<cand>, 6> lists;
    bool any_afs = false;  // the LocalQueue-usage criterion needs the full comparison
    for (kueue_node_index q = 0; q < forest_.cluster_queue_count() && !any_afs; ++q) any_afs = afs_enabled(q);
    for (kueue_node_index q = 0; q < visits.size() && q < admitted_by_cq_.size(); ++q) {
      const auto& vi = visits[q];
      if (!vi.searched) continue;
      for (const kueue_admitted_workload* wp : admitted_by_cq_[q]) {
        const auto& w = *wp;
        const auto v = classify(wl, w, cq, frs, vi.advantage);
        if (v == preemption_variant::never) continue;
        const std::size_t k = (v == preemption_variant::hierarchical_reclaim   ? 0
                               : v == preemption_variant::within_cluster_queue ? 2
                                                                               : 1) +
                              (w.evicted ? 0 : 3);
        lists[k].push_back({&w, vi.lca, v, w.cluster_queue == cq, w.priority, w.reserved_at});
      }
    }
    // candidate_order on the cached keys (the Evicted mark is constant within a list)
    auto before = [&](const cand& x, const cand& y) {
      if (any_afs) return candidate_order(*x.w, *y.w, cq) < 0;
      if (x.own != y.own) return !x.own;
      if (x.priority != y.priority) return x.priority < y.priority;
      if (x.reserved_at != y.reserved_at) return x.reserved_at > y.reserved_at;
      return x.w->name < y.w->name;
    };
    // Kueue sorts every list; only a prefix is usually needed, so the lists are
    // heaps and the order is produced lazily (the same sequence)
    auto heap_cmp = [&](const cand& x, const cand& y) { return before(y, x); };
    for (auto& l : lists) std::make_heap(l.begin(), l.end(), heap_cmp);
    std::vector<cand> order;
    std::size_t list_at = 0;
    auto at = [&](std::size_t i) -> const cand* {
      while (order.size() <= i) {
        while (list_at < lists.size() && lists[list_at].empty()) ++list_at;
        if (list_at == lists.size()) return nullptr;
        auto& l = lists[list_at];
        std::pop_heap(l.begin(), l.end(), heap_cmp);
        order.push_back(l.back());
        l.pop_back();
      }
      return &order[i];
    };
    const bool no_other = lists[0].empty() && lists[1].empty() && lists[3].empty() && lists[4].empty();
    const bool no_hier = lists[0].empty() && lists[3].empty();

    const bool borrow_forbidden = pol.borrow_within_cohort == kueue_borrow_within_cohort_policy::never;
    bool under_nominal = true;  // usage < nominal in every needed (flavor, resource)
    for (const auto s : frs)
      if (forest_.nominal(cq, s) <= live[static_cast<std::size_t>(cq) * forest_.slot_count() + s])
        under_nominal = false;
    std::array<bool, 2> runs{true, false};
    std::size_t nruns = 2;
    if (no_other || (borrow_forbidden && !under_nominal))
      nruns = 1;
    else if (borrow_forbidden && no_hier)
      runs = {false, true};

    std::vector<kueue_amount> u;
    std::vector<std::size_t> targets;  // indices into order
    for (std::size_t r = 0; r < nruns; ++r) {
      const bool borrow = runs[r];
      u = forest_.usage_table();
      targets.clear();
      for (std::size_t i = 0; const cand* c = at(i); ++i) {
        if (!candidate_valid(u.data(), cq, c->w->cluster_queue, c->lca, c->v, frs, borrow)) continue;
        for (const auto& [s, v] : c->w->usage) forest_.remove_usage_in(u.data(), c->w->cluster_queue, s, v);
        targets.push_back(i);
        if (!fits(u.data(), cq, a, borrow)) continue;
        // fill back in reverse; a target that is not needed is replaced by the last one (Kueue's order)
        for (std::size_t k = targets.size() - 1; k-- > 0;) {
          const auto* w = order[targets[k]].w;
          for (const auto& [s, v] : w->usage) forest_.add_usage_in(u.data(), w->cluster_queue, s, v);
          if (fits(u.data(), cq, a, borrow)) {
            targets[k] = targets.back();
            targets.pop_back();
          } else {
            for (const auto& [s, v] : w->usage) forest_.remove_usage_in(u.data(), w->cluster_queue, s, v);
          }
        }
        for (const auto t : targets) {
          const auto& c2 = order[t];
          out.push_back({c2.w->name, c2.w->cluster_queue, rule_of(c2.v), reason_of(c2.v)});
        }
        return out;
      }
    }
    return out;
  }

  /// Fair-sharing preemption (Kueue's fairPreemptions), with the preemptor's
  /// usage added to its ClusterQueue while shares are measured:
  ///
  /// * candidates: the preemptor's ClusterQueue by withinClusterQueue, and
  ///   (with a cohort and reclaimWithinCohort) every ClusterQueue of its
  ///   cohort tree that borrows in a (flavor, resource) needing preemption;
  ///   each must use one of those; sorted by candidate_order;
  /// * the ClusterQueues are visited in Kueue's target order
  ///   (fs_ordering): from the root, the child with the highest dominant
  ///   share (cohorts win ties against ClusterQueues; equal ClusterQueues by
  ///   their next candidate), pruning those that do not borrow;
  /// * first strategy: the preemptor's own ClusterQueue gives its next
  ///   candidate (InClusterQueue); when the preemptor stays within its
  ///   nominal quota in every (flavor, resource) needing preemption, any
  ///   visited ClusterQueue does (InCohortReclamation); otherwise the
  ///   ClusterQueue's candidates are tried in order against the strategy
  ///   (comparing the two sides just below their lowest common cohort): the
  ///   first that passes is taken (InCohortFairSharing) and the order is
  ///   asked again; those that fail wait for the second strategy;
  /// * second strategy (LessThanInitialShare, when two are configured): over
  ///   what the first skipped, one candidate per visited ClusterQueue;
  /// * once the preemptor fits, the targets are filled back in reverse
  ///   (Kueue's order of removal kept: a target given back is replaced by the
  ///   last one). Nothing when it never fits.
  [[nodiscard]] std::vector<kueue_preemption_target> fair_preemption_targets(
      const kueue_workload& wl, const kueue_flavor_assignment& a,
      const std::vector<kueue_fair_preemption_strategy>& strategies = {
          kueue_fair_preemption_strategy::less_than_or_equal_to_final_share,
          kueue_fair_preemption_strategy::less_than_initial_share}) const {
    std::vector<kueue_preemption_target> out;
    if (a.mode != kueue_fit_mode::preempt || strategies.empty()) return out;
    const kueue_node_index cq = a.cluster_queue;
    const auto& pol = forest_.cluster_queue(cq).preemption;
    const std::size_t ns = forest_.slot_count();
    std::vector<kueue_fr_slot> frs;
    for (const auto& [s, v] : a.usage)
      if (v > std::max<kueue_amount>(0, forest_.available(cq, s))) frs.push_back(s);
    if (frs.empty()) return out;
    const kueue_amount* live = forest_.usage_table().data();
    const kueue_node_index root = root_of(cq);
    std::vector<const kueue_admitted_workload*> cands;
    for (const auto& [name, w] : admitted_) {
      bool uses = false;
      for (const auto& [s, v] : w.usage) uses = uses || (v > 0 && std::find(frs.begin(), frs.end(), s) != frs.end());
      if (!uses) continue;
      bool ok = false;
      if (w.cluster_queue == cq) {
        ok = (pol.within_cluster_queue == kueue_within_cluster_queue_policy::lower_priority &&
              w.priority < wl.priority) ||
             (pol.within_cluster_queue == kueue_within_cluster_queue_policy::lower_or_newer_equal_priority &&
              (w.priority < wl.priority || (w.priority == wl.priority && w.created > wl.created)));
      } else if (root != kueue_no_node && root_of(w.cluster_queue) == root &&
                 is_borrowing(live, w.cluster_queue, frs)) {
        ok = pol.reclaim_within_cohort == kueue_reclaim_within_cohort_policy::any ||
             (pol.reclaim_within_cohort == kueue_reclaim_within_cohort_policy::lower_priority &&
              w.priority < wl.priority);
      }
      if (ok) cands.push_back(&w);
    }
    if (cands.empty()) return out;
    std::sort(cands.begin(), cands.end(), [&](auto* x, auto* y) { return candidate_order(*x, *y, cq) < 0; });

    std::vector<kueue_amount> u = forest_.usage_table();
    for (const auto& [s, v] : a.usage) forest_.add_usage_in(u.data(), cq, s, v);  // the preemptor, simulated
    const auto take_away = [&](std::vector<kueue_amount>& t, const kueue_admitted_workload* w) {
      for (const auto& [s, v] : w->usage) forest_.remove_usage_in(t.data(), w->cluster_queue, s, v);
    };
    const auto fits_now = [&] {
      std::vector<kueue_amount> t = u;
      for (const auto& [s, v] : a.usage) forest_.remove_usage_in(t.data(), cq, s, v);
      return fits(t.data(), cq, a, true);
    };
    bool within_nominal = true;
    for (auto s : frs) within_nominal = within_nominal && u[cq * ns + s] <= forest_.subtree_quota(cq, s);
    const auto infinite = [](const kueue_dominant_share& d) { return d.zero_weight_borrows(); };
    struct taken {
      const kueue_admitted_workload* w;
      std::string_view rule, reason;
    };
    std::vector<taken> targets;
    std::vector<const kueue_admitted_workload*> retry;
    bool fit = false;
    const auto strategy_name = [](kueue_fair_preemption_strategy st) {
      return st == kueue_fair_preemption_strategy::less_than_or_equal_to_final_share
                 ? std::string_view("LessThanOrEqualToFinalShare")
                 : std::string_view("LessThanInitialShare");
    };
    {
      fs_ordering ord(*this, u, cq, cands);
      for (kueue_node_index t = ord.next(); t != kueue_no_node && !fit; t = ord.next()) {
        if (t == cq || within_nominal) {
          const kueue_admitted_workload* w = ord.pop(t);
          take_away(u, w);
          targets.push_back(t == cq ? taken{w, "withinClusterQueue", "InClusterQueue"}
                                    : taken{w, "reclaimWithinCohort", "InCohortReclamation"});
          fit = fits_now();
          continue;
        }
        const auto [pa, pb] = below_common_ancestor(cq, t);
        const auto preemptor_new = forest_.share_in(u.data(), pa);
        const auto target_old = forest_.share_in(u.data(), pb);
        if (infinite(preemptor_new) && !infinite(target_old)) {  // no candidate here can pass
          while (ord.has_workload(t)) retry.push_back(ord.pop(t));
          continue;
        }
        while (ord.has_workload(t)) {
          const kueue_admitted_workload* w = ord.pop(t);
          std::vector<kueue_amount> after = u;
          take_away(after, w);
          const auto target_new = forest_.share_in(after.data(), pb);
          const bool passed = strategies[0] == kueue_fair_preemption_strategy::less_than_or_equal_to_final_share
                                  ? preemptor_new <= target_new
                                  : preemptor_new < target_old;
          if (!passed) {
            retry.push_back(w);
            continue;
          }
          u = std::move(after);
          targets.push_back({w, strategy_name(strategies[0]), "InCohortFairSharing"});
          fit = fits_now();
          break;
        }
      }
    }
    if (!fit && strategies.size() > 1) {
      fs_ordering ord(*this, u, cq, retry);
      for (kueue_node_index t = ord.next(); t != kueue_no_node && !fit; t = ord.next()) {
        const kueue_admitted_workload* w = ord.pop(t);
        if (t != cq) {
          const auto [pa, pb] = below_common_ancestor(cq, t);
          if (forest_.share_in(u.data(), pa) < forest_.share_in(u.data(), pb)) {
            take_away(u, w);
            targets.push_back(
                {w, strategy_name(kueue_fair_preemption_strategy::less_than_initial_share), "InCohortFairSharing"});
            fit = fits_now();
          }
        }
        ord.drop(t);
      }
    }
    if (!fit) return out;
    // fill back, without the preemptor's usage (Kueue's fillBackWorkloads)
    for (const auto& [s, v] : a.usage) forest_.remove_usage_in(u.data(), cq, s, v);
    if (targets.size() >= 2)
      for (std::size_t i = targets.size() - 1; i-- > 0;) {
        const auto* w = targets[i].w;
        for (const auto& [s, v] : w->usage) forest_.add_usage_in(u.data(), w->cluster_queue, s, v);
        if (fits(u.data(), cq, a, true)) {
          targets[i] = targets.back();
          targets.pop_back();
        } else {
          take_away(u, w);
        }
      }
    for (const auto& t : targets) out.push_back({t.w->name, t.w->cluster_queue, t.rule, t.reason});
    return out;
  }

  /// Changes quotas/structure while keeping admitted workloads and their usage
  /// (Kueue keeps admitted work when a quota is lowered). A workload whose
  /// ClusterQueue or flavor/resource disappears -> validation_error, no change.
  void update_config(const kueue_config& cfg) {
    ++version_;
    kueue_cohort_forest next(cfg, reg_);
    diagnostics diag;
    std::vector<std::pair<std::string, kueue_node_index>> moved;
    for (const auto& [name, w] : admitted_) {
      const auto& old_cq = forest_.at(w.cluster_queue).name;
      auto n = next.find_cluster_queue(old_cq);
      if (!n) {
        diag.add("Workload/" + name, "its ClusterQueue '" + old_cq + "' is removed");
        continue;
      }
      for (const auto& [s, v] : w.usage) {
        auto fl = next.find_flavor(forest_.flavor_name(forest_.slot_flavor(s)));
        if (!fl || next.slot(*fl, forest_.slot_resource(s)) == kueue_no_slot)
          diag.add("Workload/" + name, "its flavor or resource is no longer defined");
      }
      moved.emplace_back(name, *n);
    }
    diag.throw_if_any();
    admitted_map adm = admitted_;
    for (const auto& [name, n] : moved) {
      auto& w = adm.at(name);
      w.cluster_queue = n;
      for (auto& [s, v] : w.usage) {
        s = next.slot(*next.find_flavor(forest_.flavor_name(forest_.slot_flavor(s))), forest_.slot_resource(s));
        next.add_usage(n, s, v);
      }
    }
    auto afs = afs_states(next, afs_);
    auto by_cq = index_by_cluster_queue(adm, next.cluster_queue_count());  // adm's nodes move into admitted_
    forest_ = std::move(next);
    admitted_ = std::move(adm);
    admitted_by_cq_ = std::move(by_cq);
    afs_ = std::move(afs);
    holds_.clear();  // the new forest counts admitted workloads only
    cycle_seen_.assign(forest_.cluster_queue_count(), 0);
  }

  /// ClusterQueues whose usage is above what they could hold now (after a
  /// quota shrink): usage > nominal + borrowing limit, or the root above its quota.
  [[nodiscard]] std::vector<kueue_node_index> over_capacity_cluster_queues() const {
    std::vector<kueue_node_index> out;
    for (kueue_node_index cq = 0; cq < forest_.cluster_queue_count(); ++cq)
      for (kueue_fr_slot s = 0; s < forest_.slot_count(); ++s)
        if (forest_.usage(cq, s) > 0 && forest_.available(cq, s) < 0) {
          out.push_back(cq);
          break;
        }
    return out;
  }

  /// Policy shrink_policy::evict_after_grace: workloads to evict (lowest
  /// priority, newest first) so that no ClusterQueue stays above capacity,
  /// returned only once `now - shrink_time >= grace`. Nothing under keep.
  [[nodiscard]] std::vector<std::string> shrink_evictions(kueue_shrink_policy p, std::int64_t shrink_time,
                                                          std::int64_t now, std::int64_t grace) const {
    std::vector<std::string> out;
    if (p == kueue_shrink_policy::keep || now - shrink_time < grace) return out;
    std::vector<kueue_amount> u = forest_.usage_table();
    std::vector<const kueue_admitted_workload*> ws;
    for (const auto& [n, w] : admitted_) ws.push_back(&w);
    std::sort(ws.begin(), ws.end(), [](auto* x, auto* y) {
      if (x->priority != y->priority) return x->priority < y->priority;
      return x->admitted_seq > y->admitted_seq;
    });
    auto over = [&](kueue_node_index cq) {
      for (kueue_fr_slot s = 0; s < forest_.slot_count(); ++s)
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
      if (forest_.cluster_queue(w.cluster_queue).stop == kueue_stop_policy::hold_and_drain) out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
  }

  /// One scheduling pass over pending workloads (Kueue's queueing): per
  /// ClusterQueue, by priority (higher first) then creation (older first);
  /// StrictFIFO: the head that does not fit blocks the rest of its queue;
  /// BestEffortFIFO: it is skipped. Each workload gets Kueue's attempt, so a
  /// workload with minCount is admitted at reduced counts when that fits and
  /// its full size cannot be had by preemption (preemption itself is the
  /// host's: see attempt). Returns the names admitted, in order.
  std::vector<std::string> schedule(const std::vector<kueue_workload>& pending) {
    std::vector<std::pair<kueue_node_index, const kueue_workload*>> order;
    order.reserve(pending.size());
    for (const auto& w : pending) {
      validate(w);  // all bad input is found before anything is admitted
      order.emplace_back(resolve_queue(w.ns, w.queue), &w);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
      if (x.second->priority != y.second->priority) return x.second->priority > y.second->priority;
      return x.second->created < y.second->created;
    });
    if (forest_.cluster_queue_count() > 0 && forest_.cluster_queue(0).fair_sharing) return schedule_fair(order);
    std::vector<std::uint8_t> blocked(forest_.cluster_queue_count(), 0);
    std::vector<std::uint8_t> done(order.size(), 0);
    std::vector<std::string> admitted;
    kueue_admission_attempt a;
    for (std::size_t i = 0; i < order.size();) {
      if (done[i]) {
        ++i;
        continue;
      }
      const kueue_node_index cq = order[i].first;
      // admission fair sharing: within the ClusterQueue, the LocalQueue with the
      // lowest usage (penalties of this pass included) goes first; then priority
      // and creation as without it
      std::size_t pick = i;
      if (afs_enabled(cq))
        for (std::size_t j = i + 1; j < order.size(); ++j)
          if (!done[j] && order[j].first == cq && afs_before(*order[j].second, *order[pick].second)) pick = j;
      done[pick] = 1;
      const kueue_workload* w = order[pick].second;
      if (blocked[cq]) continue;
      if (attempt(*w, a).allowed()) {
        admit(*w, a.assignment);
        admitted.push_back(w->name);
      } else if (forest_.cluster_queue(cq).queueing == kueue_queueing_strategy::strict_fifo) {
        blocked[cq] = 1;
      }
    }
    return admitted;
  }

  /// With fair sharing: at each step the heads of the ClusterQueues that fit
  /// compete in Kueue's fair-sharing tournament (fair_tournament); the winner
  /// is admitted and its queue's next workload becomes the head.
  std::vector<std::string> schedule_fair(const std::vector<std::pair<kueue_node_index, const kueue_workload*>>& order) {
    const std::size_t ncq = forest_.cluster_queue_count();
    std::vector<std::vector<const kueue_workload*>> queues(ncq);
    for (const auto& [cq, w] : order) queues[cq].push_back(w);
    std::vector<std::size_t> head(ncq, 0);
    std::vector<std::string> admitted;
    std::vector<kueue_admission_attempt> fas(ncq);
    std::vector<fair_head> heads;
    std::vector<kueue_node_index> head_cq;
    while (true) {
      heads.clear();
      head_cq.clear();
      for (kueue_node_index cq = 0; cq < ncq; ++cq) {
        // advance to the first head that fits (BestEffortFIFO) or stop at it (StrictFIFO)
        while (head[cq] < queues[cq].size()) {
          if (attempt(*queues[cq][head[cq]], fas[cq]).allowed()) break;
          if (forest_.cluster_queue(cq).queueing == kueue_queueing_strategy::strict_fifo)
            head[cq] = queues[cq].size();
          else
            ++head[cq];
        }
        if (head[cq] >= queues[cq].size()) continue;
        heads.push_back(fair_head{queues[cq][head[cq]], &fas[cq].assignment});
        head_cq.push_back(cq);
      }
      if (heads.empty()) break;
      const kueue_node_index best = head_cq[fair_tournament(heads)];
      const kueue_workload* w = queues[best][head[best]++];
      admit(*w, fas[best].assignment);
      admitted.push_back(w->name);
    }
    return admitted;
  }

  /// A head taking part in the fair-sharing tournament: the workload and the
  /// flavor assignment it would be admitted with now.
  struct fair_head {
    const kueue_workload* wl = nullptr;
    const kueue_flavor_assignment* assignment = nullptr;
  };
  /// Kueue's fair-sharing tournament (its scheduler's fair-sharing iterator):
  /// in every cohort, from the deepest up, the heads coming from its children
  /// (ClusterQueues, and the winners of child cohorts) meet; each is measured
  /// by the child it comes through, with its own admission added: a child
  /// that would not borrow on the flavor-resources the head requests goes
  /// first (FairSharingPrioritizeNonBorrowing, on by default), then the lower
  /// dominant resource share, then higher priority, then older; a full tie
  /// keeps the head listed first. Heads of different cohort trees (and of
  /// ClusterQueues without a cohort) never meet in Kueue, which takes the
  /// trees in no set order: here the trees' winners go by priority, then
  /// creation, then listing order. Returns the winner's index in `heads`.
  [[nodiscard]] std::size_t fair_tournament(std::span<const fair_head> heads) const {
    struct entry {
      std::vector<kueue_node_index> path;  // root ... ClusterQueue
      std::vector<kueue_amount> after;     // usage table with the head admitted
      bool alive = true;
    };
    std::vector<entry> es(heads.size());
    std::size_t depth = 0;
    for (std::size_t i = 0; i < heads.size(); ++i) {
      forest_.path_from_root(heads[i].assignment->cluster_queue, es[i].path);
      es[i].after = forest_.usage_table();
      for (const auto& [s, v] : heads[i].assignment->usage)
        forest_.add_usage_in(es[i].after.data(), heads[i].assignment->cluster_queue, s, v);
      depth = std::max(depth, es[i].path.size());
    }
    const auto later_listed_wins = [&](std::size_t x, std::size_t y) {  // x listed after y
      const kueue_workload& a = *heads[x].wl;
      const kueue_workload& b = *heads[y].wl;
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.created < b.created;
    };
    const auto wins = [&](std::size_t x, std::size_t y, std::size_t level) {
      const kueue_node_index nx = es[x].path[level], ny = es[y].path[level];
      const auto borrows = [&](std::size_t i, kueue_node_index n) {
        for (const auto& [s, v] : heads[i].assignment->usage)
          if (v > 0 && forest_.over_quota_in(es[i].after.data(), n, s)) return true;
        return false;
      };
      const bool bx = borrows(x, nx), by = borrows(y, ny);
      if (bx != by) return !bx;
      const auto sx = forest_.share_in(es[x].after.data(), nx), sy = forest_.share_in(es[y].after.data(), ny);
      if (sx != sy) return sx < sy;
      return later_listed_wins(x, y);
    };
    // cohorts from the deepest level up: one survivor per cohort
    std::vector<std::pair<kueue_node_index, std::size_t>> best;  // cohort -> surviving head
    for (std::size_t d = depth; d-- > 0;) {
      best.clear();
      for (std::size_t i = 0; i < es.size(); ++i) {
        if (!es[i].alive || es[i].path.size() <= d + 1) continue;
        const kueue_node_index cohort = es[i].path[d];
        auto it = std::find_if(best.begin(), best.end(), [&](const auto& b) { return b.first == cohort; });
        if (it == best.end()) {
          best.emplace_back(cohort, i);
        } else if (wins(i, it->second, d + 1)) {
          es[it->second].alive = false;
          it->second = i;
        } else {
          es[i].alive = false;
        }
      }
    }
    std::size_t pick = heads.size();
    for (std::size_t i = 0; i < es.size(); ++i)
      if (es[i].alive && (pick == heads.size() || later_listed_wins(i, pick))) pick = i;
    return pick;
  }

  /// Kueue's hierarchical fair-sharing comparison: is `a` (with request
  /// extra_a) to be preferred over `b`? Walks both paths from the root and
  /// compares the dominant resource shares of the first differing ancestors
  /// (lower share first).
  [[nodiscard]] bool fair_less(kueue_node_index a, kueue_node_index b) const {
    std::vector<kueue_node_index> pa, pb;
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
  [[nodiscard]] bool afs_before(const kueue_workload& x, const kueue_workload& y) const {
    auto usage = [&](const kueue_workload& w) -> std::optional<kueue_afs_usage> {
      if (!forest_.find_local_queue(w.ns, w.queue)) return kueue_afs_usage{};
      return local_queue_fs_usage(w.ns + "/" + w.queue);
    };
    const auto ux = usage(x), uy = usage(y);
    if (ux.has_value() != uy.has_value()) return ux.has_value();
    if (ux && *ux != *uy) return *ux < *uy;
    if (x.priority != y.priority) return x.priority > y.priority;
    return x.created < y.created;
  }
  /// Usage-history states for every LocalQueue of `f`, keeping those of `old` by key.
  static local_queue_usage_map afs_states(const kueue_cohort_forest& f, const local_queue_usage_map& old) {
    local_queue_usage_map out;
    for (const auto& l : f.config().local_queues) {
      const std::string key = l.ns + "/" + l.name;
      kueue_local_queue_usage st;
      if (auto it = old.find(key); it != old.end()) st = it->second;
      st.cluster_queue = *f.find_cluster_queue(l.cluster_queue);
      st.weight_milli = l.fair_weight_milli;
      out.emplace(key, std::move(st));
    }
    return out;
  }
  [[nodiscard]] kueue_node_index root_of(kueue_node_index n) const {
    if (forest_.at(n).parent == kueue_no_node) return kueue_no_node;  // no cohort
    while (forest_.at(n).parent != kueue_no_node) n = forest_.at(n).parent;
    return n;
  }
  /// The ancestors (or selves) of a and b that are children of their lowest common ancestor.
  [[nodiscard]] std::pair<kueue_node_index, kueue_node_index> below_common_ancestor(kueue_node_index a,
                                                                                    kueue_node_index b) const {
    // no allocation: lift the deeper node to the other's depth, then both together
    auto depth = [&](kueue_node_index n) {
      std::size_t d = 0;
      for (kueue_node_index cur = forest_.at(n).parent; cur != kueue_no_node; cur = forest_.at(cur).parent) ++d;
      return d;
    };
    std::size_t da = depth(a), db = depth(b);
    kueue_node_index x = a, y = b;
    kueue_node_index below_x = a, below_y = b;  // the last node before x/y on the way up
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

  /// Kueue's QuantitiesFitInQuota: does `req` fit within node n's subtree
  /// quota (usage table u)? `req` becomes what is left after n's unused
  /// guaranteed quota (what must come from n's parent).
  [[nodiscard]] bool quantities_fit(const kueue_amount* u, kueue_node_index n,
                                    std::vector<std::pair<kueue_fr_slot, amount>>& req) const {
    const std::size_t ns = forest_.slot_count();
    bool ok = true;
    for (auto& [s, v] : req) {
      const kueue_amount used = u[static_cast<std::size_t>(n) * ns + s];
      if (forest_.subtree_quota(n, s) < used + v) ok = false;
      // what is left is at most v: an int64
      v = static_cast<amount>(
          std::max<kueue_amount>(0, v - std::max<kueue_amount>(0, forest_.guaranteed(n, s) - used)));
    }
    return ok;
  }
  /// Kueue's IsWithinNominalInResources: usage <= subtree quota in every slot of frs.
  [[nodiscard]] bool within_nominal(const kueue_amount* u, kueue_node_index n,
                                    const std::vector<kueue_fr_slot>& frs) const {
    const std::size_t ns = forest_.slot_count();
    for (const auto s : frs)
      if (u[static_cast<std::size_t>(n) * ns + s] > forest_.subtree_quota(n, s)) return false;
    return true;
  }
  /// Kueue's SatisfiesPreemptionPolicy (LowerOrNewerEqualPriority: equal
  /// priority and created after the preemptor).
  template <class Policy>
  [[nodiscard]] static bool satisfies(const kueue_workload& pre, const kueue_admitted_workload& c, Policy p) {
    const bool lower = pre.priority > c.priority;
    if constexpr (std::is_same_v<Policy, kueue_within_cluster_queue_policy>) {
      if (p == kueue_within_cluster_queue_policy::lower_priority) return lower;
      if (p == kueue_within_cluster_queue_policy::lower_or_newer_equal_priority)
        return lower || (pre.priority == c.priority && pre.created < c.created);
      return false;
    } else {
      if (p == kueue_reclaim_within_cohort_policy::lower_priority) return lower;
      return p == kueue_reclaim_within_cohort_policy::any;
    }
  }
  /// Kueue's classifyPreemptionVariant.
  [[nodiscard]] preemption_variant classify(const kueue_workload& pre, const kueue_admitted_workload& c,
                                            kueue_node_index cq, const std::vector<kueue_fr_slot>& frs,
                                            bool advantage) const {
    bool uses = false;
    for (const auto& [s, v] : c.usage)
      if (std::find(frs.begin(), frs.end(), s) != frs.end()) uses = true;
    if (!uses) return preemption_variant::never;
    const auto& pol = forest_.cluster_queue(cq).preemption;
    const bool ok = c.cluster_queue == cq ? satisfies(pre, c, pol.within_cluster_queue)
                                          : satisfies(pre, c, pol.reclaim_within_cohort);
    if (!ok) return preemption_variant::never;
    if (c.cluster_queue == cq) return preemption_variant::within_cluster_queue;
    if (advantage) return preemption_variant::hierarchical_reclaim;
    if (pol.borrow_within_cohort == kueue_borrow_within_cohort_policy::never)
      return preemption_variant::reclaim_without_borrowing;
    // above the borrowing threshold: not lower priority, or above maxPriorityThreshold
    if (c.priority >= pre.priority || (pol.max_priority_threshold && c.priority > *pol.max_priority_threshold))
      return preemption_variant::reclaim_without_borrowing;
    return preemption_variant::reclaim_while_borrowing;
  }
  /// Kueue's candidateIsValid, on the usage left by the targets so far: a
  /// candidate of another ClusterQueue is skipped when the run allows
  /// borrowing and it may only be reclaimed without, or when its queue, or a
  /// cohort between it and the lowest common ancestor, is within its quota.
  [[nodiscard]] bool candidate_valid(const kueue_amount* u, kueue_node_index cq, kueue_node_index t,
                                     kueue_node_index lca, preemption_variant v, const std::vector<kueue_fr_slot>& frs,
                                     bool borrow) const {
    if (t == cq) return true;
    if (borrow && v == preemption_variant::reclaim_without_borrowing) return false;
    if (within_nominal(u, t, frs)) return false;
    for (kueue_node_index n = forest_.at(t).parent; n != kueue_no_node && n != lca; n = forest_.at(n).parent)
      if (within_nominal(u, n, frs)) return false;
    return true;
  }
  [[nodiscard]] static std::string_view rule_of(preemption_variant v) noexcept {
    switch (v) {
      case preemption_variant::within_cluster_queue:
        return "withinClusterQueue";
      case preemption_variant::reclaim_while_borrowing:
        return "borrowWithinCohort";
      default:
        return "reclaimWithinCohort";
    }
  }
  [[nodiscard]] static std::string_view reason_of(preemption_variant v) noexcept {
    switch (v) {
      case preemption_variant::within_cluster_queue:
        return "InClusterQueue";
      case preemption_variant::reclaim_while_borrowing:
        return "InCohortReclaimWhileBorrowing";
      default:
        return "InCohortReclamation";
    }
  }
  [[nodiscard]] bool is_borrowing(const kueue_amount* u, kueue_node_index cq,
                                  const std::vector<kueue_fr_slot>& frs) const {
    const std::size_t ns = forest_.slot_count();
    for (auto s : frs)
      if (u[cq * ns + s] > forest_.subtree_quota(cq, s)) return true;
    return false;
  }
  [[nodiscard]] bool fits(const kueue_amount* u, kueue_node_index cq, const kueue_flavor_assignment& a,
                          bool allow_borrowing) const {
    const std::size_t ns = forest_.slot_count();
    for (const auto& [s, v] : a.usage) {
      if (!allow_borrowing && u[cq * ns + s] + v > forest_.subtree_quota(cq, s)) return false;
      if (v > std::max<kueue_amount>(0, forest_.available_in(u, cq, s))) return false;
    }
    return true;
  }
  // Kueue's target ClusterQueue ordering for fair-sharing preemption
  // (TargetClusterQueueOrdering), over a usage table the caller keeps up to date.
  struct fs_ordering {
    fs_ordering(const basic_kueue_model& m, const std::vector<kueue_amount>& u, kueue_node_index preemptor,
                const std::vector<const kueue_admitted_workload*>& cands)
        : m_(m), u_(u), preemptor_(preemptor) {
      const std::size_t n = m.forest_.node_count();
      lists_.resize(n);
      head_.assign(n, 0);
      pruned_.assign(n, 0);
      for (const auto* c : cands) lists_[c->cluster_queue].push_back(c);
      m.forest_.path_from_root(preemptor, path_);
    }
    [[nodiscard]] bool has_workload(kueue_node_index q) const { return head_[q] < lists_[q].size(); }
    const kueue_admitted_workload* pop(kueue_node_index q) { return lists_[q][head_[q]++]; }
    void drop(kueue_node_index q) { pruned_[q] = 1; }
    // The next ClusterQueue to take a candidate from; no_node: none is left.
    kueue_node_index next() {
      if (m_.forest_.at(preemptor_).parent == kueue_no_node)
        return !pruned_[preemptor_] && has_workload(preemptor_) ? preemptor_ : kueue_no_node;
      const kueue_node_index root = path_.front();
      while (!pruned_[root])
        if (const kueue_node_index t = next_target(root); t != kueue_no_node) return t;
      return kueue_no_node;
    }

   private:
    kueue_node_index next_target(kueue_node_index cohort) {
      kueue_node_index best_cq = kueue_no_node, best_co = kueue_no_node;
      kueue_dominant_share cq_share, co_share;
      for (const kueue_node_index c : m_.forest_.at(cohort).children) {
        if (pruned_[c]) continue;
        const auto share = m_.forest_.share_in(u_.data(), c);
        if (!m_.forest_.at(c).is_cohort) {
          if ((!share.borrowing && c != preemptor_) || !has_workload(c)) {
            pruned_[c] = 1;
          } else if (best_cq == kueue_no_node || share > cq_share) {
            best_cq = c;
            cq_share = share;
          } else if (share == cq_share &&
                     m_.candidate_order(*lists_[c][head_[c]], *lists_[best_cq][head_[best_cq]], preemptor_) < 0) {
            best_cq = c;
          }
        } else if (!share.borrowing && std::find(path_.begin(), path_.end(), c) == path_.end()) {
          pruned_[c] = 1;
        } else if (best_co == kueue_no_node || share >= co_share) {
          best_co = c;
          co_share = share;
        }
      }
      if (best_cq == kueue_no_node && best_co == kueue_no_node) {
        pruned_[cohort] = 1;
        return kueue_no_node;
      }
      if (best_co != kueue_no_node && (best_cq == kueue_no_node || co_share >= cq_share)) return next_target(best_co);
      return best_cq;
    }
    const basic_kueue_model& m_;
    const std::vector<kueue_amount>& u_;
    kueue_node_index preemptor_;
    std::vector<kueue_node_index> path_;  // root ... preemptor
    std::vector<std::vector<const kueue_admitted_workload*>> lists_;
    std::vector<std::size_t> head_;
    std::vector<std::uint8_t> pruned_;
  };
  // the flavor assigner's oracle: this model's simulate_preemption
  struct model_oracle final : kueue_preemption_oracle {
    explicit model_oracle(const basic_kueue_model& m) noexcept : model(&m) {}
    [[nodiscard]] kueue_preemption_outlook simulate(kueue_node_index cq, const kueue_workload& wl, kueue_fr_slot s,
                                                    amount val) const override {
      return model->simulate_preemption(cq, wl, s, val);
    }
    const basic_kueue_model* model;
  };
  [[nodiscard]] static std::vector<std::vector<const kueue_admitted_workload*>> index_by_cluster_queue(
      const admitted_map& adm, std::size_t cluster_queues) {
    std::vector<std::vector<const kueue_admitted_workload*>> out(cluster_queues);
    for (const auto& [name, w] : adm)
      if (w.cluster_queue < out.size()) out[w.cluster_queue].push_back(&w);
    return out;
  }
  // Takes w out of its ClusterQueue's list (newest first: a trial victim put
  // back, or a job released right after its admission, is found at once).
  void unindex(const kueue_admitted_workload& w) noexcept {
    if (w.cluster_queue >= admitted_by_cq_.size()) return;
    auto& l = admitted_by_cq_[w.cluster_queue];
    for (std::size_t i = l.size(); i-- > 0;)
      if (l[i] == &w) {
        l[i] = l.back();
        l.pop_back();
        return;
      }
  }

  resource_registry reg_;
  kueue_cohort_forest forest_;
  kueue_flavor_assigner assigner_;
  model_oracle oracle_;
  admitted_map admitted_;
  // admitted_'s workloads by ClusterQueue (in no particular order), so that a
  // preemption search reads only the ClusterQueues it searches
  std::vector<std::vector<const kueue_admitted_workload*>> admitted_by_cq_;
  std::uint64_t version_ = 0;  // state_version()
  std::uint64_t seq_ = 0;
  local_queue_usage_map afs_;
  std::optional<std::unordered_map<std::string, kueue_label_selector::labels>> ns_;
  std::optional<std::int64_t> clock_;
  bool in_cycle_ = false;
  std::vector<cycle_hold> holds_;         // counted in held_usage_ until end_cycle
  std::vector<std::uint8_t> cycle_seen_;  // ClusterQueues whose head the cycle saw
  std::vector<kueue_amount> held_usage_;  // forest_'s usage plus the holds (valid while holds_ is not empty)
  std::vector<kueue_amount> scratch_usage_;
  // Nodes of finished workloads, reused by admissions (not copied: memory, not state).
  static constexpr std::size_t spare_kept = 64;
  std::vector<admitted_map::node_type> spare_;
  std::string lq_key_;  // admit's scratch

  void drop_holds() noexcept { holds_.clear(); }
  // room for the spare nodes; false (finish then erases) when there is none
  bool try_reserve_spare() noexcept {
    try {
      spare_.reserve(spare_kept);
      return true;
    } catch (...) {
      return false;
    }
  }
  // The usage table a workload of `cq` is checked against: with the cycle's
  // holds while its ClusterQueue's head is still to come in the cycle (a
  // workload after it is Kueue's next cycle, which holds nothing).
  [[nodiscard]] const kueue_amount* cycle_table(kueue_node_index cq) const noexcept {
    if (holds_.empty() || cq >= cycle_seen_.size() || cycle_seen_[cq]) return nullptr;
    return held_usage_.data();
  }
};

/// The model with its default parameters.
using kueue_model = basic_kueue_model<>;

/// quota::policy adapter. job.queue is a LocalQueue name in job.ns (or a
/// ClusterQueue name); job.request is the total of job.pods identical pods
/// (one pod set; minCount = job.min_pods when smaller); job.priority and
/// job.created_ms order preemption. Victims come from classical preemption,
/// or from fair-sharing preemption when the configuration enables fair sharing.
///
/// It owns its kueue_model (a copy of an adapter is an independent model).
/// Order (quota/capabilities.hpp): a queue per ClusterQueue; inside one,
/// higher priority then earlier creation; heads as Kueue's scheduler sorts a
/// cycle's entries: the one that does not borrow first, then higher priority,
/// then earlier creation.
/// `Tag` has no meaning: the bodies of a class template compile only where
/// they are used, which keeps this header cheap to include
/// (docs/performance.md#include-cost).
template <class Tag = void>
class basic_kueue_policy {
 public:
  explicit basic_kueue_policy(kueue_model m) : m_(std::move(m)) {}
  basic_kueue_policy(const kueue_config& cfg, resource_registry reg) : m_(cfg, std::move(reg)) {}
  /// A copy owns a copy of the model (its scratch starts empty).
  basic_kueue_policy(const basic_kueue_policy& o) : m_(o.m_) {}
  basic_kueue_policy& operator=(const basic_kueue_policy&) = delete;

  [[nodiscard]] kueue_model& model() noexcept { return m_; }
  [[nodiscard]] const kueue_model& model() const noexcept { return m_; }
  [[nodiscard]] std::string_view policy_name() const noexcept { return kueue_model_name; }

  // ---- order ----
  /// The ClusterQueue the job waits in ("" when its queue is unknown: check denies it).
  [[nodiscard]] std::string_view pending_queue(const job& j) const {
    if (auto cq = m_.forest().find_local_queue(j.ns, j.queue)) return m_.forest().at(*cq).name;
    if (auto cq = m_.forest().find_cluster_queue(j.queue)) return m_.forest().at(*cq).name;
    return {};
  }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const noexcept {
    return default_pending_order(a, b);
  }
  /// A denied head of a StrictFIFO ClusterQueue holds back the rest of it.
  [[nodiscard]] bool head_blocks_queue(const job& head) const {
    std::optional<kueue_node_index> cq = m_.forest().find_local_queue(head.ns, head.queue);
    if (!cq) cq = m_.forest().find_cluster_queue(head.queue);
    return cq && m_.forest().cluster_queue(*cq).queueing == kueue_queueing_strategy::strict_fifo;
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    const std::int32_t la = borrow_level(a), lb = borrow_level(b);
    if (la != lb) return la <=> lb;
    return default_pending_order(a, b);
  }
  /// The head to offer next. Without fair sharing: Kueue's classical order
  /// (compare_heads, the first of equals). With fair sharing: Kueue's
  /// fair-sharing tournament over the heads that have a flavor assignment
  /// now (kueue_model::fair_tournament); heads without one (unknown queue,
  /// no flavor fits even by preemption) come after them, in classical order.
  [[nodiscard]] std::size_t select_head(std::span<const job* const> heads) const {
    const bool fair = m_.forest().cluster_queue_count() > 0 && m_.forest().cluster_queue(0).fair_sharing;
    std::size_t pick = 0;
    if (fair) {
      std::vector<kueue_workload> wls;
      std::vector<kueue_flavor_assignment> fas(heads.size());
      std::vector<std::size_t> index;
      wls.reserve(heads.size());
      for (std::size_t i = 0; i < heads.size(); ++i) {
        if (pending_queue(*heads[i]).empty()) continue;
        wls.push_back(to_workload(*heads[i]));
        m_.assign(wls.back(), fas[index.size()]);
        if (fas[index.size()].mode == kueue_fit_mode::no_fit) {
          wls.pop_back();
          continue;
        }
        index.push_back(i);
      }
      if (!index.empty()) {
        std::vector<kueue_model::fair_head> fh;
        fh.reserve(index.size());
        for (std::size_t k = 0; k < index.size(); ++k) fh.push_back({&wls[k], &fas[k]});
        return index[m_.fair_tournament(fh)];
      }
    }
    for (std::size_t i = 1; i < heads.size(); ++i)
      if (std::is_lt(compare_heads(*heads[i], *heads[pick]))) pick = i;
    return pick;
  }

  [[nodiscard]] kueue_workload to_workload(const job& j) const {
    kueue_workload w;
    to_workload(j, w);
    return w;
  }
  /// The workload of `j` into `w` (its strings and pod sets keep their capacity).
  static void to_workload(const job& j, kueue_workload& w) {
    w.name = j.id;
    w.ns = j.ns;
    w.queue = j.queue;
    w.priority = j.priority;
    w.created = j.created_ms;
    const auto reset = [](kueue_pod_set& ps) {
      ps.name = "main";
      ps.count = 1;
      ps.min_count.reset();
      ps.per_pod.clear();
    };
    if (!j.pod_sets.empty()) {
      w.pod_sets.resize(j.pod_sets.size());
      for (std::size_t i = 0; i < j.pod_sets.size(); ++i) {
        const auto& p = j.pod_sets[i];
        kueue_pod_set& ps = w.pod_sets[i];
        reset(ps);
        if (!p.name.empty()) ps.name = p.name;
        ps.count = p.count;
        ps.per_pod = p.per_pod;
        if (p.min_count < p.count) ps.min_count = p.min_count;
      }
      return;
    }
    w.pod_sets.resize(1);
    kueue_pod_set& ps = w.pod_sets.front();
    reset(ps);
    bool divisible = j.pods > 0;
    for (const auto& e : j.request)
      if (divisible && e.value % j.pods != 0) divisible = false;
    if (divisible) {
      ps.count = j.pods;
      for (const auto& e : j.request) ps.per_pod.push_back(e.id, e.value / j.pods);  // ascending ids
      if (j.min_pods > 0 && j.min_pods < j.pods) ps.min_count = j.min_pods;
    } else {
      ps.per_pod = j.request;
    }
  }
  /// Kueue's attempt: full counts, else reduced down to minCount (job.min_pods).
  [[nodiscard]] decision check(const job& j) const {
    const scratch_lock lock(busy_);
    if (!lock.owned) {  // another thread uses the scratch
      kueue_admission_attempt at;
      return m_.attempt(to_workload(j), at);
    }
    prepare(j);
    if (at_valid_ && at_version_ == m_.state_version() && at_allowed_) return decision::allow();
    return fresh_attempt();
  }
  /// Partial admission (quota::partial_admission_aware): the reduced counts
  /// of Kueue's attempt, when it would admit j only with fewer pods.
  [[nodiscard]] bool partial_counts(const job& j, std::vector<std::int32_t>& counts) const {
    if (!may_run_partially(j) || pending_queue(j).empty()) return false;
    const scratch_lock lock(busy_);
    kueue_admission_attempt local;
    const kueue_admission_attempt& at = lock.owned ? attempt_of(j) : ((void)m_.attempt(to_workload(j), local), local);
    if (!at.reduced) return false;
    counts = at.counts;
    return true;
  }
  /// Admits j with Kueue's attempt: the one made for j by check (or
  /// partial_counts, victims) when neither j nor the model changed since,
  /// else a new one.
  void commit(const job& j) {
    const scratch_lock lock(busy_);
    if (!lock.owned) {
      const auto w = to_workload(j);
      kueue_admission_attempt at;
      (void)m_.attempt(w, at);
      m_.admit(w, at.assignment);
      return;
    }
    const kueue_admission_attempt& at = attempt_of(j);
    at_valid_ = false;  // the admission changes the state (and when it throws, nothing is kept)
    m_.admit(wl_, at.assignment);
  }
  void release(std::string_view id) { m_.finish(id); }

  // ---- scheduling cycles (quota::cycle_aware) ----
  void begin_cycle() { m_.begin_cycle(); }
  /// Kueue's hold for a head that must preempt but has no candidates
  /// (kueue_model::hold_for_denied).
  void head_denied(const job& j) {
    if (pending_queue(j).empty()) return;
    m_.hold_for_denied(to_workload(j));
  }
  void end_cycle() { m_.end_cycle(); }

  /// The targets of Kueue's attempt (classical, or fair sharing when the
  /// configuration enables it), possibly for reduced counts.
  /// None for a head checked with capacity the scheduling cycle holds in its
  /// cohort tree (Kueue found its targets before the hold; with the hold
  /// counted the head no longer fits and is skipped for the cycle).
  void victims(const job& j, std::vector<victim>& out) const {
    if (const auto q = pending_queue(j); !q.empty() && m_.checked_with_holds(m_.forest().cluster_queue_at(q))) return;
    const scratch_lock lock(busy_);
    kueue_admission_attempt local;
    const kueue_admission_attempt& at = lock.owned ? attempt_of(j) : ((void)m_.attempt(to_workload(j), local), local);
    for (const auto& t : at.targets)
      out.push_back(victim{t.name, kueue_model_name, t.rule, m_.forest().at(t.cluster_queue).name, t.reason});
  }

 private:
  // The borrowing level of the job's flavor assignment now (0: within nominal).
  [[nodiscard]] std::int32_t borrow_level(const job& j) const {
    if (pending_queue(j).empty()) return 0;
    const scratch_lock lock(busy_);
    if (!lock.owned) {
      kueue_flavor_assignment a;
      m_.assign(to_workload(j), a);
      return a.borrow_level;
    }
    to_workload(j, probe_wl_);
    m_.assign(probe_wl_, probe_fa_);
    return probe_fa_.borrow_level;
  }

  // The scratch below is used by one call at a time: a const call that
  // finds it taken (check, victims ... run concurrently) works on its own
  // objects instead.
  struct scratch_lock {
    explicit scratch_lock(std::atomic_flag& f) noexcept : flag(f), owned(!f.test_and_set(std::memory_order_acquire)) {}
    scratch_lock(const scratch_lock&) = delete;
    scratch_lock& operator=(const scratch_lock&) = delete;
    ~scratch_lock() {
      if (owned) flag.clear(std::memory_order_release);
    }
    std::atomic_flag& flag;
    const bool owned;
  };
  // The fields of a job its workload is made of (to_workload) that the
  // workload does not hold as they are (its name, namespace, queue, priority
  // and creation are j's own: same_source compares those with wl_).
  struct job_source {
    std::int32_t pods = 1, min_pods = 1;
    resource_vector request;
    std::vector<pod_set> pod_sets;
  };
  // Equal entries in the same order (equal vectors may differ by explicit zeros: then not the same source).
  [[nodiscard]] static bool same_entries(const resource_vector& a, const resource_vector& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  [[nodiscard]] bool same_source(const job& j) const noexcept {
    const job_source& s = src_;
    return j.priority == wl_.priority && j.created_ms == wl_.created && j.pods == s.pods && j.min_pods == s.min_pods &&
           j.id == wl_.name && j.ns == wl_.ns && j.queue == wl_.queue && same_entries(j.request, s.request) &&
           std::equal(j.pod_sets.begin(), j.pod_sets.end(), s.pod_sets.begin(), s.pod_sets.end(),
                      [](const pod_set& x, const pod_set& y) {
                        return x.count == y.count && x.min_count == y.min_count && x.name == y.name &&
                               same_entries(x.per_pod, y.per_pod);
                      });
  }
  // wl_ becomes j's workload: nothing to do when it was made from the same
  // job fields; else it is made again (and the last attempt is forgotten).
  void prepare(const job& j) const {
    if (src_valid_ && same_source(j)) return;
    src_valid_ = false;
    at_valid_ = false;
    to_workload(j, wl_);
    src_.pods = j.pods;
    src_.min_pods = j.min_pods;
    src_.request = j.request;
    src_.pod_sets = j.pod_sets;
    src_valid_ = true;
  }
  // Kueue's attempt for wl_ now, kept as the last attempt.
  decision fresh_attempt() const {
    at_valid_ = false;
    decision d = m_.attempt(wl_, at_);
    at_version_ = m_.state_version();
    at_allowed_ = d.allowed();
    at_valid_ = true;
    return d;
  }
  // Kueue's attempt for j now: the last one when it was made for the same
  // workload on the same state version. wl_ is j's workload after.
  const kueue_admission_attempt& attempt_of(const job& j) const {
    prepare(j);
    if (!at_valid_ || at_version_ != m_.state_version()) (void)fresh_attempt();
    return at_;
  }

  kueue_model m_;
  mutable std::atomic_flag busy_;  // the scratch is in use
  mutable kueue_workload wl_, probe_wl_;
  mutable job_source src_;  // what wl_ is made from (when src_valid_)
  mutable bool src_valid_ = false;
  mutable kueue_flavor_assignment probe_fa_;
  // The last attempt: Kueue's attempt for wl_, made on model state version
  // at_version_ (when at_valid_); at_allowed_: its decision allowed.
  mutable kueue_admission_attempt at_;
  mutable std::uint64_t at_version_ = 0;
  mutable bool at_valid_ = false;
  mutable bool at_allowed_ = false;
};

/// The adapter with its default parameters.
using kueue_policy = basic_kueue_policy<>;

static_assert(quota::policy<kueue_policy>);
static_assert(quota::order_aware<kueue_policy>);
static_assert(quota::cycle_aware<kueue_policy>);
static_assert(quota::partial_admission_aware<kueue_policy>);

}  // namespace quota
