#!/usr/bin/env bash
# perf/grid.sh - throughput / memory of `opdb grid`.
#
# usage: perf/grid.sh [BUILD_DIR] [ROUNDS]        (defaults: build 3)
#
# Builds a database with one CSV per shipped pattern (tests/oracle/grid/
# make_db.py: the first kernel type of each pattern, 2 rows each; needs
# python3 with PyYAML), then, in interleaved rounds over fresh copies:
#   opdb grid --database-path DB --rows 0        full uncapped grid, all presets
#   floor: cp -r of the CSVs that run wrote      (writing the same bytes)
# and prints the best and median wall time of each, appended rows/s, the
# output MB/s, the ratio opdb / floor (best and median of the paired ratios),
# opdb's peak RSS (/usr/bin/time -v) and the largest single output file, the
# bound the memory should follow (one file in memory at a time).
# Targets (reported): >= 1,000,000 appended rows/s on one core; peak RSS
# bounded by the largest file, not the total.  On a shared, loaded host wall
# time mostly measures the other processes, so CPU time (user + system, from
# /usr/bin/time) is measured for both opdb and the floor, and the CPU figures
# are the ones to quote; the wall figures are printed too.
set -u -o pipefail
export LC_ALL=C
BUILD_DIR=${1:-build}
ROUNDS=${2:-3}
OPDB=$BUILD_DIR/opdb
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x "$OPDB" ] || { echo "perf/grid.sh: $OPDB not built" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/opdb-grid-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
python3 "$here/../tests/oracle/grid/make_db.py" "$W/db0" 2 || exit 2

now() { date +%s.%N; }
best() { sort -g | head -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: >"$W/t_opdb"; : >"$W/t_floor"; : >"$W/ratio"
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$W/db" "$W/floor"; cp -r "$W/db0" "$W/db"
  t0=$(now)
  /usr/bin/time -v "$OPDB" grid --database-path "$W/db" --rows 0 >"$W/out" 2>"$W/time" || { cat "$W/time"; exit 1; }
  t1=$(now)
  sync "$W/db" 2>/dev/null
  t2=$(now)
  /usr/bin/time -f '%U %S' -o "$W/ftime" cp -r "$W/db" "$W/floor"
  t3=$(now)
  awk '{print $1 + $2}' "$W/ftime" >>"$W/fcpu"
  a=$(echo "$t1 - $t0" | bc -l); b=$(echo "$t3 - $t2" | bc -l)
  echo "$a" >>"$W/t_opdb"; echo "$b" >>"$W/t_floor"; echo "$a / $b" | bc -l >>"$W/ratio"
  grep "Maximum resident" "$W/time" | awk '{print $NF}' >>"$W/rss"
  # CPU seconds (user + system): on a shared, loaded machine wall time mostly measures the others
  awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$W/time" >>"$W/cpu"
  echo "$(tail -1 "$W/cpu") / $(tail -1 "$W/fcpu")" | sed 's#/ 0$#/ 0.01#' | bc -l >>"$W/cpuratio"
done
rows=$(sed -n 's/^Appended \([0-9]*\) rows.*/\1/p' "$W/out")
bytes=$(cat "$W/db"/*.csv | wc -c)
largest=$(ls -S "$W/db"/*.csv | head -1)
lbytes=$(wc -c <"$largest")
bo=$(best <"$W/t_opdb"); mo=$(median <"$W/t_opdb"); bf=$(best <"$W/t_floor"); mf=$(median <"$W/t_floor")
rss=$(sort -n "$W/rss" | tail -1)
printf 'opdb grid --rows 0 (all presets, %d CSVs, %d rounds, host %s, %s CPUs)\n' "$(ls "$W/db0" | wc -l)" "$ROUNDS" "$(hostname)" "$(nproc)"
printf '  appended rows           %d (output %.1f MB)\n' "$rows" "$(echo "$bytes / 1000000" | bc -l)"
printf '  opdb wall best/median   %.3f s / %.3f s\n' "$bo" "$mo"
printf '  appended rows/s         %.0f (best) / %.0f (median)\n' "$(echo "$rows / $bo" | bc -l)" "$(echo "$rows / $mo" | bc -l)"
printf '  output MB/s             %.1f (best)\n' "$(echo "$bytes / 1000000 / $bo" | bc -l)"
printf '  floor (cp -r) best/med  %.3f s / %.3f s\n' "$bf" "$mf"
printf '  ratio opdb/floor        %.2f (best/best) / %.2f (median of paired)\n' "$(echo "$bo / $bf" | bc -l)" "$(median <"$W/ratio")"
bc_=$(best <"$W/cpu"); mc_=$(median <"$W/cpu")
printf '  opdb CPU best/median    %.3f s / %.3f s -> %.0f / %.0f appended rows per CPU second\n' "$bc_" "$mc_" "$(echo "$rows / $bc_" | bc -l)" "$(echo "$rows / $mc_" | bc -l)"
bf_=$(best <"$W/fcpu"); mf_=$(median <"$W/fcpu")
printf '  floor CPU best/median   %.3f s / %.3f s (cp -r: 0.01 s resolution)\n' "$bf_" "$mf_"
printf '  CPU ratio opdb/floor    %.2f (best/best) / %.2f (median of paired)\n' "$(echo "$bc_ / ($bf_ + ($bf_ == 0) * 0.01)" | bc -l)" "$(median <"$W/cpuratio")"
printf '  target                  >= 1000000 appended rows per CPU second: %s (best) / %s (median)\n' "$(echo "$rows / $bc_ >= 1000000" | bc -l | sed 's/1/met/;s/0/missed/')" "$(echo "$rows / $mc_ >= 1000000" | bc -l | sed 's/1/met/;s/0/missed/')"
printf '  load average            %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  peak RSS                %.1f MiB; largest file %s %.1f MiB\n' "$(echo "$rss / 1024" | bc -l)" "$(basename "$largest")" "$(echo "$lbytes / 1048576" | bc -l)"
