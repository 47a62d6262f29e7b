#!/bin/sh
# corrupt_input.sh OPDB: `update` says what it silently accepted before: a
# header naming a column twice (the last one is used, as the reference
# does) and an empty op_summary file; both warnings name the file.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
p="$w/prof/PROF_000001_x/mindstudio_profiler_output"
mkdir -p "$p" "$w/db"
printf '%s\n0,1,1,1,k,Add,dynamic,AI_CORE,1.0,3.5,0,8,0,NO,"""4,64""",DT_BF16,ND,"""4,64""",DT_BF16,ND,0,1.0\n' "$hdr" >"$p/op_summary_1.csv"
: >"$p/op_summary_2.csv"
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Average Duration(us)\r\ndynamic,AI_CORE,"""8,64""",DT_BF16,ND,"""8,64""",DT_BF16,ND,1.0,2.0\r\n' >"$w/db/Add.csv"
OPDB_REPORT_TIMESTAMP=20260101_000000 "$opdb" update --prof-path "$w/prof" --database-path "$w/db" >/dev/null 2>"$w/err"
rc=$?
[ $rc = 0 ] || { echo "FAIL: update exit $rc"; cat "$w/err"; fail=1; }
grep -q "Add.csv:1: column 'Average Duration(us)' appears twice in the header: the last one is used" "$w/err" ||
  { echo "FAIL: no duplicate-column warning:"; cat "$w/err"; fail=1; }
grep -q "op_summary_2.csv: empty file: no op_summary rows" "$w/err" || { echo "FAIL: no empty-file warning:"; cat "$w/err"; fail=1; }
[ $fail = 0 ] && echo "corrupt input warnings: ok"
exit $fail
