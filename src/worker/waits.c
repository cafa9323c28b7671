/*
 * worker/waits.c — the lock-wait watchdog: the model marks the claim of a
 * schedule row, the transactions on a cluster lock row and the claim's
 * lock of a queue limit row (sked__wait_begin) in the worker's slot for
 * that handle. A slot older than lock_wait_warn_ms is told once per
 * wait: one warning naming the row and, where the database can tell, who
 * holds it (asked on the heartbeat's connection, between beats, from the
 * server's own views: pg_blocking_pids, InnoDB's lock waits,
 * sys.dm_exec_requests), and counted in the metrics. SQLite cannot name a
 * holder, so there the watchdog thread tells the wait without asking,
 * naming the database file; the claim itself never pays for any of it.
 *
 * Layer: the worker (worker.h); called by heartbeat.c and watchdog.c.
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
void
sked__wk_check_waits(sked_worker *w, sked *conn)
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
