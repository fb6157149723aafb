// SPDX-License-Identifier: Apache-2.0
// Loads a cluster (nodes' allocatable) and a quota from JSON, then prints the
// decision for each request: the smallest complete use of the core API.
//   quota-example-resources [examples/resources/cluster.json]
#include <quota/fmt.hpp>
#include <quota/json.hpp>
#include <quota/quota.hpp>

#include <fmt/core.h>

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : QUOTA_EXAMPLE_DIR "/cluster.json";
  try {
    const quota::json doc = quota::load_json_file(file);
    quota::resource_registry reg;

    // cluster capacity: the sum of the nodes' allocatable, exact
    quota::resource_vector capacity;
    for (std::size_t i = 0; i < doc.at("nodes").size(); ++i)
      capacity += quota::parse_resource_list(doc["nodes"][i].at("allocatable"), reg,
                                             "nodes[" + std::to_string(i) + "].allocatable");
    fmt::print("cluster capacity: {}\n", quota::named(capacity, reg));

    // the quota: max is a limit (absent = unlimited), used is usage (absent = 0)
    const auto max = quota::parse_resource_list<quota::limit_vector>(doc.at("quota").at("max"), reg, "quota.max");
    auto used = quota::parse_resource_list(doc["quota"].value("used", quota::json::object()), reg, "quota.used");
    fmt::print("quota {}: max {}, used {}\n", doc["quota"].at("name").get<std::string>(), quota::named(max, reg),
               quota::named(used, reg));

    for (const auto& r : doc.at("requests")) {
      const auto req = quota::parse_resource_list(r.at("request"), reg, "requests[].request");
      quota::decision d;
      if (auto ex = quota::first_excess(used + req, max)) {
        d = quota::decision::deny(quota::reason{"example", "over_max", doc["quota"]["name"].get<std::string>(),
                                                ex->resource, reg.name(ex->resource), req.get(ex->resource),
                                                used.get(ex->resource), ex->limit, ""});
      } else {
        used += req;  // admitted: account for it
      }
      fmt::print("{:>10}: {} -> {}\n", r.at("name").get<std::string>(), quota::named(req, reg), d);
    }
    const auto share = quota::dominant_share(used, capacity);
    fmt::print("dominant share of the quota's usage: {} = {}/{}\n", reg.name(share.resource), share.value.num(),
               share.value.den());
    return 0;
  } catch (const quota::error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  }
}
