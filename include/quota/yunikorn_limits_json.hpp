// SPDX-License-Identifier: Apache-2.0
// quota/yunikorn_limits_json.hpp — JSON for user and group limits (opt-in): YuniKorn's queue
// configuration with the field names of queues.yaml, and the usage JSON of its REST
// endpoints.
// Docs: docs/yunikorn-limits.md
#pragma once

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include <quota/json.hpp>
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_config.hpp>

namespace quota {

struct yunikorn_limits_json_options {
  /// Partition to load; empty = the first one.
  std::string partition;
  /// YuniKorn's "vcore" is the pod cpu in millicores: read it as quota's cpu
  /// (and print cpu as "vcore" in usage JSON). Off: "vcore" is its own resource.
  /// On, a `cpu` in maxresources or resources.max is what YuniKorn makes of
  /// it, a resource named cpu that no pod requests (limits_cpu_resource here,
  /// printed as "cpu"): such a limit never binds, and the loader says so in
  /// yunikorn_limits_config::warnings.
  bool vcore_as_cpu = true;
  /// YuniKorn's rules exactly (sets yunikorn_limits_config::upstream).
  bool upstream = false;
};

/// The resource a YuniKorn `cpu` key of a limit stands for (with vcore_as_cpu):
/// not the pod cpu, which YuniKorn calls vcore. Whole units, as YuniKorn parses it.
inline constexpr std::string_view limits_cpu_resource = "yunikorn/cpu";

namespace detail {

/// YuniKorn's quantity syntax (resources.ParseQuantity / ParseVCore): digits,
/// optional blanks, then no suffix or one of k M G T P E Ki Mi Gi Ti Pi Ei, and
/// `m` for vcore only. No sign, no fraction, no exponent. Returns the text
/// without its blanks, or nullopt when YuniKorn would refuse it.
[[nodiscard]] inline std::optional<std::string> limits_yunikorn_quantity(const json& v, bool vcore) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (!v.is_string()) return std::nullopt;
  std::string t = v.get<std::string>();
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  // strings.TrimSpace, then the pattern
  while (!t.empty() && blank(t.back())) t.pop_back();
  std::size_t i = 0;
  while (i < t.size() && blank(t[i])) ++i;
  const std::size_t start = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == start) return std::nullopt;
  const std::string digits = t.substr(start, i - start);
  while (i < t.size() && blank(t[i])) ++i;
  const std::string suffix = t.substr(i);
  static constexpr std::string_view ok[] = {"", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const bool known = std::find(std::begin(ok), std::end(ok), suffix) != std::end(ok) || (vcore && suffix == "m");
  if (!known) return std::nullopt;
  return digits + suffix;
}

/// A JSON value as the document wrote it (a string without its quotes).
[[nodiscard]] inline std::string limits_as_written(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

/// A resource list ({"memory": "25G", "vcore": 5}); "vcore" may be read as cpu.
/// Problems go to `d` with the path of the offending key, each once, naming
/// `field`, the resource and the value as written; bad entries are left out.
/// `config`: a limit or queue maximum (a `cpu` key there is YuniKorn's cpu
/// resource, limits_cpu_resource, with a warning in `warn`).
[[nodiscard]] inline limit_vector limits_parse_resources(const json& j, resource_registry& reg, const std::string& path,
                                                         bool vcore_as_cpu, diagnostics& d, bool config = false,
                                                         const std::string& who = {},
                                                         std::vector<diagnostic>* warn = nullptr,
                                                         bool upstream = false) {
  limit_vector out;
  if (j.is_null()) return out;
  const std::string field = path.ends_with("resources.max")        ? std::string("resources.max")
                            : path.rfind('.') == std::string::npos ? path
                                                                   : path.substr(path.rfind('.') + 1);
  if (!j.is_object()) {
    d.add(path, who + std::string("expected an object of resource quantities, got ") + j.type_name());
    return out;
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = join_path(path, it.key());
    resource_id id = no_resource;
    try {
      if (vcore_as_cpu && it.key() == "vcore") {
        id = resources::cpu;
      } else if (vcore_as_cpu && config && it.key() == "cpu") {
        id = reg.intern(limits_cpu_resource, 0);
        if (warn)
          warn->push_back({p, who + field +
                                  " cpu is a resource named cpu, not the pod cpu (YuniKorn's vcore): no pod "
                                  "requests it, so this limit never binds"});
      } else {
        id = reg.intern(it.key());
      }
    } catch (const error& e) {
      d.add(p, who + field + " '" + it.key() + "': " + e.what());
      continue;
    }
    amount v = 0;
    try {
      if (upstream) {
        // YuniKorn's syntax first: what it refuses is refused here too
        const auto text = limits_yunikorn_quantity(it.value(), it.key() == "vcore");
        if (!text) {
          d.add(p, who + field + " " + it.key() + " '" + limits_as_written(it.value()) +
                       "' is not a YuniKorn quantity (digits, then k M G T P E Ki Mi Gi Ti Pi Ei" +
                       (it.key() == "vcore" ? std::string(" or m") : std::string()) + ")");
          continue;
        }
        v = parse_resource_amount(json(*text), id, reg, p);
      } else {
        v = parse_resource_amount(it.value(), id, reg, p);
      }
    } catch (const error& e) {
      // once, with the value as written (the quantity's own message may show it scaled)
      const auto eid = static_cast<error_id>(e.id());
      const char* why = eid == error_id::parse_negative_quantity       ? "is negative"
                        : eid == error_id::parse_quantity_out_of_range ? "is out of range (64-bit base units)"
                        : eid == error_id::parse_too_precise           ? "is finer than the resource's base unit"
                        : eid == error_id::parse_wrong_type            ? "is not a quantity (string or number)"
                                                                       : "is not a valid quantity";
      d.add(p, who + field + " " + it.key() + " '" + limits_as_written(it.value()) + "' " + why);
      continue;
    }
    out.set(id, v);
  }
  return out;
}

inline void limits_type_problem(diagnostics& d, const std::string& path, const char* expected, const json& v) {
  d.add(path, std::string("expected ") + expected + ", got " + v.type_name());
}

[[nodiscard]] inline std::uint64_t limits_read_count(const json& obj, const char* key, const std::string& path,
                                                     diagnostics& d) {
  if (!obj.contains(key) || obj[key].is_null()) return 0;
  const auto& v = obj[key];
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    d.add(join_path(path, key), "must not be negative (" + std::to_string(v.get<std::int64_t>()) + ")");
    return 0;
  }
  limits_type_problem(d, join_path(path, key), "a non-negative integer", v);
  return 0;
}

[[nodiscard]] inline std::vector<std::string> limits_read_names(const json& obj, const char* key,
                                                                const std::string& path, diagnostics& d) {
  std::vector<std::string> out;
  if (!obj.contains(key) || obj[key].is_null()) return out;
  const auto& v = obj[key];
  if (!v.is_array()) {
    limits_type_problem(d, join_path(path, key), "an array of names", v);
    return out;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      limits_type_problem(d, index_path(join_path(path, key), i), "a string", v[i]);
    else
      out.push_back(v[i].get<std::string>());
  }
  return out;
}

inline std::vector<limit_entry> limits_read_limits(const json& arr, const std::string& path, resource_registry& reg,
                                                   const yunikorn_limits_json_options& opt, diagnostics& d,
                                                   std::vector<diagnostic>* warn = nullptr) {
  std::vector<limit_entry> out;
  if (arr.is_null()) return out;
  if (!arr.is_array()) {
    limits_type_problem(d, path, "an array of limits", arr);
    return out;
  }
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& l = arr[i];
    const std::string lp = index_path(path, i);
    if (!l.is_object()) {
      limits_type_problem(d, lp, "a limit object", l);
      continue;
    }
    limit_entry e;
    if (l.contains("limit") && !l["limit"].is_null()) {
      if (l["limit"].is_string())
        e.name = l["limit"].get<std::string>();
      else
        limits_type_problem(d, join_path(lp, "limit"), "a string", l["limit"]);
    }
    e.users = limits_read_names(l, "users", lp, d);
    e.groups = limits_read_names(l, "groups", lp, d);
    if (l.contains("maxresources") && !l["maxresources"].is_null()) {
      const auto& mr = l["maxresources"];
      // given even when an amount is rejected: that is reported, not "sets nothing" as well
      e.max_resources_given = !mr.is_object() || !mr.empty();
      e.max_resources = limits_parse_resources(
          mr, reg, join_path(lp, "maxresources"), opt.vcore_as_cpu, d, true,
          (e.name.empty() ? std::string("limit (unnamed)") : "limit '" + e.name + "'") + ": ", warn, opt.upstream);
    }
    e.max_applications = limits_read_count(l, "maxapplications", lp, d);
    out.push_back(std::move(e));
  }
  return out;
}

inline void limits_read_queue(const json& q, const std::string& path, limits_queue& out, resource_registry& reg,
                              const yunikorn_limits_json_options& opt, diagnostics& d, std::vector<diagnostic>* warn) {
  if (!q.is_object()) {
    limits_type_problem(d, path, "a queue object", q);
    return;
  }
  if (!q.contains("name") || !q["name"].is_string())
    d.add(join_path(path, "name"), "missing or not a string");
  else
    out.name = q["name"].get<std::string>();
  if (q.contains("resources") && !q["resources"].is_null()) {
    const auto& res = q["resources"];
    if (!res.is_object())
      limits_type_problem(d, join_path(path, "resources"), "an object", res);
    else if (res.contains("max"))
      out.max = limits_parse_resources(res["max"], reg, join_path(path, "resources.max"), opt.vcore_as_cpu, d, true,
                                       "queue '" + out.name + "': ", warn, opt.upstream);
  }
  out.max_applications = limits_read_count(q, "maxapplications", path, d);
  if (q.contains("limits")) out.limits = limits_read_limits(q["limits"], join_path(path, "limits"), reg, opt, d, warn);
  if (q.contains("queues") && !q["queues"].is_null()) {
    const auto& cs = q["queues"];
    if (!cs.is_array()) {
      limits_type_problem(d, join_path(path, "queues"), "an array of queues", cs);
      return;
    }
    for (std::size_t i = 0; i < cs.size(); ++i) {
      limits_queue c;
      limits_read_queue(cs[i], index_path(join_path(path, "queues"), i), c, reg, opt, d, warn);
      out.queues.push_back(std::move(c));
    }
  }
}

inline void limits_read_partition(const json& p, const std::string& path, yunikorn_limits_config& cfg, resource_registry& reg,
                                  const yunikorn_limits_json_options& opt, diagnostics& d) {
  const json& qs = p.contains("queues") ? p["queues"] : json();
  if (qs.is_array() && qs.size() == 1 && qs[0].is_object() && qs[0].contains("name") && qs[0]["name"] == "root") {
    limits_read_queue(qs[0], index_path(join_path(path, "queues"), 0), cfg.root, reg, opt, d, &cfg.warnings);
  } else if (qs.is_array()) {
    // top-level queues without an explicit root: they become root's children
    for (std::size_t i = 0; i < qs.size(); ++i) {
      limits_queue c;
      limits_read_queue(qs[i], index_path(join_path(path, "queues"), i), c, reg, opt, d, &cfg.warnings);
      cfg.root.queues.push_back(std::move(c));
    }
  } else if (!qs.is_null()) {
    limits_type_problem(d, join_path(path, "queues"), "an array of queues", qs);
  }
  if (p.contains("limits") && !p["limits"].is_null()) {
    // partition limits are the root limits (YuniKorn: both set must be equal)
    auto pl = limits_read_limits(p["limits"], join_path(path, "limits"), reg, opt, d, &cfg.warnings);
    const json* rootl =
        (qs.is_array() && qs.size() == 1 && qs[0].is_object() && qs[0].contains("limits")) ? &qs[0]["limits"] : nullptr;
    if (cfg.root.limits.empty())
      cfg.root.limits = std::move(pl);
    else if (rootl && *rootl != p["limits"])
      d.add(join_path(path, "limits"), "partition limits and root queue limits are not equal");
  }
}

}  // namespace detail

/// Loads a limits configuration (see the file comment). Throws validation_error
/// with every problem (parse and rule) of the document; `reg` may gain resources.
[[nodiscard]] inline yunikorn_limits_config load_yunikorn_limits_config(const json& doc, resource_registry& reg,
                                                      const yunikorn_limits_json_options& opt = {}) {
  yunikorn_limits_config cfg;
  cfg.upstream = opt.upstream;
  diagnostics d;
  if (!doc.is_object()) throw parse_error(error_id::parse_malformed_document, "limits config: expected an object");
  if (doc.contains("partitions")) {
    const auto& ps = doc["partitions"];
    if (!ps.is_array() || ps.empty())
      throw parse_error(error_id::parse_malformed_document, "partitions: expected a non-empty array");
    std::size_t pick = ps.size();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const bool named = ps[i].is_object() && ps[i].contains("name") && ps[i]["name"].is_string();
      if (opt.partition.empty() || (named && ps[i]["name"].get<std::string>() == opt.partition)) {
        pick = i;
        break;
      }
    }
    if (pick == ps.size()) throw unknown_entity_error(error_id::unknown_entity, "partition", opt.partition);
    detail::limits_read_partition(ps[pick], detail::index_path("partitions", pick), cfg, reg, opt, d);
  } else if (doc.contains("queues") && !doc.contains("limits") && !doc.contains("resources") &&
             !(doc.contains("name") && doc["name"] == "root")) {
    detail::limits_read_partition(doc, "", cfg, reg, opt, d);
  } else {
    detail::limits_read_queue(doc, "", cfg.root, reg, opt, d, &cfg.warnings);
  }
  collect_limits_problems(cfg, reg, d);
  d.throw_if_any();
  return cfg;
}

/// A usage or request in YuniKorn's resource-list form ({"vcore": 1, "memory": "10G"});
/// every problem at once as validation_error naming `path`.
[[nodiscard]] inline resource_vector parse_yunikorn_limits_usage(const json& j, resource_registry& reg, const std::string& path,
                                                        const yunikorn_limits_json_options& opt = {}) {
  diagnostics d;
  const limit_vector v = detail::limits_parse_resources(j, reg, path, opt.vcore_as_cpu, d);
  d.throw_if_any();
  return v.as<absent_means::zero>();
}

[[nodiscard]] inline yunikorn_limits_config load_yunikorn_limits_config_file(const std::string& file, resource_registry& reg,
                                                           const yunikorn_limits_json_options& opt = {}) {
  return load_yunikorn_limits_config(load_json_file(file), reg, opt);
}

namespace detail {
/// The name YuniKorn prints for a resource: with vcore_as_cpu, cpu is "vcore"
/// and YuniKorn's own cpu resource (limits_cpu_resource) is "cpu".
[[nodiscard]] inline std::string limits_print_name(resource_id id, const resource_registry& reg, bool vcore) {
  if (vcore && id == resources::cpu) return "vcore";
  if (vcore && reg.name(id) == limits_cpu_resource) return "cpu";
  return std::string(reg.name(id));
}
[[nodiscard]] inline json limits_amounts(const resource_vector& v, const resource_registry& reg, bool vcore) {
  json j = json::object();
  for (const auto& e : v) {
    if (e.value == 0) continue;
    j[limits_print_name(e.id, reg, vcore)] = e.value;
  }
  return j;
}
[[nodiscard]] inline json limits_node_json(const limits_usage_node& n, const resource_registry& reg, bool vcore) {
  json j = json::object();
  j["queuePath"] = n.queue_path;
  json use = limits_amounts(n.usage, reg, vcore);
  if (!use.empty()) j["resourceUsage"] = std::move(use);
  if (!n.running_applications.empty()) j["runningApplications"] = n.running_applications;
  json mx = json::object();
  for (const auto& e : n.max_resources) mx[limits_print_name(e.id, reg, vcore)] = e.value;
  if (!mx.empty()) j["maxResources"] = std::move(mx);
  if (n.max_applications != 0) j["maxApplications"] = n.max_applications;
  if (!n.children.empty()) {
    j["children"] = json::array();
    for (const auto& c : n.children) j["children"].push_back(limits_node_json(c, reg, vcore));
  }
  return j;
}
}  // namespace detail

/// The /usage/users shape: [{"userName", "groups": {app: group}, "queues": {...}}].
[[nodiscard]] inline json users_usage_to_json(const yunikorn_limits_model& m, const yunikorn_limits_json_options& opt = {}) {
  json arr = json::array();
  for (const auto& u : m.users_usage()) {
    json j = json::object();
    j["userName"] = u.user;
    json g = json::object();
    for (const auto& [app, group] : u.app_groups)
      if (!group.empty()) g[app] = group;
    if (!g.empty()) j["groups"] = std::move(g);
    j["queues"] = detail::limits_node_json(u.queues, m.registry(), opt.vcore_as_cpu);
    arr.push_back(std::move(j));
  }
  return arr;
}

/// The /usage/groups shape: [{"groupName", "applications": [...], "queues": {...}}].
[[nodiscard]] inline json groups_usage_to_json(const yunikorn_limits_model& m, const yunikorn_limits_json_options& opt = {}) {
  json arr = json::array();
  for (const auto& g : m.groups_usage()) {
    json j = json::object();
    j["groupName"] = g.group;
    if (!g.applications.empty()) j["applications"] = g.applications;
    j["queues"] = detail::limits_node_json(g.queues, m.registry(), opt.vcore_as_cpu);
    arr.push_back(std::move(j));
  }
  return arr;
}

/// Introspection of a policy adapter: {"users": <the /usage/users array>,
/// "groups": <the /usage/groups array>} of its manager.
inline void to_json(json& j, const yunikorn_limits_policy& p) {
  j = json::object();
  j["users"] = users_usage_to_json(p.manager());
  j["groups"] = groups_usage_to_json(p.manager());
}

}  // namespace quota
