/* Numbers into header values without printf: the hot path formats a few per
 * response, and vfprintf's generality cost ~6% of a 1 KiB HTTP/2 request.
 * Sans-I/O. */
#ifndef KTLSD_PROTO_NUMFMT_H
#define KTLSD_PROTO_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#define NUMFMT_U64_MAX 20 /* digits of UINT64_MAX */

/* Writes v in decimal at out (no NUL); returns the length. */
static inline size_t numfmt_u64(char *out, uint64_t v)
{
	char tmp[NUMFMT_U64_MAX];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* Writes v in lowercase hex, no leading zeros, at out (no NUL). */
static inline size_t numfmt_hex64(char *out, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	/* The digit count from the highest set bit: written once, from the
	 * end, with no reversal. */
	size_t n = (size_t)(64 - __builtin_clzll(v | 1) + 3) / 4;

	for (size_t i = n; i-- > 0; v >>= 4)
		out[i] = hex[v & 15];
	return n;
}

#endif
