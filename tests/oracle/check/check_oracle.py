#!/usr/bin/env python3
"""Independent oracle for `opdb check` (docs/CHECK.md), never opdb's output.

  check_oracle.py --database-path DIR [--json]

Leave-one-out over every row with a latency, on the interpolation rules of the query
spec (§12.4-§12.6): the candidate points and regime keys come from the query oracle's
index builders (tests/oracle/query/qo_interp.py); hiding a row, matching groups,
the 1-D interpolation, interior/frontier, the figures, the worst rows and the
split-half coverage of the calibrated intervals are written here from CHECK.md.
2-D/3-D griddata needs scipy: a table whose check would use it exits 99 (no oracle)."""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "query"))

from qo_exact import DB, MATMUL, Config  # noqa: E402
from qo_base import shapes, CellFault  # noqa: E402
import qo_interp  # noqa: E402

MM_GROUPS = [("M",), ("K",), ("N",), ("M", "K"), ("M", "N"), ("K", "N"), ("M", "K", "N")]
OTHER_MODES = ("attention_special", "attention_lightning_indexer", "moe_fused", "scatter_nd_update_mla")
EXTRA = ("output_count", "output_dtypes", "output_formats", "input_formats")


def path_of(db, kt):
    if kt.startswith("hcom_"):
        return "communication", False
    elem = False
    ops = db.m.get("operator_mappings")
    for e in (ops.values() if isinstance(ops, dict) else []):
        if not isinstance(e, dict):
            continue
        alts = e.get("alternate_kernel_types")
        if e.get("kernel_type") != kt and not (isinstance(alts, list) and kt in alts):
            continue
        if e.get("category") == "communication":
            return "communication", False
        qm = e.get("query_mode")
        if qm in OTHER_MODES:
            return qm, False
        elem |= qm == "elementwise"
    if elem:
        return "elementwise", True
    return ("matmul" if kt in MATMUL or kt == "BatchMatMulNd" else "generic"), True


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def interp1(points, t, A, m):
    """§12.4 for one axis group A: (y, spread) or None."""
    if m is not None and len(A) > m:
        return None
    F = [p for p in points if all(a in p.axes for a in A)
         and all(a in p.axes and p.axes[a] == v for a, v in t.items() if a not in A)]
    if len(F) < 2:
        return None
    a = A[0]
    if len(A) > 1:
        raise SystemExit(99)  # griddata: no oracle without scipy
    below = [p.axes[a] for p in F if p.axes[a] <= t[a]]
    above = [p.axes[a] for p in F if p.axes[a] >= t[a]]
    if not below or not above:
        return None
    lo, hi = max(below), min(above)
    ylo = median([p.lat for p in F if p.axes[a] == lo])
    yhi = median([p.lat for p in F if p.axes[a] == hi])
    if lo == hi:
        y, spread = ylo, 0.0
    else:
        y = ylo + ((t[a] - lo) / (hi - lo)) * (yhi - ylo)
        spread = math.log2(hi / lo) if lo > 0 else math.inf
    if math.isfinite(y) and y > 0:
        return y, spread
    return None


def ask(groups, t, AG, m):
    """The query's order: each group as its preferred, then its alternate points; per
    subset the axis groups in order. (y, spread) or None."""
    for pts in groups:
        for lab in ("preferred", "alternate"):
            sub = [p for p in pts if p.label == lab]
            for A in AG:
                if sub:
                    r = interp1(sub, t, A, m)
                    if r:
                        return r
    return None


def brackets(groups, t, A):
    F = [p for pts in groups for p in pts if all(a in p.axes for a in A)
         and all(p.axes.get(a) == v for a, v in t.items() if a not in A)]
    return len(F) >= 2 and all(any(p.axes[a] <= t[a] for p in F) and any(p.axes[a] >= t[a] for p in F) for a in A)


def pctl(x, q):
    if not x:
        return math.nan
    pos = q * (len(x) - 1)
    i = math.floor(pos)
    if i + 1 >= len(x):
        return x[-1]
    return x[i] + (x[i + 1] - x[i]) * (pos - i)


def stats(errs, rows):
    e = sorted(errs)
    a = sorted(abs(v) for v in e)
    n = len(e)
    return {"rows": rows, "recovered": n, "median": pctl(a, 0.5), "p90": pctl(a, 0.9), "p99": pctl(a, 0.99),
            "bias": pctl(e, 0.5), "within10": (sum(1 for v in a if v <= 0.10) / n) if n else math.nan}


def bucket(s):
    return 0 if s == 0 else 1 if s <= 1 else 2 if s <= 3 else 3


def interval(res):
    n = len(res)
    if n < 2:
        return None
    e = sorted(res)
    out = []
    for a in (0.05, 0.10):
        kl, kh = math.floor((n + 1) * a), math.ceil((n + 1) * (1 - a))
        if kl < 1 or kh > n:
            return None
        out.append((e[kl - 1], e[kh - 1]))
    return {"iv90": out[0], "iv80": out[1]}


def scopes_of(a):
    t, d, b = a["table"], a["dim"], a["bucket"]
    return [(t, d, b), (t, d, -1), (t, 0, -1), (-1, d, b), (-1, d, -1), (-1, 0, -1)]


def coverage(ans):
    n = in80 = in90 = 0
    for half in (0, 1):
        sc = {}
        for a in ans:
            if a["pred"] is None or a["line"] % 2 != half:
                continue
            for k in scopes_of(a):
                sc.setdefault(k, []).append(a["actual"] / a["pred"] - 1)
        iv = {k: interval(v) for k, v in sc.items()}
        for a in ans:
            if a["pred"] is None or a["line"] % 2 == half:
                continue
            use = next((iv[k] for k in scopes_of(a) if iv.get(k)), None)
            if not use:
                continue
            n += 1
            p, y = a["pred"], a["actual"]
            in80 += p * (1 + use["iv80"][0]) <= y <= p * (1 + use["iv80"][1])
            in90 += p * (1 + use["iv90"][0]) <= y <= p * (1 + use["iv90"][1])
    return n, (in80 / n if n else math.nan), (in90 / n if n else math.nan)


def check(d):
    db = DB(d, Config(), warn=lambda s: None)
    names = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".csv") and not f.startswith(".") and len(f) > 4)
    tabs, cells, ans = [], {}, []
    for kt in names:
        try:
            t = db.table(kt)
        except Exception as e:  # noqa: BLE001 - an unreadable table: warned, not checked
            sys.stderr.write("opdb check: warning: %s (not checked)\n" % e)
            continue
        if t is None:
            continue
        path, covered = path_of(db, kt)
        wl = sum(1 for r in range(len(t.rows)) if qo_interp.point_latency(db, t, r) is not None)
        T = {"kernel": kt, "file": kt + ".csv", "path": path, "covered": covered, "rows": len(t.rows),
             "with_latency": wl, "held_out": 0}
        tabs.append(T)
        if not covered:
            continue
        if path == "elementwise":
            raise SystemExit(99)  # the elementwise index has no builder in the query oracle
        mm = path == "matmul"
        m = qo_interp.max_dim(db, kt)
        if mm:
            T["axes"], T["groups"] = ["M", "K", "N"], MM_GROUPS
        else:
            ax = qo_interp.generic_axis(db, kt, kt)
            T["axes"], T["groups"] = [ax], [(ax,)]
        counts = set()
        for r in range(len(t.rows)):
            try:
                counts.add(len(shapes(t, r, "Input Shapes")))
            except CellFault:
                pass
        own = {}
        for n in sorted(counts):
            if mm and n < 2:
                continue
            idx = qo_interp.matmul_index(db, kt, n, False) if mm else qo_interp.generic_index(db, kt, n, T["axes"][0])
            for p in idx or []:
                if len(shapes(t, p.row, "Input Shapes")) == n:
                    own[p.row] = (p, idx)
        T["held_out"] = len(own)
        enabled = [A for A in T["groups"] if m is None or len(A) <= m]
        for r in sorted(own):
            p, idx = own[r]
            allg = qo_interp.groups_of(idx)
            G = [g for g in allg if qo_interp.key_match(p.key, g[0], allow_extra=EXTRA if mm else ())]
            if mm:
                nd = lambda k: 0 if all(f == "ND" for f in dict(k).get("input_formats", ())) else 1  # noqa: E731
                G = sorted(G, key=lambda g: (nd(g[0]), -len(g[1])))
            groups = [[q for q in g[1] if q.row != r] for g in G]
            line = t.lines[r] if hasattr(t, "lines") else None
            tgt = dict(p.axes)
            any_in = False
            for gi, A in enumerate(T["groups"]):
                if A not in enabled:
                    continue
                res = ask(groups, tgt, [A], m)
                inn = brackets(groups, tgt, A)
                any_in |= inn
                c = cells.setdefault((kt, ",".join(A), inn), [0, []])
                c[0] += 1
                if res:
                    c[1].append((res[0] - p.lat) / p.lat)
            res = ask(groups, tgt, T["groups"], m)
            c = cells.setdefault((kt, "query", any_in), [0, []])
            c[0] += 1
            if res:
                c[1].append((res[0] - p.lat) / p.lat)
            ans.append({"table": len(tabs) - 1, "kernel": kt, "file": T["file"], "line": line,
                        "coords": [p.axes[a] for a in T["axes"]], "actual": p.lat,
                        "pred": res[0] if res else None, "dim": 1 if res else 0,
                        "bucket": bucket(res[1]) if res else -1})
    return tabs, cells, ans


def pct(x, sign=False):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return ("%+.2f%%" if sign else "%.2f%%") % (x * 100)


def main(args=None):
    args = sys.argv[1:] if args is None else args
    if "--html" in args or "--write-calibration" in args:
        return 99  # the page and the calibration file have no oracle
    d = args[args.index("--database-path") + 1] if "--database-path" in args else args[args.index("--db") + 1]
    if not os.path.isdir(d):
        sys.stderr.write("opdb check: database folder is missing or unreadable: %s\n" % d)
        return 1
    tabs, cells, ans = check(d)
    got = [a for a in ans if a["pred"] is not None]
    errs = sorted(abs(a["pred"] - a["actual"]) / a["actual"] for a in got)
    med = pctl(errs, 0.5)
    worst = sorted(got, key=lambda a: (-abs(a["pred"] - a["actual"]) / a["actual"], a["file"], a["line"]))[:20]
    cn, c80, c90 = coverage(ans)
    ntypes = sum(1 for T in tabs if T["covered"])
    if "--json" in args:
        r6 = lambda x: None if x is None or not math.isfinite(x) else round(x, 6)  # noqa: E731
        kts = []
        for T in tabs:
            cl = []
            for g in (["query"] + [",".join(A) for A in T["groups"]]) if T["covered"] else []:
                for inn in (True, False):
                    c = cells.get((T["kernel"], g, inn))
                    if not c:
                        continue
                    st = stats(c[1], c[0])
                    cl.append({"axes": g, "class": "interior" if inn else "frontier", "rows": st["rows"],
                               "recovered": st["recovered"], "median_abs_error": r6(st["median"]),
                               "p90_abs_error": r6(st["p90"]), "p99_abs_error": r6(st["p99"]),
                               "bias": r6(st["bias"]), "within_10pct": r6(st["within10"])})
            kts.append({"kernel_type": T["kernel"], "file": T["file"], "path": T["path"], "checked": T["covered"],
                        "rows": T["rows"], "with_latency": T["with_latency"], "held_out": T["held_out"],
                        "cells": cl})
        doc = {"database": d,
               "summary": {"kernel_types": ntypes, "unchecked_kernel_types": len(tabs) - ntypes, "rows": len(ans),
                           "recovered": len(got), "median_abs_error": r6(med)},
               "kernel_types": kts,
               "worst": [{"kernel_type": a["kernel"], "file": a["file"], "line": a["line"],
                          "coordinates": {n: r6(float(v)) for n, v in zip(tabs[a["table"]]["axes"], a["coords"])},
                          "actual_us": r6(a["actual"]), "predicted_us": r6(a["pred"]),
                          "error": r6((a["pred"] - a["actual"]) / a["actual"])} for a in worst],
               "calibration": {"split": "odd_even_lines", "answers": cn, "coverage80": r6(c80),
                               "coverage90": r6(c90)}}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    o = sys.stdout
    o.write("opdb check: %s\n" % d)
    o.write("%d kernel types checked, %d rows held out, %d answered (%s), median |error| %s\n" % (
        ntypes, len(ans), len(got), pct(len(got) / len(ans) if ans else math.nan), pct(med)))
    for T in tabs:
        if not T["covered"]:
            continue
        o.write("\n%s (%s, %s): %d rows, %d with a latency, %d held out\n" % (
            T["kernel"], T["path"], T["file"], T["rows"], T["with_latency"], T["held_out"]))
        if not T["held_out"]:
            continue
        o.write("  %-12s %-8s %6s %7s %7s %7s %7s %7s %7s\n" % ("axes", "class", "rows", "answer", "median", "p90",
                                                              "p99", "bias", "in10%"))
        for g in ["query"] + [",".join(A) for A in T["groups"]]:
            for inn in (True, False):
                c = cells.get((T["kernel"], g, inn))
                if not c:
                    continue
                s = stats(c[1], c[0])
                o.write("  %-12s %-8s %6d %7s %7s %7s %7s %7s %7s\n" % (
                    g, "interior" if inn else "frontier", s["rows"], pct(s["recovered"] / s["rows"]), pct(s["median"]),
                    pct(s["p90"]), pct(s["p99"]), pct(s["bias"], True), pct(s["within10"])))
    un = [T for T in tabs if not T["covered"]]
    if un:
        o.write("\nnot checked (a path check does not cover yet):\n")
        for T in un:
            o.write("  %s (%s, %s): %d rows\n" % (T["kernel"], T["path"], T["file"], T["rows"]))
    if worst:
        o.write("\nworst answers (query order):\n  %8s %12s %12s  %s\n" % ("error", "actual_us", "predicted_us",
                                                                        "file:line  coordinates"))
        for a in worst:
            T = tabs[a["table"]]
            co = " ".join("%s=%.17g" % (n, v) for n, v in zip(T["axes"], a["coords"]))
            o.write("  %8s %12.3f %12.3f  %s:%d  %s\n" % (pct((a["pred"] - a["actual"]) / a["actual"], True),
                                                        a["actual"], a["pred"], a["file"], a["line"], co))
    if cn:
        o.write("\ncalibrated intervals, split halves (odd lines / even lines): the 80%% interval covers %s, "
                "the 90%% %s of %d answers\n" % (pct(c80), pct(c90), cn))
    else:
        o.write("\ncalibrated intervals: too few answers to form one\n")
    if not ans:
        sys.stderr.write("opdb check: warning: no row could be held out\n")
        return 1 if "--strict" in args else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
