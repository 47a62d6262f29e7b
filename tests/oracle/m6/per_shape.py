"""Per-shape comparison oracle (docs/ANALYSIS.md §3): the reference
`generate_per_shape_comparison.py` as docs/ANALYSIS.md describes it (run with
--reference-quirks), and opdb's default mode with the differences listed in
docs/COMPATIBILITY.md (`opdb shape-compare`), selected by `quirks`.
Both modes: ties in the sort by (kernel_type, shape_key) ascending (the
reference's set order is not reproducible); sub_kernel_durations names keyed by
their str() text. Never imports or runs opdb.
Run: python3 per_shape.py --tc-trace T --prof-trace P [--output O]"""
import argparse
import ast
import csv
import io
import math
import os
import sys

from analysis_inputs import Fail, check_inputs, load_events, csv_rows, cell, require_columns, default_number

COLUMNS = ["kernel_type", "shape_key", "tc_dur_us", "prof_dur_us", "delta_pct", "tc_count", "prof_count", "source"]


def literal(s: str):
    """Python literal (docs/ANALYSIS.md §1.3); None on failure."""
    try:
        return ("ok", ast.literal_eval(s))
    except Exception:
        return None


def is_scalar(x) -> bool:
    return x is None or isinstance(x, (bool, int, float))


def shape_key(s: str, quirks: bool) -> str:
    """docs/ANALYSIS.md §3.1. The reference iterates every element (a scalar raises
    TypeError); opdb's default mode takes a flat list as one shape and renders a
    scalar in a mixed list as itself."""
    s = s.strip().strip('"').replace(" ", "")
    if not s or ";" in s or "[" not in s:
        return s
    lit = literal(s)
    if lit is None or not isinstance(lit[1], list):
        return s
    v = lit[1]
    if quirks:
        return ";".join(",".join(str(x) for x in el) for el in v)
    if all(is_scalar(el) for el in v):
        return ",".join(str(x) for x in v)
    return ";".join(str(el) if is_scalar(el) else ",".join(str(x) for x in el) for el in v)


def parse_skd(v):
    """A valid sub_kernel_durations: a non-empty list of 2-element lists/tuples (docs/ANALYSIS.md §2.4)."""
    if not isinstance(v, str) or not v:
        return None
    lit = literal(v)
    if lit is None:
        return None
    v = lit[1]
    if not isinstance(v, list) or not v:
        return None
    if not all(isinstance(e, (list, tuple)) and len(e) == 2 for e in v):
        return None
    return v


def py_text(v, quirks: bool, what: str) -> str:
    """A non-string arg: the reference crashes; opdb's default mode uses str() (null = empty)."""
    if isinstance(v, str):
        return v
    if quirks:
        raise Fail(f"args.{what} is not a string")
    return "" if v is None else str(v)


def tc_side(events, quirks: bool) -> dict:
    tc = {}

    def add(key, d, source):
        e = tc.setdefault(key, {"dur": 0, "count": 0, "source": ""})
        e["dur"] += d
        e["count"] += 1
        e["source"] = source  # later events overwrite

    for ev in events:
        if ev.get("ph") != "X":
            continue
        args = ev.get("args", {})
        kt = args.get("kernel_type")
        if not kt:
            continue
        dur = ev.get("dur", 0)
        source = args.get("source", "")
        shape = shape_key(py_text(args.get("simulation_shapes", ""), quirks, "simulation_shapes"), quirks)
        skd = parse_skd(args.get("sub_kernel_durations"))
        if skd:
            for name, d in skd:
                add((str(name), shape), d, source)
            continue
        kt = py_text(kt, quirks, "kernel_type")
        subs = [k.strip() for k in kt.split(",") if k.strip()]
        if len(subs) > 1:
            per = dur / len(subs)
            for k in subs:
                add((k, shape), per, source)
        else:
            add((kt, shape), dur, source)
    return tc


def prof_side(path: str, quirks: bool) -> dict:
    reader = csv_rows(path)
    if not quirks:
        require_columns(reader, path, ["Type", "Start Time(us)", "Duration(us)", "Input Shapes"])
    prof, hcom = {}, {}
    for row in reader:
        typ = cell(row, "Type")
        if not typ or typ.endswith("AicpuKernel"):
            continue
        if quirks:  # invalid numbers are fatal (ValueError), empty cells count as 0
            dur = float(cell(row, "Duration(us)") or "0")
            start = float(cell(row, "Start Time(us)") or "0")
        else:
            dur = default_number(cell(row, "Duration(us)"))
            start = default_number(cell(row, "Start Time(us)"))
            if dur is None or start is None:
                continue
        shape = shape_key(cell(row, "Input Shapes").strip('"'), quirks)
        if typ.startswith("hcom_"):
            k = (int(start) if quirks else start, typ, shape)
            hcom[k] = max(hcom.get(k) or 0.0, dur)
        else:
            e = prof.setdefault((typ, shape), {"dur": 0, "count": 0})
            e["dur"] += dur
            e["count"] += 1
    for (_, typ, shape), m in hcom.items():
        e = prof.setdefault((typ, shape), {"dur": 0, "count": 0})
        e["dur"] += m
        e["count"] += 1
    return prof


def build_rows(tc: dict, prof: dict, quirks: bool) -> list:
    rows = []
    for key in set(tc) | set(prof):
        t = tc.get(key, {"dur": 0, "count": 0, "source": ""})
        p = prof.get(key, {"dur": 0, "count": 0})
        if p["dur"] > 0:
            delta = (t["dur"] - p["dur"]) / p["dur"] * 100
        elif t["dur"] > 0:
            delta = float("inf")
        else:
            delta = 0
        delta = round(delta, 1)
        if not quirks and isinstance(delta, float) and math.isinf(delta):
            delta = ""  # opdb: an infinite delta is an empty cell
        rows.append([key[0], key[1], round(t["dur"], 2), round(p["dur"], 2), delta, t["count"], p["count"],
                     t["source"]])
    rows.sort(key=lambda r: (r[0], r[1]))
    rows.sort(key=lambda r: max(r[2], r[3]), reverse=True)  # stable: ties stay (kernel_type, shape)
    return rows


def run(argv, quirks: bool) -> int:
    p = argparse.ArgumentParser(prog="opdb shape-compare", allow_abbrev=False)
    p.add_argument("--tc-trace", required=True)
    p.add_argument("--prof-trace", required=True)
    p.add_argument("--output")
    p.add_argument("--strict", action="store_true")
    a = p.parse_args(argv)
    output = None if a.output in (None, "", "-") else a.output
    try:
        check_inputs(a.tc_trace, a.prof_trace)
        tc = tc_side(load_events(a.tc_trace), quirks)
        prof = prof_side(a.prof_trace, quirks)
    except Fail as e:
        print(f"opdb shape-compare: {e}", file=sys.stderr)
        return 1
    rows = build_rows(tc, prof, quirks)
    buf = io.StringIO(newline="")
    w = csv.writer(buf)  # CRLF rows, minimal quoting, str() values
    w.writerow(COLUMNS)
    w.writerows(rows)
    data = buf.getvalue().encode("utf-8", errors="surrogateescape")
    if output:
        parent = os.path.dirname(output)
        if parent and not quirks:
            os.makedirs(parent, exist_ok=True)  # the reference crashes on a missing folder
        with open(output, "wb") as f:
            f.write(data)
        sys.stdout.buffer.write(f"Generated {len(rows)} per-shape comparison rows \u2192 {output}\n".encode())
    else:
        sys.stdout.buffer.write(data)
    sys.stdout.flush()
    both = any(k in tc and k in prof for k in set(tc) | set(prof))
    if not quirks and a.strict and not both:
        return 1  # opdb's --strict: no rows, or none compared
    return 0


def main(argv=None) -> int:
    return run(sys.argv[1:] if argv is None else argv, quirks=True)


if __name__ == "__main__":
    sys.exit(main())
