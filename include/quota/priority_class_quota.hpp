// SPDX-License-Identifier: Apache-2.0
// quota/priority_class_quota.hpp — min and max per (tenant, PriorityClass), composed
// with whatever model holds the tenant's overall quota.
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
inline constexpr std::string_view priority_class_quota_model_name = "priority_class_quota";

struct priority_class_limits {
  resource_vector min;
  limit_vector max;  // absent dimension = not capped
};

class priority_class_quota_policy {
 public:
  enum class tenant_key : std::uint8_t { queue, ns, user };

  explicit priority_class_quota_policy(tenant_key key = tenant_key::queue, const resource_registry* reg = nullptr)
      : key_(key), reg_(reg) {}

  [[nodiscard]] std::string_view policy_name() const noexcept { return priority_class_quota_model_name; }

  /// Limits of (tenant, class); tenant "*" applies to every tenant without
  /// its own entry for that class. Bad values: config_error (validation 201), nothing changes.
  void set(std::string_view tenant, std::string_view cls, resource_vector min, limit_vector max) {
    const std::string item = "priority class quota " + std::string(tenant) + "/" + std::string(cls);
    if (tenant.empty()) throw config_error(item + ": empty tenant name");
    if (cls.empty()) throw config_error(item + ": empty priority class name");
    for (const auto& e : min)
      if (e.value < 0)
        throw config_error(item + ": min " + res_name(e.id) + " is negative");
    for (const auto& e : max)
      if (e.value < 0)
        throw config_error(item + ": max " + res_name(e.id) + " is negative");
    for (const auto& e : min)
      if (auto* m = max.find(e.id); m && *m < e.value)
        throw config_error(item + ": min " + res_name(e.id) + " " +
                                                                std::to_string(e.value) + " is greater than max " +
                                                                std::to_string(*m));
    auto& list = tenants_[std::string(tenant)];
    for (auto& ps : list)
      if (ps.cls == cls) {
        ps.lim = priority_class_limits{std::move(min), std::move(max)};
        ps.own = true;
        return;
      }
    list.push_back(pair_state{std::string(cls), true, priority_class_limits{std::move(min), std::move(max)}, {}});
  }

  /// Names resources from `reg` from now on (reasons hold views into it);
  /// nullptr: well-known names only. The registry must outlive the policy.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }

  /// The limits that apply to (tenant, cls), or nullptr.
  [[nodiscard]] const priority_class_limits* limits_of(std::string_view tenant, std::string_view cls) const noexcept {
    if (const auto* p = find_pair(tenant, cls); p && p->own) return &p->lim;
    const auto* d = find_pair("*", cls);
    return d && d->own ? &d->lim : nullptr;
  }
  /// Usage of (tenant, cls) now (empty vector when none).
  [[nodiscard]] const resource_vector& used(std::string_view tenant, std::string_view cls) const noexcept {
    const auto* p = find_pair(tenant, cls);
    return p ? p->used : none_;
  }

  [[nodiscard]] decision check(const job& j) const {
    reject_negative(j);
    const std::string& t = key_of(j);
    if (t.empty() || j.priority_class.empty()) return decision::allow();
    // one lookup for a pair with its own limits (the common case)
    const auto* p = find_pair(t, j.priority_class);
    const priority_class_limits* lim = p && p->own ? &p->lim : limits_of(t, j.priority_class);
    if (!lim) return decision::allow();
    const resource_vector& u = p ? p->used : none_;
    decision d;
    for (const auto& e : j.request) {
      if (e.value <= 0) continue;
      const amount* m = lim->max.find(e.id);
      if (!m) continue;
      const amount now = u.get(e.id);
      if (detail::int128{now} + e.value > *m)
        d.add(reason{priority_class_quota_model_name, "priority_class_over_max", t + "/" + j.priority_class, e.id,
                     res_view(e.id), e.value, now, *m,
                     reason_note("tenant $0 may use at most #0 of $1 at priority class $2",
                                 {t, res_name(e.id), j.priority_class}, {*m})});
    }
    return d;
  }

  /// Accounts the job to its (tenant, class) when that pair has limits.
  /// Duplicate id: state_error, nothing changes.
  void commit(const job& j) {
    // first (one lookup, the duplicate test too): a later failure erases the entry
    const auto [at, inserted] = jobs_pool_.emplace_key(jobs_, j.id);  // every field is assigned below
    if (!inserted)
      throw state_error(error_id::state_duplicate, "priority_class_quota: job '" + j.id + "' is already running");
    entry& e = at->second;
    resource_vector* u = nullptr;
    try {
      reject_negative(j);
      e.priority = j.priority;
      e.seq = seq_ + 1;  // seq_ moves when the commit succeeds
      e.counted = false;
      const std::string& t = key_of(j);
      if (t.empty() || j.priority_class.empty() || !limits_of(t, j.priority_class)) {  // not counted
        e.tenant.clear();
        e.cls.clear();
        e.request.clear();
        ++seq_;
        return;
      }
      // assigned into a reused node's strings: their capacity stays
      e.tenant = t;
      e.cls = j.priority_class;
      e.request = j.request;
      auto& list = tenants_[t];  // may allocate: nothing else changed yet
      for (auto& ps : list)
        if (ps.cls == j.priority_class) u = &ps.used;
      if (!u) {
        list.push_back(pair_state{j.priority_class, false, {}, {}});
        try {
          list.back().used.add_in_place(j.request);  // checked
        } catch (...) {
          list.pop_back();
          throw;
        }
        e.counted = true;
        ++seq_;
        return;
      }
      u->add_in_place(j.request);  // checked, strong
    } catch (...) {
      jobs_pool_.erase(jobs_, at);
      throw;
    }
    e.counted = true;
    ++seq_;
  }

  /// Gives the job's usage back. Unknown id: unknown_entity_error.
  void release(std::string_view id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    if (it->second.counted)
      if (auto ut = tenants_.find(it->second.tenant); ut != tenants_.end())
        for (auto& ps : ut->second)
          if (ps.cls == it->second.cls) ps.used.sub_in_place(it->second.request);
    jobs_pool_.erase(jobs_, it);
  }

  /// Over-min jobs of the tenant's other classes with lower priority, newest first.
  void victims(const job& j, std::vector<victim>& out) const {
    const std::string& t = key_of(j);
    auto ut = tenants_.find(t);
    if (t.empty() || t == "*" || ut == tenants_.end()) return;
    for (const auto& ps : ut->second) {
      const std::string& cls = ps.cls;
      if (cls == j.priority_class || ps.used.is_zero()) continue;
      const auto* lim = limits_of(t, cls);
      if (!lim) continue;
      std::vector<std::pair<std::uint64_t, const std::pair<const std::string, entry>*>> members;
      for (const auto& kv : jobs_)
        if (kv.second.counted && kv.second.tenant == t && kv.second.cls == cls)
          members.emplace_back(kv.second.seq, &kv);
      std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      resource_vector cum;
      std::vector<const std::pair<const std::string, entry>*> over;
      for (const auto& [seq, kv] : members) {
        cum.add_in_place(kv->second.request);
        bool above = false;
        for (const auto& e : j.request)
          if (e.value > 0 && cum.get(e.id) > lim->min.get(e.id)) above = true;
        if (above && kv->second.priority < j.priority) over.push_back(kv);
      }
      for (auto it = over.rbegin(); it != over.rend(); ++it)
        out.push_back(victim{(*it)->first, priority_class_quota_model_name, "over_priority_class_min", t + "/" + cls});
    }
  }

  /// Calls fn(tenant, class, used, limits*) for every pair with usage or own limits.
  template <class F>
  void for_each_pair(F&& fn) const {
    for (const auto& [t, list] : tenants_) {
      if (t == "*") continue;
      for (const auto& ps : list) fn(std::string_view(t), std::string_view(ps.cls), ps.used, limits_of(t, ps.cls));
    }
  }

 private:
  /// A negative request would lower usage below what runs: bad input, not a denial.
  static void reject_negative(const job& j) {
    if (j.request.any_negative()) throw validation_error("job " + j.id + ".request", "negative amount");
  }

  struct entry {
    std::string tenant, cls;
    resource_vector request;
    std::int32_t priority = 0;
    std::uint64_t seq = 0;
    bool counted = false;
  };
  struct pair_state {
    std::string cls;
    bool own = false;  // lim is this pair's own entry (else the "*" entry applies)
    priority_class_limits lim;
    resource_vector used;
  };

  const pair_state* find_pair(std::string_view tenant, std::string_view cls) const noexcept {
    auto it = tenants_.find(tenant);
    if (it == tenants_.end()) return nullptr;
    for (const auto& ps : it->second)
      if (ps.cls == cls) return &ps;
    return nullptr;
  }
  const std::string& key_of(const job& j) const noexcept {
    switch (key_) {
      case tenant_key::queue:
        return j.queue;
      case tenant_key::ns:
        return j.ns;
      case tenant_key::user:
        return j.user;
    }
    return j.queue;
  }
  std::string res_name(resource_id id) const { return detail::resource_label(reg_, id); }
  std::string_view res_view(resource_id id) const noexcept { return detail::resource_label_view(reg_, id); }

  tenant_key key_;
  const resource_registry* reg_ = nullptr;
  std::unordered_map<std::string, std::vector<pair_state>, detail::string_hash, std::equal_to<>> tenants_;
  inline static const resource_vector none_{};
  using job_map = std::unordered_map<std::string, entry, detail::string_hash, std::equal_to<>>;
  job_map jobs_;
  detail::node_pool<job_map> jobs_pool_;  // an admission after a release allocates no node
  std::uint64_t seq_ = 0;
};

static_assert(policy<priority_class_quota_policy>);

}  // namespace quota
