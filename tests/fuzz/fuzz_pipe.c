/*
 * fuzz_pipe.c — a fuzz target for the pipe: protocol (src/worker/pipe.c):
 * the reader of a handler's answer lines (take_lines, answer) and the
 * writer of task lines (task_line).
 *
 * pipe.c's reader and writer are static, so this file includes pipe.c
 * itself; the rest comes from the library. The input's first byte picks
 * the side:
 *   even  the rest is what a handler wrote on stdout: lines are taken
 *         as the worker takes them, for task 7. Oracles: an answer (1)
 *         is a JSON object with "id": 7 and a boolean "ok", and a failed
 *         one carries an error text; a "result" is kept (at most
 *         SKED_RESULT_MAX bytes) or counted as over the bound, never
 *         both; a protocol error (-1) says why;
 *         bytes after an answer are dropped, a partial line is kept.
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

static void
reader(const uint8_t *data, size_t size)
{
	sked_pipe p;
	memset(&p, 0, sizeof p);
	p.cap = size + 1;
	p.line = malloc(p.cap);
	if (!p.line)
		abort();
	memcpy(p.line, data, size);
	p.len = size;
	sked_job j;
	memset(&j, 0, sizeof j);
	j.t.id = 7;
	char err[256] = "";
	int r = take_lines(&p, &j, err, sizeof err);
	if (r == 1) {
		if (j.ok != 0 && j.ok != 1)
			bad("ok is neither true nor false");
		if (!j.ok && (!j.error || !*j.error))
			bad("a failed answer without an error text");
		if (j.ok && j.error)
			bad("a successful answer with an error text");
		if (p.len != 0)
			bad("bytes after an answer were kept");
		if (j.result && (j.result_over || j.result_len > SKED_RESULT_MAX))
			bad("a result over the bound was kept");
		if (j.result && j.result[j.result_len] != '\0')
			bad("a result is not NUL-terminated");
	} else if (r == -1) {
		if (!err[0])
			bad("a protocol error without a reason");
	} else if (r == 0) {
		if (p.len > size || memchr(p.line, '\n', p.len))
			bad("a complete line was left unread");
	} else {
		bad("take_lines returned something else");
	}
	free(j.error);
	free(j.result);
	free(p.line);
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
	char *line = task_line(&j, 123456, &len);
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
