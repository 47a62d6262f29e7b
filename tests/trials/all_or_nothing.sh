#!/bin/sh
# all_or_nothing.sh OPDB [N [FAILIO_SO [quick]]]: reliability trials (not timed).
# `quick` (the sanitizer builds): 4 failing-call positions per kind instead of 9, 5 concurrent edits.
# Over a generated database, N runs of `parse` and N of `update` are killed
# (SIGKILL, SIGINT or SIGTERM) at random moments, part of them while the
# files are being replaced (OPDB_TEST_COMMIT_PAUSE_US slows the commit);
# after the next opdb (`validate --repair`) the folder must equal the old or
# the new database as a whole, with no temp file or journal left.  Then
# disk-full runs (a file-size limit, a small tmpfs when mount works, and the
# OPDB_TEST_FAIL_WRITE_AFTER seam at every write) must leave the old
# database; with the LD_PRELOAD shim failio.so the Nth write, rename or fsync
# fails and the folder must be wholly old or wholly new after the next opdb; a table changed by another program during an update stops the
# run with nothing changed; a symlinked table is written through its link.
# Prints one count line per kind of trial. (Kill and concurrency trials of every other writer:
# tests/trials/every_writer.sh.)
set -u
opdb=$1
n=${2:-20}
shim=${3:-}   # tests/trials/failio.so (built by CMake): the LD_PRELOAD failing-call trials
quick=${4:-}
w=$(mktemp -d)
trap 'umount "$w/tmpfs" 2>/dev/null; rm -rf "$w"' EXIT
export OPDB_REPORT_TIMESTAMP=20260101_000000
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# kernel_details with 300 operator types (3 shapes each); SCALE changes durations
kd() {
  awk -v s="$2" 'BEGIN { print "Type,Input Shapes,Output Shapes,Duration(us)"; for (t = 0; t < 300; t++) for (r = 0; r < 3; r++)
    printf "Op%04d,\"\"\"%d,%d\"\"\",\"\"\"%d\"\"\",%d.5\n", t, t, r, t, (t + r) * s + 1 }' >"$1"
}
# op_summary rows for 40 of those operator types (+ 5 new ones for --add-new-ops)
prof() {
  mkdir -p "$1/PROF_000001_x/mindstudio_profiler_output"
  awk -v s="$2" 'BEGIN {
    print "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)"
    for (t = 0; t < 45; t++) for (r = 0; r < 40; r++)
      printf "0,1,%d,1,k,%s%04d,dynamic,AI_CORE,1.0,%d.5,0,8,0,NO,\"\"\"%d,%d\"\"\",DT_BF16,ND,\"\"\"%d\"\"\",DT_BF16,ND,0,1.0\n",
        r, (t < 40 ? "Op" : "New"), t * 7, (t + r) * s + 2, t * 7, r, t * 7 }' \
    >"$1/PROF_000001_x/mindstudio_profiler_output/op_summary_1.csv"
}
# a stable text picture of a folder: every file (hidden ones too) and its checksum
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
leftovers() { find "$1" -name '.*.tmp.*' -o -name '.opdb-journal*' | head -1; }

kd "$w/kd_old.csv" 1
kd "$w/kd_new.csv" 3
prof "$w/prof" 5
"$opdb" parse --profiling-path "$w/kd_old.csv" --database-path "$w/old" >/dev/null || exit 1
cp -R "$w/old" "$w/parse_new"
"$opdb" parse --profiling-path "$w/kd_new.csv" --database-path "$w/parse_new" >/dev/null || exit 1
cp -R "$w/old" "$w/update_new"
"$opdb" update --add-new-ops --prof-path "$w/prof" --database-path "$w/update_new" >/dev/null || exit 1
S_old=$(state "$w/old"); S_parse=$(state "$w/parse_new"); S_update=$(state "$w/update_new")
[ "$S_old" != "$S_parse" ] && [ "$S_old" != "$S_update" ] || { echo "FAIL: the runs change nothing"; exit 1; }

# Random moments: a deterministic LCG (no timing in the assertions, only in where the kills land)
seed=17
# kills land anywhere in [0, 1.3 x) the time a whole run takes here (so some after the commit)
t0=$(date +%s%N)
cp -R "$w/old" "$w/probe"; OPDB_TEST_COMMIT_PAUSE_US=3000 "$opdb" parse --profiling-path "$w/kd_new.csv" --database-path "$w/probe" >/dev/null 2>&1
span=$(( ($(date +%s%N) - t0) / 1000000 * 13 / 10 + 1 ))
rm -rf "$w/probe"
# opdb installs its signal handlers when main() starts; a signal before that (slow start-up under a
# sanitizer or a loaded host) ends it silently, before anything was written: measure that start-up.
t0=$(date +%s%N); "$opdb" --version >/dev/null; "$opdb" --version >/dev/null
startup=$(( ($(date +%s%N) - t0) / 1000000 * 2 + 20 ))
rnd() { seed=$(( (seed * 1103515245 + 12345) % 2147483648 )); r=$(( (seed / 65536) % $1 )); } # sets r
old_n=0; new_n=0; trials=0
for cmd in parse update; do
  i=0
  while [ $i -lt "$n" ]; do
    i=$((i + 1)); trials=$((trials + 1))
    rnd 3; case $r in 0) sig=KILL ;; 1) sig=INT ;; *) sig=TERM ;; esac
    rnd 2; pause=0; [ $r = 1 ] && pause=3000
    rnd $span; ms=$r
    rm -rf "$w/db"; cp -R "$w/old" "$w/db"
    if [ $cmd = parse ]; then
      OPDB_TEST_COMMIT_PAUSE_US=$pause "$opdb" parse --profiling-path "$w/kd_new.csv" --database-path "$w/db" >/dev/null 2>"$w/err" & p=$!
      S_new=$S_parse
    else
      OPDB_TEST_COMMIT_PAUSE_US=$pause "$opdb" update --add-new-ops --prof-path "$w/prof" --database-path "$w/db" >/dev/null 2>"$w/err" & p=$!
      S_new=$S_update
    fi
    sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')"
    kill -s $sig $p 2>/dev/null; wait $p 2>/dev/null; rc=$?
    # (a signal before opdb installs its handlers ends it silently: nothing was written)
    if [ $sig != KILL ] && [ $rc -gt 128 ] && [ $ms -ge $startup ] && ! grep -q 'interrupted' "$w/err"; then
      bad "$cmd SIG$sig at ${ms}ms: no message on stderr"
    fi
    "$opdb" validate --repair --database-path "$w/db" >/dev/null 2>&1
    S=$(state "$w/db")
    if [ "$S" = "$S_old" ]; then old_n=$((old_n + 1))
    elif [ "$S" = "$S_new" ]; then new_n=$((new_n + 1))
    else bad "$cmd SIG$sig at ${ms}ms (commit pause $pause us): the folder is a mix of old and new"; fi
    [ -z "$(leftovers "$w/db")" ] || bad "$cmd SIG$sig at ${ms}ms: $(leftovers "$w/db") left after validate --repair"
  done
done
echo "kill trials: $trials (kill moments in 0..${span} ms) (parse $n, update $n): $old_n wholly old, $new_n wholly new, $((trials - old_n - new_n)) mixed"

# Disk full: every write position failed through the seam, then real EFBIG.
full=0; full_ok=0
for cmd in parse update; do
  k=0
  while [ $k -le 6 ]; do
    rm -rf "$w/db"; cp -R "$w/old" "$w/db"; full=$((full + 1))
    if [ $cmd = parse ]; then
      OPDB_TEST_FAIL_WRITE_AFTER=$((k * 40)) "$opdb" parse --profiling-path "$w/kd_new.csv" --database-path "$w/db" >/dev/null 2>"$w/err"
    else
      OPDB_TEST_FAIL_WRITE_AFTER=$((k * 7)) "$opdb" update --add-new-ops --prof-path "$w/prof" --database-path "$w/db" >/dev/null 2>"$w/err"
    fi
    rc=$?
    if [ $rc = 1 ] && grep -q 'No space left' "$w/err" && [ "$(state "$w/db")" = "$S_old" ]; then full_ok=$((full_ok + 1))
    else bad "$cmd failing write $k: rc $rc, $(head -c 200 "$w/err"), database changed or temp files left"; fi
    k=$((k + 1))
  done
done
# A real write error: a file-size limit the largest new table exceeds (SIGXFSZ ignored, so write fails with EFBIG).
rm -rf "$w/db"; cp -R "$w/old" "$w/db"; full=$((full + 1))
(trap '' XFSZ; ulimit -f 1; exec "$opdb" update --add-new-ops --prof-path "$w/prof" --database-path "$w/db") >/dev/null 2>"$w/err"
rc=$?
if [ $rc = 1 ] && [ "$(state "$w/db")" = "$S_old" ]; then full_ok=$((full_ok + 1)); else bad "update under a file-size limit: rc $rc $(head -c 200 "$w/err")"; fi
# A small tmpfs (needs root): the parse runs out of space part way.
mkdir -p "$w/tmpfs"
if mount -t tmpfs -o size=200k tmpfs "$w/tmpfs" 2>/dev/null; then
  cp -R "$w/old" "$w/tmpfs/db" 2>/dev/null
  S_small=$(state "$w/tmpfs/db")
  # fill the rest so that the new tables cannot all be staged
  dd if=/dev/zero of="$w/tmpfs/fill" bs=1k count=200 2>/dev/null
  rm -f "$w/tmpfs/fill"; dd if=/dev/zero of="$w/tmpfs/fill" bs=1k count=$(( $(df -k "$w/tmpfs" | awk 'NR==2 { print $4 }') - 20 )) 2>/dev/null
  full=$((full + 1))
  "$opdb" parse --profiling-path "$w/kd_new.csv" --database-path "$w/tmpfs/db" >/dev/null 2>"$w/err"; rc=$?
  if [ $rc = 1 ] && [ "$(state "$w/tmpfs/db")" = "$S_small" ]; then full_ok=$((full_ok + 1)); else bad "parse on a full tmpfs: rc $rc $(head -c 200 "$w/err")"; fi
  umount "$w/tmpfs"
  tmpfs=yes
else
  tmpfs="no (mount not permitted)"
fi
echo "disk-full trials: $full, $full_ok left the old database whole (tmpfs: $tmpfs)"

# LD_PRELOAD shim (tests/trials/failio.c, no seam inside opdb): the Nth write, rename or fsync
# on a file of the database fails (ENOSPC / EIO). N spreads over the calls a whole run makes
# (counted first): the first ones, quarters, the last ones, one past the end (nothing fails).
# The run must fail with one error line (exit 1) or succeed, and after the next opdb
# (`validate --repair`) the folder is wholly old or wholly new, nothing left behind.
if [ -n "$shim" ]; then
  pre=0; pre_old=0; pre_new=0; pre_failed=0
  # ASan wants its runtime first in the library list; the shim only wraps libc calls
  asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
  run_shim() { # run_shim CMD OP N: one run on a fresh copy of the old database
    rm -rf "$w/db"; cp -R "$w/old" "$w/db"
    if [ "$1" = parse ]; then set -- "$2" "$3" parse --profiling-path "$w/kd_new.csv" --database-path "$w/db"
    else set -- "$2" "$3" update --add-new-ops --prof-path "$w/prof" --database-path "$w/db"; fi
    op=$1 k=$2; shift 2
    ASAN_OPTIONS=$asan FAILIO_DIR="$w/db" FAILIO_OP=$op FAILIO_N=$k FAILIO_COUNT="$w/count" LD_PRELOAD="$shim" \
      "$opdb" "$@" >/dev/null 2>"$w/err"
  }
  for cmd in parse update; do
    for op in write rename fsync; do
      run_shim $cmd $op 0 || { bad "$cmd with the shim counting ${op}s failed: $(head -c 200 "$w/err")"; continue; }
      total=$(cat "$w/count")
      [ "$total" -gt 0 ] || { bad "$cmd: the shim saw no $op on the database (not preloaded?)"; continue; }
      rnd "$total"
      positions="1 2 $((total / 4 + 1)) $((total / 2 + 1)) $((r + 1)) $((total * 3 / 4 + 1)) $((total - 1)) $total $((total + 1))"
      [ "$quick" = quick ] && positions="1 $((r + 1)) $total $((total + 1))"
      for k in $positions; do
        [ "$k" -ge 1 ] || continue
        pre=$((pre + 1))
        run_shim $cmd $op "$k"; rc=$?
        if [ $rc = 1 ]; then
          pre_failed=$((pre_failed + 1))
          [ "$(grep -c . "$w/err")" -ge 1 ] && grep -q -e 'No space left' -e 'Input/output error' "$w/err" ||
            bad "$cmd, $op #$k of $total failing: the error does not say why: $(head -c 200 "$w/err")"
          grep -v '^opdb\( [a-z-]*\)\?: warning' "$w/err" | grep -q -v 'No space left\|Input/output error\|interrupted' &&
            bad "$cmd, $op #$k of $total failing: more than the error line: $(head -c 300 "$w/err")"
        elif [ $rc != 0 ] || [ "$k" -le "$total" ]; then
          bad "$cmd, $op #$k of $total failing: exit $rc $(head -c 200 "$w/err")"
        fi
        "$opdb" validate --repair --database-path "$w/db" >/dev/null 2>&1
        S=$(state "$w/db"); S_new=$S_parse; [ $cmd = update ] && S_new=$S_update
        if [ "$S" = "$S_old" ]; then pre_old=$((pre_old + 1))
        elif [ "$S" = "$S_new" ]; then pre_new=$((pre_new + 1))
        else bad "$cmd, $op #$k of $total failing: the folder is a mix of old and new"; fi
        [ -z "$(leftovers "$w/db")" ] || bad "$cmd, $op #$k of $total failing: $(leftovers "$w/db") left after validate --repair"
      done
    done
  done
  echo "LD_PRELOAD failing-call trials: $pre ($pre_failed runs failed): $pre_old wholly old, $pre_new wholly new, $((pre - pre_old - pre_new)) mixed"
else
  echo "LD_PRELOAD failing-call trials: skipped (no shim given)"
fi

# Another program appends to a table while an update runs: the update stops, the append survives.
# (Op0007.csv made big, so that the append often lands while the update runs)
cp -R "$w/old" "$w/edit_base"
awk 'NR == 2 { for (i = 0; i < 40000; i++) print } { print }' "$w/old/Op0007.csv" >"$w/edit_base/Op0007.csv"
edits=0; edits_ok=0; edits_stopped=0
j=0
edit_runs=10; [ "$quick" = quick ] && edit_runs=5
while [ $j -lt $edit_runs ]; do
  j=$((j + 1)); edits=$((edits + 1))
  rm -rf "$w/db"; cp -R "$w/edit_base" "$w/db"
  "$opdb" update --prof-path "$w/prof" --database-path "$w/db" >/dev/null 2>"$w/err" & p=$!
  rnd 300; sleep "$(awk -v m="$r" 'BEGIN { printf "%.3f", m / 1000 }')"
  printf 'dynamic,AI_CORE,"""9,9""",DT_BF16,ND,"""9""",DT_BF16,ND,1.0\r\n' >>"$w/db/Op0007.csv"
  wait $p; rc=$?
  if grep -q '"""9,9"""' "$w/db/Op0007.csv"; then
    grep -q 'changed by another program' "$w/err" && edits_stopped=$((edits_stopped + 1))
    if [ $rc = 0 ] || grep -q 'changed by another program' "$w/err"; then edits_ok=$((edits_ok + 1)); else bad "concurrent edit: rc $rc $(head -c 200 "$w/err")"; fi
  else bad "concurrent edit $j: the appended row was lost (rc $rc)"; fi
done
echo "concurrent-edit trials: $edits, $edits_ok kept the other program's row ($edits_stopped stopped the update with nothing changed)"

# A symlinked table is updated through its link, and stays a link.
rm -rf "$w/db" "$w/elsewhere"; cp -R "$w/old" "$w/db"; mkdir "$w/elsewhere"
mv "$w/db/Op0007.csv" "$w/elsewhere/Op0007.csv"; ln -s ../elsewhere/Op0007.csv "$w/db/Op0007.csv"
"$opdb" update --prof-path "$w/prof" --database-path "$w/db" >/dev/null 2>"$w/err" || bad "update with a symlinked table: $(cat "$w/err")"
[ -L "$w/db/Op0007.csv" ] || bad "the symlinked table was replaced by a regular file"
cmp -s "$w/elsewhere/Op0007.csv" "$w/update_new/Op0007.csv" || bad "the link's target was not updated"
echo "symlink trials: 1"
[ $fail = 0 ] && echo "all-or-nothing trials: ok"
exit $fail
