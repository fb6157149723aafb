// Every model of the library satisfies the policy concept, and any subset of
// them composes into an engine that is itself a policy.
#include <quota/capacity_queues.hpp>
#include <quota/claims.hpp>
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>
#include <quota/fair_share.hpp>
#include <quota/kueue_preemption.hpp>
#include <quota/limits.hpp>
#include <quota/queue_tree.hpp>
#include <quota/budget.hpp>
#include <quota/priority_class_quota.hpp>
#include <quota/running_limits.hpp>
#include <quota/sharing_pools.hpp>
#include <quota/shrink.hpp>

namespace {
using namespace quota;

static_assert(policy<elastic_quota_policy>);   // nos elastic quotas
static_assert(policy<limits_policy>);          // YuniKorn user and group limits
static_assert(policy<claims_policy>);          // KAI DRA claim ownership
static_assert(policy<kueue::kueue_policy>);    // Kueue cohorts and flavors
static_assert(policy<running_limits>);         // running-job limits
static_assert(policy<budget_policy>);          // budgets over time
static_assert(policy<priority_class_quota>);   // per-priority-class quota
static_assert(policy<sharing_pools>);          // tenant sharing pools
static_assert(policy<queue_policy>);           // Volcano queues
static_assert(policy<capacity_queue_policy>);  // Volcano queues, capacity plugin
static_assert(policy<fair_share_policy>);      // KAI hierarchical fair share
static_assert(policy<shrink_tracker>);         // quota shrink with grace (observer)
static_assert(policy<any_policy>);
static_assert(policy<engine>);

// compile-time composition of every model, and a subset
static_assert(policy<basic_engine<elastic_quota_policy, limits_policy, queue_policy, claims_policy,
                                  fair_share_policy, kueue::kueue_policy, running_limits>>);
static_assert(policy<basic_engine<limits_policy, claims_policy>>);
static_assert(basic_engine<limits_policy, claims_policy>::model_count() == 2);

// a type missing one member is not a policy
struct no_release {
  std::string_view policy_name() const { return "x"; }
  decision check(const job&) const { return {}; }
  void commit(const job&) {}
  void victims(const job&, std::vector<victim>&) const {}
};
static_assert(!policy<no_release>);
}  // namespace
