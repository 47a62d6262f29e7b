#!/bin/sh
# examples.sh OPDB SRC: runs every example of docs/GUIDE.md, in order, on a copy of examples/
# (tests/guide_examples.awk extracts them: exit status and the stdout lines the guide shows),
# checks that the guide has an example of every command, then checks the outputs of the
# examples' files in more depth.
set -eu
opdb=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- the guide, as a reader runs it: opdb on PATH, a scratch folder holding examples/
mkdir "$work/bin" "$work/guide"
ln -s "$opdb" "$work/bin/opdb"
cp -R "$src/examples" "$work/guide/examples"
awk -f "$src/tests/guide_examples.awk" "$src/docs/GUIDE.md" >"$work/guide.sh"
guide_fail() {
  echo "docs/GUIDE.md:$1: $2" >&2
  echo "  command: $(cat "cmd.$3")" >&2
  echo "  stdout:" >&2; sed 's/^/    /' "out.$3" >&2
  echo "  stderr:" >&2; sed 's/^/    /' "err.$3" >&2
  exit 1
}
# guide_has FEATURE: the build has it (opdb --version's features line)
guide_has() { "$opdb" --version | grep -qi "features:.* $1=yes"; }
# check_exit N WANT LINE: the Nth command's exit status ($rc) is WANT
check_exit() { [ "$rc" -eq "$2" ] || guide_fail "$3" "exit status $rc, the guide expects $2" "$1"; }
# check_line N TEXT LINE: TEXT is a whole line of the Nth command's stdout (CRLF or LF); TEXT
# ending in "..." is a prefix of one
check_line() {
  case $2 in
    *...) LINE_PREFIX=${2%...} awk '{ sub(/\r$/, "") } index($0, ENVIRON["LINE_PREFIX"]) == 1 { f = 1 } END { exit !f }' "out.$1" ;;
    *) tr -d '\r' <"out.$1" | grep -qxF -- "$2" ;;
  esac || guide_fail "$3" "stdout lacks the line: $2" "$1"
}
(cd "$work/guide" && PATH="$work/bin:$PATH" && . "$work/guide.sh")
# every command of `opdb --help` (and every comm subcommand) has a runnable example
commands=$("$opdb" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || { echo "examples.sh: no command list in opdb --help" >&2; exit 1; }
for c in $commands; do
  case $c in comm) names="comm_bench comm_validate comm_import" ;; *) names=$c ;; esac
  for n in $names; do
    n=$(echo "$n" | tr _ ' ')
    # (from the generated script: a block that needs a feature this build lacks still counts)
    grep -qE "^printf '%s\\\\n' 'opdb $n( |')" "$work/guide.sh" ||
      { echo "docs/GUIDE.md: no runnable example of opdb $n" >&2; exit 1; }
  done
done

# the extractor refuses a console block nobody marked, and output before a block's first command
printf '```console\n$ true\n```\n' >"$work/unmarked.md"
if awk -f "$src/tests/guide_examples.awk" "$work/unmarked.md" >/dev/null 2>&1; then
  echo "guide_examples.awk accepted an unmarked console block" >&2; exit 1
fi
printf '<!-- example -->\n```console\nfoo\n$ true\n```\n' >"$work/orphan.md"
if awk -f "$src/tests/guide_examples.awk" "$work/orphan.md" >/dev/null 2>&1; then
  echo "guide_examples.awk accepted output before a command" >&2; exit 1
fi

# ---- the examples' outputs in more depth
cd "$work"
"$opdb" parse --profiling-path "$src/examples/profile" --database-path db --summary >parse.out
grep -q 'Generated' parse.out
"$opdb" validate --database-path db >validate.out 2>&1 || { cat validate.out; exit 1; }
"$opdb" compare --tc-trace "$src/examples/compare/predicted_trace.json" \
  --prof-trace "$src/examples/compare/measured_forward.csv" --name example --output cmp.json --html report.html >compare.out
grep -q '^kernel type' compare.out
grep -q '"MatmulAllReduce"' cmp.json
grep -q 'class="scatter"' report.html
"$opdb" compare --tc-trace "$src/examples/compare/predicted_trace.json" \
  --prof-trace "$src/examples/compare/measured_forward.csv" --output - 2>/dev/null | grep -q '"hcom_allReduce_"'
"$opdb" grid --database-path db --target-models Qwen3-32B --rows 20 --seed 1 --plan >grid_plan.out
grep -q '^total' grid_plan.out
"$opdb" grid --database-path db --target-models Qwen3-32B --rows 20 --seed 1 >grid.out 2>&1
"$opdb" validate --database-path db >validate2.out 2>&1 || { cat validate2.out; exit 1; }
"$opdb" comm import --logs "$src/examples/comm/nccl_tests_allreduce_8gpu.txt" --num-devices 8 --output-dir comm >import.out
test -s comm/hcom_allReduce_.csv
"$opdb" comm validate --csv-dir comm >comm_validate.out 2>&1 || true
grep -q 'fit: t = alpha' comm_validate.out
# update: merge an msprof op_summary (a PROF_* folder) into the database just parsed
"$opdb" update --prof-path "$src/examples/update" --database-path db >update.out
grep -q '^## Rows Added' update.out
grep -q '| Cast .*Cast.csv (left as is)' update.out
# bench: what would run on this machine, and its estimated time, on the database built above (--plan
# pilots the rows within its pilot budget; the profile's gigabyte Add rows get the model estimate)
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0" "$opdb" bench --database-path db --ops Add --plan >bench_plan.out
grep -q 'row(s) would run' bench_plan.out
grep -q '; model estimate (buffers of ' bench_plan.out
# bench: a real replay on this CPU of a 7-row database (Add, MatMulV2, RmsNorm rows of the
# example profile), 3 samples per row, warm cache: a few seconds. Checks structure, never timings.
cp -R "$src/examples/bench/db" bench_db
"$opdb" bench --database-path bench_db --repeat-count 3 --hot-cache --threads 1 >bench.out 2>bench.err || { cat bench.err; exit 1; }
grep -q '^\[SUMMARY\] Success: 3, Failed: 0, Skipped: 0' bench.out
test "$(grep -c '^\[OK\] ' bench.err)" -eq 7
. "$src/tests/bench_csv.sh"
for t in Add:4 MatMulV2:3 RmsNorm:3; do
  f=bench_db/${t%:*}.csv
  l=2
  while [ $l -le "${t#*:}" ]; do
    test "$(csv_cell "$f" $l 'MicroBench Samples')" = 3
    test "$(csv_cell "$f" $l 'MicroBench Cache')" = hot
    awk -v v="$(csv_cell "$f" $l 'Average Duration(us)')" 'BEGIN { exit !(v > 0) }'
    l=$((l + 1))
  done
done
"$opdb" validate --database-path bench_db >bench_validate.out 2>&1 || { cat bench_validate.out; exit 1; }
# m6 and shape-compare: a predicted trace against one measured forward pass
"$opdb" m6 --tc-trace "$src/examples/m6/tc_trace.json" --prof-trace "$src/examples/m6/forward_pass.csv" >m6.out
grep -q '^M6 = 0.800' m6.out
"$opdb" shape-compare --tc-trace "$src/examples/m6/tc_trace.json" --prof-trace - --output - \
  <"$src/examples/m6/forward_pass.csv" >shapes.csv
grep -q '^MatMulV2,"1,4096;4096,4096",9.0,10.0,-10.0' shapes.csv
# compare's HTML report with the per-shape drill-down of that CSV, written to stdout
"$opdb" compare --tc-trace "$src/examples/m6/tc_trace.json" --prof-trace "$src/examples/m6/forward_pass.csv" \
  --shapes shapes.csv --html - 2>/dev/null >shapes_report.html
grep -q '<details class="kt-shapes" data-kt="MatMulV2" data-shapes="1">' shapes_report.html
# trace2csv: the complete events of a predicted trace as CSV
"$opdb" trace2csv --trace "$src/examples/compare/predicted_trace.json" --output events.csv >/dev/null
grep -q '^op_name,kernel_type' events.csv
# aie: an AMD AIE hardware trace, 1 warm-up + 4 iterations
"$opdb" aie --trace "$src/examples/aie/trace.json" --out-dir aie --M 64 --K 64 --N 64 --m 32 --k 32 --n 32 \
  --row 1 --col 1 --hwid npu1 --warmup 1 --iterations 4 >aie.out
test -s aie/aggregate_perf.json
# fia-fill: FusedInferAttentionScore runtime metadata back-filled from a JSONL dump
"$opdb" fia-fill --csv-path "$src/examples/fia-fill/FusedInferAttentionScore.csv" \
  --jsonl-path "$src/examples/fia-fill/fia_runtime.jsonl" --output-path fia.csv >fia.out
grep -q '^Backfilled 4/5' fia.out
echo "examples: ok"
