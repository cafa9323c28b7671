/*
 * events.c — the events feed: task ends, the attempts that did not end
 * their task, and starts, in order of time, from a position
 * (sked_events_read; sked.h, docs/operations.md "Events").
 *
 * Layer: the model, beside wait.c; `sked events`, GET /api/events and
 * the leader's webhook chore read it.
 *
 * Nothing is written for the feed: it reads what sked writes anyway.
 *   end      {p}task_done, one read per ended status through its
 *            (status, finished_at) index;
 *   attempt  {p}run by finished_at (schema step 14's index; a row is
 *            written only for an attempt that did not end its task);
 *   start    {p}task's running rows by started_at (those still running).
 * A position is a time in ms by the database's clock. Transactions commit
 * out of the order of their timestamps, so a read stops at the settled
 * horizon, the database's now less settle_ms: a row stamped before it is
 * taken to be committed. Each source is read from position + 1 ms up to
 * the horizon, at most limit + 1 rows; the rows are merged and the page
 * cut at a millisecond boundary (never inside one), so the next position
 * is a time at or before which every event has been returned. A page
 * whose first millisecond alone passes the limit returns that whole
 * millisecond (read again without a limit).
 */
#include "handle/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	SRC_DONE_OK,
	SRC_DONE_DEAD,
	SRC_DONE_CANCELLED,
	SRC_RUN,
	SRC_START,
	NSRC
};

/* columns: at, id, queue, kind, status, attempt, node, started,
 * finished, outcome, error, result */
static const char done_sql[] =
        "SELECT {ms:finished_at}, id, queue, kind, status, attempts, "
        "node_id, {ms:started_at}, {ms:finished_at}, outcome, "
        "COALESCE(error, last_error), result FROM {p}task_done "
        "WHERE status = ?4 AND finished_at >= {ts:?1} AND finished_at < "
        "{ts:?2}";
static const char run_sql[] =
        "SELECT {ms:r.finished_at}, r.task_id, COALESCE(t.queue, d.queue), "
        "COALESCE(t.kind, d.kind), COALESCE(t.status, d.status), r.attempt, "
        "r.node_id, {ms:r.started_at}, {ms:r.finished_at}, r.outcome, "
        "r.error, NULL FROM {p}run r LEFT JOIN {p}task t ON t.id = "
        "r.task_id LEFT JOIN {p}task_done d ON d.id = r.task_id WHERE "
        "r.finished_at >= {ts:?1} AND r.finished_at < {ts:?2} AND "
        "r.outcome <> 'succeeded'";
static const char start_sql[] =
        "SELECT {ms:started_at}, id, queue, kind, status, attempts, "
        "node_id, {ms:started_at}, NULL, NULL, NULL, NULL FROM {p}task "
        "WHERE status = 1 AND started_at >= {ts:?1} AND started_at < "
        "{ts:?2}";

static const char *
order_of(int src)
{
	return src == SRC_RUN     ? " ORDER BY r.finished_at{lim:?3}"
	       : src == SRC_START ? " ORDER BY started_at{lim:?3}"
	                          : " ORDER BY finished_at{lim:?3}";
}

/* The statement of a source, the filters joined to it: parameters ?1
 * from, ?2 until (ms), ?3 the limit, ?4 the status (ended tasks), then
 * the kind and the queue when given (*np: how many). */
static char *
source_sql(sked *h, int src, const sked_event_filter *f, int *np)
{
	sked_buf b = {0};
	const char *base = src == SRC_RUN     ? run_sql
	                   : src == SRC_START ? start_sql
	                                      : done_sql;
	const char *col = src == SRC_RUN ? "COALESCE(t.kind, d.kind)" : "kind";
	const char *qcol =
	        src == SRC_RUN ? "COALESCE(t.queue, d.queue)" : "queue";
	char more[96];
	*np = src <= SRC_DONE_CANCELLED ? 4 : 3;
	sked__buf_put(&b, base, strlen(base));
	if (f->kind) {
		snprintf(more, sizeof more, " AND %s = ?%d", col, ++*np);
		sked__buf_put(&b, more, strlen(more));
	}
	if (f->queue) {
		snprintf(more, sizeof more, " AND %s = ?%d", qcol, ++*np);
		sked__buf_put(&b, more, strlen(more));
	}
	const char *o = order_of(src);
	sked__buf_put(&b, o, strlen(o));
	sked__buf_put(&b, "", 1);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	char *x = sked__dialect_expand(h->dialect, h->prefix, b.p);
	free(b.p);
	return x;
}

/* A copy of s cut to SKED_EVENT_PREVIEW bytes at a character boundary. */
static char *
preview(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	if (n > SKED_EVENT_PREVIEW) {
		n = SKED_EVENT_PREVIEW;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct list {
	sked_event *e;
	size_t n, cap;
	int oom;
};

static void
add_rows(struct list *l, const sked_res *r, int src)
{
	for (int i = 0; i < r->nrows; i++) {
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 64;
			sked_event *e = realloc(l->e, cap * sizeof *e);
			if (!e) {
				l->oom = 1;
				return;
			}
			l->e = e;
			l->cap = cap;
		}
		sked_event *e = &l->e[l->n++];
		memset(e, 0, sizeof *e);
		e->at_ms = sked__res_int(r, i, 0);
		e->type = src == SRC_RUN     ? SKED_EVENT_ATTEMPT
		          : src == SRC_START ? SKED_EVENT_START
		                             : SKED_EVENT_END;
		e->id = sked__res_int(r, i, 1);
		e->queue = dup_or_null(sked__res_text(r, i, 2));
		e->kind = dup_or_null(sked__res_text(r, i, 3));
		e->status = sked__res_null(r, i, 4)
		                    ? -1
		                    : (int)sked__res_int(r, i, 4);
		e->attempt = (int)sked__res_int(r, i, 5);
		e->node_id = dup_or_null(sked__res_text(r, i, 6));
		e->started_ms = sked__res_int(r, i, 7);
		e->finished_ms = sked__res_int(r, i, 8);
		e->outcome = dup_or_null(sked__res_text(r, i, 9));
		e->error = preview(sked__res_text(r, i, 10));
		e->result = preview(sked__res_text(r, i, 11));
	}
}

/* Read source src for [lo, hi) ms, at most lim rows (0: all). */
static int
read_source(sked *h, int src, const sked_event_filter *f, int64_t lo,
            int64_t hi, int64_t lim, struct list *l, int *got, int64_t *last_ms)
{
	static const int status_of[] = {SKED_SUCCEEDED, SKED_DEAD,
	                                SKED_CANCELLED};
	int np = 0;
	char *sql = source_sql(h, src, f, &np);
	if (!sql)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	sked_val p[6] = {
	        SKED_INTV(lo),
	        SKED_INTV(hi),
	        SKED_INTV(lim > 0 ? lim : 1000000000),
	};
	int k = 3;
	if (src <= SRC_DONE_CANCELLED)
		p[k++] = SKED_INTV(status_of[src]);
	if (f->kind)
		p[k++] = SKED_TEXTV(f->kind);
	if (f->queue)
		p[k++] = SKED_TEXTV(f->queue);
	sked_res r = {0};
	int rc = sked__qdyn(h, sql, p, np, &r);
	free(sql);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the events");
	*got = r.nrows;
	*last_ms = r.nrows ? sked__res_int(&r, r.nrows - 1, 0) : 0;
	add_rows(l, &r, src);
	sked__res_clear(&r);
	return l->oom ? sked__fail(h, SKED_ENOMEM, "out of memory") : SKED_OK;
}

static int
cmp_event(const void *a, const void *b)
{
	const sked_event *x = a, *y = b;
	if (x->at_ms != y->at_ms)
		return x->at_ms < y->at_ms ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->attempt < y->attempt ? -1 : x->attempt > y->attempt;
}

static void
event_clear(sked_event *e)
{
	free(e->kind);
	free(e->queue);
	free(e->outcome);
	free(e->node_id);
	free(e->error);
	free(e->result);
}

SKED_API void
sked_events_free(sked_event *e, size_t n)
{
	if (!e)
		return;
	for (size_t i = 0; i < n; i++)
		event_clear(&e[i]);
	free(e);
}

/* The sources this database has (the run index is schema step 14's;
 * an older schema still reads, more slowly). */
static int
read_all(sked *h, const sked_event_filter *f, int64_t lo, int64_t hi,
         int64_t lim, struct list *l, int64_t *bound)
{
	*bound = INT64_MAX;
	for (int s = 0; s < NSRC; s++) {
		int got = 0;
		int64_t last = 0;
		int rc = read_source(h, s, f, lo, hi, lim, l, &got, &last);
		if (rc != SKED_OK)
			return rc;
		/* cut short: only the rows before its last millisecond are
		 * known to be all there */
		if (lim > 0 && got >= lim && last < *bound)
			*bound = last;
	}
	return SKED_OK;
}

SKED_API int
sked_events_read(sked *h, int64_t after, const sked_event_filter *fin,
                 size_t limit, sked_event **out, size_t *n, int64_t *next)
{
	if (out)
		*out = NULL;
	if (n)
		*n = 0;
	if (!h)
		return SKED_EINVAL;
	if (!out || !n || !next || limit == 0 || limit > SKED_EVENTS_MAX)
		return sked__fail(h, SKED_EINVAL,
		                  "read 1 to %d events at a time, not %zu",
		                  SKED_EVENTS_MAX, limit);
	sked_event_filter f = fin ? *fin : (sked_event_filter){0};
	if (f.settle_ms <= 0)
		f.settle_ms = SKED_EVENTS_SETTLE_MS;
	if ((f.kind && sked__check_name(h, "kind", f.kind) != SKED_OK) ||
	    (f.queue && sked__check_name(h, "queue", f.queue) != SKED_OK))
		return SKED_EINVAL;
	int64_t now = 0;
	int rc = sked__now(h, &now);
	if (rc != SKED_OK)
		return rc;
	int64_t horizon = now - f.settle_ms; /* rows at or before it */
	if (after < 0 || after > horizon)
		after = after < 0 ? horizon : after;
	*next = after;
	if (after >= horizon)
		return SKED_OK;
	struct list l = {0};
	int64_t bound;
	rc = read_all(h, &f, after + 1, horizon + 1, (int64_t)limit + 1, &l,
	              &bound);
	if (rc != SKED_OK)
		goto fail;
	if (l.n > 1) /* l.e is NULL when nothing was read */
		qsort(l.e, l.n, sizeof *l.e, cmp_event);
	/* keep the whole milliseconds known complete: before bound */
	size_t keep = 0;
	while (keep < l.n && l.e[keep].at_ms < bound)
		keep++;
	int64_t pos = bound == INT64_MAX ? horizon : bound - 1;
	if (keep > limit) {
		/* cut before the millisecond that passes the limit */
		int64_t x = l.e[limit].at_ms;
		keep = limit;
		while (keep > 0 && l.e[keep - 1].at_ms == x)
			keep--;
		pos = x - 1;
		if (keep == 0) {
			/* one millisecond alone passes the limit: all of it
			 * (read whole: it is before bound) */
			while (keep < l.n && l.e[keep].at_ms == x)
				keep++;
			pos = x;
		}
	} else if (keep == 0 && bound != INT64_MAX) {
		/* every row read is of the bound's millisecond */
		for (size_t i = 0; i < l.n; i++)
			event_clear(&l.e[i]);
		l.n = 0;
		rc = read_all(h, &f, bound, bound + 1, 0, &l, &pos);
		if (rc != SKED_OK)
			goto fail;
		if (l.n > 1) /* l.e is NULL when nothing was read */
			qsort(l.e, l.n, sizeof *l.e, cmp_event);
		keep = l.n;
		pos = bound;
	}
	for (size_t i = keep; i < l.n; i++)
		event_clear(&l.e[i]);
	if (keep == 0) {
		free(l.e);
		l.e = NULL;
	}
	*out = l.e;
	*n = keep;
	*next = pos;
	return SKED_OK;
fail:
	sked_events_free(l.e, l.n);
	return rc;
}
