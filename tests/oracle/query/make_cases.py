#!/usr/bin/env python3
"""Writes the tests/cli/query_<rule>_<mode> golden cases: hand-made databases and
queries here, expected outputs from query_oracle.py through tests/oracle/new_case.py
(never from opdb).  Run from anywhere:
  python3 tests/oracle/query/make_cases.py [CASE...]
Each rule gets two folders with the same in/: query_<rule>_default (opdb's default
mode) and query_<rule>_quirks (--reference-quirks)."""
import json
import os
import shutil
import subprocess
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = HERE.parents[1] / "cli"
NEW_CASE = HERE.parent / "new_case.py"

MMH = "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Average Duration(us)"


def csv(header, *rows, crlf=False, bom=False):
    nl = "\r\n" if crlf else "\n"
    s = nl.join((header,) + rows) + nl
    return ("\ufeff" if bom else "") + s


def r(ins, idt, ifm, outs, odt, ofm, lat, extra=""):
    return f'"""{ins}""",{idt},{ifm},"""{outs}""",{odt},{ofm},{lat}{extra}'


def T(shape, dtype="bfloat16", values=None):
    t = {"shape": list(shape), "dtype": dtype}
    if values is not None:
        t["values"] = values
    return t


def Q(qid, op, args=(), out=None, **kw):
    o = {"id": qid, "op": op, "args": list(args)}
    if out is not None:
        o["out"] = out
    if kw:
        o["kwargs"] = kw
    return o


CASES = {}


def case(name, files, queries, flags="", extra_cmd=None):
    """extra_cmd: a command run after the batch (`&& ...`), or, starting with '!', the whole cmd."""
    CASES[name] = (files, queries, flags, extra_cmd)


def jl(qs):
    return "".join((q if isinstance(q, str) else json.dumps(q)) + "\n" for q in qs)


BF = "DT_BF16;DT_BF16"
ND2 = "ND;ND"

# ---------------------------------------------------------------- §4.1 dispatch
case("dispatch", {
    "op_mapping.yaml": """operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  t.zero.default: {kernel_type: NoKernel, zero_cost: true}
  t.zero_null.default: {kernel_type: null, zero_cost: true}
  t.zero_nokt.default: {zero_cost: yes}
  t.accepted.default: {kernel_type: FusedRouter, accepted_miss: "fused into the MoE kernel"}
  t.zero_accepted.default: {kernel_type: Nothing, zero_cost: true, accepted_miss: true}
  t.ew_zero.default: {kernel_type: Add, query_mode: elementwise, zero_cost: true}
  t.future.default: {kernel_type: MatMulV2, query_mode: streaming_v2}
  t.nokt.default: {category: compute}
  t.notmap.default: just a string
  t.altstr.default: {kernel_type: MatMulV2, alternate_kernel_types: MatMulV3}
  t.null.default: null
""",
    "MatMulV2.csv": csv(MMH, r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.5")),
    "Add.csv": csv(MMH, r("8,64;8,64", BF, ND2, "8,64", "DT_BF16", "ND", "1.25")),
}, [
    Q("mm", "torch.ops.aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("mm-miss", "aten.mm.default", [T((16, 128)), T((128, 512))]),
    Q("unmapped", "aten.nothing.default", [T((1,))]),
    Q("prefix-twice", "torch.ops.torch.ops.aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("zero", "t.zero.default"), Q("zero-null-kt", "t.zero_null.default"), Q("zero-no-kt", "t.zero_nokt.default"),
    Q("accepted", "t.accepted.default"), Q("zero-before-accepted", "t.zero_accepted.default"),
    Q("mode-before-zero-hit", "t.ew_zero.default", [T((8, 64)), T((8, 64))], out=T((8, 64))),
    Q("mode-before-zero-miss", "t.ew_zero.default", [T((8, 64)), T((8, 64))], out=T((8, 96))),
    Q("unknown-mode", "t.future.default", [T((16, 128)), T((128, 256))]),
    Q("no-kernel-type", "t.nokt.default", [T((16, 128))]),
    Q("entry-not-mapping", "t.notmap.default"), Q("alternates-string", "t.altstr.default", [T((16, 128))]),
    Q("null-entry", "t.null.default"),
    {"op": "t.zero.default"}, {"id": {"nested": [1, 2]}, "op": "t.zero.default", "cat": "ignored", "note": "x"},
    "this is not json", "[1, 2]", {"id": "both", "op": "t.zero.default", "kernel": "MatMulV2"},
    {"id": "neither"}, {"id": "op-not-string", "op": 5},
    {"id": "bad-dtype", "op": "aten.mm.default", "args": [T((16, 128), "complex64")]},
    {"id": "bad-values", "op": "aten.mm.default", "args": [T((2, 2), "int32", [1, 2, 3])]},
    {"id": "neg-dim", "op": "aten.mm.default", "args": [T((-1, 2))]},
    "", "   ",
], "--no-interpolation")

# ---------------------------------------------------------------- §3 loading
ENVH = ("Accelerator Core,Input Shapes,Input Data Types,Input Formats,Average Duration(us),"
        "Profiling Average Duration(us),Profiling Average aicore_time(us),Profiling Average aiv_time(us)")
case("loading", {
    "op_mapping.yaml": """latency_policy:
  kernel_overrides:
    QuantBatchMatmulV3:
      profiling_core_envelope_fallback: {max_duration_to_core_ratio: 1.3}
    TensorMove: {prefer_profiling_rows: true}
operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  t.qmm.default: {kernel_type: QuantBatchMatmulV3, tc_input_count: 2}
  t.clone.default: {kernel_type: TensorMove}
  t.copy.default: {kernel_type: Copy}
  t.broken.default: {kernel_type: Broken}
  t.latin.default: {kernel_type: Latin}
  t.empty.default: {kernel_type: Empty}
  t.absent.default: {kernel_type: Absent, alternate_kernel_types: [AlsoAbsent]}
""",
    # BOM, CRLF, a duplicate header (the first one counts), blank lines, a quoted newline,
    # a short record (NA cells), NA and text latencies falling back to later columns
    "MatMulV2.csv": csv("Input Shapes,Input Data Types,Input Formats,Note,Average Duration(us),"
                        "Profiling Average Duration(us),Duration(us),Average Duration(us)",
                        '"""16,128;128,256""",DT_BF16;DT_BF16,ND;ND,"two\r\nlines",12.5,13,14,99',
                        "",
                        '"""32,128;128,256""",DT_BF16;DT_BF16,ND;ND,plain,NA,7.75,8,99',
                        '"""48,128;128,256""",DT_BF16;DT_BF16,ND;ND,plain,-1,0,3.5,99',
                        '"""64,128;128,256""",DT_BF16;DT_BF16,ND;ND,short,2.5',
                        '"""80,128;128,256""",DT_BF16;DT_BF16,ND;ND,none,0,nan,,99',
                        "", crlf=True, bom=True),
    "QuantBatchMatmulV3.csv": csv(ENVH,
                                  'MIX_AIC,"""16,256;256,512""",INT8;INT8,ND;ND,,20,10,8',
                                  'MIX_AIC,"""32,256;256,512""",INT8;INT8,ND;ND,,12,10,8',
                                  'AI_CORE,"""48,256;256,512""",INT8;INT8,ND;ND,,20,10,8',
                                  'MIX_AIC,"""64,256;256,512""",INT8;INT8,ND;ND,30,20,10,8'),
    "TensorMove.csv": csv("Input Shapes,Input Data Types,Average Duration(us),Profiling Average Duration(us)",
                          '"""8,128""",DT_BF16,2.0,', '"""8,128""",DT_BF16,,3.0'),
    "Copy.csv": csv("Input Shapes,Input Data Types,Average Duration(us),Profiling Average Duration(us)",
                    '"""8,128""",DT_BF16,2.0,', '"""8,128""",DT_BF16,,3.0'),
    "Broken.csv": csv("Input Shapes,Input Data Types,Average Duration(us)", '"""8,128""",DT_BF16,2.0,extra'),
    "Latin.csv": b"Input Shapes,Input Data Types,Average Duration(us)\n\"\"\"8,128\"\"\",DT_BF16\xe9,2.0\n",
    "Empty.csv": "",
}, [
    Q("quoted-newline-row", "aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("na-average-uses-profiling", "aten.mm.default", [T((32, 128)), T((128, 256))]),
    Q("nonpositive-falls-to-duration", "aten.mm.default", [T((48, 128)), T((128, 256))]),
    Q("short-record", "aten.mm.default", [T((64, 128)), T((128, 256))]),
    Q("no-latency-invisible", "aten.mm.default", [T((80, 128)), T((128, 256))]),
    Q("envelope-applies", "t.qmm.default", [T((16, 256), "int8"), T((256, 512), "int8")]),
    Q("envelope-ratio-below", "t.qmm.default", [T((32, 256), "int8"), T((256, 512), "int8")]),
    Q("envelope-not-mix-aic", "t.qmm.default", [T((48, 256), "int8"), T((256, 512), "int8")]),
    Q("envelope-average-column", "t.qmm.default", [T((64, 256), "int8"), T((256, 512), "int8")]),
    Q("prefer-profiling-rows", "t.clone.default", [T((8, 128))]),
    Q("column-priority", "t.copy.default", [T((8, 128))]),
    Q("record-longer-than-header", "t.broken.default", [T((8, 128))]),
    Q("not-utf8", "t.latin.default", [T((8, 128))]),
    Q("empty-file", "t.empty.default", [T((8, 128))]),
    Q("csv-not-found", "t.absent.default", [T((8, 128))]),
], "--no-interpolation")

# ---------------------------------------------------------------- §5.3 compute rules
case("compute_rules", {
    "op_mapping.yaml": """operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  aten.bmm.default: {kernel_type: BatchMatMulV2}
  aten.index.default: {kernel_type: Index}
  t.rms.default: {kernel_type: RmsNorm}
  t.dq.default: {kernel_type: DynamicQuant}
  t.rope.default: {kernel_type: _triton_rope}
  t.swiglu.default: {kernel_type: SwiGlu}
  t.rac.default: {kernel_type: ReshapeAndCacheNdKernel}
  t.three.default: {kernel_type: MatMulV2, tc_input_count: 2}
  t.drop_last.default: {kernel_type: MatMulV2, tc_input_count: -1}
""",
    "MatMulV2.csv": csv(MMH,
                        r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.0"),
                        r("32,128;256,128", BF, ND2, "32,256", "DT_BF16", "ND", "11.0"),
                        r("48,64;64,96", BF, ND2, "48,96", "DT_BF16", "ND", "12.0"),
                        r("8,128;128,512", BF, ND2, "8,512", "DT_BF16", "ND", "13.0"),
                        r("1,48,128;128,640", BF, ND2, "48,640", "DT_BF16", "ND", "14.0"),
                        r("24,256;16,8,16,16", BF, "ND;FRACTAL_NZ", "24,128", "DT_BF16", "ND", "20.0"),
                        r("40,128;128,64", "FLOAT;FLOAT", ND2, "40,64", "FLOAT", "ND", "21.0"),
                        r("56,128;128,64;64", "DT_BF16;DT_BF16;INT64", "ND;ND;ND", "56,64", "DT_BF16", "ND", "22.0")),
    "BatchMatMulV2.csv": csv(MMH, r("4,16,64;4,32,64", BF, ND2, "4,16,32", "DT_BF16", "ND", "15.0")),
    "Index.csv": csv(MMH, r("7,1", "INT64", "ND", "7", "INT64", "ND", "3.0")),
    "RmsNorm.csv": csv(MMH, r("64,4096;4096", BF, ND2, "64,4096", "DT_BF16", "ND", "5.0"),
                       r("48,2048;2048", BF, ND2, "48,2048", "DT_BF16", "ND", "6.0"),
                       r("16,1024;1024", "FLOAT;FLOAT", ND2, "16,1024", "FLOAT", "ND", "6.5")),
    "DynamicQuant.csv": csv(MMH, r("8,512", "DT_BF16", "ND", "8,512;8", "INT8;FLOAT", ND2, "7.0"),
                            r("4,1024", "DT_BF16", "ND", "4,1024;4", "INT8;FLOAT", ND2, "8.0")),
    "_triton_rope.csv": csv(MMH, r("1,16,8,128;1,16,32,128", BF, ND2, "1,16,8,128", "DT_BF16", "ND", "9.0")),
    "SwiGlu.csv": csv(MMH, r("16,1024", "DT_BF16", "ND", "16,512", "DT_BF16", "ND", "4.0")),
    "ReshapeAndCacheNdKernel.csv": csv(MMH, r("8,1,128;8,1,128;100,128,1,128;100,128,1,128;8",
                                              "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT32", "ND;ND;ND;ND;ND",
                                              "100,128,1,128", "DT_BF16", "ND", "2.5")),
}, [
    Q("identity", "aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("transpose", "aten.mm.default", [T((32, 128)), T((128, 256))]),
    Q("padding", "aten.mm.default", [T((64, 64)), T((64, 96))]),
    Q("batch_strip", "aten.mm.default", [T((1, 8, 128)), T((128, 512))]),
    Q("batch_strip+padding", "aten.mm.default", [T((1, 64, 128)), T((128, 640))]),
    Q("batched_transpose", "aten.bmm.default", [T((4, 16, 64)), T((4, 64, 32))]),
    Q("singleton_axis_transpose", "aten.index.default", [T((1, 7), "int64")]),
    Q("flatten_3d", "t.rms.default", [T((4, 16, 4096)), T((4096,))]),
    Q("flatten_3d+padding", "t.rms.default", [T((4, 16, 2048)), T((2048,))]),
    Q("merge_last_dims", "t.dq.default", [T((8, 4, 128))]),
    Q("merge_last_dims+padding", "t.dq.default", [T((16, 8, 128))]),
    Q("rope-bhsd-to-bshd", "t.rope.default", [T((1, 32, 16, 128)), T((1, 8, 16, 128))]),
    Q("swiglu-concat", "t.swiglu.default", [T((1, 16, 512)), T((1, 16, 512))]),
    Q("swiglu-dtype-differs", "t.swiglu.default", [T((16, 512)), T((16, 512), "float32")]),
    Q("reshape-and-cache", "t.rac.default", [T((8, 128)), T((8, 128)), T((2, 100, 128, 1, 128)), T((8,), "int32")]),
    Q("fractal-nz-weight", "aten.mm.default", [T((24, 256)), T((256, 128))]),
    Q("relaxed-float-group", "aten.mm.default", [T((40, 128)), T((128, 64))]),
    Q("float16-as-bf16", "aten.mm.default", [T((16, 128), "float16"), T((128, 256), "float16")]),
    Q("not-relaxed", "t.rms.default", [T((16, 1024)), T((1024,))]),
    Q("unmapped-dtype", "aten.mm.default", [T((16, 128), "float64"), T((128, 256), "float64")]),
    Q("tc-input-count", "t.three.default", [T((56, 128)), T((128, 64)), T((64,), "int64")]),
    Q("tc-input-count-negative", "t.drop_last.default", [T((56, 128)), T((128, 64)), T((64,), "int64")]),
    Q("list-argument", "aten.mm.default", [[T((16, 128)), T((128, 256)), 3, [T((1, 1))]], T(()), None, 1.5]),
    Q("count-mismatch", "aten.mm.default", [T((16, 128))]),
], "--no-interpolation")

# ---------------------------------------------------------------- §5.4 distance quirk
case("compute_distance", {
    "op_mapping.yaml": """operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
""",
    "MatMulV2.csv": csv(MMH,
                        r("1,128;256,128", BF, ND2, "1,256", "DT_BF16", "ND", "30.0"),
                        r("16,128;256,128", BF, ND2, "16,256", "DT_BF16", "ND", "40.0"),
                        r("16,64;64,240", BF, ND2, "16,240", "DT_BF16", "ND", "50.0"),
                        r("16,64;64,256", BF, ND2, "16,256", "DT_BF16", "ND", "55.0"),
                        r("1,32;48,32", BF, ND2, "1,48", "DT_BF16", "ND", "60.0"),
                        r("16,32;32,64", BF, ND2, "16,64", "DT_BF16", "ND", "65.0")),
}, [
    Q("padding-then-transpose", "aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("batch-strip-then-padding", "aten.mm.default", [T((1, 16, 64)), T((64, 256))]),
    Q("padding-then-padding", "aten.mm.default", [T((16, 32)), T((32, 64))]),
    Q("only-padded-row", "aten.mm.default", [T((32, 128)), T((128, 256))]),
], "--no-interpolation")

# ---------------------------------------------------------------- §4.2 selection
case("selection", {
    "op_mapping.yaml": """query_selection_policy:
  kernel_overrides:
    RmsNorm: {require_semantic_unique: true}
operator_mappings:
  t.rms.default: {kernel_type: RmsNorm}
  t.add.default: {kernel_type: AddA, alternate_kernel_types: [AddB, AddA]}
  t.prio.default: {kernel_type: Prio}
  t.none.default: {kernel_type: Gone1, alternate_kernel_types: [Gone2]}
  t.first_absent.default: {kernel_type: Gone1, alternate_kernel_types: [AddB]}
""",
    "RmsNorm.csv": csv(MMH, r("8,128;128", BF, ND2, "8,128", "DT_BF16", "ND", "1.0"),
                       r("8,128;128", BF, ND2, "8,128", "DT_BF16", "ND", "1.0000000000001"),
                       r("16,128;128", BF, ND2, "16,128", "DT_BF16", "ND", "2.0"),
                       r("16,128;128", BF, ND2, "16,128", "DT_BF16", "ND", "2.5"),
                       r("32,128;128", BF, ND2, "32,128", "DT_BF16", "ND", "3.0"),
                       r("24,128;128", BF, ND2, "24,128", "DT_BF16", "ND", "4.0")),
    "AddA.csv": csv(MMH, r("8,64;8,64", BF, ND2, "8,64", "DT_BF16", "ND", "1.5")),
    "AddB.csv": csv(MMH, r("8,64;8,64", BF, ND2, "8,64", "DT_BF16", "ND", "1.75"),
                    r("16,64;16,64", BF, ND2, "16,64", "DT_BF16", "ND", "1.8")),
    "Prio.csv": csv("Input Shapes,Input Data Types,Duration(us),Profiling Average Duration(us),Average Duration(us)",
                    '"""8,64""",DT_BF16,5.0,,', '"""8,64""",DT_BF16,,6.0,', '"""8,64""",DT_BF16,,,7.0',
                    '"""8,64""",DT_BF16,,,7.5'),
}, [
    Q("equal-after-12-decimals", "t.rms.default", [T((8, 128)), T((128,))]),
    Q("ambiguous", "t.rms.default", [T((16, 128)), T((128,))]),
    Q("unique-exact-beats-padded", "t.rms.default", [T((32, 128)), T((128,))]),
    Q("padded-ties-ambiguous", "t.rms.default", [T((64, 128)), T((128,))]),
    Q("kernel-order", "t.add.default", [T((8, 64)), T((8, 64))]),
    Q("alternate-kernel", "t.add.default", [T((16, 64)), T((16, 64))]),
    Q("latency-priority", "t.prio.default", [T((8, 64))]),
    Q("csv-not-found", "t.none.default", [T((8, 64))]),
    Q("first-kernel-absent", "t.first_absent.default", [T((16, 64)), T((16, 64))]),
], "--no-interpolation")

# ---------------------------------------------------------------- §5.1-§5.2 kernel list and TP
TPMAP = """operator_mappings:
  t.in.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: input, logical_global_dims: [4096], otherwise: physical_local}
  t.out.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: output, logical_global_dims: [6144, 3072]}
  t.booldims.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: input, logical_global_dims: [true]}
  t.badaxis.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: both, logical_global_dims: [4096]}
  t.rank.default:
    kernel_type: RmsNorm
    kernel_types_by_input_rank:
      3: [AddRmsNorm]
  t.rankstr.default:
    kernel_type: RmsNorm
    kernel_types_by_input_rank: {"3": [AddRmsNorm]}
  aten.bmm.default: {kernel_type: BatchMatMulV2, degenerate_bmm_kernel_type: Mul}
"""
TPFILES = {
    "op_mapping.yaml": TPMAP,
    "MatMulV2.csv": csv(MMH, r("16,2048;2048,512", BF, ND2, "16,512", "DT_BF16", "ND", "10.0"),
                        r("16,4096;4096,512", BF, ND2, "16,512", "DT_BF16", "ND", "18.0"),
                        r("16,1024;1024,3072", BF, ND2, "16,3072", "DT_BF16", "ND", "11.0"),
                        r("16,1024;1024,6144", BF, ND2, "16,6144", "DT_BF16", "ND", "19.0"),
                        r("16,1;1,512", BF, ND2, "16,512", "DT_BF16", "ND", "9.0")),
    "RmsNorm.csv": csv(MMH, r("2,8,128;128", BF, ND2, "2,8,128", "DT_BF16", "ND", "1.0")),
    "AddRmsNorm.csv": csv(MMH, r("2,8,128;128", BF, ND2, "2,8,128", "DT_BF16", "ND", "1.5")),
    "BatchMatMulV2.csv": csv(MMH, r("2,32,1;2,1,64", BF, ND2, "2,32,64", "DT_BF16", "ND", "3.0")),
    "Mul.csv": csv(MMH, r("1,32,1;1,1,64", BF, ND2, "1,32,64", "DT_BF16", "ND", "0.5")),
}
TPQ = [
    Q("input-shard", "t.in.default", [T((16, 4096)), T((4096, 512))]),
    Q("input-not-logical", "t.in.default", [T((16, 2048)), T((2048, 512))]),
    Q("input-indivisible", "t.in.default", [T((16, 4096)), T((4095, 512))]),
    Q("output-shard", "t.out.default", [T((16, 1024)), T((1024, 6144))]),
    Q("bool-dims-invalid", "t.booldims.default", [T((16, 1)), T((1, 512))]),
    Q("bad-axis-invalid", "t.badaxis.default", [T((16, 4096)), T((4096, 512))]),
    Q("one-input-invalid", "t.in.default", [T((16, 4096))]),
    Q("rank-list-int-key", "t.rank.default", [T((2, 8, 128)), T((128,))]),
    Q("rank-list-string-key", "t.rankstr.default", [T((2, 8, 128)), T((128,))]),
    Q("rank-list-other-rank", "t.rank.default", [T((16, 128)), T((128,))]),
    Q("degenerate-bmm", "aten.bmm.default", [T((1, 32, 1)), T((1, 1, 64))]),
    Q("not-degenerate", "aten.bmm.default", [T((2, 32, 1)), T((2, 1, 64))]),
]
case("compute_tp", TPFILES, TPQ, "--tp-size 2 --no-interpolation")
case("compute_tp1", TPFILES, TPQ[:5], "--tp-size 1 --no-interpolation")
case("compute_notp", TPFILES, TPQ[:5], "--no-interpolation")

# ---------------------------------------------------------------- §5.7 mtp_projection
case("mtp_projection", {
    "op_mapping.yaml": """operator_mappings:
  t.mtp.default:
    kernel_type: QuantBatchMatmulV3
    query_mode: mtp_projection
    mtp_projection_kernel_type: MatMulV2
    tc_input_count: 2
  t.mtp_nokernel.default:
    kernel_type: QuantBatchMatmulV3
    query_mode: mtp_projection
""",
    "MatMulV2.csv": csv(MMH, r("8,4096;2048,4096", "FLOAT;FLOAT", ND2, "8,2048", "FLOAT", "ND", "6.0")),
    "QuantBatchMatmulV3.csv": csv(MMH, r("8,4096;4096,2048", "INT8;INT8", ND2, "8,2048", "DT_BF16", "ND", "4.0")),
}, [
    Q("projected", "t.mtp.default", [T((8, 4096), "int8"), T((4096, 2048), "int8")], out=T((8, 2048))),
    Q("projected-out-list", "t.mtp.default", [T((8, 4096), "int8"), T((2048, 4096), "int8")], out=[[T((8, 2048), "float32")]]),
    Q("fallback-not-half", "t.mtp.default", [T((8, 4096), "int8"), T((4096, 2048), "int8")], out=T((8, 1024))),
    Q("fallback-no-out", "t.mtp.default", [T((8, 4096), "int8"), T((4096, 2048), "int8")]),
    Q("fallback-no-kernel", "t.mtp_nokernel.default", [T((8, 4096), "int8"), T((4096, 2048), "int8")], out=T((8, 2048))),
], "--no-interpolation")

# ---------------------------------------------------------------- §6 elementwise
case("elementwise", {
    "op_mapping.yaml": """operator_mappings:
  aten.add.default: {kernel_type: Add, alternate_kernel_types: [AddAiCore], query_mode: elementwise}
  t.nokt.default: {query_mode: elementwise}
  t.mul.default: {kernel_type: Mul, query_mode: elementwise}
""",
    "Add.csv": csv(MMH, r("1,128;1,128", BF, ND2, "1,128", "DT_BF16", "ND", "1.0"),
                   r("16,128;16,128", BF, ND2, "16,128", "DT_BF16", "ND", "2.0"),
                   r("64,256;64,256", BF, ND2, "64,256", "DT_BF16", "ND", "3.0"),
                   r("8,8;8,8", "BOOL;BOOL", ND2, "8,8", "BOOL", "ND", "0.75"),
                   r("12,12;12,12", "INT8;INT8", ND2, "12,12", "DT_UNKNOWN", "ND", "0.5")),
    "AddAiCore.csv": csv(MMH, r("24,128;24,128", BF, ND2, "24,128", "DT_BF16", "ND", "2.25")),
    "Mul.csv": csv(MMH, r("16,128;16,128", BF, ND2, "16,128", "DT_BF16", "ND", "2.0")),
}, [
    Q("padded-first-vs-exact", "aten.add.default", [T((16, 128)), T((16, 128))], out=T((16, 128))),
    Q("exact", "aten.add.default", [T((64, 256)), T((64, 256))], out=T((64, 256))),
    Q("dtype-scaled", "aten.add.default", [T((64, 256), "float32")], out=T((64, 256), "float32")),
    Q("int8-scaled", "aten.add.default", [T((64, 256), "int8")], out=T((64, 256), "int8")),
    Q("bool-matches-bool", "aten.add.default", [], out=T((8, 8), "bool")),
    Q("bool-vs-other", "aten.add.default", [], out=T((64, 256), "bool")),
    Q("flatten-3d-output", "aten.add.default", [], out=T((4, 16, 256))),
    Q("batch-strip-output", "aten.add.default", [], out=T((1, 64, 256))),
    Q("out-list", "aten.add.default", [], out=[T((64, 256)), T((2, 2))]),
    Q("alternate-kernel", "aten.add.default", [], out=T((24, 128))),
    Q("out-null-compute", "t.mul.default", [T((16, 128)), T((16, 128))]),
    Q("out-0d-compute", "t.mul.default", [T((16, 128)), T((16, 128))], out=T(())),
    Q("out-empty-list", "t.mul.default", [T((16, 128)), T((16, 128))], out=[]),
    Q("no-kernel-type", "t.nokt.default", [], out=T((16, 128))),
    Q("shape-mismatch", "aten.add.default", [], out=T((7, 7))),
    Q("unknown-row-dtype", "aten.add.default", [], out=T((12, 12), "int8")),
], "--no-interpolation")

# ---------------------------------------------------------------- §7 attention
FIAH = (MMH + ",Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,Runtime input_layout,"
        "Runtime batch_size,Runtime metadata_completeness")


def fia(q, lat, avg, sparse=3, kv=1, layout="TND", batch=4, comp="complete", dt="DT_BF16"):
    return r(f"{q};100,128,1,128;100,128,1,128;;4;4", f"{dt};{dt};{dt};DT_UNDEFINED;INT64;INT64",
             "ND;ND;ND;NULL;ND;ND", q, dt, "ND", lat, f",{avg},{sparse},{kv},{layout},{batch},{comp}")


ATTMAP = """query_selection_policy:
  kernel_overrides:
    FusedInferAttentionScore: {require_semantic_unique: true}
interpolation_policy:
  kernel_overrides:
    FusedInferAttentionScore: {axis_transform: sqrt_seq, max_interpolation_dim: 1}
operator_mappings:
  t.attention.default: {kernel_type: FusedInferAttentionScore, query_mode: attention_special}
  t.attn_alt.default:
    kernel_type: NoAvg
    alternate_kernel_types: [FusedInferAttentionScore]
    query_mode: attention_special
  t.attn_noavg.default: {kernel_type: NoAvg, query_mode: attention_special}
  t.attn_nokt.default: {query_mode: attention_special}
"""
ATTFILES = {
    "op_mapping.yaml": ATTMAP,
    "FusedInferAttentionScore.csv": csv(FIAH,
                                        fia("4,8,128", "20.0", 1024),
                                        fia("4,8,128", "22.0", 1040),
                                        fia("4,8,128", "40.0", 4096),
                                        fia("1,8,128", "30.0", 2048),
                                        fia("16,8,128", "31.0", 2048),
                                        fia("8,8,128", "25.0", 3000, comp="legacy"),
                                        fia("8,8,128", "26.0", 3004),
                                        fia("8,8,128", "27.0", 3500, layout="BSND"),
                                        fia("4,8,1,128", "33.0", 512, sparse=0, layout="BNSD_NBSD"),
                                        fia("2,16,64", "12.0", 256, kv=2),
                                        fia("2,16,64", "14.0", 1024, kv=2)),
    "NoAvg.csv": csv(MMH, r("4,8,128", "DT_BF16", "ND", "4,8,128", "DT_BF16", "ND", "1.0")),
}


def attn_q(qid, op, q, k, seq, nargs=7, qdt="bfloat16"):
    args = [T(q, qdt), T(k), T(k), None, None, None, seq]
    return Q(qid, op, args[:nargs] + [None] * max(0, nargs - 7))


def seqs(*v):
    return T((len(v),), "int32", list(v))


A = "t.attention.default"
case("attention", ATTFILES, [
    attn_q("exact", A, (4, 8, 128), (100, 128, 1, 128), seqs(1024, 1024, 1024, 1024)),
    attn_q("nearest-within-16", A, (4, 8, 128), (100, 128, 1, 128), seqs(1036, 1036, 1036, 1036)),
    attn_q("float32-mean-truncates", A, (4, 8, 128), (100, 128, 1, 128), seqs(1030, 1031, 1031, 1031)),
    attn_q("gap-over-16", A, (4, 8, 128), (100, 128, 1, 128), seqs(2000, 2000)),
    attn_q("t-padding-both-ways", A, (16, 8, 128), (100, 128, 1, 128), seqs(1024)),
    attn_q("t1-vs-t16-ambiguous-in-quirks", A, (16, 8, 128), (100, 128, 1, 128), seqs(2048)),
    attn_q("legacy-penalty", A, (8, 8, 128), (100, 128, 1, 128), seqs(3002)),
    attn_q("layout-rejects", A, (8, 8, 128), (100, 128, 1, 128), seqs(3500)),
    attn_q("bnsd-default-only", A, (4, 8, 1, 128), (4, 1, 512, 128), seqs(512, 512, 512, 512)),
    attn_q("q-2d-normalised", A, (2, 1024), (50, 2, 64), seqs(256, 256)),
    attn_q("kv-mismatch", A, (2, 16, 64), (50, 1, 64), seqs(256, 256)),
    attn_q("missing-avg-column-then-alternate", "t.attn_alt.default", (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
    attn_q("missing-avg-column", "t.attn_noavg.default", (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
    attn_q("no-kernel-type", "t.attn_nokt.default", (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
    attn_q("insufficient-args", A, (4, 8, 128), (100, 128, 1, 128), seqs(1024), nargs=6),
    Q("query-not-tensor", A, [1, T((1, 1)), None, None, None, None, seqs(1)]),
    attn_q("dtype-unmapped", A, (4, 8, 128), (100, 128, 1, 128), seqs(1024), qdt="float64"),
    attn_q("q-normalize-failed", A, (4, 8, 2, 128), (100, 128, 1, 128), seqs(1024)),
    Q("missing-seq-lens", A, [T((4, 8, 128)), T((1, 128)), None, None, None, None, [1024]]),
    attn_q("invalid-seq-lens", A, (4, 8, 128), (100, 128, 1, 128), T((4,), "int32")),
], "--no-interpolation")
ATTIFILES = {
    "op_mapping.yaml": ATTMAP,
    "FusedInferAttentionScore.csv": csv(FIAH, fia("4,8,128", "20.0", 1024), fia("4,8,128", "40.0", 4096),
                                        fia("4,8,128", "80.0", 8192, batch=8),
                                        fia("2,16,64", "12.0", 256, kv=2, batch=2),
                                        fia("2,16,64", "14.0", 1024, kv=2, batch=2)),
    "NoAvg.csv": ATTFILES["NoAvg.csv"],
}
case("attention_interp", ATTIFILES, [
    attn_q("sqrt-seq", A, (4, 8, 128), (100, 128, 1, 128), seqs(2048, 2048, 2048, 2048)),
    attn_q("sqrt-seq-t-padded", A, (16, 8, 128), (100, 128, 1, 128), seqs(2048, 2048, 2048, 2048)),
    attn_q("exact-still-first", A, (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
    attn_q("outside-boundary", A, (4, 8, 128), (100, 128, 1, 128), seqs(8000, 8000, 8000, 8000)),
    attn_q("batch-axis-kv2", A, (2, 16, 64), (50, 2, 64), seqs(512, 512)),
    attn_q("target-unavailable", A, (4, 8, 128), (100, 128, 1, 128), T((4,), "int32")),
    attn_q("index-unavailable", "t.attn_noavg.default", (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
])

# ---------------------------------------------------------------- §8 communication
COMMH = "message_bytes,num_devices,topology_tier,Average Duration(us)"
COMMFILES = {
    "op_mapping.yaml": """communication_data_ref: "../hccl/v1/"
operator_mappings:
  t.all_reduce.default: {kernel_type: hcom_allReduce_, category: communication}
  t.all_gather.default: {kernel_type: hcom_allGather_, category: communication, alternate_kernel_types: [x]}
  tensor_cast.reduce_scatter.default: {kernel_type: hcom_reduceScatter_, category: communication}
  t.all_to_all.default: {kernel_type: hcom_alltoall_, category: communication}
  t.local.default: {kernel_type: hcom_local_, category: communication}
  t.absent.default: {kernel_type: hcom_absent_, category: communication}
  t.nokt.default: {category: communication}
""",
}
COMMDATA = {
    "hcom_allReduce_.csv": csv(COMMH, "1024,2,1,11.0", "2048,2,1,12.0", "3072,2,1,13.0",
                               "1024,2,0,21.0", "5120,2,0,25.0", "1024,4,0,31.0", "3072,4,0,33.0",
                               "1024,8,0,41.0", "2048,8,0,42.5", "2048,8,0,99.0",
                               "1024,16,0,10.0", "2048,16,0,10.0", "3072,16,0,40.0"),
    "hcom_allGather_.csv": csv("message_bytes,num_devices,Average Duration(us)", "1024,2,5.0", "3072,2,7.0",
                               "1024,2,9.0"),
    "hcom_reduceScatter_.csv": csv(COMMH, "512,2,1,3.0", "1024,2,1,4.0"),
    "hcom_alltoall_.csv": csv("Input Shapes,Average Duration(us)", '"""8,8""",1.0'),
}
COMMFILES.update({"../hccl/v1/" + k: v for k, v in COMMDATA.items()})
COMMFILES["hcom_local_.csv"] = csv(COMMH, "256,2,1,1.5")
COMMFILES["hcom_allReduce_.csv"] = csv(COMMH, "1024,2,1,777.0")
AR = "t.all_reduce.default"
case("comm", COMMFILES, [
    Q("exact", AR, [T((512,)), [0, 1]]),
    Q("alpha-beta", AR, [T((768,)), [0, 1]]),
    Q("exact-largest", AR, [T((1536,)), [0, 1]]),
    Q("alpha-beta-clamped", AR, [T((768,)), list(range(16))]),
    Q("tier-0", AR, [T((1024,)), [0, 2]]),
    Q("tier-0-four-devices", AR, [T((1024,)), [0, 2, 4, 6]]),
    Q("duplicates-first-wins", AR, [T((1024,)), [0, 2, 4, 6, 8, 10, 12, 14]]),
    Q("out-of-range", AR, [T((4096,)), [0, 1]]),
    Q("no-rows-for-devices", AR, [T((512,)), [0, 1, 2]]),
    Q("no-tier-column", "t.all_gather.default", [T((1024,)), [0, 1]]),
    Q("no-tier-column-first-row", "t.all_gather.default", [T((512,)), [0, 1]]),
    Q("reduce-scatter-divides", "tensor_cast.reduce_scatter.default", [T((1024,)), [0, 1]]),
    Q("raw-layout", "t.all_to_all.default", [T((512,)), [0, 1]]),
    Q("data-dir-fallback", "t.local.default", [T((128,)), [0, 1]]),
    Q("csv-not-found", "t.absent.default", [T((128,)), [0, 1]]),
    Q("no-kernel-type", "t.nokt.default", [T((128,)), [0, 1]]),
    Q("one-arg", AR, [T((512,))]),
    Q("no-args", AR, []),
    Q("first-not-tensor", AR, [5, [0, 1]]),
    Q("one-non-tensor-arg", AR, [5]),
    Q("last-not-list", AR, [T((512,)), 3]),
    Q("empty-group", AR, [T((512,)), []]),
    Q("bad-rank", AR, [T((512,)), [0, "one"]]),
    Q("int8-bytes", AR, [T((2048,), "int8"), [0, 1]]),
], "--grid 4,2 --no-interpolation")
case("comm_nogrid", COMMFILES, [
    Q("no-tier-filter-alpha-beta", AR, [T((1024,)), [0, 2]]),
    Q("no-tier-filter-exact", AR, [T((512,)), [0, 1]]),
    Q("empty-group-no-grid", AR, [T((512,)), []]),
    Q("one-arg-wrapper", AR, [T((512,))]),
])

# ---------------------------------------------------------------- §9 static composites
COMPMAP = """operator_mappings:
  t.mm_ar.default:
    composite: true
    sub_kernels: [MatMulV2, hcom_allReduce_]
    runtime_comm_variants:
      sequence_parallel:
        source_kernel_type: hcom_allReduce_
        kernel_type: hcom_reduceScatter_
        message_bytes_mode: per_rank_output
        group_type: tensor_parallel
        interpolation_method: bracket_linear
  t.mm_ar_twice.default:
    composite: true
    sub_kernels: [MatMulV2, hcom_allReduce_, hcom_allReduce_]
  t.norm_quant.default:
    composite: true
    sub_kernels: [RmsNorm, DynamicQuant]
  t.empty.default: {composite: true, sub_kernels: []}
  t.only_comm.default: {composite: true, sub_kernels: [hcom_allReduce_]}
  t.bad_variant.default:
    composite: true
    sub_kernels: [MatMulV2, hcom_allReduce_]
    runtime_comm_variants:
      sequence_parallel: {source_kernel_type: hcom_allReduce_, kernel_type: allReduce}
  t.no_source.default:
    composite: true
    sub_kernels: [MatMulV2, hcom_allGather_]
    runtime_comm_variants:
      sequence_parallel: {source_kernel_type: hcom_allReduce_, kernel_type: hcom_reduceScatter_}
"""
COMPFILES = {
    "op_mapping.yaml": COMPMAP,
    "MatMulV2.csv": csv(MMH, r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.126"),
                        r("8,128;128,256", BF, ND2, "8,256", "DT_BF16", "ND", "9.0"),
                        r("12,128;128,256", BF, ND2, "12,256", "DT_BF16", "ND", "9.5"),
                        r("16,128;128,256", "INT8;INT8", ND2, "16,256", "DT_BF16", "ND", "2.0")),
    "RmsNorm.csv": csv(MMH, r("16,128;128", BF, ND2, "16,128", "DT_BF16", "ND", "1.5")),
    "DynamicQuant.csv": csv(MMH, r("16,128", "DT_BF16", "ND", "16,128;16", "INT8;FLOAT", ND2, "0.5")),
    "hcom_allReduce_.csv": csv(COMMH, "4096,4,0,20.0", "8192,4,0,30.0", "12288,4,0,40.0"),
    "hcom_reduceScatter_.csv": csv(COMMH, "1024,4,0,5.0", "3072,4,0,9.0"),
    "hcom_allGather_.csv": csv(COMMH, "8192,4,0,3.0"),
}
MMAR = "t.mm_ar.default"
COMPQ = [
    Q("mc2-exact", MMAR, [T((16, 128)), T((128, 256)), [0, 1, 2, 3]]),
    Q("mc2-smaller", MMAR, [T((8, 128)), T((128, 256)), [0, 1, 2, 3]]),
    Q("mc2-interpolated", MMAR, [T((12, 128)), T((128, 256)), [0, 1, 2, 3]]),
    Q("mc2-twice", "t.mm_ar_twice.default", [T((16, 128)), T((128, 256)), [0, 1, 2, 3]]),
    Q("mc2-int8-bytes", MMAR, [T((16, 128), "int8"), T((128, 256), "int8"), [0, 1, 2, 3]]),
    Q("mc2-comm-miss", MMAR, [T((16, 128)), T((128, 256)), [0, 1]]),
    Q("mc2-compute-miss", MMAR, [T((16, 64)), T((64, 256)), [0, 1, 2, 3]]),
    Q("compute-only-first-wins", "t.norm_quant.default", [T((16, 128)), T((128,))]),
    Q("second-kernel-hit", "t.norm_quant.default", [T((16, 128))]),
    Q("input-count-mismatch", "t.norm_quant.default", [T((7, 7))]),
    Q("shape-mismatch", "t.norm_quant.default", [T((7, 7)), T((7,))]),
    Q("no-sub-kernels", "t.empty.default", [T((16, 128))]),
    Q("only-comm", "t.only_comm.default", [T((16, 128)), [0, 1, 2, 3]]),
    Q("bad-variant", "t.bad_variant.default", [T((16, 128)), T((128, 256)), [0, 1, 2, 3]]),
    Q("variant-source-missing", "t.no_source.default", [T((16, 128)), T((128, 256)), [0, 1, 2, 3]]),
]
case("composite", COMPFILES, COMPQ, "--tp-size 4 --grid 8 --no-interpolation")
case("composite_sp", COMPFILES, COMPQ + [
    Q("sp-group-not-tp", MMAR, [T((16, 128)), T((128, 256)), [0, 1]]),
], "--tp-size 4 --grid 8 --sequence-parallel --no-interpolation")
case("composite_wrapper", COMPFILES, COMPQ[:2] + COMPQ[5:7], "--tp-size 4 --grid 8")

# ---------------------------------------------------------------- §10 decomposers
MLAMAP = """query_selection_policy:
  kernel_overrides:
    KvRmsNormRopeCache: {require_semantic_unique: true}
operator_mappings:
  tensor_cast.multihead_latent_attention.default:
    composite: true
    sub_kernels: [Ignored]
  tensor_cast.multihead_latent_attention_quant.default:
    composite: true
    require_all_sub_kernels: true
  tensor_cast.mlapo.default:
    composite: true
    decomposer: true
    decomposer_options:
      kv_cache_query: {mode: pool_dim0_agnostic, block_size: 128}
  tensor_cast.mla_sparse_attention.default: {composite: true}
"""
MLAFILES = {
    "op_mapping.yaml": MLAMAP,
    "BatchMatMulV2.csv": csv(MMH, r("16,4,128;16,128,512", BF, ND2, "16,4,512", "DT_BF16", "ND", "3.111")),
    "QuantBatchMatmulV3.csv": csv(MMH, r("16,4,128;16,128,512", BF, ND2, "16,4,512", "DT_BF16", "ND", "3.5")),
    "TransposeBatchMatMul.csv": csv(MMH, r("16,4,512;16,512,128", BF, ND2, "16,4,128", "DT_BF16", "ND", "2.005")),
    "MatMulV2.csv": csv(MMH, r("64,512;512,4096", BF, ND2, "64,4096", "DT_BF16", "ND", "8.0"),
                        r("16,512;512,4096", BF, ND2, "16,4096", "DT_BF16", "ND", "6.0"),
                        r("8,1024;576,1024", BF, ND2, "8,576", "DT_BF16", "ND", "1.25"),
                        r("8,256;2048,256", BF, ND2, "8,2048", "DT_BF16", "ND", "1.75"),
                        r("4,1024;576,1024", BF, ND2, "4,576", "DT_BF16", "ND", "1.0"),
                        r("4,256;2048,256", BF, ND2, "4,2048", "DT_BF16", "ND", "1.5")),
    "FusedInferAttentionScore.csv": csv(FIAH, fia("4,16,512", "7.0", 1000, sparse=0),
                                        fia("64,16,128", "9.0", 64, sparse=3, kv=16)),
    "RmsNorm.csv": csv(MMH, r("8,256;256", BF, ND2, "8,256", "DT_BF16", "ND", "0.5"),
                       r("4,256;256", BF, ND2, "4,256", "DT_BF16", "ND", "0.25")),
    "KvRmsNormRopeCache.csv": csv(MMH, r("8,1,1,320;256;8,1,1,64;8,1,1,64;8;10,128,1,64;10,128,1,256",
                                         "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16",
                                         "ND;ND;ND;ND;ND;ND;ND", "10,128,1,256", "DT_BF16", "ND", "0.9"),
                                  r("8,1,1,320;256;8,1,1,64;8,1,1,64;8;20,128,1,64;20,128,1,256",
                                    "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16",
                                    "ND;ND;ND;ND;ND;ND;ND", "20,128,1,256", "DT_BF16", "ND", "1.1"),
                                  r("4,1,1,320;256;4,1,1,64;4,1,1,64;4;10,128,1,64;10,128,1,256",
                                    "DT_BF16;DT_BF16;DT_BF16;DT_BF16;INT64;DT_BF16;DT_BF16",
                                    "ND;ND;ND;ND;ND;ND;ND", "10,128,1,256", "DT_BF16", "ND", "0.7")),
}


def mla_args(T_, ql, seqv, kvb=True, wk=True, cache=(100, 128, 576)):
    return [T((T_, 16, 192)), T(cache), None, None, seqs(*seqv), ql,
            T((16, 128, 512)) if wk else None, T((16, 512, 128)) if wk else None,
            T((512, 4096)) if kvb else None, None]


MLA = "tensor_cast.multihead_latent_attention.default"
MLAQ = "tensor_cast.multihead_latent_attention_quant.default"


def mlapo_args(T_=8):
    # h (T,H); q_a (qr=256); q_a_norm (256,); q_b (2048,256); kv_a (320 = 256 + 64); kv_a_norm (256,)
    return [T((T_, 1024)), None, None, T((256, 1024)), T((256,)), T((2048, 256)), T((320, 1024)), T((256,)),
            16, 128, None, None, None, None]


DEC = [
    Q("mla-decode", MLA, mla_args(4, seqs(1, 1, 1, 1), [1000] * 4)),
    Q("mla-decode-no-query-lens", MLA, mla_args(4, None, [1000] * 4)),
    Q("mla-prefill", MLA, mla_args(64, seqs(16, 16, 16, 16), [64] * 4)),
    Q("mla-partial", MLA, mla_args(4, seqs(1, 1, 1, 1), [1000] * 4, cache=(100, 128, 576)) [:6]
      + [T((16, 128, 512)), T((16, 512, 64)), None, None]),
    Q("mla-attention-miss", MLA, mla_args(4, seqs(1, 1, 1, 1), [3000] * 4)),
    Q("mla-mixed-phase", MLA, mla_args(4, seqs(1, 1, 1, 1), [1000] * 4), is_decode_values=[True, False, True, True]),
    Q("mla-few-args", MLA, mla_args(4, seqs(1, 1, 1, 1), [1000] * 4)[:9]),
    Q("mla-null-cache", MLA, [T((4, 16, 192)), None, None, None, seqs(1000), None, None, None, None, None]),
    Q("mla-quant-require-all", MLAQ, mla_args(4, seqs(1, 1, 1, 1), [1000] * 4)[:6]
      + [T((16, 128, 512)), T((16, 512, 64)), None, None]),
    Q("mlapo-pool-agnostic", "tensor_cast.mlapo.default", mlapo_args(4)),
    Q("mlapo-pool-ambiguous-partial", "tensor_cast.mlapo.default", mlapo_args(8)),
    Q("mlapo-few-args", "tensor_cast.mlapo.default", mlapo_args()[:13]),
]
PREFILL_INTERP = Q("mla-prefill-interpolated-matmul", MLA, mla_args(40, seqs(10, 10, 10, 10), [64] * 4))
case("decomposer", MLAFILES, DEC + [PREFILL_INTERP], "--tp-size 2 --no-interpolation")
case("decomposer_interp", MLAFILES, DEC[:5] + [PREFILL_INTERP], "--tp-size 2")

# ---------------------------------------------------------------- Tier 2: sparse MLA (§10.6, §10.9)
SFAH = (MMH + ",Runtime avg_seq_len,Runtime sparse_mode,Runtime num_key_value_heads,Runtime input_layout,"
        "Runtime metadata_completeness,Runtime topk,Runtime block_size,Runtime actual_seq_lengths_values,"
        "Runtime actual_seq_lengths_kv_values,Runtime block_table_valid_blocks,Runtime num_heads,"
        "Runtime cache_layout,Runtime kv_cache_mode,Runtime sparse_block_size,Runtime sparse_indices_pattern,"
        "Runtime sparse_indices_valid_count")


def sfa(lat, kv, cum="1,2,3,4", blocks="8,8,8,8", valid=1000):
    return r("4,16,512;100,128,1,576;4", "DT_BF16;DT_BF16;INT32", "ND;ND;ND", "4,16,512", "DT_BF16", "ND", lat,
             f',1000,3,1,TND,complete,2048,128,"{cum}","{kv}","{blocks}",16,PA_BSND,paged,1,uniform,{valid}')


case("tier2_sparse_mla", {
    "op_mapping.yaml": """operator_mappings:
  tensor_cast.mla_sparse_attention.default: {composite: true}
""",
    "BatchMatMulV2.csv": MLAFILES["BatchMatMulV2.csv"],
    "TransposeBatchMatMul.csv": MLAFILES["TransposeBatchMatMul.csv"],
    "SparseFlashAttention.csv": csv(SFAH, sfa("5.5", "999;999;999;1003", valid=1003), sfa("6.25", "1000,1000,1000,1000")),
}, [
    Q("decode", "tensor_cast.mla_sparse_attention.default", mla_args(4, None, [1000] * 4) + [2048, None]),
    Q("decode-kv-vector-differs", "tensor_cast.mla_sparse_attention.default",
      mla_args(4, None, [1000, 1000, 1000, 1004]) + [2048, None]),
    Q("decode-topk-from-indices", "tensor_cast.mla_sparse_attention.default",
      mla_args(4, None, [1000] * 4) + [None, T((4, 16, 2048), "int32")]),
    Q("no-topk", "tensor_cast.mla_sparse_attention.default", mla_args(4, None, [1000] * 4)),
], "--no-interpolation")

case("tier2_sparse_mla_interp", {
    "op_mapping.yaml": """operator_mappings:
  tensor_cast.mla_sparse_attention.default: {composite: true}
""",
    "BatchMatMulV2.csv": MLAFILES["BatchMatMulV2.csv"],
    "TransposeBatchMatMul.csv": MLAFILES["TransposeBatchMatMul.csv"],
    "SparseFlashAttention.csv": csv(SFAH, sfa("8.0", "3000,3000,3000,3000", blocks="24,24,24,24", valid=2048),
                                    sfa("12.0", "5000,5000,5000,5000", blocks="40,40,40,40", valid=2048)),
}, [
    Q("decode-effective-kv-interpolated", "tensor_cast.mla_sparse_attention.default",
      mla_args(4, None, [4000] * 4) + [2048, None]),
    Q("decode-outside", "tensor_cast.mla_sparse_attention.default", mla_args(4, None, [6000] * 4) + [2048, None]),
])

def sfa2(q, lat, avg, cum, kv, blocks, valid, heads=16, topk=2048, kernel_extra=""):
    return r(f"{q};100,128,1,576;4", "DT_BF16;DT_BF16;INT32", "ND;ND;ND", q, "DT_BF16", "ND", lat,
             f',{avg},3,1,TND,complete,{topk},128,"{cum}","{kv}","{blocks}",{heads},PA_BSND,paged,1,uniform,{valid}')


SPM = "tensor_cast.mla_sparse_attention.default"
SPMQ = "tensor_cast.mla_sparse_attention_quant.default"
SPFILES = {
    "op_mapping.yaml": """operator_mappings:
  tensor_cast.mla_sparse_attention.default:
    composite: true
    decomposer_options:
      prefill_tail_transpose: {kernel_type: TransposeTail}
  tensor_cast.mla_sparse_attention_quant.default: {composite: true}
""",
    "BatchMatMulV2.csv": MLAFILES["BatchMatMulV2.csv"],
    "QuantBatchMatmulV3.csv": MLAFILES["QuantBatchMatmulV3.csv"],
    "TransposeBatchMatMul.csv": MLAFILES["TransposeBatchMatMul.csv"],
    "MatMulV2.csv": MLAFILES["MatMulV2.csv"],
    "SparseFlashAttention.csv": csv(SFAH, sfa("6.25", "1000,1000,1000,1000"),
                                    sfa2("64,16,512", "4.5", 64, "16,32,48,64", "64,64,64,64", "1,1,1,1", 64),
                                    sfa2("32,32,512", "3.5", 32, "16;32;32;32", "64;64;0;0", "1;1;0;0", 64,
                                         heads=32),
                                    sfa2("8,16,512", "2.5", 1000, "2,4,6,8", "1000,1000,1000,1000", "8,8,8,8", 1000)),
}
SPQ = [
    Q("quant-decode", SPMQ, mla_args(4, None, [1000] * 4) + [2048, None]),
    Q("prefill-kv-b", SPM, mla_args(64, seqs(16, 16, 16, 16), [64] * 4, wk=False) + [2048, None]),
    Q("prefill-no-kv-b", SPM, mla_args(64, seqs(16, 16, 16, 16), [64] * 4, wk=False, kvb=False) + [2048, None]),
    Q("prefill-decode-lens", SPM, mla_args(64, seqs(1, 1, 1, 1), [64] * 4, wk=False) + [2048, None]),
    Q("mixed-phase", SPM, mla_args(4, None, [1000] * 4) + [2048, None], is_decode_values=[True, False, True, True]),
    Q("phase-kwarg-decode", SPM, mla_args(8, None, [1000] * 4) + [2048, None], phase="decode"),
    Q("absorbed-prefill-tail", SPM, mla_args(64, seqs(16, 16, 16, 16), [64] * 4) + [2048, None]),
    Q("topk-bool", SPM, mla_args(4, None, [1000] * 4) + [3, None]),
    Q("few-args", SPM, mla_args(4, None, [1000] * 4)[:9]),
    Q("no-seq-values", SPM, mla_args(4, None, [1000] * 4)[:4] + [T((4,), "int32")] + mla_args(4, None, [1])[5:]
      + [2048, None]),
]
case("tier2_sparse_mla_more", SPFILES, SPQ, "--no-interpolation")
case("tier2_sparse_mla_sp", SPFILES, SPQ[1:2] + SPQ[6:7] + [
    Q("sp-query-lens-inconsistent", SPM, mla_args(64, seqs(10, 10, 10, 10), [64] * 4, wk=False) + [2048, None]),
], "--tp-size 2 --sequence-parallel --no-interpolation")

# ---------------------------------------------------------------- Tier 2: DSA indexer (§10.7, §10.9)
LIH = SFAH.replace(",Runtime sparse_block_size,Runtime sparse_indices_pattern,Runtime sparse_indices_valid_count", "")


def li(q, lat, avg, cum, kv, blocks, topk=2048, heads=8):
    return r(f"{q};100,128,128;4", "DT_BF16;DT_BF16;INT32", "ND;ND;ND", q, "DT_BF16", "ND", lat,
             f',{avg},3,1,TND,complete,{topk},128,"{cum}","{kv}","{blocks}",{heads},PA_BSND,paged')


DSA = "tensor_cast.dsa_indexer.default"


def dsa_args(T_=4, seqv=(1000,) * 4, wqb_dtype="bfloat16", h=None):
    return [h or T((T_, 1024)), T((T_, 256)), None, None, T((100, 128, 128)), None, T((4, 8), "int32"),
            seqs(*seqv), T((1024, 256), wqb_dtype), T((128, 1024)), T((8, 1024)), T((128,)), 8, 128, None, 2048]


DSAFILES = {
    "op_mapping.yaml": """query_selection_policy:
  kernel_overrides:
    ScatterNdUpdate: {prefer_profiling_rows: true}
operator_mappings:
  tensor_cast.dsa_indexer.default:
    composite: true
    primary_kernel_type: LightningIndexerLegacy
    alternate_kernel_types: [LightningIndexer]
""",
    "MatMulV2.csv": csv(MMH, r("4,1024;128,1024", BF, ND2, "4,128", "DT_BF16", "ND", "1.0"),
                        r("4,1024;8,1024", BF, ND2, "4,8", "DT_BF16", "ND", "0.5"),
                        r("4,256;1024,256", BF, ND2, "4,1024", "DT_BF16", "ND", "1.5")),
    "LayerNormV3.csv": csv(MMH, r("4,128;128;128", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "4,128", "FLOAT", "ND", "0.25")),
    "Cast.csv": csv(MMH, r("4,128", "DT_BF16", "ND", "4,128", "FLOAT", "ND", "0.125")),
    "AscendQuantV2.csv": csv(MMH, r("4,256", "DT_BF16", "ND", "4,256", "INT8", "ND", "0.375")),
    "QuantBatchMatmulV3.csv": csv(MMH, r("4,256;1024,256", "INT8;INT8", ND2, "4,1024", "DT_BF16", "ND", "2.25")),
    "ScatterNdUpdate.csv": csv(MMH, r("12800,128;4,1;4,128", "DT_BF16;INT32;DT_BF16", "ND;ND;ND", "12800,128",
                                      "DT_BF16", "ND", "0.75"),
                               r("25600,128;4,1;4,128", "DT_BF16;INT32;DT_BF16", "ND;ND;ND", "25600,128",
                                 "DT_BF16", "ND", "0.875"),
                               r("12800,128;2,1;2,128", "DT_BF16;INT32;DT_BF16", "ND;ND;ND", "12800,128",
                                 "DT_BF16", "ND", "0.5")),
    "LightningIndexerLegacy.csv": csv(FIAH, fia("4,8,128", "9.0", 1000)),
    "LightningIndexer.csv": csv(LIH, li("4,8,128", "4.0", 1000, "1,2,3,4", "1000,1000,1000,1000", "8,8,8,8")),
}
case("tier2_dsa_indexer", DSAFILES, [
    Q("decode", DSA, dsa_args()),
    Q("decode-int8-q-weight", DSA, dsa_args(wqb_dtype="int8")),
    Q("kv-differs", DSA, dsa_args(seqv=(1000, 1000, 1000, 1004))),
    Q("no-seq-values", DSA, dsa_args()[:7] + [T((4,), "int32")] + dsa_args()[8:]),
    Q("scatter-miss", DSA, dsa_args(T_=2, seqv=(1000, 1000))),
    Q("few-args", DSA, dsa_args()[:15]),
    Q("hidden-3d", DSA, dsa_args(h=T((2, 2, 1024)))),
], "--no-interpolation")

DSASP = dict(DSAFILES)
DSASP["LightningIndexer.csv"] = csv(LIH, li("4,8,128", "3.0", 2, "4,4", "4,0", "1,0"))
DSASP["ScatterNdUpdate.csv"] = csv(MMH, r("12800,128;8,1;8,128", "DT_BF16;INT32;DT_BF16", "ND;ND;ND", "12800,128",
                                          "DT_BF16", "ND", "0.625"))
case("tier2_dsa_indexer_sp", DSASP, [
    Q("prefill-rank-zero", DSA, dsa_args(T_=8, seqv=(4, 4)), query_lens=seqs(4, 4)),
    Q("prefill-lens-inconsistent", DSA, dsa_args(T_=8, seqv=(4, 4)), query_lens=seqs(3, 3)),
    Q("prefill-no-lens-one-request", DSA, dsa_args(T_=8, seqv=(8,))),
    Q("decode-not-split", DSA, dsa_args(), phase="decode"),
], "--tp-size 2 --sequence-parallel --no-interpolation")

# ---------------------------------------------------------------- Tier 2: scatter interpolation (§12.12)
def scat(tok, lat, cache="12800,128", dts="DT_BF16;INT32;DT_BF16", fmts="ND;ND;ND", upd=None):
    return r(f"{cache};{tok},1;{upd or f'{tok},128'}", dts, fmts, cache, "DT_BF16", "ND", lat)


SCAT = "t.scatter.default"
case("tier2_scatter_interp", {
    "op_mapping.yaml": """operator_mappings:
  t.scatter.default:
    kernel_type: ScatterNdUpdate
    query_mode: scatter_nd_update_mla
    alternate_kernel_types: [ScatterNdUpdateAiCore]
  t.scatter_nocsv.default: {kernel_type: NoSuchScatter, query_mode: scatter_nd_update_mla}
""",
    "ScatterNdUpdate.csv": csv(MMH, scat(2, "1.0"), scat(8, "2.5"), scat(2, "9.0", fmts="ND;ND;NZ"),
                               scat(4, "7.0", cache="25600,128"), scat(32, "4.0", upd="4,8,128")),
    "ScatterNdUpdateAiCore.csv": csv(MMH, scat(16, "3.0", cache="6400,128"), scat(64, "6.0", cache="6400,128")),
}, [
    Q("between", SCAT, [T((4, 128)), T((12800, 128)), T((4, 1), "int32")]),
    Q("flattened-update", SCAT, [T((2, 2, 128)), T((12800, 128)), T((4, 1), "int32")]),
    Q("outside", SCAT, [T((64, 128)), T((12800, 128)), T((64, 1), "int32")]),
    Q("alternate-kernel", SCAT, [T((32, 128)), T((6400, 128)), T((32, 1), "int32")]),
    Q("other-cache", SCAT, [T((4, 128)), T((100, 128)), T((4, 1), "int32")]),
    Q("int64-index", SCAT, [T((4, 128)), T((12800, 128)), T((4, 1), "int64")]),
    Q("few-args", SCAT, [T((4, 128)), T((12800, 128))]),
    Q("no-csv", "t.scatter_nocsv.default", [T((4, 128)), T((12800, 128)), T((4, 1), "int32")]),
])

# ---------------------------------------------------------------- §11 moe_fused
DFCH = MMH + ",EP Size"
SEVEN = ";".join(["DT_BF16", "DT_BF16", "DT_BF16", "INT32", "INT64", "INT64", "FLOAT"])


def dfc(tokens, lat, ep=8, topk=8):
    ins = f"{tokens},1024;4,1024,512;4,256,1024;{tokens},{topk};2048;4096;{tokens},{topk}"
    return r(ins, SEVEN, ";".join(["ND"] * 7), f"{tokens},1024", "DT_BF16", "ND", lat, f",{ep}")


MOEMAP = """interpolation_policy:
  kernel_overrides:
    DispatchFFNCombine: {max_interpolation_dim: 1}
operator_mappings:
  tensor_cast.dispatch_ffn_combine.default:
    kernel_type: DispatchFFNCombine
    query_mode: moe_fused
    project_full_shape: true
  tensor_cast.dispatch_ffn_combine_quant.default:
    kernel_type: DispatchFFNCombine
    query_mode: moe_fused
    project_full_shape: true
    embedded_compute:
      - kernel_type: AddRmsNormBias
        input_projection: residual_norm_from_activation
      - kernel_type: Cast
        input_projection: routing_weight_cast
        output_dtype: FLOAT
      - not a mapping
    embedded_communication:
      kernel_type: hcom_alltoall_
      message_bytes_mode: routed_input
      group_type: expert_parallel
      interpolation_method: alpha_beta
  tensor_cast.dispatch_ffn_combine_fp8.default:
    kernel_type: DispatchFFNCombine
    query_mode: moe_fused
    project_full_shape: true
    embedded_communication: {kernel_type: alltoall}
  t.moe_plain.default: {kernel_type: DispatchFFNCombine, query_mode: moe_fused}
  t.moe_absent.default: {kernel_type: NoMoe, query_mode: moe_fused}
"""
MOEFILES = {
    "op_mapping.yaml": MOEMAP,
    "DispatchFFNCombine.csv": csv(DFCH, dfc(1, "50.0"), dfc(16, "60.0"), dfc(64, "80.0"), dfc(16, "65.0", ep=16),
                                  dfc(128, "96.0"), dfc(128, "97.0")),
    "AddRmsNormBias.csv": csv(MMH, r("16,1024;16,1024;1024;1024", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND;ND",
                                     "16,1024", "DT_BF16", "ND", "1.111")),
    "Cast.csv": csv(MMH, r("16,8", "DT_BF16", "ND", "16,8", "FLOAT", "ND", "0.333")),
    "hcom_alltoall_.csv": csv(COMMH, "131072,8,0,9.0", "524288,8,0,21.0", "2097152,8,0,69.0"),
}


def moe_args(tokens, variant="", hidden=1024, topk=8, group=8):
    w1 = [T((1024, 512))] * 4
    w2 = [T((256, 1024))] * 4
    args = [T((tokens, hidden)), T((tokens, topk), "int32"), w1, None, w2, None, None, w2 if variant else None]
    return args + [list(range(group))]


DFC = "tensor_cast.dispatch_ffn_combine.default"
DFCQ = "tensor_cast.dispatch_ffn_combine_quant.default"
MOEQ = [
    Q("projected-padded-first", DFC, moe_args(16)),
    Q("projected-exact", DFC, moe_args(64)),
    Q("ep-filters-rows", DFC, moe_args(128)),
    Q("embedded-parts", DFCQ, moe_args(16, "q")),
    Q("embedded-comm-out-of-range", DFCQ, moe_args(1, "q")),
    Q("embedded-comm-context-mismatch", DFCQ, moe_args(16, "q", group=4)),
    Q("invalid-embedded-comm", "tensor_cast.dispatch_ffn_combine_fp8.default", moe_args(16, "q")),
    Q("no-projection-shape-mismatch", "t.moe_plain.default", moe_args(16)),
    Q("csv-not-found", "t.moe_absent.default", moe_args(16)),
    Q("interpolated-tokens", DFC, moe_args(40)),
    Q("interpolated-embedded", DFCQ, moe_args(40, "q")),
]
case("moe", MOEFILES, MOEQ, "--ep-size 8 --grid 8 --no-interpolation")
case("moe_interp", MOEFILES, MOEQ, "--ep-size 8 --grid 8")
case("moe_noep", MOEFILES, MOEQ[:2], "--grid 8")

# ---------------------------------------------------------------- §12 compute interpolation
INTMAP = """interpolation_policy:
  kernel_overrides:
    MatMulV2: {max_interpolation_dim: 1}
    RmsNorm: {generic_compute: {axis: output_numel}}
operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  aten.bmm.default: {kernel_type: BatchMatMulV2}
  t.qmm.default:
    kernel_type: QuantBatchMatmulV3
    compute_subcategory: quantized_matmul
    expected_input_formats: [ND, FRACTAL_NZ]
    tc_input_count: 2
  t.gelu.default: {kernel_type: Gelu}
  t.rms.default: {kernel_type: RmsNorm}
  t.quant.default: {kernel_type: DynamicQuant, compute_subcategory: compute_scale}
  t.odd.default: {kernel_type: Gelu, compute_subcategory: fancy}
  t.nokt.default: {category: compute}
  t.add.default: {kernel_type: Add, query_mode: elementwise}
  t.lightning.default: {kernel_type: LightningIndexer, query_mode: attention_lightning_indexer}
  t.zero.default: {kernel_type: X, zero_cost: true}
  t.ew_zero.default: {kernel_type: Add, query_mode: elementwise, zero_cost: true}
  t.col.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: output, logical_global_dims: [3072]}
"""
PAVG = MMH + ",Profiling Average Duration(us)"
INTFILES = {
    "op_mapping.yaml": INTMAP,
    "MatMulV2.csv": csv(PAVG, r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.0", ","),
                        r("64,128;128,256", BF, ND2, "64,256", "DT_BF16", "ND", "30.0", ","),
                        r("64,128;128,256", BF, ND2, "64,256", "DT_BF16", "ND", "40.0", ","),
                        r("64,128;128,256", BF, ND2, "64,256", "DT_BF16", "ND", "41.0", ","),
                        r("16,128;128,512", BF, ND2, "16,512", "DT_BF16", "ND", "", ",12.0"),
                        r("64,128;128,512", BF, ND2, "64,512", "DT_BF16", "ND", "", ",36.0"),
                        r("16,128;128,1024", BF, ND2, "16,1024", "DT_BF16", "ND", "20.0", ","),
                        r("16,128;128,2048", BF, ND2, "16,2048", "DT_BF16", "ND", "36.0", ","),
                        r("16,128;128,4096", BF, ND2, "16,4096", "DT_BF16", "ND", "70.0", ",")),
    "BatchMatMulV2.csv": csv(MMH, r("4,16,64;4,64,32", BF, ND2, "4,16,32", "DT_BF16", "ND", "4.0"),
                             r("4,48,64;4,64,32", BF, ND2, "4,48,32", "DT_BF16", "ND", "6.0"),
                             r("4,16,128;4,128,32", BF, ND2, "4,16,32", "DT_BF16", "ND", "5.0"),
                             r("4,48,128;4,128,32", BF, ND2, "4,48,32", "DT_BF16", "ND", "9.0")),
    "QuantBatchMatmulV3.csv": csv(MMH, r("16,256;16,8,16,16", "INT8;INT8", "ND;FRACTAL_NZ", "16,128", "DT_BF16", "ND", "5.0"),
                                  r("48,256;16,8,16,16", "INT8;INT8", "ND;FRACTAL_NZ", "48,128", "DT_BF16", "ND", "9.0")),
    "Gelu.csv": csv(MMH, r("8,1024", "DT_BF16", "ND", "8,1024", "DT_BF16", "ND", "2.0"),
                    r("24,1024", "DT_BF16", "ND", "24,1024", "DT_BF16", "ND", "5.0")),
    "RmsNorm.csv": csv(MMH, r("8,1024;1024", BF, ND2, "8,1024", "DT_BF16", "ND", "1.0"),
                       r("4,2,2048;1024", BF, ND2, "16,1024", "DT_BF16", "ND", "3.0")),
    "DynamicQuant.csv": csv(MMH, r("8,512", "DT_BF16", "ND", "8,512;8", "INT8;FLOAT", ND2, "1.0"),
                            r("32,512", "DT_BF16", "ND", "32,512;32", "INT8;FLOAT", ND2, "2.5")),
    "Add.csv": csv(MMH, r("16,128;16,128", BF, ND2, "16,128", "DT_BF16", "ND", "1.0"),
                   r("64,128;64,128", BF, ND2, "64,128", "DT_BF16", "ND", "2.5"),
                   r("16,128;128", BF, ND2, "16,128", "DT_BF16", "ND", "0.7"),
                   r("64,128;128", BF, ND2, "64,128", "DT_BF16", "ND", "1.6")),
}
case("interp_compute", INTFILES, [
    Q("matmul-m-median", "aten.mm.default", [T((24, 128)), T((128, 256))]),
    Q("matmul-alternate-subset", "aten.mm.default", [T((40, 128)), T((128, 512))]),
    Q("matmul-n-axis", "aten.mm.default", [T((16, 128)), T((128, 1536))]),
    Q("matmul-2d-disabled", "aten.mm.default", [T((24, 128)), T((128, 768))]),
    Q("matmul-outside", "aten.mm.default", [T((128, 128)), T((128, 256))]),
    Q("bmm-m-axis", "aten.bmm.default", [T((4, 40, 64)), T((4, 64, 32))]),
    Q("qmm-quantized", "t.qmm.default", [T((40, 256), "int8"), T((256, 128), "int8")], out=T((40, 128))),
    Q("qmm-no-out", "t.qmm.default", [T((40, 256), "int8"), T((256, 128), "int8")]),
    Q("generic-axis0", "t.gelu.default", [T((12, 1024))]),
    Q("generic-output-numel", "t.rms.default", [T((12, 1024)), T((1024,))], out=T((12, 1024))),
    Q("generic-output-numel-no-out", "t.rms.default", [T((12, 1024)), T((1024,))]),
    Q("compute-scale", "t.quant.default", [T((20, 512))], out=[T((20, 512), "int8"), T((20,), "float32")]),
    Q("compute-scale-per-channel", "t.quant.default", [T((20, 512))], out=[T((20, 512), "int8"), T((512,), "float32")]),
    Q("elementwise-io-numel", "t.add.default", [T((40, 128)), T((40, 128))], out=T((40, 128))),
    Q("elementwise-broadcast", "t.add.default", [T((40, 128)), T((128,))], out=T((40, 128))),
    Q("elementwise-no-out", "t.add.default", [T((40, 128)), T((40, 128))]),
    Q("subcategory-unknown", "t.odd.default", [T((12, 1024))]),
    Q("kernel-type-missing", "t.nokt.default", [T((16, 1024))]),
    Q("lightning-leaf", "t.lightning.default", [T((16, 1024))]),
    Q("unmapped", "t.none.default", [T((16, 1024))]),
    Q("tp-projected-target", "t.col.default", [T((16, 128)), T((128, 3072))]),
    Q("zero-cost-exact", "t.zero.default", [T((16, 128))]),
    Q("zero-cost-not-applicable", "t.ew_zero.default", [T((40, 128)), T((40, 128))], out=T((40, 128))),
], "--tp-size 2")

# ---------------------------------------------------------------- §14 (vi) cell faults
case("cell_fault", {
    "op_mapping.yaml": """operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2}
  t.attention.default: {kernel_type: FusedInferAttentionScore, query_mode: attention_special}
""",
    "MatMulV2.csv": csv(MMH, r("N/A", BF, ND2, "16,256", "DT_BF16", "ND", "5.0"),
                        r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.0"),
                        '"",DT_BF16;DT_BF16,ND;ND,"""16,256""",DT_BF16,ND,7.0',
                        r("32,128;128,256", BF, ND2, "32,256", "DT_BF16", "ND", "12.0")),
    "FusedInferAttentionScore.csv": csv(FIAH, fia("4,8,128", "20.0", "long"), fia("4,8,128", "21.0", 1024)),
}, [
    Q("nan-shape-row", "aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("again", "aten.mm.default", [T((32, 128)), T((128, 256))]),
    attn_q("text-avg", "t.attention.default", (4, 8, 128), (100, 128, 1, 128), seqs(1024)),
], "--no-interpolation --stats")

# ---------------------------------------------------------------- §15 kernel level
KFILES = dict(INTFILES)
KFILES.update({"FusedInferAttentionScore.csv": ATTIFILES["FusedInferAttentionScore.csv"],
               "hcom_allReduce_.csv": csv(COMMH, "1024,2,1,11.0", "3072,2,1,13.0")})


def K_(qid, kernel, inputs, **kw):
    o = {"id": qid, "kernel": kernel, "inputs": [{"shape": list(s), "dtype": d, **({"format": f} if f else {})}
                                                 for s, d, f in inputs]}
    o.update(kw)
    return o


case("kernel", KFILES, [
    K_("exact", "MatMulV2", [((16, 128), "DT_BF16", None), ((128, 256), "DT_BF16", None)]),
    K_("framework-dtype", "MatMulV2", [((16, 128), "bfloat16", None), ((128, 256), "float32", None)]),
    K_("interpolated", "MatMulV2", [((24, 128), "DT_BF16", None), ((128, 256), "DT_BF16", None)]),
    K_("no-interpolate", "MatMulV2", [((24, 128), "DT_BF16", None), ((128, 256), "DT_BF16", None)], interpolate=False),
    K_("nz-input", "QuantBatchMatmulV3", [((16, 256), "INT8", None), ((16, 8, 16, 16), "INT8", "FRACTAL_NZ")]),
    K_("alternates", "Missing", [((8, 1024), "DT_BF16", None)], alternates=["Gelu"]),
    K_("generic-interp", "Gelu", [((12, 1024), "DT_BF16", None)]),
    K_("elementwise", "Add", [((16, 128), "DT_BF16", None)], match="elementwise",
       outputs=[{"shape": [16, 128], "dtype": "DT_BF16"}]),
    K_("elementwise-interp", "Add", [((40, 128), "DT_BF16", None), ((40, 128), "DT_BF16", None)], match="elementwise",
       outputs=[{"shape": [40, 128], "dtype": "DT_BF16"}]),
    K_("attention", "FusedInferAttentionScore", [((4, 8, 128), "DT_BF16", None)],
       attention={"avg_seq_len": 1024, "sparse_mode": 3, "num_kv_heads": 1, "input_layout": "TND"}),
    K_("attention-interp", "FusedInferAttentionScore", [((4, 8, 128), "DT_BF16", None)],
       attention={"avg_seq_len": 2048, "sparse_mode": 3, "num_kv_heads": 1, "batch_size": 4}),
    K_("attention-batch-unconstrained", "FusedInferAttentionScore", [((4, 8, 128), "DT_BF16", None)],
       attention={"avg_seq_len": 2048, "sparse_mode": 3, "num_kv_heads": 1}),
    {"id": "comm", "kernel": "hcom_allReduce_", "comm": {"message_bytes": 2048, "num_devices": 2}},
    {"id": "comm-tier", "kernel": "hcom_allReduce_", "comm": {"message_bytes": 2048, "num_devices": 2,
                                                               "topology_tier": 0, "method": "bracket_linear"}},
    {"id": "bad-kernel-name", "kernel": "../MatMulV2", "inputs": []},
    {"id": "bad-inputs", "kernel": "MatMulV2", "inputs": "16,128"},
], "", "opdb query --db in/db --kernel MatMulV2 --inputs '24,128;128,256' --dtypes 'DT_BF16;DT_BF16'{q}")

# ---------------------------------------------------------------- §13.5 --explain
# opdb's own output: the oracle's qo_explain.py covers these paths (rows, interpolation points,
# communication, sub-kernels, miss attempts); its other paths exit 99.
XMAP = """operator_mappings:
  aten.mm.default: {kernel_type: MatMulV2, alternate_kernel_types: [MatMulV3]}
  t.absent.default: {kernel_type: Absent, alternate_kernel_types: [AlsoAbsent]}
  t.alt.default: {kernel_type: Absent, alternate_kernel_types: [MatMulV2]}
  t.col.default:
    kernel_type: MatMulV2
    tp_linear_projection: {shard_axis: output, logical_global_dims: [3072]}
  t.zero.default: {kernel_type: X, zero_cost: true}
  t.accepted.default: {kernel_type: Y, accepted_miss: yes}
  t.nokt.default: {category: compute}
"""
XFILES = {
    "op_mapping.yaml": XMAP,
    "MatMulV2.csv": csv(MMH, r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.5"),
                        r("16,128;1024,128", BF, ND2, "16,1024", "DT_BF16", "ND", "11.0"),
                        r("1,128;128,512", BF, ND2, "1,512", "DT_BF16", "ND", "3.25"),
                        r("16,128;128,2048", BF, ND2, "16,2048", "DT_BF16", "ND", "5.0"),
                        r("16,128;128,2048", BF, ND2, "16,2048", "DT_BF16", "ND", "5.0"),
                        r("4,16,128;128,64", BF, ND2, "4,16,64", "DT_BF16", "ND", "2.0")),
    "MatMulV3.csv": csv(MMH, r("32,128;128,256", BF, ND2, "32,256", "DT_BF16", "ND", "12.0")),
}
case("explain_compute", XFILES, [
    Q("identity", "aten.mm.default", [T((16, 128)), T((128, 256))]),
    Q("transpose", "aten.mm.default", [T((16, 128)), T((128, 1024))]),
    Q("padding", "aten.mm.default", [T((16, 128)), T((128, 512))]),
    Q("ties", "aten.mm.default", [T((16, 128)), T((128, 2048))]),
    Q("batch-strip", "aten.mm.default", [T((1, 4, 16, 128)), T((128, 64))]),
    Q("second-kernel", "aten.mm.default", [T((32, 128)), T((128, 256))]),
    Q("alternate-after-absent", "t.alt.default", [T((16, 128)), T((128, 256))]),
    Q("miss-shape", "aten.mm.default", [T((7, 7)), T((7, 7))]),
    Q("miss-no-table", "t.absent.default", [T((16, 128)), T((128, 256))]),
    Q("miss-tp-projection", "t.col.default", [T((16, 128)), T((128, 3072))]),
    Q("zero-cost", "t.zero.default"), Q("accepted-miss", "t.accepted.default"),
    Q("unmapped", "t.nothing.default", [T((16, 128))]),
    Q("no-kernel-type", "t.nokt.default", [T((16, 128))]),
], "--no-interpolation --explain")
case("explain_interp", INTFILES, CASES["interp_compute"][1] + [
    Q("matmul-float16-same-dtype-group", "aten.mm.default", [T((24, 128), "float16"), T((128, 256), "float16")]),
    Q("generic-no-candidate-group", "t.gelu.default", [T((12, 2048))]),
    Q("generic-outside", "t.gelu.default", [T((48, 1024))]),
    Q("elementwise-float16-same-dtype-group", "t.add.default", [T((40, 128), "float16"), T((40, 128), "float16")],
      out=T((40, 128), "float16")),
    Q("compute-scale-no-candidate-group", "t.quant.default", [T((20, 512))],
      out=[T((20, 512), "float16"), T((20,), "float32")]),
], "--tp-size 2 --explain")
XCOMM = {
    "op_mapping.yaml": """operator_mappings:
  t.all_reduce.default: {kernel_type: hcom_allReduce_, category: communication}
  t.all_gather.default: {kernel_type: hcom_allGather_, category: communication}
  tensor_cast.reduce_scatter.default: {kernel_type: hcom_reduceScatter_, category: communication}
  t.all_to_all.default: {kernel_type: hcom_alltoall_, category: communication}
  t.absent.default: {kernel_type: hcom_absent_, category: communication}
""",
    "hcom_allReduce_.csv": COMMDATA["hcom_allReduce_.csv"],
    "hcom_allGather_.csv": COMMDATA["hcom_allGather_.csv"],
    "hcom_reduceScatter_.csv": COMMDATA["hcom_reduceScatter_.csv"],
    "hcom_alltoall_.csv": COMMDATA["hcom_alltoall_.csv"],
}
case("explain_comm", XCOMM, [
    Q("exact", AR, [T((512,)), [0, 1]]),
    Q("alpha-beta", AR, [T((768,)), [0, 1]]),
    Q("alpha-beta-clamped", AR, [T((768,)), list(range(16))]),
    Q("tier-0", AR, [T((1024,)), [0, 2]]),
    Q("out-of-range", AR, [T((4096,)), [0, 1]]),
    Q("no-rows-for-devices", AR, [T((512,)), [0, 1, 2]]),
    Q("no-tier-column", "t.all_gather.default", [T((1024,)), [0, 1]]),
    Q("reduce-scatter-divides", "tensor_cast.reduce_scatter.default", [T((1024,)), [0, 1]]),
    Q("raw-layout", "t.all_to_all.default", [T((512,)), [0, 1]]),
    Q("csv-not-found", "t.absent.default", [T((128,)), [0, 1]]),
], "--grid 4,2 --no-interpolation --explain")
case("explain_comm_wrapper", XCOMM, [
    Q("out-of-range", AR, [T((4096,)), [0, 1]]),
    Q("exact", AR, [T((512,)), [0, 1]]),
], "--explain")
case("explain_composite", COMPFILES, COMPQ[:7] + COMPQ[7:13],
     "--tp-size 4 --grid 8 --no-interpolation --explain")
case("explain_decomposer", MLAFILES, DEC[:5] + DEC[8:11], "--tp-size 2 --no-interpolation --explain")
case("explain_elementwise", CASES["elementwise"][0],
     [q for q in CASES["elementwise"][1] if q["id"] != "out-empty-list"], "--no-interpolation --explain")
case("explain_attention", CASES["attention"][0], CASES["attention"][1], "--no-interpolation --explain")
case("explain_kernel", CASES["kernel"][0],
     [q for q in CASES["kernel"][1] if not q["id"].startswith(("bad-", "attention-"))], "--explain")
case("explain_mtp_projection", CASES["mtp_projection"][0], CASES["mtp_projection"][1],
     "--no-interpolation --explain")

# ---------------------------------------------------------------- §17 errors
case("errors_no_db", {"op_mapping.yaml": "operator_mappings: {}\n"}, [], "",
     "!opdb query --db in/nothing-here{q} < in/queries.jsonl")
case("errors_bad_yaml", {"op_mapping.yaml": "operator_mappings: [unclosed\n"}, [Q("x", "aten.mm.default")], "")
case("errors_yaml_not_mapping", {"op_mapping.yaml": "- a list\n"}, [Q("x", "aten.mm.default")], "")
case("errors_bad_policy", {"op_mapping.yaml": "latency_policy: [1]\noperator_mappings: {}\n"}, [Q("x", "aten.mm.default")], "")
case("errors_no_mapping_file", {"MatMulV2.csv": csv(MMH)}, [Q("x", "aten.mm.default")], "")
case("errors_usage", {"op_mapping.yaml": "operator_mappings: {}\n"}, [], "", "!opdb query{q} < in/queries.jsonl")
case("errors_bad_flag", {"op_mapping.yaml": "operator_mappings: {}\n"}, [], "",
     "!opdb query --db in/db --tp-size 0{q} < in/queries.jsonl")

# ------------------------------------------- --strict: a run that answered nothing with a latency
STRICT_DB = {
    "op_mapping.yaml": "operator_mappings:\n  aten.mm.default: {kernel_type: MatMulV2}\n",
    "MatMulV2.csv": csv(MMH, r("16,128;128,256", BF, ND2, "16,256", "DT_BF16", "ND", "10.5")),
}
STRICT_MISSES = [Q("shape-miss", "aten.mm.default", [T((16, 128)), T((128, 512))]),
                 Q("unmapped", "aten.nothing.default", [T((1,))]), "not json"]
case("strict_nothing", STRICT_DB, STRICT_MISSES, "--no-interpolation --strict")
case("strict_empty", STRICT_DB, [], "--strict")
case("strict_one_hit", STRICT_DB, STRICT_MISSES + [Q("hit", "aten.mm.default", [T((16, 128)), T((128, 256))])],
     "--no-interpolation --strict")
case("strict_kernel_miss", STRICT_DB, [], "",
     "!opdb query --db in/db --kernel MatMulV2 --inputs '16,128;128,512' --dtypes 'DT_BF16;DT_BF16' --strict{q}")
case("nothing_no_strict", STRICT_DB, STRICT_MISSES, "--no-interpolation")


SPEC_STDERR = (re.compile(r"^opdb query: warning: [0-9]+ of [0-9]+ query lines gave errors$"),
               re.compile(r"^opdb query: [0-9]+ queries: "), re.compile(r"^opdb query: [0-9]+ malformed rows skipped"),
               re.compile(r"^opdb query: warning: no query (line on stdin|was answered with a latency)"),
               re.compile(r"^opdb query: --strict: "))


def write_case(name, files, queries, flags, extra_cmd):
    written = []
    for mode in ("default", "quirks"):
        d = CLI / f"query_{name}_{mode}"
        if d.exists():
            shutil.rmtree(d)
        db = d / "in" / "db"
        db.mkdir(parents=True)
        for rel, content in files.items():
            p = Path(os.path.normpath(db / rel))
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        (d / "in" / "queries.jsonl").write_text(jl(queries), encoding="utf-8")
        q = " --reference-quirks" if mode == "quirks" else ""
        cmd = f"opdb query --db in/db{(' ' + flags) if flags else ''}{q} < in/queries.jsonl"
        if extra_cmd and extra_cmd.startswith("!"):
            cmd = extra_cmd[1:].format(q=q)
        elif extra_cmd:
            cmd += " && " + extra_cmd.format(q=q)
        cmd = (f"( {cmd} ) > out.jsonl; rc=$?; sed -E 's/, \"error\": \"([^\"\\\\]|\\\\.)*\"/, \"error\": \"...\"/' "
               f"out.jsonl; rm -f out.jsonl; exit $rc")
        (d / "cmd").write_text(cmd + "\n", encoding="utf-8")
        written.append(d)
    return written


def stderr_lines(d):
    """The lines of stderr whose wording the rules fix (§16.2, §17), from the oracle."""
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(d / "in", Path(work) / "in")
        env = dict(os.environ, PATH=str(HERE.parent / "bin") + os.pathsep + os.environ.get("PATH", ""))
        p = subprocess.run(["sh", "-c", (d / "cmd").read_text()], cwd=work, env=env, capture_output=True, text=True)
    out = [ln for ln in p.stderr.splitlines() if any(rx.match(ln) for rx in SPEC_STDERR)]
    if p.returncode == 1 and any(ln.startswith("opdb: error: ") for ln in p.stderr.splitlines()):
        out.append("opdb: error: ")
    return out


def main(argv):
    names = argv or list(CASES)
    dirs = []
    for n in names:
        dirs += write_case(n, *CASES[n])
    rc = subprocess.call([sys.executable, str(NEW_CASE)] + [str(d) for d in dirs])
    for d in dirs:
        lines = stderr_lines(d)
        if lines:
            (d / "expected" / "stderr_contains").write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
