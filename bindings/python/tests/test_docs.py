"""python/docs: docs/python.md's examples run as a reader would run them.

Every ```python block of the page runs on its own, in a scratch folder
(SQLite files there), with this tree's package and SKED_LIBRARY, and must
exit 0 within 60 s; when a ```text block follows it, its output must be
exactly that text. A block under a "<!-- not run" comment (it needs a
server this test does not have) is only compiled. The page must hold at
least MIN_RUN blocks that run, so emptying it fails too.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
PAGE = os.path.join(os.path.dirname(os.path.dirname(PKG)), "docs",
                    "python.md")
MIN_RUN = 6
BLOCK = re.compile(r"(?P<before>[^\n]*)\n+```(?P<lang>\w+)\n(?P<code>.*?)"
                   r"\n```\n", re.S)


def blocks(text):
    """[(line, lang, code, skipped)], in page order."""
    out = []
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("code"))
        out.append((line, m.group("lang"), m.group("code") + "\n",
                    m.group("before").startswith("<!-- not run")))
    return out


class TestDocs(unittest.TestCase):
    def test_examples_run(self):
        with open(PAGE, encoding="utf-8") as f:
            found = blocks(f.read())
        ran = 0
        root = os.environ.get("SKED_TEST_TMP") or tempfile.gettempdir()
        os.makedirs(root, exist_ok=True)
        for i, (line, lang, code, skipped) in enumerate(found):
            if lang != "python":
                continue
            with self.subTest(line=line):
                compile(code, "docs/python.md:%d" % line, "exec")
                if skipped:
                    continue
                want = None
                if i + 1 < len(found) and found[i + 1][1] == "text":
                    want = found[i + 1][2]
                with tempfile.TemporaryDirectory(dir=root) as tmp:
                    with open(os.path.join(tmp, "example.py"), "w") as f:
                        f.write(code)
                    env = dict(os.environ, PYTHONPATH=PKG, SKED_LOG="error")
                    p = subprocess.run([sys.executable, "example.py"],
                                       cwd=tmp,
                                       env=env, capture_output=True,
                                       text=True, timeout=60)
                self.assertEqual(p.returncode, 0, "docs/python.md:%d "
                                 "failed:\n%s" % (line, p.stderr))
                if want is not None:
                    self.assertEqual(p.stdout, want,
                                     "docs/python.md:%d printed" % line)
                ran += 1
        self.assertGreaterEqual(ran, MIN_RUN, "too few examples ran")


if __name__ == "__main__":
    unittest.main(verbosity=2)
