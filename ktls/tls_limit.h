/* How many records one TLS key may seal (RFC 8446 5.5), whoever seals them:
 * ktlsd's sealer, the kernel, or OpenSSL.
 *
 * AES-GCM: "up to 2^24.5 full-size records (about 24 million) may be
 * encrypted on a given connection while keeping a safety margin of
 * approximately 2^-57" (~388 GB at 16 KiB a record: one long keep-alive
 * connection of a mirror gets there). ChaCha20-Poly1305: "the record
 * sequence number would wrap before the safety limit is reached". AES-CCM,
 * which none of ktlsd's record paths offers, would be lower still; any AEAD
 * but ChaCha20-Poly1305 gets AES-GCM's limits here.
 *
 * At rekey_at records a TLS 1.3 key that ktlsd holds is replaced (KeyUpdate,
 * RFC 8446 4.6.3); one it cannot replace (TLS 1.2, the kernel's, OpenSSL's)
 * ends its connection after the response in progress, and a response that
 * would take it past max is cut there. The room between the two is what a
 * response may still take: 2^24.5 - 2^24 records, ~113 GB. */
#ifndef KTLSD_KTLS_TLS_LIMIT_H
#define KTLSD_KTLS_TLS_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define TLS_LIMIT_GCM_REKEY (UINT64_C(1) << 24)
#define TLS_LIMIT_GCM_MAX UINT64_C(23726566) /* 2^24.5, rounded down */

struct tls_key_limit {
	uint64_t rekey_at; /* records under one key before it changes (or its connection ends) */
	uint64_t max;      /* records under one key never sealed past */
};

/* The limits for a cipher; records is --tls-rekey-records (0: the cipher's
 * own), which may lower them and never raise them. */
static inline struct tls_key_limit tls_key_limit(bool chacha, uint64_t records)
{
	struct tls_key_limit l = {TLS_LIMIT_GCM_REKEY, TLS_LIMIT_GCM_MAX};

	if (chacha) {
		l.rekey_at = UINT64_MAX;
		l.max = UINT64_MAX;
	}
	if (records && records < l.rekey_at)
		l.rekey_at = records;
	return l;
}

#endif
