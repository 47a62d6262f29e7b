#!/usr/bin/env python3
"""Oracle for `opdb validate` (text output), written from the spec, not from opdb.

Sources: docs/FORMAT.md §3.5 (the signature), docs/FORMAT.md §3.5 and docs/ROW-IDENTITY.md (what the
consumer tells apart: every input of a MatMul-family row, the runtime columns of an
attention row) and docs/ROW-IDENTITY.md (opdb's rules: which problems are errors,
which are warnings, and how each line reads).

usage: validate.py DB_DIR [--strict] [--json]  -> prints the report, exits like opdb validate
"""
import csv
import json
import math
import os
import sys

BASE = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats"]
DUR = ["Average Duration(us)", "Profiling Average Duration(us)", "Profiling Median Duration(us)",
       "Profiling Std Duration(us)", "MicroBench Duration(us)"]
VISIBLE = {0, 1, 4}
MATMUL = {"MatMulV2", "MatMulV3", "MatMulCommon"}
ATTENTION = {"FusedInferAttentionScore"}
NA = {"N/A", "NA", "NULL", "nan", "NaN", "None", "null", "n/a"}
WS = " \t\n\r\v\f"


def strip_q(s):
    s = s.strip(WS)
    while s.startswith('"'):
        s = s[1:]
    while s.endswith('"'):
        s = s[:-1]
    return s


def split_slots(cell):
    cell = strip_q(cell)
    if cell == "":
        return []
    return [strip_q(p) for p in cell.split(";")]


def norm_shape(s):
    s = strip_q(s)
    if s in ("()", "N/A", "NA", "NULL", "None", "none"):
        return ""
    if len(s) >= 2 and s[0] == "(" and s[-1] == ")":
        s = s[1:-1]
    parts = [p for p in s.replace(",", " ").split() if p]
    return ",".join(parts)


def align(shapes_cell, attr_cell):
    shapes = [norm_shape(x) for x in split_slots(shapes_cell)]
    attrs = split_slots(attr_cell)
    n = max(len(shapes), len(attrs))
    shapes += [""] * (n - len(shapes))
    attrs += [""] * (n - len(attrs))
    attrs = [a if shapes[i] != "" else "" for i, a in enumerate(attrs)]
    while shapes and shapes[-1] == "":
        shapes.pop()
    while attrs and attrs[-1] == "":
        attrs.pop()
    return ";".join(shapes), ";".join(attrs)


def dims2(s):
    p = s.split(",")
    if len(p) != 2:
        return None
    try:
        return int(p[0]), int(p[1])
    except ValueError:
        return None


def matmul_sig(row):
    ins = [norm_shape(x) for x in split_slots(row["Input Shapes"])]
    outs = [norm_shape(x) for x in split_slots(row["Output Shapes"])]
    if len(ins) < 2 or not outs:
        return None
    A, B, O = dims2(ins[0]), dims2(ins[1]), dims2(outs[0])
    if not (A and B and O):
        return None
    m, n = O
    k = None
    if A[0] == m:
        if B[0] == n and A[1] == B[1]:
            k = A[1]
        elif B[1] == n and A[1] == B[0]:
            k = A[1]
    if k is None:
        common = set(A) & set(B)
        cand = common - {m, n}
        if len(cand) == 1:
            k = next(iter(cand))
        elif len(common) == 1:
            k = next(iter(common))
        else:
            return None
    dts = ";".join(split_slots(row["Input Data Types"])[:2])
    fms = ";".join(split_slots(row["Input Formats"])[:2])
    return (f"{m},{k};{n},{k}", dts, fms, f"{m},{n}", align(row["Output Shapes"], row["Output Data Types"])[1])


def generic_sig(row, op):
    ins, dts, fms = row["Input Shapes"], row["Input Data Types"], row["Input Formats"]
    if op == "Index":
        outs = [norm_shape(x) for x in split_slots(row["Output Shapes"])]
        islots = split_slots(ins)
        if outs and outs[0] and islots:
            d = split_slots(dts)
            f = split_slots(fms)
            ins = islots[0] + ";" + outs[0].split(",")[0]
            dts = ";".join([d[0], d[-1]]) if d else ""
            fms = ";".join([f[0], f[-1]]) if f else ""
    elif op in ("Slice", "SliceAiCore", "Transpose", "TransposeAiCore"):
        islots = split_slots(ins)
        ins = islots[0] if islots else ""
        dts = (split_slots(dts) or [""])[0]
        fms = "ND" if islots else ""
    s, d = align(ins, dts)
    _, f = align(ins, fms)
    os_, od = align(row["Output Shapes"], row["Output Data Types"])
    sig = (s, d, f, os_, od)
    if op == "DispatchFFNCombine":
        sig += (row.get("EP Size", "").strip(WS),)
    return sig


def runtime_cell(c):
    c = c.strip(WS)
    if c in NA:
        return ""
    try:
        x = float(c)
        if math.isfinite(x):
            return repr(x)
    except ValueError:
        pass
    return c


def identity(row, op, runtime_cols):
    sig = None
    if op in MATMUL:
        sig = matmul_sig(row)
        if sig is not None:
            extra = generic_sig(row, "_")[0].split(";")[2:]
            sig = sig + ("extra=" + ";".join(extra),)
    if sig is None:
        sig = generic_sig(row, op)
    if op in ATTENTION:
        sig = sig + tuple(runtime_cell(row.get(c, "")) for c in runtime_cols)
    return sig


def pyfloat(s):
    try:
        return float(s)
    except ValueError:
        return None


def durations(row, lineno, names, visible, problem):
    """Reports the row's bad duration cells; True when a column of `visible` holds a number > 0."""
    valid = False
    for name in names:
        c = row[name].strip(WS)
        if not c:
            continue
        v = pyfloat(c)
        if v is None or math.isnan(v) or math.isinf(v):
            problem(False, lineno, "non-numeric duration", f"{name} = '{c[:40]}'")
        elif v < 0:
            problem(False, lineno, "negative duration", f"{name} = {c}")
        elif v > 0 and name in visible:
            valid = True
    return valid


COMM_LAT = ["Average Duration(us)", "Profiling Average Duration(us)", "Duration(us)"]


def finite(c):
    v = pyfloat(c) if c else None
    return v if v is not None and math.isfinite(v) else None


def check_comm(rd, col, problem):
    """A communication table (docs/ROW-IDENTITY.md, "What validate reports"); returns its rows."""
    lat = [n for n in COMM_LAT if n in col]
    for need in ("message_bytes", "num_devices"):
        if need not in col:
            problem(False, 1, "missing columns", f"communication table without {need}: every lookup of it misses")
            return 0
    if not lat:
        problem(False, 1, "missing columns", "communication table without a duration column (Duration(us), "
                "Average Duration(us) or Profiling Average Duration(us)): every lookup of it misses")
        return 0
    seen, order = {}, []
    invalid = first_invalid = nrows = 0
    for lineno, rec in enumerate(rd[1:], 2):
        nrows += 1
        row = {h: (rec[i] if i < len(rec) else "") for h, i in col.items()}
        if not durations(row, lineno, lat, set(lat), problem):
            invalid += 1
            first_invalid = first_invalid or lineno
        x = []
        for name in ("message_bytes", "num_devices"):
            c = row[name].strip(WS)
            v = finite(c)
            if v is None:
                problem(False, lineno, "invalid value", f"{name} = '{c[:40]}' is not a number (opdb skips the row; "
                        "the reference consumer fails the lookup that meets it)")
            x.append(v)
        if None in x:
            continue
        tier = runtime_cell(row.get("topology_tier", ""))
        t = pyfloat(tier) if tier else None
        tier = "%.17g" % t if t is not None and math.isfinite(t) else tier
        key = "message_bytes %.17g, num_devices %.17g, topology_tier '%s'" % (x[0], x[1], tier[:40])
        if key not in seen:
            seen[key] = []
            order.append(key)
        seen[key].append(lineno)
    for key in order:
        ls = seen[key]
        if len(ls) > 1:
            problem(True, ls[0], "duplicate measurement",
                    f"{len(ls)} rows for one message size, group size and tier (lines {', '.join(map(str, ls))}): "
                    f"{key} (exact lookups take the first; each counts in the fit)")
    if invalid:
        problem(True, first_invalid, "no valid duration",
                f"{invalid} row(s) have no duration > 0: invisible to the consumer (first here)")
    return nrows


def check(path, rel, out, js):
    """Returns (errors, warnings, rows)."""
    errs = warns = 0
    lines = []

    def problem(warn, line, kind, msg):
        nonlocal errs, warns
        pre = f"{rel}:{line}: " if line else f"{rel}: "
        lines.append(pre + ("warning: " if warn else "") + f"{kind}: {msg}")
        js.append({"file": rel, "line": line, "kind": kind, "severity": "warning" if warn else "error", "message": msg})
        if warn:
            warns += 1
        else:
            errs += 1

    # bytes that are not UTF-8 read as U+FFFD (opdb's JSON report must stay valid JSON)
    raw = open(path, newline="", encoding="utf-8", errors="replace").read()
    if raw.startswith("version https://git-lfs.github.com/spec/"):
        problem(False, 1, "unreadable", "a Git LFS pointer, not CSV data (run git lfs pull)")
        out.extend(lines)
        return errs, warns, 0
    rd = list(csv.reader(raw.splitlines(keepends=True)))
    header = rd[0]
    col = {h: i for i, h in enumerate(header)}
    if not any(b in col for b in BASE) and not any(DUR[d] in col for d in VISIBLE) and \
            ("message_bytes" in col or "num_devices" in col):
        nrows = check_comm(rd, col, problem)
        out.extend(lines)
        return errs, warns, nrows
    miss = [b for b in BASE if b not in col]
    if miss:
        problem(False, 1, "missing columns", ", ".join(miss))
    if not any(d in col for d in (DUR[0], DUR[1], DUR[4])):
        problem(False, 1, "missing columns", "no duration column (Average Duration(us) or Profiling Average Duration(us))")
    runtime = [h for h in header if (h.startswith("Runtime ") and len(h) > 8) or h == "avg_seq_len"]
    op = os.path.basename(path)[:-4]
    seen = {}
    order = []
    invalid = 0
    first_invalid = 0
    unconv = []
    nrows = 0
    for lineno, rec in enumerate(rd[1:], 2):  # fixtures: one physical line per record
        nrows += 1
        row = {h: (rec[i] if i < len(rec) else "") for h, i in col.items()}
        if not durations(row, lineno, [n for n in DUR if n in col], {DUR[d] for d in VISIBLE}, problem):
            invalid += 1
            if invalid == 1:
                first_invalid = lineno
        if row.get("MicroBench Converged", "").strip(WS) == "no":
            unconv.append(lineno)
        key = identity(row, op, runtime)
        if key not in seen:
            seen[key] = []
            order.append(key)
        seen[key].append((lineno, row))
    for key in order:
        rows = seen[key]
        if len(rows) > 1:
            r2 = rows[1][1]
            disp = (r2["Input Shapes"] or "N/A") + " -> " + (r2["Output Shapes"] or "N/A")
            problem(False, rows[0][0], "duplicate signature",
                    f"{len(rows)} rows the consumer cannot tell apart (lines {', '.join(str(l) for l, _ in rows)}): {disp}")
    if invalid:
        problem(True, first_invalid, "no valid duration",
                f"{invalid} row(s) have neither Average nor Profiling Average Duration(us) > 0 (first here)")
    if unconv:
        shown = ", ".join(str(x) for x in unconv[:20]) + (", ..." if len(unconv) > 20 else "")
        problem(True, 0, "unconverged measurement",
                f"{len(unconv)} row(s) measured by opdb bench never met the stop rule (MicroBench Converged = no; lines {shown})")
    out.extend(lines)
    return errs, warns, nrows


def main():
    db = sys.argv[1]
    strict = "--strict" in sys.argv[2:]
    files = sorted(f for f in os.listdir(db) if f.endswith(".csv") and not f.startswith("."))
    out = []
    js = []
    E = W = R = 0
    for f in files:
        e, w, r = check(os.path.join(db, f), os.path.join(db, f), out, js)
        E, W, R = E + e, W + w, R + r
    if "--json" in sys.argv[2:]:
        probs = ",\n".join("    " + json.dumps(p, ensure_ascii=False) for p in js)
        sys.stdout.write(f'{{\n  "database": {json.dumps(db)},\n  "files": {len(files)},\n  "rows": {R},\n'
                         f'  "errors": {E},\n  "warnings": {W},\n  "problems": [' + ("\n" + probs + "\n  " if js else "") + "]\n}\n")
    else:
        out.append(f"{db}: {len(files)} file(s), {R} row(s), {E} error(s), {W} warning(s)")
        sys.stdout.write("\n".join(out) + "\n")
    sys.exit(1 if E or (strict and (W or R == 0)) else 0)


if __name__ == "__main__":
    main()
