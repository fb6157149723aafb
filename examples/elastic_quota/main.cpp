// SPDX-License-Identifier: Apache-2.0
// quota-example-elastic_quota: the t1/t2 fair-share example of nos' Key
// concepts (docs/elastic-quota.md#references) with nos ElasticQuota /
// CompositeElasticQuota objects and pods read from `kubectl get -o json`
// output. Prints the capacity label actions, the admission decision of each
// pending pod, the victims nos would preempt, and the state after the
// preemption.
//
//   quota-example-elastic_quota [quotas.json] [pods.json]
#include <quota/elastic_quota.hpp>
#include <quota/elastic_quota_json.hpp>

#include <iostream>
#include <string>
#include <vector>

#ifndef QUOTA_EXAMPLE_DIR
#define QUOTA_EXAMPLE_DIR "examples/elastic_quota"
#endif

namespace {
void print_changes(const std::vector<quota::elastic_label_change>& ch) {
  for (const auto& c : ch) {
    std::cout << "  label " << c.pod << " " << quota::elastic_capacity_label << ": "
              << (c.from == quota::elastic_capacity::none ? "(none)" : quota::to_string(c.from)) << " -> "
              << quota::to_string(c.to) << "\n";
  }
}
}  // namespace

int main(int argc, char** argv) {
  using namespace quota;
  const std::string dir = QUOTA_EXAMPLE_DIR;
  const std::string quota_file = argc > 1 ? argv[1] : dir + "/quotas.json";
  const std::string pod_file = argc > 2 ? argv[2] : dir + "/pods.json";
  try {
    resource_registry reg;
    elastic_quota_model set(load_elastic_quotas(load_json_file(quota_file), reg), {}, &reg);
    const auto pods = load_elastic_pods(load_json_file(pod_file), reg);
    std::vector<elastic_label_change> ch;
    std::cout << "running pods:\n";
    for (const auto& p : pods)
      if (p.running()) set.add_pod(p.pod, &ch);
    print_changes(ch);
    for (std::uint32_t q = 0; q < set.size(); ++q)
      std::cout << "quota " << set.spec(q).name << ": used " << set.used(q).get(resources::gpu_memory) << " GB / min "
                << set.spec(q).min.get(resources::gpu_memory) << " GB, guaranteed over-quota "
                << set.guaranteed_over_quota(q, resources::gpu_memory) << " GB\n";
    for (const auto& p : pods) {
      if (p.running()) continue;
      const decision d = set.check(p.pod.ns, p.pod.request);
      std::cout << "pending " << p.pod.name << " (" << p.pod.request.get(resources::gpu_memory)
                << " GB): " << to_string(d) << "\n";
      if (d.allowed()) continue;
      std::vector<victim> v;
      set.victims(p.pod, v);
      if (v.empty()) {
        std::cout << "  no preemption possible\n";
        continue;
      }
      ch.clear();
      for (const auto& x : v) {
        std::cout << "  preempt " << x.job_id << " of " << x.entity << " (" << x.model << "." << x.rule << ")\n";
        set.remove_pod(x.job_id, &ch);
      }
      std::cout << "  after preemption: " << to_string(set.check(p.pod.ns, p.pod.request)) << "\n";
      set.add_pod(p.pod, &ch);
      print_changes(ch);
    }
    return 0;
  } catch (const error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
