// SPDX-License-Identifier: Apache-2.0
// The state and the loop of quota-sim's replay (simulator.hpp describes it):
// included only by simulator.cpp, so the whole loop and the composed engine
// are compiled once, into the quota_sim library.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "simulator.hpp"

namespace quota::sim::detail {

class simulator_impl {
 public:
  simulator_impl(scenario sc, std::vector<model_instance> models)
      : sc0_(std::make_shared<const scenario>(sc)),
        models0_(std::make_shared<const std::vector<model_instance>>(models)),
        sc_(std::move(sc)),
        models_(std::move(models)) {
    for (auto& m : models_) engine_.add(std::move(m.policy));
    for (const auto& n : sc_.nodes)
      nodes_.push_back(
          node_state{n, n.allocatable, true, std::vector<std::int32_t>(static_cast<std::size_t>(n.gpu.count), 1000)});
    jobs_.reserve(sc_.jobs.size());
    index_.reserve(sc_.jobs.size());
    for (std::size_t i = 0; i < sc_.jobs.size(); ++i) {
      const auto& js = sc_.jobs[i];
      job_run jr;
      jr.spec = &sc_.jobs[i];
      jr.j.id = js.id;
      jr.j.ns = js.ns;
      jr.j.queue = js.queue;
      jr.j.user = js.user;
      jr.j.groups = js.groups;
      jr.j.priority_class = js.priority_class;
      jr.j.priority = js.priority;
      jr.j.pods = js.pods;
      jr.j.min_pods = js.min_pods;
      jr.j.claims = js.claims;
      jr.j.created_ms = js.submit_ms;
      jr.j.duration_ms = js.duration_ms;
      jr.j.preemptible = js.preemptible;
      for (const auto& e : js.per_pod) jr.j.request.set(e.id, quota::detail::checked_mul<amount>(e.value, js.pods));
      jr.tenant = tenant_of(js);
      jr.shape = shape_of(js);
      jr.coarse = coarse_shape_of(js);
      index_[js.id] = i;
      jobs_.push_back(std::move(jr));
      tenants_[jobs_.back().tenant];
    }
    for (auto& jr : jobs_) jr.ts = &tenants_[jr.tenant];  // map nodes stay put
    chart_ = sc_.registry.find(sc_.chart_resource).value_or(resources::nvidia_gpu);
    for (const auto& n : nodes_) capacity_.add_in_place(n.spec.allocatable);
    node_jobs_.resize(nodes_.size());
    tree_build();
    set_up_order();
    // charges restored with a model's initial state (claims bound by running pods)
    engine_.sync_charges();
    set_up_shared();
    set_up_running();
  }

  /// Replays the scenario up to `until_ms` (or its end). `progress` is called
  /// now and then with (done events, total events).
  run_result run(std::int64_t until_ms = -1, const std::function<void(std::size_t, std::size_t)>& progress = {}) {
    return run(until_ms, progress, run_options{});
  }
  run_result run(std::int64_t until_ms, const std::function<void(std::size_t, std::size_t)>& progress,
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
    std::stable_sort(expect_order.begin(), expect_order.end(), [&](std::size_t a, std::size_t b) {
      return sc_.expectations[a].at_ms < sc_.expectations[b].at_ms;
    });
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

  [[nodiscard]] const engine& quota_engine() const noexcept { return engine_; }
  /// Running jobs with a declared end: (end time, job id), earliest first (for quota-sim explain).
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::string>> scheduled_finishes() const {
    std::vector<std::pair<std::int64_t, std::string>> out;
    for (const auto& [t, idx] : finishes_) out.emplace_back(t, jobs_[idx].j.id);
    return out;
  }
  /// (time, chart resource in use) and (time, capacity) over the replay.
  [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> usage_over_time() const {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (const auto& smp : util_samples_) out.emplace_back(smp.t, smp.v);
    return out;
  }
  [[nodiscard]] std::int64_t end_ms() const noexcept { return end_ms_; }
  [[nodiscard]] std::int64_t capacity_now() const { return capacity_.get(chart_); }
  [[nodiscard]] const scenario& spec() const noexcept { return sc_; }

 private:
  struct node_state {
    node_spec spec;
    resource_vector free;
    bool alive;
    std::vector<std::int32_t> device_free;  // milli free per GPU device
  };
  struct sample {
    std::int64_t t;
    std::int64_t v;
  };
  struct tenant_stats {
    std::int64_t admissions = 0;    // jobs started for the first time
    std::int64_t readmissions = 0;  // starts of jobs preempted before
    std::int64_t preempted = 0;
    amount pending = 0;  // chart resource requested by its pending jobs now
    std::map<std::string, std::int64_t> denials;
    std::vector<sample> samples, pending_samples;
  };
  // One preemption (or eviction): who went, for whom, and why.
  struct preemption_mark {
    std::int64_t t;
    std::size_t victim;
    std::size_t preemptor;  // npos: none (a quota shrink, a failed trial)
    std::string cause;
  };
  struct job_run {
    const job_spec* spec = nullptr;
    job j;
    std::string tenant;
    job_state state = job_state::waiting;
    std::int64_t first_start = -1, last_start = -1, end = -1;
    std::int64_t run_ms = 0;                                      // accumulated running time (for preempted jobs)
    std::vector<std::pair<std::size_t, std::int32_t>> placement;  // node, pods
    std::string last_reason;
    std::string last_denial;  // why it waited before its latest start (report: reason)
    std::string wait_reason;  // why it waited before its first start (report: wait_reason)
    tenant_stats* ts = nullptr;
    int preempted = 0;
    std::size_t shape = 0, coarse = 0;
    std::uint64_t tried_pass = 0;
    std::uint64_t pended_pass = 0;
    std::vector<std::size_t> devices, device_nodes;               // GPU devices held (device index, node)
    std::vector<std::size_t> shared;                              // its shared allocations (shared_ index)
    std::multimap<std::int64_t, std::size_t>::iterator finish{};  // its entry in finishes_
    bool has_finish = false;
  };
  // Jobs identical in everything a model or the host reads share a shape: in
  // one scheduling pass, usage only grows, so once one is denied the others
  // would be too.
  std::size_t shape_of(const job_spec& js) { return intern_shape(shapes_, shape_key(js, true)); }
  // The shape without user and groups: jobs that differ only there get the
  // same answer from every model that does not read them (user_agnostic).
  std::size_t coarse_shape_of(const job_spec& js) { return intern_shape(coarse_shapes_, shape_key(js, false)); }
  static std::string shape_key(const job_spec& js, bool with_identity) {
    std::string k = js.ns + '\x1f' + js.queue + '\x1f';
    if (with_identity) k += js.user + '\x1f';
    k += js.priority_class + '\x1f' + std::to_string(js.priority) + '\x1f' + std::to_string(js.pods) + '\x1f' +
         std::to_string(js.min_pods) + '\x1f' + (js.preemptible ? "p" : "n") + '\x1f';
    if (with_identity) {
      for (const auto& g : js.groups) k += g + ',';
      k += '\x1f';
    }
    for (const auto& e : js.per_pod) k += std::to_string(e.id) + '=' + std::to_string(e.value) + ',';
    k += '\x1f';
    for (const auto& [a, b] : js.node_selector) k += a + '=' + b + ',';
    k += '\x1f';
    for (const auto& c : js.claims) k += c + ',';
    k += '\x1f' + std::to_string(js.gpu.count) + 'x' + std::to_string(js.gpu.milli);
    for (const auto& m : js.gpu.models) k += ',' + m;
    k += '\x1f';
    if (!js.extra.is_null()) k += js.extra.dump();
    return k;
  }
  template <class Map>
  static std::size_t intern_shape(Map& shapes, std::string key) {
    return shapes.emplace(std::move(key), shapes.size()).first->second;
  }
  // Reasons from models whose answer does not depend on job.user or job.groups.
  static bool user_agnostic(std::string_view model) {
    return model == "queue" || model == "capacity" || model == "elastic_quota" || model == "fair_share" ||
           model == "kueue" || model == "sharing_pools";
  }
  // A denial no change of usage can lift: a fixed limit the request alone exceeds.
  static bool permanent(const reason& r) {
    return r.model == "yunikorn_limits" && (r.rule == "max_resources" || r.rule == "max_applications") &&
           r.limit >= 0 && r.requested > r.limit;
  }

  std::string tenant_of(const job_spec& js) const {
    if (sc_.tenant_by == "namespace") return js.ns;
    if (sc_.tenant_by == "user") return js.user.empty() ? "(none)" : js.user;
    return js.queue.empty() ? js.ns : js.queue;
  }

  // pending order inside a queue: the ordering model's compare_pending
  // (default: higher priority first, then submission time), then file order;
  // ranks are fixed when the replay is set up (the order must not depend on usage)
  struct pkey {
    std::size_t rank;
    std::size_t idx;
    friend bool operator<(const pkey& a, const pkey& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      return a.idx < b.idx;
    }
  };
  pkey pending_key(std::size_t idx) const { return pkey{rank_[idx], idx}; }

  // The model that orders pending work (scheduler.order), each job's queue
  // by its rule, and each job's rank inside its queue.
  void set_up_order() {
    if (sc_.order == "priority") {
      ordered_ = false;
    } else {
      if (!sc_.order.empty()) {
        std::size_t i = 0;
        while (i < sc_.policies.size() && sc_.policies[i].model != sc_.order) ++i;
        if (i >= engine_.model_count() || !engine_.model(i).offers_order())
          throw validation_error("$.scheduler.order",
                                 "model '" + sc_.order +
                                     "' does not order pending jobs (models that do: elastic_quota, "
                                     "volcano, volcano_capacity, kai_fair_share, kueue)");
        engine_.set_order_model(i);
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
  // The first cycle boundary at or after t (cycle mode).
  [[nodiscard]] std::int64_t next_boundary(std::int64_t t) const {
    const std::int64_t c = sc_.cycle_ms;
    const std::int64_t k = t / c + (t % c != 0 ? 1 : 0);
    std::int64_t b = 0;
    return quota::detail::try_mul(k, c, b) ? b : end_of_time;
  }

  bool selector_ok(const node_state& n, const job_spec& js) const {
    for (const auto& [k, v] : js.node_selector) {
      auto it = n.spec.labels.find(k);
      if (it == n.spec.labels.end() || it->second != v) return false;
    }
    return true;
  }

  // --- nodes: free capacity, with a max tree over the chart resource --------
  // tree_[k] = the most of the chart resource free on any alive node below k
  // (tcpu_, tmem_: the same for cpu and memory); first-fit finds the first
  // node with enough of all three in O(log n) steps per skipped subtree.
  void tree_build() {
    tree_size_ = 1;
    while (tree_size_ < nodes_.size()) tree_size_ *= 2;
    tree_.assign(2 * tree_size_, -1);
    tcpu_.assign(2 * tree_size_, -1);
    tmem_.assign(2 * tree_size_, -1);
    for (std::size_t n = 0; n < nodes_.size(); ++n) set_leaf(n);
    for (std::size_t k = tree_size_ - 1; k >= 1; --k) pull(k);
  }
  amount node_value(std::size_t n, resource_id r) const { return nodes_[n].alive ? nodes_[n].free.get(r) : -1; }
  void set_leaf(std::size_t n) {
    const std::size_t k = tree_size_ + n;
    tree_[k] = node_value(n, chart_);
    tcpu_[k] = node_value(n, resources::cpu);
    tmem_[k] = node_value(n, resources::memory);
  }
  void pull(std::size_t k) {
    tree_[k] = std::max(tree_[2 * k], tree_[2 * k + 1]);
    tcpu_[k] = std::max(tcpu_[2 * k], tcpu_[2 * k + 1]);
    tmem_[k] = std::max(tmem_[2 * k], tmem_[2 * k + 1]);
  }
  void tree_update(std::size_t n) {
    set_leaf(n);
    for (std::size_t k = (tree_size_ + n) / 2; k >= 1; k /= 2) pull(k);
  }
  struct need3 {
    amount chart, cpu, mem;
  };
  bool covers(std::size_t k, const need3& nd) const {
    return tree_[k] >= nd.chart && tcpu_[k] >= nd.cpu && tmem_[k] >= nd.mem;
  }
  // first node index >= from with enough chart resource, cpu and memory free,
  // or npos: walk up from the leaf, and down into right siblings that may hold one
  std::size_t tree_first(std::size_t from, const need3& nd) const {
    if (from >= tree_size_) return npos;
    std::size_t k = tree_size_ + from;
    if (covers(k, nd)) return from;
    for (; k > 1; k /= 2)
      if ((k & 1) == 0)
        if (const std::size_t r = descend(k + 1, nd); r != npos) return r;
    return npos;
  }
  // the first leaf below k with enough of all three (maxima of different nodes may cover, no node does)
  std::size_t descend(std::size_t k, const need3& nd) const {
    if (!covers(k, nd)) return npos;
    if (k >= tree_size_) return k - tree_size_;
    const std::size_t r = descend(2 * k, nd);
    return r != npos ? r : descend(2 * k + 1, nd);
  }
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // GPU fragmentation: free thousandths on devices that are partly used
  // (they can host only pods that fit the remainder).
  static std::int64_t frag_of(std::int32_t free) { return free > 0 && free < 1000 ? free : 0; }
  void set_device(std::size_t n, std::size_t d, std::int32_t v) {
    auto& f = nodes_[n].device_free[d];
    if (nodes_[n].alive) fragmented_ += frag_of(v) - frag_of(f);
    f = v;
  }

  void take(std::size_t n, const resource_vector& v, std::size_t job) {
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
  void give(std::size_t n, const resource_vector& v, std::size_t job) {
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

  // Devices for one pod on node n (best fit: the fullest devices that still
  // have room), or an empty list when they do not fit.
  // The result lives in a buffer reused by the next call.
  const std::vector<std::size_t>& pick_devices(std::size_t n, const gpu_request& g) {
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
  // pick_devices would find devices (without building the list).
  bool devices_fit(std::size_t n, const gpu_request& g) const {
    if (g.count == 0) return false;
    const auto& node = nodes_[n];
    if (!g.models.empty() && std::find(g.models.begin(), g.models.end(), node.spec.gpu.model) == g.models.end())
      return false;
    std::int32_t have = 0;
    for (const auto f : node.device_free)
      if (f >= g.milli && ++have >= g.count) return true;
    return false;
  }
  bool node_fits(std::size_t n, const job_spec& js) const {
    if (!selector_ok(nodes_[n], js) || !fits(js.per_pod, nodes_[n].free)) return false;
    return js.gpu.count == 0 || devices_fit(n, js.gpu);
  }

  std::optional<std::size_t> pick_node(const job_spec& js) const {
    const amount need = js.per_pod.get(chart_);
    const need3 nd{need, js.per_pod.get(resources::cpu), js.per_pod.get(resources::memory)};
    if (!covers(1, nd)) return std::nullopt;
    if (sc_.placement == "first-fit") {
      for (std::size_t n = tree_first(0, nd); n != npos && n < nodes_.size(); n = tree_first(n + 1, nd))
        if (node_fits(n, js)) return n;
      return std::nullopt;
    }
    std::optional<std::size_t> best;
    amount best_left = 0;
    for (std::size_t n = tree_first(0, nd); n != npos && n < nodes_.size(); n = tree_first(n + 1, nd)) {
      if (!node_fits(n, js)) continue;
      const amount left = nodes_[n].free.get(chart_) - need;
      if (!best || left < best_left) {
        best = n;
        best_left = left;
      }
    }
    return best;
  }

  // ---- shared allocations (quota/capabilities.hpp: a claim's devices) -------
  // Each is allocated once, on the node of its first running holder; every
  // later holder runs there (all its pods); the last holder to stop gives it
  // back. Those held by pods the host does not run are taken at the start.
  struct shared_state {
    std::string key;
    resource_vector amount;
    std::size_t node = npos;
    std::uint32_t holders = 0;
    bool held = false;                 // by pods outside the scenario: for good
    std::vector<std::size_t> devices;  // whole GPU devices taken on `node`
  };
  void set_up_shared() {
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
        throw validation_error("claim " + a.key,
                               a.node.empty() ? "its devices, reserved at the start, fit on no node"
                               : named ? "its devices, reserved at the start on node '" + a.node + "', do not fit there"
                                       : "its devices are reserved at the start on node '" + a.node +
                                             "', which the cluster does not have");
      }
      take_shared(at, sh);
      shared_[sh].held = true;
    }
  }
  // Whole free GPU devices of node n.
  std::int64_t whole_free_devices(std::size_t n) const {
    std::int64_t k = 0;
    for (const auto f : nodes_[n].device_free) k += f == 1000 ? 1 : 0;
    return k;
  }
  // `v` fits on node n now, and `whole` whole GPU devices are free on it (when it tracks devices).
  bool shared_fits(std::size_t n, const resource_vector& v, std::int64_t whole) const {
    if (!nodes_[n].alive || !fits(v, nodes_[n].free)) return false;
    return nodes_[n].device_free.empty() || whole_free_devices(n) >= whole;
  }
  void take_shared(std::size_t n, std::size_t sh) {
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
  void give_shared(std::size_t sh) {
    auto& st = shared_[sh];
    const std::size_t n = st.node;
    nodes_[n].free.add_in_place(st.amount);
    for (const auto d : st.devices) set_device(n, d, 1000);
    st.devices.clear();
    st.node = npos;
    tree_update(n);
  }
  // A job with shared allocations: all its pods on one node, the node its
  // allocated ones are on, else (first-fit or best-fit) one with room for the
  // pods and the allocations not made yet.
  bool place_shared(std::size_t idx) {
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
    for (const auto& e : js.per_pod)
      total.set(e.id,
                quota::detail::checked_add(total.get(e.id), quota::detail::checked_mul<amount>(e.value, js.pods)));
    const std::int64_t pod_gpus = js.gpu.milli == 1000 ? std::int64_t{js.gpu.count} * js.pods : 0;
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
    for (std::int32_t p = 0; p < js.pods; ++p) {
      if (js.gpu.count > 0 && !devices_fit(at, js.gpu)) {  // fractional devices: not known before
        for (std::int32_t q = 0; q < p; ++q) give(at, js.per_pod, idx);
        for (const auto sh : taken) give_shared(sh);
        return false;
      }
      take(at, js.per_pod, idx);
    }
    for (const auto sh : jr.shared) ++shared_[sh].holders;
    jr.placement = {{at, js.pods}};
    return true;
  }
  // The job stops holding its shared allocations; the last holder gives them back.
  void drop_shared(std::size_t idx) {
    for (const auto sh : jobs_[idx].shared) {
      auto& st = shared_[sh];
      if (st.holders > 0 && --st.holders == 0 && !st.held && st.node != npos) give_shared(sh);
    }
  }

  // Places all pods of the job; on failure nothing is placed.
  bool place(std::size_t idx) {
    auto& jr = jobs_[idx];
    if (!jr.shared.empty()) return place_shared(idx);
    const auto& js = *jr.spec;
    std::vector<std::pair<std::size_t, std::int32_t>> plan;
    for (std::int32_t p = 0; p < js.pods; ++p) {
      const auto n = pick_node(js);
      if (!n) {
        for (const auto& [m, pods] : plan)
          for (std::int32_t q = 0; q < pods; ++q) give(m, js.per_pod, idx);
        return false;
      }
      take(*n, js.per_pod, idx);
      if (!plan.empty() && plan.back().first == *n)
        ++plan.back().second;
      else
        plan.push_back({*n, 1});
    }
    jr.placement = std::move(plan);
    return true;
  }
  void unplace(std::size_t idx) {
    auto& jr = jobs_[idx];
    for (const auto& [n, pods] : jr.placement)
      for (std::int32_t p = 0; p < pods; ++p) give(n, jr.spec->per_pod, idx);
    if (!jr.placement.empty()) drop_shared(idx);
    jr.placement.clear();
  }
  void replace_on(std::size_t idx, const std::vector<std::pair<std::size_t, std::int32_t>>& pl) {
    auto& jr = jobs_[idx];
    jr.placement = pl;
    if (!pl.empty())
      for (const auto sh : jr.shared) {
        if (shared_[sh].node == npos) take_shared(pl.front().first, sh);
        ++shared_[sh].holders;
      }
    for (const auto& [n, pods] : pl)
      for (std::int32_t p = 0; p < pods; ++p) take(n, jr.spec->per_pod, idx);
  }

  void start(std::size_t idx) {
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
    usage_[jr.tenant].add_in_place(jr.j.request);
    running_.insert(idx);
    running_by_priority_.insert({jr.spec->priority, idx});
    if (jr.spec->duration_ms >= 0) {
      const std::int64_t left = std::max<std::int64_t>(0, jr.spec->duration_ms - jr.run_ms);
      jr.finish = finishes_.emplace(now_ + left, idx);
      jr.has_finish = true;
    }
  }

  // Stops a running job: finished, deleted, or preempted (back to pending).
  void stop(std::size_t idx, job_state to) {
    if (jobs_[idx].state != job_state::running) return;
    engine_.release(jobs_[idx].j.id);
    unplace(idx);
    retire(idx, to);
  }
  // The bookkeeping of stop() for a job already released from the engine and its nodes.
  void retire(std::size_t idx, job_state to) {
    auto& jr = jobs_[idx];
    if (jr.has_finish) {
      finishes_.erase(jr.finish);
      jr.has_finish = false;
    }
    usage_[jr.tenant].sub_in_place(jr.j.request);
    running_.erase(idx);
    running_by_priority_.erase({jr.spec->priority, idx});
    freed_ = true;
    jr.run_ms += now_ - jr.last_start;
    if (to == job_state::preempted_pending) {
      ++jr.preempted;
      ++preemptions_;
      ++tenants_[jr.tenant].preempted;
      preemption_marks_.push_back({now_, idx, npos, {}});
      jr.state = job_state::preempted_pending;
      pend(idx);
      // a preempted job is pending again: it rejoins the demand of the
      // models that follow demand (Volcano's deserved, KAI's fair share)
      engine_.pending_added(jr.j);
    } else {
      jr.state = to;
      jr.end = now_;
    }
  }

  // --- initial state: jobs running at time 0 (docs/scenario-format.md) ------
  // In file order, before the first instant: each is placed (on its `node`
  // when named, else as the placement rule picks) and committed in every
  // model without an admission check (engine::restore), as a host restoring
  // the pods it finds bound. A job that fits no node, or that a model cannot
  // hold at all, is an error naming the job; nothing runs.
  void set_up_running() {
    diagnostics diag;
    for (std::size_t idx = 0; idx < jobs_.size(); ++idx) {
      auto& jr = jobs_[idx];
      const auto& js = *jr.spec;
      if (!js.running) continue;
      const std::string path = "$.jobs[" + std::to_string(js.entry) + "]";
      std::size_t on = npos;
      if (!js.node.empty())
        for (std::size_t n = 0; n < nodes_.size() && on == npos; ++n)
          if (nodes_[n].spec.name == js.node) on = n;
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
  // Places all pods of the job on node n; on failure nothing is placed.
  bool place_on(std::size_t idx, std::size_t n) {
    const auto& js = *jobs_[idx].spec;
    std::int32_t done = 0;
    for (; done < js.pods && node_fits(n, js); ++done) take(n, js.per_pod, idx);
    if (done == js.pods) {
      jobs_[idx].placement = {{n, js.pods}};
      return true;
    }
    for (std::int32_t p = 0; p < done; ++p) give(n, js.per_pod, idx);
    return false;
  }

  void apply_event(const event_spec& ev, std::vector<failed_expectation>& failures) {
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
  void apply_event(const event_spec& ev) {
    if (ev.type == "node_add") {
      node_spec n;
      n.name = ev.body["node"]["name"].get<std::string>();
      n.allocatable = parse_resource_list(ev.body["node"].value("allocatable", json::object()), sc_.registry,
                                          ev.path + ".node.allocatable");
      if (ev.body["node"].contains("labels"))
        for (auto it = ev.body["node"]["labels"].begin(); it != ev.body["node"]["labels"].end(); ++it)
          n.labels[it.key()] = it.value().get<std::string>();
      capacity_.add_in_place(n.allocatable);
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
        // jobs with pods there are stopped and go back to pending (not counted as preemptions)
        std::vector<std::size_t> hit;
        for (auto idx : running_)
          for (const auto& pl : jobs_[idx].placement)
            if (pl.first == n) hit.push_back(idx);
        for (auto idx : hit) {
          stop(idx, job_state::preempted_pending);
          --preemptions_;
          --tenants_[jobs_[idx].tenant].preempted;
          preemption_marks_.pop_back();
          jobs_[idx].last_reason = "host.node_removed";
        }
        nodes_[n].alive = false;
        tree_update(n);
        capacity_.sub_in_place(nodes_[n].spec.allocatable);
      }
    } else if (ev.type == "delete") {
      const auto idx = index_.at(ev.body["job"].get<std::string>());
      auto& jr = jobs_[idx];
      if (jr.state == job_state::running) stop(idx, job_state::deleted);
      if (jr.state == job_state::pending || jr.state == job_state::preempted_pending) {
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

  // --- reload events and quota shrink (docs/scenario-format.md) -------------
  // Running jobs in the order they started (then file order).
  [[nodiscard]] std::vector<std::size_t> running_by_start() const {
    std::vector<std::size_t> out(running_.begin(), running_.end());
    std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
      return jobs_[a].last_start != jobs_[b].last_start ? jobs_[a].last_start < jobs_[b].last_start : a < b;
    });
    return out;
  }
  // A model built from `spec` that has seen the replay's jobs: every job
  // loaded, the pending and running ones arrived. Running jobs not committed.
  model_instance fresh_model(const policy_spec& spec) {
    model_instance m = model_kinds().at(spec.model).make(spec, sc_);
    for (const auto& jr : jobs_)
      if (jr.state == job_state::pending || jr.state == job_state::preempted_pending) m.policy.pending_added(jr.j);
    return m;
  }
  // The running jobs policy `i`'s current configuration would not admit:
  // the running jobs offered to a fresh model in order (priority descending,
  // then oldest start first); the ones it denies. So the victims are the
  // lowest-priority, newest work beyond the quota (Kueue's shrink order).
  std::vector<std::size_t> shrink_victims(std::size_t i) {
    model_instance m = fresh_model(policy_now_.at(i));
    std::vector<std::size_t> order = running_by_start();
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return jobs_[a].spec->priority > jobs_[b].spec->priority; });
    std::vector<std::size_t> out;
    for (auto idx : order) {
      if (m.policy.check(jobs_[idx].j).denied()) {
        out.push_back(idx);
        continue;
      }
      try {
        m.policy.commit(jobs_[idx].j);
      } catch (const commit_denied_error&) {
        out.push_back(idx);
      }
    }
    std::reverse(out.begin(), out.end());  // eviction order: lowest priority first, newest first
    return out;
  }
  // A reload event: the policy's new configuration, all or nothing. Models
  // that reload in place keep their usage; the others are rebuilt aside and
  // the running jobs committed into them (in start order) before the swap.
  void reload_policy(const event_spec& ev) {
    const std::size_t i = ev.policy;
    if (policy_now_.size() < sc_.policies.size()) policy_now_ = sc_.policies;
    policy_spec spec{sc_.policies[i].model, ev.policy_body, ev.path};
    model_instance m = fresh_model(spec);
    if (m.reload_into) {
      m.reload_into(engine_.model(i));
    } else {
      for (auto idx : running_by_start()) {
        try {
          m.policy.commit(jobs_[idx].j);
        } catch (const error& e) {
          throw state_error(error_id::state_conflict, ev.path + ": reload of " + spec.model + " at " +
                                                          format_duration(now_) + ": running job '" + jobs_[idx].j.id +
                                                          "' cannot be kept in the new model: " + e.what());
        }
      }
      engine_.model(i) = std::move(m.policy);
    }
    models_[i].introspect = std::move(m.introspect);
    policy_now_[i] = std::move(spec);
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
  // Evictions whose grace ended now: what the new quota would not admit is
  // stopped and requeued, as preempted jobs are. True when something happened.
  bool shrink_due() {
    bool any = false;
    for (auto it = shrink_at_.begin(); it != shrink_at_.end();) {
      if (it->second != now_) {
        ++it;
        continue;
      }
      const std::size_t i = it->first;
      it = shrink_at_.erase(it);
      for (auto idx : shrink_victims(i)) {
        stop(idx, job_state::preempted_pending);
        jobs_[idx].last_reason = "shrink: evicted after the grace period; policies[" + std::to_string(i) + "] (" +
                                 policy_now_[i].model + ") was lowered below its usage";
        preemption_marks_.back().cause = jobs_[idx].last_reason;
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

  // "model.rule [entity]; ..." into s (its buffer reused)
  static void reason_text(const decision& d, std::string& s) {
    s.clear();
    for (const auto& r : d.reasons()) {
      if (!s.empty()) s += "; ";
      s.append(r.model).append(".").append(r.rule);
      if (!r.entity.empty()) s.append(" [").append(r.entity).append("]");
    }
  }
  static std::string reason_text(const decision& d) {
    std::string s;
    reason_text(d, s);
    return s;
  }
  // one more denial of a tenant by model.rule (no allocation once the key exists)
  void count_denial(const std::string& tenant, std::string_view model, std::string_view rule) {
    auto& counts = tenants_[tenant].denials;
    key_buf_.assign(model).append(".").append(rule);
    if (auto it = counts.find(key_buf_); it != counts.end())
      ++it->second;
    else
      counts.emplace(key_buf_, 1);
  }

  bool try_admit(std::size_t idx) {
    auto& jr = jobs_[idx];
    const decision d = engine_.check(jr.j);
    if (d.denied()) {
      reason_text(d, jr.last_reason);
      bool agnostic = true, fixed = false;
      for (const auto& r : d.reasons()) {
        count_denial(jr.tenant, r.model, r.rule);
        agnostic = agnostic && user_agnostic(r.model);
        fixed = fixed || permanent(r);
      }
      if (agnostic) coarse_denied_ = true;
      if (fixed) shape_fixed_[jr.shape] = true;
      return false;
    }
    if (!place(idx)) {
      coarse_denied_ = true;
      jr.last_reason = "host.no_node_fits";
      count_denial(jr.tenant, "host", "no_node_fits");
      return false;
    }
    const decision a = engine_.admit(jr.j);
    if (a.denied()) {  // cannot happen after an allowed check on the same state; stay safe
      unplace(idx);
      jr.last_reason = reason_text(a);
      return false;
    }
    if (!jr.last_reason.empty()) jr.last_denial = std::move(jr.last_reason);
    jr.last_reason.clear();
    start(idx);
    return true;
  }

  // Candidates when the quotas allow the job but no node has room. Who may go
  // is the models' node-level rule (quota/capabilities.hpp: nos's
  // SelectVictimsOnNode candidates, Volcano's and KAI's preempt predicates),
  // or kube-scheduler's when no composed model has one (lower priority,
  // preemptible). A one-pod job (or one with shared allocations: all its pods
  // and the allocations not made yet, only on their node once made) looks at
  // one node at a time: the first node where removing every candidate on it
  // makes room; on it the minimal set, reprieving the most important
  // candidates (higher priority, then older) while it still fits. Returned
  // lowest importance first.
  std::vector<std::size_t> placement_victims(std::size_t idx) {
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
    resource_vector need = jr.spec->per_pod;
    std::size_t only = npos;
    if (!jr.shared.empty()) {
      for (const auto& e : jr.spec->per_pod) need.set(e.id, quota::detail::checked_mul<amount>(e.value, jr.spec->pods));
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
      for (const auto& [m, pods] : jobs_[v].placement)
        if (m == n)
          for (std::int32_t p = 0; p < pods; ++p) r.add_in_place(jobs_[v].spec->per_pod);
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

  bool try_preempt_for(std::size_t idx) {
    auto& jr = jobs_[idx];
    // buffers kept across calls (a trial runs for every denied head of a full pass)
    auto& vs = victims_buf_;
    vs.clear();
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
    if (cand.empty() && jr.last_reason == "host.no_node_fits") cand = placement_victims(idx);
    if (cand.empty()) return false;
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
      if (engine_.check(jr.j).allowed() && place(idx)) {
        unplace(idx);
        // commit: the removed jobs are preempted for real (already out of the engine and nodes)
        for (auto& [ri, pl] : removed) {
          retire(ri, job_state::preempted_pending);
          jobs_[ri].last_reason = "preempted for " + jr.j.id;
          preemption_marks_.back().preemptor = idx;
          preemption_marks_.back().cause = cause;
        }
        return try_admit(idx);
      }
    }
    // never fitted: put everything back; a model that no longer admits a
    // victim as it was (its state moved on) makes it a preemption after all
    for (auto it = removed.rbegin(); it != removed.rend(); ++it) {
      replace_on(it->first, it->second);
      if (engine_.admit(jobs_[it->first].j).denied()) {
        unplace(it->first);
        retire(it->first, job_state::preempted_pending);
        jobs_[it->first].last_reason = "preempted: not re-admitted after a failed preemption for " + jr.j.id;
        preemption_marks_.back().preemptor = idx;
        preemption_marks_.back().cause = "not re-admitted after a failed preemption (" + cause + ")";
      }
    }
    return false;
  }

  // A job's index by id (victims name jobs by id), or npos.
  std::size_t job_index(const std::string& id) const {
    const auto it = index_.find(id);
    return it == index_.end() ? npos : it->second;
  }

  // The chart resource the job requests, added to or taken from its tenant's pending demand.
  void count_pending(std::size_t idx, bool add) {
    auto& jr = jobs_[idx];
    const amount v = jr.j.request.get(chart_);
    jr.ts->pending = add ? quota::detail::checked_add(jr.ts->pending, v) : jr.ts->pending - v;
    pending_demand_ = add ? quota::detail::checked_add(pending_demand_, v) : pending_demand_ - v;
  }
  void pend(std::size_t idx) {
    jobs_[idx].pended_pass = pass_;
    pending_.insert(pending_key(idx));
    count_pending(idx, true);
    const std::size_t sh = jobs_[idx].shape;
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
  void unpend(std::size_t idx) {
    if (pending_.erase(pending_key(idx)) == 1) count_pending(idx, false);
    const std::size_t sh = jobs_[idx].shape;
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

  // The last denial reason of a job: its own, or that of an identical job
  // denied in a later pass (the job itself was skipped then).
  // Or, when the job's queue was held back by a head that waits (StrictFIFO)
  // in a later pass still, that head.
  [[nodiscard]] const std::string& reason_of(std::size_t idx) const {
    const auto& jr = jobs_[idx];
    if (jr.state != job_state::pending && jr.state != job_state::preempted_pending) return jr.last_reason;
    std::uint64_t latest = jr.tried_pass;
    const std::string* why = &jr.last_reason;
    if (jr.shape < shape_pass_.size() && shape_pass_[jr.shape] > latest) {
      latest = shape_pass_[jr.shape];
      why = &shape_reason_[jr.shape];
    }
    if (const std::size_t q = queue_of_[idx]; q < qblock_pass_.size() && qblock_pass_[q] > latest)
      why = &qblock_reason_[q];
    return *why;
  }
  // Queue q waits behind its head `head` in this pass (the rest of the queue is not tried).
  void block_queue(std::size_t q, std::size_t head) {
    if (qblock_pass_.size() < queue_count_) {
      qblock_pass_.resize(queue_count_, 0);
      qblock_reason_.resize(queue_count_);
    }
    qblock_pass_[q] = pass_;
    qblock_reason_[q].assign("host.behind_queue_head [").append(jobs_[head].j.id).append("]");
  }

  bool attempt(std::size_t idx) {
    auto& jr = jobs_[idx];
    if (shape_fixed_[jr.shape]) return false;  // denied for good: its shape's reason stands
    if (coarse_pass_[jr.coarse] == pass_) {
      // a job differing only in user/groups was denied in this pass by models that do not read them
      shape_pass_[jr.shape] = pass_;
      shape_reason_[jr.shape] = coarse_reason_[jr.coarse];
      return false;
    }
    // the reason it waited so far (an identical job's, its queue head's) becomes its own
    if (const std::string& why = reason_of(idx); &why != &jr.last_reason) jr.last_reason = why;
    jr.tried_pass = pass_;
    coarse_denied_ = false;
    bool ok = try_admit(idx);
    const bool coarse = !ok && coarse_denied_;
    if (!ok && sc_.preemption) ok = try_preempt_for(idx);
    if (ok) {
      unpend(idx);
    } else {
      shape_pass_[jr.shape] = pass_;
      shape_reason_[jr.shape] = jr.last_reason;
      if (coarse) {
        coarse_pass_[jr.coarse] = pass_;
        coarse_reason_[jr.coarse] = jr.last_reason;
      }
    }
    return ok;
  }

  // One pass over the pending jobs. Each job waits in a queue of the ordering
  // model (one queue when none orders), in rank order; the queues' heads
  // compete by the model's compare_heads, asked again at every pick since
  // shares move with every admission (Volcano's and KAI's allocate loops,
  // Kueue's heads). Jobs of the same shape wait in rank order too, so a pass
  // walks the heads of the shapes: once a shape's head is denied, the rest
  // of that shape is skipped for this pass (usage only grows within a pass).
  // When nothing was freed since the last pass (only arrivals), only the new
  // jobs can be admitted. Jobs pended during the pass (preempted victims)
  // wait for the next one, as in a snapshot of the queue. A pass is a
  // scheduling cycle for models that know cycles (quota::cycle_aware): each
  // denied head is reported, and what a model holds for it lasts to the end.
  void schedule(bool full) {
    ++pass_;
    engine_.begin_cycle();
    struct cycle_end {
      engine& e;
      ~cycle_end() { e.end_cycle(); }
    } const cycle_guard{engine_};
    if (shape_pass_.size() < shapes_.size()) {
      shape_pass_.resize(shapes_.size(), 0);
      shape_reason_.resize(shapes_.size());
      shape_fixed_.resize(shapes_.size(), false);
    }
    if (coarse_pass_.size() < coarse_shapes_.size()) {
      coarse_pass_.resize(coarse_shapes_.size(), 0);
      coarse_reason_.resize(coarse_shapes_.size());
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
      for (const std::size_t shape : live_shapes_)
        if (!shape_fixed_[shape]) push(*by_shape_[shape].begin());
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
      const std::size_t shape = jr.shape;
      if (!full && (jr.state != job_state::pending || shape_pass_[shape] == pass_)) continue;
      if (!attempt(k.idx)) {  // the rest of this shape is skipped for this pass
        if (jr.tried_pass == pass_) engine_.head_denied(jr.j);
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

  // a step series: a new point when the value changes (the same instant's point overwritten)
  void push_sample(std::vector<sample>& series, amount v) const {
    if (!series.empty() && series.back().v == v) return;
    if (!series.empty() && series.back().t == now_)
      series.back().v = v;
    else
      series.push_back({now_, v});
  }
  void record_samples() {
    for (auto& [name, t] : tenants_) {
      push_sample(t.samples, usage_[name].get(chart_));
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

  // --- invariants (run_options::check_invariants) ----------------------------
  // Recomputed from the running jobs' placements, not from the nodes' free
  // vectors, so a bookkeeping slip in take/give shows too.
  //
  // Cost per instant: O(nodes x resources + GPU devices + pods of the running
  // jobs). Jobs that do not run are not visited at every instant (visiting
  // every job would make a checked replay quadratic in the number of jobs): a
  // pod a node lists must belong to a running job placed there, and a device
  // held by anything else breaks held + free == 1000; check_outcomes looks at
  // every job once at the end.
  void check_capacity(std::vector<failed_expectation>& out) const {
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
        amount* row = used.data() + static_cast<std::size_t>(n) * nr;
        for (const auto& e : jr.spec->per_pod)
          row[e.id] = quota::detail::checked_add(row[e.id], quota::detail::checked_mul<amount>(e.value, k));
        if (n < nn) inv_pods_[n] += static_cast<std::size_t>(k);
      }
      if (pods != jr.spec->pods)
        out.push_back({"invariant", now_, "job " + jr.j.id + " runs " + std::to_string(jr.spec->pods) + " pods",
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
  // A shared allocation's use of its node, for check_capacity.
  static void add_shared_use(const shared_state& st, std::vector<amount>& used,
                             std::vector<std::vector<std::int64_t>>& dev, std::size_t nr) {
    if (st.node == npos) return;
    amount* row = used.data() + st.node * nr;
    for (const auto& e : st.amount) row[e.id] = quota::detail::checked_add(row[e.id], e.value);
    for (const auto d : st.devices)
      if (d < dev[st.node].size()) dev[st.node][d] += 1000;
  }
  // Every submitted, not deleted job ran or says why it waits; a job holds
  // pods or devices exactly when it runs, and runs exactly when it is in the
  // running set (once, at the end: O(jobs)).
  void check_outcomes(std::vector<failed_expectation>& out) const {
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

  // --- expectations ---------------------------------------------------------
  void check(const expectation& x, std::vector<failed_expectation>& out) {
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
      if (b.contains("reason")) {
        const std::string want = b["reason"].get<std::string>();
        const std::string& why = reason_of(index_.at(jr.j.id));
        if (why.find(want) == std::string::npos)
          fail("job " + jr.j.id + " reason containing '" + want + "'", "'" + why + "'");
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

  // --- report ---------------------------------------------------------------
  // An amount of the chart resource in its shown units (divided by 10^scale).
  [[nodiscard]] std::string shown_amount(amount v) const {
    double unit = 1;
    for (int i = 0; i < sc_.registry.scale(chart_); ++i) unit *= 10;
    const double d = static_cast<double>(v) / unit;
    return d == std::floor(d) && std::fabs(d) < 1e15 ? std::to_string(static_cast<std::int64_t>(d)) : svg_num(d);
  }
  static std::string wait_text_of(const json& totals, const char* p) { return totals["wait"][p].get<std::string>(); }
  // Every model's introspection, by policy name.
  [[nodiscard]] json introspect_models() const {
    json models = json::object();
    for (std::size_t i = 0; i < models_.size(); ++i)
      if (models_[i].introspect)
        models[std::string(engine_.model(i).policy_name())] = models_[i].introspect(engine_.model(i));
    return models;
  }
  static std::int64_t percentile(std::vector<std::int64_t> v, int p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto rank = (static_cast<std::size_t>(p) * v.size() + 99) / 100;  // nearest rank
    return v[std::max<std::size_t>(rank, 1) - 1];
  }

  json report(const std::vector<failed_expectation>& failures) {
    json r;
    r["scenario"] = sc_.name;
    // how the host scheduled: the model that ordered pending jobs, and the cycle
    const auto om = engine_.order_model();
    r["scheduler"] = json{{"order", ordered_ && om ? json(sc_.policies.at(*om).model) : json("priority")},
                          {"cycle_ms", sc_.cycle_ms}};
    json pols = json::array();
    for (std::size_t i = 0; i < models_.size(); ++i) pols.push_back(std::string(engine_.model(i).policy_name()));
    r["policies"] = pols;
    r["end_ms"] = end_ms_;
    r["end"] = format_duration(end_ms_);
    r["chart_resource"] = sc_.registry.name(chart_);
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
      json jj{{"id", jr.j.id},
              {"tenant", jr.tenant},
              {"submitted_ms", jr.spec->submit_ms},
              {"state", state_name(jr.state)}};
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
      if (jr.state == job_state::finished) ++finished;
      if (jr.preempted) jj["preempted"] = jr.preempted;
      // why it waits now, else why it waited before its latest start
      if (!why.empty())
        jj["reason"] = why;
      else if (!jr.last_denial.empty())
        jj["reason"] = jr.last_denial;
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

 public:
  /// The chart as SVG (docs/scenario-format.md "Report"): the tenants'
  /// usage stacked against the cluster capacity, every preemption as a red
  /// mark with its victim, preemptor and reason, then one lane per tenant
  /// with its usage, pending demand and reference lines.
  [[nodiscard]] std::string svg() const {
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
           (shown == std::floor(shown) ? std::to_string(static_cast<std::int64_t>(shown)) : svg_num(shown)) +
           "</text>\n";
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
          s += "<line class=\"reference\" x1=\"" + N(L) + "\" y1=\"" + N(y) + "\" x2=\"" + N(L + pw) + "\" y2=\"" +
               N(y) + "\" stroke=\"" + c + "\" stroke-dasharray=\"6,4\"><title>" + svg_text(name) + ": " +
               svg_text(label) + " " + amount_text(v) + "</title></line>\n";
          s += "<text x=\"" + N(L + pw + 6) + "\" y=\"" + N(label_y) + "\" fill=\"" + c + "\">" + svg_text(label) +
               " " + amount_text(v) + "</text>\n";
        }
      }
      s += "</g>\n";
      lane_y += lane_h + lane_gap;
    }
    s += "</svg>\n";
    return s;
  }

 private:
  template <class FX, class FY>
  static std::string step_path(const std::vector<sample>& pts, FX X, FY Y, std::int64_t t_end, const char* color,
                               const char* extra) {
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

  // the scenario and models as given, for the replay up to the peak (shared, so a copy of this is cheap)
  std::shared_ptr<const scenario> sc0_;
  std::shared_ptr<const std::vector<model_instance>> models0_;
  scenario sc_;
  std::vector<model_instance> models_;
  engine engine_;
  std::vector<node_state> nodes_;
  std::vector<job_run> jobs_;
  std::unordered_map<std::string, std::size_t> index_;  // job id -> index (the last of equal ids)
  std::set<pkey> pending_;
  std::int64_t admissions_total_ = 0;  // every admission so far (wake-up bookkeeping)
  std::set<std::size_t> running_;
  std::set<std::pair<std::int32_t, std::size_t>> running_by_priority_;
  std::vector<std::multiset<std::size_t>> node_jobs_;  // one entry per pod
  std::vector<amount> tree_, tcpu_, tmem_;
  std::size_t tree_size_ = 1;
  std::multimap<std::int64_t, std::size_t> finishes_;
  std::map<std::string, resource_vector> usage_;
  std::map<std::string, tenant_stats> tenants_;
  std::vector<sample> util_samples_, util_cap_, frag_samples_;
  std::int64_t fragmented_ = 0;
  std::vector<preemption_mark> preemption_marks_;
  std::vector<policy_spec> policy_now_;            // each policy's configuration after reloads
  std::map<std::size_t, std::int64_t> shrink_at_;  // policy -> eviction deadline (evict_after_grace)
  json shrink_log_ = json::array();                // evictions by quota shrink, for the report
  std::int64_t reloads_ = 0;
  resource_vector capacity_;
  resource_id chart_ = resources::nvidia_gpu;
  std::int64_t now_ = 0, end_ms_ = 0, preemptions_ = 0;
  bool freed_ = false;
  std::vector<std::size_t> arrivals_;
  std::vector<std::size_t> dev_scratch_;
  std::map<std::string, std::size_t> shapes_;
  std::vector<std::uint64_t> shape_pass_;
  std::vector<std::string> shape_reason_;  // by shape, as long as shape_pass_
  std::string key_buf_;                    // count_denial's key
  std::vector<bool> shape_fixed_;          // shapes denied for good (permanent())
  std::map<std::string, std::size_t> coarse_shapes_;
  std::vector<std::uint64_t> coarse_pass_;
  std::vector<std::string> coarse_reason_;
  bool coarse_denied_ = false;
  std::vector<std::set<pkey>> by_shape_;       // pending jobs by shape id, in key order
  std::vector<std::size_t> live_shapes_;       // the shapes with pending jobs (any order)
  std::vector<std::size_t> live_pos_;          // a shape's place in live_shapes_, or npos
  std::vector<std::vector<pkey>> qheads_;      // schedule's heap per queue
  std::vector<std::size_t> active_;            // queues with heads in this pass
  std::vector<const job*> head_jobs_;          // schedule(): the queues' heads offered to select_head
  std::vector<shared_state> shared_;           // shared allocations (a claim's devices), by first use
  bool ordered_ = false;                       // a model orders pending work
  std::vector<std::size_t> queue_of_, rank_;   // per job: its queue, its rank inside it
  std::vector<std::size_t> queue_first_rank_;  // per queue: the smallest rank of its jobs
  std::vector<std::uint64_t> qblock_pass_;     // per queue: the last pass its head held it back
  std::vector<std::string> qblock_reason_;     // per queue: "host.behind_queue_head [head]"
  amount pending_demand_ = 0;                  // chart resource requested by the pending jobs
  std::string summary_;                        // the chart's subtitle: the report's key figures
  // the instant of peak contention (most chart resource pending, the first such)
  std::int64_t peak_at_ = -1;
  amount peak_demand_ = 0;
  std::size_t peak_jobs_ = 0;
  json peak_models_;
  std::size_t queue_count_ = 1;
  std::uint64_t pass_ = 0;
  // trial preemption scratch (try_preempt_for)
  std::vector<victim> victims_buf_;
  std::vector<std::size_t> cand_buf_;
  std::vector<std::uint64_t> victim_seen_;  // per job: the trial that last listed it
  std::uint64_t victim_round_ = 0;
  // scratch of check_capacity (the invariant check at every event)
  mutable std::vector<amount> inv_used_;   // node x resource
  mutable std::vector<amount> inv_alloc_;  // node x resource: allocatable
  mutable std::vector<std::vector<std::int64_t>> inv_dev_;
  mutable std::vector<std::size_t> inv_pods_;  // per node: pods of the running jobs
};

}  // namespace quota::sim::detail
