#!/usr/bin/env bash
# build.sh [BUILD_DIR] [extra cmake args...]: configure (once) and build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPDB_WERROR=ON "$@" >/dev/null
ninja -C "$dir" ${OPDB_JOBS:+-j "$OPDB_JOBS"} >/dev/null
