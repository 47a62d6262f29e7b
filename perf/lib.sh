# shellcheck shell=bash
# perf/lib.sh - timing / report harness shared by perf/parse.sh and
# perf/update.sh.  Sourced, not run.
#
# The sourcing script calls bench_init first, sets WORK (work dir; run logs
# go to $WORK/logs/KEY.{out,err,time}) and REPS (timed runs per case, after
# one warm-up), and calls bench_start before measuring.
#
# Results of run_case, by case KEY (ORDER lists the keys in run order):
#   R_LABEL[KEY]  label      R_RC[KEY]   exit status of the failing run, or 0
#   R_TIME[KEY]   best wall seconds      R_RSS[KEY]  max peak RSS in KiB ("": n/a)

declare -A R_TIME R_RSS R_RC R_LABEL
ORDER=()

# bench_init NAME LABEL_WIDTH: NAME for messages ("parse.sh"), LABEL_WIDTH
# of the case-label column (progress and table)
bench_init() {
    BENCH_NAME=$1
    BENCH_LABEL_WIDTH=$2
}

# print the script's header comment (its usage) and exit 2
bench_usage() {
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit 2
}

# bench_is_posint VALUE: a whole number >= 1
bench_is_posint() {
    [[ $1 =~ ^[0-9]+$ ]] && ! (($1 < 1))
}

# bench_require_executables BUILD_DIR NOTE BIN...: exit 2 with build hints
# (and NOTE, if not empty) unless every BIN is executable
bench_require_executables() {
    local build_dir=$1 note=$2 b
    shift 2
    local missing=()
    for b in "$@"; do
        [[ -x $b ]] || missing+=("$b")
    done
    ((${#missing[@]})) || return 0
    {
        echo "$BENCH_NAME: missing executable(s): ${missing[*]}"
        echo "build them first, e.g.:"
        echo "  cmake -S . -B $build_dir -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPDB_BUILD_PERF=ON"
        echo "  cmake --build $build_dir"
        [[ -z $note ]] || echo "$note"
    } >&2
    exit 2
}

# ------------------------------------------------------------ measuring
TIME_BIN=/usr/bin/time
HAVE_GNU_TIME=0

# bench_start: find GNU time (for peak RSS); make the work and log dirs
bench_start() {
    if [[ -x $TIME_BIN ]] && "$TIME_BIN" -v true >/dev/null 2>&1; then
        HAVE_GNU_TIME=1
    else
        echo "$BENCH_NAME: warning: GNU time (/usr/bin/time -v) not found; peak RSS will be n/a" >&2
    fi
    mkdir -p "$WORK" "$WORK/logs" || exit 2
}

if [[ -z ${EPOCHREALTIME:-} ]]; then
    now() { date +%s.%N; }
else
    now() { echo "$EPOCHREALTIME"; }
fi

# run_once KEY PREPARE CMD... ; sets T_SEC T_RSS T_RC
#   PREPARE (a command, ":" for none) runs first, not timed; if it fails, the
#   run fails with status 125.  CMD runs under GNU time (peak RSS) unless
#   that is missing or CMD is a shell function (then T_RSS is "").
run_once() {
    local key=$1 prep=$2
    shift 2
    local tfile=$WORK/logs/$key.time
    if ! $prep; then
        T_RC=125 T_SEC=0 T_RSS=""
        echo "$BENCH_NAME: preparing the run failed" >"$WORK/logs/$key.err"
        return
    fi
    local t0 t1
    if ((HAVE_GNU_TIME)) && ! declare -F -- "$1" >/dev/null; then
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

# run_case KEY LABEL PREPARE -- CMD...
#   one warm-up run, then REPS timed runs (stops at the first failure);
#   progress on stderr; sets R_*[KEY] and appends KEY to ORDER
run_case() {
    local key=$1 label=$2 prep=$3
    shift 4 # skip "--"
    ORDER+=("$key")
    R_LABEL[$key]=$label
    R_RC[$key]=0
    R_RSS[$key]=""
    R_TIME[$key]=""
    printf '  %-*s' "$BENCH_LABEL_WIDTH" "$label" >&2
    local i best="" maxrss=0
    for ((i = 0; i <= REPS; i++)); do # run 0 is the warm-up
        run_once "$key" "$prep" "$@"
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
    ((maxrss > 0)) && R_RSS[$key]=$maxrss
}

# Cases that take turns (bench_case, then run_cases_interleaved): round r
# runs every case once, in the order they were declared, so a host that
# slows down or speeds up for a while weighs on every case alike (the
# cases of run_case run in blocks, one after the other).
#   R_ALL[KEY]    every timed run's seconds, in round order
declare -A C_LABEL C_PREP C_CMD R_ALL
CASES=()

# bench_case KEY LABEL PREPARE -- CMD...: declare a case
bench_case() {
    local key=$1
    C_LABEL[$key]=$2
    C_PREP[$key]=$3
    shift 4 # skip "--"
    C_CMD[$key]=$(printf '%q ' "$@")
    CASES+=("$key")
}

# run_cases_interleaved: one warm-up round, then REPS timed rounds of every
# declared case (a case stops at its first failure); progress on stderr;
# sets R_*[KEY] for each case and appends them to ORDER
run_cases_interleaved() {
    local key r
    local -A best maxrss
    for key in "${CASES[@]}"; do
        ORDER+=("$key")
        R_LABEL[$key]=${C_LABEL[$key]}
        R_RC[$key]=0 R_RSS[$key]="" R_TIME[$key]="" R_ALL[$key]=""
        best[$key]="" maxrss[$key]=0
    done
    for ((r = 0; r <= REPS; r++)); do # round 0 is the warm-up
        if ((r == 0)); then printf '  warm-up round:' >&2; else printf '  round %d:' "$r" >&2; fi
        for key in "${CASES[@]}"; do
            [[ ${R_RC[$key]} == 0 ]] || continue
            eval "set -- ${C_CMD[$key]}"
            run_once "$key" "${C_PREP[$key]}" "$@"
            if ((T_RC != 0)); then
                R_RC[$key]=$T_RC
                printf ' %s FAILED (exit %s);' "$key" "$T_RC" >&2
                continue
            fi
            printf ' %s %.3f' "$key" "$T_SEC" >&2
            if [[ -n $T_RSS ]] && ((T_RSS > maxrss[$key])); then maxrss[$key]=$T_RSS; fi
            ((r == 0)) && continue
            R_ALL[$key]+="${R_ALL[$key]:+ }$T_SEC"
            if [[ -z ${best[$key]} ]] || awk -v a="$T_SEC" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; then
                best[$key]=$T_SEC
            fi
        done
        printf '\n' >&2
    done
    for key in "${CASES[@]}"; do
        R_TIME[$key]=${best[$key]}
        ((maxrss[$key] > 0)) && R_RSS[$key]=${maxrss[$key]}
    done
}

# bench_round_ratios KEY REF_KEY: the per-round ratios KEY / REF_KEY (same
# round, run back to back), as "min median max"
bench_round_ratios() {
    awk -v a="${R_ALL[$1]}" -v b="${R_ALL[$2]}" 'BEGIN {
        n = split(a, x, " "); m = split(b, y, " "); if (m < n) n = m
        for (i = 1; i <= n; i++) q[i] = x[i] / y[i]
        for (i = 2; i <= n; i++) { v = q[i]; for (j = i - 1; j >= 1 && q[j] > v; j--) q[j + 1] = q[j]; q[j + 1] = v }
        med = (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
        printf "%.2f %.2f %.2f", q[1], med, q[n]
    }'
}

# ------------------------------------------------------------ report
# bench_mb BYTES: BYTES / 1e6 with one decimal
bench_mb() {
    awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'
}

bench_machine_line() {
    local cpu
    cpu=$(awk -F: '/model name/ { sub(/^ +/, "", $2); print $2; exit }' /proc/cpuinfo 2>/dev/null)
    echo "machine: ${cpu:-unknown cpu}, $(nproc) cores, $(uname -sr)"
}

# bench_table REF_KEY X_HEADER BYTES [ROWS]
#   one line per case: wall seconds, MB/s (BYTES / 1e6 / s), rows/s (only
#   with ROWS), peak RSS in MiB and the time ratio to case REF_KEY
bench_table() {
    local ref=$1 xhead=$2 bytes=$3 rows=${4:-}
    local w=$BENCH_LABEL_WIDTH dashes key label ref_t=${R_TIME[$ref]:-}
    printf -v dashes '%*s' "$w" ''
    dashes=${dashes// /-}
    if [[ -n $rows ]]; then
        printf '%-*s %9s %9s %12s %9s %8s\n' "$w" "case" "wall_s" "MB/s" "rows/s" "RSS_MiB" "$xhead"
        printf '%-*s %9s %9s %12s %9s %8s\n' "$w" "$dashes" "---------" "---------" "------------" "---------" "--------"
    else
        printf '%-*s %9s %9s %9s %8s\n' "$w" "case" "wall_s" "MB/s" "RSS_MiB" "$xhead"
        printf '%-*s %9s %9s %9s %8s\n' "$w" "$dashes" "---------" "---------" "---------" "--------"
    fi
    for key in "${ORDER[@]}"; do
        label=${R_LABEL[$key]}
        if [[ ${R_RC[$key]} != 0 ]]; then
            printf '%-*s %s\n' "$w" "$label" "FAILED (exit ${R_RC[$key]}) - see $WORK/logs/$key.err"
            continue
        fi
        awk -v w="$w" -v l="$label" -v t="${R_TIME[$key]}" -v b="$bytes" -v r="$rows" \
            -v rss="${R_RSS[$key]}" -v ref="$ref_t" 'BEGIN {
            rs = (rss == "") ? "n/a" : sprintf("%.1f", rss / 1024);
            x = (ref == "" || ref <= 0) ? "n/a" : sprintf("%.2f", t / ref);
            if (t <= 0) t = 1e-6;
            fmt = "%-" w "s %9.3f %9.1f";
            printf fmt, l, t, b / 1e6 / t;
            if (r != "") printf " %12.0f", r / t;
            printf " %9s %8s\n", rs, x
        }'
    done
}

# bench_report_failures: the tail of stderr of every failed case; returns 1
# if there was one
bench_report_failures() {
    local key sig any_fail=0
    for key in "${ORDER[@]}"; do
        [[ ${R_RC[$key]} != 0 ]] || continue
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
    done
    return "$any_fail"
}

# bench_exit STRICT FAILED: exit 1 if both are 1, else 0 (it is a report)
bench_exit() {
    if [[ $1 == 1 && $2 == 1 ]]; then
        exit 1
    fi
    exit 0
}
