/*
 * help.c — `sked help` and every command's --help: the usage text of the
 * command table.
 *
 * Layer: the command-line program, below the commands. The table itself
 * (with each command's function) is main.c's; main.c hands it here once
 * at start (cli_help_table), so that a command printing its own usage
 * calls down into this file and never up into main.c.
 */
#include "base/cli.h"

#include <stdio.h>
#include <string.h>

static const struct cli_cmd *help_table;

void
cli_help_table(const struct cli_cmd *commands)
{
	help_table = commands;
}

const struct cli_cmd *
cli_cmd_find(const struct cli_cmd *table, const char *name)
{
	for (; table->name != NULL; table++)
		if (strcmp(table->name, name) == 0)
			return table;
	return NULL;
}

void
cli_help_overview(FILE *f)
{
	const struct cli_cmd *t;

	fprintf(f,
	        "usage: sked [--db URL] [--config FILE] [--strategy S] "
	        "[--json] [--log-format F] COMMAND …\n"
	        "\n"
	        "A distributed task scheduler on the database you already "
	        "run.\n"
	        "\n"
	        "Global flags (before the command):\n"
	        "  --db URL         sqlite:PATH, postgres://…, mysql://…, "
	        "mariadb://…,\n"
	        "                   odbc:CONNECTION-STRING (default %s);\n"
	        "                   `ps` shows it, password included: use "
	        "--db-file\n"
	        "  --db-file PATH   read the URL from the first line of PATH "
	        "(chmod 600)\n"
	        "  --config FILE    an INI file (see docs/cli.md)\n"
	        "  --strategy S     auto, skip-locked, readpast, optimistic "
	        "or sqlite\n"
	        "  --json           machine-readable output\n"
	        "  --log-format F   text (default) or json: one object per "
	        "log line\n"
	        "  -h, --help       this help;  --version  the version\n"
	        "Environment: SKED_DATABASE_URL, SKED_CONFIG, SKED_STRATEGY "
	        "stand for the\n"
	        "flags. Precedence: flag, environment, config file, "
	        "default.\n"
	        "Also read: SKED_LOG (error, warn, info or debug; default "
	        "info),\n"
	        "SKED_LOG_FORMAT (text or json), SKED_DASHBOARD_AUTH "
	        "(dashboard --auth),\n"
	        "SKED_SQLITE_BUSY_MS (SQLite's busy timeout), SKED_TRACE_SQL=1 "
	        "(log every\n"
	        "statement), PGCONNECT_TIMEOUT (libpq). Handlers get "
	        "SKED_TASK_*, and\n"
	        "never sked's secrets (SKED_DATABASE_URL, "
	        "SKED_HTTP_AUTHORIZATION*, SKED_HOOK_SECRET, "
	        "PGPASSWORD,\n"
	        "...) unless SKED_HANDLER_ENV=NAME,... names them.\n"
	        "\n"
	        "Commands:\n",
	        CLI_DEFAULT_URL);
	for (t = help_table; t->name != NULL; t++) {
		const struct cli_cmd *s;
		if (t->flags & CLI_CMD_HIDDEN)
			continue;
		if (t->sub == NULL) {
			fprintf(f, "  %-12s %s\n", t->name, t->summary);
			continue;
		}
		for (s = t->sub; s->name != NULL; s++) {
			char name[32];
			snprintf(name, sizeof name, "%s %s", t->name, s->name);
			fprintf(f, "  %-12s %s\n", name, s->summary);
		}
	}
	fprintf(f, "\nRun 'sked help COMMAND' for a command's flags.\n");
}

void
cli_help_one(FILE *f, const struct cli_cmd *t)
{
	const struct cli_cmd *s;

	if (t->sub != NULL) {
		fprintf(f, "%s:\n", t->summary);
		for (s = t->sub; s->name != NULL; s++)
			fprintf(f, "  sked %s\n", s->usage);
		return;
	}
	fprintf(f, "usage: sked %s\n\n%s.\n", t->usage, t->summary);
	if (t->details != NULL)
		fprintf(f, "\n%s", t->details);
}

void
cli_help(FILE *f, const char *name)
{
	char first[64];
	const char *sp = strchr(name, ' ');
	const struct cli_cmd *t;

	snprintf(first, sizeof first, "%.*s",
	         (int)(sp ? (size_t)(sp - name) : strlen(name)), name);
	t = cli_cmd_find(help_table, first);
	if (t != NULL && sp != NULL && t->sub != NULL) {
		const struct cli_cmd *s = cli_cmd_find(t->sub, sp + 1);
		if (s != NULL)
			t = s;
	}
	if (t == NULL)
		cli_help_overview(f);
	else
		cli_help_one(f, t);
}
