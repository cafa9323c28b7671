/*
 * test_mysql.c — the MySQL/MariaDB driver and dialect against a real server.
 *
 * Layer: tests. The ?N → ? rewrite and the closed-port connect need no
 * server; everything else runs against SKED_TEST_MY_URL and is skipped,
 * loudly, when it is unset. Each run uses a table prefix of its own and
 * drops its tables afterwards. What users rely on: the version reported
 * as the server reports it, times that survive the trip in UTC to the
 * millisecond, payloads up to the 1 MiB limit byte for byte, passwords
 * never in messages, a deadlock that costs a retry, not a failure, and
 * a claim that hands over its rows as it stored them and skips a row
 * another session holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <mysql.h>

#include "db/driver/driver.h"
#include "handle/internal.h"
#include "model/lease.h"
#include "sked.h"
#include "util/url.h"

#ifdef SKED_HAVE_MYSQL

int sked__mysql_rewrite(const char *sql, char **out, int **map, int *nmap);

static void
rewrite_is(const char *sql, const char *want, const int *map, int n)
{
	char *out = NULL;
	int *m = NULL, nm = -1;
	assert_int_equal(sked__mysql_rewrite(sql, &out, &m, &nm), SKED_OK);
	assert_string_equal(out, want);
	assert_int_equal(nm, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(m[i], map[i]);
	free(out);
	free(m);
}

static void
rewrite_markers(void **state)
{
	(void)state;
	rewrite_is("SELECT ?1, ?2", "SELECT ?, ?", (int[]){0, 1}, 2);
	/* repeated and out of order: each marker maps to its parameter */
	rewrite_is("UPDATE t SET a = ?2, b = ?1 WHERE id = ?3 AND c = ?1",
	           "UPDATE t SET a = ?, b = ? WHERE id = ? AND c = ?",
	           (int[]){1, 0, 2, 0}, 4);
	/* two-digit numbers */
	rewrite_is("VALUES (?10, ?9)", "VALUES (?, ?)", (int[]){9, 8}, 2);
	/* quotes, doubled quotes, backslash escapes, identifiers and
	 * comments hold text, not markers */
	rewrite_is("SELECT '?1', 'it''s ?2', 'a\\'?3', \"?4\", `?5`, ?6",
	           "SELECT '?1', 'it''s ?2', 'a\\'?3', \"?4\", `?5`, ?",
	           (int[]){5}, 1);
	rewrite_is("SELECT ?1 -- ?2\n, /* ?3 */ ?2 # ?4\n",
	           "SELECT ? -- ?2\n, /* ?3 */ ? # ?4\n", (int[]){0, 1}, 2);
	/* bare ? numbers on from the largest so far, as in SQLite */
	rewrite_is("SELECT ?, ?3, ?", "SELECT ?, ?, ?", (int[]){0, 2, 3}, 3);
	rewrite_is("SELECT 1", "SELECT 1", NULL, 0);
	char *out;
	int *m, nm;
	assert_int_equal(sked__mysql_rewrite("SELECT ?0", &out, &m, &nm),
	                 SKED_EINVAL);
}

static void
closed_port(void **state)
{
	(void)state;
	sked *h = NULL;
	int rc = sked_open("mysql://u:s3cret@127.0.0.1:1/x", NULL, &h);
	assert_int_equal(rc, SKED_EUNAVAILABLE);
	const char *msg = sked_errmsg(h);
	if (strstr(msg, "s3cret"))
		fail_msg("the password leaked: %s", msg);
	assert_non_null(strstr(msg, "127.0.0.1"));
	sked_close(h);
	/* an option Connector/C does not have is refused by name */
	rc = sked_open("mysql://u:s3cret@127.0.0.1:1/x?sslmode=on", NULL, &h);
	assert_int_not_equal(rc, SKED_OK);
	assert_non_null(strstr(sked_errmsg(h), "sslmode"));
	assert_null(strstr(sked_errmsg(h), "s3cret"));
	sked_close(h);
}

/* ---- with a server ---- */

static char prefix[32];

static sked *
open_server(void)
{
	const char *url = getenv("SKED_TEST_MY_URL");
	if (!url || !*url) {
		fprintf(stderr, "SKIP: SKED_TEST_MY_URL is not set\n");
		return NULL;
	}
	sked_options o = {.prefix = prefix, .migrate = 1};
	sked *h = NULL;
	int rc = sked_open(url, &o, &h);
	if (rc != SKED_OK)
		fail_msg("sked_open: %s", sked_errmsg(h));
	return h;
}

static void
drop_tables(sked *h)
{
	static const char *const t[] = {"task",     "task_done", "run", "node",
	                                "schedule", "lock",      "meta"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char sql[96];
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s%s", prefix,
		         t[i]);
		sked__ignore(sked__qdyn(h, sql, NULL, 0, NULL));
	}
}

static int
setup(void **state)
{
	snprintf(prefix, sizeof prefix, "u%08x_",
	         (unsigned)(getpid() ^ (unsigned)time(NULL)));
	*state = NULL;
	return 0;
}

static int
teardown(void **state)
{
	sked *h = open_server();
	if (h)
		drop_tables(h);
	sked_close(h);
	return 0;
}

static void
server_info(void **state)
{
	sked *h = open_server();
	if (!h)
		skip();
	sked_info in;
	assert_int_equal(sked_get_info(h, &in), SKED_OK);
	assert_string_equal(in.driver, "mariadb");
	assert_string_equal(in.dialect, "mysql");
	/* the product the server is, and its version as it says it */
	sked_res r = {0};
	assert_int_equal(sked__qdyn(h, "SELECT VERSION()", NULL, 0, &r),
	                 SKED_OK);
	const char *v = sked__res_text(&r, 0, 0);
	int maria = strstr(v, "MariaDB") != NULL;
	assert_string_equal(in.product, maria ? "MariaDB" : "MySQL");
	/* Connector/C may keep or strip the "5.5.5-" MariaDB sends */
	const char *seen = in.version;
	if (strncmp(seen, "5.5.5-", 6) == 0 && strncmp(v, "5.5.5-", 6) != 0)
		seen += 6;
	assert_string_equal(seen, v);
	assert_true(h->decision.major >= 5);
	/* the decision table's verdict, by the documented thresholds */
	int sl = maria ? h->decision.major > 10 || (h->decision.major == 10 &&
	                                            h->decision.minor >= 6)
	               : h->decision.major > 8 || (h->decision.major == 8 &&
	                                           (h->decision.minor > 0 ||
	                                            h->decision.patch >= 1));
	assert_string_equal(in.strategy, sl ? "skip-locked" : "optimistic");
	assert_int_equal(in.schema_version, in.schema_expected);
	sked__res_clear(&r);
	sked_close(h);
}

static void
clock_and_times(void **state)
{
	sked *h = open_server();
	if (!h)
		skip();
	int64_t now = 0;
	assert_int_equal(sked_now(h, &now), SKED_OK);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t mine = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	/* same host: the database clock is UTC epoch ms, not local time */
	assert_true(llabs(now - mine) < 5000);
	/* an absolute run-at survives the trip to the millisecond */
	sked_enqueue_opts o = {.run_at_ms = 1767225599123LL};
	int64_t id = 0;
	assert_int_equal(sked_enqueue(h, "k", "x", 1, &o, &id, NULL), SKED_OK);
	assert_true(id > 0);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->run_at_ms, 1767225599123LL);
	assert_true(llabs(t->created_ms - now) < 5000);
	sked_tasks_free(t, 1);
	sked_close(h);
}

static void
payload_bytes(void **state)
{
	sked *h = open_server();
	if (!h)
		skip();
	/* the largest payload, every byte back (the fetch buffer grows) */
	size_t n = SKED_MAX_PAYLOAD;
	char *p = malloc(n);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + i % 26);
	static const char odd[] = "h\xc3\xa9llo \xf0\x9f\x98\x80 '?1' \\";
	memcpy(p + 10, odd, sizeof odd - 1);
	int64_t id = 0, id2 = 0;
	assert_int_equal(sked_enqueue(h, "big", p, n, NULL, &id, NULL),
	                 SKED_OK);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->payload_len, n);
	assert_memory_equal(t->payload, p, n);
	sked_tasks_free(t, 1);
	/* an empty payload stays empty, not NULL */
	assert_int_equal(sked_enqueue(h, "empty", NULL, 0, NULL, &id2, NULL),
	                 SKED_OK);
	assert_int_equal(sked_task_get(h, id2, &t), SKED_OK);
	assert_non_null(t->payload);
	assert_int_equal(t->payload_len, 0);
	assert_null(t->unique_key);
	sked_tasks_free(t, 1);
	free(p);
	/* a unique key returns the existing task */
	sked_enqueue_opts o = {.unique_key = "only-once"};
	int existed = -1;
	assert_int_equal(sked_enqueue(h, "k", "a", 1, &o, &id, &existed),
	                 SKED_OK);
	assert_int_equal(existed, 0);
	assert_int_equal(sked_enqueue(h, "k", "b", 1, &o, &id2, &existed),
	                 SKED_OK);
	assert_int_equal(existed, 1);
	assert_int_equal(id2, id);
	sked_close(h);
}

static void
retry_after_deadlock(void **state)
{
	sked *h = open_server();
	if (!h)
		skip();
	int64_t id = 0;
	sked_enqueue_opts o = {.queue = "deadlock"};
	assert_int_equal(sked_enqueue(h, "k", "x", 1, &o, &id, NULL), SKED_OK);
	/* the claim's first statement fails as a deadlock would (1213):
	 * the claim is rolled back, tried again and succeeds */
	unsigned long before = h->retries;
	sked_claim_req req = {.node_id = "n1",
	                      .queue = "deadlock",
	                      .limit = 4,
	                      .lease_ms = 30000};
	sked_claimed *c = NULL;
	int n = 0;
	sked__db_fault_after(1, SKED_DBE_RETRY);
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].id, id);
	assert_int_equal(c[0].attempt, 1);
	assert_int_equal(h->retries, before + 1);
	/* the same for finishing it: the second statement (the task's
	 * update) fails, the whole finish is tried again, one run row */
	sked_outcome out = {.id = id,
	                    .attempt = 1,
	                    .max_attempts = 5,
	                    .started_ms = c[0].started_ms,
	                    .what = SKED_FIN_OK,
	                    .exit_code = 0};
	sked__db_fault_after(2, SKED_DBE_RETRY);
	assert_int_equal(sked__finish(h, "n1", &out, 1), SKED_OK);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_equal(out.applied, 1);
	assert_int_equal(h->retries, before + 2);
	sked_task *t = NULL;
	assert_int_equal(sked_task_get(h, id, &t), SKED_OK);
	assert_int_equal(t->status, SKED_SUCCEEDED);
	sked_tasks_free(t, 1);
	sked_run *runs = NULL;
	size_t nr = 0;
	assert_int_equal(sked_runs_get(h, id, &runs, &nr), SKED_OK);
	assert_int_equal(nr, 1);
	sked_runs_free(runs, nr);
	sked__claimed_free(c, n);
	/* any other error is not retried */
	sked__db_fault_after(1, SKED_DBE_OTHER);
	before = h->retries;
	assert_int_not_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	sked__db_fault_after(0, SKED_DBE_NONE);
	assert_int_equal(h->retries, before);
	sked_close(h);
}

/* The claim reads its rows while it locks them (SKED_CAP_LOCK_READS):
 * what it hands over must be what it stored (attempt, start, owner,
 * payload, trace context, timeout), and a row another session holds
 * locked is skipped, never handed over. */
static void
claim_reads_what_it_stores(void **state)
{
	(void)state;
	sked *h = open_server(), *h2 = NULL;
	if (!h)
		skip();
	h2 = open_server();
	static const char *const tp =
	        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
	int64_t ids[6];
	for (int i = 0; i < 6; i++) {
		char pl[16];
		snprintf(pl, sizeof pl, "row-%d", i);
		sked_enqueue_opts o = {.queue = "rows",
		                       .priority = i,
		                       .max_attempts = 7,
		                       .traceparent = i == 2 ? tp : NULL,
		                       .timeout_ms = i == 3 ? 4500 : 0};
		assert_int_equal(
		        sked_enqueue(h, "k", pl, strlen(pl), &o, &ids[i], NULL),
		        SKED_OK);
	}
	char sql[512];
	/* task 4 waits to be retried after its first attempt */
	snprintf(sql, sizeof sql,
	         "UPDATE %stask SET status = 4, attempts = 1 WHERE id = ?1",
	         prefix);
	sked_val one = SKED_INTV(ids[4]);
	assert_int_equal(sked__qdyn(h, sql, &one, 1, NULL), SKED_OK);
	/* another session holds task 5 (the highest priority) locked */
	assert_int_equal(sked__begin(h2, 1), SKED_OK);
	snprintf(sql, sizeof sql,
	         "SELECT id FROM %stask WHERE id = ?1 FOR UPDATE", prefix);
	sked_val held = SKED_INTV(ids[5]);
	assert_int_equal(sked__qdyn(h2, sql, &held, 1, NULL), SKED_OK);

	sked_claim_req req = {.node_id = "n-rows",
	                      .queue = "rows",
	                      .limit = 10,
	                      .lease_ms = 30000};
	sked_claimed *c = NULL;
	int n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 5);
	sked__rollback(h2);
	snprintf(sql, sizeof sql,
	         "SELECT status, node_id, attempts, "
	         "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', "
	         "started_at) DIV 1000, payload, queue, kind, max_attempts, "
	         "traceparent, timeout_ms FROM %stask WHERE id = ?1",
	         prefix);
	for (int i = 0; i < n; i++) {
		assert_true(c[i].id != ids[5]);
		sked_val id = SKED_INTV(c[i].id);
		sked_res r = {0};
		assert_int_equal(sked__qdyn(h, sql, &id, 1, &r), SKED_OK);
		assert_int_equal(r.nrows, 1);
		assert_int_equal(sked__res_int(&r, 0, 0), 1);
		assert_string_equal(sked__res_text(&r, 0, 1), "n-rows");
		assert_int_equal(sked__res_int(&r, 0, 2), c[i].attempt);
		assert_int_equal(c[i].attempt, c[i].id == ids[4] ? 2 : 1);
		assert_int_equal(sked__res_int(&r, 0, 3), c[i].started_ms);
		assert_int_equal(sked__res_len(&r, 0, 4), c[i].payload_len);
		assert_memory_equal(sked__res_text(&r, 0, 4), c[i].payload,
		                    c[i].payload_len);
		assert_string_equal(sked__res_text(&r, 0, 5), c[i].queue);
		assert_string_equal(sked__res_text(&r, 0, 6), c[i].kind);
		assert_int_equal(sked__res_int(&r, 0, 7), c[i].max_attempts);
		if (c[i].id == ids[2])
			assert_string_equal(c[i].traceparent, tp);
		else
			assert_null(c[i].traceparent);
		assert_int_equal(c[i].timeout_ms, c[i].id == ids[3] ? 4500 : 0);
		assert_int_equal(sked__res_null(&r, 0, 9),
		                 c[i].timeout_ms == 0);
		sked__res_clear(&r);
	}
	/* in due order: priority 4 first (5 was held), then 3, 2, 1, 0 */
	for (int i = 0; i < n; i++)
		assert_int_equal(c[i].id, ids[4 - i]);
	sked__claimed_free(c, n);
	/* the held one is left pending, and the next claim takes it */
	c = NULL;
	n = 0;
	assert_int_equal(sked__claim(h, &req, &c, &n), SKED_OK);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].id, ids[5]);
	assert_int_equal(c[0].attempt, 1);
	sked__claimed_free(c, n);
	sked_close(h2);
	sked_close(h);
}

/* The server forgets a statement the driver keeps prepared (a Galera node
 * did, when another node left the cluster: every later call of that
 * statement failed with 1243, ER_UNKNOWN_STMT_HANDLER, and the worker
 * could not claim again). The driver must prepare it again and carry on.
 * The test makes the server forget it the way a client would: a
 * COM_STMT_CLOSE for its id, sent from a statement handle of its own. */
static void
forgotten_statement(void **state)
{
	(void)state;
	const char *url = getenv("SKED_TEST_MY_URL");
	if (!url || !*url) {
		fprintf(stderr, "SKIP: SKED_TEST_MY_URL is not set\n");
		skip();
	}
	sked_url u;
	char err[256];
	assert_int_equal(sked__url_parse(url, &u, err, sizeof err), SKED_OK);
	MYSQL *m = mysql_init(NULL);
	assert_non_null(m);
	if (!mysql_real_connect(m, u.host, u.user, u.password, u.dbname,
	                        (unsigned int)u.port, u.socket, 0))
		fail_msg("connect: %s", mysql_error(m));
	sked__url_free(&u);
	void *conn = NULL;
	sked_dberr e = {0};
	assert_int_equal(sked__driver_mysql.wrap(m, &conn, &e), SKED_OK);

	const char *sql = "SELECT ?1 + 1";
	for (int round = 0; round < 3; round++) {
		if (round > 0) {
			/* the driver's statement is the only one the
			 * connection holds besides ours */
			MYSQL_STMT *own = mysql_stmt_init(m);
			assert_non_null(own);
			assert_int_equal(mysql_stmt_prepare(own, "SELECT 1", 8),
			                 0);
			unsigned long theirs = 0;
			for (LIST *l = m->stmts; l; l = l->next) {
				MYSQL_STMT *st = l->data;
				if (st != own)
					theirs = st->stmt_id;
			}
			assert_true(theirs > 0);
			/* the server drops theirs (and keeps "SELECT 1") */
			own->stmt_id = theirs;
			mysql_stmt_close(own);
		}
		sked_val p[1] = {{.type = SKED_VINT, .i = 41 + round}};
		sked_res res = {0};
		int64_t affected = 0;
		int rc = sked__driver_mysql.exec(conn, 0, sql, p, 1, &res,
		                                 &affected, NULL, &e);
		if (rc != SKED_OK)
			fail_msg("round %d: %s", round, e.msg);
		assert_int_equal(res.nrows, 1);
		assert_int_equal(sked__res_int(&res, 0, 0), 42 + round);
		sked__res_clear(&res);
	}
	sked__driver_mysql.close(conn);
	mysql_close(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(rewrite_markers),
	        cmocka_unit_test(closed_port),
	        cmocka_unit_test(server_info),
	        cmocka_unit_test(clock_and_times),
	        cmocka_unit_test(payload_bytes),
	        cmocka_unit_test(retry_after_deadlock),
	        cmocka_unit_test(claim_reads_what_it_stores),
	        cmocka_unit_test(forgotten_statement),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* no MySQL driver in this build */

static void
not_built(void **state)
{
	(void)state;
	fprintf(stderr, "SKIP: this build has no MySQL/MariaDB driver\n");
	skip();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(not_built)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
