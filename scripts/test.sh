#!/usr/bin/env bash
# The whole test suite: install dependencies, configure, build, run ctest.
#   scripts/test.sh            (the dev preset: GCC, Debug, warnings as errors)
#   scripts/test.sh PRESET     (asan-ubsan: clang + sanitizers; clang; tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
extra=()
case "$preset" in
  clang | tsan | asan-ubsan) extra=(clang libclang-rt-14-dev) ;;
esac
scripts/install-deps.sh "${extra[@]}"
jobs="$(nproc 2>/dev/null || echo 2)"
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
