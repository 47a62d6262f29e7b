"""Inputs shared by the M6 and per-shape oracles (docs/ANALYSIS.md §1, §3, §4).

Written from the spec (the reference tools `compute_m6.py` and
`generate_per_shape_comparison.py` are not among the seeds), never from opdb.
Both modes read gzip and the bare-array trace form (docs/COMPATIBILITY.md,
"Both modes"); `-` reads stdin (opdb copies it to a temp file: same bytes)."""
import csv
import gzip
import io
import json
import math
import os
import sys


class Fail(Exception):
    """An error opdb reports in one line (exit 1); the wording is opdb's, not checked."""


def check_inputs(tc_path: str, prof_path: str) -> None:
    # TC checked first (docs/ANALYSIS.md §4.1; COMPATIBILITY.md "Both modes")
    if tc_path != "-" and not os.path.exists(tc_path):
        raise Fail(f"TC trace not found: {tc_path}")
    if prof_path != "-" and not os.path.exists(prof_path):
        raise Fail(f"Prof trace not found: {prof_path}")


_stdin = None


def read_bytes(path: str) -> bytes:
    global _stdin
    if path == "-":
        if _stdin is None:
            _stdin = sys.stdin.buffer.read()
        return _stdin
    with open(path, "rb") as f:
        return f.read()


def load_events(path: str) -> list:
    data = read_bytes(path)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError as e:  # truncated or invalid JSON
        raise Fail(f"{path}: invalid JSON: {e}")
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def csv_rows(path: str):
    """DictReader over the prof CSV, UTF-8 BOM stripped (M6 and per-shape strip it)."""
    text = read_bytes(path).decode("utf-8-sig", errors="surrogateescape")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return reader


def cell(row: dict, name: str) -> str:
    """A stripped cell; a missing column or a short row reads as empty."""
    return (row.get(name) or "").strip()


def require_columns(reader, path: str, names) -> None:
    """opdb's default mode refuses a CSV without the needed columns (the reference
    reads them as empty)."""
    have = reader.fieldnames or []
    missing = [n for n in names if n not in have]
    if missing:
        raise Fail(f"{path}: missing needed column(s): {', '.join(missing)}")


def default_number(s: str):
    """opdb default mode: an empty, non-numeric or non-finite cell skips the row (None)."""
    if not s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def strict_json(v):
    """opdb default mode writes strict JSON: NaN / Infinity become null."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: strict_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [strict_json(x) for x in v]
    return v
