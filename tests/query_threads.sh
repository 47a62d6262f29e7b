#!/bin/sh
# `opdb query --threads`: the batch answered on several threads gives the
# bytes of one thread, over a generated trace of about 50,000 lines (every
# query class of perf/gen_query_bench.py, kernel-level lines, bad lines,
# blank and CRLF lines, lines longer than a read block, a last line without
# newline), from a file and from a pipe fed in small pieces, in both modes
# and with --explain; --stats the same; the result cache and the line memo on or off the same; a program that writes one query and
# waits for its answer gets it at once; and a stdout that fails (a full
# device, a closed descriptor) ends the batch with one error line, exit 1,
# as does a stdin that cannot be read.
#   query_threads.sh OPDB GEN_QUERY_BENCH_PY
set -u
opdb=$1
gen=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "query_threads.sh: $*"; exit 1; }
python3 "$gen" "$work" 45000 >/dev/null || fail "generator failed"
db="$work/db"
python3 - "$work/queries.jsonl" "$work/q" <<'PY' || fail "mixing the input failed"
import random, sys
rng = random.Random(7)
lines = open(sys.argv[1]).read().splitlines()
bad = ['not json', '{"id": 1, "op": ', '[]', '{"op": 5}', '{"id": {"a": 1}, "op": "aten.mm.default"}', '\u00e9\u00e9',
       '{"id": "x", "op": "aten.mm.default", "args": [{"shape": [-1, 2]}]}']
kernel = ['{"id": "k%d", "kernel": "MatMulV2", "inputs": [{"shape": [%d, 4096], "dtype": "DT_BF16"}, '
          '{"shape": [4096, 1024], "dtype": "DT_BF16"}]}',
          '{"id": "k%d", "kernel": "Nope", "inputs": [{"shape": [%d], "dtype": "DT_BF16"}], "interpolate": false}']
out = []
for i, l in enumerate(lines):
    r = rng.random()
    if r < 0.03:
        out.append(rng.choice(bad))
    elif r < 0.05:
        out.append(rng.choice(kernel) % (i, rng.choice([1, 16, 100, 1024])))
    elif r < 0.07:
        out.append(rng.choice(['', '   ', '\t', '\r']))
    elif r < 0.10:
        l += '\r'
    if i % 9000 == 17:
        out.append('{"id": "%s", "op": "aten.mm.default"}' % ('y' * 300000))
    out.append(l)
with open(sys.argv[2], 'w', newline='') as f:
    f.write('\n'.join(out))  # the last line without newline
PY
n=$(grep -c '[^[:space:]]' "$work/q")
[ "$n" -gt 45000 ] || fail "only $n query lines"
run() { # THREADS OUT [flags...]: opdb query over the mixed input
  t=$1 o=$2
  shift 2
  "$opdb" query --db "$db" --tp-size 8 --grid 8,2 --threads "$t" "$@" <"$work/q" >"$o" 2>"$o.err" ||
    fail "--threads $t $*: exit $? ($(head -3 "$o.err"))"
}
run 1 "$work/o1" --stats
run 4 "$work/o4" --stats
cmp "$work/o1" "$work/o4" || fail "--threads 4 differs from --threads 1"
cmp "$work/o1.err" "$work/o4.err" || fail "--stats differs: $(cat "$work/o1.err" "$work/o4.err")"
[ "$(wc -l <"$work/o1")" = "$n" ] || fail "$(wc -l <"$work/o1") result lines for $n query lines"
grep -q '"source": "ERROR"' "$work/o1" && grep -q '"source": "INTERPOLATED"' "$work/o1" &&
  grep -q '"source": "MEASURED"' "$work/o1" && grep -q '"id": "k' "$work/o1" || fail "the mix lacks a class"
"$opdb" query --db "$db" --tp-size 8 --grid 8,2 <"$work/q" >"$work/od" 2>/dev/null || fail "default threads: exit $?"
cmp "$work/o1" "$work/od" || fail "the default thread count differs from --threads 1"
# the result cache (off by default) answers repeats with the computed bytes, however small it is
run 4 "$work/oc" --result-cache 65536
cmp "$work/o1" "$work/oc" || fail "--result-cache 65536 differs from the default (off)"
run 2 "$work/oc1" --result-cache 1
cmp "$work/o1" "$work/oc1" || fail "--result-cache 1 differs from the default (off)"
"$opdb" query --db "$db" --result-cache x </dev/null >/dev/null 2>&1
[ $? = 2 ] || fail "--result-cache x: not a usage error"
# the line memo (on by default) answers repeats with the computed bytes and counts, whatever its size
run 1 "$work/om0" --line-memo 0 --stats
cmp "$work/o1" "$work/om0" || fail "--line-memo 0 differs from the default (on)"
cmp "$work/o1.err" "$work/om0.err" || fail "--line-memo 0: --stats differs"
run 2 "$work/om1" --line-memo 4096 --stats
cmp "$work/o1" "$work/om1" || fail "--line-memo 4096 differs from the default"
cmp "$work/o1.err" "$work/om1.err" || fail "--line-memo 4096: --stats differs"
"$opdb" query --db "$db" --line-memo x </dev/null >/dev/null 2>&1
[ $? = 2 ] || fail "--line-memo x: not a usage error"
# from a pipe, in pieces of up to 3000 bytes
python3 -c '
import os, random, sys
d = open(sys.argv[1], "rb").read(); rng = random.Random(3); i = 0
while i < len(d):
    k = rng.randint(1, 3000); os.write(1, d[i:i + k]); i += k
' "$work/q" | "$opdb" query --db "$db" --tp-size 8 --grid 8,2 --threads 3 >"$work/op" 2>/dev/null || fail "pipe: exit $?"
cmp "$work/o1" "$work/op" || fail "a piped input differs"
# a program that writes one query and waits for its answer before the next gets each answer at once
for t in 1 4; do
  python3 - "$opdb" "$db" "$t" "$work/queries.jsonl" <<'PY' || fail "one query at a time, --threads $t"
import select, subprocess, sys
opdb, db, t, qf = sys.argv[1:]
p = subprocess.Popen([opdb, "query", "--db", db, "--threads", t], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
for line in open(qf, "rb").readlines()[:5]:
    p.stdin.write(line)
    p.stdin.flush()
    if not select.select([p.stdout], [], [], 60)[0]:
        p.kill()
        sys.exit("no answer within 60 s")
    if not p.stdout.readline().startswith(b'{"id": '):
        sys.exit("not a result line")
p.stdin.close()
sys.exit(p.wait())
PY
done
head -c 2000000 "$work/q" >"$work/q2"
for flags in "--explain" "--reference-quirks" "--no-interpolation --explain"; do
  # shellcheck disable=SC2086
  "$opdb" query --db "$db" --threads 1 $flags <"$work/q2" >"$work/e1" 2>/dev/null || fail "$flags: exit $?"
  # shellcheck disable=SC2086
  "$opdb" query --db "$db" --threads 5 $flags <"$work/q2" >"$work/e5" 2>/dev/null || fail "$flags: exit $?"
  cmp "$work/e1" "$work/e5" || fail "$flags: --threads 5 differs from --threads 1"
done
# stdout that fails: one error line, exit 1
for t in 1 4; do
  if [ -w /dev/full ]; then
    "$opdb" query --db "$db" --threads $t <"$work/q" >/dev/full 2>"$work/err"; rc=$?
    [ $rc = 1 ] || fail "/dev/full, --threads $t: exit $rc"
    grep -q '^opdb: error: cannot write the results to stdout$' "$work/err" || fail "/dev/full: $(cat "$work/err")"
  fi
  "$opdb" query --db "$db" --threads $t <"$work/q" >&- 2>"$work/err"; rc=$?
  [ $rc = 1 ] || fail "closed stdout, --threads $t: exit $rc"
  grep -q '^opdb: error: cannot write the results to stdout$' "$work/err" || fail "closed stdout: $(cat "$work/err")"
done
# stdin that cannot be read: one error line, exit 1
"$opdb" query --db "$db" <&- >/dev/null 2>"$work/err"; rc=$?
[ $rc = 1 ] && grep -q '^opdb: error: cannot read the queries from stdin: ' "$work/err" || fail "closed stdin: exit $rc"
"$opdb" query --db "$db" --threads 0 </dev/null >/dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "--threads 0: exit $rc, not 2"
"$opdb" query --help | grep -q -- '--threads' || fail "--help lacks --threads"
exit 0
