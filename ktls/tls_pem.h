/* A certificate pair's files, read once into memory by whoever loads the
 * configuration (the server reads them; ktls only parses bytes), so that
 * every worker builds its SSL_CTX from the same bytes: a certificate
 * renewed between two workers' reads cannot give two workers two
 * certificates, and after --user a reload gets a root-only key's bytes
 * once, from the privileged helper (server/privsep.h). */
#ifndef KTLSD_KTLS_TLS_PEM_H
#define KTLSD_KTLS_TLS_PEM_H

#include <stddef.h>

#include <openssl/ssl.h>

struct tls_cert_pair {
	const char *cert_file;
	const char *key_file;
	char *cert_pem;               /* the files' bytes, malloc'd (tls_pem_release frees) */
	size_t cert_len;
	char *key_pem;
	size_t key_len;
};

/* Frees the bytes (the key's wiped first). */
void tls_pem_release(struct tls_cert_pair *p);

/* Puts p's certificate, its chain and its key into ctx, as
 * SSL_CTX_use_certificate_chain_file and SSL_CTX_use_PrivateKey_file
 * would from the files. On failure a one-line reason naming the file. */
int tls_pem_use(SSL_CTX *ctx, const struct tls_cert_pair *p, char *err, size_t errlen);

#endif
