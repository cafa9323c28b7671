/*
 * dashboard.h — what `sked dashboard` (dashboard.c) shares with the
 * files embedded at build time: cmake/embed_assets.cmake turns the static
 * files in static/ into cli_assets and the page templates in
 * templates/ into cli_templates (dashboard_tpl.c renders them).
 */
#ifndef SKED_CLI_DASHBOARD_H
#define SKED_CLI_DASHBOARD_H

#include <stddef.h>

struct cli_asset {
	const char *path; /* "/static/app.css" */
	const char *type; /* its Content-Type */
	const char *data;
	size_t len;
};

/* ended by an entry whose path is NULL */
extern const struct cli_asset cli_assets[];
/* the same for the templates: path "tasks.html", type text/html */
extern const struct cli_asset cli_templates[];

struct cli;
int cmd_dashboard(struct cli *c, int argc, char **argv);

#endif /* SKED_CLI_DASHBOARD_H */
