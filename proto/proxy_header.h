/* The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and
 * 2) that an L4 load balancer sends first on each connection it relays,
 * to say who the client really is. Sans-I/O: bytes in, the addresses out;
 * the transport (server/net/sock_input.c) feeds it what it received before TLS or
 * HTTP sees a byte.
 *
 * Accepted:
 *  - v1: "PROXY TCP4 SRC DST SPORT DPORT\r\n", "PROXY TCP6 ...\r\n" or
 *    "PROXY UNKNOWN[ anything]\r\n", 107 bytes at most. Numeric addresses
 *    of the family named, ports 0 to 65535 without leading zeros, single
 *    spaces: a line that deviates is refused, as the spec asks.
 *  - v2: the 12-byte signature, version 2, command LOCAL or PROXY, family
 *    UNSPEC, INET, INET6 or UNIX over any transport, the address block,
 *    then TLVs, which are walked (a TLV that runs past the end is refused)
 *    and skipped. PROXY_HEADER_MAX bytes in all.
 * LOCAL, UNKNOWN, family UNSPEC and transport UNSPEC mean "no address
 * here": the connection keeps its own (out->local). */
#ifndef KTLSD_PROTO_PROXY_HEADER_H
#define KTLSD_PROTO_PROXY_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* A v1 line, "\r\n" included (the spec's limit). */
#define PROXY_V1_MAX 107
/* A whole v2 header: the 16 fixed bytes and up to 1008 of addresses and
 * TLVs. HAProxy recommends room for 536 at least (a UNIX address block is
 * 216); load balancers' TLVs (AWS's VPC endpoint, Azure's link id, a
 * unique id) fit in the rest. A longer one is refused, not buffered. */
#define PROXY_HEADER_MAX 1024

enum proxy_header_status {
	PROXY_HEADER_AGAIN = 0, /* a valid beginning: more bytes needed */
	PROXY_HEADER_BAD = -1,  /* not a valid header (out->why says what) */
};

struct proxy_header {
	int version;                 /* 1 or 2 */
	bool local;                  /* no address given: keep the connection's */
	struct sockaddr_storage src; /* the client, unless local */
	struct sockaddr_storage dst; /* the address it connected to, unless local */
	socklen_t addrlen;           /* of src and of dst */
	const char *why;             /* PROXY_HEADER_BAD: the reason, for a log line */
};

/* Parses the header at the start of buf (len bytes received so far).
 * Returns its length (> 0, the bytes to consume: what follows belongs to
 * TLS or HTTP), PROXY_HEADER_AGAIN while buf is a valid beginning of one,
 * or PROXY_HEADER_BAD as soon as it cannot be one. */
int proxy_header_parse(const void *buf, size_t len, struct proxy_header *out);

#endif
