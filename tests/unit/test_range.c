/* Tests for proto/range.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/range.h"
#include "tests/unit/check_run.h"

#define GIB (UINT64_C(1) << 30)

static struct byte_range r[8];
static size_t n;

static enum range_result parse(const char *v, uint64_t size)
{
	memset(r, 0xa5, sizeof(r));
	n = 99;
	return range_parse(v, strlen(v), size, r, 8, &n);
}

static enum range_result parse_max(const char *v, uint64_t size, size_t max)
{
	n = 99;
	return range_parse(v, strlen(v), size, r, max, &n);
}

#define ASSERT_RANGE(i, a, b)                                                                      \
	do {                                                                                       \
		ck_assert_uint_eq(r[i].first, (a));                                                \
		ck_assert_uint_eq(r[i].last, (b));                                                 \
	} while (0)

START_TEST(single_forms)
{
	ck_assert_int_eq(parse("bytes=0-499", 10000), RANGE_OK);
	ck_assert_uint_eq(n, 1);
	ASSERT_RANGE(0, 0, 499);
	ck_assert_int_eq(parse("bytes=9500-", 10000), RANGE_OK);
	ASSERT_RANGE(0, 9500, 9999);
	ck_assert_int_eq(parse("bytes=-500", 10000), RANGE_OK);
	ASSERT_RANGE(0, 9500, 9999);
	ck_assert_int_eq(parse("bytes=5-5", 10), RANGE_OK);
	ASSERT_RANGE(0, 5, 5);
}
END_TEST

START_TEST(unit_case_insensitive)
{
	ck_assert_int_eq(parse("BYTES=1-2", 10), RANGE_OK);
	ck_assert_int_eq(parse("Bytes=1-2", 10), RANGE_OK);
	ASSERT_RANGE(0, 1, 2);
	ck_assert_int_eq(parse("items=1-2", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytesx=1-2", 10), RANGE_NONE);
	ck_assert_int_eq(parse("byte=1-2", 10), RANGE_NONE);
}
END_TEST

START_TEST(clamping)
{
	ck_assert_int_eq(parse("bytes=5-100", 10), RANGE_OK);
	ASSERT_RANGE(0, 5, 9);
	ck_assert_int_eq(parse("bytes=-100", 10), RANGE_OK);
	ASSERT_RANGE(0, 0, 9);
	ck_assert_int_eq(parse("bytes=0-18446744073709551615", 10), RANGE_OK);
	ASSERT_RANGE(0, 0, 9);
}
END_TEST

START_TEST(lists_and_whitespace)
{
	ck_assert_int_eq(parse("bytes=0-1, 4-5,\t8-", 10), RANGE_OK);
	ck_assert_uint_eq(n, 3);
	ASSERT_RANGE(0, 0, 1);
	ASSERT_RANGE(1, 4, 5);
	ASSERT_RANGE(2, 8, 9);
	ck_assert_int_eq(parse("bytes=0-1,,2-3", 10), RANGE_OK);
	ck_assert_uint_eq(n, 2);
	ASSERT_RANGE(1, 2, 3);
	ck_assert_int_eq(parse("bytes=,0-1 , ,2-3, ", 10), RANGE_OK);
	ck_assert_uint_eq(n, 2);
	/* order is the client's, not sorted */
	ck_assert_int_eq(parse("bytes=6-7,0-1", 10), RANGE_OK);
	ASSERT_RANGE(0, 6, 7);
	ASSERT_RANGE(1, 0, 1);
}
END_TEST

START_TEST(syntax_errors)
{
	const char *bad[] = {
	    "",           "bytes",       "bytes=",     "bytes=,",     "bytes= ,, ",
	    "bytes=a-b",  "bytes=1",     "bytes=-",    "bytes=1-2-3", "bytes=1-2 3-4",
	    "bytes =1-2", "bytes= 1 -2", "bytes=1- 2", "bytes=--1",   "bytes=+1-2",
	    "bytes=1-2;", "bytes=0x1-2", "bytes=-1-2", "bytes=1-2,x", "bytes=1.5-2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i], 10) == RANGE_NONE, "accepted \"%s\"", bad[i]);
		ck_assert_uint_eq(n, 0);
	}
}
END_TEST

START_TEST(first_after_last_is_invalid)
{
	ck_assert_int_eq(parse("bytes=5-4", 10), RANGE_NONE);
	/* even when another member is fine: the whole header is invalid */
	ck_assert_int_eq(parse("bytes=0-1,5-4", 10), RANGE_NONE);
	/* invalid beats unsatisfiable */
	ck_assert_int_eq(parse("bytes=50-40", 10), RANGE_NONE);
}
END_TEST

START_TEST(unsatisfiable)
{
	ck_assert_int_eq(parse("bytes=10-", 10), RANGE_UNSATISFIABLE);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(parse("bytes=10-20", 10), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=-0", 10), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=-0, 20-30", 10), RANGE_UNSATISFIABLE);
	/* unsatisfiable members are dropped, the rest served */
	ck_assert_int_eq(parse("bytes=20-30,2-3,-0", 10), RANGE_OK);
	ck_assert_uint_eq(n, 1);
	ASSERT_RANGE(0, 2, 3);
}
END_TEST

START_TEST(empty_file)
{
	/* our choice, as nginx: a valid Range on a 0-byte file is 416 */
	ck_assert_int_eq(parse("bytes=0-", 0), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=-5", 0), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=0-0", 0), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=x", 0), RANGE_NONE);
}
END_TEST

START_TEST(overflow)
{
	/* 2^64 - 1 fits, 2^64 does not */
	ck_assert_int_eq(parse("bytes=18446744073709551615-", 10), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=18446744073709551616-", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=0-18446744073709551616", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=-18446744073709551616", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=99999999999999999999999-", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=-18446744073709551615", 10), RANGE_OK);
	ASSERT_RANGE(0, 0, 9);
	/* leading zeros are digits, not overflow */
	ck_assert_int_eq(parse("bytes=000000000000000000000000001-2", 10), RANGE_OK);
	ASSERT_RANGE(0, 1, 2);
}
END_TEST

START_TEST(beyond_4gib)
{
	uint64_t size = 6 * GIB;

	ck_assert_int_eq(parse("bytes=5368709120-5368709129", size), RANGE_OK);
	ASSERT_RANGE(0, 5 * GIB, 5 * GIB + 9);
	ck_assert_int_eq(parse("bytes=-10", size), RANGE_OK);
	ASSERT_RANGE(0, size - 10, size - 1);
	ck_assert_int_eq(parse("bytes=4294967296-", size), RANGE_OK);
	ASSERT_RANGE(0, 4 * GIB, size - 1);
	ck_assert_int_eq(parse("bytes=6442450944-", size), RANGE_UNSATISFIABLE);
	ck_assert_int_eq(parse("bytes=6442450943-", size), RANGE_OK);
	ASSERT_RANGE(0, size - 1, size - 1);
}
END_TEST

START_TEST(too_many_members)
{
	ck_assert_int_eq(parse_max("bytes=0-0,1-1,2-2", 10, 3), RANGE_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(parse_max("bytes=0-0,1-1,2-2,3-3", 10, 3), RANGE_NONE);
	ck_assert_uint_eq(n, 0);
	/* unsatisfiable members count too: they cost parsing all the same */
	ck_assert_int_eq(parse_max("bytes=0-0,1-1,2-2,50-60", 10, 3), RANGE_NONE);
	/* empty list elements do not */
	ck_assert_int_eq(parse_max("bytes=0-0,,1-1,,2-2,,", 10, 3), RANGE_OK);
	ck_assert_int_eq(parse_max("bytes=0-0", 10, 0), RANGE_NONE);
}
END_TEST

START_TEST(amplification)
{
	ck_assert_int_eq(parse("bytes=0-,0-", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=0-4,5-9", 10), RANGE_OK);
	ck_assert_int_eq(parse("bytes=0-5,5-9", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=-10,-1", 10), RANGE_NONE);
	ck_assert_int_eq(parse("bytes=0-2,1-3", 10), RANGE_OK); /* 6 <= 10: allowed */
	ck_assert_int_eq(parse("bytes=0-18446744073709551615,0-18446744073709551615", 6 * GIB),
	                 RANGE_NONE);
}
END_TEST

START_TEST(not_nul_terminated)
{
	const char buf[] = {'b', 'y', 't', 'e', 's', '=', '1', '-', '2', '9'};

	/* the trailing '9' is outside len */
	ck_assert_int_eq(range_parse(buf, 9, 100, r, 8, &n), RANGE_OK);
	ASSERT_RANGE(0, 1, 2);
	ck_assert_int_eq(range_parse(buf, 3, 100, r, 8, &n), RANGE_NONE);
	ck_assert_int_eq(range_parse(NULL, 0, 100, r, 8, &n), RANGE_NONE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("range");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, single_forms);
	tcase_add_test(tc, unit_case_insensitive);
	tcase_add_test(tc, clamping);
	tcase_add_test(tc, lists_and_whitespace);
	tcase_add_test(tc, syntax_errors);
	tcase_add_test(tc, first_after_last_is_invalid);
	tcase_add_test(tc, unsatisfiable);
	tcase_add_test(tc, empty_file);
	tcase_add_test(tc, overflow);
	tcase_add_test(tc, beyond_4gib);
	tcase_add_test(tc, too_many_members);
	tcase_add_test(tc, amplification);
	tcase_add_test(tc, not_nul_terminated);
	suite_add_tcase(s, tc);
	return check_run(s);
}
