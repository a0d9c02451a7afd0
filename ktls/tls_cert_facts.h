/* What a certificate says of itself: when it stops being valid and which
 * host names it covers. The checks a start and --test-config make from it
 * (server/conf/site_certs.c) read the bytes the server already holds
 * (tls_pem.h), never the file again. */
#ifndef KTLSD_KTLS_TLS_CERT_FACTS_H
#define KTLSD_KTLS_TLS_CERT_FACTS_H

#include <stdbool.h>
#include <time.h>

#include "ktls/tls_pem.h"

/* The first certificate of p's file, the one served (the rest is its
 * chain): its notAfter into *not_after. 0, or -EINVAL when it does not
 * parse (tls_pem_use says why). */
int tls_cert_not_after(const struct tls_cert_pair *p, time_t *not_after);

/* Whether that certificate covers host, as a client checks it (RFC 6125:
 * its subjectAltName DNS names, wildcards included; the CN only when it
 * has none). A server name "*.example.org" is covered by that wildcard
 * itself alone. False when it does not parse. */
bool tls_cert_covers(const struct tls_cert_pair *p, const char *host);

#endif
