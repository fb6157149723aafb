// SPDX-License-Identifier: Apache-2.0
#include <quota/engine.hpp>
#include <quota/explain.hpp>
#include <quota/explain_fmt.hpp>
#include <quota/explain_json.hpp>
#include <quota/json.hpp>
#include <quota/running_limits.hpp>

#include <map>

#include "quota_catch.hpp"

using namespace quota;

namespace {
// A per-queue cap on one resource; victims are the queue's jobs, newest first.
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
    if (jobs_.count(j.id)) throw state_error(error_id::state_duplicate, j.id);
    jobs_[j.id] = {j.queue, j.request.get(res_)};
    order_.push_back(j.id);
    used_[j.queue] += j.request.get(res_);
  }
  void release(std::string_view id) {
    auto it = jobs_.find(std::string(id));
    if (it == jobs_.end()) throw unknown_entity_error(error_id::unknown_job, "job", id);
    used_[it->second.first] -= it->second.second;
    jobs_.erase(it);
    order_.erase(std::find(order_.begin(), order_.end(), std::string(id)));
  }
  void victims(const job& j, std::vector<victim>& out) const {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it)
      if (jobs_.at(*it).first == j.queue) out.push_back(victim{*it, name_, "newest_first", j.queue});
  }
  [[nodiscard]] std::int64_t used_of(const std::string& q) const {
    auto it = used_.find(q);
    return it == used_.end() ? 0 : it->second;
  }
  friend bool operator==(const cap_policy&, const cap_policy&) = default;

 private:
  std::string_view name_;
  resource_id res_;
  std::int64_t cap_;
  std::map<std::string, std::pair<std::string, std::int64_t>> jobs_;
  std::vector<std::string> order_;
  std::map<std::string, std::int64_t> used_;
};

// A model that knows when it will allow more: a GPU-hour budget that refills
// at a fixed time (a stand-in for time-aware policies such as budgets).
class refill_policy {
 public:
  refill_policy(std::int64_t left, std::int64_t refill_at_ms) : left_(left), refill_at_(refill_at_ms) {}
  [[nodiscard]] std::string_view policy_name() const { return "refill"; }
  [[nodiscard]] decision check(const job& j) const {
    const auto req = j.request.get(resources::nvidia_gpu);
    if (req > left_)
      return decision::deny(
          reason{"refill", "budget_exhausted", j.queue, resources::nvidia_gpu, "", req, 0, left_, ""});
    return decision::allow();
  }
  void commit(const job& j) { left_ -= j.request.get(resources::nvidia_gpu); }
  void release(std::string_view) {}
  void victims(const job&, std::vector<victim>&) const {}
  [[nodiscard]] std::optional<std::int64_t> earliest_admission_ms(const job&) const { return refill_at_; }

 private:
  std::int64_t left_;
  std::int64_t refill_at_;
};
static_assert(earliest_admission_aware<refill_policy>);
static_assert(!earliest_admission_aware<cap_policy>);

job gpu_job(std::string id, std::string queue, std::int64_t gpus, std::int64_t cpu = 0) {
  job j;
  j.id = std::move(id);
  j.queue = std::move(queue);
  j.request.set(resources::nvidia_gpu, gpus);
  j.request.set(resources::cpu, cpu);
  return j;
}
}  // namespace

TEST_CASE("what-if: an admissible job is explained as allowed by every model, nothing committed") {
  basic_engine<cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                         cap_policy("cpus", resources::cpu, 8000));
  const explanation x = e.explain(gpu_job("a", "q", 2, 1000));
  CHECK(x.allowed());
  CHECK(x.job_id == "a");
  REQUIRE(x.models.size() == 2);
  CHECK(x.models[0].model == "gpus");
  CHECK(x.models[1].model == "cpus");
  CHECK(x.models[0].allowed());
  CHECK(x.models[0].victims.empty());
  CHECK_FALSE(x.earliest_ms());
  CHECK(x.verdict() == e.check(gpu_job("a", "q", 2, 1000)));
  CHECK_FALSE(e.is_admitted("a"));
  CHECK(e.model<0>().used_of("q") == 0);
  CHECK(to_string(x).find("would be admitted now") != std::string::npos);
  // an admitted job: the engine would not admit it twice
  CHECK(e.admit(gpu_job("a", "q", 2, 1000)).allowed());
  const explanation again = e.explain(gpu_job("a", "q", 2, 1000));
  CHECK(again.already_admitted);
  CHECK_FALSE(again.allowed());
}

TEST_CASE("what-if: a job denied by one model of two shows that model's reasons and the other's allow") {
  engine e;
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 4)));
  e.add(any_policy(running_limits_policy{}));
  e.model(1).target<running_limits_policy>()->set_limit(running_limits_policy::scope::queue, "q", 1);
  e.model(1).target<running_limits_policy>()->set_limit(running_limits_policy::scope::user, "sue", 1);
  auto first = gpu_job("a", "q", 1);
  first.user = "sue";
  REQUIRE(e.admit(first).allowed());
  auto next = gpu_job("b", "q", 1);
  next.user = "sue";
  const explanation x = e.explain(next);
  CHECK_FALSE(x.allowed());
  REQUIRE(x.models.size() == 2);
  CHECK(x.models[0].allowed());
  CHECK_FALSE(x.models[1].allowed());
  // every reason of the denying model, not only the first
  REQUIRE(x.models[1].verdict.reasons().size() == 2);
  CHECK(x.models[1].verdict.reasons()[0].entity == "queue:q");
  CHECK(x.models[1].verdict.reasons()[1].entity == "user:sue");
  REQUIRE(x.denied_by().size() == 1);
  CHECK(x.denied_by()[0] == "running_limits");
  CHECK(x.verdict() == e.check(next));
  // a second denying model: both models' reasons
  auto big = gpu_job("c", "q", 4);
  big.user = "sue";
  const explanation both = e.explain(big);
  CHECK(both.models[0].verdict.has_rule("over_cap", "gpus"));
  CHECK(both.models[1].verdict.has_rule("max_running_jobs", "running_limits"));
  CHECK(both.denied_by().size() == 2);
  const std::string text = to_string(both);
  CHECK(text.find("would be denied now by gpus, running_limits") != std::string::npos);
  CHECK(text.find("gpus.over_cap [q]") != std::string::npos);
}

TEST_CASE("what-if: the victims each denying model would need are listed in its own order") {
  basic_engine<cap_policy, running_limits_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4), running_limits_policy{});
  e.model<1>().set_limit(running_limits_policy::scope::queue, "q", 5);
  REQUIRE(e.admit(gpu_job("a", "q", 2)).allowed());
  REQUIRE(e.admit(gpu_job("b", "q", 2)).allowed());
  REQUIRE(e.admit(gpu_job("c", "other", 1)).allowed());
  auto j = gpu_job("x", "q", 1);
  j.priority = 10;
  const explanation x = e.explain(j);
  CHECK_FALSE(x.allowed());
  REQUIRE(x.models[0].victims.size() == 2);
  CHECK(x.models[0].victims[0] == victim{"b", "gpus", "newest_first", "q"});
  CHECK(x.models[0].victims[1] == victim{"a", "gpus", "newest_first", "q"});
  CHECK(x.models[1].victims.empty());  // running_limits allows: not asked
  CHECK(x.victims().size() == 2);
  // JSON: every model, its reasons and victims
  json doc = x;
  CHECK(doc["job"] == "x");
  CHECK(doc["allowed"] == false);
  CHECK(doc["models"][0]["victims"][0]["job"] == "b");
  CHECK(doc["models"][0]["reasons"][0]["rule"] == "over_cap");
  CHECK(doc["models"][1]["allowed"] == true);
  CHECK(doc["denied_by"] == json::array({"gpus"}));
  CHECK_FALSE(doc.contains("earliest_admission_ms"));
  CHECK(fmt::format("{}", x) == to_string(x));
}

TEST_CASE("what-if: explain leaves the engine and every model byte-identical") {
  basic_engine<cap_policy, cap_policy> e(cap_policy("gpus", resources::nvidia_gpu, 4),
                                         cap_policy("cpus", resources::cpu, 8000));
  REQUIRE(e.admit(gpu_job("a", "q", 3, 4000)).allowed());
  const cap_policy gpus_before = e.model<0>(), cpus_before = e.model<1>();
  const auto count = e.admitted_count();
  for (int i = 0; i < 3; ++i) {
    const explanation x = e.explain(gpu_job("b", "q", 2, 5000));
    CHECK(x.denied_by().size() == 2);
  }
  CHECK(e.model<0>() == gpus_before);
  CHECK(e.model<1>() == cpus_before);
  CHECK(e.admitted_count() == count);
  CHECK_FALSE(e.is_admitted("b"));
  // the type-erased engine: the JSON introspection of a real model is unchanged
  engine te;
  te.add(any_policy(running_limits_policy{}));
  te.model(0).target<running_limits_policy>()->set_limit(running_limits_policy::scope::queue, "q", 1);
  REQUIRE(te.admit(gpu_job("a", "q", 1)).allowed());
  const auto running_before = te.model(0).target<running_limits_policy>()->running(running_limits_policy::scope::queue, "q");
  const explanation x = te.explain(gpu_job("b", "q", 1));
  CHECK_FALSE(x.allowed());
  CHECK(te.model(0).target<running_limits_policy>()->running(running_limits_policy::scope::queue, "q") == running_before);
  CHECK(te.model(0).target<running_limits_policy>()->running_jobs() == 1);
  CHECK(te.admit(gpu_job("c", "other", 1)).allowed());
}

TEST_CASE("what-if: the earliest admission time comes from models that can tell") {
  engine e;
  e.add(any_policy(refill_policy(4, 3'600'000)));
  e.add(any_policy(cap_policy("gpus", resources::nvidia_gpu, 8)));
  // only the refill model denies: its time is the answer
  const explanation x = e.explain(gpu_job("a", "q", 6));
  CHECK_FALSE(x.allowed());
  REQUIRE(x.models[0].earliest_ms);
  CHECK(*x.models[0].earliest_ms == 3'600'000);
  REQUIRE(x.earliest_ms());
  CHECK(*x.earliest_ms() == 3'600'000);
  CHECK(e.earliest_admission_ms(gpu_job("a", "q", 6)) == std::optional<std::int64_t>(3'600'000));
  CHECK(to_string(x).find("earliest admission by every model: 3600000 ms (1h)") != std::string::npos);
  json doc = x;
  CHECK(doc["earliest_admission_ms"] == 3'600'000);
  CHECK(doc["models"][0]["earliest_admission_ms"] == 3'600'000);
  // a second denying model that cannot tell: no overall time
  const explanation y = e.explain(gpu_job("b", "q", 9));
  CHECK(y.denied_by().size() == 2);
  CHECK_FALSE(y.earliest_ms());
  CHECK_FALSE(y.models[1].earliest_ms);
  // nested engines pass the time through any_policy
  engine outer;
  outer.add(any_policy(e));
  const explanation z = outer.explain(gpu_job("c", "q", 6));
  REQUIRE(z.earliest_ms());
  CHECK(*z.earliest_ms() == 3'600'000);
  // a single model
  const explanation s = explain(refill_policy(1, 5), gpu_job("d", "q", 2));
  CHECK(s.earliest_ms() == std::optional<std::int64_t>(5));
}
