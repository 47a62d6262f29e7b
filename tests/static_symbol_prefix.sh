#!/bin/sh
# static_symbol_prefix.sh NM LIBOPDB.a DB CC [LINK_ARGS...]: every global symbol the installed
# libopdb.a defines carries the opdb_ prefix, and a program defining its own cell(), load_csv()
# and gfind() (tests/static_clash.c) links statically against it and runs (a lookup on DB).
set -u
nm=$1 lib=$2 db=$3 cc=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$lib" ] || { echo "static_symbol_prefix.sh: no $lib" >&2; exit 1; }
all=$("$nm" -g --defined-only "$lib" | awk 'NF == 3 {print $3}')
[ -n "$all" ] || { echo "static_symbol_prefix.sh: nm found no global symbol in $lib" >&2; exit 1; }
# AddressSanitizer adds an ODR indicator beside each exported global (__odr_asan.opdb_x): the
# sanitizer's name for an opdb_ one, which no C program can define (it holds a '.').
bad=$(printf '%s\n' "$all" | grep -v '^opdb_' | grep -Ev '^__odr_asan(\.|_gen_)opdb_')
if [ -n "$bad" ]; then
    echo "global symbols of $lib without the opdb_ prefix ($(printf '%s\n' "$bad" | wc -l)):" >&2
    printf '  %s\n' $bad >&2
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opdb-clash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=c17 -Wall -Wextra -Werror -I"$here/../include" -o "$tmp/clash" "$here/static_clash.c" "$lib" "$@" ||
    { echo "static_symbol_prefix.sh: a program with its own cell()/load_csv()/gfind() does not link against $lib" >&2; exit 1; }
out=$("$tmp/clash" "$db") || { echo "static_symbol_prefix.sh: static_clash failed" >&2; exit 1; }
case $out in
    *"MatMulV2 4.084 us") ;;
    *) echo "static_symbol_prefix.sh: unexpected output: $out" >&2; exit 1 ;;
esac
echo "$(printf '%s\n' "$all" | wc -l) global symbols in $lib, all opdb_; $out"
