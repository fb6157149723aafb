// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, the samples over time, the report JSON and the SVG chart.
// Members of detail::simulator_impl (simulator_impl.hpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "simulator_impl.hpp"

namespace quota::sim::detail {

inline void simulator_impl::push_sample(std::vector<sample>& series, amount v) const {
  if (!series.empty() && series.back().v == v) return;
  if (!series.empty() && series.back().t == now_)
    series.back().v = v;
  else
    series.push_back({now_, v});
}

inline void simulator_impl::record_samples() {
  for (auto& [name, t] : tenants_) {
    push_sample(t.samples, t.usage->get(chart_));
    push_sample(t.pending_samples, t.pending);
  }
  // peak contention: the first instant with the most pending demand (the
  // models' state then is taken by a second replay up to it: see run())
  if (pending_demand_ > peak_demand_) {
    peak_demand_ = pending_demand_;
    peak_at_ = now_;
    peak_jobs_ = pending_.size();
  }
  const amount total = capacity_.get(chart_);
  amount used = 0;
  for (auto& [name, u] : usage_) used += u.get(chart_);
  if (util_samples_.empty() || util_samples_.back().v != used || util_cap_.back().v != total ||
      frag_samples_.back().v != fragmented_) {
    util_samples_.push_back({now_, used});
    util_cap_.push_back({now_, total});
    frag_samples_.push_back({now_, fragmented_});
  }
}

inline std::string simulator_impl::shown_amount(amount v) const {
  double unit = 1;
  for (int i = 0; i < sc_.registry.scale(chart_); ++i) unit *= 10;
  const double d = static_cast<double>(v) / unit;
  return d == std::floor(d) && std::fabs(d) < 1e15 ? std::to_string(static_cast<std::int64_t>(d)) : svg_num(d);
}

inline json simulator_impl::introspect_models() const {
  json models = json::object();
  for (std::size_t i = 0; i < models_.size(); ++i)
    if (models_[i].introspect)
      models[std::string(engine_.model(i).policy_name())] = models_[i].introspect(engine_.model(i));
  return models;
}

inline std::int64_t simulator_impl::percentile(std::vector<std::int64_t> v, int p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = (static_cast<std::size_t>(p) * v.size() + 99) / 100;  // nearest rank
  return v[std::max<std::size_t>(rank, 1) - 1];
}

inline json simulator_impl::report(const std::vector<failed_expectation>& failures) {
  json r;
  r["scenario"] = sc_.name;
  // how the host scheduled: the model that ordered pending jobs, and the cycle
  const auto om = engine_.order_model();
  r["scheduler"] =
      json{{"order", ordered_ && om ? json(sc_.policies.at(*om).model) : json("priority")}, {"cycle_ms", sc_.cycle_ms}};
  json pols = json::array();
  for (std::size_t i = 0; i < models_.size(); ++i) pols.push_back(std::string(engine_.model(i).policy_name()));
  r["policies"] = pols;
  r["end_ms"] = end_ms_;
  r["end"] = format_duration(end_ms_);
  r["chart_resource"] = sc_.registry.name(chart_);
  // the declared resources' scales: base units in one unit of the resource
  if (!sc_.declared_resources.empty()) {
    json res = json::object();
    for (const auto& d : sc_.declared_resources) res[d.name] = json{{"scale", quota::detail::pow10_u64[d.scale]}};
    r["resources"] = std::move(res);
  }
  // waits: to the first start; a job still pending at the end counts with
  // its wait so far (censored: it waits at least that long)
  std::vector<std::int64_t> waits, started_waits;
  std::int64_t admitted = 0, never = 0, finished = 0, censored = 0;
  json jobs = json::array();
  jobs.get_ref<json::array_t&>().reserve(jobs_.size());
  std::map<std::string, std::int64_t> never_reasons;
  for (std::size_t ji = 0; ji < jobs_.size(); ++ji) {
    const auto& jr = jobs_[ji];
    const std::string& why = reason_of(ji);
    json jj{
        {"id", jr.j.id}, {"tenant", jr.tenant}, {"submitted_ms", jr.spec->submit_ms}, {"state", state_name(jr.state)}};
    if (jr.first_start >= 0) {
      ++admitted;
      jj["started_ms"] = jr.first_start;
      jj["wait_ms"] = jr.first_start - jr.spec->submit_ms;
      if (!jr.wait_reason.empty()) jj["wait_reason"] = jr.wait_reason;
      waits.push_back(jr.first_start - jr.spec->submit_ms);
      started_waits.push_back(waits.back());
    } else if (jr.state != job_state::waiting) {
      ++never;
      ++never_reasons[why.empty() ? "(not scheduled yet)" : why];
      if (jr.state != job_state::deleted) {  // still pending at the end
        ++censored;
        jj["wait_ms"] = end_ms_ - jr.spec->submit_ms;
        jj["wait_censored"] = true;
        waits.push_back(end_ms_ - jr.spec->submit_ms);
      }
    }
    if (jr.end >= 0) jj["ended_ms"] = jr.end;
    if (jr.partial) {  // its last run was a partial admission: the pods it ran (per pod set)
      const job& rj = *jr.partial;
      jj["admitted_pods"] = json::array();
      if (rj.pod_sets.empty())
        jj["admitted_pods"].push_back(rj.pods);
      else
        for (const auto& ps : rj.pod_sets) jj["admitted_pods"].push_back(ps.count);
    }
    if (jr.state == job_state::finished) ++finished;
    if (jr.preempted) jj["preempted"] = jr.preempted;
    // why it waits now, else why it waited before its latest start
    if (!why.empty()) {
      jj["reason"] = why;
      // the models' refusals in full (resource, amounts, message)
      if (const auto& list = *why_of(ji).second; !list.empty()) {
        json texts = json::array();
        for (const reason& f : list) {
          std::string text;
          reason_full_text(f, text);
          texts.push_back(std::move(text));
        }
        jj["reasons"] = std::move(texts);
      }
    } else if (!jr.last_denial.empty()) {
      jj["reason"] = jr.last_denial;
    }
    jobs.push_back(std::move(jj));
  }
  // utilisation of the chart resource, time-weighted, exact integrals
  quota::detail::int128 used_area = 0, cap_area = 0, frag_area = 0;
  for (std::size_t i = 0; i < util_samples_.size(); ++i) {
    const std::int64_t t1 = i + 1 < util_samples_.size() ? util_samples_[i + 1].t : end_ms_;
    const std::int64_t dt = std::max<std::int64_t>(0, t1 - util_samples_[i].t);
    used_area += static_cast<quota::detail::int128>(util_samples_[i].v) * dt;
    cap_area += static_cast<quota::detail::int128>(util_cap_[i].v) * dt;
    frag_area += static_cast<quota::detail::int128>(frag_samples_[i].v) * dt;
  }
  json totals;
  totals["jobs"] = jobs_.size();
  totals["admitted"] = admitted;
  std::int64_t readmissions = 0;
  for (const auto& [name, t] : tenants_) readmissions += t.readmissions;
  totals["readmissions"] = readmissions;
  totals["finished"] = finished;
  totals["never_admitted"] = never;
  totals["never_admitted_by_reason"] = never_reasons;
  totals["preemptions"] = preemptions_;
  if (reloads_) totals["reloads"] = reloads_;
  if (!shrink_log_.empty()) totals["shrink_evictions"] = shrink_log_;
  totals["utilisation"] =
      cap_area > 0 ? std::round(static_cast<double>(used_area) / static_cast<double>(cap_area) * 1e6) / 1e6 : 0.0;
  // fragmentation: of the free GPU capacity, the share stranded on partly used devices
  totals["gpu_fragmentation"] =
      cap_area - used_area > 0
          ? std::round(static_cast<double>(frag_area) / static_cast<double>(cap_area - used_area) * 1e6) / 1e6
          : 0.0;
  const auto wait_figures = [](const std::vector<std::int64_t>& w, json& ms, json& text) {
    for (const int p : {50, 90, 99}) {
      const std::int64_t v = percentile(w, p);
      ms["p" + std::to_string(p)] = v;
      text["p" + std::to_string(p)] = format_duration(v);
    }
  };
  json wait_ms, wait_text, started_ms, started_text;
  wait_figures(waits, wait_ms, wait_text);
  wait_figures(started_waits, started_ms, started_text);
  wait_ms["jobs"] = waits.size();
  wait_ms["censored"] = censored;
  totals["wait_ms"] = std::move(wait_ms);
  totals["wait"] = std::move(wait_text);
  totals["wait_ms_started"] = std::move(started_ms);
  // fairness: Jain's index over tenants' time-averaged usage of the chart resource
  std::vector<double> avg;
  json tenants = json::object();
  for (auto& [name, t] : tenants_) {
    quota::detail::int128 area = 0;
    json samples = json::array(), pending = json::array();
    samples.get_ref<json::array_t&>().reserve(t.samples.size());
    for (const auto& p : t.pending_samples) pending.push_back({p.t, p.v});
    for (std::size_t i = 0; i < t.samples.size(); ++i) {
      const std::int64_t t1 = i + 1 < t.samples.size() ? t.samples[i + 1].t : end_ms_;
      area += static_cast<quota::detail::int128>(t.samples[i].v) * std::max<std::int64_t>(0, t1 - t.samples[i].t);
      samples.push_back({t.samples[i].t, t.samples[i].v});
    }
    const double a = end_ms_ > 0 ? static_cast<double>(area) / static_cast<double>(end_ms_) : 0.0;
    avg.push_back(a);
    json tj;
    tj["admissions"] = t.admissions;
    tj["readmissions"] = t.readmissions;
    tj["preempted"] = t.preempted;
    tj["denials_by_reason"] = t.denials;
    tj["average_usage"] = std::round(a * 1000) / 1000;
    tj["usage"] = std::move(samples);
    tj["pending"] = std::move(pending);
    if (const auto it = sc_.chart_lines.find(name); it != sc_.chart_lines.end()) {
      json ref = json::object();
      for (const auto& [label, v] : it->second) ref[label] = v;
      tj["reference"] = std::move(ref);
    }
    tenants[name] = std::move(tj);
  }
  double s = 0, s2 = 0;
  for (double a : avg) {
    s += a;
    s2 += a * a;
  }
  totals["fairness_jain"] =
      (avg.empty() || s2 == 0) ? 1.0 : std::round(s * s / (static_cast<double>(avg.size()) * s2) * 1e6) / 1e6;
  // the chart's subtitle: the figures that tell the story
  char util[32];
  std::snprintf(util, sizeof util, "%.1f%%", totals["utilisation"].get<double>() * 100);
  summary_ = "utilisation " + std::string(util) + " | wait p50 " + wait_text_of(totals, "p50") + ", p90 " +
             wait_text_of(totals, "p90") + ", p99 " + wait_text_of(totals, "p99") +
             (censored ? " (" + std::to_string(censored) + " never started: counted to the end)" : std::string()) +
             " | " + std::to_string(preemptions_) + " preemptions";
  if (peak_at_ >= 0)
    summary_ += " | peak pending demand " + shown_amount(peak_demand_) + " " + chart_unit(sc_.registry.name(chart_)) +
                " at " + format_duration(peak_at_);
  r["totals"] = std::move(totals);  // moved, not copied: the jobs array is the report's bulk
  r["tenants"] = std::move(tenants);
  r["jobs"] = std::move(jobs);
  json log = json::array();
  for (const auto& m : preemption_marks_) {
    json e{{"at_ms", m.t},
           {"at", format_duration(m.t)},
           {"victim", jobs_[m.victim].j.id},
           {"victim_tenant", jobs_[m.victim].tenant}};
    if (m.preemptor != npos) {
      e["preemptor"] = jobs_[m.preemptor].j.id;
      e["preemptor_tenant"] = jobs_[m.preemptor].tenant;
    }
    e["reason"] = m.cause;
    log.push_back(std::move(e));
  }
  r["preemptions"] = std::move(log);
  json evictions = json::array();
  for (const eviction* e : evictions_in_order()) {
    json ej{{"at_ms", e->t}, {"at", format_duration(e->t)}, {"job", jobs_[e->victim].j.id}};
    if (e->preemptor != npos) ej["preemptor"] = jobs_[e->preemptor].j.id;
    ej["model"] = e->model;
    ej["rule"] = e->rule;
    if (!e->entity.empty()) ej["entity"] = e->entity;
    if (!e->upstream_reason.empty()) ej["upstream_reason"] = e->upstream_reason;
    evictions.push_back(std::move(ej));
  }
  r["evictions"] = std::move(evictions);
  r["models"] = introspect_models();
  if (peak_at_ >= 0) {
    r["peak_contention"] = json{{"at_ms", peak_at_},
                                {"at", format_duration(peak_at_)},
                                {"pending_jobs", peak_jobs_},
                                {"pending_demand", peak_demand_}};
    if (!peak_models_.is_null()) r["peak_contention"]["models"] = peak_models_;
  }
  json fx = json::array();
  for (const auto& f : failures)
    fx.push_back({{"where", f.path}, {"at_ms", f.at_ms}, {"expected", f.expected}, {"actual", f.actual}});
  r["failed_expectations"] = std::move(fx);
  r["expectations"] = sc_.expectations.size();
  return r;
}

inline std::string simulator_impl::svg() const {
  const double W = 1000, L = 80, R = 250, pw = W - L - R;
  const double strip_top = 56, strip_h = 34, top = strip_top + strip_h + 6, ph = 240;
  const double lane_h = 70, lane_gap = 46, lanes_top = top + ph + 64;
  const std::size_t nt = tenants_.size();
  const double H = lanes_top + static_cast<double>(nt) * (lane_h + lane_gap) + 24;
  const std::int64_t t_end = std::max<std::int64_t>(end_ms_, 1);
  const std::string res(sc_.registry.name(chart_));
  const int scale = sc_.registry.scale(chart_);
  double unit = 1;
  for (int i = 0; i < scale; ++i) unit *= 10;
  const auto amount_text = [&](amount v) { return shown_amount(v); };
  const auto X = [&](std::int64_t t) { return L + pw * static_cast<double>(t) / static_cast<double>(t_end); };
  const auto& N = svg_num;
  static const char* palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79"};
  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + N(W) + "\" height=\"" + N(H) + "\" viewBox=\"0 0 " +
       N(W) + " " + N(H) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"" + N(W) + "\" height=\"" + N(H) + "\" fill=\"white\"/>\n";
  s += "<text x=\"" + N(L) + "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" + svg_text(sc_.name) + ": " +
       svg_text(res) + " in use per tenant, stacked, against the cluster capacity</text>\n";
  if (!summary_.empty())
    s += "<text x=\"" + N(L) + "\" y=\"40\" fill=\"#333\" class=\"summary\">" + svg_text(summary_) + "</text>\n";
  // time ticks under a panel whose bottom is at y (with vertical grid lines from y_top)
  const std::int64_t step = time_tick_ms(t_end);
  const auto time_axis = [&](double y_top, double y) {
    for (std::int64_t t = 0; t <= t_end; t += step) {
      s += "<line x1=\"" + N(X(t)) + "\" y1=\"" + N(y_top) + "\" x2=\"" + N(X(t)) + "\" y2=\"" + N(y) +
           "\" stroke=\"#eee\"/><text x=\"" + N(X(t)) + "\" y=\"" + N(y + 14) +
           "\" text-anchor=\"middle\" class=\"time-tick\">" + time_tick_label(t) + "</text>\n";
      if (t > t_end - step) break;  // the next step passes the end (and could overflow)
    }
    s += "<line x1=\"" + N(L) + "\" y1=\"" + N(y) + "\" x2=\"" + N(L + pw) + "\" y2=\"" + N(y) +
         "\" stroke=\"black\"/>\n";
  };

  // --- the stacked usage panel -------------------------------------------
  amount ymax = 1;
  for (const auto& c : util_cap_) ymax = std::max(ymax, c.v);
  for (const auto& u : util_samples_) ymax = std::max(ymax, u.v);
  ymax += std::max<amount>(1, ymax / 8);  // room above the capacity line
  const auto Y = [&](amount v) { return top + ph - ph * static_cast<double>(v) / static_cast<double>(ymax); };
  time_axis(top, top + ph);
  // y ticks: a round step (1, 2 or 5 times a power of ten, in the shown units), at most 6
  const double shown_max = static_cast<double>(ymax) / unit;
  double ystep = std::pow(10.0, std::floor(std::log10(shown_max / 6)));
  for (const double f : {1.0, 2.0, 5.0, 10.0})
    if (shown_max / (ystep * f) <= 6) {
      ystep *= f;
      break;
    }
  for (int g = 0; static_cast<double>(g) * ystep <= shown_max; ++g) {
    const double shown = static_cast<double>(g) * ystep;
    const double y = top + ph - ph * shown / shown_max;
    s += "<line x1=\"" + N(L) + "\" y1=\"" + N(y) + "\" x2=\"" + N(L + pw) + "\" y2=\"" + N(y) +
         "\" stroke=\"#ddd\"/><text x=\"" + N(L - 6) + "\" y=\"" + N(y + 4) + "\" text-anchor=\"end\">" +
         (shown == std::floor(shown) ? std::to_string(static_cast<std::int64_t>(shown)) : svg_num(shown)) + "</text>\n";
  }
  s += "<text transform=\"translate(" + N(L - 52) + "," + N(top + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" class=\"y-unit\">" + svg_text(res) + " (" + chart_unit(res) +
       ")</text>\n";
  s += "<line x1=\"" + N(L) + "\" y1=\"" + N(top) + "\" x2=\"" + N(L) + "\" y2=\"" + N(top + ph) +
       "\" stroke=\"black\"/>\n";
  s += "<text x=\"" + N(L + pw / 2) + "\" y=\"" + N(top + ph + 32) +
       "\" text-anchor=\"middle\">time since the start</text>\n";
  // every tenant's usage at the union of their change times, stacked in name order
  std::vector<std::int64_t> times;
  for (const auto& [name, t] : tenants_)
    for (const auto& smp : t.samples) times.push_back(smp.t);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::vector<amount> low(times.size(), 0), up(times.size(), 0);
  std::size_t k = 0;
  for (const auto& [name, t] : tenants_) {
    const char* c = palette[k++ % 10];
    std::size_t j = 0;
    amount v = 0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      while (j < t.samples.size() && t.samples[j].t <= times[i]) v = t.samples[j++].v;
      low[i] = up[i];
      up[i] = quota::detail::checked_add(low[i], v);
    }
    if (times.empty()) continue;
    std::string d = "M" + N(X(times[0])) + "," + N(Y(up[0]));
    for (std::size_t i = 1; i < times.size(); ++i) d += " H" + N(X(times[i])) + " V" + N(Y(up[i]));
    d += " H" + N(X(t_end)) + " V" + N(Y(low.back()));
    for (std::size_t i = times.size(); i-- > 1;) d += " H" + N(X(times[i])) + " V" + N(Y(low[i - 1]));
    d += " H" + N(X(times[0])) + " Z";
    s += "<path class=\"stack\" data-tenant=\"" + svg_text(name) + "\" d=\"" + d + "\" fill=\"" + c +
         "\" fill-opacity=\"0.75\" stroke=\"" + c + "\" stroke-width=\"0.5\"><title>" + svg_text(name) + ": " +
         svg_text(res) + " in use</title></path>\n";
  }
  s += step_path(util_cap_, X, Y, t_end, "#000", "stroke-width=\"2\" class=\"capacity\"");
  if (!util_cap_.empty())
    s += "<text x=\"" + N(L + 4) + "\" y=\"" + N(Y(util_cap_.front().v) - 4) + "\">cluster capacity " +
         amount_text(util_cap_.front().v) + "</text>\n";
  // --- every preemption: a mark above the panel (stacked when at one instant) and a faint line
  s += "<text x=\"" + N(L + pw + 16) + "\" y=\"" + N(strip_top + 14) + "\" fill=\"#d62728\">" +
       std::to_string(preemption_marks_.size()) + " preemptions (hover a mark)</text>\n";
  std::int64_t last_t = -1;
  int at_same = 0;
  for (const auto& m : preemption_marks_) {
    at_same = m.t == last_t ? at_same + 1 : 0;
    if (m.t != last_t)
      s += "<line x1=\"" + N(X(m.t)) + "\" y1=\"" + N(top) + "\" x2=\"" + N(X(m.t)) + "\" y2=\"" + N(top + ph) +
           "\" stroke=\"#d62728\" stroke-opacity=\"0.35\" stroke-dasharray=\"2,2\"/>\n";
    last_t = m.t;
    const double x = X(m.t) + 7.0 * (at_same / 6), y = strip_top + 2 + 5.0 * (at_same % 6);
    const auto& v = jobs_[m.victim];
    std::string what = "at " + time_tick_label(m.t) + ": " + v.j.id + " (" + v.tenant + ") ";
    what += m.preemptor != npos ? "preempted for " + jobs_[m.preemptor].j.id + " (" + jobs_[m.preemptor].tenant + ")"
                                : std::string("evicted");
    if (!m.cause.empty()) what += m.preemptor != npos ? ", which was refused: " + m.cause : ": " + m.cause;
    s += "<path class=\"preemption\" d=\"M" + N(x - 3) + "," + N(y) + " h6 l-3,5 z\" fill=\"#d62728\"><title>" +
         svg_text(what) + "</title></path>\n";
  }
  // legend of the panel
  double ly = top + 4;
  const double lx = L + pw + 16;
  k = 0;
  for (const auto& [name, t] : tenants_) {
    s += "<rect x=\"" + N(lx) + "\" y=\"" + N(ly) + "\" width=\"12\" height=\"10\" fill=\"" + palette[k++ % 10] +
         "\" fill-opacity=\"0.75\"/><text x=\"" + N(lx + 18) + "\" y=\"" + N(ly + 9) + "\">" + svg_text(name) +
         "</text>\n";
    ly += 17;
  }
  s += "<line x1=\"" + N(lx) + "\" y1=\"" + N(ly + 5) + "\" x2=\"" + N(lx + 12) + "\" y2=\"" + N(ly + 5) +
       "\" stroke=\"black\" stroke-width=\"2\"/><text x=\"" + N(lx + 18) + "\" y=\"" + N(ly + 9) +
       "\">cluster capacity</text>\n";
  ly += 17;
  s += "<path d=\"M" + N(lx + 3) + "," + N(ly + 2) + " h6 l-3,5 z\" fill=\"#d62728\"/><text x=\"" + N(lx + 18) +
       "\" y=\"" + N(ly + 9) + "\">preemption (hover: who, why)</text>\n";

  // --- one lane per tenant: usage, pending demand, reference lines --------
  k = 0;
  double lane_y = lanes_top;
  for (const auto& [name, t] : tenants_) {
    const char* c = palette[k++ % 10];
    const auto lines_it = sc_.chart_lines.find(name);
    amount lmax = 1;
    for (const auto& smp : t.samples) lmax = std::max(lmax, smp.v);
    for (const auto& smp : t.pending_samples) lmax = std::max(lmax, smp.v);
    if (lines_it != sc_.chart_lines.end())
      for (const auto& [label, v] : lines_it->second) lmax = std::max(lmax, v);
    const double bottom = lane_y + lane_h;
    const auto LY = [&](amount v) { return bottom - lane_h * static_cast<double>(v) / static_cast<double>(lmax); };
    s += "<g class=\"lane\" data-tenant=\"" + svg_text(name) + "\">\n";
    s += "<text x=\"" + N(L) + "\" y=\"" + N(lane_y - 8) + "\"><tspan font-weight=\"bold\">" + svg_text(name) +
         "</tspan>: " + svg_text(res) + " in use (line) and requested by pending jobs (shaded)</text>\n";
    s += "<text x=\"" + N(L - 6) + "\" y=\"" + N(lane_y + 4) + "\" text-anchor=\"end\">" + amount_text(lmax) +
         "</text><text x=\"" + N(L - 6) + "\" y=\"" + N(bottom + 4) + "\" text-anchor=\"end\">0</text>\n";
    s += "<line x1=\"" + N(L) + "\" y1=\"" + N(lane_y) + "\" x2=\"" + N(L) + "\" y2=\"" + N(bottom) +
         "\" stroke=\"black\"/>\n";
    time_axis(lane_y, bottom);
    if (!t.pending_samples.empty()) {
      std::string d = "M" + N(X(t.pending_samples[0].t)) + "," + N(bottom);
      for (const auto& smp : t.pending_samples) d += " H" + N(X(smp.t)) + " V" + N(LY(smp.v));
      d += " H" + N(X(t_end)) + " V" + N(bottom) + " Z";
      s += "<path class=\"pending\" d=\"" + d + "\" fill=\"" + c + "\" fill-opacity=\"0.2\" stroke=\"" + c +
           "\" stroke-opacity=\"0.5\" stroke-dasharray=\"1,2\"><title>" + svg_text(name) + ": " + svg_text(res) +
           " requested by pending jobs</title></path>\n";
    }
    s += step_path(t.samples, X, LY, t_end, c, "stroke-width=\"2\" class=\"usage\"");
    if (lines_it != sc_.chart_lines.end()) {
      // labels top to bottom (highest line first), kept apart
      std::vector<std::pair<std::string, amount>> lines = lines_it->second;
      std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      double last_label = -1e9;
      for (const auto& [label, v] : lines) {
        const double y = LY(v);
        const double label_y = std::max(y + 4, last_label + 12);
        last_label = label_y;
        s += "<line class=\"reference\" x1=\"" + N(L) + "\" y1=\"" + N(y) + "\" x2=\"" + N(L + pw) + "\" y2=\"" + N(y) +
             "\" stroke=\"" + c + "\" stroke-dasharray=\"6,4\"><title>" + svg_text(name) + ": " + svg_text(label) +
             " " + amount_text(v) + "</title></line>\n";
        s += "<text x=\"" + N(L + pw + 6) + "\" y=\"" + N(label_y) + "\" fill=\"" + c + "\">" + svg_text(label) + " " +
             amount_text(v) + "</text>\n";
      }
    }
    s += "</g>\n";
    lane_y += lane_h + lane_gap;
  }
  s += "</svg>\n";
  return s;
}

template <class FX, class FY>
inline std::string simulator_impl::step_path(const std::vector<sample>& pts, FX X, FY Y, std::int64_t t_end,
                                             const char* color, const char* extra) {
  if (pts.empty()) return {};
  // one string, numbers as printf's "%.1f" (to_chars with precision is that, without the locale)
  std::string d = "<path d=\"";
  d.reserve(d.size() + pts.size() * 20 + 64);
  auto num = [&d](const char* prefix, double v) {
    char buf[32];
    d += prefix;
    d.append(buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 1).ptr);
  };
  num("M", X(pts[0].t));
  num(",", Y(pts[0].v));
  for (std::size_t i = 1; i < pts.size(); ++i) {
    num(" H", X(pts[i].t));
    num(" V", Y(pts[i].v));
  }
  num(" H", X(t_end));
  return d + "\" fill=\"none\" stroke=\"" + color + "\" " + extra + "/>\n";
}

}  // namespace quota::sim::detail
