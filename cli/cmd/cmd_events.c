/*
 * cmd_events.c — `sked events [--kind K] [--queue Q] [--after POS]
 * [--follow] [--limit N] [--settle D]`: the events feed (task ends,
 * attempts that did not end their task, starts) as JSON lines.
 *
 * Layer: the command-line program, a client of <sked.h> only; the feed
 * is the library's (sked_events_read, src/model/events.c). Each line's
 * "pos" is where to resume after it (--after POS): the event's time, or
 * one millisecond less when more events of that millisecond follow in
 * the page, so a reader killed anywhere misses nothing when it resumes
 * from the last line it printed (it may see the rest of one millisecond
 * twice). --follow reads again with a back-off from 100 ms to 1 s while
 * nothing comes (docs/operations.md, "Events", says why no NOTIFY).
 */
#include "cmd/cmd.h"
#include "view/view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#define FOLLOW_MIN_MS 100
#define FOLLOW_MAX_MS 1000
#define PAGE          500

static void
nap(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
	                      .tv_nsec = (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* Print a page; 0 or an exit code. */
static int
print_page(const sked_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* more of this millisecond follow: resume before it */
		json_t *o = cli_event_json(
		        &e[i], i + 1 < n && e[i + 1].at_ms == e[i].at_ms);
		char *s = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (!s) {
			cli_err("events: out of memory");
			return EX_OSERR;
		}
		int bad = puts(s) < 0;
		free(s);
		if (bad)
			return cli_broken_pipe() ? EX_OK : EX_IOERR;
	}
	if (fflush(stdout) != 0)
		return cli_broken_pipe() ? EX_OK : EX_IOERR;
	return 0;
}

int
cmd_events(struct cli *c, int argc, char **argv)
{
	enum { O_KIND = 0x200, O_QUEUE, O_AFTER, O_FOLLOW, O_LIMIT, O_SETTLE };
	static const struct option opts[] = {
	        {"kind", required_argument, NULL, O_KIND},
	        {"queue", required_argument, NULL, O_QUEUE},
	        {"after", required_argument, NULL, O_AFTER},
	        {"follow", no_argument, NULL, O_FOLLOW},
	        {"limit", required_argument, NULL, O_LIMIT},
	        {"settle", required_argument, NULL, O_SETTLE},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	sked_event_filter f = {0};
	long long after = -2, limit = -1, v;
	int follow = 0, ch, ex;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_KIND:
			if (!sked_name_valid(optarg))
				return cli_usage("events",
				                 "--kind: '%s' is not a name",
				                 optarg);
			f.kind = optarg;
			break;
		case O_QUEUE:
			if (!sked_name_valid(optarg))
				return cli_usage("events",
				                 "--queue: '%s' is not a name",
				                 optarg);
			f.queue = optarg;
			break;
		case O_AFTER:
			if (strcmp(optarg, "now") == 0)
				after = -1;
			else if ((ex = cli_parse_int("--after", optarg, 0,
			                             INT64_MAX, &after)) != 0)
				return ex;
			break;
		case O_FOLLOW:
			follow = 1;
			break;
		case O_LIMIT:
			if ((ex = cli_parse_int("--limit", optarg, 1, INT64_MAX,
			                        &v)) != 0)
				return ex;
			limit = v;
			break;
		case O_SETTLE:
			if ((ex = cli_parse_duration("--settle", optarg,
			                             &f.settle_ms)) != 0)
				return ex;
			if (f.settle_ms <= 0)
				return cli_usage(
				        "events",
				        "--settle: give a duration > 0");
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "events");
			return EX_OK;
		case CLI_OPT_JSON:
			break; /* JSON lines always */
		default:
			return cli_opt_error("events", ch, argv);
		}
	}
	if (optind < argc)
		return cli_usage("events", "unexpected argument '%s'",
		                 argv[optind]);
	/* by default: what is kept (a listing), or from now (--follow) */
	if (after == -2)
		after = follow ? -1 : 0;
	if (limit < 0 && !follow)
		limit = 1000;
	if ((ex = cli_open_existing(c)) != 0)
		return ex;
	int64_t pos = after, wait = FOLLOW_MIN_MS;
	long long printed = 0;
	for (;;) {
		size_t want = PAGE;
		if (limit > 0 && (long long)want > limit - printed)
			want = (size_t)(limit - printed);
		sked_event *e = NULL;
		size_t n = 0;
		int64_t next = pos;
		int rc = sked_events_read(c->h, pos, &f, want, &e, &n, &next);
		if (rc != SKED_OK) {
			if (!follow)
				return cli_fail(c->h, rc, "events");
			/* a follower outlives a restart of the database */
			sked_log(SKED_LOG_WARN, "events: %s (again in %d ms)",
			         sked_errmsg(c->h), FOLLOW_MAX_MS);
			nap(FOLLOW_MAX_MS);
			continue;
		}
		/* past the limit only by the events of one millisecond */
		ex = print_page(e, n);
		sked_events_free(e, n);
		if (ex != 0)
			return ex;
		if (cli_broken_pipe())
			return EX_OK;
		printed += (long long)n;
		pos = next;
		if (limit > 0 && printed >= limit)
			return EX_OK;
		if (n > 0) {
			wait = FOLLOW_MIN_MS;
			continue;
		}
		if (!follow)
			return EX_OK;
		nap(wait);
		wait = wait * 2 > FOLLOW_MAX_MS ? FOLLOW_MAX_MS : wait * 2;
	}
}
