#!/bin/sh
# scripts/deb-build.sh BUILD [JOBS] — configure and build BUILD for the
# Debian packages: the prefix /usr (the multiarch library folder, the
# paths in the units and in sked.pc) and the compiler and linker flags
# Debian builds its own packages with (dpkg-buildflags, every hardening
# feature on: fortified functions, stack protector, full RELRO with
# immediate binding). `make deb` and tests/build/t_deb.sh both use it, so
# the packages the test checks are the ones `make deb` makes.
set -eu
build=$1
jobs=${2:-2}
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cflags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S "$(dirname "$0")/.." -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_C_FLAGS="$cflags" \
	-DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
	-DCMAKE_SHARED_LINKER_FLAGS="$ldflags"
cmake --build "$build" -j "$jobs" --target sked sked_shared sked_static sked_man
