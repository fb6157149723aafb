// SPDX-License-Identifier: Apache-2.0
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
