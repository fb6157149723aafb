#include <quota/engine.hpp>

#include <map>

#include "quota_catch.hpp"

using namespace quota;

namespace {
// A tiny test model: a per-queue cap on one resource.
class cap_policy {
 public:
  cap_policy(std::string_view name, resource_id res, std::int64_t cap) : name_(name), res_(res), cap_(cap) {}
  [[nodiscard]] std::string_view policy_name() const { return name_; }
  [[nodiscard]] decision check(const job& j) const {
    const auto used = used_of(j.queue);
    const auto req = j.request.get(res_);
    if (used + req > cap_) return decision::deny(reason{name_, "over_cap", j.queue, res_, "", req, used, cap_, ""});
    return decision::allow();
  }
  void commit(const job& j) {
    if (fail_next_commit) {
      fail_next_commit = false;
      throw overflow_error("injected failure");
    }
    if (deny_next_commit) {  // as if a concurrent reload had lowered the cap
      deny_next_commit = false;
      throw commit_denied_error(
          "cap lowered", decision::deny(reason{name_, "over_cap", j.queue, res_, "", j.request.get(res_), 0, 0, ""}));
    }
    if (jobs_.count(j.id)) throw state_error(error_id::state_duplicate, j.id);
    jobs_[j.id] = {j.queue, j.request.get(res_)};
    used_[j.queue] += j.request.get(res_);
  }
  void release(std::string_view id) {
    auto it = jobs_.find(std::string(id));
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    used_[it->second.first] -= it->second.second;
    jobs_.erase(it);
  }
  void victims(const job& j, std::vector<victim>& out) const {
    for (const auto& [id, qa] : jobs_)
      if (qa.first == j.queue) out.push_back(victim{id, name_, "same_queue", qa.first});
  }
  [[nodiscard]] std::int64_t used_of(const std::string& q) const {
    auto it = used_.find(q);
    return it == used_.end() ? 0 : it->second;
  }
  bool fail_next_commit = false;
  bool deny_next_commit = false;

 private:
  std::string_view name_;
  resource_id res_;
  std::int64_t cap_;
  std::map<std::string, std::pair<std::string, std::int64_t>> jobs_;
  std::map<std::string, std::int64_t> used_;
};
static_assert(policy<cap_policy>);

job gpu_job(std::string id, std::string queue, std::int64_t gpus, std::int64_t cpu = 0) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.request.set(resources::nvidia_gpu, gpus);
  j.request.set(resources::cpu, cpu);
  return j;
}
}  // namespace

TEST_CASE("engine: admission is all-or-nothing across models, reasons of every model listed") {
  basic_engine<cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                         cap_policy("cpus", resources::cpu, 8000));
  CHECK(e.admit(gpu_job("a", "q", 3, 4000)).allowed());
  // gpus would allow 1 more, cpus would not: nothing committed anywhere
  const decision d = e.admit(gpu_job("b", "q", 1, 5000));
  CHECK(d.denied());
  CHECK(d.has_rule("over_cap", "cpus"));
  CHECK(e.model<0>().used_of("q") == 3);
  CHECK(e.model<1>().used_of("q") == 4000);
  // both deny: both reasons
  const decision both = e.check(gpu_job("c", "q", 2, 5000));
  REQUIRE(both.reasons().size() == 2);
  CHECK(both.reasons()[0].model == "gpus");
  CHECK(both.reasons()[1].model == "cpus");
}

TEST_CASE("engine: a failing commit is rolled back in the models already committed") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  e.model(1).target<cap_policy>()->fail_next_commit = true;
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 2, 1000)), overflow_error);
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 0);
  CHECK_FALSE(e.is_admitted("a"));
  CHECK(e.admit(gpu_job("a", "q", 2, 1000)).allowed());
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 2);
}

TEST_CASE("engine: a commit denied by a concurrent change is undone everywhere and returned as a denial") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  e.model(1).target<cap_policy>()->deny_next_commit = true;
  decision d;
  REQUIRE_NOTHROW(d = e.admit(gpu_job("a", "q", 2, 1000)));
  REQUIRE(d.denied());
  CHECK(d.reasons().at(0).model == "cpus");
  CHECK(d.reasons().at(0).rule == "over_cap");
  CHECK(e.model(0).target<cap_policy>()->used_of("q") == 0);  // the first model's commit was undone
  CHECK_FALSE(e.is_admitted("a"));
  // the same in the compile-time engine; a model used directly sees a state_error (505)
  basic_engine<cap_policy, cap_policy> be(cap_policy("gpus", resources::nvidia_gpu, 4),
                                          cap_policy("cpus", resources::cpu, 8000));
  be.model<1>().deny_next_commit = true;
  CHECK(be.admit(gpu_job("b", "q", 1, 1000)).denied());
  CHECK(be.model<0>().used_of("q") == 0);
  CHECK(be.admit(gpu_job("b", "q", 1, 1000)).allowed());
  cap_policy direct("cpus", resources::cpu, 8000);
  direct.deny_next_commit = true;
  try {
    direct.commit(gpu_job("c", "q", 0, 1000));
    FAIL("no error");
  } catch (const state_error& err) {
    CHECK(err.id() == error_id::state_not_admitted);
  }
}

TEST_CASE("engine: release always succeeds for admitted jobs; unknown and duplicate ids are typed errors") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  CHECK(e.admit(gpu_job("a", "q", 4)).allowed());
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 0)), state_error);
  CHECK(e.check(gpu_job("b", "q", 1)).denied());
  e.release("a");
  CHECK(e.check(gpu_job("b", "q", 1)).allowed());
  REQUIRE_THROWS_AS(e.release("a"), unknown_entity_error);
  REQUIRE_THROWS_AS(e.release("never"), unknown_entity_error);
  CHECK(e.admitted_count() == 0);
}

TEST_CASE("engine: victims come from every model, and the engine is itself a policy") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(cap_policy("cpus", resources::cpu, 8000)));
  CHECK(e.admit(gpu_job("a", "q", 1, 1)).allowed());
  std::vector<victim> out;
  e.victims(gpu_job("x", "q", 1), out);
  REQUIRE(out.size() == 2);
  CHECK(out[0] == victim{"a", "gpus", "same_queue", "q"});
  // engines nest: an engine inside an engine
  engine outer;
  outer.add(any_policy(std::move(e)));
  CHECK(outer.check(gpu_job("y", "q", 4)).denied());
  CHECK(outer.check(gpu_job("y", "other", 4)).allowed());
}

TEST_CASE("engine: both engines share one protocol: rollback, duplicate and unknown ids behave the same") {
  basic_engine<cap_policy, cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                                     cap_policy("cpus", resources::cpu, 8000),
                                                     cap_policy("more", resources::cpu, 8000));
  // the third model fails: the first two release the job again
  e.model<2>().fail_next_commit = true;
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 2, 1000)), overflow_error);
  CHECK(e.model<0>().used_of("q") == 0);
  CHECK(e.model<1>().used_of("q") == 0);
  CHECK_FALSE(e.is_admitted("a"));
  CHECK(e.admitted_count() == 0);
  CHECK(e.admit(gpu_job("a", "q", 2, 1000)).allowed());
  CHECK(e.model<2>().used_of("q") == 1000);
  REQUIRE_THROWS_AS(e.admit(gpu_job("a", "q", 0)), state_error);
  REQUIRE_THROWS_AS(e.commit(gpu_job("big", "q", 9)), state_error);  // commit of a denied job
  CHECK_FALSE(e.is_admitted("big"));
  REQUIRE_THROWS_AS(e.release("never"), unknown_entity_error);
  e.release("a");
  CHECK(e.model<0>().used_of("q") == 0);
  CHECK(e.model<2>().used_of("q") == 0);
  CHECK(e.admitted_count() == 0);
  static_assert(policy<decltype(e)>);
}
