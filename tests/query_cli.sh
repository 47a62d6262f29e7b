#!/bin/sh
# `opdb query` as a command: exit statuses (0 answered, 1 unreadable database,
# 2 usage), one stderr line per refusal, one result line per non-empty query
# line in input order, bad lines answered and counted, --stats, --db alias,
# the one-shot kernel form.
#   query_cli.sh OPDB
set -u
opdb=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "query_cli.sh: $*"; exit 1; }
db="$work/db"
mkdir "$db"
cat >"$db/op_mapping.yaml" <<'Y'
operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  aten.view.default: {zero_cost: true}
Y
printf 'Input Shapes,Input Data Types,Duration(us)\n"16,128;128,256",DT_BF16;DT_BF16,5.0\n' >"$db/MatMulV2.csv"

# unreadable database: one line, exit 1, before stdin is read
"$opdb" query --db "$work/none" </dev/null >"$work/o" 2>"$work/e"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$work/e")" = 1 ] && [ ! -s "$work/o" ] || fail "missing folder: exit $rc"
mkdir "$work/broken" && printf 'a: [\n' >"$work/broken/op_mapping.yaml"
"$opdb" query --db "$work/broken" </dev/null >"$work/o" 2>"$work/e"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$work/e")" = 1 ] || fail "broken op_mapping.yaml: exit $rc"
# usage errors
for args in "" "--db $db --tp-size 0" "--db $db --grid 4,,2" "--db $db --kernel MatMulV2" "--db $db --inputs 1,2" \
            "--db $db --bogus"; do
  # shellcheck disable=SC2086
  "$opdb" query $args </dev/null >"$work/o" 2>"$work/e"; rc=$?
  [ $rc = 2 ] || fail "'$args': exit $rc, not 2"
done

# a batch: blank lines skipped, a bad line answered, order kept
printf '%s\n' '{"id": 1, "op": "aten.mm.default", "args": [{"shape": [16, 128]}, {"shape": [128, 256]}]}' \
  '' '   ' 'not json' '{"id": "v", "op": "torch.ops.aten.view.default"}' '{"id": 3, "op": "nope"}' >"$work/q"
"$opdb" query --database-path "$db" --no-interpolation --stats <"$work/q" >"$work/o" 2>"$work/e"; rc=$?
[ $rc = 0 ] || fail "batch: exit $rc"
[ "$(wc -l <"$work/o")" = 4 ] || fail "batch: $(wc -l <"$work/o") result lines, not 4"
sed -n 1p "$work/o" | grep -q '^{"id": 1, "hit": true, "latency_us": 5.0, "source": "MEASURED"' || fail "line 1: $(sed -n 1p "$work/o")"
sed -n 2p "$work/o" | grep -q '^{"id": null, "hit": false, .*"source": "ERROR", .*"miss_reason": "error:bad_json"' || fail "line 2"
sed -n 3p "$work/o" | grep -q '^{"id": "v", "hit": true, "latency_us": 0.0' || fail "line 3"
sed -n 4p "$work/o" | grep -q '"miss_reason": "unmapped"' || fail "line 4"
grep -q '^opdb query: 4 queries: 2 hit (MEASURED 2, INTERPOLATED 0, PARTIAL 0), 1 miss, 1 error, 0 unsupported$' "$work/e" ||
  fail "stats: $(cat "$work/e")"
grep -q '^opdb query: warning: 1 of 4 query lines gave errors$' "$work/e" || fail "error count warning"

# the one-shot kernel form
"$opdb" query --db "$db" --kernel MatMulV2 --inputs '1,16,128;128,256' --dtypes 'DT_BF16;bfloat16' >"$work/o" 2>"$work/e"; rc=$?
[ $rc = 0 ] || fail "kernel form: exit $rc"
grep -q '^{"id": "kernel", "hit": true, "latency_us": 5.0, "source": "MEASURED", "confidence": 1.0, "shape_match_rule": "batch_strip"' \
  "$work/o" || fail "kernel form: $(cat "$work/o")"
"$opdb" query --help | grep -q -- '--reference-quirks' || fail "--help"
exit 0
