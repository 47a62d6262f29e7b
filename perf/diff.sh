#!/usr/bin/env bash
# perf/diff.sh - speed of `opdb diff` on two generated databases.
#
# usage: perf/diff.sh [BUILD_DIR] [ROWS]      (defaults: build 100000)
#
# Generates two database folders of ROWS rows each (perf/gen_diff_db.py: 10
# kernel types, the canonical 62 columns + Profiling Count, realistic changes
# between them), once (reused while the generator is unchanged), then runs,
# interleaved round by round (so a busy shared machine slows every case of a
# round alike), after one warm-up each:
#   floor    cat OLD/*.csv NEW/*.csv > /dev/null     reading the bytes only
#   validate opdb validate on OLD and on NEW          one identity pass per side
#   diff     opdb diff OLD NEW --json > /dev/null
# and prints per case the best and median wall seconds, rows/s (both sides),
# the best CPU seconds (user + system: steadier than wall on a shared machine),
# peak RSS (MiB, /usr/bin/time -v) and the ratio of diff to the floor and to
# validate measured in the same round (median of the per-round ratios).
# Target (reported, not enforced): diff of two 100k-row databases < 1 s on one core.
#
# Environment: OPDB_PERF_DIR (default /tmp/opdb-perf-diff), OPDB_PERF_REPS (rounds, default 5).
# Exit status: 0 (a report), 2 on bad usage or a missing binary.
set -u -o pipefail
export LC_ALL=C
build=${1:-build}
rows=${2:-100000}
reps=${OPDB_PERF_REPS:-5}
work=${OPDB_PERF_DIR:-/tmp/opdb-perf-diff}
here=$(cd "$(dirname "$0")" && pwd)
opdb=$build/opdb
[[ -x $opdb ]] || { echo "diff.sh: $opdb not built (scripts/build.sh $build)" >&2; exit 2; }
[[ $rows =~ ^[0-9]+$ ]] || { echo "diff.sh: ROWS must be a number" >&2; exit 2; }
db=$work/db_$rows
stamp=$(cksum <"$here/gen_diff_db.py" | cut -d' ' -f1)
if [[ ! -f $db/.stamp || $(cat "$db/.stamp") != "$stamp" ]]; then
    rm -rf "$db" && mkdir -p "$db"
    python3 "$here/gen_diff_db.py" "$db" "$rows" || exit 2
    echo "$stamp" >"$db/.stamp"
fi
bytes=$(cat "$db"/old/*.csv "$db"/new/*.csv | wc -c)
name=diff.sh
. "$here/rounds.sh"
cases=(floor validate diff)
run() {
    case $1 in
    floor) timed sh -c "cat '$db'/old/*.csv '$db'/new/*.csv" ;;
    validate) timed sh -c "'$opdb' validate --database-path '$db/old'; '$opdb' validate --database-path '$db/new'" ;;
    diff) timed "$opdb" diff "$db/old" "$db/new" --json ;;
    esac
}
rounds_run
printf 'opdb diff bench: %d rows per side, %.1f MB in all, %d rounds\n' "$rows" "$(echo "$bytes / 1000000" | bc -l)" "$reps"
rounds_table "$((2 * rows))"
echo "diff / floor (median of per-round ratios): $(ratio diff floor)"
echo "diff / validate both sides (median of per-round ratios): $(ratio diff validate)"
rounds_target diff 1
