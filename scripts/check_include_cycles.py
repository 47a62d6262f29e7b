#!/usr/bin/env python3
"""check_include_cycles.py [ROOT]: fails (exit 1) on include cycles.

Two graphs over the quoted #includes of src/ and include/ (resolved against
src/ and include/, as the build does):
  * headers: an edge h1 -> h2 when h1 includes h2; any cycle is an error;
  * units: a unit is a .c file with its .h (src/update/update_db.{c,h});
    an edge u1 -> u2 when a file of u1 includes u2's header.  A cycle means
    two modules need each other (split one, or move the shared part down).
Cycles listed in KNOWN are reported but tolerated until they are untangled;
a KNOWN entry that is no longer a cycle is an error too (keep it true)."""
import os
import re
import sys

KNOWN = set()

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
root = os.path.abspath(root)
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
files = []
for top in ("src", "include"):
    for d, _, names in os.walk(os.path.join(root, top)):
        files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith((".c", ".h"))]
known_files = set(files)


def resolve(src, inc):
    for base in (os.path.dirname(src), "src", "include"):
        p = os.path.normpath(os.path.join(base, inc))
        if p in known_files:
            return p
    return None


edges = {}
for f in files:
    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    edges[f] = [r for r in (resolve(f, i) for i in inc_re.findall(text)) if r]


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


bad = 0
hdr = {f: [t for t in e if t.endswith(".h")] for f, e in edges.items() if f.endswith(".h")}
for c in cycles(hdr):
    print("header include cycle: " + " -> ".join(c))
    bad = 1

unit = lambda f: os.path.splitext(f)[0].replace("include/opdb/", "include/opdb/")
ugraph = {}
for f, e in edges.items():
    u = unit(f)
    ugraph.setdefault(u, set())
    for t in e:
        if unit(t) != u:
            ugraph[u].add(unit(t))
found = set(cycles(ugraph))
for c in sorted(found):
    if c in KNOWN:
        print("known unit cycle (to untangle): " + " <-> ".join(c))
    else:
        print("unit include cycle: " + " <-> ".join(c))
        bad = 1
for c in sorted(KNOWN - found):
    print("KNOWN lists a cycle that is gone: " + " <-> ".join(c) + " (drop it from KNOWN)")
    bad = 1
print("include graph: %d files, %s" % (len(files), "cycles found" if bad else "no new cycles"))
sys.exit(bad)
