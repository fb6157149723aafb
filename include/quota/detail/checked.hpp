// SPDX-License-Identifier: Apache-2.0
// quota/detail/checked.hpp — overflow-checked integer arithmetic.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <quota/error.hpp>

namespace quota::detail {

/// 128-bit integers for exact intermediate products of 64-bit amounts.
__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;

/// The decimal text of a 128-bit integer.
[[nodiscard]] inline std::string int128_to_string(int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  // |v| in unsigned arithmetic: -(INT128_MIN) is not an int128
  uint128 u = neg ? uint128{0} - static_cast<uint128>(v) : static_cast<uint128>(v);
  std::string digits;
  while (u > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

[[noreturn]] inline void throw_overflow(const char* op) {
  throw overflow_error(std::string("integer overflow in ") + op);
}

template <class T>
inline constexpr bool is_builtin_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// a + b, throwing overflow_error instead of wrapping.
template <class T>
[[nodiscard]] constexpr T checked_add(T a, T b) {
  if constexpr (is_builtin_integer_v<T>) {
    T r{};
    if (__builtin_add_overflow(a, b, &r)) throw_overflow("addition");
    return r;
  } else {
    return static_cast<T>(a + b);  // arbitrary precision (or self-checking) types
  }
}

template <class T>
[[nodiscard]] constexpr T checked_sub(T a, T b) {
  if constexpr (is_builtin_integer_v<T>) {
    T r{};
    if (__builtin_sub_overflow(a, b, &r)) throw_overflow("subtraction");
    return r;
  } else {
    return static_cast<T>(a - b);
  }
}

template <class T>
[[nodiscard]] constexpr T checked_mul(T a, T b) {
  if constexpr (is_builtin_integer_v<T>) {
    T r{};
    if (__builtin_mul_overflow(a, b, &r)) throw_overflow("multiplication");
    return r;
  } else {
    return static_cast<T>(a * b);
  }
}

/// Non-throwing variants for hot paths: return false on overflow, r untouched.
template <class T>
[[nodiscard]] constexpr bool try_add(T a, T b, T& r) noexcept {
  if constexpr (is_builtin_integer_v<T>) {
    T t{};
    if (__builtin_add_overflow(a, b, &t)) return false;
    r = t;
    return true;
  } else {
    r = static_cast<T>(a + b);
    return true;
  }
}

template <class T>
[[nodiscard]] constexpr bool try_mul(T a, T b, T& r) noexcept {
  if constexpr (is_builtin_integer_v<T>) {
    T t{};
    if (__builtin_mul_overflow(a, b, &t)) return false;
    r = t;
    return true;
  } else {
    r = static_cast<T>(a * b);
    return true;
  }
}

/// Narrow a wide integer into T, throwing when it does not fit.
template <class T, class W>
[[nodiscard]] constexpr T narrow(const W& w) {
  if (w < static_cast<W>(std::numeric_limits<T>::min()) || w > static_cast<W>(std::numeric_limits<T>::max()))
    throw_overflow("narrowing conversion");
  return static_cast<T>(w);
}

}  // namespace quota::detail
