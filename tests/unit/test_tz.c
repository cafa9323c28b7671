/*
 * test_tz.c — unit tests of the TZif reader (src/time/tz.c).
 *
 * Layer: tests. Real zones come from the system tz database; the expected
 * offsets and transition instants were read off `zdump -v` and checked
 * against the published rules (US: second Sunday of March to first Sunday
 * of November at 02:00; EU: last Sunday of March to last Sunday of October
 * at 01:00 UTC; New South Wales: first Sunday of October to first Sunday
 * of April at 02:00 standard time). Hand-made TZif files under a private
 * $TZDIR test the v1 layout, footer-only (slim) files, v3 rule times and
 * malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sked.h"
#include "time/tz.h"
#include "util/timefmt.h"

/* UTC seconds of an ISO-8601 instant. */
static int64_t
at(const char *iso)
{
	int64_t ms = 0;
	assert_int_equal(sked__time_parse(iso, &ms), SKED_OK);
	return ms / 1000;
}

static sked_tz *
load(const char *name)
{
	sked_tz *tz = NULL;
	char err[128];
	int rc = sked__tz_load(name, &tz, err, sizeof(err));
	if (rc != SKED_OK)
		fail_msg("loading %s: %s", name, err);
	assert_string_equal(sked__tz_name(tz), name);
	return tz;
}

static void
expect_offset(const sked_tz *tz, const char *iso, int off)
{
	int got = sked__tz_offset_at(tz, at(iso));
	if (got != off)
		fail_msg("%s at %s: offset %d, expected %d", sked__tz_name(tz),
		         iso, got, off);
}

static void
test_new_york(void **state)
{
	sked_tz *tz = load("America/New_York");
	int64_t t;

	expect_offset(tz, "2026-01-15T12:00:00Z", -5 * 3600);
	expect_offset(tz, "2026-07-01T12:00:00Z", -4 * 3600);
	/* Spring forward at 02:00 EST = 07:00Z on 8 March 2026. */
	expect_offset(tz, "2026-03-08T06:59:59Z", -5 * 3600);
	expect_offset(tz, "2026-03-08T07:00:00Z", -4 * 3600);
	/* Fall back at 02:00 EDT = 06:00Z on 1 November 2026. */
	expect_offset(tz, "2026-11-01T05:59:59Z", -4 * 3600);
	expect_offset(tz, "2026-11-01T06:00:00Z", -5 * 3600);
	/* After 2037 only the footer "EST5EDT,M3.2.0,M11.1.0" speaks:
	 * 2040 starts DST on 11 March (second Sunday) at 07:00Z. */
	expect_offset(tz, "2040-03-11T06:59:59Z", -5 * 3600);
	expect_offset(tz, "2040-03-11T07:00:00Z", -4 * 3600);
	expect_offset(tz, "2040-07-01T00:00:00Z", -4 * 3600);
	expect_offset(tz, "2040-12-01T00:00:00Z", -5 * 3600);
	expect_offset(tz, "2100-07-04T12:00:00Z", -4 * 3600);
	/* Before 1883 New York kept local mean time, -4:56:02. */
	expect_offset(tz, "1800-01-01T00:00:00Z", -17762);

	assert_int_equal(
	        sked__tz_next_transition(tz, at("2026-01-01T00:00:00Z"), &t),
	        1);
	assert_true(t == at("2026-03-08T07:00:00Z"));
	assert_int_equal(sked__tz_next_transition(tz, t, &t), 1);
	assert_true(t == at("2026-11-01T06:00:00Z"));
	assert_int_equal(sked__tz_prev_transition(tz, t, &t), 1);
	assert_true(t == at("2026-11-01T06:00:00Z"));
	assert_int_equal(sked__tz_prev_transition(tz, t - 1, &t), 1);
	assert_true(t == at("2026-03-08T07:00:00Z"));
	/* Footer transitions, 2045: 12 March and 5 November. */
	assert_int_equal(
	        sked__tz_next_transition(tz, at("2045-01-01T00:00:00Z"), &t),
	        1);
	assert_true(t == at("2045-03-12T07:00:00Z"));
	assert_int_equal(sked__tz_next_transition(tz, t, &t), 1);
	assert_true(t == at("2045-11-05T06:00:00Z"));
	assert_int_equal(
	        sked__tz_prev_transition(tz, at("2045-06-01T00:00:00Z"), &t),
	        1);
	assert_true(t == at("2045-03-12T07:00:00Z"));
	sked__tz_free(tz);
}

static void
test_london_berlin(void **state)
{
	sked_tz *lon = load("Europe/London");
	sked_tz *ber = load("Europe/Berlin");

	expect_offset(lon, "2026-01-01T00:00:00Z", 0);
	expect_offset(lon, "2026-03-29T00:59:59Z", 0);
	expect_offset(lon, "2026-03-29T01:00:00Z", 3600);
	expect_offset(lon, "2026-10-25T00:59:59Z", 3600);
	expect_offset(lon, "2026-10-25T01:00:00Z", 0);
	expect_offset(lon, "2045-07-01T12:00:00Z", 3600); /* GMT0BST,... */
	expect_offset(lon, "2045-12-01T12:00:00Z", 0);

	expect_offset(ber, "2026-01-01T00:00:00Z", 3600);
	expect_offset(ber, "2026-07-01T00:00:00Z", 7200);
	expect_offset(ber, "2026-03-29T01:00:00Z", 7200);
	expect_offset(ber, "2026-10-25T00:59:59Z", 7200);
	expect_offset(ber, "2026-10-25T01:00:00Z", 3600);
	/* Footer "CET-1CEST,M3.5.0,M10.5.0/3": 2040 switches on 25 March
	 * and 28 October, at 01:00Z both times. */
	expect_offset(ber, "2040-03-25T00:59:59Z", 3600);
	expect_offset(ber, "2040-03-25T01:00:00Z", 7200);
	expect_offset(ber, "2040-10-28T00:59:59Z", 7200);
	expect_offset(ber, "2040-10-28T01:00:00Z", 3600);
	sked__tz_free(lon);
	sked__tz_free(ber);
}

static void
test_sydney(void **state)
{
	sked_tz *tz = load("Australia/Sydney");

	/* Southern hemisphere: daylight time spans the new year. */
	expect_offset(tz, "2026-01-01T00:00:00Z", 11 * 3600);
	expect_offset(tz, "2026-07-01T00:00:00Z", 10 * 3600);
	/* Fall back 5 April 2026, 03:00 AEDT = 16:00Z on the 4th. */
	expect_offset(tz, "2026-04-04T15:59:59Z", 11 * 3600);
	expect_offset(tz, "2026-04-04T16:00:00Z", 10 * 3600);
	/* Spring forward 4 October 2026, 02:00 AEST = 16:00Z on the 3rd. */
	expect_offset(tz, "2026-10-03T15:59:59Z", 10 * 3600);
	expect_offset(tz, "2026-10-03T16:00:00Z", 11 * 3600);
	/* Footer "AEST-10AEDT,M10.1.0,M4.1.0/3" in 2050: 1 January is
	 * summer, 1 July winter; DST ends 3 April 2050 (first Sunday). */
	expect_offset(tz, "2050-01-01T00:00:00Z", 11 * 3600);
	expect_offset(tz, "2050-07-01T00:00:00Z", 10 * 3600);
	expect_offset(tz, "2050-04-02T15:59:59Z", 11 * 3600);
	expect_offset(tz, "2050-04-02T16:00:00Z", 10 * 3600);
	sked__tz_free(tz);
}

static void
test_local_to_utc(void **state)
{
	sked_tz *ny = load("America/New_York");
	sked_tz *syd = load("Australia/Sydney");
	int64_t out[2];

	/* Normal: 2026-07-01 12:00 EDT is 16:00Z. */
	assert_int_equal(
	        sked__tz_local_to_utc(ny, at("2026-07-01T12:00:00Z"), out), 1);
	assert_true(out[0] == at("2026-07-01T16:00:00Z"));
	/* Gap: 02:30 on 8 March 2026 never shows in New York. */
	assert_int_equal(
	        sked__tz_local_to_utc(ny, at("2026-03-08T02:30:00Z"), out), 0);
	/* Overlap: 01:30 on 1 November 2026 shows at 05:30Z (EDT) and
	 * again at 06:30Z (EST). */
	assert_int_equal(
	        sked__tz_local_to_utc(ny, at("2026-11-01T01:30:00Z"), out), 2);
	assert_true(out[0] == at("2026-11-01T05:30:00Z"));
	assert_true(out[1] == at("2026-11-01T06:30:00Z"));
	/* Sydney: 02:30 on 5 April 2026 is 15:30Z (AEDT) and 16:30Z. */
	assert_int_equal(
	        sked__tz_local_to_utc(syd, at("2026-04-05T02:30:00Z"), out), 2);
	assert_true(out[0] == at("2026-04-04T15:30:00Z"));
	assert_true(out[1] == at("2026-04-04T16:30:00Z"));
	assert_int_equal(
	        sked__tz_local_to_utc(syd, at("2026-10-04T02:30:00Z"), out), 0);
	sked__tz_free(ny);
	sked__tz_free(syd);
}

static void
test_bad_names(void **state)
{
	static const char *const bad[] = {
	        "",
	        "/etc/passwd",
	        "../etc/passwd",
	        "Europe/../../etc/passwd",
	        "Europe/Ber lin",
	        "Europe/Berlin\n",
	        "Europe\\Berlin",
	        "Europe/Berlin;rm",
	        "Europe/Bérlin",
	};
	char err[128];
	sked_tz *tz = (sked_tz *)&err; /* must come back NULL */
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(sked__tz_name_valid(bad[i]));
		assert_int_equal(sked__tz_load(bad[i], &tz, err, sizeof(err)),
		                 SKED_ETZ);
		assert_null(tz);
		assert_non_null(strstr(err, "invalid time zone name"));
		assert_null(strchr(err, '\n'));
	}
	assert_false(sked__tz_name_valid(NULL));
	assert_true(sked__tz_name_valid("America/Argentina/Buenos_Aires"));
	assert_true(sked__tz_name_valid("Etc/GMT+5"));

	assert_int_equal(sked__tz_load("Mars/Base", &tz, err, sizeof(err)),
	                 SKED_ETZ);
	assert_string_equal(err, "unknown time zone 'Mars/Base'");
	/* A directory is not a zone. */
	assert_int_equal(sked__tz_load("America", &tz, err, sizeof(err)),
	                 SKED_ETZ);
	assert_string_equal(err, "unknown time zone 'America'");
	/* err may be NULL. */
	assert_int_equal(sked__tz_load("Mars/Base", &tz, NULL, 0), SKED_ETZ);
	sked__tz_free(NULL);
}

/* ---- hand-made TZif files ------------------------------------------ */

static char tzdir[256];

static void
put32(unsigned char **p, uint32_t v)
{
	(*p)[0] = (unsigned char)(v >> 24);
	(*p)[1] = (unsigned char)(v >> 16);
	(*p)[2] = (unsigned char)(v >> 8);
	(*p)[3] = (unsigned char)v;
	*p += 4;
}

static void
put64(unsigned char **p, int64_t v)
{
	put32(p, (uint32_t)((uint64_t)v >> 32));
	put32(p, (uint32_t)v);
}

/* Header: version byte, then counts isut isstd leap time type char. */
static void
header(unsigned char **p, char version, uint32_t leap, uint32_t ntime,
       uint32_t ntype, uint32_t nchar)
{
	memcpy(*p, "TZif", 4);
	(*p)[4] = (unsigned char)version;
	memset(*p + 5, 0, 15);
	*p += 20;
	put32(p, 0);
	put32(p, 0);
	put32(p, leap);
	put32(p, ntime);
	put32(p, ntype);
	put32(p, nchar);
}

static void
write_zone(const char *name, const unsigned char *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tzdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* A version-2 file with no transitions and one type: all in the footer. */
static void
write_footer_zone(const char *name, int32_t utoff, const char *footer)
{
	unsigned char buf[512], *p = buf;

	header(&p, '2', 0, 0, 1, 4);
	memcpy(p, "\0\0\0\0\0\0XXX\0", 10); /* wrong v1 data: must be skipped */
	p += 10;
	header(&p, '2', 0, 0, 1, 4);
	put32(&p, (uint32_t)utoff);
	*p++ = 0;
	*p++ = 0;
	memcpy(p, "XXX\0", 4);
	p += 4;
	p += (size_t)sprintf((char *)p, "\n%s\n", footer);
	write_zone(name, buf, (size_t)(p - buf));
}

static int
setup_tzdir(void **state)
{
	char *base = getenv("SKED_TEST_TMP");
	unsigned char buf[512], *p = buf;

	snprintf(tzdir, sizeof(tzdir), "%s/sked-tz-XXXXXX",
	         base && *base ? base : "/tmp");
	if (base && *base)
		mkdir(base, 0777);
	if (!mkdtemp(tzdir))
		return -1;
	snprintf((char *)buf, sizeof(buf), "%s/Test", tzdir);
	mkdir((char *)buf, 0777);

	/* Version 1: two transitions, 32-bit times, no footer. Offset
	 * +1 h before 1e9, +2 h from 1e9, +1 h again from 1.1e9. */
	header(&p, 0, 0, 2, 2, 8);
	put32(&p, 1000000000);
	put32(&p, 1100000000);
	*p++ = 1;
	*p++ = 0;
	put32(&p, 3600);
	*p++ = 0;
	*p++ = 0;
	put32(&p, 7200);
	*p++ = 1;
	*p++ = 4;
	memcpy(p, "AAA\0BBB\0", 8);
	p += 8;
	write_zone("Test/V1", buf, (size_t)(p - buf));

	/* Version 2, the 64-bit block holds a transition before 1901 that
	 * 32 bits cannot: -1 h until -3e9, then +3 h, footer "<+03>-3". */
	p = buf;
	header(&p, '2', 0, 0, 1, 4);
	put32(&p, 0);
	*p++ = 0;
	*p++ = 0;
	memcpy(p, "ZZZ\0", 4);
	p += 4;
	header(&p, '2', 0, 1, 2, 8);
	put64(&p, INT64_C(-3000000000));
	*p++ = 1;
	put32(&p, (uint32_t)-3600);
	*p++ = 0;
	*p++ = 0;
	put32(&p, 10800);
	*p++ = 0;
	*p++ = 4;
	memcpy(p, "AAA\0BBB\0", 8);
	p += 8;
	p += (size_t)sprintf((char *)p, "\n<+03>-3\n");
	write_zone("Test/V2", buf, (size_t)(p - buf));

	write_footer_zone("Test/Sydney", 36000, "AEST-10AEDT,M10.1.0,M4.1.0/3");
	/* Version 3 allows rule times beyond 24 h: Israel's 26:00. */
	write_footer_zone("Test/Israel", 7200, "IST-2IDT,M3.4.4/26,M10.5.0");
	write_footer_zone("Test/BadFooter", 3600, "CET-1CEST,M3.5");

	/* Truncated: a header promising more than there is. */
	p = buf;
	header(&p, '2', 0, 5, 1, 4);
	write_zone("Test/Truncated", buf, (size_t)(p - buf));
	write_zone("Test/NotTZif", (const unsigned char *)"hello world", 11);

	/* Leap-second records, as in the right/ tree. */
	p = buf;
	header(&p, 0, 1, 0, 1, 4);
	put32(&p, 0);
	*p++ = 0;
	*p++ = 0;
	memcpy(p, "UTC\0", 4);
	p += 4;
	put32(&p, 78796800);
	put32(&p, 1);
	write_zone("Test/Leap", buf, (size_t)(p - buf));

	setenv("TZDIR", tzdir, 1);
	return 0;
}

static int
teardown_tzdir(void **state)
{
	static const char *const names[] = {"V1",      "V2",        "Sydney",
	                                    "Israel",  "BadFooter", "Truncated",
	                                    "NotTZif", "Leap"};
	char path[512];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/Test/%s", tzdir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/Test", tzdir);
	rmdir(path);
	rmdir(tzdir);
	unsetenv("TZDIR");
	return 0;
}

static void
test_tzif_v1(void **state)
{
	sked_tz *tz = load("Test/V1");
	int64_t t;

	assert_int_equal(sked__tz_offset_at(tz, 999999999), 3600);
	assert_int_equal(sked__tz_offset_at(tz, 1000000000), 7200);
	assert_int_equal(sked__tz_offset_at(tz, 1099999999), 7200);
	assert_int_equal(sked__tz_offset_at(tz, 1100000000), 3600);
	/* No footer: the last offset holds for ever. */
	assert_int_equal(sked__tz_offset_at(tz, INT64_C(5000000000)), 3600);
	assert_int_equal(sked__tz_next_transition(tz, 0, &t), 1);
	assert_true(t == 1000000000);
	assert_int_equal(sked__tz_next_transition(tz, 1100000000, &t), 0);
	assert_int_equal(sked__tz_prev_transition(tz, 5, &t), 0);
	sked__tz_free(tz);
}

static void
test_tzif_v2(void **state)
{
	sked_tz *tz = load("Test/V2");

	assert_int_equal(sked__tz_offset_at(tz, INT64_C(-3000000001)), -3600);
	assert_int_equal(sked__tz_offset_at(tz, INT64_C(-3000000000)), 10800);
	assert_int_equal(sked__tz_offset_at(tz, at("2030-01-01T00:00:00Z")),
	                 10800);
	sked__tz_free(tz);
}

static void
test_tzif_footer_only(void **state)
{
	sked_tz *syd = load("Test/Sydney");
	sked_tz *isr = load("Test/Israel");
	int64_t t;

	/* Same instants as the real Sydney, from the rule alone. */
	expect_offset(syd, "2026-01-01T00:00:00Z", 39600);
	expect_offset(syd, "2026-04-04T15:59:59Z", 39600);
	expect_offset(syd, "2026-04-04T16:00:00Z", 36000);
	expect_offset(syd, "2026-10-03T16:00:00Z", 39600);
	assert_int_equal(
	        sked__tz_next_transition(syd, at("2026-05-01T00:00:00Z"), &t),
	        1);
	assert_true(t == at("2026-10-03T16:00:00Z"));
	/* "M3.4.4/26": the fourth Thursday of March 2026 is the 26th;
	 * 26:00 IST that day is Friday 27 March 02:00 IST = 00:00Z.
	 * "M10.5.0" (02:00 IDT, last Sunday, 25 October) = 23:00Z on
	 * the 24th. zdump on Asia/Jerusalem agrees. */
	expect_offset(isr, "2026-03-26T23:59:59Z", 7200);
	expect_offset(isr, "2026-03-27T00:00:00Z", 10800);
	expect_offset(isr, "2026-10-24T22:59:59Z", 10800);
	expect_offset(isr, "2026-10-24T23:00:00Z", 7200);
	sked__tz_free(syd);
	sked__tz_free(isr);
}

static void
test_tzif_malformed(void **state)
{
	static const char *const names[] = {"Test/BadFooter", "Test/Truncated",
	                                    "Test/NotTZif"};
	char err[160];
	sked_tz *tz;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(sked__tz_load(names[i], &tz, err, sizeof(err)),
		                 SKED_ETZ);
		assert_null(tz);
		assert_non_null(strstr(err, names[i]));
	}
	assert_int_equal(sked__tz_load("Test/Leap", &tz, err, sizeof(err)),
	                 SKED_ETZ);
	assert_non_null(strstr(err, "leap seconds"));
}

static void
test_utc_builtin(void **state)
{
	sked_tz *tz;
	char err[128];
	int64_t out[2], t;

	/* $TZDIR points at our private tree: no UTC file there. */
	tz = load("UTC");
	assert_int_equal(sked__tz_offset_at(tz, at("2026-07-01T00:00:00Z")), 0);
	assert_int_equal(sked__tz_local_to_utc(tz, 12345, out), 1);
	assert_true(out[0] == 12345);
	assert_int_equal(sked__tz_next_transition(tz, 0, &t), 0);
	sked__tz_free(tz);
	tz = load("Etc/UTC");
	assert_int_equal(sked__tz_offset_at(tz, 0), 0);
	sked__tz_free(tz);
	assert_int_equal(sked__tz_load("Europe/Berlin", &tz, err, sizeof(err)),
	                 SKED_ETZ);
}

int
main(void)
{
	const struct CMUnitTest system_zones[] = {
	        cmocka_unit_test(test_new_york),
	        cmocka_unit_test(test_london_berlin),
	        cmocka_unit_test(test_sydney),
	        cmocka_unit_test(test_local_to_utc),
	        cmocka_unit_test(test_bad_names),
	};
	const struct CMUnitTest private_zones[] = {
	        cmocka_unit_test(test_tzif_v1),
	        cmocka_unit_test(test_tzif_v2),
	        cmocka_unit_test(test_tzif_footer_only),
	        cmocka_unit_test(test_tzif_malformed),
	        cmocka_unit_test(test_utc_builtin),
	};
	int failed;

	unsetenv("TZDIR");
	failed = cmocka_run_group_tests_name("tz/system", system_zones, NULL,
	                                     NULL);
	failed += cmocka_run_group_tests_name("tz/tzif", private_zones,
	                                      setup_tzdir, teardown_tzdir);
	return failed;
}
