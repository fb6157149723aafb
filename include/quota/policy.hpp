// SPDX-License-Identifier: Apache-2.0
// quota/policy.hpp — the small interface every quota model implements (check, commit,
// release, victims, policy_name), its contract, and any_policy.
// Docs: docs/architecture.md
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <quota/decision.hpp>
#include <quota/error.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// A group of identical pods of a job (a Kueue podSet, a gang's role):
/// `count` pods of `per_pod` each, of which at least `min_count` must run
/// (partial admission may run fewer than `count`, never fewer than `min_count`).
struct pod_set {
  std::string name;
  std::int32_t count = 1;
  std::int32_t min_count = 1;
  resource_vector per_pod;
  friend bool operator==(const pod_set&, const pod_set&) = default;
};

/// What a host asks about: one job (a pod, a pod group, a workload).
/// Models read the fields they need and ignore the rest.
struct job {
  /// Unique id of the job within the engine (e.g. "namespace/name").
  std::string id;
  /// Kubernetes namespace (elastic quotas, Kueue LocalQueues).
  std::string ns;
  /// Queue name: Volcano/KAI queue, YuniKorn queue path, Kueue LocalQueue.
  std::string queue;
  /// Identity: the user and the groups the host resolved for it.
  std::string user;
  std::vector<std::string> groups;
  /// Priority class name and numeric priority (higher = more important).
  std::string priority_class;
  std::int32_t priority = 0;
  /// Total resources requested by the job (all its pods).
  resource_vector request;
  /// Number of pods (and the minimum to run, for gang/partial admission).
  std::int32_t pods = 1;
  std::int32_t min_pods = 1;
  /// The job's pod sets when its pods differ (empty: one set of `pods`
  /// identical pods, of which `min_pods` must run). When set, `request`,
  /// `pods` and `min_pods` are their totals (quota::total_pod_sets).
  std::vector<pod_set> pod_sets;
  /// Shared ResourceClaims the job uses (namespace/name).
  std::vector<std::string> claims;
  /// Creation time and declared run time, milliseconds (-1: unknown).
  std::int64_t created_ms = 0;
  std::int64_t duration_ms = -1;
  /// May the job be preempted (over-quota / best effort)?
  bool preemptible = true;
};

/// Sets `j.request`, `j.pods` and `j.min_pods` to the totals of
/// `j.pod_sets` (nothing changes when it is empty). A count below 1, a
/// min_count outside 1..count, a negative amount or a total beyond 64 bits
/// is a validation_error naming the pod set; `j` is unchanged then.
inline void total_pod_sets(job& j) {
  if (j.pod_sets.empty()) return;
  resource_vector total;
  std::int64_t pods = 0, min_pods = 0;
  for (const auto& ps : j.pod_sets) {
    const std::string where = "job/" + j.id + "/pod_sets/" + ps.name;
    if (ps.count < 1) throw validation_error(where + "/count", "must be at least 1");
    if (ps.min_count < 1 || ps.min_count > ps.count) throw validation_error(where + "/min_count", "must be 1..count");
    for (const auto& e : ps.per_pod) {
      if (e.value < 0) throw validation_error(where + "/per_pod", "negative amount");
      amount sum = 0;
      if (__builtin_mul_overflow(e.value, amount{ps.count}, &sum) || __builtin_add_overflow(sum, total.get(e.id), &sum))
        throw overflow_error(where + "/per_pod: the job's total does not fit 64 bits");
      total.set(e.id, sum);
    }
    pods += ps.count;
    min_pods += ps.min_count;
  }
  if (pods > std::numeric_limits<std::int32_t>::max())
    throw validation_error("job/" + j.id + "/pod_sets", "more than 2^31 - 1 pods");
  j.request = std::move(total);
  j.pods = static_cast<std::int32_t>(pods);
  j.min_pods = static_cast<std::int32_t>(min_pods);
}

/// A running job that would have to be preempted to make room.
struct victim {
  std::string job_id;
  /// The model and rule that make it a victim, e.g. "elastic_quota" / "over_quota_fair_share".
  std::string_view model;
  std::string_view rule;
  /// The entity it is taken from (queue, quota...).
  std::string entity;
  /// The reason upstream records on the evicted object, when the model has one
  /// (Kueue's preemption reason: "InClusterQueue", "InCohortReclamation",
  /// "InCohortReclaimWhileBorrowing", "InCohortFairSharing"); else empty.
  std::string_view upstream_reason = {};
  friend bool operator==(const victim&, const victim&) = default;
};

/// The policy interface. See the file comment for the contract.
template <class P>
concept policy = requires(P& p, const P& cp, const job& j, std::string_view id, std::vector<victim>& out) {
  { cp.policy_name() } -> std::convertible_to<std::string_view>;
  { cp.check(j) } -> std::same_as<decision>;
  { p.commit(j) } -> std::same_as<void>;
  { p.release(id) } -> std::same_as<void>;
  { cp.victims(j, out) } -> std::same_as<void>;
};

/// Thrown by commit when the job was allowed by check but no longer fits at
/// commit (a concurrent reload lowered a limit). A state_error (505) for
/// callers that use a model directly; the engine returns `verdict` instead.
class commit_denied_error : public state_error {
 public:
  commit_denied_error(std::string_view what, decision verdict)
      : state_error(error_id::state_not_admitted, what), verdict_(std::move(verdict)) {}
  [[nodiscard]] const decision& verdict() const noexcept { return verdict_; }

 private:
  decision verdict_;
};

}  // namespace quota
