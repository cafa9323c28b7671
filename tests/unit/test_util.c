/*
 * test_util.c — unit tests for the small util modules: durations, ISO-8601
 * times and civil dates, names and prefixes, the log threshold and sink.
 *
 * Layer: tests (pure; the log tests install a capturing sink, no stderr).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sked.h"
#include "sked_cli.h"
#include "db/driver/result.h"
#include "util/buf.h"
#include "util/dur.h"
#include "util/ident.h"
#include "util/log.h"
#include "util/timefmt.h"

/* ---- durations ---------------------------------------------------- */

static void
dur_parse_good(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} cases[] = {
	        {"500ms", 500},
	        {"30s", 30000},
	        {"10m", 600000},
	        {"2h", 7200000},
	        {"1d", 86400000},
	        {"1h30m", 5400000},
	        {"1m30s", 90000},
	        {"0s", 0},
	        {"1s500ms", 1500},
	        {"1d2h3m4s5ms", 93784005},
	        {"106751991167d7h12m55s807ms", INT64_MAX},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = -1;
		assert_int_equal(sked__dur_parse(cases[i].s, &ms), SKED_OK);
		assert_int_equal(ms, cases[i].ms);
		ms = -1;
		assert_int_equal(sked_parse_duration(cases[i].s, &ms), SKED_OK);
		assert_int_equal(ms, cases[i].ms);
	}
}

static void
dur_parse_bad(void **state)
{
	static const char *const bad[] = {
	        "",
	        "30",
	        "-5s",
	        "+5s",
	        "5x",
	        "5 s",
	        " 5s",
	        "5s ",
	        "1.5s",
	        "h",
	        "5mo",
	        "5sec",
	        "1h30",
	        "s5",
	        "5S",
	        "9223372036854775808ms",
	        "106751991167d7h12m55s808ms",
	        "106751991168d",
	        "99999999999999999999d",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms = 42;
		assert_int_equal(sked__dur_parse(bad[i], &ms), SKED_EINVAL);
		assert_int_equal(ms, 42); /* untouched */
	}
	int64_t ms;
	assert_int_equal(sked__dur_parse(NULL, &ms), SKED_EINVAL);
}

static void
dur_format(void **state)
{
	static const struct {
		int64_t ms;
		const char *s;
	} cases[] = {
	        {0, "0s"},
	        {500, "500ms"},
	        {5400000, "1h30m"},
	        {90000, "1m30s"},
	        {86400000, "1d"},
	        {1500, "1s500ms"},
	        {-30000, "-30s"},
	        {INT64_MAX, "106751991167d7h12m55s807ms"},
	        {INT64_MIN, "-106751991167d7h12m55s808ms"},
	};
	char buf[32];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sked__dur_format(cases[i].ms, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
		assert_ptr_equal(
		        sked_format_duration(cases[i].ms, buf, sizeof(buf)),
		        buf);
		assert_string_equal(buf, cases[i].s);
	}
	/* truncation still terminates */
	char small[4];
	sked__dur_format(5400000, small, sizeof(small));
	assert_string_equal(small, "1h3");
}

static void
dur_round_trip(void **state)
{
	static const int64_t values[] = {0,        1,         999,
	                                 1000,     59999,     3600000,
	                                 93784005, 123456789, INT64_MAX};
	char buf[32];
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int64_t back = -1;
		sked__dur_format(values[i], buf, sizeof(buf));
		assert_int_equal(sked__dur_parse(buf, &back), SKED_OK);
		assert_int_equal(back, values[i]);
	}
}

/* ---- civil dates and times ---------------------------------------- */

static void
civil_known_days(void **state)
{
	assert_int_equal(sked__days_from_civil(1970, 1, 1), 0);
	assert_int_equal(sked__days_from_civil(1969, 12, 31), -1);
	assert_int_equal(sked__days_from_civil(2000, 3, 1), 11017);
	assert_int_equal(sked__days_from_civil(2026, 3, 8), 20520);
	assert_int_equal(sked__days_from_civil(1600, 1, 1), -135140);

	int y;
	unsigned m, d;
	sked__civil_from_days(-1, &y, &m, &d);
	assert_int_equal(y, 1969);
	assert_int_equal(m, 12);
	assert_int_equal(d, 31);
	sked__civil_from_days(20520, &y, &m, &d);
	assert_int_equal(y, 2026);
	assert_int_equal(m, 3);
	assert_int_equal(d, 8);
}

static void
civil_round_trip(void **state)
{
	/* every day from 1599 to 2401: consecutive, and both ways agree */
	int64_t first = sked__days_from_civil(1599, 1, 1);
	int64_t last = sked__days_from_civil(2401, 12, 31);
	int py = 1598;
	unsigned pm = 12, pd = 31;
	for (int64_t z = first; z <= last; z++) {
		int y;
		unsigned m, d;
		sked__civil_from_days(z, &y, &m, &d);
		assert_int_equal(sked__days_from_civil(y, m, d), z);
		assert_true(d >= 1 && d <= sked__days_in_month(y, m));
		if (d == 1)
			assert_int_equal(pd, sked__days_in_month(py, pm));
		else
			assert_int_equal(d, pd + 1);
		py = y;
		pm = m;
		pd = d;
	}
	assert_true(sked__is_leap(2000));
	assert_false(sked__is_leap(1900));
	assert_true(sked__is_leap(2024));
	assert_false(sked__is_leap(2026));
	assert_int_equal(sked__days_in_month(2024, 2), 29);
	assert_int_equal(sked__days_in_month(2100, 2), 28);
}

static void
time_parse_good(void **state)
{
	static const struct {
		const char *s;
		int64_t ms;
	} cases[] = {
	        {"2026-03-08T07:30:00Z", INT64_C(1772955000000)},
	        {"2026-03-08T07:30:00.123Z", INT64_C(1772955000123)},
	        {"2026-03-08T07:30:00.1Z", INT64_C(1772955000100)},
	        {"2026-03-08T07:30:00.123456789Z", INT64_C(1772955000123)},
	        {"2026-03-08T07:30:00,5Z", INT64_C(1772955000500)},
	        {"2026-03-08t07:30:00z", INT64_C(1772955000000)},
	        {"2026-03-08T08:30:00+01:00", INT64_C(1772955000000)},
	        {"2026-03-08T02:00:00-0530", INT64_C(1772955000000)},
	        {"2026-03-08T09:30:00+02", INT64_C(1772955000000)},
	        {"2026-03-08 07:30:00", INT64_C(1772955000000)},
	        {"2026-03-08T07:30", INT64_C(1772955000000)},
	        {"2026-03-08T07:30Z", INT64_C(1772955000000)},
	        {"2026-03-08", INT64_C(1772928000000)},
	        {"1970-01-01T00:00:00Z", 0},
	        {"1969-12-31T23:59:59.999Z", -1},
	        {"2024-02-29", INT64_C(1709164800000)},
	        {"2000-02-29T00:00:00Z", INT64_C(951782400000)},
	        {"2026-03-08T00:30:00+01:00", INT64_C(1772926200000)},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = 0;
		if (sked__time_parse(cases[i].s, &ms) != SKED_OK)
			fail_msg("rejected %s", cases[i].s);
		if (ms != cases[i].ms)
			fail_msg("%s: got %lld", cases[i].s, (long long)ms);
		assert_int_equal(sked_parse_time(cases[i].s, &ms), SKED_OK);
	}
}

static void
time_parse_bad(void **state)
{
	static const char *const bad[] = {
	        "",
	        "2026",
	        "2026-3-8",
	        "2026-13-01",
	        "2026-00-10",
	        "2026-02-29",
	        "2026-02-30",
	        "1900-02-29",
	        "2026-04-31",
	        "2026-03-00",
	        "2026-03-08T24:00:00Z",
	        "2026-03-08T07:60:00Z",
	        "2026-03-08T07:30:60Z",
	        "2026-03-08T07:30:00.Z",
	        "2026-03-08T07Z",
	        "2026-03-08T07:30:00X",
	        "2026-03-08T07:30:00+1",
	        "2026-03-08T07:30:00+01:",
	        "2026-03-08T07:30:00+24:00",
	        "2026-03-08T07:30:00+01:60",
	        "2026-03-08T07:30:00Z ",
	        "2026-03-08x",
	        "2026-03-08T",
	        "now",
	        "1772955000000",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t ms = 42;
		if (sked__time_parse(bad[i], &ms) != SKED_EINVAL)
			fail_msg("accepted %s", bad[i]);
		assert_int_equal(ms, 42);
	}
}

static void
time_format(void **state)
{
	char buf[32];

	/* one shape whatever the value: a whole second keeps its ".000" */
	sked__time_format(INT64_C(1772955000000), buf, sizeof(buf));
	assert_string_equal(buf, "2026-03-08T07:30:00.000Z");
	sked__time_format(INT64_C(1772955000123), buf, sizeof(buf));
	assert_string_equal(buf, "2026-03-08T07:30:00.123Z");
	sked__time_format(INT64_C(1772955000007), buf, sizeof(buf));
	assert_string_equal(buf, "2026-03-08T07:30:00.007Z");
	sked__time_format(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	sked__time_format(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
	sked__time_format(-86400000, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T00:00:00.000Z");
	assert_ptr_equal(sked_format_time(951782400000, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "2000-02-29T00:00:00.000Z");
	/* every value of a second has the same length */
	for (int64_t ms = INT64_C(1772955000000); ms < INT64_C(1772955001000);
	     ms++) {
		sked__time_format(ms, buf, sizeof(buf));
		assert_int_equal(strlen(buf), 24);
	}
	/* whole seconds, for cron fire instants */
	sked__time_format_sec(INT64_C(1772955000000), buf, sizeof(buf));
	assert_string_equal(buf, "2026-03-08T07:30:00Z");
	sked__time_format_sec(INT64_C(1772955000999), buf, sizeof(buf));
	assert_string_equal(buf, "2026-03-08T07:30:00Z");
	sked__time_format_sec(-1, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59Z");
	/* the extremes fit in 32 bytes, with an extended year */
	sked__time_format(INT64_MAX, buf, sizeof(buf));
	assert_true(strlen(buf) < 32);
	assert_int_equal(buf[0], '+');
	sked__time_format(INT64_MIN, buf, sizeof(buf));
	assert_true(strlen(buf) < 32);
	assert_int_equal(buf[0], '-');
}

static void
time_round_trip(void **state)
{
	static const int64_t values[] = {
	        0,
	        -1,
	        1,
	        999,
	        1000,
	        INT64_C(1772955000123),
	        INT64_C(951782400000),
	        INT64_C(-62135596800000), /* 0001-01-01 */
	        INT64_C(253402300799999), /* 9999-12-31 */
	        INT64_C(-12219292800000), /* 1582 */
	};
	char buf[32];
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int64_t back = 42;
		sked__time_format(values[i], buf, sizeof(buf));
		if (sked__time_parse(buf, &back) != SKED_OK)
			fail_msg("cannot reparse %s", buf);
		assert_int_equal(back, values[i]);
	}
	/* a step through a few years in odd increments */
	for (int64_t t = INT64_C(946684800000); t < INT64_C(1893456000000);
	     t += INT64_C(7777777777)) {
		int64_t back;
		sked__time_format(t, buf, sizeof(buf));
		assert_int_equal(sked__time_parse(buf, &back), SKED_OK);
		assert_int_equal(back, t);
	}
}

/* ---- names -------------------------------------------------------- */

static void
names(void **state)
{
	char longest[SKED_MAX_NAME + 2];

	assert_true(sked__name_valid("default"));
	assert_true(sked__name_valid("a"));
	assert_true(sked__name_valid("0"));
	assert_true(sked__name_valid("email.send:v2-fast_lane"));
	assert_true(sked_name_valid("Node-01"));
	assert_false(sked__name_valid(NULL));
	assert_false(sked__name_valid(""));
	assert_false(sked__name_valid("-lead"));
	assert_false(sked__name_valid("_lead"));
	assert_false(sked__name_valid(".lead"));
	assert_false(sked__name_valid("has space"));
	assert_false(sked__name_valid("semi;colon"));
	assert_false(sked__name_valid("quote'"));
	assert_false(sked__name_valid("slash/"));
	assert_false(sked__name_valid("caf\xc3\xa9"));
	assert_false(sked_name_valid("a\nb"));

	memset(longest, 'x', SKED_MAX_NAME);
	longest[SKED_MAX_NAME] = '\0';
	assert_true(sked__name_valid(longest));
	longest[SKED_MAX_NAME] = 'x';
	longest[SKED_MAX_NAME + 1] = '\0';
	assert_false(sked__name_valid(longest));
}

static void
prefixes(void **state)
{
	assert_true(sked__prefix_valid("sked_"));
	assert_true(sked__prefix_valid("_"));
	assert_true(sked__prefix_valid("a"));
	assert_true(sked__prefix_valid("app2_sked_"));
	assert_true(
	        sked__prefix_valid("abcdefghijklmnopqrstuvwxyz01234")); /* 31 */
	assert_false(sked__prefix_valid(
	        "abcdefghijklmnopqrstuvwxyz012345")); /* 32 */
	assert_false(sked__prefix_valid(NULL));
	assert_false(sked__prefix_valid(""));
	assert_false(sked__prefix_valid("Sked_"));
	assert_false(sked__prefix_valid("1sked"));
	assert_false(sked__prefix_valid("sked-"));
	assert_false(sked__prefix_valid("sked_\""));
	assert_false(sked__prefix_valid("sked; drop"));
}

/* ---- logging ------------------------------------------------------ */

struct capture {
	int n;
	int level;
	char line[4096];
};

static void
capture_sink(int level, const char *line, void *userdata)
{
	struct capture *c = userdata;
	c->n++;
	c->level = level;
	snprintf(c->line, sizeof(c->line), "%s", line);
}

/* Must run before anything else logs: SKED_LOG is read once, lazily. */
static void
log_env_threshold(void **state)
{
	assert_int_equal(setenv("SKED_LOG", "error", 1), 0);
	assert_true(sked__log_enabled(SKED_LOG_ERROR));
	assert_false(sked__log_enabled(SKED_LOG_WARN));
	/* read once: changing it later has no effect */
	assert_int_equal(setenv("SKED_LOG", "debug", 1), 0);
	assert_false(sked__log_enabled(SKED_LOG_INFO));
}

static void
count_sink(int level, const char *line, void *userdata)
{
	(*(int *)userdata)++; /* serialised by the log lock */
}

static void *
log_many(void *arg)
{
	for (int i = 0; i < 2000; i++)
		sked__log(SKED_LOG_INFO, "thread %d line %d", *(int *)arg, i);
	return NULL;
}

static void
log_threads(void **state)
{
	pthread_t t[4];
	int ids[4] = {0, 1, 2, 3}, count = 0;

	sked_set_log(count_sink, &count, SKED_LOG_INFO);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, log_many, &ids[i]),
		                 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	sked_set_log(NULL, NULL, SKED_LOG_INFO);
	assert_int_equal(count, 4 * 2000);
}

static void
log_threshold(void **state)
{
	struct capture c = {0};

	sked_set_log(capture_sink, &c, SKED_LOG_WARN);
	assert_true(sked__log_enabled(SKED_LOG_ERROR));
	assert_true(sked__log_enabled(SKED_LOG_WARN));
	assert_false(sked__log_enabled(SKED_LOG_INFO));
	assert_false(sked__log_enabled(SKED_LOG_DEBUG));

	sked__log(SKED_LOG_INFO, "dropped %d", 1);
	sked__log(SKED_LOG_DEBUG, "dropped %d", 2);
	assert_int_equal(c.n, 0);
	sked__log(SKED_LOG_WARN, "kept %d", 3);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.level, SKED_LOG_WARN);

	sked_set_log(capture_sink, &c, SKED_LOG_DEBUG);
	sked__log(SKED_LOG_DEBUG, "now kept");
	assert_int_equal(c.n, 2);
	assert_non_null(strstr(c.line, " debug: now kept"));

	/* below error: nothing at all */
	sked_set_log(capture_sink, &c, -1);
	sked__log(SKED_LOG_ERROR, "silenced");
	assert_int_equal(c.n, 2);
	sked_set_log(NULL, NULL, SKED_LOG_INFO);
}

static void
log_line_shape(void **state)
{
	struct capture c = {0};
	char pid[32];
	int64_t ms;

	sked_set_log(capture_sink, &c, SKED_LOG_INFO);
	sked__log(SKED_LOG_WARN, "lease of task %d lost\nsecond line", 7);
	assert_int_equal(c.n, 1);
	/* 2026-11-29T19:43:11.123Z sked[PID] warn: message */
	assert_int_equal(strlen(c.line) > 25, 1);
	assert_int_equal(c.line[23], 'Z');
	assert_int_equal(c.line[19], '.');
	c.line[24] = '\0';
	assert_int_equal(sked__time_parse(c.line, &ms), SKED_OK);
	snprintf(pid, sizeof(pid), "sked[%ld] warn: ", (long)getpid());
	assert_memory_equal(c.line + 25, pid, strlen(pid));
	assert_string_equal(c.line + 25 + strlen(pid),
	                    "lease of task 7 lost second line");

	/* long messages are cut, not overflowed */
	char big[5000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sked__log(SKED_LOG_ERROR, "%s", big);
	assert_int_equal(c.n, 2);
	assert_true(strlen(c.line) < 2048);
	assert_string_equal(c.line + strlen(c.line) - 3, "...");
	sked_set_log(NULL, NULL, SKED_LOG_INFO);
}

static void
traceparents(void **state)
{
	(void)state;
	const char *good = "00-4bf92f3577b34da6a3ce929d0e0e4736-"
	                   "00f067aa0ba902b7-01";
	assert_true(sked__traceparent_valid(good));
	assert_true(
	        sked__traceparent_valid("01-4bf92f3577b34da6a3ce929d0e0e4736-"
	                                "00f067aa0ba902b7-00"));
	const char *bad[] = {
	        NULL,
	        "",
	        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
	        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
	        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
	        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
	        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
	        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
	        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(sked__traceparent_valid(bad[i]));
}

static void
log_levels(void **state)
{
	assert_string_equal(sked__log_level_name(SKED_LOG_WARN), "warn");
	assert_null(sked__log_level_name(9));
	assert_int_equal(sked__log_level_parse("DEBUG"), SKED_LOG_DEBUG);
	assert_int_equal(sked__log_level_parse("error"), SKED_LOG_ERROR);
	assert_int_equal(sked__log_level_parse("loud"), -1);
	assert_int_equal(sked__log_level_parse(NULL), -1);
}

/* the decimal writer the worker's batches use instead of snprintf */
static void
i64_digits(void **state)
{
	(void)state;
	const int64_t v[] = {0,  7,          -7,        10,        -10,
	                     99, 1000000007, INT64_MAX, INT64_MIN, -1};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char want[32], got[SKED_I64_DIGITS + 1];
		snprintf(want, sizeof want, "%lld", (long long)v[i]);
		size_t n = sked__i64_digits(got, v[i]);
		got[n] = '\0';
		assert_string_equal(got, want);
	}
	sked_buf b = {0};
	sked__buf_i64(&b, -42);
	sked__buf_put(&b, ",", 1);
	sked__buf_i64(&b, INT64_MIN);
	assert_false(b.oom);
	assert_string_equal(b.p, "-42,-9223372036854775808");
	sked__buf_free(&b);
}

/* cells share one buffer: text, NULL and empty cells read back as added,
 * and integers read as strtoll reads them (the fast path and past it) */
static void
result_cells(void **state)
{
	(void)state;
	const char *cells[] = {"12",  NULL,   "",
	                       "-5",  "12.0", "9223372036854775807",
	                       " 3",  "+4",   "-9223372036854775808",
	                       "abc", "-",    "123456789012345678"};
	sked_res r = {0};
	assert_int_equal(sked__res_begin(&r, 3), SKED_OK);
	for (int k = 0; k < 400; k++) /* past several doublings */
		for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
			assert_int_equal(
			        sked__res_add(&r, cells[i],
			                      cells[i] ? strlen(cells[i]) : 0),
			        SKED_OK);
	assert_int_equal(r.nrows, 1600);
	for (int k = 0; k < 400; k++)
		for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
			int row = (int)((size_t)k * 4 + i / 3),
			    col = (int)(i % 3);
			if (!cells[i]) {
				assert_true(sked__res_null(&r, row, col));
				assert_null(sked__res_text(&r, row, col));
				assert_int_equal(sked__res_int(&r, row, col),
				                 0);
				continue;
			}
			assert_string_equal(sked__res_text(&r, row, col),
			                    cells[i]);
			assert_int_equal(sked__res_len(&r, row, col),
			                 strlen(cells[i]));
			assert_true(sked__res_int(&r, row, col) ==
			            strtoll(cells[i], NULL, 10));
		}
	sked__res_clear(&r);
	assert_null(r.bytes);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(log_env_threshold), /* first: see there */
	        cmocka_unit_test(dur_parse_good),
	        cmocka_unit_test(dur_parse_bad),
	        cmocka_unit_test(dur_format),
	        cmocka_unit_test(dur_round_trip),
	        cmocka_unit_test(civil_known_days),
	        cmocka_unit_test(civil_round_trip),
	        cmocka_unit_test(time_parse_good),
	        cmocka_unit_test(time_parse_bad),
	        cmocka_unit_test(time_format),
	        cmocka_unit_test(time_round_trip),
	        cmocka_unit_test(names),
	        cmocka_unit_test(prefixes),
	        cmocka_unit_test(log_threshold),
	        cmocka_unit_test(log_line_shape),
	        cmocka_unit_test(log_levels),
	        cmocka_unit_test(traceparents),
	        cmocka_unit_test(log_threads),
	        cmocka_unit_test(i64_digits),
	        cmocka_unit_test(result_cells),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
