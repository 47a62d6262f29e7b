#!/usr/bin/env bash
# perf/ab.sh - before/after comparison of two opdb builds on the inputs of
# perf/parse.sh, perf/update.sh, perf/compare.sh, perf/grid.sh and
# perf/query.sh.
#
# usage: perf/ab.sh OLD_BUILD NEW_BUILD [ROUNDS]           (default 5 rounds)
#
# Generates the three benches' inputs with NEW_BUILD's generators (once;
# reused while intact), then runs, after one warm-up round, ROUNDS rounds of
#   opdb parse   --profiling-path KERNEL_DETAILS --database-path OUT
#   opdb update  --prof-path PROF --database-path COPY   (fresh copy, not timed)
#   opdb compare --tc-trace TRACE --prof-trace FWD_CSV --output OUT.json
#   opdb grid    --database-path COPY --rows 0               (fresh copy, not timed)
#   opdb query   --db QDB --tp-size 8 --grid 8,2 < QUERIES.jsonl
# each with OLD_BUILD's opdb and then NEW_BUILD's, back to back, so a host
# that is slower for a while weighs on both alike. Prints per case and build
# the best and median wall time and CPU time (user + system, the steadier
# figure on a shared host), the peak RSS, and the median of the per-round
# ratios new / old. The warm-up round's outputs of both builds are compared
# (the files written and stdout; see same_outputs): a difference is reported
# and makes the exit status 1.
#
# Environment:
#   OPDB_PERF_DIR        work dir (default /tmp/opdb-perf; this uses .../ab)
#   OPDB_PERF_ROWS       kernel_details rows for parse (default 1000000)
#   OPDB_PERF_DB_ROWS    rows per database CSV for update (default 25000)
#   OPDB_PERF_PROF_ROWS  op_summary rows for update (default 1000000)
#   OPDB_PERF_EVENTS     trace events for compare (default 1000000)
#   OPDB_PERF_QUERIES    query lines for query (default 300000)
#   OPDB_PERF_CASES      the cases to run (default "parse update compare grid query")
#
# Exit status: 0, 1 when the builds' outputs differ or a run fails, 2 on
# bad usage / missing binaries.
set -u -o pipefail
export LC_ALL=C

usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit 2
}
[[ $# -ge 2 && $# -le 3 && $1 != -h && $1 != --help ]] || usage
OLD=$1/opdb NEW=$2/opdb GENDIR=$2/perf
ROUNDS=${3:-5}
WORK=${OPDB_PERF_DIR:-/tmp/opdb-perf}/ab
ROWS=${OPDB_PERF_ROWS:-1000000}
DB_ROWS=${OPDB_PERF_DB_ROWS:-25000}
PROF_ROWS=${OPDB_PERF_PROF_ROWS:-1000000}
EVENTS=${OPDB_PERF_EVENTS:-1000000}
NQ=${OPDB_PERF_QUERIES:-300000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for b in "$OLD" "$NEW" "$GENDIR/gen_kernel_details" "$GENDIR/gen_update_inputs" "$GENDIR/gen_trace" /usr/bin/time; do
    [[ -x $b ]] || { echo "ab.sh: missing executable $b (build with -DOPDB_BUILD_PERF=ON)" >&2; exit 2; }
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || usage
mkdir -p "$WORK/in" "$WORK/logs" || exit 2

# ------------------------------------------------------------ inputs
# make_input NAME CMD...: run CMD (which writes $WORK/in/NAME.tmp) unless NAME exists
make_input() {
    local name=$1
    shift
    [[ -e $WORK/in/$name ]] && return
    echo "input: generating $name" >&2
    rm -rf "$WORK/in/$name.tmp"
    "$@" 2>"$WORK/logs/gen.err" || { echo "ab.sh: generating $name failed" >&2; cat "$WORK/logs/gen.err" >&2; exit 2; }
    mv "$WORK/in/$name.tmp" "$WORK/in/$name"
}
KD=$WORK/in/kd_$ROWS.csv UPD=$WORK/in/upd_${DB_ROWS}_$PROF_ROWS
TRACE=$WORK/in/trace_$EVENTS.json FWD=$WORK/in/fwd_20000.csv
make_input "${KD##*/}" "$GENDIR/gen_kernel_details" "$ROWS" "$KD.tmp"
make_input "${UPD##*/}" "$GENDIR/gen_update_inputs" "$UPD.tmp" "$DB_ROWS" "$PROF_ROWS"
make_input "${TRACE##*/}" "$GENDIR/gen_trace" "$EVENTS" "$TRACE.tmp"
make_input "${FWD##*/}" "$GENDIR/gen_kernel_details" 20000 "$FWD.tmp"
GRIDDB=$WORK/in/grid_db QRY=$WORK/in/query_$NQ
make_input "${GRIDDB##*/}" python3 "$here/../tests/oracle/grid/make_db.py" "$GRIDDB.tmp" 2
make_input "${QRY##*/}" sh -c 'mkdir -p "$1" && python3 "$2" "$1" "$3" >/dev/null' sh "$QRY.tmp" "$here/gen_query_bench.py" "$NQ"
cat "$KD" "$TRACE" "$FWD" >/dev/null
find "$UPD" -type f -exec cat {} + >/dev/null

# ------------------------------------------------------------ runs
# one CASE BUILD(old|new) BIN: prepares, runs under GNU time in
# $WORK/run_CASE (the same path for both builds: paths appear in outputs);
# appends "wall cpu rss_kib" to $WORK/logs/CASE.BUILD
one() {
    local c=$1 w=$2 bin=$3 out=$WORK/run_$1
    rm -rf "$out" && mkdir -p "$out"
    local cmd
    case $c in
    parse) cmd=("$bin" parse --profiling-path "$KD" --database-path "$out/db") ;;
    update)
        cp -r "$UPD/db" "$out/db" || exit 2
        cmd=("$bin" update --prof-path "$UPD/prof" --database-path "$out/db")
        ;;
    compare) cmd=("$bin" compare --tc-trace "$TRACE" --prof-trace "$FWD" --output "$out/op_comparison.json") ;;
    grid)
        cp -r "$GRIDDB" "$out/db" || exit 2
        cmd=("$bin" grid --database-path "$out/db" --rows 0)
        ;;
    query) cmd=("$bin" query --db "$QRY/db" --tp-size 8 --grid 8,2) ;;
    esac
    local stdin=/dev/null
    [[ $c == query ]] && stdin=$QRY/queries.jsonl
    if ! /usr/bin/time -f '%e %U %S %M' -o "$WORK/logs/t" "${cmd[@]}" <"$stdin" >"$out/stdout" 2>"$out/stderr"; then
        echo "ab.sh: $c with $bin failed:" >&2
        tail -n 5 "$out/stderr" >&2
        FAILED=1
        return
    fi
    awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$WORK/logs/t" >>"$WORK/logs/$c.$w"
}

# same_outputs CASE: diff of the warm-up outputs of both builds. Report
# names carry the time of the run (normalised); compare's console table is
# left out (it is not a file output, and the default mode changed it on purpose).
same_outputs() {
    local a=$WORK/out_$1_old b=$WORK/out_$1_new ts='s/[0-9]{8}_[0-9]{6}/TS/g'
    diff -r -x stderr -x stdout -x reports "$a" "$b" || return 1
    [[ $1 == compare ]] && return 0
    diff <(sed -E "$ts" "$a/stdout") <(sed -E "$ts" "$b/stdout") || return 1
    [[ -d $a/db/reports ]] || return 0
    diff <(cat "$a"/db/reports/* | sed -E "$ts") <(cat "$b"/db/reports/* | sed -E "$ts")
}

read -r -a CASES <<<"${OPDB_PERF_CASES:-parse update compare grid query}"
FAILED=0
for c in "${CASES[@]}"; do rm -f "$WORK/logs/$c.old" "$WORK/logs/$c.new"; done
for ((r = 0; r <= ROUNDS; r++)); do
    printf '%s' "$( ((r)) && echo "round $r" || echo "warm-up")" >&2
    for c in "${CASES[@]}"; do
        one "$c" old "$OLD"
        ((r)) || { rm -rf "$WORK/out_${c}_old" && mv "$WORK/run_$c" "$WORK/out_${c}_old"; }
        one "$c" new "$NEW"
        ((r)) || { rm -rf "$WORK/out_${c}_new" && mv "$WORK/run_$c" "$WORK/out_${c}_new"; }
        if ((r == 0)); then
            # the timings of the warm-up do not count; its outputs are compared
            rm -f "$WORK/logs/$c.old" "$WORK/logs/$c.new"
            if ! same_outputs "$c" >"$WORK/logs/$c.diff"; then
                echo " $c: OUTPUTS DIFFER (see $WORK/logs/$c.diff)" >&2
                FAILED=1
            fi
        fi
        printf ' %s' "$c" >&2
    done
    echo >&2
done

# ------------------------------------------------------------ report
echo "opdb A/B: old $OLD, new $NEW; $ROUNDS rounds after a warm-up, old and new back to back"
echo "inputs: parse $ROWS rows ($(stat -c %s "$KD") B); update $DB_ROWS rows x 40 CSVs + $PROF_ROWS op_summary rows;" \
    "compare $EVENTS events ($(stat -c %s "$TRACE") B); grid on tests/oracle/grid/make_db.py's database;" \
    "query $NQ lines over perf/gen_query_bench.py's database"
echo "machine: $(awk -F: '/model name/ { sub(/^ +/, "", $2); print $2; exit }' /proc/cpuinfo), $(nproc) cores;" \
    "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-4s %22s %22s %8s\n' case "" "wall s best / median" "CPU s best / median" "RSS MiB"
for c in "${CASES[@]}"; do
    for w in old new; do
        [[ -s $WORK/logs/$c.$w ]] || continue
        awk -v c="$c" -v w="$w" '
            function med(a, n,   i, j, v) {
                for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
                return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
            }
            { n++; wall[n] = $1; cpu[n] = $2; if ($3 > rss) rss = $3 }
            END {
                wm = med(wall, n); cm = med(cpu, n)
                printf "%-8s %-4s %10.3f / %9.3f %10.3f / %9.3f %8.1f\n", c, w, wall[1], wm, cpu[1], cm, rss / 1024
            }' "$WORK/logs/$c.$w"
    done
    # per-round ratios new / old (same round, back to back), median
    paste -d' ' "$WORK/logs/$c.old" "$WORK/logs/$c.new" 2>/dev/null | awk -v c="$c" '
        function med(a, n,   i, j, v) {
            for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        NF == 6 && $1 > 0 && $2 > 0 { n++; w[n] = $4 / $1; u[n] = $5 / $2 }
        END { if (n) printf "%-8s new/old, median of per-round ratios: wall %.3f, CPU %.3f\n", c, med(w, n), med(u, n) }'
done
((FAILED)) && exit 1
exit 0
