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
