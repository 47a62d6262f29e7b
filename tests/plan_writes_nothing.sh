#!/bin/sh
# --plan only reads: every command that has it (bench, bench --grid, grid, in
# both modes) leaves the folder tree exactly as it was, a database folder
# that does not exist yet included.
#   plan_writes_nothing.sh OPDB TESTS_DIR
set -u
opdb=$1
cases=$2/cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "plan_writes_nothing.sh: $*" >&2; cat "$work/err" >&2; exit 1; }
# every path with its type, size and bytes' checksum
snapshot() { (cd "$work/t" && find . -exec sh -c 'for p; do if [ -f "$p" ]; then echo "f $p $(cksum <"$p")"; else echo "d $p"; fi; done' sh {} + | LC_ALL=C sort); }
mkdir -p "$work/t"
cp -R "$cases/bench_status_report/in/db" "$work/t/benchdb"
cp -R "$cases/grid_op_mapping/in/db" "$work/t/griddb"
# bench --plan pilots rows on the CPU replay, whose OpenMP runtime is not built for
# ThreadSanitizer (the bench tests stay outside the TSan run): no race reports here
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0"
check() {
  before=$(snapshot)
  (cd "$work/t" && OPDB_DATA_ROOT="$work/t/root" "$opdb" "$@") >/dev/null 2>"$work/err" || fail "$*: exit $?"
  after=$(snapshot)
  [ "$before" = "$after" ] || { printf '%s\n' "$before" >"$work/b"; printf '%s\n' "$after" >"$work/a"
    diff "$work/b" "$work/a" >&2; fail "$*: the folder tree changed"; }
}
for q in "" --reference-quirks; do
  check bench --grid default --plan --database-path newdb $q
  check bench --grid default --plan $q
  check bench --database-path benchdb --plan $q
  check bench --database-path benchdb --ops MatMulV2 --plan --repeat-count 1 $q
  check grid --data-dir griddb --rows 5 --seed 4 --plan $q
  check grid --data-dir griddb --rows 0 --plan --json $q
done
exit 0
