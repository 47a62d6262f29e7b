#!/usr/bin/env python3
"""check_library_policy.py OBJECT_LIST [NM]: fails (exit 1) when an object of the library (not the
CLI: src/cli/ is not in the list) uses a function that sets process policy, or writes to the
process's stdout/stderr outside the plumbing that exists for it.

The library is embedded by other programs (the Python binding, a user's C program): it must not
end the process (exit, _exit, _Exit, quick_exit), tune or replace what belongs to the whole process
(mallopt, signal handlers: signal, sigaction, bsd_signal, sysv_signal; setlocale), or read the
environment (getenv, secure_getenv): those are the program's to decide, and the library takes them
as settings (opdb_set_settings), handlers (opdb_set_oom_handler, opdb_set_warn_handler) and
options.  `abort` is allowed: it is what assert does, and what the library does after the
program's out-of-memory handler returned or in a state the code makes impossible; it is not a
policy a program could choose otherwise.

Writes to the process's stdout/stderr (a reference to the `stdout`/`stderr` objects) are allowed
only in ALLOWED_STDIO, the plumbing a program opts into (the default warning printer, the progress
line); KNOWN_STDIO lists the objects that still write there themselves, tolerated until their
output goes through a callback or a FILE* of their options.  An object in KNOWN_STDIO that no
longer writes there is an error too (keep the list true)."""
import os
import re
import subprocess
import sys

BANNED = {
    "getenv", "secure_getenv", "exit", "_exit", "_Exit", "quick_exit", "mallopt", "signal", "sigaction",
    "bsd_signal", "sysv_signal", "setlocale",
}
STDIO = {"stdout", "stderr"}
# the plumbing for what a program opts into: the default warning printer, the progress line
ALLOWED_STDIO = {"src/core/error.c", "src/core/progress.c"}
KNOWN_STDIO = set()


def source_name(obj):
    m = re.search(r"(?:^|/)((?:src|include)/.*)\.o(?:bj)?$", obj)
    return m.group(1) if m else os.path.basename(obj)


def undefined(nm, obj):
    out = subprocess.run([nm, "-P", "-u", obj], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if parts:
            names.add(parts[0].split("@")[0])
    return names


def main():
    if len(sys.argv) < 2:
        print("usage: check_library_policy.py OBJECT_LIST [NM]", file=sys.stderr)
        return 2
    nm = sys.argv[2] if len(sys.argv) > 2 else "nm"
    with open(sys.argv[1], encoding="utf-8") as fh:
        objs = [line.strip() for line in fh if line.strip()]
    if not objs:
        print("check_library_policy.py: no objects in %s" % sys.argv[1], file=sys.stderr)
        return 1
    bad = False
    writers = set()
    for obj in objs:
        name = source_name(obj)
        if name.startswith("src/cli/"):
            print("error: %s: a CLI object in the library" % name)
            bad = True
        used = undefined(nm, obj)
        for s in sorted(used & BANNED):
            print("error: %s uses %s (process policy belongs to the program: src/cli/)" % (name, s))
            bad = True
        if used & STDIO and name not in ALLOWED_STDIO:
            writers.add(name)
            tag = "known" if name in KNOWN_STDIO else "error"
            bad |= tag == "error"
            print("%s: %s writes to %s (give it a callback or a FILE* in its options)"
                  % (tag, name, "/".join(sorted(used & STDIO))))
    for name in sorted(KNOWN_STDIO - writers):
        print("error: KNOWN_STDIO lists %s, which no longer writes to stdout/stderr (remove it)" % name)
        bad = True
    print("%d library objects: %s" % (len(objs), "policy violations" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
