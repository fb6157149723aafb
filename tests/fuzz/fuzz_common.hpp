// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/fuzz_common.hpp — helpers shared by the libFuzzer harnesses.
//
// Each harness checks properties, not only "no crash". A property failure
// prints what went wrong and aborts, so libFuzzer saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <quota/error.hpp>

namespace quota::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "property violated: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void require(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

/// Runs `f`. Returns true when it completed, false when it threw one of the
/// library's typed errors (quota::error). Any other exception is a bug: the
/// library promises typed errors only.
template <class F>
bool typed(F&& f) {
  try {
    f();
    return true;
  } catch (const quota::error&) {
    return false;
  } catch (const std::exception& e) {
    fail(std::string("untyped exception: ") + e.what());
  } catch (...) {
    fail("unknown exception");
  }
}

/// The input as a JSON document; nullopt when it is not JSON (nlohmann's job,
/// not ours). Deep nesting is cut off to keep the harness's own recursion safe.
inline std::optional<nlohmann::json> as_json(const std::uint8_t* data, std::size_t size) {
  if (size > 1 << 16) return std::nullopt;
  auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace quota::fuzz
