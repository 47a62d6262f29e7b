#!/bin/sh
# html_chromium.sh OPDB_BINARY
# Renders `opdb compare --html` in headless Chromium and checks that the page
# ran its inline script without errors, fetched nothing, kept every input
# string as text (a kernel type named <script>... must not become a script)
# and drew exactly one predicted/measured bar pair per kernel type.
# Exit 77 (skip) when no chromium is installed.
set -u
opdb_bin=$1
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "html_chromium.sh: chromium not installed: skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$here/cli/compare_html/in" "$work/in"
cd "$work" || exit 1
if ! "$opdb_bin" compare --tc-trace in/t.json --prof-trace in/p.csv --name '<b>S</b> & "q"' --data-dir in/data \
     --output out/cmp.json --html out/report.html >/dev/null 2>opdb.err; then
  echo "opdb compare failed:"; cat opdb.err; exit 1
fi
# a private profile so nothing from the user's browser leaks in
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
  --enable-logging=stderr --v=0 --dump-dom "file://$work/out/report.html" >dom.html 2>chrome.log
rc=$?
fail=0
if [ $rc -ne 0 ]; then echo "chromium exit status $rc"; fail=1; fi
kinds=$(grep -c '"kernel_type":' out/cmp.json)
grep -q 'data-loaded="ok"' dom.html || { echo "page script did not report ok (bars, scatter, histogram)"; fail=1; }
for part in 'class="summary"' 'class="scatter"' 'class="hist"' 'class="diag"'; do
  grep -q "$part" dom.html || { echo "the page lacks $part"; fail=1; }
done
grep -q "data-pairs=\"$kinds\"" dom.html || { echo "expected $kinds bar pairs:"; grep -o '<body[^>]*>' dom.html; fail=1; }
grep -q "data-rows=\"$kinds\"" dom.html || { echo "expected $kinds table rows"; fail=1; }
grep -q 'data-scripts="1"' dom.html || { echo "the page holds a script besides its own"; fail=1; }
if grep -q '<script>alert' dom.html; then echo "an input string became markup"; fail=1; fi
grep -q '&lt;script&gt;alert(1)&lt;/script&gt;&amp;' dom.html || { echo "the escaped kernel type is not shown"; fail=1; }
if grep -E 'CONSOLE.*(Uncaught|Error|Refused)' chrome.log; then echo "console errors (above)"; fail=1; fi
[ $fail = 0 ] && echo "html_chromium: ok ($kinds kernel types)"
exit $fail
