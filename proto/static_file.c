/* What to answer for a static file: conditionals (RFC 9110 13.2.2), then
 * Range (14.2) guarded by If-Range (13.1.5), then the whole file. */
#include "proto/static_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "proto/httpdate.h"

/* splitmix64 (Steele, Lea, Flood 2014): a counter seed still gives
 * well-spread bits, so consecutive responses get unrelated boundaries. Not a
 * secret: a file's bytes could only collide with the boundary by design of
 * whoever controls the file, and they control the docroot already. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static void make_boundary(uint64_t seed, char *out)
{
	static const char hex[] = "0123456789abcdef";
	uint64_t word = 0;

	for (size_t i = 0; i < STATIC_BOUNDARY_LEN; i++) {
		if (i % 16 == 0)
			word = splitmix64(&seed);
		out[i] = hex[word & 0xf];
		word >>= 4;
	}
	out[STATIC_BOUNDARY_LEN] = '\0';
}

/* A Content-Type too long for STATIC_PART_HEADER_MAX (mime.types tops out
 * near 75 bytes; about 125 fit) is left out of the part rather than cut:
 * RFC 9110 14.6 wants it only if the 200 would have had it, and a truncated
 * type would be a wrong one. content_length stays exact either way because it
 * is computed with this same function. */
size_t static_part_header(const struct static_response *resp, const struct static_file *file,
                          size_t i, char *out)
{
	const struct byte_range *r;
	const char *ct = file->content_type;
	int len;

	if (i >= resp->nranges)
		return 0;
	r = &resp->ranges[i];
	for (;;) {
		len = snprintf(out, STATIC_PART_HEADER_MAX,
		               "%s--%s\r\n%s%s%sContent-Range: bytes %" PRIu64 "-%" PRIu64
		               "/%" PRIu64 "\r\n\r\n",
		               i == 0 ? "" : "\r\n", resp->boundary, ct ? "Content-Type: " : "",
		               ct ? ct : "", ct ? "\r\n" : "", r->first, r->last, file->size);
		if (len < 0)
			return 0;
		if ((size_t)len < STATIC_PART_HEADER_MAX || ct == NULL)
			break;
		ct = NULL;
	}
	return (size_t)len;
}

size_t static_multipart_trailer(const struct static_response *resp, char *out)
{
	int len = snprintf(out, STATIC_PART_HEADER_MAX, "\r\n--%s--\r\n", resp->boundary);

	return len < 0 ? 0 : (size_t)len;
}

/* false when the body's length does not fit 64 bits (only a size no file
 * can have, but the caller then answers 200 rather than a wrong length). */
static bool respond_multipart(struct static_response *resp, const struct static_file *file,
                              uint64_t boundary_seed)
{
	char buf[STATIC_PART_HEADER_MAX];
	uint64_t total = 0;

	make_boundary(boundary_seed, resp->boundary);
	snprintf(resp->multipart_type, sizeof(resp->multipart_type),
	         "multipart/byteranges; boundary=%s", resp->boundary);
	/* Points into resp itself: the Content-Type to send is the multipart
	 * one, so a caller can always send content_type. Do not copy resp by
	 * value and keep using the copy's content_type. */
	resp->content_type = resp->multipart_type;
	for (size_t i = 0; i < resp->nranges; i++) {
		const struct byte_range *r = &resp->ranges[i];

		if (__builtin_add_overflow(total, static_part_header(resp, file, i, buf), &total) ||
		    __builtin_add_overflow(total, r->last - r->first + 1, &total))
			return false;
	}
	return !__builtin_add_overflow(total, static_multipart_trailer(resp, buf),
	                               &resp->content_length);
}

/* A sidecar's tag is its own (its size and mtime) with its coding added
 * inside the quotes, "\"5f3a-1c2-br\"": files deployed with one mtime (a
 * build's SOURCE_DATE_EPOCH) and the same size must still not give the
 * identity and the compressed bytes one strong tag (RFC 9110 8.8.3). Left
 * as it is if it would not fit (today's tags are under 56 bytes of ETAG_MAX's 64). */
static void etag_add_coding(char *etag, const char *coding)
{
	size_t n = strlen(etag), c = strlen(coding);

	if (n < 2 || n + 1 + c >= ETAG_MAX)
		return;
	etag[n - 1] = '-';
	memcpy(etag + n, coding, c);
	etag[n + c] = '"';
	etag[n + c + 1] = '\0';
}

/* What each status carries:
 *   200/206  content_type, content_length of the body (framing included).
 *   304      no content_type (RFC 9110 15.4.5); content_length is the size
 *            the 200 would have had — the only value RFC 9110 8.6 lets a
 *            304 carry, so sending or omitting Content-Length are both right.
 *   412/416  content_length 0 and no body: the server sends
 *            "Content-Length: 0" rather than an error page; these answer
 *            programs (caches, download resumers), not people.
 * etag and last_modified are filled for every status; send them with
 * 200/206/304. content_encoding (a sidecar's) goes with the bytes: 200 and
 * 206, not 304 (representation metadata, 15.4.5) nor 412/416 (no body);
 * vary goes with every status, as the choice of file did. */
void static_file_respond(const struct static_request *req, const struct static_file *file,
                         uint64_t boundary_seed, struct static_response *resp)
{
	time_t mtime = (time_t)file->mtime_sec;
	enum range_result rr = RANGE_NONE;
	struct byte_range ranges[STATIC_MAX_RANGES];
	size_t n = 0;

	memset(resp, 0, sizeof(*resp));
	if (file->etag) /* resp is zeroed: the copy ends in a NUL */
		memcpy(resp->etag, file->etag, strnlen(file->etag, sizeof(resp->etag) - 1));
	else
		etag_format(resp->etag, sizeof(resp->etag), file->ino, file->size, file->mtime_sec,
		            file->mtime_nsec, file->recent);
	if (file->content_encoding)
		etag_add_coding(resp->etag, file->content_encoding);
	if (file->last_modified)
		memcpy(resp->last_modified, file->last_modified, HTTPDATE_LEN + 1);
	else
		httpdate_format(mtime, resp->last_modified);
	resp->vary = file->vary;

	switch (cond_evaluate(&req->cond, resp->etag, mtime)) {
	case COND_PRECONDITION_FAILED:
		resp->status = 412;
		return;
	case COND_NOT_MODIFIED:
		resp->status = 304;
		resp->content_length = file->size;
		return;
	case COND_PROCEED:
		break;
	}

	/* HEAD honours Range too, like nginx and Apache: RFC 9110 14.2 defines
	 * ranges for GET only, but 9.3.2 asks HEAD to answer with GET's
	 * headers, and a client probing with HEAD wants to see the 206. */
	if (req->range && (!req->if_range || cond_if_range_matches(req->if_range, req->if_range_len,
	                                                           resp->etag, mtime)))
		rr = range_parse(req->range, req->range_len, file->size, ranges, STATIC_MAX_RANGES,
		                 &n);

	switch (rr) {
	case RANGE_UNSATISFIABLE:
		resp->status = 416;
		snprintf(resp->content_range, sizeof(resp->content_range), "bytes */%" PRIu64,
		         file->size);
		return;
	case RANGE_OK:
		resp->status = 206;
		resp->nranges = n;
		memcpy(resp->ranges, ranges, n * sizeof(ranges[0]));
		resp->send_body = !req->head;
		resp->content_encoding = file->content_encoding;
		if (n == 1) {
			const struct byte_range *r = &resp->ranges[0];

			resp->content_type = file->content_type;
			resp->content_length = r->last - r->first + 1;
			snprintf(resp->content_range, sizeof(resp->content_range),
			         "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, r->first, r->last,
			         file->size);
		} else if (!respond_multipart(resp, file, boundary_seed)) {
			/* Answered whole, below, as if there were no Range. */
			memset(resp->ranges, 0, sizeof(resp->ranges));
			resp->nranges = 0;
			resp->multipart_type[0] = '\0';
			resp->boundary[0] = '\0';
			break;
		}
		return;
	case RANGE_NONE:
		break;
	}
	resp->status = 200;
	resp->content_type = file->content_type;
	resp->content_encoding = file->content_encoding;
	resp->content_length = file->size;
	resp->send_body = !req->head;
}

const struct resp_page *resp_extras_page(const struct resp_extras *x, int status)
{
	for (size_t i = 0; x && i < x->npages; i++)
		if (x->pages[i].status == status)
			return &x->pages[i];
	return NULL;
}
