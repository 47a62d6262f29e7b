#!/bin/sh
# bench_mpi.sh OPDB OPDB_COMM: `mpirun -np 2 opdb bench` shards a small
# database's rows over the ranks and rank 0 writes them back. Checked against
# a single-process run of a copy of the same database: the same files, rows,
# columns and cells (timings masked: only they may differ), the same status
# summary and exit code (failed rows, the circuit breaker, a skipped
# operator included). Then a rank whose measuring process dies (SIGKILL)
# or fails (exit 3): reported with its rank, the other rank's rows written,
# the dead rank's rows left as they were, every file whole; --plan prints once.
# (--hot-cache: no cache-eviction buffer, which takes seconds to fault in on a VM.)
set -u
opdb=$1
command -v mpirun >/dev/null 2>&1 || { echo "bench_mpi.sh: no mpirun" >&2; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "bench_mpi.sh: no python3" >&2; exit 77; }
[ -x "$2" ] || { echo "bench_mpi.sh: no opdb-comm helper" >&2; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # OpenMPI's unloaded plugins (see comm_mpi.sh)
export OPDB_REPORT_TIMESTAMP=20260101_000000
unset OPDB_REPLAY_REPEAT_COUNT MSMODELING_OP_REPLAY_REPEAT_COUNT
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
has() { grep -qF -- "$2" "$1" || bad "$1 lacks: $2"; }
mpi() { timeout 120 mpirun --oversubscribe "$@"; }

hdr='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Note'
mkdb() { # rows that measure, a row that fails, a duplicate signature, a complete row, the circuit breaker, a skipped operator
  mkdir -p "$1"
  {
    printf '%s\r\n' "$hdr"
    printf 'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,a\r\n'
    printf 'dynamic,AI_CORE,"""2,3;5,7""",DT_FLOAT;DT_FLOAT,ND;ND,"""2,5""",DT_FLOAT,ND,,bad\r\n'
    printf 'dynamic,AI_CORE,"""8,16;4,16""",DT_BF16;DT_BF16,ND;ND,"""8,4""",DT_BF16,ND,5.0,done\r\n'
    printf 'dynamic,AI_CORE,"""6,8;12,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""6,12""",DT_FLOAT,ND,,b\r\n'
    printf 'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,same as a\r\n'
    printf 'dynamic,AI_CORE,"""3,8;10,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""3,10""",DT_FLOAT,ND,,c\r\n'
  } >"$1/MatMulV2.csv"
  {
    printf '%s\r\n' "$hdr"
    for i in 1 2 3 4 5 6 7; do printf 'dynamic,AI_CORE,"""%d,3;5,7""",DT_FLOAT;DT_FLOAT,ND;ND,"""%d,5""",DT_FLOAT,ND,,x\r\n' "$i" "$i"; done
  } >"$1/MatMulV3.csv"
  {
    printf '%s\r\n' "$hdr"
    printf 'dynamic,AI_CORE,"""64,128;8,128,256;8,64,128;64,4;64,4;64,256;8""",DT_BF16;DT_BF16;DT_BF16;DT_INT32;DT_FLOAT;DT_BF16;DT_INT32,ND;ND;ND;ND;ND;ND;ND,"""64,128;8""",DT_BF16;DT_INT32,ND;ND,,dfc\r\n'
  } >"$1/DispatchFFNCombine.csv"
}
# Every file under A and B: same names; CSVs equal cell by cell except measured timings; the rest equal.
same_db() {
  python3 - "$1" "$2" <<'PY'
import csv, os, re, sys
timing = {"Average Duration(us)", "MicroBench Median Duration(us)", "MicroBench P20 Duration(us)",
          "MicroBench P80 Duration(us)", "MicroBench CI Low(us)", "MicroBench CI High(us)", "MicroBench RSD(%)",
          "MicroBench GFLOP/s", "MicroBench GB/s"}
def load(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, d)
            data = open(p, "rb").read()
            if f.endswith(".csv"):
                rows = list(csv.reader(data.decode().splitlines(True)))
                hdr = rows[0]
                def mask(i, v):
                    if hdr[i] in timing and v:  # a spread (RSD) of two equal samples is 0
                        ok = float(v) >= 0 if hdr[i] == "MicroBench RSD(%)" else float(v) > 0
                        return "<t>" if ok else "<bad>"
                    if hdr[i] == "MicroBench Backend" and v:  # each rank has its own share of the CPUs
                        return re.sub(r"\d+ pinned threads?", "<n> pinned", v.split("; timer overhead")[0])
                    return v
                out[rel] = (data.count(b"\r\n"), [hdr] + [[mask(i, v) for i, v in enumerate(r)] for r in rows[1:]])
            elif rel.startswith("reports"):
                out[rel] = len(data) > 0  # reports hold timings
            else:
                out[rel] = data
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
if sorted(a) != sorted(b):
    sys.exit("files differ: %s vs %s" % (sorted(a), sorted(b)))
for k in a:
    if a[k] != b[k]:
        sys.exit("%s differs:\n%s\n%s" % (k, a[k], b[k]))
PY
}
summary() { grep -E '^(\[STATUS\]|\[SUMMARY\]|Benchmarked)' "$1" | sed "s|$2|DB|g"; }

# ---- one process vs two ranks
mkdb "$w/one"
mkdb "$w/two"
"$opdb" bench --database-path "$w/one" --repeat-count 2 --hot-cache >"$w/one.out" 2>"$w/one.err"
rc1=$?
mpi -np 2 "$opdb" bench --database-path "$w/two" --repeat-count 2 --hot-cache >"$w/two.out" 2>"$w/two.err"
rc2=$?
[ $rc1 = 1 ] || bad "single run: exit $rc1, expected 1 (a row fails)"
[ $rc2 = $rc1 ] || { bad "mpirun -np 2: exit $rc2, single run $rc1"; cat "$w/two.err"; }
same_db "$w/one" "$w/two" || bad "the two ranks' database differs from the single run's"
summary "$w/one.out" "$w/one" >"$w/one.sum"
summary "$w/two.out" "$w/two" >"$w/two.sum"
cmp -s "$w/one.sum" "$w/two.sum" || { bad "status summaries differ"; diff "$w/one.sum" "$w/two.sum"; }
has "$w/two.out" "[STATUS] MatMulV3: failed (0 measured, 5 row(s) failed, 2 skipped by the circuit breaker; first: MatMulV3.csv:2 "
has "$w/two.out" "[STATUS] MatMulV2: failed (5 measured, 1 row(s) failed; first: MatMulV2.csv:3 "
has "$w/two.err" "[RANK 0/2] "
has "$w/two.err" "[RANK 1/2] "
has "$w/two.err" "[SAME] MatMulV2.csv:6 same signature as an earlier row (ok)"
[ "$(grep -c '^\[OK\]' "$w/two.err")" = 4 ] || bad "two ranks measured $(grep -c '^\[OK\]' "$w/two.err") rows, expected 4"
[ ! -e "$w/two/.opdb_bench" ] || bad "work folder left behind"
# each rank pinned to its own CPUs: the ranks' threads add up to at most the CPUs there are
t=$(sed -n 's/^\[BENCH\] backend: .*, \([0-9]*\) pinned thread.*/\1/p' "$w/two.err" | awk '{s += $1} END {print s + 0}')
[ "$(nproc)" -lt 2 ] || { [ "$t" -ge 2 ] && [ "$t" -le "$(nproc)" ]; } || bad "the two ranks pinned $t threads on $(nproc) CPUs"

# ---- a rank whose measuring process dies, or fails: reported; its rows stay as they were
printf '#!/bin/sh\nkill -KILL $$\n' >"$w/die.sh"
printf '#!/bin/sh\necho "worker: cannot start" >&2\nexit 3\n' >"$w/exit3.sh"
chmod +x "$w/die.sh" "$w/exit3.sh"
for how in die exit3; do
  d=$w/$how
  mkdb "$d"
  cp "$d/MatMulV2.csv" "$w/$how.orig"
  mpi -np 1 "$opdb" bench --database-path "$d" --repeat-count 2 --hot-cache --ops MatMulV2 : \
      -np 1 env OPDB_BENCH_WORKER="$w/$how.sh" "$opdb" bench --database-path "$d" --repeat-count 2 --hot-cache --ops MatMulV2 \
      >"$w/$how.out" 2>"$w/$how.err"
  rc=$?
  [ $rc != 0 ] || bad "$how: exit 0 with a failed rank"
  if [ $how = die ]; then
    has "$w/$how.err" "opdb bench: rank 1 (host $(hostname)) died on signal 9 (Killed); the rows it journaled are kept, its other rows stay unmeasured"
  else
    has "$w/$how.err" "opdb bench: rank 1 (host $(hostname)) failed (exit 3; its error is above); the rows it journaled are kept, its other rows stay unmeasured"
  fi
  has "$w/$how.out" "[STATUS] MatMulV2: failed (3 measured, 3 row(s) not measured: their MPI rank did not report them)"
  has "$w/$how.err" "opdb bench: 3 row(s) not measured: the rank that had them did not report them (see above); they keep their previous values"
  # rank 0 had rows 2, 4, 6 (ordinals 0, 2, 4: a, done, same-as-a); rank 1 rows 3, 5, 7 (bad, b, c)
  python3 - "$d/MatMulV2.csv" "$w/$how.orig" <<'PY' || bad "$how: rows written wrongly"
import csv, sys
new = list(csv.DictReader(open(sys.argv[1], newline="")))
old = list(csv.DictReader(open(sys.argv[2], newline="")))
assert len(new) == len(old) == 6, (len(new), len(old))
for i in (0, 2, 4):   # rank 0's (row 4 was complete: measured again in mode all; row 6 takes row 2's result)
    assert new[i]["MicroBench Samples"] == "2" and float(new[i]["Average Duration(us)"]) > 0, new[i]
for i in (1, 3, 5):   # rank 1's: as before, no MicroBench cells
    assert new[i]["Average Duration(us)"] == old[i]["Average Duration(us)"] and not new[i]["MicroBench Samples"], new[i]
    assert new[i]["Note"] == old[i]["Note"]
PY
  [ ! -e "$d/.opdb_bench" ] || bad "$how: work folder left behind"
done

# ---- --plan under mpirun: one plan
mkdb "$w/plan"
mpi -np 2 "$opdb" bench --database-path "$w/plan" --plan >"$w/plan.out" 2>&1 || bad "--plan under mpirun failed"
[ "$(grep -c 'row(s) would run' "$w/plan.out")" = 1 ] || bad "--plan printed $(grep -c 'row(s) would run' "$w/plan.out") plans under mpirun -np 2"
exit $fail
