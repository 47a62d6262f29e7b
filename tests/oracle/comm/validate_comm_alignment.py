#!/usr/bin/env python3
"""Oracle for `opdb comm validate`, written from docs/COMM.md §5 (the reference lists
only the flags; the reference's behaviour is described there).

  validate_comm_alignment.py --csv-dir D [--tolerance T] [--verbose]   # the reference
  ... --opdb-default [--json]   # opdb's default mode: BOM stripped, bad rows
                                # counted, least-squares fit per (n_dev, tier)
Used only to produce tests/cli/comm_validate_*/expected; never run by ctest.
"""
import argparse
import csv
import json
import math
import os
import sys

TIERS = {0: (196e9, 5.5e-6), 1: (196e9, 0.5e-6), 2: (224e9, 0.2e-6)}
FILES = [("hcom_allReduce_.csv", "all_reduce"), ("hcom_allGather_.csv", "all_gather"),
         ("hcom_reduceScatter_.csv", "reduce_scatter"), ("hcom_alltoallv_.csv", "all_to_all")]


def predict_us(op, m, n, tier):
    if n <= 1:
        return 0.0
    bw, lat = TIERS[tier]
    bw = bw * 0.7
    if op == "all_reduce":
        ring = 2 * (n - 1) * lat + 2 * (n - 1) * m / n / bw
        tree = 2 * math.log2(n) * lat + 2 * m / bw
    elif op == "all_gather":
        ring = (n - 1) * lat + (n - 1) * m / bw
        tree = math.log2(n) * lat + (n - 1) * m / bw
    elif op == "reduce_scatter":
        ring = (n - 1) * lat + (n - 1) * m / n / bw
        tree = math.log2(n) * lat + (n - 1) * m / n / bw
    else:
        ring = (n - 1) * lat + m / bw
        tree = math.log2(n) * lat + m / bw
    return min(ring, tree) * 1e6


def load(path, default_mode, errs):
    rows, bad = [], 0
    enc = "utf-8-sig" if default_mode else "utf-8"
    with open(path, newline="", encoding=enc) as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            try:
                m = int(row["message_bytes"])
                n = int(row["num_devices"])
                tier = int(row["topology_tier"]) if "topology_tier" in row else 1
                key = "Average Duration(us)" if "Average Duration(us)" in row else "Duration(us)"
                meas = float(row[key])
            except (KeyError, ValueError, TypeError):
                continue
            if tier not in TIERS:
                if not default_mode:
                    raise SystemExit("fatal: tier %d" % tier)
                bad += 1
                continue
            if default_mode and (not meas > 0 or math.isinf(meas) or n < 2):
                bad += 1
                continue
            rows.append((m, n, tier, meas))
    return rows, bad


def fit(points):
    n = len(points)
    mm = sum(p[0] for p in points) / n
    mt = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mm) * (p[0] - mm) for p in points)
    sxy = sum((p[0] - mm) * (p[1] - mt) for p in points)
    beta = sxy / sxx if sxx > 0 else 0.0
    alpha = mt - beta * mm
    ssr = sst = 0.0
    rel = []
    for m, t in points:
        r = t - (alpha + beta * m)
        ssr += r * r
        sst += (t - mt) * (t - mt)
        rel.append(abs(r) / t)
    r2 = 1.0 - ssr / sst if sst > 0 else (1.0 if ssr == 0 else 0.0)
    rel.sort()
    med = rel[n // 2] if n % 2 else (rel[n // 2 - 1] + rel[n // 2]) / 2
    bw = 1e-3 / beta if beta > 0 else math.inf
    return dict(points=n, alpha_us=alpha, beta_us_per_byte=beta, bandwidth_gbps=bw, r2=r2,
                median_rel_residual=med, max_rel_residual=rel[-1])


def fits_of(checked):
    keys = []
    for r in checked:
        if (r[1], r[2]) not in keys:
            keys.append((r[1], r[2]))
    return [(k, fit([(r[0], r[3]) for r in checked if (r[1], r[2]) == k])) for k in keys]


def strict_json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: strict_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [strict_json(x) for x in v]
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv-dir", required=True)
    ap.add_argument("--tolerance", type=float, default=2.0)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--opdb-default", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args()
    d, T, dm = a.csv_dir, a.tolerance, a.opdb_default
    if not os.path.isdir(d):
        print("ERROR: %s is not a directory" % d, file=sys.stderr)
        return 1
    if not a.json:
        print("C9 Comm Alignment Validation")
        print("  csv_dir   : %s" % d)
        print("  tolerance : %.1fx" % T)
    results = []
    for fname, op in FILES:
        path = os.path.join(d, fname)
        if not os.path.isfile(path):
            if not a.json:
                print("  [SKIP] %s not found in %s" % (fname, d))
            continue
        rows, bad = load(path, dm, None)
        checked = []
        for m, n, tier, meas in rows:
            pred = predict_us(op, m, n, tier)
            ratio = meas / pred if pred > 0 else float("inf")
            if 1 / T <= ratio <= T:
                st = "PASS"
            elif 1 / (2 * T) <= ratio <= 2 * T:
                st = "WARN"
            else:
                st = "FAIL"
            checked.append((m, n, tier, meas, pred, ratio, st))
        results.append((op, checked, bad))
    total = sum(len(c) for _, c, _ in results)
    cnt = {s: sum(1 for _, c, _ in results for r in c if r[6] == s) for s in ("PASS", "WARN", "FAIL")}
    nbad = sum(b for _, _, b in results)
    ok = cnt["FAIL"] == 0 and nbad == 0
    # opdb's default mode: no row checked (and none bad) is "NO DATA", not OK; --strict exits 1
    verdict = "NO DATA" if dm and total == 0 and nbad == 0 else "OK" if ok else "FAILED"
    if total == 0 and a.strict:
        ok = False
    if a.json:
        out = {"csv_dir": d, "tolerance": T, "ops": []}
        for op, c, bad in results:
            out["ops"].append({
                "op": op, "pass": sum(r[6] == "PASS" for r in c), "warn": sum(r[6] == "WARN" for r in c),
                "fail": sum(r[6] == "FAIL" for r in c), "bad": bad,
                "rows": [{"status": r[6], "message_bytes": r[0], "num_devices": r[1], "topology_tier": r[2],
                          "measured_us": r[3], "predicted_us": r[4], "ratio": r[5]} for r in c],
                "fits": [dict({"num_devices": k[0], "topology_tier": k[1]}, **f) for k, f in fits_of(c)] if c else []})
        out["result"] = verdict
        if a.opdb_default:  # opdb's JSON is strict: a non-finite number is null
            out = strict_json(out)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0 if ok else 1
    rule = "=" * 70
    for op, c, bad in results:
        p = sum(r[6] == "PASS" for r in c)
        w = sum(r[6] == "WARN" for r in c)
        f = sum(r[6] == "FAIL" for r in c)
        print()
        print(rule)
        print("  %s  (%d rows, tolerance=%.1fx)" % (op, len(c), T))
        print("  PASS=%d  WARN=%d  FAIL=%d" % (p, w, f) + ("  BAD=%d" % bad if bad else ""))
        if c:
            ratios = [r[5] for r in c]
            print("  ratio: mean=%.2fx  min=%.2fx  max=%.2fx" % (sum(ratios) / len(ratios), min(ratios), max(ratios)))
        print(rule)
        if a.verbose or w or f:
            hdr = ("  " + "status".ljust(6) + "  " + "msg_bytes".rjust(12) + "  " + "n_dev".rjust(5) + "  "
                   + "tier".rjust(4) + "  " + "measured".rjust(10) + "  " + "predicted".rjust(10) + "  " + "ratio".rjust(6))
            print(hdr)
            print("  " + "-" * (len(hdr) - 2))
            for r in c:
                if r[6] == "PASS" and not a.verbose:
                    continue
                print("  %-6s  %12d  %5d  %4d  %10.2f  %10.2f  %6.2fx" % (r[6], r[0], r[1], r[2], r[3], r[4], r[5]))
        if dm and c:
            print("  fit: t = alpha + m/bw, least squares per (n_dev, tier)")
            print("  %5s  %4s  %6s  %10s  %10s  %7s  %7s  %7s" % ("n_dev", "tier", "points", "alpha_us", "bw_GB/s",
                                                              "R^2", "med_res", "max_res"))
            for k, ft in fits_of(c):
                print("  %5d  %4d  %6d  %10.2f  %10.2f  %7.4f  %7.4f  %7.4f" % (
                    k[0], k[1], ft["points"], ft["alpha_us"], ft["bandwidth_gbps"], ft["r2"],
                    ft["median_rel_residual"], ft["max_rel_residual"]))
    print()
    print(rule)
    print("  TOTAL: %d rows  PASS=%d  WARN=%d  FAIL=%d" % (total, cnt["PASS"], cnt["WARN"], cnt["FAIL"])
          + ("  BAD=%d" % nbad if nbad else ""))
    print("  Result: %s" % verdict)
    print(rule)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
