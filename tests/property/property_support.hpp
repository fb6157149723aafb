// tests/property/property_support.hpp — seeded random numbers and a simple
// delta-debugging shrinker shared by the property tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace quota::prop {

/// splitmix64: small, fast, and the same sequence on every platform.
class rng {
 public:
  explicit rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (hi - lo small).
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }

 private:
  std::uint64_t s_;
};

/// Delta debugging (ddmin on chunks): the smallest sub-sequence of `ops` found
/// for which `fails` still holds. `fails(ops)` must hold on entry.
template <class Op>
std::vector<Op> shrink(std::vector<Op> ops, const std::function<bool(const std::vector<Op>&)>& fails) {
  std::size_t chunk = ops.size() / 2;
  while (chunk >= 1) {
    bool removed = false;
    for (std::size_t start = 0; start < ops.size();) {
      std::vector<Op> candidate;
      candidate.reserve(ops.size());
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (i < start || i >= start + chunk) candidate.push_back(ops[i]);
      if (!candidate.empty() && fails(candidate)) {
        ops = std::move(candidate);
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk /= 2;
  }
  return ops;
}

}  // namespace quota::prop
