#!/bin/sh
# writers_locked.sh OPDB SRC: every command that writes a database goes through the folder lock
# and the all-or-nothing transaction.
#  1. Enumeration: every command opdb lists, and every library source that replaces a file
#     (opdb_atomic_write / opdb_atomic_open), is classified as a database writer or not (commands:
#     tests/trials/writers.sh, the list the kill and concurrency trials run too; sources: below);
#     one nobody classified fails the test (a new writer must join the trials here).
#  2. Each database writer is run while another process holds its folder's lock: it must wait
#     (the folder unchanged while the lock is held), then finish with exit 0 and its change made.
#  3. Each database writer refuses a planted invalid journal in its folder (the recovery that
#     the lock runs), renaming nothing.
set -u
opdb=$1
src=$2
w=$(mktemp -d)
trap 'kill $holder 2>/dev/null; rm -rf "$w"' EXIT
holder=
fail=0
bad() { echo "FAIL: $*"; fail=1; }
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
export OPDB_REPORT_TIMESTAMP=20260101_000000

# --- 1. enumeration ---------------------------------------------------------------------------
# the lists of writers and how to run each: one home, shared with the kill and concurrency trials
. "$src/tests/trials/writers.sh"
for c in $(writers_unclassified); do bad "command '$c' is not classified: add it to the writers of tests/trials/writers.sh"; done
# library sources that replace files: database writers (their entry points take the lock and the
# transaction, tried below) or output files the user names
db_sources="src/update/update_csv.c src/update/update_report.c src/ingest/table_merge.c src/ingest/fia_fill.c
  src/replay/bench_writeback.c src/grid/file_write.c src/grid/from_misses.c src/comm/comm_rows.c src/analysis/check_calib.c"
out_sources="src/trace/trace2csv.c src/aie/aie.c src/analysis/compare_run.c src/analysis/m6.c
  src/analysis/shape_compare.c src/analysis/diff_html.c src/comm/mpi/bench_ranks.c src/comm/mpi/opdb_comm_main.c src/analysis/check_html.c"
for f in $(cd "$src" && grep -rl -e 'opdb_atomic_write(' -e 'opdb_atomic_open(' src --include='*.c' | grep -v '^src/core/' | LC_ALL=C sort); do
  case " $(echo $db_sources $out_sources) " in *" $f "*) ;; *) bad "$f replaces files but is not classified in $0" ;; esac
done
# a database writer's library entry point takes the lock (directly or through one that does)
for f in src/update/update_run.c src/ingest/parse_job.c src/grid/run.c src/replay/bench_run.c src/ingest/fia_fill.c \
         src/comm/comm_rows.c src/db/repair.c src/grid/from_misses.c src/analysis/check_run.c; do
  grep -q 'opdb_dir_lock' "$src/$f" || bad "$f: a database writer's entry point without the folder lock"
done
for f in src/update/update_run.c src/ingest/parse_job.c src/grid/run.c src/ingest/fia_fill.c src/comm/comm_rows.c \
         src/grid/from_misses.c; do
  grep -q 'opdb_txn_begin' "$src/$f" && grep -q 'opdb_txn_end' "$src/$f" || bad "$f: a database writer outside the transaction"
done

# --- 2. each writer against a held lock --------------------------------------------------------
writers_fixture || exit 1
tried=0
for c in $writers $writer_modes; do
  tried=$((tried + 1))
  rm -rf "$w/db"; cp -R "$w/base" "$w/db"
  [ $c = validate ] && : >"$w/db/.Op1.csv.tmp.AbC123"
  S0=$(state "$w/db")
  flock -x "$w/db" sleep 3 & holder=$!
  sleep 0.5
  [ $c = validate ] && S0=$(state "$w/db")
  (run_writer $c "$w/db" >"$w/out" 2>"$w/err"; echo $? >"$w/rc") & p=$!
  sleep 1.5
  if [ -f "$w/rc" ]; then bad "$c did not wait for the folder lock (exit $(cat "$w/rc")): $(head -c 200 "$w/err")"
  elif [ "$(state "$w/db")" != "$S0" ]; then bad "$c changed the folder while another process held its lock"; fi
  grep -q 'waiting for another opdb' "$w/err" || bad "$c does not say it waits for the lock: $(head -c 200 "$w/err")"
  wait $holder; wait $p; rm -f "$w/rc"
  [ "$(state "$w/db")" != "$S0" ] || bad "$c changed nothing once the lock was free: $(head -c 300 "$w/err")"
done
echo "writers tried against a held lock: $tried"

# --- 3. each writer refuses a planted invalid journal --------------------------------------------
for c in $writers $writer_modes; do
  rm -rf "$w/db"; cp -R "$w/base" "$w/db"
  printf 'opdb-journal 2\n.x.tmp.AAAAAA\000../outside.csv\000-\000end\n' >"$w/db/.opdb-journal"
  run_writer $c "$w/db" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] && grep -q 'invalid journal' "$w/err" || bad "$c with a planted journal: exit $rc: $(head -c 300 "$w/err")"
  [ -f "$w/db/.opdb-journal" ] || bad "$c removed the planted journal"
done
[ $fail = 0 ] && echo "writers locked: ok"
exit $fail
