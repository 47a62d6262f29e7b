#!/usr/bin/env python3
"""gen_query_bench.py OUT_DIR [N_QUERIES] [SEED]: a generated database of realistic size and a
query file for perf/query.sh.

OUT_DIR/db: ~250 kernel tables in the layout `opdb parse`/`grid` write (8 columns of shapes,
dtypes and formats, then the duration columns), >= 200k rows in all, plus hccl/ communication
tables and an op_mapping.yaml in the real layout (operator_mappings keyed by op name).
OUT_DIR/queries.jsonl: N_QUERIES op-level lines mixing, in the proportions of a decode/prefill
model trace: exact compute hits, 1-D interpolated matmuls, elementwise ops, communication and
misses. OUT_DIR/q_<class>.jsonl hold each class alone (for per-path figures)."""
import json
import os
import random
import sys

out = sys.argv[1]
n_queries = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20261128)
db = os.path.join(out, "db")
os.makedirs(os.path.join(db, "hccl"), exist_ok=True)

HEADER = ("OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
          "Output Data Types,Output Formats,Average Duration(us),Profiling Count,"
          "Profiling Average Duration(us),Profiling Median Duration(us),Profiling Std Duration(us)\n")


def row(inputs, dtypes, formats, output, odtype, dur):
    q = lambda s: '"%s"' % s if ("," in s or ";" in s) else s
    return "dynamic,AI_CORE,%s,%s,%s,%s,%s,ND,%.6f,%d,%.6f,%.6f,%.6f\n" % (
        q(inputs), dtypes, formats, q(output), odtype, dur, rng.randint(3, 40), dur * 1.01, dur, dur * 0.02)


M_MEASURED = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
              3072, 4096, 6144, 8192, 12288, 16384]
KN = [(k, n) for k in (1024, 1536, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 12288, 14336, 16384)
      for n in (256, 512, 1024, 1280, 2048, 3072, 4096, 6144, 7168, 8192, 10240, 14336, 16384,
                18432, 24576, 28672, 32768, 36864, 49152, 65536)]
rows_total = 0
with open(os.path.join(db, "MatMulV2.csv"), "w") as f:
    f.write(HEADER)
    for k, n in KN:
        for m in M_MEASURED:  # weights stored (N, K), as the real rows are
            f.write(row("%d,%d;%d,%d" % (m, k, n, k), "DT_BF16;DT_BF16", "ND;ND", "%d,%d" % (m, n), "DT_BF16",
                        3.0 + m * k * n / 9.0e7))
            rows_total += 1

N_OPS = 246  # + MatMulV2 + 3 hccl tables = 250
H_SET = (128, 512, 1024, 2048, 4096, 5120, 7168, 8192)
TOK = list(range(1, 4097, 5))  # 820 token counts per hidden size class
ew_ops, compute_ops = [], []
for i in range(N_OPS):
    kt = "BenchOp%03d" % i
    h = H_SET[i % len(H_SET)]
    elementwise = i % 3 == 0
    (ew_ops if elementwise else compute_ops).append((kt, h))
    with open(os.path.join(db, kt + ".csv"), "w") as f:
        f.write(HEADER)
        for t in TOK:
            f.write(row("%d,%d;%d,%d" % (t, h, t, h), "DT_BF16;DT_BF16", "ND;ND", "%d,%d" % (t, h), "DT_BF16",
                        1.5 + t * h / 4.0e6))
            rows_total += 1

COMM = {"hcom_allReduce_": "all_reduce", "hcom_allGather_": "all_gather", "hcom_alltoall_": "all_to_all"}
for kt in COMM:
    with open(os.path.join(db, "hccl", kt + ".csv"), "w") as f:
        f.write("message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps\n")
        for nd in (2, 4, 8, 16):
            for tier in (1, 2):
                for p in range(10, 31):
                    b = 1 << p
                    us = 8.0 + b / (20e3 if tier == 1 else 5e3) * (nd - 1) / nd
                    f.write("%d,%d,DT_BF16,%d,%.3f,%.3f\n" % (b, nd, tier, us, b / us / 1e3))
                    rows_total += 1

with open(os.path.join(db, "op_mapping.yaml"), "w") as f:
    f.write('version: "bench"\ncommunication_data_ref: "hccl/"\n'
            "interpolation_policy:\n  kernel_overrides:\n    MatMulV2:\n      max_interpolation_dim: 1\n"
            "operator_mappings:\n"
            '  "aten.mm.default":\n    kernel_type: MatMulV2\n'
            '  "aten.view.default":\n    zero_cost: true\n')
    for kt, _ in compute_ops:
        f.write('  "bench.%s.default":\n    kernel_type: %s\n' % (kt.lower(), kt))
    for kt, _ in ew_ops:
        f.write('  "bench.%s.default":\n    kernel_type: %s\n    query_mode: elementwise\n' % (kt.lower(), kt))
    for kt, name in COMM.items():
        f.write('  "tensor_cast.%s.default":\n    kernel_type: %s\n    category: communication\n' % (name, kt))


def t(shape):
    return {"shape": list(shape), "dtype": "bfloat16"}


def q_exact():
    if rng.random() < 0.4:
        k, n = rng.choice(KN)
        m = rng.choice(M_MEASURED)
        return {"op": "aten.mm.default", "args": [t((m, k)), t((k, n))], "out": t((m, n))}
    kt, h = rng.choice(compute_ops)
    tok = rng.choice(TOK)
    return {"op": "bench.%s.default" % kt.lower(), "args": [t((tok, h)), t((tok, h))], "out": t((tok, h))}


def q_interp():
    k, n = rng.choice(KN)
    i = rng.randrange(len(M_MEASURED) - 1)
    lo, hi = M_MEASURED[i], M_MEASURED[i + 1]
    if hi - lo < 2:
        lo, hi = 1024, 1536
    m = rng.randrange(lo + 1, hi)
    return {"op": "aten.mm.default", "args": [t((m, k)), t((k, n))], "out": t((m, n))}


def q_elementwise():
    kt, h = rng.choice(ew_ops)
    tok = rng.choice(TOK)
    return {"op": "bench.%s.default" % kt.lower(), "args": [t((tok, h)), t((tok, h))], "out": t((tok, h))}


def q_comm():
    kt, name = rng.choice(list(COMM.items()))
    numel = (1 << rng.randrange(9, 29)) if rng.random() < 0.5 else rng.randrange(1 << 10, 1 << 28)
    ranks = rng.choice(([0, 1], [0, 1, 2, 3], list(range(8))))
    return {"op": "tensor_cast.%s.default" % name, "args": [t((numel,)), 0, ranks]}


def q_miss():
    r = rng.random()
    if r < 0.4:
        return {"op": "aten.unmapped_%d.default" % rng.randrange(50), "args": [t((8, 8))]}
    if r < 0.7:
        kt, h = rng.choice(compute_ops)
        return {"op": "bench.%s.default" % kt.lower(), "args": [t((3, h + 1)), t((3, h + 1))], "out": t((3, h + 1))}
    return {"op": "aten.mm.default", "args": [t((8, 777)), t((777, 999))], "out": t((8, 999))}


def q_zero():
    return {"op": "aten.view.default", "args": [t((16, 4096)), [16, 32, 128]]}


MIX = [("exact", q_exact, 0.45), ("interp", q_interp, 0.20), ("elementwise", q_elementwise, 0.12),
       ("comm", q_comm, 0.10), ("zero_cost", q_zero, 0.05), ("miss", q_miss, 0.08)]
files = {name: open(os.path.join(out, "q_%s.jsonl" % name), "w") for name, _, _ in MIX}
per_class = max(1000, n_queries // 10)
counts = {name: 0 for name, _, _ in MIX}
with open(os.path.join(out, "queries.jsonl"), "w") as f:
    for i in range(n_queries):
        x, acc = rng.random(), 0.0
        for name, gen, p in MIX:
            acc += p
            if x < acc or name == MIX[-1][0]:
                break
        q = gen()
        q["id"] = i
        line = json.dumps(q, separators=(",", ":")) + "\n"
        f.write(line)
        counts[name] += 1
        if counts[name] <= per_class:
            files[name].write(line)
for fh in files.values():
    fh.close()
n_tables = len([x for x in os.listdir(db) if x.endswith(".csv")]) + len(os.listdir(os.path.join(db, "hccl")))
print("tables=%d rows=%d queries=%d %s" % (n_tables, rows_total, n_queries,
                                           " ".join("%s=%d" % kv for kv in counts.items())))
