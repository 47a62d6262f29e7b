#!/bin/sh
# Pack what perf/gpu_check.sh needs onto a GPU host that has the CUDA
# toolkit and NCCL but not this project's Debian packages (a bare cloud image):
# the built opdb binaries and plugins, and every non-glibc library they and
# OpenMPI's runtime (mpirun, orted, MCA and PMIx components) load, laid out
# under KIT/root/ at their Debian paths so `cp -an KIT/root/. /` installs them
# without replacing anything the host already has.
#   perf/gpu_kit.sh BUILD KIT
set -eu
build=${1:?usage: gpu_kit.sh BUILD KIT}
kit=${2:?usage: gpu_kit.sh BUILD KIT}
rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/root"
for f in opdb opdb-comm libopdb.so libopdb_cuda.so libopdb_comm_nccl.so tests/cuda/opdb_cuda_check; do
  [ -e "$build/$f" ] && cp -L "$build/$f" "$kit/bin/"
done
ma=/usr/lib/x86_64-linux-gnu
keep() { # copy paths (files or folders) into the kit's root, links kept
  for p in "$@"; do [ -e "$p" ] && tar -C / -cf - "${p#/}" | tar -C "$kit/root" -xf -; done; true
}
keep $ma/openmpi $ma/pmix2 /etc/openmpi /usr/share/openmpi /usr/share/pmix /usr/bin/orted /usr/bin/orterun \
  /usr/bin/mpirun /etc/alternatives/mpirun /usr/bin/mpirun.openmpi
objs=$(find "$kit/bin" "$kit/root" -type f \( -name '*.so*' -o -perm -u+x \))
# shellcheck disable=SC2086
ldd $objs 2>/dev/null | awk '/=> \// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*)\.so|cuda|nccl|libcublas' |
  while read -r lib; do
    dir=$(readlink -f "$(dirname "$lib")") # /lib is a link to /usr/lib on Debian 12
    keep "$dir/$(basename "$lib")"
    keep "$(readlink -f "$lib")"
  done
find "$kit/root" -name '*.a' -delete
strip --strip-debug "$kit"/bin/* 2>/dev/null || true
du -sh "$kit"
