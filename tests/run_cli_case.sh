#!/bin/sh
# run_cli_case.sh OPDB_BINARY CASE_DIR [quirks]
# Runs one golden case (see tests/cli/README.md) and compares stdout, exit
# status, stderr lines and the written tree with expected/. With "quirks", the
# case's second mode: cmd_quirks against expected_quirks/ (a dual-mode case).
set -u
opdb_bin=$1
case_dir=$(cd "$2" && pwd)
cmd_file=cmd
exp=expected
if [ "${3:-}" = quirks ]; then cmd_file=cmd_quirks; exp=expected_quirks; fi
bindir=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$bindir" "$work"' EXIT
ln -s "$(cd "$(dirname "$opdb_bin")" && pwd)/$(basename "$opdb_bin")" "$bindir/opdb"
cp -R "$case_dir/in" "$work/in"
(cd "$work" && PATH="$bindir:$PATH" sh -c "$(cat "$case_dir/$cmd_file")" >"$work/.stdout" 2>"$work/.stderr"; echo $? >"$work/.rc")
ok=1
if ! cmp -s "$work/.stdout" "$case_dir/$exp/stdout"; then
  echo "stdout differs:"; diff "$case_dir/$exp/stdout" "$work/.stdout" | head -20; ok=0
fi
if ! cmp -s "$work/.rc" "$case_dir/$exp/rc"; then
  echo "exit status $(cat "$work/.rc"), expected $(cat "$case_dir/$exp/rc")"; ok=0
fi
if [ -f "$case_dir/$exp/stderr_contains" ]; then
  while IFS= read -r line; do
    grep -qF -- "$line" "$work/.stderr" || { echo "stderr lacks: $line"; ok=0; }
  done <"$case_dir/$exp/stderr_contains"
fi
mkdir "$work/.exp" "$work/.got"
(cd "$case_dir/$exp" && tar cf - --exclude=./stdout --exclude=./rc --exclude=./stderr_contains .) | (cd "$work/.exp" && tar xf -)
(cd "$work" && tar cf - --exclude=./in --exclude=./.stdout --exclude=./.stderr --exclude=./.rc --exclude=./.exp --exclude=./.got .) | (cd "$work/.got" && tar xf -)
if ! diff -r "$work/.exp" "$work/.got" >"$work/.diff" 2>&1; then
  echo "written files differ:"; head -30 "$work/.diff"; ok=0
fi
if [ $ok = 0 ]; then
  echo "--- stderr:"; head -20 "$work/.stderr"
  exit 1
fi
exit 0
