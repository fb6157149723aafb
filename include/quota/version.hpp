// SPDX-License-Identifier: Apache-2.0
// quota/version.hpp — library version.
#pragma once

#define QUOTA_VERSION_MAJOR 0
#define QUOTA_VERSION_MINOR 1
#define QUOTA_VERSION_PATCH 0
#define QUOTA_VERSION_STRING "0.1.0"

namespace quota {
inline constexpr int version_major = QUOTA_VERSION_MAJOR;
inline constexpr int version_minor = QUOTA_VERSION_MINOR;
inline constexpr int version_patch = QUOTA_VERSION_PATCH;
inline constexpr const char* version_string = QUOTA_VERSION_STRING;
}  // namespace quota
