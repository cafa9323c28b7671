/*
 * dialect.c — the generic SQL texts and the template renderer.
 *
 * Layer: dialect seam (see dialect.h). The texts below are the SQL that
 * SQLite, PostgreSQL and MySQL/MariaDB share; a dialect file in
 * src/dialect/ overrides a text only where its product differs.
 *
 * Row locks, for the reader who wants to know what each statement holds:
 * every statement here touches rows of one table only, except the
 * schema migration (dialect's migrate lock, then {p}meta, then DDL). A
 * claim locks the task rows it returns; finishing locks the one task row,
 * then inserts its run row. No statement locks two task rows in an order
 * that another statement reverses, so claims and finishes cannot deadlock
 * on each other.
 */
#include "dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "util/buf.h"
#include "sked.h"

#define TASK_COLS                                                              \
	"id, queue, kind, payload, status, priority, {ms:run_at}, attempts, "  \
	"max_attempts, node_id, {ms:lease_until}, unique_key, "                \
	"schedule_name, {ms:fire_time}, last_error, {ms:created_at}, "         \
	"{ms:updated_at}, {ms:finished_at}"

#define CLAIMED_COLS                                                           \
	"id, queue, kind, payload, attempts, max_attempts, {ms:started_at}"

#define CLAIM_SET                                                              \
	"status = 1, node_id = ?1, lease_until = {now+?2}, "                   \
	"started_at = {now}, attempts = attempts + 1, version = version + 1, " \
	"updated_at = {now}"

#define DUE         "status IN (0, 4) AND run_at <= {now}"
#define CLAIM_ORDER " ORDER BY priority DESC, run_at, id"

#define ENQ_COLS                                                               \
	"INSERT INTO {p}task (queue, kind, payload, status, priority, "        \
	"run_at, attempts, max_attempts, version, unique_key, created_at, "    \
	"updated_at) VALUES (?1, ?2, ?3, 0, ?4, "

static const char *const generic[SKED_SQL__COUNT] = {
        [SKED_SQL_NOW] = "SELECT {nowms}",
        [SKED_SQL_META_GET] =
                "SELECT value FROM {p}meta WHERE name = 'schema_version'",
        [SKED_SQL_META_CREATE] = "CREATE TABLE IF NOT EXISTS {p}meta ("
                                 "name VARCHAR(64) PRIMARY KEY, "
                                 "value VARCHAR(255) NOT NULL)",
        [SKED_SQL_META_DEL] = "DELETE FROM {p}meta WHERE name = ?1",
        [SKED_SQL_META_PUT] =
                "INSERT INTO {p}meta (name, value) VALUES (?1, ?2)",
        [SKED_SQL_ENQ_IN] =
                ENQ_COLS "{now+?5}, 0, ?6, 0, ?7, {now}, {now}){ret}",
        [SKED_SQL_ENQ_AT] =
                ENQ_COLS "{ts:?5}, 0, ?6, 0, ?7, {now}, {now}){ret}",
        [SKED_SQL_UNIQUE_GET] = "SELECT id FROM {p}task WHERE unique_key = ?1",
        [SKED_SQL_TASK_GET] = "SELECT " TASK_COLS " FROM {p}task WHERE id = ?1",
        [SKED_SQL_TASK_STATUS] = "SELECT status FROM {p}task WHERE id = ?1",
        [SKED_SQL_RUNS_GET] =
                "SELECT id, task_id, attempt, node_id, {ms:started_at}, "
                "{ms:finished_at}, outcome, exit_code, error, output "
                "FROM {p}run WHERE task_id = ?1 ORDER BY id",
        [SKED_SQL_CANCEL] =
                "UPDATE {p}task SET status = 5, finished_at = {now}, "
                "lease_until = NULL, updated_at = {now}, version = version + 1 "
                "WHERE id = ?1 AND status IN (0, 1, 4)",
        [SKED_SQL_RETRY] =
                "UPDATE {p}task SET status = 0, run_at = {now}, "
                "max_attempts = CASE WHEN attempts >= max_attempts "
                "THEN attempts + 1 ELSE max_attempts END, finished_at = NULL, "
                "lease_until = NULL, updated_at = {now}, version = version + 1 "
                "WHERE id = ?1 AND status IN (0, 3, 4, 5)",
        [SKED_SQL_STATS] =
                "SELECT queue, status, COUNT(*), SUM(CASE WHEN " DUE
                " THEN 1 ELSE 0 END) FROM {p}task GROUP BY queue, status "
                "ORDER BY queue, status",
        [SKED_SQL_NODES] =
                "SELECT n.id, n.host, n.pid, {ms:n.started_at}, "
                "{ms:n.heartbeat}, n.lease_ms, n.strategy, n.version, {nowms}, "
                "(SELECT COUNT(*) FROM {p}task t WHERE t.node_id = n.id "
                "AND t.status = 1) FROM {p}node n ORDER BY n.started_at, n.id",
        [SKED_SQL_NODE_INSERT] =
                "INSERT INTO {p}node (id, host, pid, started_at, heartbeat, "
                "lease_ms, strategy, version) VALUES (?1, ?2, ?3, {now}, "
                "{now}, "
                "?4, ?5, ?6)",
        [SKED_SQL_NODE_GET] =
                "SELECT host, pid, {nowms} - {ms:heartbeat}, lease_ms "
                "FROM {p}node WHERE id = ?1",
        [SKED_SQL_NODE_DELETE] = "DELETE FROM {p}node WHERE id = ?1",
        [SKED_SQL_NODE_BEAT] =
                "UPDATE {p}node SET heartbeat = {now} WHERE id = ?1",
        [SKED_SQL_RENEW] =
                "UPDATE {p}task SET lease_until = {now+?2} WHERE node_id = ?1 "
                "AND status = 1 AND lease_until >= {now}",
        [SKED_SQL_HELD] = "SELECT id, attempts FROM {p}task WHERE node_id = ?1 "
                          "AND status = 1",
        [SKED_SQL_REAP_SELECT] =
                "SELECT id, attempts, node_id, {ms:started_at} FROM {p}task "
                "WHERE status = 1 AND lease_until < {now} "
                "ORDER BY lease_until{lim:100}",
        [SKED_SQL_REAP] =
                "UPDATE {p}task SET status = CASE WHEN attempts >= "
                "max_attempts "
                "THEN 3 ELSE 4 END, finished_at = CASE WHEN attempts >= "
                "max_attempts THEN {now} ELSE NULL END, run_at = {now}, "
                "lease_until = NULL, last_error = ?3, updated_at = {now}, "
                "version = version + 1 WHERE id = ?1 AND attempts = ?2 "
                "AND status = 1 AND lease_until < {now}",
        [SKED_SQL_FINISH_OK] =
                "UPDATE {p}task SET status = 2, lease_until = NULL, "
                "finished_at = {now}, updated_at = {now}, version = version + "
                "1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_FINISH_RETRY] =
                "UPDATE {p}task SET status = 4, lease_until = NULL, "
                "run_at = {now+?4}, last_error = ?5, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_FINISH_DEAD] =
                "UPDATE {p}task SET status = 3, lease_until = NULL, "
                "finished_at = {now}, last_error = ?4, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        /* a started attempt stopped by a shutdown: it keeps its number
         * (one run row per attempt) and costs no retry */
        [SKED_SQL_RELEASE] =
                "UPDATE {p}task SET status = 0, "
                "max_attempts = max_attempts + 1, "
                "run_at = {now}, lease_until = NULL, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        /* an attempt that never reached a handler: its number goes back */
        [SKED_SQL_GIVE_BACK] =
                "UPDATE {p}task SET status = 0, attempts = attempts - 1, "
                "run_at = {now}, lease_until = NULL, updated_at = {now}, "
                "version = version + 1 "
                "WHERE id = ?1 AND node_id = ?2 AND attempts = ?3 AND status = "
                "1",
        [SKED_SQL_RUN_INSERT] =
                "INSERT INTO {p}run (task_id, attempt, node_id, started_at, "
                "finished_at, outcome, exit_code, error, output) VALUES "
                "(?1, ?2, ?3, {ts:?4}, {now}, ?5, ?6, ?7, ?8)",
        [SKED_SQL_EMPTY_ANY] =
                "SELECT COUNT(*) FROM {p}task WHERE status IN (1, 4) "
                "OR (status = 0 AND run_at <= {now})",
        [SKED_SQL_EMPTY_Q] =
                "SELECT COUNT(*) FROM {p}task WHERE queue = ?1 AND "
                "(status IN (1, 4) OR (status = 0 AND run_at <= {now}))",
        /* SQLite's own claim: one writer at a time, so the IN (subquery
         * LIMIT n) cannot take more than n rows here. Other products
         * override these two. */
        [SKED_SQL_CLAIM_ANY] =
                "UPDATE {p}task SET " CLAIM_SET
                " WHERE id IN (SELECT id FROM {p}task WHERE " DUE CLAIM_ORDER
                " LIMIT ?3) RETURNING " CLAIMED_COLS,
        [SKED_SQL_CLAIM_Q] = "UPDATE {p}task SET " CLAIM_SET
                             " WHERE id IN (SELECT id FROM {p}task WHERE "
                             "queue = ?4 AND " DUE CLAIM_ORDER
                             " LIMIT ?3) RETURNING " CLAIMED_COLS,
        [SKED_SQL_CAND_ANY] =
                "SELECT id, version FROM {p}task WHERE " DUE CLAIM_ORDER
                "{lim:?3}",
        [SKED_SQL_CAND_Q] = "SELECT id, version FROM {p}task WHERE queue = ?4 "
                            "AND " DUE CLAIM_ORDER "{lim:?3}",
        [SKED_SQL_LOCK_ANY] = "SELECT id FROM {p}task WHERE " DUE CLAIM_ORDER
                              " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_LOCK_Q] =
                "SELECT id FROM {p}task WHERE queue = ?4 AND " DUE CLAIM_ORDER
                " LIMIT ?3 FOR UPDATE SKIP LOCKED",
        [SKED_SQL_OPT_CLAIM] = "UPDATE {p}task SET " CLAIM_SET
                               " WHERE id = ?3 AND version = ?4 AND " DUE,
        [SKED_SQL_ID_CLAIM] = "UPDATE {p}task SET " CLAIM_SET " WHERE id = ?3",
        [SKED_SQL_IDS_CLAIM] =
                "UPDATE {p}task SET " CLAIM_SET " WHERE id IN ({ids})",
        [SKED_SQL_IDS_GET] = "SELECT " CLAIMED_COLS " FROM {p}task WHERE id IN "
                             "({ids}) AND node_id = ?1 AND status = 1",
        [SKED_SQL_NODE_EXPIRE] =
                "UPDATE {p}task SET lease_until = {now+?2} WHERE node_id = ?1 "
                "AND status = 1",
        [SKED_SQL_CLAIMED_GET] =
                "SELECT " CLAIMED_COLS " FROM {p}task "
                "WHERE id = ?1 AND node_id = ?2 AND status = 1",
};

/* ---- rendering ---- */

static void
putf(sked_buf *b, const char *fmt, const char *arg, size_t arglen)
{
	/* fmt holds "{}" where arg goes (once or twice); arg is not
	 * NUL-terminated */
	const char *pct = strstr(fmt, "{}");
	if (!pct) {
		sked__buf_put(b, fmt, strlen(fmt));
		return;
	}
	sked__buf_put(b, fmt, (size_t)(pct - fmt));
	sked__buf_put(b, arg, arglen);
	const char *rest = pct + 2;
	const char *pct2 = strstr(rest, "{}");
	if (pct2) {
		sked__buf_put(b, rest, (size_t)(pct2 - rest));
		sked__buf_put(b, arg, arglen);
		rest = pct2 + 2;
	}
	sked__buf_put(b, rest, strlen(rest));
}

char *
sked__dialect_expand(const sked_dialect *d, const char *prefix, const char *t)
{
	sked_buf b = {0};
	sked__buf_put(&b, "", 0);
	while (*t) {
		const char *open = strchr(t, '{');
		if (!open) {
			sked__buf_put(&b, t, strlen(t));
			break;
		}
		sked__buf_put(&b, t, (size_t)(open - t));
		const char *close = strchr(open, '}');
		if (!close) {
			sked__buf_put(&b, open, strlen(open));
			break;
		}
		const char *in = open + 1;
		size_t n = (size_t)(close - in);
		if (n == 1 && in[0] == 'p')
			sked__buf_put(&b, prefix, strlen(prefix));
		else if (n == 3 && memcmp(in, "now", 3) == 0)
			sked__buf_put(&b, d->now, strlen(d->now));
		else if (n == 5 && memcmp(in, "nowms", 5) == 0)
			sked__buf_put(&b, d->nowms, strlen(d->nowms));
		else if (n == 3 && memcmp(in, "ret", 3) == 0)
			sked__buf_put(&b, d->ret, strlen(d->ret));
		else if (n > 4 && memcmp(in, "now+", 4) == 0)
			putf(&b, d->now_plus, in + 4, n - 4);
		else if (n > 3 && memcmp(in, "ts:", 3) == 0)
			putf(&b, d->ts, in + 3, n - 3);
		else if (n > 3 && memcmp(in, "ms:", 3) == 0)
			putf(&b, d->ms, in + 3, n - 3);
		else if (n > 4 && memcmp(in, "lim:", 4) == 0)
			putf(&b, d->limit ? d->limit : " LIMIT {}", in + 4,
			     n - 4);
		else
			sked__buf_put(&b, open,
			              n + 2); /* not ours: keep as is */
		t = close + 1;
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

int
sked__dialect_render(const sked_dialect *d, const char *prefix,
                     char *out[SKED_SQL__COUNT])
{
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		const char *t = d->sql && d->sql[i] ? d->sql[i] : generic[i];
		out[i] = t ? sked__dialect_expand(d, prefix, t) : NULL;
		if (t && !out[i]) {
			sked__dialect_free_rendered(out);
			return SKED_ENOMEM;
		}
	}
	return SKED_OK;
}

void
sked__dialect_free_rendered(char *out[SKED_SQL__COUNT])
{
	for (int i = 0; i < SKED_SQL__COUNT; i++) {
		free(out[i]);
		out[i] = NULL;
	}
}

const sked_dialect *
sked__dialect_for(int product)
{
	switch (product) {
	case SKED_PROD_SQLITE:
		return &sked__dialect_sqlite;
#ifdef SKED_HAVE_DIALECT_PG
	case SKED_PROD_POSTGRESQL:
		return &sked__dialect_postgresql;
#endif
#ifdef SKED_HAVE_DIALECT_MYSQL
	case SKED_PROD_MYSQL:
	case SKED_PROD_MARIADB:
		return &sked__dialect_mysql;
#endif
#ifdef SKED_HAVE_DIALECT_MSSQL
	case SKED_PROD_SQLSERVER:
		return &sked__dialect_sqlserver;
#endif
	default:
		return NULL;
	}
}
