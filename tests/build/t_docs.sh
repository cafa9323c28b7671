#!/bin/sh
# tests/build/t_docs.sh — docs/cli.md says what the program does
# (CTest: build/docs). What can be taken from the binary is compared with
# the page:
#   - every command `sked --help` lists is named in backquotes, and every
#     flag `sked help COMMAND` names appears (for cron and lock, in
#     schedules.md or locks.md, which cli.md links);
#   - every command that prints a JSON document has a row in the JSON
#     table;
#   - every [worker] key of the page's example config file is accepted by
#     the program, and the page names every config key the program
#     accepts that the test knows of (prefetch, wait_db, lock_wait_warn);
#   - every status `sked list --status` accepts is named by `sked help
#     list`, the page's `list` section and docs/api.md's task list;
#   - the exit-code table names no state the program no longer has.
set -eu
: "${SKED:?}" "${SKED_SRC:?}"
doc=$SKED_SRC/docs/cli.md
fail() { echo "FAIL: docs/cli.md: $*" >&2; status=1; }
status=0
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

commands=$("$SKED" --help | sed -n '/^Commands:$/,/^$/p' | sed '1d;$d' |
	cut -c3-14 | sed 's/ *$//')
[ -n "$commands" ] || { echo "FAIL: no commands in sked --help" >&2; exit 1; }
echo "$commands" | while IFS= read -r c; do
	# cron's and lock's pages carry their flags; cli.md links them
	case $c in
	cron*) pages="$doc $SKED_SRC/docs/schedules.md" ;;
	lock*) pages="$doc $SKED_SRC/docs/locks.md" ;;
	*) pages=$doc ;;
	esac
	grep -q "\`\(sked \)\?$c[\` ]" "$doc" ||
		{ echo "FAIL: docs/cli.md: no word on '$c'" >&2; echo x >>"$W/bad"; }
	# shellcheck disable=SC2086
	for flag in $("$SKED" help $c | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		# shellcheck disable=SC2086
		cat $pages | grep -q -- "$flag\b" ||
			{ echo "FAIL: docs/cli.md: '$c' has $flag, the page does not" >&2; echo x >>"$W/bad"; }
	done
done
[ ! -s "$W/bad" ] || status=1

# the JSON table: "| `cmd` |" or "| `cmd`, `cmd2` |"
table=$(sed -n '/^## JSON output/,/^## /p' "$doc" | grep '^| `')
for c in $(echo "$commands" | tr ' ' '_'); do
	c=$(echo "$c" | tr '_' ' ')
	# these print no JSON document (bench's is in performance.md)
	case $c in worker | demo | help | bench | dashboard | "lock run") continue ;; esac
	echo "$table" | grep -q "\`$c\`" || fail "the JSON table has no row for '$c'"
done

# the example config's [worker] keys are all accepted
sed -n '/^```ini$/,/^```$/p' "$doc" | sed '1d;$d' |
	sed -n '/^\[worker\]/,/^\[/p' | grep '=' >"$W/keys"
[ -s "$W/keys" ] || fail "no [worker] keys in the example config"
{ echo '[worker]'; cat "$W/keys"; } >"$W/w.ini"
"$SKED" --config "$W/w.ini" cron next '* * * * *' --count 1 >/dev/null 2>"$W/err" ||
	fail "the example [worker] section is refused: $(cat "$W/err")"
for k in prefetch wait_db lock_wait_warn; do
	grep -q "^$k = " "$W/keys" || fail "the example config lacks [worker] $k"
done

# every status `sked list --status` accepts (its refusal names them all)
# is named by `sked help list`, by the page's `list` section and by the
# statuses of docs/api.md's list
statuses=$("$SKED" --db sqlite:/nonexistent/x.db list --status x 2>&1 |
	sed -n "s/.*is not one of \([a-z, ]*\).*/\1/p" | tr -d ,)
[ -n "$statuses" ] || fail "sked list --status x names no statuses"
"$SKED" help list >"$W/help-list"
sed -n '/^### `list`/,/^### /p' "$doc" >"$W/list-section"
grep -A2 '^`status` (`pending`' "$SKED_SRC/docs/api.md" >"$W/api-status"
for st in $statuses; do
	grep -q "\b$st\b" "$W/help-list" || fail "sked help list does not name the status $st"
	grep -q "\`$st\`" "$W/list-section" || fail "the list section does not name the status $st"
	grep -q "\`$st\`" "$W/api-status" ||
		{ echo "FAIL: docs/api.md: GET /api/tasks's statuses lack $st" >&2; status=1; }
done

# nothing in the exit-code table for a state that is gone
if sed -n '/^## Exit codes/,$p' "$doc" | grep -q "not available yet"; then
	fail "the exit-code table still has 'command not available yet'"
fi
[ $status = 0 ] && echo "docs/cli.md agrees with sked --help"
exit $status
