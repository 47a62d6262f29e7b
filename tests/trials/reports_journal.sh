#!/bin/sh
# reports_journal.sh OPDB SRC: a run is committed once its database folder's journal is written,
# and that journal is written after those of the folder's own subfolders (reports/). A reports/
# journal without one is a run killed before its commit: the next writer rolls it back (the old
# reports, no staged file left), never forward (which left new reports next to old tables).
set -u
opdb=$1
src=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
state() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs -d '\n' cksum) 2>/dev/null; }
mkdir "$w/base"; cp -R "$src/examples/bench/db/." "$w/base/"
rm -rf "$w/db"; cp -R "$w/base" "$w/db"; mkdir -p "$w/db/reports"
S0=$(state "$w/db")
r1=profile_update_report_20990101_000000.md; r2=duration_gap_hotspots_full_20990101_000000.csv
echo new >"$w/db/reports/.$r1.tmp.AbC123"; echo new >"$w/db/reports/.$r2.tmp.DeF456"
echo new >"$w/db/.Add.csv.tmp.GhI789"
printf 'opdb-journal 2\n.%s.tmp.AbC123\000%s\000-\000.%s.tmp.DeF456\000%s\000-\000end\n' "$r1" "$r1" "$r2" "$r2" >"$w/db/reports/.opdb-journal"
"$opdb" validate --repair --database-path "$w/db" >/dev/null 2>"$w/err"; rc=$?
if [ $rc = 0 ] && [ "$(state "$w/db")" = "$S0" ]; then echo "uncommitted reports/ journal: rolled back"
else bad "a reports/ journal without its folder's journal: exit $rc, the folder is not its old version: $(head -c 300 "$w/err")"; fi
# both journals written (the run committed): both completed, reports/ first
rm -rf "$w/db"; cp -R "$w/base" "$w/db"; mkdir -p "$w/db/reports"
echo new >"$w/db/reports/.$r1.tmp.AbC123"; echo new >"$w/db/reports/.$r2.tmp.DeF456"
echo new >"$w/db/.Add.csv.tmp.GhI789"; echo new >"$w/db/.RmsNorm.csv.tmp.JkL012"
printf 'opdb-journal 2\n.%s.tmp.AbC123\000%s\000-\000.%s.tmp.DeF456\000%s\000-\000end\n' "$r1" "$r1" "$r2" "$r2" >"$w/db/reports/.opdb-journal"
printf 'opdb-journal 2\n.Add.csv.tmp.GhI789\000Add.csv\000-\000.RmsNorm.csv.tmp.JkL012\000RmsNorm.csv\000-\000end\n' >"$w/db/.opdb-journal"
"$opdb" validate --repair --database-path "$w/db" >/dev/null 2>"$w/err"
for f in reports/$r1 reports/$r2 Add.csv RmsNorm.csv; do
  [ "$(cat "$w/db/$f" 2>/dev/null)" = new ] || bad "a committed run's $f was not completed: $(head -c 300 "$w/err")"
done
[ -z "$(find "$w/db" -name '.*.tmp.*' -o -name '.opdb-journal')" ] || bad "a committed run's journal or temp file left"
[ $fail = 0 ] && echo "committed run (both journals): completed"
[ $fail = 0 ] && echo "reports journal: ok"
exit $fail
