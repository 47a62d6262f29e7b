#!/bin/sh
# input_limits.sh OPDB: hostile nesting is refused with a real message, not
# after minutes of quadratic parsing (timeout only guards against a hang):
# op_mapping.yaml nested 100k deep (flow and block), a grid config likewise,
# a JSON trace nested 1000 deep.
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
[ $fail = 0 ] && echo "input limits: ok"
exit $fail
