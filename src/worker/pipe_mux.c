/*
 * worker/pipe_mux.c — pipe: handler processes, shared by a worker's pool
 * threads: each process takes up to its window of tasks at once.
 *
 * Layer: the worker's pool (worker.h), on the runner (exec.h), the lease
 * guard (guard.h) and the protocol's lines (pipe.h); no SQL. The protocol
 * is at the top of pipe.c and in docs/handlers.md.
 *
 * Size: about 900 lines, one file on purpose: the process list, the
 * reading turn and the teardown share one locking rule (the kind's mutex
 * for reads, file descriptors closed only by the reader), and splitting
 * them would put that rule in two places. The line parsing (pipe.c) and
 * the eventfd ring (jobs.c) already live apart.
 *
 * A pipe: kind has a list of processes. A process's window is 1 until
 * its hello announces more ({"window": W}); a pool thread with a task of
 * the kind hands it to the first process with room, or starts one. So a
 * handler without a window gets one process per task running at once, as
 * many as the threads that run the kind (one at a time each), and one
 * with window W gets one process per W of them. While a kind's first
 * process has not said anything yet, other tasks of the kind wait for it
 * (at most HELLO_WAIT_MS) instead of starting a process each.
 *
 * Each task waits on its own pool thread. Of the threads with a task on
 * a process, one at a time reads it (p->reading): it polls the process's
 * stdout, stderr and pidfd, writes what is queued for its stdin, and
 * hands each answer to the task it names, waking that task's thread (an
 * eventfd per thread). The others sleep on their eventfd and their
 * task's cancel fd, and each still watches its own deadline. A thread
 * whose task is done while others wait hands the reading on. The kind's
 * mutex is held for the reads, never across a wait, and a turn reads a
 * bounded amount, so a process that floods cannot starve the others.
 *
 * A process's file descriptors are closed only by the thread that reads
 * it (teardown): a thread that must kill it while another reads sends
 * SIGKILL to its group and leaves the rest to the reader, which then
 * sees it exit.
 *
 * Timeouts, cancels and lost leases: a process that announced a window
 * gets {"cancel": N}; the attempt fails at once as it always did, and
 * the process has CANCEL_GRACE_MS (as a program between SIGTERM and
 * SIGKILL) to stop the task and answer for it (the answer is ignored).
 * One that does not is killed, and the other tasks in flight on it fail
 * (they are retried as any failure). A process without a window is
 * killed at once, as before: it has nothing else in flight.
 */
#include "worker/pipe.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "util/log.h"

enum {
	LINE_MAX_BYTES = 1 << 20,  /* an answer longer than this is malformed */
	LOG_LINES_MAX = 200,       /* stderr lines logged per task, */
	LOG_BYTES_MAX = 64 * 1024, /* and their bytes: the rest is counted */
	BACKOFF_MIN_MS = 100,
	BACKOFF_MAX_MS = 5000,
	HELLO_WAIT_MS = 5000,   /* a kind's first process may say its window */
	CANCEL_GRACE_MS = 2000, /* a cancelled task may take to stop */
	READ_CHUNKS = 16,       /* reads of a stream in one turn */
	TURN_MS = 200,          /* the longest sleep between looks */
	STRAYS_LOGGED = 100,    /* stray answers logged per process */
	IDS_NAMED = 8,          /* task ids named in one line */
};

typedef struct slot slot;
typedef struct proc proc;
typedef struct kind kind;

/* A task handed to a process: on its pool thread's stack. */
struct slot {
	sked_job *j;
	int wake_fd;       /* its thread's eventfd */
	proc *p;           /* k->mu: its process; NULL once done */
	int done;          /* k->mu: answered, or failed (err) */
	int answered;      /* k->mu: its answer came: j holds it */
	int cancelled;     /* k->mu: it timed out or was cancelled (err) */
	int64_t grace_end; /* then the process is killed at this */
	char err[640];
	sked_pipe_tail t;
	slot *next; /* in p->in, in the order sent */
};

struct proc {
	kind *k;
	sked_exec_proc *ep;
	pid_t pid;
	int window;    /* tasks at once */
	int announced; /* its hello had a window: it takes {"cancel"} */
	int heard;     /* it wrote a line */
	int said;      /* its own hello said its window */
	int reading;   /* a thread reads it */
	int dying;     /* killed: its reader tears it down */
	int err_eof;   /* its stderr is closed: not polled any more */
	int64_t started;
	char why[640]; /* dying: what its tasks are told ("": exited) */
	slot *in;
	int nin;
	char *out; /* bytes for its stdin, from outoff */
	size_t outoff, outlen, outcap;
	char *line; /* stdout bytes not yet ended by '\n' */
	size_t len, cap;
	char err[512]; /* stderr bytes not yet ended by '\n' */
	size_t errlen;
	long strays;
	proc *next;
};

struct kind {
	const handler *x;
	sked_worker *w;
	pthread_mutex_t mu; /* everything below, its processes, their slots */
	proc *procs;
	int window;    /* the last window a process of it said; 0: none yet */
	int announced; /* and whether it was announced */
	int64_t not_before; /* monotonic ms: no new process before this */
	int64_t backoff_ms;
	kind *next;
};

/* The worker's (w->sh.pipes): kinds, made on first use, freed by the last
 * pool thread that used them. */
struct sked_pipes {
	pthread_mutex_t mu; /* kinds */
	kind *kinds;
	int refs; /* w->sh.mu */
};

/* A pool thread's. */
struct sked_pipe {
	sked_worker *w;
	struct sked_pipes *s;
	int wake_fd;
};

/* Sleep until fd a (drained) or b is readable, or ms pass. */
static void
sleep_on(int a, int b, int64_t ms)
{
	struct pollfd fds[2] = {{.fd = a, .events = POLLIN},
	                        {.fd = b, .events = POLLIN}};
	if (ms < 0)
		ms = 0;
	if (poll(fds, 2, (int)(ms > TURN_MS ? TURN_MS : ms)) > 0 &&
	    (fds[0].revents & POLLIN))
		sked__wk_drain_fd(a);
}

/* "4, 7, 9" for the tasks in flight on p (IDS_NAMED at most). */
static void
ids_of(const proc *p, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;
	buf[0] = '\0';
	for (const slot *s = p->in; s && off < len; s = s->next, n++) {
		int r = n == IDS_NAMED ? snprintf(buf + off, len - off,
		                                  ", \xe2\x80\xa6")
		                       : snprintf(buf + off, len - off,
		                                  "%s%lld", n ? ", " : "",
		                                  (long long)s->j->t.id);
		if (r < 0 || n == IDS_NAMED)
			break;
		off += (size_t)r;
	}
}

/* Kill p's process group; its reader tears it down. why (or NULL: it
 * exited) is what its tasks in flight are told. */
static void
kill_proc(proc *p, const char *why)
{
	if (p->dying)
		return;
	p->dying = 1;
	snprintf(p->why, sizeof p->why, "%s", why ? why : "");
	/* not reaped before teardown: the group cannot be another's yet */
	kill(-p->pid, SIGKILL);
	kill(p->pid, SIGKILL);
}

static void
slot_done(slot *s, int answered)
{
	proc *p = s->p;
	for (slot **q = &p->in; *q; q = &(*q)->next)
		if (*q == s) {
			*q = s->next;
			p->nin--;
			break;
		}
	s->next = NULL;
	s->p = NULL;
	s->done = 1;
	s->answered = answered;
	sked__wk_ring_fd(s->wake_fd);
}

/* One line of stderr (p->err, errlen bytes): logged under the task in
 * flight, or under the process and the ids in flight, while every one of
 * them has room in its share of the log. */
static void
log_err_line(proc *p)
{
	long long n = (long long)p->errlen;
	int room = p->in != NULL;
	for (slot *s = p->in; s; s = s->next)
		if (s->t.logged >= LOG_LINES_MAX ||
		    s->t.logged_b + n > LOG_BYTES_MAX)
			room = 0;
	for (slot *s = p->in; s; s = s->next) {
		if (room) {
			s->t.logged++;
			s->t.logged_b += n;
		} else {
			s->t.dropped++;
			s->t.dropped_b += n;
		}
	}
	if (!room)
		return;
	const char *kname = p->k->x->kind;
	if (p->nin == 1) {
		sked__log_facts f = {.task_id = (long long)p->in->j->t.id,
		                     .kind = kname,
		                     .duration_ms = -1};
		sked__log_task(SKED_LOG_INFO, &f, "task %lld (%s): %s",
		               f.task_id, kname, p->err);
		return;
	}
	char ids[160];
	ids_of(p, ids, sizeof ids);
	sked__log(SKED_LOG_INFO,
	          "pipe handler %s (pid %d; tasks %s in flight): %s", kname,
	          (int)p->pid, ids, p->err);
}

/* Read what stderr holds (a bounded amount a turn): whole lines to the
 * log, all of it to the tail of each task in flight. */
static void
read_stderr(proc *p)
{
	int fd = sked__exec_proc_fd(p->ep, 2);
	char buf[4096];
	for (int c = 0; c < READ_CHUNKS; c++) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n == 0)
			p->err_eof = 1;
		if (n <= 0)
			return;
		for (slot *s = p->in; s; s = s->next)
			sked__pipe_tail_add(&s->t, buf, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n' && p->errlen + 1 < sizeof p->err) {
				p->err[p->errlen++] = buf[i];
				continue;
			}
			if (buf[i] != '\n')
				continue; /* overlong: the rest of it is dropped */
			p->err[p->errlen] = '\0';
			log_err_line(p);
			p->errlen = 0;
		}
	}
}

static int
out_add(proc *p, const char *s, size_t n)
{
	if (p->outoff == p->outlen)
		p->outoff = p->outlen = 0;
	if (p->outlen + n > p->outcap) {
		size_t cap = p->outcap ? p->outcap : 4096;
		while (cap < p->outlen + n)
			cap *= 2;
		char *o = realloc(p->out, cap);
		if (!o)
			return -1;
		p->out = o;
		p->outcap = cap;
	}
	memcpy(p->out + p->outlen, s, n);
	p->outlen += n;
	return 0;
}

/* Write what is queued for stdin, as much as it takes now. -1: it is
 * closed. A broken pipe's SIGPIPE stays blocked on pool threads; it is
 * taken back so that it never reaches the process later. */
static int
flush(proc *p)
{
	int fd = sked__exec_proc_fd(p->ep, 0);
	while (p->outoff < p->outlen) {
		ssize_t n =
		        write(fd, p->out + p->outoff, p->outlen - p->outoff);
		if (n > 0) {
			p->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0 && errno == EPIPE) {
			sigset_t pipe_set;
			sigemptyset(&pipe_set);
			sigaddset(&pipe_set, SIGPIPE);
			struct timespec zero = {0, 0};
			sigtimedwait(&pipe_set, NULL, &zero);
		}
		return -1;
	}
	return 0;
}

/* The answers' lookup: a slot in flight with that id. A cancelled one
 * is not answered (its answer only ends its wait: late). */
struct find {
	proc *p;
	slot *hit, *late;
};

static sked_job *
find_slot(void *ctx, int64_t id)
{
	struct find *f = ctx;
	for (slot *s = f->p->in; s; s = s->next) {
		if (s->j->t.id != id)
			continue;
		if (s->cancelled) {
			f->late = s;
			return NULL;
		}
		f->hit = s;
		return s->j;
	}
	return NULL;
}

static void
heard(proc *p, const sked_pipe_msg *m)
{
	kind *k = p->k;
	p->heard = 1;
	if (!m->window)
		return;
	/* told once a process, and again only when it changes its mind: a
	 * process that repeats its hello cannot flood the log */
	int told = p->said && p->window == m->window;
	p->said = 1;
	p->announced = 1;
	p->window = m->window;
	k->window = m->window;
	k->announced = 1;
	if (told)
		return;
	if (m->note[0])
		sked__log(SKED_LOG_WARN, "pipe handler %s (pid %d) %s",
		          k->x->kind, (int)p->pid, m->note);
	sked__log(SKED_LOG_INFO,
	          "pipe handler %s (pid %d) takes %d task(s) at once",
	          k->x->kind, (int)p->pid, p->window);
}

/* What one line says, done. */
static void
take_line(proc *p, const char *s)
{
	kind *k = p->k;
	struct find f = {.p = p};
	sked_pipe_msg m;
	char err[400] = "";
	switch (sked__pipe_line(s, &m, find_slot, &f, err, sizeof err)) {
	case PIPE_NOTE:
		heard(p, &m);
		return;
	case PIPE_ANSWER:
		p->heard = 1;
		if (!k->window)
			k->window = p->window;
		k->backoff_ms = 0;
		slot_done(f.hit, 1);
		return;
	case PIPE_PROGRESS:
		p->heard = 1;
		if (m.refused && m.job && !m.job->progress_warned) {
			m.job->progress_warned = 1;
			sked__log(
			        SKED_LOG_WARN,
			        "pipe handler %s (pid %d), task %lld: %s; the "
			        "previous report stands",
			        k->x->kind, (int)p->pid, (long long)m.id,
			        m.note);
		}
		return;
	case PIPE_STRAY:
		if (f.late) {
			sked__log(SKED_LOG_INFO,
			          "pipe handler %s (pid %d) answered task %lld "
			          "after its cancel; ignored",
			          k->x->kind, (int)p->pid, (long long)m.id);
			slot_done(f.late, 0);
			return;
		}
		if (++p->strays <= STRAYS_LOGGED)
			sked__log(SKED_LOG_WARN,
			          "pipe handler %s (pid %d) answered for id "
			          "%lld, "
			          "which is not in flight; ignored%s",
			          k->x->kind, (int)p->pid, (long long)m.id,
			          p->strays == STRAYS_LOGGED
			                  ? " (more of these from this process "
			                    "are not logged)"
			                  : "");
		return;
	default: {
		/* the process cannot be trusted with its tasks */
		char why[600], ids[160];
		ids_of(p, ids, sizeof ids);
		if (m.unnamed && ids[0])
			snprintf(why, sizeof why, "%s while it ran task%s %s",
			         err, p->nin > 1 ? "s" : "", ids);
		else
			snprintf(why, sizeof why, "%s", err);
		kill_proc(p, why);
		return;
	}
	}
}

/* Read stdout (a bounded amount a turn) and act on its lines. 1: end of
 * file (or an error), -2: a line over the bound, else 0. */
static int
read_stdout(proc *p)
{
	int fd = sked__exec_proc_fd(p->ep, 1);
	for (int c = 0; c < READ_CHUNKS && !p->dying; c++) {
		if (p->cap - p->len < 4096) {
			size_t cap = p->cap ? p->cap * 2 : 8192;
			char *nl = realloc(p->line, cap);
			if (!nl)
				return 1;
			p->line = nl;
			p->cap = cap;
		}
		ssize_t n = read(fd, p->line + p->len, p->cap - p->len - 1);
		if (n == 0)
			return 1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : 1;
		p->len += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < p->len && !p->dying; i++) {
			if (p->line[i] != '\n')
				continue;
			p->line[i] = '\0';
			char *s = p->line + start;
			start = i + 1;
			while (*s == ' ' || *s == '\t' || *s == '\r')
				s++;
			if (*s)
				take_line(p, s);
		}
		memmove(p->line, p->line + start, p->len - start);
		p->len -= start;
		if (p->len > LINE_MAX_BYTES)
			return -2;
	}
	return 0;
}

/* A process of k failed: no new one before a pause that doubles on every
 * failure (to BACKOFF_MAX_MS), so a handler that crashes cannot spin. */
static void
backoff(kind *k)
{
	k->backoff_ms = k->backoff_ms ? k->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (k->backoff_ms > BACKOFF_MAX_MS)
		k->backoff_ms = BACKOFF_MAX_MS;
	k->not_before = sked__mono_ms() + k->backoff_ms;
}

/* Stop p and tell its tasks in flight (k->mu held; nobody else reads
 * it). */
static void
teardown(proc *p)
{
	kind *k = p->k;
	sked_guard *g = k->w->guard;
	read_stderr(p); /* what it said last: a crash's reason */
	while (p->in) {
		slot *s = p->in;
		if (g && s->j->slot >= 0)
			sked__guard_disarm(g, s->j->slot);
		if (!s->err[0] && p->why[0])
			snprintf(s->err, sizeof s->err, "%s", p->why);
		else if (!s->err[0])
			snprintf(s->err, sizeof s->err,
			         "the pipe handler process exited before it "
			         "answered task %lld",
			         (long long)s->j->t.id);
		slot_done(s, 0);
	}
	sked__exec_proc_stop(p->ep);
	for (proc **q = &k->procs; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			break;
		}
	free(p->out);
	free(p->line);
	free(p);
	backoff(k);
}

/* One turn of the reader (k->mu held). 1: p is gone. */
static int
pump(proc *p)
{
	if (!p->dying && flush(p) < 0)
		kill_proc(p, NULL);
	if (!p->dying)
		read_stderr(p);
	int r = p->dying ? 0 : read_stdout(p);
	int status = 0;
	if (r == -2) {
		char why[120];
		snprintf(why, sizeof why,
		         "pipe handler wrote a line longer than %d bytes",
		         LINE_MAX_BYTES);
		kill_proc(p, why);
	} else if (!p->dying && (r || sked__exec_proc_exited(p->ep, &status))) {
		/* answers it wrote before it went are still answers */
		if (!r)
			read_stdout(p);
		/* a process that exits closes its stdout a moment before
		 * it can be seen to have exited */
		for (int i = 0; i < 20 && !p->dying &&
		                !sked__exec_proc_exited(p->ep, &status);
		     i++) {
			struct timespec ts = {0, 10 * 1000000L};
			nanosleep(&ts, NULL);
		}
		if (!p->dying && !sked__exec_proc_exited(p->ep, &status))
			kill_proc(p, "the pipe handler process closed its "
			             "stdout");
		kill_proc(p, NULL);
	}
	if (!p->dying)
		return 0;
	teardown(p);
	return 1;
}

static proc *
start(kind *k, slot *s)
{
	char node[SKED_MAX_NAME + 32], kd[SKED_MAX_NAME + 32];
	snprintf(node, sizeof node, "SKED_NODE_ID=%s", k->w->node_id);
	snprintf(kd, sizeof kd, "SKED_HANDLER_KIND=%s", k->x->kind);
	const char *env[] = {node, kd, "SKED_PIPE_PROTOCOL=1", NULL};
	sked_exec_spec spec = {.argv = (const char *const *)k->x->argv,
	                       .env_extra = env,
	                       .scrub_env = 1};
	proc *p = calloc(1, sizeof *p);
	char err[400] = "";
	const char hello[] = "{\"sked\":\"pipe\",\"version\":1}\n";
	if (!p || out_add(p, hello, sizeof hello - 1) != 0) {
		snprintf(s->err, sizeof s->err, "out of memory");
		if (p)
			free(p->out);
		free(p);
		return NULL;
	}
	if (sked__exec_spawn(&spec, &p->ep, err, sizeof err) != SKED_OK) {
		snprintf(s->err, sizeof s->err, "pipe handler: %s", err);
		free(p->out);
		free(p);
		backoff(k);
		return NULL;
	}
	p->k = k;
	p->pid = sked__exec_proc_pid(p->ep);
	p->started = sked__mono_ms();
	/* a new process of a kind that said its window is taken at its
	 * word until its own hello */
	p->window = k->window ? k->window : 1;
	p->announced = k->announced;
	p->next = k->procs;
	k->procs = p;
	sked__log(SKED_LOG_DEBUG, "pipe handler %s: process %d started",
	          k->x->kind, (int)p->pid);
	return p;
}

/* A process with room for s's task (k->mu held; it may wait), or NULL
 * (s->err says why). */
static proc *
acquire(kind *k, slot *s)
{
	sked_job *j = s->j;
	for (;;) {
		if (atomic_load(&j->cancel) != CANCEL_NONE) {
			snprintf(s->err, sizeof s->err, "cancelled");
			return NULL;
		}
		int64_t now = sked__mono_ms();
		int first = 0;
		int status = 0, gone = 0;
		for (proc *p = k->procs; p; p = p->next) {
			if (!p->nin && !p->reading &&
			    sked__exec_proc_exited(p->ep, &status)) {
				/* it died between tasks: nobody reads it */
				kill_proc(p, NULL);
				teardown(p);
				gone = 1;
				break;
			} else if (p->dying) {
				continue;
			} else if (p->nin < p->window) {
				return p;
			} else if (!p->heard && !k->window &&
			           now - p->started < HELLO_WAIT_MS) {
				first = 1;
			}
		}
		if (gone)
			continue;
		/* the kind's first process has not said its window yet, or
		 * one failed lately: wait a little */
		int64_t until = first ? now + 20 : k->not_before;
		if (until <= now)
			return start(k, s);
		pthread_mutex_unlock(&k->mu);
		sleep_on(s->wake_fd, j->cancel_fd, until - now);
		pthread_mutex_lock(&k->mu);
	}
}

/* Wait for s's answer (k->mu held), reading its process when no other
 * thread does, until its deadline; past it (or on a cancel) cancel the
 * task or kill the process. Returns with s->done. */
static void
await(slot *s, int64_t deadline, int64_t timeout)
{
	sked_job *j = s->j;
	kind *k = s->p->k;
	while (!s->done) {
		proc *p = s->p;
		int64_t now = sked__mono_ms();
		if (!s->cancelled) {
			int cancel = atomic_load(&j->cancel) != CANCEL_NONE;
			if (cancel || now >= deadline) {
				if (cancel)
					snprintf(s->err, sizeof s->err,
					         "cancelled");
				else
					snprintf(s->err, sizeof s->err,
					         "timed out after %lld ms",
					         (long long)timeout);
				s->cancelled = 1;
				s->grace_end = now + CANCEL_GRACE_MS;
				char line[64];
				int n = snprintf(line, sizeof line,
				                 "{\"cancel\":%lld}\n",
				                 (long long)j->t.id);
				if (!p->announced ||
				    out_add(p, line, (size_t)n) != 0 ||
				    flush(p) != 0) {
					char why[600];
					snprintf(why, sizeof why,
					         "the pipe handler process was "
					         "killed: task %lld %s",
					         (long long)j->t.id,
					         cancel ? "was cancelled"
					                : "timed out");
					kill_proc(p, why);
				}
			}
		} else if (now >= s->grace_end) {
			char why[200];
			snprintf(why, sizeof why,
			         "the pipe handler process was killed: task "
			         "%lld "
			         "did not stop within %d ms of its cancel",
			         (long long)j->t.id, CANCEL_GRACE_MS);
			kill_proc(p, why);
		}
		int64_t until = s->cancelled ? s->grace_end : deadline;
		int64_t ms = until - now;
		if (ms > TURN_MS)
			ms = TURN_MS;
		if (ms < 0)
			ms = 0;
		if (p->reading) {
			pthread_mutex_unlock(&k->mu);
			sleep_on(s->wake_fd, s->cancelled ? -1 : j->cancel_fd,
			         ms);
			pthread_mutex_lock(&k->mu);
			continue;
		}
		p->reading = 1;
		struct pollfd fds[6];
		int n = 0;
		if (!p->dying) {
			for (int which = 1; which <= 3; which++) {
				int fd = sked__exec_proc_fd(p->ep, which);
				if (fd >= 0 && !(which == 2 && p->err_eof))
					fds[n++] = (struct pollfd){
					        .fd = fd, .events = POLLIN};
			}
			if (p->outoff < p->outlen)
				fds[n++] = (struct pollfd){
				        .fd = sked__exec_proc_fd(p->ep, 0),
				        .events = POLLOUT};
		} else {
			ms = 0;
		}
		fds[n++] = (struct pollfd){.fd = s->wake_fd, .events = POLLIN};
		if (!s->cancelled)
			fds[n++] = (struct pollfd){.fd = j->cancel_fd,
			                           .events = POLLIN};
		pthread_mutex_unlock(&k->mu);
		poll(fds, (nfds_t)n, (int)ms);
		uint64_t v;
		ssize_t r = read(s->wake_fd, &v, sizeof v);
		(void)r;
		pthread_mutex_lock(&k->mu);
		if (pump(p))
			continue; /* it is gone: s is done */
		p->reading = 0;
		/* another task waits on p: its thread reads now */
		if (s->done && p->in)
			sked__wk_ring_fd(p->in->wake_fd);
	}
}

static kind *
kind_for(struct sked_pipes *ps, const handler *x, sked_worker *w)
{
	pthread_mutex_lock(&ps->mu);
	kind *k = ps->kinds;
	while (k && k->x != x)
		k = k->next;
	if (!k && (k = calloc(1, sizeof *k)) != NULL) {
		k->x = x;
		k->w = w;
		pthread_mutex_init(&k->mu, NULL);
		k->next = ps->kinds;
		ps->kinds = k;
	}
	pthread_mutex_unlock(&ps->mu);
	return k;
}

/* This pool thread's side: its eventfd, and a hold on the worker's
 * processes. */
static sked_pipe *
client(sked_pipe **mine, sked_worker *w)
{
	if (*mine)
		return *mine;
	sked_pipe *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->w = w;
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->wake_fd < 0) {
		free(c);
		return NULL;
	}
	pthread_mutex_lock(&w->sh.mu);
	if (!w->sh.pipes &&
	    (w->sh.pipes = calloc(1, sizeof *w->sh.pipes)) != NULL)
		pthread_mutex_init(&w->sh.pipes->mu, NULL);
	if (w->sh.pipes)
		w->sh.pipes->refs++;
	c->s = w->sh.pipes;
	pthread_mutex_unlock(&w->sh.mu);
	if (!c->s) {
		close(c->wake_fd);
		free(c);
		return NULL;
	}
	*mine = c;
	return c;
}

void
sked__wk_pipes_free(sked_pipe *c)
{
	if (!c)
		return;
	sked_worker *w = c->w;
	pthread_mutex_lock(&w->sh.mu);
	struct sked_pipes *ps = --c->s->refs == 0 ? c->s : NULL;
	if (ps)
		w->sh.pipes = NULL;
	pthread_mutex_unlock(&w->sh.mu);
	close(c->wake_fd);
	free(c);
	if (!ps)
		return;
	/* the last pool thread: no task is in flight any more */
	while (ps->kinds) {
		kind *k = ps->kinds;
		ps->kinds = k->next;
		while (k->procs) {
			proc *p = k->procs;
			k->procs = p->next;
			sked__exec_proc_stop(p->ep);
			free(p->out);
			free(p->line);
			free(p);
		}
		pthread_mutex_destroy(&k->mu);
		free(k);
	}
	pthread_mutex_destroy(&ps->mu);
	free(ps);
}

static void
fail(sked_job *j, const char *msg)
{
	free(j->error);
	j->error = strdup(msg);
	j->ok = 0;
}

void
sked__wk_run_pipe(sked_job *j, const handler *x, sked_pipe **mine)
{
	sked_worker *w = j->w;
	j->ok = 0;
	j->exit_code = -1;
	sked_pipe *c = client(mine, w);
	kind *k = c ? kind_for(c->s, x, w) : NULL;
	if (!k) {
		fail(j, "out of memory");
		return;
	}
	int64_t timeout = sked__claimed_timeout(
	        &j->t, x->timeout_ms ? x->timeout_ms : w->o.timeout_ms);
	slot s = {.j = j, .wake_fd = c->wake_fd};
	pthread_mutex_lock(&k->mu);
	proc *p = acquire(k, &s);
	size_t len = 0;
	char *line =
	        p ? sked__pipe_task_line(j, timeout > 0 ? timeout : 0, &len)
	          : NULL;
	if (p && (!line || out_add(p, line, len) != 0)) {
		snprintf(s.err, sizeof s.err, "out of memory");
		p = NULL;
	}
	free(line);
	if (p) {
		/* sent in order: its line follows the ones before it */
		slot **q = &p->in;
		while (*q)
			q = &(*q)->next;
		*q = &s;
		p->nin++;
		s.p = p;
		if (w->guard && j->slot >= 0)
			sked__guard_arm(w->guard, j->slot, p->pid);
		if (flush(p) < 0)
			kill_proc(p, NULL);
		/* the task's timeout runs from the moment it is handed over */
		await(&s, timeout > 0 ? sked__mono_ms() + timeout : INT64_MAX,
		      timeout);
	}
	pthread_mutex_unlock(&k->mu);
	if (w->guard && j->slot >= 0) {
		sked__guard_disarm(w->guard, j->slot);
		if (!s.answered && sked__guard_fired(w->guard, j->slot))
			snprintf(s.err, sizeof s.err,
			         "killed at its lease deadline by the lease "
			         "guard");
	}
	if (s.t.dropped)
		sked__log(SKED_LOG_WARN,
		          "task %lld (%s): %ld more stderr line(s), %lld "
		          "byte(s), not logged (at most %d lines or %d bytes "
		          "a task)",
		          (long long)j->t.id, x->kind, s.t.dropped,
		          s.t.dropped_b, LOG_LINES_MAX, LOG_BYTES_MAX);
	if (s.t.len) {
		j->output = malloc(s.t.len + 1);
		if (j->output) {
			memcpy(j->output, s.t.buf, s.t.len);
			j->output[s.t.len] = '\0';
		}
	}
	if (!s.answered)
		fail(j, s.err[0] ? s.err : "pipe handler failed");
}
