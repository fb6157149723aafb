// SPDX-License-Identifier: Apache-2.0
// A reference host scheduler in one file: the loop a scheduler engineer copies,
// over Volcano queues, a per-queue GPU cap written here and running-job limits.
// Docs: docs/architecture.md ("The host loop")
#include <quota/engine.hpp>
#include <quota/fmt.hpp>
#include <quota/volcano.hpp>
#include <quota/running_limits.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {
using namespace quota;

// --- a policy in 30 lines: each queue may hold at most `cap` GPUs -------------
class gpu_cap {
 public:
  explicit gpu_cap(std::map<std::string, amount> caps) : caps_(std::move(caps)) {}
  std::string_view policy_name() const { return "gpu_cap"; }
  decision check(const job& j) const {
    const auto cap = caps_.find(j.queue);
    if (cap == caps_.end()) return decision::allow();
    const amount used = used_of(j.queue), want = j.request.get(resources::nvidia_gpu);
    if (used + want <= cap->second) return decision::allow();
    return decision::deny(
        {"gpu_cap", "over_cap", j.queue, resources::nvidia_gpu, "nvidia.com/gpu", want, used, cap->second, ""});
  }
  void commit(const job& j) {
    if (!held_.emplace(j.id, std::pair{j.queue, j.request.get(resources::nvidia_gpu)}).second)
      throw state_error(error_id::state_duplicate, j.id);
    used_[j.queue] += j.request.get(resources::nvidia_gpu);
  }
  void release(std::string_view id) {
    const auto it = held_.find(std::string(id));
    if (it == held_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    used_[it->second.first] -= it->second.second;
    held_.erase(it);
  }
  void victims(const job&, std::vector<victim>&) const {}  // a cap never asks for preemption
 private:
  amount used_of(const std::string& q) const { return used_.count(q) ? used_.at(q) : 0; }
  std::map<std::string, amount> caps_, used_;
  std::map<std::string, std::pair<std::string, amount>> held_;
};
static_assert(policy<gpu_cap>);

// --- the cluster --------------------------------------------------------------
struct node {
  std::string name;
  resource_vector free;
};
struct pod_job {
  job spec;  // what the engine sees (request = pods x per_pod)
  resource_vector per_pod;
  std::vector<std::size_t> placed;  // node index per pod
};

enum class fit_mode { first_fit, best_fit };

// Places every pod or none; returns the nodes used.
std::optional<std::vector<std::size_t>> place(std::vector<node>& nodes, const pod_job& j, fit_mode mode) {
  std::vector<std::size_t> chosen;
  for (std::int32_t p = 0; p < j.spec.pods; ++p) {
    std::optional<std::size_t> best;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (!fits(j.per_pod, nodes[n].free)) continue;
      const auto left = [&](std::size_t i) { return nodes[i].free.get(resources::nvidia_gpu); };
      if (!best || (mode == fit_mode::best_fit && left(n) < left(*best))) best = n;
      if (mode == fit_mode::first_fit) break;
    }
    if (!best) {
      for (auto n : chosen) nodes[n].free.add_in_place(j.per_pod);  // undo
      return std::nullopt;
    }
    nodes[*best].free.sub_in_place(j.per_pod);
    chosen.push_back(*best);
  }
  return chosen;
}
void unplace(std::vector<node>& nodes, pod_job& j) {
  for (auto n : j.placed) nodes[n].free.add_in_place(j.per_pod);
  j.placed.clear();
}

pod_job make_job(std::string id, std::string queue, std::int32_t priority, std::int32_t pods, amount gpus_per_pod) {
  pod_job j;
  j.spec.id = std::move(id);
  j.spec.queue = std::move(queue);
  j.spec.user = "user-of-" + j.spec.queue;
  j.spec.priority = priority;
  j.spec.pods = pods;
  j.per_pod.set(resources::cpu, 4000);
  j.per_pod.set(resources::nvidia_gpu, gpus_per_pod);
  j.spec.request.set(resources::cpu, 4000 * pods);
  j.spec.request.set(resources::nvidia_gpu, gpus_per_pod * pods);
  return j;
}
}  // namespace

int main() {
  std::vector<node> nodes;
  for (int i = 0; i < 2; ++i)
    nodes.push_back({"gpu-" + std::to_string(i), resource_vector{{resources::cpu, 64000}, {resources::nvidia_gpu, 8}}});

  // Volcano queues: prod has the higher Queue priority, so its head goes first
  volcano_queue_spec research{"research", 1, {}, {}, true, volcano_queue_state::open, "", 0, 0};
  volcano_queue_spec prod{"prod", 1, {}, {}, true, volcano_queue_state::open, "", 10, 0};
  resource_vector total{{resources::cpu, 128000}, {resources::nvidia_gpu, 16}};
  volcano_model queues({resources::cpu, resources::nvidia_gpu}, total, {research, prod});
  running_limits_policy limits;
  limits.set_limit(running_limits_policy::scope::queue, "research", 2);
  basic_engine<volcano_policy, gpu_cap, running_limits_policy> quotas(volcano_policy(std::move(queues)),
                                                             gpu_cap({{"research", 8}, {"prod", 12}}), limits);

  std::vector<pod_job> running, pending;
  auto submit = [&](std::vector<pod_job> jobs) {
    for (auto& j : jobs) {
      quotas.pending_added(j.spec);  // it waits from now on
      pending.push_back(std::move(j));
    }
  };
  // Tries one job; true when it runs. Preempted jobs join `requeued`.
  auto try_job = [&](pod_job& j, std::vector<pod_job>& requeued) {
    // 1. every model decides; 2. its pods go on nodes, all or none
    decision d = quotas.check(j.spec);
    auto placed = d.allowed() ? place(nodes, j, fit_mode::best_fit) : std::nullopt;
    std::vector<pod_job> taken;
    if (!placed) {
      // 3. preemption: the models' victims, else lower-priority running jobs, taken one at
      // a time until the job fits
      std::vector<victim> vs;
      quotas.victims(j.spec, vs);
      std::vector<std::string> ids;
      for (const auto& v : vs) ids.push_back(v.job_id);
      if (ids.empty())
        for (auto it = running.rbegin(); it != running.rend(); ++it)
          if (it->spec.priority < j.spec.priority) ids.push_back(it->spec.id);
      for (const auto& id : ids) {
        auto it = std::find_if(running.begin(), running.end(), [&](const pod_job& r) { return r.spec.id == id; });
        if (it == running.end()) continue;
        quotas.release(it->spec.id);
        quotas.pending_added(it->spec);  // a victim waits again: its demand stays
        unplace(nodes, *it);
        taken.push_back(std::move(*it));
        running.erase(it);
        d = quotas.check(j.spec);
        if (d.allowed() && (placed = place(nodes, j, fit_mode::best_fit))) break;
      }
      if (!placed) {  // never fitted: put the victims back as they were
        for (auto& t : taken) {
          t.placed = *place(nodes, t, fit_mode::best_fit);
          (void)quotas.admit(t.spec);
          running.push_back(std::move(t));
        }
        fmt::print("{:>8}: pending -- {}\n", j.spec.id, d.allowed() ? "no node fits" : to_string(d));
        return false;
      }
    }
    // 4. admit: every model commits, or none does
    j.placed = *placed;
    if (const decision a = quotas.admit(j.spec); a.denied()) {
      unplace(nodes, j);
      return false;
    }
    for (auto& t : taken) {
      fmt::print("{:>8}: preempted for {}\n", t.spec.id, j.spec.id);
      requeued.push_back(std::move(t));
    }
    std::string where;
    for (auto n : j.placed) where += (where.empty() ? "" : ",") + nodes[n].name;
    fmt::print("{:>8}: running on {}\n", j.spec.id, where);
    running.push_back(std::move(j));
    return true;
  };
  // One scheduling pass over what waits, in the models' order: inside a queue by
  // compare_pending; among the queues' heads the one select_head picks, asked again at
  // every pick (shares move).
  auto schedule = [&] {
    std::map<std::string, std::deque<pod_job>> by_queue;  // front() = head
    for (auto& j : pending) by_queue[std::string(quotas.pending_queue(j.spec))].push_back(std::move(j));
    pending.clear();
    for (auto& [q, jobs] : by_queue)
      std::stable_sort(jobs.begin(), jobs.end(),
                       [&](const pod_job& a, const pod_job& b) { return quotas.compare_pending(a.spec, b.spec) < 0; });
    std::vector<pod_job> requeued;
    std::vector<std::deque<pod_job>*> with_heads;
    std::vector<const quota::job*> heads;
    while (true) {
      with_heads.clear();
      heads.clear();
      for (auto& [q, jobs] : by_queue)
        if (!jobs.empty()) {
          with_heads.push_back(&jobs);
          heads.push_back(&jobs.front().spec);
        }
      if (heads.empty()) break;
      std::deque<pod_job>* best = with_heads[quotas.select_head(heads)];
      pod_job j = std::move(best->front());
      best->pop_front();
      if (!try_job(j, requeued)) pending.push_back(std::move(j));  // waits for the next pass
    }
    for (auto& r : requeued) pending.push_back(std::move(r));  // preempted: they wait again
  };

  fmt::print("-- wave 1: research and batch work\n");
  submit({make_job("train-a", "research", 10, 2, 2), make_job("train-b", "research", 10, 1, 4),
          make_job("sweep-c", "research", 10, 1, 1), make_job("batch-9", "prod", 5, 1, 8)});
  schedule();
  fmt::print("-- wave 2: serving arrives at high priority\n");
  submit({make_job("serve-1", "prod", 100, 2, 4), make_job("serve-2", "prod", 100, 1, 4)});
  schedule();

  // when jobs end, they are released everywhere and their nodes freed
  fmt::print("-- end: {} jobs admitted, {} waiting, research running {}\n", quotas.admitted_count(), pending.size(),
             quotas.model<running_limits_policy>().running(running_limits_policy::scope::queue, "research"));
  for (auto& r : running) {
    quotas.release(r.spec.id);
    unplace(nodes, r);
  }
  fmt::print("all released: {} jobs admitted, research running {}, free GPUs {}+{}\n", quotas.admitted_count(),
             quotas.model<running_limits_policy>().running(running_limits_policy::scope::queue, "research"),
             nodes[0].free.get(resources::nvidia_gpu), nodes[1].free.get(resources::nvidia_gpu));
  return 0;
}
