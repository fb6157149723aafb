// SPDX-License-Identifier: Apache-2.0
// Tests of the Volcano capacity model's introspection
// (quota/volcano_capacity_json.hpp) and of the resource names its reasons carry.
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/volcano_capacity.hpp>
#include <quota/volcano_capacity_json.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;

volcano_capacity_queue_spec cq(std::string name, resource_vector deserved = {}, resource_vector capability = {}) {
  volcano_capacity_queue_spec q;
  q.name = std::move(name);
  q.deserved = std::move(deserved);
  q.capability = std::move(capability);
  return q;
}

// 8 GPUs and 6 example.com/foo; a deserves 4 GPUs and 3 foo, capped at 4 foo;
// b deserves 4 GPUs and 3 foo, without a capability.
volcano_capacity_model two_queues(resource_id foo) {
  return volcano_capacity_model({gpu, foo}, resource_vector{{gpu, 8}, {foo, 6}},
                                {cq("a", {{gpu, 4}, {foo, 3}}, {{foo, 4}}), cq("b", {{gpu, 4}, {foo, 3}})});
}

}  // namespace

TEST_CASE("volcano_capacity: introspection names a custom resource, an absent capability is unlimited, share exact") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto c = two_queues(foo);
  c.rebind_registry(&reg);
  c.allocate("t1", "a", {{gpu, 1}, {foo, 2}});
  json j = c;
  const json& a = j["queues"]["a"];
  CHECK(a["deserved"]["example.com/foo"] == 3);
  CHECK(a["capability"]["example.com/foo"] == 4);
  CHECK(a["capability"]["nvidia.com/gpu"] == "unlimited");
  CHECK(j["queues"]["b"]["capability"]["example.com/foo"] == "unlimited");
  CHECK(a["allocated"]["example.com/foo"] == 2);
  // share: the largest allocated / deserved, 1/4 in gpu and 2/3 in foo
  CHECK(a["shareExact"] == "2/3");
  CHECK(a["share"] == "0.666667");
  CHECK(a["overused"] == false);
  CHECK_FALSE(a.contains("parent"));
  CHECK(j.dump().find('#') == std::string::npos);
}

TEST_CASE("volcano_capacity: a queue above its deserved is overused; reasons name a custom resource") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto c = two_queues(foo);
  c.rebind_registry(&reg);
  c.allocate("t1", "b", {{gpu, 1}, {foo, 4}});
  json j = c;
  CHECK(j["queues"]["b"]["shareExact"] == "4/3");
  CHECK(j["queues"]["b"]["share"] == "1.333333");
  CHECK(j["queues"]["b"]["overused"] == true);
  // a: allocated 0 + 5 > realCapability 4 in foo
  const decision d = c.job_enqueueable(c.index("a"), {{foo, 5}});
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].resource_name == "example.com/foo");
  CHECK(json(d)["reasons"][0]["resource"] == "example.com/foo");
}

TEST_CASE("volcano_capacity: introspection without a registry that names a resource is an unknown_resource error") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  const auto c = two_queues(foo);
  json j;
  CHECK_THROWS_AS(to_json(j, c), unknown_entity_error);
}
