#include "server/body_send.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/worker.h"

/* Copy path: one file read and one send move this much, and with user-space
 * TLS the read of the next chunk overlaps the send of this one. */
#define CHUNK (128 * 1024)
/* Do not post a file read into less room than this: send what we have. */
#define MIN_READ (16 * 1024)
/* Splice path: bytes per splice pair, as large as the pipe allows. 1 MiB
 * keeps each ring operation bounded (nginx caps a sendfile call at 2 MiB so
 * that one fast client cannot starve the others of its worker). */
#define PIPE_SIZE (1024 * 1024)
/* Room kept in the send buffer for multipart framing on the splice path. */
#define FRAME_ROOM 512

static void fail(struct conn *c, const char *why)
{
	conn_abort(c, why);
}

/* Where response bytes are produced: plaintext waiting for user-space
 * encryption, or straight into the send buffer when the kernel encrypts
 * (kTLS) or nothing does (plain HTTP). */
static int producer(struct conn *c, char **base, size_t **len, size_t *cap, size_t want)
{
	if (conn_user_tls(c)) {
		if (!c->stage) {
			c->stage = malloc(CHUNK);
			if (!c->stage)
				return -ENOMEM;
			c->stage_cap = CHUNK;
		}
		*base = c->stage;
		*len = &c->stage_len;
		*cap = c->stage_cap;
		return 0;
	}
	if (c->send_posted)
		return -EBUSY;
	if (want && tls_wire_reserve(&c->wire, want) < 0)
		return -ENOMEM;
	*base = c->wire.tx;
	*len = &c->wire.tx_len;
	*cap = c->wire.tx_cap;
	return 0;
}

char *conn_out_reserve(struct conn *c, size_t need)
{
	char *base;
	size_t *len, cap;
	if (conn_user_tls(c) && need > CHUNK)
		return NULL;
	if (producer(c, &base, &len, &cap, need) < 0 || cap - *len < need)
		return NULL;
	return base + *len;
}

void conn_out_commit(struct conn *c, size_t n)
{
	char *base;
	size_t *len, cap;
	if (producer(c, &base, &len, &cap, 0) == 0)
		*len += n;
}

int body_send_open_pipe(struct conn *c)
{
	if (c->pipe[0] >= 0)
		return 0;
	if (pipe2(c->pipe, O_CLOEXEC) < 0)
		return -errno;
	/* A larger pipe means fewer splices per MiB. Unprivileged users may be
	 * over their pipe-buffer quota; the default 64 KiB still works. */
	int sz = fcntl(c->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
	if (sz < 0)
		sz = fcntl(c->pipe[1], F_GETPIPE_SZ);
	c->pipe_size = sz > 0 ? (size_t)sz : 65536;
	return 0;
}

void body_send_start(struct conn *c, int fd)
{
	struct response *r = &c->resp;
	const struct server *srv = c->w->srv;

	r->file_fd = fd;
	r->path = BODY_PATH_COPY;
	if (srv->cfg->sendfile && c->w->feat.splice && !conn_user_tls(c) &&
	    body_send_open_pipe(c) == 0)
		r->path = BODY_PATH_SPLICE;
	if (r->path == BODY_PATH_SPLICE)
		c->w->stats.body_splice++;
	else
		c->w->stats.body_copy++;
	body_start(&r->body, &r->sr, &r->file);
}

static void post_read(struct conn *c, char *dst, size_t len, uint64_t off)
{
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	io_uring_prep_read(sqe, c->resp.file_fd, dst, (unsigned)len, off);
	io_uring_sqe_set_data64(sqe, ring_tag(c, CONN_OP_READ));
	c->read_posted = true;
	c->inflight++;
	c->w->stats.read_ops++;
}

void body_send_post_splice(struct conn *c, int op, int file_fd, size_t len, uint64_t off,
			   unsigned flags)
{
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	if (op == CONN_OP_SPLICE_IN)
		io_uring_prep_splice(sqe, file_fd, (int64_t)off, c->pipe[1], -1, (unsigned)len,
				     flags);
	else
		io_uring_prep_splice(sqe, c->pipe[0], -1, c->fd, -1, (unsigned)len, flags);
	io_uring_sqe_set_data64(sqe, ring_tag(c, (unsigned)op));
	c->splice_posted = true;
	c->inflight++;
	c->w->stats.splice_ops++;
}

static bool finished(const struct conn *c)
{
	return c->resp.body.done && !c->read_posted && !c->send_posted && !c->splice_posted &&
	       c->splice_len == 0 && c->stage_len == 0 && c->wire.tx_len == 0;
}

static void pump_copy(struct conn *c)
{
	struct response *r = &c->resp;

	for (;;) {
		char *base;
		size_t *len, cap;
		bool progressed = false;

		/* Fill the producer buffer up to a file read, one CHUNK at a
		 * time (the send buffer would otherwise grow with the file). */
		while (!c->read_posted && !r->body.done &&
		       (conn_user_tls(c) || c->wire.tx_len < CHUNK) &&
		       producer(c, &base, &len, &cap, conn_user_tls(c) ? 0 : CHUNK) == 0) {
			size_t room = cap - *len, n;
			uint64_t off;
			enum body_step step = body_next(&r->body, base + *len, room, &n, &off);
			if (step == BODY_LITERAL) {
				*len += n;
				continue;
			}
			if (step == BODY_FILE) {
				uint64_t want = r->body.end - r->body.off;
				if (n < want && room < MIN_READ)
					break; /* nearly full: send first */
				post_read(c, base + *len, n, off);
			}
			break;
		}
		if (c->read_posted || c->send_posted)
			return;

		if (conn_user_tls(c) && c->stage_len > 0 && c->wire.tx_len == 0) {
			if (tls_write(c->ssl, c->stage, c->stage_len) != TLS_DONE) {
				fail(c, "TLS write failed");
				return;
			}
			c->stage_len = 0;
			conn_post_send(c, 0);
			progressed = true; /* start the next read while this chunk is sent */
		} else if (!conn_user_tls(c) && c->wire.tx_len > c->tx_sent) {
			conn_post_send(c, 0);
		}
		if (!progressed)
			break;
	}
	if (finished(c))
		conn_response_finish(c);
}

/* Framing and head bytes go by send with MSG_MORE, so that under kTLS they
 * share a record with the file bytes that follow (no tiny records), and the
 * file bytes go by splice. */
static void pump_splice(struct conn *c)
{
	struct response *r = &c->resp;

	if (c->send_posted || c->splice_posted)
		return;
	if (c->splice_len > 0) {
		body_send_post_splice(c, CONN_OP_SPLICE_OUT, -1, c->splice_len, 0,
			    r->body.remaining > 0 ? SPLICE_F_MORE : 0);
		return;
	}
	while (!r->body.done) {
		size_t n;
		uint64_t off;
		if (tls_wire_reserve(&c->wire, FRAME_ROOM) < 0) {
			fail(c, "out of memory");
			return;
		}
		enum body_step step = body_next(&r->body, c->wire.tx + c->wire.tx_len,
						c->wire.tx_cap - c->wire.tx_len, &n, &off);
		if (step == BODY_LITERAL) {
			c->wire.tx_len += n;
			continue;
		}
		if (step == BODY_FILE) {
			if (c->wire.tx_len > 0) {
				conn_post_send(c, MSG_MORE);
				return;
			}
			uint64_t want = r->body.end - r->body.off;
			body_send_post_splice(c, CONN_OP_SPLICE_IN, r->file_fd,
					      want < c->pipe_size ? want : c->pipe_size, off, 0);
			return;
		}
		break;
	}
	if (c->wire.tx_len > 0) {
		conn_post_send(c, 0);
		return;
	}
	if (finished(c))
		conn_response_finish(c);
}

void body_send_pump(struct conn *c)
{
	if (c->resp.path == BODY_PATH_SPLICE)
		pump_splice(c);
	else
		pump_copy(c);
}

/* The file has fewer bytes than when we answered: send the prefix we have
 * (it is real data), then close, so the client sees a short body and never
 * foreign bytes. */
static void truncated(struct conn *c)
{
	struct response *r = &c->resp;
	if (!r->truncated)
		log_msg(LOG_WARN, "\"%s\": file shrank during the response; closing",
			r->request_line);
	r->truncated = true;
	c->w->stats.truncated++;
	r->body.done = true;
	c->close_after = true;
}

void body_send_read_done(struct conn *c, int res)
{
	char *base;
	size_t *len, cap;

	if (res < 0) {
		log_msg(LOG_ERROR, "\"%s\": file read failed: %s", c->resp.request_line,
			strerror(-res));
		fail(c, "file read failed");
		return;
	}
	if (producer(c, &base, &len, &cap, 0) < 0) {
		fail(c, "internal: producer lost");
		return;
	}
	if (res == 0)
		truncated(c);
	*len += (size_t)res;
	body_advance(&c->resp.body, (uint64_t)res);
	pump_copy(c);
}

/* A splice into a full nonblocking socket fails with EAGAIN instead of
 * waiting (io_uring runs splice on an io-wq thread and does not poll for
 * it): wait for room with a poll, then splice again. Blocking sockets would
 * park an io-wq thread per slow client instead. */
void body_send_post_poll_out(struct conn *c)
{
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);
	io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
	io_uring_sqe_set_data64(sqe, ring_tag(c, CONN_OP_POLL_OUT));
	c->splice_posted = true;
	c->inflight++;
}

void body_send_splice_done(struct conn *c, int op, int res)
{
	if (op == CONN_OP_SPLICE_OUT && res == -EAGAIN) {
		body_send_post_poll_out(c);
		return;
	}
	if (op == CONN_OP_POLL_OUT) {
		if (res < 0) {
			fail(c, "poll failed");
			return;
		}
		pump_splice(c);
		return;
	}
	if (res < 0) {
		if (res != -EPIPE && res != -ECONNRESET)
			log_msg(LOG_WARN, "\"%s\": splice: %s", c->resp.request_line, strerror(-res));
		fail(c, "splice failed");
		return;
	}
	if (op == CONN_OP_SPLICE_IN) {
		if (res == 0)
			truncated(c);
		body_advance(&c->resp.body, (uint64_t)res);
		c->splice_len = (size_t)res;
	} else {
		c->splice_len -= (size_t)res;
		c->resp.bytes_out += (uint64_t)res;
		c->w->stats.bytes_out += (uint64_t)res;
		c->deadline_ms = c->w->now_ms + c->w->srv->cfg->send_timeout_ms;
	}
	pump_splice(c);
}
