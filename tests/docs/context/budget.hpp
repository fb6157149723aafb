// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/budget.md use.
#pragma once
#include <cstdint>
#include <quota/budget.hpp>
inline const quota::job job = [] {
  quota::job j;
  j.id = "train-1";
  j.queue = "team-a";
  j.request.set(quota::resources::nvidia_gpu, 8);
  j.duration_ms = 10 * 3'600'000;
  return j;
}();
inline const std::int64_t now_ms = 0;
