/*
 * cmd_nodes.h — what cmd_nodes.c lends cmd_inspect.c's `nodes` and
 * `stats`.
 *
 * Layer: the one-shot commands (cli/cmd/), a client of <sked.h> only.
 */
#ifndef SKED_CLI_CMD_NODES_H
#define SKED_CLI_CMD_NODES_H

#include "base/cli.h"

/* `sked nodes --prune [--older-than D]`; the oldest due age of queue
 * (NULL: of any queue) in g, 0 when none is due. */
int cli_nodes_prune(struct cli *c, int argc, char **argv);
int64_t cli_oldest_due_ms(const sked_cluster_gauges *g, const char *queue);

#endif /* SKED_CLI_CMD_NODES_H */
