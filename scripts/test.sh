#!/usr/bin/env bash
# The whole test suite: install dependencies, configure, build, run ctest.
#   scripts/test.sh            (the dev preset: clang, ASan + UBSan, coverage counters, warnings as errors)
#   scripts/test.sh PRESET     (gcc: GCC without sanitizers; clang: plain clang; tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
extra=()
case "$preset" in
  dev) extra=(clang libclang-rt-14-dev llvm-14 lld ninja-build) ;;
  clang | tsan) extra=(clang libclang-rt-14-dev) ;;
esac
scripts/install-deps.sh "${extra[@]}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
