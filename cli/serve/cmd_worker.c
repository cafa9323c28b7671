/*
 * cmd_worker.c — `sked worker`: run tasks with handler programs.
 *
 * Layer: the command-line program. This file merges the worker settings
 * (flags over the config file's [worker] and [handler.KIND] sections),
 * turns each handler command into an argv (split on blanks, never given to
 * a shell), and installs the signal handlers: the first SIGTERM or SIGINT
 * asks the worker to stop gracefully, the second to give its tasks back at
 * once. Claiming, running, leases and retries are the library's
 * (sked_worker_*).
 */
#include "base/cli.h"
#include "bench/bench.h"
#include "serve/serve.h"
#include "serve/worker_ops.h"
#include "view/view.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

/* Set before the handlers are installed, cleared after the worker stops;
 * read only by on_signal. */
static sked_worker *volatile g_worker;
static volatile sig_atomic_t g_signals;

static void
on_signal(int sig)
{
	sked_worker *w = g_worker;
	int n;

	(void)sig;
	if (sig == SIGHUP) {
		cli_ops_hup(); /* never a stop: reload what can be reloaded */
		return;
	}
	n = ++g_signals;
	cli_ops_stopping();
	if (w != NULL)
		sked_worker_stop(w, n >= 2); /* async-signal-safe */
}

static int
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL) != 0 ||
	    sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGHUP, &sa, NULL) != 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGPIPE, &sa, NULL);
}

/* "Q[:N],…": names the library accepts, N a positive integer. The
 * library checks again; this gives a usage error instead of a data error
 * for a typo on the command line. */
static int
check_queues(const char *flag, const char *s)
{
	char *copy = strdup(s), *item, *save = NULL;
	int ok = copy != NULL && s[0] != '\0';

	for (item = copy ? strtok_r(copy, ",", &save) : NULL;
	     ok && item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':'), *end;
		long n;
		if (colon != NULL) {
			*colon = '\0';
			errno = 0;
			n = strtol(colon + 1, &end, 10);
			if (colon[1] < '0' || colon[1] > '9' || *end != '\0' ||
			    errno != 0 || n < 1)
				ok = 0;
		}
		if (!sked_name_valid(item))
			ok = 0;
	}
	free(copy);
	if (!ok) {
		cli_err("%s: '%s' is not a list of QUEUE or QUEUE:N "
		        "separated by commas",
		        flag, s);
		return EX_USAGE;
	}
	return 0;
}

static int
is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether prog can be started: a path that is an executable file, or a
 * name found so in PATH (as the worker's runner looks it up). A handler
 * that cannot run is refused at start, not discovered task by task. */
static int
runnable(const char *prog)
{
	if (!*prog)
		return 0;
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 && !is_dir(prog);
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		size_t n = strcspn(p, ":");
		char full[4096];
		if (snprintf(full, sizeof full, "%.*s/%s", (int)(n ? n : 1),
		             n ? p : ".", prog) < (int)sizeof full &&
		    access(full, X_OK) == 0 && !is_dir(full))
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* Add or replace the handler for kind (later definitions win). */
static int
put_handler(struct cli_handler **hs, size_t *n, const char *kind,
            size_t kind_len, const char *command, int64_t timeout_ms)
{
	struct cli_handler *p;
	size_t i;

	for (i = 0; i < *n; i++)
		if (strlen((*hs)[i].kind) == kind_len &&
		    strncmp((*hs)[i].kind, kind, kind_len) == 0) {
			(*hs)[i].command = (char *)command;
			(*hs)[i].timeout_ms = timeout_ms;
			return 0;
		}
	p = realloc(*hs, (*n + 1) * sizeof *p);
	if (p == NULL)
		return -1;
	*hs = p;
	memset(&p[*n], 0, sizeof p[*n]);
	p[*n].kind = strndup(kind, kind_len);
	if (p[*n].kind == NULL)
		return -1;
	p[*n].command = (char *)command; /* borrowed */
	p[*n].timeout_ms = timeout_ms;
	(*n)++;
	return 0;
}

static void
free_handlers(struct cli_handler *hs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(hs[i].kind);
	free(hs);
}

int
cmd_worker(struct cli *c, int argc, char **argv)
{
	enum {
		O_QUEUES = 1,
		O_CONC,
		O_HANDLER,
		O_NODE,
		O_LEASE,
		O_POLL,
		O_GRACE,
		O_TIMEOUT,
		O_RBASE,
		O_RMAX,
		O_EMPTY,
		O_NOOP,
		O_PREFETCH,
		O_HTTP,
		O_WAITDB,
		O_LOCKWAIT,
		O_LANES,
		O_MAXCONN
	};
	static const struct option opts[] = {
	        {"queues", required_argument, NULL, O_QUEUES},
	        {"concurrency", required_argument, NULL, O_CONC},
	        {"handler", required_argument, NULL, O_HANDLER},
	        {"node-id", required_argument, NULL, O_NODE},
	        {"lease", required_argument, NULL, O_LEASE},
	        {"poll", required_argument, NULL, O_POLL},
	        {"grace", required_argument, NULL, O_GRACE},
	        {"timeout", required_argument, NULL, O_TIMEOUT},
	        {"retry-base", required_argument, NULL, O_RBASE},
	        {"retry-max", required_argument, NULL, O_RMAX},
	        {"until-empty", no_argument, NULL, O_EMPTY},
	        {"prefetch", required_argument, NULL, O_PREFETCH},
	        {"lanes", required_argument, NULL, O_LANES},
	        {"max-connections", required_argument, NULL, O_MAXCONN},
	        {"wait-db", required_argument, NULL, O_WAITDB},
	        {"lock-wait-warn", required_argument, NULL, O_LOCKWAIT},
	        {"http", required_argument, NULL, O_HTTP},
	        /* hidden: a built-in no-op C handler, for `sked bench` */
	        {"builtin-noop", required_argument, NULL, O_NOOP},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	const struct cli_config *cfg = &c->cfg;
	sked_worker_options wo;
	struct cli_handler *hs = NULL;
	size_t nh = 0, i;
	sked_worker *w = NULL;
	const char *noop_kind = NULL;
	const char *http = cfg->http;
	struct cli_ops *ops = NULL;
	long long v;
	int ch, ex = 0, rc;
	int lanes = cfg->lanes;
	int max_conns = cfg->max_connections;

	memset(&wo, 0, sizeof wo);
	/* The config file first; flags overwrite below. */
	wo.node_id = cfg->node_id;
	wo.queues = cfg->queues;
	wo.concurrency = cfg->concurrency;
	wo.lease_ms = cfg->lease_ms;
	wo.poll_ms = cfg->poll_ms;
	wo.grace_ms = cfg->grace_ms;
	wo.timeout_ms = cfg->timeout_ms;
	wo.retry_base_ms = cfg->retry_base_ms;
	wo.retry_max_ms = cfg->retry_max_ms;
	wo.prefetch = cfg->prefetch;
	wo.lock_wait_warn_ms = cfg->lock_wait_warn_ms;
	/* at start, wait for an unreachable database: forever by default (a
	 * daemon under a supervisor), a minute with --until-empty */
	int64_t wait_db_ms = cfg->wait_db_set ? cfg->wait_db_ms : -2;
	for (i = 0; i < cfg->nhandlers; i++)
		if (put_handler(&hs, &nh, cfg->handlers[i].kind,
		                strlen(cfg->handlers[i].kind),
		                cfg->handlers[i].command,
		                cfg->handlers[i].timeout_ms) != 0)
			goto nomem;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		const char *eq;
		switch (ch) {
		case O_QUEUES:
			if ((ex = check_queues("--queues", optarg)) != 0)
				goto out;
			wo.queues = optarg;
			break;
		case O_CONC:
			if ((ex = cli_parse_int("--concurrency", optarg, 1,
			                        4096, &v)) != 0)
				goto out;
			wo.concurrency = (int)v;
			break;
		case O_LANES:
			if ((ex = cli_parse_int("--lanes", optarg, 1, 64,
			                        &v)) != 0)
				goto out;
			lanes = (int)v;
			break;
		case O_MAXCONN:
			if ((ex = cli_parse_int("--max-connections", optarg, 2,
			                        1000, &v)) != 0)
				goto out;
			max_conns = (int)v;
			break;
		case O_PREFETCH:
			if ((ex = cli_parse_prefetch("--prefetch", optarg,
			                             &wo.prefetch)) != 0)
				goto out;
			break;
		case O_HANDLER:
			eq = strchr(optarg, '=');
			if (eq == NULL || eq == optarg) {
				ex = cli_usage("worker",
				               "--handler: '%s' is not "
				               "KIND=PROGRAM",
				               optarg);
				goto out;
			}
			if (put_handler(&hs, &nh, optarg, (size_t)(eq - optarg),
			                eq + 1, 0) != 0)
				goto nomem;
			break;
		case O_NODE:
			wo.node_id = optarg;
			break;
		case O_LEASE:
			ex = cli_parse_duration("--lease", optarg,
			                        &wo.lease_ms);
			break;
		case O_POLL:
			ex = cli_parse_duration("--poll", optarg, &wo.poll_ms);
			break;
		case O_GRACE:
			ex = cli_parse_duration("--grace", optarg,
			                        &wo.grace_ms);
			break;
		case O_TIMEOUT:
			ex = cli_parse_duration("--timeout", optarg,
			                        &wo.timeout_ms);
			break;
		case O_RBASE:
			ex = cli_parse_duration("--retry-base", optarg,
			                        &wo.retry_base_ms);
			break;
		case O_RMAX:
			ex = cli_parse_duration("--retry-max", optarg,
			                        &wo.retry_max_ms);
			break;
		case O_EMPTY:
			wo.until_empty = 1;
			break;
		case O_NOOP:
			noop_kind = optarg;
			break;
		case O_HTTP:
			http = optarg;
			break;
		case O_LOCKWAIT:
			if (strcmp(optarg, "never") == 0)
				wo.lock_wait_warn_ms = -1;
			else
				ex = cli_parse_duration("--lock-wait-warn",
				                        optarg,
				                        &wo.lock_wait_warn_ms);
			break;
		case O_WAITDB:
			if (strcmp(optarg, "forever") == 0)
				wait_db_ms = -1;
			else if (strcmp(optarg, "0") == 0)
				wait_db_ms = 0;
			else if ((ex = cli_parse_duration("--wait-db", optarg,
			                                  &wait_db_ms)) != 0)
				goto out;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "worker");
			goto out;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			ex = cli_opt_error("worker", ch, argv);
			goto out;
		}
		if (ex != 0)
			goto out;
	}
	if (optind < argc) {
		ex = cli_usage("worker", "unexpected argument '%s'",
		               argv[optind]);
		goto out;
	}
	if (nh == 0 && noop_kind == NULL) {
		ex = cli_usage("worker",
		               "no handlers: give --handler KIND=PROGRAM or a "
		               "[handler.KIND] section in the config file");
		goto out;
	}
	/* '*' is the catch-all: every kind no other handler names */
	for (i = 0; i < nh; i++)
		if (strcmp(hs[i].kind, "*") != 0 &&
		    !sked_name_valid(hs[i].kind)) {
			ex = cli_usage(
			        "worker",
			        "--handler: '%s' is not a valid task kind",
			        hs[i].kind);
			goto out;
		}

	if (wait_db_ms == -2)
		wait_db_ms = wo.until_empty ? 60000 : -1;
	if ((ex = cli_open_wait(c, wait_db_ms)) != 0)
		goto out;
	/* the config file's [schedule.NAME] sections (cmd_cron.c) */
	if ((ex = cli_sync_schedules(c)) != 0)
		goto out;
	/* and its [queue.NAME] limits (cmd_queue.c) */
	if ((ex = cli_sync_queues(c)) != 0)
		goto out;
	if ((rc = sked_worker_new(c->h, &wo, &w)) != SKED_OK) {
		ex = cli_fail(c->h, rc, "worker");
		goto out;
	}
	sked_set_log_node(sked_worker_node_id(w)); /* for JSON log lines */
	int64_t keep[3];
	cli_retention(cfg, keep);
	if ((rc = sked_worker_set_retention(w, keep[0], keep[1], keep[2])) !=
	            SKED_OK ||
	    (rc = sked_worker_set_lanes(w, lanes)) != SKED_OK ||
	    (rc = sked_worker_set_max_connections(w, max_conns)) != SKED_OK) {
		ex = cli_fail(c->h, rc, "worker");
		goto out;
	}
	for (i = 0; i < nh; i++) {
		char **hargv = cli_split_argv(hs[i].command);
		if (hargv == NULL) {
			if (errno == ENOMEM)
				goto nomem;
			ex = cli_usage("worker",
			               "the handler for '%s' is empty",
			               hs[i].kind);
			goto out;
		}
		if (strncmp(hs[i].command, "http://", 7) == 0 ||
		    strncmp(hs[i].command, "https://", 8) == 0) {
			cli_argv_free(hargv);
			rc = sked_worker_handle_http(
			        w, hs[i].kind, hs[i].command, hs[i].timeout_ms);
			if (rc != SKED_OK) {
				ex = cli_fail(c->h, rc,
				              "worker: handler for '%s'",
				              hs[i].kind);
				goto out;
			}
			continue;
		}
		/* pipe:PROGRAM runs long-lived processes; PROGRAM one each */
		int pipe = strncmp(hargv[0], "pipe:", 5) == 0;
		if (pipe)
			memmove(hargv[0], hargv[0] + 5,
			        strlen(hargv[0] + 5) + 1);
		if (!runnable(hargv[0])) {
			cli_err("worker: the handler for '%s' names '%s', "
			        "which "
			        "is %s",
			        hs[i].kind, hargv[0],
			        hargv[0][0] ? "not an executable program "
			                      "(nor one in PATH)"
			                    : "empty");
			cli_argv_free(hargv);
			ex = EX_CONFIG;
			goto out;
		}
		rc = pipe ? sked_worker_handle_pipe(w, hs[i].kind,
		                                    (const char *const *)hargv,
		                                    hs[i].timeout_ms)
		          : sked_worker_handle_program(
		                    w, hs[i].kind, (const char *const *)hargv,
		                    hs[i].timeout_ms);
		cli_argv_free(hargv);
		if (rc != SKED_OK) {
			ex = cli_fail(c->h, rc, "worker: handler for '%s'",
			              hs[i].kind);
			goto out;
		}
	}

	/* the config's on_end: this worker also delivers webhooks
	 * (sked.hook tasks; docs/operations.md "Webhooks") */
	for (i = 0; i < cfg->nhooks; i++) {
		const struct cli_hook *hk = &cfg->hooks[i];
		rc = sked_worker_hook(w, hk->kind, hk->queue, hk->url);
		if (rc != SKED_OK) {
			cli_err("worker: %s:%d: on_end of [%s.%s]: %s",
			        cfg->path ? cfg->path : "config", hk->line,
			        hk->kind ? "kind" : "queue",
			        hk->kind ? hk->kind : hk->queue,
			        sked_errmsg(c->h));
			ex = rc == SKED_EUNSUPPORTED ? EX_UNAVAILABLE
			                             : EX_CONFIG;
			goto out;
		}
	}

	if (noop_kind != NULL &&
	    (rc = sked_worker_handle(w, noop_kind, cli_bench_noop,
	                             cli_bench_attach())) != SKED_OK) {
		ex = cli_fail(c->h, rc, "worker: --builtin-noop '%s'",
		              noop_kind);
		goto out;
	}

	g_worker = w;
	if (install_signals() != 0) {
		cli_err("worker: cannot install signal handlers: %s",
		        strerror(errno));
		ex = EX_OSERR;
		goto out;
	}
	/* metrics, health, sd_notify, SIGHUP (worker_ops.c) */
	if ((ex = cli_ops_start(c, w, http, &ops)) != 0)
		goto out;
#ifdef PR_SET_CHILD_SUBREAPER
	/* a handler's descendant that leaves its process group (setsid)
	 * comes back to this process when its parent exits, and the worker
	 * kills it once the handler's task is over (docs/handlers.md) */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
	rc = sked_worker_run(w);
	g_worker = NULL;
	cli_ops_stop(ops);
	ops = NULL;
	/* The library logs the worker's counters as it stops. */
	if (rc != SKED_OK)
		ex = cli_fail(c->h, rc, "worker %s", sked_worker_node_id(w));
	goto out;

nomem:
	cli_err("worker: out of memory");
	ex = EX_OSERR;
out:
	g_worker = NULL;
	cli_ops_stop(ops);
	sked_worker_free(w);
	free_handlers(hs, nh);
	return ex;
}
