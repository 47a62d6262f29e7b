#!/bin/sh
# bench_progress_pty.sh OPDB SRC
# `opdb bench` on a pseudo-terminal of 60 columns, then 80: the progress line
# counts the rows of every pass (done/total), names the row being measured,
# shows a rate and an ETA once it has them, is never wider than the terminal
# and is erased before each row's [OK] line, which fits the width too (the
# shapes cut with "..."). Not on a terminal (a pipe): no progress line, and
# [OK] lines fit 80 columns. Exit 77 (skip) without script(1).
. "$(dirname "$0")/pty_common.sh"
# 7 rows, 2 interleaved passes, short budgets: 14 rows measured in a few seconds
args="--hot-cache --threads 1 --min-samples 3 --min-time 0.05 --timeout 0.4 --rounds 2"
for cols in 60 80; do
  rm -rf db
  cp -R "$src/examples/bench/db" db
  script -qfc "stty cols $cols; '$opdb' bench --database-path db $args" /dev/null >tty$cols.out 2>&1
  grep -q '^\[SUMMARY\] Success: 3, Failed: 0' tty$cols.out || { bad "$cols columns: the run did not finish"; cat tty$cols.out; }
  # bar lines: "bench [###---] k/14 ... <csv>:<row>"
  bars=$(plain tty$cols.out | grep -E '^bench .*[0-9]+/14')
  [ -n "$bars" ] || bad "$cols columns: no progress line with done/14 (7 rows x 2 passes)"
  echo "$bars" | grep -Eq '(Add|MatMulV2|RmsNorm)\.csv:[0-9]+' || bad "$cols columns: the progress line never names the row"
  echo "$bars" | grep -q '/s ' || bad "$cols columns: no rate on the progress line"
  echo "$bars" | grep -q 'ETA [0-9]*:[0-9][0-9]' || bad "$cols columns: no ETA on the progress line"
  echo "$bars" | grep -q ' 13/14' || bad "$cols columns: the count never reached 13/14 (the last row's line)"
  # [OK] lines fit the terminal; the bar leaves its last column free
  long=$(plain tty$cols.out | grep '^\[OK\]' | awk -v w="$cols" 'length($0) > w' | head -n 3)
  [ -z "$long" ] || { bad "$cols columns: [OK] lines wider than the terminal:"; echo "$long"; }
  longbar=$(echo "$bars" | awk -v w="$cols" 'length($0) > w - 1' | head -n 3)
  [ -z "$longbar" ] || { bad "$cols columns: progress lines in the last column:"; echo "$longbar"; }
  [ "$(plain tty$cols.out | grep -c '^\[OK\] ')" = 7 ] || bad "$cols columns: expected 7 [OK] lines, each at the start of a line"
  # the bar is erased before each [OK] line: "\r ESC[K" right before it, never bar text
  [ "$(grep -c "$(printf '\r\033\\[K\\[OK\\]')" tty$cols.out)" = 7 ] || bad "$cols columns: an [OK] line not preceded by the bar's erasure"
  plain tty$cols.out | grep -q '^bench .*\[OK\]' && bad "$cols columns: an [OK] line drawn after a bar"
done
# 60 columns are too few for some of the example's shapes: cut with "...", or left out, never wrapped
plain tty60.out | grep -Eq '^\[OK\] [A-Za-z0-9]+\.csv:[0-9]+ .*\.\.\. median=' || bad "60 columns: no shapes cut with ..."
plain tty60.out | grep -Eq '^\[OK\] [A-Za-z0-9]+\.csv:[0-9]+  ' && bad "60 columns: a double space where the shapes were left out"
# the progress line names the row even once the rate and ETA take room
plain tty60.out | grep -E '^bench .*ETA' | grep -Eq '\.csv:[0-9]+$' || bad "60 columns: the row's name is lost beside the rate and ETA"
# a pipe: no progress line, [OK] lines fit 80 columns
rm -rf db
cp -R "$src/examples/bench/db" db
"$opdb" bench --database-path db $args >pipe.out 2>pipe.err || bad "piped run: exit $?"
grep -q "$(printf '\r')" pipe.err && bad "a progress line on a pipe"
[ "$(grep -c '^\[OK\] ' pipe.err)" = 7 ] || bad "piped: expected 7 [OK] lines"
long=$(awk 'length($0) > 80' pipe.err | grep '^\[OK\]' | head -n 3)
[ -z "$long" ] || { bad "piped: [OK] lines wider than 80 columns:"; echo "$long"; }
# --no-progress on a terminal: no bar
rm -rf db
cp -R "$src/examples/bench/db" db
script -qfc "stty cols 80; '$opdb' bench --database-path db $args --no-progress" /dev/null >nop.out 2>&1
plain nop.out | grep -Eq '^bench .*/14' && bad "--no-progress still drew the progress line"
[ $fail = 0 ] && echo "bench_progress_pty: ok"
exit $fail
