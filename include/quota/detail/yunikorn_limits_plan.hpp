// SPDX-License-Identifier: Apache-2.0
// quota/detail/yunikorn_limits_plan.hpp — the trackers of a yunikorn_limits_model (quota/yunikorn_limits.hpp) and
// the plan a running application keeps for the hot path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include <quota/detail/yunikorn_limits_compiled.hpp>
#include <quota/detail/yunikorn_limits_interner.hpp>
#include <quota/resource.hpp>

namespace quota::detail {

/// Two unsigned 64-bit lanes (GCC and clang vector extension; one SSE2 or
/// NEON register): the hot path checks two resource slots per operation.
using limits_u64x2 = std::uint64_t __attribute__((vector_size(16)));
inline constexpr std::uint32_t limits_wild_group = 0;  // group id 0 is the "*" pool

/// Usage by resource slot (a flat array; a slot past the end is 0).
using limits_slots = boost::container::small_vector<amount, 8>;
[[nodiscard]] inline amount limits_at(const limits_slots& v, std::uint32_t slot) noexcept {
  return slot < v.size() ? v[slot] : amount{0};
}
[[nodiscard]] inline bool limits_is_zero(const limits_slots& v) noexcept {
  for (auto x : v)
    if (x != 0) return false;
  return true;
}

/// One requested resource (amount > 0), with its slot resolved once per call.
struct limits_req_entry {
  std::uint32_t slot;
  resource_id id;
  amount value;
};
/// The positive entries of a request: inline up to 8 resources.
class limits_req {
 public:
  limits_req() = default;
  limits_req(const limits_req&) = delete;
  limits_req& operator=(const limits_req&) = delete;
  void reset(std::size_t capacity) {
    n_ = 0;
    if (capacity > inline_.size()) {
      big_.resize(capacity);
      p_ = big_.data();
    }
  }
  void push(const limits_req_entry& e) noexcept { p_[n_++] = e; }
  [[nodiscard]] const limits_req_entry* begin() const noexcept { return p_; }
  [[nodiscard]] const limits_req_entry* end() const noexcept { return p_ + n_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

 private:
  std::array<limits_req_entry, 8> inline_;  // only [0, n_) is read
  std::vector<limits_req_entry> big_;
  limits_req_entry* p_ = inline_.data();
  std::size_t n_ = 0;
};

struct limits_node {
  limits_slots use;
  std::uint64_t running = 0;
  std::uint64_t gen = 0;  // config generation `lim` was resolved for
  const limits_value* lim = nullptr;
};

struct limits_entity {
  std::unordered_map<std::uint32_t, limits_node> nodes;  // by queue id; node addresses are stable
};

struct limits_queue_node {
  std::string path;
  std::uint32_t parent = limits_none;
  std::vector<std::uint32_t> chain;  // leaf .. root
  // cache of the compiled queue for the current config generation
  std::uint64_t gen = 0;
  const limits_compiled_queue* cq = nullptr;
};

/// One headroom column of a running application's plan: a resource some limit
/// on its path mentions. Its headroom is min(fixed, min over the check rows r
/// in `rows` of plan_lim[r][slot] - plan_use[r][slot]). `rows`: the rows whose
/// limit mentions the resource (0 when it has no slot: never requested, usage
/// 0 everywhere); `fixed`: the smallest limit of such a resource, else the
/// largest amount.
struct limits_col {
  resource_id id;
  std::uint16_t slot;
  std::uint64_t rows;
  amount fixed;
};

struct limits_app {
  // (the members the hot path reads come first and lie together, the
  // partly filled inline arrays last among them)
  bool live = false;        // running: it has trackers
  bool pinned = false;      // the host holds its handle (app_id): remembered until release_app
  bool plan_queue = false;  // the queue is in the current config (else increase takes the general path)
  bool linked = false;      // upstream mode: a query fixed `group` before the application runs (YuniKorn's link)
  // upstream mode: a reload removed the limit of its group at one of its
  // queues, which unlinked it (YuniKorn's resetGroupEarlierUsage): it has no
  // group trackers until a call resolves its group again (`group` set by a
  // query: resolved, not joined yet); its group side then counts as new
  bool relink = false;
  // the levels of gnodes whose running count includes it (bit i: gnodes[i]);
  // an upstream reload's reset of a tracker clears its bit
  std::uint64_t gcounted = 0;
  std::uint32_t user = limits_none;
  std::uint32_t group = limits_none;
  std::uint32_t queue = limits_none;
  // The hot path's plan of a running application: its limits resolved once per
  // config generation. Valid while plan_gen is the manager's generation and
  // plan_slots its slot count; every usage array it points into (the
  // application's and its trackers') is then at least plan_width wide.
  //
  // The plan keeps raw pointers into the trackers' usage arrays (never into
  // the application's own `use`: the application moves when app_states_
  // grows). They stay valid while the plan does: a running application's
  // trackers are never removed (their running count is at least 1), an
  // entity's tracker map keeps node addresses when the entity vector grows,
  // and a usage array is only resized to at most the slot count (a new slot
  // invalidates every plan; up to 8 slots the array is inline in its node).
  //
  // * check rows (increase and headroom): the trackers with a limit plus the
  //   user's and the group's top-level tracker (whose usage bounds every level
  //   below it, so it is the only one an unlimited sum can overflow first):
  //   plan_use[row] and plan_lim[row * plan_width + slot] (max: no limit).
  // * plan_all: the trackers' usage arrays an increase or decrease changes
  //   (the user's, then the group's; with the application's own `use`).
  // * headroom columns (limited resources only), each naming its rows.
  std::uint32_t plan_slots = 0;
  std::uint32_t plan_width = 0;  // plan_slots rounded up to 4, 8 or 16 (0: wider, no hot path)
  std::uint64_t plan_gen = 0;
  // (inline capacities: a path of depth 3 with 4 limited resources)
  boost::container::small_vector<amount*, 6> plan_use;
  boost::container::small_vector<amount*, 6> plan_all;
  boost::container::small_vector<limits_col, 4> plan_cols;  // ascending id
  limits_slots use;                                         // the application's own usage
  boost::container::small_vector<amount, 24> plan_lim;
  boost::container::small_vector<limits_node*, 8> unodes, gnodes;  // along the chain
};

}  // namespace quota::detail
