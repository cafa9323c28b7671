#!/bin/sh
# Mending a graph (docs/workflows.md, "Mending a failed graph"): a retry
# never runs a task before its parents have succeeded (retry ID, retry
# --status cancelled --yes and the JSON API's retry put a child whose
# parent is still live back to blocked, with the count of its open
# parents); retry --with-dependents brings back a dead parent with the
# sub-graph its end cancelled, in one go, the children blocked with
# correct counts, and the whole graph then runs in order; cancel says how
# many tasks it cancelled with it and --json lists them.
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db

st() { sk --json show "$1" | json_get 'd["status"]'; }
live() { sql "SELECT status, open_parents FROM {p}task WHERE id = $1"; }
TAB=$(printf '\t')

# ---- a retry of a child whose parent is still pending ----
p=$(sk enqueue par)
c=$(sk enqueue chi --after "$p")
sk cancel "$c" >/dev/null
expect_eq "$(st "$c")" cancelled "the child, cancelled"
sk retry "$c" >"$T/out"
expect_eq "$(live "$c")" "6${TAB}1" "retry ID of a child of a pending parent: blocked, 1 open parent"
grep -q "blocked again" "$T/out" || fail "retry did not say the task is blocked: $(cat "$T/out")"

# the same through --status cancelled --yes, with two parents, one of
# them ended well (it counts) and one live
ok=$(sk enqueue okp)
c2=$(sk enqueue chi --after "$p,$ok")
sk cancel "$c2" >/dev/null
sk cancel "$ok" >/dev/null # ended cancelled: under "cancel" it must run again first
sk retry --status cancelled --yes >/dev/null
expect_eq "$(live "$c2")" "6${TAB}2" "retry --status cancelled: two open parents (one live, one retried with it)"
expect_eq "$(live "$ok")" "0${TAB}0" "the retried parent without parents of its own is pending"

# an "ignore" child counts a cancelled parent as ended, a live one as open
ig=$(sk enqueue chi --after "$p" --on-parent-failure ignore)
sk cancel "$ig" >/dev/null
sk retry "$ig" >/dev/null
expect_eq "$(live "$ig")" "6${TAB}1" "an ignore child of a live parent, retried: blocked"

# run them: every child starts after its parents ended
rec=$(handler rec.sh <<'H'
#!/bin/sh
echo "start $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
sleep 0.2
echo "end $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
H
)
start_worker w --concurrency 4 --poll 100ms --handler "par=$rec $T" \
	--handler "okp=$rec $T" --handler "chi=$rec $T"
done3() { [ "$(st "$c")" = succeeded ] && [ "$(st "$c2")" = succeeded ] && [ "$(st "$ig")" = succeeded ]; }
wait_for 60 done3 || { tail "$T/w.log" >&2; fail "the retried children did not run"; }
stamp() { awk -v k="$1" -v id="$2" '$1 == k && $2 == id { print $3 }' "$T/log"; }
for pair in "$p $c" "$p $c2" "$ok $c2" "$p $ig"; do
	set -- $pair
	[ "$(stamp start "$2")" -gt "$(stamp end "$1")" ] ||
		fail "child $2 started before its parent $1 ended: $(cat "$T/log")"
done
kill_child TERM "$wpid"
wait_exit "$wpid" 30

# ---- a dead parent's sub-graph, mended in one go ----
flaky=$(handler flaky.sh <<'H'
#!/bin/sh
[ -e "$1/fixed" ] || exit 3
echo "start $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
echo "end $SKED_TASK_ID $(date +%s%N)" >>"$1/log"
H
)
other=$(sk enqueue chi)
root=$(sk enqueue flaky --max-attempts 1)
a=$(sk enqueue chi --after "$root")
b=$(sk enqueue chi --after "$a")
d=$(sk enqueue chi --after "$b,$other")
i=$(sk enqueue chi --after "$root" --on-parent-failure ignore)
start_worker w2 --concurrency 4 --poll 100ms --handler "flaky=$flaky $T" --handler "chi=$rec $T"
settled() { [ "$(st "$root")" = dead ] && [ "$(st "$i")" = succeeded ] && [ "$(st "$d")" = cancelled ]; }
wait_for 60 settled || { tail "$T/w2.log" >&2; fail "the graph did not fail as set up"; }
expect_eq "$(st "$a") $(st "$b") $(st "$d")" "cancelled cancelled cancelled" "the sub-graph below the dead root"
kill_child TERM "$wpid"
wait_exit "$wpid" 30

# a plain retry of a dead task that has a dead parent waits for it
sk retry --with-dependents "$i" >"$T/out" 2>&1 && fail "retry --with-dependents of a succeeded task"
sk --json retry --with-dependents "$root" >"$T/mend.json"
expect_eq "$(json_get 'd["status"]' <"$T/mend.json")" pending "the mended root"
expect_eq "$(json_get 'sorted(d["retried_with"])' <"$T/mend.json")" "[$a, $b, $d]" "retried with it"
expect_eq "$(live "$a")" "6${TAB}1" "a: blocked on the root"
expect_eq "$(live "$b")" "6${TAB}1" "b: blocked on a"
expect_eq "$(live "$d")" "6${TAB}1" "d: blocked on b (its other parent succeeded)"
expect_eq "$(st "$i")" succeeded "the ignoring child is left alone"
touch "$T/fixed"
: >"$T/log"
start_worker w3 --concurrency 4 --poll 100ms --handler "flaky=$flaky $T" --handler "chi=$rec $T"
mended() { [ "$(st "$d")" = succeeded ]; }
wait_for 60 mended || { tail "$T/w3.log" >&2; fail "the mended graph did not run"; }
for pair in "$root $a" "$a $b" "$b $d"; do
	set -- $pair
	[ "$(stamp start "$2")" -gt "$(stamp end "$1")" ] ||
		fail "mended: $2 started before its parent $1 ended: $(cat "$T/log")"
done
expect_eq "$(grep -c '^start' "$T/log")" 4 "each mended task ran once"
kill_child TERM "$wpid"
wait_exit "$wpid" 30

# ---- cancel says what went with it ----
r=$(sk enqueue never)
k1=$(sk enqueue w --after "$r")
k2=$(sk enqueue w --after "$k1")
k3=$(sk enqueue w --after "$r")
k4=$(sk enqueue w --after "$r" --on-parent-failure ignore)
sk cancel "$r" >"$T/out"
grep -q "^3 task(s) cancelled with it" "$T/out" || fail "cancel did not count: $(cat "$T/out")"
expect_eq "$(st "$k4")" pending "the ignoring child runs"
r=$(sk enqueue never)
k1=$(sk enqueue w --after "$r")
k2=$(sk enqueue w --after "$k1")
sk --json cancel "$r" >"$T/c.json"
expect_eq "$(json_get 'sorted(d["cancelled_with"])' <"$T/c.json")" "[$k1, $k2]" "cancel --json lists them"
# and mending that cancel brings all three back, in order of need
sk retry --with-dependents "$r" >"$T/out"
grep -q "^2 task(s) its end had cancelled are back" "$T/out" || fail "retry --with-dependents said: $(cat "$T/out")"
expect_eq "$(live "$r") $(live "$k1") $(live "$k2")" "0${TAB}0 6${TAB}1 6${TAB}1" "the cancelled graph, mended"

# ---- the JSON API: the same library calls ----
command -v curl >/dev/null || skip "curl is not installed"
{
	tok=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
	printf '%s\n' "$tok" >"$T/tok"
	chmod 600 "$T/tok"
	start_dashboard api --api-token "file:$T/tok"
	post() { curl -s -m 30 -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
		-X POST --data-binary "$2" "$base$1"; }
	q=$(sk enqueue never)
	x=$(sk enqueue w --after "$q")
	y=$(sk enqueue w --after "$x")
	expect_eq "$(post "/api/tasks/$x/cancel" '{}' | json_get 'd["cancelled_with"]')" "[$y]" "API cancel"
	expect_eq "$(post "/api/tasks/$x/retry" '{}' | json_get 'd["status"]')" blocked "API retry of a child of a live parent"
	expect_eq "$(live "$x")" "6${TAB}1" "API retry: blocked"
	sk cancel "$x" >/dev/null
	expect_eq "$(post "/api/tasks/$x/retry" '{"with_dependents": true}' | json_get '(d["status"], d["retried_with"])')" \
		"('blocked', [$y])" "API retry with dependents"
	expect_eq "$(live "$y")" "6${TAB}1" "API: the dependent blocked"
	# the dashboard's button: the same call
	sk cancel "$x" >/dev/null
	csrf=$(curl -s -c "$T/jar" "$base/task/$x" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
	[ -n "$csrf" ] || fail "no CSRF token on the task page"
	curl -s -b "$T/jar" -o /dev/null -X POST --data "csrf=$csrf&id=$x&back=/task/$x" "$base/tasks/retry"
	expect_eq "$(live "$x")" "6${TAB}1" "the dashboard's retry button: blocked"
	# and its "Retry with dependents": y comes back too
	sk cancel "$x" >/dev/null
	curl -s -b "$T/jar" -o /dev/null -X POST \
		--data "csrf=$csrf&id=$x&with_dependents=1&back=/task/$x" "$base/tasks/retry"
	expect_eq "$(live "$x") $(live "$y")" "6${TAB}1 6${TAB}1" "the dashboard's retry with dependents"
	kill -TERM "$dpid"
	wait_exit "$dpid" 10
}
