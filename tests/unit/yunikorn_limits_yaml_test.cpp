// SPDX-License-Identifier: Apache-2.0
// YuniKorn queues.yaml through yaml-cpp: the same structure, rules and errors as the JSON loader.
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>
#include <quota/yunikorn_limits_yaml.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "quota_catch.hpp"

using namespace quota;

namespace {

std::string read_text(const std::string& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string data_path(const char* name) {
  return std::string(QUOTA_SOURCE_DIR) + "/tests/data/yunikorn_limits/" + name;
}

void require_same(const limits_queue& a, const limits_queue& b) {
  INFO("queue " << a.name);
  CHECK(a.name == b.name);
  CHECK(a.max == b.max);
  CHECK(a.max_applications == b.max_applications);
  REQUIRE(a.limits.size() == b.limits.size());
  for (std::size_t i = 0; i < a.limits.size(); ++i) {
    CHECK(a.limits[i].name == b.limits[i].name);
    CHECK(a.limits[i].users == b.limits[i].users);
    CHECK(a.limits[i].groups == b.limits[i].groups);
    CHECK(a.limits[i].max_resources == b.limits[i].max_resources);
    CHECK(a.limits[i].max_applications == b.limits[i].max_applications);
  }
  REQUIRE(a.queues.size() == b.queues.size());
  for (std::size_t i = 0; i < a.queues.size(); ++i) require_same(a.queues[i], b.queues[i]);
}

std::vector<diagnostic> yaml_problems(const std::string& text) {
  resource_registry reg;
  try {
    (void)load_yunikorn_limits_config_yaml(text, reg);
  } catch (const validation_error& e) {
    return e.problems();
  }
  return {};
}

bool any_problem(const std::vector<diagnostic>& ps, const std::string& path_part, const std::string& msg_part) {
  return std::any_of(ps.begin(), ps.end(), [&](const diagnostic& d) {
    return d.path.find(path_part) != std::string::npos && d.message.find(msg_part) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("yunikorn_limits: YAML seed four-entry config equals its JSON twin") {
  resource_registry reg_json, reg_yaml;
  const yunikorn_limits_config from_json = load_yunikorn_limits_config_file(data_path("seed_example.json"), reg_json);
  const yunikorn_limits_config from_yaml = load_yunikorn_limits_config_yaml(read_text(data_path("seed_example.yaml")), reg_yaml);
  require_same(from_yaml.root, from_json.root);
  REQUIRE(from_yaml.root.queues.size() == 1);
  const auto& dev = from_yaml.root.queues[0];
  REQUIRE(dev.limits.size() == 4);
  CHECK(dev.limits[0].users == std::vector<std::string>{"sue"});
  CHECK(dev.limits[0].max_resources.bound(resources::cpu) == std::optional<amount>(5000));  // vcore 5
  CHECK(dev.limits[0].max_resources.bound(resources::memory) == std::optional<amount>(25'000'000'000));
  CHECK(dev.limits[1].groups == std::vector<std::string>{"development", "test"});
  CHECK(dev.limits[3].groups == std::vector<std::string>{"*"});

  // the same decisions from both: sue's named 5 vcore at root.dev
  const yunikorn_limits_config from_file = load_yunikorn_limits_config_yaml_file(data_path("seed_example.yaml"), reg_yaml);
  require_same(from_file.root, from_json.root);
  yunikorn_limits_model m(reg_yaml);
  m.reload(from_yaml);
  resource_vector five, one;
  five.set(resources::cpu, 5000);
  one.set(resources::cpu, 1);
  CHECK(m.increase("root.dev", "s1", five, limits_identity{"sue", {}}).allowed());
  CHECK(m.increase("root.dev", "s1", one, limits_identity{"sue", {}}).denied());
}

TEST_CASE("yunikorn_limits: a bad YAML config is a typed error naming the item") {
  // a rule violation: the wildcard user is not the only entry of its list
  const auto ps = yaml_problems(R"(
queues:
  - name: root
    queues:
      - name: a
        limits:
          - limit: mixed
            users: ["*", bob]
            maxapplications: 2
)");
  CHECK(any_problem(ps, "root.a.limits[0]", "limit 'mixed': the wildcard user must be the only entry"));
  // a wrongly typed field: the path of the field
  const auto ts = yaml_problems(R"(
queues:
  - name: root
    limits:
      - limit: typo
        users: [sue]
        maxapplications: many
)");
  CHECK(any_problem(ts, "limits[0].maxapplications", "expected a non-negative integer, got string"));
  const auto ns =
      yaml_problems("queues:\n  - name: root\n    limits:\n      - {limit: neg, users: [sue], maxapplications: -1}\n");
  CHECK(any_problem(ns, "limits[0].maxapplications", "must not be negative"));
  // a YAML syntax error: parse_error 105 with the line
  resource_registry reg;
  try {
    (void)load_yunikorn_limits_config_yaml("queues:\n  - name: root\n    limits: [\n", reg);
    FAIL("no error");
  } catch (const parse_error& e) {
    CHECK(e.id() == error_id::parse_malformed_document);
    CHECK(std::string(e.what()).find("line ") != std::string::npos);
  }
  REQUIRE_THROWS_AS(load_yunikorn_limits_config_yaml_file(data_path("no-such-file.yaml"), reg), parse_error);
  // names stay names: a numeric limit description is the string "1001", and a
  // numeric user the string "1001" (which YuniKorn's user pattern refuses: a
  // letter or '_' first)
  const auto cfg = load_yunikorn_limits_config_yaml(
      "queues:\n  - name: root\n    limits:\n      - {limit: 1001, users: [sue], maxapplications: 1}\n", reg);
  REQUIRE(cfg.root.limits.size() == 1);
  CHECK(cfg.root.limits[0].name == "1001");
  CHECK(cfg.root.limits[0].max_applications == 1);
  try {
    (void)load_yunikorn_limits_config_yaml("queues:\n  - name: root\n    limits:\n      - {users: [1001], maxapplications: 1}\n",
                                  reg);
    FAIL("no error");
  } catch (const validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].message.find("invalid user name '1001'") != std::string::npos);
  }
}

TEST_CASE("yunikorn_limits: YAML scalars keep their YAML type: booleans, null, signs and over-long digits") {
  // accepted: a signed count, null (absent) fields, a quoted quantity
  resource_registry reg;
  const auto cfg = load_yunikorn_limits_config_yaml(R"(
queues:
  - name: root
    maxapplications: ~
    limits:
      - limit: null
        users: [sue]
        maxapplications: +3
        maxresources: {memory: "25G", vcore: "5"}
)",
                                           reg);
  REQUIRE(cfg.root.limits.size() == 1);
  CHECK(cfg.root.max_applications == 0);
  CHECK(cfg.root.limits[0].name.empty());
  CHECK(cfg.root.limits[0].max_applications == 3);
  CHECK(cfg.root.limits[0].max_resources.bound(resources::memory) == std::optional<amount>(25'000'000'000));
  CHECK(cfg.root.limits[0].max_resources.bound(resources::cpu) == std::optional<amount>(5000));

  // rejected, each at its own path: YAML booleans are not counts, nor are text and
  // numbers that do not fit
  const auto ps = yaml_problems(R"(
queues:
  - name: root
    limits:
      - {limit: t1, users: [a], maxapplications: true}
      - {limit: t2, users: [b], maxapplications: True}
      - {limit: t3, users: [c], maxapplications: TRUE}
      - {limit: f1, users: [d], maxapplications: false}
      - {limit: f2, users: [e], maxapplications: False}
      - {limit: f3, users: [f], maxapplications: FALSE}
      - {limit: long, users: [g], maxapplications: 123456789012345678901}
      - {limit: sign, users: [h], maxapplications: +}
      - {limit: low, users: [i], maxapplications: -9999999999999999999}
      - limit: empty
        users: [j]
        maxapplications: !!str
)");
  for (int i = 0; i < 6; ++i)
    CHECK(any_problem(ps, "limits[" + std::to_string(i) + "].maxapplications",
                      "expected a non-negative integer, got boolean"));
  for (int i = 6; i < 10; ++i)
    CHECK(any_problem(ps, "limits[" + std::to_string(i) + "].maxapplications",
                      "expected a non-negative integer, got string"));
}

TEST_CASE("yunikorn_limits: a YAML map key that is not a scalar is a parse error naming where it is") {
  resource_registry reg;
  try {
    (void)load_yunikorn_limits_config_yaml("? [a, b]\n: 1\n", reg);
    FAIL("accepted");
  } catch (const parse_error& e) {
    CHECK(e.id() == error_id::parse_malformed_document);
    CHECK(std::string(e.what()).find("document: a map key must be a scalar") != std::string::npos);
  }
  try {
    (void)load_yunikorn_limits_config_yaml("queues:\n  - name: root\n    ? {x: 1}\n    : 1\n", reg);
    FAIL("accepted");
  } catch (const parse_error& e) {
    CHECK(std::string(e.what()).find("queues[0]: a map key must be a scalar") != std::string::npos);
  }
}

TEST_CASE("yunikorn_limits: a YAML file with a syntax error is a parse error naming the file and the line") {
  const auto file =
      (std::filesystem::temp_directory_path() /
       ("quota-limits-yaml-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".yaml"))
          .string();
  {
    std::ofstream out(file);
    out << "queues:\n  - name: root\n    limits: [\n";
  }
  resource_registry reg;
  std::string what;
  try {
    (void)load_yunikorn_limits_config_yaml_file(file, reg);
  } catch (const parse_error& e) {
    what = e.what();
  }
  std::remove(file.c_str());
  CHECK(what.find(file) != std::string::npos);
  CHECK(what.find("line ") != std::string::npos);
  // a file that cannot be read names the file
  try {
    (void)load_yunikorn_limits_config_yaml_file(file, reg);
    FAIL("accepted");
  } catch (const parse_error& e) {
    CHECK(std::string(e.what()).find("cannot read " + file) != std::string::npos);
  }
}
