#!/bin/sh
# bench --plan pilots a row only when its buffers fit the pilot budget
# (--plan-pilot-memory, default 256 MiB): a row of gigabytes gets the model
# estimate, says so, and the plan stays small (peak RSS well under 1 GiB where a
# pilot of the row would allocate 6 GiB). A small row is still piloted.
#   bench_plan_pilot_memory.sh OPDB EXAMPLES_BENCH_DB
set -u
opdb=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "bench_plan_pilot_memory.sh: $*" >&2; cat "$work/out" "$work/err" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: skipped"; exit 77; }
mkdir "$work/db"
# the example's header and its first (small) Add row, then the same row at 32768 x 32768 (2 GiB a tensor)
head -2 "$src/Add.csv" >"$work/db/Add.csv"
sed -n 2p "$src/Add.csv" | sed 's/"""32,1;32,1"""/"""32768,32768;32768,32768"""/; s/"""32,1"""/"""32768,32768"""/' >>"$work/db/Add.csv"
grep -q '32768,32768;32768,32768' "$work/db/Add.csv" || fail "fixture: no huge row"
# the CPU replay's OpenMP runtime is not built for ThreadSanitizer: no race reports from it
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0"
# --max-memory 1T: the run's own budget would refuse the row on a small host; the pilot budget is the point here
/usr/bin/time -f %M -o "$work/rss" "$opdb" bench --database-path "$work/db" --ops Add --plan --repeat-count 3 \
  --max-memory 1T >"$work/out" 2>"$work/err" || fail "bench --plan: exit $?"
grep -q '^\[PLAN\] Add.csv:3 .*; model estimate (buffers of 6144 MiB, over the pilot budget of 256 MiB): about ' "$work/out" ||
  fail "the huge row is not listed as a model estimate"
grep -q '^\[PLAN\] Add.csv:2 .*; pilot median ' "$work/out" || fail "the small row was not piloted"
grep -q '^\[PLAN\] 2 row(s) would run, 3 sample(s) each: .*; 1 row(s) too large to pilot by model estimate)$' "$work/out" ||
  fail "the plan's total does not count the row estimated by model"
rss=$(tail -1 "$work/rss")
[ "$rss" -lt 1048576 ] || fail "peak RSS ${rss} KiB, not under 1 GiB"
# a smaller budget: both rows by model; --json counts them
"$opdb" bench --database-path "$work/db" --ops Add --plan --repeat-count 3 --max-memory 1T --plan-pilot-memory 100 --json \
  >"$work/out" 2>"$work/err" || fail "bench --plan --plan-pilot-memory 100: exit $?"
grep -q '"rows_model_estimate": 2' "$work/out" || fail "--json: rows_model_estimate is not 2"
grep -c 'model estimate (buffers of' "$work/err" | grep -qx 2 || fail "--plan-pilot-memory 100: not both rows by model"
# the option belongs to --plan
"$opdb" bench --database-path "$work/db" --plan-pilot-memory 1K >"$work/out" 2>"$work/err"
[ $? = 2 ] || fail "--plan-pilot-memory without --plan: not a usage error"
exit 0
