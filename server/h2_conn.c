#include "server/h2_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "server/body_send.h"
#include "server/conn.h"
#include "server/h2_session.h"
#include "server/log.h"
#include "server/worker.h"

/* After a timeout's GOAWAY, how long the client has to go. */
#define H2_LINGER_MS 2000

static bool kernel_encrypts(const struct conn *c)
{
	return !conn_user_tls(c);
}

/* ---- the batch buffer ---- */

static bool batch_open(struct h2_session *hs)
{
	struct conn *c = hs->c;
	size_t cap = c->w->srv->cfg->h2_buffer;

	if (kernel_encrypts(c)) {
		/* The batch is the send buffer: the kernel encrypts what we
		 * send. A batch in it that has not left yet is not added to. */
		if (c->send_posted || c->wire.tx_len > 0 || tls_wire_reserve(&c->wire, cap) < 0)
			return false;
		hs->out = c->wire.tx;
		hs->out_len = c->wire.tx_len;
		hs->out_cap = c->wire.tx_cap;
		return true;
	}
	if (!hs->out) {
		hs->out = malloc(cap);
		if (!hs->out)
			return false;
		hs->out_cap = cap;
	}
	return true;
}

static void batch_close(struct h2_session *hs)
{
	if (kernel_encrypts(hs->c))
		hs->c->wire.tx_len = hs->out_len;
}

static void post_reads(struct h2_session *hs)
{
	for (struct h2_stream *s = hs->reading; s; s = s->next_reading) {
		struct io_uring_sqe *sqe = ring_sqe(&hs->c->w->ring);
		io_uring_prep_readv(sqe, s->file_fd, s->iov, (unsigned)s->niov, s->read_off);
		io_uring_sqe_set_data64(sqe, ring_tag(s, CONN_OP_H2_READ));
		s->read_posted = true;
		hs->reads_pending++;
		hs->c->inflight++;
		hs->c->w->stats.read_ops++;
	}
	hs->reading = NULL;
}

void h2_read_complete(struct h2_stream *s, int res)
{
	struct conn *c = s->hs->c;

	h2_session_read_done(s, res);
	conn_op_done(c);
}

void h2_conn_start(struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;
	struct h2_session *hs;

	if (h2_session_new(&hs, c) < 0) {
		conn_abort(c, "HTTP/2 session set-up failed");
		return;
	}
	c->h2 = hs;
	c->state = CONN_H2;
	/* The HTTP/1.1 parser (17 KB) has nothing to do here. */
	free(c->parser);
	c->parser = NULL;
	hs->sendfile = cfg->h2_sendfile && kernel_encrypts(c) && c->w->feat.splice &&
		       body_send_open_pipe(c) == 0;
	h2_drive(c);
}

/* Feeds nghttp2 what has been received and decrypted. false: the conn is
 * closing or waits for a send. */
static bool take_input(struct conn *c)
{
	struct h2_session *hs = c->h2;

	for (;;) {
		size_t avail = c->plain_end - c->plain_start;
		if (avail > 0) {
			/* Input refreshes no timer: see update_deadline. */
			ssize_t rv = h2_session_recv(hs, (const uint8_t *)c->plain + c->plain_start,
						     avail);
			if (rv < 0) {
				log_msg(LOG_DEBUG, "%s: HTTP/2: %s", c->peer_text, nghttp2_strerror((int)rv));
				conn_abort(c, "HTTP/2 protocol error");
				return false;
			}
			c->plain_start += (size_t)rv;
			continue;
		}
		int rc = conn_read_plain(c);
		if (rc < 0)
			return false;
		if (rc == 0)
			return true;
	}
}

/* The --h2-sendfile pipeline: frames up to a DATA frame's header, that
 * header in a send of its own, the payload by splice, and again. */
static void output_sendfile(struct conn *c)
{
	struct h2_session *hs = c->h2;

	for (;;) {
		if (c->send_posted || c->splice_posted)
			return;
		if (c->wire.tx_len > 0) {
			conn_post_send(c, 0);
			return;
		}
		if (c->splice_len > 0) {
			body_send_post_splice(c, CONN_OP_SPLICE_OUT, -1, c->splice_len, 0, 0);
			return;
		}
		if (hs->sf && hs->sf_len > 0) {
			size_t n = hs->sf_len < c->pipe_size ? hs->sf_len : c->pipe_size;
			body_send_post_splice(c, CONN_OP_SPLICE_IN, hs->sf->file_fd, n, hs->sf_off,
					      0);
			return;
		}
		if (hs->sf) {
			struct h2_stream *s = hs->sf;
			hs->sf = NULL;
			h2_stream_release(s);
		}
		if (!batch_open(hs))
			return;
		int rv = h2_session_fill(hs);
		batch_close(hs);
		if (rv != 0) {
			conn_abort(c, "HTTP/2 send failed");
			return;
		}
		if (c->wire.tx_len == 0 && !hs->sf)
			return;
	}
}

void h2_splice_done(struct conn *c, int op, int res)
{
	struct h2_session *hs = c->h2;

	if (op == CONN_OP_SPLICE_OUT && res == -EAGAIN) {
		body_send_post_poll_out(c);
		return;
	}
	if (res < 0 || (op == CONN_OP_SPLICE_IN && res == 0)) {
		/* The frame header promised bytes we cannot send. */
		if (res == 0) {
			c->w->stats.truncated++;
			log_msg(LOG_WARN, "h2 stream %d: file shrank during the response; closing",
				hs->sf ? hs->sf->id : 0);
		}
		conn_abort(c, res == 0 ? "file shrank under an HTTP/2 response" : "splice failed");
		return;
	}
	if (op == CONN_OP_SPLICE_IN) {
		hs->sf_off += (uint64_t)res;
		hs->sf_len -= (size_t)res;
		c->splice_len = (size_t)res;
	} else if (op == CONN_OP_SPLICE_OUT) {
		c->splice_len -= (size_t)res;
		c->w->stats.bytes_out += (uint64_t)res;
		if (res > 0)
			c->sent_ms = c->w->now_ms;
	}
	h2_drive(c);
}

/* Whether we owe the client bytes: a response not all out, or anything
 * on its way to the socket. */
static bool owes(const struct conn *c)
{
	const struct h2_session *hs = c->h2;
	return c->send_posted || c->splice_posted || hs->reads_pending || hs->out_len ||
	       c->wire.tx_len || hs->sf || h2_session_owes(hs);
}

/* The deadline comes from three clocks, none of which the client can wind
 * by sending (PING, SETTINGS, WINDOW_UPDATE of 0, a byte of a frame):
 *  - while we owe bytes: --send-timeout from the moment responses last
 *    moved, the earlier of two: response bytes last went into a batch (a
 *    window held at zero stops that, PING ACKs do not count), and, with a
 *    send in flight, the socket last accepted bytes (a reader that stopped);
 *    neither earlier than the moment we began to owe;
 *  - otherwise: --idle-timeout from the last completed stream;
 *  - and while a header block is unfinished: --header-timeout from its
 *    first byte. */
static void update_deadline(struct conn *c)
{
	struct h2_session *hs = c->h2;
	const struct config *cfg = c->w->srv->cfg;
	uint64_t d;

	if (hs->timed_out)
		return; /* the close it set stands */
	bool owed = owes(c);
	if (owed && !hs->owed)
		hs->owed_since_ms = c->w->now_ms;
	hs->owed = owed;
	if (owed) {
		uint64_t moved = hs->packed_ms > hs->owed_since_ms ? hs->packed_ms : hs->owed_since_ms;
		uint64_t sent = c->sent_ms > hs->owed_since_ms ? c->sent_ms : hs->owed_since_ms;
		if ((c->send_posted || c->splice_posted) && sent < moved)
			moved = sent;
		d = moved + cfg->send_timeout_ms;
	} else
		d = hs->idle_since_ms + cfg->idle_timeout_ms;
	if (hs->header_block_ms && hs->header_block_ms + cfg->header_timeout_ms < d)
		d = hs->header_block_ms + cfg->header_timeout_ms;
	c->deadline_ms = d;
}

void h2_timeout(struct conn *c)
{
	struct h2_session *hs = c->h2;

	if (hs->timed_out) {
		conn_abort(c, "HTTP/2 timeout");
		return;
	}
	/* Say GOAWAY first (RFC 9113 6.8); if that does not end it soon,
	 * drop it. */
	hs->timed_out = true;
	c->deadline_ms = c->w->now_ms + H2_LINGER_MS;
	h2_session_goaway(hs);
	h2_drive(c);
}

void h2_release_idle(struct conn *c)
{
	struct h2_session *hs = c->h2;

	if (owes(c))
		return;
	if (hs->out_cap) {
		if (!kernel_encrypts(c))
			free(hs->out);
		hs->out = NULL;
		hs->out_cap = 0;
	}
	conn_release_idle_buffers(c);
}

void h2_drive(struct conn *c)
{
	struct h2_session *hs = c->h2;

	/* OpenSSL may write while reading: only with nothing on its way. */
	if (!c->send_posted && !take_input(c))
		return;
	if (c->state != CONN_H2)
		return;
	/* Keep reading (WINDOW_UPDATE, RST_STREAM, new requests) while we
	 * send, as long as the receive buffer has room once compacted. */
	if (!c->recv_posted && !c->peer_eof && c->wire.rx_end - c->wire.rx_start < c->rx_cap)
		conn_post_recv(c);

	if (hs->sendfile) {
		output_sendfile(c);
		if (c->state != CONN_H2)
			return;
	}
	while (!hs->sendfile) {
		/* Fill a batch: frames, and the holes for file bytes. */
		if (hs->reads_pending == 0 && !hs->cut && batch_open(hs)) {
			int rv = h2_session_fill(hs);
			batch_close(hs);
			if (rv != 0) {
				conn_abort(c, "HTTP/2 send failed");
				return;
			}
			post_reads(hs);
		}
		if (hs->reads_pending > 0 || c->send_posted || hs->out_len == 0)
			break;
		/* The batch is complete: one send. */
		if (hs->cut) {
			hs->out_len = hs->cut_at;
			batch_close(hs);
			c->close_after = true;
		}
		if (kernel_encrypts(c)) {
			conn_post_send(c, 0);
			hs->out_len = 0;
			break;
		}
		if (c->wire.tx_len > 0)
			break;
		if (tls_write(c->ssl, hs->out, hs->out_len) != TLS_DONE) {
			conn_abort(c, "TLS write failed");
			return;
		}
		hs->out_len = 0;
		conn_post_send(c, 0);
		if (hs->cut)
			break;
		/* loop: prepare the next batch while this one is sent */
	}
	if (hs->cut && !c->send_posted && hs->reads_pending == 0 && c->wire.tx_len == 0) {
		conn_abort(c, "file shrank under an HTTP/2 response");
		return;
	}
	update_deadline(c);
	bool idle = !nghttp2_session_want_read(hs->ng) && !nghttp2_session_want_write(hs->ng);
	if ((idle || (c->peer_eof && !nghttp2_session_want_write(hs->ng))) && !c->send_posted &&
	    hs->reads_pending == 0 && hs->out_len == 0 && c->wire.tx_len == 0 && !c->splice_posted &&
	    !hs->sf) {
		if (c->peer_eof)
			conn_abort(c, NULL);
		else
			conn_close_graceful(c);
	}
}

void h2_shutdown(struct conn *c)
{
	if (!h2_session_goaway(c->h2))
		return;
	/* nghttp2 stops reading new streams after GOAWAY and wants neither
	 * read nor write once the open ones are done: h2_drive then closes. */
	h2_drive(c);
}

void h2_conn_free(struct conn *c)
{
	struct h2_session *hs = c->h2;
	if (!hs)
		return;
	if (!kernel_encrypts(c))
		free(hs->out);
	h2_session_free(hs);
	c->h2 = NULL;
}
