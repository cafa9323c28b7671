/*
 * worker/setup.c — a worker before and beside its run: construction,
 * handler and queue registration, its settings, stopping it, and the
 * snapshot of its numbers (sked_worker_get_counters, _get_metrics).
 *
 * Layer: the worker (worker.h). Everything here but sked_worker_stop and
 * the snapshots runs before sked_worker_run starts the threads; the
 * snapshots read the shared numbers under w->sh.mu (worker.h's thread
 * map), sked_worker_stop only an atomic and the doorbell.
 */
#include "worker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/ident.h"
#include "util/log.h"

/* ---- construction ---- */

static int
parse_queues(sked_worker *w, const char *spec)
{
	/* "Q[:N],…" */
	const char *s = spec;
	while (*s) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		char item[SKED_MAX_NAME + 16];
		if (len == 0 || len >= SKED_MAX_NAME + 8)
			return sked__fail(w->h, SKED_EINVAL,
			                  "queues '%.100s': empty or too long "
			                  "entry",
			                  spec);
		memcpy(item, s, len);
		item[len] = '\0';
		int max = 0;
		char *colon = strchr(item, ':');
		if (colon) {
			*colon = '\0';
			char *e;
			long v = strtol(colon + 1, &e, 10);
			if (*e || v < 1 || v > 100000)
				return sked__fail(w->h, SKED_EINVAL,
				                  "queues: '%s' is not a slot "
				                  "count (want Q:N, N >= 1)",
				                  colon + 1);
			max = (int)v;
		}
		if (sked__check_name(w->h, "queue", item) != SKED_OK)
			return SKED_EINVAL;
		wqueue *q = realloc(w->queues,
		                    sizeof *q * (size_t)(w->nqueues + 1));
		if (!q)
			return sked__fail(w->h, SKED_ENOMEM, "out of memory");
		w->queues = q;
		memset(&q[w->nqueues], 0, sizeof *q);
		memcpy(q[w->nqueues].name, item, strlen(item) + 1);
		q[w->nqueues].max = max;
		w->nqueues++;
		if (!end)
			break;
		s = end + 1;
	}
	return SKED_OK;
}

SKED_API int
sked_worker_new(sked *h, const sked_worker_options *opts, sked_worker **out)
{
	if (!h || !out)
		return SKED_EINVAL;
	*out = NULL;
	if (h->borrowed)
		return sked__fail(h, SKED_EINVAL,
		                  "a worker needs a connection of its own, not "
		                  "the application's");
	sked_worker *w = calloc(1, sizeof *w);
	if (!w)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	w->h = h;
	w->wake_fd = -1;
	if (opts)
		w->o = *opts;
	w->o.node_id = NULL;
	w->o.queues = NULL;
	if (w->o.concurrency <= 0)
		w->o.concurrency = 4;
	if (w->o.lease_ms <= 0)
		w->o.lease_ms = 30000;
	if (w->o.poll_ms <= 0)
		w->o.poll_ms = 1000;
	if (w->o.grace_ms <= 0)
		w->o.grace_ms = 30000;
	if (w->o.retry_base_ms <= 0)
		w->o.retry_base_ms = 1000;
	if (w->o.retry_max_ms <= 0)
		w->o.retry_max_ms = 3600 * 1000;
	int rc = SKED_OK;
	if (w->o.prefetch < SKED_PREFETCH_OFF || w->o.prefetch > 10000)
		rc = sked__fail(h, SKED_EINVAL,
		                "prefetch %d is out of range: 0 (adaptive), "
		                "1-10000 (that many ahead) or "
		                "SKED_PREFETCH_OFF",
		                w->o.prefetch);
	else if (w->o.concurrency > 1024)
		rc = sked__fail(h, SKED_EINVAL,
		                "concurrency %d is out of range 1-1024",
		                w->o.concurrency);
	else if (w->o.lease_ms < 1000)
		rc = sked__fail(h, SKED_EINVAL,
		                "a lease shorter than 1s cannot be renewed "
		                "safely");
	if (rc == SKED_OK && opts && opts->node_id) {
		if ((rc = sked__check_name(h, "node id", opts->node_id)) !=
		    SKED_OK)
			;
		else
			snprintf(w->node_id, sizeof w->node_id, "%s",
			         opts->node_id);
	} else if (rc == SKED_OK) {
		sked__default_id(w->node_id, sizeof w->node_id);
	}
	if (rc == SKED_OK && opts && opts->queues && *opts->queues)
		rc = parse_queues(w, opts->queues);
	if (rc == SKED_OK) {
		w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (w->wake_fd < 0)
			rc = sked__fail(h, SKED_EIO, "eventfd: %s",
			                strerror(errno));
	}
	if (rc != SKED_OK) {
		sked_worker_free(w);
		return rc;
	}
	pthread_mutex_init(&w->sh.mu, NULL);
	pthread_cond_init(&w->sh.cv_pool, NULL);
	pthread_cond_init(&w->sh.cv_done, NULL);
	pthread_cond_init(&w->sh.cv_lane, NULL);
	pthread_mutex_init(&w->sh.side_mu, NULL);
	pthread_cond_init(&w->sh.side_cv, NULL);
	atomic_init(&w->rng,
	            (uint64_t)getpid() << 32 ^ (uint64_t)sked__mono_ms());
	*out = w;
	return SKED_OK;
}

SKED_API void
sked_worker_free(sked_worker *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->nhandlers; i++) {
		free(w->handlers[i].url);
		if (w->handlers[i].argv) {
			for (char **a = w->handlers[i].argv; *a; a++)
				free(*a);
			free(w->handlers[i].argv);
		}
	}
	free(w->handlers);
	sked__wk_hooks_free(w);
	free(w->queues);
	free(w->beat.stray_ids);
	free(w->beat.stray_att);
	free(w->kinds);
	sked__guard_stop(w->guard);
	if (w->wake_fd >= 0) {
		close(w->wake_fd);
		pthread_mutex_destroy(&w->sh.mu);
		pthread_cond_destroy(&w->sh.cv_pool);
		pthread_cond_destroy(&w->sh.cv_done);
		pthread_cond_destroy(&w->sh.cv_lane);
		pthread_mutex_destroy(&w->sh.side_mu);
		pthread_cond_destroy(&w->sh.side_cv);
	}
	free(w);
}

static handler *
add_handler(sked_worker *w, const char *kind)
{
	/* "*" is the catch-all: it runs kinds no other handler names, and
	 * makes the worker claim every kind */
	if (!kind || (strcmp(kind, "*") != 0 &&
	              sked__check_name(w->h, "kind", kind) != SKED_OK)) {
		if (!kind)
			sked__fail(w->h, SKED_EINVAL, "a handler needs a kind");
		return NULL;
	}
	for (int i = 0; i < w->nhandlers; i++)
		if (strcmp(w->handlers[i].kind, kind) == 0) {
			sked__fail(w->h, SKED_EINVAL,
			           "kind '%s' has two handlers", kind);
			return NULL;
		}
	handler *v =
	        realloc(w->handlers, sizeof *v * (size_t)(w->nhandlers + 1));
	if (!v) {
		sked__fail(w->h, SKED_ENOMEM, "out of memory");
		return NULL;
	}
	w->handlers = v;
	handler *x = &v[w->nhandlers++];
	memset(x, 0, sizeof *x);
	snprintf(x->kind, sizeof x->kind, "%s", kind);
	return x;
}

SKED_API int
sked_worker_handle(sked_worker *w, const char *kind, sked_handler_fn fn,
                   void *userdata)
{
	if (!w || !fn)
		return SKED_EINVAL;
	handler *x = add_handler(w, kind);
	if (!x)
		return SKED_EINVAL;
	x->fn = fn;
	x->ud = userdata;
	return SKED_OK;
}

static int
add_argv_handler(sked_worker *w, const char *kind, const char *const *argv,
                 int64_t timeout_ms, int type)
{
	if (!w || !argv || !argv[0] || !*argv[0])
		return SKED_EINVAL;
	size_t n = 0;
	while (argv[n])
		n++;
	char **copy = calloc(n + 1, sizeof *copy);
	if (!copy)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (!(copy[i] = strdup(argv[i]))) {
			for (size_t k = 0; k < i; k++)
				free(copy[k]);
			free(copy);
			return sked__fail(w->h, SKED_ENOMEM, "out of memory");
		}
	handler *x = add_handler(w, kind);
	if (!x) {
		for (size_t i = 0; i < n; i++)
			free(copy[i]);
		free(copy);
		return SKED_EINVAL;
	}
	x->argv = copy;
	x->type = type;
	x->timeout_ms = timeout_ms;
	return SKED_OK;
}

SKED_API int
sked_worker_handle_program(sked_worker *w, const char *kind,
                           const char *const *argv, int64_t timeout_ms)
{
	return add_argv_handler(w, kind, argv, timeout_ms, H_PROGRAM);
}

SKED_API int
sked_worker_handle_pipe(sked_worker *w, const char *kind,
                        const char *const *argv, int64_t timeout_ms)
{
	return add_argv_handler(w, kind, argv, timeout_ms, H_PIPE);
}

SKED_API int
sked_worker_handle_http(sked_worker *w, const char *kind, const char *url,
                        int64_t timeout_ms)
{
	if (!w || !url)
		return SKED_EINVAL;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return sked__fail(w->h, SKED_EINVAL,
		                  "an HTTP handler's URL must start with "
		                  "http:// or https://");
	if (sked__wk_http_init() != SKED_OK)
		return sked__fail(w->h, SKED_EUNSUPPORTED,
		                  "this build of sked has no HTTP handlers "
		                  "(built without libcurl)");
	char *copy = strdup(url);
	if (!copy)
		return sked__fail(w->h, SKED_ENOMEM, "out of memory");
	handler *x = add_handler(w, kind);
	if (!x) {
		free(copy);
		return SKED_EINVAL;
	}
	x->type = H_HTTP;
	x->url = copy;
	x->timeout_ms = timeout_ms;
	return SKED_OK;
}

SKED_API void
sked_worker_stop(sked_worker *w, int immediate)
{
	/* async-signal-safe: an atomic and a write(2) */
	int want = immediate ? 2 : 1;
	int cur = atomic_load(&w->sh.stop);
	while (cur < want &&
	       !atomic_compare_exchange_weak(&w->sh.stop, &cur, want))
		;
	sked__wk_ring(w);
}

SKED_API void
sked_worker_get_counters(sked_worker *w, sked_worker_counters *out)
{
	pthread_mutex_lock(&w->sh.mu);
	*out = w->sh.counters;
	pthread_mutex_unlock(&w->sh.mu);
}

SKED_API const char *
sked_worker_node_id(const sked_worker *w)
{
	return w->node_id;
}

SKED_API int
sked_worker_set_retention(sked_worker *w, int64_t succeeded_ms, int64_t dead_ms,
                          int64_t cancelled_ms)
{
	if (!w)
		return SKED_EINVAL;
	if (succeeded_ms < 0 || dead_ms < 0 || cancelled_ms < 0)
		return sked__fail(w->h, SKED_EINVAL,
		                  "retention: an age is 0 (keep) or more");
	w->keep_ms[0] = succeeded_ms;
	w->keep_ms[1] = dead_ms;
	w->keep_ms[2] = cancelled_ms;
	return SKED_OK;
}

/* ---- operations: the snapshot ---- */

static int64_t
age_of(const sked_worker *w, int64_t then, int64_t now)
{
	if (!atomic_load(&w->sh.run_started))
		return -1;
	return now > then ? now - then : 0;
}

SKED_API int
sked_worker_get_metrics(sked_worker *w, sked_worker_metrics *out)
{
	if (!w || !out)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	out->kinds = w->nhandlers
	                     ? calloc((size_t)w->nhandlers, sizeof *out->kinds)
	                     : NULL;
	if (w->nhandlers && !out->kinds)
		return SKED_ENOMEM;
	int64_t now = sked__mono_ms();
	pthread_mutex_lock(&w->sh.mu);
	out->c = w->sh.counters;
	out->slots = w->o.concurrency;
	out->busy = sked__wk_busy_locked(w);
	out->held = w->sh.nheld - out->busy;
	out->unrecorded = w->sh.nunrecorded;
	out->claim = w->sh.claim_hist;
	out->claim_errors = w->sh.claim_errors;
	out->renewals = w->sh.renewals;
	out->renewal_errors = w->sh.renewal_errors;
	out->finish_errors = w->sh.finish_errors;
	for (int i = 0; i < 4; i++) {
		out->reconnects[i] = w->sh.reconnects[i];
		out->reconnect_failures[i] = w->sh.reconnect_failures[i];
	}
	memcpy(out->lock_waits, w->sh.lock_waits, sizeof out->lock_waits);
	/* the finisher is stuck only while something waits for it */
	int64_t fin = w->sh.done_head ? atomic_load(&w->sh.fin_ok_ms) : now;
	for (int i = 0; i < w->nhandlers; i++) {
		out->kinds[i] = w->handlers[i].m;
		snprintf(out->kinds[i].kind, sizeof out->kinds[i].kind, "%s",
		         w->handlers[i].kind);
	}
	out->nkinds = (size_t)w->nhandlers;
	pthread_mutex_unlock(&w->sh.mu);
	out->running = atomic_load(&w->sh.run_started);
	out->loop_age_ms = age_of(w, atomic_load(&w->sh.loop_ok_ms), now);
	out->beat_age_ms = age_of(w, atomic_load(&w->sh.lease_ok_ms), now);
	out->finish_age_ms = age_of(w, fin, now);
	out->lease_ms = w->o.lease_ms;
	out->poll_ms = w->o.poll_ms;
	return SKED_OK;
}

SKED_API void
sked_worker_metrics_free(sked_worker_metrics *m)
{
	if (!m)
		return;
	free(m->kinds);
	m->kinds = NULL;
	m->nkinds = 0;
}
