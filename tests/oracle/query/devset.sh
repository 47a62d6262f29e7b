#!/bin/sh
# devset.sh ORACLE_OR_OPDB [DEVSET_DIR [compare.py flags...]]
# Runs every run of the query development set through a command that takes the flags
# of `opdb query` (the oracle query_oracle.py, or `opdb query`) with --reference-quirks,
# then compares with the reference answers (compare.py prints PASS/FAIL per category).
#   sh tests/oracle/query/devset.sh "python3 tests/oracle/query/query_oracle.py"
#   sh tests/oracle/query/devset.sh "./build/opdb query"
set -u
cmd=$1
here=$(cd "$(dirname "$0")" && pwd)
dev=${2:-$here/../../../../shared/data/query-devset}
[ $# -ge 2 ] && shift 2 || shift 1
[ -f "$dev/compare.py" ] || { echo "devset.sh: no development set at $dev" >&2; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
python3 "$dev/compare.py" --print-runs "$dev/runs.json" | while IFS="$(printf '\t')" read -r run db flags; do
  # shellcheck disable=SC2086
  grep "\"run\":\"$run\"" "$dev/queries.jsonl" | $cmd --database-path "$db" $flags --reference-quirks
done >"$out"
python3 "$dev/compare.py" "$dev/expected.jsonl" "$out" "$@"
