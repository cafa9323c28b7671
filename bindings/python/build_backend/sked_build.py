"""The sked package's build backend (PEP 517, with PEP 660 editables):
the standard library only, so `pip install bindings/python` needs no
setuptools, no wheel and no network, on a bare venv as well as with
--no-build-isolation.

Layer: packaging of the Python binding, outside the package itself
(pyproject.toml names it with backend-path). The package is pure Python:
a wheel is sked/*.py and py.typed, plus the .dist-info files the wheel
format asks for (METADATA from pyproject.toml's [project] table, WHEEL,
RECORD with each file's sha256). An sdist is the source files in a
tar.gz. Nothing is compiled.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _project():
    """name, version, description, requires-python of [project]: plain
    `key = "value"` lines (tomllib is not in every Python sked takes)."""
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()
    section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    fields = dict(re.findall(r'^([a-z-]+) = "([^"]*)"$', section.group(1),
                             re.M))
    return fields


def _files():
    """The package's files, as (path in the wheel, path on disk)."""
    pkg = os.path.join(HERE, "sked")
    names = sorted(n for n in os.listdir(pkg)
                   if n.endswith(".py") or n == "py.typed")
    return [("sked/" + n, os.path.join(pkg, n)) for n in names]


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"], p["version"])


def _metadata(p):
    readme = open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: %s\nClassifier: Programming Language :: "
            "Python :: 3\nClassifier: Typing :: Typed\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (p["name"], p["version"], p.get("description", ""),
               p.get("requires-python", ">=3.8"), readme))


def _wheel(wheel_directory, extra):
    """Write the wheel: extra is [(path in the wheel, bytes)]."""
    p = _project()
    info = _dist_info(p)
    name = "%s-%s-%s.whl" % (p["name"], p["version"], TAG)
    entries = list(extra) + [
        (info + "/METADATA", _metadata(p).encode("utf-8")),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: sked_build\n"
                           "Root-Is-Purelib: true\nTag: %s\n" % TAG)
         .encode())]
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
        record.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 hooks


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _wheel(wheel_directory, [(arc, _read(path))
                                    for arc, path in _files()])


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    """PEP 660: a wheel whose .pth puts this source folder on sys.path."""
    return _wheel(wheel_directory, [("sked_editable.pth",
                                     (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md",
                    "build_backend/sked_build.py"] + [a for a, _ in _files()]:
            t.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
        pkg_info = _metadata(p).encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return name
