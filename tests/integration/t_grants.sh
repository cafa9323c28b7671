# t_grants — the GRANTs docs/operations.md lists are enough, and a worker
# missing one says so once and stops.
#
# A role of this test's own gets exactly the statements of the docs'
# block for its database (PostgreSQL or MariaDB, with this test's prefix);
# as that role, enqueue, a worker with --until-empty, stats, list and show
# work and the worker drains every task. Then one right is taken back
# (INSERT on task_done, which ending a task needs): the worker exits 77
# (EX_NOPERM) at once with one line that names it, claims nothing, leaves
# no node row, and does not log it again and again.
# backends: pg pg-optimistic mariadb mariadb-optimistic
. "$(dirname "$0")/lib.sh"

case "$SKED_BACKEND" in
pg | pg-optimistic | mariadb | mariadb-optimistic) ;;
*) not_here "rights are tested on PostgreSQL and MariaDB, directly" ;;
esac
init_db

ROLE="${PREFIX}w"
SRC=${SKED_SRC:-$(dirname "$0")/../..}
# the docs' block after the line that starts with $1, as SQL for this test
doc_grants() {
	awk -v start="$1" '
		/^## The database user/ { section = 1 }
		section && index($0, start) == 1 { on = 1; next }
		on && /^```sql/ { inblock = 1; next }
		inblock && /^```/ { exit }
		inblock { print }' "$SRC/docs/operations.md" |
		sed -e "s/sked_worker/$ROLE/g" -e "s/sked_/$PREFIX/g" \
			-e "s/app\\./sked_test./g"
}
case "$(family)" in
pg)
	GRANTS=$(doc_grants "On PostgreSQL")
	ROLE_URL=$(echo "$SKED_TEST_PG_URL" | sed "s|://[^@]*@|://$ROLE@|")
	drop_role() {
		sql "DROP OWNED BY $ROLE; DROP ROLE IF EXISTS $ROLE" >/dev/null 2>&1 || true
	}
	sql "CREATE ROLE $ROLE LOGIN" >/dev/null ||
		skip "cannot create a role on this server (the test user needs CREATEROLE)"
	;;
mariadb)
	GRANTS=$(doc_grants "On MariaDB and MySQL")
	ROLE_URL=$(echo "$SKED_TEST_MY_URL" | sed "s|://[^@]*@|://$ROLE:pw@|")
	drop_role() { sql "DROP USER IF EXISTS '$ROLE'@'%'" >/dev/null 2>&1 || true; }
	sql "CREATE USER '$ROLE'@'%' IDENTIFIED BY 'pw'" ||
		skip "cannot create a user on this server (the test user needs CREATE USER and GRANT OPTION)"
	;;
esac
trap 'rc0=$?; drop_role; (exit $rc0); cleanup' EXIT
[ "$(printf '%s\n' "$GRANTS" | grep -c GRANT)" -ge 2 ] ||
	fail "no GRANT statements found in docs/operations.md: $GRANTS"
sql "$GRANTS" || fail "the documented GRANTs do not run: $GRANTS"

cat >"$T/role.conf" <<CONF
[sked]
database = $ROLE_URL
strategy = $STRATEGY
prefix = $PREFIX
CONF
as_role() { SKED_CONFIG="$T/role.conf" "$SKED" "$@"; }

# everything a worker and the everyday commands do, with those rights only
for i in $(seq 1 19); do
	as_role enqueue ok --queue mail --payload "$i" >/dev/null ||
		fail "enqueue as the role failed"
done
# a child waiting on the first task: task_dep is written, then read as the
# parent ends
parent=$(sql "SELECT MIN(id) FROM {p}task")
as_role enqueue ok --queue mail --after "$parent" >/dev/null ||
	fail "enqueue --after as the role failed"
ok=$(handler ok <<'EOF'
#!/bin/sh
exit 0
EOF
)
expect_rc 0 as_role worker --handler "ok=$ok" --until-empty --concurrency 4
expect_eq "$(count "SELECT COUNT(*) FROM {p}task_done WHERE status = 2")" 20 \
	"tasks the role's worker finished"
grep -i 'denied' "$T/err" && fail "the worker was refused something"
expect_rc 0 as_role stats
expect_rc 0 as_role list --status succeeded
id=$(sql "SELECT MIN(id) FROM {p}task_done")
expect_rc 0 as_role show "$id"
expect_rc 0 as_role show "$parent"

# one right fewer: the worker says which, once, and stops with 77
case "$(family)" in
pg) sql "REVOKE INSERT ON {p}task_done FROM $ROLE" ;;
mariadb) sql "REVOKE INSERT ON sked_test.{p}task_done FROM '$ROLE'@'%'" ;;
esac
as_role enqueue ok --payload late >/dev/null
SKED_CONFIG="$T/role.conf" SKED_LOG=info "$SKED" worker --handler "ok=$ok" \
	--until-empty >"$T/lacking.log" 2>&1 &
wpid=$!
wait_exit "$wpid" 60
[ "$wrc" = 77 ] || { cat "$T/lacking.log" >&2; fail "a worker lacking a right exited $wrc, not 77"; }
grep -q "lacks INSERT on ${PREFIX}task_done" "$T/lacking.log" || {
	cat "$T/lacking.log" >&2
	fail "the worker did not name the missing right"
}
expect_eq "$(grep -c 'lacks' "$T/lacking.log")" 1 "lines naming the missing right"
expect_eq "$(grep -ci 'denied' "$T/lacking.log")" 0 "server refusals logged"
expect_eq "$(count "SELECT COUNT(*) FROM {p}task WHERE status = 0")" 1 \
	"the task is still pending, unclaimed"
expect_eq "$(count "SELECT COUNT(*) FROM {p}node")" 0 "node rows left"
