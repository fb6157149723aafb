// SPDX-License-Identifier: Apache-2.0
// quota-example-kueue: loads ResourceFlavors, a Cohort, ClusterQueues,
// LocalQueues and Workloads (kubectl get -o json shape), admits the workloads
// in Kueue's queue order (with partial admission), and prints each flavor
// assignment, the dominant resource shares, and the preemption targets of
// the workloads that do not fit.
//
//   ./build/examples/quota-example-kueue [objects.json]
#include <iostream>
#include <string>

#include <quota/kueue_json.hpp>
#include <quota/kueue.hpp>

int main(int argc, char** argv) {
  using namespace quota;
    try {
    const std::string file = argc > 1 ? argv[1] : std::string(QUOTA_EXAMPLE_DIR) + "/objects.json";
    resource_registry reg;
    auto objs = load_kueue_objects(load_json_file(file), reg);
    kueue_model m(objs.config, reg);
    // queue order: priority first, then creation time
    std::stable_sort(objs.workloads.begin(), objs.workloads.end(), [](const kueue_workload& a, const kueue_workload& b) {
      return a.priority != b.priority ? a.priority > b.priority : a.created < b.created;
    });
    kueue_admission_attempt at;
    for (const auto& w : objs.workloads) {
      // Kueue's attempt: full counts (fit, or preemption with targets), then
      // partial admission down to minCount (fit, or preemption with targets)
      const auto d = m.attempt(w, at);
      json out{{"workload", w.name},
               {"assignment", assignment_to_json(at.assignment, m.forest(), reg)},
               {"counts", at.counts},
               {"decision", d}};
      if (d.allowed()) {
        m.admit(w, at.assignment);
      } else {
        json t = json::array();
        for (const auto& p : at.targets)
          t.push_back({{"workload", p.name},
                       {"clusterQueue", m.forest().at(p.cluster_queue).name},
                       {"rule", p.rule},
                       {"reason", p.reason}});
        out["preemptionTargets"] = t;
      }
      std::cout << out.dump(2) << "\n";
    }
    json shares = json::object();
    for (kueue_node_index n = 0; n < m.forest().node_count(); ++n)
      shares[m.forest().at(n).name] = m.forest().dominant_resource_share(n);
    std::cout << "dominant resource shares: " << shares.dump() << "\n";
    return 0;
  } catch (const quota::error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
