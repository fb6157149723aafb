// SPDX-License-Identifier: Apache-2.0
// The model registry of quota-sim (models.hpp), compiled once into the
// quota_sim library.
#include "models.hpp"

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
  register_budget_model(k);
  register_kai_claims_model(k);
  register_elastic_quota_model(k);
  register_kai_fair_share_model(k);
  register_kueue_model(k);
  register_yunikorn_limits_model(k);
  register_priority_class_quota_model(k);
  register_running_limits_model(k);
  register_sharing_pools_model(k);
  register_volcano_model(k);
  register_volcano_capacity_model(k);
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
  sc.check_jobs_from_ms = 0;
  sc.check_jobs_until_ms = std::numeric_limits<std::int64_t>::max();
  // a reload event's own problems, when its expect_error names them, refuse it instead
  const auto rest = take_event_errors(sc, diag.items());
  if (!rest.empty()) throw validation_error(rest);
  return out;
}

}  // namespace quota::sim
