"""Default-mode parse tables with opdb's merge columns, from the inputs (never from opdb's output).

extra_columns(CASE): a default-mode `parse_*` golden whose expected kernel_details tables came from
the default-mode oracle (36/52 columns).  Regroups the case's inputs as docs/INGEST.md §1 with opdb's
default-mode rules (unparsable durations skipped, op_summary spellings accepted), checks every
expected row's average, median and std against its group (so the grouping agrees with the oracle
that wrote the file), and inserts oracle.EXTRA after `Profiling Std Duration(us)`.

merge_case(CASE): a case whose cmd is `opdb parse --profiling-path A ... && opdb parse
--profiling-path B ... --merge`: writes expected/db from the samples of A and B (docs/ingest-formats.md
"Merging"): count, sum, sum of squares, min, max, average and std of the union exactly; median the
count-weighted mean of the two medians (clamped to [min, max]); metric averages count-weighted;
descriptive cells the first non-empty; rows in A's order, B's new shapes appended."""
import csv
import math
import os
import re
import shlex
import statistics

import oracle as O

ALIASES = {"OP Type": "Type", "Task Type": "Accelerator Core", "Task Duration(us)": "Duration(us)"}
DESC = ["OP State", "Accelerator Core", "Input Data Types", "Input Formats", "Output Data Types", "Output Formats"]


def read_rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if r]
    if not rows:
        return None, []
    return rows[0], rows[1:]


def col_map(header):
    cols = {}
    for i, h in enumerate(header):
        cols[h] = i  # DictReader: the last of duplicates wins
    for alias, canon in ALIASES.items():
        if canon not in cols and alias in cols:
            cols[canon] = max(i for i, h in enumerate(header) if h == alias)
    return cols


def py_float(s):
    try:
        return float(s)
    except ValueError:
        return None


def groups_of(files):
    """(type, in, out) -> {"durs", "desc", "m", "metrics"} in first-seen order (docs/INGEST.md §1, default mode)."""
    groups = {}
    for path in files:
        header, rows = read_rows(path)
        if header is None:
            continue
        cols = col_map(header)
        if not all(c in cols for c in ("Type", "Input Shapes", "Output Shapes", "Duration(us)")):
            continue

        def cell(r, name):
            i = cols.get(name)
            return r[i].strip() if i is not None and i < len(r) else ""

        for r in rows:
            typ = O.ALIASES.get(cell(r, "Type"), cell(r, "Type"))
            inp, out = cell(r, "Input Shapes"), cell(r, "Output Shapes")
            if O.is_na(inp) or O.is_na(out):
                continue
            d = py_float(cell(r, "Duration(us)"))
            if d is None:
                continue
            g = groups.setdefault((typ, inp, out), {"durs": [], "desc": [""] * 6, "m": [0.0] * 25,
                                                     "metrics": [False] * 25})
            g["durs"].append(d)
            for i, name in enumerate(DESC):
                if not g["desc"][i] and cell(r, name):
                    g["desc"][i] = cell(r, name)
            for m, name in enumerate(O.METRICS):
                if name in cols:
                    g["metrics"][m] = True
                    g["m"][m] += py_float(cell(r, name)) or 0.0 if cell(r, name) else 0.0
    return groups


def file_names(types):
    """Type -> file name as the default mode names them: sanitised, DEL too, no leading dot, later clashes ~k."""
    names, used = {}, set()
    for t in types:
        base = O.sanitize(t).replace("\x7f", "_")
        if base.startswith("."):
            base = "_" + base[1:]
        fname, k = base + ".csv", 2
        while fname in used:
            fname, k = "%s~%d.csv" % (base, k), k + 1
        used.add(fname)
        names[t] = fname
    return names


def csv_kind(path):
    """By the header (docs/ingest-formats.md §1): kernel_details has Type + Duration(us), op_summary OP Type +
    Task Duration(us)."""
    with open(path, "rb") as f:
        line = f.readline().decode("utf-8", "replace").lstrip("\ufeff")
    cells = {c.strip().strip('"').strip() for c in line.split(",")}
    if {"Type", "Duration(us)"} <= cells:
        return "kernel_details"
    if {"OP Type", "Task Duration(us)"} <= cells:
        return "op_summary"
    return None


def discover(root):
    """Default-mode inputs of a path: the file, or a folder's kernel_details CSVs by name or by content
    (else its op_summary ones)."""
    if os.path.isfile(root):
        return [root]
    found = {"kernel_details": [], "op_summary": []}
    for dirpath, _, files in os.walk(root):
        for fn in files:
            if not fn.endswith(".csv") or len(fn) <= 4:
                continue
            stem, path = fn[:-4].lower(), os.path.join(dirpath, fn)
            kind = csv_kind(path)  # content decides; a kernel_details name is always a candidate
            word = "kernel_details" if "kernel_details" in stem or kind == "kernel_details" else \
                "op_summary" if "op_summary" in stem or kind == "op_summary" else None
            if word:
                found[word].append(path)
    key = lambda p: os.path.relpath(p, root).split(os.sep)
    return sorted(found["kernel_details"], key=key) or sorted(found["op_summary"], key=key)


def fmt(x):
    return "%.6f" % x


def parse_args(cmd):
    """[(profiling path, database path, merge)] of each `opdb parse` in a case's cmd."""
    runs = []
    for part in re.split(r"&&|;", cmd):
        a = shlex.split(part)
        a = a[a.index("opdb"):] if "opdb" in a else []  # after any VAR=value prefix
        if a[:2] != ["opdb", "parse"]:
            continue
        runs.append((a[a.index("--profiling-path") + 1], a[a.index("--database-path") + 1]
                     if "--database-path" in a else None, "--merge" in a))
    return runs


def extra_columns(case):
    cmd = open(os.path.join(case, "cmd")).read()
    runs = parse_args(cmd)
    assert len(runs) == 1 and "--reference-quirks" not in cmd, case
    groups = groups_of(discover(os.path.join(case, runs[0][0])))
    by_file = {}
    names = file_names(list(dict.fromkeys(t for t, _, _ in groups if t)))
    for (t, inp, out), g in groups.items():
        if t:
            by_file.setdefault(names[t], {})[(inp, out)] = g
    changed = 0
    for dirpath, _, files in os.walk(os.path.join(case, "expected")):
        for fn in sorted(files):
            if not fn.endswith(".csv"):
                continue
            path = os.path.join(dirpath, fn)
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            h = rows[0] if rows else []
            if "Profiling Std Duration(us)" not in h or "Kernel Names" in h or O.EXTRA[0] in h:
                continue
            at = h.index("Profiling Std Duration(us)") + 1
            ci, co = h.index("Input Shapes"), h.index("Output Shapes")
            out_rows = [h[:at] + O.EXTRA + h[at:]]
            for r in rows[1:]:
                g = by_file[fn][(r[ci], r[co])]
                xs = g["durs"]
                want = [fmt(O.total(xs) / len(xs)), fmt(statistics.median(xs)), fmt(O.std(xs))]
                assert r[at - 3:at] == want, (path, r[at - 3:at], want)
                out_rows.append(r[:at] + O.extra_cells(xs) + r[at:])
            with open(path, "w", newline="", encoding="utf-8") as f:
                csv.writer(f, lineterminator="\r\n").writerows(out_rows)
            changed += 1
    return changed


def tables_case(case):
    """Whole expected tables of a one-parse default-mode case without FIA rows (same rules as merge_case)."""
    return merge_case(case, single=True)


def merge_case(case, replace=False, single=False):
    """replace: the second parse has no --merge: its tables replace the first's, other tables stay."""
    runs = parse_args(open(os.path.join(case, "cmd")).read())
    assert single or (len(runs) == 2 and runs[1][2] != replace and runs[0][1] == runs[1][1]), case
    parts = [groups_of(discover(os.path.join(case, p))) for p, _, _ in runs]
    merged = {}
    if replace:
        later = {k[0] for k in parts[1]}
        parts_used = [{k: g for k, g in parts[0].items() if k[0] not in later}, parts[1]]
    else:
        parts_used = parts
    for part in parts_used:
        for key, g in part.items():
            if key[0]:
                merged.setdefault(key, []).append(g)
    names = file_names(list(dict.fromkeys(k[0] for k in merged)))
    header = O.BASE + ["Profiling Average Duration(us)", "Profiling Median Duration(us)",
                       "Profiling Std Duration(us)"] + O.EXTRA + ["Profiling Average " + m for m in O.METRICS]
    tables = {}
    for (t, inp, out), gs in merged.items():
        xs = [x for g in gs for x in g["durs"]]
        n, lo, hi = len(xs), min(xs), max(xs)
        med = sum(len(g["durs"]) * float(fmt(statistics.median(g["durs"]))) for g in gs) / n
        desc = [next((g["desc"][i] for g in gs if g["desc"][i]), "") for i in range(6)]
        cells = [desc[0], desc[1], inp, desc[2], desc[3], out, desc[4], desc[5],
                 fmt(O.total(xs) / n), fmt(min(max(med, lo), hi)), fmt(O.std(xs))] + O.extra_cells(xs)
        for m in range(25):
            have = [g for g in gs if g["metrics"][m]]
            if not have:
                cells.append("")
                continue
            w = sum(len(g["durs"]) for g in have)
            cells.append(fmt(sum(float(fmt(g["m"][m] / len(g["durs"]))) * len(g["durs"]) for g in have) / w))
        tables.setdefault(names[t], []).append(cells)
    for fname, rows in tables.items():
        O.write(os.path.join(case, "expected", runs[0][1]), fname, header, rows)
    with open(os.path.join(case, "expected", "stdout"), "w", newline="") as f:
        for (p, db, _), part in zip(runs, parts):
            n = len({k[0] for k in part if k[0]})
            f.write("Generated %d csv file(s) under %s from %s\n" % (n, db, p))
    return len(tables)
