#!/bin/sh
# perf/gpu_convergence.sh - the CUDA stop-rule figures of docs/PERFORMANCE.md
# ("bench convergence") on a GPU host that has the CUDA toolkit but not this
# project's Debian packages.
#
#   perf/gpu_convergence.sh kit BUILD KIT [DB...]   here: pack opdb, the CUDA plugin,
#                    opdb_cuda_check, the libraries they load (not glibc, not CUDA),
#                    these scripts and the databases DB (default examples/bench/db)
#   perf/gpu_convergence.sh run KIT OUT             on the GPU host
#
# `run`: opdb_cuda_check --no-sweep (every CUDA kernel against the host,
# the batched timing path included), then for each database of the kit
# perf/convergence.sh (plan, 3 runs, summary) with one launch per sample
# (--launch-batch 1, the timing before batches) and with the default batches.
# OUT gets summary.txt, cuda_check.txt and runs.tar.gz (every output and table).
set -u
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
kit)
  build=${2:?usage: gpu_convergence.sh kit BUILD KIT [DB...]}
  kit=${3:?usage: gpu_convergence.sh kit BUILD KIT [DB...]}
  shift 3
  rm -rf "$kit"
  mkdir -p "$kit/bin" "$kit/lib" "$kit/db"
  for f in opdb libopdb_cuda.so tests/cuda/opdb_cuda_check; do cp -L "$build/$f" "$kit/bin/"; done
  cp "$here/convergence.sh" "$here/convergence.py" "$here/gpu_convergence.sh" "$kit/"
  # linked libraries (OpenBLAS is opened by the CPU backend only: not needed, and 35 MB)
  ldd "$kit"/bin/* 2>/dev/null | awk '/=> \// {print $3}' | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*)\.so|cuda|libcublas' |
    while read -r lib; do cp -L "$lib" "$kit/lib/"; done
  [ $# -gt 0 ] || set -- "$here/../examples/bench/db"
  for d in "$@"; do cp -R "$d" "$kit/db/$(basename "$(dirname "$d")")_$(basename "$d")"; done
  strip --strip-debug "$kit"/bin/* "$kit"/lib/* 2>/dev/null || true
  du -sh "$kit"
  ;;
run)
  kit=$(cd "${2:?usage: gpu_convergence.sh run KIT OUT}" && pwd)
  out=${3:?usage: gpu_convergence.sh run KIT OUT}
  runs=$(mktemp -d)/runs # outside OUT: only a few files come back from there
  mkdir -p "$out" "$runs"
  libdir() { find /usr/local /opt /usr/lib -name "$1" 2>/dev/null | head -1 | xargs -r dirname; }
  LD_LIBRARY_PATH=$kit/lib:$kit/bin:/usr/local/cuda/lib64:$(libdir 'libcublasLt.so.1[0-9]')${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LD_LIBRARY_PATH
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; } | tee "$out/summary.txt"
  timeout 120 "$kit/bin/opdb_cuda_check" --no-sweep >"$out/cuda_check.txt" 2>&1
  echo "opdb_cuda_check --no-sweep: exit $?" | tee -a "$out/summary.txt"
  tail -n 3 "$out/cuda_check.txt"
  echo "| run | load (1 min) | met rule | --plan about | actual wall per run | actual / plan | run-to-run median ratio (median / worst) |" >>"$out/summary.txt"
  for mode in auto batch1; do
    for db in "$kit"/db/*; do
      name=$(basename "$db")
      flags="--backend cuda --timeout ${GPU_TIMEOUT:-2}"
      [ $mode = batch1 ] && flags="$flags --launch-batch 1"
      # shellcheck disable=SC2086
      timeout 200 sh "$kit/convergence.sh" "$kit/bin/opdb" "$db" "$runs" "cuda-$name-$mode" 3 -- $flags |
        tee -a "$out/summary.txt"
      tar -C "$runs/.." -czf "$out/runs.tar.gz" runs # after each, so a run cut short still brings back the rest
    done
  done
  ;;
*) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
