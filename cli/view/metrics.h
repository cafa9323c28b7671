/*
 * metrics.h — the Prometheus text format of the cluster-wide gauges
 * (metrics.c), shared by a worker's /metrics (worker_ops.c) and the dashboard's
 * (dashboard.c). docs/operations.md lists the families.
 */
#ifndef SKED_CLI_METRICS_H
#define SKED_CLI_METRICS_H

#include <pthread.h>

#include "base/cli.h"
#include "http/http.h"

/* "# HELP name help" and "# TYPE name type" */
void cli_prom_family(struct cli_sbuf *b, const char *name, const char *type,
                     const char *help);
/* a label value, with \ " and newline escaped */
void cli_prom_label(struct cli_sbuf *b, const char *s);

/* sked_up, sked_scrape_duration_seconds and, when the database answered,
 * sked_tasks, sked_tasks_due, sked_queue_oldest_due_age_seconds,
 * sked_nodes, sked_nodes_alive, sked_schedules, sked_locks and the queue
 * limits, read on h with mu held. */
void cli_metrics_cluster(sked *h, pthread_mutex_t *mu, struct cli_sbuf *b);

#endif /* SKED_CLI_METRICS_H */
