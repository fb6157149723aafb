// SPDX-License-Identifier: Apache-2.0
// quota/volcano.hpp — Volcano's proportion plugin: weighted queues with guarantee
// and capability sharing a cluster total (realCapability, deserved, predicates,
// reclaim).
// Docs: docs/volcano.md
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/job_queue_order.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/detail/stale_mark.hpp>
#include <quota/detail/volcano_common.hpp>
#include <quota/error.hpp>
#include <quota/fraction.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

enum class volcano_queue_state : std::uint8_t { open, closed, closing };

/// A queue's share, exact: allocated / deserved in one dimension, deserved > 0
/// (the default is the share 0). Ordered by value, exactly: the comparison
/// multiplies into 320 bits (64-bit allocated by two 128-bit terms), so
/// neither rounding nor a wider type is needed; quota/big_int.hpp's
/// to_rational(s.deserved) widens the deserved part.
struct volcano_queue_share {
  std::int64_t allocated = 0;
  wide_fraction deserved = wide_fraction(1);

  /// allocated / deserved as a double (rounded; for display).
  [[nodiscard]] double to_double() const noexcept {
    return static_cast<double>(allocated) * static_cast<double>(deserved.den()) / static_cast<double>(deserved.num());
  }
  friend constexpr bool operator==(const volcano_queue_share& a, const volcano_queue_share& b) noexcept {
    return (a <=> b) == 0;
  }
  friend constexpr std::strong_ordering operator<=>(const volcano_queue_share& a,
                                                    const volcano_queue_share& b) noexcept {
    const int sa = a.allocated > 0 ? 1 : (a.allocated < 0 ? -1 : 0);
    const int sb = b.allocated > 0 ? 1 : (b.allocated < 0 ? -1 : 0);
    if (sa != sb || sa == 0) return sa <=> sb;
    // |xa| / (na / da) vs |xb| / (nb / db), n and d > 0: |xa| * da * nb vs |xb| * db * na
    const auto c = detail::compare_products(
        static_cast<detail::uint128>(a.deserved.den()), static_cast<detail::uint128>(b.deserved.num()),
        static_cast<std::uint64_t>(detail::magnitude(a.allocated)), static_cast<detail::uint128>(b.deserved.den()),
        static_cast<detail::uint128>(a.deserved.num()), static_cast<std::uint64_t>(detail::magnitude(b.allocated)));
    return sa > 0 ? c : 0 <=> c;
  }
};

/// One Volcano Queue as given by the host (spec + status).
struct volcano_queue_spec {
  std::string name;
  std::int64_t weight = 1;
  /// Capability as listed: absent = unlimited; cpu/memory listed as 0 =
  /// unlimited (Volcano); any other listed 0 is a real zero.
  resource_vector capability;
  resource_vector guarantee;
  bool reclaimable = true;
  volcano_queue_state state = volcano_queue_state::open;
  /// Parent queue name ("" = root level). Validated (unknown / cycles).
  std::string parent;
  /// Queue.spec.priority: higher goes first in queue order (Volcano default 0).
  std::int32_t priority = 0;
  /// metadata.creationTimestamp, ms: the last tie-break of queue order.
  std::int64_t created_ms = 0;
};

/// What the reclaim and preempt actions read of a running task besides its
/// queue and request: its job's priority and whether it may be preempted
/// (Volcano's volcano.sh/preemptable; non-preemptible tasks are never
/// candidates, they are left out before any queue's reclaimable share counts).
struct volcano_task_meta {
  std::int32_t priority = 0;
  bool preemptible = true;
};

/// A candidate victim for reclaim: a running task of some queue.
struct volcano_task_ref {
  std::string task_id;
  std::string queue;
};

namespace detail {
inline constexpr std::int64_t queue_unlimited = std::numeric_limits<std::int64_t>::max();
/// Volcano leaves `pods` out of its dimension-wise comparisons (every task
/// asks for one pod; IsIgnoredScalarResource in pkg/scheduler/api).
[[nodiscard]] constexpr bool volcano_ignored(resource_id r) noexcept {
  return r == resources::pods;
}
}  // namespace detail

/// Options of the proportion model.
struct volcano_options {
  /// Decide as Volcano's proportion plugin does where the default differs
  /// (docs/volcano.md, "Differences from upstream"): a sum of guarantees above
  /// the cluster total is accepted with a warning, and when every queue with
  /// demand has weight 0 every deserved is 0.
  bool upstream = false;
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view volcano_model_name = "volcano";

class volcano_model {
 public:
  /// `dims`: the tracked resources; `total`: the cluster total (nodes' allocatable).
  /// Throws validation_error listing every problem, each naming the queue.
  /// With `opts.upstream`, configurations Volcano runs with (it only logs)
  /// are accepted and listed in warnings().
  volcano_model(std::vector<resource_id> dims, const resource_vector& total, std::vector<volcano_queue_spec> queues,
                volcano_options opts = {})
      : dims_(std::move(dims)), opts_(opts) {
    dim_count_ = dims_.size();
    diagnostics diag;
    read_total(total, diag);
    for (auto& q : queues) add_queue_internal(std::move(q), diag);
    validate(diag);
    if (!diag.empty()) throw validation_error(diag.items());
    recompute_real_capability();
  }

  /// Adds a queue (e.g. queue4 of Volcano's reservation design); all realCapabilities change.
  /// Strong guarantee: on a validation_error nothing changes.
  void add_queue(volcano_queue_spec q) {
    change([&q](volcano_model& m, diagnostics& diag) { m.add_queue_internal(std::move(q), diag); });
  }

  /// A new cluster total (nodes came or went; the proportion plugin reads it
  /// again at every session): realCapability follows, deserved is computed
  /// again at the next update_deserved. Resources the model does not track
  /// are ignored. Strong guarantee: on a validation_error (a negative total;
  /// in the default mode, guarantees above the new total) nothing changes.
  void set_total(const resource_vector& total) {
    change([&total](volcano_model& m, diagnostics& diag) { m.read_total(total, diag); });
  }

  [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
  [[nodiscard]] std::size_t index(std::string_view name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) throw unknown_entity_error(error_id::unknown_queue, "queue", name);
    return it->second;
  }
  /// The index of a queue, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }
  [[nodiscard]] const volcano_queue_spec& spec(std::size_t q) const { return specs_.at(q); }
  [[nodiscard]] const std::vector<resource_id>& dims() const noexcept { return dims_; }
  [[nodiscard]] const volcano_options& options() const noexcept { return opts_; }
  /// Upstream mode: what Volcano runs with (a sum of guarantees above the
  /// cluster total; an unknown or cyclic spec.parent, which the proportion
  /// plugin never reads), each naming the item. Empty in the default mode,
  /// which rejects these configurations.
  [[nodiscard]] const std::vector<diagnostic>& warnings() const noexcept { return warnings_; }

  // ---- per-queue attributes (dense by tracked dimension index) ----
  [[nodiscard]] std::int64_t real_capability(std::size_t q, std::size_t d) const {
    return real_cap_[q * dim_count_ + d];
  }
  [[nodiscard]] std::int64_t capability(std::size_t q, std::size_t d) const { return cap_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t guarantee(std::size_t q, std::size_t d) const { return guar_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t allocated(std::size_t q, std::size_t d) const { return alloc_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t inqueue(std::size_t q, std::size_t d) const { return inq_[q * dim_count_ + d]; }
  /// Elastic resources of the queue's jobs (allocated beyond minResources).
  [[nodiscard]] std::int64_t elastic(std::size_t q, std::size_t d) const { return elastic_[q * dim_count_ + d]; }
  [[nodiscard]] std::int64_t request(std::size_t q, std::size_t d) const {
    return detail::checked_add(alloc_[q * dim_count_ + d], pending_[q * dim_count_ + d]);
  }
  /// Deserved is exact; it may be fractional: floor and ceiling are kept.
  [[nodiscard]] std::int64_t deserved_floor(std::size_t q, std::size_t d) const {
    return deserved_floor_[q * dim_count_ + d];
  }
  [[nodiscard]] std::int64_t deserved_ceil(std::size_t q, std::size_t d) const {
    return deserved_ceil_[q * dim_count_ + d];
  }
  /// The exact deserved, a fraction in lowest terms (after compute_deserved).
  [[nodiscard]] wide_fraction deserved_exact(std::size_t q, std::size_t d) const {
    const std::size_t k = q * dim_count_ + d;
    if (k >= deserved_num_.size()) return wide_fraction(0);
    return wide_fraction(deserved_num_[k], deserved_den_[k]);
  }
  [[nodiscard]] std::size_t dim_index(resource_id r) const {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (dims_[d] == r) return d;
    throw unknown_entity_error(error_id::unknown_resource, "resource", std::to_string(r));
  }

  /// Pending (not yet allocated) demand of a queue; request = allocated + pending.
  void set_pending(std::string_view queue, const resource_vector& pending) {
    const auto q = index(queue);
    auto dense = to_dense(pending, queue);
    std::copy(dense.begin(), dense.end(), pending_.begin() + static_cast<std::ptrdiff_t>(q * dim_count_));
  }

  // ---- allocation bookkeeping (incremental) ----
  void allocate(std::string_view task_id, std::string_view queue, const resource_vector& req,
                volcano_task_meta meta = {}) {
    const auto q = index(queue);
    if (tasks_.contains(task_id))
      throw state_error(error_id::state_duplicate,
                        "queue " + std::string(queue) + ": task '" + std::string(task_id) + "' is already allocated");
    const auto dense = to_dense(req, queue);
    for (std::size_t d = 0; d < dim_count_; ++d) (void)detail::checked_add(alloc_[q * dim_count_ + d], dense[d]);
    tasks_.add(task_id, q, dense, meta);  // strong on its own
    for (std::size_t d = 0; d < dim_count_; ++d) alloc_[q * dim_count_ + d] += dense[d];
  }
  void deallocate(std::string_view task_id) {
    const auto it = tasks_.locate(task_id);
    if (it == tasks_.end()) throw unknown_entity_error(error_id::unknown_job, "task", task_id);
    const auto& t = tasks_.at(it);
    for (std::size_t d = 0; d < dim_count_; ++d) alloc_[t.queue * dim_count_ + d] -= t.req[d];
    tasks_.erase(it);
  }
  [[nodiscard]] bool has_task(std::string_view id) const { return tasks_.contains(id); }

  /// Job moved to Inqueue: its minResources count as inqueue.
  void enqueue(std::string_view queue, const resource_vector& min_resources) {
    const auto q = index(queue);
    const auto dense = to_dense(min_resources, queue);
    for (std::size_t d = 0; d < dim_count_; ++d) (void)detail::checked_add(inq_[q * dim_count_ + d], dense[d]);
    for (std::size_t d = 0; d < dim_count_; ++d) inq_[q * dim_count_ + d] += dense[d];
  }
  void dequeue(std::string_view queue, const resource_vector& min_resources) {
    const auto q = index(queue);
    auto dense = to_dense(min_resources, queue);
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (inq_[q * dim_count_ + d] < dense[d])
        throw state_error(error_id::state_negative_usage,
                          "queue " + std::string(queue) + ": inqueue would go negative");
    for (std::size_t d = 0; d < dim_count_; ++d) inq_[q * dim_count_ + d] -= dense[d];
  }
  /// Sets a queue's elastic resources: the sum over its jobs of what they
  /// hold beyond their minResources (Volcano's JobInfo.GetElasticResources).
  void set_elastic(std::string_view queue, const resource_vector& elastic) {
    const auto q = index(queue);
    auto dense = to_dense(elastic, queue);
    std::copy(dense.begin(), dense.end(), elastic_.begin() + static_cast<std::ptrdiff_t>(q * dim_count_));
  }

  // ---- deserved: exact water-filling, per dimension ----
  /// Recomputes deserved for every queue. Allocation-free after the first call.
  void compute_deserved() {
    basis_.clear();  // kept cleared when the water-filling throws
    fill_deserved();
    // what deserved was computed from (see update_deserved)
    basis_.resize(alloc_.size());
    for (std::size_t k = 0; k < alloc_.size(); ++k) basis_[k] = static_cast<detail::int128>(alloc_[k]) + pending_[k];
  }
  /// compute_deserved() unless every queue's request (allocated + pending)
  /// is what the last one read: deserved depends on nothing else that
  /// changes after construction but the queues (add_queue recomputes), so
  /// it would come out the same. An admission and the release of the same
  /// task between two reads cost no water-filling.
  void update_deserved() {
    if (basis_.size() == alloc_.size()) {
      bool same = true;
      for (std::size_t k = 0; k < alloc_.size() && same; ++k)
        same = basis_[k] == static_cast<detail::int128>(alloc_[k]) + pending_[k];
      if (same) return;
    }
    compute_deserved();
  }

  // ---- queue order (Volcano proportion's QueueOrderFn) ----
  /// Exact share of a queue: the largest allocated / deserved over the
  /// dimensions where deserved is positive; a dimension with deserved 0 takes
  /// no part (Volcano's updateQueueAttrShare walks deserved.ResourceNames()).
  [[nodiscard]] volcano_queue_share exact_share(std::size_t q) const {
    volcano_queue_share s;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const std::size_t k = q * dim_count_ + d;
      if (deserved_num_[k] <= 0) continue;
      const volcano_queue_share v{alloc_[k], wide_fraction(deserved_num_[k], deserved_den_[k])};
      if (v > s) s = v;
    }
    return s;
  }
  /// Volcano proportion's queue order: higher Queue priority first, then the
  /// smaller share, then the earlier creation, then the name. < 0: a first.
  [[nodiscard]] int compare_queues(std::size_t a, std::size_t b) const {
    if (a == b) return 0;
    if (specs_[a].priority != specs_[b].priority) return specs_[a].priority > specs_[b].priority ? -1 : 1;
    const volcano_queue_share sa = exact_share(a), sb = exact_share(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    if (specs_[a].created_ms != specs_[b].created_ms) return specs_[a].created_ms < specs_[b].created_ms ? -1 : 1;
    return specs_[a].name < specs_[b].name ? -1 : 1;
  }

  // ---- predicates ----
  /// allocated + task <= deserved in every dimension the task requests but
  /// pods (Volcano's LessEqualWithDimensionAndResourcesName).
  [[nodiscard]] decision allocatable(std::size_t q, const resource_vector& task) const {
    return within_deserved(q, task, "allocatable");
  }
  /// Volcano's preemptive: the same test with the preemptor's task.
  [[nodiscard]] decision preemptive(std::size_t q, const resource_vector& task) const {
    return within_deserved(q, task, "preemptive");
  }
  /// deserved <= allocated in every tracked dimension.
  [[nodiscard]] bool overused(std::size_t q) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (deserved_ceil_[q * dim_count_ + d] > alloc_[q * dim_count_ + d]) return false;
    return true;
  }
  /// minResources + allocated + inqueue - elastic <= realCapability in every
  /// dimension the job asks for but pods; a closed/closing queue rejects; no
  /// minResources permits. elastic = the queue's (set_elastic) + `elastic`.
  [[nodiscard]] decision job_enqueueable(std::size_t q, const resource_vector& min_resources,
                                         const resource_vector& elastic = {}) const {
    if (specs_[q].state != volcano_queue_state::open)
      return decision::deny(
          reason{volcano_model_name, "queue_not_open", specs_[q].name, no_resource, {}, 0, 0, 0, "queue is not open"});
    if (min_resources.is_zero()) return decision::allow();
    decision out;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto m = min_resources.get(dims_[d]);
      if (m <= 0 || detail::volcano_ignored(dims_[d])) continue;
      const auto used = detail::checked_sub(detail::checked_add(alloc_[q * dim_count_ + d], inq_[q * dim_count_ + d]),
                                            detail::checked_add(elastic_[q * dim_count_ + d], elastic.get(dims_[d])));
      const auto lim = real_cap_[q * dim_count_ + d];
      if (detail::checked_add(m, used) > lim) out.add(queue_reason("over_real_capability", q, dims_[d], m, used, lim));
    }
    return out;
  }
  /// Overcommit gate: minResources <= total*factor - allocated(all) - inqueue(all)
  /// in asked dimensions (pods left out); the reservation design's exception (docs/volcano.md#references) admits a job
  /// that fits the queue's unused guarantee even when the cluster has nothing
  /// free (not in upstream mode: Volcano's overcommit plugin has no exception).
  [[nodiscard]] decision overcommit_gate(std::size_t q, const resource_vector& min_resources,
                                         std::int64_t factor_num = 6, std::int64_t factor_den = 5) const {
    if (min_resources.is_zero()) return decision::allow();
    // the reservation design's exception; Volcano's overcommit plugin has none
    bool fits_guarantee = !opts_.upstream;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto m = min_resources.get(dims_[d]);
      if (m <= 0 || detail::volcano_ignored(dims_[d])) continue;
      const auto used = detail::checked_add(alloc_[q * dim_count_ + d], inq_[q * dim_count_ + d]);
      if (detail::checked_add(m, used) > guar_[q * dim_count_ + d]) fits_guarantee = false;
    }
    if (fits_guarantee) return decision::allow();
    decision out;
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto m = min_resources.get(dims_[d]);
      if (m <= 0 || detail::volcano_ignored(dims_[d])) continue;
      const auto scaled = static_cast<std::int64_t>(static_cast<detail::int128>(total_[d]) * factor_num / factor_den);
      std::int64_t used = 0;
      for (std::size_t o = 0; o < specs_.size(); ++o)
        used = detail::checked_add(used, detail::checked_add(alloc_[o * dim_count_ + d], inq_[o * dim_count_ + d]));
      const auto idle = scaled - used;
      if (m > idle) out.add(queue_reason("overcommit", q, dims_[d], m, used, scaled));
    }
    return out;
  }
  /// Reclaim: walks `candidates` in order with a running copy of each queue's
  /// allocation; a task is a victim while its (reclaimable) queue exceeds
  /// deserved in some dimension. The preemptor's queue is skipped.
  void reclaimable(std::string_view preemptor_queue, const std::vector<std::string>& candidates,
                   std::vector<victim>& out) const {
    const auto self = index(preemptor_queue);
    if (!any_over_deserved(self)) {  // no task can be a victim; still refuse unknown ids
      for (const auto& id : candidates)
        if (!tasks_.contains(id)) throw unknown_entity_error(error_id::unknown_job, "task", id);
      return;
    }
    std::vector<std::int64_t> running(alloc_);
    for (const auto& id : candidates) {
      const auto* t = tasks_.find(id);
      if (t == nullptr) throw unknown_entity_error(error_id::unknown_job, "task", id);
      (void)reclaim_step(self, *t, running, out);
    }
  }
  /// reclaimable() over running_tasks(), without building the list. The walk
  /// stops once no queue it could take from still holds more than its
  /// deserved floor (taking a task only lowers what its queue holds).
  void reclaimable_running(std::string_view preemptor_queue, std::vector<victim>& out) const {
    const auto self = index(preemptor_queue);
    std::size_t over = 0;  // reclaimable queues but self above their deserved floor in `running`
    for (std::size_t q = 0; q < specs_.size(); ++q)
      if (q != self && specs_[q].reclaimable && over_floor(q, alloc_)) ++over;
    if (over == 0) return;
    std::vector<std::int64_t> running(alloc_);
    for (const auto& t : tasks_.order()) {
      if (t.id.empty() || !reclaim_step(self, t, running, out) || over_floor(t.queue, running)) continue;
      if (--over == 0) break;
    }
  }
  /// Volcano's preempt action between the jobs of one queue: the running,
  /// preemptible tasks of `queue` whose job priority is below `priority`,
  /// lowest priority first, then the newest.
  void preemptable_in_queue(std::string_view queue, std::int32_t priority, std::vector<victim>& out) const {
    const auto q = index(queue);
    tasks_.lower_priority(q, priority, [&](const task_entry& t) {
      out.push_back(victim{t.id, volcano_model_name, "preempt_lower_priority", specs_[q].name});
    });
  }
  /// Running tasks in allocation order.
  [[nodiscard]] std::vector<std::string> running_tasks() const { return tasks_.running(); }
  /// exact_share as a double, for display.
  [[nodiscard]] double share(std::size_t q) const { return exact_share(q).to_double(); }

  /// The registry whose names the model's reasons and introspection
  /// (quota/volcano_json.hpp) carry; it must outlive the model and its copies.
  /// Unbound (nullptr, the default): the well-known names only.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }

 private:
  using task_entry = detail::volcano_task_book<volcano_task_meta>::entry;
  struct event {
    std::int64_t num;  // breakpoint lambda = num / w
    std::int64_t w;
    std::size_t q;
    bool start;  // true: queue starts growing; false: reaches its bound
  };

  // Upstream: the queues Volcano sees in a session are those with jobs (here:
  // with a request in some dimension); their weights add up to 0.
  [[nodiscard]] bool demand_weight_is_zero() const noexcept {
    for (std::size_t q = 0; q < specs_.size(); ++q)
      if (specs_[q].weight != 0 && has_demand(q)) return false;
    return true;
  }
  [[nodiscard]] bool has_demand(std::size_t q) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (alloc_[q * dim_count_ + d] > 0 || pending_[q * dim_count_ + d] > 0) return true;
    return false;
  }
  // The guarantee water-filling lifts a queue to (0 for an absent queue).
  [[nodiscard]] std::int64_t fill_guarantee(std::size_t q, std::size_t d) const noexcept {
    return absent_[q] ? 0 : guar_[q * dim_count_ + d];
  }

  // Some reclaimable queue other than `self` holds more than its deserved
  // floor in a dimension (otherwise reclaim finds no victim).
  [[nodiscard]] bool any_over_deserved(std::size_t self) const noexcept {
    for (std::size_t q = 0; q < specs_.size(); ++q)
      if (q != self && specs_[q].reclaimable && over_floor(q, alloc_)) return true;
    return false;
  }
  // Queue q holds more than its deserved floor in some dimension of `held`.
  [[nodiscard]] bool over_floor(std::size_t q, const std::vector<std::int64_t>& held) const noexcept {
    for (std::size_t d = 0; d < dim_count_; ++d)
      if (held[q * dim_count_ + d] > deserved_floor_[q * dim_count_ + d]) return true;
    return false;
  }

  // Reclaim's step over one running task t: a victim while its (reclaimable)
  // queue holds more than its deserved floor in some dimension of `running`.
  // Returns whether t was taken.
  bool reclaim_step(std::size_t self, const task_entry& t, std::vector<std::int64_t>& running,
                    std::vector<victim>& out) const {
    const auto q = t.queue;
    if (q == self || !specs_[q].reclaimable || !t.meta.preemptible) return false;
    if (!over_floor(q, running)) return false;
    for (std::size_t d = 0; d < dim_count_; ++d) running[q * dim_count_ + d] -= t.req[d];
    out.push_back(victim{t.id, volcano_model_name, "reclaim_over_deserved", specs_[q].name});
    return true;
  }

  detail::dense_request to_dense(const resource_vector& v, std::string_view owner) const {
    return detail::dense_request_of(dims_, v, owner);
  }

  // The tracked resources' totals; a negative one is a problem of `diag`.
  void read_total(const resource_vector& total, diagnostics& diag) {
    total_.assign(dim_count_, 0);
    for (std::size_t d = 0; d < dim_count_; ++d) {
      total_[d] = total.get(dims_[d]);
      if (total_[d] < 0) diag.add("total/" + detail::resource_label(reg_, dims_[d]), "negative cluster total");
    }
  }
  // A change made on a copy that is validated and then replaces this model
  // (strong guarantee); deserved is computed again at the next update_deserved.
  template <class F>
  void change(F&& edit) {
    volcano_model copy = *this;
    diagnostics diag;
    edit(copy, diag);
    copy.validate(diag);
    if (!diag.empty()) throw validation_error(diag.items());
    copy.recompute_real_capability();
    copy.basis_.clear();
    *this = std::move(copy);
  }
  void add_queue_internal(volcano_queue_spec q, diagnostics& diag) {
    const std::string base = "queue/" + q.name;
    if (by_name_.count(q.name)) diag.add(base, "duplicate queue name");
    if (q.weight < 0) diag.add(base + "/spec/weight", "negative weight");
    std::vector<std::int64_t> cap(dim_count_, detail::queue_unlimited), g(dim_count_, 0);
    for (std::size_t d = 0; d < dim_count_; ++d) {
      const auto r = dims_[d];
      if (const auto* c = q.capability.find(r)) {
        if (*c < 0) diag.add(base + "/spec/capability/" + std::to_string(r), "negative amount");
        const bool zero_unlimited = (r == resources::cpu || r == resources::memory);
        if (!(zero_unlimited && *c == 0)) cap[d] = *c;
      }
      g[d] = q.guarantee.get(r);
      if (g[d] < 0) diag.add(base + "/spec/guarantee/resource/" + std::to_string(r), "negative amount");
      if (g[d] > cap[d])
        diag.add(base + "/spec/guarantee/resource/" + std::to_string(r),
                 "guarantee " + std::to_string(g[d]) + " exceeds capability " + std::to_string(cap[d]));
    }
    by_name_.emplace(q.name, specs_.size());
    specs_.push_back(std::move(q));
    cap_.insert(cap_.end(), cap.begin(), cap.end());
    guar_.insert(guar_.end(), g.begin(), g.end());
    for (auto* v : {&real_cap_, &alloc_, &inq_, &elastic_, &pending_, &deserved_floor_, &deserved_ceil_})
      v->resize(specs_.size() * dim_count_, 0);
  }

  // Checks the whole tree; sets warnings_ (upstream mode) from scratch.
  void validate(diagnostics& diag) {
    warnings_.clear();
    for (std::size_t d = 0; d < dim_count_; ++d) {
      detail::int128 s = 0;
      for (std::size_t q = 0; q < specs_.size(); ++q) s += guar_[q * dim_count_ + d];
      if (s > total_[d]) {
        // Volcano only clamps the free part at 0 (ExceededPart): each queue
        // keeps its own guarantee as realCapability
        std::string path = "total/" + detail::resource_label(reg_, dims_[d]);
        std::string msg =
            "sum of guarantees exceeds the cluster total (reserved resource "
            "cannot be more than the total)";
        if (opts_.upstream)
          warnings_.push_back({std::move(path), std::move(msg)});
        else
          diag.add(std::move(path), std::move(msg));
      }
    }
    // the proportion plugin never reads spec.parent: upstream, a bad one is only a warning
    const auto parent_problem = [&](std::string path, std::string msg) {
      if (opts_.upstream)
        warnings_.push_back({std::move(path), std::move(msg)});
      else
        diag.add(std::move(path), std::move(msg));
    };
    for (std::size_t q = 0; q < specs_.size(); ++q) {
      const auto& p = specs_[q].parent;
      if (p.empty()) continue;
      if (!by_name_.count(p)) {
        parent_problem("queue/" + specs_[q].name + "/spec/parent", "unknown parent '" + p + "'");
        continue;
      }
      std::size_t cur = q, steps = 0;
      while (!specs_[cur].parent.empty() && by_name_.count(specs_[cur].parent) && steps <= specs_.size()) {
        cur = by_name_.at(specs_[cur].parent);
        ++steps;
      }
      if (steps > specs_.size()) parent_problem("queue/" + specs_[q].name + "/spec/parent", "parent cycle");
    }
  }

  void recompute_real_capability() {
    for (std::size_t d = 0; d < dim_count_; ++d) {
      std::int64_t sum = 0;
      for (std::size_t q = 0; q < specs_.size(); ++q) sum = detail::checked_add(sum, guar_[q * dim_count_ + d]);
      const auto free = std::max<std::int64_t>(0, total_[d] - sum);
      for (std::size_t q = 0; q < specs_.size(); ++q)
        real_cap_[q * dim_count_ + d] =
            std::min(cap_[q * dim_count_ + d], detail::checked_add(free, guar_[q * dim_count_ + d]));
    }
  }

  /// A reason of this model about queue q (and resource r, or no_resource).
  reason queue_reason(std::string_view rule, std::size_t q, resource_id r, std::int64_t requested, std::int64_t used,
                      std::int64_t limit) const {
    return detail::volcano_reason(volcano_model_name, rule, specs_[q].name, reg_, r, requested, used, limit);
  }

  decision within_deserved(std::size_t q, const resource_vector& task, std::string_view rule) const {
    decision out;
    for (const auto& e : task) {
      if (e.value <= 0 || detail::volcano_ignored(e.id)) continue;
      std::size_t d = dim_count_;
      for (std::size_t i = 0; i < dim_count_; ++i)
        if (dims_[i] == e.id) d = i;
      const auto used = d < dim_count_ ? alloc_[q * dim_count_ + d] : 0;
      const auto lim = d < dim_count_ ? deserved_floor_[q * dim_count_ + d] : 0;
      if (detail::checked_add(used, e.value) > lim)
        out.add(queue_reason(rule == "allocatable" ? "over_deserved" : "preemptive_over_deserved", q, e.id, e.value,
                             used, lim));
    }
    return out;
  }

  // compute_deserved's water-filling over every dimension.
  void fill_deserved() {
    const std::size_t n = specs_.size();
    deserved_floor_.assign(n * dim_count_, 0);
    deserved_ceil_.assign(n * dim_count_, 0);
    deserved_num_.assign(n * dim_count_, 0);
    deserved_den_.assign(n * dim_count_, 1);
    // Volcano's loop stops before its first round when the queues with jobs
    // weigh 0 together: every deserved stays 0, guarantees included.
    if (opts_.upstream && demand_weight_is_zero()) return;
    // Volcano's session holds only the queues with jobs: in upstream mode a
    // queue without any takes no part (its guarantee is not set aside)
    absent_.assign(n, 0);
    if (opts_.upstream)
      for (std::size_t q = 0; q < n; ++q) absent_[q] = has_demand(q) ? 0 : 1;
    for (std::size_t d = 0; d < dim_count_; ++d) fill_dimension(d);
  }

  // Water-filling in dimension d: find the level L with
  //   sum_q max(g_q, min(b_q, w_q L)) = total,  b_q = min(realCap_q, request_q)
  // exactly (L rational); if the bounds do not fill the total, every queue gets max(g, b).
  void fill_dimension(std::size_t d) {
    const std::size_t n = specs_.size();
    events_.clear();
    detail::int128 A = 0;  // constant part of f(L)
    detail::int128 upper = 0;
    for (std::size_t q = 0; q < n; ++q) {
      const auto g = fill_guarantee(q, d);
      const auto b = std::min(real_cap_[q * dim_count_ + d], request(q, d));
      const auto w = specs_[q].weight;
      A += g;
      upper += w > 0 ? std::max(g, b) : g;
      if (w > 0 && b > g) {
        events_.push_back(event{g, w, q, true});
        events_.push_back(event{b, w, q, false});
      }
    }
    const detail::int128 T = total_[d];
    if (upper <= T) {
      for (std::size_t q = 0; q < n; ++q) {
        const auto g = fill_guarantee(q, d);
        const auto v = specs_[q].weight > 0 ? std::max(g, std::min(real_cap_[q * dim_count_ + d], request(q, d))) : g;
        deserved_floor_[q * dim_count_ + d] = deserved_ceil_[q * dim_count_ + d] = v;
        deserved_num_[q * dim_count_ + d] = v;  // exact: a whole amount
        deserved_den_[q * dim_count_ + d] = 1;
      }
      return;
    }
    const auto before = [](const event& x, const event& y) {
      const auto l = static_cast<detail::int128>(x.num) * y.w, r = static_cast<detail::int128>(y.num) * x.w;
      if (l != r) return l < r;
      return x.start < y.start;  // ends before starts at the same level
    };
    const auto apply = [](const event& e, detail::int128& a, detail::int128& b) {
      if (e.start) {
        a -= e.num;
        b += e.w;
      } else {
        a += e.num;
        b -= e.w;
      }
    };
    // f at an event's level (A + B * num/w over the events before it) reaches T
    const auto reached = [&](const event& e, detail::int128 a, detail::int128 b) {
      return (T - a) * e.w <= static_cast<detail::int128>(e.num) * b;
    };
    // The first event, in level order, at whose level f reaches T: f grows
    // with the level, so a binary search over positions of the level order
    // finds it, each step placing one event with nth_element and summing the
    // events before it (expected linear time instead of a full sort).
    std::size_t first_at = 0, last_at = events_.size();
    detail::int128 B = 0;  // sum of weights of growing queues (before events_[first_at])
    while (first_at < last_at) {
      const std::size_t mid = first_at + (last_at - first_at) / 2;
      const auto from = events_.begin() + static_cast<std::ptrdiff_t>(first_at);
      std::nth_element(from, events_.begin() + static_cast<std::ptrdiff_t>(mid),
                       events_.begin() + static_cast<std::ptrdiff_t>(last_at), before);
      detail::int128 a = A, b = B;
      for (std::size_t i = first_at; i < mid; ++i) apply(events_[i], a, b);
      if (reached(events_[mid], a, b)) {
        last_at = mid;
      } else {
        apply(events_[mid], a, b);
        A = a;
        B = b;
        first_at = mid + 1;
      }
    }
    // Level as a fraction ln / ld.
    detail::int128 ln = 0, ld = 1;
    bool solved = false;
    if (first_at < events_.size() && B > 0) {
      ln = T - A;
      ld = B;
      solved = true;
    } else if (first_at < events_.size()) {
      // no queue grows below that level (the guarantees alone reach T): the
      // first event after it with a growing queue before it sets the level
      std::sort(events_.begin() + static_cast<std::ptrdiff_t>(first_at), events_.end(), before);
      for (std::size_t i = first_at; i < events_.size(); ++i) {
        const auto& e = events_[i];
        if (B > 0 && reached(e, A, B)) {
          ln = T - A;
          ld = B;
          solved = true;
          break;
        }
        apply(e, A, B);
      }
    }
    if (!solved && B > 0) {
      ln = T - A;
      ld = B;
      solved = true;
    }
    for (std::size_t q = 0; q < n; ++q) {
      const auto g = fill_guarantee(q, d);
      const auto b = std::min(real_cap_[q * dim_count_ + d], request(q, d));
      const auto w = specs_[q].weight;
      std::int64_t lo = std::max(g, std::min(g, b)), hi = lo;
      detail::int128 num = lo, den = 1;  // the exact deserved
      if (w > 0 && b > g && solved) {
        const detail::int128 wn = static_cast<detail::int128>(w) * ln;  // w*L = wn/ld
        if (wn >= static_cast<detail::int128>(b) * ld) {
          lo = hi = b;
          num = b;
        } else if (wn > static_cast<detail::int128>(g) * ld) {
          lo = static_cast<std::int64_t>(wn / ld);
          hi = (wn % ld == 0) ? lo : lo + 1;
          num = wn;
          den = ld;
        }
      } else if (w > 0 && b > g && !solved) {
        lo = hi = g;
        num = g;
      }
      deserved_floor_[q * dim_count_ + d] = lo;
      deserved_ceil_[q * dim_count_ + d] = hi;
      deserved_num_[q * dim_count_ + d] = num;
      deserved_den_[q * dim_count_ + d] = den;
    }
  }

  std::vector<resource_id> dims_;
  volcano_options opts_;
  const resource_registry* reg_ = nullptr;
  std::size_t dim_count_ = 0;
  std::vector<diagnostic> warnings_;
  std::vector<std::int64_t> total_;
  std::vector<volcano_queue_spec> specs_;
  std::unordered_map<std::string, std::size_t, detail::string_hash, std::equal_to<>> by_name_;
  std::vector<std::int64_t> cap_, guar_, real_cap_, alloc_, inq_, elastic_, pending_, deserved_floor_, deserved_ceil_;
  std::vector<detail::int128> deserved_num_, deserved_den_;  // exact deserved = num / den
  detail::volcano_task_book<volcano_task_meta> tasks_;
  std::vector<event> events_;
  std::vector<std::uint8_t> absent_;   // upstream: queues without jobs (compute_deserved)
  std::vector<detail::int128> basis_;  // each queue's request at the last compute_deserved
};

/// quota::policy adapter: job.queue = queue name, job.request = the task /
/// podgroup request; check = allocatable; victims = reclaimable.
///
/// It owns its volcano_model (a copy of an adapter is an independent model) and
/// offers two optional capabilities (quota/capabilities.hpp):
/// * order: a queue per Volcano Queue; inside one, higher job priority then
///   earlier creation; heads by Volcano proportion's queue order (queue
///   priority, share, creation);
/// * demand: a queue's request is its allocation plus its pending jobs, so
///   deserved follows what waits.
/// Deserved is computed again before it is next read (check, victims, queue
/// order, tree()) after a change of some queue's request, not at each change:
/// several releases between two checks cost one water-filling, admitting a
/// pending job (its request moves from pending to allocated) costs none, and
/// neither does a job admitted and released again between two reads
/// (volcano_model::update_deserved).
class volcano_policy : public detail::job_queue_order {
 public:
  explicit volcano_policy(volcano_model tree) : tree_(std::move(tree)) { tree_.compute_deserved(); }
  [[nodiscard]] std::string_view policy_name() const noexcept { return volcano_model_name; }
  [[nodiscard]] const volcano_model& tree() const {
    fresh();
    return tree_;
  }
  /// The tree, to change it in place (call tree().compute_deserved() after).
  [[nodiscard]] volcano_model& tree() {
    fresh();
    deserved_stale_.set();  // the caller may change what deserved depends on
    return tree_;
  }
  /// The elastic resources of a queue (volcano_model::set_elastic): they take
  /// part in enqueue only, so deserved stays as it is.
  void set_elastic(std::string_view queue, const resource_vector& elastic) { tree_.set_elastic(queue, elastic); }
  /// quota::capacity_aware: the cluster's new total (volcano_model::set_total).
  void set_cluster_capacity(const resource_vector& total) {
    tree_.set_total(total);
    deserved_stale_.set();
  }

  [[nodiscard]] decision check(const job& j) const {
    fresh();
    return tree_.allocatable(tree_.index(j.queue), j.request);
  }
  void commit(const job& j) {
    const auto p = pending_.find(j.id);
    tree_.allocate(j.id, j.queue, j.request, volcano_task_meta{j.priority, j.preemptible});  // strong on its own
    if (p == pending_.end()) {
      deserved_stale_.set();  // a request the policy did not see waiting
      return;
    }
    // the job's demand moves from pending to allocated: the request, and so
    // deserved, is unchanged
    try {
      set_pending_sum(p->second.queue, p->second.request, -1, false);
    } catch (...) {
      tree_.deallocate(j.id);
      throw;
    }
    pending_pool_.erase(pending_, p);
  }
  void release(std::string_view id) {
    tree_.deallocate(id);
    deserved_stale_.set();
  }
  void victims(const job& j, std::vector<victim>& out) const {
    fresh();
    tree_.reclaimable_running(j.queue, out);
  }
  /// Node-level rule (quota/capabilities.hpp): Volcano's preempt action, the
  /// lower-priority preemptible tasks of the job's own queue.
  void node_candidates(const job& j, std::vector<victim>& out) const {
    fresh();
    if (tree_.find(j.queue)) tree_.preemptable_in_queue(j.queue, j.priority, out);
  }

  // ---- charges (quota/capabilities.hpp) ----
  /// A charge of c.queue: allocated as a non-preemptible task (counted in the
  /// queue's share and deserved, never a reclaim or preempt victim).
  void charge_added(const job& c) {
    tree_.allocate(c.id, c.queue, c.request, volcano_task_meta{c.priority, false});
    deserved_stale_.set();
  }
  void charge_removed(std::string_view id) { release(id); }

  // ---- order: pending_queue and compare_pending from detail::job_queue_order ----
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    fresh();
    const auto qa = tree_.find(a.queue), qb = tree_.find(b.queue);
    if (!qa || !qb || *qa == *qb) return default_pending_order(a, b);
    const int c = tree_.compare_queues(*qa, *qb);
    return c < 0 ? std::weak_ordering::less : std::weak_ordering::greater;
  }

  // ---- demand ----
  void pending_added(const job& j) {
    if (pending_.count(j.id) || tree_.has_task(j.id) || !tree_.find(j.queue)) return;
    set_pending_sum(j.queue, j.request, +1, true);
    pending_pool_.emplace(pending_, j.id, waiting{j.queue, j.request});
  }
  void pending_withdrawn(std::string_view id) {
    const auto p = pending_.find(id);
    if (p == pending_.end()) return;
    set_pending_sum(p->second.queue, p->second.request, -1, true);
    pending_pool_.erase(pending_, p);
  }

 private:
  struct waiting {
    std::string queue;
    resource_vector request;
  };
  // pending demand of `queue` += sign * request (deserved again before the next read when the request changes); strong
  void set_pending_sum(const std::string& queue, const resource_vector& request, int sign, bool request_changes) {
    auto& sum = sums_[queue];
    resource_vector next = sum;
    if (sign > 0)
      next.add_in_place(request);
    else
      next.sub_in_place(request);
    tree_.set_pending(queue, next);
    sum = std::move(next);
    if (request_changes) deserved_stale_.set();
  }
  void fresh() const {
    deserved_stale_.refresh([this] { tree_.update_deserved(); });
  }
  mutable volcano_model tree_;
  detail::stale_mark deserved_stale_;
  using waiting_map = std::unordered_map<std::string, waiting, detail::string_hash, std::equal_to<>>;
  waiting_map pending_;
  detail::node_pool<waiting_map> pending_pool_;
  std::map<std::string, resource_vector, std::less<>> sums_;
};
static_assert(policy<volcano_policy>);
static_assert(order_aware<volcano_policy>);
static_assert(demand_aware<volcano_policy>);
static_assert(node_preemption_aware<volcano_policy>);
static_assert(charge_receiver<volcano_policy>);

}  // namespace quota
