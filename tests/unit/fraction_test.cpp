// SPDX-License-Identifier: Apache-2.0
#include <quota/big_int.hpp>
#include <quota/fraction.hpp>

#include <random>

#include "quota_catch.hpp"

using quota::fraction;

TEST_CASE("fraction: comparisons are exact where doubles are not") {
  // 2^53 + 1 over 2^53 vs 1: equal as doubles, different as fractions
  const std::int64_t p = (1LL << 53);
  CHECK(static_cast<double>(p + 1) / static_cast<double>(p) == 1.0);
  CHECK(fraction(p + 1, p) > fraction(1));
  // large numerators and denominators near the int64 limits
  CHECK(fraction(INT64_MAX, INT64_MAX - 1) < fraction(INT64_MAX - 1, INT64_MAX - 2));
  CHECK(fraction(INT64_MAX - 1, INT64_MAX) < fraction(1));
}

TEST_CASE("fraction: normalisation, signs and infinity") {
  CHECK(fraction(6, -4) == fraction(-3, 2));
  CHECK(fraction(6, -4).num() == -3);
  CHECK(fraction(6, -4).den() == 2);
  CHECK(fraction(5, 0).is_infinite());
  CHECK(fraction(5, 0) == fraction::infinity());
  CHECK(fraction(-5, 0) < fraction(INT64_MIN + 1));
  REQUIRE_THROWS_AS(fraction(1, 0).apply_floor(3), quota::overflow_error);
  REQUIRE_THROWS_AS(fraction(INT64_MAX, 1).apply_floor(2), quota::overflow_error);
}

TEST_CASE("fraction: random comparisons agree with exact rationals") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const auto a = static_cast<std::int64_t>(rng() >> 2), b = static_cast<std::int64_t>((rng() >> 2) | 1);
    const auto c = static_cast<std::int64_t>(rng() >> 2), d = static_cast<std::int64_t>((rng() >> 2) | 1);
    const quota::rational ra(a, b), rc(c, d);
    CHECK((fraction(a, b) < fraction(c, d)) == (ra < rc));
    CHECK((fraction(a, b) == fraction(c, d)) == (ra == rc));
  }
}

TEST_CASE("fraction: the edges of the sign, of zero over zero and of infinities") {
  // flipping the sign of INT64_MIN cannot be represented: an overflow, never a wrap
  CHECK_THROWS_AS(fraction(INT64_MIN, -1), quota::overflow_error);
  CHECK_THROWS_AS(fraction(1, INT64_MIN), quota::overflow_error);
  CHECK(fraction(INT64_MIN, 2) == fraction(INT64_MIN / 2));  // a negative numerator alone is fine
  // 0/0 is 0 (a share of nothing), not an infinity; 0/-5 is 0 as well
  CHECK(fraction(0, 0) == fraction(0));
  CHECK_FALSE(fraction(0, 0).is_infinite());
  CHECK(fraction(0, -5) == fraction(0));
  // -infinity: below every finite value and below +infinity, equal to itself
  const fraction minus_inf(-7, 0);
  CHECK(minus_inf.is_infinite());
  CHECK(minus_inf == fraction(-1, 0));
  CHECK(minus_inf < fraction(INT64_MIN + 1, 1));
  CHECK(fraction(INT64_MIN + 1, 1) > minus_inf);
  CHECK(minus_inf < fraction::infinity());
  CHECK(fraction::infinity() > fraction(INT64_MAX));
  CHECK((fraction::infinity() <=> fraction(2, 0)) == std::strong_ordering::equal);
  // doubles for display only
  CHECK(fraction::infinity().to_double() > 1e308);
  CHECK(minus_inf.to_double() < -1e308);
  CHECK(fraction(0, 0).to_double() == 0.0);
  CHECK(fraction(1, 4).to_double() == 0.25);
}

TEST_CASE("fraction: floor and ceil scaling round the right way on both signs") {
  const fraction third(1, 3), minus_third(-1, 3);
  CHECK(third.apply_floor(10) == 3);
  CHECK(third.apply_ceil(10) == 4);
  CHECK(third.apply_floor(-10) == -4);  // floor(-3.33) = -4
  CHECK(third.apply_ceil(-10) == -3);   // ceil(-3.33) = -3
  CHECK(minus_third.apply_floor(10) == -4);
  CHECK(minus_third.apply_ceil(10) == -3);
  CHECK(minus_third.apply_floor(-10) == 3);
  CHECK(minus_third.apply_ceil(-10) == 4);
  CHECK(third.apply_floor(9) == 3);  // exact: no rounding either way
  CHECK(third.apply_ceil(-9) == -3);
  CHECK(fraction(0).apply_ceil(INT64_MAX) == 0);
  CHECK_THROWS_AS(fraction::infinity().apply_ceil(1), quota::overflow_error);
  CHECK_THROWS_AS(fraction(-1, 0).apply_floor(1), quota::overflow_error);
  CHECK_THROWS_AS(fraction(3, 2).apply_ceil(INT64_MAX), quota::overflow_error);
}

namespace {
using quota::big_int;
using quota::rational;
using quota::wide_fraction;
namespace qd = quota::detail;

constexpr qd::uint128 u128_max = ~qd::uint128{0};

big_int big_u(qd::uint128 v) {
  return quota::to_big_int(static_cast<qd::int128>(v >> 1)) * 2 + static_cast<int>(v & 1);
}
big_int big_of(const qd::wide_uint& w) {
  big_int r = 0;
  for (std::size_t i = w.limb.size(); i-- > 0;) r = (r << 64) + w.limb[i];
  return r;
}
qd::uint128 random_u128(std::mt19937_64& rng, int bits) {
  const qd::uint128 v = (static_cast<qd::uint128>(rng()) << 64) | rng();
  return bits >= 128 ? v : v & ((qd::uint128{1} << bits) - 1);
}
}  // namespace

TEST_CASE("fraction: wide products are exact up to 320 bits, where 128 bits no longer suffice") {
  // the largest operands: (2^128 - 1)^2 (2^64 - 1) needs all five limbs
  const auto top = qd::wide_product(u128_max, u128_max, UINT64_MAX);
  CHECK(big_of(top) == big_u(u128_max) * big_u(u128_max) * big_int(UINT64_MAX));
  // products that differ only below bit 128, and only above it
  CHECK(std::is_lt(qd::compare_products(u128_max, u128_max, UINT64_MAX - 1, u128_max, u128_max, UINT64_MAX)));
  CHECK(std::is_gt(qd::compare_products(u128_max, u128_max, 1, u128_max - 1, u128_max, 1)));
  CHECK(std::is_eq(qd::compare_products(qd::uint128{1} << 100, 3, 4, qd::uint128{1} << 102, 3, 1)));
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const int bits = 64 + static_cast<int>(rng() % 65);  // 64..128 bits: most products pass 2^128
    const auto a = random_u128(rng, bits), b = random_u128(rng, bits), d = random_u128(rng, bits);
    const auto e = random_u128(rng, bits);
    const std::uint64_t c = rng(), f = rng();
    const big_int l = big_u(a) * big_u(b) * big_int(c), r = big_u(d) * big_u(e) * big_int(f);
    REQUIRE(big_of(qd::wide_product(a, b, c)) == l);
    CHECK(std::is_lt(qd::compare_products(a, b, c, d, e, f)) == (l < r));
    CHECK(std::is_eq(qd::compare_products(a, b, c, a, b, c)));
  }
  // sums and products past 2^320 are an overflow, never a wrap
  CHECK_THROWS_AS(top.plus(top), quota::overflow_error);
  CHECK_THROWS_AS(top.times(2), quota::overflow_error);
  CHECK(big_of(qd::wide_uint::from(u128_max).plus(qd::wide_uint::from(1))) == big_u(u128_max) + 1);
}

TEST_CASE("fraction: wide fractions of 128-bit terms compare exactly and widen to rationals") {
  const qd::int128 max = qd::int128_max, min = qd::int128_min;
  // neighbours at the top of the range: the cross products need 254 bits
  CHECK(wide_fraction(max - 1, max) > wide_fraction(max - 2, max - 1));  // 1 - 1/max > 1 - 1/(max - 1)
  CHECK(wide_fraction(-(max - 1), max) < wide_fraction(-(max - 2), max - 1));
  CHECK(wide_fraction(max, 1) > wide_fraction(max - 1, 1));
  CHECK(wide_fraction(min, 1) < wide_fraction(min + 1, 1));
  CHECK(wide_fraction(6, 4) == wide_fraction(3, 2));  // lowest terms
  CHECK(wide_fraction(min, 2) == wide_fraction(min / 2));
  CHECK_THROWS_AS(wide_fraction(min, -1), quota::overflow_error);  // -INT128_MIN is not an int128
  CHECK(wide_fraction(1, 0).is_infinite());
  CHECK(wide_fraction(max, 1) < wide_fraction(1, 0));
  CHECK(wide_fraction(-1, 0) < wide_fraction(min, 1));
  CHECK(wide_fraction(0, 0) == wide_fraction(0));
  CHECK(wide_fraction(quota::fraction(2, 6)) == wide_fraction(1, 3));
  CHECK(quota::to_rational(wide_fraction(max, max - 1)) ==
        rational(quota::to_big_int(max), quota::to_big_int(max - 1)));
  CHECK(quota::to_big_int(min) == -(big_int(1) << 127));
  CHECK_THROWS_AS(quota::to_rational(wide_fraction(1, 0)), quota::overflow_error);
  std::mt19937_64 rng(13);
  for (int i = 0; i < 2000; ++i) {
    auto term = [&] {
      const int bits = 1 + static_cast<int>(rng() % 127);
      const auto v = static_cast<qd::int128>(random_u128(rng, bits));
      return rng() % 2 ? v : -v;
    };
    const qd::int128 a = term(), c = term();
    qd::int128 b = term(), d = term();
    if (b == 0) b = 1;
    if (d == 0) d = -1;
    const wide_fraction x(a, b), y(c, d);
    const rational rx = quota::to_rational(x), ry = quota::to_rational(y);
    // (Boost 1.74's rational mishandles a negative big denominator: the sign goes up first)
    REQUIRE(rx == (b > 0 ? rational(quota::to_big_int(a), quota::to_big_int(b))
                         : rational(quota::to_big_int(-a), quota::to_big_int(-b))));
    CHECK(std::is_lt(x <=> y) == (rx < ry));
    CHECK((x == y) == (rx == ry));
  }
}
