// quota-sim integration of the volcano model: registers it in model_kinds().
//
// Policy entry:
//   {"model": "volcano",
//    "objects": [Volcano Queue objects as kubectl prints them (array or List)],
//    "options": {"plugin": "proportion"}}
// The cluster total is the sum of the scenario nodes' allocatable. A job goes
// to the Queue named by its `queue`; its request is pods x per-pod request.
// Pending demand (for deserved) is every submitted job not yet admitted.
// Options of "volcano": "plugin": "proportion"; "enqueue": true adds the
// enqueue gates to every check (job enqueueable against realCapability, then
// the overcommit gate with the seed's guarantee exception); "overcommitFactor"
// (default 1.2, exact to 1/1000).
//
// Model "volcano_capacity" (the capacity plugin):
//   {"model": "volcano_capacity", "objects": [Queue ...],
//    "options": {"hierarchy": true, "ancestorReclaimLevel": 0, "rootBoundedByTotal": false}}
// check = allocatable (leaf up to the root), victims = reclaimable when the
// job's queue is preemptive, in Volcano's victim queue order.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <quota/capacity_queues_json.hpp>
#include <quota/queue_tree_json.hpp>

#include "../simulator.hpp"

namespace quota::sim {

namespace detail {

/// Owns the queue tree (any_policy copies it) and the pending demand.
class volcano_sim_policy {
 public:
  volcano_sim_policy(queue_tree t, const resource_registry& reg, bool enqueue_gate = false, std::int64_t factor_num = 6,
                     std::int64_t factor_den = 5)
      : tree_(std::move(t)),
        reg_(std::make_shared<const resource_registry>(reg)),
        enqueue_gate_(enqueue_gate),
        factor_num_(factor_num),
        factor_den_(factor_den) {
    tree_.compute_deserved();
  }
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano"; }
  /// A job's request joins its queue's pending demand at its arrival
  /// (quota-sim's on_submit hook calls submit()), so deserved follows demand.
  /// Not for concurrent checks: a check may end a restore (see restorable_).
  [[nodiscard]] decision check(const job& j) const {
    // quota-sim's preemption trial releases victims and re-admits them before
    // stopping them for real; that re-admission must not be denied.
    if (restorable_.count(j.id)) return decision::allow();
    if (restoring_) {  // the first check of another job ends the restore
      restorable_.clear();
      restoring_ = false;
    }
    if (!enqueue_gate_) return queue_policy(tree_).check(j);
    // Volcano's enqueue action before allocate: the job (its whole request as
    // minResources) must be enqueueable and pass the overcommit gate.
    const auto q = tree_.index(j.queue);
    auto d = tree_.job_enqueueable(q, j.request);
    if (d.allowed()) d = tree_.overcommit_gate(q, j.request, factor_num_, factor_den_);
    if (d.allowed()) d = queue_policy(tree_).check(j);
    return d;
  }
  void commit(const job& j) {
    auto& p = pending_[j.queue];
    // a victim re-admitted after a failed preemption trial left the pending
    // demand when it was first admitted, and its trial release did not add
    // it back: only a first admission takes the job out of the demand
    const bool restore = restorable_.count(j.id) != 0;
    const auto next = restore ? p : clamped_sub(p, j.request);
    tree_.allocate(j.id, j.queue, j.request);  // strong on its own
    try {
      tree_.set_pending(j.queue, next);
      tree_.compute_deserved();
    } catch (...) {  // undo without copying the tree
      tree_.deallocate(j.id);
      tree_.set_pending(j.queue, p);
      tree_.compute_deserved();
      throw;
    }
    p = next;
    queue_of_[j.id] = j.queue;
    if (restorable_.count(j.id))
      restoring_ = true;
    else
      restorable_.clear();
  }
  void release(std::string_view id) {
    tree_.deallocate(id);
    restorable_.insert(std::string(id));
    tree_.compute_deserved();
  }
  /// With the enqueue gates on, only a job that passes them (Volcano: an
  /// Inqueue job) reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (enqueue_gate_) {
      const auto q = tree_.index(j.queue);
      if (tree_.job_enqueueable(q, j.request).denied() ||
          tree_.overcommit_gate(q, j.request, factor_num_, factor_den_).denied())
        return;
    }
    queue_policy(tree_).victims(j, out);
  }
  void submit(const job& j) {
    auto& p = pending_[j.queue];
    auto next = p;
    next.add_in_place(j.request);
    tree_.set_pending(j.queue, next);
    tree_.compute_deserved();
    p = next;
  }
  [[nodiscard]] const queue_tree& tree() const noexcept { return tree_; }
  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 private:
  mutable queue_tree tree_;                       // queue_policy wants a non-const tree; check/victims only read it
  std::shared_ptr<const resource_registry> reg_;  // a copy: the scenario's registry moves
  std::map<std::string, resource_vector, std::less<>> pending_;
  std::map<std::string, std::string, std::less<>> queue_of_;
  // released jobs a failed preemption trial may re-admit (mutable: a check
  // ends the restore, quota-sim's single scheduling thread only)
  mutable std::set<std::string, std::less<>> restorable_;
  mutable bool restoring_ = false;
  bool enqueue_gate_ = false;
  std::int64_t factor_num_ = 6, factor_den_ = 5;
};
static_assert(policy<volcano_sim_policy>);

inline void to_json(json& j, const volcano_sim_policy& p) {
  const auto& t = p.tree();
  const auto& reg = p.registry();
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < t.size(); ++q) {
    json e{{"weight", t.spec(q).weight}};
    const char* names[] = {"guarantee", "capability", "realCapability", "deserved", "allocated"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < t.dims().size(); ++d) {
      const std::string r(reg.name(t.dims()[d]));
      e["guarantee"][r] = t.guarantee(q, d);
      if (t.capability(q, d) != quota::detail::queue_unlimited) e["capability"][r] = t.capability(q, d);
      if (t.real_capability(q, d) != quota::detail::queue_unlimited) e["realCapability"][r] = t.real_capability(q, d);
      e["deserved"][r] = t.deserved_floor(q, d);
      if (t.deserved_ceil(q, d) != t.deserved_floor(q, d)) e["deservedCeil"][r] = t.deserved_ceil(q, d);
      e["allocated"][r] = t.allocated(q, d);
    }
    j["queues"][t.spec(q).name] = std::move(e);
  }
}

inline model_instance volcano_make(const policy_spec& ps, scenario& sc) {
  diagnostics diag;
  for (auto it = ps.body.begin(); it != ps.body.end(); ++it)
    if (it.key() != "model" && it.key() != "objects" && it.key() != "options")
      diag.add(ps.path + "." + it.key(), "unknown key (expected objects, options)");
  if (!ps.body.contains("objects")) diag.add(ps.path + ".objects", "missing: the Volcano Queue objects of the model");
  bool enqueue_gate = false;
  std::int64_t factor_milli = 1200;
  if (ps.body.contains("options")) {
    const auto& o = ps.body["options"];
    if (!o.is_object()) {
      diag.add(ps.path + ".options", "expected an object");
    } else {
      for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == "plugin") {
          if (!it.value().is_string() || it.value().get<std::string>() != "proportion")
            diag.add(ps.path + ".options.plugin",
                     "expected \"proportion\" (the capacity plugin is the model \"volcano_capacity\")");
        } else if (it.key() == "enqueue") {
          if (!it.value().is_boolean())
            diag.add(ps.path + ".options.enqueue", "expected true or false");
          else
            enqueue_gate = it.value().get<bool>();
        } else if (it.key() == "overcommitFactor") {
          if (!it.value().is_number() || it.value().get<double>() < 1.0 || it.value().get<double>() > 1000.0)
            diag.add(ps.path + ".options.overcommitFactor", "expected a number from 1 to 1000");
          else
            factor_milli = static_cast<std::int64_t>(std::llround(it.value().get<double>() * 1000.0));
        } else {
          diag.add(ps.path + ".options." + it.key(), "unknown option (expected plugin, enqueue, overcommitFactor)");
        }
      }
    }
  }
  diag.throw_if_any();
  std::vector<queue_spec> specs;
  try {
    specs = parse_volcano_queues(ps.body["objects"], sc.registry);
  } catch (const validation_error& e) {
    diagnostics d;
    for (const auto& p : e.problems()) d.add(ps.path + ".objects: " + p.path, p.message);
    d.throw_if_any();
  }
  resource_vector total;
  for (const auto& n : sc.nodes) total.add_in_place(n.allocatable);
  std::vector<resource_id> dims;
  for (const auto& e : total) dims.push_back(e.id);
  for (const auto& s : specs) {
    for (const auto& e : s.guarantee)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end()) dims.push_back(e.id);
    for (const auto& e : s.capability)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end()) dims.push_back(e.id);
  }
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  std::optional<queue_tree> tree;
  try {
    tree.emplace(dims, total, std::move(specs));
  } catch (const validation_error& e) {
    diagnostics d;
    for (const auto& p : e.problems()) d.add(ps.path + ".objects: " + p.path, p.message);
    d.throw_if_any();
  }
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    for (const auto& e : js.per_pod)
      if (std::find(dims.begin(), dims.end(), e.id) == dims.end())
        diag.add("$.jobs[" + std::to_string(i) + "].request",
                 "job '" + js.id + "': resource '" + std::string(sc.registry.name(e.id)) + "' is not on any node");
    if (std::find(names.begin(), names.end(), js.queue) == names.end())
      diag.add("$.jobs[" + std::to_string(i) + "].queue",
               "job '" + js.id + "': no Volcano Queue '" + js.queue + "' in the volcano model");
  }
  diag.throw_if_any();
  volcano_sim_policy pol(std::move(*tree), sc.registry, enqueue_gate, factor_milli, 1000);
  model_instance mi = instance_of(std::move(pol));
  // a job's request joins its queue's pending demand at its arrival
  mi.on_submit = [](any_policy& p, const job& j) {
    if (auto* m = p.target<volcano_sim_policy>()) m->submit(j);
  };
  return mi;
}

/// One Queue per tenant, weight 1, guarantee = half an even share of the GPU dimension.
inline json volcano_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                               const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  const auto half = capacity.get(gpu) / n / 2;
  resource_vector g;
  g.set(gpu, half);
  (void)unit;
  json objects = json::array();
  for (const auto& t : tenants)
    objects.push_back(
        json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
             {"kind", "Queue"},
             {"metadata", {{"name", t}}},
             {"spec",
              {{"weight", 1}, {"reclaimable", true}, {"guarantee", {{"resource", resource_list_to_json(g, reg)}}}}}});
  return json{{"model", "volcano"}, {"objects", objects}, {"options", {{"plugin", "proportion"}}}};
}

/// The capacity plugin: owns its queues (any_policy copies the model).
class volcano_capacity_sim_policy {
 public:
  volcano_capacity_sim_policy(capacity_queues q, const resource_registry& reg)
      : q_(std::move(q)), reg_(std::make_shared<const resource_registry>(reg)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano_capacity"; }
  [[nodiscard]] decision check(const job& j) const { return q_.allocatable(q_.index(j.queue), j.request); }
  void commit(const job& j) { q_.allocate(j.id, j.queue, j.request); }
  void release(std::string_view id) { q_.deallocate(id); }
  /// Volcano's reclaim: only a preemptive queue reclaims (PreemptiveFn).
  void victims(const job& j, std::vector<victim>& out) const {
    if (q_.preemptive(q_.index(j.queue), j.request).denied()) return;
    q_.reclaimable_running(j.queue, j.request, out);
  }
  [[nodiscard]] const capacity_queues& queues() const noexcept { return q_; }
  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 private:
  capacity_queues q_;
  std::shared_ptr<const resource_registry> reg_;
};
static_assert(policy<volcano_capacity_sim_policy>);

inline void to_json(json& j, const volcano_capacity_sim_policy& p) {
  const auto& c = p.queues();
  const auto& reg = p.registry();
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < c.size(); ++q) {
    json e = json::object();
    if (c.parent(q) != capacity_queues::npos) e["parent"] = c.name(c.parent(q));
    const char* names[] = {"deserved", "guarantee", "capability", "realCapability", "allocated", "inqueue"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < c.dims().size(); ++d) {
      const std::string r(reg.name(c.dims()[d]));
      e["deserved"][r] = c.deserved(q, d);
      e["guarantee"][r] = c.guarantee(q, d);
      if (c.capability(q, d) != quota::detail::cap_unlimited) e["capability"][r] = c.capability(q, d);
      if (c.real_capability(q, d) != quota::detail::cap_unlimited) e["realCapability"][r] = c.real_capability(q, d);
      e["allocated"][r] = c.allocated(q, d);
      e["inqueue"][r] = c.inqueue(q, d);
    }
    e["share"] = c.share(q).num() == 0
                     ? json(0)
                     : json(std::to_string(c.share(q).num()) + "/" + std::to_string(c.share(q).den()));
    e["overused"] = c.overused(q);
    j["queues"][c.name(q)] = std::move(e);
  }
}

inline model_instance volcano_capacity_make(const policy_spec& ps, scenario& sc) {
  diagnostics diag;
  for (auto it = ps.body.begin(); it != ps.body.end(); ++it)
    if (it.key() != "model" && it.key() != "objects" && it.key() != "options")
      diag.add(ps.path + "." + it.key(), "unknown key (expected objects, options)");
  if (!ps.body.contains("objects")) diag.add(ps.path + ".objects", "missing: the Volcano Queue objects of the model");
  capacity_options opts;
  if (ps.body.contains("options")) {
    const auto& o = ps.body["options"];
    if (!o.is_object()) {
      diag.add(ps.path + ".options", "expected an object");
    } else {
      for (auto it = o.begin(); it != o.end(); ++it) {
        const auto path = ps.path + ".options." + it.key();
        if (it.key() == "hierarchy" || it.key() == "rootBoundedByTotal") {
          if (!it.value().is_boolean()) {
            diag.add(path, "expected true or false");
            continue;
          }
          if (it.key() == "hierarchy")
            opts.mode = it.value().get<bool>() ? capacity_mode::hierarchical : capacity_mode::flat;
          else
            opts.root_bounded_by_total = it.value().get<bool>();
        } else if (it.key() == "ancestorReclaimLevel") {
          if (!it.value().is_number_integer() || it.value().get<std::int64_t>() < 0 ||
              it.value().get<std::int64_t>() > 64)
            diag.add(path, "expected an integer from 0 to 64");
          else
            opts.ancestor_reclaim_level = it.value().get<int>();
        } else {
          diag.add(path, "unknown option (expected hierarchy, ancestorReclaimLevel, rootBoundedByTotal)");
        }
      }
    }
  }
  diag.throw_if_any();
  resource_vector total;
  for (const auto& n : sc.nodes) total.add_in_place(n.allocatable);
  std::optional<capacity_queues> queues;
  try {
    queues.emplace(load_capacity_queues(ps.body["objects"], sc.registry, total, opts));
  } catch (const validation_error& e) {
    diagnostics d;
    for (const auto& p : e.problems()) d.add(ps.path + ".objects: " + p.path, p.message);
    d.throw_if_any();
  }
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!queues->contains(js.queue)) {
      diag.add("$.jobs[" + std::to_string(i) + "].queue",
               "job '" + js.id + "': no Volcano Queue '" + js.queue + "' in the volcano_capacity model");
      continue;
    }
    if (!queues->is_leaf(queues->index(js.queue)))
      diag.add("$.jobs[" + std::to_string(i) + "].queue",
               "job '" + js.id + "': queue '" + js.queue + "' has child queues (only leaf queues hold jobs)");
    for (const auto& e : js.per_pod)
      if (std::find(queues->dims().begin(), queues->dims().end(), e.id) == queues->dims().end())
        diag.add("$.jobs[" + std::to_string(i) + "].request",
                 "job '" + js.id + "': resource '" + std::string(sc.registry.name(e.id)) + "' is not on any node");
  }
  diag.throw_if_any();
  return instance_of(volcano_capacity_sim_policy(std::move(*queues), sc.registry));
}

/// One leaf Queue per tenant with an even deserved share of the GPUs, flat.
inline json volcano_capacity_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                        const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  (void)unit;
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  resource_vector des;
  des.set(gpu, capacity.get(gpu) / n);
  json objects = json::array();
  for (const auto& t : tenants)
    objects.push_back(json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                           {"kind", "Queue"},
                           {"metadata", {{"name", t}}},
                           {"spec", {{"reclaimable", true}, {"deserved", resource_list_to_json(des, reg)}}}});
  return json{{"model", "volcano_capacity"}, {"objects", objects}, {"options", {{"hierarchy", false}}}};
}

}  // namespace detail

inline void register_volcano_model(std::map<std::string, model_kind>& kinds) {
  kinds["volcano"] = model_kind{
      "Volcano Queues (proportion plugin): {\"objects\": [Queue ...], \"options\": {\"plugin\": \"proportion\", "
      "\"enqueue\": false, \"overcommitFactor\": 1.2}}",
      detail::volcano_make, detail::volcano_synthesize};
  kinds["volcano_capacity"] = model_kind{
      "Volcano Queues (capacity plugin, flat or hierarchical): {\"objects\": [Queue ...], \"options\": "
      "{\"hierarchy\": true, \"ancestorReclaimLevel\": 0}}",
      detail::volcano_capacity_make, detail::volcano_capacity_synthesize};
}

}  // namespace quota::sim
