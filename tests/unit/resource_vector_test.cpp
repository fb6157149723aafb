// SPDX-License-Identifier: Apache-2.0
#include <quota/big_int.hpp>
#include <quota/resource_vector.hpp>

#include <random>

#include "quota_catch.hpp"

using namespace quota;
namespace r = quota::resources;

TEST_CASE("resource_vector: absent usage is zero, absent limit is unlimited") {
  resource_vector use{{r::cpu, 1500}};
  CHECK(use.get(r::memory) == 0);
  CHECK_FALSE(use.has(r::memory));

  limit_vector max{{r::cpu, 2000}};
  CHECK_FALSE(max.bound(r::memory).has_value());  // unlimited
  CHECK(*max.bound(r::cpu) == 2000);

  resource_vector strict{{r::cpu, 2000}};
  CHECK(strict.bound(r::memory) == 0);  // not listed = nothing

  resource_vector req{{r::cpu, 1000}, {r::memory, 1 << 20}};
  CHECK(fits(req, max));           // memory unlimited
  CHECK_FALSE(fits(req, strict));  // memory not listed = 0
  auto ex = first_excess(req, strict);
  REQUIRE(ex);
  CHECK(ex->resource == r::memory);
  CHECK(ex->requested == (1 << 20));
  CHECK(ex->limit == 0);
}

TEST_CASE("resource_vector: fits ignores dimensions the request does not ask for") {
  resource_vector req{{r::cpu, 0}, {r::nvidia_gpu, 1}};
  resource_vector lim{{r::nvidia_gpu, 1}};
  CHECK(fits(req, lim));  // cpu 0 is not asked
  limit_vector zero_gpu{{r::nvidia_gpu, 0}};
  CHECK_FALSE(fits(req, zero_gpu));  // an explicit 0 limit is a real zero
}

TEST_CASE("resource_vector: fits_with checks used + request without allocating a sum") {
  resource_vector used{{r::cpu, 3000}};
  resource_vector req{{r::cpu, 1000}};
  limit_vector lim{{r::cpu, 4000}};
  CHECK(fits_with(used, req, lim));
  used.set(r::cpu, 3001);
  CHECK_FALSE(fits_with(used, req, lim));
  // an overflowing sum never fits
  resource_vector huge{{r::cpu, INT64_MAX}};
  CHECK_FALSE(fits_with(huge, req, limit_vector{}));
}

TEST_CASE("resource_vector: addition and subtraction are checked and strong on overflow") {
  resource_vector a{{r::cpu, INT64_MAX - 1}, {r::memory, 10}};
  const resource_vector before = a;
  resource_vector b{{r::memory, 5}, {r::cpu, 2}};
  REQUIRE_THROWS_AS(a += b, overflow_error);
  CHECK(a == before);  // memory was not half-applied
  REQUIRE_THROWS_AS(a.add_in_place(b), overflow_error);
  CHECK(a == before);
  resource_vector c{{r::cpu, INT64_MIN + 1}};
  const resource_vector two{{r::cpu, 2}};
  REQUIRE_THROWS_AS(c -= two, overflow_error);
  CHECK(c.get(r::cpu) == INT64_MIN + 1);

  resource_vector x{{r::cpu, 5}};
  x += resource_vector{{r::memory, 7}};
  CHECK(x.get(r::cpu) == 5);
  CHECK(x.get(r::memory) == 7);
  x -= resource_vector{{r::cpu, 8}};
  CHECK(x.get(r::cpu) == -3);  // plain subtraction may go negative
  CHECK(x.any_negative());
}

TEST_CASE("resource_vector: huge sums are exact (20,000 nodes x 2 TiB, 10^6 pods x 2^40 B)") {
  resource_vector cluster;
  const resource_vector node{{r::memory, 2LL << 40}, {r::cpu, 256'000}};
  for (int i = 0; i < 20'000; ++i) cluster.add_in_place(node);
  CHECK(cluster.get(r::memory) == 20'000LL * (2LL << 40));
  CHECK(cluster.get(r::cpu) == 20'000LL * 256'000);

  resource_vector pods;
  const resource_vector pod{{r::memory, 1LL << 40}};
  for (int i = 0; i < 1'000'000; ++i) pods.add_in_place(pod);
  CHECK(pods.get(r::memory) == 1'000'000LL * (1LL << 40));

  // ten times more does not fit 64 bits: detected, and exact in wide amounts
  wide_resource_vector wide = convert<big_int>(pods);
  const wide_resource_vector wpods = convert<big_int>(pods);
  for (int i = 0; i < 9; ++i) wide += wpods;
  CHECK(wide.get(r::memory) == big_int(10'000'000) * (big_int(1) << 40));
  REQUIRE_THROWS_AS(narrow(wide), overflow_error);
  resource_vector p = pods;
  REQUIRE_THROWS_AS(
      [&] {
        for (int i = 0; i < 9; ++i) p.add_in_place(pods);
      }(),
      overflow_error);
}

TEST_CASE("resource_vector: element-wise min/max respect the absent meaning") {
  limit_vector a{{r::cpu, 4000}};
  limit_vector b{{r::cpu, 2000}, {r::memory, 100}};
  auto mn = elementwise_min(a, b);
  CHECK(*mn.bound(r::cpu) == 2000);
  CHECK(*mn.bound(r::memory) == 100);  // min(unlimited, 100)
  auto mx = elementwise_max(a, b);
  CHECK(*mx.bound(r::cpu) == 4000);
  CHECK_FALSE(mx.bound(r::memory).has_value());  // max(unlimited, 100) = unlimited

  resource_vector u{{r::cpu, 4}};
  resource_vector v{{r::memory, 3}};
  auto umin = elementwise_min(u, v);
  CHECK(umin.get(r::cpu) == 0);
  CHECK(umin.get(r::memory) == 0);
  auto umax = elementwise_max(u, v);
  CHECK(umax.get(r::cpu) == 4);
  CHECK(umax.get(r::memory) == 3);
}

TEST_CASE("resource_vector: clamped subtraction, less_equal and equality") {
  resource_vector a{{r::cpu, 5}, {r::memory, 2}};
  resource_vector b{{r::cpu, 3}, {r::memory, 9}};
  auto d = clamped_sub(a, b);
  CHECK(d.get(r::cpu) == 2);
  CHECK(d.get(r::memory) == 0);
  CHECK(less_equal(b - b, a));
  CHECK_FALSE(less_equal(a, b));
  CHECK(less_equal(resource_vector{{r::cpu, 3}}, b));
  CHECK(resource_vector{{r::cpu, 0}} == resource_vector{});  // explicit 0 == absent for usage
  CHECK_FALSE(limit_vector{{r::cpu, 0}} == limit_vector{});  // but not for limits: 0 != unlimited
}

TEST_CASE("resource_vector: exact scaling and dominant share") {
  resource_vector v{{r::cpu, 10}, {r::nvidia_gpu, 7}};
  auto s = scale(v, fraction(1, 3));
  CHECK(s.get(r::cpu) == 3);
  CHECK(s.get(r::nvidia_gpu) == 2);
  auto c = scale(v, fraction(1, 3), rounding::ceil);
  CHECK(c.get(r::cpu) == 4);
  CHECK(c.get(r::nvidia_gpu) == 3);

  resource_vector total{{r::cpu, 100}, {r::nvidia_gpu, 8}};
  auto ds = dominant_share(v, total);
  CHECK(ds.resource == r::nvidia_gpu);
  CHECK(ds.value == fraction(7, 8));
  resource_vector none;
  CHECK(dominant_share(none, total).value == fraction(0));
  resource_vector mem{{r::memory, 1}};
  CHECK(dominant_share(mem, total).value.is_infinite());
}

TEST_CASE("resource_vector: fixed resource sets behave like dynamic ones") {
  using vec = fixed_resource_vector<"cpu", "memory", "nvidia.com/gpu">;
  using lim = fixed_limit_vector<"cpu", "memory", "nvidia.com/gpu">;
  vec a{{0, 1000}, {2, 1}};
  lim l{{0, 2000}};
  CHECK(fits(a, l));
  lim l2{{0, 2000}, {2, 0}};
  CHECK_FALSE(fits(a, l2));
  vec b = a + vec{{1, 5}};
  CHECK(b.get(1) == 5);
  CHECK(b.size() == 3);
  std::int64_t sum = 0;
  for (auto e : b) sum += e.value;
  CHECK(sum == 1006);
  REQUIRE_THROWS_AS(a.set(7, 1), unknown_entity_error);
}

TEST_CASE("resource_vector: random operations agree with a plain reference model") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::array<std::int64_t, 8> ref_a{}, ref_b{}, ref_l{};
    std::array<bool, 8> has_l{};
    resource_vector a, b;
    limit_vector l;
    for (resource_id id = 0; id < 8; ++id) {
      if (rng() % 2) {
        ref_a[id] = static_cast<std::int64_t>(rng() % 1000) - 200;  // some not asked for (<= 0)
        a.set(id, ref_a[id]);
      }
      if (rng() % 2) {
        ref_b[id] = static_cast<std::int64_t>(rng() % 1000);
        b.set(id, ref_b[id]);
      }
      if (rng() % 2) {
        has_l[id] = true;
        ref_l[id] = static_cast<std::int64_t>(rng() % 2000);
        l.set(id, ref_l[id]);
      }
    }
    bool ref_fits = true, ref_fits_with = true, ref_le = true;
    for (std::size_t i = 0; i < 8; ++i) {
      if (ref_a[i] > 0 && has_l[i] && ref_a[i] > ref_l[i]) ref_fits = false;
      if (ref_a[i] > 0 && has_l[i] && ref_a[i] + ref_b[i] > ref_l[i]) ref_fits_with = false;
      if (ref_a[i] > ref_b[i]) ref_le = false;
    }
    resource_vector strict;  // the same limit, its absent dimensions zero
    bool ref_fits_strict = true;
    for (resource_id id = 0; id < 8; ++id) {
      if (has_l[id]) strict.set(id, ref_l[id]);
      if (ref_a[id] > 0 && (!has_l[id] || ref_a[id] > ref_l[id])) ref_fits_strict = false;
    }
    CHECK(fits(a, l) == ref_fits);
    CHECK(fits(a, strict) == ref_fits_strict);
    CHECK(fits_with(b, a, l) == ref_fits_with);
    CHECK(less_equal(a, b) == ref_le);
    auto s = a + b;
    for (resource_id id = 0; id < 8; ++id) CHECK(s.get(id) == ref_a[id] + ref_b[id]);
  }
}

TEST_CASE("resource_vector: in-place sums over interleaved dimensions keep ids sorted and are strong") {
  std::mt19937_64 rng(777);
  for (int round = 0; round < 500; ++round) {
    std::array<std::int64_t, 12> ref_a{}, ref_b{};
    std::array<bool, 12> in_a{}, in_b{};
    resource_vector a, b;
    for (resource_id id = 0; id < 12; ++id) {
      if (rng() % 3 == 0) {
        in_a[id] = true;
        ref_a[id] = static_cast<std::int64_t>(rng() % 100);
        a.set(id, ref_a[id]);
      }
      if (rng() % 3 == 0) {
        in_b[id] = true;
        ref_b[id] = static_cast<std::int64_t>(rng() % 100);
        b.set(id, ref_b[id]);
      }
    }
    resource_vector sum = a, diff = a;
    sum.add_in_place(b);
    diff.sub_in_place(b);
    resource_id last = 0;
    bool first = true;
    std::size_t present = 0;
    for (const auto& e : sum) {
      CHECK((first || last < e.id));  // the union, still in ascending id order
      first = false;
      last = e.id;
      ++present;
    }
    std::size_t expected = 0;
    for (resource_id id = 0; id < 12; ++id) {
      expected += (in_a[id] || in_b[id]) ? 1 : 0;
      CHECK(sum.get(id) == ref_a[id] + ref_b[id]);
      CHECK(diff.get(id) == ref_a[id] - ref_b[id]);
      CHECK(sum.has(id) == (in_a[id] || in_b[id]));
      CHECK(diff.has(id) == (in_a[id] || in_b[id]));
    }
    CHECK(present == expected);
  }
  // a vector added to itself doubles; a new dimension beside an overflowing one changes nothing
  resource_vector self{{r::cpu, 3}, {r::memory, 4}};
  self.add_in_place(self);
  CHECK(self.get(r::cpu) == 6);
  CHECK(self.get(r::memory) == 8);
  self.sub_in_place(self);
  CHECK(self.is_zero());
  resource_vector big{{r::memory, INT64_MAX}};
  const resource_vector big_before = big;
  const resource_vector more{{r::cpu, 1}, {r::memory, 1}};
  REQUIRE_THROWS_AS(big.add_in_place(more), overflow_error);
  CHECK(big == big_before);
  CHECK_FALSE(big.has(r::cpu));
  resource_vector low{{r::memory, 1}};
  const resource_vector min_cpu{{r::cpu, INT64_MIN}};
  REQUIRE_THROWS_AS(low.sub_in_place(min_cpu), overflow_error);  // 0 - INT64_MIN
  CHECK_FALSE(low.has(r::cpu));
  CHECK(low.get(r::memory) == 1);
}

TEST_CASE("resource_vector: can_add_in_place and can_sub_in_place: present dimensions and no overflow") {
  const resource_vector used{{r::cpu, 10}, {r::memory, 20}};
  CHECK(used.can_add_in_place(resource_vector{{r::cpu, 1}}));
  CHECK(used.can_add_in_place(resource_vector{{r::cpu, 1}, {r::memory, 2}}));
  CHECK(used.can_add_in_place(resource_vector{}));
  CHECK_FALSE(used.can_add_in_place(resource_vector{{r::nvidia_gpu, 1}}));  // a new dimension
  CHECK_FALSE(used.can_add_in_place(resource_vector{{r::cpu, 1}, {r::nvidia_gpu, 0}}));
  CHECK_FALSE(used.can_add_in_place(resource_vector{{r::memory, INT64_MAX}}));  // overflow
  CHECK(used.can_sub_in_place(resource_vector{{r::memory, 25}}));               // may go negative
  CHECK_FALSE(used.can_sub_in_place(resource_vector{{r::cpu, INT64_MIN}}));
  CHECK_FALSE(used.can_sub_in_place(resource_vector{{r::nvidia_gpu, 1}}));
  // whenever it says yes, the sum changes only values and never throws
  resource_vector copy = used;
  const resource_vector more{{r::memory, 5}};
  REQUIRE(copy.can_add_in_place(more));
  copy.add_in_place(more);
  CHECK(copy.size() == used.size());
  CHECK(copy.get(r::memory) == 25);

  using vec = fixed_resource_vector<"cpu", "memory", "nvidia.com/gpu">;
  const vec f{{0, 10}, {1, 20}};
  CHECK(f.can_add_in_place(vec{{0, 1}}));
  CHECK_FALSE(f.can_add_in_place(vec{{2, 1}}));
  CHECK_FALSE(f.can_add_in_place(vec{{1, INT64_MAX}}));
  CHECK(f.can_sub_in_place(vec{{1, 1}}));
  CHECK_FALSE(f.can_sub_in_place(vec{{0, INT64_MIN}}));

  // arbitrary precision may allocate while it sums: never "cannot throw"
  const wide_resource_vector w = convert<big_int>(used);
  CHECK_FALSE(w.can_add_in_place(w));
  CHECK_FALSE(w.can_sub_in_place(w));
  wide_resource_vector w2 = w;
  w2 += w;  // still exact, summed aside
  CHECK(w2.get(r::memory) == 40);
}

TEST_CASE("resource_vector: push_back equals set, in ascending order and out of it") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    resource_vector by_set, by_push;
    fixed_resource_vector<"cpu", "memory", "nvidia.com/gpu"> fixed_set, fixed_push;
    const int n = static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      // mostly ascending ids (the fast path), sometimes lower or repeated ones (the fallback)
      const auto id = static_cast<resource_id>(rng() % 6);
      const auto v = static_cast<amount>(rng() % 1000) - 100;
      by_set.set(id, v);
      by_push.push_back(id, v);
      if (id < 3) {
        fixed_set.set(id, v);
        fixed_push.push_back(id, v);
      }
    }
    CHECK(by_push == by_set);
    CHECK(fixed_push == fixed_set);
    // iteration stays in id order after mixed push_back calls
    resource_id last = 0;
    bool first = true;
    for (const auto& [id, v] : by_push) {
      if (!first) CHECK(id > last);
      last = id;
      first = false;
    }
  }
}
