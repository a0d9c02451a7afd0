#include "server/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "server/body_send.h"
#include "server/h1_conn.h"
#include "server/h2_conn.h"
#include "server/log.h"
#include "server/worker.h"

/* Up to four maximum-size TLS records per recv: fewer costs syscalls, more
 * was measured slower (curl, +13% at 64 KiB on 100 Gbit/s). */
#define RX_CAP (64 * 1024)
#define LINGER_MS 2000

static void drive(struct conn *c);
static void hold(struct conn *c);
static void release(struct conn *c);

static const struct config *cfg_of(const struct conn *c)
{
	return c->w->srv->cfg;
}

static void set_deadline(struct conn *c, unsigned ms)
{
	c->deadline_ms = ms ? c->w->now_ms + ms : 0;
}

bool conn_user_tls(const struct conn *c)
{
	return c->ssl && !c->wire.ktls_tx;
}

int conn_new(struct worker *w, int fd, bool tls, const struct sockaddr *peer, socklen_t peerlen)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c)
		goto fail;
	c->w = w;
	c->fd = fd;
	c->tls = tls;
	c->pipe[0] = c->pipe[1] = -1;
	c->resp.file_fd = -1;
	c->wire.fd = fd;
	c->wire.ktls_allowed = w->srv->use_ktls;
	c->rx_cap = RX_CAP;
	c->wire.rx = malloc(RX_CAP);
	c->parser = malloc(sizeof(*c->parser));
	if (!c->wire.rx || !c->parser)
		goto fail;
	const struct config *cfg = w->srv->cfg;
	struct h1_limits lim = {
		.max_header_bytes = cfg->max_header_bytes,
		.max_headers = cfg->max_headers,
		.max_uri = cfg->max_uri,
	};
	h1_parser_init(c->parser, &lim);
	memcpy(&c->peer, peer, peerlen < sizeof(c->peer) ? peerlen : sizeof(c->peer));
	if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)peer;
		inet_ntop(AF_INET6, &a->sin6_addr, c->peer_text, sizeof(c->peer_text));
	} else if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)peer;
		inet_ntop(AF_INET, &a->sin_addr, c->peer_text, sizeof(c->peer_text));
	}
	if (tls) {
		c->ssl = tls_conn_new(w->tls, &c->wire);
		if (!c->ssl)
			goto fail;
		c->tls_srv = w->tls;
		c->state = CONN_HANDSHAKE;
		set_deadline(c, cfg->handshake_timeout_ms);
	} else {
		c->state = CONN_READ_HEAD;
		set_deadline(c, cfg->header_timeout_ms);
	}
	worker_conn_link(w, c);
	hold(c);
	drive(c);
	release(c);
	return 0;
fail:
	if (c) {
		free(c->wire.rx);
		free(c->parser);
		free(c);
	}
	close(fd);
	return -ENOMEM;
}

static void conn_free(struct conn *c)
{
	h2_conn_free(c);
	if (c->ssl) {
		SSL_free(c->ssl);
		tls_server_put(c->tls_srv);
	}
	if (c->resp.file_fd >= 0)
		close(c->resp.file_fd);
	if (c->pipe[0] >= 0) {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	close(c->fd);
	worker_conn_unlink(c->w, c);
	free(c->wire.rx);
	free(c->wire.tx);
	free(c->plain);
	free(c->stage);
	free(c->parser);
	free(c);
}

static void maybe_free(struct conn *c)
{
	if (c->state == CONN_CLOSING && c->inflight == 0)
		conn_free(c);
}

void conn_op_done(struct conn *c)
{
	if (c->state != CONN_CLOSING)
		drive(c);
	release(c);
}

/* Every entry point holds the conn like an operation in flight, so that a
 * close deep inside cannot free it under our feet; release frees it if it
 * closed meanwhile. */
static void hold(struct conn *c)
{
	c->inflight++;
}

static void release(struct conn *c)
{
	c->inflight--;
	maybe_free(c);
}

static void cancel_op(struct conn *c, enum conn_op op)
{
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	io_uring_prep_cancel64(sqe, ring_tag(c, op), 0);
	io_uring_sqe_set_data64(sqe, ring_tag(c->w, WORKER_OP_CANCEL));
}

void conn_abort(struct conn *c, const char *why)
{
	if (c->state == CONN_CLOSING)
		return;
	if (why)
		log_msg(LOG_DEBUG, "%s: closing: %s", c->peer_text, why);
	if (c->state == CONN_RESPOND)
		h1_on_response_done(c, true);
	c->state = CONN_CLOSING;
	/* Wakes a recv or send waiting in the kernel; the cancels cover the
	 * rest (a splice on an io-wq thread). */
	shutdown(c->fd, SHUT_RDWR);
	if (c->recv_posted)
		cancel_op(c, CONN_OP_RECV);
	if (c->send_posted)
		cancel_op(c, CONN_OP_SEND);
	if (c->splice_posted) {
		cancel_op(c, CONN_OP_SPLICE_IN);
		cancel_op(c, CONN_OP_SPLICE_OUT);
		cancel_op(c, CONN_OP_POLL_OUT);
	}
	maybe_free(c);
}

void conn_post_recv(struct conn *c)
{
	struct tls_wire *wi = &c->wire;
	if (c->recv_posted)
		return;
	if (wi->rx_start == wi->rx_end) {
		wi->rx_start = wi->rx_end = 0;
	} else if (wi->rx_end == c->rx_cap) {
		memmove(wi->rx, wi->rx + wi->rx_start, wi->rx_end - wi->rx_start);
		wi->rx_end -= wi->rx_start;
		wi->rx_start = 0;
	}
	if (wi->rx_end == c->rx_cap) {
		conn_abort(c, "receive buffer full"); /* the parser limits make this unreachable */
		return;
	}
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	io_uring_prep_recv(sqe, c->fd, wi->rx + wi->rx_end, c->rx_cap - wi->rx_end, 0);
	io_uring_sqe_set_data64(sqe, ring_tag(c, CONN_OP_RECV));
	c->recv_posted = true;
	c->inflight++;
	c->w->stats.recv_ops++;
}

void conn_post_send(struct conn *c, int flags)
{
	struct tls_wire *wi = &c->wire;
	if (c->send_posted || c->tx_sent == wi->tx_len)
		return;
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	io_uring_prep_send(sqe, c->fd, wi->tx + c->tx_sent, wi->tx_len - c->tx_sent,
			   MSG_NOSIGNAL | flags);
	io_uring_sqe_set_data64(sqe, ring_tag(c, CONN_OP_SEND));
	c->send_posted = true;
	wi->tx_busy = true;
	c->inflight++;
	c->w->stats.send_ops++;
}


/* Where response bytes are produced: plaintext waiting for user-space
 * encryption, or straight into the send buffer when the kernel encrypts
 * (kTLS) or nothing does (plain HTTP). */
const char *conn_path_name(const struct conn *c)
{
	static const char *const names[2][3] = {
		{"ktls=off body=none", "ktls=off body=copy", "ktls=off body=splice"},
		{"ktls=tx body=none", "ktls=tx body=copy", "ktls=tx body=splice"},
	};
	return names[c->wire.ktls_tx][c->resp.path];
}

/* A keep-alive connection waiting for its next request needs no send
 * buffers: thousands of idle clients should cost a socket and a TLS
 * session, not a response's worth of memory each. (A malloc per request is
 * far cheaper than the syscalls of the request.) */
void conn_release_idle_buffers(struct conn *c)
{
	if (c->stage_len == 0) {
		free(c->stage);
		c->stage = NULL;
		c->stage_cap = 0;
	}
	if (c->wire.tx_len == 0 && !c->send_posted) {
		free(c->wire.tx);
		c->wire.tx = NULL;
		c->wire.tx_cap = 0;
		c->tx_sent = 0;
	}
	if (c->plain_start == c->plain_end) {
		free(c->plain);
		c->plain = NULL;
		c->plain_start = c->plain_end = c->plain_cap = 0;
	}
}

void conn_response_finish(struct conn *c)
{
	h1_on_response_done(c, false);
	if (c->resp.file_fd >= 0) {
		close(c->resp.file_fd);
		c->resp.file_fd = -1;
	}
	c->resp.path = BODY_PATH_NONE;
	if (c->close_after || c->w->stopping ||
	    (cfg_of(c)->keepalive_requests && c->requests >= cfg_of(c)->keepalive_requests) ||
	    (c->ssl && tls_rekey_needed(c->ssl))) {
		conn_close_graceful(c);
		return;
	}
	h1_parser_reset(c->parser);
	c->state = CONN_READ_HEAD;
	c->head_started = false;
	set_deadline(c, cfg_of(c)->idle_timeout_ms);
	if (c->plain_start == c->plain_end && c->wire.rx_start == c->wire.rx_end)
		conn_release_idle_buffers(c);
	drive(c);
}

int conn_read_plain(struct conn *c)
{
	size_t n = 0;

	if (!c->plain) {
		c->plain_cap = cfg_of(c)->max_header_bytes + 16384;
		c->plain = malloc(c->plain_cap);
		if (!c->plain) {
			conn_abort(c, "out of memory");
			return -1;
		}
	}
	if (c->plain_start == c->plain_end)
		c->plain_start = c->plain_end = 0;
	if (c->plain_end == c->plain_cap)
		return 0; /* the parser has not consumed: nothing to do */
	enum tls_status st =
	    tls_read(c->ssl, c->plain + c->plain_end, c->plain_cap - c->plain_end, &n);
	if (tls_rekey_needed(c->ssl)) {
		conn_close_graceful(c);
		return -1;
	}
	if (st == TLS_DONE)
		c->plain_end += n;
	if (c->wire.tx_len > 0 && !c->wire.ktls_tx) {
		/* OpenSSL answered something (a KeyUpdate, an alert): it goes
		 * out before we read on. (Under kTLS OpenSSL's records go out
		 * as control messages, and wire.tx holds our plaintext, maybe
		 * an HTTP/2 batch still waiting for its file reads.) */
		conn_post_send(c, 0);
		return -1;
	}
	switch (st) {
	case TLS_DONE:
		return 1;
	case TLS_CLOSED:
		conn_close_graceful(c);
		return -1;
	case TLS_FAILED:
		conn_abort(c, "TLS error");
		return -1;
	default:
		return 0;
	}
}

static void read_head(struct conn *c)
{
	for (;;) {
		const char *p;
		size_t avail, used = 0;
		size_t *start;

		if (c->ssl) {
			/* plain is allocated on the first decrypted byte: no
			 * pointer arithmetic on NULL before that. */
			p = c->plain ? c->plain + c->plain_start : NULL;
			avail = c->plain_end - c->plain_start;
			start = &c->plain_start;
		} else {
			p = c->wire.rx + c->wire.rx_start;
			avail = c->wire.rx_end - c->wire.rx_start;
			start = &c->wire.rx_start;
		}
		if (avail > 0) {
			if (!c->head_started) {
				c->head_started = true;
				set_deadline(c, cfg_of(c)->header_timeout_ms);
			}
			enum h1_parse_result pr = h1_parser_feed(c->parser, p, avail, &used);
			*start += used;
			if (pr == H1_PARSE_AGAIN)
				continue;
			c->requests++;
			c->state = CONN_RESPOND;
			memset(&c->resp.body, 0, sizeof(c->resp.body));
			c->resp.body.done = true;
			c->resp.start_ms = c->w->now_ms;
			c->resp.bytes_out = 0;
			c->resp.truncated = false;
			set_deadline(c, cfg_of(c)->send_timeout_ms);
			if (pr == H1_PARSE_DONE)
				h1_on_request(c);
			else
				h1_on_parse_error(c, c->parser->error_status);
			body_send_pump(c);
			return;
		}
		if (c->ssl) {
			int rc = conn_read_plain(c);
			if (rc > 0)
				continue;
			if (rc < 0)
				return;
		}
		if (c->peer_eof) {
			conn_abort(c, NULL);
			return;
		}
		conn_post_recv(c);
		return;
	}
}

static void handshake(struct conn *c)
{
	enum tls_status st = tls_handshake(c->ssl);
	if (st == TLS_FAILED) {
		/* Flush the alert OpenSSL queued, then close. */
		if (c->wire.tx_len > 0) {
			c->close_after = true;
			c->state = CONN_LINGER;
			conn_post_send(c, 0);
			set_deadline(c, LINGER_MS);
			return;
		}
		conn_abort(c, "TLS handshake failed");
		return;
	}
	if (st == TLS_DONE) {
		if (c->wire.ktls_tx)
			c->w->stats.ktls_tx++;
		else
			c->w->stats.ktls_off++;
		c->state = CONN_READ_HEAD;
		set_deadline(c, cfg_of(c)->header_timeout_ms);
		const char *alpn;
		unsigned alen;
		tls_alpn(c->ssl, &alpn, &alen);
		if (alen == 2 && memcmp(alpn, "h2", 2) == 0) {
			if (c->wire.tx_len > 0)
				conn_post_send(c, 0);
			h2_conn_start(c);
			return;
		}
	}
	if (c->wire.tx_len > 0) {
		conn_post_send(c, 0);
		return;
	}
	if (st == TLS_DONE) {
		drive(c);
		return;
	}
	if (c->peer_eof) {
		conn_abort(c, NULL);
		return;
	}
	conn_post_recv(c);
}

static void drive(struct conn *c)
{
	if (c->send_posted && c->state != CONN_RESPOND && c->state != CONN_H2)
		return; /* OpenSSL waits until what it wrote has left */
	switch (c->state) {
	case CONN_HANDSHAKE:
		handshake(c);
		break;
	case CONN_READ_HEAD:
		read_head(c);
		break;
	case CONN_RESPOND:
		body_send_pump(c);
		break;
	case CONN_H2:
		h2_drive(c);
		break;
	case CONN_LINGER:
		if (c->notify_pending && !c->send_posted) {
			c->notify_pending = false;
			tls_shutdown(c->ssl);
		}
		if (c->wire.tx_len > 0) {
			conn_post_send(c, 0); /* close_notify, or the alert of a failed handshake */
		} else if (!c->send_posted) {
			/* Everything is out: half-close, then read until the
			 * peer closes too, so that a pipelined request behind
			 * an error does not turn our answer into a reset. */
			shutdown(c->fd, SHUT_WR);
			if (c->peer_eof) {
				conn_abort(c, NULL);
				return;
			}
			c->wire.rx_start = c->wire.rx_end = 0;
			conn_post_recv(c);
		}
		break;
	case CONN_CLOSING:
		maybe_free(c);
		break;
	}
}

void conn_close_graceful(struct conn *c)
{
	if (c->state == CONN_CLOSING || c->state == CONN_LINGER)
		return;
	c->state = CONN_LINGER;
	set_deadline(c, LINGER_MS);
	/* close_notify goes after everything already on its way. */
	c->notify_pending = c->ssl && SSL_is_init_finished(c->ssl);
	drive(c);
}

void conn_shutdown(struct conn *c)
{
	hold(c);
	if (c->state == CONN_H2) {
		h2_shutdown(c);
	} else if (c->state == CONN_HANDSHAKE ||
	    (c->state == CONN_READ_HEAD && !c->head_started)) {
		if (c->state == CONN_READ_HEAD)
			conn_close_graceful(c);
		else
			conn_abort(c, "shutting down");
	} else {
		c->close_after = true; /* after this response */
	}
	release(c);
}

void conn_check_deadline(struct conn *c, uint64_t now_ms)
{
	if (c->state == CONN_H2 && now_ms < c->deadline_ms) {
		hold(c);
		h2_release_idle(c);
		release(c);
		return;
	}
	if (!c->deadline_ms || now_ms < c->deadline_ms || c->state == CONN_CLOSING)
		return;
	hold(c);
	c->w->stats.timeouts++;
	switch (c->state) {
	case CONN_HANDSHAKE:
		conn_abort(c, "handshake timeout");
		break;
	case CONN_READ_HEAD:
		if (c->head_started)
			conn_abort(c, "request header timeout");
		else
			conn_close_graceful(c);
		break;
	case CONN_RESPOND:
		conn_abort(c, "send timeout");
		break;
	case CONN_H2:
		h2_timeout(c);
		break;
	default:
		conn_abort(c, NULL);
		break;
	}
	release(c);
}

void conn_complete(struct conn *c, enum conn_op op, int res, uint32_t cqe_flags)
{
	/* The completed operation's count becomes the hold of this call. */
	switch (op) {
	case CONN_OP_RECV:
		c->recv_posted = false;
		if (c->state == CONN_CLOSING)
			break;
		if (res > 0) {
			c->wire.rx_end += (size_t)res;
			if (c->state == CONN_LINGER) {
				c->wire.rx_start = c->wire.rx_end = 0;
				conn_post_recv(c);
				break;
			}
		} else if (res == 0 || res == -ECONNRESET) {
			c->peer_eof = true;
			c->wire.eof = true;
			if (c->state == CONN_LINGER) {
				conn_abort(c, NULL);
				break;
			}
		} else if (res != -EINTR && res != -EAGAIN) {
			conn_abort(c, "recv failed");
			break;
		}
		drive(c);
		break;
	case CONN_OP_SEND:
		c->send_posted = false;
		c->wire.tx_busy = false;
		if (c->state == CONN_CLOSING)
			break;
		if (res < 0) {
			conn_abort(c, res == -EPIPE || res == -ECONNRESET ? "client went away"
									  : "send failed");
			break;
		}
		c->tx_sent += (size_t)res;
		c->w->stats.bytes_out += (uint64_t)res;
		if (res > 0)
			c->sent_ms = c->w->now_ms;
		if (c->state == CONN_RESPOND) {
			c->resp.bytes_out += (uint64_t)res;
			set_deadline(c, cfg_of(c)->send_timeout_ms);
		}
		if (c->tx_sent < c->wire.tx_len) {
			conn_post_send(c, 0);
			break;
		}
		c->wire.tx_len = c->tx_sent = 0;
		drive(c);
		break;
	case CONN_OP_READ:
		c->read_posted = false;
		if (c->state != CONN_CLOSING)
			body_send_read_done(c, res);
		break;
	case CONN_OP_SPLICE_IN:
	case CONN_OP_SPLICE_OUT:
	case CONN_OP_POLL_OUT:
		c->splice_posted = false;
		if (c->state == CONN_H2)
			h2_splice_done(c, op, res);
		else if (c->state != CONN_CLOSING)
			body_send_splice_done(c, op, res);
		break;
	default:
		break;
	}
	release(c);
}
