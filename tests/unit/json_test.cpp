// SPDX-License-Identifier: Apache-2.0
#include <quota/fmt.hpp>
#include <quota/json.hpp>

#include "quota_catch.hpp"

using namespace quota;

TEST_CASE("json: resource lists parse exactly through the registry") {
  resource_registry reg;
  const json j = json::parse(R"({"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": 2, "example.com/fpga": "1"})");
  const auto v = parse_resource_list(j, reg, "spec.max");
  CHECK(v.get(resources::cpu) == 1500);
  CHECK(v.get(resources::memory) == 2LL << 30);
  CHECK(v.get(resources::nvidia_gpu) == 2);
  CHECK(v.get(reg.at("example.com/fpga")) == 1);
  CHECK(resource_list_to_json(v, reg) ==
        json::parse(R"({"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "2", "example.com/fpga": "1"})"));
  CHECK(fmt::format("{}", named(v, reg)) == "{cpu: 1500m, memory: 2Gi, nvidia.com/gpu: 2, example.com/fpga: 1}");
  const auto lim = parse_resource_list<limit_vector>(json::parse(R"({"cpu": 2})"), reg, "spec.max");
  CHECK(fmt::format("{}", named(lim, reg)) == "{cpu: 2, others unlimited}");
}

TEST_CASE("json: errors name the JSON path; with diagnostics all of them are reported") {
  resource_registry reg;
  const json j = json::parse(R"({"cpu": "-1", "memory": "2Gx", "bad name": "1", "nvidia.com/gpu": true})");
  try {
    (void)parse_resource_list(j, reg, "items[3].spec.min");
    FAIL("accepted");
  } catch (const parse_error& e) {
    CHECK(std::string(e.what()).find("items[3].spec.min.") != std::string::npos);
  }
  diagnostics d;
  const auto size_before = reg.size();
  (void)parse_resource_list(j, reg, "items[3].spec.min", &d);
  REQUIRE(d.size() == 4);
  CHECK(d.items()[0].path == "items[3].spec.min.bad name");
  CHECK(d.items()[1].path == "items[3].spec.min.cpu");
  CHECK(d.items()[1].message.find("negative") != std::string::npos);
  CHECK(reg.size() == size_before);  // the invalid name was not registered

  // unknown resources where only registered names are allowed
  REQUIRE_THROWS_AS(parse_known_resource_list(json::parse(R"({"example.com/x": 1})"), reg, "spec"),
                    unknown_entity_error);
}

TEST_CASE("json: documents may be one object, a Kubernetes List or an array") {
  const json one = json::parse(R"({"metadata": {"name": "a", "namespace": "ns1"}})");
  const json list = json::parse(
      R"({"kind": "ElasticQuotaList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]})");
  const json arr = json::parse(R"([{"metadata": {"name": "a"}}])");
  std::vector<std::string> seen;
  auto collect = [&](const json& o, const std::string& path) { seen.push_back(object_name(o, path) + "@" + path); };
  for_each_object(one, collect);
  for_each_object(list, collect);
  for_each_object(arr, collect);
  CHECK(seen == std::vector<std::string>{"a@", "a@items[0]", "b@items[1]", "a@[0]"});
  CHECK(object_namespace(one) == "ns1");
  CHECK(object_namespace(arr[0]) == "default");
  REQUIRE_THROWS_AS(for_each_object(json(3), collect), parse_error);
  REQUIRE_THROWS_AS(object_name(json::parse(R"({"metadata": {}})"), "items[2]"), parse_error);
  REQUIRE_THROWS_AS(parse_json_text("{\"a\": ", "scenario.json"), parse_error);
}
