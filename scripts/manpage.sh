#!/bin/sh
# scripts/manpage.sh SKED HELP2MAN OUT — write the man page OUT.gz of sked.
#
# help2man turns `sked --help` and `sked --version` into the page; a
# COMMANDS section adds `sked help COMMAND` for every command that
# `sked --help` lists, so the page says what the program says and cannot
# drift from it. Run by the build (cmake/package.cmake).
set -eu
sked=$1
help2man=$2
out=$3
inc=$out.h2m

# the command names of `sked --help`: "  NAME         summary", where
# NAME ("init", "cron next") fills the first 12 columns after the indent
commands=$("$sked" --help | sed -n '/^Commands:$/,/^$/p' | sed '1d;$d' |
	cut -c3-14 | sed 's/ *$//')
[ -n "$commands" ] || { echo "manpage: no commands in sked --help" >&2; exit 1; }

# roff: a backslash is \e, a minus sign \- (a bare - is a hyphen, which
# a flag copied from the page must not become); a line starting with .
# or ' is protected
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"; }

{
	echo '[COMMANDS]'
	echo "$commands" | while IFS= read -r c; do
		echo ".SS \"sked $c\""
		echo '.nf'
		# shellcheck disable=SC2086 # "cron next" is two words
		"$sked" help $c | roff
		echo '.fi'
	done
	cat <<'END'
[FILES]
.TP
.I sked.db
the default database, sqlite:sked.db in the current folder; commands that
only read (list, show, stats, info, nodes, cron ls) never create it
[ENVIRONMENT]
.TP
.B SKED_DATABASE_URL
the database URL, as \-\-db
.TP
.B SKED_CONFIG
the config file, as \-\-config
.TP
.B SKED_STRATEGY
the claim strategy, as \-\-strategy
[EXIT STATUS]
The codes of sysexits.h: 64 usage, 65 bad data, 66 missing input, 69
database unavailable, 70 internal or database error, 73 read\-only
database, 74 I/O error, 75 try again, 78 configuration.
[SEE ALSO]
The guides installed with sked (docs/cli.md and the others), usually
in /usr/share/doc/sked or PREFIX/share/doc/sked.
END
} >"$inc"

# --locale=C.UTF-8: help2man reads the program's output in the locale
# given, and in its default (C) it turns every UTF-8 "…" into "???"
"$help2man" --no-info --section=1 --locale=C.UTF-8 \
	--name="distributed task scheduler on the database you already run" \
	--include="$inc" --output="$out" "$sked"
gzip -9nf "$out"
rm -f "$inc"
