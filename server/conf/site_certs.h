/* What a site's certificates would do wrong only once clients come: one
 * that has expired or soon will, a server name none of them covers. */
#ifndef KTLSD_SERVER_SITE_CERTS_H
#define KTLSD_SERVER_SITE_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct site;

/* A certificate that ends within this many days is warned of. */
#define SITE_CERTS_WARN_DAYS 14

/* Logs one line for each finding of the n sites at now: a start and a
 * reload warn and go on (a server that refused to start over a
 * certificate would stop serving plain HTTP too, and a renewal may be on
 * its way); for --test-config (strict) an expired certificate and an
 * uncovered name are errors. Returns how many errors (0 unless strict). */
unsigned site_certs_check(const struct site *sites, size_t n, time_t now, bool strict);

/* How many certificate files the n sites name (a file two sites share is
 * one). */
size_t site_certs_count(const struct site *sites, size_t n);

#endif
