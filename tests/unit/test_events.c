/*
 * test_events.c — the events feed's pages (sked_events_read, events.c):
 * read on from each page's next, every event comes exactly once, in order
 * of time, across the three ended statuses and the attempts, with a limit
 * smaller than the events of one millisecond; a page never ends inside a
 * millisecond; nothing newer than the settled horizon is served, and it
 * is served once it has settled; filters; bad arguments.
 *
 * Layer: tests (a real SQLite database file, sqlite_fixture.h); rows are
 * written by hand with chosen end times, as the worker would leave them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "handle/internal.h"
#include "sqlite_fixture.h"

static void
exec(sked *h, const char *tmpl)
{
	char *x = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	assert_non_null(x);
	int rc = sked__qdyn(h, x, NULL, 0, NULL);
	if (rc != SKED_OK)
		fail_msg("%s: %s", x, sked_errmsg(h));
	free(x);
}

/* an ended task: id, status, kind, queue, end time */
static void
done_row(sked *h, int64_t id, int status, const char *kind, int64_t at)
{
	char sql[512];
	snprintf(sql, sizeof sql,
	         "INSERT INTO {p}task_done (id, queue, kind, status, run_at, "
	         "attempts, created_at, updated_at, started_at, finished_at, "
	         "outcome, result) VALUES (%lld, 'q', '%s', %d, 0, 1, 0, 0, "
	         "%lld, %lld, 'succeeded', 'r%lld')",
	         (long long)id, kind, status, (long long)at - 5, (long long)at,
	         (long long)id);
	exec(h, sql);
}

static void
run_row(sked *h, int64_t task, int attempt, int64_t at)
{
	char sql[512];
	snprintf(sql, sizeof sql,
	         "INSERT INTO {p}run (task_id, attempt, started_at, "
	         "finished_at, outcome, error) VALUES (%lld, %d, %lld, %lld, "
	         "'failed', 'boom')",
	         (long long)task, attempt, (long long)at - 5, (long long)at);
	exec(h, sql);
}

struct seen {
	int64_t at[256];
	int type[256];
	int64_t id[256];
	int n;
};

/* Read everything after `after` in pages of limit; check each page. */
static int64_t
read_all(sked *h, int64_t after, const sked_event_filter *f, size_t limit,
         struct seen *s)
{
	int64_t pos = after;
	for (int pages = 0; pages < 200; pages++) {
		sked_event *e = NULL;
		size_t n = 0;
		int64_t next = -5;
		assert_int_equal(
		        sked_events_read(h, pos, f, limit, &e, &n, &next),
		        SKED_OK);
		assert_true(next >= pos);
		if (n > limit) /* one millisecond alone */
			for (size_t i = 1; i < n; i++)
				assert_int_equal(e[i].at_ms, e[0].at_ms);
		for (size_t i = 0; i < n; i++) {
			assert_true(e[i].at_ms > pos && e[i].at_ms <= next);
			assert_true(s->n < 256);
			s->at[s->n] = e[i].at_ms;
			s->type[s->n] = e[i].type;
			s->id[s->n] = e[i].id;
			s->n++;
		}
		sked_events_free(e, n);
		if (n == 0)
			return next;
		pos = next;
	}
	fail_msg("the pages never ended");
	return 0;
}

static int
count_of(const struct seen *s, int type, int64_t id)
{
	int k = 0;
	for (int i = 0; i < s->n; i++)
		k += s->type[i] == type && s->id[i] == id;
	return k;
}

static void
pages_serve_each_event_once_in_order(void **state)
{
	(void)state;
	char url[512];
	fixture_url("events", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	int64_t now = 0;
	assert_int_equal(sked__now(h, &now), SKED_OK);
	int64_t t = now - 60000;
	/* 20 ends in one millisecond, more than a page's limit */
	for (int i = 1; i <= 20; i++)
		done_row(h, i, SKED_SUCCEEDED, "a", t);
	/* the next millisecond: ends of every status and two attempts */
	done_row(h, 21, SKED_DEAD, "b", t + 1);
	done_row(h, 22, SKED_CANCELLED, "a", t + 1);
	done_row(h, 23, SKED_SUCCEEDED, "b", t + 1);
	run_row(h, 21, 1, t + 1);
	run_row(h, 23, 1, t + 1);
	done_row(h, 24, SKED_SUCCEEDED, "a", t + 7);
	/* a page of 3 that starts at t + 3 ends before t + 10 (no source
	 * holds more than the limit: the merge passes it) */
	done_row(h, 27, SKED_DEAD, "a", t + 10);
	done_row(h, 28, SKED_CANCELLED, "a", t + 10);
	done_row(h, 29, SKED_DEAD, "a", t + 10);
	run_row(h, 24, 1, t + 3);
	/* not settled yet: after the horizon */
	done_row(h, 25, SKED_SUCCEEDED, "a", now + 60000);

	struct seen s = {0};
	sked_event_filter f = {.settle_ms = 1000};
	int64_t next = read_all(h, 0, &f, 3, &s);
	assert_int_equal(s.n, 30);
	for (int64_t id = 1; id <= 29; id++)
		assert_int_equal(count_of(&s, SKED_EVENT_END, id),
		                 id == 25 || id == 26 ? 0 : 1);
	assert_int_equal(count_of(&s, SKED_EVENT_END, 25), 0);
	assert_int_equal(count_of(&s, SKED_EVENT_ATTEMPT, 21), 1);
	assert_int_equal(count_of(&s, SKED_EVENT_ATTEMPT, 23), 1);
	assert_int_equal(count_of(&s, SKED_EVENT_ATTEMPT, 24), 1);
	for (int i = 1; i < s.n; i++)
		assert_true(s.at[i] >= s.at[i - 1]);
	/* read on to the horizon: next is about now less settle */
	assert_true(next >= now - 1000 && next < now + 60000);

	/* an end after that position is served once it has settled */
	int64_t t26 = next + 1;
	done_row(h, 26, SKED_DEAD, "b", t26);
	struct seen s2 = {0};
	struct timespec ts = {0, 30 * 1000000};
	nanosleep(&ts, NULL);
	read_all(h, next, &f, 3, &s2);
	assert_int_equal(s2.n, 1);
	assert_int_equal(s2.id[0], 26);

	/* the fields of an end, and a filter */
	sked_event *e = NULL;
	size_t n = 0;
	sked_event_filter fb = {.kind = "b", .settle_ms = 1000};
	assert_int_equal(sked_events_read(h, t, &fb, 10, &e, &n, &next),
	                 SKED_OK);
	/* 21's attempt and end, 23's attempt and end, then 26 */
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(e[i].kind, "b");
		assert_int_equal(e[i].at_ms, i < 4 ? t + 1 : t26);
	}
	assert_int_equal(e[4].id, 26);
	assert_int_equal(e[0].type, SKED_EVENT_ATTEMPT);
	assert_string_equal(e[0].error, "boom");
	assert_int_equal(e[2].type, SKED_EVENT_END);
	assert_int_equal(e[2].id, 21);
	assert_int_equal(e[2].status, SKED_DEAD);
	assert_int_equal(e[3].id, 23);
	assert_string_equal(e[3].result, "r23");
	assert_int_equal(e[3].started_ms, t + 1 - 5);
	sked_events_free(e, n);

	/* from now: nothing, and next at the horizon */
	assert_int_equal(sked_events_read(h, -1, &f, 10, &e, &n, &next),
	                 SKED_OK);
	assert_int_equal(n, 0);
	assert_true(next >= now - 1000);

	/* bad arguments */
	assert_int_equal(sked_events_read(h, 0, &f, 0, &e, &n, &next),
	                 SKED_EINVAL);
	sked_event_filter bad = {.kind = "no such"};
	assert_int_equal(sked_events_read(h, 0, &bad, 10, &e, &n, &next),
	                 SKED_EINVAL);
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(pages_serve_each_event_once_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
