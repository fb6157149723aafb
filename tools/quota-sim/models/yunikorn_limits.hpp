// SPDX-License-Identifier: Apache-2.0
// quota-sim integration of the YuniKorn user/group limits model: builds
// "yunikorn_limits" entries (listed in models.cpp).
// Docs: docs/yunikorn-limits.md ("In quota-sim")
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>

#include "../model_registry.hpp"
#include "../policy_entry.hpp"

namespace quota::sim {

namespace detail {

/// The manager and the registry it names resources with, owned together.
/// The adapter plus the registry its manager reads (shared: it never
/// changes); copies are deep, as the adapter's are.
class sim_yunikorn_limits {
 public:
  explicit sim_yunikorn_limits(std::shared_ptr<const resource_registry> reg) : reg_(std::move(reg)), p_(*reg_) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return p_.policy_name(); }
  [[nodiscard]] decision check(const job& j) const { return p_.check(j); }
  void commit(const job& j) { p_.commit(j); }
  void release(std::string_view id) { p_.release(id); }
  void victims(const job& j, std::vector<victim>& out) const { p_.victims(j, out); }
  [[nodiscard]] yunikorn_limits_policy& policy() noexcept { return p_; }
  [[nodiscard]] const yunikorn_limits_policy& policy() const noexcept { return p_; }

 private:
  std::shared_ptr<const resource_registry> reg_;
  yunikorn_limits_policy p_;
};
static_assert(quota::policy<sim_yunikorn_limits>);
inline void to_json(json& j, const sim_yunikorn_limits& m) {
  to_json(j, m.policy());
}

/// Leaf queue paths of a config ("root.a.b").
inline void yunikorn_limits_leaves(const limits_queue& q, const std::string& path, std::vector<std::string>& leaves,
                                   std::vector<std::string>& parents) {
  if (q.queues.empty()) {
    leaves.push_back(path);
    return;
  }
  parents.push_back(path);
  for (const auto& c : q.queues) yunikorn_limits_leaves(c, path + "." + c.name, leaves, parents);
}

inline model_instance yunikorn_limits_make(const policy_spec& ps, scenario& sc) {
  policy_entry entry(ps, {"config", "options"});
  entry.require("config", "the YuniKorn queue configuration (partitions[].queues[])");
  yunikorn_limits_json_options opt;
  entry.options({string_option("partition", opt.partition, false), flag_option("vcoreAsCpu", opt.vcore_as_cpu),
                 flag_option("upstream", opt.upstream)});
  if (opt.upstream)
    refuse_finer_scales(
        entry, sc, "yunikorn_limits", [](std::string_view r) { return r == "cpu" ? 3 : 0; },
        "YuniKorn's quantities: vcore in thousandths, every other resource in whole units");
  // every problem of the entry at once: options and config together
  if (!entry.has("config")) entry.throw_if_any();
  resource_registry reg = sc.registry;
  yunikorn_limits_config cfg;
  entry.load("config", [&] { cfg = load_yunikorn_limits_config(entry["config"], reg, opt); });
  entry.throw_if_any();

  std::vector<std::string> leaves, parents;
  yunikorn_limits_leaves(cfg.root, "root", leaves, parents);
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const auto& js = sc.jobs[i];
    if (!job_checked_now(sc, js)) continue;  // submitted under another configuration
    const std::string jp = "$.jobs[" + std::to_string(i) + "]";
    const std::string q = yunikorn_limits_policy::qualify(js.queue);
    if (js.queue.empty())
      entry.add(jp + ".queue", "job '" + js.id + "': no queue (the yunikorn_limits model needs a leaf queue path)");
    else if (std::find(parents.begin(), parents.end(), q) != parents.end())
      entry.add(jp + ".queue",
                "job '" + js.id + "': queue " + q + " is a parent queue; applications run in leaf queues");
    else if (std::find(leaves.begin(), leaves.end(), q) == leaves.end())
      entry.add(jp + ".queue", "job '" + js.id + "': no queue " + q + " in the yunikorn_limits config");
    if (js.user.empty())
      entry.add(jp + ".user", "job '" + js.id + "': no user (the yunikorn_limits model tracks usage per user)");
  }
  // a query names a queue of the config (a leaf or a parent)
  for (const auto& x : sc.expectations) {
    if (!x.query || x.query->model != "yunikorn_limits" || x.query->queue.empty()) continue;
    const std::string q = yunikorn_limits_policy::qualify(x.query->queue);
    if (std::find(leaves.begin(), leaves.end(), q) == leaves.end() &&
        std::find(parents.begin(), parents.end(), q) == parents.end())
      entry.add(x.query->path + "." + x.query->question + ".queue", "no queue " + q + " in the yunikorn_limits config");
  }
  entry.throw_if_any();

  sim_yunikorn_limits model(std::make_shared<const resource_registry>(reg));
  entry.load("config", [&] { model.policy().manager().reload(cfg); });
  entry.throw_if_any();
  sc.registry = std::move(reg);
  model_instance mi = instance_of(std::move(model));
  // a reload event: yunikorn_limits_model::reload swaps the config in and keeps the
  // usage (limits lowered below usage deny new work; nothing is released)
  mi.reload_into = [cfg](any_policy& current) {
    auto* p = current.target<sim_yunikorn_limits>();
    if (!p) throw state_error(error_id::state_conflict, "yunikorn_limits reload: not a yunikorn_limits model");
    p->policy().manager().reload(cfg);
  };
  // headroom and can_run_app of an identity at a queue, asked of a copy of
  // the manager (a question may register the names it asks about)
  mi.query = [reg = std::make_shared<const resource_registry>(sc.registry)](const any_policy& current,
                                                                            const query_spec& q) -> json {
    const auto* p = current.target<sim_yunikorn_limits>();
    if (!p) throw state_error(error_id::state_conflict, "yunikorn_limits query: not a yunikorn_limits model");
    yunikorn_limits_model m(p->policy().manager());
    const limits_identity id{q.user, q.groups};
    const std::string queue = yunikorn_limits_policy::qualify(q.queue);
    if (q.question == "headroom") return resource_amounts_to_json(m.headroom(queue, id), *reg);
    return m.can_run_app(queue, q.app, id);
  };
  return mi;
}

/// A root queue with one leaf per tenant (root.<tenant>), each with a user
/// wildcard limit of a quarter of the tenant's even share of GPUs (at least
/// one GPU).
inline json yunikorn_limits_synthesize(const std::vector<std::string>& tenants, const resource_vector& capacity,
                                       const resource_registry& reg) {
  const auto [gpu, unit] = gpu_dimension(capacity, reg);
  const auto n = static_cast<amount>(std::max<std::size_t>(1, tenants.size()));
  const amount share = capacity.get(gpu) / n;
  const amount per_user = std::max<amount>(unit, share / 4);
  const std::string gpu_name(reg.name(gpu));
  json children = json::array();
  for (const auto& t : tenants)
    children.push_back(json{{"name", t},
                            {"limits", json::array({json{{"limit", "user catch all"},
                                                         {"users", json::array({"*"})},
                                                         {"maxresources", {{gpu_name, per_user}}}}})}});
  json root{{"name", "root"}, {"queues", std::move(children)}};
  json config{{"partitions", json::array({json{{"name", "default"}, {"queues", json::array({std::move(root)})}}})}};
  return json{{"model", "yunikorn_limits"}, {"config", std::move(config)}};
}

}  // namespace detail

}  // namespace quota::sim
