#!/bin/sh
# input_limits.sh OPDB: hostile nesting is refused with a real message, not
# after minutes of quadratic parsing (timeout only guards against a hang):
# op_mapping.yaml nested 100k deep (flow and block), a grid config likewise,
# a JSON trace nested 1000 deep; JSON size limits (string, events, document).
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
mkdir -p "$w/db"
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\ndynamic,AI_CORE,"""4,64""",DT_BF16,ND,"""4,64""",DT_BF16,ND,1.0\r\n' >"$w/db/Add.csv"
cp -R "$w/db" "$w/db0"
check() { # check NAME RC EXPECTED-TEXT
  if [ "$2" -ne 1 ] && [ "$2" -ne 2 ]; then echo "FAIL: $1: exit $2"; fail=1; fi
  grep -q "$3" "$w/err" || { echo "FAIL: $1: stderr lacks '$3':"; head -c 300 "$w/err"; echo; fail=1; }
  [ "$(wc -l <"$w/err")" -le 2 ] || { echo "FAIL: $1: more than one error line"; fail=1; }
}
awk 'BEGIN { printf "operator_mappings: "; for (i = 0; i < 100000; i++) printf "["; print "" }' >"$w/db/op_mapping.yaml"
timeout 60 "$opdb" grid --data-dir "$w/db" --rows 2 --seed 1 >/dev/null 2>"$w/err"
check "op_mapping.yaml [[[ 100k deep" $? "op_mapping.yaml:1: YAML nested deeper than 256 levels"
awk 'BEGIN { printf "operator_mappings:\n"; s = ""; for (i = 0; i < 100000; i++) s = s "- "; print s "x" }' >"$w/db/op_mapping.yaml"
timeout 60 "$opdb" grid --data-dir "$w/db" --rows 2 --seed 1 >/dev/null 2>"$w/err"
check "op_mapping.yaml '- - -' 100k deep" $? "op_mapping.yaml:2: YAML nested deeper than 256 levels"
diff -r "$w/db0" "$w/db" | grep -v op_mapping.yaml | grep -q . && { echo "FAIL: the refused grid changed the database"; fail=1; }
rm "$w/db/op_mapping.yaml"
awk 'BEGIN { printf "models: "; for (i = 0; i < 100000; i++) printf "{a: "; print "" }' >"$w/deep.yaml"
timeout 60 "$opdb" grid --data-dir "$w/db" --config "$w/deep.yaml" --rows 2 --seed 1 >/dev/null 2>"$w/err"
check "grid config {a: 100k deep" $? "YAML nested deeper than 256 levels"
# a normal op_mapping.yaml still loads (quotes, comments, brackets in strings)
printf 'operator_mappings:  # comment [[[[\n  - kernel_type: "Add[" # x\n    alternate_kernel_types: [ '"'"'a]]'"'"', "b{" ]\n' >"$w/db/op_mapping.yaml"
"$opdb" grid --data-dir "$w/db" --rows 1 --seed 1 --plan >/dev/null 2>"$w/err" || { echo "FAIL: a valid op_mapping.yaml was refused:"; cat "$w/err"; fail=1; }
rm "$w/db/op_mapping.yaml"
awk 'BEGIN { printf "{\"traceEvents\": "; for (i = 0; i < 1000; i++) printf "["; for (i = 0; i < 1000; i++) printf "]"; print "}" }' >"$w/trace.json"
timeout 60 "$opdb" trace2csv --trace "$w/trace.json" --output "$w/t.csv" >/dev/null 2>"$w/err"
check "JSON 1000 deep" $? "nested deeper than 255 levels"
grep -q "client cancelled" "$w/err" && { echo "FAIL: yajl's 'client cancelled' message leaked"; fail=1; }
# JSON size limits (include/opdb/limits.h; the environment lowers them so that the inputs stay small):
# one string, the number of trace events (streamed traces), a whole document (JSON read whole), nesting.
awk 'BEGIN { printf "{\"traceEvents\": [{\"name\": \""; for (i = 0; i < 3000; i++) printf "x"; print "\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2}]}" }' >"$w/long.json"
OPDB_JSON_MAX_STRING=1000 timeout 60 "$opdb" trace2csv --trace "$w/long.json" --output "$w/t.csv" >/dev/null 2>"$w/err"
check "JSON string over OPDB_JSON_MAX_STRING" $? "long.json: a JSON string longer than 1000 (OPDB_JSON_MAX_STRING)"
"$opdb" trace2csv --trace "$w/long.json" --output "$w/t.csv" >/dev/null 2>"$w/err" || { echo "FAIL: a 3000-byte string is refused under the default limit"; cat "$w/err"; fail=1; }
# a 64 MB string in a small .json.gz: refused once the limit is passed, while the
# string is still being read (not after re-reading it chunk by chunk, quadratically)
{ printf '{"traceEvents": [{"name": "'; head -c 64000000 /dev/zero | tr '\0' x; printf '", "ph": "X"}]}'; } | gzip -1 >"$w/big.json.gz"
t0=$(date +%s)
OPDB_JSON_MAX_STRING=100000 timeout 60 "$opdb" trace2csv --trace "$w/big.json.gz" --output "$w/t.csv" >/dev/null 2>"$w/err"
check "a 64 MB JSON string in .json.gz" $? "big.json.gz: a JSON string longer than 100000 (OPDB_JSON_MAX_STRING)"
# the bounds catch a quadratic read (hours), not a slow host: they hold under the sanitizers on a
# loaded 2-core machine (TSan: 5-13 s alone, 23 s beside the suite's other tests)
[ $(($(date +%s) - t0)) -le 15 ] || { echo "FAIL: refusing a long string took $(($(date +%s) - t0)) s"; fail=1; }
t0=$(date +%s)
OPDB_JSON_MAX_STRING=64000000 OPDB_TRACE_PIPELINE=1 timeout 60 "$opdb" trace2csv --trace "$w/big.json.gz" --output "$w/t.csv" >/dev/null 2>"$w/err"
[ $? -ne 0 ] && grep -q "longer than" "$w/err" && { echo "FAIL: a string at the limit was refused"; cat "$w/err"; fail=1; }
[ $(($(date +%s) - t0)) -le 50 ] || { echo "FAIL: reading a 64 MB string took $(($(date +%s) - t0)) s"; fail=1; }
awk 'BEGIN { printf "{\"traceEvents\": ["; for (i = 0; i < 5; i++) printf "%s{\"name\": \"k\", \"ph\": \"X\", \"ts\": %d, \"dur\": 2}", (i ? ", " : ""), i; print "]}" }' >"$w/five.json"
OPDB_JSON_MAX_EVENTS=3 timeout 60 "$opdb" trace2csv --trace "$w/five.json" --output "$w/t.csv" >/dev/null 2>"$w/err"
check "trace events over OPDB_JSON_MAX_EVENTS" $? "five.json: more trace events than 3 (OPDB_JSON_MAX_EVENTS)"
[ -e "$w/t.csv" ] && grep -q . "$w/t.csv" && [ "$(grep -c . "$w/t.csv")" -gt 4 ] && { echo "FAIL: events past the limit were written"; fail=1; }
OPDB_JSON_MAX_EVENTS=5 "$opdb" trace2csv --trace "$w/five.json" --output "$w/t.csv" >/dev/null 2>"$w/err" || { echo "FAIL: 5 events refused at a limit of 5"; cat "$w/err"; fail=1; }
fia=$(dirname "$0")/cli/fiafill_in_place_new_columns/in
cp "$fia/dump.jsonl" "$w/dump.jsonl"
awk 'BEGIN { printf "{\"a\": "; for (i = 0; i < 300; i++) printf "["; for (i = 0; i < 300; i++) printf "]"; print "}" }' >>"$w/dump.jsonl"
n=$(wc -l <"$w/dump.jsonl")
timeout 60 "$opdb" fia-fill --csv-path "$fia/FusedInferAttentionScore.csv" --jsonl-path "$w/dump.jsonl" --output-path "$w/o.csv" >/dev/null 2>"$w/err"
check "JSONL record nested 300 deep" $? "dump.jsonl:$n: JSON nested deeper than 255 levels"
OPDB_JSON_MAX_STRING=4 timeout 60 "$opdb" fia-fill --csv-path "$fia/FusedInferAttentionScore.csv" --jsonl-path "$fia/dump.jsonl" --output-path "$w/o.csv" >/dev/null 2>"$w/err"
check "JSONL string over OPDB_JSON_MAX_STRING" $? "dump.jsonl:1: a JSON string longer than 4 bytes (OPDB_JSON_MAX_STRING)"
OPDB_JSON_MAX_BYTES=10 timeout 60 "$opdb" fia-fill --csv-path "$fia/FusedInferAttentionScore.csv" --jsonl-path "$fia/dump.jsonl" --output-path "$w/o.csv" >/dev/null 2>"$w/err"
check "JSONL record over OPDB_JSON_MAX_BYTES" $? "over the limit of 10 bytes (OPDB_JSON_MAX_BYTES)"
# a grid pattern of 1e9 candidates is refused before any is built (it reached 6.6 GB in 120 s),
# --plan and a small --rows included; --max-candidates moves the limit
awk 'BEGIN { printf "grids:\n  G: ["; for (i = 1; i <= 1000; i++) printf "%s%d", (i > 1 ? ", " : ""), i; print "]"
  print "patterns:\n  huge:\n    iterators: {A: G, B: G, C: G}\n    inputs: [\"(A,B,C)\"]\n    outputs: [\"(A,B,C)\"]"
  print "assignments:\n  huge: [Add]" }' >"$w/huge.yaml"
for extra in "--rows 10 --seed 1" "--plan"; do
  # shellcheck disable=SC2086
  timeout 30 "$opdb" grid --data-dir "$w/db" --config "$w/huge.yaml" $extra >/dev/null 2>"$w/err"
  check "grid of 1e9 candidates ($extra)" $? "huge.yaml: pattern 'huge' expands to more than 50000000 candidates (1000000000)"
done
awk 'BEGIN { printf "grids:\n  G: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n"
  print "patterns:\n  small:\n    iterators: {A: G, B: G, C: G}\n    inputs: [\"(A,B,C)\"]\n    outputs: [\"(A,B,C)\"]"
  print "assignments:\n  small: [Add]" }' >"$w/small.yaml"
timeout 30 "$opdb" grid --data-dir "$w/db" --config "$w/small.yaml" --plan --max-candidates 1000 >/dev/null 2>"$w/err"
check "grid of 1331 candidates over --max-candidates 1000" $? "more than 1000 candidates (1331)"
timeout 30 "$opdb" grid --data-dir "$w/db" --config "$w/small.yaml" --plan --max-candidates 1331 >/dev/null 2>"$w/err" ||
  { echo "FAIL: 1331 candidates refused at --max-candidates 1331"; cat "$w/err"; fail=1; }
[ $fail = 0 ] && echo "input limits: ok"
exit $fail
