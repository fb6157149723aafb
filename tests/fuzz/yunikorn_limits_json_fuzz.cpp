// SPDX-License-Identifier: Apache-2.0
// Fuzz: YuniKorn queue configuration (yunikorn_limits_json.hpp) reloaded into a
// manager that has running applications.
// Properties: a rejected document throws a typed error and leaves the
// manager's usage state byte-identical; an accepted one reloads (validates
// again); the usage survives a reload (usage above a lowered limit is kept);
// increase/decrease after the reload either decide or throw typed errors, and
// a denial changes nothing.
#include <quota/yunikorn_limits_json.hpp>

#include "fuzz_common.hpp"

namespace {
using namespace quota;

const char* const seed_config = R"({"queues": [{"name": "root", "queues": [
  {"name": "a", "limits": [{"limit": "u", "users": ["*"], "maxresources": {"vcore": 10, "memory": "10G"}, "maxapplications": 5}]},
  {"name": "b"}]}]})";

void paths(const limits_queue& q, const std::string& path, std::vector<std::string>& out) {
  out.push_back(path);
  for (const auto& c : q.queues) paths(c, path + "." + c.name, out);
}

json usage_only(json j) {
  // limits may change with the config; usage and running applications may not
  for (auto& u : j)
    for (auto& [k, v] : u.items())
      if (k == "queues") v.erase("maxResources");
  return j;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  resource_registry reg;
  yunikorn_limits_model m(reg);
  m.reload(load_yunikorn_limits_config(json::parse(seed_config), reg, {}));
  resource_vector one = parse_yunikorn_limits_usage(json{{"vcore", 1}, {"memory", "1G"}}, reg, "usage");
  const std::vector<std::string> groups{"dev"};
  fuzz::require(m.increase("root.a", "app-1", one, "sue", groups).allowed(), "seed admit");
  const json users0 = users_usage_to_json(m), groups0 = groups_usage_to_json(m);

  yunikorn_limits_config cfg;
  if (!fuzz::typed([&] { cfg = load_yunikorn_limits_config(*doc, reg, {}); })) {
    fuzz::require(users_usage_to_json(m) == users0 && groups_usage_to_json(m) == groups0,
                  "a rejected document changed the manager");
    return 0;
  }
  const bool reloaded = fuzz::typed([&] { m.reload(cfg); });
  fuzz::require(reloaded, "an accepted configuration does not validate again in reload");
  fuzz::require(m.user_usage("sue", "root.a") == one, "reload lost usage");
  // exercise the new limits: every queue of the config, admit then release
  std::vector<std::string> all;
  paths(cfg.root, "root", all);
  for (const auto& path : all) {
    const json before = users_usage_to_json(m);
    decision d;
    if (!fuzz::typed([&] { d = m.increase(path, "app-x", one, "bob", groups); })) continue;
    if (!d.allowed()) {
      fuzz::require(users_usage_to_json(m) == before, "a denial changed the state at " + path);
      continue;
    }
    fuzz::require(fuzz::typed([&] {
                    m.decrease(path, "app-x", one, true, {"bob", groups});
                  }),
                  "release of an admitted application failed at " + path);
    fuzz::require(usage_only(users_usage_to_json(m)) == usage_only(before),
                  "admit + release is not neutral at " + path);
  }
  return 0;
}
