#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What one #include costs: compiles a .cpp holding that include and an empty main
# (`-std=c++20 -O0 -Iinclude -c`) RUNS times per header and prints a Markdown table of
# the median CPU seconds (user + system) and the median peak memory in MB (from
# /usr/bin/time -v when present), then the compiler, CPU, date and load average.
#   scripts/include-cost.sh                 every public header, then fmt and nlohmann/json
#   scripts/include-cost.sh quota/kai_fair_share.hpp fmt/format.h     only these
# Environment: CXX (default c++, the bench preset's compiler), RUNS (default 5),
# CXXFLAGS (added after -std=c++20 -O0).
set -euo pipefail
cd "$(dirname "$0")/.."
load_start="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
cxx="${CXX:-c++}"
runs="${RUNS:-5}"
read -r -a extra <<<"${CXXFLAGS:-}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

headers=("$@")
args="$*"
if [ ${#headers[@]} -eq 0 ]; then
  # the umbrella, then the core and model headers, then the opt-in integrations
  # (JSON, fmt, yaml-cpp, wide integers), then the two reference rows
  core=() optin=()
  for f in include/quota/*.hpp; do
    h="quota/${f#include/quota/}"
    case "$h" in
      quota/quota.hpp) ;;
      *_json.hpp | *_fmt.hpp | *_yaml.hpp | quota/json.hpp | quota/fmt.hpp | quota/big_int.hpp) optin+=("$h") ;;
      *) core+=("$h") ;;
    esac
  done
  headers=(quota/quota.hpp "${core[@]}" "${optin[@]}" fmt/format.h nlohmann/json.hpp)
fi

have_time=0
if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then have_time=1; fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| header | median CPU s | peak MB |"
echo "|---|---:|---:|"
for h in "${headers[@]}"; do
  src="$tmp/tu.cpp"
  printf '#include <%s>\nint main() {}\n' "$h" >"$src"
  secs=() mbs=()
  ok=1
  for _ in $(seq "$runs"); do
    cmd=("$cxx" -std=c++20 -O0 "${extra[@]}" -Iinclude -c "$src" -o "$tmp/tu.o")
    if [ "$have_time" = 1 ]; then
      if ! /usr/bin/time -v -o "$tmp/time" "${cmd[@]}" 2>"$tmp/err"; then ok=0; break; fi
      secs+=("$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.3f", u + s }' "$tmp/time")")
      mbs+=("$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tmp/time")")
    else
      # bash's times: the children's user and system seconds, before and after
      t0="$( (times) | tail -1)"
      if ! "${cmd[@]}" 2>"$tmp/err"; then ok=0; break; fi
      t1="$( (times) | tail -1)"
      secs+=("$(printf '%s\n%s\n' "$t0" "$t1" | awk '
        function s(x) { split(x, p, "m"); sub("s", "", p[2]); return p[1] * 60 + p[2] }
        NR == 1 { a = s($1) + s($2) } NR == 2 { b = s($1) + s($2) } END { printf "%.3f", b - a }')")
    fi
  done
  if [ "$ok" = 0 ]; then
    echo "| \`$h\` | does not compile: $(head -1 "$tmp/err" | cut -c1-80) | |"
    continue
  fi
  s="$(printf '%s\n' "${secs[@]}" | median)"
  m="–"
  if [ ${#mbs[@]} -gt 0 ]; then m="$(printf '%s\n' "${mbs[@]}" | median)"; fi
  # shellcheck disable=SC2016 # the backquotes are Markdown
  printf '| `%s` | %.2f | %s |\n' "$h" "$s" "$m"
done
echo
echo "* command: RUNS=$runs CXX=$cxx scripts/include-cost.sh${args:+ $args}"
echo "* compiler: $("$cxx" --version | head -1)"
echo "* CPU: $( (lscpu 2>/dev/null || true) | sed -n 's/^Model name: *//p' | head -1), $(nproc 2>/dev/null || echo '?') cores"
echo "* date: $(date -u +%Y-%m-%d); load average at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
