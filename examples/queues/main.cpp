// Loads Volcano Queue objects (kubectl get queues -o json) and prints each
// queue's realCapability and deserved for a 30-GPU cluster, then a few
// admission decisions. Usage: quota-example-queues [queues.json]
#include <iostream>
#include <string>

#include <quota/queue_tree_json.hpp>

int main(int argc, char** argv) {
  try {
    const std::string file = argc > 1 ? argv[1] : std::string(QUOTA_EXAMPLE_DIR) + "/queues.json";
    quota::resource_registry reg;
    auto specs = quota::parse_volcano_queues(quota::load_json_file(file), reg);
    const auto gpu = quota::resources::nvidia_gpu;
    quota::resource_vector total;
    total.set(gpu, 30);
    quota::queue_tree tree({gpu}, total, specs);
    for (std::size_t q = 0; q < tree.size(); ++q) {
      quota::resource_vector demand;
      demand.set(gpu, 20);
      tree.set_pending(tree.spec(q).name, demand);
    }
    tree.compute_deserved();
    for (std::size_t q = 0; q < tree.size(); ++q)
      std::cout << tree.spec(q).name << ": realCapability " << tree.real_capability(q, 0) << ", deserved "
                << tree.deserved_floor(q, 0) << "\n";
    quota::queue_policy pol(tree);
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
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
