/*
 * main.c — the `sked` program's entry: global flags, the precedence of
 * settings and the command table (its help text is printed by help.c,
 * the database opened by open.c).
 *
 * Layer: the command-line program, a client of <sked.h> only. Global
 * flags come before the command name:
 *   sked [--db URL] [--config FILE] [--strategy S] [--json] COMMAND …
 * Each setting is taken from the flag, else the environment
 * (SKED_DATABASE_URL, SKED_CONFIG, SKED_STRATEGY), else the config file,
 * else the default. Commands live in cmd_*.c and parse their own flags;
 * the library does the work. A command not written yet is an entry with
 * no function: it answers "not available yet" with EX_UNAVAILABLE, so
 * adding it later is one function and one line here.
 */
#include "base/cli.h"
#include "bench/bench.h"
#include "cmd/cmd.h"
#include "demo/demo.h"
#include "serve/serve.h"
#include "web/dashboard/dashboard.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

static const struct cli_cmd cron_cmds[] = {
        {"next", cmd_cron_next, NULL,
         "cron next EXPR [--tz TZ] [--from TIME] [--count N]",
         "print the next fire instants of a cron expression",
         "  EXPR          one argument: quote it (5 fields, 6 with leading\n"
         "                seconds, or an @alias); put -- before one that\n"
         "                starts with '-'\n"
         "  --tz TZ       IANA time zone of the expression (default UTC)\n"
         "  --from TIME   start after this ISO-8601 time, with its zone\n"
         "                (default: now)\n"
         "  --count N     how many instants, 1 to 1000 (default 5)\n",
         0},
        {"add", cmd_cron_add, NULL,
         "cron add NAME EXPR KIND [--tz TZ] [--payload …] [--queue Q] "
         "[--priority N]\n"
         "                [--max-attempts N] [--misfire P] [--overlap P]\n"
         "                [--unique KEY [--unique-scope S | --unique-for D] "
         "[--unique-replace]]",
         "add a named schedule, or replace its definition",
         "  EXPR               one argument: quote it (5 fields, 6 with "
         "seconds, @alias)\n"
         "  --tz TZ            IANA time zone of the expression (default "
         "UTC)\n"
         "  --payload P        each task's payload: TEXT, @FILE or - "
         "(stdin)\n"
         "  --queue Q          queue of its tasks (default 'default')\n"
         "  --priority N       priority of its tasks (default 0)\n"
         "  --max-attempts N   attempts per task (default 5)\n"
         "  --misfire P        fire-once (default), fire-all or skip: "
         "fires missed\n"
         "                     while no worker ran\n"
         "  --overlap P        allow (default) or skip: a fire while the "
         "previous\n"
         "                     task is unfinished\n"
         "  --unique KEY       each fire enqueues with this unique key, as "
         "enqueue\n"
         "                     --unique does: a fire whose key is held "
         "is skipped\n"
         "  --unique-scope S   live (default) or pending: while the key "
         "is held\n"
         "  --unique-for D     the key is held for D from each enqueue\n"
         "  --unique-replace   a fire whose key a waiting task holds "
         "moves that task\n"
         "                     to now with the schedule's payload "
         "(debounce)\n"
         "  Workers fire schedules; see docs/schedules.md.\n",
         0},
        {"ls", cmd_cron_ls, NULL, "cron ls [--json]",
         "list schedules with their next fire", NULL, 0},
        {"rm", cmd_cron_rm, NULL, "cron rm NAME", "remove a schedule", NULL, 0},
        {"pause", cmd_cron_pause, NULL, "cron pause NAME",
         "stop a schedule firing until resumed", NULL, 0},
        {"resume", cmd_cron_resume, NULL, "cron resume NAME",
         "resume a paused schedule from its next fire after now", NULL, 0},
        {"run", cmd_cron_run, NULL, "cron run NAME",
         "enqueue the schedule's task now (one per call); prints its id",
         "  The task is the schedule's (kind, payload, queue, priority, "
         "attempts,\n"
         "  schedule name), even if the schedule is paused; its fire time "
         "is the\n"
         "  database's now, never a whole second, so it never takes the "
         "place of a\n"
         "  cron fire. The schedule's next fire and overlap policy are "
         "left alone.\n"
         "  With a unique key that a task holds, nothing is made and the "
         "holder's\n"
         "  id is printed, as enqueue --unique does.\n",
         0},
        {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

static const struct cli_cmd lock_cmds[] = {
        {"run", cmd_lock_run, NULL,
         "lock run NAME --ttl D [--wait D] [--at-least D] "
         "[--exit-zero-if-locked]\n"
         "                -- PROGRAM [ARG…]",
         "run a program while holding a cluster lock",
         "  --ttl D                 the lease, renewed every D/3 while "
         "PROGRAM runs\n"
         "  --wait D                when the lock is held, keep trying "
         "this long\n"
         "  --at-least D            keep the lock this long after "
         "taking it, even if\n"
         "                          PROGRAM ends sooner\n"
         "  --exit-zero-if-locked   exit 0, not 75, when the lock is "
         "held elsewhere\n"
         "  PROGRAM runs without a shell, with SKED_LOCK_NAME and "
         "SKED_FENCING_TOKEN\n"
         "  in its environment; sked exits with its status. If the lease "
         "cannot be\n"
         "  renewed, PROGRAM is killed before it runs out and sked exits "
         "70.\n",
         0},
        {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

static const struct cli_cmd queue_cmds[] = {
        {"set", cmd_queue_set, NULL,
         "queue set QUEUE [--concurrency N|none] [--per-key N|none] "
         "[--rate N/DURATION|none] [--fair on|off]\n"
         "                [--weight KEY=N|default]…",
         "set a queue's cluster-wide limits",
         "  --concurrency N     at most N of its tasks running at once, "
         "across every\n"
         "                      worker of the cluster\n"
         "  --per-key N         at most N running per concurrency key "
         "(the key\n"
         "                      a task was enqueued with); 1 makes each "
         "key a mutex\n"
         "  --rate N/DURATION   at most N task starts in any window of "
         "DURATION\n"
         "                      (sliding, on the database clock): 100/1m, "
         "20/1s\n"
         "  --fair on|off       claims take the queue's tasks "
         "round-robin across\n"
         "                      their concurrency keys (tasks without "
         "one are a key)\n"
         "  --weight KEY=N      in a fair queue, KEY takes N turns a "
         "round (1 to 100;\n"
         "                      default or 1 removes it); repeat for more "
         "keys\n"
         "  none                removes that limit; a flag not given "
         "keeps it.\n"
         "  See docs/limits.md for what each limit guarantees.\n",
         0},
        {"ls", cmd_queue_ls, NULL, "queue ls",
         "each queue's limits, how much of each is in use, and whether "
         "it is paused",
         NULL, 0},
        {"pause", cmd_queue_pause, NULL, "queue pause QUEUE",
         "stop every worker of the cluster claiming the queue's tasks",
         "  Tasks already running finish normally; enqueueing goes on. "
         "Workers stop\n"
         "  claiming within 2 s (tasks a worker had claimed ahead still "
         "run);\n"
         "  --until-empty counts no paused task as outstanding. See "
         "docs/limits.md.\n",
         0},
        {"resume", cmd_queue_resume, NULL, "queue resume QUEUE",
         "let workers claim a paused queue's tasks again (within 2 s)", NULL,
         0},
        {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

/* the filters `cancel` and `retry` share */
#define STEER_FILTER_HELP                                                      \
	"  --kind K          only tasks of kind K\n"                           \
	"  --queue Q         only tasks of queue Q\n"                          \
	"  --older-than D    only tasks created more than D ago (database "    \
	"clock)\n"                                                             \
	"  --yes             act; without it, only print how many tasks "      \
	"match\n"                                                              \
	"  A filter works in batches of 500 tasks, each its own short "        \
	"transaction"

static const struct cli_cmd commands[] = {
        {"init", cmd_init, NULL, "init", "create or upgrade the schema",
         "  Every command that uses the database creates or upgrades the\n"
         "  schema on first use; init does only that, explicitly.\n",
         0},
        {"info", cmd_info, NULL, "info",
         "database product, version, claim strategy and why, schema version",
         NULL, 0},
        {"enqueue", cmd_enqueue, NULL,
         "enqueue KIND [--payload TEXT|@FILE|-] [--queue Q] [--priority N]\n"
         "             [--at TIME|--in DURATION] [--max-attempts N] "
         "[--unique KEY]\n"
         "             [--unique-scope live|pending|--unique-for D] "
         "[--unique-replace]\n"
         "             [--timeout D]\n"
         "             [--concurrency-key KEY] [--after ID[,ID…]]\n"
         "             [--on-parent-failure cancel|ignore] [--traceparent TP]\n"
         "             [--wait [--wait-timeout D]]\n"
         "       sked enqueue KIND --lines FILE|- [--queue Q] [--priority N] "
         "[…]\n"
         "       sked enqueue --graph FILE|- [--json]",
         "add a task (or one per input line, or a workflow); prints the "
         "id(s)",
         "  --payload P       the payload: TEXT, @FILE for a file's bytes, or\n"
         "                    - for stdin (at most SKED_MAX_PAYLOAD, 1 MiB)\n"
         "  --lines F         one task per line of F (- for stdin), all in "
         "one\n"
         "                    transaction; the newline is not part of it\n"
         "  --graph F         a workflow of F (- for stdin; JSON: tasks with "
         "names,\n"
         "                    kinds and 'after' by name or id) in one "
         "transaction:\n"
         "                    all or nothing; prints NAME ID a task "
         "(docs/workflows.md)\n"
         "  --queue Q         queue name (default 'default')\n"
         "  --priority N      higher runs first (default 0)\n"
         "  --at TIME         run at this ISO-8601 time, zone included\n"
         "                    (2026-03-08T07:30:00Z, …T08:30:00+01:00)\n"
         "  --in DURATION     run this long from now (database clock)\n"
         "  --max-attempts N  attempts before the task is dead (default 5)\n"
         "  --unique KEY      if a task holds KEY, print its id instead "
         "(held while\n"
         "                    the task is live: pending, retrying, running "
         "or blocked)\n"
         "  --unique-scope S  live (default) or pending: held until the "
         "task starts\n"
         "  --unique-for D    held for D from the holder's enqueue, "
         "whatever its state\n"
         "  --unique-replace  a holder that has not started takes this "
         "payload and\n"
         "                    run time (debounce; scope pending unless "
         "given)\n"
         "  --timeout D       stop its handler after D (or the kind's "
         "timeout, if\n"
         "                    shorter); every task of --lines\n"
         "  --concurrency-key KEY  the key the queue's per-key limit counts "
         "it under\n"
         "                    (see sked help queue set)\n"
         "  --after IDS       wait (blocked) until these tasks have ended;\n"
         "                    repeatable (docs/workflows.md)\n"
         "  --on-parent-failure P  cancel (default): a parent that ends dead\n"
         "                    or cancelled cancels this task and what waits\n"
         "                    on it; ignore: it counts as ended\n"
         "  --traceparent TP  a W3C trace context (00-<32 hex>-<16 hex>-<2 "
         "hex>) the\n"
         "                    task keeps and its handler receives as "
         "TRACEPARENT;\n"
         "                    default: TRACEPARENT from the environment\n"
         "  --wait            then wait for the task(s) to end, print and "
         "exit as\n"
         "                    sked wait does\n"
         "  --wait-timeout D  with --wait: give up waiting after D (the "
         "task's own\n"
         "                    --timeout is how long its handler may run)\n",
         0},
        {"list", cmd_list, NULL,
         "list [--status S] [--queue Q] [--kind K] [--limit N]",
         "list tasks, newest first",
         "  --status S  pending, running, succeeded, dead, retry, cancelled "
         "or\n"
         "              blocked (waiting for its parents); running shows "
         "each\n"
         "              task's node, start, elapsed time and progress\n"
         "  --limit N   at most N tasks (default 100)\n",
         0},
        {"show", cmd_show, NULL, "show ID",
         "a task, its result, its parents and children, and all its "
         "attempts",
         "  A running task also shows its start, how long it has run and "
         "its\n"
         "  handler's latest progress report.\n",
         0},
        {"wait", cmd_wait, NULL, "wait ID… [--timeout D] [--json]",
         "block until the tasks end; print each outcome, exit with the "
         "worst",
         "  Prints one line a task: ID STATUS and its result (succeeded) "
         "or its last\n"
         "  error (dead, cancelled); --json: an array of the tasks as show "
         "--json\n"
         "  prints them (without the attempts). At most 1000 ids.\n"
         "  --timeout D  give up after D (30s, 5m; default: no bound)\n"
         "  Exit: 0 all succeeded, 68 one ended dead, 67 one was "
         "cancelled (and none\n"
         "  dead), 75 the time ran out first (the tasks as they are now "
         "are printed),\n"
         "  65 an id of no task. PostgreSQL wakes the waiter when the task "
         "ends;\n"
         "  other databases are read with a back-off from 25 ms to 1 s.\n",
         0},
        {"events", cmd_events, NULL,
         "events [--kind K] [--queue Q] [--after POS] [--follow] "
         "[--limit N] [--settle D]",
         "print task ends, retried attempts and starts as JSON lines",
         "  One JSON object a line: pos, type (end, attempt, start), id, "
         "kind, queue,\n"
         "  status, outcome, attempt, node_id, at, started_at, "
         "finished_at, error and\n"
         "  result (previews of at most 200 bytes), in order of time.\n"
         "  --after POS  from after this position (a line's pos; now: "
         "from now);\n"
         "               default: from the oldest kept, or from now with "
         "--follow\n"
         "  --follow     keep reading (a back-off from 100 ms to 1 s "
         "while idle)\n"
         "  --limit N    stop after about N events (default 1000 "
         "without --follow)\n"
         "  --settle D   show events once they are D old (default 2s): a "
         "transaction\n"
         "               that ends a task must commit within D "
         "(docs/operations.md)\n",
         0},
        {"cancel", cmd_cancel, NULL,
         "cancel ID\n"
         "       sked cancel [--status S] [--kind K] [--queue Q] "
         "[--older-than D] [--yes]",
         "cancel a pending, retrying or running task, or every one a "
         "filter matches",
         "  --status S        pending, retry or running (default: pending "
         "and retry;\n"
         "                    running tasks only when asked "
         "for)\n" STEER_FILTER_HELP ".\n",
         0},
        {"retry", cmd_retry, NULL,
         "retry [--with-dependents] ID\n"
         "       sked retry [--status S] [--kind K] [--queue Q] "
         "[--older-than D] [--yes]",
         "run a dead, cancelled or waiting task again now, or every one a "
         "filter matches",
         "  --with-dependents also bring back the tasks its end "
         "cancelled (blocked\n"
         "                    until their parents succeed; "
         "docs/workflows.md)\n"
         "  --status S        dead (default), cancelled or "
         "retry\n" STEER_FILTER_HELP "\n"
         "  (of waiting tasks: one statement); a task whose unique key "
         "or schedule\n"
         "  fire a live task holds again stays ended, and sked exits 65 "
         "saying how\n"
         "  many.\n",
         0},
        {"worker", cmd_worker, NULL,
         "worker [--queues Q[:N],…] [--concurrency N] "
         "[--handler KIND=PROGRAM]…\n"
         "            [--node-id ID] [--lease D] [--poll D] [--grace D] "
         "[--timeout D]\n"
         "            [--retry-base D] [--retry-max D] [--prefetch auto|off|N] "
         "[--lanes N]\n"
         "            [--max-connections N] [--until-empty] [--wait-db "
         "D|forever] "
         "[--lock-wait-warn D|never]",
         "run tasks with handler programs until stopped",
         "  --queues Q[:N],…      queues to serve; N caps the slots for Q\n"
         "  --concurrency N       handler slots (default 4)\n"
         "  --handler KIND=PROG   run PROG for tasks of KIND: split on "
         "blanks,\n"
         "                        no shell; payload on stdin, a result\n"
         "                        to $SKED_TASK_RESULT_FILE (repeatable);\n"
         "                        KIND '*': every kind no other names\n"
         "  --node-id ID          this node's name (default HOST-PID-RANDOM)\n"
         "  --lease D             lease length (default 30s)\n"
         "  --poll D              idle poll interval (default 1s)\n"
         "  --grace D             on stop, time for running tasks (default "
         "30s)\n"
         "  --timeout D           default handler timeout (default none)\n"
         "  --retry-base D        retry backoff base (default 1s)\n"
         "  --retry-max D         retry backoff cap (default 1h)\n"
         "  --prefetch auto|off|N claim ahead of free slots: auto "
         "(default) adapts to\n"
         "                        the backlog and start rate, N holds N "
         "ahead, off none\n"
         "  --lanes N             claims in flight at once while there is "
         "a backlog,\n"
         "                        each on a connection of its own "
         "(default 2; 1 on\n"
         "                        SQLite and with several queues)\n"
         "  --max-connections N   at most N connections at once (2-1000;\n"
         "                        default no cap; idle it holds 2)\n"
         "  --until-empty         exit once nothing is due or running\n"
         "  --http ADDR:PORT      serve /metrics, /healthz and /readyz "
         "(docs/operations.md);\n"
         "                        SKED_METRICS_TOKEN in the environment "
         "makes /metrics\n"
         "                        want 'Authorization: Bearer TOKEN'\n"
         "  --lock-wait-warn D    log and count a wait on a schedule, lock "
         "or queue\n"
         "                        limit row longer than D, with its "
         "holder (default\n"
         "                        5s; never: off)\n"
         "  --wait-db D           at start, wait this long for a database "
         "that\n"
         "                        cannot be reached (default forever; 1m "
         "with\n"
         "                        --until-empty; 0: exit 69 at once)\n"
         "  SIGTERM/SIGINT: stop claiming and let running tasks finish;\n"
         "  a second signal gives them back at once. SIGHUP reloads the "
         "config\n"
         "  file's schedules and never stops the worker.\n",
         0},
        {"dashboard", cmd_dashboard, NULL,
         "dashboard [--listen ADDR:PORT] [--auth file:PATH|env:NAME] "
         "[--api-token file:PATH|env:NAME] [--read-only] [--csrf-rotate D]",
         "the web dashboard (127.0.0.1:8420 by default)",
         "  --listen ADDR:PORT  where to listen (default 127.0.0.1:8420); "
         "an address\n"
         "                      that is not loopback needs --auth\n"
         "  --auth SPEC         file:PATH or env:NAME holding user:password "
         "(basic\n"
         "                      auth) or a token (bearer, or any user name); "
         "also\n"
         "                      SKED_DASHBOARD_AUTH. Never the secret "
         "itself.\n"
         "  --api-token SPEC    file:PATH or env:NAME holding the token "
         "of the JSON\n"
         "                      API under /api/ (Authorization: Bearer "
         "TOKEN; at\n"
         "                      least 32 characters); without it /api/ "
         "answers 404.\n"
         "                      See docs/api.md\n"
         "  --read-only         show, never change: no forms, POST "
         "refused\n"
         "  --csrf-rotate D     how often a session's form token changes "
         "(default\n"
         "                      1h; the one before stays good until the "
         "next change)\n"
         "  GET /metrics serves the cluster-wide gauges for Prometheus, "
         "also while\n"
         "  no worker runs.\n",
         0},
        {"nodes", cmd_nodes, NULL, "nodes [--prune [--older-than D]]",
         "the worker nodes and their health",
         "  --prune          remove the rows of nodes whose heartbeat is "
         "older than\n"
         "                   --older-than D (default 1h) and that hold no "
         "task;\n"
         "                   workers do this for nodes silent for a day\n",
         0},
        {"prune", cmd_prune, NULL, "prune [--older-than D] [--status S]",
         "remove ended tasks, and their runs, past their retention",
         "  --older-than D   remove ended tasks that finished more than D "
         "ago;\n"
         "                   without it, each status's retention from the "
         "config\n"
         "                   file's [retention] (succeeded 7d, dead 30d, "
         "cancelled\n"
         "                   30d by default). Workers prune the same way "
         "by\n"
         "                   themselves, one node at a time.\n"
         "  --status S       only succeeded, dead or cancelled tasks\n",
         0},
        {"stats", cmd_stats, NULL, "stats",
         "task counts per queue and status, and the oldest due task's age",
         NULL, 0},
        {"cron", NULL, cron_cmds, "cron SUBCOMMAND …", "recurring schedules",
         NULL, 0},
        {"lock", NULL, lock_cmds, "lock SUBCOMMAND …", "cluster locks", NULL,
         0},
        {"queue", NULL, queue_cmds, "queue SUBCOMMAND …",
         "cluster-wide limits and pause of queues", NULL, 0},
        {"bench", cmd_bench, NULL,
         "bench [--tasks N] [--workers W] [--threads T] [--batch B]\n"
         "            [--latency-tasks M] [--latency-threads L] [--rate R]\n"
         "            [--poll D] [--prefetch N] [--lanes N] [--prefix P] "
         "[--timeout D] "
         "[--json]\n"
         "       bench --pattern baseline|fanout|fanin|chain|layered "
         "[--tasks N]\n"
         "            [--chain-length L] [--workers W] [--threads T] "
         "[--batch B] [--json]",
         "measure enqueue rate, throughput and pick-up latency, or a "
         "dependency graph",
         "  --tasks N            no-op tasks to enqueue and drain (20000)\n"
         "  --workers W          worker processes for the drain (1)\n"
         "  --threads T          handler threads per worker (10)\n"
         "  --batch B            tasks per sked_enqueue_many call (1000)\n"
         "  --latency-tasks M    tasks enqueued one at a time (300; 0: "
         "skip)\n"
         "  --latency-threads L  threads of the latency worker (10)\n"
         "  --rate R             latency tasks per second (100)\n"
         "  --poll D             the workers' idle poll (library default)\n"
         "  --prefetch N         the drain workers' --prefetch (0: their "
         "default, auto)\n"
         "  --lanes N            the workers' --lanes (their default: 2)\n"
         "  --prefix P           table prefix (default: a fresh one)\n"
         "  --timeout D          give up on a phase after D (5m)\n"
         "  --pattern P          instead: enqueue a dependency graph "
         "(baseline,\n"
         "                       fanout 1->N-1, fanin N-1->1, chain, "
         "layered 20 x N/20\n"
         "                       with 3 parents each), drain it, check it "
         "from the\n"
         "                       handlers' stamps (exit 70 if a task ran "
         "twice, never,\n"
         "                       or before a parent ended); --tasks "
         "defaults to 10000\n"
         "  --chain-length L     jobs of --pattern chain (1000)\n"
         "  See docs/performance.md for what each figure means.\n",
         0},
        {"demo", cmd_demo, NULL, "demo",
         "the showcase: 4 worker processes on a fresh SQLite database",
         "  Ignores --db, --config and --strategy: it always makes a new\n"
         "  SQLite database in a new temporary folder and prints its path.\n",
         CLI_CMD_NOCONFIG},
        {"help", NULL, NULL, "help [COMMAND]", "describe a command", NULL,
         CLI_CMD_NOCONFIG},
        {"__demo-handler", cmd_demo_handler, NULL, "__demo-handler LOG",
         "the demo's handler program", NULL, CLI_CMD_HIDDEN | CLI_CMD_NOCONFIG},
        {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

/* SIGPIPE is caught, not ignored, so that a program sked starts never
 * inherits it ignored (exec resets a caught signal to its default): a
 * write to a closed pipe then fails with EPIPE, and a listing whose reader
 * went away ends quietly with status 0. */
static volatile sig_atomic_t g_sigpipe;

static void
on_sigpipe(int sig)
{
	(void)sig;
	g_sigpipe = 1;
}

static void
catch_sigpipe(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigpipe;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPIPE, &sa, NULL);
}

static int
cmd_help(int argc, char **argv)
{
	const struct cli_cmd *t;
	char name[128];

	if (argc < 2) {
		cli_help_overview(stdout);
		return EX_OK;
	}
	t = cli_cmd_find(commands, argv[1]);
	if (t == NULL || (t->flags & CLI_CMD_HIDDEN))
		return cli_usage("help", "unknown command '%s'", argv[1]);
	if (argc > 2 && t->sub != NULL) {
		if (cli_cmd_find(t->sub, argv[2]) == NULL)
			return cli_usage("help", "unknown command '%s %s'",
			                 argv[1], argv[2]);
		snprintf(name, sizeof name, "%s %s", argv[1], argv[2]);
		cli_help(stdout, name);
	} else {
		cli_help(stdout, argv[1]);
	}
	return EX_OK;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

static int
dispatch(struct cli *c, const struct cli_cmd *t, int argc, char **argv)
{
	const struct cli_cmd *s;

	if (t->sub != NULL) {
		if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
		    strcmp(argv[1], "--help") == 0) {
			cli_help_one(argc < 2 ? stderr : stdout, t);
			return argc < 2 ? EX_USAGE : EX_OK;
		}
		s = cli_cmd_find(t->sub, argv[1]);
		if (s == NULL)
			return cli_usage(t->name, "unknown subcommand '%s'",
			                 argv[1]);
		if (s->fn == NULL) {
			cli_err("'%s %s' is not available yet", t->name,
			        s->name);
			return EX_UNAVAILABLE;
		}
		return s->fn(c, argc - 1, argv + 1);
	}
	if (t->fn == NULL) {
		cli_err("'%s' is not available yet", t->name);
		return EX_UNAVAILABLE;
	}
	return t->fn(c, argc, argv);
}

/* SKED_LOG and the log format: a value sked would ignore is refused. */
static int
setup_log(const char *format)
{
	const char *lv = env("SKED_LOG");

	if (lv && sked_log_level_from_name(lv) < 0) {
		cli_err("SKED_LOG: '%s' is not error, warn, info or debug", lv);
		return EX_CONFIG;
	}
	if (!format)
		format = env("SKED_LOG_FORMAT");
	if (format && sked_set_log_format(format) != SKED_OK) {
		cli_err("%s: '%s' is not text or json",
		        env("SKED_LOG_FORMAT") == format ? "SKED_LOG_FORMAT"
		                                         : "--log-format",
		        format);
		return format == env("SKED_LOG_FORMAT") ? EX_CONFIG : EX_USAGE;
	}
	cli_err_json(format && strcasecmp(format, "json") == 0);
	return 0;
}

/* --db-file PATH: the URL is the file's first line, so that a password
 * never shows in `ps` (which shows --db). */
static int
read_db_file(const char *path, char **url)
{
	struct stat st;
	size_t len = 0;
	int ex;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		cli_err("--db-file: %s is not a regular file", path);
		return EX_NOINPUT;
	}
	if ((ex = cli_read_file("--db-file", path, 4096, url, &len)) != 0)
		return ex;
	(*url)[strcspn(*url, "\r\n")] = '\0';
	if (!(*url)[0]) {
		cli_err("--db-file: %s holds no URL on its first line", path);
		free(*url);
		*url = NULL;
		return EX_CONFIG;
	}
	if (st.st_mode & 077)
		sked_log(SKED_LOG_WARN,
		         "--db-file: %s can be read by other users (chmod 600 "
		         "it)",
		         path);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"db", required_argument, NULL, 'd'},
	        {"db-file", required_argument, NULL, 'D'},
	        {"config", required_argument, NULL, 'c'},
	        {"strategy", required_argument, NULL, 's'},
	        {"json", no_argument, NULL, 'j'},
	        {"log-format", required_argument, NULL, 'L'},
	        {"help", no_argument, NULL, 'h'},
	        {"version", no_argument, NULL, 'V'},
	        {NULL, 0, NULL, 0},
	};
	const char *db = NULL, *config = NULL, *strategy = NULL,
	           *db_file = NULL;
	char *db_text = NULL;
	const char *log_format = NULL;
	const struct cli_cmd *t;
	struct cli c;
	int ch, ex, closed = 0;

	memset(&c, 0, sizeof c);
	catch_sigpipe();
	cli_help_table(commands);
	opterr = 0;
	/* '+': stop at the command name; its flags are its own. */
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			db = optarg;
			break;
		case 'D':
			db_file = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 's':
			strategy = optarg;
			break;
		case 'j':
			c.json = 1;
			break;
		case 'L':
			log_format = optarg;
			break;
		case 'h':
			cli_help_overview(stdout);
			return EX_OK;
		case 'V':
			printf("sked %s (schema version %d)\n", SKED_VERSION,
			       SKED_SCHEMA_VERSION);
			return EX_OK;
		default:
			return cli_opt_error(NULL, ch, argv);
		}
	}
	argc -= optind;
	argv += optind;
	if ((ex = setup_log(log_format)) != 0)
		return ex;
	if (argc < 1) {
		cli_help_overview(stderr);
		return EX_USAGE;
	}
	if (db && db_file)
		return cli_usage(NULL, "--db and --db-file conflict");
	t = cli_cmd_find(commands, argv[0]);
	if (t == NULL)
		return cli_usage(NULL, "unknown command '%s'", argv[0]);
	if (db_file && (ex = read_db_file(db_file, &db_text)) != 0)
		return ex;
	if (db_text)
		db = db_text;
	if (strcmp(t->name, "help") == 0)
		return cmd_help(argc, argv);

	if (!(t->flags & CLI_CMD_NOCONFIG)) {
		if (config == NULL)
			config = env("SKED_CONFIG");
		if (config != NULL &&
		    (ex = cli_config_load(config, &c.cfg)) != 0) {
			cli_config_free(&c.cfg);
			return ex;
		}
	}
	c.url = db ? db : env("SKED_DATABASE_URL");
	if (c.url == NULL)
		c.url = c.cfg.database ? c.cfg.database : CLI_DEFAULT_URL;
	c.strategy = strategy ? strategy : env("SKED_STRATEGY");
	if (c.strategy == NULL)
		c.strategy = c.cfg.strategy;
	c.prefix = c.cfg.prefix;

	ex = dispatch(&c, t, argc, argv);

	sked_close(c.h);
	cli_config_free(&c.cfg);
	free(db_text);
	/* `sked list | head`: the reader closed the pipe; it has what it
	 * wanted, and that is a normal end, not an error. (The MariaDB
	 * client library sets SIGPIPE to ignored, so EPIPE tells too.) */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		closed = g_sigpipe || cli_broken_pipe();
		if (ex == EX_OK && !closed) {
			cli_err("cannot write to stdout");
			ex = EX_IOERR;
		}
	}
	if ((closed || g_sigpipe) && ex == EX_IOERR)
		ex = EX_OK;
	return ex;
}
