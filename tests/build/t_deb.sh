#!/bin/sh
# tests/build/t_deb.sh — the Debian package (CTest: package/deb).
#
# Builds the .deb of this build folder with CPack (what `make deb` does)
# into a scratch folder, checks its contents with dpkg-deb -c and its
# dependencies (dpkg-shlibdeps's, so at least libc6 and libsqlite3), then
# installs it with dpkg into a scratch root (its own dpkg database, so
# the machine's is untouched) and runs the installed program. Skips
# (77) where dpkg is not there.
set -eu
: "${SKED_BUILD:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in cpack dpkg-deb dpkg dpkg-shlibdeps; do
	command -v $t >/dev/null || { echo "SKIP: no $t here" >&2; exit 77; }
done
mkdir -p "$SKED_BUILD/testtmp"
W=$(mktemp -d "$SKED_BUILD/testtmp/deb.XXXXXX")
(cd "$W" && cpack -G DEB --config "$SKED_BUILD/CPackConfig.cmake" -B "$W/out") \
	>"$W/cpack.log" 2>&1 || { cat "$W/cpack.log" >&2; fail "cpack exited $?"; }
deb=$(ls "$W"/out/sked_*.deb)
[ -f "$deb" ] || fail "cpack made no sked_*.deb"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's,^\./,/,' >"$W/contents"
for want in /usr/bin/sked /usr/include/sked.h \
	'/usr/lib/.*libsked\.so\.0$' '/usr/lib/.*libsked\.a$' \
	'/usr/lib/.*pkgconfig/sked\.pc$' '/usr/lib/.*cmake/sked/skedConfig\.cmake$' \
	/usr/share/man/man1/sked.1.gz /usr/share/bash-completion/completions/sked \
	/usr/share/doc/sked/cli.md /usr/share/doc/sked/examples/sked-worker.service; do
	grep -q "^$want" "$W/contents" || fail "the package lacks $want"
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for want in libc6 libsqlite3-0; do
	echo "$depends" | grep -q "$want" || fail "Depends lacks $want: $depends"
done

# install it into a scratch root, with a dpkg database of its own:
# unpacked, not configured (its postinst, ldconfig, would need a chroot)
R=$W/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
: >"$R/var/lib/dpkg/available"
dpkg --root="$R" --force-depends --force-not-root --force-bad-path \
	--log=/dev/null --instdir="$R" --admindir="$R/var/lib/dpkg" \
	--unpack "$deb" >"$W/dpkg.log" 2>&1 || { cat "$W/dpkg.log" >&2; fail "dpkg --unpack into $R failed"; }
dpkg --admindir="$R/var/lib/dpkg" -s sked | grep -q "^Status: install ok unpacked" ||
	fail "dpkg does not list sked as installed in $R"
"$R/usr/bin/sked" --version | grep -q '^sked ' || fail "the installed sked does not run"
pc=$(find "$R" -name sked.pc)
grep -qx 'prefix=/usr' "$pc" || fail "the package's sked.pc says $(grep ^prefix= "$pc")"
if command -v lintian >/dev/null; then
	# what lintian says is printed for whoever reads the log; its errors
	# about Debian's own archive rules (no changelog, a packager's
	# address) do not fail the package
	lintian --no-tag-display-limit "$deb" 2>&1 | sed 's/^/lintian: /' || true
fi
echo "package ok: $(basename "$deb")"
rm -rf "$W"
