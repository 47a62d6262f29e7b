#!/bin/sh
# Every real op_mapping.yaml in ../shared/data/real/msmodeling loads in
# `opdb query` (or is refused with exactly one line on stderr, exit 1), and
# every op it maps dispatches: one result line per query, none `unmapped`,
# none an error, zero_cost / accepted_miss ops answered 0.0 µs.
#   query_real_mappings.sh OPDB DIR
set -u
opdb=$1
dir=$2
[ -d "$dir" ] || { echo "query_real_mappings.sh: no $dir" >&2; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "query_real_mappings.sh: python3-yaml missing" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
n=0
for f in "$dir"/*.yaml; do
  n=$((n + 1))
  rm -rf "$work/db" && mkdir "$work/db" && cp "$f" "$work/db/op_mapping.yaml"
  # the queries: every mapped op with no arguments, and the kind each answer must have
  python3 - "$f" "$work/q.jsonl" "$work/want" <<'PY'
import json, sys, yaml
m = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
ops = (m or {}).get("operator_mappings") or {}
with open(sys.argv[2], "w") as q, open(sys.argv[3], "w") as w:
    for name, e in ops.items():
        q.write(json.dumps({"id": name, "op": name}) + "\n")
        e = e if isinstance(e, dict) else {}
        plain = not e.get("composite") and e.get("category") != "communication" and e.get("query_mode") not in (
            "attention_special", "elementwise", "moe_fused", "mtp_projection")
        w.write("%s\t%s\n" % (name, "zero" if plain and (e.get("zero_cost") or e.get("accepted_miss")) else "any"))
PY
  "$opdb" query --db "$work/db" --no-interpolation <"$work/q.jsonl" >"$work/out" 2>"$work/err"
  rc=$?
  if [ $rc != 0 ]; then
    lines=$(wc -l <"$work/err")
    [ $rc = 1 ] && [ "$lines" = 1 ] || { echo "$f: refused with exit $rc and $lines stderr lines"; status=1; }
    continue
  fi
  python3 - "$work/out" "$work/want" "$f" <<'PY' || status=1
import json, sys
out = [json.loads(l) for l in open(sys.argv[1])]
want = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
bad = []
if len(out) != len(want):
    bad.append("%d results for %d queries" % (len(out), len(want)))
for r, (name, kind) in zip(out, want):
    if r["id"] != name:
        bad.append("%s: result out of order (%s)" % (name, r["id"]))
    elif r["source"] == "ERROR" or r["miss_reason"] == "unmapped":
        bad.append("%s: %s %s" % (name, r["miss_reason"], r.get("error", "")))
    elif kind == "zero" and not (r["hit"] and r["latency_us"] == 0.0):
        bad.append("%s: zero_cost/accepted_miss not answered 0.0" % name)
for b in bad:
    print("%s: %s" % (sys.argv[3], b))
sys.exit(1 if bad else 0)
PY
done
[ $n -gt 0 ] || { echo "query_real_mappings.sh: no YAML file in $dir" >&2; exit 77; }
exit $status
