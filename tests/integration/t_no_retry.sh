#!/bin/sh
# A handler can say "do not retry this" (docs/handlers.md, "No retry"):
# a program that exits 65 (EX_DATAERR), a pipe: answer with
# "retry": false, an HTTP 422 or any failure with `Sked-Retry: no`. Each such task
# ends dead after its first attempt although it had five, its error
# saying so; the same failures without the signal are retried as before
# (exit 1, "retry": true, a 500 without the header); retry_in_ms still
# sets the delay of an ordinary retry. The worker's log and `sked show`
# agree on the attempt: 1 of 5 (issue 36).
# backends: engines
. "$(dirname "$0")/lib.sh"
init_db
command -v python3 >/dev/null || skip "python3 is not installed"
python3 "$(dirname "$0")/../tools/http_endpoint.py" "$T/port" "$T/req" &
wait_for 10 test -s "$T/port" || fail "the test's HTTP server did not start"
base="http://127.0.0.1:$(cat "$T/port")"

prog=$(handler prog.sh <<'H'
#!/bin/sh
read -r what
echo "bad input: $what" >&2
case "$what" in
final) exit 65 ;;
*) exit 1 ;;
esac
H
)
pipe=$(handler pipe.py <<'H'
#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    a = {"id": m["id"], "ok": False, "error": "cannot parse " + m["payload"]}
    if m["payload"] == "final":
        a["retry"] = False
    elif m["payload"] == "soon":
        a["retry"] = True
        a["retry_in_ms"] = 600000
    print(json.dumps(a), flush=True)
H
)
en() { sk enqueue "$1" --payload "$2" --max-attempts 5; }
p_final=$(en prog final)
p_again=$(en prog again)
q_final=$(en pipekind final)
q_soon=$(en pipekind soon)
h_final=$(en gone x)
h_invalid=$(en invalid x)
h_again=$(en broken x)
start_worker w --concurrency 2 --poll 100ms --retry-base 1h \
	--handler "prog=$prog" --handler "pipekind=pipe:$pipe" \
	--handler "gone=$base/gone" --handler "invalid=$base/invalid" \
	--handler "broken=$base/fail"
settled() {
	for id in $p_final $q_final $h_final $h_invalid; do [ "$(status_of "$id")" = 3 ] || return 1; done
	for id in $p_again $q_soon $h_again; do [ "$(status_of "$id")" = 4 ] || return 1; done
}
wait_for 40 settled || {
	cat "$T/w.log" >&2
	fail "tasks did not settle: $(sql "SELECT id, kind, payload, status, attempts FROM $ALL_TASKS a")"
}
kill -TERM "$wpid"
wait_exit "$wpid" 20
expect_eq "$wrc" 0 "the worker's exit status"
for id in $p_final $q_final $h_final $h_invalid; do
	expect_eq "$(sql "SELECT attempts FROM $ALL_TASKS a WHERE id = $id")" 1 "attempts of task $id that said no retry"
	case "$(sk --json show "$id" | json_get 'd["last_error"]')" in
	"no retry (the handler said so): "*) ;;
	*) fail "task $id's error does not say why it ended: $(sk --json show "$id" | json_get 'd["last_error"]')" ;;
	esac
done
case "$(sk --json show "$q_final" | json_get 'd["last_error"]')" in
*"cannot parse final") ;; *) fail "the pipe handler's own error is lost" ;;
esac
case "$(sk --json show "$h_final" | json_get 'd["last_error"]')" in
*"HTTP 410"*) ;; *) fail "the HTTP status is lost" ;;
esac
expect_eq "$(sk --json show "$p_final" | json_get 'd["runs"][0]["exit_code"]')" 65 "the program's exit code"
# the log and show agree: attempt 1 of the task's 5, dead (once the log
# said "attempt 1/1" while show said "1 of 5")
for id in $p_final $q_final $h_final $h_invalid; do
	grep -q "task $id attempt 1/5 failed (dead): no retry (the handler said so)" "$T/w.log" ||
		fail "the log of task $id: $(grep "task $id attempt" "$T/w.log")"
	sk show "$id" | grep -q '^  attempts     1 of 5$' || fail "show of task $id: $(sk show "$id" | grep attempts)"
done
# ordinary failures retry, as before; retry_in_ms sets the delay
for id in $p_again $q_soon $h_again; do
	expect_eq "$(sql "SELECT attempts FROM $ALL_TASKS a WHERE id = $id")" 1 "attempts of task $id so far"
done
wait_s=$(sk --json show "$q_soon" | json_get '(__import__("datetime").datetime.fromisoformat(d["run_at"].replace("Z","+00:00")) - __import__("datetime").datetime.fromisoformat(d["updated_at"].replace("Z","+00:00"))).total_seconds()')
python3 -c "import sys; w = float(sys.argv[1]); sys.exit(0 if 590 <= w <= 610 else 1)" "$wait_s" ||
	fail "retry_in_ms 600000 gave a delay of $wait_s s"
echo "ok: $SKED_BACKEND: no retry when the handler says so"
