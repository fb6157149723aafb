#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Source-based coverage (clang's -fprofile-instr-generate -fcoverage-mapping) of
# include/quota/ by the test run of an instrumented build: merges the raw
# profiles the tests wrote under BUILD/prof/ and prints llvm-cov's table per
# header and its TOTAL line (regions, functions, lines, branches).
#
# Branches are source-level: each condition of an if, while, for, ?:, && and ||
# counts twice (taken and not taken), once per function however many template
# instantiations it has (llvm-cov keeps the best-covered one).
#
#   scripts/coverage.sh [BUILD]         (default build/dev, which scripts/test.sh builds and
#                                       tests first when it holds no profiles yet; writes
#                                       BUILD/coverage.txt)
#   QUOTA_COVERAGE_MIN_LINES=N, QUOTA_COVERAGE_MIN_BRANCHES=N
#                                       fail when lines or branches are below N percent
#   QUOTA_COVERAGE_SHOW=file.hpp scripts/coverage.sh
#                                       also prints that header's lines with
#                                       their branch counts (what is missed)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
profdata=llvm-profdata-14
cov=llvm-cov-14
command -v "$profdata" >/dev/null || scripts/install-deps.sh llvm-14
shopt -s nullglob
raw=("$build"/prof/*.profraw)
if [ "${#raw[@]}" -eq 0 ] && [ "$build" = build/dev ]; then
  scripts/test.sh
  raw=("$build"/prof/*.profraw)
fi
if [ "${#raw[@]}" -eq 0 ]; then
  echo "coverage: no raw profiles under $build/prof (is $build an instrumented build, and have its tests run?)" >&2
  exit 2
fi
"$profdata" merge -sparse "${raw[@]}" -o "$build/coverage.profdata"
# the programs the tests ran: test binaries, quota-sim, examples (not the fuzz harnesses,
# which the test run does not execute, nor the packaging consumers, built without coverage)
objects=()
while IFS= read -r f; do
  objects+=(-object "$f")
done < <(find "$build/tests" "$build/tools" "$build/examples" -type f -perm -u+x \
  ! -path '*/CMakeFiles/*' ! -path '*/fuzz/*' ! -path '*/package/*' 2>/dev/null |
  while IFS= read -r f; do
    # only binaries that carry coverage mapping
    if readelf -S "$f" 2>/dev/null | grep -q '__llvm_covmap'; then echo "$f"; fi
  done | sort)
if [ "${#objects[@]}" -eq 0 ]; then
  echo "coverage: no instrumented programs under $build" >&2
  exit 2
fi
# "functions have mismatched data": a header function that one program never
# instantiates carries a placeholder record there; it is counted from the programs that do.
"$cov" report -instr-profile "$build/coverage.profdata" "${objects[@]:1}" "$PWD/include/quota/" \
  2>/dev/null >"$build/coverage.txt"
total=$(awk '/^TOTAL/ { print }' "$build/coverage.txt")
read -r _ regions regions_missed regions_pct functions functions_missed functions_pct lines lines_missed lines_pct \
  branches branches_missed branches_pct <<<"$total"
echo "include/quota/ coverage: lines $lines_pct ($((lines - lines_missed)) of $lines)," \
  "branches $branches_pct ($((branches - branches_missed)) of $branches)," \
  "functions $functions_pct ($((functions - functions_missed)) of $functions)," \
  "regions $regions_pct ($((regions - regions_missed)) of $regions)"
echo "(per-header table: $build/coverage.txt)"
below() { awk -v p="${1%\%}" -v m="$2" 'BEGIN { exit !(p + 0 < m + 0) }'; }
status=0
if [ -n "${QUOTA_COVERAGE_MIN_LINES:-}" ] && below "$lines_pct" "$QUOTA_COVERAGE_MIN_LINES"; then
  echo "line coverage $lines_pct is below $QUOTA_COVERAGE_MIN_LINES%" >&2
  status=1
fi
if [ -n "${QUOTA_COVERAGE_MIN_BRANCHES:-}" ] && below "$branches_pct" "$QUOTA_COVERAGE_MIN_BRANCHES"; then
  echo "branch coverage $branches_pct is below $QUOTA_COVERAGE_MIN_BRANCHES%" >&2
  status=1
fi
if [ -n "${QUOTA_COVERAGE_SHOW:-}" ]; then
  "$cov" show -instr-profile "$build/coverage.profdata" "${objects[@]:1}" -show-branches=count \
    -show-line-counts "$PWD/include/quota/$QUOTA_COVERAGE_SHOW" 2>/dev/null
fi
exit "$status"
