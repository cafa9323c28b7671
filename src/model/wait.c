/*
 * wait.c — waiting for tasks to end (sked_wait, sked_wait_any; sked.h).
 *
 * Layer: the model, beside queue.c; the CLI's `sked wait`, `enqueue
 * --wait`, the JSON API's long-poll and the Python binding call it.
 *
 * One loop: read where the tasks are (a live row in {p}task, an ended one
 * in {p}task_done, or neither: no such task), stop when they have ended,
 * else sleep until something may have changed:
 *   PostgreSQL  the waiter marks the live rows (waited = 1) after a
 *               LISTEN on {p}end; the trigger of schema step 11 sends
 *               NOTIFY {p}end when a marked row leaves {p}task, at the
 *               commit of the transaction that ended it. The waiter sleeps
 *               on the connection's socket; every SAFETY_MS it looks once
 *               and says LISTEN again (a reconnect drops it). Nobody
 *               waiting: no mark, no NOTIFY, no statement of the hot path
 *               changed (docs/performance.md).
 *   elsewhere   a back-off from SKED_WAIT_POLL_MIN_MS doubling to
 *               SKED_WAIT_POLL_MAX_MS; on SQLite a commit (the WAL watch
 *               the worker uses) cuts a sleep short. Behind a transaction
 *               pooler (no session to LISTEN in) PostgreSQL does the same.
 */
#include "handle/internal.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

#define SAFETY_MS 10000

/* where each id is: ?1…?n twice */
static const char where_sql[] =
        "SELECT id, 0 FROM {p}task WHERE id IN ({ids}) UNION ALL "
        "SELECT id, 1 FROM {p}task_done WHERE id IN ({ids})";
static const char mark_sql[] =
        "UPDATE {p}task SET waited = 1 WHERE id IN ({ids}) AND waited = 0";
static const char listen_sql[] = "LISTEN {p}end";

enum { GONE, LIVE, ENDED };

struct waiting {
	const int64_t *ids;
	int n;
	sked_val *p;
	char *where, *mark; /* rendered and filled */
	char *state;        /* per id: GONE, LIVE, ENDED */
};

static char *
render(sked *h, const char *tmpl, int n)
{
	char *x = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	if (!x)
		return NULL;
	sked_buf b = {0};
	sked__sql_fill(&b, x, 1, n);
	free(x);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static int
look(sked *h, struct waiting *w)
{
	sked_res r = {0};
	int rc = sked__qdyn(h, w->where, w->p, w->n, &r);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the tasks waited for");
	memset(w->state, GONE, (size_t)w->n);
	for (int i = 0; i < r.nrows; i++) {
		int64_t id = sked__res_int(&r, i, 0);
		char st = sked__res_int(&r, i, 1) ? ENDED : LIVE;
		for (int k = 0; k < w->n; k++)
			if (w->ids[k] == id)
				w->state[k] = st;
	}
	sked__res_clear(&r);
	return SKED_OK;
}

/* LISTEN, then the mark: a task that ends after the mark notifies a
 * listener; one that ended before it is seen by the look that follows. */
static int
listen_and_mark(sked *h, struct waiting *w)
{
	char *l = sked__dialect_expand(h->dialect, h->prefix, listen_sql);
	if (!l)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int rc = sked__qdyn(h, l, NULL, 0, NULL);
	free(l);
	if (rc == SKED_OK)
		rc = sked__qdyn(h, w->mark, w->p, w->n, NULL);
	return rc;
}

/* Sleep up to ms on the fds that may say something changed; 1 when
 * wake_fd turned readable. */
static int
sleep_on(sked *h, int sock, int wake_fd, int64_t ms)
{
	struct pollfd fds[2];
	nfds_t nfds = 0;
	int wake_at = -1;
	if (sock >= 0)
		fds[nfds++] = (struct pollfd){.fd = sock, .events = POLLIN};
	if (wake_fd >= 0) {
		wake_at = (int)nfds;
		fds[nfds++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
	}
	int r = poll(nfds ? fds : NULL, nfds, (int)ms);
	if (r > 0 && sock >= 0 && fds[0].revents)
		sked__db_drain_notify(h->db, NULL, NULL);
	return r > 0 && wake_at >= 0 && fds[wake_at].revents != 0;
}

static int
wait_core(sked *h, const int64_t *ids, size_t n, int all, int64_t timeout_ms,
          int wake_fd, size_t *nended, int64_t *found)
{
	if (nended)
		*nended = 0;
	if (!h)
		return SKED_EINVAL;
	if (!ids || n == 0 || n > SKED_WAIT_MAX)
		return sked__fail(h, SKED_EINVAL,
		                  "wait for 1 to %d tasks, not %zu",
		                  SKED_WAIT_MAX, n);
	for (size_t i = 0; i < n; i++)
		if (ids[i] <= 0)
			return sked__fail(h, SKED_EINVAL,
			                  "task id %lld is not an id",
			                  (long long)ids[i]);
	struct waiting w = {.ids = ids, .n = (int)n};
	int rc = SKED_OK;
	w.p = calloc(n, sizeof *w.p);
	w.state = calloc(n, 1);
	w.where = render(h, where_sql, (int)n);
	int push = (h->dialect->caps & SKED_CAP_NOTIFY) &&
	           !sked__db_pooled(h->db) && h->schema_version >= 11;
	if (push)
		w.mark = render(h, mark_sql, (int)n);
	if (!w.p || !w.state || !w.where || (push && !w.mark)) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		w.p[i] = SKED_INTV(ids[i]);
	/* no session to listen in (the mark alone would be lost): poll */
	if (push && listen_and_mark(h, &w) != SKED_OK)
		push = 0;
	int64_t start = sked__mono_ms(), nap = SKED_WAIT_POLL_MIN_MS;
	int64_t last_listen = start;
	for (;;) {
		if ((rc = look(h, &w)) != SKED_OK)
			goto out;
		size_t done = 0;
		for (size_t i = 0; i < n; i++) {
			if (w.state[i] == GONE) {
				if (found)
					*found = ids[i];
				rc = sked__fail(h, SKED_ENOTFOUND,
				                "task %lld not found",
				                (long long)ids[i]);
				goto out;
			}
			if (w.state[i] == ENDED) {
				if (!all && done == 0 && found)
					*found = ids[i];
				done++;
			}
		}
		if (nended)
			*nended = done;
		if (all ? done == n : done > 0)
			goto out;
		int64_t now = sked__mono_ms(), left = INT64_MAX;
		if (timeout_ms >= 0 && (left = start + timeout_ms - now) <= 0) {
			rc = sked__fail(h, SKED_ETIMEOUT,
			                "%zu of %zu task(s) ended in time",
			                done, n);
			goto out;
		}
		int sock = sked__db_socket(h->db);
		int64_t ms;
		if (push) {
			ms = left < SAFETY_MS ? left : SAFETY_MS;
		} else {
			ms = left < nap ? left : nap;
			nap = nap * 2 > SKED_WAIT_POLL_MAX_MS
			              ? SKED_WAIT_POLL_MAX_MS
			              : nap * 2;
		}
		if (sleep_on(h, sock, wake_fd, ms)) {
			rc = sked__fail(h, SKED_ETIMEOUT, "woken");
			goto out;
		}
		if (push && sked__mono_ms() - last_listen >= SAFETY_MS) {
			/* a reconnect may have dropped the LISTEN */
			last_listen = sked__mono_ms();
			if (listen_and_mark(h, &w) != SKED_OK)
				push = 0;
		}
	}
out:
	free(w.p);
	free(w.state);
	free(w.where);
	free(w.mark);
	return rc;
}

SKED_API int
sked_wait(sked *h, const int64_t *ids, size_t n, int64_t timeout_ms,
          size_t *nended, int64_t *bad_id)
{
	int64_t found = 0;
	int rc = wait_core(h, ids, n, 1, timeout_ms, -1, nended, &found);
	if (bad_id)
		*bad_id = rc == SKED_ENOTFOUND ? found : 0;
	return rc;
}

SKED_API int
sked_wait_any(sked *h, const int64_t *ids, size_t n, int64_t timeout_ms,
              int wake_fd, int64_t *ended_id)
{
	int64_t found = 0;
	int rc = wait_core(h, ids, n, 0, timeout_ms, wake_fd, NULL, &found);
	if (ended_id)
		*ended_id = found;
	return rc;
}
