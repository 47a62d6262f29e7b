#!/bin/sh
# corrupt_input.sh OPDB: `update` says what it silently accepted before: a
# header naming a column twice (the last one is used, as the reference
# does) and an empty op_summary file; both warnings name the file. Then
# validate's and shape-compare's own checks of corrupt input.
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

# validate and shape-compare: random bytes, UTF-16, gzip, a text
# that is no table and a file ending inside a quote give one clear line naming the
# file (not one per garbage row), exit 1, no crash.
dbh='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)'
one() { # one NAME MAKE-FILE EXPECTED: a database of that one table
  rm -rf "$w/v"; mkdir "$w/v"; eval "$2"
  "$opdb" validate --database-path "$w/v" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] || { echo "FAIL: validate $1: exit $rc"; fail=1; }
  [ "$(grep -c "^$w/v/T.csv:" "$w/out")" = 1 ] || { echo "FAIL: validate $1: not one line for the file:"; head -c 600 "$w/out"; fail=1; }
  grep -q "$3" "$w/out" || { echo "FAIL: validate $1: no '$3':"; head -c 400 "$w/out"; fail=1; }
}
one "random bytes" 'awk "BEGIN { srand(7); for (i = 0; i < 20000; i++) printf \"%c\", int(rand() * 256) }" >"$w/v/T.csv"' 'T.csv:1: unreadable: binary data'
one "UTF-16" 'printf "%s\r\ndynamic,AI_CORE,1,DT,ND,1,DT,ND,1.0\r\n" "$dbh" | iconv -f utf-8 -t utf-16 >"$w/v/T.csv"' 'T.csv:1: unreadable: UTF-16 text'
one "gzip" 'printf "%s\r\n" "$dbh" | gzip >"$w/v/T.csv"' 'T.csv:1: unreadable: gzip-compressed'
one "other text" 'printf "hello\nworld\nfoo\n" >"$w/v/T.csv"' 'T.csv:1: not a database table'
one "truncated in a quote" 'printf "%s\r\ndynamic,AI_CORE,\"\"\"4,64\"\"\",DT,ND,\"\"\"4\"\"\",DT,ND,1.0\r\ndynamic,AI_CORE,\"\"\"8,6" "$dbh" >"$w/v/T.csv"' 'T.csv:3: unreadable: unterminated quoted field'
printf 'Type,Start Time(us),Duration(us),Input Shapes\nMatMul,1.0,2.0,"1,2"\n' >"$w/prof_ok.csv"
printf '{"traceEvents": [{"name": "MatMul", "ph": "X", "ts": 1, "dur": 2, "args": {"Input Dims": [[1, 2]]}}]}' >"$w/tc.json"
sc() { # sc NAME MAKE-PROF EXPECTED
  eval "$2"
  "$opdb" shape-compare --tc-trace "$w/tc.json" --prof-trace "$w/p.csv" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] || { echo "FAIL: shape-compare $1: exit $rc"; fail=1; }
  [ -s "$w/out" ] && { echo "FAIL: shape-compare $1: wrote a table"; fail=1; }
  [ "$(wc -l <"$w/err")" = 1 ] && grep -q "$3" "$w/err" || { echo "FAIL: shape-compare $1: not one line with '$3':"; head -c 400 "$w/err"; fail=1; }
}
"$opdb" shape-compare --tc-trace "$w/tc.json" --prof-trace "$w/prof_ok.csv" >/dev/null 2>"$w/err" || { echo "FAIL: shape-compare refuses a valid pair:"; cat "$w/err"; fail=1; }
sc "random bytes" 'awk "BEGIN { srand(7); for (i = 0; i < 20000; i++) printf \"%c\", int(rand() * 256) }" >"$w/p.csv"' 'p.csv:1: binary data'
sc "NUL bytes after a valid start" '{ cat "$w/prof_ok.csv"; printf "\000\000"; } >"$w/p.csv"' 'p.csv:1: binary data (a NUL byte at offset'
sc "UTF-16" 'iconv -f utf-8 -t utf-16 "$w/prof_ok.csv" >"$w/p.csv"' 'p.csv:1: UTF-16 text'
sc "truncated in a quote" '{ cat "$w/prof_ok.csv"; printf "MatMul,3.0,4.0,\"1,"; } >"$w/p.csv"' 'p.csv:3: unterminated quoted field'
[ $fail = 0 ] && echo "corrupt input warnings: ok"
exit $fail
