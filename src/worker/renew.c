/*
 * worker/renew.c — lease renewal, the check of what the node holds, and
 * the watchdog.
 *
 * Layer: the worker (worker.h), on the model (lease.h). The heartbeat
 * thread owns the lease connection w->beat.h: every lease/3 it beats the node
 * row, renews every lease of the node, stops handlers of tasks the node no
 * longer holds, gives back tasks it holds with no job here (strays), and
 * moves the lease guard's deadlines on. The watchdog never touches the
 * database: it stops handlers before a lease that could not be renewed can
 * run out, and says so truthfully after the worker was frozen.
 *
 * The lock-wait watchdog: the model marks the claim of a schedule row,
 * the transactions on a cluster lock row and the claim's lock of a queue
 * limit row (sked__wait_begin) in the worker's slot for that handle. A
 * slot older than lock_wait_warn_ms is told once per wait: one warning
 * naming the row and, where the database can tell, who holds it (asked
 * on the heartbeat's connection, between beats, from the server's own
 * views: pg_blocking_pids, InnoDB's lock waits, sys.dm_exec_requests),
 * and counted in the metrics. SQLite cannot name a holder, so there the
 * watchdog thread tells the wait without asking, naming the database
 * file; the claim itself never pays for any of it.
 */
#include "worker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "util/log.h"

/* After a renewal that began at began: a job the database lists as held
 * (its lease extended) counts its lease from began; one it does not list
 * is stopped (cancelled, taken over, or its lease ran out before the
 * renewal). Only jobs dispatched before the renewal began are judged: a
 * task claimed since may be missing from a list read before its claim
 * committed, and a renewal may have run before the claim did, so such a
 * job keeps the lease of its claim until the next renewal. */
static void
check_held(sked_worker *w, const int64_t *ids, const int *att, int n,
           int64_t began)
{
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext) {
		if (j->since >= began)
			continue;
		int held = 0;
		for (int i = 0; i < n && !held; i++)
			held = ids[i] == j->t.id && att[i] == j->t.attempt;
		if (held)
			j->renewed = began;
		if (!held && atomic_load(&j->cancel) == CANCEL_NONE) {
			sked__log_facts f = {
			        .task_id = (long long)j->t.id,
			        .attempt = j->t.attempt,
			        .kind = j->t.kind,
			        .queue = j->t.queue,
			        .outcome = "lost",
			        .duration_ms = -1,
			};
			sked__log_task(
			        SKED_LOG_WARN, &f,
			        "task %lld attempt %d is no longer held "
			        "by this node (cancelled or taken over): "
			        "stopping its handler",
			        f.task_id, f.attempt);
			sked__wk_job_cancel(j, CANCEL_LOST);
			w->sh.counters.lost++;
		}
	}
	pthread_mutex_unlock(&w->sh.mu);
}
/* A renewal that began at began succeeded: the lease guard may let the
 * programs under way whose leases it extended (check_held) run on until
 * the new deadline. */
static void
extend_guard(sked_worker *w, int64_t began)
{
	if (!w->guard)
		return;
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext)
		if (j->slot >= 0 && j->renewed == began)
			sked__guard_deadline(w->guard, j->slot,
			                     sked__wk_guard_deadline(w, began),
			                     1);
	pthread_mutex_unlock(&w->sh.mu);
}
/* The heartbeat's check for strays: tasks held by this node with no job
 * here. A claim under way may have committed tasks that are not in w->sh.all
 * yet, so a task is given back only when it was stray in the previous
 * round too and every claim begun before that round's list has been
 * dispatched since. */
static void
check_strays(sked_worker *w, const int64_t *ids, const int *att, int n)
{
	unsigned long long dispatched = atomic_load(&w->sh.claims_dispatched);
	unsigned long long begun = atomic_load(&w->sh.claims_begun);
	int64_t *cid = n ? malloc(sizeof *cid * (size_t)n) : NULL;
	int *catt = n ? malloc(sizeof *catt * (size_t)n) : NULL;
	int nc = 0;
	if (n && (!cid || !catt)) {
		free(cid);
		free(catt);
		return; /* next round */
	}
	pthread_mutex_lock(&w->sh.mu);
	for (int i = 0; i < n; i++) {
		if (sked__wk_holds_locked(w, ids[i], att[i]))
			continue;
		cid[nc] = ids[i];
		catt[nc++] = att[i];
	}
	pthread_mutex_unlock(&w->sh.mu);
	int nconf = 0;
	if (w->beat.nstray && dispatched >= w->beat.stray_seq) {
		/* confirmed ones move to the front of the candidates */
		for (int i = 0; i < nc; i++) {
			int seen = 0;
			for (int k = 0; k < w->beat.nstray && !seen; k++)
				seen = w->beat.stray_ids[k] == cid[i] &&
				       w->beat.stray_att[k] == catt[i];
			if (!seen)
				continue;
			int64_t ti = cid[nconf];
			int ta = catt[nconf];
			cid[nconf] = cid[i];
			catt[nconf] = catt[i];
			cid[i] = ti;
			catt[i] = ta;
			nconf++;
		}
	}
	if (nconf)
		sked__ignore(sked__wk_give_back_strays(w, w->beat.h, cid, catt,
		                                       nconf));
	/* the rest are the candidates of the next round */
	free(w->beat.stray_ids);
	free(w->beat.stray_att);
	w->beat.nstray = nc - nconf;
	w->beat.stray_ids = cid;
	w->beat.stray_att = catt;
	if (nconf) {
		memmove(cid, cid + nconf, sizeof *cid * (size_t)w->beat.nstray);
		memmove(catt, catt + nconf,
		        sizeof *catt * (size_t)w->beat.nstray);
	}
	w->beat.stray_seq = begun;
}
/* Stop every handler whose lease may be about to run out: its lease was
 * last known good at the later of its claim and the last renewal that
 * listed it as held (both as sent, so the database's own expiry is later
 * still).
 * stalled_ms is how long the watchdog itself could not run: when the
 * whole worker was frozen, leases may have run out before this turn, and
 * the log says so rather than claim a stop in time. */
static void
stop_unleased(sked_worker *w, int64_t now, int64_t stalled_ms)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = 0, late = 0, guarded = 0;
	for (sked_job *j = w->sh.held; j; j = j->hnext) {
		int64_t basis = sked__wk_lease_basis(j);
		if (now <= sked__wk_stop_at(w, basis))
			continue;
		if (atomic_load(&j->cancel) == CANCEL_NONE) {
			n++;
			if (now >= basis + w->o.lease_ms) {
				late++;
				guarded += j->slot >= 0 &&
				           sked__guard_fired(w->guard, j->slot);
			}
		}
		sked__wk_job_cancel(j, CANCEL_NOLEASE);
	}
	pthread_mutex_unlock(&w->sh.mu);
	if (stalled_ms > sked__wk_safety_ms(w))
		sked__log(SKED_LOG_WARN,
		          "the worker process could not run for %lld ms "
		          "(stopped, frozen or starved)",
		          (long long)stalled_ms);
	if (n > late)
		sked__log(SKED_LOG_ERROR,
		          "leases could not be renewed in time: stopped %d "
		          "handler(s) before their leases could expire",
		          n - late);
	if (late)
		sked__log(
		        SKED_LOG_ERROR,
		        "the leases of %d task(s) may have run out while this "
		        "worker could not run: %d program handler(s) among "
		        "them had been killed at their lease deadline by the "
		        "lease guard; stopping the rest now",
		        late, guarded);
}
/* ---- the lock-wait watchdog ---- */

static const char *const wait_rows[3] = {"schedule", "lock", "queue limit"};
static const char *const wait_whose[2] = {"the claim loop", "the pruner"};

static int64_t
wait_threshold(const sked_worker *w)
{
	if (w->o.lock_wait_warn_ms < 0)
		return -1;
	return w->o.lock_wait_warn_ms ? w->o.lock_wait_warn_ms : 5000;
}

void
sked__wk_waits_conn(sked_worker *w, sked *h, int slot)
{
	if (h)
		h->wait = slot >= 0 && wait_threshold(w) >= 0
		                  ? &w->sh.waits[slot]
		                  : NULL;
}

void
sked__wk_waits_start(sked_worker *w)
{
	for (int i = 0; i < 2; i++) {
		sked_wait_slot *s = &w->sh.waits[i];
		memset(s, 0, sizeof *s);
		pthread_mutex_init(&s->mu, NULL);
		w->beat.waits_told[i] = 0;
	}
	sked__wk_waits_conn(w, w->h, WAIT_SLOT_LOOP);
	/* the connections cloned from w->h after this inherit the name */
	sked__worker_session(w->h, w->node_id);
}

void
sked__wk_waits_stop(sked_worker *w)
{
	w->h->wait = NULL;
	for (int i = 0; i < 2; i++)
		pthread_mutex_destroy(&w->sh.waits[i].mu);
}

/* Who holds what the server's connection backend waits for, as "held by
 * …" text, asked on conn (the heartbeat's); NULL conn: a database that
 * cannot tell (SQLite's one writer lock), named by its file. */
static void
describe_holder(sked *conn, int64_t backend, const char *where, char *out,
                size_t len)
{
	if (!conn) {
		snprintf(out, len,
		         "the database %s is locked by another connection "
		         "(SQLite cannot name it)",
		         where);
		return;
	}
	if (backend <= 0) {
		snprintf(out, len,
		         "the holder cannot be asked for (the server's id of "
		         "the waiting connection is not known, as behind a "
		         "transaction pooler)");
		return;
	}
	const char *word =
	        strcmp(conn->dialect->name, "postgresql") == 0  ? "pid"
	        : strcmp(conn->dialect->name, "sqlserver") == 0 ? "session"
	                                                        : "connection";
	sked_sql id = conn->decision.product == SKED_PROD_MYSQL
	                      ? SKED_SQL_BLOCKERS_PS
	                      : SKED_SQL_BLOCKERS;
	sked_val v = SKED_INTV(backend);
	sked_res r = {0};
	int rc = sked__q(conn, id, &v, 1, &r);
	if (rc != SKED_OK) {
		snprintf(out, len, "cannot ask the server who holds it: %s",
		         sked__db_err(conn->db)->msg);
		return;
	}
	if (r.nrows == 0) {
		snprintf(out, len,
		         "the server shows no holder (the wait may have just "
		         "ended, or this user may not see other sessions: "
		         "MariaDB and MySQL need the PROCESS privilege)");
		sked__res_clear(&r);
		return;
	}
	size_t n = (size_t)snprintf(out, len, "held by");
	for (int i = 0; i < r.nrows && i < 3 && n < len; i++) {
		const char *app = sked__res_text(&r, i, 1);
		const char *client = sked__res_text(&r, i, 2);
		const char *state = sked__res_text(&r, i, 3);
		const char *user = sked__res_text(&r, i, 4);
		n += (size_t)snprintf(out + n, len - n, "%s %s %lld (",
		                      i ? ";" : "", word,
		                      (long long)sked__res_int(&r, i, 0));
		if (app && *app && n < len)
			n += (size_t)snprintf(out + n, len - n,
			                      "application '%s', ", app);
		if (n < len)
			n += (size_t)snprintf(out + n, len - n,
			                      "client %s, user %s, %s)",
			                      client && *client ? client : "?",
			                      user && *user ? user : "?",
			                      state && *state ? state : "?");
	}
	if (r.nrows > 3 && n < len)
		snprintf(out + n, len - n, "; and %d more", r.nrows - 3);
	sked__res_clear(&r);
}

/* Tell every wait older than the threshold, once. conn: see
 * describe_holder. */
static void
check_waits(sked_worker *w, sked *conn)
{
	int64_t limit = wait_threshold(w);
	if (limit < 0)
		return;
	for (int i = 0; i < 2; i++) {
		sked_wait_slot *s = &w->sh.waits[i];
		char row[SKED_MAX_NAME + 1], where[512];
		pthread_mutex_lock(&s->mu);
		int64_t since = s->since_ms, backend = s->backend;
		unsigned long seq = s->seq;
		int what = s->what;
		memcpy(row, s->row, sizeof row);
		memcpy(where, s->where, sizeof where);
		pthread_mutex_unlock(&s->mu);
		if (!since || seq == w->beat.waits_told[i] || what < 0 ||
		    what > 2)
			continue;
		int64_t age = sked__mono_ms() - since;
		if (age < limit)
			continue;
		w->beat.waits_told[i] = seq;
		char holder[1024], conn_id[48] = "";
		describe_holder(conn, backend, where, holder, sizeof holder);
		if (backend > 0)
			snprintf(conn_id, sizeof conn_id, " (its %s %lld)",
			         conn && strcmp(conn->dialect->name,
			                        "postgresql") == 0
			                 ? "pid"
			                 : "connection",
			         (long long)backend);
		sked__log(SKED_LOG_WARN,
		          "lock wait: %s has waited %.1f s on %s \"%s\"%s: %s",
		          wait_whose[i], (double)age / 1000.0, wait_rows[what],
		          row, conn_id, holder);
		pthread_mutex_lock(&w->sh.mu);
		w->sh.lock_waits[what]++;
		pthread_mutex_unlock(&w->sh.mu);
	}
}

/* PostgreSQL: the hot table is inserted into and deleted from by the
 * thousand a second; autovacuum looks at it at most once a naptime (a
 * minute by default, a server-wide setting), and until then every claim
 * steps over the dead rows and index entries. So a worker that has ended
 * VACUUM_CHURN tasks since it last did vacuums the hot table itself,
 * between beats on the heartbeat's connection: a table of live work
 * only, a fraction of a second even when bloated, SKIP_LOCKED so that
 * workers (and autovacuum) never queue behind each other, at most once
 * per VACUUM_EVERY_MS. */
#define VACUUM_CHURN    5000
#define VACUUM_EVERY_MS 1000

static void
vacuum_hot_table(sked_worker *w, int64_t now)
{
	if (!w->beat.h || !(w->beat.h->dialect->caps & SKED_CAP_VACUUM) ||
	    now - w->beat.vacuumed_ms < VACUUM_EVERY_MS)
		return;
	pthread_mutex_lock(&w->sh.mu);
	int64_t ended = w->sh.counters.succeeded + w->sh.counters.dead;
	pthread_mutex_unlock(&w->sh.mu);
	if (ended - w->beat.vacuumed_at < VACUUM_CHURN)
		return;
	w->beat.vacuumed_at = ended;
	w->beat.vacuumed_ms = now;
	if (sked__q(w->beat.h, SKED_SQL_HOT_VACUUM, NULL, 0, NULL) != SKED_OK)
		sked__log(SKED_LOG_DEBUG, "vacuum of the task table: %s",
		          sked_errmsg(w->beat.h));
}

/* Handlers running now, written on the node row by each heartbeat
 * (`sked nodes` tells them from tasks held ahead). */
static int
busy_now(sked_worker *w)
{
	pthread_mutex_lock(&w->sh.mu);
	int n = sked__wk_busy_locked(w);
	pthread_mutex_unlock(&w->sh.mu);
	return n;
}

/* Whether this beat may leave the leases alone (an idle node): it holds
 * no job and no claim is in flight, no claim has failed since a list of
 * held tasks came back empty, and no stray is waiting for its second
 * look. A claim whose reply came back put its tasks in w->sh.all (and
 * those recorded since are held no more); only a failed one may have
 * left tasks held with no job here. Then there is nothing to renew and
 * nothing to find: the beat is the node row's alone. */
static int
idle_beat(sked_worker *w)
{
	if (!w->beat.listed_none || w->beat.nstray ||
	    atomic_load(&w->sh.claim_failures) != w->beat.listed_seq)
		return 0;
	pthread_mutex_lock(&w->sh.mu);
	int idle = !w->sh.all && w->sh.claims_inflight == 0;
	pthread_mutex_unlock(&w->sh.mu);
	return idle;
}

/* The next beat after one that began at began: every lease/3 while the
 * node holds leases, every lease/2 when idle (the node row only says it
 * is alive: a node is dead after a lease without a beat). */
static int64_t
next_beat(sked_worker *w, int64_t began, int idle)
{
	return began + (idle ? w->o.lease_ms / 2 : sked__wk_beat_interval(w));
}

/* No connection yet (refused at the start, or since): try again when
 * the back-off says. 1: there is one now. */
static int
beat_connection(sked_worker *w, int64_t now)
{
	if (w->beat.h)
		return 1;
	if (now < w->beat.retry_at)
		return 0;
	w->beat.h = sked__wk_conn_open(w, WK_CONN_BEAT);
	if (!w->beat.h) {
		w->beat.retry_at = sked__wk_conn_backoff(&w->beat.backoff);
		return 0;
	}
	w->beat.backoff = 0;
	return 1;
}

void *
sked__wk_heartbeat_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t next = sked__mono_ms() + sked__wk_beat_interval(w);
	int64_t last = 0; /* when the last beat began */
	int failing = 0, was_idle = 0;
	w->beat.listed_none = 0;
	w->beat.leads = 0;
	w->beat.lead_next = 0;
	/* the lock-wait watchdog asks on this connection, between beats */
	int asks = (w->h->dialect->caps & SKED_CAP_WAIT_HOLDER) != 0;
	while (!atomic_load(&w->sh.side_exit)) {
		int64_t now = sked__mono_ms();
		if (!beat_connection(w, now)) {
			struct timespec ts = {0, 100 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		sked__wk_lead_turn(w, now);
		if (asks)
			check_waits(w, w->beat.h);
		vacuum_hot_table(w, now);
		/* a node that was idle at its last beat and holds leases now
		 * renews them on the busy schedule */
		if (was_idle && last && !idle_beat(w) &&
		    next > last + sked__wk_beat_interval(w))
			next = last + sked__wk_beat_interval(w);
		if (now < next) {
			int64_t d = next - now;
			struct timespec ts = {d / 1000, (d % 1000) * 1000000};
			if (d > 100)
				ts = (struct timespec){0, 100 * 1000000};
			nanosleep(&ts, NULL);
			continue;
		}
		int64_t began = sked__mono_ms();
		int64_t *ids = NULL;
		int *att = NULL;
		int n = 0;
		int idle = idle_beat(w);
		unsigned long long seq = atomic_load(&w->sh.claim_failures);
		int none_in_flight = atomic_load(&w->sh.claims_dispatched) ==
		                     atomic_load(&w->sh.claims_begun);
		int rc = sked__node_beat(w->beat.h, w->node_id, busy_now(w));
		if (rc == SKED_OK && !idle)
			rc = sked__renew(w->beat.h, w->node_id, w->o.lease_ms,
			                 &ids, &att, &n);
		last = began;
		was_idle = idle;
		if (rc == SKED_OK && !idle) {
			w->beat.listed_seq = seq;
			w->beat.listed_none = n == 0 && none_in_flight;
		}
		sked__wk_note(w,
		              rc == SKED_OK ? &w->sh.renewals
		                            : &w->sh.renewal_errors,
		              NULL, 0);
		if (rc == SKED_OK) {
			/* which leases this renewal extended, before anything
			 * counts on it */
			check_held(w, ids, att, n, began);
			extend_guard(w, began);
			atomic_store(&w->sh.lease_ok_ms, began);
			check_strays(w, ids, att, n);
			if (failing)
				sked__log(SKED_LOG_INFO, "lease renewal works "
				                         "again");
			failing = 0;
			next = next_beat(w, began, idle);
		} else {
			if (!failing)
				sked__log(SKED_LOG_WARN,
				          "cannot renew leases: %s",
				          sked_errmsg(w->beat.h));
			failing = 1;
			if (rc == SKED_EUNAVAILABLE)
				sked__ignore(sked__wk_reconnect(
				        w, w->beat.h, SKED_CONN_LEASES));
			/* try again soon, but not in a tight loop */
			next = sked__mono_ms() +
			       (sked__wk_beat_interval(w) < 1000
			                ? sked__wk_beat_interval(w)
			                : 1000);
		}
		free(ids);
		free(att);
	}
	sked__wk_lead_end(w);
	return NULL;
}
/* The watchdog: never let a lease expire under a handler. It runs apart
 * from the heartbeat because a renewal can block (a held lock, a server
 * that stopped answering) for longer than the lease. */
void *
sked__wk_watchdog_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t last = sked__mono_ms();
	/* a database that cannot name a holder: told from here, no SQL */
	int tells = !(w->h->dialect->caps & SKED_CAP_WAIT_HOLDER);
	while (!atomic_load(&w->sh.side_exit)) {
		int64_t now = sked__mono_ms();
		stop_unleased(w, now, now - last);
		if (tells)
			check_waits(w, NULL);
		last = now;
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}
