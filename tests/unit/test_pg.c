/*
 * test_pg.c — the PostgreSQL driver and dialect against a real server.
 *
 * Layer: tests. The ?N → $N rewrite, the SQLSTATE mapping and the
 * closed-port connect need no server; everything else runs against
 * SKED_TEST_PG_URL and is skipped, loudly, when it is unset. Each run uses
 * a table prefix of its own and drops its tables afterwards. What users
 * rely on: passwords never in messages, an override the server cannot
 * honour refused at start, a lost session reported as unavailable (so the
 * worker reconnects), batch finishes that apply only what the node still
 * holds and record the rest as late, batch enqueues that return ids in
 * input order with payloads byte for byte, times to the millisecond,
 * lease renewals that never wait for a row another transaction holds,
 * worker sessions that plan once and compile nothing (jit off), and
 * claims that read the due rows, not the tasks waiting for later.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/driver/errmap.h"
#include "dialect/dialect.h"
#include "handle/internal.h"
#include "model/lease.h"
#include "sked.h"

#ifdef SKED_HAVE_PG

char *sked__pg_rewrite(const char *sql, unsigned char *used, int nused);
void sked__pg_forget_pooler(void);

static void
rewrite_is(const char *sql, const char *want)
{
	char *out = sked__pg_rewrite(sql, NULL, 0);
	assert_non_null(out);
	assert_string_equal(out, want);
	free(out);
}

static void
rewrite_markers(void **state)
{
	(void)state;
	rewrite_is("SELECT ?1, ?2", "SELECT $1, $2");
	rewrite_is("UPDATE t SET a = ?2, b = ?1 WHERE id = ?10",
	           "UPDATE t SET a = $2, b = $1 WHERE id = $10");
	/* casts stay casts */
	rewrite_is("SELECT ?1::bigint[]", "SELECT $1::bigint[]");
	/* quotes, doubled quotes, E'' escapes, identifiers and comments
	 * hold text, not markers */
	rewrite_is(
	        "SELECT '?1', 'it''s ?2', E'a\\'?3', \"?4\", ?5 -- ?6\n, ?7",
	        "SELECT '?1', 'it''s ?2', E'a\\'?3', \"?4\", $5 -- ?6\n, $7");
	/* in a standard string a backslash is just a character */
	rewrite_is("SELECT 'a\\', ?1", "SELECT 'a\\', $1");
	/* bare markers count on from the highest seen */
	rewrite_is("SELECT ?, ?, ?5, ?", "SELECT $1, $2, $5, $6");
	/* which parameters the text names */
	unsigned char used[4];
	char *out = sked__pg_rewrite("SELECT ?3 LIMIT ?1 -- ?2", used, 4);
	assert_non_null(out);
	free(out);
	assert_int_equal(used[0], 1);
	assert_int_equal(used[1], 0);
	assert_int_equal(used[2], 1);
	assert_int_equal(used[3], 0);
}

static void
error_mapping(void **state)
{
	(void)state;
	assert_int_equal(sked__errmap_sqlstate("23505"), SKED_DBE_UNIQUE);
	assert_int_equal(sked__errmap_sqlstate("40001"), SKED_DBE_RETRY);
	assert_int_equal(sked__errmap_sqlstate("40P01"), SKED_DBE_RETRY);
	assert_int_equal(sked__errmap_sqlstate("55P03"), SKED_DBE_RETRY);
	assert_int_equal(sked__errmap_sqlstate("42P01"), SKED_DBE_NOTABLE);
	assert_int_equal(sked__errmap_sqlstate("25006"), SKED_DBE_READONLY);
	assert_int_equal(sked__errmap_sqlstate("08006"), SKED_DBE_CONNECT);
	assert_int_equal(sked__errmap_sqlstate("08001"), SKED_DBE_CONNECT);
	assert_int_equal(sked__errmap_sqlstate("57P01"), SKED_DBE_CONNECT);
	assert_int_equal(sked__errmap_sqlstate("42501"), SKED_DBE_PERM);
	assert_int_equal(sked__errmap_mysql(1142), SKED_DBE_PERM);
	assert_int_equal(sked__errmap_mysql(1044), SKED_DBE_PERM);
	assert_int_equal(sked__errmap_mssql(229), SKED_DBE_PERM);
	assert_int_equal(sked__errmap_sqlstate("23503"), SKED_DBE_OTHER);
	assert_int_equal(sked__errmap_sqlstate("42601"), SKED_DBE_OTHER);
	assert_int_equal(sked__errmap_sqlstate(NULL), SKED_DBE_OTHER);
	assert_int_equal(sked__errmap_sqlstate(""), SKED_DBE_OTHER);
}

static void
closed_port(void **state)
{
	(void)state;
	sked *h = NULL;
	int rc = sked_open("postgres://u:s3cret@127.0.0.1:1/x", NULL, &h);
	assert_int_equal(rc, SKED_EUNAVAILABLE);
	const char *msg = sked_errmsg(h);
	assert_null(strstr(msg, "s3cret"));
	assert_null(strchr(msg, '\n'));
	assert_non_null(strstr(msg, "127.0.0.1")); /* says where it tried */
	sked_close(h);
	/* a password in the query string is masked too */
	rc = sked_open("postgresql://u@127.0.0.1:1/x?password=s3cret&"
	               "connect_timeout=2",
	               NULL, &h);
	assert_int_equal(rc, SKED_EUNAVAILABLE);
	assert_null(strstr(sked_errmsg(h), "s3cret"));
	sked_close(h);
}

/* ---- with a server ---- */

static const char *
pg_url(void)
{
	const char *u = getenv("SKED_TEST_PG_URL");
	return u && *u ? u : NULL;
}

static char prefix[32];

static sked *
open_pg(const char *strategy)
{
	if (!prefix[0])
		snprintf(prefix, sizeof prefix, "tpg%d_", (int)getpid());
	sked_options o = {.prefix = prefix, .migrate = 1, .strategy = strategy};
	sked *h = NULL;
	int rc = sked_open(pg_url(), &o, &h);
	if (rc != SKED_OK)
		fail_msg("sked_open: %s", sked_errmsg(h));
	return h;
}

static void
strategy_refused(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked_options o = {.prefix = "tpgx_", .strategy = "readpast"};
	sked *h = NULL;
	assert_int_equal(sked_open(pg_url(), &o, &h), SKED_ESTRATEGY);
	assert_non_null(strstr(sked_errmsg(h), "readpast"));
	sked_close(h);
	/* what detection picks */
	h = open_pg(NULL);
	sked_info info;
	assert_int_equal(sked_get_info(h, &info), SKED_OK);
	assert_string_equal(info.driver, "libpq");
	assert_string_equal(info.dialect, "postgresql");
	assert_string_equal(info.product, "PostgreSQL");
	assert_string_equal(info.strategy, "skip-locked");
	sked_close(h);
}

static void
lost_session_reconnects(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	/* the server ends this very session, as a restart would */
	int rc = sked__qdyn(h, "SELECT pg_terminate_backend(pg_backend_pid())",
	                    NULL, 0, NULL);
	assert_int_equal(rc, SKED_EUNAVAILABLE);
	int64_t now = 0;
	assert_int_equal(sked_now(h, &now), SKED_EUNAVAILABLE);
	assert_int_equal(sked__reconnect(h), SKED_OK);
	assert_int_equal(sked_now(h, &now), SKED_OK);
	assert_true(now > 1600000000000LL);
	sked_close(h);
}

/* Log lines that say a pooler was found. */
static int pooler_lines;

static void
count_pooler(int level, const char *line, void *user)
{
	(void)level;
	(void)user;
	if (strstr(line, "a connection pooler stands between"))
		pooler_lines++;
}

/* Count the pooler lines from a clean start (nothing found yet). */
static void
watch_pooler(int on)
{
	sked__pg_forget_pooler();
	pooler_lines = 0;
	sked_set_log(on ? count_pooler : NULL, NULL,
	             on ? SKED_LOG_INFO : SKED_LOG_WARN);
}

static int
stats_rc(sked *h)
{
	sked_queue_stats *qs = NULL;
	size_t n = 0;
	int rc = sked_stats(h, &qs, &n);
	free(qs);
	return rc;
}

/* The name sked gave statement slot on h's connection: sked_<serial>_<slot>,
 * the serial read from a statement the open prepared (the schema check). */
static void
statement_name(sked *h, int slot, char *name, size_t len)
{
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h,
	                            "SELECT name FROM pg_prepared_statements "
	                            "WHERE name LIKE 'sked!_%' ESCAPE '!' "
	                            "LIMIT 1",
	                            NULL, 0, &r),
	                 SKED_OK);
	assert_int_equal(r.nrows, 1);
	unsigned serial = 0;
	assert_int_equal(sscanf(sked__res_text(&r, 0, 0), "sked_%u_", &serial),
	                 1);
	sked__res_clear(&r);
	snprintf(name, len, "sked_%u_%d", serial, slot);
}

/* Run "VERB name..." on h's own session, as another client would have. */
static void
on_session(sked *h, const char *verb, const char *name, const char *rest)
{
	char sql[128];
	snprintf(sql, sizeof sql, "%s %s%s", verb, name, rest);
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);
}

/* Behind a transaction pooler a named statement turns up on a server
 * session whose client never prepared it (42P05): without sked_pooling in
 * the URL the driver takes that for a pooler, says so once, and runs the
 * statement again unnamed; so does every later connection. Here another
 * client's statement is made by hand on a direct session. */
static void
pooler_found_by_a_foreign_statement(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	watch_pooler(1);
	sked *h = open_pg(NULL);
	/* a direct connection: its server process is the one it was told */
	assert_int_equal(sked__db_pooled(h->db), 0);
	assert_int_equal(pooler_lines, 0);
	char name[64];
	statement_name(h, SKED_SQL_STATS, name, sizeof name);
	on_session(h, "PREPARE", name, " AS SELECT 1");
	assert_int_equal(stats_rc(h), SKED_OK);
	assert_int_equal(sked__db_pooled(h->db), 1);
	assert_int_equal(pooler_lines, 1);
	assert_int_equal(stats_rc(h), SKED_OK);
	/* a later connection starts unnamed, and nothing more is said */
	sked *h2 = open_pg(NULL);
	assert_int_equal(sked__db_pooled(h2->db), 1);
	assert_int_equal(stats_rc(h2), SKED_OK);
	assert_int_equal(pooler_lines, 1);
	sked_close(h2);
	sked_close(h);
	watch_pooler(0);
}

/* Its twin: a statement this connection prepared is gone from the server
 * session (26000). Inside a transaction that transaction is lost: the
 * call fails as a conflict (try again), and the next one runs unnamed. */
static void
pooler_found_by_a_missing_statement(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	watch_pooler(1);
	sked *h = open_pg(NULL);
	assert_int_equal(stats_rc(h), SKED_OK);
	char name[64];
	statement_name(h, SKED_SQL_STATS, name, sizeof name);
	on_session(h, "DEALLOCATE", name, "");
	assert_int_equal(sked__begin(h, 0), SKED_OK);
	assert_int_equal(stats_rc(h), SKED_EBUSY);
	assert_int_equal(sked__db_err(h->db)->kind, SKED_DBE_RETRY);
	sked__rollback(h);
	assert_int_equal(pooler_lines, 1);
	assert_int_equal(stats_rc(h), SKED_OK);
	sked_close(h);
	watch_pooler(0);
}

static void
times_to_the_ms(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	int64_t now = 0, id = 0;
	assert_int_equal(sked_now(h, &now), SKED_OK);
	sked_enqueue_opts o = {.run_at_ms = now + 3600 * 1000 + 7};
	assert_int_equal(sked_enqueue(h, "t", "x", 1, &o, &id, NULL), SKED_OK);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->run_at_ms, now + 3600 * 1000 + 7);
	assert_true(t->created_ms >= now && t->created_ms < now + 60000);
	assert_int_equal(t->finished_ms, 0); /* NULL stays NULL */
	sked_tasks_free(t, 1);
	sked_close(h);
}

static void
enqueue_many_in_order(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	const char *pl[] = {"plain", "quote \" and \\ back", "{1,2}", "",
	                    "NULL",  "ünïcode, comma"};
	size_t n = sizeof pl / sizeof pl[0];
	int64_t ids[6] = {0};
	sked_enqueue_opts o = {.queue = "bulk",
	                       .priority = 3,
	                       .delay_ms = 60000,
	                       .max_attempts = 2};
	assert_int_equal(sked_enqueue_many(h, "many", n, pl, NULL, &o, ids),
	                 SKED_OK);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(ids[i] > ids[i - 1]);
		sked_task *t = NULL;
		assert_int_equal(sked_task_get(h, ids[i], &t), SKED_OK);
		assert_string_equal(t->payload, pl[i]);
		assert_string_equal(t->queue, "bulk");
		assert_int_equal(t->priority, 3);
		assert_int_equal(t->max_attempts, 2);
		assert_true(t->run_at_ms >= t->created_ms + 60000);
		sked_tasks_free(t, 1);
	}
	sked_close(h);
}

static int64_t
count(sked *h, const char *tmpl, int64_t id)
{
	char *sql = sked__dialect_expand(h->dialect, h->prefix, tmpl);
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, sql, &p, 1, &r), SKED_OK);
	int64_t n = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	free(sql);
	return n;
}

/* Enqueue the n payloads pl (kind "f") into queue, with max_attempts
 * (0: the default), register node, and claim them all for it with a lease
 * of lease_ms; their ids in ids. */
static void
claim_all(sked *h, const char *node, const char *queue, int max_attempts,
          int64_t lease_ms, int n, const char *const *pl, int64_t *ids)
{
	sked_enqueue_opts eo = {.queue = queue, .max_attempts = max_attempts};
	assert_int_equal(sked_enqueue_many(h, "f", (size_t)n, (const char **)pl,
	                                   NULL, &eo, ids),
	                 SKED_OK);
	assert_int_equal(sked__node_register(h, node, lease_ms, 4), SKED_OK);
	sked_claim_req req = {.node_id = node,
	                      .queue = queue,
	                      .limit = n + 6,
	                      .lease_ms = lease_ms};
	sked_claimed *c = NULL;
	int got = 0;
	assert_int_equal(sked__claim(h, &req, &c, &got), SKED_OK);
	assert_int_equal(got, n);
	sked__claimed_free(c, got);
}

static void
finish_batch_contract(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	int64_t ids[4];
	const char *const pl[] = {"a", "b", "c", "d"};
	claim_all(h, "n1", "fin", 1, 30000, 4, pl, ids);
	/* ids[0] ok; ids[1] fails on its last attempt: dead; ids[2] is
	 * given back; ids[3] reports a stale attempt: late */
	sked_outcome o[4] = {
	        {.id = ids[0],
	         .attempt = 1,
	         .max_attempts = 1,
	         .what = SKED_FIN_OK,
	         .exit_code = 0,
	         .output = "out \"0\""},
	        {.id = ids[1],
	         .attempt = 1,
	         .max_attempts = 1,
	         .what = SKED_FIN_FAIL,
	         .exit_code = 3,
	         .error = "exit 3"},
	        {.id = ids[2],
	         .attempt = 1,
	         .max_attempts = 1,
	         .what = SKED_FIN_RELEASE,
	         .exit_code = -1},
	        {.id = ids[3],
	         .attempt = 7,
	         .max_attempts = 1,
	         .what = SKED_FIN_OK,
	         .exit_code = 0},
	};
	for (int i = 0; i < 4; i++)
		o[i].started_ms = 1700000000123LL;
	assert_int_equal(sked__finish(h, "n1", o, 4), SKED_OK);
	assert_true(o[0].applied && !o[0].dead);
	assert_true(o[1].applied && o[1].dead);
	assert_true(o[2].applied && !o[2].dead);
	assert_true(!o[3].applied && !o[3].dead);
	sked_task *t = NULL;
	int want_status[4] = {2, 3, 0, 1};
	/* a release keeps the attempt's number and raises the budget */
	int want_attempts[4] = {1, 1, 1, 1};
	int want_max[4] = {1, 1, 2, 1};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(sked_task_get(h, ids[i], &t), SKED_OK);
		assert_int_equal(t->status, want_status[i]);
		assert_int_equal(t->attempts, want_attempts[i]);
		assert_int_equal(t->max_attempts, want_max[i]);
		if (i == 1)
			assert_string_equal(t->last_error, "exit 3");
		sked_tasks_free(t, 1);
	}
	/* the attempts that ended their tasks are on the ended rows, with
	 * no run row (schema 5); the others are run rows */
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}task_done WHERE "
	                       "id = ?1 AND outcome = 'succeeded' "
	                       "AND output = 'out \"0\"' AND exit_code = 0 "
	                       "AND {ms:started_at} = 1700000000123",
	                       ids[0]),
	                 1);
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}task_done WHERE "
	                       "id = ?1 AND outcome = 'failed' AND "
	                       "exit_code = 3 AND error = 'exit 3'",
	                       ids[1]),
	                 1);
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}run WHERE "
	                       "task_id = ?1",
	                       ids[0]) +
	                         count(h,
	                               "SELECT COUNT(*) FROM {p}run WHERE "
	                               "task_id = ?1",
	                               ids[1]),
	                 0);
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}run WHERE "
	                       "task_id = ?1 AND outcome = 'released' AND "
	                       "exit_code IS NULL",
	                       ids[2]),
	                 1);
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}run WHERE "
	                       "task_id = ?1 AND outcome = 'late' AND "
	                       "attempt = 7 AND error LIKE 'late succeeded "
	                       "result, not applied%'",
	                       ids[3]),
	                 1);
	/* the late task is still held by n1, untouched */
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}task WHERE id = ?1 "
	                       "AND node_id = 'n1' AND status = 1",
	                       ids[3]),
	                 1);
	sked_close(h);
}

/* The batch statement finds each outcome's place by binary search over
 * the ids (dialect/postgresql.c, POS), so the model sends them sorted:
 * outcomes in any order must still each apply to their own task. Here
 * in descending id order, with two attempts of one task in one batch
 * (the first lost its lease and the same node claimed it again): the
 * later attempt, listed first, ends the task, and the first is late.
 * Before, such a batch failed whole (the ended row was copied once per
 * outcome of its id: a duplicate key), and the worker could record none
 * of its results. */
static void
finish_batch_any_order(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	enum { N = 6 };
	int64_t ids[N];
	const char *const pl[N] = {"a", "b", "c", "d", "e", "f"};
	claim_all(h, "n9", "anyorder", 1, 30000, N, pl, ids);
	/* ids[0] is on its second attempt, claimed by n9 again */
	char *sql = sked__dialect_expand(h->dialect, h->prefix,
	                                 "UPDATE {p}task SET attempts = 2, "
	                                 "max_attempts = 2 WHERE id = ?1");
	sked_val v = SKED_INTV(ids[0]);
	assert_int_equal(sked__qdyn(h, sql, &v, 1, NULL), SKED_OK);
	free(sql);
	/* what: 0 ok, 1 fail (dead) */
	struct {
		int k, attempt, fail;
	} in[] = {{5, 1, 0}, {4, 1, 1}, {3, 1, 0}, {2, 1, 1},
	          {1, 1, 0}, {0, 2, 0}, {0, 1, 0}};
	enum { M = sizeof in / sizeof in[0] };
	sked_outcome o[M];
	memset(o, 0, sizeof o);
	for (int i = 0; i < M; i++) {
		o[i].id = ids[in[i].k];
		o[i].attempt = in[i].attempt;
		o[i].max_attempts = in[i].k == 0 ? 2 : 1;
		o[i].what = in[i].fail ? SKED_FIN_FAIL : SKED_FIN_OK;
		o[i].exit_code = in[i].fail ? 9 : 0;
		o[i].error = in[i].fail ? "exit 9" : NULL;
		o[i].started_ms = 1700000000123LL;
	}
	if (sked__finish(h, "n9", o, M) != SKED_OK)
		fail_msg("finish: %s", sked_errmsg(h));
	/* every outcome applied but the first attempt of ids[0], whose
	 * lease was lost: that one is recorded as late */
	for (int i = 0; i < M; i++)
		assert_int_equal(o[i].applied,
		                 !(in[i].k == 0 && in[i].attempt == 1));
	assert_int_equal(count(h,
	                       "SELECT COUNT(*) FROM {p}run WHERE "
	                       "task_id = ?1 AND attempt = 1 AND "
	                       "outcome = 'late'",
	                       ids[0]),
	                 1);
	for (int k = 0; k < N; k++) {
		int fail = k == 4 || k == 2;
		sked_task *t = NULL;
		assert_int_equal(sked_task_get(h, ids[k], &t), SKED_OK);
		assert_int_equal(t->status, fail ? 3 : 2);
		assert_int_equal(t->attempts, k == 0 ? 2 : 1);
		sked_tasks_free(t, 1);
		assert_int_equal(
		        count(h,
		              "SELECT COUNT(*) FROM {p}task_done WHERE "
		              "id = ?1 AND outcome = CASE WHEN exit_code "
		              "= 9 THEN 'failed' ELSE 'succeeded' END",
		              ids[k]),
		        1);
	}
	sked_close(h);
}

/* Milliseconds left on task id's lease, by the server's clock. */
static int64_t
lease_left(sked *h, int64_t id)
{
	char sql[160];
	snprintf(sql, sizeof sql,
	         "SELECT (extract(epoch FROM lease_until - now()) * 1000)"
	         "::bigint FROM %stask WHERE id = ?1",
	         prefix);
	sked_val p = SKED_INTV(id);
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, sql, &p, 1, &r), SKED_OK);
	assert_int_equal(r.nrows, 1);
	int64_t ms = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return ms;
}

/* A lease renewal never waits for a row another transaction holds. The
 * node's own batch finish holds some of its running rows while it waits
 * for others; a renewal that waited in turn deadlocked with it, and the
 * server rolled one back only after deadlock_timeout (seen in a drain's
 * server log). Here another session holds one of two running rows: the
 * renewal (under a 3 s statement timeout, which the waiting one hit)
 * extends the other at once, tries the locked one a few times, and then
 * fails, so that the worker does not count on a lease it did not extend
 * (its watchdog then stops that handler in time, pg/t_lease_loss); once
 * the lock is gone the next renewal extends it and lists both. */
static void
renew_skips_locked_rows(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	sked *other = open_pg(NULL);
	int64_t ids[2];
	const char *const pl[] = {"a", "b"};
	claim_all(h, "rn", "renew", 0, 5000, 2, pl, ids);

	char sql[128];
	assert_int_equal(sked__begin(other, 0), SKED_OK);
	snprintf(sql, sizeof sql,
	         "SELECT id FROM %stask WHERE id = ?1 FOR "
	         "UPDATE",
	         prefix);
	sked_val p = SKED_INTV(ids[0]);
	assert_int_equal(sked__qdyn(other, sql, &p, 1, NULL), SKED_OK);

	assert_int_equal(
	        sked__qdyn(h, "SET statement_timeout = '3s'", NULL, 0, NULL),
	        SKED_OK);
	int64_t *held = NULL;
	int *att = NULL;
	int nheld = 0;
	int rc = sked__renew(h, "rn", 600000, &held, &att, &nheld);
	if (rc != SKED_EBUSY || !strstr(sked_errmsg(h), "locked by another"))
		fail_msg("the renewal waited for a locked row, or counted it "
		         "as renewed: %d %s",
		         rc, sked_errmsg(h));
	free(held);
	free(att);
	assert_true(lease_left(h, ids[1]) > 500000);
	assert_true(lease_left(h, ids[0]) <= 5000);
	/* the lock gone, the next renewal reaches that row too */
	sked__rollback(other);
	assert_int_equal(sked__renew(h, "rn", 600000, &held, &att, &nheld),
	                 SKED_OK);
	assert_int_equal(nheld, 2);
	free(held);
	free(att);
	assert_true(lease_left(h, ids[0]) > 500000);
	assert_int_equal(
	        sked__qdyn(h, "SET statement_timeout = 0", NULL, 0, NULL),
	        SKED_OK);
	sked_close(other);
	sked_close(h);
}

/* A worker's session plans once and compiles nothing: with the server's
 * default jit = on, a generic plan costed from a backlog's statistics
 * was compiled again on every execution (120 ms a fused statement). */
static void
worker_session_without_jit(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	sked *h = open_pg(NULL);
	sked__worker_session(h, "nj");
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h,
	                            "SELECT current_setting('jit'), "
	                            "current_setting('plan_cache_mode')",
	                            NULL, 0, &r),
	                 SKED_OK);
	assert_int_equal(r.nrows, 1);
	assert_string_equal(sked__res_text(&r, 0, 0), "off");
	assert_string_equal(sked__res_text(&r, 0, 1), "force_generic_plan");
	sked__res_clear(&r);
	sked_close(h);
}

/* Index and table blocks this session's transaction has read from the
 * task table and its indexes so far. */
static int64_t
task_blocks(sked *h, const char *px)
{
	char sql[384];
	snprintf(sql, sizeof sql,
	         "SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid))::bigint "
	         "FROM pg_class c WHERE c.relname = '%stask' OR (c.relname "
	         "LIKE '%stask\\_%%' AND c.relname NOT LIKE '%stask\\_done%%' "
	         "AND c.relname NOT LIKE '%stask\\_dep%%')",
	         px, px, px, px);
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, &r), SKED_OK);
	int64_t n = sked__res_int(&r, 0, 0);
	sked__res_clear(&r);
	return n;
}

/* Blocks one dialect statement reads, run in a transaction rolled back;
 * *rows: the rows it answered, *first: its first column's first value. */
static int64_t
blocks_of(sked *h, const char *px, sked_sql id, const sked_val *p, int np,
          int *rows, int64_t *first)
{
	assert_int_equal(sked__begin(h, 0), SKED_OK);
	int64_t before = task_blocks(h, px);
	sked_res r = {0};
	assert_int_equal(sked__q(h, id, p, np, &r), SKED_OK);
	*rows = r.nrows;
	*first = r.nrows > 0 ? sked__res_int(&r, 0, 0) : -1;
	sked__res_clear(&r);
	int64_t used = task_blocks(h, px) - before;
	sked__rollback(h);
	return used;
}

/* Tasks waiting for later cost a claim nothing. 100,000 tasks delayed a
 * day (analyzed, as autovacuum would, so the plans see them) sit in queue
 * "later"; a claim that finds nothing due, in that queue or in any, must
 * read a few dozen blocks of the task table and its indexes (34 and 30
 * here), not the backlog's index: one scan in (priority DESC, run_at,
 * id) order read every waiting row's entry (509 and 505 blocks here;
 * 0.3-0.7 s beside 10,000,000). The until-empty check of another queue
 * stays as small. The claim order holds across priorities: the due tasks
 * of queue "hot", two priorities, come highest first, then by due time,
 * and the check then answers 1 (outstanding). */
static void
claim_ignores_the_backlog(void **state)
{
	(void)state;
	if (!pg_url())
		skip();
	/* tables of its own: no other test's due task in "any queue" */
	char px[32];
	snprintf(px, sizeof px, "tpgb%d_", (int)getpid());
	sked_options so = {.prefix = px, .migrate = 1};
	sked *h = NULL;
	if (sked_open(pg_url(), &so, &h) != SKED_OK)
		fail_msg("sked_open: %s", sked_errmsg(h));
	enum { WAITING = 100000, CHUNK = 5000 };
	const char **pl = malloc(sizeof *pl * CHUNK);
	assert_non_null(pl);
	for (int i = 0; i < CHUNK; i++)
		pl[i] = "x";
	sked_enqueue_opts later = {.queue = "later", .delay_ms = 86400000};
	int64_t *got = malloc(sizeof *got * CHUNK);
	assert_non_null(got);
	for (int i = 0; i < WAITING / CHUNK; i++)
		if (sked_enqueue_many(h, "w", CHUNK, pl, NULL, &later, got) !=
		    SKED_OK)
			fail_msg("enqueue: %s", sked_errmsg(h));
	free(got);
	free(pl);
	char sql[256];
	snprintf(sql, sizeof sql, "ANALYZE %stask", px);
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);

	int rows = 0;
	int64_t first = 0;
	sked_val cq[5] = {SKED_TEXTV("nb"), SKED_INTV(30000), SKED_INTV(100),
	                  SKED_TEXTV("later"), SKED_TEXTV(NULL)};
	int64_t used = blocks_of(h, px, SKED_SQL_CLAIM_Q, cq, 5, &rows, &first);
	assert_int_equal(rows, 0);
	if (used > 64)
		fail_msg("a claim of queue 'later', nothing due, read %lld "
		         "blocks",
		         (long long)used);
	used = blocks_of(h, px, SKED_SQL_CLAIM_ANY, cq, 5, &rows, &first);
	assert_int_equal(rows, 0);
	if (used > 64)
		fail_msg("a claim of any queue, nothing due, read %lld blocks",
		         (long long)used);
	sked_val eq[2] = {SKED_TEXTV("hot"), SKED_TEXTV(NULL)};
	used = blocks_of(h, px, SKED_SQL_EMPTY_Q, eq, 2, &rows, &first);
	assert_int_equal(first, 0);
	if (used > 64)
		fail_msg("the until-empty check of queue 'hot' read %lld "
		         "blocks",
		         (long long)used);

	/* due now in "hot": two at priority 0, two at 5, enqueued in turn */
	int64_t ids[4];
	for (int i = 0; i < 4; i++) {
		sked_enqueue_opts hot = {.queue = "hot",
		                         .priority = i % 2 ? 5 : 0};
		assert_int_equal(
		        sked_enqueue(h, "w", "y", 1, &hot, &ids[i], NULL),
		        SKED_OK);
	}
	used = blocks_of(h, px, SKED_SQL_EMPTY_Q, eq, 2, &rows, &first);
	assert_int_equal(first, 1);
	sked_claim_req req = {
	        .node_id = "nb", .queue = "hot", .limit = 3, .lease_ms = 30000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].id, ids[1]);
	assert_int_equal(c[1].id, ids[3]);
	assert_int_equal(c[2].id, ids[0]);
	sked__claimed_free(c, n);
	req.queue = NULL;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].id, ids[2]);
	sked__claimed_free(c, n);

	/* 2,000 due tasks of 2,000 priorities: a claim of 10 walks down
	 * until 10 are due above, not through every priority */
	snprintf(sql, sizeof sql,
	         "INSERT INTO %stask (queue, kind, payload, priority, run_at) "
	         "SELECT 'many', 'w', '', g, now() FROM generate_series(1, "
	         "2000) g",
	         px);
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);
	sked_val mq[5] = {SKED_TEXTV("nb"), SKED_INTV(30000), SKED_INTV(10),
	                  SKED_TEXTV("many"), SKED_TEXTV(NULL)};
	used = blocks_of(h, px, SKED_SQL_CLAIM_Q, mq, 5, &rows, &first);
	assert_int_equal(rows, 10);
	if (used > 2000) /* 556 here; 18,128 walking every one */
		fail_msg("a claim of 10 among 2,000 priorities read %lld "
		         "blocks",
		         (long long)used);
	snprintf(sql, sizeof sql,
	         "DO $$DECLARE t text; BEGIN FOR t IN SELECT tablename FROM "
	         "pg_tables WHERE tablename LIKE '%s%%' LOOP EXECUTE "
	         "format('DROP TABLE %%I CASCADE', t); END LOOP; END$$",
	         px);
	assert_int_equal(sked__qdyn(h, sql, NULL, 0, NULL), SKED_OK);
	sked_close(h);
}

static int
drop_tables(void **state)
{
	(void)state;
	if (!pg_url() || !prefix[0])
		return 0;
	sked *h = open_pg(NULL);
	static const char *const tables[] = {
	        "run", "task", "task_done", "node", "schedule", "lock", "meta"};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		char sql[128];
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s%s", prefix,
		         tables[i]);
		sked__ignore(sked__qdyn(h, sql, NULL, 0, NULL));
	}
	sked_close(h);
	return 0;
}

int
main(void)
{
	if (!pg_url())
		fprintf(stderr, "SKIP: SKED_TEST_PG_URL is not set: the tests "
		                "that need a PostgreSQL server are skipped\n");
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(rewrite_markers),
	        cmocka_unit_test(error_mapping),
	        cmocka_unit_test(closed_port),
	        cmocka_unit_test(strategy_refused),
	        cmocka_unit_test(lost_session_reconnects),
	        cmocka_unit_test(times_to_the_ms),
	        cmocka_unit_test(enqueue_many_in_order),
	        cmocka_unit_test(finish_batch_contract),
	        cmocka_unit_test(finish_batch_any_order),
	        cmocka_unit_test(pooler_found_by_a_foreign_statement),
	        cmocka_unit_test(pooler_found_by_a_missing_statement),
	        cmocka_unit_test(renew_skips_locked_rows),
	        cmocka_unit_test(worker_session_without_jit),
	        cmocka_unit_test(claim_ignores_the_backlog),
	};
	return cmocka_run_group_tests(tests, NULL, drop_tables);
}

#else

static void
not_built(void **state)
{
	(void)state;
	skip();
}

int
main(void)
{
	fprintf(stderr, "SKIP: the PostgreSQL driver is not built\n");
	const struct CMUnitTest tests[] = {cmocka_unit_test(not_built)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
