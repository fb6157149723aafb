// SPDX-License-Identifier: Apache-2.0
// Every model of the library satisfies the policy concept, and any subset of
// them composes into an engine that is itself a policy.
#include <span>
#include <string_view>

#include <quota/budget.hpp>
#include <quota/capabilities.hpp>
#include <quota/volcano_capacity.hpp>
#include <quota/kai_claims.hpp>
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>
#include <quota/kai_fair_share.hpp>
#include <quota/kueue.hpp>
#include <quota/yunikorn_limits.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/volcano.hpp>
#include <quota/running_limits.hpp>
#include <quota/sharing_pools.hpp>
#include <quota/shrink.hpp>

namespace {
using namespace quota;

static_assert(policy<elastic_quota_policy>);   // nos elastic quotas
static_assert(policy<yunikorn_limits_policy>);          // YuniKorn user and group limits
static_assert(policy<kai_claims_policy>);          // KAI DRA claim ownership
static_assert(policy<kueue_policy>);    // Kueue cohorts and flavors
static_assert(policy<running_limits_policy>);         // running-job limits
static_assert(policy<budget_policy>);          // budgets over time
static_assert(policy<priority_class_quota_policy>);   // per-priority-class quota
static_assert(policy<sharing_pools_policy>);          // tenant sharing pools
static_assert(policy<volcano_policy>);           // Volcano queues
static_assert(policy<volcano_capacity_policy>);  // Volcano queues, capacity plugin
static_assert(policy<kai_fair_share_policy>);      // KAI hierarchical fair share
static_assert(policy<shrink_tracker>);         // quota shrink with grace (observer)
static_assert(policy<any_policy>);
static_assert(policy<engine>);

// compile-time composition of every model, and a subset
static_assert(policy<basic_engine<elastic_quota_policy, yunikorn_limits_policy, volcano_policy, kai_claims_policy, kai_fair_share_policy,
                                  kueue_policy, running_limits_policy>>);
static_assert(policy<basic_engine<yunikorn_limits_policy, kai_claims_policy>>);
static_assert(basic_engine<yunikorn_limits_policy, kai_claims_policy>::model_count() == 2);

// optional capabilities (quota/capabilities.hpp): the models whose upstream
// orders pending work or shares by demand have them, the others do not
static_assert(order_aware<elastic_quota_policy>);   // nos: priority, then creation
static_assert(order_aware<volcano_policy>);           // Volcano proportion's queue order
static_assert(order_aware<volcano_capacity_policy>);  // Volcano capacity's queue order
static_assert(order_aware<kai_fair_share_policy>);      // KAI's queue order chain
static_assert(order_aware<kueue_policy>);    // Kueue's cycle entry order
static_assert(!order_aware<yunikorn_limits_policy>);
static_assert(!order_aware<kai_claims_policy>);
static_assert(!order_aware<running_limits_policy>);
static_assert(!order_aware<budget_policy>);
static_assert(!order_aware<priority_class_quota_policy>);
// a model that picks among heads itself (Kueue's fair-sharing tournament), or not
template <class P>
concept selects_head = requires(const P& p, std::span<const job* const> heads) {
  { p.select_head(heads) } -> std::same_as<std::size_t>;
};
static_assert(selects_head<kueue_policy>);
static_assert(selects_head<any_policy>);
static_assert(selects_head<engine>);
static_assert(!selects_head<volcano_policy>);
static_assert(!selects_head<kai_fair_share_policy>);
static_assert(!selects_head<elastic_quota_policy>);
static_assert(!order_aware<sharing_pools_policy>);
static_assert(demand_aware<volcano_policy>);       // deserved follows pending demand
static_assert(demand_aware<kai_fair_share_policy>);  // fair share follows pending demand
static_assert(!demand_aware<elastic_quota_policy>);
static_assert(demand_aware<volcano_capacity_policy>);  // upstream hierarchical: a job waiting in an inner queue blocks
static_assert(!demand_aware<kueue_policy>);
static_assert(!demand_aware<yunikorn_limits_policy>);
static_assert(!demand_aware<kai_claims_policy>);
static_assert(node_preemption_aware<elastic_quota_policy>);   // SelectVictimsOnNode's candidates
static_assert(node_preemption_aware<volcano_policy>);           // Volcano's preempt action
static_assert(node_preemption_aware<volcano_capacity_policy>);  // Volcano's preempt action
static_assert(node_preemption_aware<kai_fair_share_policy>);      // KAI's preempt action
static_assert(!node_preemption_aware<kueue_policy>);   // Kueue leaves nodes to kube-scheduler
static_assert(!node_preemption_aware<yunikorn_limits_policy>);
static_assert(!node_preemption_aware<kai_claims_policy>);
static_assert(!node_preemption_aware<running_limits_policy>);
static_assert(charge_aware<kai_claims_policy>);  // a shared claim's devices, to the owning queue
static_assert(!charge_aware<kai_fair_share_policy>);
static_assert(charge_receiver<kai_fair_share_policy>);  // charges count in the queue's allocation
static_assert(charge_receiver<volcano_policy>);
static_assert(charge_receiver<volcano_capacity_policy>);
static_assert(!charge_receiver<kai_claims_policy>);
static_assert(!charge_receiver<kueue_policy>);
static_assert(!charge_receiver<running_limits_policy>);  // a charge is not a running job
static_assert(!charge_receiver<yunikorn_limits_policy>);
struct charge_without_release {
  void charges_after_commit(const job&, std::vector<queue_charge>&) const {}
  void current_charges(std::vector<queue_charge>&) const {}
};
static_assert(!charge_aware<charge_without_release>);
// the type-erased holder and both engines forward them (engines nest)
static_assert(order_aware<any_policy> && demand_aware<any_policy>);
static_assert(order_aware<engine> && demand_aware<engine>);
static_assert(order_aware<basic_engine<yunikorn_limits_policy, kai_claims_policy>>);
static_assert(demand_aware<basic_engine<yunikorn_limits_policy, kai_claims_policy>>);
static_assert(node_preemption_aware<any_policy> && node_preemption_aware<engine>);
// the cluster's total: the models that divide it (Volcano's plugins, KAI fair share)
static_assert(capacity_aware<volcano_policy>);
static_assert(capacity_aware<volcano_capacity_policy>);
static_assert(capacity_aware<kai_fair_share_policy>);
static_assert(!capacity_aware<kueue_policy>);  // nominal quotas do not follow the nodes
static_assert(!capacity_aware<elastic_quota_policy>);
static_assert(!capacity_aware<yunikorn_limits_policy>);
static_assert(!capacity_aware<sharing_pools_policy>);
static_assert(capacity_aware<any_policy> && capacity_aware<engine>);
static_assert(capacity_aware<basic_engine<yunikorn_limits_policy, kai_claims_policy>>);
struct capacity_by_value {  // a total taken by value and returned: not the capability's shape
  int set_cluster_capacity(resource_vector) { return 0; }
};
static_assert(!capacity_aware<capacity_by_value>);
// cycles: Kueue holds capacity for a denied head within a cycle; the others do not
static_assert(cycle_aware<kueue_policy>);
static_assert(!cycle_aware<volcano_policy>);
static_assert(!cycle_aware<kai_fair_share_policy>);
static_assert(!cycle_aware<elastic_quota_policy>);
static_assert(!cycle_aware<yunikorn_limits_policy>);
static_assert(cycle_aware<any_policy> && cycle_aware<engine>);
static_assert(cycle_aware<basic_engine<yunikorn_limits_policy, kai_claims_policy>>);

// a partial capability is no capability: order needs all three members
struct order_without_heads {
  std::string_view pending_queue(const job&) const { return {}; }
  std::weak_ordering compare_pending(const job&, const job&) const { return std::weak_ordering::equivalent; }
};
static_assert(!order_aware<order_without_heads>);
struct order_with_int_result {
  std::string_view pending_queue(const job&) const { return {}; }
  int compare_pending(const job&, const job&) const { return 0; }
  int compare_heads(const job&, const job&) const { return 0; }
};
static_assert(!order_aware<order_with_int_result>);
struct demand_without_withdraw {
  void pending_added(const job&) {}
};
static_assert(!demand_aware<demand_without_withdraw>);
// cycles need all three members
struct cycle_without_end {
  void begin_cycle() {}
  void head_denied(const job&) {}
};
static_assert(!cycle_aware<cycle_without_end>);
struct cycle_with_wrong_denial {
  void begin_cycle() {}
  void head_denied(std::string_view) {}
  void end_cycle() {}
};
static_assert(!cycle_aware<cycle_with_wrong_denial>);

// a type missing one member is not a policy
struct no_release {
  std::string_view policy_name() const { return "x"; }
  decision check(const job&) const { return {}; }
  void commit(const job&) {}
  void victims(const job&, std::vector<victim>&) const {}
};
static_assert(!policy<no_release>);
}  // namespace
