#!/usr/bin/env bash
# perf/update.sh - wall time / memory report for `opdb update`.
#
# usage: perf/update.sh [BUILD_DIR]                       (default: build)
#
# Generates (once; reused while complete and the generator has not been
# rebuilt) a synthetic database of 40 per-operator CSVs and 4 msprof PROF_*
# folders with gen_update_inputs, then measures, after one warm-up round
# (so the inputs sit in the page cache), the best wall time of N rounds of
# (the cases take turns within a round, so a host that is slower for a while
# weighs on all of them alike):
#   opdb update --prof-path PROF --database-path COPY
#       COPY is a fresh copy of the pristine database, made before every
#       run (not timed); peak RSS from /usr/bin/time -v
#   floor: one shell command that cats every input file (all op_summary
#       files + all database CSVs) to /dev/null and writes the same bytes as
#       the database CSVs to new files in a fresh folder (cat db/X.csv >
#       new/X.csv for each)
# and prints input bytes, rows, wall seconds, MB/s (input bytes / 1e6 / s),
# peak RSS (MiB) and the time ratio opdb / floor (best / best).  Target
# checked (reported, not enforced): opdb update time <= 3x the floor.  Also
# printed: the ratio of the two runs of each round (min, median, max).
# Also reported for information: the floor with the written files fsync'ed
# (opdb replaces every CSV it rewrites through temp file + fsync + rename).
#
# Cast, Mul, TransData and ZerosLike are in the database but not in the
# update catalogue: opdb update must leave them alone (checked).
#
# Environment:
#   OPDB_PERF_DIR        work dir (default /tmp/opdb-perf; this uses .../update)
#   OPDB_PERF_REPS       timed rounds (default 5; best of each case is reported)
#   OPDB_PERF_DB_ROWS    rows per database CSV (default 25000)
#   OPDB_PERF_PROF_ROWS  op_summary rows over all PROF folders (default 1000000)
#   OPDB_PERF_STRICT     if 1, exit 1 when opdb fails or misses the target
#
# Exit status: 0 (it is a report), 2 on bad usage / missing binaries.

# shellcheck disable=SC2317  # prepare_* / floor_* are called through run_cases_interleaved
set -u -o pipefail
export LC_ALL=C
# shellcheck source-path=SCRIPTDIR source=lib.sh disable=SC1091
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh" || exit 2
bench_init update.sh 22

BUILD_DIR=${1:-build}
REPS=${OPDB_PERF_REPS:-5}
DB_ROWS=${OPDB_PERF_DB_ROWS:-25000}
PROF_ROWS=${OPDB_PERF_PROF_ROWS:-1000000}
WORK=${OPDB_PERF_DIR:-/tmp/opdb-perf}/update
STRICT=${OPDB_PERF_STRICT:-0}

if [[ $# -gt 1 || ${1:-} == -h || ${1:-} == --help ]]; then
    bench_usage
fi
for v in REPS DB_ROWS PROF_ROWS; do
    if ! bench_is_posint "${!v}"; then
        echo "update.sh: $v must be a positive integer (got '${!v}')" >&2
        exit 2
    fi
done

OPDB=$BUILD_DIR/opdb
GEN=$BUILD_DIR/perf/gen_update_inputs

bench_require_executables "$BUILD_DIR" "" "$OPDB" "$GEN"
bench_start
IN=$WORK/in_${DB_ROWS}_${PROF_ROWS}
MANIFEST=$IN/.manifest     # "size path" of every generated file
GENLOG=$IN/.gen.log
DB=$IN/db
PROF=$IN/prof
RUN=$WORK/run               # the database copy of each timed run
FLOOR_OUT=$WORK/floor_new   # the floor's written files

# ------------------------------------------------------------ inputs
inputs_complete() {
    [[ -f $MANIFEST && -s $MANIFEST && ! $GEN -nt $MANIFEST ]] || return 1
    local size path
    while read -r size path; do
        [[ -f $IN/$path && $(stat -c %s "$IN/$path") == "$size" ]] || return 1
    done <"$MANIFEST"
    return 0
}

if inputs_complete; then
    echo "input: reusing $IN"
else
    echo "input: generating $DB_ROWS rows per database CSV and $PROF_ROWS op_summary rows -> $IN"
    rm -rf "$IN" "$IN.tmp"
    if ! "$GEN" "$IN.tmp" "$DB_ROWS" "$PROF_ROWS" 2>"$WORK/logs/gen.err"; then
        echo "update.sh: generator failed:" >&2
        tail -n 15 "$WORK/logs/gen.err" | sed 's/^/   | /' >&2
        rm -rf "$IN.tmp"
        exit 2
    fi
    mv "$WORK/logs/gen.err" "$IN.tmp/.gen.log"
    (cd "$IN.tmp" && find db prof -type f -printf '%s %p\n' | sort -k2) >"$IN.tmp/.manifest.tmp" &&
        mv "$IN.tmp/.manifest.tmp" "$IN.tmp/.manifest" && mv "$IN.tmp" "$IN" || exit 2
fi
sed -e "s#$IN.tmp#$IN#" -e 's/^/  /' "$GENLOG" 2>/dev/null

mapfile -t PROF_FILES < <(find "$PROF" -type f -name 'op_summary_*.csv' | sort)
mapfile -t DB_FILES < <(find "$DB" -maxdepth 1 -type f -name '*.csv' | sort)
if ((${#PROF_FILES[@]} == 0 || ${#DB_FILES[@]} == 0)); then
    echo "update.sh: no inputs under $IN (remove it and run again)" >&2
    exit 2
fi
PROF_BYTES=$(cat "${PROF_FILES[@]}" | wc -c)
DB_BYTES=$(cat "${DB_FILES[@]}" | wc -c)
BYTES=$((PROF_BYTES + DB_BYTES))
PROF_LINES=$(cat "${PROF_FILES[@]}" | wc -l)
DB_LINES=$(cat "${DB_FILES[@]}" | wc -l)
PROF_DATA_ROWS=$((PROF_LINES - ${#PROF_FILES[@]}))
DB_DATA_ROWS=$((DB_LINES - ${#DB_FILES[@]}))
NONCAT=(Cast Mul TransData ZerosLike)

# ------------------------------------------------------------ measuring
# bench_case KEY LABEL PREPARE -- CMD...  (perf/lib.sh)
prepare_update() { # fresh copy of the pristine database (not timed)
    rm -rf "$RUN" && cp -r "$DB" "$RUN"
}
prepare_floor() {
    rm -rf "$FLOOR_OUT" && mkdir -p "$FLOOR_OUT"
}

floor_cmd() { # the floor: read every input, write the database's bytes again
    cat "${PROF_FILES[@]}" "${DB_FILES[@]}" >/dev/null || return 1
    local f
    for f in "${DB_FILES[@]}"; do
        cat "$f" >"$FLOOR_OUT/${f##*/}" || return 1
    done
}
floor_fsync_cmd() { # same, each written file fsync'ed
    cat "${PROF_FILES[@]}" "${DB_FILES[@]}" >/dev/null || return 1
    local f
    for f in "${DB_FILES[@]}"; do
        dd if="$f" of="$FLOOR_OUT/${f##*/}" bs=4M conv=fsync status=none || return 1
    done
}

echo "opdb update benchmark: best of $REPS rounds after 1 warm-up round (the cases take turns)"
bench_machine_line
SRC=$(cd "$(dirname "$0")/.." && git describe --always --dirty 2>/dev/null)
echo "opdb: $OPDB (built $(date -r "$OPDB" '+%Y-%m-%d %H:%M:%S')${SRC:+; source tree $SRC})"
printf 'input: %d op_summary files, %d rows, %d bytes (%s MB)\n' \
    "${#PROF_FILES[@]}" "$PROF_DATA_ROWS" "$PROF_BYTES" "$(bench_mb "$PROF_BYTES")"
printf '       %d database CSVs, %d rows, %d bytes (%s MB)\n' \
    "${#DB_FILES[@]}" "$DB_DATA_ROWS" "$DB_BYTES" "$(bench_mb "$DB_BYTES")"
printf '       %d bytes (%s MB) in all\n' "$BYTES" "$(bench_mb "$BYTES")"
echo "       ${NONCAT[*]}: not in the update catalogue, so opdb update leaves their CSVs alone"

# prime the page cache
cat "${PROF_FILES[@]}" "${DB_FILES[@]}" >/dev/null

echo "timing runs (seconds):" >&2
# (a fixed report timestamp: every run writes the same report file name)
export OPDB_REPORT_TIMESTAMP=20260101_000000
bench_case opdb "opdb update" prepare_update -- "$OPDB" update --prof-path "$PROF" --database-path "$RUN"
bench_case floor "floor (cat)" prepare_floor -- floor_cmd
bench_case floor_fsync "floor + fsync (info)" prepare_floor -- floor_fsync_cmd
# shellcheck disable=SC2119  # it takes no arguments (it sets its own with set --)
run_cases_interleaved
rm -rf "$FLOOR_OUT"

# ------------------------------------------------------------ report
echo
bench_table floor x_floor "$BYTES"
echo

any_fail=0
bench_report_failures || any_fail=1

# what the (last) update did
if [[ ${R_RC[opdb]} == 0 ]]; then
    echo "opdb update exit status: 0"
    out=$WORK/logs/opdb.out
    for m in "CSV files touched" "Rows updated" "Rows added" "Rows deleted" "Rows unchanged" \
        "Duplicate signatures" "Missing shapes"; do
        v=$(awk -F'|' -v m="$m" '{ k = $2; gsub(/^ +| +$/, "", k) } k == m {
                v = $3; gsub(/ /, "", v); print v; exit }' "$out")
        printf '  %-22s %s\n' "$m:" "${v:-?}"
    done
    nwarn=$(grep -c '^\[WARN\]' "$out")
    echo "  [WARN] lines:          $nwarn (MatMul-family rows are match-only: new shapes are warned about per CSV)"
    exp=$(grep -o 'expected update: [^;]*' "$GENLOG" 2>/dev/null)
    [[ -n $exp ]] && echo "  generator's $exp"
    untouched=() changed=()
    for op in "${NONCAT[@]}"; do
        if cmp -s "$DB/$op.csv" "$RUN/$op.csv"; then untouched+=("$op"); else changed+=("$op"); fi
    done
    echo "  non-catalogue CSVs left unchanged: ${untouched[*]:-none}${changed:+; CHANGED: ${changed[*]}}"
    echo
fi

miss=0
if [[ ${R_RC[opdb]} != 0 || ${R_RC[floor]} != 0 ]]; then
    printf '%-34s %s\n' "opdb update time / floor time:" "n/a (a run failed)"
    miss=1
else
    res=$(awk -v a="${R_TIME[opdb]}" -v b="${R_TIME[floor]}" 'BEGIN {
        r = a / b; printf "%.2fx  (%.3f s / %.3f s; target <= 3x: %s)", r, a, b, (r <= 3 ? "PASS" : "MISS") }')
    [[ $res == *MISS* ]] && miss=1
    printf '%-34s %s\n' "opdb update time / floor time:" "$res"
    read -r rmin rmed rmax < <(bench_round_ratios opdb floor)
    printf '%-34s %s\n' "same round opdb / floor:" "median ${rmed}x (min ${rmin}x, max ${rmax}x; $REPS rounds)"
fi
if [[ ${R_RC[opdb]} == 0 && -n ${R_RSS[opdb]} ]]; then
    printf '%-34s %s MiB\n' "opdb update peak RSS:" "$(awk -v k="${R_RSS[opdb]}" 'BEGIN { printf "%.1f", k / 1024 }')"
fi
echo "reference: 22-42 s and ~1 GB for 220,000 op_summary rows into a 130,000-row database"

bench_exit "$STRICT" $((any_fail || miss))
