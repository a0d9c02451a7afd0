/* Tests for proto/cond.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/cond.h"
#include "proto/httpdate.h"
#include "tests/unit/check_run.h"

#define MTIME ((time_t)784111777) /* Sun, 06 Nov 1994 08:49:37 GMT */
#define ETAG "\"1-a\""

static char date_buf[4][HTTPDATE_LEN + 1];

/* An HTTP date for t, in one of four rotating buffers. */
static const char *date(time_t t)
{
	static int k;
	char *b = date_buf[k++ % 4];

	httpdate_format(t, b);
	return b;
}

static struct cond_headers h;

static void reset(void)
{
	memset(&h, 0, sizeof(h));
}

#define SET(field, v)                                                                              \
	do {                                                                                       \
		h.field = (v);                                                                     \
		h.field##_len = strlen(v);                                                         \
	} while (0)

static enum cond_result eval(void)
{
	return cond_evaluate(&h, ETAG, MTIME);
}

START_TEST(etag_format_exact)
{
	char out[ETAG_MAX];

	/* settled: nginx's "mtime-size" */
	etag_format(out, sizeof(out), 0x1234, 10, 1, 5, false);
	ck_assert_str_eq(out, ETAG);
	etag_format(out, sizeof(out), 0xABCDEF, 0xFF, 0, 0, false);
	ck_assert_str_eq(out, "\"0-ff\"");
	etag_format(out, sizeof(out), 1, 1, 1700000000, 123456789, false);
	ck_assert_str_eq(out, "\"6553f100-1\"");
	/* recent: the inode and the nanoseconds too */
	etag_format(out, sizeof(out), 1, 1, 1700000000, 123456789, true);
	ck_assert_str_eq(out, "\"6553f100-1-1-75bcd15\"");
	/* pre-1970: wraps as unsigned, still a valid tag */
	etag_format(out, sizeof(out), 1, 1, -1, 0, false);
	ck_assert_str_eq(out, "\"ffffffffffffffff-1\"");
	/* the longest tag fits ETAG_MAX */
	etag_format(out, sizeof(out), UINT64_MAX, UINT64_MAX, INT64_MIN, 999999999, true);
	ck_assert_uint_lt(strlen(out), ETAG_MAX);
	ck_assert_str_eq(out, "\"8000000000000000-ffffffffffffffff-ffffffffffffffff-3b9ac9ff\"");
	/* a short buffer is truncated, never overrun */
	etag_format(out, 5, 0x1234, 10, 1, 5, false);
	ck_assert_str_eq(out, "\"1-a");
}
END_TEST

START_TEST(no_conditionals)
{
	reset();
	ck_assert_int_eq(eval(), COND_PROCEED);
}
END_TEST

START_TEST(if_match)
{
	reset();
	SET(if_match, ETAG);
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_match, "*");
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_match, " * ");
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_match, "\"other\"");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_match, "\"other\", " ETAG);
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_match, "\"a\" ,\t,  " ETAG " , \"b\"");
	ck_assert_int_eq(eval(), COND_PROCEED);
	/* strong comparison: weak tags never match */
	SET(if_match, "W/" ETAG);
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	/* the opaque-tag includes its quotes: no partial or unquoted match */
	SET(if_match, "1234-a-3b9aca05");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_match, "\"1234-a-3b9aca0\"");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	/* malformed lists match nothing */
	SET(if_match, ETAG " " ETAG);
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_match, ETAG ", \"unterminated");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_match, "*, " ETAG);
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_match, "");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	/* a weak current tag never passes a strong comparison */
	SET(if_match, "W/\"x\"");
	ck_assert_int_eq(cond_evaluate(&h, "W/\"x\"", MTIME), COND_PRECONDITION_FAILED);
	SET(if_match, "\"x\"");
	ck_assert_int_eq(cond_evaluate(&h, "W/\"x\"", MTIME), COND_PRECONDITION_FAILED);
}
END_TEST

START_TEST(etagc_characters)
{
	reset();
	SET(if_none_match, "\"a b\"");
	ck_assert_int_eq(cond_evaluate(&h, "\"a b\"", MTIME), COND_PROCEED);
	SET(if_none_match, "\"caf\xc3\xa9\"");
	ck_assert_int_eq(cond_evaluate(&h, "\"caf\xc3\xa9\"", MTIME), COND_NOT_MODIFIED);
	SET(if_none_match, "\"\"");
	ck_assert_int_eq(cond_evaluate(&h, "\"\"", MTIME), COND_NOT_MODIFIED);
	SET(if_none_match, "\"a\x7f\"");
	ck_assert_int_eq(cond_evaluate(&h, "\"a\x7f\"", MTIME), COND_PROCEED);
}
END_TEST

START_TEST(if_unmodified_since)
{
	reset();
	SET(if_unmodified_since, date(MTIME));
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_unmodified_since, date(MTIME + 1));
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_unmodified_since, date(MTIME - 1));
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_unmodified_since, "Sun, 06 Nov 1994 08:49:36 GMT");
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_unmodified_since, "yesterday");
	ck_assert_int_eq(eval(), COND_PROCEED);
	/* ignored when If-Match is present */
	SET(if_unmodified_since, date(MTIME - 1));
	SET(if_match, ETAG);
	ck_assert_int_eq(eval(), COND_PROCEED);
}
END_TEST

START_TEST(if_none_match)
{
	reset();
	SET(if_none_match, ETAG);
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	/* weak comparison */
	SET(if_none_match, "W/" ETAG);
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	ck_assert_int_eq(cond_evaluate(&h, "W/\"x\"", MTIME), COND_PROCEED);
	SET(if_none_match, "\"x\"");
	ck_assert_int_eq(cond_evaluate(&h, "W/\"x\"", MTIME), COND_NOT_MODIFIED);
	SET(if_none_match, "*");
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	SET(if_none_match, "\"a\", W/\"b\",  " ETAG);
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	SET(if_none_match, "\"a\", W/\"b\"");
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_none_match, "w/" ETAG); /* "W" is case-sensitive */
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_none_match, "garbage");
	ck_assert_int_eq(eval(), COND_PROCEED);
}
END_TEST

START_TEST(if_modified_since)
{
	time_t now = time(NULL);

	reset();
	SET(if_modified_since, date(MTIME));
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	SET(if_modified_since, date(MTIME + 100));
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	SET(if_modified_since, date(MTIME - 1));
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_modified_since, "  Sun, 06 Nov 1994 08:49:37 GMT\t");
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	SET(if_modified_since, "not a date");
	ck_assert_int_eq(eval(), COND_PROCEED);
	SET(if_modified_since, "");
	ck_assert_int_eq(eval(), COND_PROCEED);
	/* a date later than our clock is ignored */
	SET(if_modified_since, date(now + 3600));
	ck_assert_int_eq(cond_evaluate(&h, ETAG, now - 10), COND_PROCEED);
	SET(if_modified_since, date(now - 5));
	ck_assert_int_eq(cond_evaluate(&h, ETAG, now - 10), COND_NOT_MODIFIED);
	/* ignored when If-None-Match is present, even one that fails */
	SET(if_modified_since, date(MTIME));
	SET(if_none_match, "\"other\"");
	ck_assert_int_eq(eval(), COND_PROCEED);
}
END_TEST

START_TEST(evaluation_order)
{
	/* If-Match failing wins over If-None-Match matching */
	reset();
	SET(if_match, "\"other\"");
	SET(if_none_match, ETAG);
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	/* passing If-Match, then If-None-Match decides */
	SET(if_match, ETAG);
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
	/* If-Unmodified-Since failing wins over If-Modified-Since */
	reset();
	SET(if_unmodified_since, date(MTIME - 1));
	SET(if_modified_since, date(MTIME));
	ck_assert_int_eq(eval(), COND_PRECONDITION_FAILED);
	SET(if_unmodified_since, date(MTIME));
	ck_assert_int_eq(eval(), COND_NOT_MODIFIED);
}
END_TEST

static bool if_range(const char *v)
{
	return cond_if_range_matches(v, strlen(v), ETAG, MTIME);
}

START_TEST(if_range_etag)
{
	ck_assert(if_range(ETAG));
	ck_assert(if_range(" " ETAG " "));
	ck_assert(!if_range("W/" ETAG));
	ck_assert(!if_range("\"other\""));
	ck_assert(!if_range(ETAG ", " ETAG));
	ck_assert(!if_range("\"1234-a-3b9aca05"));
	ck_assert(!if_range("*"));
	ck_assert(!if_range(""));
	/* a weak current tag is never good enough for a range */
	ck_assert(!cond_if_range_matches("W/\"x\"", 6, "W/\"x\"", MTIME));
	ck_assert(!cond_if_range_matches("\"x\"", 3, "W/\"x\"", MTIME));
}
END_TEST

START_TEST(if_range_date)
{
	time_t wed = MTIME + 3 * 86400;

	ck_assert(if_range(date(MTIME)));
	ck_assert(if_range("Sun, 06 Nov 1994 08:49:37 GMT"));
	ck_assert(!if_range(date(MTIME + 1)));
	ck_assert(!if_range(date(MTIME - 1)));
	ck_assert(!if_range("Sun, 06 Nov 1994"));
	/* "Wed" starts with W but is a date, not a weak tag */
	ck_assert_str_eq(date(wed), "Wed, 09 Nov 1994 08:49:37 GMT");
	ck_assert(cond_if_range_matches(date(wed), HTTPDATE_LEN, ETAG, wed));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cond");
	TCase *tc = tcase_create("cond");
	tcase_add_test(tc, etag_format_exact);
	tcase_add_test(tc, no_conditionals);
	tcase_add_test(tc, if_match);
	tcase_add_test(tc, etagc_characters);
	tcase_add_test(tc, if_unmodified_since);
	tcase_add_test(tc, if_none_match);
	tcase_add_test(tc, if_modified_since);
	tcase_add_test(tc, evaluation_order);
	tcase_add_test(tc, if_range_etag);
	tcase_add_test(tc, if_range_date);
	suite_add_tcase(s, tc);
	return check_run(s);
}
