/* A worker's receive buffers for connections that have no input pending:
 * an io_uring provided-buffer ring (kernel 5.19, liburing 2.3's
 * io_uring_register_buf_ring). A recv posted with IOSQE_BUFFER_SELECT on
 * an idle connection holds no memory; the kernel picks a buffer from the
 * ring only when bytes arrive. The connection has that buffer for the
 * length of the completion only: what the protocol did not consume by then
 * is copied into a buffer of the worker's pool, and the ring buffer goes
 * back at once. So the ring is never drained by slow clients, and its
 * buffers hold nothing but recently received bytes.
 *
 * Worker-local: no lock. Where the kernel has no buffer rings
 * (ring_features.buf_ring false) the transport waits with a poll instead
 * and takes a pooled buffer when the socket is readable. */
#ifndef KTLSD_SERVER_RXRING_H
#define KTLSD_SERVER_RXRING_H

#include <stddef.h>

#include <liburing.h>

/* Up to four maximum-size TLS records per recv: fewer costs syscalls, more
 * was measured slower (curl, +13% at 64 KiB on 100 Gbit/s). Every receive
 * buffer has this size, from the ring or from the pool. */
#define RXRING_BUF_SIZE (64 * 1024)

/* Buffers in the ring: how many connections may receive between two
 * visits of the worker to its completions before one finds the ring empty
 * (it then receives into a pooled buffer instead: slower, never wrong).
 * The ring starts with RXRING_START of them and grows by as many each time
 * it is found empty, up to RXRING_ENTRIES: the kernel takes buffers in
 * turn, so every buffer handed to it soon has the pages a recv wrote
 * resident (a request: one page), and a worker with few clients at a
 * time should not keep 64 of them. Address space is taken for all at
 * start; at most 4 MiB per worker become resident. */
#define RXRING_ENTRIES 64
#define RXRING_START 8

/* The buffer group the ring is registered as. */
#define RXRING_BGID 0

struct rxring {
	struct io_uring_buf_ring *br; /* NULL: no ring (old kernel, or out of memory) */
	char *bufs;                   /* RXRING_ENTRIES buffers, buffer id i at i * size */
	unsigned handed;              /* buffer ids below this one are the kernel's or lent */
	size_t br_len;
};

/* Registers the ring on ring with its buffers. 0 or -errno; on failure
 * r->br stays NULL and nothing is registered. */
int rxring_init(struct rxring *r, struct io_uring *ring);

/* The buffer a completion with IORING_CQE_F_BUFFER names (its buffer id):
 * the caller's until it gives it back with rxring_put. */
char *rxring_buf(struct rxring *r, unsigned bid);
void rxring_put(struct rxring *r, unsigned bid);

/* The ring was found empty: hand the kernel more buffers, if it may have. */
void rxring_grow(struct rxring *r);

/* Frees the ring and its buffers. After io_uring_queue_exit: the kernel no
 * longer writes into them. */
void rxring_free(struct rxring *r);

#endif
