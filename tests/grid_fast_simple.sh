#!/bin/sh
# grid_fast_simple.sh OPDB CONFIG_YAML: opdb grid's fast path (streamed
# candidates, hash-only dedup set, constant-row writer, prefix merge sort)
# against its simple path (OPDB_GRID_SIMPLE=1: candidate pool,
# set of signature strings, qsort, cell-by-cell writer) on a generated
# database: one CSV per kernel type the configuration assigns (its first
# name), with templates of varying slot counts, an absent dtype slot, a row
# that duplicates a candidate and a measured row.  Every flag set below must
# give the same files, stdout and stderr both ways.
set -u
case $1 in /*) opdb=$1 ;; *) opdb=$PWD/$1 ;; esac
config=$2
w=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT
mkdir "$w/db0"
# the first kernel type of each assignment line ("  pattern: [First, ...")
awk '/^assignments:/ {on = 1; next} on && /^  [A-Za-z_]+: \[/ {sub(/.*\[/, ""); sub(/[],].*/, ""); print}' "$config" >"$w/kts"
[ "$(wc -l <"$w/kts")" -ge 30 ] || { echo "FAIL: too few kernel types read from $config"; exit 1; }
i=0
while read -r kt; do
  nin=$((2 + i % 3)); nout=$((1 + i % 2))
  hdr="OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Count,Average Duration(us),Note"
  ep=; [ "$kt" = DispatchFFNCombine ] && { hdr="$hdr,EP Size"; ep=",16"; }
  shapes= dts= fms= osh= odt= ofm=
  s=0; while [ $s -lt $nin ]; do
    sep=${shapes:+;}
    shapes="$shapes$sep$((s + 1)),$((128 * (s + 1)))"
    if [ $((i % 4)) -eq 0 ] && [ $s -eq 1 ]; then dts="$dts${sep}DT_UNDEFINED"; else dts="$dts${sep}DT_BF16"; fi
    fms="$fms${sep}ND"; s=$((s + 1))
  done
  s=0; while [ $s -lt $nout ]; do
    sep=${osh:+;}; osh="$osh$sep$((s + 1)),64"; odt="$odt${sep}DT_FLOAT"; ofm="$ofm${sep}ND"; s=$((s + 1))
  done
  {
    printf '%s\r\n' "$hdr"
    printf 'dynamic,AI_CORE,"""%s""",%s,%s,"""%s""",%s,%s,3,0,template%s\r\n' "$shapes" "$dts" "$fms" "$osh" "$odt" "$ofm" "$ep"
    printf 'dynamic,AI_CORE,"""1,128;1,128""",%s,%s,"""1,128""",%s,%s,1,0,likely a candidate%s\r\n' "$dts" "$fms" "$odt" "$ofm" "$ep"
    printf 'dynamic,AI_CORE,"""2,256;2,256""",DT_BF16;DT_BF16,ND;ND,"""2,256""",DT_BF16,ND,1,4.5,measured%s\r\n' "$ep"
  } >"$w/db0/$kt.csv"
  i=$((i + 1))
done <"$w/kts"
fail=0
run() { # run NAME FLAGS...: both paths on fresh copies, then compare
  name=$1; shift
  for path in dbFast dbSimple; do
    rm -rf "$w/$path"; cp -R "$w/db0" "$w/$path"
    if [ $path = dbSimple ]; then simple=1; else simple=0; fi
    (cd "$w" && OPDB_GRID_SIMPLE=$simple "$opdb" grid --data-dir $path "$@" >"$path.out" 2>"$path.err"; echo "rc=$?" >>"$path.out")
    sed -i "s#$path#X#g" "$w/$path.out" "$w/$path.err"
  done
  if diff -r "$w/dbFast" "$w/dbSimple" >/dev/null && diff "$w/dbFast.out" "$w/dbSimple.out" >/dev/null &&
     diff "$w/dbFast.err" "$w/dbSimple.err" >/dev/null; then
    echo "same: $name ($(sed -n 's/^Appended \([0-9]*\) rows.*/\1 rows/p' "$w/dbFast.out"); $(tail -1 "$w/dbFast.out"))"
  else
    echo "FAIL: $name: the fast path differs from the simple path"
    diff -r "$w/dbFast" "$w/dbSimple" | head -5; diff "$w/dbFast.out" "$w/dbSimple.out" | head -5
    diff "$w/dbFast.err" "$w/dbSimple.err" | head -5
    fail=1
  fi
}
run default --rows 0
# the comparison means something only if many rows were appended
n=$(sed -n 's/^Appended \([0-9]*\) rows.*/\1/p' "$w/dbFast.out")
[ "${n:-0}" -gt 10000 ] || { echo "FAIL: the default run appended only '${n:-}' rows"; fail=1; }
run sampled --rows 40 --seed 7
run quirks --rows 0 --reference-quirks
run quirks-sampled --rows 25 --seed 3 --reference-quirks
run memory-filter --rows 0 --max-hbm-gb 0.002
run target-models --rows 0 --target-models Qwen/Qwen3-32B,deepseek-ai/DeepSeek-V3
run plan --plan --rows 10 --seed 5 --target-models Qwen/Qwen3-32B
exit $fail
