#!/bin/sh
# scripts/mkdeb.sh BUILD OUTDIR — the Debian packages of a built tree
# (docs/packaging.md; `make deb` runs it).
#
# BUILD must be configured with the prefix /usr (`make deb` configures
# build-deb/ so), because the multiarch library folder and the paths in
# the units and in sked.pc are taken from it. Installs BUILD into a
# staging folder (DESTDIR), splits it into three packages and builds
# them with dpkg-deb, as root-owned files, into OUTDIR:
#   libskedN     the shared library (N: the soname, SKED_ABI_VERSION)
#   libsked-dev  the header, libsked.so, libsked.a, sked.pc, the CMake package
#   sked         the program, man page, bash completion, systemd units,
#                sysusers.d file, /etc/sked/sked.conf, the docs
# Dependencies come from dpkg-shlibdeps: exactly the libraries linked.
set -eu
build=$(cd "${1:?usage: mkdeb.sh BUILD OUTDIR}" && pwd)
out=${2:?usage: mkdeb.sh BUILD OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "mkdeb: $*" >&2; exit 1; }
for t in dpkg-deb dpkg-shlibdeps dpkg-architecture strip; do
	command -v $t >/dev/null || die "$t is not installed (scripts/deps.sh test installs dpkg-dev)"
done
cache=$build/CMakeCache.txt
[ -f "$cache" ] || die "$build is not a CMake build folder"
cachevar() { sed -n "s/^$1:[A-Z]*=//p" "$cache"; }
prefix=$(cachevar CMAKE_INSTALL_PREFIX)
[ "$prefix" = /usr ] || die "$build is configured for the prefix '$prefix'; packages need /usr (make deb configures build-deb/ so)"
version=$(cachevar CMAKE_PROJECT_VERSION)
[ -n "$version" ] || die "no CMAKE_PROJECT_VERSION in $cache"
libdir=$(cachevar CMAKE_INSTALL_LIBDIR)
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ "$libdir" = "lib/$ma" ] || die "$build installs its libraries in $libdir, not lib/$ma"
abi=$(sed -n 's/^#define SKED_ABI_VERSION \([0-9]*\).*/\1/p' "$src/include/sked.h")
lib=libsked$abi
maint="sked developers <sked@example.org>"
# reproducible: the date of the last commit, else now
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

mkdir -p "$out"
out=$(cd "$out" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/mkdeb.XXXXXX")
trap 'rm -rf "$W"' EXIT
S=$W/stage
DESTDIR=$S cmake --install "$build" >"$W/install.log" 2>&1 ||
	{ cat "$W/install.log" >&2; die "cmake --install failed"; }

# move PATH (relative to the stage) into package PKG's tree
take() {
	pkg=$1
	shift
	for p; do
		# shellcheck disable=SC2086 # p may be a glob
		for f in $S/$p; do
			[ -e "$f" ] || [ -L "$f" ] || die "the install has no $p"
			rel=${f#"$S"/}
			mkdir -p "$W/$pkg/$(dirname "$rel")"
			mv "$f" "$W/$pkg/$rel"
		done
	done
}
take "$lib" "usr/lib/$ma/libsked.so.$abi" "usr/lib/$ma/libsked.so.$version"
take libsked-dev usr/include "usr/lib/$ma/libsked.so" "usr/lib/$ma/libsked.a" \
	"usr/lib/$ma/pkgconfig" "usr/lib/$ma/cmake"
# bookworm's place for units is /lib/systemd/system (lintian:
# systemd-service-file-outside-lib)
mkdir -p "$S/lib/systemd"
mv "$S/usr/lib/systemd/system" "$S/lib/systemd/system"
rmdir "$S/usr/lib/systemd"
take sked usr/bin usr/share etc lib/systemd usr/lib/sysusers.d
left=$(cd "$S" && find . ! -type d)
[ -z "$left" ] || die "files in no package: $left"

# what dh_strip does: no debug info, no .comment/.note; a static
# library keeps its symbols
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$W/sked/usr/bin/sked" "$W/$lib/usr/lib/$ma/libsked.so.$version"
strip --strip-debug --remove-section=.comment --remove-section=.note \
	--enable-deterministic-archives "$W/libsked-dev/usr/lib/$ma/libsked.a"

# every package: copyright and changelog in /usr/share/doc/PKG
date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
for p in "$lib" libsked-dev sked; do
	d=$W/$p/usr/share/doc/$p
	mkdir -p "$d"
	cp "$src/scripts/deb/copyright" "$d/copyright"
	printf '%s (%s) unstable; urgency=medium\n\n  * Built from the sked tree at %s.\n\n -- %s  %s\n' \
		sked "$version" "$commit" "$maint" "$date" | gzip -9n >"$d/changelog.gz"
done

# dpkg-shlibdeps wants a debian/control to stand in; it reads only the
# names of the packages
mkdir -p "$W/debian"
printf 'Source: sked\n\nPackage: %s\nArchitecture: any\n\nPackage: sked\nArchitecture: any\n' "$lib" \
	>"$W/debian/control"
shlibdeps() { # FILE… → the Depends line
	(cd "$W" && dpkg-shlibdeps -O "$@" 2>"$W/shlibdeps.err") |
		sed -n 's/^shlibs:Depends=//p' || { cat "$W/shlibdeps.err" >&2; die "dpkg-shlibdeps failed"; }
}
lib_deps=$(shlibdeps "$W/$lib/usr/lib/$ma/libsked.so.$version")
sked_deps=$(shlibdeps "$W/sked/usr/bin/sked")
[ -n "$lib_deps" ] && [ -n "$sked_deps" ] || die "dpkg-shlibdeps found no dependencies"

desc_long=" sked runs tasks, cron schedules and cluster locks on the database you
 already run (PostgreSQL, MariaDB/MySQL, SQLite, or any of them through
 ODBC), with no coordinator of its own."
control() { # PKG SECTION MULTIARCH DEPENDS EXTRA SUMMARY LONG
	p=$1
	size=$(du -k -s --apparent-size "$W/$p" | cut -f1)
	mkdir -p "$W/$p/DEBIAN"
	{
		echo "Package: $p"
		echo "Version: $version"
		echo "Architecture: $arch"
		echo "Maintainer: $maint"
		echo "Installed-Size: $size"
		[ -n "$4" ] && echo "Depends: $4"
		[ -n "$5" ] && printf '%s\n' "$5"
		echo "Section: $2"
		echo "Priority: optional"
		[ -n "$3" ] && echo "Multi-Arch: $3"
		echo "Description: $6"
		echo "$desc_long"
		echo " ."
		echo "$7"
	} >"$W/$p/DEBIAN/control"
}
control "$lib" libs same "$lib_deps" "" \
	"distributed task scheduler on your database - shared library" \
	" This package holds libsked, the shared library (soname libsked.so.$abi)."
control libsked-dev libdevel same \
	"$lib (= $version), libsqlite3-dev, libjansson-dev" \
	"Suggests: libpq-dev, libmariadb-dev, unixodbc-dev, libcurl4-openssl-dev, libssl-dev" \
	"distributed task scheduler on your database - development files" \
	" This package holds the headers sked.h (the C API) and sked_abi.h (for
 bindings), libsked.a and the pkg-config and CMake files
 (find_package(sked)) to build programs with libsked. Linking libsked.a
 statically also needs the development files of the database client
 libraries it was built with (suggested)."
control sked misc "" "$sked_deps, systemd | systemd-standalone-sysusers" \
	"Suggests: postgresql | mariadb-server, odbc-postgresql, odbc-mariadb" \
	"distributed task scheduler on your database - command and daemon" \
	" This package holds the sked command (workers, the web dashboard, the
 operator's commands), its man page and bash completion, the hardened
 systemd units sked-worker.service, sked@.service and sked-dashboard.service,
 the system user sked
 (sysusers.d) and the config file /etc/sked/sked.conf."

# libskedN: the shlibs file and the ldconfig trigger
echo "libsked $abi $lib (>= $version)" >"$W/$lib/DEBIAN/shlibs"
echo "activate-noawait ldconfig" >"$W/$lib/DEBIAN/triggers"
# sked: its conffile, the user at configure, its state at purge
(cd "$W/sked" && find etc -type f | sed 's,^,/,') >"$W/sked/DEBIAN/conffiles"
for s in postinst postrm; do
	cp "$src/scripts/deb/sked.$s" "$W/sked/DEBIAN/$s"
	chmod 0755 "$W/sked/DEBIAN/$s"
done
# lintian's overrides, each with its reason
for p in "$lib" libsked-dev sked; do
	o=$src/scripts/deb/$p.lintian-overrides
	case $p in "$lib") o=$src/scripts/deb/libsked.lintian-overrides ;; esac
	[ -f "$o" ] || continue
	mkdir -p "$W/$p/usr/share/lintian/overrides"
	sed "s/^libsked:/$p:/" "$o" >"$W/$p/usr/share/lintian/overrides/$p"
done

for p in "$lib" libsked-dev sked; do
	(cd "$W/$p" && find . -path ./DEBIAN -prune -o -type f -print | sed 's,^\./,,' |
		LC_ALL=C sort | xargs -r md5sum) >"$W/$p/DEBIAN/md5sums"
	# as dh_fixperms leaves them: 0755 folders, 0644 files, programs 0755
	find "$W/$p" -type d -exec chmod 0755 {} +
	find "$W/$p" -path "$W/$p/DEBIAN" -prune -o -type f -exec chmod 0644 {} +
	chmod 0644 "$W/$p/DEBIAN"/*
	[ ! -f "$W/$p/DEBIAN/postinst" ] || chmod 0755 "$W/$p/DEBIAN/postinst" "$W/$p/DEBIAN/postrm"
	[ ! -d "$W/$p/usr/bin" ] || chmod 0755 "$W/$p/usr/bin"/*
	dpkg-deb --root-owner-group -Zxz --build "$W/$p" \
		"$out/${p}_${version}_$arch.deb" >/dev/null
	echo "$out/${p}_${version}_$arch.deb"
done
