#include "server/http/h1_conn.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/bufpool.h"
#include "server/core/filecache.h"
#include "server/core/stats.h"
#include "server/http/body_send.h"
#include "server/http/conn.h"
#include "server/http/h1_conn-int.h"
#include "server/http/lister.h"
#include "server/http/worker-t.h"
#include "server/net/sock.h"

/* ---- the exchange: read a head, answer it, again ---- */

static void read_head(struct conn *c);

/* Where the exchange is; c->activity follows, for the gauges (conn.h). */
static void set_phase(struct conn *c, enum h1_phase phase, bool head_started)
{
	struct h1_exchange *x = h1_exchange_of(c);

	x->phase = phase;
	x->head_started = head_started;
	c->activity = phase == H1_RESPOND ? STAT_CONN_WRITING
		      : head_started     ? STAT_CONN_READING
					 : STAT_CONN_IDLE;
}

/* What a request needs while it is read and answered (see h1_exchange):
 * one block from the pool, taken by the first byte of a request head (no
 * syscall either way). */
struct h1_block {
	struct h1_parser parser;
	struct response resp;
};

static bool parser_take(struct conn *c)
{
	const struct config *cfg = c->srv->cfg;
	struct h1_exchange *x = h1_exchange_of(c);
	struct h1_limits lim = {
		.max_header_bytes = cfg->max_header_bytes,
		.max_headers = cfg->max_headers,
		.max_uri = cfg->max_uri,
	};
	struct h1_block *b;

	if (x->parser)
		return true;
	b = bufpool_get(&c->w->bufs, sizeof(*b), &x->block_cap);
	if (!b) {
		conn_abort(c, "out of memory");
		return false;
	}
	h1_parser_init(&b->parser, &lim);
	memset(&b->resp, 0, sizeof(b->resp));
	b->resp.conn = c;
	b->resp.file_fd = -1;
	x->parser = &b->parser;
	x->resp = &b->resp;
	return true;
}

/* Only with no file open and no file read in flight (the response is
 * finished, or the connection released). */
static void parser_give_back(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);

	if (!x->parser)
		return;
	bufpool_put(&c->w->bufs, container_of(x->parser, struct h1_block, parser), x->block_cap);
	x->parser = NULL;
	x->resp = NULL;
}

/* The last byte of the response is out: keep-alive or close. */
static void response_finish(struct conn *c)
{
	const struct config *cfg = c->srv->cfg;
	struct h1_exchange *x = h1_exchange_of(c);

	h1_on_response_done(c, x->resp->truncated ? ACCESS_END_TRUNCATED : ACCESS_END_COMPLETE);
	body_send_end(x->resp);
	if (x->resp->file_fd >= 0) {
		filecache_release(&c->w->files, x->resp->file_fd);
		x->resp->file_fd = -1;
	}
	x->resp->path = BODY_PATH_NONE;
	if (c->close_after || c->w->stopping ||
	    (cfg->keepalive_requests && x->requests >= cfg->keepalive_requests) ||
	    sock_rekey_needed(c->sock)) {
		conn_close_graceful(c);
		return;
	}
	size_t pending;
	sock_input(c->sock, &pending);
	if (pending)
		h1_parser_reset(x->parser); /* a pipelined request is already here */
	else
		parser_give_back(c);
	set_phase(c, H1_READ_HEAD, false);
	conn_set_deadline(c, cfg->idle_timeout_ms);
	/* A keep-alive connection waiting for its next request needs no send
	 * buffers: they go back to the worker's pool (no syscall). */
	sock_release_idle_buffers(c->sock);
	read_head(c);
}

/* Sends the body, and finishes the exchange once all is out. */
static void respond(struct conn *c)
{
	if (h1_exchange_of(c)->resp->listing)
		return; /* listing_back drives us on */
	if (body_send_pump(c) && c->state == CONN_PROTO)
		response_finish(c);
}

static void start_response(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);

	x->requests++;
	set_phase(c, H1_RESPOND, x->head_started);
	memset(&x->resp->body, 0, sizeof(x->resp->body));
	x->resp->body.done = true;
	x->resp->start_ms = c->w->clock.now_ms;
	x->resp->bytes_base = sock_bytes_sent(c->sock);
	x->resp->head_len = 0;
	x->resp->body_len = 0;
	x->resp->truncated = false;
	x->resp->file.content_encoding = NULL; /* until respond_file says what it serves */
	x->resp->site = NULL;                  /* until the request names one */
	conn_set_deadline(c, c->srv->cfg->send_timeout_ms);
}

static void read_head(struct conn *c)
{
	struct sock *s = c->sock;
	struct h1_exchange *x = h1_exchange_of(c);

	for (;;) {
		size_t avail, used = 0;
		const char *p = sock_input(s, &avail);

		if (sock_rekey_needed(s)) { /* no new request on keys that must go */
			conn_close_graceful(c);
			return;
		}
		if (avail > 0) {
			if (!parser_take(c))
				return;
			if (!x->head_started) {
				set_phase(c, H1_READ_HEAD, true);
				conn_set_deadline(c, c->srv->cfg->header_timeout_ms);
			}
			enum h1_parse_result pr = h1_parser_feed(x->parser, p, avail, &used);
			sock_consume(s, used);
			if (pr == H1_PARSE_AGAIN)
				continue;
			start_response(c);
			if (pr == H1_PARSE_DONE)
				h1_on_request(c);
			else
				h1_on_parse_error(c, x->parser->error_status);
			respond(c);
			return;
		}
		switch (sock_decrypt(s)) { /* plain sockets: nothing new here */
		case SOCK_IN_NEW:
			continue;
		case SOCK_IN_STOP:
			return;
		case SOCK_IN_CLOSED:
			conn_close_graceful(c);
			return;
		case SOCK_IN_AGAIN:
			if (sock_rekey_needed(s))
				continue; /* a KeyUpdate alone: closed above */
			break;
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

/* ---- the protocol table (struct conn_proto) ---- */

/* The exchange itself is small (the parser and the response are taken
 * from the pool only while a request is read or answered). */
static void *h1_create(struct conn *c)
{
	(void)c;
	return calloc(1, sizeof(struct h1_exchange));
}

static void h1_start(struct conn *c)
{
	set_phase(c, H1_READ_HEAD, false);
	conn_set_deadline(c, c->srv->cfg->header_timeout_ms);
	if (!sock_busy(c->sock)) /* else OpenSSL's last words leave first; drive() follows */
		read_head(c);
}

static void h1_drive(struct conn *c)
{
	if (h1_exchange_of(c)->phase == H1_RESPOND)
		respond(c);
	else if (!sock_busy(c->sock)) /* OpenSSL waits until what it wrote has left */
		read_head(c);
}

static void h1_spliced(struct conn *c, int res)
{
	body_send_spliced(c, res);
}

static void h1_aborted(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);

	if (x->resp && x->resp->listing)
		lister_cancel(x->resp->listing); /* it comes back, and is dropped */
}

/* The line is held to what the socket took (h1_on_response_done), which
 * is known only once every send's completion is in. */
static void h1_log_cut(struct conn *c)
{
	if (h1_exchange_of(c)->phase == H1_RESPOND)
		h1_on_response_done(c, c->abort_end);
}

static void h1_shutdown(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);

	if (x->phase == H1_READ_HEAD && !x->head_started)
		conn_close_graceful(c);
	else
		c->close_after = true; /* after this response */
}

static void h1_timeout(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);
	struct worker_stats *st = &c->w->stats;

	if (x->phase == H1_RESPOND) {
		/* The send timeout runs from the last byte the socket took:
		 * a deadline that passed while bytes still went out moves on
		 * here. A tick used to move it for every responding connection
		 * (2.3% of the worker at 1,000 slow downloads, a cache miss on
		 * each one's response). */
		uint64_t sent = sock_sent_ms(c->sock), from = x->resp->start_ms;
		uint64_t due = (sent > from ? sent : from) + c->srv->cfg->send_timeout_ms;
		if (due > c->w->clock.now_ms) {
			c->deadline_ms = due;
			return;
		}
		st->timeouts[STAT_TO_SEND]++;
		conn_abort_as(c, ACCESS_END_TIMEOUT, "send timeout");
	} else if (x->head_started) {
		st->timeouts[STAT_TO_HEADER]++;
		conn_abort(c, "request header timeout");
	} else {
		st->timeouts[STAT_TO_IDLE]++;
		conn_close_graceful(c);
	}
}

static void h1_release(struct conn *c)
{
	struct h1_exchange *x = h1_exchange_of(c);

	if (x->resp)
		body_send_end(x->resp);
	if (x->resp && x->resp->file_fd >= 0)
		filecache_release(&c->w->files, x->resp->file_fd);
	parser_give_back(c);
	free(x);
	c->proto_state = NULL;
}

const struct conn_proto h1_proto = {
	.create = h1_create,
	.start = h1_start,
	.drive = h1_drive,
	.spliced = h1_spliced,
	.aborted = h1_aborted,
	.log_cut = h1_log_cut,
	.shutdown = h1_shutdown,
	.timeout = h1_timeout,
	.release = h1_release,
};
