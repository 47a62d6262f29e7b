#!/usr/bin/env python3
"""opdb update's default-mode report rules (docs/UPDATE.md §3), applied to the
report the reference writes (docs/UPDATE.md §3), never to opdb's output.

The reference report of a run is what the reference tool prints; the default-mode
golden cases were made from it by the variant oracle (README.md in tests/cli).
This script applies the documented default-mode rules on top of that text:

1. A new row is counted once: in mode `all` a profiled shape the table lacks is
   added, and listed under a "## Rows Added" table (before "## Missing Shapes")
   instead of under "Missing shapes"; "Missing shapes" (Overview, the Update
   Summary's "Missing Samples" column and its table) keeps only shapes not added
   (mode missing-only).
2. Profiled operators no CSV took are split: operators outside the replay
   catalogue go to "## Profiled Operators Not Replayable Here" (Operator, Rows,
   Table = "<op>.csv (left as is)" when the database has that table, else "-");
   catalogue operators stay under "## Profiled Operators Without CSV".
3. (N/A shapes and numeric OP Types, handled per case by hand in the few cases
   that have them: their rows are never added; see the case list in main().)

Usage: default_report.py CASE_DIR [--check]   (rewrites expected/stdout and the
report .md in place; --check only reports whether they already match).
"""
import json
import os
import re
import sys

CATALOGUE = set("""Add AddRmsNormBias ArgMaxV2 AscendQuantV2 BatchMatMulV2 DispatchFFNCombine DynamicQuant
FusedInferAttentionScore GatherV2 GroupedMatmul GroupedMatmulSwigluQuant Index InterleaveRope
KvRmsNormRopeCache LightningIndexer MaskedFill MatMulCommon MatMulV2 MatMulV3 MoeTokenPermute
MoeTokenUnpermute PadV3 QuantBatchMatmulV3 RINGMLAPrefillBF16Kernel ReshapeAndCacheNdKernel
RmsNorm ScatterNdUpdate Slice SoftmaxV2 Sort SparseFlashAttention SwiGlu TensorMove
Transpose TransposeBatchMatMul split_qkv_rmsnorm_rope_kernel""".split())

NOTE_NR = "> update merges only the operators it can replay; these rows were not merged.\n\n"


def normalize(name):
    # README operator-name normalisation: compare case-insensitively without
    # '_' and '-' (enough for the catalogue test here)
    key = re.sub(r"[_\-\s]", "", name).lower()
    for c in CATALOGUE:
        if re.sub(r"[_\-\s]", "", c).lower() == key:
            return c
    return name


def table(headers, rows):
    if not rows:
        return "_None_"
    w = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            w[i] = max(w[i], len(c))
    line = lambda cells: "| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(cells)) + " |"
    out = [line(headers), "| " + " | ".join("-" * x for x in w) + " |"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def parse_table(body):
    if body.strip() == "_None_":
        return None, []
    lines = [l for l in body.split("\n") if l.startswith("|")]
    cells = lambda l: [c.strip() for c in l.strip()[1:-1].split(" | ")]
    return cells(lines[0]), [cells(l) for l in lines[2:]]


def transform(text, mode_all, db_in):
    # text: "# Profile Update Report" + blocks "\n\n## Title\n<body>", + tail
    head, *blocks = text.split("\n\n## ")
    sec = []
    for b in blocks:
        title, body = b.split("\n", 1)
        sec.append([title, body])
    titles = [s[0] for s in sec]
    if "Rows Added" in titles:
        return text  # already transformed
    get = lambda t: sec[titles.index(t)]
    miss_hdr, miss_rows = parse_table(get("Missing Shapes")[1])
    added_rows = []
    if mode_all:
        added_rows, miss_rows = miss_rows, []
        ov = get("Overview")
        h, rows = parse_table(ov[1])
        for r in rows:
            if r[0] == "Missing shapes":
                r[1] = "0"
        ov[1] = table(h, rows)
        us = get("Update Summary")
        h, rows = parse_table(us[1])
        for r in rows:
            r[5] = "-"
        us[1] = table(h, rows)
    get("Missing Shapes")[1] = table(["Operator", "Count", "Examples"], miss_rows)
    i = titles.index("Missing Shapes")
    sec.insert(i, ["Rows Added", table(["Operator", "Count", "Examples"], added_rows)])
    titles = [s[0] for s in sec]
    pw = get("Profiled Operators Without CSV")
    h, rows = parse_table(pw[1])
    keep, foreign = [], []
    for r in rows:
        if normalize(r[0]) in CATALOGUE:
            keep.append(r)
        else:
            if callable(db_in):  # opdb_update_default.py: did the table exist before the run
                has = db_in(r[0])
            else:
                has = os.path.isfile(os.path.join(db_in, r[0] + ".csv")) if db_in else False
            foreign.append([r[0], r[1], f"{r[0]}.csv (left as is)" if has else "-"])
    pw[1] = table(["Operator", "Rows"], keep)
    # the last block's body carries the report's tail (after the hotspot table)
    j = titles.index("Profiled Operators Without CSV")
    sec.insert(j, ["Profiled Operators Not Replayable Here", NOTE_NR + table(["Operator", "Rows", "Table"], foreign)])
    return head + "".join("\n\n## " + t + "\n" + b for t, b in sec)


def split_tail(text):
    # the hotspot table ends the report body; keep whatever follows it
    k = text.index("\n\n## Duration Gap Hotspots\n")
    rest = text[k:]
    return text[:k], rest


def apply(case, check):
    cmd = open(os.path.join(case, "cmd")).read()
    if "--reference-quirks" in cmd or ("opdb update" not in cmd and "opdb bench" not in cmd):
        return True
    mode_all = "missing-only" not in cmd
    db_in = os.path.join(case, "in", "db")
    ok = True
    targets = [os.path.join(case, "expected", "stdout")]
    for root, _, files in sorted(os.walk(os.path.join(case, "expected"))):
        targets += [os.path.join(root, f) for f in sorted(files)
                    if f.startswith("profile_update_report_") and f.endswith(".md")]
    for p in targets:
        if not os.path.isfile(p):
            continue
        raw = open(p, newline="").read()
        if "# Profile Update Report" not in raw:
            if raw.lstrip().startswith("{"):
                new = transform_json(raw, mode_all)
            else:
                continue
        else:
            pre, rest = raw.split("# Profile Update Report", 1)
            body, tail = split_tail("# Profile Update Report" + rest)
            new = pre + transform(body, mode_all, db_in) + tail
        if new != raw:
            ok = False
            if not check:
                open(p, "w", newline="").write(new)
    return ok


def transform_json(raw, mode_all):
    d = json.loads(raw)
    if "profiled_operators_not_replayable" in d:
        return raw
    out = raw
    for f in d["csv_files"]:
        # "missing" keeps shapes not added; "added_shapes" follows "no_numeric_samples"
        added = f["missing"] if mode_all else []
        miss = [] if mode_all else f["missing"]
        enc = lambda v: "[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in v) + "]"
        old = '"missing": ' + enc(f["missing"]) + ',\n      "no_numeric_samples": ' + enc(f["no_numeric_samples"])
        new = '"missing": ' + enc(miss) + ',\n      "no_numeric_samples": ' + enc(f["no_numeric_samples"]) + \
              ',\n      "added_shapes": ' + enc(added)
        out = out.replace(old, new, 1)
    k = out.rindex("\n}")
    nr = [o for o in d["profiled_operators_without_csv"] if normalize(o) not in CATALOGUE]
    keep = [o for o in d["profiled_operators_without_csv"] if normalize(o) in CATALOGUE]
    enc = lambda v: "[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in v) + "]"
    out = out.replace('"profiled_operators_without_csv": ' + enc(d["profiled_operators_without_csv"]),
                      '"profiled_operators_without_csv": ' + enc(keep))
    k = out.rindex("\n}")
    out = out[:k] + ',\n  "profiled_operators_not_replayable": ' + enc(nr) + out[k:]
    return out


def main():
    check = "--check" in sys.argv
    cases = [a for a in sys.argv[1:] if not a.startswith("--")]
    bad = [c for c in cases if not apply(c, check)]
    if check and bad:
        print("differs:", *bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
