// SPDX-License-Identifier: Apache-2.0
// The hot path of yunikorn_limits_model (a running application's plan, resolved once
// per config generation and resource slot count) against the general path:
// headroom of a running application in its queue (plan) must equal the
// headroom of the same identity computed without the application (general
// path), and check_increase of the running application (plan) must allow
// exactly what fits that headroom. Random increases, decreases, removals,
// reloads (limits lowered below usage, raised again) and resources that get
// their first slot late.
#include <quota/yunikorn_limits.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "quota_catch.hpp"

using namespace quota;

namespace {

struct res_ids {
  resource_id cpu, mem, pods, gpu, foo;
};

limit_entry entry(std::vector<std::string> us, std::vector<std::string> gs,
                  std::vector<std::pair<resource_id, std::int64_t>> max, std::uint64_t apps = 0) {
  limit_entry e;
  e.name = "e";
  e.users = std::move(us);
  e.groups = std::move(gs);
  for (const auto& [id, v] : max) e.max_resources.set(id, v);
  e.max_applications = apps;
  return e;
}

// The same structure for every scale; amounts grow with `scale` (1..4).
yunikorn_limits_config make_config(const res_ids& r, std::int64_t scale) {
  yunikorn_limits_config cfg;
  cfg.root.limits.push_back(entry({"*"}, {}, {{r.cpu, 400 * scale}, {r.mem, 4000 * scale}, {r.foo, 40 * scale}}));
  cfg.root.limits.push_back(entry({}, {"g0"}, {{r.cpu, 500 * scale}}));
  limits_queue a;
  a.name = "a";
  a.limits.push_back(entry({"u1"}, {}, {{r.cpu, 200 * scale}}));
  a.limits.push_back(entry({"*"}, {}, {{r.mem, 3000 * scale}, {r.gpu, 3 * scale}}));
  a.limits.push_back(entry({}, {"g0", "g1"}, {{r.cpu, 300 * scale}, {r.pods, 10 * scale}}));
  a.limits.push_back(entry({}, {"*"}, {{r.pods, 12 * scale}}));
  limits_queue x;
  x.name = "x";
  x.limits.push_back(entry({"*"}, {}, {{r.cpu, 150 * scale}, {r.foo, 20 * scale}}, 3));
  a.queues.push_back(std::move(x));
  limits_queue b;
  b.name = "b";
  cfg.root.queues.push_back(std::move(a));
  cfg.root.queues.push_back(std::move(b));
  return cfg;
}

}  // namespace

TEST_CASE("yunikorn_limits: hot path headroom and increase check agree with the general path under random operations") {
  resource_registry reg;
  const res_ids r{resources::cpu, resources::memory, resources::pods, resources::nvidia_gpu,
                  reg.intern("example.com/foo")};
  const std::vector<resource_id> all{r.cpu, r.mem, r.pods, r.gpu, r.foo};
  yunikorn_limits_model m(reg);
  m.reload(make_config(r, 2));

  const std::vector<std::string> queues{"root.a.x", "root.a", "root.b", "root"};
  const std::vector<limits_identity> ids{
      {"u0", {"g0"}}, {"u1", {"g1"}}, {"u2", {"g2"}}, {"u1", {}}, {"u3", {"g1", "g0"}}};
  struct app {
    std::string name, queue;
    std::size_t who = 0;
    resource_vector use;
    bool running = false;
  };
  std::vector<app> apps(8);
  for (std::size_t i = 0; i < apps.size(); ++i) apps[i].name = "app" + std::to_string(i);

  std::mt19937_64 rng(20261123);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::size_t compared = 0, allowed = 0, denied = 0, reloads = 0;

  for (int step = 0; step < 3000; ++step) {
    const std::size_t k = pick(apps.size());
    auto& a = apps[k];
    const auto p = pick(100);
    if (p < 4) {
      m.reload(make_config(r, static_cast<std::int64_t>(1 + pick(4))));  // may lower limits below usage
      ++reloads;
    } else if (p < 60) {
      if (!a.running) {
        a.queue = queues[pick(queues.size())];
        a.who = pick(ids.size());
      }
      resource_vector req;
      // resources with a late first request (foo, gpu) get their slot mid-run
      const std::size_t dims = 1 + pick(step < 500 ? 2 : all.size());
      for (std::size_t d = 0; d < dims; ++d)
        req.set(all[pick(step < 500 ? 3 : all.size())], static_cast<std::int64_t>(pick(60)));
      const decision d = m.increase(a.queue, a.name, req, ids[a.who]);
      if (d.allowed()) {
        a.running = true;
        for (const auto& e : req) a.use.add(e.id, e.value);
      }
    } else if (a.running) {
      const bool remove = p >= 90;
      resource_vector back;
      for (const auto& e : a.use) back.set(e.id, remove ? e.value : e.value / 2);
      m.decrease(a.queue, a.name, back, remove, ids[a.who]);
      for (const auto& e : back) a.use.set(e.id, a.use.get(e.id) - e.value);
      if (remove) {
        a.running = false;
        a.use = {};
      }
    }

    // every running application: plan vs general path
    for (const auto& x : apps) {
      if (!x.running) continue;
      const limit_vector fast = m.headroom(x.queue, x.name, ids[x.who]);
      const limit_vector slow = m.headroom(x.queue, ids[x.who]);
      INFO("step " << step << " app " << x.name << " in " << x.queue);
      REQUIRE(fast == slow);
      resource_vector probe;
      probe.set(all[pick(all.size())], static_cast<std::int64_t>(1 + pick(400)));
      const bool ok = m.check_increase(x.queue, x.name, probe, ids[x.who]).allowed();
      REQUIRE(ok == fits(probe, slow));
      ++compared;
      (ok ? allowed : denied) += 1;
    }
  }
  // the run exercised both outcomes and reloads
  CHECK(compared > 1000);
  CHECK(allowed > 100);
  CHECK(denied > 100);
  CHECK(reloads > 50);
}

TEST_CASE("yunikorn_limits: a running application's cached limits follow reloads and new resources") {
  resource_registry reg;
  const res_ids r{resources::cpu, resources::memory, resources::pods, resources::nvidia_gpu,
                  reg.intern("example.com/foo")};
  yunikorn_limits_model m(reg);
  m.reload(make_config(r, 1));
  const limits_identity sue{"u0", {"g0"}};
  resource_vector cpu100;
  cpu100.set(r.cpu, 100);
  REQUIRE(m.increase("root.a.x", "a1", cpu100, sue).allowed());
  // root.a.x allows 150 cpu per user at scale 1
  CHECK(m.headroom("root.a.x", "a1", sue).find(r.cpu) != nullptr);
  CHECK(*m.headroom("root.a.x", "a1", sue).find(r.cpu) == 50);
  CHECK(m.increase("root.a.x", "a1", cpu100, sue).denied());
  m.reload(make_config(r, 2));  // 300
  CHECK(*m.headroom("root.a.x", "a1", sue).find(r.cpu) == 200);
  REQUIRE(m.increase("root.a.x", "a1", cpu100, sue).allowed());
  m.reload(make_config(r, 1));  // back to 150: usage 200 is kept, headroom negative, more is denied
  CHECK(*m.headroom("root.a.x", "a1", sue).find(r.cpu) == -50);
  CHECK(m.increase("root.a.x", "a1", cpu100, sue).denied());
  // a resource first requested now gets a slot; the plan widens and keeps the limits
  resource_vector foo;
  foo.set(r.foo, 15);
  REQUIRE(m.increase("root.a.x", "a1", foo, sue).allowed());
  CHECK(*m.headroom("root.a.x", "a1", sue).find(r.foo) == 5);
  CHECK(m.increase("root.a.x", "a1", foo, sue).denied());
  // a request that does not touch the over-limit resource is still allowed
  resource_vector mem;
  mem.set(r.mem, 10);
  CHECK(m.increase("root.a.x", "a1", mem, sue).allowed());
  CHECK(m.user_usage("u0", "root").get(r.mem) == 10);
  m.decrease("root.a.x", "a1", m.user_usage("u0", "root.a.x"), true, sue);
  CHECK(m.tracker_count() == 0);
}

TEST_CASE("yunikorn_limits: a manager with host locking decides and counts exactly as one with its own lock") {
  resource_registry reg;
  const res_ids r{resources::cpu, resources::memory, resources::pods, resources::nvidia_gpu,
                  reg.intern("example.com/foo")};
  yunikorn_limits_model locked(reg);
  yunikorn_limits_model host(reg, yunikorn_limits_locking::host);
  locked.reload(make_config(r, 1));
  host.reload(make_config(r, 1));
  const std::vector<std::string> queues{"root.a.x", "root.a", "root.b"};
  const std::vector<limits_identity> ids{{"u0", {"g0"}}, {"u1", {"g1"}}, {"u2", {}}};
  std::mt19937_64 rng(7);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<bool> running(6, false);
  std::vector<resource_vector> held(6);
  std::size_t allowed = 0, denied = 0;
  for (int step = 0; step < 2000; ++step) {
    const std::size_t k = pick(running.size());
    const std::string app = "app" + std::to_string(k);
    const std::string& q = queues[k % queues.size()];
    const limits_identity& id = ids[k % ids.size()];
    if (pick(3) != 0) {
      resource_vector req;
      req.set(r.cpu, static_cast<std::int64_t>(pick(120)));
      req.set(r.mem, static_cast<std::int64_t>(pick(900)));
      const decision a = locked.increase(q, app, req, id);
      const decision b = host.increase(q, app, req, id);
      REQUIRE(a.allowed() == b.allowed());
      if (a.allowed()) {
        running[k] = true;
        held[k].add_in_place(req);
        ++allowed;
      } else {
        ++denied;
      }
    } else if (running[k]) {
      locked.decrease(q, app, held[k], true, id);
      host.decrease(q, app, held[k], true, id);
      running[k] = false;
      held[k] = {};
    }
    REQUIRE(locked.headroom(q, id) == host.headroom(q, id));
    REQUIRE(locked.user_usage(id.user, "root") == host.user_usage(id.user, "root"));
  }
  CHECK(allowed > 100);
  CHECK(denied > 100);
}

TEST_CASE("yunikorn_limits: the fused calls on a prepared request decide and count exactly as increase and decrease") {
  resource_registry reg;
  const res_ids r{resources::cpu, resources::memory, resources::pods, resources::nvidia_gpu,
                  reg.intern("example.com/foo")};
  const std::vector<resource_id> all{r.cpu, r.mem, r.pods, r.gpu, r.foo};
  yunikorn_limits_model four(reg), fused(reg), other(reg);
  four.reload(make_config(r, 2));
  fused.reload(make_config(r, 2));
  other.reload(make_config(r, 2));

  const std::vector<std::string> queues{"root.a.x", "root.a", "root.b"};
  const std::vector<limits_identity> ids{{"u0", {"g0"}}, {"u1", {"g1"}}, {"u2", {"g2"}}, {"u3", {"g1", "g0"}}};
  // a few requests prepared once and reused, as a scheduler would for its pod shapes
  std::mt19937_64 rng(20261127);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<resource_vector> shapes;
  for (int i = 0; i < 6; ++i) {
    resource_vector v;
    for (std::size_t d = 0; d < 1 + pick(3); ++d) v.set(all[pick(all.size())], static_cast<std::int64_t>(1 + pick(40)));
    shapes.push_back(v);
  }
  std::vector<limits_request> prepared;
  for (const auto& v : shapes) prepared.push_back(fused.prepare(v));
  const limits_request foreign = other.prepare(shapes[0]);  // another manager's: the general path

  struct app {
    std::string name, queue;
    std::size_t who = 0;
    std::vector<std::size_t> held;  // shapes it holds
    bool running = false;
  };
  std::vector<app> apps(6);
  for (std::size_t i = 0; i < apps.size(); ++i) apps[i].name = "app" + std::to_string(i);
  std::size_t allowed = 0, denied = 0;
  for (int step = 0; step < 2000; ++step) {
    auto& a = apps[pick(apps.size())];
    const auto p = pick(100);
    if (p < 3) {
      const auto scale = static_cast<std::int64_t>(1 + pick(4));
      four.reload(make_config(r, scale));
      fused.reload(make_config(r, scale));
    } else if (p < 60) {
      if (!a.running) {
        a.queue = queues[pick(queues.size())];
        a.who = pick(ids.size());
      }
      const std::size_t s = pick(shapes.size());
      const decision d1 = four.increase(a.queue, a.name, shapes[s], ids[a.who]);
      decision d2;
      if (p < 20 && ids[a.who].groups.size() == 1) {  // by handles
        const auto g = fused.group_id(ids[a.who].groups[0]);
        const auto h = fused.app_id(a.name);
        d2 = fused.increase(fused.queue_id(a.queue), h, prepared[s], fused.user_id(ids[a.who].user),
                            std::span<const group_handle>(&g, 1));
        fused.release_app(h);
      } else if (p < 25 && s == 0) {
        d2 = fused.increase(a.queue, a.name, foreign, ids[a.who]);
      } else {
        d2 = fused.increase(a.queue, a.name, prepared[s], ids[a.who]);
      }
      INFO("step " << step);
      REQUIRE(d1.allowed() == d2.allowed());
      if (d1.allowed()) {
        a.held.push_back(s);
        a.running = true;
      }
      (d1.allowed() ? allowed : denied) += 1;
    } else if (a.running) {
      if (p >= 92 || a.held.empty()) {  // the application ends: give back all of it
        resource_vector sum;
        for (auto s : a.held)
          for (const auto& e : shapes[s]) sum.add(e.id, e.value);
        four.decrease(a.queue, a.name, sum, true, ids[a.who]);
        fused.decrease(a.queue, a.name, sum, true, ids[a.who]);
        a.held.clear();
        a.running = false;
      } else {
        const std::size_t s = a.held.back();
        a.held.pop_back();
        four.decrease(a.queue, a.name, shapes[s], false, ids[a.who]);
        if (p < 75) {
          fused.decrease(a.queue, a.name, prepared[s], ids[a.who]);
        } else {
          const auto h = fused.app_id(a.name);
          fused.decrease(fused.queue_id(a.queue), h, prepared[s]);
          fused.release_app(h);
        }
      }
    }
    for (const auto& q : queues)
      for (const auto& id : ids) {
        REQUIRE(four.user_usage(id.user, q) == fused.user_usage(id.user, q));
        REQUIRE(four.user_running(id.user, q) == fused.user_running(id.user, q));
        for (const auto& g : {"g0", "g1", "g2", "*"}) REQUIRE(four.group_usage(g, q) == fused.group_usage(g, q));
      }
  }
  CHECK(allowed > 300);
  CHECK(denied > 100);
  // a negative amount cannot be prepared
  resource_vector neg;
  neg.set(r.cpu, -1);
  CHECK_THROWS_AS(fused.prepare(neg), validation_error);
}
