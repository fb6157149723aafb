// SPDX-License-Identifier: Apache-2.0
// quota/detail/volcano_elastic.hpp — a Volcano job's PodGroup minResources and
// the per-queue elastic resources (what running jobs hold beyond their
// minResources) that volcano_model and volcano_capacity_model read through set_elastic
// (docs/volcano.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <quota/detail/checked.hpp>
#include <quota/policy.hpp>
#include <quota/resource_vector.hpp>

namespace quota::detail {

/// A job's PodGroup minResources: min_pods of its pods (request = pods x per
/// pod), rounded up per resource.
[[nodiscard]] inline resource_vector volcano_min_resources(const job& j) {
  if (j.pods <= 0 || j.min_pods >= j.pods) return j.request;
  resource_vector out;
  for (const auto& e : j.request) {
    const auto v = static_cast<int128>(e.value) * j.min_pods;
    out.set(e.id, static_cast<amount>((v + j.pods - 1) / j.pods));
  }
  return out;
}

/// A queue's elastic resources: per running job, what it holds beyond its
/// minResources (Volcano's GetElasticResources), summed per queue.
class volcano_elastic_book {
 public:
  /// Adds j's elastic part to its queue; returns the queue's new sum.
  const resource_vector& add(const job& j) {
    auto e = j.request;
    e.sub_in_place(volcano_min_resources(j));
    auto& sum = sums_[j.queue];
    sum.add_in_place(e);
    jobs_[j.id] = {j.queue, std::move(e)};
    return sum;
  }
  /// Takes a job's part out; returns its queue, or nullptr if it had none.
  const std::string* remove(std::string_view id) {
    const auto it = jobs_.find(id);
    if (it == jobs_.end()) return nullptr;
    sums_[it->second.first].sub_in_place(it->second.second);
    last_ = it->second.first;
    jobs_.erase(it);
    return &last_;
  }
  [[nodiscard]] const resource_vector& sum(const std::string& queue) { return sums_[queue]; }

 private:
  std::map<std::string, std::pair<std::string, resource_vector>, std::less<>> jobs_;
  std::map<std::string, resource_vector, std::less<>> sums_;
  std::string last_;
};

}  // namespace quota::detail
