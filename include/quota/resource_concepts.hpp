// SPDX-License-Identifier: Apache-2.0
// quota/resource_concepts.hpp — the C++20 concepts behind resource vectors.
// Docs: docs/resources.md
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <quota/resource.hpp>

namespace quota {

/// An amount type: a signed integer (checked against overflow) or an
/// arbitrary-precision integer such as boost::multiprecision::cpp_int.
template <class T>
concept amount_type = std::regular<T> && std::totally_ordered<T> && requires(T a, T b) {
  { a + b } -> std::convertible_to<T>;
  { a - b } -> std::convertible_to<T>;
  { a* b } -> std::convertible_to<T>;
  T(0);
} &&(!std::is_floating_point_v<T>)&&(!std::is_unsigned_v<T>);

/// What an absent dimension means in a vector. Usage and requests: zero.
/// Limits: unlimited, unless a model's rule says a missing limit is zero.
enum class absent_means : std::uint8_t { zero, unlimited };

/// Resources known only at run time, ids from a resource_registry.
struct dynamic_resources {
  static constexpr bool is_fixed = false;
};

/// A string usable as a template argument (for fixed resource sets).
template <std::size_t N>
struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&s)[N]) noexcept {  // NOLINT(implicit)
    for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
  }
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {data, N - 1}; }
};

/// A small resource set fixed at compile time; ids are the positions 0..N-1.
template <fixed_string... Names>
struct fixed_resources {
  static constexpr bool is_fixed = true;
  static constexpr std::size_t size = sizeof...(Names);
  static_assert(size > 0 && size <= 64, "a fixed resource set holds 1 to 64 resources");
  static constexpr std::array<std::string_view, size> names{Names.view()...};

  /// Position of `name` in the set, if present.
  [[nodiscard]] static constexpr std::optional<resource_id> index_of(std::string_view name) noexcept {
    for (std::size_t i = 0; i < size; ++i)
      if (names[i] == name) return static_cast<resource_id>(i);
    return std::nullopt;
  }
};

template <class S>
concept resource_set = requires {
  { S::is_fixed } -> std::convertible_to<bool>;
};

template <class S>
concept fixed_resource_set = resource_set<S> && S::is_fixed && requires {
  { S::size } -> std::convertible_to<std::size_t>;
  { S::index_of(std::string_view{}) } -> std::same_as<std::optional<resource_id>>;
};

/// A vector of amounts keyed by resource id; see quota/resource_vector.hpp.
template <class V>
concept resource_vector_like = requires(const V& v, resource_id id) {
  typename V::amount_type;
  typename V::resource_set_type;
  { V::absent } -> std::convertible_to<absent_means>;
  { v.has(id) } -> std::same_as<bool>;
  { v.size() } -> std::convertible_to<std::size_t>;
  v.begin();
  v.end();
};

}  // namespace quota
