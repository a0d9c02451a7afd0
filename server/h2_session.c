#include "server/h2_session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktls/tls.h"
#include "proto/resp_head.h"
#include "proto/status.h"
#include "server/conn.h"
#include "server/file.h"
#include "server/log.h"
#include "server/resolve.h"
#include "server/worker.h"

static void wake_waiter(struct h2_session *hs);

static void stream_close_file(struct h2_stream *s)
{
	if (s->file_fd >= 0)
		close(s->file_fd);
	s->file_fd = -1;
	if (s->counted_file) {
		s->counted_file = false;
		s->hs->open_files--;
		wake_waiter(s->hs);
	}
}

static void unqueue(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	struct h2_stream **pp = &hs->waiting, *prev = NULL;

	if (!s->waiting)
		return;
	while (*pp && *pp != s) {
		prev = *pp;
		pp = &(*pp)->next_waiting;
	}
	if (*pp)
		*pp = s->next_waiting;
	if (hs->waiting_tail == s)
		hs->waiting_tail = prev;
	s->next_waiting = NULL;
	s->waiting = false;
}

static void stream_free(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	if (s->prev)
		s->prev->next = s->next;
	else
		hs->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	unqueue(s);
	stream_close_file(s);
	free(s->arena);
	free(s->rel);
	free(s->page_buf);
	free(s->location);
	free(s->lit);
	free(s->iov);
	free(s);
}

void h2_stream_release(struct h2_stream *s)
{
	if (s->closed && !s->read_posted && s->niov == 0 && s->hs->sf != s)
		stream_free(s);
}

/* A file slot came free: the first stream waiting for one may go on. */
static void wake_waiter(struct h2_session *hs)
{
	struct h2_stream *s = hs->waiting;

	if (!s || hs->open_files >= H2_MAX_OPEN_FILES)
		return;
	unqueue(s);
	nghttp2_session_resume_data(hs->ng, s->id);
}

/* Opens the file of s now that it can send: 0, 1 (no slot free: s waits
 * for one), or -1 (gone, or no longer the file whose validators the
 * response head carried: its bytes must not go out under them). */
static int stream_open_file(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	struct stat st;
	int fd;

	if (s->file_fd >= 0)
		return 0;
	if (!s->rel)
		return -1;
	if (hs->open_files >= H2_MAX_OPEN_FILES) {
		if (!s->waiting) {
			s->waiting = true;
			if (hs->waiting_tail)
				hs->waiting_tail->next_waiting = s;
			else
				hs->waiting = s;
			hs->waiting_tail = s;
		}
		return 1;
	}
	fd = file_open_beneath(hs->c->w->srv->root_fd, s->rel, &st);
	if (fd < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_ino != s->file.ino ||
	    (uint64_t)st.st_size != s->file.size || st.st_mtim.tv_sec != s->file.mtime_sec ||
	    st.st_mtim.tv_nsec != s->file.mtime_nsec) {
		close(fd);
		return -1;
	}
	s->file_fd = fd;
	s->counted_file = true;
	hs->open_files++;
	return 0;
}

static ssize_t send_cb(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *ud)
{
	struct h2_session *hs = ud;
	size_t room = hs->out_cap - hs->out_len;

	if (room == 0)
		return NGHTTP2_ERR_WOULDBLOCK;
	if (len > room)
		len = room;
	memcpy(hs->out + hs->out_len, data, len);
	hs->out_len += len;
	return (ssize_t)len;
}

static size_t page_left(const struct h2_stream *s)
{
	return s->page ? s->page_len - s->page_off : 0;
}

/* Decides the next DATA payload of s: bytes of a page (an error page, or
 * multipart framing parked in s->lit) or a file range. Nothing is written
 * here: with NO_COPY, send_data_cb writes it, maybe on a later call. */
static ssize_t read_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
		       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2_stream *s = src->ptr;
	size_t n = 0;
	uint64_t off;

	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (page_left(s) == 0 && !s->body.done) {
		/* Framing never exceeds s->lit; file bytes are limited by the
		 * frame, not by s->lit, so room is the larger of the two. */
		size_t room = length > STATIC_PART_HEADER_MAX ? length : STATIC_PART_HEADER_MAX;
		switch (body_next(&s->body, s->lit, room, &n, &off)) {
		case BODY_LITERAL:
			s->page = s->lit;
			s->page_len = n;
			s->page_off = 0;
			break;
		case BODY_FILE:
			switch (stream_open_file(s)) {
			case 0:
				break;
			case 1:
				return NGHTTP2_ERR_DEFERRED;
			default:
				log_msg(LOG_WARN, "h2 stream %d: %s changed or went away before its "
						  "body; resetting the stream",
					s->id, s->rel ? s->rel : "the file");
				s->reset_ours = true;
				return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
			}
			s->pend = PEND_FILE;
			s->pend_len = n < length ? n : length;
			if (s->body.remaining == s->pend_len)
				*flags |= NGHTTP2_DATA_FLAG_EOF;
			return (ssize_t)s->pend_len;
		default:
			break;
		}
	}
	n = page_left(s) < length ? page_left(s) : length;
	s->pend = n ? PEND_LITERAL : PEND_NONE;
	s->pend_len = n;
	if (page_left(s) == n && (s->body.done || s->body.remaining == 0))
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int send_data_cb(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
			size_t length, nghttp2_data_source *src, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s = src->ptr;
	size_t at = hs->out_len;

	if (hs->out_cap - hs->out_len < FRAME_HEADER + length)
		return NGHTTP2_ERR_WOULDBLOCK; /* next batch; nghttp2 calls again */
	/* One readv per stream and batch covers one contiguous file range:
	 * the next range of a multipart body waits for the next batch. */
	if (s->pend == PEND_FILE && s->niov > 0 &&
	    (s->niov == MAX_IOV || s->body.off != s->read_off + s->read_len))
		return NGHTTP2_ERR_WOULDBLOCK;
	if (hs->sendfile && s->pend == PEND_FILE) {
		memcpy(hs->out + at, framehd, FRAME_HEADER);
		hs->out_len += FRAME_HEADER;
		hs->sf = s;
		hs->sf_off = s->body.off;
		hs->sf_len = length;
		body_advance(&s->body, length);
		s->bytes_out += FRAME_HEADER + length;
		s->pend = PEND_NONE;
		return NGHTTP2_ERR_PAUSE; /* send the header, then splice */
	}
	memcpy(hs->out + at, framehd, FRAME_HEADER);
	hs->out_len += FRAME_HEADER;
	if (s->pend == PEND_LITERAL) {
		memcpy(hs->out + hs->out_len, s->page + s->page_off, length);
		s->page_off += length;
		if (s->page_off == s->page_len && s->page == s->lit)
			s->page = NULL; /* framing sent: back to the file */
	} else if (s->pend == PEND_FILE) {
		if (!s->iov && !(s->iov = malloc(MAX_IOV * sizeof(*s->iov))))
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		if (s->niov == 0) {
			s->read_off = s->body.off;
			s->read_len = 0;
			s->first_frame = at;
			s->next_reading = hs->reading;
			hs->reading = s;
		}
		s->iov[s->niov].iov_base = hs->out + hs->out_len;
		s->iov[s->niov].iov_len = length;
		s->niov++;
		s->read_len += length;
		body_advance(&s->body, length);
	}
	hs->out_len += length;
	s->bytes_out += FRAME_HEADER + length;
	s->pend = PEND_NONE;
	hs->packed_ms = hs->c->w->now_ms;
	return 0;
}

void h2_session_read_done(struct h2_stream *s, int res)
{
	struct h2_session *hs = s->hs;
	struct conn *c = hs->c;

	s->read_posted = false;
	hs->reads_pending--;
	if (res < 0 || (size_t)res != s->read_len) {
		s->truncated = true;
		/* The file shrank (or failed): the frames of this batch from
		 * this stream on would carry bytes we do not have. Send what
		 * precedes them and close; never send a hole. */
		if (!hs->cut || s->first_frame < hs->cut_at)
			hs->cut_at = s->first_frame;
		hs->cut = true;
		c->w->stats.truncated++;
		log_msg(LOG_WARN, "h2 stream %d: file shrank or failed during the response (%s); "
				  "closing",
			s->id, res < 0 ? strerror(-res) : "short read");
	}
	s->niov = 0;
	/* The last file bytes are in: give the slot to a stream that waits. */
	if (body_file_done(&s->body))
		stream_close_file(s);
	if (s->closed)
		h2_stream_release(s);
}

/* ---- resets: the client's and those it makes us send ---- */

/* One budget of --h2-reset-rate per second (a burst of ten seconds' worth)
 * for every stream reset either side sends because of the client: its own
 * RST_STREAMs (rapid reset, CVE-2023-44487) and the ones its misbehaviour
 * forces on us (window overflows, stream protocol errors: "MadeYouReset",
 * CVE-2025-8671). nghttp2 1.52 counts only the former. false: the budget is
 * spent and the session is being terminated. */
static bool reset_charge(struct h2_session *hs)
{
	unsigned rate = hs->c->w->srv->cfg->h2_reset_rate;
	uint64_t now = hs->c->w->now_ms;
	uint64_t burst = (uint64_t)rate * 10;

	if (now - hs->reset_refill_ms >= 1000) {
		uint64_t secs = (now - hs->reset_refill_ms) / 1000;
		uint64_t t = hs->reset_tokens + secs * rate;
		hs->reset_tokens = (unsigned)(t < burst ? t : burst);
		hs->reset_refill_ms += secs * 1000;
	}
	if (hs->reset_tokens > 0) {
		hs->reset_tokens--;
		return true;
	}
	if (!hs->terminated) {
		log_msg(LOG_DEBUG, "%s: HTTP/2: stream resets over --h2-reset-rate; GOAWAY",
			hs->c->peer_text);
		hs->stopping = true;
		hs->terminated = true;
		nghttp2_session_terminate_session(hs->ng, NGHTTP2_ENHANCE_YOUR_CALM);
	}
	return false;
}

static int frame_send_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;

	if (frame->hd.type == NGHTTP2_RST_STREAM) {
		struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
		if (!s || !s->reset_ours)
			reset_charge(hs);
	} else if (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) {
		hs->packed_ms = hs->c->w->now_ms; /* a response moved (see the send timeout) */
	}
	return 0;
}

/* ---- requests ---- */

static struct h2_session *hs_of(void *ud)
{
	return ud;
}

static struct h2_field *field_of(struct h2_stream *s, const uint8_t *name, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
	    {":method", offsetof(struct h2_stream, method)},
	    {":path", offsetof(struct h2_stream, path)},
	    {":authority", offsetof(struct h2_stream, authority)},
	    {"range", offsetof(struct h2_stream, range)},
	    {"if-match", offsetof(struct h2_stream, if_match)},
	    {"if-none-match", offsetof(struct h2_stream, if_none_match)},
	    {"if-modified-since", offsetof(struct h2_stream, if_modified_since)},
	    {"if-unmodified-since", offsetof(struct h2_stream, if_unmodified_since)},
	    {"if-range", offsetof(struct h2_stream, if_range)},
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == len && memcmp(fields[i].name, name, len) == 0)
			return (struct h2_field *)((char *)s + fields[i].off);
	return NULL;
}

/* The value of f, or NULL when the request did not carry it. */
static const char *value_of(const struct h2_stream *s, const struct h2_field *f)
{
	return f->set ? s->arena + f->off : NULL;
}

static int begin_headers_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	s->hs = hs;
	s->id = frame->hd.stream_id;
	s->file_fd = -1;
	s->start_ms = hs->c->w->now_ms;
	s->next = hs->streams;
	if (hs->streams)
		hs->streams->prev = s;
	hs->streams = s;
	nghttp2_session_set_stream_user_data(ng, s->id, s);
	return 0;
}

/* Keeps a copy of a field we act on; the arena grows to what the request
 * carries (bounded by --h2-max-header-list). */
static bool keep_field(struct h2_stream *s, struct h2_field *f, const uint8_t *value, size_t len)
{
	if (s->arena_used + len + 1 > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 256;
		while (cap < s->arena_used + len + 1)
			cap *= 2;
		char *a = realloc(s->arena, cap);
		if (!a)
			return false;
		s->arena = a;
		s->arena_cap = (uint32_t)cap;
	}
	memcpy(s->arena + s->arena_used, value, len);
	s->arena[s->arena_used + len] = '\0';
	f->off = s->arena_used;
	f->len = (uint32_t)len;
	f->set = true;
	s->arena_used += (uint32_t)len + 1;
	return true;
}

static int header_cb(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	struct h2_field *f;

	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	/* RFC 9113 6.5.2 counts 32 bytes of overhead per field. */
	s->header_bytes += namelen + valuelen + 32;
	if (s->header_bytes > hs_of(ud)->c->w->srv->cfg->h2_max_header_list)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	f = field_of(s, name, namelen);
	if (!f)
		return 0;
	/* A repeated field we act on is ambiguous, as in HTTP/1.1. */
	if (f->set || !keep_field(s, f, value, valuelen))
		s->bad = true;
	return 0;
}

static bool is(const struct h2_stream *s, const struct h2_field *f, const char *word)
{
	return f->set && f->len == strlen(word) && memcmp(s->arena + f->off, word, f->len) == 0;
}

static void add_nv(nghttp2_nv *nv, size_t *n, const char *name, const char *value,
		   size_t value_len)
{
	nv[*n].name = (uint8_t *)name;
	nv[*n].namelen = strlen(name);
	nv[*n].value = (uint8_t *)value;
	nv[*n].valuelen = value_len;
	nv[*n].flags = NGHTTP2_NV_FLAG_NONE;
	(*n)++;
}

/* Hands the head to HPACK (nghttp2 copies the fields) and, with body, the
 * data provider that answers for the rest. */
static int submit(struct h2_session *hs, struct h2_stream *s, const struct resp_head *h,
		  bool body)
{
	nghttp2_data_provider prd = {.source.ptr = s, .read_callback = read_cb};
	nghttp2_nv nv[RESP_HEAD_MAX_FIELDS + 1];
	size_t n = 0;

	if (h->overflow)
		return NGHTTP2_ERR_INVALID_ARGUMENT; /* cannot happen: sized for our heads */
	add_nv(nv, &n, ":status", h->status_text, strlen(h->status_text));
	for (size_t i = 0; i < h->n; i++)
		add_nv(nv, &n, resp_name_h2(h->f[i].name), h->f[i].value, h->f[i].value_len);
	return nghttp2_submit_response(hs->ng, s->id, nv, n, body ? &prd : NULL);
}

static int respond_page(struct h2_session *hs, struct h2_stream *s, int status, bool head)
{
	struct resp_head h;

	s->status = status;
	s->page_buf = malloc(512);
	if (!s->page_buf)
		return NGHTTP2_ERR_NOMEM;
	s->page_len = status_page(status, s->page_buf, 512);
	s->page = s->page_buf;
	s->body.done = true;
	resp_head_page(&h, status, worker_date(hs->c->w), s->page_len,
		       status == 301 ? s->location : NULL);
	return submit(hs, s, &h, !head);
}

/* The stream can send now (its window and the connection's are open) and
 * a file slot is free: keep the fd the resolution opened. Otherwise close
 * it and open again when nghttp2 asks for the body. */
static bool can_keep_file(struct h2_session *hs, const struct h2_stream *s)
{
	return hs->open_files < H2_MAX_OPEN_FILES &&
	       nghttp2_session_get_stream_remote_window_size(hs->ng, s->id) > 0 &&
	       nghttp2_session_get_remote_window_size(hs->ng) > 0;
}

static int respond_file(struct h2_session *hs, struct h2_stream *s, struct static_target *res,
			bool head)
{
	struct static_request req = {.head = head};
	struct static_response *sr = &s->sr;
	struct resp_head h;

	req.cond.if_match = value_of(s, &s->if_match);
	req.cond.if_match_len = s->if_match.len;
	req.cond.if_none_match = value_of(s, &s->if_none_match);
	req.cond.if_none_match_len = s->if_none_match.len;
	req.cond.if_modified_since = value_of(s, &s->if_modified_since);
	req.cond.if_modified_since_len = s->if_modified_since.len;
	req.cond.if_unmodified_since = value_of(s, &s->if_unmodified_since);
	req.cond.if_unmodified_since_len = s->if_unmodified_since.len;
	req.range = value_of(s, &s->range);
	req.range_len = s->range.len;
	req.if_range = value_of(s, &s->if_range);
	req.if_range_len = s->if_range.len;

	s->file = res->file;
	static_file_respond(&req, &s->file, hs->c->w->boundary_seed++, sr);
	s->status = sr->status;
	bool body = sr->send_body && sr->content_length > 0;
	if (body && sr->nranges > 1 && !(s->lit = malloc(STATIC_PART_HEADER_MAX))) {
		close(res->fd);
		return NGHTTP2_ERR_NOMEM;
	}
	if (body && can_keep_file(hs, s)) {
		s->file_fd = res->fd;
		s->counted_file = true;
		hs->open_files++;
	} else {
		close(res->fd);
		if (body && !(s->rel = strdup(res->rel)))
			return NGHTTP2_ERR_NOMEM;
	}
	resp_head_file(&h, sr, worker_date(hs->c->w));
	if (body) {
		body_start(&s->body, sr, &s->file);
		hs->c->w->stats.body_copy++;
	}
	return submit(hs, s, &h, body);
}

static int on_request(struct h2_session *hs, struct h2_stream *s)
{
	struct static_target res;
	bool head = is(s, &s->method, "HEAD");

	hs->c->w->stats.requests++;
	if (s->bad || !s->path.set)
		return respond_page(hs, s, 400, head);
	if (!head && !is(s, &s->method, "GET"))
		return respond_page(hs, s, 405, false);
	resolve_target(hs->c->w->srv, value_of(s, &s->path), s->path.len, &res);
	if (res.status == 301 && !(s->location = strdup(res.location)))
		return NGHTTP2_ERR_NOMEM;
	if (res.status)
		return respond_page(hs, s, res.status, head);
	return respond_file(hs, s, &res, head);
}

/* --keepalive-requests on HTTP/2 counts streams, as nginx does: the last
 * one allowed is answered and GOAWAY names it, so the client retries the
 * rest on a new connection. Streams it opened before it saw the GOAWAY
 * are refused (REFUSED_STREAM: never processed, safe to retry). */
static bool over_request_limit(struct h2_session *hs, struct h2_stream *s)
{
	unsigned limit = hs->c->w->srv->cfg->keepalive_requests;

	if (!limit)
		return false;
	if (++hs->requests <= limit)
		return false;
	s->reset_ours = true;
	nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_REFUSED_STREAM);
	return true;
}

static void goaway_at(struct h2_session *hs, int32_t last)
{
	if (hs->stopping)
		return;
	hs->stopping = true;
	nghttp2_submit_goaway(hs->ng, NGHTTP2_FLAG_NONE, last, NGHTTP2_NO_ERROR, NULL, 0);
}

static int frame_recv_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s;

	if (frame->hd.type == NGHTTP2_RST_STREAM) {
		reset_charge(hs);
		return 0;
	}
	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (!s || over_request_limit(hs, s))
		return 0;
	/* Answer at the end of the head; a request body, if any, is not read
	 * (only GET and HEAD are served). */
	if (on_request(hs, s) != 0) {
		s->reset_ours = true;
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
	}
	unsigned limit = hs->c->w->srv->cfg->keepalive_requests;
	if (limit && hs->requests == limit)
		goaway_at(hs, s->id);
	return 0;
}

/* One access-log line per stream, the client's bytes escaped
 * (access_log_escape) so they cannot forge fields or lines. */
static void log_stream(struct h2_session *hs, struct h2_stream *s, uint32_t error)
{
	struct conn *c = hs->c;
	struct access_log *al = &c->w->alog;
	char when[32], method[64], path[256];
	const char *m = value_of(s, &s->method), *p = value_of(s, &s->path);

	if (al->fd < 0 || !s->status)
		return;
	access_log_time(when);
	access_log_escape(method, sizeof(method), m ? m : "-", m ? s->method.len : 1);
	access_log_escape(path, sizeof(path), p ? p : "-", p ? s->path.len : 1);
	access_log_line(al, "%s [%s] \"%s %s HTTP/2\" %d %llu %.3f HTTP/2 %s %s ktls=%s body=%s%s",
			c->peer_text, when, method, path, s->status,
			(unsigned long long)s->bytes_out, (double)(c->w->now_ms - s->start_ms) / 1000.0,
			tls_version_name(c->ssl), tls_cipher_name(c->ssl),
			c->wire.ktls_tx ? "tx" : "off",
			s->file.size || s->rel || s->file_fd >= 0 ? (hs->sendfile ? "splice" : "framed")
								  : "none",
			s->truncated ? " truncated" : error ? " reset" : "");
}

static int stream_close_cb(nghttp2_session *ng, int32_t id, uint32_t error, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);

	hs->idle_since_ms = hs->c->w->now_ms;
	if (!s)
		return 0;
	log_stream(hs, s, error);
	nghttp2_session_set_stream_user_data(ng, id, NULL);
	s->closed = true;
	h2_stream_release(s);
	/* else: its holes are in the batch; freed when the readv completes */
	return 0;
}

/* ---- input ---- */

/* Follows the frame boundaries of what the client sends: a header block
 * (HEADERS, then CONTINUATIONs up to END_HEADERS) starts with the first
 * byte of its HEADERS frame, however slowly that frame arrives. */
static void scan_input(struct h2_session *hs, const uint8_t *p, size_t n)
{
	struct h2_frame_scan *sc = &hs->scan;
	uint64_t now = hs->c->w->now_ms;

	while (n > 0) {
		if (sc->skip > 0) {
			size_t k = sc->skip < n ? sc->skip : n;
			sc->skip -= k;
			p += k;
			n -= k;
			if (sc->skip == 0 && sc->ends_block)
				hs->header_block_ms = 0;
			continue;
		}
		if (sc->head_have == 0)
			sc->frame_start_ms = now;
		size_t k = FRAME_HEADER - sc->head_have < n ? FRAME_HEADER - sc->head_have : n;
		memcpy(sc->head + sc->head_have, p, k);
		sc->head_have += k;
		p += k;
		n -= k;
		if (sc->head_have < FRAME_HEADER)
			break;
		sc->head_have = 0;
		sc->skip = (size_t)sc->head[0] << 16 | (size_t)sc->head[1] << 8 | sc->head[2];
		uint8_t type = sc->head[3], flags = sc->head[4];
		if (type == NGHTTP2_HEADERS && !hs->header_block_ms)
			hs->header_block_ms = sc->frame_start_ms ? sc->frame_start_ms : 1;
		sc->ends_block = (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION) &&
				 (flags & NGHTTP2_FLAG_END_HEADERS);
		if (sc->skip == 0 && sc->ends_block)
			hs->header_block_ms = 0;
	}
}

ssize_t h2_session_recv(struct h2_session *hs, const uint8_t *data, size_t len)
{
	ssize_t rv = nghttp2_session_mem_recv(hs->ng, data, len);
	if (rv > 0)
		scan_input(hs, data, (size_t)rv);
	return rv;
}

bool h2_session_owes(const struct h2_session *hs)
{
	for (const struct h2_stream *s = hs->streams; s; s = s->next)
		if (s->status && !s->closed &&
		    !nghttp2_session_get_stream_local_close(hs->ng, s->id))
			return true;
	return false;
}

/* ---- the session ---- */

int h2_session_new(struct h2_session **out, struct conn *c)
{
	const struct config *cfg = c->w->srv->cfg;
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	struct h2_session *hs = calloc(1, sizeof(*hs));
	int rc = -1;

	if (!hs || nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto out;
	hs->c = c;
	hs->scan.skip = NGHTTP2_CLIENT_MAGIC_LEN;
	hs->idle_since_ms = c->w->now_ms;
	hs->reset_tokens = cfg->h2_reset_rate * 10;
	hs->reset_refill_ms = c->w->now_ms;
	nghttp2_session_callbacks_set_send_callback(cb, send_cb);
	nghttp2_session_callbacks_set_send_data_callback(cb, send_data_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv_cb);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, frame_send_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close_cb);

	/* The floods of 2019 and 2023: nghttp2 counts them, we set the limits.
	 * (Resets are also counted here, with those we are made to send.) */
	nghttp2_option_set_max_continuations(opt, cfg->h2_max_continuations);
	nghttp2_option_set_stream_reset_rate_limit(opt, (uint64_t)cfg->h2_reset_rate * 10,
						   cfg->h2_reset_rate);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	if (nghttp2_session_server_new2(&hs->ng, cb, hs, opt) != 0)
		goto out;

	nghttp2_settings_entry iv[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, cfg->h2_max_streams},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, cfg->h2_max_header_list},
	    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
	};
	if (nghttp2_submit_settings(hs->ng, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) != 0)
		goto out;
	rc = 0;
out:
	if (cb)
		nghttp2_session_callbacks_del(cb);
	if (opt)
		nghttp2_option_del(opt);
	if (rc < 0) {
		if (hs && hs->ng)
			nghttp2_session_del(hs->ng);
		free(hs);
		return -ENOMEM;
	}
	*out = hs;
	return 0;
}

bool h2_session_goaway(struct h2_session *hs)
{
	if (hs->stopping)
		return false;
	goaway_at(hs, nghttp2_session_get_last_proc_stream_id(hs->ng));
	return true;
}

int h2_session_fill(struct h2_session *hs)
{
	return nghttp2_session_send(hs->ng);
}

void h2_session_free(struct h2_session *hs)
{
	nghttp2_session_del(hs->ng);
	while (hs->streams)
		stream_free(hs->streams);
	free(hs);
}
