#!/bin/sh
# One spelling for machine-readable output: `--json` prints one JSON object
# (and nothing else) on stdout for parse, bench (run and --plan), grid (run
# and --plan), fia-fill, comm import, m6 and compare; m6's `--json-output -` and compare's
# `--output -` print the same bytes. A successful run ends with one
# "opdb <command>: ..." line on stderr (checked here for parse, bench, grid,
# validate, diff, m6, shape-compare, fia-fill, comm import, trace2csv, query, compare, comm
# validate, aie); aie --json too.
#   json_outputs.sh OPDB TESTS_DIR
set -u
opdb=$1
cases=$2/cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "json_outputs.sh: $*" >&2; cat "$work/err" >&2; exit 1; }
# json FILE PYTHON-EXPR: FILE is exactly one JSON object and EXPR holds for it (as d)
json() { python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict), "not an object"
assert eval(sys.argv[2]), sys.argv[2]' "$1" "$2" || fail "$1: $2"; }
summary() { grep -q "^opdb $1: $2" "$work/err" || fail "no summary line 'opdb $1: $2' on stderr"; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
cd "$work" || exit 1

"$opdb" parse --profiling-path "$cases/parse_bom_crlf/in/kernel_details.csv" --database-path db --json >p.json 2>err ||
  fail "parse --json: exit $?"
json p.json 'd["command"] == "parse" and d["database"] == "db" and d["files_written"] == len(d["tables"]) > 0 and all(set(t) == {"file", "shapes", "launches", "total_us"} for t in d["tables"]) and d["rows_read"] > 0'
summary parse "wrote [0-9]* tables\? to db from [0-9]* rows\? of 1 input file"
"$opdb" parse --profiling-path "$cases/parse_bom_crlf/in/kernel_details.csv" --database-path db2 >p.txt 2>err || fail "parse: exit $?"
grep -q '^Generated ' p.txt || fail "parse without --json: no completion line"

"$opdb" validate --database-path db >/dev/null 2>err || fail "validate: exit $?"
summary validate "checked [0-9]* rows\? in [0-9]* tables\? of db: no problem"
"$opdb" diff db db2 >/dev/null 2>err || fail "diff: exit $?"
summary diff "compared [0-9]* rows\?: [0-9]* SAME"

cp -R "$cases/bench_status_report/in/db" bdb
"$opdb" bench --database-path bdb --ops MatMulV2 --plan --repeat-count 1 --json >b.json 2>err || fail "bench --plan --json: exit $?"
json b.json 'd["command"] == "bench" and d["plan"] is True and d["rows_planned"] >= 0 and d["write_back"] is None'
summary bench "planned "
OPDB_REPORT_TIMESTAMP=20260101_000000 "$opdb" bench --database-path bdb --ops MatMulV2 --update-mode missing-only --repeat-count 1 --json >b.json 2>err
[ $? = 1 ] || fail "bench --json: exit status (a row fails: 1 expected)"
json b.json 'd["plan"] is False and d["rows_failed"] == 1 and d["operators"][0]["operator"] == "MatMulV2" and d["operators"][0]["status"] == "failed" and d["write_back"]["csv_files"][0]["operator"] == "MatMulV2"'
json b.json '__import__("os").path.isfile(d["write_back"]["report"])'
grep -q '^\[STATUS\] MatMulV2: failed' err || fail "bench --json: the status lines are not on stderr"
summary bench "measured 1 row of 1 operator under bdb (1 failed"

cp -R "$cases/grid_op_mapping/in/db" gdb
"$opdb" grid --data-dir gdb --rows 5 --seed 4 --json >g.json 2>err || fail "grid --json: exit $?"
json g.json 'set(d) == {"files", "total", "coverage"} and d["total"]["to_append"] > 0'
summary grid "appended [0-9]* rows to [0-9]* of 4 CSV files under gdb"
"$opdb" grid --data-dir gdb --rows 5 --seed 4 --plan --json >g.json 2>err || fail "grid --plan --json: exit $?"
json g.json '"files" in d'
summary grid "would append "

m6=$cases/m6_worked_example/in
"$opdb" m6 --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" --json >m.json 2>err || fail "m6 --json: exit $?"
"$opdb" m6 --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" --json-output - >m2.json 2>err || fail "m6 --json-output -: exit $?"
cmp -s m.json m2.json || fail "m6: --json and --json-output - differ"
json m.json 'len(d) > 0'
summary m6 "M6 = [0-9.]* (1.0 is perfect), JSON written to stdout"
"$opdb" m6 --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" --json --json-output x.json >/dev/null 2>err && fail "m6 --json --json-output FILE: exit 0"

cmp=$cases/compare_allreduce_skd/in
"$opdb" compare --tc-trace "$cmp/t.json" --prof-trace "$cmp/p.csv" --json >c.json 2>err || fail "compare --json: exit $?"
"$opdb" compare --tc-trace "$cmp/t.json" --prof-trace "$cmp/p.csv" --output - >c2.json 2>err || fail "compare --output -: exit $?"
cmp -s c.json c2.json || fail "compare: --json and --output - differ"
json c.json 'len(d) > 0'
summary compare "compared 1 scenario: [0-9]* kernel types\?, [0-9]* in both traces"

a=$cases/aie_json/in
cp -R "$a/outputs" outputs
"$opdb" aie --json --M 64 --K 64 --N 64 --m 32 --k 32 --n 32 --row 1 --col 1 --hwid npu1 --warmup 1 --iterations 2 >a.json 2>err ||
  fail "aie --json: exit $?"
json a.json 'd["command"] == "aie" and len(d["cores"]) == 2 and d["system"]["above_peak"] is True'
grep -q '^\[write\] ' err || fail "aie --json: the [write] lines are not on stderr"
summary aie "wrote the timings of 2 cores of the default trace"
"$opdb" aie --json --reference-quirks --M 64 --K 64 --N 64 --m 32 --k 32 --n 32 --row 1 --col 1 --hwid npu1 --warmup 1 \
  --iterations 2 >/dev/null 2>err && fail "aie --json --reference-quirks: exit 0"

"$opdb" comm validate --database-path "$cases/comm_validate_pass_tolerance/in/csv" --tolerance 3.25 >/dev/null 2>err ||
  fail "comm validate: exit $?"
summary "comm validate" "checked [0-9]* rows\? of [0-9]* tables\?: [0-9]* PASS, [0-9]* WARN, [0-9]* FAIL"

"$opdb" shape-compare --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" >s.csv 2>err || fail "shape-compare: exit $?"
summary shape-compare "wrote $(($(wc -l <s.csv) - 1)) rows\? to stdout"

"$opdb" trace2csv --trace "$m6/tc.json" --output t.csv 2>err || fail "trace2csv: exit $?"
rows=$(($(wc -l <t.csv) - 1))
summary trace2csv "wrote $rows rows\? to t.csv"
"$opdb" trace2csv --trace "$m6/tc.json" --output t2.csv --json >t.json 2>err || fail "trace2csv --json: exit $?"
json t.json "d == {'command': 'trace2csv', 'trace': '$m6/tc.json', 'output': 't2.csv', 'rows': $rows}"
cmp -s t.csv t2.csv || fail "trace2csv --json: another CSV"
"$opdb" trace2csv --trace "$m6/tc.json" --json >/dev/null 2>err && fail "trace2csv --json with the CSV on stdout: exit 0"
"$opdb" shape-compare --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" --output s.csv --json >s.json 2>err ||
  fail "shape-compare --json: exit $?"
json s.json "d == {'command': 'shape-compare', 'tc_trace': '$m6/tc.json', 'prof_trace': '$m6/prof.csv', 'output': 's.csv', 'rows': $(($(wc -l <s.csv) - 1))}"
"$opdb" shape-compare --tc-trace "$m6/tc.json" --prof-trace "$m6/prof.csv" --json >/dev/null 2>err &&
  fail "shape-compare --json with the CSV on stdout: exit 0"

f=$cases/fiafill_basic/in
"$opdb" fia-fill --csv-path "$f/FusedInferAttentionScore.csv" --jsonl-path "$f/fia_runtime.jsonl" --output-path fia.csv --json >f.json 2>err ||
  fail "fia-fill --json: exit $?"
json f.json 'd["command"] == "fia-fill" and d["output"] == "fia.csv" and d["rows_in"] == 5 and d["matched"] == 4 and d["rows_out"] == 7'
summary fia-fill "wrote 7 rows to fia.csv"
"$opdb" fia-fill --csv-path - --jsonl-path "$f/fia_runtime.jsonl" --json <"$f/FusedInferAttentionScore.csv" >/dev/null 2>err &&
  fail "fia-fill --json with the CSV on stdout: exit 0"

l=$cases/comm_import_midline_tags/in
"$opdb" comm import --output-dir hcom --logs "$l/all_reduce_perf_tagged.log" --json >i.json 2>err || fail "comm import --json: exit $?"
json i.json 'd["command"] == "comm import" and d["rows"] == 3 and d["logs"][0]["rows"] == 3 and d["output_dir"] == "hcom"'
summary "comm import" "imported 3 rows from 1 log into hcom"

q=$cases/query_attention_default/in
"$opdb" query --db "$q/db" --no-interpolation <"$q/queries.jsonl" >q.jsonl 2>err || fail "query: exit $?"
summary query "answered $(grep -c . "$q/queries.jsonl") queries: [0-9]* hit, [0-9]* miss, 0 error, 0 unsupported"
exit 0
