#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: install dependencies, configure, build, run ctest.
#   scripts/test.sh            (the dev preset: clang, ASan + UBSan, source-based coverage, warnings as errors;
#                               scripts/coverage.sh then reports it)
#   scripts/test.sh PRESET     (gcc: GCC without sanitizers; clang: plain clang; tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
extra=()
case "$preset" in
  dev) extra=(clang libclang-rt-14-dev llvm-14 lld ninja-build chromium) ;;  # chromium: the chart's browser test
  tsan) extra=(clang libclang-rt-14-dev ninja-build) ;;
  clang) extra=(clang libclang-rt-14-dev) ;;
esac
scripts/install-deps.sh "${extra[@]}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --preset "$preset" >/dev/null
if [ "$preset" = dev ]; then
  # dev is instrumented for coverage: what the build runs (test discovery) writes its raw
  # profiles aside; the test preset points ctest's at build/dev/prof, emptied first, which
  # scripts/coverage.sh then reads
  export LLVM_PROFILE_FILE="$PWD/build/dev/prof-build/%m.profraw"
fi
cmake --build --preset "$preset" -j "$jobs"
if [ "$preset" = dev ]; then rm -rf build/dev/prof; fi
ctest --preset "$preset" -j "$jobs"
