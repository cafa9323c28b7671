/*
 * cmd_enqueue.c — `sked enqueue KIND [PAYLOAD]`, one task, or with
 * --lines FILE one task per line in one transaction, or with --graph
 * FILE a workflow of any kinds in one transaction (view/graph_json.c).
 *
 * Layer: the command-line program, a client of sked.h only. Flags are
 * parsed strictly (a bad value is a usage error before the database is
 * touched); names, sizes and unique keys are checked by the library and
 * its one-line messages passed on.
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sysexits.h>
#include <unistd.h>

/* ---- enqueue ---- */

/* --lines reads stop at a bound (issue 39): a line longer than a
 * payload may be, or a file over LINES_MAX, is refused as soon as it is
 * seen, so `--lines /dev/zero` costs 1 MiB, not all memory. */
#define LINES_MAX ((size_t)256 * 1024 * 1024)

static int
read_lines_file(const char *path, char **out, size_t *len)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL, *nb;
	size_t n = 0, cap = 0, line_start = 0, lineno = 1, i;
	ssize_t got;

	if (fd < 0) {
		cli_err("--lines: cannot read %s: %s", path, strerror(errno));
		return EX_NOINPUT;
	}
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 262144;
			if ((nb = realloc(buf, cap + 1)) == NULL) {
				cli_err("--lines: out of memory");
				free(buf);
				if (fd != 0)
					close(fd);
				return EX_OSERR;
			}
			buf = nb;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cli_err("--lines: cannot read %s: %s", path,
			        strerror(errno));
			break;
		}
		if (got == 0) {
			if (fd != 0)
				close(fd);
			buf[n] = '\0';
			*out = buf;
			*len = n;
			return 0;
		}
		for (i = n; i < n + (size_t)got; i++)
			if (buf[i] == '\n') {
				line_start = i + 1;
				lineno++;
			}
		n += (size_t)got;
		if (n - line_start > (size_t)SKED_MAX_PAYLOAD + 1) {
			cli_err("--lines: line %zu of %s is longer than a "
			        "payload may be (%d bytes, SKED_MAX_PAYLOAD)",
			        lineno, path, SKED_MAX_PAYLOAD);
			free(buf);
			if (fd != 0)
				close(fd);
			return EX_DATAERR;
		}
		if (n > LINES_MAX) {
			cli_err("--lines: %s holds more than %zu bytes; "
			        "enqueue "
			        "it in parts",
			        path, LINES_MAX);
			free(buf);
			if (fd != 0)
				close(fd);
			return EX_DATAERR;
		}
	}
	free(buf);
	if (fd != 0)
		close(fd);
	return EX_NOINPUT;
}

/* enqueue_lines's wait_ms when --wait is not given */
#define NO_WAIT INT64_MIN

/* Split buf into lines; a final newline does not make an empty line. */
static int
split_lines(char *buf, size_t len, char ***lines, size_t **lens, size_t *n)
{
	size_t cap = 0, i = 0, start = 0;

	*n = 0;
	*lines = NULL;
	*lens = NULL;
	while (start < len) {
		char *nl = memchr(buf + start, '\n', len - start);
		size_t end = nl ? (size_t)(nl - buf) : len;
		if (i == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			char **l = realloc(*lines, ncap * sizeof *l);
			size_t *s;
			if (l == NULL)
				return -1;
			*lines = l;
			s = realloc(*lens, ncap * sizeof *s);
			if (s == NULL)
				return -1;
			*lens = s;
			cap = ncap;
		}
		buf[end] = '\0';
		(*lines)[i] = buf + start;
		(*lens)[i] = end - start;
		i++;
		start = end + 1;
	}
	*n = i;
	return 0;
}

static void note_run_at(struct cli *c, int64_t id, const sked_enqueue_opts *eo);

/* --after ID[,ID…] (repeatable): appended to *ids (n of them). A value
 * that is not a task id is bad data: one line, EX_DATAERR, nothing
 * written. */
static int
parse_after(const char *arg, int64_t **ids, size_t *n)
{
	const char *s = arg;
	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (s[0] < '0' || s[0] > '9' || errno == ERANGE || v <= 0 ||
		    (*end != ',' && *end != '\0')) {
			cli_err("--after: '%s' is not a list of task ids", arg);
			return EX_DATAERR;
		}
		int64_t *m = realloc(*ids, sizeof *m * (*n + 1));
		if (!m) {
			cli_err("--after: out of memory");
			return EX_OSERR;
		}
		*ids = m;
		m[(*n)++] = v;
		if (*end == '\0')
			return 0;
		s = end + 1;
	}
}

static int
enqueue_lines(struct cli *c, const char *kind, const char *path,
              const sked_enqueue_opts *eo, int64_t wait_ms)
{
	char *buf = NULL, **lines = NULL;
	size_t len = 0, *lens = NULL, n = 0, i;
	int64_t *ids = NULL;
	int ex, rc;

	/* each line is checked as it is read (read_lines_file), and again
	 * by the library against SKED_MAX_PAYLOAD */
	if ((ex = read_lines_file(path, &buf, &len)) != 0)
		return ex;
	if (split_lines(buf, len, &lines, &lens, &n) != 0 ||
	    (n > 0 && (ids = calloc(n, sizeof *ids)) == NULL)) {
		cli_err("--lines: out of memory");
		ex = EX_OSERR;
		goto out;
	}
	if ((ex = cli_open(c)) != 0)
		goto out;
	if (n > 0) {
		rc = sked_enqueue_many(c->h, kind, n,
		                       (const char *const *)lines, lens, eo,
		                       ids);
		if (rc != SKED_OK) {
			ex = cli_fail(c->h, rc, "enqueue %s (%zu tasks)", kind,
			              n);
			goto out;
		}
	}
	if (n > 0)
		note_run_at(c, ids[0], eo);
	if (wait_ms != NO_WAIT) {
		/* --wait: the wait's lines say the ids */
		ex = n > 0 ? cli_wait_ids(c, ids, n, wait_ms) : EX_OK;
	} else if (c->json) {
		json_t *arr = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(arr, json_integer(ids[i]));
		ex = cli_json_print(json_pack("{s:o}", "ids", arr));
	} else {
		for (i = 0; i < n; i++)
			printf("%" PRId64 "\n", ids[i]);
	}
out:
	free(ids);
	free(lines);
	free(lens);
	free(buf);
	return ex;
}

/* --graph FILE: the whole workflow in one transaction (sked_enqueue_graph,
 * docs/workflows.md); one line "NAME ID" a task in the file's order, or
 * with --json {"name": id, …}. A file that is not a graph is one line
 * and EX_DATAERR, before the database is opened. A task without its own
 * "traceparent" gets TRACEPARENT from the environment, as `enqueue` does. */
static int
enqueue_graph(struct cli *c, const char *path, const char *traceparent)
{
	struct cli_graph g;
	json_error_t je;
	json_t *root;
	char *buf = NULL, err[512];
	size_t len = 0, i;
	int64_t *ids = NULL;
	int ex, rc;

	if ((ex = cli_read_file("--graph", path, SKED_MAX_GRAPH_BYTES, &buf,
	                        &len)) != 0)
		return ex;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!root) {
		cli_err("--graph: %s is not JSON: %s (line %d, column %d)",
		        path, je.text, je.line, je.column);
		return EX_DATAERR;
	}
	if ((rc = cli_graph_parse(root, &g, err, sizeof err)) != 0) {
		cli_err("--graph: %s: %s", path, err);
		json_decref(root);
		return rc == -2 ? EX_OSERR : EX_DATAERR;
	}
	for (i = 0; i < g.n; i++)
		if (!g.opts[i].traceparent)
			g.opts[i].traceparent = traceparent;
	if (!(ids = calloc(g.n, sizeof *ids))) {
		cli_err("--graph: out of memory");
		ex = EX_OSERR;
		goto out;
	}
	if ((ex = cli_open(c)) != 0)
		goto out;
	rc = sked_enqueue_graph(c->h, g.tasks, g.n, ids);
	if (rc != SKED_OK) {
		ex = cli_fail(c->h, rc, "enqueue --graph %s (%zu tasks)", path,
		              g.n);
		goto out;
	}
	if (c->json) {
		ex = cli_json_print(cli_graph_ids_json(&g, ids));
	} else {
		for (i = 0; i < g.n; i++)
			printf("%s %" PRId64 "\n", g.tasks[i].name, ids[i]);
	}
out:
	free(ids);
	cli_graph_free(&g);
	json_decref(root);
	return ex;
}

/* What the user may not expect of a run-at, said on stderr (the task is
 * enqueued all the same): a --at before the database's now, which makes
 * the task due at once, and a --in of more than a year. The task's own
 * created and run-at times are the database's clock. */
#define FAR_AHEAD_MS (INT64_C(366) * 86400000)
static void
note_run_at(struct cli *c, int64_t id, const sked_enqueue_opts *eo)
{
	sked_task *t = NULL;
	char at[32], now[32];

	if (eo->run_at_ms == 0 && eo->delay_ms <= FAR_AHEAD_MS)
		return;
	if (sked_task_get(c->h, id, &t) != SKED_OK)
		return;
	if (eo->run_at_ms != 0 && t->run_at_ms < t->created_ms)
		fprintf(stderr,
		        "sked: note: --at %s is before the database's now "
		        "(%s): the task is due at once\n",
		        cli_time(t->run_at_ms, at, sizeof at),
		        cli_time(t->created_ms, now, sizeof now));
	else if (eo->run_at_ms == 0)
		fprintf(stderr,
		        "sked: note: --in puts the task more than a year "
		        "ahead, at %s\n",
		        cli_time(t->run_at_ms, at, sizeof at));
	sked_tasks_free(t, 1);
}

int
cmd_enqueue(struct cli *c, int argc, char **argv)
{
	enum {
		O_PAYLOAD = 1,
		O_LINES,
		O_QUEUE,
		O_PRIO,
		O_AT,
		O_IN,
		O_MAX,
		O_UNIQUE,
		O_CKEY,
		O_AFTER,
		O_ONFAIL,
		O_TRACE,
		O_USCOPE,
		O_UFOR,
		O_UREPLACE,
		O_WAIT,
		O_WAIT_TIMEOUT,
		O_TIMEOUT,
		O_GRAPH
	};
	static const struct option opts[] = {
	        {"payload", required_argument, NULL, O_PAYLOAD},
	        {"lines", required_argument, NULL, O_LINES},
	        {"queue", required_argument, NULL, O_QUEUE},
	        {"priority", required_argument, NULL, O_PRIO},
	        {"at", required_argument, NULL, O_AT},
	        {"in", required_argument, NULL, O_IN},
	        {"max-attempts", required_argument, NULL, O_MAX},
	        {"unique", required_argument, NULL, O_UNIQUE},
	        {"concurrency-key", required_argument, NULL, O_CKEY},
	        {"after", required_argument, NULL, O_AFTER},
	        {"on-parent-failure", required_argument, NULL, O_ONFAIL},
	        {"traceparent", required_argument, NULL, O_TRACE},
	        {"unique-scope", required_argument, NULL, O_USCOPE},
	        {"unique-for", required_argument, NULL, O_UFOR},
	        {"unique-replace", no_argument, NULL, O_UREPLACE},
	        {"wait", no_argument, NULL, O_WAIT},
	        {"wait-timeout", required_argument, NULL, O_WAIT_TIMEOUT},
	        {"timeout", required_argument, NULL, O_TIMEOUT},
	        {"graph", required_argument, NULL, O_GRAPH},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	const char *payload_arg = NULL, *lines = NULL, *graph = NULL, *kind;
	sked_enqueue_opts eo;
	char *payload = NULL;
	size_t payload_len = 0;
	int64_t *after = NULL;
	long long v;
	int64_t id = 0;
	int ch, ex, rc, existed = 0, have_at = 0, have_in = 0, scoped = 0;
	int wait = 0, others = 0;
	int64_t wait_ms = NO_WAIT, timeout_ms = -1;

	memset(&eo, 0, sizeof eo);
	/* the caller's trace context, as a tracing-aware parent passes it;
	 * --traceparent wins; the library checks either (exit 65) */
	eo.traceparent = getenv("TRACEPARENT");
	if (eo.traceparent && !eo.traceparent[0])
		eo.traceparent = NULL;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		others += ch != O_GRAPH && ch != CLI_OPT_JSON;
		switch (ch) {
		case O_PAYLOAD:
			payload_arg = optarg;
			break;
		case O_WAIT:
			wait = 1;
			break;
		case O_WAIT_TIMEOUT:
			if ((ex = cli_parse_duration("--wait-timeout", optarg,
			                             &timeout_ms)) != 0)
				return ex;
			break;
		case O_LINES:
			lines = optarg;
			break;
		case O_GRAPH:
			graph = optarg;
			break;
		case O_QUEUE:
			eo.queue = optarg;
			break;
		case O_PRIO:
			if ((ex = cli_parse_int("--priority", optarg, INT_MIN,
			                        INT_MAX, &v)) != 0)
				return ex;
			eo.priority = (int)v;
			break;
		case O_AT:
			if ((ex = cli_parse_time("--at", optarg,
			                         &eo.run_at_ms)) != 0)
				return ex;
			have_at = 1;
			break;
		case O_IN:
			if ((ex = cli_parse_duration("--in", optarg,
			                             &eo.delay_ms)) != 0)
				return ex;
			have_in = 1;
			break;
		case O_MAX:
			if ((ex = cli_parse_int("--max-attempts", optarg, 1,
			                        INT_MAX, &v)) != 0)
				return ex;
			eo.max_attempts = (int)v;
			break;
		case O_UNIQUE:
			eo.unique_key = optarg;
			break;
		case O_CKEY: /* the library checks it (docs/limits.md) */
			eo.concurrency_key = optarg;
			break;
		case O_TRACE:
			eo.traceparent = optarg;
			break;
		case O_USCOPE: /* docs/unique.md */
			if (strcmp(optarg, "live") == 0)
				eo.unique_scope = SKED_UNIQUE_LIVE;
			else if (strcmp(optarg, "pending") == 0)
				eo.unique_scope = SKED_UNIQUE_PENDING;
			else {
				free(after);
				return cli_usage(
				        "enqueue",
				        "--unique-scope: give live or "
				        "pending, not '%s' (a period is "
				        "--unique-for D)",
				        optarg);
			}
			scoped = 1;
			break;
		case O_UFOR:
			if ((ex = cli_parse_duration("--unique-for", optarg,
			                             &eo.unique_for_ms)) != 0) {
				free(after);
				return ex;
			}
			if (eo.unique_for_ms <= 0) {
				free(after);
				return cli_usage("enqueue",
				                 "--unique-for: give a period "
				                 "above 0");
			}
			break;
		case O_UREPLACE:
			eo.unique_replace = 1;
			break;
		case O_TIMEOUT: /* bounded by the kind's: docs/handlers.md */
			if ((ex = cli_parse_duration("--timeout", optarg,
			                             &eo.timeout_ms)) != 0) {
				free(after);
				return ex;
			}
			if (eo.timeout_ms <= 0) {
				free(after);
				return cli_usage("enqueue", "--timeout: give a "
				                            "duration above 0");
			}
			break;
		case O_AFTER:
			if ((ex = parse_after(optarg, &after, &eo.n_after)) !=
			    0) {
				free(after);
				return ex;
			}
			eo.after = after;
			break;
		case O_ONFAIL:
			if (cli_parent_failure_value(
			            optarg, &eo.on_parent_failure) != 0) {
				free(after);
				return cli_usage(
				        "enqueue",
				        "--on-parent-failure: give cancel "
				        "or ignore, not '%s'",
				        optarg);
			}
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "enqueue");
			return EX_OK;
		case CLI_OPT_JSON:
			c->json = 1;
			break;
		default:
			return cli_opt_error("enqueue", ch, argv);
		}
	}
	if (graph != NULL) {
		/* the file says everything: each task's kind, payload and
		 * options (a flag beside it would be ambiguous) */
		free(after);
		if (argc - optind > 0)
			return cli_usage(
			        "enqueue",
			        "--graph FILE takes no KIND: each task "
			        "names its own");
		if (others)
			return cli_usage("enqueue",
			                 "--graph FILE takes no other option "
			                 "than --json: each task carries its "
			                 "own");
		return enqueue_graph(c, graph, eo.traceparent);
	}
	if (argc - optind < 1)
		return cli_usage("enqueue", "missing the task KIND");
	if (argc - optind > 1)
		return cli_usage("enqueue", "unexpected argument '%s'",
		                 argv[optind + 1]);
	kind = argv[optind];
	if (have_at && have_in)
		return cli_usage("enqueue", "--at and --in conflict");
	if (lines != NULL && payload_arg != NULL)
		return cli_usage("enqueue", "--lines and --payload conflict");
	if (lines != NULL && eo.unique_key != NULL)
		return cli_usage("enqueue", "--lines and --unique conflict");
	if ((scoped || eo.unique_for_ms || eo.unique_replace) &&
	    eo.unique_key == NULL) {
		free(after);
		return cli_usage("enqueue",
		                 "--unique-scope, --unique-for and "
		                 "--unique-replace need --unique KEY");
	}
	if (scoped && eo.unique_for_ms) {
		free(after);
		return cli_usage("enqueue",
		                 "--unique-scope and --unique-for conflict (a "
		                 "key is held by state or for a period)");
	}
	/* debounce: a running task must not swallow the new payload, so
	 * a replace holds the key until the task starts unless told */
	if (eo.unique_replace && !scoped && !eo.unique_for_ms)
		eo.unique_scope = SKED_UNIQUE_PENDING;
	if (timeout_ms >= 0 && !wait) {
		free(after);
		return cli_usage("enqueue", "--wait-timeout needs --wait");
	}
	if (wait)
		wait_ms = timeout_ms;
	if (lines != NULL) {
		ex = enqueue_lines(c, kind, lines, &eo, wait_ms);
		free(after);
		return ex;
	}

	if (payload_arg != NULL && payload_arg[0] == '@') {
		if ((ex = cli_read_file("--payload", payload_arg + 1,
		                        SKED_MAX_PAYLOAD, &payload,
		                        &payload_len)) != 0)
			return ex;
	} else if (payload_arg != NULL && strcmp(payload_arg, "-") == 0) {
		if ((ex = cli_read_file("--payload", "-", SKED_MAX_PAYLOAD,
		                        &payload, &payload_len)) != 0)
			return ex;
	} else if (payload_arg != NULL) {
		payload_len = strlen(payload_arg);
	}
	if ((ex = cli_open(c)) != 0)
		goto out;
	rc = sked_enqueue(c->h, kind, payload ? payload : payload_arg,
	                  payload_len, &eo, &id, &existed);
	if (rc != SKED_OK) {
		ex = cli_fail(c->h, rc, "enqueue %s", kind);
		goto out;
	}
	note_run_at(c, id, &eo);
	if (wait) {
		ex = cli_wait_ids(c, &id, 1, wait_ms);
	} else if (c->json) {
		ex = cli_json_print(json_pack("{s:I, s:b, s:b}", "id",
		                              (json_int_t)id, "existed",
		                              existed != 0, "replaced",
		                              existed == SKED_ENQ_REPLACED));
	} else {
		printf("%" PRId64 "\n", id);
		if (existed == SKED_ENQ_REPLACED) {
			fflush(stdout);
			fprintf(stderr,
			        "note: task %" PRId64 " held unique key '%s' "
			        "and waited: it takes this payload and run "
			        "time (nothing new enqueued)\n",
			        id, eo.unique_key);
		} else if (existed) {
			fflush(stdout);
			fprintf(stderr,
			        "note: a task with unique key '%s' already "
			        "existed: %" PRId64 " (nothing enqueued)\n",
			        eo.unique_key, id);
		}
	}
out:
	free(payload);
	free(after);
	return ex;
}
