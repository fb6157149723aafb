// quota-sim's fair_share model, compiled once into the quota_sim library.
#include "fair_share.hpp"

namespace quota::sim {

void register_fair_share_model(std::map<std::string, model_kind>& kinds) {
  kinds["kai_fair_share"] = model_kind{
      "KAI hierarchical fair share: {\"objects\": [KAI Queue objects], \"options\": {\"gpuResource\": ...}}",
      [](const policy_spec& ps, scenario& sc) { return detail::kai_fair_share_make(ps, sc); },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        // one queue per tenant under a root; quota = even share of the GPUs, weight 1, no limit
        // the `gpu` amounts are read in the units of gpuResource (devices for
        // nvidia.com/gpu, thousandths for alibaba.com/gpu-milli), so the even
        // share is written in those units
        const auto gpu = gpu_dimension(capacity, reg).first;
        const std::string gname(reg.name(gpu));
        const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
        json objs = json::array();
        const json unlimited{{"quota", -1}, {"overQuotaWeight", 1}, {"limit", -1}};
        json root;
        root["metadata"]["name"] = "root";
        root["spec"]["resources"]["gpu"] = unlimited;
        root["spec"]["resources"]["cpu"] = unlimited;
        root["spec"]["resources"]["memory"] = unlimited;
        objs.push_back(root);
        for (const auto& t : tenants) {
          json q;
          q["metadata"]["name"] = t;
          q["spec"]["parentQueue"] = "root";
          q["spec"]["resources"]["gpu"] = json{{"quota", capacity.get(gpu) / n}, {"overQuotaWeight", 1}, {"limit", -1}};
          // cpu and memory get an even share too: an omitted quota is 0, and
          // non-preemptible jobs must fit within quota in every resource
          // (KAI units: cpu millicores, memory MB of 10^6 bytes)
          q["spec"]["resources"]["cpu"] =
              json{{"quota", capacity.get(resources::cpu) / n}, {"overQuotaWeight", 1}, {"limit", -1}};
          q["spec"]["resources"]["memory"] =
              json{{"quota", capacity.get(resources::memory) / 1'000'000 / n}, {"overQuotaWeight", 1}, {"limit", -1}};
          objs.push_back(q);
        }
        json out;
        out["model"] = "kai_fair_share";
        out["objects"] = objs;
        out["options"]["gpuResource"] = gname;
        return out;
      }};
}

}  // namespace quota::sim
