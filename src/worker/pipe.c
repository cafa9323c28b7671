/*
 * worker/pipe.c — the lines of the pipe: protocol: a task as a line, a
 * handler's line as an answer, a hello or a refusal (pipe.h). The
 * processes that speak it, and how many tasks each has in flight, are
 * pipe_mux.c's. The protocol (docs/handlers.md):
 *
 *   sked -> handler  a hello line without "id" when the process starts,
 *                    {"sked": "pipe", "version": 1}, then tasks, one a
 *                    line: {"id", "kind", "queue", "attempt",
 *                    "max_attempts", "payload" (a string), "fencing",
 *                    "deadline_ms"}, "traceparent" when the task has one,
 *                    and "parents" [{"id", "kind", "result"}, …] for a
 *                    task that waited for others; to a handler that
 *                    announced a window, {"cancel": N} when task N timed
 *                    out, was cancelled or lost its lease
 *   handler -> sked  per task one line {"id": N, "ok": true} or
 *                    {"id": N, "ok": false, "error": "…", "retry_in_ms": M},
 *                    either with an optional "result" (a string, or any
 *                    other value, kept as its JSON), in any order;
 *                    {"id": N, "progress": V} (no "ok") while task N
 *                    runs: its latest progress (V's JSON, at most 1 KiB),
 *                    stored with the next lease renewal;
 *                    lines without "id" are not answers: a hello of its
 *                    own, {"hello": …, "version": 1, "window": W}, may say
 *                    which version it speaks (another is refused) and how
 *                    many tasks it takes at once (W, 1 to 1024; without
 *                    it, one at a time: the next task is sent after the
 *                    answer)
 *   stderr           logged line by line under the task's id, or under
 *                    the process and the ids in flight when there are
 *                    several; its tail is kept in the run record of each
 *                    task in flight while it was written
 */
#include "worker/pipe.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

char *
sked__pipe_task_line(const sked_job *j, int64_t deadline_ms, size_t *len)
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

void
sked__pipe_tail_add(sked_pipe_tail *t, const char *s, size_t n)
{
	if (n >= SKED_PIPE_TAIL_MAX) {
		memcpy(t->buf, s + n - SKED_PIPE_TAIL_MAX, SKED_PIPE_TAIL_MAX);
		t->len = SKED_PIPE_TAIL_MAX;
		return;
	}
	if (t->len + n > SKED_PIPE_TAIL_MAX) {
		size_t drop = t->len + n - SKED_PIPE_TAIL_MAX;
		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* A line without "id": its version, and the window it announces. */
static int
note(json_t *o, sked_pipe_msg *m, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, "version");
	if (v && (!json_is_integer(v) ||
	          json_integer_value(v) != SKED_PIPE_VERSION)) {
		snprintf(err, errlen,
		         "pipe handler speaks protocol version %.20s; "
		         "this sked speaks %d",
		         json_is_integer(v) ? "another" : "(not a number)",
		         SKED_PIPE_VERSION);
		return PIPE_BAD;
	}
	json_t *w = json_object_get(o, "window");
	if (!w)
		return PIPE_NOTE;
	if (!json_is_integer(w)) {
		m->window = 1;
		snprintf(m->note, sizeof m->note,
		         "announced a window that is not a whole number; it "
		         "gets one task at a time");
	} else if (json_integer_value(w) < 1) {
		m->window = 1;
		snprintf(m->note, sizeof m->note,
		         "announced window %" JSON_INTEGER_FORMAT
		         ", which is not positive; it gets one task at a time",
		         json_integer_value(w));
	} else if (json_integer_value(w) > SKED_PIPE_WINDOW_MAX) {
		m->window = SKED_PIPE_WINDOW_MAX;
		snprintf(m->note, sizeof m->note,
		         "announced window %" JSON_INTEGER_FORMAT
		         ", over the bound of %d; it gets %d at most",
		         json_integer_value(w), SKED_PIPE_WINDOW_MAX,
		         SKED_PIPE_WINDOW_MAX);
	} else {
		m->window = (int)json_integer_value(w);
	}
	return PIPE_NOTE;
}

/* An answer for j: what it says, into j. */
static void
apply(sked_job *j, json_t *o)
{
	j->ok = json_is_true(json_object_get(o, "ok"));
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
		free(j->error);
		j->error = strdup(e && *e ? e : "pipe handler said ok: false");
		json_t *r = json_object_get(o, "retry_in_ms");
		if (json_is_integer(r) && json_integer_value(r) >= 0)
			j->retry_ms = (int64_t)json_integer_value(r);
		/* "retry": false: this failure is final */
		j->give_up = json_is_false(json_object_get(o, "retry"));
	}
}

/* A progress report for j: its JSON, kept for the next renewal; a value
 * refused says why in m->note (the previous report stands). */
static void
progress(sked_job *j, json_t *v, sked_pipe_msg *m)
{
	char *txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!txt)
		return;
	if (sked__wk_progress_report(j, txt, strlen(txt), m->note,
	                             sizeof m->note) == SKED_EINVAL)
		m->refused = 1;
	free(txt);
}

int
sked__pipe_line(const char *s, sked_pipe_msg *m, sked_pipe_find find, void *ctx,
                char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	json_error_t je;
	json_t *o = json_loads(s, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	if (!o || !json_is_object(o)) {
		snprintf(err, errlen,
		         "pipe handler wrote a line that is not a JSON object: "
		         "%.120s",
		         s);
		json_decref(o);
		return PIPE_BAD;
	}
	int r;
	json_t *id = json_object_get(o, "id");
	if (!id) {
		r = note(o, m, err, errlen);
	} else if (!json_is_integer(id)) {
		snprintf(err, errlen,
		         "pipe handler answered with an id that is not a "
		         "number");
		m->unnamed = 1;
		r = PIPE_BAD;
	} else {
		m->id = (int64_t)json_integer_value(id);
		json_t *pr = json_object_get(o, "progress");
		m->job = find(ctx, m->id);
		if (pr && !json_object_get(o, "ok")) {
			/* a report, not an answer: for a task no longer in
			 * flight it is too late, and nobody's fault */
			r = PIPE_PROGRESS;
			if (m->job)
				progress(m->job, pr, m);
		} else if (!m->job) {
			/* a second answer for an earlier task, or a stray
			 * one: the tasks in flight are not to blame */
			r = PIPE_STRAY;
		} else if (!json_is_boolean(json_object_get(o, "ok"))) {
			snprintf(err, errlen,
			         "pipe handler's answer for task %lld has no "
			         "boolean \"ok\"",
			         (long long)m->id);
			r = PIPE_BAD;
		} else {
			apply(m->job, o);
			r = PIPE_ANSWER;
		}
	}
	json_decref(o);
	return r;
}
