// SPDX-License-Identifier: Apache-2.0
// quota/sharing_pools.hpp — tenant-scoped sharing pools for elastic quotas: borrowing
// stays inside a pool first and crosses pools only where both sides allow it.
// Docs: docs/extra-policies.md
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view sharing_pools_model_name = "sharing_pools";

/// One elastic quota of a pool: its guaranteed `min` and its `max`, over the
/// namespaces it covers.
struct pool_quota_spec {
  std::string name;
  std::vector<std::string> namespaces;
  resource_vector min;
  limit_vector max;  // absent dimension = unlimited
};

/// A pool: its quotas, and whether they lend to and borrow from other pools.
struct sharing_pool_spec {
  std::string name;
  std::vector<pool_quota_spec> quotas;
  bool lend_across = false;
  bool borrow_across = false;
};

/// Where a job's capacity comes from.
struct borrow_plan {
  bool allowed = true;
  std::string quota, pool;
  resource_vector in_quota;                                     // the quota's own unused min
  resource_vector in_pool;                                      // other quotas' unused min in the same pool
  std::vector<std::pair<std::string, resource_vector>> across;  // pool name -> amount
};

class sharing_pools_policy {
 public:
  static constexpr std::uint32_t npos = 0xFFFFFFFFu;

  explicit sharing_pools_policy(std::vector<sharing_pool_spec> pools, const resource_registry* reg = nullptr)
      : reg_(reg) {
    // each problem at its item's path in the configuration (pools[0].quotas[1].min)
    std::vector<diagnostic> problems;
    std::unordered_map<std::string, std::string> pool_names, quota_names, ns_owner;
    for (std::size_t p = 0; p < pools.size(); ++p) {
      const auto& ps = pools[p];
      const std::string pp = "pools[" + std::to_string(p) + "]";
      if (ps.name.empty()) problems.push_back({pp + ".name", "empty name"});
      if (!pool_names.emplace(ps.name, pp).second)
        problems.push_back({pp + ".name", "pool '" + ps.name + "' is named twice"});
      if (ps.quotas.empty()) problems.push_back({pp + ".quotas", "pool '" + ps.name + "' has no quota"});
      for (std::size_t k = 0; k < ps.quotas.size(); ++k) {
        const auto& q = ps.quotas[k];
        const std::string qp = pp + ".quotas[" + std::to_string(k) + "]";
        const std::string who = "pool " + ps.name + " quota " + q.name + ": ";
        if (q.name.empty()) problems.push_back({qp + ".name", "empty name"});
        if (!quota_names.emplace(q.name, qp).second)
          problems.push_back({qp + ".name", "quota '" + q.name + "' is named twice"});
        if (q.namespaces.empty()) problems.push_back({qp + ".namespaces", who + "no namespace"});
        for (const auto& ns : q.namespaces)
          if (ns.empty() || !ns_owner.emplace(ns, q.name).second)
            problems.push_back(
                {qp + ".namespaces", who + "namespace '" + ns + "' is empty or already in quota " + ns_owner[ns]});
        for (const auto& e : q.min)
          if (e.value < 0) problems.push_back({qp + ".min", who + "min " + res_name(e.id) + " is negative"});
        for (const auto& e : q.max)
          if (e.value < 0) problems.push_back({qp + ".max", who + "max " + res_name(e.id) + " is negative"});
        for (const auto& e : q.min)
          if (auto* m = q.max.find(e.id); m && *m < e.value)
            problems.push_back({qp + ".min", who + "min " + res_name(e.id) + " " + std::to_string(e.value) +
                                                 " is greater than max " + std::to_string(*m)});
      }
    }
    if (!problems.empty()) throw config_error(std::move(problems));
    for (std::size_t p = 0; p < pools.size(); ++p) {
      pool_state ps;
      ps.name = pools[p].name;
      ps.lend = pools[p].lend_across;
      ps.borrow = pools[p].borrow_across;
      for (auto& q : pools[p].quotas) {
        const auto qi = static_cast<std::uint32_t>(quotas_.size());
        for (const auto& e : q.min) {
          ps.capacity.set(e.id, detail::checked_add(ps.capacity.get(e.id), e.value));
          governed_.set(e.id, 1);
        }
        for (const auto& ns : q.namespaces) ns_.emplace(ns, qi);
        quotas_.push_back(quota_state{std::move(q), static_cast<std::uint32_t>(p), {}});
      }
      pools_.push_back(std::move(ps));
    }
    for (const auto& ps : pools_)
      if (ps.lend) lendable_.add_in_place(ps.capacity);
  }

  [[nodiscard]] std::string_view policy_name() const noexcept { return sharing_pools_model_name; }

  /// Names resources from `reg` from now on (reasons hold views into it);
  /// nullptr: well-known names only. The registry must outlive the policy.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }

  [[nodiscard]] std::uint32_t quota_of(std::string_view ns) const noexcept {
    auto it = ns_.find(ns);
    return it == ns_.end() ? npos : it->second;
  }

  /// Allocates nothing when allowed. A negative amount: validation_error.
  [[nodiscard]] decision check(const job& j) const {
    if (j.request.any_negative()) throw validation_error("job " + j.id + ".request", "negative amount");
    const std::uint32_t qi = quota_of(j.ns);
    if (qi == npos) return decision::allow();
    const auto& q = quotas_[qi];
    const auto& p = pools_[q.pool];
    decision d;
    for (const auto& e : j.request) {
      if (e.value <= 0) continue;
      const amount u = q.used.get(e.id);
      if (const amount* m = q.spec.max.find(e.id); m && detail::int128{u} + e.value > *m)
        d.add(reason{sharing_pools_model_name, "over_max", q.spec.name, e.id, res_view(e.id), e.value, u, *m, {}});
      if (!governed_.has(e.id)) continue;
      const amount free = p.capacity.get(e.id) - p.used.get(e.id);
      if (e.value <= free) continue;
      if (!p.borrow) {
        d.add(reason{sharing_pools_model_name, "pool_exhausted", p.name + "/" + q.spec.name, e.id, res_view(e.id),
                     e.value, p.used.get(e.id), p.capacity.get(e.id),
                     reason_note("pool $0 may not borrow across pools", {p.name})});
        continue;
      }
      const amount others = lendable_.get(e.id) - (p.lend ? free : 0);
      if (e.value - free > others)
        d.add(reason{sharing_pools_model_name, "pools_exhausted", p.name + "/" + q.spec.name, e.id, res_view(e.id),
                     e.value, p.used.get(e.id), detail::checked_add(p.capacity.get(e.id), others),
                     reason_note("pool $0 has #0 free and the lending pools #1", {p.name}, {free, others})});
    }
    return d;
  }

  /// Where the job's capacity would come from (allowed = check(j).allowed()).
  [[nodiscard]] borrow_plan plan(const job& j) const {
    borrow_plan out;
    out.allowed = check(j).allowed();
    const std::uint32_t qi = quota_of(j.ns);
    if (qi == npos) return out;
    std::vector<std::pair<std::uint32_t, resource_vector>> charges;
    charges_of(qi, j.request, charges);
    fill_plan(qi, charges, out);
    return out;
  }

  /// Charges the job as plan() says. Duplicate id: state_error; a negative
  /// amount: validation_error (nothing changes). Allocates nothing once warm:
  /// the job's entry reuses a released job's node and its buffers.
  void commit(const job& j) {
    // one lookup, the duplicate test too; every field is assigned below
    const auto [it, inserted] = jobs_pool_.emplace_key(jobs_, j.id);
    if (!inserted) throw state_error(error_id::state_duplicate, "sharing_pools: job '" + j.id + "' is already running");
    if (j.request.any_negative()) {
      jobs_pool_.erase(jobs_, it);
      throw validation_error("job " + j.id + ".request", "negative amount");
    }
    const std::uint32_t qi = quota_of(j.ns);
    entry& e = it->second;
    e.quota = qi;
    e.seq = ++seq_;
    if (qi == npos) {  // not governed: only remembered
      e.request.clear();
      e.charges.clear();
      e.in_quota.clear();
      e.in_pool.clear();
      return;
    }
    try {
      e.request = j.request;
      charges_of(qi, j.request, e.charges);
      split_own(qi, e.charges, e.in_quota, e.in_pool);
    } catch (...) {
      jobs_pool_.erase(jobs_, it);
      throw;
    }
    // Usage grows in place when no sum can throw (every dimension present,
    // no overflow: the case once warm; lendable_ only loses capacity the
    // lending pools had free, so its running difference stays at or above
    // zero); else every sum is built aside first and swapped in, so that a
    // failure changes nothing.
    bool in_place = quotas_[qi].used.can_add_in_place(j.request);
    for (std::size_t k = 0; in_place && k < e.charges.size(); ++k) {
      const auto& [pi, v] = e.charges[k];
      in_place = pools_[pi].used.can_add_in_place(v) && (!pools_[pi].lend || lendable_.can_sub_in_place(v));
    }
    if (!in_place) {
      try {
        resource_vector qused = quotas_[qi].used;
        qused.add_in_place(j.request);
        std::vector<resource_vector> pused(e.charges.size());
        resource_vector lendable = lendable_;
        for (std::size_t k = 0; k < e.charges.size(); ++k) {
          const auto& [pi, v] = e.charges[k];
          pused[k] = pools_[pi].used;
          pused[k].add_in_place(v);
          if (pools_[pi].lend) lendable.sub_in_place(v);
        }
        std::swap(quotas_[qi].used, qused);
        for (std::size_t k = 0; k < e.charges.size(); ++k) std::swap(pools_[e.charges[k].first].used, pused[k]);
        std::swap(lendable_, lendable);
      } catch (...) {
        jobs_pool_.erase(jobs_, it);
        throw;
      }
    } else {  // checked above: none of these throws
      quotas_[qi].used.add_in_place(j.request);
      for (const auto& [pi, v] : e.charges) {
        pools_[pi].used.add_in_place(v);
        if (pools_[pi].lend) lendable_.sub_in_place(v);
      }
    }
    count_candidates(e, true);
  }

  /// Gives the job's charges back. Unknown id: unknown_entity_error.
  void release(std::string_view id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    const auto& e = it->second;
    if (e.quota != npos) {
      count_candidates(e, false);
      quotas_[e.quota].used.sub_in_place(e.request);
      for (const auto& [pi, v] : e.charges) {
        pools_[pi].used.sub_in_place(v);
        if (pools_[pi].lend) lendable_.add_in_place(v);
      }
    }
    jobs_pool_.erase(jobs_, it);
  }

  void victims(const job& j, std::vector<victim>& out) const {
    const std::uint32_t qi = quota_of(j.ns);
    if (qi == npos) return;
    const auto& q = quotas_[qi];
    bool below_min = false;
    for (const auto& e : j.request)
      if (e.value > 0 && q.used.get(e.id) < q.spec.min.get(e.id)) below_min = true;
    if (!below_min) return;
    const std::uint32_t pool = q.pool;
    if (pools_[pool].candidates == q.borrowing) return;  // none but its own
    std::vector<std::pair<std::uint64_t, const std::string*>> across, inside;
    for (const auto& [id, e] : jobs_) {
      if (e.quota == npos || e.quota == qi) continue;
      if (quotas_[e.quota].pool != pool) {
        for (const auto& [pi, v] : e.charges)
          if (pi == pool && !v.is_zero()) across.emplace_back(e.seq, &id);
      } else if (borrowed_in_pool(e)) {
        inside.emplace_back(e.seq, &id);
      }
    }
    auto newest = [](const auto& a, const auto& b) { return a.first > b.first; };
    std::sort(across.begin(), across.end(), newest);
    std::sort(inside.begin(), inside.end(), newest);
    for (const auto& [s, id] : across)
      out.push_back(victim{*id, sharing_pools_model_name, "borrowed_across_pools", pools_[pool].name});
    for (const auto& [s, id] : inside)
      out.push_back(victim{*id, sharing_pools_model_name, "borrowed_in_pool", pools_[pool].name});
  }

  // ---- introspection ---------------------------------------------------------
  [[nodiscard]] std::size_t pool_count() const noexcept { return pools_.size(); }
  [[nodiscard]] std::string_view pool_name(std::size_t p) const { return pools_.at(p).name; }
  [[nodiscard]] const resource_vector& pool_capacity(std::size_t p) const { return pools_.at(p).capacity; }
  [[nodiscard]] const resource_vector& pool_used(std::size_t p) const { return pools_.at(p).used; }
  [[nodiscard]] std::size_t quota_count() const noexcept { return quotas_.size(); }
  [[nodiscard]] const pool_quota_spec& quota_spec(std::size_t q) const { return quotas_.at(q).spec; }
  [[nodiscard]] const resource_vector& quota_used(std::size_t q) const { return quotas_.at(q).used; }
  /// The plan each running job was charged by, by job id (unordered).
  template <class F>
  void for_each_job(F&& fn) const {
    for (const auto& [id, e] : jobs_) {
      if (e.quota == npos) continue;
      borrow_plan p;
      p.quota = quotas_[e.quota].spec.name;
      p.pool = pools_[quotas_[e.quota].pool].name;
      p.in_quota = e.in_quota;
      p.in_pool = e.in_pool;
      for (const auto& [pi, v] : e.charges)
        if (pi != quotas_[e.quota].pool) p.across.emplace_back(pools_[pi].name, v);
      fn(std::string_view(id), p);
    }
  }

 private:
  struct quota_state {
    pool_quota_spec spec;
    std::uint32_t pool = 0;
    resource_vector used;
    std::size_t borrowing = 0;  // its running jobs that borrow in their pool
  };
  struct pool_state {
    std::string name;
    bool lend = false, borrow = false;
    resource_vector capacity, used;
    std::size_t candidates = 0;  // running jobs victims() may name for a quota of this pool
  };
  struct entry {
    std::uint32_t quota = npos;
    resource_vector request;
    std::vector<std::pair<std::uint32_t, resource_vector>> charges;  // own pool first
    resource_vector in_quota, in_pool;                               // split of the own-pool charge
    std::uint64_t seq = 0;
  };

  // The pool charges of a request of quota qi (own pool first, then lenders),
  // into `out` (its buffers are reused).
  void charges_of(std::uint32_t qi, const resource_vector& req,
                  std::vector<std::pair<std::uint32_t, resource_vector>>& out) const {
    const std::uint32_t own = quotas_[qi].pool;
    std::size_t n = 0;  // charges in use; out[n..] are spare
    const auto charge_of = [&](std::uint32_t p) -> resource_vector& {
      for (std::size_t k = 0; k < n; ++k)
        if (out[k].first == p) return out[k].second;
      if (n == out.size()) out.emplace_back();
      out[n].first = p;
      out[n].second.clear();
      return out[n++].second;
    };
    charge_of(own);
    for (const auto& e : req) {
      if (e.value <= 0 || !governed_.has(e.id)) continue;
      const amount free = std::max<amount>(0, pools_[own].capacity.get(e.id) - pools_[own].used.get(e.id));
      const amount here = std::min(e.value, free);
      if (here > 0) out[0].second.set(e.id, here);
      amount rest = e.value - here;
      if (rest <= 0 || !pools_[own].borrow) continue;
      for (std::uint32_t p = 0; p < pools_.size() && rest > 0; ++p) {
        if (p == own || !pools_[p].lend) continue;
        const amount f = std::max<amount>(0, pools_[p].capacity.get(e.id) - pools_[p].used.get(e.id));
        const amount take = std::min(rest, f);
        if (take <= 0) continue;
        charge_of(p).set(e.id, take);
        rest -= take;
      }
    }
    out.resize(n);
  }
  // The own-pool charge of quota qi split into what its own unused min covers
  // (in_quota) and what other quotas of the pool lend (in_pool).
  void split_own(std::uint32_t qi, const std::vector<std::pair<std::uint32_t, resource_vector>>& charges,
                 resource_vector& in_quota, resource_vector& in_pool) const {
    const auto& q = quotas_[qi];
    in_quota.clear();
    in_pool.clear();
    for (const auto& [pi, v] : charges) {
      if (pi != q.pool) continue;
      for (const auto& e : v) {
        const amount own_free = std::max<amount>(0, q.spec.min.get(e.id) - q.used.get(e.id));
        const amount mine = std::min(e.value, own_free);
        if (mine > 0) in_quota.set(e.id, mine);
        if (e.value - mine > 0) in_pool.set(e.id, e.value - mine);
      }
    }
  }
  void fill_plan(std::uint32_t qi, const std::vector<std::pair<std::uint32_t, resource_vector>>& charges,
                 borrow_plan& out) const {
    const auto& q = quotas_[qi];
    out.quota = q.spec.name;
    out.pool = pools_[q.pool].name;
    // in quota: up to the quota's unused min before the job
    split_own(qi, charges, out.in_quota, out.in_pool);
    for (const auto& [pi, v] : charges)
      if (pi != q.pool) out.across.emplace_back(pools_[pi].name, v);
  }
  static bool borrowed_in_pool(const entry& e) noexcept { return !e.in_pool.is_zero(); }
  // The counts behind victims()' early exit: a job borrowing in its own pool
  // is a candidate there (unless the requester is its own quota), a job with
  // a charge on another pool is a candidate in that pool.
  void count_candidates(const entry& e, bool add) noexcept {
    const std::uint32_t own = quotas_[e.quota].pool;
    auto bump = [add](std::size_t& n) { n = add ? n + 1 : n - 1; };
    if (borrowed_in_pool(e)) {
      bump(pools_[own].candidates);
      bump(quotas_[e.quota].borrowing);
    }
    for (const auto& [pi, v] : e.charges)
      if (pi != own && !v.is_zero()) bump(pools_[pi].candidates);
  }
  std::string res_name(resource_id id) const { return detail::resource_label(reg_, id); }
  std::string_view res_view(resource_id id) const noexcept { return detail::resource_label_view(reg_, id); }

  const resource_registry* reg_ = nullptr;
  std::vector<quota_state> quotas_;
  std::vector<pool_state> pools_;
  resource_vector governed_;  // 1 for every resource some min lists
  resource_vector lendable_;  // sum of free capacity of the lending pools
  std::unordered_map<std::string, std::uint32_t, detail::string_hash, std::equal_to<>> ns_;
  using job_map = std::unordered_map<std::string, entry, detail::string_hash, std::equal_to<>>;
  job_map jobs_;
  // spare nodes: an admission and a release allocate nothing once warm
  detail::node_pool<job_map> jobs_pool_;
  std::uint64_t seq_ = 0;
};

static_assert(policy<sharing_pools_policy>);

}  // namespace quota
