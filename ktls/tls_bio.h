/* The BIO between OpenSSL and a connection's ring buffers.
 *
 * OpenSSL never touches the socket for data: reads are served from bytes the
 * ring already received (one large recv feeds many records), writes append
 * ciphertext to an output buffer that leaves in one ring send (many records
 * per send). The socket fd is used only for the switch to kernel TLS, which
 * OpenSSL asks for through the BIO's control calls. */
#ifndef KTLSD_KTLS_TLS_BIO_H
#define KTLSD_KTLS_TLS_BIO_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/bio.h>

#include "ktls/tls_limit.h"

/* A record OpenSSL wrote after the switch to kernel TLS that is not
 * application data (a session ticket, an alert, close_notify): it must reach
 * the kernel as a control message with its record type, after the first
 * `at` bytes of tx. The transport sends it (a ring sendmsg) and frees it. */
struct tls_ctrl_record {
	struct tls_ctrl_record *next;
	size_t at;
	unsigned char type;
	size_t len;
	char data[];
};

/* The kernel's TX key material for setsockopt(SOL_TLS, TLS_TX), with its
 * length computed from the cipher. */
struct tls_ktls_keys {
	union {
		unsigned char bytes[64];
		unsigned short version_and_cipher[2];
	} info;
	unsigned len;
};

/* Memory is owned by the connection; the BIO only borrows it. */
struct tls_wire {
	char *rx;            /* received bytes not yet consumed: rx[rx_start, rx_end) */
	size_t rx_start, rx_end;
	char *tx;            /* bytes waiting for the ring: tx[0, tx_len), grows on demand */
	size_t tx_len, tx_cap;
	bool tx_busy;        /* a ring send of tx is in flight: it must not move or grow */
	unsigned tx_fills;   /* file reads in flight write into tx past tx_len: it must not
			      * move, and nothing may be appended where they write */
	int fd;              /* the TCP socket, for the kernel TLS switch only */
	bool ktls_tx;        /* OpenSSL handed TX over: the kernel, or the sealer, encrypts */
	bool ktls_allowed;   /* policy: may OpenSSL switch this socket to kernel TLS? */
	bool seal_allowed;   /* policy: where it may not, may ktlsd seal records itself? */
	bool sealing;        /* TX was handed over to ktlsd's sealer, not the kernel */
	struct tls_sealer *sealer; /* from the switch on, when sealing */
	int ktls_error;      /* errno of a failed switch, for --check and the log */
	bool eof;            /* the peer closed its side: reads report EOF, not retry */
	int ctrl_record_type; /* under kTLS: the next write is this non-data record type */
	bool key_update_seen; /* the client sent a TLS 1.3 KeyUpdate */
	/* TLS 1.3 with the sealer: the traffic secret of the TX keys, from
	 * OpenSSL's key log, until the sealer takes it (it re-keys from it). */
	unsigned char tx_secret[48];
	size_t tx_secret_len;
	/* Key usage (tls_limit.h) where the sealer does not count: records
	 * sealed under the current TX key (the kernel's, an upper bound from
	 * the bytes of each send; or OpenSSL's), the cipher's limits, and
	 * --tls-rekey-records (0: the cipher's own). */
	uint64_t tx_records;
	struct tls_key_limit key_limit;
	uint64_t rekey_records;
	bool failed;         /* OpenSSL failed the connection (a bad record): once
			      * its alert has left, nothing more is read or sent */

	/* The switch to kernel TLS, without a synchronous send: OpenSSL is
	 * told kTLS is on at once, and the transport programs the kernel when
	 * the ciphertext before the switch, tx[0, switch_at), has left. */
	bool switch_pending;
	size_t switch_at;
	struct tls_ktls_keys keys;
	struct tls_ctrl_record *ctrl, *ctrl_tail;

	/* Where tx comes from (the worker's buffer pool); NULL: malloc. */
	void *(*tx_alloc)(void *ctx, size_t want, size_t *cap);
	void (*tx_free)(void *ctx, void *buf, size_t cap);
	void *alloc_ctx;
};

/* Frees tx (tx_len must be 0) and any queued control record. */
void tls_wire_release_tx(struct tls_wire *w);
void tls_wire_free_ctrl(struct tls_wire *w);

/* Appends len bytes to tx, growing it. 0, -ENOMEM, or -EBUSY while reads
 * write past tx_len (tx_fills). Used by the BIO and by the server for
 * plaintext (plain HTTP, or after the switch to kTLS). */
int tls_wire_append(struct tls_wire *w, const void *data, size_t len);

/* Makes room for at least len more bytes at tx + tx_len. 0, -ENOMEM, or
 * -EBUSY when that would move tx under a send or a read (tx_busy, tx_fills). */
int tls_wire_reserve(struct tls_wire *w, size_t len);

/* A BIO reading and writing w. NULL on allocation failure. */
BIO *tls_bio_new(struct tls_wire *w);

#endif
