#!/bin/sh
# journal_safety.sh OPDB SRC: the commit journal of a database folder cannot be abused, and a commit
# that cannot complete changes nothing.
#  1. A planted .opdb-journal (the old absolute-path form, and entries that are not plain names of
#     opdb's own files in the folder) renames nothing for any command that takes the folder lock:
#     one error naming it, exit 1; plain `validate` reports it; `--repair` refuses, and only
#     `--repair --discard-journal` deletes it. Read-only commands (bench --plan, grid --plan) leave it.
#  2. A table that is a directory, or an immutable file (where chattr works), is found before the
#     first rename: exit 1, the database wholly old, no journal or temp file left.
#  3. A killed commit leaves a journal: `validate` reports it as an error; `--repair` completes it;
#     when a target can no longer be replaced, `--repair` rolls the run back to the old tables.
set -u
opdb=$1
src=$2
w=$(mktemp -d)
trap 'chattr -R -i "$w" 2>/dev/null; rm -rf "$w"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
kd() { # kd FILE SCALE: 60 operator types
  awk -v s="$2" 'BEGIN { print "Type,Input Shapes,Output Shapes,Duration(us)"; for (t = 0; t < 60; t++) for (r = 0; r < 3; r++)
    printf "Op%04d,\"\"\"%d,%d\"\"\",\"\"\"%d\"\"\",%d.5\n", t, t, r, t, (t + r) * s + 1 }' >"$1"
}
kd "$w/old.csv" 1
kd "$w/new.csv" 3
"$opdb" parse --profiling-path "$w/old.csv" --database-path "$w/old" >/dev/null 2>&1 || exit 1
cp -R "$w/old" "$w/ref_new"
"$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/ref_new" >/dev/null 2>&1 || exit 1

# --- 1. planted journals ---------------------------------------------------------------------
plant_v1() { # the old form: absolute paths, acted on blindly before
  printf 'opdb-journal 1\n%s\000%s\000end\n' "$w/db/payload.csv" "$w/home/victim.txt" >"$w/db/.opdb-journal"
}
fresh() {
  rm -rf "$w/db" "$w/home"; cp -R "$w/old" "$w/db"; mkdir "$w/home"
  echo "the user's own file" >"$w/home/victim.txt"; echo "payload" >"$w/db/payload.csv"
}
check_untouched() { # check_untouched WHAT
  grep -q "the user's own file" "$w/home/victim.txt" 2>/dev/null || bad "$1: a file outside the database was replaced"
  [ -f "$w/db/payload.csv" ] || bad "$1: the planted payload was moved"
  [ -f "$w/db/.opdb-journal" ] || bad "$1: the planted journal was removed"
}
planted=0
for cmd in repair parse update grid comm; do
  fresh; plant_v1; planted=$((planted + 1))
  case $cmd in
    repair) "$opdb" validate --repair --database-path "$w/db" >"$w/out" 2>"$w/err" ;;
    parse) "$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >"$w/out" 2>"$w/err" ;;
    update) "$opdb" update --prof-path "$src/examples/update" --database-path "$w/db" >"$w/out" 2>"$w/err" ;;
    grid) "$opdb" grid --database-path "$w/db" --target-models Qwen3-32B --rows 5 --seed 1 >"$w/out" 2>"$w/err" ;;
    comm) "$opdb" comm import --logs "$src/examples/comm/nccl_tests_allreduce_8gpu.txt" --num-devices 8 --output-dir "$w/db" >"$w/out" 2>"$w/err" ;;
  esac
  rc=$?
  [ $rc = 1 ] || bad "$cmd with a planted journal: exit $rc (want 1)"
  grep -q 'invalid journal' "$w/err" || bad "$cmd with a planted journal: no 'invalid journal' error: $(head -c 300 "$w/err")"
  check_untouched "$cmd"
done
# read-only commands do not act on a journal (nor refuse to plan)
for cmd in bench-plan grid-plan validate; do
  fresh; plant_v1; planted=$((planted + 1))
  case $cmd in
    bench-plan) "$opdb" bench --database-path "$w/db" --ops Op0001 --plan >"$w/out" 2>"$w/err"; rc=$? ;;
    grid-plan) "$opdb" grid --database-path "$w/db" --target-models Qwen3-32B --rows 5 --seed 1 --plan >"$w/out" 2>"$w/err"; rc=$? ;;
    validate) "$opdb" validate --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
      [ $rc = 1 ] || bad "validate with a planted journal: exit $rc (want 1: an error)"
      grep -q 'invalid journal' "$w/out" || bad "validate does not report the planted journal: $(head -c 300 "$w/out")" ;;
  esac
  check_untouched "$cmd"
done
# entries of the new form that are not plain names of opdb's own files in the folder
plant_v2() { # plant_v2 TMP TABLE BACKUP
  { printf 'opdb-journal 2\n'; printf '%s\000%s\000%s\000' "$1" "$2" "$3"; printf 'end\n'; } >"$w/db/.opdb-journal"
}
for entry in "/abs/.x.tmp.AAAAAA|Op0001.csv|-" ".Op0001.csv.tmp.AAAAAA|../home/victim.txt|-" \
             ".Op0001.csv.tmp.AAAAAA|$w/home/victim.txt|-" ".victim.txt.tmp.AAAAAA|sub/victim.txt|-" \
             "payload.csv|Op0001.csv|-" ".Op0001.csv.tmp.AAAAAA|Op0001.csv|../x" \
             ".Op0001.csv.tmp.AAAAAA|.opdb-journal|-" ".Op0001.csv.tmp.AAAAAA|Op0001.csv|.Op0001.csv.old.A/" \
             ".Op0001.csv.tmp.AAAAAA|..|-" ".Op0001.csv.tmp.AAAAA|Op0001.csv|-" ".Op0002.csv.tmp.AAAAAA|Op0001.csv|-"; do
  fresh; planted=$((planted + 1))
  t=${entry%%|*}; rest=${entry#*|}; tb=${rest%%|*}; bk=${rest#*|}
  cp "$w/db/payload.csv" "$w/db/.Op0001.csv.tmp.AAAAAA"; cp "$w/db/payload.csv" "$w/db/.Op0002.csv.tmp.AAAAAA"
  plant_v2 "$t" "$tb" "$bk"
  "$opdb" validate --repair --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] && grep -q 'invalid journal' "$w/err" || bad "journal entry [$entry]: exit $rc: $(head -c 300 "$w/err")"
  check_untouched "[$entry]"
  cmp -s "$w/db/Op0001.csv" "$w/old/Op0001.csv" || bad "journal entry [$entry]: Op0001.csv was replaced"
done
# --repair --discard-journal deletes an invalid journal (renaming nothing), then repairs as usual
fresh; plant_v1
"$opdb" validate --repair --discard-journal --database-path "$w/db" >"$w/out" 2>"$w/err"
[ -f "$w/db/.opdb-journal" ] && bad "--discard-journal left the invalid journal"
grep -q "the user's own file" "$w/home/victim.txt" || bad "--discard-journal replaced a file outside"
grep -q 'discarded' "$w/err" || bad "--discard-journal does not say what it did: $(head -c 300 "$w/err")"
# a journal that is a FIFO or a link is refused without blocking
fresh; mkfifo "$w/db/.opdb-journal"
timeout 20 "$opdb" validate --repair --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
[ $rc = 1 ] && grep -q 'invalid journal' "$w/err" || bad "a FIFO journal: exit $rc $(head -c 300 "$w/err")"
echo "planted-journal trials: $planted"

# --- 2. commits that cannot complete --------------------------------------------------------
for kind in directory immutable; do
  rm -rf "$w/db"; cp -R "$w/old" "$w/db"
  if [ $kind = directory ]; then
    rm "$w/db/Op0030.csv"; mkdir "$w/db/Op0030.csv"
  else
    chattr +i "$w/db/Op0030.csv" 2>/dev/null || { echo "immutable trial: skipped (chattr +i not supported here)"; continue; }
  fi
  S0=$(state "$w/db")
  OPDB_TEST_COMMIT_PAUSE_US=1000 "$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] || bad "$kind table: exit $rc (want 1)"
  grep -q 'Op0030.csv' "$w/err" || bad "$kind table: the error does not name it: $(head -c 300 "$w/err")"
  [ "$(state "$w/db")" = "$S0" ] || bad "$kind table: the database changed (a mix of old and new)"
  [ -z "$(ls -A "$w/db" | grep -e '^\.opdb-journal' -e '\.tmp\.' -e '\.old\.')" ] || bad "$kind table: left $(ls -A "$w/db" | grep '^\.' | head -3)"
  chattr -i "$w/db/Op0030.csv" 2>/dev/null
done

# --- 3. killed commits ----------------------------------------------------------------------
# kill -9 while the tables are being replaced (a slow commit); returns once killed mid-commit
kill_mid_commit() {
  rm -rf "$w/db"; cp -R "$w/old" "$w/db"
  OPDB_TEST_COMMIT_PAUSE_US=100000 "$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >/dev/null 2>&1 & p=$!
  k=0
  while [ $k -lt 600 ] && ! [ -f "$w/db/.opdb-journal" ]; do sleep 0.05; k=$((k + 1)); done
  sleep 0.3
  kill -9 $p 2>/dev/null; wait $p 2>/dev/null
  [ -f "$w/db/.opdb-journal" ] || { bad "could not kill a parse mid-commit"; return 1; }
}
if kill_mid_commit; then
  "$opdb" validate --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] && grep -q 'unfinished run' "$w/out" || bad "validate on a killed commit: exit $rc $(head -c 300 "$w/out")"
  "$opdb" validate --repair --database-path "$w/db" >/dev/null 2>"$w/err" || bad "repair of a killed commit: $(head -c 300 "$w/err")"
  [ "$(state "$w/db")" = "$(state "$w/ref_new")" ] || bad "repair of a killed commit: not the new database"
fi
if kill_mid_commit; then
  # a table still to be replaced becomes a directory: the journal cannot be completed
  t=$(ls -A "$w/db" | grep '^\..*\.tmp\.' | head -1 | sed 's/^\.\(.*\)\.tmp\.......$/\1/')
  rm -f "$w/db/$t"; mkdir "$w/db/$t"
  "$opdb" validate --database-path "$w/db" >"$w/out" 2>"$w/err"; rc=$?
  [ $rc = 1 ] && grep -q 'cannot be completed' "$w/out" || bad "validate on an impossible journal: exit $rc $(head -c 300 "$w/out")"
  "$opdb" validate --repair --database-path "$w/db" >/dev/null 2>"$w/err"
  grep -q 'rolled back' "$w/err" || bad "repair of an impossible journal: $(head -c 300 "$w/err")"
  rmdir "$w/db/$t"; cp "$w/old/$t" "$w/db/$t"
  [ "$(state "$w/db")" = "$(state "$w/old")" ] || bad "repair of an impossible journal: not rolled back to the old database"
fi
[ $fail = 0 ] && echo "journal safety: ok"
exit $fail
