/* The streams of an HTTP/2 session, once answered: their files (opened when
 * they may send, within the session's file slots), the DATA payloads
 * nghttp2 asks for, and their end. A stream's request is h2_request.c's,
 * its answer h2_response.c's. See proto/h2_stream.h. */
#include "proto/h2_stream.h"

#include <stdlib.h>
#include <string.h>

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
		hs->env.unmap(hs->env.ctx, s->map);
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
ssize_t h2_stream_read_data(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t length,
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

/* ---- what the glue asks of a stream ---- */

struct h2_readv h2_stream_readv(const struct h2_stream *s)
{
	return (struct h2_readv){s->file_fd, s->iov, s->niov, s->read_off, s->read_len};
}

int32_t h2_stream_id(const struct h2_stream *s)
{
	return s->id;
}

const struct static_file *h2_stream_file(const struct h2_stream *s)
{
	return &s->file;
}

const char *h2_stream_file_name(const struct h2_stream *s)
{
	return s->rel;
}
