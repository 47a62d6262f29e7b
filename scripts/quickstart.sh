#!/usr/bin/env bash
# Quick start: install packages, build, and build a database from the bundled
# example profile, printing where it went and a summary of its tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
export OPDB_DATA_ROOT=${OPDB_DATA_ROOT:-$PWD/data}
build/opdb parse --profiling-path examples/profile --summary \
  --device TEST_DEVICE --vllm-version 0.18.0 --torch-version 2.9.0 --cann-version 8.5
