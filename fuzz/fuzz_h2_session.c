/* libFuzzer target: the HTTP/2 input side, a nghttp2 server session with
 * ktlsd's options and callbacks, fed a client's bytes.
 *
 * Limitation: server/h2_conn.c is tied to the connection, the worker and
 * the io_uring ring (conn_*, ring_sqe, readv completions), so it cannot be
 * linked here. This file mirrors its callback logic instead, function for
 * function and with the same names: begin_headers_cb, header_cb (the
 * bounded arena, --h2-max-header-list), frame_recv_cb and on_request,
 * read_cb and send_data_cb (NGHTTP2_DATA_FLAG_NO_COPY, the frame header
 * into the batch and a hole for the file bytes, one contiguous file range of
 * at most MAX_IOV holes per stream and batch; with --h2-sendfile the header
 * alone and NGHTTP2_ERR_PAUSE), post_reads and h2_read_complete (the holes
 * filled after the batch, a short read cutting the batch), stream_close_cb
 * (a stream with holes or a splice outstanding is freed when that
 * completes), h2_drive's batch loop and output_sendfile. What it shares
 * with the server for real: proto/ (path, static_file, range, cond,
 * httpdate, status) and server/body.c. Mirrored from h2_conn.c as of commit
 * e17cd22; keep the two in step when h2_conn.c changes.
 *
 * Input: byte 0 is flags, byte 1 a seed; the rest is what the client sends
 * after the connection preface (which is prepended), usually a SETTINGS
 * frame first.
 *   flags bit 0   --h2-buffer 32768 (the smallest) instead of 262144
 *         bit 1   big.bin reads come short from offset 65536 on (the file
 *                 shrank under the response): the batch is cut there
 *         bit 2   a graceful stop (GOAWAY, as on SIGTERM) after the first piece
 *         bit 3   complete the file reads only after the next input piece, as
 *                 when input arrives while readv is in flight
 *         bit 4   --h2-sendfile: each DATA frame's header sent alone, its
 *                 payload spliced (the PAUSE path of send_data_cb)
 * Checked: a stream ends (END_STREAM) with exactly the body its
 * Content-Length announced, file reads stay inside the file, nothing is
 * written past the batch, and ASan/LSan on the stream lifetimes. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include "fuzz/fuzz_check.h"
#include "proto/path.h"
#include "proto/static_file.h"
#include "proto/status.h"
#include "server/body.h"

/* As in h2_conn.c. */
#define FRAME_HEADER 9
#define MAX_IOV 64
#define ARENA 8192

/* The config defaults h2_conn_start reads. */
#define H2_MAX_STREAMS 128
#define H2_MAX_HEADER_LIST 65536
#define H2_RESET_RATE 100
#define H2_MAX_CONTINUATIONS 8

#define MAX_BATCHES 512 /* per input; a stalled client stops us sooner */
#define SHRINK_AT 65536 /* bit 1: big.bin ends here for reads */
#define DATE "Sun, 02 Feb 2020 02:02:02 GMT"

/* FUZZ_TRACE=1 in the environment: one line per stream on stderr, to see
 * what an input does when reproducing it. */
static bool trace;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	trace = getenv("FUZZ_TRACE") != NULL;
	return 0;
}

/* ---- the fake root (resolve.c's job in the server) ---- */

struct fake_file {
	const char *rel;
	uint64_t size;
	const char *type;
};

static const struct fake_file files[] = {
    {"index.html", 57, "text/html"},
    {"a.txt", 1000, "text/plain"},
    {"big.bin", 200000, "application/octet-stream"},
    {"empty.txt", 0, "text/plain"},
    {"sub/index.html", 15, "text/html"},
};

struct resolved {
	int status; /* 0: serve ff */
	const struct fake_file *ff;
};

static void resolve_target(const char *target, size_t len, struct resolved *out)
{
	char rel[PATH_MAX];
	struct path_info info;
	int rc = path_from_target(target, len, rel, sizeof(rel), &info);

	out->status = 0;
	out->ff = NULL;
	if (rc < 0) {
		out->status = rc == -ENAMETOOLONG ? 414 : 400;
		return;
	}
	if (info.dotfile) { /* --dotfiles off */
		out->status = 404;
		return;
	}
	if (strcmp(rel, "sub") == 0 || strcmp(rel, ".") == 0) {
		if (!info.trailing_slash) {
			out->status = 301;
			return;
		}
		snprintf(rel, sizeof(rel), "%s", rel[0] == '.' ? "index.html" : "sub/index.html");
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (strcmp(files[i].rel, rel) == 0) {
			out->ff = &files[i];
			return;
		}
	out->status = 404;
}

/* The bytes of a fake file: a pattern the harness can check. */
static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 131 + 7);
}

/* ---- session and streams, as in h2_conn.c ---- */

struct h2_str {
	const char *p;
	size_t len;
};

enum pending { PEND_NONE, PEND_LITERAL, PEND_FILE };

struct hole {
	size_t at, len; /* in the batch; h2_conn.c keeps iovecs */
};

struct h2_stream {
	struct h2_stream *next, *prev;
	struct h2_stream *next_reading;
	struct h2_session *hs;
	int32_t id;
	bool closed;
	bool read_posted;

	struct h2_str method, path, authority, range, if_match, if_none_match, if_modified_since,
	    if_unmodified_since, if_range;
	size_t arena_used;
	bool bad;
	char arena[ARENA];

	int status;
	const struct fake_file *ff; /* file_fd in h2_conn.c */
	struct static_file file;
	struct static_response sr;
	struct body body;
	const char *page;
	size_t page_len, page_off;
	char page_buf[512];

	enum pending pend;
	size_t pend_len;
	char lit[STATIC_PART_HEADER_MAX];
	size_t header_bytes;

	struct hole iov[MAX_IOV];
	int niov;
	uint64_t read_off;
	size_t read_len;
	size_t first_frame;

	uint64_t bytes_out;
	/* the harness's own accounting */
	uint64_t want_body, sent_body;
};

struct h2_session {
	nghttp2_session *ng;
	struct h2_stream *streams;
	struct h2_stream *reading;
	unsigned reads_pending;
	uint8_t *out;
	size_t out_len, out_cap;
	bool cut;
	size_t cut_at;
	bool stopping;
	bool closed; /* conn_abort or close: the harness stops */
	bool shrink; /* flags bit 1 */
	unsigned batches;

	/* --h2-sendfile */
	bool sendfile;
	struct h2_stream *sf;
	uint64_t sf_off;
	size_t sf_len;
};

static void stream_free(struct h2_stream *s)
{
	struct h2_session *hs = s->hs;

	if (s->prev)
		s->prev->next = s->next;
	else
		hs->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s);
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

static ssize_t read_cb(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
                       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2_stream *s = src->ptr;
	size_t n = 0;
	uint64_t off;

	*flags |= NGHTTP2_DATA_FLAG_NO_COPY;
	if (page_left(s) == 0 && !s->body.done) {
		size_t room = length > sizeof(s->lit) ? length : sizeof(s->lit);
		switch (body_next(&s->body, s->lit, room, &n, &off)) {
		case BODY_LITERAL:
			s->page = s->lit;
			s->page_len = n;
			s->page_off = 0;
			break;
		case BODY_FILE:
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

/* The harness's check: a stream ends with the body it announced. */
static void account(struct h2_stream *s, const nghttp2_frame *frame, size_t length)
{
	s->sent_body += length;
	if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
		FZ_ASSERT(s->sent_body == s->want_body,
		          "stream %d ends after %llu body bytes, announced %llu", s->id,
		          (unsigned long long)s->sent_body, (unsigned long long)s->want_body);
	else
		FZ_ASSERT(s->sent_body <= s->want_body, "stream %d sends %llu of %llu", s->id,
		          (unsigned long long)s->sent_body, (unsigned long long)s->want_body);
}

static int send_data_cb(nghttp2_session *ng, nghttp2_frame *frame, const uint8_t *framehd,
                        size_t length, nghttp2_data_source *src, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s = src->ptr;
	size_t at = hs->out_len;

	FZ_ASSERT(frame->data.padlen == 0, "padding %zu: the DATA frame would be malformed",
	          frame->data.padlen);
	FZ_ASSERT(length == s->pend_len, "send_data length %zu, read_cb said %zu", length,
	          s->pend_len);
	if (hs->out_cap - hs->out_len < FRAME_HEADER + length)
		return NGHTTP2_ERR_WOULDBLOCK;
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
		account(s, frame, length);
		return NGHTTP2_ERR_PAUSE;
	}
	memcpy(hs->out + at, framehd, FRAME_HEADER);
	hs->out_len += FRAME_HEADER;
	if (s->pend == PEND_LITERAL) {
		memcpy(hs->out + hs->out_len, s->page + s->page_off, length);
		s->page_off += length;
		if (s->page_off == s->page_len && s->page == s->lit)
			s->page = NULL;
	} else if (s->pend == PEND_FILE) {
		if (s->niov == 0) {
			s->read_off = s->body.off;
			s->read_len = 0;
			s->first_frame = at;
			s->next_reading = hs->reading;
			hs->reading = s;
		}
		s->iov[s->niov].at = hs->out_len;
		s->iov[s->niov].len = length;
		s->niov++;
		s->read_len += length;
		body_advance(&s->body, length);
	} else {
		FZ_ASSERT(length == 0, "%zu bytes of nothing", length);
	}
	hs->out_len += length;
	s->bytes_out += FRAME_HEADER + length;
	s->pend = PEND_NONE;
	account(s, frame, length);
	return 0;
}

/* The ring's readv, completed at once: fill the holes from the fake file. */
static int fake_readv(struct h2_session *hs, struct h2_stream *s)
{
	uint64_t off = s->read_off, end = s->ff->size;
	size_t got = 0;

	FZ_ASSERT(s->read_off + s->read_len <= s->ff->size,
	          "readv of %zu at %llu past the end of %s", s->read_len,
	          (unsigned long long)s->read_off, s->ff->rel);
	if (hs->shrink && strcmp(s->ff->rel, "big.bin") == 0)
		end = SHRINK_AT;
	for (int i = 0; i < s->niov; i++) {
		FZ_ASSERT(s->iov[i].at + s->iov[i].len <= hs->out_len, "hole past the batch");
		for (size_t j = 0; j < s->iov[i].len && off < end; j++, off++, got++)
			hs->out[s->iov[i].at + j] = file_byte(off);
	}
	return (int)got;
}

static void h2_read_complete(struct h2_stream *s, int res)
{
	struct h2_session *hs = s->hs;

	s->read_posted = false;
	hs->reads_pending--;
	if (trace)
		fprintf(stderr, "stream %d: readv of %zu bytes in %d holes at %llu: %d\n", s->id,
		        s->read_len, s->niov, (unsigned long long)s->read_off, res);
	if (res < 0 || (size_t)res != s->read_len) {
		if (!hs->cut || s->first_frame < hs->cut_at)
			hs->cut_at = s->first_frame;
		hs->cut = true;
	}
	s->niov = 0;
	if (s->closed)
		stream_free(s);
}

/* post_reads, and the completions the ring would deliver later. */
static void post_reads(struct h2_session *hs)
{
	for (struct h2_stream *s = hs->reading; s; s = s->next_reading) {
		s->read_posted = true;
		hs->reads_pending++;
	}
}

static void complete_reads(struct h2_session *hs)
{
	struct h2_stream *s = hs->reading, *next;

	hs->reading = NULL;
	for (; s; s = next) {
		next = s->next_reading;
		h2_read_complete(s, fake_readv(hs, s));
	}
	FZ_ASSERT(hs->reads_pending == 0, "%u reads still pending", hs->reads_pending);
}

/* ---- requests ---- */

static struct h2_str *field_of(struct h2_stream *s, const uint8_t *name, size_t len)
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
			return (struct h2_str *)((char *)s + fields[i].off);
	return NULL;
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
	s->next = hs->streams;
	if (hs->streams)
		hs->streams->prev = s;
	hs->streams = s;
	nghttp2_session_set_stream_user_data(ng, s->id, s);
	return 0;
}

static int header_cb(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	struct h2_str *f;

	if (!s || frame->hd.type != NGHTTP2_HEADERS)
		return 0;
	s->header_bytes += namelen + valuelen + 32;
	if (s->header_bytes > H2_MAX_HEADER_LIST)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	f = field_of(s, name, namelen);
	if (!f)
		return 0;
	if (f->p || s->arena_used + valuelen > ARENA) {
		s->bad = true;
		return 0;
	}
	memcpy(s->arena + s->arena_used, value, valuelen);
	f->p = s->arena + s->arena_used;
	f->len = valuelen;
	s->arena_used += valuelen;
	return 0;
}

static bool is(const struct h2_str *f, const char *word)
{
	return f->p && f->len == strlen(word) && memcmp(f->p, word, f->len) == 0;
}

static void add_nv(nghttp2_nv *nv, size_t *n, const char *name, const char *value)
{
	nv[*n].name = (uint8_t *)name;
	nv[*n].namelen = strlen(name);
	nv[*n].value = (uint8_t *)value;
	nv[*n].valuelen = strlen(value);
	nv[*n].flags = NGHTTP2_NV_FLAG_NONE;
	(*n)++;
}

static int submit(struct h2_session *hs, struct h2_stream *s, nghttp2_nv *nv, size_t n, bool body)
{
	nghttp2_data_provider prd = {.source.ptr = s, .read_callback = read_cb};
	return nghttp2_submit_response(hs->ng, s->id, nv, n, body ? &prd : NULL);
}

static int respond_page(struct h2_session *hs, struct h2_stream *s, int status, bool head)
{
	nghttp2_nv nv[8];
	size_t n = 0;
	char code[8], len[24];

	s->status = status;
	s->page_len = status_page(status, s->page_buf, sizeof(s->page_buf));
	s->page = s->page_buf;
	s->body.done = true;
	s->want_body = head ? 0 : s->page_len;
	snprintf(code, sizeof(code), "%d", status);
	snprintf(len, sizeof(len), "%zu", s->page_len);
	add_nv(nv, &n, ":status", code);
	add_nv(nv, &n, "server", "ktlsd");
	add_nv(nv, &n, "date", DATE);
	add_nv(nv, &n, "content-type", "text/html; charset=utf-8");
	add_nv(nv, &n, "content-length", len);
	if (status == 405)
		add_nv(nv, &n, "allow", "GET, HEAD");
	if (status == 301)
		add_nv(nv, &n, "location", "/sub/");
	return submit(hs, s, nv, n, !head);
}

static int respond_file(struct h2_session *hs, struct h2_stream *s, const struct resolved *res,
                        bool head, uint64_t seed)
{
	struct static_request req = {.head = head};
	struct static_response *sr = &s->sr;
	nghttp2_nv nv[12];
	size_t n = 0;
	char code[8], len[24];

	req.cond.if_match = s->if_match.p;
	req.cond.if_match_len = s->if_match.len;
	req.cond.if_none_match = s->if_none_match.p;
	req.cond.if_none_match_len = s->if_none_match.len;
	req.cond.if_modified_since = s->if_modified_since.p;
	req.cond.if_modified_since_len = s->if_modified_since.len;
	req.cond.if_unmodified_since = s->if_unmodified_since.p;
	req.cond.if_unmodified_since_len = s->if_unmodified_since.len;
	req.range = s->range.p;
	req.range_len = s->range.len;
	req.if_range = s->if_range.p;
	req.if_range_len = s->if_range.len;

	s->file = (struct static_file){.size = res->ff->size,
	                               .ino = 0x2a,
	                               .mtime_sec = 1580608922,
	                               .mtime_nsec = 123,
	                               .content_type = res->ff->type};
	static_file_respond(&req, &s->file, seed, sr);
	s->status = sr->status;
	s->ff = res->ff;
	snprintf(code, sizeof(code), "%d", sr->status);
	snprintf(len, sizeof(len), "%llu", (unsigned long long)sr->content_length);
	add_nv(nv, &n, ":status", code);
	add_nv(nv, &n, "server", "ktlsd");
	add_nv(nv, &n, "date", DATE);
	if (sr->content_type)
		add_nv(nv, &n, "content-type", sr->content_type);
	if (sr->status != 304)
		add_nv(nv, &n, "content-length", len);
	if (sr->status == 200 || sr->status == 206 || sr->status == 304) {
		add_nv(nv, &n, "last-modified", sr->last_modified);
		add_nv(nv, &n, "etag", sr->etag);
	}
	if (sr->content_range[0])
		add_nv(nv, &n, "content-range", sr->content_range);
	add_nv(nv, &n, "accept-ranges", "bytes");
	bool body = sr->send_body && sr->content_length > 0;
	if (body) {
		body_start(&s->body, sr, &s->file);
		s->want_body = sr->content_length;
	}
	return submit(hs, s, nv, n, body);
}

static int on_request(struct h2_session *hs, struct h2_stream *s)
{
	struct resolved res;
	bool head = is(&s->method, "HEAD");

	if (s->bad || !s->path.p)
		return respond_page(hs, s, 400, head);
	if (!head && !is(&s->method, "GET"))
		return respond_page(hs, s, 405, false);
	resolve_target(s->path.p, s->path.len, &res);
	if (res.status)
		return respond_page(hs, s, res.status, head);
	return respond_file(hs, s, &res, head, (uint64_t)s->id * 0x9e3779b97f4a7c15u);
}

static int frame_recv_cb(nghttp2_session *ng, const nghttp2_frame *frame, void *ud)
{
	struct h2_session *hs = ud;
	struct h2_stream *s;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	s = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (!s)
		return 0;
	if (on_request(hs, s) != 0)
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
	return 0;
}

static int stream_close_cb(nghttp2_session *ng, int32_t id, uint32_t error, void *ud)
{
	struct h2_stream *s = nghttp2_session_get_stream_user_data(ng, id);

	if (!s)
		return 0;
	FZ_ASSERT(!s->closed, "stream %d closed twice", id);
	if (trace)
		fprintf(stderr, "stream %d: %.*s %.*s -> %d, %llu of %llu body bytes, error %u\n",
		        id, (int)s->method.len, s->method.p ? s->method.p : "-", (int)s->path.len,
		        s->path.p ? s->path.p : "-", s->status, (unsigned long long)s->sent_body,
		        (unsigned long long)s->want_body, error);
	nghttp2_session_set_stream_user_data(ng, id, NULL);
	s->closed = true;
	if (!s->read_posted && s->niov == 0 && s->hs->sf != s)
		stream_free(s);
	return 0;
}

/* ---- the session ---- */

static int session_start(struct h2_session *hs)
{
	nghttp2_session_callbacks *cb = NULL;
	nghttp2_option *opt = NULL;
	int rc = -1;

	if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0)
		goto out;
	nghttp2_session_callbacks_set_send_callback(cb, send_cb);
	nghttp2_session_callbacks_set_send_data_callback(cb, send_data_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, begin_headers_cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, frame_recv_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, stream_close_cb);

	nghttp2_option_set_max_continuations(opt, H2_MAX_CONTINUATIONS);
	nghttp2_option_set_stream_reset_rate_limit(opt, (uint64_t)H2_RESET_RATE * 10,
	                                           H2_RESET_RATE);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	if (nghttp2_session_server_new2(&hs->ng, cb, hs, opt) != 0)
		goto out;

	nghttp2_settings_entry iv[] = {
	    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS},
	    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_MAX_HEADER_LIST},
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
	return rc;
}

/* output_sendfile (--h2-sendfile): frames up to a DATA frame's header go
 * out, then that frame's payload is spliced from the file; the send and
 * the splices are taken as done at once. */
static void drive_sendfile(struct h2_session *hs)
{
	for (;;) {
		if (hs->out_len > 0) {
			hs->out_len = 0; /* the send of the frames and the header */
			if (++hs->batches >= MAX_BATCHES)
				return;
		}
		if (hs->sf && hs->sf_len > 0) {
			const struct fake_file *ff = hs->sf->ff;
			uint64_t end =
			    hs->shrink && strcmp(ff->rel, "big.bin") == 0 ? SHRINK_AT : ff->size;

			FZ_ASSERT(hs->sf_off + hs->sf_len <= ff->size,
			          "splice of %zu at %llu past the end of %s", hs->sf_len,
			          (unsigned long long)hs->sf_off, ff->rel);
			if (hs->sf_off >= end) {
				hs->closed = true; /* splice in gave 0: "file shrank" */
				return;
			}
			size_t n =
			    end - hs->sf_off < hs->sf_len ? (size_t)(end - hs->sf_off) : hs->sf_len;
			hs->sf_off += n;
			hs->sf_len -= n;
			continue;
		}
		if (hs->sf) {
			struct h2_stream *s = hs->sf;
			hs->sf = NULL;
			if (s->closed)
				stream_free(s);
		}
		if (nghttp2_session_send(hs->ng) != 0) {
			hs->closed = true;
			return;
		}
		FZ_ASSERT(hs->out_len <= hs->out_cap, "batch overrun");
		if (hs->out_len == 0 && !hs->sf)
			return;
	}
}

/* h2_drive's batch loop, with the send (and the encryption) taken as done at
 * once. Returns with reads pending, when there is nothing more to send, or
 * when the connection closes. */
static void drive(struct h2_session *hs)
{
	if (hs->sendfile) {
		drive_sendfile(hs);
		if (hs->closed)
			return;
	}
	while (!hs->sendfile) {
		if (hs->reads_pending == 0 && !hs->cut) {
			int rv = nghttp2_session_send(hs->ng);
			if (rv != 0) {
				hs->closed = true; /* conn_abort: "HTTP/2 send failed" */
				return;
			}
			post_reads(hs);
		}
		FZ_ASSERT(hs->out_len <= hs->out_cap, "batch overrun");
		if (hs->reads_pending > 0 || hs->out_len == 0)
			break;
		if (hs->cut) {
			FZ_ASSERT(hs->cut_at <= hs->out_len, "cut past the batch");
			hs->out_len = hs->cut_at;
			hs->closed = true; /* sent, then conn_abort */
		}
		hs->out_len = 0; /* the batch is on the wire */
		if (hs->closed || ++hs->batches >= MAX_BATCHES)
			return;
	}
	if (hs->cut && hs->reads_pending == 0 && hs->out_len == 0)
		hs->closed = true;
	if (!nghttp2_session_want_read(hs->ng) && !nghttp2_session_want_write(hs->ng) &&
	    hs->reads_pending == 0 && hs->out_len == 0 && !hs->sf)
		hs->closed = true; /* conn_close_graceful */
}

/* h2_shutdown */
static void shutdown_session(struct h2_session *hs)
{
	if (hs->stopping)
		return;
	hs->stopping = true;
	nghttp2_submit_goaway(hs->ng, NGHTTP2_FLAG_NONE,
	                      nghttp2_session_get_last_proc_stream_id(hs->ng), NGHTTP2_NO_ERROR,
	                      NULL, 0);
}

static size_t piece_size(uint64_t *rng, size_t left)
{
	uint64_t x = fz_rand(rng);
	size_t n = (x & 1) ? left : 1 + (size_t)((x >> 8) % 64);

	return n < left ? n : left;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[] = NGHTTP2_CLIENT_MAGIC;
	struct h2_session hs = {0};
	uint8_t flags;
	uint64_t rng;
	uint8_t *in;
	size_t len, pos = 0;

	if (size < 2)
		return 0;
	flags = data[0];
	rng = data[1];
	/* The preface, then the client's frames, in one heap buffer of exactly
	 * that size. */
	len = NGHTTP2_CLIENT_MAGIC_LEN + size - 2;
	in = malloc(len);
	hs.out_cap = (flags & 1) ? 32768 : 262144;
	hs.out = malloc(hs.out_cap);
	if (!in || !hs.out)
		abort();
	memcpy(in, magic, NGHTTP2_CLIENT_MAGIC_LEN);
	memcpy(in + NGHTTP2_CLIENT_MAGIC_LEN, data + 2, size - 2);
	hs.shrink = flags & 2;
	hs.sendfile = flags & 16;

	if (session_start(&hs) == 0) {
		drive(&hs);
		while (!hs.closed && (pos < len || hs.reads_pending > 0)) {
			/* take_input runs while reads are in flight (not while a
			 * send is), so input may close streams that have holes. */
			if (pos < len && (hs.reads_pending == 0 || (flags & 8))) {
				size_t n = piece_size(&rng, len - pos);
				ssize_t rv = nghttp2_session_mem_recv(hs.ng, in + pos, n);
				if (rv < 0)
					break; /* conn_abort: "HTTP/2 protocol error" */
				FZ_ASSERT((size_t)rv == n, "mem_recv took %zd of %zu", rv, n);
				pos += n;
				if (flags & 4)
					shutdown_session(&hs);
			}
			if (hs.reads_pending > 0)
				complete_reads(&hs);
			drive(&hs);
			if (hs.batches >= MAX_BATCHES)
				break;
		}
		/* Whatever is still queued goes out, as far as the windows let it. */
		while (!hs.closed && hs.batches < MAX_BATCHES &&
		       nghttp2_session_want_write(hs.ng)) {
			unsigned before = hs.batches;
			if (hs.reads_pending > 0)
				complete_reads(&hs);
			drive(&hs);
			if (hs.batches == before && hs.reads_pending == 0)
				break; /* blocked on flow control */
		}
		if (hs.reads_pending > 0)
			complete_reads(&hs);
	}
	if (trace)
		fprintf(stderr, "session end: %u batches, %s%s\n", hs.batches,
		        hs.cut ? "cut by a short read, " : "", hs.closed ? "closed" : "open");
	/* h2_conn_free */
	nghttp2_session_del(hs.ng);
	while (hs.streams)
		stream_free(hs.streams);
	free(hs.out);
	free(in);
	return 0;
}
