/* Tests ktls/tls_bio.c through OpenSSL's BIO calls, as OpenSSL drives it:
 * reads served from rx in pieces of any size, writes appended to tx, and
 * after the switch to kernel TLS the records OpenSSL writes queued as
 * control records, in order, each behind the tx bytes written before it.
 * The sends that drain the queue are the transport's (server/net/sock_send.c,
 * tested in test_sock_send.c) and are exercised by the integration and
 * guest tests. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include <openssl/bio.h>

#include "ktls/tls_bio.h"
#include "tests/unit/check_run.h"

/* The controls OpenSSL 3.0 sends a BIO for kernel TLS, commented out in
 * openssl/bio.h: BIO_set_ktls (its keys), BIO_set_ktls_ctrl_msg (the type
 * of the non-data record it writes next) and BIO_clear_ktls_ctrl_msg. */
#define SET_KTLS 72
#define CTRL_MSG 74
#define CLEAR_CTRL_MSG 75

static BIO *bio_on(struct tls_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	BIO *b = tls_bio_new(w);
	ck_assert_ptr_nonnull(b);
	return b;
}

static void done(BIO *b, struct tls_wire *w)
{
	BIO_free(b);
	tls_wire_free_ctrl(w);
	w->tx_len = 0;
	tls_wire_release_tx(w);
}

/* What OpenSSL does for an alert or a ticket under kernel TLS: say its
 * type, write it, clear the type. */
static void write_record(BIO *b, int type, const char *data)
{
	ck_assert_int_eq(BIO_ctrl(b, CTRL_MSG, type, NULL), 1);
	ck_assert_int_eq(BIO_write(b, data, (int)strlen(data)), (int)strlen(data));
	ck_assert_int_eq(BIO_ctrl(b, CLEAR_CTRL_MSG, 0, NULL), 1);
}

START_TEST(test_read_in_pieces)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);
	char rx[] = "0123456789", out[16];

	w.rx = rx;
	w.rx_start = 2;
	w.rx_end = 10;
	ck_assert_int_eq(BIO_pending(b), 8);
	ck_assert_int_eq(BIO_read(b, out, 3), 3);
	ck_assert_int_eq(memcmp(out, "234", 3), 0);
	ck_assert_uint_eq(w.rx_start, 5);
	/* More asked than there is: what there is. */
	ck_assert_int_eq(BIO_read(b, out, sizeof(out)), 5);
	ck_assert_int_eq(memcmp(out, "56789", 5), 0);
	ck_assert_uint_eq(w.rx_start, w.rx_end);
	ck_assert_int_eq(BIO_pending(b), 0);

	/* Nothing left: retry, until the peer has closed; then EOF. */
	ck_assert_int_eq(BIO_read(b, out, sizeof(out)), -1);
	ck_assert(BIO_should_retry(b) && BIO_should_read(b));
	ck_assert_int_eq(BIO_eof(b), 0);
	w.eof = true;
	ck_assert_int_eq(BIO_read(b, out, sizeof(out)), 0);
	ck_assert(!BIO_should_retry(b));
	ck_assert_int_eq(BIO_eof(b), 1);
	done(b, &w);
}
END_TEST

START_TEST(test_writes_append)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);
	static char big[70000];

	ck_assert_int_eq(BIO_write(b, "abc", 3), 3);
	ck_assert_int_eq(BIO_write(b, "de", 2), 2);
	ck_assert_uint_eq(w.tx_len, 5);
	ck_assert_int_eq(memcmp(w.tx, "abcde", 5), 0);
	ck_assert_int_eq(BIO_wpending(b), 5);
	ck_assert_ptr_null(w.ctrl);

	/* Growing keeps what was there. */
	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(BIO_write(b, big, sizeof(big)), (int)sizeof(big));
	ck_assert_uint_eq(w.tx_len, 5 + sizeof(big));
	ck_assert_uint_ge(w.tx_cap, w.tx_len);
	ck_assert_int_eq(memcmp(w.tx, "abcde", 5), 0);
	ck_assert_int_eq(memcmp(w.tx + 5, big, sizeof(big)), 0);
	ck_assert_int_eq(BIO_ctrl(b, BIO_CTRL_GET_KTLS_SEND, 0, NULL), 0);
	ck_assert_int_eq(BIO_ctrl(b, BIO_CTRL_GET_KTLS_RECV, 0, NULL), 0);
	ck_assert_int_eq(BIO_flush(b), 1); /* never a send of its own */
	done(b, &w);
}
END_TEST

/* tx must not move under a send in flight, and nothing may be appended
 * where a file read is writing. */
START_TEST(test_busy_tx_refuses)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);
	static char big[40000];

	ck_assert_int_eq(tls_wire_append(&w, "abc", 3), 0);
	char *at = w.tx;
	size_t cap = w.tx_cap;

	w.tx_busy = true;
	ck_assert_int_eq(tls_wire_append(&w, "de", 2), 0); /* fits: nothing moves */
	ck_assert_int_eq(tls_wire_reserve(&w, cap), -EBUSY);
	ck_assert_int_eq(tls_wire_append(&w, big, sizeof(big)), -EBUSY);
	ck_assert_int_eq(BIO_write(b, big, sizeof(big)), -1);
	ck_assert_ptr_eq(w.tx, at);
	ck_assert_uint_eq(w.tx_len, 5);
	w.tx_busy = false;

	w.tx_fills = 1;
	ck_assert_int_eq(tls_wire_append(&w, "f", 1), -EBUSY);
	ck_assert_int_eq(tls_wire_reserve(&w, 1), 0); /* room a read may write into */
	ck_assert_int_eq(tls_wire_reserve(&w, cap), -EBUSY);
	ck_assert_uint_eq(w.tx_len, 5);
	w.tx_fills = 0;

	ck_assert_int_eq(tls_wire_append(&w, big, sizeof(big)), 0);
	ck_assert_int_eq(memcmp(w.tx, "abcde", 5), 0);
	done(b, &w);
}
END_TEST

static int allocs, frees;
static char pool[2][1 << 16];

static void *pool_get(void *ctx, size_t want, size_t *cap)
{
	ck_assert_ptr_eq(ctx, pool);
	if (want > sizeof(pool[0]) || allocs == 2)
		return NULL;
	*cap = sizeof(pool[0]);
	return pool[allocs++];
}

static void pool_put(void *ctx, void *buf, size_t cap)
{
	ck_assert_ptr_eq(ctx, pool);
	ck_assert_uint_eq(cap, sizeof(pool[0]));
	ck_assert(buf == pool[0] || buf == pool[1]);
	frees++;
}

/* With an allocator, tx comes from it and goes back to it, whole. */
START_TEST(test_tx_from_allocator)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);
	static char big[40000];

	allocs = frees = 0;
	w.tx_alloc = pool_get;
	w.tx_free = pool_put;
	w.alloc_ctx = pool;
	ck_assert_int_eq(BIO_write(b, "abc", 3), 3);
	ck_assert_ptr_eq(w.tx, pool[0]);
	ck_assert_uint_eq(w.tx_cap, sizeof(pool[0]));
	ck_assert_int_eq(tls_wire_append(&w, big, sizeof(big)), 0);
	ck_assert_ptr_eq(w.tx, pool[0]); /* it fit: same buffer */
	/* More than a pooled buffer holds: refused, nothing lost. */
	ck_assert_int_eq(tls_wire_append(&w, big, sizeof(big)), -ENOMEM);
	ck_assert_uint_eq(w.tx_len, 3 + sizeof(big));
	ck_assert_int_eq(memcmp(w.tx, "abc", 3), 0);
	ck_assert_int_eq(frees, 0);
	done(b, &w);
	ck_assert_int_eq(frees, 1);
	ck_assert_ptr_null(w.tx);
	ck_assert_uint_eq(w.tx_cap, 0);
}
END_TEST

/* After the switch, each write is one record queued behind the tx bytes
 * written before it, in the order written, with its type (application
 * data, 23, when OpenSSL named none); tx itself is left alone. */
START_TEST(test_ctrl_records_in_order)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);

	ck_assert_int_eq(BIO_write(b, "sealed-before", 13), 13);
	w.ktls_tx = true;
	ck_assert_int_eq(BIO_ctrl(b, BIO_CTRL_GET_KTLS_SEND, 0, NULL), 1);
	write_record(b, 22, "ticket");
	ck_assert_int_eq(tls_wire_append(&w, "body", 4), 0); /* plaintext, for the kernel */
	write_record(b, 21, "alert");
	ck_assert_int_eq(BIO_write(b, "data", 4), 4);
	ck_assert_uint_eq(w.tx_len, 17);
	ck_assert_int_eq(memcmp(w.tx, "sealed-beforebody", 17), 0);

	static const struct {
		size_t at;
		unsigned char type;
		const char *data;
	} want[] = {{13, 22, "ticket"}, {17, 21, "alert"}, {17, 23, "data"}};
	const struct tls_ctrl_record *r = w.ctrl;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++, r = r->next) {
		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(r->at, want[i].at);
		ck_assert_uint_eq(r->type, want[i].type);
		ck_assert_uint_eq(r->len, strlen(want[i].data));
		ck_assert_int_eq(memcmp(r->data, want[i].data, r->len), 0);
		if (!r->next)
			ck_assert_ptr_eq(r, w.ctrl_tail);
	}
	ck_assert_ptr_null(r);

	tls_wire_free_ctrl(&w);
	ck_assert_ptr_null(w.ctrl);
	ck_assert_ptr_null(w.ctrl_tail);
	write_record(b, 21, "close"); /* a queue emptied starts again */
	ck_assert_ptr_nonnull(w.ctrl);
	ck_assert_ptr_eq(w.ctrl, w.ctrl_tail);
	done(b, &w);
}
END_TEST

/* After a client's KeyUpdate the kernel keeps the old keys: OpenSSL's own
 * KeyUpdate (a handshake record, 22) is swallowed, other records are not;
 * with ktlsd's sealer, which re-keys, it goes out. */
START_TEST(test_key_update_held_back)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);

	w.ktls_tx = true;
	w.key_update_seen = true;
	write_record(b, 22, "key-update");
	ck_assert_ptr_null(w.ctrl);
	write_record(b, 21, "close_notify");
	ck_assert_ptr_nonnull(w.ctrl);
	ck_assert_uint_eq(w.ctrl->type, 21);
	ck_assert_ptr_null(w.ctrl->next);

	w.sealing = true;
	write_record(b, 22, "key-update");
	ck_assert_ptr_nonnull(w.ctrl->next);
	ck_assert_uint_eq(w.ctrl->next->type, 22);
	ck_assert_uint_eq(w.ctrl->next->len, 10);
	ck_assert_uint_eq(w.tx_len, 0);
	done(b, &w);
}
END_TEST

/* The receive side stays in user space: OpenSSL's offer of RX keys is
 * refused, and with kernel TLS and sealing both disallowed so is TX. */
START_TEST(test_switch_refused)
{
	struct tls_wire w;
	BIO *b = bio_on(&w);
	unsigned char info[64] = {0};

	ck_assert_int_eq(BIO_ctrl(b, SET_KTLS, 0, info), 0);
	ck_assert_int_eq(BIO_ctrl(b, SET_KTLS, 1, info), 0);
	ck_assert(!w.ktls_tx);
	ck_assert(!w.switch_pending);
	done(b, &w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tls_bio");
	TCase *tc = tcase_create("tls_bio");

	tcase_add_test(tc, test_read_in_pieces);
	tcase_add_test(tc, test_writes_append);
	tcase_add_test(tc, test_busy_tx_refuses);
	tcase_add_test(tc, test_tx_from_allocator);
	tcase_add_test(tc, test_ctrl_records_in_order);
	tcase_add_test(tc, test_key_update_held_back);
	tcase_add_test(tc, test_switch_refused);
	suite_add_tcase(s, tc);

	return check_run(s);
}
