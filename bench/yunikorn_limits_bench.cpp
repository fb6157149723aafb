// SPDX-License-Identifier: Apache-2.0
// YuniKorn-sized user/group limit workload: 1,000 users, 50 groups, a tree of
// depth 3 (root, 10 parents, 100 leaves), 4 resources. One scheduling cycle =
// headroom + fit check + increase + decrease for one user's running app; the
// fused cycle = one fused increase (headroom check and commit) + its decrease
// on a prepared request.
#include <quota/yunikorn_limits.hpp>

#include <string>
#include <vector>

#include "alloc_counter.hpp"

using namespace quota;

namespace {

constexpr int users = 1000;
constexpr int groups = 50;

// string building without operator+ chains (GCC 12 -Wrestrict false positive)
std::string cat(std::string_view a, int x, std::string_view b = {}, int y = -1) {
  std::string s(a);
  s.append(std::to_string(x));
  s.append(b);
  if (y >= 0) s.append(std::to_string(y));
  return s;
}

limit_entry entry(std::string name, std::vector<std::string> us, std::vector<std::string> gs, std::int64_t cpu,
                  std::uint64_t apps) {
  limit_entry e;
  e.name = std::move(name);
  e.users = std::move(us);
  e.groups = std::move(gs);
  e.max_resources.set(resources::cpu, cpu);
  e.max_resources.set(resources::memory, cpu * 4'000'000);
  e.max_resources.set(resources::pods, cpu / 10);
  e.max_resources.set(resources::nvidia_gpu, cpu / 1000);
  e.max_applications = apps;
  return e;
}

yunikorn_limits_config make_config(int parents, int leaves_per_parent) {
  yunikorn_limits_config cfg;
  cfg.root.limits.push_back(entry("root users", {"*"}, {}, 1'000'000'000, 0));
  for (int p = 0; p < parents; ++p) {
    limits_queue pq;
    pq.name = cat("p", p);
    // five named groups per parent (50 in all), then the pool
    std::vector<std::string> gs;
    for (int g = 0; g < 5; ++g) gs.push_back(cat("g", (p * 5 + g) % groups));
    pq.limits.push_back(entry("teams", {}, gs, 100'000'000, 0));
    pq.limits.push_back(entry("pool", {}, {"*"}, 100'000'000, 0));
    for (int l = 0; l < leaves_per_parent; ++l) {
      limits_queue lq;
      lq.name = cat("l", l);
      lq.limits.push_back(entry("per user", {"*"}, {}, 10'000'000, 100));
      pq.queues.push_back(std::move(lq));
    }
    cfg.root.queues.push_back(std::move(pq));
  }
  return cfg;
}

struct world {
  resource_registry reg;
  yunikorn_limits_model m;
  std::vector<queue_handle> q;
  std::vector<user_handle> u;
  std::vector<app_handle> a;
  std::vector<group_handle> g;
  std::vector<std::string> qn, un, an;
  std::vector<std::vector<std::string>> gn;
  resource_vector req;
  limits_request prepared;
  explicit world(int n = users, yunikorn_limits_locking locking = yunikorn_limits_locking::internal) : m(reg, locking) {
    m.reload(make_config(10, 10));
    req.set(resources::cpu, 500);
    req.set(resources::memory, 1 << 30);
    req.set(resources::pods, 1);
    req.set(resources::nvidia_gpu, 0);
    for (int i = 0; i < n; ++i) {
      qn.push_back(cat("root.p", i % 10, ".l", (i / 10) % 10));
      un.push_back(cat("user", i));
      an.push_back(cat("app", i));
      gn.push_back({cat("g", i % groups)});
      q.push_back(m.queue_id(qn.back()));
      u.push_back(m.user_id(un.back()));
      a.push_back(m.app_id(an.back()));
      g.push_back(m.group_id(gn.back()[0]));
      // warm-up: the app runs, its trackers exist
      (void)m.increase(q.back(), a.back(), req, u.back(), std::span<const group_handle>(&g.back(), 1));
    }
    prepared = m.prepare(req);
    // warm-up: one cycle per user, so that what follows (and callgrind) sees steady state
    for (int i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const std::span<const group_handle> gs(&g[k], 1);
      (void)m.headroom(q[k], a[k], u[k], gs);
      if (m.increase(q[k], a[k], req, u[k], gs).allowed()) m.decrease(q[k], a[k], req, false);
    }
  }
};

// One cycle each; not inlined so that callgrind can count exactly these:
//   valgrind --tool=callgrind --toggle-collect='*limits_cycle_by_handles*' yunikorn_limits_bench
//            --benchmark_filter='handles/users:1000' --benchmark_min_time=0.01
//   callgrind_annotate --tree=caller callgrind.out.<pid> | grep '< .*BM_limits_cycle_handles'
// (instructions per cycle = the collected total / the calls that line shows;
// '*limits_cycle_by_strings*' with --benchmark_filter='strings' for the string path).
[[gnu::noinline]] bool limits_cycle_by_handles(world& w, std::size_t k) {
  const std::span<const group_handle> gs(&w.g[k], 1);
  const limit_vector h = w.m.headroom(w.q[k], w.a[k], w.u[k], gs);
  const bool fit = fits(w.req, h);
  const decision d = w.m.increase(w.q[k], w.a[k], w.req, w.u[k], gs);
  if (d.allowed()) w.m.decrease(w.q[k], w.a[k], w.req, false);
  return fit;
}
[[gnu::noinline]] bool limits_cycle_by_strings(world& w, const limits_identity& id, std::size_t k) {
  const limit_vector h = w.m.headroom(w.qn[k], w.an[k], id);
  const bool fit = fits(w.req, h);
  const decision d = w.m.increase(w.qn[k], w.an[k], w.req, id);
  if (d.allowed()) w.m.decrease(w.qn[k], w.an[k], w.req, false, id);
  return fit;
}

// The fused cycle: one locked call checks and commits, one gives back.
[[gnu::noinline]] bool limits_fused_cycle_by_handles(world& w, std::size_t k) {
  const std::span<const group_handle> gs(&w.g[k], 1);
  const decision d = w.m.increase(w.q[k], w.a[k], w.prepared, w.u[k], gs);
  if (d.allowed()) w.m.decrease(w.q[k], w.a[k], w.prepared);
  return d.allowed();
}
[[gnu::noinline]] bool limits_fused_cycle_by_strings(world& w, const limits_identity& id, std::size_t k) {
  const decision d = w.m.increase(w.qn[k], w.an[k], w.prepared, id);
  if (d.allowed()) w.m.decrease(w.qn[k], w.an[k], w.prepared, id);
  return d.allowed();
}

// One cycle per iteration over the first n users of `w`, allocations counted.
void run_handles_cycles(benchmark::State& state, world& w, int n) {
  std::size_t i = 0;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    const std::size_t k = i++ % static_cast<std::size_t>(n);
    benchmark::DoNotOptimize(limits_cycle_by_handles(w, k));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}

void BM_limits_cycle_handles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  world w(n);
  run_handles_cycles(state, w, n);
}
BENCHMARK(BM_limits_cycle_handles)->ArgName("users")->Arg(users)->Arg(10);

// The same cycle on a manager whose host serialises its calls (yunikorn_limits_locking::host: no lock).
void BM_limits_cycle_handles_host_locking(benchmark::State& state) {
  world w(users, yunikorn_limits_locking::host);
  run_handles_cycles(state, w, users);
}
BENCHMARK(BM_limits_cycle_handles_host_locking);

void BM_limits_cycle_strings(benchmark::State& state) {
  world w;
  std::vector<limits_identity> ids;
  for (int k = 0; k < users; ++k) ids.push_back({w.un[static_cast<std::size_t>(k)], w.gn[static_cast<std::size_t>(k)]});
  std::size_t i = 0;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    const std::size_t k = i++ % users;
    benchmark::DoNotOptimize(limits_cycle_by_strings(w, ids[k], k));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_limits_cycle_strings);

void BM_limits_fused_handles(benchmark::State& state) {
  world w;
  std::size_t i = 0;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    const std::size_t k = i++ % users;
    benchmark::DoNotOptimize(limits_fused_cycle_by_handles(w, k));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_limits_fused_handles);

void BM_limits_fused_handles_host_locking(benchmark::State& state) {
  world w(users, yunikorn_limits_locking::host);
  std::size_t i = 0;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    const std::size_t k = i++ % users;
    benchmark::DoNotOptimize(limits_fused_cycle_by_handles(w, k));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_limits_fused_handles_host_locking);

void BM_limits_fused_strings(benchmark::State& state) {
  world w;
  std::vector<limits_identity> ids;
  for (int k = 0; k < users; ++k) ids.push_back({w.un[static_cast<std::size_t>(k)], w.gn[static_cast<std::size_t>(k)]});
  std::size_t i = 0;
  const long long before = quota_bench::allocation_count();
  for (auto _ : state) {
    const std::size_t k = i++ % users;
    benchmark::DoNotOptimize(limits_fused_cycle_by_strings(w, ids[k], k));
  }
  state.counters["allocs/iter"] = quota_bench::allocs_per_iteration(state, before);
}
BENCHMARK(BM_limits_fused_strings);

void BM_limits_reload_1000_queues(benchmark::State& state) {
  world w;
  const yunikorn_limits_config big = make_config(10, 99);  // 1 + 10 + 990 = 1,001 queues
  for (auto _ : state) w.m.reload(big);
  state.SetLabel("1001 queues");
}
BENCHMARK(BM_limits_reload_1000_queues)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
