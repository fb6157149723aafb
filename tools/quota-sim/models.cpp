// SPDX-License-Identifier: Apache-2.0
// The model registry of quota-sim (models.hpp), compiled once into the
// quota_sim library.
#include "models.hpp"

#include <map>
#include <string>

#include "models/budget.hpp"
#include "models/elastic_quota.hpp"
#include "models/kai_claims.hpp"
#include "models/kai_fair_share.hpp"
#include "models/kueue.hpp"
#include "models/priority_class_quota.hpp"
#include "models/running_limits.hpp"
#include "models/sharing_pools.hpp"
#include "models/volcano.hpp"
#include "models/volcano_capacity.hpp"
#include "models/yunikorn_limits.hpp"
#include "policy_entry.hpp"
#include "reload.hpp"

namespace quota::sim {

void register_models() {
  auto& k = model_kinds();
  if (!k.empty()) return;
  // every model: its name in policies[].model, what `quota-sim models` says of
  // its entry, how the entry is built and how quota-sim generate derives one
  // for synthetic tenants (models/<name>.hpp, namespace detail)
  using namespace detail;
  k = std::map<std::string, model_kind>{
      {"budget",
       model_kind{"budget over time per tenant: {\"resource\", \"tenant\": queue|namespace|user|group, \"window\": "
                  "calendar|rolling, \"windowStart\", \"windowLength\", \"defaultDuration\", \"onExhausted\": "
                  "deny|admit_preemptible, \"budgets\": {\"team-a\": \"500h\", \"*\": ...}}",
                  budget_make, budget_synthesize}},
      {"elastic_quota",
       model_kind{
           "nos ElasticQuota / CompositeElasticQuota: {\"objects\": List, \"options\": {\"upstream\", \"missing\", "
           "\"preemption\", \"labelOrder\", \"gpuMemoryPerGPU\"}}; job.namespace selects the quota",
           elastic_quota_make, elastic_quota_synthesize}},
      {"kai_claims",
       model_kind{
           "shared DRA ResourceClaims with one owning queue per claim (KAI's claim-sharing design, or KAI today with "
           "mode upstream): {\"objects\": [ResourceClaim, DeviceClass ...], \"pods\": [Pod ...], \"options\": "
           "{\"locking\": \"deny_foreign\", \"orphans\": \"deduct\", \"opt_out\": [...]}}; jobs name claims in "
           "`claims`",
           claims_make, claims_synthesize}},
      {"kai_fair_share",
       model_kind{
           "KAI hierarchical fair share: {\"objects\": [KAI Queue objects], \"options\": {\"gpuResource\": ...}}",
           kai_fair_share_make, kai_fair_share_synthesize}},
      {"kueue",
       model_kind{
           "Kueue ClusterQueues in cohorts of any depth with flavors, nominal quota, borrowing and lending limits, "
           "preemption and fair sharing: {\"objects\": [ResourceFlavor, ClusterQueue, Cohort, LocalQueue ...], "
           "\"options\": {\"fairSharing\": false}}",
           kueue_make, kueue_synthesize}},
      {"priority_class_quota", model_kind{"min/max per (tenant, PriorityClass): {\"tenant\": queue|namespace|user, "
                                          "\"quotas\": {\"team-a\": {\"high\": "
                                          "{\"min\": {...}, \"max\": {...}}}, \"*\": {...}}}",
                                          priority_class_quota_make, priority_class_quota_synthesize}},
      {"running_limits", model_kind{"running-job limits per queue, user and namespace: {\"queues\": {\"team-a\": 3, "
                                    "\"*\": 10}, \"users\": {...}, "
                                    "\"namespaces\": {...}}",
                                    running_limits_make, running_limits_synthesize}},
      {"sharing_pools",
       model_kind{"elastic quotas grouped in sharing pools: {\"pools\": [{\"name\", \"lendAcross\", \"borrowAcross\", "
                  "\"quotas\": [{\"name\", \"namespaces\", \"min\", \"max\"}]}]}; job.namespace selects the quota",
                  sharing_pools_make, sharing_pools_synthesize}},
      {"volcano",
       model_kind{
           "Volcano Queues (proportion plugin): {\"objects\": [Queue ...], \"options\": {\"plugin\": \"proportion\", "
           "\"enqueue\": false, \"overcommitFactor\": 1.2, \"upstream\": false}}",
           volcano_make, volcano_synthesize}},
      {"volcano_capacity",
       model_kind{"Volcano Queues (capacity plugin, flat or hierarchical): {\"objects\": [Queue ...], \"options\": "
                  "{\"hierarchy\": true, \"ancestorReclaimLevel\": 0, \"enqueue\": false, \"upstream\": false}}",
                  volcano_capacity_make, volcano_capacity_synthesize}},
      {"yunikorn_limits",
       model_kind{
           "YuniKorn user and group limits (maxresources, maxapplications per user and group at every queue level, "
           "wildcards, cumulative group pool): {\"config\": {\"partitions\": [{\"queues\": [{\"name\": \"root\", "
           "\"limits\": [...], \"queues\": [...]}]}]}, \"options\": {\"partition\": \"default\", \"vcoreAsCpu\": true, "
           "\"upstream\": false}}",
           yunikorn_limits_make, yunikorn_limits_synthesize}}};
}

std::vector<model_instance> build_models(scenario& sc) {
  register_models();
  std::vector<model_instance> out;
  diagnostics diag;
  for (std::size_t i = 0; i < sc.policies.size(); ++i) {
    const auto& ps = sc.policies[i];
    // the entry checks the jobs submitted before its first reload that applies
    sc.check_jobs_from_ms = 0;
    sc.check_jobs_until_ms = next_reload_ms(sc, i, -1);
    auto it = model_kinds().find(ps.model);
    if (it == model_kinds().end()) {
      std::string known;
      for (const auto& [name, kind] : model_kinds()) known += (known.empty() ? "" : ", ") + name;
      diag.add(ps.path + ".model",
               "unknown model '" + ps.model + "' (known: " + (known.empty() ? "none" : known) + ")");
      continue;
    }
    if (auto mi = build_entry(it->second, ps, sc, diag)) out.push_back(std::move(*mi));
  }
  validate_reloads(sc, diag);
  validate_shrink(sc, diag);
  sc.check_jobs_from_ms = 0;
  sc.check_jobs_until_ms = std::numeric_limits<std::int64_t>::max();
  // a reload event's own problems, when its expect_error names them, refuse it instead
  const auto rest = take_event_errors(sc, diag.items());
  if (!rest.empty()) throw validation_error(rest);
  return out;
}

}  // namespace quota::sim
