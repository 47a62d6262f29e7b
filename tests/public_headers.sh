#!/bin/sh
# Every installed header (the public ones of include/opdb/) compiles on its
# own, in C17, with only the installed headers on the path: a public header
# that needs an internal one (include/opdb/ not installed, or src/...) or
# another header included first fails.
#   public_headers.sh CC INCLUDE_DIR PUBLIC_HEADER...
set -u
cc=$1 inc=$2
shift 2
[ $# -gt 0 ] || { echo "public_headers.sh: no public header given" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/include" "$tmp/include/opdb"
for h in "$@"; do cp "$inc/opdb/$h" "$tmp/include/opdb/" || exit 1; done
status=0 n=0
for h in "$@"; do
    name=opdb/$h
    printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$name" "$name" > "$tmp/t.c"
    if ! "$cc" -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$tmp/include" "$tmp/t.c" 2> "$tmp/err"; then
        echo "public_headers.sh: $name does not compile on its own with only the installed headers:" >&2
        head -5 "$tmp/err" >&2
        status=1
    fi
    n=$((n + 1))
done
[ $status -eq 0 ] && echo "$n public headers compile on their own"
exit $status
