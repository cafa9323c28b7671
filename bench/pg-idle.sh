#!/usr/bin/env bash
# bench/pg-idle.sh — how long PostgreSQL waits for sked's workers: the
# state of the workers' sessions in pg_stat_activity, sampled every
# 10 ms while a `sked bench` drains, kept for the drain's window only.
#
#   bench/pg-idle.sh start URL FILE    # prints the sampler's pid
#   bench/pg-idle.sh stop URL PID      # cancels the sampler, waits for it
#   bench/pg-idle.sh share FILE T0 T1  # "none idle active in_tx samples"
#
# The sampler is one session running a DO loop: each round reads the
# states of the database's sessions that carry an application_name (a worker names
# its sessions after its node; the bench's own handle, psql and the
# sampler do not count), sends them as a NOTICE with the wall clock, and
# commits, so it never holds back vacuum for longer than a round. T0 and
# T1 are the drain's ends in ms since the epoch (`sked bench --json`:
# throughput.drain_start_unix_ms, drain_end_unix_ms).
#
# none is the share of samples (in %) in which no session of the workers
# ran a statement or held a transaction open: the server waiting for the
# worker, whatever else it did. idle, active and in_tx split the
# sessions' samples: waiting for the client between statements, running
# one, and a transaction open between two of its statements (a client
# round trip inside a transaction). A worker's sessions include the
# lease's and the heartbeat's, idle by design, so idle is never near 0.
# Layer: a measuring aid of bench/compare.sh; it changes nothing.
set -euo pipefail

case "${1:-}" in
start)
	url=$2 file=$3
	PGAPPNAME=sked-sampler psql "$url" -qAtX -v ON_ERROR_STOP=1 >/dev/null 2>"$file" <<'SQL' &
DO $$
DECLARE
	i int;
	s_idle int;
	s_active int;
	s_tx int;
BEGIN
	FOR i IN 1..90000 LOOP
		SELECT count(*) FILTER (WHERE state = 'idle'),
		       count(*) FILTER (WHERE state = 'active'),
		       count(*) FILTER (WHERE state LIKE 'idle in transaction%')
		  INTO s_idle, s_active, s_tx
		  FROM pg_stat_activity
		 WHERE backend_type = 'client backend'
		   AND datname = current_database()
		   AND pid <> pg_backend_pid()
		   AND application_name NOT IN ('', 'psql', 'sked-sampler');
		RAISE NOTICE 'sample % % % %',
			(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
			s_idle, s_active, s_tx;
		COMMIT;
		PERFORM pg_sleep(0.01);
	END LOOP;
END
$$;
SQL
	echo $!
	;;
stop)
	url=$2 pid=$3
	psql "$url" -qAtX -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'sked-sampler'" >/dev/null 2>&1 || true
	wait "$pid" 2>/dev/null || true
	# a sampler started by another shell is not this one's child
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	;;
share)
	file=$2 t0=$3 t1=$4
	awk -v t0="$t0" -v t1="$t1" '
		/sample/ {
			for (k = 1; k <= NF; k++) if ($k == "sample") break
			t = $(k + 1)
			if (t < t0 || t > t1) next
			n = $(k + 2) + $(k + 3) + $(k + 4)
			if (n == 0) next
			i += $(k + 2); a += $(k + 3); x += $(k + 4); s++
			if ($(k + 3) + $(k + 4) == 0) none++
		}
		END {
			tot = i + a + x
			if (tot == 0) { print "- - - - 0"; exit }
			printf "%.0f %.0f %.0f %.0f %d\n", 100 * none / s, 100 * i / tot, 100 * a / tot, 100 * x / tot, s
		}' "$file"
	;;
*)
	echo "usage: bench/pg-idle.sh start URL FILE | stop URL PID | share FILE T0 T1" >&2
	exit 64
	;;
esac
