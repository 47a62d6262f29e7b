#!/usr/bin/env python3
"""Independent oracle for `opdb parse` on PyTorch profiler traces and Ascend
SQLite exports, written from docs/ingest-formats.md (and docs/INGEST.md §1 for
the aggregation), never from opdb's output.

  oracle.py kineto TRACE OUTDIR   one CSV per operator (docs/ingest-formats.md §3)
  oracle.py sqlite DB OUTDIR      one CSV per kernel type (docs/ingest-formats.md §2 + docs/INGEST.md §1)
  oracle.py extra-columns CASE    default-mode kernel_details goldens: add the columns opdb's
                                  default mode writes for exact merges (see EXTRA below)
  oracle.py merge CASE            expected tables of a `parse A; parse B --merge` case
  oracle.py tables CASE           expected tables of a one-parse default-mode case without FIA rows

Prints the number of files written.  Whole-file, in-memory Python: a
reference for small inputs, not a fast path."""
import csv
import gzip
import json
import math
import os
import sqlite3
import statistics
import sys

METRICS = [
    "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
    "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
    "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
    "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
    "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)",
]
# Written by the default mode after Profiling Std Duration(us) (docs/ingest-formats.md):
# count, min and max of the durations, their left-to-right sum and sum of squares, all "%.6f" but the count.
EXTRA = ["Profiling Count", "Profiling Min Duration(us)", "Profiling Max Duration(us)", "Profiling Sum Duration(us)",
         "Profiling Sum Squares(us^2)"]
BASE = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
        "Output Data Types", "Output Formats"]


def sanitize(name):
    out = "".join("_" if c in '<>:"/\\|?*' or ord(c) < 32 else c for c in name)
    return out or "UNKNOWN_TYPE"


def total(xs):
    """Left-to-right double sum, as the reference accumulates (not math.fsum, not 3.12's compensated sum())."""
    s = 0.0
    for x in xs:
        s += x
    return s


def sumsq(xs):
    sq = 0.0
    for x in xs:
        sq += x * x
    return sq


def extra_cells(xs):
    return [str(len(xs)), "%.6f" % min(xs), "%.6f" % max(xs), "%.6f" % total(xs), "%.6f" % sumsq(xs)]


def std(xs):
    n = len(xs)
    s = total(xs)
    sq = 0.0
    for x in xs:
        sq += x * x
    mean = s / n
    return math.sqrt(max(0.0, sq / n - mean * mean))


def write(outdir, fname, header, rows):
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, fname), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\r\n")
        w.writerow(header)
        w.writerows(rows)


def write_tables(outdir, groups, header, row_of):
    """groups: ordered list of (type, group); one file per type, types in order of first group."""
    types = {}
    for t, g in groups:
        types.setdefault(t, []).append(g)
    used = set()
    for t, gs in types.items():
        base = sanitize(t)
        fname, k = base + ".csv", 2
        while fname in used:
            fname, k = "%s~%d.csv" % (base, k), k + 1
        used.add(fname)
        write(outdir, fname, header, [row_of(g) for g in gs])
    return len(types)


# ---------------------------------------------------------------- Kineto

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
RUNTIME = {"cuda_runtime", "cuda_driver", "runtime", "hip_runtime"}
OPS = {"cpu_op", "operator"}


def load_trace(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw.decode("utf-8"))
    return d["traceEvents"] if isinstance(d, dict) else d


def shapes_cell(dims):
    if dims is None:
        return ""
    slots = []
    for e in dims:
        if isinstance(e, list) and e and isinstance(e[0], list):
            slots += [",".join(str(x) for x in t) if isinstance(t, list) else "" for t in e]
        elif isinstance(e, list):
            slots.append(",".join(str(x) for x in e))
        else:
            slots.append("")
    return '"' + ";".join(slots) + '"'


def kineto(path, outdir):
    events = load_trace(path)
    launches, devices, ops = {}, [], {}
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        args = e.get("args") or {}
        if cat in DEVICE:
            devices.append((i, e))
        elif cat in RUNTIME and isinstance(args.get("correlation"), int) and "ts" in e:
            launches.setdefault(args["correlation"], e)  # the first one wins
        elif cat in OPS:
            ops.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append((i, e))
    calls = {}  # operator index -> (operator event, [device events in file order])
    no_launch = no_op = 0
    for i, d in devices:
        corr = (d.get("args") or {}).get("correlation")
        lz = launches.get(corr) if isinstance(corr, int) else None
        if lz is None:
            no_launch += 1
            continue
        lts = float(lz["ts"])
        best = None
        for j, o in ops.get((str(lz.get("pid")), str(lz.get("tid"))), []):
            ts, dur = float(o["ts"]), float(o.get("dur", 0))
            if ts <= lts <= ts + dur:
                k = (ts, -dur, j)
                if best is None or k > best[0]:
                    best = (k, j, o)
        if best is None:
            no_op += 1
            continue
        calls.setdefault(best[1], (best[2], []))[1].append(d)
    groups = {}
    for j in sorted(calls):
        o, devs = calls[j]
        args = o.get("args") or {}
        dims = args.get("Input Dims")
        types = args.get("Input type")
        key = (o.get("name", ""), json.dumps(dims), json.dumps(types))
        g = groups.setdefault(key, {"name": key[0], "dims": dims, "types": types, "durs": [], "knames": []})
        call = 0.0
        for d in devs:
            call += float(d.get("dur", 0))
            if d.get("name", "") not in g["knames"]:
                g["knames"].append(d.get("name", ""))
        g["durs"].append(call)
    header = BASE + ["Profiling Average Duration(us)", "Profiling Median Duration(us)", "Profiling Std Duration(us)",
                     "Profiling Count", "Profiling Min Duration(us)", "Profiling Max Duration(us)",
                     "Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)", "Kernel Names"]

    def row_of(g):
        xs = g["durs"]
        dtypes = ";".join(str(t) for t in g["types"]) if isinstance(g["types"], list) else ""
        return ["", "GPU", shapes_cell(g["dims"]), dtypes, "", "", "", "",
                "%.6f" % (total(xs) / len(xs)), "%.6f" % statistics.median(xs), "%.6f" % std(xs), str(len(xs)),
                "%.6f" % min(xs), "%.6f" % max(xs), "%.6f" % total(xs), "%.6f" % sumsq(xs), ";".join(g["knames"])]

    n = write_tables(outdir, [(g["name"], g) for g in groups.values()], header, row_of)
    print(n, "file(s);", no_launch, "device event(s) without launch;", no_op, "without operator", file=sys.stderr)
    return n


# ---------------------------------------------------------------- Ascend SQLite

COUNTERS = ["aic_total_time", "aic_total_cycles", "aic_mac_time", "aic_mac_ratio", "aic_scalar_time",
            "aic_scalar_ratio", "aic_mte1_time", "aic_mte1_ratio", "aic_mte2_time", "aic_mte2_ratio",
            "aic_fixpipe_time", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_total_time", "aiv_total_cycles",
            "aiv_vec_time", "aiv_vec_ratio", "aiv_scalar_time", "aiv_scalar_ratio", "aiv_mte2_time",
            "aiv_mte2_ratio", "aiv_mte3_time", "aiv_mte3_ratio", "aiv_icache_miss_rate", None]
ALIASES = {"split_qkv_rmsnorm_rope_kernel_0": "split_qkv_rmsnorm_rope_kernel", "muls_add_kernel_1": "muls_add_kernel"}


def is_na(s):
    return s.strip().strip('"').upper() == "N/A"


def sqlite_db(path, outdir):
    con = sqlite3.connect("file:%s?immutable=1" % path, uri=True)
    strings = dict(con.execute("SELECT id, value FROM STRING_IDS"))
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    pmu = {}
    present = [False] * 25
    if "TASK_PMU_INFO" in tables:
        ids = {v: k for k, v in strings.items()}
        for m, c in enumerate(COUNTERS):
            present[m] = c is not None and c in ids
        for gid, name, value in con.execute("SELECT globalTaskId, name, value FROM TASK_PMU_INFO"):
            pmu.setdefault(gid, {})[strings.get(name)] = value
    q = ("SELECT t.endNs - t.startNs, c.globalTaskId, c.opType, c.inputShapes, c.outputShapes, c.taskType, "
         "c.inputDataTypes, c.inputFormats, c.outputDataTypes, c.outputFormats FROM COMPUTE_TASK_INFO c "
         "JOIN TASK t ON t.globalTaskId = c.globalTaskId ORDER BY t.startNs, c.globalTaskId")
    groups = {}
    for row in con.execute(q):
        dns, gid = row[0], row[1]
        cell = [(strings.get(x) or "").strip() for x in row[2:]]
        typ = ALIASES.get(cell[0], cell[0])
        inp, out = cell[1], cell[2]
        if is_na(inp) or is_na(out):
            continue
        desc = ["", cell[3], cell[4], cell[5], cell[6], cell[7]]  # OP State is not exported
        g = groups.setdefault((typ, inp, out), {"desc": [""] * 6, "durs": [], "m": [0.0] * 25})
        g["durs"].append(dns / 1000)
        for i in range(6):
            if not g["desc"][i] and desc[i]:
                g["desc"][i] = desc[i]
        counters = pmu.get(gid, {})
        for m, c in enumerate(COUNTERS):
            if present[m]:
                v = counters.get(c)
                v = 0.0 if v is None else float(v)
                g["m"][m] += v / 1000 if c.endswith("_time") else v
    assert not any(k[0] == "FusedInferAttentionScore" for k in groups), "FIA rows: not covered by this oracle"
    header = BASE + ["Profiling Average Duration(us)", "Profiling Median Duration(us)",
                     "Profiling Std Duration(us)"] + EXTRA + ["Profiling Average " + m for m in METRICS]

    def row_of(item):
        (typ, inp, out), g = item
        xs = g["durs"]
        d = g["desc"]
        r = [d[0], d[1], inp, d[2], d[3], out, d[4], d[5],
             "%.6f" % (total(xs) / len(xs)), "%.6f" % statistics.median(xs), "%.6f" % std(xs)] + extra_cells(xs)
        r += ["%.6f" % (g["m"][m] / len(xs)) if present[m] else "" for m in range(25)]
        return r

    return write_tables(outdir, [(k[0], (k, g)) for k, g in groups.items() if k[0]], header, row_of)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode in ("extra-columns", "merge", "tables"):
        import oracle_merge
        print({"extra-columns": oracle_merge.extra_columns, "merge": oracle_merge.merge_case,
               "tables": oracle_merge.tables_case}[mode](sys.argv[2]))
    else:
        src, out = sys.argv[2:4]
        print((kineto if mode == "kineto" else sqlite_db)(src, out))
