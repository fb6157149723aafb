// SPDX-License-Identifier: Apache-2.0
// quota-sim compare: the same workload under several policy sets, side by side.
//   quota-sim compare SCENARIO --policies none,running_limits,kueue+yunikorn_limits
// Docs: docs/trace-replay.md ("Compare")
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <future>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "models.hpp"
#include "simulator.hpp"

namespace quota::sim {

struct compare_run {
  std::string set;
  json totals;
  json tenants;
  std::vector<std::pair<std::int64_t, std::int64_t>> usage;
  std::int64_t end_ms = 0;
  std::int64_t capacity = 0;
};

/// Replays `base` (its policies and expectations ignored) once per set.
[[nodiscard]] inline std::vector<compare_run> compare_policies(const scenario& base,
                                                               const std::vector<std::string>& sets) {
  register_models();
  std::set<std::string> tenant_set;
  for (const auto& j : base.jobs)
    tenant_set.insert(base.tenant_by == "namespace" ? j.ns
                      : base.tenant_by == "user"    ? j.user
                                                    : (j.queue.empty() ? j.ns : j.queue));
  const std::vector<std::string> tenants(tenant_set.begin(), tenant_set.end());
  resource_vector capacity;
  for (const auto& n : base.nodes) capacity.add_in_place(n.allocatable);
  // One replay per set; the sets are independent, so they run on up to
  // hardware_concurrency threads (each owns its scenario, models and
  // simulator; the model registry is only read). Results keep the order of
  // `sets`, so the report does not depend on the thread count.
  auto replay = [&](const std::string& set) {
    scenario sc = base;
    sc.expectations.clear();
    if (set != "scenario") {  // "scenario": the file's own policies, as written
      sc.policies.clear();
      sc.shrink.clear();
    }
    if (set != "none" && set != "scenario") {
      std::string name;
      for (char c : set + "+") {
        if (c != '+') {
          name.push_back(c);
          continue;
        }
        auto it = model_kinds().find(name);
        if (it == model_kinds().end() || !it->second.synthesize)
          throw validation_error("--policies", "unknown model or one that cannot derive quotas: '" + name + "'");
        json body = it->second.synthesize(tenants, capacity, base.registry);
        const std::string path = "$." + index_path("policies", sc.policies.size());
        policy_spec ps;
        ps.model = body.at("model").get<std::string>();
        ps.body = std::move(body);
        ps.path = path;
        sc.policies.push_back(std::move(ps));
        sc.shrink.emplace_back();  // synthesized entries keep running work (the default)
        name.clear();
      }
    }
    auto models = build_models(sc);
    simulator sim(std::move(sc), std::move(models));
    const auto res = sim.run();
    compare_run r;
    r.set = set;
    r.totals = res.report["totals"];
    for (auto it = res.report["tenants"].begin(); it != res.report["tenants"].end(); ++it)
      r.tenants[it.key()] = {{"average_usage", it.value()["average_usage"]},
                             {"admissions", it.value()["admissions"]},
                             {"readmissions", it.value()["readmissions"]},
                             {"preempted", it.value()["preempted"]},
                             {"denials_by_reason", it.value()["denials_by_reason"]}};
    r.usage = sim.usage_over_time();
    r.end_ms = sim.end_ms();
    r.capacity = sim.capacity_now();
    std::int64_t peak = 0;
    for (const auto& [t, v] : r.usage) peak = std::max(peak, v);
    r.totals["peak_usage"] = peak;
    return r;
  };
  const std::size_t workers =
      std::max<std::size_t>(1, std::min<std::size_t>(sets.size(), std::thread::hardware_concurrency()));
  std::vector<compare_run> out(sets.size());
  for (std::size_t first = 0; first < sets.size(); first += workers) {
    std::vector<std::future<compare_run>> batch;
    for (std::size_t i = first; i < std::min(sets.size(), first + workers); ++i)
      batch.push_back(std::async(workers > 1 ? std::launch::async : std::launch::deferred, replay, sets[i]));
    for (std::size_t i = 0; i < batch.size(); ++i) out[first + i] = batch[i].get();
  }
  return out;
}

/// Replays the scenario document's workload once per set: its own policies
/// and expectations are dropped (each set brings its own policies).
[[nodiscard]] inline std::vector<compare_run> compare_policies(json doc, const std::vector<std::string>& sets) {
  if (std::find(sets.begin(), sets.end(), "scenario") == sets.end()) doc["policies"] = json::array();
  doc["expect"] = json::array();
  return compare_policies(load_scenario(doc), sets);
}

[[nodiscard]] inline json compare_report(const std::string& scenario_name, const std::vector<compare_run>& runs) {
  json j;
  j["scenario"] = scenario_name;
  j["sets"] = json::array();
  for (const auto& r : runs) j["sets"].push_back({{"policies", r.set}, {"totals", r.totals}, {"tenants", r.tenants}});
  return j;
}

[[nodiscard]] inline std::string compare_svg(const std::string& scenario_name, const std::string& resource,
                                             const std::vector<compare_run>& runs) {
  const double L = 70, T = 48, pw = 640, ph = 300;
  std::int64_t t_end = 1, ymax = 1;
  for (const auto& r : runs) {
    t_end = std::max(t_end, r.end_ms);
    ymax = std::max(ymax, r.capacity);
    for (const auto& [t, v] : r.usage) ymax = std::max(ymax, v);
  }
  auto num = [](double d) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", d);
    return std::string(b);
  };
  auto X = [&](std::int64_t t) { return L + pw * static_cast<double>(t) / static_cast<double>(t_end); };
  auto Y = [&](std::int64_t v) { return T + ph - ph * static_cast<double>(v) / static_cast<double>(ymax); };
  static const char* palette[] = {"#7f7f7f", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#17becf"};
  const double H = T + ph + 68 + 22.0 * static_cast<double>(runs.size() + 1);
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"" + num(H) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"960\" height=\"" + num(H) +
                  "\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(L) + "\" y=\"18\" font-size=\"15\" font-weight=\"bold\">" + svg_text(resource) +
       " in use, per policy set</text>\n<text x=\"" + num(L) + "\" y=\"34\" fill=\"#555\">" + svg_text(scenario_name) +
       "</text>\n";
  for (int g = 0; g <= 4; ++g) {
    const double y = Y(ymax * g / 4);
    s += "<line x1=\"" + num(L) + "\" y1=\"" + num(y) + "\" x2=\"" + num(L + pw) + "\" y2=\"" + num(y) +
         "\" stroke=\"#ddd\"/><text x=\"" + num(L - 6) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" +
         std::to_string(ymax * g / 4) + "</text>\n";
  }
  // time ticks at a round step, in readable units
  const std::int64_t step = time_tick_ms(t_end);
  for (std::int64_t t = 0; t <= t_end; t += step) {
    s += "<text x=\"" + num(X(t)) + "\" y=\"" + num(T + ph + 16) + "\" text-anchor=\"middle\" class=\"time-tick\">" +
         time_tick_label(t) + "</text>\n";
    if (t > t_end - step) break;
  }
  s += "<text x=\"" + num(L + pw / 2) + "\" y=\"" + num(T + ph + 32) +
       "\" text-anchor=\"middle\">time since the start</text>\n";
  s += "<text transform=\"translate(" + num(L - 44) + "," + num(T + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" class=\"y-unit\">" + svg_text(resource) + " (" +
       (resource == "cpu" ? std::string("millicores") : chart_unit(resource)) + ")</text>\n";
  // the cluster capacity (of the first run: the sets share the cluster)
  if (!runs.empty())
    s += "<line class=\"capacity\" x1=\"" + num(L) + "\" y1=\"" + num(Y(runs.front().capacity)) + "\" x2=\"" +
         num(L + pw) + "\" y2=\"" + num(Y(runs.front().capacity)) +
         "\" stroke=\"black\" stroke-width=\"2\"/><text x=\"" + num(L + pw + 6) + "\" y=\"" +
         num(Y(runs.front().capacity) + 4) + "\">cluster capacity " + std::to_string(runs.front().capacity) +
         "</text>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (r.usage.empty()) continue;
    // numbers as "%.1f" (to_chars with a precision is printf's, without the locale)
    s += "<path d=\"";
    auto point = [&s](const char* prefix, double v) {
      char b[32];
      s += prefix;
      s.append(b, std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, 1).ptr);
    };
    s.reserve(s.size() + r.usage.size() * 20 + 128);
    point("M", X(r.usage[0].first));
    point(",", Y(r.usage[0].second));
    for (std::size_t k = 1; k < r.usage.size(); ++k) {
      point(" H", X(r.usage[k].first));
      point(" V", Y(r.usage[k].second));
    }
    s += std::string("\" fill=\"none\" stroke=\"") + palette[i % 7] + "\" stroke-width=\"1.5\"/>\n";
  }
  // the table
  double y = T + ph + 56;
  s += "<text x=\"" + num(L) + "\" y=\"" + num(y) +
       "\" font-weight=\"bold\">policy set | utilisation | peak | GPU fragmentation | wait p50 / p90 / p99 | "
       "preemptions | never admitted</text>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& t = runs[i].totals;
    y += 22;
    char row[256];
    std::snprintf(row, sizeof row, "%s | %.3f | %.3f | %.3f | %s / %s / %s | %lld | %lld", runs[i].set.c_str(),
                  t["utilisation"].get<double>(),
                  static_cast<double>(t.value("peak_usage", std::int64_t{0})) /
                      static_cast<double>(std::max<std::int64_t>(1, runs[i].capacity)),
                  t.value("gpu_fragmentation", 0.0), t["wait"]["p50"].get_ref<const std::string&>().c_str(),
                  t["wait"]["p90"].get_ref<const std::string&>().c_str(),
                  t["wait"]["p99"].get_ref<const std::string&>().c_str(),
                  static_cast<long long>(t["preemptions"].get<std::int64_t>()),
                  static_cast<long long>(t["never_admitted"].get<std::int64_t>()));
    s += "<rect x=\"" + num(L - 16) + "\" y=\"" + num(y - 9) + "\" width=\"10\" height=\"10\" fill=\"" +
         palette[i % 7] + "\"/><text x=\"" + num(L) + "\" y=\"" + num(y) + "\">" + svg_text(row) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace quota::sim
