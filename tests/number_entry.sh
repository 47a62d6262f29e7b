#!/bin/sh
# number_entry.sh OPDB: numbers are checked where they enter a database.
# grid's theory rows carry no sample count or sums; parse --merge refuses an
# existing table whose count/sum/sum-of-squares/min/max are negative,
# non-finite or inconsistent (naming file and line); Kineto device events with
# a negative, non-finite or overflowing duration, SQLite kernels with NULL,
# negative or overflowing times are skipped with a counted warning; rows held
# only in an SQLite -wal file are read; comm import skips inf/nan times and
# refuses a rank number that is no device count.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
has() { grep -qF -- "$2" "$1" || bad "$1 lacks: $2"; }
command -v python3 >/dev/null 2>&1 || { echo "number_entry.sh: no python3" >&2; exit 77; }

# ---- grid: theory rows from a profiled template get empty Profiling Count/Min/Max/Sum/Sum Squares
mkdir -p "$w/g"
stat='Profiling Average Duration(us),Profiling Median Duration(us),Profiling Std Duration(us),Profiling Count,Profiling Min Duration(us),Profiling Max Duration(us),Profiling Sum Duration(us),Profiling Sum Squares(us^2)'
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,%s\r\n' "$stat" >"$w/g/Add.csv"
printf 'dynamic,AI_VECTOR_CORE,"""1,128;1,128""",DT_BF16;DT_BF16,ND;ND,"""1,128""",DT_BF16,ND,2.000000,2.000000,1.000000,3,1.000000,3.000000,6.000000,14.000000\r\n' >>"$w/g/Add.csv"
cat >"$w/cfg.yaml" <<'Y'
patterns:
  el:
    iterators: {t: [2, 3], d: [64]}
    inputs: ["(t,d)", "(t,d)"]
    outputs: ["(t,d)"]
assignments:
  el: [Add]
Y
cp -R "$w/g" "$w/gq"
"$opdb" grid --data-dir "$w/g" --config "$w/cfg.yaml" --target-models qwen3-32b --rows 0 >"$w/out" 2>&1 || bad "grid: exit $?"
python3 - "$w/g/Add.csv" <<'PY' || bad "grid: theory rows carry copied counts or sums"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3, rows
assert rows[0]["Profiling Count"] == "3", rows[0]
for r in rows[1:]:
    for c in ("Profiling Count", "Profiling Min Duration(us)", "Profiling Max Duration(us)",
              "Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)"):
        assert r[c] == "", (c, r)
    assert r["Profiling Average Duration(us)"] == "0", r
PY
# --reference-quirks: the reference's rule (a column named like a duration is 0, the rest copied)
"$opdb" grid --data-dir "$w/gq" --config "$w/cfg.yaml" --target-models qwen3-32b --rows 0 --reference-quirks >"$w/out" 2>&1 ||
  bad "grid --reference-quirks: exit $?"
python3 - "$w/gq/Add.csv" <<'PY' || bad "grid --reference-quirks: not the reference's cells"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 3, rows
for r in rows[1:]:
    assert r["Profiling Count"] == "3" and r["Profiling Sum Squares(us^2)"] == "14.000000", r
    assert r["Profiling Sum Duration(us)"] == "0" and r["Profiling Min Duration(us)"] == "0", r
PY

# ---- Kineto: a trace whose kernels take 4, -5, 1e400 and "nan" us
mktrace() { # mktrace FILE DUR...
  python3 - "$@" <<'PY'
import json, sys
ev = []
for i, d in enumerate(sys.argv[2:]):
    ts = 100 * i
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": ts, "dur": 50,
               "args": {"Input Dims": [[6]], "Input type": ["float"]}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 2, "dur": 3,
               "args": {"correlation": i + 1}})
    ev.append({"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": ts + 10, "dur": "@%s@" % d,
               "args": {"correlation": i + 1}})
text = json.dumps({"schemaVersion": 1, "traceEvents": ev})
text = text.replace('"@', "").replace('@"', "")
open(sys.argv[1], "w").write(text.replace("nan", '"nan"'))
PY
}
mktrace "$w/t1.json" 4 -5 1e400 nan 6
"$opdb" parse --profiling-path "$w/t1.json" --database-path "$w/k" >"$w/out" 2>&1 || bad "kineto: exit $?"
has "$w/out" "skipped 3 GPU device event(s) or call(s) whose duration is negative, not a finite number or too large to add up"
python3 - "$w/k" <<'PY' || bad "kineto: bad durations reached the table"
import csv, glob, sys
(f,) = glob.glob(sys.argv[1] + "/*.csv")
(r,) = list(csv.DictReader(open(f, newline="")))
assert r["Profiling Count"] == "2" and float(r["Profiling Min Duration(us)"]) == 4 and float(r["Profiling Max Duration(us)"]) == 6, r
PY

# a CPU operator with a negative dur or a ts of 1e400 encloses nothing: skipped and counted
python3 - "$w/t2.json" <<'PY'
import sys
ev = []
for i, (ts, dur) in enumerate([("0", "-50"), ("1e400", "50"), ("200", "50")]):
    base = 100 * i
    ev.append('{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": %s, "dur": %s, '
              '"args": {"Input Dims": [[6]], "Input type": ["float"]}}' % (ts, dur))
    ev.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 3, '
              '"args": {"correlation": %d}}' % (base + 2, i + 1))
    ev.append('{"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": %d, "dur": 4, '
              '"args": {"correlation": %d}}' % (base + 10, i + 1))
open(sys.argv[1], "w").write('{"schemaVersion": 1, "traceEvents": [%s]}' % ", ".join(ev))
PY
"$opdb" parse --profiling-path "$w/t2.json" --database-path "$w/k2" >"$w/out" 2>&1 || bad "kineto ops: exit $?"
has "$w/out" "skipped 2 CPU operator event(s) whose ts is not a finite number or whose dur is negative or not a finite number"
has "$w/out" "2 of 3 GPU device event(s) not attributed to an operator"

# ---- parse --merge: the existing table's statistics are checked before they are combined
table=$(ls "$w/k"/*.csv)
name=$(basename "$table")
for case in "count:-5" "count:18446744073709551611" "count:1.5" "sum:nan" "sum:inf" "sum:-1" "min:9" "sumsq:1" "max:" \
    "median:nan" "median:inf" "median:-2"; do
  col=${case%%:*} val=${case#*:}
  cp -R "$w/k" "$w/m"
  python3 - "$w/m/$name" "$col" "$val" <<'PY'
import csv, sys
path, col, val = sys.argv[1:]
col = {"count": "Profiling Count", "sum": "Profiling Sum Duration(us)", "sumsq": "Profiling Sum Squares(us^2)",
       "min": "Profiling Min Duration(us)", "max": "Profiling Max Duration(us)",
       "median": "Profiling Median Duration(us)"}[col]
rows = list(csv.reader(open(path, newline="")))
rows[1][rows[0].index(col)] = val
csv.writer(open(path, "w", newline=""), lineterminator="\r\n").writerows(rows)
PY
  cp "$w/m/$name" "$w/before.csv"
  "$opdb" parse --profiling-path "$w/t1.json" --database-path "$w/m" --merge >"$w/out" 2>&1
  rc=$?
  [ $rc = 1 ] || bad "merge into $case: exit $rc, expected 1"
  grep -q "$w/m/$name:2: " "$w/out" || { bad "merge into $case: no error naming $name:2"; cat "$w/out"; }
  cmp -s "$w/m/$name" "$w/before.csv" || bad "merge into $case: the table changed"
  rm -rf "$w/m"
done
# a consistent table still merges: counts add up
cp -R "$w/k" "$w/m"
"$opdb" parse --profiling-path "$w/t1.json" --database-path "$w/m" --merge >"$w/out" 2>&1 || bad "good merge: exit $?"
python3 - "$w/m/$name" <<'PY' || bad "good merge: counts"
import csv, sys
(r,) = list(csv.DictReader(open(sys.argv[1], newline="")))
assert r["Profiling Count"] == "4" and float(r["Profiling Sum Duration(us)"]) == 20, r
PY

# ---- SQLite: NULL, negative and overflowing times are skipped and counted; rows only in the -wal file are read
python3 - "$w/sq" <<'PY' || bad "could not build the SQLite fixtures"
import os, shutil, sqlite3, sys
out = sys.argv[1]
os.makedirs(out + "/plain"); os.makedirs(out + "/wal"); os.makedirs(out + "/build")
def build(path, wal):
    db = sqlite3.connect(path, isolation_level=None)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
    db.execute("CREATE TABLE TASK (globalTaskId INTEGER, startNs INTEGER, endNs INTEGER)")
    db.execute("CREATE TABLE COMPUTE_TASK_INFO (globalTaskId INTEGER, opType INTEGER, inputShapes INTEGER, "
               "outputShapes INTEGER, taskType INTEGER, inputDataTypes INTEGER, inputFormats INTEGER, "
               "outputDataTypes INTEGER, outputFormats INTEGER)")
    for i, v in enumerate(["Add", '"4,8;4,8"', '"4,8"', "AI_VECTOR_CORE", "FLOAT;FLOAT", "ND;ND", "FLOAT", "ND"], 1):
        db.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (i, v))
    times = [(1000, 5000), (2000, None), (-9000000000000000000, 9000000000000000000), (9000, 4000), (10000, 16000)]
    for t, (s, e) in enumerate(times):
        db.execute("INSERT INTO TASK VALUES (?, ?, ?)", (t, s, e))
        db.execute("INSERT INTO COMPUTE_TASK_INFO VALUES (?, 1, 2, 3, 4, 5, 6, 7, 8)", (t,))
    return db
build(out + "/plain/ascend_pytorch_profiler_0.db", False).close()
db = build(out + "/build/ascend_pytorch_profiler_0.db", True)
# copied while the writer is open: every row is in the -wal file, none in the main file yet
for suffix in ("", "-wal"):
    shutil.copy(out + "/build/ascend_pytorch_profiler_0.db" + suffix, out + "/wal/ascend_pytorch_profiler_0.db" + suffix)
db.close()
PY
"$opdb" parse --profiling-path "$w/sq/plain/ascend_pytorch_profiler_0.db" --database-path "$w/s1" >"$w/out" 2>&1 ||
  bad "sqlite: exit $?"
has "$w/out" "skipped 3 row(s) whose Duration(us) is not a finite, non-negative number (NULL, negative or overflowing times; first in $w/sq/plain/ascend_pytorch_profiler_0.db)"
python3 - "$w/s1/Add.csv" <<'PY' || bad "sqlite: NULL or overflowing times reached the table"
import csv, sys
(r,) = list(csv.DictReader(open(sys.argv[1], newline="")))
assert r["Profiling Count"] == "2" and float(r["Profiling Min Duration(us)"]) == 4 and float(r["Profiling Max Duration(us)"]) == 6, r
PY
"$opdb" parse --profiling-path "$w/sq/plain/ascend_pytorch_profiler_0.db" --database-path "$w/s2" --strict >"$w/out" 2>&1
[ $? = 1 ] || bad "sqlite --strict: a NULL time is no error"
"$opdb" parse --profiling-path "$w/sq/wal/ascend_pytorch_profiler_0.db" --database-path "$w/s3" >"$w/out" 2>&1 ||
  { bad "sqlite with a -wal file: exit $?"; cat "$w/out"; }
[ -f "$w/s3/Add.csv" ] && python3 - "$w/s3/Add.csv" <<'PY' || bad "sqlite: the rows of the -wal file were not read"
import csv, sys
(r,) = list(csv.DictReader(open(sys.argv[1], newline="")))
assert r["Profiling Count"] == "2", r
PY

# ---- comm import: inf and nan times skipped; a rank number that is no device count refused
log() { # log FILE RANKLINES TIME2
  {
    echo "# nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 100"
    echo "#"
    echo "# Using devices"
    printf '%s\n' "$2"
    echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
    echo "           8             2     float     sum      -1    85.14    0.00    0.00      0    62.82    0.00    0.00      0"
    echo "          16             4     float     sum      -1    $3    0.00    0.00      0    $3    0.00    0.00      0"
    echo "          32             8     float     sum      -1    nan    0.00    0.00      0    nan    0.00    0.00      0"
    echo "# Out of bounds values : 0 OK"
  } >"$1"
}
two='#  Rank  0 Group  0 Pid     25 on worker-0 device  0 [0x53] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid     26 on worker-0 device  1 [0x53] NVIDIA H100 80GB HBM3'
log "$w/inf.txt" "$two" inf
"$opdb" comm import --output-dir "$w/c1" --logs "$w/inf.txt" --op all_reduce >"$w/out" 2>&1 || bad "comm import: exit $?"
has "$w/out" "  2 rows without a positive size and time skipped"
if grep -qi 'inf\|nan' "$w/c1/hcom_allReduce_.csv"; then bad "comm import wrote inf or nan: $(cat "$w/c1/hcom_allReduce_.csv")"; fi
[ "$(grep -c '^8,2,' "$w/c1/hcom_allReduce_.csv")" = 1 ] || bad "comm import: the good row"
log "$w/rank.txt" '#  Rank 2147483647 Group  0 Pid     25 on worker-0 device  0 [0x53] NVIDIA H100 80GB HBM3' 60.0
"$opdb" comm import --output-dir "$w/c2" --logs "$w/rank.txt" --op all_reduce >"$w/out" 2>&1
[ $? = 1 ] || bad "comm import of rank 2^31-1: not refused"
has "$w/out" "rank.txt: the log's '#  Rank' lines go up to rank 2147483647 but name 0 distinct rank(s) below 1048576, so 2147483648 is no device count; pass --num-devices"
[ ! -e "$w/c2/hcom_allReduce_.csv" ] || bad "comm import of rank 2^31-1: rows written"
"$opdb" comm import --output-dir "$w/c2" --logs "$w/rank.txt" --op all_reduce --num-devices 4 >"$w/out" 2>&1 ||
  bad "comm import --num-devices 4: exit $?"
"$opdb" comm import --output-dir "$w/c3" --logs "$w/rank.txt" --op all_reduce --num-devices 2147483647 >"$w/out" 2>&1
[ $? = 2 ] || bad "comm import --num-devices 2^31-1: not a usage error"

# ---- validate: an overflowed time (2^63 ns read as µs) is an error, not a valid duration
mkdir -p "$w/v"
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\n' >"$w/v/Add.csv"
printf 'dynamic,AI_VECTOR_CORE,"""4,8;4,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,8""",DT_FLOAT,ND,9223372036854775.807\r\n' >>"$w/v/Add.csv"
printf 'dynamic,AI_VECTOR_CORE,"""4,9;4,9""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,9""",DT_FLOAT,ND,999999.5\r\n' >>"$w/v/Add.csv"
"$opdb" validate --database-path "$w/v" >"$w/out" 2>&1
[ $? = 1 ] || bad "validate: an overflowed duration passes"
has "$w/out" "absurd duration"
has "$w/out" "Add.csv:2"
if grep -q "Add.csv:3" "$w/out"; then bad "validate: a 1 s duration flagged"; fi
exit $fail
