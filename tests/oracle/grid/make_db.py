#!/usr/bin/env python3
"""make_db.py OUT_DIR [ROWS_PER_FILE]: a database with one CSV per shipped
pattern (the first kernel type assigned to it), each with a plausible
template row, for `opdb grid` differential tests and perf/grid.sh.
ROWS_PER_FILE (default 1) existing rows: the first is the template, the
others are filler rows with distinct shapes."""
import os, sys
from pathlib import Path
import yaml

HERE = Path(__file__).resolve().parent
cfg = yaml.safe_load((HERE.parents[2] / "src" / "grid" / "grid_config.yaml").read_text())
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 1
HDR = ["OP State", "Accelerator Core", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
       "Output Data Types", "Output Formats", "Count", "Average Duration(us)", "Profiling Average Duration(us)",
       "MicroBench aicore_time(us)", "Note"]
def slots(n, fill): return ";".join([fill] * n)
def q(s): return '"' + s.replace('"', '""') + '"'
for pat, kts in cfg["assignments"].items():
    if pat not in cfg["patterns"]: continue
    p = cfg["patterns"][pat]; kt = kts[0]
    if "generator_function" in p:
        nin, nout = {"grouped_matmul": (9, 1), "dispatch_ffn_combine": (7, 2), "fused_attention": (31, 1),
                     "split_qkv_rmsnorm_rope": (2, 3)}[p["generator_function"]]
    else:
        nin, nout = len(p["inputs"]), len(p["outputs"])
    hdr = list(HDR) + (["EP Size"] if kt == "DispatchFFNCombine" else [])
    lines = [",".join(hdr)]
    for r in range(nrows):
        ish = ";".join(f"{r + 1},{7 + i}" for i in range(nin))
        osh = ";".join(f"{r + 1},{9 + i}" for i in range(nout))
        idt = slots(nin, "DT_BF16") if kt != "FusedInferAttentionScore" else ";".join(["DT_BF16"] * 3 + ["DT_UNDEFINED"] * 28)
        cells = ["dynamic", "AI_VECTOR_CORE", q('"' + ish + '"'), idt, slots(nin, "ND"), q('"' + osh + '"'),
                 slots(nout, "DT_FLOAT"), slots(nout, "ND"), "3", "1.25", "2.5", "0.5", "from profile"]
        if kt == "DispatchFFNCombine": cells.append("16")
        lines.append(",".join(cells))
    (out / f"{kt}.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
