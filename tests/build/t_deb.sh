#!/bin/sh
# tests/build/t_deb.sh — the Debian packages (CTest: package/deb).
#
# Builds libskedN, libsked-dev and sked as `make deb` does
# (scripts/deb-build.sh into deb-build/ inside this build folder, then
# scripts/mkdeb.sh), checks their contents and dependencies, runs lintian
# (no error, no warning, no missing hardening; docs/packaging.md names
# exactly the tags it reports), installs the three with `dpkg -i` into a scratch root with
# its own dpkg database (maintainer scripts run without chroot, with
# DPKG_ROOT set, so the machine's is untouched), checks what postinst did
# (the user sked), runs the installed program and library, runs
# `systemd-analyze verify` and `systemd-analyze security` on the installed
# units, then purges them and checks that nothing is left but the user
# (Debian policy keeps it). Skips (77) where the tools are missing.
set -eu
: "${SKED_BUILD:?}" "${SKED_SRC:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in dpkg-deb dpkg dpkg-shlibdeps dpkg-architecture lintian systemd-analyze systemd-sysusers; do
	command -v $t >/dev/null || { echo "SKIP: no $t here (scripts/deps.sh test)" >&2; exit 77; }
done
mkdir -p "$SKED_BUILD/testtmp"
W=$(mktemp -d "$SKED_BUILD/testtmp/deb.XXXXXX")

# a build for the prefix /usr with Debian's hardening flags, as `make deb`
B=$SKED_BUILD/deb-build
sh "$SKED_SRC/scripts/deb-build.sh" "$B" 2 >"$W/build.log" 2>&1 ||
	{ tail -n 40 "$W/build.log" >&2; fail "the /usr build failed"; }
sh "$SKED_SRC/scripts/mkdeb.sh" "$B" "$W/out" >"$W/mkdeb.log" 2>&1 ||
	{ cat "$W/mkdeb.log" >&2; fail "mkdeb.sh exited $?"; }
abi=$(sed -n 's/^#define SKED_ABI_VERSION \([0-9]*\).*/\1/p' "$SKED_SRC/include/sked.h")
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=$(ls "$W"/out/libsked"${abi}"_*.deb)
dev=$(ls "$W"/out/libsked-dev_*.deb)
prog=$(ls "$W"/out/sked_*.deb)
echo "packages:"
for d in "$lib" "$dev" "$prog"; do
	echo "  $(basename "$d") $(du -k "$d" | cut -f1) KiB"
done

# contents: PKG PATTERN… (each a regular expression of one path)
has() {
	deb=$1
	shift
	dpkg-deb -c "$deb" | awk '{print $6}' | sed 's,^\./,/,' >"$W/contents"
	for want; do
		grep -q "^$want\$" "$W/contents" || fail "$(basename "$deb") lacks $want"
	done
}
has "$lib" "/usr/lib/$ma/libsked\.so\.$abi" "/usr/lib/$ma/libsked\.so\.[0-9.]*" \
	"/usr/share/doc/libsked$abi/copyright"
grep -q include "$W/contents" && fail "libsked$abi holds headers"
has "$dev" /usr/include/sked.h /usr/include/sked_abi\.h "/usr/lib/$ma/libsked\.so" "/usr/lib/$ma/libsked\.a" \
	"/usr/lib/$ma/pkgconfig/sked\.pc" "/usr/lib/$ma/cmake/sked/skedConfig\.cmake"
grep -q sked_cli "$W/contents" && fail "libsked-dev holds sked_cli.h, which is not for users"
has "$prog" /usr/bin/sked /usr/share/man/man1/sked.1.gz \
	/usr/share/bash-completion/completions/sked \
	/lib/systemd/system/sked-worker.service '/lib/systemd/system/sked@\.service' \
	/lib/systemd/system/sked-dashboard.service \
	/usr/lib/sysusers.d/sked.conf /etc/sked/sked.conf /usr/share/doc/sked/cli.md
grep -q 'libsked\.so' "$W/contents" && fail "the package sked holds the library"
dpkg-deb -I "$prog" conffiles | grep -qx /etc/sked/sked.conf ||
	fail "/etc/sked/sked.conf is not a conffile"

# dependencies: exactly what is linked (dpkg-shlibdeps), no more
for d in "$lib" "$prog"; do
	dep=$(dpkg-deb -f "$d" Depends)
	echo "$(basename "$d") Depends: $dep"
	for want in libc6 libsqlite3-0; do
		echo "$dep" | grep -q "$want" || fail "$(basename "$d") does not depend on $want"
	done
done
dpkg-deb -f "$dev" Depends | grep -q "libsked$abi (= " ||
	fail "libsked-dev does not depend on libsked$abi of its own version"

# lintian: no error and no warning (overrides say why in scripts/deb/)
lintian -I --tag-display-limit 0 "$lib" "$dev" "$prog" >"$W/lintian" 2>&1 || true
sed 's/^/lintian: /' "$W/lintian"
grep -q '^[EW]: ' "$W/lintian" && fail "lintian reports errors or warnings"
# and the binaries are hardened as Debian's own (fortify, bindnow)
grep -q ': hardening-' "$W/lintian" && fail "lintian reports missing hardening"
# docs/packaging.md's "lintian" names exactly the tags lintian reports
# (it once named two hardening tags fixed since: issue 36)
seen=$(sed -n 's/^[IWE]: [^:]*: \([a-z0-9.-]*\).*/\1/p' "$W/lintian" | sort -u | tr '\n' ' ')
named=$(sed -n '/^## lintian$/,/^## /p' "$SKED_SRC/docs/packaging.md" |
	grep -o '`[a-z0-9]*-[a-z0-9.-]*`' | tr -d '`' | sort -u | tr '\n' ' ')
[ "$seen" = "$named" ] ||
	fail "docs/packaging.md's lintian section names: $named; lintian reports: $seen"

# install into a scratch root with a dpkg database of its own
R=$W/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
: >"$R/var/lib/dpkg/available"
dpkgr() {
	dpkg --root="$R" --force-depends --force-script-chrootless \
		--force-not-root --log=/dev/null "$@"
}
dpkgr -i "$lib" "$dev" "$prog" >"$W/dpkg.log" 2>&1 ||
	{ cat "$W/dpkg.log" >&2; fail "dpkg -i into $R failed"; }
for p in "libsked$abi" libsked-dev sked; do
	dpkg --root="$R" -s "$p" | grep -q "^Status: install ok installed" ||
		fail "dpkg does not list $p as installed in $R"
done
grep -q '^sked:x:[0-9]*:[0-9]*:.*:/var/lib/sked:' "$R/etc/passwd" ||
	fail "postinst made no user sked: $(cat "$R/etc/passwd" 2>/dev/null)"
"$R/usr/bin/sked" --version | grep -q '^sked ' || fail "the installed sked does not run"
LD_LIBRARY_PATH=$R/usr/lib/$ma python3 -c "
import ctypes
l = ctypes.CDLL('libsked.so.$abi')
l.sked_version.restype = ctypes.c_char_p
assert l.sked_abi_check($abi) == 0
print('libsked.so.$abi loads: sked', l.sked_version().decode())" ||
	fail "the installed libsked.so.$abi does not load"
grep -qx 'prefix=/usr' "$R/usr/lib/$ma/pkgconfig/sked.pc" ||
	fail "the package's sked.pc says $(grep ^prefix= "$R/usr/lib/$ma/pkgconfig/sked.pc")"

# the installed units: the hardened one, with the paths of the prefix /usr
u=$R/lib/systemd/system/sked-worker.service
grep -q '^Type=notify$' "$u" || fail "the installed unit is not the hardened one (Type=notify)"
grep -q '^ExecStart=/usr/bin/sked --config /etc/sked/sked.conf worker' "$u" ||
	fail "the installed unit's ExecStart: $(grep ^ExecStart= "$u")"
grep -q '^ExecStart=/usr/bin/sked --config /etc/sked/%i.conf worker' \
	"$R/lib/systemd/system/sked@.service" || fail "sked@.service's ExecStart"
# verify needs systemd's own units and the programs named: a copy of the
# root with the host's (the purge below checks the real root)
V=$W/vroot
cp -a "$R" "$V"
mkdir -p "$V/bin"
cp /bin/kill "$V/bin/kill"
cp -rn /lib/systemd/system/. "$V/lib/systemd/system/"
grep -q '^ExecStart=/usr/bin/sked --config /etc/sked/sked.conf dashboard' \
	"$R/lib/systemd/system/sked-dashboard.service" || fail "sked-dashboard.service's ExecStart"
for unit in sked-worker.service sked@.service sked-dashboard.service; do
	grep -qx 'RestartPreventExitStatus=64 77 78' "$R/lib/systemd/system/$unit" ||
		fail "$unit restarts on what a restart cannot fix (no RestartPreventExitStatus)"
done
systemd-analyze verify --man=no --root="$V" sked-worker.service sked@test.service sked-dashboard.service \
	>"$W/verify" 2>&1 || { cat "$W/verify" >&2; fail "systemd-analyze verify rejects the units"; }
[ ! -s "$W/verify" ] || { cat "$W/verify" >&2; fail "systemd-analyze verify warns about the units"; }
for unit in sked-worker.service sked@test.service sked-dashboard.service; do
	systemd-analyze security --offline=yes --root="$R" "$unit" >"$W/security" 2>&1 ||
		{ cat "$W/security" >&2; fail "systemd-analyze security on $unit failed"; }
	level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p' "$W/security")
	echo "systemd-analyze security $unit: $level"
	[ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' ||
		{ tail -n 5 "$W/security" >&2; fail "$unit's exposure is $level, above 2.0"; }
done

# what a worker made: state under /var/lib/sked, to be purged
mkdir -p "$R/var/lib/sked"
: >"$R/var/lib/sked/sked.db"
dpkgr --purge sked libsked-dev "libsked$abi" >"$W/purge.log" 2>&1 ||
	{ cat "$W/purge.log" >&2; fail "dpkg --purge failed"; }
dpkg --root="$R" -l 2>/dev/null | grep -q '^[a-z][a-z] *\(sked\|libsked\)' &&
	fail "dpkg still lists a package: $(dpkg --root="$R" -l | tail -n 3)"
left=$(cd "$R" && find . -mindepth 1 ! -type d | sed 's,^\./,/,' |
	grep -v -e '^/var/lib/dpkg/' -e '^/etc/\(passwd\|group\|shadow\|gshadow\)-\{0,1\}$' \
		-e '^/etc/\.pwd\.lock$' || true)
[ -z "$left" ] || fail "the purge left files behind: $left"
dirs=$(cd "$R" && find . -mindepth 1 -type d | sed 's,^\./,/,' | grep -v -e '^/var/lib/dpkg' -e '^/var/lib$' -e '^/var$' -e '^/etc$' || true)
[ -z "$dirs" ] || fail "the purge left folders behind: $dirs"
echo "packages ok: built, lintian clean, installed, verified, purged"
rm -rf "$W"
