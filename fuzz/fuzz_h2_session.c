/* libFuzzer target: the HTTP/2 session (proto/h2_session.c and
 * h2_stream.c: nghttp2 with ktlsd's options and callbacks, request to
 * response through proto/static_file.c and proto/resp_head.c, batches with
 * holes for file bytes), linked with nothing of server/: it gets its own
 * environment (a resolution beneath the root made here, as server/http/resolve.c
 * does it) and is driven by the session's own pump (h2_session_pump, as
 * server/http/h2_conn.c drives it, through the same functions of
 * proto/h2_session.h: the session's insides are proto/'s), with the ring's
 * operations done at once: a batch is sent when it is complete, a stream's
 * readv is a preadv on its file, a splice is a pread.
 * After each drive the timeout policy (proto/h2_timeout.c) is asked for
 * the deadline, and now and then the deadline is taken as passed.
 *
 * The root it serves is made at start in a temporary folder: index.html,
 * a.txt, big.bin (1 MiB and a bit), empty.txt, sub/index.html, nodir/ (no
 * index), .hidden, link.txt (-> a.txt), out (-> /etc/passwd, leaves the
 * root), a FIFO, and sidecars for --precompressed (always on here):
 * a.txt.gz, big.bin.zst, sub/index.html.br, sidecar.txt.br (no original),
 * a.txt.br (-> /etc/passwd) and a.txt.zst/ (a directory). Every file holds the same bytes,
 * file_byte(offset), so a body can be checked without knowing which file it came from.
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
#include "fuzz/fuzz_h2_wire.h"
#include "proto/accept_enc.h"
#include "proto/h2_session.h"
#include "proto/mime.h"
#include "proto/static_target.h"
#include "server/core/file.h"

#define SHRINK_AT 65536 /* flags bit 1: reads end here */
/* Per input, so that a client asking for big.bin over and over stays fast;
 * a stalled client stops us sooner. */
#define MAX_BATCHES 512
#define MAX_BYTES (64u << 20)
#define MTIME 1580608922  /* 2020-02-02 02:02:02 UTC, as the integration fixtures */

/* ---- the served root, made once ---- */

static const struct {
	const char *rel;
	size_t size;
} fixtures[] = {
    {"index.html", 57},
    {"a.txt", 1000},
    {"big.bin", BIG_SIZE},
    {"empty.txt", 0},
    {"sub/index.html", 15},
    {".hidden", 20},
    /* precompressed sidecars (their bytes are file_byte's too) */
    {"a.txt.gz", 300},
    {"big.bin.zst", 70000},
    {"sub/index.html.br", 9},
    {"sidecar.txt.br", 7},
};
/* a.txt.br leaves the root: passed over, as the directory a.txt.zst is. */
static const char *const links[][2] = {
    {"link.txt", "a.txt"}, {"out", "/etc/passwd"}, {"a.txt.br", "/etc/passwd"}};
static const char *const dirs[] = {"sub", "nodir", "a.txt.zst"};

#define ROOT_PREFIX "ktlsd-fuzz-h2."

static char root[128];            /* TMPDIR/ktlsd-fuzz-h2.PID */
static int root_fd;
static struct mime_table *mime;
/* FUZZ_TRACE=1 in the environment: a line per response and per input on
 * stderr, to see what an input does when reproducing it. */
static bool trace;

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
	trace = getenv("FUZZ_TRACE") != NULL;
	wire_init();
	make_root();
	if (mime_table_load(&mime, NULL, 0) < 0)
		abort();
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		abort();
	return 0;
}

/* ---- the environment: what server/http/h2_conn.c gives the session ---- */

struct run {
	struct h2_session *hs;
	char *batch;               /* the one buffer every batch is filled in */
	size_t cap;
	size_t filled;             /* of it, as the last fill ended */
	struct h2_stream **posted; /* readvs in flight */
	size_t nposted, posted_cap;
	bool dotfiles;             /* --dotfiles on */
	bool shrink;
	bool sendfile;             /* --h2-sendfile */
	bool cut;                  /* a batch went as the last (a file came short) */
	bool closed;               /* conn_abort or conn_close_graceful */
	unsigned batches;
	size_t bytes;
	struct wire wire;
};

static uint64_t now_ms, boundary_seed;

static const char *fz_date(void *ctx)
{
	return "Sun, 02 Feb 2020 02:02:02 GMT";
}

/* The server's own open beneath the root (server/core/file.c, pure syscalls). */
static int fz_open(void *ctx, const char *rel, struct static_opened *f)
{
	(void)ctx;
	f->mem = NULL;
	f->memo = NULL;
	return file_open_beneath(root_fd, rel, &f->st);
}

static void fz_close(void *ctx, int fd)
{
	(void)ctx;
	close(fd);
}

/* server/http/resolve.c's resolution, on the fixtures: one site, with a field
 * of its own, and a Host that names another site (421) now and then; with
 * --precompressed on (a request without accept-encoding is answered as
 * with it off). */
static void fz_resolve(void *ctx, const struct static_ask *ask, struct static_target *out)
{
	static const struct resp_extra extra = {.name_h1 = "X-Fuzz", .name_h2 = "x-fuzz",
						.name_len = 6, .value = "1", .value_len = 1};
	const struct run *r = ctx;
	const struct static_opener op = {.open = fz_open, .close = fz_close};
	struct accept_enc ae;

	out->extras = (struct resp_extras){.f = &extra, .n = 1, .h1_bytes = 11};
	out->root = NULL;
	if (ask->host && ask->host_len == 5 && memcmp(ask->host, "other", 5) == 0) {
		out->status = 421;
		return;
	}
	accept_enc_parse(ask->accept_encoding, ask->ae_len, &ae);
	/* A wall clock before every file: each is recent, its tag the long form. */
	static_target_resolve(ask->target, ask->target_len, r->dotfiles, false, mime, &op, &ae, 0,
			      out);
}

/* The fixtures never change: a reopen finds the file the head described. */
static int fz_reopen(void *ctx, const void *site_root, const char *rel,
		     const struct static_file *expect, const void **mem)
{
	(void)site_root;
	struct stat st;
	int fd = file_open_beneath(root_fd, rel, &st);

	FZ_ASSERT(fd >= 0, "reopen of %s: %s", rel, strerror(-fd));
	FZ_ASSERT(S_ISREG(st.st_mode) && (uint64_t)st.st_ino == expect->ino &&
	              (uint64_t)st.st_size == expect->size,
	          "reopen of %s: another file", rel);
	*mem = NULL;
	return fd;
}

static void fz_stream_done(void *ctx, const struct h2_stream_record *rec)
{
	FZ_ASSERT(rec->status >= 200 && rec->status <= 599, "stream %d logged with status %d",
	          rec->id, rec->status);
	FZ_ASSERT(rec->duration_ms == 0, "stream %d lasted %llu ms on a clock that stands still",
	          rec->id, (unsigned long long)rec->duration_ms);
	FZ_ASSERT(!rec->truncated || ((const struct run *)ctx)->shrink,
	          "stream %d truncated, no file shrank", rec->id);
}

static void fz_event(void *ctx, enum h2_event ev, const struct h2_stream *s, int err)
{
	const struct run *r = ctx;

	FZ_ASSERT(ev != H2_EV_FILE_CHANGED, "stream %d: file changed, none did", h2_stream_id(s));
	FZ_ASSERT(ev != H2_EV_FILE_SHORT || r->shrink, "stream %d: short read (%d), none due",
	          h2_stream_id(s), err);
}

/* The defaults of --h2-max-streams and the others; flags bit 6 sets the
 * smallest. */
static const struct h2_limits default_limits = {.max_streams = 128,
                                               .max_header_list = 65536,
                                               .reset_rate = 100,
                                               .max_continuations = 8,
                                               .keepalive_requests = 10000};
static const struct h2_limits smallest_limits = {.max_streams = 1,
                                                .max_header_list = 1024,
                                                .reset_rate = 1,
                                                .max_continuations = 1,
                                                .keepalive_requests = 10000};
static struct h2_env env = {
    .now_ms = &now_ms,
    .boundary_seed = &boundary_seed,
    .date = fz_date,
    .resolve = fz_resolve,
    .reopen = fz_reopen,
    .close_file = fz_close,
    .stream_done = fz_stream_done,
    .event = fz_event,
};

/* ---- the I/O the pump asks for, done at once ---- */

static bool spent(const struct run *r)
{
	return r->batches >= MAX_BATCHES || r->bytes >= MAX_BYTES;
}

/* The batch is the one buffer of the run, always free between sends. */
static char *fz_batch_open(void *ctx, size_t *room)
{
	struct run *r = ctx;

	*room = r->cap;
	return r->batch;
}

static void fz_batch_close(void *ctx, size_t len)
{
	struct run *r = ctx;

	FZ_ASSERT(len <= r->cap, "batch of %zu in %zu", len, r->cap);
	r->filled = len;
}

/* The ring's readv, queued: complete_reads does it. */
static void fz_post_read(void *ctx, struct h2_stream *s)
{
	struct run *r = ctx;

	FZ_ASSERT(!r->sendfile, "holes with --h2-sendfile");
	FZ_ASSERT(h2_session_reads_pending(r->hs) == r->nposted + 1,
	          "reads posted while %zu are pending", r->nposted);
	if (r->nposted == r->posted_cap) {
		r->posted_cap = r->posted_cap ? 2 * r->posted_cap : 16;
		r->posted = realloc(r->posted, r->posted_cap * sizeof(*r->posted));
		if (!r->posted)
			abort();
	}
	r->posted[r->nposted++] = s;
}

/* The batch is complete: it goes out, up to the cut if a read came short. */
static int fz_send(void *ctx, size_t len, bool last)
{
	struct run *r = ctx;
	struct wire *w = &r->wire;

	if (spent(r))
		return 0; /* a client that stopped reading */
	FZ_ASSERT(len <= r->filled, "send of %zu from a batch of %zu", len, r->filled);
	FZ_ASSERT(!last || r->shrink, "batch cut at %zu, no file shrank", len);
	w->batch++;
	wire_feed(w, (const uint8_t *)r->batch, len);
	r->batches++;
	r->bytes += len;
	if (last) {
		FZ_ASSERT(w->hd_have == 0, "batch cut at %zu inside a frame", len);
		r->cut = true;
		r->closed = true; /* sent, then conn_abort */
		return 1;
	}
	const struct h2_splice sp = h2_session_splice(r->hs);
	if (w->hd_have == FRAME_HEADER && w->type == NGHTTP2_DATA)
		FZ_ASSERT(sp.stream && h2_stream_id(sp.stream) == w->id && w->left == sp.len,
		          "batch ends inside a DATA frame of stream %d (%u bytes to go)", w->id,
		          w->left);
	else
		FZ_ASSERT(!sp.stream, "spliced frame of stream %d not at the end of its batch",
		          h2_stream_id(sp.stream));
	return 1;
}

/* The payload of s, spliced from its file in pipe-sized pieces
 * (h2_splice_done); a piece of 0 bytes aborts the connection. */
static int fz_splice(void *ctx, struct h2_stream *s)
{
	static uint8_t pipe_buf[65536];
	struct run *r = ctx;
	struct h2_splice sp = h2_session_splice(r->hs);

	FZ_ASSERT(sp.stream == s && sp.fd >= 0, "splice of stream %d", h2_stream_id(s));
	while (sp.len > 0) {
		size_t n = sp.len < sizeof(pipe_buf) ? sp.len : sizeof(pipe_buf);
		if (r->shrink && sp.off + n > SHRINK_AT)
			n = sp.off < SHRINK_AT ? SHRINK_AT - sp.off : 0;
		ssize_t got = n ? pread(sp.fd, pipe_buf, n, (off_t)sp.off) : 0;
		FZ_ASSERT(got >= 0, "splice from stream %d's file: %s", h2_stream_id(s),
		          strerror(errno));
		if (got == 0) {
			r->closed = true; /* "file shrank under an HTTP/2 response" */
			return -1;
		}
		wire_feed(&r->wire, pipe_buf, (size_t)got);
		r->bytes += (size_t)got;
		h2_session_spliced(r->hs, (size_t)got);
		sp = h2_session_splice(r->hs);
	}
	return 1;
}

static const struct h2_io fz_io = {
    .batch_open = fz_batch_open,
    .batch_close = fz_batch_close,
    .post_read = fz_post_read,
    .send = fz_send,
    .splice = fz_splice,
};

/* The readv of s, as the ring would do it. */
static int stream_readv(struct run *r, struct h2_stream *s)
{
	const struct h2_readv rv = h2_stream_readv(s);
	int32_t id = h2_stream_id(s);
	struct iovec iov[MAX_IOV];
	size_t total = 0, room = SIZE_MAX;
	int n = 0;

	FZ_ASSERT(rv.fd >= 0 && rv.niov > 0 && rv.niov <= MAX_IOV,
	          "stream %d: readv of %d holes on fd %d", id, rv.niov, rv.fd);
	if (r->shrink)
		room = rv.off < SHRINK_AT ? SHRINK_AT - rv.off : 0;
	for (int i = 0; i < rv.niov; i++) {
		const char *b = rv.iov[i].iov_base;
		FZ_ASSERT(b >= r->batch + FRAME_HEADER &&
		              b + rv.iov[i].iov_len <= r->batch + r->filled,
		          "stream %d: hole %d outside the batch", id, i);
		total += rv.iov[i].iov_len;
		if (room > 0) {
			iov[n] = rv.iov[i];
			if (iov[n].iov_len > room)
				iov[n].iov_len = room;
			room -= iov[n++].iov_len;
		}
	}
	FZ_ASSERT(total == rv.len, "stream %d: holes of %zu for a read of %zu", id, total, rv.len);
	ssize_t got = n ? preadv(rv.fd, iov, n, (off_t)rv.off) : 0;
	return got < 0 ? -errno : (int)got;
}

/* The completions of the posted reads (h2_read_complete). */
static void complete_reads(struct run *r)
{
	size_t n = r->nposted;

	r->nposted = 0;
	for (size_t i = 0; i < n; i++)
		h2_session_read_done(r->posted[i], stream_readv(r, r->posted[i]));
	FZ_ASSERT(h2_session_reads_pending(r->hs) == 0, "%u reads still pending",
	          h2_session_reads_pending(r->hs));
}

/* h2_drive's output side: the pump, then the close of a session with
 * nothing more to do (the socket here is always drained, the peer never
 * gone). */
static void drive(struct run *r)
{
	struct h2_session *hs = r->hs;

	if (h2_session_pump(hs, &fz_io) != 0) {
		r->closed = true; /* "HTTP/2 send failed" */
		return;
	}
	if (!r->closed && h2_session_finished(hs, false))
		r->closed = true; /* conn_close_graceful */
}

/* The timeout policy, called as server/http/h2_conn.c calls it after each
 * drive. The clock stands still here, so every clock starts at now: the
 * deadline is the header timeout while a header block is unfinished (the
 * shortest), else the send timeout while bytes are owed, else the idle
 * one. When the seed says so, the deadline is taken as passed: GOAWAY
 * queued and the linger's deadline; the next call closes. */
static const struct h2_timeouts fz_timeouts = {.send_ms = 30000, .idle_ms = 60000,
					       .header_ms = 10000};

static void check_timeouts(struct run *r, uint64_t rng)
{
	struct h2_session *hs = r->hs;
	struct h2_sending out = {.owes = h2_session_owes(hs), .sent_ms = now_ms};
	bool head = h2_session_reading_head(hs);
	uint64_t d = 0;

	if (!h2_session_deadline(hs, &fz_timeouts, &out, &d)) {
		FZ_ASSERT(h2_session_time_out(hs, &fz_timeouts, &d) == H2_TIMEOUT_LINGER,
			  "a second timeout is not the linger's");
		r->closed = true; /* conn_abort_as(ACCESS_END_TIMEOUT) */
		return;
	}
	uint64_t want = head       ? fz_timeouts.header_ms
	                : out.owes ? fz_timeouts.send_ms
	                           : fz_timeouts.idle_ms;
	FZ_ASSERT(d == now_ms + want, "deadline %llu ms ahead, want %llu",
		  (unsigned long long)(d - now_ms), (unsigned long long)want);
	enum h2_wait w = h2_session_waits(hs);
	FZ_ASSERT(w == (out.owes ? H2_WAIT_SEND : head ? H2_WAIT_HEAD : H2_WAIT_IDLE),
		  "waits for %d", (int)w);
	if (((rng >> 37) & 31) != 0)
		return;
	enum h2_timeout which = h2_session_time_out(hs, &fz_timeouts, &d);
	FZ_ASSERT(which == (out.owes ? H2_TIMEOUT_SEND : H2_TIMEOUT_IDLE), "timed out by %d",
		  (int)which);
	FZ_ASSERT(d == now_ms + H2_LINGER_MS, "no linger after the timeout");
	FZ_ASSERT(!h2_session_goaway(hs), "a timeout without GOAWAY"); /* false: queued already */
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

	now_ms = 1000;
	boundary_seed = rng;
	r.dotfiles = flags & 32;
	r.shrink = flags & 2;
	r.sendfile = flags & 16;
	r.cap = (flags & 1) ? 32768 : (flags & 128) ? 4194304 : 262144;
	r.batch = malloc(r.cap);
	if (!r.batch)
		abort();
	env.limits = (flags & 64) ? smallest_limits : default_limits;
	env.sendfile = r.sendfile;
	env.ctx = &r;
	fds = count_fds();
	if (h2_session_new(&hs, &env) < 0 || nghttp2_hd_inflate_new(&r.wire.inf) != 0)
		abort();
	r.hs = hs;

	while (!r.closed && !spent(&r) && (pos < len || h2_session_reads_pending(hs) > 0)) {
		if (pos < len && (h2_session_reads_pending(hs) == 0 || (flags & 8))) {
			size_t n = piece_size(&rng, len - pos);
			if (!take_input(&r, in + pos, n)) {
				r.closed = true;
				break;
			}
			pos += n;
			if (flags & 4)
				h2_session_goaway(hs); /* h2_shutdown */
		}
		if (h2_session_reads_pending(hs) > 0)
			complete_reads(&r);
		drive(&r);
		if (!r.closed)
			check_timeouts(&r, rng);
	}
	/* What is still queued goes out, as far as the windows let it. */
	for (int i = 0;
	     i < 4 * MAX_BATCHES && !r.closed && !spent(&r) && h2_session_wants_write(hs); i++) {
		unsigned before = r.batches;
		if (h2_session_reads_pending(hs) > 0)
			complete_reads(&r);
		drive(&r);
		if (r.batches == before && h2_session_reads_pending(hs) == 0)
			break; /* blocked on flow control */
	}
	/* The conn is freed only when nothing of it is in flight. */
	if (h2_session_reads_pending(hs) > 0)
		complete_reads(&r);
	if (trace) {
		for (size_t i = 0; i < r.wire.nresps; i++) {
			const struct resp *p = &r.wire.resps[i];
			fprintf(stderr, "stream %d: %d, %llu of %llu body bytes%s%s\n", p->id,
			        p->status, (unsigned long long)p->got, (unsigned long long)p->clen,
			        p->check ? ", checked" : "", p->ended ? ", ended" : "");
		}
		fprintf(stderr, "%u batches, %s%s\n", r.batches, r.cut ? "cut, " : "",
		        r.closed ? "closed" : "open");
	}
	/* h2_release; the batch is the transport's */
	h2_session_free(hs);
	free(r.batch);
	FZ_ASSERT(count_fds() == fds, "%d file descriptors before the session, %d after", fds,
	          count_fds());
	nghttp2_hd_inflate_del(r.wire.inf);
	free(r.wire.resps);
	free(r.posted);
	free(in);
	return 0;
}
