#!/usr/bin/env python3
"""Regenerates the golden cases tests/cli/parse_merge_* and parse_dir_content_*: hand-made
kernel_details inputs and the expected database computed by oracle_merge.py from the inputs' samples
(never by opdb).

  python3 tests/oracle/ingest/make_merge_cases.py"""
import csv
import io
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle as O  # noqa: E402
import oracle_merge as M  # noqa: E402

CLI = os.path.join(HERE, "..", "..", "cli")
HEAD = ["Name", "Type", "OP State", "Accelerator Core", "Duration(us)", "Input Shapes", "Input Data Types",
        "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"] + O.METRICS


def kd(rows):
    """rows: (type, in, out, duration, formats, aiv_time) -> kernel_details CSV text (CRLF)."""
    f = io.StringIO()
    w = csv.writer(f, lineterminator="\r\n")
    w.writerow(HEAD)
    for i, (t, inp, out, d, fmt, aiv) in enumerate(rows):
        m = [""] * 25
        m[13] = aiv  # aiv_time(us)
        w.writerow(["%s_%d" % (t, i), t, "dynamic", "AI_VECTOR_CORE", d, inp, "DT_BF16;DT_BF16", fmt, out, "DT_BF16",
                    "ND"] + m)
    return f.getvalue().encode()


A = kd([("Add", '"8,128;8,128"', '"8,128"', "3.25", "", "2.5"),
        ("Add", '"8,128;8,128"', '"8,128"', "2.75", "", "2.0"),
        ("Add", '"16,128;16,128"', '"16,128"', "4.5", "ND;ND", "4"),
        ("Cast", '"8,128"', '"8,128"', "1.5", "ND", ""),
        ("Add", '"8,128;8,128"', '"8,128"', "3.0", "", "2.25")])
B = kd([("Add", '"8,128;8,128"', '"8,128"', "2.5", "ND;ND", "1.5"),
        ("Add", '"32,128;32,128"', '"32,128"', "6.25", "ND;ND", "5"),
        ("Mul", '"4,4;4,4"', '"4,4"', "1.25", "ND;ND", "1"),
        ("Add", '"8,128;8,128"', '"8,128"', "4.0", "ND;ND", "3.5"),
        ("Add", '"16,128;16,128"', '"16,128"', "5.5", "ND;ND", "4.5")])


def case(name, files, cmd, expected_files=None):
    d = os.path.join(CLI, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "in"))
    os.makedirs(os.path.join(d, "expected"))
    for fn, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, "in", fn)), exist_ok=True)
        with open(os.path.join(d, "in", fn), "wb") as f:
            f.write(data)
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write(cmd + "\n")
    for fn, text in (expected_files or {}).items():
        os.makedirs(os.path.dirname(os.path.join(d, "expected", fn)), exist_ok=True)
        with open(os.path.join(d, "expected", fn), "w", newline="") as f:
            f.write(text)
    return d


def main():
    # parse A, then B --merge == the oracle of A + B
    d = case("parse_merge_kernel_details", {"a.csv": A, "b.csv": B},
             "opdb parse --profiling-path in/a.csv --database-path db && "
             "opdb parse --profiling-path in/b.csv --database-path db --merge",
             {"rc": "0\n"})
    M.merge_case(d)
    # without --merge an existing table is replaced, and stderr says so
    d = case("parse_merge_replace_warns", {"a.csv": A, "b.csv": B},
             "opdb parse --profiling-path in/a.csv --database-path db && "
             "opdb parse --profiling-path in/b.csv --database-path db",
             {"rc": "0\n", "stderr_contains": "replaced 1 existing table(s) in db (first: Add.csv); --merge combines "
                                              "rows with them instead\n"})
    M.merge_case(d, replace=True)
    # a table without Profiling Count (the reference's 36 columns) cannot be merged exactly: error, db untouched
    old = open(os.path.join(CLI, "parse_worked_example", "expected_quirks", "db", "MatMulV2.csv"), "rb").read()
    mm = kd([("MatMulV2", '"4,64;128,64"', '"4,128"', "11", "ND;ND", "")])
    case("parse_merge_into_reference_table", {"old/MatMulV2.csv": old, "b.csv": mm},
         "mkdir db && cp in/old/MatMulV2.csv db/ && opdb parse --profiling-path in/b.csv --database-path db --merge",
         {"rc": "1\n", "stdout": "", "db/MatMulV2.csv": old.decode(),
          "stderr_contains": "db/MatMulV2.csv has no 'Profiling Count' column\n"})
    case("parse_merge_quirks_usage", {"b.csv": mm},
         "opdb parse --profiling-path in/b.csv --database-path db --merge --reference-quirks",
         {"rc": "2\n", "stdout": "", "stderr_contains": "--merge cannot be combined with --reference-quirks\n"})

    # a folder's CSVs by content: a renamed kernel_details is parsed, op_statistic and unknown CSVs are named
    # and skipped (--strict: the first is an error)
    REAL = next(os.path.join(up, "shared", "data", "real", "ascend") for up in
                (os.path.join(HERE, *[".."] * k) for k in range(4, 8))
                if os.path.isdir(os.path.join(up, "shared", "data", "real", "ascend")))  # the checkout's sibling
    opstat = open(os.path.join(REAL, "msinsight_l1_rank0_op_statistic.csv"), "rb").read()
    files = {"rank0/export_rank0.csv": A, "rank0/op_statistic.csv": opstat, "notes.csv": b"when,what\r\nmon,run\r\n"}
    d = case("parse_dir_content_detection", files, "opdb parse --profiling-path in --database-path db",
             {"rc": "0\n", "stderr_contains":
              "in/rank0/op_statistic.csv: not a per-kernel profile (op_statistic: per-type totals, no shapes)\n"
              "in/notes.csv: not a per-kernel profile (a CSV without Type + Duration(us)\n"
              "skipped (--strict makes this an error)\n"})
    M.tables_case(d)
    case("parse_dir_content_detection_strict", files, "opdb parse --strict --profiling-path in --database-path db",
         {"rc": "1\n", "stdout": "", "stderr_contains": "in/notes.csv: not a per-kernel profile\n"})

    # a PyTorch trace parsed twice with --merge: every count, sum and sum of squares doubles, average, median,
    # std, min, max and kernel names stay (the kineto oracle's tables of the trace, so transformed)
    trace = open(os.path.join(CLI, "parse_kineto_rule_nesting", "in", "trace.json"), "rb").read()
    d = case("parse_merge_kineto_twice", {"trace.json": trace},
             "opdb parse --profiling-path in/trace.json --database-path db && "
             "opdb parse --profiling-path in/trace.json --database-path db --merge", {"rc": "0\n"})
    out = os.path.join(d, "expected", "db")
    n = O.kineto(os.path.join(d, "in", "trace.json"), out)
    for fn in os.listdir(out):
        with open(os.path.join(out, fn), newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        h = rows[0]
        for r in rows[1:]:
            r[h.index("Profiling Count")] = str(2 * int(r[h.index("Profiling Count")]))
            for c in ("Profiling Sum Duration(us)", "Profiling Sum Squares(us^2)"):
                r[h.index(c)] = "%.6f" % (2 * float(r[h.index(c)]))
        O.write(out, fn, h, rows[1:])
    with open(os.path.join(d, "expected", "stdout"), "w", newline="") as f:
        f.write(("Generated %d csv file(s) under db from in/trace.json\n" % n) * 2)

    # --merge into tables that `opdb update` extended: its Average Duration(us) column is kept (empty in new rows)
    tmp = case("parse_merge_tmp_a", {"a.csv": A}, "opdb parse --profiling-path in/a.csv --database-path db")
    M.tables_case(tmp)
    olddb = os.path.join(tmp, "expected", "db")

    def with_mb(rows, mb_of):
        h = rows[0]
        at = h.index("Output Formats") + 1
        out = [h[:at] + ["Average Duration(us)"] + h[at:]]
        for r in rows[1:]:
            out.append(r[:at] + [mb_of(r, h)] + r[at:])
        return out

    def read(path):
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.reader(f))

    def text(rows):
        f = io.StringIO()
        csv.writer(f, lineterminator="\r\n").writerows(rows)
        return f.getvalue()

    old, mb = {}, {}
    for fn in sorted(os.listdir(olddb)):
        rows = read(os.path.join(olddb, fn))
        rows = with_mb(rows, lambda r, h: mb.setdefault((fn, r[h.index("Input Shapes")], r[h.index("Output Shapes")]),
                                                        "%.6f" % (1.0 + len(mb))))
        old["old/" + fn] = text(rows).encode()
    shutil.rmtree(tmp)
    merged = os.path.join(CLI, "parse_merge_kernel_details", "expected", "db")
    expected = {"rc": "0\n", "stdout": "Generated 2 csv file(s) under db from in/b.csv\n"}
    for fn in sorted(os.listdir(merged)):
        rows = read(os.path.join(merged, fn))
        if "old/" + fn in old:
            rows = with_mb(rows, lambda r, h: mb.get((fn, r[h.index("Input Shapes")], r[h.index("Output Shapes")]), ""))
        expected["db/" + fn] = text(rows)
    case("parse_merge_keeps_update_columns", dict(old, **{"b.csv": B}),
         "mkdir db && cp in/old/*.csv db/ && opdb parse --profiling-path in/b.csv --database-path db --merge", expected)

    # without --merge or --replace, a table holding what the new one lacks is not replaced: exit 1, nothing
    # written (no new table either). b then a: a's Add lacks b's 32,128 row and leaves b's Input Formats empty.
    d = case("parse_replace_refuses_lost_rows", {"a.csv": A, "b.csv": B},
             "opdb parse --profiling-path in/b.csv --database-path db")
    M.tables_case(d)
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write("opdb parse --profiling-path in/b.csv --database-path db && "
                "opdb parse --profiling-path in/a.csv --database-path db\n")
    case_files(d, {"rc": "1\n", "stderr_contains":
                   "opdb parse: nothing written: replacing 1 table(s) in db would lose data: Add.csv (1 of 3 row(s) "
                   "the new table lacks, 1 filled cell(s) it leaves empty); --merge combines the new rows with them, "
                   "--replace overwrites them\n"})
    # the column `opdb update` added is data too: refused, the database untouched
    untouched = {"db/" + fn[4:]: v.decode() for fn, v in old.items()}
    case("parse_replace_refuses_update_columns", dict(old, **{"b.csv": B}),
         "mkdir db && cp in/old/*.csv db/ && opdb parse --profiling-path in/b.csv --database-path db",
         dict(untouched, **{"rc": "1\n", "stdout": "", "stderr_contains":
                            "would lose data: Add.csv (column 'Average Duration(us)'); --merge\n"}))
    # --replace overwrites as before: b's tables, the untouched Cast.csv keeps its column
    d = case("parse_replace_flag", dict(old, **{"b.csv": B}),
             "opdb parse --profiling-path in/b.csv --database-path db")
    M.tables_case(d)
    with open(os.path.join(d, "cmd"), "w") as f:
        f.write("mkdir db && cp in/old/*.csv db/ && opdb parse --profiling-path in/b.csv --database-path db --replace\n")
    case_files(d, {"rc": "0\n", "db/Cast.csv": untouched["db/Cast.csv"],
                   "stderr_contains": "replaced 1 existing table(s) in db (first: Add.csv)\n"})
    case("parse_replace_merge_usage", {"b.csv": B},
         "opdb parse --profiling-path in/b.csv --database-path db --merge --replace",
         {"rc": "2\n", "stdout": "", "stderr_contains": "--merge and --replace exclude each other\n"})
    # --reference-quirks overwrites as the reference does: the reference parser's tables of b, Cast.csv untouched
    d = case("parse_quirks_replace_overwrites", dict(old, **{"b.csv": B}),
             "mkdir db && cp in/old/*.csv db/ && opdb parse --profiling-path in/b.csv --database-path db "
             "--reference-quirks", {"rc": "0\n", "db/Cast.csv": untouched["db/Cast.csv"]})
    ref = subprocess.run([sys.executable, os.path.join(HERE, "..", "parse", "parse_kernel_details.py"),
                          "--profiling-path", "in/b.csv", "--database-path", "expected/db"],
                         cwd=d, check=True, capture_output=True, text=True)
    with open(os.path.join(d, "expected", "stdout"), "w", newline="") as f:
        f.write(ref.stdout.replace("expected/db", "db"))


def case_files(d, files):
    for fn, text in files.items():
        with open(os.path.join(d, "expected", fn), "w", newline="") as f:
            f.write(text)


main()
