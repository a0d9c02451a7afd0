/* bytecheck: many downloads that end at random moments, every body byte
 * checked against the file it belongs to at its offset. The files carry a
 * marker per 16 bytes ("fff:ooooooooooo\n": the file's number and the
 * offset / 16, in hex), so a byte of another file, of another offset, of a
 * frame or record header, or of a buffer's earlier life shows as a byte
 * that is not what the marker says (issue 20: an HTTP/2 batch with its
 * DATA payloads still being read left with whatever the pooled buffer
 * held before).
 *
 *   bytecheck gen DIR COUNT MAXSIZE SEED
 *       makes DIR/fNNN.bin, COUNT files of 1 byte to MAXSIZE bytes.
 *   bytecheck cold DIR
 *       exit 0 if evicting DIR/f000.bin from the page cache works there
 *       (not on tmpfs), 1 if not, 2 if it could not be tried.
 *   bytecheck run [options]
 *       --port N --host ADDR   the server (127.0.0.1)
 *       --dir DIR              the files the server serves at /
 *       --tls | --plain        TLS 1.3 (certificate not verified) or TCP
 *       --h1 --h2              protocols to use (at least one; h2 needs --tls)
 *       --attempts N           downloads in all (connections, not streams)
 *       --procs N              processes running them at once
 *       --cold PERCENT         attempts whose files are evicted first
 *       --seed N
 *       --aborts LIST          of: none,close_notify,keyupdate,rst,fin,
 *                              rst_stream,stall (default: all that apply)
 *   Prints one line per problem (FOREIGN ..., ERROR ...) and a summary
 *   "attempts=N bodies=N complete=N bytes=N foreign=N errors=N"; exits 1
 *   if any byte was foreign (or an attempt broke the protocol), 2 on usage
 *   errors. Connection failures the aborts cause are not errors; a wrong
 *   byte is.
 *
 * Each process runs its attempts one after another with blocking sockets
 * and receive timeouts, so a server that stops answering ends an attempt
 * (counted in "stalled=", not an error: the server may be slow under load). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#define MAX_FILES 4096
#define MAX_STREAMS 4

enum abort_kind {
	AB_NONE,
	AB_CLOSE_NOTIFY,
	AB_KEYUPDATE,
	AB_RST,
	AB_FIN,
	AB_RST_STREAM,
	AB_STALL,
	AB_KINDS
};
static const char *const abort_names[AB_KINDS] = {
    "none", "close_notify", "keyupdate", "rst", "fin", "rst_stream", "stall"};

struct opts {
	const char *host, *dir;
	int port;
	bool tls, h1, h2;
	long attempts;
	int procs;
	int cold_pct;
	unsigned seed;
	bool abort_on[AB_KINDS];
};

struct file {
	char name[32];
	int id;
	uint64_t size;
};

static struct file files[MAX_FILES];
static int nfiles;

/* ---- the markers ---- */

static void cell(int id, uint64_t idx, char out[16])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 2; i >= 0; i--, id >>= 4)
		out[i] = hex[id & 15];
	out[3] = ':';
	for (int i = 14; i >= 4; i--, idx >>= 4)
		out[i] = hex[idx & 15];
	out[15] = '\n';
}

static char expected_byte(int id, uint64_t off)
{
	char c[16];
	cell(id, off / 16, c);
	return c[off % 16];
}

static int gen(const char *dir, int count, uint64_t maxsize, unsigned seed)
{
	srandom(seed);
	for (int i = 0; i < count; i++) {
		char path[4096];
		/* Sizes spread over orders of magnitude: small bodies, a
		 * batch or two, many batches. */
		uint64_t size;
		switch (random() % 4) {
		case 0: size = 1 + (uint64_t)random() % 4096; break;
		case 1: size = 1 + (uint64_t)random() % (256 * 1024); break;
		default: size = 1 + (uint64_t)random() % maxsize; break;
		}
		snprintf(path, sizeof(path), "%s/f%03x.bin", dir, i);
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			return 1;
		}
		char c[16];
		for (uint64_t off = 0; off < size; off += 16) {
			cell(i, off / 16, c);
			fwrite(c, 1, size - off < 16 ? size - off : 16, f);
		}
		if (fclose(f) != 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

/* Whether evicting works where the files are (it does not on tmpfs): one
 * file is evicted, then its pages are looked for. 0: it works. */
static int cold_works(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/f000.bin", dir);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return 2;
	}
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	size_t len = (size_t)st.st_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = (len + (size_t)page - 1) / (size_t)page, resident = 0;
	unsigned char *vec = malloc(pages);
	int rc = 2;
	if (m != MAP_FAILED && vec && mincore(m, len, vec) == 0) {
		for (size_t i = 0; i < pages; i++)
			resident += vec[i] & 1;
		printf("%s: %zu of %zu pages still cached after eviction\n", path, resident, pages);
		rc = resident == pages ? 1 : 0;
	}
	free(vec);
	if (m != MAP_FAILED)
		munmap(m, len);
	close(fd);
	return rc;
}

static int load_files(const char *dir)
{
	for (int i = 0; i < MAX_FILES; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/f%03x.bin", dir, i);
		if (stat(path, &st) < 0)
			break;
		snprintf(files[i].name, sizeof(files[i].name), "f%03x.bin", i);
		files[i].id = i;
		files[i].size = (uint64_t)st.st_size;
		nfiles = i + 1;
	}
	return nfiles ? 0 : -1;
}

/* Drops the file's pages from the page cache, so that the server's read
 * waits for the disk (on tmpfs this does nothing: use a real disk). */
static void evict(const struct opts *o, const struct file *f)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", o->dir, f->name);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* ---- per-process tallies ---- */

struct tally {
	long attempts, bodies, complete, stalled, foreign, errors;
	long slow;                   /* attempts that took over 2 s (reported, not failed) */
	uint64_t bytes, max_ms;
};
static struct tally *shared; /* one per process, in shared memory */
static int me;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static unsigned rnd(unsigned *st)
{
	*st = *st * 1103515245u + 12345u;
	return (*st >> 8) & 0xffffff;
}

/* One body being received: which file, from which offset. */
struct body {
	const struct file *f;
	uint64_t start, next, end; /* next: offset of the next byte expected */
	bool head_done;
	int status;
	bool reported;
	enum abort_kind kind;        /* how the attempt ends, for the report */
};

static void foreign(struct body *b, uint64_t off, const unsigned char *got, size_t len,
		    const char *how)
{
	shared[me].foreign++;
	if (b->reported)
		return;
	b->reported = true;
	char want[64], seen[64];
	size_t n = len < 16 ? len : 16;
	for (size_t i = 0; i < n; i++) {
		char e = expected_byte(b->f->id, off + i);
		want[i] = e >= 32 && e < 127 ? e : '.';
		seen[i] = got[i] >= 32 && got[i] < 127 ? (char)got[i] : '.';
	}
	want[n] = seen[n] = 0;
	fprintf(stderr, "FOREIGN %s %s at %" PRIu64 " (%s): want \"%s\" got \"%s\"\n", how,
		b->f->name, off, abort_names[b->kind], want, seen);
}

/* Checks len body bytes arriving at b->next, a marker cell at a time. */
static void check_bytes(struct body *b, const unsigned char *p, size_t len, const char *how)
{
	if (b->next + len > b->end) {
		fprintf(stderr, "ERROR %s %s: %zu bytes past the end (%" PRIu64 ")\n", how,
			b->f->name, (size_t)(b->next + len - b->end), b->end);
		shared[me].errors++;
		len = (size_t)(b->end - b->next);
	}
	for (size_t i = 0; i < len;) {
		uint64_t off = b->next + i;
		char c[16];
		size_t in = (size_t)(off % 16), n = 16 - in < len - i ? 16 - in : len - i;
		cell(b->f->id, off / 16, c);
		if (memcmp(c + in, p + i, n) != 0) {
			size_t k = 0;
			while (c[in + k] == (char)p[i + k])
				k++;
			foreign(b, off + k, p + i + k, len - i - k, how);
			break;
		}
		i += n;
	}
	b->next += len;
	shared[me].bytes += len;
}

/* ---- the connection ---- */

struct conn {
	const struct opts *o;
	int fd;
	SSL *ssl;
	bool eof;
};

static SSL_CTX *ctx_h1, *ctx_h2;

static SSL_CTX *make_ctx(const char *alpn)
{
	SSL_CTX *c = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION);
	SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
	unsigned char wire[16];
	size_t n = strlen(alpn);
	wire[0] = (unsigned char)n;
	memcpy(wire + 1, alpn, n);
	SSL_CTX_set_alpn_protos(c, wire, (unsigned)n + 1);
	return c;
}

static int conn_open(struct conn *c, const struct opts *o, bool h2)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
	inet_pton(AF_INET, o->host, &a.sin_addr);
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	/* Generous: a loaded machine may be slow; a stall ends an attempt,
	 * it does not fail the run. */
	struct timeval tv = {10, 0};
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(c->fd);
		return -1;
	}
	if (!o->tls)
		return 0;
	c->ssl = SSL_new(h2 ? ctx_h2 : ctx_h1);
	SSL_set_fd(c->ssl, c->fd);
	SSL_set_tlsext_host_name(c->ssl, "localhost");
	if (SSL_connect(c->ssl) != 1) {
		SSL_free(c->ssl);
		close(c->fd);
		return -1;
	}
	return 0;
}

static void conn_close(struct conn *c, bool rst)
{
	if (rst) {
		struct linger l = {1, 0};
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	if (c->ssl)
		SSL_free(c->ssl);
	close(c->fd);
}

/* > 0 bytes, 0 end of stream, -1 error or timeout. */
static ssize_t conn_read(struct conn *c, void *buf, size_t len)
{
	if (!c->ssl) {
		ssize_t n = recv(c->fd, buf, len, 0);
		return n < 0 ? -1 : n;
	}
	int n = SSL_read(c->ssl, buf, (int)len);
	if (n > 0)
		return n;
	int e = SSL_get_error(c->ssl, n);
	ERR_clear_error();
	return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

static int conn_write(struct conn *c, const void *buf, size_t len)
{
	if (!c->ssl)
		return send(c->fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
	int n = SSL_write(c->ssl, buf, (int)len);
	ERR_clear_error();
	return n == (int)len ? 0 : -1;
}

/* The abort itself; true: keep reading what still comes (and check it). */
static bool do_abort(struct conn *c, enum abort_kind k)
{
	switch (k) {
	case AB_CLOSE_NOTIFY:
		if (c->ssl) {
			SSL_shutdown(c->ssl); /* sends close_notify; reading goes on */
			ERR_clear_error();
		}
		return true;
	case AB_KEYUPDATE:
		if (c->ssl) {
			SSL_key_update(c->ssl, SSL_KEY_UPDATE_REQUESTED);
			SSL_do_handshake(c->ssl);
			ERR_clear_error();
		}
		return true;
	case AB_FIN:
		shutdown(c->fd, SHUT_WR);
		return true;
	default:
		return false;
	}
}

/* ---- HTTP/1.1 ---- */

/* Parses a response head in buf[0, len). Returns its length, 0 if more is
 * needed, -1 if it is not one. */
static ssize_t h1_head(struct body *b, const char *buf, size_t len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	if (!end)
		return len > 16384 ? -1 : 0;
	if (sscanf(buf, "HTTP/1.1 %d", &b->status) != 1)
		return -1;
	const char *cl = memmem(buf, (size_t)(end - buf), "\r\nContent-Length: ", 18);
	const char *cr = memmem(buf, (size_t)(end - buf), "\r\nContent-Range: bytes ", 23);
	uint64_t length = 0;
	if (cl)
		length = strtoull(cl + 18, NULL, 10);
	b->start = 0;
	if (cr)
		b->start = strtoull(cr + 23, NULL, 10);
	b->next = b->start;
	b->end = b->start + length;
	b->head_done = true;
	return end + 4 - buf;
}

static void run_h1(const struct opts *o, unsigned *st, enum abort_kind k)
{
	struct conn c;
	if (conn_open(&c, o, false) < 0) {
		shared[me].stalled++;
		return;
	}
	/* One to three requests on the connection: a later response may
	 * reuse buffers an earlier one left. */
	int nreq = 1 + (int)(rnd(st) % 3);
	bool aborted = false;
	for (int r = 0; r < nreq && !aborted; r++) {
		struct body b = {.f = &files[rnd(st) % (unsigned)nfiles], .kind = k};
		if ((int)(rnd(st) % 100) < o->cold_pct)
			evict(o, b.f);
		char req[512], range[64] = "";
		if (b.f->size > 2 && rnd(st) % 4 == 0)
			snprintf(range, sizeof(range), "Range: bytes=%" PRIu64 "-\r\n",
				 (uint64_t)rnd(st) % b.f->size);
		snprintf(req, sizeof(req), "GET /%s HTTP/1.1\r\nHost: localhost\r\n%s\r\n",
			 b.f->name, range);
		if (conn_write(&c, req, strlen(req)) < 0)
			break;
		shared[me].bodies++;
		/* When to abort: after some body bytes, or some ms. */
		bool last = r == nreq - 1;
		enum abort_kind kk = last ? k : AB_NONE;
		uint64_t at_bytes = kk != AB_NONE ? rnd(st) % (b.f->size + 1) : UINT64_MAX;
		uint64_t at_ms = kk != AB_NONE && rnd(st) % 2 ? now_ms() + rnd(st) % 20 : UINT64_MAX;
		char buf[65536 + 16384];
		size_t have = 0;
		bool done = false;
		while (!done) {
			if (kk != AB_NONE && !aborted &&
			    (now_ms() >= at_ms || (b.head_done && b.next - b.start >= at_bytes))) {
				aborted = true;
				if (!do_abort(&c, kk))
					break;
			}
			ssize_t n = conn_read(&c, buf + have, sizeof(buf) - have);
			if (n <= 0) {
				if (n < 0 && !aborted)
					shared[me].stalled++;
				break;
			}
			have += (size_t)n;
			if (!b.head_done) {
				ssize_t h = h1_head(&b, buf, have);
				if (h < 0) {
					fprintf(stderr, "ERROR h1 %s: not a response head\n", b.f->name);
					shared[me].errors++;
					break;
				}
				if (h == 0)
					continue;
				memmove(buf, buf + h, have - (size_t)h);
				have -= (size_t)h;
				if (b.status != 200 && b.status != 206) {
					fprintf(stderr, "ERROR h1 %s: status %d\n", b.f->name, b.status);
					shared[me].errors++;
					break;
				}
			}
			size_t take = have;
			if (take > b.end - b.next)
				take = (size_t)(b.end - b.next);
			check_bytes(&b, (unsigned char *)buf, take, "h1");
			memmove(buf, buf + take, have - take);
			have -= take;
			if (b.next == b.end) {
				if (have > 0 && !aborted) {
					/* Nothing may follow a response we did not
					 * ask a second one for. */
					check_bytes(&b, (unsigned char *)buf, have, "h1 after body");
				}
				shared[me].complete++;
				done = true;
			}
		}
		if (!done)
			break;
	}
	conn_close(&c, k == AB_RST);
}

/* ---- HTTP/2 ---- */

struct h2c {
	struct conn *c;
	nghttp2_session *ng;
	struct body b[MAX_STREAMS];
	int32_t id[MAX_STREAMS];
	int open;
	bool broken;
};

static struct body *body_of(struct h2c *h, int32_t id)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (h->id[i] == id)
			return &h->b[i];
	return NULL;
}

static ssize_t h2_send_cb(nghttp2_session *s, const uint8_t *data, size_t len, int flags,
			  void *ud)
{
	struct h2c *h = ud;
	(void)s;
	(void)flags;
	return conn_write(h->c, data, len) < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : (ssize_t)len;
}

static int h2_header_cb(nghttp2_session *s, const nghttp2_frame *fr, const uint8_t *name,
			size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
			void *ud)
{
	struct h2c *h = ud;
	struct body *b = body_of(h, fr->hd.stream_id);
	(void)s;
	(void)flags;
	if (!b)
		return 0;
	char v[64];
	size_t n = valuelen < sizeof(v) - 1 ? valuelen : sizeof(v) - 1;
	memcpy(v, value, n);
	v[n] = 0;
	if (namelen == 7 && !memcmp(name, ":status", 7))
		b->status = atoi(v);
	else if (namelen == 14 && !memcmp(name, "content-length", 14))
		b->end = b->start + strtoull(v, NULL, 10);
	else if (namelen == 13 && !memcmp(name, "content-range", 13) && !strncmp(v, "bytes ", 6)) {
		uint64_t len = b->end - b->start;
		b->start = b->next = strtoull(v + 6, NULL, 10);
		b->end = b->start + len;
	}
	return 0;
}

static int h2_frame_cb(nghttp2_session *s, const nghttp2_frame *fr, void *ud)
{
	struct h2c *h = ud;
	(void)s;
	if (fr->hd.type == NGHTTP2_HEADERS) {
		struct body *b = body_of(h, fr->hd.stream_id);
		if (b && !b->head_done) {
			b->head_done = true;
			if (b->status != 200 && b->status != 206) {
				fprintf(stderr, "ERROR h2 %s: status %d\n", b->f->name, b->status);
				shared[me].errors++;
				h->broken = true;
			}
		}
	}
	return 0;
}

static int h2_data_cb(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
		      size_t len, void *ud)
{
	struct h2c *h = ud;
	struct body *b = body_of(h, id);
	(void)s;
	(void)flags;
	if (b)
		check_bytes(b, data, len, "h2");
	return 0;
}

static int h2_close_cb(nghttp2_session *s, int32_t id, uint32_t err, void *ud)
{
	struct h2c *h = ud;
	struct body *b = body_of(h, id);
	(void)s;
	if (b) {
		if (err == 0 && b->next == b->end && b->head_done)
			shared[me].complete++;
		h->open--;
	}
	return 0;
}

static void run_h2(const struct opts *o, unsigned *st, enum abort_kind k)
{
	struct conn c;
	if (conn_open(&c, o, true) < 0) {
		shared[me].stalled++;
		return;
	}
	struct h2c h = {.c = &c};
	nghttp2_session_callbacks *cb;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, h2_send_cb);
	nghttp2_session_callbacks_set_on_header_callback(cb, h2_header_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_frame_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_data_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_close_cb);
	nghttp2_option *opt;
	nghttp2_option_new(&opt);
	bool stall = k == AB_STALL;
	if (stall)
		nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_session_client_new2(&h.ng, cb, &h, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);

	/* Windows: big (a batch of many frames), or small (the server stops
	 * mid-batch and waits for WINDOW_UPDATE). */
	uint32_t win = rnd(st) % 2 ? (1u << 24) : 16384u + rnd(st) % 65536;
	nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, win},
					{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
	nghttp2_submit_settings(h.ng, NGHTTP2_FLAG_NONE, set, 2);
	if (!stall)
		nghttp2_session_set_local_window_size(h.ng, NGHTTP2_FLAG_NONE, 0, 1 << 30);

	int nstreams = 1 + (int)(rnd(st) % MAX_STREAMS);
	for (int i = 0; i < nstreams; i++) {
		struct body *b = &h.b[i];
		b->f = &files[rnd(st) % (unsigned)nfiles];
		b->kind = k;
		if ((int)(rnd(st) % 100) < o->cold_pct)
			evict(o, b->f);
		char path[64], range[64];
		snprintf(path, sizeof(path), "/%s", b->f->name);
		bool ranged = b->f->size > 2 && rnd(st) % 4 == 0;
		if (ranged)
			snprintf(range, sizeof(range), "bytes=%u-", rnd(st) % (unsigned)b->f->size);
		nghttp2_nv nv[5] = {
		    {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
		    {(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0},
		    {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
		    {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
		    {(uint8_t *)"range", (uint8_t *)range, 5, ranged ? strlen(range) : 0, 0},
		};
		h.id[i] = nghttp2_submit_request(h.ng, NULL, nv, ranged ? 5 : 4, NULL, NULL);
		h.open++;
		shared[me].bodies++;
	}
	if (nghttp2_session_send(h.ng) != 0)
		goto out;

	uint64_t total = 0;
	for (int i = 0; i < nstreams; i++)
		total += h.b[i].f->size;
	uint64_t at_bytes = k != AB_NONE ? rnd(st) % (total + 1) : UINT64_MAX;
	uint64_t at_ms = k != AB_NONE && rnd(st) % 2 ? now_ms() + rnd(st) % 20 : UINT64_MAX;
	if (k == AB_STALL) {
		/* Before a window runs out (the smallest a stream gets is
		 * 16 KiB): a stall must begin while data still flows. */
		at_bytes = rnd(st) % 16384;
		at_ms = now_ms() + rnd(st) % 20;
	}
	uint64_t stall_until = 0;
	bool aborted = false;
	unsigned char buf[65536];
	while (h.open > 0 && !h.broken) {
		uint64_t got = 0;
		for (int i = 0; i < nstreams; i++)
			got += h.b[i].next - h.b[i].start;
		if (k != AB_NONE && !aborted && (now_ms() >= at_ms || got >= at_bytes)) {
			aborted = true;
			if (k == AB_RST_STREAM) {
				int i = (int)(rnd(st) % (unsigned)nstreams);
				nghttp2_submit_rst_stream(h.ng, NGHTTP2_FLAG_NONE, h.id[i],
							  NGHTTP2_CANCEL);
				h.id[i] = -1; /* what still comes for it is not checked */
				h.open--;
			} else if (k == AB_STALL) {
				/* Hold the window shut a while, then let it go,
				 * or hang up (RST) while it is shut. */
				stall_until = now_ms() + 50 + rnd(st) % 200;
			} else if (!do_abort(&c, k)) {
				break;
			}
			if (nghttp2_session_send(h.ng) != 0)
				break;
			continue; /* the streams left may all be done now */
		}
		if (stall_until && now_ms() >= stall_until) {
			stall_until = 0;
			if (rnd(st) % 2)
				break; /* hung up with the window shut */
			nghttp2_session_set_local_window_size(h.ng, NGHTTP2_FLAG_NONE, 0, 1 << 30);
			for (int i = 0; i < nstreams; i++)
				if (h.id[i] > 0)
					nghttp2_submit_window_update(h.ng, NGHTTP2_FLAG_NONE, h.id[i],
								     1 << 30);
			if (nghttp2_session_send(h.ng) != 0)
				break;
		}
		if (stall_until) {
			struct pollfd p = {c.fd, POLLIN, 0};
			if ((!c.ssl || SSL_pending(c.ssl) == 0) && poll(&p, 1, 10) == 0)
				continue;
		}
		ssize_t n = conn_read(&c, buf, sizeof(buf));
		if (n <= 0) {
			if (n < 0 && !aborted)
				shared[me].stalled++;
			if (n < 0 && getenv("BYTECHECK_VERBOSE"))
				for (int i = 0; i < nstreams; i++)
					fprintf(stderr, "  stream %d id %d %s: head %d, %" PRIu64 "/%" PRIu64
						" (%s)\n", i, h.id[i], h.b[i].f->name, h.b[i].head_done,
						h.b[i].next, h.b[i].end, abort_names[k]);
			break;
		}
		if (nghttp2_session_mem_recv(h.ng, buf, (size_t)n) < 0) {
			fprintf(stderr, "ERROR h2: the server's frames do not parse\n");
			shared[me].errors++;
			break;
		}
		if (!stall && nghttp2_session_send(h.ng) != 0)
			break;
	}
out:
	nghttp2_session_del(h.ng);
	conn_close(&c, k == AB_RST || (k == AB_STALL && rnd(st) % 2));
}

/* ---- the run ---- */

static void run_one(const struct opts *o, unsigned *st)
{
	enum abort_kind kinds[AB_KINDS];
	int nk = 0;
	bool h2 = o->h2 && (!o->h1 || rnd(st) % 2);
	for (int k = 0; k < AB_KINDS; k++) {
		if (!o->abort_on[k])
			continue;
		if ((k == AB_CLOSE_NOTIFY || k == AB_KEYUPDATE) && !o->tls)
			continue;
		if ((k == AB_RST_STREAM || k == AB_STALL) && !h2)
			continue;
		kinds[nk++] = (enum abort_kind)k;
	}
	enum abort_kind k = nk ? kinds[rnd(st) % (unsigned)nk] : AB_NONE;
	shared[me].attempts++;
	uint64_t t0 = now_ms();
	if (h2)
		run_h2(o, st, k);
	else
		run_h1(o, st, k);
	uint64_t ms = now_ms() - t0;
	if (ms > 2000) {
		shared[me].slow++;
		if (getenv("BYTECHECK_VERBOSE"))
			fprintf(stderr, "SLOW %s %s: %" PRIu64 " ms\n", h2 ? "h2" : "h1", abort_names[k], ms);
	}
	if (ms > shared[me].max_ms)
		shared[me].max_ms = ms;
}

static int run(const struct opts *o)
{
	if (load_files(o->dir) < 0) {
		fprintf(stderr, "bytecheck: no fNNN.bin files in %s\n", o->dir);
		return 2;
	}
	shared = mmap(NULL, sizeof(*shared) * (size_t)o->procs, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 2;
	memset(shared, 0, sizeof(*shared) * (size_t)o->procs);
	signal(SIGPIPE, SIG_IGN); /* a server that reset the connection is an ended attempt */
	ctx_h1 = make_ctx("http/1.1");
	ctx_h2 = make_ctx("h2");
	fflush(NULL);
	for (int p = 0; p < o->procs; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			me = p;
			unsigned st = o->seed * 7919u + (unsigned)p * 104729u + 1;
			long n = o->attempts / o->procs + (p < o->attempts % o->procs);
			for (long i = 0; i < n; i++)
				run_one(o, &st);
			_exit(0);
		}
		if (pid < 0) {
			perror("fork");
			return 2;
		}
	}
	int bad = 0, wst;
	while (wait(&wst) > 0)
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 0)
			bad++;
	struct tally t = {0};
	for (int p = 0; p < o->procs; p++) {
		t.attempts += shared[p].attempts;
		t.bodies += shared[p].bodies;
		t.complete += shared[p].complete;
		t.stalled += shared[p].stalled;
		t.foreign += shared[p].foreign;
		t.errors += shared[p].errors;
		t.bytes += shared[p].bytes;
		t.slow += shared[p].slow;
		if (shared[p].max_ms > t.max_ms)
			t.max_ms = shared[p].max_ms;
	}
	printf("attempts=%ld bodies=%ld complete=%ld bytes=%" PRIu64
	       " foreign=%ld errors=%ld stalled=%ld slow=%ld max_ms=%" PRIu64 " crashed=%d\n",
	       t.attempts, t.bodies, t.complete, t.bytes, t.foreign, t.errors, t.stalled, t.slow,
	       t.max_ms, bad);
	return t.foreign || t.errors || bad ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bytecheck gen DIR COUNT MAXSIZE SEED\n"
			"       bytecheck run --port N --dir DIR [--tls|--plain] [--h1] [--h2]\n"
			"                     [--attempts N] [--procs N] [--cold PCT] [--seed N]\n"
			"                     [--aborts none,close_notify,...] [--host ADDR]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "gen"))
		return gen(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 10),
			   (unsigned)strtoul(argv[5], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "cold"))
		return cold_works(argv[2]);
	if (argc < 2 || strcmp(argv[1], "run"))
		return usage();
	struct opts o = {.host = "127.0.0.1", .tls = true, .attempts = 100, .procs = 4,
			 .cold_pct = 50, .seed = 1};
	bool aborts_given = false;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--tls"))
			o.tls = true;
		else if (!strcmp(a, "--plain"))
			o.tls = false;
		else if (!strcmp(a, "--h1"))
			o.h1 = true;
		else if (!strcmp(a, "--h2"))
			o.h2 = true;
		else if (v && !strcmp(a, "--port"))
			o.port = atoi(argv[++i]);
		else if (v && !strcmp(a, "--host"))
			o.host = argv[++i];
		else if (v && !strcmp(a, "--dir"))
			o.dir = argv[++i];
		else if (v && !strcmp(a, "--attempts"))
			o.attempts = atol(argv[++i]);
		else if (v && !strcmp(a, "--procs"))
			o.procs = atoi(argv[++i]);
		else if (v && !strcmp(a, "--cold"))
			o.cold_pct = atoi(argv[++i]);
		else if (v && !strcmp(a, "--seed"))
			o.seed = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (v && !strcmp(a, "--aborts")) {
			char *list = strdup(argv[++i]), *save = NULL;
			aborts_given = true;
			for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				int k;
				for (k = 0; k < AB_KINDS && strcmp(t, abort_names[k]); k++)
					;
				if (k == AB_KINDS) {
					fprintf(stderr, "bytecheck: unknown abort %s\n", t);
					return 2;
				}
				o.abort_on[k] = true;
			}
			free(list);
		} else
			return usage();
	}
	if (!o.port || !o.dir || (!o.h1 && !o.h2) || (o.h2 && !o.tls) || o.procs < 1)
		return usage();
	if (!aborts_given)
		for (int k = 0; k < AB_KINDS; k++)
			o.abort_on[k] = true;
	return run(&o);
}
