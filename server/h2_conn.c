#include "server/h2_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "proto/h2_session.h"
#include "server/body_send.h"
#include "server/conn.h"
#include "server/file.h"
#include "server/log.h"
#include "server/resolve.h"
#include "server/worker.h"

/* After a timeout's GOAWAY, how long the client has to go. */
#define H2_LINGER_MS 2000

static bool kernel_encrypts(const struct conn *c)
{
	return !conn_user_tls(c);
}

/* ---- the batch buffer ---- */

static bool batch_open(void *ctx)
{
	struct conn *c = ctx;
	struct h2_session *hs = c->h2;
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

static void batch_close(void *ctx)
{
	struct conn *c = ctx;

	if (kernel_encrypts(c))
		c->wire.tx_len = c->h2->out_len;
}

static void post_read(void *ctx, struct h2_stream *s)
{
	struct conn *c = ctx;
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);

	io_uring_prep_readv(sqe, s->file_fd, s->iov, (unsigned)s->niov, s->read_off);
	io_uring_sqe_set_data64(sqe, ring_tag(s, CONN_OP_H2_READ));
	c->inflight++;
	c->w->stats.read_ops++;
}

/* The batch is complete: one send. */
static int send_batch(void *ctx, size_t len, bool last)
{
	struct conn *c = ctx;
	struct h2_session *hs = c->h2;

	if (c->send_posted || c->splice_posted)
		return 0;
	if (last) {
		hs->out_len = len;
		batch_close(c);
		c->close_after = true;
	}
	if (kernel_encrypts(c)) {
		conn_post_send(c, 0);
		return 1;
	}
	if (c->wire.tx_len > 0)
		return 0;
	if (tls_write(c->ssl, hs->out, hs->out_len) != TLS_DONE) {
		conn_abort(c, "TLS write failed");
		return -1;
	}
	conn_post_send(c, 0);
	return 1; /* the next batch is prepared while this one is sent */
}

/* The --h2-sendfile pipeline: the frame header went out in its batch; its
 * payload goes file -> pipe -> socket, a pipe at a time. */
static int splice_payload(void *ctx, struct h2_stream *s)
{
	struct conn *c = ctx;
	struct h2_session *hs = c->h2;

	if (c->send_posted || c->splice_posted)
		return 0;
	if (c->wire.tx_len > 0) {
		conn_post_send(c, 0);
		return 0;
	}
	if (c->splice_len > 0) {
		body_send_post_splice(c, CONN_OP_SPLICE_OUT, -1, c->splice_len, 0, 0);
		return 0;
	}
	if (hs->sf_len > 0) {
		size_t n = hs->sf_len < c->pipe_size ? hs->sf_len : c->pipe_size;
		body_send_post_splice(c, CONN_OP_SPLICE_IN, s->file_fd, n, hs->sf_off, 0);
		return 0;
	}
	return 1;
}

static const struct h2_io ring_io = {
    .batch_open = batch_open,
    .batch_close = batch_close,
    .post_read = post_read,
    .send = send_batch,
    .splice = splice_payload,
};

/* The session's counters go to the worker's statistics. */
static void take_counters(struct conn *c)
{
	struct h2_counters k = {0};

	h2_session_take_counters(c->h2, &k);
	c->w->stats.requests += k.requests;
	c->w->stats.body_copy += k.body_copy;
	c->w->stats.truncated += k.truncated;
}

/* ---- the session's environment ---- */

static const char *env_date(void *ctx)
{
	struct conn *c = ctx;
	return worker_date(c->w);
}

static void env_resolve(void *ctx, const char *target, size_t len, struct static_target *out)
{
	struct conn *c = ctx;
	resolve_target(c->w->srv, target, len, out);
}

/* Opens rel again, and only if it is still the file the response head
 * described (its validators went out already). */
static int env_reopen(void *ctx, const char *rel, const struct static_file *expect)
{
	struct conn *c = ctx;
	struct stat st;
	int fd = file_open_beneath(c->w->srv->root_fd, rel, &st);

	if (fd < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_ino != expect->ino ||
	    (uint64_t)st.st_size != expect->size || st.st_mtim.tv_sec != expect->mtime_sec ||
	    st.st_mtim.tv_nsec != expect->mtime_nsec) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One access-log line per stream, the client's bytes escaped
 * (access_log_escape) so they cannot forge fields or lines. */
static void env_stream_done(void *ctx, const struct h2_stream_record *r)
{
	struct conn *c = ctx;
	struct access_log *al = &c->w->alog;
	char when[32], method[64], path[256];

	if (al->fd < 0)
		return;
	access_log_time(when);
	access_log_escape(method, sizeof(method), r->method ? r->method : "-",
			  r->method ? r->method_len : 1);
	access_log_escape(path, sizeof(path), r->path ? r->path : "-", r->path ? r->path_len : 1);
	access_log_line(al, "%s [%s] \"%s %s HTTP/2\" %d %llu %.3f HTTP/2 %s %s ktls=%s body=%s%s",
			c->peer_text, when, method, path, r->status,
			(unsigned long long)r->bytes_out, (double)r->duration_ms / 1000.0,
			tls_version_name(c->ssl), tls_cipher_name(c->ssl),
			c->wire.ktls_tx ? "tx" : "off",
			r->file_body ? (c->h2->sendfile ? "splice" : "framed") : "none",
			r->truncated ? " truncated" : r->reset ? " reset" : "");
}

static void env_event(void *ctx, enum h2_event ev, const struct h2_stream *s, int err)
{
	struct conn *c = ctx;

	switch (ev) {
	case H2_EV_FILE_CHANGED:
		log_msg(LOG_WARN, "h2 stream %d: %s changed or went away before its body; "
				  "resetting the stream",
			s->id, s->rel ? s->rel : "the file");
		break;
	case H2_EV_FILE_SHORT:
		log_msg(LOG_WARN, "h2 stream %d: file shrank or failed during the response (%s); "
				  "closing",
			s->id, err < 0 ? strerror(-err) : "short read");
		break;
	case H2_EV_RESET_FLOOD:
		log_msg(LOG_DEBUG, "%s: HTTP/2: stream resets over --h2-reset-rate; GOAWAY",
			c->peer_text);
		break;
	}
}

void h2_read_complete(struct h2_stream *s, int res)
{
	struct conn *c = s->hs->env.ctx;

	h2_session_read_done(s, res);
	conn_op_done(c);
}

void h2_conn_start(struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;
	const struct h2_env env = {
	    .limits =
		{
		    .max_streams = cfg->h2_max_streams,
		    .max_header_list = cfg->h2_max_header_list,
		    .reset_rate = cfg->h2_reset_rate,
		    .max_continuations = cfg->h2_max_continuations,
		    .keepalive_requests = cfg->keepalive_requests,
		},
	    .now_ms = &c->w->now_ms,
	    .boundary_seed = &c->w->boundary_seed,
	    .ctx = c,
	    .date = env_date,
	    .resolve = env_resolve,
	    .reopen = env_reopen,
	    .stream_done = env_stream_done,
	    .event = env_event,
	};
	struct h2_session *hs;

	if (h2_session_new(&hs, &env) < 0) {
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

	/* Fill, read, send: the session decides, the ring does it. */
	if (h2_session_pump(hs, &ring_io) != 0) {
		conn_abort(c, "HTTP/2 send failed"); /* unless a callback said why */
		return;
	}
	if (c->state != CONN_H2)
		return;
	if (hs->cut && !c->send_posted && hs->reads_pending == 0 && c->wire.tx_len == 0) {
		conn_abort(c, "file shrank under an HTTP/2 response");
		return;
	}
	take_counters(c);
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
	take_counters(c);
	h2_session_free(hs);
	c->h2 = NULL;
}
