#!/bin/sh
# diff_html.sh OPDB CASE_IN: `opdb diff --html` writes one self-contained page
# (nothing fetched) with every changed row, inputs escaped, beside the usual
# Markdown on stdout and the usual exit status; an unwritable path is a
# runtime failure (exit 1) naming the path.
set -u
opdb=$1
in=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$opdb" diff "$in/old" "$in/new" --html "$work/r.html" >"$work/out.md" 2>"$work/err"
rc=$?
[ $rc = 1 ] || fail "exit $rc, expected 1 (a REGRESSION)"
grep -q '^| REGRESSION | 1 |$' "$work/out.md" || fail "Markdown summary missing on stdout"
h=$work/r.html
[ -s "$h" ] || fail "no HTML written"
head -c 15 "$h" | grep -q '<!DOCTYPE html>' || fail "not an HTML document"
if grep -Eq 'https?://|<script src|<link ' "$h"; then fail "the page fetches something"; fi
for v in REGRESSION GAIN DRIFT UNKNOWN ADDED REMOVED STATUS_CHANGE; do
    grep -q "<td>$v</td>" "$h" || fail "no $v row"
done
grep -q '&quot;8,128;8,128&quot; -&gt; &quot;8,128&quot;' "$h" || fail "row text not escaped"
if grep -q '"8,128;8,128"' "$h"; then fail "raw quotes from the input in the page"; fi
[ "$(grep -c '<tr class="bad">' "$h")" = 2 ] || fail "REGRESSION rows: expected the summary row and one change"
"$opdb" diff "$in/old" "$in/new" --html "$work/no/such/dir/r.html" >/dev/null 2>"$work/err2"
rc=$?
[ $rc = 1 ] || fail "unwritable --html: exit $rc, expected 1"
grep -q "no/such/dir" "$work/err2" || fail "unwritable --html: the error does not name the path"
echo ok
