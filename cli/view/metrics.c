/*
 * metrics.c — the cluster-wide gauges in the Prometheus text format, for
 * every process that serves /metrics: a worker (`--http`, worker_ops.c, beside
 * its own per-worker series) and the dashboard (dashboard.c), which
 * serves only these, so they are there while every worker is down.
 *
 * Layer: the command-line program, a client of <sked.h> only. One scrape
 * costs one statement for the gauges, one for the queue limits and two
 * for the due work no live node serves, on the caller's connection,
 * under the caller's mutex.
 */
#include "view/metrics.h"

#include <pthread.h>
#include <stdio.h>

void
cli_prom_family(struct cli_sbuf *b, const char *name, const char *type,
                const char *help)
{
	cli_sbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	                type);
}

/* a label value: \ " and newline escaped */
void
cli_prom_label(struct cli_sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			cli_sbuf_put(b, "\\", 1);
		if (*s == '\n')
			cli_sbuf_puts(b, "\\n");
		else
			cli_sbuf_put(b, s, 1);
	}
}

/* Queue limits: each limit that is set, and how much of it is in use
 * (running tasks; keys at their per-key limit; starts in the rate's
 * window); and which queues are paused. */
static void
render_limits(struct cli_sbuf *b, const sked_queue_info *q, size_t n)
{
	static const char *const kinds[] = {"concurrency", "per_key", "rate"};
	cli_prom_family(
	        b, "sked_queue_limit", "gauge",
	        "A queue's cluster-wide limit, by kind (rate: starts per "
	        "window).");
	for (size_t i = 0; i < n; i++) {
		const int v[3] = {q[i].concurrency, q[i].per_key, q[i].rate_n};
		for (int k = 0; k < 3; k++) {
			if (v[k] <= 0)
				continue;
			cli_sbuf_puts(b, "sked_queue_limit{queue=\"");
			cli_prom_label(b, q[i].queue);
			cli_sbuf_printf(b, "\",limit=\"%s\"} %d\n", kinds[k],
			                v[k]);
		}
	}
	cli_prom_family(
	        b, "sked_queue_limit_used", "gauge",
	        "How much of a queue's limit is in use: running tasks "
	        "(concurrency), keys at their limit (per_key), starts in "
	        "the current window (rate).");
	for (size_t i = 0; i < n; i++) {
		const int v[3] = {q[i].concurrency, q[i].per_key, q[i].rate_n};
		const int u[3] = {q[i].running, q[i].keys_full, q[i].rate_used};
		for (int k = 0; k < 3; k++) {
			if (v[k] <= 0)
				continue;
			cli_sbuf_puts(b, "sked_queue_limit_used{queue=\"");
			cli_prom_label(b, q[i].queue);
			cli_sbuf_printf(b, "\",limit=\"%s\"} %d\n", kinds[k],
			                u[k]);
		}
	}
	cli_prom_family(b, "sked_queue_paused", "gauge",
	                "1 while a queue is paused (sked queue pause), 0 for "
	                "the other queues with limits or running tasks.");
	for (size_t i = 0; i < n; i++) {
		cli_sbuf_puts(b, "sked_queue_paused{queue=\"");
		cli_prom_label(b, q[i].queue);
		cli_sbuf_printf(b, "\"} %d\n", q[i].paused ? 1 : 0);
	}
	cli_prom_family(b, "sked_queue_limit_window_seconds", "gauge",
	                "The window of a queue's rate limit.");
	for (size_t i = 0; i < n; i++) {
		if (q[i].rate_n <= 0)
			continue;
		cli_sbuf_puts(b, "sked_queue_limit_window_seconds{queue=\"");
		cli_prom_label(b, q[i].queue);
		cli_sbuf_printf(b, "\"} %.3f\n",
		                (double)q[i].rate_window_ms / 1000);
	}
}

void
cli_metrics_cluster(sked *h, pthread_mutex_t *mu, struct cli_sbuf *b)
{
	sked_cluster_gauges g;
	sked_queue_info *lq = NULL; /* queue limits (docs/limits.md) */
	size_t nlq = 0;
	sked_unserved *un = NULL; /* why work waits (docs/operations.md) */
	size_t nun = 0;
	int64_t t0 = cli_mono_ms();
	int rc;

	pthread_mutex_lock(mu);
	rc = sked_cluster_gauges_get(h, &g);
	if (rc != SKED_OK)
		sked_log(SKED_LOG_WARN, "metrics: %s", sked_errmsg(h));
	else if (sked_queue_list(h, &lq, &nlq) != SKED_OK)
		sked_log(SKED_LOG_WARN, "metrics: %s", sked_errmsg(h));
	if (rc == SKED_OK && sked_unserved_get(h, &un, &nun) != SKED_OK)
		sked_log(SKED_LOG_WARN, "metrics: %s", sked_errmsg(h));
	pthread_mutex_unlock(mu);
	cli_prom_family(
	        b, "sked_up", "gauge",
	        "1 when this scrape could read the cluster gauges from the "
	        "database.");
	cli_sbuf_printf(b, "sked_up %d\n", rc == SKED_OK);
	cli_prom_family(b, "sked_scrape_duration_seconds", "gauge",
	                "How long the cluster query of this scrape took.");
	cli_sbuf_printf(b, "sked_scrape_duration_seconds %.3f\n",
	                (double)(cli_mono_ms() - t0) / 1000);
	if (rc != SKED_OK)
		return;
	cli_prom_family(b, "sked_tasks", "gauge",
	                "Unfinished tasks in the cluster by queue and status.");
	for (size_t i = 0; i < g.nqueues; i++) {
		const sked_queue_gauge *q = &g.queues[i];
		const struct {
			const char *st;
			int64_t v;
		} rows[] = {{"pending", q->pending},
		            {"retry", q->retrying},
		            {"running", q->running},
		            {"blocked", q->blocked}};
		for (size_t k = 0; k < 4; k++) {
			cli_sbuf_puts(b, "sked_tasks{queue=\"");
			cli_prom_label(b, q->queue);
			cli_sbuf_printf(b, "\",status=\"%s\"} %lld\n",
			                rows[k].st, (long long)rows[k].v);
		}
	}
	cli_prom_family(
	        b, "sked_tasks_due", "gauge",
	        "Tasks pending or waiting to retry whose run-at time has come, "
	        "by queue.");
	for (size_t i = 0; i < g.nqueues; i++) {
		cli_sbuf_puts(b, "sked_tasks_due{queue=\"");
		cli_prom_label(b, g.queues[i].queue);
		cli_sbuf_printf(b, "\"} %lld\n", (long long)g.queues[i].due);
	}
	cli_prom_family(
	        b, "sked_queue_oldest_due_age_seconds", "gauge",
	        "How long the oldest due task of each queue has been waiting "
	        "(0 when none is due).");
	for (size_t i = 0; i < g.nqueues; i++) {
		cli_sbuf_puts(b, "sked_queue_oldest_due_age_seconds{queue=\"");
		cli_prom_label(b, g.queues[i].queue);
		cli_sbuf_printf(b, "\"} %.3f\n",
		                (double)g.queues[i].oldest_due_age_ms / 1000);
	}
	cli_prom_family(b, "sked_nodes", "gauge", "Worker nodes registered.");
	cli_sbuf_printf(b, "sked_nodes %lld\n", (long long)g.nodes);
	cli_prom_family(
	        b, "sked_nodes_alive", "gauge",
	        "Worker nodes whose heartbeat is younger than their lease.");
	cli_sbuf_printf(b, "sked_nodes_alive %lld\n", (long long)g.nodes_alive);
	cli_prom_family(b, "sked_schedules", "gauge",
	                "Schedules in the cluster, active and paused.");
	cli_sbuf_printf(b,
	                "sked_schedules{state=\"active\"} %lld\n"
	                "sked_schedules{state=\"paused\"} %lld\n",
	                (long long)(g.schedules - g.schedules_paused),
	                (long long)g.schedules_paused);
	cli_prom_family(
	        b, "sked_locks", "gauge",
	        "Cluster locks ever taken, and those held by an owner now.");
	cli_sbuf_printf(b,
	                "sked_locks{state=\"held\"} %lld\n"
	                "sked_locks{state=\"free\"} %lld\n",
	                (long long)g.locks_held,
	                (long long)(g.locks - g.locks_held));
	cli_prom_family(
	        b, "sked_kind_unserved", "gauge",
	        "Due tasks of a queue and kind that no live node has both a "
	        "handler and the queue for (absent: every due task is "
	        "served).");
	for (size_t i = 0; i < nun; i++) {
		cli_sbuf_puts(b, "sked_kind_unserved{queue=\"");
		cli_prom_label(b, un[i].queue);
		cli_sbuf_puts(b, "\",kind=\"");
		cli_prom_label(b, un[i].kind);
		cli_sbuf_printf(b, "\"} %lld\n", (long long)un[i].due);
	}
	sked_unserved_free(un);
	sked_cluster_gauges_free(&g);
	render_limits(b, lq, nlq);
	sked_queue_info_free(lq, nlq);
}
