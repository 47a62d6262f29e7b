#!/bin/sh
# html_chromium.sh OPDB_BINARY
# Renders `opdb compare --html` in headless Chromium and checks that the page
# ran its inline script without errors, fetched nothing, kept every input
# string as text (a kernel type named <script>... must not become a script)
# and drew exactly one predicted/measured bar pair per kernel type; then the
# per-shape drill-down (--shapes) written to stdout (--html -), checked
# against the per-shape CSV by html_drilldown_check.py.
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

# The per-shape drill-down (--shapes), with the page written to stdout
# (--html -): the same bytes as --html FILE, the console report on stderr.
if ! "$opdb_bin" compare --tc-trace in/t.json --prof-trace in/p.csv --data-dir in/data --output out/cmp2.json \
     --shapes in/shapes.csv --html - >out/drill.html 2>opdb2.err; then
  echo "opdb compare --shapes --html - failed:"; cat opdb2.err; exit 1
fi
"$opdb_bin" compare --tc-trace in/t.json --prof-trace in/p.csv --data-dir in/data --shapes in/shapes.csv \
  --html out/drill_file.html >opdb3.out 2>&1 || { echo "opdb compare --shapes --html FILE failed"; cat opdb3.out; exit 1; }
cmp -s out/drill.html out/drill_file.html || { echo "--html - and --html FILE wrote different pages"; fail=1; }
grep -q 'predicted vs measured, per forward pass' opdb2.err || { echo "--html -: the console report is not on stderr"; fail=1; }
if grep -q 'predicted vs measured, per forward pass' out/drill.html; then echo "--html -: the console report went into the page"; fail=1; fi
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
  --enable-logging=stderr --v=0 --dump-dom "file://$work/out/drill.html" >dom2.html 2>chrome2.log
rc=$?
if [ $rc -ne 0 ]; then echo "chromium exit status $rc (drill-down page)"; fail=1; fi
shape_kts=$(python3 -c 'import csv,sys; print(len({r["kernel_type"] for r in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8"))}))' in/shapes.csv)
shape_rows=$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")))))' in/shapes.csv)
grep -q 'data-loaded="ok"' dom2.html || { echo "drill-down page: page script did not report ok"; fail=1; }
grep -q 'data-drill-ok="ok"' dom2.html || { echo "drill-down: a block's rows are missing or not laid out when opened"; fail=1; }
grep -q "data-drill=\"$shape_kts\"" dom2.html || { echo "expected $shape_kts drill-down blocks"; fail=1; }
grep -q "data-drill-rows=\"$shape_rows\"" dom2.html || { echo "expected $shape_rows shape rows"; fail=1; }
grep -q 'data-scripts="1"' dom2.html || { echo "the drill-down page holds a script besides its own"; fail=1; }
if grep -q '<script>alert' dom2.html; then echo "drill-down: an input string became markup"; fail=1; fi
python3 "$here/html_drilldown_check.py" dom2.html in/shapes.csv out/cmp2.json || fail=1
if grep -E 'CONSOLE.*(Uncaught|Error|Refused)' chrome2.log; then echo "console errors on the drill-down page (above)"; fail=1; fi
if grep -q 'kt-shapes' out/report.html; then echo "a page without --shapes has a drill-down"; fail=1; fi

[ $fail = 0 ] && echo "html_chromium: ok ($kinds kernel types, drill-down of $shape_kts kernel types)"
exit $fail
