#!/bin/sh
# bench_shapes.sh OPDB: shapes and memory are checked before a row is
# replayed. A shape whose element count does not fit (2^32 x 2^32, a
# dimension of 2^63-1) fails its row with the reason instead of wrapping to 0
# elements (and a 0.25 us "measurement") or overrunning a buffer; a row whose
# buffers exceed the memory budget (--max-memory, default 3/4 of the available
# memory) fails with its size before anything is allocated, never OOM-killed;
# --plan allocates no cache-eviction buffer.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
export OPDB_REPORT_TIMESTAMP=20260101_000000
unset OPDB_REPLAY_REPEAT_COUNT MSMODELING_OP_REPLAY_REPEAT_COUNT
bad() { echo "FAIL: $*"; fail=1; }
has() { grep -qF -- "$2" "$1" || bad "$1 lacks: $2"; }
hdr='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Note'
row() { printf 'dynamic,AI_CORE,"""%s;%s""",DT_FLOAT;DT_FLOAT,ND;ND,"""%s""",DT_FLOAT,ND,,%s\r\n' "$@"; }
mkdir -p "$w/db"
{
  printf '%s\r\n' "$hdr"
  row 4294967296,4294967296 4294967296,4294967296 4294967296,4294967296 wraps
  row 9223372036854775807,8 16,8 9223372036854775807,16 huge-dim
  row 1048576,1048576 1048576,1048576 1048576,1048576 too-big-for-memory
  row 64,64 64,64 64,64 small
} >"$w/db/MatMulV2.csv"
cp "$w/db/MatMulV2.csv" "$w/orig.csv"
"$opdb" bench --database-path "$w/db" --repeat-count 2 --hot-cache --threads 1 >"$w/out" 2>"$w/err"
rc=$?
[ $rc = 1 ] || bad "exit $rc, expected 1 (three rows fail)"
has "$w/err" "[FAIL] MatMulV2.csv:2 DT_FLOAT;DT_FLOAT "
has "$w/err" "error=shape '4294967296,4294967296' has more than 2^40 elements: no machine can replay it"
has "$w/err" "error=shape '9223372036854775807,8' has more than 2^40 elements: no machine can replay it"
has "$w/err" "[FAIL] MatMulV2.csv:4 "
has "$w/err" "error=its buffers need 13194139533312 bytes (12288.0 GiB), more than the memory budget of "
has "$w/err" "[OK] MatMulV2.csv:5 "
python3 - "$w/db/MatMulV2.csv" <<'PY' || bad "durations written for rows that could not be replayed"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert [r["Average Duration(us)"] for r in rows[:3]] == ["", "", ""], rows
assert float(rows[3]["Average Duration(us)"]) > 0, rows[3]
PY
# --max-memory: the small row (3 buffers of 16 KiB) is refused under 16K, measured under 64K
cp "$w/orig.csv" "$w/db/MatMulV2.csv"
"$opdb" bench --database-path "$w/db" --repeat-count 2 --hot-cache --threads 1 --max-memory 16K --ops MatMulV2 \
  >"$w/out" 2>"$w/err"
has "$w/err" "[FAIL] MatMulV2.csv:5 DT_FLOAT;DT_FLOAT \"64,64;64,64\" -> \"64,64\" error=its buffers need 49152 bytes (0.0 GiB), more than --max-memory 16384 bytes"
"$opdb" bench --database-path "$w/db" --repeat-count 2 --hot-cache --threads 1 --max-memory 64K >"$w/out" 2>"$w/err"
has "$w/err" "[OK] MatMulV2.csv:5 "
for v in 0 -1 12Q 99999999999999999999T ''; do
  "$opdb" bench --database-path "$w/db" --max-memory "$v" >"$w/out" 2>"$w/err"
  rc=$?
  [ $rc = 2 ] || bad "--max-memory '$v': exit $rc, expected 2"
  has "$w/err" "argument --max-memory: expected a positive number of bytes"
done
# --plan names the rows that cannot run, and stays small: no 2 x 512 MiB eviction buffer
cp "$w/orig.csv" "$w/db/MatMulV2.csv"
/usr/bin/time -f '%M' -o "$w/rss" "$opdb" bench --database-path "$w/db" --plan --cache-mib 512 >"$w/out" 2>"$w/err" ||
  bad "--plan: exit $?"
has "$w/out" "[PLAN] MatMulV2.csv:4 DT_FLOAT;DT_FLOAT \"1048576,1048576;1048576,1048576\" -> \"1048576,1048576\": cannot replay: its buffers need 13194139533312 bytes"
has "$w/out" "[PLAN] MatMulV2.csv:2 "
kib=$(tail -1 "$w/rss")
[ "$kib" -lt 102400 ] || bad "--plan peak RSS $kib KiB, expected < 100 MiB"
cmp -s "$w/db/MatMulV2.csv" "$w/orig.csv" || bad "--plan changed the table"
# --plan pilots the rows it can run: their median and spread, an estimate per row
grep -Eq '^\[PLAN\] MatMulV2\.csv:5 .*pilot median [0-9.e+]+ us \+-[0-9.]+%; about [0-9.]+ s' "$w/out" ||
  bad "--plan: no pilot figures for MatMulV2.csv:5"
[ ! -e "$w/db/.opdb_bench" ] || bad "--plan left a work folder"
# --launch-batch: 1 to 128
for v in 0 129 x ''; do
  "$opdb" bench --database-path "$w/db" --launch-batch "$v" >"$w/out" 2>"$w/err"
  rc=$?
  [ $rc = 2 ] || bad "--launch-batch '$v': exit $rc, expected 2"
  has "$w/err" "argument --launch-batch: expected 1 to 128, got '$v'"
done
exit $fail
