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
echo "examples: ok"
