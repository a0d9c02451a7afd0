/* The client's view of the bytes sent (see fuzz_h2_wire.h). */
#include "fuzz/fuzz_h2_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_check.h"

uint8_t content[BIG_SIZE];

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 131 + 7 + (off >> 8) * 29 + (off >> 16) * 61);
}

void wire_init(void)
{
	for (size_t i = 0; i < BIG_SIZE; i++)
		content[i] = file_byte(i);
}

static struct resp *resp_find(struct wire *w, int32_t id)
{
	for (size_t i = w->nresps; i-- > 0;)
		if (w->resps[i].id == id) {
			w->cur = i;
			return &w->resps[i];
		}
	return NULL;
}

static struct resp *resp_add(struct wire *w, int32_t id)
{
	if (w->nresps == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->resps = realloc(w->resps, w->cap * sizeof(*w->resps));
		if (!w->resps)
			abort();
	}
	w->cur = w->nresps++;
	w->resps[w->cur] = (struct resp){.id = id};
	return &w->resps[w->cur];
}

static bool nv_is(const nghttp2_nv *nv, const char *name)
{
	return nv->namelen == strlen(name) && memcmp(nv->name, name, nv->namelen) == 0;
}

static void resp_field(struct resp *r, const nghttp2_nv *nv)
{
	char v[96];
	size_t n = nv->valuelen < sizeof(v) ? nv->valuelen : sizeof(v) - 1;

	memcpy(v, nv->value, n);
	v[n] = '\0';

	if (nv_is(nv, ":status")) {
		FZ_ASSERT(r->status == 0, "stream %d: two :status", r->id);
		r->status = atoi(v);
	} else if (nv_is(nv, "content-length")) {
		r->have_len = true;
		r->clen = strtoull(v, NULL, 10);
	} else if (nv_is(nv, "content-range") && strncmp(v, "bytes ", 6) == 0 && v[6] >= '0' &&
	           v[6] <= '9') {
		r->have_range = true;
		r->base = strtoull(v + 6, NULL, 10);
	} else if (nv_is(nv, "content-type")) {
		r->multipart = strncmp(v, "multipart/byteranges", 20) == 0;
	}
}

static void hpack_inflate(struct wire *w, const uint8_t *in, size_t len, bool final)
{
	static const uint8_t none[1];
	bool done = false;

	if (!in)
		in = none;
	for (;;) {
		nghttp2_nv nv;
		int fl = 0;
		ssize_t rv = nghttp2_hd_inflate_hd2(w->inf, &nv, &fl, in, len, final);

		FZ_ASSERT(rv >= 0, "stream %d: HPACK: %s", w->id, nghttp2_strerror((int)rv));
		in += rv;
		len -= (size_t)rv;
		if (fl & NGHTTP2_HD_INFLATE_EMIT)
			resp_field(&w->resps[w->cur], &nv);
		if (fl & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(w->inf);
			done = true;
			break;
		}
		if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && len == 0)
			break;
	}
	FZ_ASSERT(!final || done, "stream %d: header block ends mid-field", w->id);
}

static void resp_end(struct resp *r, bool on_data)
{
	r->ended = true;
	if (on_data && r->have_len)
		FZ_ASSERT(r->got == r->clen,
		          "stream %d (%d) ends after %llu body bytes, announced %llu", r->id,
		          r->status, (unsigned long long)r->got, (unsigned long long)r->clen);
	if (on_data && r->check && r->multipart)
		FZ_ASSERT(r->part_left == 0 && r->part_len >= 8 &&
		              memcmp(r->part, "\r\n--", 4) == 0 &&
		              memcmp(r->part + r->part_len - 4, "--\r\n", 4) == 0,
		          "stream %d: multipart body ends with %zu bytes of a range to go and "
		          "\"%.*s\"",
		          r->id, (size_t)r->part_left, (int)r->part_len, r->part);
}

static void check_file_bytes(const struct resp *r, uint64_t off, const uint8_t *p, size_t n)
{
	FZ_ASSERT(off + n <= BIG_SIZE, "stream %d: body past any file", r->id);
	FZ_ASSERT(memcmp(p, content + off, n) == 0,
	          "stream %d (%d): %zu body bytes after %llu are not the file's at %llu", r->id,
	          r->status, n, (unsigned long long)r->got, (unsigned long long)off);
}

/* A multipart/byteranges body: each part head names its range, whose bytes
 * follow; the closing delimiter is what is left at the end. */
static void multipart_feed(struct resp *r, const uint8_t *p, size_t n)
{
	static const char cr[] = "\r\nContent-Range: bytes ";
	unsigned long long a, b, size;
	const char *at;

	while (n > 0) {
		if (r->part_left > 0) {
			size_t k = r->part_left < n ? (size_t)r->part_left : n;
			check_file_bytes(r, r->part_off, p, k);
			r->part_off += k;
			r->part_left -= k;
			p += k;
			n -= k;
			continue;
		}
		FZ_ASSERT(r->part_len < sizeof(r->part) - 1, "stream %d: a part head of %zu bytes",
		          r->id, r->part_len);
		r->part[r->part_len++] = (char)*p++;
		n--;
		if (r->part_len < 4 || memcmp(r->part + r->part_len - 4, "\r\n\r\n", 4) != 0)
			continue;
		r->part[r->part_len] = '\0';
		at = strstr(r->part, cr);
		FZ_ASSERT(at && sscanf(at + strlen(cr), "%llu-%llu/%llu", &a, &b, &size) == 3 &&
		              a <= b && b < size,
		          "stream %d: part head \"%s\"", r->id, r->part);
		r->part_off = a;
		r->part_left = b - a + 1;
		r->part_len = 0;
	}
}

static void frame_begin(struct wire *w)
{
	struct resp *r;

	w->left = (uint32_t)w->hd[0] << 16 | (uint32_t)w->hd[1] << 8 | w->hd[2];
	w->type = w->hd[3];
	w->flags = w->hd[4];
	w->id = (int32_t)(((uint32_t)w->hd[5] << 24 | (uint32_t)w->hd[6] << 16 |
	                   (uint32_t)w->hd[7] << 8 | w->hd[8]) &
	                  0x7fffffff);
	FZ_ASSERT(w->type != NGHTTP2_PUSH_PROMISE, "PUSH_PROMISE with push disabled");
	FZ_ASSERT(!w->in_block || w->type == NGHTTP2_CONTINUATION,
	          "frame type %u inside the header block of stream %d", w->type, w->id);
	switch (w->type) {
	case NGHTTP2_DATA:
		FZ_ASSERT(w->hd_batch == w->batch, "DATA header of stream %d split across batches",
		          w->id);
		FZ_ASSERT(w->left <= MAX_PAYLOAD, "DATA of %u bytes", w->left);
		FZ_ASSERT(!(w->flags & NGHTTP2_FLAG_PADDED), "padded DATA");
		r = resp_find(w, w->id);
		FZ_ASSERT(r && r->headers && !r->ended, "DATA on stream %d %s", w->id,
		          !r            ? "never answered"
		          : !r->headers ? "before HEADERS"
		                        : "after END_STREAM");
		FZ_ASSERT(!r->have_len || r->got + w->left <= r->clen,
		          "stream %d: %llu body bytes after %llu, announced %llu", w->id,
		          (unsigned long long)w->left, (unsigned long long)r->got,
		          (unsigned long long)r->clen);
		break;
	case NGHTTP2_HEADERS:
		FZ_ASSERT(w->id & 1, "HEADERS on stream %d", w->id);
		FZ_ASSERT(!(w->flags & (NGHTTP2_FLAG_PADDED | NGHTTP2_FLAG_PRIORITY)),
		          "HEADERS flags 0x%x", w->flags);
		FZ_ASSERT(!resp_find(w, w->id), "second HEADERS on stream %d", w->id);
		resp_add(w, w->id);
		w->in_block = true;
		w->block_end_stream = w->flags & NGHTTP2_FLAG_END_STREAM;
		break;
	case NGHTTP2_CONTINUATION:
		FZ_ASSERT(w->in_block && w->id == w->resps[w->cur].id,
		          "CONTINUATION on stream %d out of a header block", w->id);
		break;
	default:
		break;
	}
}

static void frame_payload(struct wire *w, const uint8_t *p, size_t n)
{
	if (w->type == NGHTTP2_DATA) {
		struct resp *r = &w->resps[w->cur];
		if (r->check && r->multipart)
			multipart_feed(r, p, n);
		else if (r->check)
			check_file_bytes(r, r->base + r->got, p, n);
		r->got += n;
	} else if (w->type == NGHTTP2_HEADERS || w->type == NGHTTP2_CONTINUATION) {
		hpack_inflate(w, p, n, false);
	}
}

static void frame_end(struct wire *w)
{
	struct resp *r;

	w->hd_have = 0;
	if (w->type == NGHTTP2_DATA && (w->flags & NGHTTP2_FLAG_END_STREAM)) {
		resp_end(&w->resps[w->cur], true);
	} else if ((w->type == NGHTTP2_HEADERS || w->type == NGHTTP2_CONTINUATION) &&
	           (w->flags & NGHTTP2_FLAG_END_HEADERS)) {
		r = &w->resps[w->cur];
		hpack_inflate(w, NULL, 0, true);
		w->in_block = false;
		FZ_ASSERT(r->status >= 200 && r->status <= 599, "stream %d: :status %d", r->id,
		          r->status);
		r->headers = true;
		r->check =
		    r->status == 200 || (r->status == 206 && (r->multipart || r->have_range));
		if (r->status == 200)
			r->base = 0;
		if (w->block_end_stream)
			resp_end(r, false);
	}
}

void wire_feed(struct wire *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		if (w->hd_have < FRAME_HEADER) {
			size_t k = FRAME_HEADER - w->hd_have < n ? FRAME_HEADER - w->hd_have : n;
			if (w->hd_have == 0)
				w->hd_batch = w->batch;
			memcpy(w->hd + w->hd_have, p, k);
			w->hd_have += k;
			p += k;
			n -= k;
			if (w->hd_have < FRAME_HEADER)
				break;
			frame_begin(w);
			if (w->left == 0)
				frame_end(w);
			continue;
		}
		size_t k = w->left < n ? w->left : n;
		frame_payload(w, p, k);
		p += k;
		n -= k;
		w->left -= (uint32_t)k;
		if (w->left == 0)
			frame_end(w);
	}
}
