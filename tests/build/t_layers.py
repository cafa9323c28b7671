#!/usr/bin/env python3
"""t_layers.py [--shared LIBSKED.SO] SRCDIR OBJDIR... — sked's floors:
includes, declarations and calls go down.

Every folder of src/ and cli/ that holds a .c or .h file stands on one
floor (FLOORS below: the one table of them; docs/design.md draws it). A
file may include a header, or call a function, of its own floor or of a
floor below, never of a floor above; a header declares no function (nor
extern data) defined on a floor above its own. Within a floor, files may
call each other only one way: any loop (two files that call each other,
directly or around a circle) fails too. Only src/db/db.c calls a driver
(the lib*.c files of src/db/driver/: their method tables are db.c's
alone). The program (cli/) links the static library, so nothing but
this check keeps it a client of the shared one: with --shared, every
library symbol a cli/ object uses must be one libsked.so exports.

Includes are read from the sources ('#include "…"', resolved as the
compiler does: the including file's folder, then src/ or cli/). Calls are
read from the object files (OBJDIR: the sked_objs and sked targets'
folders) with nm: an edge from a file to every file that defines a
symbol it uses. Headers of include/ (sked.h, sked_abi.h; sked_cli.h, not
installed) are the public API, open to every floor.

The Python package (bindings/python/sked) is checked the same way for
its imports: any circle of modules importing each other fails, a lazy
import inside a function or under TYPE_CHECKING included.

Then the check proves it can fail: on a copy of the sources it plants an
include a floor up (cli/base/out.c including serve/serve.h, and
src/util/buf.c including a model header), a header declaring a function
of a higher floor, a Python circle and a cli/ object using a symbol
libsked.so hides, and requires each to be reported.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

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
    "cli/view": 10,          # what commands, pages and daemons all show
    "cli/cmd": 11,           # the one-shot commands
    "cli/bench": 11,         # sked bench
    "cli/demo": 11,          # sked demo
    "cli/web/api": 11,       # the JSON API
    "cli/web/dashboard": 12,  # the dashboard's pages (it serves the API)
    "cli/serve": 13,         # sked worker and its HTTP side
    "cli": 14,               # main.c: the command table
}

# (header, symbol): a declaration a floor up that is allowed for now,
# each with the reason and the way out. Empty: every header declares
# only what its own floor or one below defines.
ALLOWED_UP: set = set()


def nm_symbols(path, dynamic=False):
    """(defined, used) global symbol names of an object or library."""
    args = ["nm", "-P"] + (["-D", "--defined-only"] if dynamic else [])
    out = subprocess.run(args + [path], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind == "U":
            used.add(sym)
        elif kind in "TDBRCVW" and not sym.startswith("."):
            defined.add(sym)
    return defined, used


def read_objects(objdirs):
    """[(rel source path, defined, used)] of sked's own objects."""
    objs = []
    for objdir in objdirs:
        for root, _, files in os.walk(objdir):
            for f in files:
                if not f.endswith(".c.o"):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, objdir)[: -len(".o")]
                if rel.startswith(("src/", "cli/")):
                    objs.append((rel,) + nm_symbols(path))
    return objs


def strip_c(text):
    """A header's declarations: no comments, no preprocessor lines, no
    brace blocks (struct members, inline bodies), no string literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    while True:
        new = re.sub(r"\{[^{}]*\}", " ", text)
        if new == text:
            return text
        text = new


def declared(text):
    """Names a header declares: functions (NAME followed by '(' in a
    declaration) and extern data (the names of an extern statement)."""
    names = set()
    for stmt in strip_c(text).split(";"):
        s = stmt.strip()
        if not s or s.startswith("typedef"):
            continue
        names.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", s))
        if re.match(r"extern\b", s):
            names.update(re.findall(r"\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?"
                                    r"\s*(?:,|$)", s))
    return names


def check(srcdir, objs, exported, extra_used=None):
    """The failures of the tree at srcdir, and its counts. objs: from
    read_objects (sources gone from srcdir are left out); exported: the
    names libsked.so exports, or None; extra_used: {rel: {symbol}} added
    to what the objects use (the self-test's planted use)."""
    fails = []

    def floor_of(rel):
        d = os.path.dirname(rel)
        if d not in FLOORS:
            fails.append(f"FAIL: {rel}: folder {d}/ has no floor (FLOORS "
                         "in tests/build/t_layers.py)")
            return None
        return FLOORS[d]

    # ---- includes ----
    sources = []
    for top in ("src", "cli"):
        for root, _, files in os.walk(os.path.join(srcdir, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    sources.append(os.path.relpath(os.path.join(root, f),
                                                   srcdir))
    sources.sort()
    texts = {}
    inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    nincludes = 0
    for rel in sources:
        fl = floor_of(rel)
        with open(os.path.join(srcdir, rel), encoding="utf-8") as fh:
            texts[rel] = fh.read()
        for name in inc_re.findall(texts[rel]):
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
    objs = [o for o in objs if os.path.exists(os.path.join(srcdir, o[0]))]
    defined, used = {}, {}
    for n, d, u in objs:
        used[n] = set(u) | (extra_used or {}).get(n, set())
        for s in d:
            defined.setdefault(s, n)
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
                fails.append(f"FAIL: {n} (floor {fl}) calls {t} (floor "
                             f"{tf}): a floor up")
            drv = t.startswith("src/db/driver/") and \
                os.path.basename(t).startswith("lib")
            if drv and n != "src/db/db.c":
                fails.append(f"FAIL: {n} calls the driver {t} (only "
                             "src/db/db.c may)")

    # ---- declarations: a header declares nothing of a floor above ----
    ndecl = 0
    for rel in sources:
        if not rel.endswith(".h"):
            continue
        fl = floor_of(rel)
        for name in sorted(declared(texts[rel])):
            d = defined.get(name)
            if d is None:
                continue
            ndecl += 1
            tf = floor_of(d)
            if fl is not None and tf is not None and tf > fl and \
                    (rel, name) not in ALLOWED_UP:
                fails.append(f"FAIL: {rel} (floor {fl}) declares {name}, "
                             f"defined in {d} (floor {tf}): a floor up")

    # ---- the program uses only what libsked.so exports ----
    nlib = 0
    if exported is not None:
        for n in sorted(used):
            if not n.startswith("cli/"):
                continue
            for s in sorted(used[n]):
                d = defined.get(s)
                if d is None or not d.startswith("src/"):
                    continue
                nlib += 1
                if s not in exported:
                    fails.append(f"FAIL: {n} uses {s} ({d}), which "
                                 "libsked.so does not export")

    # ---- loops: every strongly connected group of more than one file --
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

    for n in sorted(edges):
        if n not in index:
            strong(n)
    for g in groups:
        inner = [f"{a} -> {b}" for a in g for b in sorted(edges[a])
                 if b in g]
        fails.append("FAIL: files that call each other: " +
                     ", ".join(inner))

    # ---- the Python package: its modules import one way, no circle ----
    # Every "from .X import" or "from . import X" counts, at the top or
    # inside a function or an "if TYPE_CHECKING:" (a lazy import is still
    # a tie between the two modules).
    pydir = os.path.join(srcdir, "bindings", "python", "sked")
    pyedges = {}
    pyimp_re = re.compile(r"^\s*from\s+\.(\w+)\s+import\b", re.M)
    pypkg_re = re.compile(r"^\s*from\s+\.\s+import\s+\(?([\w ,]*)", re.M)
    if os.path.isdir(pydir):
        mods = sorted(f[:-3] for f in os.listdir(pydir) if f.endswith(".py"))
        for m in mods:
            with open(os.path.join(pydir, m + ".py"), encoding="utf-8") as fh:
                text = fh.read()
            targets = pyimp_re.findall(text)
            for names in pypkg_re.findall(text):
                targets += [x.strip() for x in names.split(",")]
            pyedges[m] = {t for t in targets if t in mods and t != m}
    done = set()

    def py_walk(m, path):
        """Depth first; a module met again on the current path closes a
        circle."""
        if m in path:
            circle = path[path.index(m):] + [m]
            fails.append("FAIL: bindings/python/sked: modules import each "
                         "other around a circle: " + " -> ".join(circle))
            return
        if m in done:
            return
        for t in sorted(pyedges[m]):
            py_walk(t, path + [m])
        done.add(m)

    for m in sorted(pyedges):
        py_walk(m, [])

    counts = {"files": len(sources), "includes": nincludes,
              "calls": sum(len(e) for e in edges.values()),
              "declarations": ndecl, "library uses": nlib,
              "modules": len(pyedges),
              "imports": sum(len(e) for e in pyedges.values())}
    return list(dict.fromkeys(fails)), counts


def self_test(srcdir, objs, exported):
    """Plant one fault of each kind in a copy of the sources; each must be
    reported. Returns the faults that were not."""
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        for top in ("src", "cli", os.path.join("bindings", "python", "sked")):
            shutil.copytree(os.path.join(srcdir, top),
                            os.path.join(tmp, top))

        def append(rel, line):
            with open(os.path.join(tmp, rel), "a", encoding="utf-8") as fh:
                fh.write("\n" + line + "\n")

        append("cli/base/out.c", '#include "serve/serve.h"')
        append("src/util/buf.c", '#include "model/queue.h"')
        append("src/handle/handle.h", "int sked__filter_fill(void);")
        append("bindings/python/sked/_core.py", "from ._client import Sked")
        hidden = sorted(s for n, d, _ in objs if n.startswith("src/")
                        for s in d if exported is not None and
                        s not in exported)
        extra = {"cli/main.c": {hidden[0]}} if hidden else {}
        fails, _ = check(tmp, objs, exported, extra)
        want = [
            "cli/base/out.c (floor 9) includes cli/serve/serve.h",
            "src/util/buf.c (floor 0) includes src/model/queue.h",
            "src/handle/handle.h (floor 4) declares sked__filter_fill",
            "around a circle: _client -> _core -> _client",
        ]
        if hidden:
            want.append(f"cli/main.c uses {hidden[0]} ")
        for w in want:
            if not any(w in f for f in fails):
                missed.append(w)
    return missed


def main(argv):
    shared = None
    if len(argv) > 1 and argv[0] == "--shared":
        shared, argv = argv[1], argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__.split("\n\n")[0])
    srcdir, objdirs = argv[0], argv[1:]
    objs = read_objects(objdirs)
    if not objs:
        sys.exit(f"no object files under {' '.join(objdirs)}")
    exported = nm_symbols(shared, dynamic=True)[0] if shared else None
    fails, c = check(srcdir, objs, exported)
    for f in fails:
        print(f)
    missed = self_test(srcdir, objs, exported)
    for m in missed:
        print(f"FAIL: self-test: a planted fault was not reported: {m}")
    if fails or missed:
        sys.exit(1)
    print(f"{len(FLOORS)} folders on {len(set(FLOORS.values()))} floors; "
          f"{c['files']} files, {c['includes']} includes, "
          f"{c['calls']} calls between files and {c['declarations']} "
          "declarations of sked's own functions in headers, none up a floor, "
          "no loop; "
          + (f"{c['library uses']} uses of the library by cli/, all "
             "exported by libsked.so; " if exported is not None else "")
          + f"{c['modules']} Python modules, {c['imports']} imports "
          "between them, no circle; the self-test's planted faults were "
          "all reported")


if __name__ == "__main__":
    main(sys.argv[1:])
