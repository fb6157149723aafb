// SPDX-License-Identifier: Apache-2.0
// quota/running_limits.hpp — running-job limits for any queue model: at most N jobs
// running at once per queue, per user and per namespace.
// Docs: docs/extra-policies.md
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>

namespace quota {

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view running_limits_model_name = "running_limits";

class running_limits_policy {
 public:
  enum class scope : std::uint8_t { queue = 0, user = 1, ns = 2 };
  static constexpr std::array<std::string_view, 3> scope_names{"queue", "user", "namespace"};

  [[nodiscard]] std::string_view policy_name() const noexcept { return running_limits_model_name; }

  /// Limit for one named entity of a scope; replaces any earlier one.
  void set_limit(scope s, std::string_view name, std::int64_t max_running) {
    check_value(s, name, max_running);
    auto& sc = scopes_[idx(s)];
    if (auto it = sc.entities.find(name); it != sc.entities.end()) {
      if (!it->second.limit) ++sc.own_limits;
      it->second.limit = max_running;
    } else {
      sc.entities.emplace(std::string(name), entity{max_running, 0});
      ++sc.own_limits;
    }
  }
  /// Limit for every entity of the scope that has no entry of its own ("*").
  void set_default(scope s, std::int64_t max_running) {
    check_value(s, "*", max_running);
    scopes_[idx(s)].fallback = max_running;
  }
  void clear_limits() noexcept {
    for (auto& sc : scopes_) {
      for (auto it = sc.entities.begin(); it != sc.entities.end();) {
        if (it->second.running == 0) {
          it = sc.entities.erase(it);
        } else {
          it->second.limit.reset();
          ++it;
        }
      }
      sc.fallback.reset();
      sc.own_limits = 0;
    }
  }

  /// The limit that applies to `name` in scope `s`, if any.
  [[nodiscard]] std::optional<std::int64_t> limit_of(scope s, std::string_view name) const {
    const auto& sc = scopes_[idx(s)];
    if (auto it = sc.entities.find(name); it != sc.entities.end() && it->second.limit) return it->second.limit;
    return sc.fallback;
  }
  /// Jobs running now in scope `s` for `name`.
  [[nodiscard]] std::int64_t running(scope s, std::string_view name) const {
    const auto& sc = scopes_[idx(s)];
    auto it = sc.entities.find(name);
    return it == sc.entities.end() ? 0 : it->second.running;
  }

  /// At most one lookup per scope (none in a scope without any limit): an
  /// entity's own limit and its running count live in the same table entry.
  [[nodiscard]] decision check(const job& j) const {
    decision d;
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string& name = key_of(static_cast<scope>(s), j);
      if (name.empty()) continue;
      const auto& sc = scopes_[s];
      if (sc.own_limits == 0 && !sc.fallback) continue;  // no limit in this scope: nothing to look up
      std::int64_t now = 0;
      std::optional<std::int64_t> lim = sc.fallback;
      if (auto it = sc.entities.find(name); it != sc.entities.end()) {
        now = it->second.running;
        if (it->second.limit) lim = it->second.limit;
      }
      if (!lim) continue;
      if (now + 1 > *lim)
        d.add(reason{running_limits_model_name,
                     "max_running_jobs",
                     std::string(scope_names[s]) + ":" + name,
                     no_resource,
                     {},
                     1,
                     now,
                     *lim,
                     ""});
    }
    return d;
  }

  /// Counts the job as running. Duplicate id: state_error, nothing changes.
  void commit(const job& j) {
    // the job first (one lookup, the duplicate test too), then the entities
    // (an insert may throw: both undone below), then the counts
    const auto [jt, fresh] = jobs_pool_.emplace_key(jobs_, j.id);  // every field is assigned below
    if (!fresh) throw state_error(error_id::state_duplicate, "running_limits: job '" + j.id + "' is already running");
    std::array<entity*, 3> ents{};
    std::array<bool, 3> added{};
    try {
      entry& e = jt->second;
      for (std::size_t s = 0; s < 3; ++s) e.keys[s] = key_of(static_cast<scope>(s), j);  // a spare node's capacity
      e.priority = j.priority;
      e.seq = seq_ + 1;
      for (std::size_t s = 0; s < 3; ++s) {
        if (e.keys[s].empty()) continue;
        auto [it, ins] = scopes_[s].entities.try_emplace(e.keys[s]);
        ents[s] = &it->second;
        added[s] = ins;
      }
    } catch (...) {
      for (std::size_t s = 0; s < 3; ++s)
        if (added[s] && ents[s]->running == 0 && !ents[s]->limit)
          scopes_[s].entities.erase(key_of(static_cast<scope>(s), j));
      jobs_pool_.erase(jobs_, jt);
      throw;
    }
    ++seq_;
    for (std::size_t s = 0; s < 3; ++s)
      if (ents[s]) ++ents[s]->running;
  }

  /// The job stopped running. Unknown id: unknown_entity_error, nothing changes.
  void release(std::string_view id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    for (std::size_t s = 0; s < 3; ++s) {
      const auto& k = it->second.keys[s];
      if (k.empty()) continue;
      auto r = scopes_[s].entities.find(k);
      if (--r->second.running == 0 && !r->second.limit) scopes_[s].entities.erase(r);
    }
    jobs_pool_.erase(jobs_, it);
  }

  /// Running jobs of lower priority in each scope whose limit the job would
  /// pass, lowest priority first, then newest first.
  void victims(const job& j, std::vector<victim>& out) const {
    for (std::size_t s = 0; s < 3; ++s) {
      const std::string& name = key_of(static_cast<scope>(s), j);
      if (name.empty()) continue;
      const auto lim = limit_of(static_cast<scope>(s), name);
      if (!lim || running(static_cast<scope>(s), name) + 1 <= *lim) continue;
      std::vector<std::pair<const std::string*, const entry*>> cand;
      for (const auto& [id, e] : jobs_)
        if (e.keys[s] == name && e.priority < j.priority) cand.emplace_back(&id, &e);
      std::sort(cand.begin(), cand.end(), [](const auto& a, const auto& b) {
        if (a.second->priority != b.second->priority) return a.second->priority < b.second->priority;
        return a.second->seq > b.second->seq;
      });
      for (const auto& c : cand)
        out.push_back(victim{*c.first, running_limits_model_name, "max_running_jobs", std::string(scope_names[s]) + ":" + name});
    }
  }

  [[nodiscard]] std::size_t running_jobs() const noexcept { return jobs_.size(); }

  /// Calls fn(name, running, limit-or-nullopt) for every entity of scope `s`
  /// that has a limit or running jobs (unordered).
  template <class F>
  void for_each_entity(scope s, F&& fn) const {
    const auto& sc = scopes_[idx(s)];
    for (const auto& [name, en] : sc.entities)
      fn(std::string_view(name), en.running, en.running != 0 && !en.limit ? sc.fallback : en.limit);
  }

 private:
  /// An entity of a scope: present while it has a limit of its own or running jobs.
  struct entity {
    std::optional<std::int64_t> limit;  // its own entry (else the scope's fallback)
    std::int64_t running = 0;
  };
  struct scope_state {
    std::unordered_map<std::string, entity, detail::string_hash, std::equal_to<>> entities;
    std::optional<std::int64_t> fallback;
    std::size_t own_limits = 0;  // entities with a limit of their own
  };
  struct entry {
    std::array<std::string, 3> keys;
    std::int32_t priority = 0;
    std::uint64_t seq = 0;
  };
  static constexpr std::size_t idx(scope s) noexcept { return static_cast<std::size_t>(s); }
  static const std::string& key_of(scope s, const job& j) noexcept {
    switch (s) {
      case scope::queue:
        return j.queue;
      case scope::user:
        return j.user;
      case scope::ns:
        return j.ns;
    }
    return j.queue;
  }
  static void check_value(scope s, std::string_view name, std::int64_t v) {
    if (v < 0)
      throw validation_error(std::string(scope_names[idx(s)]) + ":" + std::string(name),
                             "max running jobs must be >= 0, got " + std::to_string(v));
    if (name.empty()) throw validation_error(std::string(scope_names[idx(s)]), "empty name");
  }

  std::array<scope_state, 3> scopes_;
  using job_map = std::unordered_map<std::string, entry, detail::string_hash, std::equal_to<>>;
  job_map jobs_;
  detail::node_pool<job_map> jobs_pool_;  // an admission after a release allocates no node
  std::uint64_t seq_ = 0;
};

static_assert(policy<running_limits_policy>);

}  // namespace quota
