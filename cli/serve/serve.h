/*
 * serve.h — the daemons' commands main.c's table runs: `sked worker`
 * (cmd_worker.c; its HTTP side, systemd and SIGHUP in worker_ops.c).
 *
 * Folder cli/serve/ (floor 13, docs/design.md): above the commands, the
 * web and the tools, below main.c only.
 */
#ifndef SKED_CLI_SERVE_H
#define SKED_CLI_SERVE_H

struct cli;
int cmd_worker(struct cli *c, int argc, char **argv);

#endif /* SKED_CLI_SERVE_H */
