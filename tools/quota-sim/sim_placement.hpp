// SPDX-License-Identifier: Apache-2.0
// quota-sim's replay, placement: the node tree (first-fit / best-fit search),
// GPU devices, shared allocations of claims; starting and stopping jobs.
// Members of detail::simulator_impl (simulator_impl.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "simulator_impl.hpp"

namespace quota::sim::detail {

inline bool simulator_impl::selector_ok(const node_state& n, const job_spec& js) const {
  for (const auto& [k, v] : js.node_selector) {
    auto it = n.spec.labels.find(k);
    if (it == n.spec.labels.end() || it->second != v) return false;
  }
  return true;
}

inline void simulator_impl::tree_build() {
  tree_size_ = 1;
  while (tree_size_ < nodes_.size()) tree_size_ *= 2;
  tree_.assign(2 * tree_size_, -1);
  tcpu_.assign(2 * tree_size_, -1);
  tmem_.assign(2 * tree_size_, -1);
  for (std::size_t n = 0; n < nodes_.size(); ++n) set_leaf(n);
  for (std::size_t k = tree_size_ - 1; k >= 1; --k) pull(k);
}

inline void simulator_impl::set_leaf(std::size_t n) {
  const std::size_t k = tree_size_ + n;
  tree_[k] = node_value(n, chart_);
  tcpu_[k] = node_value(n, resources::cpu);
  tmem_[k] = node_value(n, resources::memory);
}

inline void simulator_impl::pull(std::size_t k) {
  tree_[k] = std::max(tree_[2 * k], tree_[2 * k + 1]);
  tcpu_[k] = std::max(tcpu_[2 * k], tcpu_[2 * k + 1]);
  tmem_[k] = std::max(tmem_[2 * k], tmem_[2 * k + 1]);
}

inline void simulator_impl::tree_update(std::size_t n) {
  set_leaf(n);
  for (std::size_t k = (tree_size_ + n) / 2; k >= 1; k /= 2) pull(k);
}

inline bool simulator_impl::covers(std::size_t k, const need3& nd) const {
  return tree_[k] >= nd.chart && tcpu_[k] >= nd.cpu && tmem_[k] >= nd.mem;
}

inline std::size_t simulator_impl::tree_first(std::size_t from, const need3& nd) const {
  if (from >= tree_size_) return npos;
  std::size_t k = tree_size_ + from;
  if (covers(k, nd)) return from;
  for (; k > 1; k /= 2)
    if ((k & 1) == 0)
      if (const std::size_t r = descend(k + 1, nd); r != npos) return r;
  return npos;
}

inline std::size_t simulator_impl::descend(std::size_t k, const need3& nd) const {
  if (!covers(k, nd)) return npos;
  if (k >= tree_size_) return k - tree_size_;
  const std::size_t r = descend(2 * k, nd);
  return r != npos ? r : descend(2 * k + 1, nd);
}

inline void simulator_impl::set_device(std::size_t n, std::size_t d, std::int32_t v) {
  auto& f = nodes_[n].device_free[d];
  if (nodes_[n].alive) fragmented_ += frag_of(v) - frag_of(f);
  f = v;
}

inline void simulator_impl::take(std::size_t n, const resource_vector& v, std::size_t job) {
  nodes_[n].free.sub_in_place(v);
  node_jobs_[n].insert(job);
  const auto& g = jobs_[job].spec->gpu;
  if (g.count > 0) {
    const auto& devs = pick_devices(n, g);
    for (auto d : devs) set_device(n, d, nodes_[n].device_free[d] - g.milli);
    auto& held = jobs_[job].devices;
    held.insert(held.end(), devs.begin(), devs.end());
    jobs_[job].device_nodes.insert(jobs_[job].device_nodes.end(), devs.size(), n);
  }
  tree_update(n);
}

inline void simulator_impl::give(std::size_t n, const resource_vector& v, std::size_t job) {
  nodes_[n].free.add_in_place(v);
  auto& jr = jobs_[job];
  const auto& g = jr.spec->gpu;
  if (g.count > 0) {
    // return the devices of one pod on node n
    std::int32_t left = g.count;
    for (std::size_t i = jr.devices.size(); i-- > 0 && left > 0;)
      if (jr.device_nodes[i] == n) {
        set_device(n, jr.devices[i], nodes_[n].device_free[jr.devices[i]] + g.milli);
        jr.devices.erase(jr.devices.begin() + static_cast<std::ptrdiff_t>(i));
        jr.device_nodes.erase(jr.device_nodes.begin() + static_cast<std::ptrdiff_t>(i));
        --left;
      }
  }
  if (auto it = node_jobs_[n].find(job); it != node_jobs_[n].end()) node_jobs_[n].erase(it);  // one pod
  tree_update(n);
}

inline const std::vector<std::size_t>& simulator_impl::pick_devices(std::size_t n, const gpu_request& g) {
  auto& ok = dev_scratch_;
  ok.clear();
  if (!devices_fit(n, g)) return ok;
  const auto& node = nodes_[n];
  for (std::size_t d = 0; d < node.device_free.size(); ++d)
    if (node.device_free[d] >= g.milli) ok.push_back(d);
  // stable insertion sort by free thousandths (a node has a handful of devices)
  for (std::size_t i = 1; i < ok.size(); ++i) {
    const auto v = ok[i];
    std::size_t k = i;
    for (; k > 0 && node.device_free[ok[k - 1]] > node.device_free[v]; --k) ok[k] = ok[k - 1];
    ok[k] = v;
  }
  ok.resize(static_cast<std::size_t>(g.count));
  return ok;
}

inline bool simulator_impl::devices_fit(std::size_t n, const gpu_request& g) const {
  if (g.count == 0) return false;
  const auto& node = nodes_[n];
  if (!g.models.empty() && std::find(g.models.begin(), g.models.end(), node.spec.gpu.model) == g.models.end())
    return false;
  std::int32_t have = 0;
  for (const auto f : node.device_free)
    if (f >= g.milli && ++have >= g.count) return true;
  return false;
}

inline bool simulator_impl::node_fits(std::size_t n, const job_spec& js, const resource_vector& per_pod) const {
  if (!selector_ok(nodes_[n], js) || !fits(per_pod, nodes_[n].free)) return false;
  return js.gpu.count == 0 || devices_fit(n, js.gpu);
}

inline std::optional<std::size_t> simulator_impl::pick_node(const job_spec& js, const resource_vector& per_pod) const {
  const amount need = per_pod.get(chart_);
  const need3 nd{need, per_pod.get(resources::cpu), per_pod.get(resources::memory)};
  if (!covers(1, nd)) return std::nullopt;
  if (sc_.placement == "first-fit") {
    for (std::size_t n = tree_first(0, nd); n != npos && n < nodes_.size(); n = tree_first(n + 1, nd))
      if (node_fits(n, js, per_pod)) return n;
    return std::nullopt;
  }
  std::optional<std::size_t> best;
  amount best_left = 0;
  for (std::size_t n = tree_first(0, nd); n != npos && n < nodes_.size(); n = tree_first(n + 1, nd)) {
    // the first node with the least left wins: a node that would leave no
    // less than the best so far is not checked further
    const amount left = nodes_[n].free.get(chart_) - need;
    if (best && left >= best_left) continue;
    if (!node_fits(n, js, per_pod)) continue;
    best = n;
    best_left = left;
    if (left <= 0) break;  // nothing leaves less than a node that covers the need exactly
  }
  return best;
}

inline void simulator_impl::set_up_shared() {
  if (!engine_.shares_allocations()) return;
  std::vector<shared_allocation> buf;
  std::unordered_map<std::string, std::size_t> ids;
  const auto intern = [&](const shared_allocation& a) {
    const auto [it, fresh] = ids.emplace(a.key, shared_.size());
    if (fresh) shared_.push_back(shared_state{a.key, a.amount, npos, 0, false, {}});
    return it->second;
  };
  for (auto& jr : jobs_) {
    if (jr.j.claims.empty()) continue;
    buf.clear();
    engine_.shared_allocations(jr.j, buf);
    for (const auto& a : buf)
      if (!a.amount.empty()) jr.shared.push_back(intern(a));
  }
  buf.clear();
  engine_.held_allocations(buf);
  for (const auto& a : buf) {
    if (a.amount.empty()) continue;
    const std::size_t sh = intern(a);
    std::size_t at = npos;
    for (std::size_t n = 0; n < nodes_.size() && at == npos; ++n)
      if ((a.node.empty() || nodes_[n].spec.name == a.node) &&
          shared_fits(n, shared_[sh].amount, shared_[sh].amount.get(resources::nvidia_gpu)))
        at = n;
    if (at == npos) {
      bool named = false;
      for (const auto& n : nodes_) named = named || n.spec.name == a.node;
      throw validation_error(
          "claim " + a.key,
          a.node.empty() ? "its devices, reserved at the start, fit on no node"
          : named        ? "its devices, reserved at the start on node '" + a.node + "', do not fit there"
                  : "its devices are reserved at the start on node '" + a.node + "', which the cluster does not have");
    }
    take_shared(at, sh);
    shared_[sh].held = true;
  }
}

inline std::int64_t simulator_impl::whole_free_devices(std::size_t n) const {
  std::int64_t k = 0;
  for (const auto f : nodes_[n].device_free) k += f == 1000 ? 1 : 0;
  return k;
}

inline bool simulator_impl::shared_fits(std::size_t n, const resource_vector& v, std::int64_t whole) const {
  if (!nodes_[n].alive || !fits(v, nodes_[n].free)) return false;
  return nodes_[n].device_free.empty() || whole_free_devices(n) >= whole;
}

inline void simulator_impl::take_shared(std::size_t n, std::size_t sh) {
  auto& st = shared_[sh];
  nodes_[n].free.sub_in_place(st.amount);
  st.node = n;
  st.devices.clear();
  if (!nodes_[n].device_free.empty())
    for (std::size_t d = 0, left = static_cast<std::size_t>(st.amount.get(resources::nvidia_gpu));
         d < nodes_[n].device_free.size() && left > 0; ++d)
      if (nodes_[n].device_free[d] == 1000) {
        set_device(n, d, 0);
        st.devices.push_back(d);
        --left;
      }
  tree_update(n);
}

inline void simulator_impl::give_shared(std::size_t sh) {
  auto& st = shared_[sh];
  const std::size_t n = st.node;
  nodes_[n].free.add_in_place(st.amount);
  for (const auto d : st.devices) set_device(n, d, 1000);
  st.devices.clear();
  st.node = npos;
  tree_update(n);
}

inline bool simulator_impl::place_shared(std::size_t idx) {
  auto& jr = jobs_[idx];
  const auto& js = *jr.spec;
  std::size_t bound = npos;
  resource_vector extra;
  for (const auto sh : jr.shared) {
    const auto& st = shared_[sh];
    if (st.node == npos) {
      extra.add_in_place(st.amount);
    } else if (bound == npos) {
      bound = st.node;
    } else if (bound != st.node) {
      return false;  // allocated on two nodes: no node has them both
    }
  }
  resource_vector total = extra;
  total.add_in_place(running_job(jr).request);
  const std::int32_t pods = running_job(jr).pods;
  const std::int64_t pod_gpus = js.gpu.milli == 1000 ? std::int64_t{js.gpu.count} * pods : 0;
  const auto room = [&](std::size_t n) {
    return selector_ok(nodes_[n], js) && shared_fits(n, total, extra.get(resources::nvidia_gpu) + pod_gpus);
  };
  std::size_t at = npos;
  if (bound != npos) {
    if (room(bound)) at = bound;
  } else {
    amount best_left = 0;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      if (!room(n)) continue;
      const amount left = nodes_[n].free.get(chart_) - total.get(chart_);
      if (at == npos || (sc_.placement != "first-fit" && left < best_left)) {
        at = n;
        best_left = left;
      }
      if (sc_.placement == "first-fit") break;
    }
  }
  if (at == npos) return false;
  // the allocations first (whole devices), then the pods
  std::vector<std::size_t> taken;
  for (const auto sh : jr.shared)
    if (shared_[sh].node == npos) {
      take_shared(at, sh);
      taken.push_back(sh);
    }
  // the pods, all on that node (a job with shared allocations has one pod set: gpu is not allowed with pod sets)
  std::int32_t placed = 0;
  bool ok = true;
  each_pod_group(jr, [&](const resource_vector& per_pod, std::int32_t count) {
    for (std::int32_t p = 0; ok && p < count; ++p) {
      if (js.gpu.count > 0 && !devices_fit(at, js.gpu)) {  // fractional devices: not known before
        ok = false;
        break;
      }
      take(at, per_pod, idx);
      ++placed;
    }
  });
  if (!ok) {
    each_placed(jr, {{at, placed}}, [&](std::size_t n, const resource_vector& per_pod, std::int32_t k) {
      for (std::int32_t q = 0; q < k; ++q) give(n, per_pod, idx);
    });
    for (const auto sh : taken) give_shared(sh);
    return false;
  }
  for (const auto sh : jr.shared) ++shared_[sh].holders;
  jr.placement = {{at, pods}};
  return true;
}

inline void simulator_impl::drop_shared(std::size_t idx) {
  for (const auto sh : jobs_[idx].shared) {
    auto& st = shared_[sh];
    if (st.holders > 0 && --st.holders == 0 && !st.held && st.node != npos) give_shared(sh);
  }
}

inline bool simulator_impl::place(std::size_t idx) {
  auto& jr = jobs_[idx];
  if (!jr.shared.empty()) return place_shared(idx);
  const auto& js = *jr.spec;
  std::vector<std::pair<std::size_t, std::int32_t>> plan;
  bool ok = true;
  each_pod_group(jr, [&](const resource_vector& per_pod, std::int32_t count) {
    for (std::int32_t p = 0; ok && p < count; ++p) {
      const auto n = pick_node(js, per_pod);
      if (!n) {
        ok = false;
        break;
      }
      take(*n, per_pod, idx);
      if (!plan.empty() && plan.back().first == *n)
        ++plan.back().second;
      else
        plan.push_back({*n, 1});
    }
  });
  if (!ok) {
    each_placed(jr, plan, [&](std::size_t n, const resource_vector& per_pod, std::int32_t k) {
      for (std::int32_t q = 0; q < k; ++q) give(n, per_pod, idx);
    });
    return false;
  }
  jr.placement = std::move(plan);
  return true;
}

inline void simulator_impl::unplace(std::size_t idx) {
  auto& jr = jobs_[idx];
  each_placed(jr, jr.placement, [&](std::size_t n, const resource_vector& per_pod, std::int32_t k) {
    for (std::int32_t p = 0; p < k; ++p) give(n, per_pod, idx);
  });
  if (!jr.placement.empty()) drop_shared(idx);
  jr.placement.clear();
}

inline void simulator_impl::replace_on(std::size_t idx, const std::vector<std::pair<std::size_t, std::int32_t>>& pl) {
  auto& jr = jobs_[idx];
  jr.placement = pl;
  if (!pl.empty())
    for (const auto sh : jr.shared) {
      if (shared_[sh].node == npos) take_shared(pl.front().first, sh);
      ++shared_[sh].holders;
    }
  each_placed(jr, pl, [&](std::size_t n, const resource_vector& per_pod, std::int32_t k) {
    for (std::int32_t p = 0; p < k; ++p) take(n, per_pod, idx);
  });
}

inline void simulator_impl::start(std::size_t idx) {
  auto& jr = jobs_[idx];
  jr.state = job_state::running;
  // a job that waited without being refused waited for the next cycle boundary
  if (jr.first_start < 0 && jr.last_denial.empty() && now_ > jr.spec->submit_ms && sc_.cycle_ms > 0)
    jr.last_denial = "host.next_cycle";
  ++(jr.first_start < 0 ? jr.ts->admissions : jr.ts->readmissions);
  if (jr.first_start < 0) {
    jr.first_start = now_;
    if (now_ > jr.spec->submit_ms) jr.wait_reason = jr.last_denial;
  }
  jr.last_start = now_;
  ++admissions_total_;
  jr.ts->usage->add_in_place(running_job(jr).request);
  running_.insert(idx);
  running_by_priority_.insert({jr.spec->priority, idx});
  if (jr.spec->duration_ms >= 0) {
    const std::int64_t left = std::max<std::int64_t>(0, jr.spec->duration_ms - jr.run_ms);
    jr.finish = finishes_.emplace(now_ + left, idx);
    jr.has_finish = true;
  }
}

inline void simulator_impl::stop(std::size_t idx, job_state to) {
  if (jobs_[idx].state != job_state::running) return;
  engine_.release(jobs_[idx].j.id);
  unplace(idx);
  retire(idx, to);
}

inline void simulator_impl::retire(std::size_t idx, job_state to) {
  auto& jr = jobs_[idx];
  if (jr.has_finish) {
    finishes_.erase(jr.finish);
    jr.has_finish = false;
  }
  jr.ts->usage->sub_in_place(running_job(jr).request);
  running_.erase(idx);
  running_by_priority_.erase({jr.spec->priority, idx});
  freed_ = true;
  jr.run_ms += now_ - jr.last_start;
  if (to == job_state::requeued) {
    ++jr.preempted;
    ++preemptions_;
    ++tenants_[jr.tenant].preempted;
    preemption_marks_.push_back({now_, idx, npos, {}});
    jr.state = job_state::requeued;
    jr.partial.reset();  // it waits for all its pods again
    pend(idx);
    // a preempted job is pending again: it rejoins the demand of the
    // models that follow demand (Volcano's deserved, KAI's fair share)
    engine_.pending_added(jr.j);
  } else {
    jr.state = to;
    jr.end = now_;
  }
}

inline void simulator_impl::set_up_running() {
  diagnostics diag;
  detail::first_by_name node_named(nodes_, [](const node_state& n) -> std::string_view { return n.spec.name; });
  for (std::size_t idx = 0; idx < jobs_.size(); ++idx) {
    auto& jr = jobs_[idx];
    const auto& js = *jr.spec;
    if (!js.running) continue;
    const std::string path = "$.jobs[" + std::to_string(js.entry) + "]";
    std::size_t on = npos;
    if (!js.node.empty())
      if (const auto n = node_named.find(js.node)) on = *n;
    if (!(on == npos ? place(idx) : place_on(idx, on))) {
      diag.add(path + (on == npos ? ".running" : ".node"),
               "job '" + js.id + "' runs at the start but its pods fit " +
                   (on == npos ? std::string("no node") : "not on node '" + js.node + "'") +
                   " next to the jobs placed before it");
      continue;
    }
    try {
      engine_.restore(jr.j);
      if (js.evicted)
        for (std::size_t i = 0; i < models_.size(); ++i)
          if (models_[i].mark_evicted) models_[i].mark_evicted(engine_.model(i), jr.j);
    } catch (const error& e) {
      if (engine_.is_admitted(jr.j.id)) engine_.release(jr.j.id);
      unplace(idx);
      diag.add(path + ".running", "job '" + js.id + "' cannot run at the start: " + e.what());
      continue;
    }
    start(idx);
  }
  diag.throw_if_any();
}

inline bool simulator_impl::place_on(std::size_t idx, std::size_t n) {
  const auto& jr = jobs_[idx];
  const auto& js = *jr.spec;
  std::int32_t done = 0;
  bool ok = true;
  each_pod_group(jr, [&](const resource_vector& per_pod, std::int32_t count) {
    for (std::int32_t p = 0; ok && p < count; ++p) {
      if (!node_fits(n, js, per_pod)) {
        ok = false;
        break;
      }
      take(n, per_pod, idx);
      ++done;
    }
  });
  if (ok) {
    jobs_[idx].placement = {{n, done}};
    return true;
  }
  each_placed(jr, {{n, done}}, [&](std::size_t m, const resource_vector& per_pod, std::int32_t k) {
    for (std::int32_t q = 0; q < k; ++q) give(m, per_pod, idx);
  });
  return false;
}

}  // namespace quota::sim::detail
