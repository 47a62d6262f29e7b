#!/bin/sh
# perf/convergence.sh - does `opdb bench`'s stop rule finish, is `--plan` right, do runs agree?
#
# usage: perf/convergence.sh OPDB DB OUT LABEL [RUNS] -- [opdb bench flags...]
#
# On the database folder DB (left as it is): `opdb bench --plan` once, then
# RUNS (3) runs of `opdb bench`, each on a fresh copy, with the same flags;
# the measured tables of run i are kept as OUT/LABEL.run<i>/. Then
# perf/convergence.py writes one summary line to OUT/summary.txt (appended):
# rows that met the stop rule (MicroBench Converged = yes), the plan's
# estimate against each run's wall time, and the run-to-run agreement (per
# row, max/min of MicroBench Median Duration(us) over the runs; the median
# and the worst over rows), with the 1-minute load average before and after.
# Exit status: 0 (it is a report), 2 on bad usage.
set -u
[ $# -ge 4 ] || { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 2; }
opdb=$1 db=$2 out=$3 label=$4
shift 4
runs=3
if [ $# -gt 0 ] && [ "$1" != -- ]; then runs=$1; shift; fi
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
now() { date +%s.%N; }
cp -R "$db" "$work/plan"
"$opdb" bench --database-path "$work/plan" "$@" --plan >"$out/$label.plan.txt" 2>&1
l0=$(load)
walls=""
for i in $(seq 1 "$runs"); do
  rm -rf "$work/db"
  cp -R "$db" "$work/db"
  t0=$(now)
  "$opdb" bench --database-path "$work/db" "$@" >"$out/$label.run$i.out" 2>"$out/$label.run$i.err"
  t1=$(now)
  walls="$walls $(awk "BEGIN{print $t1 - $t0}")"
  rm -rf "$out/$label.run$i"
  mkdir -p "$out/$label.run$i"
  cp "$work/db"/*.csv "$out/$label.run$i/"
done
l1=$(load)
dirs=$(for i in $(seq 1 "$runs"); do echo "$out/$label.run$i"; done)
# shellcheck disable=SC2086
python3 "$here/convergence.py" "$label" "$out/$label.plan.txt" "$l0" "$l1" "$walls" $dirs | tee -a "$out/summary.txt"
