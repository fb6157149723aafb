// SPDX-License-Identifier: Apache-2.0
// Fuzz: running-job limits (running_limits_json.hpp).
// Properties: typed errors only; an accepted document survives the round trip
// load -> to_json -> load (as name: limit) -> to_json unchanged; jobs admitted
// only when check allows never push any scope above its limit; releasing every
// job brings every running count back to zero.
#include <quota/running_limits_json.hpp>

#include "fuzz_common.hpp"

namespace {
using namespace quota;

json as_document(const json& introspection, const json& original) {
  json doc = json::object();
  for (const char* scope : {"queues", "users", "namespaces"}) {
    json m = json::object();
    for (const auto& [name, e] : introspection[scope].items())
      if (e.contains("limit")) m[name] = e["limit"];
    if (original.contains(scope) && original[scope].contains("*")) m["*"] = original[scope]["*"];
    doc[scope] = std::move(m);
  }
  return doc;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = fuzz::as_json(data, size);
  if (!doc) return 0;
  running_limits_policy rl;
  if (!fuzz::typed([&] { rl = load_running_limits(*doc); })) return 0;
  const json j1 = rl;
  running_limits_policy back;
  fuzz::require(fuzz::typed([&] { back = load_running_limits(as_document(j1, *doc)); }),
                "the round trip of an accepted document is rejected");
  const json j2 = back;
  fuzz::require(j1 == j2, "round trip changed the limits: " + j1.dump() + " vs " + j2.dump());
  // drive jobs over the names the document mentions
  std::vector<std::string> names{"a", "b"};
  for (const char* scope : {"queues", "users", "namespaces"})
    for (const auto& [name, e] : j1[scope].items()) names.push_back(name);
  std::vector<std::string> admitted;
  for (std::size_t i = 0; i < 3 * names.size() && i < 64; ++i) {
    job jb;
    jb.id = "j" + std::to_string(i);
    jb.queue = names[i % names.size()];
    jb.user = names[(i / 2) % names.size()];
    jb.ns = names[(i / 3) % names.size()];
    if (!rl.check(jb).allowed()) continue;
    rl.commit(jb);
    admitted.push_back(jb.id);
    fuzz::require(rl.running(running_limits_policy::scope::queue, jb.queue) <=
                      rl.limit_of(running_limits_policy::scope::queue, jb.queue).value_or(INT64_MAX),
                  "queue above its limit");
    fuzz::require(rl.running(running_limits_policy::scope::user, jb.user) <=
                      rl.limit_of(running_limits_policy::scope::user, jb.user).value_or(INT64_MAX),
                  "user above its limit");
  }
  for (const auto& id : admitted) rl.release(id);
  fuzz::require(rl.running_jobs() == 0, "jobs left after releasing all");
  const json j3 = rl;
  for (const char* scope : {"queues", "users", "namespaces"})
    for (const auto& [name, e] : j3[scope].items()) fuzz::require(e["running"] == 0, "running count left");
  return 0;
}
