/* A TLS client for the tests that need what Python's ssl module cannot do:
 * send a TLS 1.3 KeyUpdate (SSL_key_update) in the middle of an HTTP/1.1
 * keep-alive exchange or of an HTTP/2 download, and count the KeyUpdates
 * the server sends.
 *
 *   tls_client [--tls1.2] [--ciphers LIST] [--alpn PROTO] [--dir DIR] PORT STEP...
 *
 * One connection to 127.0.0.1:PORT (SNI "localhost", no certificate check;
 * TLS 1.3 unless --tls1.2; --ciphers: TLS 1.3 suites, or TLS 1.2 ciphers),
 * then the steps in order. Each waits at most 30 s.
 *   send=PATH    HTTP/1.1: send "GET PATH" (keep-alive), read nothing
 *   resp         HTTP/1.1: read the response in progress to its end
 *                (Content-Length bodies); print "RESP status length" and
 *                save its body as DIR/N.body (N counts from 0)
 *   resp=BYTES   the same, but stop once BYTES of its body are in
 *   get=PATH     send=PATH, then resp
 *   ku, KU       send a KeyUpdate now: update_not_requested, update_requested
 *   h2           HTTP/2: the preface and SETTINGS
 *   h2get=PATH   open the next stream (GET PATH)
 *   h2wait=BYTES read frames until the last stream opened has BYTES of
 *                body, or ended
 *   h2done       read frames until every stream ended, was refused by a
 *                GOAWAY, or the connection closed; print "STREAM id status
 *                length end" for each (end: complete, reset, refused,
 *                open), DIR/sID.body its body, and "GOAWAY last code" if
 *                one came
 *   close=SECS   wait for the server to close: "CLOSED close_notify",
 *                "CLOSED eof" or "OPEN"
 * The client reads only as the steps say, and gives an HTTP/2 stream back
 * only the window its DATA used: the server is never more than 64 KiB
 * ahead of it. Ends with "KEYUPDATES N" (KeyUpdates received) and exits 0;
 * 3 when the handshake fails, 4 when a step cannot be done (its reason on
 * stdout). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define STEP_SECS 30
#define MAX_STREAMS 16

static SSL *ssl;
static const char *dir = ".";
static unsigned keyupdates;
static time_t deadline;

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\nKEYUPDATES %u\n", keyupdates);
	exit(code);
}

static void msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
		   SSL *s, void *arg)
{
	(void)version, (void)s, (void)arg;
	if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
	    ((const unsigned char *)buf)[0] == SSL3_MT_KEY_UPDATE)
		keyupdates++;
}

/* ---- the connection ---- */

enum got { GOT_DATA, GOT_NOTIFY, GOT_EOF, GOT_TIMEOUT };

/* Up to len decrypted bytes before the step's deadline. */
static enum got tls_in(void *buf, size_t len, size_t *n)
{
	for (;;) {
		if (SSL_read_ex(ssl, buf, len, n))
			return GOT_DATA;
		switch (SSL_get_error(ssl, 0)) {
		case SSL_ERROR_ZERO_RETURN:
			return GOT_NOTIFY;
		case SSL_ERROR_WANT_READ:
			if (time(NULL) >= deadline)
				return GOT_TIMEOUT;
			continue; /* SO_RCVTIMEO: a second passed */
		default:
			ERR_clear_error();
			return GOT_EOF; /* a reset, an EOF without close_notify, an alert */
		}
	}
}

static void tls_out(const void *buf, size_t len)
{
	size_t n;

	if (!SSL_write_ex(ssl, buf, len, &n) || n != len)
		die(4, "WRITEFAIL");
}

/* Received bytes not yet taken by the HTTP/1.1 or HTTP/2 reader. */
static unsigned char in[1 << 17];
static size_t in_len;

static bool fill(void)
{
	size_t n;

	if (in_len == sizeof(in))
		die(4, "BADRESP buffer full");
	enum got g = tls_in(in + in_len, sizeof(in) - in_len, &n);
	if (g != GOT_DATA)
		return false;
	in_len += n;
	return true;
}

static void take(size_t n)
{
	memmove(in, in + n, in_len - n);
	in_len -= n;
}

static void connect_tls(int port, bool tls12, const char *ciphers, const char *alpn)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {1, 0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		die(3, "TLSFAIL connect: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!ctx)
		die(3, "TLSFAIL SSL_CTX_new");
	SSL_CTX_set_min_proto_version(ctx, tls12 ? TLS1_2_VERSION : TLS1_3_VERSION);
	SSL_CTX_set_max_proto_version(ctx, tls12 ? TLS1_2_VERSION : TLS1_3_VERSION);
	if (ciphers && !(tls12 ? SSL_CTX_set_cipher_list(ctx, ciphers)
			       : SSL_CTX_set_ciphersuites(ctx, ciphers)))
		die(3, "TLSFAIL ciphers %s", ciphers);
	ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, "localhost");
	SSL_set_msg_callback(ssl, msg_cb);
	if (alpn) {
		unsigned char p[64];
		size_t l = strlen(alpn);
		if (l >= sizeof(p))
			die(3, "TLSFAIL alpn");
		p[0] = (unsigned char)l;
		memcpy(p + 1, alpn, l);
		SSL_set_alpn_protos(ssl, p, (unsigned)l + 1);
	}
	while (SSL_connect(ssl) != 1) {
		if (SSL_get_error(ssl, 0) != SSL_ERROR_WANT_READ || time(NULL) >= deadline) {
			char e[256];
			ERR_error_string_n(ERR_get_error(), e, sizeof(e));
			die(3, "TLSFAIL %s", e);
		}
	}
}

/* ---- HTTP/1.1 ---- */

static struct {
	bool active;     /* a response is being read */
	bool head_done;
	int status;
	size_t length, got;
	FILE *body;
	unsigned n;      /* responses read */
} h1;

static void h1_send(const char *path)
{
	char req[1024];
	int l = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path);

	if (l < 0 || (size_t)l >= sizeof(req))
		die(4, "BADSTEP path too long");
	tls_out(req, (size_t)l);
}

static void h1_head(void)
{
	unsigned char *end;
	char *p;

	while (!(end = memmem(in, in_len, "\r\n\r\n", 4)))
		if (!fill())
			die(4, "BADRESP no response head");
	*end = 0;
	if (sscanf((char *)in, "HTTP/1.1 %d", &h1.status) != 1)
		die(4, "BADRESP status line");
	p = strcasestr((char *)in, "\r\ncontent-length:");
	if (!p)
		die(4, "BADRESP no Content-Length");
	h1.length = strtoull(p + 17, NULL, 10);
	take((size_t)(end - in) + 4);
	h1.head_done = true;
}

/* Reads the response in progress until upto bytes of its body are in. */
static void h1_resp(size_t upto)
{
	if (!h1.active) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%u.body", dir, h1.n);
		h1 = (typeof(h1)){.active = true, .n = h1.n, .body = fopen(path, "w")};
		if (!h1.body)
			die(4, "BADSTEP %s: %s", path, strerror(errno));
	}
	if (!h1.head_done)
		h1_head();
	if (upto > h1.length)
		upto = h1.length;
	while (h1.got < upto) {
		if (in_len == 0 && !fill())
			die(4, "BADRESP body ends at %zu of %zu", h1.got, h1.length);
		size_t n = in_len < upto - h1.got ? in_len : upto - h1.got;
		fwrite(in, 1, n, h1.body);
		h1.got += n;
		take(n);
	}
	if (h1.got == h1.length) {
		fclose(h1.body);
		printf("RESP %d %zu\n", h1.status, h1.length);
		h1.active = false;
		h1.head_done = false;
		h1.n++;
	}
}

/* ---- HTTP/2 ---- */

enum { DATA = 0, HEADERS = 1, RST_STREAM = 3, SETTINGS = 4, PING = 6, GOAWAY = 7 };
enum { END_STREAM = 1, ACK = 1, END_HEADERS = 4, PADDED = 8, PRIORITY = 0x20 };

static struct stream {
	uint32_t id;
	int status;
	size_t got;
	const char *end; /* NULL while open */
	FILE *body;
} streams[MAX_STREAMS];
static unsigned nstreams;
static uint32_t goaway_last = UINT32_MAX, goaway_code;

static void frame(uint8_t type, uint8_t flags, uint32_t sid, const void *payload, size_t len)
{
	unsigned char h[9] = {(unsigned char)(len >> 16), (unsigned char)(len >> 8),
			      (unsigned char)len,         type,
			      flags,                      (unsigned char)(sid >> 24),
			      (unsigned char)(sid >> 16), (unsigned char)(sid >> 8),
			      (unsigned char)sid};
	unsigned char buf[9 + 1024];

	if (len > 1024)
		die(4, "BADSTEP frame too long");
	memcpy(buf, h, 9);
	if (len)
		memcpy(buf + 9, payload, len);
	tls_out(buf, 9 + len);
}

static void window_update(uint32_t sid, size_t inc)
{
	unsigned char p[4] = {(unsigned char)(inc >> 24), (unsigned char)(inc >> 16),
			      (unsigned char)(inc >> 8), (unsigned char)inc};
	frame(8, 0, sid, p, 4);
}

static void h2_start(void)
{
	static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

	tls_out(preface, sizeof(preface) - 1);
	frame(SETTINGS, 0, 0, NULL, 0);
}

/* :method GET, :scheme https, :path PATH, :authority localhost: indexed
 * and literal fields without Huffman (RFC 7541 6.1, 6.2.2). */
static void h2_get(const char *path)
{
	unsigned char b[512];
	size_t n = 0, l = strlen(path);
	char name[4096];

	if (nstreams == MAX_STREAMS || l > 120)
		die(4, "BADSTEP too many streams or too long a path");
	b[n++] = 0x82; /* :method GET */
	b[n++] = 0x87; /* :scheme https */
	b[n++] = 0x04; /* :path, literal */
	b[n++] = (unsigned char)l;
	memcpy(b + n, path, l), n += l;
	b[n++] = 0x01; /* :authority, literal */
	b[n++] = 9;
	memcpy(b + n, "localhost", 9), n += 9;
	struct stream *s = &streams[nstreams];
	s->id = 2 * nstreams + 1;
	snprintf(name, sizeof(name), "%s/s%u.body", dir, s->id);
	s->body = fopen(name, "w");
	if (!s->body)
		die(4, "BADSTEP %s: %s", name, strerror(errno));
	nstreams++;
	frame(HEADERS, END_STREAM | END_HEADERS, s->id, b, n);
}

static struct stream *stream_of(uint32_t id)
{
	for (unsigned i = 0; i < nstreams; i++)
		if (streams[i].id == id)
			return &streams[i];
	return NULL;
}

static void stream_end(struct stream *s, const char *end)
{
	if (!s->end) {
		s->end = end;
		fclose(s->body);
	}
}

/* The status of a response header block that begins with an indexed
 * :status (RFC 7541 Appendix A: 8..14); 0 for any other. */
static int status_of(const unsigned char *p, size_t len)
{
	static const int st[] = {200, 204, 206, 304, 400, 404, 500};
	return len && p[0] >= 0x88 && p[0] <= 0x8e ? st[p[0] - 0x88] : 0;
}

/* One frame from the server; false at the connection's end. */
static bool h2_frame(void)
{
	while (in_len < 9 || in_len < 9 + ((size_t)in[0] << 16 | (size_t)in[1] << 8 | in[2]))
		if (!fill())
			return false;
	size_t len = (size_t)in[0] << 16 | (size_t)in[1] << 8 | in[2];
	uint8_t type = in[3], flags = in[4];
	uint32_t sid = ((uint32_t)in[5] << 24 | (uint32_t)in[6] << 16 | (uint32_t)in[7] << 8 |
			in[8]) & 0x7fffffff;
	const unsigned char *p = in + 9;
	struct stream *s = stream_of(sid);
	size_t pad = 0, skip = 0;

	switch (type) {
	case DATA:
		if (flags & PADDED)
			pad = (size_t)p[0] + 1;
		if (s && !s->end) {
			fwrite(p + (pad ? 1 : 0), 1, len - pad, s->body);
			s->got += len - pad;
		}
		if (len) {
			window_update(0, len);
			if (s && !(flags & END_STREAM))
				window_update(sid, len);
		}
		if (s && (flags & END_STREAM))
			stream_end(s, "complete");
		break;
	case HEADERS:
		if (flags & PADDED)
			pad = (size_t)p[0] + 1, skip = 1;
		if (flags & PRIORITY)
			skip += 5;
		if (s && !s->status)
			s->status = status_of(p + skip, len - skip - (pad ? pad - 1 : 0));
		if (s && (flags & END_STREAM))
			stream_end(s, "complete");
		break;
	case RST_STREAM:
		if (s)
			stream_end(s, "reset");
		break;
	case SETTINGS:
		if (!(flags & ACK))
			frame(SETTINGS, ACK, 0, NULL, 0);
		break;
	case PING:
		if (!(flags & ACK) && len == 8)
			frame(PING, ACK, 0, p, 8);
		break;
	case GOAWAY:
		if (len >= 8) {
			goaway_last = ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
				       (uint32_t)p[2] << 8 | p[3]) & 0x7fffffff;
			goaway_code = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 |
				      (uint32_t)p[6] << 8 | p[7];
			for (unsigned i = 0; i < nstreams; i++)
				if (streams[i].id > goaway_last)
					stream_end(&streams[i], "refused");
		}
		break;
	default:
		break; /* WINDOW_UPDATE, CONTINUATION, ... */
	}
	take(9 + len);
	return true;
}

static bool all_ended(void)
{
	for (unsigned i = 0; i < nstreams; i++)
		if (!streams[i].end)
			return false;
	return true;
}

static void h2_done(void)
{
	while (!all_ended() && h2_frame())
		;
	for (unsigned i = 0; i < nstreams; i++) {
		struct stream *s = &streams[i];
		printf("STREAM %u %d %zu %s\n", s->id, s->status, s->got, s->end ? s->end : "open");
		stream_end(s, "open");
	}
	if (goaway_last != UINT32_MAX)
		printf("GOAWAY %u %u\n", goaway_last, goaway_code);
}

/* ---- the steps ---- */

static void key_update(int type)
{
	if (!SSL_key_update(ssl, type) || SSL_do_handshake(ssl) != 1)
		die(4, "KEYUPDATEFAIL");
	printf("KEYUPDATE %s\n", type == SSL_KEY_UPDATE_REQUESTED ? "requested" : "not_requested");
}

static void wait_close(void)
{
	unsigned char buf[16384];
	size_t n;

	for (;;) {
		switch (tls_in(buf, sizeof(buf), &n)) {
		case GOT_DATA:
			continue; /* what comes before the close does not count */
		case GOT_NOTIFY:
			printf("CLOSED close_notify\n");
			return;
		case GOT_EOF:
			printf("CLOSED eof\n");
			return;
		case GOT_TIMEOUT:
			printf("OPEN\n");
			return;
		}
	}
}

static void step(const char *st)
{
	const char *v = strchr(st, '=');
	size_t nl = v ? (size_t)(v - st) : strlen(st);

	v = v ? v + 1 : "";
	deadline = time(NULL) + STEP_SECS;
#define IS(name) (nl == strlen(name) && strncmp(st, name, nl) == 0)
	if (IS("send")) {
		h1_send(v);
	} else if (IS("resp")) {
		h1_resp(*v ? strtoull(v, NULL, 10) : SIZE_MAX);
	} else if (IS("get")) {
		h1_send(v);
		h1_resp(SIZE_MAX);
	} else if (IS("ku")) {
		key_update(SSL_KEY_UPDATE_NOT_REQUESTED);
	} else if (IS("KU")) {
		key_update(SSL_KEY_UPDATE_REQUESTED);
	} else if (IS("h2")) {
		h2_start();
	} else if (IS("h2get")) {
		h2_get(v);
	} else if (IS("h2wait")) {
		size_t want = strtoull(v, NULL, 10);
		struct stream *s = nstreams ? &streams[nstreams - 1] : NULL;
		while (s && !s->end && s->got < want && h2_frame())
			;
	} else if (IS("h2done")) {
		h2_done();
	} else if (IS("close")) {
		deadline = time(NULL) + (*v ? atoi(v) : STEP_SECS);
		wait_close();
	} else {
		die(4, "BADSTEP %s", st);
	}
	fflush(stdout);
#undef IS
}

int main(int argc, char **argv)
{
	bool tls12 = false;
	const char *ciphers = NULL, *alpn = NULL;
	int i = 1;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--tls1.2") == 0)
			tls12 = true;
		else if (strcmp(argv[i], "--ciphers") == 0 && i + 1 < argc)
			ciphers = argv[++i];
		else if (strcmp(argv[i], "--alpn") == 0 && i + 1 < argc)
			alpn = argv[++i];
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [--tls1.2] [--ciphers LIST] [--alpn PROTO] [--dir DIR] "
				"PORT STEP...\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	deadline = time(NULL) + STEP_SECS;
	connect_tls(atoi(argv[i++]), tls12, ciphers, alpn);
	for (; i < argc; i++)
		step(argv[i]);
	printf("KEYUPDATES %u\n", keyupdates);
	SSL_free(ssl);
	return 0;
}
