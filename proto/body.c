#include "proto/body.h"

#include <string.h>

static void enter_part(struct body *b)
{
	const struct static_response *r = b->resp;
	if (r->nranges == 0) {
		b->off = 0;
		b->end = b->file->size;
	} else {
		b->off = r->ranges[b->part].first;
		b->end = r->ranges[b->part].last + 1;
	}
	b->header_done = r->nranges <= 1;
}

void body_start(struct body *b, const struct static_response *resp,
		const struct static_file *file)
{
	memset(b, 0, sizeof(*b));
	b->resp = resp;
	b->file = file;
	b->remaining = resp->send_body ? resp->content_length : 0;
	b->done = !resp->send_body;
	if (!b->done)
		enter_part(b);
}

enum body_step body_next(struct body *b, char *out, size_t room, size_t *n, uint64_t *offset)
{
	char frame[STATIC_PART_HEADER_MAX];
	size_t len;

	*n = 0;
	if (b->done)
		return BODY_DONE;
	if (!b->header_done) {
		len = static_part_header(b->resp, b->file, b->part, frame);
		if (len > room)
			return BODY_FULL;
		memcpy(out, frame, len);
		b->header_done = true;
		b->remaining -= len;
		*n = len;
		return BODY_LITERAL;
	}
	if (b->off < b->end) {
		uint64_t want = b->end - b->off;
		if (room == 0)
			return BODY_FULL;
		*n = want < room ? (size_t)want : room;
		*offset = b->off;
		return BODY_FILE;
	}
	/* The current range is finished. */
	if (b->resp->nranges > 1 && b->part + 1 < b->resp->nranges) {
		b->part++;
		enter_part(b);
		return body_next(b, out, room, n, offset);
	}
	if (b->resp->nranges > 1) {
		len = static_multipart_trailer(b->resp, frame);
		if (len > room)
			return BODY_FULL;
		memcpy(out, frame, len);
		b->remaining -= len;
		*n = len;
	}
	b->done = true;
	return *n ? BODY_LITERAL : BODY_DONE;
}

void body_advance(struct body *b, uint64_t got)
{
	b->off += got;
	b->remaining -= got;
}

bool body_file_done(const struct body *b)
{
	if (b->done)
		return true;
	return b->off >= b->end && (b->resp->nranges <= 1 || b->part + 1 >= b->resp->nranges);
}
