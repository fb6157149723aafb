// SPDX-License-Identifier: Apache-2.0
// quota-example-yunikorn_limits: YuniKorn user/group limits on the four-entry example
// of YuniKorn's enforcement design (docs/yunikorn-limits.md#references).
// Loads a queues.yaml-shaped JSON config and a list of increase / decrease
// requests, prints each decision, then the /usage/users and
// /usage/groups JSON.
//
//   quota-example-yunikorn_limits [queues.json] [requests.json]
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#ifndef QUOTA_EXAMPLE_DIR
#define QUOTA_EXAMPLE_DIR "examples/yunikorn_limits"
#endif

int main(int argc, char** argv) {
  using namespace quota;
  const std::string dir = QUOTA_EXAMPLE_DIR;
  const std::string cfg_file = argc > 1 ? argv[1] : dir + "/queues.json";
  const std::string req_file = argc > 2 ? argv[2] : dir + "/requests.json";
  try {
    resource_registry reg;
    yunikorn_limits_model m(reg);
    m.reload(load_yunikorn_limits_config_file(cfg_file, reg));
    const json requests = load_json_file(req_file);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const json& r = requests[i];
      const std::string path = "requests[" + std::to_string(i) + "]";
      const resource_vector usage = parse_yunikorn_limits_usage(r.at("usage"), reg, path + ".usage");
      limits_identity id{r.at("user").get<std::string>(), r.value("groups", std::vector<std::string>{})};
      const std::string queue = r.at("queue").get<std::string>();
      const std::string app = r.at("app").get<std::string>();
      if (r.at("op") == "increase") {
        const decision dec = m.increase(queue, app, usage, id);
        std::cout << "increase " << app << " (" << id.user << ") in " << queue << ": " << to_string(dec) << "\n";
      } else {
        m.decrease(queue, app, usage, r.value("remove", false), id);
        std::cout << "decrease " << app << " (" << id.user << ") in " << queue << ": done\n";
      }
    }
    std::cout << "\n/usage/users\n" << users_usage_to_json(m).dump(2) << "\n";
    std::cout << "\n/usage/groups\n" << groups_usage_to_json(m).dump(2) << "\n";
  } catch (const error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
