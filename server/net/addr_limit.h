/* --limit-conn: open connections per client address, counted across all
 * workers. A client's connections land on any worker (SO_REUSEPORT spreads
 * them), so the counts live in one table for the whole process, which
 * main.c makes before the workers start and frees after they are joined;
 * each worker keeps a pointer to it (struct worker), since struct server is
 * read-only configuration and this table is not.
 *
 * The table is a fixed array of buckets, each with a few slots of exact
 * keys (site, address) and their counts, and a spin lock held for a scan
 * of one bucket (a handful of compares, nothing that can block or fail).
 * A slot whose count falls to 0 is free again: no tombstones, no resizing.
 * A bucket whose slots are all taken by other addresses cannot count a new
 * one: that connection is let in uncounted (fail open, ADDR_LIMIT_UNTRACKED,
 * shown in the metrics), rather than refused for someone else's sake. */
#ifndef KTLSD_SERVER_ADDR_LIMIT_H
#define KTLSD_SERVER_ADDR_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* A client's address as the table keys it: IPv6 in full (as nginx's
 * $binary_remote_addr; a /64 would lump together the customers of a
 * provider that hands out addresses from one prefix, and is easy to add
 * later), IPv4 as its IPv4-mapped IPv6 form, so that the same client
 * counts once whichever way its address arrives. */
struct addr_key {
	uint8_t a[16];
};

/* false: not an IPv4 or IPv6 address (nothing to count it by). */
bool addr_key_from(struct addr_key *k, const struct sockaddr *sa, socklen_t len);

struct addr_limit;

/* A table for about slots addresses at once (rounded up to whole buckets
 * of a power of two); NULL if out of memory. */
struct addr_limit *addr_limit_new(size_t slots);
void addr_limit_free(struct addr_limit *t);

enum addr_limit_result {
	ADDR_LIMIT_COUNTED,   /* counted: addr_limit_leave when it closes */
	ADDR_LIMIT_OVER,      /* limit connections of this key are open already: refuse */
	ADDR_LIMIT_UNTRACKED, /* the key's bucket is full: let in, uncounted */
};

/* A connection of key in site opens, with at most limit of them at once. */
enum addr_limit_result addr_limit_enter(struct addr_limit *t, unsigned site,
					const struct addr_key *key, unsigned limit);
/* A connection that addr_limit_enter counted closes: exactly once. */
void addr_limit_leave(struct addr_limit *t, unsigned site, const struct addr_key *key);

/* Open connections counted for key in site (for tests). */
unsigned addr_limit_count(struct addr_limit *t, unsigned site, const struct addr_key *key);

/* --limit-req: requests per second per client address and site, across
 * the workers, as a token bucket per (site, address) that holds a
 * second's worth (the burst) and refills at the rate. The table has the
 * same buckets and locks as above; a bucket whose slots are all taken
 * gives the slot idle the longest to the new key (its state is the one
 * that would have refilled soonest: fail open, never a refusal for
 * someone else's sake). */
struct addr_rate;

struct addr_rate *addr_rate_new(size_t slots);
void addr_rate_free(struct addr_rate *t);

/* One request of key in site at now_ms (a monotonic clock) under per_s
 * requests a second: true if it may go, false if over. per_s at most
 * 1,000,000. */
bool addr_rate_take(struct addr_rate *t, unsigned site, const struct addr_key *key,
		    unsigned per_s, uint64_t now_ms);

#endif
