// SPDX-License-Identifier: Apache-2.0
// quota/detail/name_hash.hpp — the hash of the short names models key their
// maps by (job ids, queues, users, namespaces): eight bytes at a time.
// Docs: docs/performance.md ("Engine path").
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace quota::detail {

/// Eight and four bytes of a name, loaded as one word (fixed-size loads: no
/// call into memcpy on the hot path).
[[nodiscard, gnu::always_inline]] inline std::uint64_t name_load8(const char* p) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, p, 8);
  return w;
}
[[nodiscard, gnu::always_inline]] inline std::uint32_t name_load4(const char* p) noexcept {
  std::uint32_t w = 0;
  std::memcpy(&w, p, 4);
  return w;
}

/// A fast hash of a short name, with no allocation: whole words mixed by
/// multiply and shift, then a last word that overlaps the previous one, or
/// for short names two overlapping half words or three bytes. Not seeded:
/// like std::hash, it does not defend a table against chosen collisions.
[[nodiscard]] inline std::uint64_t name_hash(std::string_view s) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (static_cast<std::uint64_t>(s.size()) * 0xFF51AFD7ED558CCDULL);
  const char* p = s.data();
  const std::size_t size = s.size();
  auto mix = [&h](std::uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 31;
  };
  if (size >= 8) {
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) mix(name_load8(p + i));
    if (i != size) mix(name_load8(p + size - 8));
  } else if (size >= 4) {
    mix(std::uint64_t{name_load4(p)} | (std::uint64_t{name_load4(p + size - 4)} << 32));
  } else if (size != 0) {
    const auto b = [p](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])); };
    mix(b(0) | (b(size / 2) << 8) | (b(size - 1) << 16));
  }
  h *= 0x94D049BB133111EBULL;
  return h ^ (h >> 32);
}

}  // namespace quota::detail
