#!/bin/sh
# grid_real.sh OPDB SHARED_REAL_DIR: a database parsed from a real
# kernel_details file (in the repo), plus the real msmodeling FIA database
# CSV when the shared collection is present, goes through `opdb grid --seed`
# (default mode and --reference-quirks); `opdb validate` must then report
# nothing new except the theory rows' missing durations (they await replay),
# and a second grid run must find nothing left to add.
set -u
opdb=$1
real=$2
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
"$opdb" parse --profiling-path "$here/data/real/msinsight_l1_rank0_kernel_details.csv" --database-path "$w/db" >/dev/null || exit 1
fia="$real/ascend/msmodeling_perfdb_FusedInferAttentionScore_aggregated.csv"
[ -f "$fia" ] && cp "$fia" "$w/db/FusedInferAttentionScore.csv"
"$opdb" validate --database-path "$w/db" | grep -v ': no valid duration: ' | grep -v '^[^:]*: [0-9]* file(s)' >"$w/before"
for mode in "" --reference-quirks; do
  rm -rf "$w/g"; cp -R "$w/db" "$w/g"
  "$opdb" grid --database-path "$w/g" --seed 20260409 --rows 0 $mode >"$w/out" 2>"$w/err" || { echo "FAIL: grid $mode"; cat "$w/err"; fail=1; }
  n=$(sed -n 's/^Appended \([0-9]*\) rows.*/\1/p' "$w/out")
  [ "${n:-0}" -gt 1000 ] || { echo "FAIL: grid $mode appended only '${n:-}' rows"; fail=1; }
  "$opdb" validate --database-path "$w/g" | grep -v ': no valid duration: ' | grep -v '^[^:]*: [0-9]* file(s)' | sed 's#/g/#/db/#' >"$w/after"
  sed -i "s#$w/g#$w/db#" "$w/after"
  diff "$w/before" "$w/after" || { echo "FAIL: validate finds new problems after grid $mode"; fail=1; }
  "$opdb" grid --database-path "$w/g" --seed 1 --rows 0 $mode >"$w/out2" 2>&1 || fail=1
  grep -q '^Appended 0 rows' "$w/out2" || { echo "FAIL: a second grid $mode run added rows"; head -3 "$w/out2"; fail=1; }
  echo "grid $mode: appended $n rows; validate: no new problem"
done
exit $fail
