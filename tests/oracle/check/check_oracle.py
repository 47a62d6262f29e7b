#!/usr/bin/env python3
"""Independent oracle for `opdb check` (docs/CHECK.md), never opdb's output.

  check_oracle.py --database-path DIR [--json]

Leave-one-out over every row with a latency, on the interpolation rules of the query
spec (§12.4-§12.6): the candidate points and regime keys come from the query oracle's
index builders (tests/oracle/query/qo_interp.py); hiding a row, matching groups,
the 1-D interpolation, interior/frontier, the figures, the worst rows and the
split-half coverage of the calibrated intervals are written here from CHECK.md.
2-D/3-D griddata needs scipy: a table whose check would use it exits 99 (no oracle)."""
import itertools
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "query"))

from qo_exact import DB, MATMUL, Config  # noqa: E402
from qo_base import MISSING, NA, CellFault, intcell, numel, nz, shapes, slist  # noqa: E402
import qo_interp  # noqa: E402

MM_GROUPS = [("M",), ("K",), ("N",), ("M", "K"), ("M", "N"), ("K", "N"), ("M", "K", "N")]
OTHER_MODES = ("attention_special", "attention_lightning_indexer", "moe_fused", "scatter_nd_update_mla")
EXTRA = ("output_count", "output_dtypes", "output_formats", "input_formats")


def path_of(db, kt):
    """(path, covered): the query's path for kt's rows, and whether leave-one-out asks on it."""
    if kt.startswith("hcom_"):
        return "communication", True
    elem = scale = quant = False
    ops = db.m.get("operator_mappings")
    for e in (ops.values() if isinstance(ops, dict) else []):
        if not isinstance(e, dict):
            continue
        alts = e.get("alternate_kernel_types")
        if e.get("kernel_type") != kt and not (isinstance(alts, list) and kt in alts):
            continue
        if e.get("category") == "communication":
            return "communication", True
        qm = e.get("query_mode")
        if qm in OTHER_MODES:
            return qm, qm != "attention_lightning_indexer"
        elem |= qm == "elementwise"
        scale |= e.get("compute_subcategory") == "compute_scale"
        quant |= e.get("compute_subcategory") == "quantized_matmul"
    if elem:
        return "elementwise", True
    if scale:
        return "compute_scale", True
    if quant and (kt in MATMUL or kt == "BatchMatMulNd"):
        return "quantized_matmul", True
    return ("matmul" if kt in MATMUL or kt == "BatchMatMulNd" else "generic"), True


WHY = {"attention_lightning_indexer": "interpolated only inside a decomposed op, on runtime vectors no row holds",
       "communication": "no message_bytes and num_devices columns: exact rows only",
       "attention_special": "no sequence-length column: the attention path cannot read it"}


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def agrees(p, a, v, matchers):
    return a in p.axes and (p.axes[a] == v or (a in matchers and matchers[a](p.axes[a], v)))


def interp1(points, t, A, m, matchers=None):
    """§12.4 for one axis group A: (y, spread) or None."""
    if m is not None and len(A) > m:
        return None
    if any(a not in t for a in A):
        return None
    F = [p for p in points if all(a in p.axes for a in A)
         and all(agrees(p, a, v, matchers or {}) for a, v in t.items() if a not in A)]
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
    if any(a not in t for a in A):
        return False
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


ATTN_AXES = ["q_tokens", "seq", "heads", "head_dim", "batch"]
ATTN_AG = [c for n in (1, 2, 3) for c in itertools.combinations(("seq", "batch", "heads", "head_dim"), n)]
SC_GROUPS = [("M",), ("K",), ("M", "K")]


def moe_index(db, kt, t):
    """The moe_fused points (QUERY.md: tokens within a regime of dtypes, weights, hidden, top-k, EP size)."""
    if not t.has("EP Size"):
        return []

    def row(r):
        S = shapes(t, r, "Input Shapes")
        D = slist(t.cell(r, "Input Data Types"))
        F = slist(t.cell(r, "Input Formats"))
        if not (len(S) == 7 and len(D) == 7 and len(F) == 7) or len(S[1]) < 3 or len(S[2]) < 3:
            return None
        x = nz(S[0]) if F[0] == "FRACTAL_NZ" else S[0]
        if len(x) < 2:
            return None
        tokens = numel(x[:-1])
        ep = intcell(t.cell(r, "EP Size"))
        tk = qo_interp.moe_topk(S[3], D[3], tokens)
        if ep is None or ep <= 0 or tk is None:
            return None
        return {"tokens": tokens}, [("kernel_type", kt), ("activation_dtype", qo_interp.dkey(kt, D[0])),
                                    ("activation_format", F[0]), ("input_dtype_signature", tuple(D)),
                                    ("gmm1_weight_shape", S[1]), ("gmm2_weight_shape", S[2]),
                                    ("hidden", x[-1]), ("topk", tk), ("ep_size", ep)]
    return qo_interp.build_index(db, t, ("check-moe",), row)


def scatter_index(db, kt, t):
    """The scatter points: tokens written (the update's leading dims merged when its rank is above 2)
    within a regime of the three dtypes, the whole cache shape, the update's width and the formats."""
    def row(r):
        S = shapes(t, r, "Input Shapes")
        D = slist(t.cell(r, "Input Data Types"))
        F = slist(t.cell(r, "Input Formats"))
        if len(S) < 3 or len(D) < 3 or len(F) < 3 or not S[0] or not S[2]:
            return None
        u = S[2]
        if len(u) > 2:
            u = (numel(u[:-1]), u[-1])
        return {"tokens": u[0]}, [("kernel_type", kt), ("cache_dtype", D[0]), ("index_dtype", D[1]),
                                  ("update_dtype", D[2]), ("full_cache_shape", tuple(S[0])),
                                  ("update_tail", tuple(u[1:])), ("input_formats", tuple(F[:3]))]
    return qo_interp.build_index(db, t, ("check-scatter",), row)


def scale_index(db, kt, t):
    """The compute_scale points: (M, K) of the input within its dtypes, formats and scale modes."""
    def row(r):
        S = shapes(t, r, "Input Shapes")
        D = slist(t.cell(r, "Input Data Types"))
        F = slist(t.cell(r, "Input Formats"))
        OS = shapes(t, r, "Output Shapes")
        OD = slist(t.cell(r, "Output Data Types"))
        OF = slist(t.cell(r, "Output Formats"))
        if not S or not D or not F or len(OS) < 2 or len(OD) != len(OS) or len(OF) != len(OS):
            return None
        x = nz(S[0]) if F[0] == "FRACTAL_NZ" else S[0]
        o0 = nz(OS[0]) if OF[0] == "FRACTAL_NZ" else OS[0]
        if o0 != x:
            return None
        a = qo_interp.cs_axes(x)
        md = [qo_interp.cs_mode(x, z, kt) for z in OS[1:]]
        if a is None or any(v is None for v in md):
            return None
        return {"M": a[0], "K": a[1]}, qo_interp.cs_key(kt, D[0], F[0], OD, OF, md)
    return qo_interp.build_index(db, t, ("check-cs",), row)


def attn_ask(groups, axes, AG, m, sq):
    """The attention path's order: each matched group (the held-out row removed), its batch axis
    fixed as the query fixes it, every axis group in order. (y, spread) or None."""
    for pts in groups:
        tax = {a: v for a, v in axes.items() if a != "batch"}
        if any("batch" in q.axes for q in pts):
            if "batch" in axes:
                tax["batch"] = axes["batch"]
            elif any("batch" not in q.axes for q in pts):
                pts = [q for q in pts if "batch" not in q.axes]
            elif len({q.axes["batch"] for q in pts}) == 1:
                tax["batch"] = pts[0].axes["batch"]
            else:
                continue
        if sq:
            tax["seq"] = math.sqrt(tax["seq"])
            pts = [qo_interp.Point(dict(q.axes, seq=math.sqrt(q.axes["seq"])), q.lat, q.label, q.key, q.row)
                   for q in pts]
        for A in AG:
            r = interp1(pts, tax, A, m, {"q_tokens": qo_interp.qtok_match})
            if r:
                return r
    return None


def comm_check(db, t, T, cells, ans, ti):
    """Communication rows: each asked for by its own bytes, devices and tier (QUERY.md,
    communication: exact row, else the alpha-beta fit over the other rows of its group clamped
    to their bracket). False when the table has no bytes/devices columns."""
    if not t.has("message_bytes") or not t.has("num_devices"):
        return False

    def number(c):
        if c is NA or c is MISSING or isinstance(c, str):
            return None
        return float(c)
    has_tier = t.has("topology_tier")
    rows = []
    for r in range(len(t.rows)):
        y = db.row_latency(t, r)
        nd = number(t.cell(r, "num_devices"))
        mb = number(t.cell(r, "message_bytes"))
        if y is None or nd is None or mb is None:
            continue
        tier = number(t.cell(r, "topology_tier")) if has_tier else None
        rows.append((r, mb, nd, tier, y[0]))
    T["axes"], T["groups"], T["held_out"] = ["message_bytes", "num_devices"], [("message_bytes",)], len(rows)
    # group-major as the index keeps them: (devices, tier) groups by first appearance, rows by bytes
    order = []
    for r, mb, nd, tier, y in rows:
        g = (nd, tier)
        if g not in order:
            order.append(g)
    for g in order:
        members = [x for x in rows if (x[2], x[3]) == g]
        for r, mb, nd, tier, y in sorted(members, key=lambda x: (x[1], x[0])):
            # the group the row is asked in: with its tier when it has one, else any tier
            others = [x for x in rows if x[0] != r and x[2] == nd and (tier is None or x[3] == tier)]
            pred, spread = None, None
            same = [x for x in others if x[1] == mb]
            lo = max((x[1] for x in others if x[1] <= mb), default=None)
            hi = min((x[1] for x in others if x[1] >= mb), default=None)
            if same:
                pred, spread = same[0][4], 0.0
            elif lo is not None and hi is not None:
                ylo = next(x[4] for x in others if x[1] == lo)
                yhi = next(x[4] for x in others if x[1] == hi)
                xs, ys = [x[1] for x in others], [x[4] for x in others]
                n = len(xs)
                xm, ym = sum(xs) / n, sum(ys) / n
                sxx = sum((x - xm) ** 2 for x in xs)
                sxy = sum((x - xm) * (v - ym) for x, v in zip(xs, ys))
                v = ym + sxy / sxx * (mb - xm)
                pred = max(min(ylo, yhi), min(v, max(ylo, yhi)))
                spread = math.log2(hi / lo) if lo > 0 else math.inf
            inn = len(others) >= 2 and lo is not None and hi is not None
            for g2 in ("message_bytes", "query"):
                c = cells.setdefault((T["kernel"], g2, inn), [0, []])
                c[0] += 1
                if pred is not None:
                    c[1].append((pred - y) / y)
            ans.append({"table": ti, "kernel": T["kernel"], "file": T["file"], "line": t.lines[r],
                        "coords": [mb, nd], "actual": y, "pred": pred, "dim": 1 if pred is not None else 0,
                        "bucket": bucket(spread) if pred is not None else -1})
    return True


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
        if path == "communication":
            T["with_latency"] = sum(1 for r in range(len(t.rows)) if db.row_latency(t, r) is not None)
            if comm_check(db, t, T, cells, ans, len(tabs) - 1):
                continue
            T["covered"] = False
        attn = None
        if path == "attention_special":
            attn, _ = qo_interp.attn_index(db, kt)
            T["covered"] = attn is not None
        if not T["covered"]:
            T["why"] = WHY.get(path, "not covered")
            continue
        if path == "elementwise":
            raise SystemExit(99)  # the elementwise index has no builder in the query oracle
        mm = path in ("matmul", "quantized_matmul")
        quant = path == "quantized_matmul"
        m = qo_interp.max_dim(db, kt)
        req, extra, sq = (), (), False
        if mm:
            T["axes"], T["groups"] = ["M", "K", "N"], MM_GROUPS
            # the quantized rule: the input formats are matched too (the outputs are in both keys)
            extra = EXTRA[:3] if quant else EXTRA
        elif path == "attention_special":
            T["axes"], T["groups"] = ATTN_AXES, ATTN_AG
            ov = db.ov_int(kt)
            sq = (ov.get("axis_transform") or ov.get("shape_transform")) in ("sqrt", "sqrt_seq")
        elif path in ("moe_fused", "scatter_nd_update_mla"):
            T["axes"], T["groups"] = ["tokens"], [("tokens",)]
        elif path == "compute_scale":
            T["axes"], T["groups"] = ["M", "K"], SC_GROUPS
        else:
            ax = qo_interp.generic_axis(db, kt, kt)
            T["axes"], T["groups"] = [ax], [(ax,)]
        own = {}
        if path in ("attention_special", "moe_fused", "compute_scale", "scatter_nd_update_mla"):
            idx = attn if attn is not None else moe_index(db, kt, t) if path == "moe_fused" else \
                scatter_index(db, kt, t) if path == "scatter_nd_update_mla" else scale_index(db, kt, t)
            for p in idx:
                own[p.row] = (p, idx)
        else:
            counts = set()
            for r in range(len(t.rows)):
                try:
                    counts.add(len(shapes(t, r, "Input Shapes")))
                except CellFault:
                    pass
            for n in sorted(counts):
                if mm and n < 2:
                    continue
                idx = qo_interp.matmul_index(db, kt, n, quant) if mm else qo_interp.generic_index(db, kt, n, T["axes"][0])
                for p in idx or []:
                    if len(shapes(t, p.row, "Input Shapes")) == n:
                        own[p.row] = (p, idx)
        T["held_out"] = len(own)
        enabled = [A for A in T["groups"] if m is None or len(A) <= m]
        for r in sorted(own):
            p, idx = own[r]
            allg = qo_interp.groups_of(idx)
            if path == "attention_special":
                kd = dict(p.key)
                req = ("sparse_mode", "kv_heads", "input_layout") + \
                    (("quant_mode",) if "quant_mode" in kd and t.has("Runtime quant_mode") else ())
            G = [g for g in allg if qo_interp.key_match(p.key, g[0], required=req, allow_extra=extra)]
            if mm:
                nd = lambda k: 0 if all(f == "ND" for f in dict(k).get("input_formats", ())) else 1  # noqa: E731
                G = sorted(G, key=lambda g: (nd(g[0]), -len(g[1])))
            groups = [[q for q in g[1] if q.row != r] for g in G]
            line = t.lines[r] if hasattr(t, "lines") else None
            tgt = dict(p.axes)

            def asked(AG):
                if path == "attention_special":
                    return attn_ask(groups, tgt, AG, m, sq)
                return ask(groups, tgt, AG, m)
            any_in = False
            for gi, A in enumerate(T["groups"]):
                if A not in enabled:
                    continue
                res = asked([A])
                inn = brackets(groups, tgt, A)
                any_in |= inn
                c = cells.setdefault((kt, ",".join(A), inn), [0, []])
                c[0] += 1
                if res:
                    c[1].append((res[0] - p.lat) / p.lat)
            res = asked(T["groups"])
            c = cells.setdefault((kt, "query", any_in), [0, []])
            c[0] += 1
            if res:
                c[1].append((res[0] - p.lat) / p.lat)
            ans.append({"table": len(tabs) - 1, "kernel": kt, "file": T["file"], "line": line,
                        "coords": [p.axes.get(a, math.nan) for a in T["axes"]], "actual": p.lat,
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
                        **({} if T["covered"] else {"not_checked_because": T["why"]}), "cells": cl})
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
        o.write("\nnot checked:\n")
        for T in un:
            o.write("  %s (%s, %s): %d rows: %s\n" % (T["kernel"], T["path"], T["file"], T["rows"], T["why"]))
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
