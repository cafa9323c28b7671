/*
 * worker_ops.h — a worker's operations side: `worker --http` (metrics, health),
 * systemd notifications, and what SIGHUP reloads.
 *
 * Layer: the command-line program (cmd_worker.c calls it). One thread
 * watches the worker through sked_worker_get_metrics and talks to systemd;
 * the HTTP server answers on threads of its own, with a database
 * connection of its own, so a scrape never touches the worker's
 * connections. See docs/operations.md.
 */
#ifndef SKED_CLI_OPS_H
#define SKED_CLI_OPS_H

#include "base/cli.h"

struct cli_ops;

/* Start watching w (not yet running). listen: "ADDR:PORT" for the HTTP
 * endpoint, or NULL. Returns 0, or a sysexits code after one line. */
int cli_ops_start(struct cli *c, sked_worker *w, const char *listen,
                  struct cli_ops **out);
/* Stop the thread and the server; NULL-safe. */
void cli_ops_stop(struct cli_ops *o);

/* Async-signal-safe: a SIGHUP arrived; the worker was asked to stop. */
void cli_ops_hup(void);
void cli_ops_stopping(void);

#endif /* SKED_CLI_OPS_H */
