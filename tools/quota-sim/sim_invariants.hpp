// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, the invariants checked after every instant (pods fit
// their nodes, no GPU device shared beyond 1000 thousandths, every job ran or
// has a pending reason) and the scenario's expectations.
// Members of detail::simulator_impl (simulator_impl.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <quota/explain.hpp>

#include "simulator_impl.hpp"

namespace quota::sim::detail {

inline void simulator_impl::check_capacity(std::vector<failed_expectation>& out) const {
  // Recomputed from the running jobs alone, at every event of a checked
  // replay: dense node x resource sums in scratch kept between events.
  const std::size_t nr = sc_.registry.size(), nn = nodes_.size();
  auto& used = inv_used_;
  auto& dev = inv_dev_;
  used.assign(nn * nr, 0);
  dev.resize(nn);
  for (std::size_t n = 0; n < nn; ++n) dev[n].assign(nodes_[n].device_free.size(), 0);
  inv_pods_.assign(nn, 0);
  for (const auto idx : running_) {
    const auto& jr = jobs_[idx];
    if (jr.state != job_state::running) {
      out.push_back(
          {"invariant", now_, "job " + jr.j.id + " in the running set runs", std::string(state_name(jr.state))});
      continue;
    }
    std::int32_t pods = 0;
    for (const auto& [n, k] : jr.placement) {
      pods += k;
      if (!nodes_[n].alive)
        out.push_back({"invariant", now_, "job " + jr.j.id + " runs only on alive nodes",
                       "pods on removed node " + nodes_[n].spec.name});
      if (n < nn) inv_pods_[n] += static_cast<std::size_t>(k);
    }
    each_placed(jr, jr.placement, [&](std::size_t n, const resource_vector& per_pod, std::int32_t k) {
      amount* row = used.data() + static_cast<std::size_t>(n) * nr;
      for (const auto& e : per_pod)
        row[e.id] = quota::detail::checked_add(row[e.id], quota::detail::checked_mul<amount>(e.value, k));
    });
    // the admitted pods run, no more and no fewer (a partial admission runs its counts)
    const std::int32_t want = running_job(jr).pods;
    if (pods != want)
      out.push_back({"invariant", now_, "job " + jr.j.id + " runs " + std::to_string(want) + " pods",
                     std::to_string(pods) + " placed"});
    for (std::size_t i = 0; i < jr.devices.size(); ++i) {
      const auto n = jr.device_nodes[i], d = jr.devices[i];
      if (n < dev.size() && d < dev[n].size()) dev[n][d] += jr.spec->gpu.milli;
    }
  }
  for (const auto& st : shared_) add_shared_use(st, used, dev, nr);
  // node specs never change (nodes are only added): their dense allocatable is kept
  if (inv_alloc_.size() != nn * nr) {
    inv_alloc_.assign(nn * nr, 0);
    for (std::size_t n = 0; n < nn; ++n)
      for (const auto& e : nodes_[n].spec.allocatable) inv_alloc_[n * nr + e.id] = e.value;
  }
  for (std::size_t n = 0; n < nn; ++n) {
    // the pods the node lists are those of the running jobs placed on it
    if (node_jobs_[n].size() != inv_pods_[n])
      out.push_back({"invariant", now_,
                     "node " + nodes_[n].spec.name + " lists the " + std::to_string(inv_pods_[n]) +
                         " pods of the running jobs placed on it",
                     std::to_string(node_jobs_[n].size()) + " pods listed"});
    for (const auto idx : node_jobs_[n])
      if (jobs_[idx].state != job_state::running) {
        out.push_back({"invariant", now_,
                       "job " + jobs_[idx].j.id + " (" + state_name(jobs_[idx].state) + ") holds no pods on node " +
                           nodes_[n].spec.name,
                       "a pod listed there"});
        break;
      }
    const amount* row = used.data() + n * nr;
    const amount* cap = inv_alloc_.data() + n * nr;
    const auto& alloc = nodes_[n].spec.allocatable;
    bool over = false;
    for (std::size_t r = 0; r < nr; ++r) over |= row[r] > cap[r];  // absent: 0
    if (over) {
      resource_vector u;
      for (std::size_t r = 0; r < nr; ++r)
        if (row[r] != 0) u.set(static_cast<resource_id>(r), row[r]);
      out.push_back({"invariant", now_,
                     "node " + nodes_[n].spec.name + ": allocated <= allocatable " +
                         resource_list_to_json(alloc, sc_.registry).dump(),
                     "allocated " + resource_list_to_json(u, sc_.registry).dump()});
    }
    for (std::size_t d = 0; d < dev[n].size(); ++d)
      if (dev[n][d] > 1000 || dev[n][d] + nodes_[n].device_free[d] != 1000)
        out.push_back({"invariant", now_,
                       "node " + nodes_[n].spec.name + " GPU " + std::to_string(d) +
                           ": held <= 1000 thousandths and held + free == 1000",
                       "held " + std::to_string(dev[n][d]) + ", free " + std::to_string(nodes_[n].device_free[d])});
  }
}

inline void simulator_impl::add_shared_use(const shared_state& st, std::vector<amount>& used,
                                           std::vector<std::vector<std::int64_t>>& dev, std::size_t nr) {
  if (st.node == npos) return;
  amount* row = used.data() + st.node * nr;
  for (const auto& e : st.amount) row[e.id] = quota::detail::checked_add(row[e.id], e.value);
  for (const auto d : st.devices)
    if (d < dev[st.node].size()) dev[st.node][d] += 1000;
}

inline void simulator_impl::check_outcomes(std::vector<failed_expectation>& out) const {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const auto& jr = jobs_[i];
    if (jr.state != job_state::running && (!jr.placement.empty() || !jr.devices.empty()))
      out.push_back(
          {"invariant", end_ms_, "job " + jr.j.id + " (" + state_name(jr.state) + ") holds no pods or devices",
           std::to_string(jr.placement.size()) + " placements, " + std::to_string(jr.devices.size()) + " devices"});
    if ((jr.state == job_state::running) != (running_.count(i) == 1))
      out.push_back({"invariant", end_ms_, "job " + jr.j.id + " is in the running set exactly when it runs",
                     std::string(state_name(jr.state)) + (running_.count(i) ? ", in the set" : ", not in the set")});
    if (jr.first_start > jr.spec->submit_ms && jr.wait_reason.empty())
      out.push_back({"invariant", end_ms_, "job " + jr.j.id + " that waited says why",
                     "started " + format_duration(jr.first_start - jr.spec->submit_ms) + " after its submission"});
    if (jr.state == job_state::waiting || jr.state == job_state::deleted || jr.first_start >= 0) continue;
    if (reason_of(i).empty())
      out.push_back({"invariant", end_ms_, "job " + jr.j.id + " ran or has a pending reason",
                     std::string(state_name(jr.state)) + " without a reason"});
  }
}

inline void simulator_impl::check(const expectation& x, std::vector<failed_expectation>& out) {
  const auto& b = x.body;
  auto fail = [&](std::string expected, std::string actual) {
    out.push_back({x.path, x.at_ms == end_of_time ? now_ : x.at_ms, std::move(expected), std::move(actual)});
  };
  if (b.contains("job")) {
    const auto& jr = jobs_[index_.at(b["job"].get<std::string>())];
    if (b.contains("state")) {
      const std::string want = b["state"].get<std::string>();
      std::string have = state_name(jr.state);
      if (want == "preempted") have = jr.preempted > 0 ? "preempted" : have;
      const std::string& why = reason_of(index_.at(jr.j.id));
      if (have != want) fail("job " + jr.j.id + " " + want, have + (why.empty() ? "" : " (" + why + ")"));
    }
    if (b.contains("node")) {
      const std::string want = b["node"].get<std::string>();
      std::string have;
      for (const auto& [n, k] : jr.placement)
        have += (have.empty() ? "" : ", ") + nodes_[n].spec.name + (k > 1 ? " x" + std::to_string(k) : "");
      if (jr.placement.size() != 1 || nodes_[jr.placement.front().first].spec.name != want)
        fail("job " + jr.j.id + " on node " + want, have.empty() ? "on no node" : "on " + have);
    }
    if (b.contains("pods")) {
      // the pods the job runs now, in total or per pod set (0 when it does not run)
      const bool runs = jr.state == job_state::running;
      json have;
      if (b["pods"].is_array()) {
        have = json::array();
        const job& rj = running_job(jr);
        if (rj.pod_sets.empty())
          have.push_back(runs ? rj.pods : 0);
        else
          for (const auto& ps : rj.pod_sets) have.push_back(runs ? ps.count : 0);
      } else {
        have = runs ? running_job(jr).pods : 0;
      }
      if (have != b["pods"]) fail("job " + jr.j.id + " runs " + b["pods"].dump() + " pods", have.dump());
    }
    if (b.contains("reason") && b["reason"].is_string()) {
      const std::string want = b["reason"].get<std::string>();
      const std::string& why = reason_of(index_.at(jr.j.id));
      if (why.find(want) == std::string::npos)
        fail("job " + jr.j.id + " reason containing '" + want + "'", "'" + why + "'");
    } else if (b.contains("reason")) {
      // one of its refusals now has every field given, exactly
      const json& want = b["reason"];
      const std::vector<refusal> have = refusals_of(index_.at(jr.j.id));
      const auto holds = [&](const refusal& f) {
        return field_is(want, "model", f.model) && field_is(want, "rule", f.rule) &&
               field_is(want, "entity", f.entity) && field_is(want, "message", f.text);
      };
      if (std::none_of(have.begin(), have.end(), holds)) {
        json got = json::array();
        for (const auto& f : have)
          got.push_back(json{{"model", f.model}, {"rule", f.rule}, {"entity", f.entity}, {"message", f.text}});
        fail("job " + jr.j.id + " reason " + want.dump(), have.empty() ? "no reason" : got.dump());
      }
    }
    if (b.contains("evicted")) {
      // exactly these evictions by the job so far, in the report's order
      const std::size_t me = index_.at(jr.j.id);
      std::vector<const eviction*> mine;
      for (const eviction* e : evictions_in_order())
        if (e->preemptor == me) mine.push_back(e);
      const json& want = b["evicted"];
      bool same = mine.size() == want.size();
      for (std::size_t k = 0; same && k < mine.size(); ++k) {
        const json item = want[k].is_string() ? json{{"job", want[k]}} : want[k];
        same = eviction_is(item, *mine[k], jobs_[mine[k]->victim].j.id);
      }
      if (!same) fail("evictions by " + jr.j.id + ": " + want.dump(), evictions_text(mine));
    }
    if (b.contains("evicted_by")) {
      // at least one eviction of the job so far matches
      const std::size_t me = index_.at(jr.j.id);
      std::vector<const eviction*> mine;
      for (const eviction* e : evictions_in_order())
        if (e->victim == me) mine.push_back(e);
      const json want = b["evicted_by"].is_string() ? json{{"job", b["evicted_by"]}} : b["evicted_by"];
      const bool holds = std::any_of(mine.begin(), mine.end(), [&](const eviction* e) {
        return eviction_is(want, *e, e->preemptor == npos ? std::string() : jobs_[e->preemptor].j.id);
      });
      if (!holds) fail("job " + jr.j.id + " evicted by " + want.dump(), evictions_text(mine));
    }
    if (b.contains("victims")) {
      std::vector<victim> vs;
      engine_.victims(jr.j, vs);
      std::vector<std::string> have;
      for (const auto& v : vs)
        if (std::find(have.begin(), have.end(), v.job_id) == have.end()) have.push_back(v.job_id);
      const auto want = b["victims"].get<std::vector<std::string>>();
      if (have != want) fail("victims for " + jr.j.id + ": " + json(want).dump(), json(have).dump());
    }
  }
  if (b.contains("tenant") && b.contains("usage")) {
    const std::string t = b["tenant"].get<std::string>();
    const auto want = parse_resource_list(b["usage"], sc_.registry, x.path + ".usage");
    const auto& have = usage_[t];
    if (!(have == want))
      fail("tenant " + t + " usage " + resource_list_to_json(want, sc_.registry).dump(),
           resource_list_to_json(have, sc_.registry).dump());
  }
  if (b.contains("admitted")) {
    std::int64_t n = 0;
    for (const auto& jr : jobs_) n += jr.first_start >= 0 ? 1 : 0;
    if (n != b["admitted"].get<std::int64_t>()) fail("admitted " + b["admitted"].dump(), std::to_string(n));
  }
  if (b.contains("pending")) {
    const auto n = static_cast<std::int64_t>(pending_.size());
    if (n != b["pending"].get<std::int64_t>()) fail("pending " + b["pending"].dump(), std::to_string(n));
  }
  if (b.contains("preemptions")) {
    if (preemptions_ != b["preemptions"].get<std::int64_t>())
      fail("preemptions " + b["preemptions"].dump(), std::to_string(preemptions_));
  }
  if (x.query) {
    const query_spec& q = *x.query;
    const std::string what = q.question == "allows" ? "allows " + q.job.id : q.model + " " + q.question;
    json answer;
    try {
      answer = answer_query(q);
    } catch (const error& e) {
      fail(what + " answered", std::string("error: ") + e.what());
      return;
    }
    const std::string pointer = b.value("pointer", std::string());
    const json::json_pointer ptr(pointer);
    if (!answer.contains(ptr)) {
      fail(what + pointer + " present", "absent in " + answer.dump());
      return;
    }
    if (b.contains("equals") && answer.at(ptr) != b["equals"])
      fail(what + pointer + " == " + b["equals"].dump(), answer.at(ptr).dump());
  }
  if (b.contains("model")) {
    const std::string name = b["model"].get<std::string>();
    std::optional<std::size_t> which;
    for (std::size_t i = 0; i < models_.size(); ++i)
      if ((engine_.model(i).policy_name() == name || (i < sc_.policies.size() && sc_.policies[i].model == name)) &&
          models_[i].introspect)
        which = i;
    if (!which) {
      fail("model '" + name + "' with introspection", "no such model in the scenario");
      return;
    }
    const json state = models_[*which].introspect(engine_.model(*which));
    const json::json_pointer ptr(b["pointer"].get<std::string>());
    if (!state.contains(ptr)) {
      fail(name + b["pointer"].get<std::string>() + " present", "absent");
      return;
    }
    if (b.contains("equals") && state.at(ptr) != b["equals"])
      fail(name + b["pointer"].get<std::string>() + " == " + b["equals"].dump(), state.at(ptr).dump());
  }
}

inline bool simulator_impl::field_is(const json& want, const char* key, const std::string& have) {
  return !want.contains(key) || want[key].get_ref<const std::string&>() == have;
}

inline bool simulator_impl::eviction_is(const json& want, const eviction& e, const std::string& job_id) {
  return field_is(want, "job", job_id) && field_is(want, "model", e.model) && field_is(want, "rule", e.rule) &&
         field_is(want, "entity", e.entity) && field_is(want, "upstream_reason", e.upstream_reason);
}

inline std::string simulator_impl::evictions_text(const std::vector<const eviction*>& list) const {
  if (list.empty()) return "no evictions";
  std::string s = "[";
  for (const eviction* e : list) s += (s.size() > 1 ? ", " : "") + eviction_text(*e);
  return s + "]";
}

inline json simulator_impl::answer_query(const query_spec& q) const {
  if (q.question == "allows") {
    // the described job as the replay would submit it now, asked of every model
    const job j = job_of(q.job, now_);
    const explanation x = engine_.explain(j);
    json reasons = json::array();
    for (const auto& m : x.models)
      for (const auto& r : m.verdict.reasons())
        reasons.push_back(std::string(r.model) + "." + std::string(r.rule) +
                          (r.entity.empty() ? std::string() : " [" + r.entity + "]"));
    json answer{{"allowed", x.allowed()}, {"reasons", std::move(reasons)}};
    if (!x.partial_counts.empty()) answer["pods"] = x.partial_counts;  // admitted partially: the pods of each set
    return answer;
  }
  for (std::size_t i = models_.size(); i-- > 0;)
    if (i < sc_.policies.size() && sc_.policies[i].model == q.model && models_[i].query)
      return models_[i].query(engine_.model(i), q);
  throw state_error(error_id::state_conflict, "no " + q.model + " model answers " + q.question);
}

}  // namespace quota::sim::detail
