#include "ktls/tls_bio.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "ktls/ktls.h"

/* Control codes OpenSSL 3.0 sends to a BIO for kernel TLS. 72, 74 and 75 are
 * internal (commented out in openssl/bio.h) but stable across 3.x; HAProxy
 * answers them the same way. */
#define TLS_BIO_CTRL_SET_KTLS 72
#define TLS_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG 74
#define TLS_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG 75

static BIO_METHOD *bio_method;
static pthread_once_t bio_method_once = PTHREAD_ONCE_INIT;

int tls_wire_reserve(struct tls_wire *w, size_t len)
{
	if (w->tx_cap - w->tx_len >= len)
		return 0;
	if (w->tx_busy || w->tx_fills)
		return -EBUSY; /* a send reads tx, or a read writes it: moving it would corrupt both */
	size_t cap = w->tx_cap ? w->tx_cap : 16384;
	while (cap - w->tx_len < len)
		cap *= 2;
	char *p;
	if (w->tx_alloc) {
		p = w->tx_alloc(w->alloc_ctx, cap, &cap);
		if (!p)
			return -ENOMEM;
		if (w->tx_len)
			memcpy(p, w->tx, w->tx_len);
		if (w->tx)
			w->tx_free(w->alloc_ctx, w->tx, w->tx_cap);
	} else {
		p = realloc(w->tx, cap);
		if (!p)
			return -ENOMEM;
	}
	w->tx = p;
	w->tx_cap = cap;
	return 0;
}

void tls_wire_release_tx(struct tls_wire *w)
{
	if (w->tx) {
		if (w->tx_free)
			w->tx_free(w->alloc_ctx, w->tx, w->tx_cap);
		else
			free(w->tx);
	}
	w->tx = NULL;
	w->tx_cap = w->tx_len = 0;
}

void tls_wire_free_ctrl(struct tls_wire *w)
{
	while (w->ctrl) {
		struct tls_ctrl_record *r = w->ctrl;
		w->ctrl = r->next;
		free(r);
	}
	w->ctrl_tail = NULL;
}

/* After the switch, OpenSSL writes only non-data records here (flagged by
 * the control-message ctrl): queue them in order behind what tx holds. */
static int queue_ctrl_record(struct tls_wire *w, const char *in, int inl)
{
	unsigned char type = (unsigned char)(w->ctrl_record_type ? w->ctrl_record_type : 23);

	/* After a client KeyUpdate, OpenSSL 3.0 answers with its own and moves
	 * to new write keys, but the kernel keeps the old ones and cannot be
	 * re-keyed. Sending that KeyUpdate would make the client expect new
	 * keys and reject everything after it; holding it back keeps the old
	 * keys valid for both sides until we close (with close_notify). The
	 * sealer follows it instead (tls_seal). */
	if (w->key_update_seen && type == 22 && !w->sealing)
		return inl;
	struct tls_ctrl_record *r = malloc(sizeof(*r) + (size_t)inl);
	if (!r)
		return -1;
	r->next = NULL;
	r->at = w->tx_len;
	r->type = type;
	r->len = (size_t)inl;
	memcpy(r->data, in, (size_t)inl);
	if (w->ctrl_tail)
		w->ctrl_tail->next = r;
	else
		w->ctrl = r;
	w->ctrl_tail = r;
	return inl;
}

int tls_wire_append(struct tls_wire *w, const void *data, size_t len)
{
	if (w->tx_fills)
		return -EBUSY; /* tx + tx_len is where a read is writing */
	int rc = tls_wire_reserve(w, len);
	if (rc < 0)
		return rc;
	memcpy(w->tx + w->tx_len, data, len);
	w->tx_len += len;
	return 0;
}

static int bio_read(BIO *b, char *out, int outl)
{
	struct tls_wire *w = BIO_get_data(b);
	size_t avail = w->rx_end - w->rx_start;

	BIO_clear_retry_flags(b);
	if (avail == 0) {
		if (w->eof)
			return 0;
		BIO_set_retry_read(b);
		return -1;
	}
	size_t n = avail < (size_t)outl ? avail : (size_t)outl;
	memcpy(out, w->rx + w->rx_start, n);
	w->rx_start += n;
	return (int)n;
}

static int bio_write(BIO *b, const char *in, int inl)
{
	struct tls_wire *w = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (w->ktls_tx)
		return queue_ctrl_record(w, in, inl);
	if (tls_wire_append(w, in, (size_t)inl) < 0)
		return -1;
	return inl;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	struct tls_wire *w = BIO_get_data(b);

	switch (cmd) {
	case BIO_CTRL_FLUSH:
		/* OpenSSL flushes before switching to kernel TLS, so that what
		 * it sealed under the old keys leaves first. No synchronous send
		 * on a worker: the switch waits in the queue behind those bytes
		 * (switch_at) and the transport programs the kernel when they
		 * have left. */
		return 1;
	case BIO_CTRL_PENDING:
		return (long)(w->rx_end - w->rx_start);
	case BIO_CTRL_WPENDING:
		return (long)w->tx_len;
	case BIO_CTRL_GET_KTLS_SEND:
		return w->ktls_tx;
	case BIO_CTRL_GET_KTLS_RECV:
		return 0; /* receive stays in user space by design (see ktls.h) */
	case TLS_BIO_CTRL_SET_KTLS:
		if (!num) /* RX: refused, OpenSSL goes on decrypting in user space */
			return 0;
		return ktls_prepare_tx(w, ptr) == 0;
	case TLS_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
		ktls_set_ctrl_record_type(w, (int)num);
		return 1;
	case TLS_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
		ktls_set_ctrl_record_type(w, 0);
		return 1;
	case BIO_CTRL_DUP:
	case BIO_CTRL_EOF:
		return cmd == BIO_CTRL_EOF ? w->eof : 1;
	default:
		return 0;
	}
}

static int bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* SSL_free: key material the wire still holds (a connection that ended
 * between OpenSSL's handing over and the switch) goes with it. */
static int bio_destroy(BIO *b)
{
	struct tls_wire *w = BIO_get_data(b);

	if (w) {
		OPENSSL_cleanse(&w->keys, sizeof(w->keys));
		OPENSSL_cleanse(w->tx_secret, sizeof(w->tx_secret));
		w->tx_secret_len = 0;
	}
	return 1;
}

static void bio_method_init(void)
{
	bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ktlsd ring");
	if (!bio_method)
		return;
	BIO_meth_set_read(bio_method, bio_read);
	BIO_meth_set_write(bio_method, bio_write);
	BIO_meth_set_ctrl(bio_method, bio_ctrl);
	BIO_meth_set_create(bio_method, bio_create);
	BIO_meth_set_destroy(bio_method, bio_destroy);
}

BIO *tls_bio_new(struct tls_wire *w)
{
	pthread_once(&bio_method_once, bio_method_init);
	if (!bio_method)
		return NULL;
	BIO *b = BIO_new(bio_method);
	if (b)
		BIO_set_data(b, w);
	return b;
}
