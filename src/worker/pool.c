/*
 * worker/pool.c — the handler pool and the job view handlers see.
 *
 * Layer: the worker (worker.h), on the runner (exec.h) and the lease guard
 * (guard.h). A pool thread takes the next queued job, runs its callback or
 * program (no SQL), and moves it to the done queue for the finisher.
 */
#include "worker/worker.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc/exec.h"
#include "proc/guard.h"
#include "model/lease.h"
#include "util/log.h"

SKED_API int64_t
sked_job_id(const sked_job *j)
{
	return j->t.id;
}

SKED_API const char *
sked_job_kind(const sked_job *j)
{
	return j->t.kind;
}

SKED_API const char *
sked_job_queue(const sked_job *j)
{
	return j->t.queue;
}

SKED_API const char *
sked_job_payload(const sked_job *j, size_t *len)
{
	if (len)
		*len = j->t.payload_len;
	return j->t.payload ? j->t.payload : "";
}

SKED_API int
sked_job_attempt(const sked_job *j)
{
	return j->t.attempt;
}

SKED_API int
sked_job_max_attempts(const sked_job *j)
{
	return j->t.max_attempts;
}

SKED_API const char *
sked_job_traceparent(const sked_job *j)
{
	return j->t.traceparent;
}

SKED_API int
sked_job_cancelled(const sked_job *j)
{
	return atomic_load(&((sked_job *)j)->cancel) != CANCEL_NONE;
}

SKED_API void
sked_job_set_error(sked_job *j, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	free(j->error);
	j->error = strdup(buf);
}

SKED_API void
sked_job_give_up(sked_job *j)
{
	if (j)
		j->give_up = 1;
}

SKED_API void
sked_job_set_retry_in(sked_job *j, int64_t ms)
{
	if (j && ms >= 0)
		j->retry_ms = ms;
}

SKED_API void
sked_job_set_error_msg(sked_job *j, const char *msg)
{
	free(j->error);
	j->error = msg ? strndup(msg, 1023) : NULL;
}

static const char *
temp_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

/* A private file for one attempt (mode 0600, in $TMPDIR or /tmp), named
 * sked-WHAT-PID-XXXXXX after this process, so that a worker started
 * later can tell the files of one that died (sked__wk_sweep_temp): its
 * name into path, its descriptor returned (-1: none). */
static int
temp_file(char *path, size_t size, const char *what)
{
	snprintf(path, size, "%s/sked-%s-%ld-XXXXXX", temp_dir(), what,
	         (long)getpid());
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		path[0] = '\0';
	return fd;
}

void
sked__wk_sweep_temp(void)
{
	static const char *const kinds[] = {"parents-", "result-", "progress-"};
	DIR *d = opendir(temp_dir());
	struct dirent *e;
	int gone = 0;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *rest = NULL;
		if (strncmp(e->d_name, "sked-", 5) != 0)
			continue;
		for (size_t i = 0; i < sizeof kinds / sizeof *kinds && !rest;
		     i++)
			if (strncmp(e->d_name + 5, kinds[i],
			            strlen(kinds[i])) == 0)
				rest = e->d_name + 5 + strlen(kinds[i]);
		if (!rest)
			continue;
		char *end;
		long pid = strtol(rest, &end, 10);
		struct stat st;
		/* only ours, of a process that is gone (a live one, or a pid
		 * taken again since, keeps its files) */
		int dead = end != rest && *end == '-' && pid > 0 &&
		           pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
		           errno == ESRCH;
		if (!dead ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
		            0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			gone++;
	}
	closedir(d);
	if (gone)
		sked__log(SKED_LOG_INFO,
		          "removed %d file(s) of attempts of a worker that "
		          "died in %s",
		          gone, temp_dir());
}

/* What the program left at its result file's name (a file it wrote,
 * or one it renamed there): at most SKED_RESULT_MAX bytes kept, a
 * larger file's size named (the attempt then fails). Opened without
 * following a link or waiting on a FIFO; anything but a regular file
 * is no result. */
static void
read_result_file(sked_job *j, const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (st.st_size > SKED_RESULT_MAX) {
		j->result_over = (size_t)st.st_size;
		close(fd);
		return;
	}
	char *buf = malloc(SKED_RESULT_MAX + 1);
	size_t len = 0;
	ssize_t r;
	while (buf && len < SKED_RESULT_MAX + 1 &&
	       (r = read(fd, buf + len, SKED_RESULT_MAX + 1 - len)) > 0)
		len += (size_t)r;
	close(fd);
	if (buf && len > 0)
		sked__ignore(sked__wk_set_result(j, buf, len));
	free(buf);
}

static void
run_program(sked_job *j, const handler *x)
{
	sked_worker *w = j->w;
	char id[48], attempt[32], kind[SKED_MAX_NAME + 32],
	        queue[SKED_MAX_NAME + 32], node[SKED_MAX_NAME + 32], tp[80];
	char rpath[PATH_MAX], ppath[PATH_MAX], gpath[PATH_MAX];
	char renv[PATH_MAX + 32], penv[PATH_MAX + 32], genv[PATH_MAX + 32];
	snprintf(id, sizeof id, "SKED_TASK_ID=%lld", (long long)j->t.id);
	snprintf(attempt, sizeof attempt, "SKED_TASK_ATTEMPT=%d", j->t.attempt);
	snprintf(kind, sizeof kind, "SKED_TASK_KIND=%s", j->t.kind);
	snprintf(queue, sizeof queue, "SKED_TASK_QUEUE=%s", j->t.queue);
	snprintf(node, sizeof node, "SKED_NODE_ID=%s", w->node_id);
	const char *env[12] = {id, attempt, kind, queue, node, NULL};
	int ne = 5;
	/* the task's trace context; the worker's own never passes on
	 * (sked__exec_secret) */
	if (j->t.traceparent) {
		snprintf(tp, sizeof tp, "TRACEPARENT=%s", j->t.traceparent);
		env[ne++] = tp;
	}
	/* the result file: the program writes its result there */
	int rfd = temp_file(rpath, sizeof rpath, "result");
	if (rfd < 0) {
		j->ok = 0;
		j->error = strdup("cannot make the result file (SKED_TASK_"
		                  "RESULT_FILE) in $TMPDIR or /tmp");
		return;
	}
	snprintf(renv, sizeof renv, "SKED_TASK_RESULT_FILE=%s", rpath);
	env[ne++] = renv;
	/* the progress file: the program writes its latest report there,
	 * the heartbeat reads it at each renewal (progress.c) */
	int gfd = temp_file(gpath, sizeof gpath, "progress");
	if (gfd >= 0) {
		close(gfd);
		snprintf(genv, sizeof genv, "SKED_TASK_PROGRESS_FILE=%s",
		         gpath);
		env[ne++] = genv;
		char *gp = strdup(gpath);
		pthread_mutex_lock(&w->sh.mu);
		j->progress_file = gp;
		pthread_mutex_unlock(&w->sh.mu);
	}
	/* its parents: their ids, and a file of their results */
	char *pids = NULL;
	int pfd = -1;
	if (j->parents) {
		pfd = temp_file(ppath, sizeof ppath, "parents");
		const char *js = sked_job_parents_json(j);
		size_t jl = strlen(js);
		pids = malloc(strlen(j->parents->ids) + 32);
		if (pfd < 0 || !pids || write(pfd, js, jl) != (ssize_t)jl) {
			j->ok = 0;
			j->error = strdup("cannot write its parents' results "
			                  "(SKED_TASK_PARENT_RESULTS) in "
			                  "$TMPDIR or /tmp");
			goto out;
		}
		sprintf(pids, "SKED_TASK_PARENTS=%s", j->parents->ids);
		snprintf(penv, sizeof penv, "SKED_TASK_PARENT_RESULTS=%s",
		         ppath);
		env[ne++] = pids;
		env[ne++] = penv;
	}
	env[ne] = NULL;
	sked_exec_spec spec = {
	        .argv = (const char *const *)x->argv,
	        .env_extra = env,
	        .scrub_env = 1,
	        .input = j->t.payload,
	        .input_len = j->t.payload_len,
	        .timeout_ms = sked__claimed_timeout(
	                &j->t, x->timeout_ms ? x->timeout_ms : w->o.timeout_ms),
	        /* SIGTERM to SIGKILL: 2 s, but short enough that a handler
	         * ignoring SIGTERM is dead before a lease the watchdog gave
	         * up on can expire (short leases) */
	        .kill_grace_ms = sked__wk_safety_ms(w) / 2 < 2000
	                                 ? sked__wk_safety_ms(w) / 2
	                                 : 2000,
	        .tail_max = 4096,
	        .cancel_fd = j->cancel_fd,
	        .guard = j->slot >= 0 ? w->guard : NULL,
	        .guard_slot = j->slot,
	};
	sked_exec_result res;
	int rc = sked__exec_run(&spec, &res);
	j->exit_code = res.exited ? res.exit_code : -1;
	j->ok = rc == SKED_OK && res.exited && res.exit_code == 0 &&
	        !res.timed_out && !res.cancelled;
	/* EX_DATAERR: the program says its input is wrong, so trying again
	 * cannot help (docs/handlers.md, "No retry") */
	j->give_up = !j->ok && res.exited &&
	             res.exit_code == SKED_EXIT_NO_RETRY && !res.timed_out &&
	             !res.cancelled;
	if (spec.guard && sked__guard_fired(spec.guard, spec.guard_slot)) {
		sked__log_facts f = {
		        .task_id = (long long)j->t.id,
		        .attempt = j->t.attempt,
		        .kind = j->t.kind,
		        .queue = j->t.queue,
		        .outcome = "lost",
		        .duration_ms = -1,
		        .error = "killed by the lease guard at the lease "
		                 "deadline",
		};
		sked__log_task(SKED_LOG_ERROR, &f,
		               "task %lld attempt %d: the lease guard killed "
		               "its handler at the lease deadline (this worker "
		               "did not renew the lease in time)",
		               f.task_id, f.attempt);
		j->ok = 0;
		j->error =
		        strdup("killed at its lease deadline by the lease "
		               "guard: the worker did not renew the lease in "
		               "time (frozen or stalled)");
	} else if (!j->ok)
		j->error = strdup(res.error[0] ? res.error : "failed");
	j->output = res.output;
	res.output = NULL;
	sked__exec_result_free(&res);
	read_result_file(j, rpath);
out:
	close(rfd);
	unlink(rpath);
	if (gfd >= 0) {
		pthread_mutex_lock(&w->sh.mu);
		free(j->progress_file);
		j->progress_file = NULL;
		pthread_mutex_unlock(&w->sh.mu);
		unlink(gpath);
	}
	if (pfd >= 0) {
		close(pfd);
		unlink(ppath);
	}
	free(pids);
}
/* Run j with x, its kind's handler (NULL: none on this node). */
static void
run_job(sked_job *j, const handler *x, sked_pipe **pipes, sked_http **http)
{
	j->exit_code = -1;
	if (!x) {
		char buf[SKED_MAX_NAME * 2 + 64];
		snprintf(buf, sizeof buf, "no handler for kind '%s' on node %s",
		         j->t.kind, j->w->node_id);
		j->ok = 0;
		j->error = strdup(buf);
		return;
	}
	if (j->parents && j->parents->error) {
		j->ok = 0;
		j->error = strdup(j->parents->error);
		return;
	}
	if (x->type == H_PROGRAM) {
		run_program(j, x);
	} else if (x->type == H_PIPE) {
		sked__wk_run_pipe(j, x, pipes);
	} else if (x->type == H_HTTP) {
		sked__wk_run_http(j, x, http);
	} else {
		int rc = x->fn(j, x->ud);
		j->ok = rc == 0;
		if (!j->ok && !j->error) {
			char buf[64];
			snprintf(buf, sizeof buf, "handler returned %d", rc);
			j->error = strdup(buf);
		}
	}
	/* a result past the bound fails a success (docs/workflows.md) */
	if (j->result_over && j->ok) {
		char buf[160];
		snprintf(buf, sizeof buf,
		         "result of %zu bytes is over the limit of %d bytes "
		         "(64 KiB); nothing kept",
		         j->result_over, SKED_RESULT_MAX);
		j->ok = 0;
		free(j->error);
		j->error = strdup(buf);
	}
}
void *
sked__wk_pool_main(void *arg)
{
	sked_worker *w = arg;
	sigset_t all;
	sigfillset(&all); /* signals belong to the caller's thread */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	int slot = atomic_fetch_add(&w->pool.slots, 1);
	sked_pipe *pipes = NULL; /* this thread's pipe: processes */
	sked_http *http = NULL;  /* and its HTTP client */
	pthread_mutex_lock(&w->sh.mu);
	for (;;) {
		while (!w->sh.jobs_head && !w->sh.pool_exit)
			pthread_cond_wait(&w->sh.cv_pool, &w->sh.mu);
		if (!w->sh.jobs_head)
			break;
		sked_job *j = w->sh.jobs_head;
		sked__wk_move(w, j, JOB_RUNNING);
		int64_t basis = sked__wk_lease_basis(j);
		/* the watchdog stops a queued job whose lease may run out, but
		 * only on its next turn: a job taken from the queue in
		 * between must not start on a lease the watchdog would stop
		 * (its deadline may be past, another node may run it next) */
		int unleased = sked__mono_ms() > sked__wk_stop_at(w, basis);
		if (unleased && atomic_load(&j->cancel) == CANCEL_NONE) {
			sked__log_facts f = {
			        .task_id = (long long)j->t.id,
			        .attempt = j->t.attempt,
			        .kind = j->t.kind,
			        .queue = j->t.queue,
			        .outcome = "lost",
			        .duration_ms = -1,
			};
			sked__log_task(SKED_LOG_WARN, &f,
			               "task %lld attempt %d not started: its "
			               "lease could not be renewed in time",
			               f.task_id, f.attempt);
		}
		if (unleased)
			sked__wk_job_cancel(j, CANCEL_NOLEASE);
		if (w->guard) {
			/* the guard kills its program at the lease's deadline
			 * unless renewals move that on
			 * (sked__wk_heartbeat_main) */
			j->slot = slot;
			sked__guard_deadline(w->guard, slot,
			                     sked__wk_guard_deadline(w, basis),
			                     0);
		}
		pthread_mutex_unlock(&w->sh.mu);

		/* a program or a pipe waits on the cancel eventfd; made
		 * before cancel is read (jobs.c: sked__wk_job_arm) */
		const handler *x = sked__wk_find_handler(w, j->t.kind);
		int armed = !x || (x->type != H_PROGRAM && x->type != H_PIPE) ||
		            sked__wk_job_arm(j) == SKED_OK;
		int64_t ran = sked__mono_ms();
		if (!armed) {
			char buf[160];
			snprintf(buf, sizeof buf,
			         "worker out of resources: cannot make an "
			         "eventfd (%s)",
			         strerror(errno));
			j->ok = 0;
			j->exit_code = -1;
			j->error = strdup(buf);
		} else if (atomic_load(&j->cancel) == CANCEL_NONE) {
			j->ran_at = ran;
			atomic_store(&j->started, 1);
			run_job(j, x, &pipes, &http);
		} else {
			j->exit_code = -1; /* nothing ran */
			j->error = strdup("cancelled before it started");
		}

		pthread_mutex_lock(&w->sh.mu);
		if (j->slot >= 0) {
			j->slot = -1;
			sked__guard_deadline(w->guard, slot, 0, 0);
		}
		j->ran_ms = sked__mono_ms() - ran;
		sked__wk_note_handler(w, j, j->ran_ms);
		sked__wk_move(w, j, JOB_DONE);
		pthread_cond_signal(&w->sh.cv_done);
		sked__wk_ring(w);
	}
	pthread_mutex_unlock(&w->sh.mu);
	sked__wk_pipes_free(pipes);
	sked__wk_http_free(http);
	return NULL;
}
