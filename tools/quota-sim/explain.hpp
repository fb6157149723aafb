// SPDX-License-Identifier: Apache-2.0
// quota-sim explain SCENARIO --at T --job FILE [--json]: what the composed
// engine would do with one job at time T, and a replay estimate of when it fits.
// Docs: docs/extra-policies.md ("Live what-if (explain)")
#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <quota/engine.hpp>
#include <quota/explain.hpp>
#include <quota/explain_json.hpp>
#include <quota/json.hpp>

#include "models.hpp"
#include "scenario.hpp"
#include "simulator.hpp"

namespace quota::sim {

inline const char* explain_help =
    "quota-sim explain SCENARIO --at T --job FILE [--json]\n"
    "\n"
    "Replays SCENARIO up to time T (milliseconds, or 90s, 5m, 2h, 1d), then explains what the\n"
    "composed quota models would do with the job in FILE at that moment, without admitting it:\n"
    "every model's decision with all its reasons, the running jobs each denying model would\n"
    "preempt to make room, the earliest admission time where a model can tell it, and an\n"
    "estimate from the declared end times of the running jobs. FILE is one job in the\n"
    "scenario's job format (its submit time is ignored).\n"
    "  --json   print the explanation as JSON\n"
    "\n"
    "exit status: 0 explained (admissible or not); 2 invalid scenario or job; 64 usage error\n";

/// The first time the quota models would allow `j` if the running jobs end as
/// declared and nothing else is admitted: per denying model and for all of them.
struct replay_estimate {
  struct entry {
    std::string model;  // empty: every model
    std::optional<std::int64_t> at_ms;
    std::vector<std::string> after;  // the jobs that have ended by then
  };
  std::vector<entry> entries;
};

inline replay_estimate estimate_by_replay(const simulator& sim, const explanation& x, const job& j,
                                          std::int64_t now_ms) {
  replay_estimate out;
  if (x.allowed() || x.already_admitted) return out;
  engine copy = sim.quota_engine();
  copy.pending_added(j);  // the job waits from now on, as explain() counted it
  const auto finishes = sim.scheduled_finishes();
  std::vector<std::size_t> denying;
  for (std::size_t i = 0; i < x.models.size(); ++i)
    if (!x.models[i].allowed()) {
      denying.push_back(i);
      out.entries.push_back({x.models[i].model, std::nullopt, {}});
    }
  out.entries.push_back({"", std::nullopt, {}});
  std::vector<std::string> ended;
  for (std::size_t k = 0; k < finishes.size(); ++k) {
    const auto& [t, id] = finishes[k];
    if (copy.is_admitted(id)) copy.release(id);
    ended.push_back(id);
    if (k + 1 < finishes.size() && finishes[k + 1].first == t) continue;  // all ends of one instant together
    bool all = true;
    for (std::size_t d = 0; d < denying.size(); ++d) {
      auto& e = out.entries[d];
      const bool ok = copy.model(denying[d]).check(j).allowed();
      all = all && ok;
      if (ok && !e.at_ms) {
        e.at_ms = std::max(t, now_ms);
        e.after = ended;
      }
    }
    if (all && copy.check(j).allowed()) {
      out.entries.back().at_ms = std::max(t, now_ms);
      out.entries.back().after = ended;
      break;
    }
  }
  return out;
}

inline json to_json_value(const replay_estimate& r) {
  json a = json::array();
  for (const auto& e : r.entries) {
    json o{{"model", e.model.empty() ? json("*") : json(e.model)}};
    if (e.at_ms) {
      o["earliest_admission_ms"] = *e.at_ms;
      o["after"] = e.after;
    } else {
      o["earliest_admission_ms"] = nullptr;
    }
    a.push_back(std::move(o));
  }
  return a;
}

inline int cmd_explain(const std::vector<std::string>& args) {
  constexpr int ok = 0, invalid = 2, usage = 64;
  std::string file, at_text, job_file;
  bool as_json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << explain_help;
      return ok;
    }
    if (a == "--at" || a == "--job") {
      if (i + 1 >= args.size()) {
        std::cerr << "quota-sim explain: " << a << " needs a value\n";
        return usage;
      }
      (a == "--at" ? at_text : job_file) = args[++i];
    } else if (a == "--json") {
      as_json = true;
    } else if (!a.empty() && a[0] != '-' && file.empty()) {
      file = a;
    } else {
      std::cerr << "quota-sim explain: unexpected argument " << a << "\n" << explain_help;
      return usage;
    }
  }
  if (file.empty() || at_text.empty() || job_file.empty()) {
    std::cerr << explain_help;
    return usage;
  }
  const std::optional<std::int64_t> at = parse_time_option(at_text);
  if (!at) {
    std::cerr << "quota-sim explain: --at expects a time (milliseconds, or 90s, 5m, 2h), got '" << at_text << "'\n";
    return usage;
  }
  try {
    json doc = load_scenario_file(file);
    json jj = load_scenario_file(job_file);
    if (!jj.is_object() || !jj.contains("id") || !jj["id"].is_string())
      throw validation_error(job_file, "expected one job object with a string \"id\"");
    if (jj.contains("count") && jj["count"] != 1)
      throw validation_error(job_file + ".count", "explain asks about one job: leave count out");
    // the job joins the scenario after T, so the replay up to T is the scenario's own
    // and every model's loader checks it as one of the scenario's jobs
    jj["submit"] = *at + 1;
    if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
      throw validation_error("$.jobs", "is required: an array of jobs");
    const std::string job_path = "$.jobs[" + std::to_string(doc["jobs"].size()) + "]";
    doc["jobs"].push_back(jj);
    // problems of the added job are reported against FILE
    auto rename = [&](const std::string& path) {
      return path.rfind(job_path, 0) == 0 ? job_file + path.substr(job_path.size()) : path;
    };
    // every problem at once: the scenario's, the job's and the policies'
    diagnostics diag;
    scenario sc = load_scenario(doc, diag, default_limits());
    std::vector<model_instance> models;
    try {
      models = build_models(sc);
    } catch (const validation_error& e) {
      for (const auto& p : e.problems()) diag.add(p.path, p.message);
    }
    if (!diag.empty()) {
      std::vector<diagnostic> ps;
      for (const auto& p : diag.items()) ps.push_back({rename(p.path), p.message});
      throw validation_error(std::move(ps));
    }
    simulator sim(std::move(sc), std::move(models));
    (void)sim.run(*at);  // --at is at most the time limit, so *at + 1 above stays finite
    const std::string id = jj["id"].get<std::string>();
    const job_spec* spec = nullptr;
    for (const auto& js : sim.spec().jobs)
      if (js.id == id) spec = &js;
    if (!spec) throw validation_error(job_file, "the job was not loaded");
    const job j = job_of(*spec, *at);
    const explanation x = sim.quota_engine().explain(j);
    const replay_estimate est = x.earliest_ms() ? replay_estimate{} : estimate_by_replay(sim, x, j, *at);
    if (as_json) {
      json out{{"scenario", sim.spec().name}, {"at_ms", *at}, {"explanation", x}};
      if (!est.entries.empty()) out["replay_estimate"] = to_json_value(est);
      std::cout << out.dump(2) << "\n";
      return ok;
    }
    std::cout << "scenario " << sim.spec().name << " at " << quota::format_duration(*at) << " (" << *at << " ms)\n"
              << to_string(x);
    if (!est.entries.empty()) {
      std::cout << "replay estimate (running jobs end as declared, nothing else is admitted; quota only):\n";
      for (const auto& e : est.entries) {
        std::cout << "  " << (e.model.empty() ? std::string("every model") : e.model) << ": ";
        if (!e.at_ms) {
          std::cout << "not before the declared ends of the running jobs\n";
          continue;
        }
        std::cout << "allows at " << quota::format_duration(*e.at_ms) << " (" << *e.at_ms << " ms), after "
                  << e.after.size() << " running job(s) end, the last " << e.after.back() << "\n";
      }
    }
    return ok;
  } catch (const validation_error& e) {
    std::cerr << "quota-sim explain: invalid input\n";
    for (const auto& p : e.problems()) std::cerr << "  " << p.path << ": " << p.message << "\n";
    return invalid;
  } catch (const error& e) {
    std::cerr << "quota-sim explain: " << e.what() << "\n";
    return invalid;
  }
}

}  // namespace quota::sim
