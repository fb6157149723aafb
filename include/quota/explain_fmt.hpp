// SPDX-License-Identifier: Apache-2.0
// quota/explain_fmt.hpp — opt-in {fmt} output of a what-if explanation.
//
//   fmt::print("{}", engine.explain(job));   // the text of quota::to_string(explanation)
// Docs: docs/architecture.md
#pragma once

#include <string>

#include <fmt/format.h>

#include <quota/explain.hpp>

template <>
struct fmt::formatter<quota::explanation> : fmt::formatter<std::string> {
  template <class Ctx>
  auto format(const quota::explanation& x, Ctx& ctx) const {
    return fmt::formatter<std::string>::format(quota::to_string(x), ctx);
  }
};
