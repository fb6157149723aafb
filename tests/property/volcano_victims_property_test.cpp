// SPDX-License-Identifier: Apache-2.0
// Property test: the victim searches of the Volcano queue models
// (quota/volcano.hpp, quota/volcano_capacity.hpp) against straightforward
// recomputations over many random states. Random allocations (random queue,
// job priority, preemptible flag and request) and releases (enough of them
// that the allocation order drops its holes) are applied; after each step,
// for every queue:
// * preempt: preemptable_in_queue equals the running preemptible tasks of
//   the queue below the asked priority, sorted here from the test's own list
//   (lowest priority first, then the newest), and equals what a model built
//   from scratch with the same running tasks gives;
// * reclaim: reclaimable_running equals reclaimable() over every running
//   task (the walk without any shortcut) and, for the proportion plugin, a
//   walk recomputed here from allocated and deserved.
#include <quota/volcano.hpp>
#include <quota/volcano_capacity.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {

const std::vector<resource_id> dims{resources::cpu, resources::memory, resources::nvidia_gpu};

struct running_task {
  std::string id;
  std::size_t queue = 0;
  std::int32_t priority = 0;
  bool preemptible = true;
  resource_vector req;
};

std::string describe(const std::vector<victim>& v) {
  std::string s;
  for (const auto& x : v) s += x.job_id + "/" + std::string(x.rule) + "/" + x.entity + " ";
  return s;
}

bool same(const std::vector<victim>& a, const std::vector<victim>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].job_id != b[i].job_id || a[i].model != b[i].model || a[i].rule != b[i].rule || a[i].entity != b[i].entity)
      return false;
  return true;
}

resource_vector random_request(prop::rng& r) {
  resource_vector v;
  v.set(resources::cpu, r.range(0, 4));
  v.set(resources::memory, r.range(0, 40));
  if (r.range(0, 3) == 0) v.set(resources::nvidia_gpu, r.range(1, 2));
  return v;
}

// The preempt victims recomputed from the test's list of running tasks.
std::vector<std::string> expected_preempt(const std::vector<running_task>& live, std::size_t q, std::int32_t priority) {
  std::vector<std::size_t> pos;
  for (std::size_t i = 0; i < live.size(); ++i)
    if (live[i].queue == q && live[i].preemptible && live[i].priority < priority) pos.push_back(i);
  std::sort(pos.begin(), pos.end(), [&](std::size_t a, std::size_t b) {
    if (live[a].priority != live[b].priority) return live[a].priority < live[b].priority;
    return a > b;
  });
  std::vector<std::string> ids;
  for (const auto i : pos) ids.push_back(live[i].id);
  return ids;
}

std::vector<std::string> ids_of(const std::vector<victim>& v) {
  std::vector<std::string> ids;
  for (const auto& x : v) ids.push_back(x.job_id);
  return ids;
}

// One random step on `live` and the model: mostly allocations while few run,
// mostly releases while many do, so the order fills, empties and compacts.
template <class Model, class Meta>
void random_step(prop::rng& r, Model& m, std::vector<running_task>& live, std::size_t queues, std::size_t leaf0,
                 std::uint64_t& next_id) {
  const bool release = !live.empty() && r.range(0, 99) < (live.size() > 120 ? 70 : 35);
  if (release) {
    const auto i = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(live.size()) - 1));
    m.deallocate(live[i].id);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
  running_task t;
  t.id = "t" + std::to_string(next_id++);
  t.queue = leaf0 + static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(queues - leaf0) - 1));
  t.priority = static_cast<std::int32_t>(r.range(0, 4));
  t.preemptible = r.range(0, 4) != 0;
  t.req = random_request(r);
  m.allocate(t.id, m.spec(t.queue).name, t.req, Meta{t.priority, t.preemptible});
  live.push_back(std::move(t));
}

// The proportion plugin's reclaim walk recomputed from allocated and deserved floors.
std::vector<std::string> expected_reclaim(const volcano_model& m, const std::vector<running_task>& live,
                                          std::size_t self) {
  std::vector<std::int64_t> running(m.size() * dims.size());
  for (std::size_t q = 0; q < m.size(); ++q)
    for (std::size_t d = 0; d < dims.size(); ++d) running[q * dims.size() + d] = m.allocated(q, d);
  std::vector<std::string> ids;
  for (const auto& t : live) {
    if (t.queue == self || !m.spec(t.queue).reclaimable || !t.preemptible) continue;
    bool over = false;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (running[t.queue * dims.size() + d] > m.deserved_floor(t.queue, d)) over = true;
    if (!over) continue;
    for (std::size_t d = 0; d < dims.size(); ++d) running[t.queue * dims.size() + d] -= t.req.get(dims[d]);
    ids.push_back(t.id);
  }
  return ids;
}

}  // namespace

TEST_CASE("property: Volcano preempt and reclaim victims equal a recomputation over random states") {
  std::size_t checks = 0, preempt_victims = 0, reclaim_victims = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    prop::rng r(seed * 977 + 3);
    resource_vector total;
    total.set(resources::cpu, 60);
    total.set(resources::memory, 600);
    total.set(resources::nvidia_gpu, 16);
    std::vector<volcano_queue_spec> specs;
    const auto n = static_cast<std::size_t>(r.range(2, 6));
    for (std::size_t q = 0; q < n; ++q) {
      volcano_queue_spec s;
      s.name = "q" + std::to_string(q);
      s.weight = r.range(0, 3);
      s.reclaimable = r.range(0, 4) != 0;
      if (r.range(0, 2) == 0) s.guarantee.set(resources::cpu, r.range(0, 6));
      specs.push_back(std::move(s));
    }
    volcano_model m(dims, total, specs);
    std::vector<running_task> live;
    std::uint64_t next_id = 0;
    for (int step = 0; step < 400; ++step) {
      random_step<volcano_model, volcano_task_meta>(r, m, live, n, 0, next_id);
      if (r.range(0, 3) == 0) {
        resource_vector p;
        p.set(resources::cpu, r.range(0, 20));
        m.set_pending(specs[static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(n) - 1))].name, p);
      }
      m.compute_deserved();
      volcano_model scratch(dims, total, specs);
      for (const auto& t : live) scratch.allocate(t.id, specs[t.queue].name, t.req, {t.priority, t.preemptible});
      for (std::size_t q = 0; q < n; ++q) {
        const auto priority = static_cast<std::int32_t>(r.range(0, 5));
        std::vector<victim> fast, fresh;
        m.preemptable_in_queue(specs[q].name, priority, fast);
        scratch.preemptable_in_queue(specs[q].name, priority, fresh);
        INFO("seed " << seed << " step " << step << " queue " << q << ": " << describe(fast));
        REQUIRE(ids_of(fast) == expected_preempt(live, q, priority));
        REQUIRE(same(fast, fresh));
        preempt_victims += fast.size();
        std::vector<victim> walk, full;
        m.reclaimable_running(specs[q].name, walk);
        m.reclaimable(specs[q].name, m.running_tasks(), full);
        REQUIRE(same(walk, full));
        REQUIRE(ids_of(walk) == expected_reclaim(m, live, q));
        reclaim_victims += walk.size();
        ++checks;
      }
    }
  }
  CHECK(checks > 10'000);
  CHECK(preempt_victims > checks);
  CHECK(reclaim_victims > checks / 10);
}

TEST_CASE("property: Volcano capacity preempt and reclaim victims equal a recomputation over random states") {
  std::size_t checks = 0, preempt_victims = 0, reclaim_victims = 0, no_deserved = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    prop::rng r(seed * 131 + 5);
    const bool hier = seed % 2 == 0;
    volcano_capacity_options opts;
    opts.upstream = true;  // random specs: what Volcano only logs is accepted
    if (hier) {
      opts.mode = volcano_capacity_mode::hierarchical;
      opts.ancestor_reclaim_level = static_cast<int>(r.range(0, 2));
    }
    resource_vector total;
    total.set(resources::cpu, 60);
    total.set(resources::memory, 600);
    total.set(resources::nvidia_gpu, 16);
    std::vector<volcano_capacity_queue_spec> specs;
    const auto add = [&](std::string name, std::string parent) {
      volcano_capacity_queue_spec s;
      s.name = std::move(name);
      s.parent = std::move(parent);
      s.reclaimable = r.range(0, 4) != 0;
      if (r.range(0, 3) != 0) s.deserved.set(resources::cpu, r.range(0, 12));
      if (r.range(0, 1) == 0) s.deserved.set(resources::memory, r.range(0, 120));
      if (r.range(0, 2) == 0) s.deserved.set(resources::nvidia_gpu, r.range(0, 3));
      if (r.range(0, 3) == 0) s.guarantee.set(resources::cpu, r.range(0, 3));
      specs.push_back(std::move(s));
    };
    // flat: 5 queues; hierarchical: root > a, b; a > a1, a2; b > b1, b2, b3
    std::vector<std::string> leaves;
    if (hier) {
      add("a", "");
      add("b", "");
      for (const char* l : {"a1", "a2"}) add(l, "a");
      for (const char* l : {"b1", "b2", "b3"}) add(l, "b");
      leaves = {"a1", "a2", "b1", "b2", "b3"};
    } else {
      for (int q = 0; q < 5; ++q) add("q" + std::to_string(q), "");
      for (const auto& s : specs) leaves.push_back(s.name);
    }
    volcano_capacity_model m(dims, total, specs, opts);
    const std::size_t leaf0 = m.index(leaves.front());  // leaves come last, in order
    REQUIRE(m.index(leaves.back()) == m.size() - 1);
    std::vector<running_task> live;
    std::uint64_t next_id = 0;
    for (int step = 0; step < 400; ++step) {
      random_step<volcano_capacity_model, volcano_capacity_task_meta>(r, m, live, m.size(), leaf0, next_id);
      volcano_capacity_model scratch(dims, total, specs, opts);
      for (const auto& t : live) scratch.allocate(t.id, m.spec(t.queue).name, t.req, {t.priority, t.preemptible});
      for (const auto& leaf : leaves) {
        const auto q = m.index(leaf);
        const auto priority = static_cast<std::int32_t>(r.range(0, 5));
        std::vector<victim> fast, fresh;
        m.preemptable_in_queue(leaf, priority, fast);
        scratch.preemptable_in_queue(leaf, priority, fresh);
        INFO("seed " << seed << " step " << step << " queue " << leaf << ": " << describe(fast));
        REQUIRE(ids_of(fast) == expected_preempt(live, q, priority));
        REQUIRE(same(fast, fresh));
        preempt_victims += fast.size();
        const auto request = random_request(r);
        std::vector<victim> walk, full;
        m.reclaimable_running(leaf, request, walk);
        m.reclaimable(leaf, request, m.victim_order(leaf, m.running_tasks()), full);
        INFO("full walk: " << describe(full));
        REQUIRE(same(walk, full));
        reclaim_victims += walk.size();
        for (const auto& v : walk) no_deserved += v.rule == "reclaim_no_deserved" ? 1 : 0;
        ++checks;
      }
    }
  }
  CHECK(checks > 10'000);
  CHECK(preempt_victims > checks);
  CHECK(reclaim_victims > checks / 10);
  CHECK(no_deserved > 0);
}
