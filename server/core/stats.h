/* A worker's statistics: how they are counted on the request path, and
 * how they cross to the status listener's thread.
 *
 * The worker increments plain integers (struct worker_stats) and, once a
 * tick (250 ms), copies them with its gauges into its published snapshot
 * with relaxed atomic stores, which on x86-64 and arm64 are plain stores:
 * the request path pays nothing for being watched. A reader loads the
 * words with relaxed atomic loads: each word is whole (never torn), a
 * snapshot is at most a tick old, and words of one snapshot may come from
 * two consecutive ticks, which counters that only grow make harmless. */
#ifndef KTLSD_SERVER_STATS_H
#define KTLSD_SERVER_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/core/stats-t.h"

/* Counts one answered request by its protocol and status class. */
static inline void stats_count_response(struct worker_stats *st, enum stat_proto proto,
					int status)
{
	/* A status outside 100-599 is never sent; count it as a 5xx. */
	unsigned k = status >= 100 && status < 600 ? (unsigned)status / 100 - 1 : 4;

	st->requests[proto][k]++;
}

/* The codes of struct stat_site's codes[], in order; the last, 0, is
 * "other". */
extern const int stat_codes[STAT_CODES];
/* The upper bounds, in milliseconds, of the latency buckets; the last is
 * UINT64_MAX (+Inf). */
extern const uint64_t stat_latency_bounds_ms[STAT_LATENCY_BUCKETS];

/* Counts one answered request of the site in slot (stats_site_slot) by
 * its status, body bytes and duration. */
void stats_count_site(struct worker_stats *st, unsigned slot, int status, uint64_t body_bytes,
		      uint64_t duration_ms);

/* The slot of the site named name (NULL: the top level's, 0), the same for
 * the life of the process; the first call for a name takes the next slot.
 * Any thread (the configuration is built on the main thread, checked on
 * others). */
unsigned stats_site_slot(const char *name);
/* How many slots are taken (any thread), and the name of one ("-" for
 * slot 0, "other" for the last). */
unsigned stats_site_count(void);
const char *stats_site_name(unsigned slot);

/* The worker: makes snap the published one. */
void stats_publish(_Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS],
		   const struct worker_snapshot *snap);

/* Any thread: the last snapshot published. */
void stats_read(const _Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS],
		struct worker_snapshot *snap);

/* Adds one worker's snapshot into sum (counters and gauges alike). */
void stats_add(struct worker_snapshot *sum, const struct worker_snapshot *one);

/* The sum of n counters. */
uint64_t stats_sum(const uint64_t *v, size_t n);

#endif
