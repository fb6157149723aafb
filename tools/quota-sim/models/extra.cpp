// quota-sim's extra models, compiled once into the quota_sim library.
#include "extra.hpp"

namespace quota::sim {

void register_extra_models(std::map<std::string, model_kind>& kinds) {
  kinds["budget"] = model_kind{
      "budget over time per tenant: {\"resource\", \"tenant\": queue|namespace|user|group, \"window\": "
      "calendar|rolling, \"windowStart\", \"windowLength\", \"defaultDuration\", \"onExhausted\": "
      "deny|admit_preemptible, \"budgets\": {\"team-a\": \"500h\", \"*\": ...}}",
      [](const policy_spec& ps, scenario& sc) {
        auto mi = instance_of(sim_budget(load_budget(ps.body, sc.registry, ps.path)));
        mi.on_time = [](any_policy& p, std::int64_t now) { p.target<sim_budget>()->advance_to(now); };
        mi.next_wake = [](const any_policy& p, std::int64_t) { return p.target<sim_budget>()->next_reset(); };
        return mi;
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // each tenant: its even GPU share for a whole week
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        const auto share = std::max<amount>(
            1, capacity.get(gpu) / unit / static_cast<amount>(std::max<std::size_t>(1, tenants.size())));
        json p{{"model", "budget"}, {"resource", std::string(reg.name(gpu))}, {"budgets", json::object()}};
        for (const auto& t : tenants) p["budgets"][t] = std::to_string(share * 168 * unit) + "h";
        return p;
      }};
  kinds["priority_class_quota"] = model_kind{
      "min/max per (tenant, PriorityClass): {\"tenant\": queue|namespace|user, \"quotas\": {\"team-a\": {\"high\": "
      "{\"min\": {...}, \"max\": {...}}}, \"*\": {...}}}",
      [](const policy_spec& ps, scenario& sc) {
        auto pq = load_priority_class_quota(ps.body, sc.registry, ps.path);
        auto reg = std::make_shared<const resource_registry>(sc.registry);
        pq.rebind_registry(reg.get());
        return instance_of(sim_named<priority_class_quota>(std::move(reg), std::move(pq)));
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // at most half the cluster's GPUs at class "high" per tenant
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        (void)unit;
        json p{{"model", "priority_class_quota"}, {"quotas", json::object()}};
        for (const auto& t : tenants)
          p["quotas"][t] = json{{"high", {{"max", {{std::string(reg.name(gpu)), capacity.get(gpu) / 2}}}}}};
        return p;
      }};
  kinds["sharing_pools"] = model_kind{
      "elastic quotas grouped in sharing pools: {\"pools\": [{\"name\", \"lendAcross\", \"borrowAcross\", "
      "\"quotas\": [{\"name\", \"namespaces\", \"min\", \"max\"}]}]}; job.namespace selects the quota",
      [](const policy_spec& ps, scenario& sc) {
        auto sp = load_sharing_pools(ps.body, sc.registry, ps.path);
        auto reg = std::make_shared<const resource_registry>(sc.registry);
        sp.rebind_registry(reg.get());
        return instance_of(sim_named<sharing_pools>(std::move(reg), std::move(sp)));
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // two pools of half the tenants each; they lend to and borrow from each other
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        (void)unit;
        const amount share = capacity.get(gpu) / static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
        json pools = json::array(
            {json{{"name", "pool-1"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}},
             json{{"name", "pool-2"}, {"lendAcross", true}, {"borrowAcross", true}, {"quotas", json::array()}}});
        for (std::size_t i = 0; i < tenants.size(); ++i)
          pools[i < (tenants.size() + 1) / 2 ? 0 : 1]["quotas"].push_back(
              json{{"name", tenants[i]}, {"min", {{std::string(reg.name(gpu)), share}}}});
        if (pools[1]["quotas"].empty()) pools.erase(1);
        return json{{"model", "sharing_pools"}, {"pools", pools}};
      }};
}

}  // namespace quota::sim
