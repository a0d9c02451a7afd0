#include "server/core/ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int ring_init(struct io_uring *ring, unsigned entries, struct ring_features *feat)
{
	struct io_uring_params p;
	int rc;

	memset(feat, 0, sizeof(*feat));
	/* One thread submits and reaps: SINGLE_ISSUER lets the kernel skip
	 * locking, DEFER_TASKRUN runs completion work when we wait instead of
	 * interrupting us (both 6.1+; older kernels refuse them with EINVAL). */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CLAMP;
	p.cq_entries = entries * 4;
	p.flags |= IORING_SETUP_CQSIZE;
	rc = io_uring_queue_init_params(entries, ring, &p);
	if (rc == 0) {
		feat->single_issuer = true;
	} else {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CLAMP | IORING_SETUP_CQSIZE;
		p.cq_entries = entries * 4;
		rc = io_uring_queue_init_params(entries, ring, &p);
		if (rc < 0)
			return rc;
	}

	struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
	if (!probe) {
		io_uring_queue_exit(ring);
		return -ENOSYS;
	}
	feat->op_read = io_uring_opcode_supported(probe, IORING_OP_READ);
	feat->op_send = io_uring_opcode_supported(probe, IORING_OP_SEND);
	feat->op_recv = io_uring_opcode_supported(probe, IORING_OP_RECV);
	feat->op_accept = io_uring_opcode_supported(probe, IORING_OP_ACCEPT);
	feat->op_timeout = io_uring_opcode_supported(probe, IORING_OP_TIMEOUT);
	feat->op_close = io_uring_opcode_supported(probe, IORING_OP_CLOSE);
	feat->op_cancel = io_uring_opcode_supported(probe, IORING_OP_ASYNC_CANCEL);
	feat->splice = io_uring_opcode_supported(probe, IORING_OP_SPLICE);
	feat->send_zc = io_uring_opcode_supported(probe, IORING_OP_SEND_ZC);
	/* The probe cannot tell multishot accept apart from plain accept; the
	 * first completion does (EINVAL on kernels before 5.19). */
	feat->multishot_accept = feat->op_accept;
	io_uring_free_probe(probe);
	/* Provided-buffer rings are not an opcode: whoever registers one
	 * (rxring_init) sets buf_ring. */
	feat->buf_ring = false;

	if (!(feat->op_read && feat->op_send && feat->op_recv && feat->op_accept &&
	      feat->op_timeout && feat->op_cancel)) {
		io_uring_queue_exit(ring);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void ignore_completion(struct ring_op *op, int res, uint32_t flags)
{
	(void)op;
	(void)res;
	(void)flags;
}

static struct ring_op cancel_op = {.complete = ignore_completion};

void ring_cancel(struct io_uring *ring, struct ring_op *op)
{
	struct io_uring_sqe *sqe = ring_sqe(ring);
	io_uring_prep_cancel(sqe, op, 0);
	ring_op_attach(sqe, &cancel_op);
}

struct io_uring_sqe *ring_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

void ring_features_describe(const struct ring_features *f, char *out, size_t outsz)
{
	snprintf(out, outsz,
		 "io_uring: read=%s send=%s recv=%s accept=%s multishot-accept=%s splice=%s "
		 "send-zc=%s provided-buffer-ring=%s single-issuer+defer-taskrun=%s",
		 f->op_read ? "yes" : "no", f->op_send ? "yes" : "no", f->op_recv ? "yes" : "no",
		 f->op_accept ? "yes" : "no", f->multishot_accept ? "yes" : "no",
		 f->splice ? "yes" : "no", f->send_zc ? "yes" : "no", f->buf_ring ? "yes" : "no",
		 f->single_issuer ? "yes" : "no");
}
