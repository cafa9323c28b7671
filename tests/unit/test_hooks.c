/*
 * test_hooks.c — the leader's webhooks turn (sked__hooks_turn,
 * model/hooks.c): the first turn starts the cursor at the feed's now and
 * enqueues nothing; a turn enqueues one sked.hook task per end that an
 * on_end matches (a kind's URL before its queue's; none for ends of
 * kinds and queues without one, nor for a delivery's own end), in the
 * ended task's queue, with the URL and the event's fields in its
 * payload, and moves the cursor; a turn after it, by the same node or
 * another, enqueues nothing again; a page smaller than the ends says it
 * was full, and the turns after it take the rest, each end once.
 *
 * Layer: tests (a real SQLite database file, sqlite_fixture.h); ended
 * rows are written by hand with chosen end times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "handle/internal.h"
#include "model/hooks.h"
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

static void
done_row(sked *h, int64_t id, int status, const char *kind, const char *queue,
         int64_t at)
{
	char sql[600];
	snprintf(sql, sizeof sql,
	         "INSERT INTO {p}task_done (id, queue, kind, status, run_at, "
	         "attempts, created_at, updated_at, started_at, finished_at, "
	         "outcome, result) VALUES (%lld, '%s', '%s', %d, 0, 1, 0, 0, "
	         "%lld, %lld, 'succeeded', 'r%lld')",
	         (long long)id, queue, kind, status, (long long)at - 5,
	         (long long)at, (long long)id);
	exec(h, sql);
}

/* the delivery tasks' payloads, by ended task id: url and event */
static int
deliveries(sked *h, json_t **by_id, int max)
{
	char *x = sked__dialect_expand(
	        h->dialect, h->prefix,
	        "SELECT payload, queue FROM {p}task WHERE kind = 'sked.hook'");
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, x, NULL, 0, &r), SKED_OK);
	free(x);
	for (int i = 0; i < r.nrows; i++) {
		json_t *o = json_loads(sked__res_text(&r, i, 0), 0, NULL);
		assert_non_null(o);
		json_t *e = json_object_get(o, "event");
		int64_t id = json_integer_value(json_object_get(e, "id"));
		assert_true(id > 0 && id < max);
		assert_null(by_id[id]); /* one each */
		/* in the ended task's queue */
		assert_string_equal(
		        sked__res_text(&r, i, 1),
		        json_string_value(json_object_get(e, "queue")));
		by_id[id] = o;
	}
	int n = r.nrows;
	sked__res_clear(&r);
	return n;
}

static void
turn_enqueues_each_matched_end_once(void **state)
{
	(void)state;
	char url[512];
	fixture_url("hooks", url, sizeof url);
	sked *h = fixture_open(url, NULL);
	sked_hook_rule rules[] = {
	        {.queue = "q", .url = "http://127.0.0.1:1/q"},
	        {.kind = "a", .url = "http://127.0.0.1:1/a"},
	};
	int made = -1;
	/* the first turn: the cursor starts at the feed's now */
	assert_int_equal(
	        sked__hooks_turn(h, rules, 2, "n1:1", 100, &made, NULL),
	        SKED_OK);
	assert_int_equal(made, 0);
	int64_t now = 0;
	assert_int_equal(sked__now(h, &now), SKED_OK);
	done_row(h, 1, SKED_SUCCEEDED, "a", "q", now - 30000);
	/* ended before the cursor's start: not delivered */
	assert_int_equal(
	        sked__hooks_turn(h, rules, 2, "n1:2", 100, &made, NULL),
	        SKED_OK);
	assert_int_equal(made, 0);

	/* move the cursor back, as if it had started a minute ago */
	char sql[200];
	snprintf(sql, sizeof sql, "UPDATE {p}hook_cursor SET pos = %lld",
	         (long long)(now - 60000));
	exec(h, sql);
	done_row(h, 2, SKED_SUCCEEDED, "b", "q", now - 29000);
	done_row(h, 3, SKED_SUCCEEDED, "c", "other", now - 28000);
	done_row(h, 4, SKED_SUCCEEDED, SKED_HOOK_KIND, "q", now - 27000);
	done_row(h, 5, SKED_DEAD, "a", "other", now - 26000);
	done_row(h, 6, SKED_CANCELLED, "b", "q", now - 25000);
	assert_int_equal(
	        sked__hooks_turn(h, rules, 2, "n1:3", 100, &made, NULL),
	        SKED_OK);
	assert_int_equal(made, 4);
	json_t *d[8] = {0};
	assert_int_equal(deliveries(h, d, 8), 4);
	static const char *const want_url[8] = {
	        NULL, "http://127.0.0.1:1/a", "http://127.0.0.1:1/q", NULL,
	        NULL, "http://127.0.0.1:1/a", "http://127.0.0.1:1/q"};
	static const char *const want_status[8] = {
	        NULL, "succeeded", "succeeded", NULL,
	        NULL, "dead",      "cancelled"};
	for (int i = 1; i < 8; i++) {
		if (!want_url[i]) {
			assert_null(d[i]);
			continue;
		}
		assert_non_null(d[i]);
		assert_string_equal(
		        json_string_value(json_object_get(d[i], "url")),
		        want_url[i]);
		json_t *e = json_object_get(d[i], "event");
		assert_string_equal(
		        json_string_value(json_object_get(e, "type")), "end");
		assert_string_equal(
		        json_string_value(json_object_get(e, "status")),
		        want_status[i]);
		char r[16];
		snprintf(r, sizeof r, "r%d", i);
		assert_string_equal(
		        json_string_value(json_object_get(e, "result")), r);
		assert_true(json_integer_value(
		                    json_object_get(e, "finished_ms")) > 0);
		json_decref(d[i]);
	}

	/* again, by this node or another: nothing more */
	assert_int_equal(
	        sked__hooks_turn(h, rules, 2, "n1:4", 100, &made, NULL),
	        SKED_OK);
	assert_int_equal(made, 0);
	assert_int_equal(
	        sked__hooks_turn(h, rules, 2, "n2:1", 100, &made, NULL),
	        SKED_OK);
	assert_int_equal(made, 0);
	json_t *again[8] = {0};
	assert_int_equal(deliveries(h, again, 8), 4);
	for (int i = 0; i < 8; i++)
		json_decref(again[i]);

	/* pages smaller than the ends: each full page says so, and the
	 * turns after it take the rest, each end once */
	for (int i = 7; i <= 10; i++)
		done_row(h, i, SKED_SUCCEEDED, "a", "q", now - 24000 + i);
	/* back to just before them (they are written in the past) */
	snprintf(sql, sizeof sql, "UPDATE {p}hook_cursor SET pos = %lld",
	         (long long)(now - 24000));
	exec(h, sql);
	int more = -1, total = 0;
	for (int t = 0; t < 3; t++) {
		char id[16];
		snprintf(id, sizeof id, "n1:p%d", t);
		assert_int_equal(
		        sked__hooks_turn(h, rules, 2, id, 2, &made, &more),
		        SKED_OK);
		assert_int_equal(made, t < 2 ? 2 : 0);
		assert_int_equal(more, t < 2);
		total += made;
	}
	assert_int_equal(total, 4);
	json_t *all[16] = {0};
	assert_int_equal(deliveries(h, all, 16), 8);
	for (int i = 0; i < 16; i++)
		json_decref(all[i]);
	sked_close(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(turn_enqueues_each_matched_end_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
