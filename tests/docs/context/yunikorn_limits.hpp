// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/yunikorn-limits.md use.
#pragma once
#include <quota/yunikorn_limits.hpp>
#include <quota/yunikorn_limits_json.hpp>
inline quota::resource_registry registry;
inline const quota::yunikorn_limits_config cfg = quota::load_yunikorn_limits_config(
    quota::json::parse(R"({"name": "root", "queues": [{"name": "a", "limits": [
      {"limit": "sue", "users": ["sue"], "maxresources": {"vcore": "8"}}]}]})"),
    registry);
inline const quota::resource_vector usage = [] {
  quota::resource_vector v;
  v.set(quota::resources::cpu, 2000);
  return v;
}();
