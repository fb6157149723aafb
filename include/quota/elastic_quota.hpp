// SPDX-License-Identifier: Apache-2.0
// quota/elastic_quota.hpp — elastic quotas as nos models them: ElasticQuota and
// CompositeElasticQuota with min and max, over-quota labels and fair share by
// preemption.
// Docs: docs/elastic-quota.md
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <quota/capabilities.hpp>
#include <quota/decision.hpp>
#include <quota/detail/checked.hpp>
#include <quota/detail/node_pool.hpp>
#include <quota/detail/priority_counts.hpp>
#include <quota/detail/reserve.hpp>
#include <quota/detail/resource_dims.hpp>
#include <quota/error.hpp>
#include <quota/policy.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// How dimensions that a quota does not list are treated at admission.
enum class elastic_missing_policy : std::uint8_t {
  /// Default: a dimension missing from max (or from every min) is not limited.
  unlimited,
  /// nos / scheduler-plugins compatibility: cpu and memory missing from max or
  /// from the sum of mins count as 0; other resources are not limited.
  upstream,
};

/// Which pods may be preempted for a preemptor.
enum class elastic_preemption_policy : std::uint8_t {
  /// nos: over-quota pods of other quotas, under the fair-share conditions.
  nos,
  /// scheduler-plugins capacity scheduling: lower-priority pods of the same
  /// quota when the preemptor is above its min, else pods of borrowing quotas.
  capacity_scheduling,
};

/// Order in which running pods of a quota fill its min (labels).
enum class elastic_label_order : std::uint8_t {
  /// nos operator: creation time, then priority (LOWER first, as nos's
  /// controller sorts), then request size (smaller first), then name.
  nos,
  /// nos' Key concepts text only (docs/elastic-quota.md#references): creation time, then request size, then name.
  creation_then_size,
};

struct elastic_options {
  elastic_missing_policy missing = elastic_missing_policy::unlimited;
  elastic_preemption_policy preemption = elastic_preemption_policy::nos;
  elastic_label_order label_order = elastic_label_order::nos;
  /// Decide every case as nos's scheduler does (docs/elastic-quota.md,
  /// "Differences from upstream"); implies `missing = upstream`. It changes:
  /// a CompositeElasticQuota counts in the cluster sums once per namespace;
  /// ephemeral-storage and pods are never compared; a quota without
  /// namespaces is accepted and counts nowhere; min > max is accepted;
  /// admission, over-min, fair-share and borrowing comparisons read resources
  /// as nos's comparison helper does; a preemptor takes lower-priority pods of
  /// its own namespace only. (The pod loader's `upstream` argument and
  /// mig_name_match::nos give nos's pod request: no overhead, its MIG names.)
  bool upstream = false;
};

/// An ElasticQuota (namespaces has one entry, composite = false) or a
/// CompositeElasticQuota (composite = true).
struct elastic_quota_spec {
  std::string name;
  /// Namespace of the object itself (for an EQ: the namespace it governs).
  std::string object_namespace;
  std::vector<std::string> namespaces;
  bool composite = false;
  resource_vector min;
  /// nullopt: spec.max omitted, no max at all (nos: MaxEnforced is false).
  /// Present: an absent dimension is unlimited (upstream mode: cpu and memory
  /// count as 0, as nos compares them).
  std::optional<limit_vector> max;
};

/// A pod as the quota model sees it.
struct elastic_pod {
  std::string name;  // unique id, e.g. "namespace/name"
  std::string ns;
  resource_vector request;
  std::int32_t priority = 0;
  std::int64_t created_ms = 0;
};

enum class elastic_capacity : std::uint8_t { none, in_quota, over_quota };

[[nodiscard]] constexpr std::string_view to_string(elastic_capacity c) noexcept {
  switch (c) {
    case elastic_capacity::in_quota:
      return "in-quota";
    case elastic_capacity::over_quota:
      return "over-quota";
    default:
      return "";
  }
}

/// The label key nos maintains.
inline constexpr std::string_view elastic_capacity_label = "nos.nebuly.com/capacity";

/// One label patch: set `pod`'s capacity label from `from` to `to`.
struct elastic_label_change {
  std::string pod;
  elastic_capacity from = elastic_capacity::none;
  elastic_capacity to = elastic_capacity::none;
  friend bool operator==(const elastic_label_change&, const elastic_label_change&) = default;
};

/// The model's name in reasons and victims (equal to its quota-sim kind).
inline constexpr std::string_view elastic_quota_model_name = "elastic_quota";

/// The set of elastic quotas of a cluster and the running pods they account.
class elastic_quota_model {
 public:
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  // Each quota's label-ordered list points at pod states in pods_: a copy
  // points its lists at its own pods (a moved-from map keeps its nodes, so
  // moves need nothing).
  elastic_quota_model(const elastic_quota_model& o)
      : opt_(o.opt_),
        reg_(o.reg_),
        quotas_(o.quotas_),
        ns_(o.ns_),
        pods_(o.pods_),
        total_used_(o.total_used_),
        total_min_(o.total_min_),
        total_nominated_(o.total_nominated_) {
    for (auto& q : quotas_)
      for (auto& p : q.running) p = &pods_.find(p->pod.name)->second;
  }
  elastic_quota_model& operator=(const elastic_quota_model& o) {
    if (this != &o) {
      elastic_quota_model copy(o);
      *this = std::move(copy);
    }
    return *this;
  }
  elastic_quota_model(elastic_quota_model&&) noexcept = default;
  elastic_quota_model& operator=(elastic_quota_model&&) noexcept = default;
  ~elastic_quota_model() = default;

  explicit elastic_quota_model(std::vector<elastic_quota_spec> specs, elastic_options opt = {},
                               const resource_registry* reg = nullptr)
      : opt_(opt), reg_(reg) {
    diagnostics diag;
    std::unordered_map<std::string, std::uint32_t> eq_ns, ceq_ns;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto& s = specs[i];
      const std::string base = (s.composite ? "CompositeElasticQuota " : "ElasticQuota ") +
                               (s.object_namespace.empty() ? "" : s.object_namespace + "/") + s.name;
      if (s.name.empty()) diag.add(base + ".metadata.name", "missing name");
      // nos's scheduler skips a quota that names no namespace
      if (s.namespaces.empty() && !opt_.upstream) diag.add(base + ".spec.namespaces", "no namespace");
      for (const auto& e : s.min)
        if (e.value < 0) diag.add(base + ".spec.min." + res_name(e.id), "negative amount");
      if (s.max)
        for (const auto& e : *s.max)
          if (e.value < 0) diag.add(base + ".spec.max." + res_name(e.id), "negative amount");
      // nos accepts min > max (nothing validates it); by default it is rejected
      if (s.max && !opt_.upstream)
        for (const auto& e : s.min)
          if (auto* m = s.max->find(e.id); m && *m < e.value)
            diag.add(base + ".spec.min." + res_name(e.id),
                     "min " + std::to_string(e.value) + " is greater than max " + std::to_string(*m));
      auto& map = s.composite ? ceq_ns : eq_ns;
      for (std::size_t k = 0; k < s.namespaces.size(); ++k) {
        auto [it, fresh] = map.emplace(s.namespaces[k], static_cast<std::uint32_t>(i));
        // a namespace repeated in one list is one namespace (nos keeps a set)
        if (!fresh && it->second != i)
          diag.add(base + ".spec.namespaces[" + std::to_string(k) + "]",
                   "namespace '" + s.namespaces[k] + "' is already governed by " + specs[it->second].name);
      }
    }
    diag.throw_if_any();
    quotas_.reserve(specs.size());
    for (auto& s : specs) {
      quota_state q;
      q.spec = std::move(s);
      q.in_sum.assign(q.spec.min.size(), 0);
      quotas_.push_back(std::move(q));
    }
    // A CompositeElasticQuota takes precedence over an ElasticQuota (nos's
    // operator deletes the ElasticQuota, its scheduler ignores it meanwhile).
    for (auto& [ns, i] : eq_ns) ns_.emplace(ns, i);
    for (auto& [ns, i] : ceq_ns) ns_[ns] = i;
    // How often each quota counts in the cluster sums: once per namespace it
    // governs in upstream mode (nos sums its per-namespace map), at most once
    // by default; 0 for a superseded ElasticQuota or a quota without namespaces.
    for (auto& [ns, i] : ns_) ++quotas_[i].weight;
    for (auto& q : quotas_) {
      if (!opt_.upstream) q.weight = std::min<std::uint32_t>(q.weight, 1);
      if (q.weight == 0) continue;
      for (const auto& e : q.spec.min) total_min_.add(e.id, detail::checked_mul(e.value, amount{q.weight}));
    }
  }

  [[nodiscard]] const elastic_options& options() const noexcept { return opt_; }
  [[nodiscard]] std::size_t size() const noexcept { return quotas_.size(); }

  /// Index of the quota governing namespace `ns`, or npos.
  [[nodiscard]] std::uint32_t quota_of(std::string_view ns) const {
    auto it = ns_.find(ns);
    return it == ns_.end() ? npos : it->second;
  }
  [[nodiscard]] std::uint32_t quota_index(std::string_view name) const {
    for (std::size_t i = 0; i < quotas_.size(); ++i)
      if (quotas_[i].spec.name == name) return static_cast<std::uint32_t>(i);
    throw unknown_entity_error(error_id::unknown_entity, "elastic quota", name);
  }
  [[nodiscard]] const elastic_quota_spec& spec(std::uint32_t q) const { return at(q).spec; }
  /// How many times quota q counts in the cluster sums (sum of mins, total
  /// usage, over-quota pool): 0 for an ElasticQuota superseded by a
  /// CompositeElasticQuota or a quota without namespaces; 1 otherwise, or in
  /// upstream mode the number of namespaces it governs.
  [[nodiscard]] std::uint32_t weight(std::uint32_t q) const { return at(q).weight; }
  [[nodiscard]] const resource_vector& used(std::uint32_t q) const { return at(q).used; }
  [[nodiscard]] const resource_vector& nominated(std::uint32_t q) const { return at(q).nominated; }
  [[nodiscard]] const resource_vector& total_used() const noexcept { return total_used_; }
  [[nodiscard]] const resource_vector& total_min() const noexcept { return total_min_; }

  /// Sets the requests of pods nominated (not yet bound) in quota q.
  void set_nominated(std::uint32_t q, resource_vector v) {
    auto& s = at(q);
    if (v.any_negative()) throw validation_error(s.spec.name + ".nominated", "negative amount");
    resource_vector t = total_nominated_;
    t -= s.nominated;
    t += v;
    s.nominated = std::move(v);
    total_nominated_ = std::move(t);
  }

  // ---- admission -------------------------------------------------------------

  /// What the PreFilter decides for a pod of namespace ns with `request`.
  /// Allocates nothing when allowed.
  [[nodiscard]] decision check(std::string_view ns, const resource_vector& request) const {
    const std::uint32_t q = quota_of(ns);
    if (q == npos) return decision::allow();
    return check_quota(q, request);
  }

  [[nodiscard]] decision check_quota(std::uint32_t qi, const resource_vector& request) const {
    const auto& q = at(qi);
    decision d;
    evaluate(q, request, q.used, total_used_,
             [&](std::string_view rule, resource_id id, amount requested, amount used, amount limit) {
               d.add(reason{elastic_quota_model_name, rule, q.spec.name, id, res_view(id), requested, used, limit, {}});
               return true;
             });
    return d;
  }

  // ---- accounting ------------------------------------------------------------

  /// A pod started running (was reserved/bound). Appends the label changes of
  /// its quota to `changes`. Throws state_error for a duplicate name and
  /// validation_error for a negative request; nothing changes then.
  void add_pod(const elastic_pod& pod, std::vector<elastic_label_change>* changes = nullptr) {
    add_running(pod.name, pod.ns, pod.request, pod.priority, pod.created_ms, changes);
  }
  /// add_pod of the pod `name` of namespace `ns` without building an
  /// elastic_pod: once warm (a pod released before), it allocates nothing.
  void add_running(std::string_view name, std::string_view ns, const resource_vector& request, std::int32_t priority,
                   std::int64_t created_ms, std::vector<elastic_label_change>* changes = nullptr) {
    // first (one lookup, the duplicate test too): a later failure erases the entry
    auto [it, fresh] = pod_pool_.emplace_key(pods_, name);  // every field is assigned below
    if (!fresh) throw state_error(error_id::state_duplicate, "pod '" + std::string(name) + "' is already running");
    pod_state& ps = it->second;
    std::uint32_t q = npos;
    try {
      if (request.any_negative()) throw validation_error("pod " + std::string(name) + ".request", "negative amount");
      q = quota_of(ns);
      if (q != npos) check_add(q, request);  // overflow: nothing changes
      ps.pod.name.assign(name);
      ps.pod.ns.assign(ns);
      ps.pod.priority = priority;
      ps.pod.created_ms = created_ms;
      ps.quota = q;
      ps.label = elastic_capacity::none;
      ps.pod.request = request;
      if (q != npos) {
        auto& list = quotas_[q].running;
        detail::reserve_more(list, 1);
        quotas_[q].priorities.reserve_one();
        apply_add(q, request);
      }
    } catch (...) {
      pod_pool_.erase(pods_, it);
      throw;
    }
    if (q == npos) return;
    auto& list = quotas_[q].running;
    auto pos = std::lower_bound(list.begin(), list.end(), &ps,
                                [this](const pod_state* a, const pod_state* b) { return before(*a, *b); });
    const auto k = static_cast<std::size_t>(pos - list.begin());
    list.insert(pos, &ps);  // within the capacity reserved: no throw
    quotas_[q].priorities.add(priority);
    relabel_after_insert(quotas_[q], k, changes);
  }

  /// A pod stopped running or was deleted. Throws unknown_entity_error (304)
  /// for a pod that is not running; nothing changes then.
  void remove_pod(std::string_view name, std::vector<elastic_label_change>* changes = nullptr) {
    auto it = pods_.find(name);
    if (it == pods_.end()) throw unknown_entity_error(error_id::unknown_job, "running pod", name);
    const std::uint32_t q = it->second.quota;
    if (q == npos) {
      pod_pool_.erase(pods_, it);
      return;
    }
    auto& s = quotas_[q];
    const resource_vector& req = it->second.pod.request;
    for (const auto& e : req)
      if (s.used.get(e.id) < e.value || total_used_.get(e.id) < detail::checked_mul(e.value, amount{s.weight}))
        throw state_error(error_id::state_negative_usage, "usage of " + s.spec.name + " would go negative");
    if (s.weight == 1)
      total_used_.sub_in_place(req);  // checked above: neither goes negative
    else
      total_used_.sub_in_place(scaled(req, s.weight));
    s.used.sub_in_place(req);
    auto& list = s.running;
    auto pos = std::lower_bound(list.begin(), list.end(), &it->second,
                                [this](const pod_state* a, const pod_state* b) { return before(*a, *b); });
    if (pos == list.end() || *pos != &it->second) pos = std::find(list.begin(), list.end(), &it->second);
    const auto k = static_cast<std::size_t>(pos - list.begin());
    if (k < s.in_quota) {  // leaves the in-quota prefix
      std::size_t i = 0;
      for (const auto& e : s.spec.min) s.in_sum[i++] -= req.get(e.id);
      --s.in_quota;
    }
    list.erase(pos);
    s.priorities.remove(it->second.pod.priority);
    pod_pool_.erase(pods_, it);
    extend_in_quota(s, changes);
  }

  [[nodiscard]] bool running(std::string_view name) const { return pods_.count(name) != 0; }
  [[nodiscard]] elastic_capacity label(std::string_view name) const {
    auto it = pods_.find(name);
    if (it == pods_.end()) throw unknown_entity_error(error_id::unknown_job, "running pod", name);
    return it->second.label;
  }
  [[nodiscard]] const elastic_pod& pod(std::string_view name) const {
    auto it = pods_.find(name);
    if (it == pods_.end()) throw unknown_entity_error(error_id::unknown_job, "running pod", name);
    return it->second.pod;
  }
  /// Running pods of quota q in label order.
  [[nodiscard]] std::vector<const elastic_pod*> running_pods(std::uint32_t q) const {
    std::vector<const elastic_pod*> out;
    for (const auto* p : at(q).running) out.push_back(&p->pod);
    return out;
  }

  /// The registry whose names the model's reasons, messages and introspection
  /// (quota/elastic_quota_json.hpp) carry; it must outlive the model and its
  /// copies. Unbound (nullptr): the well-known names only.
  void rebind_registry(const resource_registry* reg) noexcept { reg_ = reg; }
  [[nodiscard]] const resource_registry* registry() const noexcept { return reg_; }
  /// Whether resource `id` missing from a max that lists others counts as 0
  /// (cpu and memory with the option missing = upstream) rather than unlimited.
  [[nodiscard]] bool missing_max_is_zero(resource_id id) const noexcept { return upstream_zero(id); }

  /// Recomputes every quota's labels (e.g. after loading a snapshot).
  void relabel_all(std::vector<elastic_label_change>* changes = nullptr) {
    for (std::uint32_t q = 0; q < quotas_.size(); ++q) relabel(q, changes);
  }

  // ---- fair share ------------------------------------------------------------

  /// guaranteed over-quota of q in resource r =
  ///   floor(min_q / sum(min_i) x sum(max(0, min_i - used_i))), exact.
  /// Sums count each quota weight(i) times; a quota of weight 0 gets 0.
  [[nodiscard]] amount guaranteed_over_quota(std::uint32_t q, resource_id r) const {
    const amount mq = at(q).spec.min.get(r);
    const amount total_min = total_min_.get(r);
    if (at(q).weight == 0 || mq <= 0 || total_min <= 0) return 0;
    detail::int128 avail = 0;
    for (const auto& s : quotas_) {
      const amount m = s.spec.min.get(r), u = s.used.get(r);
      if (m > u) avail += (detail::int128{m} - u) * s.weight;
    }
    return static_cast<amount>(detail::int128{mq} * avail / total_min);
  }
  /// Over-quota usage of q in r: max(0, used - min).
  [[nodiscard]] amount over_quota_used(std::uint32_t q, resource_id r) const {
    const auto& s = at(q);
    const amount u = s.used.get(r), m = s.spec.min.get(r);
    return u > m ? u - m : 0;
  }

  /// nos condition 2: used_A + request <= min_A + guaranteed_A in every
  /// resource of the request that min_A lists. Upstream mode: used_A +
  /// nominated_A + request, in cpu and memory always and in each other
  /// resource that some quota's min lists or some quota uses (the resources
  /// nos's guaranteed over-quota lists), ephemeral-storage and pods never.
  [[nodiscard]] bool within_guaranteed(std::uint32_t a, const resource_vector& request) const {
    const auto& s = at(a);
    if (opt_.upstream) {
      bool ok = true;
      for_each_id(request, s.used, s.nominated, [&](resource_id id) {
        if (!ok || !compared(id)) return;
        if (!upstream_zero(id) && !s.spec.min.has(id) && !total_min_.has(id) && total_used_.get(id) <= 0) return;
        const detail::int128 lhs = detail::int128{s.used.get(id)} + s.nominated.get(id) + request.get(id);
        if (lhs > detail::int128{s.spec.min.get(id)} + guaranteed_over_quota(a, id)) ok = false;
      });
      return ok;
    }
    for (const auto& e : request) {
      if (e.value <= 0 || !s.spec.min.has(e.id)) continue;
      const detail::int128 lhs = detail::int128{s.used.get(e.id)} + e.value;
      const detail::int128 rhs = detail::int128{s.spec.min.get(e.id)} + guaranteed_over_quota(a, e.id);
      if (lhs > rhs) return false;
    }
    return true;
  }
  /// nos condition 3: used over-quota of B > guaranteed over-quota of B in
  /// some resource of `request`. Upstream mode: in any resource B uses
  /// (nos compares all of them, whatever the preemptor asks for), except
  /// ephemeral-storage and pods.
  [[nodiscard]] bool over_guaranteed(std::uint32_t b, const resource_vector& request) const {
    if (opt_.upstream) {
      for (const auto& e : at(b).used)
        if (compared(e.id) && over_quota_used(b, e.id) > guaranteed_over_quota(b, e.id)) return true;
      return false;
    }
    for (const auto& e : request)
      if (e.value > 0 && over_quota_used(b, e.id) > guaranteed_over_quota(b, e.id)) return true;
    return false;
  }

  /// Can a pod of quota a with `request` preempt running pod `victim_pod`
  /// under nos's rules? (over-quota victim, conditions 2 and 3)
  [[nodiscard]] bool nos_can_preempt(std::uint32_t a, const resource_vector& request,
                                     std::string_view victim_pod) const {
    auto it = pods_.find(victim_pod);
    if (it == pods_.end()) throw unknown_entity_error(error_id::unknown_job, "running pod", victim_pod);
    const auto& v = it->second;
    if (v.quota == npos || v.quota == a || v.label != elastic_capacity::over_quota) return false;
    return within_guaranteed(a, request) && over_guaranteed(v.quota, request);
  }

  /// Victims for a preemptor pod (not running yet) of namespace ns, in the
  /// order they should go: fewest, lowest priority first. Appends nothing when
  /// the pod fits already or no set of allowed victims makes it fit.
  /// Node-level candidates (capacity scheduling's SelectVictimsOnNode): the
  /// running pods the preemptor may take when its quota allows it but no node
  /// has room, lowest importance first (lower priority, then newer). The host
  /// keeps those on one node and reprieves the most important that are not
  /// needed. With a quota: when the preemptor's usage plus its request goes
  /// over its min in a resource min names, the lower-priority pods of its own
  /// quota (upstream mode: of its own namespace) (and, nos, over-quota pods of quotas above their guaranteed
  /// over-quota while the preemptor stays within its own); otherwise pods of
  /// other quotas that use more than their min, at any priority (nos: the
  /// over-quota ones only). Without a quota: nothing (pods outside quotas are
  /// not tracked here).
  void node_candidates(const elastic_pod& preemptor, std::vector<victim>& out) const {
    const std::uint32_t a = quota_of(preemptor.ns);
    if (a == npos) return;
    const auto& qa = quotas_[a];
    const bool more_than_min = over_min_with(qa, preemptor.request, true);
    const bool nos = opt_.preemption == elastic_preemption_policy::nos;
    struct cand {
      const pod_state* p;
      std::string_view rule;
    };
    std::vector<cand> cands;
    if (more_than_min) {
      lower_priority_pods(qa, preemptor, [&](const pod_state* p) {
        cands.push_back({p, "same_quota_lower_priority"});
      });
      if (nos && within_guaranteed(a, preemptor.request))
        for (std::uint32_t b = 0; b < quotas_.size(); ++b) {
          if (b == a || !over_guaranteed(b, preemptor.request)) continue;
          for (const auto* p : over_quota_pods(quotas_[b]))
            if (p->label == elastic_capacity::over_quota) cands.push_back({p, "over_quota_fair_share"});
        }
    } else {
      for (std::uint32_t b = 0; b < quotas_.size(); ++b) {
        if (b == a || !borrowing(b)) continue;
        if (!nos) {
          for (const auto* p : quotas_[b].running) cands.push_back({p, "borrowed_from_guaranteed"});
          continue;
        }
        for (const auto* p : over_quota_pods(quotas_[b]))
          if (p->label == elastic_capacity::over_quota) cands.push_back({p, "borrowed_from_guaranteed"});
      }
    }
    std::sort(cands.begin(), cands.end(), [](const cand& x, const cand& y) {
      if (x.p->pod.priority != y.p->pod.priority) return x.p->pod.priority < y.p->pod.priority;
      if (x.p->pod.created_ms != y.p->pod.created_ms) return x.p->pod.created_ms > y.p->pod.created_ms;
      return x.p->pod.name < y.p->pod.name;
    });
    for (const auto& c : cands)
      out.push_back(victim{c.p->pod.name, elastic_quota_model_name, c.rule, quotas_[c.p->quota].spec.name});
  }

  void victims(const elastic_pod& preemptor, std::vector<victim>& out) const {
    const std::uint32_t a = quota_of(preemptor.ns);
    if (a == npos) return;
    if (check_quota(a, preemptor.request).allowed()) return;
    // a pod over its quota's max cannot be helped by preempting other quotas
    const auto& qa = quotas_[a];
    struct cand {
      const pod_state* p;
      std::string_view rule;
    };
    std::vector<cand> cands;
    if (opt_.preemption == elastic_preemption_policy::nos) {
      if (!within_guaranteed(a, preemptor.request)) return;
      for (std::uint32_t b = 0; b < quotas_.size(); ++b) {
        if (b == a || !over_guaranteed(b, preemptor.request)) continue;
        for (const auto* p : over_quota_pods(quotas_[b]))
          if (p->label == elastic_capacity::over_quota) cands.push_back({p, "over_quota_fair_share"});
      }
    } else {
      if (over_min_with(qa, preemptor.request, opt_.upstream)) {
        lower_priority_pods(qa, preemptor, [&](const pod_state* p) {
          cands.push_back({p, "same_quota_lower_priority"});
        });
      } else {
        for (std::uint32_t b = 0; b < quotas_.size(); ++b) {
          if (b == a || !borrowing(b)) continue;
          for (const auto* p : quotas_[b].running) cands.push_back({p, "borrowed_from_guaranteed"});
        }
      }
    }
    std::sort(cands.begin(), cands.end(), [](const cand& x, const cand& y) {
      if (x.p->pod.priority != y.p->pod.priority) return x.p->pod.priority < y.p->pod.priority;
      if (x.p->pod.created_ms != y.p->pod.created_ms) return x.p->pod.created_ms > y.p->pod.created_ms;
      return x.p->pod.name < y.p->pod.name;
    });
    // Remove candidates until the preemptor passes admission.
    std::vector<resource_vector> used(quotas_.size());
    for (std::size_t i = 0; i < quotas_.size(); ++i) used[i] = quotas_[i].used;
    resource_vector total = total_used_;
    const std::size_t start = out.size();
    for (const auto& c : cands) {
      if (fits_after(a, preemptor.request, used[a], total)) break;
      used[c.p->quota] -= c.p->pod.request;
      total -= scaled(c.p->pod.request, quotas_[c.p->quota].weight);
      out.push_back(victim{c.p->pod.name, elastic_quota_model_name, c.rule, quotas_[c.p->quota].spec.name});
    }
    if (!fits_after(a, preemptor.request, used[a], total)) out.resize(start);
  }

 private:
  struct pod_state {
    elastic_pod pod;
    std::uint32_t quota = npos;
    elastic_capacity label = elastic_capacity::none;
  };
  struct quota_state {
    elastic_quota_spec spec;
    resource_vector used;
    resource_vector nominated;
    std::vector<pod_state*> running;                   // label order
    std::size_t in_quota = 0;                          // the leading pods of running labelled in-quota
    boost::container::small_vector<amount, 8> in_sum;  // their sum on min's resources, in min's order
    std::uint32_t weight = 0;                          // times counted in the cluster sums (weight())
    detail::priority_counts priorities;                // of the running pods
  };
  // f(pod) for each running pod of qa the preemptor may take for its lower
  // priority (its own namespace only in upstream mode); none is read when no
  // pod of qa has a lower priority.
  template <class F>
  void lower_priority_pods(const quota_state& qa, const elastic_pod& preemptor, F&& f) const {
    if (!qa.priorities.any_below(preemptor.priority)) return;
    for (const pod_state* p : qa.running)
      if (p->pod.priority < preemptor.priority && same_scope(*p, preemptor)) f(p);
  }
  // The pods of s labelled over-quota: those after its in-quota prefix.
  static std::span<pod_state* const> over_quota_pods(const quota_state& s) noexcept {
    return std::span<pod_state* const>(s.running).subspan(std::min(s.in_quota, s.running.size()));
  }

  const quota_state& at(std::uint32_t q) const {
    if (q >= quotas_.size()) throw unknown_entity_error(error_id::unknown_entity, "elastic quota", std::to_string(q));
    return quotas_[q];
  }
  quota_state& at(std::uint32_t q) {
    if (q >= quotas_.size()) throw unknown_entity_error(error_id::unknown_entity, "elastic quota", std::to_string(q));
    return quotas_[q];
  }
  std::string res_name(resource_id id) const { return detail::resource_label(reg_, id); }
  std::string_view res_view(resource_id id) const noexcept { return detail::resource_label_view(reg_, id); }
  /// cpu and memory missing from a limit count as 0 (nos's comparison helper).
  bool upstream_zero(resource_id id) const noexcept {
    return (opt_.upstream || opt_.missing == elastic_missing_policy::upstream) &&
           (id == resources::cpu || id == resources::memory);
  }
  /// nos never compares ephemeral-storage or pods (its comparison helper reads
  /// cpu, memory and the scalar resources only).
  bool compared(resource_id id) const noexcept {
    return !opt_.upstream || (id != resources::ephemeral_storage && id != resources::pods);
  }
  std::optional<amount> limit_of(const std::optional<limit_vector>& max, resource_id id) const noexcept {
    if (!max || !compared(id)) return std::nullopt;  // no spec.max: nothing enforced
    if (const amount* p = max->find(id)) return *p;
    if (upstream_zero(id)) return amount{0};
    return std::nullopt;
  }
  std::optional<amount> limit_of_min(resource_id id) const noexcept {
    if (!compared(id)) return std::nullopt;
    if (const amount* p = total_min_.find(id)) return *p;
    if (upstream_zero(id)) return amount{0};
    return std::nullopt;
  }
  /// Calls f(id, requested) for each resource the rules compare, ascending:
  /// by default the resources `request` asks for (a positive amount); in
  /// upstream mode every resource present in `request`, b or c.
  template <class F>
  void for_each_compared(const resource_vector& request, const resource_vector& b, const resource_vector& c,
                         F&& f) const {
    if (opt_.upstream) {
      for_each_id(request, b, c, [&](resource_id id) { f(id, request.get(id)); });
      return;
    }
    for (const auto& e : request)
      if (e.value > 0) f(e.id, e.value);
  }
  /// Calls f(id) once for each resource present in a, b or c, ascending.
  template <class F>
  static void for_each_id(const resource_vector& a, const resource_vector& b, const resource_vector& c, F&& f) {
    auto ia = a.begin(), ib = b.begin(), ic = c.begin();
    while (ia != a.end() || ib != b.end() || ic != c.end()) {
      resource_id id = no_resource;
      if (ia != a.end()) id = ia->id;
      if (ib != b.end() && ib->id < id) id = ib->id;
      if (ic != c.end() && ic->id < id) id = ic->id;
      f(id);
      if (ia != a.end() && ia->id == id) ++ia;
      if (ib != b.end() && ib->id == id) ++ib;
      if (ic != c.end() && ic->id == id) ++ic;
    }
  }
  /// v with every amount times w (v itself for w = 1). Throws overflow_error.
  static resource_vector scaled(const resource_vector& v, std::uint32_t w) {
    resource_vector out = v;
    if (w != 1)
      for (const auto& e : v) out.set(e.id, detail::checked_mul(e.value, amount{w}));
    return out;
  }
  /// The admission rules for `request` in quota q whose usage is `used_q`
  /// with the cluster usage `total`: calls fail(rule, resource, requested,
  /// used, limit) for each limit exceeded while it returns true. By default
  /// only the requested resources are compared; upstream mode compares every
  /// resource of the usage too (nos: used + request > limit in any resource).
  template <class Fail>
  void evaluate(const quota_state& q, const resource_vector& request, const resource_vector& used_q,
                const resource_vector& total, Fail&& fail) const {
    bool go = true;
    for_each_compared(request, used_q, q.nominated, [&](resource_id id, amount r) {
      if (!go) return;
      if (auto lim = limit_of(q.spec.max, id)) {
        const amount u = used_q.get(id), n = q.nominated.get(id);
        if (detail::int128{u} + n + r > *lim) go = fail("over_max", id, r, detail::checked_add(u, n), *lim);
      }
    });
    for_each_compared(request, total, total_nominated_, [&](resource_id id, amount r) {
      if (!go) return;
      if (auto lim = limit_of_min(id)) {
        const amount u = total.get(id), n = total_nominated_.get(id);
        if (detail::int128{u} + n + r > *lim)
          go = fail("total_guaranteed_exhausted", id, r, detail::checked_add(u, n), *lim);
      }
    });
  }
  /// Would quota q go over its min with `request` (and its nominated pods when
  /// `with_nominated`)? By default: in a requested resource min lists.
  /// Upstream mode (nos's usedOverMinWith): in cpu or memory (missing = 0) or
  /// a resource min lists, counting the usage of every resource.
  bool over_min_with(const quota_state& q, const resource_vector& request, bool with_nominated) const {
    static const resource_vector none;
    const resource_vector& nom = with_nominated ? q.nominated : none;
    bool over = false;
    for_each_compared(request, q.used, nom, [&](resource_id id, amount r) {
      if (over || !compared(id)) return;
      if (!q.spec.min.has(id) && !upstream_zero(id)) return;
      if (detail::int128{q.used.get(id)} + nom.get(id) + r > q.spec.min.get(id)) over = true;
    });
    return over;
  }
  /// May a preemptor take lower-priority pods of its own quota from the pod
  /// p? By default from any namespace of the quota; upstream mode only from
  /// the preemptor's namespace (nos compares namespaces, so a composite
  /// quota's other namespaces are out of reach).
  bool same_scope(const pod_state& p, const elastic_pod& preemptor) const noexcept {
    return !opt_.upstream || p.pod.ns == preemptor.ns;
  }
  /// Does quota b use more than its min? Upstream mode (nos's usedOverMin):
  /// only cpu, memory (missing = 0) and the resources min lists.
  bool borrowing(std::uint32_t b) const {
    for (const auto& e : quotas_[b].used) {
      if (!compared(e.id) || (opt_.upstream && !quotas_[b].spec.min.has(e.id) && !upstream_zero(e.id))) continue;
      if (e.value > quotas_[b].spec.min.get(e.id)) return true;
    }
    return false;
  }
  bool fits_after(std::uint32_t a, const resource_vector& req, const resource_vector& used_a,
                  const resource_vector& total) const {
    bool ok = true;
    evaluate(quotas_[a], req, used_a, total, [&](std::string_view, resource_id, amount, amount, amount) {
      ok = false;
      return false;
    });
    return ok;
  }

  static int compare_size(const resource_vector& a, const resource_vector& b) noexcept {
    auto ia = a.begin(), ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
      resource_id id = no_resource;
      if (ia != a.end()) id = ia->id;
      if (ib != b.end() && ib->id < id) id = ib->id;
      const amount va = (ia != a.end() && ia->id == id) ? (ia++)->value : 0;
      const amount vb = (ib != b.end() && ib->id == id) ? (ib++)->value : 0;
      if (va != vb) return va < vb ? -1 : 1;
    }
    return 0;
  }
  bool before(const pod_state& x, const pod_state& y) const noexcept {
    if (x.pod.created_ms != y.pod.created_ms) return x.pod.created_ms < y.pod.created_ms;
    if (opt_.label_order == elastic_label_order::nos && x.pod.priority != y.pod.priority)
      return x.pod.priority < y.pod.priority;  // nos: lower priority first
    if (int c = compare_size(x.pod.request, y.pod.request); c != 0) return c < 0;
    return x.pod.name < y.pod.name;
  }

  // Labels (nos's capacity label): the running pods of a quota in label order
  // are in-quota while their running sum stays within min on every resource
  // min lists, over-quota from the first pod past it. Requests are never
  // negative, so the in-quota pods are the longest prefix whose sum fits:
  // each quota keeps that prefix's length and sum, and a pod added or
  // removed moves only the pods at its boundary.

  /// Whether the in-quota prefix of s, plus `request`, stays within min.
  static bool fits_in_quota(const quota_state& s, const resource_vector& request) noexcept {
    std::size_t i = 0;
    for (const auto& e : s.spec.min) {
      amount r = 0;
      if (!detail::try_add(s.in_sum[i++], request.get(e.id), r) || r > e.value) return false;
    }
    return true;
  }
  static void add_in_quota(quota_state& s, const resource_vector& request) noexcept {
    std::size_t i = 0;
    for (const auto& e : s.spec.min) s.in_sum[i++] += request.get(e.id);  // fits_in_quota said it fits
    ++s.in_quota;
  }
  static void set_label(pod_state& p, elastic_capacity want, std::vector<elastic_label_change>* changes) {
    if (p.label == want) return;
    if (changes) changes->push_back({p.pod.name, p.label, want});
    p.label = want;
  }
  /// Pods after the in-quota prefix join it while they fit (after a removal).
  static void extend_in_quota(quota_state& s, std::vector<elastic_label_change>* changes) {
    while (s.in_quota < s.running.size() && fits_in_quota(s, s.running[s.in_quota]->pod.request)) {
      pod_state& p = *s.running[s.in_quota];
      add_in_quota(s, p.pod.request);
      set_label(p, elastic_capacity::in_quota, changes);
    }
  }
  /// Labels after the pod at position k of s.running was inserted.
  static void relabel_after_insert(quota_state& s, std::size_t k, std::vector<elastic_label_change>* changes) {
    pod_state& p = *s.running[k];
    if (k > s.in_quota) {  // behind the first over-quota pod
      set_label(p, elastic_capacity::over_quota, changes);
      return;
    }
    if (fits_in_quota(s, p.pod.request)) {  // the next pod did not fit before p: it does not now
      add_in_quota(s, p.pod.request);
      set_label(p, elastic_capacity::in_quota, changes);
      return;
    }
    // The prefix with p (positions 0..in_quota) does not fit: drop pods from
    // its end until it does; those become over-quota.
    const std::size_t last = s.in_quota;  // the prefix with p ends here
    std::size_t len = last + 1;
    bool with_p = true;
    while (len > 0 && with_p && !fits_in_quota(s, p.pod.request)) {
      --len;
      if (len == k) {
        with_p = false;
      } else {
        std::size_t i = 0;
        for (const auto& e : s.spec.min) s.in_sum[i++] -= s.running[len]->pod.request.get(e.id);
      }
    }
    if (with_p) {
      std::size_t i = 0;
      for (const auto& e : s.spec.min) s.in_sum[i++] += p.pod.request.get(e.id);
    }
    s.in_quota = len;
    if (k < len) set_label(p, elastic_capacity::in_quota, changes);
    for (std::size_t i = len; i <= last; ++i) set_label(*s.running[i], elastic_capacity::over_quota, changes);
  }
  /// Every label of quota q again, walking all its running pods.
  void relabel(std::uint32_t q, std::vector<elastic_label_change>* changes) {
    auto& s = quotas_[q];
    s.in_sum.assign(s.spec.min.size(), 0);
    s.in_quota = 0;
    bool over = false;
    for (auto* p : s.running) {
      if (!over && fits_in_quota(s, p->pod.request))
        add_in_quota(s, p->pod.request);
      else
        over = true;
      set_label(*p, over ? elastic_capacity::over_quota : elastic_capacity::in_quota, changes);
    }
  }
  /// Throws overflow_error when adding `request` to quota q's usage or the
  /// cluster's would overflow (apply_add then cannot).
  void check_add(std::uint32_t q, const resource_vector& request) const {
    const auto& s = quotas_[q];
    // the common case, in one lockstep walk per sum: every resource present, no overflow
    if (s.weight == 1 && s.used.can_add_in_place(request) && total_used_.can_add_in_place(request)) return;
    for (const auto& e : request) {
      amount r = 0;
      if (!detail::try_add(s.used.get(e.id), e.value, r) ||
          !detail::try_add(total_used_.get(e.id), detail::checked_mul(e.value, amount{s.weight}), r))
        detail::throw_overflow("elastic quota usage");
    }
  }
  /// Adds `request` to quota q's usage and the cluster's (check_add first).
  void apply_add(std::uint32_t q, const resource_vector& request) {
    auto& s = quotas_[q];
    s.used.add_in_place(request);  // check_add: no overflow
    try {
      if (s.weight == 1)
        total_used_.add_in_place(request);
      else
        total_used_.add_in_place(scaled(request, s.weight));
    } catch (...) {
      s.used.sub_in_place(request);
      throw;
    }
  }

  elastic_options opt_;
  const resource_registry* reg_ = nullptr;
  std::vector<quota_state> quotas_;
  std::unordered_map<std::string, std::uint32_t, detail::string_hash, std::equal_to<>> ns_;
  using pod_map = std::unordered_map<std::string, pod_state, detail::string_hash, std::equal_to<>>;
  pod_map pods_;
  detail::node_pool<pod_map> pod_pool_;  // an admission after a release allocates no node
  resource_vector total_used_, total_min_, total_nominated_;
};

/// quota::policy adapter: job.ns selects the quota, job.request is the pod
/// request, job.id names the pod. It owns its elastic_quota_model (a copy of an
/// adapter is an independent model). Order (quota/capabilities.hpp): one
/// queue for every pod, higher priority first, then earlier creation, as
/// nos's and capacity scheduling's queue sort.
class elastic_quota_policy {
 public:
  explicit elastic_quota_policy(elastic_quota_model set) : set_(std::move(set)) {}
  [[nodiscard]] std::string_view policy_name() const noexcept { return elastic_quota_model_name; }
  [[nodiscard]] decision check(const job& j) const { return set_.check(j.ns, j.request); }
  void commit(const job& j) { set_.add_running(j.id, j.ns, j.request, j.priority, j.created_ms, nullptr); }
  void release(std::string_view id) { set_.remove_pod(id, nullptr); }
  void victims(const job& j, std::vector<victim>& out) const { set_.victims(to_pod(j), out); }
  /// Node-level rule (quota/capabilities.hpp): elastic_quota_model::node_candidates.
  void node_candidates(const job& j, std::vector<victim>& out) const { set_.node_candidates(to_pod(j), out); }
  [[nodiscard]] elastic_quota_model& model() noexcept { return set_; }
  [[nodiscard]] const elastic_quota_model& model() const noexcept { return set_; }

  [[nodiscard]] std::string_view pending_queue(const job&) const noexcept { return {}; }
  [[nodiscard]] std::weak_ordering compare_pending(const job& a, const job& b) const noexcept {
    return default_pending_order(a, b);
  }
  [[nodiscard]] std::weak_ordering compare_heads(const job& a, const job& b) const noexcept {
    return default_pending_order(a, b);
  }

 private:
  static elastic_pod to_pod(const job& j) { return elastic_pod{j.id, j.ns, j.request, j.priority, j.created_ms}; }
  elastic_quota_model set_;
};
static_assert(policy<elastic_quota_policy>);
static_assert(order_aware<elastic_quota_policy>);
static_assert(node_preemption_aware<elastic_quota_policy>);

}  // namespace quota
