#!/bin/sh
# tests/build/t_install.sh — install into a scratch prefix and use it as
# an outsider would (CTest: install/consumer).
#
# `cmake --install BUILD --prefix P`, then: sked.h and sked_abi.h are
# installed and each compiles alone as C and as C++ (sked_cli.h, for
# sked's own programs, is not installed); sked.pc names P and gives
# only P's include folder; a small program (consumer/consumer.c) builds
# and runs through pkg-config and through find_package(sked), with the
# shared library and with the static one (which must not need
# libsked.so); the man page, the bash completion and the docs are where
# man, bash-completion and a reader look; the systemd units name P's
# sked and P's config file, which is installed once and never
# overwritten by a later install.
set -eu
: "${SKED_BUILD:?}" "${SKED_SRC:?}"
mkdir -p "$SKED_BUILD/testtmp"
W=$(mktemp -d "$SKED_BUILD/testtmp/install.XXXXXX")
P=$W/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }
cc=${CC:-cc}

cmake --install "$SKED_BUILD" --prefix "$P" >"$W/install.log" 2>&1 ||
	{ cat "$W/install.log" >&2; fail "cmake --install exited $?"; }

# ---- the headers: self-contained, C and C++ ----
for h in sked.h sked_abi.h; do
	[ -f "$P/include/$h" ] || fail "$h is not in $P/include"
	printf '#include <%s>\nint f(void);\nint f(void) { return sked_abi_check(SKED_ABI_VERSION); }\n' \
		"$h" >"$W/hdr.c"
	"$cc" -std=c99 -Wall -Wextra -Werror -fsyntax-only -I"$P/include" "$W/hdr.c" ||
		fail "$h does not compile alone as C99"
	if command -v "${CXX:-c++}" >/dev/null; then
		"${CXX:-c++}" -x c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only \
			-I"$P/include" "$W/hdr.c" || fail "$h does not compile alone as C++"
	fi
done
[ -e "$P/include/sked_cli.h" ] && fail "sked_cli.h (sked's own programs only) is installed"
grep -q sked_errcode "$P/include/sked.h" && fail "sked.h declares the bindings' calls (sked_abi.h's)"

# ---- pkg-config ----
pc=$(find "$P" -name sked.pc)
[ -n "$pc" ] || fail "no sked.pc under $P"
grep -qx "prefix=$P" "$pc" || fail "sked.pc does not say prefix=$P: $(grep ^prefix= "$pc")"
export PKG_CONFIG_PATH="$(dirname "$pc")"
cflags=$(pkg-config --cflags sked | sed "s/ *$//") || fail "pkg-config --cflags sked"
[ "$cflags" = "-I$P/include" ] || fail "--cflags is '$cflags', not -I$P/include alone"
libdir=$(pkg-config --variable=libdir sked)
static=$(pkg-config --static --libs sked) || fail "pkg-config --static --libs sked"
echo "pkg-config --static --libs sked: $static"

"$cc" -o "$W/pc_shared" "$SKED_SRC/tests/build/consumer/consumer.c" \
	$cflags $(pkg-config --libs sked) -Wl,-rpath,"$libdir" ||
	fail "the shared link through pkg-config failed"
readelf -d "$W/pc_shared" | grep -q 'NEEDED.*libsked\.so' ||
	fail "pc_shared does not use libsked.so"
# the static library by the flags pkg-config gives, -lsked taken as .a
"$cc" -o "$W/pc_static" "$SKED_SRC/tests/build/consumer/consumer.c" \
	$cflags $(echo "$static" | sed 's/-lsked\b/-Wl,-Bstatic -lsked -Wl,-Bdynamic/') ||
	fail "the static link through pkg-config --static failed"
if readelf -d "$W/pc_static" | grep -q 'NEEDED.*libsked'; then
	fail "pc_static needs libsked.so"
fi

# ---- CMake: find_package(sked CONFIG) ----
cmake -S "$SKED_SRC/tests/build/consumer" -B "$W/cmake" \
	-DCMAKE_PREFIX_PATH="$P" >"$W/cmake.log" 2>&1 ||
	{ cat "$W/cmake.log" >&2; fail "configuring the find_package consumer failed"; }
cmake --build "$W/cmake" >>"$W/cmake.log" 2>&1 ||
	{ cat "$W/cmake.log" >&2; fail "building the find_package consumer failed"; }
if readelf -d "$W/cmake/consumer_static" | grep -q 'NEEDED.*libsked'; then
	fail "consumer_static (sked::sked_static) needs libsked.so"
fi
readelf -d "$W/cmake/consumer_shared" | grep -q 'NEEDED.*libsked\.so' ||
	fail "consumer_shared (sked::sked) does not use libsked.so"

n=0
for prog in "$W/pc_shared" "$W/pc_static" "$W/cmake/consumer_shared" \
	"$W/cmake/consumer_static"; do
	n=$((n + 1))
	out=$("$prog" "$W/db$n.sqlite") || fail "$prog exited $?"
	[ "$out" = "ok 1 consumer.check" ] || fail "$prog printed '$out'"
done
echo "4 consumers built and ran"

# ---- man page, completion, docs ----
if command -v help2man >/dev/null; then
	page=$P/share/man/man1/sked.1.gz
	[ -f "$page" ] || fail "no man page at $page"
	if command -v man >/dev/null; then
		[ "$(MANPATH=$P/share/man man -w sked)" = "$page" ] ||
			fail "man -w sked does not find $page"
		text=$(MANWIDTH=100 man -l "$page" 2>/dev/null | col -b)
		for want in "sked cron next" "--until-empty" "SKED_DATABASE_URL" \
			"$("$SKED_BUILD/sked" --version)"; do
			echo "$text" | grep -qF -- "$want" || fail "man page lacks '$want'"
		done
	fi
else
	fail "help2man is not installed (scripts/deps.sh test installs it): no man page"
fi
comp=$P/share/bash-completion/completions/sked
[ -f "$comp" ] || fail "no bash completion at $comp"
if [ -f /usr/share/bash-completion/bash_completion ]; then
	# bash-completion finds it on its own under each folder of
	# XDG_DATA_DIRS (default /usr/local/share:/usr/share)
	XDG_DATA_DIRS=$P/share PATH=$P/bin:$PATH bash -c '. /usr/share/bash-completion/bash_completion
		__load_completion sked && complete -p sked' >/dev/null ||
		fail "bash-completion does not load $comp"
fi
for f in README.md cli.md schedules.md examples/sked-worker.service; do
	[ -f "$P/share/doc/sked/$f" ] || fail "$f is not in $P/share/doc/sked"
done
# ---- the systemd units: the paths of this prefix, not /usr ----
for u in sked-worker.service sked@.service sked-dashboard.service; do
	f=$P/lib/systemd/system/$u
	[ -f "$f" ] || fail "no $u in $P/lib/systemd/system"
	grep -q "^ExecStart=$P/bin/sked --config $P/etc/sked/" "$f" ||
		fail "$u's ExecStart is not this prefix's: $(grep ^ExecStart= "$f")"
	grep -Eq '(^|[ =])/(usr/bin/sked|etc/sked)' "$f" && fail "$u still names /usr/bin/sked or /etc/sked"
done
grep -q '^Type=notify$' "$P/lib/systemd/system/sked-worker.service" ||
	fail "the installed unit is not the hardened one"
[ -f "$P/lib/sysusers.d/sked.conf" ] || fail "no sysusers.d file"
[ -f "$P/etc/sked/sked.conf" ] || fail "no $P/etc/sked/sked.conf"
echo "; mine" >>"$P/etc/sked/sked.conf"
cmake --install "$SKED_BUILD" --prefix "$P" >"$W/install2.log" 2>&1 ||
	{ cat "$W/install2.log" >&2; fail "the second cmake --install exited $?"; }
tail -n 1 "$P/etc/sked/sked.conf" | grep -qx '; mine' ||
	fail "a second install overwrote the operator's $P/etc/sked/sked.conf"
echo "man page, completion, docs, units and config installed"
rm -rf "$W"
