/* Tests proto/h1_parser.c: request heads whole, split at every byte, pipelined,
 * over each limit, and in each request-smuggling shape it must refuse. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/h1_parser.h"
#include "tests/unit/check_run.h"

static const struct h1_limits lim = {
    .max_header_bytes = 8192,
    .max_headers = 16,
    .max_uri = 1024,
};

static struct h1_parser P;

/* One feed of a NUL-terminated head. */
static enum h1_parse_result feed(const char *s, size_t *consumed)
{
	h1_parser_init(&P, &lim);
	return h1_parser_feed(&P, s, strlen(s), consumed);
}

/* Feeds s (len bytes) in pieces of step bytes until the parser is not
 * AGAIN; every AGAIN must have taken its whole piece. Returns the result,
 * *consumed is the total. */
static enum h1_parse_result feed_steps(const char *s, size_t len, size_t step, size_t *consumed)
{
	enum h1_parse_result r = H1_PARSE_AGAIN;
	size_t off = 0, used;

	while (off < len && r == H1_PARSE_AGAIN) {
		size_t n = len - off < step ? len - off : step;
		r = h1_parser_feed(&P, s + off, n, &used);
		if (r == H1_PARSE_AGAIN)
			ck_assert_uint_eq(used, n);
		off += used;
	}
	*consumed = off;
	return r;
}

/* The whole head must be refused with status. */
static void expect_error(const char *s, int status)
{
	size_t used;

	ck_assert_msg(feed(s, &used) == H1_PARSE_ERROR, "accepted: %s", s);
	ck_assert_int_eq(P.error_status, status);
	ck_assert_ptr_nonnull(P.error_reason);
	/* and the same when it comes one byte at a time */
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(feed_steps(s, strlen(s), 1, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, status);
}

#define ck_assert_h1str(s, want)                                                                   \
	do {                                                                                       \
		ck_assert_ptr_nonnull((s).ptr);                                                    \
		ck_assert_uint_eq((s).len, strlen(want));                                          \
		ck_assert_int_eq(memcmp((s).ptr, want, (s).len), 0);                               \
	} while (0)

START_TEST(test_simple_get)
{
	const char *s = "GET /index.html?x=1 HTTP/1.1\r\nHost: example.com\r\n\r\n";
	size_t used;

	ck_assert_int_eq(feed(s, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(used, strlen(s));
	ck_assert_int_eq(P.error_status, 0);
	ck_assert_int_eq(P.req.method, H1_GET);
	ck_assert_str_eq(P.req.method_name, "GET");
	ck_assert_uint_eq(P.req.version_major, 1);
	ck_assert_uint_eq(P.req.version_minor, 1);
	ck_assert(P.req.keep_alive);
	ck_assert(!P.req.has_body);
	ck_assert_h1str(P.req.target, "/index.html?x=1");
	ck_assert_h1str(P.req.host, "example.com");
	ck_assert_ptr_null(P.req.range.ptr);
	ck_assert_ptr_null(P.req.user_agent.ptr);
	/* fed again without a reset: still done, nothing more taken */
	ck_assert_int_eq(h1_parser_feed(&P, "GET", 3, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(used, 0);
}
END_TEST

START_TEST(test_head_and_leading_crlf)
{
	size_t used;

	/* RFC 9112 2.2: an empty line before the request line is ignored */
	ck_assert_int_eq(feed("\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert_int_eq(P.req.method, H1_HEAD);
	ck_assert_str_eq(P.req.method_name, "HEAD");
}
END_TEST

START_TEST(test_keep_alive)
{
	size_t used;

	ck_assert_int_eq(feed("GET / HTTP/1.0\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert_uint_eq(P.req.version_minor, 0);
	ck_assert(!P.req.keep_alive);
	ck_assert_int_eq(feed("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &used),
	                 H1_PARSE_DONE);
	ck_assert(P.req.keep_alive);
	ck_assert_int_eq(feed("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert(!P.req.keep_alive);
	ck_assert_int_eq(feed("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n", &used),
	                 H1_PARSE_DONE);
	ck_assert(!P.req.keep_alive);
}
END_TEST

START_TEST(test_pipelining)
{
	const char *s = "GET /a HTTP/1.1\r\nHost: a\r\n\r\n"
	                "HEAD /b HTTP/1.1\r\nHost: b\r\nRange: bytes=0-1\r\n\r\n"
	                "GET /c HTTP/1.1\r\nHost: c\r\nConnection: close\r\n\r\n";
	const char *targets[] = {"/a", "/b", "/c"};
	size_t off = 0, len = strlen(s), used;

	h1_parser_init(&P, &lim);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(h1_parser_feed(&P, s + off, len - off, &used), H1_PARSE_DONE);
		ck_assert_h1str(P.req.target, targets[i]);
		ck_assert_uint_eq(P.req.host.len, 1);
		ck_assert_int_eq(P.req.host.ptr[0], 'a' + i);
		/* each one ends right before the next request line */
		ck_assert(off + used == len || memcmp(s + off + used, "GET", 3) == 0 ||
		          memcmp(s + off + used, "HEAD", 4) == 0);
		off += used;
		if (i == 1)
			ck_assert_h1str(P.req.range, "bytes=0-1");
		else
			ck_assert_ptr_null(P.req.range.ptr);
		ck_assert(P.req.keep_alive == (i < 2));
		h1_parser_reset(&P);
	}
	ck_assert_uint_eq(off, len);
}
END_TEST

static const char full[] = "GET http://example.com/some/path?q=1 HTTP/1.1\r\n"
                           "hOsT: example.com:8443\r\n"
                           "Range:   bytes=0-99 \t\r\n"
                           "If-Match: \"a\"\r\n"
                           "If-None-Match: \"b\"\r\n"
                           "X-Other: ignored\r\n"
                           "If-None-Match: W/\"c\" \r\n"
                           "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                           "IF-UNMODIFIED-SINCE: Mon, 07 Nov 1994 08:49:37 GMT\r\n"
                           "If-Range: \"etag\"\r\n"
                           "accept-encoding: gzip;q=0.5 \r\n"
                           "User-Agent: curl/8.0 (x86_64)\r\n"
                           "Accept-Encoding:br\r\n"
                           "Referer: https://example.org/\r\n"
                           "Accept: text/html\r\n"
                           "accept: application/json;q=0.9\r\n"
                           "Empty:\r\n"
                           "\r\n";

static void check_full(void)
{
	ck_assert_int_eq(P.req.method, H1_GET);
	ck_assert_h1str(P.req.target, "http://example.com/some/path?q=1");
	ck_assert_h1str(P.req.host, "example.com:8443");
	ck_assert_h1str(P.req.range, "bytes=0-99");
	ck_assert_h1str(P.req.if_match, "\"a\"");
	ck_assert_h1str(P.req.if_none_match, "\"b\", W/\"c\"");
	ck_assert_h1str(P.req.if_modified_since, "Sun, 06 Nov 1994 08:49:37 GMT");
	ck_assert_h1str(P.req.if_unmodified_since, "Mon, 07 Nov 1994 08:49:37 GMT");
	ck_assert_h1str(P.req.if_range, "\"etag\"");
	ck_assert_h1str(P.req.user_agent, "curl/8.0 (x86_64)");
	ck_assert_h1str(P.req.referer, "https://example.org/");
	ck_assert_h1str(P.req.accept_encoding, "gzip;q=0.5, br"); /* a list: joined */
	ck_assert_h1str(P.req.accept, "text/html, application/json;q=0.9");
	ck_assert(P.req.keep_alive);
	ck_assert_int_eq(P.error_status, 0);
}

START_TEST(test_headers_captured)
{
	size_t used;

	ck_assert_int_eq(feed(full, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(used, strlen(full));
	check_full();
}
END_TEST

START_TEST(test_byte_at_a_time)
{
	size_t used;

	h1_parser_init(&P, &lim);
	ck_assert_int_eq(feed_steps(full, strlen(full), 1, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(used, strlen(full));
	check_full();
}
END_TEST

/* Two feeds, split at every position. */
START_TEST(test_every_split)
{
	size_t len = strlen(full), used, used2;

	for (size_t cut = 0; cut <= len; cut++) {
		h1_parser_init(&P, &lim);
		enum h1_parse_result r = h1_parser_feed(&P, full, cut, &used);
		if (cut < len) {
			ck_assert_int_eq(r, H1_PARSE_AGAIN);
			ck_assert_uint_eq(used, cut);
			r = h1_parser_feed(&P, full + cut, len - cut, &used2);
			used += used2;
		}
		ck_assert_int_eq(r, H1_PARSE_DONE);
		ck_assert_uint_eq(used, len);
		check_full();
	}
}
END_TEST

START_TEST(test_empty_values)
{
	size_t used;

	ck_assert_int_eq(
	    feed("GET / HTTP/1.1\r\nHost:\r\nIf-Match: \r\nIf-Match: \"x\"\r\n\r\n", &used),
	    H1_PARSE_DONE);
	ck_assert_h1str(P.req.host, "");
	ck_assert_h1str(P.req.if_match, "\"x\"");
	/* repeats next to each other are joined in place */
	ck_assert_int_eq(feed("GET / HTTP/1.1\r\nIf-Match: \"a\"\r\nIf-Match:\t\"b\" \r\n"
	                      "If-Match: \r\n\r\n",
	                      &used),
	                 H1_PARSE_DONE);
	ck_assert_h1str(P.req.if_match, "\"a\", \"b\"");
	/* an empty Host is still a Host: a second one is ambiguous */
	expect_error("GET / HTTP/1.1\r\nHost:\r\nHost: a\r\n\r\n", 400);
}
END_TEST

START_TEST(test_repeated_unique)
{
	expect_error("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nRange: bytes=0-1\r\nRange: bytes=2-3\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nIf-Range: \"a\"\r\nIf-Range: \"b\"\r\n\r\n", 400);
}
END_TEST

START_TEST(test_content_length_smuggling)
{
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	             400);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
	             400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5x\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400);
}
END_TEST

START_TEST(test_transfer_encoding_smuggling)
{
	/* chunked not final: RFC 9112 6.3 MUST 400 */
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: GZIP\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	             "Transfer-Encoding: chunked\r\n\r\n",
	             400);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	             "Transfer-Encoding: identity\r\n\r\n",
	             400);
	expect_error("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
	/* chunked final after a coding we do not implement: 501 */
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n"
	             "Transfer-Encoding: chunked\r\n\r\n",
	             501);
}
END_TEST

/* RFC 9112 6.1: a transfer coding we do not understand gets 501, wherever
 * it stands in the list; the connection still closes (error status). */
START_TEST(test_transfer_encoding_unknown)
{
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: foo\r\n\r\n", 501);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: foo, chunked\r\n\r\n", 501);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", 501);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: foo;q=1 , chunked\r\n\r\n", 501);
	expect_error("POST / HTTP/1.1\r\nTransfer-Encoding: foo\r\n"
	             "Transfer-Encoding: chunked\r\n\r\n",
	             501);
	expect_error("GET / HTTP/1.1\r\nTransfer-Encoding: foo\r\n\r\n", 501);
	/* still smuggling shapes first: 400 */
	expect_error("POST / HTTP/1.0\r\nTransfer-Encoding: foo\r\n\r\n", 400);
	expect_error(
	    "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: foo, chunked\r\n\r\n", 400);
}
END_TEST

START_TEST(test_bare_lf)
{
	size_t used;

	expect_error("GET / HTTP/1.1\nHost: a\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nHost: a\n\r\n", 400);
	/* llhttp itself stops at this LF; the reason still names it */
	ck_assert_str_eq(P.error_reason, "bare LF line ending");
	ck_assert_int_eq(feed("GET / HTTP/1.1\r\nHost: a\n\r\n", &used), H1_PARSE_ERROR);
	ck_assert_str_eq(P.error_reason, "bare LF line ending");
	expect_error("GET / HTTP/1.1\r\nHost: a\r\n\n", 400);
	expect_error("GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n", 400);
	expect_error("\nGET / HTTP/1.1\r\n\r\n", 400);
	ck_assert_str_eq(P.error_reason, "bare LF line ending");
	/* the CR ending one feed pairs with the LF starting the next */
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, "GET / HTTP/1.1\r", 15, &used), H1_PARSE_AGAIN);
	ck_assert_int_eq(h1_parser_feed(&P, "\n\r\n", 3, &used), H1_PARSE_DONE);
	/* but an LF starting a feed after anything else is bare */
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, "GET / HTTP/1.1", 14, &used), H1_PARSE_AGAIN);
	ck_assert_int_eq(h1_parser_feed(&P, "\n\r\n", 3, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 400);
	/* a bare LF in the request after a good one does not spoil the first */
	const char *two = "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\n\n";
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, two, strlen(two), &used), H1_PARSE_DONE);
	h1_parser_reset(&P);
	ck_assert_int_eq(h1_parser_feed(&P, two + used, strlen(two + used), &used), H1_PARSE_ERROR);
}
END_TEST

START_TEST(test_header_line_shapes)
{
	/* obs-fold, with SP and with HTAB */
	expect_error("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nUser-Agent: a\r\n\tb\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400);
	/* whitespace between name and colon */
	expect_error("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400);
	expect_error("POST / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nHo st: a\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\n: a\r\n\r\n", 400);
	/* bare CR, CTL in a value */
	expect_error("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nX: a\x01\r\n\r\n", 400);
	expect_error("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", 400);
}
END_TEST

START_TEST(test_nul_and_ctl)
{
	static const char nul_target[] = "GET /a\0b HTTP/1.1\r\n\r\n";
	static const char nul_value[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
	static const char nul_name[] = "GET / HTTP/1.1\r\nX\0: a\r\n\r\n";
	size_t used;

	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, nul_target, sizeof(nul_target) - 1, &used),
	                 H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 400);
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, nul_value, sizeof(nul_value) - 1, &used),
	                 H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 400);
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, nul_name, sizeof(nul_name) - 1, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 400);
	expect_error("GET /a\x01 HTTP/1.1\r\n\r\n", 400);
	expect_error("GET /\x1b[31m HTTP/1.1\r\n\r\n", 400);
	expect_error("GET /a\x7f HTTP/1.1\r\n\r\n", 400);
	expect_error("GET /a\tb HTTP/1.1\r\n\r\n", 400);
	expect_error("GET /a b HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_uri_too_long)
{
	char *s = malloc(lim.max_uri + 64);
	size_t used;

	memcpy(s, "GET /", 5);
	memset(s + 5, 'a', lim.max_uri - 1); /* target of exactly max_uri */
	strcpy(s + 4 + lim.max_uri, " HTTP/1.1\r\n\r\n");
	ck_assert_int_eq(feed(s, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(P.req.target.len, lim.max_uri);
	memset(s + 5, 'a', lim.max_uri); /* one more */
	strcpy(s + 5 + lim.max_uri, " HTTP/1.1\r\n\r\n");
	expect_error(s, 414);
	/* a target that runs into the head limit is still too long a URI */
	struct h1_limits small = {.max_header_bytes = 512, .max_headers = 16, .max_uri = 1024};
	h1_parser_init(&P, &small);
	ck_assert_int_eq(feed_steps(s, strlen(s), 100, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 414);
	free(s);
}
END_TEST

/* A head of exactly len bytes, padded with an X-Pad header. */
static char *head_of(size_t len)
{
	const char *pre = "GET / HTTP/1.1\r\nX-Pad: ";
	char *s = malloc(len + 1);

	memset(s, 'p', len);
	memcpy(s, pre, strlen(pre));
	memcpy(s + len - 4, "\r\n\r\n", 4);
	s[len] = 0;
	return s;
}

START_TEST(test_head_too_large)
{
	char *s = head_of(lim.max_header_bytes);
	size_t used;

	ck_assert_int_eq(feed(s, &used), H1_PARSE_DONE);
	ck_assert_uint_eq(P.header_bytes, lim.max_header_bytes);
	free(s);
	s = head_of(lim.max_header_bytes + 1);
	expect_error(s, 431);
	/* and refused as soon as the limit is reached, not at the end */
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, s, lim.max_header_bytes + 1, &used), H1_PARSE_ERROR);
	free(s);
	/* an endless stream of empty lines before the request line, too */
	s = malloc(lim.max_header_bytes + 2);
	for (size_t i = 0; i < lim.max_header_bytes + 2; i += 2)
		memcpy(s + i, "\r\n", 2);
	h1_parser_init(&P, &lim);
	ck_assert_int_eq(h1_parser_feed(&P, s, lim.max_header_bytes + 2, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 431);
	free(s);
}
END_TEST

START_TEST(test_too_many_headers)
{
	char s[1024];
	size_t n = 0, used;

	n += sprintf(s + n, "GET / HTTP/1.1\r\n");
	for (size_t i = 0; i < lim.max_headers; i++)
		n += sprintf(s + n, "X-%zu: v\r\n", i);
	strcpy(s + n, "\r\n");
	ck_assert_int_eq(feed(s, &used), H1_PARSE_DONE);
	strcpy(s + n, "X-last: v\r\n\r\n");
	expect_error(s, 431);
}
END_TEST

START_TEST(test_arena_overflow)
{
	struct h1_limits big = {.max_header_bytes = 65536, .max_headers = 16, .max_uri = 1024};
	size_t vlen = H1_ARENA_SIZE / 2, n = 0, used;
	char *s = malloc(3 * vlen + 256);

	n += sprintf(s + n, "GET / HTTP/1.1\r\nUser-Agent: ");
	memset(s + n, 'u', vlen), n += vlen;
	n += sprintf(s + n, "\r\nReferer: ");
	memset(s + n, 'r', vlen), n += vlen;
	n += sprintf(s + n, "\r\n\r\n");
	h1_parser_init(&P, &big);
	ck_assert_int_eq(h1_parser_feed(&P, s, n, &used), H1_PARSE_ERROR);
	ck_assert_int_eq(P.error_status, 431);
	free(s);
}
END_TEST

START_TEST(test_long_value_split)
{
	struct h1_limits big = {.max_header_bytes = 16384, .max_headers = 16, .max_uri = 1024};
	size_t vlen = 12000, n = 0, used;
	char *s = malloc(vlen + 256), *want = malloc(vlen + 1);

	for (size_t i = 0; i < vlen; i++)
		want[i] = (char)('a' + i % 26);
	want[vlen] = 0;
	n += sprintf(s + n, "GET / HTTP/1.1\r\nUser-Agent: %s  \r\nHost: h\r\n\r\n", want);
	static const size_t steps[] = {1, 7, 1000, 4096};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		h1_parser_init(&P, &big);
		ck_assert_int_eq(feed_steps(s, n, steps[i], &used), H1_PARSE_DONE);
		ck_assert_uint_eq(used, n);
		ck_assert_h1str(P.req.user_agent, want);
		ck_assert_h1str(P.req.host, "h");
	}
	free(s);
	free(want);
}
END_TEST

START_TEST(test_versions)
{
	size_t used;

	expect_error("GET / HTTP/2.0\r\n\r\n", 505);
	expect_error("GET / HTTP/0.9\r\n\r\n", 505);
	expect_error("GET /\r\n\r\n", 505); /* HTTP/0.9 simple request */
	expect_error("GET / HTTP/3.0\r\n\r\n", 505);
	expect_error("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505);
	/* malformed, not another version */
	expect_error("GET / HTTP/1.1 \r\n\r\n", 400);
	expect_error("GET / http/1.1\r\n\r\n", 400);
	expect_error("GET / HTTP/1.10\r\n\r\n", 400);
	expect_error("GET / HTTP/1.2 \r\n\r\n", 400);
	expect_error("GET / HTTP/4.1\r\n\r\n", 505);
	ck_assert_int_eq(feed("GET / HTTP/1.0\r\n\r\n", &used), H1_PARSE_DONE);
}
END_TEST

/* RFC 9110 2.5: HTTP/1.x with a minor version we do not know is served as
 * HTTP/1.1 (keep-alive, Host required), not refused with 505. */
START_TEST(test_versions_1x)
{
	static const char *const v[] = {"1.2", "1.3", "1.9"};
	size_t used;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char head[64];
		int n = snprintf(head, sizeof(head), "GET / HTTP/%s\r\nHost: a\r\n\r\n", v[i]);
		ck_assert(n > 0 && (size_t)n < sizeof(head));
		ck_assert_msg(feed(head, &used) == H1_PARSE_DONE, "refused HTTP/%s (%d)", v[i],
		              P.error_status);
		ck_assert_uint_eq(used, (size_t)n);
		ck_assert_uint_eq(P.req.version_major, 1);
		ck_assert_uint_eq(P.req.version_minor, 1);
		ck_assert(P.req.keep_alive);
	}
	ck_assert_int_eq(feed("GET / HTTP/1.2\r\nConnection: close\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert(!P.req.keep_alive);
	/* the smuggling checks hold for 1.2 as for 1.1 */
	expect_error("POST / HTTP/1.2\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
	             400);
	expect_error("POST / HTTP/1.2\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
}
END_TEST

START_TEST(test_methods_and_bodies)
{
	const char *post = "POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
	                   "GET /smuggled HTTP/1.1\r\n\r\n";
	const char *chunked = "PUT /x HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n5\r\nhello\r\n";
	size_t used;

	ck_assert_int_eq(feed(post, &used), H1_PARSE_DONE);
	ck_assert_int_eq(P.req.method, H1_OTHER);
	ck_assert_str_eq(P.req.method_name, "POST");
	ck_assert(P.req.has_body);
	ck_assert(!P.req.keep_alive);
	ck_assert_uint_eq(used, strstr(post, "hello") - post); /* the body stays unread */
	ck_assert_int_eq(feed(chunked, &used), H1_PARSE_DONE);
	ck_assert_str_eq(P.req.method_name, "PUT");
	ck_assert(P.req.has_body);
	ck_assert_uint_eq(used, strstr(chunked, "5\r\n") - chunked);
	ck_assert_int_eq(feed("DELETE /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &used),
	                 H1_PARSE_DONE);
	ck_assert_int_eq(P.req.method, H1_OTHER);
	ck_assert(!P.req.has_body);
	ck_assert(P.req.keep_alive);
	ck_assert_int_eq(feed("OPTIONS * HTTP/1.1\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert_h1str(P.req.target, "*");
	ck_assert_int_eq(feed("CONNECT example.com:443 HTTP/1.1\r\n\r\n", &used), H1_PARSE_DONE);
	ck_assert_int_eq(P.req.method, H1_OTHER);
	ck_assert_h1str(P.req.target, "example.com:443");
	/* methods llhttp does not know, and lower case */
	expect_error("FOO / HTTP/1.1\r\n\r\n", 400);
	expect_error("get / HTTP/1.1\r\n\r\n", 400);
}
END_TEST

START_TEST(test_upgrade_is_ignored)
{
	/* We never switch protocols: the next request is parsed as HTTP/1.1. */
	const char *s = "GET /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"
	                "GET /next HTTP/1.1\r\n\r\n";
	size_t used, used2;

	ck_assert_int_eq(feed(s, &used), H1_PARSE_DONE);
	ck_assert_h1str(P.req.target, "/ws");
	h1_parser_reset(&P);
	ck_assert_int_eq(h1_parser_feed(&P, s + used, strlen(s + used), &used2), H1_PARSE_DONE);
	ck_assert_h1str(P.req.target, "/next");
}
END_TEST

START_TEST(test_reset_after_error)
{
	size_t used;

	ck_assert_int_eq(feed("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", &used),
	                 H1_PARSE_ERROR);
	/* errors stick until a reset */
	ck_assert_int_eq(h1_parser_feed(&P, "GET / HTTP/1.1\r\n\r\n", 18, &used), H1_PARSE_ERROR);
	h1_parser_reset(&P);
	ck_assert_int_eq(h1_parser_feed(&P, "GET /ok HTTP/1.1\r\n\r\n", 20, &used), H1_PARSE_DONE);
	ck_assert_int_eq(P.error_status, 0);
	ck_assert_ptr_null(P.error_reason);
	ck_assert_h1str(P.req.target, "/ok");
	ck_assert_ptr_null(P.req.host.ptr);
}
END_TEST

/* h1_request_authority on head (one feed): its status, and the authority
 * it names the site by in want ("-": none). */
static void check_authority(const char *head, bool tls, int status, const char *want)
{
	const char *host;
	size_t used, len;

	ck_assert_int_eq(feed(head, &used), H1_PARSE_DONE);
	ck_assert_int_eq(h1_request_authority(&P.req, tls, &host, &len), status);
	if (status)
		return;
	if (strcmp(want, "-") == 0) {
		ck_assert_ptr_null(host);
		return;
	}
	ck_assert_msg(host && len == strlen(want) && memcmp(host, want, len) == 0,
		      "%s: named %.*s, not %s", head, host ? (int)len : 4, host ? host : "none",
		      want);
}

START_TEST(test_request_authority)
{
	check_authority("GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 0, "a.test");
	check_authority("GET /x HTTP/1.1\r\nHost: a.test:8443\r\n\r\n", true, 0, "a.test:8443");
	check_authority("GET /x HTTP/1.0\r\n\r\n", true, 0, "-");
	/* RFC 9112 3.2: no Host in 1.1, an invalid one in any version: 400 */
	check_authority("GET /x HTTP/1.1\r\n\r\n", true, 400, NULL);
	check_authority("GET /x HTTP/1.1\r\nHost: b.test x\r\n\r\n", true, 400, NULL);
	check_authority("GET /x HTTP/1.1\r\nHost: b.test:abc\r\n\r\n", true, 400, NULL);
	check_authority("GET /x HTTP/1.1\r\nHost: u@b.test\r\n\r\n", true, 400, NULL);
	check_authority("GET /x HTTP/1.1\r\nHost:\r\n\r\n", true, 400, NULL);
	check_authority("GET /x HTTP/1.0\r\nHost: b.test x\r\n\r\n", true, 400, NULL);
	/* RFC 9112 3.2.2: an absolute-form target's authority wins */
	check_authority("GET http://b.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 0,
			"b.test");
	check_authority("GET https://b.test:8443?q HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 0,
			"b.test:8443");
	check_authority("GET http://b.test/x HTTP/1.0\r\n\r\n", false, 0, "b.test");
	/* ... but Host must still be there and valid */
	check_authority("GET http://b.test/x HTTP/1.1\r\n\r\n", true, 400, NULL);
	check_authority("GET http://b.test/x HTTP/1.1\r\nHost: a b\r\n\r\n", true, 400, NULL);
	/* an absolute-form authority that is not one */
	check_authority("GET http://b.test:x/ HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 400, NULL);
	check_authority("GET http://u@b.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 400, NULL);
	/* RFC 9110 7.4: https over plain TCP is misdirected; http over TLS is served */
	check_authority("GET https://b.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", false, 421, NULL);
	check_authority("GET http://b.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", true, 0, "b.test");
	/* a target static_target refuses is not this function's to judge */
	check_authority("GET * HTTP/1.1\r\nHost: a.test\r\n\r\n", true, 0, "a.test");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("h1_parser");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_simple_get);
	tcase_add_test(tc, test_head_and_leading_crlf);
	tcase_add_test(tc, test_keep_alive);
	tcase_add_test(tc, test_pipelining);
	tcase_add_test(tc, test_headers_captured);
	tcase_add_test(tc, test_byte_at_a_time);
	tcase_add_test(tc, test_every_split);
	tcase_add_test(tc, test_empty_values);
	tcase_add_test(tc, test_repeated_unique);
	tcase_add_test(tc, test_content_length_smuggling);
	tcase_add_test(tc, test_transfer_encoding_smuggling);
	tcase_add_test(tc, test_transfer_encoding_unknown);
	tcase_add_test(tc, test_bare_lf);
	tcase_add_test(tc, test_header_line_shapes);
	tcase_add_test(tc, test_nul_and_ctl);
	tcase_add_test(tc, test_uri_too_long);
	tcase_add_test(tc, test_head_too_large);
	tcase_add_test(tc, test_too_many_headers);
	tcase_add_test(tc, test_arena_overflow);
	tcase_add_test(tc, test_long_value_split);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_versions_1x);
	tcase_add_test(tc, test_methods_and_bodies);
	tcase_add_test(tc, test_upgrade_is_ignored);
	tcase_add_test(tc, test_reset_after_error);
	tcase_add_test(tc, test_request_authority);
	suite_add_tcase(s, tc);

	return check_run(s);
}
