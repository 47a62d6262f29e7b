#!/usr/bin/env python3
"""gen_diff_db.py DIR ROWS: two database folders DIR/old and DIR/new for perf/diff.sh.

ROWS rows per side over 10 kernel types, in the canonical 62-column layout plus
Profiling Count (profiled statistics on every other row). NEW: every row
re-measured with 1% noise, 2% of rows 20% slower, 2% faster, 1% removed and
1% added, one kernel type 1.2x slower as a whole. Seeded: the same every run."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
METRICS = ["aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
           "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
           "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
           "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
           "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)"]
HEADER = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
          "Output Data Types", "Output Formats", "Average Duration(us)", "Profiling Average Duration(us)",
          "Profiling Median Duration(us)", "Profiling Std Duration(us)"]
for m in METRICS:
    HEADER += ["MicroBench " + m, "Profiling Average " + m]
HEADER.append("Profiling Count")
KTS = ["Add", "Mul", "Cast", "Sub", "RmsNorm", "Softmax", "Gelu", "Transpose2", "ConcatD", "ReduceSum"]


def line(m, k, lat, stats):
    shape = f'"""{m},{k};{m},{k}"""'
    mean, std, n = stats if stats else ("", "", "")
    cells = ["dynamic", "AI_VECTOR_CORE", shape, "DT_BF16;DT_BF16", "ND;ND", f'"""{m},{k}"""', "DT_BF16", "ND",
             "%.6f" % lat, mean, mean, std] + ["0.5"] * 50 + [n]
    return ",".join(cells) + "\r\n"


def main():
    out, rows = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(26)
    per = rows // len(KTS)
    for side in ("old", "new"):
        os.makedirs(os.path.join(out, side), exist_ok=True)
    for ki, kt in enumerate(KTS):
        fo = open(os.path.join(out, "old", kt + ".csv"), "w", newline="")
        fn = open(os.path.join(out, "new", kt + ".csv"), "w", newline="")
        fo.write(",".join(HEADER) + "\r\n")
        fn.write(",".join(HEADER) + "\r\n")
        for i in range(per):
            m, k = 1 + i, 64 * (1 + ki)
            lat = 5 + (i % 997) * 0.37
            prof = i % 2 == 0
            st = ("%.6f" % lat, "%.6f" % (lat * 0.02), "200") if prof else None
            u = rnd.random()
            if u < 0.01:  # removed
                fo.write(line(m, k, lat, st))
                continue
            f = 1.2 if ki == 3 else 1.0
            f *= 1.2 if u < 0.03 else 0.8 if u < 0.05 else 1.0 + rnd.uniform(-0.01, 0.01)
            nl = lat * f
            nst = ("%.6f" % nl, "%.6f" % (nl * 0.02), "200") if prof else None
            fo.write(line(m, k, lat, st))
            fn.write(line(m, k, nl, nst))
            if u > 0.99:  # added
                fn.write(line(m, k + 1, lat, None))
        fo.close()
        fn.close()


if __name__ == "__main__":
    main()
