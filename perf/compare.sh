#!/usr/bin/env bash
# perf/compare.sh - throughput / memory report for the trace analysis
# commands (`opdb compare`, `opdb m6`, `opdb shape-compare`).
#
# usage: perf/compare.sh [BUILD_DIR] [EVENTS]      (defaults: build 1000000)
#
# Generates a synthetic performance-model Chrome trace with EVENTS complete
# events (~270 bytes each, so ~270 MB for 1,000,000; perf/gen_trace.c) and a
# 20,000-row forward-pass CSV (perf/gen_kernel_details.c), once (reused while
# intact and the generators have not been rebuilt), then measures, after one
# warm-up run each (so the inputs sit in the page cache), the best wall time
# of N runs of:
#   yajl_tokenize TRACE                          floor: read + tokenize only
#   opdb compare --tc-trace TRACE --prof-trace CSV --output OUT.json
#   opdb m6 --tc-trace TRACE --prof-trace CSV
#   opdb shape-compare --tc-trace TRACE --prof-trace CSV --output OUT.csv
#   opdb trace2csv --trace TRACE --output OUT.csv
# and prints wall seconds, MB/s (trace bytes / 1e6 / s), events/s, peak RSS
# ("Maximum resident set size" from /usr/bin/time -v, in MiB) and the time
# ratio to the floor. Then the same commands again, round-robin, for the best
# CPU time (user + system) of each, recording each case's wall time over
# the floor run just before it: on a shared 2-core machine wall time follows
# whatever else runs, and the median of these paired ratios is the steadier
# figure. Targets checked (reported, not enforced) on wall time (best of N,
# and the paired median); the CPU-time ratio is shown for information (opdb
# parses a big trace on a second thread, so it spends more CPU than wall):
#   opdb time / floor time <= 1.5 (compare, m6, shape-compare)
#   opdb peak RSS < 64 MiB
#
# Environment:
#   OPDB_PERF_DIR     work dir (default /tmp/opdb-perf)
#   OPDB_PERF_REPS    timed runs per case (default 3; best is reported)
#   OPDB_PERF_STRICT  if 1, exit 1 when opdb fails or misses a target
#
# Exit status: 0 (it is a report), 2 on bad usage / missing binaries.

# shellcheck disable=SC2317  # prepare_* are called through run_case
set -u -o pipefail
export LC_ALL=C
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2
bench_init compare.sh 22

BUILD_DIR=${1:-build}
EVENTS=${2:-1000000}
REPS=${OPDB_PERF_REPS:-3}
WORK=${OPDB_PERF_DIR:-/tmp/opdb-perf}
STRICT=${OPDB_PERF_STRICT:-0}
PROF_ROWS=20000

if [[ $# -gt 2 || ${1:-} == -h || ${1:-} == --help ]]; then
    bench_usage
fi
if ! bench_is_posint "$EVENTS"; then
    echo "compare.sh: EVENTS must be a positive integer (got '$EVENTS')" >&2
    exit 2
fi
if ! bench_is_posint "$REPS"; then
    echo "compare.sh: OPDB_PERF_REPS must be a positive integer" >&2
    exit 2
fi

OPDB=$BUILD_DIR/opdb
GEN=$BUILD_DIR/perf/gen_trace
GEN_PROF=$BUILD_DIR/perf/gen_kernel_details
TOK=$BUILD_DIR/perf/yajl_tokenize

bench_require_executables "$BUILD_DIR" "(yajl_tokenize needs libyajl-dev and zlib1g-dev)" \
    "$OPDB" "$GEN" "$GEN_PROF" "$TOK"
bench_start
TRACE=$WORK/tc_trace_${EVENTS}.json
PROF=$WORK/fwd_pass_${PROF_ROWS}.csv

# make_input GENERATOR FILE ARGS...: (re)generate FILE unless it is intact
# (size recorded in FILE.size) and newer than its generator
make_input() {
    local gen=$1 file=$2
    shift 2
    if [[ -f $file && -f $file.size && ! $gen -nt $file &&
          $(stat -c %s "$file") == "$(cat "$file.size")" ]]; then
        echo "input: reusing $file"
        return
    fi
    echo "input: generating $file"
    rm -f "$file" "$file.size"
    if ! "$gen" "$@" "$file.tmp"; then
        echo "compare.sh: $gen failed" >&2
        rm -f "$file.tmp"
        exit 2
    fi
    mv "$file.tmp" "$file"
    stat -c %s "$file" >"$file.size"
}
make_input "$GEN" "$TRACE" "$EVENTS"
make_input "$GEN_PROF" "$PROF" "$PROF_ROWS"
BYTES=$(stat -c %s "$TRACE")

# prime the page cache
cat "$TRACE" "$PROF" >/dev/null

# ------------------------------------------------------------ measuring
OUT=$WORK/compare_out
prepare() { rm -rf "$OUT" && mkdir -p "$OUT"; }

echo "opdb trace analysis benchmark: $EVENTS events, $BYTES bytes ($(bench_mb "$BYTES") MB), best of $REPS after 1 warm-up"
bench_machine_line
echo "timing runs (seconds):" >&2

run_case floor "yajl_tokenize (floor)" : -- "$TOK" "$TRACE"
have_compare=0
if "$OPDB" compare --help 2>/dev/null | grep -q -- --tc-trace; then
    have_compare=1
    run_case compare "opdb compare" prepare -- \
        "$OPDB" compare --tc-trace "$TRACE" --prof-trace "$PROF" --output "$OUT/op_comparison.json"
else
    echo "compare.sh: this opdb has no 'compare --tc-trace'; skipping it" >&2
fi
run_case m6 "opdb m6" prepare -- "$OPDB" m6 --tc-trace "$TRACE" --prof-trace "$PROF"
run_case shape "opdb shape-compare" prepare -- \
    "$OPDB" shape-compare --tc-trace "$TRACE" --prof-trace "$PROF" --output "$OUT/per_shape.csv"
run_case t2c "opdb trace2csv" prepare -- "$OPDB" trace2csv --trace "$TRACE" --output "$OUT/trace.csv"

# CPU time (user + system), best of REPS, the cases taking turns
declare -A CPU CMDS PAIR
CMDS[floor]="$TOK $TRACE"
((have_compare)) && CMDS[compare]="$OPDB compare --tc-trace $TRACE --prof-trace $PROF --output $OUT/op_comparison.json"
CMDS[m6]="$OPDB m6 --tc-trace $TRACE --prof-trace $PROF"
CMDS[shape]="$OPDB shape-compare --tc-trace $TRACE --prof-trace $PROF --output $OUT/per_shape.csv"
CMDS[t2c]="$OPDB trace2csv --trace $TRACE --output $OUT/trace.csv"
if ((HAVE_GNU_TIME)); then
    echo "CPU time runs (user + system seconds):" >&2
    for ((i = 0; i < REPS; i++)); do
        for key in "${ORDER[@]}"; do
            [[ ${R_RC[$key]} == 0 ]] || continue
            prepare
            # shellcheck disable=SC2086  # the command line is split on purpose (no spaces in paths)
            "$TIME_BIN" -f '%U %S %e' -o "$WORK/logs/$key.cpu" ${CMDS[$key]} >/dev/null 2>&1 || continue
            t=$(awk '{ printf "%.3f", $1 + $2 }' "$WORK/logs/$key.cpu")
            w=$(awk '{ print $3 }' "$WORK/logs/$key.cpu")
            if [[ $key == floor ]]; then
                round_floor=$w
            elif [[ -n ${round_floor:-} ]]; then # wall time over the floor run just before it
                PAIR[$key]+="$(awk -v a="$w" -v b="$round_floor" 'BEGIN { if (b > 0) printf "%.4f ", a / b }')"
            fi
            if [[ -z ${CPU[$key]:-} ]] || awk -v a="$t" -v b="${CPU[$key]}" 'BEGIN { exit !(a < b) }'; then
                CPU[$key]=$t
            fi
        done
    done
fi

# ------------------------------------------------------------ report
echo
bench_table floor x_floor "$BYTES" "$EVENTS"
echo
if ((HAVE_GNU_TIME)); then
    printf '%-*s %9s %8s\n' "$BENCH_LABEL_WIDTH" "case" "cpu_s" "x_floor"
    for key in "${ORDER[@]}"; do
        [[ -n ${CPU[$key]:-} ]] || continue
        awk -v w="$BENCH_LABEL_WIDTH" -v l="${R_LABEL[$key]}" -v t="${CPU[$key]}" -v f="${CPU[floor]:-}" 'BEGIN {
            printf "%-" w "s %9.3f %8s\n", l, t, (f > 0 ? sprintf("%.2f", t / f) : "n/a") }'
    done
    echo
fi

any_fail=0
bench_report_failures || any_fail=1

[[ ${R_RC[m6]} == 0 ]] && echo "opdb m6: $(grep '^M6 = ' "$WORK/logs/m6.out")"
echo

miss=0
targets=(m6 shape)
((have_compare)) && targets=(compare "${targets[@]}")
for key in "${targets[@]}"; do
    label=${R_LABEL[$key]}
    if [[ ${R_RC[$key]} != 0 || ${R_RC[floor]} != 0 ]]; then
        printf '%-50s %s\n' "$label time / floor time:" "n/a (a run failed)"
        miss=1
        continue
    fi
    res=$(awk -v a="${R_TIME[$key]}" -v b="${R_TIME[floor]}" 'BEGIN {
        r = a / b; printf "%.2fx  (target <= 1.5x: %s)", r, (r <= 1.5 ? "PASS" : "MISS") }')
    [[ $res == *MISS* ]] && miss=1
    printf '%-50s %s\n' "$label time / floor time:" "$res"
    if [[ -n ${PAIR[$key]:-} ]]; then
        # robust on a noisy machine: each run over the floor run just before it
        res=$(echo "${PAIR[$key]}" | tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
            m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
            printf "%.2fx over %d pairs, range %.2f-%.2f  (target <= 1.5x: %s)", m, NR, v[1], v[NR], (m <= 1.5 ? "PASS" : "MISS") }')
        [[ $res == *MISS* ]] && miss=1
        printf '%-50s %s\n' "$label paired wall-time ratio (median):" "$res"
    fi
    if [[ -n ${CPU[$key]:-} && -n ${CPU[floor]:-} ]]; then
        res=$(awk -v a="${CPU[$key]}" -v b="${CPU[floor]}" 'BEGIN {
            printf "%.2fx  (information: big traces are parsed on a second thread)", a / b }')
        printf '%-50s %s\n' "$label CPU time / floor CPU time:" "$res"
    fi
    if [[ -z ${R_RSS[$key]} ]]; then
        printf '%-50s %s\n' "peak RSS $label:" "n/a (no GNU time)"
        continue
    fi
    res=$(awk -v k="${R_RSS[$key]}" 'BEGIN {
        m = k / 1024; printf "%.1f MiB (target < 64 MiB: %s)", m, (m < 64 ? "PASS" : "MISS") }')
    [[ $res == *MISS* ]] && miss=1
    printf '%-50s %s\n' "peak RSS $label:" "$res"
done

bench_exit "$STRICT" $((any_fail || miss))
