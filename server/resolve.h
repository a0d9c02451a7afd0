/* From a request-target to what to serve, for both HTTP versions: the path
 * rules, the open beneath the root, directories and their index.html, and
 * the error status when there is nothing to serve. */
#ifndef KTLSD_SERVER_RESOLVE_H
#define KTLSD_SERVER_RESOLVE_H

#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>

#include "proto/static_file.h"

struct server;

struct resolved {
	int status;                       /* 0: serve fd; else 301, 400, 403, 404, 414, 500, 503 */
	int fd;                           /* owned by the caller when status is 0 */
	struct stat st;
	char rel[PATH_MAX];               /* the file, relative to the root */
	char location[PATH_MAX * 3 + 4];  /* for 301: the directory with its slash, %-encoded */
};

void resolve_target(const struct server *srv, const char *target, size_t len, struct resolved *out);

/* The file's metadata as the static-file decision wants it. */
void resolve_static_file(const struct server *srv, const struct resolved *r,
			 struct static_file *file);

#endif
