// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/running-limits.md use.
#pragma once
#include <quota/running_limits.hpp>
inline const quota::job job = [] {
  quota::job j;
  j.id = "etl-1";
  j.queue = "team-a";
  j.user = "sue";
  return j;
}();
