#!/bin/sh
# tests/build/t_man.sh — the man page sked.1.gz the build wrote with
# help2man (CTest: build/man): no "???" (help2man outside a UTF-8 locale
# turns every "…" into it), no warning from man's own check (what lintian
# runs), a section for every command and subcommand of `sked --help`, and
# every global flag and every flag of every `sked help COMMAND` in it.
set -eu
: "${SKED:?}" "${SKED_BUILD:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
page=$SKED_BUILD/sked.1.gz
if [ ! -f "$page" ]; then
	command -v help2man >/dev/null && fail "help2man is installed but the build wrote no $page"
	echo "SKIP: help2man is not installed: no man page" >&2
	exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
zcat "$page" >"$W/roff"
# the text as written: roff's \- and \e undone
sed -e 's/\\-/-/g' -e 's/\\e/\\/g' "$W/roff" >"$W/text"
if grep -n '???' "$W/text" >"$W/q"; then
	cat "$W/q" >&2
	fail "the man page has '???' in $(wc -l <"$W/q") place(s)"
fi
grep -q '…' "$W/text" || fail "the man page has no '…' at all (help2man's locale?)"
if command -v man >/dev/null; then
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$W/rendered" 2>"$W/warn" ||
		{ cat "$W/warn" >&2; fail "man cannot render the page"; }
	[ ! -s "$W/warn" ] || { cat "$W/warn" >&2; fail "man warns about the page"; }
	grep -n '???' "$W/rendered" && fail "the rendered page has '???'"
fi

commands=$("$SKED" --help | sed -n '/^Commands:$/,/^$/p' | sed '1d;$d' |
	cut -c3-14 | sed 's/ *$//')
[ "$(echo "$commands" | wc -l)" -gt 10 ] || fail "read no command table from sked --help"
for f in $("$SKED" --help | sed -n '/^Global flags/,/^[A-Z]/p' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	grep -q -- "$f" "$W/text" || fail "the man page lacks the global flag $f"
done
echo "$commands" | while IFS= read -r c; do
	grep -q "^\.SS \"sked $c\"" "$W/roff" || fail "the man page has no section for 'sked $c'"
	# shellcheck disable=SC2086 # "cron next" is two words
	for f in $("$SKED" help $c | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		# the flag within that command's section
		sed -n "/^\.SS \"sked $c\"/,/^\.SS /p" "$W/text" | grep -q -- "$f" ||
			fail "the man page's 'sked $c' lacks $f"
	done
done
echo "man page ok: $(echo "$commands" | wc -l) commands, every flag, no ???"
