#!/bin/sh
# t_pgbouncer — (pgbouncer) sked behind PgBouncer in transaction pooling.
#
# The whole suite runs through PgBouncer as the `pgbouncer` backend, with
# sked_pooling=transaction in the URL. This test checks what that backend
# cannot show by itself: the URL parameter is sked's own (a mode it does
# not know is one line, exit 69; libpq never sees it), and without it the
# failure a transaction pooler causes (a named prepared statement found
# on a server session this client never had) is one line that names the
# setting, as the user's first hint. Workers, claims under contention,
# renewals, migrations (a transaction-scoped lock) are the suite's.
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pgbouncer) ;;
*) not_here "PgBouncer's own edges (every test runs through it as the pgbouncer backend)" ;;
esac
init_db

expect_rc 0 sk --db "$URL" info
grep -q 'sked_pooling=transaction' "$T/out" || fail "info does not show the URL it used"

bogus=$(printf '%s' "$URL" | sed 's/sked_pooling=transaction/sked_pooling=statement/')
expect_rc 69 sk --db "$bogus" info
stderr_one_line "$T/err"
grep -q "sked_pooling must be 'session' or 'transaction', not 'statement'" "$T/err" ||
	fail "unexpected message: $(cat "$T/err")"

# Without the parameter: named statements. PgBouncer hands the most
# recently used server session to the next client, so one of a few runs
# in a row meets the statements of the run before it.
plain=$(printf '%s' "$URL" | sed 's/[?&]sked_pooling=transaction//')
seen=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	set +e
	sk --db "$plain" list >"$T/out" 2>"$T/err"
	rc=$?
	set -e
	[ $rc = 0 ] && continue
	stderr_one_line "$T/err"
	grep -q 'add sked_pooling=transaction to the URL' "$T/err" ||
		fail "the failure does not name the setting: $(cat "$T/err")"
	seen=$((seen + 1))
done
[ $seen -gt 0 ] || fail "ten runs with named statements through a transaction pooler all passed"
note "$seen of 10 runs without sked_pooling=transaction met another session's statements"
