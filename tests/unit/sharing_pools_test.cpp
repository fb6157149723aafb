// SPDX-License-Identifier: Apache-2.0
#include <quota/engine.hpp>
#include <quota/running_limits.hpp>
#include <quota/sharing_pools.hpp>
#include <quota/sharing_pools_json.hpp>

#include "quota_catch.hpp"

using namespace quota;

namespace {
job ns_job(std::string id, std::string ns, std::int64_t gpus) {
  job j;
  j.id = std::move(id);
  j.ns = ns;
  j.queue = ns;
  j.request.set(resources::nvidia_gpu, gpus);
  return j;
}
pool_quota_spec quota_of(std::string name, amount min) {
  pool_quota_spec q;
  q.name = name;
  q.namespaces = {name};
  q.min.set(resources::nvidia_gpu, min);
  return q;
}
// research: nlp 4 + vision 4; prod: serving 8
std::vector<sharing_pool_spec> two_pools(bool research_borrows, bool prod_lends) {
  sharing_pool_spec r{"research", {quota_of("nlp", 4), quota_of("vision", 4)}, false, research_borrows};
  sharing_pool_spec p{"prod", {quota_of("serving", 8)}, prod_lends, false};
  return {r, p};
}
}  // namespace

TEST_CASE("sharing_pools: borrowing happens inside the pool first, the plan says where capacity came from") {
  sharing_pools_policy sp(two_pools(true, true));
  const job j = ns_job("n1", "nlp", 6);
  REQUIRE(sp.check(j).allowed());
  const borrow_plan p = sp.plan(j);
  CHECK(p.pool == "research");
  CHECK(p.quota == "nlp");
  CHECK(p.in_quota.get(resources::nvidia_gpu) == 4);
  CHECK(p.in_pool.get(resources::nvidia_gpu) == 2);
  CHECK(p.across.empty());
  sp.commit(j);
  // vision has 2 of its min left in the pool, 2 more come from prod
  const borrow_plan q = sp.plan(ns_job("v1", "vision", 4));
  CHECK(q.in_quota.get(resources::nvidia_gpu) == 2);
  REQUIRE(q.across.size() == 1);
  CHECK(q.across[0].first == "prod");
  CHECK(q.across[0].second.get(resources::nvidia_gpu) == 2);
  sp.commit(ns_job("v1", "vision", 4));
  json js;
  to_json(js, sp);
  CHECK(js["pools"]["prod"]["used"]["nvidia.com/gpu"] == 2);
  CHECK(js["jobs"]["v1"]["across"]["prod"]["nvidia.com/gpu"] == 2);
  CHECK(js["jobs"]["n1"]["in_pool"]["nvidia.com/gpu"] == 2);
}

TEST_CASE("sharing_pools: borrowing across needs borrowAcross on the borrower and lendAcross on the lender") {
  {
    sharing_pools_policy sp(two_pools(false, true));
    const decision d = sp.check(ns_job("n1", "nlp", 9));
    REQUIRE(d.denied());
    CHECK(d.reasons()[0].rule == "pool_exhausted");
    CHECK(d.reasons()[0].entity == "research/nlp");
    CHECK(d.reasons()[0].requested == 9);
    CHECK(d.reasons()[0].limit == 8);
  }
  {
    sharing_pools_policy sp(two_pools(true, false));
    const decision d = sp.check(ns_job("n1", "nlp", 9));
    REQUIRE(d.denied());
    CHECK(d.reasons()[0].rule == "pools_exhausted");
    // the text is made when read: the reason holds the pattern, the pool's name and the numbers
    const reason_note& note = d.reasons()[0].message;
    CHECK(note.pattern_text() == "pool $0 has #0 free and the lending pools #1");
    CHECK(note.name(0) == "research");
    CHECK(note.number(0) == 8);
    CHECK(note.number(1) == 0);
    CHECK(note.str() == "pool research has 8 free and the lending pools 0");
  }
  {
    sharing_pools_policy sp(two_pools(true, true));
    CHECK(sp.check(ns_job("n1", "nlp", 9)).allowed());
    CHECK(sp.check(ns_job("n1", "nlp", 17)).denied());  // 8 + 8 in all
    // prod lends but may not borrow: it cannot use research's unused min
    CHECK(sp.check(ns_job("s1", "serving", 9)).has_rule("pool_exhausted"));
  }
}

TEST_CASE("sharing_pools: a denial changes nothing, release gives every charge back, max caps a quota") {
  auto specs = two_pools(true, true);
  specs[0].quotas[0].max.set(resources::nvidia_gpu, 10);
  sharing_pools_policy sp(specs);
  sp.commit(ns_job("n1", "nlp", 10));
  CHECK(sp.check(ns_job("n2", "nlp", 1)).has_rule("over_max"));
  CHECK(sp.quota_used(0).get(resources::nvidia_gpu) == 10);
  CHECK(sp.pool_used(0).get(resources::nvidia_gpu) == 8);
  CHECK(sp.pool_used(1).get(resources::nvidia_gpu) == 2);
  CHECK(sp.check(ns_job("s1", "serving", 7)).denied());  // prod lent 2 of its 8
  sp.release("n1");
  CHECK(sp.pool_used(0).get(resources::nvidia_gpu) == 0);
  CHECK(sp.pool_used(1).get(resources::nvidia_gpu) == 0);
  CHECK(sp.check(ns_job("s1", "serving", 8)).allowed());
  CHECK_THROWS_AS(sp.release("n1"), unknown_entity_error);
  sp.commit(ns_job("x", "other-ns", 100));  // no quota: not governed
  CHECK_THROWS_AS(sp.commit(ns_job("x", "other-ns", 1)), state_error);
  sp.release("x");
  // a negative amount is bad input, in a check as in a commit, governed or not
  CHECK_THROWS_AS(sp.check(ns_job("neg", "nlp", -1)), validation_error);
  CHECK_THROWS_AS(sp.check(ns_job("neg", "other-ns", -1)), validation_error);
  CHECK_THROWS_AS(sp.commit(ns_job("neg", "nlp", -1)), validation_error);
  CHECK(sp.quota_used(0).get(resources::nvidia_gpu) == 0);
}

TEST_CASE("sharing_pools: victims reclaim a guarantee, borrowers from other pools first, newest first") {
  sharing_pools_policy sp(two_pools(true, true));
  sp.commit(ns_job("n1", "nlp", 8));         // 4 in quota + 4 of vision's min, in the pool
  sp.commit(ns_job("x1", "research-x", 1));  // no quota
  auto prod_to_research = two_pools(true, true);
  // serving borrows from research: research must lend, prod must borrow
  prod_to_research[0].lend_across = true;
  prod_to_research[1].borrow_across = true;
  sharing_pools_policy s2(prod_to_research);
  s2.commit(ns_job("s1", "serving", 9));  // 8 own + 1 from research
  s2.commit(ns_job("s2", "serving", 1));  // 1 more from research
  s2.commit(ns_job("n1", "nlp", 5));      // 4 own + 1 of vision's min
  std::vector<victim> v;
  s2.victims(ns_job("v1", "vision", 3), v);  // vision is below its min
  REQUIRE(v.size() == 3);
  CHECK(v[0].job_id == "s2");
  CHECK(v[0].rule == "borrowed_across_pools");
  CHECK(v[1].job_id == "s1");
  CHECK(v[2].job_id == "n1");
  CHECK(v[2].rule == "borrowed_in_pool");
  v.clear();
  s2.victims(ns_job("s3", "serving", 1), v);  // serving is above its min: nothing to reclaim
  CHECK(v.empty());
}

// victims() returns at once when the pool holds no job it could name; the
// count behind that follows commits and releases, and the requester's own
// borrowing never counts for it.
TEST_CASE("sharing_pools: victims follow borrowers as they come and go; a quota's own borrowing is not a victim") {
  sharing_pools_policy sp(two_pools(true, true));
  std::vector<victim> v;
  sp.commit(ns_job("v1", "vision", 6));  // 4 own + 2 of nlp's min: vision borrows in the pool
  sp.victims(ns_job("v2", "vision", 1), v);
  CHECK(v.empty());  // vision is above its min anyway
  sp.victims(ns_job("n1", "nlp", 3), v);
  REQUIRE(v.size() == 1);  // nlp is below its min: vision's borrower
  CHECK(v[0].job_id == "v1");
  CHECK(v[0].rule == "borrowed_in_pool");
  sp.release("v1");
  v.clear();
  sp.victims(ns_job("n1", "nlp", 3), v);
  CHECK(v.empty());
  sp.commit(ns_job("n0", "nlp", 6));  // nlp borrows 2 of vision's min
  sp.victims(ns_job("n1", "nlp", 1), v);
  CHECK(v.empty());  // its own borrowing: nlp is not below its min either
  sp.release("n0");
  sp.commit(ns_job("n2", "nlp", 2));  // nlp below its min, nobody borrows
  sp.commit(ns_job("v3", "vision", 4));
  sp.victims(ns_job("n1", "nlp", 1), v);
  CHECK(v.empty());
  sp.commit(ns_job("v4", "vision", 1));  // now vision borrows
  sp.victims(ns_job("n1", "nlp", 1), v);
  REQUIRE(v.size() == 1);
  CHECK(v[0].job_id == "v4");
  // a copy keeps its own counts
  sharing_pools_policy copy = sp;
  copy.release("v4");
  v.clear();
  copy.victims(ns_job("n1", "nlp", 1), v);
  CHECK(v.empty());
  sp.victims(ns_job("n1", "nlp", 1), v);
  CHECK(v.size() == 1);
}

TEST_CASE("sharing_pools: bad config is config_error (validation 201) naming the item") {
  auto specs = two_pools(true, true);
  specs[1].quotas[0].namespaces = {"nlp"};  // nlp already belongs to research/nlp
  try {
    sharing_pools_policy sp(specs);
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    CHECK(e.number() == 201);
    CHECK(std::string(e.what()).find("pool prod quota serving: namespace 'nlp'") != std::string::npos);
  }
  resource_registry reg;
  try {
    (void)load_sharing_pools(json{{"pools", {{{"name", "a"}, {"lendAcross", "yes"}, {"quotas", json::array()}}}}}, reg,
                             "p");
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    const std::string w = e.what();
    CHECK(e.number() == 201);
    CHECK(w.find("p.pools[0].lendAcross") != std::string::npos);
  }
  try {
    sharing_pools_policy sp({sharing_pool_spec{"a", {}, false, false}});
    FAIL("expected a config_error");
  } catch (const config_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "pools[0].quotas");
    CHECK(e.problems()[0].message == "pool 'a' has no quota");
  }
}

TEST_CASE("sharing_pools: compose with running-job limits through the engine") {
  sharing_pools_policy sp(two_pools(true, true));
  running_limits_policy rl;
  rl.set_limit(running_limits_policy::scope::ns, "nlp", 1);
  basic_engine<sharing_pools_policy, running_limits_policy> e(sp, rl);
  CHECK(e.admit(ns_job("n1", "nlp", 2)).allowed());
  const decision d = e.admit(ns_job("n2", "nlp", 2));
  CHECK(d.has_rule("max_running_jobs"));
  CHECK(e.model<0>().quota_used(0).get(resources::nvidia_gpu) == 2);  // not charged
  CHECK(e.admit(ns_job("v1", "vision", 20)).has_rule("pools_exhausted"));
  CHECK(e.model<1>().running_jobs() == 1);
  e.release("n1");
  CHECK(e.admit(ns_job("n2", "nlp", 9)).allowed());
}

TEST_CASE("sharing_pools: introspection names a custom resource by the registry") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  pool_quota_spec q = quota_of("nlp", 4);
  q.min.set(foo, 2);
  sharing_pools_policy sp({sharing_pool_spec{"research", {q}, false, false}}, &reg);
  job j = ns_job("n1", "nlp", 1);
  j.request.set(foo, 2);
  sp.commit(j);
  json js;
  to_json(js, sp);
  CHECK(js["quotas"]["nlp"]["used"]["example.com/foo"] == 2);
  CHECK(js["pools"]["research"]["capacity"]["example.com/foo"] == 2);
  CHECK(js.dump().find('#') == std::string::npos);
  sp.rebind_registry(nullptr);  // no registry: an id it does not know has no name to show
  CHECK_THROWS_AS(to_json(js, sp), unknown_entity_error);
}
