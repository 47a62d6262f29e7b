#!/bin/sh
# MPI ranks started with different options (MPMD `mpirun A : B`): `opdb comm
# bench` and `opdb bench` under mpirun compare the ranks' options before the
# first collective; a mismatch is one error line on every rank and exit 1,
# never a hang (each run has a timeout: a hang fails) or a buffer overrun.
#   mpi_agree.sh OPDB OPDB_COMM
set -u
opdb=$1
command -v mpirun >/dev/null 2>&1 || { echo "mpi_agree.sh: no mpirun" >&2; exit 77; }
[ -x "$2" ] || { echo "mpi_agree.sh: no opdb-comm helper" >&2; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # OpenMPI's unloaded plugins (see comm_mpi.sh)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
bad() { echo "FAIL: $*"; cat "$w/out"; fail=1; }

# comm bench: rank 0 gets the common flags + A, rank 1 the common flags + B
base="comm bench --num-devices 2 -w 1 --output-dir $w/db"
mismatch() { # what A B
  what=$1 a=$2 b=$3
  rm -rf "$w/db"
  # shellcheck disable=SC2086
  timeout 60 mpirun --oversubscribe -np 1 "$opdb" $base $a : -np 1 "$opdb" $base $b >"$w/out" 2>&1
  rc=$?
  [ $rc != 124 ] || { bad "comm bench, $what: hung (killed after 60 s)"; return; }
  [ $rc = 1 ] || bad "comm bench, $what: exit $rc, expected 1"
  n=$(grep -c '^opdb comm bench: rank [01]: the MPI ranks were not given the same options: rank 1 differs from rank 0 (' "$w/out")
  [ "$n" = 2 ] || bad "comm bench, $what: $n mismatch lines, expected one per rank"
  if grep -q 'AddressSanitizer\|runtime error' "$w/out"; then bad "comm bench, $what: sanitizer report"; fi
  [ ! -e "$w/db" ] || [ -z "$(ls "$w/db")" ] || bad "comm bench, $what: rows written"
}
mismatch "--bytes-grid" "--bytes-grid 1024 8192 -n 2" "--bytes-grid 1024 -n 2"
mismatch "--ops" "--ops all_reduce --bytes-grid 1024 -n 2" "--ops broadcast --bytes-grid 1024 -n 2"
mismatch "-n" "--bytes-grid 1024 -n 2" "--bytes-grid 1024 -n 3"
mismatch "--dtype" "--bytes-grid 1024 -n 2 --dtype torch.float32" "--bytes-grid 1024 -n 2 --dtype torch.bfloat16"
mismatch "--num-devices" "--bytes-grid 1024 -n 2" "--bytes-grid 1024 -n 2 --num-devices 1"
# a usage error on one rank: opdb reports it before MPI starts there, and mpirun ends the job (no hang)
timeout 60 mpirun --oversubscribe -np 1 "$opdb" $base --bytes-grid 1024 -n 2 : -np 1 "$opdb" $base --bytes-grid 1024 -n 2 \
  --no-such-flag >"$w/out" 2>&1
rc=$?
[ $rc = 2 ] || bad "comm bench, a usage error on one rank: exit $rc, expected 2 (124: hung)"
[ "$(grep -c '^opdb comm bench: error: unrecognized arguments: --no-such-flag$' "$w/out")" = 1 ] ||
  bad "comm bench, a usage error on one rank: not one usage line"
# the same options on both ranks still run
timeout 60 mpirun --oversubscribe -np 1 "$opdb" $base --bytes-grid 1024 -n 2 : -np 1 "$opdb" $base --bytes-grid 1024 -n 2 \
  >"$w/out" 2>&1 || bad "comm bench, same options: exit $?"
[ -f "$w/db/hcom_allReduce_.csv" ] || bad "comm bench, same options: no rows"

# bench: the ranks share a database's rows; different flags are refused before any row is measured
hdr='OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us),Note'
mkdir -p "$w/bdb"
{
  printf '%s\r\n' "$hdr"
  printf 'dynamic,AI_CORE,"""4,8;16,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""4,16""",DT_FLOAT,ND,,a\r\n'
  printf 'dynamic,AI_CORE,"""6,8;12,8""",DT_FLOAT;DT_FLOAT,ND;ND,"""6,12""",DT_FLOAT,ND,,b\r\n'
} >"$w/bdb/MatMulV2.csv"
cp "$w/bdb/MatMulV2.csv" "$w/orig.csv"
timeout 60 mpirun --oversubscribe -np 1 "$opdb" bench --database-path "$w/bdb" --repeat-count 2 --hot-cache : \
  -np 1 "$opdb" bench --database-path "$w/bdb" --repeat-count 3 --hot-cache >"$w/out" 2>&1
rc=$?
[ $rc != 124 ] || bad "bench: hung (killed after 60 s)"
[ $rc = 1 ] || bad "bench: exit $rc, expected 1"
n=$(grep -c "^opdb bench: rank [01]: the MPI ranks were not given the same options: rank 1's \`opdb bench\` arguments differ from rank 0's" "$w/out")
[ "$n" = 2 ] || bad "bench: $n mismatch lines, expected one per rank"
cmp -s "$w/bdb/MatMulV2.csv" "$w/orig.csv" || bad "bench: the database changed"
if grep -q '^\[OK\]' "$w/out"; then bad "bench: rows were measured"; fi
exit $fail
