#!/bin/sh
# libopdb.so exports exactly the functions of its version script, and the
# version script lists exactly the OPDB_API declarations of the installed
# (public) headers: no internal symbol leaks into the ABI, no public
# declaration lacks its export, and nothing is exported that an installed
# header does not declare.  Internal headers (include/opdb/ but not
# installed) may declare OPDB_API functions: the static library's users
# (the CLI, tests, tools) call them; libopdb.so keeps them local.
#   exported_symbols.sh LIBOPDB.so LIBOPDB.map INCLUDE_DIR PUBLIC_HEADER...
set -u
lib=$1 map=$2 inc=$3
shift 3
[ $# -gt 0 ] || { echo "exported_symbols.sh: no public header given" >&2; exit 2; }
have=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ {print $3}' | sed 's/@.*//' | grep -v '^_' | grep -v '^OPDB_[0-9]' | sort -u)
# the global names of the version script: the lines between "global:" and "local:"
listed=$(sed -n '/global:/,/local:/p' "$map" | grep -E '^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;' | sed -E 's/[[:space:]]*//g; s/;//' | sort -u)
# the name declared on each OPDB_API line of a public header: the last identifier before ( or [ or ;
want=$(for h in "$@"; do cat "$inc/$h"; done | grep -E '^[[:space:]]*OPDB_API[[:space:]]' |
       sed -E 's/[[:space:]]*(\(|\[|;).*//; s/.*[^A-Za-z0-9_]//' | sort -u)
[ -n "$have" ] || { echo "exported_symbols.sh: nm found no exported symbol in $lib" >&2; exit 1; }
[ -n "$listed" ] || { echo "exported_symbols.sh: no global symbol in $map" >&2; exit 1; }
[ -n "$want" ] || { echo "exported_symbols.sh: no OPDB_API declaration in the public headers" >&2; exit 1; }
status=0
# report NAME_OF_CHECK A B: the names of A that B lacks
report() {
    extra=$(printf '%s\n' "$2" | grep -vxF "$3")
    if [ -n "$extra" ]; then
        echo "$1:" >&2
        printf '  %s\n' $extra >&2
        status=1
    fi
}
report "exported by $lib but not in $map" "$have" "$listed"
report "in $map but not exported by $lib" "$listed" "$have"
report "exported but not declared OPDB_API in a public header ($*)" "$have" "$want"
report "declared OPDB_API in a public header but not in $map" "$want" "$listed"
[ $status -eq 0 ] && echo "$(printf '%s\n' "$have" | wc -l) symbols exported (version OPDB_1), all declared OPDB_API in the $# public headers"
exit $status
