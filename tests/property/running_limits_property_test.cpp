// SPDX-License-Identifier: Apache-2.0
// Property test: running-job limits (quota/running_limits.hpp) against a
// reference that keeps the list of running jobs and counts per scope on
// demand. Random commit/release/limit changes with bad input (duplicate ids,
// unknown ids, negative limits); every decision and count is compared, and a
// failed call must leave the JSON state unchanged.
#include <quota/running_limits.hpp>
#include <quota/running_limits_json.hpp>

#include <map>
#include <optional>
#include <string>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {
const char* const names[] = {"a", "b", "c"};

struct ref_job {
  std::string queue, user, ns;
};

struct reference {
  std::map<std::string, ref_job> jobs;
  std::map<std::string, std::int64_t> limits[3];
  std::optional<std::int64_t> fallback[3];

  std::int64_t running(std::size_t s, const std::string& n) const {
    std::int64_t c = 0;
    for (const auto& [id, j] : jobs) c += (s == 0 ? j.queue : s == 1 ? j.user : j.ns) == n;
    return c;
  }
  std::optional<std::int64_t> limit(std::size_t s, const std::string& n) const {
    if (auto it = limits[s].find(n); it != limits[s].end()) return it->second;
    return fallback[s];
  }
  bool allows(const job& j) const {
    const std::string* keys[] = {&j.queue, &j.user, &j.ns};
    for (std::size_t s = 0; s < 3; ++s) {
      if (keys[s]->empty()) continue;
      const auto l = limit(s, *keys[s]);
      if (l && running(s, *keys[s]) + 1 > *l) return false;
    }
    return true;
  }
};
}  // namespace

TEST_CASE("property: running limits match the reference model over random operation sequences") {
  std::size_t total = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    prop::rng r(seed);
    running_limits_policy rl;
    reference ref;
    for (int i = 0; i < 1000; ++i, ++total) {
      const json before = rl;
      const auto p = r.below(100);
      bool failed = false;
      if (p < 10) {  // change a limit (sometimes invalid)
        const auto s = r.below(3);
        const std::int64_t v = r.chance(10) ? -1 : r.range(0, 4);
        const bool fallback = r.chance(30);
        const std::string n = names[r.below(3)];
        try {
          if (fallback)
            rl.set_default(static_cast<running_limits_policy::scope>(s), v);
          else
            rl.set_limit(static_cast<running_limits_policy::scope>(s), n, v);
          REQUIRE(v >= 0);
          if (fallback)
            ref.fallback[s] = v;
          else
            ref.limits[s][n] = v;
        } catch (const validation_error&) {
          REQUIRE(v < 0);
          failed = true;
        }
      } else if (p < 60) {  // admit: check then commit when allowed
        job j;
        j.id = "j" + std::to_string(r.below(40));
        j.queue = r.chance(10) ? "" : names[r.below(3)];
        j.user = names[r.below(3)];
        j.ns = names[r.below(3)];
        const bool allowed = rl.check(j).allowed();
        REQUIRE(allowed == ref.allows(j));
        if (allowed || r.chance(10)) {  // sometimes commit regardless (the host decides)
          try {
            rl.commit(j);
            REQUIRE(ref.jobs.count(j.id) == 0);
            ref.jobs[j.id] = {j.queue, j.user, j.ns};
          } catch (const state_error&) {
            REQUIRE(ref.jobs.count(j.id) == 1);
            failed = true;
          }
        }
      } else {  // release (sometimes unknown)
        const std::string id = "j" + std::to_string(r.below(40));
        try {
          rl.release(id);
          REQUIRE(ref.jobs.erase(id) == 1);
        } catch (const unknown_entity_error&) {
          REQUIRE(ref.jobs.count(id) == 0);
          failed = true;
        }
      }
      if (failed) REQUIRE(json(rl) == before);
      REQUIRE(rl.running_jobs() == ref.jobs.size());
      for (std::size_t s = 0; s < 3; ++s)
        for (const char* n : names) {
          REQUIRE(rl.running(static_cast<running_limits_policy::scope>(s), n) == ref.running(s, n));
          INFO("seed " << seed << " step " << i << " scope " << s << " name " << n << " library "
                       << rl.limit_of(static_cast<running_limits_policy::scope>(s), n).value_or(-99) << " reference "
                       << ref.limit(s, n).value_or(-99));
          REQUIRE(rl.limit_of(static_cast<running_limits_policy::scope>(s), n) == ref.limit(s, n));
        }
    }
  }
  std::printf("running limits property: %zu operations, 0 divergences\n", total);
}
