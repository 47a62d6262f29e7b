"""opdb: operator latencies from an opdb database, as the performance model that consumes it
answers them (a ctypes binding of libopdb; standard library only).

    import opdb
    with opdb.Database("db/vllm0.15.0_torch2.9.0_cann8.5", tp_size=8) as db:
        r = db.lookup("aten.mm.default",
                      [opdb.Tensor((16, 128), "bfloat16"), opdb.Tensor((128, 256), "bfloat16")])
        print(r.hit, r.latency_us, r.source, r.shape_match_rule)
"""
import ctypes
import json
import math
import warnings

from . import _lib

__all__ = ["Database", "Tensor", "DType", "Result", "OpdbError", "OpdbWarning", "library_path"]

_LIB = None
_LIB_PATH = None


def _library():
    global _LIB, _LIB_PATH
    if _LIB is None:
        _LIB, _LIB_PATH = _lib.load()
    return _LIB


def library_path():
    """The path of the libopdb this package loaded."""
    _library()
    return _LIB_PATH


class OpdbError(Exception):
    """The database could not be opened, or a batch could not be answered."""


class OpdbWarning(UserWarning):
    """A warning from libopdb (a malformed row skipped, a missing op_mapping.yaml...)."""


class Tensor:
    """A tensor argument: its shape, dtype name (bfloat16, float32, int32...) and, optionally,
    its contents (flat, row-major) for the paths that read them (sequence lengths)."""
    __slots__ = ("shape", "dtype", "values")

    def __init__(self, shape, dtype="bfloat16", values=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = str(dtype)
        self.values = None if values is None else list(values)

    def __repr__(self):
        return "Tensor(%r, %r%s)" % (self.shape, self.dtype, "" if self.values is None else ", values=...")


class DType:
    """A dtype passed as a value (never matched by a lookup path)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = str(name)

    def __repr__(self):
        return "DType(%r)" % self.name


class Result:
    """One answer. source: MEASURED, INTERPOLATED, PARTIAL, MISS or ERROR."""
    __slots__ = ("id", "hit", "latency_us", "source", "confidence", "shape_match_rule",
                 "kernel_type", "miss_reason", "sub_kernel_durations", "error", "explain")

    def __init__(self, obj):
        self.id = obj.get("id")
        self.hit = bool(obj.get("hit"))
        self.latency_us = obj.get("latency_us")
        self.source = obj.get("source")
        self.confidence = obj.get("confidence")
        self.shape_match_rule = obj.get("shape_match_rule")
        self.kernel_type = obj.get("kernel_type")
        self.miss_reason = obj.get("miss_reason")
        subs = obj.get("sub_kernel_durations")
        self.sub_kernel_durations = None if subs is None else [(k, v) for k, v in subs]
        self.error = obj.get("error")
        self.explain = obj.get("explain")

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self):
        if self.hit:
            return "Result(%s %.6g us, rule=%r, kernel=%r)" % (
                self.source, self.latency_us, self.shape_match_rule, self.kernel_type)
        return "Result(%s, miss_reason=%r)" % (self.source, self.miss_reason)


def _encode(v):
    """A Python value as the JSON value of a query line."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Tensor):
        d = {"shape": list(v.shape), "dtype": v.dtype}
        if v.values is not None:
            d["values"] = [_encode(x) for x in v.values]
        return d
    if isinstance(v, DType):
        return {"dtype_value": v.name}
    if isinstance(v, dict):
        return {str(k): _encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    raise TypeError("opdb: cannot pass a %s as a query value" % type(v).__name__)


def _ktensor(t):
    if isinstance(t, dict):
        return _encode(t)
    if isinstance(t, Tensor):
        return {"shape": list(t.shape), "dtype": t.dtype}
    shape, dtype = t[0], t[1]
    d = {"shape": [int(x) for x in shape], "dtype": str(dtype)}
    if len(t) > 2 and t[2] is not None:
        d["format"] = str(t[2])
    return d


class Database:
    """An opened database version folder. Immutable once open; lookups may run from many
    threads. Use as a context manager, or call close()."""

    def __init__(self, path, tp_size=None, ep_size=None, grid=None, sequence_parallel=False,
                 interpolation=True, reference_quirks=False, eager_load=False, warn=None,
                 read_files=False):
        lib = _library()
        self._lib = lib
        self._handle = None
        opts = _lib.QdbOpts()
        lib.opdb_qdb_opts_init_sized(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.tp_size = int(tp_size or 0)
        opts.ep_size = int(ep_size or 0)
        self._grid = None
        if grid:
            dims = [int(x) for x in grid]
            self._grid = (ctypes.c_int * len(dims))(*dims)
            opts.grid = ctypes.cast(self._grid, ctypes.POINTER(ctypes.c_int))
            opts.grid_n = len(dims)
        opts.sequence_parallel = bool(sequence_parallel)
        opts.interpolation = bool(interpolation)
        opts.reference_quirks = bool(reference_quirks)
        opts.eager_load = bool(eager_load)
        opts.read_files = bool(read_files)
        sink = warn if warn is not None else (lambda line: warnings.warn(line, OpdbWarning, stacklevel=3))

        def on_warning(_ctx, line):
            sink(line.decode("utf-8", "replace"))
        self._warn_cb = _lib.WARN_FN(on_warning)  # kept alive as long as the handle
        opts.warn = ctypes.cast(self._warn_cb, ctypes.c_void_p)
        err = _lib.Err()
        handle = lib.opdb_qdb_open(str(path).encode(), ctypes.byref(opts), ctypes.byref(err))
        if not handle:
            raise OpdbError(err.msg.decode("utf-8", "replace") or "cannot open %s" % path)
        self._handle = handle
        self.path = str(path)

    def close(self):
        if self._handle:
            self._lib.opdb_qdb_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _run(self, lines, threads, explain):
        if not self._handle:
            raise OpdbError("the database is closed")
        text = ("\n".join(lines) + "\n").encode("utf-8")
        out = ctypes.c_void_p()
        out_n = ctypes.c_size_t()
        stats = _lib.Stats()
        # one C call for the whole batch; ctypes releases the GIL around it
        rc = self._lib.opdb_query_batch_text(self._handle, text, len(text), int(threads), bool(explain),
                                             ctypes.byref(out), ctypes.byref(out_n), ctypes.byref(stats))
        if rc != 0:
            raise OpdbError("the batch could not be answered (out of memory?)")
        try:
            body = ctypes.string_at(out.value, out_n.value).decode("utf-8") if out_n.value else ""
        finally:
            self._lib.opdb_query_free_text(out)
        results = [Result(json.loads(line)) for line in body.splitlines() if line]
        if len(results) != len(lines):
            raise OpdbError("expected %d results, got %d" % (len(lines), len(results)))
        return results

    @staticmethod
    def _op_line(i, op, args=None, out=None, kwargs=None):
        q = {"id": i, "op": str(op), "args": _encode(list(args or [])), "out": _encode(out),
             "kwargs": _encode(dict(kwargs or {}))}
        return json.dumps(q, separators=(",", ":"), allow_nan=False)

    def lookup(self, op, args=None, out=None, kwargs=None, explain=False):
        """One op-level lookup (an operator invocation): a Result."""
        return self._run([self._op_line(0, op, args, out, kwargs)], 1, explain)[0]

    def lookup_many(self, queries, threads=0, explain=False):
        """Many op-level lookups in one C call: queries are (op, args[, out[, kwargs]]) tuples or
        query dicts (the JSON form); results in the same order."""
        lines = []
        for i, q in enumerate(queries):
            if isinstance(q, dict):
                d = _encode(q)
                d["id"] = i
                lines.append(json.dumps(d, separators=(",", ":"), allow_nan=False))
            else:
                lines.append(self._op_line(i, *q))
        if not lines:
            return []
        return self._run(lines, threads, explain)

    def lookup_kernel(self, kernel, inputs, outputs=None, alternates=None, match=None,
                      attention=None, comm=None, interpolate=None, explain=False):
        """A kernel-level lookup: inputs are (shape, dtype[, format]) tuples, Tensors or dicts."""
        q = {"id": 0, "kernel": str(kernel), "inputs": [_ktensor(t) for t in inputs]}
        if outputs is not None:
            q["outputs"] = [_ktensor(t) for t in outputs]
        if alternates:
            q["alternates"] = [str(a) for a in alternates]
        if match is not None:
            q["match"] = str(match)
        if attention is not None:
            q["attention"] = _encode(attention)
        if comm is not None:
            q["comm"] = _encode(comm)
        if interpolate is not None:
            q["interpolate"] = bool(interpolate)
        return self._run([json.dumps(q, separators=(",", ":"), allow_nan=False)], 1, explain)[0]
