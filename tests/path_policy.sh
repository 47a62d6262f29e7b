#!/bin/sh
# path_policy.sh OPDB: hostile operator-type and tile names (`../../pwned`, an
# absolute path, `a/b`, control bytes, `.`, `..`, `.x`, 300 bytes, names that
# differ only in case) never make a writer leave its output folder: parse,
# update --add-new-ops, update into a new database and aie write safe names
# inside the folder (default) or stop with a clear error and write nothing
# (--reference-quirks).  Every file must be a regular, visible file directly
# in the output folder, its name free of control bytes.
set -u
opdb=$1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
s=$w/s # scratch files, outside the snapshot
mkdir "$s"
long=$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "L" }')
ctl=$(printf 'c\001t\033l')
# the names, one a line (an absolute path inside $w, so a bug cannot touch anything else)
printf '%s\n' '../../pwned' "$w/abs/victim" 'a/b' "$ctl" '.' '..' '.x' "$long" "${long}2" 'Foo' 'foo' >"$s/names"
snapshot() { (cd "$w" && find . -path ./run -prune -o -path ./s -prune -o -print | LC_ALL=C sort) >"$1"; }
check_dir() { # check_dir LABEL DIR: every entry a visible regular file with a clean name
  for f in "$2"/* "$2"/.[!.]* "$2"/..?*; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    case "$b" in reports) continue ;; .*) echo "FAIL: $1: hidden file $b"; fail=1 ;; esac
    [ -f "$f" ] && [ ! -L "$f" ] || { echo "FAIL: $1: $b is not a regular file"; fail=1; }
    printf '%s' "$b" | LC_ALL=C grep -q '[[:cntrl:]]' && { echo "FAIL: $1: control byte in a file name"; fail=1; }
  done
}
outside_unchanged() { # outside_unchanged LABEL: nothing appeared in $w outside $w/run
  snapshot "$s/after"
  cmp -s "$s/before" "$s/after" || { echo "FAIL: $1: files appeared outside the output folder:"; diff "$s/before" "$s/after"; fail=1; }
}
kd_hdr='Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)'
os_hdr='Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)'
zeros=$(awk 'BEGIN { for (i = 0; i < 25; i++) printf ",0" }')
csvq() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }
mkdir -p "$w/in/prof/PROF_000001_x/mindstudio_profiler_output" "$w/in/aie"
{ echo "$kd_hdr"; i=0; while IFS= read -r n; do i=$((i + 1))
    printf '1,1,%d,2,k,%s,dynamic,AI_CORE,%d.0,1.5,0,8,0,NO,"""8,8""",DT_BF16,ND,"""8,8""",DT_BF16,ND,N/A%s\n' "$i" "$(csvq "$n")" "$i" "$zeros"
  done <"$s/names"; } >"$w/in/kd.csv"
{ echo "$os_hdr"; i=0; while IFS= read -r n; do i=$((i + 1))
    printf '0,1,%d,1,k,%s,dynamic,AI_CORE,1.0,2.5,0,8,0,NO,"""8,64""",DT_BF16,ND,"""8""",DT_BF16,ND,0,1.0\n' "$i" "$(csvq "$n")"
  done <"$s/names"; } >"$w/in/prof/PROF_000001_x/mindstudio_profiler_output/op_summary_1.csv"
{ printf '['; i=0; while IFS= read -r n; do i=$((i + 1))
    j=$(printf '%s' "$n" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\x01/\\u0001/g; s/\x1b/\\u001b/g')
    printf '{"name": "process_name", "ph": "M", "pid": %d, "args": {"name": "core_trace for %s"}},\n' "$i" "$j"
    printf '{"name": "INSTR_EVENT_0", "ts": 1000, "ph": "B", "pid": %d, "tid": 0, "args": {}},\n' "$i"
    printf '{"name": "INSTR_EVENT_1", "ts": 1100, "ph": "E", "pid": %d, "tid": 1, "args": {}},\n' "$i"
  done <"$s/names"; printf '{"name": "x", "ph": "M", "pid": 999, "args": {}}]\n'; } >"$w/in/aie/trace.json"

run() { # run LABEL WANT_RC DIR CMD...: run, then check rc, the folder and the world outside it
  label=$1 want=$2 dir=$3; shift 3
  snapshot "$s/before"
  (cd "$w/run" && "$@") >"$s/out" 2>"$s/err"; rc=$?
  [ "$rc" = "$want" ] || { echo "FAIL: $label: rc $rc, want $want"; cat "$s/err"; fail=1; }
  check_dir "$label" "$w/run/$dir"
  outside_unchanged "$label"
}
fresh() { rm -rf "$w/run"; mkdir -p "$w/run/db"; }
new_tables() { ls "$w/run/db" | grep -v '^reports$' | grep -cv -e '^Add\.csv$'; }

# parse: 11 types, 11 tables; the two long names stay distinct; Foo/foo reported
fresh; rmdir "$w/run/db"
run parse 0 db "$opdb" parse --profiling-path "$w/in/kd.csv" --database-path db
[ "$(ls "$w/run/db" | wc -l)" -eq 11 ] || { echo "FAIL: parse wrote $(ls "$w/run/db" | wc -l) tables, want 11"; fail=1; }
grep -q 'differ only in case' "$s/err" || { echo "FAIL: parse did not report Foo/foo"; fail=1; }
[ -f "$w/run/db/_._.._pwned.csv" ] && [ -f "$w/run/db/_x.csv" ] && [ -f "$w/run/db/_..csv" ] ||
  { echo "FAIL: parse safe names missing:"; ls "$w/run/db"; fail=1; }
# parse --reference-quirks: the reference's `/`-free names are kept, the 300-byte one is refused before anything is written
fresh; rmdir "$w/run/db"
run parse_quirks 1 db "$opdb" parse --profiling-path "$w/in/kd.csv" --database-path db --reference-quirks
grep -q 'too long' "$s/err" || { echo "FAIL: parse quirks: no 'too long' error"; cat "$s/err"; fail=1; }
[ -z "$(ls "$w/run/db" 2>/dev/null)" ] || { echo "FAIL: parse quirks wrote tables before failing"; fail=1; }

# parse of a Kineto trace: operator names get the same policy as kernel_details types
# (no hidden or special names, no DEL or direction override in a file name, case clash
# reported, long names cut with the hash suffix instead of failing the parse)
k240=$(awk 'BEGIN { for (i = 0; i < 240; i++) printf "K" }')
k10k=$(awk 'BEGIN { for (i = 0; i < 10000; i++) printf "M" }')
{ printf '{"traceEvents": ['; i=0
  for n in '.x' '..' '.opdb-journal' "$(printf 'de\177l')" 'bi\u202etxt' 'Add' 'add' "$k240" "$k10k"; do
    i=$((i + 1)); [ $i -gt 1 ] && printf ','; t=$((i * 100)) # an operator, its launch, its kernel
    printf '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %d, "dur": 50, "args": {}},\n' "$n" $t
    printf '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 3, "args": {"correlation": %d}},\n' $((t + 1)) $i
    printf '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"correlation": %d}}\n' $((t + 60)) $i
  done; printf ']}\n'; } >"$w/in/kineto.json"
fresh; rmdir "$w/run/db"
run parse_kineto 0 db "$opdb" parse --profiling-path "$w/in/kineto.json" --database-path db
[ "$(ls "$w/run/db" | wc -l)" -eq 9 ] || { echo "FAIL: kineto parse wrote $(ls "$w/run/db" | wc -l) tables, want 9:"; ls "$w/run/db"; cat "$s/err"; fail=1; }
grep -q 'differ only in case' "$s/err" || { echo "FAIL: kineto parse did not report Add/add"; fail=1; }
ls "$w/run/db" | LC_ALL=C grep -q "$(printf '\342\200\256')" && { echo "FAIL: a direction override in a kineto table name"; fail=1; }
ls "$w/run/db" | LC_ALL=C awk 'length($0) > 243 { bad = 1 } END { exit !bad }' && { echo "FAIL: a kineto table name over 243 bytes"; fail=1; }
[ -f "$w/run/db/_opdb-journal.csv" ] && [ -f "$w/run/db/_x.csv" ] && [ -f "$w/run/db/_..csv" ] && [ -f "$w/run/db/bi_txt.csv" ] ||
  { echo "FAIL: kineto safe names missing:"; ls "$w/run/db"; fail=1; }
"$opdb" validate --database-path "$w/run/db" >"$s/out" 2>&1 || { echo "FAIL: validate refused the kineto tables:"; cat "$s/out"; fail=1; }

# update --add-new-ops on a database with one table
fresh
printf 'OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)\r\n' >"$w/run/db/Add.csv"
run update_add_new_ops 0 db "$opdb" update --prof-path "$w/in/prof" --database-path db --add-new-ops
[ "$(new_tables)" -eq 11 ] || { echo "FAIL: update --add-new-ops made $(new_tables) tables, want 11"; ls "$w/run/db"; fail=1; }
grep -q 'not a safe file name' "$s/err" || { echo "FAIL: update did not say a name was made safe"; fail=1; }
# the same again: the existing safe-named tables are updated, nothing new appears
ls "$w/run/db" >"$s/list1"
run update_add_new_ops_again 0 db "$opdb" update --prof-path "$w/in/prof" --database-path db --add-new-ops
ls "$w/run/db" | cmp -s - "$s/list1" || { echo "FAIL: second update changed the set of tables"; ls "$w/run/db"; fail=1; }
# update into an empty database (every operator gets a table)
fresh
run update_new_db 0 db "$opdb" update --prof-path "$w/in/prof" --database-path db
[ "$(new_tables)" -eq 11 ] || { echo "FAIL: update (new db) made $(new_tables) tables, want 11"; fail=1; }
# update --reference-quirks into an empty database: the reference would write ../../pwned.csv: a clear error, nothing written
fresh
run update_new_db_quirks 1 db "$opdb" update --prof-path "$w/in/prof" --database-path db --reference-quirks
grep -q 'outside the output folder' "$s/err" || { echo "FAIL: update quirks: no 'outside the output folder' error"; cat "$s/err"; fail=1; }
[ -z "$(ls "$w/run/db")" ] || { echo "FAIL: update quirks wrote files"; ls "$w/run/db"; fail=1; }

# aie: tile names
fresh
run aie 0 out "$opdb" aie --trace "$w/in/aie/trace.json" --out-dir out --M 64 --K 64 --N 64 --m 32 --k 32 --n 32 \
  --row 1 --col 1 --hwid npu1 --warmup 0 --iterations 1
[ "$(ls "$w/run/out" | wc -l)" -ge 12 ] || { echo "FAIL: aie wrote too few files:"; ls "$w/run/out"; cat "$s/err"; fail=1; }
fresh
run aie_quirks 1 out "$opdb" aie --trace "$w/in/aie/trace.json" --out-dir out --M 64 --K 64 --N 64 --m 32 --k 32 --n 32 \
  --row 1 --col 1 --hwid npu1 --warmup 0 --iterations 1 --reference-quirks
grep -q 'outside the output folder' "$s/err" || { echo "FAIL: aie quirks: no 'outside the output folder' error"; cat "$s/err"; fail=1; }
[ -z "$(ls "$w/run/out" 2>/dev/null)" ] || { echo "FAIL: aie quirks wrote files"; fail=1; }
grep -q "$(printf '\033')" "$s/err" && { echo "FAIL: a raw control byte in an error"; fail=1; }

[ $fail = 0 ] && echo "path policy: ok"
exit $fail
