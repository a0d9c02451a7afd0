/* Authorities and absolute-form targets: see authority.h. The grammar is
 * RFC 3986's, checked byte by byte, so that what names a site is exactly
 * what a URI could say: "b.test x" and "b.test:abc" are not authorities
 * and never reach the site table. */
#include "proto/authority.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* RFC 3986 2.3 unreserved and 2.2 sub-delims, as a bit per ASCII byte:
 * ALPHA DIGIT - . _ ~ ! $ & ' ( ) * + , ; = (a table, not strchr: this runs
 * over every request's Host). */
static bool is_unreserved_or_sub_delim(unsigned char c)
{
	static const uint64_t low = 0x2bff7fd200000000ull;  /* 0x00-0x3f */
	static const uint64_t high = 0x47fffffe87fffffeull; /* 0x40-0x7f */

	return c < 64 ? (low >> c) & 1 : c < 128 && (high >> (c - 64)) & 1;
}

/* reg-name = *( unreserved / pct-encoded / sub-delims ): its length from
 * s, stopping at the first byte that is none of those. */
static size_t reg_name_len(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		if (s[i] == '%') {
			if (len - i < 3 || !is_hex((unsigned char)s[i + 1]) ||
			    !is_hex((unsigned char)s[i + 2]))
				break;
			i += 3;
		} else if (is_unreserved_or_sub_delim((unsigned char)s[i])) {
			i++;
		} else {
			break;
		}
	}
	return i;
}

/* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool ip_future(const char *s, size_t len)
{
	size_t i = 1;

	if (len < 4 || (s[0] | 0x20) != 'v')
		return false;
	while (i < len && is_hex((unsigned char)s[i]))
		i++;
	if (i == 1 || i >= len - 1 || s[i] != '.')
		return false;
	for (i++; i < len; i++)
		if (s[i] != ':' && !is_unreserved_or_sub_delim((unsigned char)s[i]))
			return false;
	return true;
}

/* IPv6address (RFC 3986 3.2.2, the text of RFC 4291 2.2), which
 * inet_pton reads: at most 45 bytes. A zone ("%25eth0", RFC 6874) is for
 * URIs a user types, not for Host. */
static bool ip_v6(const char *s, size_t len)
{
	char text[INET6_ADDRSTRLEN];
	unsigned char addr[16];

	if (len == 0 || len >= sizeof(text))
		return false;
	memcpy(text, s, len);
	text[len] = '\0';
	return inet_pton(AF_INET6, text, addr) == 1;
}

int authority_parse(const char *s, size_t len, struct authority *out)
{
	size_t end;

	*out = (struct authority){0};
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (!close)
			return -EINVAL;
		out->host = s + 1;
		out->host_len = (size_t)(close - s - 1);
		if (!ip_v6(out->host, out->host_len) && !ip_future(out->host, out->host_len))
			return -EINVAL;
		end = (size_t)(close - s) + 1;
	} else {
		end = reg_name_len(s, len);
		out->host = s;
		out->host_len = end;
		/* RFC 9110 4.2.1: an http URI's host is never empty. */
		if (end == 0)
			return -EINVAL;
	}
	if (end == len)
		return 0;
	/* Anything but ":port" after the host: userinfo's '@', spaces,
	 * another ':' ("a:1:2"), a '/' ... */
	if (s[end] != ':')
		return -EINVAL;
	for (size_t i = end + 1; i < len; i++)
		if (!is_digit((unsigned char)s[i]))
			return -EINVAL;
	if (len > end + 1) {
		out->port = s + end + 1;
		out->port_len = len - end - 1;
	}
	return 0;
}

/* The host for comparison: without the trailing dot of a fully qualified
 * name ("b.test."). */
static size_t host_cmp_len(const struct authority *a)
{
	size_t n = a->host_len;

	return n > 1 && a->host[n - 1] == '.' ? n - 1 : n;
}

/* A port's digits without leading zeros ("0443" is 443). */
static void port_digits(const char *p, size_t n, const char **out, size_t *out_len)
{
	while (n > 1 && p[0] == '0') {
		p++;
		n--;
	}
	*out = p;
	*out_len = n;
}

bool authority_same(const struct authority *a, const struct authority *b, const char *default_port)
{
	size_t na = host_cmp_len(a), nb = host_cmp_len(b);
	const char *pa, *pb;
	size_t la, lb;

	if (na != nb || strncasecmp(a->host, b->host, na) != 0)
		return false;
	port_digits(a->port ? a->port : default_port, a->port ? a->port_len : strlen(default_port),
	            &pa, &la);
	port_digits(b->port ? b->port : default_port, b->port ? b->port_len : strlen(default_port),
	            &pb, &lb);
	return la == lb && memcmp(pa, pb, la) == 0;
}

static bool prefix_nocase(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && strncasecmp(s, p, n) == 0;
}

long target_split(const char *t, size_t len, enum target_scheme *scheme, const char **auth,
                  size_t *auth_len)
{
	size_t i;

	*auth = NULL;
	*auth_len = 0;
	if (len > 0 && t[0] == '/') {
		*scheme = TARGET_ORIGIN;
		return 0;
	}
	if (prefix_nocase(t, len, "http://")) {
		*scheme = TARGET_HTTP;
		i = 7;
	} else if (prefix_nocase(t, len, "https://")) {
		*scheme = TARGET_HTTPS;
		i = 8;
	} else {
		return -EINVAL; /* "*", authority-form, another scheme, junk */
	}
	size_t start = i;
	while (i < len && t[i] != '/' && t[i] != '?' && t[i] != '#')
		i++;
	if (i == start) /* "http:///x": an http URI must have a host */
		return -EINVAL;
	*auth = t + start;
	*auth_len = i - start;
	return (long)i;
}
