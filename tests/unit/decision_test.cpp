#include <quota/decision.hpp>
#include <quota/fmt.hpp>
#include <quota/json.hpp>

#include "quota_catch.hpp"

using namespace quota;

namespace {
reason over_max() {
  return reason{"elastic_quota", "over_max", "team-a", resources::nvidia_gpu, "nvidia.com/gpu", 2, 7, 8, ""};
}
}  // namespace

TEST_CASE("decision: allowed carries no reasons; a denial is a value with reasons") {
  const decision ok = decision::allow();
  CHECK(ok.allowed());
  CHECK(static_cast<bool>(ok));
  CHECK(ok.reasons().empty());
  CHECK(ok.reasons().capacity() == 0);  // no allocation for an allowed decision

  decision no = decision::deny(over_max());
  CHECK(no.denied());
  CHECK(no.has_rule("over_max"));
  CHECK(no.has_rule("over_max", "elastic_quota"));
  CHECK_FALSE(no.has_rule("over_max", "limits"));

  decision merged;
  merged.merge(no);
  merged.merge(decision::deny(reason{"limits", "max_applications", "root.a/sue", no_resource, {}, 0, 0, 0, ""}));
  CHECK(merged.reasons().size() == 2);
}

TEST_CASE("decision: text, fmt and JSON name the model, rule, entity, resource and amounts") {
  const decision no = decision::deny(over_max());
  CHECK(to_string(no) == "denied: elastic_quota.over_max [team-a] nvidia.com/gpu: requested 2, used 7, limit 8");
  CHECK(fmt::format("{}", no) == to_string(no));
  CHECK(fmt::format("{}", decision::allow()) == "allowed");

  const json j = no;
  CHECK(j["allowed"] == false);
  REQUIRE(j["reasons"].size() == 1);
  CHECK(j["reasons"][0]["model"] == "elastic_quota");
  CHECK(j["reasons"][0]["rule"] == "over_max");
  CHECK(j["reasons"][0]["entity"] == "team-a");
  CHECK(j["reasons"][0]["resource"] == "nvidia.com/gpu");
  CHECK(j["reasons"][0]["requested"] == 2);
  CHECK(j["reasons"][0]["limit"] == 8);
}
