#!/usr/bin/env python3
"""Writes the tests/cli/grid_* golden cases: inputs here, expected outputs
from grid_oracle.py (never from opdb).  Run from anywhere:
  python3 tests/oracle/grid/make_cases.py
A grid_quirks_X case with the files and flags of a grid_X case plus
--reference-quirks is written into grid_X as cmd_quirks + expected_quirks/
(one dual-mode folder, ctest cli.grid_quirks_X; tests/cli/README.md).
  python3 tests/oracle/grid/make_cases.py --check
writes them into a temporary folder instead and compares them with the
committed ones (exit 1 on a difference)."""
import os, shutil, subprocess, sys, tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLI = HERE.parents[1] / "cli"
ORACLE = HERE / "grid_oracle.py"

H = "OP State,Accelerator Core,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Count,Average Duration(us),Profiling Average Duration(us),MicroBench aicore_time(us),Note"
def row(ins, idt, ifm, outs, odt, ofm, extra=""):
    return f'dynamic,AI_VECTOR_CORE,"""{ins}""",{idt},{ifm},"""{outs}""",{odt},{ofm},3,1.5,2.25,0.5,profiled{extra}'
def csv(*lines): return ("\r\n".join(lines) + "\r\n").encode()

ADD = csv(H, row("1,128;1,128", "DT_BF16;DT_BF16", "ND;ND", "1,128", "DT_BF16", "ND"),
          row("4,5120;4,5120", "DT_BF16;DT_BF16", "ND;ND", "4,5120", "DT_BF16", "ND"))
RMS = csv(H, row("8,4096;4096", "DT_BF16;DT_BF16", "ND;ND", "8,4096;8,1", "DT_BF16;DT_FLOAT", "ND;ND"))
MM = csv(H, row("16,5120;640,5120", "DT_BF16;DT_BF16", "ND;ND", "16,640", "DT_BF16", "ND"))
QMM = csv(H, row("16,5120;20,320,16,32;640;640", "DT_INT8;DT_INT8;DT_INT64;DT_BF16", "ND;FRACTAL_NZ;ND;ND", "16,640", "DT_BF16", "ND"))
GMM = csv(H, row("8,7168;32,7168,128,16;;32,2048;;;;32;8", "DT_BF16;DT_INT8;;DT_FLOAT;;;;DT_INT64;DT_INT64", "ND;FRACTAL_NZ;;ND;;;;ND;ND", "8,2048", "DT_BF16", "ND"))
HE = H + ",EP Size"
DFC = csv(HE, row("1,7168;1,7168,4096;1,2048,7168;1,8;4096;7168;1,8", ";".join(["DT_BF16"] * 7), ";".join(["ND"] * 7), "1,7168;1", "DT_BF16;DT_INT32", "ND;ND", ",256"))
DFC_NO_EP = csv(H, row("1,7168;1,7168,4096;1,2048,7168;1,8;4096;7168;1,8", ";".join(["DT_BF16"] * 7), ";".join(["ND"] * 7), "1,7168;1", "DT_BF16;DT_INT32", "ND;ND"))
FIA_H = H + ",Runtime attn_state,Runtime source_profile"
FIA = csv(FIA_H, row("1,40,128;64,8,128,128;64,8,128,128;;2048,2048;1;1" + ";" * 24, ";".join(["DT_BF16"] * 3 + ["DT_UNDEFINED", "INT8", "INT64", "INT64"] + ["DT_UNDEFINED"] * 24),
                     ";".join(["ND"] * 3 + ["NULL", "ND", "ND", "ND"] + ["NULL"] * 24), "1,40,128", "DT_BF16", "ND", ",DecodeOnly,profiled_run"))
SPLIT = csv(H, row("4,10240;128", "DT_BF16;DT_BF16", "ND;ND", "4,8192;4,1024;4,1024", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND"))
RAC = csv(H, row("4,8,128;4,8,128;32,128,8,128;32,128,8,128;4", "DT_BF16;DT_BF16;DT_BF16;DT_BF16;DT_INT32", "ND;ND;ND;ND;ND", "32,128,8,128;32,128,8,128", "DT_BF16;DT_BF16", "ND;ND"))
PAD = csv(H, row("7,128;4;", "DT_BF16;DT_INT64;NULL", "ND;ND;NULL", "8,128", "DT_BF16", "ND"))
def theory_row(ins, idt, ifm, outs, odt, ofm):  # a row appended by an earlier grid run, not yet replayed
    return f'dynamic,AI_VECTOR_CORE,"""{ins}""",{idt},{ifm},"""{outs}""",{odt},{ofm},0,0,0,0,profiled'
MM_COV = csv(H, row("16,5120;640,5120", "DT_BF16;DT_BF16", "ND;ND", "16,640", "DT_BF16", "ND"),
             theory_row("1,5120;320,5120", "DT_BF16;DT_BF16", "ND;ND", "1,320", "DT_BF16", "ND"),
             row("2,7168;1536,7168", "DT_BF16;DT_BF16", "ND;ND", "2,1536", "DT_BF16", "ND"))
NOSHAPES = csv("OP State,Shapes,Count", "dynamic,1,2")
BOM_ADD = b"\xef\xbb\xbf" + ADD
OPMAP = b"""operator_mappings:
  "aten.div.Tensor":
    kernel_type: RealDiv
    zero_cost: true
  "aten.add.Tensor":
    kernel_type: Add
    alternate_kernel_types: [AddV9, "", ~]
  "aten.erfinv.default":
    kernel_type: Erfinv
    query_mode: elementwise
  "tensor_cast.all_reduce.default":
    kernel_type: hcom_allReduce_
    category: communication
  "aten.view.default":
    zero_cost: true
  "aten.empty.default":
    kernel_type: ""
    zero_cost: true
  "aten.bad.default": not a mapping
"""
# The same entries as a list: not the shape of op_mapping.yaml, so no metadata.
OPMAP_LIST = b"""operator_mappings:
  - kernel_type: RealDiv
    zero_cost: true
  - kernel_type: Add
    alternate_kernel_types: [AddV9]
  - kernel_type: Erfinv
    query_mode: elementwise
"""
# Real op_mapping.yaml files (tests/data/real/ATTRIBUTION.md), byte-exact.
def real_bytes(rel, sha, name):
    """The file from the shared collection, else the copy (named `name`) a golden already holds."""
    import hashlib
    cands = [Path(os.environ.get("OPDB_SHARED_REAL", HERE.parents[2].parent / "shared" / "data" / "real")) / rel]
    cands += sorted(CLI.glob("grid_real_*/in/db/" + name))
    for c in cands:
        if c.is_file() and hashlib.sha256(c.read_bytes()).hexdigest() == sha: return c.read_bytes()
    sys.exit(f"make_cases.py: {rel} (sha256 {sha[:16]}) not found: set OPDB_SHARED_REAL to the shared real-file folder")
MAP_VLLM = real_bytes("msmodeling/op_mapping_vllm0.15.0_torch2.9.0_cann8.5.yaml",
                      "c5146239d06c26a1cd1a08120cf431cd123259e27e4b97b57b41867edc6d70ff", "op_mapping.yaml")
MAP_DOCS = real_bytes("msmodeling/op_mapping_docs_example.yaml",
                      "3427006ff21d612ec7d82d6f4ad6336c4486f942de8c0f53343ecea974aac9d1", "op_mapping.yaml")
FIA_REAL = real_bytes("ascend/msmodeling_perfdb_FusedInferAttentionScore_aggregated.csv",
                      "e2252d93e5c5a1c6f58291fcedcafb00052478a818cffe4179db54c111b1bcf1", "FusedInferAttentionScore.csv")
ROPE = csv(H, row("4,8,64;4,1,64;2048,64", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "4,8,64;4,1,64", "DT_BF16;DT_BF16", "ND;ND"))
# By the vllm0.15 mapping: Div is elementwise (query_mode), _triton_rope_1 and ApplyRotaryPosEmb
# are alternates of _triton_rope, MemSet is zero-cost, allgatherAicpuKernel communication,
# ScatterElements an alternate of a kernel type without a pattern; the real FIA rows end in ';'.
REAL_VLLM_DB = {"db/op_mapping.yaml": MAP_VLLM, "db/Add.csv": ADD, "db/ApplyRotaryPosEmb.csv": ROPE, "db/BitwiseNot.csv": ADD,
                "db/Div.csv": ADD, "db/FusedInferAttentionScore.csv": FIA_REAL, "db/MemSet.csv": ADD,
                "db/MulAiCore.csv": ADD, "db/ScatterElements.csv": ADD, "db/_triton_rope_1.csv": ROPE,
                "db/allgatherAicpuKernel.csv": ADD}
REAL_DOCS_DB = {"db/op_mapping.yaml": MAP_DOCS, "db/Add.csv": ADD, "db/Cast.csv": ADD, "db/MatMulV2.csv": MM,
                "db/DequantSwigluQuant.csv": ADD, "db/hcom_allReduce_.csv": ADD, "db/HcomReduceScatter.csv": ADD,
                "db/FusedInferAttentionScore.csv": FIA_REAL}
BAD_SYNTAX_CFG = b"""grids:
  G: [1, 2]
patterns:
  p:
    iterators: {x: G}
    constraints:
      - "x >= 1"
      - "x >> 1"
    inputs: ["(x,)"]
    outputs: ["(x,)"]
assignments:
  p: [Add]
"""
BAD_CFG = b"""grids:
  G: [1, 2]
patterns:
  p:
    iterators: {x: G}
    inputs: ["(x, __import__('os'))"]
    outputs: ["(x,)"]
assignments:
  p: [Add]
"""
CUSTOM_CFG = b"""grids:
  SMALL: [8, 24, 64]
patterns:
  mm:
    iterators: {M: [1, 3]}
    model_nk_pairs: true
    fallback_iterators: {N: SMALL, K: [16, 32]}
    constraints: ["N % 16 == 0", "K >= 16 and not K > 1024"]
    inputs: ["(M,K)", "(N,K)", "(max(1,K//N), align(M,4), 1)"]
    outputs: ["(M,N)"]
  el:
    iterators: {t: [1, 5, -7], d: SMALL}
    constants: {two: 2}
    constraints: ["t % 3 != 0", "-t ** 2 < 0"]
    inputs: ["(t*d, d//two)", "(abs(t), d % 5, min(t, d, 3), 2 ** 3)"]
    outputs: ["(t,d)"]
    input_dtypes: [DT_FLOAT, DT_INT32]
    input_formats: [ND, ND]
assignments:
  mm: [MatMulV2]
  el: [Add]
"""
# negative iterator values in Python arithmetic (floor division and modulo
# toward -inf) whose dimensions all stay >= 0: what the default mode accepts
SIGNS_CFG = CUSTOM_CFG.replace(b'inputs: ["(t*d, d//two)", "(abs(t), d % 5, min(t, d, 3), 2 ** 3)"]',
                               b'inputs: ["(abs(t*d), t % 5, t // 2 + 4)", "(abs(t), d % 5, max(0, min(t, d, 3)), 2 ** 3)"]'
                               ).replace(b'outputs: ["(t,d)"]', b'outputs: ["(abs(t),d)"]')
assert SIGNS_CFG.count(b"abs(t*d)") == 1 and SIGNS_CFG.count(b"(abs(t),d)") == 1

COV_DB = {"db/MatMulV2.csv": MM_COV, "db/QuantBatchMatmulV3.csv": QMM, "db/split_qkv_rmsnorm_rope_kernel.csv": SPLIT,
          "db/GroupedMatmul.csv": GMM, "db/DispatchFFNCombine.csv": DFC, "db/FusedInferAttentionScore.csv": FIA,
          "db/Add.csv": ADD}

CASES = [
    # name, files, opdb args, stderr lines
    ("grid_quirks_sampling_several_files", {"db/Add.csv": ADD, "db/RmsNorm.csv": RMS, "db/sub/SwiGlu.csv": RMS, "db/Foo.csv": ADD, "db/Shapes/Cast.csv": NOSHAPES},
     "--rows 12 --seed 20260409 --reference-quirks", []),
    ("grid_sampling_several_files", {"db/Add.csv": ADD, "db/RmsNorm.csv": RMS, "db/sub/SwiGlu.csv": RMS, "db/Foo.csv": ADD, "db/Shapes/Cast.csv": NOSHAPES},
     "--rows 12 --seed 20260409", []),
    ("grid_quirks_matmul_models", {"db/MatMulV2.csv": MM, "db/QuantBatchMatmulV3.csv": QMM, "db/MatMulCommon.csv": MM},
     "--target-models Qwen/Qwen3-32B,dsv3 --rows 40 --seed 1 --reference-quirks", []),
    ("grid_matmul_legacy_names", {"db/MatMulV2.csv": MM},
     "--target-models ' qwen3-32b, ,llama70b' --rows 0 --max-hbm-gb 0.01", []),
    ("grid_quirks_moe", {"db/GroupedMatmul.csv": GMM, "db/DispatchFFNCombine.csv": DFC},
     "--target-models deepseek-ai/DeepSeek-V3 --rows 0 --reference-quirks", []),
    ("grid_moe_all_presets", {"db/GroupedMatmul.csv": GMM, "db/DispatchFFNCombine.csv": DFC},
     "--rows 60 --seed 11", []),
    ("grid_quirks_fia", {"db/FusedInferAttentionScore.csv": FIA}, "--rows 30 --seed 2 --reference-quirks", []),
    ("grid_fia_qwen", {"db/FusedInferAttentionScore.csv": FIA}, "--target-models qwen3-32b --rows 40 --seed 8", []),
    ("grid_quirks_split_qkv", {"db/split_qkv_rmsnorm_rope_kernel.csv": SPLIT}, "--rows 0 --reference-quirks", []),
    ("grid_quirks_memory_filter", {"db/ReshapeAndCacheNdKernel.csv": RAC, "db/PadV3.csv": PAD},
     "--rows 0 --max-hbm-gb 0.25 --reference-quirks", []),
    ("grid_quirks_op_mapping", {"db/op_mapping.yaml": OPMAP, "db/RealDiv.csv": ADD, "db/AddV9.csv": ADD, "db/Erfinv.csv": ADD, "db/hcom_allReduce_.csv": ADD},
     "--rows 5 --seed 4 --reference-quirks", []),
    ("grid_op_mapping", {"db/op_mapping.yaml": OPMAP, "db/RealDiv.csv": ADD, "db/AddV9.csv": ADD, "db/Erfinv.csv": ADD, "db/hcom_allReduce_.csv": ADD},
     "--rows 5 --seed 4", []),
    ("grid_op_mapping_list", {"db/op_mapping.yaml": OPMAP_LIST, "db/RealDiv.csv": ADD, "db/AddV9.csv": ADD, "db/Erfinv.csv": ADD},
     "--rows 5 --seed 4", []),
    ("grid_real_mapping_vllm", REAL_VLLM_DB, "--target-models qwen3-32b --rows 6 --seed 20260409", []),
    ("grid_quirks_real_mapping_vllm", REAL_VLLM_DB, "--target-models qwen3-32b --rows 6 --seed 20260409 --reference-quirks", []),
    ("grid_real_mapping_docs", REAL_DOCS_DB, "--target-models dsv3 --rows 5 --seed 3", []),
    ("grid_quirks_real_mapping_docs", REAL_DOCS_DB, "--target-models dsv3 --rows 5 --seed 3 --reference-quirks", []),
    ("grid_quirks_bom_header", {"db/Add.csv": BOM_ADD, "db/Mul.csv": ADD}, "--rows 3 --seed 9 --reference-quirks", []),
    ("grid_bom_header", {"db/Add.csv": BOM_ADD, "db/Mul.csv": ADD}, "--rows 3 --seed 9", []),
    ("grid_quirks_dfc_without_ep_size", {"db/Add.csv": ADD, "db/DispatchFFNCombine.csv": DFC_NO_EP},
     "--rows 3 --seed 9 --reference-quirks", ["DispatchFFNCombine.csv:1: no 'EP Size' column"]),
    ("grid_dfc_without_ep_size", {"db/Add.csv": ADD, "db/DispatchFFNCombine.csv": DFC_NO_EP},
     "--rows 3 --seed 9", ["DispatchFFNCombine.csv:1: no 'EP Size' column"]),
    ("grid_quirks_custom_config", {"db/MatMulV2.csv": MM, "db/Add.csv": ADD, "cfg.yaml": CUSTOM_CFG},
     "--config in/cfg.yaml --target-models qwen3-32b --rows 0 --reference-quirks", []),
    ("grid_custom_config", {"db/MatMulV2.csv": MM, "db/Add.csv": ADD, "cfg.yaml": CUSTOM_CFG},
     "--config in/cfg.yaml --target-models qwen3-32b --rows 0",
     ["in/cfg.yaml:15: pattern 'el' input shape '(t*d, d//two)' has dimension -56 with vars {'two': 2, 't': -7, 'd': 8}: "
      "a dimension cannot be negative"]),
    ("grid_custom_config_signs", {"db/MatMulV2.csv": MM, "db/Add.csv": ADD, "cfg.yaml": SIGNS_CFG},
     "--config in/cfg.yaml --target-models qwen3-32b --rows 0", []),
    ("grid_plan", {"db/Add.csv": ADD, "db/MatMulV2.csv": MM, "db/Foo.csv": ADD, "db/ReshapeAndCacheNdKernel.csv": RAC},
     "--plan --target-models qwen3-32b --rows 100 --max-hbm-gb 0.25 --seed 3", []),
    ("grid_coverage_models", COV_DB, "--target-models Qwen/Qwen3-32B,dsv3,qwen3-32b --rows 50 --seed 5", []),
    ("grid_quirks_coverage_not_printed", COV_DB, "--target-models Qwen/Qwen3-32B,dsv3 --rows 50 --seed 5 --reference-quirks", []),
    ("grid_plan_json", COV_DB, "--plan --json --target-models qwen3-32b,dsv3 --rows 50 --seed 5 --max-hbm-gb 0.5", []),
    ("grid_plan_json_no_models", {"db/Add.csv": ADD, "db/Foo.csv": ADD, "db/Shapes/Cast.csv": NOSHAPES}, "--plan --json --rows 7 --seed 1", []),
    # --json on a run: the plan's object, its counts the rows appended; nothing else on stdout
    ("grid_json_run", {"db/Add.csv": ADD, "db/Foo.csv": ADD, "db/Shapes/Cast.csv": NOSHAPES}, "--json --rows 7 --seed 1", []),
    ("grid_quirks_json_run", {"db/Add.csv": ADD, "db/Foo.csv": ADD, "db/Shapes/Cast.csv": NOSHAPES}, "--json --rows 7 --seed 1 --reference-quirks", []),
    ("grid_quirks_plan_coverage", COV_DB, "--plan --target-models qwen3-32b --rows 50 --seed 5 --reference-quirks", []),
    ("grid_bad_expression_syntax", {"db/Add.csv": ADD, "cfg.yaml": BAD_SYNTAX_CFG}, "--config in/cfg.yaml", None),
    ("grid_unknown_model", {"db/Add.csv": ADD}, "--target-models gpt-5", ["unknown model 'gpt-5'"]),
    ("grid_bad_expression", {"db/Add.csv": ADD, "cfg.yaml": BAD_CFG}, "--config in/cfg.yaml", None),
    ("grid_missing_dir", {"x.txt": b"x\n"}, "--database-path nowhere", ["Data directory does not exist: nowhere"]),
    ("grid_no_csv", {"db/x.txt": b"x\n"}, "", ["No CSV files found under: db"]),
]

def target(name, files, args):
    """(folder, cmd file, expected folder) of a case: a quirks twin joins its default case."""
    twin = name.replace("grid_quirks_", "grid_", 1)
    for n, f, a, _ in CASES:
        if twin != name and n == twin and f == files and a == args.replace(" --reference-quirks", "", 1):
            return twin, "cmd_quirks", "expected_quirks"
    return name, "cmd", "expected"

def main():
    check = sys.argv[1:] == ["--check"]
    out = Path(tempfile.mkdtemp()) if check else CLI
    folders = sorted({target(*c[:3])[0] for c in CASES})
    for d in folders:
        if (out / d).exists(): shutil.rmtree(out / d)
    for name, files, args, errs in CASES:
        folder, cmd_name, exp = target(name, files, args)
        d = out / folder
        (d / exp).mkdir(parents=True)
        for rel, data in files.items():
            p = d / "in" / rel; p.parent.mkdir(parents=True, exist_ok=True); p.write_bytes(data)
        copy = "cp -R in/db db && " if any(k.startswith("db/") for k in files) else ""
        root = "" if "--database-path" in args else "--data-dir db "
        (d / cmd_name).write_text(f"{copy}opdb grid {root}{args}\n")
        w = Path(tempfile.mkdtemp())
        shutil.copytree(d / "in", w / "in")
        fixed = "" if "--reference-quirks" in args else "--fixed "
        cmd = f"{copy}python3 {ORACLE} {fixed}{root}{args}"
        r = subprocess.run(["sh", "-c", cmd], cwd=w, capture_output=True)
        if errs is None:  # the oracle's error line (its configuration check)
            errs = [l.split("opdb grid: ", 1)[1] for l in r.stderr.decode().splitlines() if l.startswith("opdb grid: ")]
            assert r.returncode == 2 and errs, r.stderr
        (d / exp / "stdout").write_bytes(r.stdout if r.returncode in (0, 1) else b"")
        (d / exp / "rc").write_text(f"{r.returncode}\n")
        errs = errs + [l for l in r.stderr.decode().splitlines() if l.startswith("[MEMORY]")]
        if errs: (d / exp / "stderr_contains").write_text("\n".join(errs) + "\n")
        if (w / "db").exists(): shutil.copytree(w / "db", d / exp / "db")
        shutil.rmtree(w)
        print(name, r.returncode, r.stderr.decode()[-200:].strip().replace("\n", " | "))
    if check:
        bad = [f for f in folders if subprocess.run(["diff", "-r", str(out / f), str(CLI / f)]).returncode != 0]
        shutil.rmtree(out)
        print("grid goldens: " + (f"{len(bad)} differ: {' '.join(bad)}" if bad else f"{len(folders)} reproduced"))
        sys.exit(1 if bad else 0)

main()
