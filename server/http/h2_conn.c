#include "server/http/h2_conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/h2_session.h"
#include "server/core/access_log.h"
#include "server/http/conn.h"
#include "server/core/file.h"
#include "server/core/filecache.h"
#include "server/http/lister.h"
#include "server/core/log.h"
#include "server/http/resolve.h"
#include "server/net/sock.h"
#include "server/core/stats.h"
#include "server/http/worker-t.h"

static void h2_drive(struct conn *c);

/* The connection's HTTP/2 session (h2_create made it). */
static struct h2_session *session(const struct conn *c)
{
	return c->proto_state;
}

/* ---- the ring side of the session's pump (struct h2_io) ---- */

/* The batch is the transport's (sock_batch_open): written by nghttp2 and
 * by the streams' reads, and handed over only when all of it is written
 * (send_batch). */
static char *batch_open(void *ctx, size_t *room)
{
	struct conn *c = ctx;

	return sock_batch_open(c->sock, c->w->srv->cfg->h2_buffer, room);
}

/* nghttp2 is done writing the batch: an empty one ends here, the others
 * when their reads are in (send_batch). */
static void batch_close(void *ctx, size_t len)
{
	struct conn *c = ctx;

	if (len == 0)
		sock_batch_drop(c->sock);
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
	struct h2_stream *st = rd->stream;
	const struct h2_readv rv = h2_stream_readv(st);

	(void)flags;
	sock_fill_end(c->sock);
	if (rv.niov == 1 && rv.off == 0 && res > 0 && (size_t)res == rv.len)
		filecache_learn(&c->w->files, rv.fd, rv.iov[0].iov_base, (size_t)res);
	h2_session_read_done(st, res);
	free(rd);
	if (!sock_closed(c->sock))
		conn_drive(c);
	sock_release(c->sock);
}

static void post_read(void *ctx, struct h2_stream *st)
{
	struct conn *c = ctx;
	const struct h2_readv rv = h2_stream_readv(st);
	struct h2_read *rd = malloc(sizeof(*rd));
	struct io_uring_sqe *sqe;

	if (!rd) {
		/* The batch must not leave with this hole: give up on it. */
		conn_abort_as(c, ACCESS_END_ERROR, "out of memory");
		return;
	}
	rd->op.complete = read_done;
	rd->stream = st;
	rd->c = c;
	sock_fill_begin(c->sock); /* into the batch's holes */
	sqe = ring_sqe(&c->w->ring);
	io_uring_prep_readv(sqe, rv.fd, rv.iov, (unsigned)rv.niov, rv.off);
	ring_op_attach(sqe, &rd->op);
	sock_hold(c->sock);
	c->w->stats.read_ops++;
}

/* The batch is complete: one send. Every byte of out[0, len) is written
 * now (a file that came short cut the batch before its stream's frames). */
static int send_batch(void *ctx, size_t len, bool last)
{
	struct conn *c = ctx;
	int rc = sock_batch_send(c->sock, len);

	if (rc > 0 && last)
		c->close_after = true;
	return rc;
}

/* The --h2-sendfile pipeline: the frame header went out in its batch; its
 * payload goes file -> pipe -> socket through the transport. */
static int splice_payload(void *ctx, struct h2_stream *st)
{
	struct conn *c = ctx;
	const struct h2_splice sp = h2_session_splice(session(c)); /* st's payload */
	struct sock *s = c->sock;

	if (sock_busy(s))
		return 0;
	if (sock_tx_pending(s)) {
		sock_send(s, 0);
		return 0;
	}
	if (sp.len > 0) {
		/* No residency hint: the ring splices, as nginx's kTLS path. */
		const struct sock_file f = {sp.fd, sp.off + sp.len, NULL};
		size_t sent;
		/* spliced() and drive() say how it went (a failure: failed()). */
		sock_send_file(s, &f, sp.off, sp.len, false, &sent);
		return 0;
	}
	return 1;
}

/* Where the transport can, the batch's DATA payloads leave from the
 * file's pages, mapped a window at a time per stream (struct sock_map),
 * and never pass through user memory (--sendfile off reads them, as it
 * does small files: SOCK_MAP_MIN). */
static bool send_mapped(void *ctx, struct h2_stream *st, void **map, uint64_t *resident_to)
{
	struct conn *c = ctx;
	const struct h2_readv rv = h2_stream_readv(st);
	const struct sock_file f = {rv.fd, h2_stream_file(st)->size, resident_to};

	if (c->w->srv->cfg->sendfile == CONFIG_OFF || f.end < SOCK_MAP_MIN)
		return false;
	if (!*map && !(*map = calloc(1, sizeof(struct sock_map))))
		return false;
	if (!sock_batch_map(c->sock, &f, *map, rv.off, rv.iov, rv.niov))
		return false;
	c->w->stats.h2_mapped_bytes += rv.len;
	return true;
}

static bool batch_left(void *ctx)
{
	struct conn *c = ctx;

	return sock_drained(c->sock);
}

static void env_unmap(void *ctx, void *map)
{
	(void)ctx;
	sock_map_release(map);
	free(map);
}

static const struct h2_io ring_io = {
    .batch_open = batch_open,
    .batch_close = batch_close,
    .post_read = post_read,
    .send = send_batch,
    .splice = splice_payload,
    .send_mapped = send_mapped,
    .batch_left = batch_left,
};

static void h2_spliced(struct conn *c, int res)
{
	struct h2_session *hs = session(c);

	if (res <= 0) {
		/* The frame header promised bytes we cannot send. */
		if (res == 0) {
			c->w->stats.truncated++;
			/* The splice's stream, or else a send from mapped
			 * pages found them gone: a file of the batch in flight
			 * shrank. */
			const struct h2_stream *first = h2_session_unread_stream(hs, NULL), *st;
			unsigned n = 0;
			for (st = first; st; st = h2_session_unread_stream(hs, st), n++)
				filecache_forget(&c->w->files, h2_stream_file(st)->ino);
			log_msg(LOG_WARN, "h2 stream %d%s: file shrank during the response; closing",
				first ? h2_stream_id(first) : 0,
				n > 1 ? " (or another of the batch)" : "");
		}
		conn_abort_as(c, res == 0 ? ACCESS_END_ERROR : ACCESS_END_LOST,
			      res == 0 ? "file shrank under an HTTP/2 response" : "splice failed");
		return;
	}
	h2_session_spliced(hs, (size_t)res);
}

/* The session's counters go to the worker's statistics. */
static void take_counters(struct conn *c)
{
	struct h2_counters k = {0};

	h2_session_take_counters(session(c), &k);
	c->w->stats.body_copy += k.body_copy;
	c->w->stats.limits[STAT_LIMIT_H2_HEADER_LIST] += k.header_list;
	c->w->stats.truncated += k.truncated;
}

/* ---- the session's environment ---- */

static const char *env_date(void *ctx)
{
	struct conn *c = ctx;
	return clock_date(&c->w->clock);
}

static void env_resolve(void *ctx, const struct static_ask *ask, struct static_target *out)
{
	struct conn *c = ctx;

	/* --limit-conn: this client has its connections already (h2_drive
	 * sends GOAWAY behind the answer). */
	if (c->over_limit) {
		out->status = 429;
		out->fd = -1;
		out->mem = NULL;
		out->extras = (struct resp_extras){0};
		out->root = NULL;
		return;
	}
	conn_resolve(c, ask, out);
}

/* Opens rel again, and only if it is still the file the response head
 * described (its validators went out already). */
static int env_reopen(void *ctx, const void *root, const char *rel,
		      const struct static_file *expect, const void **mem)
{
	struct conn *c = ctx;
	struct static_opened f;
	int fd = filecache_open(&c->w->files, resolve_root(root), rel, &f);

	if (fd < 0)
		return -1;
	if (!S_ISREG(f.st.st_mode) || (uint64_t)f.st.st_ino != expect->ino ||
	    (uint64_t)f.st.st_size != expect->size || f.st.st_mtim.tv_sec != expect->mtime_sec ||
	    f.st.st_mtim.tv_nsec != expect->mtime_nsec) {
		filecache_release(&c->w->files, fd);
		return -1;
	}
	*mem = f.mem;
	return fd;
}

static void env_close_file(void *ctx, int fd)
{
	struct conn *c = ctx;
	filecache_release(&c->w->files, fd);
}

/* One access-log line per stream that had a response, however it ended. */
static void env_stream_done(void *ctx, const struct h2_stream_record *r)
{
	struct conn *c = ctx;
	enum access_end end = ACCESS_END_COMPLETE;

	stats_count_response(&c->w->stats, STAT_HTTP2, r->status);
	stats_count_site(&c->w->stats, resolve_site_slot(r->site), r->status, r->body_bytes,
			 r->duration_ms);
	if (c->w->alog.fd < 0)
		return;
	if (r->truncated)
		end = ACCESS_END_TRUNCATED;
	else if (r->cut)
		end = c->abort_end;
	else if (r->reset)
		end = r->reset_ours ? ACCESS_END_ERROR : ACCESS_END_RESET;
	struct access_record rec = {
	    .when = (time_t)c->w->clock.now_sec,
	    .client = c->peer_text,
	    .method = r->method,
	    .method_len = r->method_len,
	    .target = r->path,
	    .target_len = r->path_len,
	    .version = "HTTP/2.0", /* as nginx writes it, for the tools that read its logs */
	    .referer = r->referer,
	    .referer_len = r->referer_len,
	    .user_agent = r->user_agent,
	    .user_agent_len = r->user_agent_len,
	    .host = r->authority,
	    .host_len = r->authority_len,
	    .status = r->status,
	    .body_bytes = r->body_bytes,
	    .sent_bytes = r->frame_bytes,
	    .duration_ms = r->duration_ms,
	    .protocol = "HTTP/2",
	    .body_path = !r->file_body ? "none"
			 : r->sendfile	 ? "splice"
			 : r->mapped	 ? "mmap"
					 : "framed",
	    .encoding = r->encoding,
	    .site = resolve_site_name(r->site),
	    .end = end,
	};
	sock_log_tls(c->sock, &rec);
	access_log_write(&c->w->alog, &rec);
}

static void env_event(void *ctx, enum h2_event ev, const struct h2_stream *s, int err)
{
	struct conn *c = ctx;

	switch (ev) {
	case H2_EV_FILE_CHANGED: {
		const char *name = h2_stream_file_name(s);
		log_msg(LOG_WARN, "h2 stream %d: %s changed or went away before its body; "
				  "resetting the stream",
			h2_stream_id(s), name ? name : "the file");
		break;
	}
	case H2_EV_FILE_SHORT:
		filecache_forget(&c->w->files, h2_stream_file(s)->ino);
		log_msg(LOG_WARN, "h2 stream %d: file shrank or failed during the response (%s); "
				  "closing",
			h2_stream_id(s), err < 0 ? strerror(-err) : "short read");
		break;
	case H2_EV_RESET_FLOOD:
		c->w->stats.limits[STAT_LIMIT_H2_RESETS]++;
		log_msg(LOG_DEBUG, "%s: HTTP/2: stream resets over --h2-reset-rate; GOAWAY",
			c->peer_text);
		break;
	}
}

/* The listing thread is done with job (on the worker's thread): the
 * stream takes it, or it is dropped if the connection is going. */
static void listing_back(struct lister_job *job)
{
	struct conn *c = job->owner;
	struct sock *s = c->sock;
	bool gone = sock_closed(s) || c->state != CONN_PROTO;
	int fd = gone ? -1 : job->fd;

	if (fd >= 0) {
		filecache_adopt(&c->w->files, fd); /* closed by env_close_file */
		job->fd = -1;
	}
	h2_session_listing_done(job->owner_item, gone ? -1 : job->status, fd, job->size,
				autoindex_content_type(job->format));
	lister_job_free(job);
	if (!gone)
		conn_drive(c);
	sock_release(s); /* may free c */
}

static int env_list_dir(void *ctx, struct h2_stream *st, const struct static_target *res,
			enum autoindex_format f, void **listing)
{
	struct conn *c = ctx;
	struct lister_job *job = resolve_listing(res, f);
	int rc = job ? 0 : -ENOMEM;

	if (job) {
		job->done = listing_back;
		job->owner = c;
		job->owner_item = st;
		rc = lister_submit(&c->w->lister, job);
	}
	if (rc < 0) {
		lister_job_free(job);
		return rc == -EAGAIN ? 503 : 500;
	}
	*listing = job;
	sock_hold(c->sock); /* the session and st stay until the job is back */
	return 0;
}

static void env_list_cancel(void *ctx, void *job)
{
	(void)ctx;
	lister_cancel(job);
}

static void *h2_create(struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;
	/* --h2-sendfile wherever the transport can. */
	bool sendfile = cfg->h2_sendfile && sock_body_zero_copy(c->sock, CONFIG_ON, 0);
	const struct h2_env env = {
	    .limits =
		{
		    .max_streams = cfg->h2_max_streams,
		    .max_header_list = cfg->h2_max_header_list,
		    .reset_rate = cfg->h2_reset_rate,
		    .max_continuations = cfg->h2_max_continuations,
		    .keepalive_requests = cfg->keepalive_requests,
		},
	    .sendfile = sendfile,
	    .now_ms = &c->w->clock.now_ms,
	    .boundary_seed = &c->w->boundary_seed,
	    .ctx = c,
	    .date = env_date,
	    .resolve = env_resolve,
	    .reopen = env_reopen,
	    .close_file = env_close_file,
	    .unmap = env_unmap,
	    .stream_done = env_stream_done,
	    .event = env_event,
	    .list_dir = env_list_dir,
	    .list_cancel = env_list_cancel,
	};
	struct h2_session *hs;

	if (h2_session_new(&hs, &env) < 0)
		return NULL;
	return hs;
}

static void h2_start(struct conn *c)
{
	h2_drive(c);
}

/* Feeds nghttp2 what has been received and decrypted. false: the conn is
 * closing or waits for a send. */
static bool take_input(struct conn *c)
{
	struct h2_session *hs = session(c);
	struct sock *s = c->sock;

	for (;;) {
		size_t avail;
		const char *p = sock_input(s, &avail);
		if (avail > 0) {
			/* Input refreshes no timer: see update_deadline. */
			ssize_t rv = h2_session_recv(hs, (const uint8_t *)p, avail);
			if (rv < 0) {
				if (rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS)
					c->w->stats.limits[STAT_LIMIT_H2_CONTINUATIONS]++;
				else if (rv == NGHTTP2_ERR_FLOODED)
					c->w->stats.limits[STAT_LIMIT_H2_FLOOD]++;
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

/* Whether we owe the client bytes: a response not all out, or anything
 * on its way to the socket. */
static bool owes(const struct conn *c)
{
	return !sock_drained(c->sock) || h2_session_owes(session(c));
}

/* The configuration's timeouts, as the session takes them. */
static struct h2_timeouts timeouts(const struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;

	return (struct h2_timeouts){cfg->send_timeout_ms, cfg->idle_timeout_ms,
				    cfg->header_timeout_ms};
}

/* The deadline, as h2_session_deadline sets it from what the transport
 * says of the bytes owed. */
static void update_deadline(struct conn *c)
{
	struct h2_timeouts t = timeouts(c);
	struct h2_sending out = {.owes = owes(c),
				 .busy = sock_busy(c->sock),
				 .throttled = sock_throttled(c->sock),
				 .sent_ms = sock_sent_ms(c->sock)};

	h2_session_deadline(session(c), &t, &out, &c->deadline_ms);
}

static void h2_timeout(struct conn *c)
{
	static const enum stat_timeout stat[] = {
	    [H2_TIMEOUT_HEADER] = STAT_TO_HEADER,
	    [H2_TIMEOUT_SEND] = STAT_TO_SEND,
	    [H2_TIMEOUT_IDLE] = STAT_TO_IDLE,
	    [H2_TIMEOUT_LINGER] = STAT_TO_LINGER,
	};
	struct h2_timeouts t = timeouts(c);
	enum h2_timeout which = h2_session_time_out(session(c), &t, &c->deadline_ms);

	c->w->stats.timeouts[stat[which]]++;
	if (which == H2_TIMEOUT_LINGER) {
		conn_abort_as(c, ACCESS_END_TIMEOUT, "HTTP/2 timeout");
		return;
	}
	h2_drive(c);
}

/* The connection owes bytes that nothing will move: no send, poll, splice
 * or pacing wait of the transport's is in flight, nor a read of the
 * session's, and yet there is something to send. Every path of the pump
 * is meant to leave one of those in flight, or the client's next frame to
 * wait for; one that did not sat until --send-timeout (932fcdf's stall,
 * cause never found). */
static bool stranded(const struct conn *c)
{
	const struct sock *s = c->sock;

	return !sock_closed(s) && !sock_busy(s) && !sock_throttled(s) &&
	       (h2_session_can_move(session(c)) ||
		(sock_tx_pending(s) && h2_session_reads_pending(session(c)) == 0));
}

static void h2_tick(struct conn *c)
{
	struct h2_session *hs = session(c);

	if (owes(c)) {
		/* A batch held back by --limit-rate leaves without a drive
		 * (the transport paces it on its own): the socket's clock
		 * moves meanwhile, and the deadline with it. */
		if (sock_throttled(c->sock)) {
			update_deadline(c);
		} else if (stranded(c)) {
			/* A bug (or no memory for the next batch), met
			 * within a tick instead of a timeout, and told: the
			 * log once a worker (tests/integration's stop_ktlsd
			 * fails on it), the count at every tick it is found. */
			c->w->stats.h2_stalls++;
			log_msg(c->w->stats.h2_stalls == 1 ? LOG_WARN : LOG_DEBUG,
				"%s: HTTP/2 connection stalled: bytes owed, nothing in flight to "
				"move them; driving it again",
				c->peer_text);
			h2_drive(c);
		}
		return;
	}
	h2_session_release_idle(hs); /* the batch too: the transport takes it back below */
	sock_release_idle_buffers(c->sock);
}

static void h2_drive(struct conn *c)
{
	struct h2_session *hs = session(c);
	struct sock *s = c->sock;

	if (!take_input(c))
		return;
	if (c->state != CONN_PROTO)
		return;
	/* Keep reading (WINDOW_UPDATE, RST_STREAM, new requests) while we
	 * send, as long as the receive buffer has room. */
	sock_recv(s);
	/* Over --limit-conn: the streams it asked for are answered 429, and
	 * GOAWAY after them says to ask for no more on this connection. */
	if (c->over_limit && h2_session_took_request(hs))
		h2_session_goaway(hs);
	/* Keys that must go (a KeyUpdate kTLS cannot follow, a key at its
	 * limit): GOAWAY, the open streams finish, then the close. */
	if (sock_rekey_needed(s))
		h2_session_goaway(hs);

	/* Fill, read, send: the session decides, the ring does it. */
	if (h2_session_pump(hs, &ring_io) != 0) {
		conn_abort(c, "HTTP/2 send failed"); /* unless a callback said why */
		return;
	}
	if (c->state != CONN_PROTO || sock_closed(s))
		return;
	if (h2_session_ended_short(hs) && !sock_busy(s) && !sock_tx_pending(s)) {
		conn_abort_as(c, ACCESS_END_ERROR, "file shrank under an HTTP/2 response");
		return;
	}
	take_counters(c);
	update_deadline(c);
	bool eof = sock_peer_eof(s);
	if (sock_drained(s) && h2_session_finished(hs, eof)) {
		if (eof)
			conn_abort(c, NULL);
		else
			conn_close_graceful(c);
	}
}

static void h2_shutdown(struct conn *c)
{
	if (!h2_session_goaway(session(c)))
		return;
	/* nghttp2 stops reading new streams after GOAWAY and wants neither
	 * read nor write once the open ones are done: h2_drive then closes. */
	h2_drive(c);
}

/* From what the last drive saw (update_deadline): no walk over streams. */
static enum stat_conn h2_activity(const struct conn *c)
{
	switch (h2_session_waits(session(c))) {
	case H2_WAIT_SEND:
		return STAT_CONN_WRITING;
	case H2_WAIT_HEAD:
		return STAT_CONN_READING;
	case H2_WAIT_IDLE:
		break;
	}
	return STAT_CONN_IDLE;
}

static void h2_release(struct conn *c)
{
	take_counters(c);
	h2_session_free(session(c));
	c->proto_state = NULL;
}

/* The streams still open are logged now, with why the connection ends
 * (the session may never be freed: SIGINT exits without it). A stream's
 * count is what it framed (h2_stream.c), known now: no log_cut. */
static void h2_aborted(struct conn *c)
{
	h2_session_cut(session(c));
}

const struct conn_proto h2_proto = {
	.create = h2_create,
	.start = h2_start,
	.drive = h2_drive,
	.spliced = h2_spliced,
	.aborted = h2_aborted,
	.shutdown = h2_shutdown,
	.tick = h2_tick,
	.timeout = h2_timeout,
	.activity = h2_activity,
	.release = h2_release,
};
