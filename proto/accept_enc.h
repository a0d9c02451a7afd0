/* Accept-Encoding (RFC 9110 12.5.3): which of the content codings ktlsd can
 * serve from precompressed sidecar files the client takes, and in what
 * order to look for them. Sans-I/O: a header value in, an order out. */
#ifndef KTLSD_PROTO_ACCEPT_ENC_H
#define KTLSD_PROTO_ACCEPT_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The codings of sidecar files, in the order that breaks ties between
 * equal q-values: the one that usually compresses best first. */
enum coding { CODING_BR, CODING_ZSTD, CODING_GZIP, CODING_N };

struct accept_enc {
	uint16_t q[CODING_N]; /* thousandths: 0 (not accepted) to 1000 */
	uint16_t identity_q;  /* of an explicit "identity" member only */
	bool identity_named;
};

/* Parses a field value (s NULL: the field was absent, so only identity;
 * repeated fields joined with ", "). Names are case-insensitive; x-gzip is
 * gzip; "*" gives its q to the codings not named; a coding named twice
 * keeps its lower q. A member that is not "token *(OWS ; OWS q=qvalue)"
 * (a bad q-value such as q=2 or q=0.5x, another parameter, stray bytes)
 * accepts nothing: better identity than a coding the client did not mean.
 * Linear in len, no allocation, any length. */
void accept_enc_parse(const char *s, size_t len, struct accept_enc *out);

/* The codings to look for, best first, into order; returns how many. A
 * coding qualifies with q > 0 and, when the client named identity, a q not
 * below identity's. Higher q first, ties in enum coding's order. */
size_t accept_enc_order(const struct accept_enc *ae, enum coding order[CODING_N]);

/* A qvalue (RFC 9110 12.4.2) in thousandths, or -1 when p[0, n) is not
 * one; also Accept's (autoindex.c). */
int accept_enc_qvalue(const char *p, size_t n);

/* "br", "zstd", "gzip": the Content-Encoding value. */
const char *accept_enc_name(enum coding c);
/* ".br", ".zst", ".gz": the sidecar file's suffix. */
const char *accept_enc_suffix(enum coding c);

#endif
