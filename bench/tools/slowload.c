/*
 * slowload: many slow TLS downloads at once, for bench/run's slow-client
 * cell (issue 22: "thousands of slow clients at the cost of a few").
 *
 * Opens CONC TLS connections from one thread (epoll, non-blocking; at
 * most MAX_HANDSHAKING handshakes under way at once), sends one GET on
 * each, and reads each response at RATE bytes a second: a home line's
 * pace. The reading is paced by a token bucket per connection that refills
 * every 50 ms; a connection whose tokens are spent stops reading,
 * so its receive window closes and the server's socket fills, as with a
 * real slow line. After SECONDS (or when every download ended) it prints:
 *
 *   conns=N established=N bytes=N done=N errors=N seconds=F protocol=P cipher=C stalled=N alpn=A
 *
 * and, with -w FILE, writes "ready" to FILE once every connection has
 * received its first body bytes (the moment to look at the server's
 * memory), then keeps reading until the end.
 *
 * established: connections whose TLS handshake completed; bytes: body bytes
 * (after the response header); done: responses the server ended (it closes
 * after the body: Connection: close); errors: connections that failed
 * before any body byte, or whose status line was not "HTTP/1.x 200";
 * stalled: downloads still open at the end whose last body byte came more
 * than STALLED_S seconds before it.
 * protocol, cipher and alpn: those of the first handshake that completed
 * (alpn=http/1.1 where none was negotiated), appended at the end of the
 * line so that the readers of the fields before it (bench/lib/slow.sh,
 * t_slow_memory.sh) read them as before.
 *
 * With -2 each connection is HTTP/2 instead (libnghttp2's client): ALPN
 * offers "h2" only, and a connection that does not negotiate it is an
 * error; one session and one GET stream per connection. What slow HTTP/2
 * clients cost a server in memory is the question, so the client is slow
 * the way a browser on a slow line is, by reading slowly, not by small
 * windows: like Chrome it announces a 6 MiB stream window
 * (SETTINGS_INITIAL_WINDOW_SIZE) and a 15 MiB connection window, and
 * nghttp2 sends the WINDOW_UPDATEs as the bytes are read. The pacing is
 * that of HTTP/1.1: the tokens limit the bytes taken off the TLS socket,
 * frames and all, which then go through nghttp2. bytes counts DATA payload;
 * done: streams that closed without error (the connection is then closed
 * at once, as HTTP/1.1's Connection: close would, so that no idle
 * connection stays in the server's memory), or a connection the server
 * ended after body bytes; errors: a :status other than 200, a stream reset
 * or refused, frames that do not parse, or a connection that ended before
 * any body byte.
 *
 * Usage: slowload -p PORT [-H 127.0.0.1] [-u /path] [-c CONC] [-r RATE]
 *                 [-d SECONDS] [-w FILE] [-b RCVBUF] [-n SNI] [-2]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Connections whose handshake is under way at once (main): at 10,000
 * connections every one had body bytes 23 s after the start with 64, 17 s
 * with 512 and 15 s with 1,024 (2-core VM); 512 keeps each handshake well
 * inside a server's 10 s timeout on a machine twice as busy. */
#define MAX_HANDSHAKING 512

/* A download still open that got no body byte for this long at the end is
 * counted stalled: at any rate a reader asks, the server should have sent
 * something in that time (a server that stops feeding a connection with
 * room in its window sits until its own send timeout, 60 s in ktlsd). */
#define STALLED_S 10.0

enum phase { P_CONNECT, P_HANDSHAKE, P_WRITE, P_READ, P_DONE };

struct slot {
	int fd;
	SSL *ssl;
	enum phase phase;
	size_t wrote;
	long tokens;
	int got_body;
	double last_body; /* when the last body bytes came (now_s) */
	int paused; /* out of tokens: not in epoll for reading */
	char status[12]; /* the first bytes of the response: "HTTP/1.1 200" */
	int nstatus;
	int eoh; /* how much of "\r\n\r\n" (the header's end) was seen */
	/* -2 only: the session (NULL before the handshake and after the
	 * end), and what it queued to send that SSL_write has not taken yet:
	 * malloc'ed and grown as needed, as it holds a few small frames
	 * (WINDOW_UPDATEs, SETTINGS and PING acks) where a fixed buffer per
	 * slot would cost 10,000 connections for nothing. */
	nghttp2_session *ng;
	unsigned char *out;
	size_t outoff, outlen, outcap;
	int h2end; /* set by nghttp2's callbacks: H2_DONE or H2_ERROR */
};

enum { H2_DONE = 1, H2_ERROR };

static struct sockaddr_in addr;
static int nhandshaking; /* connections in P_CONNECT or P_HANDSHAKE */
static SSL_CTX *ctx;
static const char *sni = "localhost";
static char request[1024];
static size_t reqlen;
static long rate = 64 * 1024;
static int rcvbuf;
static int h2;
static const char *path = "/big.bin";
static nghttp2_session_callbacks *h2cb;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_slot(int ep, struct slot *s)
{
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -1;
	if (rcvbuf)
		setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 && errno != EINPROGRESS)
		return -1;
	s->ssl = SSL_new(ctx);
	SSL_set_fd(s->ssl, s->fd);
	SSL_set_tlsext_host_name(s->ssl, sni);
	SSL_set_connect_state(s->ssl);
	s->phase = P_CONNECT;
	s->tokens = rate / 20;
	nhandshaking++;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = s};
	return epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
}

static void want(int ep, struct slot *s, unsigned events)
{
	struct epoll_event ev = {.events = events, .data.ptr = s};
	epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
}

static unsigned long long total_bytes;
static int ndone, nerrors, nready, nestablished;

/* Body bytes came for s. */
static void took_body(struct slot *s, size_t n)
{
	total_bytes += n;
	s->last_body = now_s();
	if (!s->got_body) {
		s->got_body = 1;
		nready++;
	}
}

static char seen_proto[32] = "none", seen_cipher[64] = "none", seen_alpn[32] = "none";

static void end_slot(int ep, struct slot *s, int error)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
	if (s->phase <= P_HANDSHAKE)
		nhandshaking--;
	if (error)
		nerrors++;
	else
		ndone++;
	s->phase = P_DONE;
	if (h2) {
		/* An HTTP/2 server keeps the connection after the stream (or
		 * after refusing h2, waits for a request): close it here
		 * (close_notify where it still can), as HTTP/1.1's
		 * Connection: close does, and give back the session's memory
		 * at once. */
		nghttp2_session_del(s->ng);
		s->ng = NULL;
		free(s->out);
		s->out = NULL;
		SSL_shutdown(s->ssl);
		SSL_free(s->ssl);
		s->ssl = NULL;
		close(s->fd);
		s->fd = -1;
	}
	/* What a failed connection left in this thread's error queue would
	 * make SSL_get_error report the next connection's WANT_READ as a
	 * failure. */
	ERR_clear_error();
}

/* eat_header: passes the response header in BUF (N bytes read) and returns
 * how many of them are body bytes; -1 if the status is not a 200. */
static int eat_header(struct slot *s, const char *buf, int n)
{
	static const char eoh[] = "\r\n\r\n";
	int i = 0;

	while (s->eoh < 4 && i < n) {
		char c = buf[i++];
		if (s->nstatus < (int)sizeof(s->status)) {
			s->status[s->nstatus++] = c;
			if (s->nstatus == (int)sizeof(s->status) &&
			    (memcmp(s->status, "HTTP/1.", 7) != 0 || memcmp(s->status + 8, " 200", 4) != 0))
				return -1;
		}
		s->eoh = c == eoh[s->eoh] ? s->eoh + 1 : (c == '\r' ? 1 : 0);
	}
	return n - i;
}

/* ---- HTTP/2 (-2) ---- */

/* nghttp2's output goes to the slot's buffer, for h2_flush to hand to
 * SSL_write when the socket takes it: nghttp2 is never told "would block". */
static ssize_t h2_send_cb(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
			  void *ud)
{
	struct slot *s = ud;
	(void)ng;
	(void)flags;
	if (s->outoff && s->outoff + s->outlen + len > s->outcap) {
		/* SSL_write may wait on a retry of these bytes at their old
		 * place: SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER allows the move. */
		memmove(s->out, s->out + s->outoff, s->outlen);
		s->outoff = 0;
	}
	if (s->outlen + len > s->outcap) {
		size_t cap = s->outcap ? s->outcap : 128;
		while (cap < s->outlen + len)
			cap *= 2;
		unsigned char *p = realloc(s->out, cap);
		if (!p)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		s->out = p;
		s->outcap = cap;
	}
	memcpy(s->out + s->outoff + s->outlen, data, len);
	s->outlen += len;
	return (ssize_t)len;
}

static int h2_header_cb(nghttp2_session *ng, const nghttp2_frame *fr, const uint8_t *name,
			size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
			void *ud)
{
	struct slot *s = ud;
	(void)ng;
	(void)flags;
	if (fr->hd.type == NGHTTP2_HEADERS && fr->headers.cat == NGHTTP2_HCAT_RESPONSE &&
	    namelen == 7 && memcmp(name, ":status", 7) == 0 &&
	    (valuelen != 3 || memcmp(value, "200", 3) != 0) && !s->h2end)
		s->h2end = H2_ERROR;
	return 0;
}

static int h2_data_cb(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data,
		      size_t len, void *ud)
{
	struct slot *s = ud;
	(void)ng;
	(void)flags;
	(void)id;
	(void)data;
	if (s->h2end || len == 0)
		return 0; /* a non-200's body is not counted, as in HTTP/1.1 */
	took_body(s, len);
	return 0;
}

static int h2_frame_cb(nghttp2_session *ng, const nghttp2_frame *fr, void *ud)
{
	struct slot *s = ud;
	(void)ng;
	/* A GOAWAY that leaves our stream out, or says something went wrong,
	 * ends the download as a closed connection does (done after body
	 * bytes, an error before); a graceful one that keeps stream 1 (a
	 * server that drains) lets it go on to its end, as a browser would. */
	if (fr->hd.type == NGHTTP2_GOAWAY && !s->h2end &&
	    (fr->goaway.last_stream_id < 1 || fr->goaway.error_code != NGHTTP2_NO_ERROR))
		s->h2end = s->got_body ? H2_DONE : H2_ERROR;
	return 0;
}

static int h2_close_cb(nghttp2_session *ng, int32_t id, uint32_t err, void *ud)
{
	struct slot *s = ud;
	(void)ng;
	(void)id;
	if (!s->h2end)
		s->h2end = err == NGHTTP2_NO_ERROR ? H2_DONE : H2_ERROR;
	return 0;
}

/* h2_start: after the handshake, the session, its SETTINGS and window, and
 * the GET, all queued in the slot's output; -1 if the server did not take
 * h2. */
static int h2_start(struct slot *s)
{
	const unsigned char *alpn;
	unsigned alpnlen;
	SSL_get0_alpn_selected(s->ssl, &alpn, &alpnlen);
	if (alpnlen != 2 || memcmp(alpn, "h2", 2) != 0)
		return -1;
	if (nghttp2_session_client_new(&s->ng, h2cb, s) != 0) {
		s->ng = NULL;
		return -1;
	}
	/* Chrome's windows: the server may send 6 MiB on the stream before
	 * a WINDOW_UPDATE, more than its socket holds, so what holds it back
	 * is the socket that fills, as the reading is slow. */
	nghttp2_settings_entry set[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 6291456}};
	nghttp2_nv nv[] = {
	    {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, NGHTTP2_NV_FLAG_NONE},
	    {(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, NGHTTP2_NV_FLAG_NONE},
	    {(uint8_t *)":authority", (uint8_t *)sni, 10, strlen(sni), NGHTTP2_NV_FLAG_NONE},
	    {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), NGHTTP2_NV_FLAG_NONE},
	};
	if (nghttp2_submit_settings(s->ng, NGHTTP2_FLAG_NONE, set, 1) != 0 ||
	    nghttp2_session_set_local_window_size(s->ng, NGHTTP2_FLAG_NONE, 0, 15728640) != 0 ||
	    nghttp2_submit_request(s->ng, NULL, nv, 4, NULL, NULL) < 0 ||
	    nghttp2_session_send(s->ng) != 0)
		return -1;
	return 0;
}

/* h2_flush: hands the queued output to SSL_write; 0 when it is all taken
 * or waits (*wait: the epoll event it waits for), -1 when the connection
 * failed. */
static int h2_flush(struct slot *s, unsigned *wait)
{
	*wait = 0;
	while (s->outlen > 0) {
		int r = SSL_write(s->ssl, s->out + s->outoff, (int)s->outlen);
		if (r <= 0) {
			switch (SSL_get_error(s->ssl, r)) {
			case SSL_ERROR_WANT_WRITE:
				*wait = EPOLLOUT;
				return 0;
			case SSL_ERROR_WANT_READ:
				*wait = EPOLLIN;
				return 0;
			default:
				return -1;
			}
		}
		s->outoff += (size_t)r;
		s->outlen -= (size_t)r;
	}
	s->outoff = 0;
	return 0;
}

/* h2_step: P_READ for -2. Reads as far as the tokens allow, as P_READ does,
 * through nghttp2, and sends what nghttp2 queued in answer (WINDOW_UPDATEs)
 * as the socket takes it: while out of tokens too, so that a window
 * update does not wait for the refill. Waits in epoll only for what the
 * read and the write wait for (out of tokens with nothing to send: for
 * nothing, as P_READ), so that it does not spin. */
static void h2_step(int ep, struct slot *s)
{
	unsigned char buf[16384];

	for (;;) {
		unsigned wait;
		if (h2_flush(s, &wait) < 0) {
			end_slot(ep, s, !s->got_body);
			return;
		}
		if (s->h2end) {
			end_slot(ep, s, s->h2end == H2_ERROR);
			return;
		}
		if (s->tokens <= 0) {
			s->paused = 1;
			want(ep, s, wait);
			return;
		}
		int n = s->tokens < (long)sizeof(buf) ? (int)s->tokens : (int)sizeof(buf);
		int r = SSL_read(s->ssl, buf, n);
		if (r <= 0) {
			switch (SSL_get_error(s->ssl, r)) {
			case SSL_ERROR_WANT_READ:
				want(ep, s, EPOLLIN | wait);
				return;
			case SSL_ERROR_WANT_WRITE:
				want(ep, s, EPOLLOUT | wait);
				return;
			default:
				/* The server closed: as in HTTP/1.1, done
				 * after body bytes, an error before. */
				end_slot(ep, s, !s->got_body);
				return;
			}
		}
		s->tokens -= r;
		if (nghttp2_session_mem_recv(s->ng, buf, (size_t)r) < 0 ||
		    nghttp2_session_send(s->ng) != 0) {
			end_slot(ep, s, 1);
			return;
		}
	}
}

static void step(int ep, struct slot *s)
{
	char buf[16384];
	int r;

	for (;;) {
		switch (s->phase) {
		case P_CONNECT:
			s->phase = P_HANDSHAKE;
			/* fall through */
		case P_HANDSHAKE:
			r = SSL_do_handshake(s->ssl);
			if (r == 1) {
				nhandshaking--;
				if (nestablished++ == 0) {
					const unsigned char *alpn;
					unsigned alpnlen;
					SSL_get0_alpn_selected(s->ssl, &alpn, &alpnlen);
					snprintf(seen_proto, sizeof(seen_proto), "%s", SSL_get_version(s->ssl));
					snprintf(seen_cipher, sizeof(seen_cipher), "%s",
						 SSL_get_cipher_name(s->ssl));
					if (alpnlen)
						snprintf(seen_alpn, sizeof(seen_alpn), "%.*s", (int)alpnlen,
							 alpn);
					else
						snprintf(seen_alpn, sizeof(seen_alpn), "http/1.1");
				}
				if (h2) {
					/* The request goes out with h2_step's
					 * first flush. */
					s->phase = P_READ;
					if (h2_start(s) < 0) {
						end_slot(ep, s, 1);
						return;
					}
					h2_step(ep, s);
					return;
				}
				s->phase = P_WRITE;
				continue;
			}
			goto again;
		case P_WRITE:
			r = SSL_write(s->ssl, request + s->wrote, (int)(reqlen - s->wrote));
			if (r <= 0)
				goto again;
			s->wrote += (size_t)r;
			if (s->wrote == reqlen) {
				s->phase = P_READ;
				want(ep, s, EPOLLIN);
			}
			continue;
		case P_READ:
			if (h2) {
				h2_step(ep, s);
				return;
			}
			while (s->tokens > 0) {
				int n = s->tokens < (long)sizeof(buf) ? (int)s->tokens : (int)sizeof(buf);
				r = SSL_read(s->ssl, buf, n);
				if (r <= 0)
					goto again;
				s->tokens -= r;
				int body = eat_header(s, buf, r);
				if (body < 0) {
					end_slot(ep, s, 1);
					return;
				}
				if (body > 0)
					took_body(s, (size_t)body);
			}
			/* Out of tokens: stop reading until the refill. */
			s->paused = 1;
			want(ep, s, 0);
			return;
		case P_DONE:
			return;
		}
	}
again:
	switch (SSL_get_error(s->ssl, r)) {
	case SSL_ERROR_WANT_READ:
		want(ep, s, EPOLLIN);
		return;
	case SSL_ERROR_WANT_WRITE:
		want(ep, s, EPOLLOUT);
		return;
	default:
		/* The server closed (close_notify or not): at the end of the body
		 * (Connection: close) that is a download done; before any body
		 * byte, an error. */
		end_slot(ep, s, s->phase != P_READ || !s->got_body);
		return;
	}
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *ready_file = NULL;
	int port = 0, conc = 1000, opt;
	double dur = 30;

	while ((opt = getopt(argc, argv, "p:H:u:c:r:d:w:b:n:2")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'H': host = optarg; break;
		case 'u': path = optarg; break;
		case 'c': conc = atoi(optarg); break;
		case 'r': rate = atol(optarg); break;
		case 'd': dur = atof(optarg); break;
		case 'w': ready_file = optarg; break;
		case 'b': rcvbuf = atoi(optarg); break;
		case 'n': sni = optarg; break;
		case '2': h2 = 1; break;
		default:
			fprintf(stderr, "usage: slowload -p PORT [-H HOST] [-u PATH] [-c CONC] "
					"[-r RATE] [-d SECONDS] [-w FILE] [-b RCVBUF] [-n SNI] [-2]\n");
			return 2;
		}
	}
	if (!port || conc <= 0 || rate <= 0)
		return 2;
	struct rlimit rl = {(rlim_t)conc + 64, (rlim_t)conc + 64};
	setrlimit(RLIMIT_NOFILE, &rl);
	addr.sin_family = AF_INET;
	addr.sin_port = htons((unsigned short)port);
	inet_pton(AF_INET, host, &addr.sin_addr);
	reqlen = (size_t)snprintf(request, sizeof(request),
				  "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, sni);
	ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (h2) {
		static const unsigned char alpn[] = "\x02h2";
		/* h2 only: a server that would fall back to HTTP/1.1 is not
		 * what -2 measures (h2_start counts it an error). The output
		 * buffer may move (realloc, memmove) while SSL_write waits to
		 * retry it. */
		SSL_CTX_set_alpn_protos(ctx, alpn, sizeof(alpn) - 1);
		SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		nghttp2_session_callbacks_new(&h2cb);
		nghttp2_session_callbacks_set_send_callback(h2cb, h2_send_cb);
		nghttp2_session_callbacks_set_on_header_callback(h2cb, h2_header_cb);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(h2cb, h2_data_cb);
		nghttp2_session_callbacks_set_on_frame_recv_callback(h2cb, h2_frame_cb);
		nghttp2_session_callbacks_set_on_stream_close_callback(h2cb, h2_close_cb);
	}

	/* A connection the server closes is counted (end_slot), not a
	 * signal that ends the run without a word. */
	signal(SIGPIPE, SIG_IGN);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct slot *slots = calloc((size_t)conc, sizeof(*slots));
	int nopened = 0;
	double start = now_s(), next_tick = start + 0.05;
	int wrote_ready = 0;
	struct epoll_event evs[256];
	while (now_s() - start < dur && ndone + nerrors < conc) {
		/* Clients arrive as they would, a few handshakes at a time: with
		 * all N begun at once, this one thread took longer than a
		 * server's handshake timeout (ktlsd's 10 s) to finish its side
		 * of the last ones at N = 10,000. */
		while (nopened < conc && nhandshaking < MAX_HANDSHAKING) {
			if (open_slot(ep, &slots[nopened]) < 0) {
				perror("slowload: connect");
				return 1;
			}
			nopened++;
		}
		int ms = (int)((next_tick - now_s()) * 1000);
		int n = epoll_wait(ep, evs, 256, ms < 0 ? 0 : ms);
		for (int i = 0; i < n; i++)
			step(ep, evs[i].data.ptr);
		if (now_s() >= next_tick) {
			next_tick += 0.05;
			for (int i = 0; i < nopened; i++) {
				struct slot *s = &slots[i];
				if (s->phase == P_DONE)
					continue;
				s->tokens += rate / 20;
				if (s->tokens > rate / 10)
					s->tokens = rate / 10;
				if (s->paused) {
					s->paused = 0;
					step(ep, s); /* reads what is buffered, re-arms */
				}
			}
		}
		if (ready_file && !wrote_ready && nready == conc) {
			FILE *f = fopen(ready_file, "w");
			if (f) {
				fputs("ready\n", f);
				fclose(f);
			}
			wrote_ready = 1;
		}
	}
	int nstalled = 0;
	double end = now_s();
	for (int i = 0; i < nopened; i++)
		if (slots[i].phase == P_READ && slots[i].got_body &&
		    end - slots[i].last_body > STALLED_S)
			nstalled++;
	printf("conns=%d established=%d bytes=%llu done=%d errors=%d seconds=%.2f protocol=%s "
	       "cipher=%s stalled=%d alpn=%s\n",
	       conc, nestablished, total_bytes, ndone, nerrors, end - start, seen_proto,
	       seen_cipher, nstalled, seen_alpn);
	/* Everything is freed, so that a sanitizer build of this tool (the
	 * ASan suite builds it as a check program) reports no leak. */
	for (int i = 0; i < nopened; i++) {
		nghttp2_session_del(slots[i].ng);
		free(slots[i].out);
		SSL_free(slots[i].ssl);
		if (slots[i].fd >= 0)
			close(slots[i].fd);
	}
	free(slots);
	nghttp2_session_callbacks_del(h2cb);
	SSL_CTX_free(ctx);
	close(ep);
	return 0;
}
