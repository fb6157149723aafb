// SPDX-License-Identifier: Apache-2.0
// Loads Volcano Queue objects (kubectl get queues -o json) and prints each
// queue's realCapability and deserved for a 30-GPU cluster, then a few
// admission decisions and PodGroup enqueue decisions (podgroups.json) with
// the proportion plugin, then decisions with the capacity plugin in
// hierarchical mode.
// Usage: quota-example-volcano [queues.json [volcano_capacity.json]]
#include <iostream>
#include <string>

#include <quota/volcano_capacity_json.hpp>
#include <quota/volcano_json.hpp>

namespace {
// Capacity plugin, hierarchical: root -> eng -> eng-a, eng-b; root -> ops.
void capacity_demo(const std::string& file) {
  quota::resource_registry reg;
  const auto gpu = quota::resources::nvidia_gpu;
  const quota::resource_vector total{{gpu, 30}, {quota::resources::cpu, 64'000}};
  auto queues =
      quota::load_volcano_capacity(quota::load_json_file(file), reg, total, {quota::volcano_capacity_mode::hierarchical});
  const auto g = queues.dim_index(gpu);
  std::cout << "\ncapacity plugin (hierarchical):\n";
  for (std::size_t q = 0; q < queues.size(); ++q) {
    std::cout << "  " << queues.name(q);
    if (queues.parent(q) != quota::volcano_capacity_model::npos)
      std::cout << " (parent " << queues.name(queues.parent(q)) << ")";
    std::cout << ": deserved " << queues.deserved(q, g) << ", realCapability ";
    if (queues.real_capability(q, g) == quota::detail::cap_unlimited)
      std::cout << "unlimited";
    else
      std::cout << queues.real_capability(q, g);
    std::cout << "\n";
  }
  quota::volcano_capacity_policy pol(std::move(queues));  // the adapter owns its queues
  const quota::volcano_capacity_model& held = pol.model();
  for (const char* leaf : {"eng-a", "eng-a", "eng-b", "eng"}) {
    quota::job j;
    j.id = std::string(leaf) + "-" + std::to_string(held.allocated(held.index(leaf), g));
    j.queue = leaf;
    j.request.set(gpu, 10);
    const auto d = pol.check(j);
    std::cout << "  " << j.id << " asks 10 GPUs: " << (d.allowed() ? "admitted" : "denied");
    for (const auto& r : d.reasons())
      std::cout << " (" << r.model << "." << r.rule << " [" << r.entity << "] used " << r.used << " limit " << r.limit
                << ")";
    std::cout << "\n";
    if (d.allowed()) pol.commit(j);
  }
}
}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string file = argc > 1 ? argv[1] : std::string(QUOTA_EXAMPLE_DIR) + "/queues.json";
    quota::resource_registry reg;
    auto specs = quota::parse_volcano_queues(quota::load_json_file(file), reg);
    const auto gpu = quota::resources::nvidia_gpu;
    quota::resource_vector total;
    total.set(gpu, 30);
    quota::volcano_model tree({gpu}, total, specs);
    for (std::size_t q = 0; q < tree.size(); ++q) {
      quota::resource_vector demand;
      demand.set(gpu, 20);
      tree.set_pending(tree.spec(q).name, demand);
    }
    tree.compute_deserved();
    for (std::size_t q = 0; q < tree.size(); ++q)
      std::cout << tree.spec(q).name << ": realCapability " << tree.real_capability(q, 0) << ", deserved "
                << tree.deserved_floor(q, 0) << "\n";
    quota::volcano_policy pol(tree);  // the adapter owns a copy of the tree
    for (int i = 1; i <= 7; ++i) {
      quota::job j;
      j.id = "queue1-job-" + std::to_string(i);
      j.queue = "queue1";
      j.request.set(gpu, 1);
      const auto d = pol.check(j);
      std::cout << j.id << ": " << (d.allowed() ? "admitted" : "denied");
      if (!d.allowed() && !d.reasons().empty())
        std::cout << " (" << d.reasons().front().model << "." << d.reasons().front().rule << ")";
      std::cout << "\n";
      if (d.allowed()) pol.commit(j);
    }
    // PodGroups (kubectl get podgroups -o json): may each be enqueued now?
    // minResources + allocated + inqueue <= realCapability (no minResources: yes)
    const std::string pg_file = std::string(QUOTA_EXAMPLE_DIR) + "/podgroups.json";
    for (const auto& pg : quota::parse_volcano_podgroups(quota::load_json_file(pg_file), reg)) {
      const auto& held = pol.tree();  // the adapter's tree, with the jobs admitted above
      const auto d = held.job_enqueueable(held.index(pg.queue), pg.min_resources);
      std::cout << "podgroup " << pg.ns << "/" << pg.name << " -> " << pg.queue << ": "
                << (d.allowed() ? "enqueueable" : "not enqueueable");
      for (const auto& r : d.reasons())
        std::cout << " (" << r.model << "." << r.rule << ": needs " << r.requested << " on top of " << r.used
                  << ", realCapability " << r.limit << ")";
      std::cout << "\n";
    }
    capacity_demo(argc > 2 ? argv[2] : std::string(QUOTA_EXAMPLE_DIR) + "/volcano_capacity.json");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
