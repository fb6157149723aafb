// SPDX-License-Identifier: Apache-2.0
// Tests of KAI's fair-share model introspection (quota/kai_fair_share_json.hpp)
// and of the resource names its reasons carry.
#include <string>

#include "quota_catch.hpp"

#include <quota/kai_fair_share.hpp>
#include <quota/kai_fair_share_json.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;

kai_fair_share_queue_spec q(std::string name, std::string parent, kai_fair_share_resource g, resource_id foo,
                            kai_fair_share_resource f) {
  kai_fair_share_queue_spec s;
  s.name = std::move(name);
  s.parent = std::move(parent);
  s.resources[gpu] = g;
  s.resources[foo] = f;
  return s;
}

// root r (unlimited) over a (2 GPUs, 4 foo capped at 6) and b (2 GPUs capped
// at 3, foo unlimited); 8 GPUs and 10 foo; a asks 2 GPUs and 3 foo, b nothing.
kai_fair_share_model tree(resource_id foo, kai_fair_share_options opts = {}) {
  kai_fair_share_model t({q("r", "", {-1, 1, -1}, foo, {-1, 1, -1}), q("a", "r", {2, 1, -1}, foo, {4, 1, 6}),
                          q("b", "r", {2, 1, 3}, foo, {-1, 1, -1})},
                         opts);
  t.set_capacity({{gpu, 8}, {foo, 10}});
  t.set_request(t.at("a"), {{gpu, 2}, {foo, 3}});
  t.compute();
  return t;
}

}  // namespace

TEST_CASE("kai_fair_share: introspection names a custom resource, unlimited quota and limit, dominant share exact") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto t = tree(foo);
  t.rebind_registry(&reg);
  t.allocate(t.at("a"), {{gpu, 1}, {foo, 3}}, true);
  json j = t;
  const json& a = j["queues"]["a"];
  const json& b = j["queues"]["b"];
  CHECK(a["parent"] == "r");
  CHECK_FALSE(j["queues"]["r"].contains("parent"));
  CHECK(a["deserved"] == json{{"example.com/foo", 4}, {"nvidia.com/gpu", 2}});
  CHECK(a["limit"] == json{{"example.com/foo", 6}, {"nvidia.com/gpu", "unlimited"}});
  CHECK(b["deserved"]["example.com/foo"] == "unlimited");
  CHECK(b["limit"]["nvidia.com/gpu"] == 3);
  CHECK(a["fair_share"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 2}});
  CHECK(a["allocated"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 1}});
  CHECK(j["queues"]["r"]["allocated"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 1}});
  CHECK(a["request"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 2}});
  // dominant share: allocated / allocatable share, gpu 1 / max(quota 2, fair 2),
  // foo 3 / min(limit 6, max(quota 4, fair 3)) = 3/4
  CHECK(a["share_exact"] == "3/4");
  CHECK(a["share"] == "0.750000");
  CHECK(b["share_exact"] == "0");
  // no historical usage unless given
  CHECK(j["historical_usage"]["k"] == "0");
  CHECK(a["usage"] == json{{"example.com/foo", 0}, {"nvidia.com/gpu", 0}});
  CHECK(j.dump().find('#') == std::string::npos);
}

TEST_CASE("kai_fair_share: introspection shows the historical usage, its normaliser and k") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  kai_fair_share_options o;
  o.usage_k_num = 1;
  o.usage_k_den = 2;
  auto t = tree(foo, o);
  t.rebind_registry(&reg);
  t.set_usage_total({{gpu, 100}, {foo, 50}});
  t.set_usage(t.at("a"), {{gpu, 10}});
  json j = t;
  CHECK(j["historical_usage"]["k"] == "1/2");
  CHECK(j["historical_usage"]["total"] == json{{"example.com/foo", 50}, {"nvidia.com/gpu", 100}});
  CHECK(j["queues"]["a"]["usage"]["nvidia.com/gpu"] == 10);
  CHECK(j["queues"]["r"]["usage"]["nvidia.com/gpu"] == 10);  // parents sum their children
}

TEST_CASE("kai_fair_share: reasons name a custom resource by the bound registry") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  auto t = tree(foo);
  t.rebind_registry(&reg);
  t.allocate(t.at("a"), {{foo, 3}}, true);
  // 3 allocated + 4 > a's limit 6 in foo
  const decision d = t.check_allocation(t.at("a"), {{foo, 4}}, true);
  REQUIRE(d.denied());
  CHECK(d.reasons()[0].rule == "over_limit");
  CHECK(d.reasons()[0].resource_name == "example.com/foo");
  CHECK(json(d)["reasons"][0]["resource"] == "example.com/foo");
}

TEST_CASE("kai_fair_share: introspection without a registry that names a resource is an unknown_resource error") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  const auto t = tree(foo);
  json j;
  CHECK_THROWS_AS(to_json(j, t), unknown_entity_error);
}
