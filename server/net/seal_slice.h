/* How much plaintext ktlsd's sealer seals at once on a worker. A seal runs
 * on the worker between two looks at its ring, and every other connection
 * of the worker waits for it: a request that came in meanwhile is taken
 * only after it (worker.c, take_receives). A seal of the largest size
 * (SEAL_MAX) from a cached file's pages takes ~80 us here (a 1 GiB
 * download, Intel Xeon family 6 model 207: 128 KiB in 41 us median, 92 at
 * p99), but the pages a seal reads can be far slower to touch: pages a
 * cold download's read just brought in (on this development VM each a
 * fault in the host: free page reporting) kept the worker up to 38 ms
 * between two looks at its ring, and a probe's 1 KiB request on a
 * keep-alive connection waited p99 5-10 ms behind eight cold downloads
 * (issue 22). So the size follows the speed seals go at, a running
 * average over the last few: as much as seals in SEAL_SLICE_NS at that
 * speed, in whole records. Arithmetic only (the caller times the seals),
 * so that it is unit-tested on its own. */
#ifndef KTLSD_SERVER_SEAL_SLICE_H
#define KTLSD_SERVER_SEAL_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "ktls/tls_seal.h"

/* Plaintext sealed at once at most: 16 records, one send. */
#define SEAL_MAX (256 * 1024)
/* Well above what the largest seal takes at the usual speed, so that its
 * spread (interrupts, a fault) does not cut it. */
#define SEAL_SLICE_NS 200000
/* Never less than one whole TLS record's plaintext, and in whole records. */
#define SEAL_SLICE_MIN TLS_SEAL_MAX_PLAIN

struct seal_slice {
	uint64_t ps_per_byte; /* the average speed; 0: none measured yet */
	size_t cap;           /* the most a seal takes now, up to SEAL_MAX */
};

void seal_slice_init(struct seal_slice *sl);

/* How many of want bytes to seal at once. */
static inline size_t seal_slice_take(const struct seal_slice *sl, size_t want)
{
	return want < sl->cap ? want : sl->cap;
}

/* A seal of len bytes took ns nanoseconds. */
void seal_slice_took(struct seal_slice *sl, size_t len, uint64_t ns);

#endif
