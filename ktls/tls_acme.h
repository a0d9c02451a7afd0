/* TLS-ALPN-01 (RFC 8737): the context a validation handshake moves to, and
 * how its ClientHello is told from any other. ktls/tls.c's ClientHello
 * callback makes the move (tls_settings.acme_ctx_of); the connection code
 * closes a connection that negotiated TLS_ACME_ALPN once its handshake is
 * done, without a word of HTTP. */
#ifndef KTLSD_KTLS_TLS_ACME_H
#define KTLSD_KTLS_TLS_ACME_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

#define TLS_ACME_ALPN "acme-tls/1"

/* A challenge context for cert and key (an RFC 8737 3 certificate): TLS
 * 1.2 to 1.3, no session tickets, no session cache, and an ALPN callback
 * that selects acme-tls/1 and nothing else. It takes references of its
 * own to cert and key. NULL with a one-line reason in err. Shared: every
 * worker's handshakes may use it at once (OpenSSL counts its references
 * atomically). */
SSL_CTX *tls_acme_ctx_new(X509 *cert, EVP_PKEY *key, char *err, size_t errlen);

/* From a ClientHello callback: the client offers ALPN, and acme-tls/1 is
 * the one protocol it offers (RFC 8737 3: a validator offers nothing else;
 * a client that also offers h2 is an ordinary one, certmagic's rule). */
bool tls_acme_offered_only(SSL *ssl);

/* From a ClientHello callback: moves the handshake to ctx, a challenge
 * context, and drops the caller's reference of it (the SSL holds its
 * own). false: OpenSSL could not, and the handshake must fail. */
bool tls_acme_move(SSL *ssl, SSL_CTX *ctx);

#endif
