/* proto/static_target.c's resolution on the server's files: opened with
 * openat2 beneath the root (file.c), through the worker's open-file cache. */
#ifndef KTLSD_SERVER_RESOLVE_H
#define KTLSD_SERVER_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/autoindex.h"
#include "proto/static_file.h"

struct server;
struct filecache;
struct lister_job;

/* Fills out; with status 0, out->fd is open and out->file describes it.
 * Files come through the worker's open-file cache fc (NULL: none). */
void resolve_target(const struct server *srv, struct filecache *fc, uint64_t now_ms,
		    const char *target, size_t len, struct static_target *out);

/* The job that lists res (status STATIC_LIST_DIR, from resolve_target) as
 * f, beneath the root it was resolved in, or NULL (no memory). */
struct lister_job *resolve_listing(const struct server *srv, const struct static_target *res,
				   enum autoindex_format f);

#endif
