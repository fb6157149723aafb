// SPDX-License-Identifier: Apache-2.0
#include <quota/engine.hpp>
#include <quota/running_limits.hpp>
#include <quota/running_limits_json.hpp>

#include "quota_catch.hpp"

using namespace quota;
using scope = running_limits_policy::scope;

namespace {
job make(std::string id, std::string queue, std::string user, std::int32_t prio = 0, std::string ns = "default") {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.user = std::move(user);
  j.ns = std::move(ns);
  j.priority = prio;
  return j;
}
}  // namespace

TEST_CASE("running_limits: per queue, the (N+1)th running job is denied with a reason") {
  running_limits_policy rl;
  rl.set_limit(scope::queue, "team-a", 2);
  rl.commit(make("a1", "team-a", "sue"));
  CHECK(rl.check(make("a2", "team-a", "sue")).allowed());
  rl.commit(make("a2", "team-a", "sue"));
  const decision d = rl.check(make("a3", "team-a", "bob"));
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "max_running_jobs");
  CHECK(d.reasons()[0].entity == "queue:team-a");
  CHECK(d.reasons()[0].used == 2);
  CHECK(d.reasons()[0].limit == 2);
  CHECK(rl.check(make("b1", "team-b", "bob")).allowed());  // no limit for team-b
  rl.release("a1");
  CHECK(rl.check(make("a3", "team-a", "bob")).allowed());
}

TEST_CASE("running_limits: user and namespace scopes, named entries win over the default") {
  running_limits_policy rl;
  rl.set_default(scope::user, 1);
  rl.set_limit(scope::user, "sue", 3);
  rl.set_limit(scope::ns, "batch", 0);  // nothing runs in batch
  rl.commit(make("s1", "q", "sue"));
  rl.commit(make("s2", "q", "sue"));
  CHECK(rl.check(make("s3", "q", "sue")).allowed());
  rl.commit(make("b1", "q", "bob"));
  CHECK(rl.check(make("b2", "q", "bob")).has_rule("max_running_jobs"));
  const decision d = rl.check(make("x", "q", "sue", 0, "batch"));
  REQUIRE(d.reasons().size() == 1);
  CHECK(d.reasons()[0].entity == "namespace:batch");
  CHECK(rl.running(scope::user, "sue") == 2);
  CHECK(*rl.limit_of(scope::user, "zed") == 1);
}

TEST_CASE("running_limits: lowering a limit below the running count keeps the jobs and denies new ones") {
  running_limits_policy rl;
  rl.set_limit(scope::queue, "q", 3);
  for (int i = 0; i < 3; ++i) rl.commit(make("j" + std::to_string(i), "q", "u"));
  rl.set_limit(scope::queue, "q", 1);
  CHECK(rl.running(scope::queue, "q") == 3);
  CHECK(rl.check(make("n", "q", "u")).denied());
  rl.release("j0");
  rl.release("j1");
  CHECK(rl.check(make("n", "q", "u")).denied());  // 1 running, limit 1
  rl.release("j2");
  CHECK(rl.check(make("n", "q", "u")).allowed());
}

TEST_CASE("running_limits: bad input is a typed error and changes nothing") {
  running_limits_policy rl;
  rl.set_limit(scope::queue, "q", 2);
  REQUIRE_THROWS_AS(rl.set_limit(scope::queue, "q", -1), validation_error);
  CHECK(*rl.limit_of(scope::queue, "q") == 2);
  rl.commit(make("a", "q", "u"));
  REQUIRE_THROWS_AS(rl.commit(make("a", "q", "u")), state_error);
  CHECK(rl.running(scope::queue, "q") == 1);
  REQUIRE_THROWS_AS(rl.release("nope"), unknown_entity_error);
  CHECK(rl.running_jobs() == 1);
  rl.release("a");
  rl.commit(make("a", "q", "v"));  // the id is free again; its entity keys are the new job's
  CHECK(rl.running(scope::queue, "q") == 1);
  CHECK(rl.running(scope::user, "v") == 1);
  CHECK(rl.running(scope::user, "u") == 0);

  try {
    (void)load_running_limits(json::parse(R"({"queues": {"a": -2, "b": "x"}, "users": 3, "colour": 1})"),
                              "policies[0]");
    FAIL("accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 4);
    CHECK(e.problems()[0].path == "policies[0].colour");
    CHECK(e.problems()[1].path == "policies[0].queues.a");
    CHECK(e.problems()[2].path == "policies[0].queues.b");
    CHECK(e.problems()[3].path == "policies[0].users");
  }
  const auto loaded = load_running_limits(json::parse(R"({"queues": {"*": 4, "gpu": 1}})"));
  CHECK(*loaded.limit_of(scope::queue, "gpu") == 1);
  CHECK(*loaded.limit_of(scope::queue, "other") == 4);
  CHECK_FALSE(loaded.limit_of(scope::user, "sue").has_value());
}

TEST_CASE("running_limits: victims are lower-priority jobs of the full scope, lowest then newest first") {
  running_limits_policy rl;
  rl.set_limit(scope::queue, "q", 3);
  rl.commit(make("low-old", "q", "u", 1));
  rl.commit(make("high", "q", "u", 50));
  rl.commit(make("low-new", "q", "u", 1));
  std::vector<victim> out;
  rl.victims(make("urgent", "q", "u", 10), out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].job_id == "low-new");
  CHECK(out[1].job_id == "low-old");
}

TEST_CASE("running_limits: composes in the engine; a denial elsewhere commits nothing here") {
  running_limits_policy a;
  a.set_limit(scope::queue, "q", 5);
  running_limits_policy b;
  b.set_limit(scope::user, "sue", 1);
  basic_engine<running_limits_policy, running_limits_policy> e(a, b);
  CHECK(e.admit(make("1", "q", "sue")).allowed());
  CHECK(e.admit(make("2", "q", "sue")).denied());
  CHECK(e.model<0>().running(scope::queue, "q") == 1);  // not 2: all-or-nothing
}

TEST_CASE("running_limits: JSON document must be an object; names may not be empty") {
  try {
    (void)load_running_limits(json::array(), "policies[2]");
    FAIL("accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "policies[2]");
    CHECK(e.problems()[0].message == "expected an object");
  }
  try {
    (void)load_running_limits(json(3));
    FAIL("accepted");
  } catch (const validation_error& e) {
    CHECK(e.problems()[0].path == "$");
  }
  try {
    (void)load_running_limits(json::parse(R"({"model": "running_limits", "users": {"": 2, "sue": 1}})"));
    FAIL("accepted");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "users.");
    CHECK(e.problems()[0].message == "empty name");
  }
  running_limits_policy rl;
  REQUIRE_THROWS_AS(rl.set_limit(scope::user, "", 2), validation_error);
  CHECK_FALSE(rl.limit_of(scope::user, "").has_value());
}

TEST_CASE(
    "running_limits: to_json lists every entity with a limit or running jobs, with the limit that applies or "
    "unlimited") {
  auto rl = load_running_limits(json::parse(R"({"queues": {"team-a": 2}, "users": {"*": 5}})"));
  rl.commit(make("a1", "team-a", "sue"));
  rl.commit(make("b1", "team-b", "sue"));
  json j;
  to_json(j, rl);
  CHECK(j["queues"]["team-a"] == json{{"running", 1}, {"limit", 2}});
  CHECK(j["queues"]["team-b"] == json{{"running", 1}, {"limit", "unlimited"}});  // no limit of its own, no default
  CHECK(j["users"]["sue"] == json{{"running", 2}, {"limit", 5}});  // the default applies
  CHECK(j["namespaces"]["default"] == json{{"running", 2}, {"limit", "unlimited"}});
  rl.set_limit(scope::ns, "batch", 3);
  to_json(j, rl);
  CHECK(j["namespaces"]["batch"] == json{{"running", 0}, {"limit", 3}});
  rl.release("b1");
  rl.clear_limits();
  to_json(j, rl);
  CHECK(j["queues"] == json{{"team-a", {{"running", 1}, {"limit", "unlimited"}}}});  // team-b is gone, a1 runs
  CHECK(j["users"]["sue"] == json{{"running", 1}, {"limit", "unlimited"}});
  CHECK_FALSE(j["namespaces"].contains("batch"));  // neither a limit nor running jobs any more
  rl.release("a1");
  to_json(j, rl);
  CHECK(j["queues"].empty());
  CHECK(j["users"].empty());
}
