/* Tests server/acme/acme_http.c against a TLS server on 127.0.0.1 in a
 * thread of the test, with certificates made here: bodies chunked, sized
 * and to the end, the fields kept, what a POST sends, verification by
 * address and by name (SNI), the origin rule, the deadline, the body cap,
 * a refused connection and the stop flag. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "server/acme/acme_http.h"
#include "tests/unit/check_run.h"

/* good: IP 127.0.0.1 and DNS localhost; other: IP 127.0.0.1 only, its own
 * key. Each is its own CA (self-signed), in a file of its own. */
static EVP_PKEY *good_key, *other_key;
static X509 *good_cert, *other_cert;
static char good_ca[] = "/tmp/test_acme_http_good_XXXXXX";
static char other_ca[] = "/tmp/test_acme_http_other_XXXXXX";

/* Outside a test, where Check cannot report. */
static void need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "making the test's certificates: %s\n", what);
		ERR_print_errors_fp(stderr);
		exit(EXIT_FAILURE);
	}
}

static void make_cert(const char *sans, long serial, EVP_PKEY **key, X509 **cert, char *file)
{
	X509V3_CTX v3;
	X509_EXTENSION *ext;
	X509 *x = X509_new();
	FILE *f;
	int fd;

	*key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	need(*key != NULL, "key");
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, *key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "O", MBSTRING_ASC,
	                           (const unsigned char *)"ktlsd test", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509V3_set_ctx_nodb(&v3);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, sans);
	need(ext != NULL, sans);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	need(X509_sign(x, *key, EVP_sha256()) > 0, "sign");
	*cert = x;
	fd = mkstemp(file);
	need(fd >= 0, file);
	f = fdopen(fd, "w");
	need(f && PEM_write_X509(f, x), file);
	fclose(f);
}

struct server {
	int lfd;
	int port;
	SSL_CTX *ctx;
	const char *resp; /* sent whole once the request is in */
	size_t resp_len;
	bool silent;     /* read the request, then answer nothing */
	char req[16384]; /* the request as it came */
	size_t req_len;
	char sni[256];
	char alpn[64]; /* what the client offered, wire format */
	size_t alpn_len;
	pthread_t th;
};

static int alpn_seen(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
	struct server *s = arg;

	(void)ssl, (void)out, (void)outlen;
	if (inlen <= sizeof(s->alpn)) {
		memcpy(s->alpn, in, inlen);
		s->alpn_len = inlen;
	}
	return SSL_TLSEXT_ERR_NOACK;
}

static int listen_any(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Whether s->req holds a whole request: its head and Content-Length's
 * bytes. */
static bool request_in(const struct server *s)
{
	const char *end = memmem(s->req, s->req_len, "\r\n\r\n", 4);
	const char *cl = memmem(s->req, s->req_len, "Content-Length: ", 16);

	if (!end)
		return false;
	return !cl || cl > end ||
	       s->req_len >= (size_t)(end + 4 - s->req) + strtoul(cl + 16, NULL, 10);
}

static void *serve(void *arg)
{
	struct server *s = arg;
	int fd = accept(s->lfd, NULL, NULL);
	SSL *ssl;
	char buf[512];
	int n;

	if (fd < 0)
		return NULL;
	ssl = SSL_new(s->ctx);
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) == 1) {
		const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

		snprintf(s->sni, sizeof(s->sni), "%s", sni ? sni : "");
		while (!request_in(s) && (n = SSL_read(ssl, s->req + s->req_len,
		                                       sizeof(s->req) - 1 - s->req_len)) > 0)
			s->req_len += (size_t)n;
		s->req[s->req_len] = '\0';
		if (s->silent)
			while (SSL_read(ssl, buf, sizeof(buf)) > 0)
				;
		else if (s->resp_len)
			SSL_write(ssl, s->resp, (int)s->resp_len);
		SSL_shutdown(ssl);
	}
	SSL_free(ssl);
	close(fd);
	return NULL;
}

/* One server at a time; what it saw stays readable after server_stop. */
static struct server srv;

static struct server *server_start(X509 *cert, EVP_PKEY *key, const char *resp, size_t len,
                                   bool silent)
{
	struct server *s = &srv;

	memset(s, 0, sizeof(*s));

	s->ctx = SSL_CTX_new(TLS_server_method());
	ck_assert(SSL_CTX_use_certificate(s->ctx, cert));
	ck_assert(SSL_CTX_use_PrivateKey(s->ctx, key));
	SSL_CTX_set_alpn_select_cb(s->ctx, alpn_seen, s);
	s->silent = silent;
	s->resp = resp;
	s->resp_len = resp ? (len ? len : strlen(resp)) : 0;
	s->lfd = listen_any(&s->port);
	ck_assert_int_eq(pthread_create(&s->th, NULL, serve, s), 0);
	return s;
}

static void server_stop(struct server *s)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
	SSL_CTX_free(s->ctx);
}

static struct acme_http_client *client(const char *host, int port, const char *ca)
{
	char url[128], err[256];
	struct acme_http_client *c;

	snprintf(url, sizeof(url), "https://%s:%d/dir", host, port);
	c = acme_http_new(url, ca, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	return c;
}

static char url[256], err[256];
static struct acme_http_resp r;

/* One request to path on s, as 127.0.0.1 trusting the good CA. */
static int get(struct server *s, const char *method, const char *path, const char *body,
               int timeout_ms)
{
	struct acme_http_client *c = client("127.0.0.1", s->port, good_ca);
	int rc;

	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", s->port, path);
	err[0] = '\0';
	rc = acme_http_do(c, method, url, body, body ? strlen(body) : 0, timeout_ms, NULL, &r, err,
	                  sizeof(err));
	acme_http_free(c);
	return rc;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

START_TEST(t_content_length)
{
	struct server *s = server_start(good_cert, good_key,
	                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	                                "Replay-Nonce: abc-_1\r\nContent-Length: 13\r\n\r\n"
	                                "{\"ok\": true}\n",
	                                0, false);
	char want[128];

	ck_assert_msg(get(s, "GET", "/dir", NULL, 5000) == 0, "%s", err);
	server_stop(s);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "{\"ok\": true}\n");
	ck_assert_uint_eq(r.len, 13);
	ck_assert_str_eq(r.nonce, "abc-_1");
	ck_assert_str_eq(r.content_type, "application/json");
	ck_assert_str_eq(r.location, "");
	acme_http_resp_free(&r);
	/* What went out: the request line and the fields ACME asks for, no
	 * SNI for an address, ALPN http/1.1 only. */
	ck_assert_msg(strncmp(s->req, "GET /dir HTTP/1.1\r\n", 19) == 0, "%s", s->req);
	snprintf(want, sizeof(want), "\r\nHost: 127.0.0.1:%d\r\n", s->port);
	ck_assert_ptr_nonnull(strstr(s->req, want));
	ck_assert_ptr_nonnull(strstr(s->req, "\r\nUser-Agent: ktlsd/" PACKAGE_VERSION " acme\r\n"));
	ck_assert_ptr_nonnull(strstr(s->req, "\r\nConnection: close\r\n"));
	ck_assert_ptr_nonnull(strstr(s->req, "\r\nAccept: "));
	ck_assert_ptr_null(strstr(s->req, "Content-Type"));
	ck_assert_str_eq(s->sni, "");
	ck_assert_uint_eq(s->alpn_len, 9);
	ck_assert(memcmp(s->alpn, "\x08http/1.1", 9) == 0);
}
END_TEST

START_TEST(t_chunked)
{
	struct server *s =
	    server_start(good_cert, good_key,
	                 "HTTP/1.1 200 OK\r\nContent-Type: application/pem-certificate-chain\r\n"
	                 "Transfer-Encoding: chunked\r\n\r\n"
	                 "b\r\n-----BEGIN \r\n11\r\nCERTIFICATE-----\n\r\n3\r\nAAA\r\n0\r\n\r\n",
	                 0, false);

	ck_assert_msg(get(s, "GET", "/cert/1", NULL, 5000) == 0, "%s", err);
	server_stop(s);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "-----BEGIN CERTIFICATE-----\nAAA");
	ck_assert_str_eq(r.content_type, "application/pem-certificate-chain");
	acme_http_resp_free(&r);
}
END_TEST

START_TEST(t_to_close_notify)
{
	struct server *s =
	    server_start(good_cert, good_key, "HTTP/1.1 200 OK\r\n\r\nto the end", 0, false);

	ck_assert_msg(get(s, "GET", "/x", NULL, 5000) == 0, "%s", err);
	server_stop(s);
	ck_assert_str_eq(r.body, "to the end");
	acme_http_resp_free(&r);
}
END_TEST

START_TEST(t_fields)
{
	char resp[1024];
	struct server *s;

	snprintf(resp, sizeof(resp),
	         "HTTP/1.1 201 Created\r\nReplay-Nonce: n0nce\r\n"
	         "Location: https://127.0.0.1:1/acme/order/1\r\nRetry-After: 3\r\n"
	         "Link: <https://127.0.0.1:1/dir>;rel=\"index\", "
	         "<https://127.0.0.1:1/issuer>;rel=\"up\"\r\n"
	         "Content-Length: 2\r\n\r\n{}");
	s = server_start(good_cert, good_key, resp, 0, false);
	ck_assert_msg(get(s, "HEAD", "/new-nonce?x=1#frag", NULL, 5000) == 0, "%s", err);
	server_stop(s);
	ck_assert_int_eq(r.status, 201);
	ck_assert_str_eq(r.nonce, "n0nce");
	ck_assert_str_eq(r.location, "https://127.0.0.1:1/acme/order/1");
	ck_assert_str_eq(r.retry_after, "3");
	ck_assert_str_eq(r.link_up, "https://127.0.0.1:1/issuer");
	ck_assert_uint_eq(r.len, 0); /* HEAD */
	ck_assert_str_eq(r.body, "");
	acme_http_resp_free(&r);
	ck_assert_msg(strncmp(s->req, "HEAD /new-nonce?x=1 HTTP/1.1\r\n", 30) == 0, "%s", s->req);
}
END_TEST

START_TEST(t_post)
{
	static const char jws[] = "{\"protected\":\"eyJ\",\"payload\":\"\",\"signature\":\"c2ln\"}";
	struct server *s = server_start(good_cert, good_key,
	                                "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, false);
	char want[64];

	ck_assert_msg(get(s, "POST", "/acme/acct/1", jws, 5000) == 0, "%s", err);
	server_stop(s);
	acme_http_resp_free(&r);
	ck_assert_msg(strncmp(s->req, "POST /acme/acct/1 HTTP/1.1\r\n", 28) == 0, "%s", s->req);
	ck_assert_ptr_nonnull(strstr(s->req, "\r\nContent-Type: application/jose+json\r\n"));
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", strlen(jws));
	ck_assert_ptr_nonnull(strstr(s->req, want));
	ck_assert_uint_gt(s->req_len, strlen(jws));
	ck_assert_str_eq(s->req + s->req_len - strlen(jws), jws);
	ck_assert_ptr_nonnull(strstr(s->req, "\r\n\r\n{\"protected\""));
}
END_TEST

START_TEST(t_wrong_ca)
{
	struct server *s = server_start(good_cert, good_key, "HTTP/1.1 200 OK\r\n\r\n", 0, false);
	struct acme_http_client *c = client("127.0.0.1", s->port, other_ca);
	int rc;

	snprintf(url, sizeof(url), "https://127.0.0.1:%d/dir", s->port);
	rc = acme_http_do(c, "GET", url, NULL, 0, 5000, NULL, &r, err, sizeof(err));
	acme_http_free(c);
	server_stop(s);
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_null(r.body);
	ck_assert_msg(strncmp(err, "TLS: certificate verify failed: ", 32) == 0, "%s", err);
}
END_TEST

START_TEST(t_by_name)
{
	struct server *s = server_start(good_cert, good_key,
	                                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 0, false);
	struct acme_http_client *c = client("localhost", s->port, good_ca);
	int rc;

	/* The origin compares without regard to case or a trailing dot. */
	snprintf(url, sizeof(url), "https://LocalHost.:%d/dir", s->port);
	rc = acme_http_do(c, "GET", url, NULL, 0, 5000, NULL, &r, err, sizeof(err));
	acme_http_free(c);
	server_stop(s);
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_str_eq(r.body, "ok");
	acme_http_resp_free(&r);
	ck_assert_str_eq(s->sni, "localhost");

	/* A certificate without the name. */
	s = server_start(other_cert, other_key, "HTTP/1.1 200 OK\r\n\r\n", 0, false);
	c = client("localhost", s->port, other_ca);
	snprintf(url, sizeof(url), "https://localhost:%d/dir", s->port);
	rc = acme_http_do(c, "GET", url, NULL, 0, 5000, NULL, &r, err, sizeof(err));
	acme_http_free(c);
	server_stop(s);
	ck_assert_int_eq(rc, -EPROTO);
	ck_assert_str_eq(err, "TLS: certificate verify failed: hostname mismatch");
}
END_TEST

START_TEST(t_other_origin)
{
	struct acme_http_client *c = client("127.0.0.1", 14000, good_ca);
	static const char *const refused[] = {
	    "https://127.0.0.2:14000/dir",
	    "https://127.0.0.1:14001/dir",
	    "https://127.0.0.1/dir",
	    "http://127.0.0.1:14000/dir",
	    "https://evil@127.0.0.1:14000/dir",
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		int rc =
		    acme_http_do(c, "GET", refused[i], NULL, 0, 500, NULL, &r, err, sizeof(err));

		ck_assert_msg(rc == (i < 4 ? -EPERM : -EINVAL), "%s: %d", refused[i], rc);
		ck_assert_ptr_nonnull(strstr(err, refused[i]));
	}
	ck_assert_int_eq(acme_http_do(c, "GET", "https://127.0.0.1:14000/a b", NULL, 0, 500, NULL,
	                              &r, err, sizeof(err)),
	                 -EINVAL);
	ck_assert_int_eq(acme_http_do(c, "PUT", "https://127.0.0.1:14000/dir", NULL, 0, 500, NULL,
	                              &r, err, sizeof(err)),
	                 -EINVAL);
	acme_http_free(c);
	/* The default port is the same origin as :443. */
	c = client("127.0.0.1", 443, good_ca);
	ck_assert_int_ne(
	    acme_http_do(c, "GET", "https://127.0.0.1/dir", NULL, 0, 1, NULL, &r, err, sizeof(err)),
	    -EPERM);
	acme_http_free(c);
}
END_TEST

START_TEST(t_new_refuses)
{
	char e[256];

	ck_assert_ptr_null(acme_http_new("http://127.0.0.1:14000/dir", NULL, e, sizeof(e)));
	ck_assert_str_eq(e, "http://127.0.0.1:14000/dir: not an https:// URL");
	ck_assert_ptr_null(acme_http_new("https://127.0.0.1:99999/dir", NULL, e, sizeof(e)));
	ck_assert_ptr_null(
	    acme_http_new("https://127.0.0.1/dir", "/nonexistent/ca.pem", e, sizeof(e)));
	ck_assert_msg(strncmp(e, "CA file /nonexistent/ca.pem: ", 29) == 0, "%s", e);
}
END_TEST

START_TEST(t_timeout)
{
	struct timespec t0;
	struct acme_http_client *c;
	int port, lfd = listen_any(&port), rc;

	/* Listening, never accepting: the kernel completes the connection,
	 * the ClientHello gets no answer. */
	c = client("127.0.0.1", port, good_ca);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/dir", port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = acme_http_do(c, "GET", url, NULL, 0, 500, NULL, &r, err, sizeof(err));
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_str_eq(err, "TLS: timed out");
	ck_assert_int_ge(elapsed_ms(&t0), 450);
	ck_assert_int_lt(elapsed_ms(&t0), 2000);
	acme_http_free(c);
	close(lfd);

	/* A handshake, then silence. */
	struct server *s = server_start(good_cert, good_key, NULL, 0, true);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = get(s, "GET", "/dir", NULL, 500);
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_str_eq(err, "response: timed out");
	ck_assert_int_lt(elapsed_ms(&t0), 2000);
	server_stop(s);
}
END_TEST

static volatile bool stop_flag;

static void *raise_stop(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	stop_flag = true;
	return NULL;
}

START_TEST(t_stop)
{
	struct server *s = server_start(good_cert, good_key, NULL, 0, true);
	struct acme_http_client *c = client("127.0.0.1", s->port, good_ca);
	struct timespec t0;
	pthread_t th;
	int rc;

	stop_flag = false;
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/dir", s->port);
	ck_assert_int_eq(pthread_create(&th, NULL, raise_stop, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = acme_http_do(c, "GET", url, NULL, 0, 10000, &stop_flag, &r, err, sizeof(err));
	ck_assert_int_eq(rc, -ECANCELED);
	ck_assert_str_eq(err, "response: stopped");
	ck_assert_int_lt(elapsed_ms(&t0), 2000); /* not the 10 s timeout */
	pthread_join(th, NULL);
	/* Raised before: nothing is tried. */
	rc = acme_http_do(c, "GET", url, NULL, 0, 10000, &stop_flag, &r, err, sizeof(err));
	ck_assert_int_eq(rc, -ECANCELED);
	ck_assert_str_eq(err, "connect: stopped");
	acme_http_free(c);
	server_stop(s);
}
END_TEST

START_TEST(t_too_big)
{
	struct server *s =
	    server_start(good_cert, good_key,
	                 "HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\nxxxx", 0, false);

	ck_assert_int_eq(get(s, "GET", "/big", NULL, 5000), -EMSGSIZE);
	ck_assert_str_eq(err, "response: over 1 MiB");
	ck_assert_ptr_null(r.body);
	server_stop(s);

	/* Sent, not announced: chunks past the cap. */
	size_t n = 0, cap = ACME_HTTP_BODY_MAX + (128 << 10);
	char *big = malloc(cap + 4096);

	n += (size_t)sprintf(big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
	while (n < cap) {
		n += (size_t)sprintf(big + n, "4000\r\n");
		memset(big + n, 'z', 0x4000);
		n += 0x4000;
		n += (size_t)sprintf(big + n, "\r\n");
	}
	n += (size_t)sprintf(big + n, "0\r\n\r\n");
	s = server_start(good_cert, good_key, big, n, false);
	ck_assert_int_eq(get(s, "GET", "/big", NULL, 5000), -EMSGSIZE);
	ck_assert_str_eq(err, "response: over 1 MiB");
	server_stop(s);
	free(big);
}
END_TEST

START_TEST(t_refused)
{
	int port, lfd = listen_any(&port);
	struct acme_http_client *c;
	char want[64];
	int rc;

	close(lfd); /* a port nobody listens on */
	c = client("127.0.0.1", port, good_ca);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/dir", port);
	rc = acme_http_do(c, "GET", url, NULL, 0, 2000, NULL, &r, err, sizeof(err));
	acme_http_free(c);
	ck_assert_int_eq(rc, -ECONNREFUSED);
	snprintf(want, sizeof(want), "connect 127.0.0.1:%d: Connection refused", port);
	ck_assert_str_eq(err, want);
}
END_TEST

static Suite *acme_http_suite(void)
{
	Suite *s = suite_create("acme_http");
	TCase *tc = tcase_create("exchange");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, t_content_length);
	tcase_add_test(tc, t_chunked);
	tcase_add_test(tc, t_to_close_notify);
	tcase_add_test(tc, t_fields);
	tcase_add_test(tc, t_post);
	tcase_add_test(tc, t_wrong_ca);
	tcase_add_test(tc, t_by_name);
	tcase_add_test(tc, t_other_origin);
	tcase_add_test(tc, t_new_refuses);
	tcase_add_test(tc, t_timeout);
	tcase_add_test(tc, t_stop);
	tcase_add_test(tc, t_too_big);
	tcase_add_test(tc, t_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int rc;

	/* A server thread writing to a client that left must not end the
	 * test (ktlsd ignores SIGPIPE for the same reason: signals.c). */
	signal(SIGPIPE, SIG_IGN);
	make_cert("IP:127.0.0.1, DNS:localhost", 1, &good_key, &good_cert, good_ca);
	make_cert("IP:127.0.0.1", 2, &other_key, &other_cert, other_ca);
	rc = check_run(acme_http_suite());
	unlink(good_ca);
	unlink(other_ca);
	X509_free(good_cert);
	X509_free(other_cert);
	EVP_PKEY_free(good_key);
	EVP_PKEY_free(other_key);
	return rc;
}
