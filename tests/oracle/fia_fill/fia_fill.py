"""FIA runtime-metadata back-fill oracle (`opdb fia-fill`), written from spec
docs/INGEST.md §3 (the reference only lists the tool; there is no reference code).
Both modes are the same (docs/COMPATIBILITY.md: no known quirk).
opdb's additions (src/cli/cmd_fia_fill.c): `-` as --csv-path / --jsonl-path reads stdin (a CSV from
stdin goes back to stdout unless --output-path says otherwise), `-` as --output-path writes stdout
and then the summary line goes to stderr; a quote left open at the end of the CSV is an error
(nothing written); `--strict` exits 1 when no CSV row matched.
Run: python3 fia_fill.py --csv-path C --jsonl-path J [--output-path O] [--metadata-tag T] [--strict]"""
import argparse
import csv
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "parse"))
from opdb_default import open_quote_at_eof  # noqa: E402

PAYLOAD_COLUMNS = [
    "Runtime actual_seq_lengths_shape", "Runtime actual_seq_lengths_values",
    "Runtime actual_seq_lengths_kv_shape", "Runtime actual_seq_lengths_kv_values",
    "Runtime avg_seq_len", "Runtime block_table_valid_blocks", "Runtime num_heads",
    "Runtime num_key_value_heads", "Runtime sparse_mode", "Runtime input_layout",
    "Runtime block_size", "Runtime metadata_completeness",
]


def shape(slot):
    slot = (slot or "").strip()
    return None if not slot else tuple(int(t) for t in slot.split(","))


def csv_key(input_shapes: str):
    slots = [s.strip() for s in input_shapes.strip().strip('"').split(";")]
    get = (lambda i: slots[i] if i < len(slots) else "")
    try:
        kv = int(get(6))
    except ValueError:
        kv = None
    return (shape(get(0)), shape(get(1)), shape(get(2)), kv, shape(get(4)), shape(get(14)))


def tup(v):
    return None if v is None else tuple(v)


def jsonl_key(rec):
    kv = rec.get("actual_seq_lengths_kv")
    return (tup(rec.get("query_shape")), tup(rec.get("key_shape")), tup(rec.get("value_shape")),
            None if kv is None else len(kv), tup(rec.get("atten_mask_shape")),
            tup(rec.get("block_table_shape")))


def text(v):
    return "" if v is None else str(v)


def payload(rec):
    seq = rec.get("actual_seq_lengths") or []
    kv = rec.get("actual_seq_lengths_kv") or []
    return {
        "Runtime actual_seq_lengths_shape": str(len(seq)) if seq else "",
        "Runtime actual_seq_lengths_values": ",".join(str(x) for x in seq),
        "Runtime actual_seq_lengths_kv_shape": str(len(kv)) if kv else "",
        "Runtime actual_seq_lengths_kv_values": ",".join(str(x) for x in kv),
        "Runtime avg_seq_len": f"{statistics.mean(kv):.6f}" if kv else "",
        "Runtime block_table_valid_blocks": ",".join(str(x) for x in rec.get("block_table_valid_blocks") or []),
        "Runtime num_heads": text(rec.get("num_heads")),
        "Runtime num_key_value_heads": text(rec.get("num_key_value_heads")),
        "Runtime sparse_mode": text(rec.get("sparse_mode")),
        "Runtime input_layout": text(rec.get("input_layout")),
        "Runtime block_size": text(rec.get("block_size")),
    }


def main_quirks(argv=None) -> int:
    """The reference: the output always starts with a UTF-8 byte-order mark, and a row it
    already back-filled is expanded again, one row per payload."""
    return main(argv, always_bom=True)


def main(argv=None, always_bom=False) -> int:
    """opdb's default: a byte-order mark only where the input had one."""
    p = argparse.ArgumentParser()
    p.add_argument("--csv-path", required=True)
    p.add_argument("--jsonl-path", required=True)
    p.add_argument("--output-path")
    p.add_argument("--metadata-tag", default="runtime_values_dumped")
    p.add_argument("--strict", action="store_true")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:  # `-`: stdin copied to a temp file, as opdb does
        for attr, name in (("csv_path", "FusedInferAttentionScore.csv"), ("jsonl_path", "stdin.jsonl")):
            if getattr(a, attr) == "-":
                setattr(a, attr, os.path.join(tmp, name))
                with open(getattr(a, attr), "wb") as f:
                    shutil.copyfileobj(sys.stdin.buffer, f)
                if attr == "csv_path" and not a.output_path:
                    a.output_path = "-"
        a.always_bom = a.reference = always_bom
        return run(a)


def run(a) -> int:
    csv_path, jsonl_path = Path(a.csv_path), Path(a.jsonl_path)
    if not csv_path.exists():
        raise FileNotFoundError(f"CSV not found: {csv_path}")
    if not jsonl_path.exists():
        raise FileNotFoundError(f"JSONL not found: {jsonl_path}")
    payloads = {}  # key -> {(values, kv values): payload}, first position kept
    for line in jsonl_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        pl = payload(rec)
        dedup = (pl["Runtime actual_seq_lengths_values"], pl["Runtime actual_seq_lengths_kv_values"])
        payloads.setdefault(jsonl_key(rec), {})[dedup] = pl
    raw = csv_path.read_bytes()
    encoding = "utf-8-sig" if a.always_bom or raw.startswith(b"\xef\xbb\xbf") else "utf-8"
    text = raw.decode("utf-8-sig")
    if open_quote_at_eof(text):
        raise ValueError(f"{csv_path}: unterminated quoted field")
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        rows = list(reader)
    if not header:
        raise ValueError(f"CSV header is empty: {csv_path}")
    out_rows, matched = [], 0
    for row in rows:
        found = payloads.get(csv_key(row.get("Input Shapes", "") or ""))
        if not found:
            out_rows.append(row)
            continue
        matched += 1
        pls = list(found.values())
        # opdb's default (docs/COMPATIBILITY.md): a row this back-fill already filled (the tag, and one
        # payload's values and kv values) takes that payload alone; the reference expands it again
        mine = (row.get("Runtime actual_seq_lengths_values"), row.get("Runtime actual_seq_lengths_kv_values"))
        if not a.reference and row.get("Runtime metadata_completeness") == a.metadata_tag and mine in found:
            pls = [found[mine]]
        for pl in pls:
            out_rows.append({**row, **pl, "Runtime metadata_completeness": a.metadata_tag})
    columns = header + [c for c in PAYLOAD_COLUMNS if c not in header]
    for row in out_rows:
        columns += [k for k in row if k not in columns and k is not None]
    to_stdout = a.output_path == "-"
    out = Path(a.output_path) if a.output_path and not to_stdout else csv_path
    if to_stdout:
        f = open(sys.stdout.fileno(), "w", encoding=encoding, newline="", closefd=False)
    else:
        f = out.open("w", encoding=encoding, newline="")
    with f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(out_rows)
    k = len(out_rows) - len(rows)
    print(f"Backfilled {matched}/{len(rows)} CSV rows matched, {len(out_rows)} output rows "
          f"({'+' + str(k) if k > 0 else k} from 1:N expansion) from {jsonl_path} into {out}",
          file=sys.stderr if to_stdout else sys.stdout)
    if not matched:
        print("opdb: warning: no CSV row matched a JSONL record: nothing was back-filled", file=sys.stderr)
        if a.strict:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
