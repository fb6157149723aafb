// SPDX-License-Identifier: Apache-2.0
// quota/big_int.hpp — opt-in wide integers (Boost.Multiprecision): big_int,
// rational, wide_resource_vector, and the exact widening of quota's own
// 128-bit-backed values. The core and model headers do not include it.
#pragma once

#include <string>

#include <boost/multiprecision/cpp_int.hpp>

#include <quota/detail/checked.hpp>
#include <quota/fraction.hpp>
#include <quota/quantity.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// Arbitrary-precision exact rational, for sums and products beyond 128 bits.
using rational = boost::multiprecision::cpp_rational;
/// Arbitrary-precision integer.
using big_int = boost::multiprecision::cpp_int;

/// Arbitrary-precision usage, for sums that may exceed 64 bits.
using wide_resource_vector = basic_resource_vector<big_int, dynamic_resources, absent_means::zero>;

/// Narrows a wide vector back to int64; throws overflow_error if any amount does not fit.
template <class S, absent_means AB>
[[nodiscard]] basic_resource_vector<amount, S, AB> narrow(const basic_resource_vector<big_int, S, AB>& v) {
  basic_resource_vector<amount, S, AB> r;
  for (const auto& e : v) r.set(e.id, detail::narrow<amount>(e.value));
  return r;
}

/// A 128-bit integer as a big_int, exactly.
[[nodiscard]] inline big_int to_big_int(detail::int128 v) {
  const bool neg = v < 0;
  // |v| in unsigned arithmetic: -(INT128_MIN) is not an int128
  const detail::uint128 mag =
      neg ? detail::uint128{0} - static_cast<detail::uint128>(v) : static_cast<detail::uint128>(v);
  big_int r = static_cast<std::uint64_t>(mag >> 64);
  r <<= 64;
  r += static_cast<std::uint64_t>(mag);
  return neg ? big_int(-r) : r;
}

/// A fraction as a rational. An infinite fraction has no rational value: overflow_error.
[[nodiscard]] inline rational to_rational(const fraction& f) {
  if (f.is_infinite()) detail::throw_overflow("an infinite fraction as a rational");
  return rational(big_int(f.num()), big_int(f.den()));
}
/// A wide fraction as a rational. An infinite one has no rational value: overflow_error.
[[nodiscard]] inline rational to_rational(const wide_fraction& f) {
  if (f.is_infinite()) detail::throw_overflow("an infinite fraction as a rational");
  return rational(to_big_int(f.num()), to_big_int(f.den()));
}

/// The exact value of a quantity, mantissa * 10^exp10 * 1024^exp1024.
[[nodiscard]] inline rational to_rational(const quantity& q) {
  rational r = q.mantissa();
  big_int p10 = 1;
  const int e = q.exp10();
  for (int i = 0; i < (e < 0 ? -e : e); ++i) p10 *= 10;
  if (e >= 0)
    r *= p10;
  else
    r /= p10;
  r *= big_int(1) << (10 * q.exp1024());
  return r;
}

/// A non-negative exact value in decimal, rounded half up to `places` digits
/// after the point ("0.666667" for 2/3 at 6 places).
[[nodiscard]] inline std::string decimal_string(const rational& v, int places) {
  big_int scale = 1;
  for (int i = 0; i < places; ++i) scale *= 10;
  const big_int scaled = (numerator(v) * scale * 2 + denominator(v)) / (denominator(v) * 2);
  const big_int whole = scaled / scale, frac = scaled % scale;
  if (places <= 0) return whole.str();
  const std::string f = frac.str();
  return whole.str() + "." + std::string(static_cast<std::size_t>(places) - f.size(), '0') + f;
}

/// An exact value as text: "3" when whole, else "numerator/denominator" in lowest terms.
[[nodiscard]] inline std::string fraction_string(const rational& v) {
  if (denominator(v) == 1) return numerator(v).str();
  return numerator(v).str() + "/" + denominator(v).str();
}

}  // namespace quota
