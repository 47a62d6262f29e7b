#!/bin/sh
# safety.sh OPDB: a parse killed at any moment (SIGKILL or SIGINT) leaves every
# database file either its old or its new complete version, and two parses
# into one database at once both succeed (they serialise on the folder lock).
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
hdr='Type,Input Shapes,Output Shapes,Duration(us)'
gen() { # gen FILE SCALE: 400 operator types, so the write phase takes a while
  awk -v s="$2" -v h="$hdr" 'BEGIN { print h; for (t = 0; t < 400; t++) for (r = 0; r < 3; r++)
    printf "Op%04d,\"\"\"%d,%d\"\"\",\"\"\"%d\"\"\",%d.5\n", t, t, r, t, (t + r) * s }' >"$1"
}
gen "$w/old.csv" 1
gen "$w/new.csv" 7
"$opdb" parse --profiling-path "$w/old.csv" --database-path "$w/ref_old" >/dev/null || exit 1
"$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/ref_new" >/dev/null || exit 1
fail=0
for sig in KILL INT; do
  for delay in 0.01 0.03 0.08 0.15; do
    rm -rf "$w/db"
    cp -R "$w/ref_old" "$w/db"
    "$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -s "$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    for f in "$w"/ref_old/*.csv; do
      b=$(basename "$f")
      cmp -s "$w/db/$b" "$f" || cmp -s "$w/db/$b" "$w/ref_new/$b" ||
        { echo "FAIL: $b is neither old nor new after SIG$sig at ${delay}s"; fail=1; }
    done
    if [ "$sig" = INT ] && ls -a "$w/db" | grep -q '\.tmp\.'; then
      echo "FAIL: temp file left after SIGINT at ${delay}s"; fail=1
    fi
  done
done
# A later run cleans temp files a killed run left behind.
rm -rf "$w/db"; cp -R "$w/ref_old" "$w/db"; : >"$w/db/.Op0001.csv.tmp.AbC123"
"$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >/dev/null || fail=1
ls -a "$w/db" | grep -q '\.tmp\.' && { echo "FAIL: stale temp file not removed"; fail=1; }
diff -r "$w/db" "$w/ref_new" >/dev/null || { echo "FAIL: rerun result differs"; fail=1; }
# Two writers at once: both succeed, every file complete.
rm -rf "$w/db"
"$opdb" parse --profiling-path "$w/old.csv" --database-path "$w/db" >/dev/null 2>&1 & p1=$!
"$opdb" parse --profiling-path "$w/new.csv" --database-path "$w/db" >/dev/null 2>&1 & p2=$!
wait $p1 || { echo "FAIL: first concurrent parse failed"; fail=1; }
wait $p2 || { echo "FAIL: second concurrent parse failed"; fail=1; }
diff -r "$w/db" "$w/ref_old" >/dev/null || diff -r "$w/db" "$w/ref_new" >/dev/null ||
  { echo "FAIL: concurrent writers produced a mix of both runs"; fail=1; }
[ $fail = 0 ] && echo "safety: ok"
exit $fail
