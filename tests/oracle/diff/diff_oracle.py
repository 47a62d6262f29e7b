#!/usr/bin/env python3
"""Oracle for `opdb diff OLD NEW`, written from docs/DIFF.md, not from opdb.

The row identity is the one validate's oracle implements (docs/FORMAT.md §3.5 "Row
signatures" + docs/ROW-IDENTITY.md); everything else here follows docs/DIFF.md:
what the consumer sees of an identity, the verdicts, Welch's t-test (its
p-value by a power series of the incomplete beta function, not opdb's continued
fraction), the per-kernel-type summary, the weights and both report layouts.

usage: diff_oracle.py OLD NEW [--threshold F] [--alpha F] [--fail-on WHAT]
                      [--weights RESULTS.jsonl] [--json]
"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validate"))
import validate as V  # noqa: E402  (identity, strip helpers)

LAT = ["Average Duration(us)", "Profiling Average Duration(us)", "Duration(us)"]
VERDICTS = ["REGRESSION", "GAIN", "DRIFT", "SAME", "UNKNOWN", "ADDED", "REMOVED", "STATUS_CHANGE"]
SIG_COLS = ["Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types",
            "Output Formats", "EP Size"]


def num(cell):
    c = cell.strip(V.WS)
    if not c:
        return None
    try:
        return float(c)
    except ValueError:
        return None


# ---- statistics ---------------------------------------------------------------

def betainc(a, b, x):
    """I_x(a, b) from x^a (1-x)^b / (a B(a,b)) * sum_n (a+b)_n / (a+1)_n x^n,
    on the side where x <= 1/2 (all terms positive, ratio -> x)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > 0.5:
        return 1.0 - betainc(b, a, 1.0 - x)
    lpre = a * math.log(x) + b * math.log1p(-x) - math.log(a) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    term, total, n = 1.0, 1.0, 0
    while True:
        term *= (a + b + n) / (a + 1 + n) * x
        total += term
        n += 1
        if term < 1e-17 * total or n > 100000:
            break
    return math.exp(lpre) * total


def welch_p(n1, m1, v1, n2, m2, v2):
    a, b = v1 / n1, v2 / n2
    if a + b == 0:
        return 0.0 if m1 != m2 else 1.0
    t = (m2 - m1) / math.sqrt(a + b)
    df = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
    return min(1.0, betainc(df / 2, 0.5, df / (df + t * t)))


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


# ---- one side -------------------------------------------------------------------

def load_table(path, warn):
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        rd = csv.reader(f)
        header = None
        groups = {}
        order = []
        lines = {}
        for rec in rd:
            if not rec:
                continue
            if header is None:
                header = rec
                col = {}
                for i, h in enumerate(header):
                    col.setdefault(h, i)
                if "Input Shapes" not in col or not any(c in col for c in LAT):
                    warn(f"{path}: skipped: not a database table")
                    return None
                runtime = [h for h in header if (h.startswith("Runtime ") and len(h) > 8) or h == "avg_seq_len"]
                continue
            line = rd.line_num

            def cell(name):
                i = col.get(name)
                return rec[i] if i is not None and i < len(rec) else ""
            lat, zero = None, False
            for c in LAT:
                if c not in col:
                    continue
                x = num(cell(c))
                if x is None:
                    continue
                if math.isfinite(x) and x > 0:
                    lat = x
                    break
                if x == 0:
                    zero = True
            n, m, s = num(cell("Profiling Count")), num(cell("Profiling Average Duration(us)")), num(cell("Profiling Std Duration(us)"))
            stats = None
            if (n is not None and math.isfinite(n) and n >= 2 and n == math.floor(n) and m is not None
                    and math.isfinite(m) and m > 0 and s is not None and math.isfinite(s) and s >= 0):
                stats = (n, m, s * s * n / (n - 1))
            row = {h: cell(h) for h in SIG_COLS}
            for h in runtime:
                row[h] = cell(h)
            key = V.identity(row, os.path.basename(path)[:-4], runtime)
            shown = (row["Input Shapes"] or "N/A") + " -> " + (row["Output Shapes"] or "N/A")
            g = groups.get(key)
            rep = {"line": line, "lat": lat, "stats": stats, "display": shown}
            if g is None:
                g = dict(rep, status="visible" if lat is not None else "zero" if zero else "invisible")
                groups[key] = g
                order.append(key)
            elif lat is not None:
                if g["status"] == "visible" and g["lat"] != lat:
                    g["status"] = "conflict"
                elif g["status"] in ("zero", "invisible"):
                    g.update(rep, status="visible")
            elif zero and g["status"] == "invisible":
                g["status"] = "zero"
            lines[line] = key
    if header is None:
        warn(f"{path}: skipped: no header")
        return None
    return order, groups, lines


def load_side(d, warn):
    if not os.path.isdir(d):
        raise RuntimeError(f"database folder not found: {d}")
    out = {}
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if name.endswith(".csv") and len(name) > 4 and not name.startswith(".") and os.path.isfile(p):
            t = load_table(p, warn)
            if t is not None:
                out[name[:-4]] = t
    return out


# ---- pairing and verdicts -------------------------------------------------------

def judge(a, b, o):
    if a is None:
        return "ADDED", None, None
    if b is None:
        return "REMOVED", None, None
    if a["status"] != b["status"]:
        return "STATUS_CHANGE", None, None
    if a["status"] == "conflict":
        return "UNKNOWN", None, None
    if a["status"] != "visible":
        return "SAME", None, None
    ratio = b["lat"] / a["lat"]
    p = None
    if a["stats"] and b["stats"]:
        p = welch_p(*a["stats"], *b["stats"])
    if not abs(b["lat"] - a["lat"]) > o["threshold"] * a["lat"]:
        return "SAME", ratio, p
    if p is None:
        return "UNKNOWN", ratio, p
    if p < o["alpha"]:
        return ("REGRESSION" if b["lat"] > a["lat"] else "GAIN"), ratio, p
    return "DRIFT", ratio, p


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def add_rows(rows, old, share):
    """Rows {file, line, latency_us} of OLD: each adds share, or (share None) its latency."""
    for e in rows if isinstance(rows, list) else []:
        f, ln, lat = (e.get("file"), e.get("line"), e.get("latency_us")) if isinstance(e, dict) else (None,) * 3
        if not isinstance(f, str) or not isinstance(ln, int) or isinstance(ln, bool) or not _num(lat):
            continue
        base = f.rsplit("/", 1)[-1]
        if len(base) <= 4 or not base.endswith(".csv") or base[:-4] not in old:
            continue
        _, groups, by_line = old[base[:-4]]
        x = float(lat) if share is None else share
        if ln in by_line and math.isfinite(x) and x > 0:
            g = groups[by_line[ln]]
            g["explain_us"] = g.get("explain_us", 0.0) + x


def add_explain(ex, lat, old, depth):
    """DIFF.md §4: an answer of lat us shared among the rows its explanation names, nested parts included."""
    if not isinstance(ex, dict) or depth > 16:
        return
    add_rows(ex.get("rows"), old, None)
    comm = ex.get("comm")
    crows = comm.get("rows") if isinstance(comm, dict) else None
    if isinstance(crows, list) and crows:
        add_rows(crows, old, None if comm.get("exact") is True else lat / len(crows))
    interp = ex.get("interpolation")
    pts = interp.get("points") if isinstance(interp, dict) else None
    for pt in pts if isinstance(pts, list) else []:
        if not isinstance(pt, dict):
            continue
        w, pl, prow = pt.get("weight"), pt.get("latency_us"), pt.get("rows")
        if not _num(w) or not _num(pl) or not isinstance(prow, list) or not prow or not w * pl >= 0:
            continue
        add_rows(prow, old, w * pl / len(prow))
    subs = ex.get("sub_kernels")
    for sk in subs if isinstance(subs, list) else []:
        sl = sk.get("latency_us") if isinstance(sk, dict) else None
        if _num(sl) and math.isfinite(sl) and sl > 0:
            add_explain(sk.get("explain"), float(sl), old, depth + 1)


def weigh(path, kts, old, warn):
    total, lines = 0.0, 0
    w = {k: 0.0 for k in kts}
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            s = raw.strip(V.WS)
            if not s:
                continue
            try:
                v = json.loads(s)
            except ValueError:
                v = None
            if not isinstance(v, dict):
                warn(f"{path}:{lineno}: not a JSON object; line skipped")
                continue
            lat, kt = v.get("latency_us"), v.get("kernel_type")
            if v.get("hit") is True and isinstance(lat, (int, float)) and not isinstance(lat, bool):
                x = float(lat)
                if math.isfinite(x) and x > 0:
                    total += x
                    lines += 1
                    if isinstance(kt, str) and "," not in kt and kt in w:
                        w[kt] += x
                    add_explain(v.get("explain"), x, old, 0)
    return w, total, lines


def run(old, new, o, warn):
    so, sn = load_side(old, warn), load_side(new, warn)
    names = sorted(set(so) | set(sn))
    kts, changes = [], []
    counts = {v: 0 for v in VERDICTS}
    for k in names:
        oo, og, _ = so.get(k, ([], {}, {}))
        no, ng, _ = sn.get(k, ([], {}, {}))
        pairs = [(og[key], ng.get(key)) for key in oo] + [(None, ng[key]) for key in no if key not in og]
        kc = {v: 0 for v in VERDICTS}
        ratios = []
        for a, b in pairs:
            v, ratio, p = judge(a, b, o)
            kc[v] += 1
            counts[v] += 1
            if ratio is not None:
                ratios.append(ratio)
            changes.append({"kt": k, "v": v, "old": a, "new": b, "ratio": ratio, "p": p})
        med = median(ratios) if ratios else None
        kts.append({"name": k, "rows": len(pairs), "compared": len(ratios), "median": med,
                    "offset": med is not None and (med > o["offset"] or med < 1.0 / o["offset"]), "counts": kc})
    weights = None
    if o["weights"]:
        if not os.path.isfile(o["weights"]):
            raise RuntimeError(f"weights file not found: {o['weights']}")
        w, total, lines = weigh(o["weights"], names, so, warn)
        pred = 0.0
        for k in kts:
            k["weight"] = w[k["name"]] / total if total > 0 else 0.0
            k["predicted"] = 0.0 if k["median"] is None else k["weight"] * (k["median"] - 1.0)
            pred += k["predicted"]
        weights = {"results": lines, "total_us": total, "predicted_change": pred}
    return kts, changes, counts, weights


# ---- reports --------------------------------------------------------------------

def side_text(g):
    if g is None:
        return "-"
    return "%.3f" % g["lat"] if g["status"] == "visible" else g["status"]


def md_cell(s):
    return s.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown(old, new, o, kts, changes, counts, weights):
    out = [f"# opdb diff: {old} -> {new}", "",
           "threshold %g, alpha %g, systematic offset beyond %gx" % (o["threshold"], o["alpha"], o["offset"]), "",
           "| verdict | rows |", "| --- | ---: |"]
    out += [f"| {v} | {counts[v]} |" for v in VERDICTS]
    w = weights is not None
    out += ["", "## Kernel types", "",
            "| kernel type | rows | compared | median ratio | offset | changes |" + (" weight | predicted |" if w else ""),
            "| --- | ---: | ---: | ---: | --- | --- |" + (" ---: | ---: |" if w else "")]
    for k in kts:
        ch = ", ".join(f"{v} {k['counts'][v]}" for v in VERDICTS if v != "SAME" and k["counts"][v]) or "-"
        med = "-" if k["median"] is None else "%.4f" % k["median"]
        line = f"| {md_cell(k['name'])} | {k['rows']} | {k['compared']} | {med} | {'yes' if k['offset'] else ''} | {ch} |"
        if w:
            line += " %.2f%% | %+.3f%% |" % (100 * k["weight"], 100 * k["predicted"])
        out.append(line)
    if w:
        out += ["", "Predicted end-to-end change: %+.3f%% (%d results, %.3f us)"
                % (100 * weights["predicted_change"], weights["results"], weights["total_us"])]
    out += ["", "## Changes", ""]
    shown = [c for c in changes if c["v"] != "SAME"]
    if not shown:
        out.append("No changes.")
    else:
        out += ["| kernel type | verdict | row | old us | new us | ratio | p | lines |",
                "| --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for c in shown:
        g = c["new"] or c["old"]
        lines = " ".join(([f"old:{c['old']['line']}"] if c["old"] else []) + ([f"new:{c['new']['line']}"] if c["new"] else []))
        out.append(f"| {md_cell(c['kt'])} | {c['v']} | {md_cell(g['display'])} | {side_text(c['old'])} | "
                   f"{side_text(c['new'])} | {'-' if c['ratio'] is None else '%.4f' % c['ratio']} | "
                   f"{'-' if c['p'] is None else '%.3g' % c['p']} | {lines} |")
    return "\n".join(out) + "\n"


def as_json(old, new, o, kts, changes, counts, weights):
    doc = {"old": old, "new": new, "threshold": o["threshold"], "alpha": o["alpha"], "offset_factor": o["offset"],
           "counts": counts, "kernel_types": []}
    for k in kts:
        e = {"kernel_type": k["name"], "rows": k["rows"], "compared": k["compared"], "median_ratio": k["median"],
             "systematic_offset": k["offset"], "counts": k["counts"]}
        if weights is not None:
            e["weight"] = k["weight"]
            e["predicted_change"] = k["predicted"]
        doc["kernel_types"].append(e)
    if weights is not None:
        doc["weights"] = weights
    doc["changes"] = []
    for c in changes:
        if c["v"] == "SAME":
            continue
        e = {"kernel_type": c["kt"], "verdict": c["v"], "row": (c["new"] or c["old"])["display"]}
        for side in ("old", "new"):
            g = c[side]
            e[side + "_line"] = g["line"] if g else None
            e[side + "_status"] = g["status"] if g else None
            e[side + "_us"] = g["lat"] if g and g["status"] == "visible" else None
        e["ratio"] = c["ratio"]
        e["p_value"] = None if c["p"] is None else round(c["p"], 6)
        if weights is not None:
            e["weight"] = c["old"].get("explain_us", 0.0) / weights["total_us"] if c["old"] and weights["total_us"] > 0 else 0.0
        doc["changes"].append(e)
    return json.dumps(doc, indent=2) + "\n"


def usage(msg):
    print("usage: opdb diff OLD NEW [options]", file=sys.stderr)
    print(f"opdb diff: error: {msg}", file=sys.stderr)
    return 2


def main(args):
    o = {"threshold": 0.05, "alpha": 0.05, "offset": 1.15, "weights": None}
    fail, js, dirs, strict = "regression", False, [], False
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--") and "=" in a:  # --name=value
            a, _, val = a.partition("=")
            args = args[:i] + [a, val] + args[i + 1:]
        if a in ("--threshold", "--alpha", "--fail-on", "--weights", "--html"):
            if i + 1 >= len(args):
                return usage(f"argument {a}: expected one argument")
            val = args[i + 1]
            i += 2
            if a in ("--threshold", "--alpha"):
                try:
                    x = float(val)
                except ValueError:
                    return usage(f"argument {a}: not a number")
                if not math.isfinite(x) or (a == "--threshold" and x < 0) or (a == "--alpha" and not 0 < x <= 1):
                    return usage(f"argument {a}: out of range")
                o[a[2:]] = x
            elif a == "--fail-on":
                if val not in ("regression", "drift", "never"):
                    return usage("argument --fail-on: invalid choice")
                fail = val
            elif a == "--weights":
                o["weights"] = val
            else:
                print("oracle: --html has no oracle", file=sys.stderr)
                return 99
            continue
        if a == "--json":
            js = True
        elif a == "--strict":
            strict = True
        elif a.startswith("-") and a != "-":
            return usage(f"unrecognized arguments: {a}")
        else:
            dirs.append(a)
        i += 1
    if len(dirs) != 2:
        return usage("expected two database folders, OLD and NEW")

    def warn(m):
        print(f"opdb diff: warning: {m}", file=sys.stderr)
    try:
        kts, changes, counts, weights = run(dirs[0], dirs[1], o, warn)
    except RuntimeError as e:
        print(f"opdb diff: {e}", file=sys.stderr)
        return 1
    sys.stdout.write((as_json if js else markdown)(dirs[0], dirs[1], o, kts, changes, counts, weights))
    # --strict: nothing compared (no rows, no kernel type or row on both sides) or no weighted hit
    common = any(c["old"] is not None and c["new"] is not None for c in changes)
    if strict and (not common or (weights is not None and weights["results"] == 0)):
        return 1
    if fail == "never":
        return 0
    if counts["REGRESSION"]:
        return 1
    if fail == "drift" and (counts["DRIFT"] or counts["UNKNOWN"] or counts["STATUS_CHANGE"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
