#!/bin/sh
# dashboard_diff.sh OLD_SKED NEW_SKED — do two builds of sked serve the
# same dashboard? For a change that should not change a page (moving
# HTML into templates, splitting the dashboard's files, moving cli/'s
# files into folders): one SQLite database with a bit of everything
# (dead tasks with hostile text, a workflow of three layers whose task
# pages draw it, a paused queue with
# limits, schedules, a lock, a payload with a NUL byte, a last error
# past 140 bytes, more than a page of tasks), then every page, flash
# code, error page and POST of both builds against copies of it, with
# and without --read-only, compared byte for byte (status, headers,
# body). What differs from run to run is normalised first: session ids,
# CSRF tokens, dates, relative times, ages, Content-Length, the port,
# where the chart's bars stand (the minute moves on); /metrics is not
# asked for (its timings). DASHBOARD_DIFF_IGNORE, a sed script, is applied
# to both sides too: what a change alters on purpose, so that the rest
# is still compared (the live update's commit: docs/design.md). Exit 0
# when all are identical, 1 with the
# differing requests named. A developer's tool (docs/design.md, "The
# dashboard's pages"); it needs curl, sqlite3 and python3.
set -eu
OLD=$1 NEW=$2
W=$(mktemp -d "${TMPDIR:-/tmp}/dashboard_diff.XXXXXX")
trap 'rm -rf "$W"' EXIT
D=$W/fixture
mkdir -p "$D"
sk() { "$OLD" --db "sqlite:$D/sked.db" "$@"; }
sk init >/dev/null 2>&1
printf '#!/bin/sh\necho "could not reach the mail server" >&2\nexit 3\n' >"$D/fail.sh"
printf '#!/bin/sh\necho out\nexit 0\n' >"$D/ok.sh"
chmod +x "$D/fail.sh" "$D/ok.sh"
m1=$(sk enqueue mail --payload '<script>alert("payload")</script> & "quotes"' --max-attempts 1)
sk enqueue mail --payload '{"to":"ada@example.com"}' --max-attempts 1 --unique uk-1 >/dev/null
sk enqueue report --max-attempts 1 >/dev/null
for i in 1 2 3; do sk enqueue job --payload "$i" --queue q$i >/dev/null; done
sk enqueue longerr --max-attempts 1 >/dev/null
sk worker --handler "mail=$D/fail.sh" --handler "report=$D/fail.sh" --handler "longerr=$D/fail.sh" \
	--handler "job=$D/ok.sh" --until-empty --poll 100ms >/dev/null 2>&1
parent=$(sk enqueue later --in 1h --payload "x'y" --queue 'we.ird:x')
child=$(sk enqueue child --after "$parent")
grand=$(sk enqueue grand --after "$child,$parent")
sk enqueue retrying --max-attempts 5 --queue q1 >/dev/null
i=0
while [ $i -lt 55 ]; do sk enqueue bulk --payload "$i" --queue bulkq >/dev/null; i=$((i + 1)); done
nul=$(sk enqueue nulpay --payload x)
sk cron add nightly '0 3 * * *' report --tz Europe/Berlin >/dev/null
sk cron add hourly-digest '@hourly' mail >/dev/null
sk cron pause hourly-digest >/dev/null
sk lock run nightly-backup --ttl 10s -- true
sk queue set q1 --concurrency 2 --per-key 1 --rate 10/1m >/dev/null
sk queue pause q2 >/dev/null
sqlite3 "$D/sked.db" "UPDATE sked_task SET payload = CAST(x'613c0062' AS TEXT) WHERE id = $nul;
	UPDATE sked_task_done SET last_error = 'x<&>' || replace(hex(zeroblob(100)), '00', 'é') WHERE kind = 'longerr'"

# capture SKED OUT [ARGS]: every request, into OUT/NN (.h headers, .b body)
capture() {
	bin=$1 out=$2
	shift 2
	mkdir -p "$out"
	rm -rf "$W/run"
	mkdir -p "$W/run"
	cp "$D/sked.db" "$W/run/db"
	port=$(python3 "$(dirname "$0")/free_ports.py" 1)
	"$bin" --db "sqlite:$W/run/db" dashboard --listen "127.0.0.1:$port" "$@" >"$out/log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.2; done
	n=0
	get() {
		n=$((n + 1))
		f="$out/$(printf %02d $n)"
		curl -s -b "$out/jar" -c "$out/jar" -D "$f.h" -o "$f.b" "$@"
	}
	for p in / "/?done=retried&n=3" /tasks /failed "/failed?status=retry" "/failed?status=cancelled" \
		"/task/$m1" "/task/$child" "/task/$parent" "/task/$nul" /task/999999 /nodes /schedules /locks \
		/queues "/tasks?status=dead&kind=mail" "/tasks?status=pending" "/tasks?status=running" \
		"/tasks?since=1d&queue=q1&node=x" "/tasks?q=uk-1" "/tasks?q=nothing" "/tasks?before=3" \
		"/tasks?status=succeeded&done=cancelled&n=2" /nosuch "/nodes?done=pruned&n=0" \
		"/schedules?done=paused" "/queues?done=qpaused" "/queues?done=none" /static/app.css \
		"/tasks?kind=longerr" "/tasks?queue=bulkq" "/tasks?queue=bulkq&before=40&status=pending&since=7d" \
		"/task/$grand" /static/app.js; do
		get "http://127.0.0.1:$port$p"
	done
	csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$out/03.b" | head -1)
	for post in "tasks/retry|scope=filter&since=2y&back=/tasks" "nodes/prune|older_than=xx" \
		"tasks/retry|id=$m1&back=/failed" "queues/pause|queue=q3" "schedules/pause|name=nightly" \
		"tasks/cancel|scope=filter&status=bogus" "queues/pause|queue="; do
		get -d "csrf=$csrf&${post#*|}" "http://127.0.0.1:$port/${post%%|*}"
	done
	for p in / /queues /schedules; do get "http://127.0.0.1:$port$p"; done
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f "$out/jar" "$out/log"
	for f in "$out"/*; do
		sed -i -e 's/value="[0-9a-f]\{32\}"/value="TOKEN"/g' -e 's/sked_session=[0-9a-f]*/sked_session=S/g' \
			-e 's/^Date: .*/Date: D/' -e 's/^Content-Length: .*/Content-Length: N/' \
			-e 's/>[^<>]* ago</>AGO</g' -e 's/>just now</>AGO</g' -e 's/>in [^<>]*</>IN</g' \
			-e 's/([^()]* ago)/(AGO)/g' -e 's/(just now)/(AGO)/g' -e 's/(in [^()]*)/(IN)/g' \
			-e 's/"value">[0-9][0-9hms]*</"value">AGE</g' -e 's/"num">[0-9][0-9hms]*s</"num">AGE</g' \
			-e 's/<rect class="\(ok\|bad\)" x="[0-9]*"/<rect class="\1" x="X"/g' \
			-e 's/(oldest due [0-9][0-9hms]*)/(oldest due AGE)/g' \
			-e 's/127.0.0.1:[0-9]*/HOST/g' "$f"
		[ -z "${DASHBOARD_DIFF_IGNORE:-}" ] || sed -i -e "$DASHBOARD_DIFF_IGNORE" "$f"
	done
}

rc=0
for mode in "" --read-only; do
	capture "$OLD" "$W/old$mode" $mode
	capture "$NEW" "$W/new$mode" $mode
	same=0
	for f in "$W/old$mode"/*; do
		g="$W/new$mode/${f##*/}"
		if cmp -s "$f" "$g"; then
			same=$((same + 1))
		else
			echo "differs${mode:+ ($mode)}: request ${f##*/}" >&2
			diff "$f" "$g" | head -5 >&2 || true
			rc=1
		fi
	done
	echo "dashboard_diff${mode:+ $mode}: $same of $(ls "$W/old$mode" | wc -l) files identical"
done
exit $rc
