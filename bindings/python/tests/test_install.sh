#!/bin/sh
# python/install: the package as a user gets it. Copies bindings/python
# aside (a pip build writes into its source folder). First into a bare
# venv (no system packages, and no wheel package in it) with pip and no
# network (--no-index): the package's own build backend
# (build_backend/sked_build.py) needs nothing beyond the standard
# library, so this works whatever setuptools the system has; and an
# editable install there too. Then into a fresh venv that sees the
# system's packages (for mypy), with --no-build-isolation --no-index,
# and from outside the tree: the
# installed module is the one imported, its version is SKED_VERSION, it
# loads libsked through its ABI check (and refuses a missing library in
# one line), a typed program runs on it, and mypy --strict finds the
# shipped hints (py.typed): clean on that program, an error on a wrong
# call; and the package itself checks clean under mypy --strict.
#
# Env: SKED_LIBRARY (libsked.so of this build), SKED_SRC (the tree),
# SKED_TEST_TMP (scratch). Exit 77 (skipped) without python3-venv, unless
# CI is set.
set -eu

src=${SKED_SRC:?}
lib=${SKED_LIBRARY:?}
py=python3
# Debian's interpreter has Debian's setuptools, wheel and mypy
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${CI:-}" = true ] && [ "${SKED_ALLOW_SKIP:-}" != 1 ]; then
		fail "would skip, but CI must run it: $*"
	fi
	echo "SKIP: $*" >&2
	exit 77
}

$py -c 'import venv, ensurepip' 2>/dev/null ||
	skip "$py has no venv/ensurepip (apt-get install python3-venv)"

root=${SKED_TEST_TMP:-${TMPDIR:-/tmp}}
mkdir -p "$root"
tmp=$(mktemp -d "$root/pyinstall.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/src"
cp -R "$src/bindings/python/pyproject.toml" "$src/bindings/python/README.md" \
	"$src/bindings/python/sked" "$src/bindings/python/build_backend" \
	"$tmp/src/"
rm -rf "$tmp/src/sked/__pycache__" "$tmp/src/build_backend/__pycache__"

# a bare venv: pip and whatever ensurepip brings, no wheel, no network
$py -m venv "$tmp/bare"
if "$tmp/bare/bin/python" -c 'import wheel' 2>/dev/null; then
	"$tmp/bare/bin/python" -m pip uninstall --quiet --yes wheel
fi
"$tmp/bare/bin/python" -c 'import wheel' 2>/dev/null &&
	fail "the bare venv has wheel: the check below would prove nothing"
"$tmp/bare/bin/python" -m pip install --quiet --no-index "$tmp/src" \
	> "$tmp/pip-bare.log" 2>&1 || {
	cat "$tmp/pip-bare.log" >&2
	fail "pip install --no-index on a bare venv (no wheel) failed"
}
(cd "$tmp" && SKED_LIBRARY=$lib "$tmp/bare/bin/python" -c '
import os, sys, sked
assert os.path.realpath(sked.__file__).startswith(os.path.realpath(sys.argv[1]))
assert os.path.exists(os.path.join(os.path.dirname(sked.__file__), "py.typed"))
' "$tmp/bare") || fail "the bare venv's install does not import"
"$tmp/bare/bin/python" -m pip uninstall --quiet --yes sked
"$tmp/bare/bin/python" -m pip install --quiet --no-index -e "$tmp/src" \
	> "$tmp/pip-edit.log" 2>&1 || {
	cat "$tmp/pip-edit.log" >&2
	fail "pip install -e on a bare venv failed"
}
got=$(cd "$tmp" && SKED_LIBRARY=$lib "$tmp/bare/bin/python" -c \
	'import sked; print(sked.__file__)')
[ "$got" = "$tmp/src/sked/__init__.py" ] ||
	fail "the editable install imports $got, not $tmp/src/sked"
echo "ok: pip install (and -e) on a bare venv without wheel, offline"
rm -rf "$tmp/src/sked/__pycache__" "$tmp/src/build_backend/__pycache__"

$py -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --no-build-isolation \
	--no-index "$tmp/src" > "$tmp/pip.log" 2>&1 || {
	cat "$tmp/pip.log" >&2
	fail "pip install of bindings/python failed"
}
echo "ok: pip install into a venv"

vpy=$tmp/venv/bin/python
cd "$tmp"
want=$(sed -n 's/^#define SKED_VERSION *"\(.*\)"/\1/p' "$src/include/sked.h")
SKED_LIBRARY=$lib "$vpy" - "$tmp/venv" "$want" <<'PY'
import importlib.metadata, os, sys
import sked
venv, want = sys.argv[1], sys.argv[2]
assert os.path.realpath(sked.__file__).startswith(os.path.realpath(venv)), \
    "imported %s, not the installed package" % sked.__file__
assert os.path.exists(os.path.join(os.path.dirname(sked.__file__),
                                   "py.typed")), "py.typed not installed"
dist = importlib.metadata.version("sked")
assert dist == want, "package version %s, SKED_VERSION %s" % (dist, want)
assert sked.version() == want, "libsked %s" % sked.version()
assert sked._lib.sked_abi_check(sked.ABI_VERSION) == 0
print("ok: installed sked %s, libsked %s, ABI %d" % (dist, sked.version(),
                                                     sked.ABI_VERSION))
PY

# a library that is not there: one line, an ImportError
if out=$(SKED_LIBRARY=$tmp/no-such-libsked.so "$vpy" -c 'import sked' 2>&1); then
	fail "import sked with a missing library succeeded"
fi
echo "$out" | grep -q "ImportError: sked: cannot load libsked" ||
	fail "missing library: $out"
echo "ok: a missing libsked is one ImportError line"

cp "$src/bindings/python/tests/typed_client.py" "$tmp/client.py"
SKED_LIBRARY=$lib SKED_URL="sqlite:$tmp/client.db" SKED_LOG=warn \
	"$vpy" client.py > "$tmp/client.out" 2>&1 || {
	cat "$tmp/client.out" >&2
	fail "the typed client failed"
}
grep -q "^task 1 succeeded bulk 2 created True manual 4 " "$tmp/client.out" ||
	fail "typed client: $(cat "$tmp/client.out")"
grep -q "^aio 3$" "$tmp/client.out" && grep -q "^app 42$" "$tmp/client.out" ||
	fail "typed client (aio, app): $(cat "$tmp/client.out")"
echo "ok: the typed client ran on the installed package"

if ! "$vpy" -c 'import mypy' 2>/dev/null; then
	skip "no mypy (apt-get install python3-mypy)"
fi
SKED_LIBRARY=$lib "$vpy" -m mypy --strict --no-incremental client.py \
	> "$tmp/mypy.out" 2>&1 || {
	cat "$tmp/mypy.out" >&2
	fail "mypy --strict on the typed client"
}
# the package's own code, strictly (errors inside an installed package
# are not reported when checking a program that imports it)
SKED_LIBRARY=$lib "$vpy" -m mypy --strict --no-incremental "$tmp/src/sked" \
	> "$tmp/mypy-pkg.out" 2>&1 || {
	cat "$tmp/mypy-pkg.out" >&2
	fail "mypy --strict on bindings/python/sked"
}
cat > bad.py <<'PY'
import sked
db = sked.open("sqlite:x.db")
db.enqueue(42, priority="high")
n: str = db.count()
PY
if "$vpy" -m mypy --strict --no-incremental bad.py > "$tmp/bad.out" 2>&1; then
	fail "mypy accepted a wrong call: the hints are not seen"
fi
for want in 'Argument 1 to "enqueue" of "Sked" has incompatible type "int"' \
	'Argument "priority" to "enqueue" of "Sked" has incompatible type "str"' \
	'Incompatible types in assignment (expression has type "int"'; do
	grep -qF "$want" "$tmp/bad.out" || {
		cat "$tmp/bad.out" >&2
		fail "mypy did not say: $want"
	}
done
echo "ok: mypy --strict sees the shipped hints"
