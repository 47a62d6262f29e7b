#!/bin/sh
# mpirun -np 2 and -np 4 runs of `opdb comm bench` (tiny: two sizes, few
# iterations): every op writes its hcom_*.csv rows, the JSON and the
# nccl-tests lines, and --check finds #wrong 0 everywhere.
#   comm_mpi.sh OPDB OPDB_COMM
set -u
opdb=$1
command -v mpirun >/dev/null 2>&1 || { echo "comm_mpi.sh: no mpirun" >&2; exit 77; }
[ -x "$2" ] || { echo "comm_mpi.sh: no opdb-comm helper" >&2; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
# sanitizer builds: OpenMPI's own allocations live until exit, many of them in
# plugins it has unloaded by then, whose frames LeakSanitizer cannot name (so
# no suppression matches): leak checking is off for the mpirun processes; the
# comm library itself is leak-checked by unit.test_comm and the golden cases.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "comm_mpi.sh: $*" >&2; cat "$work/out" >&2; exit 1; }
for np in 2 4; do
  d=$work/db$np
  timeout 120 mpirun --oversubscribe -np $np "$opdb" comm bench --ops all_reduce all_gather reduce_scatter all_to_all broadcast \
      --num-devices $np --grid-shape 48 8 2 --bytes-grid 1024 8192 -w 1 -n 3 --check --dtype torch.float32 \
      --output-dir "$d" --json "$work/r$np.json" >"$work/out" 2>&1 || fail "np $np: exit $?"
  for f in hcom_allReduce_ hcom_allGather_ hcom_reduceScatter_ hcom_alltoallv_ hcom_broadcast_; do
    [ -f "$d/$f.csv" ] || fail "np $np: no $f.csv"
    head -1 "$d/$f.csv" | grep -q '^message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps' || fail "header of $f"
    rows=$(grep -c "^[0-9]*,$np,DT_FLOAT,[0-2],[0-9.]*,[0-9.]*" "$d/$f.csv")
    [ "$rows" = 2 ] || fail "np $np: $f.csv has $rows rows, expected 2"
  done
  # nccl-tests rows: 13 fields, #wrong (9th and 13th) 0
  n=$(awk '$1 ~ /^[0-9]+$/ && NF == 13 && $9 == 0 && $13 == 0' "$work/out" | wc -l)
  [ "$n" = 10 ] || fail "np $np: $n nccl-tests lines with #wrong 0, expected 10"
  grep -q '^# Out of bounds values : 0 OK$' "$work/out" || fail "np $np: no '# Out of bounds values : 0 OK'"
  grep -q '^# Avg bus bandwidth    : ' "$work/out" || fail "np $np: no Avg bus bandwidth footer"
  c=$(grep -c '"median_us"' "$work/r$np.json")
  [ "$c" = 20 ] || fail "np $np: $c median_us entries in the JSON, expected 20"
  grep -q "\"nranks\": $np" "$work/r$np.json" || fail "np $np: nranks"
  [ "$(grep -c '"wrong": 0' "$work/r$np.json")" = 20 ] || fail "np $np: JSON wrong counts"
  [ "$(grep -c '"iters": 3' "$work/r$np.json")" = 21 ] || fail "np $np: JSON iters (once at the top, once per half)"
  if grep -q '"wrong": [1-9]' "$work/r$np.json"; then fail "np $np: wrong elements"; fi
  # the tables are what `opdb comm validate` reads (FAIL is fine: the model is the Ascend A3's)
  "$opdb" comm validate --csv-dir "$d" >"$work/out" 2>&1
  [ $? -le 1 ] || fail "np $np: validate crashed"
  grep -q "^  all_reduce  (2 rows, tolerance=2.0x)$" "$work/out" || fail "np $np: validate did not read hcom_allReduce_.csv"
done
# --json alone, as on every command: the JSON on stdout and nothing else; the console lines on stderr
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --num-devices 2 --bytes-grid 1024 -w 1 -n 2 \
    --dtype torch.float32 --output-dir "$work/js" --json >"$work/js.out" 2>"$work/out" || fail "--json alone: exit $?"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["results"]) == 1, j' "$work/js.out" ||
  fail "--json alone: stdout is not the JSON"
grep -q '^# opdb comm bench: nranks 2' "$work/out" || fail "--json alone: the console lines are not on stderr"
# --time-budget instead of -n: every size gets its own iteration count (>= 1), reported per result
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce broadcast --num-devices 2 --bytes-grid 1024 65536 \
    -w 1 --time-budget 0.002 --check --dtype torch.float32 --output-dir "$work/tb" --json "$work/tb.json" >"$work/out" 2>&1 ||
  fail "time budget run: exit $?"
grep -q '^# opdb comm bench: nranks 2  dtype float  warmup iters: 1 iters: time budget 0.002 s per size validation: 1$' "$work/out" ||
  fail "time budget header"
python3 - "$work/tb.json" <<'PY' || fail "time budget JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["time_budget_s"] == 0.002 and j["iters"] is None, j
assert len(j["results"]) == 4
for r in j["results"]:
    for half in ("out_of_place", "in_place"):
        assert isinstance(r[half]["iters"], int) and 1 <= r[half]["iters"] <= 100000, r
        assert r[half]["wrong"] == 0
PY
[ "$(grep -c '^[0-9]*,2,DT_FLOAT,' "$work/tb/hcom_allReduce_.csv")" = 2 ] || fail "time budget: rows"
# --backend nccl: the plugin is loaded only for it (an mpi run maps neither libnccl nor libcudart);
# without a GPU (or without the plugin in this build) one clear line and exit 1; with one, #wrong 0
helper_dir=$(dirname "$2")
LD_DEBUG=files timeout 120 mpirun --oversubscribe -np 1 "$opdb" comm bench --ops all_reduce --num-devices 1 --bytes-grid 1024 \
    -w 0 -n 1 >"$work/out" 2>&1 || fail "mpi run under LD_DEBUG"
if grep -q 'file=.*lib\(nccl\|cudart\|opdb_comm_nccl\)' "$work/out"; then fail "--backend mpi mapped NCCL or CUDA"; fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU 0'; then
  if [ -f "$helper_dir/libopdb_comm_nccl.so" ]; then
    timeout 120 mpirun --oversubscribe -np 1 "$opdb" comm bench --backend nccl --ops all_reduce all_gather reduce_scatter \
        all_to_all broadcast --num-devices 1 --bytes-grid 1024 65536 -w 1 -n 3 --check --dtype torch.float32 \
        >"$work/out" 2>&1 || fail "nccl run: exit $?"
    n=$(awk '$1 ~ /^[0-9]+$/ && NF == 13 && $9 == 0 && $13 == 0' "$work/out" | wc -l)
    [ "$n" = 10 ] || fail "nccl: $n nccl-tests lines with #wrong 0, expected 10"
  fi
else
  timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --backend nccl --ops all_reduce --num-devices 2 \
      --bytes-grid 1024 >"$work/out" 2>&1 && fail "--backend nccl without a GPU: exit 0"
  if [ -f "$helper_dir/libopdb_comm_nccl.so" ]; then
    want='^opdb comm bench: --backend nccl needs a CUDA GPU on each rank: .'
  else
    want='^opdb comm bench: --backend nccl is not available in this build (no CUDA toolkit with NCCL was found when opdb was configured); use --backend mpi$'
  fi
  [ "$(grep -c '^opdb comm bench:' "$work/out")" = 1 ] && grep -q "$want" "$work/out" || fail "--backend nccl without a GPU"
fi
# the reference's console lines and an explicit overhead table
printf 'op,num_devices,overhead_us\nall_reduce,2,1000.5\n' >"$work/ovh.csv"
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --num-devices 2 --bytes-grid 4096 -w 1 -n 2 \
    --overhead-table "$work/ovh.csv" --output-csv "$work/one.csv" --reference-quirks >"$work/out" 2>&1 || fail "quirks run"
grep -q '^Running global warmup to trigger HCCL JIT compilation (1 configs)...$' "$work/out" || fail "no warm-up line"
grep -q '^op=all_reduce  bytes=4096  devices=2  tier=2  rank=0  group=\[0, 1\]  duration=' "$work/out" || fail "no op= line"
grep -q '^Completed 1 benchmarks. Results saved to ' "$work/out" || fail "no Completed line"
awk -F, 'NR == 2 { exit !($5 > 1000.5) }' "$work/one.csv" || fail "overhead table not applied: $(cat "$work/one.csv")"
# without --num-devices the group is the whole MPI world (the reference's 16 would fit nothing here)
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --bytes-grid 1024 -w 1 -n 3 \
    --dtype torch.float32 --output-dir "$work/auto" >"$work/out" 2>&1 || fail "default --num-devices: exit $?"
[ "$(grep -c '^1024,2,DT_FLOAT,' "$work/auto/hcom_allReduce_.csv")" = 1 ] || fail "default --num-devices: not the world size"
grep -q "^opdb comm bench: measured 1 configuration over 2 ranks; results saved to $work/auto\$" "$work/out" ||
  fail "no one-line success summary"
# no configuration fits: the reason, no "Results saved", nothing written, exit 1
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --num-devices 4 --bytes-grid 1024 -w 1 -n 1 \
    --output-dir "$work/none" >"$work/out" 2>&1 && fail "nothing fits: exit 0"
grep -q '^opdb comm bench: nothing measured, nothing written: no configuration fits the MPI world of 2 rank(s)' "$work/out" ||
  fail "nothing fits: no reason"
if grep -q 'Results saved' "$work/out"; then fail "nothing fits: says results were saved"; fi
[ ! -e "$work/none" ] || fail "nothing fits: wrote $work/none"
# console and CSV give one figure: the in-place time of the all_reduce line is the CSV's Duration(us)
# (no dispatch overhead here), both the JSON's median
printf 'op,num_devices,overhead_us\nall_reduce,2,0\n' >"$work/zero.csv"
timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --num-devices 2 --bytes-grid 1024 4096 -w 2 -n 9 \
    --dtype torch.float32 --overhead-table "$work/zero.csv" --output-dir "$work/one" --json "$work/one.json" \
    >"$work/out" 2>&1 || fail "one figure run: exit $?"
grep -q '^# op all_reduce  devices 2  tier [0-2]  dispatch overhead 0.00 us$' "$work/out" || fail "no overhead in the op header"
awk '$1 ~ /^[0-9]+$/ && NF == 13 {print $1, $10}' "$work/out" >"$work/console"
awk -F, 'NR > 1 {print $1, $5}' "$work/one/hcom_allReduce_.csv" >"$work/csv"
python3 - "$work/console" "$work/csv" "$work/one.json" <<'PY' || fail "console, CSV and JSON disagree"
import json, sys
con = dict(l.split() for l in open(sys.argv[1]))
csv = dict(l.split() for l in open(sys.argv[2]))
med = {str(r["message_bytes"]): r["in_place"]["median_us"] for r in json.load(open(sys.argv[3]))["results"]}
assert sorted(con) == sorted(csv) == sorted(med) == ["1024", "4096"], (con, csv, med)
for k in con:
    c, v, m = float(con[k]), float(csv[k]), med[k]
    # the console rounds to 2 decimals, to 1 from 100 us, to none from 10,000 us (a slow host gets there)
    assert abs(c - v) <= 0.0051 + (0.5 if c >= 10000 else 0.05 if c >= 100 else 0) and abs(round(m, 2) - v) < 1e-9, (k, c, v, m)
PY
# a write that fails (here the output folder cannot be created: a file is in
# the way; a full disk takes the same path): the error, exit 1, never
# "Results saved" (it used to be printed next to the error), in both modes
: >"$work/afile"
for q in "" --reference-quirks; do
  timeout 120 mpirun --oversubscribe -np 2 "$opdb" comm bench --ops all_reduce --num-devices 2 --bytes-grid 1024 -w 1 -n 2 \
      --output-dir "$work/afile/db" --json "$work/w.json" $q >"$work/out" 2>&1 && fail "failed write$q: exit 0"
  grep -q "^opdb comm bench: .*afile" "$work/out" || fail "failed write$q: no error naming the path"
  grep -q '^opdb comm bench: not every result was saved to ' "$work/out" || fail "failed write$q: no summary line"
  if grep -q 'Results saved' "$work/out"; then fail "failed write$q: says results were saved"; fi
done
exit 0
