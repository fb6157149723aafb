// SPDX-License-Identifier: Apache-2.0
// quota-sim import openb: the Alibaba "openb" GPU-cluster trace (2023) read as
// a scenario (nodes, one job per pod, tenants, derived quotas).
// Docs: docs/trace-replay.md ("Import rules")
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <quota/error.hpp>
#include <quota/json.hpp>

#include "models.hpp"
#include "scenario.hpp"

namespace quota::sim {

inline constexpr const char* gpu_milli_resource = "alibaba.com/gpu-milli";

struct csv_table {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // rows[i] is line i + 2
};

/// A CSV table of at most `max_rows` rows, read within the input limit
/// (read_input_file: an endless file stops there).
[[nodiscard]] inline csv_table read_csv(const std::string& file, const std::vector<std::string>& required,
                                        std::size_t max_rows) {
  std::istringstream in(read_input_file(file));
  csv_table t;
  t.file = file;
  std::string line;
  std::size_t lineno = 0;
  auto split = [](const std::string& l) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : l) {
      if (c == ',') {
        out.push_back(cur);
        cur.clear();
      } else if (c != '\r') {
        cur.push_back(c);
      }
    }
    out.push_back(cur);
    return out;
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1) {
      t.header = split(line);
      for (const auto& r : required)
        if (std::find(t.header.begin(), t.header.end(), r) == t.header.end())
          throw parse_error(error_id::parse_missing_field, file + ":1: missing column '" + r + "'");
      continue;
    }
    if (line.empty()) continue;
    if (t.rows.size() == max_rows)
      throw parse_error(error_id::parse_malformed_document, file + ":" + std::to_string(lineno) + ": more than " +
                                                                std::to_string(max_rows) + " rows (the limit)");
    auto cells = split(line);
    if (cells.size() != t.header.size())
      throw parse_error(error_id::parse_malformed_document, file + ":" + std::to_string(lineno) + ": " +
                                                                std::to_string(cells.size()) + " fields, expected " +
                                                                std::to_string(t.header.size()));
    t.rows.push_back(std::move(cells));
  }
  if (lineno == 0) throw parse_error(error_id::parse_malformed_document, file + ": empty file");
  return t;
}

class csv_row {
 public:
  csv_row(const csv_table& t, std::size_t i) : t_(t), i_(i) {}
  [[nodiscard]] const std::string& text(const std::string& col) const { return t_.rows[i_][index(col)]; }
  /// A non-negative integer; empty allowed when `optional`.
  [[nodiscard]] std::int64_t integer(const std::string& col, bool optional = false, std::int64_t def = -1) const {
    const std::string& s = text(col);
    if (s.empty()) {
      if (optional) return def;
      fail(col, "is empty");
    }
    std::int64_t v = 0;
    for (char c : s) {
      if (c == '-') fail(col, "negative amount '" + s + "'");
      if (c < '0' || c > '9') fail(col, "not a number: '" + s + "'");
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
        fail(col, "too large: '" + s + "'");
    }
    return v;
  }
  [[noreturn]] void fail(const std::string& col, const std::string& what) const {
    throw parse_error(error_id::parse_malformed_document, t_.file + ":" + std::to_string(i_ + 2) + ": column " +
                                                              std::to_string(index(col) + 1) + " (" + col + ") " +
                                                              what);
  }
  [[nodiscard]] std::size_t line() const { return i_ + 2; }

 private:
  std::size_t index(const std::string& col) const {
    return static_cast<std::size_t>(std::find(t_.header.begin(), t_.header.end(), col) - t_.header.begin());
  }
  const csv_table& t_;
  std::size_t i_;
};

struct openb_options {
  std::string nodes_file, pods_file;
  std::int64_t tenants = 4;
  std::string tenant_rule = "hash";  // hash | qos
  std::vector<std::string> policies;
  std::uint64_t seed = 0;  // mixed into the hash, so other tenant splits can be tried
  /// Arrivals are compressed by this factor (run times are kept): the trace
  /// spreads 8,152 pods over 149 days and peaks at about 1% of its GPUs, so a
  /// what-if study needs contention; 1 replays the trace's own timing.
  std::int64_t time_scale = 1;
  /// Pods never finish (the paper's fill-the-cluster experiments): every pod
  /// holds its resources until the end of the replay.
  bool hold = false;
};

[[nodiscard]] inline std::uint64_t fnv1a(const std::string& s, std::uint64_t seed) {
  std::uint64_t h = 1469598103934665603ULL ^ seed;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

[[nodiscard]] inline std::vector<std::string> tenants_for(const openb_options& o) {
  std::vector<std::string> out;
  if (o.tenant_rule == "qos") return {"be", "burstable", "guaranteed", "ls"};
  for (std::int64_t t = 0; t < o.tenants; ++t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "tenant-%02lld", static_cast<long long>(t));
    out.emplace_back(buf);
  }
  return out;
}

/// One node of the trace, checked.
struct openb_node {
  std::string name;
  std::int64_t cpu_milli = 0, memory_mib = 0, gpu = 0;
  std::string model;
};

/// One pod of the trace as a job, checked, with the import rules applied.
struct openb_pod {
  std::string name, tenant, qos;
  std::int64_t submit_ms = 0;
  std::int64_t duration_ms = -1;  // -1: holds its resources to the end
  std::int32_t priority = 0;
  std::int64_t cpu_milli = 0, memory_mib = 0;
  std::int64_t gpu_count = 0, gpu_milli = 1000;  // milli of each device
  std::vector<std::string> gpu_models;
};

/// A pod and node list read and checked once; import_openb writes it as a
/// scenario document, openb_scenario builds the simulator's scenario from it
/// directly (no JSON round trip). Both give the same replay.
struct openb_trace {
  std::string name, description;
  std::vector<openb_node> nodes;
  std::vector<openb_pod> pods;
  std::vector<std::string> tenants;
  resource_vector capacity;
  json policies = json::array();  // one synthesized entry per --policy model
};

/// Reads and checks both CSV files and derives the policies (throws
/// parse_error / validation_error naming file, line and column).
[[nodiscard]] inline openb_trace read_openb(const openb_options& o) {
  if (o.tenant_rule != "hash" && o.tenant_rule != "qos")
    throw validation_error("--tenant-rule", "expected hash or qos");
  if (o.tenants < 1 || o.tenants > 1000) throw validation_error("--tenants", "expected 1 to 1000");
  if (o.time_scale < 1 || o.time_scale > 1'000'000) throw validation_error("--time-scale", "expected 1 to 1000000");
  const csv_table nodes =
      read_csv(o.nodes_file, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, default_limits().max_nodes);
  // gpu_spec, qos and the three times are optional: openb_pod_list_multigpu50.csv
  // has none of them. Without times, pod i (from 0, in file order) arrives at
  // i seconds and holds its resources until the end, as in the paper's
  // simulator; without qos every pod is Burstable-like (priority 100).
  const csv_table pods =
      read_csv(o.pods_file, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, default_limits().max_jobs);
  const auto has = [&](const char* col) {
    return std::find(pods.header.begin(), pods.header.end(), col) != pods.header.end();
  };
  const bool has_spec = has("gpu_spec"), has_qos = has("qos");
  const bool has_times = has("creation_time") || has("deletion_time") || has("scheduled_time");
  if (has_times)
    for (const char* col : {"creation_time", "deletion_time", "scheduled_time"})
      if (!has(col))
        throw parse_error(error_id::parse_missing_field,
                          o.pods_file + ":1: missing column '" + col + "' (the three time columns come together)");
  if (o.tenant_rule == "qos" && !has_qos)
    throw parse_error(error_id::parse_missing_field,
                      o.pods_file + ":1: missing column 'qos' (needed by --tenant-rule qos)");
  openb_trace tr;
  tr.name = "openb " + o.pods_file.substr(o.pods_file.find_last_of('/') + 1) +
            (o.time_scale > 1 ? " (arrivals x" + std::to_string(o.time_scale) + ")" : "") +
            (o.hold || !has_times ? " (pods hold)" : "");
  tr.description =
      "Alibaba openb GPU-cluster trace (Weng et al., USENIX ATC 2023, CC BY 4.0), imported by quota-sim import openb";
  // memory is counted in bytes: MiB beyond this overflow int64
  constexpr std::int64_t max_mib = INT64_MAX >> 20;
  resource_registry reg;
  const auto gm = reg.intern(gpu_milli_resource);
  std::map<std::string, std::size_t> node_lines;  // node name -> line
  tr.nodes.reserve(nodes.rows.size());
  for (std::size_t i = 0; i < nodes.rows.size(); ++i) {
    const csv_row r(nodes, i);
    if (r.text("sn").empty()) r.fail("sn", "is empty");
    if (auto [it, fresh] = node_lines.emplace(r.text("sn"), r.line()); !fresh)
      r.fail("sn", "repeats node '" + r.text("sn") + "' of line " + std::to_string(it->second));
    openb_node n{r.text("sn"), r.integer("cpu_milli"), r.integer("memory_mib"), r.integer("gpu"), r.text("model")};
    if (n.gpu > 1024) r.fail("gpu", "more than 1024 devices");
    if (n.memory_mib > max_mib) r.fail("memory_mib", "too large");
    tr.capacity.add(resources::cpu, n.cpu_milli);
    tr.capacity.add(resources::memory, n.memory_mib << 20);
    tr.capacity.add(gm, n.gpu * 1000);
    tr.nodes.push_back(std::move(n));
  }
  tr.tenants = tenants_for(o);
  std::map<std::string, std::size_t> seen;  // pod name -> line
  tr.pods.reserve(pods.rows.size());
  for (std::size_t i = 0; i < pods.rows.size(); ++i) {
    const csv_row r(pods, i);
    openb_pod p;
    p.name = r.text("name");
    if (p.name.empty()) r.fail("name", "is empty");
    if (auto [it, fresh] = seen.emplace(p.name, r.line()); !fresh)
      r.fail("name", "repeats pod '" + p.name + "' of line " + std::to_string(it->second));
    p.cpu_milli = r.integer("cpu_milli");
    p.memory_mib = r.integer("memory_mib");
    const auto ngpu = r.integer("num_gpu"), gmilli = r.integer("gpu_milli");
    const auto created = has_times ? r.integer("creation_time") : static_cast<std::int64_t>(i);
    const auto deleted = has_times ? r.integer("deletion_time") : created;
    const auto scheduled = has_times ? r.integer("scheduled_time", true, -1) : -1;
    if (p.memory_mib > max_mib) r.fail("memory_mib", "too large");
    if (deleted < created) r.fail("deletion_time", "is before creation_time");
    if (scheduled >= 0 && deleted < scheduled) r.fail("deletion_time", "is before scheduled_time");
    if (scheduled >= 0 && scheduled < created) r.fail("scheduled_time", "is before creation_time");
    if (ngpu > 1024) r.fail("num_gpu", "more than 1024 devices");
    if (gmilli > 1000) r.fail("gpu_milli", "more than one GPU (1000)");
    if (ngpu > 1 && gmilli != 1000 && gmilli != 0) r.fail("gpu_milli", "a GPU share needs num_gpu = 1");
    p.qos = has_qos ? r.text("qos") : std::string("Burstable");
    const std::string& qos = p.qos;
    if (qos != "LS" && qos != "BE" && qos != "Guaranteed" && qos != "Burstable")
      r.fail("qos", "unknown QoS class '" + qos + "' (expected LS, Guaranteed, Burstable or BE)");
    if (o.tenant_rule == "qos") {
      p.tenant = qos == "LS" ? "ls" : qos == "BE" ? "be" : qos == "Guaranteed" ? "guaranteed" : "burstable";
    } else {
      p.tenant = tr.tenants[static_cast<std::size_t>(fnv1a(p.name, o.seed) % static_cast<std::uint64_t>(o.tenants))];
    }
    p.priority = qos == "LS" ? 300 : qos == "Guaranteed" ? 200 : qos == "BE" ? 0 : 100;
    const std::int64_t run_s = scheduled >= 0 ? deleted - scheduled : deleted - created;
    // times within the scenario time limit, so that a start plus a run time never overflows
    const std::int64_t max_ms = default_limits().max_time_ms;
    if (__builtin_mul_overflow(created, 1000, &p.submit_ms) || p.submit_ms / o.time_scale >= max_ms)
      r.fail("creation_time", "too large");
    p.submit_ms /= o.time_scale;
    if (has_times && !o.hold && (__builtin_mul_overflow(run_s, 1000, &p.duration_ms) || p.duration_ms >= max_ms))
      r.fail("deletion_time", "too large");
    if (ngpu > 0) {
      p.gpu_count = ngpu;
      p.gpu_milli = ngpu == 1 ? (gmilli > 0 ? gmilli : 1000) : 1000;
      const std::string& spec = has_spec ? r.text("gpu_spec") : std::string();
      std::size_t from = 0;
      while (from <= spec.size()) {
        const std::size_t bar = std::min(spec.find('|', from), spec.size());
        if (bar > from) p.gpu_models.push_back(spec.substr(from, bar - from));
        from = bar + 1;
      }
    }
    tr.pods.push_back(std::move(p));
  }
  register_models();
  for (const auto& p : o.policies) {
    if (p == "none") continue;
    auto it = model_kinds().find(p);
    if (it == model_kinds().end() || !it->second.synthesize)
      throw validation_error("--policy", "unknown model or one that cannot derive quotas: '" + p + "'");
    tr.policies.push_back(it->second.synthesize(tr.tenants, tr.capacity, reg));
  }
  return tr;
}

/// The resource the chart of a trace shows: GPU where a node has GPUs, else
/// CPU where a node has CPU, else none (the scenario's default).
[[nodiscard]] inline const char* openb_chart_resource(const openb_trace& tr) {
  if (std::any_of(tr.nodes.begin(), tr.nodes.end(), [](const openb_node& n) { return n.gpu > 0; }))
    return gpu_milli_resource;
  if (std::any_of(tr.nodes.begin(), tr.nodes.end(), [](const openb_node& n) { return n.cpu_milli > 0; })) return "cpu";
  return nullptr;
}

/// The trace as a scenario document (what `quota-sim import openb` writes).
[[nodiscard]] inline json openb_json(const openb_trace& tr) {
  json sc;
  sc["name"] = tr.name;
  sc["description"] = tr.description;
  sc["tenant_by"] = "queue";
  sc["scheduler"] = {{"placement", "best-fit"}, {"preemption", true}};
  // the chart shows GPU use against capacity; a trace without GPU nodes shows
  // CPU, and one whose nodes have neither names no chart resource
  if (const char* r = openb_chart_resource(tr)) sc["chart"] = {{"resource", std::string(r)}};
  json jnodes = json::array();
  for (const auto& n : tr.nodes) {
    json j{
        {"name", n.name},
        {"allocatable", {{"cpu", std::to_string(n.cpu_milli) + "m"}, {"memory", std::to_string(n.memory_mib) + "Mi"}}}};
    if (n.gpu > 0) {
      j["allocatable"][gpu_milli_resource] = n.gpu * 1000;
      j["gpu"] = {{"count", n.gpu}, {"model", n.model}};
    }
    jnodes.push_back(std::move(j));
  }
  sc["cluster"]["nodes"] = std::move(jnodes);
  json jobs = json::array();
  for (const auto& p : tr.pods) {
    json j{{"id", p.name},
           {"submit", p.submit_ms},
           {"namespace", p.tenant},
           {"queue", p.tenant},
           {"user", p.tenant},
           {"priority", p.priority},
           {"priority_class", p.qos},
           {"preemptible", p.qos != "LS"},
           {"request", {{"cpu", std::to_string(p.cpu_milli) + "m"}, {"memory", std::to_string(p.memory_mib) + "Mi"}}}};
    if (p.duration_ms >= 0) j["duration"] = p.duration_ms;  // absent: runs until the end
    if (p.gpu_count > 0) {
      j["request"][gpu_milli_resource] = p.gpu_count * p.gpu_milli;
      json g{{"count", p.gpu_count}, {"milli", p.gpu_milli}};
      if (!p.gpu_models.empty()) g["models"] = p.gpu_models;
      j["gpu"] = g;
    }
    jobs.push_back(std::move(j));
  }
  sc["jobs"] = std::move(jobs);
  sc["policies"] = tr.policies;
  sc["expect"] = json::array();
  return sc;
}

/// Builds the scenario JSON (throws parse_error / validation_error).
[[nodiscard]] inline json import_openb(const openb_options& o) {
  return openb_json(read_openb(o));
}

/// The scenario load_scenario(openb_json(tr)) gives, built directly: the same
/// nodes, jobs (sorted by arrival, file order kept), resource ids and
/// policies, without writing or parsing JSON. `policies` replaces the
/// trace's own (compare passes each set's).
[[nodiscard]] inline scenario openb_scenario(const openb_trace& tr, const json& policies) {
  scenario sc;
  sc.name = tr.name;
  sc.description = tr.description;
  sc.tenant_by = "queue";
  sc.placement = "best-fit";
  sc.preemption = true;
  if (const char* r = openb_chart_resource(tr)) sc.chart_resource = r;
  // load_scenario interns the GPU resource where it first appears: the first
  // GPU node, else the first GPU pod
  std::optional<resource_id> gm;
  auto gpu_id = [&] {
    if (!gm) gm = sc.registry.intern(gpu_milli_resource);
    return *gm;
  };
  const int cpu_scale = sc.registry.scale(resources::cpu);
  auto cpu_amount = [&](std::int64_t milli) { return quantity::from_base(milli, 3).to_base(cpu_scale); };
  sc.nodes.reserve(tr.nodes.size());
  for (const auto& n : tr.nodes) {
    node_spec ns;
    ns.name = n.name;
    if (n.gpu > 0) {
      ns.allocatable.set(gpu_id(), n.gpu * 1000);
      ns.gpu.count = static_cast<std::int32_t>(n.gpu);
      ns.gpu.model = n.model;
    }
    ns.allocatable.set(resources::cpu, cpu_amount(n.cpu_milli));
    ns.allocatable.set(resources::memory, n.memory_mib << 20);
    sc.nodes.push_back(std::move(ns));
  }
  // jobs in arrival order, file order among equals (load_scenario's stable sort),
  // sorting indices rather than whole jobs
  std::vector<std::size_t> order(tr.pods.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return tr.pods[a].submit_ms < tr.pods[b].submit_ms; });
  sc.jobs.reserve(tr.pods.size());
  for (const std::size_t i : order) {
    const openb_pod& p = tr.pods[i];
    job_spec js;
    js.id = p.name;
    js.submit_ms = js.created_ms = p.submit_ms;  // created when it arrives
    js.duration_ms = p.duration_ms;
    js.ns = js.queue = js.user = p.tenant;  // the tenant is the pod's namespace, queue and user at once
    js.priority = p.priority;
    js.priority_class = p.qos;
    js.preemptible = p.qos != "LS";
    if (p.gpu_count > 0) {
      js.per_pod.set(gpu_id(), p.gpu_count * p.gpu_milli);
      js.gpu.count = static_cast<std::int32_t>(p.gpu_count);
      js.gpu.milli = static_cast<std::int32_t>(p.gpu_milli);
      js.gpu.models = p.gpu_models;
    }
    js.per_pod.set(resources::cpu, cpu_amount(p.cpu_milli));
    js.per_pod.set(resources::memory, p.memory_mib << 20);
    sc.jobs.push_back(std::move(js));
  }
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const auto& pj = policies[i];
    policy_spec ps;
    ps.model = pj.at("model").get<std::string>();
    ps.body = pj;
    ps.path = "$." + index_path("policies", i);
    sc.policies.push_back(std::move(ps));
    sc.shrink.emplace_back();  // synthesized entries keep running work (the default)
  }
  return sc;
}

[[nodiscard]] inline scenario openb_scenario(const openb_trace& tr) {
  return openb_scenario(tr, tr.policies);
}

}  // namespace quota::sim
