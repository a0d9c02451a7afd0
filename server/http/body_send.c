#include "server/http/body_send.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http/conn.h"
#include "server/http/h1_conn-t.h"
#include "server/core/log.h"
#include "server/net/sock.h"
#include "server/http/worker-t.h"

/* Do not post a file read into less room than this: send what we have. */
#define MIN_READ (16 * 1024)
/* Room kept in the send buffer for multipart framing on the splice path. */
#define FRAME_ROOM 512

/* The response being sent (c is an HTTP/1.1 connection's: h1_conn.c). */
static struct response *resp(const struct conn *c)
{
	const struct h1_exchange *x = c->proto_state;
	return x->resp;
}

/* Our own failure (no memory, a file that cannot be read). */
static void fail(struct conn *c, const char *why)
{
	conn_abort_as(c, ACCESS_END_ERROR, why);
}

static void read_done(struct ring_op *op, int res, uint32_t flags);
static void truncated(struct conn *c);

void body_send_start(struct conn *c, int fd, const void *mem)
{
	struct response *r = resp(c);
	const struct server *srv = c->srv;

	r->file_fd = fd;
	r->mem = mem;
	r->read_op.complete = read_done;
	body_start(&r->body, &r->sr, &r->file);
	/* Bytes the file cache keeps are one copy into the send buffer. */
	r->path = !mem && sock_body_zero_copy(c->sock, srv->cfg->sendfile, r->body.remaining)
			  ? BODY_PATH_SPLICE
			  : BODY_PATH_COPY;
	r->resident_to = 0;
	r->map = (struct sock_map){0};
	if (r->path == BODY_PATH_SPLICE)
		c->w->stats.body_splice++;
	else
		c->w->stats.body_copy++;
}

static void post_read(struct conn *c, char *dst, size_t len, uint64_t off)
{
	struct io_uring_sqe *sqe = ring_sqe(&c->w->ring);

	sock_fill_begin(c->sock);
	io_uring_prep_read(sqe, resp(c)->file_fd, dst, (unsigned)len, off);
	ring_op_attach(sqe, &resp(c)->read_op);
	resp(c)->read_posted = true;
	resp(c)->read_dst = off == 0 ? dst : NULL;
	sock_hold(c->sock);
	c->w->stats.read_ops++;
}

/* Under ktlsd's sealer the chunk of a download whose file comes from the
 * disk is sealed from the file's cached pages (sock_body_map) rather than
 * read into the send buffer first: one copy of every byte less (--sendfile
 * off reads). */
static bool map_chunk(struct conn *c, char *base, size_t n, uint64_t off)
{
	struct response *r = resp(c);
	/* f.end is the file's size, not body.end: that is only the current
	 * range's end, and a later range of a multipart response lies past
	 * it. */
	const struct sock_file f = {r->file_fd, r->file.size, &r->resident_to};

	if (c->srv->cfg->sendfile == CONFIG_OFF || r->body_len < SOCK_MAP_MIN)
		return false;
	if (!sock_body_map(c->sock, &f, &r->map, base, off, n))
		return false;
	sock_out_commit(c->sock, n);
	body_advance(&r->body, n);
	c->w->stats.h1_mapped_bytes += n;
	return true;
}

void body_send_end(struct response *r)
{
	sock_map_release(&r->map);
}

static bool finished(const struct conn *c)
{
	return resp(c)->body.done && !resp(c)->read_posted && sock_drained(c->sock);
}

static bool pump_copy(struct conn *c)
{
	struct response *r = resp(c);
	struct sock *s = c->sock;

	for (;;) {
		bool progressed = false;
		char *base;
		size_t room;

		/* Fill the transport's room up to a file read, one chunk at a
		 * time. */
		while (!r->read_posted && !r->body.done && (base = sock_body_room(s, &room))) {
			size_t n;
			uint64_t off;
			enum body_step step = body_next(&r->body, base, room, &n, &off);
			if (step == BODY_LITERAL) {
				sock_out_commit(s, n);
				continue;
			}
			if (step == BODY_FILE && r->mem) {
				memcpy(base, r->mem + off, n);
				sock_out_commit(s, n);
				body_advance(&r->body, n);
				continue;
			}
			if (step == BODY_FILE) {
				uint64_t want = r->body.end - r->body.off;
				if (n < want && room < MIN_READ)
					break; /* nearly full: send first */
				if (map_chunk(c, base, n, off))
					continue;
				post_read(c, base, n, off);
			}
			break;
		}
		if (r->read_posted || sock_busy(s))
			return false;

		size_t staged = sock_out_len(s);
		if (staged > 0 || sock_tx_pending(s)) {
			sock_send(s, 0);
			/* The transport took what was queued off its room (it
			 * sealed it): read the next chunk while this one is
			 * sent. */
			progressed = staged > 0 && sock_out_len(s) == 0;
		}
		if (!progressed)
			break;
	}
	return finished(c);
}

/* Framing and head bytes go by send with MSG_MORE, so that under kTLS they
 * share a record with the file bytes that follow (no tiny records). File
 * bytes in the page cache go by sendfile on the worker, the others by the
 * ring's splices, which wait for the disk off the worker. */
static bool pump_splice(struct conn *c)
{
	struct response *r = resp(c);
	struct sock *s = c->sock;

	if (sock_busy(s))
		return false;
	while (!r->body.done) {
		size_t n, room;
		uint64_t off;
		char *base = sock_out_reserve(s, FRAME_ROOM, &room);
		if (!base) {
			fail(c, "out of memory");
			return false;
		}
		enum body_step step = body_next(&r->body, base, room, &n, &off);
		if (step == BODY_LITERAL) {
			sock_out_commit(s, n);
			continue;
		}
		if (step != BODY_FILE)
			break;
		if (sock_tx_pending(s)) {
			sock_send(s, MSG_MORE);
			return false;
		}
		uint64_t want = r->body.end - r->body.off;
		const struct sock_file f = {r->file_fd, r->body.end, &r->resident_to};
		size_t sent;
		switch (sock_send_file(s, &f, off, want, r->body.remaining > want, &sent)) {
		case SOCK_FILE_SENT:
			body_advance(&r->body, sent);
			if (sock_busy(s))
				return false;
			continue;
		case SOCK_FILE_EOF:
			truncated(c);
			break;
		case SOCK_FILE_QUEUED:
		case SOCK_FILE_WAIT:
		case SOCK_FILE_FAILED:
			return false;
		}
	}
	if (sock_tx_pending(s)) {
		sock_send(s, 0);
		return false;
	}
	return finished(c);
}

bool body_send_pump(struct conn *c)
{
	if (resp(c)->path == BODY_PATH_SPLICE)
		return pump_splice(c);
	return pump_copy(c);
}

/* The file has fewer bytes than when we answered: send the prefix we have
 * (it is real data), then close, so the client sees a short body and never
 * foreign bytes. */
static void truncated(struct conn *c)
{
	struct response *r = resp(c);
	if (!r->truncated)
		log_msg(LOG_WARN, "\"%s\": file shrank during the response; closing",
			r->request_line);
	r->truncated = true;
	c->w->stats.truncated++;
	filecache_forget(&c->w->files, r->file.ino);
	r->body.done = true;
	c->close_after = true;
}

static void read_done(struct ring_op *op, int res, uint32_t flags)
{
	struct conn *c = container_of(op, struct response, read_op)->conn;
	struct sock *s = c->sock;

	(void)flags;
	resp(c)->read_posted = false;
	sock_fill_end(s);
	if (sock_closed(s)) {
		sock_release(s);
		return;
	}
	if (res < 0) {
		log_msg(LOG_ERROR, "\"%s\": file read failed: %s", resp(c)->request_line,
			strerror(-res));
		fail(c, "file read failed");
	} else {
		if (res == 0)
			truncated(c);
		else if (resp(c)->read_dst)
			filecache_learn(&c->w->files, resp(c)->file_fd, resp(c)->read_dst,
					(size_t)res);
		sock_out_commit(s, (size_t)res);
		body_advance(&resp(c)->body, (uint64_t)res);
		conn_drive(c); /* the exchange pumps, and finishes when all is out */
	}
	sock_release(s);
}

void body_send_spliced(struct conn *c, int res)
{
	if (res == 0)
		truncated(c);
	else if (res > 0)
		body_advance(&resp(c)->body, (uint64_t)res);
}
