#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: install what is needed, build quota-sim (Release), and replay
# the realistic GPU-cluster scenario. Prints where the report and chart are.
#   scripts/simulate.sh [SCENARIO] [quota-sim run options]
#   QUOTA_SIM_BUILD=dir   use quota-sim of an already configured build (CI: build/dev)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/install-deps.sh
scenario="${1:-examples/scenarios/gpu_cluster.json}"
shift || true
build="${QUOTA_SIM_BUILD:-$root/build/release}"
if [ -z "${QUOTA_SIM_BUILD:-}" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DQUOTA_BUILD_TESTS=OFF -DQUOTA_BUILD_EXAMPLES=OFF \
    -DQUOTA_BUILD_TOOLS=ON >/dev/null
fi
cmake --build "$build" --target quota-sim -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
mkdir -p out
name="$(basename "$scenario" .json)"
"$build/tools/quota-sim/quota-sim" run "$scenario" --report "out/$name.report.json" --svg "out/$name.svg" "$@"
