// SPDX-License-Identifier: Apache-2.0
// quota/detail/volcano_common.hpp — what the Volcano queue models share: their
// reasons, dense requests, and the running tasks by id and in allocation
// order (an allocation followed by a release allocates nothing once warm,
// docs/performance.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/decision.hpp>
#include <quota/detail/allocation_order.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/reserve.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota::detail {

/// A reason of a Volcano queue model about `queue` and resource r
/// (no_resource: a rule about the queue alone).
[[nodiscard]] inline reason volcano_reason(std::string_view model, std::string_view rule, const std::string& queue,
                                           const resource_registry* reg, resource_id r, std::int64_t requested,
                                           std::int64_t used, std::int64_t limit) {
  return reason{model,     rule, queue, r, r == no_resource ? std::string_view{} : resource_label_view(reg, r),
                requested, used, limit, {}};
}

/// One amount per tracked dimension, inline up to 8 dimensions.
using dense_request = boost::container::small_vector<std::int64_t, 8>;

/// dense_amounts(dims, v, owner) without a heap allocation for up to 8
/// dimensions: the same amounts, and the same errors (dense_amounts raises them).
[[nodiscard]] inline dense_request dense_request_of(std::span<const resource_id> dims, const resource_vector& v,
                                                    std::string_view owner) {
  dense_request out(dims.size(), 0);
  for (const auto& e : v) {
    bool found = false;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (dims[d] == e.id) {
        out[d] = e.value;
        found = true;
      }
    if (e.value < 0 || (!found && e.value != 0)) {
      (void)dense_amounts(dims, v, owner);  // throws the error naming the item
      break;
    }
  }
  return out;
}

/// The running tasks of a Volcano queue model: an entry per task in
/// allocation order (a released task leaves a hole, an empty id, until
/// count_released drops the holes) and the position of each by id. The
/// index keeps the nodes of released tasks (node_pool) and a new task takes
/// the hole a release left at the end of the order, so admitting and
/// releasing the same task again allocates nothing.
///
/// Each queue also keeps its preemptible tasks in preempt order (lowest job
/// priority first, then the newest), updated at each add and erase, so the
/// preempt action reads only the tasks it returns.
template <class Meta>
class volcano_task_book {
 public:
  struct entry {
    std::string id;  // "" = released (a hole)
    std::size_t queue = 0;
    dense_request req;
    Meta meta{};
    std::uint64_t stamp = 0;  // allocation count at the add: orders entries like their positions
  };
  struct position {
    std::size_t seq;
  };
  using index_map = std::unordered_map<std::string, position, string_hash, std::equal_to<>>;
  using iterator = typename index_map::iterator;

  [[nodiscard]] bool contains(std::string_view id) const { return index_.find(id) != index_.end(); }
  /// The task's entry, or nullptr.
  [[nodiscard]] const entry* find(std::string_view id) const {
    const auto it = index_.find(id);
    return it == index_.end() ? nullptr : &order_[it->second.seq];
  }
  /// The task's place for at() and erase(); end() when it does not run.
  [[nodiscard]] iterator locate(std::string_view id) { return index_.find(id); }
  [[nodiscard]] iterator end() noexcept { return index_.end(); }
  [[nodiscard]] const entry& at(iterator it) const { return order_[it->second.seq]; }
  /// Every entry in allocation order, holes (empty id) included.
  [[nodiscard]] const std::vector<entry>& order() const noexcept { return order_; }

  /// Adds a task that does not run yet (the caller checked). Strong
  /// guarantee: when an allocation fails nothing changes.
  void add(std::string_view id, std::size_t queue, const dense_request& req, Meta meta) {
    if (meta.preemptible) {  // room first: the insertion below cannot throw
      if (preempt_.size() <= queue) preempt_.resize(queue + 1);
      reserve_more(preempt_[queue], 1);
    }
    const bool reuse = !order_.empty() && order_.back().id.empty();  // the order stays the allocation order
    if (!reuse) order_.emplace_back();
    entry& e = order_.back();
    try {
      e.id.assign(id);
      e.req.assign(req.begin(), req.end());
      pool_.emplace(index_, e.id, position{order_.size() - 1});
    } catch (...) {
      if (reuse)
        e.id.clear();
      else
        order_.pop_back();
      throw;
    }
    e.queue = queue;
    e.meta = meta;
    e.stamp = ++stamps_;
    if (reuse) --holes_;
    if (meta.preemptible) {
      auto& list = preempt_[queue];
      const preempt_key k{meta.priority, e.stamp, order_.size() - 1};
      list.insert(std::lower_bound(list.begin(), list.end(), k, preempts_first), k);
    }
  }
  /// Removes the task at `it` (from locate()); its entry becomes a hole.
  void erase(iterator it) {
    auto& e = order_[it->second.seq];
    if (e.meta.preemptible) {
      auto& list = preempt_[e.queue];
      list.erase(std::lower_bound(list.begin(), list.end(), preempt_key{e.meta.priority, e.stamp, 0}, preempts_first));
    }
    e.id.clear();
    pool_.erase(index_, it);
    const std::size_t before = order_.size();
    count_released(order_, holes_, index_, [](const entry& t) -> const std::string& { return t.id; });
    if (order_.size() != before) renumber_preempt();
  }

  /// Volcano's preempt action between the jobs of one queue: each running,
  /// preemptible task of queue q whose job priority is below `priority`,
  /// lowest priority first, then the newest.
  template <class F>
  void lower_priority(std::size_t q, std::int32_t priority, F&& each) const {
    if (q >= preempt_.size()) return;
    for (const auto& k : preempt_[q]) {
      if (k.priority >= priority) break;
      each(order_[k.seq]);
    }
  }
  /// Running task ids in allocation order.
  [[nodiscard]] std::vector<std::string> running() const {
    std::vector<std::string> r;
    for (const auto& e : order_)
      if (!e.id.empty()) r.push_back(e.id);
    return r;
  }

 private:
  // A preemptible task in its queue's preempt list; seq is its position in order_.
  struct preempt_key {
    std::int32_t priority;
    std::uint64_t stamp;
    std::size_t seq;
  };
  static bool preempts_first(const preempt_key& a, const preempt_key& b) noexcept {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.stamp > b.stamp;  // the newest first
  }
  // count_released moved the entries: each key takes its entry's new position
  // (the lists' order does not change, it follows priority and stamp).
  void renumber_preempt() noexcept {
    for (std::size_t i = 0; i < order_.size(); ++i) {
      const auto& e = order_[i];
      if (!e.meta.preemptible) continue;
      auto& list = preempt_[e.queue];
      std::lower_bound(list.begin(), list.end(), preempt_key{e.meta.priority, e.stamp, 0}, preempts_first)->seq = i;
    }
  }

  std::vector<entry> order_;
  index_map index_;
  node_pool<index_map> pool_;
  std::size_t holes_ = 0;
  std::uint64_t stamps_ = 0;
  std::vector<std::vector<preempt_key>> preempt_;  // by queue, in preempt order
};

}  // namespace quota::detail
