/*
 * graph_view.c — a task's workflow for a picture (sked_task_graph_get;
 * sked.h): the task, its ancestors and its descendants, bounded; and
 * the states of a list of tasks in one statement (sked_task_states).
 *
 * Layer: the model, beside deps.c (whose {p}task_dep edges it reads);
 * the dashboard's task page draws what it returns.
 *
 * Breadth-first by id lists, never a statement per task: each layer up
 * is one read of the edges whose child is in the layer, each layer down
 * one read of the edges whose parent is; then one read of the tasks'
 * status and kind (live and ended tables at once) and one of the edges
 * among them. A layer holds at most max_nodes ids (SKED_GRAPH_MAX, under
 * every engine's limit on bound values), so no list is split. Each
 * layer is read in id order, so a cut keeps the oldest tasks and a page
 * that asks again draws the same picture.
 */
#include "handle/internal.h"

#include <stdlib.h>
#include <string.h>

#include "model/deps.h"

static const char up_sql[] =
        "SELECT parent_id FROM {p}task_dep WHERE child_id IN ({ids}) "
        "ORDER BY parent_id";
static const char down_sql[] =
        "SELECT child_id FROM {p}task_dep WHERE parent_id IN ({ids}) "
        "ORDER BY child_id";
/* ?1…?n twice */
static const char nodes_sql[] =
        "SELECT id, status, kind FROM {p}task WHERE id IN ({ids}) "
        "UNION ALL "
        "SELECT id, status, kind FROM {p}task_done WHERE id IN ({ids})";
static const char edges_sql[] =
        "SELECT parent_id, child_id FROM {p}task_dep WHERE parent_id IN "
        "({ids}) AND child_id IN ({ids})";

struct ids {
	int64_t *v;
	size_t n, cap;
};

static int
ids_add(struct ids *s, int64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		int64_t *v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int
ids_has(const struct ids *s, int64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return 1;
	return 0;
}

/* the statement tmpl over the n ids, its rows into *r */
static int
read_over(sked *h, const char *tmpl, const int64_t *ids, size_t n, sked_res *r)
{
	char *x = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	sked_val *p = calloc(n, sizeof *p);
	sked_buf b = {0};
	int rc;

	if (x)
		sked__sql_fill(&b, x, 1, (int)n);
	free(x);
	if (!x || b.oom || !p) {
		free(b.p);
		free(p);
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		p[i] = SKED_INTV(ids[i]);
	rc = sked__qdyn(h, b.p, p, (int)n, r);
	free(b.p);
	free(p);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read a task's workflow");
	return SKED_OK;
}

/* One layer: the neighbours of frontier[0..nf) not yet in the set join
 * it (and the next frontier) while there is room; the others go to
 * left. */
static int
layer(sked *h, const char *tmpl, struct ids *set, struct ids *frontier,
      size_t max, struct ids *left)
{
	sked_res r = {0};
	struct ids next = {0};
	int rc = read_over(h, tmpl, frontier->v, frontier->n, &r);

	for (int i = 0; rc == SKED_OK && i < r.nrows; i++) {
		int64_t id = sked__res_int(&r, i, 0);
		if (ids_has(set, id))
			continue;
		if (set->n < max) {
			if (ids_add(set, id) || ids_add(&next, id))
				rc = sked__fail(h, SKED_ENOMEM,
				                "out of memory");
		} else if (ids_add(left, id)) {
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		}
	}
	sked__res_clear(&r);
	free(frontier->v);
	*frontier = next;
	return rc;
}

/* nodes[i] for ids[i]: status and kind, in one statement; -1 and NULL
 * for a task in neither table */
static int
fill_nodes(sked *h, const int64_t *ids, sked_graph_node *nodes, size_t n)
{
	sked_res r = {0};
	int rc;

	for (size_t i = 0; i < n; i++)
		nodes[i] = (sked_graph_node){.id = ids[i], .status = -1};
	if ((rc = read_over(h, nodes_sql, ids, n, &r)) != SKED_OK)
		return rc;
	for (int i = 0; i < r.nrows && rc == SKED_OK; i++) {
		int64_t id = sked__res_int(&r, i, 0);
		int nomem = 0;
		for (size_t k = 0; k < n; k++)
			if (nodes[k].id == id && !nodes[k].kind) {
				nodes[k].status = (int)sked__res_int(&r, i, 1);
				nodes[k].kind = sked__res_dup(&r, i, 2, &nomem);
			}
		if (nomem)
			rc = sked__fail(h, SKED_ENOMEM, "out of memory");
	}
	sked__res_clear(&r);
	return rc;
}

SKED_API void
sked_task_states_clear(sked_graph_node *nodes, size_t n)
{
	for (size_t i = 0; nodes && i < n; i++) {
		free(nodes[i].kind);
		nodes[i].kind = NULL;
	}
}

SKED_API int
sked_task_states(sked *h, const int64_t *ids, size_t n, sked_graph_node *out)
{
	if (!h || (n && (!ids || !out)))
		return SKED_EINVAL;
	if (n > SKED_GRAPH_MAX)
		return sked__fail(h, SKED_EINVAL,
		                  "the states of at most %d tasks at once, not "
		                  "%zu",
		                  SKED_GRAPH_MAX, n);
	if (n == 0)
		return SKED_OK;
	int rc = fill_nodes(h, ids, out, n);
	if (rc != SKED_OK)
		sked_task_states_clear(out, n);
	return rc;
}

SKED_API void
sked_task_graph_free(sked_task_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		free(g->nodes[i].kind);
	free(g->nodes);
	free(g->edges);
	memset(g, 0, sizeof *g);
}

SKED_API int
sked_task_graph_get(sked *h, int64_t id, size_t max_nodes, sked_task_graph *g)
{
	struct ids set = {0}, up = {0}, down = {0}, left = {0};
	sked_res r = {0};
	int rc = SKED_OK;

	if (!h || !g)
		return SKED_EINVAL;
	memset(g, 0, sizeof *g);
	if (id <= 0 || max_nodes < 1 || max_nodes > SKED_GRAPH_MAX)
		return sked__fail(h, SKED_EINVAL,
		                  "a workflow of 1 to %d tasks, not %zu",
		                  SKED_GRAPH_MAX, max_nodes);
	if (ids_add(&set, id) || ids_add(&up, id) || ids_add(&down, id)) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	/* a full set still reads the next layer once, to count what was
	 * left out */
	while (rc == SKED_OK && (up.n || down.n)) {
		int full = set.n >= max_nodes;
		if (up.n)
			rc = layer(h, up_sql, &set, &up, max_nodes, &left);
		if (rc == SKED_OK && down.n)
			rc = layer(h, down_sql, &set, &down, max_nodes, &left);
		if (full)
			break;
	}
	if (rc != SKED_OK)
		goto out;
	if (left.n) {
		qsort(left.v, left.n, sizeof *left.v, sked__cmp_i64);
		g->more = 1;
		for (size_t i = 1; i < left.n; i++)
			g->more += left.v[i] != left.v[i - 1];
	}
	g->nodes = calloc(set.n, sizeof *g->nodes);
	if (!g->nodes) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	g->n = set.n;
	if ((rc = fill_nodes(h, set.v, g->nodes, set.n)) != SKED_OK)
		goto out;
	if ((rc = read_over(h, edges_sql, set.v, set.n, &r)) != SKED_OK)
		goto out;
	if (r.nrows > 0 &&
	    !(g->edges = calloc((size_t)r.nrows, sizeof *g->edges))) {
		rc = sked__fail(h, SKED_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < r.nrows; i++) {
		g->edges[g->nedges][0] = sked__res_int(&r, i, 0);
		g->edges[g->nedges][1] = sked__res_int(&r, i, 1);
		g->nedges++;
	}
out:
	sked__res_clear(&r);
	free(set.v);
	free(up.v);
	free(down.v);
	free(left.v);
	if (rc != SKED_OK)
		sked_task_graph_free(g);
	return rc;
}
