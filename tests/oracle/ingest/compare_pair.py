#!/usr/bin/env python3
"""compare_pair.py CSV_DB SQLITE_DB: the databases parsed from the CSV and the
SQLite export of one run must hold the same files, rows, keys and text cells,
and numbers within tolerance.  What may differ, and why:
  * OP State: the SQLite schema 1.0.0 does not export it (empty there);
  * cube_utilization(%): no TASK_PMU_INFO counter (empty there);
  * numbers: the real pair holds the same kernels measured in two captures,
    not one capture rounded: durations differ by a few per cent (checked
    within 25% + 1 us; the largest relative difference is printed), the
    hardware counters far more (ratios by up to 0.15): only checked present."""
import csv
import os
import sys

a, b = sys.argv[1:3]
fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
assert fa == fb, ("files differ", set(fa) ^ set(fb))
worst, cells = 0.0, 0
for name in fa:
    ra = list(csv.reader(open(os.path.join(a, name), newline="")))
    rb = list(csv.reader(open(os.path.join(b, name), newline="")))
    assert ra[0] == rb[0], (name, "header")
    assert len(ra) == len(rb), (name, "rows", len(ra), len(rb))
    for x, y in zip(ra[1:], rb[1:]):
        for col, u, v in zip(ra[0], x, y):
            if col == "OP State":
                assert v == "", (name, col, v)
                continue
            if col.startswith("Profiling "):
                if col == "Profiling Count":  # the same kernels: the same number of launches
                    assert u == v, (name, col, u, v)
                    continue
                if col == "Profiling Average cube_utilization(%)":
                    assert v == "", (name, col, v)
                    continue
                fu, fv = float(u), float(v)
                if "Duration" not in col or "Std" in col or "Min" in col or "Max" in col:
                    # counters, spread, extremes (one outlier launch): another capture
                    continue
                tol = 0.25 * max(abs(fu), abs(fv)) + 1.0
                if col.endswith("_ratio") or col.endswith("_rate"):
                    tol = 0.1
                assert abs(fu - fv) <= tol, (name, col, u, v)
                if max(abs(fu), abs(fv)) > 1 and "Std" not in col:
                    worst = max(worst, abs(fu - fv) / max(abs(fu), abs(fv)))
                cells += 1
            else:
                assert u == v, (name, col, u, v)
print("same files, rows, keys and text cells; %d numeric cells within tolerance; largest relative difference %.4f"
      % (cells, worst))
