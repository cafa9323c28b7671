/*
 * fuzz_pipe.c — a fuzz target for the pipe: protocol's lines
 * (src/worker/pipe.c): the reader of a handler's stdout lines
 * (sked__pipe_line) and the writer of task lines (sked__pipe_task_line).
 *
 * This file includes pipe.c itself; the rest comes from the library. The
 * input's first byte picks the side:
 *   even  the rest is what a handler wrote on stdout, cut into lines as
 *         the worker cuts them, with task 7 in flight. Oracles: an
 *         answer is for id 7, and only the first one (later ones are
 *         strays); its ok is true or false, and a failed one carries an
 *         error text; a "result" is kept (at most SKED_RESULT_MAX bytes)
 *         or counted as over the bound, never both; a stray names
 *         another id; a protocol error says why; a window is 0 (none)
 *         or within 1..SKED_PIPE_WINDOW_MAX, and one taken otherwise
 *         than it was said comes with a note; a progress report is
 *         kept for task 7 only, at most SKED_PROGRESS_MAX bytes, and a
 *         refused one says why.
 *   odd   the rest is a task's payload: the task line written for it is
 *         one line ending in '\n' (no raw newline inside), parses as a
 *         JSON object and gives the payload back byte for byte; only a
 *         payload that is not UTF-8 (jansson's rule) gets no line.
 *
 * Built as a libFuzzer program with -DSKED_LIBFUZZER (`make fuzz`) and
 * as a plain program replaying tests/fuzz/corpus/pipe.
 */
#include "../../src/worker/pipe.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
bad(const char *what)
{
	fprintf(stderr, "finding: pipe: %s\n", what);
	abort();
}

struct inflight {
	sked_job *j;
	int answered;
};

static sked_job *
find7(void *ctx, int64_t id)
{
	struct inflight *f = ctx;
	return id == 7 && !f->answered ? f->j : NULL;
}

static void
reader(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	sked_job j;
	memset(&j, 0, sizeof j);
	j.t.id = 7;
	struct inflight f = {.j = &j};
	size_t start = 0;
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != '\n')
			continue;
		buf[i] = '\0';
		char *s = buf + start;
		start = i + 1;
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s)
			continue;
		sked_pipe_msg m;
		char err[256] = "";
		int r = sked__pipe_line(s, &m, find7, &f, err, sizeof err);
		if (r == PIPE_ANSWER) {
			if (m.id != 7 || m.job != &j || f.answered)
				bad("an answer for a task not in flight");
			f.answered = 1;
			if (j.ok != 0 && j.ok != 1)
				bad("ok is neither true nor false");
			if (!j.ok && (!j.error || !*j.error))
				bad("a failed answer without an error text");
			if (j.ok && j.error)
				bad("a successful answer with an error text");
			if (j.result &&
			    (j.result_over || j.result_len > SKED_RESULT_MAX))
				bad("a result over the bound was kept");
			if (j.result && j.result[j.result_len] != '\0')
				bad("a result is not NUL-terminated");
		} else if (r == PIPE_STRAY) {
			if (m.id == 7 && !f.answered)
				bad("the answer for the task in flight went "
				    "stray");
		} else if (r == PIPE_BAD) {
			if (!err[0])
				bad("a protocol error without a reason");
		} else if (r == PIPE_PROGRESS) {
			/* a report: kept for the task in flight only, bounded,
			 * text without NUL; never an answer */
			char *p = atomic_load(&j.progress_new);
			if (m.job && m.job != &j)
				bad("a report for a task not in flight");
			if (p &&
			    (strlen(p) == 0 || strlen(p) > SKED_PROGRESS_MAX))
				bad("a report over the bound was kept");
			if (m.refused && !m.note[0])
				bad("a refused report without a reason");
		} else if (r == PIPE_NOTE) {
			if (m.window < 0 || m.window > SKED_PIPE_WINDOW_MAX)
				bad("a window out of its bounds");
		} else {
			bad("sked__pipe_line returned something else");
		}
	}
	free(j.error);
	free(j.result);
	free(atomic_load(&j.progress_new));
	free(buf);
}

static void
writer(const uint8_t *data, size_t size)
{
	sked_job j;
	memset(&j, 0, sizeof j);
	j.t.id = 42;
	j.t.kind = (char *)"kind";
	j.t.queue = (char *)"default";
	j.t.attempt = 2;
	j.t.max_attempts = 5;
	j.t.payload = (char *)data;
	j.t.payload_len = size;
	size_t len = 0;
	char *line = sked__pipe_task_line(&j, 123456, &len);
	json_t *probe = json_stringn((const char *)data, size);
	if (!line) {
		if (probe)
			bad("no task line for a UTF-8 payload");
		return;
	}
	json_decref(probe);
	if (len == 0 || line[len - 1] != '\n' || memchr(line, '\n', len - 1))
		bad("a task line is not one line");
	json_error_t je;
	json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, &je);
	if (!o || !json_is_object(o))
		bad("a task line does not parse");
	json_t *pl = json_object_get(o, "payload");
	if (!json_is_string(pl) || json_string_length(pl) != size ||
	    (size && memcmp(json_string_value(pl), data, size) != 0))
		bad("the payload does not come back");
	if (json_integer_value(json_object_get(o, "id")) != 42)
		bad("the id does not come back");
	json_decref(o);
	free(line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	if (data[0] & 1)
		writer(data + 1, size - 1);
	else
		reader(data + 1, size - 1);
	return 0;
}

#include "fuzz_main.h"
