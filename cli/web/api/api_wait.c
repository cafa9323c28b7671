/*
 * api_wait.c — the JSON API's long-poll: GET /api/tasks/ID?wait=D
 * answers when the task has ended or D has passed (docs/api.md).
 *
 * Layer: the command-line program, a client of <sked.h> only; below
 * api.c's router, beside api_tasks.c.
 *
 * A waiting request never holds the API's database handle (nor its
 * mutex): it parks in a slot and sleeps on a condition variable. One
 * thread of this file, with a database connection of its own opened on
 * the first long-poll, waits for every parked task at once
 * (sked_wait_any: on PostgreSQL woken by the transaction that ends a
 * task, a back-off elsewhere), a pipe waking it when a slot is added.
 * Bounds: a wait is at most API_WAIT_MAX_MS (a longer one is cut to it),
 * and at most API_WAITS slots wait at once (the HTTP server has 256
 * connection threads: the long-polls can never take them all); a
 * request that finds every slot taken is answered at once with the task
 * as it is, like a wait of 0.
 */
#include "web/api/api_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct slot {
	int64_t id; /* 0: free */
	int done;
};

struct cli_api_wait {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct slot slot[API_WAITS];
	int started, failed, stop;
	pthread_t th;
	int pipe[2];
	char *url, *strategy, *prefix;
};

static int64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *
dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int
cli_api_wait_new(struct cli_api *a, const char *url, const char *strategy,
                 const char *prefix)
{
	struct cli_api_wait *w = calloc(1, sizeof *w);
	if (!w)
		return -1;
	w->pipe[0] = w->pipe[1] = -1;
	w->url = dup_or_null(url);
	w->strategy = dup_or_null(strategy);
	w->prefix = dup_or_null(prefix);
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	a->wait = w;
	return 0;
}

void
cli_api_wait_free(struct cli_api *a)
{
	struct cli_api_wait *w = a ? a->wait : NULL;
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_mutex_unlock(&w->mu);
		if (write(w->pipe[1], "x", 1) < 0) {
			/* full: it is awake anyway */
		}
		pthread_join(w->th, NULL);
	}
	if (w->pipe[0] >= 0) {
		close(w->pipe[0]);
		close(w->pipe[1]);
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	free(w->url);
	free(w->strategy);
	free(w->prefix);
	free(w);
	a->wait = NULL;
}

/* The ids the slots wait for (under mu); their count. */
static size_t
gather(struct cli_api_wait *w, int64_t *ids)
{
	size_t n = 0;
	for (int i = 0; i < API_WAITS; i++) {
		if (!w->slot[i].id || w->slot[i].done)
			continue;
		size_t k = 0;
		while (k < n && ids[k] != w->slot[i].id)
			k++;
		if (k == n)
			ids[n++] = w->slot[i].id;
	}
	return n;
}

/* Every slot of id (0: all) done, its request told. */
static void
finish_slots(struct cli_api_wait *w, int64_t id)
{
	pthread_mutex_lock(&w->mu);
	for (int i = 0; i < API_WAITS; i++)
		if (w->slot[i].id && (id == 0 || w->slot[i].id == id))
			w->slot[i].done = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

static void
drain(int fd)
{
	char buf[64];
	while (read(fd, buf, sizeof buf) > 0) {
	}
}

static void *
waiter_main(void *arg)
{
	struct cli_api_wait *w = arg;
	sked_options o = {.strategy = w->strategy, .prefix = w->prefix};
	sked *h = NULL;
	int64_t ids[API_WAITS];
	for (;;) {
		pthread_mutex_lock(&w->mu);
		size_t n = gather(w, ids);
		int stop = w->stop;
		pthread_mutex_unlock(&w->mu);
		if (stop)
			break;
		if (!h && sked_open(w->url, &o, &h) != SKED_OK) {
			sked_log(SKED_LOG_WARN,
			         "api: the long-poll's connection: %s",
			         h ? sked_errmsg(h) : "out of memory");
			sked_close(h);
			h = NULL;
			finish_slots(w, 0); /* answered as they are */
			struct timespec ts = {1, 0};
			nanosleep(&ts, NULL);
			continue;
		}
		int64_t ended = 0;
		/* nothing parked: sleep on the pipe alone */
		if (n == 0) {
			struct pollfd pf = {.fd = w->pipe[0], .events = POLLIN};
			(void)poll(&pf, 1, -1);
			drain(w->pipe[0]);
			continue;
		}
		int rc = sked_wait_any(h, ids, n, API_WAIT_MAX_MS, w->pipe[0],
		                       &ended);
		drain(w->pipe[0]);
		if (rc == SKED_OK || rc == SKED_ENOTFOUND) {
			finish_slots(w, ended);
		} else if (rc != SKED_ETIMEOUT) {
			sked_log(SKED_LOG_WARN, "api: long-poll: %s",
			         sked_errmsg(h));
			finish_slots(w, 0);
			sked_close(h);
			h = NULL;
		}
	}
	sked_close(h);
	return NULL;
}

/* Start the waiting thread (under mu); -1 when it cannot run. */
static int
start_locked(struct cli_api_wait *w)
{
	if (w->started)
		return 0;
	if (w->failed)
		return -1;
	if (pipe(w->pipe) != 0) {
		w->failed = 1;
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		fcntl(w->pipe[i], F_SETFL, O_NONBLOCK);
		fcntl(w->pipe[i], F_SETFD, FD_CLOEXEC);
	}
	if (pthread_create(&w->th, NULL, waiter_main, w) != 0) {
		w->failed = 1;
		return -1;
	}
	w->started = 1;
	return 0;
}

int
api_wait_task(struct cli_api *a, int64_t id, int64_t ms)
{
	struct cli_api_wait *w = a->wait;
	if (!w || ms <= 0)
		return 0;
	if (ms > API_WAIT_MAX_MS)
		ms = API_WAIT_MAX_MS;
	/* has it ended already? (the handle is shared: under its mutex) */
	sked_task *t = NULL;
	pthread_mutex_lock(a->mu);
	int rc = sked_task_get(a->h, id, &t);
	int live = rc == SKED_OK &&
	           (t->status != SKED_SUCCEEDED && t->status != SKED_DEAD &&
	            t->status != SKED_CANCELLED);
	sked_tasks_free(t, rc == SKED_OK ? 1 : 0);
	pthread_mutex_unlock(a->mu);
	if (!live)
		return 0;
	pthread_mutex_lock(&w->mu);
	int k = -1;
	for (int i = 0; i < API_WAITS && k < 0; i++)
		if (!w->slot[i].id)
			k = i;
	if (k < 0 || start_locked(w) != 0) {
		pthread_mutex_unlock(&w->mu);
		return 0; /* no room: answered as it is */
	}
	w->slot[k] = (struct slot){.id = id};
	if (write(w->pipe[1], "x", 1) < 0) {
		/* full: the thread is awake anyway */
	}
	int64_t end = now_ms() + ms;
	struct timespec ts = {.tv_sec = end / 1000,
	                      .tv_nsec = (end % 1000) * 1000000};
	while (!w->slot[k].done && !w->stop)
		if (pthread_cond_timedwait(&w->cond, &w->mu, &ts) == ETIMEDOUT)
			break;
	int done = w->slot[k].done;
	w->slot[k] = (struct slot){0};
	pthread_mutex_unlock(&w->mu);
	return done;
}
