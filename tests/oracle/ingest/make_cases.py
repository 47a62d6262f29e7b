#!/usr/bin/env python3
"""Regenerates the golden cases tests/cli/parse_kineto_* and parse_sqlite_*:
inputs (real files from ../shared/data/real, or the hand-made attribution
traces below) and expected outputs computed by oracle.py (never by opdb).

  python3 tests/oracle/ingest/make_cases.py [SHARED_REAL_DIR]"""
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
CLI = os.path.join(ROOT, "tests", "cli")
REAL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data", "real")
ORACLE = os.path.join(HERE, "oracle.py")


def X(cat, name, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def op(name, ts, dur, dims=None, types=None, **kw):
    args = {}
    if dims is not None:
        args["Input Dims"] = dims
        args["Input type"] = types
    return X("cpu_op", name, ts, dur, **kw, **args)


def launch(ts, corr, tid=1):
    return X("cuda_runtime", "cudaLaunchKernel", ts, 3, tid=tid, correlation=corr)


def kernel(name, ts, dur, corr, cat="kernel"):
    return X(cat, name, ts, dur, pid=0, tid=7, correlation=corr)


HAND = {
    # innermost operator by nesting; a TensorList and scalars in Input Dims; two kernels of one launch
    "nesting": [
        op("outer::step", 0, 1000),
        op("aten::linear", 10, 200, [[4, 8], [16, 8], [16]], ["float", "float", "float"]),
        op("aten::addmm", 20, 50, [[16], [4, 8], [8, 16], [], []], ["float", "float", "float", "Scalar", "Scalar"]),
        launch(30, 1), kernel("gemm_a", 100, 7, 1), kernel("gemm_b", 108, 3, 1),
        launch(150, 2), kernel("bias_add", 160, 2.5, 2),
        op("aten::cat", 300, 40, [[[2, 3], [4, 3]], []], ["TensorList", "Scalar"]),
        launch(310, 3), kernel("cat_kernel", 400, 1.25, 3, cat="gpu_memcpy"),
        op("aten::addmm", 500, 50, [[16], [4, 8], [8, 16], [], []], ["float", "float", "float", "Scalar", "Scalar"]),
        launch(510, 4), kernel("gemm_a", 600, 9, 4),
        launch(700, 5), kernel("memset", 710, 1, 5, cat="gpu_memset"),
    ],
    # same ts: the shorter wins; same ts and dur: the last in file order wins
    "ties": [
        op("aten::long", 10, 50, [[2]], ["float"]),
        op("aten::short", 10, 20, [[2]], ["float"]),
        launch(15, 1), kernel("k1", 100, 4, 1),
        op("aten::first", 200, 30, [[3]], ["int"]),
        op("aten::second", 200, 30, [[3]], ["int"]),
        launch(210, 2), kernel("k2", 300, 6, 2),
        op("aten::edge", 400, 10, [[1]], ["float"]),
        launch(410, 3), kernel("k3", 500, 2, 3),  # a launch exactly at the operator's end belongs to it
    ],
    # launches that no operator encloses (outside any interval; another thread) are not attributed
    "launch_without_operator": [
        op("aten::mul", 0, 10, [[5]], ["float"]),
        launch(5, 1), kernel("mul_kernel", 20, 3, 1),
        launch(50, 2), kernel("orphan_kernel", 60, 4, 2),
        launch(6, 3, tid=2), kernel("other_thread_kernel", 70, 5, 3),
    ],
    # device events with no runtime event of their correlation, or no correlation at all
    "kernel_without_launch": [
        op("aten::relu", 0, 10, [[6]], ["float"]),
        launch(2, 1), kernel("relu_kernel", 20, 3, 1),
        kernel("no_launch_kernel", 30, 4, 99),
        {"ph": "X", "cat": "kernel", "name": "no_correlation", "pid": 0, "tid": 7, "ts": 40, "dur": 1, "args": {}},
    ],
    # events in no particular order; ts as floats and strings
    "out_of_order": [
        kernel("late_kernel", 900.5, 2.25, 3),
        launch(510.25, 3),
        kernel("k_inner", 100, 4, 1),
        op("aten::inner", "20.5", 10, [[7, 7]], ["half"]),
        launch(25, 1),
        op("aten::outer", 0, 1000, [[7, 7]], ["half"]),
        launch(600, 2),
        kernel("k_outer", 650, 8, 2),
        op("aten::inner", 500, 20, [[7, 7]], ["half"]),
    ],
}


def run_oracle(mode, src, outdir):
    return int(subprocess.run([sys.executable, ORACLE, mode, src, outdir], check=True, capture_output=True,
                              text=True).stdout.split()[0])


def make_case(name, files, cmd_path, mode, stderr=None, prep=None, oracle_src=None):
    d = os.path.join(CLI, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "expected"))
    for dst, data in files.items():
        with open(os.path.join(d, "in", dst), "wb") as f:
            f.write(data)
    cmd = "opdb parse --profiling-path %s --database-path db" % cmd_path
    if prep:
        cmd = prep + " && " + cmd
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write(cmd + "\n")
    src = os.path.join(d, oracle_src or cmd_path)
    if prep:  # the oracle reads the prepared input
        subprocess.run(prep, shell=True, cwd=d, check=True)
    n = run_oracle(mode, src, os.path.join(d, "expected", "db"))
    if prep:
        os.remove(src)
    with open(os.path.join(d, "expected", "stdout"), "w") as f:
        f.write("Generated %d csv file(s) under db from %s\n" % (n, cmd_path))
    with open(os.path.join(d, "expected", "rc"), "w") as f:
        f.write("0\n")
    if stderr:
        with open(os.path.join(d, "expected", "stderr_contains"), "w") as f:
            f.write("\n".join(stderr) + "\n")
    assert n > 0, name


def real(*p):
    with open(os.path.join(REAL, *p), "rb") as f:
        return f.read()


def main():
    k = "kineto"
    make_case("parse_kineto_real_rocm_mi250", {"trace.json": real(k, "hta_amd_mi250_rocm6_2_kineto.json")},
              "in/trace.json", "kineto")
    make_case("parse_kineto_real_backward_thread", {"trace.json": real(k, "hta_call_stack_backward_thread.json")},
              "in/trace.json", "kineto")
    make_case("parse_kineto_real_no_shapes", {"trace.json": real(k, "hta_cuda_event_sync_multi_stream.json")},
              "in/trace.json", "kineto", ["have no Input Dims (traced without record_shapes=True)"])
    make_case("parse_kineto_real_legacy_categories",
              {"trace.json": real(k, "kineto_tb_plugin_gpu_metrics_input_legacy.json")}, "in/trace.json", "kineto",
              ["have no Input Dims"])
    make_case("parse_kineto_real_gzip_triton",
              {"trace.pt.trace.json.gz": gzip.compress(real(k, "hta_triton_example.json"), mtime=0)},
              "in/trace.pt.trace.json.gz", "kineto")
    for name, events in HAND.items():
        data = json.dumps({"schemaVersion": 1, "traceEvents": events}, indent=1).encode()
        warn = {"launch_without_operator": ["2 of 3 GPU device event(s) not attributed to an operator: 0 without "
                                            "a launch", "2 whose launch no CPU operator encloses"],
                "kernel_without_launch": ["2 of 3 GPU device event(s) not attributed to an operator: 2 without a "
                                          "launch"]}.get(name)
        make_case("parse_kineto_rule_" + name, {"trace.json": data}, "in/trace.json", "kineto", warn)
    # a folder: usable files parsed, recognised-but-unusable ones warned and skipped (--strict: error)
    mixed = {"trace.json": real(k, "hta_call_stack_backward_thread.json"),
             "communication.json": real("ascend", "msinsight_l1_rank0_communication.json"),
             "kernel_details.csv": real("ascend", "msinsight_l0_rank0_kernel_details.csv")}
    make_case("parse_dir_mixed_formats_warns", mixed, "in", "kineto",
              ["in/communication.json: not a per-kernel profile (JSON without trace events",
               "in/kernel_details.csv is missing required columns: Input Shapes, Output Shapes (profiled without "
               "shapes (Level0)", "skipped (--strict makes this an error)"], oracle_src="in/trace.json")
    d = os.path.join(CLI, "parse_dir_mixed_formats_strict")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(CLI, "parse_dir_mixed_formats_warns", "in"), os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "expected"))
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write("opdb parse --strict --profiling-path in --database-path db\n")
    for fn, text in (("stdout", ""), ("rc", "1\n"), ("stderr_contains", "in/kernel_details.csv is missing required "
                                                                         "columns: Input Shapes, Output Shapes\n")):
        with open(os.path.join(d, "expected", fn), "w") as f:
            f.write(text)
    make_case("parse_sqlite_real_msprof", {"msprof_0.db": real("ascend", "msinsight_server_msprof_0.db")},
              "in/msprof_0.db", "sqlite")
    make_case("parse_sqlite_real_torch_npu_l1",
              {"ascend_pytorch_profiler_0.db.gz": gzip.compress(
                  real("ascend", "msinsight_l1_rank0_ascend_pytorch_profiler_0.db"), 9, mtime=0)},
              "in/ascend_pytorch_profiler_0.db", "sqlite", prep="gunzip -k in/ascend_pytorch_profiler_0.db.gz")


main()
