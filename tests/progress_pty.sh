#!/bin/sh
# progress_pty.sh OPDB SRC
# `opdb parse` on a 40-column pseudo-terminal: the progress line shows MB,
# is never wider than the terminal (so it cannot wrap into stale lines) and
# is erased before the completion line. Exit 77 (skip) without script(1).
. "$(dirname "$0")/pty_common.sh"
cp "$src/tests/cli/parse_quirks_basic/in/kernel_details.csv" k.csv 2>/dev/null ||
  cp "$(ls "$src"/tests/cli/parse_*/in/kernel_details.csv | head -n 1)" k.csv
script -qfc "stty cols 40; '$opdb' parse --profiling-path k.csv --database-path db" /dev/null >tty.out 2>&1
grep -q 'MB' tty.out || { echo "no MB in the progress line"; fail=1; }
# every redraw (text between carriage returns, escapes removed) fits in 39 columns
long=$(tr '\r' '\n' <tty.out | sed 's/\x1b\[K//g' | awk 'length($0) > 39 && /\[[#-]*\]|MB/' | head -n 3)
[ -z "$long" ] || { echo "lines wider than the terminal:"; echo "$long"; fail=1; }
# the last bar is erased: \r ESC[K comes right before the completion message
last_clear=$(grep -c "$(printf '\r\033\\[K')" tty.out)
[ "$last_clear" -ge 1 ] || { echo "the bar is never cleared"; fail=1; }
tail -c 400 tty.out | tr '\r' '\n' | sed 's/\x1b\[K//g' | grep -v '^$' | tail -n 1 | grep -q '\[[#-]*\]' &&
  { echo "a bar is left on the last line"; fail=1; }
[ $fail = 0 ] && echo "progress_pty: ok"
exit $fail
