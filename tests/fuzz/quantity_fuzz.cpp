// SPDX-License-Identifier: Apache-2.0
// Fuzz: Kubernetes quantities.
// Properties: parse and try_parse agree; a rejected text throws parse_error
// only; parse -> to_string -> parse gives the same value and the same text
// (to_string is canonical); base amounts at scales 0, 3, 9 format and parse
// back to the same amount.
#include <quota/quantity.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace quota;
  const std::string_view text = fuzz::as_text(data, size);
  quantity q;
  const bool ok = fuzz::typed([&] { q = quantity::parse(text); });
  quantity q_try;
  const bool try_ok = quantity::try_parse(text, q_try);
  fuzz::require(ok == try_ok, "parse and try_parse disagree on '" + std::string(text) + "'");
  if (!ok) return 0;
  fuzz::require(q_try == q, "parse and try_parse give different values");
  const std::string s = q.to_string();
  quantity q2;
  if (!fuzz::typed([&] { q2 = quantity::parse(s); })) {
    fuzz::fail("canonical form '" + s + "' of '" + std::string(text) + "' does not parse");
  }
  fuzz::require(q2 == q, "'" + std::string(text) + "' -> '" + s + "' changes the value");
  fuzz::require(q2.to_string() == s, "to_string is not a fixpoint: '" + s + "' -> '" + q2.to_string() + "'");
  for (const int scale : {0, 3, 9}) {
    std::int64_t a = 0;
    if (!fuzz::typed([&] { a = parse_amount(text, scale); })) continue;
    for (const auto fmt :
         {quantity_format::decimal_si, quantity_format::binary_si, quantity_format::decimal_exponent}) {
      std::string f;
      fuzz::require(fuzz::typed([&] { f = format_amount(a, scale, fmt); }), "format_amount throws");
      std::int64_t b = -1;
      fuzz::require(fuzz::typed([&] { b = parse_amount(f, scale); }), "formatted amount '" + f + "' does not parse");
      fuzz::require(a == b, "amount " + std::to_string(a) + " at scale " + std::to_string(scale) + " -> '" + f +
                                "' -> " + std::to_string(b));
    }
  }
  return 0;
}
