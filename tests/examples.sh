#!/bin/sh
# examples.sh OPDB SRC: runs every example of docs/GUIDE.md on the files in examples/.
set -eu
opdb=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
echo "examples: ok"
