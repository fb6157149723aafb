// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/sharing-pools.md use.
#pragma once
#include <quota/sharing_pools.hpp>
inline const quota::resource_vector min = [] {
  quota::resource_vector v;
  v.set(quota::resources::nvidia_gpu, 4);
  return v;
}();
inline const quota::limit_vector max = [] {
  quota::limit_vector v;
  v.set(quota::resources::nvidia_gpu, 8);
  return v;
}();
inline const quota::sharing_pool_spec prod{"prod", {{"serving", {"serving"}, min, max}}};
inline const quota::job job = [] {
  quota::job j;
  j.id = "bert-1";
  j.ns = "nlp";
  j.request.set(quota::resources::nvidia_gpu, 2);
  return j;
}();
