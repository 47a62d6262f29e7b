"""One summary line for perf/convergence.sh.

usage: convergence.py LABEL PLAN_TXT LOAD_BEFORE LOAD_AFTER "WALL1 WALL2 ..." RUN_DIR...
Rows are the rows of every run whose MicroBench Converged cell is set (measured
by this run); a row is identified by its CSV and line.
"""
import csv
import os
import re
import statistics
import sys


def rows_of(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".csv"):
            continue
        with open(os.path.join(d, name), newline="") as f:
            for i, r in enumerate(csv.DictReader(f), start=2):
                conv = r.get("MicroBench Converged", "")
                med = r.get("MicroBench Median Duration(us)", "")
                if conv and med:
                    out[(name, i)] = (conv, float(med))
    return out


def main():
    label, plan, l0, l1, walls = sys.argv[1:6]
    runs = [rows_of(d) for d in sys.argv[6:]]
    walls = [float(w) for w in walls.split()]
    about = "?"
    with open(plan) as f:
        m = re.search(r"would run: about ([0-9.]+) s|sample\(s\) each: about ([0-9.]+) s", f.read())
        if m:
            about = m.group(1) or m.group(2)
    met = sum(1 for r in runs for v in r.values() if v[0] == "yes")
    total = sum(len(r) for r in runs)
    keys = set(runs[0]).intersection(*runs[1:]) if runs else set()
    ratios = sorted(max(r[k][1] for r in runs) / min(r[k][1] for r in runs) for k in keys
                    if min(r[k][1] for r in runs) > 0)
    agree = "%.3f / %.3f" % (statistics.median(ratios), ratios[-1]) if ratios else "n/a"
    pa = " ".join("%.2f" % (w / float(about)) for w in walls) if about != "?" and float(about) > 0 else "n/a"
    print("| %s | %s-%s | %d of %d (%.0f %%) | %s s | %s s | %s | %s |" % (
        label, l0, l1, met, total, 100.0 * met / total if total else 0, about,
        "-".join("%.1f" % w for w in (min(walls), max(walls))) if walls else "?", pa, agree))


main()
