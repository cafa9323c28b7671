/*
 * api.c — status codes, the handle's life cycle, and what was chosen.
 *
 * Layer: the public edge of the library. Checks arguments, opens the
 * connection through the driver seam, detects the product and version,
 * picks the dialect and the claim strategy (or honours an override the
 * database can run), renders the SQL, and brings the schema up to date.
 * The task model is in model/ (queue.c, lease.c, …), the worker in
 * worker/.
 */
#include "sked.h"
#include "handle/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim/claim.h"
#include "model/limits.h"
#include "model/schema.h"
#include "util/ident.h"
#include "util/log.h"
#include "util/url.h"

/* ---- open and close ---- */

static int setup(sked *h);

/* A handle with the caller's options copied (strings into the handle:
 * the caller's may go away). */
static sked *
new_handle(const sked_options *opts)
{
	sked *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	if (opts)
		h->opts = *opts;
	h->opts.strategy = NULL;
	h->opts.prefix = NULL;
	snprintf(h->prefix, sizeof h->prefix, "%s",
	         opts && opts->prefix ? opts->prefix : "sked_");
	snprintf(h->strategy_opt, sizeof h->strategy_opt, "%s",
	         opts && opts->strategy ? opts->strategy : "auto");
	return h;
}

static int
choose_strategy(sked *h)
{
	const sked_decision *d = &h->decision;
	const char *want = h->strategy_opt;
	sked_strategy s = d->strategy;
	if (want[0] && strcmp(want, "auto") != 0) {
		s = sked__strategy_parse(want);
		if (s == SKED_STRAT_NONE)
			return sked__fail(
			        h, SKED_EINVAL,
			        "unknown strategy '%s' (expected auto, "
			        "skip-locked, readpast, optimistic or "
			        "sqlite)",
			        want);
		char why[256];
		if (!sked__strategy_allowed(d, s, why, sizeof why))
			return sked__fail(
			        h, SKED_ESTRATEGY,
			        "strategy '%s' cannot run on %s %s: %s", want,
			        h->product, h->version, why);
		snprintf(h->reason, sizeof h->reason,
		         "chosen by the user (detection would pick %s: %s)",
		         sked__strategy_name(d->strategy), d->reason);
	} else {
		snprintf(h->reason, sizeof h->reason, "%s", d->reason);
		if (d->warn)
			sked__log(SKED_LOG_WARN, "%s", d->reason);
	}
	h->strategy = sked__claim_for(s);
	if (!h->strategy)
		return sked__fail(h, SKED_ESTRATEGY,
		                  "strategy '%s' is not built into this sked",
		                  sked__strategy_name(s));
	/* the dialect must carry the statements the strategy runs */
	unsigned need = s == SKED_STRAT_SKIP_LOCKED ? SKED_CAP_SKIP_LOCKED
	                : s == SKED_STRAT_READPAST  ? SKED_CAP_READPAST
	                                            : 0;
	if ((h->dialect->caps & need) != need)
		return sked__fail(h, SKED_ESTRATEGY,
		                  "strategy '%s' is not implemented for the %s "
		                  "dialect",
		                  sked__strategy_name(s), h->dialect->name);
	return SKED_OK;
}

SKED_API int
sked_open(const char *url, const sked_options *opts, sked **out)
{
	if (!out)
		return SKED_EINVAL;
	sked *h = new_handle(opts);
	*out = h;
	if (!h)
		return SKED_ENOMEM;
	if (!url || !*url)
		return sked__fail(h, SKED_EURL, "no database URL given");
	sked__url_redact(url, h->url_redacted, sizeof h->url_redacted);
	if (!sked__prefix_valid(h->prefix))
		return sked__fail(h, SKED_EINVAL,
		                  "table prefix '%s' is not valid (expected "
		                  "[a-z_][a-z0-9_]{0,30})",
		                  h->prefix);
	h->url = strdup(url);
	if (!h->url)
		return sked__fail(h, SKED_ENOMEM, "out of memory");

	char err[512];
	int rc = sked__db_open(url, &h->db, err, sizeof err);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "%s", err);
	return setup(h);
}

/* After connecting: detect, choose, render, check the schema. */
static int
setup(sked *h)
{
	int rc = sked__db_server(h->db, h->product, sizeof h->product,
	                         h->version, sizeof h->version);
	if (rc != SKED_OK)
		return sked__fail_db(h, rc, "cannot read the server's version");
	sked__decide(h->product, h->version, &h->decision);
	/* the SQL Server dialect reads times with DATEDIFF_BIG (2016, 13.x) */
	if (h->decision.product == SKED_PROD_SQLSERVER &&
	    h->decision.major > 0 && h->decision.major < 13)
		return sked__fail(h, SKED_EUNSUPPORTED,
		                  "sked needs SQL Server 2016 (13.x) or newer; "
		                  "this is %s %s",
		                  h->product, h->version);
	/* the Oracle dialect's schema takes its ids from a sequence as a
	 * column default and answers claims as implicit results (12c) */
	if (h->decision.product == SKED_PROD_ORACLE && h->decision.major > 0 &&
	    h->decision.major < 12)
		return sked__fail(h, SKED_EUNSUPPORTED,
		                  "sked needs Oracle Database 12c or newer; "
		                  "this is %s %s",
		                  h->product, h->version);
	h->dialect = sked__dialect_for_version(
	        h->decision.product, h->decision.major, h->decision.minor);
	if (!h->dialect)
		return sked__fail(h, SKED_EUNSUPPORTED,
		                  "sked has no SQL dialect for %s %s",
		                  h->product, h->version);
	rc = choose_strategy(h);
	if (rc != SKED_OK)
		return rc;
	char err[256];
	rc = sked__dialect_render(h->dialect, h->prefix, h->sql, err,
	                          sizeof err);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "%s", err);
	if (sked__db_unbound_null(h->db) &&
	    sked__dialect_pad(h->sql) != SKED_OK)
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	if (h->dialect->listen &&
	    !(h->listen_sql = sked__dialect_expand(h->dialect, h->prefix,
	                                           h->dialect->listen)))
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	if (h->dialect->notify &&
	    !(h->notify_sql = sked__dialect_expand(h->dialect, h->prefix,
	                                           h->dialect->notify)))
		return sked__fail(h, SKED_ENOMEM, "out of memory");
	/* the application's own session keeps its settings: a borrowed
	 * handle only enqueues and reads, which need none of them */
	if (h->dialect->session_init && !h->borrowed) {
		rc = sked__qdyn(h, h->dialect->session_init, NULL, 0, NULL);
		if (rc != SKED_OK)
			return sked__fail_db(h, rc,
			                     "cannot set up the session");
	}

	rc = sked__schema_version(h, &h->schema_version);
	if (rc != SKED_OK)
		return rc;
	if (h->schema_version == SKED_SCHEMA_VERSION)
		return SKED_OK;
	if (h->schema_version > SKED_SCHEMA_VERSION)
		return sked__fail(
		        h, SKED_ESCHEMA,
		        "the database's schema is at version %d, newer "
		        "than this sked knows (%d): upgrade sked",
		        h->schema_version, SKED_SCHEMA_VERSION);
	if (!h->opts.migrate || h->borrowed)
		return sked__fail(h, SKED_ESCHEMA,
		                  "the database's schema is at version %d, not "
		                  "%d: run 'sked init'",
		                  h->schema_version, SKED_SCHEMA_VERSION);
	return sked_migrate(h);
}

SKED_API int
sked_open_borrowed(const char *driver, void *native, const sked_options *opts,
                   sked **out)
{
	if (!out)
		return SKED_EINVAL;
	sked *h = new_handle(opts);
	*out = h;
	if (!h)
		return SKED_ENOMEM;
	h->borrowed = 1;
	snprintf(h->url_redacted, sizeof h->url_redacted,
	         "(%s connection "
	         "held by the application)",
	         driver ? driver : "?");
	if (!sked__prefix_valid(h->prefix))
		return sked__fail(h, SKED_EINVAL,
		                  "table prefix '%s' is not valid (expected "
		                  "[a-z_][a-z0-9_]{0,30})",
		                  h->prefix);
	char err[512];
	int rc = sked__db_wrap(driver, native, &h->db, err, sizeof err);
	if (rc != SKED_OK)
		return sked__fail(h, rc, "%s", err);
	return setup(h);
}

SKED_API void
sked_close(sked *h)
{
	if (!h)
		return;
	sked__dialect_free_rendered(h->sql);
	sked__limits_free(h->limits);
	free(h->listen_sql);
	free(h->notify_sql);
	sked__db_close(h->db);
	free(h->url);
	free(h);
}

SKED_API int
sked_migrate(sked *h)
{
	if (!h || !h->db)
		return SKED_EINVAL;
	int rc = sked__schema_migrate(h);
	if (rc != SKED_OK)
		return rc;
	return sked__schema_version(h, &h->schema_version);
}

SKED_API int
sked_get_info(sked *h, sked_info *out)
{
	if (!h || !out || !h->db)
		return SKED_EINVAL;
	memset(out, 0, sizeof *out);
	/* an open that failed before the strategy was chosen */
	if (!h->dialect || !h->strategy)
		return SKED_ESTATE;
	snprintf(out->driver, sizeof out->driver, "%s", sked__db_driver(h->db));
	snprintf(out->dialect, sizeof out->dialect, "%s", h->dialect->name);
	snprintf(out->product, sizeof out->product, "%s", h->product);
	snprintf(out->version, sizeof out->version, "%s", h->version);
	snprintf(out->strategy, sizeof out->strategy, "%s", h->strategy->name);
	snprintf(out->reason, sizeof out->reason, "%s", h->reason);
	snprintf(out->url, sizeof out->url, "%s", h->url_redacted);
	out->schema_version = h->schema_version;
	out->schema_expected = SKED_SCHEMA_VERSION;
	return SKED_OK;
}
