/* Tests server/net/sock_send.c, the transport's send queue, without a
 * kernel ring: the order in which it posts its pieces (tx up to the kTLS
 * switch, the switch, tx up to a control record, the record, the rest, with
 * the kernel encrypting or ktlsd's sealer), the iovecs gather builds around
 * the holes that leave from mapped file pages, and the kTLS hang-up watch
 * that stops sends into a connection that is gone.
 *
 * The ring is a submission queue in plain memory. io_uring_get_sqe
 * (liburing 2.3's liburing.h, _io_uring_get_sqe) only reads *sq.khead and
 * hands out sq.sqes[] while fewer than sq.ring_entries are pending, so
 * ring_sqe (server/core/ring.c) works on it unchanged and nothing reaches
 * the kernel (it would submit only with the queue full; the tests take each
 * operation long before). The test reads each operation the transport
 * prepared, in order, and completes it by calling the ring_op its
 * user_data names, as the worker's loop does. The socket is one end of a
 * Unix socketpair, which no send ever reaches. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <linux/tls.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>

#include "ktls/ktls.h"
#include "ktls/tls_bio.h"
#include "ktls/tls_limit.h"
#include "ktls/tls_seal.h"
#include "server/core/bufpool.h"
#include "server/core/ring.h"
#include "server/core/stats-t.h"
#include "server/net/sock-int.h"
#include "server/net/sock.h"
#include "tests/unit/check_run.h"

/* The controls OpenSSL 3.0 sends a BIO for kernel TLS (as in
 * test_tls_bio.c): BIO_set_ktls, BIO_set_ktls_ctrl_msg and
 * BIO_clear_ktls_ctrl_msg. */
#define SET_KTLS 72
#define CTRL_MSG 74
#define CLEAR_CTRL_MSG 75

/* ---- the ring, in memory ---- */

#define SQ_ENTRIES 16

static struct io_uring ring;
static unsigned sq_head;
static struct io_uring_sqe sqes[SQ_ENTRIES];

static void ring_in_memory(void)
{
	memset(&ring, 0, sizeof(ring));
	memset(sqes, 0, sizeof(sqes));
	sq_head = 0;
	ring.ring_fd = -1;
	ring.sq.khead = &sq_head;
	ring.sq.sqes = sqes;
	ring.sq.ring_entries = SQ_ENTRIES;
	ring.sq.ring_mask = SQ_ENTRIES - 1;
}

/* Whether the transport prepared an operation the test has not taken. */
static bool posted(void)
{
	return sq_head != ring.sq.sqe_tail;
}

/* The next operation the transport prepared (there must be one); taking it
 * frees its slot, so it is returned by value. */
static struct io_uring_sqe take(void)
{
	ck_assert_msg(posted(), "nothing was posted");
	struct io_uring_sqe sqe = sqes[sq_head & (SQ_ENTRIES - 1)];
	sq_head++;
	return sqe;
}

/* The kernel's answer to sqe: res, to the completion it carries. */
static void complete(const struct io_uring_sqe *sqe, int res)
{
	struct ring_op *op = (struct ring_op *)(uintptr_t)sqe->user_data;

	op->complete(op, res, 0);
}

/* ---- the transport's owner and its worker ---- */

struct owner {
	struct sock *s;
	unsigned drives;
	const char *failed;
	bool released;
	uint64_t sent_at_release; /* sock_bytes_sent then, as the access log reads it */
};

static void on_drive(void *ctx)
{
	((struct owner *)ctx)->drives++;
}

static void on_spliced(void *ctx, int res)
{
	(void)ctx;
	ck_abort_msg("spliced(%d): no splice was asked for", res);
}

/* As sock.h asks of an owner: log (here: keep) why, and abort. */
static void on_failed(void *ctx, const char *why)
{
	struct owner *o = ctx;

	o->failed = why;
	sock_abort(o->s);
}

static BIO *bio;

/* The wire the test's BIO writes into goes with the sock. */
static void on_released(void *ctx)
{
	struct owner *o = ctx;

	o->released = true;
	o->sent_at_release = sock_bytes_sent(o->s);
	if (bio)
		BIO_set_data(bio, NULL);
}

static const struct sock_handler handler = {on_drive, on_spliced, on_failed, on_released};

static struct bufpool pool;
static struct worker_stats stats;
static struct ring_features feat;
static uint64_t now_ms;
static struct sock_env env = {
    .ring = &ring,
    .bufs = &pool,
    .feat = &feat,
    .stats = &stats,
    .now_ms = &now_ms,
};
static struct owner own;
static struct sock *s;
static int peer = -1;

static void setup(void)
{
	int sv[2];

	ring_in_memory();
	pool = (struct bufpool){0};
	stats = (struct worker_stats){0};
	env.tcp_tight = false;
	env.refused_seen = 0;
	now_ms = 1000;
	own = (struct owner){0};
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
	peer = sv[1];
	s = sock_new(&env, sv[0], NULL, &handler, &own);
	ck_assert_ptr_nonnull(s);
	own.s = s;
	/* What OpenSSL writes goes through the BIO on the sock's wire, as
	 * with a real session: tx before the switch, control records after. */
	bio = tls_bio_new(&s->wire);
	ck_assert_ptr_nonnull(bio);
}

/* Every test leaves nothing in flight: the abort frees the sock at once. */
static void teardown(void)
{
	if (!own.released)
		sock_abort(s);
	ck_assert(own.released);
	BIO_free(bio);
	bio = NULL;
	close(peer);
	bufpool_drain(&pool);
}

/* ---- what the tests queue ---- */

static void queue(const char *bytes)
{
	ck_assert_int_eq(sock_write(s, bytes, strlen(bytes)), 0);
}

/* sock_send as an owner calls it, holding the sock: a failure inside frees
 * it only at the release. */
static void send_queued(int msg_flags)
{
	sock_hold(s);
	sock_send(s, msg_flags);
	sock_release(s);
}

/* What OpenSSL does for an alert or a ticket under kernel TLS (its ctrl
 * calls around the write): a control record, queued behind tx. */
static void queue_record(int type, const char *data)
{
	ck_assert_int_eq(BIO_ctrl(bio, CTRL_MSG, type, NULL), 1);
	ck_assert_int_eq(BIO_write(bio, data, (int)strlen(data)), (int)strlen(data));
	ck_assert_int_eq(BIO_ctrl(bio, CLEAR_CTRL_MSG, 0, NULL), 1);
}

/* The kernel encrypts, as after ktls_prepare_tx and ktls_switch_tx. A unit
 * test cannot have them do it (the TLS ULP needs a TCP socket and the
 * kernel's tls module), so the wire is set as they leave it. */
static void as_ktls(void)
{
	s->wire.ktls_tx = true;
	s->wire.key_limit = tls_key_limit(false, 0);
}

/* OpenSSL handed TX to the kernel after what tx holds now, which must
 * leave first (ktls_prepare_tx with the ULP on: the keys wait in the wire). */
static void as_ktls_switch_pending(void)
{
	as_ktls();
	s->wire.switch_at = s->wire.tx_len;
	s->wire.switch_pending = true;
}

/* ---- what the tests expect ---- */

static void expect_send(const struct io_uring_sqe *sqe, const void *from, size_t len, int flags)
{
	ck_assert_uint_eq(sqe->opcode, IORING_OP_SEND);
	ck_assert_int_eq(sqe->fd, s->fd);
	ck_assert_ptr_eq((void *)(uintptr_t)sqe->addr, from);
	ck_assert_uint_eq(sqe->len, len);
	ck_assert_int_eq((int)sqe->msg_flags, MSG_NOSIGNAL | flags);
}

static const struct msghdr *expect_sendmsg(const struct io_uring_sqe *sqe, int flags)
{
	ck_assert_uint_eq(sqe->opcode, IORING_OP_SENDMSG);
	ck_assert_int_eq(sqe->fd, s->fd);
	ck_assert_int_eq((int)sqe->msg_flags, MSG_NOSIGNAL | flags);
	return (const struct msghdr *)(uintptr_t)sqe->addr;
}

/* A control record under kTLS: its bytes, with its type in a cmsg. */
static void expect_record(const struct io_uring_sqe *sqe, int type, const char *data)
{
	const struct msghdr *m = expect_sendmsg(sqe, 0);

	ck_assert_uint_eq(m->msg_iovlen, 1);
	ck_assert_uint_eq(m->msg_iov[0].iov_len, strlen(data));
	ck_assert_int_eq(memcmp(m->msg_iov[0].iov_base, data, strlen(data)), 0);
	const struct cmsghdr *c = CMSG_FIRSTHDR(m);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->cmsg_level, KTLS_SOL_TLS);
	ck_assert_int_eq(c->cmsg_type, KTLS_SET_RECORD_TYPE);
	ck_assert_uint_eq(c->cmsg_len, CMSG_LEN(1));
	ck_assert_int_eq(*CMSG_DATA(c), type);
}

/* A sendmsg of gathered iovecs: each {from, len} in order, nothing else. */
struct piece {
	const void *from;
	size_t len;
};

static void expect_gathered(const struct io_uring_sqe *sqe, int flags, const struct piece *want,
                            size_t n)
{
	const struct msghdr *m = expect_sendmsg(sqe, flags);

	ck_assert_ptr_eq(m, &s->holes->msg);
	ck_assert_uint_eq(m->msg_iovlen, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(m->msg_iov[i].iov_base == want[i].from, "iovec %zu starts elsewhere",
		              i);
		ck_assert_uint_eq(m->msg_iov[i].iov_len, want[i].len);
	}
}

#define GATHERED(sqe, flags, ...)                                                                  \
	expect_gathered(sqe, flags, (const struct piece[]){__VA_ARGS__},                           \
	                sizeof((const struct piece[]){__VA_ARGS__}) / sizeof(struct piece))

/* ---- plain: one send, short sends, the caller's MSG_MORE ---- */

START_TEST(test_plain_send)
{
	queue("hello, world");
	send_queued(MSG_MORE);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 12, MSG_MORE);
	ck_assert(!posted());
	ck_assert(sock_busy(s));
	/* The socket took 5: the rest goes next, from where it stopped. */
	complete(&sqe, 5);
	sqe = take();
	expect_send(&sqe, s->wire.tx + 5, 7, MSG_MORE);
	ck_assert_uint_eq(own.drives, 0);
	complete(&sqe, 7);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_uint_eq(s->wire.tx_len, 0); /* tx starts over for the next response */
	ck_assert_uint_eq(own.drives, 1);
	ck_assert_uint_eq(sock_bytes_sent(s), 12);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* An abort (SIGINT, a timeout) comes while a send's completion waits in the
 * ring: the kernel took those bytes, so they count by the release, where the
 * owner writes a cut response's access-log line (conn.h's log_cut). */
START_TEST(test_abort_counts_send_taken)
{
	queue("hello, world");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	sock_abort(s);
	ck_assert(!own.released);
	complete(&sqe, 12);
	ck_assert(own.released);
	ck_assert_uint_eq(own.sent_at_release, 12);
}
END_TEST

/* ---- kernel TLS: control records in their place ---- */

/* tx up to the record, the record with its type, the rest; each waits for
 * the one before it to complete. */
START_TEST(test_ktls_record_between)
{
	as_ktls();
	queue("head");
	queue_record(21, "alert!");
	queue("body bytes");
	send_queued(0);

	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 4, MSG_MORE);
	ck_assert(!posted());
	complete(&sqe, 4);

	sqe = take();
	expect_record(&sqe, 21, "alert!");
	ck_assert(!posted());
	ck_assert_uint_eq(own.drives, 0);
	complete(&sqe, 6);

	sqe = take();
	expect_send(&sqe, s->wire.tx + 4, 10, 0);
	ck_assert(!posted());
	complete(&sqe, 10);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_uint_eq(own.drives, 1);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* Records with nothing in front leave first, in the order queued, and a
 * record at the end leaves after all of tx. */
START_TEST(test_ktls_records_in_order)
{
	as_ktls();
	queue_record(21, "a");
	queue_record(22, "ticket");
	queue("x");
	queue_record(21, "close");
	send_queued(0);

	struct io_uring_sqe sqe = take();
	expect_record(&sqe, 21, "a");
	complete(&sqe, 1);
	sqe = take();
	expect_record(&sqe, 22, "ticket");
	complete(&sqe, 6);
	sqe = take();
	/* All of tx: the caller's flags (the record closes the kernel's). */
	expect_send(&sqe, s->wire.tx, 1, 0);
	complete(&sqe, 1);
	sqe = take();
	expect_record(&sqe, 21, "close");
	ck_assert(!posted());
	complete(&sqe, 5);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* ---- the switch to kernel TLS ---- */

/* What OpenSSL sealed before the switch leaves first, by as many sends as
 * it takes; only then does the kernel get its keys, and plaintext never
 * leaves before it has them. Here the kernel refuses them (no kernel TLS
 * on a Unix socket): the connection fails, and the plaintext stays. */
START_TEST(test_ktls_switch_after_ciphertext)
{
	queue("CIPHERTEXT");
	as_ktls_switch_pending();
	queue("plaintext");
	queue_record(21, "alert");
	send_queued(0);

	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 10, MSG_MORE);
	ck_assert(!posted());
	complete(&sqe, 3);
	sqe = take();
	expect_send(&sqe, s->wire.tx + 3, 7, MSG_MORE);
	ck_assert(s->wire.switch_pending);
	ck_assert_ptr_null(own.failed);
	complete(&sqe, 7);

	/* The sock is gone with the completion's release: only the owner's
	 * and the ring's side are left to look at. */
	ck_assert_str_eq(own.failed, "kTLS switch failed");
	ck_assert(own.released);
	ck_assert(!posted()); /* no plaintext, no record, no hang-up watch */
}
END_TEST

/* ---- ktlsd's sealer: the whole order ---- */

static const struct tls12_crypto_info_aes_gcm_128 sealer_keys = {
    .info = {.version = TLS_1_2_VERSION, .cipher_type = TLS_CIPHER_AES_GCM_128},
    /* key, iv, salt and rec_seq all zero: record n's explicit nonce is n */
};

/* Opens the TLS 1.2 AES-128-GCM record at p, number seq under
 * sealer_keys: its plaintext into out and its length, or -1 if it does not
 * authenticate (RFC 5288: nonce = salt || explicit nonce; additional data
 * = seq || type || version || length). */
static long open_record(const unsigned char *p, uint64_t seq, unsigned char *out)
{
	size_t body = (size_t)p[3] << 8 | p[4];
	unsigned char nonce[12] = {0}, aad[13];
	size_t n = body - 8 - 16;
	int l;

	memcpy(nonce + 4, p + 5, 8);
	for (int i = 0; i < 8; i++)
		aad[i] = (unsigned char)(seq >> (56 - 8 * i));
	aad[8] = p[0], aad[9] = 3, aad[10] = 3;
	aad[11] = (unsigned char)(n >> 8), aad[12] = (unsigned char)n;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	bool ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, sealer_keys.key, nonce) &&
	          EVP_DecryptUpdate(ctx, NULL, &l, aad, 13) &&
	          EVP_DecryptUpdate(ctx, out, &l, p + 13, (int)n) &&
	          EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)(p + 13 + n)) &&
	          EVP_DecryptFinal_ex(ctx, out + l, &l);
	EVP_CIPHER_CTX_free(ctx);
	return ok ? (long)n : -1;
}

/* A send of one record ktlsd sealed: record number seq, of type, holding
 * plain. */
static void expect_sealed(const struct io_uring_sqe *sqe, int flags, uint64_t seq, int type,
                          const char *plain)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)sqe->addr;
	unsigned char out[64];
	size_t len = strlen(plain);

	expect_send(sqe, s->ct, 5 + 8 + len + 16, flags);
	ck_assert_int_eq(p[0], type);
	ck_assert_int_eq(p[1], 3);
	ck_assert_int_eq(p[2], 3);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(p[5 + i], (int)(unsigned char)(seq >> (56 - 8 * i)));
	ck_assert_int_eq(open_record(p, seq, out), (long)len);
	ck_assert_int_eq(memcmp(out, plain, len), 0);
}

/* tx up to the switch as it is (OpenSSL sealed it), the switch, tx up to
 * the record sealed, the record sealed with its type, the rest sealed;
 * each a send of ct, in that order. */
START_TEST(test_sealer_order)
{
	s->wire.seal_allowed = true;
	ck_assert_int_eq(BIO_write(bio, "CIPHERTEXT", 10), 10);
	ck_assert_int_eq(BIO_ctrl(bio, SET_KTLS, 1, (void *)&sealer_keys), 1);
	ck_assert(s->wire.sealing);
	ck_assert_uint_eq(s->wire.switch_at, 10);
	queue("first");
	queue_record(21, "al");
	queue("second!");
	send_queued(0);

	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 10, MSG_MORE);
	ck_assert(!posted());
	complete(&sqe, 10);
	ck_assert(!s->wire.switch_pending);

	sqe = take();
	expect_sealed(&sqe, MSG_MORE, 0, 23, "first");
	ck_assert(!posted());
	complete(&sqe, (int)sqe.len);

	sqe = take();
	expect_sealed(&sqe, MSG_MORE, 1, 21, "al");
	ck_assert(!posted());
	complete(&sqe, (int)sqe.len);

	/* The last of tx is sealed: tx starts over and the protocol may fill
	 * it while the records leave. */
	sqe = take();
	expect_sealed(&sqe, 0, 2, 23, "second!");
	ck_assert(!posted());
	ck_assert_uint_eq(s->wire.tx_len, 0);
	ck_assert_uint_eq(own.drives, 1);
	complete(&sqe, (int)sqe.len);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_uint_eq(own.drives, 2);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* ---- gather: tx around the holes that leave from mapped pages ---- */

/* Where mapped file pages would be: only their addresses matter. */
static char src1[16], src2[16], src3[16];

struct hole {
	size_t at, len;
	const char *src;
};

/* n bytes of tx reserved and committed, with the holes given mapped
 * before the commit, as sock_batch_map does. */
static char *tx_with_holes(size_t n, const struct hole *holes, size_t nholes)
{
	size_t room;
	char *p = sock_out_reserve(s, n, &room);

	ck_assert_ptr_nonnull(p);
	memset(p, 't', n);
	ck_assert_uint_ge(sock_out_map_room(s), nholes);
	for (size_t i = 0; i < nholes; i++)
		ck_assert(sock_out_map(s, p + holes[i].at, holes[i].src, holes[i].len));
	sock_out_commit(s, n);
	return p;
}

#define HOLES(...)                                                                                 \
	(const struct hole[]){__VA_ARGS__},                                                        \
	    sizeof((const struct hole[]){__VA_ARGS__}) / sizeof(struct hole)

/* Holes in the middle, two of them side by side, given out of order; then
 * each send starts where the last one stopped: inside a hole, at a hole's
 * end, past the last hole (a plain send). */
START_TEST(test_gather_holes)
{
	char *p = tx_with_holes(100, HOLES({50, 10, src3}, {10, 10, src1}, {20, 10, src2}));
	send_queued(0);
	struct io_uring_sqe sqe = take();
	GATHERED(&sqe, 0, {p, 10}, {src1, 10}, {src2, 10}, {p + 30, 20}, {src3, 10}, {p + 60, 40});
	ck_assert(!posted());

	complete(&sqe, 15);
	sqe = take();
	GATHERED(&sqe, 0, {src1 + 5, 5}, {src2, 10}, {p + 30, 20}, {src3, 10}, {p + 60, 40});

	complete(&sqe, 15);
	sqe = take();
	GATHERED(&sqe, 0, {p + 30, 20}, {src3, 10}, {p + 60, 40});

	complete(&sqe, 30);
	sqe = take();
	expect_send(&sqe, p + 60, 40, 0);

	complete(&sqe, 40);
	ck_assert(!posted());
	ck_assert_uint_eq(s->holes->n, 0); /* given back with tx */
	ck_assert_uint_eq(sock_bytes_sent(s), 100);
	ck_assert_uint_eq(own.drives, 1);
}
END_TEST

/* Holes at both ends, and holes that are all of tx: no empty iovec. */
START_TEST(test_gather_edges)
{
	char *p = tx_with_holes(100, HOLES({0, 10, src1}, {90, 10, src2}));
	send_queued(0);
	struct io_uring_sqe sqe = take();
	GATHERED(&sqe, 0, {src1, 10}, {p + 10, 80}, {src2, 10});
	complete(&sqe, 100);
	ck_assert(!posted());

	tx_with_holes(32, HOLES({0, 16, src1}, {16, 16, src2}));
	send_queued(0);
	sqe = take();
	GATHERED(&sqe, 0, {src1, 16}, {src2, 16});
	complete(&sqe, 32);
	ck_assert(!posted());
}
END_TEST

/* A send cut by --limit-rate inside a hole leaves uncorked; the next one,
 * when the tokens are back, starts inside that hole. */
START_TEST(test_gather_cut_by_rate)
{
	char *p = tx_with_holes(100, HOLES({10, 10, src1}, {50, 10, src3}));
	sock_set_rate(s, 55, 0); /* a bucket of 55 bytes (pace.c: the whole rate) */
	send_queued(MSG_MORE);
	struct io_uring_sqe sqe = take();
	GATHERED(&sqe, 0, {p, 10}, {src1, 10}, {p + 20, 30}, {src3, 5});
	complete(&sqe, 55);

	/* No tokens: a timer, and the sock is busy until it fires. */
	sqe = take();
	ck_assert_uint_eq(sqe.opcode, IORING_OP_TIMEOUT);
	ck_assert(!posted());
	ck_assert(sock_busy(s));
	ck_assert(sock_throttled(s));
	now_ms += 1000;
	complete(&sqe, -ETIME);
	sqe = take();
	GATHERED(&sqe, MSG_MORE, {src3 + 5, 5}, {p + 60, 40});
	complete(&sqe, 45);
	ck_assert(!posted());
	ck_assert_uint_eq(sock_bytes_sent(s), 100);
}
END_TEST

/* A mapped window may go only once no hole still to be sent points into
 * it (sock_map's window before): a hole partly sent still does, one whole
 * sent does not, and tx given back holds none. */
START_TEST(test_maps_into_until_sent)
{
	tx_with_holes(100, HOLES({10, 10, src1 + 2}, {50, 10, src3}));
	ck_assert(sock_out_maps_into(s, src1, sizeof(src1)));
	ck_assert(sock_out_maps_into(s, src3, 1));
	ck_assert(!sock_out_maps_into(s, src2, sizeof(src2)));
	send_queued(0);

	struct io_uring_sqe sqe = take();
	ck_assert(sock_out_maps_into(s, src1, sizeof(src1))); /* in flight */
	complete(&sqe, 15);
	ck_assert(sock_out_maps_into(s, src1, sizeof(src1))); /* half of it sent */
	sqe = take();
	complete(&sqe, 10);
	ck_assert(!sock_out_maps_into(s, src1, sizeof(src1)));
	ck_assert(sock_out_maps_into(s, src3, sizeof(src3)));
	sqe = take();
	complete(&sqe, 75);
	ck_assert(!posted());
	ck_assert(!sock_out_maps_into(s, src3, sizeof(src3)));
}
END_TEST

/* Under kTLS a send ends where a control record stands, between holes;
 * the record, then the rest with the hole behind it. */
START_TEST(test_gather_ends_at_record)
{
	as_ktls();
	char *p = tx_with_holes(40, HOLES({10, 10, src1}));
	queue_record(21, "al");
	size_t room;
	ck_assert_ptr_eq(sock_out_reserve(s, 60, &room), p + 40);
	memset(p + 40, 'u', 60);
	ck_assert(sock_out_map(s, p + 50, src3, 10));
	sock_out_commit(s, 60);
	send_queued(0);

	struct io_uring_sqe sqe = take();
	GATHERED(&sqe, MSG_MORE, {p, 10}, {src1, 10}, {p + 20, 20});
	complete(&sqe, 40);
	sqe = take();
	expect_record(&sqe, 21, "al");
	complete(&sqe, 2);
	sqe = take();
	GATHERED(&sqe, 0, {p + 40, 10}, {src3, 10}, {p + 60, 40});
	complete(&sqe, 60);
	ck_assert(!posted());
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* ---- the kTLS hang-up watch ---- */

/* The watch, as watch_hangup posts it after the switch, completing with
 * revents. */
static void watch_completes(int revents)
{
	s->hup_posted = true;
	s->inflight++;
	sock_hold(s);
	sock_hup_done(&s->hup_op, revents, 0);
	sock_release(s);
}

/* After the peer's FIN (the watch completes with POLLRDHUP) each send asks
 * the socket first: still connected, it goes; hung up, the connection
 * fails instead, since a kTLS write into it would seem to succeed. */
START_TEST(test_ktls_hangup_stops_sends)
{
	as_ktls();
	watch_completes(POLLOUT | POLLRDHUP);
	ck_assert(s->peer_fin);
	ck_assert_ptr_null(own.failed);

	queue("x");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 1, 0);
	complete(&sqe, 1);

	close(peer); /* the socket now polls POLLHUP */
	peer = -1;
	queue("y");
	send_queued(0);
	ck_assert(!posted());
	ck_assert_str_eq(own.failed, "client went away (hang-up)");
	ck_assert_uint_eq(stats.ktls_hangups, 1);
}
END_TEST

/* After our own FIN (sock_shutdown_write) POLLHUP is a graceful close,
 * which the reads see; an error is a hang-up all the same, and fails the
 * connection at once. */
START_TEST(test_ktls_hangup_watch)
{
	as_ktls();
	sock_shutdown_write(s);
	watch_completes(POLLHUP);
	ck_assert_ptr_null(own.failed);
	watch_completes(POLLERR | POLLHUP);
	ck_assert_str_eq(own.failed, "client went away (hang-up)");
	ck_assert(own.released);
	ck_assert(!posted());
}
END_TEST

/* ---- a socket that follows its room: sends never wait in the ring ---- */

/* As sock_room leaves a TCP socket it asked (a Unix one has no
 * TCP_NOTSENT_LOWAT, and would not follow its room at all). */
static void as_following_room(void)
{
	s->follow_room = true;
	s->lowat_set = true;
}

/* The transport waits for POLLOUT: a poll is the one operation posted. */
static void expect_poll_out(void)
{
	struct io_uring_sqe sqe = take();

	ck_assert_uint_eq(sqe.opcode, IORING_OP_POLL_ADD);
	ck_assert_int_eq(sqe.fd, s->fd);
	ck_assert(!posted());
	ck_assert(sock_busy(s));
	complete(&sqe, POLLOUT);
}

/* Each send says MSG_DONTWAIT; one the socket took nothing of (-EAGAIN)
 * or part of waits for POLLOUT, not in the ring, and goes on from where it
 * stopped; the protocol moves on only once all of it left. While it waits
 * the sock is busy: a send asked for meanwhile posts nothing. */
START_TEST(test_room_send_does_not_wait)
{
	as_following_room();
	s->room = 1u << 20; /* as the kernel last said */
	queue("hello, world");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 12, MSG_DONTWAIT);
	complete(&sqe, -EAGAIN);
	ck_assert_ptr_null(own.failed);
	ck_assert_uint_eq(stats.room_waits, 1);
	ck_assert_uint_eq(stats.refused_sends, 1); /* its room said it took them */
	ck_assert_uint_eq(s->take, SOCK_POLLED_ROOM);
	send_queued(0);
	expect_poll_out();

	sqe = take();
	expect_send(&sqe, s->wire.tx, 12, MSG_DONTWAIT);
	s->room = 1u << 20;
	complete(&sqe, 8); /* two thirds: the kernel's overhead, no refusal */
	ck_assert_uint_eq(stats.refused_sends, 1);
	ck_assert_uint_eq(own.drives, 0);
	expect_poll_out();

	sqe = take();
	expect_send(&sqe, s->wire.tx + 8, 4, MSG_DONTWAIT);
	complete(&sqe, 4);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_uint_eq(own.drives, 1);
	ck_assert_uint_eq(sock_bytes_sent(s), 12);
	ck_assert_uint_eq(stats.room_waits, 2);
	ck_assert_uint_eq(s->take, 2 * SOCK_POLLED_ROOM); /* taken whole: it doubles */
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* A send the room did not promise (a head behind a full queue) that the
 * socket does not take is no refusal, and says nothing of what it takes;
 * and one that still takes nothing after POLLOUT waits in the ring, since
 * a socket that says POLLOUT and takes nothing would spin. */
START_TEST(test_room_unpromised_and_spin)
{
	as_following_room();
	queue("head");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 4, MSG_DONTWAIT);
	complete(&sqe, -EAGAIN);
	ck_assert_uint_eq(stats.refused_sends, 0);
	ck_assert_uint_eq(s->take, SOCK_TAKE_FIRST);
	expect_poll_out();

	sqe = take();
	expect_send(&sqe, s->wire.tx, 4, MSG_DONTWAIT);
	complete(&sqe, -EAGAIN);
	sqe = take();
	expect_send(&sqe, s->wire.tx, 4, 0); /* no poll: in the ring */
	ck_assert(!posted());
	complete(&sqe, 4);
	ck_assert(!posted());
	ck_assert_uint_eq(own.drives, 1);

	queue("next"); /* a send that took bytes ends it */
	send_queued(0);
	sqe = take();
	expect_send(&sqe, s->wire.tx, 4, MSG_DONTWAIT);
	complete(&sqe, 4);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* A fast socket (or one not yet asked) keeps the send that waits in the
 * ring: one operation, no poll. */
START_TEST(test_fast_send_waits_in_ring)
{
	as_following_room();
	sock_stop_following_room(s);
	queue("hello");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 5, 0);
	complete(&sqe, 5);
	ck_assert(!posted());
	ck_assert_uint_eq(own.drives, 1);
}
END_TEST

/* Records sealed and not taken move to a buffer their own size, and leave
 * from it, byte for byte, once the socket has room. */
START_TEST(test_room_sealed_rest_shrinks)
{
	enum { PLAIN = 40000, LEFT = 1000 };
	static char plain[PLAIN + 1];
	static unsigned char rest[LEFT];

	memset(plain, 'p', PLAIN);
	s->wire.seal_allowed = true;
	ck_assert_int_eq(BIO_ctrl(bio, SET_KTLS, 1, (void *)&sealer_keys), 1);
	as_following_room();
	queue(plain);
	send_queued(0);
	struct io_uring_sqe sqe = take();
	ck_assert_uint_eq(s->ct_cap, 64 * 1024);
	size_t sealed = s->ct_len;
	expect_send(&sqe, s->ct, sealed, MSG_DONTWAIT);
	memcpy(rest, s->ct + sealed - LEFT, LEFT);
	complete(&sqe, (int)(sealed - LEFT));
	ck_assert_uint_eq(s->ct_cap, 16 * 1024);
	ck_assert_uint_eq(s->ct_len, LEFT);
	ck_assert_uint_eq(s->wire.tx_cap, 0); /* tx held nothing: given back */
	ck_assert_uint_eq(own.drives, 0);
	expect_poll_out();

	sqe = take();
	expect_send(&sqe, s->ct, LEFT, MSG_DONTWAIT);
	ck_assert_int_eq(memcmp(s->ct, rest, LEFT), 0);
	/* Records alone in flight: the protocol may fill tx meanwhile. */
	ck_assert_uint_eq(own.drives, 1);
	complete(&sqe, LEFT);
	ck_assert(!posted());
	ck_assert(!sock_tx_pending(s));
	ck_assert_uint_eq(own.drives, 2);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* A chunk is no larger than the socket has shown it takes, and no larger
 * than SOCK_TAKE_FIRST in a tick after a refusal. */
START_TEST(test_room_take_bounds_chunks)
{
	as_following_room();
	s->room = 1u << 20;
	ck_assert_uint_eq(s->take, SOCK_TAKE_FIRST);
	ck_assert_uint_eq(sock_fits(s, 256 * 1024), SOCK_TAKE_FIRST - SOCK_TAKE_FIRST / 512);
	s->take = 2u << 20;
	ck_assert_uint_eq(sock_fits(s, 256 * 1024), (1u << 20) - (1u << 20) / 512);

	stats.refused_sends++;
	sock_env_tick(&env);
	ck_assert(env.tcp_tight);
	ck_assert_uint_eq(sock_fits(s, 256 * 1024), SOCK_TAKE_FIRST - SOCK_TAKE_FIRST / 512);
	sock_env_tick(&env); /* a tick without one */
	ck_assert(!env.tcp_tight);
	ck_assert_uint_eq(sock_fits(s, 256 * 1024), (1u << 20) - (1u << 20) / 512);
}
END_TEST

/* An HTTP/2 batch follows the room as a body's chunk does: no larger than
 * the socket takes, yet room for a whole DATA frame (or it would close
 * empty, nothing in flight to bring the next turn); a socket that takes
 * too little waits for POLLOUT holding no batch; and bytes queued with no
 * send in flight are sent, whose completion brings the next turn. */
START_TEST(test_room_batch_follows)
{
	size_t room;
	char *p;

	as_following_room();
	s->room = 1u << 20;
	s->take = 100 * 1024;
	p = sock_batch_open(s, 256 * 1024, &room);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(room, 100 * 1024 - 100 * 1024 / 512);
	memset(p, 'a', 1000);
	ck_assert_int_eq(sock_batch_send(s, 1000), 1);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->wire.tx, 1000, MSG_DONTWAIT);
	/* While it is in flight no batch opens (no stage to grow). */
	ck_assert_ptr_null(sock_batch_open(s, 256 * 1024, &room));
	complete(&sqe, 1000);
	ck_assert_uint_eq(own.drives, 1);

	/* Room enough to send (SOCK_ROOM_MIN after the margins), not for a
	 * DATA frame and its header: the batch gets SOCK_BATCH_MIN. */
	s->take = SOCK_ROOM_MIN + SOCK_ROOM_MIN / 512;
	ck_assert_uint_eq(sock_fits(s, 256 * 1024), SOCK_ROOM_MIN);
	p = sock_batch_open(s, 256 * 1024, &room);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(room, SOCK_BATCH_MIN);
	sock_batch_drop(s);

	s->take = SOCK_ROOM_MIN / 2; /* too little: wait, holding nothing */
	ck_assert_ptr_null(sock_batch_open(s, 256 * 1024, &room));
	ck_assert(!s->batch_open);
	ck_assert_ptr_null(s->wire.tx);
	expect_poll_out();
	ck_assert_uint_eq(own.drives, 2);

	queue("hello"); /* queued outside a batch, nothing in flight: it goes */
	ck_assert_ptr_null(sock_batch_open(s, 256 * 1024, &room));
	sqe = take();
	expect_send(&sqe, s->wire.tx, 5, MSG_DONTWAIT);
	complete(&sqe, 5);
	ck_assert_uint_eq(own.drives, 3);
	ck_assert_ptr_null(own.failed);
}
END_TEST

/* ---- sendfile: one chunk a turn ---- */

/* An unlinked file of n bytes (n = 0: empty). */
static int file_of(size_t n)
{
	char path[] = "/tmp/ktlsd-test-file-XXXXXX";
	static char page[4096];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	memset(page, 'x', sizeof(page));
	for (size_t done = 0; done < n; done += sizeof(page))
		ck_assert_int_eq(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	return fd;
}

/* A socket that took the whole chunk could take the next at once, but
 * the worker's other connections go first: a no-op, then the drive; and
 * the no-op says nothing of the socket's room. */
START_TEST(test_sendfile_whole_waits_a_turn)
{
	int fd = file_of(4096);
	size_t sent;

	ck_assert_int_eq(sock_sendfile(s, fd, 0, 4096, &sent), SOCK_SENDFILE_SENT);
	ck_assert_uint_eq(sent, 4096);
	ck_assert(sock_busy(s));
	struct io_uring_sqe sqe = take();
	ck_assert_uint_eq(sqe.opcode, IORING_OP_NOP);
	ck_assert(!posted());
	ck_assert_uint_eq(own.drives, 0);
	/* A tick meanwhile: 4 KiB in 250 ms is a slow client's pace, but
	 * the sock waits for the worker, not for the client. */
	now_ms += 250;
	sock_tick(s, now_ms);
	ck_assert(!s->found_slow);
	complete(&sqe, 0);
	ck_assert(!sock_busy(s));
	ck_assert_uint_eq(own.drives, 1);
	ck_assert(!s->room_polled);
	ck_assert_ptr_null(own.failed);
	close(fd);
}
END_TEST

/* A socket that took part of it is full: a POLLOUT, and the drive once
 * it has room. */
START_TEST(test_sendfile_short_waits_for_room)
{
	int fd = file_of(2 * SOCK_SENDFILE_MAX), buf = 64 * 1024;
	size_t sent;

	ck_assert_int_eq(setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)), 0);
	ck_assert_int_eq(sock_sendfile(s, fd, 0, 2 * SOCK_SENDFILE_MAX, &sent), SOCK_SENDFILE_SENT);
	ck_assert_uint_gt(sent, 0);
	ck_assert_uint_lt(sent, SOCK_SENDFILE_MAX); /* the peer reads nothing */
	struct io_uring_sqe sqe = take();
	ck_assert_uint_eq(sqe.opcode, IORING_OP_POLL_ADD);
	ck_assert_int_eq(sqe.fd, s->fd);
	ck_assert_uint_eq(sqe.poll32_events, POLLOUT);
	ck_assert(!posted());
	complete(&sqe, POLLOUT);
	ck_assert_uint_eq(own.drives, 1);
	ck_assert(s->room_polled);
	ck_assert_ptr_null(own.failed);
	close(fd);
}
END_TEST

/* One call moves no more than SOCK_SENDFILE_MAX however much the socket
 * would take: the worker's other connections wait while it runs. The
 * socket takes it whole, so the next chunk waits only a turn. */
START_TEST(test_sendfile_takes_at_most_max)
{
	int fd = file_of(4 * SOCK_SENDFILE_MAX), buf = 16 << 20;
	size_t sent;

	/* Past net.core.wmem_max: the test runs as root, as the suite does. */
	ck_assert_int_eq(setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)), 0);
	ck_assert_int_eq(sock_sendfile(s, fd, 0, 4 * SOCK_SENDFILE_MAX, &sent), SOCK_SENDFILE_SENT);
	ck_assert_uint_eq(sent, SOCK_SENDFILE_MAX);
	struct io_uring_sqe sqe = take();
	ck_assert_uint_eq(sqe.opcode, IORING_OP_NOP);
	complete(&sqe, 0);
	ck_assert_int_eq(sock_sendfile(s, fd, sent, 3 * SOCK_SENDFILE_MAX, &sent), SOCK_SENDFILE_SENT);
	ck_assert_uint_eq(sent, SOCK_SENDFILE_MAX);
	sqe = take();
	ck_assert_uint_eq(sqe.opcode, IORING_OP_NOP);
	complete(&sqe, 0);
	ck_assert_uint_eq(own.drives, 2);
	ck_assert_ptr_null(own.failed);
	close(fd);
}
END_TEST

/* ---- ktlsd's sealer: cached pages are read, from mapped pages after the disk ---- */

/* The sealer on, nothing before the switch. */
static void as_sealer(void)
{
	s->wire.seal_allowed = true;
	ck_assert_int_eq(BIO_ctrl(bio, SET_KTLS, 1, (void *)&sealer_keys), 1);
	ck_assert(s->wire.sealing);
}

/* Whether the first 4 KiB of fd go into tx from its mapped pages
 * (sock_body_map), as HTTP/1.1's map_chunk asks. */
static bool body_maps(int fd, struct sock_map *m, uint64_t *resident_to)
{
	const struct sock_file f = {fd, SOCK_MAP_MIN, resident_to};
	size_t room;
	char *at = sock_out_reserve(s, 4096, &room);

	ck_assert_ptr_nonnull(at);
	return sock_body_map(s, &f, m, at, 0, 4096);
}

/* Cached pages are read, not sealed from the mapping, whether the
 * download is new, shown fast, or found slow by a tick (sock_body.c,
 * map_holes). */
START_TEST(test_sealer_reads_cached)
{
	int fd = file_of(SOCK_MAP_MIN);
	uint64_t resident_to = 0;
	struct sock_map m = {0};

	as_sealer();
	ck_assert(!body_maps(fd, &m, &resident_to)); /* new: not shown fast */
	sock_stop_following_room(s); /* shown fast */
	ck_assert(!body_maps(fd, &m, &resident_to));
	queue("slow");
	send_queued(0);
	struct io_uring_sqe sqe = take();
	now_ms += 250;
	sock_tick(s, now_ms); /* 4 bytes in 250 ms, and the send still out */
	complete(&sqe, (int)sqe.len);
	ck_assert(!body_maps(fd, &m, &resident_to));
	ck_assert(!m.met_disk);
	ck_assert_ptr_null(own.failed);
	close(fd);
}
END_TEST

/* A fast download whose file comes from the disk (here a hole: no page in
 * memory) reads it, and seals its pages from the mapping once they are
 * in. */
START_TEST(test_sealer_maps_after_disk)
{
	static char page[4096];
	int fd = file_of(0);
	uint64_t resident_to = 0;
	struct sock_map m = {0};

	ck_assert_int_eq(ftruncate(fd, SOCK_MAP_MIN), 0);
	as_sealer();
	sock_stop_following_room(s); /* shown fast */
	ck_assert(!body_maps(fd, &m, &resident_to));
	memset(page, 'x', sizeof(page));
	ck_assert_int_eq(pwrite(fd, page, sizeof(page), 0), (ssize_t)sizeof(page));
	ck_assert(body_maps(fd, &m, &resident_to));
	sock_map_release(&m);
	close(fd);
}
END_TEST

/* Under ktlsd's sealer a body's chunk seals into a buffer of tx's size,
 * and a socket that follows its room holds one buffer at a time: tx goes
 * back once sealed, and the next chunk, as large as the room lets it up to
 * a whole seal, waits until the records are out (sock_body_room). A fast
 * socket reads its next 128 KiB beside the send. */
static void seal_one_chunk(size_t tx_cap)
{
	size_t room;
	char *p = sock_body_room(s, &room);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(s->wire.tx_cap, tx_cap);
	ck_assert_uint_le(tls_seal_room(room), tx_cap);
	ck_assert_uint_ge(room, tx_cap - tx_cap / 64);
	memset(p, 'c', room);
	sock_out_commit(s, room);
	send_queued(0);
}

START_TEST(test_room_sealed_chunk_one_buffer)
{
	size_t room, out, kept;

	as_sealer();
	as_following_room();
	s->room = 1u << 20;
	s->take = 2u << 20;
	seal_one_chunk(2 * STAGE_CAP);
	struct io_uring_sqe sqe = take();
	expect_send(&sqe, s->ct, s->ct_len, MSG_DONTWAIT);
	ck_assert_uint_eq(s->ct_cap, 2 * STAGE_CAP);
	ck_assert_uint_eq(s->wire.tx_cap, 0);
	bufpool_bytes(&pool, &out, &kept);
	ck_assert_uint_eq(out, 2 * STAGE_CAP);
	ck_assert_ptr_null(sock_body_room(s, &room));
	complete(&sqe, (int)sqe.len);
	ck_assert_uint_eq(sock_bytes_sent(s), sqe.len);
	ck_assert_ptr_nonnull(sock_body_room(s, &room));

	/* Shown fast: the next chunk is read while this one's records go. */
	sock_stop_following_room(s);
	sock_release_buffers(s);
	seal_one_chunk(STAGE_CAP);
	sqe = take();
	ck_assert_uint_eq(s->ct_cap, STAGE_CAP);
	ck_assert_uint_eq(s->wire.tx_cap, STAGE_CAP);
	ck_assert_ptr_nonnull(sock_body_room(s, &room));
	complete(&sqe, (int)sqe.len);
	ck_assert_ptr_null(own.failed);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("sock_send");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plain_send);
	tcase_add_test(tc, test_abort_counts_send_taken);
	tcase_add_test(tc, test_ktls_record_between);
	tcase_add_test(tc, test_ktls_records_in_order);
	tcase_add_test(tc, test_ktls_switch_after_ciphertext);
	tcase_add_test(tc, test_sealer_order);
	tcase_add_test(tc, test_gather_holes);
	tcase_add_test(tc, test_maps_into_until_sent);
	tcase_add_test(tc, test_gather_edges);
	tcase_add_test(tc, test_gather_cut_by_rate);
	tcase_add_test(tc, test_gather_ends_at_record);
	tcase_add_test(tc, test_ktls_hangup_stops_sends);
	tcase_add_test(tc, test_ktls_hangup_watch);
	tcase_add_test(tc, test_room_send_does_not_wait);
	tcase_add_test(tc, test_room_unpromised_and_spin);
	tcase_add_test(tc, test_fast_send_waits_in_ring);
	tcase_add_test(tc, test_room_sealed_rest_shrinks);
	tcase_add_test(tc, test_room_sealed_chunk_one_buffer);
	tcase_add_test(tc, test_room_take_bounds_chunks);
	tcase_add_test(tc, test_room_batch_follows);
	tcase_add_test(tc, test_sendfile_whole_waits_a_turn);
	tcase_add_test(tc, test_sendfile_short_waits_for_room);
	tcase_add_test(tc, test_sendfile_takes_at_most_max);
	tcase_add_test(tc, test_sealer_reads_cached);
	tcase_add_test(tc, test_sealer_maps_after_disk);
	suite_add_tcase(su, tc);
	return check_run(su);
}
