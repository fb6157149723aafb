// SPDX-License-Identifier: Apache-2.0
// Tests of the nos elastic-quota model's introspection (quota/elastic_quota_json.hpp).
#include <string>
#include <vector>

#include "quota_catch.hpp"

#include <quota/elastic_quota.hpp>
#include <quota/elastic_quota_json.hpp>

using namespace quota;

namespace {

constexpr resource_id gpu = resources::nvidia_gpu;
constexpr resource_id cpu = resources::cpu;

elastic_quota_spec eq(std::string name, std::string ns, resource_vector min, std::optional<limit_vector> max = {}) {
  elastic_quota_spec s;
  s.name = std::move(name);
  s.object_namespace = ns;
  s.namespaces = {std::move(ns)};
  s.min = std::move(min);
  s.max = std::move(max);
  return s;
}

elastic_pod pod(std::string name, std::string ns, resource_vector req, std::int64_t t) {
  return elastic_pod{std::move(name), std::move(ns), std::move(req), 0, t};
}

}  // namespace

TEST_CASE("elastic_quota: introspection shows status.used over min's keys with zeros, the pool and unlimited max") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  // A: min 4 foo and 2 GPUs, max 6 foo; B: min 2 foo, no spec.max
  elastic_quota_model s({eq("A", "a", {{foo, 4}, {gpu, 2}}, limit_vector{{foo, 6}}), eq("B", "b", {{foo, 2}})}, {},
                        &reg);
  s.add_pod(pod("a1", "a", {{foo, 1}}, 1));
  s.add_pod(pod("b1", "b", {{foo, 3}, {cpu, 1000}}, 2));
  json j = s;
  const json& a = j["quotas"]["A"];
  const json& b = j["quotas"]["B"];
  // nos's status.used: the resources of min, zeros kept, nothing else
  CHECK(a["status"]["used"] == json{{"example.com/foo", 1}, {"nvidia.com/gpu", 0}});
  CHECK(b["status"]["used"] == json{{"example.com/foo", 3}});
  CHECK(b["used"] == json{{"cpu", 1000}, {"example.com/foo", 3}});
  // a bound that is absent is "unlimited"
  CHECK(a["max"] == json{{"example.com/foo", 6}, {"nvidia.com/gpu", "unlimited"}});
  CHECK(b["max"] == json{{"cpu", "unlimited"}, {"example.com/foo", "unlimited"}});
  // over-quota: B uses 1 foo above its min; the pool is A's unused 3 foo and 2 GPUs,
  // shared in proportion to min: A floor(4/6 x 3) = 2, B floor(2/6 x 3) = 1
  CHECK(a["over_quota_used"] == json{{"example.com/foo", 0}, {"nvidia.com/gpu", 0}});
  CHECK(b["over_quota_used"] == json{{"example.com/foo", 1}});
  CHECK(j["over_quota_pool"] == json{{"example.com/foo", 3}, {"nvidia.com/gpu", 2}});
  CHECK(a["guaranteed_over_quota"] == json{{"example.com/foo", 2}, {"nvidia.com/gpu", 2}});
  CHECK(b["guaranteed_over_quota"] == json{{"example.com/foo", 1}});
  CHECK(elastic_over_quota_pool(s, foo) == 3);
  CHECK(j["labels"]["a1"] == "in-quota");
  CHECK(j["labels"]["b1"] == "over-quota");
  CHECK(j.dump().find('#') == std::string::npos);
}

TEST_CASE("elastic_quota: introspection with missing = upstream shows cpu a present max leaves out as 0") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  elastic_options o;
  o.missing = elastic_missing_policy::upstream;
  elastic_quota_model s({eq("A", "a", {{foo, 4}}, limit_vector{{foo, 6}}), eq("B", "b", {{foo, 2}})}, o, &reg);
  s.add_pod(pod("a1", "a", {{foo, 1}, {cpu, 500}}, 1));
  s.add_pod(pod("b1", "b", {{cpu, 500}}, 2));
  json j = s;
  CHECK(j["quotas"]["A"]["max"] == json{{"cpu", 0}, {"example.com/foo", 6}});
  // no spec.max at all: nothing is capped
  CHECK(j["quotas"]["B"]["max"] == json{{"cpu", "unlimited"}, {"example.com/foo", "unlimited"}});
}

TEST_CASE("elastic_quota: introspection without a registry that names a resource is an unknown_resource error") {
  resource_registry reg;
  const resource_id foo = reg.intern("example.com/foo");
  elastic_quota_model s({eq("A", "a", {{foo, 4}})});
  json j;
  CHECK_THROWS_AS(to_json(j, s), unknown_entity_error);
  s.rebind_registry(&reg);
  to_json(j, s);
  CHECK(j["quotas"]["A"]["min"]["example.com/foo"] == 4);
}
