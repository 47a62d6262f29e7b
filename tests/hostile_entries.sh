#!/bin/sh
# hostile_entries.sh OPDB: entries and values that used to hang or mislead:
# a FIFO, a device or a folder named like a table is refused before any lock
# is taken or anything is read (a FIFO used to hang update --add-new-ops while
# it held the lock); an empty --database-path is a usage error (it meant the
# current folder); a UTF-16 input is named as such (it was reported as a CSV
# with missing columns); a table with a quote that never closes is refused.  timeout only guards against a hang.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
p="$w/prof/PROF_000001_x/mindstudio_profiler_output"
mkdir -p "$p"
printf '%s\n0,1,1,1,k,Add,dynamic,AI_CORE,1.0,3.5,0,8,0,NO,"""4,64""",DT_BF16,ND,"""4,64""",DT_BF16,ND,0,1.0\n0,1,2,1,k,Mul,dynamic,AI_CORE,1.0,3.5,0,8,0,NO,"""4,64""",DT_BF16,ND,"""4,64""",DT_BF16,ND,0,1.0\n' "$hdr" >"$p/op_summary_1.csv"
table='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\ndynamic,AI_CORE,"""4,64""",DT_BF16,ND,"""4,64""",DT_BF16,ND,1.0\r\n'
expect() { # expect LABEL RC WANT_RC TEXT
  [ "$2" = "$3" ] || { echo "FAIL: $1: exit $2, want $3"; head -c 400 "$w/err"; fail=1; }
  grep -q -- "$4" "$w/err" || { echo "FAIL: $1: stderr lacks '$4':"; head -c 400 "$w/err"; echo; fail=1; }
}
for kind in fifo folder device; do
  rm -rf "$w/db"; mkdir "$w/db"
  printf "$table" >"$w/db/Add.csv"
  case $kind in
    fifo) mkfifo "$w/db/Mul.csv"; what="a FIFO" ;;
    folder) mkdir "$w/db/Mul.csv"; what="a folder" ;;
    device) ln -s /dev/zero "$w/db/Mul.csv"; what="a character device" ;;
  esac
  cp "$w/db/Add.csv" "$w/Add.before"
  timeout 20 "$opdb" update --prof-path "$w/prof" --database-path "$w/db" --add-new-ops >/dev/null 2>"$w/err"
  expect "update --add-new-ops, Mul.csv $what" $? 1 "Mul.csv: is $what, not a table file"
  cmp -s "$w/db/Add.csv" "$w/Add.before" || { echo "FAIL: update changed Add.csv next to $what"; fail=1; }
  timeout 20 "$opdb" grid --data-dir "$w/db" --rows 2 --seed 1 >/dev/null 2>"$w/err"
  expect "grid, Mul.csv $what" $? 1 "Mul.csv: is $what, not a table file"
  timeout 20 "$opdb" validate --database-path "$w/db" --repair >/dev/null 2>"$w/err" </dev/null
  expect "validate --repair, Mul.csv $what" $? 1 "Mul.csv: is $what, not a table file"
done
# an empty path is not the current folder
mkdir "$w/cwd"
(cd "$w/cwd" && timeout 20 "$opdb" update --prof-path "$w/prof" --database-path '' >/dev/null 2>"$w/err")
expect "update --database-path ''" $? 2 "argument --database-path: an empty path"
(cd "$w/cwd" && timeout 20 "$opdb" parse --profiling-path "$p/op_summary_1.csv" --database-path= >/dev/null 2>"$w/err")
expect "parse --database-path=" $? 2 "argument --database-path: an empty path"
[ -z "$(ls "$w/cwd")" ] || { echo "FAIL: an empty --database-path wrote into the current folder:"; ls "$w/cwd"; fail=1; }
# update into a folder that does not exist: refused (a mistyped path), nothing created
timeout 20 "$opdb" update --prof-path "$w/prof" --database-path "$w/nodb" >/dev/null 2>"$w/err"
expect "update into a missing folder" $? 1 "database folder not found: .*nodb"
[ -e "$w/nodb" ] && { echo "FAIL: update created the missing folder"; fail=1; }
# UTF-16 inputs, with and without a byte order mark
printf '{"traceEvents": []}' | iconv -f UTF-8 -t UTF-16 >"$w/bom.json"
printf '{"traceEvents": []}' | iconv -f UTF-8 -t UTF-16LE >"$w/le.json"
printf 'Type,Duration(us)\n' | iconv -f UTF-8 -t UTF-16BE >"$w/be.csv"
for f in bom.json le.json be.csv; do
  timeout 20 "$opdb" parse --profiling-path "$w/$f" --database-path "$w/u16" >/dev/null 2>"$w/err"
  expect "parse of UTF-16 $f" $? 1 "$f: UTF-16 text (.*-endian.*opdb reads UTF-8"
done
# a table whose template row opens a quote that never closes (the rest of the
# file would be one cell): grid refuses it with the file and line and changes
# nothing; --reference-quirks reads it as the reference does
rm -rf "$w/bt"; mkdir "$w/bt"
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\ndynamic,AI_CORE,"""4,64;4,64,DT_BF16;DT_BF16,ND;ND,4,DT_BF16,ND,1.0\r\n' >"$w/bt/Add.csv"
printf "$table" >"$w/bt/Mul.csv"
cp "$w/bt/Add.csv" "$w/bt.Add"; cp "$w/bt/Mul.csv" "$w/bt.Mul"
timeout 20 "$opdb" grid --data-dir "$w/bt" --rows 2 --seed 1 >/dev/null 2>"$w/err"
expect "grid over an unterminated quote" $? 1 "bt/Add.csv:2: unterminated quoted field"
cmp -s "$w/bt/Add.csv" "$w/bt.Add" && cmp -s "$w/bt/Mul.csv" "$w/bt.Mul" || { echo "FAIL: grid changed a table next to a broken one"; fail=1; }
timeout 20 "$opdb" grid --data-dir "$w/bt" --rows 2 --seed 1 --reference-quirks >/dev/null 2>"$w/err" ||
  { echo "FAIL: grid --reference-quirks refused the unterminated quote"; head -c 400 "$w/err"; fail=1; }
[ $fail = 0 ] && echo "hostile entries: ok"
exit $fail
