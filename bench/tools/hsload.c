/*
 * hsload: a TLS handshake load generator for bench/run.
 *
 * Opens a new TLS connection for every request (Connection: close), keeps
 * CONC of them in flight from one thread (epoll, non-blocking) and, after
 * SECONDS, prints one line:
 *
 *   handshakes=N resumed=N ok=N errors=N bytes=N seconds=F protocol=P cipher=C
 *
 * With -r it offers the newest session it holds (a TLS 1.3 ticket or a
 * TLS 1.2 ticket / session id) on every connection: a resumed handshake;
 * without -r it offers none: a full handshake. The server keeps resumption
 * on in both cases, so the two cells differ only in what the client does --
 * the way real clients differ. wrk and h2load both resume sessions on
 * reconnect and cannot be told not to, which is why this tool exists.
 *
 * Every response is checked: status 200 and exactly -s SIZE body bytes
 * (Content-Length and bytes received); anything else counts as an error.
 *
 * Usage: hsload -p PORT [-H 127.0.0.1] [-u /path] [-s SIZE] [-c CONC]
 *               [-d SECONDS] [-r] [-V 1.2|1.3] [-C tls12-ciphers]
 *               [-S tls13-ciphersuites] [-n SNI]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum phase { P_CONNECT, P_HANDSHAKE, P_WRITE, P_READ };

struct slot {
	int fd;
	SSL *ssl;
	enum phase phase;
	size_t wrote;
	char hdr[4096];
	size_t hlen;
	long clen;   /* -1 until the header is parsed */
	size_t body; /* body bytes received */
	int status;
};

static struct sockaddr_in addr;
static SSL_CTX *ctx;
static SSL_SESSION *last_session;
static int resume;
static const char *sni = "localhost";
static char request[1024];
static size_t reqlen;
static long want_size = -1;
static unsigned long long n_hs, n_resumed, n_ok, n_err, n_bytes;
static char seen_proto[32] = "-", seen_cipher[64] = "-";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* OpenSSL hands us each new session (TLS 1.3 tickets arrive after the
 * handshake); keep the newest so every resumption uses a fresh one. */
static int new_session_cb(SSL *ssl, SSL_SESSION *sess)
{
	(void)ssl;
	if (last_session)
		SSL_SESSION_free(last_session);
	last_session = sess;
	return 1; /* we keep the reference */
}

static void slot_close(int ep, struct slot *s)
{
	if (s->ssl) {
		/* A polite client says close_notify, as curl does; without it
		 * OpenSSL also marks the session not resumable. */
		if (s->phase == P_READ)
			SSL_shutdown(s->ssl);
		SSL_free(s->ssl);
	}
	if (s->fd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
	}
	s->fd = -1;
	s->ssl = NULL;
}

static int slot_open(int ep, struct slot *s)
{
	memset(s, 0, sizeof(*s));
	s->clen = -1;
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s->fd < 0)
		return -1;
	int one = 1;
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	s->phase = P_CONNECT;
	if (connect(s->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 && errno != EINPROGRESS) {
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	s->ssl = SSL_new(ctx);
	SSL_set_fd(s->ssl, s->fd);
	SSL_set_tlsext_host_name(s->ssl, sni);
	if (resume && last_session)
		SSL_set_session(s->ssl, last_session);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = s};
	epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
	return 0;
}

/* Parse the response header once it is complete; returns 1 when parsed,
 * 0 when more is needed, -1 on a malformed or non-200 response. */
static int parse_header(struct slot *s)
{
	s->hdr[s->hlen] = 0;
	char *end = strstr(s->hdr, "\r\n\r\n");
	if (!end)
		return s->hlen >= sizeof(s->hdr) - 1 ? -1 : 0;
	if (sscanf(s->hdr, "HTTP/1.%*d %d", &s->status) != 1 || s->status != 200)
		return -1;
	char *cl = strcasestr(s->hdr, "\r\ncontent-length:");
	if (!cl || cl > end)
		return -1;
	s->clen = strtol(cl + 17, NULL, 10);
	s->body = s->hlen - (size_t)(end + 4 - s->hdr);
	return 1;
}

/* Drive one connection as far as it goes; returns 1 when it finished
 * (well or badly) and should be replaced. */
static int step(struct slot *s)
{
	int rc;
	if (s->phase == P_CONNECT) {
		int err = 0;
		socklen_t len = sizeof(err);
		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			n_err++;
			return 1;
		}
		s->phase = P_HANDSHAKE;
	}
	if (s->phase == P_HANDSHAKE) {
		rc = SSL_connect(s->ssl);
		if (rc != 1) {
			int e = SSL_get_error(s->ssl, rc);
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
				return 0;
			n_err++;
			return 1;
		}
		n_hs++;
		if (SSL_session_reused(s->ssl))
			n_resumed++;
		if (seen_proto[0] == '-') {
			snprintf(seen_proto, sizeof(seen_proto), "%s", SSL_get_version(s->ssl));
			snprintf(seen_cipher, sizeof(seen_cipher), "%s", SSL_get_cipher_name(s->ssl));
		}
		s->phase = P_WRITE;
	}
	if (s->phase == P_WRITE) {
		rc = SSL_write(s->ssl, request + s->wrote, (int)(reqlen - s->wrote));
		if (rc <= 0) {
			int e = SSL_get_error(s->ssl, rc);
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
				return 0;
			n_err++;
			return 1;
		}
		s->wrote += (size_t)rc;
		if (s->wrote < reqlen)
			return 0;
		s->phase = P_READ;
	}
	for (;;) {
		char buf[16384];
		char *dst = buf;
		int room = sizeof(buf);
		if (s->clen < 0) {
			dst = s->hdr + s->hlen;
			room = (int)(sizeof(s->hdr) - 1 - s->hlen);
		}
		rc = SSL_read(s->ssl, dst, room);
		if (rc <= 0) {
			int e = SSL_get_error(s->ssl, rc);
			if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
				return 0;
			n_err++; /* closed before the whole body */
			return 1;
		}
		n_bytes += (unsigned long long)rc;
		if (s->clen < 0) {
			s->hlen += (size_t)rc;
			int p = parse_header(s);
			if (p < 0) {
				n_err++;
				return 1;
			}
			if (p == 0)
				continue;
		} else {
			s->body += (size_t)rc;
		}
		if (s->clen >= 0 && (long)s->body >= s->clen) {
			if ((long)s->body == s->clen && (want_size < 0 || s->clen == want_size))
				n_ok++;
			else
				n_err++;
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *path = "/1k.bin", *ciphers = NULL, *suites = NULL;
	const char *version = NULL;
	int port = 0, conc = 16, opt;
	double secs = 2;
	while ((opt = getopt(argc, argv, "H:p:u:s:c:d:rV:C:S:n:")) != -1) {
		switch (opt) {
		case 'H': host = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'u': path = optarg; break;
		case 's': want_size = atol(optarg); break;
		case 'c': conc = atoi(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'r': resume = 1; break;
		case 'V': version = optarg; break;
		case 'C': ciphers = optarg; break;
		case 'S': suites = optarg; break;
		case 'n': sni = optarg; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of hsload.c\n");
			return 2;
		}
	}
	if (port <= 0 || conc <= 0 || conc > 4096) {
		fprintf(stderr, "hsload: -p PORT is required; 1 <= -c <= 4096\n");
		return 2;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		fprintf(stderr, "hsload: -H takes an IPv4 address\n");
		return 2;
	}
	reqlen = (size_t)snprintf(request, sizeof(request),
				  "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, sni);

	ctx = SSL_CTX_new(TLS_client_method());
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
	/* Whole records per read, not a 5-byte header and then the rest. */
	SSL_CTX_set_read_ahead(ctx, 1);
	if (version) {
		int v = strcmp(version, "1.2") == 0 ? TLS1_2_VERSION : TLS1_3_VERSION;
		SSL_CTX_set_min_proto_version(ctx, v);
		SSL_CTX_set_max_proto_version(ctx, v);
	}
	if ((ciphers && !SSL_CTX_set_cipher_list(ctx, ciphers)) ||
	    (suites && !SSL_CTX_set_ciphersuites(ctx, suites))) {
		fprintf(stderr, "hsload: bad cipher list\n");
		return 2;
	}

	int ep = epoll_create1(0);
	struct slot *slots = calloc((size_t)conc, sizeof(*slots));
	struct epoll_event *evs = calloc((size_t)conc, sizeof(*evs));
	if (ep < 0 || !slots || !evs)
		return 1;
	double start = now(), stop = start + secs;
	int active = 0;
	for (int i = 0; i < conc; i++) {
		if (slot_open(ep, &slots[i]) == 0)
			active++;
		else
			n_err++;
	}
	int stopping = 0;
	while (active > 0) {
		int n = epoll_wait(ep, evs, conc, 100);
		if (!stopping && now() >= stop)
			stopping = 1;
		for (int i = 0; i < n; i++) {
			struct slot *s = evs[i].data.ptr;
			if (s->fd < 0 || !step(s))
				continue;
			slot_close(ep, s);
			active--;
			if (!stopping) {
				if (slot_open(ep, s) == 0)
					active++;
				else
					n_err++;
			}
		}
		/* Do not wait long for stragglers once the time is up. */
		if (stopping && now() > stop + 5)
			break;
	}
	double elapsed = now() - start;
	printf("handshakes=%llu resumed=%llu ok=%llu errors=%llu bytes=%llu seconds=%.3f "
	       "protocol=%s cipher=%s\n",
	       n_hs, n_resumed, n_ok, n_err, n_bytes, elapsed, seen_proto, seen_cipher);
	return n_ok > 0 ? 0 : 1;
}
