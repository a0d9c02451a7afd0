/* Tests proto/h2_closed.c: what a frame on a closed stream gets, by how
 * the stream closed, and the ring of marks as the highest id moves on. */
#include <check.h>
#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "proto/h2_closed.h"
#include "tests/unit/check_run.h"

static void ck_answer(const struct h2_closed *t, uint8_t type, int32_t id,
                      enum h2_closed_verdict verdict, uint32_t error)
{
	struct h2_closed_answer a = h2_closed_judge(t, type, id);

	ck_assert_msg(a.verdict == verdict && a.error == error,
	              "type %u on stream %d: verdict %d error %u, want %d %u", type, id, a.verdict,
	              a.error, verdict, error);
}

#define IGNORED(t, type, id) ck_answer(t, type, id, H2_CLOSED_IGNORE, 0)
#define STREAM_CLOSED(t, type, id)                                                                 \
	ck_answer(t, type, id, H2_CLOSED_STREAM_ERROR, NGHTTP2_STREAM_CLOSED)
#define CONN(t, type, id, code) ck_answer(t, type, id, H2_CLOSED_CONN_ERROR, code)

START_TEST(test_by_how_it_closed)
{
	struct h2_closed t = {0};

	h2_closed_opened(&t, 1);
	h2_closed_mark(&t, 1, H2_CLOSED_ENDED);
	/* 5.1: any frame after END_STREAM: connection error */
	CONN(&t, NGHTTP2_DATA, 1, NGHTTP2_STREAM_CLOSED);
	CONN(&t, NGHTTP2_HEADERS, 1, NGHTTP2_STREAM_CLOSED);

	h2_closed_opened(&t, 7);
	ck_assert_int_eq(t.highest, 7);
	/* 3 and 5 were skipped: closed, never opened (5.1.1, 6.1) */
	CONN(&t, NGHTTP2_HEADERS, 3, NGHTTP2_PROTOCOL_ERROR);
	STREAM_CLOSED(&t, NGHTTP2_DATA, 5);

	/* the client reset 7: a stream error; its close after that is weaker */
	h2_closed_mark(&t, 7, H2_CLOSED_PEER_RST);
	h2_closed_mark(&t, 7, H2_CLOSED_ENDED);
	STREAM_CLOSED(&t, NGHTTP2_DATA, 7);
	STREAM_CLOSED(&t, NGHTTP2_HEADERS, 7);
	/* once we reset it too (our answer), what follows is ignored */
	h2_closed_mark(&t, 7, H2_CLOSED_OUR_RST);
	IGNORED(&t, NGHTTP2_DATA, 7);
	h2_closed_mark(&t, 7, H2_CLOSED_ENDED);
	IGNORED(&t, NGHTTP2_HEADERS, 7);

	/* the stream 1 mark stays where it was */
	CONN(&t, NGHTTP2_DATA, 1, NGHTTP2_STREAM_CLOSED);
}
END_TEST

START_TEST(test_marks_out_of_range)
{
	struct h2_closed t = {0};

	h2_closed_opened(&t, 9);
	h2_closed_mark(&t, 11, H2_CLOSED_OUR_RST); /* above the highest */
	h2_closed_mark(&t, 4, H2_CLOSED_OUR_RST);  /* even: not the client's */
	h2_closed_opened(&t, 11);
	CONN(&t, NGHTTP2_HEADERS, 11, NGHTTP2_PROTOCOL_ERROR);
	h2_closed_opened(&t, 10); /* even, and lower: no change */
	h2_closed_opened(&t, 3);
	ck_assert_int_eq(t.highest, 11);
}
END_TEST

START_TEST(test_ring)
{
	struct h2_closed t = {0};
	const int32_t span = 2 * H2_CLOSED_KEEP;

	for (int32_t id = 1; id <= span + 1; id += 2) {
		h2_closed_opened(&t, id);
		h2_closed_mark(&t, id, H2_CLOSED_OUR_RST);
	}
	/* stream 1 shares its slot with span + 1; it is out of range now */
	STREAM_CLOSED(&t, NGHTTP2_HEADERS, 1);
	IGNORED(&t, NGHTTP2_DATA, 3);
	IGNORED(&t, NGHTTP2_DATA, span + 1);
	/* skipping 3 + span: its slot held stream 3's mark, now out of range */
	h2_closed_opened(&t, span + 5);
	CONN(&t, NGHTTP2_HEADERS, span + 3, NGHTTP2_PROTOCOL_ERROR);
	STREAM_CLOSED(&t, NGHTTP2_DATA, 3);
	IGNORED(&t, NGHTTP2_DATA, 7);
}
END_TEST

START_TEST(test_far_jump)
{
	struct h2_closed t = {0};

	h2_closed_opened(&t, 1);
	h2_closed_mark(&t, 1, H2_CLOSED_OUR_RST);
	h2_closed_opened(&t, INT32_MAX); /* one pass over the ring, no overflow */
	ck_assert_int_eq(t.highest, INT32_MAX);
	CONN(&t, NGHTTP2_HEADERS, INT32_MAX - 2, NGHTTP2_PROTOCOL_ERROR);
	CONN(&t, NGHTTP2_HEADERS, INT32_MAX - 2 * (H2_CLOSED_KEEP - 1), NGHTTP2_PROTOCOL_ERROR);
	STREAM_CLOSED(&t, NGHTTP2_HEADERS, INT32_MAX - 2 * H2_CLOSED_KEEP);
	STREAM_CLOSED(&t, NGHTTP2_DATA, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("h2_closed");
	TCase *tc = tcase_create("h2_closed");

	tcase_add_test(tc, test_by_how_it_closed);
	tcase_add_test(tc, test_marks_out_of_range);
	tcase_add_test(tc, test_ring);
	tcase_add_test(tc, test_far_jump);
	suite_add_tcase(s, tc);
	return check_run(s);
}
