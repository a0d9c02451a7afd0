/* TLS records sealed by ktlsd in user space, with the keys OpenSSL hands to
 * kernel TLS. Where the kernel has no TLS, the transport still takes over
 * a connection's TX from OpenSSL as it would for the kernel, and seals what
 * it sends itself: from its send buffer straight into records, instead of
 * OpenSSL's copy of every plaintext byte into a record buffer of its own
 * before it encrypts in place (a whole pass over each byte; compare
 * `perf record -g` of one large download with --tls-records openssl and
 * with --tls-records ktlsd: the copy in OpenSSL's do_ssl3_write, in
 * ssl/record/rec_layer_s3.c, is gone).
 *
 * The record layer is the kernel's (net/tls/tls_sw.c): AES-128-GCM,
 * AES-256-GCM and ChaCha20-Poly1305 for TLS 1.2 and 1.3, 16 KiB records,
 * TLS 1.2 GCM's explicit nonce counting up from OpenSSL's, the record
 * sequence number from OpenSSL's. */
#ifndef KTLSD_KTLS_TLS_SEAL_H
#define KTLSD_KTLS_TLS_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define TLS_SEAL_MAX_PLAIN 16384
/* Header 5, TLS 1.2 GCM's explicit nonce 8, tag 16, TLS 1.3's inner type 1. */
#define TLS_SEAL_OVERHEAD 30
/* A KeyUpdate record: header 5, the message 5, inner type 1, tag 16. */
#define TLS_SEAL_KEY_UPDATE 27

struct tls_sealer;

/* A sealer from the crypto_info OpenSSL gave the BIO for the kernel
 * (linux/tls.h: version, cipher, iv, key, salt, rec_seq). For TLS 1.3,
 * secret is the traffic secret that key and iv were made from (RFC 8446
 * 7.3), for the keys after a KeyUpdate (7.2); NULL: the sealer cannot
 * change keys. records: --tls-rekey-records (tls_limit.h). -EOPNOTSUPP for
 * a cipher it does not know, -EINVAL for a secret that does not make the
 * key and iv given, -ENOMEM. */
int tls_sealer_new(struct tls_sealer **out, const void *crypto_info, size_t len,
		   const unsigned char *secret, size_t secret_len, uint64_t records);
void tls_sealer_free(struct tls_sealer *s);

/* It can replace its key (TLS 1.3, with its secret). */
bool tls_sealer_can_rekey(const struct tls_sealer *s);

/* Its key sealed as many records as it should and cannot be replaced
 * (TLS 1.2): the connection should end after the response in progress. */
bool tls_sealer_worn(const struct tls_sealer *s);

/* The connection went idle: frees the cipher context until the next
 * tls_seal makes it again from the key (NULL: nothing). */
void tls_sealer_idle(struct tls_sealer *s);

/* Seals the plaintext of iov (len bytes in all) as records of type
 * (23: application data; 21 alert, 22 handshake) of up to 16 KiB each, into
 * out, which must hold tls_seal_room(len). Sealing a TLS 1.3 KeyUpdate
 * message (OpenSSL's answer to a client's) moves to the next keys after
 * it, as the peer does (RFC 8446 4.6.3). A key that reached its re-key
 * point (tls_limit.h) is first replaced, behind a KeyUpdate of ktlsd's own
 * (update_not_requested) that goes out in front of the record. Returns the
 * bytes written; -EKEYEXPIRED where the key may seal no more records (its
 * AEAD's limit), -EIO if OpenSSL failed: the connection cannot go on. */
long tls_seal(struct tls_sealer *s, unsigned char type, const struct iovec *iov, int iovcnt,
	      size_t len, unsigned char *out);

/* What len bytes of plaintext add as records, at most: each record's
 * header and tag, and a KeyUpdate in front of any of them. */
static inline size_t tls_seal_overhead(size_t len)
{
	return (len / TLS_SEAL_MAX_PLAIN + 1) * (TLS_SEAL_OVERHEAD + TLS_SEAL_KEY_UPDATE);
}

/* Room tls_seal needs for len bytes of plaintext. */
static inline size_t tls_seal_room(size_t len)
{
	return len + tls_seal_overhead(len);
}

/* The most plaintext whose records fit in room bytes (tls_seal_room of it
 * is at most room, since it is shorter than room): a buffer's worth of
 * plaintext seals into a buffer of the same size. */
static inline size_t tls_seal_fits(size_t room)
{
	size_t over = tls_seal_overhead(room);

	return room > over ? room - over : 0;
}

#endif
