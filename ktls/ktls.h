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

/* Called from the BIO. All run synchronously on the socket: they happen once
 * per connection (switch) or for rare non-data records, never per byte. */
int ktls_flush_wire(struct tls_wire *w);
int ktls_enable_tx(struct tls_wire *w, const void *openssl_crypto_info);
void ktls_set_ctrl_record_type(struct tls_wire *w, int type);
int ktls_send_ctrl_record(struct tls_wire *w, const char *buf, int len);

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
