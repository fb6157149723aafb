// SPDX-License-Identifier: Apache-2.0
// quota::detail::node_pool: spare nodes of per-job maps (docs/performance.md).
#include <quota/detail/node_pool.hpp>
#include <quota/resource.hpp>

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "quota_catch.hpp"

using namespace quota;

namespace {
using map = std::unordered_map<std::string, int, detail::string_hash, std::equal_to<>>;
using set = std::unordered_set<std::string, detail::string_hash, std::equal_to<>>;
}  // namespace

TEST_CASE("node_pool: an erased node serves the next insertion, a duplicate key changes nothing") {
  map m;
  detail::node_pool<map> pool;
  auto [a, fresh_a] = pool.emplace(m, std::string_view("job-a"), 1);
  CHECK(fresh_a);
  pool.erase(m, a);
  CHECK(m.empty());
  CHECK(pool.spare() == 1);

  auto [b, fresh_b] = pool.emplace(m, std::string_view("job-b"), 2);  // the spare node, key and value reassigned
  CHECK(fresh_b);
  CHECK(pool.spare() == 0);
  CHECK(b->first == "job-b");
  CHECK(b->second == 2);

  pool.erase(m, pool.emplace(m, std::string_view("job-c"), 3).first);
  REQUIRE(pool.spare() == 1);
  auto [dup, fresh_dup] = pool.emplace(m, std::string_view("job-b"), 9);  // present: the spare goes back
  CHECK_FALSE(fresh_dup);
  CHECK(dup == b);
  CHECK(m.size() == 1);
  CHECK(m.at("job-b") == 2);
  CHECK(pool.spare() == 1);
}

TEST_CASE("node_pool: sets and ordered maps reuse nodes the same way, and a copy starts without spares") {
  set s;
  detail::node_pool<set> sp;
  sp.erase(s, sp.insert(s, std::string("x")).first);
  CHECK(sp.spare() == 1);
  CHECK(sp.insert(s, std::string("y")).second);
  CHECK_FALSE(sp.insert(s, std::string("y")).second);
  CHECK(s.size() == 1);
  CHECK(s.count("y") == 1);

  std::map<std::string, int, std::less<>> om;
  detail::node_pool<std::map<std::string, int, std::less<>>, 2> op;
  for (const char* k : {"a", "b", "c"}) op.emplace(om, std::string_view(k), 0);
  while (!om.empty()) op.erase(om, om.begin());
  CHECK(op.spare() == 2);  // at most `kept` spares
  const auto copy = op;
  CHECK(copy.spare() == 0);
  CHECK(op.emplace(om, std::string_view("d"), 4).second);
  CHECK(om.begin()->first == "d");
  CHECK(op.spare() == 1);
}
