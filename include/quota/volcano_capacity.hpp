// SPDX-License-Identifier: Apache-2.0
// quota/volcano_capacity.hpp — Volcano's capacity plugin: queues with deserved,
// capability and guarantee, flat or hierarchical.
// Docs: docs/volcano.md
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/job_queue_order.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/detail/volcano_common.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// One Volcano Queue for the capacity plugin, as given by the host.
struct volcano_capacity_queue_spec {
  std::string name;
  /// Listed dimensions only. Absent = not set. cpu/memory listed as 0 count
  /// as not set (Volcano); any other listed 0 is a real zero.
  resource_vector deserved;
  resource_vector capability;
  resource_vector guarantee;
  /// Parent queue name; "" or "root" = the root. Ignored in flat mode.
  std::string parent;
  std::int32_t priority = 0;
  /// metadata.creationTimestamp, ms: the last tie-break of queue order.
  std::int64_t created_ms = 0;
  bool reclaimable = true;
  /// Open queues accept jobs; closed / closing ones reject them.
  bool open = true;
};

/// What reclaim and preempt read of a running task besides its queue and
/// request (Volcano's job priority and volcano.sh/preemptable).
struct volcano_capacity_task_meta {
  std::int32_t priority = 0;
  bool preemptible = true;
};

enum class volcano_capacity_mode : std::uint8_t { flat, hierarchical };

struct volcano_capacity_options {
  volcano_capacity_mode mode = volcano_capacity_mode::flat;
  /// Volcano's `ancestorReclaimLevel` (hierarchical mode): 0 = leaf-level
  /// deserved checks only; N adds the checks of the victim's ancestors up
  /// to N levels above the leaf where they differ from the reclaimer's.
  int ancestor_reclaim_level = 0;
  /// Hierarchical mode: Volcano leaves the root unlimited (jobs may be
  /// enqueued beyond the cluster). true bounds the root by the cluster total.
  bool root_bounded_by_total = false;
  /// Decide as Volcano's capacity plugin does where the default differs
  /// (docs/volcano.md, "Differences from upstream"): what the scheduler only
  /// logs (sum of guarantees above the total, deserved below guarantee,
  /// children above their parent) is accepted and listed in warnings(), and
  /// the policy adapter lets a job wait in a queue with children.
  bool upstream = false;
};

namespace detail {
inline constexpr std::int64_t cap_unlimited = std::numeric_limits<std::int64_t>::max();
[[nodiscard]] inline std::int64_t cap_add(std::int64_t a, std::int64_t b) {
  if (a == cap_unlimited || b == cap_unlimited) return cap_unlimited;
  return checked_add(a, b);
}
/// max(0, a - b), unlimited stays unlimited.
[[nodiscard]] inline std::int64_t cap_excess(std::int64_t a, std::int64_t b) noexcept {
  if (a == cap_unlimited) return cap_unlimited;
  return a > b ? a - b : 0;
}
/// Volcano leaves `pods` out of its dimension-wise comparisons (every task
/// asks for one pod; IsIgnoredScalarResource in pkg/scheduler/api).
[[nodiscard]] constexpr bool capacity_ignored(resource_id r) noexcept {
  return r == resources::pods;
}
}  // namespace detail

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view volcano_capacity_model_name = "volcano_capacity";

class volcano_capacity_model {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  /// `dims`: tracked resources; `total`: the cluster total (nodes' allocatable).
  /// Throws validation_error listing every problem, each naming the queue.
  volcano_capacity_model(std::vector<resource_id> dims, const resource_vector& total,
                         std::vector<volcano_capacity_queue_spec> queues, volcano_capacity_options opts = {})
      : dims_(std::move(dims)), opts_(opts) {
    dim_count_ = dims_.size();
    diagnostics diag;
    for (std::size_t a = 0; a < dim_count_; ++a)
      for (std::size_t b = a + 1; b < dim_count_; ++b)
        if (dims_[a] == dims_[b]) diag.add("dims/" + detail::resource_label(reg_, dims_[a]), "resource tracked twice");
    for (auto r : dims_) {
      total_.push_back(total.get(r));
      if (total_.back() < 0) diag.add("total/" + detail::resource_label(reg_, r), "negative cluster total");
    }
    if (opts_.ancestor_reclaim_level < 0) diag.add("options/ancestorReclaimLevel", "negative level");
    build(std::move(queues), diag);
    if (!diag.empty()) throw validation_error(diag.items());
    warnings_ = build_warn_;
    warnings_.insert(warnings_.end(), total_warn_.begin(), total_warn_.end());
  }

  [[nodiscard]] const volcano_capacity_options& options() const noexcept { return opts_; }
  /// Upstream mode: what Volcano's scheduler only logs, each naming the item
  /// (sum of guarantees above the cluster total, deserved below guarantee,
  /// a child's capability above its parent's, children's deserved or
  /// guarantees above the parent's, a guarantee above an inherited
  /// capability). Empty in the default mode, which rejects them.
  [[nodiscard]] const std::vector<diagnostic>& warnings() const noexcept { return warnings_; }

  [[nodiscard]] volcano_capacity_mode mode() const noexcept { return opts_.mode; }
  [[nodiscard]] bool hierarchical() const noexcept { return opts_.mode == volcano_capacity_mode::hierarchical; }
  /// Number of queues (hierarchical mode counts the root, index 0).
  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] std::size_t index(std::string_view name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) throw unknown_entity_error(error_id::unknown_queue, "queue", name);
    return it->second;
  }
  [[nodiscard]] bool contains(std::string_view name) const { return by_name_.find(name) != by_name_.end(); }
  /// The index of a queue, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] const volcano_capacity_queue_spec& spec(std::size_t q) const { return specs_.at(q); }
  [[nodiscard]] const std::string& name(std::size_t q) const { return specs_.at(q).name; }
  [[nodiscard]] const std::vector<resource_id>& dims() const noexcept { return dims_; }
  [[nodiscard]] std::size_t dim_index(resource_id r) const {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (dims_[d] == r) return d;
    throw unknown_entity_error(error_id::unknown_resource, "resource", std::to_string(r));
  }
  /// Parent index, or npos for the root (hierarchical) / every queue (flat).
  [[nodiscard]] std::size_t parent(std::size_t q) const { return parent_.at(q); }
  [[nodiscard]] bool is_leaf(std::size_t q) const { return children_.at(q) == 0; }
  [[nodiscard]] std::size_t depth(std::size_t q) const { return depth_.at(q); }

  // ---- per-queue attributes, dense by tracked dimension index ----
  [[nodiscard]] std::int64_t capability(std::size_t q, std::size_t d) const { return cap_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t real_capability(std::size_t q, std::size_t d) const { return real_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t guarantee(std::size_t q, std::size_t d) const { return guar_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t deserved(std::size_t q, std::size_t d) const { return des_[q * dim_count_ + d]; }
  /// Is deserved "relevant" in d for reclaim: cpu/memory when > 0; other resources when listed.
  [[nodiscard]] bool deserved_listed(std::size_t q, std::size_t d) const { return des_set_[q * dim_count_ + d] != 0; }
  [[nodiscard]] std::int64_t allocated(std::size_t q, std::size_t d) const { return alloc_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t inqueue(std::size_t q, std::size_t d) const { return inq_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t elastic(std::size_t q, std::size_t d) const { return elastic_[q * dim_count_ + d]; }

  /// A new cluster total (nodes came or went): realCapability and deserved
  /// are recomputed in place, allocation-free. Throws validation_error (state
  /// unchanged) when the new total breaks a rule (flat: sum of guarantees).
  void set_total(const resource_vector& total) {
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto v = total.get(dims_[d]);
      if (v < 0) throw validation_error("total/" + detail::resource_label(reg_, dims_[d]), "negative cluster total");
    }
    for (const auto& e : total)
      if (e.value != 0 && find_dim(e.id) == dim_count_)
        throw unknown_entity_error(error_id::unknown_resource, "resource", std::to_string(e.id));
    std::int64_t stack_total[16];
    std::vector<std::int64_t> heap_total;
    std::int64_t* t = stack_total;
    if (dim_count_ > 16) {
      heap_total.resize(dim_count_);
      t = heap_total.data();
    }
    for (std::size_t d = 0; d < dim_count_; ++d) t[d] = total.get(dims_[d]);
    diagnostics diag;
    std::vector<diagnostic> warn;
    derive(t, s_cap_, s_real_, s_des_, s_set_, diag, warn);
    if (!diag.empty()) throw validation_error(diag.items());
    total_warn_.swap(warn);
    warnings_ = build_warn_;
    warnings_.insert(warnings_.end(), total_warn_.begin(), total_warn_.end());
    cap_.swap(s_cap_);
    real_.swap(s_real_);
    des_.swap(s_des_);
    des_set_.swap(s_set_);
    for (std::size_t d = 0; d < dim_count_; ++d) total_[d] = t[d];
  }
  [[nodiscard]] std::int64_t total(std::size_t d) const { return total_.at(d); }

  // ---- bookkeeping (incremental; counted in every ancestor) ----
  /// A task of `queue` is allocated. Errors: unknown queue or resource,
  /// negative amount, duplicate task id, non-leaf queue in hierarchical mode.
  /// `meta`: the task's job priority and whether it may be preempted (a
  /// non-preemptible task is never a reclaim or preempt candidate).
  void allocate(std::string_view task_id, std::string_view queue, const resource_vector& req,
                volcano_capacity_task_meta meta = {}) {
    const auto q = index(queue);
    require_leaf(q, "allocate");
    if (tasks_.contains(task_id))
      throw state_error(error_id::state_duplicate,
                        "queue " + std::string(queue) + ": task '" + std::string(task_id) + "' is already allocated");
    const auto dense = to_dense(req, queue);
    if (task_dims_.size() < specs_.size()) task_dims_.resize(specs_.size());
    add_chain(alloc_, q, dense, +1);  // checks every sum before it changes one
    bool counted = false;
    try {
      if (meta.preemptible) {
        count_task_dims(q, dense, +1);
        counted = true;
      }
      tasks_.add(task_id, q, dense, meta);  // strong on its own
    } catch (...) {
      if (counted) count_task_dims(q, dense, -1);  // lowering a count allocates nothing
      add_chain(alloc_, q, dense, -1);
      throw;
    }
  }
  void deallocate(std::string_view task_id) {
    const auto it = tasks_.locate(task_id);
    if (it == tasks_.end()) throw unknown_entity_error(error_id::unknown_job, "task", task_id);
    const auto& e = tasks_.at(it);
    add_chain(alloc_, e.queue, e.req, -1);
    if (e.meta.preemptible) count_task_dims(e.queue, e.req, -1);
    tasks_.erase(it);
  }
  [[nodiscard]] bool has_task(std::string_view id) const { return tasks_.contains(id); }
  [[nodiscard]] std::size_t task_queue(std::string_view id) const {
    const auto* t = tasks_.find(id);
    if (t == nullptr) throw unknown_entity_error(error_id::unknown_job, "task", id);
    return t->queue;
  }
  /// A job moved to Inqueue: its minResources count as inqueue (Volcano's JobEnqueued).
  void enqueue(std::string_view queue, const resource_vector& min_resources) {
    const auto q = index(queue);
    require_leaf(q, "enqueue");
    add_chain(inq_, q, to_dense(min_resources, queue), +1);
  }
  void dequeue(std::string_view queue, const resource_vector& min_resources) {
    const auto q = index(queue);
    require_leaf(q, "dequeue");
    auto dense = to_dense(min_resources, queue);
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (inq_[q * dim_count_ + d] < dense[d])
        throw state_error(error_id::state_negative_usage,
                          "queue " + std::string(queue) + ": inqueue would go negative");
    add_chain(inq_, q, dense, -1);
  }
  /// Sets a leaf's elastic resources (sum over its jobs of allocated - minAvailable).
  void set_elastic(std::string_view queue, const resource_vector& elastic) {
    const auto q = index(queue);
    require_leaf(q, "set_elastic");
    auto dense = to_dense(elastic, queue);
    detail::dense_request delta(dim_count_);
    for (std::size_t d = 0; d < dim_count_; ++d) delta[d] = detail::checked_sub(dense[d], elastic_[q * dim_count_ + d]);
    add_chain(elastic_, q, delta, +1);
  }

  // ---- predicates ----
  /// Volcano's AllocatableFn: the queue is open, a leaf (hierarchical), and
  /// allocated + task <= realCapability in every dimension the task asks for,
  /// at the queue and (hierarchical) at every ancestor up to the root.
  [[nodiscard]] decision allocatable(std::size_t q, const resource_vector& task) const {
    if (auto d = gate(q); d.denied()) return d;
    decision out;
    for (std::size_t n = q; n != npos; n = parent_[n]) over_real_capability(n, task, out);
    return out;
  }

  /// Overused (Volcano's capacity metric: share > 1): allocated exceeds
  /// deserved in some dimension where deserved > 0.
  [[nodiscard]] bool overused(std::size_t q) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto des = des_[q * dim_count_ + d];
      if (des > 0 && alloc_[q * dim_count_ + d] > des) return true;
    }
    return false;
  }

  /// Volcano's PreemptiveFn: the queue is open; allocated + request <=
  /// realCapability in every requested dimension; and allocated + request <=
  /// deserved in at least one requested dimension (at the queue, or, with
  /// ancestor_reclaim_level N, at one of its N nearest non-root ancestors).
  [[nodiscard]] decision preemptive(std::size_t q, const resource_vector& request) const {
    if (!specs_[q].open) return decision::deny(queue_reason("queue_not_open", q, no_resource, 0, 0, 0));
    decision out;
    over_real_capability(q, request, out);
    if (out.denied()) return out;
    if (under_deserved_somewhere(q, request)) return out;
    if (hierarchical())
      for (int level = 1; level <= opts_.ancestor_reclaim_level; ++level) {
        const auto a = ancestor_at(q, static_cast<std::size_t>(level));
        if (a == npos || a == root_) continue;
        if (under_deserved_somewhere(a, request)) return out;
      }
    for (const auto& e : request) {
      if (e.value <= 0 || detail::capacity_ignored(e.id)) continue;
      const std::size_t d = find_dim(e.id);
      out.add(queue_reason("preemptive_over_deserved", q, e.id, e.value,
                           d < dim_count_ ? alloc_[q * dim_count_ + d] : 0,
                           d < dim_count_ ? des_[q * dim_count_ + d] : 0));
    }
    return out;
  }

  /// Volcano's JobEnqueueableFn: open leaf; no minResources permits;
  /// minResources + allocated + inqueue - elastic <= realCapability in every
  /// dimension the job asks for, at the queue and every ancestor.
  [[nodiscard]] decision job_enqueueable(std::size_t q, const resource_vector& min_resources) const {
    if (auto d = gate(q); d.denied()) return d;
    if (min_resources.is_zero()) return decision::allow();
    decision out;
    for (std::size_t n = q; n != npos; n = parent_[n]) {
      for (const auto& e : min_resources) {
        if (e.value <= 0 || detail::capacity_ignored(e.id)) continue;
        const std::size_t d = find_dim(e.id);
        if (d == dim_count_) {
          out.add(queue_reason("over_real_capability", n, e.id, e.value, 0, 0));
          continue;
        }
        const auto i = n * dim_count_ + d;
        const auto lim = real_[i];
        if (lim == detail::cap_unlimited) continue;
        const auto used = detail::checked_sub(detail::checked_add(alloc_[i], inq_[i]), elastic_[i]);
        if (detail::checked_add(e.value, used) > lim)
          out.add(queue_reason("over_real_capability", n, e.id, e.value, used, lim));
      }
    }
    return out;
  }

  /// Share = max over dimensions with deserved > 0 of allocated / deserved,
  /// exact; a queue without deserved (best effort) has share 1.
  [[nodiscard]] fraction share(std::size_t q) const {
    fraction s(0);
    bool any = false;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto des = des_[q * dim_count_ + d];
      if (des <= 0) continue;
      any = true;
      const fraction v(alloc_[q * dim_count_ + d], des);
      if (v > s) s = v;
    }
    return any ? s : fraction(1);
  }
  /// Volcano's QueueOrderFn: higher priority first; (hierarchical) leaves
  /// before inner queues, two leaves compared by their ancestors just below
  /// the deepest common one; lower share first; on equal share a queue with
  /// deserved before a best-effort one. Returns < 0 when a goes first.
  [[nodiscard]] int compare_queues(std::size_t a, std::size_t b) const {
    if (specs_[a].priority != specs_[b].priority) return specs_[a].priority > specs_[b].priority ? -1 : 1;
    if (hierarchical()) {
      const bool la = is_leaf(a), lb = is_leaf(b);
      if (la != lb) return la ? -1 : 1;
      if (la && lb) {
        const auto pa = path(a), pb = path(b);
        const std::size_t level = common_level(pa, pb);
        const auto x = level + 1 < pa.size() - 1 ? pa[level + 1] : a;
        const auto y = level + 1 < pb.size() - 1 ? pb[level + 1] : b;
        return compare_share(x, y);
      }
    }
    return compare_share(a, b);
  }

  /// Volcano's ReclaimableFn. Walks `candidates` (running task ids, in the
  /// caller's victim order) with running copies of the queues' allocations.
  /// A task of another, reclaimable queue is a victim when it shares a
  /// requested dimension with the reclaimer, taking it keeps its queue at or
  /// above its guarantee, and its queue has no deserved in the task's
  /// dimensions or holds more than deserved in one of them (plus the
  /// ancestor checks of ancestor_reclaim_level).
  void reclaimable(std::string_view reclaimer_queue, const resource_vector& reclaimer_request,
                   const std::vector<std::string>& candidates, std::vector<victim>& out) const {
    const auto self = index(reclaimer_queue);
    auto rq = to_dense(reclaimer_request, reclaimer_queue);
    std::vector<const task_entry*> walk;
    walk.reserve(candidates.size());
    for (const auto& id : candidates) {
      const auto* t = tasks_.find(id);
      if (t == nullptr) throw unknown_entity_error(error_id::unknown_job, "task", id);
      walk.push_back(t);
    }
    reclaim_walk(self, rq, walk, out);
  }

  /// Volcano's preempt action between the jobs of one queue: the running,
  /// preemptible tasks of `queue` whose job priority is below `priority`,
  /// lowest priority first, then the newest.
  void preemptable_in_queue(std::string_view queue, std::int32_t priority, std::vector<victim>& out) const {
    const auto q = index(queue);
    tasks_.lower_priority(q, priority, [&](const task_entry& t) {
      out.push_back(victim{t.id, volcano_capacity_model_name, "preempt_lower_priority", specs_[q].name});
    });
  }

  /// reclaimable() over the running tasks in victim_order(), without the
  /// tasks of queues that cannot give any: a victim's queue is another,
  /// reclaimable queue holding, in a dimension its task uses, either no
  /// deserved or more than deserved (the walk only lowers what queues hold),
  /// so when no queue qualifies no task is read at all, and the walk stops
  /// once none still does.
  void reclaimable_running(std::string_view reclaimer_queue, const resource_vector& reclaimer_request,
                           std::vector<victim>& out) const {
    const auto self = index(reclaimer_queue);
    auto rq = to_dense(reclaimer_request, reclaimer_queue);
    std::vector<std::uint8_t> may(specs_.size(), 0);
    std::size_t left = 0;  // queues that may still give a victim
    for (std::size_t q = 0; q < specs_.size(); ++q) {
      if (q == self || !specs_[q].reclaimable) continue;
      may[q] = may_give(q, alloc_) && some_task_past_deserved_test(q) ? 1 : 0;
      left += may[q];
    }
    if (left == 0) return;
    std::vector<std::int64_t> running(alloc_);
    std::vector<std::size_t> checked;
    // after a victim of q: q leaves the walk once it cannot give another
    const auto step = [&](const task_entry& e) {
      if (!reclaim_step(self, rq, e, running, checked, out) || may_give(e.queue, running)) return true;
      may[e.queue] = 0;
      return --left != 0;
    };
    if (!hierarchical()) {  // the victim order is the allocation order
      for (const auto& e : tasks_.order())
        if (!e.id.empty() && may[e.queue] && !step(e)) break;
      return;
    }
    std::vector<const task_entry*> walk;
    for (const auto& e : tasks_.order())
      if (!e.id.empty() && may[e.queue]) walk.push_back(&e);
    victim_queue_order(self, walk, [](const task_entry* t) { return t->queue; });
    for (const task_entry* t : walk)
      if (may[t->queue] && !step(*t)) break;
  }

  /// Volcano's VictimQueueOrderFn (hierarchical): tasks of queues closer to
  /// the reclaimer's queue (deeper common ancestor) first; stable otherwise.
  [[nodiscard]] std::vector<std::string> victim_order(std::string_view reclaimer_queue,
                                                      std::vector<std::string> candidates) const {
    if (!hierarchical()) return candidates;
    victim_queue_order(index(reclaimer_queue), candidates, [this](const std::string& id) { return task_queue(id); });
    return candidates;
  }
  /// Running tasks in allocation order.
  [[nodiscard]] std::vector<std::string> running_tasks() const { return tasks_.running(); }

  /// The registry whose names the model's reasons and introspection
  /// (quota/volcano_capacity_json.hpp) carry; it must outlive the model and its
  /// copies. Unbound (nullptr, the default): the well-known names only.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }

 private:
  // A running task in allocation order (a released one: empty id, a hole).
  using task_entry = detail::volcano_task_book<volcano_capacity_task_meta>::entry;

  // VictimQueueOrderFn (hierarchical only): a stable sort of `tasks` putting
  // the tasks of queues with a deeper common ancestor with `self` first; each
  // queue's level is computed once.
  template <class T, class QueueOf>
  void victim_queue_order(std::size_t self, std::vector<T>& tasks, QueueOf queue_of) const {
    if (!hierarchical()) return;
    const auto sp = path(self);
    std::vector<std::size_t> level(specs_.size());
    for (std::size_t q = 0; q < specs_.size(); ++q) level[q] = common_level(path(q), sp);
    std::stable_sort(tasks.begin(), tasks.end(),
                     [&](const T& x, const T& y) { return level[queue_of(x)] > level[queue_of(y)]; });
  }

  // ReclaimableFn's walk over tasks in victim order (see reclaimable()).
  void reclaim_walk(std::size_t self, const detail::dense_request& rq, const std::vector<const task_entry*>& walk,
                    std::vector<victim>& out) const {
    std::vector<std::int64_t> running(alloc_);
    std::vector<std::size_t> checked;
    for (const task_entry* t : walk) (void)reclaim_step(self, rq, *t, running, checked, out);
  }

  // The dimensions a request asks for (bit d: dimension d), when there are at most 64.
  [[nodiscard]] std::uint64_t dims_asked(const detail::dense_request& req) const noexcept {
    std::uint64_t m = 0;
    for (std::size_t d = 0; d < dim_count_ && d < 64; ++d)
      if (req[d] > 0) m |= std::uint64_t{1} << d;
    return m;
  }
  // How many preemptible tasks of q ask for each combination of dimensions.
  void count_task_dims(std::size_t q, const detail::dense_request& req, int sign) {
    if (dim_count_ > 64) return;
    const std::uint64_t m = dims_asked(req);
    auto& list = task_dims_[q];
    for (auto it = list.begin(); it != list.end(); ++it)
      if (it->dims == m) {
        if (sign > 0) {
          ++it->tasks;
        } else if (--it->tasks == 0) {
          list.erase(it);
        }
        return;
      }
    if (sign > 0) list.push_back(dims_count{m, 1});
  }
  // Whether some preemptible task of q passes reclaim_step's first test on
  // the current allocation: it asks for no dimension where q has deserved,
  // or for one where q holds more than its listed deserved. A walk only
  // lowers what queues hold, so a queue without such a task gives no victim
  // and its tasks are never read. Always true beyond 64 dimensions.
  [[nodiscard]] bool some_task_past_deserved_test(std::size_t q) const noexcept {
    if (dim_count_ > 64) return true;
    if (q >= task_dims_.size()) return false;
    std::uint64_t relevant = 0, exceeded = 0;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const std::size_t k = q * dim_count_ + d;
      if (des_[k] > 0) relevant |= std::uint64_t{1} << d;
      if (des_set_[k] && alloc_[k] > des_[k] && !detail::capacity_ignored(dims_[d])) exceeded |= std::uint64_t{1} << d;
    }
    for (const auto& c : task_dims_[q])
      if ((c.dims & relevant) == 0 || (c.dims & exceeded) != 0) return true;
    return false;
  }

  // A queue that can give a reclaim victim while it holds `held`: in some
  // dimension it holds something and has no deserved or more than its
  // listed deserved (every victim's queue does: its task holds part of it).
  bool may_give(std::size_t q, const std::vector<std::int64_t>& held) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const std::size_t k = q * dim_count_ + d;
      if (held[k] > 0 && (des_[k] <= 0 || (des_set_[k] && held[k] > des_[k]))) return true;
    }
    return false;
  }

  // ReclaimableFn's step over task t with the running allocations: a victim
  // goes to `out` and leaves `running`. Returns whether t was taken.
  bool reclaim_step(std::size_t self, const detail::dense_request& rq, const task_entry& t,
                    std::vector<std::int64_t>& running, std::vector<std::size_t>& checked,
                    std::vector<victim>& out) const {
    const auto q = t.queue;
    const auto& req = t.req;
    if (q == self || !specs_[q].reclaimable || !t.meta.preemptible) return false;
    // every test is a plain predicate on the running copy: the one that
    // rejects most tasks (a queue at or below its deserved) goes first
    const bool relevant = has_relevant_deserved(q, req);
    if (relevant && !exceeds_deserved(q, running, req)) return false;
    bool intersects = false;  // IntersectionWithIgnoredScalarResources
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (req[d] > 0 && rq[d] > 0 && !detail::capacity_ignored(dims_[d])) intersects = true;
    if (!intersects) return false;
    bool keeps_guarantee = true;
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (guar_[q * dim_count_ + d] > running[q * dim_count_ + d] - req[d]) keeps_guarantee = false;
    if (!keeps_guarantee) return false;
    std::string_view rule = "reclaim_over_deserved";
    if (!relevant) {
      if (hierarchical() && opts_.ancestor_reclaim_level > 0 && shares_ancestor_within_level(self, q) &&
          !has_relevant_deserved(self, rq))
        return false;
      rule = "reclaim_no_deserved";
    }
    checked.clear();
    bool eligible = true;
    if (hierarchical())
      for (int level = 1; level <= opts_.ancestor_reclaim_level && eligible; ++level) {
        const auto a = ancestor_at(q, static_cast<std::size_t>(level));
        if (a == npos || a == root_) continue;
        if (ancestor_at(self, static_cast<std::size_t>(level)) == a) continue;
        checked.push_back(a);
        if (!has_relevant_deserved(a, req)) continue;
        if (!exceeds_deserved(a, running, req)) eligible = false;
      }
    if (!eligible) return false;
    for (std::size_t d = 0; d < dim_count_; ++d) running[q * dim_count_ + d] -= req[d];
    for (const auto a : checked)
      for (std::size_t d = 0; d < dim_count_; ++d) running[a * dim_count_ + d] -= req[d];
    out.push_back(victim{t.id, volcano_capacity_model_name, rule, specs_[q].name});
    return true;
  }

  [[nodiscard]] std::size_t find_dim(resource_id r) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (dims_[d] == r) return d;
    return dim_count_;
  }

  void require_leaf(std::size_t q, const char* what) const {
    if (hierarchical() && !is_leaf(q))
      throw state_error(error_id::state_conflict, "queue " + specs_[q].name + ": " + what +
                                                      " on a queue with child queues (only leaf queues hold jobs)");
  }

  decision gate(std::size_t q) const {
    if (!specs_[q].open) return decision::deny(queue_reason("queue_not_open", q, no_resource, 0, 0, 0));
    if (hierarchical() && children_[q] != 0) {
      auto r = queue_reason("not_leaf", q, no_resource, 0, 0, 0);
      r.message = "only leaf queues hold jobs";
      return decision::deny(std::move(r));
    }
    return {};
  }

  /// A reason of this model about queue n (and resource r, or no_resource).
  reason queue_reason(std::string_view rule, std::size_t n, resource_id r, std::int64_t requested, std::int64_t used,
                      std::int64_t limit) const {
    return detail::volcano_reason(volcano_capacity_model_name, rule, specs_[n].name, reg_, r, requested, used, limit);
  }
  /// Volcano's AllocatableFn at queue n: allocated + task <= realCapability
  /// in every dimension the task asks for (pods left out); each one over it
  /// is a reason in `out`.
  void over_real_capability(std::size_t n, const resource_vector& task, decision& out) const {
    for (const auto& e : task) {
      if (e.value <= 0 || detail::capacity_ignored(e.id)) continue;
      const std::size_t d = find_dim(e.id);
      const auto used = d < dim_count_ ? alloc_[n * dim_count_ + d] : 0;
      const auto lim = d < dim_count_ ? real_[n * dim_count_ + d] : 0;
      if (lim != detail::cap_unlimited && detail::checked_add(used, e.value) > lim)
        out.add(queue_reason("over_real_capability", n, e.id, e.value, used, lim));
    }
  }

  bool under_deserved_somewhere(std::size_t q, const resource_vector& request) const {
    for (const auto& e : request) {
      if (e.value <= 0 || detail::capacity_ignored(e.id)) continue;
      const std::size_t d = find_dim(e.id);
      if (d == dim_count_) continue;
      if (detail::checked_add(alloc_[q * dim_count_ + d], e.value) <= des_[q * dim_count_ + d]) return true;
    }
    return false;
  }

  /// Volcano's hasRelevantDeserved: the task and the queue's deserved share a non-zero dimension.
  bool has_relevant_deserved(std::size_t q, const detail::dense_request& req) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (req[d] > 0 && des_[q * dim_count_ + d] > 0) return true;
    return false;
  }
  /// Volcano's GreaterPartlyWithRelevantDimensions: running allocation above
  /// deserved in a dimension the task uses and the queue's deserved lists.
  bool exceeds_deserved(std::size_t q, const std::vector<std::int64_t>& running,
                        const detail::dense_request& req) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (req[d] > 0 && des_set_[q * dim_count_ + d] && running[q * dim_count_ + d] > des_[q * dim_count_ + d] &&
          !detail::capacity_ignored(dims_[d]))
        return true;
    return false;
  }

  int compare_share(std::size_t a, std::size_t b) const {
    const auto sa = share(a), sb = share(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    const bool da = has_deserved(a), db = has_deserved(b);
    if (da == db) return 0;
    return da ? -1 : 1;
  }
  bool has_deserved(std::size_t q) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (des_[q * dim_count_ + d] > 0) return true;
    return false;
  }

  /// Ancestors from the root down to q itself.
  std::vector<std::size_t> path(std::size_t q) const {
    std::vector<std::size_t> p;
    for (std::size_t n = q; n != npos; n = parent_[n]) p.push_back(n);
    std::reverse(p.begin(), p.end());
    return p;
  }
  /// Volcano's getQueueLevel over the ancestor lists (the paths without the queues themselves).
  static std::size_t common_level(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
    std::size_t level = 0;
    const std::size_t n = std::min(a.size(), b.size()) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return level;
      level = i;
    }
    return level;
  }
  /// The ancestor `level` steps above q (1 = parent), npos if none.
  std::size_t ancestor_at(std::size_t q, std::size_t level) const noexcept {
    std::size_t n = q;
    for (std::size_t i = 0; i < level && n != npos; ++i) n = parent_[n];
    return n;
  }
  bool shares_ancestor_within_level(std::size_t a, std::size_t b) const noexcept {
    const auto levels = static_cast<std::size_t>(opts_.ancestor_reclaim_level);
    for (std::size_t i = 1; i <= levels; ++i) {
      const auto x = ancestor_at(a, i);
      if (x == npos || x == root_) continue;
      for (std::size_t j = 1; j <= levels; ++j)
        if (ancestor_at(b, j) == x) return true;
    }
    return false;
  }

  detail::dense_request to_dense(const resource_vector& v, std::string_view owner) const {
    return detail::dense_request_of(dims_, v, owner);
  }

  /// v[n] += sign * delta for q and every ancestor; checks first, then writes (strong guarantee).
  void add_chain(std::vector<std::int64_t>& v, std::size_t q, const detail::dense_request& delta, int sign) {
    for (std::size_t n = q; n != npos; n = parent_[n])
      for (std::size_t d = 0; d < dim_count_; ++d)
        (void)(sign > 0 ? detail::checked_add(v[n * dim_count_ + d], delta[d])
                        : detail::checked_sub(v[n * dim_count_ + d], delta[d]));
    for (std::size_t n = q; n != npos; n = parent_[n])
      for (std::size_t d = 0; d < dim_count_; ++d) v[n * dim_count_ + d] += sign > 0 ? delta[d] : -delta[d];
  }

  static bool cpu_or_memory(resource_id r) noexcept { return r == resources::cpu || r == resources::memory; }

  static constexpr std::int64_t not_set = -1;  // own capability: inherit (hierarchical) / unlimited (flat)

  void build(std::vector<volcano_capacity_queue_spec> queues, diagnostics& diag) {
    const bool hier = hierarchical();
    specs_.reserve(queues.size() + 1);
    by_name_.reserve(queues.size() + 1);
    if (hier) {
      // the implicit root at index 0; a "root" Queue in the input gives it a capability
      volcano_capacity_queue_spec root;
      root.name = "root";
      for (auto it = queues.begin(); it != queues.end(); ++it)
        if (it->name == "root") {
          root.capability = it->capability;
          root.open = it->open;
          queues.erase(it);
          break;
        }
      specs_.push_back(std::move(root));
    }
    for (auto& q : queues) {
      if (q.name.empty()) diag.add("queue/", "empty queue name");
      if (by_name_.count(q.name) || (hier && q.name == "root")) diag.add("queue/" + q.name, "duplicate queue name");
      by_name_.emplace(q.name, specs_.size());
      specs_.push_back(std::move(q));
    }
    if (hier) by_name_.emplace("root", 0);
    const std::size_t n = specs_.size();
    root_ = hier ? 0 : npos;
    parent_.assign(n, npos);
    children_.assign(n, 0);
    depth_.assign(n, 0);
    for (auto* v : {&own_cap_, &own_des_, &guar_, &sum_g_, &sum_d_, &cap_, &real_, &des_, &alloc_, &inq_, &elastic_,
                    &s_cap_, &s_real_, &s_des_})
      v->assign(n * dim_count_, 0);
    listed_.assign(n * dim_count_, 0);
    des_set_.assign(n * dim_count_, 0);
    s_set_.assign(n * dim_count_, 0);

    // own values and the checks within one queue (spec only)
    for (std::size_t q = 0; q < n; ++q) {
      const auto& s = specs_[q];
      const std::string base = "queue/" + s.name;
      for (std::size_t d = 0; d < dim_count_; ++d) {
        const auto r = dims_[d];
        const auto i = q * dim_count_ + d;
        const auto* c = s.capability.find(r);
        const auto* ds = s.deserved.find(r);
        const auto g = s.guarantee.get(r);
        if (c && *c < 0) diag.add(base + "/spec/capability/" + std::to_string(r), "negative amount");
        if (ds && *ds < 0) diag.add(base + "/spec/deserved/" + std::to_string(r), "negative amount");
        if (g < 0) diag.add(base + "/spec/guarantee/resource/" + std::to_string(r), "negative amount");
        own_cap_[i] = (c && !(cpu_or_memory(r) && *c <= 0)) ? std::max<std::int64_t>(0, *c) : not_set;
        own_des_[i] = ds ? std::max<std::int64_t>(0, *ds) : 0;
        guar_[i] = std::max<std::int64_t>(0, g);
        listed_[i] = (ds != nullptr || s.guarantee.has(r)) ? 1 : 0;
        if (ds && *ds >= 0 && g > *ds)
          note(diag, base + "/spec/deserved/" + std::to_string(r),
               "deserved " + std::to_string(*ds) + " is below guarantee " + std::to_string(g) +
                   (opts_.upstream ? " (raised to the guarantee)" : ""));
        if (own_cap_[i] != not_set) {
          if (guar_[i] > own_cap_[i])
            diag.add(base + "/spec/guarantee/resource/" + std::to_string(r),
                     "guarantee " + std::to_string(guar_[i]) + " exceeds capability " + std::to_string(own_cap_[i]));
          if (ds && own_des_[i] > own_cap_[i])
            diag.add(base + "/spec/deserved/" + std::to_string(r),
                     "deserved " + std::to_string(own_des_[i]) + " exceeds capability " + std::to_string(own_cap_[i]));
        }
      }
    }
    topo_.resize(n);
    for (std::size_t q = 0; q < n; ++q) topo_[q] = q;
    if (hier && !link_parents(diag)) return;
    if (hier) {
      std::stable_sort(topo_.begin(), topo_.end(), [&](std::size_t a, std::size_t b) { return depth_[a] < depth_[b]; });
      // children's sums (deserved lifted to guarantee) and the checks against the parent
      for (std::size_t q = 1; q < n; ++q)
        for (std::size_t d = 0; d < dim_count_; ++d) {
          const auto p = parent_[q] * dim_count_ + d, i = q * dim_count_ + d;
          sum_g_[p] = detail::checked_add(sum_g_[p], guar_[i]);
          sum_d_[p] = detail::checked_add(sum_d_[p], std::max(own_des_[i], guar_[i]));
        }
      for (std::size_t d = 0; d < dim_count_; ++d) guar_[d] = sum_g_[d];  // the root's guarantee
      for (std::size_t p = 1; p < n; ++p) {
        if (children_[p] == 0) continue;
        for (std::size_t d = 0; d < dim_count_; ++d) {
          const auto i = p * dim_count_ + d;
          const auto r = std::to_string(dims_[d]);
          if (sum_d_[i] > std::max(own_des_[i], guar_[i]))
            note(diag, "queue/" + specs_[p].name + "/spec/deserved/" + r,
                 "children's deserved " + std::to_string(sum_d_[i]) + " exceeds the queue's deserved " +
                     std::to_string(std::max(own_des_[i], guar_[i])));
          if (sum_g_[i] > guar_[i])
            note(diag, "queue/" + specs_[p].name + "/spec/guarantee/resource/" + r,
                 "children's guarantee " + std::to_string(sum_g_[i]) + " exceeds the queue's guarantee " +
                     std::to_string(guar_[i]));
        }
      }
    }
    derive(total_.data(), cap_, real_, des_, des_set_, diag, total_warn_);
  }

  /// A rule Volcano's scheduler only logs: a warning in upstream mode, else an error.
  void note(diagnostics& diag, std::string path, std::string message) {
    if (opts_.upstream)
      build_warn_.push_back({std::move(path), std::move(message)});
    else
      diag.add(std::move(path), std::move(message));
  }

  /// Parents, self-parents, unknown parents, cycles, depth and children counts.
  bool link_parents(diagnostics& diag) {
    const std::size_t n = specs_.size();
    for (std::size_t q = 1; q < n; ++q) {
      std::string p = specs_[q].parent;
      if (p.empty()) p = "root";
      if (p == specs_[q].name) {
        diag.add("queue/" + specs_[q].name + "/spec/parent", "queue cannot be its own parent");
        continue;
      }
      auto it = by_name_.find(p);
      if (it == by_name_.end()) {
        diag.add("queue/" + specs_[q].name + "/spec/parent", "unknown parent '" + p + "'");
        continue;
      }
      parent_[q] = it->second;
    }
    for (std::size_t q = 1; q < n; ++q) {
      std::size_t cur = q, steps = 0;
      while (cur != npos && cur != 0 && steps <= n) {
        cur = parent_[cur];
        ++steps;
      }
      if (steps > n) diag.add("queue/" + specs_[q].name + "/spec/parent", "parent cycle");
    }
    if (!diag.empty()) return false;
    for (std::size_t q = 1; q < n; ++q) {
      ++children_[parent_[q]];
      std::size_t dep = 0;
      for (std::size_t cur = q; cur != 0; cur = parent_[cur]) ++dep;
      depth_[q] = dep;
    }
    return true;
  }

  std::uint8_t relevance(std::size_t d, std::int64_t des, std::size_t i) const noexcept {
    return cpu_or_memory(dims_[d]) ? (des > 0) : (listed_[i] != 0 || des > 0);
  }

  /// capability (after inheritance), realCapability, deserved and its
  /// relevance for a cluster total; the checks that depend on the total go
  /// to `diag`. Writes only into the given buffers; allocation-free.
  void derive(const std::int64_t* total, std::vector<std::int64_t>& cap, std::vector<std::int64_t>& real,
              std::vector<std::int64_t>& des, std::vector<std::uint8_t>& set, diagnostics& diag,
              std::vector<diagnostic>& warn) const {
    const std::size_t n = specs_.size();
    warn.clear();
    auto logged = [&](std::string path, std::string message) {
      if (opts_.upstream)
        warn.push_back({std::move(path), std::move(message)});
      else
        diag.add(std::move(path), std::move(message));
    };
    if (!hierarchical()) {
      for (std::size_t d = 0; d < dim_count_; ++d) {
        std::int64_t sum = 0;
        for (std::size_t q = 0; q < n; ++q) sum = detail::checked_add(sum, guar_[q * dim_count_ + d]);
        if (sum > total[d])
          logged("total/" + detail::resource_label(reg_, dims_[d]),
                 "sum of guarantees " + std::to_string(sum) + " exceeds the cluster total " + std::to_string(total[d]) +
                     " (reserved resource cannot be more than the total)");
        const auto free = detail::cap_excess(total[d], sum);
        for (std::size_t q = 0; q < n; ++q) {
          const auto i = q * dim_count_ + d;
          cap[i] = own_cap_[i] == not_set ? detail::cap_unlimited : own_cap_[i];
          real[i] = std::min(cap[i], detail::cap_add(free, guar_[i]));
          des[i] = std::max(std::min(own_des_[i], real[i]), guar_[i]);
          set[i] = relevance(d, des[i], i);
        }
      }
      return;
    }
    for (const auto q : topo_) {  // parents before children
      for (std::size_t d = 0; d < dim_count_; ++d) {
        const auto i = q * dim_count_ + d;
        if (q == 0) {
          auto c = own_cap_[d] == not_set ? detail::cap_unlimited : own_cap_[d];
          if (opts_.root_bounded_by_total) c = std::min(c, total[d]);
          cap[d] = real[d] = c;
          des[d] = sum_d_[d];
          continue;
        }
        const auto p = parent_[q] * dim_count_ + d;
        const bool own = own_cap_[i] != not_set;
        cap[i] = own ? own_cap_[i] : cap[p];
        if (own && cap[i] > cap[p])
          logged("queue/" + specs_[q].name + "/spec/capability/" + std::to_string(dims_[d]),
                 "capability " + std::to_string(cap[i]) + " exceeds parent '" + specs_[parent_[q]].name +
                     "' capability " + std::to_string(cap[p]));
        if (!own && guar_[i] > cap[i])
          logged("queue/" + specs_[q].name + "/spec/guarantee/resource/" + std::to_string(dims_[d]),
                 "guarantee " + std::to_string(guar_[i]) + " exceeds inherited capability " + std::to_string(cap[i]));
        real[i] = std::min(cap[i], detail::cap_add(detail::cap_excess(real[p], sum_g_[p]), guar_[i]));
        des[i] = std::max(own_des_[i], guar_[i]);
        set[i] = relevance(d, des[i], i);
      }
    }
    for (std::size_t d = 0; d < dim_count_; ++d) {
      set[d] = 0;
      for (std::size_t q = 1; q < n; ++q)
        if (parent_[q] == 0 && set[q * dim_count_ + d]) set[d] = 1;
    }
  }

  std::vector<resource_id> dims_;
  volcano_capacity_options opts_;
  const resource_registry* reg_ = nullptr;
  std::size_t dim_count_ = 0;
  std::size_t root_ = npos;
  std::vector<std::int64_t> total_;
  std::vector<volcano_capacity_queue_spec> specs_;
  std::unordered_map<std::string, std::size_t, detail::string_hash, std::equal_to<>> by_name_;
  // upstream mode: warnings of the specs (build_warn_) and of the current total (total_warn_)
  std::vector<diagnostic> build_warn_, total_warn_, warnings_;
  std::vector<std::size_t> parent_, children_, depth_, topo_;
  // inputs: own capability (or not_set), own deserved, guarantee (the root's:
  // the sum over its children), listed flags, children's sums
  std::vector<std::int64_t> own_cap_, own_des_, guar_, sum_g_, sum_d_;
  std::vector<std::uint8_t> listed_;
  // derived from the inputs and the total; s_*: scratch for set_total
  std::vector<std::int64_t> cap_, real_, des_, s_cap_, s_real_, s_des_;
  std::vector<std::uint8_t> des_set_, s_set_;
  std::vector<std::int64_t> alloc_, inq_, elastic_;
  detail::volcano_task_book<volcano_capacity_task_meta> tasks_;
  // per queue: the combinations of dimensions its preemptible tasks ask for, with their counts
  struct dims_count {
    std::uint64_t dims;
    std::size_t tasks;
  };
  std::vector<boost::container::small_vector<dims_count, 2>> task_dims_;
};

/// quota::policy over capacity queues: job.queue = leaf queue name,
/// job.request = the task request; check = allocatable (leaf to root);
/// victims = reclaimable over the running tasks in Volcano's victim queue
/// order, when the job's queue is preemptive.
class volcano_capacity_policy : public detail::job_queue_order {
 public:
  explicit volcano_capacity_policy(volcano_capacity_model q) : q_(std::move(q)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return volcano_capacity_model_name; }
  [[nodiscard]] const volcano_capacity_model& model() const noexcept { return q_; }
  [[nodiscard]] volcano_capacity_model& model() noexcept { return q_; }
  /// quota::capacity_aware: the cluster's new total (volcano_capacity_model::set_total).
  void set_cluster_capacity(const resource_vector& total) { q_.set_total(total); }
  [[nodiscard]] decision check(const job& j) const {
    if (!blocked_.empty()) return blocked_reason();
    return q_.allocatable(q_.index(j.queue), j.request);
  }
  void commit(const job& j) {
    q_.allocate(j.id, j.queue, j.request, volcano_capacity_task_meta{j.priority, j.preemptible});
  }
  void release(std::string_view id) { q_.deallocate(id); }
  /// Node-level rule (quota/capabilities.hpp): Volcano's preempt action, the
  /// lower-priority preemptible tasks of the job's own queue.
  void node_candidates(const job& j, std::vector<victim>& out) const {
    if (blocked_.empty() && q_.find(j.queue)) q_.preemptable_in_queue(j.queue, j.priority, out);
  }
  /// A charge of c.queue (quota/capabilities.hpp): a non-preemptible task.
  void charge_added(const job& c) {
    q_.allocate(c.id, c.queue, c.request, volcano_capacity_task_meta{c.priority, false});
  }
  void charge_removed(std::string_view id) { q_.deallocate(id); }
  /// Volcano's reclaim action: only a preemptive queue reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (!blocked_.empty() || q_.preemptive(q_.index(j.queue), j.request).denied()) return;
    q_.reclaimable_running(j.queue, j.request, out);
  }

  // ---- order (quota/capabilities.hpp) ----
  // One queue per Volcano Queue; inside it, higher job priority then earlier
  // creation (pending_queue, compare_pending: detail::job_queue_order).
  /// Heads by the capacity plugin's queue order, then the queues' creation,
  /// then their names (Volcano's session fallback).
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    const auto qa = q_.find(a.queue), qb = q_.find(b.queue);
    if (!qa || !qb || *qa == *qb) return default_pending_order(a, b);
    int c = q_.compare_queues(*qa, *qb);
    if (c == 0) {
      const auto &sa = q_.spec(*qa), &sb = q_.spec(*qb);
      c = sa.created_ms != sb.created_ms ? (sa.created_ms < sb.created_ms ? -1 : 1) : (sa.name < sb.name ? -1 : 1);
    }
    return c < 0 ? std::weak_ordering::less : std::weak_ordering::greater;
  }

  // ---- demand (quota/capabilities.hpp): jobs in queues with children ----
  /// Upstream hierarchical mode: a waiting job whose queue has children makes
  /// Volcano's capacity plugin give up on the session (allocatable,
  /// enqueueable, preemptive and reclaimable all refuse), so while one waits
  /// every check is denied `job_in_inner_queue` naming that queue. The
  /// default mode rejects such jobs before they reach the model.
  void pending_added(const job& j) {
    if (!q_.options().upstream || !q_.hierarchical()) return;
    const auto q = q_.find(j.queue);
    if (q && !q_.is_leaf(*q)) blocked_.emplace(j.id, j.queue);
  }
  void pending_withdrawn(std::string_view id) {
    if (const auto it = blocked_.find(id); it != blocked_.end()) blocked_.erase(it);
  }
  /// The waiting jobs of queues with children (upstream hierarchical mode).
  [[nodiscard]] std::size_t jobs_in_inner_queues() const noexcept { return blocked_.size(); }

 private:
  [[nodiscard]] decision blocked_reason() const {
    const auto& [id, queue] = *blocked_.begin();
    return decision::deny(
        reason{volcano_capacity_model_name,
               "job_in_inner_queue",
               queue,
               no_resource,
               {},
               0,
               0,
               0,
               reason_note("job '$0' waits in a queue with child queues: nothing is scheduled", {id})});
  }
  volcano_capacity_model q_;
  std::map<std::string, std::string, std::less<>> blocked_;  // job id -> its inner queue
};
static_assert(policy<volcano_capacity_policy>);
static_assert(order_aware<volcano_capacity_policy>);
static_assert(node_preemption_aware<volcano_capacity_policy>);
static_assert(charge_receiver<volcano_capacity_policy>);
static_assert(demand_aware<volcano_capacity_policy>);

}  // namespace quota
