#!/bin/sh
# bench_cli.sh OPDB: `opdb bench` on small databases, checking only what is
# deterministic (fixed --repeat-count; structure, status lines, columns,
# row counts, never timings): both update modes, failed rows kept or dropped,
# skipped operators, the circuit breaker, --fail-fast, --resume after SIGKILL,
# --reference-quirks, usage errors, and the --grid database passing validate.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
export OPDB_REPORT_TIMESTAMP=20260101_000000
unset OPDB_REPLAY_REPEAT_COUNT MSMODELING_OP_REPLAY_REPEAT_COUNT
ck() { # ck DESCRIPTION COMMAND...: the command must succeed
  d=$1; shift
  "$@" || { echo "FAIL: $d"; fail=1; }
}
has() { grep -qF -- "$2" "$1" || { echo "FAIL: $1 lacks: $2"; fail=1; }; }
hasnt() { ! grep -qF -- "$2" "$1" || { echo "FAIL: $1 has: $2"; fail=1; }; }
# shellcheck source=bench_csv.sh
. "$(dirname "$0")/bench_csv.sh"
cell() { csv_cell "$1" "$2" "$3"; }
rows() { echo $(($(wc -l <"$1") - 1)); }

hdr='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Note'
mkdb() { # mkdb DIR
  mkdir -p "$1"
  {
    printf '%s\r\n' "$hdr"
    printf 'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,a\r\n'
    printf 'dynamic,AI_CORE,"""2,3;5,7""",DT_FLOAT;DT_FLOAT,ND;ND,"""2,5""",DT_FLOAT,ND,,bad\r\n'
    printf 'dynamic,AI_CORE,"""8,16;4,16""",DT_BF16;DT_BF16,ND;ND,"""8,4""",DT_BF16,ND,5.0,done\r\n'
  } >"$1/MatMulV2.csv"
  { # seven rows that cannot be planned: the circuit breaker opens after five
    printf '%s\r\n' "$hdr"
    for i in 1 2 3 4 5 6 7; do printf 'dynamic,AI_CORE,"""%d,3;5,7""",DT_FLOAT;DT_FLOAT,ND;ND,"""%d,5""",DT_FLOAT,ND,,x\r\n' "$i" "$i"; done
  } >"$1/MatMulV3.csv"
  {
    printf '%s\r\n' "$hdr"
    printf 'dynamic,AI_CORE,"""64,128;8,128,256;8,64,128;64,4;64,4;64,256;8""",DT_BF16;DT_BF16;DT_BF16;DT_INT32;DT_FLOAT;DT_BF16;DT_INT32,ND;ND;ND;ND;ND;ND;ND,"""64,128;8""",DT_BF16;DT_INT32,ND;ND,,dfc\r\n'
  } >"$1/DispatchFFNCombine.csv"
}

# ---- default mode: failed rows kept, extra columns appended, status summary
mkdb "$w/a"
"$opdb" bench --database-path "$w/a" --repeat-count 2 >"$w/a.out" 2>"$w/a.err"
ck "default run exits 1 when a row failed" test $? -eq 1
has "$w/a.out" "[STATUS] DispatchFFNCombine: skipped ("
has "$w/a.out" "[STATUS] MatMulV2: failed (2 measured, 1 row(s) failed; first: MatMulV2.csv:3 "
has "$w/a.out" "[STATUS] MatMulV3: failed (0 measured, 5 row(s) failed, 2 skipped by the circuit breaker; first: MatMulV3.csv:2 "
has "$w/a.out" "[SUMMARY] Success: 0, Failed: 2, Skipped: 1"
has "$w/a.out" "## Operator Execution Status"
has "$w/a.out" "  - FAILED: MatMulV2: 1 row(s) failed; first: MatMulV2.csv:3 "
has "$w/a.out" "## Failures"
has "$w/a.out" "[CLEAN] removed $w/a/.opdb_bench"
has "$w/a.err" "[BENCH] fixed count: 2 sample(s) per row, cold cache"
has "$w/a.err" "timer overhead"
has "$w/a.err" "[FAIL] MatMulV2.csv:3 DT_FLOAT;DT_FLOAT \"2,3;5,7\" -> \"2,5\" error="
has "$w/a.err" "[BREAKER] MatMulV3: 5 consecutive failures"
has "$w/a.err" "[SKIP] MatMulV3.csv:8 circuit breaker open for MatMulV3"
ck "work folder removed after a finished run" test ! -e "$w/a/.opdb_bench"
m=$w/a/MatMulV2.csv
ck "failed row kept" test "$(rows "$m")" -eq 3
ck "header: existing columns, then the MicroBench columns" test "$(head -1 "$m" | tr -d '\r')" = \
  "$hdr,MicroBench Median Duration(us),MicroBench P20 Duration(us),MicroBench P80 Duration(us),MicroBench CI Low(us),MicroBench CI High(us),MicroBench RSD(%),MicroBench Samples,MicroBench Cache,MicroBench GFLOP/s,MicroBench GB/s,MicroBench Backend,MicroBench Converged"
ck "measured row: Samples = 2" test "$(cell "$m" 2 'MicroBench Samples')" = 2
ck "measured row: Cache = cold" test "$(cell "$m" 2 'MicroBench Cache')" = cold
ck "measured row: a positive minimum" awk -v v="$(cell "$m" 2 'Average Duration(us)')" 'BEGIN { exit !(v > 0) }'
ck "measured row: median >= minimum" awk -v a="$(cell "$m" 2 'Average Duration(us)')" -v b="$(cell "$m" 2 'MicroBench Median Duration(us)')" 'BEGIN { exit !(b >= a) }'
ck "measured row: backend named" test -n "$(cell "$m" 2 'MicroBench Backend')"
ck "measured row: other cells kept" test "$(cell "$m" 2 Note)" = a
ck "failed row: no duration written" test -z "$(cell "$m" 3 'Average Duration(us)')"
ck "failed row: other cells kept" test "$(cell "$m" 3 Note)" = bad
ck "mode all: complete row measured again" test "$(cell "$m" 4 'MicroBench Samples')" = 2
ck "breaker: rows kept" test "$(rows "$w/a/MatMulV3.csv")" -eq 7
ck "skipped operator untouched" cmp -s "$w/a/DispatchFFNCombine.csv" "$(mkdb "$w/a0" && echo "$w/a0/DispatchFFNCombine.csv")"
ck "report saved" test -f "$w/a/reports/profile_update_report_20260101_000000.md"

# ---- --rounds: interleaved passes; the statistics cover every pass's samples,
# failures are reported once (by the last pass), a fixed count makes one pass
mkdb "$w/rounds"
"$opdb" bench --cache-mib 4 --database-path "$w/rounds" --ops MatMulV2 MatMulV3 --rounds 3 --min-samples 2 --min-time 0 --timeout 0.03 \
  >"$w/rounds.out" 2>"$w/rounds.err"
ck "rounds: exits 1 (a row failed)" test $? -eq 1
has "$w/rounds.err" "[BENCH] 3 interleaved passes over the rows"
has "$w/rounds.err" ", 8 MiB swept per sample" # --cache-mib 4: twice the cache, at least 8 MiB
has "$w/rounds.err" "[PASS 1/3] MatMulV2.csv:2 "
has "$w/rounds.err" "[PASS 2/3] MatMulV2.csv:4 "
ck "rounds: one [FAIL] line per failed row" test "$(grep -c '^\[FAIL\] MatMulV2.csv:3 ' "$w/rounds.err")" -eq 1
ck "rounds: the breaker counts the last pass only" test "$(grep -c '^\[BREAKER\]' "$w/rounds.err")" -eq 1
has "$w/rounds.out" "[STATUS] MatMulV2: failed (2 measured, 1 row(s) failed;"
has "$w/rounds.out" "[STATUS] MatMulV3: failed (0 measured, 5 row(s) failed, 2 skipped by the circuit breaker;"
p1=$(grep '^\[PASS 1/3\] MatMulV2.csv:2 ' "$w/rounds.err" | sed 's/.* n=//')
p2=$(grep '^\[PASS 2/3\] MatMulV2.csv:2 ' "$w/rounds.err" | sed 's/.* n=//')
nall=$(cell "$w/rounds/MatMulV2.csv" 2 'MicroBench Samples')
ck "rounds: Samples counts every pass ($p1 + $p2 + last = $nall)" awk -v a="$p1" -v b="$p2" -v n="$nall" 'BEGIN { exit !(a >= 1 && b >= 1 && n >= a + b + 1) }'
"$opdb" bench --cache-mib 4 --database-path "$w/rounds" --ops MatMulV2 --rounds 3 --repeat-count 2 >"$w/rounds2.out" 2>"$w/rounds2.err"
hasnt "$w/rounds2.err" "[PASS "
ck "rounds + fixed count: exactly the count" test "$(cell "$w/rounds/MatMulV2.csv" 2 'MicroBench Samples')" = 2
"$opdb" bench --cache-mib 4 --database-path "$w/rounds" --rounds 0 >/dev/null 2>"$w/rounds3.err"
ck "--rounds 0 is a usage error" test $? -eq 2
has "$w/rounds3.err" "argument --rounds: expected an integer from 1 to 100, got '0'"

# ---- hardware counters: a CPU/GPU measurement has none, so MicroBench <metric>
# cells keep what they held (empty in new rows); the reference writes 0.000000
for q in default quirks; do
  mkdir -p "$w/met_$q"
  {
    printf '%s\r\n' "$hdr,MicroBench aiv_time(us),Profiling Average aiv_time(us)"
    printf 'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,a,7.500000,8.0\r\n'
  } >"$w/met_$q/MatMulV2.csv"
  qflag=
  [ $q = quirks ] && qflag=--reference-quirks
  "$opdb" bench --cache-mib 4 --database-path "$w/met_$q" --repeat-count 1 $qflag >/dev/null 2>&1
  ck "metrics ($q): row measured" awk -v v="$(cell "$w/met_$q/MatMulV2.csv" 2 'Average Duration(us)')" 'BEGIN { exit !(v > 0) }'
done
ck "metrics: default keeps the counter value" test "$(cell "$w/met_default/MatMulV2.csv" 2 'MicroBench aiv_time(us)')" = 7.500000
ck "metrics: quirks writes the reference's zero" test "$(cell "$w/met_quirks/MatMulV2.csv" 2 'MicroBench aiv_time(us)')" = 0.000000
ck "metrics: profiling value untouched" test "$(cell "$w/met_default/MatMulV2.csv" 2 'Profiling Average aiv_time(us)')" = 8.0

# ---- missing-only: complete rows are neither measured nor changed
mkdb "$w/b"
"$opdb" bench --cache-mib 4 --database-path "$w/b" --ops MatMulV2 --update-mode missing-only --repeat-count 1 >"$w/b.out" 2>"$w/b.err"
m=$w/b/MatMulV2.csv
ck "missing-only: complete row keeps its duration" test "$(cell "$m" 4 'Average Duration(us)')" = 5.0
ck "missing-only: complete row not measured" test -z "$(cell "$m" 4 'MicroBench Samples')"
ck "missing-only: empty row filled" test "$(cell "$m" 2 'MicroBench Samples')" = 1
has "$w/b.out" "[STATUS] MatMulV2: failed (1 measured, 1 row(s) failed;"
hasnt "$w/b.out" "MatMulV3"
"$opdb" bench --cache-mib 4 --database-path "$w/b" --ops Sort --repeat-count 1 >"$w/b3.out" 2>&1
ck "selected operator without a CSV: exit 0" test $? -eq 0
has "$w/b3.out" "[STATUS] Sort: skipped (No Sort.csv operator file found in this database.)"
# ... and nothing left to do: the reference's skip lines
"$opdb" bench --cache-mib 4 --database-path "$w/b" --ops MatMulV2 --update-mode missing-only --repeat-count 1 --drop-failed >/dev/null 2>&1
"$opdb" bench --cache-mib 4 --database-path "$w/b" --ops MatMulV2 --update-mode missing-only --repeat-count 1 >"$w/b2.out" 2>&1
ck "missing-only: nothing to do exits 0" test $? -eq 0
has "$w/b2.out" "[SKIP] $w/b/MatMulV2.csv all 2 row(s) already have usable Average/Profiling durations."
has "$w/b2.out" "[SUMMARY] All target CSV files already have usable replay durations."

# ---- --drop-failed: the failed row goes, the rest stays
mkdb "$w/c"
"$opdb" bench --cache-mib 4 --database-path "$w/c" --ops MatMulV2 --repeat-count 1 --drop-failed >"$w/c.out" 2>&1
ck "drop-failed: one row deleted" test "$(rows "$w/c/MatMulV2.csv")" -eq 2
hasnt "$w/c/MatMulV2.csv" '"""2,3;5,7"""'
has "$w/c.out" "| Rows deleted         | 1 "

# ---- --reference-quirks: no extra columns, failed rows deleted
mkdb "$w/q"
"$opdb" bench --cache-mib 4 --database-path "$w/q" --ops MatMulV2 --repeat-count 1 --reference-quirks >"$w/q.out" 2>&1
hasnt "$w/q/MatMulV2.csv" "MicroBench Samples"
ck "quirks: failed row deleted" test "$(rows "$w/q/MatMulV2.csv")" -eq 2

# ---- --fail-fast: stops at the first failed row, still writes back
mkdb "$w/f"
"$opdb" bench --cache-mib 4 --database-path "$w/f" --repeat-count 1 --fail-fast >"$w/f.out" 2>&1
ck "fail-fast exits 1" test $? -eq 1
has "$w/f.out" "[STATUS] MatMulV2: failed (1 measured, 1 row(s) failed;"
hasnt "$w/f.out" "[STATUS] MatMulV3"
ck "fail-fast: measured row written" test "$(cell "$w/f/MatMulV2.csv" 2 'MicroBench Samples')" = 1

# ---- --resume after SIGKILL: journaled rows are not measured again
mkdir -p "$w/r"
{
  printf '%s\r\n' "$hdr"
  i=1; while [ $i -le 30 ]; do printf 'dynamic,AI_CORE,"""%d,96;96,96""",DT_FLOAT;DT_FLOAT,ND;ND,"""%d,96""",DT_FLOAT,ND,,r\r\n' $i $i; i=$((i + 1)); done
} >"$w/r/MatMulV2.csv"
cp "$w/r/MatMulV2.csv" "$w/r.orig"
"$opdb" bench --cache-mib 4 --database-path "$w/r" --repeat-count 300 >/dev/null 2>&1 & p=$!
j=$w/r/.opdb_bench/journal.csv
t_end=$(($(date +%s) + 600)) # generous: sanitizer builds on a loaded CI host are slow
while [ "$(date +%s)" -lt $t_end ] && [ "$(cat "$j" 2>/dev/null | wc -l)" -lt 3 ]; do sleep 0.01; done
kill -9 $p 2>/dev/null; wait $p 2>/dev/null
ck "killed run left the database untouched" cmp -s "$w/r/MatMulV2.csv" "$w/r.orig"
done_rows=$(($(wc -l <"$j") - 1))
ck "journal holds finished rows" test "$done_rows" -ge 2
printf 'MatMulV2,99,ok,,dynamic,AI_CORE,"""1,96' >>"$j" # a record torn by the kill: cut off on resume
"$opdb" bench --cache-mib 4 --database-path "$w/r" --repeat-count 1 --resume >"$w/r.out" 2>"$w/r.err"
ck "resumed run exits 0" test $? -eq 0
ck "resume: journaled rows reused" test "$(grep -c '^\[RESUME\]' "$w/r.err")" -eq "$done_rows"
ck "resume: the rest measured" test "$(grep -c '^\[OK\]' "$w/r.err")" -eq $((30 - done_rows))
has "$w/r.out" "[STATUS] MatMulV2: success (30 measured, 0 skipped)"
ck "resume: journaled rows keep their sample count" test "$(cell "$w/r/MatMulV2.csv" 2 'MicroBench Samples')" = 300
ck "resume: new rows measured with the new count" test "$(cell "$w/r/MatMulV2.csv" 31 'MicroBench Samples')" = 1

# ---- usage errors
"$opdb" bench --database-path "$w/a" --cache-mib 0 >/dev/null 2>"$w/u0"
ck "cache-mib 0 is a usage error" test $? -eq 2
has "$w/u0" "argument --cache-mib: expected MiB from 1 to 1048576, got '0'"
"$opdb" bench --cache-mib 4 --database-path "$w/a" --repeat-count 0 >/dev/null 2>"$w/u1"
ck "repeat-count 0 is a usage error" test $? -eq 2
has "$w/u1" "--repeat-count must be positive, got 0"
OPDB_REPLAY_REPEAT_COUNT=abc "$opdb" bench --cache-mib 4 --database-path "$w/a" >/dev/null 2>"$w/u2"
ck "bad env repeat count is a usage error" test $? -eq 2
has "$w/u2" "OPDB_REPLAY_REPEAT_COUNT must be an integer, got 'abc'"
"$opdb" bench --device cpu --backend cuda --database-path "$w/a" >/dev/null 2>"$w/u3"
ck "--device cpu --backend cuda conflict" test $? -eq 2
"$opdb" bench --cache-mib 4 --database-path "$w/a" --ops NoSuchOp >/dev/null 2>"$w/u4"
ck "unknown --ops is a usage error" test $? -eq 2
has "$w/u4" "Unsupported --ops: NoSuchOp. Available: Add, "
"$opdb" bench --cache-mib 4 --database-path "$w/none" >/dev/null 2>"$w/u5"
ck "missing database is an error" test $? -eq 1
has "$w/u5" "database folder not found"
"$opdb" bench --help >"$w/help"
has "$w/help" "bf16 and fp16 tensors are stored as such and computed in fp32"

# ---- --grid default (one row per operator): a new database that validates
OPDB_BENCH_GRID_LIMIT=1 OPDB_DATA_ROOT="$w/root" "$opdb" bench --cache-mib 4 --device cpu --grid default --repeat-count 1 >"$w/g.out" 2>"$w/g.err"
ck "grid run exits 0" test $? -eq 0
g=$(find "$w/root" -name MatMulV2.csv | head -1)
ck "grid database under <root>/<cpu>/opdb_cpu/<stack>/" test -n "$g"
case "$g" in "$w/root/"*/opdb_cpu/*/MatMulV2.csv) ;; *) echo "FAIL: grid database at $g"; fail=1 ;; esac
gd=$(dirname "$g")
ck "grid: one row per operator" test "$(rows "$g")" -eq 1
has "$g" "MicroBench Backend"
ck "grid row: no counter invented (MicroBench aicore_time empty)" test -z "$(cell "$g" 2 'MicroBench aicore_time(us)')"
"$opdb" validate --database-path "$gd" >"$w/v.out" 2>&1
ck "grid database passes validate" test $? -eq 0
# a second grid run updates the same rows (no duplicates)
OPDB_BENCH_GRID_LIMIT=1 OPDB_DATA_ROOT="$w/root" "$opdb" bench --cache-mib 4 --device cpu --grid default --repeat-count 1 >/dev/null 2>&1
"$opdb" validate --database-path "$gd" >/dev/null 2>&1
ck "second grid run still validates" test $? -eq 0
ck "second grid run: still one row" test "$(rows "$g")" -eq 1
# missing-only: grid rows the database already has are not measured again
OPDB_BENCH_GRID_LIMIT=1 OPDB_DATA_ROOT="$w/root" "$opdb" bench --cache-mib 4 --device cpu --grid default --repeat-count 1 \
  --update-mode missing-only --ops MatMulV2 >"$w/g3.out" 2>&1
has "$w/g3.out" "[STATUS] MatMulV2: success (0 measured, 1 skipped)"
rm "$g"
OPDB_BENCH_GRID_LIMIT=1 OPDB_DATA_ROOT="$w/root" "$opdb" bench --cache-mib 4 --device cpu --grid default --repeat-count 1 \
  --update-mode missing-only --ops MatMulV2 >"$w/g4.out" 2>&1
has "$w/g4.out" "[STATUS] MatMulV2: success (1 measured, 0 skipped)"
ck "missing-only grid run re-creates a missing CSV" test "$(rows "$g")" -eq 1

# CUDA plugin: where it was built (beside opdb), it loads on demand and the
# opdb binary itself never maps the CUDA libraries (they cost ~200 MiB of RSS
# at every start). Without a GPU, creating the backend fails for that reason.
if [ -f "$(dirname "$opdb")/libopdb_cuda.so" ]; then
  if command -v ldd >/dev/null 2>&1; then
    ldd "$opdb" >"$w/ldd.out" 2>&1
    hasnt "$w/ldd.out" "libcudart"
    hasnt "$w/ldd.out" "libcublasLt"
  fi
  "$opdb" bench --backend cuda --grid default --repeat-count 1 --database-path "$w/cudadb" >"$w/cu.out" 2>&1
  cu_rc=$?
  hasnt "$w/cu.out" "cannot load"
  hasnt "$w/cu.out" "not found beside"
  hasnt "$w/cu.out" "built for another opdb"
  if [ $cu_rc -ne 0 ]; then has "$w/cu.out" "no CUDA device"; fi
  OPDB_CUDA_PLUGIN="$w/none.so" "$opdb" bench --backend cuda --grid default --database-path "$w/cudadb2" >"$w/cu2.out" 2>&1
  ck "unreadable OPDB_CUDA_PLUGIN is an error" test $? -eq 1
  has "$w/cu2.out" "OPDB_CUDA_PLUGIN=$w/none.so: cannot read the file"
else
  "$opdb" bench --backend cuda --grid default --database-path "$w/cudadb" >"$w/cu.out" 2>&1
  ck "cuda backend absent is a runtime error" test $? -eq 1
  has "$w/cu.out" "CUDA backend not built"
fi

[ $fail = 0 ] && echo "bench cli: ok"
exit $fail
