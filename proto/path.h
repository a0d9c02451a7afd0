/* Request-target to a path relative to the served root. Sans-I/O. */
#ifndef KTLSD_PROTO_PATH_H
#define KTLSD_PROTO_PATH_H

#include <stdbool.h>
#include <stddef.h>

struct path_info {
	bool trailing_slash;   /* the decoded path ended in '/' (directory form) */
	bool dotfile;          /* some segment starts with '.' (e.g. .git, .env), other than
				* a leading ".well-known" (RFC 8615) */
};

/* Turns a request-target (origin-form "/a/b?q", or absolute-form
 * "https://host/a/b") into a normalised relative path in out: query and
 * fragment dropped, percent-decoded once, "//" folded, "." removed, ".."
 * applied. The root itself is "." . The result never starts with '/' and
 * never contains a ".." segment.
 * Returns 0, or:
 *   -EINVAL       malformed target, bad %-escape, decoded NUL, or a ".." that
 *                 would climb above the root (answer 400)
 *   -ENAMETOOLONG the result does not fit outsz (answer 414) */
int path_from_target(const char *target, size_t len, char *out, size_t outsz,
		     struct path_info *info);

#endif
