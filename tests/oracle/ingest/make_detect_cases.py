#!/usr/bin/env python3
"""Regenerates the golden cases tests/cli/parse_detect_*: inputs that are not kernel profiles (collective
benchmark logs, UTF-16/UTF-32 text) and an op_summary cut mid-row.  Default mode: one error line, nothing
written (the stderr lines are the documented messages); the cut file's --reference-quirks mode reads it as the
reference does, its expected tables written by the reference parser (tests/oracle/parse), never by opdb.

  python3 tests/oracle/ingest/make_detect_cases.py"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join(HERE, "..", "..", "cli")
REF = os.path.join(HERE, "..", "parse", "parse_kernel_details.py")


def case(name, files, cmd, rc, stderr, quirks_cmd=None):
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
    for fn, text in (("rc", "%d\n" % rc), ("stdout", ""), ("stderr_contains", stderr + "\n")):
        with open(os.path.join(d, "expected", fn), "w") as f:
            f.write(text)
    if quirks_cmd:  # the reference parser on the same input, run in the case folder (its paths are in/...)
        with open(os.path.join(d, "cmd_quirks"), "w") as f:
            f.write(quirks_cmd + "\n")
        os.makedirs(os.path.join(d, "expected_quirks"))
        args = quirks_cmd.split()[2:]
        args.remove("--reference-quirks")
        args[args.index("--database-path") + 1] = "expected_quirks/db"
        out = subprocess.run([sys.executable, REF] + args, cwd=d, check=True, capture_output=True, text=True).stdout
        with open(os.path.join(d, "expected_quirks", "stdout"), "w") as f:
            f.write(out.replace("expected_quirks/db", "db"))
        with open(os.path.join(d, "expected_quirks", "rc"), "w") as f:
            f.write("0\n")


def read(*p):
    with open(os.path.join(CLI, *p), "rb") as f:
        return f.read()


IMPORT = "collective timings rather than a per-kernel profile; import it into the hcom_*.csv tables with " \
         "opdb comm import --logs %s --output-dir DATABASE"


def main():
    nccl = read("comm_import_real_old_layout_no_root", "in", "msccl_leaderboard_1xNDv4_allreduce_nccl.txt")
    case("parse_detect_nccl_tests_log", {"nccl.txt": nccl}, "opdb parse --profiling-path in/nccl.txt --database-path db",
         1, "opdb parse: in/nccl.txt: an nccl-tests log, " + IMPORT % "in/nccl.txt")
    osu = read("comm_import_real_osu", "in", "osu_omb5.6.2_alaska_impi_allreduce.txt")
    case("parse_detect_osu_log", {"osu.txt": osu}, "opdb parse --profiling-path in/osu.txt --database-path db",
         1, "opdb parse: in/osu.txt: an OSU benchmark log: OSU MPI Allreduce Latency Test v5.6.2, " + IMPORT % "in/osu.txt")
    # in a folder a .csv log is named and skipped (the folder's other inputs are parsed); --strict: an error
    kd = read("parse_worked_example", "in", "kernel_details.csv")
    case("parse_detect_log_in_folder_strict", {"kernel_details.csv": kd, "allreduce.csv": nccl},
         "opdb parse --strict --profiling-path in --database-path db", 1,
         "opdb parse: in/allreduce.csv: an nccl-tests log of all_reduce, " + IMPORT % "in/allreduce.csv")
    # a UTF-16 JSON (PowerShell's default encoding) and UTF-32 kernel_details, with and without a byte-order mark
    trace = read("parse_kineto_rule_nesting", "in", "trace.json").decode("utf-8")
    case("parse_detect_utf16_json", {"trace.json": trace.encode("utf-16")},
         "opdb parse --profiling-path in/trace.json --database-path db", 1,
         "opdb parse: in/trace.json: UTF-16 text (little-endian, with a byte-order mark; a JSON document); "
         "opdb reads UTF-8: convert it first (iconv -t UTF-8)")
    text = kd.decode("utf-8-sig")
    case("parse_detect_utf16be_no_bom", {"kernel_details.csv": text.encode("utf-16-be")},
         "opdb parse --profiling-path in/kernel_details.csv --database-path db", 1,
         "opdb parse: in/kernel_details.csv: UTF-16 text (big-endian, no byte-order mark); opdb reads UTF-8")
    case("parse_detect_utf32_bom", {"kernel_details.csv": text.encode("utf-32")},
         "opdb parse --profiling-path in/kernel_details.csv --database-path db", 1,
         "opdb parse: in/kernel_details.csv: UTF-32 text (little-endian, with a byte-order mark); opdb reads UTF-8")
    case("parse_detect_utf32le_no_bom", {"kernel_details.csv": text.encode("utf-32-le")},
         "opdb parse --profiling-path in/kernel_details.csv --database-path db", 1,
         "opdb parse: in/kernel_details.csv: UTF-32 text (little-endian, no byte-order mark); opdb reads UTF-8")
    # an op_summary whose last row was cut mid-row (short, no final newline): refused like an unterminated quote;
    # the reference reads the missing cells as empty
    ops = read("parse_quirks_dir_no_kernel_details", "in", "PROF_000001", "mindstudio_profiler_output",
               "op_summary_20250101.csv")
    lines = ops.split(b"\n")
    while not lines[-1].strip():
        lines.pop()
    cut = b"\n".join(lines[:-1]) + b"\n" + b",".join(lines[-1].split(b",")[:12])
    nl = len(lines)
    where = "PROF_000001/mindstudio_profiler_output/op_summary_20250101.csv"
    case("parse_detect_cut_last_row", {where: cut},
         "opdb parse --profiling-path in --database-path db", 1,
         "opdb parse: in/" + where + ":%d: the last row has 12 of the header's %d fields and no final newline "
         "(the file was cut while being written)" % (nl, len(lines[0].split(b","))))
    # the same cut in a kernel_details CSV; the reference (--reference-quirks) reads the missing cells as empty
    lines = kd.split(b"\r\n") if b"\r\n" in kd else kd.split(b"\n")
    eol = b"\r\n" if b"\r\n" in kd else b"\n"
    while not lines[-1].strip():
        lines.pop()
    cut = eol.join(lines[:-1]) + eol + b",".join(lines[-1].split(b",")[:9])
    case("parse_detect_cut_last_row_kd", {"kernel_details.csv": cut},
         "opdb parse --profiling-path in/kernel_details.csv --database-path db", 1,
         "opdb parse: in/kernel_details.csv:%d: the last row has 9 of the header's %d fields and no final newline"
         % (len(lines), len(lines[0].split(b","))),
         "opdb parse --reference-quirks --profiling-path in/kernel_details.csv --database-path db")

    # a GPU trace (ROCm, MI250) parsed into a database of Ascend tables: a warning, both written (the tables
    # are the two cases' oracle-written expected tables); --strict: an error, nothing written
    trace = read("parse_kineto_real_rocm_mi250", "in", "trace.json")
    files = {"kernel_details.csv": kd, "trace.json": trace}
    two = ("opdb parse --profiling-path in/kernel_details.csv --database-path db && "
           "opdb parse %s--profiling-path in/trace.json --database-path db")
    warn = "tables from a GPU trace go beside Ascend tables in db, e.g. MatMulV2.csv (AI_CORE); one database " \
           "folder holds one device's measurements (use another --database-path"
    for name, strict in (("parse_detect_gpu_trace_into_ascend_db", False),
                         ("parse_detect_gpu_trace_into_ascend_db_strict", True)):
        case(name, files, two % ("--strict " if strict else ""), 1 if strict else 0,
             ("opdb parse: nothing written: " if strict else "") + warn)
        d = os.path.join(CLI, name)
        srcs = [("parse_worked_example", "in/kernel_details.csv")] + \
               ([] if strict else [("parse_kineto_real_rocm_mi250", "in/trace.json")])
        out = ""
        for src, _ in srcs:
            shutil.copytree(os.path.join(CLI, src, "expected", "db"), os.path.join(d, "expected", "db"),
                            dirs_exist_ok=True)
            out += read(src, "expected", "stdout").decode()
        with open(os.path.join(d, "expected", "stdout"), "w") as f:
            f.write(out)


main()
