// SPDX-License-Identifier: Apache-2.0
// Property test: resource vectors and checked arithmetic against a plain
// big-integer reference (per-dimension __int128 maps). Random vectors mix
// small amounts with values at the int64 edges; every operation either equals
// the reference or, exactly when the reference leaves int64, throws
// overflow_error and leaves its operand unchanged (strong guarantee).
#include <quota/detail/checked.hpp>
#include <quota/resource_vector.hpp>

#include <limits>
#include <map>

#include "property_support.hpp"
#include "quota_catch.hpp"

using namespace quota;

namespace {
__extension__ using wide = __int128;
using ref = std::map<resource_id, wide>;
constexpr wide lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();

std::int64_t amount_from(prop::rng& r) {
  switch (r.below(6)) {
    case 0:
      return std::numeric_limits<std::int64_t>::max() - r.range(0, 3);
    case 1:
      return std::numeric_limits<std::int64_t>::min() + r.range(0, 3);
    case 2:
      return r.range(-5, 5);
    case 3:
      return std::numeric_limits<std::int64_t>::max() / 2 + r.range(-2, 2);
    default:
      return r.range(0, 1000);
  }
}

template <class V>
V random_vector(prop::rng& r, ref& out) {
  V v;
  out.clear();
  for (resource_id id = 0; id < 6; ++id)
    if (r.chance(50)) {
      const auto a = amount_from(r);
      v.set(id, a);
      out[id] = a;
    }
  return v;
}

template <class V>
bool same(const V& v, const ref& m) {
  for (resource_id id = 0; id < 6; ++id) {
    const wide want = m.count(id) ? m.at(id) : 0;
    if (static_cast<wide>(v.get(id)) != want) return false;
  }
  return true;
}

bool in_range(const ref& m) {
  for (const auto& [id, v] : m)
    if (v < lo || v > hi) return false;
  return true;
}
}  // namespace

TEST_CASE("property: checked scalar arithmetic equals 128-bit arithmetic or throws overflow") {
  prop::rng r(7);
  std::size_t ops = 0, overflows = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::int64_t a = amount_from(r), b = amount_from(r);
    const wide sums[] = {wide{a} + b, wide{a} - b, wide{a} * b};
    for (int k = 0; k < 3; ++k) {
      ++ops;
      const bool fits = sums[k] >= lo && sums[k] <= hi;
      try {
        const std::int64_t got = k == 0   ? detail::checked_add(a, b)
                                 : k == 1 ? detail::checked_sub(a, b)
                                          : detail::checked_mul(a, b);
        REQUIRE(fits);
        REQUIRE(wide{got} == sums[k]);
      } catch (const overflow_error&) {
        ++overflows;
        REQUIRE_FALSE(fits);
      }
    }
  }
  std::printf("arithmetic property: %zu scalar operations, %zu overflows, 0 divergences\n", ops, overflows);
  CHECK(overflows > 0);
}

TEST_CASE("property: resource vector arithmetic and comparisons match the reference") {
  prop::rng r(11);
  std::size_t ops = 0;
  for (int i = 0; i < 30000; ++i) {
    ref ma, mb;
    resource_vector a = random_vector<resource_vector>(r, ma);
    const resource_vector b = random_vector<resource_vector>(r, mb);
    // a += b, a -= b
    for (int sub = 0; sub < 2; ++sub) {
      ++ops;
      ref want = ma;
      for (const auto& [id, v] : mb) want[id] = sub ? want[id] - v : want[id] + v;
      const resource_vector before = a;
      try {
        if (sub)
          a -= b;
        else
          a += b;
        REQUIRE(in_range(want));
        REQUIRE(same(a, want));
        a = before;
      } catch (const overflow_error&) {
        REQUIRE_FALSE(in_range(want));
        REQUIRE(a == before);
      }
    }
    // fits / fits_with / first_excess / less_equal against a limit vector
    ref ml;
    const limit_vector lim = random_vector<limit_vector>(r, ml);
    ++ops;
    bool want_fits = true, want_fits_with = true;
    std::optional<resource_id> first;
    for (const auto& [id, v] : ma) {
      if (v <= 0) continue;
      if (ml.count(id) && ml.at(id) < v) {
        want_fits = false;
        if (!first) first = id;
      }
    }
    for (const auto& [id, v] : mb) {
      if (v <= 0) continue;
      const wide total = (ma.count(id) ? ma.at(id) : 0) + v;
      if (total > hi || total < lo || (ml.count(id) && ml.at(id) < total)) want_fits_with = false;
    }
    REQUIRE(fits(a, lim) == want_fits);
    REQUIRE(fits_with(a, b, lim) == want_fits_with);
    const auto ex = first_excess(a, lim);
    REQUIRE(ex.has_value() == first.has_value());
    if (ex) REQUIRE(ex->resource == *first);
    bool want_le = true;
    for (resource_id id = 0; id < 6; ++id)
      if ((ma.count(id) ? ma.at(id) : 0) > (mb.count(id) ? mb.at(id) : 0)) want_le = false;
    REQUIRE(less_equal(a, b) == want_le);
    // element-wise min / max of zero-absent vectors
    const resource_vector mn = elementwise_min(a, b), mx = elementwise_max(a, b);
    for (resource_id id = 0; id < 6; ++id) {
      const wide x = ma.count(id) ? ma.at(id) : 0, y = mb.count(id) ? mb.at(id) : 0;
      REQUIRE(static_cast<wide>(mn.get(id)) == std::min(x, y));
      REQUIRE(static_cast<wide>(mx.get(id)) == std::max(x, y));
    }
  }
  std::printf("vector property: %zu vector operations, 0 divergences\n", ops);
}
