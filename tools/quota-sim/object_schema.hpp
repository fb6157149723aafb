// SPDX-License-Identifier: Apache-2.0
// quota-sim: the fields of the upstream Kubernetes objects a scenario's
// policies hold, so that a misspelt field (`spec.wieght`) is reported, as
// `kubectl apply --validate=strict` does.
// Docs: docs/scenario-format.md ("Validation and limits")
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <quota/error.hpp>
#include <quota/json.hpp>

namespace quota::sim {

namespace detail {

// A schema is JSON: an object lists the allowed keys with the schema of each
// value, an array holds the schema of every element, a string ("*") accepts
// anything.
inline const json& object_schemas() {
  static const json s = [] {
    const json meta = json::parse(R"({"name": "*", "namespace": "*", "labels": "*", "annotations": "*", "uid": "*",
      "resourceVersion": "*", "generation": "*", "creationTimestamp": "*", "deletionTimestamp": "*",
      "deletionGracePeriodSeconds": "*", "ownerReferences": "*", "finalizers": "*", "managedFields": "*",
      "generateName": "*", "selfLink": "*"})");
    const json groups = json::parse(R"([{"name": "*", "coveredResources": "*", "flavors": [{"name": "*",
      "resources": [{"name": "*", "nominalQuota": "*", "borrowingLimit": "*", "lendingLimit": "*"}]}]}])");
    const json kai_resource = json::parse(R"({"quota": "*", "limit": "*", "overQuotaWeight": "*"})");
    json specs = json::object();
    specs["scheduling.volcano.sh/Queue"] = json::parse(R"({"weight": "*", "capability": "*", "reclaimable": "*",
      "extendClusters": "*", "guarantee": {"resource": "*"}, "affinity": "*", "type": "*", "parent": "*",
      "deserved": "*", "priority": "*", "dequeueStrategy": "*"})");
    specs["scheduling.volcano.sh/PodGroup"] = json::parse(R"({"minMember": "*", "minTaskMember": "*", "queue": "*",
      "priorityClassName": "*", "minResources": "*", "networkTopology": "*", "subGroupPolicy": "*"})");
    specs["scheduling.run.ai/Queue"] =
        json{{"displayName", "*"},
             {"parentQueue", "*"},
             {"priority", "*"},
             {"preemptMinRuntime", "*"},
             {"reclaimMinRuntime", "*"},
             {"resources", {{"cpu", kai_resource}, {"gpu", kai_resource}, {"memory", kai_resource}}}};
    specs["nos.nebuly.com/ElasticQuota"] = json::parse(R"({"min": "*", "max": "*"})");
    specs["nos.nebuly.com/CompositeElasticQuota"] = json::parse(R"({"min": "*", "max": "*", "namespaces": "*"})");
    specs["kueue.x-k8s.io/ClusterQueue"] = json::parse(R"({"cohort": "*", "cohortName": "*",
      "queueingStrategy": "*", "namespaceSelector": "*", "flavorFungibility": {"whenCanBorrow": "*",
      "whenCanPreempt": "*"}, "preemption": {"reclaimWithinCohort": "*", "borrowWithinCohort": {"policy": "*",
      "maxPriorityThreshold": "*"}, "withinClusterQueue": "*"}, "admissionChecks": "*",
      "admissionChecksStrategy": "*", "stopPolicy": "*", "fairSharing": {"weight": "*"}, "admissionScope": "*"})");
    specs["kueue.x-k8s.io/ClusterQueue"]["resourceGroups"] = groups;
    specs["kueue.x-k8s.io/Cohort"] = json::parse(R"({"parent": "*", "parentName": "*",
      "fairSharing": {"weight": "*"}})");
    specs["kueue.x-k8s.io/Cohort"]["resourceGroups"] = groups;
    specs["kueue.x-k8s.io/LocalQueue"] = json::parse(R"({"clusterQueue": "*", "stopPolicy": "*",
      "fairSharing": "*"})");
    specs["kueue.x-k8s.io/ResourceFlavor"] = json::parse(R"({"nodeLabels": "*", "nodeTaints": "*",
      "tolerations": "*", "topologyName": "*"})");
    specs["kueue.x-k8s.io/Workload"] = json::parse(R"({"podSets": [{"name": "*", "count": "*", "minCount": "*",
      "template": "*", "topologyRequest": "*"}], "queueName": "*", "priorityClassName": "*", "priority": "*",
      "priorityClassSource": "*", "active": "*", "maximumExecutionTimeSeconds": "*"})");
    specs["resource.k8s.io/DeviceClass"] = json::parse(R"({"selectors": "*", "config": "*",
      "extendedResourceName": "*"})");
    specs["resource.k8s.io/ResourceClaim"] = json::parse(R"({"devices": {"requests": [{"name": "*",
      "exactly": "*", "firstAvailable": "*", "deviceClassName": "*", "selectors": "*", "allocationMode": "*",
      "count": "*", "adminAccess": "*", "tolerations": "*"}], "constraints": "*", "config": "*"}})");
    json out = json::object();
    for (auto it = specs.begin(); it != specs.end(); ++it)
      out[it.key()] =
          json{{"apiVersion", "*"}, {"kind", "*"}, {"metadata", meta}, {"spec", it.value()}, {"status", "*"}};
    out["kueue.x-k8s.io/WorkloadPriorityClass"] =
        json{{"apiVersion", "*"}, {"kind", "*"}, {"metadata", meta}, {"value", "*"}, {"description", "*"}};
    return out;
  }();
  return s;
}

// YuniKorn's queue configuration (queues.yaml as JSON; both spellings of the
// limit fields that the limits loader reads), queues nested up to 16 levels.
inline const json& yunikorn_config_schema() {
  static const json s = [] {
    const json limit = json::parse(R"({"limit": "*", "users": "*", "groups": "*", "maxresources": "*",
      "maxResources": "*", "maxapplications": "*", "maxApplications": "*"})");
    json queue = "*";
    for (int depth = 0; depth < 16; ++depth) {
      json q = json::parse(R"({"name": "*", "parent": "*", "resources": {"guaranteed": "*", "max": "*"},
        "maxapplications": "*", "maxApplications": "*", "properties": "*", "adminacl": "*", "submitacl": "*",
        "childtemplate": "*"})");
      q["queues"] = json::array({queue});
      q["limits"] = json::array({limit});
      queue = std::move(q);
    }
    json partition = json::parse(R"({"name": "*", "placementrules": "*", "nodesortpolicy": "*",
      "preemption": "*", "statedumpfilepath": "*", "usergroupresolver": "*"})");
    partition["queues"] = json::array({queue});
    partition["limits"] = json::array({limit});
    return json{{"partitions", json::array({partition})}, {"checksum", "*"}};
  }();
  return s;
}

inline void check_against(const json& v, const json& schema, const std::string& path, const std::string& kind,
                          std::vector<diagnostic>& out) {
  if (schema.is_object() && v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string p = path + "." + it.key();
      if (!schema.contains(it.key()))
        out.push_back({p, "unknown field of " + kind});
      else
        check_against(it.value(), schema[it.key()], p, kind, out);
    }
  } else if (schema.is_array() && v.is_array() && !schema.empty()) {
    for (std::size_t i = 0; i < v.size(); ++i)
      check_against(v[i], schema[0], path + "[" + std::to_string(i) + "]", kind, out);
  }
  // a value of the wrong type is the loader's to report
}

// Every object of a document that is one object, a List or an array (nested as well).
// `fallback`: the schema key of objects that name no kind (the models that
// read one kind only accept objects without apiVersion and kind).
inline void check_objects_in(const json& doc, const std::string& path, std::vector<diagnostic>& out,
                             const std::string& fallback, std::size_t depth = 0) {
  if (depth > 8) return;
  if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i)
      check_objects_in(doc[i], path + "[" + std::to_string(i) + "]", out, fallback, depth + 1);
    return;
  }
  if (!doc.is_object()) return;
  if (doc.contains("items") && doc["items"].is_array() &&
      (!doc.contains("kind") || (doc["kind"].is_string() && doc["kind"].get<std::string>().ends_with("List")))) {
    check_objects_in(doc["items"], path + ".items", out, fallback, depth + 1);
    return;
  }
  const auto& schemas = object_schemas();
  if (!doc.contains("kind") && !doc.contains("apiVersion")) {
    if (!fallback.empty())
      check_against(doc, schemas[fallback], path,
                    fallback.substr(fallback.find('/') + 1) + " (" + fallback.substr(0, fallback.find('/')) + ")", out);
    return;
  }
  if (!doc.contains("kind") || !doc["kind"].is_string() || !doc.contains("apiVersion") ||
      !doc["apiVersion"].is_string())
    return;
  const std::string& api = doc["apiVersion"].get_ref<const std::string&>();
  const std::string key = api.substr(0, api.find('/')) + "/" + doc["kind"].get<std::string>();
  if (!schemas.contains(key)) return;
  check_against(doc, schemas[key], path, doc["kind"].get<std::string>() + " (" + api + ")", out);
}

// The kind of the objects of a model that reads one kind only.
inline std::string single_kind_of(const json& policy) {
  if (!policy.contains("model") || !policy["model"].is_string()) return "";
  const std::string& m = policy["model"].get_ref<const std::string&>();
  if (m == "volcano" || m == "volcano_capacity") return "scheduling.volcano.sh/Queue";
  if (m == "kai_fair_share") return "scheduling.run.ai/Queue";
  return "";
}
}  // namespace detail

/// The unknown fields of the upstream objects in a policy entry (its
/// `objects` and `pods`, and a yunikorn_limits `config`), each with its path
/// under `path` ($.policies[0]).
[[nodiscard]] inline std::vector<diagnostic> unknown_object_fields(const json& policy, const std::string& path) {
  std::vector<diagnostic> out;
  if (!policy.is_object()) return out;
  const std::string fallback = detail::single_kind_of(policy);
  if (policy.contains("objects")) detail::check_objects_in(policy["objects"], path + ".objects", out, fallback);
  if (policy.contains("pods")) detail::check_objects_in(policy["pods"], path + ".pods", out, "");
  if (policy.contains("config") && policy.contains("model") && policy["model"] == "yunikorn_limits")
    detail::check_against(policy["config"], detail::yunikorn_config_schema(), path + ".config",
                          "the YuniKorn queue configuration", out);
  return out;
}

}  // namespace quota::sim
