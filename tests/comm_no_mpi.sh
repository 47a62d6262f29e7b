#!/bin/sh
# `opdb` must start without MPI: libmpi is no load-time dependency of opdb,
# `opdb --help` / `opdb comm --help` / `opdb comm bench --help` run without
# mapping it, and a missing helper gives one clear line.
#   comm_no_mpi.sh OPDB
set -u
opdb=$1
if readelf -d "$opdb" | grep NEEDED | grep -qi mpi; then echo "opdb needs libmpi at load time" >&2; exit 1; fi
if ldd "$opdb" | grep -qi 'libmpi'; then echo "opdb maps libmpi via a dependency" >&2; exit 1; fi
for args in "--help" "comm --help" "comm bench --help"; do
  # LD_DEBUG=files lists every object the loader maps, also any dlopen'ed later
  out=$(LD_DEBUG=files "$opdb" $args 2>&1 >/dev/null) || { echo "opdb $args failed" >&2; exit 1; }
  if printf '%s\n' "$out" | grep -q 'libmpi'; then echo "opdb $args mapped libmpi" >&2; exit 1; fi
done
"$opdb" comm --help | grep -q 'bench' || { echo "opdb comm --help lacks bench" >&2; exit 1; }
err=$(OPDB_COMM_HELPER=/nonexistent/opdb-comm "$opdb" comm bench --ops all_reduce 2>&1)
rc=$?
[ $rc = 1 ] || { echo "missing helper: exit $rc" >&2; exit 1; }
[ "$err" = "opdb comm bench: the opdb-comm MPI helper is not available in this build (no MPI was found when opdb was configured)" ] ||
  { echo "missing helper message: $err" >&2; exit 1; }
# --time-budget: usage errors before any MPI (exit 2, one line after the usage line)
for args in "--time-budget 0" "--time-budget x" "--time-budget 4000" "-n 5 --time-budget 1" "--time-budget"; do
  err=$("$opdb" comm bench $args 2>&1 >/dev/null)
  rc=$?
  [ $rc = 2 ] || { echo "comm bench $args: exit $rc, expected 2" >&2; exit 1; }
  printf '%s\n' "$err" | grep -q '^opdb comm bench: error: argument --time-budget: ' ||
    { echo "comm bench $args: $err" >&2; exit 1; }
done
"$opdb" comm bench --help | grep -q -- '--time-budget S' || { echo "comm bench --help lacks --time-budget" >&2; exit 1; }
# a size that is no whole number of elements (1 byte of bfloat16 moved nothing
# but was recorded as a 1-byte row): a usage error before any MPI
for args in "--bytes-grid 1" "--bytes-grid 1024 6 --dtype torch.float32" "--bytes-grid 0"; do
  err=$("$opdb" comm bench $args 2>&1 >/dev/null)
  rc=$?
  [ $rc = 2 ] || { echo "comm bench $args: exit $rc, expected 2" >&2; exit 1; }
  printf '%s\n' "$err" | grep -q '^opdb comm bench: error: argument --bytes-grid: [0-9]* is not a whole number of torch\.[a-z0-9]* elements' ||
    { echo "comm bench $args: $err" >&2; exit 1; }
done
exit 0
