/*
 * fuzz_graph.c — a fuzz target for the workflow file that `sked enqueue
 * --graph` and POST /api/graphs read (cli/view/graph_json.c over
 * jansson): anyone who may enqueue may send it anything. Oracles, beyond
 * the sanitizers (leaks included): a graph read holds 1 to
 * SKED_MAX_GRAPH_TASKS tasks, each with a kind and its options, parents
 * in the graph as indexes inside it and existing parents as ids from 1,
 * at most SKED_MAX_PARENTS in all; the ids' JSON names every task; a
 * refusal is one line. Input: the file's bytes. Built as a libFuzzer
 * program with -DSKED_LIBFUZZER (`make fuzz`) and as a plain program
 * replaying tests/fuzz/corpus/graph.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
finding(const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "graph: %s in '%.*s'\n", what,
	        (int)(size > 200 ? 200 : size), (const char *)data);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *root =
	        json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return 0;
	struct cli_graph g;
	char err[512] = "";
	int rc = cli_graph_parse(root, &g, err, sizeof err);
	if (rc != 0) {
		if (!err[0] || strchr(err, '\n'))
			finding("a refusal that is not one line", data, size);
		json_decref(root);
		return 0;
	}
	if (g.n < 1 || g.n > SKED_MAX_GRAPH_TASKS)
		finding("a graph of no task or too many", data, size);
	for (size_t i = 0; i < g.n; i++) {
		const sked_graph_task *t = &g.tasks[i];
		if (!t->kind || !t->opts)
			finding("a task without a kind or options", data, size);
		if (t->n_after_index + t->opts->n_after > SKED_MAX_PARENTS)
			finding("a task with too many parents", data, size);
		for (size_t k = 0; k < t->n_after_index; k++)
			if (t->after_index[k] >= g.n)
				finding("a parent index outside the graph", data,
				        size);
		for (size_t k = 0; k < t->opts->n_after; k++)
			if (t->opts->after[k] < 1)
				finding("an existing parent id below 1", data,
				        size);
	}
	int64_t *ids = calloc(g.n, sizeof *ids);
	if (ids) {
		json_t *names = cli_graph_ids_json(&g, ids);
		if (names && json_object_size(names) != g.n)
			finding("ids that do not name every task", data, size);
		json_decref(names);
		free(ids);
	}
	cli_graph_free(&g);
	json_decref(root);
	return 0;
}

#include "fuzz_main.h"
