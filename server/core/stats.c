#include "server/core/stats.h"

#include <stdatomic.h>
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
