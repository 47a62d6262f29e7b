#!/bin/sh
# nested.sh OPDB SRC [N [quick]]: one folder, one lock, one scope.  A database folder P holds another
# database P/child.  Real concurrent runs, N of each kind (quick: the sanitizer builds, fewer):
#  A. `validate --repair` on P while a `parse --merge` on P/child is committing (slowed by
#     OPDB_TEST_COMMIT_PAUSE_US): the parse succeeds and P/child is wholly its new version (the
#     repair never touches the child's staged files).
#  B. `update` on P/child while a `grid` on P (which reads P/child too) is committing: both succeed
#     and the tree is exactly "grid then update" or "update then grid" (grid takes P/child's own lock).
# Prints one count line per kind.
set -u
opdb=$1
src=$2
n=${3:-6}
[ "${4:-}" = quick ] && n=3
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
export OPDB_REPORT_TIMESTAMP=20260101_000000
fail=0
bad() { echo "FAIL: $*"; fail=1; }
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
top() { (cd "$1" && find . -path ./child -prune -o -type f -print | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; } # child aside
seed=27
rnd() { seed=$(( (seed * 1103515245 + 12345) % 2147483648 )); r=$(( (seed / 65536) % $1 )); } # sets r
ms() { awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }'; }

# --- A: validate --repair on the parent vs parse --merge on the child ----------------------------
kd() { # kd FILE SCALE: 120 operator types, so the child's commit renames many tables
  awk -v s="$2" 'BEGIN { print "Type,Input Shapes,Output Shapes,Duration(us)"; for (t = 0; t < 120; t++) for (r = 0; r < 3; r++)
    printf "Op%04d,\"\"\"%d,%d\"\"\",\"\"\"%d\"\"\",%d.5\n", t, t, r, t, (t + r) * s + 1 }' >"$1"
}
kd "$w/a.csv" 1
kd "$w/b.csv" 5
mkdir "$w/baseA"
"$opdb" parse --profiling-path "$w/a.csv" --database-path "$w/baseA" >/dev/null 2>&1 || exit 1
"$opdb" parse --profiling-path "$w/a.csv" --database-path "$w/baseA/child" >/dev/null 2>&1 || exit 1
cp -R "$w/baseA" "$w/refA"
"$opdb" parse --merge --profiling-path "$w/b.csv" --database-path "$w/refA/child" >/dev/null 2>&1 || exit 1
S_child_new=$(state "$w/refA/child"); S_parent=$(top "$w/baseA")
okA=0; i=0
while [ $i -lt "$n" ]; do
  i=$((i + 1))
  rm -rf "$w/P"; cp -R "$w/baseA" "$w/P"
  OPDB_TEST_COMMIT_PAUSE_US=3000 "$opdb" parse --merge --profiling-path "$w/b.csv" --database-path "$w/P/child" >/dev/null 2>"$w/errA" & p=$!
  # the repair lands while the child's files are staged or being renamed
  k=0; while [ $k -lt 400 ] && [ -z "$(ls -A "$w/P/child" | grep '\.tmp\.' | head -1)" ]; do sleep 0.01; k=$((k + 1)); done
  rnd 150; sleep "$(ms $r)"
  "$opdb" validate --repair --database-path "$w/P" >/dev/null 2>"$w/errR"; rrc=$?
  wait $p; prc=$?
  [ $prc = 0 ] || bad "A$i: the child's parse --merge failed (exit $prc): $(head -c 300 "$w/errA")"
  [ $rrc -le 1 ] && ! grep -q -e 'cannot' -e 'invalid' "$w/errR" || bad "A$i: the parent's repair: exit $rrc $(head -c 300 "$w/errR")"
  S=$(state "$w/P/child")
  if [ "$S" = "$S_child_new" ]; then okA=$((okA + 1)); else bad "A$i: the child is not wholly its new version (repair after ${r} ms)"; fi
  # the parent's own tables: untouched (the child folder aside)
  [ "$(top "$w/P")" = "$S_parent" ] || bad "A$i: the parent's tables changed"
done
echo "nested repair-vs-merge trials: $n, $okA left the child wholly new"

# --- B: update on the child vs grid on the parent -------------------------------------------------
mkdir "$w/baseB"
"$opdb" parse --profiling-path "$src/examples/profile" --database-path "$w/baseB" >/dev/null 2>&1 || exit 1
"$opdb" parse --profiling-path "$src/examples/profile" --database-path "$w/baseB/child" >/dev/null 2>&1 || exit 1
grid() { "$opdb" grid --database-path "$1" --target-models Qwen3-32B --rows 20 --seed 1 >/dev/null 2>"$2"; }
update() { "$opdb" update --add-new-ops --prof-path "$src/examples/update" --database-path "$1/child" >/dev/null 2>"$2"; }
cp -R "$w/baseB" "$w/gu"; grid "$w/gu" "$w/e1" && update "$w/gu" "$w/e2" || { cat "$w/e1" "$w/e2"; exit 1; }
cp -R "$w/baseB" "$w/ug"; update "$w/ug" "$w/e1" && grid "$w/ug" "$w/e2" || { cat "$w/e1" "$w/e2"; exit 1; }
S_gu=$(state "$w/gu"); S_ug=$(state "$w/ug")
[ "$S_gu" != "$(state "$w/baseB")" ] || { echo "FAIL: grid changes nothing here"; exit 1; }
okB=0; gu=0; ug=0; i=0
while [ $i -lt "$n" ]; do
  i=$((i + 1))
  rm -rf "$w/P"; cp -R "$w/baseB" "$w/P"
  rnd 2; first=$r; rnd 300
  if [ $first = 0 ]; then # grid first, the update lands in its commit
    OPDB_TEST_COMMIT_PAUSE_US=20000 "$opdb" grid --database-path "$w/P" --target-models Qwen3-32B --rows 20 --seed 1 >/dev/null 2>"$w/errG" & p=$!
    sleep "$(ms $r)"
    update "$w/P" "$w/errU"; urc=$?
    wait $p; grc=$?
  else # the update first (slowed), the grid starts while it runs
    (OPDB_TEST_COMMIT_PAUSE_US=20000; export OPDB_TEST_COMMIT_PAUSE_US; update "$w/P" "$w/errU") & p=$!
    sleep "$(ms $((r / 3)))"
    "$opdb" grid --database-path "$w/P" --target-models Qwen3-32B --rows 20 --seed 1 >/dev/null 2>"$w/errG"; grc=$?
    wait $p; urc=$?
  fi
  [ $grc = 0 ] || bad "B$i: the parent's grid failed (exit $grc): $(head -c 300 "$w/errG")"
  [ $urc = 0 ] || bad "B$i: the child's update failed (exit $urc): $(head -c 300 "$w/errU")"
  S=$(state "$w/P")
  if [ "$S" = "$S_gu" ]; then okB=$((okB + 1)); gu=$((gu + 1))
  elif [ "$S" = "$S_ug" ]; then okB=$((okB + 1)); ug=$((ug + 1))
  else bad "B$i: the tree is neither grid-then-update nor update-then-grid (update after ${r} ms)"; fi
done
echo "nested grid-vs-update trials: $n, $okB whole ($gu grid first, $ug update first)"
[ $fail = 0 ] && echo "nested trials: ok"
exit $fail
