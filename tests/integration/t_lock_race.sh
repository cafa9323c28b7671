#!/bin/sh
# sked lock run: of two racing holders one runs the program, the other
# exits 75; a holder killed with kill -9 takes its program with it and
# loses the lock when its TTL runs out, and the next holder's fencing
# token is larger; a holder whose lock is taken over kills its program
# and exits 70.
# backends: engines pgbouncer
. "$(dirname "$0")/lib.sh"
init_db

# 1. the race
for n in 1 2; do
	"$SKED" lock run nightly --ttl 5s -- sh -c "echo \$SKED_FENCING_TOKEN >>'$T/ran'; sleep 2" \
		2>"$T/r$n.err" &
	eval "p$n=$!"
done
set +e
wait "$p1"
rc1=$?
wait "$p2"
rc2=$?
set -e
note "exit codes $rc1 and $rc2"
expect_eq "$(wc -l <"$T/ran" | tr -d ' ')" 1 "programs run"
expect_eq "$(echo "$rc1 $rc2" | tr ' ' '\n' | sort | tr '\n' ' ')" "0 75 " "exit codes"
grep -q "held by" "$T/r1.err" "$T/r2.err" || fail "the loser did not say the lock is held"
expect_rc 0 sk lock run nightly --ttl 5s --exit-zero-if-locked -- true

# gone: no such process, or a zombie its new parent has not reaped yet
gone() {
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
	case "$st" in Z*) return 0 ;; esac
	return 1
}

# 2. kill -9 the holder
"$SKED" lock run k --ttl 6s -- sh -c "echo \$SKED_FENCING_TOKEN >'$T/tok1'; echo \$\$ >'$T/pid1'; exec sleep 60" &
holder=$!
wait_for 10 test -s "$T/pid1" || fail "the first holder's program did not start"
prog=$(cat "$T/pid1")
kill -9 "$holder"
wait "$holder" 2>/dev/null || true
wait_for 3 gone "$prog" || fail "the program outlived its killed sked (pid $prog)"
expect_rc 75 sk lock run k --ttl 6s -- true
grep -q "held by" "$T/err" || fail "no 'held by' line: $(cat "$T/err")"
expect_rc 0 sk lock run k --ttl 2s --wait 10s -- sh -c "echo \$SKED_FENCING_TOKEN >'$T/tok2'"
t1=$(cat "$T/tok1") t2=$(cat "$T/tok2")
note "fencing tokens $t1 then $t2"
[ "$t2" -gt "$t1" ] || fail "token $t2 after $t1 does not grow"

# 3. lock taken over under a running program (as if the lease ran out
#    and another node took it): the program is killed, sked exits 70
"$SKED" lock run steal --ttl 1500ms -- sh -c "echo \$\$ >'$T/pid3'; exec sleep 60" 2>"$T/steal.err" &
holder=$!
wait_for 10 test -s "$T/pid3" || fail "the third program did not start"
sql "UPDATE {p}lock SET fencing_token = fencing_token + 100, owner = 'thief' WHERE name = 'steal'" >/dev/null
set +e
wait "$holder"
rc=$?
set -e
expect_eq "$rc" 70 "exit code of a holder that lost its lock"
gone "$(cat "$T/pid3")" || fail "the program outlived the lost lock"
grep -q "killed" "$T/steal.err" || fail "no clear message: $(cat "$T/steal.err")"

# usage
expect_rc 64 sk lock run x --ttl 5s true
expect_rc 64 sk lock run x -- true
