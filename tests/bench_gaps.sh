#!/bin/sh
# opdb bench's report is a "Bench Report" and compares measured with profiled
# durations (hotspots) only in this machine's own database
# (<data root>/<device>/opdb_cpu/<stack>); a replay written into another
# device's database says "Not compared". --reference-quirks keeps the
# reference's title and compares always.
#   bench_gaps.sh OPDB
set -u
opdb=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "bench_gaps.sh: $*" >&2; cat "$work/out" >&2; exit 1; }
cd "$work" || exit 1
export OPDB_DATA_ROOT="$work/root" OPDB_REPORT_TIMESTAMP=20260101_000000
# one fp32 GEMM row profiled at 0.1 s: any replay is far from it (a hotspot)
printf '%s\r\n' 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Profiling Average Duration(us)' \
  'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,100000' >MatMulV2.csv
# the machine's own database folder, as bench names it when it is missing
"$opdb" bench --device cpu --ops MatMulV2 --repeat-count 1 >out 2>&1 && fail "bench on a missing folder: exit 0"
own=$(sed -n 's/^opdb bench: database folder not found: \(.*\) (use --grid default to create one)$/\1/p' out)
[ -n "$own" ] || fail "no database folder named"
mkdir -p "$own" other quirks
cp MatMulV2.csv "$own/" && cp MatMulV2.csv other/ && cp MatMulV2.csv quirks/
"$opdb" bench --device cpu --ops MatMulV2 --repeat-count 1 --threads 1 >out 2>&1 || fail "own database: exit $?"
grep -q '^# Bench Report$' out || fail "own database: not titled Bench Report"
grep -q '^| Hotspots  *| 1  *|$' out || fail "own database: the gap is not a hotspot"
grep -q '^| MatMulV2 .* | "4,8;16,8" -> "4,16" |$' out || fail "own database: no hotspot row"
"$opdb" bench --database-path other --ops MatMulV2 --repeat-count 1 --threads 1 >out 2>&1 || fail "other database: exit $?"
grep -q '^# Bench Report$' out || fail "other database: not titled Bench Report"
grep -q '^| Hotspots  *| not compared  *|$' out || fail "other database: hotspots counted"
grep -q '^> Not compared: measured here with the cpu backend' out || fail "other database: no reason"
"$opdb" bench --database-path quirks --ops MatMulV2 --repeat-count 1 --threads 1 --reference-quirks >out 2>&1 ||
  fail "--reference-quirks: exit $?"
grep -q '^# Profile Update Report$' out || fail "--reference-quirks: not the reference's title"
grep -q '^| Hotspots  *| 1  *|$' out || fail "--reference-quirks: the gap is not a hotspot"
exit 0
