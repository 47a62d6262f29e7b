"""--explain (§13.5 of docs/QUERY-RULES.md): what an answer records while it is computed, and
the `explain` object it renders to.

The paths record into the current Trace (None when --explain is off, so they cost nothing).
Covered: unmapped, zero_cost, accepted_miss, compute, mtp_projection, elementwise, attention
(exact), communication, static composites, decomposers (dense MLA, MLAPO, cache_postprocess
sub-queries) and the wrapper's 1-D interpolation of matmul, generic compute, compute_scale and
elementwise; kernel-level queries but for attention interpolation. Any other path raises
NoOracle: the oracle does not guess an explain it was not written for."""
import math

STACK = [None]

INPUT_RULE = {1: "identity", 2: "batch_strip", 3: "singleton_axis_transpose", 4: "transpose",
              5: "batched_transpose", 6: "padding", 7: "batch_strip+padding", 8: "flatten_3d",
              9: "flatten_3d+padding", 10: "merge_last_dims", 11: "merge_last_dims+padding"}


class NoOracle(Exception):
    """An explain this oracle does not produce (the run exits 99)."""


class Trace:
    def __init__(self):
        self.path = None
        self.stage = "exact"
        self.kernels = None
        self.rows = []
        self.extra = []      # (key, value) in the order the path added them
        self.attempts = []


def cur():
    return STACK[-1]


def on():
    return STACK[-1] is not None


def start(enabled):
    STACK[:] = [Trace() if enabled else None]


def unsupported(what):
    if on():
        raise NoOracle(what)


def path(p):
    if on():
        cur().path = p


def stage(s):
    if on():
        cur().stage = s


def kernels(K):
    if on():
        cur().kernels = list(K)


def attempt(kind, name, status, **more):
    """One entry of miss.attempts: {kind: name, ...more, "status": status}."""
    if on():
        a = {kind: name}
        a.update(more)
        a["status"] = status
        cur().attempts.append(a)


def add(key, value):
    if on():
        cur().extra.append((key, value))


def lat_column(col):
    return "core_envelope" if col == "ENVELOPE" else col


def row(t, r, kernel, lat, col, rule, input_rules, dist, ties):
    if not on():
        return
    o = {"file": t.name, "line": t.lines[r], "kernel": kernel, "latency_us": float(lat),
         "latency_column": lat_column(col), "rule": rule}
    if input_rules:
        o["input_rules"] = list(input_rules)
    o["distance"] = dist
    o["ties"] = ties
    cur().rows.append(o)


def regime(key):
    """A regime key (ordered (name, value) pairs) as a JSON object: tuples as lists, integral
    numbers as integers (3 and 3.0 are one key)."""
    def val(v):
        if isinstance(v, (tuple, list)):
            return [val(x) for x in v]
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) < 2 ** 53:
            return int(v)
        return v
    return {k: val(v) for k, v in key}


def interpolation(method, axes, target, transform, key, label, points):
    """points: [(coords, latency, weight, [(table, row, latency), ...]), ...]"""
    if not on():
        return
    add("interpolation", {
        "method": method, "axes": list(axes), "target": [float(x) for x in target], "transform": transform,
        "regime": regime(key), "latency_column_group": label,
        "points": [{"coords": [float(x) for x in co], "latency_us": float(y), "weight": float(w),
                    "rows": [{"file": t.name, "line": t.lines[r], "latency_us": float(ly)} for t, r, ly in rows]}
                   for co, y, w, rows in points]})


def render(mode, r):
    """The explain object of result r (after the fixed keys)."""
    t = cur()
    o = {"mode": mode}
    if t.path is not None:
        o["path"] = t.path
    o["stage"] = t.stage
    if t.kernels is not None:
        o["kernels"] = t.kernels
    if t.rows:
        o["rows"] = t.rows
    for k, v in t.extra:
        o[k] = v
    if r.source == "MISS":
        o["miss"] = {"reason": r.reason if r.reason is not None else "", "attempts": t.attempts}
    return o
