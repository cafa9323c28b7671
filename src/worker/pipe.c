/*
 * worker/pipe.c — pipe: handlers: long-lived processes that take one task
 * per line and answer one result per line (JSON lines).
 *
 * Layer: the worker's pool (worker.h), on the runner (exec.h) and the
 * lease guard (guard.h); no SQL. Each pool thread keeps its own process
 * per pipe: kind, started on the first task of that kind, so a process has
 * at most one task in flight and needs no concurrency of its own. The
 * protocol (docs/handlers.md):
 *
 *   sked -> handler  a hello line without "id" when the process starts,
 *                    {"sked": "pipe", "version": 1}, then one task per line:
 *                    {"id", "kind", "queue", "attempt", "max_attempts",
 *                     "payload" (a string), "fencing", "deadline_ms"},
 *                    "traceparent" when the task has one, and "parents"
 *                    [{"id", "kind", "result"}, …] for a task that
 *                    waited for others
 *   handler -> sked  per task one line {"id": N, "ok": true} or
 *                    {"id": N, "ok": false, "error": "…", "retry_in_ms": M},
 *                    either with an optional "result" (a string, or any
 *                    other value, kept as its JSON);
 *                    lines without "id" are ignored (a hello of its own,
 *                    {"hello": …, "version": 1}, may say which version it
 *                    speaks: another version is refused)
 *   stderr           logged line by line under the task's id; its tail is
 *                    kept in the run record
 *
 * An answer for an id that is not in flight (a second answer for an
 * earlier task) is logged with its id and ignored. A process that dies,
 * writes a line that is not a JSON object, or speaks another version
 * fails the attempt with a clear error and is killed; the next task of its kind starts a new one,
 * after a pause that doubles on every failure to start (at most 5 s). A
 * timeout, a cancel or a lost lease kills the process too: its result
 * would be too late to apply, and a process that runs on cannot be
 * trusted with the next task.
 */
#include "worker/worker.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "util/log.h"

enum {
	PIPE_VERSION = 1,
	LINE_MAX_BYTES = 1 << 20,  /* an answer longer than this is malformed */
	TAIL_MAX = 4096,           /* stderr kept for the run record */
	LOG_LINES_MAX = 200,       /* stderr lines logged per task, */
	LOG_BYTES_MAX = 64 * 1024, /* and their bytes: the rest is counted */
	BACKOFF_MIN_MS = 100,
	BACKOFF_MAX_MS = 5000,
	START_MS = 10000, /* a new process must take its hello in this */
};

struct sked_pipe {
	const handler *x;
	sked_exec_proc *proc;
	int64_t not_before; /* monotonic ms: no new process before this */
	int64_t backoff_ms;
	char *line; /* stdout bytes not yet ended by '\n' */
	size_t len, cap;
	char err[512]; /* stderr bytes not yet ended by '\n' */
	size_t errlen;
	sked_pipe *next;
};

static void
pipe_kill(sked_pipe *p, int failed)
{
	sked__exec_proc_stop(p->proc);
	p->proc = NULL;
	p->len = 0;
	p->errlen = 0;
	if (failed) {
		p->backoff_ms =
		        p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (p->backoff_ms > BACKOFF_MAX_MS)
			p->backoff_ms = BACKOFF_MAX_MS;
		p->not_before = sked__mono_ms() + p->backoff_ms;
	}
}

void
sked__wk_pipes_free(sked_pipe *list)
{
	while (list) {
		sked_pipe *next = list->next;
		pipe_kill(list, 0);
		free(list->line);
		free(list);
		list = next;
	}
}

/* The tail of what a task's handler wrote to stderr, and how much of it
 * went to the log. */
struct tail {
	char buf[TAIL_MAX];
	size_t len;
	int cut;
	long logged, dropped;          /* lines */
	long long logged_b, dropped_b; /* their bytes */
};

static void
tail_add(struct tail *t, const char *s, size_t n)
{
	if (n >= TAIL_MAX) {
		memcpy(t->buf, s + n - TAIL_MAX, TAIL_MAX);
		t->len = TAIL_MAX;
		t->cut = 1;
		return;
	}
	if (t->len + n > TAIL_MAX) {
		size_t drop = t->len + n - TAIL_MAX;
		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
		t->cut = 1;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* Read what stderr holds: log whole lines under the task id (at most
 * LOG_LINES_MAX lines and LOG_BYTES_MAX bytes a task: a handler that floods
 * stderr cannot fill the disk with the worker's log), keep all of it in
 * the tail. */
static void
read_stderr(sked_pipe *p, int64_t task, struct tail *t)
{
	int fd = sked__exec_proc_fd(p->proc, 2);
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		tail_add(t, buf, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n' && p->errlen + 1 < sizeof p->err) {
				p->err[p->errlen++] = buf[i];
				continue;
			}
			if (buf[i] != '\n')
				continue; /* overlong: the rest of it is dropped
				           */
			p->err[p->errlen] = '\0';
			if (t->logged < LOG_LINES_MAX &&
			    t->logged_b + (long long)p->errlen <=
			            LOG_BYTES_MAX) {
				sked__log_facts f = {.task_id = (long long)task,
				                     .kind = p->x->kind,
				                     .duration_ms = -1};
				sked__log_task(SKED_LOG_INFO, &f,
				               "task %lld (%s): %s", f.task_id,
				               p->x->kind, p->err);
				t->logged++;
				t->logged_b += (long long)p->errlen;
			} else {
				t->dropped++;
				t->dropped_b += (long long)p->errlen;
			}
			p->errlen = 0;
		}
	}
}

static int
start(sked_pipe *p, sked_worker *w, char *err, size_t errlen)
{
	char node[SKED_MAX_NAME + 32], kind[SKED_MAX_NAME + 32];
	snprintf(node, sizeof node, "SKED_NODE_ID=%s", w->node_id);
	snprintf(kind, sizeof kind, "SKED_HANDLER_KIND=%s", p->x->kind);
	const char *env[] = {node, kind, "SKED_PIPE_PROTOCOL=1", NULL};
	sked_exec_spec spec = {.argv = (const char *const *)p->x->argv,
	                       .env_extra = env,
	                       .scrub_env = 1};
	int rc = sked__exec_spawn(&spec, &p->proc, err, errlen);
	if (rc != SKED_OK) {
		pipe_kill(p, 1);
		return rc;
	}
	p->len = 0;
	p->errlen = 0;
	return SKED_OK;
}

/* Write all of buf to fd (non-blocking) before the deadline, or fail. A
 * broken pipe's SIGPIPE stays blocked on pool threads; it is taken back
 * so that it never reaches the process later. */
static int
write_all(int fd, const char *buf, size_t n, int cancel_fd, int64_t deadline)
{
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EPIPE) {
			sigset_t pipe_set;
			sigemptyset(&pipe_set);
			sigaddset(&pipe_set, SIGPIPE);
			struct timespec zero = {0, 0};
			sigtimedwait(&pipe_set, NULL, &zero);
			return -1;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		int64_t left = deadline - sked__mono_ms();
		if (left <= 0)
			return -2;
		struct pollfd fds[2] = {{.fd = fd, .events = POLLOUT},
		                        {.fd = cancel_fd, .events = POLLIN}};
		if (poll(fds, 2, (int)(left > 1000 ? 1000 : left)) > 0 &&
		    (fds[1].revents & POLLIN))
			return -3;
	}
	return 0;
}

static char *
task_line(const sked_job *j, int64_t deadline_ms, size_t *len)
{
	json_t *o = json_pack(
	        "{s:I, s:s, s:s, s:i, s:i, s:s%, s:i, s:I}", "id",
	        (json_int_t)j->t.id, "kind", j->t.kind, "queue", j->t.queue,
	        "attempt", j->t.attempt, "max_attempts", j->t.max_attempts,
	        "payload", j->t.payload ? j->t.payload : "",
	        j->t.payload ? j->t.payload_len : 0, "fencing", j->t.attempt,
	        "deadline_ms", (json_int_t)deadline_ms);
	if (o && j->t.traceparent &&
	    json_object_set_new(o, "traceparent",
	                        json_string(j->t.traceparent)) != 0) {
		json_decref(o);
		return NULL;
	}
	if (!o)
		return NULL;
	/* a task that waited for others: its parents and their results */
	json_t *par = j->parents && j->parents->json
	                      ? json_loads(j->parents->json, 0, NULL)
	                      : NULL;
	if (par && json_object_set_new(o, "parents", par) != 0) {
		json_decref(o);
		return NULL;
	}
	char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!s)
		return NULL;
	*len = strlen(s);
	char *line = realloc(s, *len + 2);
	if (!line) {
		free(s);
		return NULL;
	}
	line[(*len)++] = '\n';
	line[*len] = '\0';
	return line;
}

/* What one answer line says. Returns 1 when it answers the task (j gets
 * the result), 0 for a line to ignore, -1 for a protocol error (err). */
static int
answer(sked_job *j, const char *s, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loads(s, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!o || !json_is_object(o)) {
		snprintf(err, errlen,
		         "pipe handler wrote a line that is not a JSON object: "
		         "%.120s",
		         s);
		json_decref(o);
		return -1;
	}
	json_t *id = json_object_get(o, "id");
	if (!id) {
		json_t *v = json_object_get(o, "version");
		if (v && (!json_is_integer(v) ||
		          json_integer_value(v) != PIPE_VERSION)) {
			snprintf(err, errlen,
			         "pipe handler speaks protocol version %.20s; "
			         "this sked speaks %d",
			         json_is_integer(v) ? "another"
			                            : "(not a number)",
			         PIPE_VERSION);
			json_decref(o);
			return -1;
		}
		json_decref(o);
		return 0;
	}
	if (!json_is_integer(id)) {
		snprintf(err, errlen,
		         "pipe handler answered with an id that is not a "
		         "number while it ran task %lld",
		         (long long)j->t.id);
		json_decref(o);
		return -1;
	}
	if (json_integer_value(id) != j->t.id) {
		/* a second answer for an earlier task, or a stray one: the
		 * task in flight is not to blame */
		sked__log(SKED_LOG_WARN,
		          "task %lld (%s): pipe handler answered for id "
		          "%" JSON_INTEGER_FORMAT
		          ", which is not in flight; ignored",
		          (long long)j->t.id, j->t.kind,
		          json_integer_value(id));
		json_decref(o);
		return 0;
	}
	json_t *ok = json_object_get(o, "ok");
	if (!json_is_boolean(ok)) {
		snprintf(err, errlen,
		         "pipe handler's answer for task %lld has no boolean "
		         "\"ok\"",
		         (long long)j->t.id);
		json_decref(o);
		return -1;
	}
	j->ok = json_is_true(ok);
	/* its result: a string as it is, any other value as its JSON */
	json_t *res = json_object_get(o, "result");
	if (json_is_string(res)) {
		sked__ignore(sked__wk_set_result(j, json_string_value(res),
		                                 json_string_length(res)));
	} else if (res && !json_is_null(res)) {
		char *txt = json_dumps(res, JSON_COMPACT | JSON_ENCODE_ANY);
		if (txt)
			sked__ignore(sked__wk_set_result(j, txt, strlen(txt)));
		free(txt);
	}
	if (!j->ok) {
		const char *e = json_string_value(json_object_get(o, "error"));
		j->error = strdup(e && *e ? e : "pipe handler said ok: false");
		json_t *r = json_object_get(o, "retry_in_ms");
		if (json_is_integer(r) && json_integer_value(r) >= 0)
			j->retry_ms = (int64_t)json_integer_value(r);
		/* "retry": false: this failure is final */
		j->give_up = json_is_false(json_object_get(o, "retry"));
	}
	json_decref(o);
	return 1;
}

/* Take the complete lines out of p->line; 1 when one answered the task. */
static int
take_lines(sked_pipe *p, sked_job *j, char *err, size_t errlen)
{
	size_t start = 0;
	for (size_t i = 0; i < p->len; i++) {
		if (p->line[i] != '\n')
			continue;
		p->line[i] = '\0';
		char *s = p->line + start;
		start = i + 1;
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			continue;
		int r = answer(j, s, err, errlen);
		if (r != 0) {
			p->len = 0; /* nothing after an answer is kept */
			return r;
		}
	}
	memmove(p->line, p->line + start, p->len - start);
	p->len -= start;
	return 0;
}

static int
read_stdout(sked_pipe *p)
{
	int fd = sked__exec_proc_fd(p->proc, 1);
	for (;;) {
		if (p->cap - p->len < 4096) {
			size_t cap = p->cap ? p->cap * 2 : 8192;
			char *nl = realloc(p->line, cap);
			if (!nl)
				return -1;
			p->line = nl;
			p->cap = cap;
		}
		ssize_t n = read(fd, p->line + p->len, p->cap - p->len - 1);
		if (n > 0) {
			p->len += (size_t)n;
			if (p->len > LINE_MAX_BYTES)
				return -2;
			continue;
		}
		if (n == 0)
			return 1; /* EOF */
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
}

static sked_pipe *
pipe_for(sked_pipe **list, const handler *x)
{
	for (sked_pipe *p = *list; p; p = p->next)
		if (p->x == x)
			return p;
	sked_pipe *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->x = x;
	p->next = *list;
	*list = p;
	return p;
}

static void
fail(sked_job *j, const char *msg)
{
	free(j->error);
	j->error = strdup(msg);
	j->ok = 0;
}

void
sked__wk_run_pipe(sked_job *j, const handler *x, sked_pipe **list)
{
	sked_worker *w = j->w;
	j->ok = 0;
	j->exit_code = -1;
	sked_pipe *p = pipe_for(list, x);
	if (!p) {
		fail(j, "out of memory");
		return;
	}
	int64_t timeout = x->timeout_ms ? x->timeout_ms : w->o.timeout_ms;
	/* starting a process has a bound of its own; the task's timeout
	 * runs from the moment it is handed over */
	int64_t deadline = sked__mono_ms() + BACKOFF_MAX_MS + START_MS;
	char err[512] = "";
	struct tail t = {.len = 0};

	if (!p->proc) {
		/* a process that failed lately waits its turn */
		while (sked__mono_ms() < p->not_before &&
		       atomic_load(&j->cancel) == CANCEL_NONE) {
			struct timespec ts = {0, 20 * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (atomic_load(&j->cancel) != CANCEL_NONE) {
			fail(j, "cancelled");
			return;
		}
		if (start(p, w, err, sizeof err) != SKED_OK) {
			char msg[600];
			snprintf(msg, sizeof msg, "pipe handler: %s", err);
			fail(j, msg);
			return;
		}
		const char hello[] = "{\"sked\":\"pipe\",\"version\":1}\n";
		if (write_all(sked__exec_proc_fd(p->proc, 0), hello,
		              sizeof hello - 1, j->cancel_fd, deadline) != 0) {
			pipe_kill(p, 1);
			fail(j, "pipe handler: the process did not take the "
			        "hello line (did it exit?)");
			return;
		}
	}
	if (w->guard && j->slot >= 0)
		sked__guard_arm(w->guard, j->slot,
		                sked__exec_proc_pid(p->proc));

	deadline = timeout > 0 ? sked__mono_ms() + timeout : INT64_MAX;
	size_t len = 0;
	char *line = task_line(j, timeout > 0 ? timeout : 0, &len);
	int rc = line ? write_all(sked__exec_proc_fd(p->proc, 0), line, len,
	                          j->cancel_fd, deadline)
	              : -4;
	free(line);
	int done = 0, failed = 1;
	if (rc == -1)
		snprintf(err, sizeof err,
		         "the pipe handler process exited before it took the "
		         "task");
	else if (rc == -2)
		snprintf(err, sizeof err, "timed out writing the task");
	else if (rc == -3)
		snprintf(err, sizeof err, "cancelled");
	else if (rc == -4)
		snprintf(err, sizeof err, "out of memory");
	while (rc == 0 && !done) {
		int64_t now = sked__mono_ms();
		if (now >= deadline) {
			snprintf(err, sizeof err, "timed out after %lld ms",
			         (long long)timeout);
			break;
		}
		struct pollfd fds[4] = {
		        {.fd = sked__exec_proc_fd(p->proc, 1),
		         .events = POLLIN},
		        {.fd = sked__exec_proc_fd(p->proc, 2),
		         .events = POLLIN},
		        {.fd = j->cancel_fd, .events = POLLIN},
		        {.fd = sked__exec_proc_fd(p->proc, 3),
		         .events = POLLIN},
		};
		int nfds = fds[3].fd >= 0 ? 4 : 3;
		int64_t left = deadline - now;
		int wait = left > 200 ? 200 : (int)left;
		if (poll(fds, (nfds_t)nfds, wait) < 0 && errno != EINTR) {
			snprintf(err, sizeof err, "poll: %s", strerror(errno));
			break;
		}
		read_stderr(p, j->t.id, &t);
		if (fds[2].revents & POLLIN) {
			snprintf(err, sizeof err, "cancelled");
			break;
		}
		int r = read_stdout(p);
		if (r == -2) {
			snprintf(err, sizeof err,
			         "pipe handler wrote a line longer than %d "
			         "bytes",
			         LINE_MAX_BYTES);
			break;
		}
		int got = take_lines(p, j, err, sizeof err);
		if (got == 1) {
			done = 1;
			failed = 0;
			break;
		}
		if (got < 0)
			break;
		int status = 0;
		if (r != 0 || sked__exec_proc_exited(p->proc, &status)) {
			snprintf(err, sizeof err,
			         "the pipe handler process exited before it "
			         "answered task %lld",
			         (long long)j->t.id);
			break;
		}
	}
	if (w->guard && j->slot >= 0) {
		sked__guard_disarm(w->guard, j->slot);
		if (sked__guard_fired(w->guard, j->slot))
			snprintf(err, sizeof err,
			         "killed at its lease deadline by the lease "
			         "guard");
	}
	if (p->proc)
		read_stderr(p, j->t.id, &t);
	if (t.dropped)
		sked__log(SKED_LOG_WARN,
		          "task %lld (%s): %ld more stderr line(s), %lld "
		          "byte(s), not logged (at most %d lines or %d bytes "
		          "a task)",
		          (long long)j->t.id, x->kind, t.dropped, t.dropped_b,
		          LOG_LINES_MAX, LOG_BYTES_MAX);
	if (t.len) {
		j->output = malloc(t.len + 1);
		if (j->output) {
			memcpy(j->output, t.buf, t.len);
			j->output[t.len] = '\0';
		}
	}
	if (done && !failed) {
		p->backoff_ms = 0;
		return;
	}
	/* the process cannot be trusted with another task */
	pipe_kill(p, 1);
	fail(j, err[0] ? err : "pipe handler failed");
}
