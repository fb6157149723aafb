// SPDX-License-Identifier: Apache-2.0
// quota/quantity.hpp — Kubernetes resource quantities, parsed and formatted exactly,
// and their conversion to integer base units.
// Docs: docs/resources.md
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <quota/detail/checked.hpp>
#include <quota/detail/wide_product.hpp>
#include <quota/error.hpp>

namespace quota {

enum class quantity_format : std::uint8_t { decimal_si, binary_si, decimal_exponent };

namespace detail {
inline constexpr std::uint64_t pow10_u64[] = {1ULL,
                                              10ULL,
                                              100ULL,
                                              1000ULL,
                                              10000ULL,
                                              100000ULL,
                                              1000000ULL,
                                              10000000ULL,
                                              100000000ULL,
                                              1000000000ULL,
                                              10000000000ULL,
                                              100000000000ULL,
                                              1000000000000ULL,
                                              10000000000000ULL,
                                              100000000000000ULL,
                                              1000000000000000ULL,
                                              10000000000000000ULL,
                                              100000000000000000ULL,
                                              1000000000000000000ULL,
                                              10000000000000000000ULL};

/// Outcome of the non-throwing parser, mapped to error ids by the throwing one.
enum class quantity_status : std::uint8_t { ok, malformed, too_many_digits, too_precise, out_of_range, negative };
}  // namespace detail

class quantity {
 public:
  constexpr quantity() noexcept = default;

  /// Parses `text`; throws parse_error (101 malformed, 103 too precise, 104 out of range).
  [[nodiscard]] static quantity parse(std::string_view text) {
    quantity q;
    const auto st = q.parse_into(text);
    if (st != detail::quantity_status::ok) throw_status(st, text);
    return q;
  }
  /// Non-throwing parse: returns false on any problem and leaves `out` alone.
  [[nodiscard]] static bool try_parse(std::string_view text, quantity& out) noexcept {
    quantity q;
    if (q.parse_into(text) != detail::quantity_status::ok) return false;
    out = q;
    return true;
  }

  /// An amount of base units (10^-scale) as a quantity in `fmt`.
  [[nodiscard]] static quantity from_base(std::int64_t base_amount, int scale,
                                          quantity_format fmt = quantity_format::decimal_si) noexcept {
    quantity q;
    q.mantissa_ = base_amount;
    q.exp10_ = -scale;
    q.format_ = fmt;
    q.normalize();
    return q;
  }

  [[nodiscard]] constexpr std::int64_t mantissa() const noexcept { return mantissa_; }
  [[nodiscard]] constexpr int exp10() const noexcept { return exp10_; }
  [[nodiscard]] constexpr int exp1024() const noexcept { return exp1024_; }
  [[nodiscard]] constexpr quantity_format format() const noexcept { return format_; }
  [[nodiscard]] constexpr bool is_negative() const noexcept { return mantissa_ < 0; }
  [[nodiscard]] constexpr bool is_zero() const noexcept { return mantissa_ == 0; }

  /// Value in base units 10^-scale. Throws parse_error 103 when the value is
  /// not a whole number of base units, 104 when it does not fit in int64.
  [[nodiscard]] std::int64_t to_base(int scale) const {
    std::int64_t r = 0;
    const auto st = to_base_into(scale, r);
    if (st != detail::quantity_status::ok) throw_status(st, to_string(), scale);
    return r;
  }
  /// Non-throwing conversion; returns the status.
  [[nodiscard]] constexpr detail::quantity_status to_base_into(int scale, std::int64_t& out) const noexcept {
    detail::int128 v = 0;
    const auto st = to_base_into(scale, v, std::numeric_limits<std::int64_t>::max());
    if (st == detail::quantity_status::ok) out = static_cast<std::int64_t>(v);
    return st;
  }
  /// Non-throwing conversion to a 128-bit amount of base units whose
  /// magnitude is at most `max_magnitude` (below 2^126); else out_of_range.
  [[nodiscard]] constexpr detail::quantity_status to_base_into(int scale, detail::int128& out,
                                                               detail::int128 max_magnitude) const noexcept {
    if (mantissa_ == 0) {
      out = 0;
      return detail::quantity_status::ok;
    }
    const int k = exp10_ + scale;
    detail::int128 v = mantissa_;
    // multiply by 1024^exp1024 (exp1024 <= 6, |mantissa| < 2^63: fits in 127 bits)
    v *= static_cast<detail::int128>(1) << (10 * exp1024_);
    if (k >= 0) {
      const detail::int128 tenth = max_magnitude / 10;
      for (int i = 0; i < k; ++i) {
        if (v > tenth || v < -tenth) return detail::quantity_status::out_of_range;
        v *= 10;
      }
    } else {
      if (-k > 38) return detail::quantity_status::too_precise;
      detail::int128 d = 1;
      for (int i = 0; i < -k; ++i) d *= 10;
      if (v % d != 0) return detail::quantity_status::too_precise;
      v /= d;
    }
    // INT64_MIN is an int64 whose magnitude is one more than INT64_MAX
    if (v > max_magnitude || v < -max_magnitude - (max_magnitude == std::numeric_limits<std::int64_t>::max()))
      return detail::quantity_status::out_of_range;
    out = v;
    return detail::quantity_status::ok;
  }

  /// Canonical Kubernetes text of the quantity.
  [[nodiscard]] std::string to_string() const {
    if (mantissa_ == 0) return "0";
    detail::int128 m = mantissa_;
    int e = exp10_;
    if (format_ == quantity_format::binary_si) {
      // m * 10^e * 1024^b: an integer value takes the largest binary suffix
      // with an integer mantissa; a fractional one, or a whole one no binary
      // suffix divides, is written in decimal SI (so that the text reads back
      // as itself: 62.5Ki prints as 64k, not as Kubernetes' 64000).
      m *= static_cast<detail::int128>(1) << (10 * exp1024_);
      while (e < 0 && m % 10 == 0) {
        m /= 10;
        ++e;
      }
      if (e >= 0 && e <= 18) {
        for (; e > 0; --e) m *= 10;
        static constexpr const char* suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        int s = 0;
        detail::int128 b = m;
        while (s < 6 && b % 1024 == 0) {
          b /= 1024;
          ++s;
        }
        if (s > 0) return detail::int128_to_string(b) + suffixes[s];
      }
      while (m % 10 == 0) {
        m /= 10;
        ++e;
      }
    }
    // decimal forms: mantissa * 10^e with e rounded down to a multiple of 3
    int e3 = e >= 0 ? (e / 3) * 3 : -(((-e) + 2) / 3) * 3;
    const bool si = format_ != quantity_format::decimal_exponent;
    if (si && e3 > 18) e3 = 18;
    std::string out = detail::int128_to_string(m);
    out.append(static_cast<std::size_t>(e - e3), '0');
    if (si) {
      switch (e3) {
        case -9:
          out += 'n';
          break;
        case -6:
          out += 'u';
          break;
        case -3:
          out += 'm';
          break;
        case 0:
          break;
        case 3:
          out += 'k';
          break;
        case 6:
          out += 'M';
          break;
        case 9:
          out += 'G';
          break;
        case 12:
          out += 'T';
          break;
        case 15:
          out += 'P';
          break;
        case 18:
          out += 'E';
          break;
        default:
          break;  // unreachable: parse rejects finer than nano
      }
    } else if (e3 != 0) {
      out += 'e';
      out += std::to_string(e3);
    }
    return out;
  }

  // Values compare exactly across formats (quota/big_int.hpp's to_rational gives the value itself).
  friend constexpr bool operator==(const quantity& a, const quantity& b) noexcept { return (a <=> b) == 0; }
  friend constexpr std::strong_ordering operator<=>(const quantity& a, const quantity& b) noexcept {
    const int sa = a.mantissa_ > 0 ? 1 : (a.mantissa_ < 0 ? -1 : 0),
              sb = b.mantissa_ > 0 ? 1 : (b.mantissa_ < 0 ? -1 : 0);
    if (sa != sb || sa == 0) return sa <=> sb;
    const auto c = compare_magnitudes(a, b);
    return sa > 0 ? c : 0 <=> c;
  }

 private:
  [[noreturn]] static void throw_status(detail::quantity_status st, std::string_view text, int scale = 0) {
    std::string q = "'" + std::string(text) + "'";
    switch (st) {
      case detail::quantity_status::malformed:
        throw parse_error(error_id::parse_malformed_quantity, "malformed quantity " + q);
      case detail::quantity_status::too_many_digits:
        throw parse_error(error_id::parse_quantity_out_of_range,
                          "quantity " + q + " has more significant digits than a 64-bit mantissa holds");
      case detail::quantity_status::too_precise:
        throw parse_error(error_id::parse_too_precise,
                          "quantity " + q + " is more precise than its base unit (10^-" + std::to_string(scale) + ")");
      case detail::quantity_status::out_of_range:
        throw parse_error(error_id::parse_quantity_out_of_range, "quantity " + q + " is out of the 64-bit range");
      case detail::quantity_status::negative:
        throw parse_error(error_id::parse_negative_quantity, "quantity " + q + " is negative");
      case detail::quantity_status::ok:
        break;
    }
    throw parse_error(error_id::parse_malformed_quantity, "malformed quantity " + q);
  }

  // |a| <=> |b| for nonzero a, b, exactly: |m| * 1024^b < 2^63 * 2^60 = 2^123, and
  // the side with the larger power of ten is multiplied by 10 at a time while it
  // stays below the other; once it would pass 2^127 it is larger than any
  // |m| * 1024^b, so a product that does not fit decides the order without error.
  [[nodiscard]] static constexpr std::strong_ordering compare_magnitudes(const quantity& a,
                                                                         const quantity& b) noexcept {
    detail::uint128 x = detail::magnitude(a.mantissa_) << (10 * a.exp1024_);
    detail::uint128 y = detail::magnitude(b.mantissa_) << (10 * b.exp1024_);
    const bool a_scaled = a.exp10_ >= b.exp10_;
    detail::uint128& big = a_scaled ? x : y;  // the one with the larger power of ten
    const detail::uint128 other = a_scaled ? y : x;
    const int d = a_scaled ? a.exp10_ - b.exp10_ : b.exp10_ - a.exp10_;
    constexpr detail::uint128 limit = detail::uint128{1} << 127;
    for (int i = 0; i < d; ++i) {
      if (big > other) break;  // already larger; more tens keep it so
      big *= 10;               // big <= other < 2^123: no wrap
      if (big >= limit) break;
    }
    return x <=> y;
  }

  // Strips trailing zeros of the mantissa into the decimal exponent (decimal
  // forms only; a binary quantity keeps its own shape until formatted).
  constexpr void normalize() noexcept {
    if (mantissa_ == 0) {
      exp10_ = 0;
      exp1024_ = 0;
      return;
    }
    while (mantissa_ % 10 == 0) {
      mantissa_ /= 10;
      ++exp10_;
    }
  }
  constexpr detail::quantity_status parse_into(std::string_view s) noexcept {
    using st = detail::quantity_status;
    std::size_t i = 0;
    const std::size_t n = s.size();
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
      neg = s[i] == '-';
      ++i;
    }
    std::uint64_t m = 0;
    int sig = 0;      // significant digits in m
    int pending = 0;  // zeros seen after the last nonzero digit
    int frac = 0;     // digits after the point
    bool point = false, any = false;
    for (; i < n; ++i) {
      const char c = s[i];
      if (c == '.') {
        if (point) return st::malformed;
        point = true;
        continue;
      }
      if (c < '0' || c > '9') break;
      any = true;
      if (point) ++frac;
      if (c == '0') {
        if (sig > 0) ++pending;
        continue;
      }
      if (sig + pending + 1 > 19) return st::too_many_digits;
      const detail::uint128 t =
          static_cast<detail::uint128>(m) * detail::pow10_u64[pending + 1] + static_cast<std::uint64_t>(c - '0');
      if (t > static_cast<detail::uint128>(std::numeric_limits<std::int64_t>::max())) return st::too_many_digits;
      m = static_cast<std::uint64_t>(t);
      sig += pending + 1;
      pending = 0;
    }
    if (!any) return st::malformed;
    int e = pending - frac;
    int b = 0;
    quantity_format fmt = quantity_format::decimal_si;
    const std::string_view suf = s.substr(i);
    if (suf.empty()) {
    } else if (suf.size() == 2 && suf[1] == 'i') {
      fmt = quantity_format::binary_si;
      switch (suf[0]) {
        case 'K':
          b = 1;
          break;
        case 'M':
          b = 2;
          break;
        case 'G':
          b = 3;
          break;
        case 'T':
          b = 4;
          break;
        case 'P':
          b = 5;
          break;
        case 'E':
          b = 6;
          break;
        default:
          return st::malformed;
      }
    } else if (suf.size() == 1 && suf[0] != 'e') {
      switch (suf[0]) {
        case 'n':
          e -= 9;
          break;
        case 'u':
          e -= 6;
          break;
        case 'm':
          e -= 3;
          break;
        case 'k':
          e += 3;
          break;
        case 'M':
          e += 6;
          break;
        case 'G':
          e += 9;
          break;
        case 'T':
          e += 12;
          break;
        case 'P':
          e += 15;
          break;
        case 'E':
          e += 18;
          break;
        default:
          return st::malformed;
      }
    } else if (suf[0] == 'e' || suf[0] == 'E') {
      fmt = quantity_format::decimal_exponent;
      std::size_t j = 1;
      bool eneg = false;
      if (j < suf.size() && (suf[j] == '+' || suf[j] == '-')) {
        eneg = suf[j] == '-';
        ++j;
      }
      if (j >= suf.size()) return st::malformed;
      int x = 0;
      for (; j < suf.size(); ++j) {
        const char c = suf[j];
        if (c < '0' || c > '9') return st::malformed;
        x = x * 10 + (c - '0');
        if (x > 1000) return st::out_of_range;
      }
      e += eneg ? -x : x;
    } else {
      return st::malformed;
    }
    if (m == 0) {
      *this = quantity{};
      format_ = fmt;
      return st::ok;
    }
    if (e > 1000) return st::out_of_range;
    // Nothing finer than one nano-unit (as Kubernetes' own precision).
    if (b == 0 && e < -9) return st::too_precise;
    if (b > 0 && e < -9) {
      detail::int128 v = static_cast<detail::int128>(m) << (10 * b);
      for (int k = 0; k < -e - 9; ++k) {
        if (v % 10 != 0) return st::too_precise;
        v /= 10;
      }
    }
    // to_string writes a binary-SI value either with a binary suffix (whole
    // values) or in decimal SI (fractional or huge ones); the digits it would
    // print must fit the parser's 64-bit mantissa, so that the canonical text
    // parses back, and must not overflow its 128-bit arithmetic (both found by
    // tests/fuzz/quantity_fuzz). Such values are beyond every resource's range.
    if (b > 0) {
      detail::int128 v = static_cast<detail::int128>(m) << (10 * b);
      int ee = e;
      while (ee < 0 && v % 10 == 0) {
        v /= 10;
        ++ee;
      }
      const auto i64max = static_cast<detail::int128>(std::numeric_limits<std::int64_t>::max());
      if (ee >= 0 && ee <= 18) {
        for (; ee > 0; --ee) {
          if (v > (static_cast<detail::int128>(1) << 122)) return st::too_many_digits;
          v *= 10;
        }
        for (int k = 0; k < 6 && v % 1024 == 0; ++k) v /= 1024;
        if (v > i64max) return st::too_many_digits;
      } else {
        while (v % 10 == 0) {
          v /= 10;
          ++ee;
        }
        if (v > i64max) return st::too_many_digits;
      }
    }
    mantissa_ = neg ? -static_cast<std::int64_t>(m) : static_cast<std::int64_t>(m);
    exp10_ = e;
    exp1024_ = b;
    format_ = fmt;
    return st::ok;
  }

  std::int64_t mantissa_ = 0;
  int exp10_ = 0;
  int exp1024_ = 0;
  quantity_format format_ = quantity_format::decimal_si;
};

/// Parses a non-negative quantity straight to base units 10^-scale (the hot
/// edge path: no allocation on success). Throws parse_error 101-104.
[[nodiscard]] inline std::int64_t parse_amount(std::string_view text, int scale) {
  const quantity q = quantity::parse(text);
  if (q.is_negative())
    throw parse_error(error_id::parse_negative_quantity, "quantity '" + std::string(text) + "' is negative");
  return q.to_base(scale);
}

/// Formats an amount of base units 10^-scale as canonical quantity text.
[[nodiscard]] inline std::string format_amount(std::int64_t base_amount, int scale,
                                               quantity_format fmt = quantity_format::decimal_si) {
  return quantity::from_base(base_amount, scale, fmt).to_string();
}

}  // namespace quota
