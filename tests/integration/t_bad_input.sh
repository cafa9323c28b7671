#!/bin/sh
# Bad input gets exactly one line on stderr ("sked: ...") and the sysexits
# code docs/cli.md promises, and a password given in a URL never shows in
# any output. Bad handlers fail only their own attempt, with a run record
# that says why (killed by signal, timed out); a handler program that
# cannot run is refused when the worker starts, and a task of a kind no
# handler serves is never claimed (it spends no attempt),
# while the worker goes on with other tasks.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

pw=Sup3rSecretPw
: >"$T/all"
# bad RC ARGS...: expect exit RC and one line on stderr; collect all output
bad() {
	want=$1
	shift
	expect_rc "$want" sk "$@"
	stderr_one_line "$T/err"
	cat "$T/out" "$T/err" >>"$T/all"
}
bad 64 --db redis://x info
bad 64 nosuchcommand
bad 64 --no-such-flag info
bad 64 enqueue k --no-such-flag
bad 64 enqueue k --priority abc
bad 64 enqueue k --in 5x
bad 64 enqueue k --in 5
bad 64 enqueue k --at 2026-13-45T99:00:00Z
bad 64 enqueue k --at 2026-01-01T00:00:00Z --in 1s
bad 64 worker
bad 65 enqueue 'bad kind!'
bad 64 enqueue k --max-attempts 0
bad 65 enqueue k --max-attempts 5000
bad 65 show 999999
bad 65 cron next '61 * * * *'
bad 65 cron next '0 9 * * *' --tz Mars/Olympus_Mons
bad 66 enqueue k --payload @"$T/no-such-file"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task")" 0 "tasks written by refused commands"

# config files
bad 78 --config "$T/missing.conf" info
grep -q "missing.conf" "$T/err" || fail "the message does not name the missing config file"
printf '[sked]\nprefix = %s\ncolour = blue\n' "$PREFIX" >"$T/unknown.conf"
bad 78 --config "$T/unknown.conf" info
grep -q "unknown.conf:3" "$T/err" || fail "the message does not say file:line for an unknown key"
printf '[worker]\nlease = soon\n' >"$T/value.conf"
bad 78 --config "$T/value.conf" info
grep -q "value.conf:2" "$T/err" || fail "the message does not say file:line for a bad value"

# strategies the database cannot honour
case "$(family)" in
sqlite) bad 78 --strategy readpast info ;;
*) bad 78 --strategy sqlite info ;;
esac

# databases that cannot be reached or written; passwords stay hidden
bad 69 --db "postgres://sked:$pw@127.0.0.1:1/x" info
grep -q '\*\*\*' "$T/err" || fail "the password is not shown masked"
bad 69 --db "mysql://sked:$pw@127.0.0.1:1/x" enqueue k
# passwords the redaction once showed: it must read each string as its
# driver does (libpq's user info ignores '=', '#' and '?'; odbc:// is a
# connection string; a user name may look like a secret key), and driver
# messages that echo the URL or a piece of it are masked too
bad 69 --db "postgres://app:pa=ss#$pw@127.0.0.1:1/x" info
bad 69 --db "postgres://app:pa=ss?$pw@127.0.0.1:1/x" info
bad 69 --db "mysql://pwd=a:sec&$pw@127.0.0.1:1/x" info
bad 64 --db "postgres://u:hun%zz$pw@127.0.0.1:1/db" info
bad 64 --db "postgres://u:$pw@[bad" info
if [ -n "${SKED_TEST_ODBC:-}" ]; then
	bad 69 --db "odbc://DSN=nosuch;UID=app;PWD=abc&$pw" info
	bad 69 --db "odbc://DSN=nosuch;PWD={p#ss;$pw};UID=y" info
fi
touch "$T/file"
bad 69 --db "sqlite:$T/file/sub.db" info # the parent is a regular file
if [ "$(family)" = sqlite ]; then
	# A read-only database file. Root ignores permission bits, not the
	# immutable attribute.
	if chattr +i "$T/sked.db" 2>/dev/null; then
		set +e
		sk enqueue k >"$T/out" 2>"$T/err"
		rc=$?
		set -e
		chattr -i "$T/sked.db"
		expect_eq $rc 73 "exit status writing to a read-only database"
		stderr_one_line "$T/err"
	else
		note "chattr +i does not work here: read-only database not checked"
	fi
fi
if grep -q "$pw" "$T/all"; then
	grep "$pw" "$T/all" >&2
	fail "a password was printed"
fi

# ---- handlers that cannot do their job ----
ok=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
sig=$(handler sig.sh <<'H'
#!/bin/sh
kill -9 $$
H
)
slow=$(handler slow.sh <<'H'
#!/bin/sh
exec sleep 30
H
)
nohandler=$(sk enqueue orphan)
missing=$(sk enqueue ghost)
killed=$(sk enqueue sig)
good1=$(sk enqueue ok)
good2=$(sk enqueue ok)
for id in $nohandler $missing $killed; do
	sql "UPDATE {p}task SET max_attempts = 1 WHERE id = $id" >/dev/null
done
# a handler program that does not exist: refused at start, one line, 78
expect_rc 78 sk worker --handler "ok=$ok" --handler "ghost=$T/no-such-program" \
	--until-empty --poll 100ms
stderr_one_line "$T/err"
grep -q "no-such-program" "$T/err" || fail "the refusal does not name the program: $(cat "$T/err")"
sk worker --handler "ok=$ok" --handler "sig=$sig" --until-empty --poll 100ms \
	--lease 5s 2>"$T/w.log" ||
	{ cat "$T/w.log" >&2; fail "the worker failed"; }
err() { sql "SELECT error FROM $ALL_RUNS runs WHERE task_id = $1"; }
expect_eq "$(status_of "$good1") $(status_of "$good2")" "2 2" "tasks with a working handler"
expect_eq "$(status_of "$killed")" 3 "status of the task whose handler was killed"
err "$killed" | grep -q "killed by signal 9" || fail "killed-handler run error: $(err "$killed")"
# kinds no handler of this worker serves: never claimed, no attempt spent
for id in $nohandler $missing; do
	expect_eq "$(sql "SELECT status, attempts FROM {p}task WHERE id = $id")" "0	0" "task $id of a kind without a handler"
	expect_eq "$(count "SELECT COUNT(*) FROM $ALL_RUNS runs WHERE task_id = $id")" 0 "runs of task $id"
done

t=$(sk enqueue slow --max-attempts 1)
sk worker --handler "slow=$slow" --timeout 1s --until-empty --poll 100ms --lease 5s 2>"$T/w2.log" ||
	{ cat "$T/w2.log" >&2; fail "the worker failed"; }
expect_eq "$(status_of "$t")" 3 "status of the task that timed out"
err "$t" | grep -q "timed out" || fail "timeout run error: $(err "$t")"

# A URL typo is said at once (64), never waited for: a port that is not
# a number and an unknown ?parameter once exited 69 (unavailable), and
# --wait-db forever retried them for good.
case "$SKED_BACKEND" in
pg | pg-optimistic | pgbouncer)
	base=${URL%%\?*}
	hostport=$(printf '%s' "$base" | sed 's|.*@||; s|/.*||')
	typos="$(printf '%s' "$base" | sed "s|@$hostport/|@${hostport%:*}:badport/|") $base?bogus=1 $(printf '%s' "$base" | sed "s|@$hostport/|@${hostport%:*}:99999/|")"
	;;
mariadb | mariadb-optimistic) typos="${URL%%\?*}?bogus=1" ;;
*) typos="" ;;
esac
for u in $typos; do
	expect_rc 64 timeout 20 "$SKED" --db "$u" info
	stderr_one_line "$T/err"
	expect_rc 64 timeout 20 "$SKED" --db "$u" worker --handler k=true --wait-db forever
	stderr_one_line "$T/err"
done
