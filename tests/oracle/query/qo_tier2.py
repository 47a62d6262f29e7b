"""Tier 2 decomposers of the query oracle: sparse MLA (§10.6), the DSA indexer (§10.7), the
opaque mlapo_quant kernel (§10.8), and the runtime-vector attention / scatter-cache checks
(§10.9). Written from docs/QUERY-RULES.md only; no reference answers exist for these in the
development set, so they are readings of the spec, not checked answers."""
import math

from qo_base import (NA, CellFault, ConvFail, MISSING, QueryError, avgseq, is_int, is_t, numel,
                     prof, pyint, shapes, slist, strcell, text, truthy)

SPARSE_COLS = {"sparse_mode": "Runtime sparse_mode", "num_kv_heads": "Runtime num_key_value_heads",
               "input_layout": "Runtime input_layout", "phase": "Runtime phase", "topk": "Runtime topk",
               "block_size": "Runtime block_size"}


def ivals(t):
    if not is_t(t) or t.values is None:
        return None
    return [int(v) for v in t.values]


def evensplit(n, b):
    if n <= 0 or b <= 0 or n < b:
        return None
    q, r = divmod(n, b)
    out, acc = [], 0
    for i in range(b):
        acc += q + 1 if i < r else q
        out.append(acc)
    return out


def rankzero(seq, G, Lq, ql, strict=False):
    s = ivals(seq)
    if not s:
        return None
    qv = ivals(ql) if is_t(ql) else None
    if not (qv is not None and len(qv) == len(s) and all(x >= 0 for x in qv) and sum(qv) == G):
        if strict and len(s) > 1:
            return None
        if sum(s) == G:
            qv = s
        else:
            q, r = divmod(G, len(s))
            qv = [q + 1 if i < r else q for i in range(len(s))]
    gs = lt = 0
    cum, kvl = [], []
    for sv, qq in zip(s, qv):
        ge = gs + qq
        le = min(ge, Lq)
        c = max(0, le - gs)
        lt += c
        cum.append(lt)
        kvl.append(sv - (ge - le) if c > 0 else 0)
        gs = ge
    if not cum or cum[-1] != Lq:
        return None
    return cum, kvl


def sparse_params(wt, wh, hd, seq, avg, topk, bs, sb, vec):
    b = numel(seq.shape)
    kv = vec[1] if vec else ivals(seq)
    ql = vec[0] if vec else evensplit(wt, b)
    ravg = (sum(kv) // len(kv) if kv else None) if vec else avg
    vb = [-(-k // bs) for k in kv] if kv is not None and is_int(bs) and bs > 0 else None
    p = {"q_shape_3d": (wt, wh, hd), "avg_seq_len": ravg, "sparse_mode": 3, "num_kv_heads": 1,
         "num_heads": wh, "input_layout": "TND", "cache_layout": "PA_BSND", "kv_cache_mode": "paged",
         "topk": topk, "block_size": bs, "batch_size": b, "actual_seq_lengths_values": ql,
         "actual_seq_lengths_kv_values": kv, "block_table_valid_blocks": vb}
    req = ["avg_seq_len", "sparse_mode", "num_kv_heads", "num_heads", "input_layout", "cache_layout",
           "kv_cache_mode", "topk", "block_size", "actual_seq_lengths_values", "actual_seq_lengths_kv_values",
           "block_table_valid_blocks"]
    if sb:
        p["sparse_block_size"] = 1
        p["sparse_indices_pattern"] = "uniform"
        p["sparse_indices_valid_count"] = min(topk, max(kv)) if kv and is_int(topk) and topk > 0 else None
        req += ["sparse_block_size", "sparse_indices_pattern"]
        if p["sparse_indices_valid_count"] is not None:
            req.append("sparse_indices_valid_count")
    p["required_context_fields"] = req
    return p


def sparse_mla(db, first, e, q, spec, shp, phase_of):
    a = q.args
    if len(a) < 10:
        return None
    qs = shp(a[0], "q")
    dt = prof(a[0].dtype)
    if dt is None or not is_t(a[4]):
        return None
    seq = a[4]
    if not seq.shape:
        raise QueryError("bad_args", "seq_lens is a 0-d tensor")
    if len(qs) < 3:
        raise QueryError("bad_args", "q has fewer than 3 dims")
    bsz, N, T = seq.shape[0], qs[1], qs[0]
    cache = shp(a[1], "kv cache")
    avg = avgseq(seq) or 0
    ph = phase_of(q.kwargs, bsz)
    if ph in ("mixed", "invalid"):
        return None
    if ph is None:
        ph = "prefill" if avg != 0 and T >= avg else "decode"
    O = e["decomposer_options"] if isinstance(e["decomposer_options"], dict) else {}
    cp = O.get("dsa_cp_layout") if isinstance(O.get("dsa_cp_layout"), dict) else {}
    G = truthy(cp.get("attention_heads_already_global"))
    absorb = len(a) > 7 and is_t(a[6]) and is_t(a[7])
    ql = a[5]
    dec = ql is None or not is_t(ql) or ql.values is None or (max(ql.values) <= 1 if ql.values else True)
    if ph == "prefill" and dec:
        return None
    if len(a) > 10 and is_int(a[10]):
        topk = a[10]
    elif len(a) > 11 and is_t(a[11]) and len(a[11].shape) >= 1:
        topk = a[11].shape[-1]
    else:
        topk = None
    if len(cache) < 2:
        raise QueryError("bad_args", "kv cache has fewer than 2 dims")
    bs = int(cache[-2])
    tp, sp = db.cfg.tp, db.cfg.sp
    alts = ["BatchMatMulNd"] if first == "BatchMatMulV2" else []
    cnt = 2 if first == "QuantBatchMatmulV3" else None
    if dec or absorb:
        if a[6] is None or a[7] is None:
            return None
        wk, wv = shp(a[6], "W_UK_T"), shp(a[7], "W_UV")
        nope, L, v = wk[1], wk[2], wv[2]
        wt, wh, vec = T, N, None
        if ph == "prefill" and sp and is_int(tp) and tp > 1:
            wt = -(-T // tp)
            wh = N if G else N * tp
            vec = rankzero(seq, T, wt, a[5] if is_t(a[5]) else None)
        out = [spec(first, [(wh, wt, nope), (wh, nope, L)], dt, alts=alts, count=cnt),
               spec("SparseFlashAttention", None, dt, "attention",
                    params=sparse_params(wt, wh, L, seq, avg, topk, bs, True, vec), is_attention=True),
               spec("TransposeBatchMatMul", [(wh, wt, L), (wh, L, v)], dt)]
        tail = O.get("prefill_tail_transpose")
        if ph == "prefill" and truthy(tail) and (
                not (isinstance(tail, dict) and truthy(tail.get("requires_sequence_parallel"))) or sp):
            tk = tail.get("kernel_type") if isinstance(tail, dict) else None
            if not (is_int(tp) and tp > 1 and isinstance(tk, str)):
                return None
            w = N * v
            if G and cp.get("tail_width_partition") == "tp":
                if w % tp:
                    return None
                w //= tp
            out.append(spec(tk, [(wt, tp, w), (3,)], dt, dtypes=[dt, "INT64"], count=2))
        return out
    if a[8] is None:
        return None
    kb = shp(a[8], "kv_b_proj")
    L = kb[0]
    st, sh, vec = T, N, None
    if sp and is_int(tp) and tp > 1:
        st = -(-T // tp)
        sh = N if G else N * tp
        vec = rankzero(seq, T, st, a[5] if is_t(a[5]) else None)
    return [spec("MatMulV2", [(T, L), kb], dt, count=2),
            spec("SparseFlashAttention", None, dt, "attention",
                 params=sparse_params(st, sh, L, seq, avg, topk, bs, True, vec), is_attention=True)]


def dsa_indexer(db, e, q, spec, phase_of):
    a = q.args
    if len(a) < 16:
        return None
    h, qa, cache, seq = a[0], a[1], a[4], a[7]
    tens = [a[i] for i in (0, 1, 4, 6, 7, 8, 9, 10, 11)]
    if not all(is_t(x) for x in tens) or not all(is_int(a[i]) for i in (12, 13, 15)):
        return None
    if len(h.shape) not in (2, 3) or len(qa.shape) not in (2, 3):
        return None
    heads, hd, topk = a[12], a[13], a[15]
    qlens = q.kwargs.get("query_lens")
    dt = prof(h.dtype)
    if dt is None:
        return None
    T = numel(h.shape) // h.shape[-1]
    H, qd = h.shape[-1], qa.shape[-1]
    eff = avgseq(seq)
    ph = phase_of(q.kwargs, seq.shape[0] if seq.shape else 0)
    if ph in ("mixed", "invalid"):
        return None
    if ph is None and eff is not None:
        ph = "prefill" if T >= eff else "decode"
    it, vec = T, None
    tp = db.cfg.tp
    if ph == "prefill" and db.cfg.sp and is_int(tp) and tp > 1:
        it = -(-T // tp)
        vec = rankzero(seq, T, it, qlens if is_t(qlens) else None, strict=True)
        if vec is None:
            return None
    bs = cache.shape[-2] if len(cache.shape) >= 3 else None
    act = max(vec[1]) if vec and vec[1] else eff
    blocks = -(-act // bs) if act is not None and bs else None
    wk, wproj, wqb, kn = a[9], a[10], a[8], a[11]
    out = [spec("MatMulV2", [(it, H), wk.shape], dt, count=2),
           spec("LayerNormV3", [(it, wk.shape[0]), kn.shape, kn.shape], dt, dtypes=["FLOAT"] * 3, count=3),
           spec("Cast", [(it, hd)], dt, count=1), spec("Cast", [(it, hd)], dt, count=1),
           spec("MatMulV2", [(it, H), wproj.shape], dt, count=2)]
    if wqb.dtype == "int8":
        out += [spec("AscendQuantV2", [(it, qd)], dt, alts=["AscendQuantV2Aicore"], count=1),
                spec("QuantBatchMatmulV3", [(it, qd), wqb.shape], dt, dtypes=["INT8", "INT8"], count=2)]
    else:
        out.append(spec("MatMulV2", [(it, qd), wqb.shape], dt, count=2))
    out.append(spec("ScatterNdUpdate", [cache.shape, (T, 1), (T, hd)], dt, "scatter_cache_write",
                    alts=["ScatterNdUpdateAiCore"], dtypes=[dt, "INT32", dt],
                    params={"tokens": T, "feature_dim": hd}))
    prim = e["primary_kernel_type"] or "LightningIndexer"
    p = sparse_params(it, heads, hd, seq, eff, topk, bs, False, vec)
    p["active_cache_blocks"] = blocks
    out.append(spec(prim, None, dt, "attention", alts=list(e["alternate_kernel_types"] or []), params=p,
                    is_attention=True))
    return out


def list_cell(c):
    if c is NA or c is MISSING:
        return None
    try:
        return [pyint(x) for x in text(c).replace(";", ",").split(",")]
    except ConvFail:
        return None


def runtime_checks(t, r, p, missing):
    """Steps 1 and 9 of the attention row check for runtime-vector targets; False rejects."""
    for f in p.get("required_context_fields", ()):
        col = SPARSE_COLS.get(f)
        if col is not None and not t.has(col):
            missing.add(col)
            return False
    return True


def runtime_step9(t, r, p):
    def ival(col, want):
        c = t.cell(r, col)
        if c is NA:
            return False
        try:
            return pyint(c) == want
        except ConvFail:
            raise CellFault(t, r, col, text(c))
    if t.has("Runtime phase") and p.get("phase") is not None:
        ph = text(t.cell(r, "Runtime phase")).strip().lower()
        if not ph or ph != p["phase"]:
            return False
    for col, f in (("Runtime topk", "topk"), ("Runtime block_size", "block_size")):
        if t.has(col) and p.get(f) is not None and not ival(col, p[f]):
            return False
    for col, f in (("Runtime actual_seq_lengths_values", "actual_seq_lengths_values"),
                   ("Runtime actual_seq_lengths_kv_values", "actual_seq_lengths_kv_values"),
                   ("Runtime block_table_valid_blocks", "block_table_valid_blocks")):
        if t.has(col) and p.get(f) is not None:
            v = list_cell(t.cell(r, col))
            if v is not None and v != list(p[f]):
                return False
    for col, f in (("Runtime num_heads", "num_heads"), ("Runtime sparse_block_size", "sparse_block_size"),
                   ("Runtime sparse_indices_valid_count", "sparse_indices_valid_count")):
        if t.has(col) and p.get(f) is not None:
            c = t.cell(r, col)
            if c is not NA and text(c).strip() and not ival(col, p[f]):
                return False
    for col, f in (("Runtime cache_layout", "cache_layout"), ("Runtime kv_cache_mode", "kv_cache_mode"),
                   ("Runtime sparse_indices_pattern", "sparse_indices_pattern")):
        if t.has(col) and p.get(f) is not None:
            s = strcell(t.cell(r, col))
            if s is not None and s != p[f]:
                return False
    return True


def scatter_cache_write(db, K, p, dt):
    T, F = p.get("tokens"), p.get("feature_dim")
    if not (is_int(T) and T > 0 and is_int(F) and F > 0):
        return None, "semantic_context_missing:target:scatter_cache_write"

    def chk(kt, t, r, lat):
        S = shapes(t, r, "Input Shapes")
        if len(S) != 3 or len(S[0]) != 2 or S[0][-1] != F or S[1:] != [(T, 1), (T, F)]:
            return None
        if slist(t.cell(r, "Input Data Types")) != [dt, "INT32", dt]:
            return None
        if slist(t.cell(r, "Input Formats")) != ["ND", "ND", "ND"]:
            return None
        if shapes(t, r, "Output Shapes") != [S[0]] or slist(t.cell(r, "Output Data Types")) != [dt] \
                or slist(t.cell(r, "Output Formats")) != ["ND"]:
            return None
        return (lat, 1.0, 0, "scatter_cache_pool_dim0_agnostic")
    c, reason = db.scan(K, chk, "nearest")
    if c is None:
        return None, reason or "semantic_key_mismatch:scatter_cache_write"
    return c, ""


MLAPO_INT = ("num_tokens", "hidden_size", "local_num_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
             "qk_rope_head_dim", "block_size")
MLAPO_STR = ("cache_mode", "quant_mode", "weight_format")
MLAPO_BOOL = ("enable_inner_out", "weight_quantized")
SIG = ("Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats")


def mlapo_opaque(db, e, q, spec, T, H, dt, O):
    a = q.args
    ok = O.get("opaque_kernel")
    if not isinstance(ok, dict):
        return None
    if not all(is_int(a[i]) and a[i] > 0 for i in (8, 10, 11, 12, 13)):
        return None
    if not all(is_t(a[i]) and a[i].dtype == "int8" for i in (3, 5, 6)):
        return None
    p = {"num_tokens": T, "hidden_size": H, "local_num_heads": a[8], "q_lora_rank": a[13],
         "kv_lora_rank": a[12], "qk_nope_head_dim": a[10], "qk_rope_head_dim": a[11],
         "block_size": ok.get("block_size", 128), "cache_mode": ok.get("cache_mode", "krope_ctkv"),
         "quant_mode": ok.get("quant_mode", "per_tensor_quant_asymm"),
         "enable_inner_out": ok.get("enable_inner_out", True), "weight_quantized": ok.get("weight_quantized", True),
         "weight_format": ok.get("weight_format", "FRACTAL_NZ")}
    return [spec(ok.get("kernel_type", "mla_preprocess_0_mix_aic"), None, dt,
                 ok.get("query_mode", "mlapo_preprocess"), params=p)]


def mlapo_preprocess(db, K, p, dt):
    """§10.8: (candidate with an 'interpolated' flag, reason)."""
    if any(v is None for v in p.values()):
        return None, "semantic_context_missing:target:mlapo_preprocess"
    T = p["num_tokens"]
    if not 1 <= T <= 1024 or any(is_int(p[k]) and p[k] <= 0 for k in MLAPO_INT):
        return None, "semantic_key_mismatch:mlapo_preprocess:num_tokens_out_of_range"
    H, qr = p["hidden_size"], p["q_lora_rank"]
    if H % 32 or qr % 32:
        return None, "semantic_key_mismatch:mlapo_preprocess:fractal_nz_alignment"
    if dt != "DT_BF16":
        return None, "semantic_key_mismatch:mlapo_preprocess:dtype"
    heads, L, nope, rope = p["local_num_heads"], p["kv_lora_rank"], p["qk_nope_head_dim"], p["qk_rope_head_dim"]
    bs = p["block_size"]
    F = qr + L + rope
    Qo = heads * (nope + rope)
    missing = set()
    cands = []
    kernel = None
    for kt in K:
        t = db.table(kt)
        if t is None:
            continue
        need = [f"Runtime {k}" for k in list(MLAPO_INT) + list(MLAPO_STR) + list(MLAPO_BOOL)] + \
            ["Runtime metadata_completeness"] + list(SIG)
        absent = [c for c in need if not t.has(c)]
        if absent:
            missing.update(absent)
            continue
        for r in range(len(t.rows)):
            comp = strcell(t.cell(r, "Runtime metadata_completeness"))
            if (comp or "legacy").lower() == "legacy":
                continue
            try:
                iv = {k: pyint(t.cell(r, f"Runtime {k}")) for k in MLAPO_INT}
            except ConvFail:
                continue
            if any(iv[k] != p[k] for k in MLAPO_INT if k != "num_tokens"):
                continue
            if any((strcell(t.cell(r, f"Runtime {k}")) or "") != p[k] for k in MLAPO_STR):
                continue
            if any(((strcell(t.cell(r, f"Runtime {k}")) or "").lower() in ("true", "1")) != bool(p[k])
                   for k in MLAPO_BOOL):
                continue
            tt = iv["num_tokens"]
            try:
                IS, OS = shapes(t, r, "Input Shapes"), shapes(t, r, "Output Shapes")
            except CellFault as ex:
                db.fault(ex)
                continue
            ID, IF = slist(t.cell(r, "Input Data Types")), slist(t.cell(r, "Input Formats"))
            OD, OF = slist(t.cell(r, "Output Data Types")), slist(t.cell(r, "Output Formats"))
            if len(IS) != 22 or len(ID) != 22 or len(OS) != 5 or len(OD) != 5 or len(IF) < 6 or len(OF) != 5:
                continue
            nb = -(-tt // bs)
            exp_in = [(tt, H), (1, H // 32, F, 32), (F,), (qr,), (qr,), (1, qr // 32, Qo, 32), (Qo,), (L,),
                      (tt, rope), (tt, rope), (heads, nope, L), (nb, bs, 1, L), (nb, bs, 1, rope), (tt,), (1,),
                      (1,), (F,), (1,), (1,), (Qo,), (1,), (1,)]
            exp_out = [(tt, heads, L), exp_in[11], (tt, heads, rope), exp_in[12], (tt, qr)]
            if IS != exp_in or OS != exp_out:
                continue
            if ID[0] != dt or ID[1] not in ("DT_INT8", "INT8") or ID[5] not in ("DT_INT8", "INT8"):
                continue
            if IF[1] != p["weight_format"] or IF[5] != p["weight_format"]:
                continue
            if any(d != dt for d in OD) or any(f != "ND" for f in OF):
                continue
            li = db.row_latency(t, r)
            if li is None:
                continue
            cands.append((tt, li[0], kt))
    if not cands:
        if missing:
            return None, "semantic_context_missing:csv:" + ",".join(sorted(missing))
        return None, "semantic_key_mismatch:mlapo_preprocess"
    for tt, lat, kt in cands:
        if tt == T:
            return (lat, kt, 0.9, 0, "mlapo_runtime_exact", None, False), ""
    lower = [c for c in cands if c[0] < T]
    upper = [c for c in cands if c[0] > T]
    if not lower or not upper:
        return None, "shape_mismatch:mlapo_preprocess:bounded_interpolation_only"
    lo_t = max(c[0] for c in lower)
    hi_t = min(c[0] for c in upper)
    lo = next(c for c in lower if c[0] == lo_t)
    hi = next(c for c in upper if c[0] == hi_t)
    y = lo[1] + (T - lo[0]) / (hi[0] - lo[0]) * (hi[1] - lo[1])
    return (y, lo[2], 0.75, 0, "mlapo_num_tokens_bounded_interpolation", None, True), ""


# ---------------------------------------------------------------- §12.12 interpolation

def ints_cell(c):
    if c is NA or c is MISSING:
        return None
    if isinstance(c, (int, float)) and not isinstance(c, bool):
        from qo_base import intcell
        v = intcell(c)
        return None if v is None else [v]
    from qo_base import intcell
    items = [x.strip() for x in text(c).split(",") if x.strip()]
    out = [intcell(x) for x in items]
    if not out or any(v is None for v in out):
        return None
    return out


def workload(qt, cum, kv):
    """(phase, effective kv length) from a query length and the runtime vectors, or None."""
    if cum is None or kv is None or not cum:
        return None
    prev = 0
    lengths = []
    for c in cum:
        if c < prev or c > qt:
            return None
        lengths.append(c - prev)
        prev = c
    if cum[-1] != qt:
        return None
    if len(lengths) != len(kv) or not lengths or any(x < 0 for x in lengths) or sum(lengths) != qt:
        return None
    active = [(ln, k) for ln, k in zip(lengths, kv) if ln > 0]
    if not active or any(k <= 0 for _, k in active):
        return None
    if all(ln == k for ln, k in active):
        phase = "prefill"
    elif all(ln == 1 for ln, _ in active):
        phase = "decode"
    else:
        phase = "mixed"
    eff = sum(ln * k for ln, k in zip(lengths, kv)) / qt
    if not (math.isfinite(eff) and eff > 0):
        return None
    return phase, eff


RT_INT = (("sparse_mode", "Runtime sparse_mode", False), ("kv_heads", "Runtime num_key_value_heads", True),
          ("topk", "Runtime topk", True), ("block_size", "Runtime block_size", True),
          ("num_heads", "Runtime num_heads", True))
RT_STR = (("input_layout", "Runtime input_layout"), ("cache_layout", "Runtime cache_layout"),
          ("kv_cache_mode", "Runtime kv_cache_mode"))


def runtime_attention_interp(db, kt, p, dt):
    """§12.12 runtime attention for one kernel: (result tuple or None, reason)."""
    from qo_base import intcell
    import qo_interp as qi
    sparse = kt == "SparseFlashAttention"
    path = "sparse_attention" if sparse else "lightning_indexer"
    t = db.table(kt)
    if t is None:
        return None, "csv_not_found"

    def key_of(vals):
        key = [("kernel_type", kt), ("dtype", vals["dtype"]), ("phase", vals["phase"]), ("query_rank", 3),
               ("head_dim", vals["head_dim"])]
        for f, _, pos in RT_INT[:2]:
            key.append((f, vals[f]))
        key.append(("input_layout", vals["input_layout"]))
        for f, _, pos in RT_INT[2:]:
            key.append((f, vals[f]))
        for f, _ in RT_STR[1:]:
            key.append((f, vals[f]))
        if sparse:
            for f in ("sparse_block_size", "sparse_indices_pattern", "sparse_indices_valid_count"):
                key.append((f, vals[f]))
        return key

    def row(r):
        if t.has("Runtime metadata_completeness") and strcell(t.cell(r, "Runtime metadata_completeness")) != "complete":
            return None
        S = shapes(t, r, "Input Shapes")
        D = slist(t.cell(r, "Input Data Types"))
        if not S or not D:
            return None
        q = S[0]
        if len(q) != 3 or any(d <= 0 for d in q):
            return None
        wl = workload(q[0], ints_cell(t.cell(r, "Runtime actual_seq_lengths_values")),
                      ints_cell(t.cell(r, "Runtime actual_seq_lengths_kv_values")))
        if wl is None:
            return None
        vals = {"dtype": D[0], "phase": wl[0], "head_dim": q[-1]}
        for f, col, pos in RT_INT:
            v = intcell(t.cell(r, col))
            if v is None or (pos and v <= 0):
                return None
            vals[f] = v
        for f, col in RT_STR:
            v = strcell(t.cell(r, col))
            if v is None:
                return None
            vals[f] = v
        if sparse:
            for f, col, kind in (("sparse_block_size", "Runtime sparse_block_size", "int"),
                                 ("sparse_indices_pattern", "Runtime sparse_indices_pattern", "str"),
                                 ("sparse_indices_valid_count", "Runtime sparse_indices_valid_count", "int")):
                v = intcell(t.cell(r, col)) if kind == "int" else strcell(t.cell(r, col))
                if v is None or (kind == "int" and v <= 0):
                    return None
                vals[f] = v
        if qi.point_latency(db, t, r) is None:
            return None
        return {"q_tokens": q[0], "effective_kv_len": wl[1]}, key_of(vals)
    idx = qi.build_index(db, t, ("rt", sparse), row)
    q3 = p.get("q_shape_3d")
    wl = workload(q3[0], p.get("actual_seq_lengths_values"), p.get("actual_seq_lengths_kv_values")) \
        if q3 and len(q3) == 3 else None
    vals = {"dtype": dt, "phase": wl[0] if wl else None, "head_dim": q3[-1] if q3 else None,
            "sparse_mode": p.get("sparse_mode"), "kv_heads": p.get("num_kv_heads"), "topk": p.get("topk"),
            "block_size": p.get("block_size"), "num_heads": p.get("num_heads"),
            "input_layout": p.get("input_layout"), "cache_layout": p.get("cache_layout"),
            "kv_cache_mode": p.get("kv_cache_mode"), "sparse_block_size": p.get("sparse_block_size"),
            "sparse_indices_pattern": p.get("sparse_indices_pattern"),
            "sparse_indices_valid_count": p.get("sparse_indices_valid_count")}
    need = [k for k in vals if sparse or not k.startswith("sparse_")]
    if wl is None or any(vals[k] is None for k in need if k != "sparse_mode") or vals["sparse_mode"] is None:
        return None, f"{path}_target_unextractable"
    key = key_of(vals)
    gs = [(k, pt) for k, pt in qi.groups_of(idx) if qi.key_match(key, k)]
    res, st = qi.try_groups(gs, {"q_tokens": q3[0], "effective_kv_len": wl[1]},
                            (("q_tokens",), ("effective_kv_len",), ("q_tokens", "effective_kv_len")),
                            qi.max_dim(db, kt))
    if res:
        return res, ""
    return None, qi.reason_of(st, f"{path}_interpolation_failed")


def scatter_interp(db, K, target, what):
    """§12.12 scatter: target = (cache shape, index shape, update shape, dtypes); (result, kernel) or reason."""
    import qo_interp as qi
    cache, _index, upd, dts = target
    u = (numel(upd[:-1]), upd[-1]) if len(upd) > 2 else tuple(upd)
    key = [("kernel_type", None), ("cache_dtype", dts[0]), ("index_dtype", dts[1]), ("update_dtype", dts[2]),
           ("full_cache_shape", tuple(cache)), ("update_tail", tuple(u[1:])), ("input_formats", ("ND", "ND", "ND"))]
    last = None
    for kt in K:
        t = db.table(kt)
        if t is None:
            continue

        def row(r, t=t, kt=kt):
            S = shapes(t, r, "Input Shapes")
            D = slist(t.cell(r, "Input Data Types"))
            F = slist(t.cell(r, "Input Formats"))
            if len(S) < 3 or len(D) < 3 or len(F) < 3:
                return None
            c, uu = S[0], S[2]
            if len(uu) > 2:
                uu = (numel(uu[:-1]), uu[-1])
            if not c or not uu or qi.point_latency(db, t, r) is None:
                return None
            return {"tokens": uu[0]}, [("kernel_type", kt), ("cache_dtype", D[0]), ("index_dtype", D[1]),
                                       ("update_dtype", D[2]), ("full_cache_shape", tuple(c)),
                                       ("update_tail", tuple(uu[1:])), ("input_formats", tuple(F[0:3]))]
        idx = qi.build_index(db, t, ("scatter",), row)
        k2 = [("kernel_type", kt)] + key[1:]
        gs = [(k, pt) for k, pt in qi.groups_of(idx) if qi.key_match(k2, k)]
        res, st = qi.try_groups(gs, {"tokens": u[0]}, (("tokens",),), qi.max_dim(db, kt))
        if res:
            return res, kt
        last = st
    return None, qi.reason_of(last, f"{what}_interpolation_failed")
