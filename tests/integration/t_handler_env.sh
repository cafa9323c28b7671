#!/bin/sh
# Handlers get a scrubbed environment: sked's own secrets (the database
# URL with its password, SKED_HTTP_AUTHORIZATION and its per-kind forms,
# SKED_DASHBOARD_AUTH, SKED_METRICS_TOKEN, PGPASSWORD, MYSQL_PWD) never
# reach a program or pipe: handler; everything else does, with the
# SKED_TASK_* variables. SKED_HANDLER_ENV=NAME,… passes named ones on.
# An env-dumping handler once put the database password in the run
# record, shown on the dashboard. The worker's code does not depend on
# the backend: sqlite and pg.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
case "$SKED_BACKEND" in sqlite | pg) ;; *) not_here "the handler environment does not depend on the backend" ;; esac
init_db

dump=$(handler dump.sh <<'H'
#!/bin/sh
# what matters only: the tail keeps 4 KiB
env | grep -E '^(SKED_|PGPASSWORD|MYSQL_PWD)|secret'
H
)
pdump=$(handler pdump.py <<'H'
#!/usr/bin/env python3
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    for k, v in sorted(os.environ.items()):
        if k.startswith(("SKED_", "PGPASSWORD", "MYSQL_PWD")) or "secret" in v:
            print(f"{k}={v}", file=sys.stderr)
    sys.stderr.flush()
    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
H
)
url=$(sed -n 's/^database = //p' "$T/sked.conf")
a=$(sk enqueue dump)
b=$(sk enqueue pdump)
# the URL from the environment, not the config file
sed '/^database = /d' "$T/sked.conf" >"$T/noddb.conf"
SKED_CONFIG="$T/noddb.conf" SKED_DATABASE_URL="$url" \
	SKED_HTTP_AUTHORIZATION="Bearer tok-secret-1" \
	SKED_HTTP_AUTHORIZATION_DUMP="Bearer tok-secret-2" \
	SKED_DASHBOARD_AUTH="env:NOPE" SKED_METRICS_TOKEN=tok-secret-3 \
	PGPASSWORD=pg-secret-4 MYSQL_PWD=my-secret-5 SKED_TEST_KEEP=kept-6 \
	"$SKED" worker --handler "dump=$dump" --handler "pdump=pipe:$pdump" \
	--until-empty --poll 100ms 2>"$T/w.log" || { cat "$T/w.log" >&2; fail "the worker failed"; }
out_of() { sql "SELECT output FROM $ALL_RUNS runs WHERE task_id = $1"; }
for id in $a $b; do
	out_of "$id" >"$T/env.$id"
	grep -q '^SKED_TEST_KEEP=kept-6$' "$T/env.$id" || fail "task $id: an ordinary variable did not pass: $(head -c 300 "$T/env.$id")"
	grep -q "^SKED_NODE_ID=" "$T/env.$id" || fail "task $id: SKED_NODE_ID missing"
	for s in SKED_DATABASE_URL= SKED_HTTP_AUTHORIZATION= SKED_HTTP_AUTHORIZATION_DUMP= \
		SKED_DASHBOARD_AUTH= SKED_METRICS_TOKEN= PGPASSWORD= MYSQL_PWD= \
		tok-secret pg-secret my-secret; do
		if grep -q "$s" "$T/env.$id"; then fail "task $id's handler saw $s"; fi
	done
done
grep -q '^SKED_TASK_ID=' "$T/env.$a" || fail "SKED_TASK_ID missing for a program"

# SKED_HANDLER_ENV passes a named one on, and only it
c=$(sk enqueue dump)
SKED_HANDLER_ENV=PGPASSWORD PGPASSWORD=pg-secret-4 MYSQL_PWD=my-secret-5 \
	"$SKED" worker --handler "dump=$dump" --until-empty --poll 100ms 2>"$T/w2.log" ||
	{ cat "$T/w2.log" >&2; fail "the second worker failed"; }
out_of "$c" >"$T/env.c"
grep -q '^PGPASSWORD=pg-secret-4$' "$T/env.c" || fail "SKED_HANDLER_ENV did not pass PGPASSWORD"
if grep -q 'MYSQL_PWD' "$T/env.c"; then fail "MYSQL_PWD passed without being named"; fi
echo "ok: $SKED_BACKEND: handler environment"
