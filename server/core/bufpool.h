/* Per-worker free lists of I/O buffers (send buffers, plaintext stages,
 * HTTP/2 batches), so that a request costs no mmap/munmap pair: buffers of
 * 64 KiB and more are mappings of their own (BUFPOOL_MAP_MIN), and freeing
 * one after each response made two syscalls and a TLB shootdown per
 * request. Buffers come in power-of-two classes from 16 KiB to 4 MiB. A
 * buffer given back stays in its class's list, and the worker's timer
 * (bufpool_trim) hands the system what a class holds beyond its recent peak of buffers in use at
 * once and a margin: a steady load, whose number in use moves from one
 * moment to the next, keeps what it cycles through; a class no one used
 * for a whole tick keeps nothing of that peak, and nothing at all once the
 * hold below has passed too, so idle connections cost no pooled memory.
 *
 * Slow downloads come in waves: connections that drain at one pace become
 * writable together, every few seconds, and each holds a buffer for its
 * send while the wave lasts. The peak forgets a wave before the next one,
 * so each wave took its buffers from mmap again, faulted them in, and the
 * trim after it unmapped them (at 1,000 downloads of 64 KiB/s, munmap was
 * 17% of the worker). So a class also holds, for BUFPOOL_HOLD_TICKS, the
 * most it had in use at once in that time, within a budget of bytes the
 * caller gives (the worker: so much per open connection), which keeps
 * the first burst of a thousand new downloads from being held as long.
 * Worker-local: no lock. */
#ifndef KTLSD_SERVER_BUFPOOL_H
#define KTLSD_SERVER_BUFPOOL_H

#include <stddef.h>

#define BUFPOOL_MIN (16 * 1024)
#define BUFPOOL_CLASSES 9 /* 16 KiB .. 4 MiB */
/* A class keeps its peak in use plus 1/BUFPOOL_SPARE_DIV of it; the peak
 * falls by 1/BUFPOOL_DECAY a tick (250 ms) while the load is lower. */
#define BUFPOOL_SPARE_DIV 4
#define BUFPOOL_DECAY 8
/* Ticks a wave's buffers are held for the next one: 4 s. */
#define BUFPOOL_HOLD_TICKS 16
/* Buffers of this size and more are mappings of the pool's own, but in
 * an ASan build: there malloc's are worth more, with their redzones and
 * LeakSanitizer's count of what was never given back. */
#define BUFPOOL_MAP_MIN (64 * 1024)
#if defined(__SANITIZE_ADDRESS__)
#define BUFPOOL_OWN_MAPS 0
#else
#define BUFPOOL_OWN_MAPS 1
#endif
/* The most munmap calls, and bytes, one trim makes. A munmap's TLB
 * shootdown took some 0.2 ms on a virtual machine: at 10,000 slow
 * downloads, giving a wave's buffers back in one tick stalled the worker,
 * and every connection on it, for up to 260 ms (README, "Benchmark").
 * Buffers that lie side by side go in one call, which cost a fifth of
 * one call each (128 KiB buffers, the PVM host of README's tables). */
#define BUFPOOL_TRIM_MAX 64
#define BUFPOOL_TRIM_BYTES ((size_t)64 << 20)

struct bufpool_free {
	struct bufpool_free *next;
};

struct bufpool {
	struct bufpool_free *free[BUFPOOL_CLASSES];
	unsigned nfree[BUFPOOL_CLASSES];
	unsigned nout[BUFPOOL_CLASSES];    /* taken and not given back */
	unsigned minfree[BUFPOOL_CLASSES]; /* fewest free since the last trim */
	unsigned maxout[BUFPOOL_CLASSES];  /* most taken at once since the last trim */
	unsigned peak[BUFPOOL_CLASSES];    /* maxout of the recent ticks, decaying */
	unsigned tick_maxout[BUFPOOL_CLASSES][BUFPOOL_HOLD_TICKS]; /* maxout of each of the last ticks */
	unsigned tick;
	unsigned long gets, hits; /* for --check and the tests */
};

/* A buffer of at least want bytes; *cap says how many. want above the
 * largest class gets a plain allocation of exactly want. NULL if out of
 * memory. */
void *bufpool_get(struct bufpool *p, size_t want, size_t *cap);

/* Gives back a buffer of cap bytes (as bufpool_get said). NULL is fine. */
void bufpool_put(struct bufpool *p, void *buf, size_t cap);

/* The worker's timer calls it: frees buffers no one took since the last
 * trim, as many as the class holds beyond its peak and margin, and beyond
 * its most in use at once in the last BUFPOOL_HOLD_TICKS ticks as far as
 * hold (bytes, smaller classes first) allows; with hold 0, all of them in
 * a class no one used since the last trim. Those of the highest addresses
 * go, neighbours in one munmap, within BUFPOOL_TRIM_MAX calls and
 * BUFPOOL_TRIM_BYTES, the largest classes first; the rest wait for the
 * next tick (or a taker). A taker then gets the lowest address first. */
void bufpool_trim(struct bufpool *p, size_t hold);

/* Bytes of the classes' buffers taken and not given back (*out), and
 * kept free for the next taker (*kept); allocations above the largest
 * class are not counted. */
void bufpool_bytes(const struct bufpool *p, size_t *out, size_t *kept);

/* Frees every kept buffer (worker exit). */
void bufpool_drain(struct bufpool *p);

#endif
