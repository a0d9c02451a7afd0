/* libFuzzer target: bytes from a client, through the HTTP/1.1 request
 * parser, to the static-file decision, as server/http/h1_conn.c chains them.
 *
 * Input: 4 control bytes, then the byte stream of the connection.
 *   byte 0, bits 0-1  limits: default, tight, loose, default
 *           bits 2-4  size of the fake file (5 GiB and friends, see sizes[])
 *           bits 5-6  Content-Type: from mime_lookup, none, one too long for
 *                     a multipart part head (dropped there), a long one that fits
 *           bit  7    path buffer: PATH_MAX, or a small one drawn from the seed
 *   bytes 1-3         seed for the feed splits, room sizes and the boundary
 * The stream is fed in pieces of random size, each piece in its own heap
 * copy that is freed right after the feed, so a parser that kept a pointer
 * into a receive buffer is caught by ASan. Pipelined requests are parsed one
 * after another while the connection stays keep-alive.
 *
 * Checked for every complete request: the values live in the parser's arena
 * and carry no CR, LF or NUL; the limits hold; path_from_target's result has
 * no "..", "." or empty segment and no leading '/'; and the static-file
 * decision over the fake file obeys fz_check_static_response, the file
 * served in the first coding Accept-Encoding's order gives (as if it had
 * every sidecar), whose q-values order it. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_check.h"
#include "proto/accept_enc.h"
#include "proto/h1_parser.h"
#include "proto/mime.h"
#include "proto/path.h"
#include "proto/static_file.h"

#define MTIME 1580608922 /* 2020-02-02 02:02:02 UTC, as the integration fixtures */
#define MTIME_NSEC 123
#define INO 0x2a
#define MAX_REQUESTS 32

static const uint64_t sizes[8] = {
    UINT64_C(5) << 30, 0, 1, 1000, 4096, UINT64_C(5) << 30, UINT64_MAX, UINT64_C(1) << 40,
};

static const struct h1_limits limits[4] = {
    {8192, 100, 4096},    /* the defaults */
    {1024, 10, 64},       /* the smallest --max-header-size, --max-headers, --max-uri */
    {65536, 1000, 16384}, /* the largest */
    {8192, 100, 4096},
};

/* 130 bytes: a part head with it would pass STATIC_PART_HEADER_MAX. */
static const char long_type[] =
    "application/vnd.example.a-very-long-vendor-type-name-that-goes-on-and-on"
    "+json; charset=utf-8; profile=https://example.com/x/y/z";
static const char mid_type[] = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

static struct mime_table *mime;
/* FUZZ_TRACE=1 in the environment: one line per request on stderr, to see
 * what an input does when reproducing it. */
static bool trace;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	trace = getenv("FUZZ_TRACE") != NULL;
	if (mime_table_load(&mime, NULL, 0) < 0)
		abort();
	return 0;
}

static void check_str(const struct h1_parser *p, const struct h1_str *s, const char *what)
{
	if (!s->ptr)
		return;
	FZ_ASSERT(s->ptr >= p->arena && s->ptr + s->len <= p->arena + p->arena_used,
	          "%s outside the arena", what);
	for (size_t i = 0; i < s->len; i++)
		FZ_ASSERT(s->ptr[i] != '\r' && s->ptr[i] != '\n' && s->ptr[i] != '\0',
		          "%s holds byte 0x%02x", what, (unsigned char)s->ptr[i]);
}

static void check_request(const struct h1_parser *p)
{
	const struct h1_request *r = &p->req;

	FZ_ASSERT(p->error_status == 0, "DONE with error %d", p->error_status);
	FZ_ASSERT(r->version_major == 1 && r->version_minor <= 1, "HTTP/%u.%u", r->version_major,
	          r->version_minor);
	FZ_ASSERT(!r->keep_alive || !r->has_body, "keep-alive with a body");
	FZ_ASSERT(r->target.len <= p->limits.max_uri, "target of %zu bytes", r->target.len);
	FZ_ASSERT(p->header_bytes <= p->limits.max_header_bytes, "head of %zu bytes",
	          p->header_bytes);
	FZ_ASSERT(p->header_count <= p->limits.max_headers, "%zu headers", p->header_count);
	FZ_ASSERT(p->arena_used <= H1_ARENA_SIZE, "arena overrun");
	FZ_ASSERT(strnlen(r->method_name, sizeof(r->method_name)) < sizeof(r->method_name),
	          "method name not terminated");
	if (r->method == H1_GET)
		FZ_ASSERT(strcmp(r->method_name, "GET") == 0, "GET is '%s'", r->method_name);
	if (r->method == H1_HEAD)
		FZ_ASSERT(strcmp(r->method_name, "HEAD") == 0, "HEAD is '%s'", r->method_name);
	check_str(p, &r->target, "target");
	check_str(p, &r->host, "Host");
	check_str(p, &r->range, "Range");
	check_str(p, &r->if_match, "If-Match");
	check_str(p, &r->if_none_match, "If-None-Match");
	check_str(p, &r->if_modified_since, "If-Modified-Since");
	check_str(p, &r->if_unmodified_since, "If-Unmodified-Since");
	check_str(p, &r->if_range, "If-Range");
	check_str(p, &r->accept_encoding, "Accept-Encoding");
	check_str(p, &r->user_agent, "User-Agent");
	check_str(p, &r->referer, "Referer");
	check_str(p, &p->te, "Transfer-Encoding");
	for (size_t i = 0; i < r->target.len; i++)
		FZ_ASSERT((unsigned char)r->target.ptr[i] > 0x20 && r->target.ptr[i] != 0x7f,
		          "control byte or space 0x%02x in the target",
		          (unsigned char)r->target.ptr[i]);
}

/* The path rules of path.h: returns true when out is a path to serve. */
static bool check_path(const struct h1_request *r, char *out, size_t outsz, struct path_info *info)
{
	int rc = path_from_target(r->target.ptr, r->target.len, out, outsz, info);

	FZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENAMETOOLONG, "path_from_target: %d", rc);
	if (rc < 0) {
		if (trace)
			fprintf(stderr, "path: %s\n", strerror(-rc));
		FZ_ASSERT(outsz == 0 || out[0] == '\0', "junk left in out after %d", rc);
		return false;
	}
	size_t len = strnlen(out, outsz);
	FZ_ASSERT(len < outsz, "path not NUL-terminated within %zu bytes", outsz);
	if (strcmp(out, ".") == 0) {
		FZ_ASSERT(info->trailing_slash, "the root without trailing_slash");
		return true;
	}
	FZ_ASSERT(len > 0 && out[0] != '/' && out[len - 1] != '/', "path '%s'", out);
	bool dot = false;
	for (const char *seg = out; seg <= out + len;) {
		const char *end = memchr(seg, '/', (size_t)(out + len - seg));
		size_t n = end ? (size_t)(end - seg) : (size_t)(out + len - seg);

		FZ_ASSERT(n > 0, "empty segment in '%s'", out);
		FZ_ASSERT(!(n == 1 && seg[0] == '.') && !(n == 2 && seg[0] == '.' && seg[1] == '.'),
		          "dot segment in '%s'", out);
		/* RFC 8615: a leading ".well-known" is no dotfile (path.h). */
		bool well_known = seg == out && n == 11 && memcmp(seg, ".well-known", 11) == 0;
		dot |= seg[0] == '.' && !well_known;
		seg += n + 1;
	}
	FZ_ASSERT(dot == info->dotfile, "dotfile %d for '%s'", info->dotfile, out);
	return true;
}

/* What h1_conn.c does with a complete GET or HEAD, minus the file system. */
static void decide(const struct h1_request *r, uint8_t flags, uint64_t *rng)
{
	static const size_t small_out[4] = {1, 2, 8, 64};
	struct static_request sreq = {0};
	struct static_response resp;
	struct static_file file = {
	    .size = sizes[(flags >> 2) & 7],
	    .ino = INO,
	    .mtime_sec = MTIME,
	    .mtime_nsec = MTIME_NSEC,
	};
	struct path_info info;
	size_t outsz = (flags & 0x80) ? small_out[fz_rand(rng) & 3] : PATH_MAX;
	char *out = malloc(outsz); /* exactly outsz: ASan sees any write past it */

	if (!out)
		abort();
	if (!r->target.ptr || !check_path(r, out, outsz, &info)) {
		free(out);
		return;
	}
	switch ((flags >> 5) & 3) {
	case 0:
		file.content_type = mime_lookup(mime, out);
		break;
	case 1:
		file.content_type = NULL;
		break;
	case 2:
		file.content_type = long_type;
		break;
	default:
		file.content_type = mid_type;
		break;
	}
	/* --precompressed: the client's Accept-Encoding picks the coding the
	 * fake file is served in, as static_target does with its sidecars. */
	struct accept_enc ae;
	enum coding order[CODING_N];
	accept_enc_parse(r->accept_encoding.ptr, r->accept_encoding.len, &ae);
	size_t n = accept_enc_order(&ae, order);
	FZ_ASSERT(n <= CODING_N, "%zu codings", n);
	for (size_t i = 0; i < n; i++) {
		FZ_ASSERT(ae.q[order[i]] > 0 && ae.q[order[i]] <= 1000, "q %u", ae.q[order[i]]);
		FZ_ASSERT(!ae.identity_named || ae.q[order[i]] >= ae.identity_q,
		          "a coding below identity");
		FZ_ASSERT(i == 0 || ae.q[order[i - 1]] > ae.q[order[i]] ||
		              (ae.q[order[i - 1]] == ae.q[order[i]] && order[i - 1] < order[i]),
		          "order %d before %d", order[i - 1], order[i]);
	}
	if (!r->accept_encoding.ptr)
		FZ_ASSERT(n == 0, "a coding without Accept-Encoding");
	file.content_encoding = n ? accept_enc_name(order[0]) : NULL;
	file.vary = r->accept_encoding.ptr != NULL;
	h1_static_request(r, &sreq);
	static_file_respond(&sreq, &file, fz_rand(rng), &resp);
	if (trace)
		fprintf(stderr, "%s %s -> %d, %zu ranges, %llu bytes\n", r->method_name, out,
		        resp.status, resp.nranges, (unsigned long long)resp.content_length);
	fz_check_static_response(&sreq, &file, &resp, rng);
	free(out);
}

/* A piece size: single bytes, small pieces or all that is left. */
static size_t piece_size(uint64_t *rng, size_t left)
{
	uint64_t x = fz_rand(rng);
	size_t n;

	switch (x & 3) {
	case 0:
		n = 1;
		break;
	case 1:
		n = 1 + (size_t)((x >> 8) % 16);
		break;
	case 2:
		n = 1 + (size_t)((x >> 8) % 512);
		break;
	default:
		n = left;
		break;
	}
	return n < left ? n : left;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct h1_parser parser; /* 16 KiB of arena: not on the stack */
	struct h1_parser *p = &parser;
	uint8_t flags;
	uint64_t rng;
	size_t off = 4;
	unsigned nreq = 0;

	if (size < 4)
		return 0;
	flags = data[0];
	rng = (uint64_t)data[1] | (uint64_t)data[2] << 8 | (uint64_t)data[3] << 16;
	h1_parser_init(p, &limits[flags & 3]);

	while (off < size && nreq < MAX_REQUESTS) {
		size_t n = piece_size(&rng, size - off), consumed = 0;
		char *piece = malloc(n);

		if (!piece)
			abort();
		memcpy(piece, data + off, n);
		enum h1_parse_result res = h1_parser_feed(p, piece, n, &consumed);
		free(piece);

		if (res == H1_PARSE_ERROR) {
			if (trace)
				fprintf(stderr, "error %d: %s\n", p->error_status, p->error_reason);
			FZ_ASSERT(p->error_status == 400 || p->error_status == 414 ||
			              p->error_status == 431 || p->error_status == 501 ||
			              p->error_status == 505,
			          "error status %d", p->error_status);
			FZ_ASSERT(p->error_reason != NULL, "error without a reason");
			/* An error is final until the reset. */
			FZ_ASSERT(h1_parser_feed(p, "x", 1, &consumed) == H1_PARSE_ERROR &&
			              consumed == 0,
			          "error not sticky");
			break;
		}
		if (res == H1_PARSE_AGAIN) {
			FZ_ASSERT(consumed == n, "AGAIN consumed %zu of %zu", consumed, n);
			off += n;
			continue;
		}
		FZ_ASSERT(res == H1_PARSE_DONE && consumed <= n, "result %d consumed %zu of %zu",
		          (int)res, consumed, n);
		off += consumed;
		nreq++;
		check_request(p);
		decide(&p->req, flags, &rng);
		if (!p->req.keep_alive)
			break;
		h1_parser_reset(p);
	}
	return 0;
}
