#include "server/h2_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/bufpool.h"
#include "server/conn.h"
#include "server/h2_session.h"
#include "server/log.h"
#include "server/sock.h"
#include "server/worker.h"

/* After a timeout's GOAWAY, how long the client has to go. */
#define H2_LINGER_MS 2000

static bool kernel_encrypts(const struct conn *c)
{
	return !sock_user_tls(c->sock);
}

/* ---- the batch buffer ---- */

static bool batch_open(struct h2_session *hs)
{
	struct conn *c = hs->c;
	struct sock *s = c->sock;
	size_t cap = c->w->srv->cfg->h2_buffer;

	if (kernel_encrypts(c)) {
		/* The batch is the send buffer: the kernel encrypts what we
		 * send. A batch in it that has not left yet is not added to. */
		size_t room;
		if (sock_busy(s) || sock_tx_pending(s))
			return false;
		hs->out = sock_out_reserve(s, cap, &room);
		if (!hs->out)
			return false;
		hs->out_len = 0;
		hs->out_cap = room;
		return true;
	}
	if (!hs->out) {
		hs->out = bufpool_get(&c->w->bufs, cap, &hs->out_cap);
		if (!hs->out)
			return false;
	}
	return true;
}

/* With kTLS the batch's frames become the send buffer's bytes. */
static void batch_close(struct h2_session *hs)
{
	if (kernel_encrypts(hs->c))
		sock_out_commit(hs->c->sock, hs->out_len);
}

/* A stream's readv: the ring operation and whose it is. */
struct h2_read {
	struct ring_op op;
	struct h2_stream *stream;
	struct conn *c;
};

static void read_done(struct ring_op *op, int res, uint32_t flags)
{
	struct h2_read *rd = container_of(op, struct h2_read, op);
	struct conn *c = rd->c;

	(void)flags;
	h2_session_read_done(rd->stream, res);
	free(rd);
	if (!sock_closed(c->sock))
		conn_drive(c);
	sock_release(c->sock);
}

static bool post_reads(struct h2_session *hs)
{
	struct conn *c = hs->c;

	for (struct h2_stream *s = hs->reading; s; s = s->next_reading) {
		struct h2_read *rd = malloc(sizeof(*rd));
		if (!rd) {
			hs->reading = s; /* the rest are never read: the batch must not leave */
			return false;
		}
		rd->op.complete = read_done;
		rd->stream = s;
		rd->c = c;
		struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
		io_uring_prep_readv(sqe, s->file_fd, s->iov, (unsigned)s->niov, s->read_off);
		ring_op_attach(sqe, &rd->op);
		s->read_posted = true;
		hs->reads_pending++;
		sock_hold(c->sock);
		c->w->stats.read_ops++;
	}
	hs->reading = NULL;
	return true;
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
	hs->sendfile = cfg->h2_sendfile && kernel_encrypts(c) && sock_can_splice(c->sock);
	h2_drive(c);
}

/* Feeds nghttp2 what has been received and decrypted. false: the conn is
 * closing or waits for a send. */
static bool take_input(struct conn *c)
{
	struct h2_session *hs = c->h2;
	struct sock *s = c->sock;

	for (;;) {
		size_t avail;
		const char *p = sock_input(s, &avail);
		if (avail > 0) {
			/* Input refreshes no timer: see update_deadline. */
			ssize_t rv = h2_session_recv(hs, (const uint8_t *)p, avail);
			if (rv < 0) {
				log_msg(LOG_DEBUG, "%s: HTTP/2: %s", c->peer_text, nghttp2_strerror((int)rv));
				conn_abort(c, "HTTP/2 protocol error");
				return false;
			}
			sock_consume(s, (size_t)rv);
			continue;
		}
		switch (sock_decrypt(s)) {
		case SOCK_IN_NEW:
			continue;
		case SOCK_IN_AGAIN:
			return true;
		case SOCK_IN_CLOSED:
			conn_close_graceful(c);
			return false;
		case SOCK_IN_STOP:
			return false;
		}
	}
}

/* The --h2-sendfile pipeline: frames up to a DATA frame's header, that
 * header in a send of its own, the payload by the transport's splice, and
 * again. */
static void output_sendfile(struct conn *c)
{
	struct h2_session *hs = c->h2;
	struct sock *s = c->sock;

	for (;;) {
		if (sock_busy(s))
			return;
		if (sock_tx_pending(s)) {
			sock_send(s, 0);
			return;
		}
		if (hs->sf && hs->sf_len > 0) {
			size_t max = sock_splice_max(s);
			sock_splice_file(s, hs->sf->file_fd, hs->sf_off,
					 hs->sf_len < max ? hs->sf_len : max, false);
			return;
		}
		if (hs->sf) {
			struct h2_stream *st = hs->sf;
			hs->sf = NULL;
			h2_stream_release(st);
		}
		if (!batch_open(hs))
			return;
		int rv = h2_session_fill(hs);
		batch_close(hs);
		if (rv != 0) {
			conn_abort(c, "HTTP/2 send failed");
			return;
		}
		if (!sock_tx_pending(s) && !hs->sf)
			return;
	}
}

void h2_spliced(struct conn *c, int res)
{
	struct h2_session *hs = c->h2;

	if (res <= 0) {
		/* The frame header promised bytes we cannot send. */
		if (res == 0) {
			c->w->stats.truncated++;
			log_msg(LOG_WARN, "h2 stream %d: file shrank during the response; closing",
				hs->sf ? hs->sf->id : 0);
		}
		conn_abort(c, res == 0 ? "file shrank under an HTTP/2 response" : "splice failed");
		return;
	}
	hs->sf_off += (uint64_t)res;
	hs->sf_len -= (size_t)res;
}

/* Whether we owe the client bytes: a response not all out, or anything
 * on its way to the socket. */
static bool owes(const struct conn *c)
{
	const struct h2_session *hs = c->h2;
	return !sock_drained(c->sock) || hs->reads_pending || hs->out_len || hs->sf ||
	       h2_session_owes(hs);
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
		uint64_t sent_ms = sock_sent_ms(c->sock);
		uint64_t sent = sent_ms > hs->owed_since_ms ? sent_ms : hs->owed_since_ms;
		if (sock_busy(c->sock) && sent < moved)
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
			bufpool_put(&c->w->bufs, hs->out, hs->out_cap);
		hs->out = NULL;
		hs->out_cap = 0;
	}
	sock_release_idle_buffers(c->sock);
}

void h2_drive(struct conn *c)
{
	struct h2_session *hs = c->h2;
	struct sock *s = c->sock;

	if (!take_input(c))
		return;
	if (c->state != CONN_H2)
		return;
	/* Keep reading (WINDOW_UPDATE, RST_STREAM, new requests) while we
	 * send, as long as the receive buffer has room. */
	sock_recv(s);

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
			if (rv != 0 || !post_reads(hs)) {
				conn_abort(c, "HTTP/2 send failed");
				return;
			}
		}
		if (hs->reads_pending > 0 || sock_busy(s) || hs->out_len == 0)
			break;
		/* The batch is complete: one send. */
		if (hs->cut) {
			if (kernel_encrypts(c))
				sock_out_uncommit(s, hs->out_len - hs->cut_at);
			hs->out_len = hs->cut_at;
			c->close_after = true;
		}
		if (kernel_encrypts(c)) {
			sock_send(s, 0);
			hs->out_len = 0;
			break;
		}
		if (sock_tx_pending(s))
			break;
		if (sock_write(s, hs->out, hs->out_len) < 0) {
			conn_abort(c, "TLS write failed");
			return;
		}
		hs->out_len = 0;
		sock_send(s, 0);
		if (hs->cut)
			break;
		/* loop: prepare the next batch while this one is sent */
	}
	if (sock_closed(s))
		return;
	if (hs->cut && !sock_busy(s) && hs->reads_pending == 0 && !sock_tx_pending(s)) {
		conn_abort(c, "file shrank under an HTTP/2 response");
		return;
	}
	update_deadline(c);
	bool idle = !nghttp2_session_want_read(hs->ng) && !nghttp2_session_want_write(hs->ng);
	bool eof = sock_peer_eof(s);
	if ((idle || (eof && !nghttp2_session_want_write(hs->ng))) && sock_drained(s) &&
	    hs->reads_pending == 0 && hs->out_len == 0 && !hs->sf) {
		if (eof)
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
		bufpool_put(&c->w->bufs, hs->out, hs->out_cap);
	h2_session_free(hs);
	c->h2 = NULL;
}
