#!/bin/sh
# systemd: the example unit (examples/systemd/sked-worker.service) passes
# `systemd-analyze verify` and gives sked longer to stop than its grace
# period; a worker under a notify socket sends READY=1 once registered,
# STATUS= lines, WATCHDOG=1 while healthy (WATCHDOG_USEC set) and
# STOPPING=1 on SIGTERM. Backend-independent: sqlite only.
# backends: sqlite
. "$(dirname "$0")/lib.sh"
[ "$SKED_BACKEND" = sqlite ] || not_here "systemd integration does not depend on the database"
unit=$SKED_SRC/examples/systemd/sked-worker.service

grep -q '^Type=notify$' "$unit" || fail "the unit is not Type=notify"
grep -q '^KillMode=mixed$' "$unit" || fail "the unit's KillMode is not mixed"
stop_s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$unit")
[ -n "$stop_s" ] && [ "$stop_s" -gt 30 ] ||
	fail "TimeoutStopSec ($stop_s) must exceed the worker's default grace period (30s)"
if command -v systemd-analyze >/dev/null; then
	# the ExecStart binary must exist for verify: point it at this build
	sed "s|/usr/bin/sked|$SKED|" "$unit" >"$T/sked-worker.service"
	systemd-analyze verify --man=no "$T/sked-worker.service" >"$T/verify" 2>&1 || {
		cat "$T/verify" >&2
		fail "systemd-analyze verify rejects the unit"
	}
	[ ! -s "$T/verify" ] || { cat "$T/verify" >&2; fail "systemd-analyze verify warns about the unit"; }
else
	note "systemd-analyze is not installed: the unit is not verified"
fi

ldd "$SKED" | grep -q libsystemd || skip "this sked was built without libsystemd: no sd_notify"
init_db
h=$(handler ok.sh <<'H'
#!/bin/sh
exit 0
H
)
sock=$T/notify.sock
python3 - "$sock" "$T/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        for line in s.recv(4096).decode().split("\n"):
            out.write(line + "\n")
PY
listener=$!
bound() { [ -S "$sock" ]; }
wait_for 10 bound || fail "the notify listener did not start"
NOTIFY_SOCKET=$sock WATCHDOG_USEC=1000000 start_worker w --handler "job=$h" --poll 100ms --lease 3s
w=$wpid
note_seen() { grep -q "^$1" "$T/notes" 2>/dev/null; }
wait_for 10 note_seen READY=1 || { cat "$T/w.log" >&2; fail "no READY=1"; }
wait_for 10 note_seen WATCHDOG=1 || fail "no WATCHDOG=1 while healthy"
wait_for 10 note_seen STATUS=running || fail "no STATUS= line"
kill -TERM "$w"
wait_exit "$w" 15
expect_eq "$wrc" 0 "the worker's exit status"
note_seen STOPPING=1 || fail "no STOPPING=1 on SIGTERM"
kill "$listener" 2>/dev/null || true
