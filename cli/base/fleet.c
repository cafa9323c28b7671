/*
 * fleet.c — start, reap and stop a fleet of worker processes (see
 * fleet.h).
 *
 * Layer: the command-line program. posix_spawn, never a shell; waitpid on
 * our own children only, by pid, so nothing else's exit status is taken.
 */
#include "base/fleet.h"
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

int
cli_fleet_init(struct cli_fleet *f, const char *what, size_t cap)
{
	memset(f, 0, sizeof *f);
	f->what = what;
	f->p = calloc(cap ? cap : 1, sizeof *f->p);
	if (f->p == NULL)
		return ENOMEM;
	f->cap = cap;
	return 0;
}

void
cli_fleet_free(struct cli_fleet *f)
{
	free(f->p);
	f->p = NULL;
	f->n = f->cap = 0;
}

int
cli_fleet_spawn(struct cli_fleet *f, size_t i, const char *exe,
                const char *const *argv, char *const *env, const char *log_path)
{
	posix_spawn_file_actions_t fa;
	struct cli_fleet_proc *p;
	int err;

	if (i >= f->cap || f->p[i].pid != 0)
		return EINVAL;
	p = &f->p[i];
	posix_spawn_file_actions_init(&fa);
	if (log_path != NULL) {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		                                 0);
		posix_spawn_file_actions_addopen(
		        &fa, 1, log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	} else {
		posix_spawn_file_actions_adddup2(&fa, 2, 1);
	}
	err = posix_spawn(&p->pid, exe, &fa, NULL, (char *const *)argv,
	                  env != NULL ? env : environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err != 0) {
		p->pid = 0;
		return err;
	}
	if (i >= f->n) {
		for (size_t k = f->n; k < i; k++)
			f->p[k].ok = 1;
		f->n = i + 1;
		p->ok = 1;
	}
	return 0;
}

int
cli_fleet_reap(struct cli_fleet *f, int block, int *failed)
{
	int alive = 0, st;
	size_t i;
	pid_t r;

	for (i = 0; i < f->n; i++) {
		struct cli_fleet_proc *p = &f->p[i];
		if (p->pid <= 0)
			continue;
		r = waitpid(p->pid, &st, block ? 0 : WNOHANG);
		if (r == 0) {
			alive++;
			continue;
		}
		if (r < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (r > 0) {
			p->status = st;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				p->ok = 0;
				if (failed != NULL)
					*failed = 1;
				if (f->report)
					cli_err("%s: worker %d %s %d", f->what,
					        (int)p->pid,
					        WIFEXITED(st)
					                ? "exited with"
					                : "killed by signal",
					        WIFEXITED(st) ? WEXITSTATUS(st)
					                      : WTERMSIG(st));
			}
		}
		p->pid = 0;
	}
	return alive;
}

void
cli_fleet_signal(const struct cli_fleet *f, int sig)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->p[i].pid > 0)
			kill(f->p[i].pid, sig);
}

void
cli_fleet_stop(struct cli_fleet *f, int64_t grace_ms)
{
	int64_t until = cli_mono_ms() + grace_ms;
	size_t i;

	cli_fleet_signal(f, SIGTERM);
	while (cli_fleet_reap(f, 0, NULL) > 0 && cli_mono_ms() < until)
		cli_sleep_ms(grace_ms < 1000 ? 10 : 100);
	for (i = 0; i < f->n; i++)
		if (f->p[i].pid > 0) {
			kill(f->p[i].pid, SIGKILL);
			while (waitpid(f->p[i].pid, &f->p[i].status, 0) < 0 &&
			       errno == EINTR)
				;
			f->p[i].pid = 0;
			f->p[i].ok = 0;
		}
}

int
cli_fleet_all_ok(const struct cli_fleet *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!f->p[i].ok)
			return 0;
	return 1;
}
