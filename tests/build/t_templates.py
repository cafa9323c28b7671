#!/usr/bin/env python3
"""t_templates.py SRCDIR — every call of a dashboard template matches it.

The dashboard's pages are fragments of
cli/web/dashboard/templates/NAME.html, rendered by TPL(b, "file.fragment",
{"name", value}, ...) or TPL0(b, "file.fragment")
(cli/web/dashboard/dashboard_tpl.h). The renderer refuses, when the page
is made, a placeholder without a value and a value without a
placeholder; this check finds the same mistakes in every call of the
sources, on paths no other test takes: each call names its fragment
literally, the fragment exists, and the names the call gives are exactly
the fragment's placeholders. A fragment that no call renders fails too
(dead HTML).
"""
import os
import re
import sys

srcdir = sys.argv[1]
tpldir = os.path.join(srcdir, "cli", "web", "dashboard", "templates")
tplrel = "cli/web/dashboard/templates"
fails = []

# ---- the templates: fragment -> its placeholders ----
frags = {}
define_re = re.compile(r"\{\{define (\w+)\}\}(.*?)\{\{end\}\}", re.S)
ph_re = re.compile(r"\{\{([a-z0-9_]+)(?:\|(?:raw|url))?\}\}")
for f in sorted(os.listdir(tpldir)):
    if not f.endswith(".html"):
        continue
    with open(os.path.join(tpldir, f), encoding="utf-8") as fh:
        text = re.sub(r"\{\{!.*?\}\}", "", fh.read(), flags=re.S)
    for name, body in define_re.findall(text):
        key = f"{f[:-5]}.{name}"
        if key in frags:
            fails.append(f"FAIL: {tplrel}/{f}: two fragments {name}")
        frags[key] = set(ph_re.findall(body))

# ---- the calls ----
used = set()
ncalls = 0
call_re = re.compile(r"\bTPL0?\(")
frag_re = re.compile(r'"(\w+\.\w+)"')
arg_re = re.compile(r'\{\s*"(\w+)"\s*,')
cfiles = []
for root, _, files in os.walk(os.path.join(srcdir, "cli")):
    cfiles += [os.path.relpath(os.path.join(root, f), srcdir)
               for f in files if f.endswith(".c")]
for f in sorted(cfiles):
    path = os.path.join(srcdir, f)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for m in call_re.finditer(text):
        # the call's text, to its closing parenthesis
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        call = text[m.end():i - 1]
        line = text.count("\n", 0, m.start()) + 1
        if call.startswith(("b, name", "(b)")):
            continue  # the macro's own definition
        head = call.split("{", 1)[0]
        names = frag_re.findall(head)
        if not names:
            fails.append(f"FAIL: {f}:{line}: a template call whose "
                         "fragment is not named literally")
            continue
        given = set(arg_re.findall(call[len(head):]))
        ncalls += 1
        for n in names:
            used.add(n)
            if n not in frags:
                fails.append(f"FAIL: {f}:{line}: no fragment {n} in "
                             f"{tplrel}")
                continue
            if given != frags[n]:
                missing = sorted(frags[n] - given)
                extra = sorted(given - frags[n])
                fails.append(f"FAIL: {f}:{line}: {n}: "
                             + (f"no value for {missing} " if missing else "")
                             + (f"no placeholder for {extra}" if extra
                                else ""))

for n in sorted(set(frags) - used):
    fails.append(f"FAIL: fragment {n} is rendered by no call")
for f in fails:
    print(f)
if fails:
    sys.exit(1)
print(f"{len(frags)} fragments, {ncalls} calls: every call gives each "
      "placeholder of its fragment a value and no other")
