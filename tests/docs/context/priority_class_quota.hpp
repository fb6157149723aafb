// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/priority-class-quota.md use.
#pragma once
#include <quota/priority_class_quota.hpp>
inline const quota::job job = [] {
  quota::job j;
  j.id = "infer-1";
  j.queue = "team-a";
  j.priority_class = "high";
  j.request.set(quota::resources::nvidia_gpu, 4);
  return j;
}();
