// SPDX-License-Identifier: Apache-2.0
// quota-example-kai_fair_share: loads KAI Queue objects (kubectl get
// queues.scheduling.run.ai -o json) and a small cluster description
// (capacity, per-leaf-queue demand, jobs), prints the fair share of every
// queue, then the admission decision for each job (committing the allowed ones).
//
//   quota-example-kai_fair_share [queues.json] [cluster.json]
#include <quota/kai_fair_share.hpp>
#include <quota/kai_fair_share_json.hpp>

#include <iostream>
#include <string>

#ifndef QUOTA_EXAMPLE_DIR
#define QUOTA_EXAMPLE_DIR "examples/kai_fair_share"
#endif

int main(int argc, char** argv) {
  using namespace quota;
  const std::string dir = QUOTA_EXAMPLE_DIR;
  const std::string queues_file = argc > 1 ? argv[1] : dir + "/queues.json";
  const std::string cluster_file = argc > 2 ? argv[2] : dir + "/cluster.json";
  try {
    resource_registry reg;
    reg.intern("run.ai/gpu-milli", 3);  // KAI gpu fractions, exact in milli-GPUs
    kai_fair_share_json_options opts;
    opts.gpu_resource = "run.ai/gpu-milli";
    kai_fair_share_model tree(load_kai_fair_share_queues(load_json_file(queues_file), reg, opts));
    for (const auto& w : tree.warnings()) std::cout << "warning: " << w.path << ": " << w.message << "\n";
    const json cluster = load_json_file(cluster_file);
    tree.set_capacity(parse_resource_list(cluster.at("capacity"), reg, "capacity", nullptr));
    for (const auto& [q, r] : cluster.at("requests").items())
      tree.set_request(tree.at(q), parse_resource_list(r, reg, "requests." + q, nullptr));
    tree.compute();
    std::cout << "fair share:\n" << kai_fair_share_to_json(tree, reg).dump(2) << "\n";
    kai_fair_share_policy policy(std::move(tree));
    for (const auto& j : cluster.at("jobs")) {
      job jb;
      jb.id = j.at("id").get<std::string>();
      jb.queue = j.at("queue").get<std::string>();
      jb.request = parse_resource_list(j.at("request"), reg, "jobs." + jb.id, nullptr);
      jb.preemptible = j.value("preemptible", true);
      const decision d = policy.check(jb);
      json out;
      to_json(out, d);
      std::cout << jb.id << ": " << out.dump() << "\n";
      if (d.allowed()) policy.commit(jb);
    }
  } catch (const quota::error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
