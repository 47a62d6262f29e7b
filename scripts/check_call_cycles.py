#!/usr/bin/env python3
"""check_call_cycles.py OBJECT_LIST [NM]: fails (exit 1) on call cycles between the library's
objects or folders.

OBJECT_LIST is a file naming the library's object files, one a line (the build writes it). Two
graphs are built from their symbols (`nm`): an edge o1 -> o2 when o1 uses a global symbol that o2
defines (a call or a reference to its data), and an edge c1 -> c2 between their concerns, the
folders under src/ (src/update -> src/replay; src/replay/cpu is part of src/replay) when c1 != c2. A cycle of objects means two files cannot be understood,
tested or replaced one without the other; a cycle of folders, two concerns that need each other.
Either way, split a file or move the shared part down into a third one. The include lint
(check_include_cycles.py) cannot see these: a function may be declared in a header that includes
nothing of its caller's.

Cycles listed in KNOWN are reported but tolerated until they are untangled; a KNOWN entry that is
no longer a cycle is an error too (keep it true)."""
import os
import re
import subprocess
import sys

# Each entry: the members of one strongly connected component, object sources or folders.
KNOWN = set()


def source_name(obj):
    """src/ingest/kineto.c for .../opdb_obj.dir/src/ingest/kineto.c.o."""
    m = re.search(r"(?:^|/)((?:src|include)/.*)\.o(?:bj)?$", obj)
    return m.group(1) if m else os.path.basename(obj)


def concern(src):
    """The folder of a source's concern: src/replay for src/replay/cpu/gemm.c."""
    parts = src.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else os.path.dirname(src)


def symbols(nm, obj):
    out = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind in ("U", "w"):
            used.add(name)
        elif kind.isupper() or kind in ("i", "u"):  # global (upper case), GNU unique, indirect
            defined.add(name)
    return defined, used


def sccs(graph):
    """Tarjan's strongly connected components, iteratively; only those with 2+ members."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def describe(comp, graph, why):
    """The component's edges, each with one symbol that makes it."""
    lines = []
    for a in sorted(comp):
        for b in sorted(graph[a] & comp):
            lines.append("    %s -> %s (%s)" % (a, b, why[(a, b)]))
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print("usage: check_call_cycles.py OBJECT_LIST [NM]", file=sys.stderr)
        return 2
    nm = sys.argv[2] if len(sys.argv) > 2 else "nm"
    with open(sys.argv[1], encoding="utf-8") as fh:
        objs = [line.strip() for line in fh if line.strip()]
    if not objs:
        print("check_call_cycles.py: no objects in %s" % sys.argv[1], file=sys.stderr)
        return 1
    owner, uses = {}, {}
    for obj in objs:
        name = source_name(obj)
        defined, used = symbols(nm, obj)
        uses[name] = used
        for s in defined:
            owner.setdefault(s, name)
    ograph, fgraph, owhy, fwhy = {n: set() for n in uses}, {}, {}, {}
    for a, used in uses.items():
        fa = concern(a)
        fgraph.setdefault(fa, set())
        for s in sorted(used):
            b = owner.get(s)
            if b is None or b == a:
                continue
            if b not in ograph[a]:
                ograph[a].add(b)
                owhy[(a, b)] = s
            fb = concern(b)
            if fb != fa and fb not in fgraph[fa]:
                fgraph[fa].add(fb)
                fwhy[(fa, fb)] = "%s uses %s of %s" % (a, s, b)
    found = set()
    bad = False
    for kind, graph, why in (("objects", ograph, owhy), ("folders", fgraph, fwhy)):
        for comp in sccs(graph):
            found.add(comp)
            tag = "known" if comp in KNOWN else "error"
            bad |= tag == "error"
            print("%s: call cycle between %s: %s\n%s" % (tag, kind, ", ".join(sorted(comp)), describe(comp, graph, why)))
    for comp in KNOWN - found:
        print("error: KNOWN lists a cycle that no longer exists (remove it): %s" % ", ".join(sorted(comp)))
        bad = True
    print("%d objects, %d folders: %s" % (len(ograph), len(fgraph), "cycles found" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
