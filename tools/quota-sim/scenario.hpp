// SPDX-License-Identifier: Apache-2.0
// quota-sim scenario: the cluster, the policies, timed jobs and events, and
// expectations. See docs/scenario-format.md. Loading checks the whole file
// first and reports every problem with its JSON path; nothing runs until the
// file is valid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <quota/duration.hpp>
#include <quota/error.hpp>
#include <quota/json.hpp>
#include <quota/quantity.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

#ifdef QUOTA_SIM_HAVE_YAML
#include <yaml-cpp/yaml.h>
#endif

#include "object_schema.hpp"

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
  /// Its creation time (jobs[].created, default its submit time): the
  /// models' job order breaks equal priorities with it (job::created_ms).
  std::int64_t created_ms = 0;
  std::int64_t duration_ms = -1;  // -1: runs until the end
  std::string ns = "default";
  std::string queue;
  std::string user;
  std::vector<std::string> groups;
  std::string priority_class;
  std::int32_t priority = 0;
  std::int32_t pods = 1;
  std::int32_t min_pods = 1;
  resource_vector per_pod;  // request of one pod (empty when the job has pod sets)
  /// Pod sets (a Kueue workload's podSets): set, the job's pods are these
  /// (pods and min_pods are their totals) and per_pod is empty.
  std::vector<quota::pod_set> pod_sets;
  std::map<std::string, std::string> node_selector;
  std::vector<std::string> claims;
  bool preemptible = true;
  gpu_request gpu;  // device-level placement (optional)
  json extra;       // model-specific fields, passed to the model factories
  /// Initial state: the job already runs at time 0 (placed, on `node` when
  /// named, and committed in every model without an admission check).
  bool running = false;
  std::string node;
  /// Kueue: the running workload carries the Evicted condition (it keeps its
  /// quota; Kueue's preemption takes it first).
  bool evicted = false;
  /// Its entry in the file's jobs[] (for messages: $.jobs[entry]).
  std::uint32_t entry = 0;
};

/// A rejection a scenario expects (docs/scenario-format.md, "Expected
/// errors"): a problem whose id is `id` (the bracketed id of the error,
/// "quota.validation_error.201"; empty: any), whose path is `path` (empty:
/// any) and whose message contains `message` (empty: any).
struct error_expectation {
  std::string id;
  std::string path;
  std::string message;
  std::string where;  // where it was written ($.expect_error[0])
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
  /// The event must be refused (its body at load time, or the reload when
  /// it is applied); empty: it must apply.
  std::vector<error_expectation> expect_error;
  /// Refused at load time as its expect_error says: skipped by the replay.
  bool refused = false;
};

/// A question an expectation asks at its instant (docs/scenario-format.md,
/// "Queries"): a question with arguments to one composed model
/// (yunikorn_limits headroom and can_run_app, a volcano queue's share and
/// overused, an elastic_quota quota's over-quota standing, a kai_fair_share
/// queue's fair share and share), or `allows`, the composed
/// engine's answer for a described job that is not in the scenario.
struct query_spec {
  std::string model;     // the model's kind; empty for allows
  std::string question;  // headroom, can_run_app, allows
  // headroom, can_run_app: the identity and the queue (qualified with root.)
  std::string user;
  std::vector<std::string> groups;
  std::string queue;  // volcano and kai_fair_share queue, elastic_quota quota: the name asked about
  std::string app;    // can_run_app: the application (empty: a new one)
  job_spec job;       // allows: the described job
  std::string path;   // where the query was written ($.expect[0].query)
};

/// The questions a query may ask each model kind, and the arguments each takes.
[[nodiscard]] inline const std::map<std::string, std::map<std::string, std::vector<std::string>>>& query_questions() {
  static const std::map<std::string, std::map<std::string, std::vector<std::string>>> q{
      {"elastic_quota", {{"quota", {"name"}}}},
      {"kai_fair_share", {{"queue", {"name"}}}},
      {"volcano", {{"queue", {"name"}}}},
      {"yunikorn_limits",
       {{"headroom", {"user", "groups", "queue"}}, {"can_run_app", {"user", "groups", "queue", "app"}}}}};
  return q;
}

struct expectation {
  std::int64_t at_ms = 0;  // INT64_MAX: at the end
  std::string path;        // where it was written, for messages
  json body;
  std::optional<query_spec> query;
};

/// What a policy does with running work when a reload lowers its quota
/// below usage (docs/scenario-format.md, "shrink"): keep it (upstream), or
/// evict what the new quota would not admit, `grace_ms` after the reload.
struct shrink_option {
  bool evict = false;
  std::int64_t grace_ms = 0;
};

/// A resource the scenario declares (resources[]): its name, its scale as
/// the registry keeps it (base unit = 10^-scale of one unit) and its entry
/// in the file ($.resources[entry]).
struct resource_declaration {
  std::string name;
  int scale = 0;
  std::size_t entry = 0;
};

struct policy_spec {
  std::string model;
  json body;  // the entry without "shrink" (scenario::shrink holds it)
  std::string path;
};

struct scenario {
  /// While a policy entry (or a reload event's body) is built: the jobs its
  /// checks of job fields cover, by submission, [from, until): those
  /// submitted while that configuration is in force (job_checked_now).
  std::int64_t check_jobs_from_ms = 0;
  std::int64_t check_jobs_until_ms = std::numeric_limits<std::int64_t>::max();
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
  std::string tenant_by = "queue";  // queue (falls back to namespace) | namespace | user
  /// tenant -> its reference lines: (label in the model's words, base units), by label
  std::map<std::string, std::vector<std::pair<std::string, std::int64_t>>> chart_lines;
  std::int64_t until_ms = -1;
  resource_registry registry;
  /// resources[]: the resources the scenario declares, in file order.
  std::vector<resource_declaration> declared_resources;
  /// Problems that do not stop the replay (unknown object fields under --lenient-objects).
  std::vector<diagnostic> warnings;
  /// expect_error: the file must be rejected with these problems (empty: it must be valid).
  std::vector<error_expectation> expect_error;
};

constexpr std::int64_t end_of_time = INT64_MAX;

/// Bounds on what a scenario may ask for, checked before anything is read
/// into memory or expanded (docs/reliability.md, "Input limits"). A file over
/// a bound is rejected with a problem naming the bound and the item; the
/// defaults hold every example and trace replay with room to spare.
/// Whether the policy entry being built checks job `js` (a job submitted
/// while that configuration is in force; scenario::check_jobs_from_ms).
[[nodiscard]] inline bool job_checked_now(const scenario& sc, const job_spec& js) noexcept {
  return js.submit_ms >= sc.check_jobs_from_ms && js.submit_ms < sc.check_jobs_until_ms;
}

/// A scenario job as the engine sees it, created at `created_ms`: the same
/// conversion for the replay, `explain --job` and what-if queries.
inline job job_of(const job_spec& js, std::int64_t created_ms) {
  job j;
  j.id = js.id;
  j.ns = js.ns;
  j.queue = js.queue;
  j.user = js.user;
  j.groups = js.groups;
  j.priority_class = js.priority_class;
  j.priority = js.priority;
  j.pods = js.pods;
  j.min_pods = js.min_pods;
  j.claims = js.claims;
  j.created_ms = created_ms;
  j.duration_ms = js.duration_ms;
  j.preemptible = js.preemptible;
  for (const auto& e : js.per_pod) j.request.set(e.id, quota::detail::checked_mul<amount>(e.value, js.pods));
  if (!js.pod_sets.empty()) {
    j.pod_sets = js.pod_sets;
    quota::total_pod_sets(j);
  }
  return j;
}

struct input_limits {
  std::uint64_t max_file_bytes = 256ull << 20;    // bytes read from a scenario or job file
  std::size_t max_values = 20'000'000;            // JSON/YAML values (aliases count once per use)
  std::size_t max_depth = 64;                     // nesting of objects and arrays
  std::size_t max_string_bytes = 1u << 20;        // one string or key
  std::size_t max_name_bytes = 1024;              // ids and names (jobs, nodes, tenants, labels)
  std::size_t max_jobs = 1'000'000;               // jobs after `count` copies
  std::size_t max_nodes = 100'000;                // nodes after `count` copies
  std::int32_t max_pods = 100'000;                // pods of one job
  std::size_t max_events = 1'000'000;             // events[] and expect[] entries, each
  std::uint64_t max_expanded_bytes = 1ull << 30;  // estimated memory of the `count` copies
  /// Times and durations (ms) are below 2^62 (about 146 million years), so
  /// that a start time plus a duration never overflows 64 bits.
  std::int64_t max_time_ms = std::int64_t{1} << 62;
  /// Unknown fields of the upstream objects inside policies (object_schema.hpp):
  /// errors, or with this set (quota-sim --lenient-objects) warnings.
  bool lenient_objects = false;
};

/// The limits in force: the defaults, or those a command line set.
inline input_limits& default_limits() {
  static input_limits l;
  return l;
}

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

/// A command-line count: decimal digits only, within [lo, hi]; nullopt for
/// anything else (a sign, a fraction, text, a number beyond 64 bits).
[[nodiscard]] inline std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t lo,
                                                              std::uint64_t hi) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

/// A command-line time or duration (--until, --at, --cycle): milliseconds, or
/// text as in scenarios ("90s", "1h30m"); nullopt when malformed or beyond
/// the time limit.
[[nodiscard]] inline std::optional<std::int64_t> parse_time_option(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    const auto v = parse_count(text, 0, static_cast<std::uint64_t>(default_limits().max_time_ms) - 1);
    if (!v) return std::nullopt;
    return static_cast<std::int64_t>(*v);
  }
  const auto d = parse_duration(json(text));
  if (!d || *d >= default_limits().max_time_ms) return std::nullopt;
  return d;
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
    const json& v = obj.at(key);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann converts any number to any integer type: 2147483648 would wrap
      // into an int32 and 1.5 would truncate. Only exact integers in range pass.
      if (!integer_in_range<T>(v)) {
        problem(join_path(path, key), "expected an integer in [" + std::to_string(std::numeric_limits<T>::min()) +
                                          ", " + std::to_string(std::numeric_limits<T>::max()) + "], got " +
                                          excerpt(v));
        return false;
      }
    }
    try {
      out = v.get<T>();
      return true;
    } catch (const json::exception&) {
      problem(join_path(path, key), std::string("expected ") + expected<T>() + ", got " + std::string(v.type_name()));
      return false;
    }
  }
  /// A required or optional name (id, node name): a non-empty string of at
  /// most `max_name_bytes` bytes.
  bool name(const json& obj, const char* key, std::string& out, const std::string& path, bool required,
            std::size_t max_bytes) {
    if (!get(obj, key, out, path, required)) return false;
    if (out.empty() || out.size() > max_bytes) {
      problem(join_path(path, key), out.empty()
                                        ? std::string("expected a non-empty name")
                                        : "a name of " + std::to_string(out.size()) +
                                              " bytes is longer than the limit of " + std::to_string(max_bytes));
      return false;
    }
    return true;
  }
  /// A value shown in a message: its JSON text, cut to 40 characters.
  static std::string excerpt(const json& v) {
    std::string t = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (t.size() > 40) t = t.substr(0, 37) + "...";
    return t;
  }
  template <class T>
  static bool integer_in_range(const json& v) {
    if (v.is_number_unsigned())
      return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    if (v.is_number_integer()) {
      const auto x = v.get<std::int64_t>();
      if (x < 0) return std::is_signed_v<T> && x >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
      return static_cast<std::uint64_t>(x) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    }
    return !v.is_number();  // not a number at all: get<T> reports the type
  }
  /// A time or duration; "end" only where `allow_end` (the end of the run is
  /// no time at which something can happen). Finite values are at most
  /// input_limits::max_time_ms.
  bool duration(const json& obj, const char* key, std::int64_t& out, const std::string& path, bool required,
                bool allow_end = false) {
    if (!obj.contains(key)) {
      if (required) problem(join_path(path, key), "is required");
      return false;
    }
    const json& v = obj.at(key);
    auto d = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)
                 ? std::nullopt
                 : parse_duration(v);
    if (!d) {
      problem(join_path(path, key),
              "expected a duration (milliseconds, or text like \"90s\", \"5m\", \"2h\"), got " + excerpt(v));
      return false;
    }
    if (*d == end_of_time && !allow_end) {
      problem(join_path(path, key),
              v.is_string() ? "\"end\" is not allowed here: expected a finite time"
                            : "expected a time below " + std::to_string(max_time_) + " ms, got " + excerpt(v));
      return false;
    }
    if (*d != end_of_time && *d >= max_time_) {
      problem(join_path(path, key), "expected a time below " + std::to_string(max_time_) +
                                        " ms (about 146 million years), got " + excerpt(v));
      return false;
    }
    out = *d;
    return true;
  }
  void set_max_time(std::int64_t t) { max_time_ = t; }

 private:
  template <class T>
  static const char* expected() {
    if constexpr (std::is_same_v<T, std::string>)
      return "a string";
    else if constexpr (std::is_same_v<T, bool>)
      return "a boolean";
    else if constexpr (std::is_integral_v<T>)
      return "an integer";
    else if constexpr (std::is_same_v<T, std::vector<std::string>>)
      return "an array of strings";
    else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>)
      return "an object of strings";
    else
      return "a value of another type";
  }
  diagnostics& d_;
  std::int64_t max_time_ = std::int64_t{1} << 62;
};

/// Looks items up by name, each name to the first item that has it; the
/// index is built at the first lookup (a scenario that names no node never
/// builds it). `name_of(item)` gives an item's name, which must outlive this.
template <class Items, class NameOf>
class first_by_name {
 public:
  first_by_name(const Items& items, NameOf name_of) : items_(items), name_of_(name_of) {}
  /// The index of the first item named `name`, or nullopt.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) {
    if (at_.empty())
      for (std::size_t k = 0; k < items_.size(); ++k) at_.emplace(name_of_(items_[k]), k);
    const auto it = at_.find(name);
    if (it == at_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const Items& items_;
  NameOf name_of_;
  std::unordered_map<std::string_view, std::size_t> at_;
};

/// Before anything is copied: do the `count` copies of the entries of `arr`
/// (nodes or jobs) stay within `max_total` entries and the expansion memory
/// limit? Reports the entry where a limit is passed and returns false; the
/// loader then reads every entry once and makes no copies.
inline bool copies_fit(reader& r, const json& arr, const std::string& base, std::size_t max_total, const char* what,
                       const input_limits& lim) {
  std::uint64_t total = 0, bytes = 0;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const json& e = arr[i];
    std::uint64_t count = 1;
    if (e.is_object() && e.contains("count")) {
      const json& c = e["count"];
      if (c.is_number_unsigned() && c.get<std::uint64_t>() >= 1 && c.get<std::uint64_t>() <= max_total)
        count = c.get<std::uint64_t>();
      else if (c.is_number_integer() && c.get<std::int64_t>() >= 1 &&
               static_cast<std::uint64_t>(c.get<std::int64_t>()) <= max_total)
        count = static_cast<std::uint64_t>(c.get<std::int64_t>());
      // any other count is reported with the entry
    }
    const std::string p = index_path(base, i);
    total += count;
    if (total > max_total) {
      r.problem(count > 1 ? join_path(p, "count") : p,
                "the scenario would have more than " + std::to_string(max_total) + " " + what + " (the " +
                    std::string(what).substr(0, std::strlen(what) - 1) + " limit)");
      return false;
    }
    if (count > 1) {
      bytes += count * (e.dump(-1, ' ', false, json::error_handler_t::replace).size() + 256);
      if (bytes > lim.max_expanded_bytes) {
        r.problem(join_path(p, "count"), std::string("the copies of ") + what + " would take more than " +
                                             std::to_string(lim.max_expanded_bytes >> 20) +
                                             " MiB (the expansion limit)");
        return false;
      }
    }
  }
  return true;
}

inline void check_keys(reader& r, const json& obj, const std::string& path, std::initializer_list<const char*> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known = known || it.key() == k;
    if (!known) r.problem(join_path(path, it.key()), "unknown field");
  }
}

/// What a resources[] declaration would have to say for an amount finer
/// than its resource's base unit (`scale`: the registry's exponent): "" when
/// `v` is not such an amount.
[[nodiscard]] inline std::string finer_scale_hint(const json& v, std::string_view name, int scale) {
  quantity q;
  if (!((v.is_string() && quantity::try_parse(v.get_ref<const std::string&>(), q)) ||
        (v.is_number_float() && quantity::try_parse(v.dump(), q))))
    return {};
  std::int64_t out = 0;
  if (q.to_base_into(scale, out) != quota::detail::quantity_status::too_precise) return {};
  const std::string written = v.is_string() ? v.get<std::string>() : v.dump();
  for (int k = scale + 1; k <= 9; ++k) {
    const auto st = q.to_base_into(k, out);
    if (st == quota::detail::quantity_status::too_precise) continue;
    const std::string units = std::to_string(quota::detail::pow10_u64[k]);
    if (st != quota::detail::quantity_status::ok)
      return "; a scale of " + units + " would hold its digits, but not its size in 64 bits";
    return "; " + written + " needs a scale of at least " + units + ": declare {\"name\": \"" + std::string(name) +
           "\", \"scale\": " + units + "} in resources";
  }
  return "; " + written + " is finer than the finest scale a resource may have (1000000000)";
}

/// A resource list of the scenario (a job's request, a node's allocatable):
/// parse_resource_list into `diag`, where an amount finer than its
/// resource's base unit says which declared scale would hold it.
[[nodiscard]] inline resource_vector read_amounts(const json& j, scenario& sc, const std::string& path,
                                                  diagnostics& diag) {
  diagnostics local;
  resource_vector v = parse_resource_list(j, sc.registry, path, &local);
  for (const auto& d : local.items()) {
    std::string hint;
    if (j.is_object())
      for (auto it = j.begin(); it != j.end() && hint.empty(); ++it)
        if (join_path(path, it.key()) == d.path)
          if (const auto id = sc.registry.find(it.key()))
            hint = finer_scale_hint(it.value(), it.key(), sc.registry.scale(*id));
    diag.add(d.path, d.message + hint);
  }
  return v;
}

/// resources[]: [{"name": "nvidia.com/gpu", "scale": 1000}, ...], each name
/// once, each scale a power of ten from 1 to 10^9 and not coarser than the
/// resource's default (cpu: 1000). Declared into the registry before any
/// amount is read.
inline void read_resources(reader& r, const json& arr, scenario& sc, const input_limits& lim) {
  if (!arr.is_array()) {
    r.problem("resources", "expected an array of {\"name\": resource, \"scale\": base units in one unit}");
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = index_path("resources", i);
    const json& e = arr[i];
    if (!e.is_object()) {
      r.problem(p, "expected {\"name\": resource, \"scale\": base units in one unit}");
      continue;
    }
    check_keys(r, e, p, {"name", "scale"});
    std::string name;
    bool ok = r.name(e, "name", name, p, true, lim.max_name_bytes);
    if (ok && !quota::detail::valid_resource_name(name)) {
      r.problem(join_path(p, "name"), "invalid resource name '" + name + "'");
      ok = false;
    }
    if (ok && !seen.insert(name).second) {
      r.problem(join_path(p, "name"), "resource '" + name + "' is declared twice");
      ok = false;
    }
    std::int64_t units = 0;
    if (!r.get(e, "scale", units, p, true)) continue;
    int k = 0;
    while (k <= 9 && static_cast<std::uint64_t>(units) != quota::detail::pow10_u64[k]) ++k;
    if (units < 1 || k > 9) {
      r.problem(join_path(p, "scale"),
                "expected a power of ten from 1 to 1000000000 (how many base units make one unit), got " +
                    std::to_string(units));
      continue;
    }
    if (ok && k < default_scale(name)) {
      r.problem(join_path(p, "scale"), name + " is counted at a scale of at least " +
                                           std::to_string(quota::detail::pow10_u64[default_scale(name)]));
      continue;
    }
    if (!ok) continue;
    sc.registry.declare(name, k);
    sc.declared_resources.push_back({name, k, i});
  }
}

/// True for an error id as errors print it: quota.<kind>.<number> (quota.validation_error.201).
[[nodiscard]] inline bool is_error_id(std::string_view id) {
  if (id.rfind("quota.", 0) != 0) return false;
  const auto dot = id.rfind('.');
  if (dot <= 6 || dot + 1 >= id.size()) return false;
  for (std::size_t i = 6; i < dot; ++i)
    if (!((id[i] >= 'a' && id[i] <= 'z') || id[i] == '_')) return false;
  return id.substr(dot + 1).find_first_not_of("0123456789") == std::string_view::npos;
}

/// expect_error at `path` of `obj`: one {"id", "path", "message"} object or an
/// array of them, each naming at least one of the three.
inline void read_error_expectations(reader& r, const json& obj, const std::string& path,
                                    std::vector<error_expectation>& out) {
  const std::string p = join_path(path, "expect_error");
  const json& v = obj.at("expect_error");
  const json list = v.is_array() ? v : json::array({v});
  if (list.empty()) r.problem(p, "expected at least one expected error");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string ip = v.is_array() ? index_path(p, i) : p;
    const json& e = list[i];
    if (!e.is_object()) {
      r.problem(ip, "expected {\"id\": \"quota.<kind>.<number>\", \"path\": \"$...\", \"message\": \"...\"}");
      continue;
    }
    check_keys(r, e, ip, {"id", "path", "message"});
    error_expectation x;
    x.where = "$." + ip;
    r.get(e, "id", x.id, ip);
    r.get(e, "path", x.path, ip);
    r.get(e, "message", x.message, ip);
    if (!x.id.empty() && !is_error_id(x.id))
      r.problem(join_path(ip, "id"), "expected an error id as errors print it, like quota.validation_error.201");
    if (x.id.empty() && x.path.empty() && x.message.empty())
      r.problem(ip, "name the expected error by id, path or message (at least one)");
    out.push_back(std::move(x));
  }
}

/// Whether `v` (a string) is a JSON pointer nlohmann accepts.
[[nodiscard]] inline bool valid_pointer(const json& v) {
  try {
    (void)json::json_pointer(v.get<std::string>());
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

/// The query of an expectation at `path` (docs/scenario-format.md, "Queries"):
/// {"model": kind, question: {args}} or {"allows": {job}}. Problems go to `r`.
/// The fields a scenario job and a what-if job share: namespace, queue, user,
/// groups, priority, priority class, pods and min_pods (checked).
inline void read_job_identity(reader& r, const json& jj, job_spec& js, const std::string& p, const input_limits& lim) {
  if (jj.contains("namespace")) r.name(jj, "namespace", js.ns, p, false, lim.max_name_bytes);
  if (jj.contains("queue")) r.name(jj, "queue", js.queue, p, false, lim.max_name_bytes);
  if (jj.contains("user")) r.name(jj, "user", js.user, p, false, lim.max_name_bytes);
  r.get(jj, "groups", js.groups, p);
  r.get(jj, "priority", js.priority, p);
  r.get(jj, "priority_class", js.priority_class, p);
  if (r.get(jj, "pods", js.pods, p) && (js.pods < 1 || js.pods > lim.max_pods)) {
    r.problem(join_path(p, "pods"), "expected 1 to " + std::to_string(lim.max_pods) + " (the pod limit of a job)");
    js.pods = 1;
  }
  js.min_pods = js.pods;
  if (r.get(jj, "min_pods", js.min_pods, p) && (js.min_pods < 1 || js.min_pods > js.pods)) {
    r.problem(join_path(p, "min_pods"), "expected 1..pods");
    js.min_pods = js.pods;
  }
}

/// A job's `pod_sets` (docs/scenario-format.md, "Pod sets"): each a name
/// (unique in the job), a count, a min_count (default: count) and one pod's
/// request; the job's pods and min_pods become their totals. A job with pod
/// sets gives neither pods, min_pods, request nor gpu.
inline void read_pod_sets(reader& r, const json& jj, job_spec& js, const std::string& p, scenario& sc,
                          diagnostics& diag, const input_limits& lim) {
  const std::string sp = join_path(p, "pod_sets");
  for (const char* k : {"pods", "min_pods", "request", "gpu"})
    if (jj.contains(k)) r.problem(join_path(p, k), "not with pod_sets: each pod set gives its own count and request");
  const json& sets = jj["pod_sets"];
  if (!sets.is_array() || sets.empty() || sets.size() > 8) {
    r.problem(sp, "expected an array of 1 to 8 pod sets: {\"name\", \"count\", \"min_count\", \"request\"}");
    return;
  }
  std::int64_t pods = 0, min_pods = 0;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const std::string q = index_path(sp, i);
    const json& o = sets[i];
    if (!o.is_object()) {
      r.problem(q, "expected an object");
      continue;
    }
    check_keys(r, o, q, {"name", "count", "min_count", "request"});
    // built in place (a moved resource_vector trips a false -Wstringop-overread in GCC 12)
    quota::pod_set& ps = js.pod_sets.emplace_back();
    r.name(o, "name", ps.name, q, true, lim.max_name_bytes);
    for (std::size_t k = 0; k + 1 < js.pod_sets.size(); ++k)
      if (!ps.name.empty() && js.pod_sets[k].name == ps.name)
        r.problem(join_path(q, "name"), "'" + ps.name + "' is named twice");
    if (r.get(o, "count", ps.count, q, true) && (ps.count < 1 || ps.count > lim.max_pods)) {
      r.problem(join_path(q, "count"), "expected 1 to " + std::to_string(lim.max_pods));
      ps.count = 1;
    }
    ps.min_count = ps.count;
    if (r.get(o, "min_count", ps.min_count, q) && (ps.min_count < 1 || ps.min_count > ps.count)) {
      r.problem(join_path(q, "min_count"), "expected 1..count");
      ps.min_count = ps.count;
    }
    if (!o.contains("request")) r.problem(join_path(q, "request"), "is required");
    ps.per_pod = read_amounts(o.value("request", json::object()), sc, "$." + join_path(q, "request"), diag);
    for (const auto& e : ps.per_pod)
      if (e.value > std::numeric_limits<amount>::max() / ps.count) {
        r.problem(join_path(join_path(q, "request"), std::string(sc.registry.name(e.id))),
                  "times " + std::to_string(ps.count) + " pods does not fit a 64-bit amount");
        break;
      }
    pods += ps.count;
    min_pods += ps.min_count;
  }
  if (pods > lim.max_pods) {
    r.problem(sp,
              "the pod sets have " + std::to_string(pods) + " pods; a job has at most " + std::to_string(lim.max_pods));
    return;
  }
  js.pods = static_cast<std::int32_t>(std::max<std::int64_t>(pods, 1));
  js.min_pods = static_cast<std::int32_t>(std::max<std::int64_t>(min_pods, 1));
  quota::job total;
  total.id = js.id;
  total.pod_sets = js.pod_sets;
  try {
    quota::total_pod_sets(total);
  } catch (const quota::error&) {
    r.problem(sp, "the job's total request does not fit a 64-bit amount");
    js.pod_sets.clear();
  }
}

inline std::optional<query_spec> read_query(reader& r, const json& q, const std::string& path, scenario& sc,
                                            diagnostics& diag, const input_limits& lim) {
  if (!q.is_object()) {
    r.problem(path, "expected {\"model\": \"<kind>\", \"<question>\": {...}} or {\"allows\": {job}}");
    return std::nullopt;
  }
  query_spec out;
  out.path = "$." + path;
  if (q.contains("allows")) {
    check_keys(r, q, path, {"allows"});
    out.question = "allows";
    const std::string p = join_path(path, "allows");
    const json& jj = q["allows"];
    if (!jj.is_object()) {
      r.problem(p, "expected a job: {\"request\": {...}, \"queue\": ..., \"user\": ...}");
      return std::nullopt;
    }
    check_keys(r, jj, p,
               {"id", "namespace", "queue", "user", "groups", "priority", "priority_class", "pods", "min_pods",
                "request", "preemptible", "pod_sets"});
    job_spec& js = out.job;
    js.id = "what-if";
    if (jj.contains("id")) r.name(jj, "id", js.id, p, false, lim.max_name_bytes);
    read_job_identity(r, jj, js, p, lim);
    r.get(jj, "preemptible", js.preemptible, p);
    if (jj.contains("pod_sets")) {
      read_pod_sets(r, jj, js, p, sc, diag, lim);
      return out;
    }
    if (!jj.contains("request")) r.problem(join_path(p, "request"), "is required");
    js.per_pod =
        parse_resource_list(jj.value("request", json::object()), sc.registry, "$." + join_path(p, "request"), &diag);
    for (const auto& e : js.per_pod)
      if (e.value > std::numeric_limits<amount>::max() / js.pods) {
        r.problem(join_path(join_path(p, "request"), std::string(sc.registry.name(e.id))),
                  "times " + std::to_string(js.pods) + " pods does not fit a 64-bit amount");
        break;
      }
    return out;
  }
  if (!q.contains("model") || !q["model"].is_string()) {
    r.problem(join_path(path, "model"), "is required: the kind of a composed model (or ask \"allows\")");
    return std::nullopt;
  }
  out.model = q["model"].get<std::string>();
  const auto& all = query_questions();
  const auto kind = all.find(out.model);
  if (kind == all.end()) {
    std::string kinds;
    for (const auto& [k, v] : all) kinds += (kinds.empty() ? "" : ", ") + k;
    r.problem(join_path(path, "model"), "no questions for model '" + out.model + "' (queries ask " + kinds +
                                            "; a model's state is read with model and pointer)");
    return std::nullopt;
  }
  if (std::none_of(sc.policies.begin(), sc.policies.end(),
                   [&](const policy_spec& ps) { return ps.model == out.model; }))
    r.problem(join_path(path, "model"), "no " + out.model + " policy in policies");
  std::string names;
  for (const auto& [question, args] : kind->second) names += (names.empty() ? "" : ", ") + question;
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it.key() == "model") continue;
    const auto question = kind->second.find(it.key());
    if (question == kind->second.end()) {
      r.problem(join_path(path, it.key()), "unknown question for " + out.model + " (expected one of " + names + ")");
      continue;
    }
    if (!out.question.empty()) {
      r.problem(join_path(path, it.key()), "one question per query (already asking " + out.question + ")");
      continue;
    }
    out.question = it.key();
    const std::string p = join_path(path, it.key());
    const json& a = it.value();
    if (!a.is_object()) {
      r.problem(p, "expected the question's arguments: {\"user\": ..., \"groups\": [...], \"queue\": ...}");
      continue;
    }
    for (auto k = a.begin(); k != a.end(); ++k)
      if (std::find(question->second.begin(), question->second.end(), k.key()) == question->second.end()) {
        std::string want;
        for (const auto& n : question->second) want += (want.empty() ? "" : ", ") + n;
        r.problem(join_path(p, k.key()), "unknown argument of " + out.question + " (expected " + want + ")");
      }
    if (out.model == "yunikorn_limits") {
      r.name(a, "user", out.user, p, true, lim.max_name_bytes);
      r.get(a, "groups", out.groups, p);
      r.name(a, "queue", out.queue, p, true, lim.max_name_bytes);
      if (a.contains("app")) r.name(a, "app", out.app, p, false, lim.max_name_bytes);
    } else {
      r.name(a, "name", out.queue, p, true, lim.max_name_bytes);
    }
  }
  if (out.question.empty()) r.problem(path, "expected a question for " + out.model + " (one of " + names + ")");
  return out;
}

/// A job an expectation names, checked once every job is known.
struct job_reference {
  std::string path;  // $.expect[3].evicted[0].job
  std::string id;
};

/// An object of text fields at `path`, each one of `keys`, at least one of
/// them (`form` says what is expected). Problems go to `r`.
inline void read_match_object(reader& r, const json& v, const std::string& path,
                              std::initializer_list<const char*> keys, const std::string& form) {
  if (!v.is_object() || v.empty()) {
    r.problem(path, "expected " + form);
    return;
  }
  check_keys(r, v, path, keys);
  for (const char* k : keys)
    if (v.contains(k) && !v[k].is_string()) r.problem(join_path(path, k), "expected a string");
}

/// The job-related fields of an expectation at `path` (docs/scenario-format.md,
/// "Expectations"): `reason` (text, or {model, rule, entity, message}),
/// `victims`, `evicted` (who the job evicted: ids or {job, model, rule, entity,
/// upstream_reason}) and `evicted_by` (an id, or {job, model, rule, entity,
/// upstream_reason}). The jobs they name go to `refs`; problems to `r`.
inline void read_job_expectation(reader& r, const json& xj, const std::string& path, std::vector<job_reference>& refs) {
  static constexpr const char* eviction_form =
      "{\"job\": ..., \"model\": ..., \"rule\": ..., \"entity\": ..., \"upstream_reason\": ...}";
  const bool has_job = xj.contains("job");
  if (has_job) {
    if (xj["job"].is_string())
      refs.push_back({"$." + join_path(path, "job"), xj["job"].get<std::string>()});
    else
      r.problem(join_path(path, "job"), "expected a job id");
  }
  for (const char* k : {"reason", "victims", "evicted", "evicted_by"})
    if (xj.contains(k) && !has_job) r.problem(join_path(path, k), "expected with job (the job it is about)");
  if (xj.contains("reason") && !xj["reason"].is_string())
    read_match_object(r, xj["reason"], join_path(path, "reason"), {"model", "rule", "entity", "message"},
                      "text the reason contains, or {\"model\": ..., \"rule\": ..., \"entity\": ..., "
                      "\"message\": ...} (at least one)");
  if (xj.contains("victims")) {
    const std::string vp = join_path(path, "victims");
    if (!xj["victims"].is_array()) {
      r.problem(vp, "expected an array of job ids");
    } else {
      for (std::size_t k = 0; k < xj["victims"].size(); ++k) {
        const json& v = xj["victims"][k];
        if (v.is_string())
          refs.push_back({"$." + index_path(vp, k), v.get<std::string>()});
        else
          r.problem(index_path(vp, k), "expected a job id");
      }
    }
  }
  if (xj.contains("evicted")) {
    const std::string ep = join_path(path, "evicted");
    if (!xj["evicted"].is_array()) {
      r.problem(ep, "expected an array of the jobs it evicted: ids or " + std::string(eviction_form));
    } else {
      for (std::size_t k = 0; k < xj["evicted"].size(); ++k) {
        const json& v = xj["evicted"][k];
        const std::string ip = index_path(ep, k);
        if (v.is_string()) {
          refs.push_back({"$." + ip, v.get<std::string>()});
          continue;
        }
        read_match_object(r, v, ip, {"job", "model", "rule", "entity", "upstream_reason"},
                          "a job id or {\"job\": ..., \"rule\": ..., ...}");
        if (!v.is_object()) continue;
        if (!v.contains("job"))
          r.problem(join_path(ip, "job"), "is required (the job evicted)");
        else if (v["job"].is_string())
          refs.push_back({"$." + join_path(ip, "job"), v["job"].get<std::string>()});
      }
    }
  }
  if (xj.contains("evicted_by")) {
    const std::string bp = join_path(path, "evicted_by");
    const json& v = xj["evicted_by"];
    if (v.is_string()) {
      refs.push_back({"$." + bp, v.get<std::string>()});
    } else {
      read_match_object(r, v, bp, {"job", "model", "rule", "entity", "upstream_reason"},
                        "the id of the job that evicted it, or " + std::string(eviction_form) + " (at least one)");
      if (v.is_object() && v.contains("job") && v["job"].is_string())
        refs.push_back({"$." + join_path(bp, "job"), v["job"].get<std::string>()});
    }
  }
}

}  // namespace detail

/// The id of an error as its message carries it ("[quota.state_error.501] ..."
/// anywhere in the text), else `fallback`.
[[nodiscard]] inline std::string error_id_of(std::string_view message,
                                             std::string_view fallback = "quota.validation_error.201") {
  for (auto at = message.find("[quota."); at != std::string_view::npos; at = message.find("[quota.", at + 1)) {
    const auto end = message.find(']', at);
    if (end == std::string_view::npos) break;
    const auto id = message.substr(at + 1, end - at - 1);
    if (detail::is_error_id(id)) return std::string(id);
  }
  return std::string(fallback);
}

/// Whether a problem (its path, message and id) is the error `x` expects.
[[nodiscard]] inline bool error_matches(const error_expectation& x, const diagnostic& problem, std::string_view id) {
  return (x.id.empty() || x.id == id) && (x.path.empty() || x.path == problem.path) &&
         (x.message.empty() || problem.message.find(x.message) != std::string::npos);
}

/// Expected errors against the problems found: every expectation matches a
/// problem and every problem is expected. What does not hold goes to `out`.
inline bool settle_expected_errors(const std::vector<error_expectation>& want, const std::vector<diagnostic>& got,
                                   std::vector<std::string>& out) {
  const std::size_t before = out.size();
  std::vector<bool> used(got.size(), false);
  for (const auto& x : want) {
    bool hit = false;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (error_matches(x, got[i], error_id_of(got[i].message))) used[i] = hit = true;
    if (!hit)
      out.push_back(x.where + ": no problem" + (x.id.empty() ? "" : " with id " + x.id) +
                    (x.path.empty() ? "" : " at " + x.path) +
                    (x.message.empty() ? "" : " containing '" + x.message + "'"));
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!used[i]) out.push_back("unexpected problem " + got[i].path + ": " + got[i].message);
  return out.size() == before;
}

/// The problems under a reload event that expects errors (its path, then
/// '.', ':' or the end) are taken out of `problems` and settled against its
/// expect_error: when they all are expected, the event is refused at load
/// time (the replay skips it); otherwise they stay, with what does not match.
/// Returns the problems left.
[[nodiscard]] inline std::vector<diagnostic> take_event_errors(scenario& sc, std::vector<diagnostic> problems) {
  for (auto& ev : sc.events) {
    if (ev.expect_error.empty() || ev.refused) continue;
    std::vector<diagnostic> mine, rest;
    for (auto& d : problems) {
      const bool under =
          d.path.rfind(ev.path, 0) == 0 &&
          (d.path.size() == ev.path.size() || d.path[ev.path.size()] == '.' || d.path[ev.path.size()] == ':') &&
          d.path.rfind(ev.path + ".expect_error", 0) != 0;  // a malformed expect_error stays an error
      (under ? mine : rest).push_back(std::move(d));
    }
    problems = std::move(rest);
    if (mine.empty()) continue;  // valid at load: the expectation applies when the reload runs
    std::vector<std::string> miss;
    if (settle_expected_errors(ev.expect_error, mine, miss)) {
      ev.refused = true;
      continue;
    }
    for (auto& d : mine) problems.push_back(std::move(d));
    for (const auto& m : miss) problems.push_back({ev.path + ".expect_error", m});
  }
  return problems;
}

/// Loads a scenario from JSON into `diag`: every problem with its path (like
/// $.jobs[3].request.cpu); the scenario returned is complete only when `diag`
/// stayed empty. Sizes are checked against `lim` before anything is expanded.
inline scenario load_scenario(const json& doc, diagnostics& out, const input_limits& lim) {
  diagnostics diag;  // to `out` at the end, but for the errors a reload event expects
  detail::reader r(diag);
  r.set_max_time(lim.max_time_ms);
  scenario sc;
  if (!doc.is_object()) {
    out.add("$", std::string("a scenario must be a JSON object, got ") + doc.type_name());
    return sc;
  }
  bool copies_skipped = false;  // a size limit was passed: entries were read once, not copied
  detail::check_keys(r, doc, "",
                     {"name", "description", "cluster", "scheduler", "policies", "jobs", "events", "expect", "chart",
                      "tenant_by", "until", "$schema", "expect_error", "resources"});
  r.get(doc, "name", sc.name, "", true);
  r.get(doc, "description", sc.description, "");
  if (doc.contains("expect_error")) detail::read_error_expectations(r, doc, "", sc.expect_error);
  r.get(doc, "tenant_by", sc.tenant_by, "");
  if (sc.tenant_by != "queue" && sc.tenant_by != "namespace" && sc.tenant_by != "user")
    r.problem("tenant_by", "expected one of queue, namespace, user");
  if (doc.contains("until")) r.duration(doc, "until", sc.until_ms, "", false, true);
  // declared resources and their scales, before any amount is read
  if (doc.contains("resources")) detail::read_resources(r, doc["resources"], sc, lim);

  // cluster
  if (!doc.contains("cluster") || !doc["cluster"].is_object() || !doc["cluster"].contains("nodes") ||
      !doc["cluster"]["nodes"].is_array()) {
    r.problem("cluster.nodes", "is required: an array of nodes");
  } else {
    const auto& nodes = doc["cluster"]["nodes"];
    detail::check_keys(r, doc["cluster"], "cluster", {"nodes"});
    std::map<std::string, int> seen;
    const bool expand = detail::copies_fit(r, nodes, "cluster.nodes", lim.max_nodes, "nodes", lim);
    copies_skipped = copies_skipped || !expand;
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
          if (r.get(g, "count", spec.gpu.count, gp, true) && (spec.gpu.count < 0 || spec.gpu.count > 1024))
            r.problem(join_path(gp, "count"), "expected 0 to 1024");
          r.get(g, "model", spec.gpu.model, gp);
        }
      }
      r.name(n, "name", spec.name, p, true, lim.max_name_bytes);
      std::int64_t count = 1;
      if (r.get(n, "count", count, p) && (count < 1 || static_cast<std::uint64_t>(count) > lim.max_nodes)) {
        r.problem(join_path(p, "count"), "expected 1 to " + std::to_string(lim.max_nodes) + " (the node limit)");
        count = 1;
      }
      if (!expand) count = 1;  // over a size limit: each entry once, to check the rest of the file
      if (!n.contains("allocatable")) r.problem(join_path(p, "allocatable"), "is required");
      spec.allocatable =
          detail::read_amounts(n.value("allocatable", json::object()), sc, "$." + join_path(p, "allocatable"), diag);
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
      for (std::int64_t c = 0; c < count; ++c) {
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
        if (!c["lines"].is_object())
          r.problem("chart.lines", "expected an object of tenant: quantity, or tenant: {label: quantity}");
      }
    }
  }

  // unknown fields of the upstream objects of a policy entry: errors, or warnings when lenient
  auto unknown_fields = [&](const json& entry, const std::string& path) {
    for (const auto& u : unknown_object_fields(entry, "$." + path)) {
      if (lim.lenient_objects)
        sc.warnings.push_back(u);
      else
        diag.add(u.path, u.message + " (quota-sim --lenient-objects makes this a warning)");
    }
  };

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
        unknown_fields(pj, p);
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
    detail::first_by_name node_named(sc.nodes, [](const node_spec& n) -> std::string_view { return n.name; });
    const auto find_node = [&](const std::string& name) {
      const auto k = node_named.find(name);
      return k ? sc.nodes.begin() + static_cast<std::ptrdiff_t>(*k) : sc.nodes.end();
    };
    const auto& jobs = doc["jobs"];
    const bool expand = detail::copies_fit(r, jobs, "jobs", lim.max_jobs, "jobs", lim);
    copies_skipped = copies_skipped || !expand;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const std::string p = index_path("jobs", i);
      const auto& jj = jobs[i];
      if (!jj.is_object()) {
        r.problem(p, "expected an object");
        continue;
      }
      detail::check_keys(
          r, jj, p, {"id",          "submit",         "duration", "namespace", "queue",   "user",          "groups",
                     "priority",    "priority_class", "pods",     "min_pods",  "request", "node_selector", "claims",
                     "preemptible", "count",          "extra",    "gpu",       "running", "node",          "evicted",
                     "pod_sets",    "created"});
      job_spec js;
      js.entry = static_cast<std::uint32_t>(i);
      r.name(jj, "id", js.id, p, true, lim.max_name_bytes);
      r.duration(jj, "submit", js.submit_ms, p, false);
      js.created_ms = js.submit_ms;
      r.duration(jj, "created", js.created_ms, p, false);
      if (jj.contains("duration") && r.duration(jj, "duration", js.duration_ms, p, false, true) &&
          js.duration_ms == end_of_time)
        js.duration_ms = -1;  // "end": runs until the end
      read_job_identity(r, jj, js, p, lim);
      r.get(jj, "node_selector", js.node_selector, p);
      r.get(jj, "claims", js.claims, p);
      r.get(jj, "preemptible", js.preemptible, p);
      if (jj.contains("pod_sets")) {
        detail::read_pod_sets(r, jj, js, p, sc, diag, lim);
      } else {
        if (!jj.contains("request")) r.problem(join_path(p, "request"), "is required");
        js.per_pod =
            detail::read_amounts(jj.value("request", json::object()), sc, "$." + join_path(p, "request"), diag);
      }
      // the job's request is pods x request: it must fit 64 bits
      for (const auto& e : js.per_pod)
        if (e.value > std::numeric_limits<amount>::max() / js.pods) {
          r.problem(join_path(join_path(p, "request"), std::string(sc.registry.name(e.id))),
                    "times " + std::to_string(js.pods) + " pods does not fit a 64-bit amount");
          break;
        }
      if (jj.contains("extra")) js.extra = jj["extra"];
      if (jj.contains("gpu")) {
        const auto& g = jj["gpu"];
        const std::string gp = join_path(p, "gpu");
        if (!g.is_object()) {
          r.problem(gp, "expected {\"count\": N, \"milli\": M, \"models\": [...]}");
        } else {
          detail::check_keys(r, g, gp, {"count", "milli", "models"});
          if (r.get(g, "count", js.gpu.count, gp, true) && (js.gpu.count < 0 || js.gpu.count > 1024))
            r.problem(join_path(gp, "count"), "expected 0 to 1024");
          if (r.get(g, "milli", js.gpu.milli, gp) && (js.gpu.milli < 1 || js.gpu.milli > 1000))
            r.problem(join_path(gp, "milli"), "expected 1 to 1000");
          r.get(g, "models", js.gpu.models, gp);
          if (js.gpu.count > 1 && js.gpu.milli != 1000)
            r.problem(join_path(gp, "milli"), "a share of a device (milli < 1000) is for one device only");
        }
      }
      // initial state: running at time 0, on a node of the cluster, Kueue's Evicted mark
      r.get(jj, "running", js.running, p);
      if (js.running && js.submit_ms != 0)
        r.problem(join_path(p, "submit"), "a job running at the start is submitted at 0");
      if (jj.contains("node") && r.name(jj, "node", js.node, p, false, lim.max_name_bytes)) {
        const auto n = find_node(js.node);
        if (!js.running)
          r.problem(join_path(p, "node"), "a node is named for a job running at the start (with \"running\": true)");
        else if (!js.claims.empty())
          r.problem(join_path(p, "node"), "a job with claims runs where its claims are: no node to name");
        else if (n == sc.nodes.end())
          r.problem(join_path(p, "node"), "unknown node '" + js.node + "' (not in cluster.nodes)");
        else
          for (const auto& [k, v] : js.node_selector)
            if (auto l = n->labels.find(k); l == n->labels.end() || l->second != v) {
              r.problem(join_path(p, "node"),
                        "node '" + js.node + "' does not match the job's node_selector " + k + "=" + v);
              break;
            }
      }
      if (r.get(jj, "evicted", js.evicted, p) && js.evicted) {
        if (!js.running)
          r.problem(join_path(p, "evicted"), "only a job running at the start can be evicted (with \"running\": true)");
        else if (std::none_of(sc.policies.begin(), sc.policies.end(),
                              [](const policy_spec& ps) { return ps.model == "kueue"; }))
          r.problem(join_path(p, "evicted"),
                    "evicted marks a Kueue workload (its Evicted condition); no kueue policy is composed");
      }
      std::int64_t count = 1;
      if (r.get(jj, "count", count, p) && (count < 1 || static_cast<std::uint64_t>(count) > lim.max_jobs)) {
        r.problem(join_path(p, "count"), "expected 1 to " + std::to_string(lim.max_jobs) + " (the job limit)");
        count = 1;
      }
      if (!expand) count = 1;  // over a size limit: each entry once, to check the rest of the file
      for (std::int64_t c = 0; c < count; ++c) {
        job_spec copy = js;
        if (count > 1) copy.id = js.id + "-" + std::to_string(c);
        if (seen[copy.id]++) r.problem(join_path(p, "id"), "duplicate job id '" + copy.id + "'");
        sc.jobs.push_back(std::move(copy));
      }
    }
  }

  // events
  std::set<std::string> added_nodes;                               // names of node_add events
  std::vector<std::pair<std::string, std::string>> removed_nodes;  // node_remove: name, path
  if (doc.contains("events")) {
    if (!doc["events"].is_array())
      r.problem("events", "expected an array");
    else if (doc["events"].size() > lim.max_events)
      r.problem("events", "more than " + std::to_string(lim.max_events) + " events (the event limit)");
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
          detail::check_keys(r, ej, p, {"at", "type", "node"});
          if (!ej.contains("node") || !ej["node"].is_object())
            r.problem(join_path(p, "node"), "is required: {name, allocatable, labels}");
          else {
            const auto& nj = ej["node"];
            const std::string np = join_path(p, "node");
            detail::check_keys(r, nj, np, {"name", "allocatable", "labels", "gpu"});
            (void)detail::read_amounts(nj.value("allocatable", json::object()), sc, "$." + join_path(np, "allocatable"),
                                       diag);
            std::string n;
            if (r.name(nj, "name", n, np, true, lim.max_name_bytes)) added_nodes.insert(n);
            if (nj.contains("labels") && !nj["labels"].is_object())
              r.problem(join_path(np, "labels"), "expected an object of strings");
            else if (nj.contains("labels"))
              for (auto it = nj["labels"].begin(); it != nj["labels"].end(); ++it)
                if (!it.value().is_string())
                  r.problem(join_path(join_path(np, "labels"), it.key()), "expected a string");
            if (nj.contains("gpu")) {
              const auto& g = nj["gpu"];
              const std::string gp = join_path(np, "gpu");
              std::int32_t gc = 0;
              std::string gm;
              if (!g.is_object()) {
                r.problem(gp, "expected {\"count\": N, \"model\": \"...\"}");
              } else {
                detail::check_keys(r, g, gp, {"count", "model"});
                if (r.get(g, "count", gc, gp, true) && (gc < 0 || gc > 1024))
                  r.problem(join_path(gp, "count"), "expected 0 to 1024");
                r.get(g, "model", gm, gp);
              }
            }
          }
        } else if (ev.type == "node_remove") {
          detail::check_keys(r, ej, p, {"at", "type", "name"});
          std::string n;
          if (r.get(ej, "name", n, p, true)) removed_nodes.emplace_back(n, join_path(p, "name"));
        } else if (ev.type == "delete") {
          detail::check_keys(r, ej, p, {"at", "type", "job"});
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
          if (ej.contains("expect_error")) detail::read_error_expectations(r, ej, p, ev.expect_error);
          if (found) {
            ev.policy_body = json::object();
            ev.policy_body["model"] = sc.policies[ev.policy].model;
            for (auto it = ej.begin(); it != ej.end(); ++it)
              if (it.key() != "at" && it.key() != "type" && it.key() != "policy" && it.key() != "model" &&
                  it.key() != "expect_error")
                ev.policy_body[it.key()] = it.value();
            if (ej.contains("model") && ej["model"] != ev.policy_body["model"])
              r.problem(join_path(p, "model"),
                        "a reload keeps the policy's model ('" + sc.policies[ev.policy].model + "')");
            unknown_fields(ev.policy_body, p);
          }
        } else if (!ev.type.empty()) {
          r.problem(join_path(p, "type"),
                    "unknown event type '" + ev.type + "' (node_add, node_remove, delete, reload)");
        }
        sc.events.push_back(std::move(ev));
      }
  }

  // expectations
  std::vector<detail::job_reference> job_refs;  // the jobs they name, checked below
  if (doc.contains("expect")) {
    if (!doc["expect"].is_array())
      r.problem("expect", "expected an array");
    else if (doc["expect"].size() > lim.max_events)
      r.problem("expect", "more than " + std::to_string(lim.max_events) + " expectations (the event limit)");
    else
      for (std::size_t i = 0; i < doc["expect"].size(); ++i) {
        const std::string p = index_path("expect", i);
        const auto& xj = doc["expect"][i];
        if (!xj.is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        detail::check_keys(
            r, xj, p,
            {"at", "job", "state", "reason", "tenant", "usage", "admitted", "pending", "preemptions", "model",
             "pointer", "equals", "victims", "node", "note", "query", "evicted", "evicted_by", "pods"});
        detail::read_job_expectation(r, xj, p, job_refs);
        expectation x;
        x.at_ms = end_of_time;
        if (xj.contains("at")) r.duration(xj, "at", x.at_ms, p, false, true);
        x.path = "$." + p;
        x.body = xj;
        const bool has_subject = xj.contains("job") || xj.contains("tenant") || xj.contains("admitted") ||
                                 xj.contains("pending") || xj.contains("preemptions") || xj.contains("model") ||
                                 xj.contains("query");
        if (!has_subject)
          r.problem(p, "an expectation needs job, tenant, model, query, admitted, pending or preemptions");
        if (xj.contains("state")) {
          const auto st = xj["state"];
          if (!st.is_string() || (st != "pending" && st != "running" && st != "finished" && st != "preempted"))
            r.problem(join_path(p, "state"), "expected pending, running, finished or preempted");
        }
        if (xj.contains("pods")) {
          const auto& pj = xj["pods"];
          bool ok = xj.contains("job") && (pj.is_number_integer() || pj.is_array());
          if (ok && pj.is_array())
            for (const auto& c : pj) ok = ok && c.is_number_integer();
          if (!ok)
            r.problem(join_path(p, "pods"),
                      "expected, with job, the pods it runs: a count, or one count per pod set ([1, 4])");
        }
        if (xj.contains("node") && (!xj.contains("job") || !xj["node"].is_string()))
          r.problem(join_path(p, "node"), "expected a node name, with job (the node all its pods run on)");
        if (xj.contains("usage"))
          (void)parse_resource_list(xj["usage"], sc.registry, "$." + join_path(p, "usage"), &diag);
        if (xj.contains("query")) {
          if (xj.contains("model") || xj.contains("job") || xj.contains("tenant"))
            r.problem(p, "a query is an expectation of its own: leave out model, job and tenant");
          else if (!xj.contains("equals") && !xj.contains("pointer"))
            r.problem(join_path(p, "equals"), "is required with query (or pointer, to ask that the answer holds it)");
          x.query = detail::read_query(r, xj["query"], join_path(p, "query"), sc, diag, lim);
        } else if (xj.contains("model") && !xj.contains("pointer")) {
          r.problem(join_path(p, "pointer"), "is required with model (a JSON pointer into the model's state)");
        }
        if (xj.contains("pointer") && (!xj["pointer"].is_string() || !detail::valid_pointer(xj["pointer"])))
          r.problem(join_path(p, "pointer"), "expected a JSON pointer (\"\" or \"/key/0\")");
        sc.expectations.push_back(std::move(x));
      }
  }

  // node_remove names a node of the cluster or of a node_add event
  if (!copies_skipped && (!sc.nodes.empty() || !added_nodes.empty())) {
    std::set<std::string> names(added_nodes);
    for (const auto& n : sc.nodes) names.insert(n.name);
    for (const auto& [name, path] : removed_nodes)
      if (!names.count(name))
        r.problem(path, "unknown node '" + name + "' (not in cluster.nodes nor added by an event)");
  }

  // the chart resource and lines after resources and tenants are known
  const bool chart_named = doc.contains("chart") && doc["chart"].is_object() && doc["chart"].contains("resource") &&
                           doc["chart"]["resource"].is_string();
  auto cid = sc.registry.find(sc.chart_resource);
  const bool in_nodes =
      cid && (!added_nodes.empty() || std::any_of(sc.nodes.begin(), sc.nodes.end(),
                                                  [&](const node_spec& n) { return n.allocatable.get(*cid) != 0; }));
  if (chart_named && !in_nodes) {
    r.problem("chart.resource", "resource '" + sc.chart_resource +
                                    "' is in no node's allocatable (the chart shows its use against capacity)");
    cid.reset();
  }
  if (doc.contains("chart") && doc["chart"].is_object() && doc["chart"].contains("lines") &&
      doc["chart"]["lines"].is_object() && cid) {
    std::set<std::string> tenants;
    for (const auto& j : sc.jobs)
      tenants.insert(sc.tenant_by == "user"        ? (j.user.empty() ? std::string("(none)") : j.user)
                     : sc.tenant_by == "namespace" ? j.ns
                     : j.queue.empty()             ? j.ns
                                                   : j.queue);
    // an amount of the chart resource; one finer than its unit says which scale would hold it
    const auto line_amount = [&](const json& v, const std::string& path) {
      diagnostics local;
      const amount a = parse_resource_amount(v, *cid, sc.registry, path, &local);
      for (const auto& d : local.items())
        diag.add(d.path, d.message + detail::finer_scale_hint(v, sc.registry.name(*cid), sc.registry.scale(*cid)));
      return a;
    };
    for (auto it = doc["chart"]["lines"].begin(); it != doc["chart"]["lines"].end(); ++it) {
      const std::string lp = "$.chart.lines." + it.key();
      if (!tenants.count(it.key()))
        diag.add(lp, "unknown tenant '" + it.key() + "' (tenants are the jobs' " +
                         (sc.tenant_by == "queue" ? std::string("queue, else namespace") : sc.tenant_by) + ")");
      auto& lines = sc.chart_lines[it.key()];
      if (it.value().is_object()) {  // {"nominal quota": 16, "borrowing limit": 24}
        for (auto l = it.value().begin(); l != it.value().end(); ++l) {
          if (l.key().empty()) diag.add(lp, "expected a non-empty label");
          lines.emplace_back(l.key(), line_amount(l.value(), lp + "." + l.key()));
        }
      } else {
        lines.emplace_back("reference", line_amount(it.value(), lp));
      }
    }
  }

  // jobs named by events and expectations must exist
  std::map<std::string, bool> ids;
  for (const auto& j : sc.jobs) ids[j.id] = true;
  for (const auto& ev : sc.events)
    if (!copies_skipped && ev.type == "delete" && ev.body.contains("job") && ev.body["job"].is_string() &&
        !ids.count(ev.body["job"].get<std::string>()))
      diag.add(ev.path + ".job", "unknown job '" + ev.body["job"].get<std::string>() + "'");
  for (const auto& ref : job_refs)
    if (!copies_skipped && !ids.count(ref.id)) diag.add(ref.path, "unknown job '" + ref.id + "'");
  for (const auto& x : sc.expectations)
    if (!copies_skipped && x.query && x.query->question == "allows" && ids.count(x.query->job.id))
      diag.add(x.query->path + ".allows.id",
               "job '" + x.query->job.id + "' is in the scenario: a what-if asks about a job that is not");

  // deterministic order of jobs: submission time, then file order (stable)
  std::stable_sort(sc.jobs.begin(), sc.jobs.end(),
                   [](const job_spec& a, const job_spec& b) { return a.submit_ms < b.submit_ms; });
  std::stable_sort(sc.events.begin(), sc.events.end(),
                   [](const event_spec& a, const event_spec& b) { return a.at_ms < b.at_ms; });
  // A reload without "options" keeps the options in force (those of the
  // policy's entry or of its last reload that wrote them); "options": {} is
  // the model's defaults. A reload of nothing but "options" keeps the rest of
  // the entry in force (objects, config, ...) and changes the options only.
  // A reload expected to be refused changes nothing.
  std::vector<const json*> options(sc.policies.size(), nullptr), entry(sc.policies.size(), nullptr);
  for (std::size_t k = 0; k < sc.policies.size(); ++k) {
    entry[k] = &sc.policies[k].body;
    if (sc.policies[k].body.contains("options")) options[k] = &sc.policies[k].body["options"];
  }
  for (auto& ev : sc.events) {
    if (ev.type != "reload" || !ev.policy_body.is_object() || ev.policy >= options.size()) continue;
    if (ev.policy_body.size() == 2 && ev.policy_body.contains("options"))  // "model" and "options"
      for (auto it = entry[ev.policy]->begin(); it != entry[ev.policy]->end(); ++it)
        if (!ev.policy_body.contains(it.key())) ev.policy_body[it.key()] = it.value();
    if (!ev.policy_body.contains("options")) {
      if (options[ev.policy]) ev.policy_body["options"] = *options[ev.policy];
    } else if (ev.expect_error.empty()) {
      options[ev.policy] = &ev.policy_body["options"];
    }
    if (ev.expect_error.empty()) entry[ev.policy] = &ev.policy_body;
  }
  for (auto& d : take_event_errors(sc, diag.items())) out.add(std::move(d.path), std::move(d.message));
  return sc;
}

/// Loads a scenario from JSON; throws validation_error listing every problem
/// (paths like $.jobs[3].request.cpu).
inline scenario load_scenario(const json& doc, const input_limits& lim = default_limits()) {
  diagnostics diag;
  scenario sc = load_scenario(doc, diag, lim);
  diag.throw_if_any();
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

/// The bytes of `file`, at most `lim.max_file_bytes` of them: a longer file,
/// or an endless one (/dev/zero, a pipe that never ends), is a parse_error
/// (105) as soon as the bound is passed, so memory stays bounded.
[[nodiscard]] inline std::string read_input_file(const std::string& file, const input_limits& lim = default_limits()) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw parse_error(error_id::parse_malformed_document, "cannot open '" + file + "'");
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > lim.max_file_bytes)
      throw parse_error(error_id::parse_malformed_document, file + ": larger than the input limit of " +
                                                                std::to_string(lim.max_file_bytes) + " bytes (" +
                                                                std::to_string(lim.max_file_bytes >> 20) + " MiB)");
    text.append(buf, got);
  }
  if (in.bad() || (!in.eof() && in.fail()))
    throw parse_error(error_id::parse_malformed_document, "cannot read '" + file + "'");
  return text;
}

namespace detail {
/// A message fragment that quotes input: bytes that are not printable ASCII
/// (control characters, any non-ASCII byte) become \xNN.
[[nodiscard]] inline std::string printable(std::string_view in) {
  static const char* hex = "0123456789abcdef";
  std::string o;
  for (char c : in) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      o += c;
    } else {
      o += "\\x";
      o += hex[u >> 4];
      o += hex[u & 0xf];
    }
  }
  return o;
}

/// True when `s` is well-formed UTF-8 (as JSON text must be): no stray
/// continuation bytes, no overlong forms, no surrogates, nothing above U+10FFFF.
[[nodiscard]] inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t more = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // range of the first continuation byte
    if (c < 0x80)
      more = 0;
    else if (c >= 0xc2 && c <= 0xdf)
      more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    } else
      return false;
    if (i + more >= s.size() && more > 0) return false;
    for (std::size_t k = 1; k <= more; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return false;
    }
    i += more + 1;
  }
  return true;
}

/// Builds the JSON tree of a document with the input checks (at most
/// `max_values` values, `max_depth` levels, `max_string_bytes` per string, no
/// key twice in one object) as a SAX handler: checking each key against the
/// map being built keeps the parse linear in the text (a scenario or a cluster
/// dump is one array of up to hundreds of thousands of objects).
class checked_json_builder {
 public:
  checked_json_builder(const input_limits& lim, std::string what) : lim_(lim), what_(std::move(what)) {}
  json root;

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) {
    if (!std::isfinite(v)) fail("a number beyond the range of a double");
    return put(json(v));
  }
  bool string(std::string& v) {
    check_string(v);
    return put(json(std::move(v)));
  }
  bool binary(json::binary_t&) {
    fail("binary values are not JSON");
    return false;
  }
  bool start_object(std::size_t) {
    check_depth();
    frames_.push_back({slot(json::object()), false, nullptr, nullptr});
    return true;
  }
  bool key(std::string& k) {
    check_string(k);
    frame& f = frames_.back();
    auto& members = f.at->get_ref<json::object_t&>();
    const auto [it, fresh] = members.emplace(std::move(k), nullptr);
    f.key = &it->first;
    if (!fresh) fail("duplicate key (a JSON object names each key once)");
    f.element = &it->second;
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) {
    check_depth();
    frames_.push_back({slot(json::array()), true, nullptr, nullptr});
    return true;
  }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const json::exception& ex) {
    if (ex.id == 406)  // a number beyond a double (1e400)
      throw quota::parse_error(error_id::parse_malformed_document,
                               what_ + ": " + printable(path()) + ": " + printable(ex.what()));
    throw quota::parse_error(error_id::parse_malformed_document, what_ + ": invalid JSON at byte " +
                                                                     std::to_string(position) + " (" +
                                                                     printable(path()) + "): " + printable(ex.what()));
  }

  /// The JSON path of the value being read ($.jobs[3].request).
  [[nodiscard]] std::string path() const {
    // an open array's last element is the value being read, but for the
    // innermost one, whose next value is
    std::string p = "$";
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const frame& f = frames_[i];
      if (f.array)
        p += "[" + std::to_string(f.at->size() - (i + 1 < frames_.size() ? 1 : 0)) + "]";
      else if (f.key)
        p += "." + *f.key;
    }
    return p;
  }

 private:
  struct frame {
    json* at;
    bool array;
    const std::string* key;  // the member being read (a key of the object's map)
    json* element;
  };
  [[noreturn]] void fail(const std::string& msg) const { throw validation_error(path(), msg); }
  void check_string(const std::string& v) const {
    if (v.size() > lim_.max_string_bytes)
      fail("a string of " + std::to_string(v.size()) + " bytes is longer than the limit of " +
           std::to_string(lim_.max_string_bytes));
  }
  /// Where the next value goes (counted against the value limit).
  json* slot(json v) {
    if (++values_ > lim_.max_values) fail("more than " + std::to_string(lim_.max_values) + " values (the value limit)");
    if (frames_.empty()) {
      root = std::move(v);
      return &root;
    }
    frame& f = frames_.back();
    if (f.array) {
      f.at->push_back(std::move(v));
      return &f.at->back();
    }
    *f.element = std::move(v);
    return f.element;
  }
  bool put(json v) {
    (void)slot(std::move(v));
    return true;
  }
  void check_depth() const {
    if (frames_.size() >= lim_.max_depth)
      fail("nested deeper than the limit of " + std::to_string(lim_.max_depth) + " levels");
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  const input_limits& lim_;
  std::string what_;
  std::vector<frame> frames_;
  std::size_t values_ = 0;
};
}  // namespace detail

/// Parses the JSON text of a scenario (or a job file: `what` names it in
/// messages). Syntax errors and numbers out of range (1e400) are parse_error
/// 105 with the byte offset and the JSON path reached; duplicate keys and the
/// bounds of `lim` are validation_error naming the path.
[[nodiscard]] inline json parse_scenario_text(std::string_view text, const std::string& what,
                                              const input_limits& lim = default_limits()) {
  if (text.size() > lim.max_file_bytes)
    throw parse_error(error_id::parse_malformed_document,
                      what + ": larger than the input limit of " + std::to_string(lim.max_file_bytes) + " bytes");
  detail::checked_json_builder b(lim, what);
  try {
    (void)json::sax_parse(text, &b);
  } catch (const validation_error& e) {
    std::vector<diagnostic> ps;
    for (const auto& p : e.problems()) ps.push_back({what + ": " + p.path, p.message});
    throw validation_error(std::move(ps));
  }
  return std::move(b.root);
}

#ifdef QUOTA_SIM_HAVE_YAML
namespace detail {
/// A YAML node as the JSON tree the scenario loader reads. Plain scalars:
/// integers become numbers, true/false booleans, ~/null null, everything
/// else a string ("2Gi", "1.5", "5m"); quoted scalars always stay strings.
/// Aliases are expanded, so every use counts towards the value limit (a
/// "billion laughs" document stops at the limit, not at the end of memory);
/// a key twice in one map is an error, as in JSON.
class yaml_converter {
 public:
  /// `text_bytes`: the size of the YAML text. Aliases may repeat what they
  /// name, but the tree may hold at most 16 values per byte of text (and the
  /// value limit): a document of plain nodes stays far below, an alias bomb
  /// stops at once.
  yaml_converter(const input_limits& lim, std::size_t text_bytes)
      : lim_(lim), budget_(std::min<std::size_t>(lim.max_values, 16 * text_bytes + 10'000)) {}
  [[nodiscard]] json convert(const YAML::Node& n, const std::string& path, std::size_t depth) {
    if (++values_ > budget_)
      throw validation_error(path, "more than " + std::to_string(budget_) +
                                       " values once aliases are expanded (at most 16 per byte of YAML text, and "
                                       "the value limit)");
    if (depth >= lim_.max_depth)
      throw validation_error(path, "nested deeper than the limit of " + std::to_string(lim_.max_depth) + " levels");
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const std::string& v = n.Scalar();
        if (!valid_utf8(v)) throw validation_error(path, "not valid UTF-8: " + printable(v.substr(0, 40)));
        if (v.size() > lim_.max_string_bytes)
          throw validation_error(path, "a string of " + std::to_string(v.size()) +
                                           " bytes is longer than the limit of " +
                                           std::to_string(lim_.max_string_bytes));
        if (n.Tag() == "!") return v;
        if (v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
        if (v == "true" || v == "True" || v == "TRUE") return true;
        if (v == "false" || v == "False" || v == "FALSE") return false;
        const std::size_t start = (!v.empty() && (v[0] == '-' || v[0] == '+')) ? 1 : 0;
        // as nlohmann parses JSON: non-negative integers unsigned, negative signed
        if (v.size() > start && v.size() - start <= 18 &&
            v.find_first_not_of("0123456789", start) == std::string::npos) {
          if (v[0] == '-') return static_cast<std::int64_t>(std::stoll(v));
          return static_cast<std::uint64_t>(std::stoull(v.substr(start)));
        }
        return v;
      }
      case YAML::NodeType::Sequence: {
        json arr = json::array();
        std::size_t i = 0;
        for (const auto& c : n) {
          arr.push_back(convert(c, path + "[" + std::to_string(i) + "]", depth + 1));
          ++i;
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        json obj = json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar()) throw validation_error(path, "a YAML map key must be a scalar");
          const std::string& key = kv.first.Scalar();
          if (!valid_utf8(key)) throw validation_error(path, "a key that is not valid UTF-8: " + printable(key));
          const std::string kp = path + "." + key;
          if (obj.contains(key)) throw validation_error(kp, "duplicate key (a map names each key once)");
          obj[key] = convert(kv.second, kp, depth + 1);
        }
        return obj;
      }
    }
    return nullptr;
  }

 private:
  const input_limits& lim_;
  std::size_t budget_;
  std::size_t values_ = 0;
};

/// `text_bytes`: the size of the YAML text the node was read from.
[[nodiscard]] inline json yaml_to_json(const YAML::Node& n, std::size_t text_bytes,
                                       const input_limits& lim = default_limits()) {
  return yaml_converter(lim, text_bytes).convert(n, "$", 0);
}
}  // namespace detail
#endif

/// Parses the YAML text of a scenario into the same JSON tree as a JSON file
/// (bounded as parse_scenario_text). parse_error 105 with line and column for
/// malformed YAML, or when quota-sim was built without yaml-cpp.
[[nodiscard]] inline json parse_scenario_yaml(const std::string& text, const std::string& what,
                                              const input_limits& lim = default_limits()) {
#ifdef QUOTA_SIM_HAVE_YAML
  if (text.size() > lim.max_file_bytes)
    throw parse_error(error_id::parse_malformed_document,
                      what + ": larger than the input limit of " + std::to_string(lim.max_file_bytes) + " bytes");
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw parse_error(error_id::parse_malformed_document, what + ": invalid YAML at line " +
                                                              std::to_string(e.mark.line + 1) + ", column " +
                                                              std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  try {
    return detail::yaml_to_json(doc, text.size(), lim);
  } catch (const validation_error& e) {
    std::vector<diagnostic> ps;
    for (const auto& p : e.problems()) ps.push_back({what + ": " + p.path, p.message});
    throw validation_error(std::move(ps));
  } catch (const YAML::Exception& e) {
    throw parse_error(error_id::parse_malformed_document, what + ": invalid YAML: " + e.msg);
  }
#else
  (void)text;
  (void)lim;
  throw parse_error(error_id::parse_malformed_document,
                    what + ": YAML scenarios need quota-sim built with yaml-cpp (found at configure time)");
#endif
}

/// The JSON tree of a scenario file: JSON, or YAML (.yaml/.yml, when built
/// with yaml-cpp) converted to the same tree, so load_scenario reports the
/// same JSON paths for both. parse_error (105) when unreadable, malformed or
/// over the input limit; validation_error for duplicate keys and the bounds.
[[nodiscard]] inline json load_scenario_file(const std::string& file, const input_limits& lim = default_limits()) {
#ifndef QUOTA_SIM_HAVE_YAML
  if (is_yaml_file(file)) return parse_scenario_yaml(std::string(), file, lim);
#endif
  const std::string text = read_input_file(file, lim);
  return is_yaml_file(file) ? parse_scenario_yaml(text, file, lim) : parse_scenario_text(text, file, lim);
}

}  // namespace quota::sim
