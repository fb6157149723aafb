// SPDX-License-Identifier: Apache-2.0
// quota/duration.hpp — durations as exact milliseconds, read from and written as text
// ("90s", "1h30m").
// Docs: docs/resources.md
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <quota/detail/checked.hpp>

namespace quota {

inline constexpr std::int64_t ms_per_second = 1000;
inline constexpr std::int64_t ms_per_minute = 60 * ms_per_second;
inline constexpr std::int64_t ms_per_hour = 60 * ms_per_minute;
inline constexpr std::int64_t ms_per_day = 24 * ms_per_hour;
inline constexpr std::int64_t ms_per_week = 7 * ms_per_day;

namespace detail {
/// Milliseconds per unit, or 0 for an unknown unit.
[[nodiscard]] constexpr std::int64_t duration_unit_ms(std::string_view unit) noexcept {
  if (unit == "ms") return 1;
  if (unit == "s") return ms_per_second;
  if (unit == "m") return ms_per_minute;
  if (unit == "h") return ms_per_hour;
  if (unit == "d") return ms_per_day;
  if (unit == "w") return ms_per_week;
  return 0;
}
constexpr bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
}  // namespace detail

/// The duration in milliseconds, or nullopt when `text` is not one (see the file comment).
[[nodiscard]] constexpr std::optional<std::int64_t> parse_duration_ms(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  std::int64_t total = 0;
  std::int64_t previous_unit = 0;  // 0: no term yet
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t start = i;
    std::int64_t n = 0;
    while (i < text.size() && detail::is_digit(text[i])) {
      if (!detail::try_mul<std::int64_t>(n, 10, n) || !detail::try_add<std::int64_t>(n, text[i] - '0', n))
        return std::nullopt;
      ++i;
    }
    if (i == start) return std::nullopt;  // a unit without a number, or a sign
    std::size_t u = i;
    while (u < text.size() && !detail::is_digit(text[u])) ++u;
    const std::string_view unit = text.substr(i, u - i);
    i = u;
    std::int64_t per = 0;
    if (unit.empty())
      per = start == 0 && i == text.size() ? 1 : 0;  // a bare integer is ms; "1h30" is not a duration
    else
      per = detail::duration_unit_ms(unit);
    if (per == 0) return std::nullopt;
    if (previous_unit != 0 && per >= previous_unit) return std::nullopt;  // "30m1h", "1h1h"
    previous_unit = per;
    std::int64_t term = 0;
    if (!detail::try_mul(n, per, term) || !detail::try_add(total, term, total)) return std::nullopt;
  }
  return total;
}

/// Compact text for people and reports: "4h", "1h30m", "2d3h", "1m30s",
/// "250ms", "0ms". Weeks are written as days. Negative durations get a
/// leading '-'. parse_duration_ms(format_duration(x)) == x
/// for every x >= 0.
[[nodiscard]] inline std::string format_duration(std::int64_t ms) {
  if (ms == 0) return "0ms";
  // the magnitude as unsigned: -INT64_MIN is not an int64
  const std::uint64_t m = ms < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(ms) : static_cast<std::uint64_t>(ms);
  constexpr auto day = static_cast<std::uint64_t>(ms_per_day), hour = static_cast<std::uint64_t>(ms_per_hour),
                 minute = static_cast<std::uint64_t>(ms_per_minute), second = static_cast<std::uint64_t>(ms_per_second);
  const std::uint64_t parts[] = {m / day, m / hour % 24, m / minute % 60, m / second % 60, m % 1000};
  const char* const units[] = {"d", "h", "m", "s", "ms"};
  std::string s = ms < 0 ? "-" : "";
  for (std::size_t k = 0; k < 5; ++k)
    if (parts[k] != 0) s += std::to_string(parts[k]) + units[k];
  return s;
}

}  // namespace quota
