"""Shared pieces of the query oracle: cells, CSV tables, values, results.

Written from docs/QUERY-RULES.md only (never from opdb's output). Python semantics are
used on purpose wherever the rules say "Python int()/float()/repr"."""
import csv
import io
import math
import os
import re
import struct


class CellFault(Exception):
    """A cell a scan must convert and cannot (quirks: error result bad_cell)."""

    def __init__(self, table, row, column, text):
        super().__init__(f"{table.name}:{table.lines[row]}: {column}: cannot parse {text!r}")
        self.table, self.row, self.column = table, row, column


class QueryError(Exception):
    """An error result: miss_reason error:<code>."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Unsupported(Exception):
    """A Tier 2 feature this oracle does not implement."""

    def __init__(self, feature):
        super().__init__(feature)
        self.feature = feature


NA_STRINGS = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
              "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null"}
INT_RE = re.compile(r"^[ \t]*[+-]?[0-9]+[ \t]*$")
FLOAT_RE = re.compile(r"^[ \t]*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity)[ \t]*$",
                      re.IGNORECASE)
BOOL_TRUE = {"True", "TRUE", "true"}
BOOL_FALSE = {"False", "FALSE", "false"}


class NA:
    """The NA cell (a singleton); None is reserved for "missing column"."""
    def __repr__(self):
        return "NA"


NA = NA()
MISSING = object()


def _float_lit(s):
    if not FLOAT_RE.match(s):
        return None
    v = float(s.strip(" \t"))
    if math.isinf(v) and "inf" not in s.lower():
        return None  # overflow: not a float literal
    return v


class Table:
    """One kernel CSV read as pandas 1.5 read_csv with defaults would type it."""

    def __init__(self, path, name):
        self.path, self.name = path, name
        with open(path, "rb") as f:
            raw = f.read()
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        text = raw.decode("utf-8")  # UnicodeDecodeError -> load failure
        reader = csv.reader(io.StringIO(text, newline=""), strict=False)
        records, lines = [], []
        last = 0
        for rec in reader:
            start = last + 1
            last = reader.line_num
            if not rec:
                continue
            records.append(rec)
            lines.append(start)
        if not records:
            raise ValueError("empty file")
        header = records[0]
        seen = {}
        names = []
        for h in header:
            if h in seen:
                seen[h] += 1
                n = f"{h}.{seen[h]}"
                while n in seen:
                    seen[h] += 1
                    n = f"{h}.{seen[h]}"
                seen[n] = 0
                names.append(n)
            else:
                seen[h] = 0
                names.append(h)
        self.header = names
        self.col = {}
        for i, n in enumerate(names):
            self.col.setdefault(n, i)
        width = len(names)
        raw_rows = []
        for rec in records[1:]:
            if len(rec) > width:
                raise ValueError("record longer than the header")
            raw_rows.append(rec + [None] * (width - len(rec)))
        self.lines = lines[1:]
        cols = []
        for j in range(width):
            cells = [r[j] for r in raw_rows]
            cols.append(_type_column(cells))
        self.rows = [[cols[j][i] for j in range(width)] for i in range(len(raw_rows))]
        self.cache = {}

    def has(self, name):
        return name in self.col

    def cell(self, r, name):
        j = self.col.get(name)
        if j is None:
            return MISSING
        return self.rows[r][j]


def _type_column(cells):
    na = [c is None or c in NA_STRINGS for c in cells]
    vals = [c for c, n in zip(cells, na) if not n]
    if vals and all(INT_RE.match(v) for v in vals):
        ints = [int(v.strip(" \t")) for v in vals]
        if all(-2**63 <= x < 2**64 for x in ints):
            if any(na):
                it = iter(ints)
                return [NA if n else float(next(it)) for n in na]
            return [NA if n else int(c.strip(" \t")) for c, n in zip(cells, na)]
    if vals:
        fl = [_float_lit(v) for v in vals]
        if all(f is not None for f in fl):
            it = iter(fl)
            return [NA if n else next(it) for n in na]
        if all(v in BOOL_TRUE or v in BOOL_FALSE for v in vals):
            return [NA if n else (c in BOOL_TRUE) for c, n in zip(cells, na)]
    return [NA if n else c for c, n in zip(cells, na)]


# ---- cell conversions (Python semantics) ----

def text(c):
    if c is MISSING:
        return ""
    if c is NA:
        return "nan"
    if isinstance(c, bool):
        return "True" if c else "False"
    if isinstance(c, int):
        return str(c)
    if isinstance(c, float):
        return repr(c)
    return c


class ConvFail(Exception):
    pass


def num(c):
    if c is NA:
        return math.nan
    if isinstance(c, bool):
        return 1.0 if c else 0.0
    if isinstance(c, (int, float)):
        return float(c)
    if c is MISSING:
        raise ConvFail()
    try:
        return float(c)
    except ValueError:
        raise ConvFail()


def pyint(c):
    if c is NA or c is MISSING:
        raise ConvFail()
    if isinstance(c, bool):
        return int(c)
    if isinstance(c, int):
        return c
    if isinstance(c, float):
        if not math.isfinite(c):
            raise ConvFail()
        return int(c)
    try:
        return int(c)
    except ValueError:
        raise ConvFail()


def intcell(c):
    if c is NA or c is MISSING:
        return None
    if isinstance(c, bool):
        return int(c)
    if isinstance(c, int):
        return c
    try:
        v = num(c)
    except ConvFail:
        return None
    if math.isfinite(v) and v == int(v):
        return int(v)
    return None


def strcell(c):
    if c is NA or c is MISSING:
        return None
    s = text(c).strip()
    return s or None


def shapes_text(t):
    """_parse_shape_str on a text; raises ConvFail on a bad piece."""
    t = t.strip().strip('"')
    out = []
    for part in t.split(";"):
        part = part.strip()
        if not part:
            continue
        if part == "()":
            out.append(())
            continue
        out.append(tuple(pyint(p) for p in part.split(",")))
    return out


def shapes(table, r, column):
    c = table.cell(r, column)
    try:
        return shapes_text(text(c))
    except ConvFail:
        raise CellFault(table, r, column, text(c))


def slist(c):
    t = text(c).strip().strip('"')
    return [p.strip() for p in t.split(";") if p.strip()]


def fia_q(c):
    t = text(c).strip('"')
    if not t.strip():
        return None
    t = t.split(";")[0].strip()
    if not t:
        return None
    try:
        return tuple(pyint(p) for p in t.split(","))
    except ConvFail:
        return None


# ---- dtypes ----

DT_SIZE = {"bfloat16": 2, "float16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1,
           "int16": 2, "int32": 4, "int64": 8, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1}
DT_PROF = {"bfloat16": "DT_BF16", "float16": "DT_BF16", "float32": "FLOAT", "int8": "INT8",
           "int32": "INT32", "int64": "INT64", "bool": "BOOL"}
DT_ALIAS = {"half": "float16", "float": "float32", "double": "float64", "long": "int64", "int": "int32"}
REVERSE = {"DT_BF16": "bfloat16", "INT8": "int8", "INT32": "int32", "INT64": "int64",
           "FLOAT": "float32", "BOOL": "bool"}
RELAXED = {"ApplyRotaryPosEmb", "_triton_rope", "split_qkv_rmsnorm_rope_kernel", "MatMulV2", "PadV3",
           "PadV3AiCore", "MoeGatingTopK"}
BYTES = {"DT_BF16": 2, "DT_FLOAT16": 2, "FLOAT": 4, "DT_FLOAT": 4, "INT8": 1, "DT_INT8": 1, "INT16": 2,
         "INT32": 4, "DT_INT32": 4, "INT64": 8, "DT_INT64": 8}


def canon_dtype(name):
    if not isinstance(name, str):
        return None
    n = name[6:] if name.startswith("torch.") else name
    n = DT_ALIAS.get(n, n)
    return n if n in DT_SIZE else None


def prof(dt):
    """Profiler spelling; a dtype starting with '@' is already one (kernel-level queries)."""
    if dt is None:
        return None
    if dt.startswith("@"):
        return dt[1:]
    return DT_PROF.get(dt)


def dkey(kt, s):
    if kt in RELAXED and s in ("DT_BF16", "FLOAT"):
        return "FLOAT_GROUP"
    return s


# ---- query values ----

class Tensor:
    __slots__ = ("shape", "dtype", "values")

    def __init__(self, shape, dtype, values):
        self.shape, self.dtype, self.values = shape, dtype, values


class DType:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def is_t(v):
    return isinstance(v, Tensor)


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def is_int(v):
    return isinstance(v, int)  # booleans count, as in Python


def convert_value(v):
    if isinstance(v, dict):
        if "shape" in v:
            sh = v["shape"]
            if not isinstance(sh, list) or not all(isinstance(d, int) and not isinstance(d, bool)
                                                   and d >= 0 for d in sh):
                raise QueryError("bad_query", "bad tensor shape")
            dt = canon_dtype(v.get("dtype", "bfloat16"))
            if dt is None:
                raise QueryError("bad_query", f"unknown dtype {v.get('dtype')!r}")
            vals = v.get("values")
            if vals is not None:
                if not isinstance(vals, list) or len(vals) != numel(sh) or not all(
                        isinstance(x, (int, float)) for x in vals):
                    raise QueryError("bad_query", "values count differs from numel")
            return Tensor(tuple(sh), dt, vals)
        if "dtype_value" in v:
            return DType(v["dtype_value"])
        return {k: convert_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [convert_value(x) for x in v]
    return v


def first_tensor(v):
    if is_t(v):
        return v
    if isinstance(v, list):
        for x in v:
            t = first_tensor(x)
            if t is not None:
                return t
    return None


def strip_batch(s):
    return s[1:] if len(s) > 1 and s[0] == 1 else s


def nz(s):
    if len(s) >= 4:
        return s[:-4] + (s[-4] * s[-1], s[-3] * s[-2])
    return s


def tensor_inputs(args):
    out = []
    for a in args:
        if is_t(a) and len(a.shape) >= 1:
            out.append((a.shape, a.dtype))
        elif isinstance(a, list):
            for x in a:
                if is_t(x) and len(x.shape) >= 1:
                    out.append((x.shape, x.dtype))
    return out


def truthy(v):
    return bool(v) if v is not None else False


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def avgseq(t):
    """int(seq_lens.float().mean().item()); None when it fails."""
    if not is_t(t) or t.values is None or len(t.values) == 0:
        return None
    s = 0.0
    try:
        for v in t.values:
            s = f32(s + f32(float(v)))
        m = f32(s / f32(float(len(t.values))))
    except OverflowError:
        return None
    if not math.isfinite(m):
        return None
    return int(m)


def padded(t, c):
    if not t > c:
        return False
    for b in (16, 32, 64):
        if t == -(-c // b) * b:
            return True
    return c >= 64 and t == -(-c // 8) * 8


def padmatch(a, b):
    if len(a) != len(b):
        return False
    any_pad = False
    for x, y in zip(a, b):
        if x == y:
            continue
        if padded(x, y):
            any_pad = True
            continue
        return False
    return any_pad


def norm3(s, hd):
    if len(s) == 3:
        return tuple(s)
    if len(s) == 4 and s[2] == 1:
        return (s[0], s[1], s[3])
    if len(s) == 2 and hd > 0 and s[1] % hd == 0:
        return (s[0], s[1] // hd, hd)
    return None


class Result:
    __slots__ = ("hit", "latency", "source", "confidence", "rule", "kernel", "reason", "subs",
                 "interp", "request")

    def __init__(self, hit=False, latency=None, source="MISS", confidence=None, rule=None,
                 kernel=None, reason="", subs=None, interp=False):
        self.hit, self.latency, self.source, self.confidence = hit, latency, source, confidence
        self.rule, self.kernel, self.reason, self.subs, self.interp = rule, kernel, reason, subs, interp
        self.request = None


def miss(reason):
    return Result(reason=reason)


def hit(lat, source, conf, rule, kernel, subs=None):
    return Result(True, lat, source, conf, rule, kernel, None, subs)


def path_exists(p):
    return os.path.isfile(p)
