/*
 * test_limits.c — cluster-wide limits, the parts without a database:
 * "N/DURATION" parsing, the rate's sliding window record, picking
 * candidates under a per-key limit, the fair order of a fair queue's
 * candidates, and the limit statements as each
 * dialect renders them (SQL Server's included: there is no server here,
 * so its texts are checked as text).
 *
 * Layer: tests (pure: no database).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dialect/dialect.h"
#include "model/limits.h"
#include "sked.h"
#include "util/buf.h"

static void
rates_parse(void **state)
{
	(void)state;
	int n;
	int64_t ms;
	assert_int_equal(sked_parse_rate("20/1s", &n, &ms), SKED_OK);
	assert_int_equal(n, 20);
	assert_int_equal(ms, 1000);
	assert_int_equal(sked_parse_rate("100/1m", &n, &ms), SKED_OK);
	assert_int_equal(ms, 60000);
	assert_int_equal(sked_parse_rate("100000/1d", &n, &ms), SKED_OK);
	assert_int_equal(sked_parse_rate("1/500ms", &n, &ms), SKED_OK);
	assert_int_equal(ms, 500);
	static const char *const bad[] = {
	        "5",     "0/1s",   "/1s",
	        "5/",    "5/0s",   "5/x",
	        "-1/1s", "1.5/1s", "100001/1s",
	        "1/2d",  " 5/1s",  "5/1s ",
	        "",      "5//1s",  "99999999999999999999/1s"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (sked_parse_rate(bad[i], &n, &ms) != SKED_EINVAL)
			fail_msg("'%s' parsed as a rate", bad[i]);
	assert_int_equal(sked_parse_rate(NULL, &n, &ms), SKED_EINVAL);
}

static void
rate_window_slides(void **state)
{
	(void)state;
	/* starts at 1000 (8), 1500 (8), 1999 (4); window 1000 ms */
	const char *log = "1000:8,1500:8,1999:4";
	assert_int_equal(sked__rate_used(log, 1999, 1000, 20), 20);
	/* (now - window, now]: at 2000 the start at 1000 has left */
	assert_int_equal(sked__rate_used(log, 2000, 1000, 20), 12);
	assert_int_equal(sked__rate_used(log, 2500, 1000, 20), 4);
	assert_int_equal(sked__rate_used(log, 2998, 1000, 20), 4);
	assert_int_equal(sked__rate_used(log, 2999, 1000, 20), 0);
	assert_int_equal(sked__rate_used(log, 3000, 1000, 20), 0);
	assert_int_equal(sked__rate_used("", 5, 1000, 20), 0);
	assert_int_equal(sked__rate_used(NULL, 5, 1000, 20), 0);
	/* a damaged record counts as full: it can only slow a queue */
	assert_int_equal(sked__rate_used("12x", 5, 1000, 20), 20);
	assert_int_equal(sked__rate_used("1:2,oops", 5, 1000, 20), 20);
	assert_int_equal(sked__rate_last(log), 1999);
	assert_true(sked__rate_last("") == INT64_MIN);

	sked_buf b = {0};
	sked__rate_add(log, 2000, 1000, 2000, 3, &b);
	assert_string_equal(b.p, "1500:8,1999:4,2000:3");
	sked__buf_free(&b);
	memset(&b, 0, sizeof b);
	/* a second claim at the same instant merges */
	sked__rate_add("1500:8,2000:3", 2000, 1000, 2000, 2, &b);
	assert_string_equal(b.p, "1500:8,2000:5");
	sked__buf_free(&b);
	memset(&b, 0, sizeof b);
	sked__rate_add(NULL, 10, 1000, 10, 1, &b);
	assert_string_equal(b.p, "10:1");
	sked__buf_free(&b);
	memset(&b, 0, sizeof b);
	/* nothing started: expired entries still leave */
	sked__rate_add("1:1", 5000, 1000, 5000, 0, &b);
	assert_string_equal(b.p, "");
	sked__buf_free(&b);
}

static void
per_key_pick(void **state)
{
	(void)state;
	const char *cand[] = {"a", "a", "b", NULL, "c", "b", "a", NULL};
	int pick[8];
	/* per key 1, "b" has one running already */
	const char *keys[] = {"b"};
	int running[] = {1};
	int n = sked__limits_pick(cand, 8, 8, 1, keys, running, 1, pick);
	assert_int_equal(n, 4);
	int want1[] = {0, 3, 4, 7}; /* a, NULL, c, NULL */
	for (int i = 0; i < n; i++)
		assert_int_equal(pick[i], want1[i]);
	/* per key 2, at most 3 */
	n = sked__limits_pick(cand, 8, 3, 2, NULL, NULL, 0, pick);
	assert_int_equal(n, 3);
	assert_int_equal(pick[0], 0);
	assert_int_equal(pick[1], 1);
	assert_int_equal(pick[2], 2);
	/* no per-key limit: in order */
	n = sked__limits_pick(cand, 8, 5, 0, NULL, NULL, 0, pick);
	assert_int_equal(n, 5);
	assert_int_equal(pick[4], 4);
	/* want 0 picks nothing */
	assert_int_equal(sked__limits_pick(cand, 8, 0, 1, NULL, NULL, 0, pick),
	                 0);
}

static const char *
render(const sked_dialect *d, sked_sql id, char **all)
{
	char err[256];
	assert_int_equal(sked__dialect_render(d, "sked_", all, err, sizeof err),
	                 SKED_OK);
	return all[id];
}

/* Each product's limited claim serialises on the limit row its own way. */
static void
limit_row_locks(void **state)
{
	(void)state;
	char *all[SKED_SQL__COUNT];
	const char *s;

	s = render(&sked__dialect_postgresql, SKED_SQL_LIM_LOCK, all);
	assert_non_null(strstr(s, "FROM sked_queue_limit WHERE queue = ?1 FOR "
	                          "UPDATE"));
	sked__dialect_free_rendered(all);

	s = render(&sked__dialect_mysql, SKED_SQL_LIM_LOCK, all);
	assert_non_null(strstr(s, "FOR UPDATE"));
	assert_null(strstr(s, "SKIP LOCKED")); /* it must wait its turn */
	/* running rows through their index, never the queue's finished */
	assert_non_null(strstr(all[SKED_SQL_LIM_RUNNING],
	                       "FORCE INDEX (sked_task_lease)"));
	sked__dialect_free_rendered(all);

	/* SQLite: BEGIN IMMEDIATE holds the write lock; no FOR UPDATE */
	s = render(&sked__dialect_sqlite, SKED_SQL_LIM_LOCK, all);
	assert_null(strstr(s, "FOR UPDATE"));
	assert_string_equal(sked__dialect_sqlite.begin_claim,
	                    "BEGIN IMMEDIATE");
	sked__dialect_free_rendered(all);

	/* SQL Server: an update lock on the row, held to commit */
	s = render(&sked__dialect_sqlserver, SKED_SQL_LIM_LOCK, all);
	assert_non_null(strstr(s, "FROM sked_queue_limit WITH (UPDLOCK, "
	                          "ROWLOCK) WHERE queue = ?1"));
	assert_null(strstr(s, "READPAST")); /* never skip the row */
	assert_null(strstr(s, "FOR UPDATE"));
	assert_non_null(strstr(s, "DATEDIFF_BIG"));
	/* candidates: OFFSET … FETCH after the ORDER BY, no LIMIT */
	assert_non_null(strstr(all[SKED_SQL_LIM_CAND],
	                       "ORDER BY priority DESC, run_at, id OFFSET 0 "
	                       "ROWS FETCH NEXT ?3 ROWS ONLY"));
	assert_null(strstr(all[SKED_SQL_LIM_CAND], "LIMIT"));
	/* the claim sets the judged start, SQL Server's way */
	assert_non_null(strstr(all[SKED_SQL_LIM_CLAIM], "started_at = "
	                                                "DATEADD("));
	sked__dialect_free_rendered(all);
}

/* The claims of "every queue but the limited ones", on every product,
 * read the limit table in the statement that claims. */
static void
every_queue_but_the_limited(void **state)
{
	(void)state;
	static const sked_dialect *const ds[] = {
	        &sked__dialect_sqlite, &sked__dialect_postgresql,
	        &sked__dialect_mysql, &sked__dialect_sqlserver};
	static const char needle[] =
	        "queue NOT IN (SELECT queue FROM sked_queue_limit)";
	for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
		char *all[SKED_SQL__COUNT];
		render(ds[i], SKED_SQL_NOW, all);
		if (ds[i]->claim_one_statement)
			assert_non_null(strstr(all[SKED_SQL_CLAIM_XQ], needle));
		assert_non_null(strstr(all[SKED_SQL_CAND_XQ], needle));
		if (ds[i]->caps & (SKED_CAP_SKIP_LOCKED | SKED_CAP_READPAST))
			assert_non_null(strstr(all[SKED_SQL_LOCK_XQ], needle));
		/* and the plain forms are what they were: no limit table */
		assert_null(strstr(all[SKED_SQL_CLAIM_ANY], "queue_limit"));
		assert_null(strstr(all[SKED_SQL_CLAIM_Q], "queue_limit"));
		assert_null(strstr(all[SKED_SQL_CAND_Q], "queue_limit"));
		/* per key: keys with ?6 running are left out */
		assert_non_null(strstr(all[SKED_SQL_LIM_CAND_KEY],
		                       "HAVING COUNT(*) >= ?6"));
		/* the limited claim claims only what is still due */
		assert_non_null(strstr(all[SKED_SQL_LIM_CLAIM], "({ids})"));
		assert_non_null(strstr(
		        all[SKED_SQL_LIM_CLAIM],
		        ds[i] == &sked__dialect_sqlserver ||
		                        ds[i] == &sked__dialect_postgresql
		                ? "status IN (0, 4) AND run_at <="
		                : "status IN (0, 4)"));
		sked__dialect_free_rendered(all);
	}
}

/* The fair order: within a priority every key's first task before any
 * key's second, whatever the backlog of one key; priority first; in a
 * round the keys take turns in key order after the last key picked (no
 * key, NULL, sorts as ""); a claim of one task at a time goes round the
 * keys, never back to the oldest backlog each time. */
static void
fair_round_robin(void **state)
{
	(void)state;
	/* read key by key, each in claim order, as fair_read reads them */
	const sked_fair_cand in[] = {
	        {.id = 20, .key = NULL, .priority = 0, .run_at_ms = 500},
	        {.id = 1, .key = "big", .priority = 0, .run_at_ms = 100},
	        {.id = 2, .key = "big", .priority = 0, .run_at_ms = 101},
	        {.id = 3, .key = "big", .priority = 0, .run_at_ms = 102},
	        {.id = 4, .key = "big", .priority = 0, .run_at_ms = 103},
	        {.id = 9, .key = "hot", .priority = 5, .run_at_ms = 900},
	        {.id = 10, .key = "hot", .priority = 0, .run_at_ms = 901},
	        {.id = 7, .key = "small", .priority = 0, .run_at_ms = 300},
	        {.id = 8, .key = "small", .priority = 0, .run_at_ms = 301},
	};
	enum { N = sizeof in / sizeof in[0] };
	sked_fair_cand c[N];
	memcpy(c, in, sizeof c);
	sked__fair_order(c, N, NULL);
	/* priority 5 first; then round 0 by key (none, big, hot, small),
	 * round 1 (big 2, small 8), then big's rest */
	const int64_t want[N] = {9, 20, 1, 10, 7, 2, 8, 3, 4};
	for (int i = 0; i < N; i++)
		assert_int_equal(c[i].id, want[i]);
	assert_int_equal(c[0].round, 0);
	assert_int_equal(c[N - 1].round, 3);
	/* the last pick was big's: the rounds begin after it */
	memcpy(c, in, sizeof c);
	sked__fair_order(c, N, "big");
	const int64_t after_big[N] = {9, 10, 7, 20, 1, 8, 2, 3, 4};
	for (int i = 0; i < N; i++)
		assert_int_equal(c[i].id, after_big[i]);
	/* one task per claim goes round the keys: big, small, big, … */
	const sked_fair_cand two[] = {
	        {.id = 1, .key = "big", .priority = 0, .run_at_ms = 1},
	        {.id = 5, .key = "small", .priority = 0, .run_at_ms = 9},
	};
	sked_fair_cand d[2];
	memcpy(d, two, sizeof d);
	sked__fair_order(d, 2, NULL);
	assert_int_equal(d[0].id, 1);
	memcpy(d, two, sizeof d);
	sked__fair_order(d, 2, "big");
	assert_int_equal(d[0].id, 5);
	memcpy(d, two, sizeof d);
	sked__fair_order(d, 2, "small");
	assert_int_equal(d[0].id, 1);
	sked__fair_order(d, 0, NULL); /* nothing to do */
}

/* Weights (queue set --weight): a key of weight N takes N turns a round.
 * A batch claim of 8 from a weight-3 key and a weight-1 key with long
 * backlogs takes them 3:1 in rounds; claims of one task at a time, each
 * ordering again after the last pick and its turns (sked__fair_used),
 * take them 3:1 too, where the unweighted order alternates 1:1. */
static void
fair_weighted(void **state)
{
	(void)state;
	enum { PER = 12, N = 2 * PER };
	sked_fair_cand in[N];
	for (int i = 0; i < PER; i++) {
		in[i] = (sked_fair_cand){
		        .id = 100 + i, .key = "a", .weight = 3, .run_at_ms = i};
		in[PER + i] = (sked_fair_cand){
		        .id = 200 + i, .key = "b", .weight = 1, .run_at_ms = i};
	}
	sked_fair_cand c[N];
	memcpy(c, in, sizeof c);
	sked__fair_order_turns(c, N, NULL, 0);
	const int64_t want[8] = {100, 101, 102, 200, 103, 104, 105, 201};
	for (int i = 0; i < 8; i++)
		assert_int_equal(c[i].id, want[i]);
	/* the same without weights: a, b, a, b */
	for (int i = 0; i < N; i++)
		in[i].weight = 0;
	memcpy(c, in, sizeof c);
	sked__fair_order_turns(c, N, NULL, 0);
	assert_int_equal(c[0].id, 100);
	assert_int_equal(c[1].id, 200);
	assert_int_equal(c[2].id, 101);
	for (int i = 0; i < N; i++)
		in[i].weight = i < PER ? 3 : 1;

	/* one task a claim: the handle remembers the key and its turns */
	const char *after = NULL;
	int used = 0, na = 0, taken_a = 0, taken_b = 0;
	for (int claim = 0; claim < 16; claim++) {
		sked_fair_cand d[N];
		/* what is left: each key's untaken tasks, in claim order */
		int nd = 0;
		for (int i = taken_a; i < PER; i++)
			d[nd++] = in[i];
		for (int i = taken_b; i < PER; i++)
			d[nd++] = in[PER + i];
		sked__fair_order_turns(d, nd, after, used);
		int pick = 0;
		used = sked__fair_used(d, &pick, 1, after, used);
		after = d[0].key; /* a string literal: outlives d */
		if (strcmp(after, "a") == 0) {
			taken_a++;
			na++;
		} else
			taken_b++;
	}
	assert_int_equal(na, 12); /* 16 claims: 3 of a for each b */
	assert_int_equal(taken_b, 4);
	/* used counts on only while the same key keeps its turn */
	sked_fair_cand e[2] = {{.id = 1, .key = "a", .weight = 3},
	                       {.id = 2, .key = "b", .weight = 1}};
	int p0 = 0, p1 = 1;
	assert_int_equal(sked__fair_used(e, &p0, 1, "a", 1), 2);
	assert_int_equal(sked__fair_used(e, &p0, 1, "b", 1), 1);
	assert_int_equal(sked__fair_used(e, &p1, 1, "a", 2), 1);
	int both[2] = {0, 1};
	assert_int_equal(sked__fair_used(e, both, 2, "a", 1), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(rates_parse),
	        cmocka_unit_test(rate_window_slides),
	        cmocka_unit_test(per_key_pick),
	        cmocka_unit_test(limit_row_locks),
	        cmocka_unit_test(every_queue_but_the_limited),
	        cmocka_unit_test(fair_round_robin),
	        cmocka_unit_test(fair_weighted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
