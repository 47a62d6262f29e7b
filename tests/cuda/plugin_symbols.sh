#!/bin/sh
# Every opdb function the CUDA plugin imports must be exported by the opdb
# executable (ENABLE_EXPORTS), link-time optimisation included: a missing one
# only shows when the plugin is loaded on a GPU host.
#   plugin_symbols.sh OPDB LIBOPDB_CUDA
set -u
need=$(nm -D --undefined-only "$2" | awk '{print $NF}' | grep '^opdb_' | sort -u)
have=$(nm -D --defined-only "$1" | awk '{print $NF}' | sort -u)
[ -n "$need" ] || { echo "plugin_symbols.sh: $2 imports no opdb_ function (nm failed?)" >&2; exit 1; }
missing=$(printf '%s\n' "$need" | while read -r s; do printf '%s\n' "$have" | grep -qx "$s" || echo "$s"; done)
if [ -n "$missing" ]; then
    echo "opdb does not export what the CUDA plugin needs: $missing" >&2
    exit 1
fi
echo "plugin imports $(printf '%s\n' "$need" | wc -l) opdb functions; all exported"
