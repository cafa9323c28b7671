/*
 * test_jobs.c — the worker's job lists and the one function that moves
 * a job between them (worker/jobs.c, sked__wk_move).
 *
 * Layer: tests (pure: no database, no threads of the worker's own). A
 * job's life, claim to record: the lists it is in (the pool's queue,
 * the slots it takes, the done queue, what the node holds) and the
 * counts the loop sizes its claims by must agree at every step, a job
 * given back while held ahead leaves the pool's queue from wherever it
 * is, outcomes that could not be recorded go back to the head of the
 * done queue in their order, and every move the table does not allow is
 * refused and changes nothing (in the worker it is logged as a bug and,
 * in a debug build, aborts). Last, pool-like threads move jobs through
 * their whole life at once under the lock (run under ThreadSanitizer by
 * `make tsan`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "worker/worker.h"

static sked_worker *
worker(int nqueues)
{
	sked_worker *w = calloc(1, sizeof *w);
	assert_non_null(w);
	w->wake_fd = -1;
	pthread_mutex_init(&w->sh.mu, NULL);
	pthread_cond_init(&w->sh.cv_lane, NULL);
	if (nqueues) {
		w->queues = calloc((size_t)nqueues, sizeof *w->queues);
		assert_non_null(w->queues);
		w->nqueues = nqueues;
	}
	return w;
}

static void
worker_free(sked_worker *w)
{
	pthread_mutex_destroy(&w->sh.mu);
	pthread_cond_destroy(&w->sh.cv_lane);
	free(w->queues);
	free(w);
}

static sked_job *
job(sked_worker *w, int64_t id, int qi)
{
	sked_job *j = calloc(1, sizeof *j);
	assert_non_null(j);
	j->w = w;
	j->t.id = id;
	j->t.attempt = 1;
	j->qi = qi;
	j->cancel_fd = -1;
	j->slot = -1;
	return j;
}

static int
count(const sked_job *head)
{
	int n = 0;
	for (const sked_job *j = head; j; j = j->next)
		n++;
	return n;
}

static int
count_held(const sked_worker *w)
{
	int n = 0;
	for (const sked_job *j = w->sh.held; j; j = j->hnext)
		n++;
	return n;
}

static int
count_all(const sked_worker *w)
{
	int n = 0;
	for (const sked_job *j = w->sh.all; j; j = j->anext)
		n++;
	return n;
}

/* The lists and the counts agree. */
static void
check(const sked_worker *w)
{
	const wk_shared *s = &w->sh;
	assert_int_equal(count_held(w), s->nheld);
	assert_int_equal(count(s->done_head), s->ndone);
	if (!s->jobs_head)
		assert_null(s->jobs_tail);
	else
		assert_null(s->jobs_tail->next);
	if (!s->done_head)
		assert_null(s->done_tail);
	else
		assert_null(s->done_tail->next);
}

static void
move(sked_worker *w, sked_job *j, int to)
{
	assert_int_equal(sked__wk_move_try(w, j, to), 0);
	assert_int_equal(j->state, to);
	check(w);
}

static void
a_job_lives_from_claim_to_record(void **state)
{
	(void)state;
	sked_worker *w = worker(0);
	sked_job *a = job(w, 1, -1), *b = job(w, 2, -1), *c = job(w, 3, -1);
	assert_int_equal(a->state, JOB_NEW);
	move(w, a, JOB_QUEUED);
	move(w, b, JOB_QUEUED);
	move(w, c, JOB_QUEUED);
	/* the pool's queue in the order claimed; each takes a slot and is
	 * held by the node */
	assert_ptr_equal(w->sh.jobs_head, a);
	assert_ptr_equal(a->next, b);
	assert_ptr_equal(w->sh.jobs_tail, c);
	assert_int_equal(w->sh.nheld, 3);
	assert_int_equal(w->sh.counters.claimed, 3);
	assert_int_equal(count_all(w), 3);
	assert_true(sked__wk_holds_locked(w, 2, 1));
	assert_false(sked__wk_holds_locked(w, 2, 2));

	/* a pool thread takes the head: it leaves the queue, keeps its
	 * slot */
	move(w, a, JOB_RUNNING);
	assert_ptr_equal(w->sh.jobs_head, b);
	assert_null(a->next);
	assert_int_equal(w->sh.nheld, 3);
	assert_int_equal(w->sh.nstarted, 1);

	/* its handler returned: the slot is free, the outcome waits */
	move(w, a, JOB_DONE);
	assert_int_equal(w->sh.nheld, 2);
	assert_int_equal(w->sh.nunrecorded, 1);
	assert_int_equal(w->sh.ndone, 1);
	assert_ptr_equal(w->sh.done_head, a);
	assert_true(a->done_ms > 0);

	/* taken to be recorded, then recorded: the node holds it no more */
	int n = 0;
	sked_job *list = sked__wk_take_done(w, 10, 0, &n);
	assert_int_equal(n, 1);
	assert_ptr_equal(list, a);
	assert_int_equal(a->state, JOB_RECORDING);
	assert_int_equal(w->sh.ndone, 0);
	assert_int_equal(w->sh.nunrecorded, 1);
	check(w);
	move(w, a, JOB_RECORDED);
	assert_int_equal(w->sh.nunrecorded, 0);
	assert_int_equal(count_all(w), 2);
	assert_false(sked__wk_holds_locked(w, 1, 1));

	move(w, b, JOB_RUNNING);
	move(w, c, JOB_RUNNING);
	move(w, c, JOB_DONE);
	move(w, b, JOB_DONE);
	list = sked__wk_take_done(w, 10, 0, &n);
	assert_int_equal(n, 2);
	assert_ptr_equal(list, c); /* in the order they were done */
	move(w, c, JOB_RECORDED);
	move(w, b, JOB_RECORDED);
	assert_null(w->sh.all);
	assert_int_equal(w->sh.nheld + w->sh.nunrecorded + w->sh.ndone, 0);
	free(a);
	free(b);
	free(c);
	worker_free(w);
}

/* A task held ahead too long is given back unstarted: it leaves the
 * pool's queue from wherever it is (worker.c skips cancelled ones). */
static void
a_queued_job_is_given_back_from_anywhere(void **state)
{
	(void)state;
	sked_worker *w = worker(0);
	sked_job *j[4];
	for (int i = 0; i < 4; i++) {
		j[i] = job(w, i + 1, -1);
		move(w, j[i], JOB_QUEUED);
	}
	move(w, j[1], JOB_DONE); /* from the middle */
	move(w, j[3], JOB_DONE); /* the tail */
	move(w, j[0], JOB_DONE); /* the head */
	assert_ptr_equal(w->sh.jobs_head, j[2]);
	assert_ptr_equal(w->sh.jobs_tail, j[2]);
	assert_int_equal(w->sh.nstarted, 0);
	assert_int_equal(w->sh.nheld, 1);
	assert_int_equal(w->sh.ndone, 3);
	assert_ptr_equal(w->sh.done_head, j[1]);
	move(w, j[2], JOB_RUNNING);
	assert_null(w->sh.jobs_head);
	assert_null(w->sh.jobs_tail);
	for (int i = 0; i < 4; i++)
		free(j[i]);
	worker_free(w);
}

/* Outcomes that could not be recorded go back to the head of the done
 * queue, in their order, before those done since. */
static void
unrecorded_outcomes_go_back_in_order(void **state)
{
	(void)state;
	sked_worker *w = worker(0);
	sked_job *j[5];
	for (int i = 0; i < 5; i++) {
		j[i] = job(w, i + 1, -1);
		move(w, j[i], JOB_QUEUED);
		move(w, j[i], JOB_RUNNING);
	}
	for (int i = 0; i < 3; i++)
		move(w, j[i], JOB_DONE);
	int n = 0;
	sked_job *list = sked__wk_take_done(w, 2, 0, &n);
	assert_int_equal(n, 2);
	assert_ptr_equal(list, j[0]);
	assert_ptr_equal(list->next, j[1]);
	assert_null(j[1]->next);
	move(w, j[3], JOB_DONE);
	sked__wk_requeue_done(w, list);
	check(w);
	const sked_job *want[] = {j[0], j[1], j[2], j[3]};
	const sked_job *q = w->sh.done_head;
	for (int i = 0; i < 4; i++, q = q->next)
		assert_ptr_equal(q, want[i]);
	assert_null(q);
	assert_int_equal(w->sh.ndone, 4);
	assert_int_equal(w->sh.nunrecorded, 4);
	assert_int_equal(j[0]->state, JOB_DONE);
	/* only those done before a time: none of them here */
	list = sked__wk_take_done(w, 10, j[0]->done_ms, &n);
	assert_null(list);
	assert_int_equal(n, 0);
	for (int i = 0; i < 5; i++)
		free(j[i]);
	worker_free(w);
}

/* A queue's slots in use follow its jobs. */
static void
queues_count_their_slots(void **state)
{
	(void)state;
	sked_worker *w = worker(2);
	sked_job *a = job(w, 1, 0), *b = job(w, 2, 1), *c = job(w, 3, 1);
	move(w, a, JOB_QUEUED);
	move(w, b, JOB_QUEUED);
	move(w, c, JOB_QUEUED);
	assert_int_equal(w->queues[0].held, 1);
	assert_int_equal(w->queues[1].held, 2);
	move(w, b, JOB_RUNNING);
	assert_int_equal(w->queues[1].held, 2);
	move(w, b, JOB_DONE);
	move(w, c, JOB_DONE);
	assert_int_equal(w->queues[1].held, 0);
	assert_int_equal(w->queues[0].held, 1);
	free(a);
	free(b);
	free(c);
	worker_free(w);
}

/* The table: exactly these moves are legal, and every other one is
 * refused with nothing changed. */
static void
illegal_moves_are_refused(void **state)
{
	(void)state;
	static const int ok[][2] = {
	        {JOB_NEW, JOB_QUEUED},         {JOB_QUEUED, JOB_RUNNING},
	        {JOB_QUEUED, JOB_DONE},        {JOB_RUNNING, JOB_DONE},
	        {JOB_DONE, JOB_RECORDING},     {JOB_RECORDING, JOB_DONE},
	        {JOB_RECORDING, JOB_RECORDED},
	};
	int nok = (int)(sizeof ok / sizeof ok[0]), seen = 0;
	for (int from = -1; from <= JOB_NSTATES; from++)
		for (int to = -1; to <= JOB_NSTATES; to++) {
			int want = 0;
			for (int i = 0; i < nok; i++)
				want |= ok[i][0] == from && ok[i][1] == to;
			assert_int_equal(sked__wk_move_legal(from, to), want);
			seen += want;
		}
	assert_int_equal(seen, nok);

	/* a job in each state; every move the table refuses leaves the
	 * lists and counts as they were */
	sked_worker *w = worker(1);
	sked_job *j[JOB_NSTATES];
	for (int s = 0; s < JOB_NSTATES; s++) {
		j[s] = job(w, s + 1, 0);
		static const int path[] = {JOB_QUEUED, JOB_RUNNING, JOB_DONE,
		                           JOB_RECORDING, JOB_RECORDED};
		for (int k = 0; k < s; k++)
			move(w, j[s], path[k]);
	}
	wk_shared before;
	memcpy(&before, &w->sh, sizeof before);
	int qheld = w->queues[0].held;
	for (int s = 0; s < JOB_NSTATES; s++)
		for (int to = -1; to <= JOB_NSTATES; to++) {
			if (sked__wk_move_legal(s, to))
				continue;
			assert_int_equal(sked__wk_move_try(w, j[s], to), -1);
			assert_int_equal(j[s]->state, s);
			assert_memory_equal(&before, &w->sh, sizeof before);
			assert_int_equal(w->queues[0].held, qheld);
		}
	/* legal by the table, but not where the job says it is: a job
	 * marked queued that is in no queue */
	sked_job *lost = job(w, 99, -1);
	lost->state = JOB_QUEUED;
	assert_int_equal(sked__wk_move_try(w, lost, JOB_RUNNING), -1);
	assert_int_equal(sked__wk_move_try(w, lost, JOB_DONE), -1);
	lost->state = JOB_DONE;
	assert_int_equal(sked__wk_move_try(w, lost, JOB_RECORDING), -1);
	assert_memory_equal(&before, &w->sh, sizeof before);
	assert_string_equal(sked__wk_state_name(JOB_RECORDING), "recording");
	assert_string_equal(sked__wk_state_name(42), "?");
	free(lost);
	for (int s = 0; s < JOB_NSTATES; s++)
		free(j[s]);
	worker_free(w);
}

/* Pool-like threads move jobs through their whole life at once, each
 * move under the lock, as the worker's threads do. */
#define THREADS 4
#define PER     2000

static void *
churn(void *arg)
{
	sked_worker *w = arg;
	for (int i = 0; i < PER; i++) {
		sked_job *j = job(w, i, -1);
		pthread_mutex_lock(&w->sh.mu);
		sked__wk_move(w, j, JOB_QUEUED);
		pthread_mutex_unlock(&w->sh.mu);
		pthread_mutex_lock(&w->sh.mu);
		sked__wk_move(w, j, JOB_RUNNING);
		pthread_mutex_unlock(&w->sh.mu);
		pthread_mutex_lock(&w->sh.mu);
		sked__wk_move(w, j, JOB_DONE);
		pthread_mutex_unlock(&w->sh.mu);
		int n = 0;
		sked_job *list = sked__wk_take_done(w, 3, 0, &n);
		pthread_mutex_lock(&w->sh.mu);
		for (sked_job *k = list; k; k = k->next)
			sked__wk_move(w, k, JOB_RECORDED);
		pthread_mutex_unlock(&w->sh.mu);
		while (list) {
			sked_job *next = list->next;
			free(list);
			list = next;
		}
	}
	return NULL;
}

static void
threads_move_jobs_at_once(void **state)
{
	(void)state;
	sked_worker *w = worker(0);
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, churn, w), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	/* what is left in the done queue: recorded here */
	int n = 0;
	sked_job *list = sked__wk_take_done(w, THREADS * PER, 0, &n);
	for (sked_job *k = list; k; k = k->next)
		sked__wk_move(w, k, JOB_RECORDED);
	while (list) {
		sked_job *next = list->next;
		free(list);
		list = next;
	}
	check(w);
	assert_int_equal(w->sh.counters.claimed, THREADS * PER);
	assert_int_equal(w->sh.nstarted, THREADS * PER);
	assert_int_equal(w->sh.nheld + w->sh.nunrecorded + w->sh.ndone, 0);
	assert_null(w->sh.all);
	worker_free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(a_job_lives_from_claim_to_record),
	        cmocka_unit_test(a_queued_job_is_given_back_from_anywhere),
	        cmocka_unit_test(unrecorded_outcomes_go_back_in_order),
	        cmocka_unit_test(queues_count_their_slots),
	        cmocka_unit_test(illegal_moves_are_refused),
	        cmocka_unit_test(threads_move_jobs_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
