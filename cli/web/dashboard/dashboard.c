/*
 * dashboard.c — `sked dashboard`: the web dashboard, server-rendered.
 *
 * This file: the command (its options, the listening server) and the
 * router (which request goes where, and the checks every request passes
 * first). The pages are dashboard_pages.c and dashboard_tasks.c, the
 * changes dashboard_forms.c, sessions and credentials
 * dashboard_session.c; dashboard_int.h draws them all.
 *
 * Layer: the command-line program, a client of <sked.h> only. The pages'
 * HTML is templates (templates/NAME.html) that fill in every value from
 * the database escaped (dashboard_tpl.h); the templates, the stylesheet
 * and the little JavaScript (static/) are embedded at build time.
 * The HTTP server is http.c's, one thread per connection; db_mu
 * serialises them on the one database connection.
 *
 * Security (docs/operations.md): 127.0.0.1 by default; another address
 * only with --auth, whose credentials come from a file or the environment
 * (never the command line, which `ps` shows); every change is a POST that
 * carries the CSRF token of the browser's session (a cookie; the token
 * changes every hour) and is refused from another site;
 * --read-only serves no form and refuses every POST; responses carry a
 * Content-Security-Policy that allows no inline script.
 */
#include "web/dashboard/dashboard.h"
#include "web/dashboard/dashboard_int.h"
#include "view/metrics.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#define DEFAULT_ADDR "127.0.0.1:8420"

static void
on_http(void *ud, const struct cli_http_request *rq, struct cli_http_reply *rp)
{
	struct dash *d = ud;
	int get = strcmp(rq->method, "GET") == 0 ||
	          strcmp(rq->method, "HEAD") == 0;
	int post = strcmp(rq->method, "POST") == 0;
	const char *p = rq->path;
	char tok[64], stok[33], sprev[33];

	/* for a load balancer or a probe: reads nothing, tells nothing */
	if (get && strcmp(p, "/healthz") == 0) {
		cli_sbuf_puts(&rp->body, "ok");
		return;
	}
	if (!dash_host_allowed(d, rq)) {
		rp->status = 403;
		cli_sbuf_puts(&rp->body, "this dashboard answers to its own "
		                         "address only\n");
		return;
	}
	if (!dash_authorized(d, rq)) {
		rp->status = 401;
		rp->www_authenticate =
		        "Basic realm=\"sked\", charset=\"UTF-8\"";
		cli_sbuf_puts(&rp->body, "authentication required\n");
		return;
	}
	if (get && strncmp(p, "/static/", 8) == 0) {
		for (const struct cli_asset *a = cli_assets; a->path; a++)
			if (strcmp(a->path, p) == 0) {
				rp->content_type = a->type;
				cli_sbuf_put(&rp->body, a->data, a->len);
				return;
			}
		rp->status = 404;
		cli_sbuf_puts(&rp->body, "not found\n");
		return;
	}
	if (get && strcmp(p, "/metrics") == 0) {
		/* the cluster-wide gauges, served while no worker is up
		 * (docs/operations.md, "Where to scrape"); no session for a
		 * scraper */
		rp->content_type = "text/plain; version=0.0.4; charset=utf-8";
		cli_metrics_cluster(d->h, &d->db_mu, &rp->body);
		return;
	}
	if (post) {
		const char *site = cli_http_header(rq, "Sec-Fetch-Site");
		if (d->read_only) {
			rp->status = 403;
			cli_sbuf_puts(&rp->body, "read-only dashboard\n");
			return;
		}
		if ((site && strcmp(site, "same-origin") != 0 &&
		     strcmp(site, "none") != 0) ||
		    !dash_same_origin(rq) ||
		    !cli_http_form(rq, "csrf", 0, tok, sizeof tok) ||
		    dash_session_of(d, rq, rp, 0, stok, sprev) != 0 ||
		    !(cli_http_same(tok, stok) ||
		      (sprev[0] && cli_http_same(tok, sprev)))) {
			rp->status = 403;
			cli_sbuf_puts(&rp->body,
			              "missing or wrong CSRF token\n");
			return;
		}
		dash_set_csrf(stok);
	} else if (!get) {
		rp->status = 405;
		cli_sbuf_puts(&rp->body, "method not allowed\n");
		return;
	} else if (dash_session_of(d, rq, rp, 1, stok, sprev) != 0) {
		rp->status = 503;
		cli_sbuf_puts(&rp->body, "cannot read /dev/urandom\n");
		return;
	} else {
		dash_set_csrf(stok);
	}

	cli_tpl_clear();
	pthread_mutex_lock(&d->db_mu);
	if (get && strcmp(p, "/") == 0)
		dash_overview(d, rq, rp);
	else if (get && strcmp(p, "/tasks") == 0)
		dash_tasks(d, rq, rp, 0);
	else if (get && strcmp(p, "/failed") == 0)
		dash_tasks(d, rq, rp, 1);
	else if (get && strncmp(p, "/task/", 6) == 0 && p[6] >= '1' &&
	         p[6] <= '9' && strspn(p + 6, "0123456789") == strlen(p + 6))
		dash_task(d, rq, rp, strtoll(p + 6, NULL, 10));
	else if (get && strcmp(p, "/nodes") == 0)
		dash_nodes(d, rq, rp);
	else if (get && strcmp(p, "/schedules") == 0)
		dash_schedules(d, rq, rp);
	else if (get && strcmp(p, "/locks") == 0)
		dash_locks(d, rq, rp);
	else if (get && strcmp(p, "/queues") == 0)
		dash_queues(d, rq, rp);
	else if (post && strcmp(p, "/tasks/retry") == 0)
		dash_post_tasks(d, rq, rp, 1);
	else if (post && strcmp(p, "/tasks/cancel") == 0)
		dash_post_tasks(d, rq, rp, 0);
	else if (post && strcmp(p, "/nodes/prune") == 0)
		dash_post_prune(d, rq, rp);
	else if (post && strcmp(p, "/schedules/pause") == 0)
		dash_post_schedule(d, rq, rp, 1);
	else if (post && strcmp(p, "/schedules/resume") == 0)
		dash_post_schedule(d, rq, rp, 0);
	else if (post && strcmp(p, "/queues/pause") == 0)
		dash_post_queue(d, rq, rp, 1);
	else if (post && strcmp(p, "/queues/resume") == 0)
		dash_post_queue(d, rq, rp, 0);
	else
		dash_not_found(d, rp);
	pthread_mutex_unlock(&d->db_mu);
	if (cli_tpl_error())
		dash_template_failed(rp, cli_tpl_error());
}

/* The JSON API (api_serve.c) before the pages: its own token, never --auth
 * nor a cookie; the pages' Host check. */
static void
on_request(void *ud, const struct cli_http_request *rq,
           struct cli_http_reply *rp)
{
	struct dash *d = ud;

	if (cli_api_path(rq->path))
		return cli_api_serve(d->api, dash_host_allowed(d, rq), rq, rp);
	on_http(ud, rq, rp);
}

/* ---- the command ---- */

int
cmd_dashboard(struct cli *c, int argc, char **argv)
{
	enum { O_LISTEN = 1, O_AUTH, O_RO, O_API, O_ROTATE };
	static const struct option opts[] = {
	        {"listen", required_argument, NULL, O_LISTEN},
	        {"csrf-rotate", required_argument, NULL, O_ROTATE},
	        {"auth", required_argument, NULL, O_AUTH},
	        {"api-token", required_argument, NULL, O_API},
	        {"read-only", no_argument, NULL, O_RO},
	        CLI_COMMON_OPTIONS,
	        {NULL, 0, NULL, 0},
	};
	const char *listen = DEFAULT_ADDR,
	           *auth = getenv("SKED_DASHBOARD_AUTH"), *api = NULL;
	struct dash d;
	struct cli_http *srv = NULL;
	char ss[128], err[256];
	unsigned alen;
	int ch, ex = 0, loop = 0, port = 0, sig;
	sigset_t set;

	memset(&d, 0, sizeof d);
	d.rotate_ms = CSRF_ROTATE_MS;
	pthread_mutex_init(&d.db_mu, NULL);
	pthread_mutex_init(&d.sess_mu, NULL);
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case O_LISTEN:
			listen = optarg;
			break;
		case O_AUTH:
			auth = optarg;
			break;
		case O_RO:
			d.read_only = 1;
			break;
		case O_API:
			api = optarg;
			break;
		case O_ROTATE:
			if ((ex = cli_parse_duration("--csrf-rotate", optarg,
			                             &d.rotate_ms)) != 0)
				goto out;
			if (d.rotate_ms < 1000) {
				ex = cli_usage("dashboard",
				               "--csrf-rotate: at least 1s");
				goto out;
			}
			break;
		case CLI_OPT_HELP:
			cli_help(stdout, "dashboard");
			goto out;
		case CLI_OPT_JSON:
			break;
		default:
			ex = cli_opt_error("dashboard", ch, argv);
			goto out;
		}
	}
	if (optind < argc) {
		ex = cli_usage("dashboard", "unexpected argument '%s'",
		               argv[optind]);
		goto out;
	}
	if (cli_http_parse_listen(listen, ss, &alen, &loop, err, sizeof err)) {
		ex = cli_usage("dashboard", "--listen: %s", err);
		goto out;
	}
	/* a template that does not parse stops the start, not a page */
	if (cli_tpl_check_all(err, sizeof err)) {
		cli_err("dashboard: %s", err);
		ex = EX_SOFTWARE;
		goto out;
	}
	/* an empty --auth (an unset variable) is a mistake, not "no auth" */
	if (auth && !auth[0]) {
		ex = cli_usage("dashboard",
		               "--auth: give file:PATH or env:VAR");
		goto out;
	}
	if (auth && (ex = dash_load_auth(&d, auth)) != 0)
		goto out;
	if (api && (ex = cli_api_new(api, d.read_only, &d.api)) != 0)
		goto out;
	{
		const char *colon = strrchr(listen, ':');
		size_t hl = colon ? (size_t)(colon - listen) : 0;
		if (hl < sizeof d.listen_host) {
			memcpy(d.listen_host, listen, hl);
			d.listen_host[hl] = '\0';
		}
	}
	if (!loop && !d.secret) {
		cli_err("dashboard: refusing to listen on %s, which is not a "
		        "loopback address, without --auth",
		        listen);
		ex = EX_USAGE;
		goto out;
	}
	{
		char probe[33];
		if (dash_random_token(probe, sizeof probe) != 0) {
			cli_err("dashboard: cannot read /dev/urandom");
			ex = EX_OSERR;
			goto out;
		}
	}
	if ((ex = cli_open(c)) != 0)
		goto out;
	d.h = c->h;
	cli_api_bind(d.api, c->h, &d.db_mu);
	if (d.api && cli_api_wait_new(d.api, c->url, c->strategy, c->prefix)) {
		cli_err("dashboard: out of memory");
		ex = EX_OSERR;
		goto out;
	}
	sked_redact_url(c->url, d.url, sizeof d.url);
	/* the server's threads inherit this mask: signals come to sigwait */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	srv = cli_http_start(listen, on_request, &d, &port, err, sizeof err);
	if (!srv) {
		cli_err("dashboard: %s", err);
#ifdef SKED_HAVE_MHD
		ex = EX_OSERR;
#else
		ex = EX_UNAVAILABLE;
#endif
		goto out;
	}
	printf("sked dashboard on port %d (%s%s%s%s); Ctrl-C stops it\n", port,
	       listen, d.secret ? ", with --auth" : "",
	       d.api ? ", JSON API at /api/" : "",
	       d.read_only ? ", read-only" : "");
	fflush(stdout);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			break;
		if (sig != SIGHUP)
			break;
	}
	cli_http_stop(srv);
out:
	cli_api_free(d.api);
	free(d.user);
	free(d.secret);
	pthread_mutex_destroy(&d.db_mu);
	pthread_mutex_destroy(&d.sess_mu);
	return ex;
}
