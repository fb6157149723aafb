// SPDX-License-Identifier: Apache-2.0
// Compile-only checks of the core concepts and constexpr behaviour.
#include <quota/big_int.hpp>
#include <quota/quota.hpp>

namespace {
using namespace quota;

// amount types: checked int64 and arbitrary precision; never floating point or unsigned
static_assert(amount_type<std::int64_t>);
static_assert(amount_type<big_int>);
static_assert(!amount_type<double>);
static_assert(!amount_type<std::uint64_t>);

// resource sets
using gpu_set = fixed_resources<"cpu", "memory", "nvidia.com/gpu">;
static_assert(fixed_resource_set<gpu_set>);
static_assert(!fixed_resource_set<dynamic_resources>);
static_assert(gpu_set::size == 3);
static_assert(gpu_set::index_of("memory") == 1);
static_assert(!gpu_set::index_of("pods").has_value());

// vectors model the vector concept; the absent meaning is part of the type
static_assert(resource_vector_like<resource_vector>);
static_assert(resource_vector_like<limit_vector>);
static_assert(resource_vector_like<fixed_resource_vector<"cpu", "memory">>);
static_assert(resource_vector::absent == absent_means::zero);
static_assert(limit_vector::absent == absent_means::unlimited);
static_assert(!std::is_same_v<resource_vector, limit_vector>);
static_assert(!std::is_convertible_v<limit_vector, resource_vector>);

// get() exists only where an absent dimension has a value (zero)
template <class V>
concept has_get = requires(const V& v) {
  v.get(resource_id{});
};
static_assert(has_get<resource_vector>);
static_assert(!has_get<limit_vector>);

// well-known ids are stable
static_assert(resources::cpu == 0 && resources::memory == 1 && resources::nvidia_gpu == 3);
static_assert(resources::well_known_name(resources::gpu_memory) == "nos.nebuly.com/gpu-memory");

// resource names
static_assert(detail::valid_resource_name("nvidia.com/mig-1g.10gb"));
static_assert(!detail::valid_resource_name("bad name"));
static_assert(!detail::valid_resource_name("/gpu"));
static_assert(!detail::valid_resource_name(""));

// exact fractions
static_assert(fraction(1, 3) < fraction(1, 2));
static_assert(fraction(2, 4) == fraction(1, 2));
static_assert(fraction(1, 0) > fraction(1'000'000'000, 1));
static_assert(fraction(0, 0) == fraction(0));
static_assert(fraction(15, 1).apply_floor(7) == 105);
static_assert(fraction(1, 3).apply_floor(10) == 3 && fraction(1, 3).apply_ceil(10) == 4);
static_assert(fraction(-1, 3).apply_floor(10) == -4);

// the policy concept rejects a type that lacks the interface
static_assert(!policy<int>);
}  // namespace
