#!/usr/bin/env python3
"""Checks the `MicroBench <counter>` cells of an update case's expected tables
against the op_summary inputs, by the reference's aggregate_summary:
per (OP Type, shapes) group, sum(parse_float(cell)) / number of launches, `%.6f`.

--quirks: the reference exactly (`nan`, `inf` and negative counters summed in).
default:  a counter that is not finite or is negative counts
          as 0, like an unparsable one (parse_float's 0.0); a mean past the
          largest double is written empty.

Written from docs/FORMAT.md §2 (number parsing) and docs/INGEST.md §2, never from opdb.
Usage: metric_means.py CASE_DIR [--quirks]   (exit 1 and the cells that differ)
"""
import csv
import glob
import math
import os
import re
import sys

METRICS = ["aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
           "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
           "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
           "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
           "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)"]
FLOAT = re.compile(r"^[+-]?((\d(_?\d)*)?\.?\d(_?\d)*([eE][+-]?\d(_?\d)*)?|inf|infinity|nan)$", re.I)


def parse_float(s):
    s = (s or "").strip()
    if not FLOAT.match(s):
        return 0.0
    try:
        return float(s)
    except ValueError:
        return 0.0


def key(row):
    cells = ["Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types"]
    # the signature ignores the quotes profilers put around shapes (docs/ROW-IDENTITY.md)
    return (row["OP Type"].strip(),) + tuple((row.get(c) or "").strip().strip('"') for c in cells)


def fmt(x, quirks):
    if not quirks and not math.isfinite(x):
        return ""
    return "%.6f" % x  # Python's %.6f: nan, inf as the reference writes them


def main():
    case = sys.argv[1]
    quirks = "--quirks" in sys.argv
    sums, counts = {}, {}
    for p in sorted(glob.glob(os.path.join(case, "in", "prof", "**", "op_summary*.csv"), recursive=True)):
        with open(p, encoding="utf-8-sig", newline="") as f:
            for row in csv.DictReader(f):
                if not (row.get("OP Type") or "").strip():
                    continue
                k = key(row)
                counts[k] = counts.get(k, 0) + 1
                s = sums.setdefault(k, [0.0] * len(METRICS))
                for i, m in enumerate(METRICS):
                    v = parse_float(row.get(m, ""))
                    if not quirks and not (0.0 <= v <= sys.float_info.max):
                        v = 0.0
                    s[i] += v
    want = {k: [fmt(x / counts[k], quirks) for x in s] for k, s in sums.items()}
    bad, seen = 0, 0
    exp = os.path.join(case, "expected_quirks" if quirks and os.path.isdir(os.path.join(case, "expected_quirks"))
                       else "expected", "db")
    for t in sorted(glob.glob(os.path.join(exp, "*.csv"))):
        op = os.path.basename(t)[:-4]
        with open(t, encoding="utf-8-sig", newline="") as f:
            for row in csv.DictReader(f):
                k = (op,) + key(dict(row, **{"OP Type": op}))[1:]
                if k not in want:
                    continue
                for i, m in enumerate(METRICS):
                    got = row.get("MicroBench " + m)
                    seen += got is not None
                    if got is not None and got != want[k][i]:
                        print(f"{t}: {k[1]!r} MicroBench {m}: expected {want[k][i]!r}, table has {got!r}")
                        bad = 1
    if not seen:
        print(f"{exp}: no MicroBench counter cell of a profiled shape found")
        bad = 1
    sys.exit(bad)


if __name__ == "__main__":
    main()
