#!/usr/bin/env bash
# bench/diff.sh - speed of `opdb diff` on two generated databases.
#
# usage: bench/diff.sh [BUILD_DIR] [ROWS]      (defaults: build 100000)
#
# Generates two database folders of ROWS rows each (bench/gen_diff_db.py: 10
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
# Environment: OPDB_BENCH_DIR (default /tmp/opdb-bench-diff), OPDB_BENCH_REPS (rounds, default 5).
# Exit status: 0 (a report), 2 on bad usage or a missing binary.
set -u -o pipefail
export LC_ALL=C
build=${1:-build}
rows=${2:-100000}
reps=${OPDB_BENCH_REPS:-5}
work=${OPDB_BENCH_DIR:-/tmp/opdb-bench-diff}
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
declare -A T
# one timed run: wall seconds and peak RSS (KiB) into $work/last
timed() {
    /usr/bin/time -f '%e %M %U %S' -o "$work/last" "$@" >/dev/null 2>"$work/err"
    local rc=$?
    [[ $rc -le 1 ]] || { echo "diff.sh: failed ($rc): $*" >&2; cat "$work/err" >&2; }
}
cases=(floor validate diff)
run() {
    case $1 in
    floor) timed sh -c "cat '$db'/old/*.csv '$db'/new/*.csv" ;;
    validate) timed sh -c "'$opdb' validate --database-path '$db/old'; '$opdb' validate --database-path '$db/new'" ;;
    diff) timed "$opdb" diff "$db/old" "$db/new" --json ;;
    esac
}
for c in "${cases[@]}"; do run "$c"; done # warm-up: the page cache
for ((r = 0; r < reps; r++)); do
    for c in "${cases[@]}"; do
        run "$c"
        read -r s kib us ss < <(tail -n 1 "$work/last") # a failing command adds a first line
        T[$c]+="$s "
        T[$c.cpu]+="$(echo "$us + $ss" | bc -l) "
        T[$c.rss]=$kib
    done
done
stats() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%s %s", v[1], m}'; }
printf 'opdb diff bench: %d rows per side, %.1f MB in all, %d rounds\n' "$rows" "$(echo "$bytes / 1000000" | bc -l)" "$reps"
printf '%-9s %9s %9s %12s %9s %9s\n' case best_s median_s rows/s cpu_best rss_MiB
for c in "${cases[@]}"; do
    read -r best med <<<"$(echo "${T[$c]}" | stats)"
    rps=$(awk -v r="$rows" -v b="$best" 'BEGIN {printf "%.0f", (b > 0 ? 2 * r / b : 0)}')
    read -r cbest _ <<<"$(echo "${T[$c.cpu]}" | stats)"
    printf '%-9s %9s %9s %12s %9s %9.1f\n' "$c" "$best" "$med" "$rps" "$cbest" "$(echo "${T[$c.rss]} / 1024" | bc -l)"
done
ratio() { paste -d' ' <(echo "${T[$1]}" | tr ' ' '\n' | sed '/^$/d') <(echo "${T[$2]}" | tr ' ' '\n' | sed '/^$/d') |
    awk '{print ($2 > 0 ? $1 / $2 : 0)}' | stats | awk '{print $2}'; }
echo "diff / floor (median of per-round ratios): $(ratio diff floor)"
echo "diff / validate both sides (median of per-round ratios): $(ratio diff validate)"
read -r best _ <<<"$(echo "${T[diff]}" | stats)"
read -r cbest _ <<<"$(echo "${T[diff.cpu]}" | stats)"
# wall time on a shared machine includes waiting for a core; CPU time is what one free core would take
awk -v b="$best" -v c="$cbest" 'BEGIN {printf "target diff < 1 s on one core: wall %s (%s), CPU %s (%s)\n", b, (b < 1.0 ? "met" : "missed"), c, (c < 1.0 ? "met" : "missed")}'
