// SPDX-License-Identifier: Apache-2.0
// quota/fraction.hpp — exact fractions of 64-bit amounts.
//
// Shares (usage / total, min_i / sum min) are compared exactly: the comparison
// cross-multiplies in 128 bits, so no rounding ever decides an order.
// wide_fraction holds 128-bit terms (compared through 256-bit products); for
// arbitrary precision, quota/big_int.hpp (Boost.Multiprecision) widens both.
#pragma once

#include <compare>
#include <cstdint>
#include <numeric>

#include <quota/detail/checked.hpp>
#include <quota/detail/wide_product.hpp>
#include <quota/error.hpp>

namespace quota {

/// An exact fraction num/den of 64-bit integers, den >= 0. den == 0 with
/// num > 0 is +infinity (a share of a resource whose total is 0); 0/0 is
/// treated as 0. Always kept in lowest terms.
class fraction {
 public:
  constexpr fraction() noexcept = default;
  constexpr fraction(std::int64_t num) noexcept : num_(num), den_(1) {}  // NOLINT(implicit)
  constexpr fraction(std::int64_t num, std::int64_t den) {
    if (den < 0) {
      if (num == INT64_MIN || den == INT64_MIN) detail::throw_overflow("fraction sign");
      num = -num;
      den = -den;
    }
    if (den == 0) {  // x/0 is +-infinity; 0/0 is taken as 0
      num_ = num > 0 ? 1 : (num < 0 ? -1 : 0);
      den_ = num == 0 ? 1 : 0;
      return;
    }
    // gcd of the magnitudes in unsigned arithmetic: |INT64_MIN| is not an
    // int64 (std::gcd on signed values would negate it). 0 < g <= den.
    const std::uint64_t mag =
        num < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(num) : static_cast<std::uint64_t>(num);
    const auto g = static_cast<std::int64_t>(std::gcd(mag, static_cast<std::uint64_t>(den)));
    num_ = num / g;
    den_ = den / g;
  }
  [[nodiscard]] static constexpr fraction infinity() noexcept {
    fraction f;
    f.num_ = 1;
    f.den_ = 0;
    return f;
  }

  [[nodiscard]] constexpr std::int64_t num() const noexcept { return num_; }
  [[nodiscard]] constexpr std::int64_t den() const noexcept { return den_; }
  [[nodiscard]] constexpr bool is_infinite() const noexcept { return den_ == 0 && num_ != 0; }

  /// floor(x * num / den), exact; throws overflow_error when it does not fit.
  /// (den > 0 once finite: the quotient rounds towards zero, so a negative
  /// inexact one is one too high and a positive one is one too low for ceil.)
  [[nodiscard]] constexpr std::int64_t apply_floor(std::int64_t x) const {
    if (den_ == 0) detail::throw_overflow("scaling by an infinite fraction");
    const detail::int128 p = static_cast<detail::int128>(x) * num_;
    detail::int128 q = p / den_;
    if (p % den_ != 0 && p < 0) --q;
    return detail::narrow<std::int64_t>(q);
  }
  /// ceil(x * num / den), exact.
  [[nodiscard]] constexpr std::int64_t apply_ceil(std::int64_t x) const {
    if (den_ == 0) detail::throw_overflow("scaling by an infinite fraction");
    const detail::int128 p = static_cast<detail::int128>(x) * num_;
    detail::int128 q = p / den_;
    if (p % den_ != 0 && p > 0) ++q;
    return detail::narrow<std::int64_t>(q);
  }

  [[nodiscard]] double to_double() const noexcept {
    if (den_ == 0) return num_ == 0 ? 0.0 : (num_ > 0 ? 1.0 / 0.0 : -1.0 / 0.0);
    return static_cast<double>(num_) / static_cast<double>(den_);
  }

  friend constexpr bool operator==(const fraction& a, const fraction& b) noexcept {
    return a.num_ == b.num_ && a.den_ == b.den_;
  }
  friend constexpr std::strong_ordering operator<=>(const fraction& a, const fraction& b) noexcept {
    if (a.den_ == 0 || b.den_ == 0) {  // at least one infinity
      const int ra = a.den_ == 0 ? (a.num_ > 0 ? 1 : -1) : 0;
      const int rb = b.den_ == 0 ? (b.num_ > 0 ? 1 : -1) : 0;
      return ra <=> rb;
    }
    return static_cast<detail::int128>(a.num_) * b.den_ <=> static_cast<detail::int128>(b.num_) * a.den_;
  }

 private:
  std::int64_t num_ = 0;
  std::int64_t den_ = 1;
};

/// An exact fraction num/den of 128-bit integers, den >= 0, in lowest terms;
/// den == 0 is an infinity of num's sign, 0/0 is 0 (as for fraction). The
/// order cross-multiplies into 256 bits, so it is exact over the whole range.
class wide_fraction {
 public:
  constexpr wide_fraction() noexcept = default;
  constexpr wide_fraction(detail::int128 num) noexcept : num_(num), den_(1) {}           // NOLINT(implicit)
  constexpr wide_fraction(const fraction& f) noexcept : num_(f.num()), den_(f.den()) {}  // NOLINT(implicit)
  constexpr wide_fraction(detail::int128 num, detail::int128 den) {
    if (den < 0) {
      if (num == detail::int128_min || den == detail::int128_min) detail::throw_overflow("fraction sign");
      num = -num;
      den = -den;
    }
    if (den == 0) {
      num_ = num > 0 ? 1 : (num < 0 ? -1 : 0);
      den_ = num == 0 ? 1 : 0;
      return;
    }
    const detail::uint128 g = detail::gcd_u128(detail::magnitude(num), static_cast<detail::uint128>(den));
    // g divides |num| and den: the quotients fit (|num| / g <= |num|)
    num_ = num / static_cast<detail::int128>(g);
    den_ = den / static_cast<detail::int128>(g);
  }

  [[nodiscard]] constexpr detail::int128 num() const noexcept { return num_; }
  [[nodiscard]] constexpr detail::int128 den() const noexcept { return den_; }
  [[nodiscard]] constexpr bool is_infinite() const noexcept { return den_ == 0 && num_ != 0; }
  [[nodiscard]] double to_double() const noexcept {
    if (den_ == 0) return num_ == 0 ? 0.0 : (num_ > 0 ? 1.0 / 0.0 : -1.0 / 0.0);
    return static_cast<double>(num_) / static_cast<double>(den_);
  }

  friend constexpr bool operator==(const wide_fraction& a, const wide_fraction& b) noexcept {
    return a.num_ == b.num_ && a.den_ == b.den_;
  }
  friend constexpr std::strong_ordering operator<=>(const wide_fraction& a, const wide_fraction& b) noexcept {
    if (a.den_ == 0 || b.den_ == 0) {
      const int ra = a.den_ == 0 ? (a.num_ > 0 ? 1 : -1) : 0;
      const int rb = b.den_ == 0 ? (b.num_ > 0 ? 1 : -1) : 0;
      return ra <=> rb;
    }
    const int sa = a.num_ > 0 ? 1 : (a.num_ < 0 ? -1 : 0), sb = b.num_ > 0 ? 1 : (b.num_ < 0 ? -1 : 0);
    if (sa != sb || sa == 0) return sa <=> sb;
    // same sign, dens > 0: compare |a.num| * b.den with |b.num| * a.den
    const auto c = detail::compare_products(detail::magnitude(a.num_), static_cast<detail::uint128>(b.den_), 1,
                                            detail::magnitude(b.num_), static_cast<detail::uint128>(a.den_), 1);
    return sa > 0 ? c : 0 <=> c;
  }

 private:
  detail::int128 num_ = 0;
  detail::int128 den_ = 1;
};

}  // namespace quota
