/*
 * dashboard_graph.c — the picture of a task's workflow on its page
 * (/task/ID): the task, its ancestors and descendants (at most
 * GRAPH_NODES, "at least N more" beyond), drawn as an SVG the server
 * renders: each task a box coloured by its status (app.css, .graph) and
 * a link to its page, each edge an arrow from parent to child, in layers
 * by the longest path from the roots, left to right.
 *
 * Server-side SVG, not a JavaScript library: the page stays whole
 * without JavaScript, the CSP needs no exception, nothing is vendored,
 * and the live update (app.js) swaps it as any other part of the page.
 * The layout is a plain layered one (one ordering pass by the parents'
 * mean position); a workflow too tangled for it still shows every
 * task, link and status, which is what the page is for.
 *
 * Layer: the command-line program, a client of <sked.h> only; called by
 * dashboard_tasks.c, calls the renderer (templates/task.html).
 */
#include "web/dashboard/dashboard_int.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_NODES 200 /* tasks drawn at most */
#define NODE_W      150
#define NODE_H      34
#define GAP_X       56
#define GAP_Y       12
#define PAD         8
#define KIND_SHOWN  17 /* bytes of a kind in a box */

struct gnode {
	int64_t id;
	int status;
	const char *kind;
	int layer, pos;
	double key; /* the parents' mean position, to order a layer */
};

static int
by_layer_key(const void *a, const void *b)
{
	const struct gnode *x = *(struct gnode *const *)a,
	                   *y = *(struct gnode *const *)b;
	if (x->layer != y->layer)
		return x->layer - y->layer;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int
index_of(const struct gnode *v, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return (int)i;
	return -1;
}

/* a kind cut to fit a box, never inside a UTF-8 sequence */
static void
short_kind(const char *k, char *out, size_t len)
{
	size_t n = strlen(k);

	if (n <= KIND_SHOWN || len < KIND_SHOWN + 4) {
		snprintf(out, len, "%s", k);
		return;
	}
	n = KIND_SHOWN;
	while (n > 0 && ((unsigned char)k[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, k, n);
	memcpy(out + n, "…", 4); /* with its NUL */
}

/* Layers: the longest path from a root of the drawn graph; then each
 * layer ordered by its parents' mean position, then by id. */
static int
lay_out(struct gnode *v, size_t n, int (*e)[2], size_t ne, int *nlayers,
        int *tallest)
{
	struct gnode **order = malloc(n * sizeof *order);
	int *count;

	if (!order)
		return -1;
	for (size_t round = 0, moved = 1; moved && round <= n; round++) {
		moved = 0;
		for (size_t i = 0; i < ne; i++)
			if (v[e[i][1]].layer < v[e[i][0]].layer + 1) {
				v[e[i][1]].layer = v[e[i][0]].layer + 1;
				moved = 1;
			}
	}
	*nlayers = 1;
	for (size_t i = 0; i < n; i++)
		if (v[i].layer + 1 > *nlayers)
			*nlayers = v[i].layer + 1;
	count = calloc((size_t)*nlayers, sizeof *count);
	if (!count) {
		free(order);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = &v[i];
	/* layer by layer: a layer's keys come from the one placed before */
	for (int l = 0; l < *nlayers; l++) {
		for (size_t i = 0; i < n; i++) {
			double sum = 0;
			int np = 0;
			if (v[i].layer != l)
				continue;
			for (size_t k = 0; k < ne; k++)
				if (e[k][1] == (int)i && v[e[k][0]].layer < l) {
					sum += v[e[k][0]].pos;
					np++;
				}
			v[i].key = np ? sum / np : 0;
		}
		qsort(order, n, sizeof *order, by_layer_key);
		for (size_t i = 0; i < n; i++)
			if (order[i]->layer == l)
				order[i]->pos = count[l]++;
	}
	*tallest = 1;
	for (int l = 0; l < *nlayers; l++)
		if (count[l] > *tallest)
			*tallest = count[l];
	free(count);
	free(order);
	return 0;
}

void
dash_graph_panel(struct dash *d, struct cli_sbuf *b, int64_t id)
{
	sked_task_graph g;
	struct gnode *v = NULL;
	int(*e)[2] = NULL;
	size_t ne = 0;
	int nlayers = 1, tallest = 1;

	if (sked_task_graph_get(d->h, id, GRAPH_NODES, &g) != SKED_OK) {
		TPL0(b, "task.graph_error");
		return;
	}
	if (g.n < 2) { /* no parents, no children: nothing to draw */
		sked_task_graph_free(&g);
		return;
	}
	v = calloc(g.n, sizeof *v);
	e = calloc(g.nedges ? g.nedges : 1, sizeof *e);
	if (!v || !e) {
		TPL0(b, "task.graph_error");
		goto out;
	}
	for (size_t i = 0; i < g.n; i++)
		v[i] = (struct gnode){.id = g.nodes[i].id,
		                      .status = g.nodes[i].status,
		                      .kind = DASH_S(g.nodes[i].kind)};
	for (size_t i = 0; i < g.nedges; i++) {
		int p = index_of(v, g.n, g.edges[i][0]),
		    c = index_of(v, g.n, g.edges[i][1]);
		if (p >= 0 && c >= 0 && p != c) {
			e[ne][0] = p;
			e[ne][1] = c;
			ne++;
		}
	}
	if (lay_out(v, g.n, e, ne, &nlayers, &tallest) != 0) {
		TPL0(b, "task.graph_error");
		goto out;
	}
	int w = 2 * PAD + nlayers * NODE_W + (nlayers - 1) * GAP_X;
	int h = 2 * PAD + tallest * NODE_H + (tallest - 1) * GAP_Y;
	TPL(b, "task.graph", {"n", TPL_INT(g.n)}, {"width", TPL_INT(w)},
	    {"height", TPL_INT(h)}, {"id", TPL_INT(id)});
	for (size_t i = 0; i < ne; i++) {
		const struct gnode *p = &v[e[i][0]], *c = &v[e[i][1]];
		int x1 = PAD + p->layer * (NODE_W + GAP_X) + NODE_W;
		int y1 = PAD + p->pos * (NODE_H + GAP_Y) + NODE_H / 2;
		int x2 = PAD + c->layer * (NODE_W + GAP_X) - 4;
		int y2 = PAD + c->pos * (NODE_H + GAP_Y) + NODE_H / 2;
		int mx = (x1 + x2) / 2;
		TPL(b, "task.graph_edge", {"from", TPL_INT(p->id)},
		    {"to", TPL_INT(c->id)}, {"x1", TPL_INT(x1)},
		    {"y1", TPL_INT(y1)}, {"mx", TPL_INT(mx)},
		    {"x2", TPL_INT(x2)}, {"y2", TPL_INT(y2)});
	}
	for (size_t i = 0; i < g.n; i++) {
		const struct gnode *n = &v[i];
		const char *st =
		        n->status >= 0 ? sked_status_name(n->status) : "pruned";
		char kind[KIND_SHOWN + 8];
		int x = PAD + n->layer * (NODE_W + GAP_X);
		int y = PAD + n->pos * (NODE_H + GAP_Y);
		short_kind(n->kind, kind, sizeof kind);
		TPL(b, "task.graph_node", {"id", TPL_INT(n->id)},
		    {"status", st}, {"self", n->id == id ? " self" : ""},
		    {"x", TPL_INT(x)}, {"y", TPL_INT(y)},
		    {"w", TPL_INT(NODE_W)}, {"h", TPL_INT(NODE_H)},
		    {"tx", TPL_INT(x + 8)}, {"ty1", TPL_INT(y + 14)},
		    {"ty2", TPL_INT(y + 28)}, {"kind", kind},
		    {"full_kind", n->kind});
	}
	TPL0(b, "task.graph_end");
	if (g.more)
		TPL(b, "task.graph_more", {"more", TPL_INT(g.more)},
		    {"shown", TPL_INT(g.n)});
	TPL0(b, "layout.div_end");
out:
	free(v);
	free(e);
	sked_task_graph_free(&g);
}
