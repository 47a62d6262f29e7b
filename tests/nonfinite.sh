#!/bin/sh
# nonfinite.sh OPDB: op_summary durations `inf`, `nan`, `1e400` and negative
# ones are skipped with one counted warning and never written: the duration
# of a shape comes from its finite samples, and a shape with none keeps no value;
# `opdb validate` accepts the result. The same for op_summary hardware
# counters (below).
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
p="$w/prof/PROF_000001_x/mindstudio_profiler_output"
mkdir -p "$p" "$w/db"
{ echo "$hdr"; i=0
  for d in 2.5 inf nan 1e400 -5 3.5; do i=$((i + 1))
    printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,%s,0,8,0,NO,"""8,64""",DT_BF16,ND,"""8""",DT_BF16,ND,0,1.0\n' "$i" "$d"; done
  for d in inf -1; do i=$((i + 1))
    printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,%s,0,8,0,NO,"""16,64""",DT_BF16,ND,"""16""",DT_BF16,ND,0,1.0\n' "$i" "$d"; done
} >"$p/op_summary_1.csv"
"$opdb" update --prof-path "$w/prof" --database-path "$w/db" >"$w/out" 2>"$w/err" || { echo "FAIL: update failed"; cat "$w/err"; fail=1; }
grep -q '6 op_summary row(s) with a non-finite or negative' "$w/err" || { echo "FAIL: no counted warning"; cat "$w/err"; fail=1; }
if grep -qi 'inf\|nan' "$w/db/Add.csv"; then echo "FAIL: a non-finite value was written:"; cat "$w/db/Add.csv"; fail=1; fi
grep '"""8,64"""' "$w/db/Add.csv" | grep -q ',ND,2\.500000,' || { echo "FAIL: the shortest finite sample (2.5) is not the duration:"; cat "$w/db/Add.csv"; fail=1; }
grep -q -- '-[0-9]' "$w/db/Add.csv" && { echo "FAIL: a negative value was written"; cat "$w/db/Add.csv"; fail=1; }
"$opdb" validate --database-path "$w/db" >/dev/null 2>"$w/verr" || { echo "FAIL: validate rejects the result"; cat "$w/verr"; fail=1; }

# Hardware counters: a non-finite or negative counter counts
# as 0 like N/A (the row is counted in the same warning); a mean whose finite
# samples sum past the largest double is left empty; --reference-quirks sums
# them in as the reference does (nan, inf written).
cell() { # cell TABLE SHAPE COLUMN: the cell of COLUMN in the row whose Input Shapes contain SHAPE
  python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if sys.argv[2] in r["Input Shapes"]: print(r[sys.argv[3]])' "$@"
}
if command -v python3 >/dev/null 2>&1; then
  p="$w/prof2/PROF_000001_x/mindstudio_profiler_output"
  mkdir -p "$p"
  { echo "$hdr"; i=0
    for c in 1.0 inf nan 1e400 -2 3.0; do i=$((i + 1))
      printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,1.0,0,8,0,NO,"""8,64""",DT_BF16,ND,"""8""",DT_BF16,ND,0,%s\n' "$i" "$c"; done
    for c in 1e308 1e308; do i=$((i + 1))
      printf '0,1,%d,1,k,Add,dynamic,AI_CORE,1.0,1.0,0,8,0,NO,"""32,64""",DT_BF16,ND,"""32""",DT_BF16,ND,0,%s\n' "$i" "$c"; done
  } >"$p/op_summary_1.csv"
  for mode in default quirks; do
    q=; [ $mode = quirks ] && q=--reference-quirks
    rm -rf "$w/db2"; mkdir "$w/db2"
    # shellcheck disable=SC2086
    "$opdb" update $q --prof-path "$w/prof2" --database-path "$w/db2" >/dev/null 2>"$w/err" || { echo "FAIL: update $mode (counters) failed"; cat "$w/err"; fail=1; }
    a=$(cell "$w/db2/Add.csv" '8,64' 'MicroBench aicore_time(us)'); b=$(cell "$w/db2/Add.csv" '32,64' 'MicroBench aicore_time(us)')
    if [ $mode = default ]; then
      [ "$a" = 0.666667 ] || { echo "FAIL: update counters: mean of 1, 0 x4 (inf nan 1e400 -2), 3 is '$a', not 0.666667"; fail=1; }
      [ "$b" = "" ] || { echo "FAIL: update counters: an overflowing mean is '$b', not empty"; fail=1; }
      grep -q '4 op_summary row(s) with a non-finite or negative duration or counter' "$w/err" || { echo "FAIL: update counters: no counted warning"; cat "$w/err"; fail=1; }
      grep -q '1 counter mean(s) larger than the largest number' "$w/err" || { echo "FAIL: update counters: no overflow warning"; cat "$w/err"; fail=1; }
      "$opdb" validate --database-path "$w/db2" >/dev/null 2>"$w/verr" || { echo "FAIL: validate rejects the counters"; cat "$w/verr"; fail=1; }
    else
      [ "$a" = nan ] && [ "$b" = inf ] || { echo "FAIL: update --reference-quirks counters: '$a' '$b', not the reference's nan inf"; fail=1; }
    fi
  done
fi
[ $fail = 0 ] && echo "non-finite numbers: ok"
exit $fail
