/*
 * worker/progress.c — what handlers report about their progress, kept in
 * memory and stored with the lease renewal (docs/handlers.md,
 * "Progress"; schema 12).
 *
 * Layer: the worker (worker.h), on the model's registry statements. A
 * report (sked_job_set_progress, a pipe handler's {"id", "progress"}
 * line) replaces the job's pending one by an atomic swap: no lock, no
 * statement. A program writes its report to the file named by
 * SKED_TASK_PROGRESS_FILE (pool.c makes it, private, per attempt). The
 * heartbeat, after each renewal that succeeded, takes the pending reports
 * and reads the files of the programs running (bounded), and writes one
 * UPDATE per task whose report changed since it last stored one, all in
 * one transaction; when no handler reports, it costs a look at each held
 * job and no statement. A report refused (too long, not UTF-8, NUL) is
 * logged once per attempt and the previous one stands.
 */
#include "worker/worker.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "util/text.h"

/* why a report of n bytes at s is refused, or NULL */
static const char *
refused(const char *s, size_t n)
{
	if (n == 0)
		return "an empty report";
	if (n > SKED_PROGRESS_MAX)
		return "over the limit of 1024 bytes";
	if (!sked__utf8_valid(s, n))
		return "not UTF-8 text without NUL";
	return NULL;
}

int
sked__wk_progress_report(sked_job *j, const char *s, size_t n, char *why,
                         size_t whylen)
{
	const char *no = s ? refused(s, n) : "no value";
	if (no) {
		if (why)
			snprintf(why, whylen,
			         "progress report of %zu bytes "
			         "refused: %s",
			         n, no);
		return SKED_EINVAL;
	}
	char *c = malloc(n + 1);
	if (!c)
		return SKED_ENOMEM;
	memcpy(c, s, n);
	c[n] = '\0';
	free(atomic_exchange(&j->progress_new, c));
	return SKED_OK;
}

SKED_API int
sked_job_set_progress(sked_job *j, const char *value)
{
	if (!j || !value)
		return SKED_EINVAL;
	return sked__wk_progress_report(j, value, strlen(value), NULL, 0);
}

/* What a program's report file says now: at most SKED_PROGRESS_MAX bytes
 * without the trailing white space, malloc'd; NULL when it says nothing
 * (missing, empty, not a regular file). *why is set when it says too
 * much or not text. Opened without following a link or waiting on a
 * FIFO (a program may rename its report there). */
static char *
read_file(const char *path, const char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return NULL;
	}
	char buf[SKED_PROGRESS_MAX + 2];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof buf - 1 &&
	       (r = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	/* a line ending (echo 50 > "$SKED_TASK_PROGRESS_FILE") is no part
	 * of it; a report of more than the bound is refused whole */
	int over = len > SKED_PROGRESS_MAX + 1 ||
	           (len == SKED_PROGRESS_MAX + 1 && buf[len - 1] != '\n');
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
	                   buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	if (len == 0)
		return NULL;
	*why = over ? "over the limit of 1024 bytes" : refused(buf, len);
	if (*why)
		return NULL;
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, buf, len);
		c[len] = '\0';
	}
	return c;
}

typedef struct item {
	int64_t id;
	int attempt;
	char *value; /* to store */
	char *path;  /* a program's file, read outside the lock */
	char *last;  /* what that file said when last stored */
	const char *why;
	int warned, stored;
} item;

static sked_job *
find_held(sked_worker *w, int64_t id, int attempt)
{
	for (sked_job *j = w->sh.held; j; j = j->hnext)
		if (j->t.id == id && j->t.attempt == attempt)
			return j;
	return NULL;
}

static int
put(sked_worker *w, sked *h, item *it, int n)
{
	int rc = SKED_OK, open = 0;
	if (n > 1) {
		if ((rc = sked__begin(h, 0)) != SKED_OK)
			return rc;
		open = 1;
	}
	for (int i = 0; i < n && rc == SKED_OK; i++) {
		if (!it[i].value)
			continue;
		sked_val p[4] = {SKED_INTV(it[i].id), SKED_INTV(it[i].attempt),
		                 SKED_TEXTV(w->node_id),
		                 SKED_TEXTV(it[i].value)};
		rc = sked__q(h, SKED_SQL_PROGRESS_PUT, p, 4, NULL);
	}
	if (open) {
		if (rc == SKED_OK)
			rc = sked__commit(h);
		else
			sked__rollback(h);
	}
	return rc;
}

void
sked__wk_progress_store(sked_worker *w, sked *h)
{
	item *it = NULL;
	int n = 0, cap = 0;
	pthread_mutex_lock(&w->sh.mu);
	for (sked_job *j = w->sh.held; j; j = j->hnext) {
		char *v = atomic_load(&j->progress_new);
		if (!v && !j->progress_file)
			continue; /* nothing reported: the usual case */
		if (n == cap) {
			int c2 = cap ? cap * 2 : 8;
			item *m = realloc(it, sizeof *it * (size_t)c2);
			if (!m)
				break; /* the rest at the next renewal */
			it = m;
			cap = c2;
		}
		item x = {.id = j->t.id,
		          .attempt = j->t.attempt,
		          .warned = j->progress_file ? j->progress_warned : 0};
		if (v) {
			x.value = atomic_exchange(&j->progress_new, NULL);
		} else {
			x.path = strdup(j->progress_file);
			x.last = j->progress_read ? strdup(j->progress_read)
			                          : NULL;
			if (!x.path) {
				free(x.last);
				continue;
			}
		}
		it[n++] = x;
	}
	pthread_mutex_unlock(&w->sh.mu);
	if (n == 0) {
		free(it);
		return;
	}
	/* the files, outside the lock: one unchanged since it was last
	 * stored costs no statement */
	int todo = 0;
	for (int i = 0; i < n; i++) {
		if (it[i].path) {
			it[i].value = read_file(it[i].path, &it[i].why);
			if (it[i].value && it[i].last &&
			    strcmp(it[i].value, it[i].last) == 0) {
				free(it[i].value);
				it[i].value = NULL;
			}
			if (it[i].why && !it[i].warned)
				sked__log(SKED_LOG_WARN,
				          "task %lld attempt %d: its progress "
				          "file's report is refused (%s); the "
				          "previous one stands",
				          (long long)it[i].id, it[i].attempt,
				          it[i].why);
		}
		todo += it[i].value != NULL;
	}
	int rc = todo ? put(w, h, it, n) : SKED_OK;
	if (rc != SKED_OK)
		sked__log(SKED_LOG_DEBUG, "cannot store progress: %s",
		          sked_errmsg(h));
	pthread_mutex_lock(&w->sh.mu);
	for (int i = 0; i < n; i++) {
		sked_job *j = find_held(w, it[i].id, it[i].attempt);
		if (j && it[i].why)
			j->progress_warned = 1;
		if (j && rc == SKED_OK && it[i].path && it[i].value) {
			/* the file's report, stored: kept to compare */
			free(j->progress_read);
			j->progress_read = it[i].value;
			it[i].value = NULL;
		} else if (j && rc != SKED_OK && !it[i].path && it[i].value) {
			/* not stored: again at the next renewal, unless a
			 * newer report came meanwhile */
			char *none = NULL;
			if (atomic_compare_exchange_strong(&j->progress_new,
			                                   &none, it[i].value))
				it[i].value = NULL;
		}
		free(it[i].value);
		free(it[i].path);
		free(it[i].last);
	}
	pthread_mutex_unlock(&w->sh.mu);
	free(it);
}
