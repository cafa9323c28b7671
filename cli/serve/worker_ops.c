/*
 * worker_ops.c — a worker's operations side: GET /metrics, /healthz, /readyz,
 * sd_notify, and the SIGHUP reload.
 *
 * Layer: the command-line program (see worker_ops.h). The numbers come from two
 * places: sked_worker_get_metrics (this worker's own counters, no SQL) and
 * sked_cluster_gauges_get (one statement per scrape, on this file's own
 * connection, guarded by db_mu). /healthz reads no database at all: it
 * judges the worker's loops by when each last made progress, so it answers
 * even while the database does not. /readyz asks the database for its
 * clock.
 *
 * Threads: the watcher (ops_main) wakes every 100 ms; the HTTP server
 * runs a thread per connection. db_mu guards the connection o->h and is
 * taken with a time limit by /readyz, so a scrape stuck on a lock makes
 * readiness fail instead of hanging.
 */
#include "serve/worker_ops.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "http/http.h"
#include "view/metrics.h"
#include "view/view.h"

#ifdef SKED_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

/* set by signal handlers on the main thread, read by the ops thread:
 * lock-free atomics, safe in a handler and between threads alike; and
 * the eventfd that wakes the ops thread for them (a write is
 * async-signal-safe), so an idle worker's ops thread sleeps until its
 * next status line instead of looking 10 times a second */
static atomic_int g_hup, g_stopping;
static atomic_int g_ops_fd = -1;

static void
ops_ring(void)
{
	int fd = atomic_load(&g_ops_fd);
	uint64_t one = 1;
	if (fd >= 0 && write(fd, &one, sizeof one) < 0) {
		/* full or closed: the thread wakes anyway */
	}
}

struct cli_ops {
	struct cli *c;
	sked_worker *w;
	sked *h; /* own connection: metrics, readiness, reload; opened on
	            first use (ops_conn), NULL until then or while refused */
	int64_t h_retry_ms; /* db_mu: no new try before this (monotonic) */
	int h_refused;      /* db_mu: the last try failed (logged once) */
	pthread_mutex_t db_mu;
	struct cli_http *http;
	pthread_t thread;
	int started;
	atomic_int exit; /* set by the main thread before the join, read by
	                  * the ops thread: atomic (volatile is a data race) */
	char strategy[16];
	const char *token; /* SKED_METRICS_TOKEN: /metrics wants it, or NULL */
};

void
cli_ops_hup(void)
{
	atomic_store(&g_hup, 1);
	ops_ring();
}

/* The operations side's own connection, opened the first time a scrape,
 * a readiness probe or a reload needs it (db_mu held), not at start: an
 * idle worker keeps to its two connections (docs/design.md, "Fleets"),
 * and a server that refuses one more client never stops the worker. A
 * refusal is logged once, then tried again at most every 5 s; NULL
 * meanwhile. */
static sked *
ops_conn(struct cli_ops *o)
{
	sked_options so;
	int64_t now = cli_mono_ms();
	int rc;

	if (o->h != NULL || now < o->h_retry_ms)
		return o->h;
	memset(&so, 0, sizeof so);
	so.strategy = o->c->strategy;
	so.prefix = o->c->prefix;
	rc = sked_open(o->c->url, &so, &o->h);
	if (rc == SKED_OK) {
		if (o->h_refused)
			sked_log(SKED_LOG_INFO,
			         "worker: the metrics connection "
			         "is open again");
		o->h_refused = 0;
		return o->h;
	}
	if (!o->h_refused)
		sked_log(SKED_LOG_WARN,
		         "worker: no connection for /metrics, /readyz and "
		         "reloads (%s); the worker goes on, tried again at "
		         "most every 5 s",
		         o->h ? sked_errmsg(o->h) : sked_strerror(rc));
	o->h_refused = 1;
	sked_close(o->h);
	o->h = NULL;
	o->h_retry_ms = now + 5000;
	return NULL;
}

void
cli_ops_stopping(void)
{
	atomic_store(&g_stopping, 1);
	ops_ring();
}

/* ---- health ---- */

/* A loop is stale when it made no progress for one lease (at least two
 * idle polls and a second): renewals come every lease/3, claims at least
 * every poll. */
static int64_t
stale_ms(const sked_worker_metrics *m)
{
	int64_t lim = m->lease_ms > 0 ? m->lease_ms : 30000;
	int64_t polls = 2 * (m->poll_ms > 0 ? m->poll_ms : 1000) + 1000;
	return lim > polls ? lim : polls;
}

/* 1 when healthy; why gets one line either way. */
static int
judge(const sked_worker_metrics *m, char *why, size_t len)
{
	int64_t lim = stale_ms(m);
	struct {
		const char *name;
		int64_t age;
	} loops[] = {{"claim loop", m->loop_age_ms},
	             {"heartbeat", m->beat_age_ms},
	             {"finisher", m->finish_age_ms}};

	if (!m->running) {
		snprintf(why, len, "worker not running (starting or stopping)");
		return 0;
	}
	for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
		if (loops[i].age > lim) {
			snprintf(why, len,
			         "%s made no progress for %.1fs (limit %.1fs)",
			         loops[i].name, (double)loops[i].age / 1000,
			         (double)lim / 1000);
			return 0;
		}
	snprintf(why, len,
	         "claim loop %.1fs, heartbeat %.1fs, finisher %.1fs ago",
	         (double)m->loop_age_ms / 1000, (double)m->beat_age_ms / 1000,
	         (double)m->finish_age_ms / 1000);
	return 1;
}

/* ---- the Prometheus text format (the families: metrics.c) ---- */

static void
histogram(struct cli_sbuf *b, const char *name, const char *lname,
          const char *lval, const sked_hist *hg)
{
	int64_t cum = 0;
	struct cli_sbuf l = {0};

	if (lname) {
		cli_sbuf_printf(&l, "%s=\"", lname);
		cli_prom_label(&l, lval);
		cli_sbuf_puts(&l, "\",");
	}
	for (int i = 0; i <= SKED_HIST_BUCKETS; i++) {
		cum += hg->bucket[i];
		if (i < SKED_HIST_BUCKETS)
			cli_sbuf_printf(b, "%s_bucket{%sle=\"%g\"} %lld\n",
			                name, l.p ? l.p : "",
			                sked_hist_bound(i), (long long)cum);
		else
			cli_sbuf_printf(b, "%s_bucket{%sle=\"+Inf\"} %lld\n",
			                name, l.p ? l.p : "", (long long)cum);
	}
	if (l.p)
		l.p[l.len - 1] = '\0'; /* drop the trailing comma */
	cli_sbuf_printf(b, "%s_sum%s%s%s %.6f\n", name, l.p ? "{" : "",
	                l.p ? l.p : "", l.p ? "}" : "", hg->sum_s);
	cli_sbuf_printf(b, "%s_count%s%s%s %lld\n", name, l.p ? "{" : "",
	                l.p ? l.p : "", l.p ? "}" : "", (long long)hg->count);
	cli_sbuf_free(&l);
}

static void
render_worker(struct cli_ops *o, const sked_worker_metrics *m,
              struct cli_sbuf *b)
{
	char why[256];
	static const char *const outcomes[] = {"succeeded", "failed", "dead",
	                                       "late", "released"};

	cli_prom_family(b, "sked_info", "gauge",
	                "This worker: sked version, node id and claim strategy "
	                "(always 1).");
	cli_sbuf_printf(b, "sked_info{version=\"%s\",node=\"", SKED_VERSION);
	cli_prom_label(b, sked_worker_node_id(o->w));
	cli_sbuf_puts(b, "\",strategy=\"");
	cli_prom_label(b, o->strategy);
	cli_sbuf_puts(b, "\"} 1\n");
	cli_prom_family(
	        b, "sked_worker_healthy", "gauge",
	        "1 while the claim loop, heartbeat and finisher make progress "
	        "(what /healthz answers).");
	cli_sbuf_printf(b, "sked_worker_healthy %d\n",
	                judge(m, why, sizeof why));
	cli_prom_family(
	        b, "sked_worker_progress_age_seconds", "gauge",
	        "Time since each of the worker's loops last made progress.");
	cli_sbuf_printf(b,
	                "sked_worker_progress_age_seconds{loop=\"claim\"} "
	                "%.3f\n"
	                "sked_worker_progress_age_seconds{loop=\"heartbeat\"} "
	                "%.3f\n"
	                "sked_worker_progress_age_seconds{loop=\"finisher\"} "
	                "%.3f\n",
	                (double)m->loop_age_ms / 1000,
	                (double)m->beat_age_ms / 1000,
	                (double)m->finish_age_ms / 1000);
	cli_prom_family(b, "sked_worker_slots", "gauge",
	                "Handler slots of this worker, busy (a handler runs) "
	                "and free.");
	cli_sbuf_printf(b,
	                "sked_worker_slots{state=\"busy\"} %d\n"
	                "sked_worker_slots{state=\"free\"} %d\n",
	                m->busy, m->slots > m->busy ? m->slots - m->busy : 0);
	cli_prom_family(b, "sked_worker_tasks_held_ahead", "gauge",
	                "Tasks claimed and waiting for a free thread "
	                "(prefetch).");
	cli_sbuf_printf(b, "sked_worker_tasks_held_ahead %d\n", m->held);
	cli_prom_family(b, "sked_worker_results_unrecorded", "gauge",
	                "Results waiting for the finisher to record them.");
	cli_sbuf_printf(b, "sked_worker_results_unrecorded %d\n",
	                m->unrecorded);
	cli_prom_family(b, "sked_worker_tasks_claimed_total", "counter",
	                "Tasks this worker claimed.");
	cli_sbuf_printf(b, "sked_worker_tasks_claimed_total %lld\n",
	                (long long)m->c.claimed);
	cli_prom_family(
	        b, "sked_worker_tasks_finished_total", "counter",
	        "Attempts this worker recorded, by kind and outcome (late: "
	        "the lease had passed to another owner; released: given back "
	        "on shutdown).");
	for (size_t i = 0; i < m->nkinds; i++) {
		const sked_worker_kind_metrics *k = &m->kinds[i];
		const int64_t v[] = {k->succeeded, k->failed, k->dead, k->late,
		                     k->released};
		for (size_t j = 0; j < 5; j++) {
			cli_sbuf_puts(
			        b, "sked_worker_tasks_finished_total{kind=\"");
			cli_prom_label(b, k->kind);
			cli_sbuf_printf(b, "\",outcome=\"%s\"} %lld\n",
			                outcomes[j], (long long)v[j]);
		}
	}
	cli_prom_family(b, "sked_worker_handler_duration_seconds", "histogram",
	                "How long handlers ran, by kind.");
	for (size_t i = 0; i < m->nkinds; i++)
		histogram(b, "sked_worker_handler_duration_seconds", "kind",
		          m->kinds[i].kind, &m->kinds[i].handler);
	cli_prom_family(b, "sked_worker_claim_duration_seconds", "histogram",
	                "How long each claim statement (one batch) took.");
	histogram(b, "sked_worker_claim_duration_seconds", NULL, NULL,
	          &m->claim);
	cli_prom_family(
	        b, "sked_worker_lease_renewals_total", "counter",
	        "Heartbeats that renewed every lease this worker holds.");
	cli_sbuf_printf(b, "sked_worker_lease_renewals_total %lld\n",
	                (long long)m->renewals);
	cli_prom_family(
	        b, "sked_worker_leases_lost_total", "counter",
	        "Running tasks this worker found it no longer held (cancelled "
	        "or taken over) and stopped.");
	cli_sbuf_printf(b, "sked_worker_leases_lost_total %lld\n",
	                (long long)m->c.lost);
	sked_process_counters pc;
	sked_process_counters_get(&pc);
	cli_prom_family(
	        b, "sked_schedule_fires_total", "counter",
	        "Tasks this process made from schedules (each fire is claimed "
	        "by one node in the cluster).");
	cli_sbuf_printf(b, "sked_schedule_fires_total %lld\n",
	                (long long)pc.schedule_fires);
	cli_prom_family(
	        b, "sked_schedule_fires_skipped_total", "counter",
	        "Fires this process skipped because the schedule's previous "
	        "task was unfinished (overlap skip) or its unique key was "
	        "held.");
	cli_sbuf_printf(b, "sked_schedule_fires_skipped_total %lld\n",
	                (long long)pc.schedule_skips);
	cli_prom_family(
	        b, "sked_schedule_misfires_total", "counter",
	        "Schedules this process found past fire times they had missed "
	        "(downtime), handled by their misfire policy.");
	cli_sbuf_printf(b, "sked_schedule_misfires_total %lld\n",
	                (long long)pc.schedule_misfires);
	cli_prom_family(
	        b, "sked_lock_acquisitions_total", "counter",
	        "Cluster lock acquisitions by this process, by result.");
	cli_sbuf_printf(b,
	                "sked_lock_acquisitions_total{result=\"acquired\"} "
	                "%lld\n"
	                "sked_lock_acquisitions_total{result=\"busy\"} %lld\n",
	                (long long)pc.lock_acquisitions,
	                (long long)pc.lock_busy);
	cli_prom_family(
	        b, "sked_worker_db_errors_total", "counter",
	        "Database statements that failed, by what the worker was "
	        "doing.");
	cli_sbuf_printf(b,
	                "sked_worker_db_errors_total{op=\"claim\"} %lld\n"
	                "sked_worker_db_errors_total{op=\"renew\"} %lld\n"
	                "sked_worker_db_errors_total{op=\"finish\"} %lld\n",
	                (long long)m->claim_errors,
	                (long long)m->renewal_errors,
	                (long long)m->finish_errors);
	static const char *const conn[4] = {"claims", "finishes", "leases",
	                                    "pruner"};
	cli_prom_family(
	        b, "sked_worker_db_reconnects_total", "counter",
	        "New database connections after a lost one, by the worker's "
	        "connection, made and tried in vain.");
	for (int i = 0; i < 4; i++)
		cli_sbuf_printf(b,
		                "sked_worker_db_reconnects_total{conn=\"%s\","
		                "result=\"made\"} %lld\n"
		                "sked_worker_db_reconnects_total{conn=\"%s\","
		                "result=\"failed\"} %lld\n",
		                conn[i], (long long)m->reconnects[i], conn[i],
		                (long long)m->reconnect_failures[i]);
	static const char *const row[3] = {"schedule", "lock", "queue_limit"};
	cli_prom_family(
	        b, "sked_worker_lock_waits_total", "counter",
	        "Waits of this worker on a row of sked's own longer than "
	        "--lock-wait-warn, by row (each also logged once, with its "
	        "holder).");
	for (int i = 0; i < 3; i++)
		cli_sbuf_printf(b,
		                "sked_worker_lock_waits_total{row=\"%s\"} "
		                "%lld\n",
		                row[i], (long long)m->lock_waits[i]);
}

/* ---- the endpoints ---- */

static void
on_http(void *ud, const struct cli_http_request *rq, struct cli_http_reply *rp)
{
	struct cli_ops *o = ud;
	sked_worker_metrics m;
	char why[256];

	if (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0) {
		rp->status = 405;
		cli_sbuf_puts(&rp->body, "only GET\n");
		return;
	}
	if (strcmp(rq->path, "/metrics") == 0 && o->token) {
		const char *a = cli_http_header(rq, "Authorization");
		if (!a || strncmp(a, "Bearer ", 7) != 0 ||
		    !cli_http_same(a + 7, o->token)) {
			rp->status = 401;
			rp->www_authenticate = "Bearer realm=\"sked\"";
			cli_sbuf_puts(&rp->body, "a bearer token is required "
			                         "(SKED_METRICS_TOKEN)\n");
			return;
		}
	}
	if (strcmp(rq->path, "/metrics") == 0) {
		rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		if (sked_worker_get_metrics(o->w, &m) != SKED_OK) {
			rp->status = 500;
			cli_sbuf_puts(&rp->body, "out of memory\n");
			return;
		}
		render_worker(o, &m, &rp->body);
		sked_worker_metrics_free(&m);
		pthread_mutex_lock(&o->db_mu);
		sked *h = ops_conn(o);
		pthread_mutex_unlock(&o->db_mu);
		if (h != NULL) {
			cli_metrics_cluster(h, &o->db_mu, &rp->body);
		} else {
			cli_prom_family(&rp->body, "sked_up", "gauge",
			                "1 when this scrape could read the "
			                "cluster gauges from the database.");
			cli_sbuf_puts(&rp->body, "sked_up 0\n");
		}
		return;
	}
	if (strcmp(rq->path, "/healthz") == 0 ||
	    strcmp(rq->path, "/readyz") == 0) {
		int ok;
		if (sked_worker_get_metrics(o->w, &m) != SKED_OK) {
			rp->status = 500;
			cli_sbuf_puts(&rp->body, "out of memory\n");
			return;
		}
		ok = judge(&m, why, sizeof why);
		sked_worker_metrics_free(&m);
		if (ok && strcmp(rq->path, "/readyz") == 0) {
			struct timespec until;
			int64_t now;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 2;
			if (pthread_mutex_timedlock(&o->db_mu, &until) != 0) {
				ok = 0;
				snprintf(why, sizeof why,
				         "database: busy (a scrape is waiting "
				         "on it)");
			} else {
				sked *h = ops_conn(o);
				if (h == NULL) {
					ok = 0;
					snprintf(why, sizeof why,
					         "database: no connection");
				} else if (sked_now(h, &now) != SKED_OK) {
					ok = 0;
					snprintf(why, sizeof why,
					         "database: %s",
					         sked_errmsg(h));
				}
				pthread_mutex_unlock(&o->db_mu);
			}
		}
		rp->status = ok ? 200 : 503;
		cli_sbuf_printf(&rp->body, "%s: %s\n", ok ? "ok" : "unhealthy",
		                why);
		return;
	}
	if (strcmp(rq->path, "/") == 0) {
		cli_sbuf_puts(&rp->body, "sked worker: /metrics /healthz "
		                         "/readyz\n");
		return;
	}
	rp->status = 404;
	cli_sbuf_puts(&rp->body, "not found\n");
}

/* ---- SIGHUP ---- */

static int
same_handlers(const struct cli_config *a, const struct cli_config *b)
{
	if (a->nhandlers != b->nhandlers || a->concurrency != b->concurrency)
		return 0;
	for (size_t i = 0; i < a->nhandlers; i++)
		if (strcmp(a->handlers[i].kind, b->handlers[i].kind) != 0 ||
		    strcmp(a->handlers[i].command, b->handlers[i].command) !=
		            0 ||
		    a->handlers[i].timeout_ms != b->handlers[i].timeout_ms)
			return 0;
	return 1;
}

/* Read the config file again and add or replace its schedules; say in one
 * line what else changed and needs a restart. Never stops the worker. */
static void
reload(struct cli_ops *o)
{
	struct cli tmp;
	int ex;

	if (!o->c->cfg.path) {
		sked_log(SKED_LOG_INFO, "SIGHUP: no config file to reload; "
		                        "keeping running as started");
		return;
	}
	memset(&tmp, 0, sizeof tmp);
	if (cli_config_load(o->c->cfg.path, &tmp.cfg) != 0) {
		sked_log(
		        SKED_LOG_WARN,
		        "SIGHUP: %s not reloaded (see the line above); keeping "
		        "running as before",
		        o->c->cfg.path);
		cli_config_free(&tmp.cfg);
		return;
	}
	pthread_mutex_lock(&o->db_mu);
	tmp.h = ops_conn(o);
	ex = tmp.h ? cli_sync_schedules(&tmp) : EX_UNAVAILABLE;
	pthread_mutex_unlock(&o->db_mu);
	sked_log(ex == 0 ? SKED_LOG_INFO : SKED_LOG_WARN,
	         "SIGHUP: %s: %zu schedule(s) %s; %s", o->c->cfg.path,
	         tmp.cfg.nschedules, ex == 0 ? "reloaded" : "not reloaded",
	         same_handlers(&o->c->cfg, &tmp.cfg)
	                 ? "handlers and concurrency unchanged"
	                 : "changed handlers or concurrency take effect at "
	                   "the next start (running tasks are kept)");
	tmp.h = NULL;
	cli_config_free(&tmp.cfg);
}

/* ---- the watcher: systemd and SIGHUP ---- */

static void
notify(const char *state)
{
#ifdef SKED_HAVE_SYSTEMD
	sd_notify(0, state);
#else
	(void)state;
#endif
}

static void *
ops_main(void *arg)
{
	struct cli_ops *o = arg;
	sigset_t all;
	int ready = 0, stopping = 0;
	int64_t next_status = 0, next_dog = 0, dog_ms = 0;
	sked_worker_metrics m;
	char why[256], st[320];

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
#ifdef SKED_HAVE_SYSTEMD
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0)
		dog_ms = (int64_t)(usec / 2000); /* ping twice per period */
#endif
	int64_t wait_ms = 100;
	while (!o->exit) {
		/* until rung (a signal, the stop), else the next thing due:
		 * every 100 ms until the worker runs (READY=1), then the next
		 * status line or watchdog ping */
		struct pollfd pf = {.fd = atomic_load(&g_ops_fd),
		                    .events = POLLIN};
		if (poll(&pf, pf.fd >= 0 ? 1 : 0, (int)wait_ms) > 0) {
			uint64_t v;
			if (read(pf.fd, &v, sizeof v) < 0) {
				/* drained by another reader: nothing to do */
			}
		}
		int64_t now = cli_mono_ms();
		wait_ms = 100;
		if (ready) {
			int64_t due = next_status;
			if (dog_ms && next_dog < due)
				due = next_dog;
			wait_ms = due > now ? due - now : 1;
			if (wait_ms > 5000)
				wait_ms = 5000;
		}
		if (atomic_exchange(&g_hup, 0))
			reload(o);
		if (atomic_load(&g_stopping) && !stopping) {
			stopping = 1;
			notify("STOPPING=1\nSTATUS=stopping: running tasks "
			       "finish within the grace period");
		}
		if (stopping || sked_worker_get_metrics(o->w, &m) != SKED_OK)
			continue;
		int healthy = judge(&m, why, sizeof why);
		if (m.running && !ready) {
			ready = 1;
			notify("READY=1");
		}
		if (ready && now >= next_status) {
			snprintf(
			        st, sizeof st,
			        "STATUS=%s: %d of %d slots busy; %lld claimed, "
			        "%lld succeeded, %lld failed, %lld dead",
			        healthy ? "running" : "unhealthy", m.busy,
			        m.slots, (long long)m.c.claimed,
			        (long long)m.c.succeeded, (long long)m.c.failed,
			        (long long)m.c.dead);
			notify(st);
			next_status = now + 5000;
		}
		/* the watchdog is fed only while the heartbeat renews leases
		 * and the claim loop turns: a stuck worker gets restarted */
		if (dog_ms && ready && healthy && now >= next_dog) {
			notify("WATCHDOG=1");
			next_dog = now + dog_ms;
		}
		sked_worker_metrics_free(&m);
	}
	return NULL;
}

int
cli_ops_start(struct cli *c, sked_worker *w, const char *listen,
              struct cli_ops **out)
{
	struct cli_ops *o;
	sked_info info;
	char err[256];
	int port = 0;

	*out = NULL;
	o = calloc(1, sizeof *o);
	if (!o) {
		cli_err("worker: out of memory");
		return EX_OSERR;
	}
	o->c = c;
	o->w = w;
	pthread_mutex_init(&o->db_mu, NULL);
	if (sked_get_info(c->h, &info) == SKED_OK)
		snprintf(o->strategy, sizeof o->strategy, "%s", info.strategy);
	/* its own connection, for scrapes and reloads, opens on first use
	 * (ops_conn) */
	if (listen) {
		struct sockaddr_storage ss;
		unsigned alen;
		int loop = 1;
		const char *tok = getenv("SKED_METRICS_TOKEN");
		const char *weak =
		        tok && tok[0] ? cli_secret_weak(tok, 8, 4) : NULL;
		if (weak) {
			cli_err("worker --http: SKED_METRICS_TOKEN is %s (at "
			        "least 8 characters, 4 of them different, no "
			        "blanks)",
			        weak);
			cli_ops_stop(o);
			return EX_CONFIG;
		}
		o->token = tok && tok[0] ? tok : NULL;
		if (cli_http_parse_listen(listen, &ss, &alen, &loop, err,
		                          sizeof err) == 0 &&
		    !loop && !o->token)
			sked_log(SKED_LOG_WARN,
			         "http: %s is beyond loopback and /metrics has "
			         "no authentication: anyone who reaches it "
			         "reads "
			         "the metrics (set SKED_METRICS_TOKEN for a "
			         "bearer token, or listen on 127.0.0.1)",
			         listen);
		o->http = cli_http_start(listen, on_http, o, &port, err,
		                         sizeof err);
		if (!o->http) {
			cli_err("worker --http: %s", err);
			cli_ops_stop(o);
#ifdef SKED_HAVE_MHD
			return EX_OSERR;
#else
			return EX_UNAVAILABLE;
#endif
		}
		sked_log(SKED_LOG_INFO,
		         "http: /metrics%s, /healthz and /readyz on %s (port "
		         "%d)",
		         o->token ? " (bearer token)" : "", listen, port);
	}
	if (atomic_load(&g_ops_fd) < 0)
		atomic_store(&g_ops_fd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (pthread_create(&o->thread, NULL, ops_main, o) != 0) {
		cli_err("worker: cannot start a thread: %s", strerror(errno));
		cli_ops_stop(o);
		return EX_OSERR;
	}
	o->started = 1;
	*out = o;
	return 0;
}

void
cli_ops_stop(struct cli_ops *o)
{
	if (!o)
		return;
	o->exit = 1;
	ops_ring();
	if (o->started)
		pthread_join(o->thread, NULL);
	cli_http_stop(o->http);
	sked_close(o->h);
	pthread_mutex_destroy(&o->db_mu);
	free(o);
}
