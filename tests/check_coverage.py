#!/usr/bin/env python3
"""check_coverage.py OPDB GEN_SCRIPT: the calibrated intervals cover what they say, on data
with known noise (5% Gaussian, fixed seeds), within 3 points of nominal, two ways:

1. `opdb check --json`: the split-half coverage (intervals calibrated on the answers of
   odd lines, measured on those of even lines, and the other way round);
2. end to end: a database holding every other row is checked with --write-calibration,
   then `opdb query` asks, at kernel level, for the shapes of the rows left out; the share
   of their measured latencies inside interval_low_us..interval_high_us (90%) and
   interval80_low_us..interval80_high_us (80%) is the coverage.
Also: --reference-quirks answers carry no interval, and a table changed after the
calibration was written loses its intervals."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

opdb, gen = sys.argv[1], sys.argv[2]
seed = sys.argv[3] if len(sys.argv) > 3 else "20261128"
work = tempfile.mkdtemp()
fails = []


def band(name, got, nominal):
    ok = abs(got - nominal) <= 0.03
    print("%s: %.4f (nominal %.2f) %s" % (name, got, nominal, "ok" if ok else "OUT OF BAND"))
    if not ok:
        fails.append(name)


try:
    full = os.path.join(work, "full")
    subprocess.run([sys.executable, gen, full, "6000", seed, "0.05"], check=True)
    out = subprocess.run([opdb, "check", "--db", full, "--json"], check=True, capture_output=True, text=True).stdout
    cal = json.loads(out)["calibration"]
    print("split-half answers: %d" % cal["answers"])
    band("split-half 80%", cal["coverage80"], 0.80)
    band("split-half 90%", cal["coverage90"], 0.90)

    # every other data row calibrates; the others are asked for
    half = os.path.join(work, "half")
    os.makedirs(half)
    shutil.copy(os.path.join(full, "op_mapping.yaml"), half)
    asked = []
    for kt in ("MatMulV2", "Gelu"):
        with open(os.path.join(full, kt + ".csv")) as f:
            lines = f.read().splitlines()
        keep = [lines[0]] + lines[1::2]
        with open(os.path.join(half, kt + ".csv"), "w") as f:
            f.write("\n".join(keep) + "\n")
        for ln in lines[2::2]:
            cells = ln.split('"""')
            ins = [[int(x) for x in s.split(",")] for s in cells[1].split(";")]
            outs = [[int(x) for x in cells[3].split(",")]]
            lat = float(ln.rsplit(",", 1)[1])
            q = {"id": len(asked), "kernel": kt, "inputs": [{"shape": s, "dtype": "DT_BF16"} for s in ins],
                 "outputs": [{"shape": outs[0], "dtype": "DT_BF16"}]}
            asked.append((q, lat))
    subprocess.run([opdb, "check", "--db", half, "--write-calibration"], check=True, capture_output=True)
    text = "".join(json.dumps(q) + "\n" for q, _ in asked)
    res = subprocess.run([opdb, "query", "--db", half], input=text, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    n = in80 = in90 = 0
    for line, (q, lat) in zip(res, asked):
        r = json.loads(line)
        if r["source"] != "INTERPOLATED":
            continue
        if "interval_low_us" not in r:
            fails.append("interpolated answer without an interval: " + line)
            break
        n += 1
        in90 += r["interval_low_us"] <= lat <= r["interval_high_us"]
        in80 += r["interval80_low_us"] <= lat <= r["interval80_high_us"]
    print("end-to-end answers: %d" % n)
    if n < 2000:
        fails.append("too few interpolated answers: %d" % n)
    else:
        band("end-to-end 80%", in80 / n, 0.80)
        band("end-to-end 90%", in90 / n, 0.90)

    # the same questions asked twice in one batch: the second answers come from the
    # result cache and must carry the same interval
    twice = [q for (q, _), line in zip(asked, res) if '"INTERPOLATED"' in line][:50]
    text = "".join(json.dumps(q) + "\n" for q in twice + twice)
    rep = subprocess.run([opdb, "query", "--db", half], input=text, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    if len(rep) != 2 * len(twice) or rep[:len(twice)] != rep[len(twice):]:
        fails.append("a repeated (cached) answer differs from the first: " + (rep[len(twice)] if len(rep) > len(twice) else ""))

    # quirks mode: the reference's result lines, no interval
    few = [q for q, _ in asked if q["kernel"] == "MatMulV2"][:100] + [q for q, _ in asked if q["kernel"] == "Gelu"][:100]
    text = "".join(json.dumps(q) + "\n" for q in few)
    qres = subprocess.run([opdb, "query", "--db", half, "--reference-quirks"], input=text, check=True,
                          capture_output=True, text=True).stdout
    if "interval_low_us" in qres:
        fails.append("--reference-quirks answers carry an interval")
    # a table changed after the calibration: no interval for it, a warning
    with open(os.path.join(half, "Gelu.csv"), "a") as f:
        f.write('"""1,4096""",DT_BF16,ND,"""1,4096""",DT_BF16,ND,1.0\n')
    p = subprocess.run([opdb, "query", "--db", half], input=text, check=True, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r["kernel_type"] == "Gelu" and "interval_low_us" in r:
            fails.append("a changed table kept its intervals")
            break
    if "Gelu.csv changed" not in p.stderr:
        fails.append("no warning for the changed table: " + p.stderr[:200])
    if not any("interval_low_us" in l for l in p.stdout.splitlines() if '"MatMulV2"' in l):
        fails.append("the unchanged table lost its intervals")
finally:
    shutil.rmtree(work)
if fails:
    print("FAIL: " + "; ".join(fails))
    sys.exit(1)
print("ok")
