// SPDX-License-Identifier: Apache-2.0
// quota-sim against hostile and careless input (docs/reliability.md, "Bad
// input"): every bad file is a typed error naming the item, sizes are checked
// before anything is expanded, integers never wrap, and nothing is silently
// dropped. The command-line cases (exit codes, /dev/zero, generate options)
// are ctest entries in tools/quota-sim/CMakeLists.txt.
#include <quota_catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#ifdef QUOTA_SIM_HAVE_YAML
#include <quota/yunikorn_limits_yaml.hpp>
#endif

#include "models.hpp"
#include "scenario.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

json base() {
  return json{{"name", "t"},
              {"cluster",
               {{"nodes", json::array({json{{"name", "n"}, {"allocatable", {{"cpu", "8"}, {"nvidia.com/gpu", 8}}}}})}}},
              {"jobs", json::array({json{{"id", "a"}, {"request", {{"nvidia.com/gpu", 1}}}}})}};
}

// The problems of loading `doc`, as "path: message" lines ("" when it loads).
std::vector<std::string> problems_of(const json& doc, const input_limits& lim = input_limits{}) {
  quota::diagnostics d;
  (void)load_scenario(doc, d, lim);
  std::vector<std::string> out;
  for (const auto& p : d.items()) out.push_back(p.path + ": " + p.message);
  return out;
}

bool has(const std::vector<std::string>& ps, const std::string& text) {
  for (const auto& p : ps)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

// The message of the quota::error `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const quota::error& e) {
    return e.what();
  }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// ---- parsing ------------------------------------------------------------------

TEST_CASE("robustness: a number beyond a double (1e400) is a parse error naming its JSON path") {
  const std::string text =
      R"({"name": "t", "cluster": {"nodes": []}, "jobs": [{"id": "a", "request": {"nvidia.com/gpu": 1e400}}]})";
  const std::string msg = error_of([&] { (void)parse_scenario_text(text, "f.json"); });
  CHECK(msg.find("quota.parse_error.105") != std::string::npos);
  CHECK(msg.find("$.jobs[0].request.nvidia.com/gpu") != std::string::npos);
  CHECK(msg.find("1e400") != std::string::npos);
}

TEST_CASE("robustness: a JSON syntax error names the byte and the path reached") {
  const std::string msg = error_of([] { (void)parse_scenario_text(R"({"jobs": [{"id": "a",}]})", "f.json"); });
  CHECK(msg.find("quota.parse_error.105") != std::string::npos);
  CHECK(msg.find("byte") != std::string::npos);
  CHECK(msg.find("$.jobs[0]") != std::string::npos);
}

TEST_CASE("robustness: a key written twice in one JSON object is an error naming it, not last-wins") {
  try {
    (void)parse_scenario_text(R"({"name": "t", "jobs": [{"id": "a", "priority": 1, "priority": 9}]})", "f.json");
    FAIL("a duplicate key was accepted");
  } catch (const quota::validation_error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].path == "f.json: $.jobs[0].priority");
    CHECK(e.problems()[0].message.find("duplicate key") != std::string::npos);
  }
  // the same key in two objects is fine
  CHECK_NOTHROW(parse_scenario_text(R"({"a": {"x": 1}, "b": {"x": 2}})", "f.json"));
}

TEST_CASE("robustness: JSON nested beyond the depth limit, or with too many values, is rejected") {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK(error_of([&] { (void)parse_scenario_text(deep, "f.json"); }).find("deeper than the limit of 64") !=
        std::string::npos);
  input_limits lim;
  lim.max_values = 1000;
  std::string many = "[";
  for (int i = 0; i < 2000; ++i) many += "0,";
  many += "0]";
  CHECK(error_of([&] { (void)parse_scenario_text(many, "f.json", lim); }).find("more than 1000 values") !=
        std::string::npos);
  lim = input_limits{};
  lim.max_string_bytes = 10;
  CHECK(error_of([&] {
          (void)parse_scenario_text(R"({"name": "a string of many bytes"})", "f.json", lim);
        }).find("$.name: a string of 22 bytes is longer than the limit of 10") != std::string::npos);
}

TEST_CASE("robustness: an endless or oversized input file is rejected at the size limit, memory bounded") {
  input_limits lim;
  lim.max_file_bytes = 1 << 20;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { (void)read_input_file("/dev/zero", lim); });
  CHECK(msg.find("larger than the input limit of 1048576 bytes") != std::string::npos);
  CHECK(seconds_since(t0) < 1.0);
  CHECK(error_of([] { (void)read_input_file("/nonexistent/scenario.json"); }).find("cannot open") != std::string::npos);
  CHECK(error_of([] { (void)read_input_file("/"); }).find("cannot read") != std::string::npos);
}

#ifdef QUOTA_SIM_HAVE_YAML
TEST_CASE("robustness: YAML alias expansion (billion laughs) stops at the value limit") {
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i)
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + ", *a" +
         std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
         std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
         std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + "]\n";
  // 10^10 values once expanded; the text (about 700 bytes) allows 16 per byte plus 10000
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { (void)parse_scenario_yaml(y, "f.yaml"); });
  CHECK(msg.find("more than " + std::to_string(16 * y.size() + 10'000) +
                 " values once aliases are expanded (at most 16 per byte of YAML text, and the value limit)") !=
        std::string::npos);
  CHECK(seconds_since(t0) < 1.0);
  // a plain document far below: each value costs at least two bytes of text
  std::string plain = "jobs:\n";
  for (int i = 0; i < 20'000; ++i) plain += "- {id: j" + std::to_string(i) + ", request: {cpu: 1}}\n";
  CHECK(parse_scenario_yaml(plain, "plain.yaml")["jobs"].size() == 20'000);
}

TEST_CASE("robustness: the YuniKorn limits YAML reader bounds alias expansion and the file size") {
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += (k ? ", *a" : "*a") + std::to_string(i - 1);
    y += "]\n";
  }
  quota::resource_registry reg;
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(error_of([&] {
          (void)quota::load_yunikorn_limits_config_yaml(y, reg);
        }).find("too many values once aliases are expanded (at most 16 per byte of YAML text)") != std::string::npos);
  CHECK(seconds_since(t0) < 1.0);
  CHECK(error_of([&] {
          (void)quota::load_yunikorn_limits_config_yaml_file("/dev/zero", reg);
        }).find("limits yaml /dev/zero: larger than 64 MiB") != std::string::npos);
}

TEST_CASE("robustness: YAML text that is not valid UTF-8 is rejected with its path") {
  const std::string msg = error_of([] { (void)parse_scenario_yaml("name: \"\\xff\"\nid: \xc3\x28\n", "f.yaml"); });
  CHECK(msg.find("f.yaml: $.id: not valid UTF-8: \\xc3(") != std::string::npos);
}

TEST_CASE("robustness: a YAML key written twice in one map is an error naming it") {
  const std::string msg = error_of([] { (void)parse_scenario_yaml("name: a\njobs: []\nname: b\n", "f.yaml"); });
  CHECK(msg.find("f.yaml: $.name: duplicate key") != std::string::npos);
}
#endif

// ---- sizes ----------------------------------------------------------------------

TEST_CASE("robustness: a job count beyond the job limit is rejected before anything is expanded") {
  json doc = base();
  doc["jobs"][0]["count"] = 100'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  quota::diagnostics d;
  const scenario sc = load_scenario(doc, d, input_limits{});
  CHECK(seconds_since(t0) < 1.0);
  CHECK(sc.jobs.size() == 1);  // read once, to check the rest of the file; never copied
  REQUIRE(d.size() == 1);
  CHECK(d.items()[0].path == "$.jobs[0].count");
  CHECK(d.items()[0].message == "expected 1 to 1000000 (the job limit)");
}

TEST_CASE("robustness: counts that add up beyond the job or node limit are rejected at the entry that passes it") {
  input_limits lim;
  lim.max_jobs = 1000;
  lim.max_nodes = 10;
  json doc = base();
  doc["jobs"] = json::array({json{{"id", "a"}, {"count", 600}, {"request", {{"cpu", 1}}}},
                             json{{"id", "b"}, {"count", 600}, {"request", {{"cpu", 1}}}},
                             json{{"id", "c"}, {"request", {{"cpu", 1}}}}});
  doc["cluster"]["nodes"][0]["count"] = 6;
  doc["cluster"]["nodes"].push_back(json{{"name", "m"}, {"count", 6}, {"allocatable", {{"cpu", 1}}}});
  const auto ps = problems_of(doc, lim);
  CHECK(ps == std::vector<std::string>{
                  "$.cluster.nodes[1].count: the scenario would have more than 10 nodes (the node limit)",
                  "$.jobs[1].count: the scenario would have more than 1000 jobs (the job limit)"});
}

TEST_CASE("robustness: copies whose memory would pass the expansion limit are rejected before copying") {
  input_limits lim;
  lim.max_expanded_bytes = 1 << 20;
  json doc = base();
  doc["jobs"][0]["count"] = 1000;
  doc["jobs"][0]["extra"] = json{{"blob", std::string(4096, 'x')}};
  CHECK(
      problems_of(doc, lim) ==
      std::vector<std::string>{"$.jobs[0].count: the copies of jobs would take more than 1 MiB (the expansion limit)"});
}

TEST_CASE("robustness: pods beyond the pod limit, and a request that overflows with its pods, name the field") {
  json doc = base();
  doc["jobs"][0]["pods"] = 2'000'000;
  CHECK(has(problems_of(doc), "$.jobs[0].pods: expected 1 to 100000 (the pod limit of a job)"));
  doc["jobs"][0]["pods"] = 100'000;
  doc["jobs"][0]["request"] = json{{"cpu", "9000000000000"}};
  CHECK(has(problems_of(doc), "$.jobs[0].request.cpu: times 100000 pods does not fit a 64-bit amount"));
}

TEST_CASE("robustness: names longer than the name limit are rejected") {
  json doc = base();
  doc["jobs"][0]["id"] = std::string(2000, 'j');
  CHECK(has(problems_of(doc), "$.jobs[0].id: a name of 2000 bytes is longer than the limit of 1024"));
}

// ---- integers -------------------------------------------------------------------

TEST_CASE("robustness: priority beyond int32 is rejected with its path, never wrapped") {
  json doc = base();
  doc["jobs"][0]["priority"] = 2147483648LL;
  CHECK(
      problems_of(doc) ==
      std::vector<std::string>{"$.jobs[0].priority: expected an integer in [-2147483648, 2147483647], got 2147483648"});
  doc["jobs"][0]["priority"] = -2147483648LL;
  CHECK(problems_of(doc).empty());
  CHECK(load_scenario(doc).jobs[0].priority == INT32_MIN);
}

TEST_CASE("robustness: every integer field rejects fractions and values its type cannot hold") {
  json doc = base();
  auto& j = doc["jobs"][0];
  j["pods"] = 1.5;
  j["min_pods"] = 4294967297LL;
  j["gpu"] = json{{"count", 4294967297LL}, {"milli", -1}};
  j["count"] = 2.0;
  doc["cluster"]["nodes"][0]["gpu"] = json{{"count", 4294967296LL}};
  doc["cluster"]["nodes"][0]["count"] = -1;
  const auto ps = problems_of(doc);
  CHECK(has(ps, "$.jobs[0].pods: expected an integer in [-2147483648, 2147483647], got 1.5"));
  CHECK(has(ps, "$.jobs[0].min_pods: expected an integer in [-2147483648, 2147483647], got 4294967297"));
  CHECK(has(ps, "$.jobs[0].gpu.count: expected an integer in [-2147483648, 2147483647], got 4294967297"));
  CHECK(has(ps, "$.jobs[0].gpu.milli: expected 1 to 1000"));
  CHECK(has(ps, "$.jobs[0].count: expected an integer in [-9223372036854775808, 9223372036854775807], got 2.0"));
  CHECK(has(ps, "$.cluster.nodes[0].gpu.count: expected an integer in [-2147483648, 2147483647], got 4294967296"));
  CHECK(has(ps, "$.cluster.nodes[0].count: expected 1 to 100000 (the node limit)"));
}

TEST_CASE("robustness: times at the end of int64 are rejected, so no job vanishes and no end time overflows") {
  json doc = base();
  doc["jobs"][0]["submit"] = INT64_MAX;
  CHECK(problems_of(doc) == std::vector<std::string>{"$.jobs[0].submit: expected a time below 4611686018427387904 "
                                                     "ms, got 9223372036854775807"});
  doc["jobs"][0]["submit"] = "end";
  CHECK(problems_of(doc) ==
        std::vector<std::string>{"$.jobs[0].submit: \"end\" is not allowed here: expected a finite time"});
  doc["jobs"][0]["submit"] = 18446744073709551615ULL;
  CHECK(has(problems_of(doc), "$.jobs[0].submit: expected a duration"));
  doc["jobs"][0]["submit"] = 0;
  doc["jobs"][0]["duration"] = std::int64_t{1} << 62;
  CHECK(has(problems_of(doc), "$.jobs[0].duration: expected a time below"));
  doc["events"] = json::array({json{{"at", "end"}, {"type", "delete"}, {"job", "a"}}});
  doc["jobs"][0]["duration"] = "end";  // runs until the end
  const auto ps = problems_of(doc);
  CHECK(ps == std::vector<std::string>{"$.events[0].at: \"end\" is not allowed here: expected a finite time"});
  doc["events"] = json::array();
  CHECK(load_scenario(doc).jobs[0].duration_ms == -1);
  // the largest time allowed runs: start plus duration stay within 64 bits
  doc["jobs"][0]["submit"] = (std::int64_t{1} << 62) - 1;
  doc["jobs"][0]["duration"] = (std::int64_t{1} << 62) - 1;
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  const auto r = sim.run();
  CHECK(r.report["totals"]["jobs"] == 1);
  CHECK(r.report["totals"]["admitted"] == 1);
}

// ---- what validate and run agree on ----------------------------------------------

TEST_CASE("robustness: an empty job id, node name or tenant name is rejected when the file is loaded") {
  json doc = base();
  doc["jobs"][0]["id"] = "";
  doc["jobs"][0]["queue"] = "";
  doc["cluster"]["nodes"][0]["name"] = "";
  const auto ps = problems_of(doc);
  CHECK(has(ps, "$.jobs[0].id: expected a non-empty name"));
  CHECK(has(ps, "$.jobs[0].queue: expected a non-empty name"));
  CHECK(has(ps, "$.cluster.nodes[0].name: expected a non-empty name"));
}

// ---- silently accepted before -----------------------------------------------------

TEST_CASE("robustness: node_remove of an unknown node is an error naming the event") {
  json doc = base();
  doc["events"] = json::array({json{{"at", "1m"}, {"type", "node_remove"}, {"name", "nope"}},
                               json{{"at", "1m"}, {"type", "node_remove"}, {"name", "n"}},
                               json{{"at", "2m"}, {"type", "node_add"}, {"node", {{"name", "late"}}}},
                               json{{"at", "3m"}, {"type", "node_remove"}, {"name", "late"}}});
  CHECK(problems_of(doc) == std::vector<std::string>{"$.events[0].name: unknown node 'nope' (not in cluster.nodes "
                                                     "nor added by an event)"});
}

TEST_CASE("robustness: unknown fields of events and of the cluster are errors") {
  json doc = base();
  doc["cluster"]["nodez"] = 1;
  doc["events"] = json::array({json{{"at", "1m"}, {"type", "delete"}, {"job", "a"}, {"jbo", "a"}},
                               json{{"at", "2m"}, {"type", "node_add"}, {"node", {{"name", "x"}, {"labelz", {}}}}}});
  const auto ps = problems_of(doc);
  CHECK(has(ps, "$.cluster.nodez: unknown field"));
  CHECK(has(ps, "$.events[0].jbo: unknown field"));
  CHECK(has(ps, "$.events[1].node.labelz: unknown field"));
}

TEST_CASE("robustness: a chart resource no node has is an error, not a fallback to GPUs") {
  json doc = base();
  doc["chart"] = json{{"resource", "nvidia.com/gpuu"}};
  CHECK(problems_of(doc) ==
        std::vector<std::string>{"$.chart.resource: resource 'nvidia.com/gpuu' is in no node's allocatable (the "
                                 "chart shows its use against capacity)"});
  doc["chart"] = json{{"resource", "cpu"}};
  CHECK(problems_of(doc).empty());
}

TEST_CASE("robustness: chart lines for an unknown tenant or with negative values are errors") {
  json doc = base();
  doc["jobs"][0]["queue"] = "team-a";
  doc["chart"] = json{{"lines", {{"team-a", 4}, {"team-b", 2}}}};
  CHECK(problems_of(doc) == std::vector<std::string>{"$.chart.lines.team-b: unknown tenant 'team-b' (tenants are "
                                                     "the jobs' queue, else namespace)"});
  doc["chart"] = json{{"lines", {{"team-a", -4}}}};
  CHECK(has(problems_of(doc), "$.chart.lines.team-a:"));
}

// ---- output -----------------------------------------------------------------------

TEST_CASE("robustness: control characters in names are escaped in the SVG") {
  json doc = base();
  doc["name"] = std::string("bell\x07 <name>");
  doc["jobs"][0]["queue"] = std::string("team\x01");
  doc["jobs"][0]["duration"] = "1m";
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  (void)sim.run();
  const std::string svg = sim.svg();
  for (char c : svg) {
    const auto u = static_cast<unsigned char>(c);
    CHECK((u >= 0x20 || c == '\n' || c == '\t' || c == '\r'));
  }
  CHECK(svg.find("bell\\x07 &lt;name&gt;") != std::string::npos);
  CHECK(svg.find("team\\x01") != std::string::npos);
}

// ---- upstream objects inside policies ----------------------------------------------

TEST_CASE("robustness: a misspelt field of an upstream object is an error naming it, or a warning when lenient") {
  json doc = base();
  doc["jobs"][0]["queue"] = "a";
  doc["policies"] = json::array(
      {json{{"model", "volcano"},
            {"objects", json::array({json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                                          {"kind", "Queue"},
                                          {"metadata", {{"name", "a"}, {"creationTimestamp", "2024-01-01T00:00:00Z"}}},
                                          {"spec", {{"wieght", 3}, {"capability", {{"nvidia.com/gpu", 8}}}}},
                                          {"status", {{"state", "Open"}, {"anything", 1}}}}})}}});
  const auto ps = problems_of(doc);
  CHECK(ps == std::vector<std::string>{"$.policies[0].objects[0].spec.wieght: unknown field of Queue "
                                       "(scheduling.volcano.sh/v1beta1) (quota-sim --lenient-objects makes this a "
                                       "warning)"});
  input_limits lenient;
  lenient.lenient_objects = true;
  quota::diagnostics d;
  const scenario sc = load_scenario(doc, d, lenient);
  CHECK(d.empty());
  REQUIRE(sc.warnings.size() == 1);
  CHECK(sc.warnings[0].path == "$.policies[0].objects[0].spec.wieght");
  // the upstream field is accepted
  doc["policies"][0]["objects"][0]["spec"].erase("wieght");
  doc["policies"][0]["objects"][0]["spec"]["weight"] = 3;
  CHECK(problems_of(doc).empty());
}

TEST_CASE("robustness: unknown fields are found in Lists, nested structures, reload bodies and YuniKorn configs") {
  const auto objects = json{
      {"kind", "List"},
      {"items",
       json::array({json{
           {"apiVersion", "kueue.x-k8s.io/v1beta1"},
           {"kind", "ClusterQueue"},
           {"metadata", {{"name", "cq"}, {"nmae", "x"}}},
           {"spec",
            {{"resourceGroups",
              json::array({json{
                  {"coveredResources", {"cpu"}},
                  {"flavors", json::array({json{{"name", "f"},
                                                {"resources", json::array({json{{"name", "cpu"},
                                                                                {"nominalQuota", 1},
                                                                                {"borowingLimit", 1}}})}}})}}})}}}}})}};
  const auto found = unknown_object_fields(json{{"model", "kueue"}, {"objects", objects}}, "$.policies[0]");
  REQUIRE(found.size() == 2);
  CHECK(found[0].path == "$.policies[0].objects.items[0].metadata.nmae");
  CHECK(found[1].path == "$.policies[0].objects.items[0].spec.resourceGroups[0].flavors[0].resources[0].borowingLimit");
  const auto yk = unknown_object_fields(
      json{{"model", "yunikorn_limits"},
           {"config",
            {{"partitions",
              json::array({json{
                  {"name", "default"},
                  {"queues",
                   json::array({json{
                       {"name", "root"},
                       {"queues", json::array({json{
                                      {"name", "a"},
                                      {"limits", json::array({json{{"limit", "x"}, {"maxapps", 2}}})}}})}}})}}})}}}},
      "$.events[0]");
  REQUIRE(yk.size() == 1);
  CHECK(yk[0].path == "$.events[0].config.partitions[0].queues[0].queues[0].limits[0].maxapps");
  // the models that read one kind accept objects without apiVersion and kind: checked as that kind
  const auto kai = unknown_object_fields(
      json{{"model", "kai_fair_share"},
           {"objects",
            json::array({json{{"metadata", {{"name", "a"}}},
                              {"spec", {{"resources", {{"gpu", {{"quota", 2}, {"overQuotaWieght", 1}}}}}}}}})}},
      "$.policies[1]");
  REQUIRE(kai.size() == 1);
  CHECK(kai[0].path == "$.policies[1].objects[0].spec.resources.gpu.overQuotaWieght");
  CHECK(kai[0].message == "unknown field of Queue (scheduling.run.ai)");
}

// ---- cost of the invariant check -------------------------------------------------------

TEST_CASE("robustness: --check-invariants costs about as much as the replay, not a pass over every job per instant") {
  // 30,000 short jobs one after another: 60,000 instants with one job running
  json doc = base();
  doc["jobs"] = json::array();
  for (int i = 0; i < 30'000; ++i)
    doc["jobs"].push_back(json{
        {"id", "j" + std::to_string(i)}, {"submit", 2 * i}, {"duration", 1}, {"request", {{"nvidia.com/gpu", 1}}}});
  auto timed = [&](bool check) {
    scenario sc = load_scenario(doc);
    auto models = build_models(sc);
    simulator sim(std::move(sc), std::move(models));
    run_options opt;
    opt.check_invariants = check;
    const auto t0 = std::chrono::steady_clock::now();
    const run_result r = sim.run(-1, {}, opt);
    CHECK(r.failures.empty());
    CHECK(r.report["totals"]["finished"] == 30'000);
    return seconds_since(t0);
  };
  const double plain = timed(false), checked = timed(true);
  CAPTURE(plain, checked);
  // visiting every job at every instant costs about 100 times the replay here
  CHECK(checked < 3 * plain + 0.5);
}
