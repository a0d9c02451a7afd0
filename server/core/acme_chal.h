/* The ACME challenges being answered (RFC 8555 8.3 HTTP-01, RFC 8737
 * TLS-ALPN-01): the ACME thread puts an entry before it asks the CA to
 * validate and drops it once the authorization is done; every worker
 * answers from it, so the CA's several validation requests (from several
 * vantage points, at once) get the same answer on any worker.
 *
 * Process-wide, at most ACME_CHAL_MAX entries, one mutex; an atomic count
 * so that workers pay one relaxed load per request or ClientHello while it
 * is empty, which is nearly always. Names compare case-insensitively, a
 * trailing dot ignored. Any thread. */
#ifndef KTLSD_SERVER_ACME_CHAL_H
#define KTLSD_SERVER_ACME_CHAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define ACME_CHAL_MAX 64
#define ACME_CHAL_NAME_MAX 253     /* a DNS name, without its trailing dot */
#define ACME_CHAL_TOKEN_MAX 128    /* base64url characters */
/* A key authorization: token "." base64url(SHA-256 thumbprint), 172 at most. */
#define ACME_CHAL_KEY_AUTHZ_MAX 255

/* HTTP-01: answer GET /.well-known/acme-challenge/token for name with
 * key_authz. The same name and token again replaces the key authorization.
 * 0; -EINVAL for a name, token (base64url, 1 to ACME_CHAL_TOKEN_MAX) or key
 * authorization (printable ASCII) that cannot be one; -ENOSPC when full. */
int acme_chal_put_http(const char *name, const char *token, const char *key_authz);
/* TLS-ALPN-01: move name's acme-tls/1 handshakes to ctx (ktls/tls_acme.h
 * makes one). Takes a reference of ctx; one per name, a second replaces the
 * first. 0, -EINVAL or -ENOSPC. */
int acme_chal_put_alpn(const char *name, SSL_CTX *ctx);
/* Every entry of name goes (the table's references of contexts with them;
 * a handshake that took one keeps its own). */
void acme_chal_drop(const char *name);
/* Cheap: any entry at all. */
bool acme_chal_active(void);

/* HTTP-01: the key authorization for token when host (a Host's host, port
 * stripped) is its name. Copies it into out, NUL-terminated; its length, or
 * -1 when there is none (or out is too small). */
int acme_chal_http(const char *host, size_t hlen, const char *token, size_t tlen, char *out,
		   size_t outlen);
/* TLS-ALPN-01: a new reference to name's challenge context (the caller
 * frees it with SSL_CTX_free), or NULL. */
SSL_CTX *acme_chal_alpn(const char *name, size_t len);

/* Counts of answers given (for metrics): http-01 key authorizations sent,
 * tls-alpn-01 contexts handed to a handshake. */
void acme_chal_counts(uint64_t *http01, uint64_t *alpn01);

#endif
