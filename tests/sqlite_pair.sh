#!/bin/sh
# sqlite_pair.sh OPDB ORACLE_DIR CSV DB_GZ: one Ascend run exported as
# kernel_details.csv and as ascend_pytorch_profiler_0.db gives the same
# database (docs/ingest-formats.md §2; compare_pair.py says what may differ).
set -u
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gunzip -c "$4" >"$out/ascend_pytorch_profiler_0.db" || exit 1
"$1" parse --profiling-path "$3" --database-path "$out/csv" >/dev/null || exit 1
"$1" parse --profiling-path "$out/ascend_pytorch_profiler_0.db" --database-path "$out/db" >/dev/null || exit 1
python3 "$2/compare_pair.py" "$out/csv" "$out/db"
