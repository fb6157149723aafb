// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/kai-claims.md use.
#pragma once
#include <quota/kai_claims.hpp>
inline const quota::claim_spec spec = [] {
  quota::claim_spec s;
  s.name = "shared-gpus";
  s.queue_label = "team-a";
  quota::claim_device d;
  d.device_class = "gpu.nvidia.com";
  d.count = 2;
  s.requests.push_back(d);
  return s;
}();
