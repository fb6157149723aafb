// SPDX-License-Identifier: Apache-2.0
// quota/detail/wide_product.hpp — exact products, short sums and comparisons
// beyond 128 bits (up to 320) without an arbitrary-precision type.
#pragma once

#include <array>
#include <compare>
#include <cstdint>

#include <quota/detail/checked.hpp>

namespace quota::detail {

inline constexpr int128 int128_max = static_cast<int128>(~uint128{0} >> 1);
inline constexpr int128 int128_min = -int128_max - 1;

/// |v| in unsigned arithmetic: |INT128_MIN| is not an int128.
[[nodiscard]] constexpr uint128 magnitude(int128 v) noexcept {
  return v < 0 ? uint128{0} - static_cast<uint128>(v) : static_cast<uint128>(v);
}

/// gcd of unsigned 128-bit integers (std::gcd takes __int128 only in GNU modes).
[[nodiscard]] constexpr uint128 gcd_u128(uint128 a, uint128 b) noexcept {
  while (b != 0) {
    const uint128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// A fixed-width unsigned integer of five 64-bit limbs (least significant
/// first), for the few exact sums and comparisons whose terms pass 128 bits:
/// products of two 128-bit factors and a 64-bit one (below 2^320) and short
/// sums of smaller products. It is not an arbitrary-precision type: a result
/// beyond 2^320 throws overflow_error (no caller reaches it; each states why).
struct wide_uint {
  std::array<std::uint64_t, 5> limb{};

  [[nodiscard]] static constexpr wide_uint from(uint128 v) noexcept {
    wide_uint r;
    r.limb[0] = static_cast<std::uint64_t>(v);
    r.limb[1] = static_cast<std::uint64_t>(v >> 64);
    return r;
  }
  [[nodiscard]] constexpr bool is_zero() const noexcept {
    for (const auto l : limb)
      if (l != 0) return false;
    return true;
  }
  /// *this + o, exact.
  [[nodiscard]] constexpr wide_uint plus(const wide_uint& o) const {
    wide_uint r;
    uint128 carry = 0;
    for (std::size_t i = 0; i < limb.size(); ++i) {
      const uint128 t = static_cast<uint128>(limb[i]) + o.limb[i] + carry;  // < 2^65
      r.limb[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    if (carry != 0) throw_overflow("a 320-bit sum");
    return r;
  }
  /// *this * c, exact.
  [[nodiscard]] constexpr wide_uint times(std::uint64_t c) const {
    wide_uint r;
    uint128 carry = 0;
    for (std::size_t i = 0; i < limb.size(); ++i) {
      const uint128 t = static_cast<uint128>(limb[i]) * c + carry;  // < 2^128: limb * c + carry <= (2^64-1)^2 + 2^64-1
      r.limb[i] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    if (carry != 0) throw_overflow("a 320-bit product");
    return r;
  }
  /// The nearest double, roughly (for display: each limb is rounded on its own).
  [[nodiscard]] double to_double() const noexcept {
    double r = 0;
    for (std::size_t i = limb.size(); i-- > 0;) r = r * 18446744073709551616.0 + static_cast<double>(limb[i]);
    return r;
  }
  friend constexpr bool operator==(const wide_uint&, const wide_uint&) noexcept = default;
  friend constexpr std::strong_ordering operator<=>(const wide_uint& a, const wide_uint& b) noexcept {
    for (std::size_t i = a.limb.size(); i-- > 0;)
      if (a.limb[i] != b.limb[i]) return a.limb[i] <=> b.limb[i];
    return std::strong_ordering::equal;
  }
};

/// a * b * c, exact: a, b < 2^128 and c < 2^64 give a product below 2^320.
[[nodiscard]] constexpr wide_uint wide_product(uint128 a, uint128 b, std::uint64_t c) noexcept {
  const std::uint64_t a0 = static_cast<std::uint64_t>(a), a1 = static_cast<std::uint64_t>(a >> 64);
  const std::uint64_t b0 = static_cast<std::uint64_t>(b), b1 = static_cast<std::uint64_t>(b >> 64);
  // a * b in four limbs, schoolbook: each partial product is below 2^128
  const uint128 p00 = static_cast<uint128>(a0) * b0, p01 = static_cast<uint128>(a0) * b1;
  const uint128 p10 = static_cast<uint128>(a1) * b0, p11 = static_cast<uint128>(a1) * b1;
  const uint128 mid = (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);  // < 3 * 2^64
  const uint128 high = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);  // (a * b) >> 128 < 2^128
  wide_uint ab;
  ab.limb[0] = static_cast<std::uint64_t>(p00);
  ab.limb[1] = static_cast<std::uint64_t>(mid);
  ab.limb[2] = static_cast<std::uint64_t>(high);
  ab.limb[3] = static_cast<std::uint64_t>(high >> 64);
  // times c: (a * b) < 2^256, so the product is below 2^320 and times() cannot throw
  wide_uint r;
  uint128 carry = 0;
  for (std::size_t i = 0; i < r.limb.size(); ++i) {
    const uint128 t = static_cast<uint128>(ab.limb[i]) * c + carry;
    r.limb[i] = static_cast<std::uint64_t>(t);
    carry = t >> 64;
  }
  return r;
}

/// (a * b * c) <=> (d * e * f), exact over the whole range of the factors.
[[nodiscard]] constexpr std::strong_ordering compare_products(uint128 a, uint128 b, std::uint64_t c, uint128 d,
                                                              uint128 e, std::uint64_t f) noexcept {
  return wide_product(a, b, c) <=> wide_product(d, e, f);
}

}  // namespace quota::detail
