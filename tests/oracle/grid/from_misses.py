#!/usr/bin/env python3
"""Oracle for `opdb grid --from-misses RESULTS.jsonl` and `opdb query --collect DIR`, written
from docs/GRID.md "Rows from query misses" and docs/GRID.md §7 (never from opdb's output).

Each `opdb query` result line with "source": "MISS" and a "request" object (kernel-level queries,
default mode) becomes a theory row of <DIR>/<kernel>.csv laid out as docs/GRID.md §7.2 lays out a grid
row (the first data row is the template); rows equal (signature, README "Row signatures") to a row
of the table or to an earlier request are dropped; new rows are sorted by their input shapes
(§7.5) and appended; the file is rewritten as grid rewrites it (CRLF, minimal quoting).

  from_misses.py --database-path DIR --from-misses RESULTS.jsonl [--plan [--json]] [--strict]
(the stand-in tests/oracle/bin/opdb runs it for `opdb grid`; query_oracle.py calls collect())."""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grid_oracle import sig, tolerant_count  # noqa: E402  (the row signature and slot count)

COPY = ("OP State", "Accelerator Core", "Input Data Types", "Output Data Types", "Input Formats",
        "Output Formats", "Output Shapes")
STATS = ("Profiling Count", "Profiling Min Duration(us)", "Profiling Max Duration(us)",
         "Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)")
ZERO_WORDS = ("duration", "latency", "time", "cycles", "ratio", "miss", "utilization")
# the columns an attention or communication row needs beyond its tensors: (request object, field, column)
EXTRA = (("attention", "avg_seq_len", "Runtime avg_seq_len"), ("attention", "avg_seq_len", "avg_seq_len"),
         ("attention", "sparse_mode", "Runtime sparse_mode"), ("attention", "num_kv_heads", "Runtime num_key_value_heads"),
         ("attention", "input_layout", "Runtime input_layout"), ("attention", "batch_size", "Runtime batch_size"),
         ("comm", "message_bytes", "message_bytes"), ("comm", "num_devices", "num_devices"),
         ("comm", "topology_tier", "topology_tier"))


def xsig(row, k):
    """The row signature, and the runtime and message cells (attention and communication rows differ in them)."""
    return (sig(row, k),) + tuple(row.get(c, "") for _, _, c in EXTRA)


class Bad(Exception):
    pass


def tensors(v, what, src, ln):
    if v is None:
        return []
    if not isinstance(v, list):
        raise Bad(f"{src}:{ln}: request.{what} is not a list")
    out = []
    for i, t in enumerate(v):
        sh = t.get("shape") if isinstance(t, dict) else None
        dt = t.get("dtype") if isinstance(t, dict) else None
        fm = t.get("format") if isinstance(t, dict) else None
        plain = lambda s: not any(c in s for c in ';"\r\n')  # noqa: E731
        if (not isinstance(sh, list) or not isinstance(dt, str) or not (fm is None or isinstance(fm, str))
                or not plain(dt) or (isinstance(fm, str) and not plain(fm))):
            raise Bad(f"{src}:{ln}: request.{what}[{i}] needs a shape list, a dtype and a format")
        if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in sh):
            raise Bad(f"{src}:{ln}: request.{what}[{i}].shape: not a non-negative integer")
        out.append((tuple(sh), dt, fm if isinstance(fm, str) else "ND"))
    return out


def requests(lines, src):
    """(requests, result lines, misses, misses without a request)."""
    reqs, n, misses, without = [], 0, 0, 0
    for ln, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s:
            continue
        try:
            v = json.loads(s)
        except ValueError:
            v = None
        if not isinstance(v, dict):
            raise Bad(f"{src}:{ln}: not a JSON object (expected an opdb query result line)")
        n += 1
        if v.get("source") != "MISS":
            continue
        misses += 1
        rq = v.get("request")
        if not isinstance(rq, dict):
            without += 1
            continue
        k = rq.get("kernel")
        if not isinstance(k, str) or not k or k.startswith(".") or "/" in k or "\\" in k:
            raise Bad(f"{src}:{ln}: request.kernel is not a kernel type name")
        objs = {o: rq.get(o) for o in ("attention", "comm") if isinstance(rq.get(o), dict)}
        reqs.append((k, tensors(rq.get("inputs"), "inputs", src, ln), tensors(rq.get("outputs"), "outputs", src, ln),
                     objs))
    return reqs, n, misses, without


def joined(ts, slots, idx, tmpl_cell):
    parts = (tmpl_cell or "").split(";")
    out = []
    for i in range(max(len(ts), slots)):
        if i < len(ts):
            x = ts[i][idx]
            out.append(",".join(map(str, x)) if idx == 0 else x)
        else:
            out.append("" if idx == 0 else (parts[i] if i < len(parts) else ""))
    return ";".join(out)


def shape_cell(ts, slots):
    if not ts and not slots:
        return ""
    return '"' + joined(ts, slots, 0, None) + '"'


def cell_text(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, str) and not any(ch in v for ch in ';"\r\n'):
        return v
    return ""


def build(header, tmpl, req, kin, kout):
    _, ins, outs, objs = req
    row = {}
    for h in header:
        if h in COPY:
            row[h] = tmpl.get(h, "")
        elif h in STATS:
            row[h] = ""
        elif any(w in h.lower() for w in ZERO_WORDS):
            row[h] = "0"
        else:
            row[h] = tmpl.get(h, "")
    if "Input Shapes" in header:
        row["Input Shapes"] = shape_cell(ins, kin)
    if "Input Data Types" in header:
        row["Input Data Types"] = joined(ins, kin, 1, tmpl.get("Input Data Types"))
    if "Input Formats" in header:
        row["Input Formats"] = joined(ins, kin, 2, tmpl.get("Input Formats"))
    if "Output Shapes" in header:
        row["Output Shapes"] = shape_cell(outs, kout) if outs else ""
    if outs and "Output Data Types" in header:
        row["Output Data Types"] = joined(outs, kout, 1, tmpl.get("Output Data Types"))
    if outs and "Output Formats" in header:
        row["Output Formats"] = joined(outs, kout, 2, tmpl.get("Output Formats"))
    for o, f, c in EXTRA:
        if c in header and o in objs:
            row[c] = cell_text(objs[o].get(f))
    return row


def sort_key(cell):
    c = cell.strip('"')
    if not cell:
        return []
    return [tuple(int(x) for x in s.split(",")) if s else () for s in c.split(";")]


def run(root, reqs, plan):
    """Per kernel type, in name order: (kernel, requests, distinct, appended, skip reason)."""
    by = {}
    for r in reqs:
        by.setdefault(r[0], []).append(r)
    result = []
    for k in sorted(by):
        rs = by[k]
        path = os.path.join(root, k + ".csv")
        if not os.path.isfile(path):
            result.append((k, len(rs), 0, 0, "no such table"))
            continue
        text = open(path, "rb").read().decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
        # a communication table has no shapes: its rows are its message columns
        shapeless = rows and "Input Shapes" not in rows[0] and "message_bytes" not in rows[0]
        if not rows or shapeless or len(rows) < 2:
            why = "empty file" if not rows else ("no 'Input Shapes' column" if shapeless
                                                 else "no data rows to copy the layout from")
            result.append((k, len(rs), 0, 0, why))
            continue
        header = rows[0]
        dicts = [dict(zip(header, r + [""] * (len(header) - len(r)))) for r in rows[1:]]
        tmpl = dicts[0]
        kin = tolerant_count(tmpl["Input Shapes"]) if "Input Shapes" in header else 0
        kout = tolerant_count(tmpl.get("Output Shapes", "")) if "Output Shapes" in header else 0
        seen = {xsig(d, k) for d in dicts}
        own, new = set(), []
        for r in rs:
            row = build(header, tmpl, r, kin, kout)
            s = xsig(row, k)
            own.add(s)
            if s not in seen:
                seen.add(s)
                new.append(row)
        new.sort(key=lambda row: sort_key(row.get("Input Shapes", "")))  # stable
        if not plan and new:
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\r\n")
            w.writerow(header)
            for r in rows[1:]:
                w.writerow(r + [""] * (len(header) - len(r)))
            for row in new:
                w.writerow([row[h] for h in header])
            with open(path, "wb") as f:
                f.write(buf.getvalue().encode("utf-8"))
        result.append((k, len(rs), len(own), len(new), None))
    return result


def report(root, res, counts, plan, js, out):
    n, misses, without = counts
    tot = [sum(r[1] for r in res), sum(r[2] for r in res), sum(r[3] for r in res)]
    if plan and js:
        doc = {"tables": [{"kernel_type": k, "skipped": why, "requests": q, "distinct": d, "to_append": a}
                          for k, q, d, a, why in res],
               "total": {"results": n, "misses": misses, "without_request": without, "requests": tot[0],
                         "distinct": tot[1], "to_append": tot[2]}}
        out.write(json.dumps(doc, indent=2) + "\n")
    elif plan:
        out.write("%-48s %10s %10s %10s\n" % ("table", "requests", "distinct", "to_append"))
        for k, q, d, a, why in res:
            if why:
                out.write("%-48s %10d skipped: %s\n" % (k + ".csv", q, why))
            else:
                out.write("%-48s %10d %10d %10d\n" % (k + ".csv", q, d, a))
        out.write("%-48s %10d %10d %10d\n" % ("total", tot[0], tot[1], tot[2]))
    else:
        out.write(f"Appended {tot[2]} rows across {sum(1 for r in res if r[3])} CSV files under {root}.\n")
        skipped = [r for r in res if r[4]]
        if skipped:
            out.write(f"Skipped {len(skipped)} kernel types:\n")
            for r in skipped:
                out.write(f"  - {r[0]}.csv ({r[4]})\n")
    # nothing meaningful: no request at all, or no row added
    return not res or tot[2] == 0


def collect(lines, src, root, plan, js, out):
    """The whole run; (exit code, nothing-meaningful flag). Used by query_oracle.py for --collect."""
    try:
        reqs, n, misses, without = requests(lines, src)
    except Bad as e:
        print(f"opdb: {e}", file=sys.stderr)
        return 1, False
    if not os.path.isdir(root):
        print(f"Data directory does not exist: {root}", file=sys.stderr)
        return 1, False
    res = run(root, reqs, plan)
    return 0, report(root, res, (n, misses, without), plan, js, out)


def main(args):
    root = results = None
    plan = js = strict = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--database-path", "--data-dir", "--from-misses") and i + 1 < len(args):
            if a == "--from-misses":
                results = args[i + 1]
            else:
                root = args[i + 1]
            i += 2
            continue
        if a == "--plan":
            plan = True
        elif a == "--json":
            js = True
        elif a == "--strict":
            strict = True
        else:
            print(f"oracle: no oracle for: grid {a}", file=sys.stderr)
            return 99
        i += 1
    if results is None:
        print("oracle: no oracle for: grid without --from-misses", file=sys.stderr)
        return 99
    if root is None or (js and not plan):
        print("usage: opdb grid ...", file=sys.stderr)
        return 2
    if not os.path.isfile(results):
        print(f"opdb grid: cannot open results file: {results}", file=sys.stderr)
        return 1
    with open(results, encoding="utf-8") as f:
        lines = f.read().split("\n")
    rc, nothing = collect(lines, results, root, plan, js, sys.stdout)
    return 1 if rc == 0 and strict and nothing else rc


def quirks(args):
    print("opdb grid: --from-misses takes no --reference-quirks", file=sys.stderr)
    return 2 if "--from-misses" in args else 99


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
