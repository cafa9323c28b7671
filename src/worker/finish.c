/*
 * worker/finish.c — recording outcomes: the finisher thread and retry
 * backoff.
 *
 * Layer: the worker (worker.h), on the model (lease.h). The finisher owns
 * the finish connection w->fin.h and records as many outcomes as have piled
 * up (at most FINISH_MAX) in one transaction, while the loop goes on
 * claiming.
 */
#include "worker/worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "util/log.h"
#include "util/text.h"
#include "sked_cli.h"

/* A random number for retry jitter. The finisher and the lanes record
 * outcomes at the same time, so the state is one atomic counter stepped
 * by a fixed odd number, its value mixed (splitmix64's finaliser): no
 * lock, no data race, and two callers never get the same value. */
static uint64_t
jitter(sked_worker *w)
{
	uint64_t z = atomic_fetch_add(&w->rng, 0x9E3779B97F4A7C15u) +
	             0x9E3779B97F4A7C15u;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

static int64_t
backoff_ms(sked_worker *w, int attempt)
{
	int64_t d = w->o.retry_base_ms;
	for (int i = 1; i < attempt && d < w->o.retry_max_ms; i++)
		d *= 2;
	if (d > w->o.retry_max_ms)
		d = w->o.retry_max_ms;
	/* equal jitter: half fixed, half random, so retries of tasks that
	 * failed together spread out */
	int64_t half = d / 2;
	return half +
	       (half > 0 ? (int64_t)(jitter(w) % (uint64_t)(half + 1)) : 0);
}
/* Put outcomes that could not be recorded back at the head of the done
 * queue, in order, to be tried again: last one first. */
void
sked__wk_requeue_done(sked_worker *w, sked_job *list)
{
	sked_job *rev = NULL;
	while (list) {
		sked_job *next = list->next;
		list->next = rev;
		rev = list;
		list = next;
	}
	pthread_mutex_lock(&w->sh.mu);
	while (rev) {
		sked_job *next = rev->next;
		rev->next = NULL;
		sked__wk_move(w, rev, JOB_DONE);
		rev = next;
	}
	pthread_mutex_unlock(&w->sh.mu);
}

sked_job *
sked__wk_take_done(sked_worker *w, int max, int64_t done_before, int *n)
{
	sked_job *list = NULL, **tail = &list;
	int taken = 0;
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j; taken < max && (j = w->sh.done_head) &&
	                  (!done_before || j->done_ms < done_before);
	     taken++) {
		sked__wk_move(w, j, JOB_RECORDING);
		*tail = j;
		tail = &j->next;
	}
	pthread_mutex_unlock(&w->sh.mu);
	*n = taken;
	return list;
}

/* What a handler said, as text every engine takes (util/text.h): the
 * job's own copy is replaced; one that cannot be cleaned for want of
 * memory is dropped rather than sent. */
enum { ERROR_MAX = 2048, OUTPUT_MAX = 4096 };

static void
clean(char **s, size_t max, enum sked_text_cut cut)
{
	if (!*s)
		return;
	int oom;
	char *c = sked__text_clean(*s, strlen(*s), max, cut, &oom);
	if (c || oom) {
		free(*s);
		*s = c;
	}
}

/* A result as text every engine takes: its bytes (NUL bytes too) made
 * strict UTF-8, never cut (at most SKED_RESULT_MAX bytes came in; a
 * replaced byte takes three). */
static void
clean_result(sked_job *j)
{
	if (!j->result)
		return;
	int oom;
	char *c = sked__result_clean(j->result, j->result_len, &oom);
	if (c || oom) {
		free(j->result);
		j->result = c;
		j->result_len = c ? strlen(c) : 0;
	}
}

/* A delay the handler asked for (Retry-After, retry_in_ms), within
 * --retry-max; none: the backoff. */
static int64_t
retry_delay_ms(sked_worker *w, const sked_job *j)
{
	if (j->retry_ms <= 0)
		return backoff_ms(w, j->t.attempt);
	return j->retry_ms < w->o.retry_max_ms ? j->retry_ms
	                                       : w->o.retry_max_ms;
}

/* The error of an attempt the handler ended for good says so. */
static void
no_retry_error(sked_job *j)
{
	static const char tag[] = "no retry (the handler said so)";
	size_t n = j->error ? strlen(j->error) : 0;
	if (n >= sizeof tag - 1 && strncmp(j->error, tag, sizeof tag - 1) == 0)
		return; /* recorded once already (a retried batch) */
	char *e = malloc(sizeof tag + 2 + n);
	if (!e)
		return;
	memcpy(e, tag, sizeof tag - 1);
	if (n) {
		memcpy(e + sizeof tag - 1, ": ", 2);
		memcpy(e + sizeof tag + 1, j->error, n + 1);
	} else {
		e[sizeof tag - 1] = '\0';
	}
	free(j->error);
	j->error = e;
}

sked_outcome *
sked__wk_outcomes(sked_worker *w, sked_job *list, int n)
{
	sked_outcome *o = calloc((size_t)(n ? n : 1), sizeof *o);
	if (!o)
		return NULL;
	int i = 0;
	for (sked_job *j = list; j; j = j->next, i++) {
		int why = atomic_load(&j->cancel);
		o[i].id = j->t.id;
		o[i].attempt = j->t.attempt;
		o[i].max_attempts = j->t.max_attempts;
		/* the attempt started when its handler did: the claim's
		 * time on the database's clock, plus how long it waited
		 * here (held ahead of the free threads) */
		o[i].started_ms = j->t.started_ms;
		if (j->ran_at > j->since)
			o[i].started_ms += j->ran_at - j->since;
		o[i].exit_code = j->exit_code;
		if (j->give_up && !j->ok && why == CANCEL_NONE)
			no_retry_error(j);
		clean(&j->error, ERROR_MAX, SKED_TEXT_HEAD);
		clean(&j->output, OUTPUT_MAX, SKED_TEXT_TAIL);
		o[i].output = j->output;
		clean_result(j);
		o[i].result = j->result;
		if (why == CANCEL_HELD) {
			o[i].what = SKED_FIN_UNSTARTED;
			o[i].error = "held ahead too long: given back";
		} else if (why == CANCEL_SHUTDOWN) {
			/* stopped under way: a released attempt; never
			 * started: the attempt goes back unrecorded */
			o[i].what = atomic_load(&j->started)
			                    ? SKED_FIN_RELEASE
			                    : SKED_FIN_UNSTARTED;
			o[i].error = "worker shutting down: task given back";
		} else if (j->ok && why == CANCEL_NONE) {
			o[i].what = SKED_FIN_OK;
		} else {
			o[i].what = SKED_FIN_FAIL;
			o[i].retry_delay_ms = retry_delay_ms(w, j);
			/* the handler said no retry: this attempt is the
			 * last one, whatever max_attempts says */
			if (j->give_up && why == CANCEL_NONE)
				o[i].max_attempts = o[i].attempt;
			o[i].error =
			        why == CANCEL_NOLEASE
			                ? "stopped: lease could not be "
			                  "renewed"
			        : why == CANCEL_LOST
			                ? "stopped: task no longer held by "
			                  "this node"
			                : j->error;
		}
	}
	return o;
}

void
sked__wk_unrecorded(sked_worker *w, sked_job *list, sked_outcome *o, int n)
{
	sked_job *keep = NULL, **kt = &keep, *back = NULL, **bt = &back;
	int k = 0;
	for (int i = 0; i < n && list; i++) {
		sked_job *j = list;
		list = j->next;
		j->next = NULL;
		if (o[i].recorded) {
			o[k++] = o[i];
			*kt = j;
			kt = &j->next;
		} else {
			*bt = j;
			bt = &j->next;
		}
	}
	sked__wk_requeue_done(w, back);
	if (keep)
		sked__wk_recorded(w, keep, o, k);
}

/* The line of a recorded attempt, with its facts as keys of the JSON
 * form: a success at debug, a failure at info (warn when the task is
 * dead now), a result for a task no longer held (late) at warn. "N/M"
 * is the attempt of the task's max_attempts, as `sked show` says "N of
 * M": a failure the handler said not to retry ends the task dead at
 * attempt 1 of 5, and its error says why ("no retry …"); o->max_attempts
 * is lowered to the attempt only to make that ending. */
static void
log_outcome(const sked_job *j, const sked_outcome *o)
{
	char took[32];
	sked__log_facts f = {
	        .task_id = (long long)o->id,
	        .attempt = o->attempt,
	        .kind = j->t.kind,
	        .queue = j->t.queue,
	        .duration_ms = j->ran_ms,
	};

	/* a success is logged at debug: its duration is formatted only when
	 * that line is written (it was a fortieth of the worker's
	 * instructions per no-op task) */
	took[0] = '\0';
	if (o->what != SKED_FIN_OK || sked__log_enabled(SKED_LOG_DEBUG))
		sked_format_duration(j->ran_ms, took, sizeof took);
	if (!o->applied) {
		f.outcome = "late";
		sked__log_task(SKED_LOG_WARN, &f,
		               "task %lld attempt %d: its result was not "
		               "recorded, the task was no longer held by "
		               "this node (cancelled or taken over)",
		               f.task_id, o->attempt);
	} else if (o->what == SKED_FIN_OK) {
		f.outcome = "succeeded";
		sked__log_task(SKED_LOG_DEBUG, &f,
		               "task %lld attempt %d/%d succeeded in %s",
		               f.task_id, o->attempt, j->t.max_attempts, took);
	} else if (o->what == SKED_FIN_FAIL) {
		f.outcome = o->dead ? "dead" : "failed";
		f.error = o->error ? o->error : "";
		sked__log_task(o->dead ? SKED_LOG_WARN : SKED_LOG_INFO, &f,
		               "task %lld attempt %d/%d failed%s: %s",
		               f.task_id, o->attempt, j->t.max_attempts,
		               o->dead ? " (dead)" : "", f.error);
	} else {
		f.outcome = "released";
		if (o->what == SKED_FIN_UNSTARTED)
			f.duration_ms = -1;
		sked__log_task(SKED_LOG_DEBUG, &f,
		               "task %lld attempt %d given back (%s)",
		               f.task_id, o->attempt,
		               o->what == SKED_FIN_UNSTARTED ? "not started"
		                                             : "stopped");
	}
}

void
sked__wk_recorded(sked_worker *w, sked_job *list, sked_outcome *o, int n)
{
	atomic_store(&w->sh.fin_ok_ms, sked__mono_ms());
	pthread_mutex_lock(&w->sh.mu);
	int i = 0;
	for (sked_job *j = list; j; j = j->next, i++) {
		sked__wk_note_outcome(w, j, &o[i]);
		if (!o[i].applied)
			w->sh.counters.late++;
		else if (o[i].what == SKED_FIN_OK)
			w->sh.counters.succeeded++;
		else if (o[i].what == SKED_FIN_RELEASE ||
		         o[i].what == SKED_FIN_UNSTARTED)
			w->sh.counters.released++;
		else if (o[i].dead)
			w->sh.counters.dead++;
		else
			w->sh.counters.failed++;
		sked__wk_move(w, j, JOB_RECORDED);
	}
	pthread_mutex_unlock(&w->sh.mu);
	sked__wk_ring(
	        w); /* recorded results free capacity: the loop may claim */
	i = 0;
	for (sked_job *j = list; j && i < n; j = j->next, i++)
		log_outcome(j, &o[i]);
	while (list) {
		sked_job *next = list->next;
		sked__wk_job_free(list);
		list = next;
	}
}

/* How long the finisher leaves an outcome to the claims that carry
 * outcomes (w->sh.mu held): FUSED_FALLBACK_MS, or longer while claims
 * take longer (a loaded server), so that a slow round trip does not send
 * the outcomes a statement of their own each (worker.h). */
static int64_t
fallback_ms(const sked_worker *w)
{
	int64_t ms = PREFETCH_LINGER_MS + 2 * w->sh.claim_last_ms;
	if (ms < FUSED_FALLBACK_MS)
		ms = FUSED_FALLBACK_MS;
	return ms < FUSED_FALLBACK_MAX_MS ? ms : FUSED_FALLBACK_MAX_MS;
}

/* Finish what the pool completed: one transaction for the batch, on h
 * (the finisher's connection, or the loop's when the finisher has none).
 * Returns how many jobs were finished (slots freed); on a database
 * failure puts them back and sets *db_failed. */
static int
finish_done(sked_worker *w, sked *h, int64_t before, int *db_failed)
{
	/* take at most FINISH_MAX outcomes: one transaction stays short */
	int n = 0;
	sked_job *list = sked__wk_take_done(w, FINISH_MAX, before, &n);
	if (!list)
		return 0;
	sked_outcome *o = sked__wk_outcomes(w, list, n);
	if (!o) {
		/* put them back; try again next turn */
		sked__wk_requeue_done(w, list);
		*db_failed = 1;
		return 0;
	}
	int rc = sked__finish(h, w->node_id, o, n);
	if (rc != SKED_OK) {
		sked__log(SKED_LOG_WARN, "cannot record %d result(s) yet: %s",
		          n, sked_errmsg(h));
		if (rc == SKED_EUNAVAILABLE)
			sked__ignore(sked__wk_reconnect(
			        w, h,
			        h == w->h ? SKED_CONN_CLAIMS
			                  : SKED_CONN_FINISHES));
		sked__wk_unrecorded(w, list, o, n);
		free(o);
		*db_failed = 1;
		sked__wk_note(w, &w->sh.finish_errors, NULL, 0);
		return 0;
	}
	atomic_fetch_add(&w->sh.rec_apart, n);
	sked__wk_recorded(w, list, o, n);
	free(o);
	return n;
}

int
sked__wk_finish_on(sked_worker *w, sked *h, int *db_failed)
{
	return finish_done(w, h, 0, db_failed);
}

static void
timed_wait(sked_worker *w, int64_t ms)
{
	struct timespec until;
	sked__wk_deadline(&until, ms);
	pthread_cond_timedwait(&w->sh.cv_done, &w->sh.mu, &until);
}

/* The finisher's connection, opened when outcomes come (w->sh.mu held,
 * released meanwhile). 0: none to be had: the loop records them
 * (w->sh.fin_borrow) until the next try. */
static int
have_connection(sked_worker *w)
{
	if (w->fin.h)
		return 1;
	int64_t now = sked__mono_ms();
	if (now >= w->fin.retry_at) {
		pthread_mutex_unlock(&w->sh.mu);
		w->fin.h = sked__wk_conn_open(w, WK_CONN_FIN);
		pthread_mutex_lock(&w->sh.mu);
		if (w->fin.h) {
			w->fin.backoff = 0;
			atomic_store(&w->sh.fin_borrow, 0);
			return 1;
		}
		w->fin.retry_at = sked__wk_conn_backoff(&w->fin.backoff);
	}
	if (!atomic_exchange(&w->sh.fin_borrow, 1))
		sked__wk_ring(w);
	return 0;
}

void *
sked__wk_finisher_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int64_t backoff = 0, give_up = 0;
	w->fin.used_ms = sked__mono_ms();
	pthread_mutex_lock(&w->sh.mu);
	for (;;) {
		while (!w->sh.done_head && !w->sh.fin_exit) {
			/* connections follow the work: one unused for a
			 * while is closed */
			int64_t idle = sked__mono_ms() - w->fin.used_ms;
			if (w->fin.h && idle >= CONN_IDLE_MS) {
				pthread_mutex_unlock(&w->sh.mu);
				sked__wk_conn_close(w, &w->fin.h, WK_CONN_FIN);
				pthread_mutex_lock(&w->sh.mu);
				continue;
			}
			if (w->fin.h)
				timed_wait(w, CONN_IDLE_MS - idle);
			else
				pthread_cond_wait(&w->sh.cv_done, &w->sh.mu);
		}
		if (!w->sh.done_head)
			break;
		/* where the loop records outcomes with its claims (one
		 * round trip for both, SKED_CAP_FUSED) the finisher takes
		 * only what the loop has left for a while: the loop is
		 * rung on every outcome, so that happens when it is busy
		 * elsewhere (taking back leases, firing schedules) */
		int64_t patience = fallback_ms(w);
		if (!w->sh.fin_exit && w->fused && atomic_load(&w->sh.fusing)) {
			int64_t age =
			        sked__mono_ms() - w->sh.done_head->done_ms;
			if (age < patience) {
				timed_wait(w, patience - age);
				continue;
			}
		}
		/* let a small batch grow for a moment while handlers run */
		if (!w->sh.fin_exit && w->sh.nheld > 0 &&
		    w->sh.nunrecorded < (w->o.concurrency + 1) / 2) {
			struct timespec until;
			sked__wk_deadline(&until, LINGER_MS);
			while (!w->sh.fin_exit && w->sh.nheld > 0 &&
			       w->sh.nunrecorded < (w->o.concurrency + 1) / 2 &&
			       pthread_cond_timedwait(&w->sh.cv_done, &w->sh.mu,
			                              &until) == 0)
				;
		}
		if (w->sh.fin_exit && !give_up)
			give_up = sked__mono_ms() + 10000;
		int failed = 0;
		if (!have_connection(w)) {
			/* the loop records them meanwhile */
			failed = 1;
		} else {
			int64_t before =
			        w->fused && atomic_load(&w->sh.fusing) &&
			                        !w->sh.fin_exit
			                ? sked__mono_ms() - patience + 1
			                : 0;
			pthread_mutex_unlock(&w->sh.mu);
			finish_done(w, w->fin.h, before, &failed);
			w->fin.used_ms = sked__mono_ms();
			pthread_mutex_lock(&w->sh.mu);
		}
		if (failed) {
			if (give_up && sked__mono_ms() > give_up) {
				sked__log(
				        SKED_LOG_ERROR,
				        "giving up recording results: their "
				        "leases will expire and the tasks will "
				        "run again");
				break;
			}
			backoff = backoff ? backoff * 2 : 50;
			if (backoff > 2000)
				backoff = 2000;
			if (!w->fin.h && !w->sh.fin_exit) {
				/* no connection: wait for the next try (the
				 * loop records meanwhile) */
				int64_t d = w->fin.retry_at - sked__mono_ms();
				timed_wait(w, d > 10 ? d : 10);
				backoff = 0;
				continue;
			}
			pthread_mutex_unlock(&w->sh.mu);
			struct timespec ts = {backoff / 1000,
			                      (backoff % 1000) * 1000000};
			nanosleep(&ts, NULL);
			pthread_mutex_lock(&w->sh.mu);
		} else {
			backoff = 0;
		}
	}
	pthread_mutex_unlock(&w->sh.mu);
	return NULL;
}
