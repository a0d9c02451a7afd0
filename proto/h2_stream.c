/* The streams of an HTTP/2 session: from a request's fields to a response
 * submitted to nghttp2, and the DATA payloads nghttp2 then asks for. See
 * proto/h2_stream.h. */
#include "proto/h2_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/authority.h"
#include "proto/resp_head.h"
#include "proto/status.h"

static void wake_waiter(struct h2_session *hs);

static void stream_close_file(struct h2_stream *s)
{
	if (s->file_fd >= 0)
		s->hs->env.close_file(s->hs->env.ctx, s->file_fd);
	s->file_fd = -1;
	s->mem = NULL;
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

void h2_stream_free(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	if (hs->receiving == s)
		hs->receiving = NULL;
	if (s->prev)
		s->prev->next = s->next;
	else
		hs->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	unqueue(s);
	stream_close_file(s);
	if (s->map)
		hs->env.unmap(hs->env.ctx, s->map, s->file.size);
	s->map = NULL;
	free(s->rel);
	free(s->page_buf);
	free(s->location);
	free(s->lit);
	if (hs->nspare < H2_SPARE_STREAMS) {
		s->next = hs->spare;
		hs->spare = s;
		hs->nspare++;
		return;
	}
	h2_stream_discard(s);
}

void h2_stream_discard(struct h2_stream *s)
{
	free(s->arena);
	free(s->iov);
	free(s);
}

void h2_stream_release(struct h2_stream *s)
{
	if (s->closed && !s->read_posted && s->niov == 0 && s->hs->sf != s && !s->listing)
		h2_stream_free(s);
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
	const void *mem;
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
	fd = hs->env.reopen(hs->env.ctx, s->root, s->rel, &s->file, &mem);
	if (fd < 0)
		return -1;
	s->file_fd = fd;
	s->mem = mem;
	s->counted_file = true;
	hs->open_files++;
	return 0;
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
				s->hs->env.event(s->hs->env.ctx, H2_EV_FILE_CHANGED, s, 0);
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

int h2_stream_send_data(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
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
	/* Bytes the glue keeps in memory are copied below, never spliced. */
	if (hs->sendfile && s->pend == PEND_FILE && !s->mem) {
		memcpy(hs->out + at, framehd, FRAME_HEADER);
		hs->out_len += FRAME_HEADER;
		hs->sf = s;
		hs->sf_off = s->body.off;
		hs->sf_len = length;
		body_advance(&s->body, length);
		s->body_bytes += length;
		s->frame_bytes += FRAME_HEADER + length;
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
	} else if (s->pend == PEND_FILE && s->mem) {
		memcpy(hs->out + hs->out_len, s->mem + s->body.off, length); /* no readv */
		body_advance(&s->body, length);
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
	s->body_bytes += length;
	s->frame_bytes += FRAME_HEADER + length;
	s->pend = PEND_NONE;
	hs->packed_ms = h2_now(hs);
	return 0;
}

void h2_session_read_done(struct h2_stream *s, int res)
{
	struct h2_session *hs = s->hs;

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
		hs->counters.truncated++;
		/* None of its frames in this batch leave. */
		s->body_bytes -= s->read_len;
		s->frame_bytes -= s->read_len + (uint64_t)s->niov * FRAME_HEADER;
		hs->env.event(hs->env.ctx, H2_EV_FILE_SHORT, s, res < 0 ? res : 0);
	}
	h2_stream_batch_left(s);
}

void h2_stream_batch_left(struct h2_stream *s)
{
	s->niov = 0;
	/* The last file bytes are in (or out): give the slot to a stream
	 * that waits. A mapping stays until the stream is freed. */
	if (body_file_done(&s->body))
		stream_close_file(s);
	if (s->closed)
		h2_stream_release(s);
}

/* ---- the request ---- */

static struct h2_field *field_of(struct h2_stream *s, const uint8_t *name, size_t len)
{
#define FIELD(name, member) {name, sizeof(name) - 1, offsetof(struct h2_stream, member)}
	static const struct {
		const char *name;
		size_t len;
		size_t off;
	} fields[] = {
	    FIELD(":method", method),
	    FIELD(":path", path),
	    FIELD(":authority", authority),
	    FIELD("host", host),
	    FIELD("range", range),
	    FIELD("if-match", if_match),
	    FIELD("if-none-match", if_none_match),
	    FIELD("if-modified-since", if_modified_since),
	    FIELD("if-unmodified-since", if_unmodified_since),
	    FIELD("if-range", if_range),
	    FIELD("accept-encoding", accept_encoding),
	    FIELD("referer", referer),
	    FIELD("user-agent", user_agent),
	    FIELD("accept", accept),
	};
#undef FIELD
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].len == len && memcmp(fields[i].name, name, len) == 0)
			return (struct h2_field *)((char *)s + fields[i].off);
	return NULL;
}

/* The value of f, or NULL when the request did not carry it. */
static const char *value_of(const struct h2_stream *s, const struct h2_field *f)
{
	return f->set ? s->arena + f->off : NULL;
}

struct h2_stream *h2_stream_new(struct h2_session *hs, int32_t id)
{
	struct h2_stream *s = hs->spare;
	char *arena = NULL;
	uint32_t arena_cap = 0;
	struct iovec *iov = NULL;

	if (s) {
		hs->spare = s->next;
		hs->nspare--;
		arena = s->arena;
		arena_cap = s->arena_cap;
		iov = s->iov;
	} else if (!(s = malloc(sizeof(*s)))) {
		return NULL;
	}
	memset(s, 0, sizeof(*s));
	s->arena = arena;
	s->arena_cap = arena_cap;
	s->iov = iov;
	s->hs = hs;
	s->id = id;
	s->file_fd = -1;
	s->start_ms = h2_now(hs);
	s->next = hs->streams;
	if (hs->streams)
		hs->streams->prev = s;
	hs->streams = s;
	return s;
}

/* Room for need more bytes at the arena's top; the arena grows to what the
 * request carries (bounded by --h2-max-header-list). */
static bool arena_room(struct h2_stream *s, size_t need)
{
	if (s->arena_used + need > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 256;
		while (cap < s->arena_used + need)
			cap *= 2;
		char *a = realloc(s->arena, cap);
		if (!a)
			return false;
		s->arena = a;
		s->arena_cap = (uint32_t)cap;
	}
	return true;
}

/* Keeps a copy of a field we act on. */
static bool keep_field(struct h2_stream *s, struct h2_field *f, const uint8_t *value, size_t len)
{
	if (!arena_room(s, len + 1))
		return false;
	memcpy(s->arena + s->arena_used, value, len);
	s->arena[s->arena_used + len] = '\0';
	f->off = s->arena_used;
	f->len = (uint32_t)len;
	f->set = true;
	s->arena_used += (uint32_t)len + 1;
	return true;
}

/* A repeat of list field f: "old, value". Appended in place when f is the
 * arena's last value (repeats in a row); else f moves to the top first,
 * which the other kept fields, each kept once, allow only a few times: a
 * thousand repeats cost linear, not quadratic, copying. */
static bool join_field(struct h2_stream *s, struct h2_field *f, const uint8_t *value, size_t len)
{
	size_t old = f->len;
	bool on_top = f->off + old + 1 == s->arena_used;

	if (!arena_room(s, (on_top ? 0 : old + 1) + 2 + len))
		return false;
	if (!on_top) {
		memcpy(s->arena + s->arena_used, s->arena + f->off, old + 1);
		f->off = s->arena_used;
		s->arena_used += (uint32_t)(old + 1);
	}
	char *end = s->arena + f->off + old; /* its NUL */
	memcpy(end, ", ", 2);
	memcpy(end + 2, value, len);
	end[2 + len] = '\0';
	f->len = (uint32_t)(old + 2 + len);
	s->arena_used += (uint32_t)(2 + len);
	return true;
}

int h2_stream_header(struct h2_stream *s, const uint8_t *name, size_t namelen,
		     const uint8_t *value, size_t valuelen)
{
	size_t max = s->hs->env.limits.max_header_list;
	struct h2_field *f;

	/* RFC 9113 6.5.2 counts 32 bytes of overhead per field. */
	if (s->header_bytes <= max && s->header_bytes + namelen + valuelen + 32 > max)
		s->hs->counters.header_list++; /* once per stream */
	s->header_bytes += namelen + valuelen + 32;
	if (s->header_bytes > max)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream is reset */
	f = field_of(s, name, namelen);
	if (!f)
		return 0;
	/* Fields kept only for the log: the first one is logged, and a
	 * failure to keep it costs the log, not the request. Accept too: the
	 * first one decides a listing's format, and a failure costs HTML. */
	if (f == &s->referer || f == &s->user_agent || f == &s->accept) {
		if (!f->set)
			keep_field(s, f, value, valuelen);
		return 0;
	}
	if (f == &s->accept_encoding && f->set) {
		if (!join_field(s, f, value, valuelen))
			s->bad = true;
		return 0;
	}
	/* A repeated field we act on is ambiguous, as in HTTP/1.1. */
	if (f->set || !keep_field(s, f, value, valuelen))
		s->bad = true;
	return 0;
}

static bool is(const struct h2_stream *s, const struct h2_field *f, const char *word)
{
	return f->set && f->len == strlen(word) && memcmp(s->arena + f->off, word, f->len) == 0;
}

/* ---- the response ---- */

/* name is a static string (nghttp2 need not copy it); the value is copied. */
static void add_nv(nghttp2_nv *nv, size_t *n, const char *name, size_t name_len,
		   const char *value, size_t value_len)
{
	nv[*n].name = (uint8_t *)name;
	nv[*n].namelen = name_len;
	nv[*n].value = (uint8_t *)value;
	nv[*n].valuelen = value_len;
	nv[*n].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME;
	(*n)++;
}

/* Hands the head to HPACK (nghttp2 copies the values) and, with body, the
 * data provider that answers for the rest. */
static int submit(struct h2_session *hs, struct h2_stream *s, const struct resp_head *h,
		  bool body)
{
	nghttp2_data_provider prd = {.source.ptr = s, .read_callback = read_cb};
	nghttp2_nv nv[RESP_HEAD_MAX_FIELDS + RESP_EXTRA_MAX + 1];
	size_t n = 0;

	if (h->overflow)
		return NGHTTP2_ERR_INVALID_ARGUMENT; /* cannot happen: sized for our heads */
	add_nv(nv, &n, ":status", sizeof(":status") - 1, h->status_text, 3);
	for (size_t i = 0; i < h->n; i++)
		add_nv(nv, &n, resp_name_h2(h->f[i].name), resp_name_len(h->f[i].name),
		       h->f[i].value, h->f[i].value_len);
	for (size_t i = 0; i < h->extras.n; i++)
		add_nv(nv, &n, h->extras.f[i].name_h2, h->extras.f[i].name_len, h->extras.f[i].value,
		       h->extras.f[i].value_len);
	return nghttp2_submit_response(hs->ng, s->id, nv, n, body ? &prd : NULL);
}

static int respond_page(struct h2_session *hs, struct h2_stream *s, int status, bool head,
			const struct resp_extras *extras)
{
	struct resp_head h;

	s->status = status;
	s->page_buf = malloc(512);
	if (!s->page_buf)
		return NGHTTP2_ERR_NOMEM;
	s->page_len = status_page(status, s->page_buf, 512);
	s->page = s->page_buf;
	s->body.done = true;
	resp_head_page(&h, status, hs->env.date(hs->env.ctx), s->page_len,
		       status == 301 ? s->location : NULL);
	if (extras)
		resp_head_extras(&h, extras);
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
	static_file_respond(&req, &s->file, (*hs->env.boundary_seed)++, sr);
	s->status = sr->status;
	bool body = sr->send_body && sr->content_length > 0;
	if (body && sr->nranges > 1 && !(s->lit = malloc(STATIC_PART_HEADER_MAX))) {
		hs->env.close_file(hs->env.ctx, res->fd);
		return NGHTTP2_ERR_NOMEM;
	}
	if (body && can_keep_file(hs, s)) {
		s->file_fd = res->fd;
		s->mem = res->mem;
		s->counted_file = true;
		hs->open_files++;
	} else {
		hs->env.close_file(hs->env.ctx, res->fd);
		if (body && !(s->rel = strdup(res->rel)))
			return NGHTTP2_ERR_NOMEM;
		s->root = res->root;
	}
	resp_head_file(&h, sr, hs->env.date(hs->env.ctx));
	resp_head_extras(&h, &res->extras);
	if (body) {
		body_start(&s->body, sr, &s->file);
		hs->counters.body_copy++;
	}
	return submit(hs, s, &h, body);
}

/* The response waits for the glue's listing (h2_session_listing_done);
 * the stream's other work, and the session's other streams, go on. */
static int start_listing(struct h2_session *hs, struct h2_stream *s,
			 const struct static_target *res, bool head)
{
	if (!hs->env.list_dir)
		return respond_page(hs, s, 404, head, NULL);
	s->extras = res->extras;
	enum autoindex_format f = autoindex_negotiate(value_of(s, &s->path), s->path.len,
						      value_of(s, &s->accept), s->accept.len);
	int status = hs->env.list_dir(hs->env.ctx, s, res, f);
	if (status)
		return respond_page(hs, s, status, head, NULL);
	/* The status the log gives it if it ends before the listing is
	 * back; with it the session owes the client a response meanwhile
	 * (h2_session_owes: the send timeout, not the idle one, runs). */
	s->status = 200;
	return 0;
}

/* Submits a made listing: its head, and its body from fd as a file's. */
static int respond_listing(struct h2_session *hs, struct h2_stream *s, int fd, uint64_t size,
			   const char *content_type)
{
	bool head = is(s, &s->method, "HEAD");
	struct resp_head h;

	memset(&s->sr, 0, sizeof(s->sr));
	s->sr.status = s->status = 200;
	s->sr.content_type = content_type;
	s->sr.content_length = size;
	s->sr.send_body = !head && size > 0;
	s->file = (struct static_file){.size = size, .content_type = content_type};
	resp_head_listing(&h, hs->env.date(hs->env.ctx), content_type, size);
	resp_head_extras(&h, &s->extras);
	if (s->sr.send_body) {
		/* Not counted in the file slots: a memfd cannot be reopened
		 * by name, and the worker's queue bounds listings already. */
		s->file_fd = fd;
		body_start(&s->body, &s->sr, &s->file);
		hs->counters.body_copy++;
	} else {
		hs->env.close_file(hs->env.ctx, fd);
	}
	return submit(hs, s, &h, s->sr.send_body);
}

void h2_session_listing_done(struct h2_stream *s, int status, int fd, uint64_t size,
			     const char *content_type)
{
	struct h2_session *hs = s->hs;
	int rv;

	s->listing = NULL;
	if (s->closed || status < 0) {
		if (fd >= 0)
			hs->env.close_file(hs->env.ctx, fd);
		h2_stream_release(s);
		return;
	}
	if (status)
		rv = respond_page(hs, s, status, is(s, &s->method, "HEAD"), NULL);
	else
		rv = respond_listing(hs, s, fd, size, content_type);
	if (rv != 0) {
		s->reset_ours = true;
		nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
	}
}

/* The field that names the site of s: :authority, else Host (RFC 9113
 * 8.3.1). NULL: the request is malformed: an authority that is not one
 * (proto/authority.h: "b.test:abc", userinfo), or a Host that names
 * another origin than :authority (ktlsd's HTTP/2 is https: port 443 by
 * default). nghttp2 has refused a request with neither, an empty one, a
 * second Host and bytes no authority has. */
static const struct h2_field *stream_authority(const struct h2_stream *s)
{
	struct authority a, h;

	if (s->authority.set &&
	    authority_parse(value_of(s, &s->authority), s->authority.len, &a) < 0)
		return NULL;
	if (s->host.set && authority_parse(value_of(s, &s->host), s->host.len, &h) < 0)
		return NULL;
	if (s->authority.set && s->host.set && !authority_same(&a, &h, "443"))
		return NULL;
	return s->authority.set ? &s->authority : &s->host;
}

int h2_stream_respond(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;
	struct static_target res;
	bool head = is(s, &s->method, "HEAD");
	const struct h2_field *host = stream_authority(s);

	/* RFC 9113 8.1.1: a malformed request is a stream error; the client
	 * made us reset it, so it counts against --h2-reset-rate. */
	if (!host)
		return nghttp2_submit_rst_stream(hs->ng, NGHTTP2_FLAG_NONE, s->id,
						 NGHTTP2_PROTOCOL_ERROR);
	if (s->bad || !s->path.set)
		return respond_page(hs, s, 400, head, NULL);
	if (!head && !is(s, &s->method, "GET"))
		return respond_page(hs, s, 405, false, NULL);
	const struct static_ask ask = {
	    .target = value_of(s, &s->path),
	    .target_len = s->path.len,
	    .host = host->set ? value_of(s, host) : NULL,
	    .host_len = host->len,
	    .accept_encoding = value_of(s, &s->accept_encoding),
	    .ae_len = s->accept_encoding.len,
	};
	hs->env.resolve(hs->env.ctx, &ask, &res);
	if (res.status == STATIC_LIST_DIR)
		return start_listing(hs, s, &res, head);
	if (res.status == 301 && !(s->location = strdup(res.location)))
		return NGHTTP2_ERR_NOMEM;
	if (res.status)
		return respond_page(hs, s, res.status, head, &res.extras);
	return respond_file(hs, s, &res, head);
}

void h2_stream_done(struct h2_stream *s, uint32_t error, bool cut)
{
	struct h2_session *hs = s->hs;

	if (!s->status || s->reported)
		return;
	s->reported = true;

	const struct h2_stream_record rec = {
	    .id = s->id,
	    .method = value_of(s, &s->method),
	    .method_len = s->method.len,
	    .path = value_of(s, &s->path),
	    .path_len = s->path.len,
	    .authority = value_of(s, &s->authority),
	    .authority_len = s->authority.len,
	    .referer = value_of(s, &s->referer),
	    .referer_len = s->referer.len,
	    .user_agent = value_of(s, &s->user_agent),
	    .user_agent_len = s->user_agent.len,
	    .status = s->status,
	    .body_bytes = s->body_bytes,
	    .frame_bytes = s->frame_bytes,
	    .duration_ms = h2_now(hs) - s->start_ms,
	    .file_body = s->file.size || s->rel || s->file_fd >= 0,
	    .encoding = s->file.content_encoding,
	    .mapped = s->sent_mapped,
	    .truncated = s->truncated,
	    .reset = error != 0,
	    .reset_ours = s->reset_ours,
	    .cut = cut,
	};
	hs->env.stream_done(hs->env.ctx, &rec);
}
