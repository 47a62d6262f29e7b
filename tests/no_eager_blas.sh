#!/bin/sh
# OpenBLAS must not be a load-time dependency of opdb or libopdb: its library
# constructor starts a worker thread that busy-waits for ~80 ms of CPU in
# every process (every command paid it; `opdb update` on a 2-core machine
# lost 2-4% of its time to it). The CPU backend loads it when it starts.
#   no_eager_blas.sh FILE...
set -u
status=0
for f in "$@"; do
    if ! needed=$(readelf -d "$f" 2>/dev/null | grep NEEDED); then
        echo "no_eager_blas.sh: cannot read the dynamic section of $f" >&2
        exit 1
    fi
    if printf '%s\n' "$needed" | grep -qi 'blas'; then
        echo "no_eager_blas.sh: $f loads BLAS at start-up:" >&2
        printf '%s\n' "$needed" | grep -i blas >&2
        status=1
    fi
done
exit $status
