#!/bin/sh
# tests/browser/install.sh DIR [PKG] — install the npm packages of the
# folder PKG (default: this one, the browser tests' puppeteer-core;
# tests/openapi for the OpenAPI checks), pinned by its package-lock.json,
# into DIR/node_modules, once. Exit 0 when they are there, 69 when npm is
# missing or the registry cannot be reached (the caller skips, loudly).
#
# Tests of several backends call this at the same time (ctest -j): the
# first installs under an flock on DIR.lock while the others wait, then
# find the stamp and return. `npm ci` empties node_modules before it
# fills it, so without the lock a second install pulled the modules
# from under a browser test that was already running.
set -eu
dir=$1
here=$(cd "${2:-$(dirname "$0")}" && pwd)
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
# the stamp is written only after a whole install: a half-done one
# (killed, or npm failed) is done again
[ -d "$dir/node_modules" ] &&
	cmp -s "$here/package-lock.json" "$dir/installed-lock.json" && exit 0
command -v npm >/dev/null || { echo "npm is not installed" >&2; exit 69; }
rm -f "$dir/installed-lock.json"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
# no browser download: the tests drive the system's Chromium
PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --prefer-offline \
	--loglevel=error >npm.log 2>&1 || {
	tail -5 npm.log >&2
	exit 69
}
cp "$here/package-lock.json" installed-lock.json
