// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, the replay loop: run() over the instants, the scheduling
// pass, admission and preemption, the pending order.
// Members of detail::simulator_impl (simulator_impl.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "simulator_impl.hpp"

namespace quota::sim::detail {

inline run_result simulator_impl::run(std::int64_t until_ms,
                                      const std::function<void(std::size_t, std::size_t)>& progress) {
  return run(until_ms, progress, run_options{});
}

inline run_result simulator_impl::run(std::int64_t until_ms,
                                      const std::function<void(std::size_t, std::size_t)>& progress,
                                      const run_options& opt) {
  if (until_ms < 0) until_ms = sc_.until_ms;
  std::vector<std::size_t> clocked;  // models with a clock (on_time / next_wake)
  for (std::size_t i = 0; i < models_.size(); ++i)
    if (models_[i].on_time || models_[i].next_wake) clocked.push_back(i);
  // cycle mode (scheduler.cycle): instants apply what happens; a pass runs
  // at the first cycle boundary after a change, over everything since
  const bool cycles = sc_.cycle_ms > 0;
  std::int64_t boundary = end_of_time;  // the boundary of the pass due, if any
  bool full_due = false;
  // Wake-ups: only while jobs are pending, and only again after something
  // happened since the last wake-up (a wake-up pass that admits nothing
  // would find the same at the next one: no endless empty windows).
  bool wake_armed = true;
  std::size_t next_job = 0, next_event = 0, next_expect = 0;
  std::vector<std::size_t> expect_order(sc_.expectations.size());
  for (std::size_t i = 0; i < expect_order.size(); ++i) expect_order[i] = i;
  std::stable_sort(expect_order.begin(), expect_order.end(),
                   [&](std::size_t a, std::size_t b) { return sc_.expectations[a].at_ms < sc_.expectations[b].at_ms; });
  const std::size_t total = sc_.jobs.size() * 2 + sc_.events.size();
  run_result res;
  while (true) {
    // next instant
    std::int64_t t = end_of_time;
    if (next_job < jobs_.size()) t = std::min(t, jobs_[next_job].spec->submit_ms);
    if (next_event < sc_.events.size()) t = std::min(t, sc_.events[next_event].at_ms);
    if (!finishes_.empty()) t = std::min(t, finishes_.begin()->first);
    if (next_expect < expect_order.size()) t = std::min(t, sc_.expectations[expect_order[next_expect]].at_ms);
    for (const auto& [pi, at] : shrink_at_) t = std::min(t, at);  // quota shrink deadlines
    std::int64_t wake = end_of_time;
    if (wake_armed && !pending_.empty())
      for (auto i : clocked)
        if (models_[i].next_wake) {
          const std::int64_t w = models_[i].next_wake(engine_.model(i), now_);
          if (w > now_) wake = std::min(wake, w);
        }
    // a wake-up after everything else is over still counts (pending jobs may start then)
    t = std::min(t, wake);
    t = std::min(t, boundary);
    if (t == end_of_time) break;
    if (until_ms >= 0 && t > until_ms) break;
    now_ = t;
    for (auto i : clocked)
      if (models_[i].on_time) models_[i].on_time(engine_.model(i), t);
    const bool woken = t == wake;
    const std::int64_t admitted_before = admissions_total_;
    bool news = false;  // finishes, events or submissions at this instant
    freed_ = false;
    if (!cycles) arrivals_.clear();
    // 1. finishes
    while (!finishes_.empty() && finishes_.begin()->first == t) {
      const auto idx = finishes_.begin()->second;
      finishes_.erase(finishes_.begin());
      jobs_[idx].has_finish = false;
      stop(idx, job_state::finished);
      ++res.events;
      news = true;
    }
    // 1b. quota shrink: evictions whose grace period ends now
    if (!shrink_at_.empty() && shrink_due()) news = true;
    // 2. events
    while (next_event < sc_.events.size() && sc_.events[next_event].at_ms == t) {
      apply_event(sc_.events[next_event++], res.failures);
      ++res.events;
      news = true;
    }
    // 3. submissions
    while (next_job < jobs_.size() && jobs_[next_job].spec->submit_ms == t) {
      if (jobs_[next_job].spec->running) {  // running from the start (set_up_running)
        ++next_job;
        ++res.events;
        news = true;
        continue;
      }
      jobs_[next_job].state = job_state::pending;
      engine_.pending_added(jobs_[next_job].j);  // models that follow demand see it from now on
      pend(next_job);
      arrivals_.push_back(next_job);
      ++next_job;
      ++res.events;
      news = true;
    }
    const bool changed = news || woken;
    // 4. scheduling pass: now, or (cycle mode) at the next cycle boundary
    if (!cycles) {
      if (changed) schedule(freed_ || woken);  // a wake-up retries every pending job
    } else {
      full_due = full_due || freed_ || woken;
      if (changed && boundary == end_of_time) boundary = next_boundary(t);
      if (t == boundary) {
        schedule(full_due);
        arrivals_.clear();
        full_due = false;
        boundary = end_of_time;
      }
    }
    wake_armed = !woken || news || admissions_total_ != admitted_before;
    record_samples();
    if (opt.check_invariants) check_capacity(res.failures);
    // 5. expectations due now
    while (next_expect < expect_order.size() && sc_.expectations[expect_order[next_expect]].at_ms == t)
      check(sc_.expectations[expect_order[next_expect++]], res.failures);
    if (progress && (res.events & 0x3FF) == 0) progress(res.events, total);
  }
  end_ms_ = until_ms >= 0 ? std::min(until_ms, now_) : now_;
  while (next_expect < expect_order.size()) check(sc_.expectations[expect_order[next_expect++]], res.failures);
  if (opt.check_invariants) check_outcomes(res.failures);
  if (opt.peak_snapshot && peak_at_ >= 0) {
    // the replay is deterministic: a fresh one up to the peak instant is in
    // the state this one was in then (cheaper than a snapshot at every new peak)
    simulator_impl again(*sc0_, *models0_);
    again.run(peak_at_, {}, run_options{});
    peak_models_ = again.introspect_models();
  }
  res.report = report(res.failures);
  if (progress) progress(total, total);
  return res;
}

inline std::string simulator_impl::tenant_of(const job_spec& js) const {
  if (sc_.tenant_by == "namespace") return js.ns;
  if (sc_.tenant_by == "user") return js.user.empty() ? "(none)" : js.user;
  return js.queue.empty() ? js.ns : js.queue;
}

inline void simulator_impl::regroup_pending() {
  std::vector<std::size_t> waiting;
  waiting.reserve(pending_.size());
  for (const pkey& k : pending_) waiting.push_back(k.idx);
  pending_.clear();
  for (const std::size_t idx : waiting) by_shape_[shape_ids_[idx].shape].clear();
  set_up_order();
  for (const std::size_t idx : waiting) {
    pending_.insert(pending_key(idx));
    by_shape_[shape_ids_[idx].shape].insert(pending_key(idx));
  }
  // queue ids changed meaning: a queue's head holds it back again only when a pass says so
  qblock_pass_.clear();
  qblock_reason_.clear();
}

inline void simulator_impl::set_up_order() {
  if (sc_.order == "priority") {
    ordered_ = false;
  } else {
    if (!sc_.order.empty()) {
      std::size_t i = 0;
      while (i < sc_.policies.size() && sc_.policies[i].model != sc_.order) ++i;
      if (i >= engine_.model_count() || !engine_.model(i).offers_order())
        throw validation_error("$.scheduler.order", "model '" + sc_.order +
                                                        "' does not order pending jobs (models that do: elastic_quota, "
                                                        "volcano, volcano_capacity, kai_fair_share, kueue)");
      engine_.set_order_model(i);
    } else if (const auto first = engine_.order_model()) {
      engine_.set_order_model(*first);  // the default (the first model that orders), found once
    }
    ordered_ = engine_.offers_order();
  }
  std::unordered_map<std::string, std::size_t> queue_ids;
  queue_of_.assign(jobs_.size(), 0);
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const std::string q = ordered_ ? std::string(engine_.pending_queue(jobs_[i].j)) : std::string();
    queue_of_[i] = queue_ids.emplace(q, queue_ids.size()).first->second;
  }
  queue_count_ = std::max<std::size_t>(1, queue_ids.size());
  std::vector<std::size_t> order(jobs_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (queue_of_[a] != queue_of_[b]) return queue_of_[a] < queue_of_[b];
    const auto c =
        ordered_ ? engine_.compare_pending(jobs_[a].j, jobs_[b].j) : default_pending_order(jobs_[a].j, jobs_[b].j);
    return c < 0;
  });
  rank_.assign(jobs_.size(), 0);
  queue_first_rank_.assign(queue_count_, 0);
  for (std::size_t r = order.size(); r-- > 0;) {  // ranks of one queue are contiguous
    rank_[order[r]] = r;
    queue_first_rank_[queue_of_[order[r]]] = r;
  }
}

inline std::int64_t simulator_impl::next_boundary(std::int64_t t) const {
  const std::int64_t c = sc_.cycle_ms;
  const std::int64_t k = t / c + (t % c != 0 ? 1 : 0);
  std::int64_t b = 0;
  return quota::detail::try_mul(k, c, b) ? b : end_of_time;
}

inline void simulator_impl::reason_text(const decision& d, std::string& s) {
  s.clear();
  for (const auto& r : d.reasons()) {
    if (!s.empty()) s += "; ";
    s.append(r.model).append(".").append(r.rule);
    if (!r.entity.empty()) s.append(" [").append(r.entity).append("]");
  }
}

inline std::string simulator_impl::reason_text(const decision& d) {
  std::string s;
  reason_text(d, s);
  return s;
}

inline void simulator_impl::store_refusals(const decision& d, refusals& out) {
  out.resize(d.reasons().size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = d.reasons()[i];
    out[i].resource_name = {};  // named when read (reason_full_text)
  }
}

inline void simulator_impl::reason_full_text(const reason& r, std::string& out) const {
  const bool known = r.resource != no_resource && r.resource < sc_.registry.size();
  append_text(out, r, known ? sc_.registry.name(r.resource) : std::string_view());
}

inline void simulator_impl::count_denial(tenant_stats& tenant, std::string_view model, std::string_view rule) {
  auto& counts = tenant.denials;
  key_buf_.assign(model).append(".").append(rule);
  if (auto it = counts.find(key_buf_); it != counts.end())
    ++it->second;
  else
    counts.emplace(key_buf_, 1);
}

inline bool simulator_impl::try_admit(std::size_t idx) {
  auto& jr = jobs_[idx];
  auto& counts = counts_buf_;
  const decision d = engine_.check(jr.j, counts);
  if (d.denied()) {
    reason_text(d, jr.last_reason);
    store_refusals(d, jr.last_refusals);
    bool agnostic = true, fixed = false;
    for (const auto& r : d.reasons()) {
      count_denial(*jr.ts, r.model, r.rule);
      agnostic = agnostic && user_agnostic(r.model);
      fixed = fixed || permanent(r);
    }
    if (agnostic) coarse_denied_ = true;
    if (fixed) shape_fixed_[shape_ids_[idx].shape] = true;
    return false;
  }
  // admitted partially: the host runs exactly the admitted pods
  if (!counts.empty()) set_partial(jr, counts);
  if (!place(idx)) {
    jr.partial.reset();
    coarse_denied_ = true;
    jr.last_reason = "host.no_node_fits";
    jr.last_refusals.clear();
    count_denial(*jr.ts, "host", "no_node_fits");
    return false;
  }
  const decision a = jr.partial ? engine_.admit(*jr.partial) : engine_.admit(jr.j);
  if (a.denied()) {  // cannot happen after an allowed check on the same state; stay safe
    unplace(idx);
    jr.partial.reset();
    jr.last_reason = reason_text(a);
    store_refusals(a, jr.last_refusals);
    return false;
  }
  if (!jr.last_reason.empty()) jr.last_denial = std::move(jr.last_reason);
  jr.last_reason.clear();
  jr.last_refusals.clear();
  start(idx);
  return true;
}

inline void simulator_impl::set_partial(job_run& jr, const std::vector<std::int32_t>& counts) {
  auto p = std::make_unique<job>();
  quota::reduced_job(jr.j, counts, *p);
  // the models hold it whole at these counts: it does not shrink again
  if (p->pod_sets.empty())
    p->min_pods = p->pods;
  else {
    for (auto& ps : p->pod_sets) ps.min_count = ps.count;
    quota::total_pod_sets(*p);
  }
  jr.partial = std::move(p);
}

inline std::vector<std::size_t> simulator_impl::placement_victims(std::size_t idx) {
  const auto& jr = jobs_[idx];
  std::vector<std::size_t> cand;
  // candidates are marked in victim_seen_ with a round of their own
  auto& allowed = victim_seen_;
  if (allowed.size() < jobs_.size()) allowed.resize(jobs_.size(), 0);
  const std::uint64_t round = ++victim_round_;
  bool any = false;
  if (engine_.has_node_rule()) {
    auto& vs = victims_buf_;
    vs.clear();
    engine_.node_candidates(jr.j, vs);
    for (const auto& v : vs) {
      const std::size_t vi = job_index(v.job_id);
      if (vi == npos || vi == idx || jobs_[vi].state != job_state::running || !jobs_[vi].spec->preemptible) continue;
      allowed[vi] = round;
      any = true;
    }
  } else {
    for (const auto& [prio, v] : running_by_priority_) {
      if (prio >= jr.spec->priority) break;
      if (jobs_[v].spec->preemptible) {
        allowed[v] = round;
        any = true;
      }
    }
  }
  if (!any) return cand;
  auto less_important = [&](std::size_t a, std::size_t b) {
    if (jobs_[a].spec->priority != jobs_[b].spec->priority) return jobs_[a].spec->priority < jobs_[b].spec->priority;
    if (jobs_[a].last_start != jobs_[b].last_start) return jobs_[a].last_start > jobs_[b].last_start;
    return a < b;
  };
  // what the job needs on one node: a pod, or (with shared allocations) all
  // its pods and the allocations not made yet, on their node when made
  resource_vector need = jr.spec->pod_sets.empty() ? jr.spec->per_pod : jr.spec->pod_sets.front().per_pod;
  std::size_t only = npos;
  if (!jr.shared.empty()) {
    need = jr.j.request;
    for (const auto sh : jr.shared) {
      if (shared_[sh].node == npos)
        need.add_in_place(shared_[sh].amount);
      else if (only == npos)
        only = shared_[sh].node;
      else if (only != shared_[sh].node)
        return cand;  // on two nodes: nothing makes room
    }
  } else if (jr.spec->pods != 1) {
    for (auto v : running_)
      if (allowed[v] == round) cand.push_back(v);
    std::sort(cand.begin(), cand.end(), less_important);
    return cand;
  }
  const auto on_node = [&](std::size_t v, std::size_t n) {
    resource_vector r;
    each_placed(jobs_[v], jobs_[v].placement, [&](std::size_t m, const resource_vector& per_pod, std::int32_t k) {
      if (m == n)
        for (std::int32_t p = 0; p < k; ++p) r.add_in_place(per_pod);
    });
    return r;
  };
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!nodes_[n].alive || !selector_ok(nodes_[n], *jr.spec) || (only != npos && n != only)) continue;
    resource_vector potential = nodes_[n].free;
    std::vector<std::size_t> here;
    std::optional<std::size_t> prev;
    for (auto v : node_jobs_[n])
      if (v != prev && allowed[v] == round) {
        prev = v;
        here.push_back(v);
        potential.add_in_place(on_node(v, n));
      }
    if (here.empty() || !fits(need, potential)) continue;
    // reprieve the most important first: each stays when the pod still fits without it
    std::sort(here.begin(), here.end(), [&](std::size_t a, std::size_t b) { return less_important(b, a); });
    for (auto v : here) {
      resource_vector without = potential;
      without.sub_in_place(on_node(v, n));
      if (fits(need, without))
        potential = std::move(without);  // not needed: reprieved
      else
        cand.push_back(v);
    }
    std::sort(cand.begin(), cand.end(), less_important);
    return cand;
  }
  return cand;
}

inline bool simulator_impl::try_preempt_for(std::size_t idx) {
  auto& jr = jobs_[idx];
  // buffers kept across calls (a trial runs for every denied head of a full pass)
  auto& vs = victims_buf_;
  vs.clear();
  // Each search asks something new, so none is kept for another: attempt()
  // skips the rest of a refused shape for the pass (and of its coarse shape
  // when no refusal read user or groups), the jobs of other shapes differ in
  // a field some model's victims() reads (queue, request, priority, creation
  // time, id), Kueue's head_denied may change its answer within the pass,
  // and a later pass that asks the same job again (a full one) follows a
  // release or a clock step.
  engine_.victims(jr.j, vs);
  auto& cand = cand_buf_;
  cand.clear();
  if (victim_seen_.size() < jobs_.size()) victim_seen_.resize(jobs_.size(), 0);
  ++victim_round_;
  for (const auto& v : vs) {
    const std::size_t vi = job_index(v.job_id);
    if (vi == npos) continue;
    if (vi == idx || jobs_[vi].state != job_state::running || !jobs_[vi].spec->preemptible) continue;
    if (victim_seen_[vi] != victim_round_) {
      victim_seen_[vi] = victim_round_;
      cand.push_back(vi);
    }
  }
  const bool by_node = cand.empty() && jr.last_reason == "host.no_node_fits";
  if (by_node) cand = placement_victims(idx);
  if (cand.empty()) return false;
  // why each candidate goes: the first victim entry naming it (the engine's,
  // or its node-level rule's), else kube-scheduler's rule (lower priority)
  const auto named = [&](std::size_t vi) -> const victim* {
    if (by_node && !engine_.has_node_rule()) return nullptr;
    for (const auto& v : vs)
      if (v.job_id == jobs_[vi].j.id) return &v;
    return nullptr;
  };
  const std::string cause = jr.last_reason;  // the preemptor's denial: what the victims make room for
  // remove victims one at a time until the job fits
  std::vector<std::pair<std::size_t, std::vector<std::pair<std::size_t, std::int32_t>>>> removed;
  removed.reserve(cand.size());
  for (auto vi : cand) {
    removed.emplace_back(vi, jobs_[vi].placement);
    engine_.release(jobs_[vi].j.id);
    // a victim of the trial waits again (as it will if the trial succeeds):
    // its demand stays, so putting it back restores every model exactly
    engine_.pending_added(jobs_[vi].j);
    unplace(vi);
    // the job fits now: allowed (at the pods a partial admission would run) and placed
    bool fits_now = engine_.check(jr.j, counts_buf_).allowed();
    if (fits_now) {
      if (!counts_buf_.empty()) set_partial(jr, counts_buf_);
      fits_now = place(idx);
      if (fits_now) unplace(idx);
      jr.partial.reset();
    }
    if (fits_now) {
      // commit: the removed jobs are preempted for real (already out of the engine and nodes)
      for (auto& [ri, pl] : removed) {
        retire(ri, job_state::requeued);
        jobs_[ri].last_reason = "preempted for " + jr.j.id;
        jobs_[ri].last_refusals.clear();
        preemption_marks_.back().preemptor = idx;
        preemption_marks_.back().cause = cause;
        if (const victim* v = named(ri))
          log_eviction(ri, idx, v->model, v->rule, v->entity, v->upstream_reason);
        else
          log_eviction(ri, idx, "host", "lower_priority", {});
      }
      return try_admit(idx);
    }
  }
  // never fitted: put everything back; a model that no longer admits a
  // victim as it was (its state moved on) makes it a preemption after all
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) {
    replace_on(it->first, it->second);
    if (engine_.admit(running_job(jobs_[it->first])).denied()) {
      unplace(it->first);
      retire(it->first, job_state::requeued);
      jobs_[it->first].last_reason = "preempted: not re-admitted after a failed preemption for " + jr.j.id;
      jobs_[it->first].last_refusals.clear();
      log_eviction(it->first, idx, "host", "not_readmitted", {});
      preemption_marks_.back().preemptor = idx;
      preemption_marks_.back().cause = "not re-admitted after a failed preemption (" + cause + ")";
    }
  }
  return false;
}

inline std::size_t simulator_impl::job_index(const std::string& id) const {
  const auto it = index_.find(id);
  return it == index_.end() ? npos : it->second;
}

inline void simulator_impl::count_pending(std::size_t idx, bool add) {
  auto& jr = jobs_[idx];
  const amount v = jr.j.request.get(chart_);
  jr.ts->pending = add ? quota::detail::checked_add(jr.ts->pending, v) : jr.ts->pending - v;
  pending_demand_ = add ? quota::detail::checked_add(pending_demand_, v) : pending_demand_ - v;
}

inline void simulator_impl::pend(std::size_t idx) {
  jobs_[idx].pended_pass = pass_;
  pending_.insert(pending_key(idx));
  count_pending(idx, true);
  const std::size_t sh = shape_ids_[idx].shape;
  if (by_shape_.size() <= sh) {
    by_shape_.resize(sh + 1);
    live_pos_.resize(sh + 1, npos);
  }
  auto& keys = by_shape_[sh];
  if (keys.empty()) {
    live_pos_[sh] = live_shapes_.size();
    live_shapes_.push_back(sh);
  }
  keys.insert(pending_key(idx));
}

inline void simulator_impl::unpend(std::size_t idx) {
  if (pending_.erase(pending_key(idx)) == 1) count_pending(idx, false);
  const std::size_t sh = shape_ids_[idx].shape;
  if (sh >= by_shape_.size()) return;
  auto& keys = by_shape_[sh];
  keys.erase(pending_key(idx));
  if (keys.empty() && live_pos_[sh] != npos) {  // swap-remove from the list of shapes with pending jobs
    const std::size_t pos = live_pos_[sh], last = live_shapes_.back();
    live_shapes_[pos] = last;
    live_pos_[last] = pos;
    live_shapes_.pop_back();
    live_pos_[sh] = npos;
  }
}

inline std::pair<const std::string*, const simulator_impl::refusals*> simulator_impl::why_of(std::size_t idx) const {
  static const refusals none;
  const auto& jr = jobs_[idx];
  if (jr.state != job_state::pending && jr.state != job_state::requeued) return {&jr.last_reason, &jr.last_refusals};
  // only a pass that began after the job was pending speaks for it (not an
  // identical job's denial before this one was submitted)
  std::uint64_t latest = std::max(jr.tried_pass, jr.pended_pass);
  std::pair<const std::string*, const refusals*> why{&jr.last_reason, &jr.last_refusals};
  if (const std::size_t shape = shape_ids_[idx].shape; shape < shape_pass_.size() && shape_pass_[shape] > latest) {
    latest = shape_pass_[shape];
    const why_rec& w = whys_[shape_why_[shape]];
    why = {&w.text, &w.list};
  }
  if (const std::size_t q = queue_of_[idx]; q < qblock_pass_.size() && qblock_pass_[q] > latest)
    why = {&qblock_reason_[q], &none};
  return why;
}

inline std::vector<simulator_impl::refusal> simulator_impl::refusals_of(std::size_t idx) const {
  const auto [text, list] = why_of(idx);
  std::vector<refusal> out;
  if (!list->empty() || text->empty()) {
    for (const reason& x : *list) {
      out.push_back({std::string(x.model), std::string(x.rule), x.entity, {}});
      reason_full_text(x, out.back().text);
    }
    return out;
  }
  // a host reason: "host.rule [entity]", or a preemption's
  refusal r{"host", {}, {}, *text};
  const std::string& t = *text;
  const auto after = [&](std::string_view lead) { return t.substr(lead.size()); };
  if (t.rfind("host.", 0) == 0) {
    const std::size_t open = t.find(" [");
    r.rule = t.substr(5, open == std::string::npos ? std::string::npos : open - 5);
    if (open != std::string::npos && t.back() == ']') r.entity = t.substr(open + 2, t.size() - open - 3);
  } else if (constexpr std::string_view p = "preempted for "; t.rfind(p, 0) == 0) {
    r.rule = "preempted";
    r.entity = after(p);
  } else if (constexpr std::string_view q = "preempted: not re-admitted after a failed preemption for ";
             t.rfind(q, 0) == 0) {
    r.rule = "not_readmitted";
    r.entity = after(q);
  } else if (t.rfind("shrink:", 0) == 0) {
    r.rule = "shrink";
  }
  out.push_back(std::move(r));
  return out;
}

inline void simulator_impl::log_eviction(std::size_t victim_idx, std::size_t preemptor, std::string_view model,
                                         std::string_view rule, std::string_view entity,
                                         std::string_view upstream_reason) {
  evictions_.push_back(eviction{now_, victim_idx, preemptor, std::string(model), std::string(rule), std::string(entity),
                                std::string(upstream_reason)});
}

inline std::vector<const simulator_impl::eviction*> simulator_impl::evictions_in_order() const {
  std::vector<const eviction*> out;
  out.reserve(evictions_.size());
  for (const auto& e : evictions_) out.push_back(&e);
  // logged in time order already; within an instant, the victims' file order
  std::stable_sort(out.begin(), out.end(), [&](const eviction* a, const eviction* b) {
    if (a->t != b->t) return a->t < b->t;
    return jobs_[a->victim].spec->entry < jobs_[b->victim].spec->entry;
  });
  return out;
}

inline std::string simulator_impl::eviction_text(const eviction& e) const {
  std::string s = jobs_[e.victim].j.id + " at " + format_duration(e.t);
  if (e.preemptor != npos) s += " by " + jobs_[e.preemptor].j.id;
  s += " (" + e.model + "." + e.rule;
  if (!e.entity.empty()) s += " [" + e.entity + "]";
  if (!e.upstream_reason.empty()) s += ", " + e.upstream_reason;
  return s + ")";
}

inline void simulator_impl::block_queue(std::size_t q, std::size_t head) {
  if (qblock_pass_.size() < queue_count_) {
    qblock_pass_.resize(queue_count_, 0);
    qblock_reason_.resize(queue_count_);
  }
  qblock_pass_[q] = pass_;
  qblock_reason_[q].assign("host.behind_queue_head [").append(jobs_[head].j.id).append("]");
}

inline std::uint32_t simulator_impl::new_why(const std::string& text, const refusals& list) {
  std::uint32_t w;
  if (!free_whys_.empty()) {
    w = free_whys_.back();
    free_whys_.pop_back();
  } else {
    w = static_cast<std::uint32_t>(whys_.size());
    whys_.emplace_back();
  }
  whys_[w].text = text;
  whys_[w].list = list;
  return w;
}

inline void simulator_impl::hold_why(std::uint32_t& slot, std::uint32_t w) {
  ++whys_[w].holders;
  if (slot != no_why && --whys_[slot].holders == 0) free_whys_.push_back(slot);
  slot = w;
}

inline simulator_impl::offer simulator_impl::attempt(std::size_t idx) {
  const auto [shape, coarse_shape] = shape_ids_[idx];
  if (shape_fixed_[shape]) return offer::skipped;  // denied for good: its shape's reason stands
  if (coarse_pass_[coarse_shape] == pass_) {
    // a job differing only in user/groups was denied in this pass by models that do not read them
    shape_pass_[shape] = pass_;
    hold_why(shape_why_[shape], coarse_why_[coarse_shape]);
    return offer::skipped;
  }
  auto& jr = jobs_[idx];
  // the reason it waited so far (an identical job's, its queue head's) becomes its own
  // (its refusals need no copy: try_admit below sets or clears them)
  if (const auto why = why_of(idx); why.first != &jr.last_reason) jr.last_reason = *why.first;
  jr.tried_pass = pass_;
  coarse_denied_ = false;
  bool ok = try_admit(idx);
  const bool coarse = !ok && coarse_denied_;
  if (!ok && sc_.preemption) ok = try_preempt_for(idx);
  if (ok) {
    unpend(idx);
  } else {
    shape_pass_[shape] = pass_;
    const std::uint32_t w = new_why(jr.last_reason, jr.last_refusals);
    hold_why(shape_why_[shape], w);
    if (coarse) {
      coarse_pass_[coarse_shape] = pass_;
      hold_why(coarse_why_[coarse_shape], w);
    }
  }
  return ok ? offer::admitted : offer::refused;
}

inline void simulator_impl::schedule(bool full) {
  ++pass_;
  engine_.begin_cycle();
  struct cycle_end {
    engine& e;
    ~cycle_end() { e.end_cycle(); }
  } const cycle_guard{engine_};
  if (shape_pass_.size() < shapes_.size()) {
    shape_pass_.resize(shapes_.size(), 0);
    shape_why_.resize(shapes_.size(), no_why);
    shape_fixed_.resize(shapes_.size(), false);
  }
  if (coarse_pass_.size() < coarse_shapes_.size()) {
    coarse_pass_.resize(coarse_shapes_.size(), 0);
    coarse_why_.resize(coarse_shapes_.size(), no_why);
  }
  // a binary heap per queue in buffers kept between passes (keys are unique,
  // so the order is the same as a sorted set's)
  if (qheads_.size() < queue_count_) qheads_.resize(queue_count_);
  const auto later = [](const pkey& a, const pkey& b) { return b < a; };
  active_.clear();
  const auto push = [&](const pkey& k) {
    auto& h = qheads_[queue_of_[k.idx]];
    if (h.empty()) active_.push_back(queue_of_[k.idx]);
    h.push_back(k);
    std::push_heap(h.begin(), h.end(), later);
  };
  if (full) {
    // every live shape's head: gathered, then each queue's heap built at once
    for (const std::size_t shape : live_shapes_)
      if (!shape_fixed_[shape]) {
        const pkey& k = *by_shape_[shape].begin();
        auto& h = qheads_[queue_of_[k.idx]];
        if (h.empty()) active_.push_back(queue_of_[k.idx]);
        h.push_back(k);
      }
    for (const std::size_t q : active_) std::make_heap(qheads_[q].begin(), qheads_[q].end(), later);
  } else {
    for (const auto idx : arrivals_) {
      if (jobs_[idx].state != job_state::pending) continue;
      // behind a StrictFIFO head that waits, a new job waits too
      if (ordered_) {
        const auto head = pending_.lower_bound(pkey{queue_first_rank_[queue_of_[idx]], 0});
        if (head != pending_.end() && head->idx != idx && queue_of_[head->idx] == queue_of_[idx] &&
            engine_.head_blocks_queue(jobs_[head->idx].j)) {
          block_queue(queue_of_[idx], head->idx);
          continue;
        }
      }
      push(pending_key(idx));
    }
  }
  while (!active_.empty()) {
    // the heads in rank order (equals go by rank), then the ordering model's pick
    std::size_t best = 0;
    if (active_.size() > 1) {
      std::sort(active_.begin(), active_.end(),
                [&](std::size_t a, std::size_t b) { return qheads_[a].front() < qheads_[b].front(); });
      head_jobs_.clear();
      for (const std::size_t q : active_) head_jobs_.push_back(&jobs_[qheads_[q].front().idx].j);
      best = engine_.select_head(head_jobs_);
    }
    auto& h = qheads_[active_[best]];
    std::pop_heap(h.begin(), h.end(), later);
    const pkey k = h.back();
    h.pop_back();
    const auto drop_queue = [&] {
      h.clear();
      active_[best] = active_.back();
      active_.pop_back();
    };
    if (h.empty()) drop_queue();
    const auto& jr = jobs_[k.idx];
    const std::size_t shape = shape_ids_[k.idx].shape;
    if (!full && (jr.state != job_state::pending || shape_pass_[shape] == pass_)) continue;
    if (const offer o = attempt(k.idx); o != offer::admitted) {  // the rest of this shape is skipped for this pass
      if (o == offer::refused) engine_.head_denied(jr.j);
      // a StrictFIFO head holds back the rest of its queue
      if (!h.empty() && ordered_ && engine_.head_blocks_queue(jr.j)) {
        block_queue(active_[best], k.idx);
        drop_queue();
      }
      continue;
    }
    if (!full || shape >= by_shape_.size()) continue;
    const auto& keys = by_shape_[shape];
    for (auto next = keys.upper_bound(k); next != keys.end(); ++next)
      if (jobs_[next->idx].pended_pass != pass_) {
        push(*next);
        break;
      }
  }
}

}  // namespace quota::sim::detail
