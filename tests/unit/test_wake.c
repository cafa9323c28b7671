/*
 * test_wake.c — unit tests for the wake-up payload and its window
 * (util/wake.h): what the model writes is what the worker reads, a
 * payload that is not sked's is refused (the worker then claims), and
 * the window addresses n + 1 of a group, moving on when passed on and
 * never going round twice.
 *
 * Layer: tests (pure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "util/wake.h"

static void
round_trip(void **state)
{
	(void)state;
	sked_wake w = {.r = 4294967295u, .n = 123456789012LL, .hop = 3};
	strcpy(w.queue, "mail");
	strcpy(w.kind, "send:v2");
	char buf[SKED_WAKE_MAX + 1];
	assert_true(sked__wake_format(buf, sizeof buf, &w) > 0);
	assert_string_equal(buf, "w1 4294967295 123456789012 3 mail send:v2");
	sked_wake back;
	assert_int_equal(sked__wake_parse(buf, &back), 1);
	assert_int_equal(back.r, w.r);
	assert_int_equal(back.n, w.n);
	assert_int_equal(back.hop, 3);
	assert_string_equal(back.queue, "mail");
	assert_string_equal(back.kind, "send:v2");

	/* names not said, or not names, are "-" and come back empty */
	sked_wake u = {.r = 7, .n = 0};
	strcpy(u.queue, "bad name");
	assert_true(sked__wake_format(buf, sizeof buf, &u) > 0);
	assert_string_equal(buf, "w1 7 1 0 - -");
	assert_int_equal(sked__wake_parse(buf, &back), 1);
	assert_string_equal(back.queue, "");
	assert_string_equal(back.kind, "");
	assert_int_equal(back.n, 1);

	/* the longest fits its bound, a buffer too short is refused */
	sked_wake l = {.r = UINT32_MAX, .n = INT64_MAX, .hop = SKED_WAKE_HOPS};
	memset(l.queue, 'q', SKED_MAX_NAME);
	memset(l.kind, 'k', SKED_MAX_NAME);
	assert_true(sked__wake_format(buf, sizeof buf, &l) > 0);
	assert_int_equal(sked__wake_parse(buf, &back), 1);
	assert_int_equal(sked__wake_format(buf, 10, &l), -1);
}

static void
refused(void **state)
{
	(void)state;
	static const char *bad[] = {
	        "",
	        "w1",
	        "w2 1 1 0 - -",
	        "w1 1 1 0 -",
	        "w1 1 1 0 - - extra",
	        "w1 1 0 0 - -",          /* n of 0 */
	        "w1 4294967296 1 0 - -", /* r past 32 bits */
	        "w1 1 1 9 - -",          /* past SKED_WAKE_HOPS */
	        "w1 -1 1 0 - -",
	        "w1 1 1 0 a b c",
	        "w1 1 1 0  -",
	        "w1 1 1 0 -a -", /* not a name */
	        "w1 1 1 0 - ké",
	        "w1 1 9999999999999999999 0 - -",  /* past INT64_MAX */
	        "w1 1 99999999999999999999 0 - -", /* 20 digits */
	};
	sked_wake w;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(sked__wake_parse(bad[i], &w), 0);
	assert_int_equal(sked__wake_parse(NULL, &w), 0);
}

static void
window(void **state)
{
	(void)state;
	sked_wake w = {.r = 10, .n = 1};
	/* a lone task: 2 of a group of 7, from rank 10 mod 7 = 3 */
	int hit = 0;
	for (int k = 0; k < 7; k++) {
		int p = sked__wake_place(&w, k, 7);
		if (p >= 0)
			hit++;
		assert_int_equal(p, k == 3 ? 0 : k == 4 ? 1 : -1);
	}
	assert_int_equal(hit, 2);
	/* the window wraps */
	w.r = 6;
	assert_int_equal(sked__wake_place(&w, 6, 7), 0);
	assert_int_equal(sked__wake_place(&w, 0, 7), 1);
	/* a burst of n reaches n + 1, at most the group */
	w.n = 4;
	assert_int_equal(sked__wake_width(4, 7), 5);
	w.n = 100;
	for (int k = 0; k < 7; k++)
		assert_true(sked__wake_place(&w, k, 7) >= 0);
	/* rank not known: every worker is first */
	assert_int_equal(sked__wake_place(&w, 0, 0), 0);
	assert_int_equal(sked__wake_place(&w, 5, 3), 0);
}

static void
passed_on(void **state)
{
	(void)state;
	sked_wake w = {.r = 0, .n = 1}, next;
	/* a group of 9, windows of 2: 0-1, 2-3, 4-5, 6-7, then no more
	 * (the next would come back round to rank 8 and 0) */
	int hops = 0;
	while (sked__wake_next(&w, 9, &next)) {
		assert_int_equal(next.r, w.r + 2);
		assert_int_equal(next.hop, w.hop + 1);
		w = next;
		hops++;
	}
	assert_int_equal(hops, 3);
	/* a window the size of the group is never passed on */
	sked_wake all = {.r = 3, .n = 50};
	assert_int_equal(sked__wake_next(&all, 9, &next), 0);
	/* nor past SKED_WAKE_HOPS, however large the group */
	sked_wake far = {.r = 0, .n = 1, .hop = SKED_WAKE_HOPS};
	assert_int_equal(sked__wake_next(&far, 1000, &next), 0);
	far.hop = SKED_WAKE_HOPS - 1;
	assert_int_equal(sked__wake_next(&far, 1000, &next), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(round_trip),
	        cmocka_unit_test(refused),
	        cmocka_unit_test(window),
	        cmocka_unit_test(passed_on),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
