#!/bin/sh
# What waiting cannot fix fails at once (docs/cli.md, "Exit codes"): a
# database that does not exist exits 78 and a refused login or missing
# role 77, in one line, for a one-shot command and for a worker with
# --wait-db; a server that refuses connections is still waited for.
# backends: pg mariadb
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in
pg | mariadb) ;;
*) not_here "connection errors of a server (pg and mariadb only)" ;;
esac

# with_db URL RC CMD...: run sked --db URL CMD within 20 s; it must exit
# RC with one line on stderr
with_db() {
	wu=$1
	wr=$2
	shift 2
	t0=$(now_ms)
	set +e
	timeout 20 "$SKED" --db "$wu" "$@" >"$T/out" 2>"$T/err"
	got=$?
	set -e
	[ "$got" = "$wr" ] || { cat "$T/err" >&2; fail "'$*' on $wu exited $got, expected $wr"; }
	expect_eq "$(grep -c . "$T/err")" 1 "lines on stderr for '$*' ($(cat "$T/err"))"
	took=$(($(now_ms) - t0))
	[ "$took" -lt 10000 ] || fail "'$*' took $took ms to give up"
}

case "$(family)" in
pg)
	base=${SKED_TEST_PG_URL%/*}
	nodb="$base/sked_no_such_db"
	norole=$(echo "$SKED_TEST_PG_URL" | sed 's|://[^@]*@|://sked_no_such_role@|')
	;;
mariadb)
	base=${SKED_TEST_MY_URL%/*}
	nodb="$base/sked_no_such_db"
	norole=$(echo "$SKED_TEST_MY_URL" | sed 's|://[^@]*@|://sked:wrong-password@|')
	;;
esac

with_db "$nodb" 78 list
grep -q "sked_no_such_db" "$T/err" || fail "the line does not name the database: $(cat "$T/err")"
with_db "$nodb" 78 worker --wait-db 1h --handler "x=/bin/true"
with_db "$nodb" 78 worker --handler "x=/bin/true"
with_db "$norole" 77 list
with_db "$norole" 77 worker --wait-db 1h --handler "x=/bin/true"

# a server that is not there (a free port refuses) is waited for
port=$(free_port)
down=$(echo "$base" | sed "s|:[0-9]*\$|:$port|")/sked_test
t0=$(now_ms)
set +e
timeout 30 "$SKED" --db "$down" worker --wait-db 2s --handler "x=/bin/true" >"$T/out" 2>"$T/err"
got=$?
set -e
took=$(($(now_ms) - t0))
expect_eq "$got" 69 "exit of a worker whose server refuses"
[ "$took" -ge 1900 ] || fail "a refused connection was not waited for (gave up after $took ms)"
grep -q "waiting for it" "$T/err" || fail "no note of the wait: $(cat "$T/err")"
