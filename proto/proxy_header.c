#include "proto/proxy_header.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/un.h>

static const char v1_sig[] = "PROXY ";
static const unsigned char v2_sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                         0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

/* The v2 address block of each family: INET, INET6, UNIX. */
#define V2_INET_LEN 12
#define V2_INET6_LEN 36
#define V2_UNIX_LEN 216

static int bad(struct proxy_header *out, const char *why)
{
	out->why = why;
	return PROXY_HEADER_BAD;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* A v1 port: decimal, 0 to 65535, no sign, no leading zero. */
static int parse_port(const char *s, in_port_t *port)
{
	size_t n = strlen(s);
	unsigned v = 0;

	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return -1;
	*port = htons((in_port_t)v);
	return 0;
}

/* Fills sa (of family af) from a v1 address and port. */
static int v1_address(int af, const char *ip, const char *port, struct sockaddr_storage *sa)
{
	if (af == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)sa;
		a->sin_family = AF_INET;
		return inet_pton(AF_INET, ip, &a->sin_addr) == 1 ? parse_port(port, &a->sin_port)
		                                                 : -1;
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)sa;
	a->sin6_family = AF_INET6;
	return inet_pton(AF_INET6, ip, &a->sin6_addr) == 1 ? parse_port(port, &a->sin6_port) : -1;
}

static int parse_v1(const unsigned char *p, size_t len, struct proxy_header *out)
{
	char line[PROXY_V1_MAX + 1], *tok[6];
	size_t scan = min_size(len, PROXY_V1_MAX), end, ntok = 0;

	if (memcmp(p, v1_sig, min_size(len, sizeof(v1_sig) - 1)) != 0)
		return bad(out, "no PROXY header");
	/* Printable ASCII up to the CR: garbage is refused at once instead of
	 * waiting for 107 bytes or the timeout. */
	for (end = 0; end < scan && p[end] != '\r'; end++)
		if (p[end] < 0x20 || p[end] > 0x7e)
			return bad(out, "PROXY v1: a control character in the line");
	if (end == scan)
		return len >= PROXY_V1_MAX ? bad(out, "PROXY v1: line longer than 107 bytes")
		                           : PROXY_HEADER_AGAIN;
	if (end + 1 == len)
		return PROXY_HEADER_AGAIN;
	if (p[end + 1] != '\n')
		return bad(out, "PROXY v1: CR without LF");
	out->version = 1;
	memcpy(line, p, end);
	line[end] = '\0';
	/* "PROXY", the protocol, then for TCP4/TCP6 four fields, each after
	 * exactly one space. */
	for (char *s = line;; s++) {
		tok[ntok++] = s;
		s = strchr(s, ' ');
		if (!s || ntok == 6)
			break;
		*s = '\0';
	}
	if (strcmp(tok[1], "UNKNOWN") == 0) {
		/* The spec: whatever follows UNKNOWN is to be ignored. */
		out->local = true;
		return (int)end + 2;
	}
	int af = strcmp(tok[1], "TCP4") == 0 ? AF_INET : strcmp(tok[1], "TCP6") == 0 ? AF_INET6 : 0;
	if (!af)
		return bad(out, "PROXY v1: protocol is not TCP4, TCP6 or UNKNOWN");
	if (ntok != 6 || strchr(tok[5], ' '))
		return bad(out, "PROXY v1: expected four fields after the protocol");
	if (v1_address(af, tok[2], tok[4], &out->src) < 0 ||
	    v1_address(af, tok[3], tok[5], &out->dst) < 0)
		return bad(out, "PROXY v1: bad address or port");
	out->addrlen = af == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	return (int)end + 2;
}

static unsigned be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static void v2_unix(const unsigned char *path, struct sockaddr_storage *sa)
{
	struct sockaddr_un *a = (struct sockaddr_un *)sa;

	a->sun_family = AF_UNIX;
	/* 108 bytes, NUL-padded; one that fills them all loses its last. */
	memcpy(a->sun_path, path, sizeof(a->sun_path) - 1);
}

static int parse_v2(const unsigned char *p, size_t len, struct proxy_header *out)
{
	if (memcmp(p, v2_sig, min_size(len, sizeof(v2_sig))) != 0)
		return bad(out, "no PROXY header");
	if (len < 16)
		return PROXY_HEADER_AGAIN;
	if (p[12] >> 4 != 2)
		return bad(out, "PROXY v2: unknown version");
	unsigned cmd = p[12] & 0xf, fam = p[13] >> 4, transport = p[13] & 0xf;
	size_t total = 16 + (size_t)be16(p + 14), need;
	if (cmd > 1)
		return bad(out, "PROXY v2: unknown command");
	if (total > PROXY_HEADER_MAX)
		return bad(out, "PROXY v2: header longer than 1024 bytes");
	if (len < total)
		return PROXY_HEADER_AGAIN;
	out->version = 2;
	/* LOCAL (a health check of the balancer's own) and UNSPEC: the
	 * spec says to use the connection's own addresses and skip the
	 * rest, whatever it holds. */
	if (cmd == 0 || fam == 0 || transport == 0) {
		if (fam > 3 || transport > 2)
			return bad(out, "PROXY v2: unknown address family or transport");
		out->local = true;
		return (int)total;
	}
	if (fam > 3 || transport > 2)
		return bad(out, "PROXY v2: unknown address family or transport");
	need = fam == 1 ? V2_INET_LEN : fam == 2 ? V2_INET6_LEN : V2_UNIX_LEN;
	if (total - 16 < need)
		return bad(out, "PROXY v2: address block shorter than its family's");
	const unsigned char *a = p + 16;
	if (fam == 1) {
		struct sockaddr_in *s = (struct sockaddr_in *)&out->src;
		struct sockaddr_in *d = (struct sockaddr_in *)&out->dst;
		s->sin_family = d->sin_family = AF_INET;
		memcpy(&s->sin_addr, a, 4);
		memcpy(&d->sin_addr, a + 4, 4);
		memcpy(&s->sin_port, a + 8, 2);
		memcpy(&d->sin_port, a + 10, 2);
		out->addrlen = sizeof(*s);
	} else if (fam == 2) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&out->src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)&out->dst;
		s->sin6_family = d->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a, 16);
		memcpy(&d->sin6_addr, a + 16, 16);
		memcpy(&s->sin6_port, a + 32, 2);
		memcpy(&d->sin6_port, a + 34, 2);
		out->addrlen = sizeof(*s);
	} else {
		v2_unix(a, &out->src);
		v2_unix(a + 108, &out->dst);
		out->addrlen = sizeof(struct sockaddr_un);
	}
	/* TLVs (type, 16-bit length, value) fill the rest: none is needed
	 * here, but one that runs past the end means a broken header. */
	for (size_t off = 16 + need; off < total;) {
		if (total - off < 3 || total - off - 3 < be16(p + off + 1))
			return bad(out, "PROXY v2: a TLV runs past the end of the header");
		off += 3 + be16(p + off + 1);
	}
	return (int)total;
}

int proxy_header_parse(const void *buf, size_t len, struct proxy_header *out)
{
	const unsigned char *p = buf;

	memset(out, 0, sizeof(*out));
	if (len == 0)
		return PROXY_HEADER_AGAIN;
	if (p[0] == 'P')
		return parse_v1(p, len, out);
	if (p[0] == v2_sig[0])
		return parse_v2(p, len, out);
	return bad(out, "no PROXY header");
}
