// SPDX-License-Identifier: Apache-2.0
// quota/engine.hpp — the engine: composes any subset of quota models behind one
// interface, with all-or-nothing admission (basic_engine at compile time, engine at
// run time).
// Docs: docs/architecture.md
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/error.hpp>
#include <quota/explain.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>

namespace quota {

/// A type-erased policy: holds any type that satisfies quota::policy.
class any_policy {
 public:
  template <class P>
  requires(policy<std::remove_cvref_t<P>> &&
           !std::is_same_v<std::remove_cvref_t<P>, any_policy>) explicit any_policy(P&& p)
      : self_(std::make_unique<model<std::remove_cvref_t<P>>>(std::forward<P>(p))) {}

  any_policy(const any_policy& o) : self_(o.self_ ? o.self_->clone() : nullptr) {}
  any_policy& operator=(const any_policy& o) {
    if (this != &o) self_ = o.self_ ? o.self_->clone() : nullptr;
    return *this;
  }
  any_policy(any_policy&&) noexcept = default;
  any_policy& operator=(any_policy&&) noexcept = default;
  ~any_policy() = default;

  [[nodiscard]] std::string_view policy_name() const { return self_->name(); }
  [[nodiscard]] decision check(const job& j) const { return self_->check(j); }
  void commit(const job& j) { self_->commit(j); }
  void release(std::string_view id) { self_->release(id); }
  void victims(const job& j, std::vector<victim>& out) const { self_->victims(j, out); }
  /// The held model's earliest_admission_ms(j) when it has one, else nullopt.
  [[nodiscard]] std::optional<std::int64_t> earliest_admission_ms(const job& j) const { return self_->earliest(j); }

  /// Whether the held model orders pending work (quota::order_aware); when it
  /// does not, the members below give the default order.
  [[nodiscard]] bool offers_order() const { return self_->offers_order(); }
  [[nodiscard]] std::string_view pending_queue(const job& j) const { return self_->pending_queue(j); }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    return self_->compare_pending(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    return self_->compare_heads(a, b);
  }
  [[nodiscard]] bool head_blocks_queue(const job& head) const { return self_->head_blocks(head); }
  [[nodiscard]] std::size_t select_head(std::span<const job* const> heads) const { return self_->select_head(heads); }
  /// Whether the held model follows demand (quota::demand_aware); when it
  /// does not, the members below change nothing.
  [[nodiscard]] bool follows_demand() const { return self_->follows_demand(); }
  void pending_added(const job& j) { self_->pending_added(j); }
  void pending_withdrawn(std::string_view id) { self_->pending_withdrawn(id); }
  /// Whether the held model divides the cluster's total (quota::capacity_aware);
  /// when it does not, set_cluster_capacity changes nothing.
  [[nodiscard]] bool divides_capacity() const { return self_->divides_capacity(); }
  void set_cluster_capacity(const resource_vector& total) { self_->set_cluster_capacity(total); }
  /// Whether the held model knows scheduling cycles (quota::cycle_aware);
  /// when it does not, the members below change nothing.
  [[nodiscard]] bool keeps_cycles() const { return self_->keeps_cycles(); }
  void begin_cycle() { self_->begin_cycle(); }
  void head_denied(const job& j) { self_->head_denied(j); }
  void end_cycle() { self_->end_cycle(); }
  /// Whether the held model has a node-level preemption rule
  /// (quota::node_preemption_aware); when it does not, node_candidates adds nothing.
  [[nodiscard]] bool has_node_rule() const { return self_->has_node_rule(); }
  void node_candidates(const job& j, std::vector<victim>& out) const { self_->node_candidates(j, out); }
  /// Whether the held model charges queues (quota::charge_aware) / accounts
  /// charges (quota::charge_receiver); when not, those members do nothing.
  [[nodiscard]] bool makes_charges() const { return self_->makes_charges(); }
  void charges_after_commit(const job& j, std::vector<queue_charge>& out) const { self_->after_commit(j, out); }
  void charges_after_release(std::string_view id, std::vector<queue_charge>& out) const {
    self_->after_release(id, out);
  }
  void current_charges(std::vector<queue_charge>& out) const { self_->current(out); }
  /// Whether the held model knows shared allocations (quota::allocation_sharing);
  /// when it does not, the members below add nothing.
  [[nodiscard]] bool shares_allocations() const { return self_->shares_allocations(); }
  void shared_allocations(const job& j, std::vector<shared_allocation>& out) const { self_->shared(j, out); }
  void held_allocations(std::vector<shared_allocation>& out) const { self_->held(out); }
  [[nodiscard]] bool receives_charges() const { return self_->receives_charges(); }
  void charge_added(const job& c) { self_->charge_added(c); }
  void charge_removed(std::string_view id) { self_->charge_removed(id); }
  // partial admission
  [[nodiscard]] bool admits_partially() const { return self_->admits_partially(); }
  [[nodiscard]] bool partial_counts(const job& j, std::vector<std::int32_t>& counts) const {
    return self_->partial(j, counts);
  }
  /// Deductions reach the held model when it shrinks its capacity by them.
  void capacity_deducted(const resource_vector& v) { self_->capacity_deducted(v); }

  /// The held model, if it is a P.
  template <class P>
  [[nodiscard]] P* target() noexcept {
    auto* m = dynamic_cast<model<P>*>(self_.get());
    return m ? &m->value : nullptr;
  }
  template <class P>
  [[nodiscard]] const P* target() const noexcept {
    const auto* m = dynamic_cast<const model<P>*>(self_.get());
    return m ? &m->value : nullptr;
  }

 private:
  struct concept_t {
    virtual ~concept_t() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual decision check(const job&) const = 0;
    virtual void commit(const job&) = 0;
    virtual void release(std::string_view) = 0;
    virtual void victims(const job&, std::vector<victim>&) const = 0;
    [[nodiscard]] virtual std::optional<std::int64_t> earliest(const job&) const = 0;
    [[nodiscard]] virtual bool offers_order() const = 0;
    [[nodiscard]] virtual std::string_view pending_queue(const job&) const = 0;
    [[nodiscard]] virtual std::weak_ordering compare_pending(const job&, const job&) const = 0;
    [[nodiscard]] virtual std::weak_ordering compare_heads(const job&, const job&) const = 0;
    [[nodiscard]] virtual bool head_blocks(const job&) const = 0;
    [[nodiscard]] virtual std::size_t select_head(std::span<const job* const>) const = 0;
    [[nodiscard]] virtual bool follows_demand() const = 0;
    virtual void pending_added(const job&) = 0;
    virtual void pending_withdrawn(std::string_view) = 0;
    [[nodiscard]] virtual bool divides_capacity() const = 0;
    virtual void set_cluster_capacity(const resource_vector&) = 0;
    [[nodiscard]] virtual bool keeps_cycles() const = 0;
    virtual void begin_cycle() = 0;
    virtual void head_denied(const job&) = 0;
    virtual void end_cycle() = 0;
    [[nodiscard]] virtual bool has_node_rule() const = 0;
    virtual void node_candidates(const job&, std::vector<victim>&) const = 0;
    [[nodiscard]] virtual bool makes_charges() const = 0;
    virtual void after_commit(const job&, std::vector<queue_charge>&) const = 0;
    virtual void after_release(std::string_view, std::vector<queue_charge>&) const = 0;
    virtual void current(std::vector<queue_charge>&) const = 0;
    [[nodiscard]] virtual bool shares_allocations() const = 0;
    virtual void shared(const job&, std::vector<shared_allocation>&) const = 0;
    virtual void held(std::vector<shared_allocation>&) const = 0;
    [[nodiscard]] virtual bool receives_charges() const = 0;
    virtual void charge_added(const job&) = 0;
    virtual void charge_removed(std::string_view) = 0;
    virtual void capacity_deducted(const resource_vector&) = 0;
    [[nodiscard]] virtual bool admits_partially() const = 0;
    [[nodiscard]] virtual bool partial(const job&, std::vector<std::int32_t>&) const = 0;
    [[nodiscard]] virtual std::unique_ptr<concept_t> clone() const = 0;
  };
  template <class P>
  struct model final : concept_t {
    template <class U>
    explicit model(U&& u) : value(std::forward<U>(u)) {}
    [[nodiscard]] std::string_view name() const override { return value.policy_name(); }
    [[nodiscard]] decision check(const job& j) const override { return value.check(j); }
    void commit(const job& j) override { value.commit(j); }
    void release(std::string_view id) override { value.release(id); }
    void victims(const job& j, std::vector<victim>& out) const override { value.victims(j, out); }
    [[nodiscard]] std::optional<std::int64_t> earliest(const job& j) const override {
      return earliest_admission_of(value, j);
    }
    [[nodiscard]] bool offers_order() const override { return detail::offers_order(value); }
    [[nodiscard]] std::string_view pending_queue(const job& j) const override {
      if constexpr (order_aware<P>)
        return value.pending_queue(j);
      else
        return {};
    }
    [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const override {
      if constexpr (order_aware<P>)
        return value.compare_pending(a, b);
      else
        return default_pending_order(a, b);
    }
    [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const override {
      if constexpr (order_aware<P>)
        return value.compare_heads(a, b);
      else
        return default_pending_order(a, b);
    }
    [[nodiscard]] bool head_blocks(const job& j) const override { return detail::head_blocks_queue_of(value, j); }
    [[nodiscard]] std::size_t select_head(std::span<const job* const> heads) const override {
      return detail::select_head_of(value, heads);
    }
    [[nodiscard]] bool follows_demand() const override { return detail::follows_demand(value); }
    void pending_added(const job& j) override {
      if constexpr (demand_aware<P>) value.pending_added(j);
    }
    void pending_withdrawn(std::string_view id) override {
      if constexpr (demand_aware<P>) value.pending_withdrawn(id);
    }
    [[nodiscard]] bool divides_capacity() const override { return detail::divides_capacity(value); }
    void set_cluster_capacity(const resource_vector& total) override {
      if constexpr (capacity_aware<P>) value.set_cluster_capacity(total);
    }
    [[nodiscard]] bool keeps_cycles() const override { return detail::keeps_cycles(value); }
    void begin_cycle() override {
      if constexpr (cycle_aware<P>) value.begin_cycle();
    }
    void head_denied(const job& j) override {
      if constexpr (cycle_aware<P>) value.head_denied(j);
    }
    void end_cycle() override {
      if constexpr (cycle_aware<P>) value.end_cycle();
    }
    [[nodiscard]] bool has_node_rule() const override { return detail::has_node_rule(value); }
    void node_candidates(const job& j, std::vector<victim>& out) const override {
      if constexpr (node_preemption_aware<P>) value.node_candidates(j, out);
    }
    [[nodiscard]] bool makes_charges() const override { return detail::makes_charges(value); }
    void after_commit(const job& j, std::vector<queue_charge>& out) const override {
      if constexpr (charge_aware<P>) value.charges_after_commit(j, out);
    }
    void after_release(std::string_view id, std::vector<queue_charge>& out) const override {
      if constexpr (charge_aware<P>) value.charges_after_release(id, out);
    }
    void current(std::vector<queue_charge>& out) const override {
      if constexpr (charge_aware<P>) value.current_charges(out);
    }
    [[nodiscard]] bool shares_allocations() const override { return detail::shares_allocations(value); }
    void shared(const job& j, std::vector<shared_allocation>& out) const override {
      if constexpr (allocation_sharing<P>) value.shared_allocations(j, out);
    }
    void held(std::vector<shared_allocation>& out) const override {
      if constexpr (allocation_sharing<P>) value.held_allocations(out);
    }
    [[nodiscard]] bool receives_charges() const override { return detail::receives_charges(value); }
    void charge_added(const job& c) override {
      if constexpr (charge_receiver<P>) value.charge_added(c);
    }
    void charge_removed(std::string_view id) override {
      if constexpr (charge_receiver<P>) value.charge_removed(id);
    }
    void capacity_deducted(const resource_vector& v) override {
      if constexpr (detail::takes_deductions<P>) value.capacity_deducted(v);
    }
    [[nodiscard]] bool admits_partially() const override { return detail::admits_partially(value); }
    [[nodiscard]] bool partial(const job& j, std::vector<std::int32_t>& counts) const override {
      if constexpr (partial_admission_aware<P>)
        return value.partial_counts(j, counts);
      else
        return false;
    }
    [[nodiscard]] std::unique_ptr<concept_t> clone() const override {
      if constexpr (std::is_copy_constructible_v<P>)
        return std::make_unique<model>(value);
      else
        throw state_error(error_id::state_conflict,
                          "policy '" + std::string(value.policy_name()) + "' cannot be copied");
    }
    P value;
  };
  std::unique_ptr<concept_t> self_;
};

static_assert(policy<any_policy>);
static_assert(earliest_admission_aware<any_policy>);
static_assert(order_aware<any_policy>);
static_assert(demand_aware<any_policy>);
static_assert(cycle_aware<any_policy>);
static_assert(capacity_aware<any_policy>);
static_assert(node_preemption_aware<any_policy>);
static_assert(charge_aware<any_policy>);
static_assert(charge_receiver<any_policy>);
static_assert(allocation_sharing<any_policy>);
static_assert(partial_admission_aware<any_policy>);

namespace detail {
/// Records admitted job ids so release() can refuse unknown ones before any
/// model is touched.
class admitted_set {
 public:
  [[nodiscard]] bool contains(std::string_view id) const { return ids_.find(id) != ids_.end(); }
  void insert(const std::string& id) { (void)spare_.insert(ids_, id); }
  void erase(std::string_view id) {
    if (auto it = ids_.find(id); it != ids_.end()) spare_.erase(ids_, it);
  }
  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  void reserve(std::size_t n) { ids_.reserve(n); }

 private:
  using set = std::unordered_set<std::string, string_hash, std::equal_to<>>;
  set ids_;
  node_pool<set> spare_;  // an admission after a release allocates no node
};

[[noreturn]] inline void throw_duplicate_job(std::string_view id) {
  throw state_error(error_id::state_duplicate, "job '" + std::string(id) + "' is already admitted");
}
[[noreturn]] inline void throw_unknown_job(std::string_view id) {
  throw unknown_entity_error(error_id::unknown_job, "job", id);
}
}  // namespace detail

namespace detail {
/// The protocol both engines share: all-or-nothing admission over the models,
/// release from every model, victims from every model, and the what-if.
/// `Derived` supplies for_each_model(f) (const and non-const), which calls
/// f(model) for each model in order.
template <class Derived>
class engine_base {
 public:
  [[nodiscard]] static constexpr std::string_view policy_name() noexcept { return "engine"; }

  /// Asks every model; the decision holds the reasons of every model that denies.
  /// When a model charges queues for j (quota::charge_aware), the models that
  /// account charges see j's request plus what its own queue would be
  /// charged, and the charge of every other queue as a job of that queue.
  ///
  /// A job that may run partially (quota::may_run_partially) and that a
  /// model would admit only with fewer pods (quota::partial_admission_aware)
  /// is checked at those counts: check(j, counts) says which.
  [[nodiscard]] decision check(const job& j) const {
    if (!may_run_partially(j)) return check_whole(j);
    std::vector<std::int32_t> counts;
    return check(j, counts);
  }
  /// check(j), and the pod counts it allows j with: empty when j is checked
  /// whole; else one per pod set (one for a job without pod sets), smaller
  /// than asked, each the least any partially admitting model offers.
  [[nodiscard]] decision check(const job& j, std::vector<std::int32_t>& counts) const {
    return at_offered_counts(j, counts, [&](const job& x) { return check_whole(x); });
  }

 private:
  [[nodiscard]] decision check_whole(const job& j) const {
    if (!charging_) {
      decision d;
      self().for_each_model([&](const auto& m) { d.merge(m.check(j)); });
      return d;
    }
    std::vector<queue_charge> ch;
    collect_commit_charges(j, ch);
    return check_charged(j, ch);
  }

  // The counts the partially admitting models offer for j (the least of
  // each), or false when j may not run partially or no model offers fewer.
  [[nodiscard]] bool partial_offer(const job& j, std::vector<std::int32_t>& counts) const {
    counts.clear();
    if (!may_run_partially(j)) return false;
    std::vector<std::int32_t> c;
    self().for_each_model([&](const auto& m) {
      if (!detail::admits_partially(m)) return;
      if constexpr (partial_admission_aware<std::remove_cvref_t<decltype(m)>>) {
        c.clear();
        if (!m.partial_counts(j, c)) return;
        if (counts.empty())
          counts = c;
        else
          for (std::size_t i = 0; i < counts.size() && i < c.size(); ++i) counts[i] = std::min(counts[i], c[i]);
      }
    });
    return !counts.empty();
  }
  // `whole` (check or admit of a job at the counts it asks) of j at the
  // counts a partially admitting model offers, when it allows them; else of j.
  template <class Whole>
  decision at_offered_counts(const job& j, std::vector<std::int32_t>& counts, Whole&& whole) const {
    if (partial_offer(j, counts)) {
      job r;
      reduced_job(j, counts, r);
      decision d = whole(r);
      if (d.allowed()) return d;
      counts.clear();
    }
    return whole(j);
  }
  // admit() of a job at the counts it asks (admit() refused a duplicate id).
  decision admit_whole(const job& j) {
    // what admitting j would charge, asked once for the check and the commit
    std::vector<queue_charge> ch;
    if (charging_) collect_commit_charges(j, ch);
    decision d = charging_ ? check_charged(j, ch) : check_whole(j);
    if (d.denied()) return d;
    try {
      commit_everywhere(j, ch);
    } catch (const commit_denied_error& e) {
      return e.verdict();  // the job stopped fitting between check and commit: a denial
    }
    return d;
  }

 public:
  /// Admits the job in every model, or in none. A denial is returned, not thrown.
  /// If a model's commit throws, the models already committed release the job
  /// again and the error propagates; the engine is as before.
  ///
  /// A job that check(j, counts) allows at smaller counts is admitted at
  /// those counts (the models hold quota::reduced_job(j, counts)); admit(j,
  /// counts) tells the host which, so it runs exactly that many pods.
  decision admit(const job& j) {
    std::vector<std::int32_t> counts;
    return admit(j, counts);
  }
  decision admit(const job& j, std::vector<std::int32_t>& counts) {
    if (admitted_.contains(j.id)) throw_duplicate_job(j.id);
    return at_offered_counts(j, counts, [&](const job& x) { return admit_whole(x); });
  }

  /// Commits a job that already runs (a host restoring its state: pods
  /// bound before the engine started) in every model without asking them
  /// first: over-quota work is accounted as it is. All or nothing: a model
  /// whose commit throws (a duplicate id, an unknown queue, overflow, or a
  /// model that cannot hold the job at all) undoes the models already
  /// committed and the error propagates, a commit_denied_error included.
  void restore(const job& j) {
    if (admitted_.contains(j.id)) throw_duplicate_job(j.id);
    std::vector<queue_charge> ch;
    if (charging_) collect_commit_charges(j, ch);
    commit_everywhere(j, ch);
  }

  /// Same as admit() for a job the host already checked: kept for symmetry
  /// with the policy concept (the engine is itself a policy).
  void commit(const job& j) {
    const decision d = admit(j);
    if (d.denied())
      throw state_error(error_id::state_not_admitted,
                        "job '" + j.id + "' was committed but a model denies it: " + to_string(d));
  }

  /// Releases the job from every model. Unknown id: unknown_entity_error, nothing changes.
  void release(std::string_view id) {
    if (!admitted_.contains(id)) throw_unknown_job(id);
    std::vector<queue_charge> ch;
    if (charging_)
      self().for_each_model([&](const auto& m) {
        if (detail::makes_charges(m)) charges_after_release_of(m, id, ch);
      });
    self().for_each_model([&](auto& m) { m.release(id); });
    admitted_.erase(id);
    if (!ch.empty()) {
      job who;
      who.id = std::string(id);
      apply_charges(who, ch);  // smaller charges: the queues are known, nothing new is allocated
    }
  }

  // ---- charges (quota/capabilities.hpp) -------------------------------------
  /// Passes every charge the charge models hold now to the models that
  /// account charges (once, before the first admission: charges restored
  /// with a model's initial state, such as claims bound by running pods).
  void sync_charges() {
    refresh_charging();
    if (!charging_) return;
    std::vector<queue_charge> ch;
    collect_current_charges(ch);
    job who;
    who.id = "initial state";
    apply_charges(who, ch);
  }
  /// Gives model `i`, which the host has just replaced (a reload rebuilt it
  /// from a new configuration and committed the running jobs into it), the
  /// charges the charge models hold now, as sync_charges() gives them at the
  /// start; the other models are not touched. Nothing happens when model i
  /// accounts no charges. Throws unknown_entity_error when there is no model
  /// i; an error of the model propagates (the host's replacement failed).
  void charges_into(std::size_t i) {
    if (i >= self().model_count()) throw unknown_entity_error(error_id::unknown_entity, "model", std::to_string(i));
    refresh_charging();
    if (!charging_) return;
    std::vector<queue_charge> ch;
    collect_current_charges(ch);
    job who;
    who.id = "current charges";
    std::size_t k = 0;
    self().for_each_model([&](auto& m) {
      if (k++ != i || !detail::receives_charges(m)) return;
      if constexpr (charge_receiver<std::remove_cvref_t<decltype(m)>>) {
        for (const auto& c : ch) {
          if (c.queue.empty()) {
            if constexpr (detail::takes_deductions<std::remove_cvref_t<decltype(m)>>) m.capacity_deducted(c.after);
          } else if (!c.after.empty()) {
            m.charge_added(charge_job(who, c.queue, c.after));
          }
        }
      }
    });
  }
  /// What the charge models take from the cluster, charged to no queue
  /// (orphan claims' devices): the host removes it from its capacity.
  [[nodiscard]] resource_vector deducted_charge() const {
    std::vector<queue_charge> ch;
    collect_current_charges(ch);
    resource_vector out;
    for (const auto& c : ch)
      if (c.queue.empty()) out.add_in_place(c.after);
    return out;
  }
  // ---- shared allocations (quota/capabilities.hpp) -------------------------
  /// Whether a composed model knows shared allocations.
  [[nodiscard]] bool shares_allocations() const {
    bool any = false;
    self().for_each_model([&](const auto& m) { any = any || detail::shares_allocations(m); });
    return any;
  }
  /// What j shares with other jobs on a node, from every model that knows.
  void shared_allocations(const job& j, std::vector<shared_allocation>& out) const {
    self().for_each_model([&](const auto& m) {
      if constexpr (allocation_sharing<std::remove_cvref_t<decltype(m)>>) m.shared_allocations(j, out);
    });
  }
  /// What is allocated by holders the host does not run, from every model that knows.
  void held_allocations(std::vector<shared_allocation>& out) const {
    self().for_each_model([&](const auto& m) {
      if constexpr (allocation_sharing<std::remove_cvref_t<decltype(m)>>) m.held_allocations(out);
    });
  }
  /// The id under which a queue's charge is allocated in the models that account charges.
  [[nodiscard]] static std::string charge_id(std::string_view queue) { return "charge:" + std::string(queue); }

  /// Victims from every model; the models that account charges are asked
  /// for j with what admitting it would charge its own queue.
  void victims(const job& j, std::vector<victim>& out) const {
    const job* folded = &j;
    job with_charge;
    std::vector<job> others;
    if (charging_ && charged_view(j, with_charge, others)) folded = &with_charge;
    self().for_each_model([&](const auto& m) { m.victims(detail::receives_charges(m) ? *folded : j, out); });
  }

  /// What-if: every model's decision with all its reasons, the victims each
  /// denying model would need, and when each would allow the job (when it can
  /// tell). Changes nothing. See quota/explain.hpp.
  ///
  /// A job that check(j, counts) allows at smaller counts is explained at
  /// those counts, which `partial_counts` holds, so that explain agrees with
  /// check and admit.
  [[nodiscard]] explanation explain(const job& j) const {
    if (!admitted_.contains(j.id) && may_run_partially(j)) {
      std::vector<std::int32_t> counts;
      if (check(j, counts).allowed() && !counts.empty()) {
        job r;
        reduced_job(j, counts, r);
        explanation x = explain_whole(r);
        x.partial_counts = std::move(counts);
        return x;
      }
    }
    return explain_whole(j);
  }

 private:
  [[nodiscard]] explanation explain_whole(const job& j) const {
    explanation x;
    x.job_id = j.id;
    x.already_admitted = admitted_.contains(j.id);
    // what admitting j would charge: the models that account charges are asked as check() asks them
    job folded;
    std::vector<job> others;
    const bool charged = charging_ && !x.already_admitted && charged_view(j, folded, others);
    self().for_each_model([&](const auto& m) {
      x.models.emplace_back();
      auto& out = x.models.back();
      if (!charged || !detail::receives_charges(m)) {
        explain_as_submitted(m, j, x.already_admitted, out);
        return;
      }
      explain_as_submitted(m, folded, x.already_admitted, out);
      for (const auto& o : others) out.verdict.merge(m.check(o));
    });
    return x;
  }

 public:
  // ---- order (quota/capabilities.hpp) ---------------------------------------
  /// Makes model `i` the one that orders pending work. Throws
  /// unknown_entity_error when there is no model i, validation_error when
  /// model i does not order.
  void set_order_model(std::size_t i) {
    if (i >= self().model_count()) throw unknown_entity_error(error_id::unknown_entity, "model", std::to_string(i));
    std::size_t k = 0;
    bool offers = false;
    self().for_each_model([&](const auto& m) {
      if (k++ == i) offers = detail::offers_order(m);
    });
    if (!offers) throw validation_error("order", "model " + std::to_string(i) + " does not order pending work");
    order_model_ = i;
    order_chosen_ = true;
  }
  /// The model that orders pending work: the one set, else the first that
  /// offers an order; nullopt: none does (default_pending_order applies).
  [[nodiscard]] std::optional<std::size_t> order_model() const {
    if (order_chosen_) return order_model_;
    std::optional<std::size_t> found;
    std::size_t k = 0;
    self().for_each_model([&](const auto& m) {
      if (!found && detail::offers_order(m)) found = k;
      ++k;
    });
    return found;
  }
  /// The engine orders when one of its models does (engines nest).
  [[nodiscard]] bool offers_order() const { return order_model().has_value(); }
  /// The ordering model's answers (quota::order_aware), or the default order.
  [[nodiscard]] std::string_view pending_queue(const job& j) const {
    std::string_view out;
    with_order_model([&](const auto& m) {
      if constexpr (order_aware<std::remove_cvref_t<decltype(m)>>) out = m.pending_queue(j);
    });
    return out;
  }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    std::weak_ordering out = default_pending_order(a, b);
    with_order_model([&](const auto& m) {
      if constexpr (order_aware<std::remove_cvref_t<decltype(m)>>) out = m.compare_pending(a, b);
    });
    return out;
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const {
    std::weak_ordering out = default_pending_order(a, b);
    with_order_model([&](const auto& m) {
      if constexpr (order_aware<std::remove_cvref_t<decltype(m)>>) out = m.compare_heads(a, b);
    });
    return out;
  }
  /// The head to offer next among `heads` (non-empty), by the ordering model
  /// (quota/capabilities.hpp: its select_head, or compare_heads).
  [[nodiscard]] std::size_t select_head(std::span<const job* const> heads) const {
    std::size_t out = heads.size();
    with_order_model([&](const auto& m) { out = detail::select_head_of(m, heads); });
    if (out != heads.size()) return out;
    out = 0;  // no ordering model: the default order
    for (std::size_t i = 1; i < heads.size(); ++i)
      if (std::is_lt(default_pending_order(*heads[i], *heads[out]))) out = i;
    return out;
  }
  /// Whether the ordering model holds back the rest of a denied head's queue.
  [[nodiscard]] bool head_blocks_queue(const job& head) const {
    bool out = false;
    with_order_model([&](const auto& m) { out = detail::head_blocks_queue_of(m, head); });
    return out;
  }

  // ---- demand (quota/capabilities.hpp) --------------------------------------
  /// The engine follows demand when one of its models does.
  [[nodiscard]] bool follows_demand() const {
    bool any = false;
    self().for_each_model([&](const auto& m) { any = any || detail::follows_demand(m); });
    return any;
  }
  /// The job waits from now on: every model that follows demand is told
  /// (a model that accounts charges, with what admitting it would charge its queue).
  void pending_added(const job& j) {
    const job* folded = &j;
    job with_charge;
    std::vector<job> others;
    if (charging_ && charged_view(j, with_charge, others)) folded = &with_charge;
    self().for_each_model([&](auto& m) {
      if constexpr (demand_aware<std::remove_cvref_t<decltype(m)>>)
        m.pending_added(detail::receives_charges(m) ? *folded : j);
    });
  }
  /// The job no longer waits (deleted while pending).
  void pending_withdrawn(std::string_view id) {
    self().for_each_model([&](auto& m) {
      if constexpr (demand_aware<std::remove_cvref_t<decltype(m)>>) m.pending_withdrawn(id);
    });
  }

  // ---- the cluster's total (quota/capabilities.hpp) -------------------------
  /// The engine divides the cluster's total when one of its models does.
  [[nodiscard]] bool divides_capacity() const {
    bool any = false;
    self().for_each_model([&](const auto& m) { any = any || detail::divides_capacity(m); });
    return any;
  }
  /// Nodes came or went: every model that divides the cluster's total gets
  /// `total`, in order. All or nothing: when a model refuses it (its error
  /// propagates), the models told before it get back the total this engine
  /// gave last. A host therefore gives the engine the starting total once
  /// (as quota-sim does); before that, a refused total is undone in no model.
  void set_cluster_capacity(const resource_vector& total) {
    std::size_t done = 0;
    try {
      self().for_each_model([&](auto& m) {
        if constexpr (capacity_aware<std::remove_cvref_t<decltype(m)>>)
          if (detail::divides_capacity(m)) m.set_cluster_capacity(total);
        ++done;
      });
    } catch (...) {
      if (capacity_) {
        std::size_t k = 0;
        self().for_each_model([&](auto& m) {
          if constexpr (capacity_aware<std::remove_cvref_t<decltype(m)>>)
            if (k < done && detail::divides_capacity(m)) m.set_cluster_capacity(*capacity_);
          ++k;
        });
      }
      throw;
    }
    capacity_ = total;
  }

  // ---- scheduling cycles (quota/capabilities.hpp) ---------------------------
  /// The engine knows cycles when one of its models does.
  [[nodiscard]] bool keeps_cycles() const {
    bool any = false;
    self().for_each_model([&](const auto& m) { any = any || detail::keeps_cycles(m); });
    return any;
  }
  /// A scheduling cycle starts: every model that knows cycles is told.
  void begin_cycle() {
    self().for_each_model([&](auto& m) {
      if constexpr (cycle_aware<std::remove_cvref_t<decltype(m)>>) m.begin_cycle();
    });
  }
  /// Head `j` of the cycle was not admitted: every model that knows cycles
  /// is told (each decides for itself whether to hold capacity for it).
  void head_denied(const job& j) {
    self().for_each_model([&](auto& m) {
      if constexpr (cycle_aware<std::remove_cvref_t<decltype(m)>>) m.head_denied(j);
    });
  }
  /// The cycle is over: every model gives back what it held.
  void end_cycle() {
    self().for_each_model([&](auto& m) {
      if constexpr (cycle_aware<std::remove_cvref_t<decltype(m)>>) m.end_cycle();
    });
  }

  // ---- node-level preemption (quota/capabilities.hpp) ------------------------
  /// The engine has a node-level rule when one of its models does.
  [[nodiscard]] bool has_node_rule() const {
    bool any = false;
    self().for_each_model([&](const auto& m) { any = any || detail::has_node_rule(m); });
    return any;
  }
  /// The running jobs every model with a node-level rule lets the host
  /// preempt for `j` (each once, in the first such model's order), appended
  /// to `out`. Models without a rule do not restrict; with no rule at all,
  /// nothing is added (the host applies its own, has_node_rule() tells).
  void node_candidates(const job& j, std::vector<victim>& out) const {
    const std::size_t start = out.size();
    bool first = true;
    std::vector<victim> more;
    self().for_each_model([&](const auto& m) {
      if (!detail::has_node_rule(m)) return;
      if constexpr (node_preemption_aware<std::remove_cvref_t<decltype(m)>>) {
        if (first) {
          m.node_candidates(j, out);
          first = false;
          // each job once
          for (std::size_t i = start; i < out.size(); ++i)
            for (std::size_t k = start; k < i; ++k)
              if (out[k].job_id == out[i].job_id) {
                out.erase(out.begin() + static_cast<std::ptrdiff_t>(i--));
                break;
              }
          return;
        }
        more.clear();
        m.node_candidates(j, more);
        std::size_t keep = start;
        for (std::size_t i = start; i < out.size(); ++i) {
          bool named = false;
          for (const auto& v : more) named = named || v.job_id == out[i].job_id;
          if (!named) continue;
          if (keep != i) out[keep] = std::move(out[i]);
          ++keep;
        }
        out.resize(keep);
      }
    });
  }

  /// The engine as a model of an outer engine: the latest time every denying
  /// model would allow the job, when each can tell.
  [[nodiscard]] std::optional<std::int64_t> earliest_admission_ms(const job& j) const {
    std::optional<std::int64_t> t;
    bool unknown = false;
    self().for_each_model([&](const auto& m) {
      if (unknown || m.check(j).allowed()) return;
      const auto e = earliest_admission_of(m, j);
      if (!e)
        unknown = true;
      else if (!t || *e > *t)
        t = e;
    });
    return unknown ? std::nullopt : t;
  }

  [[nodiscard]] bool is_admitted(std::string_view id) const { return admitted_.contains(id); }
  [[nodiscard]] std::size_t admitted_count() const noexcept { return admitted_.size(); }

 protected:
  engine_base() = default;
  admitted_set admitted_;
  std::optional<resource_vector> capacity_;  // the total set_cluster_capacity gave last

 private:
  // A model that follows demand answers a what-if for the job as if it had
  // been submitted now: a copy of it counts the job as pending first (as the
  // host's submission would), so explain and a run at the same instant agree.
  // Commits j in every model and applies the charges `ch`; all or nothing:
  // when a commit or the charges throw, the models already committed release
  // j again and the error propagates.
  void commit_everywhere(const job& j, const std::vector<queue_charge>& ch) {
    admitted_.insert(j.id);
    std::size_t done = 0;
    auto undo = [&] {
      std::size_t k = 0;
      self().for_each_model([&](auto& m) {
        if (k++ < done) m.release(j.id);
      });
      admitted_.erase(j.id);
    };
    try {
      self().for_each_model([&](auto& m) {
        m.commit(j);
        ++done;
      });
      if (!ch.empty()) apply_charges(j, ch);  // undoes its own part when it throws
    } catch (...) {
      undo();
      throw;
    }
  }
  template <class M>
  static void explain_as_submitted(const M& m, const job& j, bool admitted, model_explanation& out) {
    if constexpr (demand_aware<M> && std::is_copy_constructible_v<M>) {
      if (!admitted && detail::follows_demand(m)) {
        M copy(m);
        copy.pending_added(j);
        explain_model(copy, j, out);
        return;
      }
    }
    explain_model(m, j, out);
  }
  // whether a model charges queues (kept up to date by refresh_charging)
  bool charging_ = false;

  template <class M>
  static void charges_after_commit_of(const M& m, const job& j, std::vector<queue_charge>& out) {
    if constexpr (charge_aware<M>) m.charges_after_commit(j, out);
  }
  template <class M>
  static void charges_after_release_of(const M& m, std::string_view id, std::vector<queue_charge>& out) {
    if constexpr (charge_aware<M>) m.charges_after_release(id, out);
  }
  template <class M>
  static void current_charges_of(const M& m, std::vector<queue_charge>& out) {
    if constexpr (charge_aware<M>) m.current_charges(out);
  }
  // Every charge the charge models hold now.
  void collect_current_charges(std::vector<queue_charge>& out) const {
    self().for_each_model([&](const auto& m) {
      if (detail::makes_charges(m)) current_charges_of(m, out);
    });
  }
  void collect_commit_charges(const job& j, std::vector<queue_charge>& out) const {
    self().for_each_model([&](const auto& m) {
      if (detail::makes_charges(m)) charges_after_commit_of(m, j, out);
    });
  }
  // j as the models that account charges see it: `folded` (its request plus
  // what admitting it would newly charge its own queue) and `others` (the new
  // charges of other queues, as jobs of those queues); false: no new charge
  bool charged_view(const job& j, job& folded, std::vector<job>& others) const {
    std::vector<queue_charge> ch;
    collect_commit_charges(j, ch);
    return fold_charges(j, ch, folded, others);
  }
  // the same from the charge changes `ch` admitting j would make
  static bool fold_charges(const job& j, const std::vector<queue_charge>& ch, job& folded, std::vector<job>& others) {
    bool any = false;
    for (const auto& c : ch) {
      const resource_vector grow = growth(c);
      if (grow.empty() || c.queue.empty()) continue;
      if (!any) folded = j;
      any = true;
      if (c.queue == j.queue)
        folded.request.add_in_place(grow);
      else
        others.push_back(charge_job(j, c.queue, grow));
    }
    return any;
  }
  // check() given the charge changes admitting j would make
  [[nodiscard]] decision check_charged(const job& j, const std::vector<queue_charge>& ch) const {
    decision d;
    job folded;
    std::vector<job> others;
    const bool charged = fold_charges(j, ch, folded, others);
    self().for_each_model([&](const auto& m) {
      if (!charged || !detail::receives_charges(m)) {
        d.merge(m.check(j));
        return;
      }
      d.merge(m.check(folded));
      for (const auto& o : others) d.merge(m.check(o));
    });
    return d;
  }
  static resource_vector growth(const queue_charge& c) {
    resource_vector g;
    for (const auto& e : c.after)
      if (e.value > c.before.get(e.id)) g.set(e.id, e.value - c.before.get(e.id));
    return g;
  }
  static job charge_job(const job& who, const std::string& queue, const resource_vector& amount) {
    job c;
    c.id = charge_id(queue);
    c.ns = who.ns;
    c.queue = queue;
    c.user = who.user;
    c.groups = who.groups;
    c.priority = who.priority;
    c.created_ms = who.created_ms;
    c.request = amount;
    return c;
  }
  // The receivers' allocation of each changed queue's charge becomes `after`;
  // on a failure, what was applied is undone and the error propagates.
  void apply_charges(const job& who, const std::vector<queue_charge>& ch) {
    struct step {
      std::size_t model;
      const queue_charge* c;
      bool removed, added, deducted;
    };
    std::vector<step> done;
    try {
      std::size_t k = 0;
      self().for_each_model([&](auto& m) {
        const std::size_t mi = k++;
        if (!detail::receives_charges(m)) return;
        if constexpr (charge_receiver<std::remove_cvref_t<decltype(m)>>) {
          for (const auto& c : ch) {
            if (c.queue.empty()) {  // taken from the cluster: its capacity shrinks
              if constexpr (detail::takes_deductions<std::remove_cvref_t<decltype(m)>>) {
                m.capacity_deducted(c.after);
                done.push_back(step{mi, &c, false, false, true});
              }
              continue;
            }
            step s{mi, &c, false, false, false};
            if (!c.before.empty()) {
              m.charge_removed(charge_id(c.queue));
              s.removed = true;
            }
            if (!c.after.empty()) {
              try {
                m.charge_added(charge_job(who, c.queue, c.after));
              } catch (...) {
                if (s.removed) m.charge_added(charge_job(who, c.queue, c.before));
                throw;
              }
              s.added = true;
            }
            done.push_back(s);
          }
        }
      });
    } catch (...) {
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        std::size_t k = 0;
        self().for_each_model([&](auto& m) {
          if (k++ != it->model) return;
          if constexpr (charge_receiver<std::remove_cvref_t<decltype(m)>>) {
            if constexpr (detail::takes_deductions<std::remove_cvref_t<decltype(m)>>)
              if (it->deducted) m.capacity_deducted(it->c->before);
            if (it->added) m.charge_removed(charge_id(it->c->queue));
            if (it->removed) m.charge_added(charge_job(who, it->c->queue, it->c->before));
          }
        });
      }
      throw;
    }
  }

 protected:
  void refresh_charging() {
    charging_ = false;
    self().for_each_model([&](const auto& m) { charging_ = charging_ || detail::makes_charges(m); });
  }

 private:
  template <class F>
  void with_order_model(F&& f) const {
    const auto i = order_model();
    if (!i) return;
    if constexpr (requires { self().model(std::size_t{}); }) {
      f(self().model(*i));  // models held by index (the type-erased engine)
    } else {
      std::size_t k = 0;
      self().for_each_model([&](const auto& m) {
        if (k++ == *i) f(m);
      });
    }
  }
  std::size_t order_model_ = 0;
  bool order_chosen_ = false;

  [[nodiscard]] Derived& self() noexcept { return static_cast<Derived&>(*this); }
  [[nodiscard]] const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};
}  // namespace detail

/// An engine over models fixed at compile time.
template <policy... Ps>
class basic_engine : public detail::engine_base<basic_engine<Ps...>> {
 public:
  basic_engine() { this->refresh_charging(); }
  explicit basic_engine(Ps... ps) : models_(std::move(ps)...) { this->refresh_charging(); }

  [[nodiscard]] static constexpr std::size_t model_count() noexcept { return sizeof...(Ps); }

  template <std::size_t I>
  [[nodiscard]] auto& model() noexcept {
    return std::get<I>(models_);
  }
  template <std::size_t I>
  [[nodiscard]] const auto& model() const noexcept {
    return std::get<I>(models_);
  }
  template <class P>
  [[nodiscard]] P& model() noexcept {
    return std::get<P>(models_);
  }

  /// Calls f(model) for every model, in order.
  template <class F>
  void for_each_model(F&& f) {
    std::apply([&](auto&... m) { (f(m), ...); }, models_);
  }
  template <class F>
  void for_each_model(F&& f) const {
    std::apply([&](const auto&... m) { (f(m), ...); }, models_);
  }

 private:
  std::tuple<Ps...> models_;
};

/// An engine over models chosen at run time (type-erased).
class engine : public detail::engine_base<engine> {
 public:
  engine() = default;

  /// Adds a model. Models are asked in the order they were added.
  void add(any_policy p) {
    if (admitted_.size() != 0)
      throw state_error(error_id::state_conflict, "models cannot be added while jobs are admitted");
    models_.push_back(std::move(p));
    this->refresh_charging();
  }
  [[nodiscard]] std::size_t model_count() const noexcept { return models_.size(); }
  [[nodiscard]] any_policy& model(std::size_t i) { return models_.at(i); }
  [[nodiscard]] const any_policy& model(std::size_t i) const { return models_.at(i); }

  /// Calls f(model) for every model, in order.
  template <class F>
  void for_each_model(F&& f) {
    for (auto& m : models_) f(m);
  }
  template <class F>
  void for_each_model(F&& f) const {
    for (const auto& m : models_) f(m);
  }

 private:
  std::vector<any_policy> models_;
};

static_assert(policy<engine>);
static_assert(earliest_admission_aware<engine>);
static_assert(order_aware<engine>);
static_assert(demand_aware<engine>);
static_assert(cycle_aware<engine>);
static_assert(capacity_aware<engine>);
static_assert(node_preemption_aware<engine>);
static_assert(charge_aware<any_policy> && charge_receiver<any_policy>);
static_assert(allocation_sharing<engine>);

}  // namespace quota
