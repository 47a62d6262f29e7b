#!/usr/bin/env python3
"""Independent oracle for `opdb query`, written from docs/QUERY-RULES.md only.

  query_oracle.py --database-path DIR [--tp-size N] [--ep-size N] [--grid A,B,C]
                  [--sequence-parallel] [--no-interpolation] [--reference-quirks]
                  [--stats] [--strict] < queries.jsonl > results.jsonl
  query_oracle.py --database-path DIR --kernel KT --inputs '24,128;256,128'
                  --dtypes 'DT_BF16;DT_BF16' [--formats ..] [--outputs ..]
                  [--output-dtypes ..] [--match elementwise] [--param NAME=VALUE]...

Standard library plus PyYAML (Debian python3-yaml: the mapping is defined by
PyYAML's safe_load). Tier 2 features answer `unsupported:<feature>` MISSes. `--explain`
(qo_explain.py) covers the paths listed there; any other exits 99 (no oracle). See README.md."""
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from qo_base import (QueryError, Result, Unsupported, convert_value, miss, truthy)  # noqa: E402
from qo_exact import DB, DECOMPOSERS, Config, OpenError, Query  # noqa: E402
from qo_decomp import run_decomposer  # noqa: E402
import qo_explain as xp  # noqa: E402
import qo_interp  # noqa: E402
import qo_kernel  # noqa: E402


def exact(db, e, q):
    """§4.1 dispatch of the exact (base) lookup."""
    if e is None:
        xp.path("unmapped")
        return miss("unmapped")
    if truthy(e["composite"]):
        if q.op in DECOMPOSERS:
            kind, first = DECOMPOSERS[q.op]
            return run_decomposer(db, kind, first, e, q)
        return db.static_composite(e, q)
    if e["category"] == "communication":
        return db.comm_op(e, q)
    qm = e["query_mode"]
    if qm == "moe_fused":
        xp.unsupported(qm)
    if qm == "attention_special":
        return db.attention(e, q)
    if qm == "elementwise":
        return db.elementwise(e, q)
    if qm == "moe_fused":
        return db.moe(e, q)
    if qm == "mtp_projection":
        return db.mtp(e, q)
    if truthy(e["zero_cost"]):
        xp.path("zero_cost")
        return Result(True, 0.0, "MEASURED", 1.0, "zero_cost",
                      e["kernel_type"] if e.has("kernel_type") else "", None)
    if truthy(e["accepted_miss"]):
        xp.path("accepted_miss")
        return Result(True, 0.0, "MEASURED", 1.0, "accepted_miss", "accepted_miss", None)
    return db.compute(e, q)


def lookup(db, q):
    e = db.entry(q.op)
    r = exact(db, e, q)
    if not db.cfg.interp:
        return r
    if r.hit and r.source != "PARTIAL":
        return r
    # --explain: the stage stays exact where the wrapper's answer is the exact one (the default
    # mode's communication op without its rank group)
    if r.source == "PARTIAL":
        xp.unsupported("an exact PARTIAL given to the wrapper")
    if not (not db.q and not r.hit and r.reason == "insufficient_args" and e is not None
            and e["category"] == "communication"):
        xp.stage("interpolation")
    w = qo_interp.wrapper(db, e, q, r)
    if w.hit and w.source != "PARTIAL":
        return w
    if not db.q and r.hit and r.source == "PARTIAL":
        return r
    if w.hit:  # quirks: a PARTIAL from interpolation counts as its result
        return w
    return w


def parse_line(line):
    """(id, Query or kernel dict) or raises QueryError."""
    try:
        obj = json.loads(line)
    except ValueError:
        raise QueryError("bad_json", "line is not JSON")
    if not isinstance(obj, dict):
        raise QueryError("bad_json", "line is not a JSON object")
    return obj


def render(qid, r, error=None, mode=None):
    o = {"id": qid, "hit": r.hit,
         "latency_us": float(r.latency) if r.hit else None,
         "source": r.source,
         "confidence": float(r.confidence) if r.hit else None,
         "shape_match_rule": r.rule if r.hit else None,
         "kernel_type": r.kernel if r.hit else None,
         "miss_reason": None if r.hit else r.reason,
         "sub_kernel_durations": ([[k, float(v)] for k, v in r.subs] if r.hit and r.subs is not None else None)}
    if r.source == "MISS" and r.request is not None:
        o["request"] = r.request
    if error is not None:
        o["error"] = error
    if mode is not None:
        o["explain"] = xp.render(mode, r)
    return json.dumps(o)


def answer(db, line, explain=False):
    """One result line for one query line; also returns the result for --stats."""
    qid = None
    xp.start(explain)
    mode = ("reference-quirks" if db.cfg.quirks else "default") if explain else None
    try:
        obj = parse_line(line)
        qid = obj.get("id")
        has_op, has_k = "op" in obj, "kernel" in obj
        if has_op == has_k:
            raise QueryError("bad_query", "a query needs exactly one of op and kernel")
        if has_k:
            r = qo_kernel.kernel_query(db, obj)
            # default mode: a MISS names what to measure (attention and communication: with their object)
            if r.source == "MISS" and not db.cfg.quirks:
                r = copy.copy(r)  # results may be shared by a scan's cache
                r.request = qo_kernel.request_of(obj)
        else:
            op = obj["op"]
            if not isinstance(op, str):
                raise QueryError("bad_query", "op is not a string")
            if op.startswith("torch.ops."):
                op = op[len("torch.ops."):]
            args = obj.get("args", [])
            if args is None:
                args = []
            if not isinstance(args, list):
                raise QueryError("bad_query", "args is not a list")
            kw = obj.get("kwargs")
            if kw is None:
                kw = {}
            if not isinstance(kw, dict):
                raise QueryError("bad_query", "kwargs is not an object")
            q = Query(op, convert_value(args), convert_value(obj.get("out")), convert_value(kw))
            r = lookup(db, q)
        return render(qid, r, mode=mode), r, None
    except Unsupported as u:
        xp.unsupported("a Tier 2 gap")
        r = miss("unsupported:" + u.feature)
        return render(qid, r), r, "unsupported"
    except QueryError as ex:
        xp.unsupported("an error result")
        r = Result(False, None, "ERROR", None, None, None, "error:" + ex.code)
        return render(qid, r, str(ex)), r, "error"


USAGE = __doc__


def parse_ints(v, name, many=False):
    parts = v.split(",") if many else [v]
    if not all(x.isascii() and x.isdigit() for x in parts) or any(int(x) < 1 for x in parts):
        print(f"opdb query: {name}: integers >= 1 expected: {v}", file=sys.stderr)
        sys.exit(2)
    xs = [int(x) for x in parts]
    return xs if many else xs[0]


def main(argv):
    cfg = Config()
    dbdir = None
    stats = False
    strict = False
    explain = False
    collect_dir, collect_plan = None, False
    one = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) else None
        if a in ("--database-path", "--db"):
            dbdir = val
            i += 1
        elif a == "--tp-size":
            cfg.tp = parse_ints(val or "", a)
            i += 1
        elif a == "--ep-size":
            cfg.ep = parse_ints(val or "", a)
            i += 1
        elif a == "--grid":
            cfg.grid = parse_ints(val or "", a, True)
            i += 1
        elif a == "--sequence-parallel":
            cfg.sp = True
        elif a == "--no-interpolation":
            cfg.interp = False
        elif a == "--reference-quirks":
            cfg.quirks = True
        elif a == "--stats":
            stats = True
        elif a == "--strict":
            strict = True
        elif a == "--collect":
            if val is None:
                print("opdb query: --collect needs a value", file=sys.stderr)
                return 2
            collect_dir = val
            i += 1
        elif a == "--plan":
            collect_plan = True
        elif a == "--explain":
            explain = True
        elif a in ("--kernel", "--inputs", "--dtypes", "--formats", "--outputs", "--output-dtypes", "--match"):
            if val is None:
                print(f"opdb query: {a} needs a value", file=sys.stderr)
                return 2
            one[a[2:]] = val
            i += 1
        elif a == "--param":
            if val is None or "=" not in val:
                print("opdb query: --param needs NAME=VALUE", file=sys.stderr)
                return 2
            one.setdefault("param", []).append(val)
            i += 1
        else:
            print(f"opdb query: unknown option: {a}\n{USAGE}", file=sys.stderr)
            return 2
        i += 1
    if dbdir is None:
        print(f"opdb query: --database-path is required\n{USAGE}", file=sys.stderr)
        return 2
    if (collect_plan and collect_dir is None) or (collect_dir is not None and cfg.quirks):
        print("opdb query: --plan needs --collect; --collect needs the default mode", file=sys.stderr)
        return 2
    written = []
    try:
        db = DB(dbdir, cfg)
    except OpenError as e:
        print(f"opdb: error: {e}", file=sys.stderr)
        return 1
    if one:
        try:
            obj = qo_kernel.oneshot_query(one)
        except QueryError:
            print(f"opdb query: --kernel needs --inputs and --dtypes\n{USAGE}", file=sys.stderr)
            return 2
        line, r, kind = answer(db, json.dumps(obj), explain)
        sys.stdout.write(line + "\n")
        nothing = nothing_said(1, int(r.source in HIT_SOURCES), int(r.source == "MISS"), int(r.source == "ERROR"))
        return finish([line], collect_dir, collect_plan, strict, nothing)
    n = errors = unsupported = 0
    counts = {"MEASURED": 0, "INTERPOLATED": 0, "PARTIAL": 0, "MISS": 0, "ERROR": 0}
    out = sys.stdout
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line:
            continue
        try:
            text, r, kind = answer(db, line, explain)
        except xp.NoOracle as no:
            print(f"oracle: no oracle for: query --explain ({no})", file=sys.stderr)
            return 99
        out.write(text + "\n")
        written.append(text)
        n += 1
        counts[r.source] += 1
        errors += kind == "error"
        unsupported += kind == "unsupported"
    out.flush()
    if stats:
        h = counts["MEASURED"] + counts["INTERPOLATED"] + counts["PARTIAL"]
        print(f"opdb query: {n} queries: {h} hit (MEASURED {counts['MEASURED']}, INTERPOLATED "
              f"{counts['INTERPOLATED']}, PARTIAL {counts['PARTIAL']}), {counts['MISS']} miss, "
              f"{counts['ERROR']} error, {unsupported} unsupported", file=sys.stderr)
        if db.skipped:
            files = {f for f, _ in db.skipped}
            print(f"opdb query: {len(db.skipped)} malformed rows skipped in {len(files)} files", file=sys.stderr)
    if errors:
        print(f"opdb query: warning: {errors} of {n} query lines gave errors", file=sys.stderr)
    nothing = nothing_said(n, sum(counts[s] for s in HIT_SOURCES), counts["MISS"], counts["ERROR"])
    return finish(written, collect_dir, collect_plan, strict, nothing)


HIT_SOURCES = ("MEASURED", "INTERPOLATED", "PARTIAL")


def nothing_said(n, hits, misses, errors):
    """docs/QUERY.md, exit status: a run that answered nothing with a latency says so (one warning);
    the number of such warnings."""
    if n == 0:
        print("opdb query: warning: no query line on stdin: nothing was answered", file=sys.stderr)
    elif hits == 0:
        print(f"opdb query: warning: no query was answered with a latency: {misses} miss, {errors} error",
              file=sys.stderr)
    else:
        return 0
    return 1


def finish(lines, root, plan, strict, nothing):
    """--collect, then --strict: exit 1 when the run said it produced nothing meaningful."""
    rc, collected_nothing = collected(lines, root, plan)
    nothing += collected_nothing
    if rc == 0 and strict and nothing:
        print(f"opdb query: --strict: {nothing} warning(s) that the run produced nothing meaningful: exit 1",
              file=sys.stderr)
        return 1
    return rc


def collected(lines, root, plan):
    """--collect DIR: the batch's kernel-level misses become rows of DIR's tables (tests/oracle/grid/
    from_misses.py, the oracle of `opdb grid --from-misses`); its report goes to stderr. (exit code,
    1 when it added nothing)"""
    if root is None:
        return 0, 0
    sys.stdout.flush()
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "grid"))
    import from_misses
    rc, nothing = from_misses.collect(lines, "results", root, plan, False, sys.stderr)
    return rc, 1 if nothing else 0


def main_quirks(argv):
    return main(list(argv) + ["--reference-quirks"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
