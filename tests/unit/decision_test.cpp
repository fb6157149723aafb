// SPDX-License-Identifier: Apache-2.0
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
  CHECK(merged.reasons()[0] == no.reasons()[0]);  // a copy: `no` keeps its reason
  CHECK(no.reasons().size() == 1);
  CHECK(merged.reasons()[1].rule == "max_applications");

  // merging a temporary moves its reasons, in order, after those already there
  decision more = decision::deny(reason{"limits", "max_resources", "root.b", no_resource, {}, 0, 0, 0, "x"});
  more.add(reason{"limits", "max_applications", "root.b", no_resource, {}, 0, 0, 0, "y"});
  merged.merge(std::move(more));
  REQUIRE(merged.reasons().size() == 4);
  CHECK(merged.reasons()[2].message == "x");
  CHECK(merged.reasons()[3].message == "y");
  decision first;
  first.merge(decision::deny(over_max()));
  CHECK(first == no);
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

TEST_CASE("decision: equal reasons and decisions agree on every field; text of the bare forms") {
  // determinism checks compare whole decisions: every field of a reason takes part
  const reason base = over_max();
  CHECK(base == over_max());
  std::vector<reason> changed(9, base);
  changed[0].model = "limits";
  changed[1].rule = "over_min";
  changed[2].entity = "team-b";
  changed[3].resource = resources::cpu;
  changed[4].resource_name = "gpu";
  changed[5].requested = 3;
  changed[6].used = 6;
  changed[7].limit = 9;
  changed[8].message = "why";
  for (std::size_t i = 0; i < changed.size(); ++i) {
    INFO("field " << i);
    CHECK_FALSE(changed[i] == base);
    CHECK_FALSE(decision::deny(changed[i]) == decision::deny(base));
  }
  CHECK(decision::allow() == decision{});
  CHECK_FALSE(decision::allow() == decision::deny(base));

  // no entity, no resource: just model.rule; a resource without a name is shown by id; a message follows
  CHECK(to_string(reason{"engine", "duplicate", "", no_resource, {}, 0, 0, 0, ""}) == "engine.duplicate");
  const std::string unnamed = to_string(reason{"m", "r", "", resource_id{42}, {}, 1, 2, 3, ""});
  CHECK(unnamed.find("resource#42: requested 1, used 2, limit 3") != std::string::npos);
  CHECK(to_string(reason{"m", "r", "", no_resource, {}, 0, 0, 0, "closed"}).find("closed") != std::string::npos);

  // append_text: the same text, appended; a name given for an unnamed resource replaces resource#id
  std::string s = "x: ";
  append_text(s, reason{"m", "r", "q", resource_id{42}, {}, -1, 2, 3, "why"}, "example.com/gpu");
  CHECK(s == "x: m.r [q] example.com/gpu: requested -1, used 2, limit 3 - why");
  s.clear();
  append_text(s, reason{"m", "r", "", resource_id{42}, {}, 1, 2, 3, ""});
  CHECK(s == unnamed);
  s.clear();
  append_text(s, base, "ignored");  // a reason that names its resource keeps its own name
  CHECK(s == to_string(base));

  decision two = decision::deny(base);
  two.add(reason{"limits", "max_applications", "root.a/sue", no_resource, {}, 0, 0, 0, ""});
  CHECK(two.has_rule("max_applications"));
  CHECK_FALSE(two.has_rule("max_applications", "elastic_quota"));  // rule found, other model
  CHECK_FALSE(two.has_rule("nothing"));
}
