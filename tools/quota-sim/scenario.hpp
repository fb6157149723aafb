// quota-sim scenario: the cluster, the policies, timed jobs and events, and
// expectations. See docs/scenario-format.md. Loading checks the whole file
// first and reports every problem with its JSON path; nothing runs until the
// file is valid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <quota/duration.hpp>
#include <quota/error.hpp>
#include <quota/json.hpp>
#include <quota/resource_vector.hpp>

#ifdef QUOTA_SIM_HAVE_YAML
#include <yaml-cpp/yaml.h>
#endif

namespace quota::sim {

using quota::detail::index_path;
using quota::detail::join_path;

/// GPU devices of a node, packed individually (fractional sharing).
struct gpu_devices {
  std::int32_t count = 0;
  std::string model;  // GPU type, matched by jobs' gpu.models
};

struct node_spec {
  std::string name;
  resource_vector allocatable;
  std::map<std::string, std::string> labels;
  gpu_devices gpu;
};

/// A pod's claim on GPU devices: `count` devices with `milli` thousandths
/// free each (count 1 and milli < 1000 shares a device with other pods),
/// on a node whose GPU model is one of `models` (empty: any).
struct gpu_request {
  std::int32_t count = 0;
  std::int32_t milli = 1000;
  std::vector<std::string> models;
};

struct job_spec {
  std::string id;
  std::int64_t submit_ms = 0;
  std::int64_t duration_ms = -1;  // -1: runs until the end
  std::string ns = "default";
  std::string queue;
  std::string user;
  std::vector<std::string> groups;
  std::string priority_class;
  std::int32_t priority = 0;
  std::int32_t pods = 1;
  std::int32_t min_pods = 1;
  resource_vector per_pod;  // request of one pod
  std::map<std::string, std::string> node_selector;
  std::vector<std::string> claims;
  bool preemptible = true;
  gpu_request gpu;  // device-level placement (optional)
  json extra;       // model-specific fields, passed to the model factories
};

struct event_spec {
  std::int64_t at_ms = 0;
  std::string type;  // node_add, node_remove, delete, reload
  json body;
  std::string path;
  /// reload: the index of the policy in `policies` and its new entry
  /// ({"model": ..., the rest of the event but at, type, policy}).
  std::size_t policy = 0;
  json policy_body;
};

struct expectation {
  std::int64_t at_ms = 0;  // INT64_MAX: at the end
  std::string path;        // where it was written, for messages
  json body;
};

/// What a policy does with running work when a reload lowers its quota
/// below usage (docs/scenario-format.md, "shrink"): keep it (upstream), or
/// evict what the new quota would not admit, `grace_ms` after the reload.
struct shrink_option {
  bool evict = false;
  std::int64_t grace_ms = 0;
};

struct policy_spec {
  std::string model;
  json body;  // the entry without "shrink" (scenario::shrink holds it)
  std::string path;
};

struct scenario {
  std::string name;
  std::string description;
  std::vector<node_spec> nodes;
  std::vector<policy_spec> policies;
  std::vector<shrink_option> shrink;  // per policy, same index
  std::vector<job_spec> jobs;
  std::vector<event_spec> events;
  std::vector<expectation> expectations;
  std::string placement = "first-fit";  // or best-fit
  bool preemption = true;
  /// scheduler.order: the model kind that orders pending jobs ("" = the first
  /// composed model that orders; "priority" = the host's own order).
  std::string order;
  /// scheduler.cycle: ms between scheduling passes (0 = a pass per instant).
  std::int64_t cycle_ms = 0;
  std::string chart_resource = "nvidia.com/gpu";
  std::string tenant_by = "queue";                  // queue (falls back to namespace) | namespace | user
  std::map<std::string, std::int64_t> chart_lines;  // tenant -> reference line (base units)
  std::int64_t until_ms = -1;
  resource_registry registry;
};

constexpr std::int64_t end_of_time = INT64_MAX;

/// A duration as in quota/duration.hpp ("90s", "1h30m", "2d4h", "250ms"),
/// an integer number of milliseconds, or "end" (the end of the run).
inline std::optional<std::int64_t> parse_duration(const json& v) {
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    return x < 0 ? std::nullopt : std::optional<std::int64_t>(x);
  }
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  if (s == "end") return end_of_time;
  return quota::parse_duration_ms(s);
}

namespace detail {
class reader {
 public:
  explicit reader(diagnostics& d) : d_(d) {}
  void problem(const std::string& path, const std::string& msg) { d_.add(path.empty() ? "$" : "$." + path, msg); }

  template <class T>
  bool get(const json& obj, const char* key, T& out, const std::string& path, bool required = false) {
    if (!obj.contains(key)) {
      if (required) problem(join_path(path, key), "is required");
      return false;
    }
    try {
      out = obj.at(key).get<T>();
      return true;
    } catch (const json::exception&) {
      problem(join_path(path, key),
              std::string("expected ") + expected<T>() + ", got " + std::string(obj.at(key).type_name()));
      return false;
    }
  }
  bool duration(const json& obj, const char* key, std::int64_t& out, const std::string& path, bool required) {
    if (!obj.contains(key)) {
      if (required) problem(join_path(path, key), "is required");
      return false;
    }
    auto d = parse_duration(obj.at(key));
    if (!d) {
      problem(join_path(path, key), "expected a duration (milliseconds, or text like \"90s\", \"5m\", \"2h\")");
      return false;
    }
    out = *d;
    return true;
  }

 private:
  template <class T>
  static const char* expected() {
    if constexpr (std::is_same_v<T, std::string>)
      return "a string";
    else if constexpr (std::is_same_v<T, bool>)
      return "a boolean";
    else if constexpr (std::is_integral_v<T>)
      return "an integer";
    else
      return "a value of another type";
  }
  diagnostics& d_;
};

inline void check_keys(reader& r, const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known = known || it.key() == k;
    if (!known) r.problem(join_path(path, it.key()), "unknown field");
  }
}
}  // namespace detail

/// Loads a scenario from JSON; throws validation_error listing every problem
/// (paths like $.jobs[3].request.cpu).
inline scenario load_scenario(const json& doc) {
  diagnostics diag;
  detail::reader r(diag);
  scenario sc;
  if (!doc.is_object()) throw validation_error("$", "a scenario must be a JSON object");
  detail::check_keys(r, doc, "",
                     {"name", "description", "cluster", "scheduler", "policies", "jobs", "events", "expect", "chart",
                      "tenant_by", "until", "$schema"});
  r.get(doc, "name", sc.name, "", true);
  r.get(doc, "description", sc.description, "");
  r.get(doc, "tenant_by", sc.tenant_by, "");
  if (sc.tenant_by != "queue" && sc.tenant_by != "namespace" && sc.tenant_by != "user")
    r.problem("tenant_by", "expected one of queue, namespace, user");
  if (doc.contains("until")) r.duration(doc, "until", sc.until_ms, "", false);

  // cluster
  if (!doc.contains("cluster") || !doc["cluster"].is_object() || !doc["cluster"].contains("nodes") ||
      !doc["cluster"]["nodes"].is_array()) {
    r.problem("cluster.nodes", "is required: an array of nodes");
  } else {
    const auto& nodes = doc["cluster"]["nodes"];
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string p = index_path("cluster.nodes", i);
      const auto& n = nodes[i];
      if (!n.is_object()) {
        r.problem(p, "expected an object");
        continue;
      }
      node_spec spec;
      detail::check_keys(r, n, p, {"name", "count", "allocatable", "labels", "gpu"});
      if (n.contains("gpu")) {
        const auto& g = n["gpu"];
        const std::string gp = join_path(p, "gpu");
        if (!g.is_object()) {
          r.problem(gp, "expected {\"count\": N, \"model\": \"...\"}");
        } else {
          detail::check_keys(r, g, gp, {"count", "model"});
          r.get(g, "count", spec.gpu.count, gp, true);
          r.get(g, "model", spec.gpu.model, gp);
          if (spec.gpu.count < 0 || spec.gpu.count > 1024) r.problem(join_path(gp, "count"), "expected 0 to 1024");
        }
      }
      r.get(n, "name", spec.name, p, true);
      std::int64_t count = 1;
      r.get(n, "count", count, p);
      if (count < 1 || count > 1'000'000) r.problem(join_path(p, "count"), "expected 1 to 1000000");
      if (!n.contains("allocatable")) r.problem(join_path(p, "allocatable"), "is required");
      spec.allocatable = parse_resource_list(n.value("allocatable", json::object()), sc.registry,
                                             "$." + join_path(p, "allocatable"), &diag);
      if (n.contains("labels")) {
        if (!n["labels"].is_object())
          r.problem(join_path(p, "labels"), "expected an object of strings");
        else
          for (auto it = n["labels"].begin(); it != n["labels"].end(); ++it) {
            if (it.value().is_string())
              spec.labels[it.key()] = it.value().get<std::string>();
            else
              r.problem(join_path(join_path(p, "labels"), it.key()), "expected a string");
          }
      }
      for (std::int64_t c = 0; c < std::max<std::int64_t>(1, std::min<std::int64_t>(count, 1'000'000)); ++c) {
        node_spec copy = spec;
        if (count > 1) copy.name = spec.name + "-" + std::to_string(c);
        if (seen[copy.name]++) r.problem(join_path(p, "name"), "duplicate node name '" + copy.name + "'");
        sc.nodes.push_back(std::move(copy));
      }
    }
  }

  if (doc.contains("scheduler")) {
    const auto& s = doc["scheduler"];
    if (!s.is_object())
      r.problem("scheduler", "expected an object");
    else {
      detail::check_keys(r, s, "scheduler", {"placement", "preemption", "order", "cycle"});
      r.get(s, "placement", sc.placement, "scheduler");
      if (sc.placement != "first-fit" && sc.placement != "best-fit")
        r.problem("scheduler.placement", "expected first-fit or best-fit");
      r.get(s, "preemption", sc.preemption, "scheduler");
      r.get(s, "order", sc.order, "scheduler");
      if (s.contains("cycle")) {
        const auto c = parse_duration(s["cycle"]);
        if (!c || *c <= 0 || *c == end_of_time)
          r.problem("scheduler.cycle",
                    "expected a positive duration (\"1s\", \"500ms\" or milliseconds), got " + s["cycle"].dump());
        else
          sc.cycle_ms = *c;
      }
    }
  }
  if (doc.contains("chart")) {
    const auto& c = doc["chart"];
    if (!c.is_object())
      r.problem("chart", "expected an object");
    else {
      detail::check_keys(r, c, "chart", {"resource", "lines"});
      r.get(c, "resource", sc.chart_resource, "chart");
      if (c.contains("lines")) {
        if (!c["lines"].is_object()) r.problem("chart.lines", "expected an object of tenant: quantity");
      }
    }
  }

  // policies
  if (doc.contains("policies")) {
    if (!doc["policies"].is_array())
      r.problem("policies", "expected an array");
    else
      for (std::size_t i = 0; i < doc["policies"].size(); ++i) {
        const std::string p = index_path("policies", i);
        const auto& pj = doc["policies"][i];
        if (!pj.is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        policy_spec ps;
        r.get(pj, "model", ps.model, p, true);
        ps.body = pj;
        ps.path = "$." + p;
        shrink_option so;
        if (pj.contains("shrink")) {
          const auto& sj = pj["shrink"];
          const std::string sp = join_path(p, "shrink");
          ps.body.erase("shrink");
          if (!sj.is_object()) {
            r.problem(sp, "expected {\"behaviour\": \"keep\" | \"evict_after_grace\", \"grace\": duration}");
          } else {
            detail::check_keys(r, sj, sp, {"behaviour", "grace"});
            std::string b = "keep";
            r.get(sj, "behaviour", b, sp, true);
            if (b != "keep" && b != "evict_after_grace")
              r.problem(join_path(sp, "behaviour"), "expected keep or evict_after_grace");
            so.evict = b == "evict_after_grace";
            if (sj.contains("grace")) {
              r.duration(sj, "grace", so.grace_ms, sp, false);
              if (so.grace_ms == end_of_time) r.problem(join_path(sp, "grace"), "expected a finite duration");
            } else if (so.evict) {
              r.problem(join_path(sp, "grace"), "is required with evict_after_grace");
            }
          }
        }
        sc.policies.push_back(std::move(ps));
        sc.shrink.push_back(so);
      }
  }
  if (!sc.order.empty() && sc.order != "priority" &&
      std::none_of(sc.policies.begin(), sc.policies.end(),
                   [&](const policy_spec& ps) { return ps.model == sc.order; })) {
    std::string composed;
    for (const auto& ps : sc.policies) composed += (composed.empty() ? "" : ", ") + ps.model;
    r.problem("scheduler.order", "model '" + sc.order +
                                     "' is not composed (policies: " + (composed.empty() ? "none" : composed) +
                                     "); name one of them, or \"priority\" for the host's own order");
  }

  // jobs
  if (!doc.contains("jobs") || !doc["jobs"].is_array()) {
    r.problem("jobs", "is required: an array of jobs");
  } else {
    std::map<std::string, int> seen;
    const auto& jobs = doc["jobs"];
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const std::string p = index_path("jobs", i);
      const auto& jj = jobs[i];
      if (!jj.is_object()) {
        r.problem(p, "expected an object");
        continue;
      }
      detail::check_keys(
          r, jj, p,
          {"id", "submit", "duration", "namespace", "queue", "user", "groups", "priority", "priority_class", "pods",
           "min_pods", "request", "node_selector", "claims", "preemptible", "count", "extra", "gpu"});
      job_spec js;
      r.get(jj, "id", js.id, p, true);
      r.duration(jj, "submit", js.submit_ms, p, false);
      if (jj.contains("duration")) r.duration(jj, "duration", js.duration_ms, p, false);
      r.get(jj, "namespace", js.ns, p);
      r.get(jj, "queue", js.queue, p);
      r.get(jj, "user", js.user, p);
      r.get(jj, "groups", js.groups, p);
      r.get(jj, "priority", js.priority, p);
      r.get(jj, "priority_class", js.priority_class, p);
      r.get(jj, "pods", js.pods, p);
      js.min_pods = js.pods;
      r.get(jj, "min_pods", js.min_pods, p);
      if (js.pods < 1) r.problem(join_path(p, "pods"), "expected at least 1");
      if (js.min_pods < 1 || js.min_pods > js.pods) r.problem(join_path(p, "min_pods"), "expected 1..pods");
      r.get(jj, "node_selector", js.node_selector, p);
      r.get(jj, "claims", js.claims, p);
      r.get(jj, "preemptible", js.preemptible, p);
      if (!jj.contains("request")) r.problem(join_path(p, "request"), "is required");
      js.per_pod =
          parse_resource_list(jj.value("request", json::object()), sc.registry, "$." + join_path(p, "request"), &diag);
      if (jj.contains("extra")) js.extra = jj["extra"];
      if (jj.contains("gpu")) {
        const auto& g = jj["gpu"];
        const std::string gp = join_path(p, "gpu");
        if (!g.is_object()) {
          r.problem(gp, "expected {\"count\": N, \"milli\": M, \"models\": [...]}");
        } else {
          detail::check_keys(r, g, gp, {"count", "milli", "models"});
          r.get(g, "count", js.gpu.count, gp, true);
          r.get(g, "milli", js.gpu.milli, gp);
          r.get(g, "models", js.gpu.models, gp);
          if (js.gpu.count < 0 || js.gpu.count > 1024) r.problem(join_path(gp, "count"), "expected 0 to 1024");
          if (js.gpu.milli < 1 || js.gpu.milli > 1000) r.problem(join_path(gp, "milli"), "expected 1 to 1000");
          if (js.gpu.count > 1 && js.gpu.milli != 1000)
            r.problem(join_path(gp, "milli"), "a share of a device (milli < 1000) is for one device only");
        }
      }
      std::int64_t count = 1;
      r.get(jj, "count", count, p);
      if (count < 1 || count > 10'000'000) r.problem(join_path(p, "count"), "expected 1 to 10000000");
      for (std::int64_t c = 0; c < std::max<std::int64_t>(1, std::min<std::int64_t>(count, 10'000'000)); ++c) {
        job_spec copy = js;
        if (count > 1) copy.id = js.id + "-" + std::to_string(c);
        if (seen[copy.id]++) r.problem(join_path(p, "id"), "duplicate job id '" + copy.id + "'");
        sc.jobs.push_back(std::move(copy));
      }
    }
  }

  // events
  if (doc.contains("events")) {
    if (!doc["events"].is_array())
      r.problem("events", "expected an array");
    else
      for (std::size_t i = 0; i < doc["events"].size(); ++i) {
        const std::string p = index_path("events", i);
        const auto& ej = doc["events"][i];
        if (!ej.is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        event_spec ev;
        r.duration(ej, "at", ev.at_ms, p, true);
        r.get(ej, "type", ev.type, p, true);
        ev.body = ej;
        ev.path = "$." + p;
        if (ev.type == "node_add") {
          if (!ej.contains("node") || !ej["node"].is_object())
            r.problem(join_path(p, "node"), "is required: {name, allocatable, labels}");
          else {
            (void)parse_resource_list(ej["node"].value("allocatable", json::object()), sc.registry,
                                      "$." + join_path(p, "node.allocatable"), &diag);
            if (!ej["node"].contains("name") || !ej["node"]["name"].is_string())
              r.problem(join_path(p, "node.name"), "is required");
          }
        } else if (ev.type == "node_remove") {
          std::string n;
          r.get(ej, "name", n, p, true);
        } else if (ev.type == "delete") {
          std::string n;
          r.get(ej, "job", n, p, true);
        } else if (ev.type == "reload") {
          // the policy by index or by model name (one policy of that model)
          bool found = false;
          if (!ej.contains("policy")) {
            r.problem(join_path(p, "policy"), "is required: the index or model name of a policy in policies");
          } else if (ej["policy"].is_number_integer()) {
            const auto k = ej["policy"].get<std::int64_t>();
            if (k < 0 || static_cast<std::size_t>(k) >= sc.policies.size())
              r.problem(join_path(p, "policy"), "no policy at index " + std::to_string(k) + " (" +
                                                    std::to_string(sc.policies.size()) + " policies)");
            else {
              ev.policy = static_cast<std::size_t>(k);
              found = true;
            }
          } else if (ej["policy"].is_string()) {
            const auto name = ej["policy"].get<std::string>();
            std::size_t n = 0;
            for (std::size_t k = 0; k < sc.policies.size(); ++k)
              if (sc.policies[k].model == name) {
                if (n++ == 0) ev.policy = k;
              }
            if (n == 0)
              r.problem(join_path(p, "policy"), "no policy of model '" + name + "' in policies");
            else if (n > 1)
              r.problem(join_path(p, "policy"), "several policies of model '" + name + "': name one by its index");
            found = n == 1;
          } else {
            r.problem(join_path(p, "policy"), "expected an index or a model name");
          }
          if (ej.contains("shrink"))
            r.problem(join_path(p, "shrink"), "shrink is an option of the policy in policies, not of a reload");
          if (found) {
            ev.policy_body = json::object();
            ev.policy_body["model"] = sc.policies[ev.policy].model;
            for (auto it = ej.begin(); it != ej.end(); ++it)
              if (it.key() != "at" && it.key() != "type" && it.key() != "policy" && it.key() != "model")
                ev.policy_body[it.key()] = it.value();
            if (ej.contains("model") && ej["model"] != ev.policy_body["model"])
              r.problem(join_path(p, "model"),
                        "a reload keeps the policy's model ('" + sc.policies[ev.policy].model + "')");
          }
        } else if (!ev.type.empty()) {
          r.problem(join_path(p, "type"),
                    "unknown event type '" + ev.type + "' (node_add, node_remove, delete, reload)");
        }
        sc.events.push_back(std::move(ev));
      }
  }

  // expectations
  if (doc.contains("expect")) {
    if (!doc["expect"].is_array())
      r.problem("expect", "expected an array");
    else
      for (std::size_t i = 0; i < doc["expect"].size(); ++i) {
        const std::string p = index_path("expect", i);
        const auto& xj = doc["expect"][i];
        if (!xj.is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        detail::check_keys(r, xj, p,
                           {"at", "job", "state", "reason", "tenant", "usage", "admitted", "pending", "preemptions",
                            "model", "pointer", "equals", "victims", "node", "note"});
        expectation x;
        x.at_ms = end_of_time;
        if (xj.contains("at")) r.duration(xj, "at", x.at_ms, p, false);
        x.path = "$." + p;
        x.body = xj;
        const bool has_subject = xj.contains("job") || xj.contains("tenant") || xj.contains("admitted") ||
                                 xj.contains("pending") || xj.contains("preemptions") || xj.contains("model");
        if (!has_subject) r.problem(p, "an expectation needs job, tenant, model, admitted, pending or preemptions");
        if (xj.contains("state")) {
          const auto st = xj["state"];
          if (!st.is_string() || (st != "pending" && st != "running" && st != "finished" && st != "preempted"))
            r.problem(join_path(p, "state"), "expected pending, running, finished or preempted");
        }
        if (xj.contains("node") && (!xj.contains("job") || !xj["node"].is_string()))
          r.problem(join_path(p, "node"), "expected a node name, with job (the node all its pods run on)");
        if (xj.contains("usage"))
          (void)parse_resource_list(xj["usage"], sc.registry, "$." + join_path(p, "usage"), &diag);
        if (xj.contains("model") && !xj.contains("pointer"))
          r.problem(join_path(p, "pointer"), "is required with model (a JSON pointer into the model's state)");
        sc.expectations.push_back(std::move(x));
      }
  }

  // chart lines after resources are known
  if (doc.contains("chart") && doc["chart"].is_object() && doc["chart"].contains("lines") &&
      doc["chart"]["lines"].is_object()) {
    const auto cid = sc.registry.find(sc.chart_resource);
    for (auto it = doc["chart"]["lines"].begin(); it != doc["chart"]["lines"].end(); ++it) {
      if (!cid) break;
      sc.chart_lines[it.key()] =
          parse_resource_amount(it.value(), *cid, sc.registry, "$.chart.lines." + it.key(), &diag);
    }
  }

  // jobs named by events and expectations must exist
  std::map<std::string, bool> ids;
  for (const auto& j : sc.jobs) ids[j.id] = true;
  for (const auto& ev : sc.events)
    if (ev.type == "delete" && ev.body.contains("job") && ev.body["job"].is_string() &&
        !ids.count(ev.body["job"].get<std::string>()))
      diag.add(ev.path + ".job", "unknown job '" + ev.body["job"].get<std::string>() + "'");
  for (const auto& x : sc.expectations)
    if (x.body.contains("job") && x.body["job"].is_string() && !ids.count(x.body["job"].get<std::string>()))
      diag.add(x.path + ".job", "unknown job '" + x.body["job"].get<std::string>() + "'");

  diag.throw_if_any();
  // deterministic order of jobs: submission time, then file order (stable)
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(),
                   [](const job_spec& a, const job_spec& b) { return a.submit_ms < b.submit_ms; });
  std::stable_sort(sc.events.begin(), sc.events.end(),
                   [](const event_spec& a, const event_spec& b) { return a.at_ms < b.at_ms; });
  return sc;
}

/// True when `file` names a YAML scenario (.yaml or .yml).
[[nodiscard]] inline bool is_yaml_file(const std::string& file) {
  auto ends = [&](const char* suf) {
    const std::string x(suf);
    return file.size() >= x.size() && file.compare(file.size() - x.size(), x.size(), x) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

#ifdef QUOTA_SIM_HAVE_YAML
namespace detail {
/// A YAML node as the JSON tree the scenario loader reads. Plain scalars:
/// integers become numbers, true/false booleans, ~/null null, everything
/// else a string ("2Gi", "1.5", "5m"); quoted scalars always stay strings.
[[nodiscard]] inline json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& v = n.Scalar();
      if (n.Tag() == "!") return v;
      if (v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
      if (v == "true" || v == "True" || v == "TRUE") return true;
      if (v == "false" || v == "False" || v == "FALSE") return false;
      const std::size_t start = (!v.empty() && (v[0] == '-' || v[0] == '+')) ? 1 : 0;
      // as nlohmann parses JSON: non-negative integers unsigned, negative signed
      if (v.size() > start && v.size() - start <= 18 && v.find_first_not_of("0123456789", start) == std::string::npos) {
        if (v[0] == '-') return static_cast<std::int64_t>(std::stoll(v));
        return static_cast<std::uint64_t>(std::stoull(v.substr(start)));
      }
      return v;
    }
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& c : n) arr.push_back(yaml_to_json(c));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw parse_error(error_id::parse_malformed_document, "a YAML map key must be a scalar");
        obj[kv.first.Scalar()] = yaml_to_json(kv.second);
      }
      return obj;
    }
  }
  return nullptr;
}
}  // namespace detail
#endif

/// The JSON tree of a scenario file: JSON, or YAML (.yaml/.yml, when built
/// with yaml-cpp) converted to the same tree, so load_scenario reports the
/// same JSON paths for both. parse_error (105) when unreadable or malformed.
[[nodiscard]] inline json load_scenario_file(const std::string& file) {
  if (!is_yaml_file(file)) return load_json_file(file);
#ifdef QUOTA_SIM_HAVE_YAML
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw parse_error(error_id::parse_malformed_document, "cannot open '" + file + "'");
  } catch (const YAML::Exception& e) {
    throw parse_error(error_id::parse_malformed_document, file + ": invalid YAML at line " +
                                                              std::to_string(e.mark.line + 1) + ", column " +
                                                              std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  return detail::yaml_to_json(doc);
#else
  throw parse_error(error_id::parse_malformed_document,
                    file + ": YAML scenarios need quota-sim built with yaml-cpp (found at configure time)");
#endif
}

}  // namespace quota::sim
