// quota/fair_share.hpp — hierarchical fair share in the KAI model.
//
// A tree of queues. Each queue has, per resource, a quota (deserved amount,
// -1 = unlimited), an over-quota weight and a limit (-1 = no limit, 0 =
// nothing). Per resource and per set of siblings, top-down, a parent's fair
// share is divided among its children:
//   1. deserved first, regardless of priority (even oversubscribed), capped by
//      the child's requestable demand (request, or min(limit, request));
//   2. what is left goes over quota by priority bucket (highest first); inside
//      a bucket by over-quota weight, water-filling in whole base units among
//      children that still want more (weight 0 never gets over quota);
//   3. units left over after the proportional split go one unit per child,
//      ordered by largest fractional leftover, then earlier creation, then name.
// Everything is exact integer arithmetic (128-bit intermediates).
//
// Predicates: allocation checks (limit, non-preemptible quota) from the leaf up;
// reclaim (can-reclaim, two strategies per victim chunk, saturation
// multiplier, scenario validator); preempt (lower priority, preemptible, min
// runtime); queue order (KAI's tie-break chain, hierarchical).
// See docs/fair-share.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// -1 in quota or limit: unlimited.
inline constexpr amount fair_share_unlimited = -1;

/// One resource of one queue (base units of the resource).
struct fair_share_resource {
  amount quota = 0;                     ///< deserved; -1 = unlimited
  amount over_quota_weight = 0;         ///< share of the over-quota pool; 0 = none
  amount limit = fair_share_unlimited;  ///< -1 = no limit; 0 = nothing
};

/// One queue as configured (a KAI Queue).
struct fair_share_queue_spec {
  std::string name;
  std::string parent;  ///< empty: top-level queue
  std::int32_t priority = 100;
  std::int64_t created_ms = 0;
  /// Minimum run time that protects this queue's jobs from preemption, ms;
  /// -1 = not set here (inherited from the parent, else the default).
  std::int64_t preempt_min_runtime_ms = -1;
  std::map<resource_id, fair_share_resource> resources;
};

/// What to do when the quotas of children add up to more than their parent's.
enum class fair_share_oversubscription { warn, error };

struct fair_share_options {
  fair_share_oversubscription children_exceeding_parent = fair_share_oversubscription::warn;
  /// Reclaimer saturation multiplier as num/den (values < 1 are treated as 1).
  std::int64_t saturation_num = 1;
  std::int64_t saturation_den = 1;
  /// Minimum runtime when no queue on the path sets one, ms.
  std::int64_t default_min_runtime_ms = 0;
};

/// The two reclaim strategies.
enum class fair_share_strategy { none, maintain_fair_share, guarantee_deserved };

/// One victim chunk for the scenario validator.
struct fair_share_victim_chunk {
  std::size_t queue;
  const resource_vector* resources;
};

namespace detail {
inline constexpr amount fair_share_inf = std::numeric_limits<amount>::max();
[[nodiscard]] inline amount fair_share_cap(amount v) noexcept {
  return v < 0 ? fair_share_inf : v;
}
}  // namespace detail

/// The queue tree, its division and its predicates.
class fair_share_tree {
 public:
  using queue_index = std::size_t;
  static constexpr queue_index npos = static_cast<queue_index>(-1);

  /// Validates every queue (all problems at once, validation_error) and builds the tree.
  explicit fair_share_tree(std::vector<fair_share_queue_spec> specs, fair_share_options opts = {}) : opts_(opts) {
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
    limit_.assign(n * R_, fair_share_unlimited);
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
          if (opts_.children_exceeding_parent == fair_share_oversubscription::error)
            diag.add(specs_[p].name + ".spec.resources", msg);
          else
            warnings_.push_back({specs_[p].name + ".spec.resources", msg});
        }
      }
    diag.throw_if_any();
    request_.assign(n * R_, 0);
    alloc_.assign(n * R_, 0);
    alloc_np_.assign(n * R_, 0);
    fair_.assign(n * R_, 0);
    scratch_.assign(n * R_, 0);
    capacity_.assign(R_, 0);
    work_.reserve(n);
    ord_.reserve(n);
    stack_.reserve(n);
    if (opts_.saturation_den <= 0 || opts_.saturation_num < opts_.saturation_den)
      opts_.saturation_num = 1, opts_.saturation_den = 1;
  }

  // ---- lookup ---------------------------------------------------------------
  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] queue_index find(std::string_view name) const noexcept {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? npos : it->second;
  }
  [[nodiscard]] queue_index at(std::string_view name) const {
    auto q = find(name);
    if (q == npos) throw unknown_entity_error(error_id::unknown_queue, "queue", name);
    return q;
  }
  [[nodiscard]] const fair_share_queue_spec& spec(queue_index q) const { return specs_.at(q); }
  [[nodiscard]] queue_index parent(queue_index q) const { return parent_.at(q); }
  [[nodiscard]] bool is_leaf(queue_index q) const { return children_.at(q).empty(); }
  [[nodiscard]] const std::vector<diagnostic>& warnings() const noexcept { return warnings_; }
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
    check_nonnegative(request, specs_[q].name + ".request");
    std::vector<amount> next(request_);  // strong guarantee: compute then swap
    std::vector<amount> delta(R_, 0);
    for (std::size_t d = 0; d < R_; ++d) delta[d] = detail::checked_sub(request.get(rids_[d]), request_[q * R_ + d]);
    for (auto a = q; a != npos; a = parent_[a])
      for (std::size_t d = 0; d < R_; ++d) next[a * R_ + d] = detail::checked_add(next[a * R_ + d], delta[d]);
    request_.swap(next);
  }
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
    return d < 0 ? fair_share_unlimited : limit_[q * R_ + static_cast<std::size_t>(d)];
  }

  // ---- allocation checks ----------------------------------------------------
  /// From the leaf up: over limit (allocated + request > limit) and, for a
  /// non-preemptible job, over quota (non-preemptible allocated + request > quota).
  [[nodiscard]] decision check_allocation(queue_index q, const resource_vector& req, bool preemptible) const {
    for (auto a = q; a != npos; a = parent_[a]) {
      for (const auto& e : req) {
        if (e.value == 0) continue;
        const int d = dense(e.id);
        const amount lim = d < 0 ? fair_share_unlimited : limit_[a * R_ + static_cast<std::size_t>(d)];
        const amount used = d < 0 ? 0 : alloc_[a * R_ + static_cast<std::size_t>(d)];
        if (lim >= 0 && static_cast<detail::int128>(used) + e.value > lim)
          return decision::deny(reason{"fair_share", "over_limit", specs_[a].name, e.id, {}, e.value, used, lim, {}});
        if (!preemptible) {
          const amount qt = d < 0 ? 0 : quota_[a * R_ + static_cast<std::size_t>(d)];
          const amount np = d < 0 ? 0 : alloc_np_[a * R_ + static_cast<std::size_t>(d)];
          if (qt >= 0 && static_cast<detail::int128>(np) + e.value > qt)
            return decision::deny(reason{"fair_share", "over_quota", specs_[a].name, e.id, {}, e.value, np, qt, {}});
        }
      }
    }
    return decision::allow();
  }

  // ---- reclaim --------------------------------------------------------------
  /// Can the reclaimer queue reclaim at all: allocated + request <= fair share
  /// (times the saturation multiplier) in every resource of the reclaimer's own
  /// (leaf) queue; a non-preemptible job must also stay within quota. Only the
  /// leaf, as KAI's reclaimable.go CanReclaimResources (its ancestors are
  /// looked at by the strategies, at the level where the paths diverge).
  [[nodiscard]] bool can_reclaim(queue_index q, const resource_vector& req, bool preemptible) const {
    for (auto a = q; a != npos; a = npos) {
      for (const auto& e : req) {
        if (e.value == 0) continue;
        const int d = dense(e.id);
        if (d < 0) return false;
        const auto k = a * R_ + static_cast<std::size_t>(d);
        if (!within_saturated(static_cast<detail::int128>(alloc_[k]) + e.value, fair_[k])) return false;
        if (!preemptible && quota_[k] >= 0 && static_cast<detail::int128>(alloc_np_[k]) + e.value > quota_[k])
          return false;
      }
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

  /// Victim pre-filter: the victim's side (at the divergence level) is above
  /// its fair share in some resource the reclaimer asks for.
  [[nodiscard]] bool victim_prefilter(queue_index reclaimer, queue_index victim, const resource_vector& req) const {
    const auto [ra, va] = diverge(reclaimer, victim);
    if (va == npos) return false;
    (void)ra;
    for (const auto& e : req) {
      const int d = dense(e.id);
      if (e.value == 0 || d < 0) continue;
      const auto k = va * R_ + static_cast<std::size_t>(d);
      if (alloc_[k] > fair_[k]) return true;
    }
    return false;
  }

  /// Which strategy allows taking `chunk` from `victim` for a job of `req` in
  /// `reclaimer`, against the current allocation (none if neither).
  [[nodiscard]] fair_share_strategy reclaim_strategy(queue_index reclaimer, const resource_vector& req,
                                                     queue_index victim, const resource_vector& chunk) const {
    return strategy_on(alloc_, reclaimer, req, victim, chunk);
  }

  /// Scenario validator: every chunk, in order, must be allowed by a strategy
  /// checked before the chunk is subtracted; then it is subtracted along the
  /// victim's path. No allocation (uses preallocated scratch).
  [[nodiscard]] bool validate_reclaim(queue_index reclaimer, const resource_vector& req, bool preemptible,
                                      std::span<const fair_share_victim_chunk> chunks) const {
    if (!can_reclaim(reclaimer, req, preemptible)) return false;
    std::copy(alloc_.begin(), alloc_.end(), scratch_.begin());
    for (const auto& c : chunks) {
      if (strategy_on(scratch_, reclaimer, req, c.queue, *c.resources) == fair_share_strategy::none) return false;
      for (auto a = c.queue; a != npos; a = parent_[a])
        for (const auto& e : *c.resources) {
          const int d = dense(e.id);
          if (d >= 0) scratch_[a * R_ + static_cast<std::size_t>(d)] -= e.value;
        }
    }
    return true;
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
  /// True when queue a (with its job request ra) goes before b (rb). Compared
  /// at the level where the paths diverge, KAI's chain: not over-utilised
  /// first; starved first; higher priority; smaller dominant share with the
  /// job, then without; smaller fair share; earlier creation; name.
  [[nodiscard]] bool queue_before(queue_index a, const resource_vector& ra, queue_index b,
                                  const resource_vector& rb) const {
    auto [x, y] = diverge(a, b);
    if (x == npos) return false;
    const bool ox = over_utilised(x, ra), oy = over_utilised(y, rb);
    if (ox != oy) return !ox;
    const bool sx = starved(x), sy = starved(y);
    if (sx != sy) return sx;
    if (specs_[x].priority != specs_[y].priority) return specs_[x].priority > specs_[y].priority;
    if (int c = compare_share(x, &ra, y, &rb); c != 0) return c < 0;
    if (int c = compare_share(x, nullptr, y, nullptr); c != 0) return c < 0;
    detail::int128 fx = 0, fy = 0;
    for (std::size_t d = 0; d < R_; ++d) fx += fair_[x * R_ + d], fy += fair_[y * R_ + d];
    if (fx != fy) return fx < fy;
    if (specs_[x].created_ms != specs_[y].created_ms) return specs_[x].created_ms < specs_[y].created_ms;
    return specs_[x].name < specs_[y].name;
  }

 private:
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
  [[nodiscard]] bool within_saturated(detail::int128 used, amount fair) const noexcept {
    // used <= fair * num / den  <=>  used * den <= fair * num
    return used * opts_.saturation_den <= static_cast<detail::int128>(fair) * opts_.saturation_num;
  }
  void apply_alloc(queue_index q, const resource_vector& v, bool preemptible, int sign) {
    if (q >= size()) throw unknown_entity_error(error_id::unknown_queue, "queue", std::to_string(q));
    check_nonnegative(v, specs_[q].name + ".allocation");
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
        if (!preemptible) alloc_np_[k] += sign * e.value;
      }
  }

  [[nodiscard]] fair_share_strategy strategy_on(const std::vector<amount>& alloc, queue_index reclaimer,
                                                const resource_vector& req, queue_index victim,
                                                const resource_vector& chunk) const {
    const auto [ra, va] = diverge(reclaimer, victim);
    if (ra == npos) return fair_share_strategy::none;
    // maintain fair share: reclaimer side stays within its (saturated) fair
    // share, victim side stays at or above its fair share after the chunk.
    bool reclaimer_fs = true, reclaimer_dq = true;
    for (const auto& e : req) {
      const int d = dense(e.id);
      if (e.value == 0) continue;
      if (d < 0) return fair_share_strategy::none;
      const auto k = ra * R_ + static_cast<std::size_t>(d);
      const detail::int128 after = static_cast<detail::int128>(alloc[k]) + e.value;
      if (!within_saturated(after, fair_[k])) reclaimer_fs = false;
      if (quota_[k] >= 0 && after > quota_[k]) reclaimer_dq = false;
    }
    bool victim_fs = true, victim_dq = false, any = false;
    for (const auto& e : chunk) {
      const int d = dense(e.id);
      if (e.value == 0 || d < 0) continue;
      any = true;
      const auto k = va * R_ + static_cast<std::size_t>(d);
      if (static_cast<detail::int128>(alloc[k]) - e.value < fair_[k]) victim_fs = false;
      if (quota_[k] >= 0 && alloc[k] > quota_[k]) victim_dq = true;
    }
    if (!any) return fair_share_strategy::none;
    if (reclaimer_fs && victim_fs) return fair_share_strategy::maintain_fair_share;
    if (reclaimer_dq && victim_dq) return fair_share_strategy::guarantee_deserved;
    return fair_share_strategy::none;
  }

  [[nodiscard]] bool over_utilised(queue_index q, const resource_vector& req) const {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      if (static_cast<detail::int128>(alloc_[k]) + req.get(rids_[d]) > fair_[k]) return true;
    }
    return false;
  }
  [[nodiscard]] bool starved(queue_index q) const {
    for (std::size_t d = 0; d < R_; ++d) {
      const auto k = q * R_ + d;
      const amount want = std::min(detail::fair_share_cap(quota_[k]), request_[k]);
      if (alloc_[k] < want) return true;
    }
    return false;
  }
  // dominant share: max over resources of used/fair; fair 0 with used > 0 is infinite.
  [[nodiscard]] int compare_share(queue_index x, const resource_vector* rx, queue_index y,
                                  const resource_vector* ry) const {
    auto dom = [&](queue_index q, const resource_vector* r) {
      detail::int128 bn = 0, bd = 1;  // best num/den
      bool inf = false;
      for (std::size_t d = 0; d < R_; ++d) {
        const auto k = q * R_ + d;
        const detail::int128 used = static_cast<detail::int128>(alloc_[k]) + (r ? r->get(rids_[d]) : 0);
        if (used == 0) continue;
        if (fair_[k] == 0) {
          inf = true;
          continue;
        }
        if (used * bd > bn * fair_[k]) bn = used, bd = fair_[k];
      }
      return std::tuple{inf, bn, bd};
    };
    auto [ix, nx, dx] = dom(x, rx);
    auto [iy, ny, dy] = dom(y, ry);
    if (ix != iy) return ix ? 1 : -1;
    const detail::int128 l = nx * dy, r = ny * dx;
    return l < r ? -1 : (l > r ? 1 : 0);
  }

  // Division of `total[d]` among `sibs`, per resource.
  void divide(const std::vector<queue_index>& sibs, const amount* total) {
    for (std::size_t d = 0; d < R_; ++d) {
      amount remaining = total[d];
      // 1. deserved, regardless of priority and of what the parent has
      for (auto c : sibs) {
        const auto k = c * R_ + d;
        const amount want = requestable(k);
        // a single child never deserves more than the whole parent share
        const amount g = std::min({detail::fair_share_cap(quota_[k]), want, total[d]});
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
          if (weight_[k] > 0 && requestable(k) > fair_[k]) work_.push_back(ord_[m]);
        }
        remaining = water_fill(d, remaining);
        i = j;
      }
    }
  }
  [[nodiscard]] amount requestable(std::size_t k) const noexcept {
    return std::min(detail::fair_share_cap(limit_[k]), request_[k]);
  }
  // Water-filling among work_ (one bucket) in whole units. Returns what is left.
  amount water_fill(std::size_t d, amount remaining) {
    while (remaining > 0 && !work_.empty()) {
      detail::int128 W = 0;
      for (auto c : work_) W += weight_[c * R_ + d];
      // satisfy every queue whose proportional share covers its whole want
      bool capped = false;
      amount given = 0;
      for (auto& c : work_) {
        const auto k = c * R_ + d;
        const amount want = requestable(k) - fair_[k];
        const detail::int128 share = static_cast<detail::int128>(remaining) * weight_[k] / W;
        if (share >= want) {
          fair_[k] += want, given += want, capped = true;
          c = npos;
        }
      }
      if (capped) {
        remaining -= given;
        work_.erase(std::remove(work_.begin(), work_.end(), npos), work_.end());
        continue;
      }
      // nobody capped: floor shares, then the remainder pass
      for (auto c : work_) {
        const auto k = c * R_ + d;
        const auto share = static_cast<amount>(static_cast<detail::int128>(remaining) * weight_[k] / W);
        fair_[k] += share, given += share;
      }
      const amount left = remaining - given;  // < work_.size()
      std::sort(work_.begin(), work_.end(), [&](auto a, auto b) {
        const auto fa = static_cast<detail::int128>(remaining) * weight_[a * R_ + d] % W;
        const auto fb = static_cast<detail::int128>(remaining) * weight_[b * R_ + d] % W;
        if (fa != fb) return fa > fb;
        if (specs_[a].created_ms != specs_[b].created_ms) return specs_[a].created_ms < specs_[b].created_ms;
        return specs_[a].name < specs_[b].name;
      });
      for (amount u = 0; u < left; ++u) fair_[work_[static_cast<std::size_t>(u)] * R_ + d] += 1;
      return 0;
    }
    return remaining;
  }

  fair_share_options opts_;
  std::vector<fair_share_queue_spec> specs_;
  std::unordered_map<std::string, queue_index> index_;
  std::vector<queue_index> parent_, roots_;
  std::vector<std::vector<queue_index>> children_;
  std::vector<int> depth_;
  std::vector<resource_id> rids_;
  std::vector<int> dense_;
  std::size_t R_ = 0;
  std::vector<amount> quota_, weight_, limit_, request_, alloc_, alloc_np_, fair_, capacity_;
  mutable std::vector<amount> scratch_;
  std::vector<queue_index> work_, ord_, stack_;
  std::vector<diagnostic> warnings_;
};

/// Policy adapter: job.queue = leaf queue, job.request = request; check =
/// allocation within limit (and quota for non-preemptible jobs); victims =
/// reclaim candidates in other queues (strategies per victim) then preempt
/// candidates in the same queue (strictly lower priority, preemptible, past
/// the minimum runtime). Call tree().compute() after demand changes.
class fair_share_policy {
 public:
  explicit fair_share_policy(fair_share_tree tree) : tree_(std::move(tree)) {}
  [[nodiscard]] static constexpr std::string_view policy_name() noexcept { return "fair_share"; }
  [[nodiscard]] fair_share_tree& tree() noexcept { return tree_; }
  [[nodiscard]] const fair_share_tree& tree() const noexcept { return tree_; }
  void set_now_ms(std::int64_t now) noexcept { now_ms_ = now; }
  /// Host without its own placement (quota-sim, tests): deny, with the rule
  /// `cluster_full`, a job whose request does not fit in the capacity given to
  /// the tree next to what is allocated, so that the host asks victims() and
  /// KAI's reclaim runs. Off by default: in KAI the cluster is the
  /// placement's business, not the proportion plugin's.
  void set_deny_beyond_capacity(bool on) noexcept { deny_beyond_capacity_ = on; }

  [[nodiscard]] decision check(const job& j) const {
    const auto q = tree_.find(j.queue);
    if (q == fair_share_tree::npos)
      return decision::deny(reason{"fair_share", "unknown_queue", j.queue, no_resource, {}, 0, 0, 0, "unknown queue"});
    if (!tree_.is_leaf(q))
      return decision::deny(
          reason{"fair_share", "not_a_leaf_queue", j.queue, no_resource, {}, 0, 0, 0, "jobs go to leaf queues"});
    auto d = tree_.check_allocation(q, j.request, j.preemptible);
    if (!d.allowed() || !deny_beyond_capacity_) return d;
    for (auto r : tree_.resources()) {
      const amount want = j.request.get(r);
      if (want == 0) continue;
      detail::int128 used = 0;
      for (std::size_t x = 0; x < tree_.size(); ++x)
        if (tree_.parent(x) == fair_share_tree::npos) used += tree_.allocated(x, r);
      const amount cap = tree_.capacity(r);
      if (used + want > cap)
        return decision::deny(reason{"fair_share",
                                     "cluster_full",
                                     j.queue,
                                     r,
                                     {},
                                     want,
                                     static_cast<amount>(used),
                                     cap,
                                     "request exceeds the free capacity"});
    }
    return d;
  }
  void commit(const job& j) {
    if (jobs_.count(j.id)) throw state_error(error_id::state_duplicate, "job '" + j.id + "' already committed");
    const auto q = tree_.at(j.queue);
    jobs_.emplace(j.id, running{q, j.request, j.preemptible, j.priority, j.created_ms});  // may throw: no change yet
    try {
      tree_.allocate(q, j.request, j.preemptible);
    } catch (...) {
      jobs_.erase(j.id);
      throw;
    }
  }
  void release(std::string_view id) {
    auto it = jobs_.find(std::string(id));
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    tree_.deallocate(it->second.queue, it->second.request, it->second.preemptible);
    jobs_.erase(it);
  }
  void victims(const job& j, std::vector<victim>& out) const {
    const auto q = tree_.find(j.queue);
    if (q == fair_share_tree::npos) return;
    if (tree_.can_reclaim(q, j.request, j.preemptible)) {
      for (const auto& [id, r] : jobs_) {
        if (r.queue == q || !r.preemptible || !tree_.victim_prefilter(q, r.queue, j.request)) continue;
        if (tree_.reclaim_strategy(q, j.request, r.queue, r.request) != fair_share_strategy::none)
          out.push_back(victim{id, "fair_share", "reclaim", tree_.spec(r.queue).name});
      }
    }
    for (const auto& [id, r] : jobs_)
      if (r.queue == q && tree_.can_preempt(j.priority, r.queue, r.priority, r.preemptible, r.started_ms, now_ms_))
        out.push_back(victim{id, "fair_share", "preempt", tree_.spec(r.queue).name});
  }

 private:
  struct running {
    fair_share_tree::queue_index queue;
    resource_vector request;
    bool preemptible;
    std::int32_t priority;
    std::int64_t started_ms;
  };
  fair_share_tree tree_;
  std::map<std::string, running, std::less<>> jobs_;
  std::int64_t now_ms_ = 0;
  bool deny_beyond_capacity_ = false;
};

static_assert(policy<fair_share_policy>);

}  // namespace quota
