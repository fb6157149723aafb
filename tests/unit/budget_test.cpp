// SPDX-License-Identifier: Apache-2.0
#include <quota/budget.hpp>
#include <quota/budget_json.hpp>
#include <quota/elastic_quota.hpp>
#include <quota/engine.hpp>

#include "quota_catch.hpp"

using namespace quota;

namespace {
constexpr std::int64_t H = budget_policy::hour_ms;  // one GPU-hour in GPU-ms

job gpu_job(std::string id, std::string queue, std::int64_t gpus, std::int64_t duration_ms, bool preemptible = true) {
  job j;
  j.id = std::move(id);
  j.queue = queue;
  j.ns = queue;
  j.request.set(resources::nvidia_gpu, gpus);
  j.duration_ms = duration_ms;
  j.preemptible = preemptible;
  return j;
}
budget_config daily() {
  budget_config c;
  c.window_ms = 24 * H;
  return c;
}
}  // namespace

TEST_CASE("budget: two jobs that fit alone are not both admitted, the denial names tenant and amounts") {
  budget_policy b;
  b.set_budget("team-a", 10 * H);
  b.commit(gpu_job("a", "team-a", 2, 3 * H));  // 6 GPU-hours declared
  const decision d = b.check(gpu_job("b", "team-a", 2, 3 * H));
  REQUIRE(d.denied());
  const reason& r = d.reasons()[0];
  CHECK(r.model == "budget");
  CHECK(r.rule == "budget_exhausted");
  CHECK(r.entity == "queue:team-a");
  CHECK(r.resource_name == "nvidia.com/gpu");
  CHECK(r.requested == 6 * H);
  CHECK(r.used == 6 * H);
  CHECK(r.limit == 10 * H);
  // a denial changes nothing: a job that needs exactly the rest still fits
  CHECK(b.check(gpu_job("c", "team-a", 1, 4 * H)).allowed());
  CHECK(b.running_jobs() == 1);
  // tenants without a budget (and no "*") are not limited; default duration applies to -1
  CHECK(b.check(gpu_job("x", "team-b", 100, 100 * H)).allowed());
  b.set_budget("*", 2 * H);
  CHECK(b.check(gpu_job("y", "team-b", 1, -1)).allowed());  // default 1h: 1 GPU-hour
  CHECK(b.check(gpu_job("z", "team-b", 3, -1)).denied());   // 3 GPU-hours > 2
}

TEST_CASE("budget: calendar windows reset at the boundary and count only the part of a job inside the window") {
  budget_policy b(daily());
  b.set_budget("team-a", 24 * H);
  b.commit(gpu_job("a", "team-a", 1, 20 * H));
  CHECK(b.check(gpu_job("b", "team-a", 1, 5 * H)).denied());  // 20 + 5 > 24
  b.advance_to(21 * H);
  b.release("a");  // ran 21 h: 21 GPU-hours spent this window
  // near the end of the window only the 3 h left count: 21 + 3 <= 24
  CHECK(b.check(gpu_job("b", "team-a", 1, 5 * H)).allowed());
  CHECK(b.check(gpu_job("b", "team-a", 2, 5 * H)).denied());  // 21 + 6 > 24
  b.advance_to(24 * H);                                       // new window: reset
  json j;
  to_json(j, b);
  CHECK(j["tenants"]["team-a"]["spent"] == 0);
  CHECK(j["window"]["start"] == 24 * H);
  CHECK(b.check(gpu_job("big", "team-a", 4, 6 * H)).allowed());  // 24 GPU-hours
  // a job running across the boundary counts from the boundary on
  b.commit(gpu_job("long", "team-a", 1, 30 * H));
  b.advance_to(50 * H);
  to_json(j, b);
  CHECK(j["tenants"]["team-a"]["spent"] == 2 * H);      // from 48 h to 50 h
  CHECK(j["tenants"]["team-a"]["committed"] == 6 * H);  // + declared rest until 54 h
}

TEST_CASE("budget: a rolling window forgets consumption older than its length") {
  budget_config c;
  c.window = budget_window::rolling;
  c.window_ms = 10 * H;
  budget_policy b(c);
  b.set_budget("team-a", 10 * H);
  b.commit(gpu_job("a", "team-a", 1, 4 * H));
  b.advance_to(4 * H);
  b.release("a");  // segment [0 h, 4 h) x 1
  b.advance_to(6 * H);
  CHECK(b.check(gpu_job("b", "team-a", 1, 7 * H)).denied());  // 4 + 7 > 10
  // it fits once 1 GPU-hour has left the window: at exactly 11 h (window (1 h, 11 h])
  CHECK(b.earliest_admission_ms(gpu_job("b", "team-a", 1, 7 * H)) == std::optional<std::int64_t>(11 * H));
  CHECK(b.earliest_admission_ms(gpu_job("b2", "team-a", 2, 6 * H)) == std::nullopt);  // 12 > 10, ever
  CHECK(b.earliest_admission_ms(gpu_job("b3", "team-a", 1, 6 * H)) == std::optional<std::int64_t>(6 * H));  // fits now
  CHECK(b.now_ms() == 6 * H);  // the search moved only copies
  b.advance_to(11 * H);        // window (1 h, 11 h]: 3 GPU-hours of the segment remain
  json j;
  to_json(j, b);
  CHECK(j["tenants"]["team-a"]["spent"] == 3 * H);
  CHECK(b.check(gpu_job("b", "team-a", 1, 7 * H)).allowed());  // 3 + 7 <= 10
  b.advance_to(15 * H);                                        // the segment is entirely older than the window
  to_json(j, b);
  CHECK(j["tenants"]["team-a"]["spent"] == 0);
  // a job longer than the window needs at most one window's worth
  CHECK(b.check(gpu_job("c", "team-a", 1, 100 * H)).allowed());
}

TEST_CASE("budget: time out of order and bad config are typed errors, nothing changes") {
  budget_policy b(daily());
  b.set_budget("team-a", 5 * H);
  b.commit(gpu_job("a", "team-a", 1, 2 * H));
  b.advance_to(5 * H);
  try {
    b.advance_to(4 * H);
    FAIL("expected a state_error");
  } catch (const state_error& e) {
    CHECK(e.number() == 504);
  }
  CHECK(b.now_ms() == 5 * H);
  CHECK_THROWS_AS(b.commit(gpu_job("a", "team-a", 1, H)), state_error);  // duplicate
  CHECK(b.running_jobs() == 1);
  CHECK_THROWS_AS(b.release("nope"), unknown_entity_error);
  // a negative request fails the commit and leaves no entry: the id commits afterwards
  CHECK_THROWS_AS(b.commit(gpu_job("neg", "team-a", -1, H)), state_error);
  CHECK(b.running_jobs() == 1);
  CHECK_THROWS_AS(b.release("neg"), unknown_entity_error);
  b.commit(gpu_job("neg", "team-a", 0, H));
  CHECK(b.running_jobs() == 2);
  b.release("neg");
  CHECK(b.running_jobs() == 1);
  budget_config bad;
  bad.window_ms = 0;
  try {
    budget_policy x(bad);
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(e.number() == 201);
  }
  CHECK_THROWS_AS(b.set_budget("team-x", -1), config_error);
  resource_registry reg;
  try {
    (void)load_budget(json{{"window", "weekly"}, {"windowLength", "0h"}, {"budgets", {{"team-a", "x"}}}}, reg, "p");
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    const std::string w = e.what();
    CHECK(e.number() == 201);
    CHECK(w.find("p.window:") != std::string::npos);
    CHECK(w.find("p.windowLength") != std::string::npos);
    CHECK(w.find("p.budgets.team-a") != std::string::npos);
  }
}

TEST_CASE("budget: admit_preemptible admits over budget, says so, and offers the job as a victim") {
  budget_config c = daily();
  c.on_exhausted = budget_on_exhausted::admit_preemptible;
  budget_policy b(c);
  b.set_budget("team-a", 4 * H);
  b.commit(gpu_job("a", "team-a", 1, 4 * H));
  const job over = gpu_job("over", "team-a", 1, H, true);
  CHECK(b.check(over).allowed());
  CHECK_FALSE(b.classify(over).fits);
  b.commit(over);
  CHECK(b.over_budget("over"));
  CHECK_FALSE(b.over_budget("a"));
  const job strict = gpu_job("strict", "team-a", 1, H, false);
  const decision d = b.check(strict);
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "budget_exhausted_not_preemptible");
  std::vector<victim> v;
  b.victims(strict, v);
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "over");
  CHECK(v[0].rule == "over_budget");
  json j;
  to_json(j, b);
  CHECK(j["over_budget"] == json::array({"over"}));
}

TEST_CASE("budget: composes with an elastic quota through the engine, a budget denial commits nothing") {
  elastic_quota_spec q;
  q.name = "team-a";
  q.namespaces = {"team-a"};
  q.max.emplace().set(resources::nvidia_gpu, 4);
  elastic_quota_model set({q});
  budget_config c;
  c.tenant = budget_tenant::ns;
  budget_policy b(c);
  b.set_budget("team-a", 6 * H);
  basic_engine<elastic_quota_policy, budget_policy> e(elastic_quota_policy(std::move(set)), b);
  const elastic_quota_model& used_set = e.model<0>().model();
  CHECK(e.admit(gpu_job("1", "team-a", 2, 2 * H)).allowed());
  const decision d = e.admit(gpu_job("2", "team-a", 2, 2 * H));  // budget: 4 + 4 > 6
  REQUIRE(d.denied());
  CHECK(d.has_rule("budget_exhausted", "budget"));
  CHECK(used_set.used(0).get(resources::nvidia_gpu) == 2);  // the elastic quota did not count it
  CHECK(e.admit(gpu_job("3", "team-a", 2, H)).allowed());   // 4 + 2 <= 6, 4 <= max 4
  CHECK(e.admit(gpu_job("4", "team-a", 1, 1)).has_rule("over_max", "elastic_quota"));
  e.release("1");
  CHECK(used_set.used(0).get(resources::nvidia_gpu) == 2);
  CHECK(e.model<1>().running_jobs() == 1);
}

TEST_CASE("budget: introspection shows spent, remaining, committed and projected exhaustion") {
  budget_policy b;
  b.set_budget("team-a", 10 * H);
  b.commit(gpu_job("a", "team-a", 2, 3 * H));
  b.advance_to(H);
  json j;
  to_json(j, b);
  const auto& t = j["tenants"]["team-a"];
  CHECK(t["spent"] == 2 * H);
  CHECK(t["remaining"] == 8 * H);
  CHECK(t["committed"] == 6 * H);
  CHECK(t["rate"] == 2);
  CHECK(t["exhaustion"] == 5 * H);  // 8 GPU-hours left at 2 GPUs: 4 h from now
  // the JSON loader reads the same policy
  resource_registry reg;
  auto l =
      load_budget(json{{"resource", "nvidia.com/gpu"}, {"windowLength", "1w"}, {"budgets", {{"team-a", "10h"}}}}, reg);
  l.commit(gpu_job("a", "team-a", 2, 3 * H));
  CHECK(l.check(gpu_job("b", "team-a", 2, 3 * H)).denied());
  CHECK(l.earliest_admission_ms(gpu_job("b", "team-a", 2, 3 * H)) == std::optional<std::int64_t>(7 * 24 * H));
}

namespace {
// The committed amounts as the model's page defines them, recomputed from
// every job at each instant: the reference the incremental clock must match.
struct budget_reference {
  struct run {
    std::string tenant;
    std::int64_t rate, start, end;
  };
  struct released {
    std::string tenant;
    std::int64_t rate, from, to;
  };
  budget_config cfg;
  std::map<std::string, run> running;
  std::vector<released> done;

  [[nodiscard]] std::int64_t window_start(std::int64_t t) const {
    const std::int64_t d = t - cfg.window_start_ms;
    const std::int64_t k = d >= 0 ? d / cfg.window_ms : -((-d + cfg.window_ms - 1) / cfg.window_ms);
    return cfg.window_start_ms + k * cfg.window_ms;
  }
  [[nodiscard]] std::int64_t committed(const std::string& tenant, std::int64_t t) const {
    const bool cal = cfg.window == budget_window::calendar;
    const std::int64_t lo = cal ? window_start(t) : t - cfg.window_ms;
    std::int64_t sum = 0;
    for (const auto& g : done)
      if (g.tenant == tenant) sum += g.rate * std::max<std::int64_t>(0, g.to - std::max(g.from, lo));
    for (const auto& [id, r] : running) {
      if (r.tenant != tenant) continue;
      const std::int64_t consumed = r.rate * (t - std::max(r.start, lo));
      const std::int64_t rest = cal ? std::max<std::int64_t>(0, std::min(r.end, lo + cfg.window_ms) - t)
                                    : std::clamp<std::int64_t>(r.end - t, 0, cfg.window_ms);
      sum += consumed + r.rate * rest;
    }
    return sum;
  }
};

void check_against_reference(budget_window window, std::uint64_t seed) {
  budget_config cfg;
  cfg.window = window;
  cfg.window_ms = 10'000;
  cfg.window_start_ms = 3'000;
  budget_policy b(cfg);
  b.set_budget("*", std::int64_t{1} << 50);  // every tenant tracked, never exhausted
  budget_reference ref{cfg, {}, {}};
  const std::string tenants[] = {"a", "b", "c"};
  std::uint64_t x = seed;
  auto next = [&](std::uint64_t n) {  // splitmix64
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::int64_t>((z ^ (z >> 31)) % n);
  };
  std::int64_t now = 0;
  int id = 0;
  for (int step = 0; step < 3000; ++step) {
    const auto what = next(10);
    if (what < 4) {  // a job starts
      const std::string t = tenants[next(3)];
      const std::int64_t rate = 1 + next(8);
      const std::int64_t dur = next(4) == 0 ? 0 : next(25'000);
      const job j = gpu_job("j" + std::to_string(id++), t, rate, dur);
      b.commit(j);
      ref.running[j.id] = {t, rate, now, now + dur};
    } else if (what < 7 && !ref.running.empty()) {  // a job ends (its declared end or not)
      auto it = ref.running.begin();
      std::advance(it, next(ref.running.size()));
      b.release(it->first);
      if (now > it->second.start) ref.done.push_back({it->second.tenant, it->second.rate, it->second.start, now});
      ref.running.erase(it);
    } else {  // time passes: sometimes exactly to a declared end or a window edge
      std::int64_t to = now + next(4'000);
      if (next(3) == 0 && !ref.running.empty()) to = std::max(now, ref.running.begin()->second.end);
      if (next(5) == 0) to = std::max(now, ref.window_start(now) + cfg.window_ms);
      b.advance_to(to);
      now = to;
    }
    std::map<std::string, std::int64_t> seen;
    b.for_each_tenant([&](const budget_policy::tenant_status& s) { seen[std::string(s.name)] = s.committed; });
    for (const auto& t : tenants) {
      INFO("seed " << seed << " step " << step << " tenant " << t << " at " << now);
      REQUIRE(seen[t] == ref.committed(t, now));
    }
  }
}
}  // namespace

TEST_CASE("budget: the incremental clock matches a recomputation from every job at each instant") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    check_against_reference(budget_window::calendar, seed);
    check_against_reference(budget_window::rolling, seed);
  }
}

TEST_CASE("budget: a reload changes budgets in place and keeps what was spent and committed") {
  budget_policy b(daily());
  b.set_budget("team-a", 10 * H);
  b.commit(gpu_job("a", "team-a", 2, 4 * H));  // 8 GPU-hours declared
  b.advance_to(2 * H);                         // 4 spent
  const job wide = gpu_job("w", "team-a", 1, 4 * H);
  REQUIRE(b.check(wide).denied());  // 8 + 4 > 10

  budget_policy raised(daily());
  raised.set_budget("team-a", 12 * H);
  REQUIRE(b.reload_conflict(raised).empty());
  b.reload(raised);
  CHECK(b.check(wide).allowed());  // 8 + 4 <= 12: the 8 committed stay
  CHECK(b.now_ms() == 2 * H);
  CHECK(b.running_jobs() == 1);
  json j = b;
  CHECK(j["tenants"]["team-a"]["budget"] == 12 * H);
  CHECK(j["tenants"]["team-a"]["spent"] == 4 * H);
  CHECK(j["tenants"]["team-a"]["committed"] == 8 * H);

  // no budget of its own: the "*" one, then (no "*") none, its spending still counted
  budget_policy star(daily());
  star.set_budget("*", 9 * H);
  b.reload(star);
  CHECK(b.check(gpu_job("one", "team-a", 1, 1 * H)).allowed());  // 8 + 1 <= 9
  CHECK(b.check(gpu_job("two", "team-a", 1, 2 * H)).denied());   // 8 + 2 > 9
  b.reload(budget_policy(daily()));
  CHECK(b.check(gpu_job("huge", "team-a", 100, 20 * H)).allowed());
  j = b;
  CHECK(j["tenants"]["team-a"]["budget"].is_null());
  CHECK(j["tenants"]["team-a"]["remaining"].is_null());
  CHECK(j["tenants"]["team-a"]["exhaustion"].is_null());
  CHECK(j["tenants"]["team-a"]["committed"] == 8 * H);
  b.commit(gpu_job("free", "team-a", 1, 2 * H));  // counted while no budget limits it
  budget_policy back(daily());
  back.set_budget("team-a", 10 * H);
  b.reload(back);
  CHECK(b.check(gpu_job("last", "team-a", 1, 1 * H)).denied());  // 8 + 2 + 1 > 10
  // a new tenant of the reload, and a default duration that counts for new jobs only
  budget_config longer = daily();
  longer.default_duration_ms = 3 * H;
  budget_policy next(longer);
  next.set_budget("team-a", 10 * H);
  next.set_budget("team-b", 2 * H);
  b.reload(next);
  CHECK(b.check(gpu_job("b1", "team-b", 1, -1)).denied());  // 3 GPU-hours > 2
  CHECK(b.check(gpu_job("b2", "team-b", 1, 2 * H)).allowed());
}

TEST_CASE("budget: a reload that changes what spending is counted by is refused and changes nothing") {
  budget_policy b(daily());
  b.set_budget("team-a", 10 * H);
  b.commit(gpu_job("a", "team-a", 2, 4 * H));
  const auto refused = [&](budget_config c, std::string_view what) {
    budget_policy next(std::move(c));
    next.set_budget("team-a", 100 * H);
    CHECK_THAT(b.reload_conflict(next), Catch::StartsWith(std::string(what) + " changes from"));
    try {
      b.reload(next);
      FAIL("expected a config_error");
    } catch (const config_error& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("budget reload: " + std::string(what)));
    }
    CHECK(b.check(gpu_job("w", "team-a", 1, 4 * H)).denied());  // still 10 GPU-hours
  };
  budget_config c = daily();
  c.window_ms = 12 * H;
  refused(c, "window length");
  c = daily();
  c.window = budget_window::rolling;
  refused(c, "window");
  c = daily();
  c.window_start_ms = H;
  refused(c, "window start");
  c = daily();
  c.tenant = budget_tenant::user;
  refused(c, "tenant");
  c = daily();
  c.resource = resources::cpu;
  c.resource_name = "cpu";
  refused(c, "resource");
}

TEST_CASE("budget: a group that a reload leaves without a budget gives way to the job's next group") {
  budget_config c = daily();
  c.tenant = budget_tenant::group;
  budget_policy b(c);
  b.set_budget("ml", 100 * H);
  b.set_budget("ops", 2 * H);
  job j = gpu_job("j", "q", 1, 4 * H);
  j.groups = {"ml", "ops"};
  CHECK(b.check(j).allowed());  // ml's budget
  budget_policy next(c);
  next.set_budget("ops", 2 * H);
  b.reload(next);
  const decision d = b.check(j);  // ml has none now: ops's, 4 > 2
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "group:ops");
  // a job of ml alone is not limited, and what it takes is still counted for ml
  job m = gpu_job("m", "q", 3, 4 * H);
  m.groups = {"ml"};
  REQUIRE(b.check(m).allowed());
  b.commit(m);
  json st = b;
  CHECK(st["tenants"]["ml"]["committed"] == 12 * H);
  CHECK(st["tenants"]["ml"]["budget"].is_null());
  budget_policy again(c);
  again.set_budget("ml", 14 * H);
  b.reload(again);
  CHECK(b.check(m).denied());  // 12 + 12 > 14
}
