/*
 * api.h — the JSON API that `sked dashboard` serves under /api/
 * (api_serve.c, with the handlers and JSON helpers that api_int.h draws;
 * docs/api.md, docs/openapi.yaml).
 *
 * Layer: the command-line program, a client of <sked.h> only. The
 * dashboard's router hands every request whose path is /api or under
 * /api/ to cli_api_serve, before its own Host check and credentials: the
 * API answers with JSON only, is authorised by its own bearer token only
 * (--api-token; never the dashboard's --auth, never a cookie), and is
 * off (404) without one.
 */
#ifndef SKED_CLI_API_H
#define SKED_CLI_API_H

#include <pthread.h>

#include "base/cli.h"
#include "http/http.h"

struct cli_api;

/* The API of --api-token SPEC (file:PATH or env:NAME): reads the token
 * and refuses an empty or weak one with one line. read_only: every
 * change is refused (403). Returns 0 or a sysexits code. */
int cli_api_new(const char *spec, int read_only, struct cli_api **out);
/* The database the API works on, and the mutex that guards it. */
void cli_api_bind(struct cli_api *a, sked *h, pthread_mutex_t *mu);
void cli_api_free(struct cli_api *a);
/* Let GET /api/tasks/ID?wait=D long-poll: its own connection, opened on
 * the first one, to url as the program opened it. -1: out of memory. */
int cli_api_wait_new(struct cli_api *a, const char *url, const char *strategy,
                     const char *prefix);

/* 1 when path is the API's: "/api" or under "/api/" */
int cli_api_path(const char *path);
/* Answer rq. a may be NULL (no --api-token: the API is off); host_ok
 * says whether the Host header passed the dashboard's check. */
void cli_api_serve(struct cli_api *a, int host_ok,
                   const struct cli_http_request *rq,
                   struct cli_http_reply *rp);

#endif /* SKED_CLI_API_H */
