#include "server/net/addr_limit.h"

#include <netinet/in.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Slots per bucket: a collision of two addresses costs nothing until a
 * bucket holds this many at once. */
#define BUCKET_SLOTS 7

struct slot {
	uint32_t count; /* 0: free */
	uint32_t site;
	struct addr_key key;
};

/* Three cache lines: the lock and the slots it guards, together. */
struct bucket {
	atomic_uint lock; /* 0: free (calloc's zero) */
	struct slot s[BUCKET_SLOTS];
} __attribute__((aligned(64)));

struct addr_limit {
	size_t mask; /* buckets - 1 */
	uint64_t seed;
	struct bucket *b;
};

bool addr_key_from(struct addr_key *k, const struct sockaddr *sa, socklen_t len)
{
	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(k->a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return true;
	}
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		k->a[10] = k->a[11] = 0xff;
		memcpy(k->a + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return true;
	}
	return false;
}

/* A power of two of buckets (at most 2^18: 48 MiB of address space, about
 * 1.8 million addresses at once) holding at least slots keys, per to a
 * bucket of size bytes, into *b; false if out of memory. */
static bool buckets_new(size_t slots, size_t per, size_t size, size_t *mask, uint64_t *seed,
			void **b)
{
	size_t n = 1;

	while (n * per < slots && n < ((size_t)1 << 18))
		n <<= 1;
	/* calloc: the pages of buckets no address reaches are never touched,
	 * so a large table costs address space, not memory. */
	*b = calloc(n, size);
	if (!*b)
		return false;
	*mask = n - 1;
	/* Whoever picks addresses must not pick one bucket for all of them. */
	*seed = (uint64_t)(uintptr_t)*b * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)mask;
	return true;
}

struct addr_limit *addr_limit_new(size_t slots)
{
	struct addr_limit *t = calloc(1, sizeof(*t));
	void *b;

	if (!t || !buckets_new(slots, BUCKET_SLOTS, sizeof(*t->b), &t->mask, &t->seed, &b)) {
		free(t);
		return NULL;
	}
	t->b = b;
	return t;
}

void addr_limit_free(struct addr_limit *t)
{
	if (t)
		free(t->b);
	free(t);
}

/* A 64-bit mix (splitmix64's finaliser) of the key, the site and the seed. */
static uint64_t mix(uint64_t seed, unsigned site, const struct addr_key *k)
{
	uint64_t lo, hi, h;

	memcpy(&lo, k->a, 8);
	memcpy(&hi, k->a + 8, 8);
	h = seed ^ site;
	for (int i = 0; i < 2; i++) {
		h ^= i ? hi : lo;
		h += 0x9e3779b97f4a7c15ull;
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
		h ^= h >> 31;
	}
	return h;
}

static void spin_lock(atomic_uint *lock)
{
	unsigned spins = 0;

	while (atomic_exchange_explicit(lock, 1, memory_order_acquire))
		if (++spins % 64 == 0)
			sched_yield(); /* the holder was preempted: let it finish */
}

static void spin_unlock(atomic_uint *lock)
{
	atomic_store_explicit(lock, 0, memory_order_release);
}

static struct bucket *lock_bucket(struct addr_limit *t, unsigned site, const struct addr_key *k)
{
	struct bucket *b = &t->b[mix(t->seed, site, k) & t->mask];

	spin_lock(&b->lock);
	return b;
}

static void unlock_bucket(struct bucket *b)
{
	spin_unlock(&b->lock);
}

static struct slot *find(struct bucket *b, unsigned site, const struct addr_key *k)
{
	for (int i = 0; i < BUCKET_SLOTS; i++)
		if (b->s[i].count && b->s[i].site == site &&
		    memcmp(&b->s[i].key, k, sizeof(*k)) == 0)
			return &b->s[i];
	return NULL;
}

enum addr_limit_result addr_limit_enter(struct addr_limit *t, unsigned site,
					const struct addr_key *key, unsigned limit)
{
	struct bucket *b = lock_bucket(t, site, key);
	enum addr_limit_result r = ADDR_LIMIT_COUNTED;
	struct slot *s = find(b, site, key);

	if (!s) {
		for (int i = 0; i < BUCKET_SLOTS && !s; i++)
			if (b->s[i].count == 0)
				s = &b->s[i];
		if (s) {
			s->site = site;
			s->key = *key;
		}
	}
	if (!s)
		r = ADDR_LIMIT_UNTRACKED;
	else if (s->count >= limit)
		r = ADDR_LIMIT_OVER;
	else
		s->count++;
	unlock_bucket(b);
	return r;
}

void addr_limit_leave(struct addr_limit *t, unsigned site, const struct addr_key *key)
{
	struct bucket *b = lock_bucket(t, site, key);
	struct slot *s = find(b, site, key);

	if (s)
		s->count--;
	unlock_bucket(b);
}

unsigned addr_limit_count(struct addr_limit *t, unsigned site, const struct addr_key *key)
{
	struct bucket *b = lock_bucket(t, site, key);
	struct slot *s = find(b, site, key);
	unsigned n = s ? s->count : 0;

	unlock_bucket(b);
	return n;
}

/* ---- requests per second (--limit-req) ---- */

#define RATE_SLOTS 6

/* A key's token bucket: tokens in thousandths of a request. */
struct rate_slot {
	uint64_t last_ms; /* 0: free */
	uint32_t site;
	uint32_t tokens;
	struct addr_key key;
};

struct rate_bucket {
	atomic_uint lock;
	struct rate_slot s[RATE_SLOTS];
} __attribute__((aligned(64)));

struct addr_rate {
	size_t mask;
	uint64_t seed;
	struct rate_bucket *b;
};

struct addr_rate *addr_rate_new(size_t slots)
{
	struct addr_rate *t = calloc(1, sizeof(*t));
	void *b;

	if (!t || !buckets_new(slots, RATE_SLOTS, sizeof(*t->b), &t->mask, &t->seed, &b)) {
		free(t);
		return NULL;
	}
	t->b = b;
	return t;
}

void addr_rate_free(struct addr_rate *t)
{
	if (t)
		free(t->b);
	free(t);
}

bool addr_rate_take(struct addr_rate *t, unsigned site, const struct addr_key *key,
		    unsigned per_s, uint64_t now_ms)
{
	struct rate_bucket *b = &t->b[mix(t->seed, site, key) & t->mask];
	uint64_t full = (uint64_t)per_s * 1000; /* a second's worth: the burst */
	struct rate_slot *s = NULL, *oldest = &b->s[0];
	bool ok;

	if (now_ms == 0)
		now_ms = 1; /* 0 marks a free slot */
	spin_lock(&b->lock);
	for (int i = 0; i < RATE_SLOTS && !s; i++) {
		struct rate_slot *x = &b->s[i];
		if (x->last_ms && x->site == site && memcmp(&x->key, key, sizeof(*key)) == 0)
			s = x;
		else if (x->last_ms < oldest->last_ms)
			oldest = x;
	}
	if (!s) {
		/* A new key takes a free slot, or the one idle the longest: the
		 * state it loses would have refilled soonest (fail open). */
		s = oldest;
		*s = (struct rate_slot){.last_ms = now_ms, .site = site, .tokens = (uint32_t)full,
					.key = *key};
	}
	uint64_t tokens = s->tokens;
	if (now_ms > s->last_ms)
		tokens += (now_ms - s->last_ms) * per_s; /* thousandths per millisecond */
	if (tokens > full)
		tokens = full;
	ok = tokens >= 1000;
	if (ok)
		tokens -= 1000;
	s->tokens = (uint32_t)tokens;
	if (now_ms > s->last_ms)
		s->last_ms = now_ms;
	spin_unlock(&b->lock);
	return ok;
}
