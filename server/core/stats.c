#include "server/core/stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The snapshot is read and written as an array of words. */
_Static_assert(sizeof(struct worker_snapshot) % sizeof(uint64_t) == 0,
	       "struct worker_snapshot holds uint64_t fields only");

void stats_publish(_Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS],
		   const struct worker_snapshot *snap)
{
	uint64_t words[WORKER_SNAPSHOT_WORDS];

	memcpy(words, snap, sizeof(words));
	for (size_t i = 0; i < WORKER_SNAPSHOT_WORDS; i++)
		atomic_store_explicit(&shown[i], words[i], memory_order_relaxed);
}

void stats_read(const _Atomic uint64_t shown[WORKER_SNAPSHOT_WORDS],
		struct worker_snapshot *snap)
{
	uint64_t words[WORKER_SNAPSHOT_WORDS];

	for (size_t i = 0; i < WORKER_SNAPSHOT_WORDS; i++)
		words[i] = atomic_load_explicit(&shown[i], memory_order_relaxed);
	memcpy(snap, words, sizeof(words));
}

void stats_add(struct worker_snapshot *sum, const struct worker_snapshot *one)
{
	uint64_t a[WORKER_SNAPSHOT_WORDS], b[WORKER_SNAPSHOT_WORDS];

	memcpy(a, sum, sizeof(a));
	memcpy(b, one, sizeof(b));
	for (size_t i = 0; i < WORKER_SNAPSHOT_WORDS; i++)
		a[i] += b[i];
	memcpy(sum, a, sizeof(a));
}

uint64_t stats_sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* ---- per site ---- */

const int stat_codes[STAT_CODES] = {200, 204, 206, 301, 302, 304, 307, 308, 400,
				    403, 404, 405, 408, 412, 413, 414, 416, 421,
				    429, 431, 500, 501, 503, 505, 0};
/* From a small file's answer to a long download's. */
const uint64_t stat_latency_bounds_ms[STAT_LATENCY_BUCKETS] = {5,    25,    100,   500,
							       2500, 10000, 60000, UINT64_MAX};

void stats_count_site(struct worker_stats *st, unsigned slot, int status, uint64_t body_bytes,
		      uint64_t duration_ms)
{
	struct stat_site *s = &st->sites[slot < STAT_SITES ? slot : STAT_SITES - 1];
	unsigned i = 0;

	while (i < STAT_CODES - 1 && stat_codes[i] != status)
		i++;
	s->codes[i]++;
	s->body_bytes += body_bytes;
	s->latency_ms += duration_ms;
	for (unsigned b = 0; b < STAT_LATENCY_BUCKETS; b++)
		if (duration_ms <= stat_latency_bounds_ms[b]) {
			s->latency[b]++;
			break;
		}
}

/* Names are written under the lock, and published by the count's
 * release: a reader that sees n slots sees their names. Never freed: a
 * slot is the process's. */
static pthread_mutex_t site_mu = PTHREAD_MUTEX_INITIALIZER;
static char *site_names[STAT_SITES];
static atomic_uint site_count = 1; /* slot 0, the top level's, always */

unsigned stats_site_slot(const char *name)
{
	unsigned n, slot;

	if (!name)
		return 0;
	pthread_mutex_lock(&site_mu);
	n = atomic_load_explicit(&site_count, memory_order_relaxed);
	for (slot = 1; slot < n; slot++)
		if (site_names[slot] && strcmp(site_names[slot], name) == 0)
			break;
	if (slot == n) {
		if (n < STAT_SITES - 1 && (site_names[n] = strdup(name)))
			atomic_store_explicit(&site_count, n + 1, memory_order_release);
		else
			slot = STAT_SITES - 1;
	}
	pthread_mutex_unlock(&site_mu);
	return slot;
}

unsigned stats_site_count(void)
{
	return atomic_load_explicit(&site_count, memory_order_acquire);
}

const char *stats_site_name(unsigned slot)
{
	if (slot == 0)
		return "-";
	if (slot >= STAT_SITES - 1 || slot >= stats_site_count())
		return "other";
	return site_names[slot];
}
