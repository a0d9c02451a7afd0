/* What the client sends to an HTTP/2 session, followed frame by frame
 * ahead of nghttp2 for what nghttp2 does not tell: when a header block
 * starts (the --header-timeout clock) and which frames fall on streams
 * nghttp2 has let go of (answered as h2_closed.h says). See
 * proto/h2_session.h. */
#include "proto/h2_stream.h"

#include <string.h>

static int32_t frame_stream_id(const uint8_t *head)
{
	return (int32_t)(((uint32_t)head[5] << 24 | (uint32_t)head[6] << 16 |
			  (uint32_t)head[7] << 8 | head[8]) &
			 0x7fffffff);
}

/* The frame whose header is head may be on a stream nghttp2 has let go
 * of: DATA or HEADERS on a client stream no higher than the highest
 * opened. After our GOAWAY, such frames are dropped (RFC 9113 6.8). */
static bool needs_look(const struct h2_session *hs, const uint8_t *head)
{
	int32_t id = frame_stream_id(head);

	return (head[3] == NGHTTP2_DATA || head[3] == NGHTTP2_HEADERS) && (id & 1) &&
	       id <= hs->closed.highest && !hs->stopping;
}

/* nghttp2 has taken every frame before the one whose header is in
 * hs->scan.head, and no byte of what follows. If that frame's stream is
 * closed, nghttp2 (without closed-stream records) would drop it in
 * silence: answer it as RFC 9113 says (h2_closed.h), then let nghttp2
 * drop it, its header block still decoded (HPACK stays in step). */
static void look_at_frame(struct h2_session *hs)
{
	const uint8_t *head = hs->scan.head;
	int32_t id = frame_stream_id(head);

	if (nghttp2_session_find_stream(hs->ng, id))
		return; /* open: nghttp2's rules apply */
	struct h2_closed_answer a = h2_closed_judge(&hs->closed, head[3], id);
	switch (a.verdict) {
	case H2_CLOSED_IGNORE:
		break;
	case H2_CLOSED_STREAM_ERROR:
		/* One RST_STREAM per stream (then its frames are ignored),
		 * each charged to --h2-reset-rate by frame_send_cb. */
		h2_closed_mark(&hs->closed, id, H2_CLOSED_OUR_RST);
		nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, id, a.error);
		break;
	case H2_CLOSED_CONN_ERROR:
		hs->stopping = true;
		hs->terminated = true;
		nghttp2_session_terminate_session(hs->ng, a.error);
		break;
	}
}

/* Follows the frame boundaries of what the client sends, ahead of
 * nghttp2, for what nghttp2 does not tell: a header block (HEADERS, then
 * CONTINUATIONs up to END_HEADERS) starts with the first byte of its
 * HEADERS frame, however slowly that frame arrives; and a frame on a
 * closed stream (needs_look) must be looked at when nghttp2 has taken all
 * before it. Returns how many of the n bytes at p nghttp2 may take now:
 * all, or those before the last byte of such a frame's header, with
 * hs->scan.look set. */
static size_t scan_input(struct h2_session *hs, const uint8_t *p, size_t n)
{
	struct h2_frame_scan *sc = &hs->scan;
	uint64_t now = h2_now(hs);
	size_t walked = 0;

	while (walked < n) {
		if (sc->skip > 0) {
			size_t k = sc->skip < n - walked ? sc->skip : n - walked;
			sc->skip -= k;
			walked += k;
			if (sc->skip == 0 && sc->ends_block)
				hs->header_block_ms = 0;
			continue;
		}
		if (sc->head_have == 0)
			sc->frame_start_ms = now;
		if (sc->head_have < FRAME_HEADER - 1) {
			size_t k = FRAME_HEADER - 1 - sc->head_have;
			k = k < n - walked ? k : n - walked;
			memcpy(sc->head + sc->head_have, p + walked, k);
			sc->head_have += k;
			walked += k;
			continue;
		}
		sc->head[FRAME_HEADER - 1] = p[walked];
		if (!sc->looked && needs_look(hs, sc->head)) {
			sc->looked = true;
			sc->look = true;
			return walked;
		}
		walked++;
		sc->head_have = 0;
		sc->looked = false;
		sc->skip = (size_t)sc->head[0] << 16 | (size_t)sc->head[1] << 8 | sc->head[2];
		uint8_t type = sc->head[3], flags = sc->head[4];
		if (type == NGHTTP2_HEADERS) {
			h2_closed_opened(&hs->closed, frame_stream_id(sc->head));
			if (!hs->header_block_ms)
				hs->header_block_ms = sc->frame_start_ms ? sc->frame_start_ms : 1;
		}
		sc->ends_block = (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION) &&
				 (flags & NGHTTP2_FLAG_END_HEADERS);
		if (sc->skip == 0 && sc->ends_block)
			hs->header_block_ms = 0;
	}
	return walked;
}

ssize_t h2_session_recv(struct h2_session *hs, const uint8_t *data, size_t len)
{
	size_t done = 0;

	/* Mostly one call for all of it: only a DATA or HEADERS frame on a
	 * stream already opened (a request body, trailers, or a closed
	 * stream's) splits it. nghttp2 takes all it is given (no callback of
	 * ours pauses it). */
	while (done < len) {
		size_t n = scan_input(hs, data + done, len - done);
		if (n > 0) {
			ssize_t rv = nghttp2_session_mem_recv(hs->ng, data + done, n);
			if (rv < 0)
				return rv;
			done += n;
		}
		if (hs->scan.look) {
			hs->scan.look = false;
			look_at_frame(hs);
		}
	}
	return (ssize_t)len;
}
