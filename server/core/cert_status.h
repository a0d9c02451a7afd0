/* What each site's certificate is and what the ACME client last did for
 * it, by site slot (stats.h, stats_site_slot), for the metrics an operator
 * alerts on (server/status/metrics_certs.c): the expiry of every site's
 * certificate, ACME or not (nothing alerted on that before: issue 23,
 * item 1), and for --acme on sites the state, the next renewal, the
 * failures and the last error.
 *
 * Process-wide, one mutex: the main thread writes it when a server is
 * built, the ACME thread after each attempt, the status thread reads it a
 * scrape at a time. None of it is on a worker's path. */
#ifndef KTLSD_SERVER_CERT_STATUS_H
#define KTLSD_SERVER_CERT_STATUS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "server/core/stats-t.h"

struct cert_status {
	bool shown;                  /* a site of the running configuration */
	time_t not_after;            /* its certificates' earliest notAfter; 0 none */
	bool acme;                   /* --acme on */
	bool placeholder;            /* ... and no certificate issued yet */
	time_t renew_at;             /* when the client renews next; 0 not known */
	time_t next_attempt;         /* after a failure; 0 when not failing */
	unsigned failures;           /* in a row */
	char last_error[400];        /* "" when the last attempt did not fail */
};

struct cert_status_all {
	struct cert_status sites[STAT_SITES];
	uint64_t orders_issued, orders_failed;
};

/* A new server's sites: those not named again are no longer shown. Call
 * cert_status_begin, then cert_status_site for each site. */
void cert_status_begin(void);
void cert_status_site(unsigned slot, time_t not_after, bool acme, bool placeholder);

/* The ACME client, after each look at a site (renew_at, next_attempt 0
 * when not known or not failing; error NULL after a success). */
void cert_status_acme(unsigned slot, time_t renew_at, time_t next_attempt, unsigned failures,
		      const char *error);
/* An order's end: issued, or failed. */
void cert_status_order(bool issued);

/* A copy of all of it. */
void cert_status_read(struct cert_status_all *out);

#endif
