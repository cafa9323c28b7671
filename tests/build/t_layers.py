#!/usr/bin/env python3
"""t_layers.py OBJDIR SRCDIR — calls between the library's files run one way.

Reads the object files of libsked (OBJDIR: the sked_objs target's folder)
with nm, draws an edge from a file to every file that defines a symbol it
uses, and fails when the edges make a loop (two files that call each
other, directly or around a circle), or when a file other than db.c calls
into a driver's method table. Folders count as their files: src/claim/
and src/dialect/ are seams of their own, src/db/ the drivers.
"""
import os
import subprocess
import sys

objdir, srcdir = sys.argv[1], sys.argv[2]
objs = []
for root, _, files in os.walk(objdir):
    for f in files:
        path = os.path.join(root, f)
        # an object whose source is gone is a leftover of an older build
        if f.endswith(".c.o") and os.path.exists(
                os.path.join(srcdir, os.path.relpath(path, objdir)[:-2])):
            objs.append(path)
if not objs:
    sys.exit(f"no object files under {objdir}")


def name(path):
    rel = os.path.relpath(path, objdir)
    return rel[: -len(".o")]


defined, used = {}, {}
for o in objs:
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True,
                         check=True).stdout
    n = name(o)
    used[n] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            used[n].add(sym)
        elif kind in "TDBRC" and not sym.startswith("."):
            defined.setdefault(sym, n)

edges = {n: set() for n in used}
for n, syms in used.items():
    for s in syms:
        d = defined.get(s)
        if d and d != n:
            edges[n].add(d)

# the drivers' method tables are db.c's alone
for n, targets in edges.items():
    for t in targets:
        if t.startswith("src/db/") and n != "src/db.c" and not n.startswith("src/db/"):
            sys.exit(f"FAIL: {n} calls the driver {t} (only src/db.c may)")

# loops: every strongly connected group of more than one file
index, low, on, stack, groups = {}, {}, set(), [], []
counter = [0]


def strong(n):
    index[n] = low[n] = counter[0]
    counter[0] += 1
    stack.append(n)
    on.add(n)
    for t in sorted(edges[n]):
        if t not in index:
            strong(t)
            low[n] = min(low[n], low[t])
        elif t in on:
            low[n] = min(low[n], index[t])
    if low[n] == index[n]:
        g = []
        while True:
            t = stack.pop()
            on.discard(t)
            g.append(t)
            if t == n:
                break
        if len(g) > 1:
            groups.append(sorted(g))


sys.setrecursionlimit(10000)
for n in sorted(edges):
    if n not in index:
        strong(n)
for g in groups:
    inner = [f"{a} -> {b}" for a in g for b in sorted(edges[a]) if b in g]
    print("FAIL: files that call each other: " + ", ".join(inner))
if groups:
    sys.exit(1)
print(f"{len(edges)} files, {sum(len(e) for e in edges.values())} calls "
      "between them, no loop")
