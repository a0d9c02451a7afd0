#include "proto/path_rule.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int path_acl_parse(const char *s, bool allow, struct path_acl *a)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned max;

	memset(a, 0, sizeof(*a));
	a->allow = allow;
	if (strcmp(s, "all") == 0) {
		a->all = true;
		return 0;
	}
	if (n == 0 || n >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	if (inet_pton(AF_INET6, addr, a->addr) == 1) {
		max = 128;
		a->v6 = true;
	} else if (inet_pton(AF_INET, addr, a->addr + 12) == 1) {
		a->addr[10] = a->addr[11] = 0xff;
		max = 32;
	} else {
		return -EINVAL;
	}
	unsigned bits = max;
	if (slash) {
		const char *d = slash + 1;
		if (!*d || strlen(d) > 3 || strspn(d, "0123456789") != strlen(d))
			return -EINVAL;
		unsigned long b = strtoul(d, NULL, 10);
		if (b > max)
			return -EINVAL;
		bits = (unsigned)b;
	}
	/* IPv4's bits count after the mapping's 96: 0.0.0.0/0 is every IPv4
	 * client, not every client. */
	a->bits = bits + (128 - max);
	return 0;
}

static bool beneath(const char *rel, const char *prefix, size_t len)
{
	if (len == 1 && prefix[0] == '.')
		return true; /* the root holds everything */
	return strncmp(rel, prefix, len) == 0 && (rel[len] == '\0' || rel[len] == '/');
}

const struct path_rule *path_rule_match(const struct path_rule *rules, size_t n, const char *rel)
{
	const struct path_rule *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (beneath(rel, rules[i].prefix, rules[i].prefix_len) &&
		    (!best || rules[i].prefix_len > best->prefix_len ||
		     (best->prefix_len == 1 && best->prefix[0] == '.')))
			best = &rules[i];
	return best;
}

static bool mapped_v4(const uint8_t *addr)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(addr, prefix, sizeof(prefix)) == 0;
}

static bool acl_matches(const struct path_acl *a, const uint8_t *addr)
{
	if (a->all)
		return true;
	/* nginx's rule: an IPv6 rule (::/0 included) is for IPv6 clients. */
	if (!addr || (a->v6 && mapped_v4(addr)))
		return false;
	unsigned whole = a->bits / 8, rest = a->bits % 8;
	if (memcmp(a->addr, addr, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a->addr[whole] & mask) == (addr[whole] & mask);
}

bool path_acl_allows(const struct path_acl *acl, size_t n, const uint8_t *addr)
{
	for (size_t i = 0; i < n; i++)
		if (acl_matches(&acl[i], addr))
			return acl[i].allow;
	return true;
}

/* Appends src[0, len) to out at *n, %-encoding every byte but RFC 3986's
 * unreserved ones and those keep names (the rest of a decoded path may hold
 * a space, a CR, anything but NUL: never raw in a field). */
static bool put_encoded(char *out, size_t outsz, size_t *n, const char *src, size_t len,
			const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || strchr("-._~", c) || (c && strchr(keep, c));
		if (*n + (plain ? 1 : 3) >= outsz)
			return false;
		if (plain) {
			out[(*n)++] = (char)c;
		} else {
			out[(*n)++] = '%';
			out[(*n)++] = hex[c >> 4];
			out[(*n)++] = hex[c & 15];
		}
	}
	out[*n] = '\0';
	return true;
}

int path_rule_location(const struct path_rule *r, const char *rel, bool slash,
		       const char *query, size_t query_len, char *out, size_t outsz)
{
	const char *rest = "";
	size_t n = 0;

	if (!(r->prefix_len == 1 && r->prefix[0] == '.'))
		rest = rel + r->prefix_len;
	else if (strcmp(rel, ".") != 0)
		rest = rel;
	while (*rest == '/')
		rest++;
	size_t ul = strlen(r->redirect_to);
	if (ul + 2 > outsz)
		return -ENAMETOOLONG;
	memcpy(out, r->redirect_to, ul + 1);
	n = ul;
	if (*rest && !(ul && r->redirect_to[ul - 1] == '/')) {
		out[n++] = '/';
		out[n] = '\0';
	}
	/* The query as the client sent it, but for bytes no field may hold. */
	/* path.h folds the path's last slash away; a folder keeps it. */
	if (!put_encoded(out, outsz, &n, rest, strlen(rest), "/!$&'()*+,;=:@") ||
	    (slash && *rest && !put_encoded(out, outsz, &n, "/", 1, "/")) ||
	    !put_encoded(out, outsz, &n, query, query_len, "/?!$&'()*+,;=:@%"))
		return -ENAMETOOLONG;
	return (int)n;
}
