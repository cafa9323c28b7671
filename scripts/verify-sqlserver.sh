#!/bin/sh
# scripts/verify-sqlserver.sh — run sked once against your own SQL Server.
#
#   SKED_MSSQL='Driver={ODBC Driver 18 for SQL Server};Server=host,1433;Database=db;Uid=u;Pwd=…;TrustServerCertificate=yes' \
#       sh scripts/verify-sqlserver.sh [path/to/sked]
#   SKED_MSSQL='DSN=mydsn' sh scripts/verify-sqlserver.sh
#
# SQL Server does not run where sked is developed, so its dialect has
# been checked only short of a server (tests/unit/test_sqlserver.c). This
# script is the rest: it creates the schema under a fresh table prefix,
# enqueues 50 tasks one by one, 500 in one batch (sked's enqueue_many for
# SQL Server) and one with a unique key twice, runs two workers side by
# side until the queue is empty, and checks that every task succeeded on
# its first attempt and nothing is left pending or running. Then it
# prints the DROP statements for its tables. It needs unixODBC and
# Microsoft's ODBC driver (msodbcsql18); sked reads everything back itself.
# The connection string is passed in the environment only, never printed.
set -eu

: "${SKED_MSSQL:?set SKED_MSSQL to an ODBC connection string or DSN=name}"
SKED=${1:-${SKED:-sked}}
command -v "$SKED" >/dev/null 2>&1 || [ -x "$SKED" ] || {
	echo "verify-sqlserver: no sked binary at '$SKED'" >&2
	exit 69
}

T=$(mktemp -d)
P="v$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')_"
export SKED_DATABASE_URL="odbc:$SKED_MSSQL"
export SKED_LOG=${SKED_LOG:-warn}
unset SKED_CONFIG SKED_STRATEGY
cat >"$T/sked.conf" <<CONF
[sked]
prefix = $P
CONF
export SKED_CONFIG="$T/sked.conf"

fail() {
	echo "verify-sqlserver: FAIL: $*" >&2
	exit 1
}

cleanup() {
	rc=$?
	rm -rf "$T"
	echo "verify-sqlserver: the tables have the prefix $P; drop them with:" >&2
	for t in task_dep task_done queue_limit run task node schedule lock meta; do
		echo "  DROP TABLE ${P}$t;" >&2
	done
	exit $rc
}
trap cleanup EXIT

echo "== sked info"
"$SKED" init >/dev/null || fail "sked init"
"$SKED" init >/dev/null || fail "sked init a second time (migrations must be idempotent)"
"$SKED" info | tee "$T/info"
grep -q "dialect sqlserver" "$T/info" || fail "the sqlserver dialect was not chosen"
grep -q "strategy  readpast" "$T/info" || fail "the readpast strategy was not chosen"

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

echo "== two workers"
printf '#!/bin/sh\ncat >/dev/null\necho done "$SKED_TASK_ID"\n' >"$T/h.sh"
chmod +x "$T/h.sh"
"$SKED" worker --handler "echo=$T/h.sh" --concurrency 8 --until-empty &
w1=$!
"$SKED" worker --handler "echo=$T/h.sh" --concurrency 8 --until-empty &
w2=$!
wait $w1 || fail "worker 1 exited $?"
wait $w2 || fail "worker 2 exited $?"

echo "== result"
count() { "$SKED" list --status "$1" --limit 100000 2>/dev/null | grep -c '^[0-9]' || true; }
ok=$(count succeeded)
[ "$ok" -eq 551 ] || fail "expected 551 succeeded tasks, found $ok"
for st in pending running retry dead cancelled; do
	[ "$(count $st)" -eq 0 ] || fail "$(count $st) task(s) left $st"
done
# exactly one attempt each: the ATTEMPTS column reads 1/N
"$SKED" list --status succeeded --limit 100000 | awk '/^[0-9]/ && $6 !~ /^1\// { bad++ } END { exit bad > 0 }' ||
	fail "a task ran more than once"
"$SKED" show "$id" | grep -q "succeeded" || fail "task $id did not succeed"
echo "verify-sqlserver: OK: 551 tasks ran once each on $(sed -n 's/^product *//p' "$T/info")"
