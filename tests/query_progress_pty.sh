#!/bin/sh
# query_progress_pty.sh OPDB SRC
# `opdb query` with stderr on a pseudo-terminal: reading a regular file, a
# progress line counts the bytes read against the file's size, reaches the
# whole file and is erased before the summary line (its rate and ETA come
# with time, which a test does not measure). Not drawn
# when the queries come from a pipe (no size to count against), when the
# results go to the terminal too, or when stderr is not a terminal. Exit 77
# (skip) without script(1). Also: with stdin the terminal, one line says that
# queries are read from it.
. "$(dirname "$0")/pty_common.sh"
db=$src/tests/cli/query_strict_nothing_default/in/db
# enough lines for several reads (the batch reads 64 KiB at a time): ~0.8 MB
q='{"id": 1, "op": "aten.mm.default", "args": [{"shape": [16, 128], "dtype": "bfloat16"}, {"shape": [128, 256], "dtype": "bfloat16"}]}'
i=0
while [ $i -lt 6000 ]; do echo "$q"; i=$((i + 1)); done >q.jsonl
size=$(wc -c <q.jsonl)
script -qfc "stty cols 80; '$opdb' query --db '$db' --no-interpolation < q.jsonl > r.jsonl" /dev/null >tty.out 2>&1
[ "$(wc -l <r.jsonl)" = 6000 ] || bad "the batch did not answer every line"
bars=$(plain tty.out | grep -E '^query \[')
[ -n "$bars" ] || { bad "no progress line on a terminal"; cat tty.out; }
mb=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')
echo "$bars" | grep -q "$mb/$mb MB" || bad "the progress line never reached $mb/$mb MB"
grep -q "$(printf '\r\033\\[Kopdb query: answered 6000')" tty.out || bad "the summary line is not preceded by the bar's erasure"
plain tty.out | grep -q '^query .*opdb query: answered' && bad "the summary drawn after a bar"
# from a pipe: no size, no bar
script -qfc "stty cols 80; cat q.jsonl | '$opdb' query --db '$db' --no-interpolation > r.jsonl" /dev/null >pipe.out 2>&1
plain pipe.out | grep -q '^query \[' && bad "a progress line for queries from a pipe"
# results on the terminal: no bar among them
script -qfc "stty cols 80; head -n 3 q.jsonl > q3.jsonl; '$opdb' query --db '$db' --no-interpolation < q3.jsonl" /dev/null >both.out 2>&1
plain both.out | grep -q '^query \[' && bad "a progress line among results written to the terminal"
[ "$(plain both.out | grep -c '"hit": true')" = 3 ] || bad "the results on the terminal are not the 3 answers"
# stdin the terminal (no `< file`): one line says what the wait is for; never otherwise
script -qfc "'$opdb' query --db '$db'" /dev/null </dev/null >stdin.out 2>&1
plain stdin.out | grep -q '^opdb query: reading JSON query lines from the terminal (Ctrl-D ends them' ||
  { bad "no hint while reading queries from the terminal"; cat stdin.out; }
grep -q 'reading JSON query lines' tty.out pipe.out && bad "the terminal hint with stdin not a terminal"
# stderr not a terminal: nothing but the summary
"$opdb" query --db "$db" --no-interpolation <q.jsonl >r.jsonl 2>err.txt
[ "$(cat err.txt)" = "opdb query: answered 6000 queries: 6000 hit, 0 miss, 0 error, 0 unsupported" ] ||
  { bad "stderr off a terminal is not the summary alone:"; cat err.txt; }
[ $fail = 0 ] && echo "query progress: ok"
exit $fail
