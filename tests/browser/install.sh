#!/bin/sh
# tests/browser/install.sh DIR — install the browser tests' npm packages
# (puppeteer-core, pinned by package-lock.json) into DIR/node_modules,
# once. Exit 0 when they are there, 69 when npm is missing or the
# registry cannot be reached (the caller skips, loudly).
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$dir/node_modules/puppeteer-core/package.json" ] &&
	cmp -s "$here/package-lock.json" "$dir/package-lock.json" && exit 0
command -v npm >/dev/null || { echo "npm is not installed" >&2; exit 69; }
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
cd "$dir"
# no browser download: the tests drive the system's Chromium
PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --prefer-offline \
	--loglevel=error >npm.log 2>&1 || {
	tail -5 npm.log >&2
	exit 69
}
