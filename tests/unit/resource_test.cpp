// SPDX-License-Identifier: Apache-2.0
#include <quota/resource.hpp>

#include "quota_catch.hpp"

using namespace quota;

TEST_CASE("resource: well-known resources have fixed ids and units") {
  resource_registry reg;
  CHECK(reg.at("cpu") == resources::cpu);
  CHECK(reg.at("memory") == resources::memory);
  CHECK(reg.at("nvidia.com/gpu") == resources::nvidia_gpu);
  CHECK(reg.at("nos.nebuly.com/gpu-memory") == resources::gpu_memory);
  CHECK(reg.scale(resources::cpu) == 3);
  CHECK(reg.scale(resources::memory) == 0);
  CHECK(reg.size() == resources::count_well_known);
}

TEST_CASE("resource: interning is idempotent and ids are dense") {
  resource_registry reg;
  const auto a = reg.intern("example.com/fpga");
  const auto b = reg.intern("nvidia.com/mig-1g.10gb");
  CHECK(a == resources::count_well_known);
  CHECK(b == a + 1);
  CHECK(reg.intern("example.com/fpga") == a);
  CHECK(reg.name(b) == "nvidia.com/mig-1g.10gb");
  const auto milli = reg.intern("example.com/gpu-milli", 3);
  CHECK(reg.scale(milli) == 3);
  REQUIRE_THROWS_AS(reg.intern("example.com/gpu-milli", 0), validation_error);
}

TEST_CASE("resource: unknown names and invalid names are typed errors") {
  resource_registry reg;
  try {
    (void)reg.at("example.com/nope");
    FAIL("unknown resource accepted");
  } catch (const unknown_entity_error& e) {
    CHECK(e.id() == error_id::unknown_resource);
    CHECK(e.name() == "example.com/nope");
    CHECK(std::string(e.what()) == "[quota.unknown_entity.301] unknown resource 'example.com/nope'");
  }
  const auto size = reg.size();
  REQUIRE_THROWS_AS(reg.intern("has space"), parse_error);
  REQUIRE_THROWS_AS(reg.intern(""), parse_error);
  REQUIRE_THROWS_AS(reg.intern("a/b/c"), parse_error);
  CHECK(reg.size() == size);  // nothing was added by the failed calls
  REQUIRE_THROWS_AS(reg.info(999), unknown_entity_error);
}

TEST_CASE("resource: registries are values; copies are independent and names stay valid") {
  resource_registry a;
  const auto id = a.intern("example.com/x");
  resource_registry b = a;
  (void)b.intern("example.com/y");
  CHECK(a.size() + 1 == b.size());
  CHECK(b.name(id) == "example.com/x");
  const std::string_view view = a.name(id);
  for (int i = 0; i < 100; ++i) (void)a.intern("example.com/r" + std::to_string(i));
  CHECK(view == "example.com/x");  // stable storage
  CHECK(a.find("example.com/r42").has_value());
}

TEST_CASE("resource: declare sets the scale of a new or registered resource, a well-known one included") {
  resource_registry reg;
  CHECK(reg.declare("nvidia.com/gpu", 3) == resources::nvidia_gpu);
  CHECK(reg.scale(resources::nvidia_gpu) == 3);
  CHECK(reg.intern("nvidia.com/gpu", 3) == resources::nvidia_gpu);
  const auto milli = reg.declare("example.com/gpu-milli", 2);
  CHECK(milli == resources::count_well_known);
  CHECK(reg.scale(milli) == 2);
  const auto size = reg.size();
  REQUIRE_THROWS_AS(reg.declare("nvidia.com/gpu", 10), validation_error);
  REQUIRE_THROWS_AS(reg.declare("example.com/new", -1), validation_error);
  REQUIRE_THROWS_AS(reg.declare("has space", 1), parse_error);
  CHECK(reg.size() == size);
  CHECK(reg.scale(resources::nvidia_gpu) == 3);
}
