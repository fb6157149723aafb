// SPDX-License-Identifier: Apache-2.0
#include <quota/engine.hpp>
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quota_catch.hpp"

using namespace quota;

namespace {

constexpr std::int64_t G = 1'000'000'000;  // YuniKorn "G": decimal gigabytes

resource_vector use(std::int64_t milli_cpu, std::int64_t bytes = 0) {
  resource_vector v;
  if (milli_cpu) v.set(resources::cpu, milli_cpu);
  if (bytes) v.set(resources::memory, bytes);
  return v;
}

yunikorn_limits_config parse(const std::string& text, resource_registry& reg) {
  return load_yunikorn_limits_config(json::parse(text), reg);
}

yunikorn_limits_config seed_example(resource_registry& reg) {
  // appended, not `std::string(...) + "..."` (a GCC 12 -Warray-bounds false positive at -O1)
  std::string file(QUOTA_SOURCE_DIR);
  file.append("/tests/data/yunikorn_limits/seed_example.json");
  return load_yunikorn_limits_config_file(file, reg);
}

limits_identity who(std::string user, std::vector<std::string> groups = {}) {
  return limits_identity{std::move(user), std::move(groups)};
}

// The problems of a config, or none.
std::vector<diagnostic> problems_of(const std::string& text) {
  resource_registry reg;
  try {
    (void)parse(text, reg);
  } catch (const validation_error& e) {
    return e.problems();
  }
  return {};
}

bool any_problem(const std::vector<diagnostic>& ps, const std::string& path_part, const std::string& msg_part) {
  return std::any_of(ps.begin(), ps.end(), [&](const diagnostic& d) {
    return d.path.find(path_part) != std::string::npos && d.message.find(msg_part) != std::string::npos;
  });
}

// A root with one child "a" whose limits are `limits` (JSON array text).
std::string one_queue(const std::string& limits, const std::string& root_limits = "[]",
                      const std::string& queue_extra = "") {
  return R"({"name": "root", "limits": )" + root_limits + R"(, "queues": [{"name": "a", )" + queue_extra +
         R"("limits": )" + limits + "}]}";
}

}  // namespace

TEST_CASE("yunikorn_limits: seed example sue and bob each get their own copy of the limit") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [
      {"limit": "example entry", "maxapplications": 2, "maxresources": {"vcore": 10, "memory": "250G"},
       "users": ["sue", "bob"]}]})",
                 reg));
  // sue: 2 applications, 10 cpu and 250G of memory
  CHECK(m.increase("root", "s1", use(6000, 200 * G), who("sue")).allowed());
  CHECK(m.increase("root", "s2", use(4000, 50 * G), who("sue")).allowed());
  const decision third = m.increase("root", "s3", use(0, 1), who("sue"));
  REQUIRE(third.denied());
  CHECK(third.has_rule("max_applications", "yunikorn_limits"));
  CHECK(m.increase("root", "s1", use(1), who("sue")).denied());  // 10 cpu used up
  // bob is not affected by sue's usage: a limit is per user, not combined
  CHECK(m.increase("root", "b1", use(10000, 250 * G), who("bob")).allowed());
  CHECK(m.increase("root", "b1", use(0, 1), who("bob")).denied());
  // carol is not named: not affected
  CHECK(m.increase("root", "c1", use(1'000'000, 1000 * G), who("carol")).allowed());
  CHECK(m.user_usage("sue", "root") == use(10000, 250 * G));
  CHECK(m.user_running("sue", "root") == 2);
}

TEST_CASE("yunikorn_limits: seed four-entry example (sue, development/test, user and group wildcards)") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(seed_example(reg));
  SECTION("sue has her own limit, not the user wildcard") {
    CHECK(m.increase("root.dev", "sue-1", use(5000, 25 * G), who("sue")).allowed());
    const auto d = m.increase("root.dev", "sue-1", use(1), who("sue"));
    REQUIRE(d.denied());
    CHECK(d.reasons()[0].rule == "max_resources");
    CHECK(d.reasons()[0].entity == "user:sue@root.dev");
    CHECK(d.reasons()[0].limit == 5000);
  }
  SECTION("every other user gets the wildcard limit, each their own copy") {
    CHECK(m.increase("root.dev", "a1", use(1000, 10 * G), who("alice", {"development"})).allowed());
    CHECK(m.increase("root.dev", "a2", use(1), who("alice", {"development"})).denied());
    CHECK(m.increase("root.dev", "k1", use(1000, 10 * G), who("ken", {"development"})).allowed());
    CHECK(m.group_usage("development", "root.dev") == use(2000, 20 * G));
    CHECK(m.group_of("a1") == std::optional<std::string>("development"));
  }
  SECTION("users outside development and test share one cumulative wildcard group pool of 50G") {
    for (int i = 0; i < 5; ++i) {
      const std::string u = "user" + std::to_string(i);
      CHECK(m.increase("root.dev", "app-" + u, use(0, 10 * G), who(u, {"other"})).allowed());
    }
    CHECK(m.group_usage("*", "root.dev") == use(0, 50 * G));
    const auto d = m.increase("root.dev", "app-user5", use(0, 1 * G), who("user5", {"other"}));
    REQUIRE(d.denied());
    CHECK(d.reasons()[0].entity == "group:*@root.dev");
    CHECK(d.reasons()[0].limit == 50 * G);
    // a member of "test" is counted against the test group, not the pool
    CHECK(m.increase("root.dev", "t1", use(0, 10 * G), who("tom", {"test"})).allowed());
    CHECK(m.group_of("t1") == std::optional<std::string>("test"));
    CHECK(m.group_usage("*", "root.dev") == use(0, 50 * G));
    // a user without any group is not tracked in a group at all (as YuniKorn)
    CHECK(m.increase("root.dev", "nog", use(0, 1 * G), who("nobody")).allowed());
    CHECK(m.group_of("nog") == std::optional<std::string>(""));
  }
}

TEST_CASE("yunikorn_limits: validation accepts good configs and names queue path and limit for each rule") {
  // a passing config for every rule
  CHECK(problems_of(one_queue(R"([{"limit": "u", "users": ["sue"], "maxapplications": 1},
                                  {"limit": "g", "groups": ["dev"], "maxapplications": 1},
                                  {"limit": "uw", "users": ["*"], "maxapplications": 1},
                                  {"limit": "gw", "groups": ["*"], "maxapplications": 1}])"))
            .empty());
  SECTION("wildcard only as the sole entry of its list") {
    const auto ps = problems_of(one_queue(R"([{"limit": "mixed", "users": ["sue", "*"], "maxapplications": 1}])"));
    CHECK(any_problem(ps, "root.a.limits[0]", "only entry"));
    CHECK(any_problem(ps, "root.a.limits[0]", "'mixed'"));
  }
  SECTION("no named entry after a wildcard (the wildcard is the last entry of its kind)") {
    const auto ps = problems_of(one_queue(R"([{"limit": "w", "users": ["*"], "maxapplications": 1},
                                              {"limit": "late", "users": ["bob"], "maxapplications": 1}])"));
    CHECK(any_problem(ps, "root.a.limits[1]", "after the wildcard user"));
    const auto pg = problems_of(one_queue(R"([{"limit": "g", "groups": ["x"], "maxapplications": 1},
                                              {"limit": "w", "groups": ["*"], "maxapplications": 1},
                                              {"limit": "late", "groups": ["dev"], "maxapplications": 1}])"));
    CHECK(any_problem(pg, "root.a.limits[2]", "after the wildcard group"));
  }
  SECTION("a group wildcard may not be the only group limit of a queue") {
    const auto ps = problems_of(one_queue(R"([{"limit": "gw", "groups": ["*"], "maxapplications": 1}])"));
    REQUIRE(ps.size() == 1);
    CHECK(any_problem(ps, "root.a.limits[0]", "only group limit"));
  }
  SECTION("no user or group twice in a queue's limits") {
    const auto ps = problems_of(one_queue(R"([{"limit": "a", "users": ["sue"], "maxapplications": 1},
                                              {"limit": "b", "users": ["sue"], "groups": ["dev", "dev"], "maxapplications": 1}])"));
    CHECK(any_problem(ps, "root.a.limits[1]", "user 'sue' appears more than once"));
    CHECK(any_problem(ps, "root.a.limits[1]", "group 'dev' appears more than once"));
  }
  SECTION("a limit's maxresources and maxapplications stay within the queue's") {
    const auto ok = problems_of(one_queue(R"([{"limit": "fits", "users": ["sue"], "maxresources": {"vcore": 4}}])",
                                          "[]", R"("resources": {"max": {"vcore": 4}}, )"));
    CHECK(ok.empty());
    const auto ps = problems_of(
        one_queue(R"([{"limit": "big", "users": ["sue"], "maxapplications": 3, "maxresources": {"vcore": 5}}])", "[]",
                  R"("resources": {"max": {"vcore": 4}}, "maxapplications": 2, )"));
    CHECK(any_problem(ps, "root.a.limits[0]", "exceeds the queue's resources.max"));
    CHECK(any_problem(ps, "root.a.limits[0]", "exceeds the queue's maxapplications"));
  }
  SECTION("the same user or group at a child is <= at its parent, and <= the root") {
    const std::string root = R"([{"limit": "r", "users": ["sue"], "groups": ["dev"], "maxapplications": 2,
                                  "maxresources": {"vcore": 10}}])";
    CHECK(problems_of(one_queue(R"([{"limit": "c", "users": ["sue"], "groups": ["dev"], "maxapplications": 2,
                                    "maxresources": {"vcore": 10}}])",
                                root))
              .empty());
    const auto ps = problems_of(one_queue(R"([{"limit": "c", "users": ["sue"], "groups": ["dev"],
                                               "maxapplications": 3, "maxresources": {"vcore": 11}}])",
                                          root));
    CHECK(any_problem(ps, "root.a.limits[0]",
                      "user 'sue' maxresources cpu=11000 exceeds the entry of ancestor root.limits[0]"));
    CHECK(any_problem(ps, "root.a.limits[0]", "user 'sue' maxapplications 3"));
    CHECK(any_problem(ps, "root.a.limits[0]", "group 'dev' maxresources"));
    // a grandchild is held to the root even when the middle level says nothing
    const auto deep = problems_of(R"({"name": "root", "limits": )" + root +
                                  R"(, "queues": [{"name": "a", "queues": [{"name": "b", "limits": [
                                    {"limit": "deep", "users": ["sue"], "maxresources": {"vcore": 12}}]}]}]})");
    CHECK(any_problem(deep, "root.a.b.limits[0]", "ancestor root.limits[0]"));
    // a named user is held to an ancestor's wildcard user entry
    const auto wild = problems_of(one_queue(R"([{"limit": "c", "users": ["bob"], "maxresources": {"vcore": 3}}])",
                                            R"([{"limit": "rw", "users": ["*"], "maxresources": {"vcore": 2}}])"));
    CHECK(any_problem(wild, "root.a.limits[0]", "the wildcard entry of ancestor root.limits[0]"));
  }
  SECTION("negative, zero, malformed quantities and empty limits") {
    const auto ps = problems_of(one_queue(R"([{"limit": "neg", "users": ["a"], "maxresources": {"vcore": "-1"}},
                                              {"limit": "bad", "users": ["b"], "maxresources": {"memory": "1.5.5"}},
                                              {"limit": "zero", "users": ["c"], "maxresources": {"vcore": 0}},
                                              {"limit": "nobody", "maxapplications": 1},
                                              {"limit": "nothing", "users": ["d"]}])"));
    CHECK(any_problem(ps, "limits[0].maxresources.vcore", "negative"));
    CHECK(any_problem(ps, "limits[1].maxresources.memory", ""));
    CHECK(any_problem(ps, "root.a.limits[2].maxresources", "at least one amount greater than zero"));
    CHECK(any_problem(ps, "root.a.limits[3]", "names no user and no group"));
    CHECK(any_problem(ps, "root.a.limits[4]", "neither maxresources nor maxapplications"));
  }
  SECTION("queue names") {
    const auto ps = problems_of(R"({"name": "root", "queues": [{"name": "a"}, {"name": "a"}, {"name": "x.y"}]})");
    CHECK(any_problem(ps, "root.a", "duplicate queue name"));
    CHECK(any_problem(ps, "root.queues[2]", "invalid queue name"));
  }
}

TEST_CASE("yunikorn_limits: every problem of a document is reported at once and a rejected reload changes nothing") {
  resource_registry reg;
  const std::string file = std::string(QUOTA_SOURCE_DIR) + "/tests/data/yunikorn_limits/invalid.json";
  std::vector<diagnostic> ps;
  try {
    (void)load_yunikorn_limits_config_file(file, reg);
  } catch (const validation_error& e) {
    ps = e.problems();
  }
  CHECK(any_problem(ps, "root.a.limits[1]", "named user 'bob' after the wildcard user"));
  CHECK(any_problem(ps, "limits[1].maxresources.vcore", "negative"));
  CHECK(any_problem(ps, "root.a.limits[2]", "'sue too big': maxresources cpu=9000 exceeds the queue's"));
  CHECK(any_problem(ps, "root.a.limits[2]", "maxapplications 3 exceeds the entry of ancestor root.limits[0]"));
  CHECK(any_problem(ps, "limits[3].maxresources.memory", "12Qi"));
  CHECK(any_problem(ps, "root.a.limits[3]", "only group limit"));
  CHECK(any_problem(ps, "root.a.limits[2]", "named user 'sue' after the wildcard user"));
  // the negative amount is reported once: not also as a limit that sets nothing
  CHECK_FALSE(any_problem(ps, "root.a.limits[1]", "neither maxresources nor maxapplications"));
  CHECK(ps.size() == 7);

  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [{"limit": "one", "users": ["sue"], "maxapplications": 1}]})", reg));
  yunikorn_limits_config bad;
  bad.root.limits.push_back(limit_entry{"bad", {}, {}, {}, 0});
  REQUIRE_THROWS_AS(m.reload(bad), validation_error);
  CHECK(m.increase("root", "x1", use(1), who("sue")).allowed());
  CHECK(m.increase("root", "x2", use(1), who("sue")).denied());  // old limit still enforced
}

TEST_CASE("yunikorn_limits: user limit is the named entry else the wildcard, checked at every level leaf to root") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [{"limit": "root all", "users": ["*"], "maxresources": {"vcore": 3}}],
    "queues": [{"name": "a", "limits": [
       {"limit": "bob", "users": ["bob"], "maxresources": {"vcore": 1}},
       {"limit": "rest", "users": ["*"], "maxresources": {"vcore": 2}}]},
     {"name": "b"}]})",
                 reg));
  CHECK(m.increase("root.a", "b1", use(1000), who("bob")).allowed());
  CHECK(m.increase("root.a", "b1", use(1), who("bob")).denied());  // named 1 cpu at the leaf
  CHECK(m.increase("root.a", "s1", use(2000), who("sue")).allowed());
  CHECK(m.increase("root.a", "s1", use(1), who("sue")).denied());  // wildcard 2 cpu at the leaf
  // at root.b the leaf has no limit, the root wildcard (3 cpu per user) still binds
  CHECK(m.increase("root.b", "s2", use(1000), who("sue")).allowed());
  const auto d = m.increase("root.b", "s2", use(1), who("sue"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "user:sue@root");
  CHECK(m.user_usage("sue", "root") == use(3000));
  CHECK(m.user_usage("sue", "root.a") == use(2000));
}

TEST_CASE("yunikorn_limits: trackers a release removed and another user's application takes read that user's limits") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(one_queue(R"([{"limit": "bob", "users": ["bob"], "maxresources": {"vcore": 1}},
                               {"limit": "rest", "users": ["*"], "maxresources": {"vcore": 5}}])"),
                 reg));
  // bob's trackers resolve bob's limit, then go away with his only application
  CHECK(m.increase("root.a", "b1", use(1000), who("bob")).allowed());
  CHECK(m.increase("root.a", "b1", use(1), who("bob")).denied());
  m.decrease("root.a", "b1", use(1000), true, who("bob"));
  CHECK(m.tracker_count() == 0);
  // sue's trackers start empty, with her wildcard limit (5 cpu), not bob's
  CHECK(m.increase("root.a", "s1", use(1000), who("sue")).allowed());
  CHECK(m.increase("root.a", "s1", use(3000), who("sue")).allowed());
  CHECK(m.increase("root.a", "s1", use(1001), who("sue")).denied());
  CHECK(m.user_usage("sue", "root.a") == use(4000));
  CHECK(m.user_running("sue", "root.a") == 1);
  CHECK(m.user_usage("bob", "root.a") == use(0));
}

TEST_CASE("yunikorn_limits: group walk picks the first level with a match, in config order, fixed per application") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "g-root", "groups": ["ops"], "maxapplications": 5}],
    "queues": [{"name": "a", "limits": [
        {"limit": "first", "groups": ["qa"], "maxapplications": 5},
        {"limit": "second", "groups": ["dev"], "maxapplications": 5}]}]})",
                 reg));
  // config order decides among the user's groups at one level, not the user's order
  CHECK(m.increase("root.a", "x", use(1), who("u", {"dev", "qa", "ops"})).allowed());
  CHECK(m.group_of("x") == std::optional<std::string>("qa"));
  // no match at the leaf: the walk goes up to the root
  CHECK(m.increase("root.a", "y", use(1), who("u", {"ops"})).allowed());
  CHECK(m.group_of("y") == std::optional<std::string>("ops"));
  // no match anywhere: no group tracking
  CHECK(m.increase("root.a", "z", use(1), who("u", {"sales"})).allowed());
  CHECK(m.group_of("z") == std::optional<std::string>(""));
  // the group is fixed once chosen: a later increase with other groups keeps it
  CHECK(m.increase("root.a", "x", use(1), who("u", {"ops"})).allowed());
  CHECK(m.group_of("x") == std::optional<std::string>("qa"));
  CHECK(m.group_usage("qa", "root") == use(2));
}

// No cap on the groups of an identity: the one a limit names may come last.
TEST_CASE("yunikorn_limits: the group a limit names is found among many groups of an identity, at any position") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "team", "groups": ["team-99"], "maxapplications": 1}]}]})",
                 reg));
  std::vector<std::string> many;
  for (int i = 0; i < 100; ++i) many.push_back("team-" + std::to_string(i));
  CHECK(m.increase("root.a", "x", use(1), who("u", many)).allowed());
  CHECK(m.group_of("x") == std::optional<std::string>("team-99"));
  // its maxapplications holds for the next application of the group
  const auto d = m.increase("root.a", "y", use(1), who("v", many));
  CHECK(d.denied());
  CHECK(m.group_usage("team-99", "root.a") == use(1));
}

TEST_CASE("yunikorn_limits: a wildcard group lower in the tree shadows a named group higher up") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "dev at root", "groups": ["dev"], "maxresources": {"vcore": 1}}],
    "queues": [{"name": "a", "limits": [
        {"limit": "named", "groups": ["qa"], "maxresources": {"vcore": 100}},
        {"limit": "pool", "groups": ["*"], "maxresources": {"vcore": 100}}]},
      {"name": "b"}]})",
                 reg));
  // in root.b the walk reaches the root: dev's 1-cpu limit applies
  CHECK(m.increase("root.b", "b1", use(1000), who("d1", {"dev"})).allowed());
  CHECK(m.increase("root.b", "b1", use(1), who("d1", {"dev"})).denied());
  // in root.a the wildcard group matches first: the app lands in the "*" pool,
  // and the root limit for dev is never checked for it (the side effect)
  CHECK(m.increase("root.a", "a1", use(5000), who("d2", {"dev"})).allowed());
  CHECK(m.group_of("a1") == std::optional<std::string>("*"));
  CHECK(m.group_usage("dev", "root") == use(1000));
  CHECK(m.group_usage("*", "root.a") == use(5000));
}

TEST_CASE("yunikorn_limits: a denial of user or group changes nothing anywhere") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "dev", "groups": ["dev"], "maxresources": {"vcore": 3}}],
    "queues": [{"name": "a", "limits": [{"limit": "users", "users": ["*"], "maxresources": {"vcore": 2}}]}]})",
                 reg));
  REQUIRE(m.increase("root.a", "u1", use(2000), who("u1", {"dev"})).allowed());
  const std::size_t trackers = m.tracker_count();
  // u2 fits its own user limit at the leaf, but the group at the root does not
  const auto d = m.increase("root.a", "u2", use(2000), who("u2", {"dev"}));
  REQUIRE(d.denied());
  CHECK(d.reasons().size() == 1);
  CHECK(d.reasons()[0].entity == "group:dev@root");
  CHECK(d.reasons()[0].used == 2000);
  CHECK(m.tracker_count() == trackers);
  CHECK(m.user_usage("u2", "root.a").is_zero());
  CHECK(m.user_usage("u2", "root").is_zero());
  CHECK(m.group_usage("dev", "root") == use(2000));
  CHECK(!m.group_of("u2"));
  // the user denied, group fine: nothing changes either
  CHECK(m.increase("root.a", "u1", use(1), who("u1", {"dev"})).denied());
  CHECK(m.group_usage("dev", "root") == use(2000));
  CHECK(m.user_usage("u1", "root.a") == use(2000));
}

TEST_CASE("yunikorn_limits: maxapplications denies a new application only, never more usage of a running one") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [{"limit": "one app", "users": ["*"], "maxapplications": 1}]})", reg));
  CHECK(m.can_run_app("root", "a1", who("sue")));
  CHECK(m.increase("root", "a1", use(1000), who("sue")).allowed());
  CHECK(m.increase("root", "a1", use(50000), who("sue")).allowed());  // running app grows freely
  CHECK(m.can_run_app("root", "a1", who("sue")));
  CHECK_FALSE(m.can_run_app("root", "a2", who("sue")));
  const auto d = m.increase("root", "a2", use(1), who("sue"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "max_applications");
  CHECK(d.reasons()[0].limit == 1);
  CHECK(m.can_run_app("root", "b1", who("bob")));  // wildcard: a copy per user
}

TEST_CASE("yunikorn_limits: decrease is never denied; below zero, unknown app or wrong queue is a typed error") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "sue", "users": ["sue"], "maxresources": {"vcore": 2}},
      {"limit": "g", "groups": ["dev"], "maxresources": {"vcore": 10}}]}, {"name": "b"}]})",
                 reg));
  REQUIRE(m.increase("root.a", "s1", use(2000, 5), who("sue", {"dev"})).allowed());
  REQUIRE_THROWS_AS(m.decrease("root.a", "s1", use(2001), false, who("sue")), state_error);
  try {
    m.decrease("root.a", "s1", use(2001), false, who("sue"));
  } catch (const state_error& e) {
    CHECK(e.id() == error_id::state_negative_usage);
    CHECK(std::string(e.what()).find("'s1'") != std::string::npos);
  }
  REQUIRE_THROWS_AS(m.decrease("root.a", "nope", use(1), false, who("sue")), unknown_entity_error);
  REQUIRE_THROWS_AS(m.decrease("root.b", "s1", use(1), false, who("sue")), state_error);
  REQUIRE_THROWS_AS(m.decrease("root.a", "s1", use(1000), true, who("sue")), state_error);  // usage left
  // state is exactly as before each error
  CHECK(m.user_usage("sue", "root.a") == use(2000, 5));
  CHECK(m.group_usage("dev", "root.a") == use(2000, 5));
  CHECK(m.user_running("sue", "root") == 1);
  // a decrease goes through even when the usage is above a lowered limit
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "sue", "users": ["sue"], "maxresources": {"vcore": 1}}]}, {"name": "b"}]})",
                 reg));
  m.decrease("root.a", "s1", use(500), false, who("sue"));
  CHECK(m.user_usage("sue", "root.a") == use(1500, 5));
  // removing the application with all its usage cleans up every tracker
  m.decrease("root.a", "s1", use(1500, 5), true, who("sue"));
  CHECK(m.tracker_count() == 0);
  CHECK(!m.group_of("s1"));
  REQUIRE_THROWS_AS(m.decrease("root.a", "s1", use(0), true, who("sue")), unknown_entity_error);
}

TEST_CASE("yunikorn_limits: headroom is the minimum of limit minus usage over the path, for user and group") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "u", "users": ["sue"], "maxresources": {"vcore": 8, "memory": "100G"}},
               {"limit": "g", "groups": ["dev"], "maxresources": {"vcore": 5}}],
    "queues": [{"name": "a", "limits": [{"limit": "leaf", "users": ["sue"], "maxresources": {"vcore": 6}}]}]})",
                 reg));
  auto h = m.headroom("root.a", who("sue", {"dev"}));
  CHECK(h.bound(resources::cpu) == std::optional<amount>(5000));  // group at root binds
  CHECK(h.bound(resources::memory) == std::optional<amount>(100 * G));
  CHECK(h.bound(resources::pods) == std::nullopt);  // unlimited
  REQUIRE(m.increase("root.a", "s1", use(2000, 10 * G), who("sue", {"dev"})).allowed());
  h = m.headroom("root.a", "s1", who("sue", {"dev"}));
  CHECK(h.bound(resources::cpu) == std::optional<amount>(3000));
  CHECK(h.bound(resources::memory) == std::optional<amount>(90 * G));
  // without the group the user's leaf limit (6 - 2) binds
  h = m.headroom("root.a", who("sue"));
  CHECK(h.bound(resources::cpu) == std::optional<amount>(4000));
}

TEST_CASE("yunikorn_limits: reload lowering a limit below usage keeps the usage and denies further increases") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(
      parse(R"({"name": "root", "limits": [{"limit": "all", "users": ["*"], "maxresources": {"vcore": 10}}]})", reg));
  REQUIRE(m.increase("root", "a", use(8000), who("sue")).allowed());
  REQUIRE(m.increase("root", "b", use(1000), who("bob")).allowed());
  // the wildcard change applies to the existing trackers of sue and bob
  m.reload(
      parse(R"({"name": "root", "limits": [{"limit": "all", "users": ["*"], "maxresources": {"vcore": 4}}]})", reg));
  CHECK(m.user_usage("sue", "root") == use(8000));  // nothing evicted
  CHECK(m.increase("root", "a", use(1), who("sue")).denied());
  CHECK(m.headroom("root", "a", who("sue")).bound(resources::cpu) == std::optional<amount>(-4000));
  CHECK(m.increase("root", "b", use(3000), who("bob")).allowed());
  CHECK(m.increase("root", "b", use(1), who("bob")).denied());
  m.decrease("root", "a", use(5000), false, who("sue"));
  CHECK(m.increase("root", "a", use(1000), who("sue")).allowed());  // 3 + 1 <= 4 again
  // removing the limit entirely: no limit applies any more
  m.reload(parse(R"({"name": "root"})", reg));
  CHECK(m.increase("root", "b", use(100000), who("bob")).allowed());
}

TEST_CASE(
    "yunikorn_limits: handles and strings give the same answers; unknown queue and bad amounts are typed errors") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxresources": {"vcore": 2}, "maxapplications": 1},
      {"limit": "g", "groups": ["dev"], "maxresources": {"vcore": 3}}]}]})",
                 reg));
  const auto q = m.queue_id("root.a");
  const auto u = m.user_id("sue");
  const auto a = m.app_id("app");
  const group_handle gs[] = {m.group_id("dev")};
  CHECK(m.can_run_app(q, a, u, gs));
  CHECK(m.increase(q, a, use(1500), u, gs).allowed());
  CHECK(m.user_usage("sue", "root.a") == use(1500));
  CHECK(m.group_usage("dev", "root.a") == use(1500));
  CHECK(m.headroom(q, a, u, gs).bound(resources::cpu) == std::optional<amount>(500));
  CHECK(m.check_increase(q, a, use(600), u, gs).denied());
  CHECK(m.user_usage("sue", "root.a") == use(1500));  // check changes nothing
  m.decrease(q, a, use(1500), true);
  CHECK(m.tracker_count() == 0);

  REQUIRE_THROWS_AS(m.queue_id("root.zzz"), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.increase("root.zzz", "x", use(1), who("sue")), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.increase("root.a", "x", use(-1), who("sue")), validation_error);
  REQUIRE_THROWS_AS((void)m.increase("root.a", "x", use(1), who("")), unknown_entity_error);
  CHECK(m.tracker_count() == 0);
}

TEST_CASE("yunikorn_limits: overflow is a typed error and changes nothing") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a"}]})", reg));
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 10;
  REQUIRE(m.increase("root.a", "a", use(big), who("sue")).allowed());
  REQUIRE_THROWS_AS((void)m.increase("root.a", "a", use(11), who("sue")), overflow_error);
  CHECK(m.user_usage("sue", "root.a") == use(big));
  CHECK(m.user_usage("sue", "root") == use(big));
}

TEST_CASE("yunikorn_limits: usage JSON has the shape of YuniKorn's /usage/users and /usage/groups") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [{"limit": "r", "users": ["user1"], "maxapplications": 10}],
    "queues": [{"name": "default", "limits": [
        {"limit": "d", "users": ["user1"], "maxapplications": 10, "maxresources": {"memory": "50G", "vcore": 100}},
        {"limit": "t", "groups": ["tester"], "maxapplications": 2, "maxresources": {"vcore": 10}}]},
      {"name": "test", "limits": [{"limit": "t", "groups": ["tester"], "maxapplications": 2,
                                   "maxresources": {"vcore": 10}}]}]})",
                 reg));
  REQUIRE(m.increase("root.default", "app1", use(6000, 6 * G), who("user1", {"other"})).allowed());
  REQUIRE(m.increase("root.test", "app2", use(6000, 6 * G), who("user1", {"tester"})).allowed());
  const json users = users_usage_to_json(m);
  REQUIRE(users.size() == 1);
  const json& u = users[0];
  CHECK(u["userName"] == "user1");
  CHECK(u["groups"] == json{{"app2", "tester"}});  // app1 has no group
  CHECK(u["queues"]["queuePath"] == "root");
  CHECK(u["queues"]["resourceUsage"] == json{{"memory", 12 * G}, {"vcore", 12000}});
  CHECK(u["queues"]["runningApplications"] == json{"app1", "app2"});
  CHECK(u["queues"]["maxApplications"] == 10);
  CHECK(!u["queues"].contains("maxResources"));  // omitted when empty
  REQUIRE(u["queues"]["children"].size() == 2);
  const json& def = u["queues"]["children"][0];
  CHECK(def["queuePath"] == "root.default");
  CHECK(def["runningApplications"] == json{"app1"});
  CHECK(def["maxResources"] == json{{"memory", 50 * G}, {"vcore", 100000}});
  CHECK(!def.contains("children"));
  const json groups = groups_usage_to_json(m);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0]["groupName"] == "tester");
  CHECK(groups[0]["applications"] == json{"app2"});
  CHECK(groups[0]["queues"]["queuePath"] == "root");
  CHECK(!groups[0]["queues"].contains("maxApplications"));
  CHECK(groups[0]["queues"]["children"][0]["maxApplications"] == 2);
  CHECK(groups[0]["queues"]["children"][0]["maxResources"] == json{{"vcore", 10000}});
}

TEST_CASE("yunikorn_limits: policy adapter maps job queue, identity, id and request onto the trackers") {
  resource_registry reg;
  yunikorn_limits_policy p(reg);
  yunikorn_limits_model& m = p.manager();
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxresources": {"vcore": 2}}]}]})",
                 reg));
  job j;
  j.id = "app-1";
  j.queue = "root.a";
  j.user = "sue";
  j.groups = {"dev"};
  j.request = use(1500);
  CHECK(p.check(j).allowed());
  CHECK(m.user_usage("sue", "root.a").is_zero());
  p.commit(j);
  CHECK(m.user_usage("sue", "root.a") == use(1500));
  REQUIRE_THROWS_AS(p.commit(j), state_error);
  job k = j;
  k.id = "app-2";
  k.request = use(1000);
  CHECK(p.check(k).has_rule("max_resources", "yunikorn_limits"));
  REQUIRE_THROWS_AS(p.commit(k), state_error);  // denied at commit
  std::vector<victim> vs;
  p.victims(k, vs);
  CHECK(vs.empty());
  p.release("app-1");
  CHECK(m.tracker_count() == 0);
  REQUIRE_THROWS_AS(p.release("app-1"), unknown_entity_error);
  p.commit(k);
  CHECK(m.user_usage("sue", "root") == use(1000));
}

TEST_CASE("yunikorn_limits: policy adapter qualifies a bare queue name with root., may own its manager, introspects") {
  CHECK(yunikorn_limits_policy::qualify("a") == "root.a");
  CHECK(yunikorn_limits_policy::qualify("a.b") == "root.a.b");
  CHECK(yunikorn_limits_policy::qualify("root.a") == "root.a");
  CHECK(yunikorn_limits_policy::qualify("root") == "root");
  CHECK(yunikorn_limits_policy::qualify("rootless") == "root.rootless");
  resource_registry reg;
  auto owned = std::make_unique<yunikorn_limits_model>(reg);
  owned->reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxresources": {"vcore": 2}}]}]})",
                      reg));
  const yunikorn_limits_model* const taken = owned.get();
  std::optional<yunikorn_limits_policy> p;
  p.emplace(std::move(owned));
  CHECK(&p->manager() == taken);  // taken over, at the same address
  REQUIRE_THROWS_AS(yunikorn_limits_policy(std::unique_ptr<yunikorn_limits_model>{}), state_error);
  job j;
  j.id = "app-1";
  j.queue = "a";  // bare name: root.a
  j.user = "sue";
  j.request = use(1500);
  p->commit(j);
  CHECK(p->manager().user_usage("sue", "root.a") == use(1500));
  json doc;
  to_json(doc, *p);
  CHECK(doc["users"][0]["userName"] == "sue");
  CHECK(doc["users"][0]["queues"]["children"][0]["queuePath"] == "root.a");
  CHECK(doc["users"][0]["queues"]["children"][0]["resourceUsage"]["vcore"] == 1500);
  CHECK(doc["groups"].empty());
  job k = j;
  k.id = "app-2";
  k.queue = "nope";
  REQUIRE_THROWS_AS(p->commit(k), unknown_entity_error);  // root.nope: nothing changed
  CHECK(p->manager().user_usage("sue", "root.a") == use(1500));
  {
    yunikorn_limits_policy copy = *p;  // a copy is an independent model
    CHECK(&copy.manager() != &p->manager());
    CHECK(copy.manager().user_usage("sue", "root.a") == use(1500));
    copy.release("app-1");
    CHECK(copy.manager().tracker_count() == 0);
    CHECK(p->manager().user_usage("sue", "root.a") == use(1500));  // the original keeps its usage
    job l = j;
    l.id = "app-3";
    l.request = use(500);
    copy.commit(l);  // the copy resolves its own limits: 500 <= 2000
    l.request = use(600);
    l.id = "app-4";
    CHECK(p->check(l).has_rule("max_resources", "yunikorn_limits"));  // 1500 + 600 > 2000
    CHECK(copy.check(l).allowed());                                   // 500 + 600 <= 2000
  }
  p->release("app-1");
  CHECK(p->manager().tracker_count() == 0);
  p.reset();
}

TEST_CASE("yunikorn_limits: reload of maxapplications and of the wildcard group applies to running trackers") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  const auto cfg = [&](int apps, const char* pool) {
    return parse(std::string(R"({"name": "root", "limits": [
        {"limit": "u", "users": ["*"], "maxapplications": )") +
                     std::to_string(apps) + R"(},
        {"limit": "g", "groups": ["dev"], "maxapplications": 10},
        {"limit": "pool", "groups": ["*"], "maxresources": {"vcore": )" +
                     pool + "}}]}",
                 reg);
  };
  m.reload(cfg(3, "4"));
  REQUIRE(m.increase("root", "a1", use(1000), who("sue", {"x"})).allowed());
  REQUIRE(m.increase("root", "a2", use(1000), who("sue", {"x"})).allowed());
  REQUIRE(m.increase("root", "b1", use(1000), who("bob", {"y"})).allowed());
  CHECK(m.group_usage("*", "root") == use(3000));
  m.reload(cfg(1, "2"));
  CHECK(m.user_running("sue", "root") == 2);  // nothing evicted
  CHECK_FALSE(m.can_run_app("root", "a3", who("sue", {"x"})));
  CHECK(m.increase("root", "a3", use(1), who("sue", {"x"})).has_rule("max_applications"));
  // the pool's lowered limit binds the existing pool tracker: 3 cpu used > 2
  const auto d = m.increase("root", "a1", use(1), who("sue", {"x"}));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "group:*@root");
  CHECK(d.reasons()[0].limit == 2000);
  m.decrease("root", "a2", use(1000), true, who("sue"));
  m.decrease("root", "b1", use(1000), true, who("bob"));
  CHECK(m.increase("root", "a1", use(1000), who("sue", {"x"})).allowed());  // 2 <= 2
  CHECK_FALSE(m.can_run_app("root", "a4", who("sue", {"x"})));              // 1 app of 1 running
}

TEST_CASE("yunikorn_limits: removed applications are forgotten, so memory follows the running applications") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxresources": {"vcore": 1000}},
      {"limit": "g", "groups": ["dev"], "maxresources": {"vcore": 1000}}]}]})",
                 reg));
  const auto app_name = [](int round, int i) { return "app-" + std::to_string(round) + "-" + std::to_string(i); };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i)
      REQUIRE(m.increase("root.a", app_name(round, i), use(10), who("u" + std::to_string(i % 7), {"dev"})).allowed());
    CHECK(m.application_count() == 200);
    CHECK(m.group_running("dev", "root") == 200);
    for (int i = 0; i < 200; ++i)
      m.decrease("root.a", app_name(round, i), use(10), true, who("u" + std::to_string(i % 7)));
    CHECK(m.application_count() == 0);
    CHECK(m.tracker_count() == 0);
  }
  // lookups and denials of applications that never ran leave nothing behind
  (void)m.headroom("root.a", "ghost", who("sue"));
  (void)m.can_run_app("root.a", "ghost", who("sue"));
  (void)m.check_increase("root.a", "ghost", use(1), who("sue"));
  // a check names the application it was asked about, though it never tracked it
  REQUIRE_THROWS_WITH((void)m.check_increase("root.a", "ghost-2", use(-1), who("sue")),
                      Catch::Matchers::Contains("application ghost-2.usage"));
  CHECK(m.check_increase("root.a", "ghost-3", use(2'000'000), who("sue")).has_rule("max_resources"));
  CHECK(m.increase("root.a", "too-big", use(2'000'000), who("sue")).denied());
  REQUIRE_THROWS_AS((void)m.increase("root.a", "bad", use(-1), who("sue")), validation_error);
  CHECK(m.application_count() == 0);
  CHECK(!m.group_of("too-big"));
  // forgotten ids are reused: 600 applications came and went, the id space did not grow
  const auto q = m.queue_id("root.a");
  const auto u = m.user_id("sue");
  const auto a = m.app_id("held");
  CHECK(static_cast<std::uint32_t>(a) < 200);
  // a handle keeps its application until release_app, even after it is removed
  REQUIRE(m.increase(q, a, use(5), u, {}).allowed());
  m.decrease(q, a, use(5), true);
  CHECK(m.application_count() == 1);
  REQUIRE(m.increase(q, a, use(5), u, {}).allowed());  // the handle still works
  m.release_app(a);
  CHECK(m.application_count() == 1);  // still running
  m.decrease(q, a, use(5), true);
  CHECK(m.application_count() == 0);
  CHECK(m.tracker_count() == 0);
  REQUIRE_THROWS_AS(m.release_app(a), unknown_entity_error);
}

TEST_CASE("yunikorn_limits: JSON null means absent, and a wrongly typed field is reported at its path") {
  resource_registry reg;
  // every optional field may be null: the same as leaving it out
  const auto cfg = parse(R"({"name": "root", "maxapplications": null, "limits": null, "queues": [
      {"name": "a", "resources": {"guaranteed": {"vcore": 1}}, "queues": null, "limits": [
         {"limit": null, "users": ["sue"], "groups": null, "maxresources": null, "maxapplications": 2}]},
      {"name": "b", "resources": null, "maxapplications": 4, "limits": [
         {"limit": "fits", "users": ["bob"], "maxapplications": 4}]}]})",
                         reg);
  CHECK(cfg.root.limits.empty());
  CHECK(cfg.root.max_applications == 0);
  REQUIRE(cfg.root.queues.size() == 2);
  const auto& a = cfg.root.queues[0];
  CHECK(a.max.empty());  // resources without max: the queue has no maximum
  CHECK(a.queues.empty());
  REQUIRE(a.limits.size() == 1);
  CHECK(a.limits[0].name.empty());
  CHECK(a.limits[0].users == std::vector<std::string>{"sue"});
  CHECK(a.limits[0].groups.empty());
  CHECK(a.limits[0].max_resources.empty());
  CHECK(a.limits[0].max_applications == 2);
  CHECK(cfg.root.queues[1].max_applications == 4);  // a limit equal to the queue's maxapplications fits

  const auto ps = problems_of(R"({"name": "root", "queues": [
      {"name": 5},
      {"name": "b", "resources": "big"},
      {"name": "c", "limits": [{"limit": 7, "users": "sue", "maxapplications": 1},
                               {"limit": "g", "groups": ["dev", 3], "maxresources": [1], "maxapplications": 1},
                               "not a limit"]}]})");
  CHECK(any_problem(ps, "queues[0].name", "missing or not a string"));
  CHECK(any_problem(ps, "root.queues[0]", "invalid queue name ''"));
  CHECK(any_problem(ps, "queues[1].resources", "expected an object, got string"));
  CHECK(any_problem(ps, "queues[2].limits[0].limit", "expected a string, got number"));
  CHECK(any_problem(ps, "queues[2].limits[0].users", "expected an array of names, got string"));
  CHECK(any_problem(ps, "queues[2].limits[1].groups[1]", "expected a string, got number"));
  CHECK(any_problem(ps, "queues[2].limits[1].maxresources", "expected an object of resource quantities"));
  CHECK(any_problem(ps, "queues[2].limits[2]", "expected a limit object, got string"));
  // the limit whose users field was wrong names nobody, and that is reported too
  CHECK(any_problem(ps, "root.c.limits[0]", "names no user and no group"));
}

TEST_CASE("yunikorn_limits: partition documents pick a partition by name and merge partition and root limits") {
  const std::string lim = R"([{"limit": "l", "users": ["sue"], "maxapplications": 1}])";
  const auto load = [](const std::string& text, const std::string& partition = "") {
    resource_registry reg;
    yunikorn_limits_json_options opt;
    opt.partition = partition;
    return load_yunikorn_limits_config(json::parse(text), reg, opt);
  };
  SECTION("by name, passing over entries that are not named partitions") {
    const std::string doc = R"({"partitions": [5, {"limits": []}, {"name": 3},
        {"name": "gpu", "queues": [{"name": "root", "limits": )" +
                            lim + R"(}]}]})";
    const auto cfg = load(doc, "gpu");
    REQUIRE(cfg.root.limits.size() == 1);
    CHECK(cfg.root.limits[0].users == std::vector<std::string>{"sue"});
    try {
      (void)load(doc, "cpu");
      FAIL("unknown partition accepted");
    } catch (const unknown_entity_error& e) {
      CHECK(std::string(e.what()).find("cpu") != std::string::npos);
    }
    resource_registry reg;
    REQUIRE_THROWS_AS(load_yunikorn_limits_config(json::parse(R"({"partitions": {}})"), reg), parse_error);
    REQUIRE_THROWS_AS(load_yunikorn_limits_config(json::parse(R"({"partitions": []})"), reg), parse_error);
    REQUIRE_THROWS_AS(load_yunikorn_limits_config(json::parse(R"([1])"), reg), parse_error);
  }
  SECTION("partition limits are the root limits") {
    // without queues
    auto cfg = load(R"({"partitions": [{"name": "default", "limits": )" + lim + "}]}");
    CHECK(cfg.root.limits.size() == 1);
    CHECK(cfg.root.queues.empty());
    // with a root queue that sets none
    cfg = load(R"({"partitions": [{"name": "default", "limits": )" + lim + R"(, "queues": [{"name": "root"}]}]})");
    CHECK(cfg.root.limits.size() == 1);
    // with a root queue that sets the same ones: fine
    cfg = load(R"({"partitions": [{"name": "default", "limits": )" + lim +
               R"(, "queues": [{"name": "root", "limits": )" + lim + "}]}]}");
    CHECK(cfg.root.limits.size() == 1);
    // with top-level queues and no explicit root
    cfg = load(R"({"partitions": [{"name": "default", "limits": )" + lim +
               R"(, "queues": [{"name": "a"}, {"name": "b"}]}]})");
    CHECK(cfg.root.limits.size() == 1);
    REQUIRE(cfg.root.queues.size() == 2);
    CHECK(cfg.root.queues[1].name == "b");
    // null partition limits: none
    cfg = load(R"({"partitions": [{"name": "default", "limits": null, "queues": [{"name": "root"}]}]})");
    CHECK(cfg.root.limits.empty());
  }
  SECTION("one top-level queue that is not the root becomes the root's child") {
    auto cfg = load(R"({"partitions": [{"queues": [{"name": "a", "maxapplications": 3}]}]})");
    CHECK(cfg.root.name == "root");
    REQUIRE(cfg.root.queues.size() == 1);
    CHECK(cfg.root.queues[0].name == "a");
    CHECK(cfg.root.queues[0].max_applications == 3);
    // a single partition object, with a root queue
    cfg = load(R"({"name": "default", "queues": [{"name": "root", "queues": [{"name": "x"}]}]})");
    REQUIRE(cfg.root.queues.size() == 1);
    CHECK(cfg.root.queues[0].name == "x");
    // a bare root queue with its own maximum
    cfg = load(R"({"name": "root", "resources": {"max": {"vcore": 8}}, "queues": [{"name": "y"}]})");
    CHECK(cfg.root.max.bound(resources::cpu) == std::optional<amount>(8000));
    CHECK(cfg.root.queues.size() == 1);
  }
  SECTION("malformed top-level queues name the item") {
    const auto unnamed = problems_of(R"({"partitions": [{"queues": [{"maxapplications": 1}]}]})");
    CHECK(any_problem(unnamed, "partitions[0].queues[0].name", "missing or not a string"));
    const auto number = problems_of(R"({"partitions": [{"queues": [5]}]})");
    CHECK(any_problem(number, "partitions[0].queues[0]", "expected a queue object, got number"));
    const auto obj = problems_of(R"({"partitions": [{"queues": {"name": "root"}}]})");
    CHECK(any_problem(obj, "partitions[0].queues", "expected an array of queues"));
    const auto child = problems_of(R"({"name": "root", "queues": [{"name": "a", "queues": {"b": {}}}]})");
    CHECK(any_problem(child, "queues[0].queues", "expected an array of queues, got object"));
    const auto with_limits = problems_of(R"({"partitions": [{"queues": [5], "limits": [
        {"limit": "l", "users": ["sue"], "maxapplications": 1}]}]})");
    CHECK(any_problem(with_limits, "partitions[0].queues[0]", "expected a queue object"));
    CHECK(any_problem(with_limits, "root.queues[0]", "invalid queue name ''"));
    CHECK(with_limits.size() == 2);  // the partition limits themselves are fine
  }
}

TEST_CASE("yunikorn_limits: the root queue must be named root") {
  const auto top = problems_of(R"({"name": "top", "limits": [{"users": ["sue"], "maxapplications": 1}]})");
  REQUIRE(top.size() == 1);
  CHECK(top[0].path == "top");
  CHECK(top[0].message == "the root queue must be named 'root'");
  const auto empty = problems_of(R"({"name": "", "limits": []})");
  REQUIRE(empty.size() == 1);
  CHECK(empty[0].path == "root");
  CHECK(empty[0].message == "the root queue must be named 'root'");
}

TEST_CASE(
    "yunikorn_limits: user, group and queue names may not be empty or hold blanks, commas or control characters") {
  const auto ps = problems_of(one_queue(
      R"([{"limit": "odd names", "users": ["", "a b", "a\tb", "a\nb", "a\rb", "a,b", "a\u0001b", "ok.name"],
          "maxapplications": 1}])"));
  CHECK(ps.size() == 7);
  CHECK(any_problem(ps, "root.a.limits[0]", "limit 'odd names': invalid user name ''"));
  CHECK(any_problem(ps, "root.a.limits[0]", "invalid user name 'a b'"));
  CHECK(any_problem(ps, "root.a.limits[0]", "invalid user name 'a\tb'"));
  CHECK(any_problem(ps, "root.a.limits[0]", "invalid user name 'a\nb'"));
  CHECK(any_problem(ps, "root.a.limits[0]", "invalid user name 'a\rb'"));
  CHECK(any_problem(ps, "root.a.limits[0]", "invalid user name 'a,b'"));
  CHECK(any_problem(ps, "root.a.limits[0]",
                    "invalid user name 'a\x01"
                    "b'"));
  const auto gs = problems_of(one_queue(R"([{"limit": "g", "groups": ["dev ops", "qa"], "maxapplications": 1}])"));
  REQUIRE(gs.size() == 1);
  CHECK(any_problem(gs, "root.a.limits[0]", "invalid group name 'dev ops'"));
  const auto qs = problems_of(R"({"name": "root", "queues": [{"name": "team a"}, {"name": "team-b"}]})");
  REQUIRE(qs.size() == 1);
  CHECK(any_problem(qs, "root.queues[0]", "invalid queue name 'team a'"));
}

TEST_CASE("yunikorn_limits: a named user is held to the maxapplications of an ancestor's wildcard user entry") {
  const std::string root = R"([{"limit": "everyone", "users": ["*"], "maxapplications": 2}])";
  CHECK(problems_of(one_queue(R"([{"limit": "bob", "users": ["bob"], "maxapplications": 2}])", root)).empty());
  const auto more = problems_of(one_queue(R"([{"limit": "bob", "users": ["bob"], "maxapplications": 3}])", root));
  REQUIRE(more.size() == 1);
  CHECK(more[0].path == "root.a.limits[0]");
  CHECK(more[0].message ==
        "limit 'bob': user 'bob' maxapplications 3 exceeds the wildcard entry of ancestor root.limits[0] (2)");
  // no maxapplications at the child means unlimited, which also exceeds the ancestor's 2
  const auto unlimited =
      problems_of(one_queue(R"([{"limit": "bob", "users": ["bob"], "maxresources": {"vcore": 1}}])", root));
  CHECK(any_problem(unlimited, "root.a.limits[0]", "maxapplications unlimited exceeds the wildcard entry"));
}

TEST_CASE("yunikorn_limits: a config built in code is validated too: negative maxima, root name") {
  resource_registry reg;
  yunikorn_limits_config cfg;
  limits_queue a;
  a.name = "a";
  a.max.set(resources::cpu, -1);
  limit_entry e;
  e.name = "neg";
  e.users = {"sue"};
  e.max_resources.set(resources::memory, -5);
  e.max_resources.set(resources::cpu, 0);
  a.limits.push_back(e);
  cfg.root.queues.push_back(a);
  std::vector<diagnostic> ps;
  try {
    validate_yunikorn_limits_config(cfg, reg);
    FAIL("accepted");
  } catch (const validation_error& err) {
    ps = err.problems();
  }
  CHECK(any_problem(ps, "root.a.resources.max.cpu", "queue maximum must not be negative"));
  CHECK(any_problem(ps, "root.a.limits[0].maxresources.memory", "limit 'neg': maxresources memory is negative (-5)"));
  CHECK(any_problem(ps, "root.a.limits[0]", "maxresources cpu=0 exceeds the queue's resources.max (-1)"));
  CHECK(ps.size() == 3);
  // the same checks as the loaders: a good config passes, a renamed root fails
  cfg.root.queues[0].max.set(resources::cpu, 4000);
  cfg.root.queues[0].limits[0].max_resources.set(resources::memory, 5);
  cfg.root.queues[0].limits[0].max_resources.set(resources::cpu, 4000);
  CHECK_NOTHROW(validate_yunikorn_limits_config(cfg, reg));
  cfg.root.name = "top";
  diagnostics d;
  collect_limits_problems(cfg, reg, d);
  REQUIRE(d.size() == 1);
}

TEST_CASE("yunikorn_limits: with vcore_as_cpu off, vcore is a resource of its own in limits, requests and usage JSON") {
  resource_registry reg;
  yunikorn_limits_json_options opt;
  opt.vcore_as_cpu = false;
  const auto cfg = load_yunikorn_limits_config(json::parse(R"({"name": "root", "limits": [
      {"limit": "u", "users": ["sue"], "maxresources": {"vcore": 5, "cpu": "2"}}]})"),
                                               reg, opt);
  const auto vcore = reg.find("vcore");
  REQUIRE(vcore.has_value());
  CHECK(*vcore != resources::cpu);
  CHECK(cfg.root.limits[0].max_resources.bound(*vcore) == std::optional<amount>(5));
  CHECK(cfg.root.limits[0].max_resources.bound(resources::cpu) == std::optional<amount>(2000));
  yunikorn_limits_model m(reg);
  m.reload(cfg);
  const resource_vector req =
      parse_yunikorn_limits_usage(json::parse(R"({"vcore": 5, "cpu": 1})"), reg, "request", opt);
  CHECK(req.get(*vcore) == 5);
  CHECK(req.get(resources::cpu) == 1000);
  CHECK(m.increase("root", "s1", req, who("sue")).allowed());
  const auto d = m.increase(
      "root", "s1", parse_yunikorn_limits_usage(json::parse(R"({"vcore": 1})"), reg, "request", opt), who("sue"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].resource_name == "vcore");
  const json users = users_usage_to_json(m, opt);
  REQUIRE(users.size() == 1);
  CHECK(users[0]["queues"]["resourceUsage"] == json{{"cpu", 1000}, {"vcore", 5}});
  CHECK(users[0]["queues"]["maxResources"] == json{{"cpu", 2000}, {"vcore", 5}});
  // a request with a bad quantity names its path
  try {
    (void)parse_yunikorn_limits_usage(json::parse(R"({"memory": "lots"})"), reg, "request", opt);
    FAIL("accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "request.memory");
  }
}

TEST_CASE("yunikorn_limits: handles that name nothing, or an application that is not running, are typed errors") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxresources": {"vcore": 4}}]}]})",
                 reg));
  const auto q = m.queue_id("root.a");
  const auto u = m.user_id("sue");
  const auto run = m.app_id("run");
  REQUIRE(m.increase(q, run, use(3000), u, {}).allowed());
  // a partial decrease by handle needs no identity
  m.decrease(q, run, use(1000), false);
  CHECK(m.user_usage("sue", "root.a") == use(2000));

  const auto bogus_app = app_handle{9999};
  REQUIRE_THROWS_AS(m.release_app(bogus_app), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.increase(q, bogus_app, use(1), u, {}), unknown_entity_error);
  REQUIRE_THROWS_AS(m.decrease(q, bogus_app, use(1), false), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.increase(queue_handle{9999}, run, use(1), u, {}), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.increase(q, m.app_id("other"), use(1), user_handle{9999}, {}), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.headroom(queue_handle{9999}, run, u, {}), unknown_entity_error);
  // questions too: a handle that was never issued names nothing
  REQUIRE_THROWS_AS((void)m.headroom(q, bogus_app, u, {}), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.can_run_app(q, bogus_app, u, {}), unknown_entity_error);

  // a held handle of an application that does not run (yet)
  const auto idle = m.app_id("idle");
  CHECK(m.application_count() == 3);  // run, other, idle
  CHECK(!m.group_of("idle"));
  try {
    m.decrease(q, idle, use(1), false);
    FAIL("decrease of an idle application accepted");
  } catch (const unknown_entity_error& e) {
    CHECK(std::string(e.what()).find("idle") != std::string::npos);
  }
  REQUIRE_THROWS_AS(m.decrease("root.a", "idle", use(1), false, who("sue")), unknown_entity_error);
  // releasing the handle of an application that does not run forgets it at once
  CHECK(m.can_run_app(q, idle, u, {}));  // held, not running: asked as a new application
  CHECK(m.headroom(q, idle, u, {}).bound(resources::cpu) == std::optional<amount>(2000));
  m.release_app(idle);
  m.release_app(m.app_id("other"));
  CHECK(m.application_count() == 1);
  REQUIRE_THROWS_AS(m.release_app(idle), unknown_entity_error);
  // a released handle names nothing any more
  REQUIRE_THROWS_AS((void)m.headroom(q, idle, u, {}), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.can_run_app(q, idle, u, {}), unknown_entity_error);
  // none of it touched the running application
  CHECK(m.user_usage("sue", "root.a") == use(2000));
  CHECK(m.user_running("sue", "root") == 1);
}

TEST_CASE("yunikorn_limits: an empty application name is an error for a change, and a new application for a question") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxapplications": 1, "maxresources": {"vcore": 4}}]}]})",
                 reg));
  REQUIRE_THROWS_AS((void)m.increase("root.a", "", use(1), who("sue")), unknown_entity_error);
  REQUIRE_THROWS_AS((void)m.check_increase("root.a", "", use(1), who("sue")), unknown_entity_error);
  REQUIRE_THROWS_AS(m.decrease("root.a", "", use(1), false, who("sue")), unknown_entity_error);
  CHECK(m.tracker_count() == 0);
  CHECK(m.application_count() == 0);
  CHECK(m.can_run_app("root.a", "", who("sue")));
  REQUIRE(m.increase("root.a", "s1", use(1000), who("sue")).allowed());
  CHECK_FALSE(m.can_run_app("root.a", "", who("sue")));  // a second application would pass maxapplications 1
  CHECK(m.can_run_app("root.a", "s1", who("sue")));      // the running one may go on
}

TEST_CASE("yunikorn_limits: can_run_app is false when the group's maxapplications is used up by another user") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "limits": [{"limit": "dev", "groups": ["dev"], "maxapplications": 1}],
    "queues": [{"name": "a", "limits": [{"limit": "users", "users": ["*"], "maxapplications": 5}]}]})",
                 reg));
  CHECK(m.can_run_app("root.a", "x", who("ann", {"dev"})));
  REQUIRE(m.increase("root.a", "x", use(1), who("ann", {"dev"})).allowed());
  // bob has room of his own, but the dev group at the root has one running application of one
  CHECK_FALSE(m.can_run_app("root.a", "y", who("bob", {"dev"})));
  const auto d = m.increase("root.a", "y", use(1), who("bob", {"dev"}));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "group:dev@root");
  CHECK(d.reasons()[0].rule == "max_applications");
  CHECK(m.can_run_app("root.a", "y", who("bob", {"qa"})));  // not in dev: not counted there
}

TEST_CASE("yunikorn_limits: headroom of an application asked for another user or another queue") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "sue root", "users": ["sue"], "maxresources": {"vcore": 10}},
               {"limit": "dev root", "groups": ["dev"], "maxresources": {"vcore": 7}}],
    "queues": [{"name": "a", "limits": [{"limit": "sue a", "users": ["sue"], "maxresources": {"vcore": 6}},
                                        {"limit": "qa a", "groups": ["qa"], "maxresources": {"vcore": 3}}]}]})",
                 reg));
  REQUIRE(m.increase("root.a", "s1", use(2000), who("sue", {"dev"})).allowed());
  CHECK(m.group_of("s1") == std::optional<std::string>("dev"));
  // at the parent queue the running application keeps its group (dev): min(10 - 2, 7 - 2)
  CHECK(m.headroom("root", "s1", who("sue", {"qa"})).bound(resources::cpu) == std::optional<amount>(5000));
  // asked for bob, s1 is not his: a new application of bob in qa at root.a (qa 3, no user limit)
  CHECK(m.headroom("root.a", "s1", who("bob", {"qa"})).bound(resources::cpu) == std::optional<amount>(3000));
  // a held id that does not run: a new application of sue in qa, min(6 - 2, 10 - 2, 3)
  const auto held = m.app_id("held");
  CHECK(m.headroom("root.a", "held", who("sue", {"qa"})).bound(resources::cpu) == std::optional<amount>(3000));
  m.release_app(held);
  // nothing changed
  CHECK(m.user_usage("bob", "root.a").is_zero());
  CHECK(m.group_usage("qa", "root.a").is_zero());
  CHECK(m.user_usage("sue", "root.a") == use(2000));
}

TEST_CASE("yunikorn_limits: headroom of a custom resource is the smallest room over every level") {
  resource_registry reg;
  // many custom resources: the limited one has a large id
  for (int i = 0; i < 20; ++i) (void)reg.intern("example.com/r" + std::to_string(i));
  const resource_id r19 = *reg.find("example.com/r19");
  REQUIRE(r19 >= 16);
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root",
    "limits": [{"limit": "root", "users": ["sue"], "maxresources": {"example.com/r19": 10}}],
    "queues": [{"name": "a", "limits": [{"limit": "a", "users": ["sue"], "maxresources": {"example.com/r19": 5}}]},
               {"name": "b", "limits": [{"limit": "b", "users": ["sue"], "maxresources": {"example.com/r19": 8}}]}]})",
                 reg));
  CHECK(m.headroom("root.a", who("sue")).bound(r19) == std::optional<amount>(5));
  CHECK(m.headroom("root.b", who("sue")).bound(r19) == std::optional<amount>(8));
  resource_vector seven;
  seven.set(r19, 7);
  REQUIRE(m.increase("root.b", "b1", seven, who("sue")).allowed());
  CHECK(m.headroom("root.b", who("sue")).bound(r19) == std::optional<amount>(1));  // the leaf binds: 8 - 7
  CHECK(m.headroom("root.a", who("sue")).bound(r19) == std::optional<amount>(3));  // the root binds: 10 - 7
  resource_vector four;
  four.set(r19, 4);
  const auto d = m.increase("root.a", "a1", four, who("sue"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].entity == "user:sue@root");
  CHECK(d.reasons()[0].resource_name == "example.com/r19");
}

TEST_CASE("yunikorn_limits: a request whose sum would overflow a limited resource is denied, not an overflow error") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a"}]})", reg));
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 10;
  REQUIRE(m.increase("root.a", "a", use(big), who("sue")).allowed());
  // a limit arrives below the usage; the sum of usage and request does not even fit in int64
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "sue", "users": ["sue"], "maxresources": {"vcore": 4}}]}]})",
                 reg));
  const auto d = m.increase("root.a", "a", use(11), who("sue"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "max_resources");
  CHECK(d.reasons()[0].entity == "user:sue@root.a");
  CHECK(d.reasons()[0].used == big);
  CHECK(d.reasons()[0].limit == 4000);
  CHECK(m.user_usage("sue", "root.a") == use(big));
}

TEST_CASE("yunikorn_limits: an identity's empty and '*' groups are ignored: nobody joins the wildcard pool by name") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "dev", "groups": ["dev"], "maxapplications": 5},
      {"limit": "pool", "groups": ["*"], "maxresources": {"vcore": 2}}]}]})",
                 reg));
  const auto claims_pool = who("sue", {"", "*"});
  // the same as a user without groups: no group tracking, so the 2-cpu pool does not bind
  CHECK(m.can_run_app("root.a", "s1", claims_pool));
  CHECK(m.headroom("root.a", "s1", claims_pool).bound(resources::cpu) == std::nullopt);
  CHECK(m.check_increase("root.a", "s1", use(5000), claims_pool).allowed());
  REQUIRE(m.increase("root.a", "s1", use(5000), claims_pool).allowed());
  CHECK(m.group_of("s1") == std::optional<std::string>(""));
  CHECK(m.group_usage("*", "root.a").is_zero());
  // a user in some other group does fall into the pool
  CHECK(m.headroom("root.a", who("bob", {"", "x"})).bound(resources::cpu) == std::optional<amount>(2000));
  CHECK(m.increase("root.a", "b1", use(3000), who("bob", {"x"})).denied());
}

TEST_CASE(
    "yunikorn_limits: by name, a running application asked for in another queue or by another user is a conflict") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxapplications": 1}]}, {"name": "b"}]})",
                 reg));
  REQUIRE(m.increase("root.a", "s1", use(1000), who("sue")).allowed());
  const auto conflict = [&](auto&& call) {
    try {
      call();
    } catch (const state_error& e) {
      return e.id() == error_id::state_conflict && std::string(e.what()).find("'s1'") != std::string::npos;
    }
    return false;
  };
  CHECK(conflict([&] { (void)m.increase("root.b", "s1", use(1), who("sue")); }));
  CHECK(conflict([&] { (void)m.check_increase("root.b", "s1", use(1), who("sue")); }));
  CHECK(conflict([&] { (void)m.increase("root.a", "s1", use(1), who("bob")); }));
  CHECK(conflict([&] { (void)m.check_increase("root.a", "s1", use(1), who("bob")); }));
  CHECK(conflict([&] { m.decrease("root.a", "s1", use(1), false, who("bob")); }));
  // a question is no conflict: a running application can always continue
  CHECK(m.can_run_app("root.b", "s1", who("sue")));
  CHECK(m.can_run_app("root.a", "s1", who("bob")));
  CHECK_FALSE(m.can_run_app("root.a", "s2", who("sue")));
  CHECK(m.user_usage("sue", "root.a") == use(1000));
  CHECK(m.user_usage("bob", "root").is_zero());
  CHECK(m.user_usage("sue", "root.b").is_zero());
}

TEST_CASE("yunikorn_limits: a held application id is a new application until its first increase by name") {
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "u", "users": ["*"], "maxapplications": 1}]}]})",
                 reg));
  const auto held = m.app_id("held");
  REQUIRE(m.increase("root.a", "other", use(1), who("sue")).allowed());
  // "held" does not run: it is a second application of sue, over maxapplications 1
  CHECK_FALSE(m.can_run_app("root.a", "held", who("sue")));
  CHECK(m.check_increase("root.a", "held", use(1), who("sue")).has_rule("max_applications"));
  CHECK(m.increase("root.a", "held", use(1), who("sue")).has_rule("max_applications"));
  CHECK(m.application_count() == 2);  // the denial did not forget the held id
  m.decrease("root.a", "other", use(1), true, who("sue"));
  CHECK(m.can_run_app("root.a", "held", who("sue")));
  REQUIRE(m.increase("root.a", "held", use(1), who("sue")).allowed());
  CHECK(m.user_running("sue", "root.a") == 1);
  m.decrease("root.a", "held", use(1), true, who("sue"));
  CHECK(m.application_count() == 1);  // still held
  m.release_app(held);
  CHECK(m.application_count() == 0);
  CHECK(m.tracker_count() == 0);
}

namespace {

yunikorn_limits_config parse_upstream(const std::string& text, resource_registry& reg) {
  yunikorn_limits_json_options opt;
  opt.upstream = true;
  return load_yunikorn_limits_config(json::parse(text), reg, opt);
}

std::vector<diagnostic> problems_upstream(const std::string& text) {
  resource_registry reg;
  try {
    (void)parse_upstream(text, reg);
  } catch (const validation_error& e) {
    return e.problems();
  }
  return {};
}

}  // namespace

TEST_CASE("yunikorn_limits: upstream maxresources with some amounts zero is accepted, and a zero amount binds") {
  // YuniKorn's StrictlyGreaterThanZero: no negative amount and at least one positive
  const std::string some_zero =
      one_queue(R"([{"limit": "no cpu", "users": ["sue"], "maxresources": {"memory": 100, "vcore": 0}}])");
  CHECK(problems_upstream(some_zero).empty());
  CHECK(problems_of(some_zero).empty());  // the default follows YuniKorn here
  const auto all_zero =
      problems_upstream(one_queue(R"([{"limit": "nothing", "users": ["sue"], "maxresources": {"memory": 0}}])"));
  REQUIRE(all_zero.size() == 1);
  CHECK(any_problem(all_zero, "root.a.limits[0].maxresources", "limit 'nothing'"));
  CHECK(any_problem(all_zero, "root.a.limits[0].maxresources", "at least one amount greater than zero"));

  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse_upstream(some_zero, reg));
  CHECK(m.increase("root.a", "app-1", use(0, 60), who("sue")).allowed());
  // vcore 0: YuniKorn's headroom for vcore is 0 - usage, so any cpu request is refused
  CHECK(m.increase("root.a", "app-1", use(1), who("sue")).denied());
  CHECK(m.headroom("root.a", "app-1", who("sue")).bound(resources::cpu) == std::optional<amount>(0));
  CHECK(m.headroom("root.a", "app-1", who("sue")).bound(resources::memory) == std::optional<amount>(40));
}

TEST_CASE(
    "yunikorn_limits: upstream a cpu limit is a resource named cpu that never binds pod cpu, and the loader warns") {
  for (const bool upstream : {false, true}) {
    resource_registry reg;
    yunikorn_limits_json_options opt;
    opt.upstream = upstream;
    const auto cfg = load_yunikorn_limits_config(
        json::parse(one_queue(R"([{"limit": "cpu two", "users": ["sue"], "maxresources": {"cpu": 2}}])")), reg, opt);
    REQUIRE(cfg.warnings.size() == 1);
    CHECK(cfg.warnings[0].path.find("limits[0].maxresources.cpu") != std::string::npos);
    CHECK(cfg.warnings[0].message.find("limit 'cpu two'") != std::string::npos);
    CHECK(cfg.warnings[0].message.find("never binds") != std::string::npos);
    yunikorn_limits_model m(reg);
    m.reload(cfg);
    // 100 pod cpus (YuniKorn's vcore): the cpu limit of 2 does not apply to them
    CHECK(m.increase("root.a", "app-1", use(100'000), who("sue")).allowed());
    CHECK(m.headroom("root.a", "app-1", who("sue")).find(resources::cpu) == nullptr);
    // the usage JSON prints it as YuniKorn does: a resource named cpu, in whole units
    const json users = users_usage_to_json(m);
    CHECK(users[0]["queues"]["children"][0]["maxResources"] == json{{"cpu", 2}});
    CHECK(users[0]["queues"]["children"][0]["resourceUsage"] == json{{"vcore", 100'000}});
  }
  // vcore_as_cpu off: cpu is quota's cpu, as the host asked
  resource_registry reg;
  yunikorn_limits_json_options off;
  off.vcore_as_cpu = false;
  const auto cfg = load_yunikorn_limits_config(
      json::parse(one_queue(R"([{"limit": "cpu two", "users": ["sue"], "maxresources": {"cpu": 2}}])")), reg, off);
  CHECK(cfg.warnings.empty());
  CHECK(*cfg.root.queues[0].limits[0].max_resources.find(resources::cpu) == 2000);
}

TEST_CASE("yunikorn_limits: upstream user, group and queue names follow YuniKorn's patterns") {
  for (const bool upstream : {false, true}) {
    auto problems = [&](const std::string& t) { return upstream ? problems_upstream(t) : problems_of(t); };
    // users: a letter or '_' first; then letters, digits and : # / _ . @ -; a final '$'
    CHECK(problems(one_queue(R"([{"limit": "ok", "users": ["sue@corp.example", "_svc", "host/a#b:c", "machine$"],
                                  "maxapplications": 1}])"))
              .empty());
    const auto us =
        problems(one_queue(R"([{"limit": "bad users", "users": ["1sue", "-x", "a$b", "a+b"], "maxapplications": 1}])"));
    CHECK(us.size() == 4);
    CHECK(any_problem(us, "root.a.limits[0].users", "limit 'bad users': invalid user name '1sue'"));
    CHECK(any_problem(us, "root.a.limits[0].users", "invalid user name 'a$b'"));
    // groups: no @ # / and no final '$'
    CHECK(problems(one_queue(R"([{"limit": "ok", "groups": ["dev-ops", "_x.y:z"], "maxapplications": 1}])")).empty());
    const auto gs = problems(one_queue(
        R"([{"limit": "bad groups", "groups": ["dev@corp", "a/b", "a#b", "adm$", "9x"], "maxapplications": 1}])"));
    CHECK(gs.size() == 5);
    CHECK(any_problem(gs, "root.a.limits[0].groups", "limit 'bad groups': invalid group name 'dev@corp'"));
    // queues: 1 to 64 of letters, digits and _ : # / @ -; siblings differ ignoring case
    const auto qs = problems(R"({"name": "root", "queues": [{"name": "team@x"}, {"name": "a.b"},
                                 {"name": ")" +
                             std::string(65, 'q') + R"("}, {"name": "Dev"}, {"name": "dev"}]})");
    CHECK(qs.size() == 3);
    CHECK(any_problem(qs, "root.queues[1]", "invalid queue name 'a.b'"));
    CHECK(any_problem(qs, "root.queues[2]", "invalid queue name"));
    CHECK(any_problem(qs, "root.dev", "duplicate queue name 'dev'"));
  }
}

TEST_CASE("yunikorn_limits: upstream a wildcard after names in one list is accepted with YuniKorn's meaning") {
  const std::string mixed = one_queue(R"([{"limit": "mixed", "users": ["alice", "*"], "maxapplications": 1},
                                          {"limit": "g", "groups": ["dev", "*"], "maxapplications": 2}])");
  CHECK(any_problem(problems_of(mixed), "root.a.limits[0]", "must be the only entry"));  // the default refuses it
  CHECK(problems_upstream(mixed).empty());
  // a name after the wildcard, in the same list or a later one, stays refused
  CHECK(any_problem(problems_upstream(one_queue(R"([{"limit": "late", "users": ["*", "bob"], "maxapplications": 1}])")),
                    "root.a.limits[0]", "named user 'bob' after the wildcard user"));
  // meaning: alice has her own copy, every other user the wildcard's; dev its own pool, others the "*" pool
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse_upstream(mixed, reg));
  CHECK(m.increase("root.a", "a1", use(1), who("alice", {"dev"})).allowed());
  CHECK(m.increase("root.a", "a2", use(1), who("alice", {"dev"})).denied());  // alice's own maxapplications 1
  CHECK(m.increase("root.a", "b1", use(1), who("bob", {"dev"})).allowed());   // bob: the wildcard's copy
  CHECK(m.increase("root.a", "c1", use(1), who("carol", {"dev"})).denied());  // group dev: 2 applications
  CHECK(m.group_of("a1") == "dev");
  CHECK(m.increase("root.a", "e1", use(1), who("erin", {"ops"})).allowed());
  CHECK(m.group_of("e1") == "*");
}

TEST_CASE("yunikorn_limits: upstream a bad quantity is reported once, as written") {
  for (const bool upstream : {false, true}) {
    const std::string text = one_queue(R"([{"limit": "huge", "users": ["sue"], "maxresources": {"vcore": "1000P"}},
                                           {"limit": "odd", "users": ["bob"], "maxresources": {"memory": "12Qi"}}])");
    const auto ps = upstream ? problems_upstream(text) : problems_of(text);
    REQUIRE(ps.size() == 2);
    CHECK(ps[0].path.find("limits[0].maxresources.vcore") != std::string::npos);
    CHECK(ps[0].message == "limit 'huge': maxresources vcore '1000P' is out of range (64-bit base units)");
    CHECK(ps[1].message == (upstream ? "limit 'odd': maxresources memory '12Qi' is not a YuniKorn quantity (digits, "
                                       "then k M G T P E Ki Mi Gi Ti Pi Ei)"
                                     : "limit 'odd': maxresources memory '12Qi' is not a valid quantity"));
  }
}

TEST_CASE("yunikorn_limits: upstream an increase or decrease with an empty queue, application or user is ignored") {
  const std::string text = one_queue(R"([{"limit": "one", "users": ["sue"], "maxapplications": 1}])");
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse_upstream(text, reg));
  CHECK(m.increase("", "app-1", use(1), who("sue")).allowed());
  CHECK(m.increase("root.a", "", use(1), who("sue")).allowed());
  CHECK(m.increase("root.a", "app-1", use(1), who("")).allowed());
  CHECK(m.tracker_count() == 0);
  CHECK(m.increase("root.a", "app-1", use(1), who("sue")).allowed());
  CHECK_NOTHROW(m.decrease("", "app-1", use(1), true, who("sue")));
  CHECK_NOTHROW(m.decrease("root.a", "", use(1), true, who("sue")));
  CHECK(m.user_usage("sue", "root.a") == use(1));
  CHECK(m.user_running("sue", "root.a") == 1);
  // the default: a typed error, nothing changed
  yunikorn_limits_model d(reg);
  d.reload(parse(text, reg));
  CHECK_THROWS_AS(d.increase("root.a", "", use(1), who("sue")), unknown_entity_error);
  CHECK_THROWS_AS(d.increase("", "app-1", use(1), who("sue")), unknown_entity_error);
  CHECK_THROWS_AS(d.decrease("root.a", "", use(1), true, who("sue")), unknown_entity_error);
  CHECK(d.tracker_count() == 0);
}

TEST_CASE(
    "yunikorn_limits: upstream headroom and can_run_app link the application's group, which a later increase keeps") {
  const std::string text = R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "dev", "groups": ["dev"], "maxresources": {"vcore": 1}},
      {"limit": "ops", "groups": ["ops"], "maxresources": {"vcore": 8}}]}]})";
  for (const bool upstream : {false, true}) {
    resource_registry reg;
    yunikorn_limits_model m(reg);
    m.reload(upstream ? parse_upstream(text, reg) : parse(text, reg));
    // the query asks as a member of dev; the application then runs with the groups [ops]
    CHECK(m.headroom("root.a", "app-1", who("sue", {"dev"})).bound(resources::cpu) == std::optional<amount>(1000));
    const decision d = m.increase("root.a", "app-1", use(2000), who("sue", {"ops"}));
    if (upstream) {
      // YuniKorn: Headroom linked the application to dev; its 1-vcore limit refuses 2 vcores
      CHECK(d.denied());
      CHECK(m.can_run_app("root.a", "app-2", who("sue", {"ops"})));
      CHECK(m.increase("root.a", "app-2", use(2000), who("sue", {"dev"})).allowed());  // can_run linked ops
      CHECK(m.group_of("app-2") == "ops");
    } else {
      CHECK(d.allowed());  // the default: questions change nothing; the increase resolves ops
      CHECK(m.group_of("app-1") == "ops");
    }
  }
}

TEST_CASE("yunikorn_limits: upstream quantities follow YuniKorn's syntax: digits and an SI suffix, m for vcore only") {
  auto with = [](const std::string& res) {
    return one_queue(R"([{"limit": "q", "users": ["sue"], "maxresources": )" + res + "}]");
  };
  // accepted by both
  CHECK(problems_upstream(with(R"({"memory": "10G", "vcore": "500m"})")).empty());
  CHECK(problems_of(with(R"({"memory": "10G", "vcore": "500m"})")).empty());
  // YuniKorn allows blanks before the suffix; the default reads Kubernetes quantities, which do not
  CHECK(problems_upstream(with(R"({"memory": "10 Gi", "vcore": 2})")).empty());
  CHECK_FALSE(problems_of(with(R"({"memory": "10 Gi", "vcore": 2})")).empty());
  // Kubernetes quantities YuniKorn refuses: a fraction, m on memory, an exponent, a capital K
  for (const std::string bad : {R"({"memory": "1.5G"})", R"({"memory": "500m"})", R"({"memory": "1e3"})",
                                R"({"memory": "1K"})", R"({"vcore": 0.5})"}) {
    const auto ps = problems_upstream(with(bad));
    INFO(bad);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].message.find("is not a YuniKorn quantity") != std::string::npos);
  }
  CHECK(problems_of(with(R"({"memory": "1.5G"})")).empty());  // the default reads Kubernetes quantities
  resource_registry reg;
  const auto cfg = parse_upstream(with(R"({"memory": " 10 Gi ", "vcore": "500m"})"), reg);
  CHECK(*cfg.root.queues[0].limits[0].max_resources.find(resources::memory) == 10LL << 30);
  CHECK(*cfg.root.queues[0].limits[0].max_resources.find(resources::cpu) == 500);
}

TEST_CASE("yunikorn_limits: upstream a reload below usage keeps it, and a leaf limit above its parent's is refused") {
  auto cfg = [](int root_vcore, int leaf_vcore) {
    return R"({"name": "root", "limits": [{"limit": "r", "users": ["sue"], "maxresources": {"vcore": )" +
           std::to_string(root_vcore) + R"(}}], "queues": [{"name": "a", "limits": [
             {"limit": "l", "users": ["sue"], "maxresources": {"vcore": )" +
           std::to_string(leaf_vcore) + "}}]}]}";
  };
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(parse_upstream(cfg(10, 6), reg));
  REQUIRE(m.increase("root.a", "app-1", use(5000), who("sue")).allowed());
  // below usage at both levels: YuniKorn keeps the usage; its headroom is the
  // smallest max - usage over the path (SubOnlyExisting, ComponentWiseMin)
  m.reload(parse_upstream(cfg(4, 3), reg));
  CHECK(m.user_usage("sue", "root.a") == use(5000));
  CHECK(m.headroom("root.a", "app-1", who("sue")).bound(resources::cpu) == std::optional<amount>(-2000));
  CHECK(m.increase("root.a", "app-1", use(1), who("sue")).denied());
  // YuniKorn's manager only applies what its validator passed: a leaf above its
  // parent (checkLimitResource) is refused, and the config in effect stays
  CHECK_THROWS_AS(parse_upstream(cfg(4, 8), reg), validation_error);
  yunikorn_limits_config leaf_above;
  leaf_above.upstream = true;
  limit_entry r;
  r.name = "r";
  r.users = {"sue"};
  r.max_resources.set(resources::cpu, 4000);
  leaf_above.root.limits.push_back(r);
  limits_queue a;
  a.name = "a";
  r.max_resources.set(resources::cpu, 8000);
  a.limits.push_back(r);
  leaf_above.root.queues.push_back(a);
  CHECK_THROWS_AS(m.reload(leaf_above), validation_error);
  CHECK(m.headroom("root.a", "app-1", who("sue")).bound(resources::cpu) == std::optional<amount>(-2000));
  m.decrease("root.a", "app-1", use(3000), false, who("sue"));
  CHECK(m.increase("root.a", "app-1", use(1000), who("sue")).allowed());  // 2 + 1 <= 3 again
}

TEST_CASE("yunikorn_limits: upstream the users and groups a limit names are in the usage JSON from the config on") {
  const std::string text = R"({"name": "root", "queues": [
      {"name": "a", "limits": [{"limit": "sue", "users": ["sue"], "maxresources": {"vcore": 5}},
                               {"limit": "dev", "groups": ["dev"], "maxapplications": 3},
                               {"limit": "pool", "groups": ["*"], "maxapplications": 9}]},
      {"name": "b", "limits": [{"limit": "each", "users": ["*"], "maxapplications": 2}]}]})";
  resource_registry reg;
  yunikorn_limits_model def(reg), up(reg);
  def.reload(parse(text, reg));
  up.reload(parse_upstream(text, reg));
  CHECK(users_usage_to_json(def) == json::array());  // the default: users and groups with usage only
  CHECK(groups_usage_to_json(def) == json::array());
  const json users = users_usage_to_json(up);
  REQUIRE(users.size() == 1);
  CHECK(users[0]["userName"] == "sue");
  CHECK(users[0]["queues"] == json::parse(R"({"queuePath": "root", "children": [
      {"queuePath": "root.a", "maxResources": {"vcore": 5000}},
      {"queuePath": "root.b", "maxApplications": 2}]})"));
  const json groups = groups_usage_to_json(up);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0]["groupName"] == "*");
  CHECK(groups[0]["queues"]["children"][0] == json::parse(R"({"queuePath": "root.a", "maxApplications": 9})"));
  CHECK(groups[1]["groupName"] == "dev");
  // a user who runs shows the wildcard-limited queues as well; sue stays after her application ends
  REQUIRE(up.increase("root.a", "s1", use(1000), who("sue", {"dev"})).allowed());
  REQUIRE(up.increase("root.a", "b1", use(1000), who("bob")).allowed());
  up.decrease("root.a", "s1", use(1000), true, who("sue", {"dev"}));
  const json after = users_usage_to_json(up);
  REQUIRE(after.size() == 2);
  CHECK(after[0]["userName"] == "bob");
  CHECK(after[0]["queues"]["children"] == json::parse(R"([
      {"queuePath": "root.a", "resourceUsage": {"vcore": 1000}, "runningApplications": ["b1"]},
      {"queuePath": "root.b", "maxApplications": 2}])"));
  CHECK(after[1]["userName"] == "sue");
  CHECK(after[1]["queues"]["children"][0] ==
        json::parse(R"({"queuePath": "root.a", "maxResources": {"vcore": 5000}})"));
}

TEST_CASE("yunikorn_limits: upstream the root queue may not set resources") {
  const std::string text = R"({"name": "root", "resources": {"max": {"vcore": 8}}, "queues": [{"name": "y"}]})";
  CHECK(problems_of(text).empty());  // the default: a bound like any other queue's
  const auto ps = problems_upstream(text);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].path == "root.resources.max");
}

TEST_CASE(
    "yunikorn_limits: upstream a reload that removes a group's limit drops its usage along the path and unlinks") {
  // dev is limited at the root and at root.a; the reload removes the root.a entry
  auto cfg = [](bool leaf) {
    return std::string(R"({"name": "root", "limits": [{"limit": "dev all", "groups": ["dev"], "maxapplications": 5}],
        "queues": [{"name": "a", "limits": [)") +
           (leaf ? R"({"limit": "dev a", "groups": ["dev"], "maxapplications": 5, "maxresources": {"vcore": 10}})"
                 : "") +
           R"(]}, {"name": "b"}]})";
  };
  for (const bool upstream : {false, true}) {
    resource_registry reg;
    yunikorn_limits_model m(reg);
    auto load = [&](bool leaf) { return upstream ? parse_upstream(cfg(leaf), reg) : parse(cfg(leaf), reg); };
    m.reload(load(true));
    REQUIRE(m.increase("root.a", "s1", use(4000), who("sue", {"dev"})).allowed());
    REQUIRE(m.increase("root.b", "b1", use(3000), who("bob", {"dev"})).allowed());
    REQUIRE(m.group_usage("dev", "root") == use(7000));
    m.reload(load(false));
    if (!upstream) {
      // the default: the group and its usage stay with the applications that run
      CHECK(m.group_usage("dev", "root") == use(7000));
      CHECK(m.group_usage("dev", "root.a") == use(4000));
      CHECK(m.group_of("s1") == "dev");
      CHECK(m.group_running("dev", "root") == 2);
      continue;
    }
    // YuniKorn: dev's trackers at root.a and its ancestor root that hold
    // applications and usage are emptied (bob's share at the root too); bob's
    // own queue keeps its usage; sue's application is unlinked from dev
    CHECK(m.group_usage("dev", "root") == resource_vector{});
    CHECK(m.group_usage("dev", "root.a") == resource_vector{});
    CHECK(m.group_usage("dev", "root.b") == use(3000));
    CHECK(m.group_running("dev", "root") == 0);
    CHECK(m.group_of("s1") == "");
    CHECK(m.group_of("b1") == "dev");
    CHECK(m.user_usage("sue", "root.a") == use(4000));  // users keep their usage
    // sue's next increase resolves her group again (dev, at the root) and only
    // that increase is counted for it
    REQUIRE(m.increase("root.a", "s1", use(1000), who("sue", {"dev"})).allowed());
    CHECK(m.group_of("s1") == "dev");
    CHECK(m.group_usage("dev", "root") == use(1000));
    CHECK(m.group_running("dev", "root") == 1);
    // bob's application ends: its 3 vcores leave a root tracker that no longer
    // counted them (YuniKorn's usage goes below zero), and it was no longer
    // among the root's running applications
    m.decrease("root.b", "b1", use(3000), true, who("bob", {"dev"}));
    CHECK(m.group_usage("dev", "root") == use(-2000));
    CHECK(m.group_running("dev", "root") == 1);
    // sue's application ends with all of its usage: the group gives back all 5, of which it counted 1
    m.decrease("root.a", "s1", use(5000), true, who("sue", {"dev"}));
    CHECK(m.group_usage("dev", "root") == use(-7000));
    CHECK(m.group_usage("dev", "root.a") == use(-4000));
    CHECK(m.group_running("dev", "root") == 0);
    CHECK(m.user_usage("sue", "root.a") == resource_vector{});
  }
}
