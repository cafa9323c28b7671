/*
 * worker/pipe.h — the lines of the pipe: protocol (pipe.c), for the
 * processes that speak it (pipe_mux.c) and the fuzz target.
 *
 * Layer: the worker's pool (worker.h); no SQL, no processes: a task
 * becomes a line, a line becomes an answer, a hello or a refusal.
 */
#ifndef SKED_WORKER_PIPE_H
#define SKED_WORKER_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "worker/worker.h"

enum {
	SKED_PIPE_VERSION = 1,
	/* the most tasks one process is given at once, whatever its hello
	 * says (the worker's concurrency bounds it too) */
	SKED_PIPE_WINDOW_MAX = 1024,
};

/* The tail of what a handler wrote to stderr while a task was in flight
 * (kept in its run record), and how much of it went to the log. */
enum { SKED_PIPE_TAIL_MAX = 4096 };
typedef struct sked_pipe_tail {
	char buf[SKED_PIPE_TAIL_MAX];
	size_t len;
	long logged, dropped;          /* lines */
	long long logged_b, dropped_b; /* their bytes */
} sked_pipe_tail;
void sked__pipe_tail_add(sked_pipe_tail *t, const char *s, size_t n);

/* What one line from a handler's stdout is. */
enum {
	PIPE_BAD = -1, /* a protocol error: err says why */
	PIPE_NOTE,     /* a line without "id": a hello, or nothing to do */
	PIPE_ANSWER,   /* the answer for a task in flight: its job has it */
	PIPE_STRAY,    /* an answer for an id not in flight (find said NULL) */
	PIPE_PROGRESS, /* a progress report: job has it (NULL: not in flight;
	                  refused: not kept, note says why) */
};

typedef struct sked_pipe_msg {
	int64_t id;     /* PIPE_ANSWER, PIPE_STRAY */
	sked_job *job;  /* PIPE_ANSWER: the job find gave, now answered */
	int window;     /* PIPE_NOTE: 0 none said, else 1..WINDOW_MAX */
	int unnamed;    /* PIPE_BAD: err names no task (the caller says
	                    which were in flight) */
	char note[160]; /* PIPE_NOTE: a window that could not be taken as
	                    it was, and what it became; PIPE_PROGRESS: why
	                    a report was refused */
	int refused;    /* PIPE_PROGRESS */
} sked_pipe_msg;

/* The job in flight for id, or NULL (a stray answer). */
typedef sked_job *(*sked_pipe_find)(void *ctx, int64_t id);

/* Read one line (NUL-terminated, without its '\n'); an answer is applied
 * to the job find gives for its id (ok, error, retry_in_ms, retry,
 * result). Returns one of PIPE_*; err says why for PIPE_BAD. */
int sked__pipe_line(const char *s, sked_pipe_msg *m, sked_pipe_find find,
                    void *ctx, char *err, size_t errlen);

/* The line sent for a task: one JSON object ending in '\n' (*len bytes),
 * malloc'd; NULL when out of memory or the payload is not UTF-8. */
char *sked__pipe_task_line(const sked_job *j, int64_t deadline_ms, size_t *len);

#endif /* SKED_WORKER_PIPE_H */
