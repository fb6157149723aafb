// SPDX-License-Identifier: Apache-2.0
// quota-sim import cluster (docs/cluster-import.md): a kubectl dump as a
// scenario. Each kind of the dump, each rule (effective request, phases,
// queue rules, durations) and each class of bad input.
#include <quota_catch.hpp>

#include <string>
#include <vector>

#include <quota/json.hpp>

#include "compare.hpp"
#include "import_cluster.hpp"
#include "models.hpp"
#include "simulator.hpp"

namespace {

using quota::json;
using namespace quota::sim;

json node(const std::string& name, json alloc = json{{"cpu", "16"}, {"memory", "64Gi"}, {"pods", "110"}}) {
  return json{
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", {{"zone", "a"}}}}},
      {"spec", json::object()},
      {"status", {{"allocatable", alloc}, {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json container(const json& requests) {
  return json{{"name", "c"}, {"resources", {{"requests", requests}}}};
}

json pod(const std::string& ns, const std::string& name, const std::string& phase, const std::string& node_name,
         const std::string& created = "2026-03-02T10:00:00Z", json requests = json{{"cpu", "1"}}) {
  json p{{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", name}, {"namespace", ns}, {"creationTimestamp", created}}},
         {"spec", {{"containers", json::array({container(requests)})}}},
         {"status", {{"phase", phase}}}};
  if (!node_name.empty()) p["spec"]["nodeName"] = node_name;
  return p;
}

// (an initializer list, not a json: a braced single json copies it under
// clang and wraps it in an array under GCC)
json list_of(json array) {
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(array)}};
}
json list(std::initializer_list<json> items) {
  json array = json::array();
  for (const auto& i : items) array.push_back(i);
  return list_of(std::move(array));
}

cluster_import_options opts(std::string duration = "1h") {
  cluster_import_options o;
  o.dump_file = "test.json";
  o.duration = std::move(duration);
  return o;
}

const json& job(const json& sc, const std::string& id) {
  for (const auto& j : sc.at("jobs"))
    if (j.at("id") == id) return j;
  FAIL("no job " << id);
  throw;
}

/// The problems of an import that must fail, joined "path: message" a line.
std::string problems(const json& dump, const cluster_import_options& o) {
  try {
    (void)import_cluster_doc(dump, o);
  } catch (const quota::validation_error& e) {
    std::string s;
    for (const auto& p : e.problems()) s += p.path + ": " + p.message + "\n";
    return s;
  }
  FAIL("the import was accepted");
  return {};
}

run_result replay(const json& doc) {
  scenario sc = load_scenario(doc);
  auto models = build_models(sc);
  simulator sim(std::move(sc), std::move(models));
  return sim.run(-1, {}, run_options{true});
}

json podgroup(const std::string& ns, const std::string& name, json spec) {
  return json{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", std::move(spec)}};
}

/// A pod of PodGroup `group`.
json member(const std::string& ns, const std::string& name, const std::string& group, const std::string& phase,
            const std::string& node_name, const std::string& created = "2026-03-02T10:00:00Z",
            json requests = json{{"cpu", "1"}}) {
  json p = pod(ns, name, phase, node_name, created, std::move(requests));
  p["metadata"]["annotations"] = {{volcano_group_annotation, group}};
  return p;
}

json claim_template(const std::string& ns, const std::string& name, json devices_spec) {
  return json{{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "ResourceClaimTemplate"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"metadata", {{"labels", {{"app", "dra"}}}}}, {"spec", std::move(devices_spec)}}}};
}

json one_gpu_spec() {
  return json{{"devices",
               {{"requests", json::array({{{"name", "gpu"},
                                           {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", 1}}}}})}}}};
}

const json* policy(const json& sc, const std::string& model) {
  for (const auto& e : sc.at("policies"))
    if (e.at("model") == model) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("import: a pod's request is the Kubernetes effective request") {
  json p = pod("ns", "p", "Pending", "");
  p["spec"]["containers"] =
      json::array({container({{"cpu", "2"}, {"memory", "1Gi"}}), container({{"cpu", "500m"}, {"nvidia.com/gpu", 1}})});
  SECTION("an init container larger than the containers' sum sets the request") {
    p["spec"]["initContainers"] = json::array({container({{"cpu", "4"}}), container({{"memory", "512Mi"}})});
    const json sc = import_cluster_doc(list({node("n"), p}), opts()).scenario;
    CHECK(job(sc, "ns/p")["request"] == json{{"cpu", "4"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}});
  }
  SECTION("sidecars add to the sum and to the init containers after them") {
    json sidecar = container({{"cpu", "1"}});
    sidecar["restartPolicy"] = "Always";
    p["spec"]["initContainers"] = json::array({sidecar, container({{"cpu", "3"}})});
    const json sc = import_cluster_doc(list({node("n"), p}), opts()).scenario;
    // containers 2.5 + sidecar 1 = 3.5 < init 3 + sidecar 1 = 4
    CHECK(job(sc, "ns/p")["request"]["cpu"] == "4");
  }
  SECTION("the pod overhead is added after the maximum") {
    p["spec"]["initContainers"] = json::array({container({{"cpu", "4"}})});
    p["spec"]["overhead"] = {{"cpu", "250m"}, {"memory", "120Mi"}};
    const json sc = import_cluster_doc(list({node("n"), p}), opts()).scenario;
    CHECK(job(sc, "ns/p")["request"]["cpu"] == "4250m");
    CHECK(job(sc, "ns/p")["request"]["memory"] == "1144Mi");
  }
}

TEST_CASE("import: nodes become the cluster; cordoned and not-ready nodes are left out with their pods") {
  json cordoned = node("c");
  cordoned["spec"]["unschedulable"] = true;
  json down = node("d");
  down["status"]["conditions"][0]["status"] = "False";
  const auto r = import_cluster_doc(list({node("n"), cordoned, down, pod("ns", "on-c", "Running", "c")}), opts());
  const json& nodes = r.scenario["cluster"]["nodes"];
  REQUIRE(nodes.size() == 1);
  CHECK(nodes[0]["name"] == "n");
  CHECK(nodes[0]["allocatable"] == json{{"cpu", "16"}, {"memory", "64Gi"}});  // no `pods`
  CHECK(nodes[0]["labels"] == json{{"zone", "a"}});
  CHECK(r.summary.excluded_nodes == std::vector<std::string>{"c (cordoned)", "d (not ready)"});
  CHECK(r.summary.skipped_pods.at("on an excluded node") == 1);
  CHECK(r.scenario["jobs"].empty());
}

TEST_CASE("import: bound pods run at 0 on their node, pending pods arrive at their creation time") {
  const json dump = list({node("n"), pod("ns", "run", "Running", "n", "2026-03-02T08:00:00Z"),
                          pod("ns", "bound", "Pending", "n", "2026-03-02T09:59:00Z"),
                          pod("ns", "late", "Pending", "", "2026-03-02T10:05:00Z"),
                          pod("ns", "first", "Pending", "", "2026-03-02T10:00:00Z"),
                          pod("ns", "done", "Succeeded", "n"), pod("ns", "broke", "Failed", "n")});
  SECTION("time 0 is the first waiting pod's creation") {
    const auto r = import_cluster_doc(dump, opts());
    const json& jobs = r.scenario["jobs"];
    REQUIRE(jobs.size() == 4);
    CHECK(jobs[0]["id"] == "ns/run");
    CHECK(jobs[0]["running"] == true);
    CHECK(jobs[0]["node"] == "n");
    CHECK(jobs[1]["id"] == "ns/bound");
    CHECK(jobs[1]["running"] == true);
    CHECK(jobs[2]["id"] == "ns/first");  // arrivals in time order
    CHECK(jobs[2]["submit"] == 0);
    CHECK(jobs[3]["submit"] == 300'000);
    CHECK_FALSE(jobs[3].contains("running"));
    CHECK(r.summary.running == 2);
    CHECK(r.summary.pending == 2);
    CHECK(r.summary.skipped_pods.at("Succeeded") == 1);
    CHECK(r.summary.skipped_pods.at("Failed") == 1);
  }
  SECTION("--now sets time 0; pods created before it arrive at 0") {
    auto o = opts();
    o.now = "2026-03-02T10:02:00Z";
    const json sc = import_cluster_doc(dump, o).scenario;
    CHECK(job(sc, "ns/first")["submit"] == 0);
    CHECK(job(sc, "ns/late")["submit"] == 180'000);
  }
  SECTION("the scenario replays: the running pods are admitted at 0") {
    const auto res = replay(import_cluster_doc(dump, opts()).scenario);
    CHECK(res.report["totals"]["jobs"] == 4);
    CHECK(res.report["totals"]["admitted"] == 4);
  }
}

TEST_CASE("import: a pod's queue follows the chosen scheduler's rule") {
  json pg{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", "g"}, {"namespace", "ns"}}},
          {"spec", {{"queue", "from-group"}, {"minMember", 1}}}};
  json in_group = pod("ns", "in-group", "Pending", "");
  in_group["metadata"]["annotations"] = {{volcano_group_annotation, "g"}};
  json annotated = pod("ns", "annotated", "Pending", "");
  annotated["metadata"]["annotations"] = {{volcano_queue_annotation, "from-annotation"}};
  annotated["metadata"]["labels"] = {{kueue_queue_label, "lq"}, {kai_queue_label, "kai-q"}};
  const json plain = pod("ns", "plain", "Pending", "");
  const json dump = list({node("n"), pg, in_group, annotated, plain});
  SECTION("volcano: the PodGroup's queue, else the annotation, else default") {
    auto o = opts();
    o.queue_by = "volcano";
    const json sc = import_cluster_doc(dump, o).scenario;
    CHECK(job(sc, "ns/in-group")["queue"] == "from-group");
    CHECK(job(sc, "ns/annotated")["queue"] == "from-annotation");
    CHECK(job(sc, "ns/plain")["queue"] == "default");
  }
  SECTION("kueue and kai: the queue label; pods without one are skipped and counted") {
    for (const char* rule : {"kueue", "kai"}) {
      auto o = opts();
      o.queue_by = rule;
      const auto r = import_cluster_doc(dump, o);
      REQUIRE(r.scenario["jobs"].size() == 1);
      CHECK(r.scenario["jobs"][0]["queue"] == (std::string(rule) == "kueue" ? "lq" : "kai-q"));
      CHECK(r.summary.skipped_pods.at(std::string("no ") + rule + " queue") == 2);
    }
  }
  SECTION("namespace (the default without queue objects), and the default with Volcano Queues") {
    const json sc = import_cluster_doc(list({node("n"), plain}), opts()).scenario;
    CHECK(job(sc, "ns/plain")["queue"] == "ns");
    json q{{"apiVersion", "scheduling.volcano.sh/v1beta1"}, {"kind", "Queue"}, {"metadata", {{"name", "default"}}}};
    CHECK(import_cluster_doc(list({node("n"), q, plain}), opts()).summary.queue_by == "volcano");
  }
}

TEST_CASE("import: --from-objects puts each quota kind into the model that reads it") {
  const json vq{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "Queue"},
                {"metadata", {{"name", "ns"}}},
                {"spec", {{"weight", 1}}}};
  const json kq{{"apiVersion", "scheduling.run.ai/v2"},
                {"kind", "Queue"},
                {"metadata", {{"name", "ns"}}},
                {"spec", {{"resources", {{"gpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}}}}};
  const json eq{{"apiVersion", "nos.nebuly.com/v1alpha1"},
                {"kind", "ElasticQuota"},
                {"metadata", {{"name", "q"}, {"namespace", "ns"}}},
                {"spec", {{"min", {{"cpu", "4"}}}}}};
  const json ceq{{"apiVersion", "nos.nebuly.com/v1alpha1"},
                 {"kind", "CompositeElasticQuota"},
                 {"metadata", {{"name", "c"}, {"namespace", "other"}}},
                 {"spec", {{"min", {{"cpu", "4"}}}, {"namespaces", json::array({"other"})}}}};
  const json rf{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "f"}}}};
  const json cq{
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "ClusterQueue"},
      {"metadata", {{"name", "ns"}}},
      {"spec",
       {{"cohort", "all"},
        {"namespaceSelector", json::object()},
        {"resourceGroups",
         json::array({{{"coveredResources", {"cpu"}},
                       {"flavors",
                        json::array({{{"name", "f"},
                                      {"resources", json::array({{{"name", "cpu"}, {"nominalQuota", "8"}}})}}})}}})}}}};
  const json co{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "Cohort"}, {"metadata", {{"name", "all"}}}};
  const json lq{{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                {"kind", "LocalQueue"},
                {"metadata", {{"name", "ns"}, {"namespace", "ns"}}},
                {"spec", {{"clusterQueue", "ns"}}}};
  const json nsobj{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns"}}}};
  const json wl{
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "Workload"},
      {"metadata",
       {{"name", "w"}, {"namespace", "ns"}, {"ownerReferences", json::array({{{"kind", "Pod"}, {"name", "run"}}})}}},
      {"spec", {{"queueName", "ns"}}},
      {"status", {{"conditions", json::array({{{"type", "Evicted"}, {"status", "True"}}})}}}};
  const json dc{
      {"apiVersion", "resource.k8s.io/v1"}, {"kind", "DeviceClass"}, {"metadata", {{"name", "gpu.nvidia.com"}}}};
  const json rc{
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "shared"}, {"namespace", "ns"}}},
      {"spec",
       {{"devices",
         {{"requests", json::array({{{"name", "g"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}}}}})}}}}}};
  json claimer = pod("ns", "claimer", "Pending", "");
  claimer["spec"]["resourceClaims"] = json::array({{{"name", "g"}, {"resourceClaimName", "shared"}}});
  const json cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}, {"namespace", "ns"}}}};
  const json dump = list(
      {node("n"), vq, kq, eq, ceq, rf, cq, co, lq, nsobj, wl, dc, rc, cm, pod("ns", "run", "Running", "n"), claimer});
  auto o = opts();
  o.from_objects = true;
  const auto r = import_cluster_doc(dump, o);
  const json& pol = r.scenario["policies"];
  REQUIRE(pol.size() == 5);
  CHECK(pol[0]["model"] == "volcano");
  CHECK(pol[0]["objects"] == json::array({vq}));
  CHECK(pol[1]["model"] == "kueue");
  CHECK(pol[1]["objects"] == json::array({rf, co, cq, lq, nsobj}));  // not the Workload: pods are the jobs
  CHECK(pol[2]["model"] == "kai_fair_share");
  CHECK(pol[2]["objects"] == json::array({kq}));
  CHECK(pol[3]["model"] == "elastic_quota");
  CHECK(pol[3]["objects"] == json::array({eq, ceq}));
  CHECK(pol[4]["model"] == "kai_claims");
  CHECK(pol[4]["objects"] == json::array({dc, rc}));
  CHECK(job(r.scenario, "ns/claimer")["claims"] == json::array({"shared"}));
  CHECK(job(r.scenario, "ns/run")["evicted"] == true);  // its Workload is Evicted
  CHECK(r.summary.unknown_kinds.at("ConfigMap") == 1);
  CHECK(r.summary.kinds.at("Workload") == 1);
  SECTION("without --from-objects the objects configure nothing and claims are not named") {
    const auto plain = import_cluster_doc(dump, opts());
    CHECK(plain.scenario["policies"].empty());
    CHECK_FALSE(job(plain.scenario, "ns/claimer").contains("claims"));
  }
  SECTION("Volcano Queues with a deserved share or a parent go to the capacity plugin") {
    json deserved = vq;
    deserved["spec"]["deserved"] = {{"cpu", "4"}};
    const json p = import_cluster_doc(list({node("n"), deserved, pod("ns", "x", "Pending", "")}), o).scenario;
    CHECK(p["policies"][0]["model"] == "volcano_capacity");
    CHECK(p["policies"][0]["options"] == json{{"hierarchy", false}});
  }
}

TEST_CASE("import: --policy derives quotas for the pods' queues, as generate does") {
  auto o = opts();
  o.policies = {"kueue", "elastic_quota"};
  const json dump = list({node("n"), pod("a", "x", "Pending", ""), pod("b", "y", "Running", "n")});
  const json sc = import_cluster_doc(dump, o).scenario;
  REQUIRE(sc["policies"].size() == 2);
  quota::resource_registry reg;
  quota::resource_vector cap;
  cap.set(quota::resources::cpu, 16'000);
  cap.set(quota::resources::memory, 64LL << 30);
  register_models();
  CHECK(sc["policies"][0] == model_kinds().at("kueue").synthesize({"a", "b"}, cap, reg));
  CHECK(replay(sc).report["totals"]["admitted"] == 2);
  SECTION("a model both in the dump and in --policy is an error") {
    json cq = json{{"apiVersion", "kueue.x-k8s.io/v1beta1"}, {"kind", "ClusterQueue"}, {"metadata", {{"name", "a"}}}};
    o.from_objects = true;
    CHECK_THROWS_WITH(import_cluster_doc(list({node("n"), cq}), o),
                      Catch::Contains("already configured by the dump's objects"));
  }
  SECTION("an unknown model is an error naming it") {
    o.policies = {"kueu"};
    CHECK_THROWS_WITH(import_cluster_doc(dump, o), Catch::Contains("'kueu'"));
  }
}

TEST_CASE("import: --duration is fixed, uniform, exponential or end, the same for a seed") {
  json items = json::array({node("n")});
  for (int i = 0; i < 50; ++i) items.push_back(pod("ns", "p" + std::to_string(i), "Pending", ""));
  const json dump = list_of(items);
  auto durations = [&](const std::string& d, std::uint64_t seed) {
    auto o = opts(d);
    o.seed = seed;
    std::vector<json> out;
    const json sc = import_cluster_doc(dump, o).scenario;
    for (const auto& j : sc["jobs"]) out.push_back(j.value("duration", json()));
    return out;
  };
  for (const auto& d : durations("90m", 1)) CHECK(d == 5'400'000);
  const auto u = durations("uniform:30m-1h", 7);
  CHECK(u == durations("uniform:30m-1h", 7));
  CHECK(u != durations("uniform:30m-1h", 8));
  for (const auto& d : u) CHECK((d.get<std::int64_t>() >= 1'800'000 && d.get<std::int64_t>() <= 3'600'000));
  const auto e = durations("exponential:1h", 3);
  std::int64_t total = 0;
  for (const auto& d : e) total += d.get<std::int64_t>();
  CHECK(total > 25 * 3'600'000);  // a mean of 1h over 50 draws
  CHECK(total < 75 * 3'600'000);
  for (const auto& d : durations("end", 1)) CHECK(d.is_null());  // runs to the end
  for (const char* bad : {"soon", "uniform:2h-1h", "uniform:1h", "exponential:0", "-5m"})
    CHECK_THROWS_WITH(import_cluster_doc(dump, opts(bad)), Catch::Contains("--duration"));
}

TEST_CASE("import: malformed objects are errors naming Kind/namespace/name and the field") {
  json bad_qty = pod("ns", "p", "Pending", "", "2026-03-02T10:00:00Z", json{{"cpu", "2x"}});
  json bad_node = node("n");
  bad_node["status"]["allocatable"]["memory"] = "lots";
  json no_time = pod("ns", "t", "Pending", "");
  no_time["metadata"]["creationTimestamp"] = "yesterday";
  json phase = pod("ns", "q", "Sleeping", "");
  const std::string p = problems(list({bad_node, bad_qty, no_time, phase}), opts());
  CHECK_THAT(p, Catch::Contains("Node/n.status.allocatable.memory: "));
  CHECK_THAT(p, Catch::Contains("Pod/ns/p.spec.containers[0].resources.requests.cpu: "));
  CHECK_THAT(p, Catch::Contains("Pod/ns/t.metadata.creationTimestamp: "));
  CHECK_THAT(p, Catch::Contains("Pod/ns/q.status.phase: unknown phase 'Sleeping'"));
  json no_containers = pod("ns", "c", "Pending", "");
  no_containers["spec"].erase("containers");
  CHECK_THAT(problems(list({node("m"), no_containers}), opts()), Catch::Contains("Pod/ns/c.spec.containers: missing"));
  json no_alloc = node("m");
  no_alloc["status"].erase("allocatable");
  CHECK_THAT(problems(list({no_alloc}), opts()), Catch::Contains("Node/m.status.allocatable"));
}

TEST_CASE("import: pods bound to nodes not in the dump, missing PodGroups and duplicates are errors") {
  CHECK_THAT(problems(list({node("n"), pod("ns", "p", "Running", "ghost")}), opts()),
             Catch::Contains("Pod/ns/p.spec.nodeName: names node 'ghost', which is not in the dump"));
  CHECK_THAT(problems(list({node("n"), node("n")}), opts()),
             Catch::Contains("items[1]: Node/n: appears twice in the dump"));
  CHECK_THAT(problems(list({node("n"), pod("ns", "p", "Pending", ""), pod("ns", "p", "Pending", "")}), opts()),
             Catch::Contains("Pod/ns/p: appears twice"));
  // the same name in two namespaces is two pods
  CHECK(import_cluster_doc(list({node("n"), pod("a", "p", "Pending", ""), pod("b", "p", "Pending", "")}), opts())
            .summary.pending == 2);
  json grouped = pod("ns", "g", "Pending", "");
  grouped["metadata"]["annotations"] = {{volcano_group_annotation, "missing"}};
  auto o = opts();
  o.queue_by = "volcano";
  CHECK_THAT(problems(list({node("n"), grouped}), o), Catch::Contains("names PodGroup 'missing'"));
  CHECK_THAT(problems(list({json{{"metadata", {{"name", "x"}}}}}), opts()), Catch::Contains("items[0].kind: missing"));
  CHECK_THAT(problems(json::array({42}), opts()), Catch::Contains("[0]: expected an object"));
  o.queue_by = "yunikorn";
  CHECK_THROWS_WITH(import_cluster_doc(list({node("n")}), o), Catch::Contains("--queue-by"));
  o = opts();
  o.now = "noon";
  CHECK_THROWS_WITH(import_cluster_doc(list({node("n")}), o), Catch::Contains("--now"));
}

TEST_CASE("import: the example dump becomes a valid scenario that replays under its own and derived policies") {
  cluster_import_options o;
  o.dump_file = std::string(QUOTA_SOURCE_DIR) + "/examples/cluster-dump/dump.json";
  o.from_objects = true;
  o.duration = "uniform:1h-4h";
  o.seed = 7;
  const auto r = import_cluster(o);  // checked as quota-sim validate checks
  CHECK(r.summary.nodes == 48);
  CHECK(r.summary.excluded_nodes == std::vector<std::string>{"gpu-39 (cordoned)", "cpu-09 (not ready)"});
  CHECK(r.summary.skipped_pods.at("on an excluded node") == 1);
  CHECK(r.summary.skipped_pods.at("Succeeded") == 5);
  CHECK(r.summary.skipped_pods.at("Failed") == 2);
  CHECK(r.summary.queue_by == "volcano");
  CHECK(r.summary.models_from_objects == std::vector<std::string>{"volcano", "kueue", "kai_claims"});
  const auto res = replay(r.scenario);
  // one job a pod, but a gang's waiting pods are one job
  CHECK(r.summary.gangs == 1);
  CHECK(r.summary.gang_pods == 4);
  CHECK(r.summary.template_claims == 1);
  CHECK(res.report["totals"]["jobs"] == r.summary.running + r.summary.pending - r.summary.gang_pods + r.summary.gangs);
  const auto runs = compare_policies(load_scenario(r.scenario), {"scenario", "kueue"});
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].totals["admitted"] == res.report["totals"]["admitted"]);
}

TEST_CASE("import: a YuniKorn queues.yaml becomes a yunikorn_limits entry for the pods' queues") {
  const json config = json::parse(R"({"partitions": [{"name": "default", "queues": [{"name": "root", "queues": [
      {"name": "team-a", "limits": [{"limit": "one at a time", "users": ["*"], "maxapplications": 1}]}]}]}]})");
  json sue = pod("team-a", "y", "Pending", "");
  sue["metadata"]["annotations"] = {{yunikorn_user_annotation, R"({"user": "sue", "groups": ["ml"]})"}};
  const json dump = list({node("n"), pod("team-a", "x", "Pending", ""), sue});
  const json sc = import_cluster_doc(dump, opts(), config).scenario;
  REQUIRE(sc["policies"].size() == 1);
  CHECK(sc["policies"][0] == json{{"model", "yunikorn_limits"}, {"config", config}});
  // the user of the annotation, else YuniKorn's anonymous user
  CHECK(job(sc, "team-a/x")["user"] == "nobody");
  CHECK(job(sc, "team-a/x")["groups"] == json::array({"nogroup"}));
  CHECK(job(sc, "team-a/y")["user"] == "sue");
  CHECK(job(sc, "team-a/y")["groups"] == json::array({"ml"}));
  const auto res = replay(sc);
  // one application per user at a time: both run at once
  CHECK(res.report["totals"]["admitted"] == 2);
  CHECK(res.report["totals"]["wait_ms"]["p99"] == 0);
  // two anonymous pods: the second waits for the first to end (1h)
  const json two = list({node("n"), pod("team-a", "x", "Pending", ""), pod("team-a", "z", "Pending", "")});
  CHECK(replay(import_cluster_doc(two, opts(), config).scenario).report["totals"]["wait_ms"]["p99"] == 3'600'000);
  sue["metadata"]["annotations"][yunikorn_user_annotation] = "sue";
  CHECK_THAT(problems(list({node("n"), sue}), opts()),
             Catch::Contains("Pod/team-a/y.metadata.annotations.yunikorn.apache.org/user.info: expected"));
}

TEST_CASE("import: a dump's text is checked as a scenario file's: syntax, duplicate keys, bounds") {
  using quota::sim::detail::parse_dump_text;
  CHECK(parse_dump_text(R"({"kind": "List", "items": [{"a": [1, 2.5, null, true, "x"]}]})", "d.json") ==
        json::parse(R"({"kind": "List", "items": [{"a": [1, 2.5, null, true, "x"]}]})"));
  CHECK_THROWS_WITH(parse_dump_text(R"({"items": [{"kind": "Pod",]})", "d.json"),
                    Catch::Contains("d.json: invalid JSON at byte") && Catch::Contains("($.items[0]"));
  CHECK_THROWS_WITH(parse_dump_text(R"({"items": [{"kind": "Pod", "kind": "Node"}]})", "d.json"),
                    Catch::Contains("d.json: $.items[0].kind") && Catch::Contains("duplicate key"));
  CHECK_THROWS_WITH(parse_dump_text(R"({"items": [1e400]})", "d.json"),
                    Catch::Contains("d.json: $.items[0]: ") && Catch::Contains("'1e400'"));
  quota::sim::input_limits lim;
  lim.max_values = 3;
  CHECK_THROWS_WITH(parse_dump_text(R"([1, 2, 3])", "d.json", lim), Catch::Contains("value limit"));
  lim = {};
  lim.max_depth = 2;
  CHECK_THROWS_WITH(parse_dump_text(R"([[[1]]])", "d.json", lim), Catch::Contains("$[0][0]: nested deeper"));
}

TEST_CASE("import: the waiting pods of a Volcano PodGroup become one gang job of the group's queue") {
  auto o = opts();
  o.queue_by = "volcano";
  const json gpu{{"cpu", "4"}, {"nvidia.com/gpu", "1"}};
  const json n = node("n", json{{"cpu", "64"}, {"nvidia.com/gpu", "8"}});
  SECTION("pods: the waiting members; min_pods: minMember; queue and priority class from the PodGroup") {
    json m1 = member("ns", "w-1", "train", "Pending", "", "2026-03-02T10:05:00Z", gpu);
    json m0 = member("ns", "w-0", "train", "Pending", "", "2026-03-02T10:02:00Z", gpu);
    m0["spec"]["priority"] = 10;
    m1["spec"]["priority"] = 20;
    const json pg = podgroup("ns", "train", {{"minMember", 3}, {"queue", "research"}, {"priorityClassName", "high"}});
    const auto r = import_cluster_doc(
        list({n, pg, m1, m0, member("ns", "w-2", "train", "Pending", "", "2026-03-02T10:03:00Z", gpu),
              pod("ns", "single", "Pending", "", "2026-03-02T10:00:00Z")}),
        o);
    const json& jobs = r.scenario["jobs"];
    REQUIRE(jobs.size() == 2);  // the gang and the single pod
    const json& g = job(r.scenario, "ns/train");
    CHECK(g["pods"] == 3);
    CHECK(g["min_pods"] == 3);
    CHECK(g["queue"] == "research");
    CHECK(g["priority_class"] == "high");
    CHECK(g["priority"] == 20);                                          // the highest of its pods
    CHECK(g["submit"] == 120'000);                                       // its first pod's creation
    CHECK(g["request"] == json{{"cpu", "4"}, {"nvidia.com/gpu", "1"}});  // one pod's request
    CHECK(r.summary.gangs == 1);
    CHECK(r.summary.gang_pods == 3);
    CHECK(r.summary.pending == 4);  // pods, as read
    CHECK(r.summary.notes.empty());
    // the gang replays as one job of three pods
    const auto res = replay(r.scenario);
    CHECK(res.report["totals"]["jobs"] == 2);
    CHECK(res.report["totals"]["admitted"] == 2);
  }
  SECTION("running members stay one running job each on their node; min_pods is what minMember still needs") {
    json m = node("m", json{{"cpu", "64"}, {"nvidia.com/gpu", "8"}});
    const json pg = podgroup("ns", "elastic", {{"minMember", 5}, {"queue", "research"}});
    const auto r =
        import_cluster_doc(list({n, m, pg, member("ns", "e-0", "elastic", "Running", "n", "2026-03-02T09:00:00Z", gpu),
                                 member("ns", "e-1", "elastic", "Running", "m", "2026-03-02T09:00:00Z", gpu),
                                 member("ns", "e-2", "elastic", "Succeeded", "m", "2026-03-02T09:00:00Z", gpu),
                                 member("ns", "e-3", "elastic", "Failed", "m", "2026-03-02T09:00:00Z", gpu),
                                 member("ns", "e-4", "elastic", "Pending", "", "2026-03-02T10:00:00Z", gpu),
                                 member("ns", "e-5", "elastic", "Pending", "", "2026-03-02T10:00:00Z", gpu),
                                 member("ns", "e-6", "elastic", "Pending", "", "2026-03-02T10:00:00Z", gpu)}),
                           o);
    CHECK(job(r.scenario, "ns/e-0")["node"] == "n");
    CHECK(job(r.scenario, "ns/e-0")["queue"] == "research");
    CHECK(job(r.scenario, "ns/e-1")["node"] == "m");
    const json& g = job(r.scenario, "ns/elastic");
    CHECK(g["pods"] == 3);
    CHECK(g["min_pods"] == 2);  // 5 - 2 running - 1 succeeded (a failed pod does not count)
    CHECK(r.scenario["jobs"].size() == 3);
  }
  SECTION("one waiting pod is its own job, with the group's queue and class") {
    const auto r = import_cluster_doc(
        list({n,
              podgroup("ns", "podgroup-1f2e", {{"minMember", 1}, {"queue", "research"}, {"priorityClassName", "high"}}),
              member("ns", "solo", "podgroup-1f2e", "Pending", "")}),
        o);
    CHECK(r.scenario["jobs"].size() == 1);
    CHECK(job(r.scenario, "ns/solo")["queue"] == "research");
    CHECK(job(r.scenario, "ns/solo")["priority_class"] == "high");
    CHECK_FALSE(job(r.scenario, "ns/solo").contains("pods"));
    CHECK(r.summary.gangs == 0);
  }
  SECTION("a group whose running and succeeded pods meet minMember: its waiting pods need one") {
    const json pg = podgroup("ns", "met", {{"minMember", 1}});
    const auto r =
        import_cluster_doc(list({n, pg, member("ns", "a", "met", "Running", "n"),
                                 member("ns", "b", "met", "Pending", ""), member("ns", "c", "met", "Pending", "")}),
                           o);
    CHECK(job(r.scenario, "ns/met")["min_pods"] == 1);
    CHECK(job(r.scenario, "ns/met")["queue"] == "default");  // spec.queue empty: Volcano's default
  }
  SECTION("the gang is a property of the pods: gathered under every queue rule") {
    o.queue_by = "namespace";
    const auto r =
        import_cluster_doc(list({n, podgroup("ns", "g", {{"minMember", 2}, {"queue", "research"}}),
                                 member("ns", "a", "g", "Pending", ""), member("ns", "b", "g", "Pending", "")}),
                           o);
    CHECK(job(r.scenario, "ns/g")["queue"] == "ns");
    CHECK(job(r.scenario, "ns/g")["pods"] == 2);
  }
  SECTION("members that differ in request and must all run: one pod set per request") {
    const auto r = import_cluster_doc(
        list({n, podgroup("ns", "mpi", {{"minMember", 3}}),
              member("ns", "launcher", "mpi", "Pending", "", "2026-03-02T10:00:00Z", json{{"cpu", "8"}}),
              member("ns", "worker-0", "mpi", "Pending", "", "2026-03-02T10:00:00Z", gpu),
              member("ns", "worker-1", "mpi", "Pending", "", "2026-03-02T10:00:00Z", gpu)}),
        o);
    const json& mpi = job(r.scenario, "ns/mpi");
    CHECK_FALSE(mpi.contains("request"));
    CHECK(mpi["pod_sets"] ==
          json::array({json{{"name", "pods-0"}, {"count", 1}, {"request", {{"cpu", "8"}}}},
                       json{{"name", "pods-1"}, {"count", 2}, {"request", {{"cpu", "4"}, {"nvidia.com/gpu", "1"}}}}}));
    CHECK(r.summary.notes.empty());
    CHECK_NOTHROW(quota::sim::load_scenario(r.scenario));
  }
  SECTION("members that differ in request, of which fewer must run: the gang asks the largest of each, and says so") {
    const auto r = import_cluster_doc(
        list({n, podgroup("ns", "mpi", {{"minMember", 2}}),
              member("ns", "launcher", "mpi", "Pending", "", "2026-03-02T10:00:00Z", json{{"cpu", "8"}}),
              member("ns", "worker-0", "mpi", "Pending", "", "2026-03-02T10:00:00Z", gpu),
              member("ns", "worker-1", "mpi", "Pending", "", "2026-03-02T10:00:00Z", gpu)}),
        o);
    CHECK(job(r.scenario, "ns/mpi")["request"] == json{{"cpu", "8"}, {"nvidia.com/gpu", "1"}});
    CHECK(job(r.scenario, "ns/mpi")["min_pods"] == 2);
    CHECK(r.summary.notes.size() == 1);
    CHECK_THAT(r.summary.notes.begin()->first, Catch::Contains("differ in request"));
  }
  SECTION("members that differ in what a job holds once (node selector): imported pod by pod, and said") {
    json a = member("ns", "a", "g", "Pending", "");
    a["spec"]["nodeSelector"] = {{"zone", "a"}};
    const auto r = import_cluster_doc(
        list({n, podgroup("ns", "g", {{"minMember", 2}}), a, member("ns", "b", "g", "Pending", "")}), o);
    CHECK(r.scenario["jobs"].size() == 2);
    CHECK_FALSE(job(r.scenario, "ns/a").contains("pods"));
    CHECK(r.summary.gangs == 0);
    CHECK(r.summary.notes.at("PodGroup(s) whose waiting pods differ in node_selector: imported pod by pod") == 1);
  }
  SECTION("minResources other than min_pods x the request is reported, not carried") {
    const json pg = podgroup("ns", "g",
                             {{"minMember", 2},
                              {"minResources",
                               {{"cpu", "8"},
                                {"requests.cpu", "8"},
                                {"requests.nvidia.com/gpu", "2"},
                                {"limits.nvidia.com/gpu", "2"},
                                {"pods", "2"},
                                {"count/pods", "2"}}}});
    auto r = import_cluster_doc(list({n, pg, member("ns", "a", "g", "Pending", "", "2026-03-02T10:00:00Z", gpu),
                                      member("ns", "b", "g", "Pending", "", "2026-03-02T10:00:00Z", gpu)}),
                                o);
    CHECK(r.summary.notes.empty());  // 2 x (4 cpu, 1 GPU): the same (pods, count/ and limits. are not requests)
    json pg3 = pg;
    pg3["spec"]["minResources"]["cpu"] = "9";
    r = import_cluster_doc(list({n, pg3, member("ns", "a", "g", "Pending", "", "2026-03-02T10:00:00Z", gpu),
                                 member("ns", "b", "g", "Pending", "", "2026-03-02T10:00:00Z", gpu)}),
                           o);
    CHECK(r.summary.notes.size() == 1);
    CHECK_THAT(r.summary.notes.begin()->first, Catch::Contains("minResources"));
  }
}

TEST_CASE("import: bad PodGroups are errors naming PodGroup/namespace/name and the field") {
  auto o = opts();
  for (const char* rule : {"volcano", "namespace"}) {
    o.queue_by = rule;
    CHECK_THAT(problems(list({node("n"), member("ns", "g", "missing", "Pending", "")}), o),
               Catch::Contains("Pod/ns/g.metadata.annotations.scheduling.k8s.io/group-name: names PodGroup "
                               "'missing', which is not in the dump"));
  }
  o.queue_by = "volcano";
  const std::string more =
      problems(list({node("n"), podgroup("ns", "g", {{"minMember", 4}}), member("ns", "a", "g", "Running", "n"),
                     member("ns", "b", "g", "Pending", ""), member("ns", "c", "g", "Failed", "n")}),
               o);
  CHECK_THAT(more, Catch::Contains("PodGroup/ns/g.spec.minMember: 4 is more than the group's 2 pods in the dump"));
  for (const json& bad : {json("4"), json(-1), json(2.5), json(4'294'967'296)}) {
    CHECK_THAT(
        problems(list({node("n"), podgroup("ns", "g", {{"minMember", bad}}), member("ns", "a", "g", "Pending", "")}),
                 o),
        Catch::Contains("PodGroup/ns/g.spec.minMember: expected an integer from 0 to 2147483647, got " + bad.dump()));
  }
  CHECK_THAT(problems(list({node("n"), podgroup("ns", "g", {{"minResources", {{"cpu", "2x"}}}})}), o),
             Catch::Contains("PodGroup/ns/g.spec.minResources.cpu: "));
  CHECK_THAT(problems(list({node("n"), podgroup("ns", "g", {{"minResources", "lots"}})}), o),
             Catch::Contains("PodGroup/ns/g.spec.minResources: expected an object"));
  CHECK_THAT(problems(list({node("n"), podgroup("ns", "g", {{"queue", 7}})}), o),
             Catch::Contains("PodGroup/ns/g.spec.queue: expected a string"));
  CHECK_THAT(problems(list({node("n"), podgroup("ns", "g", {{"priorityClassName", false}})}), o),
             Catch::Contains("PodGroup/ns/g.spec.priorityClassName: expected a string"));
  // the gang's id would be a pod's
  CHECK_THAT(problems(list({node("n"), podgroup("ns", "g", {{"minMember", 1}}), member("ns", "a", "g", "Pending", ""),
                            member("ns", "b", "g", "Pending", ""), pod("ns", "g", "Pending", "")}),
                      o),
             Catch::Contains("PodGroup/ns/g: its gang's job id 'ns/g' is the id of a pod of the dump"));
  // every problem at once
  const std::string all = problems(
      list({node("n"), podgroup("ns", "g", {{"minMember", "x"}}), member("ns", "a", "missing", "Pending", "")}), o);
  CHECK_THAT(all, Catch::Contains("PodGroup/ns/g.spec.minMember"));
  CHECK_THAT(all, Catch::Contains("names PodGroup 'missing'"));
}

TEST_CASE("import: a pod's ResourceClaimTemplate gives it a claim of its own") {
  auto o = opts();
  o.from_objects = true;
  const json dc{
      {"apiVersion", "resource.k8s.io/v1"}, {"kind", "DeviceClass"}, {"metadata", {{"name", "gpu.nvidia.com"}}}};
  const json n = node("n", json{{"cpu", "64"}, {"nvidia.com/gpu", "8"}});
  auto with_template = [](json p, const std::string& t) {
    p["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", t}}});
    return p;
  };
  SECTION("a waiting pod: a claim of the template's spec, owned by the pod") {
    const auto r = import_cluster_doc(list({n, dc, claim_template("ns", "one-gpu", one_gpu_spec()),
                                            with_template(pod("ns", "p", "Pending", ""), "one-gpu"),
                                            with_template(pod("ns", "q", "Pending", ""), "one-gpu")}),
                                      o);
    CHECK(job(r.scenario, "ns/p")["claims"] == json::array({"p-gpu"}));
    CHECK(job(r.scenario, "ns/q")["claims"] == json::array({"q-gpu"}));
    const json* claims = policy(r.scenario, "kai_claims");
    REQUIRE(claims != nullptr);
    const json& objs = (*claims)["objects"];
    REQUIRE(objs.size() == 3);  // the class, two claims
    const json& c = objs[1];
    CHECK(c["kind"] == "ResourceClaim");
    CHECK(c["metadata"]["name"] == "p-gpu");
    CHECK(c["metadata"]["namespace"] == "ns");
    CHECK(c["metadata"]["labels"]["app"] == "dra");  // the template's metadata
    CHECK(c["metadata"]["annotations"][pod_claim_name_annotation] == "gpu");
    CHECK(c["metadata"]["ownerReferences"][0]["name"] == "p");
    CHECK(c["spec"] == one_gpu_spec());
    CHECK(r.summary.template_claims == 2);
    // a valid scenario: each pod holds its own device
    const auto res = replay(r.scenario);
    CHECK(res.report["totals"]["admitted"] == 2);
  }
  SECTION("a pod whose claim the cluster made already: that claim, as the dump has it") {
    json made{{"apiVersion", "resource.k8s.io/v1"},
              {"kind", "ResourceClaim"},
              {"metadata",
               {{"name", "r-gpu-x7k2p"},
                {"namespace", "ns"},
                {"annotations", {{pod_claim_name_annotation, "gpu"}}},
                {"ownerReferences",
                 json::array({{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "r"}, {"controller", true}}})}}},
              {"spec", one_gpu_spec()}};
    json r_pod = with_template(pod("ns", "r", "Running", "n"), "one-gpu");
    r_pod["status"]["resourceClaimStatuses"] = json::array({{{"name", "gpu"}, {"resourceClaimName", "r-gpu-x7k2p"}}});
    const auto r = import_cluster_doc(list({n, dc, made, claim_template("ns", "one-gpu", one_gpu_spec()), r_pod}), o);
    CHECK(job(r.scenario, "ns/r")["claims"] == json::array({"r-gpu-x7k2p"}));
    CHECK(r.summary.template_claims == 0);
    CHECK((*policy(r.scenario, "kai_claims"))["objects"].size() == 2);
  }
  SECTION("PodGroup pods with claims of their own are imported pod by pod; a shared claim keeps the gang") {
    const json pg = podgroup("ns", "g", {{"minMember", 2}});
    json a = with_template(member("ns", "a", "g", "Pending", ""), "one-gpu");
    json b = with_template(member("ns", "b", "g", "Pending", ""), "one-gpu");
    auto r = import_cluster_doc(list({n, dc, claim_template("ns", "one-gpu", one_gpu_spec()), pg, a, b}), o);
    CHECK(job(r.scenario, "ns/a")["claims"] == json::array({"a-gpu"}));
    CHECK(job(r.scenario, "ns/b")["claims"] == json::array({"b-gpu"}));
    CHECK(r.summary.notes.at("PodGroup(s) whose waiting pods differ in claims: imported pod by pod") == 1);
    json shared{{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "shared"}, {"namespace", "ns"}}},
                {"spec", one_gpu_spec()}};
    for (json* x : {&a, &b})
      (*x)["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimName", "shared"}}});
    r = import_cluster_doc(list({n, dc, shared, pg, a, b}), o);
    CHECK(job(r.scenario, "ns/g")["pods"] == 2);
    CHECK(job(r.scenario, "ns/g")["claims"] == json::array({"shared"}));
  }
  SECTION("without --from-objects claims are not read") {
    o.from_objects = false;
    const auto r = import_cluster_doc(list({n, with_template(pod("ns", "p", "Pending", ""), "absent")}), o);
    CHECK_FALSE(job(r.scenario, "ns/p").contains("claims"));
  }
  SECTION("a template not in the dump, or malformed, is an error naming the pod or the template and the field") {
    CHECK_THAT(problems(list({n, dc, with_template(pod("ns", "p", "Pending", ""), "absent")}), o),
               Catch::Contains("Pod/ns/p.spec.resourceClaims[0].resourceClaimTemplateName: names "
                               "ResourceClaimTemplate 'absent', which is not in the dump"));
    // a template of another namespace is not the pod's
    CHECK_THAT(problems(list({n, dc, claim_template("other", "one-gpu", one_gpu_spec()),
                              with_template(pod("ns", "p", "Pending", ""), "one-gpu")}),
                        o),
               Catch::Contains("Pod/ns/p.spec.resourceClaims[0].resourceClaimTemplateName"));
    json no_spec = claim_template("ns", "t", one_gpu_spec());
    no_spec["spec"].erase("spec");
    CHECK_THAT(problems(list({n, dc, no_spec}), o), Catch::Contains("ResourceClaimTemplate/ns/t.spec.spec: missing"));
    json bad = one_gpu_spec();
    bad["devices"]["requests"][0]["exactly"].erase("deviceClassName");
    CHECK_THAT(problems(list({n, dc, claim_template("ns", "t", bad)}), o),
               Catch::Contains("ResourceClaimTemplate/ns/t.spec.spec.devices.requests[0].exactly.deviceClassName"));
    json bad_entry = pod("ns", "p", "Pending", "");
    bad_entry["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", 3}}});
    CHECK_THAT(problems(list({n, dc, bad_entry}), o),
               Catch::Contains("Pod/ns/p.spec.resourceClaims[0].resourceClaimTemplateName: expected a string"));
  }
}

namespace {

json workload(const std::string& ns, const std::string& name, json pod_sets, json owners = json::array()) {
  return json{
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "Workload"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"creationTimestamp", "2026-03-02T10:01:00Z"}, {"ownerReferences", owners}}},
      {"spec", {{"queueName", "lq"}, {"podSets", std::move(pod_sets)}}}};
}

json pod_set(const std::string& name, int count, json requests, json extra = json::object()) {
  json s{{"name", name},
         {"count", count},
         {"template", {{"spec", {{"containers", json::array({container(std::move(requests))})}}}}}};
  for (auto it = extra.begin(); it != extra.end(); ++it) s[it.key()] = it.value();
  return s;
}

json owner(const std::string& kind, const std::string& name) {
  return json{{"apiVersion", kind == "Pod" ? "v1" : "batch/v1"}, {"kind", kind}, {"name", name}, {"controller", true}};
}

}  // namespace

TEST_CASE("import: a Kueue Workload without pods is a waiting job of its pod sets; a pod group's pods are one gang") {
  auto o = opts();
  o.queue_by = "kueue";
  const json n = node("n", json{{"cpu", "64"}, {"nvidia.com/gpu", "8"}});
  const json gpu{{"cpu", "4"}, {"nvidia.com/gpu", "1"}};
  SECTION("a suspended Job's Workload: pods and min_pods from count and minCount, its queue, priority, selector") {
    json w = workload("ns", "job-train-3f2a", json::array({pod_set("main", 4, gpu, {{"minCount", 2}})}),
                      json::array({owner("Job", "train")}));
    w["spec"]["priority"] = 50;
    w["spec"]["priorityClassName"] = "batch";
    w["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}};
    const auto r = import_cluster_doc(list({n, w, pod("ns", "p", "Pending", "", "2026-03-02T10:00:00Z")}), o);
    // the pod has no queue label: skipped under Kueue's rule; the Workload is a job
    REQUIRE(r.scenario["jobs"].size() == 1);
    const json& j = job(r.scenario, "ns/job-train-3f2a");
    CHECK(j["queue"] == "lq");
    CHECK(j["pods"] == 4);
    CHECK(j["min_pods"] == 2);
    CHECK(j["priority"] == 50);
    CHECK(j["priority_class"] == "batch");
    CHECK(j["request"] == json{{"cpu", "4"}, {"nvidia.com/gpu", "1"}});
    CHECK(j["node_selector"] == json{{"zone", "a"}});
    CHECK(j["submit"] == 0);
    CHECK(r.summary.workload_jobs == 1);
  }
  SECTION(
      "several pod sets: one job with their pod sets, each its count, minCount and request; in selector: one "
      "job a pod set") {
    json w = workload("ns", "mpi",
                      json::array({pod_set("launcher", 1, json{{"cpu", "8"}}),
                                   pod_set("worker", 3, gpu, {{"minCount", 1}}), pod_set("idle", 0, gpu)}),
                      json::array({owner("MPIJob", "mpi")}));
    auto r = import_cluster_doc(list({n, w}), o);
    const json& mpi = job(r.scenario, "ns/mpi");
    CHECK_FALSE(mpi.contains("request"));
    CHECK_FALSE(mpi.contains("pods"));
    CHECK(mpi["pod_sets"] == json::array({json{{"name", "launcher"}, {"count", 1}, {"request", {{"cpu", "8"}}}},
                                          json{{"name", "worker"},
                                               {"count", 3},
                                               {"min_count", 1},
                                               {"request", {{"cpu", "4"}, {"nvidia.com/gpu", "1"}}}}}));
    CHECK(r.summary.notes.empty());
    // the scenario it writes loads: Kueue may admit the launcher and 1 to 3 workers
    CHECK_NOTHROW(quota::sim::load_scenario(r.scenario));
    w["spec"]["podSets"][1]["template"]["spec"]["nodeSelector"] = {{"zone", "a"}};
    r = import_cluster_doc(list({n, w}), o);
    CHECK(job(r.scenario, "ns/mpi/launcher")["request"] == json{{"cpu", "8"}});
    CHECK_FALSE(job(r.scenario, "ns/mpi/launcher").contains("pods"));
    CHECK(job(r.scenario, "ns/mpi/worker")["pods"] == 3);
    CHECK(r.summary.workload_jobs == 2);
  }
  SECTION("admitted, finished and inactive Workloads add no job; under Volcano's rule neither do pod-less ones") {
    json admitted = workload("ns", "a", json::array({pod_set("main", 1, gpu)}), json::array({owner("Job", "a")}));
    admitted["status"]["admission"] = {{"clusterQueue", "cq"}};
    json finished = workload("ns", "f", json::array({pod_set("main", 1, gpu)}), json::array({owner("Job", "f")}));
    finished["status"]["conditions"] = json::array({{{"type", "Finished"}, {"status", "True"}}});
    json inactive = workload("ns", "i", json::array({pod_set("main", 1, gpu)}), json::array({owner("Job", "i")}));
    inactive["spec"]["active"] = false;
    auto r = import_cluster_doc(list({n, admitted, finished, inactive}), o);
    CHECK(r.scenario["jobs"].empty());
    CHECK(r.summary.skipped_workloads.at("Finished") == 1);
    CHECK(r.summary.skipped_workloads.at("not active") == 1);
    o.queue_by = "volcano";
    r = import_cluster_doc(list({n, workload("ns", "w", json::array({pod_set("main", 1, gpu)}))}), o);
    CHECK(r.scenario["jobs"].empty());
    CHECK(r.summary.skipped_workloads.at("without pods, under volcano's rule") == 1);
  }
  SECTION("a Kueue pod group (a Workload owned by its pods) waiting for quota: its waiting pods are one gang") {
    auto labelled = [&](const std::string& name, const std::string& phase, const std::string& on) {
      json p = pod("ns", name, phase, on, "2026-03-02T10:00:00Z", gpu);
      p["metadata"]["labels"] = {{kueue_queue_label, "lq"}};
      return p;
    };
    const json w = workload("ns", "group", json::array({pod_set("main", 3, gpu)}),
                            json::array({owner("Pod", "g-0"), owner("Pod", "g-1"), owner("Pod", "g-2")}));
    const auto r = import_cluster_doc(
        list({n, w, labelled("g-0", "Pending", ""), labelled("g-1", "Pending", ""), labelled("g-2", "Pending", "")}),
        o);
    REQUIRE(r.scenario["jobs"].size() == 1);
    CHECK(job(r.scenario, "ns/group")["pods"] == 3);
    CHECK(job(r.scenario, "ns/group")["min_pods"] == 3);
    CHECK(job(r.scenario, "ns/group")["queue"] == "lq");
    CHECK(r.summary.gangs == 1);
    // a pod set larger than the group's pods
    json big = w;
    big["spec"]["podSets"][0]["count"] = 5;
    CHECK_THAT(problems(list({n, big, labelled("g-0", "Pending", ""), labelled("g-1", "Pending", "")}), o),
               Catch::Contains("Workload/ns/group.spec.podSets: the pod sets need 5, more than the group's 2 pods"));
  }
  SECTION("bad Workloads are errors naming Workload/namespace/name and the field") {
    const json job_owner = json::array({owner("Job", "x")});
    CHECK_THAT(problems(list({n, workload("ns", "w", json::array(), job_owner)}), o),
               Catch::Contains("Workload/ns/w.spec.podSets: missing"));
    CHECK_THAT(
        problems(list({n, workload("ns", "w", json::array({pod_set("main", 1, gpu, {{"count", "2"}})}), job_owner)}),
                 o),
        Catch::Contains("Workload/ns/w.spec.podSets[0].count: expected an integer from 0 to 100000, got \"2\""));
    CHECK_THAT(
        problems(list({n, workload("ns", "w", json::array({pod_set("main", 2, gpu, {{"minCount", 3}})}), job_owner)}),
                 o),
        Catch::Contains("Workload/ns/w.spec.podSets[0].minCount: expected an integer from 1 to count (2), got 3"));
    json no_containers = pod_set("main", 1, gpu);
    no_containers["template"]["spec"].erase("containers");
    CHECK_THAT(problems(list({n, workload("ns", "w", json::array({no_containers}), job_owner)}), o),
               Catch::Contains("Workload/ns/w.spec.podSets[0].template.spec.containers: missing"));
    CHECK_THAT(
        problems(list({n, workload("ns", "w", json::array({pod_set("main", 1, json{{"cpu", "2x"}})}), job_owner)}), o),
        Catch::Contains("Workload/ns/w.spec.podSets[0].template.spec.containers[0].resources.requests.cpu: "));
    json no_time = workload("ns", "w", json::array({pod_set("main", 1, gpu)}), job_owner);
    no_time["metadata"].erase("creationTimestamp");
    CHECK_THAT(problems(list({n, no_time}), o), Catch::Contains("Workload/ns/w.metadata.creationTimestamp: missing"));
  }
}
