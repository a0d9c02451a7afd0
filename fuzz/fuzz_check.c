/* The invariants of a static-file decision (see fuzz_check.h). */
#include "fuzz/fuzz_check.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "proto/httpdate.h"
#include "proto/body.h"

#define MAX_PIECES (2 * STATIC_MAX_RANGES + 1)

/* One piece of the body as it must appear on the wire: framing bytes, or a
 * file byte range [first, end). */
struct piece {
	bool lit;
	char buf[STATIC_PART_HEADER_MAX];
	size_t len;
	uint64_t first, end;
};

static void check_boundary(const struct static_response *resp)
{
	char want[sizeof(resp->multipart_type)];

	FZ_ASSERT(strlen(resp->boundary) == STATIC_BOUNDARY_LEN, "boundary '%s'", resp->boundary);
	for (size_t i = 0; i < STATIC_BOUNDARY_LEN; i++)
		FZ_ASSERT(strchr("0123456789abcdef", resp->boundary[i]) != NULL, "boundary '%s'",
		          resp->boundary);
	snprintf(want, sizeof(want), "multipart/byteranges; boundary=%s", resp->boundary);
	FZ_ASSERT(strcmp(resp->multipart_type, want) == 0, "multipart type '%s'",
	          resp->multipart_type);
	FZ_ASSERT(resp->content_type == resp->multipart_type,
	          "Content-Type is not the multipart one");
}

/* The expected body, piece by piece; returns the count. */
static size_t expected_pieces(const struct static_response *resp, const struct static_file *file,
                              struct piece *p)
{
	size_t n = 0;
	bool multi = resp->nranges > 1;

	if (resp->nranges == 0) {
		if (file->size > 0)
			p[n++] = (struct piece){.first = 0, .end = file->size};
		return n;
	}
	for (size_t i = 0; i < resp->nranges; i++) {
		if (multi) {
			p[n].lit = true;
			p[n].len = static_part_header(resp, file, i, p[n].buf);
			n++;
		}
		p[n++] =
		    (struct piece){.first = resp->ranges[i].first, .end = resp->ranges[i].last + 1};
	}
	if (multi) {
		p[n].lit = true;
		p[n].len = static_multipart_trailer(resp, p[n].buf);
		n++;
	}
	return n;
}

/* The framing of part i: "[CRLF]--B CRLF [Content-Type: T CRLF] Content-Range: bytes a-b/size
 * CRLF CRLF", and the trailer "CRLF --B-- CRLF". */
static void check_framing(const struct static_response *resp, const struct static_file *file,
                          const struct piece *p, size_t np)
{
	char want[STATIC_PART_HEADER_MAX + 64];
	size_t part = 0;

	for (size_t k = 0; k < np; k++) {
		if (!p[k].lit)
			continue;
		FZ_ASSERT(p[k].len > 0 && p[k].len < STATIC_PART_HEADER_MAX, "piece %zu length %zu",
		          k, p[k].len);
		if (k == np - 1) {
			snprintf(want, sizeof(want), "\r\n--%s--\r\n", resp->boundary);
			FZ_ASSERT(p[k].len == strlen(want) && memcmp(p[k].buf, want, p[k].len) == 0,
			          "trailer '%.*s'", (int)p[k].len, p[k].buf);
			continue;
		}
		const struct byte_range *r = &resp->ranges[part];
		int lead =
		    snprintf(want, sizeof(want), "%s--%s\r\n", part ? "\r\n" : "", resp->boundary);
		FZ_ASSERT(p[k].len > (size_t)lead && memcmp(p[k].buf, want, (size_t)lead) == 0,
		          "part %zu header starts '%.*s'", part, (int)p[k].len, p[k].buf);
		int tail =
		    snprintf(want, sizeof(want),
		             "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64 "\r\n\r\n",
		             r->first, r->last, file->size);
		FZ_ASSERT(p[k].len >= (size_t)(lead + tail) &&
		              memcmp(p[k].buf + p[k].len - tail, want, (size_t)tail) == 0,
		          "part %zu header ends '%.*s'", part, (int)p[k].len, p[k].buf);
		part++;
	}
}

/* Walks the body with proto/body.c the way the senders do, with room sizes
 * drawn from rng, short reads included, and compares it with the pieces. */
static void walk_body(const struct static_response *resp, const struct static_file *file,
                      const struct piece *p, size_t np, uint64_t *rng)
{
	static const size_t rooms[] = {1, 9, 64, STATIC_PART_HEADER_MAX, 16384, 1 << 20};
	static char out[1 << 20];
	/* Rooms below this would make a long body a walk of millions of steps. */
	uint64_t min_room = resp->content_length / 2000 + 1;
	struct body b;
	size_t k = 0;
	uint64_t pos = 0, emitted = 0;

	body_start(&b, resp, file);
	for (unsigned step = 0;; step++) {
		size_t room = rooms[fz_rand(rng) % 6];
		size_t n = 0;
		uint64_t off = UINT64_MAX;

		if (room < min_room)
			room = min_room < sizeof(out) ? (size_t)min_room : sizeof(out);

		FZ_ASSERT(step < 100000, "body walk does not end (%" PRIu64 " of %" PRIu64 ")",
		          emitted, resp->content_length);
		FZ_ASSERT(b.remaining == resp->content_length - emitted,
		          "remaining %" PRIu64 " after %" PRIu64 " of %" PRIu64, b.remaining,
		          emitted, resp->content_length);
		switch (body_next(&b, out, room, &n, &off)) {
		case BODY_DONE:
			FZ_ASSERT(k == np, "body ended after %zu of %zu pieces", k, np);
			FZ_ASSERT(emitted == resp->content_length,
			          "body of %" PRIu64 " bytes, Content-Length %" PRIu64, emitted,
			          resp->content_length);
			FZ_ASSERT(body_next(&b, out, room, &n, &off) == BODY_DONE,
			          "DONE is not final");
			return;
		case BODY_FULL:
			FZ_ASSERT(k < np && p[k].lit && p[k].len > room,
			          "FULL with room %zu at piece %zu", room, k);
			break;
		case BODY_LITERAL:
			FZ_ASSERT(k < np && p[k].lit && pos == 0, "unexpected literal at piece %zu",
			          k);
			FZ_ASSERT(n == p[k].len && n <= room && memcmp(out, p[k].buf, n) == 0,
			          "literal %zu differs from the framing (%zu bytes, want %zu)", k,
			          n, p[k].len);
			emitted += n;
			k++;
			break;
		case BODY_FILE: {
			FZ_ASSERT(k < np && !p[k].lit, "unexpected file bytes at piece %zu", k);
			FZ_ASSERT(off == p[k].first + pos, "file offset %" PRIu64 ", want %" PRIu64,
			          off, p[k].first + pos);
			FZ_ASSERT(n > 0 && n <= room && n <= p[k].end - off,
			          "file read of %zu at %" PRIu64 " (range ends %" PRIu64
			          ", room %zu)",
			          n, off, p[k].end, room);
			FZ_ASSERT(p[k].end <= file->size, "range past the end of the file");
			/* A short read, as a socket or a page-cache miss gives. */
			uint64_t got = (fz_rand(rng) & 3) == 0 && n > 1 ? n / 2 : n;
			body_advance(&b, got);
			pos += got;
			emitted += got;
			if (p[k].first + pos == p[k].end) {
				k++;
				pos = 0;
			}
			break;
		}
		}
	}
}

void fz_check_static_response(const struct static_request *req, const struct static_file *file,
                              const struct static_response *resp, uint64_t *rng)
{
	struct piece p[MAX_PIECES];
	char want[80], scratch[STATIC_PART_HEADER_MAX];
	uint64_t total = 0;
	size_t np;

	FZ_ASSERT(resp->etag[0] == '"' && strlen(resp->etag) < ETAG_MAX, "ETag %s", resp->etag);
	FZ_ASSERT(strlen(resp->last_modified) == HTTPDATE_LEN, "Last-Modified '%s'",
	          resp->last_modified);
	FZ_ASSERT(resp->nranges <= STATIC_MAX_RANGES, "%zu ranges", resp->nranges);
	FZ_ASSERT(resp->vary == file->vary, "vary %d for a file with %d", resp->vary, file->vary);
	FZ_ASSERT(
	    resp->content_encoding ==
	        ((resp->status == 200 || resp->status == 206) ? file->content_encoding : NULL),
	    "Content-Encoding %s on a %d", resp->content_encoding, resp->status);
	if (file->content_encoding) {
		size_t el = strlen(resp->etag), cl = strlen(file->content_encoding);
		FZ_ASSERT(el > cl + 2 && resp->etag[el - cl - 2] == '-' &&
		              memcmp(resp->etag + el - cl - 1, file->content_encoding, cl) == 0,
		          "ETag %s of a %s sidecar", resp->etag, file->content_encoding);
	}
	for (size_t i = 0; i < resp->nranges; i++) {
		const struct byte_range *r = &resp->ranges[i];

		FZ_ASSERT(r->first <= r->last && r->last < file->size,
		          "range %zu: %" PRIu64 "-%" PRIu64 " of %" PRIu64, i, r->first, r->last,
		          file->size);
		total += r->last - r->first + 1;
		FZ_ASSERT(total <= file->size, "ranges add up to more than the file");
	}

	switch (resp->status) {
	case 200:
		FZ_ASSERT(
		    resp->nranges == 0 && resp->content_length == file->size &&
		        resp->send_body == !req->head && resp->content_type == file->content_type &&
		        resp->content_range[0] == '\0',
		    "200 with %zu ranges, length %" PRIu64, resp->nranges, resp->content_length);
		break;
	case 206:
		FZ_ASSERT(req->range != NULL && resp->nranges >= 1 && resp->send_body == !req->head,
		          "206 with %zu ranges", resp->nranges);
		if (resp->nranges == 1) {
			const struct byte_range *r = &resp->ranges[0];

			snprintf(want, sizeof(want), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64,
			         r->first, r->last, file->size);
			FZ_ASSERT(strcmp(resp->content_range, want) == 0, "Content-Range '%s'",
			          resp->content_range);
			FZ_ASSERT(resp->content_length == r->last - r->first + 1 &&
			              resp->content_type == file->content_type,
			          "single range length %" PRIu64, resp->content_length);
		} else {
			check_boundary(resp);
			FZ_ASSERT(resp->content_range[0] == '\0',
			          "Content-Range on a multipart 206");
		}
		break;
	case 304:
		FZ_ASSERT(resp->content_length == file->size && !resp->send_body &&
		              resp->content_type == NULL && resp->nranges == 0,
		          "304 length %" PRIu64, resp->content_length);
		break;
	case 412:
		FZ_ASSERT(req->cond.if_match || req->cond.if_unmodified_since,
		          "412 without a precondition");
		FZ_ASSERT(resp->content_length == 0 && !resp->send_body && resp->nranges == 0,
		          "412 length %" PRIu64, resp->content_length);
		break;
	case 416:
		snprintf(want, sizeof(want), "bytes */%" PRIu64, file->size);
		FZ_ASSERT(req->range != NULL && strcmp(resp->content_range, want) == 0 &&
		              resp->content_length == 0 && !resp->send_body && resp->nranges == 0,
		          "416 Content-Range '%s'", resp->content_range);
		break;
	default:
		FZ_ASSERT(0, "status %d", resp->status);
	}

	/* The framing and the lengths, for the statuses that describe a body. */
	if (resp->status != 200 && resp->status != 206)
		return;
	np = expected_pieces(resp, file, p);
	total = 0;
	for (size_t k = 0; k < np; k++)
		total += p[k].lit ? p[k].len : p[k].end - p[k].first;
	FZ_ASSERT(total == resp->content_length,
	          "framing + ranges = %" PRIu64 ", Content-Length %" PRIu64, total,
	          resp->content_length);
	FZ_ASSERT(static_part_header(resp, file, resp->nranges, scratch) == 0,
	          "a part header past the last range");
	check_framing(resp, file, p, np);
	/* Past 16 GiB the walk would take too many steps; the sizes that big
	 * are there for the 64-bit arithmetic, checked above. */
	if (resp->send_body && resp->content_length <= (UINT64_C(1) << 34))
		walk_body(resp, file, p, np, rng);
}
