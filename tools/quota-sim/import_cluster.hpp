// SPDX-License-Identifier: Apache-2.0
// quota-sim import cluster: a `kubectl get ... -A -o json` dump of a live
// cluster (one List of mixed kinds) read as a scenario: nodes, pods, gangs,
// claims and quota objects; every problem is collected, nothing written on one.
// Docs: docs/cluster-import.md
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <quota/detail/rfc3339.hpp>
#include <quota/error.hpp>
#include <quota/json.hpp>
#include <quota/kai_claims_json.hpp>
#include <quota/resource_vector.hpp>

#include "generate.hpp"
#include "models.hpp"
#include "scenario.hpp"
#include "simulator.hpp"

namespace quota::sim {

/// The label and annotation keys a pod's queue is read from (upstream's
/// names: Volcano scheduling/v1beta1/labels.go, Kueue
/// pkg/controller/constants, KAI pkg/common/constants).
inline constexpr const char* volcano_group_annotation = "scheduling.k8s.io/group-name";
inline constexpr const char* volcano_queue_annotation = "scheduling.volcano.sh/queue-name";
inline constexpr const char* kueue_queue_label = "kueue.x-k8s.io/queue-name";
inline constexpr const char* kai_queue_label = "kai.scheduler/queue";
/// YuniKorn's user of a pod: {"user": ..., "groups": [...]} in this annotation;
/// without it the user is anonymous (yunikorn-core pkg/common/constants.go).
inline constexpr const char* yunikorn_user_annotation = "yunikorn.apache.org/user.info";
/// The annotation the resource claim controller puts on a claim it makes
/// for a pod from a template: the pod's claim entry (k8s.io/api resource
/// PodResourceClaimAnnotation).
inline constexpr const char* pod_claim_name_annotation = "resource.kubernetes.io/pod-claim-name";

struct cluster_import_options {
  std::string dump_file;
  std::string yunikorn_file;          // optional queues.yaml: a yunikorn_limits entry
  std::vector<std::string> policies;  // models whose quotas are derived
  bool from_objects = false;          // the dump's quota objects configure their models
  std::string queue_by;               // volcano | kueue | kai | namespace; "" = by the dump
  std::string now;                    // RFC 3339; "" = the first waiting pod's creationTimestamp
  std::string duration = "1h";        // D | uniform:A-B | exponential:MEAN | end
  std::uint64_t seed = 1;
};

/// What the import read, left out and decided (printed by the command and
/// summed up in the scenario's description).
struct cluster_import_summary {
  std::size_t nodes = 0, running = 0, pending = 0;
  std::map<std::string, std::size_t> skipped_pods;       // reason -> pods
  std::vector<std::string> excluded_nodes;               // "name (cordoned)"
  std::map<std::string, std::size_t> kinds;              // kind -> objects read
  std::map<std::string, std::size_t> unknown_kinds;      // kind -> objects skipped
  std::vector<std::string> models_from_objects;          // models configured by the dump
  std::size_t gangs = 0, gang_pods = 0;                  // PodGroups gathered, their waiting pods
  std::map<std::string, std::size_t> notes;              // what the scenario cannot carry -> PodGroups
  std::size_t template_claims = 0;                       // per-pod claims made from templates
  std::size_t workload_jobs = 0;                         // jobs made from Workloads that have no pods
  std::map<std::string, std::size_t> skipped_workloads;  // reason -> Workloads
  std::string queue_by, duration;
};

struct cluster_import {
  json scenario;
  cluster_import_summary summary;
};

/// A --duration rule, checked. `sample` gives one duration (ms; -1: to the end).
class duration_rule {
 public:
  explicit duration_rule(const std::string& text, std::uint64_t seed) : rng_{seed} {
    auto bad = [&](const std::string& why) {
      throw validation_error("--duration", "'" + text + "': " + why +
                                               " (expected a duration such as 2h, uniform:30m-4h, "
                                               "exponential:2h or end)");
    };
    auto dur = [&](const std::string& s) {
      const auto d = parse_duration(json(s));
      if (!d || *d >= default_limits().max_time_ms || s == "end") bad("'" + s + "' is not a duration");
      return *d;
    };
    if (text == "end") {
      kind_ = kind::end;
    } else if (text.rfind("uniform:", 0) == 0) {
      const std::string r = text.substr(8);
      const auto dash = r.find('-');
      if (dash == std::string::npos) bad("a uniform range is LOW-HIGH");
      lo_ = dur(r.substr(0, dash));
      hi_ = dur(r.substr(dash + 1));
      if (hi_ < lo_) bad("HIGH is below LOW");
      kind_ = kind::uniform;
    } else if (text.rfind("exponential:", 0) == 0) {
      lo_ = dur(text.substr(12));
      if (lo_ == 0) bad("the mean must be positive");
      kind_ = kind::exponential;
    } else {
      lo_ = dur(text);
    }
  }
  std::int64_t sample() {
    switch (kind_) {
      case kind::end:
        return -1;
      case kind::fixed:
        return lo_;
      case kind::uniform:
        return lo_ + static_cast<std::int64_t>(rng_.below(static_cast<std::uint64_t>(hi_ - lo_) + 1));
      case kind::exponential: {
        // inversion of a 53-bit uniform in (0, 1]; capped at 50 means
        const double u = static_cast<double>((rng_.next() >> 11) + 1) * 0x1p-53;
        const double x = -std::log(u) * static_cast<double>(lo_);
        return static_cast<std::int64_t>(std::min(x, 50.0 * static_cast<double>(lo_)));
      }
    }
    return lo_;
  }

 private:
  enum class kind { fixed, uniform, exponential, end } kind_ = kind::fixed;
  std::int64_t lo_ = 0, hi_ = 0;
  splitmix64 rng_;
};

namespace detail {

/// One object of the dump: its kind and Kind/namespace/name for messages.
struct dump_object {
  const json* obj = nullptr;
  std::string kind, ns, name, label;  // label: Kind/namespace/name (Kind/name when cluster-scoped)
};

/// Where a field is, for messages: a base (Kind/namespace/name) and a
/// suffix, joined only when a problem is reported.
struct where {
  const std::string& base;
  std::string_view sub;
  const char* list = nullptr;  // an element of a list: sub.list[index]tail
  std::size_t index = 0;
  std::string_view tail = {};
  [[nodiscard]] std::string operator+(std::string_view more) const {
    std::string s = base;
    s.append(sub);
    if (list) s.append(".").append(list).append("[").append(std::to_string(index)).append("]").append(tail);
    s.append(more);
    return s;
  }
};

/// A Volcano PodGroup: its spec, and its pods as the import meets them.
struct podgroup_info {
  const dump_object* obj = nullptr;
  bool volcano = true;                        // a Volcano PodGroup; else a Kueue Workload owned by its pods
  const char* min_field = ".spec.minMember";  // where min_member is read
  std::string queue, priority_class;
  std::int64_t min_member = 0;
  json min_resources;  // spec.minResources, checked: the resources a pod requests (null: not stated)
  std::size_t running = 0, succeeded = 0;
  std::vector<std::size_t> waiting;  // indices into the import's waiting members
};

/// A Kueue Workload's pod set (kueue.x-k8s.io WorkloadSpec.podSets[]).
struct pod_set {
  std::string name;
  std::int64_t count = 1, min_count = 0;  // min_count 0: no partial admission
  const json* spec = nullptr;             // template.spec
};

/// The member `key` of an object, or nullptr (absent, null, not an object).
inline const json* member(const json& o, std::string_view key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

/// The string at `key` of an object (absent or null: ""); a value of another
/// type is a problem of `w.key`.
inline const std::string& str_at(const json& o, const char* key, const where& w, diagnostics& d) {
  static const std::string none;
  const json* v = member(o, key);
  if (!v) return none;
  if (!v->is_string()) {
    d.add(w + (std::string(".") + key), "expected a string");
    return none;
  }
  return v->get_ref<const std::string&>();
}

/// A pod's or Workload's `spec.priority` (a 32-bit integer, else a problem of
/// `<label>.spec.priority`) and `spec.priorityClassName` into the scenario job `j`.
inline void read_priority(const json& spec, const std::string& label, json& j, diagnostics& d) {
  if (const json* prio = member(spec, "priority")) {
    if (!prio->is_number_integer() || prio->get<std::int64_t>() < INT32_MIN || prio->get<std::int64_t>() > INT32_MAX)
      d.add(label + ".spec.priority", "expected a 32-bit integer");
    else
      j["priority"] = *prio;
  }
  if (const std::string& pc = str_at(spec, "priorityClassName", {label, ".spec"}, d); !pc.empty())
    j["priority_class"] = pc;
}

/// The string map at `key` (labels, annotations, nodeSelector), checked:
/// nullptr when absent or malformed.
inline const json* map_at(const json& o, const char* key, const where& w, diagnostics& d) {
  const json* m = member(o, key);
  if (!m) return nullptr;
  if (!m->is_object()) {
    d.add(w + (std::string(".") + key), "expected an object of strings");
    return nullptr;
  }
  bool good = true;
  for (auto it = m->begin(); it != m->end(); ++it)
    if (!it.value().is_string()) {
      d.add(w + (std::string(".") + key + "." + it.key()), "expected a string");
      good = false;
    }
  return good ? m : nullptr;
}

/// The value of `key` in a checked string map, or nullptr.
inline const std::string* map_value(const json* m, std::string_view key) {
  if (!m) return nullptr;
  const auto it = m->find(key);
  return it == m->end() ? nullptr : &it->get_ref<const std::string&>();
}

inline const json& section(const json& o, const char* key) {
  static const json empty = json::object();
  const json* v = member(o, key);
  return v && v->is_object() ? *v : empty;
}

/// A resource list (requests, overhead, allocatable) in base units. Plain
/// quantities are read here; anything else goes through the library's
/// parser, whose problem names the field.
inline resource_vector resources_at(const json& o, const char* key, resource_registry& reg, const where& w,
                                    diagnostics& d) {
  resource_vector out;
  const json* list = member(o, key);
  if (!list) return out;
  // the slow path: the library's parser, whose problem names the field
  auto slow = [&](const json& l) {
    for (const auto& e : parse_resource_list(l, reg, w + (std::string(".") + key), &d)) out.set(e.id, e.value);
  };
  if (!list->is_object()) {
    slow(*list);
    return out;
  }
  for (auto it = list->begin(); it != list->end(); ++it) {
    const json& v = it.value();
    quantity q;
    std::int64_t amount = 0;
    std::optional<resource_id> id;
    try {
      id = reg.intern(it.key());
    } catch (const error&) {
      id.reset();
    }
    if (id && v.is_string() && quantity::try_parse(v.get_ref<const std::string&>(), q) && !q.is_negative() &&
        q.to_base_into(reg.scale(*id), amount) == quota::detail::quantity_status::ok) {
      out.set(*id, amount);
      continue;
    }
    json one = json::object();
    one[it.key()] = v;
    slow(one);
  }
  return out;
}

/// The Kubernetes effective request of a pod: the regular containers plus
/// the sidecars (init containers with restartPolicy Always), or the largest
/// init phase (a regular init container plus the sidecars started before
/// it) when larger, per resource; plus spec.overhead.
inline resource_vector effective_request(const json& spec, resource_registry& reg, const std::string& label,
                                         diagnostics& d) {
  resource_vector sum, sidecars, peak;
  auto request_of = [&](const json& c, const char* list, std::size_t i) {
    return resources_at(section(c, "resources"), "requests", reg, where{label, ".spec", list, i, ".resources"}, d);
  };
  auto maximum = [](resource_vector& into, const resource_vector& v) {
    for (const auto& e : v)
      if (into.get(e.id) < e.value) into.set(e.id, e.value);
  };
  if (const json* cs = member(spec, "containers")) {
    if (!cs->is_array())
      d.add(label + ".spec.containers", "expected an array");
    else
      for (std::size_t i = 0; i < cs->size(); ++i) sum.add_in_place(request_of((*cs)[i], "containers", i));
  }
  if (const json* cs = member(spec, "initContainers")) {
    if (!cs->is_array()) {
      d.add(label + ".spec.initContainers", "expected an array");
    } else {
      for (std::size_t i = 0; i < cs->size(); ++i) {
        const json& c = (*cs)[i];
        const resource_vector r = request_of(c, "initContainers", i);
        const json* policy = member(c, "restartPolicy");
        if (policy && policy->is_string() && policy->get_ref<const std::string&>() == "Always") {
          sum.add_in_place(r);
          sidecars.add_in_place(r);
        } else {
          resource_vector phase = r;
          phase.add_in_place(sidecars);
          maximum(peak, phase);
        }
      }
    }
  }
  maximum(sum, peak);
  sum.add_in_place(resources_at(spec, "overhead", reg, where{label, ".spec"}, d));
  return sum;
}

/// True when the node's Ready condition is True (a node without conditions,
/// as a hand-written dump has, counts as ready).
inline bool node_ready(const json& status) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return true;
  for (const auto& c : status["conditions"])
    if (c.is_object() && c.value("type", json()) == "Ready") return c.value("status", json()) == "True";
  return true;
}

/// The JSON tree of a dump's text; parse_error (invalid JSON, with the byte
/// and path) or validation_error (a bound, a duplicate key: the path) name `what`.
[[nodiscard]] inline json parse_dump_text(const std::string& text, const std::string& what,
                                          const input_limits& lim = default_limits()) {
  return parse_scenario_text(text, what, lim);
}

}  // namespace detail

/// Maps a parsed dump (`yunikorn`: the parsed queues.yaml, or null) to a
/// scenario document. Throws validation_error listing every problem.
[[nodiscard]] inline cluster_import import_cluster_doc(const json& dump, const cluster_import_options& o,
                                                       const json& yunikorn = json()) {
  using detail::dump_object;
  diagnostics d;
  cluster_import out;
  auto& sum = out.summary;
  register_models();
  duration_rule durations(o.duration, o.seed);
  sum.duration = o.duration;

  // 1. the objects, by kind; duplicates are errors
  static const std::set<std::string> known = {
      "Node",       "Pod",      "Namespace",      "ElasticQuota", "CompositeElasticQuota",
      "Queue",      "PodGroup", "ResourceClaim",  "DeviceClass",  "ClusterQueue",
      "LocalQueue", "Cohort",   "ResourceFlavor", "Workload",     "ResourceClaimTemplate"};
  std::map<std::string, std::vector<dump_object>, std::less<>> by_kind;
  // a List (or an array) of objects, or one object
  const json* items = nullptr;
  std::string_view list_path;  // "items" or "" (an array)
  if (dump.is_array()) {
    items = &dump;
  } else if (const json* it = detail::member(dump, "items");
             it && it->is_array() &&
             (!dump.contains("kind") ||
              (dump["kind"].is_string() && dump["kind"].get<std::string>().ends_with("List")))) {
    items = it;
    list_path = "items";
  } else if (!dump.is_object()) {
    throw validation_error("$",
                           "expected a List, an array of objects or one object, got " + std::string(dump.type_name()));
  }
  const std::size_t count = items ? items->size() : 1;
  std::unordered_set<std::string> seen;
  seen.reserve(count);
  const std::string root = "$";
  for (std::size_t i = 0; i < count; ++i) {
    const json& obj = items ? (*items)[i] : dump;
    const std::string path = items ? std::string(list_path) + "[" + std::to_string(i) + "]" : root;
    const detail::where at{path, ""};
    if (!obj.is_object()) {
      d.add(path, "expected an object");
      continue;
    }
    const std::string& kind = detail::str_at(obj, "kind", at, d);
    if (kind.empty()) {
      d.add(path + ".kind", "missing: every object of a dump names its kind");
      continue;
    }
    if (!known.count(kind)) {
      ++sum.unknown_kinds[kind];
      continue;
    }
    const json& md = detail::section(obj, "metadata");
    dump_object x;
    x.obj = &obj;
    x.kind = kind;
    x.name = detail::str_at(md, "name", detail::where{path, ".metadata"}, d);
    x.ns = detail::str_at(md, "namespace", detail::where{path, ".metadata"}, d);
    if (kind == "Queue") {
      // two API groups name a kind Queue: Volcano's and KAI's
      const std::string& api = detail::str_at(obj, "apiVersion", at, d);
      const std::string group = api.substr(0, api.find('/'));
      if (group == "scheduling.volcano.sh")
        x.kind = "Queue (volcano)";
      else if (group == "scheduling.run.ai")
        x.kind = "Queue (kai)";
      else {
        ++sum.unknown_kinds["Queue (" + api + ")"];
        continue;
      }
    }
    if (x.name.empty()) {
      d.add(path + ".metadata.name", kind + ": missing");
      continue;
    }
    x.label.reserve(kind.size() + x.ns.size() + x.name.size() + 2);
    x.label.append(kind).append("/");
    if (!x.ns.empty()) x.label.append(x.ns).append("/");
    x.label.append(x.name);
    if (!seen.insert(kind == "Queue" ? x.kind + "/" + x.label : x.label).second) {
      d.add(path, x.label + ": appears twice in the dump");
      continue;
    }
    auto bk = by_kind.find(x.kind);
    if (bk == by_kind.end()) bk = by_kind.emplace(x.kind, std::vector<dump_object>{}).first;
    bk->second.push_back(std::move(x));
  }
  for (const auto& [k, v] : by_kind) sum.kinds[k] = v.size();
  d.throw_if_any();
  auto objects_of = [&](const char* kind) -> const std::vector<dump_object>& {
    static const std::vector<dump_object> none;
    const auto it = by_kind.find(kind);
    return it == by_kind.end() ? none : it->second;
  };

  // 2. the queue rule
  sum.queue_by = o.queue_by;
  if (sum.queue_by.empty())
    sum.queue_by = !objects_of("Queue (volcano)").empty() ? "volcano"
                   : !objects_of("LocalQueue").empty()    ? "kueue"
                   : !objects_of("Queue (kai)").empty()   ? "kai"
                                                          : "namespace";
  if (sum.queue_by != "volcano" && sum.queue_by != "kueue" && sum.queue_by != "kai" && sum.queue_by != "namespace")
    throw validation_error("--queue-by", "expected volcano, kueue, kai or namespace, got '" + sum.queue_by + "'");
  // Volcano PodGroups (scheduling/v1beta1 PodGroupSpec: minMember, queue,
  // priorityClassName, minResources)
  std::unordered_map<std::string, detail::podgroup_info> podgroups;  // ns/name -> group
  for (const auto& pg : objects_of("PodGroup")) {
    const json& spec = detail::section(*pg.obj, "spec");
    const detail::where at{pg.label, ".spec"};
    detail::podgroup_info g;
    g.obj = &pg;
    const std::string& q = detail::str_at(spec, "queue", at, d);
    g.queue = q.empty() ? "default" : q;
    g.priority_class = detail::str_at(spec, "priorityClassName", at, d);
    if (const json* mm = detail::member(spec, "minMember")) {
      if (!mm->is_number_integer() || mm->get<std::int64_t>() < 0 || mm->get<std::int64_t>() > INT32_MAX)
        d.add(pg.label + ".spec.minMember", "expected an integer from 0 to 2147483647, got " + mm->dump());
      else
        g.min_member = mm->get<std::int64_t>();
    }
    if (const json* mr = detail::member(spec, "minResources")) {
      // Volcano's job controller writes the pods' quota usage there
      // (CalTaskRequests: pods, count/pods, cpu and requests.cpu,
      // requests.nvidia.com/gpu, limits.*): the requests are the plain names
      // and requests.<name>
      json plain = json::object();
      if (!mr->is_object()) {
        d.add(pg.label + ".spec.minResources", "expected an object of quantities");
      } else {
        for (auto it = mr->begin(); it != mr->end(); ++it) {
          const std::string& k = it.key();
          if (k == "pods" || k.rfind("count/", 0) == 0 || k.rfind("limits.", 0) == 0) continue;
          if (k.rfind("requests.", 0) == 0) {
            if (!mr->contains(k.substr(9))) plain[k.substr(9)] = it.value();
          } else {
            plain[k] = it.value();
          }
        }
        resource_registry scratch;
        const std::size_t before = d.size();
        const json holder{{"minResources", plain}};
        (void)detail::resources_at(holder, "minResources", scratch, at, d);
        if (d.size() == before) g.min_resources = std::move(plain);
      }
    }
    podgroups.emplace(pg.ns + "/" + pg.name, std::move(g));
  }
  // DRA ResourceClaimTemplates (resource.k8s.io/v1: spec.metadata and
  // spec.spec, a ResourceClaimSpec), checked as the claims they make
  std::unordered_map<std::string, const detail::dump_object*> claim_templates;  // ns/name
  for (const auto& t : objects_of("ResourceClaimTemplate")) {
    const json* tspec = detail::member(*t.obj, "spec");
    const json* cspec = tspec ? detail::member(*tspec, "spec") : nullptr;
    if (!cspec || !cspec->is_object()) {
      d.add(t.label + ".spec.spec", "missing: the spec of the claims the template makes");
      continue;
    }
    json probe{{"kind", "ResourceClaim"}, {"metadata", {{"name", t.name}, {"namespace", t.ns}}}, {"spec", *cspec}};
    try {
      (void)parse_resource_claim(probe, t.label + ".spec");
    } catch (const validation_error& e) {
      for (const auto& pr : e.problems()) d.add(pr.path, pr.message);
      continue;
    } catch (const error& e) {
      d.add(t.label + ".spec.spec", e.what());
      continue;
    }
    if (const json* tmd = detail::member(*tspec, "metadata")) {
      (void)detail::map_at(*tmd, "labels", {t.label, ".spec.metadata"}, d);
      (void)detail::map_at(*tmd, "annotations", {t.label, ".spec.metadata"}, d);
    }
    claim_templates.emplace(t.ns + "/" + t.name, &t);
  }
  std::unordered_set<std::string> dump_claims;  // ns/name of the dump's ResourceClaims
  for (const auto& c : objects_of("ResourceClaim")) dump_claims.insert(c.ns + "/" + c.name);

  // 3. nodes
  resource_registry reg;
  resource_vector capacity;
  json nodes = json::array();
  std::unordered_map<std::string, const json*> node_labels;  // schedulable nodes -> labels (or nullptr)
  std::set<std::string> excluded;
  bool any_gpu = false;
  for (const auto& n : objects_of("Node")) {
    const json& spec = detail::section(*n.obj, "spec");
    const json& status = detail::section(*n.obj, "status");
    const json* labels = detail::map_at(detail::section(*n.obj, "metadata"), "labels", {n.label, ".metadata"}, d);
    const json* unschedulable = detail::member(spec, "unschedulable");
    const bool cordoned = unschedulable && *unschedulable == true;
    const bool ready = detail::node_ready(status);
    if (!detail::member(status, "allocatable")) {
      d.add(n.label + ".status.allocatable", "missing: a node's allocatable resources");
      continue;
    }
    // a node's pod count is not a resource of the replay: no job requests it
    json allocatable = status["allocatable"];
    if (allocatable.is_object()) allocatable.erase("pods");
    const resource_vector alloc = parse_resource_list(allocatable, reg, n.label + ".status.allocatable", &d);
    if (cordoned || !ready) {
      excluded.insert(n.name);
      sum.excluded_nodes.push_back(n.name + (cordoned && !ready ? " (cordoned, not ready)"
                                             : cordoned         ? " (cordoned)"
                                                                : " (not ready)"));
      continue;
    }
    json a = resource_list_to_json(alloc, reg);
    if (a.contains("nvidia.com/gpu")) any_gpu = true;
    try {
      capacity.add_in_place(alloc);
    } catch (const error& e) {
      d.add(n.label + ".status.allocatable", e.what());
    }
    json jn{{"name", n.name}, {"allocatable", std::move(a)}};
    if (labels && !labels->empty()) jn["labels"] = *labels;
    node_labels.emplace(n.name, labels);
    nodes.push_back(std::move(jn));
    ++sum.nodes;
  }

  // 4. pods
  auto created_ms = [](const json& md, std::int64_t& t) {
    const json* c = detail::member(md, "creationTimestamp");
    return c && c->is_string() && quota::detail::parse_rfc3339_utc_ms(c->get_ref<const std::string&>(), t);
  };
  // time 0: --now, or when the first pod still waiting was created (the
  // running pods run from 0 whenever they were created); the arrivals are
  // set once every pod is read
  std::int64_t t0 = INT64_MAX;
  if (!o.now.empty() && !quota::detail::parse_rfc3339_utc_ms(o.now, t0))
    throw validation_error("--now", "expected an RFC 3339 UTC time (2025-01-31T12:00:00Z), got '" + o.now + "'");
  // Kueue Workloads: running pods whose Workload carries the Evicted
  // condition; a Workload without quota (no status.admission) owned by
  // several pods (Kueue's pod groups) gathers its waiting pods into a gang;
  // one owned by no pod (a suspended Job, whose pods do not exist yet) is a
  // waiting job made from its podSets
  std::set<std::string> evicted_pods;                                                // ns/name
  std::unordered_map<std::string, detail::podgroup_info> kueue_groups;               // ns/name of the Workload
  std::unordered_map<std::string, detail::podgroup_info*> kueue_member_of;           // ns/pod -> its Workload's group
  std::vector<std::pair<const dump_object*, std::vector<detail::pod_set>>> podless;  // Workloads made into jobs
  auto read_pod_sets = [&](const dump_object& w) {
    std::vector<detail::pod_set> sets;
    const json& spec = detail::section(*w.obj, "spec");
    const json* ps = detail::member(spec, "podSets");
    if (!ps || !ps->is_array() || ps->empty()) {
      d.add(w.label + ".spec.podSets", "missing: a Workload's pod sets (a non-empty array)");
      return sets;
    }
    for (std::size_t i = 0; i < ps->size(); ++i) {
      const json& x = (*ps)[i];
      const std::string at = w.label + ".spec.podSets[" + std::to_string(i) + "]";
      detail::pod_set one;
      one.name = x.is_object() && x.contains("name") && x["name"].is_string() ? x["name"].get<std::string>() : "main";
      if (const json* c = detail::member(x, "count")) {
        if (!c->is_number_integer() || c->get<std::int64_t>() < 0 || c->get<std::int64_t>() > 100'000) {
          d.add(at + ".count", "expected an integer from 0 to 100000, got " + c->dump());
          continue;
        }
        one.count = c->get<std::int64_t>();
      }
      if (const json* m = detail::member(x, "minCount")) {
        if (!m->is_number_integer() || m->get<std::int64_t>() < 1 || m->get<std::int64_t>() > one.count) {
          d.add(at + ".minCount",
                "expected an integer from 1 to count (" + std::to_string(one.count) + "), got " + m->dump());
          continue;
        }
        one.min_count = m->get<std::int64_t>();
      }
      const json* tpl = detail::member(x, "template");
      one.spec = tpl ? detail::member(*tpl, "spec") : nullptr;
      if (!one.spec || !one.spec->is_object() || !detail::member(*one.spec, "containers")) {
        d.add(at + ".template.spec.containers", "missing");
        continue;
      }
      sets.push_back(one);
    }
    return sets;
  };
  for (const auto& w : objects_of("Workload")) {
    const json& status = detail::section(*w.obj, "status");
    bool evicted = false, finished = false;
    if (const json* cs = detail::member(status, "conditions"); cs && cs->is_array())
      for (const auto& c : *cs)
        if (c.is_object() && c.value("status", json()) == "True") {
          evicted = evicted || c.value("type", json()) == "Evicted";
          finished = finished || c.value("type", json()) == "Finished";
        }
    const json* refs = detail::member(detail::section(*w.obj, "metadata"), "ownerReferences");
    std::vector<std::string> owner_pods;
    if (refs && refs->is_array())
      for (const auto& r : *refs)
        if (r.is_object() && r.value("kind", json()) == "Pod" && r.contains("name") && r["name"].is_string())
          owner_pods.push_back(r["name"].get<std::string>());
    if (evicted)
      for (const auto& n : owner_pods) evicted_pods.insert(w.ns + "/" + n);
    const json* active = detail::member(detail::section(*w.obj, "spec"), "active");
    if (finished) {
      ++sum.skipped_workloads["Finished"];
      continue;
    }
    if (detail::member(status, "admission")) continue;  // it holds quota: its pods are the jobs
    if (active && *active == false) {
      ++sum.skipped_workloads["not active"];
      continue;
    }
    if (owner_pods.size() == 1) continue;  // one pod: that pod is the job
    auto sets = read_pod_sets(w);
    if (owner_pods.empty()) {
      podless.emplace_back(&w, std::move(sets));
      continue;
    }
    detail::podgroup_info g;
    g.obj = &w;
    g.volcano = false;
    g.min_field = ".spec.podSets";
    for (const auto& x : sets) g.min_member += x.min_count ? x.min_count : x.count;
    auto& slot = kueue_groups.emplace(w.ns + "/" + w.name, std::move(g)).first->second;
    for (const auto& n : owner_pods) kueue_member_of[w.ns + "/" + n] = &slot;
  }
  json running = json::array(), pending = json::array();
  std::set<std::string> tenant_set;
  std::vector<std::pair<std::int64_t, std::size_t>> order;  // pending: (submit, index)
  const bool with_claims =
      o.from_objects && (!objects_of("ResourceClaim").empty() || !objects_of("ResourceClaimTemplate").empty());
  json made_claims = json::array();  // the per-pod claims made from templates
  // the waiting pods of PodGroups, gathered into gangs once every pod is read
  std::vector<json> members;
  std::vector<resource_vector> member_requests;
  std::vector<std::int64_t> member_created;
  const std::string default_ns = "default";
  for (const auto& p : objects_of("Pod")) {
    const json& md = detail::section(*p.obj, "metadata");
    const json& spec = detail::section(*p.obj, "spec");
    const json& status = detail::section(*p.obj, "status");
    const std::string& phase = detail::str_at(status, "phase", {p.label, ".status"}, d);
    if (phase == "Succeeded" || phase == "Failed" || phase == "Unknown") {
      ++sum.skipped_pods[phase];
      // a succeeded member counts toward its PodGroup's minMember (Volcano's ReadyTaskNum)
      if (phase == "Succeeded" && !podgroups.empty())
        if (const json* an = detail::member(md, "annotations"); an && an->is_object())
          if (const json* g = detail::member(*an, volcano_group_annotation); g && g->is_string()) {
            const auto pg = podgroups.find((p.ns.empty() ? default_ns : p.ns) + "/" + g->get<std::string>());
            if (pg != podgroups.end()) ++pg->second.succeeded;
          }
      if (phase == "Succeeded" && !kueue_member_of.empty())
        if (const auto k = kueue_member_of.find((p.ns.empty() ? default_ns : p.ns) + "/" + p.name);
            k != kueue_member_of.end())
          ++k->second->succeeded;
      continue;
    }
    if (phase != "Running" && phase != "Pending" && !phase.empty()) {
      d.add(p.label + ".status.phase", "unknown phase '" + phase + "' (Pending, Running, Succeeded, Failed, Unknown)");
      continue;
    }
    if (!detail::member(spec, "containers")) {
      d.add(p.label + ".spec.containers", "missing");
      continue;
    }
    const std::string& node = detail::str_at(spec, "nodeName", {p.label, ".spec"}, d);
    const json* labels = detail::map_at(md, "labels", {p.label, ".metadata"}, d);
    const json* annotations = detail::map_at(md, "annotations", {p.label, ".metadata"}, d);
    const json* selector = detail::map_at(spec, "nodeSelector", {p.label, ".spec"}, d);
    const std::string& ns = p.ns.empty() ? default_ns : p.ns;
    resource_vector req;
    try {
      req = detail::effective_request(spec, reg, p.label, d);
    } catch (const error& e) {
      d.add(p.label + ".spec", e.what());
      continue;
    }
    // the pod's Volcano PodGroup (its gang), under every queue rule
    detail::podgroup_info* group = nullptr;
    if (const std::string* g = detail::map_value(annotations, volcano_group_annotation); g && !g->empty()) {
      const auto pg = podgroups.find(ns + "/" + *g);
      if (pg == podgroups.end()) {
        d.add(p.label + ".metadata.annotations." + volcano_group_annotation,
              "names PodGroup '" + *g + "', which is not in the dump");
        continue;
      }
      group = &pg->second;
    } else if (!kueue_member_of.empty()) {
      // a pod of a Kueue pod group that waits for quota
      if (const auto k = kueue_member_of.find(ns + "/" + p.name); k != kueue_member_of.end()) group = k->second;
    }
    // the queue by the chosen scheduler's rule
    const std::string* queue = nullptr;
    if (sum.queue_by == "volcano") {
      if (group && group->volcano) {
        queue = &group->queue;
      } else {
        queue = detail::map_value(annotations, volcano_queue_annotation);
      }
      static const std::string volcano_default = "default";
      if (!queue || queue->empty()) queue = &volcano_default;
    } else if (sum.queue_by == "kueue") {
      queue = detail::map_value(labels, kueue_queue_label);
    } else if (sum.queue_by == "kai") {
      queue = detail::map_value(labels, kai_queue_label);
    } else {
      queue = &ns;
    }
    if (!queue || queue->empty()) {
      ++sum.skipped_pods["no " + sum.queue_by + " queue"];
      continue;
    }
    json j = json::object();
    j["id"] = ns + "/" + p.name;
    j["namespace"] = ns;
    j["queue"] = *queue;
    detail::read_priority(spec, p.label, j, d);
    // Volcano orders a PodGroup's pods by the group's class
    if (group && !group->priority_class.empty()) j["priority_class"] = group->priority_class;
    j["request"] = resource_list_to_json(req, reg);
    json claims = json::array();
    if (const json* rcs = detail::member(spec, "resourceClaims"); rcs && rcs->is_array())
      for (std::size_t i = 0; i < rcs->size(); ++i) {
        const detail::where at{p.label, ".spec", "resourceClaims", i};
        const json& rc = (*rcs)[i];
        const std::string& c = detail::str_at(rc, "resourceClaimName", at, d);
        if (!c.empty()) {
          claims.push_back(c);
          continue;
        }
        const std::string& tname = detail::str_at(rc, "resourceClaimTemplateName", at, d);
        if (tname.empty() || !o.from_objects) continue;
        const auto t = claim_templates.find(ns + "/" + tname);
        if (t == claim_templates.end()) {
          d.add(at + ".resourceClaimTemplateName",
                "names ResourceClaimTemplate '" + tname + "', which is not in the dump (or is malformed)");
          continue;
        }
        // the claim the controller made for this entry (status.resourceClaimStatuses,
        // as KAI's GetResourceClaimName finds it), when the dump has it
        const std::string& entry = detail::str_at(rc, "name", at, d);
        std::string made;
        if (const json* rss = detail::member(status, "resourceClaimStatuses"); rss && rss->is_array())
          for (const auto& r : *rss)
            if (r.is_object() && r.value("name", json()) == entry && r.contains("resourceClaimName") &&
                r["resourceClaimName"].is_string())
              made = r["resourceClaimName"].get<std::string>();
        if (!made.empty() && dump_claims.count(ns + "/" + made)) {
          claims.push_back(made);
          continue;
        }
        // else a claim of the template's spec, owned by the pod
        if (made.empty()) made = p.name + "-" + entry;
        const json& tspec = (*t->second->obj)["spec"];
        json cmd{{"name", made}, {"namespace", ns}};
        json annotations_out = json::object();
        if (const json* tmd = detail::member(tspec, "metadata")) {
          if (const json* l = detail::member(*tmd, "labels"); l && l->is_object() && !l->empty()) cmd["labels"] = *l;
          if (const json* a = detail::member(*tmd, "annotations"); a && a->is_object()) annotations_out = *a;
        }
        annotations_out[pod_claim_name_annotation] = entry;
        cmd["annotations"] = std::move(annotations_out);
        cmd["ownerReferences"] =
            json::array({{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", p.name}, {"controller", true}}});
        made_claims.push_back(json{{"apiVersion", "resource.k8s.io/v1"},
                                   {"kind", "ResourceClaim"},
                                   {"metadata", std::move(cmd)},
                                   {"spec", tspec["spec"]}});
        ++sum.template_claims;
        claims.push_back(std::move(made));
      }
    if (const std::string* ui = detail::map_value(annotations, yunikorn_user_annotation)) {
      const std::string field = p.label + ".metadata.annotations." + yunikorn_user_annotation;
      json info;
      try {
        info = json::parse(*ui);
      } catch (const json::exception&) {
        info = nullptr;
      }
      const json* user = detail::member(info, "user");
      const json* groups = detail::member(info, "groups");
      if (!user || !user->is_string() || user->get_ref<const std::string&>().empty() ||
          (groups && (!groups->is_array() ||
                      !std::all_of(groups->begin(), groups->end(), [](const json& g) { return g.is_string(); })))) {
        d.add(field, "expected {\"user\": \"name\", \"groups\": [\"name\", ...]}");
        continue;
      }
      j["user"] = *user;
      if (groups && !groups->empty()) j["groups"] = *groups;
    } else if (!yunikorn.is_null()) {
      j["user"] = "nobody";
      j["groups"] = json::array({"nogroup"});
    }
    const bool claimed = with_claims && !claims.empty();
    if (claimed) j["claims"] = std::move(claims);
    // a pod that waits (alone or in its gang): it arrives at its creation
    // time, which moves t0 without --now, and keeps its node selector
    auto arrival = [&]() -> std::optional<std::int64_t> {
      std::int64_t created = 0;
      if (!created_ms(md, created)) {
        d.add(p.label + ".metadata.creationTimestamp", "missing or not an RFC 3339 UTC time");
        return std::nullopt;
      }
      if (o.now.empty()) t0 = std::min(t0, created);
      if (selector && !selector->empty()) j["node_selector"] = *selector;
      return created;
    };
    // a waiting PodGroup member: its gang's duration is sampled with the gang
    if (node.empty() && group) {
      const auto created = arrival();
      if (!created) continue;
      group->waiting.push_back(members.size());
      members.push_back(std::move(j));
      member_requests.push_back(std::move(req));
      member_created.push_back(*created);
      ++sum.pending;
      continue;
    }
    const std::int64_t dur = durations.sample();
    if (dur >= 0) j["duration"] = dur;
    if (!node.empty()) {
      const auto nl = node_labels.find(node);
      if (nl == node_labels.end()) {
        if (excluded.count(node)) {
          ++sum.skipped_pods["on an excluded node"];
          if (group) ++group->running;  // it still runs: it counts toward minMember
          continue;
        }
        d.add(p.label + ".spec.nodeName", "names node '" + node + "', which is not in the dump");
        continue;
      }
      j["running"] = true;
      // a job with claims runs where its claims are: quota-sim places it
      if (!claimed) j["node"] = node;
      // the selector only when the node still matches it (labels may have changed since)
      if (selector && !selector->empty()) {
        bool matches = true;
        for (auto it = selector->begin(); it != selector->end() && matches; ++it) {
          const std::string* have = detail::map_value(nl->second, it.key().c_str());
          matches = have && *have == it.value().get_ref<const std::string&>();
        }
        if (matches) j["node_selector"] = *selector;
      }
      if (!evicted_pods.empty() && evicted_pods.count(ns + "/" + p.name)) j["evicted"] = true;
      tenant_set.insert(*queue);
      running.push_back(std::move(j));
      ++sum.running;
      if (group) ++group->running;
    } else {
      const auto created = arrival();
      if (!created) continue;
      tenant_set.insert(*queue);
      order.emplace_back(*created, pending.size());
      pending.push_back(std::move(j));
      ++sum.pending;
    }
  }
  // the waiting pods of each PodGroup: one gang job (in the dump's order of
  // the PodGroups, so that the durations follow the seed)
  std::vector<detail::podgroup_info*> groups;
  for (const auto& pgo : objects_of("PodGroup")) groups.push_back(&podgroups.at(pgo.ns + "/" + pgo.name));
  for (const auto& w : objects_of("Workload"))
    if (const auto k = kueue_groups.find(w.ns + "/" + w.name); k != kueue_groups.end()) groups.push_back(&k->second);
  for (detail::podgroup_info* gp : groups) {
    auto& g = *gp;
    const dump_object& pgo = *g.obj;
    if (g.waiting.empty()) continue;
    const std::string what = g.volcano ? "PodGroup(s)" : "Workload(s)";
    const std::size_t have = g.running + g.succeeded + g.waiting.size();
    if (g.min_member > static_cast<std::int64_t>(have)) {
      d.add(pgo.label + g.min_field,
            (g.volcano ? "" : "the pod sets need ") + std::to_string(g.min_member) +
                (g.volcano ? " is more than the group's " : ", more than the group's ") + std::to_string(have) +
                " pods in the dump (running, waiting or succeeded): its waiting pods could never start");
      continue;
    }
    // a job has one pod shape: the members must agree on all but the request
    const json& first = members[g.waiting.front()];
    std::string differs;
    for (const char* f : {"queue", "node_selector", "claims", "user", "groups"})
      for (const std::size_t m : g.waiting) {
        const json& x = members[m];
        const bool same = x.contains(f) == first.contains(f) && (!x.contains(f) || x[f] == first[f]);
        if (!same) {
          differs = f;
          break;
        }
      }
    const std::int32_t pods = static_cast<std::int32_t>(g.waiting.size());
    // one waiting pod is its own job (with its own id)
    if (!differs.empty() || pods == 1 || pods > 100'000) {
      if (pods > 1)
        ++sum.notes[differs.empty() ? what + " of more than 100,000 waiting pods: imported pod by pod"
                                    : what + " whose waiting pods differ in " + differs + ": imported pod by pod"];
      for (const std::size_t m : g.waiting) {
        json& j = members[m];
        const std::int64_t dur = durations.sample();
        if (dur >= 0) j["duration"] = dur;
        tenant_set.insert(j["queue"].get<std::string>());
        order.emplace_back(member_created[m], pending.size());
        pending.push_back(std::move(j));
      }
      continue;
    }
    if (seen.count("Pod/" + pgo.ns + "/" + pgo.name)) {
      d.add(pgo.label, "its gang's job id '" + (pgo.ns.empty() ? default_ns : pgo.ns) + "/" + pgo.name +
                           "' is the id of a pod of the dump");
      continue;
    }
    json j = first;
    const std::string& ns = pgo.ns.empty() ? default_ns : pgo.ns;
    j["id"] = ns + "/" + pgo.name;
    // the request: the largest of each resource over the members
    resource_vector req = member_requests[g.waiting.front()];
    bool uneven = false;
    std::int64_t created = member_created[g.waiting.front()];
    for (const std::size_t m : g.waiting) {
      const resource_vector& r = member_requests[m];
      if (r != req) uneven = true;
      for (const auto& e : r)
        if (req.get(e.id) < e.value) req.set(e.id, e.value);
      created = std::min(created, member_created[m]);
      if (const auto* pr = members[m].contains("priority") ? &members[m]["priority"] : nullptr)
        if (!j.contains("priority") || j["priority"].get<std::int64_t>() < pr->get<std::int64_t>()) j["priority"] = *pr;
    }
    // what minMember still needs: the running and succeeded members count (Volcano's ReadyTaskNum)
    const std::int64_t need = g.min_member - static_cast<std::int64_t>(g.running + g.succeeded);
    // pods that differ in request and must all run (a launcher and its workers):
    // one pod set per request, in the order the requests first appear
    std::vector<std::pair<resource_vector, std::int64_t>> request_groups;
    if (uneven && need >= pods)
      for (const std::size_t m : g.waiting) {
        auto it = std::find_if(request_groups.begin(), request_groups.end(),
                               [&](const auto& x) { return x.first == member_requests[m]; });
        if (it == request_groups.end())
          request_groups.emplace_back(member_requests[m], 1);
        else
          ++it->second;
      }
    if (!request_groups.empty() && request_groups.size() <= 8) {
      j.erase("request");
      j["pod_sets"] = json::array();
      for (std::size_t k = 0; k < request_groups.size(); ++k)
        j["pod_sets"].push_back(json{{"name", "pods-" + std::to_string(k)},
                                     {"count", request_groups[k].second},
                                     {"request", resource_list_to_json(request_groups[k].first, reg)}});
    } else {
      if (uneven) ++sum.notes[what + " whose waiting pods differ in request: the gang asks the largest of each"];
      j["request"] = resource_list_to_json(req, reg);
      j["pods"] = pods;
      j["min_pods"] = std::clamp<std::int64_t>(need, 1, pods);
    }
    if (!g.min_resources.is_null() && !j.contains("pod_sets")) {
      // the scenario's minResources is min_pods x the request; a stated one that differs is not carried
      const json holder{{"minResources", g.min_resources}};
      const resource_vector stated = detail::resources_at(holder, "minResources", reg, {pgo.label, ".spec"}, d);
      resource_vector derived;
      try {
        for (const auto& e : req)
          derived.set(e.id, quota::detail::checked_mul<std::int64_t>(e.value, j["min_pods"].get<std::int64_t>()));
      } catch (const error&) {
        derived = resource_vector{};
      }
      if (stated != derived)
        ++sum.notes
              ["PodGroup(s) whose spec.minResources is not min_pods x the request: the scenario counts the latter"];
    }
    const std::int64_t dur = durations.sample();
    if (dur >= 0) j["duration"] = dur;
    tenant_set.insert(j["queue"].get<std::string>());
    order.emplace_back(created, pending.size());
    pending.push_back(std::move(j));
    ++sum.gangs;
    sum.gang_pods += g.waiting.size();
  }
  // Workloads whose pods do not exist yet: a waiting job from the pod sets
  for (const auto& [wp, sets] : podless) {
    const dump_object& w = *wp;
    if (sets.empty()) continue;  // reported
    const json& spec = detail::section(*w.obj, "spec");
    const json& md = detail::section(*w.obj, "metadata");
    const std::string& ns = w.ns.empty() ? default_ns : w.ns;
    const std::string* queue = &ns;
    const std::string& queue_name = detail::str_at(spec, "queueName", {w.label, ".spec"}, d);
    if (sum.queue_by == "kueue") {
      queue = &queue_name;
    } else if (sum.queue_by != "namespace") {
      ++sum.skipped_workloads["without pods, under " + sum.queue_by + "'s rule"];
      continue;
    }
    if (queue->empty()) {
      ++sum.skipped_workloads["no kueue queue"];
      continue;
    }
    std::int64_t created = 0;
    if (!created_ms(md, created)) {
      d.add(w.label + ".metadata.creationTimestamp", "missing or not an RFC 3339 UTC time");
      continue;
    }
    if (seen.count("Pod/" + w.ns + "/" + w.name)) {
      d.add(w.label, "its job id '" + ns + "/" + w.name + "' is the id of a pod of the dump");
      continue;
    }
    json base = json::object();
    base["namespace"] = ns;
    base["queue"] = *queue;
    detail::read_priority(spec, w.label, base, d);
    if (!yunikorn.is_null()) {
      base["user"] = "nobody";
      base["groups"] = json::array({"nogroup"});
    }
    // each pod set's request and selector
    std::vector<resource_vector> reqs;
    std::vector<const json*> selectors;
    bool bad = false;
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const std::string tl = w.label + ".spec.podSets[" + std::to_string(i) + "].template";
      const std::size_t before = d.size();
      try {
        reqs.push_back(detail::effective_request(*sets[i].spec, reg, tl, d));
      } catch (const error& e) {
        d.add(tl + ".spec", e.what());
      }
      selectors.push_back(detail::map_at(*sets[i].spec, "nodeSelector", {tl, ".spec"}, d));
      bad = bad || d.size() != before;
    }
    if (bad) continue;
    auto same_selector = [&](const json* a, const json* b) {
      const bool ea = !a || a->empty(), eb = !b || b->empty();
      return ea == eb && (ea || *a == *b);
    };
    bool one_job = true;
    for (const json* sel : selectors) one_job = one_job && same_selector(sel, selectors.front());
    if (!one_job) ++sum.notes["Workload(s) whose pod sets differ in node_selector: one job a pod set"];
    // one job of all the pod sets (its pod_sets), or one a pod set
    for (std::size_t i = 0; i < sets.size(); i += one_job ? sets.size() : 1) {
      const std::size_t end = one_job ? sets.size() : i + 1;
      resource_vector req;
      std::int64_t pods = 0, min_pods = 0;
      for (std::size_t k = i; k < end; ++k) {
        if (sets[k].count == 0) continue;
        for (const auto& e : reqs[k])
          if (req.get(e.id) < e.value) req.set(e.id, e.value);
        pods += sets[k].count;
        min_pods += sets[k].min_count ? sets[k].min_count : sets[k].count;
      }
      if (pods == 0) continue;
      if (pods > 100'000) {
        d.add(w.label + ".spec.podSets", "more than 100,000 pods in one job");
        break;
      }
      json j = base;
      j["id"] = ns + "/" + w.name + (one_job ? std::string() : "/" + sets[i].name);
      std::size_t nonempty = 0;
      for (std::size_t k = i; k < end; ++k) nonempty += sets[k].count > 0 ? 1 : 0;
      if (nonempty > 1) {
        // several pod sets (a launcher and its workers): the job's pod_sets, each
        // with its own count, minCount and request, as Kueue admits them
        j["pod_sets"] = json::array();
        for (std::size_t k = i; k < end; ++k) {
          if (sets[k].count == 0) continue;
          json ps{{"name", sets[k].name}, {"count", sets[k].count}, {"request", resource_list_to_json(reqs[k], reg)}};
          if (sets[k].min_count) ps["min_count"] = sets[k].min_count;
          j["pod_sets"].push_back(std::move(ps));
        }
      } else {
        j["request"] = resource_list_to_json(req, reg);
        if (pods > 1) {
          j["pods"] = pods;
          j["min_pods"] = min_pods;
        }
      }
      if (selectors[i] && !selectors[i]->empty()) j["node_selector"] = *selectors[i];
      const std::int64_t dur = durations.sample();
      if (dur >= 0) j["duration"] = dur;
      if (o.now.empty()) t0 = std::min(t0, created);
      tenant_set.insert(*queue);
      order.emplace_back(created, pending.size());
      pending.push_back(std::move(j));
      ++sum.workload_jobs;
    }
  }
  d.throw_if_any();

  // 5. policies: the dump's objects, then derived quotas
  json policies = json::array();
  auto collect = [&](std::initializer_list<const char*> kinds) {
    json objs = json::array();
    for (const char* k : kinds)
      for (const auto& x : objects_of(k)) objs.push_back(*x.obj);
    return objs;
  };
  std::set<std::string> configured;
  auto add_policy = [&](json entry) {
    configured.insert(entry["model"].get<std::string>());
    sum.models_from_objects.push_back(entry["model"].get<std::string>());
    policies.push_back(std::move(entry));
  };
  if (o.from_objects) {
    if (!objects_of("Queue (volcano)").empty()) {
      // the capacity plugin when a queue states its deserved share or a parent
      bool capacity_plugin = false, hierarchy = false;
      for (const auto& q : objects_of("Queue (volcano)")) {
        const json& spec = detail::section(*q.obj, "spec");
        capacity_plugin = capacity_plugin || spec.contains("deserved") || spec.contains("parent");
        hierarchy = hierarchy || spec.contains("parent");
      }
      json e{{"model", capacity_plugin ? "volcano_capacity" : "volcano"}, {"objects", collect({"Queue (volcano)"})}};
      e["options"] = capacity_plugin ? json{{"hierarchy", hierarchy}} : json{{"plugin", "proportion"}};
      add_policy(std::move(e));
    }
    if (!objects_of("ClusterQueue").empty())
      add_policy(json{{"model", "kueue"},
                      {"objects", collect({"ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "Namespace"})}});
    if (!objects_of("Queue (kai)").empty())
      add_policy(json{{"model", "kai_fair_share"}, {"objects", collect({"Queue (kai)"})}});
    if (!objects_of("ElasticQuota").empty() || !objects_of("CompositeElasticQuota").empty())
      add_policy(json{{"model", "elastic_quota"}, {"objects", collect({"ElasticQuota", "CompositeElasticQuota"})}});
    if (with_claims) {
      json objs = collect({"DeviceClass", "ResourceClaim"});
      for (auto& c : made_claims) objs.push_back(std::move(c));
      add_policy(json{{"model", "kai_claims"}, {"objects", std::move(objs)}});
    }
  }
  if (!yunikorn.is_null()) add_policy(json{{"model", "yunikorn_limits"}, {"config", yunikorn}});
  const std::vector<std::string> tenants(tenant_set.begin(), tenant_set.end());
  for (const auto& name : o.policies) {
    if (name == "none") continue;
    const auto it = model_kinds().find(name);
    if (it == model_kinds().end() || !it->second.synthesize)
      throw validation_error("--policy", "unknown model or one that cannot derive quotas: '" + name + "'");
    if (configured.count(name))
      throw validation_error("--policy", "model '" + name + "' is already configured by the dump's objects");
    configured.insert(name);
    policies.push_back(it->second.synthesize(tenants, capacity, reg));
  }

  // 6. the scenario: running pods first (file order), then arrivals in time order
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  json jobs = std::move(running);
  for (const auto& [created, i] : order) {
    pending[i]["submit"] = std::max<std::int64_t>(0, created - t0);  // exact: both within RFC 3339's range
    jobs.push_back(std::move(pending[i]));
  }
  json& sc = out.scenario;
  const std::string base = o.dump_file.substr(o.dump_file.find_last_of('/') + 1);
  sc["name"] = "cluster " + (base.empty() ? std::string("dump") : base);
  std::string skipped;
  for (const auto& [why, n] : sum.skipped_pods)
    skipped += (skipped.empty() ? "" : ", ") + std::to_string(n) + " " + why;
  sc["description"] = "imported by quota-sim import cluster: " + std::to_string(sum.nodes) + " nodes (" +
                      std::to_string(sum.excluded_nodes.size()) + " excluded), " + std::to_string(sum.running) +
                      " running and " + std::to_string(sum.pending) + " pending pods" +
                      (skipped.empty() ? std::string() : " (skipped: " + skipped + ")") + "; queues by " +
                      sum.queue_by + "'s rule; durations " + sum.duration + " (seed " + std::to_string(o.seed) + ")";
  sc["tenant_by"] = "queue";
  sc["scheduler"] = {{"placement", "best-fit"}, {"preemption", true}};
  sc["chart"] = {{"resource", any_gpu ? "nvidia.com/gpu" : "cpu"}};
  sc["cluster"]["nodes"] = std::move(nodes);
  sc["policies"] = std::move(policies);
  sc["jobs"] = std::move(jobs);
  sc["expect"] = json::array();
  return out;
}

/// What the import read, left out and decided, one fact a line.
inline void print_import_summary(std::ostream& out, const cluster_import_summary& s) {
  out << "imported " << s.nodes << " nodes, " << s.running << " running pods, " << s.pending << " pending pods\n";
  for (const auto& n : s.excluded_nodes) out << "  left out node " << n << "\n";
  for (const auto& [why, n] : s.skipped_pods) out << "  skipped " << n << " pod(s): " << why << "\n";
  for (const auto& [kind, n] : s.unknown_kinds)
    out << "  skipped " << n << " object(s) of unknown kind " << kind << "\n";
  out << "  objects read:";
  for (const auto& [kind, n] : s.kinds) out << " " << kind << " " << n << ";";
  out << "\n  queues by " << s.queue_by << "'s rule; durations " << s.duration << "\n";
  if (s.gangs)
    out << "  gathered " << s.gang_pods << " waiting pod(s) of " << s.gangs << " PodGroup(s) into gang jobs\n";
  for (const auto& [what, n] : s.notes) out << "  " << n << " " << what << "\n";
  if (s.template_claims) out << "  made " << s.template_claims << " claim(s) from ResourceClaimTemplates\n";
  if (s.workload_jobs) out << "  made " << s.workload_jobs << " waiting job(s) from Workloads without pods\n";
  for (const auto& [why, n] : s.skipped_workloads) out << "  skipped " << n << " Workload(s): " << why << "\n";
  if (!s.models_from_objects.empty()) {
    out << "  models from the dump:";
    for (const auto& m : s.models_from_objects) out << " " << m;
    out << "\n";
  }
}

/// Reads the dump (and the YuniKorn config), maps it and checks the result
/// as `quota-sim validate` would (the models' objects, the running pods'
/// initial state), so that nothing invalid is written.
[[nodiscard]] inline cluster_import import_cluster(const cluster_import_options& o, bool check = true) {
  const json dump = detail::parse_dump_text(read_input_file(o.dump_file), o.dump_file);
  json yk;
  if (!o.yunikorn_file.empty()) yk = load_scenario_file(o.yunikorn_file);
  cluster_import r = import_cluster_doc(dump, o, yk);
  if (check) {
    scenario sc = load_scenario(r.scenario);
    auto models = build_models(sc);
    simulator sim(std::move(sc), std::move(models));  // places the running pods and restores them
  }
  return r;
}

}  // namespace quota::sim
