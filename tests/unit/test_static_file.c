/* Tests for proto/static_file.c. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/httpdate.h"
#include "proto/static_file.h"
#include "tests/unit/check_run.h"

#define DATA "0123456789abcdefghij" /* the "file": 20 bytes */
#define MTIME 784111777             /* Sun, 06 Nov 1994 08:49:37 GMT */
#define ETAG "\"2ebc98a1-14\"" /* settled: mtime and size, as nginx */
#define SEED 42

static struct static_request req;
static struct static_file file;
static struct static_response resp;

static void reset(void)
{
	memset(&req, 0, sizeof(req));
	memset(&resp, 0xa5, sizeof(resp)); /* respond must not rely on a clean struct */
	file = (struct static_file){
	    .size = 20,
	    .ino = 42,
	    .mtime_sec = MTIME,
	    .mtime_nsec = 1000,
	    .content_type = "text/plain",
	};
}

static void respond(void)
{
	static_file_respond(&req, &file, SEED, &resp);
}

static void set_range(const char *v)
{
	req.range = v;
	req.range_len = strlen(v);
}

static void set_if_range(const char *v)
{
	req.if_range = v;
	req.if_range_len = strlen(v);
}

/* The body exactly as a sender would put it on the wire. */
static size_t assemble(char *out, size_t outsz)
{
	size_t len = 0;
	char buf[STATIC_PART_HEADER_MAX];

	for (size_t i = 0; i < resp.nranges; i++) {
		size_t h = static_part_header(&resp, &file, i, buf);
		uint64_t n = resp.ranges[i].last - resp.ranges[i].first + 1;

		ck_assert_uint_lt(len + h + n, outsz);
		memcpy(out + len, buf, h);
		memcpy(out + len + h, DATA + resp.ranges[i].first, n);
		len += h + n;
	}
	len += static_multipart_trailer(&resp, out + len);
	out[len] = '\0';
	return len;
}

static void assert_validators(void)
{
	ck_assert_str_eq(resp.etag, ETAG);
	ck_assert_str_eq(resp.last_modified, "Sun, 06 Nov 1994 08:49:37 GMT");
}

START_TEST(whole_file)
{
	reset();
	respond();
	ck_assert_int_eq(resp.status, 200);
	assert_validators();
	ck_assert_str_eq(resp.content_type, "text/plain");
	ck_assert_uint_eq(resp.content_length, 20);
	ck_assert(resp.send_body);
	ck_assert_uint_eq(resp.nranges, 0);
	ck_assert_str_eq(resp.content_range, "");
}
END_TEST

START_TEST(head)
{
	reset();
	req.head = true;
	respond();
	ck_assert_int_eq(resp.status, 200);
	assert_validators();
	ck_assert_uint_eq(resp.content_length, 20);
	ck_assert(!resp.send_body);
	/* HEAD with Range gets GET's 206 headers */
	set_range("bytes=2-5");
	respond();
	ck_assert_int_eq(resp.status, 206);
	ck_assert_str_eq(resp.content_range, "bytes 2-5/20");
	ck_assert_uint_eq(resp.content_length, 4);
	ck_assert(!resp.send_body);
}
END_TEST

START_TEST(not_modified)
{
	reset();
	req.cond.if_none_match = ETAG;
	req.cond.if_none_match_len = strlen(ETAG);
	set_range("bytes=0-1"); /* conditionals come first */
	respond();
	ck_assert_int_eq(resp.status, 304);
	assert_validators();
	ck_assert(!resp.send_body);
	ck_assert_ptr_null(resp.content_type);
	ck_assert_uint_eq(resp.content_length, 20); /* what the 200 would say */
	ck_assert_uint_eq(resp.nranges, 0);
	/* If-Modified-Since as well */
	reset();
	req.cond.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT";
	req.cond.if_modified_since_len = HTTPDATE_LEN;
	respond();
	ck_assert_int_eq(resp.status, 304);
	file.mtime_sec++;
	respond();
	ck_assert_int_eq(resp.status, 200);
}
END_TEST

START_TEST(precondition_failed)
{
	reset();
	req.cond.if_match = "\"nope\"";
	req.cond.if_match_len = 6;
	set_range("bytes=100-"); /* would be 416, but 412 comes first */
	respond();
	ck_assert_int_eq(resp.status, 412);
	ck_assert(!resp.send_body);
	ck_assert_uint_eq(resp.content_length, 0);
	ck_assert_ptr_null(resp.content_type);
	req.cond.if_match = ETAG;
	req.cond.if_match_len = strlen(ETAG);
	respond();
	ck_assert_int_eq(resp.status, 416);
}
END_TEST

START_TEST(single_range)
{
	reset();
	set_range("bytes=2-5");
	respond();
	ck_assert_int_eq(resp.status, 206);
	assert_validators();
	ck_assert_str_eq(resp.content_type, "text/plain");
	ck_assert_str_eq(resp.content_range, "bytes 2-5/20");
	ck_assert_uint_eq(resp.content_length, 4);
	ck_assert(resp.send_body);
	ck_assert_uint_eq(resp.nranges, 1);
	ck_assert_uint_eq(resp.ranges[0].first, 2);
	ck_assert_uint_eq(resp.ranges[0].last, 5);
	set_range("bytes=-3");
	respond();
	ck_assert_str_eq(resp.content_range, "bytes 17-19/20");
	ck_assert_uint_eq(resp.content_length, 3);
	/* unsatisfiable members dropped: one range left, no multipart */
	set_range("bytes=50-,3-3");
	respond();
	ck_assert_int_eq(resp.status, 206);
	ck_assert_uint_eq(resp.nranges, 1);
	ck_assert_str_eq(resp.content_range, "bytes 3-3/20");
}
END_TEST

START_TEST(unsatisfiable)
{
	reset();
	set_range("bytes=20-");
	respond();
	ck_assert_int_eq(resp.status, 416);
	ck_assert_str_eq(resp.content_range, "bytes */20");
	ck_assert_uint_eq(resp.content_length, 0);
	ck_assert(!resp.send_body);
	ck_assert_uint_eq(resp.nranges, 0);
	ck_assert_ptr_null(resp.content_type);
	/* empty file */
	reset();
	file.size = 0;
	respond();
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.content_length, 0);
	set_range("bytes=0-");
	respond();
	ck_assert_int_eq(resp.status, 416);
	ck_assert_str_eq(resp.content_range, "bytes */0");
}
END_TEST

START_TEST(ignored_ranges)
{
	reset();
	const char *ignored[] = {"bytes=5-2", "bytes=0-,0-", "lines=1-2", "bytes=x",
	                         "bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,11-11,"
	                         "12-12,13-13,14-14,15-15,16-16"};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
		set_range(ignored[i]);
		respond();
		ck_assert_int_eq(resp.status, 200);
		ck_assert_uint_eq(resp.content_length, 20);
		ck_assert_uint_eq(resp.nranges, 0);
	}
	/* exactly STATIC_MAX_RANGES is fine */
	set_range("bytes=0-0,1-1,2-2,3-3,4-4,5-5,6-6,7-7,8-8,9-9,10-10,11-11,12-12,13-13,14-14,"
	          "15-15");
	respond();
	ck_assert_int_eq(resp.status, 206);
	ck_assert_uint_eq(resp.nranges, STATIC_MAX_RANGES);
}
END_TEST

START_TEST(if_range)
{
	reset();
	set_range("bytes=2-5");
	set_if_range(ETAG);
	respond();
	ck_assert_int_eq(resp.status, 206);
	set_if_range("Sun, 06 Nov 1994 08:49:37 GMT");
	respond();
	ck_assert_int_eq(resp.status, 206);
	set_if_range("Sun, 06 Nov 1994 08:49:38 GMT");
	respond();
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.content_length, 20);
	set_if_range("W/" ETAG);
	respond();
	ck_assert_int_eq(resp.status, 200);
	set_if_range("\"stale\"");
	respond();
	ck_assert_int_eq(resp.status, 200);
	/* a failed If-Range means the whole file, never 416 */
	set_range("bytes=50-");
	respond();
	ck_assert_int_eq(resp.status, 200);
	/* If-Range without Range does nothing */
	req.range = NULL;
	set_if_range(ETAG);
	respond();
	ck_assert_int_eq(resp.status, 200);
}
END_TEST

START_TEST(boundary)
{
	char b1[STATIC_BOUNDARY_LEN + 1];

	reset();
	set_range("bytes=0-0,2-2");
	static_file_respond(&req, &file, 1, &resp);
	ck_assert_uint_eq(strlen(resp.boundary), STATIC_BOUNDARY_LEN);
	ck_assert_uint_eq(strspn(resp.boundary, "0123456789abcdef"), STATIC_BOUNDARY_LEN);
	memcpy(b1, resp.boundary, sizeof(b1));
	static_file_respond(&req, &file, 2, &resp);
	ck_assert_str_ne(resp.boundary, b1);
	static_file_respond(&req, &file, 1, &resp);
	ck_assert_str_eq(resp.boundary, b1);
}
END_TEST

/* splitmix64 of 42, low nibble first. */
#define B "59e6bef262237ddb301f"

START_TEST(multipart_exact)
{
	static const char expect[] = "--" B "\r\n"
	                             "Content-Type: text/plain\r\n"
	                             "Content-Range: bytes 10-12/20\r\n"
	                             "\r\n"
	                             "abc"
	                             "\r\n--" B "\r\n"
	                             "Content-Type: text/plain\r\n"
	                             "Content-Range: bytes 0-1/20\r\n"
	                             "\r\n"
	                             "01"
	                             "\r\n--" B "\r\n"
	                             "Content-Type: text/plain\r\n"
	                             "Content-Range: bytes 18-19/20\r\n"
	                             "\r\n"
	                             "ij"
	                             "\r\n--" B "--\r\n";
	char body[2048];

	reset();
	set_range("bytes=10-12, 0-1, -2");
	respond();
	ck_assert_int_eq(resp.status, 206);
	assert_validators();
	ck_assert_uint_eq(resp.nranges, 3);
	ck_assert_str_eq(resp.boundary, B);
	ck_assert_str_eq(resp.multipart_type, "multipart/byteranges; boundary=" B);
	ck_assert_str_eq(resp.content_type, "multipart/byteranges; boundary=" B);
	ck_assert_str_eq(resp.content_range, "");
	ck_assert(resp.send_body);
	ck_assert_uint_eq(assemble(body, sizeof(body)), sizeof(expect) - 1);
	ck_assert_str_eq(body, expect);
	ck_assert_uint_eq(resp.content_length, sizeof(expect) - 1);
	/* beyond the last part there is nothing */
	ck_assert_uint_eq(static_part_header(&resp, &file, 3, body), 0);
}
END_TEST

START_TEST(multipart_without_content_type)
{
	static const char expect[] = "--" B "\r\n"
	                             "Content-Range: bytes 0-0/20\r\n"
	                             "\r\n"
	                             "0"
	                             "\r\n--" B "\r\n"
	                             "Content-Range: bytes 19-19/20\r\n"
	                             "\r\n"
	                             "j"
	                             "\r\n--" B "--\r\n";
	char body[2048];
	char longtype[200];

	reset();
	file.content_type = NULL;
	set_range("bytes=0-0,19-");
	respond();
	ck_assert_uint_eq(assemble(body, sizeof(body)), sizeof(expect) - 1);
	ck_assert_str_eq(body, expect);
	ck_assert_uint_eq(resp.content_length, sizeof(expect) - 1);
	/* a type too long for a part header is left out, not cut */
	memset(longtype, 'x', sizeof(longtype) - 1);
	longtype[sizeof(longtype) - 1] = '\0';
	file.content_type = longtype;
	respond();
	ck_assert_uint_eq(assemble(body, sizeof(body)), sizeof(expect) - 1);
	ck_assert_str_eq(body, expect);
	ck_assert_uint_eq(resp.content_length, sizeof(expect) - 1);
}
END_TEST

/* A multipart body whose length would not fit 64 bits (a size no file has,
 * found by fuzz_h1_request): answered whole rather than with a wrapped
 * Content-Length. */
START_TEST(multipart_length_overflow)
{
	reset();
	file.size = UINT64_MAX;
	set_range("bytes=01-01,-11,20-21,30-");
	respond();
	ck_assert_int_eq(resp.status, 200);
	ck_assert_uint_eq(resp.nranges, 0);
	ck_assert_uint_eq(resp.content_length, UINT64_MAX);
	ck_assert_ptr_eq(resp.content_type, file.content_type);
}
END_TEST

START_TEST(large_file)
{
	const uint64_t gib = UINT64_C(1) << 30;
	char buf[STATIC_PART_HEADER_MAX];
	size_t h0, h1, t;

	reset();
	file.size = 6 * gib;
	set_range("bytes=5368709120-5368709129");
	respond();
	ck_assert_int_eq(resp.status, 206);
	ck_assert_str_eq(resp.content_range, "bytes 5368709120-5368709129/6442450944");
	ck_assert_uint_eq(resp.content_length, 10);
	/* multipart length with 64-bit part lengths */
	set_range("bytes=0-4294967296,-1");
	respond();
	ck_assert_uint_eq(resp.nranges, 2);
	h0 = static_part_header(&resp, &file, 0, buf);
	ck_assert_uint_eq(h0, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "Content-Range: bytes 0-4294967296/6442450944\r\n"));
	h1 = static_part_header(&resp, &file, 1, buf);
	ck_assert_ptr_nonnull(
	    strstr(buf, "Content-Range: bytes 6442450943-6442450943/6442450944\r\n"));
	t = static_multipart_trailer(&resp, buf);
	ck_assert_uint_eq(t, 2 + 2 + STATIC_BOUNDARY_LEN + 2 + 2);
	ck_assert_uint_eq(resp.content_length, h0 + 4294967297u + h1 + 1 + t);
	/* whole file */
	req.range = NULL;
	respond();
	ck_assert_uint_eq(resp.content_length, 6 * gib);
}
END_TEST

/* A precompressed sidecar (static_target chose it): its coding goes with
 * its bytes, Vary with every status, and its tag is its own plus the
 * coding, never the identity file's even with the same size and mtime. */
START_TEST(sidecar)
{
	char ident[ETAG_MAX];

	reset();
	file.vary = true;
	respond();
	ck_assert(resp.vary);
	ck_assert_ptr_null(resp.content_encoding);
	ck_assert_str_eq(resp.etag, ETAG);
	strcpy(ident, resp.etag);

	file.content_encoding = "br";
	respond();
	ck_assert_int_eq(resp.status, 200);
	ck_assert_str_eq(resp.content_encoding, "br");
	ck_assert_str_eq(resp.etag, "\"2ebc98a1-14-br\"");
	ck_assert_str_ne(resp.etag, ident);
	ck_assert(resp.vary);

	set_range("bytes=2-5");
	respond();
	ck_assert_int_eq(resp.status, 206);
	ck_assert_str_eq(resp.content_encoding, "br");
	ck_assert_str_eq(resp.content_range, "bytes 2-5/20");

	/* If-Range with the identity's tag: not this representation, 200. */
	set_if_range(ident);
	respond();
	ck_assert_int_eq(resp.status, 200);
	set_if_range("\"2ebc98a1-14-br\"");
	respond();
	ck_assert_int_eq(resp.status, 206);

	reset();
	file.vary = true;
	file.content_encoding = "gzip";
	file.recent = true;
	req.cond.if_none_match = "\"2ebc98a1-14-2a-3e8-gzip\"";
	req.cond.if_none_match_len = strlen(req.cond.if_none_match);
	respond();
	ck_assert_int_eq(resp.status, 304);
	ck_assert_ptr_null(resp.content_encoding); /* representation metadata: not on a 304 */
	ck_assert(resp.vary);
	req.cond.if_none_match = ident;
	req.cond.if_none_match_len = strlen(ident);
	respond();
	ck_assert_int_eq(resp.status, 200);

	reset();
	file.content_encoding = "zstd";
	set_range("bytes=100-");
	respond();
	ck_assert_int_eq(resp.status, 416);
	ck_assert_ptr_null(resp.content_encoding);
	ck_assert(!resp.vary);
}
END_TEST

/* Validators made once by the opener (its memo) are sent as they are,
 * and conditionals compare against them; a sidecar's coding is still
 * added to the tag. */
START_TEST(made_validators)
{
	reset();
	file.etag = "\"made\"";
	file.last_modified = "Mon, 07 Nov 1994 08:49:37 GMT";
	respond();
	ck_assert_str_eq(resp.etag, "\"made\"");
	ck_assert_str_eq(resp.last_modified, "Mon, 07 Nov 1994 08:49:37 GMT");
	req.cond.if_none_match = "\"made\"";
	req.cond.if_none_match_len = 6;
	respond();
	ck_assert_int_eq(resp.status, 304);
	req.cond.if_none_match = NULL;
	file.content_encoding = "gzip";
	respond();
	ck_assert_str_eq(resp.etag, "\"made-gzip\"");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("static_file");
	TCase *tc = tcase_create("respond");
	tcase_add_test(tc, whole_file);
	tcase_add_test(tc, head);
	tcase_add_test(tc, not_modified);
	tcase_add_test(tc, precondition_failed);
	tcase_add_test(tc, single_range);
	tcase_add_test(tc, unsatisfiable);
	tcase_add_test(tc, ignored_ranges);
	tcase_add_test(tc, if_range);
	tcase_add_test(tc, boundary);
	tcase_add_test(tc, multipart_exact);
	tcase_add_test(tc, multipart_without_content_type);
	tcase_add_test(tc, large_file);
	tcase_add_test(tc, multipart_length_overflow);
	tcase_add_test(tc, sidecar);
	tcase_add_test(tc, made_validators);
	suite_add_tcase(s, tc);
	return check_run(s);
}
