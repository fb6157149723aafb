#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs quota-sim on hostile and careless inputs (tests/data/robustness/ and a few
# generated ones: endless, oversized, deeply nested) and checks that each ends
# with its expected exit status and message, quickly and in bounded memory.
#
#   scripts/hostile-inputs.sh [--write] [QUOTA_SIM]
#     --write     also writes the table (input, exit status, time, peak memory,
#                 first line of the message) into docs/performance.md, between
#                 the markers "hostile-inputs:begin" and "hostile-inputs:end"
#     QUOTA_SIM   the quota-sim binary (default: build/fast, then build/dev)
#   scripts/hostile-inputs.sh --parity [--known-outcomes] [QUOTA_SIM]
#                 every scenario file of the repository: validate accepts it
#                 exactly when run accepts it (run may then fail only on
#                 expectations, exit 1). --known-outcomes (ctest): the run
#                 exit of examples/scenarios/*.json (0), tests/scenarios/failing (1)
#                 and tests/scenarios/invalid (2) is the one their own ctest
#                 entries assert, so only validate runs on them
# Exit status: 1 when a case ends otherwise than expected, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."

write=0
parity=0
known=0
case "${1:-}" in
  --write) write=1; shift ;;
  --parity) parity=1; shift ;;
esac
if [ "$parity" = 1 ] && [ "${1:-}" = --known-outcomes ]; then
  known=1
  shift
fi
sim="${1:-}"
if [ -z "$sim" ]; then
  for b in build/fast build/dev build/gcc build/clang; do
    [ -x "$b/tools/quota-sim/quota-sim" ] && { sim="$b/tools/quota-sim/quota-sim"; break; }
  done
fi
[ -x "$sim" ] || { echo "hostile-inputs: no quota-sim binary (build one, or pass its path)" >&2; exit 2; }
data=tests/data/robustness
work="${QUOTA_HOSTILE_WORK:-build/hostile-inputs}"
mkdir -p "$work"
failed=0

if [ "$parity" = 1 ]; then
  n=0
  for f in examples/scenarios/*.json examples/scenarios/*.yaml tests/scenarios/*/*.json "$data"/*.json \
    "$data"/*.yaml; do
    "$sim" validate "$f" >/dev/null 2>&1
    v=$?
    case "$known:$f" in
      1:examples/scenarios/*.json) r=0 ;;
      1:tests/scenarios/failing/*) r=1 ;;
      1:tests/scenarios/invalid/*) r=2 ;;
      *)
        "$sim" run "$f" --quiet --report "$work/parity.report.json" --svg "$work/parity.svg" >/dev/null 2>&1
        r=$?
        ;;
    esac
    n=$((n + 1))
    if { [ "$v" = 0 ] && [ "$r" != 0 ] && [ "$r" != 1 ]; } || { [ "$v" != 0 ] && [ "$r" != "$v" ]; }; then
      echo "parity: $f: validate exit $v, run exit $r" >&2
      failed=1
    fi
  done
  echo "parity: $n files, validate and run $([ "$failed" = 0 ] && echo agree || echo DISAGREE)"
  exit "$failed"
fi

# generated inputs: too large or too deep to keep in the repository
printf '%*s' 100000 '' | tr ' ' '[' >"$work/deep_nesting.json"
{ printf '{"name": "'; head -c 2000000 /dev/zero | tr '\0' 'x'; printf '"}'; } >"$work/long_string.json"
{ printf '['; for _ in $(seq 1 2000); do printf '0,'; done; printf '0]'; } >"$work/many_values.json"
head -c 3000000 /dev/zero | tr '\0' ' ' >"$work/three_mb_of_spaces.json"
{ for _ in $(seq 1 70); do printf -- '- '; done; printf 'x\n'; } >"$work/deep_nesting.yaml"
ln -sf /dev/zero "$work/dev_zero.json"

# expected exit | message fragment | arguments of quota-sim
cases=(
  "2|number overflow parsing '1e400'|validate $data/number_1e400.json"
  "2|number overflow parsing '1e400'|run $data/number_1e400.json --quiet"
  "2|number overflow parsing '1e400'|explain examples/scenarios/gpu_cluster.json --at 35m --job $data/explain_job_1e400.json"
  "2|duplicate key|validate $data/duplicate_key.json"
  "2|invalid JSON at byte|validate $data/syntax_error.json"
  "2|invalid JSON at byte 1|validate $data/empty.json"
  "2|ill-formed UTF-8|validate $data/invalid_utf8.json"
  "2|a scenario must be a JSON object|validate $data/top_level_array.json"
  "2|expected a string, got number|validate $data/wrong_types.json"
  "2|nested deeper than the limit of 64|validate $work/deep_nesting.json"
  "2|longer than the limit of 1048576|validate $work/long_string.json"
  "2|more than 1000 values|--max-values 1000 validate $work/many_values.json"
  "2|larger than the input limit of 1048576 bytes|--max-input-mb 1 validate $work/three_mb_of_spaces.json"
  "2|larger than the input limit of 268435456 bytes|validate $work/dev_zero.json"
  "2|values once aliases are expanded|validate $data/billion_laughs.yaml"
  "2|duplicate key|validate $data/yaml_duplicate_key.yaml"
  "2|nested deeper than the limit|validate $work/deep_nesting.yaml"
  "2|expected 1 to 1000000 (the job limit)|run $data/count_100m.json --quiet"
  "2|more than 1000000 jobs (the job limit)|validate $data/counts_over_job_limit.json"
  "2|expected 1 to 100000 (the node limit)|validate $data/node_count_huge.json"
  "2|the pod limit of a job|validate $data/pods_huge.json"
  "2|does not fit a 64-bit amount|validate $data/request_times_pods_overflow.json"
  "2|expected an integer in [-2147483648, 2147483647], got 2147483648|validate $data/priority_beyond_int32.json"
  "2|got 1.5|validate $data/fractional_pods.json"
  "2|got 4294967297|validate $data/gpu_count_wraps.json"
  "2|expected a time below|validate $data/submit_int64_max.json"
  "2|\"end\" is not allowed here|validate $data/submit_end.json"
  "2|\"end\" is not allowed here|validate $data/event_at_end.json"
  "2|expected a duration|validate $data/time_beyond_limit.json"
  "2|expected a non-empty name|validate $data/empty_job_id.json"
  "2|expected a non-empty name|run $data/empty_job_id.json --quiet"
  "2|unknown node 'no-such-node'|validate $data/node_remove_unknown.json"
  "2|is in no node's allocatable|validate $data/chart_resource_unknown.json"
  "2|unknown tenant 'team-b'|validate $data/chart_lines_unknown_tenant.json"
  "2|is negative|validate $data/chart_lines_negative.json"
  "2|spec.wieght: unknown field of Queue|validate $data/unknown_object_field.json"
  "0|warning: \$.policies[0].objects[0].spec.wieght|--lenient-objects validate $data/unknown_object_field.json"
  "2|maxaplications: unknown field|validate $data/unknown_yunikorn_field.json"
  "2|capability.nvidia.com/gpu|validate $data/typo_and_bad_policy.json"
  "2|capability.nvidia.com/gpu|explain $data/typo_and_bad_policy.json --at 1m --job tests/data/explain/research_sweep.json"
  "2|does not order pending jobs|validate $data/order_by_model_that_does_not_order.json"
  "0|valid|validate $data/control_chars_in_names.json"
  "0|chart:|run $data/control_chars_in_names.json"
  "2|cannot open|validate $work/no-such-file.json"
  "2|cannot read|validate $work"
  "64|unknown option --bogus|validate $data/empty_job_id.json --bogus"
  "64|--jobs expects an integer from 0 to 1000000, got '99999999999999999999'|generate --jobs 99999999999999999999"
  "64|--jobs expects an integer from 0 to 1000000, got '-1'|generate --jobs -1"
  "64|--load expects a number above 0 and at most 100|generate --load nan"
  "64|--until expects a duration|run $data/control_chars_in_names.json --until 99999999999999999999"
  "64|--max-jobs expects an integer|--max-jobs 0 validate $data/empty.json"
  "2|larger than the input limit|import openb --nodes tests/data/openb/nodes.csv --pods $work/dev_zero.json"
  "64|bad value for --tenants: '-1' (an integer from 1 to 1000)|import openb --nodes tests/data/openb/nodes.csv --pods tests/data/openb/pods.csv --tenants -1"
)

has_time=0
/usr/bin/time -f %M true >/dev/null 2>&1 && has_time=1
rows=()
for c in "${cases[@]}"; do
  want="${c%%|*}"
  rest="${c#*|}"
  frag="${rest%%|*}"
  args="${rest#*|}"
  # shellcheck disable=SC2086
  set -- $args
  # a run writes its report and chart aside
  case " $args " in *" run "*) set -- "$@" --report "$work/out.report.json" --svg "$work/out.svg" ;; esac
  start=$(date +%s%N)
  if [ "$has_time" = 1 ]; then
    /usr/bin/time -f '%M' -o "$work/rss" timeout 60 "$sim" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
    rc=$?
  else
    timeout 60 "$sim" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
    rc=$?
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  rss="?"
  [ "$has_time" = 1 ] && rss=$(($(tail -1 "$work/rss") / 1024))
  # the first line of the message: the first problem, else the first line at all
  msg=$(grep -v -e '^quota-sim: invalid scenario' -e '^Command exited' "$work/stderr" | head -1 | sed 's/^ *//')
  [ -z "$msg" ] && msg=$(head -1 "$work/stdout")
  ok=1
  [ "$rc" = "$want" ] || ok=0
  grep -qF -- "$frag" "$work/stderr" "$work/stdout" || ok=0
  # a run that succeeds writes a well-formed SVG chart (names may hold control characters)
  case " $args " in *" run "*)
    if [ "$rc" = 0 ] && command -v xmllint >/dev/null && ! xmllint --noout "$work/out.svg" 2>>"$work/stderr"; then
      ok=0
      msg="the SVG chart is not well-formed XML"
    fi ;;
  esac
  if [ "$ok" = 0 ]; then
    echo "hostile-inputs: quota-sim $args: exit $rc (expected $want), message: $msg" >&2
    failed=1
  fi
  short=$(printf '%s' "$msg" | cut -c1-150 | sed 's/|/\\|/g')
  rows+=("| \`quota-sim $args\` | $rc | $ms | $rss | $short |")
done
echo "hostile-inputs: ${#cases[@]} cases, $([ "$failed" = 0 ] && echo "each as expected" || echo "SOME NOT AS EXPECTED")"

if [ "$write" = 1 ]; then
  # the binary by its compiler and build settings (from the CMake cache of its build)
  built="quota-sim"
  cache="$(dirname "$sim")/../../CMakeCache.txt"
  if [ -f "$cache" ]; then
    cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$cache")
    flags=$(sed -n 's/^CMAKE_CXX_FLAGS:[A-Z]*=//p' "$cache")
    version=$("$cxx" --version 2>/dev/null | head -1)
    built="quota-sim built by ${version:-$cxx}, ${type:-no build type}${flags:+, \`$flags\`}"
  fi
  table="$work/table.md"
  {
    echo "<!-- hostile-inputs:begin (generated by scripts/hostile-inputs.sh --write; do not edit) -->"
    echo
    echo "$(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d), $built:"
    echo
    echo "| command | exit | ms | peak MB | first line of the message |"
    echo "|---|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "<!-- hostile-inputs:end -->"
  } >"$table"
  doc=docs/performance.md
  if grep -q 'hostile-inputs:begin' "$doc"; then
    awk -v t="$table" '
      /hostile-inputs:begin/ { while ((getline l < t) > 0) print l; skip = 1; next }
      /hostile-inputs:end/ { skip = 0; next }
      !skip { print }' "$doc" >"$work/doc.md" && mv "$work/doc.md" "$doc"
  else
    { echo; cat "$table"; } >>"$doc"
  fi
  echo "hostile-inputs: table written to $doc"
fi
exit "$failed"
