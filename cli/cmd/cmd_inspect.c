/*
 * cmd_inspect.c — the commands that read the queue: list, show, nodes,
 * stats.
 *
 * Layer: the command-line program, a client of sked.h only. Each command
 * parses its own flags strictly, opens an existing database
 * (cli_open_existing: it never creates one), makes one or two library
 * calls and prints a table or, with --json, one JSON document.
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

/* Print s with control characters escaped (C0, DEL, C1): what a handler
 * or an enqueuer wrote cannot drive the terminal. Keep newlines (each new line
 * starts with indent) and tabs when multiline is set. */
static void
put_text(FILE *f, const char *s, size_t len, const char *indent, int multiline)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n' && multiline) {
			if (i + 1 < len)
				fprintf(f, "\n%s", indent);
		} else if (ch == '\t' && multiline) {
			fputc('\t', f);
		} else if (ch == '\n') {
			fputs("\\n", f);
		} else if (ch < 0x20 || ch == 0x7f) {
			fprintf(f, "\\x%02x", ch);
		} else if (ch == 0xc2 && i + 1 < len &&
		           (unsigned char)s[i + 1] >= 0x80 &&
		           (unsigned char)s[i + 1] <= 0x9f) {
			/* a C1 control such as CSI, as UTF-8 */
			fprintf(f, "\\u%04x", (unsigned char)s[++i]);
		} else {
			fputc(ch, f);
		}
	}
}

static void
print_text(FILE *f, const char *s, size_t len, const char *indent,
           int multiline)
{
	put_text(f, s, len, indent, multiline);
	fputc('\n', f);
}

/* one line of text that may hold anything */
static void
print_line(const char *s)
{
	print_text(stdout, s, strlen(s), "", 0);
}

/* ---- list, show ---- */

static int
status_arg(const char *s, int *out)
{
	char names[128] = "";
	int i;

	*out = sked_status_parse(s);
	if (*out >= 0)
		return 0;
	for (i = 0; i <= SKED_BLOCKED; i++) {
		strcat(names, i ? ", " : "");
		strncat(names, sked_status_name(i), 20);
	}
	return cli_usage("list", "--status: '%s' is not one of %s", s, names);
}

/* how long, as "1h02m03s", "4m05s" or "6.7s" */
static const char *
elapsed_text(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;
	if (s >= 3600)
		snprintf(buf, len, "%" PRId64 "h%02dm%02ds", s / 3600,
		         (int)(s / 60 % 60), (int)(s % 60));
	else if (s >= 60)
		snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)(s % 60));
	else
		snprintf(buf, len, "%d.%ds", (int)s, (int)(ms % 1000 / 100));
	return buf;
}

/* a report in a table cell: control bytes as '?', at most 60 bytes (cut
 * on a character's start, "…" after) */
static void
progress_cell(const char *s, char *out, size_t len)
{
	size_t n = 0, max = len - 4 < 60 ? len - 4 : 60;
	for (; s[n] && n < max; n++)
		out[n] = ((unsigned char)s[n] < 0x20 || s[n] == 0x7f) ? '?'
		                                                      : s[n];
	if (s[n]) {
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		memcpy(out + n, "…", 3);
		n += 3;
	}
	out[n] = '\0';
}

/* list --status running: each task's node, start, elapsed time and
 * latest progress in place of its run-at time */
static int
list_running(struct cli *c, const sked_task *ts, size_t n)
{
	static const char *const head[] = {"ID",       "QUEUE",   "KIND",
	                                   "ATTEMPTS", "NODE",    "STARTED",
	                                   "ELAPSED",  "PROGRESS"};
	struct cli_table *t = cli_table_new(8, head);
	for (size_t i = 0; i < n; i++) {
		sked_task_live l = {0};
		char id[24], att[32], at[32], el[48], pr[72];
		const char *row[8];
		if (sked_task_live_get(c->h, ts[i].id, &l) != SKED_OK)
			continue; /* it ended meanwhile */
		snprintf(id, sizeof id, "%" PRId64, ts[i].id);
		snprintf(att, sizeof att, "%d/%d", ts[i].attempts,
		         ts[i].max_attempts);
		progress_cell(l.progress ? l.progress : "-", pr, sizeof pr);
		row[0] = id;
		row[1] = ts[i].queue;
		row[2] = ts[i].kind;
		row[3] = att;
		row[4] = l.node_id ? l.node_id : "-";
		row[5] = cli_time(l.started_ms, at, sizeof at);
		row[6] = elapsed_text(l.elapsed_ms, el, sizeof el);
		row[7] = pr;
		cli_table_add(t, row);
		sked_task_live_clear(&l);
	}
	if (n > 0)
		cli_table_print(t, stdout);
	else
		fprintf(stderr, "no tasks\n");
	cli_table_free(t);
	return 0;
}

int
cmd_list(struct cli *c, int argc, char **argv)
{
	enum { O_STATUS = 1, O_QUEUE, O_KIND, O_LIMIT };
	static const struct option opts[] = {
	        {"status", required_argument, NULL, O_STATUS},
	        {"queue", required_argument, NULL, O_QUEUE},
	        {"kind", required_argument, NULL, O_KIND},
	        {"limit", required_argument, NULL, O_LIMIT},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	static const char *const head[] = {"ID",     "QUEUE", "KIND",
	                                   "STATUS", "PRIO",  "ATTEMPTS",
	                                   "RUN_AT", "NODE"};
	sked_list_filter f;
	sked_task *ts = NULL;
	size_t n = 0, i;
	long long v;
	int ch, ex, rc;

	memset(&f, 0, sizeof f);
	f.status = -1;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_STATUS:
			if ((ex = status_arg(optarg, &f.status)) != 0)
				return ex;
			break;
		case O_QUEUE:
			f.queue = optarg;
			break;
		case O_KIND:
			f.kind = optarg;
			break;
		case O_LIMIT:
			if ((ex = cli_parse_int("--limit", optarg, 1, 1000000,
			                        &v)) != 0)
				return ex;
			f.limit = (int)v;
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "list");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("list", ch, argv);
		}
	}
	if (optind < argc)
		return cli_usage("list", "unexpected argument '%s'",
		                 argv[optind]);
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_task_list(c->h, &f, &ts, &n)) != SKED_OK)
		return cli_fail(c->h, rc, "list");
	if (c->json) {
		json_t *arr = json_array();
		for (i = 0; i < n; i++) {
			json_t *o = cli_task_json(&ts[i]);
			if (o)
				cli_task_live_json(c->h, &ts[i], o);
			json_array_append_new(arr, o);
		}
		ex = cli_json_print(arr);
	} else if (f.status == SKED_RUNNING) {
		ex = list_running(c, ts, n);
	} else {
		struct cli_table *t = cli_table_new(8, head);
		for (i = 0; i < n; i++) {
			char id[24], prio[16], att[32], at[32];
			const char *row[8];
			snprintf(id, sizeof id, "%" PRId64, ts[i].id);
			snprintf(prio, sizeof prio, "%d", ts[i].priority);
			snprintf(att, sizeof att, "%d/%d", ts[i].attempts,
			         ts[i].max_attempts);
			row[0] = id;
			row[1] = ts[i].queue;
			row[2] = ts[i].kind;
			row[3] = sked_status_name(ts[i].status);
			row[4] = prio;
			row[5] = att;
			row[6] = cli_time(ts[i].run_at_ms, at, sizeof at);
			row[7] = ts[i].node_id;
			cli_table_add(t, row);
		}
		if (n > 0)
			cli_table_print(t, stdout);
		else
			fprintf(stderr, "no tasks\n");
		cli_table_free(t);
	}
	sked_tasks_free(ts, n);
	return ex;
}

static void
show_text(const sked_task *t, const sked_task_live *l, const sked_run *runs,
          size_t n)
{
	char a[32], b[32];
	size_t i;

	printf("task %" PRId64 "\n", t->id);
	printf("  kind         %s\n", t->kind);
	printf("  queue        %s\n", t->queue);
	printf("  status       %s\n", sked_status_name(t->status));
	printf("  priority     %d\n", t->priority);
	printf("  attempts     %d of %d\n", t->attempts, t->max_attempts);
	printf("  run at       %s\n", cli_time(t->run_at_ms, a, sizeof a));
	if (t->node_id != NULL) {
		printf("  node         ");
		print_line(t->node_id);
	}
	if (l && l->started_ms != 0) {
		char e[48];
		printf("  started      %s (running for %s)\n",
		       cli_time(l->started_ms, a, sizeof a),
		       elapsed_text(l->elapsed_ms, e, sizeof e));
	}
	if (l && l->progress != NULL) {
		printf("  progress     ");
		print_line(l->progress);
		printf("               (as of %s)\n",
		       cli_time(l->progress_ms, a, sizeof a));
	}
	if (t->lease_until_ms != 0)
		printf("  lease until  %s\n",
		       cli_time(t->lease_until_ms, a, sizeof a));
	if (t->unique_key != NULL) {
		printf("  unique key   ");
		print_line(t->unique_key);
	}
	if (t->schedule_name != NULL) {
		printf("  schedule     ");
		print_line(t->schedule_name);
		printf("               (fire time %s)\n",
		       cli_time(t->fire_time_ms, a, sizeof a));
	}
	if (t->traceparent != NULL)
		printf("  traceparent  %s\n", t->traceparent);
	printf("  created      %s\n", cli_time(t->created_ms, a, sizeof a));
	printf("  updated      %s\n", cli_time(t->updated_ms, a, sizeof a));
	if (t->finished_ms != 0)
		printf("  finished     %s\n",
		       cli_time(t->finished_ms, a, sizeof a));
	if (t->last_error != NULL) {
		printf("  last error   ");
		print_text(stdout, t->last_error, strlen(t->last_error), "", 0);
	}
	printf("  payload      (%zu bytes) ", t->payload_len);
	print_text(stdout, t->payload ? t->payload : "",
	           t->payload_len > 400 ? 400 : t->payload_len, "", 0);
	if (t->result != NULL) {
		printf("  result       (%zu bytes)\n    ", strlen(t->result));
		print_text(stdout, t->result, strlen(t->result), "    ", 1);
	}
	if (n == 0) {
		printf("runs: none yet\n");
		return;
	}
	printf("runs:\n");
	for (i = 0; i < n; i++) {
		const sked_run *r = &runs[i];
		printf("  #%d  ", r->attempt);
		if (r->node_id)
			put_text(stdout, r->node_id, strlen(r->node_id), "", 0);
		else
			printf("-");
		printf("  %s .. %s  %s", cli_time(r->started_ms, a, sizeof a),
		       cli_time(r->finished_ms, b, sizeof b),
		       r->outcome ? r->outcome : "running");
		if (r->exit_code >= 0)
			printf("  exit %d", r->exit_code);
		printf("\n");
		if (r->error != NULL) {
			printf("      error: ");
			print_text(stdout, r->error, strlen(r->error), "", 0);
		}
		if (r->output != NULL && r->output[0] != '\0') {
			printf("      output:\n        ");
			print_text(stdout, r->output, strlen(r->output),
			           "        ", 1);
		}
	}
}

/* the first 50 of them in text, then how many more */
static void
deps_text(struct cli *c, const char *what, const int64_t *ids, size_t n)
{
	if (n == 0)
		return;
	printf("%s:\n", what);
	for (size_t i = 0; i < n && i < 50; i++) {
		char *kind;
		const char *st = cli_dep_state(c->h, ids[i], &kind);
		printf("  %" PRId64 "  %s  %s\n", ids[i], kind ? kind : "-",
		       st);
		free(kind);
	}
	if (n > 50)
		printf("  … and %zu more\n", n - 50);
}

int
cmd_show(struct cli *c, int argc, char **argv)
{
	sked_task *t = NULL;
	sked_run *runs = NULL;
	size_t n = 0;
	int64_t id;
	int ex, rc;

	if ((ex = cli_simple_args(c, "show", argc, argv, 1, "the task ID")) >=
	    0)
		return ex;
	if ((ex = cli_parse_id("show", argv[optind], &id)) != 0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if (c->json) {
		json_t *o;
		const char *what;
		if ((rc = cli_show_json(c->h, id, &o, &what)) != SKED_OK)
			return cli_fail(c->h, rc, "%s %" PRId64, what, id);
		return cli_json_print(o);
	}
	if ((rc = sked_task_get(c->h, id, &t)) != SKED_OK)
		return cli_fail(c->h, rc, "task %" PRId64, id);
	if ((rc = sked_runs_get(c->h, id, &runs, &n)) != SKED_OK) {
		sked_tasks_free(t, 1);
		return cli_fail(c->h, rc, "runs of task %" PRId64, id);
	}
	int64_t *dep[2] = {NULL, NULL};
	size_t ndep[2] = {0, 0};
	if ((rc = sked_task_deps(c->h, id, &dep[0], &ndep[0], &dep[1],
	                         &ndep[1])) != SKED_OK) {
		sked_runs_free(runs, n);
		sked_tasks_free(t, 1);
		return cli_fail(c->h, rc, "dependencies of task %" PRId64, id);
	}
	sked_task_live live = {0};
	int running = t->status == SKED_RUNNING &&
	              sked_task_live_get(c->h, id, &live) == SKED_OK;
	show_text(t, running ? &live : NULL, runs, n);
	sked_task_live_clear(&live);
	deps_text(c, "parents", dep[0], ndep[0]);
	deps_text(c, "children", dep[1], ndep[1]);
	free(dep[0]);
	free(dep[1]);
	sked_runs_free(runs, n);
	sked_tasks_free(t, 1);
	return 0;
}

/* ---- nodes, stats ---- */

int
cmd_nodes(struct cli *c, int argc, char **argv)
{
	static const char *const head[] = {
	        "NODE", "HOST",  "PID",     "ALIVE",     "LEADS",    "RUNNING",
	        "HELD", "SLOTS", "STARTED", "HEARTBEAT", "STRATEGY", "VERSION"};
	sked_node *ns = NULL;
	size_t n = 0, i;
	int ex, rc;
	sked_lock_state lead = {0};

	for (i = 1; i < (size_t)argc; i++)
		if (strcmp(argv[i], "--prune") == 0)
			return cli_nodes_prune(c, argc, argv); /* cmd_nodes.c */
	if ((ex = cli_simple_args(c, "nodes", argc, argv, 0, "")) >= 0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_nodes(c->h, &ns, &n)) != SKED_OK)
		return cli_fail(c->h, rc, "nodes");
	/* who leads the cluster's chores: the leader lock's live holder
	 * (never taken, or not readable: nobody shown) */
	if (sked_lock_get(c->h, SKED_LEADER_LOCK, &lead) != SKED_OK)
		memset(&lead, 0, sizeof lead);
	if (c->json) {
		json_t *arr = json_array();
		for (i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "id", cli_json_cstr(ns[i].id));
			json_object_set_new(o, "host",
			                    cli_json_cstr(ns[i].host));
			json_object_set_new(o, "pid", json_integer(ns[i].pid));
			json_object_set_new(o, "alive",
			                    json_boolean(ns[i].alive));
			int leads =
			        lead.held && strcmp(lead.owner, ns[i].id) == 0;
			json_object_set_new(o, "leader", json_boolean(leads));
			json_object_set_new(o, "leader_token",
			                    leads ? json_integer(lead.token)
			                          : json_null());
			/* in a handler, and held ahead of a free thread
			 * (docs/design.md, "Prefetch") */
			json_object_set_new(o, "running",
			                    json_integer(ns[i].busy));
			json_object_set_new(
			        o, "held",
			        json_integer(ns[i].running - ns[i].busy));
			json_object_set_new(o, "slots",
			                    json_integer(ns[i].slots));
			json_object_set_new(o, "started_at",
			                    cli_json_time(ns[i].started_ms));
			json_object_set_new(o, "heartbeat_at",
			                    cli_json_time(ns[i].heartbeat_ms));
			json_object_set_new(o, "strategy",
			                    cli_json_cstr(ns[i].strategy));
			json_object_set_new(o, "version",
			                    cli_json_cstr(ns[i].version));
			json_array_append_new(arr, o);
		}
		ex = cli_json_print(arr);
	} else if (n == 0) {
		fprintf(stderr, "no nodes have registered yet\n");
	} else {
		struct cli_table *t = cli_table_new(12, head);
		for (i = 0; i < n; i++) {
			char pid[16], run[24], held[24], sl[16], st[32], hb[32];
			char ld[40];
			const char *row[12];
			if (lead.held && strcmp(lead.owner, ns[i].id) == 0)
				snprintf(ld, sizeof ld,
				         "yes (token %" PRId64 ")", lead.token);
			else
				snprintf(ld, sizeof ld, "-");
			snprintf(pid, sizeof pid, "%d", ns[i].pid);
			snprintf(run, sizeof run, "%" PRId64, ns[i].busy);
			snprintf(held, sizeof held, "%" PRId64,
			         ns[i].running - ns[i].busy);
			snprintf(sl, sizeof sl, "%d", ns[i].slots);
			row[0] = ns[i].id;
			row[1] = ns[i].host;
			row[2] = pid;
			row[3] = ns[i].alive ? "yes" : "no";
			row[4] = ld;
			row[5] = run;
			row[6] = held;
			row[7] = sl;
			row[8] = cli_time(ns[i].started_ms, st, sizeof st);
			row[9] = cli_time(ns[i].heartbeat_ms, hb, sizeof hb);
			row[10] = ns[i].strategy;
			row[11] = ns[i].version;
			cli_table_add(t, row);
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
	sked_nodes_free(ns, n);
	return ex;
}

#define NSTAT cli_nstat

int
cmd_stats(struct cli *c, int argc, char **argv)
{
	sked_queue_stats *qs = NULL, total;
	sked_cluster_gauges g;
	sked_queue_info *qi = NULL; /* which queues are paused */
	sked_unserved *un = NULL;   /* due work no live node serves */
	size_t n = 0, nqi = 0, nun = 0, i, k;
	int ex, rc;
	char od[32];

	if ((ex = cli_simple_args(c, "stats", argc, argv, 0, "")) >= 0)
		return ex;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	if ((rc = sked_stats(c->h, &qs, &n)) != SKED_OK)
		return cli_fail(c->h, rc, "stats");
	/* the oldest due task's age per queue (cmd_nodes.c) */
	if ((rc = sked_cluster_gauges_get(c->h, &g)) != SKED_OK) {
		free(qs);
		return cli_fail(c->h, rc, "stats");
	}
	if ((rc = sked_queue_list(c->h, &qi, &nqi)) != SKED_OK) {
		sked_cluster_gauges_free(&g);
		free(qs);
		return cli_fail(c->h, rc, "stats");
	}
	if ((rc = sked_unserved_get(c->h, &un, &nun)) != SKED_OK) {
		sked_queue_info_free(qi, nqi);
		sked_cluster_gauges_free(&g);
		free(qs);
		return cli_fail(c->h, rc, "stats");
	}
	memset(&total, 0, sizeof total);
	snprintf(total.queue, sizeof total.queue, "(total)");
	for (i = 0; i < n; i++) {
		for (k = 0; k < sizeof total.count / sizeof total.count[0]; k++)
			total.count[k] += qs[i].count[k];
		total.due += qs[i].due;
	}
	if (c->json) {
		json_t *arr = json_array(), *tot = json_object();
		for (i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "queue",
			                    cli_json_cstr(qs[i].queue));
			for (k = 0; k < NSTAT; k++)
				json_object_set_new(
				        o, cli_stat_cols[k].name,
				        json_integer(cli_stat_of(&qs[i], k)));
			json_object_set_new(o, "oldest_due_ms",
			                    cli_json_due_age(cli_oldest_due_ms(
			                            &g, qs[i].queue)));
			json_object_set_new(o, "paused",
			                    json_boolean(cli_queue_paused(
			                            qi, nqi, qs[i].queue)));
			json_array_append_new(arr, o);
		}
		for (k = 0; k < NSTAT; k++)
			json_object_set_new(
			        tot, cli_stat_cols[k].name,
			        json_integer(cli_stat_of(&total, k)));
		json_object_set_new(
		        tot, "oldest_due_ms",
		        cli_json_due_age(cli_oldest_due_ms(&g, NULL)));
		json_t *ua = json_array();
		for (i = 0; i < nun; i++)
			json_array_append_new(
			        ua, json_pack("{s:o, s:o, s:I, s:I}", "queue",
			                      cli_json_cstr(un[i].queue),
			                      "kind", cli_json_cstr(un[i].kind),
			                      "due", (json_int_t)un[i].due,
			                      "oldest_due_ms",
			                      (json_int_t)un[i].oldest_due_ms));
		ex = cli_json_print(json_pack("{s:o, s:o, s:o}", "queues", arr,
		                              "total", tot, "unserved", ua));
	} else {
		const char *head[NSTAT + 3];
		struct cli_table *t;
		head[0] = "QUEUE";
		for (k = 0; k < NSTAT; k++)
			head[k + 1] = cli_stat_cols[k].name;
		head[NSTAT + 1] = "oldest_due";
		head[NSTAT + 2] = "state";
		t = cli_table_new(NSTAT + 3, head);
		for (i = 0; i <= n; i++) {
			const sked_queue_stats *q = i < n ? &qs[i] : &total;
			char cells[NSTAT][24];
			const char *row[NSTAT + 3];
			int64_t age;
			/* one queue: its row is the total */
			if (i == n && n == 1)
				break;
			row[0] = q->queue;
			for (k = 0; k < NSTAT; k++) {
				snprintf(cells[k], sizeof cells[k], "%" PRId64,
				         cli_stat_of(q, k));
				row[k + 1] = cells[k];
			}
			age = cli_oldest_due_ms(&g, i < n ? q->queue : NULL);
			row[NSTAT + 1] =
			        age ? sked_format_duration(age / 1000 * 1000,
			                                   od, sizeof od)
			            : "-";
			row[NSTAT + 2] = i == n ? "-"
			                 : cli_queue_paused(qi, nqi, q->queue)
			                         ? "paused"
			                         : "active";
			cli_table_add(t, row);
		}
		if (n > 0)
			cli_table_print(t, stdout);
		else
			fprintf(stderr, "no tasks\n");
		cli_table_free(t);
		/* why work waits: due tasks no live node can run */
		for (i = 0; i < nun; i++)
			printf("unserved: %" PRId64
			       " due task(s) of kind '%s' in "
			       "queue '%s' (oldest due %s): no live node has "
			       "a handler for it and that queue\n",
			       un[i].due, un[i].kind, un[i].queue,
			       sked_format_duration(un[i].oldest_due_ms / 1000 *
			                                    1000,
			                            od, sizeof od));
	}
	sked_unserved_free(un);
	sked_queue_info_free(qi, nqi);
	sked_cluster_gauges_free(&g);
	free(qs);
	return ex;
}
