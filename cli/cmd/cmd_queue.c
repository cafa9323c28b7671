/*
 * cmd_queue.c — `sked queue set QUEUE [--concurrency N|none]
 * [--per-key N|none] [--rate N/DURATION|none] [--fair on|off]
 * [--weight KEY=N|default]…`, `sked queue pause|resume
 * QUEUE` and `sked queue ls`: the cluster-wide limits and pause of a
 * queue, and the config file's [queue.NAME] sections, which a worker
 * applies when it starts.
 *
 * Layer: the command-line program, a client of sked.h only. Enforcing the
 * limits is the library's (src/model/limits.c, docs/limits.md); this file
 * parses flags, calls sked_queue_set and sked_queue_list and prints.
 * A flag not given keeps that limit; "none" removes it. Bad numbers are
 * usage errors (64); a bad queue name is the library's (65).
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#define MAX_LIMIT        1000000
#define MAX_WEIGHT_FLAGS 64 /* --weight flags in one call */

/* --weight KEY=N (N 1 to SKED_MAX_WEIGHT) or KEY=default (1): *klen is
 * the key's length in s. */
static int
parse_weight(const char *s, size_t *klen, int *w)
{
	const char *eq = strrchr(s, '=');
	char *end;
	long v;
	if (!eq || eq == s) {
		cli_err("--weight: '%s' is not KEY=N (N from 1 to %d) nor "
		        "KEY=default",
		        s, SKED_MAX_WEIGHT);
		return EX_USAGE;
	}
	*klen = (size_t)(eq - s);
	if (strcmp(eq + 1, "default") == 0) {
		*w = 1;
		return 0;
	}
	errno = 0;
	v = strtol(eq + 1, &end, 10);
	if (eq[1] < '0' || eq[1] > '9' || *end != '\0' || errno != 0 || v < 1 ||
	    v > SKED_MAX_WEIGHT) {
		cli_err("--weight: '%s' is not a weight from 1 to %d, nor "
		        "default",
		        eq + 1, SKED_MAX_WEIGHT);
		return EX_USAGE;
	}
	*w = (int)v;
	return 0;
}

/* A limit's value, N from 1 to 1000000 or "none" (0); a rate, N/DURATION
 * or "none" (0). One line and EX_USAGE when it is neither. */
static int
cli_parse_limit(const char *flag, const char *s, int *out)
{
	char *end;
	long v;
	if (strcmp(s, "none") == 0) {
		*out = 0;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < 1 ||
	    v > MAX_LIMIT) {
		cli_err("%s: '%s' is not a number from 1 to %d, nor none", flag,
		        s, MAX_LIMIT);
		return EX_USAGE;
	}
	*out = (int)v;
	return 0;
}

static int
cli_parse_rate_limit(const char *flag, const char *s, int *n, int64_t *ms)
{
	if (strcmp(s, "none") == 0) {
		*n = 0;
		*ms = 0;
		return 0;
	}
	if (sked_parse_rate(s, n, ms) != SKED_OK) {
		cli_err("%s: '%s' is not N/DURATION (N from 1 to 100000 starts "
		        "per 1ms to 1d, e.g. 100/1m) or none",
		        flag, s);
		return EX_USAGE;
	}
	return 0;
}

/* The confirmation of queue set, as the other verbs confirm ("paused
 * queue mail"): what it set, in the flags' words and order, a removed
 * limit as "none", e.g. "set queue mail: concurrency 5, rate 100/1m". */
static void
print_set(const char *queue, int conc, int per_key, int rate_n, int64_t rate_ms,
          int fair)
{
	char v[64], d[32];
	const char *sep = ": ";

	printf("set queue %s", queue);
	if (conc != SKED_LIMIT_KEEP) {
		snprintf(v, sizeof v, "%d", conc);
		printf("%sconcurrency %s", sep, conc ? v : "none");
		sep = ", ";
	}
	if (per_key != SKED_LIMIT_KEEP) {
		snprintf(v, sizeof v, "%d", per_key);
		printf("%sper-key %s", sep, per_key ? v : "none");
		sep = ", ";
	}
	if (rate_n != SKED_LIMIT_KEEP) {
		snprintf(v, sizeof v, "%d/%s", rate_n,
		         sked_format_duration(rate_ms, d, sizeof d));
		printf("%srate %s", sep, rate_n ? v : "none");
		sep = ", ";
	}
	if (fair >= 0)
		printf("%sfair %s", sep, fair ? "on" : "off");
	printf("\n");
}

/* the weights set, one line each: "weight of key a in queue q: 3" */
static void
print_weights(const char *queue, char *const *keys, const int *w, int nw)
{
	for (int i = 0; i < nw; i++)
		if (w[i] > 1)
			printf("weight of key %s in queue %s: %d\n", keys[i],
			       queue, w[i]);
		else
			printf("weight of key %s in queue %s: default (1)\n",
			       keys[i], queue);
}

int
cmd_queue_set(struct cli *c, int argc, char **argv)
{
	enum { O_CONC = 1, O_KEY, O_RATE, O_FAIR, O_WEIGHT };
	static const struct option opts[] = {
	        {"concurrency", required_argument, NULL, O_CONC},
	        {"per-key", required_argument, NULL, O_KEY},
	        {"rate", required_argument, NULL, O_RATE},
	        {"fair", required_argument, NULL, O_FAIR},
	        {"weight", required_argument, NULL, O_WEIGHT},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	int conc = SKED_LIMIT_KEEP, per_key = SKED_LIMIT_KEEP;
	int rate_n = SKED_LIMIT_KEEP;
	int64_t rate_ms = 0;
	int fair = -1; /* -1: keep */
	int ch, ex, rc;
	/* --weight KEY=N, in order (keys point into argv, cut at '=') */
	char *wkeys[MAX_WEIGHT_FLAGS];
	int wvals[MAX_WEIGHT_FLAGS], nw = 0;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_WEIGHT: {
			size_t klen;
			int wv;
			if ((ex = parse_weight(optarg, &klen, &wv)) != 0)
				return ex;
			if (nw == MAX_WEIGHT_FLAGS)
				return cli_usage("queue set",
				                 "at most %d --weight flags at "
				                 "once",
				                 MAX_WEIGHT_FLAGS);
			optarg[klen] = '\0';
			wkeys[nw] = optarg;
			wvals[nw++] = wv;
			break;
		}
		case O_FAIR:
			if (strcmp(optarg, "on") == 0)
				fair = 1;
			else if (strcmp(optarg, "off") == 0)
				fair = 0;
			else {
				cli_err("--fair: '%s' is neither on nor off",
				        optarg);
				return EX_USAGE;
			}
			break;
		case O_CONC:
			if ((ex = cli_parse_limit("--concurrency", optarg,
			                          &conc)) != 0)
				return ex;
			break;
		case O_KEY:
			if ((ex = cli_parse_limit("--per-key", optarg,
			                          &per_key)) != 0)
				return ex;
			break;
		case O_RATE:
			if ((ex = cli_parse_rate_limit("--rate", optarg,
			                               &rate_n, &rate_ms)) != 0)
				return ex;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "queue set");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("queue set", ch, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("queue set", "missing QUEUE");
	if (optind + 1 < argc)
		return cli_usage("queue set", "unexpected argument '%s'",
		                 argv[optind + 1]);
	int limits = conc != SKED_LIMIT_KEEP || per_key != SKED_LIMIT_KEEP ||
	             rate_n != SKED_LIMIT_KEEP;
	if (!limits && fair < 0 && nw == 0)
		return cli_usage("queue set",
		                 "nothing to set: give --concurrency, "
		                 "--per-key, --rate, --fair or --weight");
	const char *queue = argv[optind];
	if ((ex = cli_open(c)) != 0)
		return ex;
	/* fairness first: a queue made fair and limited at once has its
	 * row for either */
	if (fair >= 0 &&
	    (rc = sked_queue_set_fair(c->h, queue, fair)) != SKED_OK)
		return cli_fail(c->h, rc, "queue set");
	if (limits && (rc = sked_queue_set(c->h, queue, conc, per_key, rate_n,
	                                   rate_ms)) != SKED_OK)
		return cli_fail(c->h, rc, "queue set");
	for (int i = 0; i < nw; i++)
		if ((rc = sked_queue_set_weight(c->h, queue, wkeys[i],
		                                wvals[i])) != SKED_OK)
			return cli_fail(c->h, rc, "queue set");
	if (!c->json) {
		if (limits || fair >= 0)
			print_set(queue, conc, per_key, rate_n, rate_ms, fair);
		print_weights(queue, wkeys, wvals, nw);
		return EX_OK;
	}
	/* --json: the queue as queue ls shows it now */
	sked_queue_info *q = NULL, none = {.queue = (char *)queue};
	size_t n = 0, i;
	if ((rc = sked_queue_list(c->h, &q, &n)) != SKED_OK)
		return cli_fail(c->h, rc, "queue set");
	for (i = 0; i < n && strcmp(q[i].queue, queue) != 0; i++)
		;
	json_t *v = cli_queue_json(i < n ? &q[i] : &none);
	sked_queue_info_free(q, n);
	sked_queue_weight *w = NULL;
	size_t nwl = 0;
	if ((rc = sked_queue_weights(c->h, queue, &w, &nwl)) != SKED_OK) {
		json_decref(v);
		return cli_fail(c->h, rc, "queue set");
	}
	cli_queue_weights_json(v, w, nwl);
	sked_queue_weights_free(w, nwl);
	return cli_json_print(v);
}

/* queue pause|resume QUEUE */
static int
pause_cmd(struct cli *c, int argc, char **argv, const char *cmd, int paused)
{
	int ex, rc;
	if ((ex = cli_simple_args(c, cmd, argc, argv, 1, "QUEUE")) >= 0)
		return ex;
	const char *queue = argv[optind];
	if ((ex = cli_open(c)) != 0)
		return ex;
	if ((rc = sked_queue_pause(c->h, queue, paused)) != SKED_OK)
		return cli_fail(c->h, rc, "%s", cmd);
	if (c->json)
		return cli_json_print(json_pack("{s:s, s:b}", "queue", queue,
		                                "paused", paused));
	printf("%s queue %s\n", paused ? "paused" : "resumed", queue);
	return EX_OK;
}

int
cmd_queue_pause(struct cli *c, int argc, char **argv)
{
	return pause_cmd(c, argc, argv, "queue pause", 1);
}

int
cmd_queue_resume(struct cli *c, int argc, char **argv)
{
	return pause_cmd(c, argc, argv, "queue resume", 0);
}

static const char *
num_or_dash(int v, char *buf, size_t len)
{
	if (v <= 0)
		return "-";
	snprintf(buf, len, "%d", v);
	return buf;
}

int
cmd_queue_ls(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {CLI_COMMON_OPTIONS,
	                                     {NULL, 0, NULL, 0}};
	static const char *const headers[] = {
	        "QUEUE",       "STATE",   "RUNNING",
	        "CONCURRENCY", "PER KEY", "KEYS RUNNING",
	        "KEYS FULL",   "RATE",    "STARTS IN WINDOW",
	        "FAIR",        "WEIGHTS"};
	sked_queue_info *q = NULL;
	sked_queue_weight *w = NULL;
	size_t n = 0, nw = 0, i;
	int ch, ex, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (ch == CLI_OPT_HELP) {
			cli_help(stdout, "queue ls");
			return EX_OK;
		}
		if (ch != CLI_OPT_JSON)
			return cli_opt_error("queue ls", ch, argv);
		c->json = 1;
	}
	if (optind < argc)
		return cli_usage("queue ls", "unexpected argument '%s'",
		                 argv[optind]);
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_queue_list(c->h, &q, &n)) != SKED_OK)
		return cli_fail(c->h, rc, "queue ls");
	if ((rc = sked_queue_weights(c->h, NULL, &w, &nw)) != SKED_OK) {
		sked_queue_info_free(q, n);
		return cli_fail(c->h, rc, "queue ls");
	}
	if (c->json) {
		json_t *arr = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(
			        arr, cli_queue_weights_json(
			                     cli_queue_json(&q[i]), w, nw));
		sked_queue_info_free(q, n);
		sked_queue_weights_free(w, nw);
		return cli_json_print(arr);
	}
	if (n == 0) {
		sked_queue_weights_free(w, nw);
		printf("no limited or paused queues and no running tasks\n");
		return EX_OK;
	}
	struct cli_table *t = cli_table_new(11, headers);
	for (i = 0; t != NULL && i < n; i++) {
		char run[16], conc[16], pk[16], kr[16], kf[16], rate[64],
		        used[16], d[32], wt[256];
		cli_queue_weights_text(q[i].queue, w, nw, wt, sizeof wt);
		snprintf(run, sizeof run, "%d", q[i].running);
		snprintf(kr, sizeof kr, "%d", q[i].keys_running);
		snprintf(kf, sizeof kf, "%d", q[i].keys_full);
		if (q[i].rate_n > 0) {
			snprintf(rate, sizeof rate, "%d/%s", q[i].rate_n,
			         sked_format_duration(q[i].rate_window_ms, d,
			                              sizeof d));
			snprintf(used, sizeof used, "%d", q[i].rate_used);
		} else {
			snprintf(rate, sizeof rate, "-");
			snprintf(used, sizeof used, "-");
		}
		const char *row[11] = {
		        q[i].queue,
		        q[i].paused ? "paused" : "active",
		        run,
		        num_or_dash(q[i].concurrency, conc, sizeof conc),
		        num_or_dash(q[i].per_key, pk, sizeof pk),
		        kr,
		        q[i].per_key > 0 ? kf : "-",
		        rate,
		        used,
		        q[i].fair ? "yes" : "-",
		        wt,
		};
		cli_table_add(t, row);
	}
	sked_queue_info_free(q, n);
	sked_queue_weights_free(w, nw);
	if (t == NULL) {
		cli_err("queue ls: out of memory");
		return EX_OSERR;
	}
	cli_table_print(t, stdout);
	cli_table_free(t);
	return EX_OK;
}
