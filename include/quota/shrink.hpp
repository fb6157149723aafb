// SPDX-License-Identifier: Apache-2.0
// quota/shrink.hpp — what happens to running work when a quota or limit is lowered
// below what is in use: keep it, or evict after a grace period (shrink_tracker).
// Docs: docs/extra-policies.md
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>

namespace quota {

/// What to do with running work when a limit is lowered below its usage.
/// Values as Kueue's kueue_shrink_policy.
enum class shrink_mode : std::uint8_t { keep, evict_after_grace };

struct shrink_behaviour {
  shrink_mode mode = shrink_mode::keep;
  std::int64_t grace_ms = 0;

  [[nodiscard]] static shrink_behaviour keep() noexcept { return {}; }
  /// Evict at (time of the change) + grace_ms. A negative grace: validation_error.
  [[nodiscard]] static shrink_behaviour evict_after_grace(std::int64_t grace_ms) {
    if (grace_ms < 0)
      throw validation_error("grace", "the grace period must be >= 0 ms, got " + std::to_string(grace_ms));
    return {shrink_mode::evict_after_grace, grace_ms};
  }
  friend bool operator==(const shrink_behaviour&, const shrink_behaviour&) = default;
};

/// The job field that names the entity whose limit can shrink.
enum class shrink_key : std::uint8_t { queue, ns, user };

/// An entity above its limit.
struct shrink_status {
  std::string entity;
  std::int64_t usage = 0;
  std::int64_t limit = 0;
  /// When it went over (the limit change that made it so).
  std::int64_t since_ms = 0;
  /// When its work will be evicted; nullopt under keep.
  std::optional<std::int64_t> evict_at_ms;
  friend bool operator==(const shrink_status&, const shrink_status&) = default;
};

/// One job to evict, when, and why.
struct shrink_eviction {
  std::string job_id;
  std::string entity;
  std::int64_t at_ms = 0;
  /// The model whose victim order chose it, and its rule; "shrink" /
  /// "lowest_priority_newest" when the model's own order did not name it.
  std::string model;
  std::string rule;
  friend bool operator==(const shrink_eviction&, const shrink_eviction&) = default;
};

class shrink_tracker {
 public:
  /// `key`: which job field names the entity; `measure`: the resource whose
  /// amount is compared to the limit, or no_resource to count jobs.
  explicit shrink_tracker(shrink_key key = shrink_key::queue, resource_id measure = no_resource,
                          shrink_behaviour fallback = shrink_behaviour::keep())
      : key_(key), measure_(measure), fallback_(check_behaviour("*", fallback)) {}

  [[nodiscard]] std::string_view policy_name() const noexcept { return "shrink"; }

  /// Behaviour for one entity (others use the tracker's default).
  void set_behaviour(std::string_view entity, shrink_behaviour b) {
    check_entity(entity);
    behaviours_.insert_or_assign(std::string(entity), check_behaviour(entity, b));
  }
  [[nodiscard]] shrink_behaviour behaviour_of(std::string_view entity) const {
    auto it = behaviours_.find(entity);
    return it == behaviours_.end() ? fallback_ : it->second;
  }

  /// The host changed the limit of `entity` in the model to `limit` (in the
  /// tracker's measure) at `now_ms`. Returns the entity's status when it is
  /// over its limit now, nullopt when usage fits (any earlier mark is cleared:
  /// a raise before the deadline cancels the evictions). Negative limit or
  /// empty entity: validation_error, nothing changes.
  std::optional<shrink_status> on_limit_change(std::string_view entity, std::int64_t limit, std::int64_t now_ms) {
    check_entity(entity);
    if (limit < 0) throw validation_error(std::string(entity), "the limit must be >= 0, got " + std::to_string(limit));
    auto& e = entities_[std::string(entity)];
    e.limit = limit;
    refresh(e, now_ms);
    return status_of(entity);
  }

  /// The limit the tracker knows for `entity`, if any.
  [[nodiscard]] std::optional<std::int64_t> limit_of(std::string_view entity) const {
    auto it = entities_.find(entity);
    if (it == entities_.end()) return std::nullopt;
    return it->second.limit;
  }
  /// Usage of `entity` in the tracker's measure.
  [[nodiscard]] std::int64_t usage(std::string_view entity) const {
    auto it = entities_.find(entity);
    return it == entities_.end() ? 0 : it->second.usage;
  }
  /// The entity's status when it is marked over its limit.
  [[nodiscard]] std::optional<shrink_status> status_of(std::string_view entity) const {
    auto it = entities_.find(entity);
    if (it == entities_.end() || !it->second.since_ms) return std::nullopt;
    return status(it->first, it->second);
  }
  /// Every entity marked over its limit, by name.
  [[nodiscard]] std::vector<shrink_status> over() const {
    std::vector<shrink_status> out;
    for (const auto& [name, e] : entities_)
      if (e.since_ms) out.push_back(status(name, e));
    return out;
  }

  /// The evictions that will happen if nothing changes: for every entity
  /// marked over under evict_after_grace, the jobs (in `model`'s victim order)
  /// that bring its usage within its limit, each with its time. Changes nothing.
  template <policy M>
  [[nodiscard]] std::vector<shrink_eviction> plan(const M& model) const {
    return plan_until(model, std::numeric_limits<std::int64_t>::max());
  }
  /// The planned evictions whose time has come (at_ms <= now_ms). The host
  /// evicts them (engine.release(id)), which clears the marks as usage fits.
  template <policy M>
  [[nodiscard]] std::vector<shrink_eviction> due_evictions(const M& model, std::int64_t now_ms) const {
    return plan_until(model, now_ms);
  }

  // ---- the policy concept: observe admissions --------------------------------
  [[nodiscard]] decision check(const job&) const { return decision::allow(); }

  /// Counts the job in its entity. Duplicate id: state_error, nothing changes.
  void commit(const job& j) {
    if (jobs_.find(j.id) != jobs_.end())
      throw state_error(error_id::state_duplicate, "shrink: job '" + j.id + "' is already admitted");
    const std::string& name = key_of(j);
    const std::int64_t share = measure_ == no_resource ? 1 : j.request.get(measure_);
    auto& ent = entities_[name];  // an entity without jobs or limit is harmless if what follows throws
    const std::int64_t next = detail::checked_add(ent.usage, share);
    const bool first = ent.usage == 0 && ent.ns.empty() && ent.queue.empty() && ent.user.empty();
    std::string ns = first ? j.ns : std::string(), queue = first ? j.queue : std::string(),
                user = first ? j.user : std::string();
    jobs_.emplace(j.id, tracked{name, share, j.priority, seq_ + 1});
    ++seq_;
    ent.usage = next;
    if (first) {
      ent.ns = std::move(ns);
      ent.queue = std::move(queue);
      ent.user = std::move(user);
    }
  }

  /// Forgets the job; clears its entity's mark when usage now fits.
  /// Unknown id: unknown_entity_error, nothing changes.
  void release(std::string_view id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    auto e = entities_.find(it->second.entity);
    e->second.usage -= it->second.share;
    if (e->second.since_ms && e->second.limit && e->second.usage <= *e->second.limit) e->second.since_ms.reset();
    jobs_.erase(it);
  }

  void victims(const job&, std::vector<victim>&) const {}

  [[nodiscard]] std::size_t tracked_jobs() const noexcept { return jobs_.size(); }

 private:
  struct entity_state {
    std::int64_t usage = 0;
    std::optional<std::int64_t> limit;
    std::optional<std::int64_t> since_ms;  // marked over since
    // where the entity's first job came from: the probe of plan() carries it,
    // so a model that needs more than the key (Kueue: namespace and queue
    // name a LocalQueue) resolves the probe
    std::string ns, queue, user;
  };
  struct tracked {
    std::string entity;
    std::int64_t share = 0;
    std::int32_t priority = 0;
    std::uint64_t seq = 0;
  };

  static void check_entity(std::string_view entity) {
    if (entity.empty()) throw validation_error("entity", "an entity name must not be empty");
  }
  static shrink_behaviour check_behaviour(std::string_view entity, shrink_behaviour b) {
    if (b.grace_ms < 0)
      throw validation_error(std::string(entity) + ".grace",
                             "the grace period must be >= 0 ms, got " + std::to_string(b.grace_ms));
    return b;
  }
  [[nodiscard]] const std::string& key_of(const job& j) const noexcept {
    switch (key_) {
      case shrink_key::queue:
        return j.queue;
      case shrink_key::ns:
        return j.ns;
      case shrink_key::user:
        return j.user;
    }
    return j.queue;
  }
  static void refresh(entity_state& e, std::int64_t now_ms) {
    if (!e.limit || e.usage <= *e.limit)
      e.since_ms.reset();
    else if (!e.since_ms)
      e.since_ms = now_ms;
  }
  [[nodiscard]] shrink_status status(const std::string& name, const entity_state& e) const {
    shrink_status s{name, e.usage, e.limit.value_or(0), e.since_ms.value_or(0), std::nullopt};
    const auto b = behaviour_of(name);
    if (b.mode == shrink_mode::evict_after_grace) {
      std::int64_t at = 0;
      s.evict_at_ms = detail::try_add(s.since_ms, b.grace_ms, at) ? at : std::numeric_limits<std::int64_t>::max();
    }
    return s;
  }

  template <policy M>
  [[nodiscard]] std::vector<shrink_eviction> plan_until(const M& model, std::int64_t until_ms) const {
    std::vector<shrink_eviction> out;
    std::vector<victim> vs;
    for (const auto& kv : entities_) {
      const std::string& name = kv.first;  // not a structured binding: the lambda below captures it
      const entity_state& e = kv.second;
      if (!e.since_ms) continue;
      const shrink_status s = status(name, e);
      if (!s.evict_at_ms || *s.evict_at_ms > until_ms) continue;
      // the model's own order, for a probe job of the entity that outranks
      // everything and asks for the excess
      job probe;
      probe.id = "\x1fshrink-probe";
      probe.ns = e.ns;
      probe.queue = e.queue;
      probe.user = e.user;
      (key_ == shrink_key::queue ? probe.queue : key_ == shrink_key::ns ? probe.ns : probe.user) = name;
      probe.priority = std::numeric_limits<std::int32_t>::max();
      probe.preemptible = false;
      if (measure_ != no_resource) probe.request.set(measure_, e.usage - s.limit);
      vs.clear();
      model.victims(probe, vs);
      std::vector<shrink_eviction> picked;
      std::int64_t left = e.usage;
      auto take = [&](const std::string& id, const tracked& t, std::string_view m, std::string_view rule) {
        for (const auto& p : picked)
          if (p.job_id == id) return;
        picked.push_back(shrink_eviction{id, name, *s.evict_at_ms, std::string(m), std::string(rule)});
        left -= t.share;
      };
      for (const auto& v : vs) {
        if (left <= s.limit) break;
        auto it = jobs_.find(v.job_id);
        if (it == jobs_.end() || it->second.entity != name) continue;
        take(it->first, it->second, v.model, v.rule);
      }
      if (left > s.limit) {
        // the rest: lowest priority first, newest first (Kueue's shrink order)
        std::vector<std::pair<const std::string*, const tracked*>> rest;
        for (const auto& [id, t] : jobs_)
          if (t.entity == name) rest.emplace_back(&id, &t);
        std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) {
          if (a.second->priority != b.second->priority) return a.second->priority < b.second->priority;
          return a.second->seq > b.second->seq;
        });
        for (const auto& [id, t] : rest) {
          if (left <= s.limit) break;
          take(*id, *t, "shrink", "lowest_priority_newest");
        }
      }
      out.insert(out.end(), picked.begin(), picked.end());
    }
    return out;
  }

  shrink_key key_;
  resource_id measure_;
  shrink_behaviour fallback_;
  std::map<std::string, shrink_behaviour, std::less<>> behaviours_;
  std::map<std::string, entity_state, std::less<>> entities_;
  std::unordered_map<std::string, tracked, detail::string_hash, std::equal_to<>> jobs_;
  std::uint64_t seq_ = 0;
};

static_assert(policy<shrink_tracker>);

}  // namespace quota
