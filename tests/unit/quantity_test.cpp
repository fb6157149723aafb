// SPDX-License-Identifier: Apache-2.0
#include <quota/big_int.hpp>
#include <quota/quantity.hpp>

#include <string>
#include <vector>

#include "quota_catch.hpp"

using quota::quantity;

TEST_CASE("quantity: every Kubernetes form parses to the exact base amount") {
  struct row {
    const char* text;
    int scale;
    std::int64_t base;
  };
  const std::vector<row> rows = {
      {"100m", 3, 100},
      {"1.5", 3, 1500},
      {"2Gi", 0, 2LL << 30},
      {"500M", 0, 500'000'000},
      {"1e3", 0, 1000},
      {"0.1", 3, 100},
      {"+1", 0, 1},
      {"1E", 0, 1'000'000'000'000'000'000},
      {"1Ki", 0, 1024},
      {"1.5Gi", 0, 1610612736},
      {"0.5Ki", 0, 512},
      {"250u", 6, 250},
      {"3n", 9, 3},
      {"1k", 0, 1000},
      {"12T", 0, 12'000'000'000'000},
      {"1P", 0, 1'000'000'000'000'000},
      {"1Ti", 0, 1LL << 40},
      {"1Pi", 0, 1LL << 50},
      {"2Ei", 0, 2LL << 60},
      {"1E3", 0, 1000},
      {"1e-3", 3, 1},
      {"1.e3", 0, 1000},
      {".5", 3, 500},
      {"0", 0, 0},
      {"-0", 0, 0},
      {"007", 0, 7},
      {"1.000", 0, 1},
      {"5e+2", 0, 500},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    CHECK(quantity::parse(r.text).to_base(r.scale) == r.base);
  }
}

TEST_CASE("quantity: format(parse(x)) is canonical Kubernetes text") {
  const std::vector<std::pair<const char*, const char*>> rows = {
      {"100m", "100m"},   {"0.1", "100m"},     {"1.5", "1500m"},      {"1000", "1k"},
      {"1500", "1500"},   {"1e3", "1e3"},      {"1E", "1E"},          {"+1", "1"},
      {"2Gi", "2Gi"},     {"1.5Gi", "1536Mi"}, {"2048Ki", "2Mi"},     {"0.5Ki", "512"},
      {"1000m", "1"},     {"0", "0"},          {"-2", "-2"},          {"1024Ki", "1Mi"},
      {"1.5e3", "1500"},  {"10e-3", "10e-3"},  {"1.1Ki", "1126400m"}, {"500M", "500M"},
      {"1000000k", "1G"}, {"62.5Ki", "64k"},   {"1.5Ki", "1536"},     {"0.9765625Ki", "1k"},
  };
  for (const auto& [in, out] : rows) {
    INFO(in);
    CHECK(quantity::parse(in).to_string() == out);
    // canonical text is a fixed point
    CHECK(quantity::parse(out).to_string() == out);
    // and denotes the same value
    CHECK(quantity::parse(out) == quantity::parse(in));
  }
}

TEST_CASE("quantity: malformed text is a typed parse error naming the text") {
  for (const char* bad : {"", "abc", "1.2.3", "1x", "1Ki2", "--1", "1 ", " 1", "1e", "1e+", "Mi", ".", "+", "1ki",
                          "1mi", "1.5.Gi", "0x10", "1e1.5"}) {
    INFO(bad);
    try {
      (void)quantity::parse(bad);
      FAIL("accepted a malformed quantity");
    } catch (const quota::parse_error& e) {
      CHECK(e.id() == quota::error_id::parse_malformed_quantity);
      CHECK(std::string(e.what()).find("[quota.parse_error.101]") == 0);
      CHECK(std::string(e.what()).find(std::string("'") + bad + "'") != std::string::npos);
    }
  }
}

TEST_CASE("quantity: too precise, out of range and negative values are rejected") {
  // finer than the base unit
  REQUIRE_THROWS_AS(quantity::parse("1.5").to_base(0), quota::parse_error);
  try {
    (void)quantity::parse("100m").to_base(0);
    FAIL("100m is not a whole number of units");
  } catch (const quota::parse_error& e) {
    CHECK(e.id() == quota::error_id::parse_too_precise);
  }
  // finer than a nano-unit, as Kubernetes' own limit
  REQUIRE_THROWS_AS(quantity::parse("0.0000000001"), quota::parse_error);
  // beyond int64 in base units
  try {
    (void)quantity::parse("8Ei").to_base(0);
    FAIL("8Ei overflows int64 bytes");
  } catch (const quota::parse_error& e) {
    CHECK(e.id() == quota::error_id::parse_quantity_out_of_range);
  }
  REQUIRE_THROWS_AS(quantity::parse("1e19").to_base(0), quota::parse_error);
  REQUIRE_THROWS_AS(quantity::parse("99999999999999999999"), quota::parse_error);
  REQUIRE_THROWS_AS(quantity::parse("1e1001"), quota::parse_error);
  // the largest int64 is fine, one more is not
  CHECK(quantity::parse("9223372036854775807").to_base(0) == INT64_MAX);
  REQUIRE_THROWS_AS(quantity::parse("9223372036854775808"), quota::parse_error);
  CHECK(quantity::parse("-9223372036854775807").to_base(0) == -INT64_MAX);
  // negative where not allowed
  try {
    (void)quota::parse_amount("-1", 0);
    FAIL("negative accepted");
  } catch (const quota::parse_error& e) {
    CHECK(e.id() == quota::error_id::parse_negative_quantity);
  }
  CHECK(quantity::parse("-1").is_negative());
}

TEST_CASE("quantity: base units in 128 bits up to a bound, exact") {
  using quota::detail::int128;
  using st = quota::detail::quantity_status;
  const int128 bound = (int128{1} << 88) - 1;
  int128 v = 0;
  // 1E cores in millicores: 10^21, beyond int64
  REQUIRE(quantity::parse("1E").to_base_into(3, v, bound) == st::ok);
  CHECK(v == int128{1'000'000'000'000'000'000} * 1000);
  REQUIRE(quantity::parse("100000Ei").to_base_into(0, v, bound) == st::ok);
  CHECK(v == (int128{100000} << 60));
  REQUIRE(quantity::parse("-8Ei").to_base_into(0, v, bound) == st::ok);
  CHECK(v == -(int128{8} << 60));
  // past the bound, by a power of ten and by the last unit
  v = 7;
  CHECK(quantity::parse("1e27").to_base_into(0, v, bound) == st::out_of_range);
  CHECK(quantity::parse("1e400").to_base_into(0, v, bound) == st::out_of_range);
  CHECK(v == 7);  // left alone
  // 2^88 - 1 is about 3.09e26: 3e26 is within, 3.1e26 is not; 2^88 - 2^60 is within, 2^88 is not
  REQUIRE(quantity::parse("3e26").to_base_into(0, v, bound) == st::ok);
  CHECK(v == int128{300'000'000} * 1'000'000'000'000'000'000);
  CHECK(quantity::parse("31e25").to_base_into(0, v, bound) == st::out_of_range);
  REQUIRE(quantity::parse("268435455Ei").to_base_into(0, v, bound) == st::ok);
  CHECK(v == (int128{1} << 88) - (int128{1} << 60));
  CHECK(quantity::parse("268435456Ei").to_base_into(0, v, bound) == st::out_of_range);
  // finer than the base unit
  CHECK(quantity::parse("0.0001").to_base_into(3, v, bound) == st::too_precise);
  // the int64 conversion keeps its range, INT64_MIN included
  std::int64_t w = 0;
  CHECK(quantity::parse("-8Ei").to_base_into(0, w) == st::ok);
  CHECK(w == INT64_MIN);
  CHECK(quantity::parse("8Ei").to_base_into(0, w) == st::out_of_range);
}

TEST_CASE("quantity: a fractional binary value whose canonical text would not parse back is rejected") {
  // found by tests/fuzz/quantity_fuzz: 100010.191951Gi is written in decimal SI
  // as 107385125924056858624u, 21 digits, more than the 64-bit mantissa holds
  try {
    (void)quantity::parse("100010.191951Gi");
    FAIL("accepted");
  } catch (const quota::parse_error& e) {
    CHECK(e.id() == quota::error_id::parse_quantity_out_of_range);
  }
  // a smaller fractional binary value round-trips through its canonical text
  for (const char* text : {"1.5Gi", "0.3Ki", "10.191951Gi", "-2.25Mi"}) {
    INFO(text);
    const quantity q = quantity::parse(text);
    const quantity back = quantity::parse(q.to_string());
    CHECK(back == q);
    CHECK(back.to_string() == q.to_string());
  }
}

TEST_CASE("quantity: from_base formats amounts of base units") {
  CHECK(quota::format_amount(1500, 3) == "1500m");
  CHECK(quota::format_amount(2000, 3) == "2");
  CHECK(quota::format_amount(1LL << 30, 0, quota::quantity_format::binary_si) == "1Gi");
  // no binary suffix divides 1000: decimal SI, as Kubernetes prints a binary value below 1024
  CHECK(quota::format_amount(1000, 0, quota::quantity_format::binary_si) == "1k");
  // ... and above it too (Kubernetes prints 64000, which reads back as 64k)
  CHECK(quota::format_amount(64000, 0, quota::quantity_format::binary_si) == "64k");
  CHECK(quota::format_amount(500'000'000, 0, quota::quantity_format::binary_si) == "500M");
  CHECK(quota::format_amount(0, 3) == "0");
  CHECK(quota::format_amount(-1500, 3) == "-1500m");
  CHECK(quota::format_amount(INT64_MAX, 0) == "9223372036854775807");
}

TEST_CASE("quantity: try_parse never throws and leaves the output alone on failure") {
  quantity q = quantity::parse("7");
  CHECK_FALSE(quantity::try_parse("nope", q));
  CHECK(q.to_base(0) == 7);
  CHECK(quantity::try_parse("3Ki", q));
  CHECK(q.to_base(0) == 3072);
}

TEST_CASE("quantity: ordering compares exact values across formats") {
  CHECK(quantity::parse("1Ki") > quantity::parse("1k"));
  CHECK(quantity::parse("1000m") == quantity::parse("1"));
  CHECK(quantity::parse("1e3") == quantity::parse("1k"));
  CHECK(quantity::parse("0.5Ki") < quantity::parse("513"));
}

TEST_CASE("quantity: order, negative range and precision edges of to_base") {
  // ordering is by exact value whatever the spelling
  CHECK(quantity::parse("2") > quantity::parse("1500m"));
  CHECK(quantity::parse("1Ki") > quantity::parse("1k"));
  CHECK(quantity::parse("1Ki") < quantity::parse("1.1k"));
  CHECK((quantity::parse("1") <=> quantity::parse("1000m")) == std::strong_ordering::equal);
  // negative values beyond int64 in the base unit are out of range, not wrapped
  CHECK_THROWS_AS(quantity::parse("-9223372036854775807").to_base(3), quota::parse_error);
  CHECK_THROWS_AS(quantity::parse("-8Ei").to_base(1), quota::parse_error);
  CHECK(quantity::parse("-1Ki").to_base(0) == -1024);
  // a base unit finer than 10^-38 asks for more precision than exists: too precise, not an overflow
  try {
    (void)quantity::parse("1n").to_base(-40);
    FAIL("expected parse_error");
  } catch (const quota::parse_error& e) {
    CHECK(e.id() == quota::error_id::parse_too_precise);
  }
  CHECK(quantity::parse("0").to_base(-40) == 0);
  CHECK(quantity::parse("5000").to_base(-3) == 5);  // kilo units
}

TEST_CASE("quantity: ordering stays exact where the values pass 128 bits") {
  // 10^1000 against the largest binary value: no 128-bit product holds either
  CHECK(quantity::parse("1e1000") > quantity::parse("9223372036854775807Ei"));
  CHECK(quantity::parse("-1e1000") < quantity::parse("-9223372036854775807Ei"));
  // equal values spelt 1000 powers of ten apart are still equal
  CHECK(quantity::parse("1e999") == quantity::parse("1000e996"));
  CHECK(quantity::parse("9223372036854775807e900") > quantity::parse("9223372036854775806e900"));
  CHECK(quantity::parse("9223372036854775807e900") < quantity::parse("922337203685477581e902"));
  CHECK(quantity::parse("1n") < quantity::parse("1e1000"));  // 10^1009 apart
  // 2^123 (the largest |mantissa| x 1024^6) next to powers of ten around it
  const auto top = quantity::parse("8Ei") <=> quantity::parse("8Ei");
  CHECK(top == std::strong_ordering::equal);
  CHECK(quantity::parse("9223372036854775807Ei") > quantity::parse("1e37"));  // 2^123 - 2^60 ~ 1.06e37
  CHECK(quantity::parse("9223372036854775807Ei") < quantity::parse("1.1e37"));
  // every pair of a spread of spellings agrees with the exact rational values
  const std::vector<const char*> texts = {
      "0",     "1",          "-1",   "1n",     "999999999n", "1Ki",  "1024",
      "1.5Gi", "1610612736", "1e18", "1E",     "8Ei",        "-8Ei", "9223372036854775807Ei",
      "1e37",  "1e38",       "1e-9", "7e1000", "-7e1000",    "3e-9", "0.5Ki",
      "512",   "512001m",    "1e3"};
  for (const char* a : texts)
    for (const char* b : texts) {
      const auto qa = quantity::parse(a), qb = quantity::parse(b);
      const auto ra = quota::to_rational(qa), rb = quota::to_rational(qb);
      INFO(a << " vs " << b);
      CHECK(std::is_lt(qa <=> qb) == (ra < rb));
      CHECK((qa == qb) == (ra == rb));
    }
}
