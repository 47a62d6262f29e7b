#!/bin/sh
# Every installed header (include/opdb/*.h) compiles on its own, in C17,
# with only the install's include folder on the path: a public header that
# needs an internal one (src/...) or another header included first fails.
#   public_headers.sh CC INCLUDE_DIR
set -u
cc=$1 inc=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0 n=0
for h in "$inc"/opdb/*.h; do
    name=opdb/$(basename "$h")
    printf '#include "%s"\n#include "%s"\nint main(void) { return 0; }\n' "$name" "$name" > "$tmp/t.c"
    if ! "$cc" -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$inc" "$tmp/t.c" 2> "$tmp/err"; then
        echo "public_headers.sh: $name does not compile on its own:" >&2
        head -5 "$tmp/err" >&2
        status=1
    fi
    n=$((n + 1))
done
[ $status -eq 0 ] && echo "$n public headers compile on their own"
exit $status
