/* A worker's statistics: the helpers that count them on the request path. */
#ifndef KTLSD_SERVER_STATS_H
#define KTLSD_SERVER_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "server/worker-t.h"

/* Counts one answered request by its protocol and status class. */
static inline void stats_count_response(struct worker_stats *st, enum stat_proto proto,
					int status)
{
	/* A status outside 100-599 is never sent; count it as a 5xx. */
	unsigned k = status >= 100 && status < 600 ? (unsigned)status / 100 - 1 : 4;

	st->requests[proto][k]++;
}

/* Who encrypts for a connection, from its two flags. */
static inline enum stat_tls stats_tls_path(bool tls, bool ktls_tx)
{
	return !tls ? STAT_TLS_NONE : ktls_tx ? STAT_TLS_KERNEL : STAT_TLS_USER;
}

/* The sum of n counters. */
uint64_t stats_sum(const uint64_t *v, size_t n);

#endif
