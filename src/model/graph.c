/*
 * graph.c — a workflow in one transaction (sked_enqueue_graph,
 * docs/workflows.md "A graph in one transaction"): n tasks of any kinds
 * whose parents are tasks of the same graph (by index) or tasks that
 * exist already (by id), all inserted or none.
 *
 * Layer: the model (floor 6). Everything that can be checked without
 * the database is checked first (each task as sked_enqueue checks it,
 * the indexes, the bounds, and that the graph has no cycle, by ordering
 * it parents first); then one transaction locks the existing parents in
 * ascending id order, once for the whole graph (deps.c's lock order),
 * and inserts and links the tasks in that order with the same steps as
 * an enqueue with parents (enqueue.h, deps.h). A failure anywhere rolls
 * the whole graph back. The wake-up is one per (queue, kind) of the
 * tasks that may run at once, delivered at commit.
 */
#include "handle/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/deps.h"
#include "model/enqueue.h"
#include "model/wake.h"

/* A task's options; NULL is every default. */
static const sked_enqueue_opts *
opts_of(const sked_graph_task *g)
{
	static const sked_enqueue_opts none = {0};
	return g->opts ? g->opts : &none;
}

/* How a message names task i: its name, or its index. */
static const char *
label(const sked_graph_task *t, size_t i, char *buf, size_t len)
{
	if (t[i].name)
		snprintf(buf, len, "task '%.64s'", t[i].name);
	else
		snprintf(buf, len, "task %zu", i);
	return buf;
}

/* h's last failure again, prefixed with what names the task. */
static int
refail(sked *h, int rc, const sked_graph_task *t, size_t i)
{
	char what[96], msg[512];
	snprintf(msg, sizeof msg, "%s", sked_errmsg(h));
	return sked__fail(h, rc, "%s: %s", label(t, i, what, sizeof what), msg);
}

/* One task's checks, before the database: as sked_enqueue's, then what a
 * graph adds (no unique key, parents in range and not itself). */
static int
check_task(sked *h, const sked_graph_task *t, size_t n, size_t i)
{
	const sked_graph_task *g = &t[i];
	char what[96];
	label(t, i, what, sizeof what);
	if (!g->kind)
		return sked__fail(h, SKED_EINVAL, "%s: no kind", what);
	int rc = sked__enqueue_check(h, g->kind, g->payload,
	                             g->payload ? g->payload_len : 0,
	                             opts_of(g));
	if (rc != SKED_OK)
		return refail(h, rc, t, i);
	if (opts_of(g)->unique_key || opts_of(g)->unique_scope ||
	    opts_of(g)->unique_for_ms || opts_of(g)->unique_replace)
		return sked__fail(h, SKED_EINVAL,
		                  "%s: a task of a graph cannot have a unique "
		                  "key (enqueue it alone, then name its id)",
		                  what);
	if (opts_of(g)->on_parent_failure != SKED_PARENT_CANCEL &&
	    opts_of(g)->on_parent_failure != SKED_PARENT_IGNORE)
		return sked__fail(
		        h, SKED_EINVAL,
		        "%s: on-parent-failure: give cancel or ignore", what);
	if (opts_of(g)->n_after &&
	    (rc = sked__deps_check(h, opts_of(g))) != SKED_OK)
		return refail(h, rc, t, i);
	if (g->n_after_index && !g->after_index)
		return sked__fail(h, SKED_EINVAL, "%s: no parent indexes given",
		                  what);
	if (opts_of(g)->n_after > SKED_MAX_PARENTS ||
	    g->n_after_index > SKED_MAX_PARENTS - opts_of(g)->n_after)
		return sked__fail(h, SKED_EINVAL,
		                  "%s: %zu parents; a task has at most %d "
		                  "(SKED_MAX_PARENTS)",
		                  what, opts_of(g)->n_after + g->n_after_index,
		                  SKED_MAX_PARENTS);
	for (size_t k = 0; k < g->n_after_index; k++) {
		size_t j = g->after_index[k];
		if (j >= n)
			return sked__fail(h, SKED_EINVAL,
			                  "%s: parent index %zu is not in the "
			                  "graph of %zu tasks",
			                  what, j, n);
		if (j == i)
			return sked__fail(h, SKED_EINVAL, "%s waits for itself",
			                  what);
	}
	return SKED_OK;
}

/* The graph's tasks parents first (Kahn's order, ties by index) into
 * order; SKED_EINVAL naming a task on a cycle when there is one. */
static int
order_tasks(sked *h, const sked_graph_task *t, size_t n, size_t *order)
{
	size_t *indeg = calloc(n, sizeof *indeg);
	size_t *first = calloc(n + 1, sizeof *first), *kids = NULL;
	size_t nedge = 0, head = 0, tail = 0, i, k;
	int rc = SKED_OK;
	if (!indeg || !first)
		goto oom;
	/* the children of each task, as one array sliced by first[] */
	for (i = 0; i < n; i++) {
		indeg[i] = t[i].n_after_index;
		nedge += t[i].n_after_index;
		for (k = 0; k < t[i].n_after_index; k++)
			first[t[i].after_index[k] + 1]++;
	}
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	if (nedge && !(kids = malloc(nedge * sizeof *kids)))
		goto oom;
	{
		size_t *fill = calloc(n, sizeof *fill);
		if (!fill)
			goto oom;
		for (i = 0; i < n; i++)
			for (k = 0; k < t[i].n_after_index; k++) {
				size_t p = t[i].after_index[k];
				kids[first[p] + fill[p]++] = i;
			}
		free(fill);
	}
	for (i = 0; i < n; i++)
		if (indeg[i] == 0)
			order[tail++] = i;
	while (head < tail) {
		size_t p = order[head++];
		for (k = first[p]; k < first[p + 1]; k++)
			if (--indeg[kids[k]] == 0)
				order[tail++] = kids[k];
	}
	if (tail < n) {
		/* every task left waits for one left: walking up from one,
		 * n steps end on the cycle */
		for (i = 0; indeg[i] == 0; i++)
			;
		for (size_t step = 0; step < n; step++)
			for (k = 0; k < t[i].n_after_index; k++)
				if (indeg[t[i].after_index[k]] > 0) {
					i = t[i].after_index[k];
					break;
				}
		char what[96];
		rc = sked__fail(h, SKED_EINVAL,
		                "the graph has a cycle: %s waits, through its "
		                "parents, for itself",
		                label(t, i, what, sizeof what));
	}
	free(indeg);
	free(first);
	free(kids);
	return rc;
oom:
	free(indeg);
	free(first);
	free(kids);
	return sked__fail(h, SKED_ENOMEM, "out of memory");
}

static int
check_graph(sked *h, const sked_graph_task *t, size_t n, size_t *order)
{
	size_t edges = 0, bytes = 0;
	if (n > SKED_MAX_GRAPH_TASKS)
		return sked__fail(h, SKED_EINVAL,
		                  "a graph of %zu tasks; one graph has at most "
		                  "%d (SKED_MAX_GRAPH_TASKS)",
		                  n, SKED_MAX_GRAPH_TASKS);
	for (size_t i = 0; i < n; i++) {
		int rc = check_task(h, t, n, i);
		if (rc != SKED_OK)
			return rc;
		edges += opts_of(&t[i])->n_after + t[i].n_after_index;
		bytes += t[i].payload ? t[i].payload_len : 0;
	}
	if (edges > SKED_MAX_EDGES)
		return sked__fail(h, SKED_EINVAL,
		                  "the graph has %zu edges; one enqueue writes "
		                  "at most %d (SKED_MAX_EDGES)",
		                  edges, SKED_MAX_EDGES);
	if (bytes > SKED_MAX_GRAPH_BYTES)
		return sked__fail(
		        h, SKED_EINVAL,
		        "the graph's payloads are %zu bytes; one "
		        "graph holds at most %d (SKED_MAX_GRAPH_BYTES)",
		        bytes, SKED_MAX_GRAPH_BYTES);
	return order_tasks(h, t, n, order);
}

/* An existing parent, counted and locked once for the whole graph. */
typedef struct ext_parent {
	int64_t id;
	size_t nchild; /* the graph's tasks that wait for it */
	int st;        /* -1 live, else the status it ended with */
} ext_parent;

static int
cmp_ext(const void *a, const void *b)
{
	return sked__cmp_i64(&((const ext_parent *)a)->id,
	                     &((const ext_parent *)b)->id);
}

/* Sort and dedupe ids[0..*n) in place. */
static void
uniq_ids(int64_t *ids, size_t *n)
{
	size_t m = 0;
	qsort(ids, *n, sizeof *ids, sked__cmp_i64);
	for (size_t i = 0; i < *n; i++)
		if (m == 0 || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	*n = m;
}

/* Every existing parent of the graph, each once with the number of its
 * tasks that name it, locked in ascending id order (*ext to free). */
static int
lock_existing(sked *h, const sked_graph_task *t, size_t n, ext_parent **ext,
              size_t *next, int64_t *buf)
{
	size_t total = 0, m = 0;
	*ext = NULL;
	*next = 0;
	for (size_t i = 0; i < n; i++)
		total += opts_of(&t[i])->n_after;
	if (total == 0)
		return SKED_OK;
	ext_parent *e = malloc(total * sizeof *e);
	if (!e)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		size_t k = opts_of(&t[i])->n_after;
		if (k == 0) /* after may be NULL: no memcpy from it */
			continue;
		memcpy(buf, opts_of(&t[i])->after, k * sizeof *buf);
		uniq_ids(buf, &k); /* a task counts on a parent once */
		for (size_t j = 0; j < k; j++)
			e[m++] = (ext_parent){buf[j], 1, -1};
	}
	qsort(e, m, sizeof *e, cmp_ext);
	size_t u = 0;
	for (size_t i = 0; i < m; i++) {
		if (u > 0 && e[u - 1].id == e[i].id)
			e[u - 1].nchild++;
		else
			e[u++] = e[i];
	}
	int rc = SKED_OK;
	for (size_t i = 0; i < u && rc == SKED_OK; i++)
		rc = sked__deps_count(h, e[i].id, e[i].nchild, &e[i].st);
	if (rc != SKED_OK) {
		free(e);
		return rc;
	}
	*ext = e;
	*next = u;
	return SKED_OK;
}

/* Task i, its parents inserted already: its parents' ids into par
 * (sorted, once each), counted as deps.c's enqueue counts them, then
 * the task inserted and linked. *pending: it may run at once. */
static int
insert_one(sked *h, const sked_graph_task *t, size_t i, const int64_t *ids,
           const ext_parent *ext, size_t next, int64_t *par, int64_t *id,
           int *pending)
{
	const sked_graph_task *g = &t[i];
	size_t np = 0;
	int open = 0, bad_st = 0, rc;
	int64_t bad = 0;
	np = opts_of(g)->n_after;
	if (np) /* after may be NULL when there are none */
		memcpy(par, opts_of(g)->after, np * sizeof *par);
	for (size_t k = 0; k < g->n_after_index; k++)
		par[np++] = ids[g->after_index[k]];
	uniq_ids(par, &np);
	for (size_t k = 0; k < np; k++) {
		ext_parent key = {.id = par[k]};
		const ext_parent *e =
		        next ? bsearch(&key, ext, next, sizeof *ext, cmp_ext)
		             : NULL;
		int st;
		if (e)
			st = e->st;
		else if ((rc = sked__deps_count(h, par[k], 1, &st)) != SKED_OK)
			return rc; /* a parent of this graph: its own new row */
		if (st < 0)
			open++;
		else if (st != SKED_SUCCEEDED && !bad &&
		         opts_of(g)->on_parent_failure == SKED_PARENT_CANCEL) {
			bad = par[k];
			bad_st = st;
		}
	}
	rc = sked__enqueue_insert(h, g->kind, g->payload,
	                          g->payload ? g->payload_len : 0, opts_of(g),
	                          id);
	if (rc != SKED_OK)
		return refail(h, rc, t, i);
	*pending = 1;
	if (np == 0)
		return SKED_OK;
	return sked__deps_link(h, *id, par, (int)np, open,
	                       opts_of(g)->on_parent_failure, bad, bad_st,
	                       pending);
}

/* One wake-up per (queue, kind) of the tasks that may run at once. */
static int
wake_all(sked *h, const sked_graph_task *t, size_t n, const int64_t *ids,
         const unsigned char *pending)
{
	for (size_t i = 0; i < n; i++) {
		if (!pending[i])
			continue;
		const char *q = opts_of(&t[i])->queue ? opts_of(&t[i])->queue
		                                      : SKED_DEFAULT_QUEUE;
		int64_t count = 0;
		int seen = 0;
		for (size_t j = 0; j < n && !seen; j++) {
			const char *qj = opts_of(&t[j])->queue
			                         ? opts_of(&t[j])->queue
			                         : SKED_DEFAULT_QUEUE;
			if (!pending[j] || strcmp(qj, q) != 0 ||
			    strcmp(t[j].kind, t[i].kind) != 0)
				continue;
			if (j < i)
				seen = 1; /* told with the first of its kind */
			else
				count++;
		}
		if (seen)
			continue;
		int rc = sked__wake(h, (uint32_t)ids[i], count, q, t[i].kind);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc, "cannot notify workers");
	}
	return SKED_OK;
}

SKED_API int
sked_enqueue_graph(sked *h, const sked_graph_task *tasks, size_t n,
                   int64_t *ids_out)
{
	if (!h || !h->db || (n && (!tasks || !ids_out)))
		return SKED_EINVAL;
	if (n == 0)
		return SKED_OK;
	size_t *order = malloc(n * sizeof *order);
	unsigned char *pending = calloc(n, 1);
	int64_t *par = malloc((SKED_MAX_PARENTS + 1) * sizeof *par);
	ext_parent *ext = NULL;
	size_t next = 0;
	int rc;
	if (!order || !pending || !par) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = check_graph(h, tasks, n, order)) != SKED_OK)
		goto out;
	if ((rc = sked__begin(h, 0)) != SKED_OK) {
		rc = sked__fail_db(h, rc, "cannot begin the enqueue");
		goto out;
	}
	rc = lock_existing(h, tasks, n, &ext, &next, par);
	for (size_t k = 0; k < n && rc == SKED_OK; k++) {
		size_t i = order[k];
		int p = 0;
		rc = insert_one(h, tasks, i, ids_out, ext, next, par,
		                &ids_out[i], &p);
		pending[i] = (unsigned char)p;
	}
	if (rc == SKED_OK)
		rc = wake_all(h, tasks, n, ids_out, pending);
	if (rc != SKED_OK) {
		sked__rollback(h);
		goto out;
	}
	if ((rc = sked__commit(h)) != SKED_OK)
		rc = sked__fail_db(h, rc, "cannot commit the enqueue");
out:
	free(order);
	free(pending);
	free(par);
	free(ext);
	return rc;
}
