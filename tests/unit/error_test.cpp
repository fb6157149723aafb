// SPDX-License-Identifier: Apache-2.0
#include <quota/error.hpp>

#include "quota_catch.hpp"

using namespace quota;

TEST_CASE("error: messages carry the kind and the stable numeric id") {
  const parse_error p(error_id::parse_malformed_quantity, "malformed quantity 'x'");
  CHECK(std::string(p.what()) == "[quota.parse_error.101] malformed quantity 'x'");
  CHECK(p.number() == 101);
  const overflow_error o("integer overflow in addition");
  CHECK(std::string(o.what()) == "[quota.overflow_error.401] integer overflow in addition");
  const state_error s(error_id::state_duplicate, "job 'a' already committed");
  CHECK(s.number() == 502);
  const unknown_entity_error u(error_id::unknown_queue, "queue", "root.x");
  CHECK(std::string(u.what()) == "[quota.unknown_entity.302] unknown queue 'root.x'");
}

TEST_CASE("error: every kind derives from quota::error and std::runtime_error") {
  auto thrower = [](int k) {
    switch (k) {
      case 0:
        throw parse_error(error_id::parse_wrong_type, "x");
      case 1:
        throw validation_error("p", "m");
      case 2:
        throw unknown_entity_error(error_id::unknown_job, "job", "j");
      case 3:
        throw overflow_error("o");
      default:
        throw state_error(error_id::state_conflict, "s");
    }
  };
  for (int k = 0; k < 5; ++k) {
    REQUIRE_THROWS_AS(thrower(k), error);
    REQUIRE_THROWS_AS(thrower(k), std::runtime_error);
  }
}

TEST_CASE("error: validation errors hold every problem of a document at once") {
  diagnostics d;
  CHECK(d.empty());
  d.throw_if_any();  // nothing to throw
  d.add("queues[0].limits[1]", "wildcard must be the only entry");
  d.add("queues[2].resources.max.cpu", "quantity '-1' is negative");
  try {
    d.throw_if_any();
    FAIL("no throw");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[1].path == "queues[2].resources.max.cpu");
    const std::string w = e.what();
    CHECK(w.find("[quota.validation_error.201] 2 problems: queues[0].limits[1]: wildcard") == 0);
    CHECK(w.find("queues[2].resources.max.cpu: quantity '-1' is negative") != std::string::npos);
  }
}
