/* Tests proto/status.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/status.h"
#include "tests/unit/check_run.h"

START_TEST(test_reasons)
{
	static const struct {
		int code;
		const char *reason;
	} cases[] = {
	    {200, "OK"},
	    {204, "No Content"},
	    {206, "Partial Content"},
	    {301, "Moved Permanently"},
	    {304, "Not Modified"},
	    {400, "Bad Request"},
	    {403, "Forbidden"},
	    {404, "Not Found"},
	    {405, "Method Not Allowed"},
	    {408, "Request Timeout"},
	    {412, "Precondition Failed"},
	    {413, "Content Too Large"},
	    {414, "URI Too Long"},
	    {416, "Range Not Satisfiable"},
	    {421, "Misdirected Request"},
	    {429, "Too Many Requests"},
	    {431, "Request Header Fields Too Large"},
	    {500, "Internal Server Error"},
	    {501, "Not Implemented"},
	    {503, "Service Unavailable"},
	    {505, "HTTP Version Not Supported"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_str_eq(status_reason(cases[i].code), cases[i].reason);
	ck_assert_str_eq(status_reason(0), "Unknown");
	ck_assert_str_eq(status_reason(418), "Unknown");
	ck_assert_str_eq(status_reason(-404), "Unknown");
}
END_TEST

START_TEST(test_page)
{
	static const char want[] = "<html><head><title>404 Not Found</title></head><body><h1>404 "
	                           "Not Found</h1></body></html>\n";
	char buf[256];

	ck_assert_uint_eq(status_page(404, buf, sizeof(buf)), strlen(want));
	ck_assert_str_eq(buf, want);

	size_t n = status_page(505, buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "<title>505 HTTP Version Not Supported</title>"));
	ck_assert_ptr_nonnull(strstr(buf, "<h1>505 HTTP Version Not Supported</h1>"));
	ck_assert_ptr_null(strstr(buf, "ktlsd"));

	n = status_page(599, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "<h1>599 Unknown</h1>"));
}
END_TEST

START_TEST(test_page_truncated)
{
	char buf[16];

	memset(buf, 'X', sizeof(buf));
	ck_assert_uint_eq(status_page(404, buf, sizeof(buf)), sizeof(buf) - 1);
	ck_assert_str_eq(buf, "<html><head><ti");

	ck_assert_uint_eq(status_page(404, buf, 1), 0);
	ck_assert_str_eq(buf, "");

	buf[0] = 'X';
	ck_assert_uint_eq(status_page(404, buf, 0), 0);
	ck_assert_int_eq(buf[0], 'X'); /* nothing written */

	/* exactly the length plus the NUL fits without loss */
	char exact[91];
	size_t full = status_page(404, exact, sizeof(exact));
	ck_assert_uint_eq(full, 90);
	ck_assert_uint_eq(status_page(404, exact, full + 1), full);
	ck_assert_uint_eq(status_page(404, exact, full), full - 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("status");
	TCase *tc = tcase_create("status");

	tcase_add_test(tc, test_reasons);
	tcase_add_test(tc, test_page);
	tcase_add_test(tc, test_page_truncated);
	suite_add_tcase(s, tc);

	return check_run(s);
}
