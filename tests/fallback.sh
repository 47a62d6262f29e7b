#!/bin/sh
# fallback.sh OPDB: a file whose quoting only the exact (CPython) rules decide
# (`ab"c` unquoted, `"ab"cd`) in the middle of several batches, read with 1, 2
# and 4 threads, gives the same tables as the same data quoted canonically.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
gen() { # gen FILE ODD_CELL: 60000 rows (> one 2 MiB batch), the odd cell at row 31000
  awk -v odd="$2" 'BEGIN {
    print "Type,OP State,Input Shapes,Input Data Types,Output Shapes,Duration(us),aicore_time(us)"
    for (i = 0; i < 60000; i++) {
      dt = (i == 31000) ? odd : "DT_BF16"
      s = (i == 31000) ? 999 : i % 13   # its own group, so its dtype is printed
      printf "Op%d,dynamic,\"\"\"%d,128\"\"\",%s,\"\"\"%d\"\"\",%d.25,1.5\r\n", i % 7, s, dt, i % 5, i % 100
    }
  }' >"$1"
}
gen "$w/canon.csv" '"DT_""X"'
gen "$w/odd.csv" 'DT_"X'
gen "$w/canon2.csv" '"DT_Y"'
gen "$w/odd2.csv" '"DT_"Y'
fail=0
"$opdb" parse --profiling-path "$w/canon.csv" --database-path "$w/ref" >/dev/null 2>&1 || fail=1
"$opdb" parse --profiling-path "$w/canon2.csv" --database-path "$w/ref2" >/dev/null 2>&1 || fail=1
grep -rq 'DT_""X' "$w/ref" || { echo "FAIL: odd cell not in output"; fail=1; }
for t in 1 2 4; do
  "$opdb" parse --threads $t --profiling-path "$w/odd.csv" --database-path "$w/o$t" >/dev/null 2>&1 || fail=1
  diff -r "$w/ref" "$w/o$t" >/dev/null || { echo "FAIL: threads=$t: mid-cell quote read differently"; fail=1; }
  "$opdb" parse --threads $t --profiling-path "$w/odd2.csv" --database-path "$w/p$t" >/dev/null 2>&1 || fail=1
  diff -r "$w/ref2" "$w/p$t" >/dev/null || { echo "FAIL: threads=$t: text after a closing quote read differently"; fail=1; }
done
# An unterminated quote is an error naming the line (and nothing is written).
printf 'Type,Input Shapes,Output Shapes,Duration(us)\nA,"1",1,2\nB,"2,1,3\n' >"$w/unterminated.csv"
"$opdb" parse --profiling-path "$w/unterminated.csv" --database-path "$w/u" >/dev/null 2>"$w/err" && fail=1
grep -q 'unterminated.csv:3: unterminated quoted field' "$w/err" || { echo "FAIL: unterminated quote message:"; cat "$w/err"; fail=1; }
[ -e "$w/u" ] && { echo "FAIL: output written despite the error"; fail=1; }
[ $fail = 0 ] && echo "fallback: ok"
exit $fail
