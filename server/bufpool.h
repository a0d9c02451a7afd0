/* Per-worker free lists of I/O buffers (send buffers, plaintext stages,
 * HTTP/2 batches), so that a request costs no mmap/munmap pair: buffers of
 * 64 KiB and more come from mmap (see main.c), and freeing one after each
 * response made two syscalls and a TLB shootdown per request. Buffers come
 * in power-of-two classes from 16 KiB to 4 MiB; each class keeps at most
 * BUFPOOL_KEEP_BYTES of free buffers, the rest go back to the system.
 * Worker-local: no lock. */
#ifndef KTLSD_SERVER_BUFPOOL_H
#define KTLSD_SERVER_BUFPOOL_H

#include <stddef.h>

#define BUFPOOL_MIN (16 * 1024)
#define BUFPOOL_CLASSES 9 /* 16 KiB .. 4 MiB */
#define BUFPOOL_KEEP_BYTES (16 * 1024 * 1024)

struct bufpool_free {
	struct bufpool_free *next;
};

struct bufpool {
	struct bufpool_free *free[BUFPOOL_CLASSES];
	unsigned nfree[BUFPOOL_CLASSES];
	unsigned minfree[BUFPOOL_CLASSES]; /* fewest free since the last trim */
	unsigned long gets, hits; /* for --check and the tests */
};

/* A buffer of at least want bytes; *cap says how many. want above the
 * largest class gets a plain allocation of exactly want. NULL if out of
 * memory. */
void *bufpool_get(struct bufpool *p, size_t want, size_t *cap);

/* Gives back a buffer of cap bytes (as bufpool_get said). NULL is fine. */
void bufpool_put(struct bufpool *p, void *buf, size_t cap);

/* Frees the buffers no one took since the last trim (the worker's timer
 * calls it): a burst of connections leaves no memory behind once it is
 * over, while a steady load keeps reusing what it needs. */
void bufpool_trim(struct bufpool *p);

/* Frees every kept buffer (worker exit). */
void bufpool_drain(struct bufpool *p);

#endif
