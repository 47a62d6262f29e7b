#!/usr/bin/env bash
# perf/comm.sh - per-iteration overhead of `opdb comm bench` over a bare MPI
# loop of the same collective and size, measured in one run.
#
# usage: perf/comm.sh [BUILD_DIR]          (default: build)
#
# Each round runs, back to back (so a host that is slower for a while weighs
# on both alike):
#   floor:  mpirun -np NP comm_raw OP BYTES WARMUP ITERS  (perf/comm_raw.c:
#           the collective in a loop, one clock read before and after)
#   opdb:   mpirun -np NP opdb comm bench --ops OP --num-devices NP
#           --bytes-grid BYTES -w WARMUP -n ITERS --dtype torch.float32
#           --json F   -> out_of_place.time_us (timed loop / ITERS, max over ranks)
# (in ABBA order: neither side always first) and prints, per case, best and
# median µs per iteration, the overhead opdb - floor (best - best, median -
# median, and the median of the per-round differences) and peak RSS of rank
# 0's process tree (/usr/bin/time -v on mpirun). Then, in one process,
# `comm_raw ... pair` alternates 20 chunks of the bare loop and of
# opdb-comm's timed loop (clock read + store per iteration): the harness's
# own cost without the noise between processes. Target (reported, not
# enforced): overhead < 1 µs per iteration.
#
# Environment: OPDB_PERF_REPS (rounds, default 5), OPDB_COMM_NP (2),
# OPDB_COMM_OP (all_reduce), OPDB_COMM_BYTES (1024), OPDB_COMM_ITERS (20000),
# OPDB_COMM_WARMUP (1000).
set -u -o pipefail
export LC_ALL=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
build=${1:-build}
reps=${OPDB_PERF_REPS:-5}
np=${OPDB_COMM_NP:-2}
op=${OPDB_COMM_OP:-all_reduce}
bytes=${OPDB_COMM_BYTES:-1024}
iters=${OPDB_COMM_ITERS:-20000}
warm=${OPDB_COMM_WARMUP:-1000}
opdb=$build/opdb
raw=$build/perf/comm_raw
[ -x "$opdb" ] && [ -x "$raw" ] && [ -x "$build/opdb-comm" ] || { echo "perf/comm.sh: build $opdb, opdb-comm and $raw first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe -np "$np")
: >"$work/floor" ; : >"$work/opdb"
rss() { awk -F: '/Maximum resident/ {gsub(/ /, "", $2); print $2}' "$1"; }
run_floor() { /usr/bin/time -v -o "$work/t1" "${mpi[@]}" "$raw" "$op" "$bytes" "$warm" "$iters" >>"$work/floor" || exit 1; }
run_opdb() {
  /usr/bin/time -v -o "$work/t2" "${mpi[@]}" "$opdb" comm bench --ops "$op" --num-devices "$np" --bytes-grid "$bytes" \
      -w "$warm" -n "$iters" --dtype torch.float32 --json "$work/r.json" >/dev/null || exit 1
  awk '/"out_of_place"/ {f = 1} f && /"time_us"/ {gsub(/[",]/, ""); print $2; exit}' "$work/r.json" >>"$work/opdb"
}
for ((r = 0; r < reps; r++)); do # ABBA: neither side always runs first
  if ((r % 2 == 0)); then run_floor; run_opdb; else run_opdb; run_floor; fi
done
# one process, 20 alternating chunks: bare loop vs opdb-comm's loop (no noise between processes)
read -r pb pl pbm plm < <("${mpi[@]}" "$raw" "$op" "$bytes" "$warm" "$iters" pair) || exit 1
stat() { sort -g "$1" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f\n", v[1], m}'; }
read -r fb fm < <(stat "$work/floor")
read -r ob om < <(stat "$work/opdb")
printf 'comm bench overhead: %s %s B, %s ranks, %s iterations x %s rounds (host %s, %s cores)\n' "$op" "$bytes" "$np" "$iters" "$reps" "$(uname -m)" "$(nproc)"
printf '  %-8s best %8.3f us/iter  median %8.3f us/iter  peak RSS %s KiB (mpirun tree)\n' floor "$fb" "$fm" "$(rss "$work/t1")"
printf '  %-8s best %8.3f us/iter  median %8.3f us/iter  peak RSS %s KiB (mpirun tree)\n' opdb "$ob" "$om" "$(rss "$work/t2")"
awk -v fb="$fb" -v fm="$fm" -v ob="$ob" -v om="$om" 'BEGIN {
  printf "  overhead best %.3f us/iter, median %.3f us/iter (target < 1 us); ratio opdb/floor best %.3f, median %.3f\n",
         ob - fb, om - fm, ob / fb, om / fm }'
# the median of the per-round differences (each pair ran back to back)
paste "$work/opdb" "$work/floor" | awk '{print $1 - $2}' | sort -g |
  awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
       printf "  paired rounds: median opdb - floor %.3f us/iter (min %.3f, max %.3f)\n", m, v[1], v[NR]}'
awk -v b="$pb" -v l="$pl" -v bm="$pbm" -v lm="$plm" -v it="$iters" 'BEGIN {
  printf "  in one process (20 alternating chunks of %d): bare best %.3f / median %.3f, opdb loop best %.3f / median %.3f us/iter:\n", it / 20, b, bm, l, lm
  printf "  loop overhead best %.3f, median %.3f us/iter (target < 1 us)\n", l - b, lm - bm }'
