/* Kernel TLS: the switch of a socket's transmit side to the kernel, and the
 * detection of what this kernel can offload.
 *
 * Design: OpenSSL 3.0 decides when to switch and hands us the keys through
 * the BIO (see tls_bio.c); we only program the socket. Transmit is offloaded
 * (that is where the bytes of a download go); receive stays in user space on
 * purpose: requests are small, OpenSSL 3.0 offloads RX for TLS 1.2 only, and a
 * kTLS RX socket turns every alert into a control message that a plain ring
 * recv fails on with EIO. */
#ifndef KTLSD_KTLS_KTLS_H
#define KTLSD_KTLS_KTLS_H

#include <stdbool.h>
#include <stddef.h>

#include "ktls/tls_bio.h"

/* Records after the switch are sent by the transport as control messages
 * of this level and type (linux/tls.h), the record type as data. */
#define KTLS_SOL_TLS 282
#define KTLS_SET_RECORD_TYPE 1

/* Called from the BIO when OpenSSL switches TX to the kernel: attaches the
 * "tls" ULP (no bytes move) and keeps the keys; the switch itself waits
 * until what OpenSSL sealed before it has left (w->switch_at). 0, or
 * -errno: OpenSSL then stays in user space. Where the kernel may not
 * (w->ktls_allowed false) but ktlsd may seal (w->seal_allowed), the keys
 * go to a sealer (tls_seal.h, w->sealer) instead, made at once, and no ULP
 * attached; the sealer is used from the switch on. */
int ktls_prepare_tx(struct tls_wire *w, const void *openssl_crypto_info);

/* Programs the kernel's TX keys (the transport calls it once tx[0,
 * switch_at) is on the socket) and wipes them from memory; with the
 * sealer, only marks the switch done. 0 or -errno. */
int ktls_switch_tx(struct tls_wire *w);

/* Counts a send of bytes that the kernel sealed (nothing otherwise) toward
 * its key's limit (tls_limit.h). */
void ktls_account_tx(struct tls_wire *w, size_t bytes);
/* The kernel's key is at its limit, with as many records as sends in
 * flight may still hold to spare: nothing more may be sent under it. */
#define KTLS_RECORDS_IN_FLIGHT 65536
bool ktls_tx_key_spent(const struct tls_wire *w);

void ktls_set_ctrl_record_type(struct tls_wire *w, int type);

/* This OpenSSL hands TX keys over (built with kTLS): the sealer needs it. */
bool ktls_openssl_built(void);

struct ktls_support {
	bool ulp;            /* the kernel has the "tls" TCP ULP (loaded or loadable) */
	int ulp_errno;       /* why not, when !ulp */
	/* [0] TLS 1.2, [1] TLS 1.3; each: AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305 */
	bool tx[2][3];
	bool openssl;        /* this OpenSSL was built with kTLS */
};

extern const char *const ktls_cipher_names[3];

/* Probes by doing: attaches the ULP to a loopback TCP connection (which makes
 * the kernel load tls.ko when we may) and tries each cipher with dummy keys.
 * Costs a few syscalls, once at start. */
void ktls_probe(struct ktls_support *s);

#endif
