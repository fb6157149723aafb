// SPDX-License-Identifier: Apache-2.0
// quota/capabilities.hpp — the optional capabilities a model may offer beside
// quota::policy (order, demand, charges, shared allocations, node-level victims,
// cycles, partial admission, the cluster's total), each detected with a
// requires-expression.
// Docs: docs/architecture.md
#pragma once

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <quota/policy.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// The model decides in which order pending jobs are offered.
///
/// * `pending_queue(j)`: the queue j waits in, by the model's rule (a Volcano
///   or KAI queue, a Kueue ClusterQueue); jobs of one queue are offered in
///   `compare_pending` order, and only a queue's head competes with the other
///   queues. An empty name: one queue for every job.
/// * `compare_pending(a, b)`: the order of two jobs of one queue (less: a goes
///   first). It must not depend on the model's usage, so a host may keep each
///   queue sorted.
/// * `compare_heads(a, b)`: the order of the heads of two different queues,
///   at the model's current state (shares, borrowing): a host asks again after
///   every admission.
///
/// An ordering model may also have `bool head_blocks_queue(const job& head)
/// const`: true when a denied head holds back the rest of its queue for the
/// pass (Kueue's StrictFIFO); without it, a denied head leaves its queue to
/// the next job (Volcano's and KAI's allocate loops, Kueue's BestEffortFIFO).
///
/// When the next head is not found by comparing two heads at a time (Kueue's
/// fair-sharing tournament measures each head at every level of the cohort
/// tree), the model also has `std::size_t select_head(std::span<const job*
/// const> heads) const`: the index of the head to offer next. Without it, the
/// next head is the first of the lowest by compare_heads.
template <class P>
concept order_aware = requires(const P& p, const job& a, const job& b) {
  { p.pending_queue(a) } -> std::convertible_to<std::string_view>;
  { p.compare_pending(a, b) } -> std::same_as<std::weak_ordering>;
  { p.compare_heads(a, b) } -> std::same_as<std::weak_ordering>;
};

/// The model follows pending demand: a job counts as demand from its
/// submission until it runs (then as allocation) and stops counting when it
/// ends or is deleted.
///
/// * `pending_added(j)`: j waits from now on (submitted, or preempted and
///   requeued). Adding an id that already waits, or that is committed,
///   changes nothing.
/// * `pending_withdrawn(id)`: the job no longer waits (deleted while pending).
///   An id that does not wait changes nothing.
/// * `commit(j)` of a waiting job moves its demand to its allocation;
///   `release(id)` ends it (a preempted job is added again by the host).
template <class P>
concept demand_aware = requires(P& p, const job& j, std::string_view id) {
  { p.pending_added(j) } -> std::same_as<void>;
  { p.pending_withdrawn(id) } -> std::same_as<void>;
};

/// The model knows scheduling cycles (a host's pass over the queues' heads)
/// and may hold capacity, for the rest of a cycle, for a head it denied.
///
/// * `begin_cycle()`: a cycle starts (nothing is held).
/// * `head_denied(j)`: j, a head offered in this cycle, was not admitted (the
///   host tried any preemption it could); the model may hold capacity for j
///   until the cycle ends, so later heads of the cycle are checked as if it
///   were in use (Kueue: a head that must preempt but has no candidates, in a
///   ClusterQueue that cannot always reclaim). Outside a cycle it changes
///   nothing.
/// * `end_cycle()`: the cycle is over; everything held is given back and the
///   model is as it would be without the cycle's denials.
///
/// A model without the capability holds nothing for denied heads.
template <class P>
concept cycle_aware = requires(P& p, const job& j) {
  { p.begin_cycle() } -> std::same_as<void>;
  { p.head_denied(j) } -> std::same_as<void>;
  { p.end_cycle() } -> std::same_as<void>;
};

/// The model has a node-level preemption rule: when the quotas allow `j` but
/// no node has room, `node_candidates(j, out)` appends the running jobs it
/// lets the host preempt for `j`, lowest importance first (nos and capacity
/// scheduling: SelectVictimsOnNode's candidates; Volcano and KAI: their
/// preempt predicates). The host takes them node by node, keeps only those on
/// one node, and reprieves the most important ones the job does not need.
template <class P>
concept node_preemption_aware = requires(const P& p, const job& j, std::vector<victim>& out) {
  { p.node_candidates(j, out) } -> std::same_as<void>;
};

/// The model may admit fewer pods than a job asks (Kueue's partial
/// admission): `partial_counts(j, counts)` returns true and sets `counts`
/// (one count per pod set of j, or one count for a job without pod sets)
/// when the model would admit j now, or after the preemption its victims
/// name, only with those smaller counts (each at least the set's minimum);
/// it returns false, leaving `counts` unspecified, when it would take j
/// whole or not at all. The engine then asks every model about j at those
/// counts (quota::reduced_job) and, when they all allow, admits that
/// smaller job; the host runs exactly the admitted counts.
template <class P>
concept partial_admission_aware = requires(const P& p, const job& j, std::vector<std::int32_t>& counts) {
  { p.partial_counts(j, counts) } -> std::same_as<bool>;
};

/// Whether j allows partial admission at all: some pod set (or the job
/// itself, without pod sets) may run fewer pods than it asks.
[[nodiscard]] inline bool may_run_partially(const job& j) noexcept {
  if (j.pod_sets.empty()) return j.min_pods < j.pods;
  for (const auto& ps : j.pod_sets)
    if (ps.min_count < ps.count) return true;
  return false;
}

/// `j` with the pod counts `counts` (one per pod set; one for a job without
/// pod sets, whose request is then scaled by counts[0] / pods), written to
/// `out`: request, pods and each set's (or the job's) minimum follow the new
/// counts. Throws validation_error when counts has the wrong size, a count is
/// outside the set's minimum..count, or (without pod sets) the request is not
/// a whole number of pods.
inline void reduced_job(const job& j, std::span<const std::int32_t> counts, job& out) {
  const std::size_t sets = j.pod_sets.empty() ? 1 : j.pod_sets.size();
  if (counts.size() != sets)
    throw validation_error("job/" + j.id + "/counts", "expected " + std::to_string(sets) + " counts");
  out = j;
  if (j.pod_sets.empty()) {
    const std::int32_t c = counts[0];
    if (c < j.min_pods || c > j.pods) throw validation_error("job/" + j.id + "/counts", "outside min_pods..pods");
    resource_vector r;
    for (const auto& e : j.request) {
      if (e.value % j.pods != 0) throw validation_error("job/" + j.id + "/request", "not a whole number of pods");
      r.set(e.id, e.value / j.pods * c);
    }
    out.request = std::move(r);
    out.pods = c;
    return;
  }
  for (std::size_t i = 0; i < sets; ++i) {
    auto& ps = out.pod_sets[i];
    if (counts[i] < ps.min_count || counts[i] > ps.count)
      throw validation_error("job/" + j.id + "/pod_sets/" + ps.name + "/count", "outside min_count..count");
    ps.count = counts[i];
  }
  total_pod_sets(out);
}

/// What one queue pays beyond its jobs' requests, before and after a change
/// (a charge model's answer). An empty `queue`: charged to no queue, taken
/// from the cluster (an orphan claim's devices).
struct queue_charge {
  std::string queue;
  resource_vector before;
  resource_vector after;
};

/// The model charges queues beyond the jobs' requests (quota::kai_claims_policy:
/// a shared claim's devices, once, to the owning queue). Each call lists only
/// the queues whose charge would change; it changes nothing.
/// * `charges_after_commit(j, out)`: what committing j would change;
/// * `charges_after_release(id, out)`: what releasing the job would change;
/// * `current_charges(out)`: every queue charged now (before: nothing).
/// Resource ids are the host's (the model shares the host's registry).
template <class P>
concept charge_aware = requires(const P& p, const job& j, std::string_view id, std::vector<queue_charge>& out) {
  { p.charges_after_commit(j, out) } -> std::same_as<void>;
  { p.charges_after_release(id, out) } -> std::same_as<void>;
  { p.current_charges(out) } -> std::same_as<void>;
};

/// The model accounts a charge model's charges in its queues: `charge_added`
/// takes a job of the paying queue (id: the charge's, request: the queue's
/// whole charge) and allocates it as a running job that is nobody's victim;
/// `charge_removed` gives it back. The engine checks an admission that
/// charges the job's own queue with the charge added to the job's request.
///
/// A receiver may also have `void capacity_deducted(const resource_vector& v)`:
/// `v` is what charges of no queue take from the cluster now (orphan claims'
/// devices), replacing the previous value; the model shrinks the capacity it
/// divides by it (KAI fair share).
template <class P>
concept charge_receiver = requires(P& p, const job& j, std::string_view id) {
  { p.charge_added(j) } -> std::same_as<void>;
  { p.charge_removed(id) } -> std::same_as<void>;
};

/// The model divides the cluster's total (Volcano's proportion and capacity
/// plugins, KAI's fair share), which upstream reads again from the nodes at
/// every session: `set_cluster_capacity(total)` gives it the sum of the
/// nodes' allocatable after nodes came or went (a KAI fair share keeps
/// deducting what charges of no queue take). It throws when the model cannot
/// take that total (quota::validation_error: e.g. guarantees that no longer
/// fit, where the model rejects them) and then changes nothing.
template <class P>
concept capacity_aware = requires(P& p, const resource_vector& total) {
  { p.set_cluster_capacity(total) } -> std::same_as<void>;
};

namespace detail {
/// Whether a charge receiver shrinks its capacity by deductions.
template <class P>
concept takes_deductions = requires(P& p, const resource_vector& v) {
  { p.capacity_deducted(v) } -> std::same_as<void>;
};
}  // namespace detail

/// Something several jobs use at once that the host allocates once, on one
/// node (a shared DRA claim's devices): `key` names it, `amount` is what it
/// takes from that node in the host's resource ids, `node` the node it is
/// bound to when the model knows (an allocated claim's node), else empty.
struct shared_allocation {
  std::string key;
  resource_vector amount;
  std::string node;
};

/// The model knows what jobs share on a node (quota::kai_claims_policy: a
/// claim's devices).
/// * `shared_allocations(j, out)`: what j uses that is shared, each once;
///   the host takes `amount` from the node of the first running holder,
///   places every later holder (all pods of it) on that node, and gives it
///   back when the last holder stops;
/// * `held_allocations(out)`: what is allocated now by holders the host does
///   not run (pods restored from a snapshot); the host takes it from `node`
///   (or the first node with room) for good.
template <class P>
concept allocation_sharing = requires(const P& p, const job& j, std::vector<shared_allocation>& out) {
  { p.shared_allocations(j, out) } -> std::same_as<void>;
  { p.held_allocations(out) } -> std::same_as<void>;
};

/// The default order of pending work when no model orders it: one queue,
/// higher priority first, then earlier creation (kube-scheduler's order).
[[nodiscard]] inline std::weak_ordering default_pending_order(const job& a, const job& b) noexcept {
  if (a.priority != b.priority) return b.priority <=> a.priority;
  return a.created_ms <=> b.created_ms;
}

namespace detail {
/// The head `m` offers next among `heads` (non-empty): its select_head, else
/// the first of the lowest by compare_heads (by the default order for a
/// model that does not order).
template <class P>
[[nodiscard]] std::size_t select_head_of(const P& m, std::span<const job* const> heads) {
  if constexpr (requires {
                  { m.select_head(heads) } -> std::convertible_to<std::size_t>;
                }) {
    return m.select_head(heads);
  } else {
    std::size_t pick = 0;
    for (std::size_t i = 1; i < heads.size(); ++i) {
      std::weak_ordering c = std::weak_ordering::equivalent;
      if constexpr (order_aware<P>)
        c = m.compare_heads(*heads[i], *heads[pick]);
      else
        c = default_pending_order(*heads[i], *heads[pick]);
      if (std::is_lt(c)) pick = i;
    }
    return pick;
  }
}
/// Whether `m` says that the denied head `j` holds back its queue.
template <class P>
[[nodiscard]] bool head_blocks_queue_of(const P& m, const job& j) {
  if constexpr (requires {
                  { m.head_blocks_queue(j) } -> std::convertible_to<bool>;
                })
    return m.head_blocks_queue(j);
  else
    return false;
}
/// Whether `m` has a capability: a type-erased holder says at run time (`ask`
/// answers for a type that can tell), any other type by its concept (`Static`).
template <bool Static, class P, class Ask>
[[nodiscard]] bool capability_of(const P& m, Ask ask) {
  if constexpr (std::is_invocable_r_v<bool, Ask, const P&>)
    return ask(m);
  else
    return Static;
}
/// Whether model `m` orders pending work (any_policy: offers_order()).
template <class P>
[[nodiscard]] bool offers_order(const P& m) {
  return capability_of<order_aware<P>>(m, [](const auto& x) -> decltype(x.offers_order()) { return x.offers_order(); });
}
/// Whether model `m` charges queues (any_policy: makes_charges()).
template <class P>
[[nodiscard]] bool makes_charges(const P& m) {
  return capability_of<charge_aware<P>>(m,
                                        [](const auto& x) -> decltype(x.makes_charges()) { return x.makes_charges(); });
}
/// Whether model `m` accounts charges (any_policy: receives_charges()).
template <class P>
[[nodiscard]] bool receives_charges(const P& m) {
  return capability_of<charge_receiver<P>>(
      m, [](const auto& x) -> decltype(x.receives_charges()) { return x.receives_charges(); });
}
/// Whether model `m` has a node-level preemption rule (any_policy: has_node_rule()).
template <class P>
[[nodiscard]] bool has_node_rule(const P& m) {
  return capability_of<node_preemption_aware<P>>(
      m, [](const auto& x) -> decltype(x.has_node_rule()) { return x.has_node_rule(); });
}
/// Whether model `m` knows shared allocations (any_policy: shares_allocations()).
template <class P>
[[nodiscard]] bool shares_allocations(const P& m) {
  return capability_of<allocation_sharing<P>>(
      m, [](const auto& x) -> decltype(x.shares_allocations()) { return x.shares_allocations(); });
}
/// Whether model `m` knows scheduling cycles (any_policy: keeps_cycles()).
template <class P>
[[nodiscard]] bool keeps_cycles(const P& m) {
  return capability_of<cycle_aware<P>>(m, [](const auto& x) -> decltype(x.keeps_cycles()) { return x.keeps_cycles(); });
}
/// Whether model `m` may admit jobs partially (any_policy: admits_partially()).
template <class P>
[[nodiscard]] bool admits_partially(const P& m) {
  return capability_of<partial_admission_aware<P>>(
      m, [](const auto& x) -> decltype(x.admits_partially()) { return x.admits_partially(); });
}
/// Whether model `m` divides the cluster's total (any_policy: divides_capacity()).
template <class P>
[[nodiscard]] bool divides_capacity(const P& m) {
  return capability_of<capacity_aware<P>>(
      m, [](const auto& x) -> decltype(x.divides_capacity()) { return x.divides_capacity(); });
}
/// Whether model `m` follows demand (any_policy: follows_demand()).
template <class P>
[[nodiscard]] bool follows_demand(const P& m) {
  return capability_of<demand_aware<P>>(
      m, [](const auto& x) -> decltype(x.follows_demand()) { return x.follows_demand(); });
}
}  // namespace detail

}  // namespace quota
