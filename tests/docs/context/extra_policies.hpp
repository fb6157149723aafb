// SPDX-License-Identifier: Apache-2.0
// Names the fragments of docs/extra-policies.md use.
#pragma once
#include <cstdint>
#include <iostream>
#include <quota/engine.hpp>
#include <quota/running_limits.hpp>
#include <quota/shrink.hpp>
inline const std::int64_t now = 20 * 60'000;
