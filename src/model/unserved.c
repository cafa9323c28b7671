/*
 * unserved.c — why work waits: what each node serves, and the due work
 * no live node serves (sked_unserved_get; docs/operations.md).
 *
 * Layer: the model, beside lease.c (which registers nodes). A node
 * writes the kinds it has handlers for and the queues it claims from
 * once, right after it registers (sked__node_serves; the worker's
 * serves.c calls it): nothing on the claim or finish path. The reading
 * side groups the due tasks by queue and kind (one statement), reads the
 * live nodes' lists (another) and matches them here.
 */
#include "handle/internal.h"
#include "model/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_MAX 1000

static const char serves_sql[] = "UPDATE {p}node SET serves_kinds = ?2, "
                                 "serves_queues = ?3 WHERE id = ?1";
static const char due_sql[] =
        "SELECT queue, kind, COUNT(*), {nowms} - MIN({ms:run_at}) FROM "
        "{p}task WHERE status IN (0, 4) AND run_at <= {now} AND queue NOT "
        "IN (SELECT queue FROM {p}queue_limit WHERE paused = 1) GROUP BY "
        "queue, kind";
static const char live_sql[] =
        "SELECT serves_kinds, serves_queues FROM {p}node WHERE {nowms} - "
        "{ms:heartbeat} < lease_ms";

static int
run(sked *h, const char *tmpl, const sked_val *p, int np, sked_res *r)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	if (!sql)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	int rc = sked__qdyn(h, sql, p, np, r);
	free(sql);
	return rc;
}

int
sked__node_serves(sked *h, const char *node_id, const char *kinds,
                  const char *queues)
{
	if (h->schema_version < 11)
		return SKED_OK;
	sked_val p[3] = {SKED_TEXTV(node_id), SKED_TEXTV(kinds),
	                 SKED_TEXTV(queues)};
	int rc = run(h, serves_sql, p, 3, NULL);
	return rc == SKED_OK ? SKED_OK
	                     : sked__fail_db(h, rc,
	                                     "cannot record what the "
	                                     "node serves");
}

/* name is in list (",a,b,"; NULL: every name) */
static int
listed(const char *list, const char *name)
{
	if (!list)
		return 1;
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)) != NULL; p++)
		if (p > list && p[-1] == ',' && p[n] == ',')
			return 1;
	return 0;
}

static int
by_due(const void *a, const void *b)
{
	const sked_unserved *x = a, *y = b;
	return x->due < y->due ? 1 : x->due > y->due ? -1 : 0;
}

SKED_API int
sked_unserved_get(sked *h, sked_unserved **out, size_t *n)
{
	if (!h || !out || !n)
		return SKED_EINVAL;
	*out = NULL;
	*n = 0;
	sked_res due = {0}, live = {0};
	int rc = run(h, due_sql, NULL, 0, &due);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot count the due tasks");
	if (due.nrows == 0)
		goto out;
	if ((rc = run(h, live_sql, NULL, 0, &live)) != SKED_OK) {
		rc = sked__fail_db(h, rc, "cannot read the live nodes");
		goto out;
	}
	sked_unserved *u = calloc((size_t)due.nrows, sizeof *u);
	if (!u) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	size_t k = 0;
	for (int i = 0; i < due.nrows; i++) {
		const char *q = sked__res_text(&due, i, 0);
		const char *kind = sked__res_text(&due, i, 1);
		if (!q || !kind)
			continue;
		int served = 0;
		for (int j = 0; j < live.nrows && !served; j++)
			served = listed(sked__res_text(&live, j, 0), kind) &&
			         listed(sked__res_text(&live, j, 1), q);
		if (served)
			continue;
		snprintf(u[k].queue, sizeof u[k].queue, "%s", q);
		snprintf(u[k].kind, sizeof u[k].kind, "%s", kind);
		u[k].due = sked__res_int(&due, i, 2);
		u[k].oldest_due_ms = sked__res_int(&due, i, 3);
		if (u[k].oldest_due_ms < 0)
			u[k].oldest_due_ms = 0;
		k++;
	}
	qsort(u, k, sizeof *u, by_due);
	if (k > ROWS_MAX)
		k = ROWS_MAX;
	if (k == 0) {
		free(u);
		u = NULL;
	}
	*out = u;
	*n = k;
out:
	sked__res_clear(&due);
	sked__res_clear(&live);
	return rc;
}

SKED_API void
sked_unserved_free(sked_unserved *u)
{
	free(u);
}
