/* The ACME client's HTTPS requests: see acme_http.h for the contract. */
#include "server/acme/acme_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "proto/authority.h"
#include "server/core/clock.h"

/* The request line and fields; the path is a CA's URL (proto/acme.h keeps
 * them under 1024 bytes). */
#define REQUEST_HEAD_MAX 4096

/* An https:// URL's parts, pointing into it. */
struct url {
	struct authority a;
	const char *auth; /* as written: the Host field */
	size_t auth_len;
	const char *path; /* "" or from its '/' or '?' */
};

/* A URL that is not https:// gives -EPERM (it is not the CA's origin
 * either), one that does not parse -EINVAL. */
static int url_split(const char *s, struct url *u)
{
	enum target_scheme scheme;
	long at = target_split(s, strlen(s), &scheme, &u->auth, &u->auth_len);

	if (at < 0 || scheme == TARGET_ORIGIN)
		return -EINVAL;
	if (scheme != TARGET_HTTPS)
		return -EPERM;
	if (authority_parse(u->auth, u->auth_len, &u->a) < 0)
		return -EINVAL;
	u->path = s + at;
	return 0;
}

struct acme_http_client {
	SSL_CTX *ctx;
	char *base; /* a copy of the directory URL: origin points into it */
	struct url origin;
	char host[256]; /* origin's host, NUL-terminated, without a trailing dot */
	char port[6];
	bool ip_literal;
};

/* One exchange: its socket, TLS, deadline and where its reason goes. */
struct exchange {
	struct acme_http_client *c;
	int fd;
	SSL *ssl;
	uint64_t deadline_ms;
	const volatile bool *stop;
	char *err;
	size_t errlen;
};

static uint64_t now_ms(void)
{
	return clock_ns() / 1000000;
}

/* The root cause OpenSSL queued (the first error: the later ones are the
 * callers' "I failed too"), or fallback when it queued none. */
static const char *ssl_reason(const char *fallback)
{
	unsigned long e = ERR_get_error();
	const char *s;

	if (e == 0)
		return fallback;
	if (ERR_SYSTEM_ERROR(e))
		return strerror(ERR_GET_REASON(e));
	s = ERR_reason_error_string(e);
	return s ? s : fallback;
}

/* The directory URL's host and port, as connect and TLS want them. */
static int client_origin(struct acme_http_client *c, char *err, size_t errlen)
{
	int rc = url_split(c->base, &c->origin);
	const struct authority *a = &c->origin.a;
	size_t hlen = a->host_len;
	unsigned char addr[16];

	if (rc < 0) {
		snprintf(err, errlen, "%s: not an https:// URL", c->base);
		return rc;
	}
	if (hlen > 1 && a->host[hlen - 1] == '.')
		hlen--; /* SNI and the certificate's names have no trailing dot */
	if (hlen >= sizeof(c->host) || memchr(a->host, '%', hlen)) {
		snprintf(err, errlen, "%s: not a host name ktlsd can reach", c->base);
		return -EINVAL;
	}
	memcpy(c->host, a->host, hlen);
	c->host[hlen] = '\0';
	if (!a->port || a->port_len == 0) {
		strcpy(c->port, "443");
	} else if (a->port_len > 5 || strtoul(a->port, NULL, 10) > 65535 ||
	           strtoul(a->port, NULL, 10) == 0) {
		snprintf(err, errlen, "%s: port out of range", c->base);
		return -EINVAL;
	} else {
		memcpy(c->port, a->port, a->port_len);
		c->port[a->port_len] = '\0';
	}
	c->ip_literal =
	    inet_pton(AF_INET, c->host, addr) == 1 || inet_pton(AF_INET6, c->host, addr) == 1;
	return 0;
}

struct acme_http_client *acme_http_new(const char *base_url, const char *ca_file, char *err,
                                       size_t errlen)
{
	struct acme_http_client *c = calloc(1, sizeof(*c));

	if (!c || !(c->base = strdup(base_url))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (client_origin(c, err, errlen) < 0)
		goto fail;
	ERR_clear_error();
	c->ctx = SSL_CTX_new(TLS_client_method());
	if (!c->ctx) {
		snprintf(err, errlen, "TLS: %s", ssl_reason("no client context"));
		goto fail;
	}
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	/* ALPN so that a CA that speaks h2 too (pebble does) answers in
	 * HTTP/1.1; note the inverted return, 0 is success. */
	if (SSL_CTX_set_alpn_protos(c->ctx, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		snprintf(err, errlen, "TLS: ALPN: %s", ssl_reason("refused"));
		goto fail;
	}
	if (ca_file && SSL_CTX_load_verify_file(c->ctx, ca_file) != 1) {
		snprintf(err, errlen, "CA file %s: %s", ca_file, ssl_reason("no certificate"));
		goto fail;
	}
	if (!ca_file && SSL_CTX_set_default_verify_paths(c->ctx) != 1) {
		snprintf(err, errlen, "TLS: the system's CA store: %s", ssl_reason("unreadable"));
		goto fail;
	}
	return c;
fail:
	acme_http_free(c);
	return NULL;
}

void acme_http_free(struct acme_http_client *c)
{
	if (!c)
		return;
	SSL_CTX_free(c->ctx);
	free(c->base);
	free(c);
}

static bool stopped(const struct exchange *x)
{
	return x->stop && *x->stop;
}

/* Waits until fd is ready for events, until is reached (-ETIMEDOUT) or
 * the stop flag is raised (-ECANCELED), looked at every
 * ACME_HTTP_STOP_POLL_MS. 0 when poll says ready (or in error: the call
 * that follows reports it). */
static int wait_fd(const struct exchange *x, short events, uint64_t until)
{
	for (;;) {
		uint64_t now = now_ms();
		struct pollfd p = {.fd = x->fd, .events = events};

		if (stopped(x))
			return -ECANCELED;
		if (now >= until)
			return -ETIMEDOUT;
		int n = poll(&p, 1,
		             (int)(until - now < ACME_HTTP_STOP_POLL_MS ? until - now
		                                                        : ACME_HTTP_STOP_POLL_MS));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static const char *reason(int rc)
{
	return rc == -ETIMEDOUT ? "timed out" : rc == -ECANCELED ? "stopped" : strerror(-rc);
}

/* "step: reason" for rc, which it returns. */
static int wait_fail(struct exchange *x, const char *step, int rc)
{
	snprintf(x->err, x->errlen, "%s: %s", step, reason(rc));
	return rc;
}

static void addr_name(const struct addrinfo *ai, const char *port, char *out, size_t n)
{
	char h[INET6_ADDRSTRLEN];

	if (getnameinfo(ai->ai_addr, ai->ai_addrlen, h, sizeof(h), NULL, 0, NI_NUMERICHOST))
		snprintf(h, sizeof(h), "?");
	snprintf(out, n, ai->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s", h, port);
}

/* A non-blocking connect to ai, waited for until until: 0 with x->fd
 * set, or -errno (the socket closed). */
static int connect_one(struct exchange *x, const struct addrinfo *ai, uint64_t until)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	int rc;

	x->fd =
	    socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (x->fd < 0)
		return -errno;
	if (connect(x->fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	rc = errno == EINPROGRESS ? wait_fd(x, POLLOUT, until) : -errno;
	if (rc == 0 && getsockopt(x->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		rc = -errno;
	else if (rc == 0)
		rc = -soerr;
	if (rc < 0) {
		close(x->fd);
		x->fd = -1;
	}
	return rc;
}

/* Each of the host's addresses in turn (getaddrinfo's order: RFC 6724's
 * preference, IPv6 first where it is routable), so a CA unreachable over
 * one family is reached over the other. An address that is not the last
 * may take half of the time left: one that drops packets must leave time
 * for the next. The reason given is the last address's. */
static int connect_host(struct exchange *x)
{
	struct acme_http_client *c = x->c;
	struct addrinfo hints = {
	    .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res, *ai;
	char where[INET6_ADDRSTRLEN + 8];
	int rc = -EHOSTUNREACH, g;

	g = getaddrinfo(c->host, c->port, &hints, &res);
	if (g != 0) {
		int e = g == EAI_SYSTEM ? errno : 0;

		snprintf(x->err, x->errlen, "resolve %s: %s", c->host,
		         e ? strerror(e) : gai_strerror(g));
		return e ? -e : -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		uint64_t now = now_ms(), until = x->deadline_ms;

		if (ai->ai_next && now < until)
			until = now + (until - now) / 2;
		rc = connect_one(x, ai, until);
		if (rc == 0)
			break;
		addr_name(ai, c->port, where, sizeof(where));
		snprintf(x->err, x->errlen, "connect %s: %s", where, reason(rc));
		if (rc == -ECANCELED || now_ms() >= x->deadline_ms)
			break;
	}
	freeaddrinfo(res);
	return rc;
}

/* After an SSL call failed with ret: waits for what OpenSSL wants (0: call
 * again), or gives "step: reason". */
static int tls_retry(struct exchange *x, const char *step, int ret)
{
	int sys = errno, e = SSL_get_error(x->ssl, ret);
	int rc;

	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		rc = wait_fd(x, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, x->deadline_ms);
		return rc < 0 ? wait_fail(x, step, rc) : 0;
	}
	if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
		snprintf(x->err, x->errlen, "%s: %s", step,
		         sys ? strerror(sys) : "the connection was closed");
		return sys ? -sys : -ECONNRESET;
	}
	if (e == SSL_ERROR_ZERO_RETURN) {
		snprintf(x->err, x->errlen, "%s: the connection was closed", step);
		return -ECONNRESET;
	}
	snprintf(x->err, x->errlen, "%s: %s", step, ssl_reason("failed"));
	return -EPROTO;
}

static int tls_handshake(struct exchange *x)
{
	struct acme_http_client *c = x->c;
	int ret, rc;

	x->ssl = SSL_new(c->ctx);
	if (!x->ssl || !SSL_set_fd(x->ssl, x->fd)) {
		snprintf(x->err, x->errlen, "TLS: %s", ssl_reason("out of memory"));
		return -ENOMEM;
	}
	/* RFC 6066 §3: no SNI for an address; the certificate must name it
	 * in an iPAddress SAN (pebble's is for 127.0.0.1). */
	if (c->ip_literal
	        ? !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(x->ssl), c->host)
	        : !SSL_set_tlsext_host_name(x->ssl, c->host) || !SSL_set1_host(x->ssl, c->host)) {
		snprintf(x->err, x->errlen, "TLS: %s: %s", c->host, ssl_reason("refused"));
		return -EINVAL;
	}
	for (;;) {
		ERR_clear_error();
		ret = SSL_connect(x->ssl);
		if (ret == 1)
			return 0;
		int e = SSL_get_error(x->ssl, ret);
		long v = SSL_get_verify_result(x->ssl);
		/* The chain or the name did not verify: say what, beyond
		 * OpenSSL's "certificate verify failed" alone. */
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE && v != X509_V_OK) {
			snprintf(x->err, x->errlen, "TLS: certificate verify failed: %s",
			         X509_verify_cert_error_string(v));
			return -EPROTO;
		}
		rc = tls_retry(x, "TLS", ret);
		if (rc < 0)
			return rc;
	}
}

/* A write to a connection the CA reset raises SIGPIPE, which the process
 * ignores (signals.c): it comes back as EPIPE. */
static int tls_write(struct exchange *x, const char *p, size_t n)
{
	while (n > 0) {
		size_t w;
		int rc;

		ERR_clear_error();
		if (SSL_write_ex(x->ssl, p, n, &w)) {
			p += w;
			n -= w;
			continue;
		}
		rc = tls_retry(x, "request", 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Reads the response into p until it is complete. A body that ends with
 * the connection counts only after close_notify (OpenSSL 3 reports a bare
 * EOF as an error, and SSL_OP_IGNORE_UNEXPECTED_EOF is not set): a cut
 * certificate chain must not look whole. */
static int read_response(struct exchange *x, struct acme_http_parse *p)
{
	char buf[16384], why[256];
	size_t n;
	int rc;

	for (;;) {
		if (stopped(x))
			return wait_fail(x, "response", -ECANCELED);
		ERR_clear_error();
		if (SSL_read_ex(x->ssl, buf, sizeof(buf), &n))
			rc = acme_http_parse(p, buf, n, false, why, sizeof(why));
		else if (SSL_get_error(x->ssl, 0) == SSL_ERROR_ZERO_RETURN)
			rc = acme_http_parse(p, NULL, 0, true, why, sizeof(why));
		else if ((rc = tls_retry(x, "response", 0)) < 0)
			return rc;
		if (rc < 0)
			snprintf(x->err, x->errlen, "response: %s", why);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
}

static int send_request(struct exchange *x, const char *method, const struct url *u,
                        const char *body, size_t blen)
{
	char head[REQUEST_HEAD_MAX];
	bool post = strcmp(method, "POST") == 0;
	size_t plen = strcspn(u->path, "#");
	int n, rc;

	/* Accept-Language: RFC 8555 §6.1 asks for one, for the problems'
	 * details. */
	n = snprintf(head, sizeof(head),
	             "%s %s%.*s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: ktlsd/" PACKAGE_VERSION
	             " acme\r\nAccept: */*\r\nAccept-Language: en\r\n",
	             method, plen == 0 || u->path[0] == '?' ? "/" : "", (int)plen, u->path,
	             (int)u->auth_len, u->auth);
	if (n > 0 && (size_t)n < sizeof(head) && post)
		n += snprintf(head + n, sizeof(head) - (size_t)n,
		              "Content-Type: application/jose+json\r\nContent-Length: %zu\r\n",
		              blen);
	if (n > 0 && (size_t)n < sizeof(head))
		n += snprintf(head + n, sizeof(head) - (size_t)n, "Connection: close\r\n\r\n");
	if (n < 0 || (size_t)n >= sizeof(head)) {
		snprintf(x->err, x->errlen, "request: URL over %d bytes", REQUEST_HEAD_MAX / 2);
		return -E2BIG;
	}
	rc = tls_write(x, head, (size_t)n);
	if (rc == 0 && post && blen > 0)
		rc = tls_write(x, body, blen);
	return rc;
}

/* What a request may carry: a method of the three, a URL on the CA's
 * origin whose path is printable ASCII (no CR, LF or space to split the
 * request with). */
static int check_request(const struct acme_http_client *c, const char *method, const char *url,
                         struct url *u, char *err, size_t errlen)
{
	int rc;

	if (strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "POST")) {
		snprintf(err, errlen, "request: method %s: only GET, HEAD and POST", method);
		return -EINVAL;
	}
	rc = url_split(url, u);
	if (rc == 0 && !authority_same(&c->origin.a, &u->a, "443"))
		rc = -EPERM;
	if (rc < 0) {
		snprintf(err, errlen, "request: %s: %s", url,
		         rc == -EPERM ? "not on the CA's origin" : "not a URL");
		return rc;
	}
	for (const char *s = u->path; *s; s++)
		if (*s <= ' ' || *s >= 0x7f) {
			snprintf(err, errlen, "request: %s: a byte a URL cannot hold", url);
			return -EINVAL;
		}
	return 0;
}

/* The stop flag between two steps: -ECANCELED with "step: stopped". */
static int go_on(struct exchange *x, const char *step)
{
	return stopped(x) ? wait_fail(x, step, -ECANCELED) : 0;
}

int acme_http_do(struct acme_http_client *c, const char *method, const char *url, const char *body,
                 size_t blen, int timeout_ms, const volatile bool *stop, struct acme_http_resp *r,
                 char *err, size_t errlen)
{
	struct exchange x = {.c = c,
	                     .fd = -1,
	                     .stop = stop,
	                     .err = err,
	                     .errlen = errlen,
	                     .deadline_ms = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0)};
	struct acme_http_parse p;
	struct url u;
	int rc;

	acme_http_parse_init(&p, r, strcmp(method, "HEAD") == 0);
	rc = check_request(c, method, url, &u, err, errlen);
	if (rc == 0 && (rc = go_on(&x, "connect")) == 0)
		rc = connect_host(&x);
	if (rc == 0 && (rc = go_on(&x, "TLS")) == 0)
		rc = tls_handshake(&x);
	if (rc == 0 && (rc = go_on(&x, "request")) == 0)
		rc = send_request(&x, method, &u, body, blen);
	if (rc == 0 && (rc = go_on(&x, "response")) == 0)
		rc = read_response(&x, &p);
	if (rc < 0)
		acme_http_resp_free(r);
	if (x.ssl) {
		/* close_notify, not waited for: the answer is in. */
		if (rc == 0)
			SSL_shutdown(x.ssl);
		SSL_free(x.ssl);
	}
	if (x.fd >= 0)
		close(x.fd);
	ERR_clear_error(); /* the thread's queue is the next request's */
	return rc;
}
