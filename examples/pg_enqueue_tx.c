/*
 * pg_enqueue_tx.c — enqueue a task inside the application's own
 * PostgreSQL transaction, so the task exists exactly when the data it is
 * about does.
 *
 * Layer: an example program, a client of sked.h and libpq only. It opens
 * its own PGconn, writes an order and enqueues "send_receipt" for it in
 * one transaction: after COMMIT both are there; after ROLLBACK neither
 * is. sked never begins, commits or closes the borrowed connection.
 *
 *   pg_enqueue_tx [URL]     (default: $SKED_TEST_PG_URL)
 *
 * Exit 0 when everything held, 1 when something did not, 77 (skipped)
 * when no URL was given — except under CI=true, where that is a failure.
 * The schema is created beforehand with a handle of sked's own (what
 * `sked init` does at deploy time), so the application's transaction
 * only ever enqueues.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "sked.h"

static char prefix[32], orders[64];

/* Run one statement on the application's connection; 0 on success. */
static int
run(PGconn *conn, const char *sql, int nparams, const char *const *params)
{
	PGresult *r =
	        PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(r);
	int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
	if (!ok)
		fprintf(stderr, "pg_enqueue_tx: %s", PQerrorMessage(conn));
	PQclear(r);
	return ok ? 0 : -1;
}

static int
order_count(PGconn *conn, const char *customer)
{
	char sql[160];
	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE customer = $1",
	         orders);
	const char *p[1] = {customer};
	PGresult *r = PQexecParams(conn, sql, 1, NULL, p, NULL, NULL, 0);
	int n = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
	                ? atoi(PQgetvalue(r, 0, 0))
	                : -1;
	PQclear(r);
	return n;
}

/* One order and its receipt task in one transaction; commit or not. */
static int
place_order(PGconn *conn, const char *customer, int commit, int64_t *task)
{
	char sql[160];
	snprintf(sql, sizeof sql, "INSERT INTO %s (customer) VALUES ($1)",
	         orders);
	const char *p[1] = {customer};
	if (run(conn, "BEGIN", 0, NULL) != 0 || run(conn, sql, 1, p) != 0)
		return -1;
	sked_options o = {.prefix = prefix};
	sked *h = NULL;
	int rc = sked_open_borrowed("libpq", conn, &o, &h);
	if (rc == SKED_OK)
		rc = sked_enqueue(h, "send_receipt", customer, strlen(customer),
		                  NULL, task, NULL);
	if (rc != SKED_OK) {
		fprintf(stderr, "pg_enqueue_tx: %s\n", sked_errmsg(h));
		sked_close(h);
		return -1;
	}
	sked_close(h); /* the connection stays open and in its transaction */
	return run(conn, commit ? "COMMIT" : "ROLLBACK", 0, NULL);
}

static int
task_exists(PGconn *conn, int64_t id)
{
	sked_options o = {.prefix = prefix};
	sked *h = NULL;
	sked_task *t = NULL;
	int rc = sked_open_borrowed("libpq", conn, &o, &h);
	if (rc == SKED_OK)
		rc = sked_task_get(h, id, &t);
	int found = rc == SKED_OK && t && t->status == SKED_PENDING;
	if (rc != SKED_OK && rc != SKED_ENOTFOUND)
		fprintf(stderr, "pg_enqueue_tx: %s\n", sked_errmsg(h));
	sked_tasks_free(t, t ? 1 : 0);
	sked_close(h);
	return rc == SKED_OK || rc == SKED_ENOTFOUND ? found : -1;
}

static void
drop_tables(PGconn *conn)
{
	static const char *const t[] = {"orders",   "run",  "task", "node",
	                                "schedule", "lock", "meta"};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char sql[96];
		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s%s", prefix,
		         t[i]);
		(void)run(conn, sql, 0, NULL);
	}
}

int
main(int argc, char **argv)
{
	const char *url = argc > 1 ? argv[1] : getenv("SKED_TEST_PG_URL");
	if (!url || !*url) {
		const char *ci = getenv("CI");
		if (ci && strcmp(ci, "true") == 0) {
			fprintf(stderr,
			        "FAIL: SKED_TEST_PG_URL is not set, and "
			        "CI must run this example\n");
			return 1;
		}
		fprintf(stderr, "SKIP: no PostgreSQL server given "
		                "(SKED_TEST_PG_URL)\n");
		return 77;
	}
	snprintf(prefix, sizeof prefix, "ex%d_", (int)getpid());
	snprintf(orders, sizeof orders, "%sorders", prefix);

	/* deploy time: sked's schema, with a handle of sked's own */
	sked_options so = {.prefix = prefix, .migrate = 1};
	sked *admin = NULL;
	if (sked_open(url, &so, &admin) != SKED_OK) {
		fprintf(stderr, "pg_enqueue_tx: %s\n", sked_errmsg(admin));
		sked_close(admin);
		return 1;
	}
	sked_close(admin);

	PGconn *conn = PQconnectdb(url);
	if (PQstatus(conn) != CONNECTION_OK) {
		fprintf(stderr, "pg_enqueue_tx: %s", PQerrorMessage(conn));
		PQfinish(conn);
		return 1;
	}
	int failed = 0;
	char sql[160];
	snprintf(sql, sizeof sql,
	         "CREATE TABLE %s (id bigint GENERATED ALWAYS AS IDENTITY, "
	         "customer text NOT NULL)",
	         orders);
	if (run(conn, sql, 0, NULL) != 0)
		failed = 1;

	int64_t kept = 0, dropped = 0;
	if (!failed && place_order(conn, "alice", 1, &kept) != 0)
		failed = 1;
	if (!failed && place_order(conn, "bob", 0, &dropped) != 0)
		failed = 1;
	if (!failed) {
		int a = task_exists(conn, kept), b = task_exists(conn, dropped);
		int oa = order_count(conn, "alice"),
		    ob = order_count(conn, "bob");
		printf("committed: order rows %d, task %lld %s\n", oa,
		       (long long)kept, a == 1 ? "exists" : "MISSING");
		printf("rolled back: order rows %d, task %lld %s\n", ob,
		       (long long)dropped,
		       b == 0 ? "does not exist" : "EXISTS");
		if (a != 1 || b != 0 || oa != 1 || ob != 0)
			failed = 1;
	}
	/* sked closed its handles; the connection is still the
	 * application's */
	if (PQstatus(conn) != CONNECTION_OK || run(conn, "SELECT 1", 0, NULL))
		failed = 1;
	drop_tables(conn);
	PQfinish(conn);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
