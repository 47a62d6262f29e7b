# perf/rounds.sh - interleaved timing rounds shared by perf/check.sh and perf/diff.sh (bash).
# The caller sets: work (scratch folder), name (for messages), reps, cases (array) and a
# function `run CASE` that calls `timed COMMAND...`; results land in the array T
# (T[case]: wall seconds, T[case.cpu]: user + system seconds, T[case.rss]: peak KiB).
declare -A T

# one timed run: wall, peak RSS (KiB), user and system seconds into $work/last
timed() {
    /usr/bin/time -f '%e %M %U %S' -o "$work/last" "$@" >/dev/null 2>"$work/err"
    local rc=$?
    [[ $rc -le 1 ]] || { echo "$name: failed ($rc): $*" >&2; cat "$work/err" >&2; }
}

# one warm-up of every case (the page cache), then reps rounds of every case in turn
rounds_run() {
    local c r s kib us ss
    for c in "${cases[@]}"; do run "$c"; done
    for ((r = 0; r < reps; r++)); do
        for c in "${cases[@]}"; do
            run "$c"
            read -r s kib us ss < <(tail -n 1 "$work/last") # a failing command adds a first line
            T[$c]+="$s "
            T[$c.cpu]+="$(echo "$us + $ss" | bc -l) "
            T[$c.rss]=$kib
        done
    done
}

# the numbers on stdin, one per word: "best median"
stats() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%s %s", v[1], m}'; }

# the per-case table; ROWS rows handled per run
rounds_table() {
    local rows=$1 c best med rps cbest
    printf '%-9s %9s %9s %12s %9s %9s\n' case best_s median_s rows/s cpu_best rss_MiB
    for c in "${cases[@]}"; do
        read -r best med <<<"$(echo "${T[$c]}" | stats)"
        rps=$(awk -v r="$rows" -v b="$best" 'BEGIN {printf "%.0f", (b > 0 ? r / b : 0)}')
        read -r cbest _ <<<"$(echo "${T[$c.cpu]}" | stats)"
        printf '%-9s %9s %9s %12s %9s %9.1f\n' "$c" "$best" "$med" "$rps" "$cbest" "$(echo "${T[$c.rss]} / 1024" | bc -l)"
    done
}

# median of the per-round ratios of case A to case B
ratio() { paste -d' ' <(echo "${T[$1]}" | tr ' ' '\n' | sed '/^$/d') <(echo "${T[$2]}" | tr ' ' '\n' | sed '/^$/d') |
    awk '{print ($2 > 0 ? $1 / $2 : 0)}' | stats | awk '{print $2}'; }

# "target CASE < LIMIT s on one core": best wall and best CPU against LIMIT
# (wall time on a shared machine includes waiting for a core; CPU time is what one free core would take)
rounds_target() {
    local c=$1 limit=$2 best cbest
    read -r best _ <<<"$(echo "${T[$c]}" | stats)"
    read -r cbest _ <<<"$(echo "${T[$c.cpu]}" | stats)"
    awk -v n="$c" -v l="$limit" -v b="$best" -v c="$cbest" 'BEGIN {printf "target %s < %s s on one core: wall %s (%s), CPU %s (%s)\n", n, l, b, (b < l + 0 ? "met" : "missed"), c, (c < l + 0 ? "met" : "missed")}'
}
