#!/bin/sh
# Inputs that leave a command with less than the user meant are said, and
# --strict makes them exit 1: grid on a database folder without
# op_mapping.yaml (rows without operator metadata); --reference-quirks stays
# silent as the reference is.
#   nothing_done.sh OPDB TESTS_DIR
set -u
opdb=$1
cases=$2/cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "nothing_done.sh: $*" >&2; cat "$work/err" >&2; exit 1; }
want='has no op_mapping.yaml: rows are generated without its operator metadata'
cp -R "$cases/grid_bom_header/in/db" "$work/db"
"$opdb" grid --data-dir "$work/db" --rows 3 --seed 9 --plan >/dev/null 2>"$work/err" || fail "grid --plan: exit $?"
grep -q "$want" "$work/err" || fail "grid: no warning about the missing op_mapping.yaml"
"$opdb" grid --data-dir "$work/db" --rows 3 --seed 9 --plan --strict >/dev/null 2>"$work/err" && fail "grid --strict: exit 0"
grep -q '^opdb grid: --strict: 1 warning(s)' "$work/err" || fail "grid --strict: no --strict line"
"$opdb" grid --data-dir "$work/db" --rows 3 --seed 9 --plan --reference-quirks >/dev/null 2>"$work/err" ||
  fail "grid --reference-quirks: exit $?"
if grep -q "$want" "$work/err"; then fail "grid --reference-quirks warned"; fi
exit 0
