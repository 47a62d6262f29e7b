"""A drop-in data source for TensorCast's performance model: answers
`lookup(op_invoke_info)` from an opdb database with the same results TensorCast's own
profiling data sources give, thousands of times faster.

    import opdb, opdb.tensorcast
    source = opdb.tensorcast.DataSource(opdb.Database(path, tp_size=8, ep_size=8, grid=(48, 8, 2)))
    # hand `source` to TensorCast where it takes a DataSourcePerformanceModel

torch is not imported here: tensors, dtypes and symbolic ints are recognised by their
attributes, so the adapter works with whatever objects TensorCast passes.
"""
import collections

from . import Database  # noqa: F401  (re-exported for convenience)

# dtype names a query accepts (aliases included); anything else is an unsupported dtype
_FLOATING = {"bfloat16", "float16", "half", "float32", "float", "float64", "double",
             "float8_e4m3fn", "float8_e5m2"}
_INTEGER = {"int8", "uint8", "int16", "int32", "int", "int64", "long"}
_KNOWN = _FLOATING | _INTEGER | {"bool"}

QuerySource = collections.namedtuple("QuerySource", "name")
ShapeMatchInfo = collections.namedtuple("ShapeMatchInfo", "input_shapes matched_shapes rule")
QueryResult = collections.namedtuple("QueryResult",
                                     "latency_us confidence source details shape_match_info")


def _tensorcast_types():
    """TensorCast's own result classes when it is importable, else stand-ins with the same
    fields."""
    try:  # pragma: no cover - TensorCast is not installed where opdb is tested
        from tensor_cast.performance_model.profiling_database import data_source as ds
        return ds.QueryResult, ds.QuerySource, ds.ShapeMatchInfo
    except Exception:
        return (QueryResult, {n: QuerySource(n) for n in ("MEASURED", "INTERPOLATED", "PARTIAL",
                                                          "EXTRAPOLATED")}, ShapeMatchInfo)


class UnsupportedDtype(Exception):
    def __init__(self, name):
        super().__init__(name)
        self.name = name


def _dtype_name(dt):
    s = str(dt)
    return s[len("torch."):] if s.startswith("torch.") else s


def _is_dtype(v):
    return type(v).__name__ == "dtype" and str(v).startswith("torch.")


def _is_tensor(v):
    return hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "device") and not _is_dtype(v)


class DataSource:
    """TensorCast's DataSourcePerformanceModel.lookup over an opdb.Database.

    max_values: tensors with at most this many elements, not on the meta device and of an
    integer or floating dtype, pass their contents (sequence-length reads need them)."""

    def __init__(self, db, max_values=65536, types=None):
        self.db = db
        self.max_values = int(max_values)
        self.last_miss_reason = None
        self._types = types or _tensorcast_types()

    # ---- conversion of an invocation to a query
    def _value(self, v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if _is_dtype(v):
            return {"dtype_value": _dtype_name(v)}
        if _is_tensor(v):
            return self._tensor(v)
        if type(v).__name__ in ("SymInt", "SymFloat", "SymBool"):
            try:
                return float(v) if type(v).__name__ == "SymFloat" else int(v)
            except Exception:
                return None
        if isinstance(v, dict):
            return {str(k): self._value(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self._value(x) for x in v]
        return None

    def _tensor(self, t):
        name = _dtype_name(t.dtype)
        if name not in _KNOWN:
            raise UnsupportedDtype(name)
        d = {"shape": [int(x) for x in t.shape], "dtype": name}
        device = getattr(getattr(t, "device", None), "type", getattr(t, "device", None))
        if (device != "meta" and (name in _FLOATING or name in _INTEGER)
                and self._numel(d["shape"]) <= self.max_values):
            try:
                d["values"] = t.detach().cpu().reshape(-1).tolist()
            except Exception:
                pass  # no readable contents: the query treats it as a meta tensor
        return d

    @staticmethod
    def _numel(shape):
        n = 1
        for x in shape:
            n *= x
        return n

    def query_of(self, op_invoke_info):
        """The JSON query (a dict) for one invocation; raises UnsupportedDtype."""
        op = str(getattr(op_invoke_info, "func"))
        if op.startswith("torch.ops."):
            op = op[len("torch.ops."):]
        return {"op": op,
                "args": self._value(list(getattr(op_invoke_info, "args", ()) or ())),
                "out": self._value(getattr(op_invoke_info, "out", None)),
                "kwargs": self._value(dict(getattr(op_invoke_info, "kwargs", None) or {}))}

    # ---- TensorCast's interface
    def lookup(self, op_invoke_info):
        """A TensorCast QueryResult, or None on a miss (last_miss_reason says why)."""
        try:
            q = self.query_of(op_invoke_info)
        except UnsupportedDtype as e:
            self.last_miss_reason = "error:unsupported_dtype:%s" % e.name
            return None
        return self._convert(self.db.lookup_many([q])[0])

    def lookup_many(self, op_invoke_infos, threads=0):
        """Many invocations in one call to the library; a list of QueryResult or None."""
        queries, slots, out = [], [], []
        for info in op_invoke_infos:
            try:
                queries.append(self.query_of(info))
                slots.append(len(out))
                out.append(None)
            except UnsupportedDtype:
                out.append(None)
        for slot, r in zip(slots, self.db.lookup_many(queries, threads=threads)):
            out[slot] = self._convert(r)
        return out

    def _convert(self, r):
        if not r.hit:
            self.last_miss_reason = r.miss_reason
            return None
        query_result, sources, shape_match_info = self._types
        details = {}
        if r.kernel_type is not None:
            details["kernel_type"] = r.kernel_type
        if r.sub_kernel_durations is not None:
            details["sub_kernel_durations"] = [(k, v) for k, v in r.sub_kernel_durations]
        info = shape_match_info([], [], r.shape_match_rule) if r.shape_match_rule is not None else None
        self.last_miss_reason = None
        return query_result(latency_us=r.latency_us, confidence=r.confidence, source=sources[r.source],
                            details=details, shape_match_info=info)
