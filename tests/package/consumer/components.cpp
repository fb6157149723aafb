// SPDX-License-Identifier: Apache-2.0
// The opt-in headers through the components: quota::json, quota::fmt and
// quota::yaml bring their dependency (found and linked by quota's package).
#include <quota/fmt.hpp>
#include <quota/json.hpp>
#include <quota/yunikorn_limits_yaml.hpp>
#include <quota/quota.hpp>

int main() {
  const quota::json doc = quota::json::parse(R"({"nvidia.com/gpu": 2})");
  const quota::resource_vector request{{quota::resources::nvidia_gpu, doc["nvidia.com/gpu"].get<std::int64_t>()}};
  const YAML::Node node = YAML::Load("max: 4");
  const quota::limit_vector max{{quota::resources::nvidia_gpu, node["max"].as<std::int64_t>()}};
  fmt::print("components: json, fmt, yaml; fits={}\n", quota::fits(request, max) ? 1 : 0);
  return quota::fits(request, max) ? 0 : 1;
}
