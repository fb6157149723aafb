// SPDX-License-Identifier: Apache-2.0
// Many threads increase and decrease while another thread keeps reloading the
// configuration; afterwards the tracked usage must equal exactly what was
// committed. Meant to run under ThreadSanitizer too (a data race fails there).
#include <quota/yunikorn_limits.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "quota_catch.hpp"

using namespace quota;

namespace {

yunikorn_limits_config config_with(std::int64_t user_cpu, std::int64_t group_cpu, std::uint64_t apps) {
  yunikorn_limits_config cfg;
  limit_entry root_users;
  root_users.name = "users";
  root_users.users = {"*"};
  root_users.max_resources.set(resources::cpu, user_cpu * 2);
  cfg.root.limits.push_back(root_users);
  for (int i = 0; i < 4; ++i) {
    limits_queue q;
    q.name = "q" + std::to_string(i);
    limit_entry g;
    g.name = "teams";
    g.groups = {"g0", "g1"};
    g.max_resources.set(resources::cpu, group_cpu);
    limit_entry u;
    u.name = "everyone";
    u.users = {"*"};
    u.max_resources.set(resources::cpu, user_cpu);
    u.max_applications = apps;
    limit_entry gw;
    gw.name = "pool";
    gw.groups = {"*"};
    gw.max_resources.set(resources::cpu, group_cpu);
    q.limits = {g, u, gw};
    cfg.root.queues.push_back(q);
  }
  return cfg;
}

}  // namespace

TEST_CASE("yunikorn_limits: stress - concurrent increase/decrease with repeated reloads keeps exact usage") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(config_with(4000, 12000, 3));

  constexpr int threads = 6;
  constexpr int ops = 3000;
  std::atomic<bool> stop{false};
  std::vector<std::int64_t> committed(threads, 0);  // per thread, what stays committed

  std::thread reloader([&] {
    int k = 0;
    while (!stop.load()) {
      const bool low = (k++ % 2) == 0;
      m.reload(low ? config_with(1500, 5000, 1) : config_with(4000, 12000, 3));
      yunikorn_limits_config bad = config_with(1000, 1000, 1);
      bad.root.queues[0].limits[1].users = {"*", "x"};  // invalid: rejected, changes nothing
      try {
        m.reload(bad);
      } catch (const validation_error&) {
      }
      std::this_thread::yield();
    }
  });

  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const std::string user = "user" + std::to_string(t % 3);
      const limits_identity id{user, {t % 2 ? "g1" : "other"}};
      std::int64_t app_kept[5] = {0, 0, 0, 0, 0};  // committed usage per app slot
      for (int i = 0; i < ops; ++i) {
        const int slot = i % 5;
        const std::string app = "t" + std::to_string(t) + "-a" + std::to_string(slot);
        // each app lives in one queue: the queue of its slot
        const std::string queue = "root.q" + std::to_string((t + slot) % 4);
        resource_vector r;
        r.set(resources::cpu, 100 + (i % 7) * 50);
        if (i % 13 == 12 && app_kept[slot] > 0) {
          // the application ends: all of its usage goes back, trackers may be cleaned up
          resource_vector all;
          all.set(resources::cpu, app_kept[slot]);
          m.decrease(queue, app, all, true, id);
          app_kept[slot] = 0;
          continue;
        }
        if (m.increase(queue, app, r, id).allowed()) {
          if (i % 3 == 0)
            m.decrease(queue, app, r, false, id);  // give it back at once
          else
            app_kept[slot] += r.get(resources::cpu);
        }
      }
      std::int64_t kept = 0;
      for (auto k : app_kept) kept += k;
      committed[static_cast<std::size_t>(t)] = kept;
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  reloader.join();

  std::int64_t expect = 0;
  for (auto c : committed) expect += c;
  std::int64_t users_total = 0, groups_total = 0;
  for (int u = 0; u < 3; ++u) users_total += m.user_usage("user" + std::to_string(u), "root").get(resources::cpu);
  for (const char* g : {"g0", "g1", "*"}) groups_total += m.group_usage(g, "root").get(resources::cpu);
  CHECK(users_total == expect);
  // the odd threads are in g1; the even ones fall into the wildcard pool
  CHECK(groups_total == expect);
  CHECK(expect > 0);
  // the leaf levels add up to the root level for every user
  for (int u = 0; u < 3; ++u) {
    const std::string user = "user" + std::to_string(u);
    std::int64_t leaves = 0;
    for (int q = 0; q < 4; ++q) leaves += m.user_usage(user, "root.q" + std::to_string(q)).get(resources::cpu);
    CHECK(leaves == m.user_usage(user, "root").get(resources::cpu));
  }
}
