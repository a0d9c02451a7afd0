/* Tests server/acme/acme_http_resp.c: responses fed whole and a byte at a
 * time, the fields kept and their limits, Link's rel="up" among other
 * links, 1xx before the response, and the ways a response ends early. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/acme/acme_http_resp.h"
#include "tests/unit/check_run.h"

static struct acme_http_parse p;
static struct acme_http_resp r;
static char err[256];

/* Feeds s in pieces of step bytes (0: whole), then the end of the
 * connection when eof; returns the last answer. */
static int feed(const char *s, size_t step, bool eof, bool head_only)
{
	size_t n = strlen(s);
	int rc = 0;

	acme_http_resp_free(&r);
	acme_http_parse_init(&p, &r, head_only);
	err[0] = '\0';
	for (size_t at = 0; at < n && rc == 0; at += step ? step : n)
		rc = acme_http_parse(&p, s + at, step && n - at > step ? step : n - at, false, err,
		                     sizeof(err));
	if (rc == 0 && eof)
		rc = acme_http_parse(&p, NULL, 0, true, err, sizeof(err));
	return rc;
}

static const char chunked[] = "HTTP/1.1 201 Created\r\n"
                              "Content-Type: application/json\r\n"
                              "replay-nonce: nonce-1_x\r\n"
                              "Location: https://ca.example/acme/order/7   \r\n"
                              "Retry-After: 30\r\n"
                              "Link: <https://ca.example/dir>;rel=\"index\"\r\n"
                              "Link: <https://ca.example/issuer>; rel=\"up\"\r\n"
                              "Transfer-Encoding: chunked\r\n"
                              "\r\n"
                              "5\r\n{\"sta\r\n"
                              "a;ext=1\r\ntus\":\"ok\"}\r\n"
                              "0\r\n\r\n";

static void check_chunked(void)
{
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(r.content_type, "application/json");
	ck_assert_str_eq(r.nonce, "nonce-1_x");
	ck_assert_str_eq(r.location, "https://ca.example/acme/order/7");
	ck_assert_str_eq(r.retry_after, "30");
	ck_assert_str_eq(r.link_up, "https://ca.example/issuer");
	ck_assert_uint_eq(r.len, 15);
	ck_assert_str_eq(r.body, "{\"status\":\"ok\"}");
}

START_TEST(t_whole_and_bytewise)
{
	ck_assert_int_eq(feed(chunked, 0, false, false), 1);
	check_chunked();
	/* Every name, value and chunk split across reads. */
	ck_assert_int_eq(feed(chunked, 1, false, false), 1);
	check_chunked();
	ck_assert_int_eq(feed(chunked, 7, false, false), 1);
	check_chunked();
}
END_TEST

START_TEST(t_content_length_and_after)
{
	/* What follows the response is not read. */
	ck_assert_int_eq(
	    feed("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 500 x\r\n\r\n", 0, false,
	         false),
	    1);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "abc");
	ck_assert_str_eq(r.nonce, "");
	ck_assert_str_eq(r.link_up, "");
	/* No body at all still gives an empty string. */
	ck_assert_int_eq(feed("HTTP/1.1 204 No Content\r\n\r\n", 0, false, false), 1);
	ck_assert_ptr_nonnull(r.body);
	ck_assert_str_eq(r.body, "");
}
END_TEST

START_TEST(t_to_eof)
{
	static const char s[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n-----BEGIN";

	ck_assert_int_eq(feed(s, 0, false, false), 0);
	ck_assert_int_eq(acme_http_parse(&p, NULL, 0, true, err, sizeof(err)), 1);
	ck_assert_str_eq(r.body, "-----BEGIN");
}
END_TEST

START_TEST(t_head)
{
	ck_assert_int_eq(feed("HTTP/1.1 200 OK\r\nReplay-Nonce: n\r\nContent-Length: 100\r\n\r\n",
	                      0, false, true),
	                 1);
	ck_assert_str_eq(r.nonce, "n");
	ck_assert_uint_eq(r.len, 0);
}
END_TEST

START_TEST(t_early_hints)
{
	ck_assert_int_eq(
	    feed("HTTP/1.1 103 Early Hints\r\nLink: <https://a/x>; rel=up\r\n"
	         "Replay-Nonce: early\r\n\r\n"
	         "HTTP/1.1 200 OK\r\nReplay-Nonce: late\r\nContent-Length: 2\r\n\r\nok",
	         0, false, false),
	    1);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.nonce, "late");
	ck_assert_str_eq(r.link_up, "");
	ck_assert_str_eq(r.body, "ok");
}
END_TEST

static const char *link_of(const char *value)
{
	static char s[2048];

	snprintf(s, sizeof(s), "HTTP/1.1 200 OK\r\nLink: %s\r\nContent-Length: 0\r\n\r\n", value);
	ck_assert_int_eq(feed(s, 0, false, false), 1);
	return r.link_up;
}

START_TEST(t_link)
{
	ck_assert_str_eq(link_of("<https://a/1>;rel=\"up\""), "https://a/1");
	ck_assert_str_eq(link_of("<https://a/1>;rel=up"), "https://a/1");
	ck_assert_str_eq(link_of("<https://a/1>; rel=\"index\", <https://a/2>; rel=\"up\""),
	                 "https://a/2");
	ck_assert_str_eq(link_of("<https://a/1>; title=\"a, b; rel=up\"; rel=index, <https://a/2>;"
	                         " REL = \"alternate UP\""),
	                 "https://a/2");
	ck_assert_str_eq(link_of("<https://a/1>; rel=\"upper\", <https://a/2>; rel=\"alternate\""),
	                 "");
	ck_assert_str_eq(link_of("<https://a/1>; anchor=\"#up\"; rel=\"next\""), "");
	ck_assert_str_eq(link_of("garbage"), "");
	/* Two Link fields: the first up counts. */
	ck_assert_int_eq(feed("HTTP/1.1 200 OK\r\nLink: <https://a/1>;rel=\"alternate\"\r\n"
	                      "Link: <https://a/2>;rel=\"up\"\r\nLink: <https://a/3>;rel=\"up\"\r\n"
	                      "Content-Length: 0\r\n\r\n",
	                      0, false, false),
	                 1);
	ck_assert_str_eq(r.link_up, "https://a/2");
}
END_TEST

START_TEST(t_too_long)
{
	char *s = malloc(ACME_HTTP_HEAD_MAX + 200);
	char loc[1100];

	memset(loc, 'a', sizeof(loc) - 1);
	loc[sizeof(loc) - 1] = '\0';
	snprintf(s, 2048, "HTTP/1.1 201 Created\r\nLocation: https://%s\r\n\r\n", loc);
	ck_assert_int_eq(feed(s, 0, false, false), -EMSGSIZE);
	ck_assert_str_eq(err, "Location over 1023 bytes");
	/* An unkept field may be long; the head as a whole may not. */
	snprintf(s, 2048, "HTTP/1.1 200 OK\r\nX-Long: %s\r\nContent-Length: 0\r\n\r\n", loc);
	ck_assert_int_eq(feed(s, 0, false, false), 1);
	strcpy(s, "HTTP/1.1 200 OK\r\nX-Long: ");
	memset(s + strlen(s), 'b', ACME_HTTP_HEAD_MAX);
	strcpy(s + strlen("HTTP/1.1 200 OK\r\nX-Long: ") + ACME_HTTP_HEAD_MAX, "\r\n\r\n");
	ck_assert_int_eq(feed(s, 0, false, false), -EMSGSIZE);
	ck_assert_str_eq(err, "head over 64 KiB");
	free(s);
	/* A body over the cap, announced or sent. */
	ck_assert_int_eq(
	    feed("HTTP/1.1 200 OK\r\nContent-Length: 1048577\r\n\r\n", 0, false, false), -EMSGSIZE);
	ck_assert_str_eq(err, "over 1 MiB");
	ck_assert_int_eq(
	    feed("HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n", 0, false, false), 0);
	acme_http_resp_free(&r);
	acme_http_parse_init(&p, &r, false);
	ck_assert_int_eq(
	    acme_http_parse(&p, "HTTP/1.1 200 OK\r\n\r\n", 19, false, err, sizeof(err)), 0);
	char *big = calloc(1, 64 << 10);
	int rc = 0;

	memset(big, 'c', 64 << 10);
	for (int i = 0; i < 17 && rc == 0; i++)
		rc = acme_http_parse(&p, big, 64 << 10, false, err, sizeof(err));
	ck_assert_int_eq(rc, -EMSGSIZE);
	free(big);
}
END_TEST

START_TEST(t_ends_early)
{
	ck_assert_int_eq(
	    feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 0, true, false),
	    -EBADMSG);
	ck_assert_str_eq(err, "the connection ended before the body did");
	ck_assert_int_eq(feed("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab", 0, true, false),
	                 -EBADMSG);
	ck_assert_int_eq(feed("", 0, true, false), -EBADMSG);
	ck_assert_str_eq(err, "none: the connection was closed");
	ck_assert_int_eq(feed("SSH-2.0-OpenSSH\r\n", 0, false, false), -EBADMSG);
	ck_assert_msg(strncmp(err, "not HTTP/1.1: ", 14) == 0, "%s", err);
}
END_TEST

static Suite *acme_http_resp_suite(void)
{
	Suite *s = suite_create("acme_http_resp");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, t_whole_and_bytewise);
	tcase_add_test(tc, t_content_length_and_after);
	tcase_add_test(tc, t_to_eof);
	tcase_add_test(tc, t_head);
	tcase_add_test(tc, t_early_hints);
	tcase_add_test(tc, t_link);
	tcase_add_test(tc, t_too_long);
	tcase_add_test(tc, t_ends_early);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(acme_http_resp_suite());
}
