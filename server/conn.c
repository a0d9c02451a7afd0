#include "server/conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/body_send.h"
#include "server/h1_conn.h"
#include "server/h2_conn.h"
#include "server/log.h"
#include "server/sock.h"
#include "server/worker.h"

#define LINGER_MS 2000

static void drive(void *ctx);
static void spliced(void *ctx, int res);
static void released(void *ctx);
static void failed(void *ctx, const char *why);

static const struct sock_handler conn_handler = {
	.drive = drive,
	.spliced = spliced,
	.failed = failed,
	.released = released,
};

static const struct config *cfg_of(const struct conn *c)
{
	return c->w->srv->cfg;
}

static void set_deadline(struct conn *c, unsigned ms)
{
	c->deadline_ms = ms ? c->w->now_ms + ms : 0;
}

/* Every entry point holds the conn like an operation in flight, so that a
 * close deep inside cannot free it under our feet; release frees it if it
 * closed meanwhile. */
static void hold(struct conn *c)
{
	sock_hold(c->sock);
}

static void release(struct conn *c)
{
	sock_release(c->sock);
}

int conn_new(struct worker *w, int fd, bool tls, const struct sockaddr *peer, socklen_t peerlen)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->w = w;
	c->resp.file_fd = -1;
	c->parser = malloc(sizeof(*c->parser));
	c->sock = c->parser ? sock_new(w, fd, tls, &conn_handler, c) : NULL;
	if (!c->sock) {
		if (!c->parser)
			close(fd);
		free(c->parser);
		free(c);
		return -ENOMEM;
	}
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
}

/* The sock is closed and idle: nothing of the conn is in flight either
 * (its own operations hold the sock). */
static void released(void *ctx)
{
	struct conn *c = ctx;

	h2_conn_free(c);
	if (c->resp.file_fd >= 0)
		close(c->resp.file_fd);
	worker_conn_unlink(c->w, c);
	free(c->parser);
	free(c);
}

static void failed(void *ctx, const char *why)
{
	conn_abort(ctx, why);
}

void conn_drive(struct conn *c)
{
	drive(c);
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
	sock_abort(c->sock);
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
	return names[sock_ktls_tx(c->sock)][c->resp.path];
}

uint64_t conn_resp_bytes(const struct conn *c)
{
	return sock_bytes_sent(c->sock) - c->resp.bytes_base;
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
	    sock_rekey_needed(c->sock)) {
		conn_close_graceful(c);
		return;
	}
	h1_parser_reset(c->parser);
	c->state = CONN_READ_HEAD;
	c->head_started = false;
	set_deadline(c, cfg_of(c)->idle_timeout_ms);
	/* A keep-alive connection waiting for its next request needs no send
	 * buffers: they go back to the worker's pool (no syscall). */
	sock_release_idle_buffers(c->sock);
	drive(c);
}

static void start_response(struct conn *c)
{
	c->requests++;
	c->state = CONN_RESPOND;
	memset(&c->resp.body, 0, sizeof(c->resp.body));
	c->resp.body.done = true;
	c->resp.start_ms = c->w->now_ms;
	c->resp.bytes_base = sock_bytes_sent(c->sock);
	c->resp.truncated = false;
	set_deadline(c, cfg_of(c)->send_timeout_ms);
}

static void read_head(struct conn *c)
{
	struct sock *s = c->sock;

	for (;;) {
		size_t avail, used = 0;
		const char *p = sock_input(s, &avail);

		if (avail > 0) {
			if (!c->head_started) {
				c->head_started = true;
				set_deadline(c, cfg_of(c)->header_timeout_ms);
			}
			enum h1_parse_result pr = h1_parser_feed(c->parser, p, avail, &used);
			sock_consume(s, used);
			if (pr == H1_PARSE_AGAIN)
				continue;
			start_response(c);
			if (pr == H1_PARSE_DONE)
				h1_on_request(c);
			else
				h1_on_parse_error(c, c->parser->error_status);
			body_send_pump(c);
			return;
		}
		if (sock_is_tls(s)) {
			switch (sock_decrypt(s)) {
			case SOCK_IN_NEW:
				continue;
			case SOCK_IN_STOP:
				return;
			case SOCK_IN_CLOSED:
				conn_close_graceful(c);
				return;
			case SOCK_IN_AGAIN:
				break;
			}
		}
		if (sock_peer_eof(s)) {
			if (!sock_busy(s))
				conn_abort(c, NULL);
			return;
		}
		sock_recv(s);
		return;
	}
}

static void handshake(struct conn *c)
{
	struct sock *s = c->sock;
	enum sock_handshake st = sock_handshake(s);

	if (st == SOCK_HS_FAILED) {
		/* Flush the alert OpenSSL queued, then close. */
		if (sock_busy(s) || sock_tx_pending(s)) {
			c->close_after = true;
			c->state = CONN_LINGER;
			set_deadline(c, LINGER_MS);
			drive(c);
			return;
		}
		conn_abort(c, "TLS handshake failed");
		return;
	}
	if (st == SOCK_HS_DONE) {
		c->state = CONN_READ_HEAD;
		set_deadline(c, cfg_of(c)->header_timeout_ms);
		if (sock_alpn_is(s, "h2")) {
			h2_conn_start(c);
			return;
		}
		if (!sock_busy(s)) /* else OpenSSL's last words leave first; drive() follows */
			read_head(c);
		return;
	}
	if (sock_busy(s))
		return; /* the handshake's flight is on its way; drive() follows */
	if (sock_peer_eof(s)) {
		conn_abort(c, NULL);
		return;
	}
	sock_recv(s);
}

/* Answered and our side shut: everything queued (close_notify last) goes
 * out, then half-close, then read until the peer closes too, so that a
 * pipelined request behind an error does not turn our answer into a
 * reset. */
static void linger(struct conn *c)
{
	struct sock *s = c->sock;

	if (c->notify_pending && !sock_busy(s)) {
		c->notify_pending = false;
		sock_close_notify(s);
	}
	sock_send(s, 0);
	if (!sock_drained(s))
		return;
	if (!c->shut_wr) {
		sock_shutdown_write(s);
		c->shut_wr = true;
	}
	sock_discard_input(s);
	if (sock_peer_eof(s)) {
		conn_abort(c, NULL);
		return;
	}
	sock_recv(s);
}

static void drive(void *ctx)
{
	struct conn *c = ctx;

	if (sock_closed(c->sock))
		return;
	switch (c->state) {
	case CONN_HANDSHAKE:
		handshake(c);
		break;
	case CONN_READ_HEAD:
		if (!sock_busy(c->sock)) /* OpenSSL waits until what it wrote has left */
			read_head(c);
		break;
	case CONN_RESPOND:
		body_send_pump(c);
		break;
	case CONN_H2:
		h2_drive(c);
		break;
	case CONN_LINGER:
		linger(c);
		break;
	case CONN_CLOSING:
		break;
	}
}

static void spliced(void *ctx, int res)
{
	struct conn *c = ctx;

	if (c->state == CONN_H2)
		h2_spliced(c, res);
	else if (c->state == CONN_RESPOND)
		body_send_spliced(c, res);
}

void conn_close_graceful(struct conn *c)
{
	if (c->state == CONN_CLOSING || c->state == CONN_LINGER)
		return;
	c->state = CONN_LINGER;
	set_deadline(c, LINGER_MS);
	/* close_notify goes after everything already on its way. */
	c->notify_pending = sock_is_tls(c->sock);
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
	if (c->state == CONN_CLOSING)
		return;
	hold(c);
	if (c->state == CONN_RESPOND) {
		/* The send timeout runs from the last byte the socket took. */
		uint64_t from = sock_sent_ms(c->sock) > c->resp.start_ms ? sock_sent_ms(c->sock)
									  : c->resp.start_ms;
		c->deadline_ms = from + cfg_of(c)->send_timeout_ms;
	}
	if (c->state == CONN_H2 && now_ms < c->deadline_ms) {
		h2_release_idle(c);
		release(c);
		return;
	}
	if (!c->deadline_ms || now_ms < c->deadline_ms) {
		release(c);
		return;
	}
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
