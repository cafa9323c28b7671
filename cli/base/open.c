/*
 * open.c — opening the database for a command: at once, read-only on an
 * existing file, or waiting for a server that is not up yet.
 *
 * Layer: the command-line program, below the commands (cli.h); the
 * library does the opening (sked_open).
 */
#include "base/cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sysexits.h>
#include <unistd.h>

/* sked_open on the resolved URL; on failure *rc holds the code and c->h
 * the failed handle (for its message), or NULL. */
static int
try_open(struct cli *c, int migrate)
{
	sked_options o;

	memset(&o, 0, sizeof o);
	o.strategy = c->strategy;
	o.prefix = c->prefix;
	o.migrate = migrate;
	return sked_open(c->url, &o, &c->h);
}

static int
open_failed(struct cli *c, int rc, const char *after)
{
	char red[512];
	int ex = cli_fail(c->h, rc, "cannot open %s%s",
	                  sked_redact_url(c->url, red, sizeof red), after);

	sked_close(c->h);
	c->h = NULL;
	return ex;
}

int
cli_open(struct cli *c)
{
	int rc;

	if (c->h != NULL)
		return 0;
	rc = try_open(c, 1);
	return rc == SKED_OK ? 0 : open_failed(c, rc, "");
}

/* The file of a sqlite: URL, as the driver reads it; NULL for another
 * scheme or an in-memory database. */
static const char *
sqlite_file(const char *url)
{
	const char *p;

	if (strncasecmp(url, "sqlite:", 7) != 0)
		return NULL;
	p = url + 7;
	if (strncmp(p, "//", 2) == 0)
		p += 2;
	return *p == '\0' || strcmp(p, ":memory:") == 0 ? NULL : p;
}

int
cli_open_existing(struct cli *c)
{
	return cli_open_info(c, NULL);
}

int
cli_open_info(struct cli *c, int *schema_ok)
{
	const char *file = sqlite_file(c->url);
	int rc;

	if (c->h != NULL)
		return 0;
	if (file != NULL && access(file, F_OK) != 0 && errno == ENOENT) {
		cli_err("no database at %s: 'sked init' (or any command that "
		        "adds something) creates it; this command only reads",
		        file);
		return EX_NOINPUT;
	}
	rc = try_open(c, 0);
	if (schema_ok != NULL) {
		sked_info i;
		*schema_ok = rc == SKED_OK;
		/* the schema missing or at another version: the rest of
		 * the handle (driver, product, strategy) is there to show */
		if (rc == SKED_ESCHEMA && sked_get_info(c->h, &i) == SKED_OK)
			return 0;
	}
	return rc == SKED_OK ? 0 : open_failed(c, rc, "");
}

int
cli_open_wait(struct cli *c, int64_t wait_ms)
{
	int64_t backoff_ms = 500, waited_ms, t0;
	char red[512], until[64];
	int rc, said = 0;

	if (c->h != NULL)
		return 0;
	t0 = cli_mono_ms();
	for (;;) {
		rc = try_open(c, 1);
		if (rc == SKED_OK) {
			if (said)
				cli_err("database %s answers: starting",
				        sked_redact_url(c->url, red,
				                        sizeof red));
			return 0;
		}
		waited_ms = cli_mono_ms() - t0;
		if (rc != SKED_EUNAVAILABLE || wait_ms == 0 ||
		    (wait_ms > 0 && waited_ms >= wait_ms)) {
			char after[96] = "";
			if (said)
				snprintf(after, sizeof after,
				         " (waited %s, --wait-db)",
				         sked_format_duration(wait_ms, until,
				                              sizeof until));
			return open_failed(c, rc, after);
		}
		if (!said) {
			if (wait_ms < 0)
				snprintf(until, sizeof until, "until it does");
			else
				sked_format_duration(wait_ms, until,
				                     sizeof until);
			cli_err("cannot reach %s (%s): waiting for it, "
			        "retrying "
			        "with backoff up to 30s, for %s (--wait-db)",
			        sked_redact_url(c->url, red, sizeof red),
			        sked_errmsg(c->h), until);
			said = 1;
		}
		sked_close(c->h);
		c->h = NULL;
		if (wait_ms > 0 && backoff_ms > wait_ms - waited_ms)
			backoff_ms = wait_ms - waited_ms;
		cli_sleep_ms(backoff_ms);
		backoff_ms = backoff_ms * 2 > 30000 ? 30000 : backoff_ms * 2;
	}
}
