/*
 * cmd.h — the one-shot commands main.c's table runs (cmd_*.c of this
 * folder), each int cmd_NAME(struct cli *, int argc, char **argv)
 * returning a sysexits code.
 *
 * Folder cli/cmd/ (floor 11, docs/design.md): above base/, http/ and
 * view/; no web page, daemon or tool calls in here.
 */
#ifndef SKED_CLI_CMD_H
#define SKED_CLI_CMD_H

#include "base/cli.h"

int cmd_init(struct cli *c, int argc, char **argv);
int cmd_info(struct cli *c, int argc, char **argv);
int cmd_enqueue(struct cli *c, int argc, char **argv);
int cmd_list(struct cli *c, int argc, char **argv);
int cmd_show(struct cli *c, int argc, char **argv);
int cmd_cancel(struct cli *c, int argc, char **argv);
int cmd_retry(struct cli *c, int argc, char **argv);
int cmd_nodes(struct cli *c, int argc, char **argv);
int cmd_stats(struct cli *c, int argc, char **argv);
int cmd_prune(struct cli *c, int argc, char **argv);
int cmd_cron_next(struct cli *c, int argc, char **argv);
int cmd_cron_add(struct cli *c, int argc, char **argv);
int cmd_cron_ls(struct cli *c, int argc, char **argv);
int cmd_cron_rm(struct cli *c, int argc, char **argv);
int cmd_cron_pause(struct cli *c, int argc, char **argv);
int cmd_cron_resume(struct cli *c, int argc, char **argv);
int cmd_cron_run(struct cli *c, int argc, char **argv);
int cmd_lock_run(struct cli *c, int argc, char **argv);
int cmd_queue_set(struct cli *c, int argc, char **argv);
int cmd_queue_ls(struct cli *c, int argc, char **argv);
int cmd_queue_pause(struct cli *c, int argc, char **argv);
int cmd_queue_resume(struct cli *c, int argc, char **argv);

/* cmd_wait.c: sked wait, and enqueue --wait. Its exit codes for an
 * outcome (docs/cli.md); a timeout is EX_TEMPFAIL (75), all succeeded 0 */
#define CLI_WAIT_DEAD      68
#define CLI_WAIT_CANCELLED 67
int cmd_wait(struct cli *c, int argc, char **argv);
/* wait for the n tasks ids (timeout_ms < 0: no bound), print each, and
 * return the exit code of the worst outcome */
int cli_wait_ids(struct cli *c, const int64_t *ids, size_t n,
                 int64_t timeout_ms);

/* cmd_events.c: sked events, the events feed as JSON lines */
int cmd_events(struct cli *c, int argc, char **argv);

/* cmd_nodes.c: `sked nodes --prune [--older-than D]` (cmd_nodes calls
 * it); the oldest due age of queue (NULL: of any queue) in g, 0 when
 * none is due (what `stats` shows). */
int cli_nodes_prune(struct cli *c, int argc, char **argv);
int64_t cli_oldest_due_ms(const sked_cluster_gauges *g, const char *queue);

#endif /* SKED_CLI_CMD_H */
