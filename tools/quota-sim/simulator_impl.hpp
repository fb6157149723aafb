// SPDX-License-Identifier: Apache-2.0
// The state of quota-sim's replay: the class, its members and the declarations
// of its parts (sim_replay, sim_placement, sim_reload, sim_invariants and
// sim_report .hpp). Included only by simulator.cpp, so it is compiled once.
// Docs: docs/architecture.md ("Layout")
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
#include <string_view>
#include <unordered_map>
#include <utility>
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
    shape_ids_.reserve(sc_.jobs.size());
    index_.reserve(sc_.jobs.size());
    for (std::size_t i = 0; i < sc_.jobs.size(); ++i) {
      const auto& js = sc_.jobs[i];
      job_run jr;
      jr.spec = &sc_.jobs[i];
      jr.j = job_of(js, js.created_ms);
      jr.tenant = tenant_of(js);
      shape_ids_.push_back({shape_of(js), coarse_shape_of(js)});
      index_[js.id] = i;
      jobs_.push_back(std::move(jr));
      tenants_[jobs_.back().tenant];
    }
    for (auto& jr : jobs_) jr.ts = &tenants_[jr.tenant];  // map nodes stay put
    for (auto& [name, t] : tenants_) t.usage = &usage_[name];
    chart_ = sc_.registry.find(sc_.chart_resource).value_or(resources::nvidia_gpu);
    for (const auto& n : nodes_) capacity_.add_in_place(n.spec.allocatable);
    // the models that divide the cluster's total start from it (and the engine
    // keeps it, to undo a later total one of them refuses)
    engine_.set_cluster_capacity(capacity_);
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
  run_result run(std::int64_t until_ms = -1, const std::function<void(std::size_t, std::size_t)>& progress = {});
  run_result run(std::int64_t until_ms, const std::function<void(std::size_t, std::size_t)>& progress,
                 const run_options& opt);

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
    resource_vector* usage = nullptr;  // its entry of usage_
  };
  // One preemption (or eviction): who went, for whom, and why.
  struct preemption_mark {
    std::int64_t t;
    std::size_t victim;
    std::size_t preemptor;  // npos: none (a quota shrink, a failed trial)
    std::string cause;
  };
  // One eviction of a running job (docs/scenario-format.md "Report":
  // evictions): a preemption, a quota shrink, a node removal. The rule that
  // took it: the quota::victim a model named it with, or the host's own.
  struct eviction {
    std::int64_t t;
    std::size_t victim;
    std::size_t preemptor;  // npos: none (a quota shrink, a node removal)
    std::string model, rule, entity, upstream_reason;
  };
  // The models' reasons behind a job's reason text, kept as they came (copied
  // into buffers reused from denial to denial; the text is built only when
  // read), without their resource_name (a model's view that may not outlive a
  // reload): the scenario's registry names the resource when the text is built.
  using refusals = std::vector<reason>;
  // One refusal as expectations and the report read it: its model, rule and
  // entity, and its full text (quota::append_text).
  struct refusal {
    std::string model, rule, entity, text;
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
    refusals last_refusals;   // last_reason's models' refusals (empty: a host reason)
    std::string last_denial;  // why it waited before its latest start (report: reason)
    std::string wait_reason;  // why it waited before its first start (report: wait_reason)
    tenant_stats* ts = nullptr;
    int preempted = 0;
    std::uint64_t tried_pass = 0;
    std::uint64_t pended_pass = 0;
    std::vector<std::size_t> devices, device_nodes;               // GPU devices held (device index, node)
    std::vector<std::size_t> shared;                              // its shared allocations (shared_ index)
    std::multimap<std::int64_t, std::size_t>::iterator finish{};  // its entry in finishes_
    bool has_finish = false;
    // admitted partially (fewer pods than asked): the job as the models hold
    // it, whole at those counts; null: it runs (or would run) whole
    std::unique_ptr<job> partial;
  };
  // The job as it runs (or is being placed): partially admitted, or whole.
  static const job& running_job(const job_run& jr) noexcept { return jr.partial ? *jr.partial : jr.j; }
  // f(per_pod, count) for each group of identical pods the job runs, in pod order.
  template <class F>
  static void each_pod_group(const job_run& jr, F&& f) {
    const job& rj = running_job(jr);
    if (rj.pod_sets.empty()) {
      f(jr.spec->per_pod, rj.pods);
      return;
    }
    for (const auto& ps : rj.pod_sets) f(ps.per_pod, ps.count);
  }
  // f(node, per_pod, k) for each run of k identical pods of `pl` (a placement
  // of the job's pods in pod order).
  template <class F>
  static void each_placed(const job_run& jr, const std::vector<std::pair<std::size_t, std::int32_t>>& pl, F&& f) {
    std::size_t at = 0;
    std::int32_t into = 0;  // pods of entry `at` already visited
    each_pod_group(jr, [&](const resource_vector& per_pod, std::int32_t count) {
      while (count > 0 && at < pl.size()) {
        const std::int32_t k = std::min(count, pl[at].second - into);
        f(pl[at].first, per_pod, k);
        count -= k;
        into += k;
        if (into == pl[at].second) {
          ++at;
          into = 0;
        }
      }
    });
  }
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
    for (const auto& ps : js.pod_sets) {
      k += ps.name + ':' + std::to_string(ps.count) + '/' + std::to_string(ps.min_count) + ':';
      for (const auto& e : ps.per_pod) k += std::to_string(e.id) + '=' + std::to_string(e.value) + ',';
      k += ';';
    }
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
    return model == "volcano" || model == "volcano_capacity" || model == "elastic_quota" || model == "kai_fair_share" ||
           model == "kueue" || model == "sharing_pools";
  }
  // A denial no change of usage can lift: a fixed limit the request alone exceeds.
  static bool permanent(const reason& r) {
    return r.model == "yunikorn_limits" && (r.rule == "max_resources" || r.rule == "max_applications") &&
           r.limit >= 0 && r.requested > r.limit;
  }

  std::string tenant_of(const job_spec& js) const;

  // pending order inside a queue: the ordering model's compare_pending
  // (default: higher priority first, then submission time), then file order;
  // ranks are fixed when the replay is set up and when the ordering model is
  // reloaded (regroup_pending; the order must not depend on usage)
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
  void set_up_order();
  // Gives the models the cluster's new total before a node event changes
  // anything; a model's refusal becomes a state_error naming the event.
  void tell_capacity(const event_spec& ev, const resource_vector& total);
  // set_up_order again after the ordering model was reloaded (a LocalQueue
  // may feed another ClusterQueue now): the pending jobs keep their place in
  // time but take their new queue and rank.
  void regroup_pending();
  // The first cycle boundary at or after t (cycle mode).
  [[nodiscard]] std::int64_t next_boundary(std::int64_t t) const;

  bool selector_ok(const node_state& n, const job_spec& js) const;

  // --- nodes: free capacity, with a max tree over the chart resource --------
  // tree_[k] = the most of the chart resource free on any alive node below k
  // (tcpu_, tmem_: the same for cpu and memory); first-fit finds the first
  // node with enough of all three in O(log n) steps per skipped subtree.
  void tree_build();
  amount node_value(std::size_t n, resource_id r) const { return nodes_[n].alive ? nodes_[n].free.get(r) : -1; }
  void set_leaf(std::size_t n);
  void pull(std::size_t k);
  void tree_update(std::size_t n);
  struct need3 {
    amount chart, cpu, mem;
  };
  bool covers(std::size_t k, const need3& nd) const;
  // first node index >= from with enough chart resource, cpu and memory free,
  // or npos: walk up from the leaf, and down into right siblings that may hold one
  std::size_t tree_first(std::size_t from, const need3& nd) const;
  // the first leaf below k with enough of all three (maxima of different nodes may cover, no node does)
  std::size_t descend(std::size_t k, const need3& nd) const;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  // GPU fragmentation: free thousandths on devices that are partly used
  // (they can host only pods that fit the remainder).
  static std::int64_t frag_of(std::int32_t free) { return free > 0 && free < 1000 ? free : 0; }
  void set_device(std::size_t n, std::size_t d, std::int32_t v);

  void take(std::size_t n, const resource_vector& v, std::size_t job);
  void give(std::size_t n, const resource_vector& v, std::size_t job);

  // Devices for one pod on node n (best fit: the fullest devices that still
  // have room), or an empty list when they do not fit.
  // The result lives in a buffer reused by the next call.
  const std::vector<std::size_t>& pick_devices(std::size_t n, const gpu_request& g);
  // pick_devices would find devices (without building the list).
  bool devices_fit(std::size_t n, const gpu_request& g) const;
  bool node_fits(std::size_t n, const job_spec& js, const resource_vector& per_pod) const;

  std::optional<std::size_t> pick_node(const job_spec& js, const resource_vector& per_pod) const;

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
  void set_up_shared();
  // Whole free GPU devices of node n.
  std::int64_t whole_free_devices(std::size_t n) const;
  // `v` fits on node n now, and `whole` whole GPU devices are free on it (when it tracks devices).
  bool shared_fits(std::size_t n, const resource_vector& v, std::int64_t whole) const;
  void take_shared(std::size_t n, std::size_t sh);
  void give_shared(std::size_t sh);
  // A job with shared allocations: all its pods on one node, the node its
  // allocated ones are on, else (first-fit or best-fit) one with room for the
  // pods and the allocations not made yet.
  bool place_shared(std::size_t idx);
  // The job stops holding its shared allocations; the last holder gives them back.
  void drop_shared(std::size_t idx);

  // Places all pods of the job; on failure nothing is placed.
  bool place(std::size_t idx);
  // the job runs the pod counts of a partial admission
  static void set_partial(job_run& jr, const std::vector<std::int32_t>& counts);
  std::vector<std::int32_t> counts_buf_;
  void unplace(std::size_t idx);
  void replace_on(std::size_t idx, const std::vector<std::pair<std::size_t, std::int32_t>>& pl);

  void start(std::size_t idx);

  // Stops a running job: finished, deleted, or preempted (back to pending).
  void stop(std::size_t idx, job_state to);
  // The bookkeeping of stop() for a job already released from the engine and its nodes.
  void retire(std::size_t idx, job_state to);

  // --- initial state: jobs running at time 0 (docs/scenario-format.md) ------
  // In file order, before the first instant: each is placed (on its `node`
  // when named, else as the placement rule picks) and committed in every
  // model without an admission check (engine::restore), as a host restoring
  // the pods it finds bound. A job that fits no node, or that a model cannot
  // hold at all, is an error naming the job; nothing runs.
  void set_up_running();
  // Places all pods of the job on node n; on failure nothing is placed.
  bool place_on(std::size_t idx, std::size_t n);

  void apply_event(const event_spec& ev, std::vector<failed_expectation>& failures);
  void apply_event(const event_spec& ev);

  // --- reload events and quota shrink (docs/scenario-format.md) -------------
  // Running jobs in the order they started (then file order).
  [[nodiscard]] std::vector<std::size_t> running_by_start() const;
  // A model built from `spec` that has seen the replay's jobs: every job
  // loaded, the pending and running ones arrived. Running jobs not committed.
  model_instance fresh_model(const policy_spec& spec);
  // The running jobs policy `i`'s current configuration would not admit:
  // the running jobs offered to a fresh model in order (priority descending,
  // then oldest start first); the ones it denies. So the victims are the
  // lowest-priority, newest work beyond the quota (Kueue's shrink order).
  std::vector<std::size_t> shrink_victims(std::size_t i);
  // A reload event: the policy's new configuration, all or nothing. Models
  // that reload in place keep their usage; the others are rebuilt aside and
  // the running jobs committed into them (in start order) before the swap.
  void reload_policy(const event_spec& ev);
  // Evictions whose grace ended now: what the new quota would not admit is
  // stopped and requeued, as preempted jobs are. True when something happened.
  bool shrink_due();

  // "model.rule [entity]; ..." into s (its buffer reused)
  static void reason_text(const decision& d, std::string& s);
  // d's reasons into out (its buffers reused)
  static void store_refusals(const decision& d, refusals& out);
  // A stored reason's full text (quota::append_text), its resource named by the scenario.
  void reason_full_text(const reason& r, std::string& out) const;
  static std::string reason_text(const decision& d);
  // one more denial of a tenant by model.rule (no allocation once the key exists)
  void count_denial(tenant_stats& tenant, std::string_view model, std::string_view rule);

  bool try_admit(std::size_t idx);

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
  std::vector<std::size_t> placement_victims(std::size_t idx);

  bool try_preempt_for(std::size_t idx);
  // An eviction for the report and the expectations.
  void log_eviction(std::size_t victim, std::size_t preemptor, std::string_view model, std::string_view rule,
                    std::string_view entity, std::string_view upstream_reason = {});
  // The evictions in the report's order: time, then the victims' file order.
  [[nodiscard]] std::vector<const eviction*> evictions_in_order() const;
  [[nodiscard]] std::string eviction_text(const eviction& e) const;

  // A job's index by id (victims name jobs by id), or npos.
  std::size_t job_index(const std::string& id) const;

  // The chart resource the job requests, added to or taken from its tenant's pending demand.
  void count_pending(std::size_t idx, bool add);
  void pend(std::size_t idx);
  void unpend(std::size_t idx);

  // The last denial reason of a job: its own, or that of an identical job
  // denied in a later pass (the job itself was skipped then).
  // Or, when the job's queue was held back by a head that waits (StrictFIFO)
  // in a later pass still, that head.
  [[nodiscard]] const std::string& reason_of(std::size_t idx) const { return *why_of(idx).first; }
  // reason_of's text and the models' refusals behind it (empty: a host reason).
  [[nodiscard]] std::pair<const std::string*, const refusals*> why_of(std::size_t idx) const;
  // The refusals of a job's reason now: the models' own, or the host's reason
  // as one refusal of model "host" (preempted for J: host.preempted [J]).
  [[nodiscard]] std::vector<refusal> refusals_of(std::size_t idx) const;
  // Queue q waits behind its head `head` in this pass (the rest of the queue is not tried).
  void block_queue(std::size_t q, std::size_t head);

  // What a pass's offer of a head came to: admitted, refused after a try, or
  // skipped without one (its shape refused for good, or its coarse shape in this pass).
  enum class offer { admitted, refused, skipped };
  offer attempt(std::size_t idx);

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
  void schedule(bool full);

  // a step series: a new point when the value changes (the same instant's point overwritten)
  void push_sample(std::vector<sample>& series, amount v) const;
  void record_samples();

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
  void check_capacity(std::vector<failed_expectation>& out) const;
  // A shared allocation's use of its node, for check_capacity.
  static void add_shared_use(const shared_state& st, std::vector<amount>& used,
                             std::vector<std::vector<std::int64_t>>& dev, std::size_t nr);
  // Every submitted, not deleted job ran or says why it waits; a job holds
  // pods or devices exactly when it runs, and runs exactly when it is in the
  // running set (once, at the end: O(jobs)).
  void check_outcomes(std::vector<failed_expectation>& out) const;

  // --- expectations ---------------------------------------------------------
  void check(const expectation& x, std::vector<failed_expectation>& out);
  // want[key] (a string) is `have`, or want has no such key.
  static bool field_is(const json& want, const char* key, const std::string& have);
  // The eviction has every field `want` gives (job: `job_id`).
  static bool eviction_is(const json& want, const eviction& e, const std::string& job_id);
  // "[a at 1h by b (kueue.reclaimWithinCohort [cq], InCohortReclamation), ...]", or "no evictions".
  [[nodiscard]] std::string evictions_text(const std::vector<const eviction*>& list) const;

  // --- report ---------------------------------------------------------------
  // An amount of the chart resource in its shown units (divided by 10^scale).
  [[nodiscard]] std::string shown_amount(amount v) const;
  static std::string wait_text_of(const json& totals, const char* p) { return totals["wait"][p].get<std::string>(); }
  // Every model's introspection, by policy name.
  [[nodiscard]] json introspect_models() const;
  // The answer to an expectation's query at this instant (sim_invariants.hpp).
  [[nodiscard]] json answer_query(const query_spec& q) const;
  static std::int64_t percentile(std::vector<std::int64_t> v, int p);

  json report(const std::vector<failed_expectation>& failures);

 public:
  /// The chart as SVG (docs/scenario-format.md "Report"): the tenants'
  /// usage stacked against the cluster capacity, every preemption as a red
  /// mark with its victim, preemptor and reason, then one lane per tenant
  /// with its usage, pending demand and reference lines.
  [[nodiscard]] std::string svg() const;

 private:
  template <class FX, class FY>
  static std::string step_path(const std::vector<sample>& pts, FX X, FY Y, std::int64_t t_end, const char* color,
                               const char* extra);

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
  std::vector<eviction> evictions_;
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
  // A denial's reason text and refusals as shapes and coarse shapes hold
  // them: written once, shared by every holder (a coarse denial passed on to
  // the shapes it covers is not copied), back in the pool's free list when
  // the last holder moves on (buffers reused).
  struct why_rec {
    std::string text;
    refusals list;
    std::uint32_t holders = 0;
  };
  static constexpr std::uint32_t no_why = static_cast<std::uint32_t>(-1);
  std::vector<why_rec> whys_;
  std::vector<std::uint32_t> free_whys_;
  // a record of `text` and `list`, held by nobody yet
  std::uint32_t new_why(const std::string& text, const refusals& list);
  // `slot` holds record w (w's holders counted first: a slot may take the record it holds)
  void hold_why(std::uint32_t& slot, std::uint32_t w);
  std::vector<std::uint64_t> shape_pass_;
  std::vector<std::uint32_t> shape_why_;  // by shape, as long as shape_pass_: its latest denial
  std::string key_buf_;                   // count_denial's key
  std::vector<bool> shape_fixed_;         // shapes denied for good (permanent())
  std::map<std::string, std::size_t> coarse_shapes_;
  std::vector<std::uint64_t> coarse_pass_;
  std::vector<std::uint32_t> coarse_why_;  // by coarse shape: its latest denial
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
  // per job: its shape and coarse shape, apart from the job's record so that
  // a pass skipping a head reads a few bytes instead of the record
  struct shape_pair {
    std::size_t shape, coarse;
  };
  std::vector<shape_pair> shape_ids_;
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
