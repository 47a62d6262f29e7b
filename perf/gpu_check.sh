#!/bin/sh
# The GPU checks behind docs/PERFORMANCE.md's CUDA and NCCL figures, on a
# host with one or more NVIDIA GPUs:
#   1. opdb_cuda_check: every CUDA replay kernel against a host computation,
#      then the cuBLASLt GEMM sweep (TFLOP/s against the GPU's peak);
#   2. opdb bench --backend cuda over the built-in grid 'default';
#   3. opdb comm bench --backend nccl and --backend mpi, same sizes, then
#      opdb comm validate on the NCCL rows.
#   perf/gpu_check.sh BIN OUT     BIN: the folder with opdb, opdb-comm, the
#                                  plugins and opdb_cuda_check (perf/gpu_kit.sh)
set -u
bin=$(cd "${1:?usage: gpu_check.sh BIN OUT}" && pwd)
out=${2:?usage: gpu_check.sh BIN OUT}
mkdir -p "$out"
step() { printf '\n== %s (%s)\n' "$*" "$(date -u +%T)"; }
# The CUDA and NCCL libraries of the toolkit or of a Python wheel, wherever the host keeps them.
libdir() { find /usr/local /opt /usr/lib -name "$1" 2>/dev/null | head -1 | xargs -r dirname; }
LD_LIBRARY_PATH=$bin:$(libdir 'libcublasLt.so.1[0-9]'):$(libdir 'libnccl.so.2')${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv

step "kernel correctness and GEMM sweep"
timeout 150 "$bin/opdb_cuda_check" 2>&1 | tee "$out/cuda_check.txt"
echo "exit $?"

step "opdb bench --backend cuda --grid default"
rm -rf /tmp/opdb_gpu_db
timeout 150 "$bin/opdb" bench --backend cuda --grid default --database-path /tmp/opdb_gpu_db >"$out/bench_cuda.txt" 2>&1
echo "exit $?"
grep "STATUS" "$out/bench_cuda.txt"
tar -C /tmp -czf "$out/bench_cuda_db.tar.gz" opdb_gpu_db 2>/dev/null

export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
step "mpirun -np 2 opdb bench --backend cuda (both ranks on GPU 0), on the database above"
timeout 120 mpirun --allow-run-as-root -x CUDA_VISIBLE_DEVICES=0 -np 2 "$bin/opdb" bench --backend cuda \
  --database-path /tmp/opdb_gpu_db --repeat-count 200 2>&1 | grep -v '^\[OK\]' | tail -n 12
echo "exit $?"

for backend in nccl mpi; do
  sizes="1024 65536 1048576 16777216"
  [ $backend = nccl ] && sizes="$sizes 268435456"
  step "opdb comm bench --backend $backend (1 rank)"
  rm -rf "/tmp/opdb_comm_$backend"
  timeout 90 mpirun --allow-run-as-root -np 1 "$bin/opdb" comm bench --backend $backend \
    --ops all_reduce all_gather reduce_scatter all_to_all broadcast --num-devices 1 \
    --bytes-grid $sizes --check \
    --json "$out/comm_$backend.json" --output-dir "/tmp/opdb_comm_$backend" 2>&1 | tee "$out/comm_$backend.txt"
  echo "exit $?"
done
step "opdb comm validate (NCCL rows)"
"$bin/opdb" comm validate --csv-dir /tmp/opdb_comm_nccl 2>&1 | tail -n 30
echo "exit $?"
