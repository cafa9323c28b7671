#!/bin/sh
# The edges a new user meets first (issue 15's papercuts), each checked
# the way a user would meet it:
#   - every time has one shape: milliseconds always, even .000 (cron
#     next's fire instants: whole seconds);
#   - `sked list | head` ends with status 0 and says nothing;
#   - a time without a zone is refused; a past --at and a --in of more
#     than a year are enqueued with a note that says so;
#   - a payload over the limit is refused with its true size;
#   - cron next and cron add take the expression as one argument;
#   - commands that only read never create a database;
#   - a worker waits for a database it cannot reach at start, says so
#     once, and gives up after --wait-db;
#   - [worker] prefetch and wait_db are accepted in the config file;
#   - `queue set` says what it set (issue 36), as `queue pause` does.
# The database-free parts run on the sqlite backend only.
# backends: sqlite pg
. "$(dirname "$0")/lib.sh"
init_db

# ---- one shape per time field, from the database's own values ----
id=$(sk enqueue k --at 2030-01-01T00:00:00Z)
sk --json show "$id" >"$T/show.json"
at=$(json_get 'd["run_at"]' <"$T/show.json")
expect_eq "$at" "2030-01-01T00:00:00.000Z" "run_at of a whole second"
for f in created_at updated_at; do
	v=$(json_get "d[\"$f\"]" <"$T/show.json")
	echo "$v" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' ||
		fail "$f is '$v', not YYYY-MM-DDTHH:MM:SS.mmmZ"
done
sk list >"$T/list"
grep -q "2030-01-01T00:00:00.000Z" "$T/list" || fail "list does not show run-at with .000: $(cat "$T/list")"

# ---- a past --at and a far --in are said ----
expect_rc 0 sk enqueue k --at 2020-01-01T00:00:00Z
grep -q "before the database's now" "$T/err" || fail "a past --at says nothing: $(cat "$T/err")"
expect_rc 0 sk enqueue k --in 9999d
grep -q "more than a year ahead" "$T/err" || fail "--in 9999d says nothing: $(cat "$T/err")"
expect_rc 0 sk enqueue k --in 10m
[ ! -s "$T/err" ] || fail "--in 10m is not quiet: $(cat "$T/err")"

# ---- a closed pipe ends a listing quietly ----
# (a kind no worker below runs: the worker at the end runs only what it must)
seq 1 3000 | sk enqueue listing --lines - >/dev/null
for args in "list --limit 3000" "--json list --limit 3000"; do
	# shellcheck disable=SC2086
	rc=$(
		exec 3>&1
		{ sk $args 2>"$T/pipe.err"; echo $? >&3; } | head -n 1 >/dev/null
	)
	expect_eq "$rc" 0 "sked $args | head: exit status"
	[ ! -s "$T/pipe.err" ] || fail "sked $args | head printed: $(cat "$T/pipe.err")"
done

[ "$SKED_BACKEND" = sqlite ] || exit 0

# ---- times without a zone ----
for t in 2026-03-08T07:30:00 2026-03-08 "2026-03-08 07:30"; do
	expect_rc 64 sk enqueue k --at "$t"
	grep -q "names no time zone" "$T/err" || fail "--at '$t': $(cat "$T/err")"
	expect_rc 64 sk cron next '* * * * *' --from "$t"
done
expect_rc 0 sk enqueue k --at 2026-03-08T07:30:00+01:00

# ---- cron next prints whole seconds; from keeps its milliseconds ----
out=$(sk cron next '30 7 * * *' --from 2026-03-08T00:00:00.250Z --count 1)
expect_eq "$out" "2026-03-08T07:30:00Z" "cron next"
sk --json cron next '30 7 * * *' --from 2026-03-08T00:00:00Z --count 1 >"$T/next.json"
expect_eq "$(json_get 'd["from"]' <"$T/next.json")" "2026-03-08T00:00:00.000Z" "cron next --json from"
expect_eq "$(json_get 'd["next"][0]' <"$T/next.json")" "2026-03-08T07:30:00Z" "cron next --json next"

# ---- one rule for the expression: one argument ----
expect_rc 64 sk cron next 0 7 '*' '*' mon-fri
grep -q "one quoted argument" "$T/err" || fail "cron next: $(cat "$T/err")"
expect_rc 64 sk cron add n 0 7 '*' '*' mon-fri k
grep -q "one quoted argument" "$T/err" || fail "cron add: $(cat "$T/err")"
expect_rc 0 sk cron next '0 7 * * mon-fri' --count 1
expect_rc 0 sk cron add n '0 7 * * mon-fri' k

# ---- the payload limit ----
head -c 2700000 /dev/zero | tr '\0' x >"$T/big"
expect_rc 65 sk enqueue k --payload "@$T/big"
grep -q "is 2700000 bytes, more than the limit of 1048576 bytes" "$T/err" ||
	fail "payload from a file: $(cat "$T/err")"
set +e
sk enqueue k --payload - <"$T/big" 2>"$T/err" >/dev/null
rc=$?
cat "$T/big" | sk enqueue k --payload - 2>"$T/err2" >/dev/null
rc2=$?
set -e
expect_eq "$rc $rc2" "65 65" "payload from stdin"
grep -q "stdin is 2700000 bytes" "$T/err2" || fail "payload from a pipe: $(cat "$T/err2")"

# ---- commands that only read do not create a database ----
mkdir "$T/empty"
for args in "show 999" "list" "stats" "info" "nodes" "cron ls" "cancel 1" \
	"retry 1" "cron rm x"; do
	# shellcheck disable=SC2086
	set +e
	(cd "$T/empty" && SKED_CONFIG= "$SKED" $args >/dev/null 2>"$T/err")
	rc=$?
	set -e
	expect_eq "$rc" 66 "sked $args in an empty folder"
	grep -q "no database at sked.db" "$T/err" || fail "sked $args: $(cat "$T/err")"
	[ ! -e "$T/empty/sked.db" ] || fail "sked $args created ./sked.db"
done
# an empty file that is not a sked database: refused, not migrated
: >"$T/empty/other.db"
expect_rc 78 sk --db "sqlite:$T/empty/other.db" list
expect_eq "$(sqlite3 "$T/empty/other.db" .tables)" "" "list migrated an empty file"

# ---- a worker waits for its database ----
start=$(date +%s)
expect_rc 69 sk --db "sqlite:$T/later/sked.db" worker --handler k=true \
	--until-empty --wait-db 2s
[ $(($(date +%s) - start)) -ge 2 ] || fail "the worker did not wait 2s"
expect_eq "$(grep -c 'waiting for it' "$T/err")" 1 "lines saying it waits"
grep -q "waited 2s" "$T/err" || fail "no give-up line: $(cat "$T/err")"
# the database appears while it waits: the worker starts and drains it
set +e
sk --db "sqlite:$T/later/sked.db" worker --handler k=true --until-empty \
	--wait-db 30s >/dev/null 2>"$T/wait.err" &
wpid=$!
sleep 1.5
mkdir "$T/later"
wait $wpid
rc=$?
set -e
expect_eq "$rc" 0 "the worker once its database appeared"
expect_eq "$(grep -c 'waiting for it' "$T/wait.err")" 1 "lines saying it waits"
grep -q "answers: starting" "$T/wait.err" || fail "no start line: $(cat "$T/wait.err")"
# --wait-db 0: at once, one line
expect_rc 69 sk --db "sqlite:$T/nowhere/sked.db" worker --handler k=true --wait-db 0
stderr_one_line "$T/err"

# ---- [worker] prefetch and wait_db in the config file ----
cat "$SKED_CONFIG" >"$T/w.conf"
printf '[worker]\nprefetch = 4\nwait_db = 5s\n[handler.k]\ncommand = true\n' >>"$T/w.conf"
expect_rc 0 env SKED_CONFIG="$T/w.conf" "$SKED" worker --until-empty
printf '[worker]\nprefetch = lots\n' >"$T/bad.conf"
expect_rc 78 env SKED_CONFIG="$T/bad.conf" "$SKED" worker --until-empty

# ---- a config that is not a file, or huge, is refused at once ----
# (/dev/zero once spun at 100 % CPU forever)
for cf in /dev/zero /dev/urandom "$T"; do
	expect_rc 78 timeout 20 "$SKED" --config "$cf" info
	stderr_one_line "$T/err"
done
expect_rc 78 timeout 20 env SKED_CONFIG=/dev/zero "$SKED" info
head -c 1100000 /dev/zero | tr '\0' '#' >"$T/huge.conf"
expect_rc 78 timeout 20 "$SKED" --config "$T/huge.conf" info
grep -q 'larger than 1 MiB' "$T/err" || fail "a huge config: $(cat "$T/err")"

# ---- --db-file: the URL from a file, never on the command line ----
# (ps shows --db, password and all)
(umask 077 && printf '%s\n' "$URL" >"$T/url")
sed '/^database = /d' "$T/sked.conf" >"$T/nodb.conf"
expect_rc 0 env SKED_CONFIG="$T/nodb.conf" "$SKED" --db-file "$T/url" info
[ ! -s "$T/err" ] || fail "--db-file with a private file is not quiet: $(cat "$T/err")"
grep -q '^url ' "$T/out" || fail "info through --db-file: $(cat "$T/out")"
chmod 644 "$T/url"
expect_rc 0 env SKED_CONFIG="$T/nodb.conf" "$SKED" --db-file "$T/url" info
grep -q 'can be read by other users' "$T/err" || fail "no warning for a readable --db-file"
expect_rc 64 sk --db "$URL" --db-file "$T/url" info
stderr_one_line "$T/err"
expect_rc 66 sk --db-file "$T/no-such-file" info
stderr_one_line "$T/err"
: >"$T/empty.url"
expect_rc 78 sk --db-file "$T/empty.url" info
stderr_one_line "$T/err"
expect_rc 66 timeout 20 "$SKED" --db-file /dev/zero info
stderr_one_line "$T/err"

# ---- what others wrote cannot drive the terminal ----
# a unique key with a newline, ESC, a C1 CSI and a bell: `show` escapes
# them (once printed raw: a forged line, red text), --json keeps them
key=$(printf 'a\nb\033[31mred\302\233x\007')
id=$(sk enqueue k --unique "$key")
sk show "$id" >"$T/show"
if grep -q "$(printf '\033')" "$T/show"; then fail "a raw ESC in show: $(od -c "$T/show" | head -5)"; fi
grep -q 'unique key   a\\nb\\x1b\[31mred\\u009bx\\x07$' "$T/show" || fail "the key is not escaped: $(grep unique "$T/show")"
[ "$(sk --json show "$id" | python3 -c 'import json,sys; print(ascii(json.load(sys.stdin)["unique_key"]))')" = "'a\\nb\\x1b[31mred\\x9bx\\x07'" ] ||
	fail "--json show changed the key"
# a table cell from the database (a node's host) is escaped too
start_worker esc --node-id esc-node --handler k=true --poll 200ms
listed() { sk nodes 2>/dev/null | grep -q esc-node; }
wait_for 20 listed || { cat "$T/esc.log" >&2; fail "the worker did not register"; }
sql "UPDATE {p}node SET host = 'h$(printf '\033')[31mred' WHERE id = 'esc-node'"
sk nodes >"$T/nodes"
if grep -q "$(printf '\033')" "$T/nodes"; then fail "a raw ESC in nodes: $(od -c "$T/nodes" | head -3)"; fi
grep -q 'h\\x1b\[31mred' "$T/nodes" || fail "the host is not escaped in nodes: $(cat "$T/nodes")"
kill_child TERM "$wpid"
wait_exit "$wpid" 30

# ---- queue set says what it set (issue 36), as pause says "paused queue" ----
expect_eq "$(sk queue set mailq --concurrency 5 --rate 100/1m)" \
	"set queue mailq: concurrency 5, rate 100/1m" "queue set's confirmation"
expect_eq "$(sk queue set mailq --per-key 1 --concurrency none)" \
	"set queue mailq: concurrency none, per-key 1" "queue set's confirmation of a removed limit"
expect_eq "$(sk queue pause mailq)" "paused queue mailq" "queue pause's confirmation"
exit 0
