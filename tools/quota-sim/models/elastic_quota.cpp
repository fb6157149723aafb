// quota-sim's elastic_quota model, compiled once into the quota_sim library.
#include "elastic_quota.hpp"

namespace quota::sim {

void register_elastic_quota_model(std::map<std::string, model_kind>& kinds) {
  kinds["elastic_quota"] = model_kind{
      "nos ElasticQuota / CompositeElasticQuota: {\"objects\": List, \"options\": {\"upstream\", \"preemption\", "
      "\"labelOrder\"}}; job.namespace selects the quota",
      [](const policy_spec& ps, scenario& sc) {
        diagnostics diag;
        for (auto it = ps.body.begin(); it != ps.body.end(); ++it)
          if (it.key() != "model" && it.key() != "objects" && it.key() != "options")
            diag.add(ps.path + "." + it.key(), "unknown field (objects, options)");
        elastic_options opt;
        std::int64_t gb_per_gpu = 0;
        if (ps.body.contains("options")) {
          const auto& o = ps.body["options"];
          const std::string op = ps.path + ".options";
          if (!o.is_object()) {
            diag.add(op, "expected an object");
          } else {
            for (auto it = o.begin(); it != o.end(); ++it) {
              const std::string k = it.key();
              const auto& v = it.value();
              if (k == "upstream" && v.is_boolean())
                opt.missing = v.get<bool>() ? elastic_missing_policy::upstream : elastic_missing_policy::unlimited;
              else if (k == "preemption" && v == "nos")
                opt.preemption = elastic_preemption_policy::nos;
              else if (k == "preemption" && v == "capacity_scheduling")
                opt.preemption = elastic_preemption_policy::capacity_scheduling;
              else if (k == "labelOrder" && v == "nos")
                opt.label_order = elastic_label_order::nos;
              else if (k == "labelOrder" && v == "creation_then_size")
                opt.label_order = elastic_label_order::creation_then_size;
              else if (k == "gpuMemoryPerGPU" && v.is_number_integer() && v.get<std::int64_t>() > 0)
                gb_per_gpu = v.get<std::int64_t>();
              else
                diag.add(op + "." + k,
                         "unknown option or value (upstream: bool; preemption: nos|capacity_scheduling; "
                         "labelOrder: nos|creation_then_size; gpuMemoryPerGPU: GB > 0)");
            }
          }
        }
        std::vector<elastic_quota_spec> specs;
        try {
          specs = load_elastic_quotas(ps.body.value("objects", json::array()), sc.registry);
        } catch (const validation_error& e) {
          for (const auto& p : e.problems()) diag.add(ps.path + ".objects: " + p.path, p.message);
        } catch (const error& e) {
          diag.add(ps.path + ".objects", e.what());
        }
        diag.throw_if_any();
        auto set = std::make_shared<elastic_quota_set>(std::move(specs), opt, nullptr);
        if (gb_per_gpu == 0) return instance_of(sim_elastic_quota(std::move(set)));
        return instance_of(
            sim_elastic_quota(std::move(set), std::make_shared<const resource_registry>(sc.registry), gb_per_gpu));
      },
      [](const std::vector<std::string>& tenants, const resource_vector& capacity, const resource_registry& reg) {
        const auto [gpu, unit] = gpu_dimension(capacity, reg);
        (void)unit;
        const amount share = capacity.get(gpu) / static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
        json items = json::array();
        for (const auto& t : tenants)
          items.push_back({{"apiVersion", "nos.nebuly.com/v1alpha1"},
                           {"kind", "ElasticQuota"},
                           {"metadata", {{"name", t}, {"namespace", t}}},
                           {"spec", {{"min", {{std::string(reg.name(gpu)), share}}}}}});
        return json{{"model", "elastic_quota"},
                    {"objects", {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}}};
      }};
}

}  // namespace quota::sim
