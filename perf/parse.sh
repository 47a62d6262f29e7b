#!/usr/bin/env bash
# perf/parse.sh - throughput / memory report for `opdb parse`.
#
# usage: perf/parse.sh [BUILD_DIR] [ROWS]        (defaults: build 1000000)
#
# Generates a synthetic kernel_details CSV with ROWS data rows (once; reused
# while it is intact and the generator has not been rebuilt), then measures,
# after one warm-up run each (so the input sits in the page cache), the best
# wall time of N runs of:
#   wc -l FILE                                   floor: raw read + newline scan
#   opdb parse --profiling-path FILE --database-path OUT           (default threads)
#   opdb parse --profiling-path FILE --database-path OUT --threads 1
#   libcsv_tokenize FILE                         libcsv tokenize-only floor
# and prints wall seconds, MB/s (input bytes / 1e6 / s), rows/s, peak RSS
# ("Maximum resident set size" from /usr/bin/time -v, shown in MiB) and the
# time ratio to wc -l.  Targets checked (reported, not enforced):
#   libcsv time / opdb time >= 5
#   opdb peak RSS <= 64 MiB + 16 bytes * ROWS
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
bench_init parse.sh 26

BUILD_DIR=${1:-build}
ROWS=${2:-1000000}
REPS=${OPDB_PERF_REPS:-3}
WORK=${OPDB_PERF_DIR:-/tmp/opdb-perf}
STRICT=${OPDB_PERF_STRICT:-0}

if [[ $# -gt 2 || ${1:-} == -h || ${1:-} == --help ]]; then
    bench_usage
fi
if ! bench_is_posint "$ROWS"; then
    echo "parse.sh: ROWS must be a positive integer (got '$ROWS')" >&2
    exit 2
fi
if ! bench_is_posint "$REPS"; then
    echo "parse.sh: OPDB_PERF_REPS must be a positive integer" >&2
    exit 2
fi

OPDB=$BUILD_DIR/opdb
GEN=$BUILD_DIR/perf/gen_kernel_details
TOK=$BUILD_DIR/perf/libcsv_tokenize

bench_require_executables "$BUILD_DIR" "(libcsv_tokenize needs libcsv: apt-get install libcsv-dev)" \
    "$OPDB" "$GEN" "$TOK"
bench_start
FILE=$WORK/kernel_details_${ROWS}.csv
HDR=$WORK/.expected_header.csv

# ------------------------------------------------------------ input file
if ! "$GEN" 0 "$HDR" 2>/dev/null; then
    echo "parse.sh: $GEN failed to write a header" >&2
    exit 2
fi
expected_header=$(head -n 1 "$HDR")

reuse=0
if [[ -f $FILE && -f $FILE.size && ! $GEN -nt $FILE ]]; then
    if [[ $(stat -c %s "$FILE") == "$(cat "$FILE.size")" &&
          "$(head -n 1 "$FILE")" == "$expected_header" ]]; then
        reuse=1
    fi
fi
if ((reuse)); then
    echo "input: reusing $FILE"
else
    echo "input: generating $ROWS rows -> $FILE"
    rm -f "$FILE" "$FILE.size"
    if ! "$GEN" "$ROWS" "$FILE.tmp"; then
        echo "parse.sh: generator failed" >&2
        rm -f "$FILE.tmp"
        exit 2
    fi
    mv "$FILE.tmp" "$FILE"
    stat -c %s "$FILE" >"$FILE.size"
fi
BYTES=$(stat -c %s "$FILE")

# prime the page cache
cat "$FILE" >/dev/null

# ------------------------------------------------------------ measuring
# run_case KEY LABEL PREPARE -- CMD...  (perf/lib.sh); PREPARE removes the
# case's output dir before every run (not timed).
OUT_DEF=$WORK/out_default
OUT_T1=$WORK/out_threads1
prepare_def() { rm -rf "$OUT_DEF"; }
prepare_t1() { rm -rf "$OUT_T1"; }

echo "opdb parse benchmark: $ROWS rows, $BYTES bytes ($(bench_mb "$BYTES") MB), best of $REPS after 1 warm-up"
bench_machine_line
echo "timing runs (seconds):" >&2

run_case wc "wc -l" : -- wc -l "$FILE"
run_case opdb "opdb parse (default thr)" prepare_def -- \
    "$OPDB" parse --profiling-path "$FILE" --database-path "$OUT_DEF"
run_case opdb_t1 "opdb parse --threads 1" prepare_t1 -- \
    "$OPDB" parse --profiling-path "$FILE" --database-path "$OUT_T1" --threads 1
run_case libcsv "libcsv_tokenize" : -- "$TOK" "$FILE"

# line count from the (last) wc run
LINES=$(awk '{ print $1; exit }' "$WORK/logs/wc.out" 2>/dev/null)
[[ $LINES =~ ^[0-9]+$ ]] || LINES=$((ROWS + 1))
DATA_ROWS=$((LINES - 1))

# ------------------------------------------------------------ report
echo
bench_table wc x_wc "$BYTES" "$DATA_ROWS"
echo

# failures: show the tail of stderr
any_fail=0
bench_report_failures || any_fail=1

# libcsv sanity: records should equal the line count
if [[ ${R_RC[libcsv]} == 0 ]]; then
    tok_line=$(tail -n 1 "$WORK/logs/libcsv.out")
    echo "libcsv_tokenize: $tok_line (wc -l: $LINES lines)"
fi

# opdb outputs
for key in opdb opdb_t1; do
    [[ ${R_RC[$key]} == 0 ]] || continue
    d=$OUT_DEF
    [[ $key == opdb_t1 ]] && d=$OUT_T1
    if [[ -d $d ]]; then
        nfiles=$(find "$d" -type f | wc -l)
        nbytes=$(du -sb "$d" | awk '{ print $1 }')
        echo "${R_LABEL[$key]}: wrote $nfiles file(s), $nbytes bytes under $d"
    else
        echo "${R_LABEL[$key]}: warning: no output directory $d"
    fi
done
echo

miss=0
ratio_line() { # KEY
    local key=$1
    if [[ ${R_RC[$key]} != 0 || ${R_RC[libcsv]} != 0 ]]; then
        printf '%-44s %s\n' "libcsv time / ${R_LABEL[$key]} time:" "n/a (a run failed)"
        miss=1
        return
    fi
    local res
    res=$(awk -v a="${R_TIME[libcsv]}" -v b="${R_TIME[$key]}" 'BEGIN {
        r = a / b; printf "%.2fx  (target >= 5x: %s)", r, (r >= 5 ? "PASS" : "MISS") }')
    [[ $res == *MISS* ]] && miss=1
    printf '%-44s %s\n' "libcsv time / ${R_LABEL[$key]} time:" "$res"
}
ratio_line opdb
ratio_line opdb_t1

LIMIT_BYTES=$((64 * 1024 * 1024 + 16 * DATA_ROWS))
for key in opdb opdb_t1; do
    label="peak RSS ${R_LABEL[$key]}:"
    if [[ ${R_RC[$key]} != 0 ]]; then
        printf '%-44s %s\n' "$label" "n/a (run failed)"
        continue
    fi
    if [[ -z ${R_RSS[$key]} ]]; then
        printf '%-44s %s\n' "$label" "n/a (no GNU time)"
        continue
    fi
    res=$(awk -v k="${R_RSS[$key]}" -v lim="$LIMIT_BYTES" 'BEGIN {
        b = k * 1024; printf "%.1f MiB <= %.1f MiB (64 MiB + 16 B x rows): %s",
        b / 1048576, lim / 1048576, (b <= lim ? "PASS" : "MISS") }')
    [[ $res == *MISS* ]] && miss=1
    printf '%-44s %s\n' "$label" "$res"
done

# The PyTorch-trace (Kineto) and SQLite cases, opt-in: OPDB_PERF_KINETO_MB=<size of the
# generated trace>; same interleaved rounds, best/median, ratio to the yajl floor, peak RSS, CPU seconds.
if [[ -n ${OPDB_PERF_KINETO_MB:-} ]]; then
    bash "$(dirname "$0")/parse_formats.sh" "$BUILD_DIR" "$OPDB_PERF_KINETO_MB" || any_fail=1
fi

bench_exit "$STRICT" $((any_fail || miss))
