#!/usr/bin/env bash
# bench/parse.sh - throughput / memory report for `opdb parse`.
#
# usage: bench/parse.sh [BUILD_DIR] [ROWS]        (defaults: build 1000000)
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
#   OPDB_BENCH_DIR     work dir (default /tmp/opdb-bench)
#   OPDB_BENCH_REPS    timed runs per case (default 3; best is reported)
#   OPDB_BENCH_STRICT  if 1, exit 1 when opdb fails or misses a target
#
# Exit status: 0 (it is a report), 2 on bad usage / missing binaries.

set -u -o pipefail
export LC_ALL=C

BUILD_DIR=${1:-build}
ROWS=${2:-1000000}
REPS=${OPDB_BENCH_REPS:-3}
WORK=${OPDB_BENCH_DIR:-/tmp/opdb-bench}
STRICT=${OPDB_BENCH_STRICT:-0}

if [[ $# -gt 2 || ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit 2
fi
if ! [[ $ROWS =~ ^[0-9]+$ ]] || ((ROWS < 1)); then
    echo "parse.sh: ROWS must be a positive integer (got '$ROWS')" >&2
    exit 2
fi
if ! [[ $REPS =~ ^[0-9]+$ ]] || ((REPS < 1)); then
    echo "parse.sh: OPDB_BENCH_REPS must be a positive integer" >&2
    exit 2
fi

OPDB=$BUILD_DIR/opdb
GEN=$BUILD_DIR/bench/gen_kernel_details
TOK=$BUILD_DIR/bench/libcsv_tokenize

missing=()
for b in "$OPDB" "$GEN" "$TOK"; do
    [[ -x $b ]] || missing+=("$b")
done
if ((${#missing[@]})); then
    {
        echo "parse.sh: missing executable(s): ${missing[*]}"
        echo "build them first, e.g.:"
        echo "  cmake -S . -B $BUILD_DIR -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPDB_BUILD_BENCH=ON"
        echo "  cmake --build $BUILD_DIR"
        echo "(libcsv_tokenize needs libcsv: apt-get install libcsv-dev)"
    } >&2
    exit 2
fi

TIME_BIN=/usr/bin/time
HAVE_GNU_TIME=0
if [[ -x $TIME_BIN ]] && "$TIME_BIN" -v true >/dev/null 2>&1; then
    HAVE_GNU_TIME=1
else
    echo "parse.sh: warning: GNU time (/usr/bin/time -v) not found; peak RSS will be n/a" >&2
fi
if [[ -z ${EPOCHREALTIME:-} ]]; then
    now() { date +%s.%N; }
else
    now() { echo "$EPOCHREALTIME"; }
fi

mkdir -p "$WORK" "$WORK/logs" || exit 2
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
# run_case KEY LABEL OUTDIR -- CMD...
#   OUTDIR ("" if none) is removed before every run (not timed).
# Sets R_TIME[KEY] (best seconds), R_RSS[KEY] (max KiB), R_RC[KEY].
declare -A R_TIME R_RSS R_RC R_LABEL
ORDER=()

run_once() { # KEY OUTDIR CMD... ; sets T_SEC T_RSS T_RC
    local key=$1 outdir=$2
    shift 2
    local tfile=$WORK/logs/$key.time
    [[ -n $outdir ]] && rm -rf "$outdir"
    local t0 t1
    if ((HAVE_GNU_TIME)); then
        t0=$(now)
        "$TIME_BIN" -v -o "$tfile" "$@" >"$WORK/logs/$key.out" 2>"$WORK/logs/$key.err"
        T_RC=$?
        t1=$(now)
        T_RSS=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tfile")
    else
        t0=$(now)
        "$@" >"$WORK/logs/$key.out" 2>"$WORK/logs/$key.err"
        T_RC=$?
        t1=$(now)
        T_RSS=""
    fi
    T_SEC=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
}

run_case() {
    local key=$1 label=$2 outdir=$3
    shift 4 # skip "--"
    ORDER+=("$key")
    R_LABEL[$key]=$label
    R_RC[$key]=0
    R_RSS[$key]=""
    R_TIME[$key]=""
    printf '  %-26s' "$label" >&2
    local i best="" maxrss=0
    for ((i = 0; i <= REPS; i++)); do # run 0 is the warm-up
        run_once "$key" "$outdir" "$@"
        if ((T_RC != 0)); then
            R_RC[$key]=$T_RC
            printf ' FAILED (exit %s)\n' "$T_RC" >&2
            return
        fi
        if [[ -n $T_RSS ]] && ((T_RSS > maxrss)); then maxrss=$T_RSS; fi
        if ((i == 0)); then
            printf ' warm-up %.3fs;' "$T_SEC" >&2
            continue
        fi
        printf ' %.3f' "$T_SEC" >&2
        if [[ -z $best ]] || awk -v a="$T_SEC" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$T_SEC
        fi
    done
    printf '\n' >&2
    R_TIME[$key]=$best
    ((HAVE_GNU_TIME)) && R_RSS[$key]=$maxrss
}

CPU=$(awk -F: '/model name/ { sub(/^ +/, "", $2); print $2; exit }' /proc/cpuinfo 2>/dev/null)
echo "opdb parse benchmark: $ROWS rows, $BYTES bytes ($(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }') MB), best of $REPS after 1 warm-up"
echo "machine: ${CPU:-unknown cpu}, $(nproc) cores, $(uname -sr)"
echo "timing runs (seconds):" >&2

OUT_DEF=$WORK/out_default
OUT_T1=$WORK/out_threads1
run_case wc "wc -l" "" -- wc -l "$FILE"
run_case opdb "opdb parse (default thr)" "$OUT_DEF" -- \
    "$OPDB" parse --profiling-path "$FILE" --database-path "$OUT_DEF"
run_case opdb_t1 "opdb parse --threads 1" "$OUT_T1" -- \
    "$OPDB" parse --profiling-path "$FILE" --database-path "$OUT_T1" --threads 1
run_case libcsv "libcsv_tokenize" "" -- "$TOK" "$FILE"

# line count from the (last) wc run
LINES=$(awk '{ print $1; exit }' "$WORK/logs/wc.out" 2>/dev/null)
[[ $LINES =~ ^[0-9]+$ ]] || LINES=$((ROWS + 1))
DATA_ROWS=$((LINES - 1))

# ------------------------------------------------------------ report
echo
printf '%-26s %9s %9s %12s %9s %8s\n' "case" "wall_s" "MB/s" "rows/s" "RSS_MiB" "x_wc"
printf '%-26s %9s %9s %12s %9s %8s\n' "--------------------------" "---------" "---------" "------------" "---------" "--------"
WC_T=${R_TIME[wc]:-}
for key in "${ORDER[@]}"; do
    label=${R_LABEL[$key]}
    if [[ ${R_RC[$key]} != 0 ]]; then
        printf '%-26s %s\n' "$label" "FAILED (exit ${R_RC[$key]}) - see $WORK/logs/$key.err"
        continue
    fi
    awk -v l="$label" -v t="${R_TIME[$key]}" -v b="$BYTES" -v r="$DATA_ROWS" \
        -v rss="${R_RSS[$key]}" -v wc="$WC_T" 'BEGIN {
        rs = (rss == "") ? "n/a" : sprintf("%.1f", rss / 1024);
        x = (wc == "" || wc <= 0) ? "n/a" : sprintf("%.2f", t / wc);
        if (t <= 0) t = 1e-6;
        printf "%-26s %9.3f %9.1f %12.0f %9s %8s\n", l, t, b / 1e6 / t, r / t, rs, x
    }'
done
echo

# failures: show the tail of stderr
any_fail=0
for key in "${ORDER[@]}"; do
    if [[ ${R_RC[$key]} != 0 ]]; then
        any_fail=1
        sig=""
        ((R_RC[$key] > 128)) && sig=" (killed by signal $((R_RC[$key] - 128)))"
        echo "!! ${R_LABEL[$key]} FAILED with exit status ${R_RC[$key]}$sig; last stderr lines ($WORK/logs/$key.err):"
        if [[ -s $WORK/logs/$key.err ]]; then
            tail -n 15 "$WORK/logs/$key.err" | sed 's/^/   | /'
        else
            echo "   | (stderr empty)"
        fi
        echo
    fi
done

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

if [[ $STRICT == 1 ]] && ((any_fail || miss)); then
    exit 1
fi
exit 0
