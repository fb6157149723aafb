// SPDX-License-Identifier: Apache-2.0
// RFC 3339 UTC timestamps (Kubernetes' metadata.creationTimestamp), shared by
// the object loaders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace quota::detail {

/// Milliseconds since the Unix epoch of `t`, an RFC 3339 time in UTC:
/// `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (`t` and `z` in either case; the
/// fraction is truncated to milliseconds; a leap second :60 is accepted).
/// Every field must be all digits and in range, and nothing may follow the
/// zone. Returns false (and leaves `ms` unchanged) for anything else,
/// including offsets other than Z. Times before 1970 are negative.
[[nodiscard]] inline bool parse_rfc3339_utc_ms(std::string_view t, std::int64_t& ms) noexcept {
  auto num = [&](std::size_t pos, std::size_t n, std::int64_t& out) {
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      out = out * 10 + (t[i] - '0');
    }
    return true;
  };
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  if (t.size() < 20 || !num(0, 4, y) || t[4] != '-' || !num(5, 2, mo) || t[7] != '-' || !num(8, 2, d) ||
      (t[10] != 'T' && t[10] != 't') || !num(11, 2, h) || t[13] != ':' || !num(14, 2, mi) || t[16] != ':' ||
      !num(17, 2, s))
    return false;
  std::size_t i = 19;
  std::int64_t frac = 0;
  if (t[i] == '.') {
    ++i;
    std::int64_t scale = 100;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
      frac += (t[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  if (i + 1 != t.size() || (t[i] != 'Z' && t[i] != 'z')) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  // days from civil, proleptic Gregorian (Hinnant's formula)
  y -= mo <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = era * 146097 + doe - 719468;
  ms = ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + frac;
  return true;
}

}  // namespace quota::detail
