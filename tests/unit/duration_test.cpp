// SPDX-License-Identifier: Apache-2.0
#include <quota/duration.hpp>

#include <random>

#include "quota_catch.hpp"

using quota::format_duration;
using quota::parse_duration_ms;

TEST_CASE("duration: single terms in every unit") {
  CHECK(parse_duration_ms("250ms") == 250);
  CHECK(parse_duration_ms("90s") == 90'000);
  CHECK(parse_duration_ms("5m") == 300'000);
  CHECK(parse_duration_ms("2h") == 7'200'000);
  CHECK(parse_duration_ms("7d") == 604'800'000);
  CHECK(parse_duration_ms("1w") == 604'800'000);
  CHECK(parse_duration_ms("1500") == 1500);  // a bare integer is milliseconds
  CHECK(parse_duration_ms("0") == 0);
  CHECK(parse_duration_ms("0s") == 0);
}

TEST_CASE("duration: compound terms, largest unit first") {
  CHECK(parse_duration_ms("1h30m") == 5'400'000);
  CHECK(parse_duration_ms("2d4h") == 2 * 86'400'000LL + 4 * 3'600'000LL);
  CHECK(parse_duration_ms("1w2d3h4m5s6ms") ==
        604'800'000LL + 2 * 86'400'000LL + 3 * 3'600'000LL + 4 * 60'000LL + 5'000 + 6);
  // a larger count than the next unit up is fine within one term
  CHECK(parse_duration_ms("90m") == 5'400'000);
}

TEST_CASE("duration: malformed text is rejected, never guessed") {
  for (const char* bad : {"", "h", "-1h", "+1h", "1.5h", "1 h", "1H", "1y", "1mo", "30m1h", "1h1h", "1h30", "1h-30m",
                          "ms", "1msx", " 1h", "1h "})
    CHECK_FALSE(parse_duration_ms(bad).has_value());
}

TEST_CASE("duration: values beyond int64 milliseconds are rejected, not wrapped") {
  CHECK(parse_duration_ms("9223372036854775807") == INT64_MAX);
  CHECK_FALSE(parse_duration_ms("9223372036854775808").has_value());
  CHECK(parse_duration_ms("9223372036854775s") == 9'223'372'036'854'775'000LL);
  CHECK_FALSE(parse_duration_ms("9223372036854776s").has_value());  // product overflows
  CHECK_FALSE(parse_duration_ms("15250284452w4d").has_value());     // the weeks fit, the sum does not
  CHECK(parse_duration_ms("15250284452w") == 15'250'284'452LL * 604'800'000LL);
  CHECK_FALSE(parse_duration_ms("99999999999999999999999ms").has_value());
}

TEST_CASE("duration: parsing is usable at compile time") {
  static_assert(parse_duration_ms("1h30m").value() == 5'400'000);
  static_assert(!parse_duration_ms("1h1h").has_value());
  SUCCEED();
}

TEST_CASE("duration: format writes the compact form") {
  CHECK(format_duration(0) == "0ms");
  CHECK(format_duration(250) == "250ms");
  CHECK(format_duration(90'000) == "1m30s");
  CHECK(format_duration(5'400'000) == "1h30m");
  CHECK(format_duration(604'800'000) == "7d");
  CHECK(format_duration(86'400'000 + 1) == "1d1ms");
  CHECK(format_duration(-5'400'000) == "-1h30m");
  CHECK(format_duration(INT64_MAX) == "106751991167d7h12m55s807ms");
  CHECK(format_duration(INT64_MIN) == "-106751991167d7h12m55s808ms");
}

TEST_CASE("duration: format then parse is the identity for non-negative values") {
  std::mt19937_64 rng(20261123);
  std::uniform_int_distribution<std::int64_t> any(0, INT64_MAX);
  std::uniform_int_distribution<std::int64_t> small(0, 10LL * 86'400'000);
  for (int i = 0; i < 20'000; ++i) {
    const std::int64_t x = i % 2 ? any(rng) : small(rng);
    const auto text = format_duration(x);
    const auto back = parse_duration_ms(text);
    REQUIRE(back.has_value());
    REQUIRE(*back == x);
  }
  CHECK(parse_duration_ms(format_duration(INT64_MAX)) == INT64_MAX);
}
