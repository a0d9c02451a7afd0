/* A worker's io_uring: set-up with run-time feature probing, and the
 * user_data encoding shared by every submitter. */
#ifndef KTLSD_SERVER_RING_H
#define KTLSD_SERVER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <liburing.h>

/* What the running kernel offers, probed once per ring (never assumed from
 * headers: the binary may run on an older or a UML kernel). */
struct ring_features {
	bool single_issuer;   /* IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN, 6.1 */
	bool multishot_accept; /* 5.19; confirmed by the first accept completion */
	bool splice;          /* IORING_OP_SPLICE, 5.7 */
	bool send_zc;         /* IORING_OP_SEND_ZC, 6.0 (not usable on kTLS sockets) */
	bool buf_ring;        /* a provided-buffer ring is registered (rxring_init), 5.19 */
	bool op_read, op_send, op_recv, op_accept, op_timeout, op_close, op_cancel;
};

/* Every ring operation carries its own completion: user_data points at a
 * struct ring_op embedded in whoever owns the operation (as nginx's
 * ev->handler, h2o's per-command callback), so the worker's loop dispatches
 * without knowing who owns what. container_of() gets the owner back. */
struct ring_op {
	void (*complete)(struct ring_op *op, int res, uint32_t cqe_flags);
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static inline void ring_op_attach(struct io_uring_sqe *sqe, struct ring_op *op)
{
	io_uring_sqe_set_data(sqe, op);
}

/* Cancels the operation op if it is in flight; the cancel's own completion
 * is ignored. */
void ring_cancel(struct io_uring *ring, struct ring_op *op);

/* Creates the ring with the best flags this kernel accepts. 0 or -errno. */
int ring_init(struct io_uring *ring, unsigned entries, struct ring_features *feat);

/* An SQE, submitting pending ones first if the queue is full. Never NULL:
 * after a submit the queue has room (the ring is sized for this). */
struct io_uring_sqe *ring_sqe(struct io_uring *ring);

/* One line per feature for `ktlsd --check` and the start-up log. */
void ring_features_describe(const struct ring_features *feat, char *out, size_t outsz);

#endif
