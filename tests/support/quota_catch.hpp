// SPDX-License-Identifier: Apache-2.0
// Test-side shim: Catch2 v3 when available, Debian's Catch2 v2 otherwise.
#pragma once
#if defined(QUOTA_CATCH_V3)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif
