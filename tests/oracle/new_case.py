#!/usr/bin/env python3
"""Create or check golden CLI cases with the oracles, never with opdb.

  new_case.py CASE_DIR...          write CASE_DIR/expected/ (and expected_quirks/
                                   when CASE_DIR/cmd_quirks exists) from cmd + in/
  new_case.py --check CASE_DIR...  regenerate into a temp dir and compare with the
                                   committed expected trees; exit 1 on a difference
                                   (a case whose oracle exits 99, "no oracle", is
                                   listed as skipped, not covered)

The case's `cmd` runs as tests/run_cli_case.sh runs it (cwd = a fresh work dir
holding a copy of in/), with tests/oracle/bin first on PATH: its `opdb` runs the
oracle of that command (tests/oracle/<tool>/). stdout, rc and the written tree
are recorded; `stderr_contains` is the case author's choice of lines and is kept
as it is (the oracles do not word opdb's messages)."""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "bin")
MODES = (("cmd", "expected"), ("cmd_quirks", "expected_quirks"))


class NoOracle(Exception):
    """The stand-in exited 99: a command (or input, or option) without an oracle."""


def run_case(case_dir: str, cmd_name: str, out_dir: str) -> None:
    """Run case_dir/cmd_name with the oracles; write the expected tree to out_dir."""
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(os.path.join(case_dir, "in"), os.path.join(work, "in"), symlinks=True)
        with open(os.path.join(case_dir, cmd_name), encoding="utf-8") as f:
            cmd = f.read()
        env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
        env.pop("PYTHONHASHSEED", None)
        proc = subprocess.run(["sh", "-c", cmd], cwd=work, env=env, capture_output=True)
        if proc.returncode == 99:
            raise NoOracle(f"{case_dir}: {proc.stderr.decode(errors='replace').strip()}")
        os.makedirs(out_dir, exist_ok=True)
        for name in os.listdir(work):
            if name != "in":
                shutil.move(os.path.join(work, name), os.path.join(out_dir, name))
        with open(os.path.join(out_dir, "stdout"), "wb") as f:
            f.write(proc.stdout)
        with open(os.path.join(out_dir, "rc"), "w") as f:
            f.write(f"{proc.returncode}\n")
        if os.environ.get("ORACLE_SHOW_STDERR"):
            sys.stderr.write(proc.stderr.decode(errors="replace"))


def tree_diff(a: str, b: str, skip=("stderr_contains",)) -> list:
    """Paths that differ between two trees (missing on one side or other bytes)."""
    out = []
    cmp = filecmp.dircmp(a, b, ignore=list(skip))
    out += [os.path.join(a, n) + " (only expected)" for n in cmp.left_only]
    out += [os.path.join(b, n) + " (only oracle)" for n in cmp.right_only]
    for n in cmp.common_files:
        if not filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False):
            out.append(os.path.join(a, n))
    for n in cmp.common_dirs:
        out += tree_diff(os.path.join(a, n), os.path.join(b, n), ())
    return out


def main(argv) -> int:
    check = "--check" in argv
    cases = [a for a in argv if a != "--check"]
    if not cases:
        print(__doc__, file=sys.stderr)
        return 2
    bad = same = 0
    skipped = []
    for case in cases:
        case = case.rstrip("/")
        for cmd_name, exp_name in MODES:
            if not os.path.exists(os.path.join(case, cmd_name)):
                continue
            expected = os.path.join(case, exp_name)
            if not check:
                keep = os.path.join(expected, "stderr_contains")
                saved = open(keep, "rb").read() if os.path.exists(keep) else None
                shutil.rmtree(expected, ignore_errors=True)
                try:
                    run_case(case, cmd_name, expected)
                except NoOracle as e:
                    raise SystemExit(str(e))
                if saved is not None:
                    open(keep, "wb").write(saved)
                print(f"wrote {expected}")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                got = os.path.join(tmp, exp_name)
                name = os.path.basename(case) + ("" if exp_name == "expected" else " (quirks)")
                try:
                    run_case(case, cmd_name, got)
                except NoOracle as e:
                    skipped.append(name)
                    print(f"skip {name}: not covered: {e}")
                    continue
                diffs = tree_diff(expected, got)
                if diffs:
                    bad += 1
                    print(f"DIFF {name}: " + "; ".join(d.replace(tmp + "/", "") for d in diffs))
                else:
                    same += 1
                    print(f"same {name}")
    if check:
        print(f"{same} same, {bad} DIFF, {len(skipped)} skipped (no oracle: {', '.join(skipped) or 'none'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
