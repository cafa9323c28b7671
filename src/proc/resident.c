/*
 * resident.c — long-lived handler programs (pipe: handlers): started once,
 * then fed one task after another by the worker over their pipes.
 *
 * Layer: src/proc/ (floor 1; exec.h declares the calls, spawn.h the steps
 * shared with exec.c). A program started here is what sked__exec_run
 * starts (its own process group, PDEATHSIG, dispositions reset, no
 * inherited descriptor) and is registered for sked__exec_kill_all in the
 * same way; the caller reads and writes its three non-blocking pipes and
 * polls its pidfd. Stopping it kills its group, reaps it and sweeps
 * orphans, as a run's end does.
 */
#include "proc/exec.h"
#include "proc/spawn.h"

#include "sked.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct sked_exec_proc {
	pid_t pid; /* also its process group */
	int in_fd, out_fd, err_fd, pidfd;
	struct sked_child reg;
	int reaped;
	int status;
};

int
sked__exec_spawn(const sked_exec_spec *spec, sked_exec_proc **out, char *err,
                 size_t errlen)
{
	*out = NULL;
	if (!spec || !spec->argv || !spec->argv[0] || !spec->argv[0][0]) {
		snprintf(err, errlen, "invalid handler spec");
		return SKED_EINVAL;
	}
	const char *prog = spec->argv[0];
	char **envp = NULL, **cands = NULL;
	int in_p[2] = {-1, -1}, out_p[2] = {-1, -1}, err_p[2] = {-1, -1},
	    se_p[2] = {-1, -1};
	sked_exec_proc *p = calloc(1, sizeof *p);
	int rc = p ? sked__spawn_envp(spec->env_extra, spec->scrub_env, &envp)
	           : SKED_ENOMEM;
	if (rc == SKED_OK)
		rc = sked__spawn_paths(prog, envp, &cands);
	if (rc != SKED_OK) {
		snprintf(err, errlen,
		         rc == SKED_EINVAL ? "invalid environment entry"
		                           : "out of memory");
		goto fail;
	}
	if (sked__spawn_pipe(in_p) < 0 || sked__spawn_pipe(out_p) < 0 ||
	    sked__spawn_pipe(err_p) < 0 || sked__spawn_pipe(se_p) < 0) {
		snprintf(err, errlen, "cannot run '%.200s': pipe: %s", prog,
		         strerror(errno));
		rc = SKED_EIO;
		goto fail;
	}
	struct sked_child_args ca = {
	        .candidates = cands,
	        .argv = (char *const *)spec->argv,
	        .envp = envp,
	        .parent = getpid(),
	        .in_r = in_p[0],
	        .out_w = out_p[1],
	        .err_w = err_p[1],
	        .stderr_w = se_p[1],
	        .max_fd = sked__spawn_fd_limit(),
	};
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sked_exec_spec plain = {.argv = spec->argv}; /* no guard slot */
	pid_t pid = sked__child_fork(&ca, &p->reg, &plain);
	int fork_err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		snprintf(err, errlen, "cannot run '%.200s': fork: %s", prog,
		         strerror(fork_err));
		rc = SKED_EIO;
		goto fail;
	}
	p->pid = pid;
	sked__spawn_close(&in_p[0]);
	sked__spawn_close(&out_p[1]);
	sked__spawn_close(&err_p[1]);
	sked__spawn_close(&se_p[1]);
	struct sked_child_report rep;
	if (sked__spawn_failed(err_p[0], &rep)) {
		char eb[128];
		snprintf(err, errlen, "cannot run '%.200s': %s", prog,
		         sked__spawn_strerror(rep.err, eb, sizeof eb));
		rc = SKED_EIO;
		goto fail;
	}
	p->pidfd = sked__spawn_pidfd(pid);
	p->in_fd = in_p[1];
	p->out_fd = out_p[0];
	p->err_fd = se_p[0];
	in_p[1] = out_p[0] = se_p[0] = -1;
	sked__spawn_nonblock(p->in_fd);
	sked__spawn_nonblock(p->out_fd);
	sked__spawn_nonblock(p->err_fd);
	sked__spawn_close(&err_p[0]);
	free(cands);
	free(envp);
	*out = p;
	return SKED_OK;
fail:
	for (int i = 0; i < 2; i++) {
		sked__spawn_close(&in_p[i]);
		sked__spawn_close(&out_p[i]);
		sked__spawn_close(&err_p[i]);
		sked__spawn_close(&se_p[i]);
	}
	if (p && p->pid > 0)
		sked__exec_proc_stop(p);
	else
		free(p);
	free(cands);
	free(envp);
	return rc;
}

int
sked__exec_proc_fd(const sked_exec_proc *p, int which)
{
	switch (which) {
	case 0:
		return p->in_fd;
	case 1:
		return p->out_fd;
	case 2:
		return p->err_fd;
	default:
		return p->pidfd;
	}
}

pid_t
sked__exec_proc_pid(const sked_exec_proc *p)
{
	return p->pid;
}

int
sked__exec_proc_exited(sked_exec_proc *p, int *status)
{
	if (p->reaped) {
		*status = p->status;
		return 1;
	}
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r;
	do
		r = waitid(P_PID, (id_t)p->pid, &si,
		           WEXITED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0 && si.si_pid == 0)
		return 0;
	return 1; /* exited (still a zombie until stopped); status later */
}

void
sked__exec_proc_stop(sked_exec_proc *p)
{
	if (!p)
		return;
	if (!p->reaped && p->pid > 0) {
		sked__child_retire(&p->reg);
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
		int st = 0;
		pid_t r;
		do
			r = waitpid(p->pid, &st, 0);
		while (r < 0 && errno == EINTR);
		sked__child_remove(&p->reg);
		sked__exec_sweep_orphans();
		p->status = st;
		p->reaped = 1;
	}
	sked__spawn_close(&p->in_fd);
	sked__spawn_close(&p->out_fd);
	sked__spawn_close(&p->err_fd);
	sked__spawn_close(&p->pidfd);
	free(p);
}
