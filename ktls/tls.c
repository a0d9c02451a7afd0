#include "ktls/tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "ktls/tls_acme.h"
#include "ktls/tls_seal.h"

/* The keys of one rotation period, derived once: OpenSSL 3.0's one-shot
 * HMAC fetches and builds a MAC each call, and three of them per ticket
 * were a tenth of a resumed handshake's CPU. */
struct ticket_keys {
	uint64_t epoch;
	bool set;
	unsigned char name[16];
	uint8_t aes[32], mac[32];
};

struct tls_server {
	unsigned refs;                   /* the worker's, and one per connection */
	SSL_CTX *ctx;                    /* the first site's: every handshake starts in it */
	SSL_CTX **site_ctx;              /* one per site, [0] being ctx */
	size_t nsites;
	int (*site_of)(const void *arg, const char *name, size_t len);
	const void *site_arg;
	bool (*acme_active)(void);
	SSL_CTX *(*acme_ctx_of)(const void *arg, const char *name, size_t len);
	bool h2;
	unsigned ticket_rotate_s;
	uint64_t rekey_records;
	uint8_t ticket_master[TLS_TICKET_MASTER_LEN];
	struct ticket_keys keys[2];      /* by epoch parity: the current and the previous */
	EVP_CIPHER *ticket_cipher;       /* fetched once */
	EVP_CIPHER *ticket_cipher128;    /* for 48-byte file keys */
	struct tls_ticket_key file_keys[TLS_TICKET_FILE_KEYS_MAX];
	size_t nfile_keys;
};

/* Ticket names carry the epoch they were made in, so decryption finds the key
 * without any table: name = epoch (8 bytes, big endian) || 8 bytes of
 * HMAC(master, "name" || epoch), which also rejects forged names cheaply. */
static void ticket_derive(const struct tls_server *srv, uint64_t epoch, const char *label,
			  uint8_t out[32])
{
	uint8_t msg[16];
	unsigned len = 32;
	size_t ll = strlen(label);

	memset(msg, 0, sizeof(msg));
	memcpy(msg, label, ll > 8 ? 8 : ll);
	for (int i = 0; i < 8; i++)
		msg[8 + i] = (uint8_t)(epoch >> (56 - 8 * i));
	HMAC(EVP_sha256(), srv->ticket_master, sizeof(srv->ticket_master), msg, sizeof(msg), out,
	     &len);
}

static void ticket_name(const struct tls_server *srv, uint64_t epoch, unsigned char name[16])
{
	uint8_t tag[32];
	ticket_derive(srv, epoch, "name", tag);
	for (int i = 0; i < 8; i++)
		name[i] = (unsigned char)(epoch >> (56 - 8 * i));
	memcpy(name + 8, tag, 8);
}

static const struct ticket_keys *keys_of(struct tls_server *srv, uint64_t epoch)
{
	struct ticket_keys *k = &srv->keys[epoch & 1];

	if (!k->set || k->epoch != epoch) {
		k->epoch = epoch;
		ticket_name(srv, epoch, k->name);
		ticket_derive(srv, epoch, "aes", k->aes);
		ticket_derive(srv, epoch, "mac", k->mac);
		k->set = true;
	}
	return k;
}

static int init_ticket_ctx(EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *mctx, const EVP_CIPHER *cipher,
			   const uint8_t *aes, const uint8_t *mac, size_t mac_len,
			   const unsigned char *iv, int enc)
{
	char digest[] = "SHA256";
	OSSL_PARAM params[2] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
		OSSL_PARAM_construct_end(),
	};

	return EVP_CipherInit_ex(cctx, cipher, NULL, aes, iv, enc) &&
	       EVP_MAC_CTX_set_params(mctx, params) && EVP_MAC_init(mctx, mac, mac_len, NULL);
}

/* Keys from --tls-ticket-key-file, as nginx uses them: the first encrypts,
 * any decrypts, and a ticket is renewed when TLS 1.3 (tickets are for one
 * use) or when it was sealed with another key than the first. */
static int file_ticket_cb(struct tls_server *srv, SSL *ssl, unsigned char key_name[16],
			  unsigned char iv[16], EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *mctx, int enc)
{
	size_t i = 0;

	if (enc) {
		memcpy(key_name, srv->file_keys[0].name, 16);
		if (RAND_bytes(iv, 16) <= 0)
			return -1;
	} else {
		while (i < srv->nfile_keys && CRYPTO_memcmp(srv->file_keys[i].name, key_name, 16))
			i++;
		if (i == srv->nfile_keys)
			return 0;
	}
	const struct tls_ticket_key *k = &srv->file_keys[i];
	if (!init_ticket_ctx(cctx, mctx, k->aes256 ? srv->ticket_cipher : srv->ticket_cipher128,
			     k->aes, k->mac, k->aes256 ? 32 : 16, iv, enc))
		return -1;
	if (enc)
		return 1;
	return i == 0 && SSL_version(ssl) < TLS1_3_VERSION ? 1 : 2;
}

static int ticket_key_cb(SSL *ssl, unsigned char key_name[16], unsigned char iv[16],
			 EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *mctx, int enc)
{
	struct tls_server *srv = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	if (srv->nfile_keys > 0)
		return file_ticket_cb(srv, ssl, key_name, iv, cctx, mctx, enc);
	uint64_t now_epoch = (uint64_t)time(NULL) / srv->ticket_rotate_s;
	const struct ticket_keys *k;
	uint64_t epoch;

	if (enc) {
		epoch = now_epoch;
		k = keys_of(srv, epoch);
		memcpy(key_name, k->name, 16);
		if (RAND_bytes(iv, 16) <= 0)
			return -1;
	} else {
		epoch = 0;
		for (int i = 0; i < 8; i++)
			epoch = (epoch << 8) | key_name[i];
		/* Keys live two rotation periods: the current and the previous. */
		if (epoch != now_epoch && epoch + 1 != now_epoch)
			return 0;
		k = keys_of(srv, epoch);
		if (CRYPTO_memcmp(k->name, key_name, 16) != 0)
			return 0;
	}
	if (!init_ticket_ctx(cctx, mctx, srv->ticket_cipher, k->aes, k->mac, sizeof(k->mac), iv,
			     enc))
		return -1;
	/* 2: valid, and OpenSSL issues a fresh ticket. Always so for TLS 1.3,
	 * whose tickets are meant for one use (RFC 8446 C.4): with 1 OpenSSL
	 * sends no new ticket after a resumption and a client that uses each
	 * ticket once (browsers) would get a full handshake every other time.
	 * For TLS 1.2, only when the key is from the previous period. */
	if (enc)
		return 1;
	return epoch == now_epoch && SSL_version(ssl) < TLS1_3_VERSION ? 1 : 2;
}

int tls_ticket_key_parse(const char *path, const char *buf, size_t n, struct tls_ticket_key *k,
			 char *err, size_t errlen)
{
	int rc = 0;

	if (n != 48 && n != 80) {
		snprintf(err, errlen, "tls-ticket-key-file %s: must be 48 or 80 bytes (as nginx's)",
			 path);
		rc = -EINVAL;
	} else {
		memset(k, 0, sizeof(*k));
		memcpy(k->name, buf, 16);
		k->aes256 = n == 80;
		if (k->aes256) {
			memcpy(k->mac, buf + 16, 32);
			memcpy(k->aes, buf + 48, 32);
		} else {
			memcpy(k->aes, buf + 16, 16);
			memcpy(k->mac, buf + 32, 16);
		}
	}
	return rc;
}

/* Offers, in our order of preference, what the client also offers. A
 * client that offers ALPN but nothing we speak gets the fatal
 * no_application_protocol alert (RFC 7301 3.2) instead of a connection on
 * which it would speak a protocol we do not. A client that offers no ALPN at
 * all never reaches this callback and speaks HTTP/1.x. "http/1.0" is listed
 * because we do speak it and curl --http1.0 offers only that. */
static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned inlen, void *arg)
{
	const struct tls_server *srv = arg;
	static const unsigned char h2_h1[] = "\x02h2\x08http/1.1\x08http/1.0";
	static const unsigned char h1[] = "\x08http/1.1\x08http/1.0";
	const unsigned char *ours = srv->h2 ? h2_h1 : h1;
	unsigned ourslen = srv->h2 ? sizeof(h2_h1) - 1 : sizeof(h1) - 1;

	/* OpenSSL 3.0 answers ALERT_FATAL from this callback with the
	 * no_application_protocol alert, whatever *al would say. */
	if (SSL_select_next_proto((unsigned char **)out, outlen, ours, ourslen, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

static int parse_protocols(const char *text, int *min, int *max)
{
	*min = 0;
	*max = 0;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *save, *tok = strtok_r(buf, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
		int v;
		if (strcmp(tok, "TLSv1.2") == 0)
			v = TLS1_2_VERSION;
		else if (strcmp(tok, "TLSv1.3") == 0)
			v = TLS1_3_VERSION;
		else
			return -EINVAL;
		if (!*min || v < *min)
			*min = v;
		if (v > *max)
			*max = v;
	}
	return *min ? 0 : -EINVAL;
}

const char *tls_last_error(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();
	if (!e)
		snprintf(buf, len, "unknown error");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		snprintf(err, errlen, __VA_ARGS__);                                                \
		goto fail;                                                                         \
	} while (0)

/* Sessions are bound to their site (RFC 6066 3, and CVE-2014-3616 in
 * nginx): each site's context gets its own session id context, which
 * OpenSSL compares before it resumes one. The top-level site keeps the
 * name it had before there were sites, so its tickets stay valid. */
static int set_sid_ctx(SSL_CTX *ctx, const char *name)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char buf[128];

	if (!name)
		return SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"ktlsd", 5);
	int n = snprintf(buf, sizeof(buf), "ktlsd site %s", name);
	SHA256((const unsigned char *)buf, (size_t)n, md);
	return SSL_CTX_set_session_id_context(ctx, md, SSL_MAX_SID_CTX_LENGTH);
}

/* Moves a handshake to the context of the site its SNI names, before
 * OpenSSL looks at anything else of the ClientHello: the certificate,
 * and also the session it may resume, are then the site's. Or to an ACME
 * challenge's: while none is pending, that costs one relaxed load. */
static int client_hello_cb(SSL *ssl, int *al, void *arg)
{
	const struct tls_server *srv = arg;
	bool acme = srv->acme_ctx_of && srv->acme_active();
	bool sites = srv->nsites > 1 && srv->site_of;
	SSL_CTX *ctx;
	const unsigned char *p;
	size_t len, n;

	(void)al;
	if (!acme && !sites)
		return SSL_CLIENT_HELLO_SUCCESS;
	if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len) || len < 5 ||
	    (size_t)(p[0] << 8 | p[1]) + 2 != len || p[2] != TLSEXT_NAMETYPE_host_name)
		return SSL_CLIENT_HELLO_SUCCESS; /* OpenSSL judges a malformed one itself */
	n = (size_t)(p[3] << 8 | p[4]);
	if (n + 5 > len)
		return SSL_CLIENT_HELLO_SUCCESS;
	/* A TLS-ALPN-01 validation. Without a challenge for the name the
	 * site's context refuses acme-tls/1 (no_application_protocol). */
	if (acme && tls_acme_offered_only(ssl) &&
	    (ctx = srv->acme_ctx_of(srv->site_arg, (const char *)p + 5, n)) != NULL)
		return tls_acme_move(ssl, ctx) ? SSL_CLIENT_HELLO_SUCCESS : SSL_CLIENT_HELLO_ERROR;
	if (!sites)
		return SSL_CLIENT_HELLO_SUCCESS;
	int i = srv->site_of(srv->site_arg, (const char *)p + 5, n);
	if (i > 0 && (size_t)i < srv->nsites && !SSL_set_SSL_CTX(ssl, srv->site_ctx[i]))
		return SSL_CLIENT_HELLO_ERROR;
	return SSL_CLIENT_HELLO_SUCCESS;
}

/* The TLS 1.3 secret ktlsd's sealer re-keys from (RFC 8446 7.2): OpenSSL
 * tells it only to a key log callback, as a line of the NSS key log format
 * ("SERVER_TRAFFIC_SECRET_0 <client random> <secret>", in hex), just before
 * it hands over the keys made from it (ssl/tls13_enc.c,
 * tls13_change_cipher_state: ssl_log_secret, then BIO_set_ktls). OpenSSL
 * wipes its line after the call (ssl/ssl_lib.c, nss_keylog_int). */
static void keylog_cb(const SSL *ssl, const char *line)
{
	static const char label[] = "SERVER_TRAFFIC_SECRET_0 ";
	struct tls_wire *w = BIO_get_data(SSL_get_wbio(ssl));
	const char *hex;
	long n;

	if (!w || !w->seal_allowed || w->ktls_allowed || strncmp(line, label, sizeof(label) - 1))
		return;
	hex = strchr(line + sizeof(label) - 1, ' '); /* past the client random */
	if (!hex)
		return;
	unsigned char *buf = OPENSSL_hexstr2buf(hex + 1, &n);
	if (buf && n > 0 && (size_t)n <= sizeof(w->tx_secret)) {
		memcpy(w->tx_secret, buf, (size_t)n);
		w->tx_secret_len = (size_t)n;
	}
	OPENSSL_clear_free(buf, buf ? (size_t)n : 0);
}

static const char *key_type_name(int type)
{
	switch (type) {
	case EVP_PKEY_EC:
		return "ECDSA";
	case EVP_PKEY_RSA:
		return "RSA";
	case EVP_PKEY_RSA_PSS:
		return "RSA-PSS";
	case EVP_PKEY_ED25519:
		return "Ed25519";
	case EVP_PKEY_ED448:
		return "Ed448";
	}
	return OBJ_nid2sn(type);
}

/* One site's context: all alike but for the certificates and the session
 * id context, since OpenSSL takes ALPN and more from the context a
 * handshake moved to. */
static SSL_CTX *site_ctx_new(struct tls_server *srv, const struct tls_settings *s,
			     const struct tls_site *site, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	char ebuf[256];
	int min, max;

	if (!ctx)
		FAIL("SSL_CTX_new: %s", tls_last_error(ebuf, sizeof(ebuf)));
	SSL_CTX_set_app_data(ctx, srv);
	if (parse_protocols(s->protocols, &min, &max) < 0)
		FAIL("tls-protocols: expected TLSv1.2 and/or TLSv1.3, got '%s'", s->protocols);
	SSL_CTX_set_min_proto_version(ctx, min);
	SSL_CTX_set_max_proto_version(ctx, max);
	if (s->tls13_ciphersuites && !SSL_CTX_set_ciphersuites(ctx, s->tls13_ciphersuites))
		FAIL("tls13-ciphersuites: OpenSSL rejects '%s'", s->tls13_ciphersuites);
	if (s->tls12_ciphers && !SSL_CTX_set_cipher_list(ctx, s->tls12_ciphers) && min < TLS1_3_VERSION)
		FAIL("tls12-ciphers: OpenSSL rejects '%s'", s->tls12_ciphers);
	ERR_clear_error();
	if (!SSL_CTX_set1_groups_list(ctx, "X25519:P-256:P-384"))
		FAIL("groups: %s", tls_last_error(ebuf, sizeof(ebuf)));

	/* Each pair adds a certificate of its key type; OpenSSL picks per
	 * client from its signature algorithms (ECDSA first when both work).
	 * It keeps one certificate per key type, the last one given: a second
	 * of a type is refused rather than let it hide the first. */
	int types[TLS_SITE_MAX_CERTS];
	if (site->ncerts > TLS_SITE_MAX_CERTS)
		FAIL("at most %d certificates a site", TLS_SITE_MAX_CERTS);
	for (size_t i = 0; i < site->ncerts; i++) {
		if (tls_pem_use(ctx, &site->certs[i], err, errlen) < 0)
			goto fail;
		if (SSL_CTX_check_private_key(ctx) != 1)
			FAIL("key %s does not match cert %s", site->certs[i].key_file,
			     site->certs[i].cert_file);
		types[i] = EVP_PKEY_get_base_id(X509_get0_pubkey(SSL_CTX_get0_certificate(ctx)));
		for (size_t j = 0; j < i; j++)
			if (types[j] == types[i])
				FAIL("cert %s: a second %s certificate for one site (cert %s is the "
				     "first): a site serves one of each key type, so one of them "
				     "would never be served",
				     site->certs[i].cert_file, key_type_name(types[i]),
				     site->certs[j].cert_file);
	}

	long opts = SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
		    SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
	if (!s->session_tickets)
		opts |= SSL_OP_NO_TICKET;
	/* curl and wget (OpenSSL's order) ask for AES-256-GCM first, browsers
	 * for AES-128-GCM: ours puts AES-128 first, which seals a large
	 * download with a fraction less CPU on either end. */
	if (s->prefer_server_ciphers)
		opts |= SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA;
#ifdef SSL_OP_ENABLE_KTLS
	if (s->ktls)
		opts |= SSL_OP_ENABLE_KTLS;
#endif
	SSL_CTX_set_options(ctx, opts);
	/* RELEASE_BUFFERS: an idle keep-alive connection holds no OpenSSL
	 * record buffers (heaptrack, 1,000 idle connections through our BIO:
	 * no read or write buffer stays allocated; what does is the SSL object,
	 * its cipher contexts, the session and the key shares, ~13 KiB, which
	 * nginx keeps too). read_ahead: OpenSSL takes all we received in one
	 * BIO read instead of a header, then a record. */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
				      SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_read_ahead(ctx, 1);
	/* Only where the sealer needs the secret: OpenSSL formats every
	 * secret of every handshake for a key log callback, with a sprintf
	 * per byte (ssl/ssl_lib.c, nss_keylog_int), ~6% of a full TLS 1.3
	 * handshake's CPU here. Under kernel TLS a KeyUpdate ends the
	 * connection instead (the kernel cannot re-key), so there is none. */
	if (s->ktls && s->seal)
		SSL_CTX_set_keylog_callback(ctx, keylog_cb);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, srv);
	SSL_CTX_set_num_tickets(ctx, s->session_tickets ? 1 : 0);
	if (s->session_tickets)
		SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb);
	if (s->session_cache) {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
		SSL_CTX_sess_set_cache_size(ctx, s->session_cache);
	} else {
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	}
	if (!set_sid_ctx(ctx, site->name))
		FAIL("session id context: %s", tls_last_error(ebuf, sizeof(ebuf)));
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

int tls_server_new(struct tls_server **out, const struct tls_settings *s, char *err,
		   size_t errlen)
{
	struct tls_server *srv = calloc(1, sizeof(*srv));
	char ebuf[256];

	if (!srv)
		return -ENOMEM;
	srv->refs = 1;
	srv->h2 = s->h2;
	srv->rekey_records = s->rekey_records;
	srv->ticket_rotate_s = s->ticket_rotate_s ? s->ticket_rotate_s : 3600;
	memcpy(srv->ticket_master, s->ticket_master, sizeof(srv->ticket_master));
	srv->ticket_cipher = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	srv->ticket_cipher128 = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	if (!srv->ticket_cipher || !srv->ticket_cipher128)
		FAIL("AES-CBC for session tickets: %s", tls_last_error(ebuf, sizeof(ebuf)));
	memcpy(srv->file_keys, s->file_keys, sizeof(srv->file_keys));
	srv->nfile_keys = s->nfile_keys;
	srv->site_of = s->site_of;
	srv->site_arg = s->site_arg;
	if (s->acme_active && s->acme_ctx_of) {
		srv->acme_active = s->acme_active;
		srv->acme_ctx_of = s->acme_ctx_of;
	}
	srv->site_ctx = calloc(s->nsites ? s->nsites : 1, sizeof(*srv->site_ctx));
	if (!srv->site_ctx)
		FAIL("out of memory");
	for (; srv->nsites < s->nsites; srv->nsites++) {
		srv->site_ctx[srv->nsites] = site_ctx_new(srv, s, &s->sites[srv->nsites], err, errlen);
		if (!srv->site_ctx[srv->nsites])
			goto fail;
	}
	if (srv->nsites == 0)
		FAIL("no site to serve");
	srv->ctx = srv->site_ctx[0];
	if ((srv->nsites > 1 && srv->site_of) || srv->acme_ctx_of)
		SSL_CTX_set_client_hello_cb(srv->ctx, client_hello_cb, srv);
	*out = srv;
	return 0;
fail:
	tls_server_put(srv);
	return -EINVAL;
}

void tls_server_put(struct tls_server *srv)
{
	if (!srv || --srv->refs > 0)
		return;
	for (size_t i = 0; i < srv->nsites; i++)
		SSL_CTX_free(srv->site_ctx[i]);
	free(srv->site_ctx);
	EVP_CIPHER_free(srv->ticket_cipher);
	EVP_CIPHER_free(srv->ticket_cipher128);
	OPENSSL_cleanse(srv->file_keys, sizeof(srv->file_keys));
	OPENSSL_cleanse(srv->ticket_master, sizeof(srv->ticket_master));
	OPENSSL_cleanse(srv->keys, sizeof(srv->keys));
	free(srv);
}

/* Spots a client KeyUpdate (see tls_rekey_needed), and OpenSSL's own, after
 * which the records it seals are under a new key. */
static void msg_cb(int write_p, int version, int content_type, const void *buf, size_t len,
		   SSL *ssl, void *arg)
{
	struct tls_wire *w = arg;

	(void)version;
	(void)ssl;
	if (content_type != SSL3_RT_HANDSHAKE || len == 0 ||
	    ((const unsigned char *)buf)[0] != SSL3_MT_KEY_UPDATE)
		return;
	if (!write_p)
		w->key_update_seen = true;
	else if (!w->ktls_tx)
		w->tx_records = 0;
}

SSL *tls_conn_new(struct tls_server *srv, struct tls_wire *w)
{
	SSL *ssl = SSL_new(srv->ctx);
	BIO *bio;

	if (!ssl)
		return NULL;
	bio = tls_bio_new(w);
	if (!bio) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_bio(ssl, bio, bio);
	SSL_set_accept_state(ssl);
	SSL_set_msg_callback(ssl, msg_cb);
	SSL_set_msg_callback_arg(ssl, w);
	w->rekey_records = srv->rekey_records;
	w->key_limit = (struct tls_key_limit){UINT64_MAX, UINT64_MAX}; /* until the cipher is known */
	srv->refs++;
	return ssl;
}

static enum tls_status map_error(SSL *ssl, int rc)
{
	switch (SSL_get_error(ssl, rc)) {
	case SSL_ERROR_WANT_READ:
		return TLS_WANT_READ;
	case SSL_ERROR_ZERO_RETURN:
		return TLS_CLOSED;
	default:
		ERR_clear_error();
		return TLS_FAILED;
	}
}

enum tls_status tls_handshake(SSL *ssl)
{
	int rc = SSL_do_handshake(ssl);
	return rc == 1 ? TLS_DONE : map_error(ssl, rc);
}

/* A client's KeyUpdate with update_requested leaves OpenSSL 3.0 owing its
 * own (tls_process_key_update in ssl/statem/statem_lib.c sets
 * s->key_update), which it writes only at the next SSL_write or handshake
 * step (ssl3_write_bytes in ssl/record/rec_layer_s3.c); under kTLS or the
 * sealer no SSL_write comes. RFC 8446 4.6.3: it goes before our next
 * application data, so it is written now, as SSL_key_update would (the
 * type stays update_not_requested). */
static void answer_key_update(SSL *ssl)
{
	if (SSL_get_key_update_type(ssl) == SSL_KEY_UPDATE_NONE || !SSL_is_init_finished(ssl))
		return;
	if (SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) != 1 || SSL_do_handshake(ssl) != 1)
		ERR_clear_error();
}

enum tls_status tls_read(SSL *ssl, char *out, size_t len, size_t *n)
{
	enum tls_status st = TLS_DONE;

	if (!SSL_read_ex(ssl, out, len, n))
		st = map_error(ssl, 0);
	if (st == TLS_FAILED) {
		struct tls_wire *w = BIO_get_data(SSL_get_rbio(ssl));
		w->failed = true;
	} else {
		answer_key_update(ssl);
	}
	return st;
}

bool tls_read_pending(const SSL *ssl)
{
	return SSL_has_pending(ssl);
}

/* OpenSSL 3.0 seals each SSL_write in records of at most 16 KiB (its
 * max_send_fragment), and by itself stops a key only where a TLS 1.3
 * sequence number would wrap (ssl/record/ssl3_record_tls13.c, tls13_enc:
 * "Sequence has wrapped"); TLS 1.2's counts on (ssl/record/ssl3_record.c,
 * tls1_enc). Nothing there knows AES-GCM's limit: the records are counted
 * here, an upper bound, for tls_rekey_needed, and a write that would take
 * the key past the limit fails. */
static bool key_allows(SSL *ssl, struct tls_wire *w, size_t len)
{
	if (w->key_limit.max == UINT64_MAX && w->key_limit.rekey_at == UINT64_MAX) {
		const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
		w->key_limit = tls_key_limit(c && SSL_CIPHER_get_cipher_nid(c) == NID_chacha20_poly1305,
					     w->rekey_records);
	}
	w->tx_records += len / SSL3_RT_MAX_PLAIN_LENGTH + 1;
	return w->tx_records <= w->key_limit.max;
}

enum tls_status tls_write(SSL *ssl, const char *data, size_t len)
{
	size_t done = 0, n;
	struct tls_wire *w = BIO_get_data(SSL_get_wbio(ssl));

	if (!key_allows(ssl, w, len))
		return TLS_FAILED;
	while (done < len) {
		if (!SSL_write_ex(ssl, data + done, len - done, &n))
			return TLS_FAILED; /* our BIO never blocks on write */
		done += n;
	}
	return TLS_DONE;
}

void tls_shutdown(SSL *ssl)
{
	SSL_shutdown(ssl);
	ERR_clear_error();
}

const char *tls_servername(const SSL *ssl)
{
	return SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
}

const char *tls_version_name(const SSL *ssl)
{
	return SSL_get_version(ssl);
}

const char *tls_cipher_name(const SSL *ssl)
{
	return SSL_get_cipher_name(ssl);
}

void tls_alpn(const SSL *ssl, const char **proto, unsigned *len)
{
	const unsigned char *p = NULL;
	SSL_get0_alpn_selected(ssl, &p, len);
	*proto = (const char *)p;
}

bool tls_rekey_needed(const SSL *ssl)
{
	const struct tls_wire *w = BIO_get_data(SSL_get_wbio(ssl));

	if (!w)
		return false;
	if (w->sealer)
		return tls_sealer_worn(w->sealer);
	return (w->ktls_tx && w->key_update_seen) || w->tx_records >= w->key_limit.rekey_at;
}
