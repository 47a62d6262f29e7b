#!/bin/sh
# nonfinite.sh OPDB: op_summary durations `inf`, `nan`, `1e400` and negative
# ones are skipped with one counted warning and never written: the duration
# of a shape comes from its finite samples, and a shape with none keeps no value;
# `opdb validate` accepts the result.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
p="$w/prof/PROF_000001_x/mindstudio_profiler_output"
mkdir -p "$p" "$w/db"
{ echo "$hdr"; i=0
  for d in 2.5 inf nan 1e400 -5 3.5; do i=$((i + 1))
    printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,%s,0,8,0,NO,"""8,64""",DT_BF16,ND,"""8""",DT_BF16,ND,0,1.0\n' "$i" "$d"; done
  for d in inf -1; do i=$((i + 1))
    printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,%s,0,8,0,NO,"""16,64""",DT_BF16,ND,"""16""",DT_BF16,ND,0,1.0\n' "$i" "$d"; done
} >"$p/op_summary_1.csv"
"$opdb" update --prof-path "$w/prof" --database-path "$w/db" >"$w/out" 2>"$w/err" || { echo "FAIL: update failed"; cat "$w/err"; fail=1; }
grep -q '6 op_summary row(s) with a non-finite or negative' "$w/err" || { echo "FAIL: no counted warning"; cat "$w/err"; fail=1; }
if grep -qi 'inf\|nan' "$w/db/Add.csv"; then echo "FAIL: a non-finite value was written:"; cat "$w/db/Add.csv"; fail=1; fi
grep '"""8,64"""' "$w/db/Add.csv" | grep -q ',ND,2\.500000,' || { echo "FAIL: the shortest finite sample (2.5) is not the duration:"; cat "$w/db/Add.csv"; fail=1; }
grep -q -- '-[0-9]' "$w/db/Add.csv" && { echo "FAIL: a negative value was written"; cat "$w/db/Add.csv"; fail=1; }
"$opdb" validate --database-path "$w/db" >/dev/null 2>"$w/verr" || { echo "FAIL: validate rejects the result"; cat "$w/verr"; fail=1; }
[ $fail = 0 ] && echo "non-finite numbers: ok"
exit $fail
