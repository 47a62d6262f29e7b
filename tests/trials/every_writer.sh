#!/bin/sh
# every_writer.sh OPDB SRC [bench|no-bench|all]: kill and concurrency trials over every database
# writer of tests/trials/writers.sh (the list tests/writers_locked.sh checks against `opdb --help`).
# `bench` tries only the pairs with bench in them (a test whose name keeps it out of the
# ThreadSanitizer run), `no-bench` all the others, `all` (default) both.
#  1. Kill: each writer is killed (SIGKILL, SIGINT or SIGTERM) at random moments of a run, or (half
#     of the kills) in its commit, slowed by OPDB_TEST_COMMIT_PAUSE_US, once its journal is written
#     (a writer of one table has none: at a random moment); after the next `validate --repair`
#     the folder must equal the old or the new database exactly, with no temp file or journal left.
#     (validate --repair itself starts from a run killed with its journal written: the next repair
#     must complete it.)
#  2. Same writer, N at once: N writers of one kind (each with an input of its own) on one folder
#     all exit 0, and the folder holds every writer's rows: exactly the result of the N runs one
#     after the other (rows compared as sets per table: the order of appended rows follows the
#     order the writers took the lock).
#  3. Pairs: every two writers at once, on one folder and on a parent and its nested child folder:
#     the folder and both exit statuses are exactly those of one of the two orders run one after
#     the other.
#  4. Mid-commit: each writer started while a parse --merge is half way through its renames must
#     wait and read the folder after them: exactly "parse --merge, then the writer".
# Counts (environment, for long manual runs): OPDB_TRIAL_KILLS kills per writer (default 3),
# OPDB_TRIAL_WRITERS concurrent writers of one kind (default 8, at most 8), OPDB_TRIAL_PAIRS rounds
# of the pair trials (default 1). Prints one count line per writer and kind of trial.
set -u
opdb=$1
src=$2
which=${3:-all}
kills=${OPDB_TRIAL_KILLS:-3}
nconc=${OPDB_TRIAL_WRITERS:-8}
[ "$nconc" -le 8 ] || nconc=8
rounds=${OPDB_TRIAL_PAIRS:-1}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
export OPDB_REPORT_TIMESTAMP=20260101_000000
fail=0
bad() { echo "FAIL: $*"; fail=1; }
. "$src/tests/trials/writers.sh"
writers_fixture || exit 1

# Every writer of the one list is tried here; a command opdb lists that nobody classified fails.
all_writers="$writers $writer_modes"
missing=$(writers_unclassified)
[ -z "$missing" ] || bad "commands not classified as writer or read-only in tests/trials/writers.sh: $missing"
case $which in
  bench) trial_writers=bench ;;
  no-bench) trial_writers=$(echo " $all_writers " | sed 's/ bench / /') ;;
  *) trial_writers=$all_writers ;;
esac
for c in $all_writers; do writer_known "$c" || bad "writer '$c' has no trial (run_writer does not know it)"; done

# exact picture of a folder: every file (hidden ones too) and its checksum
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
# the same with each file's lines after the first as a sorted set (the order of appended rows
# follows the lock order); BENCH=1: measured values (MicroBench columns, Average Duration) as '#',
# reports and check's calibration by name only (they hold or derive from timings), bench's resume
# journal (.opdb_bench/, kept by a killed bench for --resume, not a table) left out. The merged
# median (count-weighted, rounded to 6 decimals at each merge) is compared to 4 decimals: its last
# digit depends on the merge order.
rows_state() { # rows_state DIR BENCH
  (cd "$1" && find . -type f | LC_ALL=C sort | while IFS= read -r f; do
    case $2,$f in 1,*/reports/*|1,*/opdb-calibration.tsv) echo "$f"; continue ;; 1,*/.opdb_bench/*) continue ;; esac
    case $f in
      *.csv) awk -v b="$2" -f "$w/norm.awk" "$f" | { IFS= read -r h; echo "$h"; LC_ALL=C sort; } | cksum | sed "s|^|$f |" ;;
      *) { IFS= read -r h; echo "$h"; LC_ALL=C sort; } <"$f" | cksum | sed "s|^|$f |" ;;
    esac
  done)
}
cat >"$w/norm.awk" <<'EOF'
# split a CSV record (quotes aware; records span no lines here) into c[1..n]
function split_csv(s,   n, i, ch, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(s); i++) {
    ch = substr(s, i, 1)
    if (ch == "\"") q = !q
    if (ch == "," && !q) { c[++n] = cur; cur = "" } else cur = cur ch
  }
  c[++n] = cur
  return n
}
{ sub(/\r$/, "") }
NR == 1 { n = split_csv($0)
  for (i = 1; i <= n; i++) { m[i] = b == 1 && (c[i] ~ /^MicroBench / || c[i] == "Average Duration(us)"); med[i] = c[i] == "Profiling Median Duration(us)" }
  print; next }
{ n = split_csv($0); out = ""
  for (i = 1; i <= n; i++) {
    v = c[i]
    if (m[i] && v != "") v = "#"
    else if (med[i] && v ~ /^[0-9.]+$/) v = sprintf("%.4f", v)
    out = out (i > 1 ? "," : "") v
  }
  print out }
EOF
leftovers() { find "$1" -name '.*.tmp.*' -o -name '.opdb-journal*' -o -name '.*.old.*' | head -1; }
seed=31
rnd() { seed=$(( (seed * 1103515245 + 12345) % 2147483648 )); r=$(( (seed / 65536) % $1 )); } # sets r
ms() { awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
isbench() { case " $* " in *" bench "*) echo 1 ;; *) echo 0 ;; esac; }

# validate --repair starts from a run killed after its journal was written (and a stale temp file)
cp -R "$w/base" "$w/base_validate"
: >"$w/base_validate/.Add.csv.tmp.AbC123"
(OPDB_TEST_COMMIT_PAUSE_US=400000 writer_exec=exec run_writer parse "$w/base_validate" 1 >/dev/null 2>&1) & p=$!
k=0; while [ $k -lt 600 ] && [ ! -f "$w/base_validate/.opdb-journal" ]; do sleep 0.01; k=$((k + 1)); done
sleep 0.05; kill -KILL $p 2>/dev/null; wait $p 2>/dev/null
[ -f "$w/base_validate/.opdb-journal" ] || bad "could not make a database with a waiting journal"
base_of() { if [ "$1" = validate ]; then echo "$w/base_validate"; else echo "$w/base"; fi; }

# start-up time: a signal before opdb installs its handlers ends it silently
t0=$(now_ms); "$opdb" --version >/dev/null; "$opdb" --version >/dev/null
startup=$(( ($(now_ms) - t0) * 2 + 20 ))

# --- 1. kill trials ----------------------------------------------------------------------------
kill_total=0
for c in $trial_writers; do
  [ "$kills" -gt 0 ] || break
  b=$(isbench $c); base=$(base_of $c)
  st() { if [ $b = 1 ]; then rows_state "$1" 1; else state "$1"; fi; }
  rm -rf "$w/new"; cp -R "$base" "$w/new"
  t0=$(now_ms)
  OPDB_TEST_COMMIT_PAUSE_US=3000 run_writer $c "$w/new" 1 >/dev/null 2>"$w/err" || { bad "$c: the uninterrupted run failed: $(head -c 300 "$w/err")"; continue; }
  span=$(( ($(now_ms) - t0) * 13 / 10 + 1 ))
  [ $c = validate ] || "$opdb" validate --repair --database-path "$w/new" >/dev/null 2>&1
  S_new=$(st "$w/new"); S_old=$(st "$base")
  [ "$S_new" != "$S_old" ] || { bad "$c: the run changes nothing"; continue; }
  [ $c = validate ] && S_old=$S_new # a repair after the kill must finish the waiting run
  old_n=0; new_n=0; commit_n=0; i=0
  while [ $i -lt "$kills" ]; do
    i=$((i + 1)); kill_total=$((kill_total + 1))
    rnd 3; case $r in 0) sig=KILL ;; 1) sig=INT ;; *) sig=TERM ;; esac
    rnd 2; in_commit=$r
    rm -rf "$w/db"; cp -R "$base" "$w/db"
    if [ $in_commit = 1 ]; then
      # in the commit: 20 ms between renames, the signal 0..59 ms after the journal is written
      # (a writer of one table writes no journal: at a random moment)
      pause=20000; rnd $span; limit=$r
      (OPDB_TEST_COMMIT_PAUSE_US=$pause writer_exec=exec run_writer $c "$w/db" 1 >/dev/null 2>"$w/err") & p=$!
      t0=$(now_ms)
      while [ ! -f "$w/db/.opdb-journal" ] && [ $(($(now_ms) - t0)) -lt $limit ]; do sleep 0.002; done
      if [ -f "$w/db/.opdb-journal" ]; then commit_n=$((commit_n + 1)); rnd 60; sleep "$(ms $r)"; fi
      at=$(( $(now_ms) - t0 ))
    else
      rnd 2; pause=0; [ $r = 1 ] && pause=3000
      rnd $span; at=$r
      (OPDB_TEST_COMMIT_PAUSE_US=$pause writer_exec=exec run_writer $c "$w/db" 1 >/dev/null 2>"$w/err") & p=$!
      sleep "$(ms $at)"
    fi
    kill -s $sig $p 2>/dev/null; wait $p 2>/dev/null; rc=$?
    if [ $sig != KILL ] && [ $rc -gt 128 ] && [ $at -ge $startup ] && ! grep -q 'interrupted' "$w/err"; then
      bad "$c SIG$sig at ${at}ms: no message on stderr"
    fi
    "$opdb" validate --repair --database-path "$w/db" >/dev/null 2>"$w/errv"
    S=$(st "$w/db")
    if [ "$S" = "$S_old" ] && [ $c != validate ]; then old_n=$((old_n + 1))
    elif [ "$S" = "$S_new" ]; then new_n=$((new_n + 1))
    else bad "$c SIG$sig at ${at}ms (commit pause $pause us): the folder is neither wholly old nor wholly new"; fi
    [ -z "$(leftovers "$w/db")" ] || bad "$c SIG$sig at ${at}ms: $(leftovers "$w/db") left after validate --repair"
  done
  echo "kill trials, $c: $kills (moments in 0..${span} ms; $commit_n after its journal was written): $old_n wholly old, $new_n wholly new"
done

# --- 2. N writers of one kind at once ------------------------------------------------------------
for c in $trial_writers; do
  [ "$nconc" -gt 1 ] || break
  b=$(isbench $c); base=$(base_of $c)
  rm -rf "$w/ref"; cp -R "$base" "$w/ref"
  v=1; while [ $v -le "$nconc" ]; do run_writer $c "$w/ref" $v >/dev/null 2>&1 || bad "$c: serial run $v failed"; v=$((v + 1)); done
  rm -rf "$w/db"; cp -R "$base" "$w/db"
  v=1; pids=
  while [ $v -le "$nconc" ]; do
    (run_writer $c "$w/db" $v >/dev/null 2>"$w/err$v"; echo $? >"$w/rc$v") &
    pids="$pids $!"; v=$((v + 1))
  done
  wait $pids
  v=1; ok=0; done_msgs=0
  while [ $v -le "$nconc" ]; do
    rc=$(cat "$w/rc$v"); [ "$rc" = 0 ] && ok=$((ok + 1)) || bad "$c: concurrent writer $v exit $rc: $(head -c 300 "$w/err$v")"
    grep -q 'completed an interrupted run' "$w/err$v" && done_msgs=$((done_msgs + 1))
    v=$((v + 1))
  done
  [ $c = validate ] && [ $done_msgs != 1 ] && bad "validate: $done_msgs of $nconc concurrent repairs say they completed the interrupted run (1 should)"
  if [ "$(rows_state "$w/db" $b)" = "$(rows_state "$w/ref" $b)" ]; then same=yes
  else same=no; bad "$c: $nconc writers at once: the folder is not the result of the $nconc runs one after the other (a write lost)"; fi
  [ -z "$(leftovers "$w/db")" ] || bad "$c: $(leftovers "$w/db") left after $nconc concurrent writers"
  echo "concurrent trials, $c: $nconc at once, $ok exited 0, every write present: $same"
done

# --- 3. pairs, on one folder and nested ---------------------------------------------------------
# pair (A, B): A runs input 1, B input 2; nested: A on the parent, B on its child (or the other way)
mkdir -p "$w/after" "$w/nbase"
rm -rf "$w/nbase"; cp -R "$w/base" "$w/nbase"; cp -R "$w/base" "$w/nbase/child"
pair_trial() { # pair_trial A B DB_A DB_B LABEL: DB_* relative to the trial folder; base in $w/pbase
  rm -rf "$w/db"; cp -R "$w/pbase" "$w/db"
  rnd 2; rnd 40; delay=$r
  if [ $r -lt 20 ]; then first=A; else first=B; fi
  if [ $first = A ]; then
    (run_writer $1 "$w/db$3" 1 >/dev/null 2>"$w/errA"; echo $? >"$w/rcA") & pa=$!
    sleep "$(ms $delay)"
    (run_writer $2 "$w/db$4" 2 >/dev/null 2>"$w/errB"; echo $? >"$w/rcB") & pb=$!
  else
    (run_writer $2 "$w/db$4" 2 >/dev/null 2>"$w/errB"; echo $? >"$w/rcB") & pb=$!
    sleep "$(ms $((delay - 20)))"
    (run_writer $1 "$w/db$3" 1 >/dev/null 2>"$w/errA"; echo $? >"$w/rcA") & pa=$!
  fi
  wait $pa $pb
  rcA=$(cat "$w/rcA"); rcB=$(cat "$w/rcB")
  bm=$(isbench $1 $2)
  S=$(rows_state "$w/db" $bm)
  # the two orders one after the other (computed when needed): the same folder and the same exit
  # statuses (validate exits 1 when the other writer left a table it reports as an error)
  for order in AB BA; do
    rm -rf "$w/ref"; cp -R "$w/pbase" "$w/ref"
    if [ $order = AB ]; then
      run_writer $1 "$w/ref$3" 1 >/dev/null 2>&1; r1=$?; run_writer $2 "$w/ref$4" 2 >/dev/null 2>&1; r2=$?
    else
      run_writer $2 "$w/ref$4" 2 >/dev/null 2>&1; r2=$?; run_writer $1 "$w/ref$3" 1 >/dev/null 2>&1; r1=$?
    fi
    [ "$S" = "$(rows_state "$w/ref" $bm)" ] && [ "$rcA,$rcB" = "$r1,$r2" ] && { matched=$order; return 0; }
  done
  [ "$rcA" = 0 ] || echo "$5: $1 exit $rcA: $(head -c 300 "$w/errA")"
  [ "$rcB" = 0 ] || echo "$5: $2 exit $rcB: $(head -c 300 "$w/errB")"
  bad "$5: the folder or the exit statuses are neither $1 then $2 nor $2 then $1 (started ${delay} ms apart, $first first)"
  matched=none
}
pairs=0; pairs_ok=0
ia=0
for a in $all_writers; do
  ia=$((ia + 1)); ib=0
  for b in $all_writers; do
    # each unordered pair once, in the list's order; bench pairs only in the bench run
    ib=$((ib + 1)); [ $ib -gt $ia ] || continue
    case $which,$(isbench $a $b) in bench,0|no-bench,1) continue ;; esac
    j=0
    while [ $j -lt "$rounds" ]; do
      j=$((j + 1))
      for nest in same nested; do
        pairs=$((pairs + 1)); [ -n "${OPDB_TRIAL_VERBOSE:-}" ] && echo "pair $pairs: $a + $b ($nest)"
        if [ $nest = same ]; then
          rm -rf "$w/pbase"; cp -R "$w/base" "$w/pbase"
          # validate --repair with work to do: a stale temp file (every writer removes it)
          : >"$w/pbase/.Add.csv.tmp.AbC123"
          pair_trial $a $b "" "" "$a + $b, one folder"
        else
          rm -rf "$w/pbase"; cp -R "$w/nbase" "$w/pbase"
          : >"$w/pbase/child/.Add.csv.tmp.AbC123"
          if [ $((pairs % 4)) = 0 ]; then pair_trial $a $b "" /child "$a on a parent + $b on its child"
          else pair_trial $a $b /child "" "$a on a child + $b on its parent"; fi
        fi
        [ $matched != none ] && pairs_ok=$((pairs_ok + 1))
      done
    done
  done
done
echo "pair trials: $pairs (one folder and nested), $pairs_ok exactly one order of the two"

# --- 4. each writer started in the middle of another's commit ---------------------------------
# parse --merge commits slowly (OPDB_TEST_COMMIT_PAUSE_US between its renames); each writer starts
# once its journal is written, while some tables are replaced and others not yet: it must wait for
# the lock and read the tables after the commit (never the half-replaced folder), so the result is
# exactly "parse --merge, then that writer".
mid=0; mid_ok=0
for c in $trial_writers; do
  b=$(isbench $c); mid=$((mid + 1))
  rm -rf "$w/ref"; cp -R "$w/base" "$w/ref"
  run_writer parse-merge "$w/ref" 1 >/dev/null 2>&1; r1=$?; run_writer $c "$w/ref" 2 >/dev/null 2>&1; r2=$?
  rm -rf "$w/db"; cp -R "$w/base" "$w/db"
  (OPDB_TEST_COMMIT_PAUSE_US=60000 run_writer parse-merge "$w/db" 1 >/dev/null 2>"$w/errA"; echo $? >"$w/rcA") & pa=$!
  k=0; while [ $k -lt 1000 ] && [ ! -f "$w/db/.opdb-journal" ]; do sleep 0.005; k=$((k + 1)); done
  [ -f "$w/db/.opdb-journal" ] || bad "$c mid-commit: parse --merge wrote no journal"
  run_writer $c "$w/db" 2 >/dev/null 2>"$w/errB"; rcB=$?
  wait $pa; rcA=$(cat "$w/rcA")
  if [ "$(rows_state "$w/db" $b)" = "$(rows_state "$w/ref" $b)" ] && [ "$rcA,$rcB" = "$r1,$r2" ]; then mid_ok=$((mid_ok + 1))
  else bad "$c started in the middle of a parse --merge commit: not exactly parse --merge then $c (exit $rcA, $rcB; serial $r1, $r2): $(grep -v warning "$w/errB" | head -c 300)"; fi
done
echo "mid-commit trials: $mid, $mid_ok exactly parse --merge then the writer"
[ $fail = 0 ] && echo "every-writer trials: ok"
exit $fail
