// SPDX-License-Identifier: Apache-2.0
// Stress test of the composed engine under its thread-safety contract
// (docs/architecture.md): admit and release are serialised by the host (here a
// shared_mutex held exclusively), check and explain run concurrently with each
// other (the same mutex held shared), and the user/group trackers, being
// internally synchronised, are reloaded and read through their own API from
// other threads at the same time. Afterwards every model's state equals the
// sum of the committed operations. Meant to run under ThreadSanitizer too.
#include <quota/engine.hpp>
#include <quota/kueue.hpp>
#include <quota/running_limits.hpp>
#include <quota/yunikorn_limits.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "quota_catch.hpp"

// clang says so through __has_feature, GCC through __SANITIZE_THREAD__
#if defined(__SANITIZE_THREAD__)
#define QUOTA_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QUOTA_TEST_TSAN 1
#endif
#endif
#ifdef QUOTA_TEST_TSAN
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

using namespace quota;

namespace {

yunikorn_limits_config config_with(std::int64_t user_cpu, std::uint64_t apps) {
  yunikorn_limits_config cfg;
  limit_entry everyone;
  everyone.name = "everyone";
  everyone.users = {"*"};
  everyone.max_resources.set(resources::cpu, user_cpu);
  everyone.max_applications = apps;
  cfg.root.limits.push_back(everyone);
  for (int i = 0; i < 3; ++i) {
    limits_queue q;
    q.name = "q" + std::to_string(i);
    limit_entry team;
    team.name = "team";
    team.groups = {"g0"};
    team.max_resources.set(resources::cpu, user_cpu * 2);
    limit_entry pool;
    pool.name = "pool";
    pool.groups = {"*"};
    pool.max_resources.set(resources::cpu, user_cpu * 2);
    q.limits = {team, pool};
    cfg.root.queues.push_back(q);
  }
  return cfg;
}

}  // namespace

TEST_CASE("stress: engine admit/release serialised by the host while limits reload and introspection run") {
  resource_registry reg;
  running_limits_policy rl;
  rl.set_default(running_limits_policy::scope::queue, 6);
  basic_engine<running_limits_policy, yunikorn_limits_policy> eng(std::move(rl), yunikorn_limits_policy(reg));
  // other threads reload and read the trackers through the engine's adapter
  yunikorn_limits_model& limits = eng.model<yunikorn_limits_policy>().manager();
  limits.reload(config_with(6000, 4));

  constexpr int workers = 4;
  // ThreadSanitizer runs the workers several times as fast as ASan does a
  // reload: it gets more operations, so that as many reloads overlap them
  constexpr int ops = under_tsan ? 6000 : 1500;
  std::shared_mutex host;  // the host's serialisation of admit/release
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> checks{0}, reloads{0}, reads{0}, raced{0}, unexpected{0};
  // what each worker holds admitted: job id and its cpu
  std::vector<std::vector<std::pair<std::string, std::int64_t>>> held(workers);

  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      std::uint64_t x = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(w + 1);
      // at least `ops` operations, and on until the reloader and the reader have
      // each done two rounds while the workers ran (a loaded machine can leave
      // them unscheduled for the whole of a short run)
      for (int i = 0; i < ops || reloads.load() < 2 || reads.load() < 2; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (held[static_cast<std::size_t>(w)].empty() || x % 3 != 0) {
          job j;
          j.id = "w" + std::to_string(w) + "-" + std::to_string(i);
          j.queue = "q" + std::to_string(x % 3);
          j.user = "user" + std::to_string(w % 2);
          j.groups = {x % 2 ? "g0" : "g1"};
          j.request.set(resources::cpu, static_cast<std::int64_t>(500 + x % 1500));
          std::unique_lock lk(host);
          try {
            // A reload between the engine's check and the trackers' commit can lower
            // the limit: the commit is refused and the engine rolls back and returns
            // the denial (never an error). `raced` counts admissions denied by the
            // trackers although the check just before (same lock) allowed them.
            const bool allowed_before = eng.check(j).allowed();
            const decision d = eng.admit(j);
            if (d.allowed())
              held[static_cast<std::size_t>(w)].emplace_back(j.id, j.request.get(resources::cpu));
            else if (allowed_before)
              ++raced;
          } catch (...) {
            ++unexpected;
          }
        } else {
          auto& mine = held[static_cast<std::size_t>(w)];
          const std::string id = mine.back().first;
          std::unique_lock lk(host);
          eng.release(id);
          mine.pop_back();
        }
        if (i % 8 == 0) {
          job probe;
          probe.id = "probe";
          probe.queue = "q1";
          probe.user = "user0";
          probe.request.set(resources::cpu, 1000);
          std::shared_lock lk(host);
          (void)eng.check(probe);
          ++checks;
        }
      }
    });
  // The background threads pause between rounds: spinning, they starved the
  // workers of the host lock (a reader-preferring shared_mutex) and the run took
  // from one to five minutes on two cores; pausing, it races as much and ends
  // in seconds.
  const auto pause = [](int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); };
  std::thread checker([&] {
    job probe;
    probe.id = "probe-2";
    probe.queue = "q2";
    probe.user = "user1";
    probe.groups = {"g0"};
    probe.request.set(resources::cpu, 700);
    while (!stop.load()) {
      std::shared_lock lk(host);
      (void)eng.check(probe);
      (void)eng.explain(probe);
      ++checks;
      lk.unlock();
      pause(100);
    }
  });
  std::thread reloader([&] {
    int k = 0;
    while (!stop.load()) {
      limits.reload(config_with(k % 2 ? 6000 : 9000, k % 2 ? 4 : 6));  // internally synchronised
      ++k;
      ++reloads;
      pause(2000);
    }
  });
  std::thread reader([&] {
    while (!stop.load()) {
      (void)limits.users_usage();  // internally synchronised introspection
      (void)limits.groups_usage();
      (void)limits.user_usage("user0", "root");
      ++reads;
      pause(300);
    }
  });
  for (auto& t : threads) t.join();
  stop = true;
  checker.join();
  reloader.join();
  reader.join();

  CHECK(unexpected.load() == 0);
  // the final state is the sum of what stayed committed
  std::size_t running = 0;
  for (const auto& h : held) running += h.size();
  CHECK(eng.admitted_count() == running);
  CHECK(eng.model<0>().running_jobs() == running);
  CHECK(limits.application_count() == running);
  std::uint64_t root_running = limits.user_running("user0", "root") + limits.user_running("user1", "root");
  CHECK(root_running == running);
  std::int64_t cpu[2] = {0, 0};
  for (std::size_t w = 0; w < held.size(); ++w)
    for (const auto& [id, c] : held[w]) cpu[w % 2] += c;
  CHECK(limits.user_usage("user0", "root").get(resources::cpu) == cpu[0]);
  CHECK(limits.user_usage("user1", "root").get(resources::cpu) == cpu[1]);
  // release everything: every tracker empties
  for (const auto& h : held)
    for (const auto& [id, c] : h) eng.release(id);
  CHECK(eng.admitted_count() == 0);
  CHECK(limits.application_count() == 0);
  CHECK(limits.tracker_count() == 0);
  CHECK(limits.user_usage("user0", "root").is_zero());
  CHECK(limits.user_usage("user1", "root").is_zero());
  CHECK(checks.load() > 0);
  std::printf(
      "engine stress: %d admit/release ops on %d workers, %lld checks, %lld reloads, %lld reads, %lld admits refused "
      "at commit by a concurrent reload\n",
      workers * ops, workers, static_cast<long long>(checks.load()), static_cast<long long>(reloads.load()),
      static_cast<long long>(reads.load()), static_cast<long long>(raced.load()));
}

TEST_CASE("stress: concurrent checks on one Kueue model give the answers of checks made alone") {
  // Kueue's flavor assigner keeps scratch between calls; checks may run
  // concurrently (docs/architecture.md), so each must get its own answer.
  auto cq = [](std::string name, std::vector<std::string> flavors, amount each) {
    kueue_cluster_queue_spec c;
    c.name = std::move(name);
    kueue_resource_group_spec g;
    g.covered_resources = {resources::cpu};
    for (auto& f : flavors) g.flavors.push_back({f, {kueue_resource_quota_spec{resources::cpu, each, {}, {}}}});
    c.resource_groups.push_back(std::move(g));
    return c;
  };
  kueue_config cfg;
  cfg.resource_flavors = {"small", "big"};
  cfg.cluster_queues.push_back(cq("cq", {"small", "big"}, 8000));
  cfg.local_queues.push_back({"team", "main", "cq"});
  kueue_policy k(cfg, resource_registry{});
  auto make = [](std::string id, amount cpu) {
    job j;
    j.id = std::move(id);
    j.ns = "team";
    j.queue = "main";
    j.request.set(resources::cpu, cpu);
    return j;
  };
  k.commit(make("running", 6000));  // small has 2 cores left, big 8
  // fits small / fits big only (a note for small) / fits nowhere (notes for both)
  const std::vector<job> asks{make("a", 1000), make("b", 5000), make("c", 20000)};
  std::vector<std::string> alone;
  for (const auto& j : asks) alone.push_back(to_string(k.check(j)));
  REQUIRE(alone[0] == "allowed");
  REQUIRE(alone[1] == "allowed");
  REQUIRE(alone[2] != "allowed");
  const int rounds = under_tsan ? 200 : 2000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < rounds; ++i) {
        const auto n = static_cast<std::size_t>((i + t) % 3);
        if (to_string(k.check(asks[n])) != alone[n]) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
}
