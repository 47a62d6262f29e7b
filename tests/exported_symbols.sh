#!/bin/sh
# libopdb exports exactly the functions and data declared OPDB_API in
# include/opdb/ (it is built with -fvisibility=hidden): no internal symbol
# leaks into the ABI, and no marked declaration lacks its definition.
#   exported_symbols.sh LIBOPDB.so INCLUDE_DIR
set -u
lib=$1 inc=$2
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | grep -v '^_' | sort -u)
# the name declared on each OPDB_API line: the last identifier before ( or [ or ;
want=$(cat "$inc"/*.h | grep -E '^[[:space:]]*OPDB_API[[:space:]]' | sed -E 's/[[:space:]]*(\(|\[|;).*//; s/.*[^A-Za-z0-9_]//' | sort -u)
[ -n "$have" ] || { echo "exported_symbols.sh: nm found no exported symbol in $lib" >&2; exit 1; }
[ -n "$want" ] || { echo "exported_symbols.sh: no OPDB_API declaration under $inc" >&2; exit 1; }
extra=$(printf '%s\n' "$have" | grep -vxF "$want")
missing=$(printf '%s\n' "$want" | grep -vxF "$have")
status=0
if [ -n "$extra" ]; then
    echo "exported but not declared OPDB_API in $inc:" >&2
    printf '  %s\n' $extra >&2
    status=1
fi
if [ -n "$missing" ]; then
    echo "declared OPDB_API but not exported by $lib:" >&2
    printf '  %s\n' $missing >&2
    status=1
fi
[ $status -eq 0 ] && echo "$(printf '%s\n' "$have" | wc -l) symbols exported, all declared OPDB_API"
exit $status
