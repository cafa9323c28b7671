#!/bin/bash
# tests/build/t_completion.sh — the bash completion in contrib/sked.bash
# completes commands, subcommands, flags and kinds of values, asking the
# built binary for its commands and flags (CTest: build/completion); and
# it cannot drift from the command table: every command and subcommand of
# `sked --help`, every global flag, every flag of every
# `sked help COMMAND`, and every status `sked list --status` accepts is
# offered where it belongs.
set -eu
: "${SKED:?}" "${SKED_SRC:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
ln -s "$SKED" "$bindir/sked"
PATH=$bindir:$PATH
[ -f /usr/share/bash-completion/bash_completion ] &&
	. /usr/share/bash-completion/bash_completion
. "$SKED_SRC/contrib/sked.bash"

# complete LINE: the words of LINE, completing its last word
complete_line() {
	read -r -a COMP_WORDS <<<"$1"
	case $1 in *" ") COMP_WORDS+=("") ;; esac
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$1
	COMP_POINT=${#1}
	COMPREPLY=()
	_sked
	echo "${COMPREPLY[*]}"
}
expect() { # LINE WORD: completing LINE offers WORD
	got=$(complete_line "$1")
	case " $got " in *" $2 "*) ;; *) fail "'$1' offers '$got', not '$2'" ;; esac
}
expect "sked cr" cron
expect "sked en" enqueue
expect "sked --db sqlite:x.db sta" stats
expect "sked cron " next
expect "sked cron ne" next
expect "sked lock " run
expect "sked worker --pre" --prefetch
expect "sked worker --until" --until-empty
expect "sked cron next --c" --count
expect "sked --strategy " skip-locked
expect "sked list --status " dead
expect "sked cron " run
expect "sked queue " ls
expect "sked cancel --y" --yes
expect "sked retry --older" --older-than
expect "sked retry --status " cancelled
expect "sked cancel --status " running
expect "sked cancel --kind k --older-than " 1d
# every status `sked list --status` accepts (its refusal names them all)
statuses=$("$SKED" --db sqlite:/nonexistent/x.db list --status x 2>&1 |
	sed -n "s/.*is not one of \([a-z, ]*\).*/\1/p" | tr -d ,)
[ -n "$statuses" ] || fail "sked list --status x names no statuses"
for st in $statuses; do expect "sked list --status " "$st"; done
expect "sked list --status bl" blocked
not_offered() { # LINE WORD: completing LINE does not offer WORD
	got=$(complete_line "$1")
	case " $got " in *" $2 "*) fail "'$1' offers '$2': $got" ;; esac
}
not_offered "sked cancel --status " dead
not_offered "sked retry --status " pending
expect "sked cron add n e k --misfire " fire-all
expect "sked enqueue k --in 5" 5m
expect "sked help w" worker
expect "sked queue " set
expect "sked queue " ls
expect "sked queue s" set
expect "sked queue set q1 --c" --concurrency
expect "sked --log" --log-format
expect "sked --log-format " json
expect "sked --log-format json wor" worker
expect "sked --log-format json queue " ls

# every command, subcommand and flag of the command table
commands=$("$SKED" --help | sed -n '/^Commands:$/,/^$/p' | sed '1d;$d' |
	cut -c3-14 | sed 's/ *$//')
[ "$(echo "$commands" | wc -l)" -gt 10 ] || fail "read no command table from sked --help: $commands"
n=0
for f in $("$SKED" --help | sed -n '/^Global flags/,/^[A-Z]/p' | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	expect "sked ${f%"${f#???}"}" "$f"
	n=$((n + 1))
done
echo "$commands" | while IFS= read -r c; do
	case $c in
	*" "*) expect "sked ${c% *} " "${c#* }" ;; # the subcommand
	*) expect "sked " "$c" ;;
	esac
	# shellcheck disable=SC2086 # "cron next" is two words
	for f in $("$SKED" help $c | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		expect "sked $c --" "$f"
	done
done
echo "completion ok: every command, subcommand and flag of sked --help is offered"
