// SPDX-License-Identifier: Apache-2.0
// Three upstream rules in one engine: Volcano queues (realCapability and
// deserved from the proportion plugin), YuniKorn user limits and KAI's
// ownership of shared ResourceClaims. A job is admitted when every model
// allows it, and commits in all of them or in none. The example prints each
// decision (a denial names every model's rule), then each model's state as
// introspection JSON.
#include <iostream>
#include <string>

#include <quota/kai_claims_json.hpp>
#include <quota/engine.hpp>
#include <quota/fmt.hpp>
#include <quota/yunikorn_limits_json.hpp>
#include <quota/volcano_json.hpp>

int main() {
  try {
    quota::resource_registry reg;
    const auto gpu = quota::resources::nvidia_gpu;

    // Volcano: two queues sharing a 16-GPU cluster, research capped at 8 GPUs
    const auto queues = quota::parse_volcano_queues(quota::json::parse(R"({"items": [
      {"metadata": {"name": "research"}, "spec": {"weight": 1, "capability": {"nvidia.com/gpu": 8}}},
      {"metadata": {"name": "serving"}, "spec": {"weight": 1}}]})"),
                                                    reg);
    quota::resource_vector total;
    total.set(gpu, 16);
    quota::volcano_policy volcano(quota::volcano_model({gpu}, total, queues));  // owns its tree

    // YuniKorn: in queue root.research, every user may hold 4 GPUs
    quota::yunikorn_limits_policy yunikorn(reg);  // owns its yunikorn_limits_model
    yunikorn.manager().reload(quota::load_yunikorn_limits_config(quota::json::parse(R"({"partitions": [{"name": "default",
      "queues": [{"name": "root", "queues": [
        {"name": "research", "limits": [{"limit": "per user", "users": ["*"], "maxresources": {"nvidia.com/gpu": 4}}]},
        {"name": "serving"}]}]}]})"),
                                                        reg));

    // KAI: a shared ResourceClaim owned by queue research (its queue label)
    quota::kai_claims_policy kai;  // owns its kai_claims_model
    quota::claim_spec claim;
    claim.ns = "ml";
    claim.name = "shared-gpus";
    claim.queue_label = "research";
    claim.requests.push_back(quota::claim_device{"gpu.nvidia.com", 2, false, false, {}, false});
    kai.model().add_claim(claim);

    // The engine keeps its own copy of each model (any_policy holds a value);
    // read them back with model(i).target<T>().
    quota::engine e;
    e.add(quota::any_policy(std::move(volcano)));
    e.add(quota::any_policy(std::move(yunikorn)));
    e.add(quota::any_policy(std::move(kai)));

    // One queue name for every model: Volcano's queue, YuniKorn's leaf
    // (yunikorn_limits_policy qualifies "research" as "root.research"), KAI's queue label.
    auto job = [&](const std::string& id, const std::string& queue, const std::string& user, int gpus,
                   bool preemptible) {
      quota::job j;
      j.id = id;
      j.ns = "ml";
      j.queue = queue;
      j.user = user;
      j.request.set(gpu, gpus);
      j.claims = {"shared-gpus"};
      j.preemptible = preemptible;
      return j;
    };
    const quota::job jobs[] = {job("train-1", "research", "sue", 4, true), job("train-2", "research", "sue", 2, true),
                               job("serve-1", "serving", "svc", 2, false), job("train-3", "research", "bob", 2, true),
                               job("train-4", "research", "bob", 2, true)};
    // Volcano's deserved follows pending demand: the host reports each job as it arrives
    for (const auto& j : jobs) e.pending_added(j);
    int denials = 0;
    for (const auto& j : jobs) {
      const quota::decision d = e.admit(j);
      fmt::print("{} ({} GPUs, queue {}, user {}): {}\n", j.id, j.request.get(gpu), j.queue, j.user,
                 d.allowed() ? std::string("admitted") : fmt::format("{}", d));
      denials += d.denied() ? 1 : 0;
    }

    // Introspection: each model's state as JSON, read from the engine's copies
    quota::json state;
    if (const auto* y = e.model(1).target<quota::yunikorn_limits_policy>()) to_json(state["yunikorn_limits"], *y);
    if (const auto* k = e.model(2).target<quota::kai_claims_policy>()) to_json(state["kai_claims"], *k);
    if (const auto* v = e.model(0).target<quota::volcano_policy>()) {
      auto& q = state["volcano"];
      for (std::size_t i = 0; i < v->tree().size(); ++i)
        q[v->tree().spec(i).name] = {{"allocated_gpus", v->tree().allocated(i, 0)},
                                     {"realCapability_gpus", v->tree().real_capability(i, 0)}};
    }
    std::cout << state.dump(2) << "\n";
    return denials > 0 ? 0 : 1;  // the example shows a denial
  } catch (const quota::error& err) {
    std::cerr << err.what() << "\n";
    return 1;
  }
}
