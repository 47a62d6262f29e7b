"""Trace -> CSV flattening oracle, written from docs/INGEST.md §4 (the reference
tool is not among the seeds). Both modes are the same (`--reference-quirks`
changes nothing, docs/COMPATIBILITY.md); the input additions of opdb (gzip, the
bare-array form) are read here too. json.load keeps integral literals as int
and the rest as float, so Python's str() gives the reference's rendering.
`-` as --trace reads stdin, as --output writes stdout. A trace without a complete
event gives the header alone and one warning (docs/INGEST.md §4); --strict then exits 1.
Run: python3 trace2csv.py --trace T [--output O] [--strict]"""
import argparse
import csv
import gzip
import json
import sys

COLUMNS = ["op_name", "kernel_type", "simulation_shapes", "dur_us", "source", "confidence",
           "composite", "sub_kernel_durations", "kernel_shapes", "shape_match_rule",
           "sub_kernel_shapes"]
ARG_KEYS = COLUMNS[4:]


def load(path: str):
    if path == "-":  # opdb copies stdin to a temp file first (src/cli/cli_stdio.c): same bytes
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data.decode("utf-8"))
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def rows(events):
    for ev in events:
        if ev.get("ph") != "X":
            continue
        args = ev.get("args") or {}
        row = {"op_name": ev.get("name", ""), "kernel_type": args.get("kernel_type"),
               "simulation_shapes": args.get("simulation_shapes"), "dur_us": ev.get("dur", 0)}
        for k in ARG_KEYS:
            row[k] = args.get(k)
        yield {k: ("" if v is None else v) for k, v in row.items()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--trace", required=True)
    p.add_argument("--output")
    p.add_argument("--strict", action="store_true")
    a = p.parse_args(argv)
    out_rows = list(rows(load(a.trace)))  # parse everything before writing anything
    if a.output and a.output != "-":  # `-`: stdout, as no --output
        f = open(a.output, "w", encoding="utf-8", newline="")
    else:
        f = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="", closefd=False)
    with f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(out_rows)
    if not out_rows:
        shown = "<stdin>" if a.trace == "-" else a.trace
        print(f'opdb trace2csv: warning: {shown}: no complete (ph "X") event: the CSV has its header only',
              file=sys.stderr)
        if a.strict:
            print("opdb trace2csv: --strict: 1 warning(s) that the run produced nothing meaningful: exit 1",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
