/* [path PREFIX] rules of a site: what applies to the requests beneath a
 * folder (response fields, a redirect, who may ask), and the one that
 * applies to a request. Sans-I/O: the prefix is matched against the
 * normalised path (path.h), so that "/%6Eightly/" or "/a/../nightly/" is
 * under "/nightly/" as the file it names is. */
#ifndef KTLSD_PROTO_PATH_RULE_H
#define KTLSD_PROTO_PATH_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/static_file.h"

/* "allow ADDR[/BITS]" or "deny ...", "all" for every address. Addresses
 * are 16 bytes, IPv4 mapped into IPv6 (::ffff:a.b.c.d), as a client's. */
struct path_acl {
	bool allow;
	bool all;                       /* "all": every client, an IP one or not */
	bool v6;                        /* an IPv6 rule: IPv6 clients alone (not mapped IPv4) */
	uint8_t addr[16];
	unsigned bits;                  /* of addr that must match (IPv4: 96 + its own) */
};

struct path_rule {
	const char *prefix;             /* normalised as path.h makes a path: "nightly", "." */
	size_t prefix_len;
	struct resp_extras extras;      /* the site's fields, with the rule's in their place */
	int redirect_status;            /* 301, 302, 307, 308; 0: none */
	const char *redirect_to;        /* the URL the prefix's place goes to */
	const struct path_acl *acl;     /* in order: the first that matches decides */
	size_t nacl;
};

/* Parses "all", "ADDR" or "ADDR/BITS" (IPv4 or IPv6) into a: 0, or
 * -EINVAL. */
int path_acl_parse(const char *s, bool allow, struct path_acl *a);

/* The rule of the longest prefix that rel (a normalised path) lies
 * beneath, a segment at a time ("nightly" holds "nightly" and
 * "nightly/x", not "nightlyx"); NULL: none. */
const struct path_rule *path_rule_match(const struct path_rule *rules, size_t n, const char *rel);

/* Whether the client at addr (16 bytes as above; NULL: not an IP client,
 * a Unix socket's) may ask: the first entry that matches decides, and with
 * none matching it may (nginx's allow/deny). A client that is no IP
 * address matches only "all". */
bool path_acl_allows(const struct path_acl *acl, size_t n, const uint8_t *addr);

/* Where a redirect of rule r sends rel: r's URL with what of rel follows
 * the prefix (and the slash the request's path ended in: slash), then the
 * target's query ("?..." or empty), into out. The length, or
 * -ENAMETOOLONG. */
int path_rule_location(const struct path_rule *r, const char *rel, bool slash,
		       const char *query, size_t query_len, char *out, size_t outsz);

#endif
