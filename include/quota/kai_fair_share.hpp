// SPDX-License-Identifier: Apache-2.0
// quota/kai_fair_share.hpp — hierarchical fair share in the KAI model: the division of
// each resource among a tree of queues, and the allocation, reclaim, preempt, queue-
// order and victim-order rules built on it.
// Docs: docs/kai-fair-share.md
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/job_queue_order.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/priority_counts.hpp>
#include <quota/detail/reserve.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/detail/stale_mark.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// -1 in quota or limit: unlimited.
inline constexpr amount kai_fair_share_unlimited = -1;

/// One resource of one queue (base units of the resource).
struct kai_fair_share_resource {
  amount quota = 0;                         ///< deserved; -1 = unlimited
  amount over_quota_weight = 0;             ///< share of the over-quota pool; 0 = none
  amount limit = kai_fair_share_unlimited;  ///< -1 = no limit; 0 = nothing
};

/// One queue as configured (a KAI Queue).
struct kai_fair_share_queue_spec {
  std::string name;
  std::string parent;  ///< empty: top-level queue
  std::int32_t priority = 100;
  std::int64_t created_ms = 0;
  /// Minimum run time that protects this queue's jobs from preemption, ms;
  /// -1 = not set here (inherited from the parent, else the default).
  std::int64_t preempt_min_runtime_ms = -1;
  std::map<resource_id, kai_fair_share_resource> resources;
};

/// What to do when the quotas of children add up to more than their parent's.
enum class kai_fair_share_oversubscription { warn, error };

/// Where the reclaimer saturation multiplier applies.
enum class kai_fair_share_saturation_placement {
  /// KAI (default): after the victims are taken, at every level of the
  /// reclaimer's path, the reclaimer's saturation (allocated + request) /
  /// fair share, when above 1, times the multiplier must stay strictly below
  /// each touched sibling's remaining saturation (KAI's
  /// isFairShareSaturationLowerPerResource).
  sibling_ratio,
  /// Earlier behaviour of this library, kept as an option: the multiplier
  /// widens can_reclaim (allocated + request <= fair share x multiplier); the
  /// sibling check then runs with multiplier 1.
  can_reclaim_bound
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view kai_fair_share_model_name = "kai_fair_share";

struct kai_fair_share_options {
  kai_fair_share_oversubscription children_exceeding_parent = kai_fair_share_oversubscription::warn;
  /// Reclaimer saturation multiplier as num/den (values < 1 are treated as 1).
  std::int64_t saturation_num = 1;
  std::int64_t saturation_den = 1;
  kai_fair_share_saturation_placement saturation_placement = kai_fair_share_saturation_placement::sibling_ratio;
  /// Historical usage factor k = num/den of KAI's time-based fair share
  /// (0 = off, the default; negative values mean 0, as in KAI). With k > 0
  /// and usage set (set_usage, set_usage_total), a queue's over-quota weight
  /// in each water-filling round becomes max(0, w/W + k (w/W - U/C)).
  std::int64_t usage_k_num = 0;
  std::int64_t usage_k_den = 1;
  /// KAI compatibility: run the remainder passes only after every priority
  /// bucket had its rounds, so the whole units a higher bucket leaves as
  /// fractions go to lower buckets first. Off by default: a queue then never
  /// gets over-quota share while a higher-priority sibling still wants more.
  bool remainder_after_all_buckets = false;
  /// Minimum runtime when no queue on the path sets one, ms.
  std::int64_t default_min_runtime_ms = 0;
  /// KAI compatibility: divide as KAI's proportion plugin does. A finite
  /// quota is granted up to the requestable demand even beyond the share being
  /// divided (only an unlimited quota is capped by it); in the over-quota
  /// rounds a queue whose share does not cover its want gets the share floored
  /// to whole units of the resource (whole_units), and each remainder pass
  /// gives min(one unit, what is left), also beyond a fractional request;
  /// the remainder passes run after all buckets (as remainder_after_all_buckets)
  /// and the saturation multiplier applies at KAI's place (sibling_ratio).
  bool upstream = false;
  /// KAI's whole unit of a resource in base units, for upstream mode: e.g.
  /// 1000 for a GPU counted in thousandths (KAI counts GPUs in devices, cpu in
  /// millicores, memory in bytes). A resource not listed: 1. Must be > 0.
  std::vector<std::pair<resource_id, amount>> whole_units;
};

/// The two reclaim strategies.
enum class kai_fair_share_strategy { none, maintain_fair_share, guarantee_deserved };

/// One victim chunk for the scenario validator.
struct kai_fair_share_victim_chunk {
  std::size_t queue;
  const resource_vector* resources;
};

namespace detail {
inline constexpr amount kai_fair_share_inf = std::numeric_limits<amount>::max();
[[nodiscard]] inline amount fair_share_cap(amount v) noexcept {
  return v < 0 ? kai_fair_share_inf : v;
}
/// Compares a/b with c/d (b, d > 0) without multiplying, by continued
/// fractions, so 128-bit terms never overflow. Returns -1, 0 or 1.
[[nodiscard]] inline int compare_ratio(uint128 a, uint128 b, uint128 c, uint128 d) noexcept {
  for (;;) {
    const uint128 qa = a / b, qc = c / d;
    if (qa != qc) return qa < qc ? -1 : 1;
    a -= qa * b, c -= qc * d;
    if (a == 0 || c == 0) return a == c ? 0 : (a == 0 ? -1 : 1);
    // a/b vs c/d with both below 1 is d/c vs b/a
    const uint128 na = d, nb = c, nc = b, nd = a;
    a = na, b = nb, c = nc, d = nd;
  }
}
}  // namespace detail

/// The queue tree, its division and its predicates.
class kai_fair_share_model {
 public:
  using queue_index = std::size_t;
  static constexpr queue_index npos = static_cast<queue_index>(-1);

  /// Validates every queue (all problems at once, validation_error) and builds the tree.
  explicit kai_fair_share_model(std::vector<kai_fair_share_queue_spec> specs, kai_fair_share_options opts = {})
      : opts_(opts) {
    diagnostics diag;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto& s = specs[i];
      if (s.name.empty()) diag.add("queues[" + std::to_string(i) + "].metadata.name", "queue name is empty");
      if (!index_.emplace(s.name, i).second) diag.add(s.name + ".metadata.name", "duplicate queue name");
      for (const auto& [rid, r] : s.resources) {
        const std::string base = s.name + ".spec.resources[" + std::to_string(rid) + "]";
        if (r.quota < -1) diag.add(base + ".quota", "negative quota other than -1");
        if (r.limit < -1) diag.add(base + ".limit", "negative limit other than -1");
        if (r.over_quota_weight < 0) diag.add(base + ".overQuotaWeight", "negative over-quota weight");
        // KAI accepts quota > limit (no check in the scheduler nor the CRD); the
        // limit then caps the deserved share too, so this is only a warning.
        if (r.quota >= 0 && r.limit >= 0 && r.quota > r.limit)
          warnings_.push_back({base + ".quota", "quota exceeds limit; the limit caps it"});
        if (std::find(rids_.begin(), rids_.end(), rid) == rids_.end()) rids_.push_back(rid);
      }
      if (s.preempt_min_runtime_ms < -1) diag.add(s.name + ".spec.preemptMinRuntime", "negative value other than -1");
    }
    parent_.assign(specs.size(), npos);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].parent.empty()) continue;
      auto it = index_.find(specs[i].parent);
      if (it == index_.end())
        diag.add(specs[i].name + ".spec.parentQueue", "unknown parent queue '" + specs[i].parent + "'");
      else
        parent_[i] = it->second;
    }
    // cycles: walk up at most n steps
    for (std::size_t i = 0; i < specs.size(); ++i) {
      std::size_t q = i, steps = 0;
      while (q != npos && steps <= specs.size()) q = parent_[q], ++steps;
      if (q != npos) diag.add(specs[i].name + ".spec.parentQueue", "cycle in the queue hierarchy");
    }
    for (std::size_t i = 0; i < opts_.whole_units.size(); ++i)
      if (opts_.whole_units[i].second <= 0)
        diag.add("options.whole_units[" + std::to_string(i) + "]",
                 "a whole unit must be at least 1 base unit, got " + std::to_string(opts_.whole_units[i].second));
    diag.throw_if_any();
    std::sort(rids_.begin(), rids_.end());
    R_ = rids_.size();
    for (std::size_t d = 0; d < R_; ++d) {
      if (dense_.size() <= rids_[d]) dense_.resize(rids_[d] + 1u, -1);
      dense_[rids_[d]] = static_cast<int>(d);
    }
    specs_ = std::move(specs);
    const std::size_t n = specs_.size();
    children_.assign(n, {});
    for (std::size_t i = 0; i < n; ++i) (parent_[i] == npos ? roots_ : children_[parent_[i]]).push_back(i);
    depth_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (auto q = parent_[i]; q != npos; q = parent_[q]) ++depth_[i];
    quota_.assign(n * R_, 0);
    weight_.assign(n * R_, 0);
    limit_.assign(n * R_, kai_fair_share_unlimited);
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& [rid, r] : specs_[i].resources) {
        const auto k = i * R_ + static_cast<std::size_t>(dense_[rid]);
        quota_[k] = r.quota, weight_[k] = r.over_quota_weight, limit_[k] = r.limit;
      }
    // children quotas vs parent quota (per resource)
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t d = 0; d < R_; ++d) {
        const amount pq = quota_[p * R_ + d];
        if (pq < 0 || children_[p].empty()) continue;
        detail::int128 sum = 0;
        bool unlimited = false;
        for (auto c : children_[p]) {
          const amount cq = quota_[c * R_ + d];
          if (cq < 0)
            unlimited = true;
          else
            sum += cq;
        }
        if (unlimited || sum > pq) {
          std::string msg = "children's quotas exceed the parent's quota for resource id " + std::to_string(rids_[d]);
          if (opts_.children_exceeding_parent == kai_fair_share_oversubscription::error)
            diag.add(specs_[p].name + ".spec.resources", msg);
          else
            warnings_.push_back({specs_[p].name + ".spec.resources", msg});
        }
      }
    diag.throw_if_any();
    request_.assign(n * R_, 0);
    alloc_.assign(n * R_, 0);
    alloc_roots_.assign(R_, 0);
    alloc_np_.assign(n * R_, 0);
    fair_.assign(n * R_, 0);
    scratch_.assign(n * R_, 0);
    capacity_.assign(R_, 0);
    work_.reserve(n);
    ord_.reserve(n);
    stack_.reserve(n);
    if (opts_.saturation_den <= 0 || opts_.saturation_num < opts_.saturation_den)
      opts_.saturation_num = 1, opts_.saturation_den = 1;
    if (opts_.usage_k_den <= 0 || opts_.usage_k_num <= 0) opts_.usage_k_num = 0, opts_.usage_k_den = 1;
    unit_.assign(R_, 1);
    if (opts_.upstream) {
      opts_.remainder_after_all_buckets = true;
      opts_.saturation_placement = kai_fair_share_saturation_placement::sibling_ratio;
      for (const auto& [rid, u] : opts_.whole_units)
        if (const int d = dense(rid); d >= 0) unit_[static_cast<std::size_t>(d)] = u;
    }
    usage_.assign(n * R_, 0);
    usage_total_.assign(R_, 0);
    max_weight_.assign(R_, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t d = 0; d < R_; ++d) max_weight_[d] = std::max(max_weight_[d], weight_[i * R_ + d]);
    sw_.assign(n, 0);
    frac_num_.assign(n, 0);
    frac_den_.assign(n, 1);
    has_frac_.assign(n, 0);
    rem_.reserve(n);
    touched_.assign(n, 0);
    touched_list_.reserve(n);
    involved_.assign(n * R_, 0);
    dense_a_.assign(R_, 0);
    dense_b_.assign(R_, 0);
    delta_.assign(R_, 0);
  }

  // ---- lookup ---------------------------------------------------------------
  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] queue_index find(std::string_view name) const noexcept {
    auto it = index_.find(name);
    return it == index_.end() ? npos : it->second;
  }
  [[nodiscard]] queue_index at(std::string_view name) const {
    auto q = find(name);
    if (q == npos) throw unknown_entity_error(error_id::unknown_queue, "queue", name);
    return q;
  }
  [[nodiscard]] const kai_fair_share_queue_spec& spec(queue_index q) const { return specs_.at(q); }
  [[nodiscard]] queue_index parent(queue_index q) const { return parent_.at(q); }
  [[nodiscard]] bool is_leaf(queue_index q) const { return children_.at(q).empty(); }
  [[nodiscard]] const std::vector<diagnostic>& warnings() const noexcept { return warnings_; }
  /// The options in effect (after normalisation: upstream sets what it implies).
  [[nodiscard]] const kai_fair_share_options& options() const noexcept { return opts_; }
  [[nodiscard]] std::span<const resource_id> resources() const noexcept { return rids_; }

  // ---- inputs ---------------------------------------------------------------
  /// Total amount the root-level queues share (absent resource = 0).
  void set_capacity(const resource_vector& total) {
    check_nonnegative(total, "capacity");
    for (std::size_t d = 0; d < R_; ++d) capacity_[d] = total.get(rids_[d]);
  }
  /// Requestable demand of a leaf queue (allocated + pending requests). Parents sum their children.
  void set_request(queue_index q, const resource_vector& request) {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    check_nonnegative(request, q, ".request");
    for (std::size_t d = 0; d < R_; ++d) delta_[d] = request.get(rids_[d]);
    change_request(q);
  }
  /// set_request(q, pending + allocated(q)): a leaf's demand is what it holds
  /// and what waits for it (the same result and errors, without building the
  /// sum).
  void set_request_with_allocation(queue_index q, const resource_vector& pending) {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    if (pending.empty()) {  // the common case of a queue without pending work: no lookups
      for (std::size_t d = 0; d < R_; ++d) delta_[d] = alloc_[q * R_ + d];
    } else {
      for (std::size_t d = 0; d < R_; ++d) delta_[d] = detail::checked_add(pending.get(rids_[d]), alloc_[q * R_ + d]);
      for (const auto& e : pending)
        if (e.value < 0 && dense(e.id) < 0) throw validation_error(specs_[q].name + ".request", "negative amount");
    }
    for (std::size_t d = 0; d < R_; ++d)
      if (delta_[d] < 0) throw validation_error(specs_[q].name + ".request", "negative amount");
    change_request(q);
  }
  /// Historical usage of q (KAI's time-based fair share): the integral of the
  /// queue's allocation over the usage window (any unit, e.g. GPU-minutes), per
  /// resource. Parents sum their children, like set_request. Only used when
  /// the option usage_k is > 0 and set_usage_total gave the window's total.
  void set_usage(queue_index q, const resource_vector& used) {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    check_nonnegative(used, q, ".usage");
    std::vector<amount> next(usage_);
    for (std::size_t d = 0; d < R_; ++d) {
      const amount delta = detail::checked_sub(used.get(rids_[d]), usage_[q * R_ + d]);
      for (auto a = q; a != npos; a = parent_[a]) next[a * R_ + d] = detail::checked_add(next[a * R_ + d], delta);
    }
    usage_.swap(next);
  }
  /// The normaliser C of the usage, per resource: the integral of the
  /// cluster's capacity over the same window and in the same unit (KAI divides
  /// each queue's usage by it). A resource with total 0 has no usage term.
  /// Throws overflow_error (no change) when weight x C x (1 + k) does not fit
  /// in 64 bits for some queue.
  void set_usage_total(const resource_vector& total) {
    check_nonnegative(total, "usage total");
    const detail::int128 kk = static_cast<detail::int128>(opts_.usage_k_den) + opts_.usage_k_num;
    for (std::size_t d = 0; d < R_; ++d) {
      const detail::int128 a = static_cast<detail::int128>(max_weight_[d]) * total.get(rids_[d]);
      if (a != 0 && (a > std::numeric_limits<amount>::max() || a * kk > std::numeric_limits<amount>::max()))
        detail::throw_overflow("historical usage weights (over-quota weight x usage total x (1 + k))");
    }
    for (std::size_t d = 0; d < R_; ++d) usage_total_[d] = total.get(rids_[d]);
  }
  [[nodiscard]] amount usage(queue_index q, resource_id r) const { return value(usage_, q, r); }

  /// Charges (or with negative sign refunds) an allocation to q and every ancestor.
  void allocate(queue_index q, const resource_vector& amounts, bool preemptible) {
    apply_alloc(q, amounts, preemptible, +1);
  }
  void deallocate(queue_index q, const resource_vector& amounts, bool preemptible) {
    apply_alloc(q, amounts, preemptible, -1);
  }

  // ---- division -------------------------------------------------------------
  /// Divides capacity top-down. After warm-up allocates nothing.
  void compute() {
    if (R_ == 0) return;  // no resource tracked: every share is 0 (fair_ is empty)
    divide(roots_, capacity_.data());
    // breadth order via explicit stack on ord_
    stack_.assign(roots_.begin(), roots_.end());
    while (!stack_.empty()) {
      const auto p = stack_.back();
      stack_.pop_back();
      if (children_[p].empty()) continue;
      divide(children_[p], &fair_[p * R_]);
      for (auto c : children_[p]) stack_.push_back(c);
    }
  }

  [[nodiscard]] amount fair_share(queue_index q, resource_id r) const { return value(fair_, q, r); }
  [[nodiscard]] amount allocated(queue_index q, resource_id r) const { return value(alloc_, q, r); }
  /// What the root-level queues have allocated of r together (the sum of allocated(root, r)).
  [[nodiscard]] detail::int128 allocated_at_roots(resource_id r) const noexcept {
    const int d = dense(r);
    return d < 0 ? 0 : alloc_roots_[static_cast<std::size_t>(d)];
  }
  [[nodiscard]] amount allocated_non_preemptible(queue_index q, resource_id r) const { return value(alloc_np_, q, r); }
  [[nodiscard]] amount request(queue_index q, resource_id r) const { return value(request_, q, r); }
  /// Capacity set by set_capacity (0 for a resource no queue names).
  [[nodiscard]] amount capacity(resource_id r) const noexcept {
    const int d = dense(r);
    return d < 0 ? 0 : capacity_[static_cast<std::size_t>(d)];
  }
  [[nodiscard]] amount quota(queue_index q, resource_id r) const {
    const int d = dense(r);
    return d < 0 ? 0 : quota_[q * R_ + static_cast<std::size_t>(d)];
  }
  [[nodiscard]] amount limit(queue_index q, resource_id r) const {
    const int d = dense(r);
    return d < 0 ? kai_fair_share_unlimited : limit_[q * R_ + static_cast<std::size_t>(d)];
  }

  // ---- allocation checks ----------------------------------------------------
  /// From the leaf up: over limit (allocated + request > limit) and, for a
  /// non-preemptible job, over quota (non-preemptible allocated + request > quota).
  [[nodiscard]] decision check_allocation(queue_index q, const resource_vector& req, bool preemptible) const {
    for (auto a = q; a != npos; a = parent_[a]) {
      for (const auto& e : req) {
        if (e.value == 0) continue;
        const int d = dense(e.id);
        const amount lim = d < 0 ? kai_fair_share_unlimited : limit_[a * R_ + static_cast<std::size_t>(d)];
        const amount used = d < 0 ? 0 : alloc_[a * R_ + static_cast<std::size_t>(d)];
        if (lim >= 0 && static_cast<detail::int128>(used) + e.value > lim)
          return deny_over("over_limit", a, e, used, lim);
        if (!preemptible) {
          const amount qt = d < 0 ? 0 : quota_[a * R_ + static_cast<std::size_t>(d)];
          const amount np = d < 0 ? 0 : alloc_np_[a * R_ + static_cast<std::size_t>(d)];
          if (qt >= 0 && static_cast<detail::int128>(np) + e.value > qt) return deny_over("over_quota", a, e, np, qt);
        }
      }
    }
    return decision::allow();
  }

  // ---- reclaim --------------------------------------------------------------
  /// Can the reclaimer reclaim at all (KAI's CanReclaimResources): in every
  /// resource of the tree, the reclaimer's own (leaf) queue has allocated +
  /// request <= fair share; a non-preemptible job must also keep
  /// non-preemptible allocated + request <= quota. Only the leaf: its
  /// ancestors are looked at by the strategies and the sibling saturation
  /// check. With saturation_placement = can_reclaim_bound the fair share is
  /// multiplied by the saturation multiplier here.
  [[nodiscard]] bool can_reclaim(queue_index q, const resource_vector& req, bool preemptible) const {
    for (const auto& e : req)
      if (e.value > 0 && dense(e.id) < 0) return false;  // a resource no queue has: fair share 0
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      const detail::int128 after = static_cast<detail::int128>(alloc_[k]) + req.get(rids_[d]);
      if (opts_.saturation_placement == kai_fair_share_saturation_placement::can_reclaim_bound) {
        if (!within_saturated(after, fair_[k])) return false;
      } else if (after > fair_[k]) {
        return false;
      }
      if (!preemptible && quota_[k] >= 0 && static_cast<detail::int128>(alloc_np_[k]) + req.get(rids_[d]) > quota_[k])
        return false;
    }
    return true;
  }

  /// The two siblings under the common ancestor of a and b (npos pair when one contains the other).
  [[nodiscard]] std::pair<queue_index, queue_index> diverge(queue_index a, queue_index b) const {
    while (depth_[a] > depth_[b]) a = parent_[a];
    while (depth_[b] > depth_[a]) b = parent_[b];
    if (a == b) return {npos, npos};
    while (parent_[a] != parent_[b]) a = parent_[a], b = parent_[b];
    return {a, b};
  }

  /// What a queue may hold before reclaim takes from it (KAI's allocatable
  /// share): unlimited quota -> its limit; else min(limit, max(quota, fair
  /// share)). -1 = unlimited.
  [[nodiscard]] amount allocatable(queue_index q, resource_id r) const {
    const int d = dense(r);
    return d < 0 ? 0 : allocatable_k(q * R_ + static_cast<std::size_t>(d));
  }

  /// Victim pre-filter (KAI's FilterVictim), at the level where the paths
  /// diverge. If the reclaimer side would exceed its quota with the job
  /// (allocated + request > quota in some resource), the victim side must be
  /// above its allocatable share in some resource. Otherwise, over the
  /// resources the job asks for (skipping unlimited quotas), the victim side
  /// must be above quota in one of them, or at quota in all of them.
  [[nodiscard]] bool victim_prefilter(queue_index reclaimer, queue_index victim, const resource_vector& req) const {
    const auto [ra, va] = diverge(reclaimer, victim);
    if (va == npos) return false;
    if (!fits_deserved(ra, req)) return above_allocatable(va, alloc_);
    bool under = false;
    for (std::size_t d = 0; d < R_; ++d) {
      if (req.get(rids_[d]) <= 0) continue;
      const auto k = va * R_ + d;
      if (quota_[k] < 0) continue;
      if (alloc_[k] > quota_[k]) return true;
      if (alloc_[k] < quota_[k]) under = true;
    }
    return !under;
  }

  /// Which strategy allows taking a chunk from `victim` for a job of `req` in
  /// `reclaimer`, against the current allocation (none if neither). As KAI,
  /// the check is made before the chunk is subtracted, at the level where the
  /// paths diverge: maintain fair share = the victim side holds more than its
  /// allocatable share in some resource (strictly); guarantee deserved = the
  /// reclaimer side stays within quota with the job in every resource
  /// (allocated + request <= quota) and the victim side is strictly above its
  /// quota in some resource. The chunk's size does not enter the test.
  [[nodiscard]] kai_fair_share_strategy reclaim_strategy(queue_index reclaimer, const resource_vector& req,
                                                         queue_index victim, const resource_vector& chunk) const {
    (void)chunk;
    return strategy_on(alloc_, reclaimer, req, victim);
  }

  /// Scenario validator (KAI's Reclaimable): the chunks, in order, each
  /// allowed by a strategy checked against what the victim side holds before
  /// the chunk is subtracted; each chunk is then subtracted along the victim's
  /// whole path. Afterwards, at every level of the reclaimer's path: against
  /// every sibling touched by the victims, for each resource of the job or of
  /// that sibling's chunks, the sibling saturation check (see
  /// kai_fair_share_saturation_placement); and, for a non-preemptible job,
  /// non-preemptible allocated + request <= quota. Does not call
  /// can_reclaim (KAI's action calls it before). No allocation (scratch).
  [[nodiscard]] bool validate_reclaim(queue_index reclaimer, const resource_vector& req, bool preemptible,
                                      std::span<const kai_fair_share_victim_chunk> chunks) const {
    for (auto t : touched_list_) touched_[t] = 0;
    touched_list_.clear();
    for (const auto& c : chunks) {
      const auto [ra, va] = diverge(reclaimer, c.queue);
      if (va == npos) return false;
      touch(va);  // KAI keeps the remaining amount of the victim side from here on
      if (strategy_on(scratch_, reclaimer, req, c.queue) == kai_fair_share_strategy::none) return false;
      for (auto a = c.queue; a != npos; a = parent_[a]) {
        touch(a);
        for (const auto& e : *c.resources) {
          const int d = dense(e.id);
          if (d < 0) continue;
          scratch_[a * R_ + static_cast<std::size_t>(d)] -= e.value;
          if (e.value > 0) involved_[a * R_ + static_cast<std::size_t>(d)] = 1;
        }
      }
    }
    return within_boundaries(reclaimer, req, preemptible);
  }

  // ---- preempt --------------------------------------------------------------
  /// Minimum runtime for jobs of q: the nearest setting from q upward, else the default.
  [[nodiscard]] std::int64_t min_runtime_ms(queue_index q) const {
    for (auto a = q; a != npos; a = parent_[a])
      if (specs_[a].preempt_min_runtime_ms >= 0) return specs_[a].preempt_min_runtime_ms;
    return opts_.default_min_runtime_ms;
  }
  /// Preempt (same queue): strictly lower priority, preemptible, past its minimum runtime.
  [[nodiscard]] bool can_preempt(std::int32_t preemptor_priority, queue_index victim_queue,
                                 std::int32_t victim_priority, bool victim_preemptible, std::int64_t victim_started_ms,
                                 std::int64_t now_ms) const {
    if (victim_priority >= preemptor_priority || !victim_preemptible) return false;
    return now_ms - victim_started_ms >= min_runtime_ms(victim_queue);
  }

  // ---- queue order ----------------------------------------------------------
  /// Three-way comparison in KAI's queue order (negative: a goes first),
  /// compared at the level where the paths of a and b diverge. job_a/job_b
  /// are the pending job's request and vict_a/vict_b the resources of victims
  /// already taken, dense in resources() order (empty spans: none). KAI's
  /// chain: 1. not over-utilised first (over-utilised: fair share < allocated
  /// in every resource); 2. starved first (allocated + job <= quota in every
  /// resource); 3. higher priority; 4. no use of a resource with allocatable
  /// share 0 (with the job) first; 5. smaller dominant share with the job and
  /// without the victims; 6. smaller dominant share; 7. smaller allocatable
  /// share (<= in all, < in one); 8. earlier creation; 9. name.
  [[nodiscard]] int queue_order(queue_index a, std::span<const amount> job_a, std::span<const amount> vict_a,
                                queue_index b, std::span<const amount> job_b, std::span<const amount> vict_b) const {
    return order_impl(a, job_a, vict_a, false, b, job_b, vict_b, false);
  }
  /// True when queue a (with its pending job's request ra) goes before b (rb).
  /// A request in a resource no queue names makes that side not starved and a
  /// user of a zero share.
  [[nodiscard]] bool queue_before(queue_index a, const resource_vector& ra, queue_index b,
                                  const resource_vector& rb) const {
    auto [x, y] = diverge(a, b);
    if (x == npos) return false;
    for (std::size_t d = 0; d < R_; ++d) dense_a_[d] = ra.get(rids_[d]), dense_b_[d] = rb.get(rids_[d]);
    return order_impl(x, dense_a_, {}, foreign(ra), y, dense_b_, {}, foreign(rb)) < 0;
  }
  /// KAI's dominant resource share of q, the ratio its queue order compares
  /// (without a job or victims): the largest allocated / allocatable share
  /// over the resources q uses, an unlimited allocatable share counting as the
  /// capacity and a zero one as allocated x 1000 / 1. {numerator, denominator}.
  [[nodiscard]] std::pair<detail::uint128, detail::uint128> dominant_share(queue_index q) const noexcept {
    return dominant(q, {}, {});
  }
  /// The normaliser of the historical usage (set_usage_total), 0 where none was given.
  [[nodiscard]] amount usage_total(resource_id r) const noexcept {
    const int d = dense(r);
    return d < 0 ? 0 : usage_total_[static_cast<std::size_t>(d)];
  }

  /// The registry whose names the model's reasons and introspection
  /// (quota/kai_fair_share_json.hpp) carry; it must outlive the model and its
  /// copies. Unbound (nullptr, the default): the well-known names only.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }

 private:
  /// check_allocation's denial `rule` of queue a: the request e would take
  /// `used` past `cap`.
  [[nodiscard]] decision deny_over(std::string_view rule, queue_index a, const resource_vector::entry& e, amount used,
                                   amount cap) const {
    return decision::deny(reason{kai_fair_share_model_name,
                                 rule,
                                 specs_[a].name,
                                 e.id,
                                 detail::resource_label_view(reg_, e.id),
                                 e.value,
                                 used,
                                 cap,
                                 {}});
  }
  [[nodiscard]] int dense(resource_id r) const noexcept { return r < dense_.size() ? dense_[r] : -1; }
  [[nodiscard]] amount value(const std::vector<amount>& v, queue_index q, resource_id r) const {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    const int d = dense(r);
    return d < 0 ? 0 : v[q * R_ + static_cast<std::size_t>(d)];
  }
  static void check_nonnegative(const resource_vector& v, const std::string& what) {
    for (const auto& e : v)
      if (e.value < 0) throw validation_error(what, "negative amount");
  }
  // The request of q becomes delta_ (per resource), its ancestors change by
  // as much. Strong guarantee: every sum is checked before any is stored (no
  // copy of the requests).
  void change_request(queue_index q) {
    for (std::size_t d = 0; d < R_; ++d) delta_[d] = detail::checked_sub(delta_[d], request_[q * R_ + d]);
    for (auto a = q; a != npos; a = parent_[a])
      for (std::size_t d = 0; d < R_; ++d) (void)detail::checked_add(request_[a * R_ + d], delta_[d]);
    for (auto a = q; a != npos; a = parent_[a])
      for (std::size_t d = 0; d < R_; ++d) request_[a * R_ + d] += delta_[d];
  }
  // the same for an input of queue q: the item is named (<queue><suffix>) only when it is bad
  void check_nonnegative(const resource_vector& v, queue_index q, std::string_view suffix) const {
    for (const auto& e : v)
      if (e.value < 0) throw validation_error(specs_[q].name + std::string(suffix), "negative amount");
  }
  [[nodiscard]] bool within_saturated(detail::int128 used, amount fair) const noexcept {
    // used <= fair * num / den  <=>  used * den <= fair * num
    return used * opts_.saturation_den <= static_cast<detail::int128>(fair) * opts_.saturation_num;
  }
  void apply_alloc(queue_index q, const resource_vector& v, bool preemptible, int sign) {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    check_nonnegative(v, q, ".allocation");
    // validate first (strong guarantee), then apply
    for (auto a = q; a != npos; a = parent_[a])
      for (const auto& e : v) {
        const int d = dense(e.id);
        if (d < 0) continue;
        const auto k = a * R_ + static_cast<std::size_t>(d);
        const amount n1 = sign > 0 ? detail::checked_add(alloc_[k], e.value) : alloc_[k] - e.value;
        const amount n2 =
            preemptible ? 0 : (sign > 0 ? detail::checked_add(alloc_np_[k], e.value) : alloc_np_[k] - e.value);
        if (n1 < 0 || n2 < 0)
          throw state_error(error_id::state_negative_usage, specs_[a].name + ": usage would go negative");
      }
    for (auto a = q; a != npos; a = parent_[a])
      for (const auto& e : v) {
        const int d = dense(e.id);
        if (d < 0) continue;
        const auto k = a * R_ + static_cast<std::size_t>(d);
        alloc_[k] += sign * e.value;
        if (parent_[a] == npos) alloc_roots_[static_cast<std::size_t>(d)] += sign * e.value;
        if (!preemptible) alloc_np_[k] += sign * e.value;
      }
  }

  [[nodiscard]] int order_impl(queue_index a, std::span<const amount> job_a, std::span<const amount> vict_a, bool fa,
                               queue_index b, std::span<const amount> job_b, std::span<const amount> vict_b,
                               bool fb) const {
    auto [x, y] = diverge(a, b);
    if (x == npos) return 0;
    if (bool ox = over_utilised(x), oy = over_utilised(y); ox != oy) return ox ? 1 : -1;
    if (bool sx = !fa && starved(x, job_a), sy = !fb && starved(y, job_b); sx != sy) return sx ? -1 : 1;
    if (specs_[x].priority != specs_[y].priority) return specs_[x].priority > specs_[y].priority ? -1 : 1;
    if (bool zx = fa || zero_share_used(x, job_a), zy = fb || zero_share_used(y, job_b); zx != zy) return zx ? 1 : -1;
    if (int c = compare_dominant(x, job_a, vict_a, y, job_b, vict_b); c != 0) return c;
    if (int c = compare_dominant(x, {}, {}, y, {}, {}); c != 0) return c;
    if (int c = compare_allocatable(x, y); c != 0) return c;
    if (specs_[x].created_ms != specs_[y].created_ms) return specs_[x].created_ms < specs_[y].created_ms ? -1 : 1;
    return specs_[x].name < specs_[y].name ? -1 : (specs_[x].name == specs_[y].name ? 0 : 1);
  }
  void touch(queue_index a) const {
    if (touched_[a]) return;
    touched_[a] = 1;
    touched_list_.push_back(a);  // reserved for every queue: never reallocates
    std::copy_n(alloc_.data() + a * R_, R_, scratch_.data() + a * R_);
    std::fill_n(involved_.data() + a * R_, R_, char{0});
  }
  [[nodiscard]] bool foreign(const resource_vector& v) const noexcept {
    for (const auto& e : v)
      if (e.value > 0 && dense(e.id) < 0) return true;
    return false;
  }
  [[nodiscard]] amount allocatable_k(std::size_t k) const noexcept {
    if (quota_[k] < 0) return limit_[k];
    const amount a = std::max(quota_[k], fair_[k]);
    return limit_[k] >= 0 ? std::min(limit_[k], a) : a;
  }
  // allocated + req <= quota in every resource (quota -1: unlimited).
  [[nodiscard]] bool fits_deserved(queue_index x, const resource_vector& req) const {
    if (foreign(req)) return false;
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = x * R_ + d;
      if (quota_[k] >= 0 && static_cast<detail::int128>(alloc_[k]) + req.get(rids_[d]) > quota_[k]) return false;
    }
    return true;
  }
  [[nodiscard]] bool above_allocatable(queue_index v, const std::vector<amount>& alloc) const noexcept {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = v * R_ + d;
      const amount a = allocatable_k(k);
      if (a >= 0 && alloc[k] > a) return true;
    }
    return false;
  }
  [[nodiscard]] bool above_quota(queue_index v, const std::vector<amount>& alloc) const noexcept {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = v * R_ + d;
      if (quota_[k] >= 0 && alloc[k] > quota_[k]) return true;
    }
    return false;
  }
  [[nodiscard]] kai_fair_share_strategy strategy_on(const std::vector<amount>& alloc, queue_index reclaimer,
                                                    const resource_vector& req, queue_index victim) const {
    const auto [ra, va] = diverge(reclaimer, victim);
    if (ra == npos) return kai_fair_share_strategy::none;
    if (above_allocatable(va, alloc)) return kai_fair_share_strategy::maintain_fair_share;
    if (fits_deserved(ra, req) && above_quota(va, alloc)) return kai_fair_share_strategy::guarantee_deserved;
    return kai_fair_share_strategy::none;
  }
  // After the victims: scratch_ rows and involved_ rows are valid for the
  // queues in touched_list_ (filled by validate_reclaim).
  [[nodiscard]] bool within_boundaries(queue_index reclaimer, const resource_vector& req, bool preemptible) const {
    const bool kai = opts_.saturation_placement == kai_fair_share_saturation_placement::sibling_ratio;
    const detail::int128 mn = kai ? opts_.saturation_num : 1, md = kai ? opts_.saturation_den : 1;
    for (auto x = reclaimer; x != npos; x = parent_[x]) {
      const amount* rx = (touched_[x] ? scratch_.data() : alloc_.data()) + x * R_;
      for (auto y : touched_list_) {
        if (y == x || parent_[y] != parent_[x]) continue;
        for (std::size_t d = 0; d < R_; ++d) {
          const amount rq = req.get(rids_[d]);
          if (!involved_[y * R_ + d] && rq <= 0) continue;
          const detail::int128 rem_r = static_cast<detail::int128>(rx[d]) + rq;
          const amount fair_r = fair_[x * R_ + d], fair_s = fair_[y * R_ + d];
          const bool over = fair_r == 0 ? rem_r > 0 : rem_r > fair_r;  // reclaimer saturation > 1
          if (!over || fair_s <= 0) continue;
          if (fair_r == 0) return false;  // infinite saturation
          const amount rem_s = std::max<amount>(0, scratch_[y * R_ + d]);
          // rem_r / fair_r * mn / md >= rem_s / fair_s: not strictly lower -> deny
          if (detail::compare_ratio(static_cast<detail::uint128>(rem_r) * static_cast<detail::uint128>(mn),
                                    static_cast<detail::uint128>(fair_r) * static_cast<detail::uint128>(md),
                                    static_cast<detail::uint128>(rem_s), static_cast<detail::uint128>(fair_s)) >= 0)
            return false;
        }
      }
      if (!preemptible)
        for (std::size_t d = 0; d < R_; ++d) {
          const auto k = x * R_ + d;
          if (quota_[k] >= 0 && static_cast<detail::int128>(alloc_np_[k]) + req.get(rids_[d]) > quota_[k]) return false;
        }
    }
    return true;
  }

  [[nodiscard]] static amount at_or_zero(std::span<const amount> v, std::size_t d) noexcept {
    return d < v.size() ? v[d] : 0;
  }
  [[nodiscard]] bool over_utilised(queue_index q) const noexcept {
    if (R_ == 0) return false;
    for (std::size_t d = 0; d < R_; ++d)
      if (fair_[q * R_ + d] >= alloc_[q * R_ + d]) return false;
    return true;
  }
  [[nodiscard]] bool starved(queue_index q, std::span<const amount> job) const noexcept {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      if (quota_[k] >= 0 && static_cast<detail::int128>(alloc_[k]) + at_or_zero(job, d) > quota_[k]) return false;
    }
    return true;
  }
  [[nodiscard]] bool zero_share_used(queue_index q, std::span<const amount> job) const noexcept {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      if (allocatable_k(k) == 0 && static_cast<detail::int128>(alloc_[k]) + at_or_zero(job, d) > 0) return true;
    }
    return false;
  }
  // KAI's dominant resource share: max over resources of allocated /
  // allocatable share (unlimited -> the capacity; 0 -> allocated x 1000).
  [[nodiscard]] std::pair<detail::uint128, detail::uint128> dominant(queue_index q, std::span<const amount> add,
                                                                     std::span<const amount> sub) const noexcept {
    detail::uint128 bn = 0, bd = 1;
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      const detail::int128 used = static_cast<detail::int128>(alloc_[k]) + at_or_zero(add, d) - at_or_zero(sub, d);
      if (used <= 0) continue;
      amount a = allocatable_k(k);
      if (a < 0) a = capacity_[d];
      const detail::uint128 n =
          a == 0 ? static_cast<detail::uint128>(used) * 1000u : static_cast<detail::uint128>(used);
      const detail::uint128 m = a == 0 ? 1u : static_cast<detail::uint128>(a);
      if (detail::compare_ratio(n, m, bn, bd) > 0) bn = n, bd = m;
    }
    return {bn, bd};
  }
  [[nodiscard]] int compare_dominant(queue_index x, std::span<const amount> ax, std::span<const amount> sx,
                                     queue_index y, std::span<const amount> ay, std::span<const amount> sy) const {
    const auto [nx, dx] = dominant(x, ax, sx);
    const auto [ny, dy] = dominant(y, ay, sy);
    return detail::compare_ratio(nx, dx, ny, dy);
  }
  // -1 when x's allocatable share is <= y's in every resource and < in one (-1 = unlimited, the largest).
  [[nodiscard]] int compare_allocatable(queue_index x, queue_index y) const noexcept {
    bool le = true, ge = true, lt = false, gt = false;
    for (std::size_t d = 0; d < R_; ++d) {
      const amount a = detail::fair_share_cap(allocatable_k(x * R_ + d));
      const amount b = detail::fair_share_cap(allocatable_k(y * R_ + d));
      if (a > b) le = false, gt = true;
      if (a < b) ge = false, lt = true;
    }
    if (le && lt) return -1;
    if (ge && gt) return 1;
    return 0;
  }

  // Division of `total[d]` among `sibs`, per resource.
  void divide(const std::vector<queue_index>& sibs, const amount* total) {
    for (std::size_t d = 0; d < R_; ++d) {
      amount remaining = total[d];
      // 1. deserved, regardless of priority and of what the parent has
      for (auto c : sibs) {
        const auto k = c * R_ + d;
        const amount want = requestable(k);
        // a single child never deserves more than the whole parent share;
        // upstream (KAI): only an unlimited quota is capped by it
        const amount g = opts_.upstream && quota_[k] >= 0
                             ? std::min(quota_[k], want)
                             : std::min({detail::fair_share_cap(quota_[k]), want, total[d]});
        fair_[k] = g;
        remaining = remaining - std::min(remaining, g);  // oversubscription: nothing left, never negative
      }
      if (remaining <= 0) continue;
      // 2. over quota by priority bucket
      ord_.assign(sibs.begin(), sibs.end());
      std::sort(ord_.begin(), ord_.end(), [&](auto a, auto b) { return specs_[a].priority > specs_[b].priority; });
      for (std::size_t i = 0; i < ord_.size() && remaining > 0;) {
        std::size_t j = i;
        while (j < ord_.size() && specs_[ord_[j]].priority == specs_[ord_[i]].priority) ++j;
        work_.clear();
        for (std::size_t m = i; m < j; ++m) {
          const auto k = ord_[m] * R_ + d;
          has_frac_[ord_[m]] = 0;
          if (weight_[k] > 0 && requestable(k) > fair_[k]) work_.push_back(ord_[m]);
        }
        remaining = water_fill(d, remaining);
        if (!opts_.remainder_after_all_buckets) remaining = remainder_pass(d, i, j, remaining);
        i = j;
      }
      // KAI: the units left by the floors of a bucket first go to the lower
      // buckets' rounds; the remainder passes run afterwards, bucket by bucket
      for (std::size_t i = 0; opts_.remainder_after_all_buckets && i < ord_.size() && remaining > 0;) {
        std::size_t j = i;
        while (j < ord_.size() && specs_[ord_[j]].priority == specs_[ord_[i]].priority) ++j;
        remaining = remainder_pass(d, i, j, remaining);
        i = j;
      }
    }
  }
  [[nodiscard]] amount requestable(std::size_t k) const noexcept {
    return std::min(detail::fair_share_cap(limit_[k]), request_[k]);
  }
  // The share weight of c in a round (KAI's calcShareWeights), scaled by the
  // positive constant W x C x kd: max(0, w C (kd + kn) - kn U W). Without the
  // usage term (k = 0 or C = 0) it is w, which is proportional.
  [[nodiscard]] detail::int128 share_weight(std::size_t c, std::size_t d, detail::int128 W) const noexcept {
    const auto k = c * R_ + d;
    if (opts_.usage_k_num == 0 || usage_total_[d] == 0) return weight_[k];
    const detail::int128 A = static_cast<detail::int128>(weight_[k]) * usage_total_[d] *
                             (static_cast<detail::int128>(opts_.usage_k_den) + opts_.usage_k_num);  // fits int64
    const detail::int128 B = static_cast<detail::int128>(opts_.usage_k_num) * usage_[k];
    if (B == 0) return A;
    if (W > A / B) return 0;  // B W > A
    return A - B * W;
  }
  // Over-quota water-filling among work_ (one priority bucket) in KAI's rounds
  // (divideUpToFairShare), exactly: every round recomputes the share weights
  // of the queues that still want more; a queue whose proportional share of
  // the round covers its want gets its want, the others the floor of their
  // share, and their fractional leftover is remembered for the remainder
  // pass. Another round runs while some queue wanted strictly less than its
  // share. Returns what is left.
  amount water_fill(std::size_t d, amount remaining) {
    while (remaining > 0 && !work_.empty()) {
      detail::int128 W = 0, S = 0;
      for (auto c : work_) W += weight_[c * R_ + d];
      for (auto c : work_) S += (sw_[c] = share_weight(c, d, W));
      if (S == 0) break;
      const amount round = remaining;
      bool again = false;
      for (auto& c : work_) {
        const auto k = c * R_ + d;
        const amount want = requestable(k) - fair_[k];
        const detail::int128 p = static_cast<detail::int128>(round) * sw_[c];
        const auto fl = static_cast<amount>(p / S);  // <= round
        const detail::int128 rm = p % S;
        if (want <= fl) {  // requested <= share: satisfied
          fair_[k] += want, remaining -= want;
          if (want < fl || rm > 0) again = true;
          has_frac_[c] = 0;
          c = npos;
        } else {
          // upstream: KAI floors the share to whole units of the resource
          const amount give = fl - fl % unit_[d];
          const detail::int128 left = rm + static_cast<detail::int128>(fl - give) * S;  // (share - give) x S
          fair_[k] += give, remaining -= give;
          if (left > 0) frac_num_[c] = left, frac_den_[c] = S, has_frac_[c] = 1;
        }
      }
      work_.erase(std::remove(work_.begin(), work_.end(), npos), work_.end());
      if (!again) break;
    }
    return remaining;
  }
  // Remainder pass of one bucket (KAI's divideRemainingResource): one unit per
  // queue with a fractional leftover, largest leftover first, then earlier
  // creation, then name.
  amount remainder_pass(std::size_t d, std::size_t from, std::size_t to, amount remaining) {
    if (remaining <= 0) return remaining;
    rem_.clear();
    for (std::size_t m = from; m < to; ++m)
      if (has_frac_[ord_[m]]) rem_.push_back(ord_[m]);
    std::sort(rem_.begin(), rem_.end(), [&](auto a, auto b) {
      const int c =
          detail::compare_ratio(static_cast<detail::uint128>(frac_num_[a]), static_cast<detail::uint128>(frac_den_[a]),
                                static_cast<detail::uint128>(frac_num_[b]), static_cast<detail::uint128>(frac_den_[b]));
      if (c != 0) return c > 0;
      if (specs_[a].created_ms != specs_[b].created_ms) return specs_[a].created_ms < specs_[b].created_ms;
      return specs_[a].name < specs_[b].name;
    });
    for (auto c : rem_) {
      if (remaining == 0) break;
      const amount give = std::min(unit_[d], remaining);  // one unit (upstream: KAI's, even beyond the request)
      fair_[c * R_ + d] += give, remaining -= give;
    }
    return remaining;
  }

  kai_fair_share_options opts_;
  const resource_registry* reg_ = nullptr;
  std::vector<kai_fair_share_queue_spec> specs_;
  std::unordered_map<std::string, queue_index, detail::string_hash, std::equal_to<>> index_;
  std::vector<queue_index> parent_, roots_;
  std::vector<std::vector<queue_index>> children_;
  std::vector<int> depth_;
  std::vector<resource_id> rids_;
  std::vector<int> dense_;
  std::size_t R_ = 0;
  std::vector<amount> quota_, weight_, limit_, request_, alloc_, alloc_np_, fair_, capacity_;
  std::vector<detail::int128> alloc_roots_;  // per resource: the sum of the root queues' alloc_
  mutable std::vector<amount> scratch_;
  std::vector<amount> usage_, usage_total_, max_weight_;
  std::vector<amount> unit_;  // per resource: 1, or KAI's whole unit in upstream mode
  std::vector<detail::int128> sw_, frac_num_, frac_den_;
  std::vector<char> has_frac_;
  std::vector<queue_index> work_, ord_, stack_, rem_;
  mutable std::vector<char> touched_, involved_;
  mutable std::vector<queue_index> touched_list_;
  mutable std::vector<amount> dense_a_, dense_b_;
  std::vector<amount> delta_;  // set_request's new request, then change, per resource
  std::vector<diagnostic> warnings_;
};

/// Policy adapter: job.queue = leaf queue, job.request = request; check =
/// allocation within limit (and quota for non-preemptible jobs); victims =
/// reclaim candidates in other queues then preempt candidates in the same
/// queue, both in KAI's order (see victims()).
///
/// Optional capabilities (quota/capabilities.hpp):
/// * order: a queue per leaf queue; inside one, higher job priority then
///   earlier creation; heads in KAI's queue order with each head's request
///   (kai_fair_share_model::queue_before);
/// * demand: once the host reports a pending job (pending_added), the policy
///   owns the leaves' requests: each is the leaf's allocation plus its
///   pending jobs, and fair shares are computed again before they are next
///   read (victims, queue order, tree()) after a change: an admission or a
///   release costs no division, as check() reads only limits and quotas. Until
///   then the requests are the host's (tree().set_request, then
///   tree().compute()).
class kai_fair_share_policy : public detail::job_queue_order {
 public:
  explicit kai_fair_share_policy(kai_fair_share_model tree) : tree_(std::move(tree)) {}
  [[nodiscard]] static constexpr std::string_view policy_name() noexcept { return kai_fair_share_model_name; }
  [[nodiscard]] kai_fair_share_model& tree() {
    fresh();
    return tree_;
  }
  [[nodiscard]] const kai_fair_share_model& tree() const {
    fresh();
    return tree_;
  }
  void set_now_ms(std::int64_t now) noexcept { now_ms_ = now; }
  /// Host without its own placement (quota-sim, tests): deny, with the rule
  /// `cluster_full`, a job whose request does not fit in the capacity given to
  /// the tree next to what is allocated, so that the host asks victims() and
  /// KAI's reclaim runs. Off by default: in KAI the cluster is the
  /// placement's business, not the proportion plugin's.
  void set_deny_beyond_capacity(bool on) noexcept { deny_beyond_capacity_ = on; }
  /// quota::capacity_aware: the cluster's new total; the tree divides it less
  /// what charges of no queue take (capacity_deducted). Throws
  /// validation_error (nothing changes) for a negative total.
  void set_cluster_capacity(const resource_vector& total) {
    for (const auto r : tree_.resources())
      if (total.get(r) < 0)
        throw validation_error("capacity/" + std::string(detail::resource_label_view(tree_.registry(), r)),
                               "negative cluster total");
    divide(total);
  }

  [[nodiscard]] decision check(const job& j) const {
    const auto q = tree_.find(j.queue);
    if (q == kai_fair_share_model::npos)
      return decision::deny(
          reason{kai_fair_share_model_name, "unknown_queue", j.queue, no_resource, {}, 0, 0, 0, "unknown queue"});
    if (!tree_.is_leaf(q))
      return decision::deny(reason{
          kai_fair_share_model_name, "not_a_leaf_queue", j.queue, no_resource, {}, 0, 0, 0, "jobs go to leaf queues"});
    auto d = tree_.check_allocation(q, j.request, j.preemptible);
    if (!d.allowed() || !deny_beyond_capacity_) return d;
    for (auto r : tree_.resources()) {
      const amount want = j.request.get(r);
      if (want == 0) continue;
      const detail::int128 used = tree_.allocated_at_roots(r);
      const amount cap = tree_.capacity(r);
      if (used + want > cap)
        return decision::deny(reason{kai_fair_share_model_name, "cluster_full", j.queue, r,
                                     detail::resource_label_view(tree_.registry(), r), want, static_cast<amount>(used),
                                     cap, "request exceeds the free capacity"});
    }
    return d;
  }
  void commit(const job& j) {
    // first (one lookup, the duplicate test too): a later failure erases the entry
    const auto [w, inserted] = run_.pool.emplace(run_.where, j.id, place{0, 0});
    if (!inserted) throw state_error(error_id::state_duplicate, "job '" + j.id + "' already committed");
    kai_fair_share_model::queue_index q = 0;
    bool placed = false;
    try {
      // everything that may throw before any change
      q = tree_.at(j.queue);
      if (run_.by_queue.size() < tree_.size()) run_.by_queue.resize(tree_.size());
      auto& in_queue = run_.by_queue[q];
      detail::reserve_more(in_queue, 1);
      if (run_.priorities.size() < tree_.size()) run_.priorities.resize(tree_.size());
      if (j.preemptible) run_.priorities[q].reserve_one();
      w->second = place{q, in_queue.size()};
      auto& r = in_queue.emplace_back();  // room reserved: no throw
      placed = true;
      r.queue = q;
      r.request = j.request;
      r.preemptible = j.preemptible;
      r.priority = j.priority;
      r.started_ms = j.created_ms;
      r.at = &*w;
      tree_.allocate(q, j.request, j.preemptible);
    } catch (...) {
      if (placed) run_.by_queue[q].pop_back();
      run_.pool.erase(run_.where, w);
      throw;
    }
    const auto waiting = pending_.empty() ? pending_.end() : pending_.find(j.id);
    if (j.preemptible) run_.priorities[q].add(j.priority);
    if (waiting != pending_.end()) {
      // its demand moves from pending to allocated: the request is unchanged
      pending_sum_[waiting->second.queue].sub_in_place(waiting->second.request);
      pending_pool_.erase(pending_, waiting);
    } else if (live_) {
      refresh_demand(q);
    }
  }
  void release(std::string_view id) {
    auto it = run_.where.find(id);
    if (it == run_.where.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    const auto [q, pos] = it->second;
    auto& in_queue = run_.by_queue[q];
    const auto& r = in_queue[pos];
    tree_.deallocate(r.queue, r.request, r.preemptible);
    if (r.preemptible) run_.priorities[q].remove(r.priority);
    if (live_) refresh_demand(r.queue);
    if (pos + 1 != in_queue.size()) {  // swap-remove: the last job takes its place
      in_queue[pos] = std::move(in_queue.back());
      in_queue[pos].at->second.pos = pos;
    }
    in_queue.pop_back();
    run_.pool.erase(run_.where, it);
  }
  // ---- order: pending_queue and compare_pending from detail::job_queue_order ----
  /// KAI's queue order of the two heads' queues, each with its head's request.
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    fresh();
    const auto qa = tree_.find(a.queue), qb = tree_.find(b.queue);
    if (qa == kai_fair_share_model::npos || qb == kai_fair_share_model::npos || qa == qb)
      return default_pending_order(a, b);
    if (tree_.queue_before(qa, a.request, qb, b.request)) return std::weak_ordering::less;
    if (tree_.queue_before(qb, b.request, qa, a.request)) return std::weak_ordering::greater;
    return default_pending_order(a, b);
  }

  // ---- demand ----
  void pending_added(const job& j) {
    if (run_.where.count(j.id) || pending_.count(j.id)) return;
    const auto q = tree_.find(j.queue);
    if (q == kai_fair_share_model::npos || !tree_.is_leaf(q)) return;  // check() denies it
    if (pending_sum_.size() < tree_.size()) pending_sum_.resize(tree_.size());
    pending_sum_[q].add_in_place(j.request);
    pending_pool_.emplace(pending_, j.id, waiting_job{q, j.request});
    if (!live_) {
      live_ = true;
      for (std::size_t x = 0; x < tree_.size(); ++x)
        if (tree_.is_leaf(x)) set_leaf_request(x);
      shares_stale_.set();
    } else {
      refresh_demand(q);
    }
  }
  void pending_withdrawn(std::string_view id) {
    const auto it = pending_.find(id);
    if (it == pending_.end()) return;
    const auto q = it->second.queue;
    pending_sum_[q].sub_in_place(it->second.request);
    pending_pool_.erase(pending_, it);
    refresh_demand(q);
  }
  /// The host reported demand: the leaves' requests follow it.
  [[nodiscard]] bool live_demand() const noexcept { return live_; }

  // ---- charges (quota/capabilities.hpp) ----
  /// A charge of j.queue (a shared claim's devices): allocated to the queue
  /// like a running job's request, part of its share and of what reclaim
  /// counts, but never a victim itself. Duplicate id: state_error.
  void charge_added(const job& c) {
    if (charges_.count(c.id) || run_.where.count(c.id))
      throw state_error(error_id::state_duplicate, "charge '" + c.id + "' already added");
    const auto q = tree_.at(c.queue);
    const auto it = charges_.emplace(c.id, waiting_job{q, c.request}).first;
    try {
      tree_.allocate(q, c.request, true);
    } catch (...) {
      charges_.erase(it);
      throw;
    }
    if (live_) refresh_demand(q);
  }
  void charge_removed(std::string_view id) {
    const auto it = charges_.find(id);
    if (it == charges_.end()) throw unknown_entity_error(error_id::unknown_job, "charge", id);
    const auto q = it->second.queue;
    tree_.deallocate(q, it->second.request, true);
    charges_.erase(it);
    if (live_) refresh_demand(q);
  }

  /// What the cluster loses to charges of no queue (orphan claims' devices,
  /// deducted from the resources KAI divides): the capacity the queues share
  /// becomes the tree's capacity before the deduction minus `v` (never below
  /// 0), and fair shares are computed again. Replaces the previous deduction.
  void capacity_deducted(const resource_vector& v) {
    resource_vector base;
    for (const auto r : tree_.resources()) base.set(r, detail::checked_add(tree_.capacity(r), taken_.get(r)));
    deducted_ = v;
    divide(base);
  }
  [[nodiscard]] const resource_vector& capacity_deduction() const noexcept { return deducted_; }

  /// Victims for j, in KAI's order. Reclaim (other queues), only when
  /// can_reclaim holds: preemptible jobs that pass the victim pre-filter, in
  /// KAI's victim-queue order: from the root down, the queue that comes last
  /// in queue order (compared without a job, with its victims so far and its
  /// next victim subtracted) first; inside a leaf queue the job that comes
  /// last in job order first (lower priority, then later creation, then the
  /// larger id: KAI's job order ends with the UID ascending). As KAI's solver
  /// accumulates victims, the list is every prefix that passes
  /// validate_reclaim: it ends before the first victim whose prefix fails
  /// (every longer scenario holds that victim and fails too), and a host
  /// takes the shortest prefix that makes room. Then preempt (same queue): strictly lower priority, preemptible, past
  /// the minimum runtime, in reverse job order too; none for a non-preemptible job that would take its queue path over
  /// quota.
  void victims(const job& j, std::vector<victim>& out) const {
    fresh();
    const auto q = tree_.find(j.queue);
    if (q == kai_fair_share_model::npos) return;
    using cand = const running*;
    const auto evict_first = [](cand a, cand b) {
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->started_ms != b->started_ms) return a->started_ms > b->started_ms;
      return a->id() > b->id();
    };
    if (tree_.can_reclaim(q, j.request, j.preemptible)) {
      const std::size_t n = tree_.size();
      const auto rids = tree_.resources();
      const std::size_t R = rids.size();
      std::vector<std::vector<cand>> per(n);  // per leaf queue; back() = next victim
      std::size_t total = 0;
      // the pre-filter reads only the two queues and the request: once per queue
      for (std::size_t x = 0; x < run_.by_queue.size(); ++x) {
        if (x == q || run_.by_queue[x].empty() || !tree_.victim_prefilter(q, x, j.request)) continue;
        for (const auto& e : run_.by_queue[x])
          if (e.preemptible) per[x].push_back(&e);
        total += per[x].size();
      }
      if (total > 0) {
        for (auto& v : per) std::sort(v.begin(), v.end(), [&](cand a, cand b) { return evict_first(b, a); });
        std::vector<std::size_t> left(n, 0), best(n, kai_fair_share_model::npos), by_depth;
        std::vector<std::vector<std::size_t>> kids(n);
        for (std::size_t x = 0; x < n; ++x)
          if (tree_.parent(x) != kai_fair_share_model::npos) kids[tree_.parent(x)].push_back(x);
        for (std::size_t x = 0; x < n; ++x)
          for (auto a = x; a != kai_fair_share_model::npos; a = tree_.parent(a)) left[a] += per[x].size();
        for (std::size_t x = 0; x < n; ++x) by_depth.push_back(x);
        const auto depth = [&](std::size_t x) {
          std::size_t d = 0;
          for (auto a = tree_.parent(x); a != kai_fair_share_model::npos; a = tree_.parent(a)) ++d;
          return d;
        };
        std::stable_sort(by_depth.begin(), by_depth.end(), [&](auto a, auto b) { return depth(a) > depth(b); });
        std::vector<amount> taken(n * R, 0), va(R), vb(R);
        // upstream (KAI): a parent is compared with its best leaf's victims
        // only; by default with every victim taken in its subtree
        const bool leaf_victims = tree_.options().upstream;
        const auto vict = [&](std::size_t y, std::vector<amount>& v) {
          const auto& next = per[best[y]].back()->request;
          const std::size_t from = leaf_victims ? best[y] : y;
          for (std::size_t d = 0; d < R; ++d) v[d] = taken[from * R + d] + next.get(rids[d]);
        };
        const auto worse = [&](std::size_t a, std::size_t b) {  // a is evicted from before b
          vict(a, va), vict(b, vb);
          return tree_.queue_order(a, {}, va, b, {}, vb) > 0;
        };
        std::vector<kai_fair_share_victim_chunk> chunks;
        chunks.reserve(total);
        for (std::size_t step = 0; step < total; ++step) {
          // best[x]: the leaf of x's subtree whose next victim goes first
          std::fill(best.begin(), best.end(), kai_fair_share_model::npos);
          std::size_t top = kai_fair_share_model::npos;
          for (auto x : by_depth) {
            if (left[x] == 0) continue;
            if (!per[x].empty()) best[x] = x;
            std::size_t ch = kai_fair_share_model::npos;
            for (auto c : kids[x])
              if (left[c] > 0 && (ch == kai_fair_share_model::npos || worse(c, ch))) ch = c;
            if (best[x] == kai_fair_share_model::npos && ch != kai_fair_share_model::npos) best[x] = best[ch];
            if (tree_.parent(x) == kai_fair_share_model::npos && (top == kai_fair_share_model::npos || worse(x, top)))
              top = x;
          }
          const auto leaf = best[top];
          const cand v = per[leaf].back();
          per[leaf].pop_back();
          for (auto a = leaf; a != kai_fair_share_model::npos; a = tree_.parent(a)) {
            --left[a];
            for (std::size_t d = 0; d < R; ++d) taken[a * R + d] += v->request.get(rids[d]);
          }
          chunks.push_back(kai_fair_share_victim_chunk{leaf, &v->request});
          // KAI keeps a refused victim in every later scenario: they all fail
          if (!tree_.validate_reclaim(q, j.request, j.preemptible, chunks)) break;
          out.push_back(victim{v->id(), kai_fair_share_model_name, "reclaim", tree_.spec(leaf).name});
        }
      }
    }
    preempt_candidates(j, q, out);
  }
  /// Node-level rule (quota/capabilities.hpp): KAI's preempt action, the
  /// same candidates as the preempt part of victims().
  void node_candidates(const job& j, std::vector<victim>& out) const {
    fresh();
    const auto q = tree_.find(j.queue);
    if (q != kai_fair_share_model::npos) preempt_candidates(j, q, out);
  }

 private:
  struct place {
    kai_fair_share_model::queue_index queue;
    std::size_t pos;  // in run_.by_queue[queue]
  };
  using where_map = std::unordered_map<std::string, place, detail::string_hash, std::equal_to<>>;
  struct running {
    kai_fair_share_model::queue_index queue;
    resource_vector request;
    bool preemptible;
    std::int32_t priority;
    std::int64_t started_ms;
    where_map::value_type* at;  // its entry in run_.where: the id (the key) and the position
    [[nodiscard]] const std::string& id() const noexcept { return at->first; }
  };
  // The running jobs by leaf queue, in no order (victims sort their
  // candidates), and where each one is. A copy points its jobs at its own
  // entries.
  struct running_set {
    std::vector<std::vector<running>> by_queue;
    std::vector<detail::priority_counts> priorities;  // of the preemptible jobs, by leaf queue
    where_map where;
    // spare map nodes: an admission and a release allocate nothing once warm
    detail::node_pool<where_map> pool;

    running_set() = default;
    running_set(const running_set& o) : by_queue(o.by_queue), priorities(o.priorities), where(o.where) {
      for (auto& e : where) by_queue[e.second.queue][e.second.pos].at = &e;
    }
    running_set(running_set&&) noexcept = default;
    running_set& operator=(const running_set& o) {
      if (this != &o) *this = running_set(o);
      return *this;
    }
    running_set& operator=(running_set&&) noexcept = default;
    ~running_set() = default;
  };
  struct waiting_job {
    kai_fair_share_model::queue_index queue;
    resource_vector request;
  };
  // KAI's preempt action: strictly lower priority, preemptible, past the
  // minimum runtime, same queue, the least important first
  void preempt_candidates(const job& j, kai_fair_share_model::queue_index q, std::vector<victim>& out) const {
    // a non-preemptible preemptor whose queue path would go over quota is
    // dropped first (IsNonPreemptibleJobOverQueueQuota)
    if (!j.preemptible)
      for (auto a = q; a != kai_fair_share_model::npos; a = tree_.parent(a))
        for (const auto& e : j.request) {
          const amount qt = tree_.quota(a, e.id);
          if (e.value > 0 && qt >= 0 &&
              static_cast<detail::int128>(tree_.allocated_non_preemptible(a, e.id)) + e.value > qt)
            return;
        }
    // a victim has a lower priority than the preemptor and is preemptible
    if (q >= run_.by_queue.size() || q >= run_.priorities.size() || !run_.priorities[q].any_below(j.priority)) return;
    std::vector<const running*> pre;
    for (const auto& r : run_.by_queue[q])
      if (tree_.can_preempt(j.priority, r.queue, r.priority, r.preemptible, r.started_ms, now_ms_)) pre.push_back(&r);
    std::sort(pre.begin(), pre.end(), [](const running* a, const running* b) {
      if (a->priority != b->priority) return a->priority < b->priority;
      if (a->started_ms != b->started_ms) return a->started_ms > b->started_ms;
      return a->id() > b->id();
    });
    for (auto c : pre) out.push_back(victim{c->id(), kai_fair_share_model_name, "preempt", tree_.spec(c->queue).name});
  }
  // request of leaf q = its allocation + its pending jobs
  void set_leaf_request(kai_fair_share_model::queue_index q) {
    static const resource_vector none;
    tree_.set_request_with_allocation(q, q < pending_sum_.size() ? pending_sum_[q] : none);
  }
  // The tree divides `total` less the deduction, never below 0 (what the
  // deduction took is kept, so that a later deduction starts from `total`).
  void divide(const resource_vector& total) {
    resource_vector next;
    resource_vector taken;
    for (const auto r : tree_.resources()) {
      const amount t = total.get(r);
      const amount left = std::max<amount>(0, detail::checked_sub(t, deducted_.get(r)));
      next.set(r, left);
      taken.set(r, t - left);
    }
    tree_.set_capacity(next);
    taken_ = std::move(taken);
    shares_stale_.set();
  }
  void refresh_demand(kai_fair_share_model::queue_index q) {
    set_leaf_request(q);
    shares_stale_.set();
  }
  // fair shares computed again before the next read after a change
  void fresh() const {
    shares_stale_.refresh([this] { tree_.compute(); });
  }
  mutable kai_fair_share_model tree_;
  detail::stale_mark shares_stale_;
  using waiting_map = std::unordered_map<std::string, waiting_job, detail::string_hash, std::equal_to<>>;
  waiting_map pending_;
  std::map<std::string, waiting_job, std::less<>> charges_;  // charge id -> queue, amount
  std::vector<resource_vector> pending_sum_;                 // by leaf queue
  bool live_ = false;
  running_set run_;
  // spare map nodes: an admission and a release allocate nothing once warm
  detail::node_pool<waiting_map> pending_pool_;
  std::int64_t now_ms_ = 0;
  bool deny_beyond_capacity_ = false;
  resource_vector deducted_;  // capacity_deducted
  resource_vector taken_;     // what the deduction took from the total (less than deducted_ where that went below 0)
};

static_assert(policy<kai_fair_share_policy>);
static_assert(order_aware<kai_fair_share_policy>);
static_assert(demand_aware<kai_fair_share_policy>);
static_assert(node_preemption_aware<kai_fair_share_policy>);
static_assert(charge_receiver<kai_fair_share_policy>);

}  // namespace quota
