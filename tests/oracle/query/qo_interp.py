"""The interpolation wrapper (§12): dispatch, candidate indexes, 1-D interpolation.
2-D/3-D griddata is Tier 2: an attempt that passes the grid check raises Unsupported."""
import itertools
import math

import qo_explain as xp

from qo_base import (CellFault, ConvFail, QueryError, Result, Unsupported, DT_PROF, avgseq, dkey,
                     first_tensor, hit, intcell, is_int, is_t, miss, norm3, num, numel, nz, padded,
                     prof, shapes, slist, strcell, strip_batch, tensor_inputs, text, truthy)
from qo_exact import DECOMPOSERS, MATMUL, project_dfc, trunc
from qo_decomp import decompose, exact_spec, spec_dtypes

MATMULP = MATMUL | {"BatchMatMulNd"}
BATCHED = {"BatchMatMulV2", "BatchMatMulNd", "TransposeBatchMatMul", "QuantBatchMatmulV3"}
PT_COLS = ("Profiling Average Duration(us)", "Profiling Median Duration(us)", "Average Duration(us)",
           "Median Duration(us)", "Duration(us)")
RUNTIME_ATTN = {"SparseFlashAttention", "LightningIndexer", "LightningIndexerVllm"}


class Fail(Exception):
    """A target that cannot be built (reason optional)."""

    def __init__(self, reason=None):
        super().__init__(reason)
        self.reason = reason


class Point:
    __slots__ = ("axes", "lat", "label", "key", "row")

    def __init__(self, axes, lat, label, key, row):
        self.axes, self.lat, self.label, self.key, self.row = axes, lat, label, key, row


def point_latency(db, t, r):
    cols = []
    for c in (db.pref(t),) + PT_COLS:
        if c not in cols and t.has(c):
            cols.append(c)
    pref = db.pref(t)
    for c in cols:
        try:
            v = num(t.cell(r, c))
        except ConvFail:
            continue
        if math.isfinite(v) and v > 0:
            return v, ("preferred" if c == pref else "alternate")
    return None


def build_index(db, t, cache_key, row_fn):
    """Points of a CSV: row_fn(r) -> (axes, key) or None; cached per table."""
    if cache_key in t.cache:
        return t.cache[cache_key]
    pts = []
    for r in range(len(t.rows)):
        try:
            res = row_fn(r)
        except CellFault as e:
            db.fault(e)
            continue
        if res is None:
            continue
        axes, key = res
        pl = point_latency(db, t, r)
        if pl is None:
            continue
        pts.append(Point(axes, pl[0], pl[1], tuple(key), r))
    t.cache[cache_key] = pts
    return pts


def groups_of(points):
    g = {}
    for p in points:
        g.setdefault(p.key, []).append(p)
    return list(g.items())


def key_match(T, G, required=(), allow_extra=()):
    T, G = dict(T), dict(G)
    for f in required:
        if f not in T or f not in G:
            return False
    for f, v in G.items():
        if f in T and T[f] == v:
            continue
        if f in allow_extra:
            continue
        return False
    return True


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n % 2:
        return s[n // 2]
    return (s[n // 2 - 1] + s[n // 2]) / 2


def interpolate(points, t, AG, m, matchers=None):
    """§12.4: ("ok", y, rule, conf) or ("fail", statuses)."""
    st = []
    for A in AG:
        if m is not None and len(A) > m:
            st.append("interpolation_dim_disabled")
            continue
        if any(a not in t for a in A):
            st.append("missing_target_axis")
            continue
        F = []
        for p in points:
            ax = p.axes
            if any(a not in ax for a in A):
                continue
            ok = True
            for a, v in t.items():
                if a in A:
                    continue
                if a not in ax:
                    ok = False
                    break
                if ax[a] == v or (matchers and a in matchers and matchers[a](ax[a], v)):
                    continue
                ok = False
                break
            if ok and math.isfinite(p.lat) and p.lat > 0:
                F.append(p)
        if len(F) < 2:
            st.append("insufficient_filtered_candidates")
            continue
        lo, hi = {}, {}
        for a in A:
            vals = [p.axes[a] for p in F if math.isfinite(p.axes[a])]
            below = [v for v in vals if v <= t[a]]
            above = [v for v in vals if v >= t[a]]
            if not below or not above:
                lo = None
                break
            lo[a], hi[a] = max(below), min(above)
        if lo is None:
            st.append("outside_axis_boundary")
            continue
        merged = {}
        mpts = {}
        for p in F:
            merged.setdefault(tuple(p.axes[a] for a in A), []).append(p.lat)
            mpts.setdefault(tuple(p.axes[a] for a in A), []).append(p)
        if len(A) == 1:
            a = A[0]
            ylo = median(merged[(lo[a],)])
            yhi = median(merged[(hi[a],)])
            if lo[a] == hi[a]:
                y = ylo
                used = [((lo[a],), ylo, 1.0)]
            else:
                u = (t[a] - lo[a]) / (hi[a] - lo[a])
                y = ylo + u * (yhi - ylo)
                used = [((lo[a],), ylo, 1 - u), ((hi[a],), yhi, u)]
            if math.isfinite(y) and y > 0:
                # --explain: the merged points used, their weights and rows
                pts = [(co, yy, w, [(p.row, p.lat) for p in mpts[co]]) for co, yy, w in used]
                return ("ok", y, "interpolated_1d_linear", 0.7, (A, [t[a]], pts))
            st.append("latency_guard_rejected")
            continue
        distinct_ok = all(len({p.axes[a] for p in F}) >= 2 for a in A)
        if len(merged) < len(A) + 1 or not distinct_ok:
            st.append("grid_structure_rejected")
            continue
        res = griddata(merged, t, A)
        if res[0] == "ok":
            xp.unsupported("griddata points")
            return res
        st.append(res[1])
    return ("fail", st)


def griddata(merged, t, A):
    """§12.4.1 steps 3-6 with scipy (Debian python3-scipy); without it, Tier 2 is unsupported."""
    try:
        import numpy as np
        from scipy.interpolate import LinearNDInterpolator
    except ImportError:
        raise Unsupported("griddata")
    P = np.array([list(c) for c in merged], dtype=float)
    V = np.array([median(v) for v in merged.values()], dtype=float)
    if np.linalg.matrix_rank(P - P[0]) < len(A):
        return ("fail", "degenerate_point_cloud")
    try:
        f = LinearNDInterpolator(P, V)
        y = float(f(np.array([[float(t[a]) for a in A]]))[0])
    except Exception:  # noqa: BLE001 - any Qhull failure
        return ("fail", "scipy_exception")
    if math.isnan(y):
        return ("fail", "outside_convex_hull")
    if math.isfinite(y) and y > 0:
        return ("ok", y, f"interpolated_{len(A)}d_griddata_linear", 0.65 if len(A) == 2 else 0.60)
    return ("fail", "latency_guard_rejected")


def reason_of(st, default):
    if not st:
        return default
    for s in st:
        if s != "missing_target_axis":
            return s
    return "missing_target_axis"


def try_groups(groups, t, AG, m, matchers=None, split=True, kernel=None):
    """Each group as preferred then alternate points: (result tuple or None, last statuses).
    A success is ("ok", y, rule, conf, explain points, group key, latency label)."""
    last = None
    for key, pts in groups:
        subsets = [("preferred", [p for p in pts if p.label == "preferred"]),
                   ("alternate", [p for p in pts if p.label == "alternate"])] if split else [("all", pts)]
        for label, sub in subsets:
            if not sub:
                continue
            res = interpolate(sub, t, AG, m, matchers)
            if res[0] == "ok":
                return res + (key, label), None
            last = res[1]
            xp.attempt("group", xp.regime(key), reason_of(last, "candidate_group_failed"),
                       latency_column_group=label)
    if not groups and kernel is not None:
        xp.attempt("kernel", kernel, "no_candidate_group")
    return None, last


def explain_interp(db, kt, res):
    """--explain of a wrapper success res (try_groups) from kt's table."""
    if not xp.on():
        return
    if len(res) < 7 or len(res[4]) != 3:
        raise xp.NoOracle("interpolation without its points")
    A, target, pts = res[4]
    t = db.table(kt)
    xp.interpolation("linear_1d", A, target, None, res[5], res[6],
                     [(co, y, w, [(t, r, lat) for r, lat in rows]) for co, y, w, rows in pts])


def max_dim(db, kt):
    v = db.ov_int(kt).get("max_interpolation_dim")
    return v if is_int(v) else None


# ---------------------------------------------------------------- §12.5 matmul

def mnk(kt, L):
    if len(L) < 2:
        return None
    l, r = L[0], L[1]
    if kt not in BATCHED:
        if len(l) >= 3 and l[0] == 1:
            l = l[1:]
        if len(r) >= 3 and r[0] == 1:
            r = r[1:]
    if len(l) < 2 or len(r) < 2:
        return None
    M, K = l[-2], l[-1]
    if r[-2] == K:
        N = r[-1]
    elif r[-1] == K:
        N = r[-2]
    else:
        return None
    return M, K, N, (tuple(l[:-2]), tuple(r[:-2]))


def matmul_index(db, kt, N, quant):
    t = db.table(kt)
    if t is None:
        return None

    def row(r):
        C = trunc(shapes(t, r, "Input Shapes"), N)
        D = trunc(slist(t.cell(r, "Input Data Types")), N)
        F = trunc(slist(t.cell(r, "Input Formats")), N)
        if len(C) < 2 or len(D) < len(C) or len(F) < len(C):
            return None
        L = [nz(c) if F[i] == "FRACTAL_NZ" else c for i, c in enumerate(C)]
        x = mnk(kt, L)
        if x is None:
            return None
        n = N or len(C)
        key = [("kernel_type", kt), ("input_count", n), ("input_dtypes", tuple(dkey(kt, d) for d in D[:n])),
               ("batch_dims", x[3]), ("input_formats", tuple(F[:n]))]
        if quant:
            OS = shapes(t, r, "Output Shapes")
            OD = slist(t.cell(r, "Output Data Types"))
            OF = slist(t.cell(r, "Output Formats"))
            if not OS or len(OD) != len(OS) or len(OF) != len(OS):
                return None
            key += [("output_count", len(OS)), ("output_dtypes", tuple(OD)), ("output_formats", tuple(OF))]
        if point_latency(db, t, r) is None:
            return None
        return {"M": x[0], "K": x[1], "N": x[2]}, key
    return build_index(db, t, ("mm", N, quant), row)


def matmul_target(db, e, q, kt, X, quant, tpdiv):
    N = e["tc_input_count"]
    X = trunc(X, N)
    if len(X) < 2:
        raise Fail()
    outs = None
    if quant:
        o = q.out
        if is_t(o):
            outs = [o]
        elif isinstance(o, list) and o and all(is_t(x) for x in o):
            outs = o
        else:
            raise Fail()
        a, y = X[0][0], outs[0].shape
        if len(a) != 2 or len(y) != 2 or any(d <= 0 for d in a + y) or a[0] != y[0]:
            raise Fail()
        nn = y[1] // tpdiv if tpdiv else y[1]
        x = (a[0], a[1], nn, ((), ()))
    else:
        x = mnk(kt, [s for s, _ in X])
        if x is None:
            raise Fail()
    ps = [prof(d) for _, d in X]
    if any(p is None for p in ps):
        raise Fail()
    n = N or len(X)
    key = [("kernel_type", kt), ("input_count", n), ("input_dtypes", tuple(dkey(kt, p) for p in ps)[:n]),
           ("batch_dims", x[3])]
    if quant:
        f = e["expected_input_formats"]
        if not (isinstance(f, list) and len(f) == n and all(isinstance(s, str) and s.strip() for s in f)):
            raise Fail()
        od = [prof(o.dtype) for o in outs]
        if any(p is None for p in od):
            raise Fail()
        key += [("input_formats", tuple(s.strip() for s in f)), ("output_count", len(outs)),
                ("output_dtypes", tuple(od)), ("output_formats", tuple("ND" for _ in outs))]
    return {"M": x[0], "K": x[1], "N": x[2]}, key


MM_AG = (("M",), ("K",), ("N",), ("M", "K"), ("M", "N"), ("K", "N"), ("M", "K", "N"))


def matmul_points_run(db, kt, axes, key, N, quant, m_kernel=None):
    idx = matmul_index(db, kt, N, quant)
    if idx is None:
        return None
    allow = {"output_count", "output_dtypes", "output_formats"} | (set() if quant else {"input_formats"})
    gs = [(k, p) for k, p in groups_of(idx) if key_match(key, k, (), allow)]
    gs.sort(key=lambda g: (0 if all(f == "ND" for f in dict(g[0]).get("input_formats", ())) else 1, -len(g[1])))
    res, _ = try_groups(gs, axes, MM_AG, max_dim(db, m_kernel or kt), kernel=kt)
    return res


def interp_matmul(db, e, q, quant, K, X, tpdiv):
    for kt in K:
        if kt not in MATMULP:
            continue
        try:
            axes, key = matmul_target(db, e, q, kt, X, quant, tpdiv)
        except Fail:
            continue
        res = matmul_points_run(db, kt, axes, key, e["tc_input_count"], quant)
        if res:
            explain_interp(db, kt, res)
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
    return miss("compute_multidim_interpolation_failed")


# ---------------------------------------------------------------- §12.6 generic compute

def generic_axis(db, kt, primary):
    for k in (kt, primary):
        g = db.ov_int(k).get("generic_compute")
        if isinstance(g, dict) and g:
            return "output_numel" if g.get("axis") == "output_numel" else "axis_0"
    return "axis_0"


def out_shapes_of(out):
    if is_t(out):
        return [out.shape]
    if isinstance(out, list):
        return [x.shape for x in out if is_t(x)]
    return None


def generic_axes(axis, s, outs):
    """(axes, extra field) from stripped input shapes and output shapes, or None."""
    if axis == "axis_0":
        return {"axis_0": s[0][0]}, ("shape_signature", (tuple(s[0][1:]), tuple(tuple(x) for x in s[1:])))
    if outs is None or len(outs) != 1:
        return None
    o = tuple(outs[0])
    if len(o) >= 3 and o[0] == 1:
        o = o[1:]
    return {"output_numel": numel(o)}, ("output_tail_shape", tuple(o[1:]))


def generic_index(db, kt, N, axis):
    t = db.table(kt)
    if t is None:
        return None

    def row(r):
        C = trunc(shapes(t, r, "Input Shapes"), N)
        D = trunc(slist(t.cell(r, "Input Data Types")), N)
        F = trunc(slist(t.cell(r, "Input Formats")), N)
        if not C or len(D) < len(C) or len(F) < len(C):
            return None
        L = [strip_batch(nz(c) if F[i] == "FRACTAL_NZ" else c) for i, c in enumerate(C)]
        if L[0] == ():
            return None
        OS = shapes(t, r, "Output Shapes")
        ax = generic_axes(axis, L, OS)
        if ax is None:
            return None
        n = len(L)
        return ax[0], [("kernel_type", kt), ("input_count", n), ("input_dtypes", tuple(dkey(kt, d) for d in D[:n])),
                       ax[1]]
    return build_index(db, t, ("gen", N, axis), row)


def generic_run(db, kt, axes, key, N, axis, mkernel):
    """(result tuple or None, reason)."""
    idx = generic_index(db, kt, N, axis)
    if idx is None:
        return None, "compute_csv_not_found"
    gs = [(k, p) for k, p in groups_of(idx) if key_match(key, k)]
    if not gs:
        xp.attempt("kernel", kt, "no_candidate_group")
        return None, "regime_key_unmatched"
    res, st = try_groups(gs, axes, ((axis,),), max_dim(db, mkernel))
    if res:
        return res, ""
    return None, reason_of(st, "candidate_group_failed")


def interp_generic(db, e, q, K, X):
    primary = e["kernel_type"]
    X = trunc(X, e["tc_input_count"])
    reason = "compute_target_unavailable"
    for kt in K:
        axis = generic_axis(db, kt, primary)
        ps = [prof(d) for _, d in X]
        if not X or any(p is None for p in ps):
            reason = "compute_target_unavailable"
            continue
        s = [strip_batch(sh) for sh, _ in X]
        if s[0] == ():
            reason = "compute_target_unavailable"
            continue
        ax = generic_axes(axis, s, out_shapes_of(q.out))
        if ax is None:
            reason = "compute_target_unavailable"
            continue
        key = [("kernel_type", kt), ("input_count", len(s)), ("input_dtypes", tuple(dkey(kt, p) for p in ps)), ax[1]]
        res, reason = generic_run(db, kt, ax[0], key, e["tc_input_count"], axis, kt)
        if res:
            explain_interp(db, kt, res)
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
    return miss(reason)


# ---------------------------------------------------------------- §12.7 compute_scale

def cs_axes(s):
    if not s or any(d <= 0 for d in s):
        return None
    return numel(s[:-1]), s[-1]


def cs_mode(s, x, kt):
    ax = cs_axes(s)
    if ax is None or numel(x) <= 0:
        return None
    M, K = ax
    if x == ():
        return ("per_tensor", None)
    if kt == "DynamicBlockQuant":
        if len(x) == 1 and numel(x) <= K:
            return ("per_block", -(-K // numel(x)))
        return None
    if numel(x) == M:
        return ("per_token", None)
    if numel(x) == K:
        return ("per_channel", None)
    return None


def sdt(dt):
    return "DT_FLOAT16" if dt == "float16" else prof(dt)


def cs_key(kt, idt, ifmt, ods, ofs, modes):
    key = [("kernel_type", kt), ("input_dtype", dkey(kt, idt)), ("input_format", ifmt),
           ("output_count", len(ods)), ("output_dtypes", tuple(ods)), ("output_formats", tuple(ofs)),
           ("scale_mode", modes[0][0]), ("auxiliary_modes", tuple(modes))]
    if modes[0][1] is not None:
        key.append(("block_size", modes[0][1]))
    return key


def interp_compute_scale(db, e, q, K=None, X=None):
    K = K or e.kernels()
    primary = e["kernel_type"]
    X = tensor_inputs(q.args) if X is None else X
    last = None
    for kt in K:
        try:
            if not X:
                raise Fail()
            x0, dt0 = X[0]
            ax = cs_axes(x0)
            p = sdt(dt0)
            o = q.out
            outs = [o] if is_t(o) else o if isinstance(o, list) and o and all(is_t(z) for z in o) else None
            if ax is None or p is None or outs is None or len(outs) < 2 or outs[0].shape != x0:
                raise Fail()
            ods = [sdt(z.dtype) for z in outs]
            if any(d is None for d in ods):
                raise Fail()
            modes = [cs_mode(x0, z.shape, kt) for z in outs[1:]]
            if any(md is None for md in modes):
                raise Fail()
        except Fail:
            last = None
            continue
        key = cs_key(kt, p, "ND", ods, ["ND"] * len(outs), modes)
        t = db.table(kt)
        if t is None:
            last = None
            continue

        def row(r, t=t, kt=kt):
            S = shapes(t, r, "Input Shapes")
            D = slist(t.cell(r, "Input Data Types"))
            F = slist(t.cell(r, "Input Formats"))
            OS = shapes(t, r, "Output Shapes")
            OD = slist(t.cell(r, "Output Data Types"))
            OF = slist(t.cell(r, "Output Formats"))
            if not S or not D or not F or len(OS) < 2 or len(OD) != len(OS) or len(OF) != len(OS):
                return None
            s = nz(S[0]) if F[0] == "FRACTAL_NZ" else S[0]
            o0 = nz(OS[0]) if OF[0] == "FRACTAL_NZ" else OS[0]
            if o0 != s:
                return None
            a = cs_axes(s)
            md = [cs_mode(s, z, kt) for z in OS[1:]]
            if a is None or any(x is None for x in md):
                return None
            return {"M": a[0], "K": a[1]}, cs_key(kt, D[0], F[0], OD, OF, md)
        idx = build_index(db, t, ("cs",), row)
        gs = [(k, pt) for k, pt in groups_of(idx) if key_match(key, k)]
        mv = db.ov_int(kt).get("max_interpolation_dim", db.ov_int(primary).get("max_interpolation_dim"))
        res, st = try_groups(gs, {"M": ax[0], "K": ax[1]}, (("M",), ("K",), ("M", "K")),
                             mv if is_int(mv) else None, kernel=kt)
        if res:
            explain_interp(db, kt, res)
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
        last = st
    return miss(reason_of(last, "compute_scale_interpolation_failed"))


# ---------------------------------------------------------------- §12.8 elementwise

def bpattern(y, ins):
    if not y or not ins:
        return ()
    out = []
    for s in ins:
        tail = list(s[-len(y):]) if len(s) >= len(y) else list(s)
        tail = [None] * (len(y) - len(tail)) + tail
        rel = []
        for sj, yj in zip(tail, y):
            if sj is None:
                rel.append("missing")
            elif sj == yj:
                rel.append("same")
            elif sj == 1:
                rel.append("broadcast")
            else:
                rel.append("other")
        out.append((len(s), tuple(rel)))
    return tuple(out)


def ew_key(kt, y, ins, p):
    return [("kernel_type", kt), ("query_mode", "elementwise"), ("output_rank", len(y)), ("input_count", len(ins)),
            ("output_dtype", p), ("broadcast_pattern", bpattern(y, ins))]


def interp_elementwise(db, e, q, K=None, target=None):
    K = K or e.kernels()
    reason = None
    for kt in K:
        if target is None:
            o = q.out
            if isinstance(o, list):
                o = o[0] if o else None
            if not is_t(o) or len(o.shape) < 1:
                reason = "elementwise_output_unavailable"
                continue
            y = strip_batch(o.shape)
            p = prof(o.dtype) or ""
            ins = [strip_batch(s) for s, _ in tensor_inputs(q.args)]
        else:
            y, p, ins = target
        io = sum(numel(s) for s in ins) + numel(y)
        t = db.table(kt)
        if t is None:
            reason = "elementwise_csv_not_found"
            continue

        def row(r, t=t, kt=kt, p=p):
            IS = shapes(t, r, "Input Shapes")
            OS = shapes(t, r, "Output Shapes")
            OD = slist(t.cell(r, "Output Data Types"))
            if not OS:
                return None
            c = strip_batch(OS[0])
            if c == ():
                return None
            if point_latency(db, t, r) is None:
                return None
            qd = OD[0] if OD else ""
            if not qd or not p or qd != p:
                return None
            ri = [strip_batch(s) for s in IS]
            return {"io_numel": sum(numel(s) for s in ri) + numel(c)}, ew_key(kt, c, ri, p)
        idx = build_index(db, t, ("ew", p), row)
        key = ew_key(kt, y, ins, p)
        gs = [(k, pt) for k, pt in groups_of(idx) if key_match(key, k)]
        if not gs:
            xp.attempt("kernel", kt, "no_candidate_group")
            reason = "insufficient_filtered_candidates"
            continue
        res, st = try_groups(gs, {"io_numel": io}, (("io_numel",),), max_dim(db, kt))
        if res:
            explain_interp(db, kt, res)
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
        reason = reason_of(st, "candidate_group_failed")
    if len(K) > 1:
        return miss("elementwise_interpolation_failed")
    return miss(reason or "candidate_group_failed")


# ---------------------------------------------------------------- §12.9 attention

def attn_index(db, kt):
    t = db.table(kt)
    if t is None:
        return None, None
    avgc = "Runtime avg_seq_len" if t.has("Runtime avg_seq_len") else "avg_seq_len" if t.has("avg_seq_len") else None
    if avgc is None or not t.has("Input Shapes"):
        return None, None

    def row(r):
        a = intcell(t.cell(r, avgc))
        if a is None or a < 0:
            return None
        S = shapes(t, r, "Input Shapes")
        if not S:
            return None
        qs = S[0]
        if len(S) >= 2 and S[1] != ():
            chd = S[1][-1]
        else:
            if qs == ():
                raise CellFault(t, r, "Input Shapes", text(t.cell(r, "Input Shapes")))
            chd = qs[-1]
        c3 = norm3(qs, chd)
        if c3 is None:
            return None
        D = slist(t.cell(r, "Input Data Types"))
        if not D:
            return None
        if point_latency(db, t, r) is None:
            return None
        axes = {"q_tokens": c3[0], "seq": a, "heads": c3[1], "head_dim": c3[2]}
        if t.has("Runtime batch_size"):
            b = intcell(t.cell(r, "Runtime batch_size"))
            if b is not None:
                axes["batch"] = b
        elif len(qs) == 4 and qs[2] == 1:
            axes["batch"] = qs[0]
        key = [("kernel_type", kt), ("dtype", D[0])]
        if t.has("Runtime sparse_mode"):
            v = intcell(t.cell(r, "Runtime sparse_mode"))
            key.append(("sparse_mode", -1 if v is None else v))
        if t.has("Runtime num_key_value_heads"):
            v = intcell(t.cell(r, "Runtime num_key_value_heads"))
            key.append(("kv_heads", -1 if v is None else v))
        if t.has("Runtime input_layout") and strcell(t.cell(r, "Runtime input_layout")) is not None:
            key.append(("input_layout", strcell(t.cell(r, "Runtime input_layout"))))
        if t.has("Runtime quant_mode") and strcell(t.cell(r, "Runtime quant_mode")) is not None:
            key.append(("quant_mode", strcell(t.cell(r, "Runtime quant_mode"))))
        return axes, key
    return build_index(db, t, ("attn",), row), t


def qtok_match(a, b):
    a, b = int(a), int(b)
    return a == b or padded(a, b) or padded(b, a)


ATTN_AG = [c for n in (1, 2, 3) for c in itertools.combinations(("seq", "batch", "heads", "head_dim"), n)]


def attn_groups_run(db, kt, idx, t, axes, key, batch_val):
    """(result tuple or None, reason)."""
    kd = dict(key)
    if t.has("Runtime input_layout") and "input_layout" not in kd:
        return None, "attention_input_layout_unavailable"
    req = ["sparse_mode", "kv_heads"] + (["input_layout"] if "input_layout" in kd else []) + \
        (["quant_mode"] if "quant_mode" in kd and t.has("Runtime quant_mode") else [])
    gs = [(k, p) for k, p in groups_of(idx) if key_match(key, k, req)]
    if not gs:
        return None, "regime_key_unmatched"
    ov = db.ov_int(kt)
    tr = ov.get("axis_transform") or ov.get("shape_transform")
    sq = tr in ("sqrt", "sqrt_seq")
    last = None
    for _, pts in gs:
        tax = dict(axes)
        if any("batch" in p.axes for p in pts) and "batch" not in tax:
            if batch_val is not None:
                tax["batch"] = batch_val
            elif any("batch" not in p.axes for p in pts):
                pts = [p for p in pts if "batch" not in p.axes]
            elif len({p.axes["batch"] for p in pts}) == 1:
                tax["batch"] = pts[0].axes["batch"]
            else:
                last = ["batch_axis_unconstrained"]
                continue
        if sq:
            tax["seq"] = math.sqrt(tax["seq"])
            pts = [Point(dict(p.axes, seq=math.sqrt(p.axes["seq"])), p.lat, p.label, p.key, p.row) for p in pts]
        res = interpolate(pts, tax, ATTN_AG, max_dim(db, kt), {"q_tokens": qtok_match})
        if res[0] == "ok":
            return (res[0], res[1], res[2] + ("_sqrt" if sq else ""), res[3]), ""
        last = res[1]
    return None, reason_of(last, "attention_candidate_group_failed")


def interp_attention(db, e, q):
    reason = "attention_target_unavailable"
    for kt in e.kernels():
        idx, t = attn_index(db, kt)
        if idx is None:
            reason = "attention_index_unavailable"
            continue
        a = q.args
        if len(a) < 7 or not is_t(a[0]) or not is_t(a[6]):
            reason = "attention_target_unavailable"
            continue
        qt, s, k = a[0], a[6], a[1]
        hd = k.shape[-1] if is_t(k) and len(k.shape) >= 1 else 0
        q3 = norm3(qt.shape, hd)
        avg = avgseq(s)
        p = prof(qt.dtype)
        if q3 is None or avg is None or p is None:
            reason = "attention_target_unavailable"
            continue
        bval = qt.shape[0] if len(qt.shape) == 4 else numel(s.shape) if len(s.shape) >= 1 else None
        layout = "BNSD_NBSD" if len(qt.shape) == 4 else "TND"
        sparse = 0 if layout == "BNSD_NBSD" else 3
        if is_t(k) and len(k.shape) >= 2:
            if layout == "BNSD_NBSD" and len(k.shape) >= 4:
                kv = k.shape[1]
            else:
                kv = k.shape[-2]
        else:
            kv = -1
        quant = db.ov_int(kt).get("quant_mode")
        if quant is None:
            quant = e["quant_mode"]
        if quant is None and q.kwargs.get("quant_mode") is not None:
            quant = text_of(q.kwargs.get("quant_mode"))
        key = [("kernel_type", kt), ("dtype", p), ("sparse_mode", sparse), ("kv_heads", kv), ("input_layout", layout)]
        if quant is not None:
            key.append(("quant_mode", quant))
        axes = {"q_tokens": q3[0], "seq": avg, "heads": q3[1], "head_dim": q3[2]}
        res, reason = attn_groups_run(db, kt, idx, t, axes, key, bval)
        if res:
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
    return miss(reason)


def text_of(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def interp_attention_params(db, K, p, dt):
    """§12.11 step 2 for an attention spec: (result tuple, kernel) or (None, reason)."""
    reason = "attention_candidate_group_failed"
    for kt in K:
        if kt in RUNTIME_ATTN:
            import qo_tier2
            res, reason = qo_tier2.runtime_attention_interp(db, kt, p, dt)
            if res:
                return res, kt
            continue
        idx, t = attn_index(db, kt)
        if idx is None:
            reason = "attention_index_unavailable"
            continue
        q3 = p.get("q_shape_3d")
        if q3 is None or len(q3) < 3:
            continue
        axes = {"q_tokens": q3[0], "heads": q3[1], "head_dim": q3[2], "seq": p.get("avg_seq_len")}
        if p.get("batch_size") is not None:
            axes["batch"] = p["batch_size"]
        sp = p.get("sparse_mode")
        key = [("kernel_type", kt), ("dtype", dt)]
        if sp is not None:
            key.append(("sparse_mode", sp))
        if p.get("num_kv_heads") is not None:
            key.append(("kv_heads", p["num_kv_heads"]))
        lay = p.get("input_layout") or ("BNSD_NBSD" if sp == 0 else "TND" if sp == 3 else None)
        if lay is not None:
            key.append(("input_layout", lay))
        if p.get("quant_mode") is not None:
            key.append(("quant_mode", p["quant_mode"]))
        res, reason = attn_groups_run(db, kt, idx, t, axes, key, None)
        if res:
            return res, kt
    return None, reason


# ---------------------------------------------------------------- §12.10 moe_fused

def moe_topk(shape, d, tokens):
    if len(shape) >= 2 and str(d).upper() == "INT32" and numel(shape[:-1]) == tokens and shape[-1] > 0:
        return shape[-1]
    return None


def interp_moe(db, e, q):
    kt = e["kernel_type"]
    if not truthy(kt):
        return miss("")
    if db.cfg.ep is None:
        return miss("ep_size_not_configured")
    t = db.table(kt)
    if t is None:
        return miss("csv_not_found")
    X = project_dfc(q)
    if X is None:
        return miss("moe_fused_target_unextractable")
    sig = tuple(DT_PROF.get(d, "torch." + d) for _, d in X)
    r_, H = X[0][0]
    topk = moe_topk(X[3][0], sig[3], r_)
    if topk is None:
        return miss("moe_fused_target_unextractable")
    key = [("kernel_type", kt), ("activation_dtype", dkey(kt, sig[0])), ("activation_format", "ND"),
           ("input_dtype_signature", sig), ("gmm1_weight_shape", X[1][0]), ("gmm2_weight_shape", X[2][0]),
           ("hidden", H), ("ep_size", db.cfg.ep), ("topk", topk)]
    if not t.has("EP Size"):
        idx = []
    else:
        def row(r):
            S = shapes(t, r, "Input Shapes")
            D = slist(t.cell(r, "Input Data Types"))
            F = slist(t.cell(r, "Input Formats"))
            if not (len(S) == 7 and len(D) == 7 and len(F) == 7):
                return None
            if len(S[1]) < 3 or len(S[2]) < 3:
                return None
            x = nz(S[0]) if F[0] == "FRACTAL_NZ" else S[0]
            if len(x) < 2:
                return None
            tokens, hh = numel(x[:-1]), x[-1]
            if point_latency(db, t, r) is None:
                return None
            ep = intcell(t.cell(r, "EP Size"))
            if ep is None or ep <= 0:
                return None
            tk = moe_topk(S[3], D[3], tokens)
            if tk is None:
                return None
            return {"tokens": tokens}, [("kernel_type", kt), ("activation_dtype", dkey(kt, D[0])),
                                        ("activation_format", F[0]), ("input_dtype_signature", tuple(D)),
                                        ("gmm1_weight_shape", S[1]), ("gmm2_weight_shape", S[2]), ("hidden", hh),
                                        ("topk", tk), ("ep_size", ep)]
        idx = build_index(db, t, ("moe",), row)
    gs = [(k, p) for k, p in groups_of(idx) if key_match(key, k)]
    res, st = try_groups(gs, {"tokens": r_}, (("tokens",),), max_dim(db, kt))
    if not res:
        return miss(reason_of(st, "moe_fused_interpolation_failed"))
    if db.q:
        return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
    return db.moe_finish(e, q, res[1], kt, res[2], res[3], "INTERPOLATED")


# ---------------------------------------------------------------- §12.11 decomposed composites

def interp_composite(db, e, q):
    if q.op not in DECOMPOSERS:
        return miss("wrapper_interpolation_failed")
    kind, first = DECOMPOSERS[q.op]
    specs = decompose(db, kind, first, e, q)
    if not specs:
        return miss("wrapper_interpolation_failed")
    total = 0.0
    kernels = []
    all_exact = True
    for s in specs:
        K = [s["kernel"]] + [x for x in s["alts"] if x != s["kernel"]]
        c, _ = exact_spec(db, s)
        if c is not None:
            total += c[0]
            kernels.append(c[1])
            continue
        all_exact = False
        got = None
        if s["mode"] == "attention":
            res, kt = interp_attention_params(db, K, s["params"], s["dtype"])
            if res:
                got = (res[1], kt)
        elif s["mode"] == "scatter_cache_write":
            import qo_tier2
            dts = s["dtypes"] or [s["dtype"]] * 3
            res, kt = qo_tier2.scatter_interp(db, K, (s["shapes"][0], s["shapes"][1], s["shapes"][2], dts),
                                              "scatter_cache_write")
            if res:
                got = (res[1], kt)
        elif s["shapes"]:
            got = interp_spec_compute(db, s, K)
        if got is None:
            return miss("composite_sub_kernel_failed")
        total += got[0]
        kernels.append(got[1])
    if all_exact:
        return Result(True, total, "MEASURED", 0.5, "composite_measured", ",".join(kernels), None, None)
    return Result(True, total, "INTERPOLATED", 0.5, "interpolated_composite", ",".join(kernels), None, None)


def interp_spec_compute(db, s, K):
    shp = [tuple(x) for x in s["shapes"]]
    n = s["count"] or len(shp)
    policy = K[0]
    for kt in K:
        dk = dkey(kt, s["dtype"])
        if kt in MATMULP:
            X = trunc(shp, n)
            if len(X) < 2:
                continue
            x = mnk(kt, X)
            if x is None:
                continue
            key = [("kernel_type", kt), ("input_count", len(X)), ("input_dtypes", tuple(dk for _ in X)),
                   ("batch_dims", x[3])]
            res = matmul_points_run(db, kt, {"M": x[0], "K": x[1], "N": x[2]}, key, n, False, policy)
        else:
            X = [strip_batch(x) for x in trunc(shp, n)]
            axis = generic_axis(db, kt, policy)
            if not X or X[0] == () or axis != "axis_0":
                continue
            ax = generic_axes(axis, X, None)
            key = [("kernel_type", kt), ("input_count", len(X)), ("input_dtypes", tuple(dk for _ in X)), ax[1]]
            res, _ = generic_run(db, kt, ax[0], key, n, axis, policy)
        if res:
            return res[1], kt
    return None


# ---------------------------------------------------------------- §12.1 dispatch

def wrapper(db, e, q, exact_result):
    r = dispatch(db, e, q)
    if not r.hit and not r.reason:
        r.reason = "wrapper_interpolation_failed"
    return r


def dispatch(db, e, q):
    if e is None:
        return miss("wrapper_unmapped")
    if truthy(e["zero_cost"]) or truthy(e["accepted_miss"]):
        return miss("wrapper_not_applicable")
    if truthy(e["composite"]):
        xp.unsupported("interpolated composite")
        return interp_composite(db, e, q)
    if e["category"] == "communication":
        if not db.q and len(q.args) < 2:
            return miss("insufficient_args")
        return miss("wrapper_communication_owned_by_base")
    qm = e["query_mode"]
    if qm in ("moe_fused", "attention_special", "scatter_nd_update_mla"):
        xp.unsupported("interpolated " + qm)
    if qm == "moe_fused":
        return interp_moe(db, e, q)
    if qm == "attention_special":
        return interp_attention(db, e, q)
    if qm == "attention_lightning_indexer":
        return miss("runtime_attention_leaf_required")
    if qm == "scatter_nd_update_mla":
        import qo_tier2
        a = q.args
        if len(a) < 3 or not all(is_t(x) for x in a[:3]) or any(prof(x.dtype) is None for x in a[:3]):
            return miss("scatter_nd_update_interpolation_failed")
        upd, cache, index = a[0], a[1], a[2]
        res, kt = qo_tier2.scatter_interp(db, e.kernels(), (cache.shape, index.shape, upd.shape,
                                                             [prof(cache.dtype), prof(index.dtype), prof(upd.dtype)]),
                                          "scatter_nd_update")
        if res:
            return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
        return miss(kt)
    if qm == "elementwise":
        return interp_elementwise(db, e, q)
    cs = e["compute_subcategory"]
    scale = cs is not None and text_of(cs) == "compute_scale"
    quant = cs == "quantized_matmul"
    if cs is not None and not quant and not scale:
        return miss("compute_subcategory_unknown")
    kt = e["kernel_type"]
    if not quant and not scale and not truthy(kt):
        return miss("compute_kernel_type_missing")
    K = e.kernels()
    X = tensor_inputs(q.args)
    tpdiv = None
    if not db.q:
        X = trunc(X, e["tc_input_count"])
        K = db.compute_kernels_rank_only(e, X)
        rule = e["tp_linear_projection"]
        X2, why = db.tp_project(e, X)
        if why:
            return miss(why)
        if quant and X2 is not X and isinstance(rule, dict) and rule.get("shard_axis") == "output":
            tpdiv = db.cfg.tp
        X = X2
    if scale:
        return interp_compute_scale(db, e, q, K, X if not db.q else None)
    if quant or kt in MATMULP:
        return interp_matmul(db, e, q, quant, K, X, tpdiv)
    return interp_generic(db, e, q, K, X)
