/* Tests proto/resp_head.c. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/resp_head.h"
#include "proto/static_file.h"
#include "tests/unit/check_run.h"

#define DATE "Sun, 06 Nov 1994 08:49:37 GMT"

static struct static_file file = {
    .size = 20, .ino = 42, .mtime_sec = 784111777, .content_type = "text/plain"};

static void respond(const char *range, struct static_response *sr)
{
	struct static_request req = {.range = range, .range_len = range ? strlen(range) : 0};
	static_file_respond(&req, &file, 7, sr);
}

START_TEST(file_200_h1)
{
	struct static_response sr;
	struct resp_head h;
	char out[1024], want[1024];

	respond(NULL, &sr);
	resp_head_file(&h, &sr, DATE);
	snprintf(want, sizeof(want),
		 "HTTP/1.1 200 OK\r\nServer: ktlsd\r\nDate: " DATE "\r\n"
		 "Content-Type: text/plain\r\nContent-Length: 20\r\nLast-Modified: %s\r\n"
		 "ETag: %s\r\nAccept-Ranges: bytes\r\n\r\n",
		 sr.last_modified, sr.etag);
	ck_assert_int_eq(resp_head_h1(&h, out, sizeof(out)), (ssize_t)strlen(want));
	ck_assert_str_eq(out, want);
	/* HTTP/1.1 adds its Connection field last. */
	resp_head_add(&h, RESP_CONNECTION, "close");
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "Accept-Ranges: bytes\r\nConnection: close\r\n\r\n"));
}
END_TEST

/* The fields HTTP/2 hands to HPACK: the same, in the same order, with
 * lowercase names, and :status from status_text. */
START_TEST(file_206_h2_names)
{
	static const char *const want[][2] = {
	    {"server", "ktlsd"},        {"date", DATE},
	    {"content-type", "text/plain"}, {"content-length", "5"},
	    {"last-modified", NULL},    {"etag", NULL},
	    {"content-range", "bytes 5-9/20"}, {"accept-ranges", "bytes"},
	};
	struct static_response sr;
	struct resp_head h;

	respond("bytes=5-9", &sr);
	resp_head_file(&h, &sr, DATE);
	ck_assert_str_eq(h.status_text, "206");
	ck_assert_uint_eq(h.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < h.n; i++) {
		ck_assert_str_eq(resp_name_h2(h.f[i].name), want[i][0]);
		ck_assert_uint_eq(h.f[i].value_len, strlen(h.f[i].value));
		if (want[i][1])
			ck_assert_str_eq(h.f[i].value, want[i][1]);
	}
	ck_assert_str_eq(resp_name_h1(RESP_ETAG), "ETag");
	ck_assert_str_eq(resp_name_h1(RESP_CONTENT_LENGTH), "Content-Length");
}
END_TEST

START_TEST(not_modified_has_no_length)
{
	struct static_response sr;
	struct resp_head h;
	char out[1024];
	struct static_request req = {.cond.if_none_match = "*", .cond.if_none_match_len = 1};

	static_file_respond(&req, &file, 7, &sr);
	ck_assert_int_eq(sr.status, 304);
	resp_head_file(&h, &sr, DATE);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 304 Not Modified\r\n"));
	ck_assert_ptr_null(strstr(out, "Content-Length"));
	ck_assert_ptr_null(strstr(out, "Content-Type"));
	ck_assert_ptr_nonnull(strstr(out, "ETag: "));
}
END_TEST

START_TEST(pages)
{
	struct resp_head h;
	char out[1024];

	resp_head_page(&h, 405, DATE, 99, NULL);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "HTTP/1.1 405 Method Not Allowed\r\nServer: ktlsd\r\nDate: " DATE
			      "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 99\r\n"
			      "Allow: GET, HEAD\r\n\r\n");
	resp_head_page(&h, 301, DATE, 10, "/sub/");
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "Content-Length: 10\r\nLocation: /sub/\r\n\r\n"));
	ck_assert_ptr_null(strstr(out, "Allow"));
	resp_head_page(&h, 404, DATE, 10, NULL);
	ck_assert_uint_eq(h.n, 4);
}
END_TEST

/* The room is checked to the byte, the NUL included; too little room or
 * too many fields is -ENOSPC, never an overflow. */
START_TEST(listing)
{
	struct resp_head h;
	char out[1024];

	resp_head_listing(&h, DATE, "application/json", 12345);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "HTTP/1.1 200 OK\r\nServer: ktlsd\r\nDate: " DATE "\r\n"
			      "Content-Type: application/json\r\nContent-Length: 12345\r\n"
			      "Vary: Accept\r\nCache-Control: no-cache\r\n\r\n");
	ck_assert_str_eq(resp_name_h2(h.f[4].name), "vary");
	ck_assert_str_eq(resp_name_h2(h.f[5].name), "cache-control");
}
END_TEST

/* An ACME HTTP-01 answer: text/plain, and no cache keeps it. */
START_TEST(challenge)
{
	struct resp_head h;
	char out[1024];

	resp_head_challenge(&h, DATE, 87);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "HTTP/1.1 200 OK\r\nServer: ktlsd\r\nDate: " DATE "\r\n"
			      "Content-Type: text/plain\r\nContent-Length: 87\r\n"
			      "Cache-Control: no-store\r\n\r\n");
	ck_assert_str_eq(resp_name_h2(h.f[4].name), "cache-control");
	ck_assert_str_eq(h.status_text, "200");
}
END_TEST

/* A site's Cache-Control replaces the listing's own no-cache: one field,
 * never two that contradict; its other fields are added as they are. */
START_TEST(listing_site_cache_control)
{
	static const struct resp_extra f[] = {
	    {.name_h1 = "Cache-Control", .name_h2 = "cache-control", .name_len = 13,
	     .value = "public, max-age=300", .value_len = 19},
	    {.name_h1 = "X-Mirror", .name_h2 = "x-mirror", .name_len = 8, .value = "a",
	     .value_len = 1}};
	const struct resp_extras x = {.f = f, .n = 2, .h1_bytes = 15 + 19 + 2 + 10 + 1 + 2};
	struct resp_head h;
	char out[1024];

	resp_head_listing(&h, DATE, "text/html", 7);
	resp_head_extras(&h, &x);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "HTTP/1.1 200 OK\r\nServer: ktlsd\r\nDate: " DATE "\r\n"
			      "Content-Type: text/html\r\nContent-Length: 7\r\n"
			      "Vary: Accept\r\nCache-Control: public, max-age=300\r\nX-Mirror: a\r\n\r\n");
	/* A site without one keeps the listing's no-cache. */
	resp_head_listing(&h, DATE, "text/html", 7);
	resp_head_extras(&h, &(struct resp_extras){.f = f + 1, .n = 1, .h1_bytes = 13});
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "Cache-Control: no-cache\r\nX-Mirror: a\r\n"));
}
END_TEST

START_TEST(room)
{
	struct resp_head h;
	char out[512];
	ssize_t len;

	resp_head_page(&h, 404, DATE, 10, NULL);
	len = resp_head_h1(&h, out, sizeof(out));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(resp_head_h1(&h, out, (size_t)len + 1), len);
	for (size_t cap = 0; cap <= (size_t)len; cap++)
		ck_assert_int_eq(resp_head_h1(&h, out, cap), -ENOSPC);

	resp_head_init(&h, 200, DATE);
	for (int i = 0; i < RESP_HEAD_MAX_FIELDS - 2; i++)
		resp_head_add(&h, RESP_ALLOW, "x");
	ck_assert(!h.overflow);
	resp_head_add(&h, RESP_ALLOW, "x");
	ck_assert(h.overflow);
	ck_assert_uint_eq(h.n, RESP_HEAD_MAX_FIELDS);
	ck_assert_int_eq(resp_head_h1(&h, out, sizeof(out)), -ENOSPC);
}
END_TEST

/* A sidecar's head: Content-Encoding after Content-Type, Vary after ETag;
 * on a 304, Vary without Content-Encoding. With HTTP/1.1's Connection, 11
 * fields fit. */
START_TEST(sidecar_fields)
{
	struct static_file f = file;
	struct static_response sr;
	struct resp_head h;
	char out[1024];
	struct static_request req = {.range = "bytes=0-1", .range_len = 9};

	f.content_encoding = "br";
	f.vary = true;
	static_file_respond(&req, &f, 7, &sr);
	resp_head_file(&h, &sr, DATE);
	resp_head_add(&h, RESP_CONNECTION, "close");
	ck_assert_uint_eq(h.n, 11);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "Content-Type: text/plain\r\nContent-Encoding: br\r\n"
	                                  "Content-Length: 2\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "-br\"\r\nVary: Accept-Encoding\r\nContent-Range: "));
	ck_assert_str_eq(resp_name_h2(RESP_CONTENT_ENCODING), "content-encoding");
	ck_assert_str_eq(resp_name_h2(RESP_VARY), "vary");

	req = (struct static_request){.cond.if_none_match = "*", .cond.if_none_match_len = 1};
	static_file_respond(&req, &f, 7, &sr);
	resp_head_file(&h, &sr, DATE);
	ck_assert_int_gt(resp_head_h1(&h, out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "HTTP/1.1 304 Not Modified\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "Vary: Accept-Encoding\r\n"));
	ck_assert_ptr_null(strstr(out, "Content-Encoding"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("resp_head");
	TCase *tc = tcase_create("head");
	tcase_add_test(tc, file_200_h1);
	tcase_add_test(tc, file_206_h2_names);
	tcase_add_test(tc, not_modified_has_no_length);
	tcase_add_test(tc, pages);
	tcase_add_test(tc, listing);
	tcase_add_test(tc, challenge);
	tcase_add_test(tc, room);
	tcase_add_test(tc, listing_site_cache_control);
	tcase_add_test(tc, sidecar_fields);
	suite_add_tcase(s, tc);
	return check_run(s);
}
