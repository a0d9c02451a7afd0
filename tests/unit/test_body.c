/* Tests proto/body.c: the walk over a static response's body. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/body.h"
#include "proto/static_file.h"
#include "tests/unit/check_run.h"

#define DATA "0123456789abcdefghij" /* the "file": 20 bytes */

static struct static_request req;
static struct static_file file;
static struct static_response resp;
static struct body b;

static void start(const char *range, bool head)
{
	memset(&req, 0, sizeof(req));
	req.head = head;
	req.range = range;
	req.range_len = range ? strlen(range) : 0;
	file = (struct static_file){
	    .size = 20, .ino = 7, .mtime_sec = 784111777, .content_type = "text/plain"};
	static_file_respond(&req, &file, 42, &resp);
	body_start(&b, &resp, &file);
}

/* Walks the body as a sender does, room bytes at a time, reading the
 * "file" from DATA; returns the bytes produced. */
static size_t walk(char *out, size_t outsz, size_t room)
{
	size_t len = 0;
	char buf[STATIC_PART_HEADER_MAX];

	for (int steps = 0; steps < 1000; steps++) {
		size_t n = 0;
		uint64_t off = 0;
		size_t r = room < sizeof(buf) ? room : sizeof(buf);

		switch (body_next(&b, buf, r, &n, &off)) {
		case BODY_DONE:
			ck_assert(b.done);
			ck_assert_uint_eq(b.remaining, 0);
			return len;
		case BODY_LITERAL:
			ck_assert_uint_le(len + n, outsz);
			memcpy(out + len, buf, n);
			len += n;
			break;
		case BODY_FILE:
			ck_assert_uint_le(n, r);
			ck_assert_uint_le(off + n, file.size);
			ck_assert_uint_le(len + n, outsz);
			memcpy(out + len, DATA + off, n);
			len += n;
			body_advance(&b, n);
			break;
		case BODY_FULL:
			ck_abort_msg("BODY_FULL with room %zu", r);
		}
	}
	ck_abort_msg("the walk does not end");
	return 0;
}

START_TEST(whole_file)
{
	char out[64];
	size_t n = 0;
	uint64_t off = 99;

	start(NULL, false);
	ck_assert_int_eq(resp.status, 200);
	ck_assert(!body_file_done(&b));
	ck_assert_uint_eq(b.remaining, 20);
	/* One file piece of at most room bytes, then the rest. */
	ck_assert_int_eq(body_next(&b, out, 8, &n, &off), BODY_FILE);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(off, 0);
	/* Nothing advances until the caller says what it read. */
	ck_assert_int_eq(body_next(&b, out, 64, &n, &off), BODY_FILE);
	ck_assert_uint_eq(n, 20);
	body_advance(&b, 8);
	ck_assert_uint_eq(b.remaining, 12);
	ck_assert_int_eq(body_next(&b, out, 64, &n, &off), BODY_FILE);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(off, 8);
	ck_assert_int_eq(body_next(&b, out, 0, &n, &off), BODY_FULL);
	body_advance(&b, 12);
	ck_assert(body_file_done(&b));
	ck_assert_int_eq(body_next(&b, out, 64, &n, &off), BODY_DONE);
	ck_assert_uint_eq(n, 0);

	start(NULL, false);
	ck_assert_uint_eq(walk(out, sizeof(out), 3), 20);
	ck_assert_mem_eq(out, DATA, 20);
}
END_TEST

START_TEST(head_has_no_body)
{
	char out[8];
	size_t n = 5;
	uint64_t off;

	start(NULL, true);
	ck_assert(b.done);
	ck_assert_uint_eq(b.remaining, 0);
	ck_assert(body_file_done(&b));
	ck_assert_int_eq(body_next(&b, out, sizeof(out), &n, &off), BODY_DONE);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(one_range)
{
	char out[64];

	start("bytes=5-9", false);
	ck_assert_int_eq(resp.status, 206);
	ck_assert_uint_eq(resp.nranges, 1);
	ck_assert_uint_eq(b.remaining, 5);
	ck_assert_uint_eq(walk(out, sizeof(out), 2), 5);
	ck_assert_mem_eq(out, "56789", 5);
	ck_assert(body_file_done(&b));
}
END_TEST

/* The walk produces exactly what static_file.c frames: part heads, the
 * ranges' bytes, the trailer, and content_length in all. */
START_TEST(multipart_framing)
{
	char want[1024], out[1024];
	size_t wl = 0;

	start("bytes=0-1,10-12,-2", false);
	ck_assert_int_eq(resp.status, 206);
	ck_assert_uint_eq(resp.nranges, 3);
	for (size_t i = 0; i < resp.nranges; i++) {
		wl += static_part_header(&resp, &file, i, want + wl);
		size_t k = resp.ranges[i].last - resp.ranges[i].first + 1;
		memcpy(want + wl, DATA + resp.ranges[i].first, k);
		wl += k;
	}
	wl += static_multipart_trailer(&resp, want + wl);
	ck_assert_uint_eq(wl, resp.content_length);

	/* Framing never comes in pieces: less room than a part head is
	 * BODY_FULL, and nothing moves. */
	size_t h0 = static_part_header(&resp, &file, 0, out), n;
	uint64_t off;
	start("bytes=0-1,10-12,-2", false);
	ck_assert_int_eq(body_next(&b, out, h0 - 1, &n, &off), BODY_FULL);
	ck_assert_uint_eq(b.remaining, resp.content_length);
	ck_assert_uint_eq(walk(out, sizeof(out), STATIC_PART_HEADER_MAX), wl);
	ck_assert_mem_eq(out, want, wl);
}
END_TEST

/* The file may be closed once its last byte is produced, though the
 * multipart trailer is still to come. */
START_TEST(file_done_before_trailer)
{
	char buf[STATIC_PART_HEADER_MAX];
	size_t n;
	uint64_t off;
	enum body_step st;

	start("bytes=0-1,18-19", false);
	ck_assert_uint_eq(resp.nranges, 2);
	for (;;) {
		ck_assert(!body_file_done(&b));
		st = body_next(&b, buf, sizeof(buf), &n, &off);
		ck_assert_int_ne(st, BODY_DONE);
		if (st == BODY_FILE) {
			body_advance(&b, n);
			if (off == 18)
				break;
		}
	}
	ck_assert(body_file_done(&b));
	ck_assert(!b.done);
	ck_assert_uint_gt(b.remaining, 0);
	ck_assert_int_eq(body_next(&b, buf, sizeof(buf), &n, &off), BODY_LITERAL);
	ck_assert_uint_eq(n, static_multipart_trailer(&resp, buf));
	ck_assert_uint_eq(b.remaining, 0);
	ck_assert(body_file_done(&b));
	ck_assert_int_eq(body_next(&b, buf, sizeof(buf), &n, &off), BODY_DONE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("body");
	TCase *tc = tcase_create("walk");
	tcase_add_test(tc, whole_file);
	tcase_add_test(tc, head_has_no_body);
	tcase_add_test(tc, one_range);
	tcase_add_test(tc, multipart_framing);
	tcase_add_test(tc, file_done_before_trailer);
	suite_add_tcase(s, tc);
	return check_run(s);
}
