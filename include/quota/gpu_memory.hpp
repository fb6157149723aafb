// SPDX-License-Identifier: Apache-2.0
// quota/gpu_memory.hpp — the GPU memory (GB) a pod asks for, as nos counts it.
// Docs: docs/elastic-quota.md
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <quota/detail/checked.hpp>
#include <quota/resource.hpp>
#include <quota/resource_vector.hpp>

namespace quota {

/// Default GB of memory that one whole `nvidia.com/gpu` stands for.
inline constexpr std::int64_t default_gb_per_gpu = 32;

namespace detail {
/// Reads a run of decimal digits (at least one, no overflow) from s at i.
[[nodiscard]] inline std::optional<std::int64_t> elastic_read_digits(std::string_view s, std::size_t& i) noexcept {
  const std::size_t start = i;
  std::int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(v, std::int64_t{10}, &r) || !try_add(r, static_cast<std::int64_t>(s[i] - '0'), v))
      return std::nullopt;
    ++i;
  }
  if (i == start) return std::nullopt;
  return v;
}
}  // namespace detail

/// How resource names are recognised as MIG profiles.
enum class mig_name_match : std::uint8_t {
  /// The whole name is `nvidia.com/mig-<g>g.<m>gb`.
  exact,
  /// nos: `nvidia.com/mig-<g>g.<m>gb` appears somewhere in the name, and the
  /// GB are the digits of the only "<digits>gb" of the whole name (a name
  /// with two such runs counts nothing).
  nos,
};

namespace detail {
/// Does `nvidia.com/mig-<digits>g.<digits>gb` start at s[i]?
[[nodiscard]] inline bool mig_pattern_at(std::string_view s, std::size_t i) noexcept {
  constexpr std::string_view prefix = "nvidia.com/mig-";
  if (s.substr(i, prefix.size()) != prefix) return false;
  i += prefix.size();
  const std::size_t g = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == g || s.substr(i, 2) != "g.") return false;
  i += 2;
  const std::size_t m = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i != m && s.substr(i, 2) == "gb";
}
}  // namespace detail

/// The memory GB of a MIG resource name `nvidia.com/mig-<g>g.<m>gb`, or
/// nullopt when the name is not a MIG profile under `match` or its GB do not
/// fit in 64 bits.
[[nodiscard]] inline std::optional<std::int64_t> mig_memory_gb(std::string_view name,
                                                               mig_name_match match = mig_name_match::exact) noexcept {
  if (match == mig_name_match::nos) {
    bool found = false;
    for (std::size_t p = name.find("nvidia.com/mig-"); p != std::string_view::npos;
         p = name.find("nvidia.com/mig-", p + 1))
      if (detail::mig_pattern_at(name, p)) {
        found = true;
        break;
      }
    if (!found) return std::nullopt;
    // every maximal run of digits followed by "gb"; exactly one is wanted
    std::optional<std::size_t> run;
    std::size_t runs = 0;
    for (std::size_t i = 0; i < name.size();) {
      if (name[i] < '0' || name[i] > '9') {
        ++i;
        continue;
      }
      const std::size_t start = i;
      while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
      if (name.substr(i, 2) == "gb") {
        ++runs;
        run = start;
        i += 2;
      }
    }
    if (runs != 1) return std::nullopt;
    std::size_t i = *run;
    return detail::elastic_read_digits(name, i);
  }
  constexpr std::string_view prefix = "nvidia.com/mig-";
  if (!name.starts_with(prefix)) return std::nullopt;
  std::size_t i = prefix.size();
  if (!detail::elastic_read_digits(name, i)) return std::nullopt;
  if (i + 1 >= name.size() || name[i] != 'g' || name[i + 1] != '.') return std::nullopt;
  i += 2;
  auto mem = detail::elastic_read_digits(name, i);
  if (!mem) return std::nullopt;
  if (name.substr(i) != "gb") return std::nullopt;
  return mem;
}

/// GPU memory (GB) requested by `request` (whole devices of each resource).
/// Throws overflow_error if the sum does not fit in 64 bits.
[[nodiscard]] inline std::int64_t gpu_memory_of(const resource_vector& request, const resource_registry& reg,
                                                std::int64_t gb_per_gpu = default_gb_per_gpu,
                                                mig_name_match match = mig_name_match::exact) {
  std::int64_t total = detail::checked_mul(request.get(resources::nvidia_gpu), gb_per_gpu);
  for (const auto& e : request) {
    if (e.id == resources::nvidia_gpu || e.id >= reg.size()) continue;
    if (auto m = mig_memory_gb(reg.name(e.id), match))
      total = detail::checked_add(total, detail::checked_mul(*m, e.value));
  }
  return total;
}

/// Sets the gpu-memory dimension of `request` from its GPU resources (erases
/// it when 0), the way nos enriches pod requests before quota checks: the
/// computed amount replaces any gpu-memory the pod asked for itself.
inline void add_gpu_memory(resource_vector& request, const resource_registry& reg,
                           std::int64_t gb_per_gpu = default_gb_per_gpu, mig_name_match match = mig_name_match::exact) {
  const std::int64_t gb = gpu_memory_of(request, reg, gb_per_gpu, match);
  if (gb != 0)
    request.set(resources::gpu_memory, gb);
  else
    request.erase(resources::gpu_memory);
}

}  // namespace quota
