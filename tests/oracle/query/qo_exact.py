"""Exact lookups of the query oracle: loading, dispatch, compute, elementwise, attention,
communication, static composites, decomposers, moe_fused."""
import math
import os
import sys

import yaml

import qo_explain as xp
from qo_base import (BYTES, MISSING, NA, RELAXED, REVERSE, DT_SIZE, CellFault, ConvFail,
                     QueryError, Result, Table, Tensor, avgseq, first_tensor, fia_q, hit, intcell,
                     is_int, is_t, miss, norm3, num, numel, nz, padded, padmatch, prof, pyint,
                     shapes, slist, strcell, strip_batch, tensor_inputs, text, truthy)

LAT = ("Average Duration(us)", "Profiling Average Duration(us)", "Duration(us)")
MATMUL = {"MatMulV2", "MatMulV3", "MatMulCommon", "MatMul", "QuantBatchMatmulV3", "BatchMatMulV2",
          "TransposeBatchMatMul", "GroupedMatmul", "GroupedMatmulSwigluQuant"}
FLATTEN = {"AscendQuantV2", "DynamicQuant", "RmsNorm", "AddRmsNormBias", "AddRmsNorm", "DispatchFFNCombine"}
MERGE = {"AscendQuantV2", "DynamicQuant"}
ROPE = {"ApplyRotaryPosEmb", "_triton_rope", "split_qkv_rmsnorm_rope_kernel"}
RAC = {"ReshapeAndCacheNdKernel", "reshape_and_cache_200000000"}
DECOMPOSERS = {
    "tensor_cast.multihead_latent_attention.default": ("mla", "BatchMatMulV2"),
    "tensor_cast.multihead_latent_attention_quant.default": ("mla", "QuantBatchMatmulV3"),
    "tensor_cast.mla_sparse_attention.default": ("sparse_mla", "BatchMatMulV2"),
    "tensor_cast.mla_sparse_attention_quant.default": ("sparse_mla", "QuantBatchMatmulV3"),
    "tensor_cast.mlapo.default": ("mlapo", "MatMulV2"),
    "tensor_cast.mlapo_quant.default": ("mlapo", "QuantBatchMatmulV3"),
    "tensor_cast.dsa_indexer.default": ("dsa_indexer", None),
}


class OpenError(Exception):
    pass


class Config:
    def __init__(self, tp=None, ep=None, grid=None, sp=False, interp=True, quirks=False):
        self.tp, self.ep, self.grid, self.sp, self.interp, self.quirks = tp, ep, grid, sp, interp, quirks


class Query:
    def __init__(self, op, args, out, kwargs):
        self.op, self.args, self.out, self.kwargs = op, args, out, kwargs


class Entry:
    """A mapping entry read with Python semantics (absent key = None)."""

    def __init__(self, name, d):
        self.name, self.d = name, d
        alts = d.get("alternate_kernel_types")
        if alts is not None and not (isinstance(alts, list) and all(isinstance(a, str) for a in alts)):
            raise QueryError("bad_mapping", f"operator_mappings[{name}]: alternate_kernel_types is not a list of strings")
        sk = d.get("sub_kernels")
        if sk is not None and isinstance(sk, list) and not all(isinstance(a, str) for a in sk):
            raise QueryError("bad_mapping", f"operator_mappings[{name}]: sub_kernels item is not a string")
        n = d.get("tc_input_count")
        if n is not None and not is_int(n):
            raise QueryError("bad_mapping", f"operator_mappings[{name}]: tc_input_count is not an integer")

    def __getitem__(self, k):
        return self.d.get(k)

    def has(self, k):
        return k in self.d

    def kernels(self):
        out = [self.d.get("kernel_type")]
        for a in self.d.get("alternate_kernel_types") or []:
            if a not in out:
                out.append(a)
        return out


def trunc(lst, n):
    return lst if n is None else lst[:n]


class DB:
    def __init__(self, d, cfg, warn=None):
        self.dir, self.cfg, self.q = d, cfg, cfg.quirks
        self.warn = warn or (lambda s: sys.stderr.write("opdb: warning: " + s + "\n"))
        if not os.path.isdir(d):
            raise OpenError(f"database folder not found: {d}")
        mp = os.path.join(d, "op_mapping.yaml")
        if not os.path.exists(mp):
            self.warn(f"op_mapping.yaml not found: every op is unmapped: {mp}")
            m = {}
        else:
            try:
                with open(mp, "rb") as f:
                    m = yaml.safe_load(f)
            except Exception as e:  # noqa: BLE001 - any parse failure makes it unreadable
                raise OpenError(f"op_mapping.yaml does not parse ({e.__class__.__name__}): {mp}")
            if not isinstance(m, dict):
                raise OpenError(f"op_mapping.yaml is not a mapping: {mp}")
        self.m = m
        self.pol = {}
        for key in ("latency_policy", "query_selection_policy", "interpolation_policy"):
            p = m.get(key)
            ko = {}
            if p is not None:
                if not isinstance(p, dict):
                    raise OpenError(f"op_mapping.yaml: {key} is not a mapping: {mp}")
                ko = p.get("kernel_overrides")
                if ko is None:
                    ko = {}
                elif not isinstance(ko, dict):
                    raise OpenError(f"op_mapping.yaml: {key}.kernel_overrides is not a mapping: {mp}")
            self.pol[key] = ko
        ref = m.get("communication_data_ref")
        self.comm = os.path.realpath(os.path.join(d, str(ref))) if truthy(ref) else d
        self.tables = {}
        self.last_scan = None  # --explain: (candidate, ties, latency column, table) of the last scan
        self.last_comm = None  # --explain: the comm object of the last communication CSV query
        self.warned = set()
        self.skipped = set()

    # ---- policies ----
    def _ov(self, key, kt):
        e = self.pol[key].get(kt)
        if e is None:
            return {}
        if not isinstance(e, dict):
            raise QueryError("bad_mapping", f"{key}.kernel_overrides[{kt}] is not a mapping")
        return e

    def ov_lat(self, kt):
        return self._ov("latency_policy", kt)

    def ov_sel(self, kt):
        return self._ov("query_selection_policy", kt)

    def ov_int(self, kt):
        if not self.cfg.interp:
            return {}
        return self._ov("interpolation_policy", kt)

    def entry(self, name):
        ops = self.m.get("operator_mappings")
        if ops is None:
            return None
        if not isinstance(ops, dict):
            raise QueryError("bad_mapping", "operator_mappings is not a mapping")
        e = ops.get(name)
        if e is None:
            return None
        if not isinstance(e, dict):
            raise QueryError("bad_mapping", f"operator_mappings[{name}] is not a mapping")
        return Entry(name, e)

    # ---- tables ----
    def table(self, kt):
        if not isinstance(kt, str):
            return None
        if kt in self.tables:
            t = self.tables[kt]
            if isinstance(t, QueryError):
                raise t
            return t
        p = None
        if kt.startswith("hcom_"):
            c = os.path.join(self.comm, kt + ".csv")
            if os.path.isfile(c):
                p = c
        if p is None:
            c = os.path.join(self.dir, kt + ".csv")
            if os.path.isfile(c):
                p = c
        if p is None:
            self.tables[kt] = None
            return None
        rel = os.path.relpath(p, self.dir)
        name = rel if not rel.startswith("..") else p
        try:
            t = Table(p, name)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            err = QueryError("bad_csv", f"{name}: cannot load: {e}")
            self.tables[kt] = err
            raise err
        self.tables[kt] = t
        return t

    def fault(self, e):
        """A cell fault: quirks raise (error result), default skips the row (one warning)."""
        if self.q:
            raise QueryError("bad_cell", str(e))
        self.skipped.add((e.table.name, e.row))
        k = (e.table.name, e.column)
        if k not in self.warned:
            self.warned.add(k)
            self.warn(f"{e}: row skipped")

    def lat_rows(self, kt, t):
        """Per row (latency, column, priority) or None (§3.6, with the core envelope)."""
        if "lat" in t.cache:
            return t.cache["lat"]
        ov = self.ov_lat(kt)
        env = ov.get("profiling_core_envelope_fallback")
        theta = env.get("max_duration_to_core_ratio") if isinstance(env, dict) else None
        prefer = truthy(ov.get("prefer_profiling_rows"))
        out = []
        for r in range(len(t.rows)):
            li = self.row_latency(t, r)
            if li is not None and theta is not None:
                li = self._envelope(t, r, li, theta)
            if li is not None:
                lat, col = li
                if prefer:
                    pr = 0 if col == LAT[1] else 1
                else:
                    pr = LAT.index(col) if col in LAT else 3
                li = (lat, col, pr)
            out.append(li)
        t.cache["lat"] = out
        return out

    @staticmethod
    def pref(t):
        for c in LAT:
            if t.has(c):
                return c
        return "Duration(us)"

    def row_latency(self, t, r):
        cols = [self.pref(t)] + [c for c in LAT]
        seen = []
        for c in cols:
            if c in seen:
                continue
            seen.append(c)
            if not t.has(c):
                continue
            try:
                v = num(t.cell(r, c))
            except ConvFail:
                continue
            if math.isfinite(v) and v > 0:
                return (v, c)
        return None

    def _envelope(self, t, r, li, theta):
        lat, col = li
        if col != LAT[1] or text(t.cell(r, "Accelerator Core")).strip() != "MIX_AIC":
            return li
        try:
            a = num(t.cell(r, "Profiling Average aicore_time(us)"))
            b = num(t.cell(r, "Profiling Average aiv_time(us)"))
            th = float(theta)
        except (ConvFail, TypeError, ValueError):
            return li
        if not all(math.isfinite(x) and x > 0 for x in (a, b, th)):
            return li
        e = max(a, b)
        if lat / e > th:
            return (e, "ENVELOPE")
        return li

    # ---- §4.2 ----
    def scan(self, K, checker, mode):
        """checker(kt, table, row, lat) -> (lat, conf, dist, rule) or None."""
        loaded = False
        best = None
        ties = []
        cols = None
        for i, k in enumerate(K):
            t = self.table(k)
            if t is None:
                xp.attempt("kernel", k, "csv_not_found")
                continue
            loaded = True
            matched = False
            lats = self.lat_rows(k, t)
            for r, li in enumerate(lats):
                if li is None:
                    continue
                try:
                    c = checker(k, t, r, li[0])
                except CellFault as e:
                    self.fault(e)
                    continue
                if c is None:
                    continue
                matched = True
                cand = (c[0], k, c[1], c[2], c[3], r)
                if mode == "first":
                    xp.attempt("kernel", k, "matched")
                    self.last_scan = (cand, 1, li[1], t)
                    return cand, ""
                score = (c[2], i, li[2])
                if best is None or score < best[0]:
                    best = (score, cand)
                    ties = [cand]
                    cols = (li[1], t)
                elif score == best[0]:
                    ties.append(cand)
            xp.attempt("kernel", k, "matched" if matched else "no_match")
        if best is not None:
            self.last_scan = (best[1], len(ties), cols[0], cols[1])
            kb = best[1][1]
            if truthy(self.ov_sel(kb).get("require_semantic_unique")):
                if len({"%.12f" % c[0] for c in ties}) > 1:
                    return None, f"ambiguous_semantic_match:{kb}"
            return best[1], ""
        return None, ("" if loaded else "csv_not_found")

    def explain_row(self, cand, input_rules=None):
        """--explain: the row of a candidate the last scan returned."""
        if not xp.on():
            return
        if self.last_scan is None or self.last_scan[0] is not cand:
            raise xp.NoOracle("a row not from the last scan")
        _, ties, col, t = self.last_scan
        xp.row(t, cand[5], cand[1], cand[0], col, cand[4], input_rules, cand[3], ties)

    # ---- §5.3 ----
    def match(self, X, t, r, kt, N, normalise=True):
        C = trunc(shapes(t, r, "Input Shapes"), N)
        D = trunc(slist(t.cell(r, "Input Data Types")), N)
        F = trunc(slist(t.cell(r, "Input Formats")), N)
        if normalise:
            X = normalise_inputs(X, kt, len(C))
        if len(X) != len(C):
            return None
        rule = "identity"
        padflag = False
        irs = self.last_irs = []
        for i, (tsh, dt) in enumerate(X):
            p = prof(dt)
            if p is None or i >= len(D):
                return None
            if p != D[i] and not (kt in RELAXED and p in ("DT_BF16", "FLOAT") and D[i] in ("DT_BF16", "FLOAT")):
                return None
            c = C[i]
            fmt = F[i] if i < len(F) else "ND"
            if fmt == "FRACTAL_NZ":
                c = nz(c)
            res = fire(tsh, c, kt, i)
            if res is None:
                return None
            test, eff = res
            irs.append(xp.INPUT_RULE[test])
            if test in (6, 9, 11) or test == 7:
                padflag = True
            if test == 6:
                if rule == "identity":
                    rule = "padding"
            elif test == 7:
                if rule in ("identity", "batch_strip"):
                    rule = "batch_strip+padding"
            elif eff is not None:
                rule = eff
        return rule, padflag

    def dist(self, rule, padflag):
        if self.q:
            return 1 if "padding" in rule else 0
        return 1 if padflag else 0

    def compute_scan(self, K, X, N, mode="nearest"):
        irs = {}

        def chk(kt, t, r, lat):
            m = self.match(X, t, r, kt, N)
            if m is None:
                return None
            irs[(kt, r)] = self.last_irs
            return (lat, 1.0, self.dist(*m), m[0])
        c, reason = self.scan(K, chk, mode)
        self.last_input_rules = irs.get((c[1], c[5])) if c is not None else None
        return c, reason

    # ---- §5 ----
    def compute_kernels_rank_only(self, e, X):
        return self.compute_kernels(e, X, False)

    def compute_kernels(self, e, X, degenerate=True):
        """§5.1 steps 1-4: the kernel list."""
        K = e.kernels()
        db = e["degenerate_bmm_kernel_type"]
        if degenerate and isinstance(db, str) and len(X) >= 2 and X[0][0] == (1, 32, 1) and len(X[1][0]) == 3 \
                and X[1][0][0] == 1 and X[1][0][1] == 1 and X[1][0][2] > 0:
            if db not in K:
                K.append(db)
        kb = e["kernel_types_by_input_rank"]
        if X and isinstance(kb, dict):
            rk = len(X[0][0])
            L = kb[rk] if rk in kb else kb.get(str(rk))
            if isinstance(L, list) and all(isinstance(x, str) for x in L):
                K2 = []
                for k in L + K:
                    if k not in K2:
                        K2.append(k)
                K = K2
        return K

    def tp_project(self, e, X):
        """§5.2: (X, None) or (None, reason)."""
        rule = e["tp_linear_projection"]
        if rule is None:
            return X, None
        ok = isinstance(rule, dict)
        if ok:
            ax = rule.get("shard_axis")
            dims = rule.get("logical_global_dims")
            oth = rule.get("otherwise", "physical_local")
            ok = (ax in ("input", "output") and isinstance(dims, list) and dims
                  and all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims)
                  and oth == "physical_local" and len(X) >= 2 and len(X[0][0]) == 2 and len(X[1][0]) == 2)
        if not ok:
            return None, "invalid_tp_linear_projection_rule"
        v = X[0][0][1] if ax == "input" else X[1][0][1]
        if v not in dims:
            return X, None
        tp = self.cfg.tp
        if tp == 1:
            return X, None
        (M, k), dta = X[0]
        w, dtw = X[1]
        bad = f"tp_projection_invalid:logical_dim={v};shard_axis={ax};tp_size={tp}"
        if tp is None or tp <= 1 or k != w[0]:
            return None, bad
        if ax == "input":
            if k >= 1 and k % tp == 0:
                return [((M, k // tp), dta), ((k // tp, w[1]), dtw)] + X[2:], None
            return None, bad
        if w[1] >= 1 and w[1] % tp == 0:
            return [X[0], ((w[0], w[1] // tp), dtw)] + X[2:], None
        return None, bad

    def compute(self, e, q):
        xp.path("compute")
        kt = e["kernel_type"]
        if not truthy(kt):
            return miss("")
        X = trunc(tensor_inputs(q.args), e["tc_input_count"])
        K = self.compute_kernels(e, X)
        X, why = self.tp_project(e, X)
        if why:
            return miss(why)
        xp.kernels(K)
        c, reason = self.compute_scan(K, X, e["tc_input_count"])
        if c is None:
            return miss(reason or "shape_mismatch")
        self.explain_row(c, self.last_input_rules)
        return hit(c[0], "MEASURED", 1.0, c[4], c[1])

    def find_compute(self, K, X, N, auto):
        """§5.6: (candidate, reason)."""
        Np = N
        if auto and N is None and X:
            Np = len(X)
        c, reason = self.compute_scan(K, X, Np)
        if c is not None:
            return c, ""
        if reason:
            return None, reason
        P = K[0] if K else None
        t = self.table(P) if P is not None else None
        if t is None or not t.rows:
            return None, "csv_not_found"
        cnt = None
        for r in range(len(t.rows)):
            try:
                cnt = len(shapes(t, r, "Input Shapes"))
                break
            except CellFault as ex:
                if self.q:
                    self.fault(ex)
                continue
        if cnt is None:
            return None, "shape_mismatch"
        tt = len(X)
        if Np is not None:
            cnt = min(cnt, Np) if Np >= 0 else len(list(range(cnt))[:Np])
            tt = min(tt, Np) if Np >= 0 else len(list(range(tt))[:Np])
        if P == "SwiGlu" and tt == 2 and cnt == 1:
            tt = 1
        if P in RAC and tt == 4 and cnt == 5:
            tt = 5
        return None, ("input_count_mismatch" if tt != cnt else "shape_mismatch")

    def mtp(self, e, q):
        X = tensor_inputs(q.args)
        o = first_tensor(q.out)
        k = e["mtp_projection_kernel_type"]
        if len(X) >= 2 and o is not None:
            a, w, y = X[0][0], X[1][0], o.shape
            if (len(a) == 2 and len(w) == 2 and len(y) == 2 and a[0] == y[0] and a[1] == 2 * y[1]
                    and {w[0], w[1]} == {a[1], y[1]} and isinstance(k, str) and k):
                c, _ = self.compute_scan([k], [(a, o.dtype), (w, o.dtype)], 2)
                if c is not None:
                    xp.path("mtp_projection")
                    xp.kernels([k])
                    self.explain_row(c, self.last_input_rules)
                    return hit(c[0], "MEASURED", 1.0, c[4], k)
        return self.compute(e, q)

    # ---- §6 ----
    def elementwise(self, e, q):
        o = q.out
        if isinstance(o, list):
            if not o:
                if self.q:
                    raise QueryError("bad_query", "elementwise op with an empty out list")
                return self.compute(e, q)
            o = o[0]
        if not is_t(o) or len(o.shape) == 0:
            return self.compute(e, q)
        xp.path("elementwise")
        kt = e["kernel_type"]
        if not truthy(kt):
            return miss("unmapped")
        return self.ew_scan(kt if self.q else e.kernels(), strip_batch(o.shape), prof(o.dtype))

    def ew_scan(self, K, y, p):
        if isinstance(K, str):
            K = [K]
        xp.kernels(K)
        # the distance only ranks in `nearest` mode; `first` mode's candidates have none (§4.2)
        dist = (lambda d: 0) if self.q else (lambda d: d)

        def chk(kt, t, r, lat):
            S = shapes(t, r, "Output Shapes")
            OD = slist(t.cell(r, "Output Data Types"))
            if not S:
                return None
            c = S[0]
            c2 = strip_batch(c)
            d = None
            if y == c or y == c2:
                d = 0
            elif padmatch(y, c) or padmatch(y, c2):
                d = 1
            elif len(y) == 3 and len(c) == 2:
                f = (y[0] * y[1], y[2])
                if f == c or f == c2:
                    d = 0
                elif padmatch(f, c) or padmatch(f, c2):
                    d = 1
            if d is None:
                return None
            qd = OD[0] if OD else None
            if p is not None and qd is not None and p == qd:
                return (lat, 1.0, dist(d), "elementwise")
            bp, bq = BYTES.get(p, 0), BYTES.get(qd, 0)
            if bp > 0 and bq > 0:
                return (lat * bp / bq, 0.9, dist(d), "elementwise")
            return None
        c, reason = self.scan(K, chk, "first" if self.q else "nearest")
        if c is None:
            if reason.startswith("ambiguous"):
                return miss(reason)
            return miss("elementwise_output_shape_mismatch")
        self.explain_row(c)
        return hit(c[0], "MEASURED", c[2], "elementwise", c[1])

    # ---- §7 ----
    def attention(self, e, q):
        xp.path("attention")
        kt = e["kernel_type"]
        if not truthy(kt):
            return miss("unmapped")
        a = q.args
        if len(a) < 7:
            return miss("insufficient_args")
        qt = a[0]
        if not is_t(qt):
            return miss("query_not_tensor")
        p = prof(qt.dtype)
        if p is None:
            return miss("dtype_unmapped")
        k = a[1]
        hd = k.shape[-1] if is_t(k) and len(k.shape) >= 1 else 0
        q3 = norm3(qt.shape, hd)
        if q3 is None:
            return miss("q_shape_normalize_failed")
        s = a[6]
        if not is_t(s):
            return miss("missing_seq_lens")
        avg = avgseq(s)
        if avg is None:
            return miss("invalid_seq_lens")
        kv = k.shape[-2] if is_t(k) and len(k.shape) >= 2 else None
        layout = "TND" if len(qt.shape) == 3 else "BNSD_NBSD" if len(qt.shape) == 4 else None
        sparse = 3
        if not self.q:
            sparse = 0 if len(qt.shape) == 4 else 3
            if is_t(k) and len(qt.shape) == 4 and len(k.shape) >= 4:
                kv = k.shape[1]
        xp.kernels(e.kernels())
        c, reason = self.attn_scan(e.kernels(), q3, avg, p, sparse, kv, layout)
        if c is None:
            return miss(reason)
        self.explain_row(c)
        return hit(c[0], "MEASURED", 0.9, "attention", c[1])

    def attn_scan(self, K, q3, avg, p, sparse, kv, layout, rt=None):
        import qo_tier2
        state = {}
        missing = set()

        def chk(kt, t, r, lat):
            st = state.get(kt)
            if st is None:
                avgc = "Runtime avg_seq_len" if t.has("Runtime avg_seq_len") else \
                    "avg_seq_len" if t.has("avg_seq_len") else None
                if avgc is None:
                    missing.add("Runtime avg_seq_len")
                st = state[kt] = (avgc, t.has("Input Shapes"))
            avgc, has_in = st
            if avgc is None or not has_in:
                return None
            if rt is not None and not qo_tier2.runtime_checks(t, r, rt, missing):
                return None
            ac = t.cell(r, avgc)
            if ac is NA:
                return None
            try:
                A = pyint(ac)
            except ConvFail:
                raise CellFault(t, r, avgc, text(ac))
            if A < 0:
                return None
            cq = fia_q(t.cell(r, "Input Shapes"))
            if cq is None:
                return None
            c3 = norm3(cq, q3[2])
            if c3 is None:
                return None
            if text(t.cell(r, "Input Data Types")).split(";")[0].strip() != p:
                return None
            if c3[1] != q3[1] or c3[2] != q3[2]:
                return None
            for col, want in (("Runtime sparse_mode", sparse), ("Runtime num_key_value_heads", kv)):
                if t.has(col) and want is not None:
                    cc = t.cell(r, col)
                    if cc is NA:
                        return None
                    try:
                        if pyint(cc) != want:
                            return None
                    except ConvFail:
                        raise CellFault(t, r, col, text(cc))
            if t.has("Runtime input_layout") and layout is not None:
                L = text(t.cell(r, "Runtime input_layout")).strip()
                if L and L != layout:
                    return None
            if rt is not None and not qo_tier2.runtime_step9(t, r, rt):
                return None
            gap = abs(avg - A)
            if gap > 16:
                return None
            tq, tc = q3[0], c3[0]
            if not (tq == tc or padded(tq, tc) or padded(tc, tq)):
                return None
            mc = strcell(t.cell(r, "Runtime metadata_completeness"))
            pen = 0.5 if mc is None or mc.lower() == "legacy" else 0
            d = gap + pen
            if not self.q and tq != tc:
                d += 1
            return (lat, 0.9, d, "attention")
        c, reason = self.scan(K, chk, "nearest")
        if c is None:
            if missing:
                return None, "semantic_context_missing:csv:" + ",".join(sorted(missing))
            return None, reason or "shape_mismatch"
        return c, ""

    # ---- §8 ----
    def tier(self, g):
        grid = self.cfg.grid
        if not grid:
            return None
        if not g:
            if self.q:
                raise QueryError("invalid_rank_group", "empty rank group with a grid")
            return None
        for x in g:
            if not is_int(x):
                raise QueryError("bad_query", "rank group member is not an integer")
        m = len(grid)
        coords = []
        for rank in g:
            rr = int(rank)
            c = [0] * m
            for j in range(m - 1, -1, -1):
                c[j] = rr % grid[j]
                rr //= grid[j]
            coords.append(c)
        for j in range(m):
            if len({c[j] for c in coords}) > 1:
                return j
        return m - 1

    def comm_op(self, e, q):
        xp.path("communication")
        kt = e["kernel_type"]
        if not truthy(kt):
            return miss("unmapped")
        a = q.args
        if not self.q and len(a) < 2:
            return miss("insufficient_args")
        if not a:
            raise QueryError("insufficient_args", "communication op without arguments")
        x = a[0]
        if not is_t(x):
            return miss("invalid_args")
        if len(a) < 2:
            raise QueryError("insufficient_args", "communication op with fewer than 2 arguments")
        g = a[-1]
        if not isinstance(g, list):
            return miss("invalid_args")
        B = numel(x.shape) * DT_SIZE[x.dtype]
        n = len(g)
        if q.op == "tensor_cast.reduce_scatter.default" and n > 1:
            B = B // n
        tier = self.tier(g)
        xp.kernels([kt])
        r = self.comm_csv(kt, B, n, tier, "alpha_beta")
        if self.last_comm is not None:
            xp.add("comm", self.last_comm)
        if isinstance(r, str):
            return miss(r)
        lat, interp = r
        return hit(lat, "INTERPOLATED" if interp else "MEASURED", 0.8 if interp else 0.9, "comm", kt)

    def comm_csv(self, kt, B, n, tier, method):
        """The answer (latency, interpolated) or a miss reason; self.last_comm its explain object
        (None without a table) and one attempt."""
        r = self._comm_csv(kt, B, n, tier, method)
        xp.attempt("kernel", kt, r if isinstance(r, str) else "matched")
        return r

    def _comm_csv(self, kt, B, n, tier, method):
        self.last_comm = None
        t = self.table(kt)
        if t is None:
            return "csv_not_found"
        xo = self.last_comm = {"message_bytes": B, "num_devices": n, "topology_tier": tier, "method": method,
                              "exact": False, "bracket": None, "alpha": None, "beta": None, "clamped": False,
                              "rows": []}
        if not t.has("message_bytes") or not t.has("num_devices"):
            return "csv_format_raw"
        filt = tier is not None and t.has("topology_tier")
        if not filt:
            xo["topology_tier"] = None

        def xrow(r):
            return {"file": t.name, "line": t.lines[r], "latency_us": float(lat(r))}

        def bnum(v):
            return int(v) if v == int(v) else v

        def numeq(c, v):
            if c is NA or isinstance(c, str) or c is MISSING:
                return False
            return float(c) == v

        def lat(r):
            li = self.row_latency(t, r)
            return li[0] if li else None

        def usable(r):
            if self.q:
                return True
            for col in ("message_bytes", "num_devices"):
                c = t.cell(r, col)
                if c is NA or isinstance(c, str):
                    return False
            return True
        rows = [r for r in range(len(t.rows)) if usable(r)]
        for r in rows:
            if numeq(t.cell(r, "message_bytes"), B) and numeq(t.cell(r, "num_devices"), n) and \
                    (not filt or numeq(t.cell(r, "topology_tier"), tier)):
                y = lat(r)
                if y is not None:
                    xo["exact"] = True
                    xo["rows"] = [xrow(r)]
                    return (y, False)
        cands = [r for r in rows if numeq(t.cell(r, "num_devices"), n)
                 and (not filt or numeq(t.cell(r, "topology_tier"), tier)) and lat(r) is not None]
        if not cands:
            return "shape_mismatch"
        xs = []
        for r in cands:
            c = t.cell(r, "message_bytes")
            if isinstance(c, str):
                raise QueryError("bad_cell", f"{t.name}:{t.lines[r]}: message_bytes: cannot compare {c!r}")
            xs.append(math.nan if c is NA else float(c))
        lo = max((x for x in xs if x <= B), default=None)
        hi = min((x for x in xs if x >= B), default=None)
        if lo is None or hi is None:
            return "shape_mismatch"
        r_lo = next(r for r, v in zip(cands, xs) if v == lo)
        y_lo = lat(r_lo)
        xo["bracket"] = [bnum(lo), bnum(hi)]
        xo["rows"] = [xrow(r_lo)]
        if lo == hi:
            return (y_lo, False)
        r_hi = next(r for r, v in zip(cands, xs) if v == hi)
        y_hi = lat(r_hi)
        xo["rows"].append(xrow(r_hi))
        if method == "bracket_linear":
            y = y_lo + (B - lo) / (hi - lo) * (y_hi - y_lo)
        else:
            if any(math.isnan(x) for x in xs):
                raise QueryError("bad_cell", f"{t.name}: message_bytes: NA in the fit")
            ys = [lat(r) for r in cands]
            nn = len(xs)
            xm = sum(xs) / nn
            ym = sum(ys) / nn
            sxx = sum((x - xm) ** 2 for x in xs)
            sxy = sum((x - xm) * (y - ym) for x, y in zip(xs, ys))
            beta = sxy / sxx
            xo["alpha"], xo["beta"] = ym - beta * xm, beta
            y = ym + beta * (B - xm)
        yc = max(min(y_lo, y_hi), min(y, max(y_lo, y_hi)))
        xo["clamped"] = yc != y
        return (yc, True)

    # ---- §9 ----
    def static_composite(self, e, q):
        xp.path("composite")
        S = e["sub_kernels"]
        if not truthy(S):
            return miss("no_sub_kernels")
        if not isinstance(S, list):
            raise QueryError("bad_mapping", f"operator_mappings[{e.name}]: sub_kernels is not a list")
        X = trunc(tensor_inputs(q.args), e["tc_input_count"])
        Kc = [k for k in S if not k.startswith("hcom_")]
        xp.kernels(Kc)
        if not Kc:
            return miss("csv_not_found")
        c, reason = self.find_compute(Kc, X, e["tc_input_count"], False)
        if c is None:
            return miss(reason)
        self.explain_row(c, self.last_input_rules)
        specs = [[k, "full_output", None, "alpha_beta"] for k in S if k.startswith("hcom_")]
        if self.cfg.sp:
            xp.unsupported("sequence-parallel composite")
            rv = e["runtime_comm_variants"]
            V = rv.get("sequence_parallel") if isinstance(rv, dict) else None
            if truthy(V):
                if not isinstance(V, dict):
                    return miss("invalid_runtime_comm_variant")
                src, kk = V.get("source_kernel_type"), V.get("kernel_type")
                mode = V.get("message_bytes_mode", "full_output")
                grp = V.get("group_type")
                meth = V.get("interpolation_method", "alpha_beta")
                if not (isinstance(src, str) and isinstance(kk, str) and kk.startswith("hcom_")
                        and mode in ("full_output", "per_rank_output") and grp in (None, "tensor_parallel")
                        and meth in ("alpha_beta", "bracket_linear")):
                    return miss("invalid_runtime_comm_variant")
                rep = False
                for s in specs:
                    if s[0] == src:
                        s[:] = [kk, mode, grp, meth]
                        rep = True
                if not rep:
                    return miss("runtime_comm_variant_source_missing")
        comm_total = 0.0
        interp = False
        subs = [[c[1], round(c[0], 2)]]
        xsub = []
        for k, mode, grp, meth in specs:
            self.last_comm = None
            r = self.comm_for_composite(q, k, mode, grp, meth)
            o = {"kernel": k, "latency_us": float(r[0]) if r else None,
                 "source": ("INTERPOLATED" if r[1] else "MEASURED") if r else "MISS"}
            if self.last_comm is not None:
                o["explain"] = {"comm": self.last_comm}
            xsub.append(o)
            if r is None:
                xp.add("sub_kernels", xsub)
                return miss("comm_sub_kernel_miss")
            comm_total += r[0]
            interp = interp or r[1]
            subs.append([k, round(r[0], 2)])
        if xsub:
            xp.add("sub_kernels", xsub)
        return Result(True, c[0] + comm_total, "INTERPOLATED" if interp else "MEASURED",
                      0.9 if specs else 0.8, None, c[1], None, subs)

    def comm_for_composite(self, q, k, mode, grp, meth):
        a = q.args
        if not a:
            return None
        g = a[-1]
        if not isinstance(g, list):
            return None
        n = len(g)
        if grp == "tensor_parallel" and (self.cfg.tp is None or n != self.cfg.tp):
            return None
        if len(a) < 2 or not is_t(a[0]) or not is_t(a[1]):
            return None
        x, w = a[0], a[1]
        s = 2 if x.dtype in ("int8", "uint8", "float8_e4m3fn", "float8_e5m2") else DT_SIZE[x.dtype]
        if not x.shape or not w.shape:
            raise QueryError("bad_args", "0-d tensor in a communication composite")
        B = x.shape[0] * w.shape[-1] * s
        if mode == "per_rank_output":
            if n <= 1 or B % n:
                return None
            B //= n
        r = self.comm_csv(k, B, n, self.tier(g), meth)
        return None if isinstance(r, str) else r

    # ---- §11 ----
    def moe(self, e, q):
        kt = e["kernel_type"]
        if not truthy(kt):
            return miss("unmapped")
        t = self.table(kt)
        if t is None:
            return miss("csv_not_found")
        if t.has("EP Size") and self.cfg.ep is None:
            return miss("ep_size_not_configured")
        proj = None
        if truthy(e["project_full_shape"]):
            proj = project_dfc(q)
        if proj is not None:
            X, N = proj, None
        else:
            X, N = trunc(tensor_inputs(q.args), e["tc_input_count"]), e["tc_input_count"]

        def chk(k, tb, r, lat):
            m = self.match(X, tb, r, k, N)
            if m is None:
                return None
            rule = m[0]
            if proj is not None and rule == "identity":
                rule = "projected_full_shape"
            if tb.has("EP Size"):
                cc = tb.cell(r, "EP Size")
                if cc is NA:
                    return None
                try:
                    if pyint(cc) != self.cfg.ep:
                        return None
                except ConvFail:
                    raise CellFault(tb, r, "EP Size", text(cc))
            return (lat, 1.0, self.dist(*m), rule)
        c, reason = self.scan([kt], chk, "first" if self.q else "nearest")
        if c is None:
            return miss(reason or "shape_mismatch")
        return self.moe_finish(e, q, c[0], c[1], c[4], 1.0, "MEASURED")

    def moe_finish(self, e, q, base_lat, kernel, rule, conf, source):
        """§11.3 with the DFC latency given (also used by default-mode interpolation)."""
        a = q.args
        hits = []
        ec = e["embedded_compute"]
        items = ec if isinstance(ec, list) else ([] if ec is None else [ec])
        for it in items:
            if not isinstance(it, dict):
                continue
            h = self.embedded_compute(it, a)
            if h is not None:
                hits.append(h)
        base = base_lat + sum_in_order(hits)
        subs = [[kernel, round(base_lat, 2)]] + [[k, round(v, 2)] for v, k in hits]
        cm = e["embedded_communication"]
        if not isinstance(cm, dict):
            return Result(True, base, source, conf, rule, kernel, None, subs)
        ck = cm.get("kernel_type")
        meth = cm.get("interpolation_method", "alpha_beta")
        if not (isinstance(ck, str) and ck.startswith("hcom_") and meth in ("alpha_beta", "bracket_linear")):
            return miss("invalid_moe_embedded_communication")
        ctx = None
        if len(a) >= 2 and is_t(a[0]) and is_t(a[1]) and isinstance(a[-1], list) \
                and cm.get("message_bytes_mode") == "routed_input":
            x, ee, g = a[0], a[1], a[-1]
            topk = ee.shape[-1] if len(ee.shape) >= 2 else 1
            n = len(g)
            if topk > 0 and not (cm.get("group_type") == "expert_parallel"
                                 and (self.cfg.ep is None or n != self.cfg.ep)):
                ctx = (numel(x.shape) * DT_SIZE[x.dtype] * topk, n, g)
        if ctx is None:
            return miss("moe_embedded_communication_context_mismatch")
        r = self.comm_csv(ck, ctx[0], ctx[1], self.tier(ctx[2]), meth)
        if isinstance(r, str):
            if r == "shape_mismatch":
                return Result(True, base, source, conf, rule, kernel, None, subs)
            return Result(True, base, "PARTIAL", 0.5, rule, kernel, None, subs)
        lat, interp = r
        if source == "MEASURED":
            source2, conf2 = ("INTERPOLATED", 0.8) if interp else ("MEASURED", 0.9)
        else:
            source2, conf2 = source, conf
        return Result(True, base + lat, source2, conf2, rule, kernel, None,
                      subs + [[ck, round(lat, 2)]])

    def embedded_compute(self, it, a):
        proj = it.get("input_projection")
        k = it.get("kernel_type")
        if proj == "residual_norm_from_activation":
            if not a:
                return None
            A = first_tensor(a[0])
            if A is None or len(A.shape) < 2:
                return None
            s = A.shape
            if truthy(it.get("flatten_leading_dims")) and len(s) > 2:
                s = (numel(s[:-1]), s[-1])
            if len(s) != 2:
                return None
            h = s[1]
            c, _ = self.find_compute([k], [(s, A.dtype), (s, A.dtype), ((h,), A.dtype), ((h,), A.dtype)], 4, False)
            return (c[0], c[1]) if c else None
        if proj == "routing_weight_cast":
            od = it.get("output_dtype")
            if not (isinstance(k, str) and isinstance(od, str) and len(a) >= 2 and is_t(a[0]) and is_t(a[1])):
                return None
            X = [(a[1].shape, a[0].dtype)]

            def chk(kk, t, r, lat):
                m = self.match(X, t, r, kk, 1)
                if m is None:
                    return None
                if shapes(t, r, "Output Shapes") != [a[1].shape] or slist(t.cell(r, "Output Data Types")) != [od]:
                    return None
                return (lat, 1.0, self.dist(*m), m[0])
            c, _ = self.scan([k], chk, "nearest")
            return (c[0], c[1]) if c else None
        return None


def sum_in_order(hits):
    s = 0.0
    for v, _ in hits:
        s += v
    return s


def normalise_inputs(X, kt, nC):
    if kt in ROPE and len(X) >= 2 and nC >= 2:
        def bshd(s):
            return (s[0], s[2], s[1], s[3]) if len(s) == 4 else s

        def c3(s):
            return (s[0], s[1], 1, s[2]) if len(s) == 3 else s
        Q, K = X[0], X[1]
        out = [(bshd(K[0]), K[1]), (bshd(Q[0]), Q[1])]
        if len(X) >= 4:
            out += [(c3(X[2][0]), X[2][1]), (c3(X[3][0]), X[3][1])]
        return out
    if kt == "SwiGlu" and len(X) == 2 and nC == 1:
        s1, s2 = strip_batch(X[0][0]), strip_batch(X[1][0])
        if len(s1) == len(s2) and s1[:-1] == s2[:-1] and X[0][1] == X[1][1] and s1:
            return [(s1[:-1] + (s1[-1] + s2[-1],), X[0][1])]
        return X
    if kt in RAC and len(X) == 4 and nC == 5:
        a, b, c = X[0][0], X[1][0], X[2][0]
        if len(a) == 2 and len(b) == 2 and len(c) >= 2 and c[0] == 2:
            return [((a[0], 1, a[1]), X[0][1]), ((b[0], 1, b[1]), X[1][1]), (c[1:], X[2][1]),
                    (c[1:], X[2][1]), X[3]]
    return X


def fire(t, c, kt, i):
    """The first §5.3 test that holds: (test number, assigned rule or None), or None."""
    s = strip_batch(t)
    if t == c:
        return 1, None
    if s == strip_batch(c) or s == c:
        return 2, "batch_strip"
    if kt == "Index" and len(t) == 2 and len(c) == 2 and t[0] == 1 and c[1] == 1 and t[1] == c[0]:
        return 3, "singleton_axis_transpose"
    if kt in MATMUL and i >= 1 and len(s) == 2 and len(c) == 2 and s == (c[1], c[0]):
        return 4, "transpose"
    if kt in MATMUL and i >= 1 and len(s) == 3 and len(c) == 3 and s[0] == c[0] and (s[1], s[2]) == (c[2], c[1]):
        return 5, "batched_transpose"
    if padmatch(s, c):
        return 6, None
    if padmatch(s, strip_batch(c)):
        return 7, None
    if kt in FLATTEN and len(c) == 2:
        g = s if len(s) == 3 else t if len(t) == 3 else None
        if g is not None:
            f = (g[0] * g[1], g[2])
            if f == c:
                return 8, "flatten_3d"
            if padmatch(f, c):
                return 9, "flatten_3d+padding"
            if kt in MERGE:
                m = (g[0], g[1] * g[2])
                if m == c:
                    return 10, "merge_last_dims"
                if padmatch(m, c):
                    return 11, "merge_last_dims+padding"
    return None


def project_dfc(q):
    """§11.2: the 7 physical inputs, or None."""
    a = q.args
    if len(a) < 8 or not is_t(a[0]) or not is_t(a[1]):
        return None
    x, e = a[0], a[1]
    if len(x.shape) == 2:
        r, H = x.shape
    elif len(x.shape) == 3:
        r, H = x.shape[0] * x.shape[1], x.shape[2]
    else:
        return None
    if len(e.shape) < 1:
        return None
    op = q.op
    if op == "tensor_cast.dispatch_ffn_combine.default":
        W1, W2 = a[2], a[4]
    elif op in ("tensor_cast.dispatch_ffn_combine_%s.default" % v for v in ("quant", "quant_int4", "fp8", "mxfp4")):
        W1, W2 = a[2], a[7]
    else:
        return None

    def stack(W, axis):
        if not isinstance(W, list) or not W:
            return None
        w = first_tensor(W[0])
        if w is None or len(w.shape) != 2:
            return None
        p, qq = w.shape
        E = len(W)
        if axis == 0:
            if p == H:
                return (E, p, qq), w
            if qq == H:
                return (E, qq, p), w
        else:
            if qq == H:
                return (E, p, qq), w
            if p == H:
                return (E, qq, p), w
        return (E, p, qq), w
    s1, s2 = stack(W1, 0), stack(W2, 1)
    if s1 is None or s2 is None:
        return None
    g1, w1 = s1
    g2, w2 = s2
    E = g1[0]
    return [((r, H), x.dtype), (g1, w1.dtype), (g2, w2.dtype), (e.shape, "int32"), ((E * g1[-1],), "int64"),
            ((E * H,), "int64"), (e.shape, "float32")]
