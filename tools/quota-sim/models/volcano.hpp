// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the volcano model: registers it in model_kinds().
//
// Policy entry:
//   {"model": "volcano",
//    "objects": [Volcano Queue objects as kubectl prints them (array or List)],
//    "options": {"plugin": "proportion"}}
// The cluster total is the sum of the scenario nodes' allocatable. A job goes
// to the Queue named by its `queue`; its request is pods x per-pod request.
// Pending demand (for deserved) is every submitted job not yet admitted
// (the adapter follows demand); pending jobs are offered in Volcano
// proportion's queue order (quota/capabilities.hpp).
// Options of "volcano": "plugin": "proportion"; "enqueue": true adds the
// enqueue gates to every check (job enqueueable against realCapability with
// the job's minResources, then the overcommit gate with the seed's guarantee
// exception); "overcommitFactor" (default 1.2, exact to 1/1000); "upstream":
// true decides as Volcano does (docs/queues.md, "Differences from upstream").
//
// Model "volcano_capacity" (the capacity plugin):
//   {"model": "volcano_capacity", "objects": [Queue ...],
//    "options": {"hierarchy": true, "ancestorReclaimLevel": 0, "rootBoundedByTotal": false,
//                "enqueue": false, "upstream": false}}
// check = allocatable (leaf up to the root), victims = reclaimable when the
// job's queue is preemptive, in Volcano's victim queue order; "enqueue" puts
// the capacity plugin's own enqueue step (job enqueueable, leaf to root) first.
//
// A job's minResources (its PodGroup's) is min_pods x the per-pod request.
// Upstream mode's warnings (what Volcano only logs) go to the scenario's
// warnings, which quota-sim prints.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <quota/big_int.hpp>
#include <quota/capacity_queues_json.hpp>
#include <quota/queue_tree_json.hpp>

#include "../simulator.hpp"

namespace quota::sim {

namespace detail {

/// A job's PodGroup minResources: min_pods of its pods (request = pods x per pod).
[[nodiscard]] inline resource_vector volcano_min_resources(const job& j) {
  if (j.pods <= 0 || j.min_pods >= j.pods) return j.request;
  resource_vector out;
  for (const auto& e : j.request) {
    const auto v = static_cast<quota::detail::int128>(e.value) * j.min_pods;
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

/// The proportion adapter (which owns its queue tree and follows pending
/// demand) plus the enqueue gates; copies are deep. Order and demand are the
/// adapter's.
class volcano_sim_policy {
 public:
  volcano_sim_policy(queue_tree t, const resource_registry& reg, bool enqueue_gate = false, std::int64_t factor_num = 6,
                     std::int64_t factor_den = 5)
      : p_(std::move(t)),
        reg_(std::make_shared<const resource_registry>(reg)),
        enqueue_gate_(enqueue_gate),
        factor_num_(factor_num),
        factor_den_(factor_den) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano"; }
  [[nodiscard]] decision check(const job& j) const {
    if (!enqueue_gate_) return p_.check(j);
    // Volcano's enqueue action before allocate: the job (its whole request as
    // minResources) must be enqueueable and pass the overcommit gate.
    const auto& tree = p_.tree();
    const auto q = tree.index(j.queue);
    const auto min = volcano_min_resources(j);
    auto d = tree.job_enqueueable(q, min);
    if (d.allowed()) d = tree.overcommit_gate(q, min, factor_num_, factor_den_);
    if (d.allowed()) d = p_.check(j);
    return d;
  }
  void commit(const job& j) {
    p_.commit(j);
    p_.set_elastic(j.queue, elastic_.add(j));
  }
  void release(std::string_view id) {
    p_.release(id);
    if (const auto* q = elastic_.remove(id)) p_.set_elastic(*q, elastic_.sum(*q));
  }
  /// With the enqueue gates on, only a job that passes them (Volcano: an
  /// Inqueue job) reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (enqueue_gate_) {
      const auto& tree = p_.tree();
      const auto q = tree.index(j.queue);
      const auto min = volcano_min_resources(j);
      if (tree.job_enqueueable(q, min).denied() || tree.overcommit_gate(q, min, factor_num_, factor_den_).denied())
        return;
    }
    p_.victims(j, out);
  }
  void node_candidates(const job& j, std::vector<victim>& out) const { p_.node_candidates(j, out); }
  [[nodiscard]] std::string_view pending_queue(const job& j) const { return p_.pending_queue(j); }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    return p_.compare_pending(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const { return p_.compare_heads(a, b); }
  void pending_added(const job& j) { p_.pending_added(j); }
  void pending_withdrawn(std::string_view id) { p_.pending_withdrawn(id); }
  [[nodiscard]] const queue_tree& tree() const noexcept { return p_.tree(); }
  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 private:
  queue_policy p_;
  volcano_elastic_book elastic_;
  std::shared_ptr<const resource_registry> reg_;  // a copy: the scenario's registry moves
  bool enqueue_gate_ = false;
  std::int64_t factor_num_ = 6, factor_den_ = 5;
};
static_assert(policy<volcano_sim_policy>);
static_assert(order_aware<volcano_sim_policy>);
static_assert(demand_aware<volcano_sim_policy>);
static_assert(node_preemption_aware<volcano_sim_policy>);

/// A non-negative exact value in decimal, rounded half up to `places` digits.
[[nodiscard]] inline std::string decimal_string(const rational& v, int places) {
  big_int scale = 1;
  for (int i = 0; i < places; ++i) scale *= 10;
  const big_int scaled = (numerator(v) * scale * 2 + denominator(v)) / (denominator(v) * 2);
  const big_int whole = scaled / scale, frac = scaled % scale;
  std::string f = frac.str();
  if (places <= 0) return whole.str();
  return whole.str() + "." + std::string(static_cast<std::size_t>(places) - f.size(), '0') + f;
}

inline void to_json(json& j, const volcano_sim_policy& p) {
  const auto& t = p.tree();
  const auto& reg = p.registry();
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < t.size(); ++q) {
    json e{{"weight", t.spec(q).weight}};
    const char* names[] = {"guarantee",       "capability", "realCapability", "deserved", "deservedExact",
                           "deservedDecimal", "allocated",  "inqueue",        "elastic"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < t.dims().size(); ++d) {
      const std::string r(reg.name(t.dims()[d]));
      e["guarantee"][r] = t.guarantee(q, d);
      if (t.capability(q, d) != quota::detail::queue_unlimited) e["capability"][r] = t.capability(q, d);
      if (t.real_capability(q, d) != quota::detail::queue_unlimited) e["realCapability"][r] = t.real_capability(q, d);
      e["deserved"][r] = t.deserved_floor(q, d);
      if (t.deserved_ceil(q, d) != t.deserved_floor(q, d)) e["deservedCeil"][r] = t.deserved_ceil(q, d);
      const auto exact = to_rational(t.deserved_exact(q, d));
      if (denominator(exact) == 1)
        e["deservedExact"][r] = t.deserved_floor(q, d);
      else
        e["deservedExact"][r] = numerator(exact).str() + "/" + denominator(exact).str();
      e["deservedDecimal"][r] = decimal_string(exact, 6);
      e["allocated"][r] = t.allocated(q, d);
      e["inqueue"][r] = t.inqueue(q, d);
      e["elastic"][r] = t.elastic(q, d);
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
  queue_tree_options topts;
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
        } else if (it.key() == "enqueue" || it.key() == "upstream") {
          if (!it.value().is_boolean())
            diag.add(ps.path + ".options." + it.key(), "expected true or false");
          else
            (it.key() == "enqueue" ? enqueue_gate : topts.upstream) = it.value().get<bool>();
        } else if (it.key() == "overcommitFactor") {
          if (!it.value().is_number() || it.value().get<double>() < 1.0 || it.value().get<double>() > 1000.0)
            diag.add(ps.path + ".options.overcommitFactor", "expected a number from 1 to 1000");
          else
            factor_milli = static_cast<std::int64_t>(std::llround(it.value().get<double>() * 1000.0));
        } else {
          diag.add(ps.path + ".options." + it.key(),
                   "unknown option (expected plugin, enqueue, overcommitFactor, upstream)");
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
    tree.emplace(dims, total, std::move(specs), topts);
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
  for (const auto& w : tree->warnings()) sc.warnings.push_back({ps.path + ".objects: " + w.path, w.message});
  volcano_sim_policy pol(std::move(*tree), sc.registry, enqueue_gate, factor_milli, 1000);
  return instance_of(std::move(pol));
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
  volcano_capacity_sim_policy(capacity_queues q, const resource_registry& reg, bool enqueue_gate = false)
      : p_(std::move(q)), reg_(std::make_shared<const resource_registry>(reg)), enqueue_gate_(enqueue_gate) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return "volcano_capacity"; }
  /// With "enqueue": the capacity plugin's own enqueue step (its
  /// JobEnqueueableFn with the job's minResources, leaf to root) first.
  [[nodiscard]] decision check(const job& j) const {
    if (enqueue_gate_ && p_.jobs_in_inner_queues() == 0) {
      const auto& m = p_.model();
      auto d = m.job_enqueueable(m.index(j.queue), volcano_min_resources(j));
      if (d.denied()) return d;
    }
    return p_.check(j);
  }
  void commit(const job& j) {
    p_.commit(j);
    p_.model().set_elastic(j.queue, elastic_.add(j));
  }
  void release(std::string_view id) {
    p_.release(id);
    if (const auto* q = elastic_.remove(id)) p_.model().set_elastic(*q, elastic_.sum(*q));
  }
  /// Only a job that passes the enqueue step (Volcano: an Inqueue job) reclaims.
  void victims(const job& j, std::vector<victim>& out) const {
    if (enqueue_gate_) {
      const auto& m = p_.model();
      if (m.job_enqueueable(m.index(j.queue), volcano_min_resources(j)).denied()) return;
    }
    p_.victims(j, out);
  }
  void pending_added(const job& j) { p_.pending_added(j); }
  void pending_withdrawn(std::string_view id) { p_.pending_withdrawn(id); }
  void node_candidates(const job& j, std::vector<victim>& out) const { p_.node_candidates(j, out); }
  [[nodiscard]] std::string_view pending_queue(const job& j) const { return p_.pending_queue(j); }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const {
    return p_.compare_pending(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const { return p_.compare_heads(a, b); }
  [[nodiscard]] const capacity_queues& queues() const noexcept { return p_.model(); }
  [[nodiscard]] const resource_registry& registry() const noexcept { return *reg_; }

 private:
  capacity_queue_policy p_;
  volcano_elastic_book elastic_;
  std::shared_ptr<const resource_registry> reg_;
  bool enqueue_gate_ = false;
};
static_assert(policy<volcano_capacity_sim_policy>);
static_assert(demand_aware<volcano_capacity_sim_policy>);
static_assert(node_preemption_aware<volcano_capacity_sim_policy>);

inline void to_json(json& j, const volcano_capacity_sim_policy& p) {
  const auto& c = p.queues();
  const auto& reg = p.registry();
  j = json{{"queues", json::object()}};
  for (std::size_t q = 0; q < c.size(); ++q) {
    json e = json::object();
    if (c.parent(q) != capacity_queues::npos) e["parent"] = c.name(c.parent(q));
    const char* names[] = {"deserved", "guarantee", "capability", "realCapability", "allocated", "inqueue", "elastic"};
    for (const char* n : names) e[n] = json::object();
    for (std::size_t d = 0; d < c.dims().size(); ++d) {
      const std::string r(reg.name(c.dims()[d]));
      e["deserved"][r] = c.deserved(q, d);
      e["guarantee"][r] = c.guarantee(q, d);
      if (c.capability(q, d) != quota::detail::cap_unlimited) e["capability"][r] = c.capability(q, d);
      if (c.real_capability(q, d) != quota::detail::cap_unlimited) e["realCapability"][r] = c.real_capability(q, d);
      e["allocated"][r] = c.allocated(q, d);
      e["inqueue"][r] = c.inqueue(q, d);
      e["elastic"][r] = c.elastic(q, d);
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
  bool enqueue_gate = false;
  if (ps.body.contains("options")) {
    const auto& o = ps.body["options"];
    if (!o.is_object()) {
      diag.add(ps.path + ".options", "expected an object");
    } else {
      for (auto it = o.begin(); it != o.end(); ++it) {
        const auto path = ps.path + ".options." + it.key();
        if (it.key() == "hierarchy" || it.key() == "rootBoundedByTotal" || it.key() == "enqueue" ||
            it.key() == "upstream") {
          if (!it.value().is_boolean()) {
            diag.add(path, "expected true or false");
            continue;
          }
          const bool v = it.value().get<bool>();
          if (it.key() == "hierarchy")
            opts.mode = v ? capacity_mode::hierarchical : capacity_mode::flat;
          else if (it.key() == "rootBoundedByTotal")
            opts.root_bounded_by_total = v;
          else if (it.key() == "enqueue")
            enqueue_gate = v;
          else
            opts.upstream = v;
        } else if (it.key() == "ancestorReclaimLevel") {
          if (!it.value().is_number_integer() || it.value().get<std::int64_t>() < 0 ||
              it.value().get<std::int64_t>() > 64)
            diag.add(path, "expected an integer from 0 to 64");
          else
            opts.ancestor_reclaim_level = it.value().get<int>();
        } else {
          diag.add(path,
                   "unknown option (expected hierarchy, ancestorReclaimLevel, rootBoundedByTotal, enqueue, upstream)");
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
    // upstream: Volcano's outcome (nothing is scheduled while the job waits)
    if (!queues->is_leaf(queues->index(js.queue)) && !opts.upstream)
      diag.add("$.jobs[" + std::to_string(i) + "].queue",
               "job '" + js.id + "': queue '" + js.queue + "' has child queues (only leaf queues hold jobs)");
    for (const auto& e : js.per_pod)
      if (std::find(queues->dims().begin(), queues->dims().end(), e.id) == queues->dims().end())
        diag.add("$.jobs[" + std::to_string(i) + "].request",
                 "job '" + js.id + "': resource '" + std::string(sc.registry.name(e.id)) + "' is not on any node");
  }
  diag.throw_if_any();
  for (const auto& w : queues->warnings()) sc.warnings.push_back({ps.path + ".objects: " + w.path, w.message});
  return instance_of(volcano_capacity_sim_policy(std::move(*queues), sc.registry, enqueue_gate));
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
      "\"enqueue\": false, \"overcommitFactor\": 1.2, \"upstream\": false}}",
      detail::volcano_make, detail::volcano_synthesize};
  kinds["volcano_capacity"] = model_kind{
      "Volcano Queues (capacity plugin, flat or hierarchical): {\"objects\": [Queue ...], \"options\": "
      "{\"hierarchy\": true, \"ancestorReclaimLevel\": 0, \"enqueue\": false, \"upstream\": false}}",
      detail::volcano_capacity_make, detail::volcano_capacity_synthesize};
}

}  // namespace quota::sim
