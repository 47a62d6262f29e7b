"""opdb's default mode of `opdb parse`: the re-indented reference
(parse_kernel_details.py) with the fixes of docs/COMPATIBILITY.md "opdb parse":

* required columns are `Type`, `Input Shapes`, `Output Shapes`, `Duration(us)`;
  absent descriptive columns are empty cells; absent metrics count 0 in a group
  whose rows include one from a file that has the metric, else an empty cell;
* msprof op_summary headers through one alias table (`OP Type`, `Task Type`,
  `Task Duration(us)`), used only where the kernel_details name is absent; a
  folder's CSVs are kernel_details ones by name or by header (Type + Duration(us)),
  else op_summary ones (by name or OP Type + Task Duration(us)); others warn
  (`--strict`: error);
* a `Duration(us)` that is not a finite, non-negative number skips the row (`--strict`: error);
  a non-finite or negative metric counts as 0;
* empty files (no header record) are skipped; blank records before the header
  are skipped; a quote left open at the end of a file is an error;
* FIA: a row with N/A shapes takes part in the operator_details pairing but
  gives no metadata; a non-integer dimension leaves its slot empty;
* two types with one file name: the later ones are written as `<name>~2.csv`...;
  a leading `.` becomes `_` (src/db/naming.c policy);
* warnings go to stderr, never stdout;
* five columns after `Profiling Std Duration(us)` (the counts a `--merge` needs,
  docs/ingest-formats.md): `Profiling Count`, the group's min, max, left-to-right
  sum and sum of squares of the durations (`%.6f`);
* `--profiling-path -`: stdin copied to a temporary `kernel_details.csv`;
* no table written: a warning; `--strict` makes it exit 1;
* a CSV whose last record has no final newline and fewer fields than its header
  (a file cut while being written) is an error;
* an existing table is replaced only when the new one keeps every old row (by input
  and output shapes, duplicates in order) and every old non-empty cell (a column of
  the same name, a non-empty cell): else nothing is written, exit 1; `--replace`
  overwrites.
`--merge` and Kineto/SQLite inputs have no oracle here: exit 99 (the stand-in's
"no oracle"); tests/oracle/ingest/make_merge_cases.py writes those cases.
Binary profiles (SQLite, Kineto) have their own oracle: tests/oracle/ingest/."""
import csv
import io
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

import parse_kernel_details as ref
from reference_common import shape_to_text, split_metadata_field

REQUIRED = [ref.TYPE_COL, ref.INPUT_SHAPES, ref.OUTPUT_SHAPES, ref.DURATION_US]
ALIASES = {"OP Type": ref.TYPE_COL, "Task Type": ref.ACCELERATOR_CORE,
           "Task Duration(us)": ref.DURATION_US}
ROLES = [ref.TYPE_COL, ref.INPUT_SHAPES, ref.OUTPUT_SHAPES, ref.DURATION_US, ref.OP_STATE,
         ref.ACCELERATOR_CORE, ref.INPUT_DTYPES, ref.INPUT_FORMATS, ref.OUTPUT_DTYPES,
         ref.OUTPUT_FORMATS] + ref.EXTRA_NUMERIC_COLUMNS
PRESENT = "\0present"  # row key: the metric columns its file has
DURATION_STATS = ["Profiling Count", "Profiling Min Duration(us)", "Profiling Max Duration(us)",
                  "Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)"]


def warn(msg: str) -> None:
    print(f"opdb: warning: {msg}", file=sys.stderr)


def open_quote_at_eof(text: str) -> bool:
    """True when the text ends inside a quoted field (CPython csv's state machine,
    non-strict: a quote opens a field only at its start)."""
    in_quotes = False
    at_field_start = True
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if in_quotes:
            if c == '"':
                if i + 1 < n and text[i + 1] == '"':
                    i += 1
                else:
                    in_quotes = False
        elif c == '"' and at_field_start:
            in_quotes = True
        at_field_start = (not in_quotes) and c in ",\r\n"
        i += 1
    return in_quotes


def read_table(path: Path):
    """(header, records) with blank records before the header dropped; header None if empty."""
    text = path.read_bytes().decode("utf-8-sig", errors="surrogateescape")
    if open_quote_at_eof(text):
        raise ValueError(f"{path}: unterminated quoted field at end of file")
    records = list(csv.reader(io.StringIO(text, newline="")))
    while records and not records[0]:
        records.pop(0)
    if not records:
        return None, []
    return records[0], [(n, r) for n, r in enumerate(records[1:], start=2) if r]


def csv_kind(path: Path):
    """By the header line: kernel_details has Type + Duration(us), op_summary OP Type + Task Duration(us)."""
    with open(path, "rb") as f:
        line = f.readline().decode("utf-8", "replace").lstrip("\ufeff")
    cells = {c.strip().strip('"').strip() for c in line.split(",")}
    if {ref.TYPE_COL, ref.DURATION_US} <= cells:
        return "kernel_details"
    if {"OP Type", "Task Duration(us)"} <= cells:
        return "op_summary"
    return None


class DefaultParser(ref.KernelDetailsParser):
    strict = False

    def _resolve_profiling_bundle(self) -> ref.ProfilingBundle:
        # A folder's CSVs are chosen by name or by content (csv_kind); op_summary ones only
        # when there is no kernel_details one.
        p = self.kernel_details_path
        if p.is_dir():
            found = {"kernel_details": [], "op_summary": []}
            for q in p.rglob("*.csv"):
                if not q.is_file() or q.name == ".csv":
                    continue
                kind, stem = csv_kind(q), q.stem.lower()
                word = ("kernel_details" if "kernel_details" in stem or kind == "kernel_details" else
                        "op_summary" if "op_summary" in stem or kind == "op_summary" else None)
                if word:
                    found[word].append(q)
                elif q.name != "operator_details.csv":
                    if self.strict:
                        raise ValueError(f"{q}: not a per-kernel profile (--strict)")
                    warn(f"{q}: not a per-kernel profile; skipped")
            if found["kernel_details"]:
                return ref.ProfilingBundle(p, sorted(found["kernel_details"]),
                                           sorted(p.rglob("operator_details.csv")),
                                           sorted(p.rglob("trace_view.json")))
            if found["op_summary"]:
                return ref.ProfilingBundle(p, sorted(found["op_summary"]), [], [])
        return super()._resolve_profiling_bundle()

    def _rows_of(self, path: Path, quiet: bool = False):
        header, records = read_table(path)
        if header is None:
            if not quiet:
                warn(f"{path}: empty file; skipped")
            return None
        # DictReader semantics: with duplicate names the last column wins.
        col = {}
        for i, name in enumerate(header):
            if name in ROLES:
                col[name] = i
        for alias, role in ALIASES.items():
            if role not in col and alias in header:
                col[role] = max(i for i, h in enumerate(header) if h == alias)
        missing = [c for c in REQUIRED if c not in col]
        if missing:
            raise ValueError(f"{path} is missing required columns: {', '.join(sorted(missing))}")
        present = frozenset(c for c in ref.EXTRA_NUMERIC_COLUMNS if c in col)
        rows = []
        for lineno, rec in records:
            row = {name: (rec[i] if i < len(rec) else "") for name, i in col.items()}
            row[PRESENT] = present
            row["\0where"] = f"{path}:{lineno}"
            rows.append(row)
        absent = [c for c in ref.EXTRA_NUMERIC_COLUMNS if c not in present]
        if absent and not quiet:
            warn(f"{path}: metric columns absent, their cells left empty: {', '.join(absent)}")
        return rows

    def _load_rows(self):
        rows, bad, first_bad = [], 0, None
        self.rows_read = 0
        for path in self.bundle.kernel_details_files:
            file_rows = self._rows_of(path)
            if file_rows is None:
                continue
            self.rows_read += len(file_rows)
            for row in file_rows:
                if self._is_number(self._safe_cell(row, ref.DURATION_US)):
                    rows.append(row)
                elif not (self._is_na_shape(self._safe_cell(row, ref.INPUT_SHAPES))
                          or self._is_na_shape(self._safe_cell(row, ref.OUTPUT_SHAPES))):
                    bad += 1
                    first_bad = first_bad or row["\0where"]
        if bad:
            msg = f"{bad} row(s) with a Duration(us) that is not a number skipped (first at {first_bad})"
            if self.strict:
                raise ValueError(msg)
            warn(msg)
        return rows

    @staticmethod
    def _is_number(text: str) -> bool:  # a finite, non-negative duration (never written)
        try:
            v = float(text)
        except ValueError:
            return False
        return math.isfinite(v) and v >= 0

    @staticmethod
    def _parse_duration(value: str) -> float:  # metrics too: non-finite or negative counts as 0
        try:
            v = float((value or "").strip())
        except ValueError:
            return 0.0
        return v if math.isfinite(v) and v >= 0 else 0.0

    def _read_fia_kernel_rows(self, csv_path: Path):
        rows = self._rows_of(csv_path, quiet=True) or []
        return [r for r in rows if self._safe_cell(r, ref.TYPE_COL) == ref.FIA_OP_TYPE]

    def _warn(self, message: str) -> None:
        print(message, file=sys.stderr)

    def _extract_fia(self, input_shapes_text: str, csv_path: Path):
        slots = split_metadata_field(input_shapes_text)
        shapes = []
        for slot in slots:
            s = slot.strip().strip('"')
            try:
                shapes.append(tuple(int(t) for t in s.split(",")) if s else None)
            except ValueError:
                warn(f"{csv_path}: FusedInferAttentionScore shape slot '{slot}' is not integers; left empty")
                shapes.append(None)
        shapes += [None] * (31 - len(shapes))
        md = ref.extract_fia_profile_metadata("", csv_path.parent.name)
        md.actual_seq_lengths_shape = shape_to_text(shapes[5])
        md.actual_seq_lengths_kv_shape = shape_to_text(shapes[6])
        md.block_table_shape = shape_to_text(shapes[14])
        return md

    def _build_fia_runtime_index(self):
        # The reference's index, except that N/A-shape rows pair but give no metadata.
        index = {}
        operator_rows_by_profile = self._load_fia_operator_rows_by_profile()
        for csv_path in self.bundle.kernel_details_files:
            kernel_rows = self._read_fia_kernel_rows(csv_path)
            operator_rows = operator_rows_by_profile.get(csv_path.parent, [])
            paired = min(len(kernel_rows), len(operator_rows))
            if operator_rows and len(kernel_rows) != len(operator_rows):
                self._warn(
                    "Warning: FIA kernel/operator row count mismatch under "
                    f"{csv_path.parent}: kernel_rows={len(kernel_rows)}, "
                    f"operator_rows={len(operator_rows)}. Pairing uses row "
                    "order for the shared prefix only."
                )
            for i, row in enumerate(kernel_rows):
                key = (self._safe_cell(row, ref.INPUT_SHAPES), self._safe_cell(row, ref.OUTPUT_SHAPES))
                if key in index or self._is_na_shape(key[0]) or self._is_na_shape(key[1]):
                    continue
                op_in = self._safe_cell(operator_rows[i], ref.INPUT_SHAPES) if i < paired else ""
                index[key] = self._extract_fia(op_in or key[0], csv_path)
        return index

    def parse_and_export(self):
        self._names = {}
        return super().parse_and_export()

    def _on_row(self, item, row):
        item[PRESENT] = item.get(PRESENT, frozenset()) | row[PRESENT]

    def _metric_text(self, item, column, value):
        metric = column[len("Profiling Average "):]
        return f"{value:.6f}" if metric in item.get(PRESENT, ()) else ""

    def _duration_stat_columns(self):
        return list(DURATION_STATS)

    def _duration_stats(self, item):
        # sum_duration / sum_duration_sq: the reference's left-to-right accumulations.
        xs = item["durations"]
        cells = [str(int(item["count"])), f"{min(xs):.6f}", f"{max(xs):.6f}",
                 f"{float(item['sum_duration']):.6f}", f"{float(item['sum_duration_sq']):.6f}"]
        return dict(zip(DURATION_STATS, cells))

    def _output_path(self, op_type: str) -> Path:
        stem = self._sanitize_filename(op_type)
        stem = stem.replace("\x7f", "_")
        for mark in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069":
            stem = stem.replace(mark, "_")  # direction marks reorder how a name is shown
        if stem.startswith("."):
            stem = "_" + stem[1:]
        n, name = 1, stem
        while name in self._names.values():
            n += 1
            name = f"{stem}~{n}"
        if name != stem:
            warn(f"'{op_type}' and another type share the file name {stem}.csv; written as {name}.csv")
        self._names[op_type] = name
        return self.output_dir / f"{name}.csv"


def no_oracle(msg: str) -> int:
    print(f"oracle: no oracle for: parse {msg}", file=sys.stderr)
    return 99


def binary_profile(path: str) -> bool:
    """A Kineto trace (JSON, gzip) or an SQLite export, which tests/oracle/ingest/ covers."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        head = f.read(64)
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return head[:2] == b"\x1f\x8b" or head.startswith(b"SQLite format 3\0") or text[:1] in (b"{", b"[")


def cut_tail(path):
    """(line, fields, header fields) of a last record cut mid-row, else None: no final newline, fewer
    fields than the header, the tail's quotes balanced (an open quote is the unterminated-quote rule)."""
    with open(path, "rb") as f:
        data = f.read()
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    lines = text.splitlines()
    while lines and not lines[0].strip():  # blank records before the header
        lines.pop(0)
    if not text or text[-1:] in (b"\n", b"\r") or len(lines) < 2:
        return None
    last = lines[-1]
    if last.count(b'"') % 2:
        return None
    n = len(next(csv.reader([last.decode("utf-8", "replace")])))
    h = len(next(csv.reader([lines[0].decode("utf-8", "replace")])))
    return (len(data[:len(data) - len(last)].splitlines()) + 1, n, h) if n < h else None


def table_of(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return rows[0] if rows else [], rows[1:]


def loss(old_path, new_path):
    """What replacing old_path by new_path loses: (rows, columns, cells) counts."""
    oh, orows = table_of(old_path)
    nh, nrows = table_of(new_path)
    keys = ["Input Shapes", "Output Shapes"] + (["Input Data Types"] if "Kernel Names" in nh else [])

    def key(h, r):
        return tuple(r[h.index(k)] if k in h and h.index(k) < len(r) else "" for k in keys)
    free = {}
    for r in nrows:
        free.setdefault(key(nh, r), []).append(r)
    rows = cells = 0
    cols = set()
    for r in orows:
        mates = free.get(key(oh, r))
        if not mates:
            rows += any(r)
            continue
        m = mates.pop(0)
        for i, v in enumerate(r[:len(oh)]):
            if not v:
                continue
            if oh[i] not in nh:
                cols.add(oh[i])
            elif not (m[nh.index(oh[i])] if nh.index(oh[i]) < len(m) else ""):
                cells += 1
    return rows, len(cols), cells


def main(argv):
    strict = "--strict" in argv
    replace = "--replace" in argv
    argv = [a for a in argv if a not in ("--strict", "--replace")]
    if "--merge" in argv:
        return no_oracle("--merge (tests/oracle/ingest/make_merge_cases.py writes these cases)")
    DefaultParser.strict = strict
    args = ref.build_argparser().parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.profiling_path
        if path == "-":  # src/cli/cli_stdio.c: stdin copied to a temp file named kernel_details.csv
            path = os.path.join(tmp, "kernel_details.csv")
            with open(path, "wb") as f:
                shutil.copyfileobj(sys.stdin.buffer, f)
        if binary_profile(path):
            return no_oracle(f"{args.profiling_path} (a Kineto/SQLite profile: tests/oracle/ingest/)")
        inputs = [path] if os.path.isfile(path) else sorted(str(p) for p in Path(path).rglob("*.csv"))
        for f in inputs:
            cut = cut_tail(f)
            if cut:
                print(f"opdb parse: {f}:{cut[0]}: the last row has {cut[1]} of the header's {cut[2]} fields and "
                      "no final newline (the file was cut while being written)", file=sys.stderr)
                return 1
        target = Path(ref.get_target_data_dir(device=args.device, vllm_ascend_version=args.vllm_version,
                                              database_path=args.database_path, torch_version=args.torch_version,
                                              cann_version=args.cann_version))
        staged = os.path.join(tmp, "staged")  # tables written here first: all replaced, or none
        parser = DefaultParser(device=args.device, kernel_details_path=path,
                               vllm_ascend_version=args.vllm_version, database_path=staged,
                               torch_version=args.torch_version, cann_version=args.cann_version)
        output_files = parser.parse_and_export()
        parser.output_dir = target
        lost = [] if replace else [
            (f.name, loss(parser.output_dir / f.name, f)) for f in output_files if (parser.output_dir / f.name).is_file()]
        lost = [(n, l) for n, l in lost if any(l)]
        if lost:
            print("opdb parse: nothing written: replacing %d table(s) in %s would lose data: %s" % (
                len(lost), parser.output_dir.as_posix(), "; ".join("%s %s" % x for x in lost)), file=sys.stderr)
            return 1
        parser.output_dir.mkdir(parents=True, exist_ok=True)
        replaced = [f.name for f in output_files if (parser.output_dir / f.name).is_file()]
        for f in output_files:
            shutil.copyfile(f, parser.output_dir / f.name)
        if replaced:
            warn(f"replaced {len(replaced)} existing table(s) in {parser.output_dir.as_posix()} (first: {replaced[0]}); "
                 "--merge combines rows with them instead")
    print(f"Generated {len(output_files)} csv file(s) under {parser.output_dir.as_posix()} "
          f"from {args.profiling_path}")
    if not output_files:
        warn(f"no table written: {parser.rows_read} row(s) read, none kept "
             "(rows with N/A shapes or an empty Type are skipped)")
        if strict:
            sys.stdout.flush()
            print("opdb parse: --strict: 1 warning(s) that the run produced nothing meaningful: exit 1",
                  file=sys.stderr)
            return 1
    return 0
