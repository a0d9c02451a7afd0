#include "ktls/tls_cert_facts.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

static X509 *leaf(const struct tls_cert_pair *p)
{
	BIO *bio = BIO_new_mem_buf(p->cert_pem, (int)p->cert_len);
	X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	ERR_clear_error();
	return x;
}

int tls_cert_not_after(const struct tls_cert_pair *p, time_t *not_after)
{
	X509 *x = leaf(p);
	struct tm tm;
	int rc = -EINVAL;

	if (x && ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1) {
		*not_after = timegm(&tm);
		rc = 0;
	}
	X509_free(x);
	return rc;
}

/* X509_check_host matches a host against the certificate's wildcards; a
 * wildcard as the host is no host name to it, so that one is looked up
 * among the DNS names as written. */
static bool has_dns_name(X509 *x, const char *name)
{
	GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	bool found = false;

	for (int i = 0; names && !found && i < sk_GENERAL_NAME_num(names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		if (g->type != GEN_DNS)
			continue;
		const unsigned char *d = ASN1_STRING_get0_data(g->d.dNSName);
		size_t n = (size_t)ASN1_STRING_length(g->d.dNSName);
		found = n == strlen(name) && strncasecmp((const char *)d, name, n) == 0;
	}
	GENERAL_NAMES_free(names);
	return found;
}

bool tls_cert_covers(const struct tls_cert_pair *p, const char *host)
{
	X509 *x = leaf(p);
	bool ok = false;

	if (x)
		ok = strncmp(host, "*.", 2) == 0 ? has_dns_name(x, host)
						 : X509_check_host(x, host, 0, 0, NULL) == 1;
	X509_free(x);
	ERR_clear_error();
	return ok;
}
