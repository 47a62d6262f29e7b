#!/bin/sh
# check_html.sh OPDB CASE_DB: `opdb check --html` writes one self-contained page (nothing
# fetched) with every checked kernel type, its cells, its error distribution and a coverage map
# of its shapes, text escaped, beside the usual table on stdout and exit 0; an unwritable path
# is a runtime failure (exit 1) naming the path.
set -u
opdb=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
db="$work/a<b"
cp -R "$src" "$db"
"$opdb" check --db "$db" --html "$work/r.html" >"$work/out.txt" 2>"$work/err"
rc=$?
[ $rc = 0 ] || fail "exit $rc: $(head -c 300 "$work/err")"
grep -q '^2 kernel types checked, 36 rows held out, 30 answered' "$work/out.txt" || fail "table missing on stdout"
h=$work/r.html
[ -s "$h" ] || fail "no HTML written"
head -c 15 "$h" | grep -q '<!DOCTYPE html>' || fail "not an HTML document"
if grep -Eq 'https?://|<script src|<link ' "$h"; then fail "the page fetches something"; fi
grep -q 'a&lt;b' "$h" || fail "the folder name is not escaped"
if grep -q 'a<b' "$h"; then fail "raw < from the input in the page"; fi
for k in Gelu MatMulV2 FusedInferAttentionScore; do grep -q "<h2>$k</h2>" "$h" || fail "no section for $k"; done
[ "$(grep -c '<h3>Error distribution</h3>' "$h")" = 2 ] || fail "expected an error distribution per checked kernel type"
[ "$(grep -c '<h3>Coverage of measured shapes</h3>' "$h")" = 2 ] || fail "expected a coverage map per checked kernel type"
grep -q '<tr><td>M in</th>\|<th>M in</th>' "$h" || fail "no coverage map of the M axis"
grep -q 'not checked: no sequence-length column' "$h" || fail "the attention table is not marked unchecked, with its reason"
[ "$(grep -c 'MatMulV2.csv:[0-9]*</td>\|Gelu.csv:[0-9]*</td>' "$h")" = 20 ] || fail "expected 20 worst rows"
"$opdb" check --db "$db" --html "$work/no/such/dir/r.html" >/dev/null 2>"$work/err2"
rc=$?
[ $rc = 1 ] || fail "unwritable --html: exit $rc, expected 1"
grep -q "no/such/dir" "$work/err2" || fail "unwritable --html: the error does not name the path"
echo ok
