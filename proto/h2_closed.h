/* What a client's DATA or HEADERS frame on a closed HTTP/2 stream gets
 * (RFC 9113 5.1, 5.1.1, 6.1). Sans-I/O.
 *
 * nghttp2 answers those frames only from its closed-stream records, which
 * the session turns off (nghttp2_option_set_no_closed_streams): each is a
 * whole nghttp2_stream (224 bytes in 1.52, 240 with h2_mem's header), up
 * to --h2-max-streams of them per connection, kept while it is idle. This
 * keeps what the rules need instead: the highest stream the client opened,
 * and two bits for each of the last H2_CLOSED_KEEP streams below it, saying
 * how each one closed. A stream is closed when its id is at most the
 * highest and nghttp2 does not hold it open (the caller asks nghttp2). */
#ifndef KTLSD_PROTO_H2_CLOSED_H
#define KTLSD_PROTO_H2_CLOSED_H

#include <stdint.h>

/* Streams whose closing is remembered: twice the default --h2-max-streams.
 * Below that, the "short period" after our RST_STREAM in which frames in
 * flight must be ignored (RFC 9113 5.1, "closed") is taken as over. */
#define H2_CLOSED_KEEP 256

/* How a stream closed, weakest first: a later mark never lowers it. */
enum h2_closed_how {
	H2_CLOSED_UNSEEN,   /* never opened: a lower id the client skipped (5.1.1) */
	H2_CLOSED_ENDED,    /* both sides ended it (the client with END_STREAM) */
	H2_CLOSED_PEER_RST, /* the client reset it */
	H2_CLOSED_OUR_RST,  /* we reset it */
};

struct h2_closed {
	int32_t highest;                 /* the highest stream id the client opened, or 0 */
	uint8_t how[H2_CLOSED_KEEP / 4]; /* 2 bits per stream (odd ids), by (id >> 1) */
};

enum h2_closed_verdict {
	H2_CLOSED_IGNORE,       /* drop the frame */
	H2_CLOSED_STREAM_ERROR, /* RST_STREAM with error */
	H2_CLOSED_CONN_ERROR,   /* GOAWAY with error */
};

struct h2_closed_answer {
	enum h2_closed_verdict verdict;
	uint32_t error; /* an HTTP/2 error code (nghttp2_error_code) */
};

/* A HEADERS frame opened id, above t->highest: the ids it skipped are
 * closed (RFC 9113 5.1.1), never seen. */
void h2_closed_opened(struct h2_closed *t, int32_t id);

/* Stream id closed, or was reset, as how says (ignored outside the kept
 * range, and when a stronger mark is there). */
void h2_closed_mark(struct h2_closed *t, int32_t id, enum h2_closed_how how);

/* The answer to a frame of type (NGHTTP2_DATA or NGHTTP2_HEADERS) on id,
 * a client stream (odd) at most t->highest that nghttp2 does not hold
 * open:
 * - we reset it: ignore (5.1: MUST, for frames the client sent before our
 *   RST_STREAM reached it);
 * - the client reset it: stream error STREAM_CLOSED (5.1);
 * - both ended it: connection error STREAM_CLOSED (5.1: any frame after
 *   END_STREAM);
 * - never opened: HEADERS is a reused lower id, connection error
 *   PROTOCOL_ERROR (5.1.1); DATA a stream error STREAM_CLOSED (6.1);
 * - older than the kept range: stream error STREAM_CLOSED. */
struct h2_closed_answer h2_closed_judge(const struct h2_closed *t, uint8_t type, int32_t id);

#endif
