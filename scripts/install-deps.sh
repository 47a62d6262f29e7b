#!/usr/bin/env bash
# Installs the Debian 12 packages opdb needs to build, test, fuzz and bench.
set -euo pipefail
pkgs=(python3-venv python3-setuptools python3-pip  # the Python package, installed in a venv by its test
      build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
      libcmocka-dev libcsv-dev libyajl-dev libyaml-dev uthash-dev zlib1g-dev time
      libopenblas-dev libqhull-dev chromium libsqlite3-dev sqlite3 libopenmpi-dev openmpi-bin
      fonts-wqy-microhei)  # CJK glyphs for the compare HTML report in Chromium
pkgs+=(python3-yaml python3-scipy)  # the Python oracles (tests/oracle; scipy: query griddata only)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
