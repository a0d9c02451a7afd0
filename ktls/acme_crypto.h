/* The cryptography an ACME client needs (RFC 8555), on OpenSSL 3.0: the
 * account key and its JWK, the JWS that signs every request, the CSR, the
 * TLS-ALPN-01 challenge certificate (RFC 8737), the placeholder served
 * until the CA has issued, and the checks made on what the CA returns.
 * Bytes in, bytes out: no file, no socket. */
#ifndef KTLSD_KTLS_ACME_CRYPTO_H
#define KTLSD_KTLS_ACME_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

/* base64url without padding (RFC 4648 §5). Returns the length written (NUL-terminated), or
 * -1 if out is too small. */
int acme_b64url(const void *in, size_t n, char *out, size_t outlen);
/* The reverse: bytes written, or -1 (bad characters, too small). */
int acme_b64url_decode(const char *in, size_t n, uint8_t *out, size_t outlen);
/* A new P-256 key. */
EVP_PKEY *acme_key_new(void);
/* PKCS#8 PEM, malloc'd (caller frees with explicit_bzero+free). 0 / -1. */
int acme_key_to_pem(EVP_PKEY *k, char **pem, size_t *len);
/* From PEM bytes (PKCS#8 or SEC1); NULL on failure. */
EVP_PKEY *acme_key_from_pem(const char *pem, size_t len);
/* The JWK of k's public key, RFC 7638's member order: {"crv":"P-256","kty":"EC","x":"…","y":"…"}.
 * Length or -1. */
int acme_jwk(EVP_PKEY *k, char *out, size_t outlen);
/* RFC 7638 thumbprint: base64url(SHA-256(JWK)). Length or -1. */
int acme_thumbprint(EVP_PKEY *k, char *out, size_t outlen);
/* A flattened JWS (RFC 7515 §7.2.2) signed ES256 with k: {"protected":"…","payload":"…",
 * "signature":"…"}; payload "" means POST-as-GET (empty payload). protected_json is the
 * header's JSON text. malloc'd; NULL on failure. */
char *acme_jws_es256(EVP_PKEY *k, const char *protected_json, const char *payload);
/* The same with HS256 over key (the EAB, RFC 8555 §7.3.4). */
char *acme_jws_hs256(const uint8_t *key, size_t klen, const char *protected_json,
		     const char *payload);
/* A CSR for names (SANs only, no CN, RFC 8555 §7.4), signed by k, as base64url DER.
 * malloc'd; NULL on failure. */
char *acme_csr(EVP_PKEY *k, const char *const *names, size_t n);
/* RFC 8737 §3: a self-signed certificate for name with the critical id-pe-acmeIdentifier
 * extension holding SHA-256(key_authz), one dNSName SAN, no CN, valid from now-1h to +7d,
 * with a new P-256 key. 0 / -1. */
int acme_alpn_cert(const char *name, const char *key_authz, EVP_PKEY **key, X509 **cert);
/* A self-signed placeholder for names (subject O=ktlsd ACME placeholder, SANs = names,
 * P-256, valid 7 days): key PEM then certificate PEM in one malloc'd buffer, the shape of
 * a bundle.pem. 0 / -1. */
int acme_placeholder(const char *const *names, size_t n, char **bundle, size_t *len);
/* What a bundle (key PEM + leaf + chain) or a chain says: notBefore, notAfter (UTC),
 * the leaf's serial in lower-case hex; whether its key matches the leaf (key may be NULL:
 * the bundle's own key) and its SANs cover names. 0, or -1 with a one-line reason in err.
 * placeholder: the leaf is one of acme_placeholder's (its subject says so). */
struct acme_cert_info {
	time_t not_before, not_after;
	char serial[80];
	/* RFC 9773 §4.1's certificate identifier: base64url(the Authority
	 * Key Identifier's keyIdentifier) "." base64url(the serial's DER
	 * content octets); "" when the leaf has no keyIdentifier. */
	char ari_id[128];
	bool placeholder;
};
int acme_cert_check(const char *pem, size_t len, EVP_PKEY *key, const char *const *names, size_t n,
		    struct acme_cert_info *info, char *err, size_t errlen);

#endif
