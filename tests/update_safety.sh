#!/bin/sh
# update_safety.sh OPDB: two `opdb update` runs on one database at once
# serialise on the folder lock and lose no row; an update killed at any
# moment leaves every CSV either its old or its new complete version.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
prof() { # prof DIR FIRST COUNT: op_summary rows for shapes FIRST..FIRST+COUNT-1 of 12 operators
  mkdir -p "$1/PROF_000001_x/mindstudio_profiler_output"
  awk -v h="$hdr" -v a="$2" -v n="$3" 'BEGIN { print h; for (i = a; i < a + n; i++) for (o = 0; o < 12; o++)
    printf "0,1,%d,1,k,%s,dynamic,AI_CORE,1.0,%d.5,0,8,0,NO,\"\"\"%d,64\"\"\",DT_BF16,ND,\"\"\"%d\"\"\",DT_BF16,ND,0,1.0\n",
      i, (o == 0 ? "Add" : (o == 1 ? "RmsNorm" : (o == 2 ? "SwiGlu" : (o == 3 ? "Sort" : (o == 4 ? "GatherV2" : (o == 5 ? "TensorMove" : (o == 6 ? "Index" : (o == 7 ? "MaskedFill" : (o == 8 ? "PadV3" : (o == 9 ? "SoftmaxV2" : (o == 10 ? "ArgMaxV2" : "DynamicQuant"))))))))))), 1 + i % 97, i, i }' \
    >"$1/PROF_000001_x/mindstudio_profiler_output/op_summary_1.csv"
}
db() { # db DIR: one CSV per operator with one existing row each
  mkdir -p "$1"
  for op in Add RmsNorm SwiGlu Sort GatherV2 TensorMove Index MaskedFill PadV3 SoftmaxV2 ArgMaxV2 DynamicQuant; do
    printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\ndynamic,AI_CORE,"""0,64""",DT_BF16,ND,"""0""",DT_BF16,ND,1.0\r\n' >"$1/$op.csv"
  done
}
prof "$w/p1" 1000 2000
prof "$w/p2" 3000 2000
fail=0
# Two writers at once: both sets of rows end up in every CSV.
db "$w/db"
"$opdb" update --prof-path "$w/p1" --database-path "$w/db" >/dev/null 2>&1 & a=$!
"$opdb" update --prof-path "$w/p2" --database-path "$w/db" >/dev/null 2>&1 & b=$!
wait $a || { echo "FAIL: first concurrent update failed"; fail=1; }
wait $b || { echo "FAIL: second concurrent update failed"; fail=1; }
for f in "$w"/db/*.csv; do
  n=$(grep -c '^dynamic' "$f")
  [ "$n" -eq 4001 ] || { echo "FAIL: $(basename "$f") has $n rows, expected 4001 (1 + 2000 + 2000)"; fail=1; }
done
# Kill an update at several moments: each CSV is old or new, never partial.
db "$w/old"
cp -R "$w/old" "$w/new"
"$opdb" update --prof-path "$w/p1" --database-path "$w/new" >/dev/null 2>&1 || fail=1
for sig in KILL INT TERM; do
  for delay in 0.01 0.05 0.1 0.2; do
    rm -rf "$w/k"; cp -R "$w/old" "$w/k"
    "$opdb" update --prof-path "$w/p1" --database-path "$w/k" >/dev/null 2>&1 & p=$!
    sleep "$delay"; kill -s "$sig" "$p" 2>/dev/null; wait "$p" 2>/dev/null
    for f in "$w"/old/*.csv; do
      b=$(basename "$f")
      cmp -s "$w/k/$b" "$f" || cmp -s "$w/k/$b" "$w/new/$b" ||
        { echo "FAIL: $b neither old nor new after SIG$sig at ${delay}s"; fail=1; }
    done
    "$opdb" validate --database-path "$w/k" >/dev/null 2>"$w/verr"
    [ $? -le 1 ] && ! grep -qv '^opdb validate: checked ' "$w/verr" || { echo "FAIL: validate could not read the database after SIG$sig"; cat "$w/verr"; fail=1; }
  done
done
[ $fail = 0 ] && echo "update safety: ok"
exit $fail
