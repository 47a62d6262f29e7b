#!/usr/bin/env python3
"""Fold a `<tool>_quirks_<what>` case into its `<tool>_<what>` twin (one dual-mode folder).

  join_modes.py tests/cli/parse_worked_example ...

Only when both folders have identical in/ and the quirks cmd is the default cmd
plus `--reference-quirks`: the quirks cmd becomes cmd_quirks and its expected/
becomes expected_quirks/ (git mv, bytes unchanged); the quirks folder goes. The
ctest name stays cli.<tool>_quirks_<what> (tests/CMakeLists.txt); <tool> is one
word, or comm_<sub> for the opdb comm subcommands (comm_validate_quirks_x)."""
import filecmp
import os
import re
import subprocess
import sys


def same_tree(a: str, b: str) -> bool:
    c = filecmp.dircmp(a, b)
    if c.left_only or c.right_only or c.funny_files:
        return False
    if any(not filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False) for f in c.common_files):
        return False
    return all(same_tree(os.path.join(a, d), os.path.join(b, d)) for d in c.common_dirs)


def join(case: str) -> None:
    case = case.rstrip("/")
    parent, name = os.path.split(case)
    qname = re.sub(r"^(comm_[a-z0-9]+|[a-z0-9]+)_", r"\1_quirks_", name, count=1)
    quirks = os.path.join(parent, qname)
    cmd = open(os.path.join(case, "cmd")).read()
    qcmd = open(os.path.join(quirks, "cmd")).read()
    if qcmd.replace(" --reference-quirks", "", 1) != cmd:
        raise SystemExit(f"{quirks}/cmd is not {case}/cmd plus --reference-quirks")
    if not same_tree(os.path.join(case, "in"), os.path.join(quirks, "in")):
        raise SystemExit(f"{quirks}/in differs from {case}/in")
    git = ["git", "mv"]
    subprocess.run(git + [os.path.join(quirks, "cmd"), os.path.join(case, "cmd_quirks")], check=True)
    subprocess.run(git + [os.path.join(quirks, "expected"), os.path.join(case, "expected_quirks")], check=True)
    subprocess.run(["git", "rm", "-rq", os.path.join(quirks, "in")], check=True)
    if os.path.exists(quirks):
        os.rmdir(quirks)
    print(f"{qname} -> {name}/cmd_quirks, {name}/expected_quirks")


if __name__ == "__main__":
    for c in sys.argv[1:]:
        join(c)
