#!/usr/bin/env bash
# perf/parse_formats.sh [BUILD_DIR] [MB]: `opdb parse` on a generated PyTorch
# profiler trace of MB megabytes (default 200; 1000 for the 1 GB case; the
# trace is generated once under OPDB_PERF_DIR, never committed) against the
# yajl tokenize-only floor on the same file; and `opdb parse` of the real
# Ascend SQLite export against `sqlite3` reading the same tables.
# OPDB_PERF_REPS (default 3) interleaved rounds after one warm-up; for every
# case the best and median of wall time and of CPU time (user + sys: the
# honest figure on a shared, loaded host), throughput and peak RSS, and the
# ratios to the floor. Targets: Kineto CPU <= 2x the floor, peak
# RSS < 64 MiB whatever the trace size. OPDB_PERF_BASELINE=<another build dir> adds
# that build's opdb (1 thread and default) to the same interleaved rounds.
set -u -o pipefail
export LC_ALL=C
BUILD=${1:-build}
MB=${2:-200}
REPS=${OPDB_PERF_REPS:-3}
WORK=${OPDB_PERF_DIR:-/tmp/opdb-perf-formats}
BASE=${OPDB_PERF_BASELINE:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
trace="$WORK/kineto_${MB}MB.json"
if [ ! -s "$trace" ]; then
  python3 "$here/gen_kineto.py" "$trace.tmp" "$MB" && mv "$trace.tmp" "$trace" || exit 2
fi
db="$WORK/ascend_pytorch_profiler_0.db"
[ -s "$db" ] || gunzip -c "$here/../tests/cli/parse_sqlite_real_torch_npu_l1/in/ascend_pytorch_profiler_0.db.gz" >"$db"
timed() { # key cmd... -> "key wall_s rss_kib cpu_s"
  local k=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/t" "$@" >/dev/null 2>"$WORK/err.$k" || { echo "$k failed:" >&2; tail -3 "$WORK/err.$k" >&2; }
  awk -v k="$k" '{printf "%s %s %s %.3f\n", k, $1, $2, $3 + $4}' "$WORK/t"
}
col() { awk -v k="$1" -v c="$2" '$1==k{print $c}' "$WORK/runs" | sort -n; }
best() { col "$1" "$2" | head -1; }
median() { col "$1" "$2" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}'; }
: >"$WORK/runs"
"$BUILD/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >/dev/null 2>&1 # warm the page cache
for _ in $(seq "$REPS"); do
  timed floor "$BUILD/perf/yajl_tokenize" "$trace" >>"$WORK/runs"
  rm -rf "$WORK/db"; timed opdb1 env OPDB_TRACE_PIPELINE=0 "$BUILD/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
  rm -rf "$WORK/db"; timed opdb "$BUILD/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
  rm -rf "$WORK/db"; timed opdb2 env OPDB_TRACE_PIPELINE=1 "$BUILD/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
  if [ -n "$BASE" ]; then
    rm -rf "$WORK/db"; timed base1 env OPDB_TRACE_PIPELINE=0 "$BASE/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
    rm -rf "$WORK/db"; timed base "$BASE/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
  fi
  timed sqlite3 sqlite3 -readonly "$db" "SELECT * FROM COMPUTE_TASK_INFO c JOIN TASK t USING(globalTaskId); SELECT * FROM STRING_IDS; SELECT * FROM TASK_PMU_INFO;" >>"$WORK/runs"
  rm -rf "$WORK/db2"; timed opdbdb "$BUILD/opdb" parse --no-progress --profiling-path "$db" --database-path "$WORK/db2" >>"$WORK/runs"
done
bytes=$(stat -c %s "$trace")
line() { # key label bytes
  local k=$1 b=$3
  printf '  %-22s wall best %6.2f s median %6.2f s | CPU best %6.2f s median %6.2f s | %5.0f MB/s CPU | peak RSS %s MiB\n' \
    "$2" "$(best "$k" 2)" "$(median "$k" 2)" "$(best "$k" 4)" "$(median "$k" 4)" \
    "$(awk -v b="$b" -v t="$(best "$k" 4)" 'BEGIN{print (t > 0 ? b / 1e6 / t : 0)}')" \
    "$(col "$k" 3 | tail -1 | awk '{printf "%.1f", $1 / 1024}')"
}
echo "Kineto trace: $((bytes / 1000000)) MB, $(grep -c '"cat": "kernel"' "$trace") kernels, $REPS interleaved rounds (CPU = user + sys; the host may be shared)"
line floor "yajl tokenize floor" "$bytes"
line opdb1 "opdb parse, 1 thread" "$bytes"
line opdb "opdb parse, default" "$bytes"
line opdb2 "opdb parse, 2 threads" "$bytes"
keys="opdb1 opdb opdb2"
if [ -n "$BASE" ]; then
  line base1 "baseline, 1 thread" "$bytes"
  line base "baseline, default" "$bytes"
  keys="$keys base1 base"
fi
for k in $keys; do
  echo "  $k / floor: CPU best $(ratio "$(best $k 4)" "$(best floor 4)")x median $(ratio "$(median $k 4)" "$(median floor 4)")x," \
       "wall best $(ratio "$(best $k 2)" "$(best floor 2)")x median $(ratio "$(median $k 2)" "$(median floor 2)")x (target CPU <= 2x)"
done
echo "  (1 thread: OPDB_TRACE_PIPELINE=0; default: one thread for Kineto traces; 2 threads: OPDB_TRACE_PIPELINE=1, the tokenizer on a second thread, which costs CPU and saves wall time on an idle machine)"
rss=$(col opdb 3; col opdb1 3; col opdb2 3)
rss=$(echo "$rss" | sort -n | tail -1)
echo "  opdb peak RSS $((rss / 1024)) MiB: $([ "$rss" -lt 65536 ] && echo PASS || echo MISS) (target < 64 MiB at any size)"
echo "SQLite export ($(stat -c %s "$db") bytes):"
line sqlite3 "sqlite3 reading tables" "$(stat -c %s "$db")"
line opdbdb "opdb parse" "$(stat -c %s "$db")"
echo "  opdb / sqlite3: CPU best $(ratio "$(best opdbdb 4)" "$(best sqlite3 4)")x median $(ratio "$(median opdbdb 4)" "$(median sqlite3 4)")x," \
     "wall best $(ratio "$(best opdbdb 2)" "$(best sqlite3 2)")x (opdb's wall includes fsync of every table it writes)"
