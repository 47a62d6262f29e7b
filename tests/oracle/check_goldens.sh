#!/bin/sh
# check_goldens.sh SOURCE_DIR
# Regenerates the expected trees of every golden case whose tool has an oracle in
# tests/oracle/bin/opdb (parse CSV cases, trace2csv, fia-fill, update, m6, shape-compare, aie,
# comm validate, query, diff, grid --from-misses) and compares them
# byte for byte with the committed ones: a golden edited by hand, or an oracle
# that drifted from its goldens, fails. Skipped (77) without python3.
set -u
src=$1
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
cd "$src/tests/cli" || exit 1
# parse_kineto_*, parse_sqlite_* and parse_dir_mixed_formats_* come from tests/oracle/ingest/.
cases=$(ls -d parse_* trace2csv_* fiafill_* update_* m6_* shapecmp_* aie_* | grep -v -e '^parse_kineto_' -e '^parse_sqlite_' -e '^parse_dir_mixed_formats_')
cases="$cases $(ls -d comm_validate_*)"
# query_* come from tests/oracle/query/query_oracle.py (written from the query spec).
cases="$cases $(ls -d query_* 2>/dev/null)"
# diff_* come from tests/oracle/diff/diff_oracle.py (written from docs/DIFF.md).
cases="$cases $(ls -d diff_* 2>/dev/null)"
# check_* come from tests/oracle/check/check_oracle.py (written from docs/CHECK.md).
cases="$cases $(ls -d check_* 2>/dev/null)"
# grid_from_misses* come from tests/oracle/grid/from_misses.py (the other grid_* from make_cases.py).
cases="$cases $(ls -d grid_from_misses* 2>/dev/null)"
# shellcheck disable=SC2086
exec python3 ../oracle/new_case.py --check $cases
