// SPDX-License-Identifier: Apache-2.0
// quota/detail/yunikorn_limits_compiled.hpp — a yunikorn_limits_config compiled for the hot path of
// a yunikorn_limits_model (quota/yunikorn_limits.hpp), by queue path and resource id.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/yunikorn_limits_config.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota::detail {

/// A limit as enforced: the entry's amounts plus where it came from.
struct limits_value {
  std::string entry;       // limit entry description
  std::string where;       // "root.a.limits[1]"
  limit_vector max;        // absent = unlimited
  std::uint64_t max_apps;  // 0 = unlimited
  /// `max` as a dense array indexed by resource id; -1 = not limited (a valid
  /// limit is > 0).
  boost::container::small_vector<amount, 8> by_id;
  [[nodiscard]] amount limit_of(resource_id id) const noexcept { return id < by_id.size() ? by_id[id] : amount{-1}; }
};

/// One queue of a compiled config, keyed by names (compiled without the lock).
struct limits_compiled_queue {
  std::unordered_map<std::string, const limits_value*, string_hash, std::equal_to<>> users;
  const limits_value* user_wild = nullptr;
  std::vector<std::pair<std::string, const limits_value*>> groups;  // named, config order
  std::unordered_map<std::string, const limits_value*, string_hash, std::equal_to<>> group_map;
  const limits_value* group_wild = nullptr;
};

struct limits_compiled {
  bool upstream = false;  // yunikorn_limits_config::upstream of the config in effect
  std::deque<limits_value> values;
  std::unordered_map<std::string, limits_compiled_queue, string_hash, std::equal_to<>> queues;  // by path
};

inline void limits_compile_queue(const limits_queue& q, const std::string& path, limits_compiled& out) {
  auto& cq = out.queues[path];
  for (std::size_t i = 0; i < q.limits.size(); ++i) {
    const auto& e = q.limits[i];
    out.values.push_back(
        {e.name, path + ".limits[" + std::to_string(i) + "]", e.max_resources, e.max_applications, {}});
    limits_value& v = out.values.back();
    for (const auto& r : e.max_resources) {
      if (v.by_id.size() <= r.id) v.by_id.resize(static_cast<std::size_t>(r.id) + 1, amount{-1});
      v.by_id[r.id] = r.value;
    }
    for (const auto& u : e.users) {
      if (u == limits_wildcard)
        cq.user_wild = &v;
      else
        cq.users.emplace(u, &v);
    }
    for (const auto& g : e.groups) {
      if (g == limits_wildcard) {
        cq.group_wild = &v;
      } else {
        cq.groups.emplace_back(g, &v);
        cq.group_map.emplace(g, &v);
      }
    }
  }
  for (const auto& c : q.queues) limits_compile_queue(c, path + "." + c.name, out);
}

}  // namespace quota::detail
