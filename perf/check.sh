#!/usr/bin/env bash
# perf/check.sh - speed of `opdb check` (leave-one-out over every row) on a generated database.
#
# usage: perf/check.sh [BUILD_DIR] [ROWS]      (defaults: build 100000)
#
# Generates, once (reused while the generator is unchanged), the realistic database of
# perf/gen_query_bench.py (MatMulV2 on an (M, K, N) grid, 246 compute and elementwise tables
# of 820 rows, communication tables, the real mapping layout) and keeps its first tables by
# name until they hold ROWS rows. Then runs, interleaved round by round (so a busy shared
# machine slows every case of a round alike), after one warm-up each:
#   floor    cat DB/*.csv > /dev/null            reading the bytes only
#   validate opdb validate on DB                  one pass that parses every row
#   check    opdb check --db DB --json > /dev/null
# and prints per case the best and median wall seconds, rows/s, the best CPU seconds
# (user + system: steadier than wall on a shared machine), peak RSS (MiB) and the ratio of
# check to the floor and to validate measured in the same round (median of the per-round
# ratios). Target (reported, not enforced): check of a 100k-row database < 2 s on one core.
#
# Environment: OPDB_PERF_DIR (default /tmp/opdb-perf-check), OPDB_PERF_REPS (rounds, default 5).
# Exit status: 0 (a report), 2 on bad usage or a missing binary.
set -u -o pipefail
export LC_ALL=C
build=${1:-build}
rows=${2:-100000}
reps=${OPDB_PERF_REPS:-5}
work=${OPDB_PERF_DIR:-/tmp/opdb-perf-check}
here=$(cd "$(dirname "$0")" && pwd)
opdb=$build/opdb
[[ -x $opdb ]] || { echo "check.sh: $opdb not built (scripts/build.sh $build)" >&2; exit 2; }
[[ $rows =~ ^[0-9]+$ ]] || { echo "check.sh: ROWS must be a number" >&2; exit 2; }
gen=$work/gen
db=$work/db_$rows
stamp=$(cksum <"$here/gen_query_bench.py" | cut -d' ' -f1)
if [[ ! -f $gen/.stamp || $(cat "$gen/.stamp") != "$stamp" ]]; then
    rm -rf "$gen" "$work"/db_* && mkdir -p "$gen"
    python3 "$here/gen_query_bench.py" "$gen" 1000 >/dev/null || exit 2
    echo "$stamp" >"$gen/.stamp"
fi
if [[ ! -d $db ]]; then
    mkdir -p "$db" && cp "$gen/db/op_mapping.yaml" "$db/"
    n=0
    for f in "$gen"/db/*.csv; do
        ((n >= rows)) && break
        cp "$f" "$db/"
        n=$((n + $(wc -l <"$f") - 1))
    done
fi
have=$(cat "$db"/*.csv | wc -l)
have=$((have - $(ls "$db"/*.csv | wc -l)))
bytes=$(cat "$db"/*.csv | wc -c)
name=check.sh
. "$here/rounds.sh"
cases=(floor validate check)
run() {
    case $1 in
    floor) timed sh -c "cat '$db'/*.csv" ;;
    validate) timed "$opdb" validate --database-path "$db" ;;
    check) timed "$opdb" check --db "$db" --json ;;
    esac
}
rounds_run
printf 'opdb check bench: %d rows in %d tables, %.1f MB, %d rounds\n' "$have" "$(ls "$db"/*.csv | wc -l)" \
    "$(echo "$bytes / 1000000" | bc -l)" "$reps"
rounds_table "$have"
echo "check / floor (median of per-round ratios): $(ratio check floor)"
echo "check / validate (median of per-round ratios): $(ratio check validate)"
rounds_target check 2
