/*
 * sqlite_fixture.h — a fresh SQLite database file per test, for the unit
 * tests that need a real database (test_model, test_lock, test_sched).
 *
 * Include after <cmocka.h>. The file lives in its own folder under
 * $SKED_TEST_TMP (set by CTest to build/testtmp), or /tmp.
 */
#ifndef SKED_SQLITE_FIXTURE_H
#define SKED_SQLITE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "sked.h"

/* Write "sqlite:<new folder>/sked.db" into url; tag names the folder. */
static inline void
fixture_url(const char *tag, char *url, size_t len)
{
	const char *base = getenv("SKED_TEST_TMP");
	char dir[400];
	if (base)
		mkdir(base, 0755);
	snprintf(dir, sizeof dir, "%s/%s.XXXXXX", base ? base : "/tmp", tag);
	assert_non_null(mkdtemp(dir));
	snprintf(url, len, "sqlite:%s/sked.db", dir);
}

/* Open url with the schema created; strategy NULL means auto. Fails the
 * test with the library's message when it cannot. */
static inline sked *
fixture_open(const char *url, const char *strategy)
{
	sked_options o = {.strategy = strategy, .migrate = 1};
	sked *h = NULL;
	if (sked_open(url, &o, &h) != SKED_OK)
		fail_msg("open: %s", sked_errmsg(h));
	return h;
}

#endif /* SKED_SQLITE_FIXTURE_H */
