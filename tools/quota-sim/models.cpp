// SPDX-License-Identifier: Apache-2.0
// The model registry of quota-sim (models.hpp), compiled once into the
// quota_sim library.
#include "models.hpp"

#include <quota/running_limits_json.hpp>

#include "models/claims.hpp"
#include "models/elastic_quota.hpp"
#include "models/extra.hpp"
#include "models/fair_share.hpp"
#include "models/kueue.hpp"
#include "models/limits.hpp"
#include "models/volcano.hpp"
#include "reload.hpp"

namespace quota::sim {

void register_models() {
  auto& k = model_kinds();
  if (!k.empty()) return;
  register_claims_model(k);
  register_elastic_quota_model(k);
  register_extra_models(k);
  register_fair_share_model(k);
  register_kueue_model(k);
  register_limits_model(k);
  register_volcano_model(k);
  k["running_limits"] = model_kind{
      "running-job limits per queue, user and namespace: {\"queues\": {\"team-a\": 3, \"*\": 10}, \"users\": {...}, "
      "\"namespaces\": {...}}",
      [](const policy_spec& ps, scenario&) { return instance_of(load_running_limits(ps.body, ps.path)); },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // each tenant may run as many jobs as it has GPUs in an even split
        json p{{"model", "running_limits"}, {"queues", json::object()}};
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        const auto per = std::max<amount>(
            1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
        for (const auto& t : tenants) p["queues"][t] = per;
        return p;
      }};
}

std::vector<model_instance> build_models(scenario& sc) {
  register_models();
  std::vector<model_instance> out;
  diagnostics diag;
  for (const auto& ps : sc.policies) {
    auto it = model_kinds().find(ps.model);
    if (it == model_kinds().end()) {
      std::string known;
      for (const auto& [name, kind] : model_kinds()) known += (known.empty() ? "" : ", ") + name;
      diag.add(ps.path + ".model",
               "unknown model '" + ps.model + "' (known: " + (known.empty() ? "none" : known) + ")");
      continue;
    }
    try {
      out.push_back(it->second.make(ps, sc));
    } catch (const validation_error& e) {
      // models report paths relative to their entry, or already rooted at it
      for (const auto& p : e.problems())
        diag.add(p.path.rfind(ps.path, 0) == 0 ? p.path : ps.path + ": " + p.path, p.message);
    } catch (const error& e) {
      diag.add(ps.path, e.what());
    } catch (const json::exception& e) {
      // a model read a field of the wrong type or range without checking it first
      diag.add(ps.path, std::string("unexpected value: ") + e.what());
    }
  }
  validate_reloads(sc, diag);
  // a reload event's own problems, when its expect_error names them, refuse it instead
  const auto rest = take_event_errors(sc, diag.items());
  if (!rest.empty()) throw validation_error(rest);
  return out;
}

}  // namespace quota::sim
