#!/usr/bin/env bash
# Line and branch coverage of include/quota/ by the unit, property, trace and
# scenario tests: GCC Debug build with --coverage in build/coverage, ctest,
# then gcovr. Prints gcovr's summary (lines, branches). Branches the compiler
# adds for exception unwinding and unreachable code are left out
# (--exclude-throw-branches --exclude-unreachable-branches).
#   scripts/coverage.sh            build, test, report
#   QUOTA_COVERAGE_BUILD=dir       build directory (default build/coverage)
#   QUOTA_COVERAGE_MIN_LINES=N     fail when line coverage is below N percent (default: no threshold)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${QUOTA_COVERAGE_BUILD:-build/coverage}"
jobs="$(nproc 2>/dev/null || echo 2)"
scripts/install-deps.sh gcovr
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_CXX_FLAGS="--coverage -fno-inline" -DCMAKE_EXE_LINKER_FLAGS="--coverage" \
  -DQUOTA_PACKAGE_TESTS=OFF -DQUOTA_BUILD_EXAMPLES=ON -DQUOTA_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j "$jobs"
find "$build" -name '*.gcda' -delete
ctest --test-dir "$build" -j "$jobs" --output-on-failure
summary=$(gcovr --root . --object-directory "$build" --filter 'include/quota/' \
  --exclude-throw-branches --exclude-unreachable-branches --print-summary \
  --txt "$build/coverage.txt" -j "$jobs" | tail -3)
echo "$summary"
echo "(per-file report: $build/coverage.txt)"
if [ -n "${QUOTA_COVERAGE_MIN_LINES:-}" ]; then
  pct=$(echo "$summary" | sed -n 's/^lines: *\([0-9.]*\)%.*/\1/p')
  awk -v p="$pct" -v m="$QUOTA_COVERAGE_MIN_LINES" 'BEGIN { exit !(p + 0 >= m + 0) }' ||
    { echo "line coverage $pct% is below $QUOTA_COVERAGE_MIN_LINES%" >&2; exit 1; }
fi
