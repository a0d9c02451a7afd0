/* --limit-rate: a connection's token bucket, arithmetic only (no clock of
 * its own, no ring), so that it is unit-tested on its own. The transport
 * (sock.c) asks it before every send or splice into the socket and tells
 * it what the socket took; HTTP/1.1 and HTTP/2 share it that way.
 *
 * Tokens are kept in byte-milliseconds (bytes x 1000), so that a refill
 * after any number of milliseconds loses no fraction of a byte. */
#ifndef KTLSD_SERVER_PACE_H
#define KTLSD_SERVER_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest send the bucket waits for: 16 KiB (one TLS record), or a
 * second's worth at rates below that. */
#define PACE_CHUNK (16u * 1024)

struct pace {
	uint64_t rate;      /* bytes per second; 0: unlimited (nothing else is used) */
	uint64_t free_left; /* bytes still free of the limit (--limit-rate-after) */
	uint64_t burst;     /* the bucket's size, in bytes */
	uint64_t tokens;    /* byte-milliseconds */
	uint64_t last_ms;   /* when tokens were last refilled */
};

/* rate 0: unlimited. after: the first bytes that are not counted. The
 * bucket starts full. */
void pace_init(struct pace *p, uint64_t rate, uint64_t after, uint64_t now_ms);

/* How many of want bytes may leave now: all of them while free bytes last
 * or tokens suffice, else as many as there are tokens once there are at
 * least min(want, burst) of them, so that a paced connection sends in
 * chunks of about a tenth of a second's worth instead of a byte at a
 * time. 0: wait pace_wait_ms(). */
size_t pace_grant(struct pace *p, size_t want, uint64_t now_ms);

/* Milliseconds until pace_grant(want) would grant something (at least 1). */
uint64_t pace_wait_ms(const struct pace *p, size_t want);

/* The socket took n bytes (at most what was granted). */
void pace_spend(struct pace *p, size_t n);

/* Whether the rate applies now: a limit, and the free bytes used up. */
static inline bool pace_limits(const struct pace *p)
{
	return p->rate && p->free_left == 0;
}

#endif
