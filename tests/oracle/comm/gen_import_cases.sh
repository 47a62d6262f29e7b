#!/bin/sh
# Writes tests/cli/comm_import_*/expected/ (out/*.csv, stdout, rc,
# stderr_contains) from the Python oracle import_logs.py, never from opdb.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../cli"
for c in comm_import_*; do
  args=$(sed -e 's/^opdb comm import //' -e 's/--logs //' "$c/cmd")
  rm -rf "$c/expected" "$c/.w"
  mkdir -p "$c/.w" "$c/expected"
  cp -R "$c/in" "$c/.w/in"
  rc=0
  (cd "$c/.w" && python3 "$here/import_logs.py" $args >../expected/stdout 2>../expected/stderr_contains) || rc=$?
  echo $rc >"$c/expected/rc"
  [ -d "$c/.w/out" ] && mv "$c/.w/out" "$c/expected/out"
  [ -s "$c/expected/stderr_contains" ] || rm "$c/expected/stderr_contains"
  rm -rf "$c/.w"
done
