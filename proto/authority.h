/* The authority a request names (host and port) and the scheme and
 * authority of an absolute-form target, by the grammar of RFC 3986 3.1 and
 * 3.2.2-3.2.3 with the rules RFC 9110 4.2 adds for http and https URIs.
 * Sans-I/O: the results point into the caller's bytes. */
#ifndef KTLSD_PROTO_AUTHORITY_H
#define KTLSD_PROTO_AUTHORITY_H

#include <stdbool.h>
#include <stddef.h>

struct authority {
	const char *host; /* an IP literal without its brackets */
	size_t host_len;
	const char *port; /* its digits; NULL: none, or empty (RFC 3986 6.2.3) */
	size_t port_len;
};

/* Parses a Host field value, an :authority or a target's authority: host
 * [":" port], host an IP literal ("[::1]", "[v1.x]"), or a reg-name
 * (unreserved, sub-delims and %-escapes, which covers IPv4), port digits.
 * Refuses (-EINVAL) what RFC 9110 4.2.1 and 4.2.4 forbid an http(s) URI
 * too: an empty host and userinfo ("user@host"). 0 and *out filled, or
 * -EINVAL. */
int authority_parse(const char *s, size_t len, struct authority *out);

/* a and b name the same origin (RFC 3986 6.2.2-6.2.3): the host without
 * regard to case or a trailing dot, the port with an absent one taken as
 * default_port ("443"). */
bool authority_same(const struct authority *a, const struct authority *b, const char *default_port);

enum target_scheme {
	TARGET_ORIGIN, /* origin-form: "/path?query" */
	TARGET_HTTP,   /* absolute-form "http://authority..." */
	TARGET_HTTPS,  /* absolute-form "https://authority..." */
};

/* Where the path of a request-target starts (RFC 9112 3.2.1-3.2.2): 0
 * for origin-form; past "http[s]://authority" for absolute-form, with
 * *scheme and the authority's bytes (not checked: authority_parse). A
 * target that starts with neither '/' nor "http://" or "https://" (case
 * does not matter), or one whose authority is empty, gives -EINVAL. */
long target_split(const char *t, size_t len, enum target_scheme *scheme, const char **auth,
                  size_t *auth_len);

#endif
