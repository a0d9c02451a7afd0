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
 *   conns=N established=N bytes=N done=N errors=N seconds=F protocol=P cipher=C
 *
 * and, with -w FILE, writes "ready" to FILE once every connection has
 * received its first body bytes (the moment to look at the server's
 * memory), then keeps reading until the end.
 *
 * established: connections whose TLS handshake completed; bytes: body bytes
 * (after the response header); done: responses the server ended (it closes
 * after the body: Connection: close); errors: connections that failed
 * before any body byte, or whose status line was not "HTTP/1.x 200".
 * protocol and cipher: those of the first handshake that completed.
 *
 * Usage: slowload -p PORT [-H 127.0.0.1] [-u /path] [-c CONC] [-r RATE]
 *                 [-d SECONDS] [-w FILE] [-b RCVBUF] [-n SNI]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

enum phase { P_CONNECT, P_HANDSHAKE, P_WRITE, P_READ, P_DONE };

struct slot {
	int fd;
	SSL *ssl;
	enum phase phase;
	size_t wrote;
	long tokens;
	int got_body;
	int paused; /* out of tokens: not in epoll for reading */
	char status[12]; /* the first bytes of the response: "HTTP/1.1 200" */
	int nstatus;
	int eoh; /* how much of "\r\n\r\n" (the header's end) was seen */
};

static struct sockaddr_in addr;
static int nhandshaking; /* connections in P_CONNECT or P_HANDSHAKE */
static SSL_CTX *ctx;
static const char *sni = "localhost";
static char request[1024];
static size_t reqlen;
static long rate = 64 * 1024;
static int rcvbuf;

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
static char seen_proto[32] = "none", seen_cipher[64] = "none";

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
					snprintf(seen_proto, sizeof(seen_proto), "%s", SSL_get_version(s->ssl));
					snprintf(seen_cipher, sizeof(seen_cipher), "%s",
						 SSL_get_cipher_name(s->ssl));
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
				total_bytes += (unsigned long long)body;
				if (body > 0 && !s->got_body) {
					s->got_body = 1;
					nready++;
				}
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
	const char *host = "127.0.0.1", *path = "/big.bin", *ready_file = NULL;
	int port = 0, conc = 1000, opt;
	double dur = 30;

	while ((opt = getopt(argc, argv, "p:H:u:c:r:d:w:b:n:")) != -1) {
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
		default:
			fprintf(stderr, "usage: slowload -p PORT [-H HOST] [-u PATH] [-c CONC] "
					"[-r RATE] [-d SECONDS] [-w FILE] [-b RCVBUF] [-n SNI]\n");
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
	printf("conns=%d established=%d bytes=%llu done=%d errors=%d seconds=%.2f protocol=%s "
	       "cipher=%s\n",
	       conc, nestablished, total_bytes, ndone, nerrors, now_s() - start, seen_proto,
	       seen_cipher);
	/* Everything is freed, so that a sanitizer build of this tool (the
	 * ASan suite builds it as a check program) reports no leak. */
	for (int i = 0; i < nopened; i++) {
		SSL_free(slots[i].ssl);
		close(slots[i].fd);
	}
	free(slots);
	SSL_CTX_free(ctx);
	close(ep);
	return 0;
}
