"""Finds libopdb and declares the C functions the binding calls (ctypes only)."""
import ctypes
import ctypes.util
import os
import sys

_NAMES = ("libopdb.so.0", "libopdb.so", "libopdb.dylib")


def _candidates():
    env = os.environ.get("OPDB_LIBRARY")
    if env:
        yield env
        return
    # the install prefix this package was installed under (libopdb installed beside it:
    # PREFIX/lib/libopdb.so and PREFIX/lib/pythonX.Y/site-packages/opdb), then the usual folders
    here = os.path.dirname(os.path.abspath(__file__))
    ancestors = []
    for _ in range(6):
        here = os.path.dirname(here)
        ancestors.append(here)
    prefixes = ancestors + [sys.prefix, sys.base_prefix, "/usr/local", "/usr"]
    multiarch = getattr(sys.implementation, "_multiarch", None)
    for prefix in dict.fromkeys(prefixes):
        for sub in ("lib", "lib64") + ((os.path.join("lib", multiarch),) if multiarch else ()):
            for name in _NAMES:
                yield os.path.join(prefix, sub, name)
    found = ctypes.util.find_library("opdb")
    if found:
        yield found
    yield from _NAMES  # the dynamic linker's own search path


def load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return _declare(ctypes.CDLL(path)), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise OSError("libopdb not found; install opdb (cmake --install) or set OPDB_LIBRARY to "
                  "the path of libopdb.so. Tried: " + "; ".join(tried))


class QdbOpts(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("tp_size", ctypes.c_int),
        ("ep_size", ctypes.c_int),
        ("grid", ctypes.POINTER(ctypes.c_int)),
        ("grid_n", ctypes.c_size_t),
        ("sequence_parallel", ctypes.c_bool),
        ("interpolation", ctypes.c_bool),
        ("reference_quirks", ctypes.c_bool),
        ("eager_load", ctypes.c_bool),
        ("warn", ctypes.c_void_p),
        ("warn_ctx", ctypes.c_void_p),
        ("result_cache", ctypes.c_size_t),
        ("read_files", ctypes.c_bool),
        ("line_memo", ctypes.c_size_t),
    ]


class Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


class Stats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "queries", "measured", "interpolated", "partial", "miss", "error", "unsupported",
        "skipped_rows", "skipped_files")]


WARN_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


def _declare(lib):
    # the struct's size goes with it: a library built with more options never writes past this one
    lib.opdb_qdb_opts_init_sized.argtypes = [ctypes.POINTER(QdbOpts), ctypes.c_size_t]
    lib.opdb_qdb_opts_init_sized.restype = None
    lib.opdb_qdb_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(QdbOpts), ctypes.POINTER(Err)]
    lib.opdb_qdb_open.restype = ctypes.c_void_p
    lib.opdb_qdb_close.argtypes = [ctypes.c_void_p]
    lib.opdb_qdb_close.restype = None
    lib.opdb_query_batch_text.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_bool,
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(Stats)]
    lib.opdb_query_batch_text.restype = ctypes.c_int
    lib.opdb_query_free_text.argtypes = [ctypes.c_void_p]
    lib.opdb_query_free_text.restype = None
    if hasattr(lib, "opdb_version"):
        lib.opdb_version.argtypes = []
        lib.opdb_version.restype = ctypes.c_char_p
    return lib
