#!/bin/sh
# scripts/verify-oracle.sh — run sked once against your own Oracle Database.
#
#   SKED_ORACLE='Driver={Oracle 19 ODBC driver};Dbq=//host:1521/service;Uid=u;Pwd=…' \
#       sh scripts/verify-oracle.sh [path/to/sked]
#   SKED_ORACLE='DSN=myoracle' sh scripts/verify-oracle.sh
#
# Oracle does not run where sked is developed, so its dialect has been
# checked only short of a server (tests/unit/test_oracle.c, docs/oracle.md).
# This script is the rest, what only a real server can prove: the schema
# under a fresh table prefix (twice: the steps must be idempotent), the
# dialect and strategy `sked info` names (oracle, skip-locked on 12c and
# later), 50 tasks enqueued one by one, 500 in one batch, one with a unique
# key twice and one with an empty payload (Oracle stores '' as NULL), two
# workers side by side until the queue is empty (the claim's cursor FOR
# UPDATE SKIP LOCKED, fetched n rows at a time, returned as an implicit
# result set), then 50 more run by two workers with the optimistic
# strategy forced. It checks that every task succeeded on its first
# attempt and nothing is left pending or running, then prints the DROP
# statements for its tables.
#
# Needs: Oracle 12.1 or later, unixODBC and Oracle's ODBC driver (Instant
# Client's "ODBC Package", 12.1 or later for implicit result sets), a user
# with CREATE TABLE, CREATE SEQUENCE, a quota on its tablespace and
# EXECUTE on SYS.DBMS_LOCK (the migration lock). The connection string is
# passed in the environment only, never printed.
set -eu

: "${SKED_ORACLE:?set SKED_ORACLE to an ODBC connection string or DSN=name}"
SKED=${1:-${SKED:-sked}}
command -v "$SKED" >/dev/null 2>&1 || [ -x "$SKED" ] || {
	echo "verify-oracle: no sked binary at '$SKED'" >&2
	exit 69
}

T=$(mktemp -d)
# a letter first (Oracle's unquoted names), short enough for 12.1's 30
# bytes with the longest table and index names
P="v$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')_"
export SKED_DATABASE_URL="odbc:$SKED_ORACLE"
export SKED_LOG="${SKED_LOG:-warn}"
unset SKED_CONFIG SKED_STRATEGY
cat >"$T/sked.conf" <<CONF
[sked]
prefix = $P
CONF
export SKED_CONFIG="$T/sked.conf"

fail() {
	echo "verify-oracle: FAIL: $*" >&2
	exit 1
}

cleanup() {
	rc=$?
	rm -rf "$T"
	echo "verify-oracle: the tables have the prefix $P; drop them with:" >&2
	for t in task_dep task_done queue_limit run task node schedule lock meta; do
		echo "  DROP TABLE ${P}$t PURGE;" >&2
	done
	echo "  -- and, once no sked prefix is left in this schema:" >&2
	echo "  DROP SEQUENCE sked_task_id_seq;" >&2
	exit $rc
}
trap cleanup EXIT

echo "== sked info"
"$SKED" init >/dev/null || fail "sked init"
"$SKED" init >/dev/null || fail "sked init a second time (migrations must be idempotent)"
"$SKED" info | tee "$T/info"
grep -q "dialect oracle" "$T/info" || fail "the oracle dialect was not chosen"
grep -q "strategy  skip-locked" "$T/info" ||
	fail "the skip-locked strategy was not chosen (Oracle 12c or later?)"

echo "== enqueue"
i=0
while [ $i -lt 50 ]; do
	"$SKED" enqueue echo --payload "one $i" >/dev/null || fail "enqueue $i"
	i=$((i + 1))
done
seq 1 500 | sed 's/^/batch /' >"$T/lines"
"$SKED" enqueue echo --lines "$T/lines" >"$T/ids" || fail "enqueue --lines"
[ "$(wc -l <"$T/ids")" -eq 500 ] || fail "enqueue --lines printed $(wc -l <"$T/ids") ids, not 500"
[ "$(sort -n "$T/ids" | uniq | wc -l)" -eq 500 ] || fail "enqueue --lines printed duplicate ids"
id=$("$SKED" enqueue echo --unique verify-key --payload first)
id2=$("$SKED" enqueue echo --unique verify-key --payload second)
[ "$id" = "$id2" ] || fail "a unique key enqueued twice made two tasks ($id, $id2)"
# an empty payload is NULL in Oracle: it must still run, with empty stdin
empty=$("$SKED" enqueue echo --payload "") || fail "enqueue with an empty payload"
# values over Oracle's 4,000-byte VARCHAR2 binds: a 100 kB payload, an
# output tail of 4 kB and a 20 kB result (CLOB columns, bound as
# SQL_LONGVARCHAR, and cast per row in the batch that ends a task)
big=$("$SKED" enqueue big --payload "$(head -c 100000 /dev/zero | tr '\0' z)") ||
	fail "enqueue a 100 kB payload"

echo "== two workers (skip-locked)"
# shellcheck disable=SC2016 # the handler expands it
printf '#!/bin/sh\ncat >/dev/null\necho done "$SKED_TASK_ID"\n' >"$T/h.sh"
chmod +x "$T/h.sh"
# shellcheck disable=SC2016 # the handler expands it
printf '#!/bin/sh\ncat >/dev/null\nhead -c 5000 /dev/zero | tr "\\0" x\nhead -c 20000 /dev/zero | tr "\\0" y >"$SKED_TASK_RESULT_FILE"\n' >"$T/big.sh"
chmod +x "$T/big.sh"
run_two() {
	"$SKED" worker --handler "echo=$T/h.sh" --handler "big=$T/big.sh" --concurrency 8 --until-empty &
	w1=$!
	"$SKED" worker --handler "echo=$T/h.sh" --handler "big=$T/big.sh" --concurrency 8 --until-empty &
	w2=$!
	wait $w1 || fail "worker 1 exited $?"
	wait $w2 || fail "worker 2 exited $?"
}
run_two

echo "== two workers (optimistic, forced)"
i=0
while [ $i -lt 50 ]; do
	"$SKED" enqueue echo --payload "opt $i" >/dev/null || fail "enqueue opt $i"
	i=$((i + 1))
done
SKED_STRATEGY=optimistic "$SKED" info | grep -q "strategy  optimistic" ||
	fail "the optimistic override was not honoured"
export SKED_STRATEGY=optimistic
run_two
unset SKED_STRATEGY

echo "== result"
count() { "$SKED" list --status "$1" --limit 100000 2>/dev/null | grep -c '^[0-9]' || true; }
ok=$(count succeeded)
[ "$ok" -eq 603 ] || fail "expected 603 succeeded tasks, found $ok"
for st in pending running retry dead cancelled; do
	[ "$(count $st)" -eq 0 ] || fail "$(count $st) task(s) left $st"
done
# exactly one attempt each: the ATTEMPTS column reads 1/N
"$SKED" list --status succeeded --limit 100000 | awk '/^[0-9]/ && $6 !~ /^1\// { bad++ } END { exit bad > 0 }' ||
	fail "a task ran more than once"
"$SKED" show "$id" | grep -q "succeeded" || fail "task $id did not succeed"
"$SKED" show "$empty" | grep -q "succeeded" || fail "the empty-payload task $empty did not succeed"
"$SKED" show "$big" >"$T/big"
grep -q "succeeded" "$T/big" || fail "the task with big values ($big) did not succeed"
grep -q "payload *(100000 bytes)" "$T/big" || fail "the 100 kB payload did not come back whole"
grep -q "result *(20000 bytes)" "$T/big" || fail "the 20 kB result did not come back whole"
[ "$(tr -cd x <"$T/big" | wc -c)" -ge 4000 ] || fail "the 4 kB output tail did not come back"
echo "verify-oracle: OK: 603 tasks ran once each on $(sed -n 's/^product *//p' "$T/info")"
