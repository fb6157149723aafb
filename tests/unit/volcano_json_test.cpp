// SPDX-License-Identifier: Apache-2.0
// Tests of the Volcano proportion model's introspection (quota/volcano_json.hpp)
// and of the resource names its reasons carry.
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/volcano.hpp>
#include <quota/volcano_json.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;

volcano_queue_spec qs(std::string name, std::int64_t weight, resource_vector capability = {}) {
  volcano_queue_spec q;
  q.name = std::move(name);
  q.weight = weight;
  q.capability = std::move(capability);
  return q;
}

// 30 GPUs and 10 example.com/foo; q1 (weight 1) is capped at 4 foo, q2 has weight 2.
// Both want everything: deserved gpu 10 / 20, foo 10/3 / 20/3.
volcano_model two_queues(resource_id foo) {
  volcano_model t({gpu, foo}, resource_vector{{gpu, 30}, {foo, 10}}, {qs("q1", 1, {{foo, 4}}), qs("q2", 2)});
  t.set_pending("q1", {{gpu, 30}, {foo, 10}});
  t.set_pending("q2", {{gpu, 30}, {foo, 10}});
  t.compute_deserved();
  return t;
}

}  // namespace

TEST_CASE("volcano: introspection names a custom resource by its registered name, an absent capability is unlimited") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto t = two_queues(foo);
  t.rebind_registry(&reg);
  t.allocate("j1", "q1", {{gpu, 5}, {foo, 2}}, volcano_task_meta{});
  json j = t;
  const json& q1 = j["queues"]["q1"];
  CHECK(q1["capability"]["example.com/foo"] == 4);
  CHECK(q1["capability"]["nvidia.com/gpu"] == "unlimited");
  CHECK(q1["realCapability"]["nvidia.com/gpu"] == 30);  // bounded by the cluster total
  CHECK(q1["realCapability"]["example.com/foo"] == 4);
  CHECK(q1["deserved"]["nvidia.com/gpu"] == 10);
  CHECK(q1["deserved"]["example.com/foo"] == 3);
  CHECK(q1["deservedCeil"]["example.com/foo"] == 4);
  CHECK(q1["deservedExact"]["example.com/foo"] == "10/3");
  CHECK(q1["deservedDecimal"]["example.com/foo"] == "3.333333");
  CHECK(q1["allocated"]["example.com/foo"] == 2);
  // share: the largest allocated / deserved, 5/10 in gpu and 2/(10/3) = 3/5 in foo
  CHECK(q1["share"] == "0.600000");
  CHECK(q1["shareExact"] == "3/5");
  CHECK(q1["overused"] == false);
  CHECK(j["queues"]["q2"]["share"] == "0.000000");
  CHECK(j["queues"]["q2"]["shareExact"] == "0");
  // no key is made up from an id
  CHECK(j.dump().find('#') == std::string::npos);
}

TEST_CASE("volcano: a queue that uses all it deserves is overused, its share is 1") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto t = two_queues(foo);
  t.rebind_registry(&reg);
  t.allocate("j1", "q2", {{gpu, 20}, {foo, 7}}, volcano_task_meta{});
  json j = t;
  // deserved 20 and 20/3 (ceiling 7): 20 / 20 = 1, 7 / (20/3) = 21/20
  CHECK(j["queues"]["q2"]["shareExact"] == "21/20");
  CHECK(j["queues"]["q2"]["share"] == "1.050000");
  CHECK(j["queues"]["q2"]["overused"] == true);
}

TEST_CASE("volcano: reasons name a custom resource by the bound registry") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto t = two_queues(foo);
  t.rebind_registry(&reg);
  t.allocate("j1", "q1", {{gpu, 1}, {foo, 2}}, volcano_task_meta{});
  // 2 allocated + 3 asked > 4, q1's realCapability in foo
  const decision d = t.job_enqueueable(t.index("q1"), {{foo, 3}});
  REQUIRE(d.denied());
  REQUIRE(d.reasons().size() == 1);
  CHECK(d.reasons()[0].resource_name == "example.com/foo");
  CHECK(to_string(d).find("example.com/foo") != std::string::npos);
  CHECK(json(d)["reasons"][0]["resource"] == "example.com/foo");
}

TEST_CASE("volcano: introspection without a registry that names a resource is an unknown_resource error") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  const auto t = two_queues(foo);  // no registry bound: the well-known names only
  json j;
  CHECK_THROWS_AS(to_json(j, t), unknown_entity_error);
  volcano_policy p(two_queues(foo));
  p.tree().rebind_registry(&reg);
  json k = p;
  CHECK(k["queues"]["q1"]["guarantee"].contains("example.com/foo"));
}
