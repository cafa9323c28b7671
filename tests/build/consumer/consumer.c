/*
 * consumer.c — a program outside the sked tree, built against an
 * installed sked (tests/build/t_install.sh): through pkg-config and
 * through find_package(sked), with the shared and the static library.
 *
 * Usage: consumer DB-PATH. It opens sqlite:DB-PATH, enqueues one task,
 * reads it back and prints "ok ID KIND". Exit 0 on success, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include <sked.h>

int
main(int argc, char **argv)
{
	char url[4096];
	sked *h = NULL;
	sked_task *t = NULL;
	int64_t id = 0;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: consumer DB-PATH\n");
		return 1;
	}
	snprintf(url, sizeof url, "sqlite:%s", argv[1]);
	sked_options o;
	memset(&o, 0, sizeof o);
	o.migrate = 1;
	rc = sked_open(url, &o, &h);
	if (rc == SKED_OK)
		rc = sked_enqueue(h, "consumer.check", "hi", 2, NULL, &id,
		                  NULL);
	if (rc == SKED_OK)
		rc = sked_task_get(h, id, &t);
	if (rc != SKED_OK) {
		fprintf(stderr, "consumer: %s: %s\n", sked_errname(rc),
		        h ? sked_errmsg(h) : "");
		sked_close(h);
		return 1;
	}
	printf("ok %lld %s\n", (long long)t->id, t->kind);
	sked_tasks_free(t, 1);
	sked_close(h);
	return 0;
}
