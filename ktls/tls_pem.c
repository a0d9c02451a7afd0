#include "ktls/tls_pem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

void tls_pem_release(struct tls_cert_pair *p)
{
	free(p->cert_pem);
	if (p->key_pem)
		OPENSSL_cleanse(p->key_pem, p->key_len);
	free(p->key_pem);
	p->cert_pem = p->key_pem = NULL;
	p->cert_len = p->key_len = 0;
}

/* An encrypted key would make OpenSSL ask for a passphrase on the
 * terminal: refuse it instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return 0;
}

/* OpenSSL's reason for the last failure, without the error-code noise
 * ("error:0A080002:SSL routines::system lib"): its reason string alone. */
static const char *ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_peek_last_error());
	return r ? r : "unknown error";
}

int tls_pem_use(SSL_CTX *ctx, const struct tls_cert_pair *p, char *err, size_t errlen)
{
	BIO *bio = BIO_new_mem_buf(p->cert_pem, (int)p->cert_len);
	X509 *x = NULL;
	EVP_PKEY *key = NULL;
	int rc = -EINVAL;

	ERR_clear_error();
	if (!bio || !(x = PEM_read_bio_X509_AUX(bio, NULL, no_passphrase, NULL))) {
		snprintf(err, errlen, "cert %s: no PEM certificate in it (%s)", p->cert_file,
			 ssl_reason());
		goto out;
	}
	if (SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_clear_chain_certs(ctx) != 1) {
		snprintf(err, errlen, "cert %s: %s", p->cert_file, ssl_reason());
		goto out;
	}
	X509_free(x);
	/* The rest of the file is the chain, as in use_certificate_chain_file. */
	while ((x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL))) {
		if (SSL_CTX_add0_chain_cert(ctx, x) != 1) {
			snprintf(err, errlen, "cert %s: chain: %s", p->cert_file, ssl_reason());
			goto out;
		}
		x = NULL; /* the context owns it */
	}
	unsigned long e = ERR_peek_last_error();
	if (ERR_GET_LIB(e) != ERR_LIB_PEM || ERR_GET_REASON(e) != PEM_R_NO_START_LINE) {
		snprintf(err, errlen, "cert %s: chain: %s", p->cert_file, ssl_reason());
		goto out;
	}
	ERR_clear_error();
	BIO_free(bio);
	bio = BIO_new_mem_buf(p->key_pem, (int)p->key_len);
	if (!bio || !(key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL))) {
		snprintf(err, errlen, "key %s: no PEM private key in it, or one with a passphrase (%s)",
			 p->key_file, ssl_reason());
		goto out;
	}
	if (SSL_CTX_use_PrivateKey(ctx, key) != 1) {
		snprintf(err, errlen, "key %s does not match cert %s", p->key_file, p->cert_file);
		goto out;
	}
	rc = 0;
out:
	X509_free(x);
	EVP_PKEY_free(key);
	BIO_free(bio);
	ERR_clear_error();
	return rc;
}
