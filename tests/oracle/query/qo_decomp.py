"""Decomposers (§10): dense MLA, MLAPO (visible regime), and their sub-kernel queries."""
import qo_explain as xp
import qo_tier2
from qo_base import (NA, CellFault, QueryError, Result, Unsupported, avgseq, hit, is_int, is_t,
                     miss, prof, REVERSE, shapes, slist, truthy)


def spec(kernel, shapes_, dtype, mode="compute", alts=(), dtypes=None, params=None, count=None,
         is_attention=False):
    return {"kernel": kernel, "alts": list(alts), "shapes": shapes_, "dtype": dtype, "dtypes": dtypes,
            "mode": mode, "params": params, "count": count, "is_attention": is_attention}


def shp(v, what):
    """Shape of a value the reference reads as a tensor: anything else raises there."""
    if not is_t(v):
        raise QueryError("bad_args", f"{what} is not a tensor")
    return v.shape


def phase_of(kwargs, expected):
    ph = kwargs.get("phase")
    if ph in ("prefill", "decode"):
        return ph
    v = kwargs.get("is_decode_values")
    if v is None:
        return None
    if not isinstance(v, list) or not v or len(v) != expected or not all(isinstance(x, bool) for x in v):
        return "invalid"
    if all(v):
        return "decode"
    if not any(v):
        return "prefill"
    return "mixed"


def decompose(db, kind, first, e, q):
    """Sub-kernel specs, or None ("nothing")."""
    if kind == "mla":
        return mla(db, first, e, q)
    if kind == "mlapo":
        return mlapo(db, first, e, q)
    if kind == "sparse_mla":
        return qo_tier2.sparse_mla(db, first, e, q, spec, shp, phase_of)
    return qo_tier2.dsa_indexer(db, e, q, spec, phase_of)


def mla(db, first, e, q):
    a = q.args
    if len(a) < 10:
        return None
    qs = shp(a[0], "q")
    dt = prof(a[0].dtype)
    if dt is None:
        return None
    seq = a[4]
    if not is_t(seq):
        return None
    if not seq.shape:
        raise QueryError("bad_args", "seq_lens is a 0-d tensor")
    bsz = seq.shape[0]
    if len(qs) < 3:
        raise QueryError("bad_args", "q has fewer than 3 dims")
    N, T = qs[1], qs[0]
    hd = shp(a[1], "kv cache")[-1]
    avg = avgseq(seq)
    if avg is None:
        avg = 0
    ph = phase_of(q.kwargs, bsz)
    if ph in ("mixed", "invalid"):
        return None
    ql = a[5]
    dec = ql is None or not is_t(ql) or ql.values is None or (max(ql.values) <= 1 if ql.values else True)
    alts = ["BatchMatMulNd"] if first == "BatchMatMulV2" else []
    cnt = 2 if first == "QuantBatchMatmulV3" else None
    if dec:
        if a[6] is None or a[7] is None:
            return None
        wk, wv = shp(a[6], "W_UK_T"), shp(a[7], "W_UV")
        nope, L, v = wk[1], wk[2], wv[2]
        return [spec(first, [(N, T, nope), (N, nope, L)], dt, alts=alts, count=cnt),
                spec("FusedInferAttentionScore", None, dt, "attention",
                     params={"q_shape_3d": (bsz, N, L), "avg_seq_len": avg, "sparse_mode": 0, "num_kv_heads": 1},
                     is_attention=True),
                spec("TransposeBatchMatMul", [(N, T, L), (N, L, v)], dt)]
    if a[8] is None:
        return None
    kb = shp(a[8], "kv_b_proj")
    L = kb[0]
    rope = hd - L
    nope = qs[2] - rope
    return [spec("MatMulV2", [(T, L), kb], dt, count=2),
            spec("FusedInferAttentionScore", None, dt, "attention",
                 params={"q_shape_3d": (T, N, nope), "avg_seq_len": avg, "sparse_mode": 3, "num_kv_heads": N},
                 is_attention=True)]


def mlapo(db, first, e, q):
    a = q.args
    quant = first == "QuantBatchMatmulV3"
    O = e["decomposer_options"]
    if not isinstance(O, dict):
        O = {}
    if len(a) < (20 if quant else 14):
        return None
    h, q_a, q_b, kv_a = a[0], a[3], a[5], a[6]
    if h is None or q_a is None or q_b is None or kv_a is None:
        return None
    hs = shp(h, "hidden")
    dt = prof(h.dtype)
    if dt is None:
        return None
    T, H = hs[0], hs[1]
    qr = shp(q_a, "q_a")[0]
    kvp = shp(kv_a, "kv_a")[0]
    fused = qr + kvp
    vr = O.get("visible_kernel_regime")
    if isinstance(vr, dict) and truthy(vr.get("requires_sequence_parallel")) and not db.cfg.sp:
        if quant:
            return qo_tier2.mlapo_opaque(db, e, q, spec, T, H, dt, O)
        return None
    tp = db.cfg.tp
    P = T
    if db.cfg.sp and O.get("projection_token_partition") == "tp":
        if not (is_int(tp) and tp > 1 and T % tp == 0):
            return None
        P = T // tp
    md = "INT8" if quant else dt
    if quant and is_int(a[8]) and is_int(a[9]):
        heads = a[8]
        if db.cfg.sp and truthy(O.get("reconstruct_q_heads_by_tp")):
            if not (is_int(tp) and tp > 1):
                return None
            heads *= tp
        qbs = (heads * a[9], qr)
    else:
        qbs = shp(q_b, "q_b")
    if not is_t(a[4]) or not is_t(a[7]):
        return None
    out = []
    if quant:
        out.append(spec("AscendQuantV2", [(P, H), (H,), (H,)], dt, alts=["AscendQuantV2Aicore"], count=3))
    out.append(spec(first, [(P, H), (fused, H)], md, dtypes=[md, md], count=2))
    out.append(spec("RmsNorm", [(P, qr), a[4].shape], dt, count=2))
    if quant:
        out.append(spec("AscendQuantV2", [(P, qr), (qr,), (qr,)], dt, alts=["AscendQuantV2Aicore"], count=3))
    out.append(spec(first, [(P, qr), qbs], md, dtypes=[md, md], count=2))
    kq = O.get("kv_cache_query")
    mode = kq.get("mode") if isinstance(kq, dict) else None
    if mode == "pool_dim0_agnostic":
        L = a[7].shape[0]
        rope = kvp - L
        bs = kq.get("block_size")
        if rope <= 0 or not (is_int(bs) and bs > 0):
            return None
        out.append(spec("KvRmsNormRopeCache", None, dt, "cache_postprocess",
                        params={"tokens": P, "kv_proj_dim": kvp, "kv_lora_rank": L, "rope_dim": rope,
                                "block_size": bs}))
    elif mode is None:
        out.append(spec("KvRmsNormRopeCache", [(P, 1, 1, kvp)], dt))
    else:
        return None
    return out


def cache_postprocess(db, K, p, dt):
    keys = ("tokens", "kv_proj_dim", "kv_lora_rank", "rope_dim", "block_size")
    if any(p.get(k) is None for k in keys):
        return None, "semantic_context_missing:target:cache_postprocess"
    if any(p[k] <= 0 for k in keys):
        return None, "semantic_key_mismatch:cache_postprocess"
    P, kvp, L, rope, bs = (p[k] for k in keys)
    prefix = [(P, 1, 1, kvp), (L,), (P, 1, 1, rope), (P, 1, 1, rope), (P,)]
    exp_dt = [dt, dt, dt, dt, "INT64", dt, dt]

    def chk(kt, t, r, lat):
        S = shapes(t, r, "Input Shapes")
        D = slist(t.cell(r, "Input Data Types"))
        F = slist(t.cell(r, "Input Formats"))
        if len(S) < 7 or len(D) < 7 or len(F) < 7:
            return None
        if S[0:5] != prefix or len(S[5]) != 4 or len(S[6]) != 4:
            return None
        if S[5][1:] != (bs, 1, rope) or S[6][1:] != (bs, 1, L):
            return None
        if D[0:7] != exp_dt or any(f != "ND" for f in F[0:7]):
            return None
        return (lat, 1.0, 0, "cache_pool_dim0_agnostic")
    c, reason = db.scan(K, chk, "nearest")
    if c is None:
        return None, reason or "semantic_key_mismatch:cache_postprocess"
    return c, ""


def spec_dtypes(s):
    """Per-input framework dtypes of a compute spec, or None when one does not convert."""
    n = len(s["shapes"])
    ds = s["dtypes"] if s["dtypes"] is not None else [s["dtype"]] * n
    out = []
    for d in ds:
        if d not in REVERSE:
            return None
        out.append(REVERSE[d])
    return out


def exact_spec(db, s):
    """One sub-kernel query (§10.2): (candidate, reason)."""
    K = [s["kernel"]] + [x for x in s["alts"] if x != s["kernel"]]
    m = s["mode"]
    if m == "attention":
        p = s["params"]
        req = p.get("required_context_fields")
        if req:
            none = sorted(f for f in req if p.get(f) is None)
            if none:
                return None, "semantic_context_missing:target:" + ",".join(none)
        return db.attn_scan(K, p["q_shape_3d"], p["avg_seq_len"], s["dtype"], p.get("sparse_mode"),
                            p.get("num_kv_heads"), p.get("input_layout"), p if req else None)
    if m == "cache_postprocess":
        return cache_postprocess(db, K, s["params"], s["dtype"])
    if m == "scatter_cache_write":
        return qo_tier2.scatter_cache_write(db, K, s["params"], s["dtype"])
    if m == "mlapo_preprocess":
        return qo_tier2.mlapo_preprocess(db, K, s["params"], s["dtype"])
    if m != "compute":
        return None, "unknown_query_mode"
    dts = spec_dtypes(s)
    if dts is None:
        return None, "dtype_unmapped"
    X = list(zip([tuple(x) for x in s["shapes"]], dts))
    return db.find_compute(K, X, s["count"], True)


def run_decomposer(db, kind, first, e, q):
    xp.path("decomposer")
    specs = decompose(db, kind, first, e, q)
    if not specs:
        O = e["decomposer_options"]
        vr = O.get("visible_kernel_regime") if isinstance(O, dict) else None
        if isinstance(vr, dict) and truthy(vr.get("requires_sequence_parallel")) and not db.cfg.sp:
            return miss("structural_mismatch:mlapo_quant:opaque_mla_preprocess:"
                        "visible_kernel_regime_requires_sequence_parallel")
        return miss("decompose_failed")
    total = 0.0
    subs, kernels, missed = [], [], []
    interp = False
    xp.kernels([s["kernel"] for s in specs])
    xsub = []
    for s in specs:
        c, reason = exact_spec(db, s)
        if xp.on():
            o = {"kernel": c[1] if c else s["kernel"], "latency_us": float(c[0]) if c else None,
                 "source": "MEASURED" if c else "MISS"}
            if c is None:
                o["explain"] = {"miss": {"reason": reason or ""}}
            else:
                db.explain_row(c, db.last_input_rules if s["mode"] == "compute" else None)
            xsub.append(o)
            if c is None and (s["mode"] == "attention" or s["is_attention"]):
                xp.add("sub_kernels", xsub)
        if c is None:
            if s["mode"] == "attention":
                return miss(f"attention_sub_kernel_miss:{s['kernel']}:{reason or 'semantic_key_mismatch'};"
                            f"semantic_key={s['params']!r};dtype={s['dtype']}")
            if s["is_attention"]:
                return miss(f"attention_sub_kernel_miss:{s['kernel']}:{reason or 'shape_mismatch'};"
                            f"shapes={s['shapes']!r};dtype={[s['dtype']]!r}")
            missed.append(s["kernel"])
            continue
        total += c[0]
        subs.append([c[1], round(c[0], 2)])
        kernels.append(c[1])
        interp = interp or (len(c) > 6 and c[6] is True)
    if xsub:
        xp.add("sub_kernels", xsub)
    if not missed:
        return Result(True, total, "INTERPOLATED" if interp else "MEASURED", 0.75 if interp else 0.8, None,
                      ",".join(kernels), None, subs)
    reason = "sub_kernel_miss:" + ",".join(missed)
    if truthy(e["require_all_sub_kernels"]) or not subs:
        return miss(reason)
    r = Result(True, total, "PARTIAL", len(subs) / len(specs), None, None, None, subs)
    r.reason = reason
    return r
