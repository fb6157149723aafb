// SPDX-License-Identifier: Apache-2.0
// quota/kueue_cohorts.hpp — the Kueue quota model: ResourceFlavors, ClusterQueues and
// Cohorts of any depth, quotas per (flavor, resource) with borrowing and lending
// limits, and usage kept incrementally.
// Docs: docs/kueue.md
#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <quota/detail/checked.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// A Kueue quota or usage amount in base units (millicores, bytes, devices):
/// 128-bit, so a quantity Kubernetes accepts whose base units do not fit in
/// int64 (`nominalQuota: 1E` cpu is 10^21 millicores) is kept exactly.
using kueue_amount = quota::detail::int128;
/// The largest quota value, and the largest sum of one (flavor, resource)'s
/// nominal quotas over a configuration: 2^88 - 1 base units (about 3.1e26;
/// 3.1e23 cpu cores). Every subtree quota and potential availability is at
/// most that sum, and every dominant-share product stays inside 128 bits.
inline constexpr kueue_amount kueue_amount_max = (kueue_amount{1} << 88) - 1;
/// The largest usage of one node in one (flavor, resource): 2^89 base units.
inline constexpr kueue_amount kueue_usage_max = kueue_amount{1} << 89;

// ---- specification (what the API objects say) ---------------------------------

/// Quota of one resource in one flavor of a ClusterQueue or Cohort.
struct kueue_resource_quota_spec {
  resource_id resource = no_resource;
  kueue_amount nominal = 0;
  std::optional<kueue_amount> borrowing_limit;
  std::optional<kueue_amount> lending_limit;
};

struct kueue_flavor_quotas_spec {
  std::string flavor;
  std::vector<kueue_resource_quota_spec> resources;
};

/// A resource group: resources that must come from one flavor together.
struct kueue_resource_group_spec {
  std::vector<resource_id> covered_resources;
  std::vector<kueue_flavor_quotas_spec> flavors;
};

enum class kueue_within_cluster_queue_policy { never, lower_priority, lower_or_newer_equal_priority };
enum class kueue_reclaim_within_cohort_policy { never, lower_priority, any };
enum class kueue_borrow_within_cohort_policy { never, lower_priority };

struct kueue_preemption_spec {
  kueue_reclaim_within_cohort_policy reclaim_within_cohort = kueue_reclaim_within_cohort_policy::never;
  kueue_within_cluster_queue_policy within_cluster_queue = kueue_within_cluster_queue_policy::never;
  kueue_borrow_within_cohort_policy borrow_within_cohort = kueue_borrow_within_cohort_policy::never;
  /// Only workloads with priority <= this may be preempted while borrowing.
  std::optional<std::int32_t> max_priority_threshold;
};

/// flavorFungibility. v1beta1 spelled may_stop_search as Borrow / Preempt.
enum class kueue_fungibility_action { may_stop_search, try_next_flavor };
/// flavorFungibility.preference: which of two flavors that both need
/// borrowing or preemption is better. Unset behaves as borrowing_over_preemption.
enum class kueue_fungibility_preference { borrowing_over_preemption, preemption_over_borrowing };
struct kueue_flavor_fungibility {
  kueue_fungibility_action when_can_borrow = kueue_fungibility_action::may_stop_search;
  kueue_fungibility_action when_can_preempt = kueue_fungibility_action::try_next_flavor;
  /// Kueue accepts it only when both actions are TryNextFlavor.
  std::optional<kueue_fungibility_preference> preference;
};

/// A Kubernetes label selector (metav1.LabelSelector): every matchLabels pair
/// and every matchExpressions requirement must hold. An empty selector matches
/// every label set.
struct kueue_label_selector {
  enum class op { in, not_in, exists, does_not_exist };
  struct requirement {
    std::string key;
    op oper = op::exists;
    std::vector<std::string> values;
  };
  std::vector<std::pair<std::string, std::string>> match_labels;
  std::vector<requirement> match_expressions;

  using labels = std::vector<std::pair<std::string, std::string>>;
  [[nodiscard]] static const std::string* find(const labels& ls, std::string_view key) noexcept {
    for (const auto& [k, v] : ls)
      if (k == key) return &v;
    return nullptr;
  }
  /// Kubernetes semantics: In needs the key with one of the values; NotIn
  /// holds when the key is absent or its value is not listed; Exists /
  /// DoesNotExist test the key only.
  [[nodiscard]] bool matches(const labels& ls) const noexcept {
    for (const auto& [k, v] : match_labels) {
      const auto* x = find(ls, k);
      if (!x || *x != v) return false;
    }
    for (const auto& r : match_expressions) {
      const auto* x = find(ls, r.key);
      // In and NotIn test whether the value is listed, Exists and DoesNotExist
      // whether the key is there; NotIn and DoesNotExist hold when the test fails
      const bool on_value = r.oper == op::in || r.oper == op::not_in;
      const bool found =
          on_value ? x && std::find(r.values.begin(), r.values.end(), *x) != r.values.end() : x != nullptr;
      const bool negated = r.oper == op::not_in || r.oper == op::does_not_exist;
      if (found == negated) return false;
    }
    return true;
  }
};

/// A Namespace as the model sees it: its name and labels (for namespaceSelector).
struct kueue_namespace_spec {
  std::string name;
  kueue_label_selector::labels labels;
};

enum class kueue_queueing_strategy { best_effort_fifo, strict_fifo };
enum class kueue_stop_policy { none, hold, hold_and_drain };

struct kueue_cluster_queue_spec {
  std::string name;
  std::string cohort;  // empty: no cohort
  /// spec.namespaceSelector. Kueue: null (nullopt) matches no namespace, an
  /// empty selector matches all. Checked only when the model knows the
  /// namespaces (kueue_config::namespaces or kueue_model::set_namespace).
  std::optional<kueue_label_selector> namespace_selector = kueue_label_selector{};
  std::vector<kueue_resource_group_spec> resource_groups;
  kueue_preemption_spec preemption;
  kueue_flavor_fungibility fungibility;
  /// fairSharing.weight in thousandths (Kueue's default weight 1 = 1000).
  std::int64_t fair_weight_milli = 1000;
  kueue_queueing_strategy queueing = kueue_queueing_strategy::best_effort_fifo;
  kueue_stop_policy stop = kueue_stop_policy::none;
  /// Set from kueue_config::fair_sharing when the forest is built.
  bool fair_sharing = false;
  /// spec.admissionScope.admissionMode: UsageBasedAdmissionFairSharing (order
  /// the workloads of this queue by their LocalQueues' usage history).
  bool admission_fair_sharing = false;
};

struct kueue_cohort_spec {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<kueue_resource_group_spec> resource_groups;
  std::int64_t fair_weight_milli = 1000;
};

struct kueue_local_queue_spec {
  std::string ns;
  std::string name;
  std::string cluster_queue;
  /// spec.fairSharing.weight in thousandths (default 1 = 1000), for admission fair sharing.
  std::int64_t fair_weight_milli = 1000;
};

/// Kueue's configuration `admissionFairSharing` (usage-based ordering of the
/// LocalQueues of one ClusterQueue).
struct kueue_admission_fair_sharing_config {
  /// usageHalfLifeTime: the time after which past usage counts half. 0: usage
  /// history is never updated (Kueue's decay rate is 0 then).
  std::int64_t half_life_ms = 0;
  /// usageSamplingInterval: the entry penalty of an admission is its request
  /// times the decay rate of one interval (default 5m).
  std::int64_t sampling_interval_ms = 300000;
  /// resourceWeights in thousandths; resources not listed weigh 1 (= 1000).
  std::vector<std::pair<resource_id, std::int64_t>> resource_weights_milli;
  [[nodiscard]] std::int64_t weight_of(resource_id r) const noexcept {
    for (const auto& [k, v] : resource_weights_milli)
      if (k == r) return v;
    return 1000;
  }
};

/// Everything the model is configured from.
struct kueue_config {
  std::vector<std::string> resource_flavors;
  std::vector<kueue_cluster_queue_spec> cluster_queues;
  std::vector<kueue_cohort_spec> cohorts;
  std::vector<kueue_local_queue_spec> local_queues;
  /// Namespaces and their labels, for the ClusterQueues' namespaceSelector.
  /// nullopt: the host does not tell the namespaces and no selector is
  /// checked; set (even empty): a workload from a namespace not listed is
  /// inadmissible, as in Kueue ("workload namespace ... does not exist").
  std::optional<std::vector<kueue_namespace_spec>> namespaces;
  /// Kueue's global fairSharing.enable: preemption may then let the preemptor
  /// borrow (flavor assignment classifies such flavors as needing preemption).
  bool fair_sharing = false;
  /// Kueue's global admissionFairSharing; queues opt in with admissionScope.
  std::optional<kueue_admission_fair_sharing_config> admission_fair_sharing;
};

/// The dominant resource share of a ClusterQueue or Cohort, exact. Kueue:
/// for each resource (summed over flavors) what the node uses above its
/// subtree quota over what its parent could lend (the parent's potential
/// available), the largest ratio in per-mille, divided by the fair-sharing
/// weight. Compared exactly (Kueue compares floating-point values).
/// borrowed and lendable are sums over at most 2^16 flavors of terms below
/// 2^90 in magnitude (usage up to kueue_usage_max, quotas up to
/// kueue_amount_max), so below 2^106: a 128-bit integer holds them, and a
/// comparison's products (two of them and a 64-bit weight, below 2^276) are
/// taken in 320 bits (quota::detail::compare_products).
struct kueue_dominant_share {
  quota::detail::int128 borrowed = 0;  // of the dominant resource
  quota::detail::int128 lendable = 1;  // of the dominant resource
  std::int64_t weight_milli = 1000;
  resource_id dominant = no_resource;
  bool borrowing = false;  // above quota in some resource (even with nothing lendable)

  [[nodiscard]] bool is_zero() const { return dominant == no_resource || borrowed == 0; }
  [[nodiscard]] bool zero_weight_borrows() const { return weight_milli == 0 && !is_zero(); }
  /// Kueue's CompareDRS: zero-weight borrowers last (among themselves by
  /// unweighted ratio); otherwise by ratio / weight.
  friend std::strong_ordering operator<=>(const kueue_dominant_share& a, const kueue_dominant_share& b) {
    // a share that is not zero has borrowed > 0 and lendable > 0 (share_in): every factor is >= 0
    const quota::detail::uint128 an = a.is_zero() ? 0 : static_cast<quota::detail::uint128>(a.borrowed);
    const quota::detail::uint128 ad = a.is_zero() ? 1 : static_cast<quota::detail::uint128>(a.lendable);
    const quota::detail::uint128 bn = b.is_zero() ? 0 : static_cast<quota::detail::uint128>(b.borrowed);
    const quota::detail::uint128 bd = b.is_zero() ? 1 : static_cast<quota::detail::uint128>(b.lendable);
    const bool az = a.zero_weight_borrows(), bz = b.zero_weight_borrows();
    if (az && bz) return quota::detail::compare_products(an, bd, 1, bn, ad, 1);
    if (az) return std::strong_ordering::greater;
    if (bz) return std::strong_ordering::less;
    // an / (ad * wa) vs bn / (bd * wb); a zero share is 0 whatever the weight
    const auto wa = a.is_zero() ? std::uint64_t{1} : static_cast<std::uint64_t>(a.weight_milli);
    const auto wb = b.is_zero() ? std::uint64_t{1} : static_cast<std::uint64_t>(b.weight_milli);
    return quota::detail::compare_products(an, bd, wb, bn, ad, wa);
  }
  friend bool operator==(const kueue_dominant_share& a, const kueue_dominant_share& b) { return (a <=> b) == 0; }
  /// ceil(1000 * 1000 * borrowed / (lendable * weight_milli)).
  [[nodiscard]] std::int64_t rounded() const {
    if (is_zero()) return 0;
    if (weight_milli == 0) return std::numeric_limits<std::int64_t>::max();
    // num < 2^106 * 2^20; a den beyond 128 bits is larger than num > 0, so the ceiling is 1
    const quota::detail::int128 num = borrowed * 1000000;
    quota::detail::int128 den = 0;
    if (__builtin_mul_overflow(lendable, static_cast<quota::detail::int128>(weight_milli), &den)) return 1;
    quota::detail::int128 q = num / den;
    if (q * den != num) ++q;
    if (q > std::numeric_limits<std::int64_t>::max()) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(q);
  }
};

using kueue_node_index = std::uint32_t;
inline constexpr kueue_node_index kueue_no_node = 0xFFFFFFFFu;
using kueue_flavor_index = std::uint16_t;
inline constexpr kueue_flavor_index kueue_no_flavor = 0xFFFF;
/// A dense (flavor, resource) key: flavor * columns + column of the resource.
using kueue_fr_slot = std::uint32_t;
/// The most quota cells (ClusterQueues and cohorts x ResourceFlavors x
/// resources) a configuration may hold: 2^24, about 1.7 GB of tables.
inline constexpr std::size_t kueue_max_cells = std::size_t{1} << 24;
inline constexpr kueue_fr_slot kueue_no_slot = 0xFFFFFFFFu;

namespace detail {
/// How the exactness bound reads in messages, for a resource named `resource`.
[[nodiscard]] inline std::string kueue_bound_text(std::string_view resource) {
  return "2^88 - 1 base units (" + quota::detail::int128_to_string(kueue_amount_max) + " of " + std::string(resource) +
         "'s base unit)";
}
inline constexpr kueue_amount kueue_unset = -(kueue_amount{1} << 120);  // no limit (valid values are >= 0)

inline const char* kueue_rule_name(kueue_within_cluster_queue_policy p) {
  switch (p) {
    case kueue_within_cluster_queue_policy::never:
      return "Never";
    case kueue_within_cluster_queue_policy::lower_priority:
      return "LowerPriority";
    default:
      return "LowerOrNewerEqualPriority";
  }
}
}  // namespace detail

/// The whole quota structure: flavors, cohorts, ClusterQueues, LocalQueues and
/// the usage of every node per (flavor, resource). Nodes are ClusterQueues
/// (indices [0, cluster_queue_count)) followed by cohorts.
class kueue_cohort_forest {
 public:
  struct node {
    std::string name;
    bool is_cohort = false;
    kueue_node_index parent = kueue_no_node;
    std::vector<kueue_node_index> children;
    std::int64_t fair_weight_milli = 1000;
  };

  kueue_cohort_forest() = default;

  /// Builds from a configuration; throws validation_error listing every problem.
  explicit kueue_cohort_forest(const kueue_config& cfg, const resource_registry& reg) { build(cfg, reg); }

  // ---- structure ---------------------------------------------------------------
  [[nodiscard]] std::size_t node_count() const noexcept { return nodes_.size(); }
  [[nodiscard]] std::size_t cluster_queue_count() const noexcept { return cqs_.size(); }
  [[nodiscard]] const node& at(kueue_node_index n) const { return nodes_.at(n); }
  [[nodiscard]] const kueue_cluster_queue_spec& cluster_queue(kueue_node_index cq) const { return cqs_.at(cq); }
  [[nodiscard]] const kueue_config& config() const noexcept { return cfg_; }

  [[nodiscard]] std::optional<kueue_node_index> find_cluster_queue(std::string_view name) const {
    auto it = cq_by_name_.find(name);
    if (it == cq_by_name_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] kueue_node_index cluster_queue_at(std::string_view name) const {
    if (auto n = find_cluster_queue(name)) return *n;
    throw unknown_entity_error(error_id::unknown_queue, "ClusterQueue", name);
  }
  [[nodiscard]] std::optional<kueue_node_index> find_cohort(std::string_view name) const {
    auto it = cohort_by_name_.find(name);
    if (it == cohort_by_name_.end()) return std::nullopt;
    return it->second;
  }
  /// LocalQueue "ns/name" -> ClusterQueue.
  [[nodiscard]] std::optional<kueue_node_index> find_local_queue(std::string_view ns, std::string_view name) const {
    // the key "ns/name" is composed on the stack (a longer one in a string)
    std::array<char, 128> buf;
    std::string long_key;
    std::string_view key;
    if (ns.size() + name.size() < buf.size()) {
      std::copy(ns.begin(), ns.end(), buf.begin());
      buf[ns.size()] = '/';
      std::copy(name.begin(), name.end(), buf.begin() + static_cast<std::ptrdiff_t>(ns.size() + 1));
      key = std::string_view(buf.data(), ns.size() + 1 + name.size());
    } else {
      long_key.reserve(ns.size() + 1 + name.size());
      long_key.append(ns).push_back('/');
      long_key.append(name);
      key = long_key;
    }
    auto it = lq_.find(key);
    if (it == lq_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] std::optional<kueue_flavor_index> find_flavor(std::string_view name) const {
    auto it = flavor_at_.find(name);
    if (it == flavor_at_.end()) return std::nullopt;
    return static_cast<kueue_flavor_index>(it->second);
  }
  [[nodiscard]] const std::string& flavor_name(kueue_flavor_index f) const { return flavors_.at(f); }
  [[nodiscard]] std::size_t flavor_count() const noexcept { return flavors_.size(); }
  [[nodiscard]] std::size_t slot_count() const noexcept { return nslots_; }

  /// The slot of (flavor, resource), or no_slot when the resource is not quota-managed anywhere.
  [[nodiscard]] kueue_fr_slot slot(kueue_flavor_index f, resource_id r) const noexcept {
    if (r >= column_of_.size() || column_of_[r] < 0 || f >= flavors_.size()) return kueue_no_slot;
    return static_cast<kueue_fr_slot>(f * columns_ + static_cast<std::size_t>(column_of_[r]));
  }
  [[nodiscard]] resource_id slot_resource(kueue_fr_slot s) const noexcept { return resource_of_column_[s % columns_]; }
  [[nodiscard]] kueue_flavor_index slot_flavor(kueue_fr_slot s) const noexcept {
    return static_cast<kueue_flavor_index>(s / columns_);
  }

  /// The resource group of a ClusterQueue covering resource r (index), if any.
  [[nodiscard]] std::optional<std::size_t> group_of(kueue_node_index cq, resource_id r) const {
    const auto& g = cqs_.at(cq).resource_groups;
    for (std::size_t i = 0; i < g.size(); ++i)
      if (std::find(g[i].covered_resources.begin(), g[i].covered_resources.end(), r) != g[i].covered_resources.end())
        return i;
    return std::nullopt;
  }
  /// Flavor indices of a resource group in order.
  [[nodiscard]] const std::vector<kueue_flavor_index>& group_flavors(kueue_node_index cq, std::size_t group) const {
    return group_flavors_.at(cq).at(group);
  }

  // ---- quotas --------------------------------------------------------------------
  [[nodiscard]] kueue_amount nominal(kueue_node_index n, kueue_fr_slot s) const { return nominal_[idx(n, s)]; }
  [[nodiscard]] std::optional<kueue_amount> borrowing_limit(kueue_node_index n, kueue_fr_slot s) const {
    const kueue_amount v = borrowing_[idx(n, s)];
    return v == detail::kueue_unset ? std::nullopt : std::optional<kueue_amount>(v);
  }
  [[nodiscard]] std::optional<kueue_amount> lending_limit(kueue_node_index n, kueue_fr_slot s) const {
    const kueue_amount v = lending_[idx(n, s)];
    return v == detail::kueue_unset ? std::nullopt : std::optional<kueue_amount>(v);
  }
  /// Does the ClusterQueue/Cohort define quota for this (flavor, resource)?
  [[nodiscard]] bool has_quota(kueue_node_index n, kueue_fr_slot s) const { return defined_[idx(n, s)] != 0; }
  [[nodiscard]] kueue_amount subtree_quota(kueue_node_index n, kueue_fr_slot s) const { return subtree_[idx(n, s)]; }
  [[nodiscard]] kueue_amount guaranteed(kueue_node_index n, kueue_fr_slot s) const {
    const kueue_amount ll = lending_[idx(n, s)];
    if (ll == detail::kueue_unset) return 0;
    return std::max<kueue_amount>(0, subtree_[idx(n, s)] - ll);
  }

  // ---- usage ---------------------------------------------------------------------
  [[nodiscard]] kueue_amount usage(kueue_node_index n, kueue_fr_slot s) const { return usage_[idx(n, s)]; }
  /// Usage of node n in slot s on usage table `u` (same layout as usage_table()).
  [[nodiscard]] kueue_amount usage_in(const kueue_amount* u, kueue_node_index n, kueue_fr_slot s) const noexcept {
    return u[idx(n, s)];
  }
  [[nodiscard]] const std::vector<kueue_amount>& usage_table() const noexcept { return usage_; }
  /// Borrowed kueue_amount of a node in a slot: usage above its subtree quota.
  [[nodiscard]] kueue_amount borrowed(kueue_node_index n, kueue_fr_slot s) const {
    return std::max<kueue_amount>(0, usage_[idx(n, s)] - subtree_[idx(n, s)]);
  }

  /// What node n can still get in slot s now (usage table `u`, default: live).
  [[nodiscard]] kueue_amount available(kueue_node_index n, kueue_fr_slot s) const noexcept {
    return available_in(usage_.data(), n, s);
  }
  [[nodiscard]] kueue_amount available_in(const kueue_amount* u, kueue_node_index n, kueue_fr_slot s) const noexcept {
    // Kueue's recursion available(n) = local(n) + min(available(parent), cap(n))
    // (cap: only with a borrowing limit), unrolled from n upward: what is
    // known so far is acc + min(x, cap) of the parent's availability x
    kueue_amount acc = 0, cap = 0;
    bool capped = false;
    kueue_node_index cur = n;
    for (; nodes_[cur].parent != kueue_no_node; cur = nodes_[cur].parent) {
      const std::size_t i = idx(cur, s);
      const kueue_amount g = guaranteed(cur, s);
      const kueue_amount local = std::max<kueue_amount>(0, g - u[i]);
      // compose with f(x) = local + min(x, d): acc + min(local + min(x, d), cap)
      //                                      = acc + local + min(x, min(d, cap - local))
      if (capped) cap -= local;
      if (const kueue_amount bl = borrowing_[i]; bl != detail::kueue_unset) {
        const kueue_amount d = subtree_[i] - g - std::max<kueue_amount>(0, u[i] - g) + bl;
        cap = capped ? std::min(cap, d) : d;
        capped = true;
      }
      acc += local;
    }
    const std::size_t r = idx(cur, s);
    const kueue_amount at_root = subtree_[r] - u[r];
    return acc + (capped ? std::min(at_root, cap) : at_root);
  }
  /// The most node n could get in slot s if nothing at all were in use.
  [[nodiscard]] kueue_amount potential_available(kueue_node_index n, kueue_fr_slot s) const noexcept {
    return potential_[idx(n, s)];
  }
  /// Kueue's "may reclaim in the hierarchy": the ClusterQueue has a cohort and
  /// `val` more would fit without borrowing in itself or in some ancestor
  /// below the root (so preempting inside that subtree could make room).
  [[nodiscard]] bool may_reclaim_in_hierarchy(kueue_node_index cq, kueue_fr_slot s, kueue_amount val) const noexcept {
    return may_reclaim_in_hierarchy_in(usage_.data(), cq, s, val);
  }
  [[nodiscard]] bool may_reclaim_in_hierarchy_in(const kueue_amount* u, kueue_node_index cq, kueue_fr_slot s,
                                                 kueue_amount val) const noexcept {
    if (nodes_[cq].parent == kueue_no_node) return false;
    if (u[idx(cq, s)] + val <= subtree_[idx(cq, s)]) return true;
    kueue_amount remaining = val - std::max<kueue_amount>(0, guaranteed(cq, s) - u[idx(cq, s)]);
    for (kueue_node_index cur = nodes_[cq].parent; cur != kueue_no_node; cur = nodes_[cur].parent) {
      if (u[idx(cur, s)] + remaining <= subtree_[idx(cur, s)]) return nodes_[cur].parent != kueue_no_node;
      remaining -= std::max<kueue_amount>(0, guaranteed(cur, s) - u[idx(cur, s)]);
    }
    return false;
  }
  /// Kueue's borrowing level (FindHeightOfLowestSubtreeThatFits): 0 when cq
  /// holds `val` more in slot s within its nominal quota (or has no cohort);
  /// else the height of the lowest ancestor cohort whose subtree quota holds
  /// what reaches it (val less the unused guaranteed parts on the way up),
  /// or of the root when none does. A cohort's height: 1 for one with
  /// children, plus the height of its tallest child cohort.
  [[nodiscard]] std::int32_t borrow_height_in(const kueue_amount* u, kueue_node_index cq, kueue_fr_slot s,
                                              kueue_amount val) const {
    if (nodes_[cq].parent == kueue_no_node || u[idx(cq, s)] + val <= subtree_[idx(cq, s)]) return 0;
    kueue_amount remaining = val - std::max<kueue_amount>(0, guaranteed(cq, s) - u[idx(cq, s)]);
    kueue_node_index top = cq;
    for (kueue_node_index cur = nodes_[cq].parent; cur != kueue_no_node; cur = nodes_[cur].parent) {
      if (u[idx(cur, s)] + remaining <= subtree_[idx(cur, s)]) return height(cur);
      remaining -= std::max<kueue_amount>(0, guaranteed(cur, s) - u[idx(cur, s)]);
      top = cur;
    }
    return height(top);
  }
  /// Height of a cohort (0 for a ClusterQueue).
  [[nodiscard]] std::int32_t height(kueue_node_index n) const { return height_[n]; }
  /// Would ancestor-or-self `top` of `cq` stay within its subtree quota in
  /// slot s if `val` more were used in cq (usage table u)? What reaches `top`
  /// is val less the unused guaranteed parts on the way up.
  [[nodiscard]] bool within_quota_at_in(const kueue_amount* u, kueue_node_index cq, kueue_node_index top,
                                        kueue_fr_slot s, kueue_amount val) const noexcept {
    kueue_amount remaining = val;
    for (kueue_node_index cur = cq; cur != kueue_no_node; cur = nodes_[cur].parent) {
      if (cur == top) return u[idx(cur, s)] + remaining <= subtree_[idx(cur, s)];
      remaining -= std::max<kueue_amount>(0, guaranteed(cur, s) - u[idx(cur, s)]);
    }
    return false;
  }
  /// Is n using more than its subtree quota in slot s (usage table u)?
  [[nodiscard]] bool over_quota_in(const kueue_amount* u, kueue_node_index n, kueue_fr_slot s) const noexcept {
    return u[idx(n, s)] > subtree_[idx(n, s)];
  }

  /// Adds `v` to node n's usage in slot s on table u, propagating upward what
  /// is drawn from the parents. A usage beyond kueue_usage_max throws
  /// overflow_error (can_add_usage tells beforehand).
  void add_usage_in(kueue_amount* u, kueue_node_index n, kueue_fr_slot s, kueue_amount v) const {
    for (kueue_node_index cur = n; cur != kueue_no_node && v > 0; cur = nodes_[cur].parent) {
      const std::size_t i = idx(cur, s);
      const kueue_amount local = std::max<kueue_amount>(0, guaranteed(cur, s) - u[i]);
      if (v > kueue_usage_max - u[i]) quota::detail::throw_overflow("a Kueue usage (beyond 2^89 base units)");
      u[i] += v;
      v = std::max<kueue_amount>(0, v - local);
    }
  }
  void remove_usage_in(kueue_amount* u, kueue_node_index n, kueue_fr_slot s, kueue_amount v) const noexcept {
    for (kueue_node_index cur = n; cur != kueue_no_node && v > 0; cur = nodes_[cur].parent) {
      const std::size_t i = idx(cur, s);
      const kueue_amount stored = u[i] - guaranteed(cur, s);
      u[i] -= v;
      if (stored <= 0) return;
      v = std::min(v, stored);
    }
  }
  /// Checks that adding `v` keeps every usage on the path within
  /// kueue_usage_max (for the strong guarantee).
  [[nodiscard]] bool can_add_usage(kueue_node_index n, kueue_fr_slot s, kueue_amount v) const noexcept {
    for (kueue_node_index cur = n; cur != kueue_no_node; cur = nodes_[cur].parent)
      if (v > kueue_usage_max - usage_[idx(cur, s)]) return false;
    return true;
  }
  void add_usage(kueue_node_index n, kueue_fr_slot s, kueue_amount v) { add_usage_in(usage_.data(), n, s, v); }
  void remove_usage(kueue_node_index n, kueue_fr_slot s, kueue_amount v) noexcept {
    remove_usage_in(usage_.data(), n, s, v);
  }

  /// Dominant resource share of a node, exact (see dominant_share). `extra`
  /// (optional, per slot) is a request added to the node's own usage first.
  [[nodiscard]] kueue_dominant_share share_in(const kueue_amount* u, kueue_node_index n,
                                              const kueue_amount* extra = nullptr) const {
    const node& nd = nodes_.at(n);
    kueue_dominant_share d;
    d.weight_milli = nd.fair_weight_milli;
    if (nd.parent == kueue_no_node) return d;
    for (std::size_t c = 0; c < columns_; ++c) {
      // at most 2^16 flavors (flavor_index), each term below 2^90 in magnitude: no overflow
      static_assert(sizeof(kueue_flavor_index) <= 2);
      quota::detail::int128 borrowed_sum = 0, lendable = 0;
      for (std::size_t f = 0; f < flavors_.size(); ++f) {
        const auto s = static_cast<kueue_fr_slot>(f * columns_ + c);
        const quota::detail::int128 b =
            static_cast<quota::detail::int128>(u[idx(n, s)]) + (extra ? extra[s] : 0) - subtree_[idx(n, s)];
        if (b > 0) borrowed_sum += b;
        lendable += potential_available(nd.parent, s);
      }
      if (borrowed_sum <= 0) continue;
      d.borrowing = true;
      if (lendable <= 0) continue;
      // ratio borrowed/lendable; the larger wins, ties to the smaller resource id
      if (d.dominant == no_resource ||
          std::is_gt(quota::detail::compare_products(
              static_cast<quota::detail::uint128>(borrowed_sum), static_cast<quota::detail::uint128>(d.lendable), 1,
              static_cast<quota::detail::uint128>(d.borrowed), static_cast<quota::detail::uint128>(lendable), 1))) {
        d.borrowed = borrowed_sum;
        d.lendable = lendable;
        d.dominant = resource_of_column_[c];
      }
    }
    return d;
  }
  [[nodiscard]] kueue_dominant_share share(kueue_node_index n, const kueue_amount* extra = nullptr) const {
    return share_in(usage_.data(), n, extra);
  }
  /// Kueue's rounded weighted share (the integer of its status): ceil of
  /// 1000 * borrowed / lendable / weight; the maximum int64 for a borrowing
  /// zero-weight node; 0 at a root or when not borrowing.
  [[nodiscard]] std::int64_t dominant_resource_share(kueue_node_index n, const kueue_amount* extra = nullptr,
                                                     resource_id* dominant = nullptr) const {
    const auto d = share(n, extra);
    if (dominant) *dominant = d.dominant;
    return d.rounded();
  }
  [[nodiscard]] std::int64_t dominant_resource_share_in(const kueue_amount* u, kueue_node_index n) const {
    return share_in(u, n).rounded();
  }

  /// Path from the root to n (inclusive), for hierarchical comparisons.
  void path_from_root(kueue_node_index n, std::vector<kueue_node_index>& out) const {
    out.clear();
    for (kueue_node_index cur = n; cur != kueue_no_node; cur = nodes_[cur].parent) out.push_back(cur);
    std::reverse(out.begin(), out.end());
  }

 private:
  [[nodiscard]] std::size_t idx(kueue_node_index n, kueue_fr_slot s) const noexcept {
    return static_cast<std::size_t>(n) * nslots_ + s;
  }
  // What potential_available reads: computed once from the quotas (parents first).
  [[nodiscard]] kueue_amount compute_potential(kueue_node_index n, kueue_fr_slot s) const noexcept {
    const std::size_t i = idx(n, s);
    if (nodes_[n].parent == kueue_no_node) return subtree_[i];
    kueue_amount a = guaranteed(n, s) + potential_[idx(nodes_[n].parent, s)];
    const kueue_amount bl = borrowing_[i];
    if (bl != detail::kueue_unset) a = std::min(a, subtree_[i] + bl);
    return a;
  }
  // What height reads: 1 for a cohort with children, plus its tallest child
  // cohort's height (read from height_: children are computed first).
  [[nodiscard]] std::int32_t compute_height(kueue_node_index n) const {
    if (!nodes_[n].is_cohort) return 0;
    std::int32_t h = nodes_[n].children.empty() ? 0 : 1;
    for (const auto c : nodes_[n].children)
      if (nodes_[c].is_cohort) h = std::max(h, height_[c] + 1);
    return h;
  }

  void build(const kueue_config& cfg, const resource_registry& reg);

  kueue_config cfg_;
  std::vector<std::string> flavors_;
  std::vector<node> nodes_;
  std::vector<kueue_cluster_queue_spec> cqs_;
  std::vector<std::vector<std::vector<kueue_flavor_index>>> group_flavors_;
  using name_map = std::unordered_map<std::string, kueue_node_index, quota::detail::string_hash, std::equal_to<>>;
  name_map cq_by_name_, cohort_by_name_, lq_;  // lq_: "ns/name" of a LocalQueue
  name_map flavor_at_;                         // ResourceFlavor name -> index
  std::vector<int> column_of_;
  std::vector<resource_id> resource_of_column_;
  std::size_t columns_ = 0;
  std::size_t nslots_ = 0;  // flavors_.size() * columns_
  std::vector<kueue_amount> nominal_, borrowing_, lending_, subtree_, usage_;
  std::vector<kueue_amount> potential_;  // potential_available, per (node, slot)
  std::vector<std::int32_t> height_;  // height, per node
  std::vector<std::uint8_t> defined_;
};

inline void kueue_cohort_forest::build(const kueue_config& cfg, const resource_registry& reg) {
  diagnostics diag;
  std::vector<std::string> flavors;
  name_map flavor_at;  // name -> index of its first ResourceFlavor
  for (std::size_t i = 0; i < cfg.resource_flavors.size(); ++i) {
    const auto& f = cfg.resource_flavors[i];
    if (f.empty()) diag.add("ResourceFlavor[" + std::to_string(i) + "].metadata.name", "empty name");
    if (!flavor_at.emplace(f, static_cast<kueue_node_index>(i)).second)
      diag.add("ResourceFlavor/" + f, "duplicate ResourceFlavor name");
    flavors.push_back(f);
  }
  auto rname = [&](resource_id r) -> std::string {
    try {
      return std::string(reg.name(r));
    } catch (const error&) {
      return "resource#" + std::to_string(r);
    }
  };

  // columns: every resource named by some quota
  std::vector<int> column_of;
  std::vector<resource_id> resource_of_column;
  auto add_column = [&](resource_id r) {
    if (r == no_resource) return;
    if (r >= column_of.size()) column_of.resize(static_cast<std::size_t>(r) + 1, -1);
    if (column_of[r] < 0) {
      column_of[r] = static_cast<int>(resource_of_column.size());
      resource_of_column.push_back(r);
    }
  };

  // quotas are kept exactly up to kueue_amount_max base units, per value and
  // per (flavor, resource) summed over the whole configuration
  std::map<std::pair<std::string, resource_id>, kueue_amount> nominal_sums;
  const auto too_large = [&](const std::string& path, kueue_amount v, resource_id r) {
    if (v > kueue_amount_max)
      diag.add(path, quota::detail::int128_to_string(v) + " base units is more than the largest quota kept exactly, " +
                         detail::kueue_bound_text(rname(r)));
  };

  // check resource groups (shared by ClusterQueues and Cohorts)
  auto check_groups = [&](const std::string& obj, const std::vector<kueue_resource_group_spec>& groups,
                          bool has_parent) {
    std::vector<resource_id> covered;
    std::vector<std::string> seen_flavors;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::string gp = obj + ".spec.resourceGroups[" + std::to_string(g) + "]";
      const auto& grp = groups[g];
      if (grp.covered_resources.empty()) diag.add(gp + ".coveredResources", "must not be empty");
      for (auto r : grp.covered_resources) {
        if (r == no_resource) {
          diag.add(gp + ".coveredResources", "unknown resource");
          continue;
        }
        if (std::find(covered.begin(), covered.end(), r) != covered.end())
          diag.add(gp + ".coveredResources", "resource '" + rname(r) + "' is covered by more than one resource group");
        covered.push_back(r);
        add_column(r);
      }
      for (std::size_t f = 0; f < grp.flavors.size(); ++f) {
        const auto& fq = grp.flavors[f];
        const std::string fp = gp + ".flavors[" + std::to_string(f) + "]";
        if (flavor_at.find(fq.flavor) == flavor_at.end())
          diag.add(fp + ".name", "unknown ResourceFlavor '" + fq.flavor + "'");
        if (std::find(seen_flavors.begin(), seen_flavors.end(), fq.flavor) != seen_flavors.end())
          diag.add(fp + ".name", "flavor '" + fq.flavor + "' is used more than once");
        seen_flavors.push_back(fq.flavor);
        bool same = fq.resources.size() == grp.covered_resources.size();
        for (std::size_t k = 0; same && k < fq.resources.size(); ++k)
          same = fq.resources[k].resource == grp.covered_resources[k];
        if (!same) diag.add(fp + ".resources", "must list exactly the coveredResources of the group, in order");
        for (std::size_t k = 0; k < fq.resources.size(); ++k) {
          const auto& rq = fq.resources[k];
          const std::string rp = fp + ".resources[" + std::to_string(k) + "]";
          if (rq.resource == no_resource) {
            diag.add(rp + ".name", "unknown resource");
            continue;
          }
          add_column(rq.resource);
          if (rq.nominal < 0) diag.add(rp + ".nominalQuota", "must not be negative");
          too_large(rp + ".nominalQuota", rq.nominal, rq.resource);
          if (rq.nominal >= 0 && rq.nominal <= kueue_amount_max) {
            auto& sum = nominal_sums[{fq.flavor, rq.resource}];
            sum += rq.nominal;  // at most 2^88 per term and 2^32 terms: no overflow
          }
          if (rq.borrowing_limit) too_large(rp + ".borrowingLimit", *rq.borrowing_limit, rq.resource);
          if (rq.lending_limit) too_large(rp + ".lendingLimit", *rq.lending_limit, rq.resource);
          if (rq.borrowing_limit) {
            if (*rq.borrowing_limit < 0) diag.add(rp + ".borrowingLimit", "must not be negative");
            if (!has_parent) diag.add(rp + ".borrowingLimit", "must be empty when there is no cohort/parent");
          }
          if (rq.lending_limit) {
            if (*rq.lending_limit < 0) diag.add(rp + ".lendingLimit", "must not be negative");
            if (!has_parent) diag.add(rp + ".lendingLimit", "must be empty when there is no cohort/parent");
            if (*rq.lending_limit > rq.nominal)
              diag.add(rp + ".lendingLimit", "must be less than or equal to the nominalQuota");
          }
        }
      }
    }
  };

  name_map cq_by_name, cohort_by_name, lq;
  std::vector<node> nodes;
  for (std::size_t i = 0; i < cfg.cluster_queues.size(); ++i) {
    const auto& cq = cfg.cluster_queues[i];
    const std::string obj = "ClusterQueue/" + (cq.name.empty() ? "[" + std::to_string(i) + "]" : cq.name);
    if (cq.name.empty()) diag.add(obj + ".metadata.name", "empty name");
    if (!cq_by_name.emplace(cq.name, static_cast<kueue_node_index>(i)).second)
      diag.add(obj, "duplicate ClusterQueue name");
    if (cq.fair_weight_milli < 0) diag.add(obj + ".spec.fairSharing.weight", "must not be negative");
    if (cq.preemption.borrow_within_cohort == kueue_borrow_within_cohort_policy::lower_priority &&
        cq.preemption.reclaim_within_cohort == kueue_reclaim_within_cohort_policy::never)
      diag.add(obj + ".spec.preemption.borrowWithinCohort",
               "may only be enabled when reclaimWithinCohort is not Never");
    // Kueue's webhook (validateFlavorFungibility) and CRD rule
    if (cq.fungibility.preference && (cq.fungibility.when_can_borrow != kueue_fungibility_action::try_next_flavor ||
                                      cq.fungibility.when_can_preempt != kueue_fungibility_action::try_next_flavor))
      diag.add(obj + ".spec.flavorFungibility.preference",
               "may be set only when whenCanBorrow and whenCanPreempt are both TryNextFlavor");
    check_groups(obj, cq.resource_groups, !cq.cohort.empty());
    if (cq.namespace_selector)
      for (std::size_t k = 0; k < cq.namespace_selector->match_expressions.size(); ++k) {
        const auto& r = cq.namespace_selector->match_expressions[k];
        const std::string rp = obj + ".spec.namespaceSelector.matchExpressions[" + std::to_string(k) + "]";
        if (r.key.empty()) diag.add(rp + ".key", "must not be empty");
        const bool set_op = r.oper == kueue_label_selector::op::in || r.oper == kueue_label_selector::op::not_in;
        if (set_op && r.values.empty())
          diag.add(rp + ".values", "must be specified when `operator` is 'In' or 'NotIn'");
        if (!set_op && !r.values.empty())
          diag.add(rp + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      }
    nodes.push_back(node{cq.name, false, kueue_no_node, {}, cq.fair_weight_milli});
  }
  const auto ncq = nodes.size();
  for (std::size_t i = 0; i < cfg.cohorts.size(); ++i) {
    const auto& co = cfg.cohorts[i];
    const std::string obj = "Cohort/" + (co.name.empty() ? "[" + std::to_string(i) + "]" : co.name);
    if (co.name.empty()) diag.add(obj + ".metadata.name", "empty name");
    if (!cohort_by_name.emplace(co.name, static_cast<kueue_node_index>(nodes.size())).second)
      diag.add(obj, "duplicate Cohort name");
    if (co.parent == co.name) diag.add(obj + ".spec.parentName", "a cohort cannot be its own parent");
    if (co.fair_weight_milli < 0) diag.add(obj + ".spec.fairSharing.weight", "must not be negative");
    check_groups(obj, co.resource_groups, !co.parent.empty());
    nodes.push_back(node{co.name, true, kueue_no_node, {}, co.fair_weight_milli});
  }
  // implicit cohorts: named by a ClusterQueue or a parentName but with no object
  auto cohort_node = [&](const std::string& name) -> kueue_node_index {
    auto it = cohort_by_name.find(name);
    if (it != cohort_by_name.end()) return it->second;
    const auto n = static_cast<kueue_node_index>(nodes.size());
    nodes.push_back(node{name, true, kueue_no_node, {}, 1000});
    cohort_by_name.emplace(name, n);
    return n;
  };
  for (std::size_t i = 0; i < cfg.cluster_queues.size(); ++i)
    if (!cfg.cluster_queues[i].cohort.empty()) nodes[i].parent = cohort_node(cfg.cluster_queues[i].cohort);
  for (std::size_t i = 0; i < cfg.cohorts.size(); ++i)
    if (!cfg.cohorts[i].parent.empty() && cfg.cohorts[i].parent != cfg.cohorts[i].name)
      nodes[ncq + i].parent = cohort_node(cfg.cohorts[i].parent);
  // cycles: a cohort whose chain of parents never ends is on a cycle or leads
  // into one; each chain is walked once (linear in the cohorts)
  {
    enum : std::uint8_t { unknown, on_walk, ends, cycles };
    std::vector<std::uint8_t> state(nodes.size(), unknown);
    std::vector<kueue_node_index> walk;
    for (std::size_t i = ncq; i < nodes.size(); ++i) {
      walk.clear();
      auto cur = static_cast<kueue_node_index>(i);
      std::uint8_t result = ends;
      while (cur != kueue_no_node && state[cur] == unknown) {
        state[cur] = on_walk;
        walk.push_back(cur);
        cur = nodes[cur].parent;
      }
      if (cur != kueue_no_node) result = state[cur] == on_walk ? std::uint8_t{cycles} : state[cur];
      for (const auto w : walk) state[w] = result;
    }
    for (std::size_t i = ncq; i < nodes.size(); ++i)
      if (state[i] == cycles) diag.add("Cohort/" + nodes[i].name + ".spec.parentName", "cohort is part of a cycle");
  }
  for (const auto& [key, sum] : nominal_sums)
    if (sum > kueue_amount_max)
      diag.add("ResourceFlavor/" + key.first + "[" + rname(key.second) + "]",
               "the nominal quotas of every ClusterQueue and Cohort sum to " + quota::detail::int128_to_string(sum) +
                   " base units, more than the largest total kept exactly, " +
                   detail::kueue_bound_text(rname(key.second)));
  for (std::size_t i = 0; i < cfg.local_queues.size(); ++i) {
    const auto& l = cfg.local_queues[i];
    const std::string obj = "LocalQueue/" + l.ns + "/" + l.name;
    if (l.name.empty()) diag.add(obj + ".metadata.name", "empty name");
    if (l.fair_weight_milli < 0) diag.add(obj + ".spec.fairSharing.weight", "must not be negative");
    auto it = cq_by_name.find(l.cluster_queue);
    if (it == cq_by_name.end()) {
      diag.add(obj + ".spec.clusterQueue", "unknown ClusterQueue '" + l.cluster_queue + "'");
      continue;
    }
    if (!lq.emplace(l.ns + "/" + l.name, it->second).second) diag.add(obj, "duplicate LocalQueue");
  }
  if (cfg.namespaces) {
    std::unordered_set<std::string_view> seen;
    for (std::size_t i = 0; i < cfg.namespaces->size(); ++i) {
      const auto& n = (*cfg.namespaces)[i];
      if (n.name.empty()) diag.add("Namespace[" + std::to_string(i) + "].metadata.name", "empty name");
      if (!seen.insert(n.name).second) diag.add("Namespace/" + n.name, "duplicate Namespace name");
    }
  }
  if (cfg.admission_fair_sharing) {
    const auto& a = *cfg.admission_fair_sharing;
    if (a.half_life_ms < 0) diag.add("admissionFairSharing.usageHalfLifeTime", "must not be negative");
    if (a.sampling_interval_ms <= 0) diag.add("admissionFairSharing.usageSamplingInterval", "must be positive");
    for (const auto& [r, w] : a.resource_weights_milli)
      if (w < 0) diag.add("admissionFairSharing.resourceWeights." + rname(r), "must not be negative");
  }
  // sizes: flavor and node indices leave their no_ value free; the quota
  // tables (one cell per node, flavor and resource) stay within kueue_max_cells
  if (flavors.size() >= kueue_no_flavor)
    diag.add("ResourceFlavor", std::to_string(flavors.size()) + " ResourceFlavors, more than the " +
                                   std::to_string(kueue_no_flavor - 1) + " a configuration may hold");
  if (nodes.size() >= kueue_no_node)
    diag.add("ClusterQueue",
             std::to_string(nodes.size()) + " ClusterQueues and cohorts, more than a configuration may hold");
  if (const auto cells = static_cast<quota::detail::uint128>(nodes.size()) * flavors.size() * resource_of_column.size();
      cells > kueue_max_cells)
    diag.add("ClusterQueue",
             quota::detail::int128_to_string(static_cast<quota::detail::int128>(cells)) +
                 " quota cells (ClusterQueues and cohorts x ResourceFlavors x resources), more than the " +
                 std::to_string(kueue_max_cells) + " a configuration may hold");
  diag.throw_if_any();

  // ---- build the tables in `next`, which replaces this forest once complete
  // (nothing below throws a validation error) ----
  kueue_cohort_forest next;
  const std::size_t cols = resource_of_column.size();
  const std::size_t nslots = flavors.size() * cols;
  const std::size_t cells = nodes.size() * nslots;
  next.nominal_.assign(cells, 0);
  next.borrowing_.assign(cells, detail::kueue_unset);
  next.lending_.assign(cells, detail::kueue_unset);
  next.subtree_.assign(cells, 0);
  next.usage_.assign(cells, 0);
  next.defined_.assign(cells, 0);
  auto flavor_idx = [&](const std::string& f) { return static_cast<kueue_flavor_index>(flavor_at.find(f)->second); };
  std::vector<std::vector<std::vector<kueue_flavor_index>>> gflav(ncq);
  auto fill = [&](std::size_t n, const std::vector<kueue_resource_group_spec>& groups,
                  std::vector<std::vector<kueue_flavor_index>>* gf) {
    for (const auto& g : groups) {
      if (gf) gf->emplace_back();
      for (const auto& fq : g.flavors) {
        const auto f = flavor_idx(fq.flavor);
        if (gf) gf->back().push_back(f);
        for (const auto& rq : fq.resources) {
          const std::size_t i = n * nslots + f * cols + static_cast<std::size_t>(column_of[rq.resource]);
          next.nominal_[i] = rq.nominal;
          next.borrowing_[i] = rq.borrowing_limit ? *rq.borrowing_limit : detail::kueue_unset;
          next.lending_[i] = rq.lending_limit ? *rq.lending_limit : detail::kueue_unset;
          next.defined_[i] = 1;
        }
      }
    }
  };
  for (std::size_t i = 0; i < ncq; ++i) fill(i, cfg.cluster_queues[i].resource_groups, &gflav[i]);
  for (std::size_t i = 0; i < cfg.cohorts.size(); ++i) fill(ncq + i, cfg.cohorts[i].resource_groups, nullptr);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].parent != kueue_no_node) nodes[nodes[i].parent].children.push_back(static_cast<kueue_node_index>(i));

  next.cfg_ = cfg;
  next.flavors_ = std::move(flavors);
  next.flavor_at_ = std::move(flavor_at);
  next.nodes_ = std::move(nodes);
  next.cqs_ = cfg.cluster_queues;
  for (auto& c : next.cqs_) c.fair_sharing = cfg.fair_sharing;
  next.group_flavors_ = std::move(gflav);
  next.cq_by_name_ = std::move(cq_by_name);
  next.cohort_by_name_ = std::move(cohort_by_name);
  next.lq_ = std::move(lq);
  next.column_of_ = std::move(column_of);
  next.resource_of_column_ = std::move(resource_of_column);
  next.columns_ = cols;
  next.nslots_ = nslots;
  // subtree quotas, children before parents (post-order from each root)
  std::vector<std::pair<kueue_node_index, bool>> stack;
  for (kueue_node_index r = 0; r < next.nodes_.size(); ++r) {
    if (next.nodes_[r].parent != kueue_no_node) continue;
    stack.push_back({r, false});
    while (!stack.empty()) {
      auto [n, done] = stack.back();
      stack.pop_back();
      if (!done) {
        stack.push_back({n, true});
        for (auto c : next.nodes_[n].children) stack.push_back({c, false});
        continue;
      }
      for (kueue_fr_slot s = 0; s < nslots; ++s) {
        kueue_amount v = next.nominal_[n * nslots + s];
        for (auto c : next.nodes_[n].children)
          v += next.subtree_[c * nslots + s] - next.guaranteed(c, s);  // at most the nominal total: no overflow
        next.subtree_[n * nslots + s] = v;
      }
    }
  }
  // potential availability (parents before children) and heights
  std::vector<kueue_node_index> order;
  for (kueue_node_index r = 0; r < next.nodes_.size(); ++r)
    if (next.nodes_[r].parent == kueue_no_node) order.push_back(r);
  for (std::size_t k = 0; k < order.size(); ++k)
    for (const auto c : next.nodes_[order[k]].children) order.push_back(c);
  next.potential_.assign(next.nodes_.size() * nslots, 0);
  next.height_.assign(next.nodes_.size(), 0);
  for (const auto n : order)
    for (kueue_fr_slot s = 0; s < nslots; ++s) next.potential_[n * nslots + s] = next.compute_potential(n, s);
  for (auto it = order.rbegin(); it != order.rend(); ++it) next.height_[*it] = next.compute_height(*it);
  *this = std::move(next);
}

}  // namespace quota
