#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what quota needs from Debian's packages (idempotent; sudo only when not root).
set -euo pipefail
packages=(cmake g++ make pkg-config libboost-dev libfmt-dev nlohmann-json3-dev catch2 libbenchmark-dev libyaml-cpp-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
