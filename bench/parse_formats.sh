#!/usr/bin/env bash
# bench/parse_formats.sh [BUILD_DIR] [MB]: `opdb parse` on a generated PyTorch
# profiler trace of MB megabytes (default 200; 1000 for the 1 GB case) against
# the yajl tokenize-only floor on the same file, with peak RSS; and `opdb
# parse` of the real Ascend SQLite export against `sqlite3` reading the same
# tables. Best and median of OPDB_BENCH_REPS (default 3) interleaved rounds.
set -u -o pipefail
export LC_ALL=C
BUILD=${1:-build}
MB=${2:-200}
REPS=${OPDB_BENCH_REPS:-3}
WORK=${OPDB_BENCH_DIR:-/tmp/opdb-bench-formats}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK"
trace="$WORK/kineto_${MB}MB.json"
[ -s "$trace" ] || python3 "$here/gen_kineto.py" "$trace" "$MB" || exit 2
db="$WORK/ascend_pytorch_profiler_0.db"
[ -s "$db" ] || gunzip -c "$here/../tests/cli/parse_sqlite_real_torch_npu_l1/in/ascend_pytorch_profiler_0.db.gz" >"$db"
timed() { # label cmd... -> "label seconds rss_kib cpu_seconds" (cpu = user + sys: honest on a loaded host)
  local l=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/t" "$@" >/dev/null 2>&1
  awk -v l="$l" '{printf "%s %s %s %.2f\n", l, $1, $2, $3 + $4}' "$WORK/t"
}
stats() { sort -n | awk '{a[NR]=$1} END {printf "best %.3f s  median %.3f s", a[1], a[int((NR+1)/2)]}'; }
: >"$WORK/runs"
"$BUILD/opdb" parse --profiling-path "$trace" --database-path "$WORK/db" >/dev/null 2>&1 # warm the page cache
for _ in $(seq "$REPS"); do
  timed floor "$BUILD/bench/yajl_tokenize" "$trace" >>"$WORK/runs"
  rm -rf "$WORK/db"; timed opdb "$BUILD/opdb" parse --no-progress --profiling-path "$trace" --database-path "$WORK/db" >>"$WORK/runs"
  timed sqlite3 sqlite3 -readonly "$db" "SELECT * FROM COMPUTE_TASK_INFO c JOIN TASK t USING(globalTaskId); SELECT * FROM STRING_IDS; SELECT * FROM TASK_PMU_INFO;" >>"$WORK/runs"
  rm -rf "$WORK/db2"; timed opdbdb "$BUILD/opdb" parse --no-progress --profiling-path "$db" --database-path "$WORK/db2" >>"$WORK/runs"
done
bytes=$(stat -c %s "$trace")
f=$(awk '$1=="floor"{print $2}' "$WORK/runs" | sort -n | head -1)
o=$(awk '$1=="opdb"{print $2}' "$WORK/runs" | sort -n | head -1)
rss=$(awk '$1=="opdb"{print $3}' "$WORK/runs" | sort -n | tail -1)
echo "Kineto trace: $((bytes / 1000000)) MB, $(grep -c '"cat": "kernel"' "$trace") kernels"
echo "  yajl tokenize floor: $(awk '$1=="floor"{print $2}' "$WORK/runs" | stats)"
echo "  opdb parse:          $(awk '$1=="opdb"{print $2}' "$WORK/runs" | stats)  ($(awk -v b="$bytes" -v t="$o" 'BEGIN{printf "%.0f", b/1e6/t}') MB/s, peak RSS $((rss / 1024)) MiB)"
cf=$(awk '$1=="floor"{print $4}' "$WORK/runs" | sort -n | head -1)
co=$(awk '$1=="opdb"{print $4}' "$WORK/runs" | sort -n | head -1)
echo "  CPU seconds (best): floor $cf s, opdb $co s, ratio $(awk -v a="$co" -v b="$cf" 'BEGIN{printf "%.2f", a/b}')"
echo "  ratio opdb/floor (best): $(awk -v a="$o" -v b="$f" 'BEGIN{printf "%.2f", a/b}') (target <= 2); peak RSS target < 64 MiB"
echo "SQLite export ($(stat -c %s "$db") bytes):"
echo "  sqlite3 reading the tables: $(awk '$1=="sqlite3"{print $2}' "$WORK/runs" | stats)"
echo "  opdb parse:                 $(awk '$1=="opdbdb"{print $2}' "$WORK/runs" | stats)"
