#!/bin/sh
# stdin_names.sh OPDB SRC: every command that reads '-' from stdin names it
# "<stdin>" in its errors and warnings, never the temporary file it copies
# stdin to. One broken input per option that takes '-'.
set -u
opdb=$1
src=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
# opdb copies '-' into a folder under $TMPDIR: a folder of this test's own, so
# that its name can be looked for in stderr wherever the checkout and /tmp are.
TMPDIR=$w/spool
export TMPDIR
mkdir "$TMPDIR" || exit 1
fail=0
printf '{"traceEvents": [' >bad.json
printf 'a,b\r\n1,2\r\n' >bad.csv
printf 'Type,Duration(us),Start Time(us),Input Shapes\r\nA,x,1,"1,2"\r\nB,2,3,"1,2"\r\n' >baddur.csv
sed '2s/,3\.2,0,8/,x,0,8/' "$src/tests/cli/parse_stdin/in/kernel_details.csv" >kd_baddur.csv
tc=$src/tests/cli/compare_allreduce_skd/in/t.json
prof=$src/tests/cli/compare_allreduce_skd/in/p.csv
aie="--M 64 --K 64 --N 64 --m 32 --k 32 --n 32 --row 1 --col 1 --hwid npu1 --warmup 1 --iterations 2"
n=0
# check WHAT WANT_RC INPUT COMMAND...: run with INPUT on stdin; stderr must name <stdin>, not the temp file
check() {
  what=$1 want=$2 input=$3
  shift 3
  n=$((n + 1))
  "$@" <"$input" >out.$n 2>err.$n
  rc=$?
  if [ "$want" != any ] && [ $rc -ne "$want" ]; then echo "FAIL $what: exit $rc, expected $want"; fail=1; fi
  grep -qF '<stdin>' err.$n || { echo "FAIL $what: stderr does not name <stdin>:"; cat err.$n; fail=1; }
  if grep -qF "$TMPDIR" err.$n || grep -qE 'opdb-stdio|stdin\.(json|csv|jsonl)|shapes\.csv' err.$n; then
    echo "FAIL $what: stderr names the temporary file:"; cat err.$n; fail=1
  fi
}
check "m6 --tc-trace -" 1 bad.json "$opdb" m6 --tc-trace - --prof-trace "$prof"
check "m6 --prof-trace - (error)" 1 bad.csv "$opdb" m6 --tc-trace "$tc" --prof-trace -
check "m6 --prof-trace - (warning)" any baddur.csv "$opdb" m6 --tc-trace "$tc" --prof-trace -
check "shape-compare --tc-trace -" 1 bad.json "$opdb" shape-compare --tc-trace - --prof-trace "$prof"
check "shape-compare --prof-trace -" 1 bad.csv "$opdb" shape-compare --tc-trace "$tc" --prof-trace -
check "trace2csv --trace -" 1 bad.json "$opdb" trace2csv --trace - --output -
check "compare --tc-trace -" 1 bad.json "$opdb" compare --tc-trace - --prof-trace "$prof"
printf '{"traceEvents": [{"ph": "X", "name": "a", "pid": 5, "ts": 0, "dur": 1, "args": {"kernel_type": "A"}}]}' >nopname.json
check "compare --tc-trace - (sole-PID warning)" 0 nopname.json "$opdb" compare --tc-trace - --prof-trace "$prof"
check "compare --prof-trace - (warning)" 0 baddur.csv "$opdb" compare --tc-trace "$tc" --prof-trace -
check "compare --shapes -" 1 bad.csv "$opdb" compare --tc-trace "$tc" --prof-trace "$prof" --html r.html --shapes -
check "fia-fill --csv-path -" 1 bad.csv "$opdb" fia-fill --csv-path - \
  --jsonl-path "$src/tests/cli/fiafill_stdin_stdout/in/fia_runtime.jsonl"
check "fia-fill --jsonl-path -" 1 bad.json "$opdb" fia-fill \
  --csv-path "$src/tests/cli/fiafill_stdin_stdout/in/FusedInferAttentionScore.csv" --jsonl-path -
check "parse --profiling-path - (error)" 1 bad.csv "$opdb" parse --profiling-path - --database-path db1
check "parse --profiling-path - (warning)" 0 kd_baddur.csv "$opdb" parse --profiling-path - --database-path db2
# shellcheck disable=SC2086
check "aie --trace -" 1 bad.json "$opdb" aie --trace - --out-dir aie $aie
[ $fail = 0 ] && echo "stdin_names: ok ($n runs)"
exit $fail
