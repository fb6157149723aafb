// SPDX-License-Identifier: Apache-2.0
// What quota-sim's two Volcano adapters share (models/volcano.hpp, the
// proportion plugin; models/volcano_capacity.hpp, the capacity plugin): the
// adapter around the plugin's policy, and the steps of their policy entries
// that read Volcano's rules the same way.
#pragma once

#include <compare>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <quota/capabilities.hpp>
#include <quota/detail/volcano_elastic.hpp>
#include <quota/policy.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim::detail {

using quota::detail::volcano_elastic_book;
using quota::detail::volcano_min_resources;

/// A Volcano plugin's policy P over its queues M as quota-sim replays it: P
/// names resources by a copy of the scenario's registry (the scenario's own
/// moves), and the elastic resources of the running jobs (what each holds
/// beyond its minResources) follow every commit and release. Copies are deep
/// (any_policy copies the model); demand, order, node candidates and charges
/// are P's. Derived (CRTP) adds check and victims with its enqueue gates, and
/// names what takes the queues' elastic sums: Derived::elastic_target(P&).
template <class Derived, class P, class M>
class volcano_adapter {
 public:
  void commit(const job& j) {
    p_.commit(j);
    elastic_.committed(j, Derived::elastic_target(p_));
  }
  void release(std::string_view id) {
    p_.release(id);
    elastic_.released(id, Derived::elastic_target(p_));
  }
  void pending_added(const job& j) { p_.pending_added(j); }
  void pending_withdrawn(std::string_view id) { p_.pending_withdrawn(id); }
  void node_candidates(const job& j, std::vector<victim>& out) const { p_.node_candidates(j, out); }
  /// A charge model's charges (KAI claims' shared devices) are allocated to their queue.
  void charge_added(const job& c) { p_.charge_added(c); }
  void charge_removed(std::string_view id) { p_.charge_removed(id); }
  /// quota::capacity_aware: the cluster's new total (nodes came or went).
  void set_cluster_capacity(const resource_vector& total) { p_.set_cluster_capacity(total); }
  [[nodiscard]] std::string_view pending_queue(const job& j) const { return p_.pending_queue(j); }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    return p_.compare_pending(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const { return p_.compare_heads(a, b); }
  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 protected:
  volcano_adapter(M queues, const resource_registry& reg, bool enqueue_gate)
      : reg_(std::make_shared<const resource_registry>(reg)),
        p_(bound(std::move(queues), reg_.get())),
        enqueue_gate_(enqueue_gate) {}
  [[nodiscard]] const P& plugin() const noexcept { return p_; }
  /// Whether the plugin's enqueue step comes before every check (Volcano's
  /// enqueue action: only an Inqueue job is allocated or reclaims).
  [[nodiscard]] bool enqueue_gate() const noexcept { return enqueue_gate_; }

 private:
  /// The model naming resources (reasons, introspection) by the registry's names.
  static M bound(M queues, const resource_registry* reg) {
    queues.rebind_registry(reg);
    return queues;
  }
  std::shared_ptr<const resource_registry> reg_;  // a copy: the scenario's registry moves
  P p_;
  volcano_elastic_book elastic_;
  bool enqueue_gate_ = false;
};

/// What the engine finds in a Volcano adapter: a policy that follows pending
/// demand, names node-level victims, receives charges and orders pending jobs.
template <class A>
concept volcano_adapter_capabilities = policy<A> && demand_aware<A> && node_preemption_aware<A> && charge_receiver<A> &&
    order_aware<A> && capacity_aware<A>;

/// A Volcano model's policy entry: its Queue objects (required) and options.
inline policy_entry volcano_entry(const policy_spec& ps) {
  policy_entry entry(ps, {"objects", "options"});
  entry.require("objects", "the Volcano Queue objects of the model");
  return entry;
}

/// Upstream mode of a Volcano model: Volcano's Resource holds cpu and scalar
/// resources as MilliValue and memory and pods as Value, so a scenario
/// quantity finer than that is refused.
inline void refuse_finer_than_volcano(policy_entry& entry, const scenario& sc, std::string_view model) {
  refuse_finer_scales(
      entry, sc, model, [](std::string_view r) { return r == "memory" || r == "pods" ? 0 : 3; },
      "Volcano's Resource: cpu and scalar resources in thousandths, memory and pods in whole units");
}

/// The cluster total a Volcano model divides: the sum of the nodes' allocatable.
[[nodiscard]] inline resource_vector volcano_cluster_total(const scenario& sc) {
  resource_vector total;
  for (const auto& n : sc.nodes) total.add_in_place(n.allocatable);
  return total;
}

/// What Volcano only logs about the Queue objects (the model's warnings) goes
/// to the scenario's warnings, which quota-sim prints.
template <class W>
void take_volcano_warnings(scenario& sc, const policy_spec& ps, const W& warnings) {
  for (const auto& w : warnings) sc.warnings.push_back({ps.path + ".objects: " + w.path, w.message});
}

}  // namespace quota::sim::detail
