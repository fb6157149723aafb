// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, events: node changes, deletions, reloads of a model's
// configuration (tools/quota-sim/reload.hpp) and quota shrink.
// Members of detail::simulator_impl (simulator_impl.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "simulator_impl.hpp"

namespace quota::sim::detail {

inline void simulator_impl::apply_event(const event_spec& ev, std::vector<failed_expectation>& failures) {
  if (ev.refused) return;  // refused at load time, as its expect_error says
  if (!ev.expect_error.empty()) {
    // a reload that must be refused now: all or nothing, so a refusal changes nothing
    std::vector<diagnostic> got;
    try {
      apply_event(ev);
    } catch (const validation_error& e) {
      // at the event's path; the message names the item (Workload/a-1: ...)
      for (const auto& p : e.problems()) got.push_back({ev.path, p.path + ": " + p.message});
    } catch (const error& e) {
      got.push_back({ev.path, e.what()});
    }
    std::vector<std::string> miss;
    if (got.empty()) {
      failures.push_back({ev.path + ".expect_error", now_, "the reload to be refused", "it was applied"});
    } else if (!settle_expected_errors(ev.expect_error, got, miss)) {
      std::string what;
      for (const auto& m : miss) what += (what.empty() ? "" : "; ") + m;
      failures.push_back({ev.path + ".expect_error", now_, "the refusal it names", what});
    }
    return;
  }
  apply_event(ev);
}

inline void simulator_impl::tell_capacity(const event_spec& ev, const resource_vector& total) {
  try {
    engine_.set_cluster_capacity(total);
  } catch (const error& e) {
    // which policy refused: asked again of a copy of each (the engine has undone the others)
    std::string who = "a model";
    for (std::size_t k = 0; k < engine_.model_count(); ++k) {
      if (!engine_.model(k).divides_capacity()) continue;
      any_policy probe = engine_.model(k);
      try {
        probe.set_cluster_capacity(total);
      } catch (const error&) {
        who = "policies[" + std::to_string(k) + "] (" + sc_.policies.at(k).model + ")";
        break;
      }
    }
    throw state_error(error_id::state_conflict, ev.path + ": " + ev.type + " at " + format_duration(now_) + ": " + who +
                                                    " cannot take the new cluster total: " + e.what());
  }
}

inline void simulator_impl::apply_event(const event_spec& ev) {
  if (ev.type == "node_add") {
    node_spec n;
    n.name = ev.body["node"]["name"].get<std::string>();
    n.allocatable = parse_resource_list(ev.body["node"].value("allocatable", json::object()), sc_.registry,
                                        ev.path + ".node.allocatable");
    if (ev.body["node"].contains("labels"))
      for (auto it = ev.body["node"]["labels"].begin(); it != ev.body["node"]["labels"].end(); ++it)
        n.labels[it.key()] = it.value().get<std::string>();
    resource_vector total = capacity_;
    total.add_in_place(n.allocatable);
    tell_capacity(ev, total);
    capacity_ = std::move(total);
    if (ev.body["node"].contains("gpu")) {
      n.gpu.count = ev.body["node"]["gpu"].value("count", 0);
      n.gpu.model = ev.body["node"]["gpu"].value("model", "");
    }
    nodes_.push_back(
        node_state{n, n.allocatable, true, std::vector<std::int32_t>(static_cast<std::size_t>(n.gpu.count), 1000)});
    node_jobs_.emplace_back();
    tree_build();
    freed_ = true;
  } else if (ev.type == "node_remove") {
    const auto name = ev.body["name"].get<std::string>();
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (!nodes_[n].alive || nodes_[n].spec.name != name) continue;
      resource_vector total = capacity_;
      total.sub_in_place(nodes_[n].spec.allocatable);
      tell_capacity(ev, total);  // before anything changes: a refused total stops the run here
      // jobs with pods there are stopped and go back to pending (not counted as preemptions)
      std::vector<std::size_t> hit;
      for (auto idx : running_)
        for (const auto& pl : jobs_[idx].placement)
          if (pl.first == n) {
            hit.push_back(idx);  // once, though its pods may sit in several runs on the node
            break;
          }
      for (auto idx : hit) {
        stop(idx, job_state::requeued);
        --preemptions_;
        --tenants_[jobs_[idx].tenant].preempted;
        --jobs_[idx].preempted;  // the job's own count too: a node removal is not a preemption
        preemption_marks_.pop_back();
        jobs_[idx].last_reason = "host.node_removed";
        jobs_[idx].last_refusals.clear();
        log_eviction(idx, npos, "host", "node_removed", name);
      }
      nodes_[n].alive = false;
      tree_update(n);
      capacity_ = std::move(total);
    }
  } else if (ev.type == "delete") {
    const auto idx = index_.at(ev.body["job"].get<std::string>());
    auto& jr = jobs_[idx];
    if (jr.state == job_state::running) stop(idx, job_state::deleted);
    if (jr.state == job_state::pending || jr.state == job_state::requeued) {
      unpend(idx);
      engine_.pending_withdrawn(jr.j.id);
      jr.state = job_state::deleted;
      // less demand (or, Volcano capacity upstream, no more job in an inner
      // queue) may let any pending job in: retry them all
      freed_ = true;
    }
    if (jr.state == job_state::waiting) jr.state = job_state::deleted;
  } else if (ev.type == "reload") {
    reload_policy(ev);
  }
}

inline std::vector<std::size_t> simulator_impl::running_by_start() const {
  std::vector<std::size_t> out(running_.begin(), running_.end());
  std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return jobs_[a].last_start != jobs_[b].last_start ? jobs_[a].last_start < jobs_[b].last_start : a < b;
  });
  return out;
}

inline model_instance simulator_impl::fresh_model(const policy_spec& spec) {
  // the body's checks of the jobs ran at load time; the jobs the replay holds
  // now are checked against the model itself (reload_policy)
  sc_.check_jobs_from_ms = sc_.check_jobs_until_ms = 0;
  model_instance m = model_kinds().at(spec.model).make(spec, sc_);
  sc_.check_jobs_until_ms = std::numeric_limits<std::int64_t>::max();
  // a job waiting now must be one the new configuration can hold (its queue kept)
  for (const auto& jr : jobs_) {
    if (jr.state != job_state::pending && jr.state != job_state::requeued) continue;
    try {
      m.policy.pending_added(jr.j);
      (void)m.policy.check(jr.j);
    } catch (const error& e) {
      throw state_error(error_id::state_conflict, spec.path + ": " + spec.model + " at " + format_duration(now_) +
                                                      ": waiting job '" + jr.j.id +
                                                      "' cannot be held by the new configuration: " + e.what());
    }
  }
  return m;
}

inline std::vector<std::size_t> simulator_impl::shrink_victims(std::size_t i) {
  model_instance m = fresh_model(policy_now_.at(i));
  std::vector<std::size_t> order = running_by_start();
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return jobs_[a].spec->priority > jobs_[b].spec->priority; });
  std::vector<std::size_t> out;
  for (auto idx : order) {
    const job& rj = running_job(jobs_[idx]);  // as the models hold it (a partial admission's pods)
    if (m.policy.check(rj).denied()) {
      out.push_back(idx);
      continue;
    }
    try {
      m.policy.commit(rj);
    } catch (const commit_denied_error&) {
      out.push_back(idx);
    }
  }
  std::reverse(out.begin(), out.end());  // eviction order: lowest priority first, newest first
  return out;
}

inline void simulator_impl::reload_policy(const event_spec& ev) {
  const std::size_t i = ev.policy;
  if (policy_now_.size() < sc_.policies.size()) policy_now_ = sc_.policies;
  policy_spec spec{sc_.policies[i].model, ev.policy_body, ev.path};
  model_instance m = fresh_model(spec);
  // built from the scenario's nodes: it divides the cluster as it is now
  if (!m.reload_into && m.policy.divides_capacity()) {
    try {
      m.policy.set_cluster_capacity(capacity_);
    } catch (const error& e) {
      throw state_error(error_id::state_conflict,
                        ev.path + ": reload of " + spec.model + " at " + format_duration(now_) +
                            ": the new entry cannot take the cluster's total now: " + e.what());
    }
  }
  if (m.reload_into) {
    m.reload_into(engine_.model(i));
  } else {
    for (auto idx : running_by_start()) {
      try {
        m.policy.commit(running_job(jobs_[idx]));
      } catch (const error& e) {
        throw state_error(error_id::state_conflict, ev.path + ": reload of " + spec.model + " at " +
                                                        format_duration(now_) + ": running job '" + jobs_[idx].j.id +
                                                        "' cannot be kept in the new model: " + e.what());
      }
    }
    any_policy before = std::move(engine_.model(i));
    engine_.model(i) = std::move(m.policy);
    try {
      engine_.charges_into(i);  // what a charge model (KAI claims) charges the queues, in the new model too
    } catch (const error& e) {
      engine_.model(i) = std::move(before);
      throw state_error(error_id::state_conflict,
                        ev.path + ": reload of " + spec.model + " at " + format_duration(now_) +
                            ": the charges held now cannot be kept in the new model: " + e.what());
    }
  }
  models_[i].introspect = std::move(m.introspect);
  models_[i].query = std::move(m.query);
  policy_now_[i] = std::move(spec);
  if (ordered_ && engine_.order_model() == i) regroup_pending();  // its queues may differ now
  // a limit a request alone exceeded may have been raised: no shape stays denied for good
  std::fill(shape_fixed_.begin(), shape_fixed_.end(), false);
  freed_ = true;  // a raised quota may admit pending jobs: a full pass
  ++reloads_;
  const shrink_option so = i < sc_.shrink.size() ? sc_.shrink[i] : shrink_option{};
  if (!so.evict) return;
  // evict_after_grace: over quota now -> deadline (the first one stands);
  // fits -> any deadline is cancelled
  std::int64_t at = 0;
  if (shrink_victims(i).empty())
    shrink_at_.erase(i);
  else if (!shrink_at_.count(i))
    shrink_at_[i] = quota::detail::try_add(now_, so.grace_ms, at) ? at : end_of_time;
}

inline bool simulator_impl::shrink_due() {
  bool any = false;
  for (auto it = shrink_at_.begin(); it != shrink_at_.end();) {
    if (it->second != now_) {
      ++it;
      continue;
    }
    const std::size_t i = it->first;
    it = shrink_at_.erase(it);
    for (auto idx : shrink_victims(i)) {
      stop(idx, job_state::requeued);
      jobs_[idx].last_reason = "shrink: evicted after the grace period; policies[" + std::to_string(i) + "] (" +
                               policy_now_[i].model + ") was lowered below its usage";
      jobs_[idx].last_refusals.clear();
      preemption_marks_.back().cause = jobs_[idx].last_reason;
      log_eviction(idx, npos, policy_now_[i].model, "shrink", {});
      shrink_log_.push_back(json{{"at_ms", now_},
                                 {"job", jobs_[idx].j.id},
                                 {"policy", i},
                                 {"model", policy_now_[i].model},
                                 {"reason", "shrink"}});
      any = true;
    }
  }
  return any;
}

}  // namespace quota::sim::detail
