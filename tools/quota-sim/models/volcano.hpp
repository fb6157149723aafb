// quota-sim integration of the volcano model: registers it in model_kinds().
//
// Policy entry:
//   {"model": "volcano",
//    "objects": [Volcano Queue objects as kubectl prints them (array or List)],
//    "options": {"plugin": "proportion"}}
// The cluster total is the sum of the scenario nodes' allocatable. A job goes
// to the Queue named by its `queue`; its request is pods x per-pod request.
// Pending demand (for deserved) is every submitted job not yet admitted.
// Only plugin "proportion" is driven here (capacity is not built yet).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <quota/queue_tree_json.hpp>

#include "../simulator.hpp"

namespace quota::sim {

namespace detail {

/// Owns the queue tree (any_policy copies it) and the pending demand.
class volcano_sim_policy {
 public:
  volcano_sim_policy(queue_tree t, const resource_registry& reg)
      : tree_(std::move(t)), reg_(std::make_shared<const resource_registry>(reg)) {
    tree_.compute_deserved();
  }
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano"; }
  /// quota-sim checks a job from its arrival on: its first check adds its
  /// request to the queue's pending demand (deserved follows demand).
  [[nodiscard]] decision check(const job& j) const {
    auto* self = const_cast<volcano_sim_policy*>(this);
    self->arrive(j.id);
    // quota-sim's preemption trial releases victims and re-admits them before
    // stopping them for real; that re-admission must not be denied.
    if (restorable_.count(j.id)) return decision::allow();
    if (restoring_) {
      self->restorable_.clear();
      self->restoring_ = false;
    }
    return queue_policy(tree_).check(j);
  }
  void commit(const job& j) {
    auto& p = pending_[j.queue];
    queue_tree copy = tree_;
    copy.allocate(j.id, j.queue, j.request);
    const auto next = clamped_sub(p, j.request);
    copy.set_pending(j.queue, next);
    copy.compute_deserved();
    tree_ = std::move(copy);
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
  void victims(const job& j, std::vector<victim>& out) const { queue_policy(tree_).victims(j, out); }
  /// A job arrives with every job submitted at or before it (quota-sim
  /// checks jobs only after their submission).
  struct arrival {
    std::int64_t at;
    std::string id;
    job j;
  };
  void set_arrivals(std::vector<arrival> a) {
    std::stable_sort(a.begin(), a.end(), [](const arrival& x, const arrival& y) { return x.at < y.at; });
    arrivals_ = std::move(a);
  }
  void arrive(std::string_view id) {
    std::int64_t at = -1;
    for (const auto& a : arrivals_)
      if (a.id == id) at = a.at;
    while (next_ < arrivals_.size() && arrivals_[next_].at <= at) submit(arrivals_[next_++].j);
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
  std::vector<arrival> arrivals_;
  std::set<std::string, std::less<>> restorable_;
  bool restoring_ = false;
  std::size_t next_ = 0;
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
  if (ps.body.contains("options")) {
    const auto& o = ps.body["options"];
    if (!o.is_object()) {
      diag.add(ps.path + ".options", "expected an object");
    } else {
      for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() != "plugin")
          diag.add(ps.path + ".options." + it.key(), "unknown option (expected plugin)");
        else if (!it.value().is_string() || it.value().get<std::string>() != "proportion")
          diag.add(ps.path + ".options.plugin", "expected \"proportion\" (the capacity plugin is not available yet)");
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
  volcano_sim_policy pol(std::move(*tree), sc.registry);
  std::vector<volcano_sim_policy::arrival> arr;
  for (const auto& js : sc.jobs) {
    job j;
    j.id = js.id;
    j.queue = js.queue;
    for (const auto& e : js.per_pod) j.request.set(e.id, quota::detail::checked_mul<amount>(e.value, js.pods));
    arr.push_back({js.submit_ms, js.id, std::move(j)});
  }
  pol.set_arrivals(std::move(arr));
  model_instance mi = instance_of(std::move(pol));
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

}  // namespace detail

inline void register_volcano_model(std::map<std::string, model_kind>& kinds) {
  kinds["volcano"] = model_kind{
      "Volcano Queues (proportion plugin): {\"objects\": [Queue ...], \"options\": {\"plugin\": \"proportion\"}}",
      detail::volcano_make, detail::volcano_synthesize};
}

}  // namespace quota::sim
