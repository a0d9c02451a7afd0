/* Tests ktls/tls_acme.c, and the ClientHello switch in ktls/tls.c that uses
 * it, through whole handshakes in memory: a worker's context from
 * tls_server_new over the ring BIO (tls_bio.c), a client on memory BIOs.
 *
 * A client that offers acme-tls/1 alone with SNI gets the challenge
 * certificate and acme-tls/1; one that also offers h2, or names no
 * challenge, or sends no SNI, or comes while none is pending, gets the
 * site's context (and no_application_protocol for acme-tls/1 alone); no
 * ticket is issued or taken on a challenge handshake; the challenge
 * context's references come and go with the handshake. */
#include <check.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "ktls/tls.h"
#include "ktls/tls_acme.h"
#include "tests/unit/check_run.h"

/* A self-signed P-256 certificate for name, and its key. */
static void make_cert(const char *name, X509 **cert, EVP_PKEY **key)
{
	char san[300];

	*key = EVP_EC_gen("P-256");
	ck_assert_ptr_nonnull(*key);
	*cert = X509_new();
	ck_assert_ptr_nonnull(*cert);
	X509_set_version(*cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(*cert), 1);
	X509_gmtime_adj(X509_getm_notBefore(*cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(*cert), 7 * 86400);
	X509_NAME *subject = X509_get_subject_name(*cert);
	X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, (const unsigned char *)name, -1,
				   -1, 0);
	X509_set_issuer_name(*cert, subject);
	X509_set_pubkey(*cert, *key);
	snprintf(san, sizeof(san), "DNS:%s", name);
	X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);
	ck_assert_ptr_nonnull(ext);
	X509_add_ext(*cert, ext, -1);
	X509_EXTENSION_free(ext);
	ck_assert_int_gt(X509_sign(*cert, *key, EVP_sha256()), 0);
}

static char *pem_of(BIO *b, size_t *len)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *out = malloc((size_t)n);
	ck_assert_ptr_nonnull(out);
	memcpy(out, data, (size_t)n);
	*len = (size_t)n;
	BIO_free(b);
	return out;
}

/* A site's certificate pair for name, as the server reads one. */
static void make_pair(const char *name, struct tls_cert_pair *p)
{
	X509 *cert;
	EVP_PKEY *key;
	BIO *c = BIO_new(BIO_s_mem()), *k = BIO_new(BIO_s_mem());

	make_cert(name, &cert, &key);
	ck_assert(PEM_write_bio_X509(c, cert));
	ck_assert(PEM_write_bio_PrivateKey(k, key, NULL, NULL, 0, NULL, NULL));
	memset(p, 0, sizeof(*p));
	p->cert_file = p->key_file = name;
	p->cert_pem = pem_of(c, &p->cert_len);
	p->key_pem = pem_of(k, &p->key_len);
	X509_free(cert);
	EVP_PKEY_free(key);
}

/* ---- the challenge table the server asks (server/core/acme_chal.c's part) ---- */

static bool pending;       /* acme_active's answer */
static SSL_CTX *chal_ctx;  /* for "acme.test" */
static int asked;          /* calls of acme_ctx_of */
static int ctx_index = -1, ctx_freed;

static bool test_active(void)
{
	return pending;
}

static SSL_CTX *test_ctx_of(const void *arg, const char *name, size_t len)
{
	(void)arg;
	asked++;
	if (len != 9 || strncasecmp(name, "acme.test", 9) != 0)
		return NULL;
	ck_assert(SSL_CTX_up_ref(chal_ctx));
	return chal_ctx;
}

static void ctx_free_cb(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
			void *argp)
{
	(void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
	if (ptr)
		ctx_freed++;
}

static int site_of(const void *arg, const char *name, size_t len)
{
	(void)arg;
	return len == 6 && strncasecmp(name, "b.test", 6) == 0 ? 1 : -1;
}

/* ---- a server with one or two sites, and the challenge for acme.test ---- */

static struct tls_cert_pair pairs[2];
static struct tls_site sites[2];
static struct tls_server *server;

static void setup(size_t nsites, bool acme)
{
	X509 *cert;
	EVP_PKEY *key;
	char err[256];
	struct tls_settings s = {
	    .sites = sites,
	    .nsites = nsites,
	    .site_of = site_of,
	    .protocols = "TLSv1.2 TLSv1.3",
	    .session_tickets = true,
	    .ticket_rotate_s = 3600,
	    .h2 = true,
	};

	make_pair("a.test", &pairs[0]);
	make_pair("b.test", &pairs[1]);
	sites[0] = (struct tls_site){.certs = &pairs[0], .ncerts = 1};
	sites[1] = (struct tls_site){.certs = &pairs[1], .ncerts = 1, .name = "b"};
	memset(s.ticket_master, 7, sizeof(s.ticket_master));
	if (acme) {
		s.acme_active = test_active;
		s.acme_ctx_of = test_ctx_of;
	}
	ck_assert_int_eq(tls_server_new(&server, &s, err, sizeof(err)), 0);

	make_cert("acme.test", &cert, &key);
	chal_ctx = tls_acme_ctx_new(cert, key, err, sizeof(err));
	ck_assert_msg(chal_ctx != NULL, "%s", err);
	X509_free(cert); /* the context has its own */
	EVP_PKEY_free(key);
	if (ctx_index < 0)
		ctx_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, ctx_free_cb);
	SSL_CTX_set_ex_data(chal_ctx, ctx_index, chal_ctx);
	pending = true;
	asked = 0;
	ctx_freed = 0;
}

static void teardown(void)
{
	tls_server_put(server);
	SSL_CTX_free(chal_ctx);
	for (int i = 0; i < 2; i++)
		tls_pem_release(&pairs[i]);
}

/* ---- one handshake ---- */

struct hs {
	SSL *client, *server;
	struct tls_wire wire;
	char rx[1 << 16];
	int alert;             /* the last alert the client read (its description) */
	int tickets;           /* tickets the client was given */
	bool ok;
};

static void client_info(const SSL *ssl, int where, int ret)
{
	struct hs *h = SSL_get_app_data(ssl);
	if (where & SSL_CB_READ_ALERT)
		h->alert = ret & 0xff;
}

static int client_new_session(SSL *ssl, SSL_SESSION *sess)
{
	struct hs *h = SSL_get_app_data(ssl);
	if (SSL_SESSION_has_ticket(sess))
		h->tickets++;
	return 0;
}

/* Moves what the client wrote to the server's rx, and back. */
static void shuttle(struct hs *h)
{
	char buf[1 << 14];
	int n;

	while ((n = BIO_read(SSL_get_wbio(h->client), buf, sizeof(buf))) > 0) {
		if (h->wire.rx_start == h->wire.rx_end)
			h->wire.rx_start = h->wire.rx_end = 0;
		ck_assert_uint_le(h->wire.rx_end + (size_t)n, sizeof(h->rx));
		memcpy(h->rx + h->wire.rx_end, buf, (size_t)n);
		h->wire.rx_end += (size_t)n;
	}
	if (h->wire.tx_len) {
		ck_assert_int_eq(BIO_write(SSL_get_rbio(h->client), h->wire.tx, (int)h->wire.tx_len),
				 (int)h->wire.tx_len);
		h->wire.tx_len = 0;
	}
}

/* A handshake from a client that sends sni (NULL: none) and offers alpn
 * (wire format), up to max_version, resuming sess (NULL: none). */
static void handshake(struct hs *h, const char *sni, const char *alpn, size_t alpn_len,
		      int max_version, SSL_SESSION *sess)
{
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());

	memset(h, 0, sizeof(*h));
	h->wire.fd = -1;
	h->wire.rx = h->rx;
	ck_assert_ptr_nonnull(cctx);
	SSL_CTX_set_max_proto_version(cctx, max_version);
	SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
	SSL_CTX_sess_set_new_cb(cctx, client_new_session);
	h->client = SSL_new(cctx);
	SSL_CTX_free(cctx);
	SSL_set_app_data(h->client, h);
	SSL_set_info_callback(h->client, client_info);
	SSL_set_bio(h->client, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	SSL_set_connect_state(h->client);
	if (sni)
		ck_assert(SSL_set_tlsext_host_name(h->client, sni));
	if (alpn)
		ck_assert_int_eq(SSL_set_alpn_protos(h->client, (const unsigned char *)alpn,
						     (unsigned)alpn_len), 0);
	if (sess)
		ck_assert(SSL_set_session(h->client, sess));
	h->server = tls_conn_new(server, &h->wire);
	ck_assert_ptr_nonnull(h->server);

	bool client_done = false, server_done = false;
	for (int round = 0; round < 20 && !(client_done && server_done); round++) {
		if (!client_done) {
			int rc = SSL_do_handshake(h->client);
			if (rc == 1)
				client_done = true;
			else if (SSL_get_error(h->client, rc) != SSL_ERROR_WANT_READ)
				break;
		}
		shuttle(h);
		if (!server_done) {
			enum tls_status st = tls_handshake(h->server);
			if (st == TLS_DONE)
				server_done = true;
			else if (st != TLS_WANT_READ) {
				shuttle(h); /* its alert */
				SSL_do_handshake(h->client);
				break;
			}
		}
		shuttle(h);
	}
	h->ok = client_done && server_done;
	ERR_clear_error();
	if (h->ok) { /* TLS 1.3's tickets come after the handshake */
		char c;
		ck_assert_int_le(SSL_read(h->client, &c, 1), 0);
		ck_assert_int_eq(SSL_get_error(h->client, -1), SSL_ERROR_WANT_READ);
	}
}

static void hs_free(struct hs *h)
{
	/* As if closed cleanly: SSL_free marks the session of a connection
	 * that was not as one never to resume (ssl_clear_bad_session). */
	if (h->ok)
		SSL_set_shutdown(h->client, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(h->client);
	SSL_free(h->server);
	tls_server_put(server); /* tls_conn_new's reference */
	h->wire.tx_len = 0;
	tls_wire_release_tx(&h->wire);
	tls_wire_free_ctrl(&h->wire);
}

/* The CN of the certificate the client was shown. */
static const char *peer_cn(const struct hs *h, char *buf, size_t len)
{
	X509 *peer = SSL_get1_peer_certificate(h->client);

	ck_assert_ptr_nonnull(peer);
	X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, (int)len);
	X509_free(peer);
	return buf;
}

static const char *alpn_of(const struct hs *h, char *buf)
{
	const unsigned char *p;
	unsigned len;

	SSL_get0_alpn_selected(h->client, &p, &len);
	memcpy(buf, p, len);
	buf[len] = '\0';
	return buf;
}

#define ACME_ONLY "\x0a" "acme-tls/1"
#define ACME_AND_H2 "\x02h2\x0a" "acme-tls/1"
#define H2 "\x02h2"

START_TEST(test_validation_gets_challenge)
{
	char cn[64], alpn[32];
	struct hs h;

	setup(1, true);
	for (int v = 0; v < 2; v++) {
		handshake(&h, "ACME.test", ACME_ONLY, sizeof(ACME_ONLY) - 1,
			  v ? TLS1_2_VERSION : TLS1_3_VERSION, NULL);
		ck_assert(h.ok);
		ck_assert_str_eq(peer_cn(&h, cn, sizeof(cn)), "acme.test");
		ck_assert_str_eq(alpn_of(&h, alpn), "acme-tls/1");
		ck_assert_str_eq(SSL_get_version(h.client), v ? "TLSv1.2" : "TLSv1.3");
		ck_assert_int_eq(h.tickets, 0); /* nothing to resume a challenge by */
		/* The handshake holds the context: the table may drop it. */
		ck_assert_int_eq(ctx_freed, 0);
		hs_free(&h);
	}
	ck_assert_int_eq(asked, 2);
	/* Each handshake let go of what acme_ctx_of gave: ours is the last. */
	SSL_CTX_free(chal_ctx);
	ck_assert_int_eq(ctx_freed, 1);
	chal_ctx = NULL;
	teardown();
}
END_TEST

/* A client that offers another protocol too is an ordinary one, even for
 * a name with a challenge pending: the site's certificate and its ALPN. */
START_TEST(test_acme_among_others_is_ordinary)
{
	char cn[64], alpn[32];
	struct hs h;

	setup(1, true);
	handshake(&h, "acme.test", ACME_AND_H2, sizeof(ACME_AND_H2) - 1, TLS1_3_VERSION, NULL);
	ck_assert(h.ok);
	ck_assert_str_eq(peer_cn(&h, cn, sizeof(cn)), "a.test");
	ck_assert_str_eq(alpn_of(&h, alpn), "h2");
	ck_assert_int_eq(h.tickets, 1); /* the site's handshake, as it always was */
	hs_free(&h);
	ck_assert_int_eq(asked, 0);
	teardown();
}
END_TEST

/* acme-tls/1 alone where nothing answers it: the site's context refuses it
 * with no_application_protocol (RFC 7301 3.2), as it always did. */
START_TEST(test_no_challenge_refused)
{
	struct hs h;

	setup(1, true);
	handshake(&h, "other.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(!h.ok);
	ck_assert_int_eq(h.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
	hs_free(&h);
	ck_assert_int_eq(asked, 1);
	/* No SNI: no name to validate, nothing asked. */
	handshake(&h, NULL, ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(!h.ok);
	ck_assert_int_eq(h.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
	hs_free(&h);
	ck_assert_int_eq(asked, 1);
	/* Nothing pending: not even asked, for the name that had one. */
	pending = false;
	handshake(&h, "acme.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(!h.ok);
	ck_assert_int_eq(h.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
	hs_free(&h);
	ck_assert_int_eq(asked, 1);
	teardown();
}
END_TEST

/* Without the hooks (no site gets its certificate by ACME), acme-tls/1 is
 * refused whatever the client names. */
START_TEST(test_without_hooks)
{
	struct hs h;

	setup(1, false);
	handshake(&h, "acme.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(!h.ok);
	ck_assert_int_eq(h.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
	hs_free(&h);
	ck_assert_int_eq(asked, 0);
	teardown();
}
END_TEST

/* With several sites the switch by SNI goes on as before, beside the
 * challenge's. */
START_TEST(test_sites_and_challenge)
{
	char cn[64], alpn[32];
	struct hs h;

	setup(2, true);
	handshake(&h, "b.test", H2, sizeof(H2) - 1, TLS1_3_VERSION, NULL);
	ck_assert(h.ok);
	ck_assert_str_eq(peer_cn(&h, cn, sizeof(cn)), "b.test");
	ck_assert_str_eq(alpn_of(&h, alpn), "h2");
	hs_free(&h);
	handshake(&h, "acme.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(h.ok);
	ck_assert_str_eq(peer_cn(&h, cn, sizeof(cn)), "acme.test");
	ck_assert_str_eq(alpn_of(&h, alpn), "acme-tls/1");
	hs_free(&h);
	/* A site's name, acme-tls/1 alone, no challenge for it: refused. */
	handshake(&h, "b.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, TLS1_3_VERSION, NULL);
	ck_assert(!h.ok);
	ck_assert_int_eq(h.alert, SSL_AD_NO_APPLICATION_PROTOCOL);
	hs_free(&h);
	teardown();
}
END_TEST

/* A site's session offered on a validation: no resumption (the ticket is
 * not even opened: the challenge context has no ticket keys), a full
 * handshake with the challenge certificate. */
START_TEST(test_site_ticket_not_taken)
{
	char cn[64];
	struct hs h;

	setup(1, true);
	for (int v = 0; v < 2; v++) {
		int max = v ? TLS1_2_VERSION : TLS1_3_VERSION;
		handshake(&h, "acme.test", H2, sizeof(H2) - 1, max, NULL);
		ck_assert(h.ok);
		SSL_SESSION *sess = SSL_get1_session(h.client);
		ck_assert_ptr_nonnull(sess);
		ck_assert(SSL_SESSION_is_resumable(sess));
		hs_free(&h);
		/* The site resumes it ... */
		handshake(&h, "acme.test", H2, sizeof(H2) - 1, max, sess);
		ck_assert(h.ok);
		ck_assert_msg(SSL_session_reused(h.client), "TLS 1.%d", v ? 2 : 3);
		hs_free(&h);
		/* ... a validation does not. */
		handshake(&h, "acme.test", ACME_ONLY, sizeof(ACME_ONLY) - 1, max, sess);
		ck_assert(h.ok);
		ck_assert(!SSL_session_reused(h.client));
		ck_assert_str_eq(peer_cn(&h, cn, sizeof(cn)), "acme.test");
		hs_free(&h);
		SSL_SESSION_free(sess);
	}
	teardown();
}
END_TEST

START_TEST(test_ctx_new_refuses)
{
	X509 *cert, *other;
	EVP_PKEY *key, *other_key;
	char err[256];

	make_cert("a.test", &cert, &key);
	make_cert("b.test", &other, &other_key);
	ck_assert_ptr_null(tls_acme_ctx_new(NULL, key, err, sizeof(err)));
	ck_assert_str_eq(err, "TLS-ALPN-01 context: no certificate");
	ck_assert_ptr_null(tls_acme_ctx_new(cert, NULL, err, sizeof(err)));
	ck_assert_str_eq(err, "TLS-ALPN-01 context: no key");
	ck_assert_ptr_null(tls_acme_ctx_new(cert, other_key, err, sizeof(err)));
	ck_assert_msg(strncmp(err, "TLS-ALPN-01 context: key: ", 26) == 0, "%s", err);
	SSL_CTX *ctx = tls_acme_ctx_new(cert, key, err, sizeof(err));
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
	ck_assert_int_eq(SSL_CTX_get_max_proto_version(ctx), TLS1_3_VERSION);
	ck_assert(SSL_CTX_get_options(ctx) & SSL_OP_NO_TICKET);
	ck_assert_uint_eq(SSL_CTX_get_num_tickets(ctx), 0);
	ck_assert_int_eq(SSL_CTX_get_session_cache_mode(ctx), SSL_SESS_CACHE_OFF);
	SSL_CTX_free(ctx);
	X509_free(cert);
	X509_free(other);
	EVP_PKEY_free(key);
	EVP_PKEY_free(other_key);
}
END_TEST

static Suite *tls_acme_suite(void)
{
	Suite *s = suite_create("tls_acme");
	TCase *tc = tcase_create("ktls");

	tcase_add_test(tc, test_validation_gets_challenge);
	tcase_add_test(tc, test_acme_among_others_is_ordinary);
	tcase_add_test(tc, test_no_challenge_refused);
	tcase_add_test(tc, test_without_hooks);
	tcase_add_test(tc, test_sites_and_challenge);
	tcase_add_test(tc, test_site_ticket_not_taken);
	tcase_add_test(tc, test_ctx_new_refuses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(tls_acme_suite());
}
