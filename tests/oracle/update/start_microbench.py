"""Reference write-back tool (start_microbench.py) re-indented.

The code below is the seed's, statement for statement, with these changes only:
* the helper imports come from reference_update_common.py (the seed's `common`
  and `signature_utils` modules are not in the seeds; that file is written from
  the spec); `print_logo` (cosmetic, spec README) is dropped;
* the profiler is not run: `--prof-path P [P ...]` names existing profiler output
  (the reference's documented flag, docs/UPDATE.md §1.1; opdb takes several paths): the
  PROF dirs are every path named PROF_* plus the PROF_* folders below each path,
  a path that is not a folder is an error. So the msprof launch and its per-op
  fallback, the custom-OPP environment and NPU checks, the replay status file and
  the temp-dir clean-up are left out (no status section, no [CLEAN] line), and
  no device is visible (the DFC skip rule never fires);
* `--op` is accepted as an alias of `--ops` (docs/UPDATE.md §1.1 recommendation);
* the report timestamp is $OPDB_REPORT_TIMESTAMP when set (opdb's knob for
  reproducible file names, docs/COMPATIBILITY.md);
* `main()` takes argv and a parser; the `Hooks` methods (no-ops here) let opdb_update_default.py
  apply opdb's default-mode fixes without a second copy.
Run: python3 start_microbench.py --prof-path P --database-path D [...]"""
import argparse
import csv
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_update_common import (  # noqa: E402
    DEFAULT_DEVICE, SUPPORTED_DEVICES, REPLAY_OPS, check_version,
    csv_has_complete_microbench, get_target_data_dir,
    load_csv_rows, parse_float, row_has_valid_duration,
    row_has_only_invalid_durations,
)
from reference_update_common import get_sig, is_matmul_family, normalize_op_name  # noqa: E402

BASE_COLS = [
    "OP State", "Accelerator Core", "Input Shapes", "Input Data Types",
    "Input Formats", "Output Shapes", "Output Data Types", "Output Formats",
]
MATCH_COLS = [
    "Input Shapes", "Input Data Types", "Input Formats",
    "Output Shapes", "Output Data Types",
]
LEGACY_MB_DUR = "MicroBench Duration(us)"
MB_DUR = "Average Duration(us)"
PROF_AVG_DUR = "Profiling Average Duration(us)"
PROF_MED_DUR = "Profiling Median Duration(us)"
PROF_STD_DUR = "Profiling Std Duration(us)"
PROF_COLS = {
    k: f"Profiling Average {k}"
    for k in [
        "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)",
        "aic_mac_ratio", "aic_scalar_time(us)", "aic_scalar_ratio",
        "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)",
        "aic_mte2_ratio", "aic_fixpipe_time(us)", "aic_fixpipe_ratio",
        "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
        "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)",
        "aiv_scalar_ratio", "aiv_mte2_time(us)", "aiv_mte2_ratio",
        "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate",
        "cube_utilization(%)",
    ]
}
MB_EXTRA_COLS = {
    src: "MicroBench " + disp.removeprefix("Profiling Average ")
    for src, disp in PROF_COLS.items()
}
DISPATCH_FFN_OP = "DispatchFFNCombine"
PROFILE_OP_ALIASES = {
    "MatMulV2": ("MatMulV3", "MatMulCommon"),
    "MatMulV3": ("MatMulV2", "MatMulCommon"),
    "MatMulCommon": ("MatMulV2", "MatMulV3"),
}
GAP_BOUNDS = (0.8, 1.2)
MAX_GAP_DISPLAY = 20
MAX_EXAMPLE_DISPLAY = 3


@dataclass
class GapRecord:
    """Record for duration gap between microbench and profiling."""
    op_type: str
    csv_name: str
    signature: str
    mb_us: float
    prof_us: float
    diff_us: float
    ratio: float


@dataclass
class UpdateResult:
    """Result of updating a CSV file with profiling data."""
    csv_path: Path
    updated: int = 0
    added: int = 0
    unchanged: int = 0
    missing: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    duplicates: list[tuple[str, int]] = field(default_factory=list)
    gaps: list[GapRecord] = field(default_factory=list)


# ---- default-mode hooks (no-ops in the reference) ---------------------------
class Hooks:
    def csv_paths(self, target_dir, selected, paths):
        return paths

    def read_table(self, csv_path, fieldnames, rows):
        pass

    def summary_row(self, path, line, row):
        return True

    def duration(self, text):
        return parse_float(text)

    def counter(self, text):
        return parse_float(text)

    def counter_mean(self, total, count):
        return f"{total / count:.6f}"

    def match_targets(self, sig_idx_all, s, existing_rows):
        return None

    def new_row_allowed(self, csv_path, new_row):
        return True

    def extra_results(self, results, aggregated, csv_by_op, target_dir):
        pass

    def report_sections(self, lines, results):
        pass

    def report_names(self, report_dir, ts):
        return (report_dir / f"duration_gap_hotspots_full_{ts}.csv",
                report_dir / f"profile_update_report_{ts}.md")

    def csv_by_op(self, csv_by_op, aggregated, target_dir, found):
        return csv_by_op

    def print_report_text(self, content, results, gaps, report_path):
        print(content)
        return content


HOOKS = Hooks()


def list_ops() -> list[str]:
    """List available operator names from run scripts."""
    return sorted(normalize_op_name(p) for p in REPLAY_OPS)


def build_argparser() -> argparse.ArgumentParser:
    ops = ", ".join(list_ops())
    parser = argparse.ArgumentParser(
        prog="opdb update",
        formatter_class=argparse.RawTextHelpFormatter,
        epilog=f"Available operators: {ops}\n\nUpdate modes:\n"
        " all: Update all matched rows\n"
        " missing-only: Only fill rows with invalid durations")
    parser.add_argument("--prof-path", nargs="+", required=True)
    parser.add_argument("--database-path", type=Path)
    parser.add_argument("--device", default=DEFAULT_DEVICE, choices=SUPPORTED_DEVICES)
    parser.add_argument("--vllm-version", dest="vllm_version", type=check_version)
    parser.add_argument("--torch-version", type=check_version)
    parser.add_argument("--cann-version", type=check_version)
    parser.add_argument("--ops", "--op", nargs="+", help=f"Operators. Available: {ops}")
    parser.add_argument("--dispatch-ffn-combine-ep-size", type=int, default=16)
    parser.add_argument("--dispatch-ffn-combine-nproc-per-node", type=int, default=None)
    parser.add_argument("--dispatch-ffn-combine-nnodes", type=int, default=1)
    parser.add_argument("--dispatch-ffn-combine-node-rank", type=int, default=0)
    parser.add_argument("--dispatch-ffn-combine-master-addr", default="127.0.0.1")
    parser.add_argument("--dispatch-ffn-combine-master-port", type=int, default=None)
    parser.add_argument("--repeat-count", type=int, default=1)
    parser.add_argument("--update-mode", choices=("all", "missing-only"), default="all")
    parser.add_argument("--fail-fast", action="store_true")
    parser.add_argument("--prune-empty-duration-rows", action="store_true")
    return parser


def validate_ops(selected: list[str] | None) -> list[str] | None:
    if not selected:
        return None
    available = set(list_ops())
    normalized = [normalize_op_name(op) for op in selected]
    invalid = sorted(op for op in normalized if op not in available)
    if invalid:
        raise ValueError(f"Unsupported --ops: {', '.join(invalid)}. "
                         f"Available: {', '.join(sorted(available))}")
    return normalized


def find_prof_dirs(prof_paths: list[str]) -> set[Path]:
    """Seed 003's --prof-path: the given PROF dirs, and the PROF_* dirs below each path."""
    dirs: set[Path] = set()
    for text in prof_paths:
        p = Path(text)
        if not p.is_dir():
            raise FileNotFoundError(f"PROF path does not exist: {text}")
        if p.name.startswith("PROF_"):
            dirs.add(p)
        dirs.update(d for d in p.rglob("PROF_*") if d.is_dir())
    return dirs


def find_summary_files(
    prof_dirs: set[Path],
    *,
    raise_if_missing: bool = True,
) -> list[Path]:
    files = [
        f for d in sorted(prof_dirs)
        for f in sorted((d / "mindstudio_profiler_output").glob("op_summary_*.csv"))]
    if not files and raise_if_missing:
        raise FileNotFoundError("No op_summary_*.csv found")
    return files


def aggregate_summary(files: list[Path], ep_size: int | None
                      ) -> dict[str, list[dict[str, str]]]:
    grouped: dict[tuple[str, tuple], dict] = {}
    for csv_path in files:
        with csv_path.open("r", encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            for row in reader:
                if not HOOKS.summary_row(csv_path, reader.line_num, row):
                    continue
                op_type = (row.get("OP Type", "") or "").strip()
                if not op_type:
                    continue
                key = (op_type, get_sig(row, op_name=op_type))
                item = grouped.setdefault(key, {"count": 0, "row": row, "min_dur": None,
                                                "sums": defaultdict(float)})
                dur = HOOKS.duration(row.get("Task Duration(us)", ""))
                item["count"] += 1
                if dur is not None and (item["min_dur"] is None or dur < item["min_dur"]):
                    item["min_dur"] = dur
                for src in PROF_COLS:
                    item["sums"][src] += HOOKS.counter(row.get(src, ""))
    result: dict[str, list[dict[str, str]]] = defaultdict(list)
    for (op_type, _), item in grouped.items():
        cnt, src_row = item["count"], dict(item["row"])
        agg = {k: (src_row.get(k, "") or "").strip() for k in BASE_COLS}
        agg[MB_DUR] = f"{item['min_dur']:.6f}" if item["min_dur"] is not None else None
        agg["Accelerator Core"] = (src_row.get("Task Type", "") or "").strip()
        if normalize_op_name(op_type) == normalize_op_name(DISPATCH_FFN_OP) and ep_size:
            agg["EP Size"] = str(ep_size)
        for src, mb_col in MB_EXTRA_COLS.items():
            agg[mb_col] = HOOKS.counter_mean(item['sums'][src], cnt)
        result[op_type].append(agg)
    return result


def get_cols(fieldnames: list[str] | None) -> list[str]:
    exclude = {"MicroBench Task Duration(us)", "MicroBench Kernel Duration(us)"}
    if fieldnames is None:
        cols = list(BASE_COLS)
        cols.append(MB_DUR)
        cols.append(PROF_AVG_DUR)
        cols.append(PROF_MED_DUR)
        cols.append(PROF_STD_DUR)
        for prof_col in PROF_COLS.values():
            mb_col = "MicroBench " + prof_col.removeprefix("Profiling Average ")
            cols.append(mb_col)
            cols.append(prof_col)
        return cols
    cols = [c for c in fieldnames if c not in exclude]
    if LEGACY_MB_DUR in cols and MB_DUR not in cols:
        cols[cols.index(LEGACY_MB_DUR)] = MB_DUR
    if MB_DUR not in cols:
        cols = BASE_COLS + [MB_DUR] + [c for c in cols if c not in BASE_COLS]
    for prof_col in PROF_COLS.values():
        mb_col = "MicroBench " + prof_col.removeprefix("Profiling Average ")
        if prof_col in cols and mb_col not in cols:
            cols.insert(cols.index(prof_col), mb_col)
    return cols


def update_csv(csv_path: Path, rows_to_merge: list[dict[str, str]],
               mode: str, prune: bool,
               match_only_rows: list[dict[str, str]] | None = None) -> UpdateResult:
    result = UpdateResult(csv_path=csv_path)
    existing_rows, columns = [], get_cols(None)
    if csv_path.exists():
        with csv_path.open("r", encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            columns = get_cols(list(reader.fieldnames or []))
            existing_rows = list(reader)
            HOOKS.read_table(csv_path, list(reader.fieldnames or []), existing_rows)
    else:
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        if rows_to_merge:
            extra_cols = []
            for row in rows_to_merge:
                for k in row:
                    if k not in columns and k not in extra_cols:
                        extra_cols.append(k)
            columns = columns + extra_cols
    if normalize_op_name(csv_path.stem) == normalize_op_name(DISPATCH_FFN_OP) and "EP Size" not in columns:
        incoming_ep_sizes = {
            (row.get("EP Size", "") or "").strip()
            for row in [*(rows_to_merge or []), *((match_only_rows or []))]
            if (row.get("EP Size", "") or "").strip()
        }
        if len(incoming_ep_sizes) == 1:
            legacy_ep_size = next(iter(incoming_ep_sizes))
            columns.append("EP Size")
            for row in existing_rows:
                row["EP Size"] = legacy_ep_size
            print(
                f"[WARN] {csv_path.name} has no EP Size column; "
                f"using incoming EP Size={legacy_ep_size} for legacy row matching."
            )
    sig_idx: dict[tuple, int] = {}
    sig_all: dict[tuple, list[int]] = {}
    dup_counts: dict[tuple, int] = {}
    for i, row in enumerate(existing_rows):
        s = get_sig(row, op_name=csv_path.stem)
        sig_all.setdefault(s, []).append(i)
        if s in sig_idx:
            dup_counts[s] = dup_counts.get(s, 1) + 1
        else:
            sig_idx[s] = i
            dup_counts.setdefault(s, 1)
    result.duplicates = [(get_sig(existing_rows[sig_idx[s]], True), c)
                         for s, c in dup_counts.items() if c > 1]
    result.duplicates.sort(key=lambda x: (-x[1], x[0]))
    for row in existing_rows:
        if LEGACY_MB_DUR in row and MB_DUR not in row:
            row[MB_DUR] = row.get(LEGACY_MB_DUR, "")
    original = [{c: row.get(c, "") for c in columns} for row in existing_rows]

    def merge_row(
        new_row: dict[str, str],
        *,
        allow_add: bool,
        record_missing: bool,
        record_unchanged: bool,
    ) -> None:
        s = get_sig(new_row, op_name=csv_path.stem)
        if s not in sig_idx:
            if record_missing:
                result.missing.append(get_sig(new_row, True))
            if not allow_add:
                print(
                    f"[WARN] match-only profiling row did not match {csv_path.name}: "
                    f"{get_sig(new_row, True)}"
                )
            if allow_add and mode == "all" and HOOKS.new_row_allowed(csv_path, new_row):
                existing_rows.append(new_row)
                sig_idx[s] = len(existing_rows) - 1
                sig_all[s] = [len(existing_rows) - 1]
                result.added += 1
            return
        targets = HOOKS.match_targets(sig_all, s, existing_rows) or [existing_rows[sig_idx[s]]]
        for row in targets:
            can_update = mode == "all" or not row_has_valid_duration(row)
            if not can_update:
                if record_unchanged:
                    result.unchanged += 1
                else:
                    return
            else:
                old_mb = row.get(MB_DUR, "")
                row[MB_DUR] = new_row.get(MB_DUR, "")
                for mb_col in MB_EXTRA_COLS.values():
                    if mb_col in new_row:
                        row[mb_col] = new_row[mb_col]
                result.updated += (
                    1 if (old_mb or "").strip() != (row.get(MB_DUR) or "").strip() else 0)
            mb_us = parse_float(row.get(MB_DUR, ""))
            prof_us = parse_float(row.get(PROF_AVG_DUR, ""))
            if mb_us > 0 and prof_us > 0:
                result.gaps.append(GapRecord(
                    csv_path.stem, csv_path.name, get_sig(row, True),
                    mb_us, prof_us, abs(mb_us - prof_us), mb_us / prof_us))

    for new_row in rows_to_merge:
        merge_row(
            new_row,
            allow_add=True,
            record_missing=True,
            record_unchanged=True,
        )
    for new_row in match_only_rows or []:
        merge_row(
            new_row,
            allow_add=False,
            record_missing=False,
            record_unchanged=False,
        )
    kept, norm_orig = [], [{c: r.get(c, "") for c in columns} for r in original]
    for row in existing_rows:
        norm_row = {c: row.get(c, "") for c in columns}
        if prune and row_has_only_invalid_durations(norm_row):
            result.deleted.append(get_sig(norm_row, True))
        else:
            kept.append(norm_row)
    if not csv_path.exists() or kept != norm_orig:
        with csv_path.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            w.writerows(kept)
    return result


def update_db(target_dir: Path, aggregated: dict[str, list[dict[str, str]]],
              selected: list[str] | None, mode: str, prune: bool) -> list[UpdateResult]:
    if selected:
        csv_paths = [
            p for op in selected for p in sorted(target_dir.rglob(f"{op}.csv"))]
    else:
        avail = set(list_ops())
        csv_paths = sorted(
            p for p in target_dir.glob("*.csv") if normalize_op_name(p.stem) in avail)
    csv_paths = HOOKS.csv_paths(target_dir, selected, csv_paths)
    csv_by_op = {p.stem: p for p in csv_paths} if csv_paths else {
        op: target_dir / f"{op}.csv" for op in aggregated}
    csv_by_op = HOOKS.csv_by_op(csv_by_op, aggregated, target_dir, bool(csv_paths))
    results = []
    for op, path in sorted(csv_by_op.items()):
        rows_to_merge = list(aggregated.get(op, []))
        match_only_rows = []
        for alias in PROFILE_OP_ALIASES.get(op, ()):
            match_only_rows.extend(aggregated.get(alias, []))
        if is_matmul_family(op):
            match_only_rows = rows_to_merge + match_only_rows
            rows_to_merge = []
        results.append(update_csv(path, rows_to_merge, mode, prune, match_only_rows))
    HOOKS.extra_results(results, aggregated, csv_by_op, target_dir)
    return results


def should_skip_dispatch_ffn_msprof(
    selected_ops: list[str] | None,
    *,
    ep_size: int,
    nproc_per_node: int | None,
    visible_devices: int,
    update_mode: str,
    has_prof_path: bool,
) -> bool:
    if has_prof_path or update_mode != "missing-only" or ep_size <= 1:
        return False
    local_required = nproc_per_node or ep_size
    if visible_devices <= 0 or visible_devices >= local_required:
        return False
    if not selected_ops:
        return True
    return all(normalize_op_name(op) == normalize_op_name(DISPATCH_FFN_OP)
               for op in selected_ops)


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return "_None_"
    widths = [max(len(h), max((len(r[i]) for r in rows), default=0))
              for i, h in enumerate(headers)]
    fmt = lambda c: "| " + " | ".join(x.ljust(w) for x, w in zip(c, widths)) + " |"  # noqa: E731
    return "\n".join(
        [fmt(headers), "| " + " | ".join("-" * w for w in widths) + " |"] +
        [fmt(r) for r in rows])


def collect_gaps(results: list[UpdateResult]) -> list[GapRecord]:
    lower, upper = GAP_BOUNDS
    return sorted(
        [g for r in results for g in r.gaps if g.ratio < lower or g.ratio > upper],
        key=lambda x: (max(x.ratio, 1 / x.ratio), x.diff_us, x.op_type), reverse=True)


def _build_table_rows(results: list[UpdateResult], attr: str, sort_key=None
                      ) -> list[list[str]]:
    items = (
        sorted([r for r in results if getattr(r, attr)], key=sort_key)
        if sort_key else [r for r in results if getattr(r, attr)])
    rows = []
    for r in items:
        vals = getattr(r, attr)
        if attr == "duplicates":
            ex = "; ".join(f"{s} (x{c})" for s, c in vals[:MAX_EXAMPLE_DISPLAY])
        else:
            ex = "; ".join(vals[:MAX_EXAMPLE_DISPLAY]) or "-"
        rows.append([r.csv_path.stem, str(len(vals)), ex])
    return rows


def print_report(results: list[UpdateResult], gaps: list[GapRecord],
                 status: dict[str, Any] | None, to_file: Path | None = None
                 ) -> tuple[Path, Path] | None:
    update_rows = [
        [r.csv_path.stem, str(r.updated), str(r.added), str(len(r.deleted)),
         str(r.unchanged), "; ".join(r.missing[:MAX_EXAMPLE_DISPLAY]) or "-"]
        for r in sorted(results, key=lambda x: (-x.added, -x.updated, x.csv_path.name))]
    missing_rows = _build_table_rows(
        results, "missing", lambda x: (-len(x.missing), x.csv_path.name))
    deleted_rows = _build_table_rows(
        results, "deleted", lambda x: (-len(x.deleted), x.csv_path.name))
    duplicates_rows = _build_table_rows(
        results, "duplicates", lambda x: (-len(x.duplicates), x.csv_path.name))
    gap_rows = [
        [g.op_type, f"{g.mb_us:.6f}", f"{g.prof_us:.6f}",
         f"{g.diff_us:.6f}", f"{g.ratio:.2f}x", g.signature]
        for g in gaps[:MAX_GAP_DISPLAY]]
    lower, upper = GAP_BOUNDS
    overview = [
        ["CSV files touched", str(len(results))],
        ["Rows updated", str(sum(r.updated for r in results))],
        ["Rows added", str(sum(r.added for r in results))],
        ["Rows deleted", str(sum(len(r.deleted) for r in results))],
        ["Rows unchanged", str(sum(r.unchanged for r in results))],
        ["Duplicate signatures", str(sum(len(r.duplicates) for r in results))],
        ["Missing shapes", str(sum(len(r.missing) for r in results))],
        ["Hotspots", str(len(gaps))],
        ["Gap threshold", f"microbench/profiling not in [{lower:.2f}x, {upper:.2f}x]"]]
    lines = ["# Profile Update Report"]
    if status:
        lines.append(f"\n## Operator Execution Status\n"
                     f"- Success: {len(status.get('success', []))}\n"
                     f"- Failed: {len(status.get('failed', []))}\n"
                     f"- Skipped: {len(status.get('skipped', []))}")
        for item in status.get("failed", []):
            lines.append(f"  - FAILED: {item['op']}: {item['reason']}")
    lines.append("\n## Overview\n" + md_table(["Metric", "Value"], overview))
    lines.append("\n## Update Summary\n" + md_table(
        ["Operator", "Updated", "Added", "Deleted", "Unchanged", "Missing Samples"],
        update_rows))
    lines.append("\n## Missing Shapes\n" + md_table(
        ["Operator", "Count", "Examples"], missing_rows))
    lines.append("\n## Deleted Empty Rows\n" + md_table(
        ["Operator", "Count", "Examples"], deleted_rows))
    lines.append("\n## Duplicate Signatures\n" + md_table(
        ["Operator", "Count", "Examples"], duplicates_rows))
    HOOKS.report_sections(lines, results)
    lines.append("\n## Duration Gap Hotspots\n" + md_table(
        ["Operator", "MicroBench(us)", "Profiling(us)", "Abs Diff(us)", "MB/Profile",
         "Shape"], gap_rows))
    if status and status.get("failed"):
        lines.append("\n## Failures\n> [!WARNING]\n> Operators that failed.\n\n" +
                     md_table(["Operator", "Reason"],
                              [[x["op"], x["reason"]] for x in status["failed"]]))
    report_content = "\n".join(lines) + "\n"
    if not to_file:
        print(report_content)
        return None
    report_dir = to_file / "reports"
    ts = os.environ.get("OPDB_REPORT_TIMESTAMP") or datetime.now().strftime("%Y%m%d_%H%M%S")
    gap_csv, report_path = HOOKS.report_names(report_dir, ts)
    report_content = HOOKS.print_report_text(report_content, results, gaps, report_path)
    report_dir.mkdir(parents=True, exist_ok=True)
    with gap_csv.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(
            f, fieldnames=["Operator", "CSV Name", "MicroBench(us)", "Profiling(us)",
                           "Abs Diff(us)", "MB/Profile", "Shape"])
        w.writeheader()
        for g in gaps:
            w.writerow({
                "Operator": g.op_type, "CSV Name": g.csv_name,
                "MicroBench(us)": f"{g.mb_us:.6f}", "Profiling(us)": f"{g.prof_us:.6f}",
                "Abs Diff(us)": f"{g.diff_us:.6f}", "MB/Profile": f"{g.ratio:.6f}",
                "Shape": g.signature})
    with report_path.open("w", encoding="utf-8", newline="") as f:
        f.write(report_content)
        f.write(f"Full hotspot CSV: {gap_csv.name}\n")
    return report_path, gap_csv


def main(argv=None, parser=None) -> int:
    args = (parser or build_argparser()).parse_args(argv)
    selected_ops = validate_ops(args.ops)
    target_dir = get_target_data_dir(
        device=args.device, vllm_ascend_version=args.vllm_version, database_path=args.database_path,
        torch_version=args.torch_version, cann_version=args.cann_version)
    if args.update_mode == "missing-only":
        csv_paths = (
            [p for op in selected_ops for p in sorted(target_dir.rglob(f"{op}.csv"))]
            if selected_ops else
            sorted(p for p in target_dir.glob("*.csv")
                   if normalize_op_name(p.stem) in set(list_ops())))
        csv_paths = HOOKS.csv_paths(target_dir, selected_ops, csv_paths)
        if csv_paths and all(
                csv_has_complete_microbench(load_csv_rows(p)[1]) for p in csv_paths):
            for p in csv_paths:
                print(f"[SKIP] {p} already has usable durations.")
            print(
                "[SUMMARY] All target CSV files already have usable replay durations.")
            return 0
    # no device is visible: should_skip_dispatch_ffn_msprof(...) is False
    prof_dirs = find_prof_dirs(args.prof_path)
    aggregated = aggregate_summary(
        find_summary_files(prof_dirs), args.dispatch_ffn_combine_ep_size)
    if selected_ops:
        sel_set = set(selected_ops)
        for op in list(sel_set):
            sel_set.update(PROFILE_OP_ALIASES.get(op, ()))
        aggregated = {
            op: rows for op, rows in aggregated.items()
            if normalize_op_name(op) in sel_set}
    results = update_db(
        target_dir, aggregated, selected_ops, args.update_mode,
        args.prune_empty_duration_rows)
    gaps = collect_gaps(results)
    report_result = print_report(results, gaps, None, target_dir)
    if report_result:
        print(f"\n[REPORT] {report_result[0]}\n[REPORT] {report_result[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
