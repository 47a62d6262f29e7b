"""Kernel-level queries (§15): a kernel type and its inputs, no operator mapping."""
from qo_base import (ConvFail, QueryError, canon_dtype, hit, is_int, miss, norm3, nz, prof,
                     shapes_text, strip_batch)
from qo_exact import DB
import qo_explain as xp
import qo_interp

COMM_FIELDS = ("message_bytes", "num_devices", "topology_tier", "method")
ATTN_FIELDS = ("avg_seq_len", "sparse_mode", "num_kv_heads", "input_layout", "batch_size")


def tensors(v, what):
    if v is None:
        return []
    if not isinstance(v, list):
        raise QueryError("bad_query", f"{what} is not a list")
    out = []
    for x in v:
        if not isinstance(x, dict) or not isinstance(x.get("shape"), list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in x["shape"]):
            raise QueryError("bad_query", f"{what}: bad tensor")
        dt = x.get("dtype")
        if not isinstance(dt, str) or not dt:
            raise QueryError("bad_query", f"{what}: dtype missing")
        c = canon_dtype(dt)
        d = c if c is not None else "@" + dt
        fmt = x.get("format", "ND")
        if not isinstance(fmt, str):
            raise QueryError("bad_query", f"{what}: bad format")
        s = tuple(x["shape"])
        if fmt == "FRACTAL_NZ":
            s = nz(s)
        out.append((s, d))
    return out


def kernel_query(db: DB, obj):
    xp.path("kernel")
    kt = obj.get("kernel")
    if not isinstance(kt, str) or not kt or "/" in kt or "\0" in kt or kt.startswith("."):
        raise QueryError("bad_query", "bad kernel name")
    X = tensors(obj.get("inputs"), "inputs")
    O = tensors(obj.get("outputs"), "outputs")
    alts = obj.get("alternates") or []
    if not isinstance(alts, list) or not all(isinstance(a, str) for a in alts):
        raise QueryError("bad_query", "alternates is not a list of strings")
    K = [kt] + [a for i, a in enumerate(alts) if a != kt and a not in alts[:i]]
    match = obj.get("match", "shape")
    if match not in ("shape", "elementwise"):
        raise QueryError("bad_query", "match must be shape or elementwise")
    interp = obj.get("interpolate", db.cfg.interp)
    if not isinstance(interp, bool):
        raise QueryError("bad_query", "interpolate is not a boolean")
    comm, attn = obj.get("comm"), obj.get("attention")
    if comm is not None:
        if not isinstance(comm, dict) or not is_int(comm.get("message_bytes")) or not is_int(comm.get("num_devices")):
            raise QueryError("bad_query", "comm needs message_bytes and num_devices")
        meth = comm.get("method", "alpha_beta")
        if meth not in ("alpha_beta", "bracket_linear"):
            raise QueryError("bad_query", "comm method")
        xp.kernels([kt])
        r = db.comm_csv(kt, comm["message_bytes"], comm["num_devices"], comm.get("topology_tier"), meth)
        if db.last_comm is not None:
            xp.add("comm", db.last_comm)
        if isinstance(r, str):
            return miss(r)
        lat, ip = r
        return hit(lat, "INTERPOLATED" if ip else "MEASURED", 0.8 if ip else 0.9, "comm", kt)
    if attn is not None:
        if not isinstance(attn, dict) or not is_int(attn.get("avg_seq_len")) or not X:
            raise QueryError("bad_query", "attention needs avg_seq_len and an input")
        q3 = norm3(X[0][0], 0)
        p = prof(X[0][1])
        if q3 is None:
            return miss("q_shape_normalize_failed")
        if p is None:
            return miss("dtype_unmapped")
        xp.kernels(K)
        c, reason = db.attn_scan(K, q3, attn["avg_seq_len"], p, attn.get("sparse_mode"),
                                 attn.get("num_kv_heads"), attn.get("input_layout"))
        if c is not None:
            db.explain_row(c)
            return hit(c[0], "MEASURED", 0.9, "attention", c[1])
        if not interp:
            return miss(reason)
        xp.unsupported("kernel-level attention interpolation")
        params = {"q_shape_3d": q3, "avg_seq_len": attn["avg_seq_len"], "sparse_mode": attn.get("sparse_mode"),
                  "num_kv_heads": attn.get("num_kv_heads"), "input_layout": attn.get("input_layout"),
                  "batch_size": attn.get("batch_size")}
        res, kk = qo_interp.interp_attention_params(db, K, params, p)
        if res:
            return hit(res[1], "INTERPOLATED", res[3], res[2], kk)
        return miss(kk)
    if match == "elementwise":
        if not O:
            raise QueryError("bad_query", "match elementwise needs outputs")
        y, p = strip_batch(O[0][0]), prof(O[0][1])
        if db.q and len(K) > 1:
            xp.unsupported("kernel-level elementwise alternates in quirks mode")
        r = db.ew_scan(kt if db.q else K, y, p)
        if r.hit or not interp:
            return r
        xp.stage("interpolation")
        return qo_interp.interp_elementwise(db, None, None, K, (y, p or "", [strip_batch(s) for s, _ in X]))

    irs = {}

    def chk(k, t, r, lat):
        m = db.match(X, t, r, k, len(X), normalise=False)
        if m is None:
            return None
        irs[(k, r)] = db.last_irs
        return (lat, 1.0, db.dist(*m), m[0])
    xp.kernels(K)
    c, reason = db.scan(K, chk, "nearest")
    if c is not None:
        db.explain_row(c, irs.get((c[1], c[5])))
        return hit(c[0], "MEASURED", 1.0, c[4], c[1])
    if not interp:
        return miss(reason or "shape_mismatch")
    xp.stage("interpolation")
    return kernel_interp(db, K, X, O)


def request_of(obj):
    """What a kernel-level MISS carries in default mode (docs/QUERY.md): the kernel and its tensors as
    the table's row needs them: the shape as given, the profiler dtype, the format (default ND)."""
    def tens(v):
        out = []
        for x in v or []:
            c = canon_dtype(x["dtype"])
            p = prof(c if c is not None else "@" + x["dtype"])
            fmt = x.get("format")
            out.append({"shape": list(x["shape"]), "dtype": p if p is not None else "",
                        "format": fmt if isinstance(fmt, str) else "ND"})
        return out
    r = {"kernel": obj["kernel"], "inputs": tens(obj.get("inputs")), "outputs": tens(obj.get("outputs"))}
    # the runtime (attention) or message (comm) fields the row's columns need: integers and strings
    for name in ("attention", "comm"):
        d = obj.get(name)
        if isinstance(d, dict):
            r[name] = {k: v for k, v in d.items() if isinstance(k, str)
                       and ((isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, str))}
    return r


def kernel_interp(db, K, X, O):
    n = len(X)
    ps = [prof(d) for _, d in X]
    reason = "compute_target_unavailable"
    for kt in K:
        if any(p is None for p in ps) or not X:
            continue
        if kt in qo_interp.MATMULP:
            x = qo_interp.mnk(kt, [s for s, _ in X])
            if x is None:
                continue
            key = [("kernel_type", kt), ("input_count", n), ("input_dtypes", tuple(dkey_(kt, p) for p in ps)),
                   ("batch_dims", x[3])]
            res = qo_interp.matmul_points_run(db, kt, {"M": x[0], "K": x[1], "N": x[2]}, key, n, False)
            if res:
                qo_interp.explain_interp(db, kt, res)
                return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
            reason = "compute_multidim_interpolation_failed"
        else:
            s = [strip_batch(sh) for sh, _ in X]
            if s[0] == ():
                continue
            axis = qo_interp.generic_axis(db, kt, K[0])
            ax = qo_interp.generic_axes(axis, s, [o for o, _ in O] if O else None)
            if ax is None:
                continue
            key = [("kernel_type", kt), ("input_count", n), ("input_dtypes", tuple(dkey_(kt, p) for p in ps)), ax[1]]
            res, reason = qo_interp.generic_run(db, kt, ax[0], key, n, axis, kt)
            if res:
                qo_interp.explain_interp(db, kt, res)
                return hit(res[1], "INTERPOLATED", res[3], res[2], kt)
    return miss(reason)


def dkey_(kt, p):
    from qo_base import dkey
    return dkey(kt, p)


def oneshot_query(one):
    """The JSON query line of the one-shot CLI form (§15.3)."""
    if "kernel" not in one or "inputs" not in one or "dtypes" not in one:
        raise QueryError("usage", "--kernel needs --inputs and --dtypes")

    def tens(sh, dts, fmts):
        try:
            S = shapes_text(sh)
        except ConvFail:
            raise QueryError("usage", "bad shapes")
        D = [d.strip() for d in dts.split(";")]
        F = [f.strip() for f in fmts.split(";")] if fmts else []
        if len(D) != len(S) or (F and len(F) != len(S)):
            raise QueryError("usage", "shape and dtype counts differ")
        out = []
        for i, s in enumerate(S):
            t = {"shape": list(s), "dtype": D[i]}
            if F:
                t["format"] = F[i]
            out.append(t)
        return out
    obj = {"id": "kernel", "kernel": one["kernel"], "inputs": tens(one["inputs"], one["dtypes"], one.get("formats"))}
    if "outputs" in one:
        obj["outputs"] = tens(one["outputs"], one.get("output-dtypes", ""), None)
    if "match" in one:
        obj["match"] = one["match"]
    for pv in one.get("param", []):
        name, _, v = pv.partition("=")
        val = int(v) if v.lstrip("-").isdigit() else v
        if name in COMM_FIELDS:
            obj.setdefault("comm", {})[name] = val
        elif name in ATTN_FIELDS:
            obj.setdefault("attention", {})[name] = val
        else:
            raise QueryError("usage", f"unknown --param {name}")
    return obj
