#!/usr/bin/env python3
"""Oracle for `opdb grid`, written from docs/GRID.md (the reference's code is not
available; only its CLI is documented).  Used ONLY by developers to produce
the expected outputs of tests/cli/grid_* cases; never run by the test suite.

  grid_oracle.py [--fixed] <opdb grid flags>
--fixed applies opdb's default-mode changes (docs/COMPATIBILITY.md): sampling
after the memory filter and dedup, constraints in model N/K mode, clean errors.
"""
import argparse, ast, csv, io, json, math, os, random, re, sys
from pathlib import Path
import yaml

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parents[2] / "src" / "grid" / "grid_config.yaml"

# ---- presets (§6.1)
P = {}
def preset(key, hf, hidden, inter, heads, kv, hd, ql, kl, nope, rope, experts, per_card, ei, topk, tps, eps):
    P[key] = dict(key=key, hf=hf, hidden=hidden, inter=inter, heads=heads, kv=kv, hd=hd, ql=ql, kl=kl,
                  nope=nope, rope=rope, experts=experts, per_card=per_card, ei=ei, topk=topk, tps=tps, eps=eps)
preset("deepseekv3", "deepseek-ai/DeepSeek-V3", 7168, 18432, 128, 1, 128, 1536, 512, 128, 64, 256, 32, 2048, 8, [1,2,4,8,16], [1,2,4,8])
preset("qwen332b", "Qwen/Qwen3-32B", 5120, 25600, 64, 8, 128, 0, 0, 0, 64, 0, 0, 0, 0, [1,2,4,8,16], [1])
preset("llama70b", "meta-llama/Meta-Llama-3-70B", 8192, 28672, 64, 8, 128, 0, 0, 0, 64, 0, 0, 0, 0, [1,4,8,16], [1])
preset("glm51", "zai-org/GLM-5.1", 6144, 12288, 64, 64, 256, 2048, 512, 192, 64, 256, 32, 2048, 8, [1,2,4,8,16], [1,2,4,8])
preset("glm52", "zai-org/GLM-5.2", 6144, 12288, 64, 64, 256, 2048, 512, 192, 64, 256, 32, 2048, 8, [1,2,4,8,16], [1,2,4,8])

def norm(n): return re.sub(r"[-_./ ]", "", n.lower())
ALIASES = {"dsv3": "deepseekv3", "metallama370b": "llama70b"}
for k, m in P.items(): ALIASES[norm(m["hf"])] = k
def resolve_model(n):
    k = norm(n); k = ALIASES.get(k, k)
    if k not in P:
        print(f"opdb grid: unknown model '{n}'", file=sys.stderr); sys.exit(2)
    return P[k]

def is_mla(m): return m["ql"] > 0 or m["kl"] > 0
def nk_pairs(models):
    s = set()
    for m in models:
        h = m["hidden"]
        for tp in m["tps"]:
            ht = max(1, h // tp)
            if is_mla(m):
                qup = max(1, m["heads"] * m["hd"] // tp)
                s |= {(m["ql"], h), (qup, m["ql"]), (m["kl"] + m["rope"], h), (qup, m["kl"])}
            else:
                s |= {(ht, h), (h, ht)}
            if m["inter"] > 0:
                g = max(1, m["inter"] // tp); s |= {(g, h), (h, g)}
    return sorted(s)

# ---- evaluator (§5.2)
def align(x, a): return ((x + a - 1) // a) * a
def ev(expr, vars_):
    if "." in expr or re.search(r"(^|\b|[._ ])__", expr):
        raise SystemExit(f"opdb grid: Failed to eval expression '{expr}' with vars {vars_}: forbidden")
    try:
        return eval(expr, {"__builtins__": {}}, dict(vars_, max=max, min=min, abs=abs, align=align))
    except Exception as e:
        raise SystemExit(f"opdb grid: Failed to eval expression '{expr}' with vars {vars_}: {e}")

def split_top(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(": depth += 1
        elif ch == ")": depth -= 1
        if ch == "," and depth == 0: out.append(cur); cur = ""
        else: cur += ch
    out.append(cur); return out
def shape(tmpl, vars_, refuse_negative=None):
    """refuse_negative: (pattern name, 'input'/'output') in opdb's default mode, where a
    negative dimension stops the run (exit 1); the reference writes it."""
    t = tmpl.strip()
    if t == "()": return ()
    t = t.lstrip("(").rstrip(")")
    dims = []
    for p in split_top(t):
        p = p.strip()
        if not p: continue
        dims.append(int(p) if re.fullmatch(r"-?\d+", p) else int(ev(p, vars_)))
        if refuse_negative and dims[-1] < 0:
            raise SystemExit(f"opdb grid: pattern '{refuse_negative[0]}' {refuse_negative[1]} shape '{tmpl}' has dimension "
                             f"{dims[-1]} with vars {vars_}: a dimension cannot be negative")
    return tuple(dims)

# ---- template expansion (§5)
def expand(pat, grids, models, fixed, name=None):
    its = [(k, grids[v] if isinstance(v, str) else list(v)) for k, v in pat["iterators"].items()]
    consts = {k: int(v) for k, v in (pat.get("constants") or {}).items()}
    cons = pat.get("constraints") or []
    nk = pat.get("model_nk_pairs") and models is not None
    if nk:
        its = [(k, v) for k, v in its if k not in ("N", "K")]
        pairs = nk_pairs(models)
    elif pat.get("model_nk_pairs"):
        its += [(k, grids[v] if isinstance(v, str) else list(v)) for k, v in pat["fallback_iterators"].items()]
    import itertools
    for combo in itertools.product(*[v for _, v in its]):
        base = dict(consts); base.update({k: c for (k, _), c in zip(its, combo)})
        envs = []
        if nk:
            for n, k in pairs: envs.append(dict(base, N=n, K=k))
        else:
            envs.append(base)
        for e in envs:
            if (not nk or fixed) and not all(ev(c, e) for c in cons): continue
            over = {col: ";".join(pat[k]) for k, col in (("input_dtypes", "Input Data Types"), ("input_formats", "Input Formats"),
                    ("output_dtypes", "Output Data Types"), ("output_formats", "Output Formats")) if pat.get(k) is not None}
            yield dict(inputs=[shape(s, e, fixed and (name, "input")) for s in pat["inputs"]],
                       outputs=[shape(s, e, fixed and (name, "output")) for s in pat["outputs"]], over=over)

# ---- complex generators (§6)
MOE_T = None
def gen_grouped(models, grids):
    for m in models:
        if m["experts"] <= 0: continue
        for ep in m["eps"]:
            for tp in m["tps"]:
                h = max(1, m["hidden"] // tp); ei = max(1, m["ei"] // tp); E = max(1, m["per_card"] // ep); r = max(1, ei // 16)
                for t in grids["MOE_TOKENS_GRID"]:
                    yield dict(inputs=[(t, h), (E, h, r, 16), (), (E, ei), (), (), (), (E,), (t,)], outputs=[(t, ei)], over={})
def gen_dfc(models, grids):
    for m in models:
        if m["experts"] <= 0: continue
        ex = m["experts"]; counts = set()
        for cards in (8, 16, 32, 64):
            if cards > ex: continue
            for ep in m["eps"]:
                if ep > ex // cards: continue
                e = max(1, (ex // cards) // ep)
                if 1 <= e <= 17: counts.add(e)
        seen = set(); h = m["hidden"]; k = m["topk"]
        for E in sorted(counts):
            for tp in m["tps"]:
                n = max(1, m["ei"] // tp) * 2
                for mm in grids["MOE_TOKENS_GRID"]:
                    if mm * h * k > 58 * 1024 * 1024: continue
                    key = (mm, h, n, E, k)
                    if key in seen: continue
                    seen.add(key)
                    yield dict(inputs=[(mm, h), (E, h, n), (E, n // 2, h), (mm, k), (E * n,), (E * h,), (mm, k)],
                               outputs=[(mm, h), (E,)], over={"EP Size": str(ex // E)})
def gen_split(models, grids):
    seen = set()
    for m in models:
        if is_mla(m): continue
        kv = m["kv"]; d = m["hd"]
        for tp in m["tps"]:
            if m["heads"] % tp: continue
            lq = m["heads"] // tp
            if kv >= tp: lkv = kv // tp
            elif tp % kv == 0: lkv = 1
            else: continue
            qh, kvh = lq * d, lkv * d
            for t in grids["ELEM_TOKENS_GRID"]:
                key = (t, qh, kvh, d)
                if key in seen: continue
                seen.add(key)
                yield dict(inputs=[(t, qh + 2 * kvh), (d,)], outputs=[(t, qh), (t, kvh), (t, kvh)],
                           over={"Input Data Types": "DT_BF16;DT_BF16", "Input Formats": "ND;ND",
                                 "Output Data Types": "DT_BF16;DT_BF16;DT_BF16", "Output Formats": "ND;ND;ND"})

FIA_COLS = ["Runtime source_profile", "Runtime actual_seq_lengths_shape", "Runtime actual_seq_lengths_values",
            "Runtime actual_seq_lengths_kv_shape", "Runtime actual_seq_lengths_kv_values", "Runtime avg_seq_len",
            "Runtime block_table_shape", "Runtime block_table_valid_blocks", "Runtime num_heads",
            "Runtime num_key_value_heads", "Runtime sparse_mode", "Runtime input_layout", "Runtime block_size",
            "Runtime metadata_completeness", "Runtime operator_input_shapes_raw"]
SCENES = {"qwen332b": (([1,2,4,8], [512,1024,2048,3072,3592,4096,4112,4608,5120,6144]),
                       ([1,2,4,8,12,16,24,32], [1024,2048,3072,3593,4096,4224,4352,4608,4864,5120,5376,5632])),
          "deepseekv3": (([1,2,4,8], [512,1024,2048,3072,4096,4099,4608,5120,6144]),
                         ([1,2,4,8,12,16], [1024,2048,3072,4096,4100,4224,4352,4608,4864,5120,5376,5632]))}
OTHER_SCENE = (([1,2,4,8], [256,512,1024,2048,4096,8192]), ([1,2,4,8,16,32], [512,1024,2048,4096,8192]))
def cum(vals):
    out, s = [], 0
    for v in vals: s += v; out.append(s)
    return out
def fia_row(scene, slots, out, layout, sparse, qv, kvv, avg, bt, valid, nh, nkv):
    dts, fms = [], []
    for i, s in enumerate(slots):
        if s is None: dts.append("DT_UNDEFINED"); fms.append("NULL"); continue
        dts.append({5: "INT64", 6: "INT64", 4: "INT8", 14: "INT32"}.get(i, "DT_BF16")); fms.append("ND")
    ex = {"Runtime source_profile": scene,
          "Runtime actual_seq_lengths_shape": str(len(qv)) if qv else "",
          "Runtime actual_seq_lengths_values": ",".join(map(str, qv)),
          "Runtime actual_seq_lengths_kv_shape": str(len(kvv)) if kvv else "",
          "Runtime actual_seq_lengths_kv_values": ",".join(map(str, kvv)),
          "Runtime avg_seq_len": "%.6f" % avg,
          "Runtime block_table_shape": f"{bt[0]},{bt[1]}" if bt else "",
          "Runtime block_table_valid_blocks": ",".join(map(str, valid)) if valid else "",
          "Runtime num_heads": str(nh), "Runtime num_key_value_heads": str(nkv),
          "Runtime sparse_mode": str(sparse), "Runtime input_layout": layout, "Runtime block_size": "128",
          "Runtime metadata_completeness": "shape_grid_scene_generated",
          "Runtime operator_input_shapes_raw": ";".join("" if s is None else ",".join(map(str, s)) for s in slots)}
    over = {"Input Data Types": ";".join(dts), "Input Formats": ";".join(fms)}
    over.update(ex)
    return dict(inputs=[() if s is None else s for s in slots], outputs=[out], over=over)
def gen_fia(models, grids):
    seen = set()
    def emit(r):
        key = (tuple(r["inputs"]), r["over"]["Input Data Types"], r["over"]["Input Formats"], tuple(r["outputs"]))
        if key in seen: return None
        seen.add(key); return r
    for m in models:
        (pb, ps), (db, ds) = SCENES.get(m["key"], OTHER_SCENE)
        N, d = m["heads"], m["hd"]
        if is_mla(m):
            L, R = m["kl"], m["rope"]
            for b in pb:
                for s in ps:
                    nb = max(1, math.ceil(s / 128)); tb = max(16, b * nb)
                    sl = [None] * 31
                    sl[0] = (b, N, s, L); sl[1] = sl[2] = (tb, 1, 128, L); sl[4] = (2048, 2048); sl[5] = sl[6] = (b,)
                    sl[14] = (b, nb); sl[24] = (b, N, s, R); sl[25] = (tb, 1, 128, R)
                    r = emit(fia_row(f"{m['key']}_mla_prefill", sl, (N, b, s, L), "BNSD_NBSD", 3, [s] * b, [s] * b,
                                     s, (b, nb), [nb] * b, N, 1))
                    if r: yield r
            for b in db:
                for a in ds:
                    nb = max(1, math.ceil(a / 128)); tb = max(16, b * nb)
                    sl = [None] * 31
                    sl[0] = (b, N, 1, L); sl[1] = sl[2] = (tb, 1, 128, L); sl[5] = sl[6] = (b,)
                    sl[14] = (b, nb); sl[24] = (b, N, 1, R); sl[25] = (tb, 1, 128, R)
                    r = emit(fia_row(f"{m['key']}_mla_decode", sl, (N, b, 1, L), "BNSD_NBSD", 0, [1] * b, [a] * b,
                                     a, (b, nb), [nb] * b, N, 1))
                    if r: yield r
            continue
        kv = m["kv"]; variants = []
        for tp in m["tps"]:
            if tp <= 0 or N % tp: continue
            if kv >= tp:
                if kv % tp: continue
                lkv = kv // tp
            elif tp % kv == 0: lkv = 1
            else: continue
            if any((N // tp, lkv) == (q, k) for _, q, k in variants): continue
            variants.append((tp, N // tp, lkv))
        for tp, q, k in variants:
            for b in pb:
                for s in ps:
                    T = b * s; sl = [None] * 31
                    sl[0] = (T, q, d); sl[1] = sl[2] = (T, k, d); sl[4] = (2048, 2048); sl[5] = sl[6] = (b,)
                    r = emit(fia_row(f"{m['key']}_dense_prefill_tp{tp}", sl, (T, q, d), "TND", 3, cum([s] * b),
                                     cum([s] * b), s, None, None, q, k))
                    if r: yield r
            for b in db:
                for a in ds:
                    nb = max(1, math.ceil(a / 128)); tb = max(16, b * nb); sl = [None] * 31
                    sl[0] = (b, q, d); sl[1] = sl[2] = (tb, k, 128, d); sl[4] = (2048, 2048); sl[5] = sl[6] = (b,)
                    sl[14] = (b, nb)
                    r = emit(fia_row(f"{m['key']}_dense_decode_tp{tp}", sl, (b, q, d), "TND", 3, cum([1] * b),
                                     [a] * b, a, (b, nb), [nb] * b, q, k))
                    if r: yield r
GENS = {"grouped_matmul": gen_grouped, "dispatch_ffn_combine": gen_dfc, "split_qkv_rmsnorm_rope": gen_split,
        "fused_attention": gen_fia}

# ---- signature (docs/FORMAT.md §3.5)
def split_slots(cell):
    c = cell.strip().strip('"')
    if not c: return []
    return [p.strip().strip('"') for p in c.split(";")]
def norm_shape(s):
    s = s.strip().strip('"').strip()
    if s in ("()", "N/A", "NA", "NULL", "None", "none"): return ""
    if s.startswith("(") and s.endswith(")"): s = s[1:-1]
    return ",".join(p for p in re.split(r"[,\s]+", s) if p)
def align_cells(shapes_cell, attr_cell):
    sh = [norm_shape(s) for s in split_slots(shapes_cell)]
    at = split_slots(attr_cell)
    n = max(len(sh), len(at)); sh += [""] * (n - len(sh)); at += [""] * (n - len(at))
    at = [a if sh[i] else "" for i, a in enumerate(at)]
    while sh and sh[-1] == "": sh.pop()
    while at and at[-1] == "": at.pop()
    return ";".join(sh), ";".join(at)
def dims(s):
    try: return tuple(int(x) for x in s.split(",")) if s else None
    except ValueError: return None
def sig(row, op):
    g = lambda k: row.get(k) or ""
    if op in ("MatMulV2", "MatMulV3", "MatMulCommon"):
        ins = [norm_shape(s) for s in split_slots(g("Input Shapes"))]
        outs = [norm_shape(s) for s in split_slots(g("Output Shapes"))]
        if len(ins) >= 2 and outs:
            A, B, O = dims(ins[0]), dims(ins[1]), dims(outs[0])
            if A and B and O and len(A) == 2 and len(B) == 2 and len(O) == 2:
                m, n = O; k = None
                if A[0] == m:
                    if B[0] == n and A[1] == B[1]: k = A[1]
                    elif B[1] == n and A[1] == B[0]: k = A[1]
                if k is None:
                    common = set(A) & set(B); cand = common - {m, n}
                    if len(cand) == 1: k = next(iter(cand))
                    elif len(common) == 1: k = next(iter(common))
                if k is not None:
                    return ("MM", f"{m},{k};{n},{k}", ";".join(split_slots(g("Input Data Types"))[:2]),
                            ";".join(split_slots(g("Input Formats"))[:2]), f"{m},{n}",
                            align_cells(g("Output Shapes"), g("Output Data Types"))[1])
    ish, idt, ifm = g("Input Shapes"), g("Input Data Types"), g("Input Formats")
    if op == "Index":
        outs = [norm_shape(s) for s in split_slots(g("Output Shapes"))]
        ins = split_slots(ish)
        if outs and outs[0] and ins:
            d, f = split_slots(idt), split_slots(ifm)
            ish = ins[0] + ";" + outs[0]
            idt = ";".join([d[0], d[-1]]) if d else ""
            ifm = ";".join([f[0], f[-1]]) if f else ""
    elif op in ("Slice", "SliceAiCore", "Transpose", "TransposeAiCore"):
        ins, d = split_slots(ish), split_slots(idt)
        ish = ins[0] if ins else ""; idt = d[0] if d else ""; ifm = "ND"
    a, b = align_cells(ish, idt); _, c = align_cells(ish, ifm)
    o, od = align_cells(g("Output Shapes"), g("Output Data Types"))
    t = ("G", a, b, c, o, od)
    if op == "DispatchFFNCombine": t += (g("EP Size").strip(),)
    return t

# ---- row building (§7)
ABSENT_TOK = {"", "N/A", "NA", "NULL", "NONE", "UNDEFINED"}
ABSENT_ATTR = {"", "NULL", "NONE", "UNDEFINED", "DT_UNDEFINED"}
def tolerant_count(cell):
    c = (cell or "").strip()
    if c.upper() in ABSENT_TOK: return 0
    c = c.strip('"').strip("'")
    if not c: return 0
    parts, cur, depth = [], "", 0
    for ch in c:
        if ch == "(": depth += 1
        elif ch == ")": depth -= 1
        if ch == ";" and depth == 0: parts.append(cur); cur = ""
        else: cur += ch
    if cur: parts.append(cur)   # a final ';' opens no slot (§7.1)
    return len(parts)
def render(shapes):
    if not shapes: return ""
    return '"' + ";".join(",".join(map(str, s)) for s in shapes) + '"'
def clear_absent(shapes, attr_cell):
    if attr_cell is None: return
    parts = attr_cell.split(";")
    for i in range(len(shapes)):
        if i < len(parts) and parts[i].strip().upper() in ABSENT_ATTR: shapes[i] = ()
ZERO_WORDS = ("duration", "latency", "time", "cycles", "ratio", "miss", "utilization")
COPY = ("OP State", "Accelerator Core", "Input Data Types", "Output Data Types", "Input Formats", "Output Formats", "Output Shapes")
def build(header, tmpl, cand):
    row = {}
    for h in header:
        if h in COPY: row[h] = tmpl.get(h, "")
        elif h == "Input Shapes": row[h] = ""
        elif any(w in h.lower() for w in ZERO_WORDS): row[h] = "0"
        else: row[h] = tmpl.get(h, "")
    row["Input Shapes"] = render(cand["inputs"])
    if "Output Shapes" in header: row["Output Shapes"] = render(cand["outputs"])
    for k, v in cand["over"].items(): row[k] = v
    return row

def prepare(c, tmpl, kin, kout):
    """Slot alignment and absent-slot clearing (§7.1) of one candidate."""
    c = dict(c, inputs=list(c["inputs"]), outputs=list(c["outputs"]))
    c["inputs"] += [()] * (kin - len(c["inputs"])); c["outputs"] += [()] * (kout - len(c["outputs"]))
    for lst, dk, fk in ((c["inputs"], "Input Data Types", "Input Formats"), (c["outputs"], "Output Data Types", "Output Formats")):
        for k in (dk, fk):
            clear_absent(lst, c["over"].get(k, tmpl.get(k)) if (k in c["over"] or k in tmpl) else None)
    return c

# ---- coverage of the target models (opdb only, docs/COMPATIBILITY.md)
def is_model_driven(p): return "generator_function" in p or bool(p.get("model_nk_pairs"))
def parse_float(s):
    try: return float(s)
    except (TypeError, ValueError): return 0.0
def complete(r):  # docs/FORMAT.md §3.3: a valid Average Duration(us) or Profiling Average Duration(us)
    return parse_float(r.get("Average Duration(us)")) > 0 or parse_float(r.get("Profiling Average Duration(us)")) > 0
def coverage_text(cov):
    out = ["Coverage of the target models (distinct shapes within the memory budget; measured: a row with a duration; pending: a row without one):",
           "%-32s %-32s %10s %10s %10s %10s" % ("model", "operator", "shapes", "measured", "pending", "new")]
    for c in cov:
        out.append("%-32s %-32s %10d %10d %10d %10d" % (c["model"], c["operator"], c["shapes"], c["measured"], c["pending"], c["new"]))
    return "\n".join(out)

# ---- memory (§9)
SIZES = {}
for ks, v in ((("DT_FLOAT", "DT_FLOAT32", "FLOAT"), 4), (("DT_FLOAT16", "DT_BF16", "DT_BFLOAT16"), 2),
              (("DT_FLOAT64", "DT_DOUBLE"), 8), (("DT_INT8", "INT8", "DT_UINT8", "UINT8", "DT_BOOL", "BOOL"), 1),
              (("DT_INT16", "INT16", "DT_UINT16"), 2), (("DT_INT32", "INT32", "DT_UINT32"), 4),
              (("DT_INT64", "INT64", "DT_UINT64"), 8), (("DT_COMPLEX64",), 8), (("DT_COMPLEX128",), 16),
              (("DT_FLOAT8_E4M3", "DT_FLOAT8_E5M2", "DT_FLOAT8"), 1)):
    for k in ks: SIZES[k] = v
def dtl(cell): return [p for p in re.split(r"[;\s]+", cell or "") if p]
def row_bytes(cand, idt, odt):
    tot = 0
    for lst, dt in ((cand["inputs"], idt), (cand["outputs"], odt)):
        for i, s in enumerate(lst):
            if not s: continue
            tot += math.prod(s) * SIZES.get(dt[i].upper() if i < len(dt) else "", 2)
    return tot
def fmt_budget(b):
    if b >= 1024 ** 3: return "%.2f GiB" % (b / 1024 ** 3)
    if b >= 1024 ** 2: return "%.2f MiB" % (b / 1024 ** 2)
    if b >= 1024: return "%.2f KiB" % (b / 1024)
    return f"{b} B"

# ---- op_mapping + resolution (§3)
def load_meta(root):
    """op metadata (§3): operator_mappings is a mapping op name -> entry; anything else gives none."""
    p = root / "op_mapping.yaml"; meta = {}
    if not p.is_file(): return meta, False
    d = yaml.safe_load(p.read_text(encoding="utf-8"))
    ops = d.get("operator_mappings") if isinstance(d, dict) else None
    if not isinstance(ops, dict): return meta, True
    def name(v):  # a kernel type: a non-empty string or number
        if v is None or isinstance(v, (list, dict)) or v == "": return None
        return str(v)
    for e in ops.values():
        if not isinstance(e, dict): continue
        kt = name(e.get("kernel_type"))
        if kt is None: continue
        f = dict(zero_cost=bool(e.get("zero_cost")), composite=bool(e.get("composite")),
                 comm=e.get("category") == "communication", qm=e.get("query_mode"))
        meta.setdefault(kt, dict(f, alt=None))
        alts = e.get("alternate_kernel_types")
        for a in alts if isinstance(alts, list) else []:
            a = name(a)
            if a is not None: meta.setdefault(a, dict(f, alt=kt))
    return meta, True
def resolve(kt, cfg, meta):
    m = meta.get(kt, {})
    if m.get("zero_cost") or m.get("composite") or m.get("comm"): return None
    pat = cfg["assign"].get(kt)
    if pat is None and m.get("alt"): pat = cfg["assign"].get(m["alt"])
    if pat is None and m.get("qm") == "elementwise": pat = "elementwise_binary"
    if pat is None or pat not in cfg["patterns"]: return None
    return pat

# ---- configuration check (opdb reports a bad expression when the configuration is loaded)
FORBIDDEN = "'.' and '__' names are not allowed"   # opdb's OPDB_GRID_EXPR_FORBIDDEN
SAFE_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name, ast.Constant, ast.Load,
              ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd, ast.Not, ast.And,
              ast.Or, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
def expr_problem(e):
    """None if e is a valid expression; FORBIDDEN for the rule of docs/GRID.md §5.2; "" for
    any other refusal (opdb then names the offset; the expected line stops at the expression)."""
    if len(e) > 512: return ""
    if "." in e or re.search(r"(^|\b|[._ ])__", e): return FORBIDDEN
    try: tree = ast.parse(e, mode="eval")
    except SyntaxError: return ""
    for n in ast.walk(tree):
        if not isinstance(n, SAFE_NODES): return ""
        if isinstance(n, ast.Constant) and type(n.value) is not int: return ""
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in ("max", "min", "abs", "align")): return ""
    return None
def check_config(path, text):
    """Every constraint and non-literal shape dimension, in file order (pattern, constraints, inputs,
    outputs); exits 2 with "<path>:<line>: bad expression '<e>'[: <reason>]" at the first bad one."""
    root = yaml.compose(text)
    pats = next((v for k, v in root.value if k.value == "patterns"), None)
    for _, pn in (pats.value if pats else []):
        if not isinstance(pn, yaml.MappingNode): continue
        sect = {k.value: v for k, v in pn.value}
        if "generator_function" in sect: continue
        exprs = [(c.value, c) for c in getattr(sect.get("constraints"), "value", [])]
        for key in ("inputs", "outputs"):
            for tn in getattr(sect.get(key), "value", []):
                t = tn.value.strip(" \t")
                if t == "()": continue
                exprs += [(d, tn) for d in (x.strip(" \t") for x in split_top(t.lstrip("(").rstrip(")"))) if d and not d.isdigit()]
        for e, node in exprs:
            why = expr_problem(e)
            if why is not None:
                print(f"opdb grid: {path}:{node.start_mark.line + 1}: bad expression '{e}'" + (f": {why}" if why else ""), file=sys.stderr)
                sys.exit(2)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--target-models"); ap.add_argument("--data-dir"); ap.add_argument("--database-path")
    ap.add_argument("--rows", type=int, default=1000); ap.add_argument("--seed", type=int)
    ap.add_argument("--max-hbm-gb", type=float, default=32.0); ap.add_argument("--reference-quirks", action="store_true")
    ap.add_argument("--config"); ap.add_argument("--plan", action="store_true"); ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    fixed = a.fixed
    if a.config: check_config(a.config, Path(a.config).read_text())
    raw = yaml.safe_load(Path(a.config).read_text() if a.config else CONFIG.read_text())
    cfg = dict(patterns=raw["patterns"], grids=raw["grids"], assign={})
    for pat, kts in raw["assignments"].items():
        for kt in kts: cfg["assign"][kt] = pat
    names = [x.strip() for x in a.target_models.split(",") if x.strip()] if a.target_models else []
    models = [resolve_model(n) for n in names] if names else None
    allm = models or list(P.values())
    root = Path(a.data_dir or a.database_path)
    if not root.is_dir(): sys.exit(f"Data directory does not exist: {root}")
    files = sorted((p for p in root.rglob("*.csv") if ".tmp.csv" not in p.name), key=lambda p: p.parts)
    if not files: sys.exit(f"No CSV files found under: {root}")
    meta, have_map = load_meta(root)
    cap = a.rows if a.rows > 0 else 0
    if not a.plan and not a.json and not fixed:
        print(f"Mode: theory | Target models: {names if names else 'ALL (full grid)'}")
        print(f"Config: config.yaml | op_mapping: {have_map} | max_rows/csv: {cap if cap else 'unlimited'}")
    elif not a.plan and not a.json:  # opdb: plain English, no Python reprs
        print(f"Target models: {', '.join(names) if names else 'all presets (full grid)'}")
        print(f"Configuration: {a.config or 'built-in'}; op_mapping.yaml: {'read' if have_map else 'none'}; "
              + (f"at most {cap} new rows per CSV file" if cap else "no cap on new rows per CSV file"))
    budget = int(a.max_hbm_gb * 1024 ** 3) if a.max_hbm_gb > 0 else 0
    if budget and not a.plan and not a.json: print(f"HBM budget: {a.max_hbm_gb:.1f} GiB per shape row")
    NEED = {"dispatch_ffn_combine": ["EP Size"], "fused_attention": ["Input Data Types", "Input Formats"],
            "split_qkv_rmsnorm_rope": ["Input Data Types", "Input Formats", "Output Data Types", "Output Formats"]}
    if fixed:  # opdb: every file is checked before any is rewritten
        for f in files:
            pat = resolve(f.stem, cfg, meta)
            if pat is None: continue
            rows = [r for r in csv.reader(io.StringIO(f.read_bytes().decode("utf-8").lstrip("\ufeff"), newline="")) if r]
            if len(rows) < 2 or "Input Shapes" not in rows[0]: continue
            hdr = rows[0] + (FIA_COLS if f.stem == "FusedInferAttentionScore" else [])
            for col in NEED.get(cfg["patterns"][pat].get("generator_function"), []):
                if col not in hdr: sys.exit(f"opdb grid: {f}:1: no '{col}' column, which {pat} rows need; no file was changed")
    # coverage: default mode, and --plan in both modes (the reference prints none)
    want_cov = models is not None and (fixed or a.plan)
    cov_models = [m for i, m in enumerate(models or []) if m["key"] not in [x["key"] for x in models[:i]]]
    coverage = []
    plan = []
    rng = random.Random(a.seed) if cap else None
    total, skipped = 0, []
    for f in files:
        kt = f.stem
        pat = resolve(kt, cfg, meta)
        if pat is None:
            skipped.append((f.name, "no theory generator")); plan.append((str(f), "no theory generator")); continue
        text = f.read_bytes().decode("utf-8")
        if fixed and text.startswith("\ufeff"): text = text[1:]
        rows = list(csv.reader(io.StringIO(text, newline="")))
        rows = [r for r in rows if r]
        if not rows or "Input Shapes" not in rows[0] or len(rows) < 2:
            why = "empty file" if not rows else "no 'Input Shapes' column" if "Input Shapes" not in rows[0] else "no data rows"
            skipped.append((f.name, why)); plan.append((str(f), why))
            continue
        header = list(rows[0])
        if kt == "FusedInferAttentionScore":
            header += [c for c in FIA_COLS if c not in header]
        data = [dict(zip(header, r + [""] * (len(header) - len(r)))) for r in rows[1:]]
        tmpl = data[0]
        p = cfg["patterns"][pat]
        if "generator_function" in p: gen = GENS[p["generator_function"]](allm, cfg["grids"])
        else: gen = expand(p, cfg["grids"], models, fixed, pat)
        cands = list(gen)
        if cap and len(cands) > cap and not fixed: cands = rng.sample(cands, cap)
        kin, kout = tolerant_count(tmpl.get("Input Shapes")), tolerant_count(tmpl.get("Output Shapes"))
        idt, odt = dtl(tmpl.get("Input Data Types")), dtl(tmpl.get("Output Data Types"))
        seen = {sig(r, kt) for r in data}
        if want_cov and is_model_driven(p):
            for m in cov_models:
                mc = GENS[p["generator_function"]]([m], cfg["grids"]) if "generator_function" in p else expand(p, cfg["grids"], [m], fixed, pat)
                shapes = []
                for c in mc:
                    c = prepare(c, tmpl, kin, kout)
                    if budget and row_bytes(c, idt, odt) > budget: continue
                    s = sig(build(header, tmpl, c), kt)
                    if s not in shapes: shapes.append(s)
                done = {sig(r, kt) for r in data if complete(r)}
                meas = sum(1 for s in shapes if s in done); pend = sum(1 for s in shapes if s in seen and s not in done)
                coverage.append(dict(model=m["hf"], operator=kt, file=str(f), shapes=len(shapes), measured=meas,
                                     pending=pend, new=len(shapes) - meas - pend))
        new, dropped = [], 0
        for c in cands:
            c = prepare(c, tmpl, kin, kout)
            if budget and row_bytes(c, idt, odt) > budget: dropped += 1; continue
            r = build(header, tmpl, c)
            if fixed and "EP Size" in c["over"] and "EP Size" not in header:
                sys.exit(f"opdb grid: {f}: no 'EP Size' column")
            s = sig(r, kt)
            if s in seen: continue
            seen.add(s); new.append((c["inputs"], r))
        if dropped: print(f"\n[MEMORY] {f.name}: filtered {dropped}/{len(cands)} rows exceeding {fmt_budget(budget)} HBM budget", file=sys.stderr)
        nded = len(new)
        if cap and fixed and len(new) > cap: new = rng.sample(new, cap)
        plan.append((str(f), (len(cands), len(cands) - dropped, nded, len(new))))
        if a.plan: continue
        new.sort(key=lambda x: x[0])
        out = io.StringIO(newline="")
        w = csv.writer(out, lineterminator="\r\n")
        w.writerow(header)
        for r in data: w.writerow([r.get(h, "") for h in header])
        for _, r in new:
            missing = [k for k in r if k not in header]
            if missing: sys.exit(f"opdb grid: {f}:1: no '{missing[0]}' column, which {pat} rows need; nothing written to this file")
            w.writerow([r.get(h, "") for h in header])
        f.write_bytes(out.getvalue().encode("utf-8"))
        total += len(new)
        if not new: skipped.append((f.name, "no new rows"))
    if a.json:  # a run's object is the plan's, after the rows were appended
        keys = ("candidates", "after_memory_filter", "after_dedup", "to_append")
        tot = [0, 0, 0, 0]; fl = []
        for (path, v) in plan:
            skip = v if isinstance(v, str) else None
            v = (0, 0, 0, 0) if skip else v
            tot = [x + y for x, y in zip(tot, v)]
            fl.append(dict([("file", path), ("skipped", skip)] + list(zip(keys, v))))
        doc = dict(files=fl, total=dict(zip(keys, tot)))
        doc["coverage"] = coverage if models is not None else None
        print(json.dumps(doc, indent=2))
        return
    if a.plan:
        print("%-48s %12s %12s %12s %12s" % ("file", "candidates", "memory_ok", "new", "to_append"))
        tot = [0, 0, 0, 0]
        for path, v in plan:
            name = Path(path).name
            if isinstance(v, str): print("%-48s skipped: %s" % (name, v)); continue
            tot = [x + y for x, y in zip(tot, v)]
            print("%-48s %12d %12d %12d %12d" % ((name,) + v))
        print("%-48s %12d %12d %12d %12d" % tuple(["total"] + tot))
        if want_cov: print(coverage_text(coverage))
        return
    if fixed:  # opdb: skipped files are not counted as appended to
        print(f"Appended {total} rows to {len(files) - len(skipped)} of {len(files)} CSV files under {root}.")
    else:
        print(f"Appended {total} rows across {len(files)} CSV files under {root}.")
    if skipped:
        if fixed: print(f"Skipped {len(skipped)} file{'' if len(skipped) == 1 else 's'}:")
        else: print(f"Skipped {len(skipped)} files (no theory generator):")
        for s, why in skipped: print(f"  - {s} ({why})" if fixed else f"  - {s}")
    if want_cov: print(coverage_text(coverage))

if __name__ == "__main__":
    main()
