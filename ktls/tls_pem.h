/* A certificate pair's files, read once into memory by the thread that
 * loads the configuration, so that every worker builds its SSL_CTX from the
 * same bytes: a certificate renewed between two workers' reads cannot give
 * two workers two certificates, and after --user a reload can read a
 * root-only key once (server/privs.h) instead of in every worker. */
#ifndef KTLSD_KTLS_TLS_PEM_H
#define KTLSD_KTLS_TLS_PEM_H

#include <stddef.h>

#include <openssl/ssl.h>

struct tls_cert_pair {
	const char *cert_file;
	const char *key_file;
	char *cert_pem;               /* the files' bytes (tls_pem_read) */
	size_t cert_len;
	char *key_pem;
	size_t key_len;
};

/* A small file's bytes (at most 1 MiB, NUL-terminated), in *out (the
 * caller frees it): 0 or -errno (-EINVAL: not a regular file, -EFBIG: too
 * large). tls_file_error says those in words. */
int tls_file_read(const char *path, char **out, size_t *len);
const char *tls_file_error(int e);

/* Reads both files of p. On failure a one-line reason naming the file
 * ("key /etc/k.pem: Permission denied") in err, and -errno. */
int tls_pem_read(struct tls_cert_pair *p, char *err, size_t errlen);

/* Frees the bytes (the key's wiped first). */
void tls_pem_release(struct tls_cert_pair *p);

/* Puts p's certificate, its chain and its key into ctx, as
 * SSL_CTX_use_certificate_chain_file and SSL_CTX_use_PrivateKey_file
 * would from the files. On failure a one-line reason naming the file. */
int tls_pem_use(SSL_CTX *ctx, const struct tls_cert_pair *p, char *err, size_t errlen);

#endif
