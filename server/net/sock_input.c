/* The transport's input: receives into the ring's buffers or a pooled one,
 * and decrypts for the protocol (sock.h's "input" part). */
#include "server/net/sock-int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ktls/ktls.h"
#include "ktls/tls.h"
#include "proto/proxy_header.h"
#include "server/core/bufpool.h"
#include "server/core/log.h"
#include "server/net/sock.h"

/* ---- input ---- */

/* How bytes come in. No recv ever waits with a buffer of ours: with a
 * provided-buffer ring (rxring.h) the kernel picks a ring buffer when
 * bytes arrive; without one, a poll waits and the recv follows once the
 * socket is readable. So wire.rx holds bytes waiting to be consumed and
 * nothing else, and goes back as soon as they are: a connection waiting
 * for its next request holds no receive buffer.
 *
 * A ring buffer is lent to the connection for one completion only and
 * read in place. What the protocol leaves of it (a partial record or
 * request head, pipelined requests, input that waits for a send) moves to
 * a pooled buffer, and the next recv's bytes are appended there: a copy
 * only when input is left over, never of a whole busy stream.
 *
 * One recv at a time, not multishot: a multishot recv goes on delivering
 * while the protocol is busy answering, and its bytes would have to be
 * buffered without bound (or raced with a cancel); one recv, posted when
 * the protocol asks and never while rx is full, keeps the backpressure. */

/* Gives back wire.rx when nothing in it waits to be consumed. Not while a
 * recv writes into it (only briefly, after a poll or an empty ring). */
void sock_rx_give_back_if_empty(struct sock *s)
{
	struct tls_wire *wi = &s->wire;

	if (!wi->rx || wi->rx_start != wi->rx_end || s->rx_pinned)
		return;
	if (s->rx_bid >= 0)
		rxring_put(s->env->rx_ring, (unsigned)s->rx_bid);
	else
		bufpool_put(s->env->bufs, wi->rx, RX_CAP);
	s->rx_bid = -1;
	wi->rx = NULL;
	wi->rx_start = wi->rx_end = 0;
}

/* wire.rx is a pooled buffer (NULL if out of memory: the sock fails). */
static bool rx_take_pooled(struct sock *s)
{
	size_t cap;

	s->wire.rx = bufpool_get(s->env->bufs, RX_CAP, &cap);
	s->wire.rx_start = s->wire.rx_end = 0;
	if (!s->wire.rx) {
		sock_fail(s, "out of memory");
		return false;
	}
	return true;
}

/* The end of a ring buffer's loan: its leftover moves to a pooled buffer
 * and it goes back to the ring. */
static void rx_leave_ring(struct sock *s)
{
	struct tls_wire *wi = &s->wire;
	unsigned bid = (unsigned)s->rx_bid;

	if (s->rx_bid < 0)
		return;
	sock_rx_give_back_if_empty(s);
	if (!wi->rx)
		return;
	size_t left = wi->rx_end - wi->rx_start;
	const char *from = wi->rx + wi->rx_start;
	s->rx_bid = -1;
	if (rx_take_pooled(s)) {
		memcpy(wi->rx, from, left);
		wi->rx_end = left;
	}
	rxring_put(s->env->rx_ring, bid);
}

/* Room at the end of wire.rx for the next recv (0: full). */
static size_t rx_room(struct sock *s)
{
	struct tls_wire *wi = &s->wire;

	if (!wi->rx)
		return RX_CAP;
	if (wi->rx_start > 0) {
		memmove(wi->rx, wi->rx + wi->rx_start, wi->rx_end - wi->rx_start);
		wi->rx_end -= wi->rx_start;
		wi->rx_start = 0;
	}
	return RX_CAP - wi->rx_end;
}

static void post_recv_op(struct sock *s, struct io_uring_sqe *sqe,
			 void (*complete)(struct ring_op *, int, uint32_t))
{
	s->recv_op.complete = complete;
	ring_op_attach(sqe, &s->recv_op);
	s->recv_posted = true;
	s->inflight++;
	s->env->stats->recv_ops++;
}

/* A recv into the free end of wire.rx, which it pins until it completes:
 * only where bytes are known to be waiting. */
static void post_recv_into_rx(struct sock *s)
{
	struct tls_wire *wi = &s->wire;
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);

	io_uring_prep_recv(sqe, s->fd, wi->rx + wi->rx_end, RX_CAP - wi->rx_end, 0);
	post_recv_op(s, sqe, sock_recv_done);
	s->rx_pinned = true;
}

static void sock_recv_ring_done(struct ring_op *op, int res, uint32_t flags);
static void sock_readable_done(struct ring_op *op, int res, uint32_t flags);

void sock_recv(struct sock *s)
{
	size_t room;

	rx_leave_ring(s);
	if (s->recv_posted || s->closing || s->peer_eof)
		return;
	sock_rx_give_back_if_empty(s);
	room = rx_room(s);
	if (room == 0)
		return; /* full: the protocol consumes first */
	struct io_uring_sqe *sqe = ring_sqe(s->env->ring);
	if (s->env->feat->buf_ring) {
		/* At most what fits behind a leftover, so it can be appended. */
		io_uring_prep_recv(sqe, s->fd, NULL, room, 0);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = RXRING_BGID;
		post_recv_op(s, sqe, sock_recv_ring_done);
	} else {
		io_uring_prep_poll_add(sqe, s->fd, POLLIN);
		post_recv_op(s, sqe, sock_readable_done);
	}
}

/* The bytes are in wire.rx (res > 0), or res says why not: note the end
 * of input, move the protocol on. */
static void received(struct sock *s, int res)
{
	if (res == 0 || res == -ECONNRESET) {
		s->peer_eof = true;
		s->wire.eof = true;
	} else if (res < 0 && res != -EINTR && res != -EAGAIN) {
		sock_fail(s, "recv failed");
		return;
	}
	s->h->drive(s->ctx);
}

void sock_recv_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, recv_op);

	(void)flags;
	s->recv_posted = false;
	s->rx_pinned = false;
	if (!s->closing) {
		if (res > 0)
			s->wire.rx_end += (size_t)res;
		received(s, res);
	}
	sock_release(s);
}

/* Where a ring buffer's bytes go: read in place when nothing is left over,
 * else appended to the leftover (the recv asked for no more than fits). */
static void take_ring_buffer(struct sock *s, unsigned bid, size_t len)
{
	struct tls_wire *wi = &s->wire;
	char *buf = rxring_buf(s->env->rx_ring, bid);

	sock_rx_give_back_if_empty(s);
	if (!wi->rx) {
		wi->rx = buf;
		wi->rx_start = 0;
		wi->rx_end = len;
		s->rx_bid = (int)bid;
		return;
	}
	if (len <= RX_CAP - wi->rx_end) { /* always: see sock_recv */
		memcpy(wi->rx + wi->rx_end, buf, len);
		wi->rx_end += len;
	} else {
		sock_fail(s, "received more than asked for");
	}
	rxring_put(s->env->rx_ring, bid);
}

/* A recv that took its buffer from the ring. An empty ring (-ENOBUFS: many
 * connections received at once) grows it, and this one receives into a
 * pooled buffer instead. */
static void sock_recv_ring_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, recv_op);
	unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;

	s->recv_posted = false;
	if (s->closing || res <= 0) {
		if (flags & IORING_CQE_F_BUFFER)
			rxring_put(s->env->rx_ring, bid);
		if (s->closing)
			goto out;
	}
	if (res == -ENOBUFS) {
		s->env->stats->recv_nobufs++;
		rxring_grow(s->env->rx_ring);
		if (s->wire.rx || rx_take_pooled(s))
			post_recv_into_rx(s); /* bytes are waiting: it completes at once */
		goto out;
	}
	if (res > 0) {
		if (!(flags & IORING_CQE_F_BUFFER)) { /* cannot happen */
			sock_fail(s, "recv without a buffer");
			goto out;
		}
		s->env->stats->recv_ring++;
		take_ring_buffer(s, bid, (size_t)res);
	}
	received(s, res);
out:
	rx_leave_ring(s);
	sock_release(s);
}

/* The poll of a kernel without buffer rings said readable: a recv into a
 * pooled buffer (or behind the leftover) completes at once. */
static void sock_readable_done(struct ring_op *op, int res, uint32_t flags)
{
	struct sock *s = container_of(op, struct sock, recv_op);

	(void)flags;
	s->recv_posted = false;
	if (s->closing)
		goto out;
	if (res < 0) {
		sock_fail(s, "poll failed");
		goto out;
	}
	if (s->wire.rx || rx_take_pooled(s))
		post_recv_into_rx(s);
out:
	sock_release(s);
}

enum sock_input sock_decrypt(struct sock *s)
{
	size_t n = 0;

	if (s->closing)
		return SOCK_IN_STOP;
	if (!s->ssl)
		return s->wire.rx_end > s->wire.rx_start ? SOCK_IN_NEW : SOCK_IN_AGAIN;
	if (!sock_openssl_may_run(s))
		return SOCK_IN_AGAIN; /* after the send: drive() comes then */
	/* A bad record made OpenSSL fail the connection, and its fatal alert
	 * has left: close now (RFC 8446 6.2, RFC 5246 7.2.2), whether or not
	 * more bytes come. */
	if (s->wire.failed) {
		sock_fail(s, "TLS error");
		return SOCK_IN_STOP;
	}
	/* Nothing to decrypt: no plaintext buffer either, or an idle
	 * keep-alive connection would take back at once the one
	 * sock_release_idle_buffers just gave to the pool. */
	if (s->wire.rx_start == s->wire.rx_end && !s->wire.eof && !tls_read_pending(s->ssl))
		return SOCK_IN_AGAIN;
	if (!s->plain) {
		/* A request head and a little more; HTTP/2 frames stream through. */
		s->plain = bufpool_get(s->env->bufs, 32 * 1024, &s->plain_cap);
		if (!s->plain) {
			sock_fail(s, "out of memory");
			return SOCK_IN_STOP;
		}
	}
	if (s->plain_start == s->plain_end)
		s->plain_start = s->plain_end = 0;
	if (s->plain_end == s->plain_cap)
		return SOCK_IN_AGAIN; /* the protocol has not consumed: nothing to do */
	enum tls_status st =
	    tls_read(s->ssl, s->plain + s->plain_end, s->plain_cap - s->plain_end, &n);
	if (st == TLS_DONE)
		s->plain_end += n;
	if (sock_openssl_output_waits(s)) {
		/* OpenSSL answered something (a KeyUpdate, an alert, a ticket):
		 * it goes out before we read on. */
		sock_post_next_send(s);
		if (s->send_posted || s->ctrl_posted)
			return SOCK_IN_STOP;
	}
	switch (st) {
	case TLS_DONE:
		return SOCK_IN_NEW;
	case TLS_CLOSED:
		return SOCK_IN_CLOSED;
	case TLS_FAILED:
		sock_fail(s, "TLS error");
		return SOCK_IN_STOP;
	default:
		return SOCK_IN_AGAIN;
	}
}

const char *sock_input(const struct sock *s, size_t *len)
{
	if (s->ssl) {
		*len = s->plain_end - s->plain_start;
		/* plain is allocated on the first decrypted byte: no pointer
		 * arithmetic on NULL before that. */
		return s->plain ? s->plain + s->plain_start : NULL;
	}
	*len = s->wire.rx_end - s->wire.rx_start;
	return s->wire.rx ? s->wire.rx + s->wire.rx_start : NULL;
}

void sock_consume(struct sock *s, size_t n)
{
	if (s->ssl)
		s->plain_start += n;
	else
		s->wire.rx_start += n;
}

void sock_discard_input(struct sock *s)
{
	s->wire.rx_start = s->wire.rx_end = 0;
	s->plain_start = s->plain_end = 0;
}

bool sock_peer_eof(const struct sock *s)
{
	return s->peer_eof;
}

/* ---- PROXY protocol ---- */

/* Raw bytes in wire.rx: no SSL object has read from it yet (the handshake
 * starts after this), so the header is consumed where TLS would read and
 * the ClientHello behind it stays where the BIO finds it. */
enum sock_proxy sock_take_proxy_header(struct sock *s, struct proxy_header *out)
{
	struct tls_wire *wi = &s->wire;
	size_t len = wi->rx_end - wi->rx_start;
	int n = proxy_header_parse(wi->rx ? wi->rx + wi->rx_start : "", len, out);

	if (n > 0) {
		wi->rx_start += (size_t)n;
		return SOCK_PROXY_DONE;
	}
	if (n == PROXY_HEADER_BAD)
		return SOCK_PROXY_BAD;
	if (s->peer_eof) {
		out->why = len ? "the peer closed within the PROXY header"
		               : "the peer closed before sending a PROXY header";
		return SOCK_PROXY_BAD;
	}
	return SOCK_PROXY_AGAIN;
}
