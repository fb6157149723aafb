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

// only constant text converts to a note; a caller's string must say so
static_assert(std::is_convertible_v<const char (&)[3], reason_note>);
static_assert(!std::is_convertible_v<const char*, reason_note>);
static_assert(!std::is_convertible_v<std::string, reason_note>);
static_assert(!std::is_convertible_v<std::string_view, reason_note>);
static_assert(std::is_constructible_v<reason_note, std::string>);

TEST_CASE("decision: a reason's note is made when read, from names it copied and numbers") {
  CHECK(reason_note().empty());
  CHECK(reason_note("").empty());
  CHECK(reason_note("fixed") == "fixed");
  CHECK(reason_note(std::string("made")) == std::string("made"));

  std::string pool = "pool-1", queue = "team-a";
  reason_note n("pool $0 of $1 has #0 free, #1 lent; $9 #9 $ # 5$", {pool, queue}, {45, -3});
  pool.assign("overwritten-name-that-is-longer-than-before");  // the note copied its names
  queue.clear();
  CHECK_FALSE(n.empty());
  CHECK(n.name(0) == "pool-1");
  CHECK(n.name(1) == "team-a");
  CHECK(n.name(2).empty());
  CHECK(n.number(0) == 45);
  CHECK(n.number(1) == -3);
  CHECK(n.number(7) == 0);
  CHECK(n.number(8) == 0);
  CHECK(n.pattern_text() == "pool $0 of $1 has #0 free, #1 lent; $9 #9 $ # 5$");
  CHECK(n.str() == "pool pool-1 of team-a has 45 free, -3 lent;  0 $ # 5$");

  // names longer than the note's own buffer are kept too
  const std::string a(40, 'a'), b(30, 'b');
  const reason_note lng("$0/$1/$2", {a, b, "c"}, {});
  CHECK(lng.str() == a + "/" + b + "/c");
  const reason_note copy = lng;  // NOLINT(performance-unnecessary-copy-initialization)
  CHECK(copy == lng);
  CHECK(copy.str() == lng.str());

  // a formatter of one's own
  const reason_note f([](std::string& out, const reason_note& x) { out.append(x.name(0)).append("!"); }, {"hey"}, {});
  CHECK(f == "hey!");
  CHECK(to_string(f) == "hey!");

  // the note in a reason: text, JSON and equality read the made text
  reason r = over_max();
  r.message = reason_note("tenant $0 may use at most #0", {"team-a"}, {8});
  CHECK(
      to_string(r) ==
      "elastic_quota.over_max [team-a] nvidia.com/gpu: requested 2, used 7, limit 8 - tenant team-a may use at most 8");
  CHECK(json(r)["message"] == "tenant team-a may use at most 8");
  reason same = over_max();
  same.message = reason_note(std::string("tenant team-a may use at most 8"));
  CHECK(same == r);
  same.message = "tenant team-a may use at most 9";
  CHECK_FALSE(same == r);
}
