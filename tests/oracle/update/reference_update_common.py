"""The reference helper modules that start_microbench imports but the
seeds do not contain (`op_replay/common.py`, `signature_utils.py`), written from
docs/FORMAT.md ("Float parsing", "Operator-name normalisation", "Row
signatures", glossary "valid duration"; docs/UPDATE.md §1.2 step 3 (the
loader's Git-LFS / header-less errors). Never imports opdb."""
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "parse"))
from reference_common import (  # noqa: E402,F401  (device list, versions, target dir)
    DEFAULT_DEVICE,
    SUPPORTED_DEVICES,
    check_version,
    get_target_data_dir,
)

MB_DUR = "Average Duration(us)"
PROF_AVG_DUR = "Profiling Average Duration(us)"
MATMUL_FAMILY = ("MatMulV2", "MatMulV3", "MatMulCommon")
LFS_HEADER = "version https://git-lfs.github.com/spec/"

# The replay backends (op_replay/*_run.py) at reference HEAD: docs/UPDATE.md §1.1.
REPLAY_OPS = """Add AddRmsNormBias ArgMaxV2 AscendQuantV2 BatchMatMulV2 DispatchFFNCombine DynamicQuant
FusedInferAttentionScore GatherV2 GroupedMatmul GroupedMatmulSwigluQuant Index InterleaveRope
KvRmsNormRopeCache LightningIndexer MaskedFill MatMulCommon MatMulV2 MatMulV3 MoeTokenPermute
MoeTokenUnpermute PadV3 QuantBatchMatmulV3 RINGMLAPrefillBF16Kernel ReshapeAndCacheNdKernel
RmsNorm ScatterNdUpdate Slice SoftmaxV2 Sort SparseFlashAttention SwiGlu TensorMove Transpose
TransposeBatchMatMul split_qkv_rmsnorm_rope_kernel""".split()


# ---- common ---------------------------------------------------------------
def parse_float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def is_valid_duration(value) -> bool:
    return parse_float(value) > 0


def row_has_valid_duration(row) -> bool:
    return is_valid_duration(row.get(MB_DUR, "")) or is_valid_duration(row.get(PROF_AVG_DUR, ""))


def row_has_only_invalid_durations(row) -> bool:
    return not row_has_valid_duration(row)


def load_csv_rows(path: Path):
    with Path(path).open("r", encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        fieldnames = list(reader.fieldnames or [])
        if not fieldnames:
            raise ValueError(f"{path}: CSV has no header")
        if fieldnames[0].startswith(LFS_HEADER):
            raise ValueError(f"{path}: Git LFS pointer, not CSV data (run git lfs pull)")
        return fieldnames, list(reader)


def csv_has_complete_microbench(rows) -> bool:
    return bool(rows) and all(row_has_valid_duration(r) for r in rows)


# ---- signature_utils ------------------------------------------------------
def normalize_op_name(name: str) -> str:
    name = (name or "").strip()
    for suffix in ("_run.py", "_run", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def is_matmul_family(op: str) -> bool:
    return normalize_op_name(op) in MATMUL_FAMILY


def split_slots(cell):
    text = (cell or "").strip().strip('"')
    if not text:
        return []
    return [p.strip().strip('"') for p in text.split(";")]


_NULL_SHAPES = {"()", "N/A", "NA", "NULL", "None", "none"}


def norm_shape(slot) -> str:
    s = (slot or "").strip().strip('"')
    if s in _NULL_SHAPES:
        return ""
    if s.startswith("(") and s.endswith(")"):
        s = s[1:-1]
    return ",".join(p for p in re.split(r"[,\s]+", s) if p)


def _align(shapes, attrs):
    n = max(len(shapes), len(attrs))
    shapes = shapes + [""] * (n - len(shapes))
    attrs = attrs + [""] * (n - len(attrs))
    attrs = [a if s else "" for s, a in zip(shapes, attrs)]
    while shapes and shapes[-1] == "":
        shapes.pop()
    while attrs and attrs[-1] == "":
        attrs.pop()
    return ";".join(shapes), ";".join(attrs)


def align(shapes_cell, attr_cell):
    return _align([norm_shape(s) for s in split_slots(shapes_cell)], split_slots(attr_cell))


def _dims(s):
    try:
        d = tuple(int(x) for x in s.split(",")) if s else ()
    except ValueError:
        return None
    return d if len(d) == 2 else None


def _matmul_sig(row):
    ins = [norm_shape(s) for s in split_slots(row.get("Input Shapes", ""))]
    outs = [norm_shape(s) for s in split_slots(row.get("Output Shapes", ""))]
    if len(ins) < 2 or not outs:
        return None
    a, b, out = _dims(ins[0]), _dims(ins[1]), _dims(outs[0])
    if a is None or b is None or out is None:
        return None
    m, n = out
    k = None
    if a[0] == m:
        if b[0] == n and a[1] == b[1]:
            k = a[1]
        elif b[1] == n and a[1] == b[0]:
            k = a[1]
    if k is None:
        common = set(a) & set(b)
        cands = common - {m, n}
        if len(cands) == 1:
            k = next(iter(cands))
        elif len(common) == 1:
            k = next(iter(common))
        else:
            return None
    dts = split_slots(row.get("Input Data Types", ""))[:2]
    fmts = split_slots(row.get("Input Formats", ""))[:2]
    _, odt = align(row.get("Output Shapes", ""), row.get("Output Data Types", ""))
    return (f"{m},{k};{n},{k}", ";".join(dts), ";".join(fmts), f"{m},{n}", odt)


def get_sig(row, as_str: bool = False, op_name: str | None = None):
    if as_str:
        ins = row.get("Input Shapes", "") or "N/A"
        outs = row.get("Output Shapes", "") or "N/A"
        return f"{ins} -> {outs}"
    op = op_name if op_name is not None else (row.get("OP Type") or row.get("OP State") or "")
    op = normalize_op_name((op or "").strip().strip('"'))
    if op in MATMUL_FAMILY:
        sig = _matmul_sig(row)
        if sig is not None:
            return sig
    shapes = split_slots(row.get("Input Shapes", ""))
    dtypes = split_slots(row.get("Input Data Types", ""))
    formats = split_slots(row.get("Input Formats", ""))
    if op == "Index":
        outs = [norm_shape(s) for s in split_slots(row.get("Output Shapes", ""))]
        if outs and outs[0] and shapes:
            shapes = [shapes[0], outs[0]]
            dtypes = [dtypes[0], dtypes[-1]] if dtypes else []
            formats = [formats[0], formats[-1]] if formats else []
    elif op in ("Slice", "SliceAiCore", "Transpose", "TransposeAiCore"):
        shapes = shapes[:1]
        dtypes = dtypes[:1]
        formats = ["ND"] if shapes or formats else []
    norm = [norm_shape(s) for s in shapes]
    in_s, in_d = _align(list(norm), list(dtypes))
    _, in_f = _align(list(norm), list(formats))
    out_s, out_d = align(row.get("Output Shapes", ""), row.get("Output Data Types", ""))
    sig = (in_s, in_d, in_f, out_s, out_d)
    if op == "DispatchFFNCombine":
        sig += ((row.get("EP Size", "") or "").strip(),)
    return sig
