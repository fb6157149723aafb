// quota/gpu_memory.hpp — the GPU memory (GB) a pod asks for, as nos counts it.
//
// gpu-memory = nvidia.com/gpu x GB-per-GPU (default 32)
//            + sum over nvidia.com/mig-<g>g.<m>gb of m x quantity.
// Resources that only look like MIG profiles (wrong prefix, missing digits,
// trailing text) contribute nothing.
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

/// The memory GB of a MIG resource name `nvidia.com/mig-<g>g.<m>gb`, or
/// nullopt when the name is not exactly of that form.
[[nodiscard]] inline std::optional<std::int64_t> mig_memory_gb(std::string_view name) noexcept {
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
                                                std::int64_t gb_per_gpu = default_gb_per_gpu) {
  std::int64_t total = detail::checked_mul(request.get(resources::nvidia_gpu), gb_per_gpu);
  for (const auto& e : request) {
    if (e.id == resources::nvidia_gpu || e.id >= reg.size()) continue;
    if (auto m = mig_memory_gb(reg.name(e.id))) total = detail::checked_add(total, detail::checked_mul(*m, e.value));
  }
  return total;
}

/// Sets the gpu-memory dimension of `request` from its GPU resources (erases
/// it when 0), the way nos enriches pod requests before quota checks.
inline void add_gpu_memory(resource_vector& request, const resource_registry& reg,
                           std::int64_t gb_per_gpu = default_gb_per_gpu) {
  const std::int64_t gb = gpu_memory_of(request, reg, gb_per_gpu);
  if (gb != 0)
    request.set(resources::gpu_memory, gb);
  else
    request.erase(resources::gpu_memory);
}

}  // namespace quota
