// SPDX-License-Identifier: Apache-2.0
// quota/detail/volcano_elastic.hpp — a Volcano job's PodGroup minResources and
// the per-queue elastic resources (what running jobs hold beyond their
// minResources) that volcano_model and volcano_capacity_model read through set_elastic
// (docs/volcano.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota::detail {

/// Whether a job's minResources is its whole request (min_pods covers its
/// pods): it holds nothing elastic.
[[nodiscard]] inline bool volcano_whole_gang(const job& j) noexcept {
  return j.pods <= 0 || j.min_pods >= j.pods;
}

/// A job's PodGroup minResources: min_pods of its pods (request = pods x per
/// pod), rounded up per resource; the whole request for a whole gang.
[[nodiscard]] inline resource_vector volcano_min_resources(const job& j) {
  if (volcano_whole_gang(j)) return j.request;
  resource_vector out;
  for (const auto& e : j.request) {
    const auto v = static_cast<int128>(e.value) * j.min_pods;
    out.set(e.id, static_cast<amount>((v + j.pods - 1) / j.pods));
  }
  return out;
}

/// A queue's elastic resources: per running job, what it holds beyond its
/// minResources (Volcano's GetElasticResources), summed per queue. Keeps the
/// records of released jobs for the next ones (allocation-free once warm).
class volcano_elastic_book {
 public:
  /// Adds j's elastic part to its queue; returns the queue's new sum.
  const resource_vector& add(const job& j) {
    auto e = j.request;
    e.sub_in_place(volcano_min_resources(j));
    return record_part(j, std::move(e));
  }
  /// After j's commit: adds its elastic part and passes its queue's new sum
  /// to model.set_elastic(queue, sum). A job with no elastic part changes no
  /// sum: it is not recorded and the model is not called.
  template <class Model>
  void committed(const job& j, Model& model) {
    if (volcano_whole_gang(j)) return;
    auto e = j.request;
    e.sub_in_place(volcano_min_resources(j));
    if (e.is_zero()) return;
    model.set_elastic(j.queue, record_part(j, std::move(e)));
  }
  /// After a release: takes the job's part out and passes its queue's new
  /// sum to model.set_elastic(queue, sum), when the job had a part.
  template <class Model>
  void released(std::string_view id, Model& model) {
    if (const auto* q = remove(id)) model.set_elastic(*q, sum(*q));
  }
  /// Takes a job's part out; returns its queue, or nullptr if it had none.
  const std::string* remove(std::string_view id) {
    if (jobs_.empty()) return nullptr;  // no job holds anything elastic: nothing to look up
    const auto it = jobs_.find(id);
    if (it == jobs_.end()) return nullptr;
    sums_[it->second.first].sub_in_place(it->second.second);
    last_ = it->second.first;
    pool_.erase(jobs_, it);
    return &last_;
  }
  [[nodiscard]] const resource_vector& sum(const std::string& queue) { return sums_[queue]; }

 private:
  using record = std::pair<std::string, resource_vector>;  // queue, elastic part
  using job_map = std::unordered_map<std::string, record, string_hash, std::equal_to<>>;
  // Records j's elastic part e; returns its queue's new sum.
  const resource_vector& record_part(const job& j, resource_vector e) {
    auto& sum = sums_[j.queue];
    sum.add_in_place(e);
    auto& rec = pool_.emplace(jobs_, j.id, record{}).first->second;
    rec.first = j.queue;  // into the reused record: its queue string keeps its capacity
    rec.second = std::move(e);
    return sum;
  }

  job_map jobs_;
  node_pool<job_map> pool_;
  std::map<std::string, resource_vector, std::less<>> sums_;
  std::string last_;
};

}  // namespace quota::detail
