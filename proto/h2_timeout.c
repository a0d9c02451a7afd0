/* An HTTP/2 session's timeout policy: which clock sets the deadline, and
 * what a deadline that passed means. The glue (server/http/h2_conn.c) says what
 * it knows of the socket and keeps the deadline; the clocks themselves are
 * the session's. See proto/h2_session.h. */
#include "proto/h2_stream.h"

bool h2_session_deadline(struct h2_session *hs, const struct h2_timeouts *t,
			 const struct h2_sending *out, uint64_t *deadline)
{
	uint64_t now = h2_now(hs), d;

	if (hs->timed_out)
		return false; /* the close it set stands */
	if (out->owes && !hs->owed)
		hs->owed_since_ms = now;
	hs->owed = out->owes;
	if (out->owes) {
		uint64_t moved = hs->packed_ms > hs->owed_since_ms ? hs->packed_ms : hs->owed_since_ms;
		uint64_t sent = out->sent_ms > hs->owed_since_ms ? out->sent_ms : hs->owed_since_ms;
		/* Under --limit-rate a batch leaves as slowly as we let it,
		 * and no new one is packed meanwhile: while it waited for
		 * tokens, the socket's clock alone says whether the client
		 * reads (PING ACKs alone are never throttled). */
		if (out->busy && (sent < moved || out->throttled))
			moved = sent;
		d = moved + t->send_ms;
	} else
		d = hs->idle_since_ms + t->idle_ms;
	if (hs->header_block_ms && hs->header_block_ms + t->header_ms < d)
		d = hs->header_block_ms + t->header_ms;
	*deadline = d;
	return true;
}

enum h2_timeout h2_session_time_out(struct h2_session *hs, const struct h2_timeouts *t,
				    uint64_t *deadline)
{
	uint64_t now = h2_now(hs);
	enum h2_timeout which;

	if (hs->timed_out)
		return H2_TIMEOUT_LINGER;
	/* Which of h2_session_deadline's clocks ran out. */
	if (hs->header_block_ms && now >= hs->header_block_ms + t->header_ms)
		which = H2_TIMEOUT_HEADER;
	else
		which = hs->owed ? H2_TIMEOUT_SEND : H2_TIMEOUT_IDLE;
	/* Say GOAWAY first (RFC 9113 6.8); if that does not end it soon,
	 * the glue drops it. */
	hs->timed_out = true;
	*deadline = now + H2_LINGER_MS;
	h2_session_goaway(hs);
	return which;
}

enum h2_wait h2_session_waits(const struct h2_session *hs)
{
	if (hs->owed)
		return H2_WAIT_SEND;
	return hs->header_block_ms ? H2_WAIT_HEAD : H2_WAIT_IDLE;
}

bool h2_session_reading_head(const struct h2_session *hs)
{
	return hs->header_block_ms != 0;
}
