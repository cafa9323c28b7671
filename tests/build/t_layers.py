#!/usr/bin/env python3
"""t_layers.py SRCDIR OBJDIR... — sked's floors: includes and calls go down.

Every folder of src/ and cli/ that holds a .c or .h file stands on one
floor (FLOORS below: the one table of them; docs/design.md draws it). A
file may include a header, or call a function, of its own floor or of a
floor below, never of a floor above. Within a floor, files may call each
other only one way: any loop (two files that call each other, directly or
around a circle) fails too. Only src/db/db.c calls a driver (the lib*.c
files of src/db/driver/: their method tables are db.c's alone).

Includes are read from the sources ('#include "…"', resolved as the
compiler does: the including file's folder, then src/ or cli/). Calls are
read from the object files (OBJDIR: the sked_objs and sked targets'
folders) with nm: an edge from a file to every file that defines a
symbol it uses. Headers of include/ (sked.h, sked_abi.h; sked_cli.h, not
installed) are the public API, open to every floor.

The Python package (bindings/python/sked) is checked the same way for
its imports: any circle of modules importing each other fails, a lazy
import inside a function or under TYPE_CHECKING included.
"""
import os
import re
import subprocess
import sys

# folder -> floor, bottom-up. A folder not listed here fails the check.
FLOORS = {
    "src/util": 0,       # buffers, logging, time text, names, URLs
    "src/time": 1,       # tz database, cron, fire arithmetic
    "src/proc": 1,       # handler programs: spawn, watch; the lease guard
    "src/dialect": 1,    # what a product is (detect) and its SQL registry
    "src/db/driver": 2,  # the drivers, their results and error maps
    "src/db": 3,         # the driver seam: db.c
    "src/handle": 4,     # struct sked: query, transactions, clock, retry
    "src/claim": 5,      # the claim strategies
    "src/model": 6,      # tasks, leases, limits, locks, schedules, schema
    "src/api": 7,        # the public edge: open, close, what was chosen
    "src/worker": 8,     # the worker runtime and its threads
    # the sked program, a client of sked.h only, a folder per floor too
    "cli/base": 9,           # cli.h, out, values, help, config, open, fleet
    "cli/http": 9,           # the HTTP server
    "cli/view": 10,          # what more than one command or page shows
    "cli/cmd": 11,           # the one-shot commands
    "cli/bench": 12,         # sked bench
    "cli/demo": 12,          # sked demo
    "cli/web/api": 12,       # the JSON API
    "cli/web/dashboard": 13,  # the dashboard's pages (it serves the API)
    "cli/serve": 14,         # sked worker and its HTTP side
    "cli": 15,               # main.c: the command table
}

srcdir, objdirs = sys.argv[1], sys.argv[2:]
fails = []


def floor_of(rel):
    d = os.path.dirname(rel)
    if d not in FLOORS:
        fails.append(f"FAIL: {rel}: folder {d}/ has no floor (FLOORS in "
                     "tests/build/t_layers.py)")
        return None
    return FLOORS[d]


# ---- includes ----
sources = []
for top in ("src", "cli"):
    for root, _, files in os.walk(os.path.join(srcdir, top)):
        for f in files:
            if f.endswith((".c", ".h")):
                sources.append(os.path.relpath(os.path.join(root, f), srcdir))
sources.sort()
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
nincludes = 0
for rel in sources:
    fl = floor_of(rel)
    with open(os.path.join(srcdir, rel), encoding="utf-8") as fh:
        text = fh.read()
    for name in inc_re.findall(text):
        target = None
        top = rel.split("/", 1)[0]
        for base in (os.path.dirname(rel), top, "src"):
            cand = os.path.normpath(os.path.join(base, name))
            if os.path.exists(os.path.join(srcdir, cand)):
                target = cand
                break
        if target is None or not target.startswith(("src/", "cli/")):
            continue  # include/ (the public API) or generated
        nincludes += 1
        tf = floor_of(target)
        if fl is not None and tf is not None and tf > fl:
            fails.append(f"FAIL: {rel} (floor {fl}) includes {target} "
                         f"(floor {tf}): a floor up")

# ---- calls ----
objs = []
for objdir in objdirs:
    for root, _, files in os.walk(objdir):
        for f in files:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, objdir)[: -len(".o")]
            # only sked's own sources: an object whose source is gone is a
            # leftover of an older build; generated files are data
            if f.endswith(".c.o") and rel.startswith(("src/", "cli/")) \
                    and os.path.exists(os.path.join(srcdir, rel)):
                objs.append((rel, path))
if not objs:
    sys.exit(f"no object files under {' '.join(objdirs)}")

defined, used = {}, {}
for n, o in objs:
    out = subprocess.run(["nm", "-P", o], capture_output=True, text=True,
                         check=True).stdout
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

for n in sorted(edges):
    fl = floor_of(n)
    for t in sorted(edges[n]):
        tf = floor_of(t)
        if fl is not None and tf is not None and tf > fl:
            fails.append(f"FAIL: {n} (floor {fl}) calls {t} (floor {tf}): "
                         "a floor up")
        drv = t.startswith("src/db/driver/") and \
            os.path.basename(t).startswith("lib")
        if drv and n != "src/db/db.c":
            fails.append(f"FAIL: {n} calls the driver {t} (only "
                         "src/db/db.c may)")

# ---- loops: every strongly connected group of more than one file ----
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
    fails.append("FAIL: files that call each other: " + ", ".join(inner))

# ---- the Python package: its modules import one way, no circle ----
# Every "from .X import" or "from . import X" counts, at the top or
# inside a function or an "if TYPE_CHECKING:" (a lazy import is still a
# tie between the two modules).
pydir = os.path.join(srcdir, "bindings", "python", "sked")
pyedges = {}
pyimp_re = re.compile(r"^\s*from\s+\.(\w+)\s+import\b", re.M)
pypkg_re = re.compile(r"^\s*from\s+\.\s+import\s+\(?([\w ,]*)", re.M)
if os.path.isdir(pydir):
    mods = sorted(f[:-3] for f in os.listdir(pydir) if f.endswith(".py"))
    for m in mods:
        with open(os.path.join(pydir, m + ".py"), encoding="utf-8") as fh:
            text = fh.read()
        pyedges[m] = set()
        targets = pyimp_re.findall(text)
        for names in pypkg_re.findall(text):
            targets += [n.strip() for n in names.split(",")]
        pyedges[m].update(t for t in targets if t in mods and t != m)
py_index, py_order = {}, []


def py_walk(m, path):
    """Depth first; a module met again on the current path is a circle."""
    if m in path:
        circle = path[path.index(m):] + [m]
        fails.append("FAIL: bindings/python/sked: modules import each "
                     "other around a circle: " + " -> ".join(circle))
        return
    if m in py_index:
        return
    for t in sorted(pyedges[m]):
        py_walk(t, path + [m])
    py_index[m] = len(py_order)
    py_order.append(m)


for m in sorted(pyedges):
    py_walk(m, [])

for f in dict.fromkeys(fails):
    print(f)
if fails:
    sys.exit(1)
print(f"{len(FLOORS)} folders on {len(set(FLOORS.values()))} floors; "
      f"{len(sources)} files, {nincludes} includes and "
      f"{sum(len(e) for e in edges.values())} calls between files, "
      "none up a floor, no loop; "
      f"{len(pyedges)} Python modules, "
      f"{sum(len(e) for e in pyedges.values())} imports between them, "
      "no circle")
