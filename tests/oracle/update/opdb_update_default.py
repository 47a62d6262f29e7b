"""opdb's default mode of `opdb update`: the re-indented reference
(start_microbench.py) with the fixes of docs/COMPATIBILITY.md "opdb update",
through the reference's `Hooks` (never imports or runs opdb):

* a `Task Duration(us)` that is not a finite, non-negative number is no sample;
  a shape with no sample left touches no row and is listed under "Rows Without
  Numeric Samples" (metrics still average over every launch, as before);
* `--ops X` takes only the database folder's own top-level `X.csv`;
* every duplicate row of a signature gets the update;
* profiled operators no CSV took are listed ("Profiled Operators Without CSV",
  Rows = its distinct shapes, in first-seen order); `--add-new-ops` makes their
  tables; default_report.transform() then splits off the ones outside the replay
  catalogue ("Not Replayable Here") and counts a new row once ("Rows Added");
* a profiled row whose Input or Output Shapes is `N/A` is never merged
  (`[SKIP] <table>: N profiled row(s) with N/A shapes not added ...`); an
  operator whose rows are all N/A, or whose OP Type is a number, gets no table;
* a report name already taken gets `_2`, `_3`... (md and csv together);
* clear errors, before anything is written: a table without `Input Shapes`, a
  table of 4,096 or more columns, an op_summary without `OP Type`, a quote left
  open at the end of a CSV;
* `--json` prints a JSON summary instead of the report; `--strict` exits 1 when
  no profiled row was merged.
Messages to stderr are opdb's wording only where a golden case checks them."""
import csv
import json
import math
import os
import re
import sys
from pathlib import Path

import start_microbench as ref
from default_report import transform
from reference_update_common import get_sig, load_csv_rows  # noqa: F401

MAX_COLUMNS = 4096
NA_NOTE = "(parse skips them too)"


class Run:
    """What the default-mode hooks collect during one run."""

    def __init__(self, args, target_dir):
        self.args = args
        self.target_dir = target_dir
        self.launches = {}          # op type -> profiled rows (first-seen order)
        self.no_numeric = {}        # csv path -> [sig_str]
        self.without_csv = []       # [op, rows]
        self.tables_before = {p.stem for p in target_dir.glob("*.csv")} if target_dir.is_dir() else set()
        self.merged = 0


RUN = None


def is_na_shape(value) -> bool:
    return (value or "").strip().strip('"').upper() == "N/A"


def has_na_shapes(row) -> bool:
    return is_na_shape(row.get("Input Shapes")) or is_na_shape(row.get("Output Shapes"))


def is_number_name(op) -> bool:
    return re.fullmatch(r"[0-9]+", op or "") is not None


def sanitize(op) -> str:
    return re.sub(r'[/<>:"\\|?*]', "_", op)


def check_quotes(path: Path):
    """A quote left open at the end of a CSV is an error naming the line it opened on."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    inq, line, start, at_field_start = False, 1, 0, True
    for ch in text:
        if inq:
            if ch == '"':
                inq = False
            elif ch == "\n":
                line += 1
            continue
        if ch == '"' and at_field_start:
            inq, start = True, line
        elif ch == '"':
            # a quote right after a closing quote ("" inside a quoted field)
            inq, start = True, line
        at_field_start = ch in ",\n\r"
        if ch == "\n":
            line += 1
    if inq:
        raise RuntimeError(f"{path}:{start}: unterminated quoted field")


class DefaultHooks(ref.Hooks):
    def csv_paths(self, target_dir, selected, paths):
        if not selected:
            return paths
        return [target_dir / f"{op}.csv" for op in selected if (target_dir / f"{op}.csv").is_file()]

    def summary_row(self, path, line, row):
        op = (row.get("OP Type", "") or "").strip()
        if op:
            RUN.launches[op] = RUN.launches.get(op, 0) + 1
        return True

    def duration(self, text):
        try:
            v = float(text)
        except (TypeError, ValueError):
            return None
        return v if math.isfinite(v) and v >= 0 else None

    def counter(self, text):  # a non-finite or negative counter counts as 0, like N/A
        v = ref.parse_float(text)
        return v if math.isfinite(v) and v >= 0 else 0.0

    def counter_mean(self, total, count):  # a sum past the largest double: left empty
        return f"{total / count:.6f}" if math.isfinite(total) else ""

    def match_targets(self, sig_all, s, existing_rows):
        return [existing_rows[i] for i in sig_all[s]]

    def csv_by_op(self, csv_by_op, aggregated, target_dir, found):
        out = dict(csv_by_op)
        if not found:  # a new database: a table per operator, minus numbers and N/A-only ones
            out = {}
        for op, rows in aggregated.items():
            if op in out or any(a in out for a in ref.PROFILE_OP_ALIASES.get(op, ())):
                continue
            if found and not RUN.args.add_new_ops:
                continue
            if is_number_name(op):
                print(f"OP Type '{op}' ({RUN.launches.get(op, 0)} profiled row(s)) is not an operator "
                      "name: no table made for it", file=sys.stderr)
                continue
            if all(has_na_shapes(r) for r in rows):
                print(f"every profiled row of {op} has N/A shapes (parse skips them): "
                      "no table made for it", file=sys.stderr)
                continue
            out[op] = target_dir / f"{sanitize(op)}.csv"
        for op, rows in aggregated.items():  # (a new database: the warnings above say it)
            if found and op not in out and not any(a in out for a in ref.PROFILE_OP_ALIASES.get(op, ())):
                RUN.without_csv.append([op, str(len(rows))])
        for path in out.values():  # every table is checked before any is written
            if path.exists():
                check_table(path)
        return out

    def report_sections(self, lines, results):
        lines.append("\n## Profiled Operators Without CSV\n" + ref.md_table(["Operator", "Rows"], RUN.without_csv))
        rows = [[r.csv_path.stem, str(len(RUN.no_numeric[r.csv_path])),
                 "; ".join(RUN.no_numeric[r.csv_path][:ref.MAX_EXAMPLE_DISPLAY])]
                for r in sorted((r for r in results if RUN.no_numeric.get(r.csv_path)),
                                key=lambda x: (-len(RUN.no_numeric[x.csv_path]), x.csv_path.name))]
        lines.append("\n## Rows Without Numeric Samples\n" + ref.md_table(["Operator", "Count", "Examples"], rows))

    def report_names(self, report_dir, ts):
        n = 1
        while True:
            sfx = "" if n == 1 else f"_{n}"
            gap = report_dir / f"duration_gap_hotspots_full_{ts}{sfx}.csv"
            md = report_dir / f"profile_update_report_{ts}{sfx}.md"
            if not gap.exists() and not md.exists():
                return gap, md
            n += 1

    def print_report_text(self, content, results, gaps, report_path):
        mode_all = RUN.args.update_mode == "all"
        k = content.index("\n\n## Duration Gap Hotspots\n")
        content = transform(content[:k], mode_all, lambda op: op in RUN.tables_before) + content[k:]
        if not RUN.args.json:
            print(content)
        return content


def check_table(path: Path):
    with path.open("r", encoding="utf-8-sig", newline="") as f:
        header = next(csv.reader(f), None)
    if header is None:
        return
    if len(header) >= MAX_COLUMNS:
        raise RuntimeError(f"{path}:1: the header has {MAX_COLUMNS} or more columns; opdb reads at most {MAX_COLUMNS - 1}")
    if "Input Shapes" not in header:
        raise RuntimeError(f"{path}:1: not a database table: the header has no Input Shapes column")


_ref_update_csv = ref.update_csv
_ref_aggregate = ref.aggregate_summary
_ref_print_report = ref.print_report


def update_csv(csv_path, rows_to_merge, mode, prune, match_only_rows=None):
    na = [r for r in rows_to_merge if has_na_shapes(r)]
    if na:
        print(f"[SKIP] {csv_path.name}: {len(na)} profiled row(s) with N/A shapes not added {NA_NOTE}.")
    keep = lambda rows: [r for r in rows if r.get(ref.MB_DUR) is not None]  # noqa: E731
    no_num = [get_sig(r, True) for r in rows_to_merge + (match_only_rows or [])
              if r.get(ref.MB_DUR) is None and not has_na_shapes(r)]
    RUN.no_numeric[csv_path] = no_num
    merge = keep([r for r in rows_to_merge if not has_na_shapes(r)])
    result = _ref_update_csv(csv_path, merge, mode, prune, keep(match_only_rows or []))
    RUN.merged += result.updated + result.added
    return result


def check_cut(path: Path, header):
    """A last record with no final newline and fewer fields than the header (quotes balanced): the file
    was cut while being written."""
    data = path.read_bytes()
    lines = data.splitlines()
    if not data or data[-1:] in (b"\n", b"\r") or len(lines) < 2 or lines[-1].count(b'"') % 2:
        return
    n = len(next(csv.reader([lines[-1].decode("utf-8", "replace")])))
    if n < len(header):
        raise RuntimeError(f"{path}:{len(lines)}: the last row has {n} of the header's {len(header)} fields and no "
                           "final newline (the file was cut while being written)")


def aggregate_summary(files, ep_size):
    for f in files:
        check_quotes(f)
        with f.open("r", encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), None) or []
        if "OP Type" not in header:
            raise RuntimeError(f"{f}:1: not an op_summary table: the header has no OP Type column")
        check_cut(f, header)
    return _ref_aggregate(files, ep_size)


def print_report(results, gaps, status, to_file=None):
    out = _ref_print_report(results, gaps, status, to_file)
    if RUN.args.json and out:
        print_json(results, gaps, out)
        return None
    return out


def print_json(results, gaps, paths):
    mode_all = RUN.args.update_mode == "all"
    enc = lambda v: "[" + ", ".join(json.dumps(x) for x in v) + "]"  # noqa: E731
    files = []
    for r in sorted(results, key=lambda x: x.csv_path.name):
        added = r.missing if mode_all else []
        files.append(
            "    {\n"
            f'      "operator": {json.dumps(r.csv_path.stem)},\n'
            f'      "path": {json.dumps(str(r.csv_path))},\n'
            f'      "updated": {r.updated},\n'
            f'      "added": {r.added},\n'
            f'      "deleted": {len(r.deleted)},\n'
            f'      "unchanged": {r.unchanged},\n'
            f'      "duplicate_signatures": {len(r.duplicates)},\n'
            f'      "missing": {enc([] if mode_all else r.missing)},\n'
            f'      "no_numeric_samples": {enc(RUN.no_numeric.get(r.csv_path, []))},\n'
            f'      "added_shapes": {enc(added)}\n'
            "    }")
    keep = [op for op, _ in RUN.without_csv if op in ref.REPLAY_OPS]
    nr = [op for op, _ in RUN.without_csv if op not in ref.REPLAY_OPS]
    text = ("{\n"
            f'  "report": {json.dumps(str(paths[0]))},\n'
            f'  "hotspot_csv": {json.dumps(str(paths[1]))},\n'
            f'  "hotspots": {len(gaps)},\n'
            '  "csv_files": [\n' + ",\n".join(files) + "\n  ],\n"
            f'  "profiled_operators_without_csv": {enc(keep)},\n'
            f'  "profiled_operators_not_replayable": {enc(nr)}\n'
            "}\n")
    sys.stdout.write(text)


def _print(*args, **kw):
    """opdb prints the reference's "[WARN] ..." merge lines as warnings on stderr."""
    text = " ".join(str(a) for a in args)
    if "file" not in kw and text.startswith("[WARN] "):
        print(f"opdb update: warning: {text[len('[WARN] '):]}", file=sys.stderr)
    else:
        print(*args, **kw)


def main(argv) -> int:
    global RUN
    # opdb's spelling of the reference's --prof-path (which stays accepted)
    argv = ["--prof-path" if a == "--profiling-path" else
            "--prof-path=" + a[len("--profiling-path="):] if a.startswith("--profiling-path=") else a for a in argv]
    parser = ref.build_argparser()
    parser.add_argument("--add-new-ops", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    target = ref.get_target_data_dir(
        device=args.device, vllm_ascend_version=args.vllm_version, database_path=args.database_path,
        torch_version=args.torch_version, cann_version=args.cann_version)
    if not Path(target).is_dir():  # opdb refuses a missing folder (a mistyped path), the reference creates it
        print(f"opdb update: database folder not found: {target}", file=sys.stderr)
        return 1
    RUN = Run(args, Path(target))
    ref.HOOKS = DefaultHooks()
    ref.update_csv = update_csv
    ref.aggregate_summary = aggregate_summary
    ref.print_report = print_report
    ref.print = _print
    try:
        rc = ref.main(argv, parser)
    except ValueError as e:  # opdb: an unknown --ops name is a usage error
        if not str(e).startswith("Unsupported --ops"):
            raise
        print(f"opdb update: error: argument --ops: {e}", file=sys.stderr)
        return 2
    if args.strict and RUN.merged == 0:
        print("opdb update: --strict: no profiled row was merged", file=sys.stderr)
        return 1
    return rc
