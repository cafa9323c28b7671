#!/usr/bin/env python3
"""tests/build/test_index.py — docs/test-index.md, generated from the tree.

Every test file says at its top what it checks (its header comment). This
script gathers those headers into one page, one row per test, so the index
lists every test there is and cannot go stale:

    python3 tests/build/test_index.py SRC            # rewrite the page
    python3 tests/build/test_index.py SRC --check    # CTest build/test_index

--check fails (exit 1, naming what differs) when the page is not what the
tree gives, so a new, removed or re-described test shows in CI until the
page is regenerated (`make test-index`).
"""
import glob
import os
import re
import sys

GROUPS = [
    ("Integration tests", "tests/integration/t_*.sh",
     "each runs once per backend that applies (`BACKEND/t_name`)"),
    ("Unit tests", "tests/unit/test_*.c", "`unit/test_name`, cmocka, no server"),
    ("Build and package tests", "tests/build/t_*.sh", "once per build"),
    ("Build and package tests (Python)", "tests/build/t_*.py", "once per build"),
    ("Fuzz targets", "tests/fuzz/fuzz_*.c", "`make fuzz`; CTest replays the corpus"),
    ("Chaos", "tests/chaos/*.sh", "`chaos/BACKEND`"),
]


def header(path):
    """The first comment block of a file, as one line of text."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    if path.endswith(".c"):
        inside = False
        for ln in lines:
            s = ln.strip()
            if not inside and s.startswith("/*"):
                inside = True
                s = s[2:]
            elif not inside:
                continue
            end = "*/" in s
            s = s.split("*/")[0].lstrip("*").strip()
            out.append(s)
            if end:
                break
    elif path.endswith(".py"):
        m = re.search(r'"""(.*?)"""', "\n".join(lines), re.S)
        out = m.group(1).split("\n") if m else []
    else:
        started = False
        for ln in lines:
            if ln.startswith("#!"):
                continue
            if ln.startswith("#"):
                started = True
                out.append(ln[1:].strip())
            elif started or ln.strip():
                break
    text = " ".join(s for s in out if s)
    # drop a leading "name — " or "path — " the file gives itself
    text = re.sub(r"^\S*" + re.escape(os.path.basename(path).rsplit(".", 1)[0])
                  + r"(\.\w+)?\s+[—-]+\s+", "", text)
    return text.replace("|", "\\|") or "(no header comment)"


def page(src):
    rows = ["# Test index", "",
            "Generated from the tree by `tests/build/test_index.py` (`make "
            "test-index`); CTest's `build/test_index` fails when it is out "
            "of date. Each row is the test file's own header comment. How "
            "to run them, the backends and the lessons: "
            "[testing.md](testing.md).", ""]
    for title, pattern, how in GROUPS:
        files = sorted(glob.glob(os.path.join(src, pattern)))
        if not files:
            continue
        rows += ["## %s" % title, "", "%d files; %s." % (len(files), how), "",
                 "| test | what it checks |", "|---|---|"]
        for f in files:
            name = os.path.basename(f).rsplit(".", 1)[0]
            rows.append("| `%s` | %s |" % (name, header(f)))
        rows.append("")
    return "\n".join(rows)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    want = page(src)
    target = os.path.join(src, "docs", "test-index.md")
    if "--check" in sys.argv:
        have = open(target, encoding="utf-8").read() if os.path.exists(target) else ""
        if have != want:
            a, b = set(have.split("\n")), set(want.split("\n"))
            for ln in sorted(b - a)[:10]:
                print("missing or changed: " + ln[:160], file=sys.stderr)
            for ln in sorted(a - b)[:10]:
                print("stale: " + ln[:160], file=sys.stderr)
            print("FAIL: docs/test-index.md is out of date: run make test-index",
                  file=sys.stderr)
            return 1
        print("ok: docs/test-index.md lists every test")
        return 0
    open(target, "w", encoding="utf-8").write(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
