#include "ktls/tls_acme.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "ktls/tls.h"

/* The ALPN extension's body when acme-tls/1 is all it offers: the list's
 * length (2 bytes), then one protocol with its length (1 byte). */
static const unsigned char acme_only[] = "\x00\x0b\x0a" TLS_ACME_ALPN;

/* acme-tls/1, the only protocol a challenge handshake may end with (RFC
 * 8737 3: "the TLS server MUST ... negotiate acme-tls/1"); anything else
 * gets no_application_protocol, which OpenSSL 3.0 sends for
 * ALERT_FATAL. */
static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		   const unsigned char *in, unsigned inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, acme_only + 2,
				  sizeof(acme_only) - 3, in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	return SSL_TLSEXT_ERR_OK;
}

SSL_CTX *tls_acme_ctx_new(X509 *cert, EVP_PKEY *key, char *err, size_t errlen)
{
	const char *step = "SSL_CTX_new";
	char ebuf[256];

	if (!cert || !key) {
		snprintf(err, errlen, "TLS-ALPN-01 context: no %s", cert ? "key" : "certificate");
		return NULL;
	}
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx)
		goto fail;
	step = "TLS versions";
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
	    !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION))
		goto fail;
	step = "certificate";
	if (SSL_CTX_use_certificate(ctx, cert) != 1)
		goto fail;
	step = "key";
	if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
		goto fail;
	/* A validator makes one handshake and closes: nothing to resume. Its
	 * own session id context, so that no site's session resumes here
	 * either (the session cache a handshake looks in stays the site's,
	 * see tls_acme_switched). */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION |
					 SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	step = "session id context";
	if (!SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"ktlsd " TLS_ACME_ALPN,
					    sizeof("ktlsd " TLS_ACME_ALPN) - 1))
		goto fail;
	SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
	return ctx;
fail:
	snprintf(err, errlen, "TLS-ALPN-01 context: %s: %s", step, tls_last_error(ebuf, sizeof(ebuf)));
	SSL_CTX_free(ctx);
	return NULL;
}

bool tls_acme_offered_only(SSL *ssl)
{
	const unsigned char *p;
	size_t len;

	return SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation,
					 &p, &len) &&
	       len == sizeof(acme_only) - 1 && memcmp(p, acme_only, len) == 0;
}

/* SSL_set_SSL_CTX (OpenSSL 3.0, ssl/ssl_lib.c) swaps the certificate, the
 * session id context and what is read from the context during the
 * handshake (ALPN), but an SSL keeps the options and ticket count it was
 * made with, and its session_ctx: the site's. Its ticket callback finds
 * its keys through the context the handshake is in, which a challenge
 * context has none of: with SSL_OP_NO_TICKET a ticket the client offers
 * is not decrypted, and none is issued. */
bool tls_acme_move(SSL *ssl, SSL_CTX *ctx)
{
	bool moved = SSL_set_SSL_CTX(ssl, ctx) == ctx;

	SSL_CTX_free(ctx);
	if (moved) {
		SSL_set_options(ssl, SSL_OP_NO_TICKET);
		SSL_set_num_tickets(ssl, 0);
	}
	return moved;
}
