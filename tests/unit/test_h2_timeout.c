/* Tests proto/h2_timeout.c's deadline: which clock sets it and from what
 * moment, on a session's fields alone (no nghttp2 session is made; the
 * timing out itself, which queues GOAWAY, is fuzz_h2_session's part). The
 * fields are proto/'s own (h2_session-int.h), which the unit tests of its
 * HTTP/2 parts may see. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "proto/h2_session-int.h"
#include "tests/unit/check_run.h"

static const struct h2_timeouts t = {.send_ms = 30000, .idle_ms = 60000, .header_ms = 10000};
static uint64_t now;
static struct h2_session hs;

static void start(uint64_t at)
{
	memset(&hs, 0, sizeof(hs));
	now = at;
	hs.env.now_ms = &now;
	hs.idle_since_ms = at;
}

static uint64_t deadline(bool owes, bool busy, bool throttled, uint64_t sent_ms)
{
	struct h2_sending out = {.owes = owes, .busy = busy, .throttled = throttled,
				 .sent_ms = sent_ms};
	uint64_t d = 7;

	ck_assert(h2_session_deadline(&hs, &t, &out, &d));
	return d;
}

START_TEST(test_idle_and_header_block)
{
	start(1000);
	ck_assert_uint_eq(deadline(false, false, false, 0), 1000 + t.idle_ms);
	ck_assert_int_eq(h2_session_waits(&hs), H2_WAIT_IDLE);
	ck_assert(!h2_session_reading_head(&hs));
	/* A header block begun at 2000: its timeout, the nearer. */
	hs.header_block_ms = 2000;
	now = 3000;
	ck_assert(h2_session_reading_head(&hs));
	ck_assert_uint_eq(deadline(false, false, false, 0), 2000 + t.header_ms);
	ck_assert_int_eq(h2_session_waits(&hs), H2_WAIT_HEAD);
	/* While bytes are owed, still the nearer of the two. */
	ck_assert_uint_eq(deadline(true, false, false, 0), 2000 + t.header_ms);
	ck_assert_int_eq(h2_session_waits(&hs), H2_WAIT_SEND);
	/* The block ended; a stream completed at 2500: idle from then. */
	hs.header_block_ms = 0;
	hs.idle_since_ms = 2500; /* a stream completed */
	ck_assert_uint_eq(deadline(false, false, false, 0), 2500 + t.idle_ms);
}
END_TEST

/* The send clock starts when bytes begin to be owed, not earlier, and
 * does not start again while they stay owed. */
START_TEST(test_send_from_owing)
{
	start(1000);
	hs.packed_ms = 500; /* a batch before we owed: does not count */
	now = 5000;
	ck_assert_uint_eq(deadline(true, false, false, 0), 5000 + t.send_ms);
	now = 9000;
	ck_assert_uint_eq(deadline(true, false, false, 0), 5000 + t.send_ms);
	/* A batch packed: responses moved. */
	hs.packed_ms = 8000;
	ck_assert_uint_eq(deadline(true, false, false, 0), 8000 + t.send_ms);
	/* Nothing owed, then owed again: a new start. */
	now = 10000;
	ck_assert_uint_eq(deadline(false, false, false, 0), 1000 + t.idle_ms);
	now = 11000;
	ck_assert_uint_eq(deadline(true, false, false, 0), 11000 + t.send_ms);
}
END_TEST

/* With a send in flight the socket's clock may say the client stopped
 * reading: the earlier of the two counts; under --limit-rate, the
 * socket's alone. Neither counts from before the owing began. */
START_TEST(test_send_in_flight)
{
	start(1000);
	now = 5000;
	deadline(true, false, false, 0); /* owed since 5000 */
	hs.packed_ms = 7000;
	now = 8000;
	/* The socket took bytes at 6000, before the last batch: it counts. */
	ck_assert_uint_eq(deadline(true, true, false, 6000), 6000 + t.send_ms);
	/* ... not when no send is in flight (the batch is the client's to read). */
	ck_assert_uint_eq(deadline(true, false, false, 6000), 7000 + t.send_ms);
	/* Later than the batch: the batch's clock, the earlier. */
	ck_assert_uint_eq(deadline(true, true, false, 7500), 7000 + t.send_ms);
	/* Throttled: the socket's clock alone, later or not. */
	ck_assert_uint_eq(deadline(true, true, true, 7500), 7500 + t.send_ms);
	/* Never before the owing began. */
	ck_assert_uint_eq(deadline(true, true, false, 100), 5000 + t.send_ms);
	ck_assert_uint_eq(deadline(true, true, true, 100), 5000 + t.send_ms);
}
END_TEST

/* Once timed out, the linger's deadline stands. */
START_TEST(test_timed_out_keeps_deadline)
{
	struct h2_sending out = {.owes = true};
	uint64_t d = 4242;

	start(1000);
	hs.timed_out = true;
	ck_assert(!h2_session_deadline(&hs, &t, &out, &d));
	ck_assert_uint_eq(d, 4242);
	ck_assert(!hs.owed); /* nor do its clocks move */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("h2_timeout");
	TCase *tc = tcase_create("h2_timeout");

	tcase_add_test(tc, test_idle_and_header_block);
	tcase_add_test(tc, test_send_from_owing);
	tcase_add_test(tc, test_send_in_flight);
	tcase_add_test(tc, test_timed_out_keeps_deadline);
	suite_add_tcase(s, tc);

	return check_run(s);
}
