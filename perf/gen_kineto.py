#!/usr/bin/env python3
"""gen_kineto.py OUT MB: a synthetic PyTorch profiler trace of about MB
megabytes with realistic nesting: ProfilerStep (user_annotation) > module
op > aten op (Input Dims / Input type) > cudaLaunchKernel, one kernel per
launch (some launches two), kernels written after the CPU events of their
step (as Kineto does), so the reader sees launches before kernels."""
import json
import random
import sys

out, mb = sys.argv[1], float(sys.argv[2])
random.seed(7)
ops = [("aten::addmm", [[4096], [64, 1024], [1024, 4096], [], []], ["float", "float", "float", "Scalar", "Scalar"]),
       ("aten::mul", [[64, 4096], [64, 4096]], ["c10::BFloat16", "c10::BFloat16"]),
       ("aten::cat", [[[64, 128], [64, 128]], []], ["TensorList", "Scalar"]),
       ("aten::softmax", [[64, 16, 128, 128], [], []], ["float", "Scalar", ""])]
target = int(mb * 1e6)
corr, ts, size = 1, 1_000_000, 0
with open(out, "w") as f:
    f.write('{"schemaVersion": 1, "traceEvents": [\n')
    first = True
    def put(e):
        global first, size
        s = ("" if first else ",\n") + json.dumps(e)
        first = False
        size += len(s)
        f.write(s)
    while size < target:
        step_start, kernels = ts, []
        put({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % corr, "pid": 1, "tid": 1,
             "ts": ts, "dur": 5000, "args": {}})
        for m in range(20):
            put({"ph": "X", "cat": "cpu_op", "name": "nn.Module: Block_%d" % m, "pid": 1, "tid": 1, "ts": ts + 1,
                 "dur": 200, "args": {"External id": corr}})
            for k in range(4):
                name, dims, types = ops[(m + k) % len(ops)]
                if random.random() < 0.3:
                    dims = [[d * 2 for d in x] if x and isinstance(x[0], int) else x for x in dims]
                t0 = ts + 2 + 45 * k
                put({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": t0, "dur": 40,
                     "args": {"External id": corr, "Input Dims": dims, "Input type": types,
                              "Sequence number": corr}})
                put({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                     "ts": t0 + 5, "dur": 6, "args": {"External id": corr, "correlation": corr, "cbid": 211}})
                for j in range(2 if k == 3 else 1):
                    kernels.append({"ph": "X", "cat": "kernel", "name": "void kernel_%s_%d<128>" % (name[6:], j),
                                    "pid": 0, "tid": 7, "ts": t0 + 50 + j, "dur": round(random.uniform(2, 40), 3),
                                    "args": {"External id": corr, "correlation": corr, "stream": 7, "device": 0,
                                             "grid": [128, 1, 1], "block": [256, 1, 1]}})
                corr += 1
            ts += 210
        for e in kernels:
            put(e)
        ts = step_start + 5000
    f.write("\n]}\n")
