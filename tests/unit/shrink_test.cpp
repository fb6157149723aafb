// SPDX-License-Identifier: Apache-2.0
#include <quota/engine.hpp>
#include <quota/running_limits.hpp>
#include <quota/shrink.hpp>

#include <map>

#include "quota_catch.hpp"

using namespace quota;

namespace {
using rl_scope = running_limits_policy::scope;
using engine_t = basic_engine<running_limits_policy, shrink_tracker>;

constexpr std::int64_t minute = 60'000;

job make_job(std::string id, std::string queue, std::int32_t priority, std::int64_t gpus = 1) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.priority = priority;
  j.request.set(resources::nvidia_gpu, gpus);
  return j;
}

// research runs 4 jobs: a (prio 5), b (1), c (1), d (3), admitted in that order
engine_t research_engine(shrink_behaviour b) {
  engine_t e(running_limits_policy{}, shrink_tracker(shrink_key::queue, no_resource, b));
  e.model<0>().set_limit(rl_scope::queue, "research", 4);
  REQUIRE(e.model<1>().on_limit_change("research", 4, 0) == std::nullopt);
  for (auto [id, prio] : std::vector<std::pair<const char*, std::int32_t>>{{"a", 5}, {"b", 1}, {"c", 1}, {"d", 3}})
    REQUIRE(e.admit(make_job(id, "research", prio)).allowed());
  REQUIRE(e.admit(make_job("o", "other", 0)).allowed());
  return e;
}

// A per-queue GPU cap whose victims are the queue's jobs, largest first.
class gpu_cap {
 public:
  explicit gpu_cap(std::int64_t cap) : cap_(cap) {}
  [[nodiscard]] std::string_view policy_name() const { return "gpu_cap"; }
  [[nodiscard]] decision check(const job& j) const {
    const auto req = j.request.get(resources::nvidia_gpu);
    const auto used = used_.count(j.queue) ? used_.at(j.queue) : 0;
    if (used + req > cap_)
      return decision::deny(reason{"gpu_cap", "over_cap", j.queue, resources::nvidia_gpu, "", req, used, cap_, ""});
    return decision::allow();
  }
  void commit(const job& j) {
    jobs_[j.id] = {j.queue, j.request.get(resources::nvidia_gpu)};
    used_[j.queue] += j.request.get(resources::nvidia_gpu);
  }
  void release(std::string_view id) {
    auto it = jobs_.find(std::string(id));
    used_[it->second.first] -= it->second.second;
    jobs_.erase(it);
  }
  void victims(const job& j, std::vector<victim>& out) const {
    std::vector<std::pair<std::int64_t, std::string>> v;
    for (const auto& [id, qa] : jobs_)
      if (qa.first == j.queue) v.emplace_back(-qa.second, id);
    std::sort(v.begin(), v.end());
    for (const auto& [neg, id] : v) out.push_back(victim{id, "gpu_cap", "largest_first", j.queue});
  }
  std::int64_t cap_;

 private:
  std::map<std::string, std::pair<std::string, std::int64_t>> jobs_;
  std::map<std::string, std::int64_t> used_;
};
}  // namespace

TEST_CASE("shrink: keep marks the entity over its limit and never evicts") {
  engine_t e = research_engine(shrink_behaviour::keep());
  e.model<0>().set_limit(rl_scope::queue, "research", 2);
  const auto st = e.model<1>().on_limit_change("research", 2, 10 * minute);
  REQUIRE(st);
  CHECK(st->usage == 4);
  CHECK(st->limit == 2);
  CHECK(st->since_ms == 10 * minute);
  CHECK_FALSE(st->evict_at_ms);
  CHECK(e.model<1>().plan(e.model<0>()).empty());
  CHECK(e.model<1>().due_evictions(e.model<0>(), 100'000 * minute).empty());
  // the running work stays; the model denies new work until usage falls below the limit
  CHECK(e.model<0>().running(rl_scope::queue, "research") == 4);
  CHECK(e.check(make_job("new", "research", 9)).denied());
  e.release("b");
  e.release("c");
  CHECK_FALSE(e.model<1>().status_of("research"));  // fits again: mark cleared
  CHECK(e.model<1>().over().empty());
}

TEST_CASE("shrink: queries of entities the tracker does not know, or that fit, answer nothing") {
  engine_t e = research_engine(shrink_behaviour::keep());
  const auto& t = e.model<1>();
  CHECK_FALSE(t.limit_of("nobody"));
  CHECK(t.usage("nobody") == 0);
  CHECK_FALSE(t.status_of("nobody"));
  CHECK(t.limit_of("research") == 4);
  CHECK(t.usage("research") == 4);
  CHECK(t.usage("other") == 1);  // known by its job only: usage, no limit
  CHECK_FALSE(t.limit_of("other"));
  CHECK_FALSE(t.status_of("research"));  // at its limit, not over it
  CHECK(t.over().empty());
  // a second queue lowered below its usage is listed next to the first; only those two
  e.model<0>().set_limit(rl_scope::queue, "research", 3);
  REQUIRE(e.model<1>().on_limit_change("research", 3, minute));
  REQUIRE(e.model<1>().on_limit_change("other", 0, 2 * minute));
  const auto over = e.model<1>().over();
  REQUIRE(over.size() == 2);
  CHECK(over[0].entity != over[1].entity);
  for (const auto& s : over) CHECK(s.usage > s.limit);
}

TEST_CASE("shrink: evict_after_grace evicts at the deadline in the model's victim order until usage fits") {
  engine_t e = research_engine(shrink_behaviour::evict_after_grace(10 * minute));
  e.model<0>().set_limit(rl_scope::queue, "research", 2);
  const auto st = e.model<1>().on_limit_change("research", 2, 5 * minute);
  REQUIRE(st);
  REQUIRE(st->evict_at_ms);
  CHECK(*st->evict_at_ms == 15 * minute);
  // the plan says who goes when: running_limits' order is lowest priority first, newest first
  const auto plan = e.model<1>().plan(e.model<0>());
  REQUIRE(plan.size() == 2);
  CHECK(plan[0] == shrink_eviction{"c", "research", 15 * minute, "running_limits", "max_running_jobs"});
  CHECK(plan[1] == shrink_eviction{"b", "research", 15 * minute, "running_limits", "max_running_jobs"});
  // a second lowering while marked keeps the first deadline
  CHECK(e.model<1>().on_limit_change("research", 2, 8 * minute)->evict_at_ms == 15 * minute);
  // nothing is due before the deadline; all of it at the deadline
  CHECK(e.model<1>().due_evictions(e.model<0>(), 15 * minute - 1).empty());
  const auto due = e.model<1>().due_evictions(e.model<0>(), 15 * minute);
  CHECK(due == plan);
  for (const auto& ev : due) e.release(ev.job_id);
  CHECK(e.model<0>().running(rl_scope::queue, "research") == 2);
  CHECK(e.is_admitted("a"));
  CHECK(e.is_admitted("d"));
  CHECK(e.is_admitted("o"));  // another queue is untouched
  CHECK(e.model<1>().over().empty());
  CHECK(e.model<1>().due_evictions(e.model<0>(), 20 * minute).empty());
}

TEST_CASE("shrink: raising the limit before the deadline cancels the evictions") {
  engine_t e = research_engine(shrink_behaviour::evict_after_grace(10 * minute));
  e.model<0>().set_limit(rl_scope::queue, "research", 1);
  REQUIRE(e.model<1>().on_limit_change("research", 1, 0));
  CHECK(e.model<1>().plan(e.model<0>()).size() == 3);
  e.model<0>().set_limit(rl_scope::queue, "research", 4);
  CHECK(e.model<1>().on_limit_change("research", 4, 9 * minute) == std::nullopt);
  CHECK(e.model<1>().over().empty());
  CHECK(e.model<1>().due_evictions(e.model<0>(), 10 * minute).empty());
  // lowered again later: a new grace period starts then
  REQUIRE(e.model<1>().on_limit_change("research", 3, 12 * minute));
  CHECK(e.model<1>().status_of("research")->evict_at_ms == 22 * minute);
  const auto plan = e.model<1>().plan(e.model<0>());
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].job_id == "c");
}

TEST_CASE("shrink: a resource measure evicts in the model's order, then lowest priority newest first") {
  basic_engine<gpu_cap, shrink_tracker> e(
      gpu_cap(8), shrink_tracker(shrink_key::queue, resources::nvidia_gpu, shrink_behaviour::keep()));
  e.model<1>().set_behaviour("q", shrink_behaviour::evict_after_grace(0));
  REQUIRE(e.admit(make_job("small", "q", 1, 1)).allowed());
  REQUIRE(e.admit(make_job("big", "q", 1, 4)).allowed());
  REQUIRE(e.admit(make_job("mid", "q", 1, 3)).allowed());
  CHECK(e.model<1>().usage("q") == 8);
  e.model<0>().cap_ = 3;
  const auto st = e.model<1>().on_limit_change("q", 3, 100);
  REQUIRE(st);
  CHECK(st->evict_at_ms == 100);
  // the model's order is largest first: evicting big (4) and mid (3) leaves 1 <= 3
  const auto due = e.model<1>().due_evictions(e.model<0>(), 100);
  REQUIRE(due.size() == 2);
  CHECK(due[0].job_id == "big");
  CHECK(due[1].job_id == "mid");
  CHECK(due[0].rule == "largest_first");
  // a model without victims: the fallback order (lowest priority, newest first)
  basic_engine<running_limits_policy, shrink_tracker> f(
      running_limits_policy{},
      shrink_tracker(shrink_key::user, resources::nvidia_gpu, shrink_behaviour::evict_after_grace(5)));
  for (auto [id, prio] : std::vector<std::pair<const char*, std::int32_t>>{{"x", 2}, {"y", 1}, {"z", 2}}) {
    auto j = make_job(id, "q", prio, 2);
    j.user = "ann";
    REQUIRE(f.admit(j).allowed());
  }
  REQUIRE(f.model<1>().on_limit_change("ann", 3, 0));
  const auto fb = f.model<1>().due_evictions(f.model<0>(), 5);
  REQUIRE(fb.size() == 2);
  CHECK(fb[0] == shrink_eviction{"y", "ann", 5, "shrink", "lowest_priority_newest"});
  CHECK(fb[1].job_id == "z");
}

TEST_CASE("shrink: bad input is a typed error naming the item, and nothing changes") {
  REQUIRE_THROWS_AS(shrink_behaviour::evict_after_grace(-1), validation_error);
  REQUIRE_THROWS_AS(
      shrink_tracker(shrink_key::queue, no_resource, shrink_behaviour{shrink_mode::evict_after_grace, -5}),
      validation_error);
  engine_t e = research_engine(shrink_behaviour::evict_after_grace(minute));
  auto& t = e.model<1>();
  try {
    (void)t.on_limit_change("research", -1, 0);
    FAIL("expected a validation_error");
  } catch (const validation_error& err) {
    CHECK(err.problems().at(0).path == "research");
    CHECK(err.id() == error_id::validation_failed);
  }
  CHECK(t.limit_of("research") == std::optional<std::int64_t>(4));
  REQUIRE_THROWS_AS(t.on_limit_change("", 1, 0), validation_error);
  REQUIRE_THROWS_AS(t.set_behaviour("research", shrink_behaviour{shrink_mode::evict_after_grace, -1}),
                    validation_error);
  CHECK(t.behaviour_of("research") == shrink_behaviour::evict_after_grace(minute));
  REQUIRE_THROWS_AS(t.release("never"), unknown_entity_error);
  REQUIRE_THROWS_AS(t.commit(make_job("a", "research", 0)), state_error);
  CHECK(t.usage("research") == 4);
  CHECK(t.tracked_jobs() == 5);
}
