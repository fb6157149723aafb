// SPDX-License-Identifier: Apache-2.0
// Small builders shared by the Kueue model's tests (kueue_cohorts_test,
// kueue_test): CPU amounts, one-resource ClusterQueues, workloads.
#pragma once

#include <quota/kueue_cohorts.hpp>

#include "quota_catch.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

// Kueue amounts are 128-bit: Catch shows them in decimal
template <>
struct Catch::StringMaker<quota::kueue_amount> {
  static std::string convert(quota::kueue_amount v) { return quota::detail::int128_to_string(v); }
};

namespace quota::test {

constexpr amount cpu(std::int64_t cores) {
  return cores * 1000;
}
constexpr amount gib(std::int64_t n) {
  return n * 1024 * 1024 * 1024;
}

/// A ClusterQueue with one resource group covering cpu, one flavor per entry.
inline kueue_cluster_queue_spec cq_cpu(std::string name, std::string cohort,
                                 std::vector<std::pair<std::string, kueue_resource_quota_spec>> flavors) {
  kueue_cluster_queue_spec c;
  c.name = std::move(name);
  c.cohort = std::move(cohort);
  kueue_resource_group_spec g;
  g.covered_resources = {resources::cpu};
  for (auto& [f, q] : flavors) g.flavors.push_back({f, {q}});
  c.resource_groups.push_back(std::move(g));
  return c;
}
/// The same with the single flavor "f".
inline kueue_cluster_queue_spec cq_cpu(std::string name, std::string cohort, kueue_resource_quota_spec q) {
  return cq_cpu(std::move(name), std::move(cohort), {{"f", q}});
}

/// A workload of `count` pods of `cpu_per_pod` each in LocalQueue `queue`.
inline kueue_workload wl(std::string name, std::string queue, amount cpu_per_pod, std::int32_t count = 1,
                   std::int32_t prio = 0, std::int64_t created = 0) {
  kueue_workload w;
  w.name = std::move(name);
  w.queue = std::move(queue);
  w.priority = prio;
  w.created = created;
  kueue_pod_set p;
  p.count = count;
  p.per_pod.set(resources::cpu, cpu_per_pod);
  w.pod_sets.push_back(std::move(p));
  return w;
}

}  // namespace quota::test
