/* libFuzzer target: the server's HTTP/2 session (server/h2_session.c:
 * nghttp2 with ktlsd's options and callbacks, request to response through
 * server/resolve.c and proto/static_file.c, batches with holes for file
 * bytes), linked as it is and driven as server/h2_conn.c drives it, with
 * the ring's operations done at once: a batch is sent when it is complete,
 * a stream's readv is a preadv on its file, a splice is a pread.
 *
 * The root it serves is made at start in a temporary folder: index.html,
 * a.txt, big.bin (1 MiB and a bit), empty.txt, sub/index.html, nodir/ (no
 * index), .hidden, link.txt (-> a.txt), out (-> /etc/passwd, leaves the
 * root) and a FIFO. Every file holds the same bytes, file_byte(offset), so a body can be
 * checked without knowing which file it came from.
 *
 * Input: byte 0 is flags, byte 1 a seed for splitting the rest into pieces;
 * the rest is what the client sends after the connection preface (which is
 * prepended), usually a SETTINGS frame first.
 *   flags bit 0   --h2-buffer 32768 (the smallest) instead of 262144
 *         bit 1   file reads come short from offset 65536 on (big.bin shrank
 *                 under the response): the batch is cut, or the splice fails
 *         bit 2   a graceful stop (h2_shutdown's GOAWAY) after the first piece
 *         bit 3   a piece of input arrives between a readv's post and its
 *                 completion (h2_drive reads while reads are in flight)
 *         bit 4   --h2-sendfile: a file DATA frame's header ends its batch and
 *                 its payload is spliced
 *         bit 5   --dotfiles on
 *         bit 6   the smallest limits: --h2-max-streams 1,
 *                 --h2-max-header-list 1024, --h2-reset-rate 1,
 *                 --h2-max-continuations 1
 *         bit 7   --h2-buffer 4194304 (the largest; bit 0 wins): a stream
 *                 can fill its MAX_IOV holes in one batch
 *
 * Checked, as the client reads the batches: they chain into whole frames (a
 * non-DATA frame may go on in the next batch, since send_cb writes what
 * fits; a DATA frame never does, except a spliced payload; a cut batch ends
 * on a frame boundary); no PUSH_PROMISE; the header blocks are contiguous
 * and HPACK-decode; a response has one HEADERS, DATA only after it and none
 * after END_STREAM, and ends (on DATA) with the body its content-length
 * announced; the body of a 200 is the file, that of a 206 the file's bytes
 * of its range, or of each part's range between multipart heads. Holes lie
 * in the batch and add up to the readv; no file descriptor outlives
 * h2_session_free; ASan, LSan and UBSan watch the rest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "fuzz/fuzz_check.h"
#include "proto/mime.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/h2_session.h"
#include "server/log.h"
#include "server/worker.h"

/* 1 MiB and a bit: its 65th DATA frame finds MAX_IOV holes in a 4 MiB batch. */
#define BIG_SIZE ((1u << 20) + 40000)
#define SHRINK_AT 65536 /* flags bit 1: reads end here */
/* Per input, so that a client asking for big.bin over and over stays fast;
 * a stalled client stops us sooner. */
#define MAX_BATCHES 512
#define MAX_BYTES (64u << 20)
#define MAX_PAYLOAD 16384 /* nghttp2's DATA payload, whatever the peer allows */
#define MTIME 1580608922  /* 2020-02-02 02:02:02 UTC, as the integration fixtures */

/* ---- the served root, made once ---- */

static const struct {
	const char *rel;
	size_t size;
} fixtures[] = {
    {"index.html", 57}, {"a.txt", 1000},        {"big.bin", BIG_SIZE},
    {"empty.txt", 0},   {"sub/index.html", 15}, {".hidden", 20},
};
static const char *const links[][2] = {{"link.txt", "a.txt"}, {"out", "/etc/passwd"}};
static const char *const dirs[] = {"sub", "nodir"};

#define ROOT_PREFIX "ktlsd-fuzz-h2."

static char root[128];            /* TMPDIR/ktlsd-fuzz-h2.PID */
static uint8_t content[BIG_SIZE]; /* the bytes of every file */
static struct config cfgs[4];     /* by flags bits 5 and 6 */
static struct server srvs[4];
static struct worker worker;
static struct conn conn;
/* FUZZ_TRACE=1 in the environment: a line per response and per input on
 * stderr, to see what an input does when reproducing it. */
static bool trace;

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)(off * 131 + 7 + (off >> 8) * 29 + (off >> 16) * 61);
}

static void path_in(char *out, size_t n, const char *dir, const char *rel)
{
	if ((size_t)snprintf(out, n, "%s/%s", dir, rel) >= n)
		abort();
}

/* Removes what make_root made in dir (or a part of it). */
static void remove_tree(const char *dir)
{
	char p[256];

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		path_in(p, sizeof(p), dir, fixtures[i].rel);
		unlink(p);
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		path_in(p, sizeof(p), dir, links[i][0]);
		unlink(p);
	}
	path_in(p, sizeof(p), dir, "fifo");
	unlink(p);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		path_in(p, sizeof(p), dir, dirs[i]);
		rmdir(p);
	}
	rmdir(dir);
}

static void remove_root(void)
{
	remove_tree(root);
}

/* A crash leaves its root behind (libFuzzer exits without atexit): the next
 * run removes those of processes that are gone. */
static void remove_stale_roots(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	char p[256];

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, ROOT_PREFIX, strlen(ROOT_PREFIX)) != 0)
			continue;
		long pid = strtol(e->d_name + strlen(ROOT_PREFIX), &end, 10);
		if (*end || pid <= 0)
			continue;
		/* Ours (a reused pid), or of a process that is gone. */
		if (pid != getpid() && !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		path_in(p, sizeof(p), tmp, e->d_name);
		remove_tree(p);
	}
	closedir(d);
}

static void make_root(void)
{
	const struct timespec times[2] = {{MTIME, 123}, {MTIME, 123}};
	const char *tmp = getenv("TMPDIR");
	char p[256];

	if (!tmp || strlen(tmp) > 64)
		tmp = "/tmp";
	remove_stale_roots(tmp);
	snprintf(root, sizeof(root), "%s/" ROOT_PREFIX "%d", tmp, (int)getpid());
	if (mkdir(root, 0755) < 0)
		abort();
	atexit(remove_root);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		path_in(p, sizeof(p), root, dirs[i]);
		if (mkdir(p, 0755) < 0)
			abort();
	}
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		path_in(p, sizeof(p), root, fixtures[i].rel);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, content, fixtures[i].size) != (ssize_t)fixtures[i].size ||
		    futimens(fd, times) < 0 || close(fd) < 0)
			abort();
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		path_in(p, sizeof(p), root, links[i][0]);
		if (symlink(links[i][1], p) < 0)
			abort();
	}
	path_in(p, sizeof(p), root, "fifo");
	if (mkfifo(p, 0644) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mime_table *mime;
	int root_fd;

	trace = getenv("FUZZ_TRACE") != NULL;
	for (size_t i = 0; i < BIG_SIZE; i++)
		content[i] = file_byte(i);
	make_root();
	/* Warnings (a file that shrank) are formatted, then dropped. */
	if (log_open("/dev/null", LOG_DEBUG) < 0 || mime_table_load(&mime, NULL) < 0)
		abort();
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		abort();
	for (int i = 0; i < 4; i++) {
		config_defaults(&cfgs[i]);
		cfgs[i].root = root;
		cfgs[i].dotfiles = i & 1;
		if (i & 2) {
			cfgs[i].h2_max_streams = 1;
			cfgs[i].h2_max_header_list = 1024;
			cfgs[i].h2_reset_rate = 1;
			cfgs[i].h2_max_continuations = 1;
		}
		srvs[i].cfg = &cfgs[i];
		srvs[i].root_fd = root_fd;
		srvs[i].mime = mime;
	}
	worker.alog.fd = -1; /* no access log: log_stream never asks TLS */
	return 0;
}

/* ---- the client's view of the bytes sent ---- */

struct resp {
	int32_t id;
	int status;
	bool headers, ended, multipart, have_len, have_range, check;
	uint64_t clen, base, got;
	/* multipart/byteranges: the part head being read, then its range */
	char part[STATIC_PART_HEADER_MAX];
	size_t part_len;
	uint64_t part_off, part_left;
};

struct wire {
	uint8_t hd[FRAME_HEADER];
	size_t hd_have;
	unsigned hd_batch; /* the batch the frame header began in */
	unsigned batch;
	uint32_t left; /* payload of the current frame still to come */
	uint8_t type, flags;
	int32_t id;
	size_t cur;    /* resps index of the current DATA frame or header block */
	bool in_block; /* a header block waits for its CONTINUATION */
	bool block_end_stream;
	nghttp2_hd_inflater *inf;
	struct resp *resps;
	size_t nresps, cap;
};

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

static void wire_feed(struct wire *w, const uint8_t *p, size_t n)
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

/* ---- h2_conn.c's part, with the ring's operations done at once ---- */

struct run {
	struct h2_session *hs;
	struct h2_stream *posted; /* readvs in flight, chained by next_reading */
	bool shrink;
	bool closed; /* conn_abort or conn_close_graceful */
	unsigned batches;
	size_t bytes;
	struct wire wire;
};

static bool spent(const struct run *r)
{
	return r->batches >= MAX_BATCHES || r->bytes >= MAX_BYTES;
}

/* The batch is complete: it goes out, up to the cut if a read came short. */
static void send_batch(struct run *r)
{
	struct h2_session *hs = r->hs;
	struct wire *w = &r->wire;
	size_t end = hs->cut ? hs->cut_at : hs->out_len;

	FZ_ASSERT(hs->out_len <= hs->out_cap, "batch of %zu in %zu", hs->out_len, hs->out_cap);
	FZ_ASSERT(end <= hs->out_len, "cut at %zu past the batch of %zu", end, hs->out_len);
	w->batch++;
	wire_feed(w, (const uint8_t *)hs->out, end);
	r->batches++;
	r->bytes += end;
	if (hs->cut) {
		FZ_ASSERT(w->hd_have == 0, "batch cut at %zu inside a frame", end);
		r->closed = true; /* sent, then conn_abort */
		return;
	}
	if (w->hd_have == FRAME_HEADER && w->type == NGHTTP2_DATA)
		FZ_ASSERT(hs->sf && hs->sf->id == w->id && w->left == hs->sf_len,
		          "batch ends inside a DATA frame of stream %d (%u bytes to go)", w->id,
		          w->left);
	else
		FZ_ASSERT(!hs->sf, "spliced frame of stream %d not at the end of its batch",
		          hs->sf->id);
}

/* post_reads, without the ring. */
static void post_reads(struct run *r)
{
	struct h2_session *hs = r->hs;

	FZ_ASSERT(!r->posted, "reads posted twice");
	for (struct h2_stream *s = hs->reading; s; s = s->next_reading) {
		s->read_posted = true;
		hs->reads_pending++;
	}
	r->posted = hs->reading;
	hs->reading = NULL;
}

/* The readv of s, as the ring would do it. */
static int stream_readv(struct run *r, struct h2_stream *s)
{
	struct h2_session *hs = r->hs;
	struct iovec iov[MAX_IOV];
	size_t total = 0, room = SIZE_MAX;
	int n = 0;

	FZ_ASSERT(s->file_fd >= 0 && s->niov > 0 && s->niov <= MAX_IOV,
	          "stream %d: readv of %d holes on fd %d", s->id, s->niov, s->file_fd);
	if (r->shrink)
		room = s->read_off < SHRINK_AT ? SHRINK_AT - s->read_off : 0;
	for (int i = 0; i < s->niov; i++) {
		const char *b = s->iov[i].iov_base;
		FZ_ASSERT(b >= hs->out + FRAME_HEADER &&
		              b + s->iov[i].iov_len <= hs->out + hs->out_len,
		          "stream %d: hole %d outside the batch", s->id, i);
		total += s->iov[i].iov_len;
		if (room > 0) {
			iov[n] = s->iov[i];
			if (iov[n].iov_len > room)
				iov[n].iov_len = room;
			room -= iov[n++].iov_len;
		}
	}
	FZ_ASSERT(total == s->read_len, "stream %d: holes of %zu for a read of %zu", s->id, total,
	          s->read_len);
	ssize_t got = n ? preadv(s->file_fd, iov, n, (off_t)s->read_off) : 0;
	return got < 0 ? -errno : (int)got;
}

/* The completions of the posted reads (h2_read_complete). */
static void complete_reads(struct run *r)
{
	struct h2_stream *s = r->posted, *next;

	r->posted = NULL;
	for (; s; s = next) {
		next = s->next_reading;
		h2_session_read_done(s, stream_readv(r, s));
	}
	FZ_ASSERT(r->hs->reads_pending == 0, "%u reads still pending", r->hs->reads_pending);
}

/* The payload of hs->sf, spliced from its file in pipe-sized pieces
 * (h2_splice_done); a piece of 0 bytes aborts the connection. */
static void splice_frame(struct run *r)
{
	static uint8_t pipe_buf[65536];
	struct h2_session *hs = r->hs;

	while (hs->sf_len > 0) {
		size_t n = hs->sf_len < sizeof(pipe_buf) ? hs->sf_len : sizeof(pipe_buf);
		if (r->shrink && hs->sf_off + n > SHRINK_AT)
			n = hs->sf_off < SHRINK_AT ? SHRINK_AT - hs->sf_off : 0;
		ssize_t got = n ? pread(hs->sf->file_fd, pipe_buf, n, (off_t)hs->sf_off) : 0;
		FZ_ASSERT(got >= 0, "splice from stream %d's file: %s", hs->sf->id,
		          strerror(errno));
		if (got == 0) {
			r->closed = true; /* "file shrank under an HTTP/2 response" */
			return;
		}
		wire_feed(&r->wire, pipe_buf, (size_t)got);
		r->bytes += (size_t)got;
		hs->sf_off += (uint64_t)got;
		hs->sf_len -= (size_t)got;
	}
	struct h2_stream *s = hs->sf;
	hs->sf = NULL;
	h2_stream_release(s);
}

/* output_sendfile */
static void drive_sendfile(struct run *r)
{
	struct h2_session *hs = r->hs;

	while (!r->closed && !spent(r)) {
		if (h2_session_fill(hs) != 0) {
			r->closed = true; /* "HTTP/2 send failed" */
			return;
		}
		FZ_ASSERT(!hs->reading, "holes with --h2-sendfile");
		if (hs->out_len == 0 && !hs->sf)
			return;
		send_batch(r);
		hs->out_len = 0;
		if (hs->sf)
			splice_frame(r);
	}
}

/* h2_drive's output side: fill, read, send, until nghttp2 has nothing more
 * or a read is pending. */
static void drive(struct run *r)
{
	struct h2_session *hs = r->hs;

	if (hs->sendfile)
		drive_sendfile(r);
	while (!hs->sendfile && !r->closed && !spent(r)) {
		if (hs->reads_pending == 0 && !hs->cut) {
			if (h2_session_fill(hs) != 0) {
				r->closed = true;
				return;
			}
			post_reads(r);
		}
		if (hs->reads_pending > 0 || hs->out_len == 0)
			break;
		send_batch(r);
		hs->out_len = 0;
	}
	if (!r->closed && hs->reads_pending == 0 && !nghttp2_session_want_read(hs->ng) &&
	    !nghttp2_session_want_write(hs->ng))
		r->closed = true; /* conn_close_graceful */
}

/* h2_shutdown */
static void shutdown_session(struct h2_session *hs)
{
	h2_session_goaway(hs);
}

/* Input, one heap copy per piece, so a pointer kept into a receive buffer
 * is caught. false: a protocol error (conn_abort). */
static bool take_input(struct run *r, const uint8_t *p, size_t n)
{
	uint8_t *copy = malloc(n);
	ssize_t rv;

	if (!copy)
		abort();
	memcpy(copy, p, n);
	rv = h2_session_recv(r->hs, copy, n);
	free(copy);
	if (rv < 0)
		return false;
	FZ_ASSERT((size_t)rv == n, "mem_recv took %zd of %zu", rv, n);
	return true;
}

static size_t piece_size(uint64_t *rng, size_t left)
{
	uint64_t x = fz_rand(rng);
	size_t n = (x & 1) ? left : 1 + (size_t)((x >> 8) % 64);

	return n < left ? n : left;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		abort();
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic[] = NGHTTP2_CLIENT_MAGIC;
	struct run r = {0};
	struct h2_session *hs;
	uint8_t flags;
	uint64_t rng;
	uint8_t *in;
	size_t len, pos = 0;
	int fds;

	if (size < 2)
		return 0;
	flags = data[0];
	rng = data[1];
	len = NGHTTP2_CLIENT_MAGIC_LEN + size - 2;
	in = malloc(len);
	if (!in)
		abort();
	memcpy(in, magic, NGHTTP2_CLIENT_MAGIC_LEN);
	memcpy(in + NGHTTP2_CLIENT_MAGIC_LEN, data + 2, size - 2);

	worker.srv = &srvs[(flags >> 5) & 3];
	worker.now_ms = 1000;
	worker.boundary_seed = rng;
	memset(&conn, 0, sizeof(conn));
	conn.w = &worker;
	conn.fd = -1;
	snprintf(conn.peer_text, sizeof(conn.peer_text), "fuzz");
	fds = count_fds();
	if (h2_session_new(&hs, &conn) < 0 || nghttp2_hd_inflate_new(&r.wire.inf) != 0)
		abort();
	r.hs = hs;
	r.shrink = flags & 2;
	hs->out_cap = (flags & 1) ? 32768 : (flags & 128) ? 4194304 : 262144;
	hs->out = malloc(hs->out_cap);
	if (!hs->out)
		abort();
	hs->sendfile = flags & 16;

	while (!r.closed && !spent(&r) && (pos < len || hs->reads_pending > 0)) {
		if (pos < len && (hs->reads_pending == 0 || (flags & 8))) {
			size_t n = piece_size(&rng, len - pos);
			if (!take_input(&r, in + pos, n)) {
				r.closed = true;
				break;
			}
			pos += n;
			if (flags & 4)
				shutdown_session(hs);
		}
		if (hs->reads_pending > 0)
			complete_reads(&r);
		drive(&r);
	}
	/* What is still queued goes out, as far as the windows let it. */
	for (int i = 0;
	     i < 4 * MAX_BATCHES && !r.closed && !spent(&r) && nghttp2_session_want_write(hs->ng);
	     i++) {
		unsigned before = r.batches;
		if (hs->reads_pending > 0)
			complete_reads(&r);
		drive(&r);
		if (r.batches == before && hs->reads_pending == 0)
			break; /* blocked on flow control */
	}
	/* The conn is freed only when nothing of it is in flight. */
	if (hs->reads_pending > 0)
		complete_reads(&r);
	if (trace) {
		for (size_t i = 0; i < r.wire.nresps; i++) {
			const struct resp *p = &r.wire.resps[i];
			fprintf(stderr, "stream %d: %d, %llu of %llu body bytes%s%s\n", p->id,
			        p->status, (unsigned long long)p->got, (unsigned long long)p->clen,
			        p->check ? ", checked" : "", p->ended ? ", ended" : "");
		}
		fprintf(stderr, "%u batches, %s%s\n", r.batches, hs->cut ? "cut, " : "",
		        r.closed ? "closed" : "open");
	}
	/* h2_conn_free */
	free(hs->out);
	hs->out = NULL;
	h2_session_free(hs);
	FZ_ASSERT(count_fds() == fds, "%d file descriptors before the session, %d after", fds,
	          count_fds());
	nghttp2_hd_inflate_del(r.wire.inf);
	free(r.wire.resps);
	free(in);
	return 0;
}
