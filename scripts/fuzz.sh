#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harnesses of tests/fuzz (clang, -fsanitize=fuzzer,address,undefined)
# in build/fuzz and runs each for SECONDS (default 10), as many at a time as there are
# cores, seeded from the examples and test data in place (nothing is copied into the
# tree). Prints the executions of each harness.
# Exit status: 1 when any harness found a crash or a property violation (the input is saved
# under build/fuzz/artifacts/), else 0.
#   scripts/fuzz.sh [SECONDS]
#   QUOTA_FUZZ_BUILD=dir   build directory (default build/fuzz); one that is already
#                          configured with QUOTA_BUILD_FUZZ=ON (CI: build/dev) is used as it is
#   QUOTA_FUZZ_ONLY=name   run one harness (e.g. quantity_fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
seconds="${1:-10}"
build="${QUOTA_FUZZ_BUILD:-build/fuzz}"
jobs="$(nproc 2>/dev/null || echo 2)"
scripts/install-deps.sh clang libclang-rt-14-dev
if ! grep -qs '^QUOTA_BUILD_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ -DQUOTA_BUILD_FUZZ=ON \
    -DQUOTA_PACKAGE_TESTS=OFF -DQUOTA_BUILD_EXAMPLES=OFF -DQUOTA_BUILD_TOOLS=OFF -DQUOTA_TEST_PCH=OFF >/dev/null
fi
cmake --build "$build" --target quota_fuzz -j "$jobs"

bin="$build/tests/fuzz"
work="$build/fuzz-work"
mkdir -p "$work/artifacts"
# generated seeds: quantities, running limits, openb node/pod tables (NUL-separated)
mkdir -p "$work/seeds/quantity" "$work/seeds/running_limits" "$work/seeds/openb"
i=0
for q in 0 1 100m 1.5 2Gi 1536Mi 1e3 1E-3 500u 7n 1k 4T 8Ei 9223372036854775807 -1 +3 0.1Ki 12e+6 .5 1.; do
  printf '%s' "$q" >"$work/seeds/quantity/$i"
  i=$((i + 1))
done
printf '%s' '{"queues": {"team-a": 3, "*": 10}, "users": {"*": 5}, "namespaces": {"batch": 20}}' \
  >"$work/seeds/running_limits/0"
for p in tests/data/openb/*.csv; do
  case "$p" in */nodes.csv) continue ;; esac
  { cat tests/data/openb/nodes.csv; printf '\0'; cat "$p"; } >"$work/seeds/openb/$(basename "$p" .csv)"
done
# the regression inputs of tests/fuzz/crashes (docs/reliability.md), each to its harness
for h in quantity openb; do
  mkdir -p "$work/seeds/crashes/$h"
  cp tests/fuzz/crashes/"$h"_* "$work/seeds/crashes/$h/"
done

seeds_for() {
  case "$1" in
    quantity_fuzz) echo "$work/seeds/quantity $work/seeds/crashes/quantity" ;;
    elastic_quota_json_fuzz) echo "examples/elastic_quota tests/data/elastic_quota" ;;
    volcano_json_fuzz) echo "examples/volcano tests/data/volcano" ;;
    yunikorn_limits_json_fuzz) echo "examples/yunikorn_limits tests/data/yunikorn_limits" ;;
    kai_fair_share_json_fuzz) echo "examples/kai_fair_share tests/data/kai_fair_share" ;;
    kai_claims_json_fuzz) echo "examples/kai_claims tests/data/kai_claims" ;;
    kueue_json_fuzz) echo "examples/kueue tests/data/kueue" ;;
    running_limits_json_fuzz) echo "$work/seeds/running_limits" ;;
    scenario_fuzz) echo "examples/scenarios tests/scenarios tests/data/robustness" ;;
    openb_fuzz) echo "$work/seeds/openb $work/seeds/crashes/openb" ;;
  esac
}

harnesses=(quantity_fuzz elastic_quota_json_fuzz volcano_json_fuzz yunikorn_limits_json_fuzz kai_fair_share_json_fuzz
  kai_claims_json_fuzz kueue_json_fuzz running_limits_json_fuzz scenario_fuzz openb_fuzz)
[ -n "${QUOTA_FUZZ_ONLY:-}" ] && harnesses=("$QUOTA_FUZZ_ONLY")
# one harness: its log and its result line ("ok" or the failure) in $work
run_one() {
  local h="$1" corpus="$work/corpus/$1" dict=()
  mkdir -p "$corpus"
  [ "$h" != openb_fuzz ] && dict=(-dict="$root/tests/fuzz/json.dict")
  # shellcheck disable=SC2046
  if (cd "$root" && "$bin/$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "${dict[@]}" -artifact_prefix="$work/artifacts/$h-" "$corpus" $(seeds_for "$h")) >"$work/$h.log" 2>&1; then
    echo ok >"$work/$h.result"
  else
    echo "FAILED (see $work/$h.log)" >"$work/$h.result"
  fi
}
# as many harnesses at a time as there are cores: each runs for SECONDS of its own
running=0
for h in "${harnesses[@]}"; do
  run_one "$h" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
failed=0
printf '%-26s %12s %8s %s\n' harness executions exec/s result
for h in "${harnesses[@]}"; do
  result=$(cat "$work/$h.result" 2>/dev/null || echo "FAILED (no result)")
  [ "$result" = ok ] || failed=1
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$h.log" | tail -1)
  printf '%-26s %12s %8s %s\n' "$h" "${runs:-?}" "${rate:-?}" "$result"
done
if [ "$failed" = 1 ]; then
  echo "fuzz: a harness failed; reproducers in $work/artifacts" >&2
  grep -h "property violated\|ERROR: AddressSanitizer\|runtime error" "$work"/*.log >&2 || true
  exit 1
fi
